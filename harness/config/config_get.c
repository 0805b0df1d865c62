/* config_get.c — reading the evaluated experiment's fields (strings, integers, seconds, lists)
 * and plugin references into C values, each checked and located at its line. */
#include "config_internal.h"

#include "plugin/options.h"

#include <lauxlib.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Number of entries when the table at idx is a sequence with keys exactly 1..n, else -1. */
int config_get_sequence_length(lua_State *L, int idx)
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
int config_get_field_at(lua_State *L, config_ctx *c, const char *name, int *line, int *tok)
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

static int config_get_field(lua_State *L, config_ctx *c, const char *name, int *line)
{
    return config_get_field_at(L, c, name, line, NULL);
}

/* A string field; `def` (may be NULL) when absent. */
int config_get_string(lua_State *L, config_ctx *c, const char *name, const char *def, char **out,
                      int *line)
{
    int t = config_get_field(L, c, name, line);
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
int config_get_integer(lua_State *L, config_ctx *c, const char *name, long long lo, long long hi,
                       long long def, long long *out, int *line)
{
    int t = config_get_field(L, c, name, line);
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
int config_get_seconds(lua_State *L, config_ctx *c, const char *name, double *out, int *line)
{
    int t = config_get_field(L, c, name, line);
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

/* memory_limit: GB per worker, 0 (none) or in (0, CONFIG_MAX_MEMORY_GB]; -1 when absent. */
int config_get_memory_limit(lua_State *L, config_ctx *c, double *out, int *line)
{
    int t = config_get_field(L, c, "memory_limit", line);
    if (t == LUA_TNIL) {
        *out = -1;
    } else if (t != LUA_TNUMBER) {
        return config_fail(c, *line, "field 'memory_limit' must be a number of GB (got %s)",
                           luaL_typename(L, -1));
    } else {
        *out = lua_tonumber(L, -1);
        if (!(*out >= 0 && *out <= CONFIG_MAX_MEMORY_GB))
            return config_fail(c, *line,
                               "field 'memory_limit' must be a number of GB from 0 (no limit) to "
                               "%g",
                               CONFIG_MAX_MEMORY_GB);
    }
    lua_pop(L, 1);
    return PB_OK;
}

/* A string or a list of strings; `def` (may be NULL) when absent. */
int config_get_strings(lua_State *L, config_ctx *c, const char *name, const char *def, char ***out,
                       int *n, int *line)
{
    int t = config_get_field(L, c, name, line), v = lua_gettop(L);
    int count = t == LUA_TTABLE ? config_get_sequence_length(L, v) : 1;
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
int config_get_ints(lua_State *L, config_ctx *c, const char *name, long long lo, long long hi,
                    int **out, int *n, int *line)
{
    int t = config_get_field(L, c, name, line), v = lua_gettop(L);
    int count = t == LUA_TTABLE ? config_get_sequence_length(L, v) : 1;
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
        long long value = 0; /* set by config_integer_at on success */
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
    int count = list ? config_get_sequence_length(L, idx) : 1;
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
        return config_scan_no_range;
    }
    where->cursor = k;
    p->line = c->scan.tok[k].line;
    if (config_scan_is(&c->scan.tok[k - 1], SCAN_OTHER, "{"))
        return config_scan_table(&c->scan, k - 1);
    return config_scan_no_range;
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
    int count = config_get_sequence_length(L, idx);
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
int config_get_plugins(lua_State *L, config_ctx *c, const char *field, const char *def,
                       cfg_plugin_list *out, int *line)
{
    int tok, t = config_get_field_at(L, c, field, line, &tok), v = lua_gettop(L);
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
