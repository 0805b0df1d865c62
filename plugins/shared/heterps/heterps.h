/* heterps.h — the HeterPS cost model (specs/heterps.md §2-4): layer profiles, stages, the
 * per-example reading of Formulas 1-7, parameter-server cores, provisioning (Formulas 11-13,
 * balanced or paper mode with Newton), the penalised objective every searcher minimises, and the
 * StaRatio / StaPSRatio static provisioning baselines.  Shared by the heterps simulator and the
 * HeterPS placers. */
#ifndef HETERPS_H
#define HETERPS_H

#include "placebench.h"

/* Layer kinds of §4, in the order of the policy's one-hot feature. */
typedef enum heterps_kind {
    HETERPS_EMB = 0,
    HETERPS_POOL,
    HETERPS_CONCAT,
    HETERPS_FC,
    HETERPS_RNN,
    HETERPS_SIM,
    HETERPS_SAMPLER,
    HETERPS_DOT,
    HETERPS_LOSS,
    HETERPS_REDUCE,
    HETERPS_N_KINDS
} heterps_kind;

/* Resource roles: type 0 of a plan is a CPU core, types >= 1 are V100s of price classes. */
enum { HETERPS_CPU = 0, HETERPS_GPU = 1, HETERPS_N_ROLES = 2 };

/* The descriptors of one layer, per example (§4). */
typedef struct heterps_layer {
    int kind;      /* heterps_kind */
    double flops;  /* forward FLOPs */
    double ids;    /* sparse ids looked up (EMB) */
    double dim;    /* embedding width (EMB) */
    double rows;   /* table rows (EMB) */
    double steps;  /* recurrent steps (RNN) */
    double in;     /* float elements in */
    double out;    /* float elements out */
    double cut;    /* live floats crossing a cut after the layer */
    double params; /* dense parameters */
} heterps_layer;

/* The hardware constants of §4's table for one role, and the profiling constants. */
typedef struct heterps_hw {
    double r_fc[HETERPS_N_ROLES], r_rnn[HETERPS_N_ROLES], c_id[HETERPS_N_ROLES];
    double r_mem[HETERPS_N_ROLES], o[HETERPS_N_ROLES], o_step[HETERPS_N_ROLES];
    double w[HETERPS_N_ROLES], lambda[HETERPS_N_ROLES];
    double alpha_emb[HETERPS_N_ROLES], alpha_dense[HETERPS_N_ROLES], alpha_light[HETERPS_N_ROLES];
    double batch_o; /* B_o, examples per profiled batch */
    double w_ps;    /* PS bytes/s per core */
    double c_ps;    /* PS seconds per sparse id */
} heterps_hw;

/* The spec's defaults (§2.4, §4). */
void heterps_hw_default(heterps_hw *hw);

/* Provisioning modes (§3.3). */
enum { HETERPS_BALANCED = 0, HETERPS_PAPER = 1 };

/*
 * Per-layer profile tables (seconds for B_o examples on one unit of a role) with prefix sums, the
 * resource types of the plans (role, price, limit) and the workload.  Built by
 * heterps_profile_new from layer descriptors or filled directly (tests, the worked example of
 * §10) through heterps_profile_alloc and heterps_profile_finish.
 */
typedef struct heterps_profile {
    int n_layers, n_types;
    /* [role][layer]: OCT, alpha, IO, BND, and the PS load of the layer's dense parameters when it
     * runs on a CPU (core-seconds per example). */
    double *oct[HETERPS_N_ROLES], *alpha[HETERPS_N_ROLES], *io[HETERPS_N_ROLES];
    double *bnd[HETERPS_N_ROLES];
    double *ps_dense;
    double tau_ps_sparse; /* core-seconds per example of the sparse tables, whatever the plan */
    double beta_io, beta_bnd;
    double batch_o;          /* B_o */
    double tl;               /* throughput limit, examples/s */
    double epochs, examples; /* E and M */
    int mode;                /* HETERPS_BALANCED or HETERPS_PAPER */
    int *role;               /* [n_types] HETERPS_CPU for type 0, HETERPS_GPU after */
    double *price;           /* [n_types] USD per hour per unit */
    double *limit;           /* [n_types] N_t,limit */
    /* Prefix sums over layers, [role][layer+1]: OCT, alpha*OCT, IO, PS dense load. */
    double *sum_oct[HETERPS_N_ROLES], *sum_aoct[HETERPS_N_ROLES], *sum_io[HETERPS_N_ROLES];
    double *sum_ps;
    double c_ub; /* upper bound on the cost of any feasible plan (§2.5) */
} heterps_profile;

/* An empty profile of n_layers layers and n_types types (tables zeroed, role[0] = CPU and GPU
 * for the others); NULL when out of memory.  Caller frees with heterps_profile_free. */
heterps_profile *heterps_profile_alloc(int n_layers, int n_types);
/* Computes the prefix sums and C_ub once every table and scalar is set. */
void heterps_profile_finish(heterps_profile *p);
void heterps_profile_free(heterps_profile *p);

/* The profile of §4 for layers[n_layers] under hw; the caller then sets the types' prices and
 * limits and the workload and calls heterps_profile_finish.  NULL when out of memory. */
heterps_profile *heterps_profile_new(const heterps_layer *layers, int n_layers, int n_types,
                                     const heterps_hw *hw, double beta_io, double beta_bnd);

/*
 * Replaces the profile's OCT tables by the harness's per-device cost model (pb_op_time_us, the
 * model zoo's devcost) on device type role_type[r] of each role: a layer is one op doing the
 * training FLOPs 3 F B_o and moving 8 (in + out) B_o bytes plus 4 dim bytes per id it looks up,
 * the node the model zoo's chain has (gen_heterps.c).  alpha, IO, BND and the PS load keep §4's
 * figures: the cost model has no network and no parallel fractions.  Call before
 * heterps_profile_finish.
 */
void heterps_profile_devcost(heterps_profile *p, const heterps_layer *layers,
                             const pb_device_type *const role_type[HETERPS_N_ROLES]);

/* One stage of a plan. */
typedef struct heterps_stage {
    int first, last, type;
    double oct, alpha, odt, beta;
    double k_real; /* provisioned real unit count */
    int k;         /* integer unit count */
} heterps_stage;

/* The evaluation of one plan. */
typedef struct heterps_result {
    int n_stages;
    int n_ps;           /* PS cores */
    double thr;         /* examples/s with the integer counts (0 when not provisioned) */
    double et_total;    /* seconds for E*M examples */
    double cost;        /* USD for E*M examples (Formula 7) */
    double cost_pen;    /* the penalised objective (§2.5) */
    double violation;   /* largest violation v, 0 when feasible */
    int feasible;       /* meets TL and every limit */
    int provisioned;    /* counts exist (every stage Amdahl-feasible, paper mode converged) */
    const char *reason; /* static text: why infeasible, "" when feasible */
} heterps_result;

/* Splits plan[n_layers] (types 0..n_types-1) into stages (caller-owned, n_layers entries) with
 * their profiles (§2.1-2.2); returns the stage count. */
int heterps_stages(const heterps_profile *p, const int *plan, heterps_stage *st);

/* Amdahl's law: 1 - g + g/k. */
double heterps_amdahl(double g, double k);
/* Formula 13 as corrected (§3.1): the least real k for which X at fraction g meets the limit. */
double heterps_k_min(const heterps_profile *p, double x, double g);
/* The same for throughput thr instead of TL. */
double heterps_k_min_at(const heterps_profile *p, double thr, double x, double g);

/* Evaluates stages st[0..n) at their integer counts st[i].k and n_ps PS cores: throughput, time,
 * cost, the TL and limit checks and the penalised objective. */
void heterps_evaluate_counts(const heterps_profile *p, const heterps_stage *st, int n, int n_ps,
                             heterps_result *r);

/* PROVISION(SP) of §3.3: stages, real counts by p->mode, integers, PS cores, evaluation.  st is
 * caller-owned scratch of n_layers entries and receives the stages. */
void heterps_provision(const heterps_profile *p, const int *plan, heterps_stage *st,
                       heterps_result *r);

/* Step 1 of PROVISION(SP): when a stage of st[0..n) has its Amdahl ceiling at or below TL, no
 * unit count meets TL; r is then the unprovisioned, penalised result and the return is 1. */
int heterps_ceiling_blocked(const heterps_profile *p, const heterps_stage *st, int n,
                            heterps_result *r);

/* PS cores the provisioning gives for a plan (§2.4): ceil(TL * tau_PS). */
int heterps_ps_cores(const heterps_profile *p, const int *plan);
/* tau_PS of a plan, core-seconds per example. */
double heterps_tau_ps(const heterps_profile *p, const int *plan);

/* Static provisioning baselines (§3.5). */
enum { HETERPS_STA_RATIO = 0, HETERPS_STA_PS_RATIO = 1 };
/* Provisions plan by the static ratio `which` with the smallest g in 1..g_max that meets TL and
 * evaluates it (the cost counts all g GPUs and all cores); *g_out receives g.  When no g meets
 * TL, r->feasible is 0 and r holds the evaluation at g_max; a plan with a stage whose Amdahl
 * ceiling is at or below TL is refused at once (as PROVISION refuses it, *g_out = 0). */
void heterps_static(const heterps_profile *p, const int *plan, int which, int g_max,
                    heterps_stage *st, heterps_result *r, int *g_out);

/* The capped evaluation of §3.4, for reporting a fixed plan that misses TL or a limit: every
 * stage at its balanced count (a stage that cannot reach TL at the count where it runs at 0.99
 * of its Amdahl ceiling), then each type over its limit scaled down to it (its stages and, for
 * CPU, the PS cores, by heterps_split).  r->thr is below TL when a limit binds; r->feasible is
 * then 0 and r->cost is the capped plan's cost. */
void heterps_capped(const heterps_profile *p, const int *plan, heterps_stage *st,
                    heterps_result *r);
/* Splits `units` over the entries of w[0..m) in proportion to w, at least 1 each: one unit
 * each, the rest by largest remainder (ties to the lower index).  Returns 0 when units < m. */
int heterps_split(const double *w, int m, int units, int *out);

/* Reads the layer descriptors of a HeterPS layer chain from graph g (the encoding of
 * datasets/heterps/README.md): node_type "KIND key=value ...", flops = forward FLOPs per
 * example, param_bytes = 4 * dense params, the first output port = 4 * cut; when the attributes
 * say batch=B (the model zoo's chains), flops = 3 F B and the port 4 cut B, for a batch of B.
 * layers is caller-owned, g->n_nodes entries.  The nodes must form a chain in node order. */
int heterps_layers_read(const pb_graph *g, heterps_layer *layers, pb_error *err);

/* The workload defaults of §5 for a graph named like the spec's models ("ctrdnn-16.json",
 * "matchnet", "2emb", "nce"): returns PB_OK and fills tl, epochs, examples, or PB_ERR. */
int heterps_workload(const char *graph_name, double *tl, double *epochs, double *examples,
                     pb_error *err);

/* The resource types of cluster c in plan order: type 0 is the cluster's "CPU" device type, the
 * others are its other device types in the cluster's order.  cluster_type[t] and device[t]
 * (caller-owned, c->n_types entries) receive the cluster type index and the first device of
 * that type.  Returns T, or PB_ERR when the cluster has no CPU devices or no other type. */
int heterps_types(const pb_cluster *c, int *cluster_type, int *device, pb_error *err);

#endif

/*
 * A search over plans for the HeterPS placers: plans are evaluated by the run's simulator
 * through the host (a plan becomes a placement on one device of each type, which the heterps
 * simulator provisions), the objective is the simulator's monetary cost (the penalised C_pen
 * for infeasible plans), and the best plan is kept with ties to the lexicographically smaller
 * plan (§2.5).
 */
typedef struct heterps_search {
    const pb_host *host;
    int n_layers, n_types;
    int *type_device; /* [n_types] a device of each plan type */
    int *device;      /* [n_layers] scratch placement */
    pb_strategy strategy;
    int *best_plan; /* [n_layers] */
    double best_cost, best_thr, best_time_us;
    int best_feasible, has_best;
    long long evaluations;
} heterps_search;

/* Sets s up for problem p (its grouped graph is the layer chain, its cluster gives the types);
 * caller frees with heterps_search_free. */
int heterps_search_init(heterps_search *s, const pb_problem *p, const pb_host *host, pb_error *err);
void heterps_search_free(heterps_search *s);
/* Evaluates plan (types 0..n_types-1 per layer) into *cost and keeps it when it is the best so
 * far; *feasible (may be NULL) receives the simulator's verdict. */
int heterps_search_eval(heterps_search *s, const int *plan, double *cost, int *feasible,
                        pb_error *err);
/* Writes the best plan as a placement into best->device; an error, naming the best plan's
 * penalised cost, when no evaluated plan was feasible. */
int heterps_search_finish(const heterps_search *s, pb_strategy *best, pb_error *err);
/* Non-zero when plan a is lexicographically smaller than b (layer 1 most significant). */
int heterps_plan_less(const int *a, const int *b, int n);
/* The whole place() of a placer whose plan is fixed: evaluates plan and returns it (an error when
 * it is infeasible, unless allow_infeasible).  *initial_us is set negative: there is no initial
 * plan. */
/* The option of the fixed-plan placers, for an options struct with an int `member_`. */
#define HETERPS_ALLOW_INFEASIBLE_OPTION(type_, member_)                                            \
    {                                                                                              \
        .name = "allow_infeasible", .type = PB_OPT_BOOL, .default_value = "false", .min = 1,       \
        .max = 0,                                                                                  \
        .help = "return the plan even when it misses TL or a limit (to report it, e.g. with the "  \
                "heterps simulator's infeasible = capped); false: that is an error",               \
        .offset = offsetof(type_, member_)                                                         \
    }
int heterps_place_fixed(const pb_problem *p, const pb_host *host, const int *plan,
                        int allow_infeasible, pb_strategy *best, double *initial_us, pb_error *err);
