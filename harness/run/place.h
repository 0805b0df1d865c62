/* place.h — one placer on one graph in this process: the simulator, traversal order, embedding,
 * problem and host table of a run on a given cluster, built the same way for the sweep runner's
 * workers, `placebench place` and the placer benchmark. */
#ifndef PB_PLACE_H
#define PB_PLACE_H

#include "plan.h"

/* Everything one run needs; all pointers are borrowed for the call. */
typedef struct place_request {
    const pb_graph *graph; /* op-level graph; graph->grouped is what the placer places */
    /* Built by the caller (for a sweep's runs: by the plan, once), so a run never enters Lua. */
    const pb_cluster *cluster;
    const plan_plugin *simulator; /* required */
    const plan_plugin *placer;    /* required */
    const plan_plugin *embedding; /* entry NULL (or pointer NULL) = none */
    const plan_plugin *traversal; /* entry NULL (or pointer NULL) = none */
    unsigned long long seed;      /* the run's seed; each plugin gets pb_seed_derive(seed, kind) */
    int episodes;                 /* budget of learned placers, 0 = plugin default */
    long long sim_calls;          /* budget of search placers, 0 = plugin default */
    double timeout_s;             /* > 0: the host's deadline passes at 90% of it */
    const char *log_id;           /* prefix of the plugin's log lines on stderr */
    /* Called for every learning-curve point the placer reports (may be NULL). */
    void (*progress)(void *ctx, const pb_progress *p);
    void *progress_ctx;
    /* Called with every line the plugins log, debug level included (may be NULL); lines of
     * level info and above also go to stderr. */
    void (*log)(void *ctx, int level, const char *msg);
    void *log_ctx;
} place_request;

typedef struct place_result {
    double initial_us;   /* the placer's initial placement's step time, NAN when none */
    double best_us;      /* step time of the returned strategy, simulated by the harness; NAN
                            when the run failed */
    long long sim_calls; /* simulator calls the placer made (the final check not counted) */
    double wall_s;       /* wall time of place() */
    double cpu_s;        /* CPU time of this process during place() */
    /* Where the time went (bench placer): CPU seconds of the placer's simulate calls and the
     * events they simulated, measured by the host; the forward and update phases as the placer
     * last reported them (pb_progress, ABI 1.6; 0 when it does not). */
    double sim_cpu_s;
    long long sim_events;
    double forward_cpu_s, forward_flop, update_cpu_s, update_flop;
    int *best_device; /* caller-owned [graph->grouped->n_nodes], or NULL: receives the
                         returned placement */
    double *peak_mem; /* caller-owned [cluster->n_devices], or NULL: peak memory of the returned
                         placement */
    /* The simulator's verdict on the returned strategy: feasibility, and the throughput
     * (samples/s) and monetary cost (USD) of simulators that model them, 0 otherwise. */
    int feasible;
    double throughput, monetary_cost;
    /* The kind of the returned strategy (pb_strategy_kind): for REPLICATED, best_device holds
     * device-group indices, not devices. */
    int kind;
    /* Caller-owned [graph->n_nodes] (op level), or NULL: the returned strategy's per-op
     * replication overrides (pb_strategy.op_replication, e.g. SFB's duplicates), -1 where the
     * op keeps its group's option or the strategy has none. */
    int *best_op_replication;
} place_result;

/* Runs the request.  res is filled in all cases (NAN where unknown); returns PB_ERR with the
 * message when setup, the placer or the final evaluation failed. */
int place_run(const place_request *q, place_result *res, pb_error *err);

/* Runs k requests of the same placer and graph on as many devices (they may differ in seed,
 * traversal order, options and cluster) in one call of the placer's place_multi, which interleaves
 * their work; each res[r] (and, on failure, errs[r]) is what place_run gives request r alone,
 * except wall_s and cpu_s, the group's divided by k.  When the placer has no place_multi, the
 * requests differ in placer, graph or device count, or the group call fails before any run has
 * reported a curve point (e.g. runs that cannot go in lock-step), each request runs alone with
 * place_run; a group call that fails later gives every run its error (their curves are partly
 * sent). Returns PB_ERR when any run failed. */
#define PLACE_MAX_INTERLEAVE 16
int place_run_multi(const place_request *qs, int k, place_result *res, pb_error *errs);

/* What place_train reports per graph: the last learning-curve point the placer sent through
 * that graph's host (best_us NAN when it sent none) and the simulator calls made on it. */
typedef struct place_train_result {
    double best_us;
    long long sim_calls;
    int curve_points;
} place_train_result;

/* Trains one instance of the placer of qs[0] on the graphs of qs[0..n) (placer ops train(), each
 * problem simulated by its own host: pb_problem.host), then saves its parameters to save_path
 * when not NULL (placer ops save()).  Every request names the same placer; the cluster, simulator
 * and seed of each graph are its request's.  res[n] is filled; *wall_s receives the training
 * time.  Returns PB_ERR with the message when setup, training or saving failed. */
int place_train(const place_request *qs, int n, const char *save_path, place_train_result *res,
                double *wall_s, pb_error *err);

/* Resolves plugin `name` of `kind` with options "key=value" texts (n of them) into *out
 * (caller frees with place_plugin_free); `where` prefixes errors. */
int place_plugin_resolve(loader *l, int kind, const char *name, const char *const *kv, int n,
                         const char *where, plan_plugin *out, pb_error *err);
void place_plugin_free(plan_plugin *pp);

#endif
