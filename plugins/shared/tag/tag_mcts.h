/* tag_mcts.h — TAG's strategy search (specs/tag.md §6-7): MCTS over op groups with PUCT, priors
 * from a tag_prior_fn (tag_search.h) or uniform, reward the squashed speed-up over DP-NCCL. */
#ifndef PB_TAG_MCTS_H
#define PB_TAG_MCTS_H

#include "tag_search.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TAG_TASKS_MACHINE = 0, TAG_TASKS_TYPE = 1 };  /* tag_mcts_opts.device_groups */
enum { TAG_PUCT_PARENT = 0, TAG_PUCT_CHILDREN = 1 }; /* tag_mcts_opts.puct_visits */

/* The options of the MCTS placers (their option tables fill this struct). */
typedef struct tag_mcts_opts {
    long long playouts;   /* MCTS playouts (each at most one simulator call) */
    long long max_groups; /* METIS op groups, at most */
    double balance;       /* METIS imbalance (ubvec) of the grouping */
    int device_groups;    /* TAG_TASKS_* */
    double c_puct;        /* exploration constant; 0: sqrt(children / 10) as TAG's code */
    int puct_visits;      /* TAG_PUCT_*: N in sqrt(N) is the parent's visits or Σ children's */
    int duplicate_action; /* offer TAG_COMM_DUPLICATE besides PS, AllReduce, MP */
    int shuffle;          /* shuffle a node's children after expansion (TAG's code does) */
    int stop_when_better; /* stop at the first playout whose leaf beats the baseline (reward > 0) */
    const char *params;   /* tag: the GNN's parameter file */
} tag_mcts_opts;

typedef struct tag_mcts tag_mcts;

/*
 * Analyses problem p for the search (op groups, device groups, actions; tag_search.h) and
 * evaluates nothing yet.  p and host are borrowed until tag_mcts_free.  Errors: more than 10
 * device groups (the action space is 3 (2^T - 1)), a grouped graph that is not p->op_graph's,
 * METIS failure, out of memory.
 */
int tag_mcts_new(const pb_problem *p, const pb_host *host, const tag_mcts_opts *o, tag_mcts **out,
                 pb_error *err);
void tag_mcts_free(tag_mcts *m);

/*
 * Runs the search: the baseline (DP-NCCL, or model parallelism over every device when it runs
 * out of memory), then playouts until o->playouts, the problem's budget (simulator calls, wall
 * time) or the host's deadline; progress after every playout.  prior NULL: uniform priors (pure
 * MCTS).  best (sized for p->graph) receives the REPLICATED strategy of the best leaf, its arrays
 * owned by m; *initial_us the baseline's step time.  Fails with a message naming the peak
 * memory when no evaluated strategy fits in memory.
 */
int tag_mcts_run(tag_mcts *m, tag_prior_fn prior, void *prior_ctx, uint64_t seed, pb_strategy *best,
                 double *initial_us, pb_error *err);

/* The spec's reward (specs/tag.md §6): -1 when infeasible, else r = base_us / t_us - 1, and
 * r^(1/4) when r > 1. */
double tag_reward(double base_us, double t_us, int feasible);

/* The root state (static analysis; no decisions), valid until tag_mcts_free. */
const tag_state *tag_mcts_state(const tag_mcts *m);

/*
 * One line describing the best strategy for reports (report tag): the device types, and per op
 * group in MCTS order its comm option ("ps", "allreduce", "mp", "duplicate", or "single" on one
 * device), op and optimizer-op counts, time at batch B and device count per type, as JSON after
 * the prefix "tag-strategy ".  Written into buf (n bytes).
 */
void tag_mcts_describe(const tag_mcts *m, char *buf, size_t n);

/*
 * Self-play for training the GNN (specs/tag.md §7.4).  From the root, for i = 0 .. G/4 - 1 (at
 * least once): playouts until the root has max(2, min((G - i) 2^T 8, limit)) visits (or the
 * problem's budget or the host's deadline stops them; with no child visited it stops), then
 * record(ctx, state, visits) with the root's state (its decided actions and the feedback of its own
 * evaluation, simulated again with the run-time feedback) and the visit count of every action's
 * child (0 for none), then move the root to a child drawn with probability proportional to its
 * visits.  prior NULL: uniform. Everything given to record is borrowed for the call.  Deterministic
 * in seed.
 */
typedef int (*tag_visit_fn)(void *ctx, const tag_state *st, const double *visits_per_action,
                            pb_error *err);
int tag_mcts_selfplay(tag_mcts *m, tag_prior_fn prior, void *prior_ctx, uint64_t seed,
                      long long limit, tag_visit_fn record, void *record_ctx, pb_error *err);

#ifdef __cplusplus
}
#endif

#endif
