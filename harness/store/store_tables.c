/* store_tables.c — the papers' tables from a results file: order win counts, per-embedding
 * improvement, computation time and EC ratio, and HeterPS cost, throughput and scheduling time. */
#include "store_tables.h"

#include "core/array.h"
#include "store_internal.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- families and name lists */

/* The family of a dataset entry: the name of the folder it names, or of the folder its graph
 * file lies in ("datasets/check8/cifar10" and "datasets/cifar10/cifar10-00.json" are both
 * "cifar10"; a bare family name is itself). */
static void store_tables_family(const char *dataset, char *buf, size_t n)
{
    size_t len = strlen(dataset);
    while (len > 1 && dataset[len - 1] == '/')
        len--;
    if (len > 5 && strncmp(dataset + len - 5, ".json", 5) == 0) {
        while (len > 0 && dataset[len - 1] != '/')
            len--;
        while (len > 1 && dataset[len - 1] == '/')
            len--;
    }
    size_t start = len;
    while (start > 0 && dataset[start - 1] != '/')
        start--;
    if (start == len) { /* a graph file with no folder */
        snprintf(buf, n, "%s", dataset);
        return;
    }
    snprintf(buf, n, "%.*s", (int)(len - start), dataset + start);
}

/* A sorted set of owned strings. */
typedef struct store_tables_names {
    char **items;
    int n, cap;
} store_tables_names;

static int store_tables_name_index(const store_tables_names *s, const char *name)
{
    int lo = 0, hi = s->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(s->items[mid], name);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static int store_tables_name_add(store_tables_names *s, const char *name)
{
    int at = 0;
    while (at < s->n && strcmp(s->items[at], name) < 0)
        at++;
    if (at < s->n && strcmp(s->items[at], name) == 0)
        return PB_OK;
    char *copy = strdup(name);
    if (!copy || array_grow(&s->items, &s->cap, s->n + 1, sizeof *s->items)) {
        free(copy);
        return PB_ERR;
    }
    memmove(s->items + at + 1, s->items + at, (size_t)(s->n - at) * sizeof *s->items);
    s->items[at] = copy;
    s->n++;
    return PB_OK;
}

static void store_tables_names_free(char **items, int n)
{
    for (int i = 0; i < n; i++)
        free(items[i]);
    free(items);
}

/* A sorted set of device counts. */
static int store_tables_device_add(int **items, int *n, int *cap, int d)
{
    int at = 0;
    while (at < *n && (*items)[at] < d)
        at++;
    if (at < *n && (*items)[at] == d)
        return PB_OK;
    if (array_grow(items, cap, *n + 1, sizeof **items))
        return PB_ERR;
    memmove(*items + at + 1, *items + at, (size_t)(*n - at) * sizeof **items);
    (*items)[at] = d;
    (*n)++;
    return PB_OK;
}

static int store_tables_device_index(const int *items, int n, int d)
{
    for (int i = 0; i < n; i++)
        if (items[i] == d)
            return i;
    return -1;
}

static const char *store_tables_text(sqlite3_stmt *st, int col)
{
    const char *t = (const char *)sqlite3_column_text(st, col);
    return t ? t : "";
}

/* ---------------------------------------------------------------- order wins */

/* Ok runs of the placer with a traversal order (and the embedding when not NULL). */
#define STORE_TABLES_ORDER_WHERE                                                                   \
    " r.status = 0 AND r.placer = ?1 AND (?2 IS NULL OR r.embedding = ?2)"                         \
    " AND NULLIF(r.traversal, '') IS NOT NULL"

static const char store_tables_embeddings_sql[] =
    "SELECT COUNT(DISTINCT COALESCE(NULLIF(r.embedding, ''), '-')) FROM runs r"
    " WHERE" STORE_TABLES_ORDER_WHERE;

static const char store_tables_groups_sql[] = "SELECT DISTINCT r.dataset, r.n_devices, r.traversal "
                                              "FROM runs r WHERE" STORE_TABLES_ORDER_WHERE;

/* One (graph, order) mean of an episode. */
typedef struct store_tables_mean {
    int cell;  /* dataset * n_devices + devices index */
    char *key; /* dataset entry and graph name, identifying the graph */
    int order;
    double mean;
} store_tables_mean;

static int store_tables_cmp_mean(const void *x, const void *y)
{
    const store_tables_mean *a = x, *b = y;
    if (a->cell != b->cell)
        return a->cell < b->cell ? -1 : 1;
    int c = strcmp(a->key, b->key);
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int store_tables_bind(sqlite3_stmt *st, const char *placer, const char *embedding)
{
    sqlite3_bind_text(st, 1, placer, -1, SQLITE_STATIC);
    if (embedding)
        sqlite3_bind_text(st, 2, embedding, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 2);
    return PB_OK;
}

/* Fails unless the placer's runs with orders use exactly one embedding (or embedding is set). */
static int store_tables_one_embedding(store *s, const char *placer, const char *embedding,
                                      pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, store_tables_embeddings_sql, &st, err))
        return PB_ERR;
    store_tables_bind(st, placer, embedding);
    int rc = sqlite3_step(st);
    long long n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (n < 0)
        return store_sql_error(s, "counting embeddings", err);
    if (n == 0)
        return pb_errorf(err, "%s: no run of placer '%s'%s%s with a traversal order finished ok",
                         s->path, placer, embedding ? " and embedding " : "",
                         embedding ? embedding : "");
    if (n > 1)
        return pb_errorf(err,
                         "%s: the runs of placer '%s' use %lld embeddings; order win counts "
                         "compare orders of one embedding (choose it with --embedding)",
                         s->path, placer, n);
    return PB_OK;
}

/* Lists datasets (as families), device counts and orders, and which orders each (family,
 * devices) group has: need[cell * n_orders + o]. */
static int store_tables_order_groups(store *s, const char *placer, const char *embedding,
                                     store_order_wins *w, char **need, pb_error *err)
{
    store_tables_names fam = {0}, ord = {0};
    int dev_cap = 0;
    sqlite3_stmt *st;
    if (store_prepare(s, store_tables_groups_sql, &st, err))
        return PB_ERR;
    store_tables_bind(st, placer, embedding);
    int rc, oom = 0;
    char family[512];
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_tables_family(store_tables_text(st, 0), family, sizeof family);
        oom = store_tables_name_add(&fam, family) ||
              store_tables_device_add(&w->devices, &w->n_devices, &dev_cap,
                                      sqlite3_column_int(st, 1)) ||
              store_tables_name_add(&ord, store_tables_text(st, 2));
    }
    w->datasets = fam.items;
    w->n_datasets = fam.n;
    w->orders = ord.items;
    w->n_orders = ord.n;
    size_t cells = (size_t)fam.n * w->n_devices;
    if (!oom && rc == SQLITE_DONE && !(*need = calloc(cells * ord.n + 1, 1)))
        oom = 1;
    sqlite3_reset(st);
    while (!oom && rc == SQLITE_DONE && sqlite3_step(st) == SQLITE_ROW) {
        store_tables_family(store_tables_text(st, 0), family, sizeof family);
        int cell = store_tables_name_index(&fam, family) * w->n_devices +
                   store_tables_device_index(w->devices, w->n_devices, sqlite3_column_int(st, 1));
        (*need)[(size_t)cell * ord.n + store_tables_name_index(&ord, store_tables_text(st, 2))] = 1;
    }
    sqlite3_finalize(st);
    if (oom)
        return pb_errorf(err, "%s: out of memory", s->path);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "listing order groups", err);
}

static void store_tables_means_free(store_tables_mean *m, int n)
{
    for (int i = 0; i < n; i++)
        free(m[i].key);
    free(m);
}

/* Reads the per-(graph, order) means at one episode, sorted by cell, graph and order. */
static int store_tables_read_means(store *s, const char *placer, const char *embedding, int episode,
                                   const store_order_wins *w, store_tables_mean **out, int *n_out,
                                   pb_error *err)
{
    static const char sql[] =
        "SELECT r.dataset, r.n_devices, r.graph, r.traversal, AVG(v) FROM"
        " (SELECT r.run_id, MIN(c.best_so_far_us) AS v FROM runs r JOIN curve c"
        " ON c.run_id = r.run_id WHERE" STORE_TABLES_ORDER_WHERE
        " AND c.episode = ?3 AND c.best_so_far_us BETWEEN -1e308 AND 1e308"
        " GROUP BY r.run_id) m JOIN runs r ON r.run_id = m.run_id"
        " GROUP BY r.dataset, r.n_devices, r.graph, r.traversal";
    *out = NULL;
    *n_out = 0;
    sqlite3_stmt *st;
    if (store_prepare(s, sql, &st, err))
        return PB_ERR;
    store_tables_bind(st, placer, embedding);
    sqlite3_bind_int(st, 3, episode);
    int rc, oom = 0, cap = 0;
    char family[512];
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *dataset = store_tables_text(st, 0), *graph = store_tables_text(st, 2);
        store_tables_family(dataset, family, sizeof family);
        store_tables_names fam = {w->datasets, w->n_datasets, w->n_datasets};
        store_tables_names ord = {w->orders, w->n_orders, w->n_orders};
        size_t len = strlen(dataset) + strlen(graph) + 2;
        char *key = malloc(len);
        if (!key || array_grow(out, &cap, *n_out + 1, sizeof **out)) {
            free(key);
            oom = 1;
            break;
        }
        snprintf(key, len, "%s\n%s", dataset, graph);
        (*out)[(*n_out)++] = (store_tables_mean){
            .cell = store_tables_name_index(&fam, family) * w->n_devices +
                    store_tables_device_index(w->devices, w->n_devices, sqlite3_column_int(st, 1)),
            .key = key,
            .order = store_tables_name_index(&ord, store_tables_text(st, 3)),
            .mean = sqlite3_column_double(st, 4),
        };
    }
    sqlite3_finalize(st);
    if (oom)
        return pb_errorf(err, "%s: out of memory", s->path);
    if (rc != SQLITE_DONE)
        return store_sql_error(s, "reading best step times by episode", err);
    if (*n_out > 1)
        qsort(*out, (size_t)*n_out, sizeof **out, store_tables_cmp_mean);
    return PB_OK;
}

/* Counts wins at episode index k from the sorted means. */
static void store_tables_count_wins(store_order_wins *w, const char *need,
                                    const store_tables_mean *m, int n, int k)
{
    int n_orders = w->n_orders;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && m[j].cell == m[i].cell && strcmp(m[j].key, m[i].key) == 0)
            j++;
        int needed = 0;
        for (int o = 0; o < n_orders; o++)
            needed += need[(size_t)m[i].cell * n_orders + o];
        if (j - i == needed) {
            double best = INFINITY;
            for (int q = i; q < j; q++)
                best = fmin(best, m[q].mean);
            size_t c = (size_t)m[i].cell * w->n_episodes + k;
            int winners = 0;
            for (int q = i; q < j; q++)
                if (m[q].mean == best) {
                    w->wins[c * n_orders + m[q].order]++;
                    winners++;
                }
            w->graphs[c]++;
            w->ties[c] += winners > 1;
        }
        i = j;
    }
}

int store_tables_order_wins(store *s, const char *placer, const char *embedding,
                            const int *episodes, int n_episodes, store_order_wins *out,
                            pb_error *err)
{
    memset(out, 0, sizeof *out);
    char *need = NULL;
    if (store_tables_one_embedding(s, placer, embedding, err) ||
        store_tables_order_groups(s, placer, embedding, out, &need, err))
        return free(need), PB_ERR;
    size_t cells = (size_t)out->n_datasets * out->n_devices * n_episodes;
    out->episodes = malloc((size_t)(n_episodes > 0 ? n_episodes : 1) * sizeof *out->episodes);
    out->wins = calloc(cells * out->n_orders + 1, sizeof *out->wins);
    out->graphs = calloc(cells + 1, sizeof *out->graphs);
    out->ties = calloc(cells + 1, sizeof *out->ties);
    if (!out->episodes || !out->wins || !out->graphs || !out->ties) {
        free(need);
        return pb_errorf(err, "%s: out of memory", s->path);
    }
    out->n_episodes = n_episodes;
    memcpy(out->episodes, episodes, (size_t)n_episodes * sizeof *episodes);
    for (int k = 0; k < n_episodes; k++) {
        store_tables_mean *m;
        int n;
        if (store_tables_read_means(s, placer, embedding, episodes[k], out, &m, &n, err)) {
            free(need);
            return PB_ERR;
        }
        store_tables_count_wins(out, need, m, n, k);
        store_tables_means_free(m, n);
    }
    free(need);
    return PB_OK;
}

void store_order_wins_free(store_order_wins *w)
{
    store_tables_names_free(w->datasets, w->n_datasets);
    store_tables_names_free(w->orders, w->n_orders);
    free(w->devices);
    free(w->episodes);
    free(w->wins);
    free(w->graphs);
    free(w->ties);
    memset(w, 0, sizeof *w);
}

/* ---------------------------------------------------------------- embeddings */

/* Ok runs of the placer with an embedding and a finite positive initial step time: improvement
 * fraction, computation time and EC ratio (the fraction per second of computation). */
static const char store_tables_embedding_sql[] =
    "SELECT dataset, n_devices, embedding, graph, (initial_us - best_us) / initial_us,"
    " search_wall_s FROM runs WHERE status = 0 AND placer = ?1 AND (?2 IS NULL OR traversal = ?2)"
    " AND NULLIF(embedding, '') IS NOT NULL AND initial_us > 0 AND initial_us <= 1e308"
    " AND best_us BETWEEN -1e308 AND 1e308 ORDER BY dataset, n_devices, embedding, graph";

/* Sums of one cell while reading. */
typedef struct store_tables_sums {
    int n, n_ec, n_graphs;
    double imp, wall, ec;
    char *last_graph; /* dataset entry and graph of the last run counted */
} store_tables_sums;

static int store_tables_embedding_lists(store *s, sqlite3_stmt *st, store_embedding_table *t,
                                        pb_error *err)
{
    store_tables_names fam = {0}, emb = {0};
    int dev_cap = 0, rc, oom = 0;
    char family[512];
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_tables_family(store_tables_text(st, 0), family, sizeof family);
        oom = store_tables_name_add(&fam, family) ||
              store_tables_device_add(&t->devices, &t->n_devices, &dev_cap,
                                      sqlite3_column_int(st, 1)) ||
              store_tables_name_add(&emb, store_tables_text(st, 2));
    }
    t->datasets = fam.items;
    t->n_datasets = fam.n;
    t->embeddings = emb.items;
    t->n_embeddings = emb.n;
    sqlite3_reset(st);
    if (oom)
        return pb_errorf(err, "%s: out of memory", s->path);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "reading embedding runs", err);
}

/* Adds the row's run to its cell's sums; a graph is counted once per cell. */
static int store_tables_embedding_add(const store_embedding_table *t, sqlite3_stmt *st,
                                      store_tables_sums *sums)
{
    char family[512];
    const char *dataset = store_tables_text(st, 0), *graph = store_tables_text(st, 3);
    store_tables_family(dataset, family, sizeof family);
    store_tables_names fam = {t->datasets, t->n_datasets, t->n_datasets};
    store_tables_names emb = {t->embeddings, t->n_embeddings, t->n_embeddings};
    int cell = (store_tables_name_index(&fam, family) * t->n_devices +
                store_tables_device_index(t->devices, t->n_devices, sqlite3_column_int(st, 1))) *
                   t->n_embeddings +
               store_tables_name_index(&emb, store_tables_text(st, 2));
    store_tables_sums *c = &sums[cell];
    double imp = sqlite3_column_double(st, 4), wall = sqlite3_column_double(st, 5);
    c->n++;
    c->imp += imp;
    c->wall += wall;
    if (wall > 0) {
        c->n_ec++;
        c->ec += imp / wall;
    }
    size_t len = strlen(dataset) + strlen(graph) + 2;
    char *key = malloc(len);
    if (!key)
        return PB_ERR;
    snprintf(key, len, "%s\n%s", dataset, graph);
    if (!c->last_graph || strcmp(c->last_graph, key) != 0) {
        c->n_graphs++;
        free(c->last_graph);
        c->last_graph = key;
    } else {
        free(key);
    }
    return PB_OK;
}

/* Cell means, then each embedding's mean over its cells. */
static void store_tables_embedding_means(store_embedding_table *t, const store_tables_sums *sums)
{
    int n_cells = t->n_datasets * t->n_devices;
    for (int e = 0; e < t->n_embeddings; e++) {
        store_embedding_cell *o = &t->overall[e];
        int used = 0, used_ec = 0;
        double imp = 0, wall = 0, ec = 0;
        for (int c = 0; c < n_cells; c++) {
            const store_tables_sums *x = &sums[c * t->n_embeddings + e];
            store_embedding_cell *y = &t->cells[c * t->n_embeddings + e];
            y->n_runs = x->n;
            y->n_graphs = x->n_graphs;
            y->improvement_pct = x->n ? x->imp / x->n * 100 : NAN;
            y->wall_s = x->n ? x->wall / x->n : NAN;
            y->ec = x->n_ec ? x->ec / x->n_ec : NAN;
            o->n_runs += x->n;
            o->n_graphs += x->n_graphs;
            if (x->n) {
                used++;
                imp += y->improvement_pct;
                wall += y->wall_s;
            }
            if (x->n_ec) {
                used_ec++;
                ec += y->ec;
            }
        }
        o->improvement_pct = used ? imp / used : NAN;
        o->wall_s = used ? wall / used : NAN;
        o->ec = used_ec ? ec / used_ec : NAN;
    }
}

int store_tables_embeddings(store *s, const char *placer, const char *traversal,
                            store_embedding_table *out, pb_error *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    if (store_prepare(s, store_tables_embedding_sql, &st, err))
        return PB_ERR;
    store_tables_bind(st, placer, traversal);
    if (store_tables_embedding_lists(s, st, out, err)) {
        sqlite3_finalize(st);
        return PB_ERR;
    }
    if (out->n_embeddings == 0) {
        sqlite3_finalize(st);
        return pb_errorf(err,
                         "%s: no run of placer '%s'%s%s with an embedding and an initial step "
                         "time finished ok",
                         s->path, placer, traversal ? " and traversal " : "",
                         traversal ? traversal : "");
    }
    size_t n_cells = (size_t)out->n_datasets * out->n_devices * out->n_embeddings;
    store_tables_sums *sums = calloc(n_cells, sizeof *sums);
    out->cells = calloc(n_cells, sizeof *out->cells);
    out->overall = calloc((size_t)out->n_embeddings, sizeof *out->overall);
    int rc = SQLITE_DONE, oom = !sums || !out->cells || !out->overall;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW)
        oom = store_tables_embedding_add(out, st, sums);
    sqlite3_finalize(st);
    if (!oom && rc == SQLITE_DONE)
        store_tables_embedding_means(out, sums);
    for (size_t c = 0; sums && c < n_cells; c++)
        free(sums[c].last_graph);
    free(sums);
    if (oom)
        return pb_errorf(err, "%s: out of memory", s->path);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "reading embedding runs", err);
}

void store_embedding_table_free(store_embedding_table *t)
{
    store_tables_names_free(t->datasets, t->n_datasets);
    store_tables_names_free(t->embeddings, t->n_embeddings);
    free(t->devices);
    free(t->cells);
    free(t->overall);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- HeterPS */

/* Per (model, types, method): runs, ok runs, ok runs with a verdict, feasible ones, then the
 * means.  Read through the full column list, so a file of schema 1 gives NULL verdicts. */
static const char store_tables_heterps_fmt[] =
    "SELECT CASE WHEN graph LIKE '%%.json' THEN substr(graph, 1, length(graph) - 5) ELSE graph"
    " END AS m, n_devices, placer, max(n_nodes), count(*), sum(status = 0),"
    " sum(status = 0 AND monetary_cost IS NOT NULL), sum(status = 0 AND feasible = 1),"
    " avg(CASE WHEN status = 0 THEN monetary_cost END),"
    " min(CASE WHEN status = 0 THEN monetary_cost END),"
    " max(CASE WHEN status = 0 THEN monetary_cost END),"
    " avg(CASE WHEN status = 0 AND monetary_cost IS NOT NULL THEN throughput END),"
    " avg(CASE WHEN status = 0 THEN search_wall_s END)"
    " FROM (SELECT %s FROM runs) WHERE simulator = 'heterps'"
    /* Fig. 4's runs (static provisioning, other throughput limits) have their own table */
    " AND coalesce(json_extract(settings_json, '$.simulator.options.provision'), 'heterps')"
    " = 'heterps' AND coalesce(CAST(json_extract(settings_json,"
    " '$.simulator.options.tl_scale') AS REAL), 1.0) = 1.0"
    " GROUP BY m, n_devices, placer ORDER BY m, n_devices, placer";

static double store_tables_real(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

/* The sorted models, type counts and methods, and each model's layers. */
static int store_tables_heterps_lists(store *s, sqlite3_stmt *st, store_heterps_table *t,
                                      pb_error *err)
{
    store_tables_names models = {0}, placers = {0};
    int dev_cap = 0, rc, oom = 0;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW)
        oom = store_tables_name_add(&models, store_tables_text(st, 0)) ||
              store_tables_device_add(&t->devices, &t->n_devices, &dev_cap,
                                      sqlite3_column_int(st, 1)) ||
              store_tables_name_add(&placers, store_tables_text(st, 2));
    t->models = models.items;
    t->n_models = models.n;
    t->placers = placers.items;
    t->n_placers = placers.n;
    sqlite3_reset(st);
    if (oom)
        return pb_errorf(err, "%s: out of memory", s->path);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "reading heterps runs", err);
}

static void store_tables_heterps_cell(store_heterps_table *t, sqlite3_stmt *st)
{
    store_tables_names models = {t->models, t->n_models, t->n_models};
    store_tables_names placers = {t->placers, t->n_placers, t->n_placers};
    int m = store_tables_name_index(&models, store_tables_text(st, 0));
    int d = store_tables_device_index(t->devices, t->n_devices, sqlite3_column_int(st, 1));
    int p = store_tables_name_index(&placers, store_tables_text(st, 2));
    if (sqlite3_column_int(st, 3) > t->layers[m])
        t->layers[m] = sqlite3_column_int(st, 3);
    t->cells[(m * t->n_devices + d) * t->n_placers + p] = (store_heterps_cell){
        .n_runs = sqlite3_column_int(st, 4),
        .n_ok = sqlite3_column_int(st, 5),
        .n_verdict = sqlite3_column_int(st, 6),
        .n_feasible = sqlite3_column_int(st, 7),
        .cost = store_tables_real(st, 8),
        .cost_min = store_tables_real(st, 9),
        .cost_max = store_tables_real(st, 10),
        .throughput = store_tables_real(st, 11),
        .wall_s = store_tables_real(st, 12),
    };
}

/* Prepares fmt with its one %s replaced by the runs table's full column list (so files of an
 * older schema read NULL for the columns they lack). */
static int store_tables_prepare_runs(store *s, const char *fmt, size_t fmt_size, sqlite3_stmt **st,
                                     pb_error *err)
{
    char *list = store_run_select_list(s, "main", "");
    size_t len = list ? strlen(list) + fmt_size : 0;
    char *sql = list ? malloc(len) : NULL;
    if (sql)
        snprintf(sql, len, fmt, list);
    free(list);
    if (!sql)
        return pb_errorf(err, "%s: out of memory", s->path);
    int rc = store_prepare(s, sql, st, err);
    free(sql);
    return rc;
}

int store_tables_heterps(store *s, store_heterps_table *out, pb_error *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    int rc;
    if (store_tables_prepare_runs(s, store_tables_heterps_fmt, sizeof store_tables_heterps_fmt, &st,
                                  err))
        return PB_ERR;
    if (store_tables_heterps_lists(s, st, out, err)) {
        sqlite3_finalize(st);
        return PB_ERR;
    }
    if (out->n_models == 0) {
        sqlite3_finalize(st);
        return pb_errorf(err, "%s: no run used the heterps simulator", s->path);
    }
    size_t n_cells = (size_t)out->n_models * out->n_devices * out->n_placers;
    out->cells = calloc(n_cells, sizeof *out->cells);
    out->layers = calloc((size_t)out->n_models, sizeof *out->layers);
    if (!out->cells || !out->layers) {
        sqlite3_finalize(st);
        return pb_errorf(err, "%s: out of memory", s->path);
    }
    for (size_t c = 0; c < n_cells; c++)
        out->cells[c] = (store_heterps_cell){0, 0, 0, 0, NAN, NAN, NAN, NAN, NAN};
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        store_tables_heterps_cell(out, st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "reading heterps runs", err);
}

/* Fig. 4: per (model, TL scale, provisioning) of one placer's heterps runs. */
static const char store_tables_fig4_fmt[] =
    "SELECT m, tl, pv, count(*), sum(status = 0), sum(status = 0 AND feasible = 1),"
    " avg(CASE WHEN status = 0 AND feasible = 1 THEN monetary_cost END),"
    " avg(CASE WHEN status = 0 AND feasible = 1 THEN throughput END), max(pv <> 'heterps')"
    " FROM (SELECT CASE WHEN graph LIKE '%%.json' THEN substr(graph, 1, length(graph) - 5)"
    " ELSE graph END AS m,"
    " coalesce(CAST(json_extract(settings_json, '$.simulator.options.tl_scale') AS REAL), 1.0)"
    " AS tl, coalesce(json_extract(settings_json, '$.simulator.options.provision'), 'heterps')"
    " AS pv, status, feasible, monetary_cost, throughput, placer, simulator"
    " FROM (SELECT %s FROM runs)) WHERE simulator = 'heterps' AND placer = ?1"
    " GROUP BY m, tl, pv ORDER BY m, tl, pv = 'sta-ratio', pv = 'sta-ps-ratio'";

int store_tables_heterps_fig4(store *s, const char *placer, store_heterps_fig4 *out, pb_error *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    if (store_tables_prepare_runs(s, store_tables_fig4_fmt, sizeof store_tables_fig4_fmt, &st, err))
        return PB_ERR;
    sqlite3_bind_text(st, 1, placer, -1, SQLITE_TRANSIENT);
    int rc, cap = 0, any_static = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (out->n == cap) {
            cap = cap ? 2 * cap : 16;
            store_heterps_fig4_row *grown = realloc(out->rows, (size_t)cap * sizeof *grown);
            if (!grown) {
                sqlite3_finalize(st);
                return pb_errorf(err, "%s: out of memory", s->path);
            }
            out->rows = grown;
        }
        const char *pv = store_tables_text(st, 2);
        store_heterps_fig4_row *r = &out->rows[out->n];
        *r = (store_heterps_fig4_row){
            .model = strdup(store_tables_text(st, 0)),
            .tl_scale = sqlite3_column_double(st, 1),
            .provision = strcmp(pv, "sta-ratio") == 0      ? 1
                         : strcmp(pv, "sta-ps-ratio") == 0 ? 2
                                                           : 0,
            .n_runs = sqlite3_column_int(st, 3),
            .n_ok = sqlite3_column_int(st, 4),
            .n_feasible = sqlite3_column_int(st, 5),
            .cost = store_tables_real(st, 6),
            .throughput = store_tables_real(st, 7),
        };
        if (!r->model) {
            sqlite3_finalize(st);
            return pb_errorf(err, "%s: out of memory", s->path);
        }
        any_static |= sqlite3_column_int(st, 8);
        out->n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return store_sql_error(s, "reading heterps runs", err);
    if (!any_static) {
        store_heterps_fig4_free(out);
        memset(out, 0, sizeof *out);
    }
    return PB_OK;
}

void store_heterps_fig4_free(store_heterps_fig4 *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->rows[i].model);
    free(t->rows);
    memset(t, 0, sizeof *t);
}

void store_heterps_table_free(store_heterps_table *t)
{
    store_tables_names_free(t->models, t->n_models);
    store_tables_names_free(t->placers, t->n_placers);
    free(t->layers);
    free(t->devices);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

const store_heterps_cell *store_heterps_at(const store_heterps_table *t, const char *model,
                                           int devices, const char *placer)
{
    store_tables_names models = {t->models, t->n_models, t->n_models};
    store_tables_names placers = {t->placers, t->n_placers, t->n_placers};
    int m = store_tables_name_index(&models, model);
    int d = store_tables_device_index(t->devices, t->n_devices, devices);
    int p = store_tables_name_index(&placers, placer);
    if (m < 0 || d < 0 || p < 0)
        return NULL;
    return &t->cells[(m * t->n_devices + d) * t->n_placers + p];
}

/* ---------------------------------------------------------------- GDP */

/* Per (model, devices, method) on one cluster: runs, ok, feasible, then the means; the search
 * reach of a run is read from its curve. */
static const char store_tables_gdp_fmt[] =
    "SELECT CASE WHEN graph LIKE '%%.json' THEN substr(graph, 1, length(graph) - 5) ELSE graph"
    " END AS m, n_devices, placer, count(*), sum(status = 0), sum(status = 0 AND feasible = 1),"
    " avg(CASE WHEN status = 0 AND feasible = 1 THEN best_us END),"
    " avg(CASE WHEN status = 0 THEN search_wall_s END),"
    " avg(CASE WHEN status = 0 AND feasible = 1 THEN (SELECT min(c.wall_s) FROM curve c"
    "   WHERE c.run_id = r.run_id AND c.best_so_far_us <= 1.01 * r.best_us) END),"
    " avg(CASE WHEN status = 0 AND feasible = 1 THEN (SELECT min(c.sim_calls) FROM curve c"
    "   WHERE c.run_id = r.run_id AND c.best_so_far_us <= 1.01 * r.best_us) END)"
    " FROM (SELECT %s FROM runs) r WHERE cluster = ?1 GROUP BY m, n_devices, placer"
    " ORDER BY m, n_devices, placer";

int store_tables_gdp(store *s, const char *cluster, store_gdp_table *out, pb_error *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    int rc;
    if (store_tables_prepare_runs(s, store_tables_gdp_fmt, sizeof store_tables_gdp_fmt, &st, err))
        return PB_ERR;
    sqlite3_bind_text(st, 1, cluster, -1, SQLITE_STATIC);
    int cap = 0, oom = 0;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (out->n_rows == cap) {
            cap = cap ? 2 * cap : 16;
            store_gdp_row *grown = realloc(out->rows, (size_t)cap * sizeof *grown);
            if (!grown) {
                oom = 1;
                break;
            }
            out->rows = grown;
        }
        store_gdp_row *r = &out->rows[out->n_rows];
        *r = (store_gdp_row){
            .model = strdup(store_tables_text(st, 0)),
            .devices = sqlite3_column_int(st, 1),
            .placer = strdup(store_tables_text(st, 2)),
            .n_runs = sqlite3_column_int(st, 3),
            .n_ok = sqlite3_column_int(st, 4),
            .n_feasible = sqlite3_column_int(st, 5),
            .best_us = store_tables_real(st, 6),
            .wall_s = store_tables_real(st, 7),
            .reach_s = store_tables_real(st, 8),
            .reach_calls = store_tables_real(st, 9),
        };
        out->n_rows++;
        oom = !r->model || !r->placer;
    }
    sqlite3_finalize(st);
    if (oom)
        return pb_errorf(err, "%s: out of memory", s->path);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return store_sql_error(s, "reading GDP runs", err);
    if (out->n_rows == 0)
        return pb_errorf(err, "%s: no run used the %s cluster", s->path, cluster);
    return PB_OK;
}

void store_gdp_table_free(store_gdp_table *t)
{
    for (int i = 0; i < t->n_rows; i++) {
        free(t->rows[i].model);
        free(t->rows[i].placer);
    }
    free(t->rows);
    memset(t, 0, sizeof *t);
}

const store_gdp_row *store_gdp_at(const store_gdp_table *t, const char *model, int devices,
                                  const char *placer)
{
    for (int i = 0; i < t->n_rows; i++)
        if (t->rows[i].devices == devices && strcmp(t->rows[i].model, model) == 0 &&
            strcmp(t->rows[i].placer, placer) == 0)
            return &t->rows[i];
    return NULL;
}

/* ---------------------------------------------------------------- TAG */

/* Every run of the topology simulator with its log: model, placer, status, initial and best step
 * time, search time, simulator calls, log text (NULL without a log table), feasibility of the
 * result.  Read through the full column list, so a file of schema 1 gives NULL verdicts. */
static const char store_tables_tag_fmt[] =
    "SELECT CASE WHEN graph LIKE '%%.json' THEN substr(graph, 1, length(graph) - 5) ELSE graph"
    " END AS m, placer, status, initial_us, best_us, search_wall_s, sim_calls, %s, feasible,"
    " settings_json,"
    " (SELECT MIN(c.episode) FROM curve c WHERE c.run_id = r.run_id"
    "  AND c.best_so_far_us < r.initial_us),"
    " (SELECT c.sim_calls FROM curve c WHERE c.run_id = r.run_id"
    "  AND c.best_so_far_us < r.initial_us ORDER BY c.episode LIMIT 1),"
    " (SELECT COUNT(*) FROM curve c WHERE c.run_id = r.run_id)"
    " FROM (SELECT %s FROM runs) AS r %s WHERE simulator = 'topology' ORDER BY m, placer";

/* The placer a run is filed under: "tag-holdout" for a tag run whose parameter file was trained
 * without the run's model (its name holds "-without-MODEL."), NULL (left out) for one trained
 * without another model, else the placer. */
static const char *store_tag_placer_key(sqlite3_stmt *st)
{
    const char *model = store_tables_text(st, 0), *placer = store_tables_text(st, 1);
    const char *settings = store_tables_text(st, 9);
    if (strcmp(placer, "tag") != 0 || !strstr(settings, "-without-"))
        return placer;
    const char *base = strrchr(model, '/');
    base = base ? base + 1 : model;
    char key[256];
    snprintf(key, sizeof key, "-without-%s.", base);
    return strstr(settings, key) ? "tag-holdout" : NULL;
}

/* Index of a strategy's type name in t->types, added when new; -1 when full or out of memory. */
static int store_tag_type(store_tag_table *t, const char *name)
{
    for (int i = 0; i < t->n_types; i++)
        if (strcmp(t->types[i], name) == 0)
            return i;
    if (t->n_types == STORE_TAG_MAX_TYPES || !(t->types[t->n_types] = strdup(name)))
        return -1;
    return t->n_types++;
}

/* Table 4's figures of one "tag-strategy {...}" line; 0 when the log holds none. */
static int store_tag_strategy(store_tag_table *t, const char *log, double *rep, double *ps,
                              double *ar)
{
    const char *at = log ? strstr(log, "tag-strategy {") : NULL;
    if (!at)
        return 0;
    at += strlen("tag-strategy ");
    size_t len = strcspn(at, "\n");
    json_t *j = json_loadb(at, len, 0, NULL);
    json_t *types = json_object_get(j, "types"), *groups = json_object_get(j, "groups");
    int map[STORE_TAG_MAX_TYPES], n_types = (int)json_array_size(types), ok = j && groups;
    for (int i = 0; ok && i < n_types; i++) {
        const char *name = json_string_value(json_array_get(types, (size_t)i));
        ok = i < STORE_TAG_MAX_TYPES && name && (map[i] = store_tag_type(t, name)) >= 0;
    }
    double ops = 0, grads = 0, ps_grads = 0, ar_grads = 0;
    for (int i = 0; i < STORE_TAG_MAX_TYPES; i++)
        rep[i] = 0;
    for (size_t g = 0; ok && g < json_array_size(groups); g++) {
        json_t *G = json_array_get(groups, g), *dev = json_object_get(G, "devices");
        const char *comm = json_string_value(json_object_get(G, "comm"));
        double n_ops = (double)json_integer_value(json_object_get(G, "ops"));
        double n_grads = (double)json_integer_value(json_object_get(G, "grads"));
        double total = 0;
        for (int k = 0; k < n_types; k++)
            total += (double)json_integer_value(json_array_get(dev, (size_t)k));
        int split = comm && strcmp(comm, "mp") == 0;
        for (int k = 0; k < n_types && total > 0; k++) {
            double d = (double)json_integer_value(json_array_get(dev, (size_t)k));
            rep[map[k]] += n_ops * (split ? d / total : d);
        }
        ops += n_ops;
        grads += n_grads;
        ps_grads += comm && strcmp(comm, "ps") == 0 ? n_grads : 0;
        ar_grads += comm && strcmp(comm, "allreduce") == 0 ? n_grads : 0;
    }
    json_decref(j);
    if (!ok || ops <= 0)
        return 0;
    for (int i = 0; i < STORE_TAG_MAX_TYPES; i++)
        rep[i] /= ops;
    *ps = grads > 0 ? 100 * ps_grads / grads : 0;
    *ar = grads > 0 ? 100 * ar_grads / grads : 0;
    return 1;
}

/* Running sums of a cell, turned into means by store_tag_finish. */
static void store_tag_add(store_tag_table *t, store_tag_cell *c, sqlite3_stmt *st)
{
    c->n_runs++;
    if (sqlite3_column_int(st, 2) != 0)
        return;
    if (c->n_ok++ == 0) {
        c->initial_us = c->best_us = c->wall_s = c->sim_calls = 0;
        c->ps_pct = c->ar_pct = 0;
    }
    c->initial_us += store_tables_real(st, 3);
    c->best_us += store_tables_real(st, 4);
    c->wall_s += store_tables_real(st, 5);
    c->sim_calls += store_tables_real(st, 6);
    c->n_feasible += sqlite3_column_type(st, 8) != SQLITE_NULL && sqlite3_column_int(st, 8) == 1;
    long long points = sqlite3_column_int64(st, 12);
    if (points > 0) {
        if (c->n_curves++ == 0)
            c->beat_playout = c->beat_calls = c->beat_playout_censored = 0;
        int beat = sqlite3_column_type(st, 10) != SQLITE_NULL;
        double at = beat ? (double)sqlite3_column_int64(st, 10) : (double)points;
        c->beat_playout_censored += at;
        if (beat) {
            c->n_beat++;
            c->beat_playout += at;
            c->beat_calls += (double)sqlite3_column_int64(st, 11);
        }
    }
    double rep[STORE_TAG_MAX_TYPES], ps, ar;
    if (!store_tag_strategy(t, (const char *)sqlite3_column_text(st, 7), rep, &ps, &ar))
        return;
    if (c->n_strategies++ == 0)
        for (int i = 0; i < STORE_TAG_MAX_TYPES; i++)
            c->replication[i] = 0;
    for (int i = 0; i < STORE_TAG_MAX_TYPES; i++)
        c->replication[i] += rep[i];
    c->ps_pct += ps;
    c->ar_pct += ar;
}

static void store_tag_finish(store_tag_cell *c)
{
    if (c->n_ok > 0) {
        c->initial_us /= c->n_ok;
        c->best_us /= c->n_ok;
        c->wall_s /= c->n_ok;
        c->sim_calls /= c->n_ok;
    }
    if (c->n_curves > 0)
        c->beat_playout_censored /= c->n_curves;
    if (c->n_beat > 0) {
        c->beat_playout /= c->n_beat;
        c->beat_calls /= c->n_beat;
    } else {
        c->beat_playout = c->beat_calls = NAN;
    }
    if (c->n_strategies > 0) {
        for (int i = 0; i < STORE_TAG_MAX_TYPES; i++)
            c->replication[i] /= c->n_strategies;
        c->ps_pct /= c->n_strategies;
        c->ar_pct /= c->n_strategies;
    } else {
        c->ps_pct = c->ar_pct = NAN;
    }
}

int store_tables_tag(store *s, store_tag_table *out, pb_error *err)
{
    memset(out, 0, sizeof *out);
    int logs = store_has_table(s, "main", "log");
    char *list = store_run_select_list(s, "main", "");
    size_t len = list ? strlen(list) + sizeof store_tables_tag_fmt + 64 : 0;
    char *sql = list ? malloc(len) : NULL;
    if (sql)
        snprintf(sql, len, store_tables_tag_fmt, logs ? "log.text" : "NULL", list,
                 logs ? "LEFT JOIN log USING (run_id)" : "");
    free(list);
    if (!sql)
        return pb_errorf(err, "%s: out of memory", s->path);
    sqlite3_stmt *st;
    int prepared = store_prepare(s, sql, &st, err);
    free(sql);
    if (prepared)
        return PB_ERR;
    store_tables_names models = {0}, placers = {0};
    int rc, oom = 0;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key = store_tag_placer_key(st);
        oom = key && (store_tables_name_add(&models, store_tables_text(st, 0)) ||
                      store_tables_name_add(&placers, key));
    }
    out->models = models.items;
    out->n_models = models.n;
    out->placers = placers.items;
    out->n_placers = placers.n;
    if (!oom && rc == SQLITE_DONE && out->n_models > 0)
        out->cells = calloc((size_t)out->n_models * (size_t)out->n_placers, sizeof *out->cells);
    if (oom || (rc == SQLITE_DONE && out->n_models > 0 && !out->cells)) {
        sqlite3_finalize(st);
        return pb_errorf(err, "%s: out of memory", s->path);
    }
    if (rc != SQLITE_DONE) {
        sqlite3_finalize(st);
        return store_sql_error(s, "reading topology runs", err);
    }
    if (out->n_models == 0) {
        sqlite3_finalize(st);
        return pb_errorf(err, "%s: no run used the topology simulator", s->path);
    }
    for (int c = 0; c < out->n_models * out->n_placers; c++)
        out->cells[c] = (store_tag_cell){.initial_us = NAN,
                                         .best_us = NAN,
                                         .wall_s = NAN,
                                         .sim_calls = NAN,
                                         .ps_pct = NAN,
                                         .ar_pct = NAN,
                                         .beat_playout = NAN,
                                         .beat_calls = NAN,
                                         .beat_playout_censored = NAN};
    sqlite3_reset(st);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key = store_tag_placer_key(st);
        if (!key)
            continue;
        int m = store_tables_name_index(&models, store_tables_text(st, 0));
        int p = store_tables_name_index(&placers, key);
        store_tag_add(out, &out->cells[m * out->n_placers + p], st);
    }
    sqlite3_finalize(st);
    for (int c = 0; c < out->n_models * out->n_placers; c++)
        store_tag_finish(&out->cells[c]);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "reading topology runs", err);
}

void store_tag_table_free(store_tag_table *t)
{
    store_tables_names_free(t->models, t->n_models);
    store_tables_names_free(t->placers, t->n_placers);
    for (int i = 0; i < t->n_types; i++)
        free(t->types[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

const store_tag_cell *store_tag_at(const store_tag_table *t, const char *model, const char *placer)
{
    store_tables_names models = {t->models, t->n_models, t->n_models};
    store_tables_names placers = {t->placers, t->n_placers, t->n_placers};
    int m = store_tables_name_index(&models, model);
    int p = store_tables_name_index(&placers, placer);
    return m < 0 || p < 0 ? NULL : &t->cells[m * t->n_placers + p];
}
