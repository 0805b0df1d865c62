/* placebench.h — the one public header: the plugin ABI and the host services a plugin may use. */
#ifndef PLACEBENCH_H
#define PLACEBENCH_H

/*
 * A plugin is a shared object that exports exactly one symbol, PB_DESCRIPTOR_SYMBOL, a const
 * pb_plugin_desc.  The harness checks abi_major (must equal PB_ABI_MAJOR) and abi_minor (may be
 * newer than the host's: structs only grow at the end, and every struct a plugin or host reads
 * starts with its size), then the ops table of the plugin's kind.
 *
 * Rules for plugins: never exit, abort on purpose, print to stdout or longjmp; return PB_OK or
 * PB_ERR with a message written with pb_errorf() into the caller's pb_error.  Everything a plugin
 * needs at run time (simulating a strategy, reporting progress, logging, the deadline) comes
 * through the pb_host table passed to create().
 *
 * Ownership: every pointer a plugin receives is borrowed for the duration of the call unless the
 * comment says otherwise; outputs of known size go into buffers the caller owns.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PB_ABI_MAJOR 1
#define PB_ABI_MINOR 1
#define PB_DESCRIPTOR_SYMBOL placebench_plugin
#define PB_DESCRIPTOR_SYMBOL_NAME "placebench_plugin"

#if defined(__GNUC__)
#define PB_EXPORT __attribute__((visibility("default")))
#else
#define PB_EXPORT
#endif

enum { PB_OK = 0, PB_ERR = -1 };

/* ---------------------------------------------------------------- errors */

typedef struct pb_error {
    char msg[512];
} pb_error;

/* Writes a formatted message into err (truncating) and returns PB_ERR. err may be NULL. */
int pb_errorf(pb_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---------------------------------------------------------------- random numbers */

/* xoshiro256** seeded through splitmix64: every plugin draws from an explicit generator. */
typedef struct pb_rng {
    uint64_t s[4];
} pb_rng;

void pb_rng_seed(pb_rng *rng, uint64_t seed);
uint64_t pb_rng_next(pb_rng *rng);
/* Uniform integer in [0, n) without modulo bias; n > 0. */
uint64_t pb_rng_below(pb_rng *rng, uint64_t n);
/* Uniform double in [0, 1). */
double pb_rng_uniform(pb_rng *rng);
/* Fisher-Yates shuffle of an int array. */
void pb_rng_shuffle(pb_rng *rng, int *a, int n);
/* Derives a child seed from a parent seed and a label, for independent streams. */
uint64_t pb_seed_derive(uint64_t parent, const char *label);

/* ---------------------------------------------------------------- graphs */

/*
 * A computation graph as the harness hands it to plugins: read-only, nodes and edges in insertion
 * order, CSR adjacency in both directions.  succ[succ_start[v] .. succ_start[v+1]) are the
 * successors of v in the order their edges were inserted (edge ids in succ_edge); likewise pred.
 * Parallel edges between one pair collapse into one edge (the last port listed wins, as in the
 * Placeto reference), so (src, dst) pairs are unique.
 */
typedef struct pb_graph {
    size_t struct_size;
    const char *name;     /* e.g. "cifar10/07" */
    const char *checksum; /* hex digest of the canonical content */
    int n_nodes;
    int n_edges;
    const char *const *node_name; /* [n_nodes] */
    const char *const *node_type; /* [n_nodes], "" when unknown */
    const double *cost_us;        /* [n_nodes] compute time on the reference device, µs */
    const double *flops;          /* [n_nodes] floating-point operations, 0 when unknown */
    const double *bytes_accessed; /* [n_nodes] bytes read+written, 0 when unknown */
    const double *param_bytes;    /* [n_nodes] persistent (parameter) memory, bytes */
    const double *out_bytes;      /* [n_nodes] sum of the output port sizes, bytes */
    const int *port_start;        /* [n_nodes+1] output ports of v: port_start[v] .. [v+1] */
    const double *port_bytes;     /* [port_start[n_nodes]] bytes per output port */
    const int *edge_src;          /* [n_edges] */
    const int *edge_dst;          /* [n_edges] */
    const int *edge_port;         /* [n_edges] output port of edge_src the edge reads */
    const double *edge_bytes;     /* [n_edges] bytes carried (the port's size) */
    const int *succ_start;        /* [n_nodes+1] */
    const int *succ;              /* [n_edges] */
    const int *succ_edge;         /* [n_edges] */
    const int *pred_start;        /* [n_nodes+1] */
    const int *pred;              /* [n_edges] */
    const int *pred_edge;         /* [n_edges] */
    /* Grouping: group_of[v] is the node of `grouped` that op v belongs to.  A graph without a
     * grouping is its own grouped graph (grouped == this graph, group_of == NULL). */
    const int *group_of;
    const struct pb_graph *grouped;
    /* Colocation classes (MSR data): nodes with equal colocation[v] >= 0 must share a device;
     * NULL when the graph has none. */
    const int *colocation;
} pb_graph;

/* ---------------------------------------------------------------- clusters */

typedef struct pb_device_type {
    const char *name;      /* catalog name: "K80", "V100-32G", "CPU", ... */
    double peak_flops;     /* FLOP/s */
    double mem_bandwidth;  /* bytes/s */
    double memory_bytes;   /* device memory */
    double price_per_hour; /* USD per hour, 0 when not priced */
    double speed_vs_ref;   /* compute speed relative to the reference device of cost_us */
} pb_device_type;

typedef struct pb_cluster {
    size_t struct_size;
    const char *name;
    int n_devices;
    int n_types;
    const pb_device_type *types; /* [n_types] */
    const int *device_type;      /* [n_devices] index into types */
    const int *device_machine;   /* [n_devices] machine index */
    int n_machines;
    /* Link between devices i and j (i != j), row-major [n_devices * n_devices]. */
    const double *link_bandwidth; /* bytes per µs */
    const double *link_latency;   /* µs */
    /* Placeto bus model (one outgoing bus per device). */
    double delta1_us;      /* device busy after an op with non-zero cost */
    double delta2_us;      /* bus busy after each transfer */
    double transfer_speed; /* bytes per µs on a bus */
    double init_offset_us; /* ready time of source ops */
} pb_cluster;

/* ---------------------------------------------------------------- strategies */

/* How a TAG-style strategy executes one node on its device group. */
typedef enum pb_replication {
    PB_REPL_NONE = 0,      /* placed on one device (plain placement) */
    PB_REPL_ALLREDUCE = 1, /* data-parallel replicas, gradients synchronised by ring AllReduce */
    PB_REPL_PS = 2,        /* data-parallel replicas, parameter server synchronisation */
    PB_REPL_DUPLICATE = 3, /* every device of the group computes the full op */
    PB_REPL_SPLIT = 4      /* model-parallel split of the op across the group */
} pb_replication;

typedef enum pb_strategy_kind {
    PB_STRATEGY_PLACEMENT = 0,  /* device[v] = device index; nothing else is read */
    PB_STRATEGY_REPLICATED = 1, /* device[v] = device-group index, replication[v] = option */
    PB_STRATEGY_PROVISIONED = 2 /* device[v] = resource-type index, stage_count[s] = resources */
} pb_strategy_kind;

/*
 * One representation for the three strategy spaces of the papers.  A plain placement is just the
 * int array `device`; the other kinds add arrays that a plain-placement simulator ignores.
 * All arrays are owned by whoever created the strategy (see pb_strategy_init in the host API).
 */
typedef struct pb_strategy {
    int kind;    /* pb_strategy_kind */
    int n_nodes; /* nodes of the graph the strategy is for (the grouped graph for placers) */
    int *device; /* [n_nodes] */
    /* PB_STRATEGY_REPLICATED */
    int *replication; /* [n_nodes] pb_replication */
    int n_device_groups;
    const int *group_start;   /* [n_device_groups+1] into group_devices */
    const int *group_devices; /* device indices of each device group */
    /* PB_STRATEGY_PROVISIONED: stages are maximal runs of consecutive nodes in the order given
     * with the same resource type; stage_count[s] resources of that type serve stage s. */
    int n_stages;
    int *stage_count; /* [n_nodes] capacity; first n_stages used */
} pb_strategy;

/* ---------------------------------------------------------------- evaluations */

/*
 * What a simulator returns.  The caller owns every array and sizes them from the graph and
 * cluster (n_devices entries per device array, n_devices*n_devices for links, n_nodes of the
 * op-level graph for node times); an array left NULL is not filled.
 */
typedef struct pb_eval {
    size_t struct_size;
    double step_time_us;    /* per-iteration time (makespan) */
    int feasible;           /* 0 when some device runs out of memory */
    double *peak_mem_bytes; /* [n_devices] */
    double *busy_us;        /* [n_devices] time spent computing */
    double *link_busy_us;   /* [n_devices*n_devices] or per-bus [n_devices], simulator-defined */
    double *node_start_us;  /* [n_nodes of op graph] optional */
    double *node_end_us;    /* [n_nodes of op graph] optional */
    double throughput;      /* samples per second, 0 when not meaningful */
    double monetary_cost;   /* USD per iteration, 0 when not meaningful */
    /* Transfers, for traces: per output port of the op graph ([port_start[n_nodes]]), when the
     * port's data left its device and when it arrived; -1 for a port that was not sent.  Optional
     * (NULL = not filled); a simulator that sends one transfer per port fills them. */
    double *port_send_us;
    double *port_arrive_us;
    long long n_events; /* events the simulator processed (0 when it does not count) */
} pb_eval;

/* ---------------------------------------------------------------- options */

typedef enum pb_opt_type {
    PB_OPT_INT = 0,
    PB_OPT_DOUBLE = 1,
    PB_OPT_BOOL = 2,
    PB_OPT_STRING = 3,
    PB_OPT_ENUM = 4 /* one of the '|'-separated words of `choices` */
} pb_opt_type;

typedef struct pb_option_def {
    const char *name;
    int type;                  /* pb_opt_type */
    const char *default_value; /* as text: "50", "0.001", "true", "topo" */
    double min, max;           /* inclusive range for INT and DOUBLE; ignored when min > max */
    const char *choices;       /* PB_OPT_ENUM only: "max|mean|sum" */
    const char *help;
} pb_option_def;

/* A resolved option value; the harness passes one per entry of the plugin's option table, in
 * the table's order.  `s` is set for every type (the text form). */
typedef struct pb_value {
    long long i; /* INT, BOOL (0/1), ENUM (index into choices) */
    double d;    /* DOUBLE (and INT converted) */
    const char *s;
} pb_value;

/* ---------------------------------------------------------------- host services */

typedef struct pb_progress {
    size_t struct_size;
    int episode;            /* episode or iteration, from 0 */
    double episode_best_us; /* best step time found in this episode */
    double best_so_far_us;  /* best step time found in the run so far */
    long long sim_calls;    /* simulator calls so far */
    double wall_s;          /* search wall time so far */
} pb_progress;

enum { PB_LOG_DEBUG = 0, PB_LOG_INFO = 1, PB_LOG_WARN = 2 };

/* The harness side of a run.  A plugin keeps the pointer it got at create(); it stays valid until
 * destroy(). */
typedef struct pb_host {
    size_t struct_size;
    void *ctx;
    /* Evaluates a strategy on the run's graph and cluster with the run's simulator.  Strategies of
     * placers are for the grouped graph; the harness expands them to ops.  Counts a simulator
     * call. */
    int (*simulate)(void *ctx, const pb_strategy *s, pb_eval *out, pb_error *err);
    /* Records one learning-curve point (stored in the run's curve table). */
    void (*progress)(void *ctx, const pb_progress *p);
    /* Diagnostic message (stderr of the harness, never stdout). */
    void (*log)(void *ctx, int level, const char *msg);
    /* Non-zero once the run's wall-time budget is spent: a search placer stops and returns its
     * best strategy so far. */
    int (*deadline_passed)(void *ctx);
} pb_host;

/* ---------------------------------------------------------------- plugin kinds */

typedef enum pb_kind {
    PB_KIND_TRAVERSAL = 1,
    PB_KIND_SIMULATOR = 2,
    PB_KIND_EMBEDDING = 3,
    PB_KIND_PLACER = 4
} pb_kind;

/* Handed to every create(). */
typedef struct pb_create_args {
    size_t struct_size;
    const pb_value *opts; /* one per option of the descriptor, resolved and range-checked */
    const pb_host *host;  /* NULL for traversal and simulator plugins used outside a run */
    uint64_t seed;        /* the run's seed for this plugin */
} pb_create_args;

/* Common life cycle: create an instance, operate on it, destroy it. */
#define PB_LIFECYCLE_OPS                                                                           \
    int (*create)(const pb_create_args *args, void **instance, pb_error *err);                     \
    void (*destroy)(void *instance)

/* traversal: graph -> permutation of its nodes. */
typedef struct pb_traversal_ops {
    size_t struct_size;
    PB_LIFECYCLE_OPS;
    /* Writes a permutation of 0..g->n_nodes-1 into order (caller-owned, n_nodes ints). */
    int (*order)(void *instance, const pb_graph *g, int *order, pb_error *err);
} pb_traversal_ops;

/* simulator: (graph, cluster, strategy) -> evaluation.  prepare() does all per-graph work once;
 * evaluate() is the hot path and should not allocate. */
typedef struct pb_simulator_ops {
    size_t struct_size;
    PB_LIFECYCLE_OPS;
    /* g is the op-level graph (g->grouped is what placers place); returns a prepared handle. */
    int (*prepare)(void *instance, const pb_graph *g, const pb_cluster *c, void **prepared,
                   pb_error *err);
    void (*release)(void *prepared);
    /* s is for the op-level graph (the harness expands group strategies before calling). */
    int (*evaluate)(void *prepared, const pb_strategy *s, pb_eval *out, pb_error *err);
} pb_simulator_ops;

/*
 * The neural-network core of libplacebench (section "neural-network core" at the end of this
 * header) defines these.  Learned placers and embeddings share trainable parameters by
 * registering them in the same pb_nn_params set.
 */
struct pb_nn_params; /* a named set of trainable tensors, saved and loaded together */
struct pb_nn_tape;   /* reverse-mode autodiff tape of one forward pass */
struct pb_nn_tensor; /* a tensor living on a tape */

/* The state of a progressive placement at one step, what node features are computed from
 * (Placeto's ProgressiveGraph, specs/placeto.md §2.2).  Everything is borrowed for the call. */
typedef struct pb_place_state {
    size_t struct_size;
    const pb_graph *graph; /* the grouped graph being placed */
    int n_devices;
    const int *device; /* [graph->n_nodes] current device of each node, -1 = not placed */
    const int *done;   /* [graph->n_nodes] visits of each node in this episode so far */
    int current;       /* the node being placed now, -1 = none */
    /* The last simulation of the current placement, with peak_mem_bytes ([n_devices]) and
     * node_start_us (indexed by op_graph's nodes) filled; NULL before any simulation. */
    const pb_eval *eval;
    const pb_graph *op_graph; /* graph itself, or the op graph whose grouped graph is graph */
} pb_place_state;

/* embedding: (graph, node features) -> node embeddings, with trainable parameters. */
typedef struct pb_embedding_ops {
    size_t struct_size;
    PB_LIFECYCLE_OPS;
    /* Registers the embedding's trainable parameters for graphs with feature_dim input
     * features; returns the embedding width. */
    int (*init_params)(void *instance, struct pb_nn_params *params, int feature_dim,
                       int *embedding_dim, pb_error *err);
    /* Records the forward pass on tape: features is [n_nodes x feature_dim], *out becomes
     * [n_nodes x embedding_dim] (owned by the tape). */
    int (*forward)(void *instance, struct pb_nn_tape *tape, const pb_graph *g,
                   struct pb_nn_tensor *features, struct pb_nn_tensor **out, pb_error *err);

    /* Optional members, for progressive placers such as placeto: read only when struct_size
     * covers them and the pointer is not NULL. */

    /* Width of the node features this embedding reads on a cluster of n_devices.  NULL: the
     * standard Placeto features, pb_placeto_features_dim(n_devices). */
    int (*feature_dim)(void *instance, int n_devices);
    /* Writes the node features of state s into out (caller-owned: s->graph->n_nodes rows of
     * feature_dim floats, row v for node v of s->graph).  NULL: the placer uses
     * pb_placeto_features(s, PB_FEATURE5_START_TIME, out, err). */
    int (*features)(void *instance, const pb_place_state *s, float *out, pb_error *err);
    /* prepare, release and forward_batch come together or not at all.  prepare does a graph's
     * one-off work (processing orders, adjacency); *prepared stays valid until release. */
    int (*prepare)(void *instance, const pb_graph *g, void **prepared, pb_error *err);
    void (*release)(void *instance, void *prepared);
    /* forward for `batch` feature matrices of the prepared graph stacked by rows: features is
     * (batch * n_nodes) x feature_dim, *out becomes (batch * n_nodes) x embedding_dim (owned by
     * the tape), block b equal to what forward gives for block b alone.  seeds[b] seeds every
     * random draw of block b (dropout, sampling): equal seeds give equal draws, so a placer can
     * recompute a step's forward pass exactly.  seeds NULL: the instance's own generator. */
    int (*forward_batch)(void *instance, void *prepared, struct pb_nn_tape *tape,
                         struct pb_nn_tensor *features, int batch, const uint64_t *seeds,
                         struct pb_nn_tensor **out, pb_error *err);
} pb_embedding_ops;

/* An embedding as a placer receives it: the ops of the loaded plugin and its instance. */
typedef struct pb_embedding_ref {
    const pb_embedding_ops *ops;
    void *instance;
    const char *name;
} pb_embedding_ref;

typedef struct pb_budget {
    int episodes;        /* learned placers: training episodes; 0 = plugin default */
    long long sim_calls; /* search placers: simulator calls; 0 = plugin default */
    double wall_s;       /* 0 = no limit beyond the run's time limit */
} pb_budget;

/* What a placer is asked to solve. */
typedef struct pb_problem {
    size_t struct_size;
    const pb_graph *graph;    /* the grouped graph: what is placed */
    const pb_graph *op_graph; /* the op-level graph (== graph when there is no grouping) */
    const pb_cluster *cluster;
    pb_budget budget;
    const int *order;           /* traversal order of graph's nodes, NULL when none was named */
    pb_embedding_ref embedding; /* ops == NULL when none was named */
} pb_problem;

/* placer: (problem, budget) -> strategy. */
typedef struct pb_placer_ops {
    size_t struct_size;
    PB_LIFECYCLE_OPS;
    /* Fills best (caller-owned, sized for p->graph, kind PLACEMENT unless the placer documents
     * otherwise) with the best strategy found.  *initial_us receives the step time of the
     * strategy the search started from (the papers' "initial placement"), or a negative number
     * when there is none. */
    int (*place)(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                 pb_error *err);
    /* Optional (NULL when the placer does not learn): train on a set of problems, save and load
     * trained parameters, for generalisation experiments. */
    int (*train)(void *instance, const pb_problem *const *problems, int n, pb_error *err);
    int (*save)(void *instance, const char *path, pb_error *err);
    int (*load)(void *instance, const char *path, pb_error *err);
    /* Since ABI 1.1: the plugin kinds the placer consults besides the simulator (PB_USES_*
     * bits).  A sweep varies the embedding and traversal axes only for placers that use them
     * (a placer that uses neither runs once per graph, devices and options, not once per
     * embedding and order); a placer built for ABI 1.0 (an ops table without this field) is
     * taken to use both. */
    unsigned int uses;
} pb_placer_ops;

enum { PB_USES_EMBEDDING = 1u << 0, PB_USES_TRAVERSAL = 1u << 1 };

/* ---------------------------------------------------------------- descriptor */

typedef struct pb_plugin_desc {
    uint32_t abi_major;
    uint32_t abi_minor;
    size_t struct_size; /* sizeof(pb_plugin_desc) as the plugin was built */
    int kind;           /* pb_kind */
    const char *name;
    const char *version;
    const char *description;
    const pb_option_def *options;
    int n_options;
    const void *ops; /* pb_traversal_ops, pb_simulator_ops, pb_embedding_ops or pb_placer_ops */
} pb_plugin_desc;

/* Declares the plugin's one exported descriptor:
 *   PB_PLUGIN(PB_KIND_PLACER, "random", "1.0", "uniform random placements", opts, &ops); */
#define PB_PLUGIN(kind_, name_, version_, description_, options_, n_options_, ops_)                \
    PB_EXPORT extern const pb_plugin_desc PB_DESCRIPTOR_SYMBOL;                                    \
    const pb_plugin_desc PB_DESCRIPTOR_SYMBOL = {                                                  \
        PB_ABI_MAJOR,   PB_ABI_MINOR, sizeof(pb_plugin_desc), (kind_), (name_), (version_),        \
        (description_), (options_),   (n_options_),           (ops_)}

/* ---------------------------------------------------------------- helpers for plugins */

/* Sets s to a plain placement over caller-owned device storage. */
static inline void pb_strategy_placement(pb_strategy *s, int n_nodes, int *device)
{
    s->kind = PB_STRATEGY_PLACEMENT;
    s->n_nodes = n_nodes;
    s->device = device;
    s->replication = NULL;
    s->n_device_groups = 0;
    s->group_start = NULL;
    s->group_devices = NULL;
    s->n_stages = 0;
    s->stage_count = NULL;
}

/* ---------------------------------------------------------------- neural-network core */

/*
 * Small dense float32 tensors, reverse-mode autodiff on a tape, trainable parameter sets and
 * optimizers, shared by learned placers and embeddings (libplacebench, harness/lib/nn_*.c).
 *
 * Tensors are row-major matrices of rank <= 2: a vector is a 1 x n row, a scalar is 1 x 1.
 * Conventions follow the Placeto reference: row vectors, y = x.W + b, W stored in x out.
 *
 * A tape records one forward pass.  Every tensor an op returns lives on the tape (the struct,
 * its values and its gradient) until pb_nn_tape_reset() or pb_nn_tape_free(); a reset keeps the
 * memory, so a forward pass no bigger than an earlier one allocates nothing.
 *
 * Errors are sticky: an op given a NULL input or mismatched shapes, or one that runs out of
 * memory, records a message in the tape and returns NULL, and every later op then returns NULL.
 * A forward pass is therefore written without checks and tested once with pb_nn_tape_status().
 *
 * Gradients: a tensor's grad is NULL when no gradient flows to it (constants, and everything on
 * a tape reset with record_grad = 0, which records nothing for backward and is the cheap mode for
 * greedy evaluation).  pb_nn_backward() zeroes the gradients of all tape tensors and ADDS the
 * gradient it computes into the parameters' gradients, so backward passes accumulate until
 * pb_nn_params_zero_grad().
 *
 * Index arrays given to ops (gather, scatter, pb_nn_csr) are borrowed: they must stay valid and
 * unchanged until the tape is reset.  Nothing here reads the clock or global state; randomness
 * comes from an explicit pb_rng.  A tape, parameter set or optimizer must not be used by two
 * threads at once; distinct ones are independent.
 */

typedef struct pb_nn_params pb_nn_params; /* opaque, see pb_nn_params_new() */
typedef struct pb_nn_tape pb_nn_tape;     /* opaque, see pb_nn_tape_new() */

/* A tensor on a tape.  The struct and its arrays are owned by the tape (a parameter's arrays by
 * its pb_nn_params); callers may read data and write the data of constants they created. */
typedef struct pb_nn_tensor {
    int rows;
    int cols;
    float *data; /* rows*cols values, row-major */
    float *grad; /* same layout; NULL when no gradient flows to this tensor */
} pb_nn_tensor;

/* --- tapes */

/* A new empty tape that records gradients; NULL when out of memory.  Caller frees. */
pb_nn_tape *pb_nn_tape_new(void);
void pb_nn_tape_free(pb_nn_tape *t);
/* Forgets every tensor of the tape (their pointers become invalid), clears a recorded error, and
 * sets whether the next forward pass records gradients (record_grad != 0) or not. */
void pb_nn_tape_reset(pb_nn_tape *t, int record_grad);
/* PB_OK, or PB_ERR with the first error an op met on this tape (since the last reset). */
int pb_nn_tape_status(const pb_nn_tape *t, pb_error *err);
/* Reverse pass from y: seed holds dL/dy (y->rows*y->cols values, borrowed), NULL meaning all
 * ones (for a 1 x 1 loss, dL/dy = 1).  Zeroes the gradients of the tape's tensors first, then
 * adds dL/dtheta into the gradients of the parameters.  Fails when the tape holds an error or y
 * does not depend on any parameter. */
int pb_nn_backward(pb_nn_tape *t, pb_nn_tensor *y, const float *seed, pb_error *err);

/* --- leaves and views */

/* A constant (no gradient): values (rows*cols, borrowed, copied) or zeros when values is NULL.
 * The caller may fill its data afterwards, before any op reads it. */
pb_nn_tensor *pb_nn_constant(pb_nn_tape *t, int rows, int cols, const float *values);
/* A zero-filled tensor whose row blocks are written once each with pb_nn_assign() before being
 * read: how a recursion (message passing level by level) assembles its output without copying
 * the whole matrix at every level.  Has a gradient when the tape records gradients. */
pb_nn_tensor *pb_nn_buffer(pb_nn_tape *t, int rows, int cols);
/* Parameter `id` of p as a tensor whose data and grad are p's own storage (no copy).  Valid until
 * the tape is reset or a parameter is added to p. */
pb_nn_tensor *pb_nn_param(pb_nn_tape *t, pb_nn_params *p, int id);
/* Rows start .. start+count-1 of x as a view sharing x's values and gradient (no copy, free). */
pb_nn_tensor *pb_nn_rows(pb_nn_tape *t, pb_nn_tensor *x, int start, int count);
/* x seen as rows x cols (same element count, row-major order kept), sharing its storage. */
pb_nn_tensor *pb_nn_reshape(pb_nn_tape *t, pb_nn_tensor *x, int rows, int cols);
/* Copies src into dst (same shape; dst a pb_nn_buffer or a pb_nn_rows view of one) and returns
 * dst; the gradient that later readers put into dst flows back into src. */
pb_nn_tensor *pb_nn_assign(pb_nn_tape *t, pb_nn_tensor *dst, pb_nn_tensor *src);

/* --- linear algebra (every product through OpenBLAS sgemm) */

pb_nn_tensor *pb_nn_matmul(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b);
/* op(a).op(b) where op transposes when trans_* != 0 (attention scores: Q.K^T). */
pb_nn_tensor *pb_nn_matmul_t(pb_nn_tape *t, pb_nn_tensor *a, int trans_a, pb_nn_tensor *b,
                             int trans_b);

enum { PB_NN_ACT_NONE = 0, PB_NN_ACT_RELU = 1, PB_NN_ACT_SIGMOID = 2, PB_NN_ACT_TANH = 3 };

/* act(x.w + b): x is n x in, w in x out, b 1 x out or NULL; one fused op. */
pb_nn_tensor *pb_nn_linear(pb_nn_tape *t, pb_nn_tensor *x, pb_nn_tensor *w, pb_nn_tensor *b,
                           int act);
pb_nn_tensor *pb_nn_transpose(pb_nn_tape *t, pb_nn_tensor *x);

/* --- elementwise.  b is broadcast: same shape as a, or 1 x cols (a bias row), or rows x 1 (a
 * per-row factor such as a mask column), or 1 x 1. */

pb_nn_tensor *pb_nn_add(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b);
pb_nn_tensor *pb_nn_sub(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b);
pb_nn_tensor *pb_nn_mul(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b);
pb_nn_tensor *pb_nn_scale(pb_nn_tape *t, pb_nn_tensor *x, float s);      /* s*x */
pb_nn_tensor *pb_nn_add_scalar(pb_nn_tape *t, pb_nn_tensor *x, float c); /* x+c */
pb_nn_tensor *pb_nn_relu(pb_nn_tape *t, pb_nn_tensor *x);                /* gradient 0 at x = 0 */
pb_nn_tensor *pb_nn_sigmoid(pb_nn_tape *t, pb_nn_tensor *x);
pb_nn_tensor *pb_nn_tanh(pb_nn_tape *t, pb_nn_tensor *x);
pb_nn_tensor *pb_nn_exp(pb_nn_tape *t, pb_nn_tensor *x);
pb_nn_tensor *pb_nn_log(pb_nn_tape *t, pb_nn_tensor *x); /* natural log; x > 0 */
/* Inverted dropout: each entry is kept with probability 1-rate and then scaled by 1/(1-rate),
 * else zeroed; draws one pb_rng_uniform per entry, row-major.  0 <= rate < 1; rate 0 returns x.
 * Applies whether or not the tape records gradients (the reference keeps it on in evaluation). */
pb_nn_tensor *pb_nn_dropout(pb_nn_tape *t, pb_nn_tensor *x, float rate, pb_rng *rng);

/* --- rows and columns */

/* Side by side (equal rows) / stacked (equal cols); xs is borrowed for the call only. */
pb_nn_tensor *pb_nn_concat_cols(pb_nn_tape *t, int n, pb_nn_tensor *const *xs);
pb_nn_tensor *pb_nn_concat_rows(pb_nn_tape *t, int n, pb_nn_tensor *const *xs);
/* Columns start .. start+count-1 of x (a copy). */
pb_nn_tensor *pb_nn_slice_cols(pb_nn_tape *t, pb_nn_tensor *x, int start, int count);
/* out[i] = x[idx[i]] for i < n (rows may repeat); the gradient is scatter-added back. */
pb_nn_tensor *pb_nn_gather_rows(pb_nn_tape *t, pb_nn_tensor *x, const int *idx, int n);
/* out (n_out x cols, zero-initialised) with out[idx[i]] += x[i] for every row i of x. */
pb_nn_tensor *pb_nn_scatter_add_rows(pb_nn_tape *t, pb_nn_tensor *x, const int *idx, int n_out);

/* A sparse 0/1 (or weighted) row-selection matrix in CSR form, e.g. the parents, ancestors or
 * sampled neighbours of each node.  Output row s aggregates the input rows
 * index[start[s]] .. index[start[s+1]-1], each multiplied by weight[k] when weight != NULL;
 * index NULL means the input rows start[s] .. start[s+1]-1 themselves (contiguous segments).
 * The struct is copied, its arrays are borrowed. */
typedef struct pb_nn_csr {
    int n_rows;          /* output rows */
    const int *start;    /* [n_rows+1], non-decreasing, start[0] = 0 */
    const int *index;    /* [start[n_rows]] input row numbers, or NULL */
    const float *weight; /* [start[n_rows]] or NULL (all 1) */
} pb_nn_csr;

enum { PB_NN_AGG_SUM = 0, PB_NN_AGG_MEAN = 1, PB_NN_AGG_MAX = 2, PB_NN_AGG_MIN = 3 };

/* n_rows x cols: per output row the sum, mean (sum / entry count), or elementwise max or min of
 * the selected (weighted) input rows; an empty row gives zeros.  Max and min pass the gradient
 * to the entry that won (the first one on ties). */
pb_nn_tensor *pb_nn_aggregate(pb_nn_tape *t, pb_nn_tensor *x, const pb_nn_csr *csr, int kind);
/* Mean over a sliding window of `window` consecutive rows, stride 1, no padding:
 * (rows - window + 1) x cols (TF AvgPool1D 'VALID' along the rows, as P-GNN uses it). */
pb_nn_tensor *pb_nn_avgpool_rows(pb_nn_tape *t, pb_nn_tensor *x, int window);

/* --- reductions and normalisations */

pb_nn_tensor *pb_nn_softmax(pb_nn_tape *t, pb_nn_tensor *x);     /* per row, max-shifted */
pb_nn_tensor *pb_nn_log_softmax(pb_nn_tape *t, pb_nn_tensor *x); /* per row, max-shifted */
/* Per row: (x - mean) / sqrt(var + eps) * gamma + beta, with the biased variance; gamma and beta
 * are 1 x cols or NULL (1 and 0). */
pb_nn_tensor *pb_nn_layer_norm(pb_nn_tape *t, pb_nn_tensor *x, pb_nn_tensor *gamma,
                               pb_nn_tensor *beta, float eps);
/* x / sqrt(max(sum x^2, eps)) per row (per_row != 0, GraphSAGE) or over the whole matrix
 * (per_row = 0, TF l2_normalize with axis=None); eps 1e-12 in the reference. */
pb_nn_tensor *pb_nn_l2_normalize(pb_nn_tape *t, pb_nn_tensor *x, int per_row, float eps);
pb_nn_tensor *pb_nn_sum(pb_nn_tape *t, pb_nn_tensor *x);     /* 1 x 1, all entries */
pb_nn_tensor *pb_nn_mean(pb_nn_tape *t, pb_nn_tensor *x);    /* 1 x 1, all entries */
pb_nn_tensor *pb_nn_colsum(pb_nn_tape *t, pb_nn_tensor *x);  /* 1 x cols: sum over rows */
pb_nn_tensor *pb_nn_colmean(pb_nn_tape *t, pb_nn_tensor *x); /* 1 x cols: mean over rows */
pb_nn_tensor *pb_nn_rowsum(pb_nn_tape *t, pb_nn_tensor *x);  /* rows x 1: sum over columns */
/* rows x 1: dot product of each row of a with the same row of b (rows x cols) or with b
 * (1 x cols): attention scores. */
pb_nn_tensor *pb_nn_rowdot(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b);

/* --- fused ops written outside the core (a message passer's whole recursion, say) */

/* The reverse pass of a custom op: out->grad holds dL/dout; add dL/din[i] into in[i]->grad for
 * every input whose grad is not NULL.  ctx is the pointer given to pb_nn_custom(). */
typedef void (*pb_nn_backward_fn)(void *ctx, const pb_nn_tensor *out, pb_nn_tensor *const *in,
                                  int n_in);

/* A new rows x cols output of an op the caller computes: the caller writes out->data
 * (uninitialised) before any other op reads it.  When the tape records gradients and one of the
 * n_in inputs (copied list, each non-NULL) has one, out gets a gradient and backward(ctx, ...)
 * runs in the reverse pass; otherwise out->grad is NULL and backward never runs, so the caller can
 * skip saving what it would need.  ctx is borrowed until the tape is reset (pb_nn_alloc ties it
 * to the tape). */
pb_nn_tensor *pb_nn_custom(pb_nn_tape *t, int rows, int cols, int n_in, pb_nn_tensor *const *in,
                           pb_nn_backward_fn backward, void *ctx);
/* n bytes on the tape, 64-byte aligned, valid until the tape is reset; NULL (recorded as the
 * tape's error) when out of memory. */
void *pb_nn_alloc(pb_nn_tape *t, size_t n);
/* C = alpha op(A) op(B) + beta C on row-major float matrices (cblas_sgemm; op transposes when
 * trans_* != 0), for fused ops: the one GEMM of the core, so plugins need no BLAS of their own. */
void pb_nn_gemm(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
                const float *b, int ldb, float beta, float *c, int ldc);

/* --- parameters */

/* A new empty parameter set; NULL when out of memory.  Caller frees with pb_nn_params_free. */
pb_nn_params *pb_nn_params_new(void);
void pb_nn_params_free(pb_nn_params *p);

enum {
    PB_NN_INIT_GLOROT = 0, /* U(-r, r), r = sqrt(6 / (rows + cols)), drawn row-major from rng */
    PB_NN_INIT_ZEROS = 1,
    PB_NN_INIT_ONES = 2
};

/* Adds a rows x cols tensor named `name` (unique in p; copied) initialised as `init` (rng is only
 * read for PB_NN_INIT_GLOROT) with a zero gradient; returns its id (>= 0, ids count up from 0 in
 * the order of adding) or PB_ERR.  Invalidates tensors pb_nn_param() made from p. */
int pb_nn_params_add(pb_nn_params *p, const char *name, int rows, int cols, int init, pb_rng *rng,
                     pb_error *err);
/* The id of the tensor named `name`, or -1. */
int pb_nn_params_find(const pb_nn_params *p, const char *name);
int pb_nn_params_count(const pb_nn_params *p);
/* Name (owned by p) and shape of tensor id. */
const char *pb_nn_params_name(const pb_nn_params *p, int id);
void pb_nn_params_shape(const pb_nn_params *p, int id, int *rows, int *cols);
/* All values (and gradients) are one contiguous array of pb_nn_params_size() floats, tensor id
 * at pb_nn_params_offset(id), in the order of adding.  Owned by p; moved by pb_nn_params_add. */
size_t pb_nn_params_size(const pb_nn_params *p);
size_t pb_nn_params_offset(const pb_nn_params *p, int id);
float *pb_nn_params_values(pb_nn_params *p);
float *pb_nn_params_grads(pb_nn_params *p);
void pb_nn_params_zero_grad(pb_nn_params *p);
/* Writes every tensor (name, shape, values) as JSON; the file appears complete or not at all. */
int pb_nn_params_save(const pb_nn_params *p, const char *path, pb_error *err);
/* Reads a file written by pb_nn_params_save into p, which must hold exactly the same names with
 * the same shapes (order free); on any mismatch p is left unchanged and the error names the file
 * and the tensor. */
int pb_nn_params_load(pb_nn_params *p, const char *path, pb_error *err);

/* A fully connected network, the reference's FNN(in, hidden[], out): linear layers with ReLU
 * between them and act_out after the last.  Plain data; the tensors live in a pb_nn_params. */
#define PB_NN_MLP_MAX_LAYERS 8
typedef struct pb_nn_mlp {
    int n_layers;
    int act_out;
    int weight[PB_NN_MLP_MAX_LAYERS]; /* parameter ids: "<prefix>/w<i>", Glorot */
    int bias[PB_NN_MLP_MAX_LAYERS];   /* parameter ids: "<prefix>/b<i>", zeros, 1 x out */
} pb_nn_mlp;

/* Adds the layers sizes[0] -> sizes[1] -> ... -> sizes[n_sizes-1] (2 <= n_sizes <=
 * PB_NN_MLP_MAX_LAYERS + 1) to p and describes them in *m.  On error p keeps the layers added
 * before it. */
int pb_nn_mlp_init(pb_nn_mlp *m, pb_nn_params *p, const char *prefix, int n_sizes, const int *sizes,
                   int act_out, pb_rng *rng, pb_error *err);
/* Records the network applied to every row of x (n x sizes[0]) -> n x sizes[last]. */
pb_nn_tensor *pb_nn_mlp_forward(pb_nn_tape *t, pb_nn_params *p, const pb_nn_mlp *m,
                                pb_nn_tensor *x);

/* --- optimizers (they read the gradients in p and update its values) */

/* Adam in TensorFlow's formulation: at step k, m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2,
 * lr_k = lr sqrt(1-b2^k) / (1-b1^k), theta -= lr_k m / (sqrt(v) + epsilon).  TF 1 defaults:
 * 0.9, 0.999, 1e-8.  Every tensor of p is updated at every step (a zero gradient still moves a
 * tensor by its momentum).  The moments are kept in double.  NULL when out of memory; caller
 * frees. */
typedef struct pb_nn_adam pb_nn_adam;
pb_nn_adam *pb_nn_adam_new(double beta1, double beta2, double epsilon);
void pb_nn_adam_free(pb_nn_adam *a);
/* One step with learning rate lr (the caller applies any schedule).  Fails when p's size changed
 * since the first step. */
int pb_nn_adam_step(pb_nn_adam *a, pb_nn_params *p, double lr, pb_error *err);
long long pb_nn_adam_steps(const pb_nn_adam *a); /* steps taken so far */
/* theta -= lr g. */
void pb_nn_sgd_step(pb_nn_params *p, double lr);
/* Returns the global L2 norm of p's gradients (in double) and, when max_norm > 0 and the norm is
 * finite and above max_norm, scales them by max_norm / norm (TF clip_by_global_norm). */
double pb_nn_clip_grad_norm(pb_nn_params *p, double max_norm);

/* ---------------------------------------------------------------- progressive placement helpers */

/* Library helpers for progressive placers and their embeddings (libplacebench,
 * harness/lib/progressive.c). */

/* What the 5th Placeto node feature holds (specs/placeto.md §2.2): the simulated start time of
 * the node (the [A] intent; a group starts when its earliest op starts), or the peak memory of
 * the device the node sits on (what the [M/B] forks compute). */
enum { PB_FEATURE5_START_TIME = 0, PB_FEATURE5_PEAK_MEM = 1 };

/* 5 + n_devices: [cost, out_size, done, current, feature 5, one-hot device (n_devices)]. */
static inline int pb_placeto_features_dim(int n_devices)
{
    return 5 + n_devices;
}

/* Writes the Placeto node features of s, normalised as the reference does at every fetch:
 * feature 5 made relative to the current node's, then the columns cost, out_size and feature 5
 * divided by their maximum when it is not 0.  out: s->graph->n_nodes rows of
 * pb_placeto_features_dim(s->n_devices) floats (caller-owned).  Feature 5 is 0 while s->eval is
 * NULL; PB_FEATURE5_START_TIME needs s->eval->node_start_us, PB_FEATURE5_PEAK_MEM
 * s->eval->peak_mem_bytes. */
int pb_placeto_features(const pb_place_state *s, int feature5, float *out, pb_error *err);

/* networkx 2.4 topological_sort of g (Kahn with a LIFO ready stack, specs/placeto.md §5.2): the
 * reference's node index order.  order: g->n_nodes ints, caller-owned.  Fails on a cycle. */
int pb_traverse_topo(const pb_graph *g, int *order, pb_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PLACEBENCH_H */
