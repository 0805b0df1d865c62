/* store_plot.c — the data behind the plots: learning curves (absolute and relative to the
 * initial placement) and best step times, aggregated. */
#include "store_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Both extracts yield rows (dataset, n_devices, placer, embedding, traversal, episode, graph,
 * run_id, value) sorted so that one (panel, series, episode) key, inside it one graph, inside
 * that one run, arrive as consecutive rows.  Sorting there and aggregating here in one pass is
 * several times faster than numbering panels and series with window functions in SQL.
 */
/* (The store writes absent strings as NULL; NULLIF also folds the "" of hand-made files.) */
static const char store_plot_curves_sql[] =
    "SELECT NULLIF(r.dataset, '') AS d, r.n_devices, NULLIF(r.placer, '') AS p,"
    " NULLIF(r.embedding, '') AS e, NULLIF(r.traversal, '') AS t, c.episode, r.graph, r.run_id,"
    " c.best_so_far_us FROM runs r JOIN curve c ON c.run_id = r.run_id"
    " WHERE r.status = 0 AND c.best_so_far_us BETWEEN -1e308 AND 1e308"
    " ORDER BY d, r.n_devices, p, e, t, c.episode, r.graph, r.run_id";

/* The curves as fractions of each run's initial step time (runs with a finite positive one). */
static const char store_plot_relative_sql[] =
    "SELECT NULLIF(r.dataset, '') AS d, r.n_devices, NULLIF(r.placer, '') AS p,"
    " NULLIF(r.embedding, '') AS e, NULLIF(r.traversal, '') AS t, c.episode, r.graph, r.run_id,"
    " c.best_so_far_us / r.initial_us FROM runs r JOIN curve c ON c.run_id = r.run_id"
    " WHERE r.status = 0 AND c.best_so_far_us BETWEEN -1e308 AND 1e308"
    " AND r.initial_us > 0 AND r.initial_us <= 1e308"
    " ORDER BY d, r.n_devices, p, e, t, c.episode, r.graph, r.run_id";

static const char store_plot_bests_sql[] =
    "SELECT NULLIF(dataset, '') AS d, n_devices, NULLIF(placer, '') AS p,"
    " NULLIF(embedding, '') AS e, NULLIF(traversal, '') AS t, -1, graph, run_id, best_us"
    " FROM runs WHERE status = 0 AND best_us BETWEEN -1e308 AND 1e308"
    " ORDER BY d, n_devices, p, e, t, graph, run_id";

enum {
    COL_DATASET,
    COL_DEVICES,
    COL_PLACER,
    COL_EMBEDDING,
    COL_TRAVERSAL,
    COL_EPISODE,
    COL_GRAPH,
    COL_RUN,
    COL_VALUE
};

/* A (placer, embedding, traversal) combination; NULL for absent. */
typedef struct store_plot_series {
    char *part[3];
    int id; /* number in order of appearance, before sorting */
} store_plot_series;

/* The pass over the rows: current key, current graph and run, sums (Welford per graph). */
typedef struct store_plot_pass {
    store_plot_data *d;
    int cap_rows;
    store_plot_series *series; /* [n_series]; d->series is made from them at the end */
    int n_series;
    char *dataset; /* current panel's dataset ("" for absent) */
    int n_devices;
    int panel, series_id, episode, started;
    char *graph, *run; /* current graph and run */
    double run_value;  /* lowest value of the current run (a placer may repeat an episode) */
    int g_n;
    double g_mean, g_m2;
    int n_graphs, n_runs;
    double sum_means, pooled_ss, pooled_df, min, max;
} store_plot_pass;

void store_plot_data_free(store_plot_data *d)
{
    for (int i = 0; i < d->n_panels; i++)
        free(d->panels[i]);
    for (int i = 0; i < d->n_series; i++)
        free(d->series[i]);
    free(d->panels);
    free(d->series);
    free(d->rows);
    memset(d, 0, sizeof *d);
}

const char *store_plot_install_dir(void)
{
    return PB_PLOTS_INSTALL_DIR;
}

static const char *store_plot_text(sqlite3_stmt *st, int col)
{
    const char *t = (const char *)sqlite3_column_text(st, col);
    return t ? t : "";
}

/* Non-zero when the row's (placer, embedding, traversal) is series s. */
static int store_plot_is_series(const store_plot_series *s, sqlite3_stmt *st)
{
    for (int k = 0; k < 3; k++) {
        const char *t = (const char *)sqlite3_column_text(st, COL_PLACER + k);
        if ((t == NULL) != (s->part[k] == NULL) || (t && strcmp(t, s->part[k]) != 0))
            return 0;
    }
    return 1;
}

/* Keeps a copy of t in *slot; PB_ERR when out of memory. */
static int store_plot_set(char **slot, const char *t)
{
    free(*slot);
    *slot = strdup(t);
    return *slot ? PB_OK : PB_ERR;
}

/* ---------------------------------------------------------------- sums */

/* Folds the current run into its graph's Welford sums. */
static void store_plot_end_run(store_plot_pass *p)
{
    if (!p->run)
        return;
    double x = p->run_value;
    p->g_n++;
    double delta = x - p->g_mean;
    p->g_mean += delta / p->g_n;
    p->g_m2 += delta * (x - p->g_mean);
    p->n_runs++;
    p->min = fmin(p->min, x);
    p->max = fmax(p->max, x);
    free(p->run);
    p->run = NULL;
}

/* Folds the current graph's repeats into the key's sums. */
static void store_plot_end_graph(store_plot_pass *p)
{
    store_plot_end_run(p);
    if (p->g_n == 0)
        return;
    p->n_graphs++;
    p->sum_means += p->g_mean;
    p->pooled_ss += p->g_m2;
    p->pooled_df += p->g_n - 1;
    p->g_n = 0;
    p->g_mean = p->g_m2 = 0;
}

/* Ends the current key: appends its row. */
static int store_plot_end_key(store_plot_pass *p)
{
    store_plot_end_graph(p);
    if (p->n_graphs == 0)
        return PB_OK;
    store_plot_data *d = p->d;
    if (d->n_rows == p->cap_rows) {
        int cap = p->cap_rows ? 2 * p->cap_rows : 64;
        store_plot_row *grown = realloc(d->rows, (size_t)cap * sizeof *grown);
        if (!grown)
            return PB_ERR;
        d->rows = grown;
        p->cap_rows = cap;
    }
    d->rows[d->n_rows++] = (store_plot_row){
        .panel = p->panel,
        .series = p->series_id,
        .episode = p->episode,
        .mean_us = p->sum_means / p->n_graphs,
        .sd_us = p->pooled_df > 0 ? sqrt(p->pooled_ss / p->pooled_df) : NAN,
        .min_us = p->min,
        .max_us = p->max,
        .n_graphs = p->n_graphs,
        .n_runs = p->n_runs,
    };
    p->n_graphs = p->n_runs = 0;
    p->sum_means = p->pooled_ss = p->pooled_df = 0;
    p->min = INFINITY;
    p->max = -INFINITY;
    return PB_OK;
}

/* ---------------------------------------------------------------- panels and series */

/* The last path component of a dataset entry ("datasets/check8/cifar10/" -> "cifar10"): long
 * folder paths would crowd the panel titles.  Length in *len. */
static const char *store_plot_dataset_name(const char *dataset, int *len)
{
    size_t end = strlen(dataset);
    while (end > 1 && dataset[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && dataset[start - 1] != '/')
        start--;
    *len = (int)(end - start);
    return dataset + start;
}

/* "cifar10, 3 devices" */
static int store_plot_new_panel(store_plot_pass *p, const char *dataset, int n_devices)
{
    store_plot_data *d = p->d;
    char **grown = realloc(d->panels, (size_t)(d->n_panels + 1) * sizeof *grown);
    if (!grown)
        return PB_ERR;
    d->panels = grown;
    char label[1024];
    int len;
    const char *name = store_plot_dataset_name(*dataset ? dataset : "(none)", &len);
    snprintf(label, sizeof label, "%.*s, %d device%s", len, name, n_devices,
             n_devices == 1 ? "" : "s");
    if (!(d->panels[d->n_panels] = strdup(label)) || store_plot_set(&p->dataset, dataset))
        return PB_ERR;
    p->panel = d->n_panels++;
    p->n_devices = n_devices;
    return PB_OK;
}

/* The id of the row's series, adding it when first seen. */
static int store_plot_find_series(store_plot_pass *p, sqlite3_stmt *st)
{
    for (int i = 0; i < p->n_series; i++)
        if (store_plot_is_series(&p->series[i], st))
            return i;
    int n = p->n_series;
    store_plot_series *grown = realloc(p->series, (size_t)(n + 1) * sizeof *grown);
    if (!grown)
        return -1;
    p->series = grown;
    grown[n].id = n;
    int oom = 0;
    for (int k = 0; k < 3; k++) {
        const char *t = (const char *)sqlite3_column_text(st, COL_PLACER + k);
        grown[n].part[k] = t ? strdup(t) : NULL;
        oom |= t && !grown[n].part[k];
    }
    p->n_series++;
    return oom ? -1 : n;
}

/* SQLite's order: absent first, then by bytes. */
static int store_plot_cmp_part(const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int store_plot_cmp_series(const void *x, const void *y)
{
    const store_plot_series *a = x, *b = y;
    for (int k = 0; k < 3; k++) {
        int c = store_plot_cmp_part(a->part[k], b->part[k]);
        if (c)
            return c;
    }
    return 0;
}

static int store_plot_cmp_rows(const void *x, const void *y)
{
    const store_plot_row *a = x, *b = y;
    if (a->panel != b->panel)
        return a->panel < b->panel ? -1 : 1;
    if (a->series != b->series)
        return a->series < b->series ? -1 : 1;
    return (a->episode > b->episode) - (a->episode < b->episode);
}

/* "placeto / placeto-gnn / topo" */
static char *store_plot_series_label(const store_plot_series *s)
{
    char label[1024];
    snprintf(label, sizeof label, "%s%s%s%s%s", s->part[0] ? s->part[0] : "(none)",
             s->part[1] ? " / " : "", s->part[1] ? s->part[1] : "", s->part[2] ? " / " : "",
             s->part[2] ? s->part[2] : "");
    return strdup(label);
}

/* Renumbers series in sorted order, labels them, and sorts the rows to match. */
static int store_plot_finish_series(store_plot_pass *p)
{
    store_plot_data *d = p->d;
    int n = p->n_series;
    if (n > 1)
        qsort(p->series, (size_t)n, sizeof *p->series, store_plot_cmp_series);
    int *rank = malloc((size_t)(n ? n : 1) * sizeof *rank);
    d->series = calloc((size_t)(n ? n : 1), sizeof *d->series);
    if (!rank || !d->series) {
        free(rank);
        return PB_ERR;
    }
    d->n_series = n;
    int rc = PB_OK;
    for (int i = 0; i < n; i++) {
        rank[p->series[i].id] = i;
        if (!(d->series[i] = store_plot_series_label(&p->series[i])))
            rc = PB_ERR;
    }
    for (int i = 0; i < d->n_rows; i++)
        d->rows[i].series = rank[d->rows[i].series];
    if (d->n_rows > 1)
        qsort(d->rows, (size_t)d->n_rows, sizeof *d->rows, store_plot_cmp_rows);
    free(rank);
    return rc;
}

/* ---------------------------------------------------------------- the pass */

/* Starts a new key when the row's (panel, series, episode) differs from the current one. */
static int store_plot_key(store_plot_pass *p, sqlite3_stmt *st)
{
    const char *dataset = store_plot_text(st, COL_DATASET);
    int n_devices = sqlite3_column_int(st, COL_DEVICES);
    int episode = sqlite3_column_int(st, COL_EPISODE);
    int new_panel = !p->started || strcmp(p->dataset, dataset) != 0 || n_devices != p->n_devices;
    int series =
        new_panel || !store_plot_is_series(&p->series[p->series_id], st) ? -1 : p->series_id;
    if (series >= 0 && episode == p->episode)
        return PB_OK;
    if (p->started && store_plot_end_key(p))
        return PB_ERR;
    if (new_panel && store_plot_new_panel(p, dataset, n_devices))
        return PB_ERR;
    if (series < 0 && (series = store_plot_find_series(p, st)) < 0)
        return PB_ERR;
    p->series_id = series;
    p->episode = episode;
    p->started = 1;
    free(p->graph);
    p->graph = NULL;
    return PB_OK;
}

/* Adds the row's value to its run (the lowest of a run's values at one episode counts). */
static int store_plot_add(store_plot_pass *p, sqlite3_stmt *st)
{
    const char *graph = store_plot_text(st, COL_GRAPH);
    const char *run = store_plot_text(st, COL_RUN);
    double x = sqlite3_column_double(st, COL_VALUE);
    if (!p->graph || strcmp(p->graph, graph) != 0) {
        store_plot_end_graph(p);
        if (store_plot_set(&p->graph, graph))
            return PB_ERR;
    }
    if (p->run && strcmp(p->run, run) == 0) {
        p->run_value = fmin(p->run_value, x);
        return PB_OK;
    }
    store_plot_end_run(p);
    p->run_value = x;
    return store_plot_set(&p->run, run);
}

static void store_plot_pass_free(store_plot_pass *p)
{
    for (int i = 0; i < p->n_series; i++)
        for (int k = 0; k < 3; k++)
            free(p->series[i].part[k]);
    free(p->series);
    free(p->dataset);
    free(p->graph);
    free(p->run);
}

static int store_plot_extract(store *s, const char *sql, store_plot_data *out, pb_error *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    if (store_prepare(s, sql, &st, err))
        return PB_ERR;
    store_plot_pass p = {.d = out, .min = INFINITY, .max = -INFINITY};
    int rc, oom = 0;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW)
        oom = store_plot_key(&p, st) || store_plot_add(&p, st);
    sqlite3_finalize(st);
    if (!oom && rc == SQLITE_DONE)
        oom = (p.started && store_plot_end_key(&p)) || store_plot_finish_series(&p);
    store_plot_pass_free(&p);
    if (oom)
        return pb_errorf(err, "%s: out of memory", s->path);
    if (rc != SQLITE_DONE)
        return store_sql_error(s, "reading plot data", err);
    return PB_OK;
}

int store_plot_curves(store *s, store_plot_data *out, pb_error *err)
{
    return store_plot_extract(s, store_plot_curves_sql, out, err);
}

int store_plot_curves_relative(store *s, store_plot_data *out, pb_error *err)
{
    return store_plot_extract(s, store_plot_relative_sql, out, err);
}

int store_plot_bests(store *s, store_plot_data *out, pb_error *err)
{
    return store_plot_extract(s, store_plot_bests_sql, out, err);
}
