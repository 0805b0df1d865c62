/* store.h — the results store: one SQLite file per experiment (the only user of SQLite). */
#ifndef PB_STORE_H
#define PB_STORE_H

#include "placebench.h"

#include <stdio.h>

typedef struct store store;

/* Outcome of a run. */
typedef enum store_status {
    STORE_OK = 0,
    STORE_FAILED = 1,  /* the plugin returned an error */
    STORE_CRASHED = 2, /* the worker died on a signal or exited without a result */
    STORE_TIMEOUT = 3  /* killed at the run's wall-time limit */
} store_status;

/* One finished run, as written in one transaction.  Strings are borrowed by store_put_run. */
typedef struct store_run {
    const char *run_id; /* hash of the resolved settings (primary key) */
    const char *experiment;
    const char *settings_json; /* the resolved settings, canonical JSON */
    const char *dataset;       /* family or folder the graph came from */
    const char *graph;         /* graph name */
    const char *graph_checksum;
    int n_nodes; /* of the graph placers see */
    int n_devices;
    const char *cluster;
    const char *simulator, *simulator_version;
    const char *placer, *placer_version;
    const char *embedding, *embedding_version; /* NULL or "" when none */
    const char *traversal, *traversal_version; /* NULL or "" when none */
    int repeat;
    unsigned long long seed;
    const char *placebench_version; /* "0.1.0 (git abcdef)" */
    int status;                     /* store_status */
    const char *error;              /* NULL on success */
    double initial_us;              /* NAN when the placer reported none */
    double best_us;                 /* NAN when the run failed */
    double search_wall_s;
    long long sim_calls;
    double started_at, finished_at; /* Unix seconds */
    const char *log;                /* what the run's plugins wrote (stdout, stderr); NULL: none */
    /* The simulator's verdict on the returned strategy (pb_eval): feasibility, throughput
     * (samples/s) and monetary cost (USD), 0 when the simulator does not model them.  Stored as
     * NULL unless the run finished ok, and NULL in rows of files written before schema 2. */
    int feasible;
    double throughput, monetary_cost;
    const char *graph_origin; /* model/graph.h graph_origin; NULL when unknown (schema 3) */
} store_run;

/* One learning-curve point of a run. */
typedef struct store_curve_point {
    int episode;
    double episode_best_us;
    double best_so_far_us;
    long long sim_calls;
    double wall_s;
} store_curve_point;

/* Opens (create != 0: creating if missing) a results file; caller frees with store_close.
 * Opening a file of a newer schema is an error; a file of an older schema is brought up to date
 * (columns added, nothing removed). */
int store_open(const char *path, int create, store **out, pb_error *err);
void store_close(store *s);

/* Records the experiment's metadata (name, resolved config JSON, seed) once per file; a file
 * that already holds another experiment's runs is an error naming both. */
int store_set_experiment(store *s, const char *name, const char *config_json,
                         unsigned long long seed, pb_error *err);

/* Non-zero when run_id is already stored. */
int store_has_run(store *s, const char *run_id);

/* Writes a run and its curve in one transaction.  A run_id already present is left as it is
 * (returns PB_OK): every run is stored exactly once. */
int store_put_run(store *s, const store_run *r, const store_curve_point *curve, int n_curve,
                  pb_error *err);

/* What merge does with a run id whose rows differ (in status, results, settings or graph
 * checksum) between two files: refuse, keep the first file's row, or the last file's. */
enum { STORE_PREFER_NONE = 0, STORE_PREFER_FIRST = 1, STORE_PREFER_LAST = 2 };

/* What store_claim_run found. */
enum {
    STORE_CLAIM_TAKEN = 0,  /* the run is this process's to compute */
    STORE_CLAIM_STORED = 1, /* already stored: nothing to do */
    STORE_CLAIM_HELD = 2    /* claimed by another process that is still alive */
};

/*
 * Claims run_id for this process before it is computed, so that several processes sweeping one
 * results file (two `run` commands, shards writing to one file) compute each run once.  A claim
 * expires when its process is gone: the claim records the host name, the boot id
 * (/proc/sys/kernel/random/boot_id), the pid and the pid's start time, and a claim made on this
 * host by a process that no longer exists (or in an earlier boot) is taken over.  A claim made on
 * another host (a file on a shared file system) is honoured until its run is stored.
 * store_put_run removes the run's claim.  *outcome receives a STORE_CLAIM_* value.
 */
int store_claim_run(store *s, const char *run_id, int *outcome, pb_error *err);

/* Removes every claim this process holds (runs it claimed but did not store). */
int store_release_claims(store *s, pb_error *err);

/* Joins shard files into `out` (created if missing); runs already present are skipped.  Runs
 * whose rows conflict between the files (an existing out counts as the first) are an error naming
 * them and the files, with nothing written, unless `prefer` picks a side; then *resolved receives
 * a report of the resolved runs (caller frees; NULL when there were none). */
int store_merge(const char *out, const char *const *inputs, int n, int prefer, char **resolved,
                pb_error *err);

/* Writes every run (one row each, all columns) as CSV or JSON lines. */
int store_export_runs(store *s, FILE *f, int jsonl, pb_error *err);
/* Writes every curve point (run_id plus the point) as CSV or JSON lines. */
int store_export_curves(store *s, FILE *f, int jsonl, pb_error *err);
/* Writes every run's log (run_id, text) as CSV or JSON lines. */
int store_export_logs(store *s, FILE *f, int jsonl, pb_error *err);

/* Number of stored runs, or -1 on error. */
long long store_count_runs(store *s);

/* Opens an existing results file for reading only (report, export, plot); caller frees with
 * store_close.  Same refusals as store_open.  A file of an older schema is read as it is: the
 * columns it lacks read as NULL. */
int store_open_readonly(const char *path, store **out, pb_error *err);
/* The path the store was opened with; borrowed, valid until store_close. */
const char *store_path(const store *s);

/* ---------------------------------------------------------------- report (store_report.c) */

enum { STORE_REPORT_MARKDOWN = 0, STORE_REPORT_CSV = 1 };

/*
 * Writes the summary table: one row per (dataset, n_devices, placer, embedding, traversal),
 * sorted by those columns (absent embedding/traversal first): runs ok / not ok, then over the ok
 * runs the mean initial and best step time (us), the mean improvement % over the initial
 * placement ((initial - best) / initial * 100, over runs where both are finite and initial > 0),
 * the mean search wall time (s) and the mean simulator calls.  Markdown also lists every run that
 * did not finish ok (run_id, placer, graph, status, error) below the table.  Empty means are
 * blank in CSV and "-" in markdown.
 */
int store_report_summary(store *s, FILE *f, int format, pb_error *err);

/* Name of a store_status ("ok", "failed", "crashed", "timeout"; "status N" otherwise);
 * static storage, or buf when unknown. */
const char *store_status_name(int status, char *buf, size_t n);

/* ---------------------------------------------------------------- plot data (store_plot.c) */

/*
 * Data behind the plots, over the runs that finished ok.  Panels are (dataset, n_devices) pairs
 * ("cifar10, 3 devices", named by the dataset entry's last path component), series are (placer,
 * embedding, traversal) combinations ("placeto / placeto-gnn / topo"), both numbered from 0 in
 * sorted order, only those that have data.  For each (panel, series[, episode]) the runs are
 * first averaged per graph over their repeats; then:
 *   mean_us  mean over graphs of the per-graph means,
 *   sd_us    pooled within-graph standard deviation over repeats
 *            sqrt(sum_g (n_g - 1) s_g^2 / sum_g (n_g - 1)); NaN when no graph has 2 runs,
 *   min_us / max_us  over all the runs.
 */
typedef struct store_plot_row {
    int panel, series;
    int episode; /* learning curves: the episode; best step times: -1 */
    double mean_us, sd_us, min_us, max_us;
    int n_graphs, n_runs;
} store_plot_row;

typedef struct store_plot_data {
    char **panels; /* [n_panels] owned labels */
    int n_panels;
    char **series; /* [n_series] owned labels */
    int n_series;
    store_plot_row *rows; /* [n_rows] sorted by panel, series, episode */
    int n_rows;
} store_plot_data;

/* Learning curves: best_so_far_us of the curve points by episode.  Caller frees *out with
 * store_plot_data_free (also after an error). */
int store_plot_curves(store *s, store_plot_data *out, pb_error *err);
/* Learning curves relative to the initial placement: best_so_far_us / initial_us of the runs
 * with a finite positive initial step time, so the row values are fractions, not us (1: no
 * better than the initial placement). */
int store_plot_curves_relative(store *s, store_plot_data *out, pb_error *err);
/* Best step times: best_us of the runs (finite values only). */
int store_plot_bests(store *s, store_plot_data *out, pb_error *err);
void store_plot_data_free(store_plot_data *d);

/* Where `make install` puts the gnuplot scripts (PB_PLOTS_INSTALL_DIR); static storage. */
const char *store_plot_install_dir(void);

/* ---------------------------------------------------------------- leaderboard (store_board.c) */

/* One (problem, placer) cell of a leaderboard: a problem is (graph, devices, cluster, simulator),
 * an entry a placer with the embedding and traversal it used.  Means are over the ok runs (NAN
 * when none finished ok). */
typedef struct store_board_row {
    char *problem; /* "cifar10-01, 3 devices, placeto-k80, placeto" (owned) */
    char *entry;   /* "placeto / placeto-gnn / topo" (owned) */
    int n_runs, n_ok;
    double mean_us, mean_search_s, mean_sim_calls;
    /* Monetary cost over the ok runs whose best strategy is feasible (NAN when none or no cost
     * recorded), and how many they are. */
    double mean_cost;
    int n_feasible;
} store_board_row;

/* Appends the file's cells, sorted by problem then entry, to *rows[*n] (grown with realloc; free
 * with store_board_rows_free, also after an error). */
int store_board_rows(store *s, store_board_row **rows, int *n, pb_error *err);
void store_board_rows_free(store_board_row *rows, int n);

#endif
