/* placebench.h — the one public header: the plugin ABI and the host services a plugin may use;
 * it includes the layer headers placebench/nn.h (NN core), placebench/placeto.h (progressive
 * placement helpers, traversal orders) and placebench/compile.h (the strategy compiler). */
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
#define PB_ABI_MINOR 15

/*
 * ABI changelog (a minor version only adds; the harness still loads plugins of older minors):
 *   1.0  first version.
 *   1.1  pb_placer_ops.uses (the plugin kinds a placer consults).
 *   1.2  Structs that can grow: pb_strategy starts with struct_size; pb_problem holds pointers to
 *        pb_budget and pb_embedding_ref (each with struct_size) instead of embedding them;
 *        arrays of ABI structs carry their element size (pb_plugin_desc.option_size,
 *        pb_create_args.value_size, pb_cluster.type_size); options can be declared with
 *        designated initializers and offsetof into a struct of the plugin's own
 *        (pb_option_def.offset, pb_plugin_desc.options_struct_size, pb_create_args.options;
 *        PB_PLUGIN_WITH_OPTIONS).  Plugins built for 1.0/1.1 get the 1.1 layouts of pb_problem and
 *        pb_strategy from the harness (harness/plugin/compat.c).  pb_clock_monotonic.
 *   1.3  Replication annotations at the end of pb_graph (node_role, node_split, replica costs)
 *        and batch shares at the end of pb_strategy (device_share), read by the strategy
 *        compiler (placebench/compile.h); pb_eval.task_record, a per-task timeline for traces,
 *        and pb_eval.node_idle_after_us (TAG's run-time feedback).
 *   1.4  What a plugin can work with: pb_simulator_ops.accepts (the strategy kinds a simulator
 *        evaluates), pb_placer_ops.produces (the kinds a placer returns) and
 *        pb_placer_ops.simulators (the simulators it needs, when not every one that evaluates its
 *        kind will do).  Sweeps and suites skip the pairs that do not apply and say so.
 *   1.5  pb_strategy.op_replication: per-op replication options overriding the group's (TAG's
 *        SFB "duplicate" of single ops); pb_compiled.op_part (which ops were batch-split).
 *   1.6  pb_problem.host: the host that simulates a problem given to train() (GDP-batch).
 *   1.7  pb_clock_cpu; phase accounting at the end of pb_progress (forward/update CPU seconds
 *        and FLOPs, for bench placer); the host reads only the struct_size bytes a placer sends.
 *   1.8  Strategy compiler switches: pb_compiler_set_flags with PB_COMPILE_BASE_GROUPS,
 *        PB_COMPILE_PRUNE, PB_COMPILE_PLACEHOLDER and PB_COMPILE_SUM_PARTS (TAG's duplicate
 *        fallback, pruning to the sinks' ancestors, Placeholder replicas fed by a shape Const,
 *        partial sums read replica to replica; all on by default), and the compiled node kind
 *        PB_CNODE_SHAPE.
 *   1.9  pb_op_time_us: an op's time on a device type by the harness's cost model (devcost).
 *   1.10 pb_nn_params_save_adam / pb_nn_params_load_adam: an Adam optimizer's step count and
 *        moments saved with the parameters (an optional "adam" section of the parameter file).
 *   1.11 pb_graph.placed_with: ops that run on another op's device whatever their group's
 *        (TensorFlow's colocation of update ops with their variable; generated families with
 *        the colocate option).
 *   1.12 Interleaved runs: pb_placer_ops.place_multi (several runs of one graph in lock-step) and
 *        pb_embedding_ops.forward_multi (their forward passes in one call, chains interleaved).
 *   1.13 pb_nn_lstm_step_math: the LSTM step with PB_NN_MATH_FAST (own products, vectorised
 *        activations, the same bits on every processor) or PB_NN_MATH_LIBM (pb_nn_lstm_step).
 *   1.14 Evaluations without memory accounting: pb_eval.skip_memory (the caller reads neither
 *        peak_mem_bytes nor feasible) and pb_embedding_ops.eval_reads (which parts of the last
 *        evaluation an embedding's features() reads), so a progressive placer can ask for it.
 *   1.15 pb_nn_tape_gemm: pb_nn_gemm with the NN core's fused kernels where they give OpenBLAS's
 *        bits (placeto-gnn's weight gradients).
 */
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

/* ---------------------------------------------------------------- clock */

/* Seconds on the monotonic clock (arbitrary origin), for a plugin's own time limits such as
 * pb_budget.wall_s.  Progress reports need no clock: the host fills pb_progress.wall_s. */
double pb_clock_monotonic(void);
/* CPU seconds of the calling thread (arbitrary origin), for accounting a plugin's own work
 * (pb_progress phase fields): unlike wall time, it does not grow while other processes run. */
double pb_clock_cpu(void);

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
    /* Since 1.3: what replication needs to know (the strategy compiler, placebench/compile.h).
     * NULL when the graph carries none of these annotations. */
    const unsigned char *node_role;  /* [n_nodes] pb_node_role */
    const unsigned char *node_split; /* [n_nodes] pb_split_class of the node's outputs */
    /* Measured time of one of n even replicas (each given 1/n of the batch), as pairs
     * (replica_cost_n[i], replica_cost_us[i]) for i in replica_cost_start[v] ..
     * replica_cost_start[v+1]; NULL when no node has any (then a replica costs its share). */
    const int *replica_cost_start; /* [n_nodes+1] */
    const int *replica_cost_n;
    const double *replica_cost_us;
    /* Since 1.11: placed_with[v] >= 0 is the op whose device op v takes, whatever the device of
     * v's group (TensorFlow's `loc:@` colocation: an optimizer's update ops run where their
     * variable lives); -1 for the others.  The anchor itself follows its group.  NULL when no op
     * has one.  Strategy expansion (group -> ops) applies it before a simulator sees the ops. */
    const int *placed_with;
} pb_graph;

/* The part an op plays in training, for replication (node attribute "role"). */
typedef enum pb_node_role {
    PB_ROLE_OP = 0,        /* any other op */
    PB_ROLE_PARAMETER = 1, /* a variable: placed with the optimizer op that updates it */
    PB_ROLE_GRADIENT = 2,  /* produces the gradient an optimizer op applies */
    PB_ROLE_APPLY = 3      /* an optimizer op: reads one gradient, updates parameters */
} pb_node_role;

/* How an op's outputs behave when the op runs on a share of the batch (attribute "split"). */
typedef enum pb_split_class {
    PB_SPLIT_UNSET = 0, /* not annotated: the op cannot be replicated with a batch split */
    PB_SPLIT_BATCH = 1, /* outputs carry the batch dimension: parts are joined by Concat */
    PB_SPLIT_SUM = 2,   /* outputs are sums over the batch (weight gradients): parts are added */
    PB_SPLIT_NONE = 3   /* outputs do not depend on the batch: every replica computes them whole */
} pb_split_class;

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
    /* Since 1.2: sizeof(pb_device_type) as the harness was built; types[i] lies at
     * (const char *)types + i * type_size. */
    size_t type_size;
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
 * All arrays are owned by whoever created the strategy (pb_strategy_placement sets up a plain
 * one).  Layout of the kinds (pb_strategy_check validates it):
 *   PLACEMENT    device[v] in [0, n_devices) for every v.
 *   REPLICATED   device groups g = 0..n_device_groups-1 are the device indices
 *                group_devices[group_start[g] .. group_start[g+1]) (non-empty, each device at
 *                most once per group, group_start[0] = 0); device[v] is the group of node v and
 *                replication[v] its pb_replication; PB_REPL_NONE takes a group of one device.
 *   PROVISIONED  device[v] is the resource type of node v (an index into the cluster's types);
 *                stages are the maximal runs of consecutive nodes with the same type, n_stages of
 *                them, and stage_count[s] >= 1 resources of that type serve stage s.
 */
typedef struct pb_strategy {
    size_t struct_size; /* since 1.2: sizeof(pb_strategy) as its creator was built */
    int kind;           /* pb_strategy_kind */
    int n_nodes;        /* nodes of the graph the strategy is for (the grouped graph for placers) */
    int *device;        /* [n_nodes] */
    /* PB_STRATEGY_REPLICATED */
    int *replication; /* [n_nodes] pb_replication */
    int n_device_groups;
    const int *group_start;   /* [n_device_groups+1] into group_devices */
    const int *group_devices; /* device indices of each device group */
    /* PB_STRATEGY_PROVISIONED: stages are maximal runs of consecutive nodes in the order given
     * with the same resource type; stage_count[s] resources of that type serve stage s. */
    int n_stages;
    int *stage_count; /* [n_nodes] capacity; first n_stages used */
    /* Since 1.3, PB_STRATEGY_REPLICATED: the share of the batch each device of each group
     * computes when a group splits the batch, parallel to group_devices (each > 0, summing to 1
     * over a group); NULL = even shares. */
    const double *device_share;
    /* Since 1.5, PB_STRATEGY_REPLICATED: per op of the op-level graph (whatever n_nodes counts),
     * a pb_replication that replaces the option the op's node gives it, or -1 to keep it; NULL =
     * none.  Used by SFB (plugins/shared/sfb) to duplicate single ops of a replicated group. */
    const int *op_replication;
} pb_strategy;

/* Whether x is not a valid pb_strategy.op_replication entry (-1, ALLREDUCE, PS, DUPLICATE). */
static inline int pb_strategy_op_option_bad(int x)
{
    return x != -1 && x != PB_REPL_ALLREDUCE && x != PB_REPL_PS && x != PB_REPL_DUPLICATE;
}

/* Whether s (of any creator's ABI) has the field ending at member m. */
#define PB_STRATEGY_HAS(s, m) ((s)->struct_size >= offsetof(pb_strategy, m) + sizeof((s)->m))

/* ---------------------------------------------------------------- evaluations */

/* One task of a simulated step, as a simulator reports it through pb_eval.task_record. */
typedef enum pb_task_kind {
    PB_TASK_COMPUTE = 0,   /* an op (or an auxiliary node) running on a device */
    PB_TASK_TRANSFER = 1,  /* bytes moving from src_device to dst_device over a link */
    PB_TASK_COLLECTIVE = 2 /* one device's member of a collective (AllReduce) */
} pb_task_kind;

typedef struct pb_task_record {
    size_t struct_size;
    int kind;         /* pb_task_kind */
    int op;           /* the op of the op graph the task belongs to */
    int replica;      /* replica index of the op for a computation of it, else -1 */
    const char *what; /* what the task does: "op", "split", "concat", "addn", "allreduce", ... */
    int src_device;   /* device of a computation or collective member, sender of a transfer */
    int dst_device;   /* the same, or the receiver of a transfer */
    double start_us, end_us;
    double bytes; /* bytes moved (transfer) or reduced (collective); 0 for a computation */
} pb_task_record;

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
    /* USD, 0 when not meaningful; the simulator says what it covers (topology: one iteration;
     * heterps: the whole training job, Formula 7). */
    double monetary_cost;
    /* Transfers, for traces: per output port of the op graph ([port_start[n_nodes]]), when the
     * port's data left its device and when it arrived; -1 for a port that was not sent.  Optional
     * (NULL = not filled); a simulator that sends one transfer per port fills them. */
    double *port_send_us;
    double *port_arrive_us;
    long long n_events; /* events the simulator processed (0 when it does not count) */
    /* Since 1.3, optional: when task_record is set (and struct_size covers it), a simulator
     * that knows its tasks calls it once per task of the step, after the run, in task order,
     * with r borrowed for the call.  For traces; NULL = not wanted. */
    void (*task_record)(void *ctx, const pb_task_record *r);
    void *task_ctx;
    /* Since 1.3, optional ([n_nodes of op graph], NULL = not filled): TAG's run-time feedback
     * "idle after" of each op, the least time between the end of one of its tasks and the start
     * of a task waiting for it (0 when one of its tasks has no dependent).  With node_start_us
     * and node_end_us (the op's makespan), busy_us and link_busy_us (device and link idle
     * shares) it gives the features TAG's GNN reads. */
    double *node_idle_after_us;
    /* Since 1.14, optional: non-zero when the caller reads neither peak_mem_bytes nor
     * feasible.  A simulator may then leave its memory accounting out: it does not write
     * peak_mem_bytes and sets feasible to 1.  Every other output is what it would be without
     * the flag.  A simulator that ignores the flag is correct; read it only when struct_size
     * covers it (PB_EVAL_HAS). */
    int skip_memory;
} pb_eval;

/* Whether e (of any creator's ABI) has the field ending at member m. */
#define PB_EVAL_HAS(e, m) ((e)->struct_size >= offsetof(pb_eval, m) + sizeof((e)->m))

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
    /* Since 1.2, for plugins that declare an options struct (PB_PLUGIN_WITH_OPTIONS): where the
     * harness writes the resolved value in it, as long long (INT), double (DOUBLE), int (BOOL,
     * ENUM: index into choices) or const char * (STRING, valid until destroy).  Use offsetof. */
    size_t offset;
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
    double wall_s;          /* search wall time so far: filled by the host (send 0) */
    /* Since ABI 1.7, optional (0 when the placer does not measure): where the placer's own work
     * went so far, cumulative over the run, in CPU seconds of its thread (pb_clock_cpu) and in
     * dense-product FLOPs (pb_nn_tape_flop): forward passes that choose actions, and updates
     * (recomputed forward passes, backward passes, the optimizer step). */
    double forward_cpu_s, forward_flop;
    double update_cpu_s, update_flop;
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
    /* Since 1.2: sizeof(pb_value) as the harness was built (opts[i] lies at
     * (const char *)opts + i * value_size), and the plugin's options struct filled from the
     * option table's offsets (NULL when the descriptor declares none).  Both borrowed until
     * destroy(). */
    size_t value_size;
    const void *options;
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
    /* Since ABI 1.4: the strategy kinds evaluate() accepts, PB_KIND_BIT(pb_strategy_kind) bits;
     * 0 (or a simulator built for an older ABI) means plain placements only. */
    unsigned int accepts;
} pb_simulator_ops;

/* The bit of a pb_strategy_kind in pb_simulator_ops.accepts and pb_placer_ops.produces. */
#define PB_KIND_BIT(kind) (1u << (unsigned)(kind))

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
     * the tape), block b the same arithmetic as forward on block b alone (equal up to float
     * rounding: BLAS may round a product's rows differently with its row count).  seeds[b] seeds
     * every random draw of block b (dropout, sampling): equal seeds give equal draws, so a placer
     * can recompute a step's forward pass.  seeds NULL: the instance's own generator. */
    int (*forward_batch)(void *instance, void *prepared, struct pb_nn_tape *tape,
                         struct pb_nn_tensor *features, int batch, const uint64_t *seeds,
                         struct pb_nn_tensor **out, pb_error *err);
    /* Since ABI 1.12, optional (needs prepare/release/forward_batch): forward_batch for k
     * independent runs of the same prepared graph at once, run r with its own instance,
     * prepared data, tape, features, seeds and *out (arrays of k, borrowed).  Each run's result
     * must be bit for bit what forward_batch gives it alone; the point is to interleave the runs'
     * dependency chains so that the processor overlaps them.  Every instance is of this plugin
     * with the same options.  Returns PB_ERR when the runs cannot go together (the caller then
     * calls forward_batch per run). */
    int (*forward_multi)(int k, void *const *instances, void *const *prepared,
                         struct pb_nn_tape *const *tapes, struct pb_nn_tensor *const *features,
                         int batch, const uint64_t *const *seeds, struct pb_nn_tensor **out,
                         pb_error *err);
    /* Since ABI 1.14, optional (with features): which parts of s->eval features() reads, as
     * PB_EVAL_READS_* bits.  A placer asks the simulator to skip what nobody reads
     * (pb_eval.skip_memory).  NULL: features() is taken to read everything.  (Without
     * features() a placer's default features read node_start_us only.) */
    unsigned (*eval_reads)(void *instance);
} pb_embedding_ops;

/* pb_embedding_ops.eval_reads bits: peak_mem_bytes, node_start_us. */
enum { PB_EVAL_READS_PEAK_MEM = 1u, PB_EVAL_READS_START_TIMES = 2u };

/* An embedding as a placer receives it: the ops of the loaded plugin and its instance. */
typedef struct pb_embedding_ref {
    size_t struct_size; /* since 1.2 */
    const pb_embedding_ops *ops;
    void *instance;
    const char *name;
} pb_embedding_ref;

typedef struct pb_budget {
    size_t struct_size;  /* since 1.2 */
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
    const pb_budget *budget;           /* never NULL */
    const int *order;                  /* traversal order of graph's nodes, NULL when none */
    const pb_embedding_ref *embedding; /* NULL when none was named */
    /* Since 1.6: the host whose simulate() evaluates this problem, for train() over several
     * graphs (each with its own simulator); NULL = the host given at create. */
    const struct pb_host *host;
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
    /* Since ABI 1.4: the strategy kinds place() can return, PB_KIND_BIT bits (0, or a placer built
     * for an older ABI: plain placements only); a placer runs with a simulator that accepts one
     * of them.  simulators: when not NULL, a comma-separated list of the only simulators the
     * placer works with (e.g. "topology"), for a placer that needs more than the kind. */
    unsigned int produces;
    const char *simulators;
    /* Since ABI 1.12, optional: place for k runs of the same graph in one call (instances[r],
     * problems[r], best[r] and initial_us[r] as for place), e.g. repeats with other seeds or
     * other traversal orders, so that the placer can interleave their work.  Each run's result,
     * learning curve (sent through problems[r]->host, which must be set) and random draws must
     * be exactly what place gives it alone.  Every instance is of this plugin with the same
     * options (seeds aside).  On PB_ERR the host reruns each run alone with place. */
    int (*place_multi)(void *const *instances, const pb_problem *const *problems, int k,
                       pb_strategy *const *best, double *initial_us, pb_error *err);
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
    /* Since 1.2: sizeof(pb_option_def) as the plugin was built (options[i] lies at
     * (const char *)options + i * option_size), and the size of the plugin's options struct that
     * the harness fills through pb_option_def.offset (0: none, read pb_create_args.opts). */
    size_t option_size;
    size_t options_struct_size;
} pb_plugin_desc;

/* Declares the plugin's one exported descriptor:
 *   PB_PLUGIN(PB_KIND_PLACER, "random", "1.0", "uniform random placements", opts, 2, &ops); */
#define PB_PLUGIN(kind_, name_, version_, description_, options_, n_options_, ops_)                \
    PB_PLUGIN_DESCRIPTOR_(kind_, name_, version_, description_, options_, n_options_, 0, ops_)

/* The same for a plugin whose options table fills a struct of its own (type options_type) through
 * designated initializers with offsetof:
 *   typedef struct random_opts { long long sim_calls; } random_opts;
 *   static const pb_option_def random_options[] = {
 *       {.name = "sim_calls", .type = PB_OPT_INT, .default_value = "1000", .min = 1, .max = 1e9,
 *        .help = "...", .offset = offsetof(random_opts, sim_calls)}};
 *   PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "random", "1.0", "...", random_options, random_opts,
 *                          &random_ops);
 * create() then reads `const random_opts *o = args->options;`. */
#define PB_PLUGIN_WITH_OPTIONS(kind_, name_, version_, description_, options_, options_type_,      \
                               ops_)                                                               \
    PB_PLUGIN_DESCRIPTOR_(kind_, name_, version_, description_, options_,                          \
                          (int)(sizeof(options_) / sizeof((options_)[0])), sizeof(options_type_),  \
                          ops_)

#define PB_PLUGIN_DESCRIPTOR_(kind_, name_, version_, description_, options_, n_options_,          \
                              struct_size_, ops_)                                                  \
    PB_EXPORT extern const pb_plugin_desc PB_DESCRIPTOR_SYMBOL;                                    \
    const pb_plugin_desc PB_DESCRIPTOR_SYMBOL = {.abi_major = PB_ABI_MAJOR,                        \
                                                 .abi_minor = PB_ABI_MINOR,                        \
                                                 .struct_size = sizeof(pb_plugin_desc),            \
                                                 .kind = (kind_),                                  \
                                                 .name = (name_),                                  \
                                                 .version = (version_),                            \
                                                 .description = (description_),                    \
                                                 .options = (options_),                            \
                                                 .n_options = (n_options_),                        \
                                                 .ops = (ops_),                                    \
                                                 .option_size = sizeof(pb_option_def),             \
                                                 .options_struct_size = (struct_size_)}

/* ---------------------------------------------------------------- helpers for plugins */

/* Sets s to a plain placement over caller-owned device storage. */
static inline void pb_strategy_placement(pb_strategy *s, int n_nodes, int *device)
{
    s->struct_size = sizeof *s;
    s->kind = PB_STRATEGY_PLACEMENT;
    s->n_nodes = n_nodes;
    s->device = device;
    s->replication = NULL;
    s->n_device_groups = 0;
    s->group_start = NULL;
    s->group_devices = NULL;
    s->n_stages = 0;
    s->stage_count = NULL;
    s->device_share = NULL;
    s->op_replication = NULL;
}

/* Sets s to data parallelism over devices 0..n_devices-1 (TAG's DP-NCCL): one device group of
 * them all and every node replicated on it with `option` (PB_REPL_ALLREDUCE or PB_REPL_PS; on
 * one device PB_REPL_NONE, as a one-device group requires).  share[n_devices] is each device's
 * batch share (summing to 1), or NULL for even shares.  All storage is the caller's:
 * group[n_nodes], replication[n_nodes], group_start[2], group_devices[n_devices]. */
static inline void pb_strategy_data_parallel(pb_strategy *s, int n_nodes, int *group,
                                             int *replication, int option, int n_devices,
                                             int *group_start, int *group_devices,
                                             const double *share)
{
    pb_strategy_placement(s, n_nodes, group);
    s->kind = PB_STRATEGY_REPLICATED;
    s->replication = replication;
    s->n_device_groups = 1;
    s->group_start = group_start;
    s->group_devices = group_devices;
    s->device_share = share;
    group_start[0] = 0;
    group_start[1] = n_devices;
    for (int d = 0; d < n_devices; d++)
        group_devices[d] = d;
    for (int v = 0; v < n_nodes; v++) {
        group[v] = 0;
        replication[v] = n_devices > 1 ? option : PB_REPL_NONE;
    }
}

/* Device type i of c, read at the cluster's element size (type_size; the 1.1 size when 0). */
static inline const pb_device_type *pb_cluster_type(const pb_cluster *c, int i)
{
    size_t size = c->type_size ? c->type_size : sizeof(pb_device_type);
    return (const pb_device_type *)(const void *)((const char *)c->types + (size_t)i * size);
}

/* Since 1.9: µs of an op doing `flops` floating-point operations and moving `bytes` bytes on
 * device type t, by the harness's one per-device cost model (harness/model/devcost.h: roofline
 * at the achieved fractions of peak FLOP/s and memory bandwidth, plus a per-op overhead), so a
 * plugin times work on a device type as the model zoo does. */
double pb_op_time_us(const pb_device_type *t, double flops, double bytes);

/* Checks that s is a well-formed strategy of its kind for a graph of n_nodes nodes on cluster c
 * (the layout documented at pb_strategy): sizes, device and group indices, replication options,
 * stage counts.  The error names the node, group or stage. */
int pb_strategy_check(const pb_strategy *s, int n_nodes, const pb_cluster *c, pb_error *err);

#ifdef __cplusplus
}
#endif

/* The layer headers (each includes this one). */
#include "placebench/compile.h"
#include "placebench/nn.h"
#include "placebench/placeto.h"

#endif /* PLACEBENCH_H */
