/* config_cluster.c — cluster catalogs (configs/clusters.lua): evaluated in the config sandbox, a
 * preset's description read into cfg_cluster, and the list of presets. */
#include "config_internal.h"

#include "plugin/options.h"

#include <lauxlib.h>
#include <lualib.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one evaluation of a cluster catalog is asked for, and what it produced. */
typedef struct config_cluster_job {
    const char *preset; /* NULL: list the presets */
    int n_devices;
    unsigned long long seed;
    cfg_cluster *cluster; /* built when preset != NULL (freed by the caller on failure) */
    cfg_preset *presets;  /* listed when preset == NULL */
    int n_presets;
} config_cluster_job;

/* Stack slots of config_cluster_evaluate: the chunk, the job, then what the chunk returns. */
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
    if (t != LUA_TTABLE || (*n = config_get_sequence_length(L, idx)) < 1) {
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
    if (config_get_sequence_length(L, idx) != m)
        return config_desc_fail(d, "%s must be a number or a %d x %d matrix (one row per machine)",
                                what, m, m);
    for (int a = 0; a < m; a++) {
        lua_rawgeti(L, idx, a + 1);
        int row = lua_gettop(L);
        if (!lua_istable(L, row) || config_get_sequence_length(L, row) != m)
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
static int config_cluster_evaluate(lua_State *L)
{
    config_ctx *c = config_lua_ctx(L);
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
        L = config_lua_open(&c, (lua_Integer)job->seed);
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
        lua_sethook(L, config_lua_hook, LUA_MASKCOUNT | LUA_MASKLINE, CONFIG_HOOK_COUNT);
        lua_pushcfunction(L, config_cluster_evaluate);
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
