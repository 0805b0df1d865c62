/* sweep.c — expanding an experiment into its runs in a fixed order, each with an id hashed from
 * its settings and a seed derived from them. */
#include "sweep.h"

#include "core/array.h"
#include "core/fileio.h"
#include "data/gen/gen.h"

#include "core/strmap.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SWEEP_MAX_RUNS 1000000

/*
 * Order of expansion, outermost first: dataset entries (as listed), the graph files of each
 * entry (sorted by name), devices, clusters, simulators, placers, embeddings, traversals (each as
 * listed), then the combinations of list-valued options (an odometer over the options of the
 * simulator, placer, embedding and traversal in that order, each plugin's options sorted by key,
 * the last option turning fastest), then repeats 0 .. repeats-1 innermost.
 *
 * A run's id and seed depend only on its settings, never on its position: settings_json is the
 * canonical JSON (sorted keys) of graph, graph_file, devices, cluster, simulator, placer,
 * embedding, traversal (each {"name", "options"} or null), episodes, sim_calls, timeout, seed
 * (the experiment's) and repeat; run_id is the 64-bit FNV-1a hash of that text in 16 hex digits;
 * the run's seed is pb_seed_derive(experiment seed, <the same JSON without repeat> "#" repeat).
 */

typedef struct sweep_graph {
    const char *dataset; /* the entry as written in the config (borrowed) */
    char *path;
} sweep_graph;

typedef struct sweep_graphs {
    sweep_graph *items;
    int n, cap;
} sweep_graphs;

/* The state of one expansion. */
typedef struct sweep_state {
    const experiment *x;
    run_spec *runs;
    int n, cap;
    strmap ids;
    /* The current combination. */
    const sweep_graph *graph;
    int devices;
    const char *cluster;
    const sweep_uses *uses;
    const cfg_plugin *plugin[4]; /* simulator, placer, embedding, traversal; NULL for none */
    const cfg_option **axis;     /* every option of the four plugins, in odometer order */
    int *choice;                 /* value index of each axis */
    int n_axes;
} sweep_state;

static void sweep_graphs_free(sweep_graphs *g)
{
    for (int i = 0; i < g->n; i++)
        free(g->items[i].path);
    free(g->items);
}

static int sweep_add_graph(sweep_graphs *g, const char *dataset, const char *dir, const char *file)
{
    if (array_grow(&g->items, &g->cap, g->n + 1, sizeof *g->items))
        return PB_ERR;
    size_t dl = dir ? strlen(dir) : 0, n = dl + strlen(file) + 2;
    char *path = malloc(n);
    if (!path)
        return PB_ERR;
    if (dir)
        snprintf(path, n, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", file);
    else
        snprintf(path, n, "%s", file);
    g->items[g->n++] = (sweep_graph){dataset, path};
    return PB_OK;
}

enum { SWEEP_FILE, SWEEP_DIR };

/* Whether path is a regular file (SWEEP_FILE) or a folder (SWEEP_DIR), following links. */
static int sweep_is(const char *path, int what)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    return what == SWEEP_DIR ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

/* Adds the graph files of folder `dir`; an empty folder is an error. */
static int sweep_add_folder(const experiment *x, sweep_graphs *g, const char *entry,
                            const char *dir, pb_error *err)
{
    char **names;
    int n;
    pb_error inner;
    int rc = fileio_list(dir, ".json", &names, &n, &inner);
    for (int i = 0; rc == PB_OK && i < n; i++)
        rc = sweep_add_graph(g, entry, dir, names[i]);
    fileio_list_free(names, n);
    if (rc != PB_OK)
        return pb_errorf(err, "%s:%d: dataset '%s': cannot list folder '%s'", x->file,
                         x->line_datasets, entry, dir);
    if (n == 0)
        return pb_errorf(err, "%s:%d: dataset '%s': folder '%s' has no .json graph files", x->file,
                         x->line_datasets, entry, dir);
    return PB_OK;
}

/* A dataset entry: a graph file, a folder of them, or a family name found as datasets/<name>/
 * under the working directory. */
static int sweep_resolve_dataset(const experiment *x, const char *entry, sweep_graphs *g,
                                 pb_error *err)
{
    if (sweep_is(entry, SWEEP_FILE)) {
        if (sweep_add_graph(g, entry, NULL, entry))
            return pb_errorf(err, "out of memory");
        return PB_OK;
    }
    if (sweep_is(entry, SWEEP_DIR))
        return sweep_add_folder(x, g, entry, entry, err);
    struct stat st;
    if (stat(entry, &st) == 0)
        return pb_errorf(err, "%s:%d: dataset '%s' is not a regular file or folder (%s)", x->file,
                         x->line_datasets, entry, fileio_kind(st.st_mode));
    char family[4096];
    snprintf(family, sizeof family, "datasets/%s", entry);
    if (!strchr(entry, '/') && sweep_is(family, SWEEP_DIR))
        return sweep_add_folder(x, g, entry, family, err);
    if (!strchr(entry, '/') && gen_family_find(entry))
        return pb_errorf(err,
                         "%s:%d: dataset '%s' is not generated yet: run 'placebench dataset gen "
                         "%s --out datasets/%s' in the working directory",
                         x->file, x->line_datasets, entry, entry, entry);
    return pb_errorf(err,
                     "%s:%d: dataset '%s' not found (no such file or folder, nor a folder "
                     "datasets/%s/ in the working directory)",
                     x->file, x->line_datasets, entry, entry);
}

/* ---------------------------------------------------------------- settings and runs */

/* {"name": ..., "options": {key: value}} of one plugin of the current run, or null. */
static json_t *sweep_plugin_json(const run_plugin *p)
{
    if (!p->name)
        return json_null();
    json_t *o = json_object(), *opts = json_object();
    int bad = !o || !opts;
    for (int i = 0; !bad && i < p->n; i++)
        bad = json_object_set_new(opts, p->keys[i], json_string(p->values[i])) != 0;
    if (!bad)
        bad = json_object_set_new(o, "name", json_string(p->name)) |
              json_object_set_new(o, "options", opts); /* `|`: both calls take their value */
    else
        json_decref(opts);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The settings of run s, without its repeat. */
static json_t *sweep_settings(const experiment *x, const run_spec *s)
{
    const char *slash = strrchr(s->graph_path, '/');
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = 0;
    bad |= json_object_set_new(o, "graph", json_string(s->graph_path));
    bad |= json_object_set_new(o, "graph_file", json_string(slash ? slash + 1 : s->graph_path));
    bad |= json_object_set_new(o, "devices", json_integer(s->n_devices));
    bad |= json_object_set_new(o, "cluster", json_string(s->cluster));
    bad |= json_object_set_new(o, "simulator", sweep_plugin_json(&s->simulator));
    bad |= json_object_set_new(o, "placer", sweep_plugin_json(&s->placer));
    bad |= json_object_set_new(o, "embedding", sweep_plugin_json(&s->embedding));
    bad |= json_object_set_new(o, "traversal", sweep_plugin_json(&s->traversal));
    bad |= json_object_set_new(o, "episodes", json_integer(s->episodes));
    bad |= json_object_set_new(o, "sim_calls", json_integer(s->sim_calls));
    bad |= json_object_set_new(o, "timeout", json_real(s->timeout_s));
    bad |= json_object_set_new(o, "seed", json_integer((json_int_t)x->seed));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static char *sweep_dump(const json_t *o)
{
    return json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
}

/* Fills settings_json, run_id and seed of s from its settings. */
static int sweep_identify(const experiment *x, run_spec *s)
{
    json_t *o = sweep_settings(x, s);
    char *base = o ? sweep_dump(o) : NULL;
    int bad = !base || json_object_set_new(o, "repeat", json_integer(s->repeat));
    s->settings_json = bad ? NULL : sweep_dump(o);
    json_decref(o);
    if (!s->settings_json) {
        free(base);
        return PB_ERR;
    }
    size_t n = strlen(base) + 24;
    char *label = malloc(n);
    if (!label) {
        free(base);
        return PB_ERR;
    }
    snprintf(label, n, "%s#%d", base, s->repeat);
    s->seed = pb_seed_derive(x->seed, label);
    free(label);
    free(base);
    unsigned long long h =
        strmap_fnv1a(STRMAP_FNV_BASIS, s->settings_json, strlen(s->settings_json));
    s->run_id = malloc(17);
    if (!s->run_id)
        return PB_ERR;
    snprintf(s->run_id, 17, "%016llx", h);
    return PB_OK;
}

static void sweep_plugin_free(run_plugin *p)
{
    free(p->keys);
    free(p->values);
}

static void sweep_run_free(run_spec *s)
{
    free(s->run_id);
    free(s->settings_json);
    free(s->graph_path);
    sweep_plugin_free(&s->simulator);
    sweep_plugin_free(&s->placer);
    sweep_plugin_free(&s->embedding);
    sweep_plugin_free(&s->traversal);
}

/* Plugin k of the current combination with the option values the odometer points at; `first`
 * is the index of its first option among the axes. */
static int sweep_fill_plugin(const sweep_state *st, int k, int first, run_plugin *p)
{
    const cfg_plugin *ref = st->plugin[k];
    memset(p, 0, sizeof *p);
    if (!ref)
        return PB_OK;
    p->name = ref->name;
    p->ref = ref;
    p->n = ref->n_opts;
    p->keys = malloc((size_t)(p->n ? p->n : 1) * sizeof *p->keys);
    p->values = malloc((size_t)(p->n ? p->n : 1) * sizeof *p->values);
    if (!p->keys || !p->values)
        return PB_ERR;
    for (int i = 0; i < p->n; i++) {
        p->keys[i] = ref->opts[i].key;
        p->values[i] = ref->opts[i].values[st->choice[first + i]];
    }
    return PB_OK;
}

/* A short description of run s for errors. */
static void sweep_describe(const run_spec *s, char *buf, size_t n)
{
    snprintf(buf, n,
             "graph %s, %d devices, cluster %s, simulator %s, placer %s, embedding %s, "
             "traversal %s, repeat %d",
             s->graph_path, s->n_devices, s->cluster, s->simulator.name ? s->simulator.name : "-",
             s->placer.name ? s->placer.name : "-", s->embedding.name ? s->embedding.name : "-",
             s->traversal.name ? s->traversal.name : "-", s->repeat);
}

/* Appends the run of the current combination with the given repeat. */
static int sweep_emit(sweep_state *st, int repeat, pb_error *err)
{
    const experiment *x = st->x;
    if (st->n >= SWEEP_MAX_RUNS)
        return pb_errorf(err, "%s:%d: the sweep has more than %d runs", x->file, x->line_experiment,
                         SWEEP_MAX_RUNS);
    if (array_grow(&st->runs, &st->cap, st->n + 1, sizeof *st->runs))
        return pb_errorf(err, "out of memory");
    run_spec *s = &st->runs[st->n++];
    memset(s, 0, sizeof *s);
    s->dataset = st->graph->dataset;
    s->graph_path = strdup(st->graph->path);
    s->n_devices = st->devices;
    s->cluster = st->cluster;
    s->repeat = repeat;
    s->episodes = x->episodes;
    s->sim_calls = x->sim_calls;
    s->timeout_s = x->timeout_s;
    run_plugin *plugins[4] = {&s->simulator, &s->placer, &s->embedding, &s->traversal};
    int rc = s->graph_path ? PB_OK : PB_ERR;
    for (int k = 0, first = 0; k < 4 && rc == PB_OK; k++) {
        rc = sweep_fill_plugin(st, k, first, plugins[k]);
        first += st->plugin[k] ? st->plugin[k]->n_opts : 0;
    }
    if (rc == PB_OK)
        rc = sweep_identify(x, s);
    if (rc != PB_OK)
        return pb_errorf(err,
                         "%s:%d: cannot describe run %d (out of memory, or a name that is "
                         "not UTF-8)",
                         x->file, x->line_experiment, st->n);
    if (strmap_get(&st->ids, s->run_id) >= 0) {
        char what[400];
        sweep_describe(s, what, sizeof what);
        return pb_errorf(err, "%s:%d: the sweep lists the same run twice (%s)", x->file,
                         x->line_experiment, what);
    }
    if (strmap_put(&st->ids, s->run_id, st->n - 1))
        return pb_errorf(err, "out of memory");
    return PB_OK;
}

/* Advances the option odometer; returns 0 when every combination has been visited. */
static int sweep_next_choice(sweep_state *st)
{
    for (int a = st->n_axes - 1; a >= 0; a--) {
        if (++st->choice[a] < st->axis[a]->n_values)
            return 1;
        st->choice[a] = 0;
    }
    return 0;
}

/* Every option combination and repeat of the current plugins. */
static int sweep_expand_options(sweep_state *st, pb_error *err)
{
    st->n_axes = 0;
    for (int k = 0; k < 4; k++)
        for (int i = 0; st->plugin[k] && i < st->plugin[k]->n_opts; i++) {
            st->axis[st->n_axes] = &st->plugin[k]->opts[i];
            st->choice[st->n_axes++] = 0;
        }
    do {
        for (int r = 0; r < st->x->repeats; r++)
            if (sweep_emit(st, r, err))
                return PB_ERR;
    } while (sweep_next_choice(st));
    return PB_OK;
}

/* The plugin of list l at index i, or NULL when the list is empty (the run has none). */
static const cfg_plugin *sweep_pick(const cfg_plugin_list *l, int i)
{
    return l->n ? &l->items[i] : NULL;
}

static int sweep_count(const cfg_plugin_list *l)
{
    return l->n ? l->n : 1;
}

/* The PB_USES_* bits of a placer (both when no placer or no answer). */
static unsigned sweep_placer_uses(const sweep_state *st, const cfg_plugin *placer)
{
    if (!placer || !st->uses || !st->uses->fn)
        return PB_USES_EMBEDDING | PB_USES_TRAVERSAL;
    return st->uses->fn(st->uses->ctx, placer->name);
}

/* Embeddings and traversals of the current placer: only the kinds it uses. */
static int sweep_expand_helpers(sweep_state *st, pb_error *err)
{
    const experiment *x = st->x;
    unsigned uses = sweep_placer_uses(st, st->plugin[1]);
    int n_emb = uses & PB_USES_EMBEDDING ? sweep_count(&x->embeddings) : 1;
    int n_trav = uses & PB_USES_TRAVERSAL ? sweep_count(&x->traversals) : 1;
    for (int e = 0; e < n_emb; e++)
        for (int t = 0; t < n_trav; t++) {
            st->plugin[2] = uses & PB_USES_EMBEDDING ? sweep_pick(&x->embeddings, e) : NULL;
            st->plugin[3] = uses & PB_USES_TRAVERSAL ? sweep_pick(&x->traversals, t) : NULL;
            if (sweep_expand_options(st, err))
                return PB_ERR;
        }
    return PB_OK;
}

/* Simulators, placers, embeddings and traversals of the current graph, devices and cluster. */
static int sweep_expand_plugins(sweep_state *st, pb_error *err)
{
    const experiment *x = st->x;
    for (int s = 0; s < sweep_count(&x->simulators); s++)
        for (int p = 0; p < sweep_count(&x->placers); p++) {
            st->plugin[0] = sweep_pick(&x->simulators, s);
            st->plugin[1] = sweep_pick(&x->placers, p);
            char why[256];
            if (st->plugin[0] && st->plugin[1] && st->uses && st->uses->applies &&
                !st->uses->applies(st->uses->ctx, st->plugin[1]->name, st->plugin[0]->name, why,
                                   sizeof why))
                continue;
            if (sweep_expand_helpers(st, err))
                return PB_ERR;
        }
    return PB_OK;
}

/* The most options any combination of plugins can have: the size of the odometer. */
static int sweep_max_axes(const experiment *x)
{
    const cfg_plugin_list *lists[4] = {&x->simulators, &x->placers, &x->embeddings, &x->traversals};
    int total = 0;
    for (int k = 0; k < 4; k++) {
        int most = 0;
        for (int i = 0; i < lists[k]->n; i++)
            if (lists[k]->items[i].n_opts > most)
                most = lists[k]->items[i].n_opts;
        total += most;
    }
    return total;
}

static int sweep_expand_all(sweep_state *st, const sweep_graphs *g, pb_error *err)
{
    const experiment *x = st->x;
    for (int i = 0; i < g->n; i++)
        for (int d = 0; d < x->n_devices; d++)
            for (int c = 0; c < x->n_clusters; c++) {
                st->graph = &g->items[i];
                st->devices = x->devices[d];
                st->cluster = x->clusters[c];
                if (sweep_expand_plugins(st, err))
                    return PB_ERR;
            }
    return PB_OK;
}

/* A value listed twice in one list would make the same runs twice; say where. */
static int sweep_unique_strings(const experiment *x, char *const *s, int n, const char *what,
                                int line, pb_error *err)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(s[i], s[j]) == 0)
                return pb_errorf(err, "%s:%d: %s lists '%s' twice", x->file, line, what, s[i]);
    return PB_OK;
}

static int sweep_unique_options(const experiment *x, const cfg_plugin_list *l, pb_error *err)
{
    char what[300];
    for (int i = 0; i < l->n; i++)
        for (int k = 0; k < l->items[i].n_opts; k++) {
            const cfg_option *o = &l->items[i].opts[k];
            snprintf(what, sizeof what, "option '%s' of '%s'", o->key, l->items[i].name);
            if (sweep_unique_strings(x, o->values, o->n_values, what, o->line, err))
                return PB_ERR;
        }
    return PB_OK;
}

static int sweep_check_lists(const experiment *x, pb_error *err)
{
    for (int i = 0; i < x->n_devices; i++)
        for (int j = 0; j < i; j++)
            if (x->devices[i] == x->devices[j])
                return pb_errorf(err, "%s:%d: field 'devices' lists %d twice", x->file,
                                 x->line_devices, x->devices[i]);
    if (sweep_unique_strings(x, x->datasets, x->n_datasets, "field 'datasets'", x->line_datasets,
                             err) ||
        sweep_unique_strings(x, x->clusters, x->n_clusters, "field 'cluster'", x->line_clusters,
                             err))
        return PB_ERR;
    const cfg_plugin_list *lists[4] = {&x->simulators, &x->placers, &x->embeddings, &x->traversals};
    for (int k = 0; k < 4; k++)
        if (sweep_unique_options(x, lists[k], err))
            return PB_ERR;
    return PB_OK;
}

int sweep_expand(const experiment *x, const sweep_uses *uses, run_spec **runs, int *n,
                 pb_error *err)
{
    *runs = NULL;
    *n = 0;
    if (sweep_check_lists(x, err))
        return PB_ERR;
    sweep_graphs g = {0};
    for (int i = 0; i < x->n_datasets; i++)
        if (sweep_resolve_dataset(x, x->datasets[i], &g, err)) {
            sweep_graphs_free(&g);
            return PB_ERR;
        }
    sweep_state st;
    memset(&st, 0, sizeof st);
    st.x = x;
    st.uses = uses;
    strmap_init(&st.ids);
    int axes = sweep_max_axes(x);
    st.axis = malloc((size_t)(axes ? axes : 1) * sizeof *st.axis);
    st.choice = malloc((size_t)(axes ? axes : 1) * sizeof *st.choice);
    int rc =
        st.axis && st.choice ? sweep_expand_all(&st, &g, err) : pb_errorf(err, "out of memory");
    free(st.axis);
    free(st.choice);
    strmap_free(&st.ids);
    sweep_graphs_free(&g);
    if (rc != PB_OK) {
        sweep_free(st.runs, st.n);
        return PB_ERR;
    }
    *runs = st.runs;
    *n = st.n;
    return PB_OK;
}

void sweep_free(run_spec *runs, int n)
{
    for (int i = 0; runs && i < n; i++)
        sweep_run_free(&runs[i]);
    free(runs);
}
