/* sfb.h — TAG's sufficient factor broadcasting (paper §4.2.3, specs/tag.md §9): per gradient of a
 * replicated op, an ILP solved with CBC picks the subgraph to duplicate instead of synchronising
 * the gradient (the only user of CBC's C interface; placer plugins link it as a static library). */
#ifndef PB_SHARED_SFB_H
#define PB_SHARED_SFB_H

#include "placebench.h"

/*
 * The ILP of one gradient (paper §4.2.3, Table 2).  Gradient producer g (batch-split on D devices,
 * D > 1) feeds optimizer op l.  The candidates V are g and its ancestors (over data edges, at
 * most `depth` edges away, reached through candidates) that are batch-split on g's device group
 * with g's option; x_i = 1 duplicates candidate i.  Then
 *
 *   min (D-1) Σ_i T_i x_i + D(D-1) Σ_(j,i) b_ji L_ji / τ - sync(L_gl) x_g
 *   s.t. x_k <= Σ_(k,i), i in V x_i     for every k in V \ {g}   (l is outside V: g is the root)
 *        b_ji >= x_i - x_j               for every data edge j -> i, i in V, j batch-split
 *        x, b binary
 *
 * T_i is the compute time of one of i's replicas (mean over its devices), L the tensor's bytes,
 * τ the slowest link between g's devices (bytes/µs), and sync(L) the time a gradient's
 * synchronisation costs: 2(D-1)/D L/τ for ring AllReduce (the paper), (D-1)(D+1)/D L/τ for a
 * parameter server (push D-1 parts of L/D, pull D-1 copies of L; specs/tag.md §3.3).  An edge
 * from a producer that is not split (already whole on every device) costs nothing; an edge from
 * a split producer outside V has b_ji = x_i, folded into x_i's coefficient.
 */
typedef struct sfb_problem {
    int n;                   /* candidates; candidate 0 is the gradient producer g */
    const double *cost;      /* [n] objective coefficient of x_i: (D-1) T_i (+ folded cut edges) */
    int n_edges;             /* edges between candidates j -> i */
    const int *edge_src;     /* [n_edges] j */
    const int *edge_dst;     /* [n_edges] i */
    const double *edge_cost; /* [n_edges] D(D-1) L_ji / τ, the coefficient of b_ji */
    double saving;           /* sync(L_gl): subtracted when x_0 = 1 (already in cost[0]) */
    int no_consumer_rows;    /* 1: without the consumer constraints (the reference's ILP) */
} sfb_problem;

/*
 * The reference code's ILP (specs/tag.md §9, sfb.py/sfb.jl; mode SFB_MODE_REFERENCE): ONE ILP over
 * every op of the graph, with its constants and quirks:
 *
 *   min Σ_i (M_i-1) T_i x_i + Σ_(j,i) M_j(M_j-1) S_ji b_ji / B - Σ_(g,l) 2(M_g-1)/M_g S_gl x_g / B
 *       + Σ_i x_i
 *   s.t. b_ji >= x_i - x_j for every data edge,  x_i = 0 unless M_i >= 2 and i is all-reduced
 *
 * M_i = the op's replica count; T_i = the mean, over the cluster's devices d, of the op's
 * whole-batch time on device (d in i's group ? 1 : 0) (the reference indexes devices by the 0/1
 * mask values); S = elements (bytes / 4); B = 2810 (B/µs, the reference's constant); (g, l) the
 * gradient pairs.  No consumer constraint.  Every op with x_i = 1 is duplicated (the reference's
 * code 4).
 *
 * In both modes the ILP chooses ops, as the reference's does, and a chosen op gets
 * PB_REPL_DUPLICATE; the strategy compiler's PB_COMPILE_BASE_GROUPS (the topology simulator's
 * default, option base_groups) then stops the batch split of the op's whole base group, as the
 * reference's code 4 does (specs/tag.md §3.2, §9).  The ILP does not price the members that come
 * along; on the zoo models at batch 4 on tag-sfb they change SFB's step by at most 0.8 % in
 * SFB_MODE_GRADIENT and up to 13 % in SFB_MODE_REFERENCE (REPRODUCE.md, "TAG — SFB").
 */
enum { SFB_MODE_GRADIENT = 0, SFB_MODE_REFERENCE = 1 };

/* How SFB_MODE_GRADIENT prices an all-reduced gradient's synchronisation, sync(L): the paper's
 * ring formula 2(D-1)/D L/τ, or the topology simulator's collective model at its default
 * coefficients (TAG's NCCL fit, specs/tag.md §4.4): max(trunc(s a1 KB + s b1), trunc(s a2 KB +
 * s b2)) µs for KB = (L/D bytes) >> 10, s = 2810 / the group's bandwidth (the slowest link
 * between its machines, else inside its machine).  A PS gradient is priced by the formula in
 * both. */
enum { SFB_SYNC_PAPER = 0, SFB_SYNC_NCCL = 1 };

/* How SFB runs (the placers' sfb_* options). */
typedef struct sfb_options {
    int depth;           /* ancestors at most this many edges above g; 0 = no limit */
    double time_limit_s; /* CBC's time limit per gradient; the best solution found then is used */
    int max_candidates;  /* larger neighbourhoods are cut to the nearest ones (BFS order) */
    int mode;            /* SFB_MODE_GRADIENT (the paper's, per gradient) or _REFERENCE */
    int sync;            /* SFB_SYNC_PAPER or SFB_SYNC_NCCL (SFB_MODE_GRADIENT only) */
} sfb_options;

/* What one gradient's ILP gave. */
typedef struct sfb_record {
    int apply;        /* the optimizer op (op-graph node) */
    int gradient;     /* its gradient producer g */
    int n_candidates; /* binaries x */
    int n_cut_vars;   /* binaries b */
    int n_rows;       /* constraints */
    int n_duplicated; /* candidates with x = 1 */
    double objective; /* µs; 0 when nothing is duplicated */
    double solve_s;   /* wall time of building and solving the ILP with CBC */
    int status;       /* SFB_OPTIMAL, SFB_TIME_LIMIT (best found used), SFB_NO_SOLUTION */
} sfb_record;

enum { SFB_OPTIMAL = 0, SFB_TIME_LIMIT = 1, SFB_NO_SOLUTION = 2 };

/* Solves problem p with CBC: x (caller-owned, p->n entries) receives the 0/1 choice and
 * *objective its value.  limits: CBC's time limit in seconds (<= 0: none).  *status as in
 * sfb_record; SFB_NO_SOLUTION leaves x all 0.  *n_cut_vars and *n_rows (may be NULL) receive the
 * model's size. */
int sfb_solve(const sfb_problem *p, double time_limit_s, int *x, double *objective, int *status,
              int *n_cut_vars, int *n_rows, pb_error *err);

/* The objective of choice x for p (b_ji = max(0, x_i - x_j)), and whether x satisfies the
 * consumer constraints (1) or not (0) in *feasible.  For tests and checks. */
double sfb_objective(const sfb_problem *p, const int *x, int *feasible);

/* Runs SFB (o->mode) on strategy s (REPLICATED, for g->grouped, as placers return it; borrowed) of
 * the op graph g on cluster cl: every optimizer op replicated with ALLREDUCE or PS whose gradient
 * is batch-split gets its ILP, and every op chosen by any of them gets PB_REPL_DUPLICATE in
 * op_replication (caller-owned, g->n_nodes entries; -1 for the ops left as the strategy has
 * them).  The caller sets s->op_replication = op_replication to apply it.  record (may be NULL)
 * is called once per gradient, in node order.  *n_duplicated (may be NULL) receives the ops
 * duplicated. */
int sfb_apply(const pb_graph *g, const pb_cluster *cl, const pb_strategy *s, const sfb_options *o,
              int *op_replication, int *n_duplicated,
              void (*record)(void *ctx, const sfb_record *r), void *record_ctx, pb_error *err);

#endif
