/* config.c — loading an experiment: its file and context, errors located at its lines, the two
 * evaluation passes, the canonical JSON, and experiment_free. */
/* realpath() is an X/Open function; the build only asks for POSIX 2008. */
#define _XOPEN_SOURCE 700

#include "config_internal.h"

#include "core/fileio.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MAX_FILE_BYTES (16L << 20)

/* ---------------------------------------------------------------- errors at the config's lines */

/* Names and keys quoted in a message may hold line breaks; an error is one line. */
void config_one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
}

/* Writes "path:line: message" into the error and marks the conversion as failed. */
int config_fail(config_ctx *c, int line, const char *fmt, ...)
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
int config_key_line(const config_ctx *c, const char *key, int from)
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
int config_line_in(const config_ctx *c, scan_range r, const char *key, int from)
{
    int k = config_scan_find_key(&c->scan, r, key);
    return k >= 0 ? c->scan.tok[k].line : config_key_line(c, key, from);
}

int config_name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
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
    lua_sethook(L, config_lua_hook, LUA_MASKCOUNT | LUA_MASKLINE, CONFIG_HOOK_COUNT);
    status = lua_pcall(L, 0, 1, 1);
    if (status != LUA_OK)
        return config_lua_error(L, c, status);
    /* From here on no Lua code runs: no finalizer may change the tables being read. */
    lua_gc(L, LUA_GCSTOP);
    if (!(c->x = calloc(1, sizeof *c->x)))
        return pb_errorf(c->err, "%s: out of memory", c->path);
    lua_pushcfunction(L, config_convert_experiment);
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

/* One pass: a fresh state with math.random seeded from `random_seed`, closed before return. */
static int config_eval(config_ctx *c, lua_Integer random_seed, experiment **out)
{
    lua_State *L = config_lua_open(c, random_seed);
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

void config_ctx_free(config_ctx *c)
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
    if (x->memory_limit_gb >= 0) /* absent: the runner's default, not part of the experiment */
        config_json_set(o, "memory_limit", json_real(x->memory_limit_gb), &bad);
    if (x->objective_cost) /* the default is not written: older results files stay valid */
        config_json_set(o, "objective", json_string("cost"), &bad);
    if (x->cost_model_roofline) /* likewise */
        config_json_set(o, "cost_model", json_string("roofline"), &bad);
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

/* A copy of s (NULL when out of memory). */
static char *config_copy(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    return d ? strcpy(d, s) : NULL;
}

int experiment_use_placer(experiment *x, const char *placer, const char *folder, const char *name,
                          const char *results, pb_error *err)
{
    cfg_plugin *item = calloc(1, sizeof *item);
    char **path = malloc((size_t)(x->n_plugin_path + 1) * sizeof *path);
    char *new_name = config_copy(name), *new_results = config_copy(results);
    char *plugin = config_copy(placer), *dir = config_copy(folder);
    if (!item || !path || !new_name || !new_results || !plugin || !dir) {
        free(item);
        free(path);
        free(new_name);
        free(new_results);
        free(plugin);
        free(dir);
        return pb_errorf(err, "out of memory");
    }
    item->name = plugin;
    item->line = x->line_placers;
    config_free_plugins(&x->placers);
    x->placers.items = item;
    x->placers.n = 1;
    path[0] = dir;
    for (int i = 0; i < x->n_plugin_path; i++)
        path[i + 1] = x->plugin_path[i];
    free(x->plugin_path);
    x->plugin_path = path;
    x->n_plugin_path++;
    free(x->name);
    x->name = new_name;
    free(x->results);
    x->results = new_results;
    return PB_OK;
}
