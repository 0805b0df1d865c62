/* config_lua.c — the sandboxed Lua state of configs and cluster catalogs: memory and time limits,
 * the forbidden globals, print, load, include and experiment, and errors as "path:line". */
/* realpath() is an X/Open function; the build only asks for POSIX 2008. */
#define _XOPEN_SOURCE 700

#include "config_internal.h"

#include <lauxlib.h>
#include <lualib.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MEMORY_LIMIT ((size_t)256 << 20)
#define CONFIG_MAX_INSTRUCTIONS 200000000LL
#define CONFIG_MAX_LINE_EVENTS 20000000LL
#define CONFIG_MAX_INCLUDE_DEPTH 16
#define CONFIG_MAX_PRINTED ((size_t)1 << 20)

/* Globals a config may not use; reading one is an error that says so. */
static const char *const config_forbidden[] = {
    "io",     "os",       "debug",      "package", "coroutine", "utf8",   "require",
    "dofile", "loadfile", "loadstring", "module",  "setfenv",   "getfenv"};
#define CONFIG_N_FORBIDDEN ((int)(sizeof config_forbidden / sizeof config_forbidden[0]))

config_ctx *config_lua_ctx(lua_State *L)
{
    return *(config_ctx **)lua_getextraspace(L);
}

/* The path of the chunk Lua calls `short_src`, or short_src itself when it is not a file. */
static const char *config_chunk_path(const config_ctx *c, const char *short_src)
{
    for (int i = 0; i < c->n_chunks; i++)
        if (strcmp(c->chunks[i].short_src, short_src) == 0)
            return c->chunks[i].path;
    return short_src;
}

/* Length of the "short_src:123:" prefix of msg when it names one of the config's files, or 0. */
static size_t config_position_length(const config_ctx *c, const char *msg, int *chunk)
{
    for (int i = 0; i < c->n_chunks; i++) {
        size_t n = strlen(c->chunks[i].short_src);
        if (strncmp(msg, c->chunks[i].short_src, n) != 0 || msg[n] != ':' ||
            !isdigit((unsigned char)msg[n + 1]))
            continue;
        size_t j = n + 1;
        while (isdigit((unsigned char)msg[j]))
            j++;
        if (msg[j] == ':') {
            *chunk = i;
            return n;
        }
    }
    return 0;
}

static void *config_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    config_mem *m = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        m->used -= old;
        return NULL;
    }
    if (nsize > old && m->used - old + nsize > m->limit) {
        m->refused = 1;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p)
        m->used = m->used - old + nsize;
    return p;
}

/* Counts instructions and lines executed, remembers the current line, stops endless configs. */
void config_lua_hook(lua_State *L, lua_Debug *ar)
{
    config_ctx *c = config_lua_ctx(L);
    if (ar->event == LUA_HOOKCOUNT) {
        c->steps += CONFIG_HOOK_COUNT;
    } else {
        c->line_events++;
        if (lua_getinfo(L, "S", ar))
            memcpy(c->where_src, ar->short_src, sizeof c->where_src);
        c->where_line = ar->currentline;
    }
    if (c->steps <= CONFIG_MAX_INSTRUCTIONS && c->line_events <= CONFIG_MAX_LINE_EVENTS)
        return;
    lua_getinfo(L, "Sl", ar);
    lua_pushfstring(L,
                    "%s:%d: config ran too long (over %d million instructions or %d million "
                    "loop iterations; an endless loop?)",
                    ar->short_src, ar->currentline, (int)(CONFIG_MAX_INSTRUCTIONS / 1000000),
                    (int)(CONFIG_MAX_LINE_EVENTS / 1000000));
    lua_error(L);
}

/* __index of the globals: forbidden names fail with a clear message, other names are nil. */
static int config_lua_index(lua_State *L)
{
    const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
    for (int i = 0; k && i < CONFIG_N_FORBIDDEN; i++)
        if (strcmp(k, config_forbidden[i]) == 0)
            return luaL_error(L,
                              "'%s' is not available in configs (they may use only the base, "
                              "string, table and math libraries, and include)",
                              k);
    lua_pushnil(L);
    return 1;
}

/* Appends to the print buffer; output beyond CONFIG_MAX_PRINTED is dropped. */
static void config_print_append(config_ctx *c, const char *s, size_t len)
{
    if (c->printed_len + len > CONFIG_MAX_PRINTED)
        return;
    if (c->printed_len + len + 1 > c->printed_cap) {
        size_t cap = (c->printed_len + len + 1) * 2;
        char *grown = realloc(c->printed, cap);
        if (!grown)
            return;
        c->printed = grown;
        c->printed_cap = cap;
    }
    memcpy(c->printed + c->printed_len, s, len);
    c->printed_len += len;
}

/* print goes to stderr (stdout belongs to the CLI), prefixed with the line that printed.  It is
 * buffered so that a config evaluated twice (see config.h) prints once. */
static int config_lua_print(lua_State *L)
{
    config_ctx *c = config_lua_ctx(L);
    int n = lua_gettop(L);
    lua_Debug ar;
    char where[PATH_MAX + 32];
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
        snprintf(where, sizeof where, "%s:%d: ", config_chunk_path(c, ar.short_src),
                 ar.currentline);
        config_print_append(c, where, strlen(where));
    }
    for (int i = 1; i <= n; i++) {
        size_t len;
        const char *s = luaL_tolstring(L, i, &len);
        if (i > 1)
            config_print_append(c, "\t", 1);
        config_print_append(c, s, len);
        lua_pop(L, 1);
    }
    config_print_append(c, "\n", 1);
    return 0;
}

/* load, restricted to text chunks (binary chunks can crash the VM). */
static int config_lua_load(lua_State *L)
{
    int n = lua_gettop(L) > 4 ? 4 : lua_gettop(L);
    lua_settop(L, n > 3 ? n : 3);
    lua_pushliteral(L, "t");
    lua_replace(L, 3);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    /* An explicit nil env would give the chunk no globals; pass env only when it was given. */
    lua_call(L, n == 4 ? 4 : 3, LUA_MULTRET);
    return lua_gettop(L);
}

/* Line being executed in the main config file (the innermost such frame), or 0. */
static int config_main_line(lua_State *L, const config_ctx *c)
{
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++)
        if (lua_getinfo(L, "Sl", &ar) && strcmp(ar.source, c->chunkname) == 0)
            return ar.currentline;
    return 0;
}

/* experiment { ... }: marks the table as the experiment and remembers the line of the call. */
static int config_lua_experiment(lua_State *L)
{
    config_ctx *c = config_lua_ctx(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    if (lua_gettop(L) > 1)
        return luaL_error(L, "experiment takes one table: experiment { ... }");
    lua_getfield(L, LUA_REGISTRYINDEX, CONFIG_MARKS);
    lua_pushvalue(L, 1);
    lua_pushinteger(L, config_main_line(L, c));
    lua_rawset(L, -3);
    lua_settop(L, 1);
    return 1;
}

/* Records how Lua abbreviates `path` in messages, so that errors can name the whole path. */
static void config_register_chunk(lua_State *L, config_ctx *c, const char *path)
{
    for (int i = 0; i < c->n_chunks; i++)
        if (strcmp(c->chunks[i].path, path) == 0)
            return;
    const char *name = lua_pushfstring(L, "@%s", path);
    if (luaL_loadbufferx(L, "", 0, name, "t") != LUA_OK)
        lua_error(L);
    lua_Debug ar;
    lua_getinfo(L, ">S", &ar);
    lua_pop(L, 1);
    config_chunk *grown = realloc(c->chunks, (size_t)(c->n_chunks + 1) * sizeof *grown);
    if (!grown)
        luaL_error(L, "out of memory");
    c->chunks = grown;
    char *copy = strdup(path);
    if (!copy)
        luaL_error(L, "out of memory");
    memcpy(c->chunks[c->n_chunks].short_src, ar.short_src, sizeof ar.short_src);
    c->chunks[c->n_chunks++].path = copy;
}

/* Pushes the folder of the file that called include (the main config's when unknown). */
static const char *config_push_caller_dir(lua_State *L, const config_ctx *c)
{
    lua_Debug ar;
    if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "S", &ar) || ar.source[0] != '@')
        return lua_pushstring(L, c->dir);
    const char *file = ar.source + 1, *slash = strrchr(file, '/');
    if (!slash)
        return lua_pushliteral(L, "");
    return lua_pushlstring(L, file, slash == file ? 1 : (size_t)(slash - file));
}

/* include("file.lua"): evaluates a file of the config's folder tree and returns its results. */
static int config_lua_include(lua_State *L)
{
    config_ctx *c = config_lua_ctx(L);
    const char *name = luaL_checkstring(L, 1);
    const char *dir = config_push_caller_dir(L, c);
    const char *file = name[0] == '/' || !dir[0] ? lua_pushstring(L, name)
                                                 : lua_pushfstring(L, "%s/%s", dir, name);
    char real[PATH_MAX];
    if (!realpath(file, real))
        return luaL_error(L, "include('%s'): cannot open '%s': %s", name, file, strerror(errno));
    size_t rl = strlen(c->root);
    int inside = strcmp(c->root, "/") == 0 || (strncmp(real, c->root, rl) == 0 && real[rl] == '/');
    if (!inside)
        return luaL_error(L, "include('%s') is refused: '%s' is outside the config's folder '%s'",
                          name, real, c->root);
    if (c->include_depth >= CONFIG_MAX_INCLUDE_DEPTH)
        return luaL_error(L, "include('%s'): includes nest more than %d deep (a cycle?)", name,
                          CONFIG_MAX_INCLUDE_DEPTH);
    config_register_chunk(L, c, file);
    int base = lua_gettop(L);
    if (luaL_loadfilex(L, file, "t") != LUA_OK)
        return lua_error(L);
    c->include_depth++;
    int status = lua_pcall(L, 0, LUA_MULTRET, 0);
    c->include_depth--;
    if (status != LUA_OK)
        return lua_error(L);
    return lua_gettop(L) - base;
}

/* Message handler: gives errors that carry no position in a config file the current line. */
int config_lua_msgh(lua_State *L)
{
    config_ctx *c = config_lua_ctx(L);
    const char *msg = lua_tostring(L, 1);
    if (!msg)
        msg =
            lua_pushfstring(L, "the config raised an error value of type %s", luaL_typename(L, 1));
    int chunk;
    if (config_position_length(c, msg, &chunk)) {
        lua_pushstring(L, msg);
        return 1;
    }
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0)
            continue;
        for (int i = 0; i < c->n_chunks; i++)
            if (strcmp(c->chunks[i].short_src, ar.short_src) == 0) {
                lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, msg);
                return 1;
            }
    }
    lua_pushstring(L, msg);
    return 1;
}

/* Replaces the environment's loaders and printers and installs the config's functions. */
static void config_sandbox(lua_State *L)
{
    lua_pushglobaltable(L);
    lua_pushnil(L);
    lua_setfield(L, -2, "dofile");
    lua_pushnil(L);
    lua_setfield(L, -2, "loadfile");
    lua_getfield(L, -1, "load");
    lua_pushcclosure(L, config_lua_load, 1);
    lua_setfield(L, -2, "load");
    lua_pushcfunction(L, config_lua_print);
    lua_setfield(L, -2, "print");
    lua_pushcfunction(L, config_lua_experiment);
    lua_setfield(L, -2, "experiment");
    lua_pushcfunction(L, config_lua_include);
    lua_setfield(L, -2, "include");
    lua_newtable(L);
    lua_pushcfunction(L, config_lua_index);
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0); /* a protected metatable: setmetatable(_G, nil) fails */
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_pop(L, 1);
}

/* Protected: opens the sandbox, seeds math.random and loads the main config (returned). */
int config_lua_setup(lua_State *L)
{
    config_ctx *c = config_lua_ctx(L);
    luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
    lua_settop(L, 0);
    config_sandbox(L);
    lua_newtable(L);
    lua_newtable(L);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, CONFIG_MARKS);
    lua_getglobal(L, LUA_MATHLIBNAME);
    lua_getfield(L, -1, "randomseed");
    lua_pushinteger(L, c->random_seed);
    lua_call(L, 1, 0);
    lua_settop(L, 0);
    config_register_chunk(L, c, c->path);
    if (luaL_loadbufferx(L, c->text, c->len, c->chunkname, "t") != LUA_OK)
        return lua_error(L);
    return 1;
}

/* Turns the Lua error on top of the stack into "path:line: message" (one line) in c->err. */
int config_lua_error(lua_State *L, config_ctx *c, int status)
{
    const char *msg = lua_tostring(L, -1);
    char buf[sizeof c->err->msg];
    int chunk;
    size_t pos;
    if (!msg)
        msg = "the config raised an error that is not a string";
    if (c->mem.refused && (status == LUA_ERRMEM || strcmp(msg, "not enough memory") == 0)) {
        const char *where = c->where_src[0] ? config_chunk_path(c, c->where_src) : c->path;
        snprintf(buf, sizeof buf, "%s:%d: config used more than %zu MB of memory", where,
                 c->where_line > 0 ? c->where_line : 1, CONFIG_MEMORY_LIMIT >> 20);
    } else if ((pos = config_position_length(c, msg, &chunk)) > 0) {
        snprintf(buf, sizeof buf, "%s%s", c->chunks[chunk].path, msg + pos);
    } else {
        snprintf(buf, sizeof buf, "%s:%d: %s", c->path, c->exp_line > 0 ? c->exp_line : 1, msg);
    }
    config_one_line(buf);
    return pb_errorf(c->err, "%s", buf);
}

/* Resets the per-pass state of c and opens a Lua state bound to it (NULL when out of memory). */
lua_State *config_lua_open(config_ctx *c, lua_Integer random_seed)
{
    memset(&c->mem, 0, sizeof c->mem);
    c->mem.limit = CONFIG_MEMORY_LIMIT;
    c->steps = c->line_events = 0;
    c->where_src[0] = '\0';
    c->where_line = c->include_depth = c->exp_line = c->profile_line = c->failed = 0;
    c->exp_range = c->profile_range = config_scan_no_range;
    c->printed_len = 0;
    c->random_seed = random_seed;
    lua_State *L = lua_newstate(config_alloc, &c->mem);
    if (L)
        *(config_ctx **)lua_getextraspace(L) = c;
    return L;
}
