/* config.c — experiments in Lua: a sandboxed evaluation of a config file, copied into plain C
 * structs before the Lua state is closed (the only user of Lua). */
/* realpath() is an X/Open function; the build only asks for POSIX 2008. */
#define _XOPEN_SOURCE 700

#include "config.h"

#include "core/array.h"
#include "core/fileio.h"

#include "plugin/options.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MEMORY_LIMIT ((size_t)256 << 20)
#define CONFIG_MAX_INSTRUCTIONS 200000000LL
#define CONFIG_MAX_LINE_EVENTS 20000000LL
#define CONFIG_HOOK_COUNT 10000
#define CONFIG_MAX_FILE_BYTES (16L << 20)
#define CONFIG_MAX_INCLUDE_DEPTH 16
#define CONFIG_MAX_DEVICES 65536
#define CONFIG_MAX_REPEATS 1000000
#define CONFIG_MAX_PRINTED ((size_t)1 << 20)
/* Registry key of the weak table that marks tables made by experiment { ... }. */
#define CONFIG_MARKS "placebench.experiments"

static const char *const config_fields[] = {"name",      "seed",        "repeats",   "datasets",
                                            "devices",   "cluster",     "simulator", "placer",
                                            "embedding", "traversal",   "episodes",  "sim_calls",
                                            "timeout",   "plugin_path", "results",   "profiles"};
#define CONFIG_N_FIELDS ((int)(sizeof config_fields / sizeof config_fields[0]))

/* Globals a config may not use; reading one is an error that says so. */
static const char *const config_forbidden[] = {
    "io",     "os",       "debug",      "package", "coroutine", "utf8",   "require",
    "dofile", "loadfile", "loadstring", "module",  "setfenv",   "getfenv"};
#define CONFIG_N_FORBIDDEN ((int)(sizeof config_forbidden / sizeof config_forbidden[0]))

/* ---------------------------------------------------------------- source scanner */

/* Errors found after evaluation (unknown field, bad value) are located by scanning the config's
 * text for where a key is assigned or a plugin name is written; comments and strings are skipped
 * by this small tokenizer so that they never match. */
enum { SCAN_NAME, SCAN_STRING, SCAN_ASSIGN, SCAN_OTHER };

typedef struct scan_token {
    int kind;
    int line;
    const char *text; /* NAME: the name; STRING: the text between the delimiters; else the token */
    size_t len;
} scan_token;

typedef struct config_scan {
    scan_token *tok;
    int n, cap;
} config_scan;

static int config_scan_push(config_scan *s, int kind, int line, const char *text, size_t len)
{
    if (array_grow(&s->tok, &s->cap, s->n + 1, sizeof *s->tok))
        return PB_ERR;
    s->tok[s->n++] = (scan_token){kind, line, text, len};
    return PB_OK;
}

/* Length of the line break at s[i], 0 when none starts there: Lua counts "\n", "\r", "\r\n" and
 * "\n\r" as one line break each (llex.c, inclinenumber). */
static size_t config_scan_newline(const char *s, size_t len, size_t i)
{
    if (s[i] != '\n' && s[i] != '\r')
        return 0;
    return i + 1 < len && (s[i + 1] == '\n' || s[i + 1] == '\r') && s[i + 1] != s[i] ? 2 : 1;
}

/* Level of the long bracket opening at s[i] ("[[" is 0, "[==[" is 2), or -1 when none does. */
static int config_scan_long_open(const char *s, size_t len, size_t i)
{
    if (i >= len || s[i] != '[')
        return -1;
    size_t j = i + 1;
    int level = 0;
    while (j < len && s[j] == '=') {
        level++;
        j++;
    }
    return j < len && s[j] == '[' ? level : -1;
}

/* Skips the long bracket of `level` opening at s[*i], counting lines; *body spans its text. */
static void config_scan_long_skip(const char *s, size_t len, size_t *i, int level, int *line,
                                  size_t *body, size_t *body_len)
{
    size_t j = *i + (size_t)level + 2;
    *body = j;
    while (j < len) {
        if (s[j] == ']') {
            size_t k = j + 1;
            int eq = 0;
            while (k < len && s[k] == '=') {
                eq++;
                k++;
            }
            if (eq == level && k < len && s[k] == ']') {
                *body_len = j - *body;
                *i = k + 1;
                return;
            }
        }
        size_t nl = config_scan_newline(s, len, j);
        *line += nl > 0;
        j += nl ? nl : 1;
    }
    *body_len = j - *body;
    *i = len;
}

/* Skips the quoted string opening at s[*i]; *body spans its raw text. */
static void config_scan_quoted(const char *s, size_t len, size_t *i, int *line, size_t *body,
                               size_t *body_len)
{
    char q = s[*i];
    size_t j = *i + 1;
    *body = j;
    while (j < len && s[j] != q && s[j] != '\n' && s[j] != '\r') {
        if (s[j] != '\\' || j + 1 >= len) {
            j++;
            continue;
        }
        size_t nl = config_scan_newline(s, len, j + 1); /* an escaped line break is in the string */
        *line += nl > 0;
        j += 1 + (nl ? nl : 1);
    }
    *body_len = j - *body;
    *i = j < len && s[j] == q ? j + 1 : j; /* an unterminated string is Lua's error to report */
}

static size_t config_scan_number_end(const char *s, size_t len, size_t j)
{
    while (j < len && (isalnum((unsigned char)s[j]) || s[j] == '.' ||
                       ((s[j] == '+' || s[j] == '-') && strchr("eEpP", s[j - 1]))))
        j++;
    return j;
}

/* Reads one token (or comment) at s[*i]; returns PB_ERR only when out of memory. */
static int config_scan_token(const char *s, size_t len, size_t *i, int *line, config_scan *out)
{
    size_t at = *i, body, body_len;
    char c = s[at], next = at + 1 < len ? s[at + 1] : '\0';
    int start = *line;
    if (c == '-' && next == '-') {
        int level = config_scan_long_open(s, len, at + 2);
        *i = at + 2;
        if (level >= 0)
            config_scan_long_skip(s, len, i, level, line, &body, &body_len);
        else
            while (*i < len && s[*i] != '\n' && s[*i] != '\r')
                (*i)++;
        return PB_OK;
    }
    int level = config_scan_long_open(s, len, at);
    if (level >= 0 || c == '"' || c == '\'') {
        if (level >= 0)
            config_scan_long_skip(s, len, i, level, line, &body, &body_len);
        else
            config_scan_quoted(s, len, i, line, &body, &body_len);
        return config_scan_push(out, SCAN_STRING, start, s + body, body_len);
    }
    size_t end = at + 1;
    int kind = SCAN_OTHER;
    if (isalpha((unsigned char)c) || c == '_') {
        while (end < len && (isalnum((unsigned char)s[end]) || s[end] == '_'))
            end++;
        kind = SCAN_NAME;
    } else if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)next))) {
        end = config_scan_number_end(s, len, at);
    } else if (strchr("=<>~", c) && next == '=') {
        end = at + 2;
    } else if (c == '=') {
        kind = SCAN_ASSIGN;
    }
    *i = end;
    return config_scan_push(out, kind, start, s + at, end - at);
}

static int config_scan_source(const char *s, size_t len, config_scan *out)
{
    size_t i = 0;
    int line = 1;
    if (len > 0 && s[0] == '#') /* Lua skips a first line starting with '#' */
        while (i < len && s[i] != '\n' && s[i] != '\r')
            i++;
    while (i < len) {
        size_t nl = config_scan_newline(s, len, i);
        if (nl) {
            line++;
            i += nl;
        } else if (isspace((unsigned char)s[i])) {
            i++;
        } else if (config_scan_token(s, len, &i, &line, out)) {
            return PB_ERR;
        }
    }
    return PB_OK;
}

static int config_scan_is(const scan_token *t, int kind, const char *text)
{
    return t->kind == kind && t->len == strlen(text) && memcmp(t->text, text, t->len) == 0;
}

/* Whether token k starts an assignment to `key`: `key =` (not `local key =`) or `["key"] =`. */
static int config_scan_assigns(const config_scan *s, int k, const char *key)
{
    const scan_token *t = s->tok;
    if (config_scan_is(&t[k], SCAN_NAME, key))
        return k + 1 < s->n && t[k + 1].kind == SCAN_ASSIGN &&
               !(k > 0 && config_scan_is(&t[k - 1], SCAN_NAME, "local"));
    return config_scan_is(&t[k], SCAN_STRING, key) && k > 0 && k + 2 < s->n &&
           config_scan_is(&t[k - 1], SCAN_OTHER, "[") &&
           config_scan_is(&t[k + 1], SCAN_OTHER, "]") && t[k + 2].kind == SCAN_ASSIGN;
}

/* First line >= from where `key` is assigned, or 0. */
static int config_scan_key_line(const config_scan *s, const char *key, int from)
{
    for (int k = 0; k < s->n; k++)
        if (s->tok[k].line >= from && config_scan_assigns(s, k, key))
            return s->tok[k].line;
    return 0;
}

/* First line >= from holding the string literal `text`, or 0. */
static int config_scan_string_line(const config_scan *s, const char *text, int from)
{
    for (int k = 0; k < s->n; k++)
        if (s->tok[k].line >= from && config_scan_is(&s->tok[k], SCAN_STRING, text))
            return s->tok[k].line;
    return 0;
}

/* Line of the last `return`, where a config that returns the wrong thing is wrong; 1 if none. */
static int config_scan_return_line(const config_scan *s)
{
    int line = 1;
    for (int k = 0; k < s->n; k++)
        if (config_scan_is(&s->tok[k], SCAN_NAME, "return"))
            line = s->tok[k].line;
    return line;
}

/* Token indices of a table constructor's braces; open < 0 when unknown. */
typedef struct scan_range {
    int open, close;
} scan_range;

static const scan_range config_no_range = {-1, -1};

/* The table whose '{' is token `open`, up to its matching '}'. */
static scan_range config_scan_table(const config_scan *s, int open)
{
    int depth = 0;
    for (int k = open; k < s->n; k++) {
        if (config_scan_is(&s->tok[k], SCAN_OTHER, "{"))
            depth++;
        else if (config_scan_is(&s->tok[k], SCAN_OTHER, "}") && --depth == 0)
            return (scan_range){open, k};
    }
    return (scan_range){open, s->n}; /* unterminated: Lua has reported it already */
}

/* The table constructor that token k introduces: `k = {`, `k {` or `k ({`. */
static scan_range config_scan_table_after(const config_scan *s, int k)
{
    if (k < 0)
        return config_no_range;
    int j = k + 1;
    if (j < s->n && s->tok[j].kind == SCAN_ASSIGN)
        j++;
    if (j < s->n && config_scan_is(&s->tok[j], SCAN_OTHER, "("))
        j++;
    if (j < s->n && config_scan_is(&s->tok[j], SCAN_OTHER, "{"))
        return config_scan_table(s, j);
    return config_no_range;
}

/* Token index of the assignment to `key` directly inside r (not in a nested table), or -1. */
static int config_scan_find_key(const config_scan *s, scan_range r, const char *key)
{
    int depth = 0;
    for (int k = r.open + 1; r.open >= 0 && k < r.close; k++) {
        if (config_scan_is(&s->tok[k], SCAN_OTHER, "{"))
            depth++;
        else if (config_scan_is(&s->tok[k], SCAN_OTHER, "}"))
            depth--;
        else if (depth == 0 && config_scan_assigns(s, k, key))
            return k;
    }
    return -1;
}

/* Token index of the string literal `text` inside r after token `after`, or -1. */
static int config_scan_find_string(const config_scan *s, scan_range r, int after, const char *text)
{
    int k = after > r.open ? after + 1 : r.open + 1;
    for (; r.open >= 0 && k < r.close; k++)
        if (config_scan_is(&s->tok[k], SCAN_STRING, text))
            return k;
    return -1;
}

/* The table of the `experiment { ... }` call written on `line`. */
static scan_range config_scan_experiment(const config_scan *s, int line)
{
    for (int k = 0; k < s->n; k++)
        if (s->tok[k].line == line && config_scan_is(&s->tok[k], SCAN_NAME, "experiment"))
            return config_scan_table_after(s, k);
    return config_no_range;
}

/* ---------------------------------------------------------------- evaluation context */

typedef struct config_chunk {
    char short_src[LUA_IDSIZE]; /* how Lua abbreviates the chunk's name in messages */
    char *path;                 /* the file, as errors name it */
} config_chunk;

typedef struct config_mem {
    size_t used, limit;
    int refused; /* an allocation was refused for the limit */
} config_mem;

typedef struct config_ctx {
    const char *path;    /* the config, as given */
    const char *profile; /* NULL for none */
    pb_error *err;
    char *chunkname;     /* "@" path */
    char *dir;           /* folder of path as given, "" for the working directory */
    char root[PATH_MAX]; /* real path of that folder: includes must stay inside it */
    char *text;          /* the config's source */
    size_t len;
    config_scan scan;
    config_chunk *chunks;
    int n_chunks;
    /* Per evaluation pass. */
    config_mem mem;
    long long steps, line_events;
    char where_src[LUA_IDSIZE]; /* last line executed, for errors that carry no position */
    int where_line;
    int include_depth;
    lua_Integer random_seed;
    int exp_line;                        /* line of the experiment call in the main file */
    int profile_line;                    /* line of the selected profile, 0 for none */
    scan_range exp_range, profile_range; /* their tables in the text, when found there */
    char *printed; /* what print() wrote in this pass, shown once the last pass is over */
    size_t printed_len, printed_cap;
    experiment *x; /* being filled by the conversion */
    int failed;    /* the conversion wrote an error into err */
} config_ctx;

/* Names and keys quoted in a message may hold line breaks; an error is one line. */
static void config_one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
}

/* Writes "path:line: message" into the error and marks the conversion as failed. */
static int config_fail(config_ctx *c, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int config_fail(config_ctx *c, int line, const char *fmt, ...)
{
    char msg[sizeof c->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    config_one_line(msg);
    c->failed = 1;
    return pb_errorf(c->err, "%s:%d: %s", c->path, line > 0 ? line : 1, msg);
}

/* Line where `key` is assigned, searching from `from` (the enclosing table's line) on, then the
 * whole file; `from` (or the experiment call) when the key is not written in the text. */
static int config_key_line(const config_ctx *c, const char *key, int from)
{
    int line = from > 0 ? config_scan_key_line(&c->scan, key, from) : 0;
    if (!line)
        line = config_scan_key_line(&c->scan, key, 1);
    if (!line)
        line = from > 0 ? from : c->exp_line;
    return line > 0 ? line : 1;
}

/* Line where `key` is assigned directly inside table r; as config_key_line when r is unknown or
 * does not hold it (a table built by code). */
static int config_line_in(const config_ctx *c, scan_range r, const char *key, int from)
{
    int k = config_scan_find_key(&c->scan, r, key);
    return k >= 0 ? c->scan.tok[k].line : config_key_line(c, key, from);
}

static config_ctx *config_ctx_of(lua_State *L)
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

/* ---------------------------------------------------------------- the Lua state */

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
static void config_hook(lua_State *L, lua_Debug *ar)
{
    config_ctx *c = config_ctx_of(L);
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
    config_ctx *c = config_ctx_of(L);
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
    config_ctx *c = config_ctx_of(L);
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
    config_ctx *c = config_ctx_of(L);
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
static int config_lua_msgh(lua_State *L)
{
    config_ctx *c = config_ctx_of(L);
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
static int config_lua_setup(lua_State *L)
{
    config_ctx *c = config_ctx_of(L);
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
static int config_lua_error(lua_State *L, config_ctx *c, int status)
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

/* ---------------------------------------------------------------- reading values */

/* Number of entries when the table at idx is a sequence with keys exactly 1..n, else -1. */
static int config_sequence_length(lua_State *L, int idx)
{
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        lua_Integer k = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
        if (k < 1 || k > n) {
            lua_pop(L, 1);
            return -1;
        }
        count++;
    }
    return count == n && n <= INT_MAX ? (int)n : -1;
}

/* Text of the scalar at idx (string, number or boolean) into *out (caller frees).  Returns
 * PB_ERR for other types, leaving *out NULL; out of memory also leaves *out NULL. */
static int config_scalar_text(lua_State *L, int idx, char **out)
{
    char buf[64];
    *out = NULL;
    switch (lua_type(L, idx)) {
    case LUA_TSTRING:
        *out = strdup(lua_tostring(L, idx));
        return PB_OK;
    case LUA_TBOOLEAN:
        *out = strdup(lua_toboolean(L, idx) ? "true" : "false");
        return PB_OK;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx))
            snprintf(buf, sizeof buf, "%lld", (long long)lua_tointeger(L, idx));
        else
            options_format_double(lua_tonumber(L, idx), buf, sizeof buf);
        *out = strdup(buf);
        return PB_OK;
    }
    return PB_ERR;
}

/* Pushes field `name` of the experiment (the selected profile's value first), sets its line and
 * its key's token (-1 when not found in the text; tok may be NULL) and returns its Lua type. */
static int config_push_field_at(lua_State *L, config_ctx *c, const char *name, int *line, int *tok)
{
    int k = -1, t = LUA_TNIL;
    if (lua_istable(L, 2)) {
        lua_pushstring(L, name);
        if ((t = lua_rawget(L, 2)) != LUA_TNIL) {
            k = config_scan_find_key(&c->scan, c->profile_range, name);
            *line = k >= 0 ? c->scan.tok[k].line : config_key_line(c, name, c->profile_line);
        } else {
            lua_pop(L, 1);
        }
    }
    if (t == LUA_TNIL) {
        lua_pushstring(L, name);
        t = lua_rawget(L, 1);
        k = t == LUA_TNIL ? -1 : config_scan_find_key(&c->scan, c->exp_range, name);
        *line = k >= 0          ? c->scan.tok[k].line
                : t == LUA_TNIL ? c->exp_line
                                : config_key_line(c, name, c->exp_line);
    }
    if (tok)
        *tok = k;
    return t;
}

static int config_push_field(lua_State *L, config_ctx *c, const char *name, int *line)
{
    return config_push_field_at(L, c, name, line, NULL);
}

/* A string field; `def` (may be NULL) when absent. */
static int config_get_string(lua_State *L, config_ctx *c, const char *name, const char *def,
                             char **out, int *line)
{
    int t = config_push_field(L, c, name, line);
    const char *s = t == LUA_TNIL ? def : t == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (t != LUA_TNIL && t != LUA_TSTRING)
        return config_fail(c, *line, "field '%s' must be a string (got %s)", name,
                           luaL_typename(L, -1));
    if (s && !s[0])
        return config_fail(c, *line, "field '%s' is empty", name);
    if (s && !(*out = strdup(s)))
        return config_fail(c, *line, "out of memory");
    lua_pop(L, 1);
    return PB_OK;
}

/* The integer at idx, checked against [lo, hi]; `what` names it in errors. */
static int config_integer_at(lua_State *L, config_ctx *c, int idx, const char *what, long long lo,
                             long long hi, int line, long long *out)
{
    int isnum = 0;
    lua_Integer v = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &isnum) : 0;
    if (!isnum) {
        if (lua_type(L, idx) == LUA_TNUMBER) {
            char buf[64];
            options_format_double(lua_tonumber(L, idx), buf, sizeof buf);
            return config_fail(c, line, "%s must be an integer (got %s)", what, buf);
        }
        return config_fail(c, line, "%s must be an integer (got %s)", what, luaL_typename(L, idx));
    }
    if (v < lo || v > hi)
        return config_fail(c, line, "%s is %lld; it must be between %lld and %lld", what,
                           (long long)v, lo, hi);
    *out = (long long)v;
    return PB_OK;
}

/* A single integer field in [lo, hi]; `def` when absent. */
static int config_get_integer(lua_State *L, config_ctx *c, const char *name, long long lo,
                              long long hi, long long def, long long *out, int *line)
{
    int t = config_push_field(L, c, name, line);
    char what[64];
    snprintf(what, sizeof what, "field '%s'", name);
    if (t == LUA_TTABLE)
        return config_fail(c, *line, "field '%s' must be an integer (it is not a sweep axis)",
                           name);
    if (t == LUA_TNIL)
        *out = def;
    else if (config_integer_at(L, c, -1, what, lo, hi, *line, out))
        return PB_ERR;
    lua_pop(L, 1);
    return PB_OK;
}

/* A number of seconds >= 0 (timeout). */
static int config_get_seconds(lua_State *L, config_ctx *c, const char *name, double *out, int *line)
{
    int t = config_push_field(L, c, name, line);
    if (t == LUA_TNIL) {
        *out = 0;
    } else if (t != LUA_TNUMBER) {
        return config_fail(c, *line, "field '%s' must be a number of seconds (got %s)", name,
                           luaL_typename(L, -1));
    } else {
        *out = lua_tonumber(L, -1);
        if (!isfinite(*out) || *out < 0)
            return config_fail(c, *line, "field '%s' must be a finite number >= 0", name);
    }
    lua_pop(L, 1);
    return PB_OK;
}

/* A string or a list of strings; `def` (may be NULL) when absent. */
static int config_get_strings(lua_State *L, config_ctx *c, const char *name, const char *def,
                              char ***out, int *n, int *line)
{
    int t = config_push_field(L, c, name, line), v = lua_gettop(L);
    int count = t == LUA_TTABLE ? config_sequence_length(L, v) : 1;
    if ((t != LUA_TSTRING && t != LUA_TTABLE && t != LUA_TNIL) || count < 0)
        return config_fail(c, *line, "field '%s' must be a string or a list of strings (got %s)",
                           name, t == LUA_TTABLE ? "a table with keys" : luaL_typename(L, v));
    if (t == LUA_TNIL && !def) {
        lua_pop(L, 1);
        return PB_OK;
    }
    if (count == 0)
        return config_fail(c, *line, "field '%s' is an empty list", name);
    *out = calloc((size_t)count, sizeof **out);
    if (!*out)
        return config_fail(c, *line, "out of memory");
    *n = count;
    for (int i = 0; i < count; i++) {
        if (t == LUA_TTABLE)
            lua_rawgeti(L, v, i + 1);
        const char *s = t == LUA_TNIL ? def : lua_tostring(L, -1);
        if (t != LUA_TNIL && lua_type(L, -1) != LUA_TSTRING)
            return config_fail(c, *line, "field '%s': entry %d must be a string (got %s)", name,
                               i + 1, luaL_typename(L, -1));
        if (!s[0])
            return config_fail(c, *line, "field '%s': entry %d is an empty string", name, i + 1);
        if (!((*out)[i] = strdup(s)))
            return config_fail(c, *line, "out of memory");
        lua_settop(L, v);
    }
    lua_pop(L, 1);
    return PB_OK;
}

/* An integer or a list of integers in [lo, hi] (devices). */
static int config_get_ints(lua_State *L, config_ctx *c, const char *name, long long lo,
                           long long hi, int **out, int *n, int *line)
{
    int t = config_push_field(L, c, name, line), v = lua_gettop(L);
    int count = t == LUA_TTABLE ? config_sequence_length(L, v) : 1;
    if (t == LUA_TNIL)
        return config_fail(
            c, *line, "missing field '%s' (an integer or a list, e.g. %s = { 2, 4 })", name, name);
    if ((t != LUA_TNUMBER && t != LUA_TTABLE) || count < 0)
        return config_fail(c, *line, "field '%s' must be an integer or a list of integers (got %s)",
                           name, t == LUA_TTABLE ? "a table with keys" : luaL_typename(L, v));
    if (count == 0)
        return config_fail(c, *line, "field '%s' is an empty list", name);
    *out = calloc((size_t)count, sizeof **out);
    if (!*out)
        return config_fail(c, *line, "out of memory");
    *n = count;
    for (int i = 0; i < count; i++) {
        char what[80];
        snprintf(what, sizeof what, t == LUA_TTABLE ? "field '%s': entry %d" : "field '%s'", name,
                 i + 1);
        if (t == LUA_TTABLE)
            lua_rawgeti(L, v, i + 1);
        long long value;
        if (config_integer_at(L, c, -1, what, lo, hi, *line, &value))
            return PB_ERR;
        (*out)[i] = (int)value;
        lua_settop(L, v);
    }
    lua_pop(L, 1);
    return PB_OK;
}

/* ---------------------------------------------------------------- plugin references */

/* Whether the table at idx is ONE plugin reference rather than a list of them: it has a string
 * key, or its only entry is [1] = string (see config.h). */
static int config_is_reference(lua_State *L, int idx)
{
    int entries = 0, string_key = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        entries++;
        string_key |= lua_type(L, -1) == LUA_TSTRING;
    }
    if (string_key)
        return 1;
    int first_is_string = lua_rawgeti(L, idx, 1) == LUA_TSTRING;
    lua_pop(L, 1);
    return entries == 1 && first_is_string;
}

/* The values of one option (a scalar, or a list of scalars: a sweep axis). */
static int config_option_values(lua_State *L, config_ctx *c, int idx, const char *field,
                                const cfg_plugin *p, cfg_option *o)
{
    int list = lua_type(L, idx) == LUA_TTABLE;
    int count = list ? config_sequence_length(L, idx) : 1;
    if (count <= 0)
        return config_fail(c, o->line,
                           "field '%s': option '%s' of '%s' must be a value or a non-empty list "
                           "of values",
                           field, o->key, p->name);
    o->values = calloc((size_t)count, sizeof *o->values);
    if (!o->values)
        return config_fail(c, o->line, "out of memory");
    for (int i = 0; i < count; i++) {
        int at = idx;
        if (list) {
            lua_rawgeti(L, idx, i + 1);
            at = lua_gettop(L);
        }
        int rc = config_scalar_text(L, at, &o->values[i]);
        if (rc != PB_OK)
            return config_fail(c, o->line,
                               "field '%s': option '%s' of '%s' must be a string, number or "
                               "boolean, or a list of those (got %s)",
                               field, o->key, p->name, luaL_typename(L, at));
        if (!o->values[i])
            return config_fail(c, o->line, "out of memory");
        o->n_values = i + 1;
        if (list)
            lua_pop(L, 1);
    }
    return PB_OK;
}

static int config_option_cmp(const void *a, const void *b)
{
    return strcmp(((const cfg_option *)a)->key, ((const cfg_option *)b)->key);
}

/* The options (string keys) of the reference table at idx, sorted by key. */
static int config_plugin_options(lua_State *L, config_ctx *c, int idx, const char *field,
                                 scan_range ref, cfg_plugin *p)
{
    int count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING)
            count++;
        else if (lua_isinteger(L, -1) && lua_tointeger(L, -1) != 1)
            return config_fail(c, p->line,
                               "field '%s': plugin '%s' has an unexpected entry [%lld]; options "
                               "are written key = value",
                               field, p->name, (long long)lua_tointeger(L, -1));
        else if (!lua_isinteger(L, -1))
            return config_fail(c, p->line,
                               "field '%s': plugin '%s' has an entry with a %s key; options are "
                               "written key = value",
                               field, p->name, luaL_typename(L, -1));
    }
    p->opts = calloc((size_t)(count ? count : 1), sizeof *p->opts);
    if (!p->opts)
        return config_fail(c, p->line, "out of memory");
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            lua_pop(L, 1);
            continue;
        }
        cfg_option *o = &p->opts[p->n_opts++];
        if (!(o->key = strdup(lua_tostring(L, -2))))
            return config_fail(c, p->line, "out of memory");
        o->line = config_line_in(c, ref, o->key, p->line);
        if (config_option_values(L, c, lua_gettop(L), field, p, o))
            return PB_ERR;
        lua_pop(L, 1);
    }
    qsort(p->opts, (size_t)p->n_opts, sizeof *p->opts, config_option_cmp);
    return PB_OK;
}

/* Where a field's plugin references are written: the field's table in the text (none when the
 * value is a plain string or was computed) and the last reference found in it. */
typedef struct config_refs_text {
    scan_range table;
    int cursor;
} config_refs_text;

/* Finds the reference called p->name in the text: its line, and its own table when it has one. */
static scan_range config_locate_ref(const config_ctx *c, config_refs_text *where, int line,
                                    cfg_plugin *p)
{
    int k = config_scan_find_string(&c->scan, where->table, where->cursor, p->name);
    if (k < 0) {
        int at = config_scan_string_line(&c->scan, p->name, line);
        p->line = at ? at : line;
        return config_no_range;
    }
    where->cursor = k;
    p->line = c->scan.tok[k].line;
    if (config_scan_is(&c->scan.tok[k - 1], SCAN_OTHER, "{"))
        return config_scan_table(&c->scan, k - 1);
    return config_no_range;
}

/* One reference (a string, or a table that config_is_reference accepted) at idx. */
static int config_plugin_ref(lua_State *L, config_ctx *c, int idx, const char *field, int line,
                             config_refs_text *where, cfg_plugin *p)
{
    int table = lua_type(L, idx) == LUA_TTABLE;
    if (table && lua_rawgeti(L, idx, 1) != LUA_TSTRING)
        return config_fail(c, line,
                           "field '%s': a plugin reference starts with the plugin's name, as in "
                           "{ \"random\", sim_calls = 100 }",
                           field);
    const char *name = lua_tostring(L, table ? -1 : idx);
    if (!name[0])
        return config_fail(c, line, "field '%s': the plugin name is empty", field);
    if (!(p->name = strdup(name)))
        return config_fail(c, line, "out of memory");
    if (table)
        lua_pop(L, 1);
    scan_range ref = config_locate_ref(c, where, line, p);
    return table ? config_plugin_options(L, c, idx, field, ref, p) : PB_OK;
}

/* A list of references (keys 1..n, each entry a string or one reference table). */
static int config_plugin_list(lua_State *L, config_ctx *c, int idx, const char *field, int line,
                              config_refs_text *where, cfg_plugin_list *out)
{
    int count = config_sequence_length(L, idx);
    if (count < 0)
        return config_fail(c, line,
                           "field '%s' must be a plugin name, { name, option = value } or a list "
                           "of those",
                           field);
    if (count == 0)
        return config_fail(c, line, "field '%s' is an empty list", field);
    out->items = calloc((size_t)count, sizeof *out->items);
    if (!out->items)
        return config_fail(c, line, "out of memory");
    out->n = count;
    for (int i = 0; i < count; i++) {
        int t = lua_rawgeti(L, idx, i + 1), e = lua_gettop(L);
        if (t == LUA_TTABLE && !config_is_reference(L, e))
            return config_fail(c, line, "field '%s': entry %d is a list; lists do not nest", field,
                               i + 1);
        if (t != LUA_TSTRING && t != LUA_TTABLE)
            return config_fail(c, line,
                               "field '%s': entry %d must be a plugin name or { name, option = "
                               "value } (got %s)",
                               field, i + 1, luaL_typename(L, e));
        if (config_plugin_ref(L, c, e, field, line, where, &out->items[i]))
            return PB_ERR;
        lua_settop(L, e - 1);
    }
    return PB_OK;
}

/* A plugin field: a reference or a list of them; `def` (may be NULL) names the default. */
static int config_get_plugins(lua_State *L, config_ctx *c, const char *field, const char *def,
                              cfg_plugin_list *out, int *line)
{
    int tok, t = config_push_field_at(L, c, field, line, &tok), v = lua_gettop(L);
    config_refs_text where = {config_scan_table_after(&c->scan, tok), -1};
    if (t == LUA_TNIL && !def) {
        lua_pop(L, 1);
        return PB_OK;
    }
    if (t == LUA_TTABLE && !config_is_reference(L, v)) {
        if (config_plugin_list(L, c, v, field, *line, &where, out))
            return PB_ERR;
        lua_settop(L, v - 1);
        return PB_OK;
    }
    if (t == LUA_TNIL)
        lua_pushstring(L, def);
    else if (t != LUA_TSTRING && t != LUA_TTABLE)
        return config_fail(c, *line,
                           "field '%s' must be a plugin name, { name, option = value } or a list "
                           "of those (got %s)",
                           field, luaL_typename(L, v));
    out->items = calloc(1, sizeof *out->items);
    if (!out->items)
        return config_fail(c, *line, "out of memory");
    out->n = 1;
    if (config_plugin_ref(L, c, lua_gettop(L), field, *line, &where, &out->items[0]))
        return PB_ERR;
    lua_settop(L, v - 1);
    return PB_OK;
}

/* ---------------------------------------------------------------- conversion */

/* Every key of the table at idx must be a known field (a profile may not hold profiles). */
static int config_check_fields(lua_State *L, config_ctx *c, int idx, scan_range r, int from,
                               const char *profile)
{
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            return config_fail(c, from,
                               "%s%s%s has an entry with a %s key; fields are written name = value",
                               profile ? "profile '" : "the experiment", profile ? profile : "",
                               profile ? "'" : "", luaL_typename(L, -1));
        const char *k = lua_tostring(L, -1);
        int known = 0;
        for (int i = 0; i < CONFIG_N_FIELDS && !known; i++)
            known = strcmp(k, config_fields[i]) == 0;
        if (known && !(profile && strcmp(k, "profiles") == 0))
            continue;
        int line = config_line_in(c, r, k, from);
        if (known)
            return config_fail(c, line, "profile '%s' may not define profiles", profile);
        const char *close = options_did_you_mean(k, config_fields, CONFIG_N_FIELDS);
        if (close)
            return config_fail(c, line, "unknown field '%s' (did you mean '%s'?)", k, close);
        return config_fail(c, line,
                           "unknown field '%s' (fields: name, seed, repeats, datasets, devices, "
                           "cluster, simulator, placer, embedding, traversal, episodes, sim_calls, "
                           "timeout, plugin_path, results, profiles)",
                           k);
    }
    return PB_OK;
}

/* Finds the returned experiment (stack: 1 = returned value) and the line of its call. */
static int config_find_experiment(lua_State *L, config_ctx *c)
{
    lua_getfield(L, LUA_REGISTRYINDEX, CONFIG_MARKS);
    lua_pushvalue(L, 1);
    int marked = lua_rawget(L, -2) == LUA_TNUMBER;
    c->exp_line = marked ? (int)lua_tointeger(L, -1) : 0;
    lua_settop(L, 1);
    if (!marked)
        return config_fail(c, config_scan_return_line(&c->scan),
                           "the config must return experiment { ... } (it returned %s)",
                           lua_istable(L, 1) ? "a plain table" : luaL_typename(L, 1));
    if (c->exp_line <= 0)
        c->exp_line = 1;
    c->exp_range = config_scan_experiment(&c->scan, c->exp_line);
    return PB_OK;
}

static int config_name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The error for a profile that the config does not define (stack: 2 = profiles table). */
static int config_unknown_profile(lua_State *L, config_ctx *c, int line)
{
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        lua_pop(L, 1);
        n++;
    }
    const char **names = calloc((size_t)(n ? n : 1), sizeof *names);
    if (!names)
        return config_fail(c, line, "unknown profile '%s'", c->profile);
    n = 0;
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        lua_pop(L, 1);
        names[n++] = lua_tostring(L, -1); /* keys were checked to be strings */
    }
    qsort(names, (size_t)n, sizeof *names, config_name_cmp);
    const char *close = options_did_you_mean(c->profile, names, n);
    char list[300] = "";
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
    if (close)
        config_fail(c, line, "unknown profile '%s' (did you mean '%s'?)", c->profile, close);
    else
        config_fail(c, line, "unknown profile '%s' (profiles: %s)", c->profile, list);
    free(names);
    return PB_ERR;
}

/* Checks every profile and leaves the selected one (or nil) at stack index 2. */
static int config_select_profile(lua_State *L, config_ctx *c)
{
    int line, tok, t = config_push_field_at(L, c, "profiles", &line, &tok);
    scan_range all = config_scan_table_after(&c->scan, tok);
    if (t != LUA_TNIL && t != LUA_TTABLE)
        return config_fail(c, line, "field 'profiles' must be a table of name = { fields }");
    for (lua_pushnil(L); t == LUA_TTABLE && lua_next(L, 2); lua_pop(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            return config_fail(c, line, "field 'profiles': profile names must be strings");
        const char *name = lua_tostring(L, -2);
        int k = config_scan_find_key(&c->scan, all, name);
        int at = k >= 0 ? c->scan.tok[k].line : config_key_line(c, name, line);
        if (!lua_istable(L, -1))
            return config_fail(c, at, "profile '%s' must be a table of fields", name);
        if (config_check_fields(L, c, lua_gettop(L), config_scan_table_after(&c->scan, k), at,
                                name))
            return PB_ERR;
    }
    if (!c->profile) {
        lua_settop(L, 1);
        lua_pushnil(L);
        return PB_OK;
    }
    if (t == LUA_TNIL)
        return config_fail(c, c->exp_line, "unknown profile '%s' (the config defines no profiles)",
                           c->profile);
    lua_pushstring(L, c->profile);
    if (lua_rawget(L, 2) == LUA_TNIL) {
        lua_pop(L, 1);
        return config_unknown_profile(L, c, line);
    }
    int k = config_scan_find_key(&c->scan, all, c->profile);
    c->profile_line = k >= 0 ? c->scan.tok[k].line : config_key_line(c, c->profile, line);
    c->profile_range = config_scan_table_after(&c->scan, k);
    lua_replace(L, 2);
    lua_settop(L, 2);
    return PB_OK;
}

/* The file's base name without ".lua": the default experiment name. */
static char *config_default_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 4 && strcmp(base + len - 4, ".lua") == 0)
        len -= 4;
    char *name = malloc(len + 1);
    if (name) {
        memcpy(name, base, len);
        name[len] = '\0';
    }
    return name;
}

/* Name, seed, repeats and budgets. */
static int config_convert_scalars(lua_State *L, config_ctx *c, experiment *x)
{
    long long v = 0;
    char *def = config_default_name(c->path);
    if (!def)
        return config_fail(c, c->exp_line, "out of memory");
    int rc = config_get_string(L, c, "name", def, &x->name, &x->line_name);
    free(def);
    if (rc)
        return PB_ERR;
    if (strchr(x->name, '/'))
        return config_fail(c, x->line_name, "field 'name' may not contain '/'");
    if (config_get_integer(L, c, "seed", 0, LLONG_MAX, 1, &v, &x->line_seed))
        return PB_ERR;
    x->seed = (unsigned long long)v;
    if (config_get_integer(L, c, "repeats", 1, CONFIG_MAX_REPEATS, 1, &v, &x->line_repeats))
        return PB_ERR;
    x->repeats = (int)v;
    if (config_get_integer(L, c, "episodes", 0, INT_MAX, 0, &v, &x->line_episodes))
        return PB_ERR;
    x->episodes = (int)v;
    if (config_get_integer(L, c, "sim_calls", 0, LLONG_MAX, 0, &x->sim_calls, &x->line_sim_calls))
        return PB_ERR;
    return config_get_seconds(L, c, "timeout", &x->timeout_s, &x->line_timeout);
}

/* plugin_path entries are relative to the config's folder. */
static int config_convert_plugin_path(lua_State *L, config_ctx *c, experiment *x)
{
    if (config_get_strings(L, c, "plugin_path", NULL, &x->plugin_path, &x->n_plugin_path,
                           &x->line_plugin_path))
        return PB_ERR;
    for (int i = 0; i < x->n_plugin_path; i++) {
        char *p = x->plugin_path[i];
        if (p[0] == '/' || !c->dir[0])
            continue;
        size_t n = strlen(c->dir) + strlen(p) + 2;
        char *joined = malloc(n);
        if (!joined)
            return config_fail(c, x->line_plugin_path, "out of memory");
        snprintf(joined, n, "%s/%s", c->dir, p);
        free(p);
        x->plugin_path[i] = joined;
    }
    return PB_OK;
}

static int config_convert_results(lua_State *L, config_ctx *c, experiment *x)
{
    size_t n = strlen(x->name) + sizeof "results/.db";
    char *def = malloc(n);
    if (!def)
        return config_fail(c, c->exp_line, "out of memory");
    snprintf(def, n, "results/%s.db", x->name);
    int rc = config_get_string(L, c, "results", def, &x->results, &x->line_results);
    free(def);
    return rc;
}

/* Fields in a fixed order, so the first error reported does not depend on table order. */
static int config_convert_fields(lua_State *L, config_ctx *c, experiment *x)
{
    x->line_experiment = c->exp_line;
    if (config_convert_scalars(L, c, x) ||
        config_get_strings(L, c, "datasets", NULL, &x->datasets, &x->n_datasets,
                           &x->line_datasets) ||
        config_get_ints(L, c, "devices", 1, CONFIG_MAX_DEVICES, &x->devices, &x->n_devices,
                        &x->line_devices) ||
        config_get_strings(L, c, "cluster", "placeto-k80", &x->clusters, &x->n_clusters,
                           &x->line_clusters) ||
        config_get_plugins(L, c, "simulator", "placeto", &x->simulators, &x->line_simulators) ||
        config_get_plugins(L, c, "placer", NULL, &x->placers, &x->line_placers) ||
        config_get_plugins(L, c, "embedding", NULL, &x->embeddings, &x->line_embeddings) ||
        config_get_plugins(L, c, "traversal", NULL, &x->traversals, &x->line_traversals) ||
        config_convert_plugin_path(L, c, x) || config_convert_results(L, c, x))
        return PB_ERR;
    if (x->n_datasets == 0)
        return config_fail(c, c->exp_line,
                           "missing field 'datasets' (a family name, a folder or a .json graph "
                           "file, or a list of those)");
    if (x->placers.n == 0)
        return config_fail(c, c->exp_line, "missing field 'placer' (e.g. placer = \"random\")");
    return PB_OK;
}

/* Protected: converts the returned experiment (stack: 1) into c->x. */
static int config_lua_convert(lua_State *L)
{
    config_ctx *c = config_ctx_of(L);
    lua_settop(L, 1);
    if (config_find_experiment(L, c) ||
        config_check_fields(L, c, 1, c->exp_range, c->exp_line, NULL) ||
        config_select_profile(L, c) || config_convert_fields(L, c, c->x))
        c->failed = 1;
    return 0;
}

/* ---------------------------------------------------------------- one evaluation pass */

/* Evaluates the config in `L` and converts the result into *out. */
static int config_eval_state(lua_State *L, config_ctx *c, experiment **out)
{
    lua_pushcfunction(L, config_lua_msgh);
    lua_pushcfunction(L, config_lua_setup);
    int status = lua_pcall(L, 0, 1, 1);
    if (status != LUA_OK)
        return config_lua_error(L, c, status);
    lua_sethook(L, config_hook, LUA_MASKCOUNT | LUA_MASKLINE, CONFIG_HOOK_COUNT);
    status = lua_pcall(L, 0, 1, 1);
    if (status != LUA_OK)
        return config_lua_error(L, c, status);
    /* From here on no Lua code runs: no finalizer may change the tables being read. */
    lua_gc(L, LUA_GCSTOP);
    if (!(c->x = calloc(1, sizeof *c->x)))
        return pb_errorf(c->err, "%s: out of memory", c->path);
    lua_pushcfunction(L, config_lua_convert);
    lua_insert(L, 2);
    status = lua_pcall(L, 1, 0, 1);
    if (status != LUA_OK && !c->failed)
        config_lua_error(L, c, status);
    if (status != LUA_OK || c->failed) {
        experiment_free(c->x);
        c->x = NULL;
        return PB_ERR;
    }
    *out = c->x;
    c->x = NULL;
    return PB_OK;
}

/* Resets the per-pass state of c and opens a Lua state bound to it (NULL when out of memory). */
static lua_State *config_new_state(config_ctx *c, lua_Integer random_seed)
{
    memset(&c->mem, 0, sizeof c->mem);
    c->mem.limit = CONFIG_MEMORY_LIMIT;
    c->steps = c->line_events = 0;
    c->where_src[0] = '\0';
    c->where_line = c->include_depth = c->exp_line = c->profile_line = c->failed = 0;
    c->exp_range = c->profile_range = config_no_range;
    c->printed_len = 0;
    c->random_seed = random_seed;
    lua_State *L = lua_newstate(config_alloc, &c->mem);
    if (L)
        *(config_ctx **)lua_getextraspace(L) = c;
    return L;
}

/* One pass: a fresh state with math.random seeded from `random_seed`, closed before return. */
static int config_eval(config_ctx *c, lua_Integer random_seed, experiment **out)
{
    lua_State *L = config_new_state(c, random_seed);
    if (!L)
        return pb_errorf(c->err, "%s: out of memory", c->path);
    int rc = config_eval_state(L, c, out);
    lua_close(L);
    return rc;
}

/* ---------------------------------------------------------------- files and the whole load */

static int config_read_file(config_ctx *c)
{
    char *text;
    size_t len;
    pb_error inner;
    if (fileio_read(c->path, CONFIG_MAX_FILE_BYTES, &text, &len, &inner))
        return pb_errorf(c->err, "%s", inner.msg);
    c->text = text;
    c->len = len;
    return PB_OK;
}

static int config_ctx_init(config_ctx *c)
{
    size_t n = strlen(c->path);
    const char *slash = strrchr(c->path, '/');
    size_t dl = slash ? (slash == c->path ? 1 : (size_t)(slash - c->path)) : 0;
    c->chunkname = malloc(n + 2);
    c->dir = malloc(dl + 1);
    if (!c->chunkname || !c->dir)
        return pb_errorf(c->err, "%s: out of memory", c->path);
    snprintf(c->chunkname, n + 2, "@%s", c->path);
    memcpy(c->dir, c->path, dl);
    c->dir[dl] = '\0';
    if (config_read_file(c))
        return PB_ERR;
    if (!realpath(dl ? c->dir : ".", c->root))
        return pb_errorf(c->err, "%s: cannot resolve the config's folder: %s", c->path,
                         strerror(errno));
    if (config_scan_source(c->text, c->len, &c->scan))
        return pb_errorf(c->err, "%s: out of memory", c->path);
    return PB_OK;
}

static void config_ctx_free(config_ctx *c)
{
    for (int i = 0; i < c->n_chunks; i++)
        free(c->chunks[i].path);
    free(c->chunks);
    free(c->printed);
    free(c->scan.tok);
    free(c->text);
    free(c->dir);
    free(c->chunkname);
}

/* Adds v to o under key; a NULL v (out of memory, or a string that is not UTF-8) sets *bad. */
static void config_json_set(json_t *o, const char *key, json_t *v, int *bad)
{
    if (!v || json_object_set_new(o, key, v))
        *bad = 1;
}

static json_t *config_json_strings(char *const *s, int n, int *bad)
{
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++) {
        json_t *v = json_string(s[i]);
        if (!v || json_array_append_new(a, v))
            *bad = 1;
    }
    return a;
}

static json_t *config_json_plugins(const cfg_plugin_list *l, int *bad)
{
    json_t *a = json_array();
    for (int i = 0; a && i < l->n; i++) {
        const cfg_plugin *p = &l->items[i];
        json_t *ref = json_object(), *opts = json_object();
        for (int k = 0; opts && k < p->n_opts; k++)
            config_json_set(opts, p->opts[k].key,
                            config_json_strings(p->opts[k].values, p->opts[k].n_values, bad), bad);
        if (ref) {
            config_json_set(ref, "name", json_string(p->name), bad);
            config_json_set(ref, "options", opts, bad);
        }
        if (!ref || json_array_append_new(a, ref))
            *bad = 1;
    }
    return a;
}

/* x->config_json: the evaluated experiment as canonical JSON (sorted keys, lists as arrays). */
static int config_make_json(experiment *x, pb_error *err)
{
    int bad = 0;
    json_t *o = json_object(), *devices = json_array();
    if (!o)
        return pb_errorf(err, "%s: out of memory", x->file);
    for (int i = 0; devices && i < x->n_devices; i++)
        if (json_array_append_new(devices, json_integer(x->devices[i])))
            bad = 1;
    config_json_set(o, "name", json_string(x->name), &bad);
    config_json_set(o, "profile", x->profile ? json_string(x->profile) : json_null(), &bad);
    config_json_set(o, "seed", json_integer((json_int_t)x->seed), &bad);
    config_json_set(o, "repeats", json_integer(x->repeats), &bad);
    config_json_set(o, "datasets", config_json_strings(x->datasets, x->n_datasets, &bad), &bad);
    config_json_set(o, "devices", devices, &bad);
    config_json_set(o, "cluster", config_json_strings(x->clusters, x->n_clusters, &bad), &bad);
    config_json_set(o, "simulator", config_json_plugins(&x->simulators, &bad), &bad);
    config_json_set(o, "placer", config_json_plugins(&x->placers, &bad), &bad);
    config_json_set(o, "embedding", config_json_plugins(&x->embeddings, &bad), &bad);
    config_json_set(o, "traversal", config_json_plugins(&x->traversals, &bad), &bad);
    config_json_set(o, "episodes", json_integer(x->episodes), &bad);
    config_json_set(o, "sim_calls", json_integer(x->sim_calls), &bad);
    config_json_set(o, "timeout", json_real(x->timeout_s), &bad);
    config_json_set(o, "plugin_path", config_json_strings(x->plugin_path, x->n_plugin_path, &bad),
                    &bad);
    config_json_set(o, "results", json_string(x->results), &bad);
    x->config_json =
        bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (!x->config_json)
        return pb_errorf(err,
                         "%s:%d: cannot write the experiment as JSON (a string that is not "
                         "UTF-8?)",
                         x->file, x->line_experiment);
    return PB_OK;
}

/* The second pass, seeded with the experiment's own seed (see config.h). */
static int config_second_pass(config_ctx *c, experiment **x)
{
    experiment *again = NULL;
    if (config_eval(c, (lua_Integer)(*x)->seed, &again))
        return PB_ERR;
    int drifted = again->seed != (*x)->seed;
    experiment_free(*x);
    *x = again;
    if (drifted)
        return pb_errorf(c->err, "%s:%d: field 'seed' must not depend on math.random", c->path,
                         again->line_seed);
    return PB_OK;
}

int config_load(const char *path, const char *profile, experiment **out, pb_error *err)
{
    *out = NULL;
    config_ctx c;
    memset(&c, 0, sizeof c);
    c.path = path;
    c.profile = profile;
    c.err = err;
    experiment *x = NULL;
    int rc = config_ctx_init(&c);
    if (rc == PB_OK)
        rc = config_eval(&c, 1, &x);
    if (rc == PB_OK && x->seed != 1)
        rc = config_second_pass(&c, &x);
    if (rc == PB_OK && (!(x->file = strdup(path)) || (profile && !(x->profile = strdup(profile)))))
        rc = pb_errorf(err, "%s: out of memory", path);
    if (rc == PB_OK)
        rc = config_make_json(x, err);
    if (c.printed_len)
        fwrite(c.printed, 1, c.printed_len, stderr);
    config_ctx_free(&c);
    if (rc != PB_OK) {
        experiment_free(x);
        return PB_ERR;
    }
    *out = x;
    return PB_OK;
}

static void config_free_strings(char **s, int n)
{
    for (int i = 0; s && i < n; i++)
        free(s[i]);
    free(s);
}

static void config_free_plugins(cfg_plugin_list *l)
{
    for (int i = 0; l->items && i < l->n; i++) {
        cfg_plugin *p = &l->items[i];
        for (int k = 0; p->opts && k < p->n_opts; k++) {
            free(p->opts[k].key);
            config_free_strings(p->opts[k].values, p->opts[k].n_values);
        }
        free(p->opts);
        free(p->name);
    }
    free(l->items);
}

void experiment_free(experiment *x)
{
    if (!x)
        return;
    free(x->file);
    free(x->name);
    free(x->profile);
    config_free_strings(x->datasets, x->n_datasets);
    free(x->devices);
    config_free_strings(x->clusters, x->n_clusters);
    config_free_plugins(&x->simulators);
    config_free_plugins(&x->placers);
    config_free_plugins(&x->embeddings);
    config_free_plugins(&x->traversals);
    config_free_strings(x->plugin_path, x->n_plugin_path);
    free(x->results);
    free(x->config_json);
    free(x);
}

/* ---------------------------------------------------------------- cluster catalogs */

/* What one evaluation of a cluster catalog is asked for, and what it produced. */
typedef struct config_cluster_job {
    const char *preset; /* NULL: list the presets */
    int n_devices;
    unsigned long long seed;
    cfg_cluster *cluster; /* built when preset != NULL (freed by the caller on failure) */
    cfg_preset *presets;  /* listed when preset == NULL */
    int n_presets;
} config_cluster_job;

/* Stack slots of config_lua_cluster: the chunk, the job, then what the chunk returns. */
enum {
    CLUSTER_CHUNK = 1,
    CLUSTER_JOB,
    CLUSTER_MODULE,
    CLUSTER_PRESETS,
    CLUSTER_CATALOG,
    CLUSTER_ENTRY,
    CLUSTER_BUILD,
    CLUSTER_DESC
};

/* Reads a preset's description (stack: CLUSTER_DESC) into a cfg_cluster. */
typedef struct config_desc {
    lua_State *L;
    config_ctx *c;
    const char *preset;
    cfg_cluster *out;
    int types_idx; /* the description's `types` table, 0 when it has none */
} config_desc;

static const char *const config_desc_keys_top[] = {"devices", "machines", "network", "types",
                                                   "placeto"};
static const char *const config_desc_keys_device[] = {"type", "machine"};
static const char *const config_desc_keys_link[] = {"bandwidth", "latency"};
static const char *const config_desc_keys_type[] = {"peak_flops", "mem_bandwidth", "memory_bytes",
                                                    "price_per_hour", "speed_vs_ref"};
static const char *const config_desc_keys_placeto[] = {"delta1", "delta2", "transfer_speed",
                                                       "init_offset"};
#define CONFIG_COUNT(a) ((int)(sizeof a / sizeof a[0]))

/* "SRC: cluster 'NAME': message" (a description the catalog got wrong). */
static int config_desc_fail(config_desc *d, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int config_desc_fail(config_desc *d, const char *fmt, ...)
{
    char msg[sizeof d->c->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    d->c->failed = 1;
    return pb_errorf(d->c->err, "%s: cluster '%s': %s", d->c->path, d->preset, msg);
}

/* Pushes t[key] (raw) and returns its type. */
static int config_desc_get(lua_State *L, int t, const char *key)
{
    lua_pushstring(L, key);
    return lua_rawget(L, t);
}

/* Every key of the table at idx must be one of `allowed`; `what` names the table in errors. */
static int config_desc_check_keys(config_desc *d, int idx, const char *what,
                                  const char *const *allowed, int n)
{
    lua_State *L = d->L;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            return config_desc_fail(d, "%s has a key of type %s (keys: %s, ...)", what,
                                    luaL_typename(L, -1), allowed[0]);
        const char *k = lua_tostring(L, -1);
        int known = 0;
        for (int i = 0; i < n && !known; i++)
            known = strcmp(k, allowed[i]) == 0;
        if (known)
            continue;
        const char *close = options_did_you_mean(k, allowed, n);
        if (close)
            return config_desc_fail(d, "%s has an unknown key '%s' (did you mean '%s'?)", what, k,
                                    close);
        return config_desc_fail(d, "%s has an unknown key '%s'", what, k);
    }
    return PB_OK;
}

/* The value at idx: a finite number >= lo, or > lo when `strict`. */
static int config_desc_number_at(config_desc *d, int idx, const char *what, double lo, int strict,
                                 double *out)
{
    if (lua_type(d->L, idx) != LUA_TNUMBER)
        return config_desc_fail(d, "%s must be a number (got %s)", what, luaL_typename(d->L, idx));
    double v = lua_tonumber(d->L, idx);
    if (!isfinite(v) || v < lo || (strict && v == lo)) {
        char buf[64], bound[64];
        options_format_double(v, buf, sizeof buf);
        options_format_double(lo, bound, sizeof bound);
        return config_desc_fail(d, "%s is %s; it must be a finite number %s %s", what, buf,
                                strict ? ">" : ">=", bound);
    }
    *out = v;
    return PB_OK;
}

/* Field `key` of the table at t (named `what`), as config_desc_number_at checks it. */
static int config_desc_number(config_desc *d, int t, const char *what, const char *key, double lo,
                              int strict, double *out)
{
    char path[128];
    snprintf(path, sizeof path, "%s.%s", what, key);
    config_desc_get(d->L, t, key);
    if (config_desc_number_at(d, lua_gettop(d->L), path, lo, strict, out))
        return PB_ERR;
    lua_pop(d->L, 1);
    return PB_OK;
}

/* Field `key` of the description: a table that is a sequence; its slot, or 0 after an error. */
static int config_desc_sequence(config_desc *d, const char *key, int *n)
{
    lua_State *L = d->L;
    int t = config_desc_get(L, CLUSTER_DESC, key), idx = lua_gettop(L);
    if (t != LUA_TTABLE || (*n = config_sequence_length(L, idx)) < 1) {
        config_desc_fail(d, "'%s' must be a non-empty list (got %s)", key,
                         t == LUA_TTABLE ? "a table with other keys or none"
                                         : luaL_typename(L, idx));
        return 0;
    }
    return idx;
}

/* A link table { bandwidth > 0, latency >= 0 } at idx. */
static int config_desc_link(config_desc *d, int idx, const char *what, double *bw, double *lat)
{
    if (!lua_istable(d->L, idx))
        return config_desc_fail(d, "%s must be a table { bandwidth = ..., latency = ... } (got %s)",
                                what, luaL_typename(d->L, idx));
    return config_desc_check_keys(d, idx, what, config_desc_keys_link,
                                  CONFIG_COUNT(config_desc_keys_link)) ||
           config_desc_number(d, idx, what, "bandwidth", 0, 1, bw) ||
           config_desc_number(d, idx, what, "latency", 0, 0, lat);
}

static int config_desc_machines(config_desc *d)
{
    int m, t = config_desc_sequence(d, "machines", &m);
    if (!t)
        return PB_ERR;
    cfg_cluster *o = d->out;
    o->n_machines = m;
    o->intra_bandwidth = calloc((size_t)m, sizeof(double));
    o->intra_latency = calloc((size_t)m, sizeof(double));
    o->inter_bandwidth = calloc((size_t)m * (size_t)m, sizeof(double));
    o->inter_latency = calloc((size_t)m * (size_t)m, sizeof(double));
    if (!o->intra_bandwidth || !o->intra_latency || !o->inter_bandwidth || !o->inter_latency)
        return config_desc_fail(d, "out of memory");
    for (int k = 0; k < m; k++) {
        char what[48];
        snprintf(what, sizeof what, "machines[%d]", k + 1);
        lua_rawgeti(d->L, t, k + 1);
        if (config_desc_link(d, lua_gettop(d->L), what, &o->intra_bandwidth[k],
                             &o->intra_latency[k]))
            return PB_ERR;
        lua_pop(d->L, 1);
    }
    lua_pop(d->L, 1);
    return PB_OK;
}

/* network.bandwidth or network.latency (at idx): one number, or an m x m matrix whose diagonal
 * is not used (any finite number >= 0). */
static int config_desc_matrix(config_desc *d, int idx, const char *key, double lo, int strict,
                              double *out)
{
    lua_State *L = d->L;
    int m = d->out->n_machines;
    char what[80];
    snprintf(what, sizeof what, "network.%s", key);
    if (lua_type(L, idx) != LUA_TTABLE) {
        double v;
        if (config_desc_number_at(d, idx, what, lo, strict, &v))
            return PB_ERR;
        for (int i = 0; i < m * m; i++)
            out[i] = v;
        return PB_OK;
    }
    if (config_sequence_length(L, idx) != m)
        return config_desc_fail(d, "%s must be a number or a %d x %d matrix (one row per machine)",
                                what, m, m);
    for (int a = 0; a < m; a++) {
        lua_rawgeti(L, idx, a + 1);
        int row = lua_gettop(L);
        if (!lua_istable(L, row) || config_sequence_length(L, row) != m)
            return config_desc_fail(d, "%s[%d] must be a list of %d numbers", what, a + 1, m);
        for (int b = 0; b < m; b++) {
            char cell[112];
            snprintf(cell, sizeof cell, "%s[%d][%d]", what, a + 1, b + 1);
            lua_rawgeti(L, row, b + 1);
            if (config_desc_number_at(d, lua_gettop(L), cell, a == b ? 0 : lo, a == b ? 0 : strict,
                                      &out[a * m + b]))
                return PB_ERR;
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    return PB_OK;
}

/* network = { bandwidth, latency }: needed when there are two or more machines. */
static int config_desc_network(config_desc *d)
{
    lua_State *L = d->L;
    int t = config_desc_get(L, CLUSTER_DESC, "network"), idx = lua_gettop(L);
    if (t == LUA_TNIL && d->out->n_machines == 1) {
        lua_pop(L, 1);
        return PB_OK;
    }
    if (t != LUA_TTABLE)
        return config_desc_fail(d,
                                "'network' must be a table { bandwidth = ..., latency = ... } "
                                "(got %s)",
                                luaL_typename(L, idx));
    if (config_desc_check_keys(d, idx, "network", config_desc_keys_link,
                               CONFIG_COUNT(config_desc_keys_link)))
        return PB_ERR;
    config_desc_get(L, idx, "bandwidth");
    if (config_desc_matrix(d, lua_gettop(L), "bandwidth", 0, 1, d->out->inter_bandwidth))
        return PB_ERR;
    lua_pop(L, 1);
    config_desc_get(L, idx, "latency");
    if (config_desc_matrix(d, lua_gettop(L), "latency", 0, 0, d->out->inter_latency))
        return PB_ERR;
    lua_pop(L, 2);
    return PB_OK;
}

/* The string keys of the tables at slots a and b (b may be 0), sorted, into a new array (the
 * strings stay owned by Lua); NULL when out of memory. */
static const char **config_desc_key_names(lua_State *L, int a, int b, int *n)
{
    int slots[2] = {a, b}, count = 0;
    for (int i = 0; i < 2; i++)
        if (slots[i])
            for (lua_pushnil(L); lua_next(L, slots[i]); lua_pop(L, 1))
                count++;
    const char **names = calloc((size_t)(count ? count : 1), sizeof *names);
    *n = 0;
    if (!names)
        return NULL;
    for (int i = 0; i < 2; i++)
        if (slots[i])
            for (lua_pushnil(L); lua_next(L, slots[i]); lua_pop(L, 1))
                if (lua_type(L, -2) == LUA_TSTRING)
                    names[(*n)++] = lua_tostring(L, -2);
    qsort(names, (size_t)*n, sizeof *names, config_name_cmp);
    return names;
}

/* "did you mean 'x'?" when one of the names (slots a, b) is close to word, else "KIND: a, b". */
static void config_desc_suggest(lua_State *L, int a, int b, const char *word, const char *kind,
                                char *buf, size_t size)
{
    int n;
    const char **names = config_desc_key_names(L, a, b, &n);
    const char *close = names ? options_did_you_mean(word, names, n) : NULL;
    size_t used = 0;
    if (close) {
        snprintf(buf, size, "did you mean '%s'?", close);
    } else {
        used = (size_t)snprintf(buf, size, "%s:", kind);
        for (int i = 0; i < n && used < size; i++)
            used += (size_t)snprintf(buf + used, size - used, "%s %s", i ? "," : "", names[i]);
    }
    free(names);
}

/* The error for a device type that neither the description nor the catalog defines. */
static int config_desc_unknown_type(config_desc *d, const char *what, const char *name)
{
    char hint[320];
    config_desc_suggest(d->L, CLUSTER_CATALOG, d->types_idx, name, "types", hint, sizeof hint);
    return config_desc_fail(d, "%s: unknown device type '%s' (%s)", what, name, hint);
}

/* Reads the device type table at idx (called `name`) into d->out->types[n_types++]. */
static int config_desc_type(config_desc *d, int idx, const char *name)
{
    char what[96];
    snprintf(what, sizeof what, "device type '%s'", name);
    if (!lua_istable(d->L, idx))
        return config_desc_fail(d, "%s must be a table (got %s)", what, luaL_typename(d->L, idx));
    cfg_cluster *o = d->out;
    cfg_device_type *t = &o->types[o->n_types];
    if (config_desc_check_keys(d, idx, what, config_desc_keys_type,
                               CONFIG_COUNT(config_desc_keys_type)) ||
        config_desc_number(d, idx, what, "peak_flops", 0, 1, &t->peak_flops) ||
        config_desc_number(d, idx, what, "mem_bandwidth", 0, 1, &t->mem_bandwidth) ||
        config_desc_number(d, idx, what, "memory_bytes", 0, 1, &t->memory_bytes) ||
        config_desc_number(d, idx, what, "price_per_hour", 0, 0, &t->price_per_hour) ||
        config_desc_number(d, idx, what, "speed_vs_ref", 0, 1, &t->speed_vs_ref))
        return PB_ERR;
    if (!(t->name = strdup(name)))
        return config_desc_fail(d, "out of memory");
    o->n_types++;
    return PB_OK;
}

/* The index in d->out->types of the type called `name`, resolving it on first use (the
 * description's `types` first, then the catalog); -1 after an error. */
static int config_desc_type_index(config_desc *d, const char *what, const char *name)
{
    cfg_cluster *o = d->out;
    for (int i = 0; i < o->n_types; i++)
        if (strcmp(o->types[i].name, name) == 0)
            return i;
    lua_State *L = d->L;
    int t = d->types_idx ? config_desc_get(L, d->types_idx, name) : LUA_TNIL;
    if (t == LUA_TNIL) {
        lua_pop(L, d->types_idx ? 1 : 0);
        t = config_desc_get(L, CLUSTER_CATALOG, name);
    }
    if (t == LUA_TNIL) {
        config_desc_unknown_type(d, what, name);
        return -1;
    }
    if (config_desc_type(d, lua_gettop(L), name))
        return -1;
    lua_pop(L, 1);
    return o->n_types - 1;
}

/* One entry { type = NAME, machine = 1..m } of `devices` (at idx). */
static int config_desc_device(config_desc *d, int idx, int i)
{
    lua_State *L = d->L;
    cfg_cluster *o = d->out;
    char what[48];
    snprintf(what, sizeof what, "devices[%d]", i + 1);
    if (!lua_istable(L, idx))
        return config_desc_fail(d, "%s must be a table { type = ..., machine = ... } (got %s)",
                                what, luaL_typename(L, idx));
    if (config_desc_check_keys(d, idx, what, config_desc_keys_device,
                               CONFIG_COUNT(config_desc_keys_device)))
        return PB_ERR;
    if (config_desc_get(L, idx, "type") != LUA_TSTRING)
        return config_desc_fail(d, "%s.type must be a device type name (got %s)", what,
                                luaL_typename(L, -1));
    int type = config_desc_type_index(d, what, lua_tostring(L, -1));
    if (type < 0)
        return PB_ERR;
    lua_pop(L, 1);
    config_desc_get(L, idx, "machine");
    int isint = 0;
    lua_Integer m = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
    if (!isint || m < 1 || m > o->n_machines)
        return config_desc_fail(d, "%s.machine must be an integer in 1..%d (the machines)", what,
                                o->n_machines);
    lua_pop(L, 1);
    o->device_type[i] = type;
    o->device_machine[i] = (int)m - 1;
    return PB_OK;
}

static int config_desc_devices(config_desc *d)
{
    int n, t = config_desc_sequence(d, "devices", &n);
    if (!t)
        return PB_ERR;
    cfg_cluster *o = d->out;
    if (n != o->n_devices)
        return config_desc_fail(d, "the preset built %d devices for devices = %d", n, o->n_devices);
    o->device_type = calloc((size_t)n, sizeof(int));
    o->device_machine = calloc((size_t)n, sizeof(int));
    o->types = calloc((size_t)n, sizeof *o->types); /* at most one type per device */
    int *used = calloc((size_t)o->n_machines, sizeof(int));
    if (!o->device_type || !o->device_machine || !o->types || !used) {
        free(used);
        return config_desc_fail(d, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        lua_rawgeti(d->L, t, i + 1);
        if (config_desc_device(d, lua_gettop(d->L), i)) {
            free(used);
            return PB_ERR;
        }
        used[o->device_machine[i]] = 1;
        lua_pop(d->L, 1);
    }
    for (int k = 0; k < o->n_machines; k++)
        if (!used[k]) {
            free(used);
            return config_desc_fail(d, "machines[%d] holds no device", k + 1);
        }
    free(used);
    lua_pop(d->L, 1);
    return PB_OK;
}

static int config_desc_placeto(config_desc *d)
{
    lua_State *L = d->L;
    cfg_cluster *o = d->out;
    int t = config_desc_get(L, CLUSTER_DESC, "placeto"), idx = lua_gettop(L);
    if (t != LUA_TTABLE)
        return config_desc_fail(d,
                                "'placeto' must be a table { delta1, delta2, transfer_speed, "
                                "init_offset } (got %s)",
                                luaL_typename(L, idx));
    if (config_desc_check_keys(d, idx, "placeto", config_desc_keys_placeto,
                               CONFIG_COUNT(config_desc_keys_placeto)) ||
        config_desc_number(d, idx, "placeto", "delta1", 0, 0, &o->delta1_us) ||
        config_desc_number(d, idx, "placeto", "delta2", 0, 0, &o->delta2_us) ||
        config_desc_number(d, idx, "placeto", "transfer_speed", 0, 1, &o->transfer_speed) ||
        config_desc_number(d, idx, "placeto", "init_offset", 0, 0, &o->init_offset_us))
        return PB_ERR;
    lua_pop(L, 1);
    return PB_OK;
}

/* Converts the description at CLUSTER_DESC into job->cluster. */
static int config_cluster_convert(lua_State *L, config_ctx *c, config_cluster_job *job)
{
    config_desc d = {L, c, job->preset, NULL, 0};
    if (!(job->cluster = d.out = calloc(1, sizeof *d.out)) || !(d.out->name = strdup(job->preset)))
        return config_desc_fail(&d, "out of memory");
    d.out->n_devices = job->n_devices;
    if (!lua_istable(L, CLUSTER_DESC))
        return config_desc_fail(&d, "build must return a table or nil and a message (got %s)",
                                luaL_typename(L, CLUSTER_DESC));
    if (config_desc_check_keys(&d, CLUSTER_DESC, "the description", config_desc_keys_top,
                               CONFIG_COUNT(config_desc_keys_top)))
        return PB_ERR;
    int t = config_desc_get(L, CLUSTER_DESC, "types");
    if (t != LUA_TNIL && t != LUA_TTABLE)
        return config_desc_fail(&d, "'types' must be a table of NAME = { ... } (got %s)",
                                luaL_typename(L, -1));
    d.types_idx = t == LUA_TTABLE ? lua_gettop(L) : 0;
    if (config_desc_machines(&d) || config_desc_network(&d) || config_desc_devices(&d) ||
        config_desc_placeto(&d))
        return PB_ERR;
    return PB_OK;
}

/* The error for a preset the catalog does not define. */
static int config_cluster_unknown(lua_State *L, config_ctx *c, const char *preset)
{
    char hint[320];
    config_desc_suggest(L, CLUSTER_PRESETS, 0, preset, "presets", hint, sizeof hint);
    c->failed = 1;
    return pb_errorf(c->err, "unknown cluster preset '%s' (%s)", preset, hint);
}

static int config_preset_cmp(const void *a, const void *b)
{
    return strcmp(((const cfg_preset *)a)->name, ((const cfg_preset *)b)->name);
}

/* Lists the presets (stack: CLUSTER_PRESETS) into job->presets, sorted by name. */
static int config_cluster_list(lua_State *L, config_ctx *c, config_cluster_job *job)
{
    int n = 0;
    for (lua_pushnil(L); lua_next(L, CLUSTER_PRESETS); lua_pop(L, 1))
        n++;
    if (!(job->presets = calloc((size_t)(n ? n : 1), sizeof *job->presets))) {
        c->failed = 1;
        return pb_errorf(c->err, "%s: out of memory", c->path);
    }
    for (lua_pushnil(L); lua_next(L, CLUSTER_PRESETS); lua_pop(L, 1)) {
        const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        int about = lua_istable(L, -1) ? config_desc_get(L, lua_gettop(L), "about") : LUA_TNIL;
        if (!name || about != LUA_TSTRING) {
            c->failed = 1;
            return pb_errorf(c->err,
                             "%s: every preset must be NAME = { about = \"...\", build = "
                             "function(n, seed) ... end }",
                             c->path);
        }
        cfg_preset *p = &job->presets[job->n_presets++];
        p->name = strdup(name);
        p->about = strdup(lua_tostring(L, -1));
        lua_pop(L, 1);
        if (!p->name || !p->about) {
            c->failed = 1;
            return pb_errorf(c->err, "%s: out of memory", c->path);
        }
    }
    qsort(job->presets, (size_t)job->n_presets, sizeof *job->presets, config_preset_cmp);
    return PB_OK;
}

/* Calls the preset's build(n, seed) with math.random seeded from the job's seed; leaves the
 * description at CLUSTER_DESC, or reports the preset's refusal. */
static int config_cluster_build(lua_State *L, config_ctx *c, config_cluster_job *job)
{
    lua_pushstring(L, job->preset);
    int t = lua_rawget(L, CLUSTER_PRESETS);
    if (t == LUA_TNIL)
        return config_cluster_unknown(L, c, job->preset);
    if (t != LUA_TTABLE || config_desc_get(L, CLUSTER_ENTRY, "build") != LUA_TFUNCTION) {
        c->failed = 1;
        return pb_errorf(c->err,
                         "%s: preset '%s' must be { about = \"...\", build = function(n, "
                         "seed) ... end }",
                         c->path, job->preset);
    }
    lua_getglobal(L, LUA_MATHLIBNAME);
    lua_getfield(L, -1, "randomseed");
    lua_pushinteger(L, (lua_Integer)job->seed);
    lua_call(L, 1, 0);
    lua_pop(L, 1);
    lua_pushvalue(L, CLUSTER_BUILD);
    lua_pushinteger(L, job->n_devices);
    lua_pushinteger(L, (lua_Integer)job->seed);
    lua_call(L, 2, 2);
    if (lua_isnil(L, CLUSTER_DESC)) {
        c->failed = 1;
        return pb_errorf(c->err, "cluster '%s': %s", job->preset,
                         lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                        : "the preset refused the device count");
    }
    lua_settop(L, CLUSTER_DESC);
    return PB_OK;
}

/* Protected (stack: chunk, job): evaluates the catalog and does the job. */
static int config_lua_cluster(lua_State *L)
{
    config_ctx *c = config_ctx_of(L);
    config_cluster_job *job = lua_touserdata(L, CLUSTER_JOB);
    lua_pushnil(L); /* a catalog is self-contained: no include, no experiment */
    lua_setglobal(L, "include");
    lua_pushnil(L);
    lua_setglobal(L, "experiment");
    lua_pushvalue(L, CLUSTER_CHUNK);
    lua_call(L, 0, 1);
    if (!lua_istable(L, CLUSTER_MODULE) ||
        config_desc_get(L, CLUSTER_MODULE, "presets") != LUA_TTABLE ||
        config_desc_get(L, CLUSTER_MODULE, "device_types") != LUA_TTABLE) {
        c->failed = 1;
        return pb_errorf(c->err,
                         "%s: the catalog must return { device_types = { ... }, presets "
                         "= { ... } }",
                         c->path);
    }
    if (!job->preset)
        return config_cluster_list(L, c, job);
    if (config_cluster_build(L, c, job))
        return 0;
    /* From here on no Lua code runs: no finalizer may change the tables being read. */
    lua_gc(L, LUA_GCSTOP);
    config_cluster_convert(L, c, job);
    return 0;
}

/* One sandboxed evaluation of `src` doing `job`; the Lua state is closed before return. */
static int config_cluster_run(const cfg_text *src, config_cluster_job *job, pb_error *err)
{
    config_ctx c;
    memset(&c, 0, sizeof c);
    c.path = src->name;
    c.err = err;
    size_t n = strlen(src->name);
    c.chunkname = malloc(n + 2);
    c.dir = calloc(1, 1);
    c.text = malloc(src->len + 1);
    lua_State *L = NULL;
    if (c.chunkname && c.dir && c.text)
        L = config_new_state(&c, (lua_Integer)job->seed);
    if (!L) {
        config_ctx_free(&c);
        return pb_errorf(err, "%s: out of memory", src->name);
    }
    snprintf(c.chunkname, n + 2, "@%s", src->name);
    memcpy(c.text, src->text, src->len);
    c.text[src->len] = '\0';
    c.len = src->len;
    lua_pushcfunction(L, config_lua_msgh);
    lua_pushcfunction(L, config_lua_setup);
    int status = lua_pcall(L, 0, 1, 1);
    if (status == LUA_OK) {
        lua_sethook(L, config_hook, LUA_MASKCOUNT | LUA_MASKLINE, CONFIG_HOOK_COUNT);
        lua_pushcfunction(L, config_lua_cluster);
        lua_insert(L, 2);
        lua_pushlightuserdata(L, job);
        status = lua_pcall(L, 2, 0, 1);
    }
    if (status != LUA_OK && !c.failed)
        config_lua_error(L, &c, status);
    int rc = status != LUA_OK || c.failed ? PB_ERR : PB_OK;
    lua_close(L);
    if (c.printed_len)
        fwrite(c.printed, 1, c.printed_len, stderr);
    config_ctx_free(&c);
    return rc;
}

int config_cluster(const cfg_text *src, const char *preset, int n_devices, unsigned long long seed,
                   cfg_cluster **out, pb_error *err)
{
    *out = NULL;
    if (n_devices < 1)
        return pb_errorf(err, "cluster '%s': %d devices (must be at least 1)", preset, n_devices);
    config_cluster_job job = {preset, n_devices, seed, NULL, NULL, 0};
    if (config_cluster_run(src, &job, err)) {
        config_cluster_free(job.cluster);
        return PB_ERR;
    }
    *out = job.cluster;
    return PB_OK;
}

void config_cluster_free(cfg_cluster *c)
{
    if (!c)
        return;
    for (int i = 0; c->types && i < c->n_types; i++)
        free(c->types[i].name);
    free(c->types);
    free(c->name);
    free(c->device_type);
    free(c->device_machine);
    free(c->intra_bandwidth);
    free(c->intra_latency);
    free(c->inter_bandwidth);
    free(c->inter_latency);
    free(c);
}

int config_cluster_presets(const cfg_text *src, cfg_preset **out, int *n, pb_error *err)
{
    *out = NULL;
    *n = 0;
    config_cluster_job job = {NULL, 0, 1, NULL, NULL, 0};
    if (config_cluster_run(src, &job, err)) {
        config_cluster_presets_free(job.presets, job.n_presets);
        return PB_ERR;
    }
    *out = job.presets;
    *n = job.n_presets;
    return PB_OK;
}

void config_cluster_presets_free(cfg_preset *p, int n)
{
    for (int i = 0; p && i < n; i++) {
        free(p[i].name);
        free(p[i].about);
    }
    free(p);
}
