/* store_tables.h — the reproduced papers' tables computed from a results file: best-order win
 * counts (traversal-order paper, Tables II-IV), improvement, computation time and EC ratio
 * per embedding (embedding paper, Tables 1-3), and monetary cost, throughput and scheduling time
 * per model and method (HeterPS, Tables 2-3 and Figs. 5-10). */
#ifndef PB_STORE_TABLES_H
#define PB_STORE_TABLES_H

#include "store.h"

/*
 * Win counts of traversal orders.  Over the runs that finished ok with the given placer (and
 * embedding, when not NULL), grouped by (dataset, n_devices): for every graph and order, the
 * best step time found by the end of episode e (the curve's best_so_far_us at episode e, 0-based
 * as stored, so 9/19/49 are the ends of the 10th/20th/50th episodes) is averaged over the
 * repeats; the order with the lowest mean wins that graph.  Orders tied for the lowest mean all
 * win (each tie is counted in `ties`).  A graph counts only when every order of its group has a
 * run reaching episode e.
 */
typedef struct store_order_wins {
    char **datasets; /* [n_datasets] owned, sorted */
    int n_datasets;
    int *devices; /* [n_devices] sorted device counts */
    int n_devices;
    int *episodes; /* [n_episodes] as requested */
    int n_episodes;
    char **orders; /* [n_orders] owned traversal names, sorted */
    int n_orders;
    /* Cell (dataset i, devices j, episode k): index c = (i * n_devices + j) * n_episodes + k.
     * wins[c * n_orders + o]: graphs order o won; graphs[c]: graphs compared (0: no data);
     * ties[c]: graphs won by more than one order. */
    int *wins;
    int *graphs;
    int *ties;
} store_order_wins;

/* Fills *out (caller frees with store_order_wins_free, also after an error).  An error when no
 * run matches, or when embedding is NULL and the placer's runs use several embeddings. */
int store_tables_order_wins(store *s, const char *placer, const char *embedding,
                            const int *episodes, int n_episodes, store_order_wins *out,
                            pb_error *err);
void store_order_wins_free(store_order_wins *w);

/* One (dataset, devices, embedding) cell of the embedding tables; means over the ok runs. */
typedef struct store_embedding_cell {
    int n_runs, n_graphs;   /* 0 runs: no data, the rest NaN */
    double improvement_pct; /* mean of (initial - best) / initial * 100 */
    double wall_s;          /* mean computation (search wall) time */
    double ec;              /* mean of (initial - best) / initial / wall_s, per second */
} store_embedding_cell;

/*
 * Improvement, computation time and EC ratio per embedding.  Over the runs that finished ok with
 * the given placer (and traversal, when not NULL) and a finite positive initial step time,
 * grouped by (dataset, n_devices, embedding).  `overall[e]` is Table 3's row: the mean over the
 * (dataset, devices) cells that embedding e has data for, of the cell means, as the paper
 * averages over datasets and device counts.
 */
typedef struct store_embedding_table {
    char **datasets; /* [n_datasets] owned, sorted */
    int n_datasets;
    int *devices; /* [n_devices] sorted */
    int n_devices;
    char **embeddings; /* [n_embeddings] owned, sorted */
    int n_embeddings;
    store_embedding_cell *cells;   /* [(i * n_devices + j) * n_embeddings + e] */
    store_embedding_cell *overall; /* [n_embeddings]; n_runs = total runs */
} store_embedding_table;

/* Fills *out (caller frees with store_embedding_table_free, also after an error).  An error when
 * no run matches. */
int store_tables_embeddings(store *s, const char *placer, const char *traversal,
                            store_embedding_table *out, pb_error *err);
void store_embedding_table_free(store_embedding_table *t);

/* One (model, resource types, method) cell of the HeterPS tables. */
typedef struct store_heterps_cell {
    int n_runs;     /* 0: no data, the rest NaN */
    int n_ok;       /* runs that finished ok */
    int n_verdict;  /* ok runs with a stored cost (schema 2 files) */
    int n_feasible; /* ok runs whose plan the simulator found feasible */
    double cost;    /* mean monetary cost (USD) over the ok runs with a verdict */
    double cost_min, cost_max;
    double throughput; /* mean throughput (examples/s) over the same runs */
    double wall_s;     /* mean scheduling (search wall) time over the ok runs */
} store_heterps_cell;

/*
 * Cost, throughput and scheduling time of the runs of the heterps simulator, grouped by model
 * (the graph file's name without ".json"), resource types (n_devices) and method (placer).
 * Failed runs count in n_runs only: a method that failed every run has n_ok = 0.
 */
typedef struct store_heterps_table {
    char **models; /* [n_models] owned, sorted */
    int n_models;
    int *layers;  /* [n_models] layers (nodes) of each model's graph */
    int *devices; /* [n_devices] sorted resource-type counts */
    int n_devices;
    char **placers; /* [n_placers] owned, sorted */
    int n_placers;
    store_heterps_cell *cells; /* [(model * n_devices + devices) * n_placers + placer] */
} store_heterps_table;

/* Fills *out (caller frees with store_heterps_table_free, also after an error).  An error when
 * no run used the heterps simulator. */
int store_tables_heterps(store *s, store_heterps_table *out, pb_error *err);
void store_heterps_table_free(store_heterps_table *t);
/* One (model, throughput-limit scale, provisioning) group of Fig. 4's runs. */
typedef struct store_heterps_fig4_row {
    char *model;     /* owned; the graph file's name without ".json" */
    double tl_scale; /* the heterps simulator's tl_scale (1 when not set) */
    int provision;   /* 0 = heterps (PROVISION), 1 = sta-ratio, 2 = sta-ps-ratio */
    int n_runs, n_ok, n_feasible;
    double cost;       /* mean monetary cost (USD) over the ok, feasible runs; NaN when none */
    double throughput; /* mean throughput over the same runs */
} store_heterps_fig4_row;

typedef struct store_heterps_fig4 {
    store_heterps_fig4_row *rows; /* [n] by model, tl_scale, provision */
    int n;
} store_heterps_fig4;

/* The runs of `placer` under the heterps simulator grouped for Fig. 4 (caller frees with
 * store_heterps_fig4_free, also after an error); rows of every provisioning, n = 0 when no run
 * used a static one (then there is no Fig. 4). */
int store_tables_heterps_fig4(store *s, const char *placer, store_heterps_fig4 *out, pb_error *err);
void store_heterps_fig4_free(store_heterps_fig4 *t);
/* The cell of (model, devices, placer); NULL when any is absent.  Borrowed from t. */
const store_heterps_cell *store_heterps_at(const store_heterps_table *t, const char *model,
                                           int devices, const char *placer);

/* One (model, devices, placer) cell of GDP's Table 1: the runs on the GDP cluster. */
typedef struct store_gdp_row {
    char *model; /* graph file name without ".json" (owned) */
    int devices;
    char *placer; /* owned */
    int n_runs, n_ok, n_feasible;
    double best_us; /* mean best step time over the ok runs whose placement fits (NaN: none) */
    double wall_s;  /* mean search wall time over the ok runs */
    /* Means over the feasible ok runs of when the search first came within 1 % of its final
     * best step time (the curve's first point with best_so_far_us <= 1.01 best_us): search wall
     * time and simulator calls.  NaN without curve points. */
    double reach_s, reach_calls;
} store_gdp_row;

typedef struct store_gdp_table {
    store_gdp_row *rows; /* [n_rows] by model, devices, placer */
    int n_rows;
} store_gdp_table;

/* The runs on cluster `cluster` (gdp-p100), grouped by (model, devices, placer).  Fills *out
 * (caller frees with store_gdp_table_free, also after an error); an error when there is none. */
int store_tables_gdp(store *s, const char *cluster, store_gdp_table *out, pb_error *err);
void store_gdp_table_free(store_gdp_table *t);
/* The row of (model, devices, placer), or NULL.  Borrowed from t. */
const store_gdp_row *store_gdp_at(const store_gdp_table *t, const char *model, int devices,
                                  const char *placer);

/* ---------------------------------------------------------------- TAG */

enum { STORE_TAG_MAX_TYPES = 8 };

/* One (model, placer) cell of the TAG tables: means over the ok runs. */
typedef struct store_tag_cell {
    int n_runs, n_ok;  /* 0 ok runs: the rest NaN */
    int n_feasible;    /* ok runs whose strategy fits in memory (the baselines may not) */
    double initial_us; /* mean initial step time (the MCTS placers: DP-NCCL's) */
    double best_us;    /* mean best step time */
    double wall_s;     /* mean search wall time */
    double sim_calls;  /* mean simulator calls */
    int n_strategies;  /* ok runs whose log holds a "tag-strategy" line (tag, pure-mcts) */
    /* Table 4, means over those runs: GPUs of each type (table types) an op is replicated onto,
     * averaged over the ops (an op of a model-parallel group sits on one device of its set:
     * each type counts its share of the set), and the share of optimizer ops (gradients) whose
     * group synchronises by PS / AllReduce, in %. */
    double replication[STORE_TAG_MAX_TYPES];
    double ps_pct, ar_pct;
    /* TAG's Table 7, from the run's curve: the ok runs whose search beat its initial strategy
     * (DP-NCCL; the first point with best_so_far_us < initial_us, i.e. reward > 0), the mean
     * 0-based playout (episode) index of that point and the mean simulator calls by then over
     * those runs, and the mean over all ok runs with curves counting a run that never beat it at
     * its number of playouts (a lower bound of the uncensored mean). */
    int n_curves, n_beat;
    double beat_playout, beat_calls, beat_playout_censored;
} store_tag_cell;

/*
 * Step time, search time and TAG's strategy statistics of the runs of the topology simulator,
 * grouped by model (the graph file's name without ".json") and placer.  Failed runs count in
 * n_runs only.  TAG's Table 8 (hold-out model): a `tag` run whose options name a parameter file
 * containing "-without-MODEL." is filed under the placer "tag-holdout" when MODEL is the run's
 * model (the network never saw it) and left out on the other models.
 */
typedef struct store_tag_table {
    char **models; /* [n_models] owned, sorted */
    int n_models;
    char **placers; /* [n_placers] owned, sorted */
    int n_placers;
    char *types[STORE_TAG_MAX_TYPES]; /* GPU types of the strategies, first seen first */
    int n_types;
    store_tag_cell *cells; /* [model * n_placers + placer] */
} store_tag_table;

/* Fills *out (caller frees with store_tag_table_free, also after an error).  An error when no run
 * used the topology simulator. */
int store_tables_tag(store *s, store_tag_table *out, pb_error *err);
void store_tag_table_free(store_tag_table *t);
/* The cell of (model, placer); NULL when either is absent.  Borrowed from t. */
const store_tag_cell *store_tag_at(const store_tag_table *t, const char *model, const char *placer);

#endif
