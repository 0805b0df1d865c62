/* config_convert.c — the evaluated experiment into struct experiment: the returned table, its
 * fields in a fixed order, profiles and defaults. */
#include "config_internal.h"

#include "plugin/options.h"

#include <lauxlib.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MAX_DEVICES 65536
#define CONFIG_MAX_REPEATS 1000000

static const char *const config_fields[] = {
    "name",    "seed",      "repeats",      "datasets",  "devices",   "cluster", "simulator",
    "placer",  "embedding", "traversal",    "episodes",  "sim_calls", "timeout", "plugin_path",
    "results", "profiles",  "memory_limit", "objective", "cost_model"};
#define CONFIG_N_FIELDS ((int)(sizeof config_fields / sizeof config_fields[0]))

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
                           "timeout, memory_limit, objective, cost_model, plugin_path, results, "
                           "profiles)",
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
    int line, tok, t = config_get_field_at(L, c, "profiles", &line, &tok);
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
    if (config_get_seconds(L, c, "timeout", &x->timeout_s, &x->line_timeout))
        return PB_ERR;
    if (config_get_memory_limit(L, c, &x->memory_limit_gb, &x->line_memory_limit))
        return PB_ERR;
    char *objective = NULL;
    if (config_get_string(L, c, "objective", "step_time", &objective, &x->line_objective))
        return PB_ERR;
    int known = strcmp(objective, "step_time") == 0 || strcmp(objective, "cost") == 0;
    x->objective_cost = strcmp(objective, "cost") == 0;
    free(objective);
    if (!known)
        return config_fail(c, x->line_objective,
                           "field 'objective' must be \"step_time\" or \"cost\"");
    char *cost_model = NULL;
    if (config_get_string(L, c, "cost_model", "calibrated", &cost_model, &x->line_cost_model))
        return PB_ERR;
    known = strcmp(cost_model, "calibrated") == 0 || strcmp(cost_model, "roofline") == 0;
    x->cost_model_roofline = strcmp(cost_model, "roofline") == 0;
    free(cost_model);
    if (!known)
        return config_fail(c, x->line_cost_model,
                           "field 'cost_model' must be \"calibrated\" or \"roofline\"");
    return PB_OK;
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

/* Tables nest this deep at most in a config (profiles > field > plugin list > reference > option
 * list); deeper (or cyclic) tables are not looked into. */
#define CONFIG_MAX_DEPTH 8

/* Non-zero when the value at idx is a string holding a NUL byte, which C would cut short. */
static int config_convert_has_nul(lua_State *L, int idx)
{
    size_t len;
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
    return s && strlen(s) != len;
}

/* Whether the table at idx holds, at any depth, a key or value string with a NUL byte. */
static int config_convert_table_has_nul(lua_State *L, int idx, int depth)
{
    if (depth > CONFIG_MAX_DEPTH)
        return 0;
    int found = 0;
    lua_pushnil(L);
    while (!found && lua_next(L, idx)) {
        found = config_convert_has_nul(L, -2) || config_convert_has_nul(L, -1) ||
                (lua_type(L, -1) == LUA_TTABLE &&
                 config_convert_table_has_nul(L, lua_gettop(L), depth + 1));
        lua_pop(L, 1);
    }
    if (found)
        lua_pop(L, 1); /* the key lua_next left */
    return found;
}

/* No string of the experiment (stack: idx) may hold a NUL byte: the error names the field. */
static int config_convert_check_nul(lua_State *L, config_ctx *c, int idx)
{
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        if (config_convert_has_nul(L, -1) ||
            (lua_type(L, -1) == LUA_TTABLE && config_convert_table_has_nul(L, lua_gettop(L), 1)))
            return config_fail(c, config_line_in(c, c->exp_range, k, c->exp_line),
                               "field '%s' holds a string with a NUL byte (\\0), which would "
                               "cut it short",
                               k);
        lua_pop(L, 1);
    }
    return PB_OK;
}

/* Protected: converts the returned experiment (stack: 1) into c->x. */
int config_convert_experiment(lua_State *L)
{
    config_ctx *c = config_lua_ctx(L);
    lua_settop(L, 1);
    if (config_find_experiment(L, c) ||
        config_check_fields(L, c, 1, c->exp_range, c->exp_line, NULL) ||
        config_convert_check_nul(L, c, 1) || config_select_profile(L, c) ||
        config_convert_fields(L, c, c->x))
        c->failed = 1;
    return 0;
}
