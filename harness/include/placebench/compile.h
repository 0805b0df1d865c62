/* placebench/compile.h — the strategy compiler: a strategy applied to an op graph gives the
 * distributed execution graph that topology-aware simulators run (harness/model/compile.c).
 * Included by placebench.h. */
#ifndef PLACEBENCH_COMPILE_H
#define PLACEBENCH_COMPILE_H

#include "placebench.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What the compiler does (TAG's editor and compiler, specs/tag.md §3, on placebench's graph
 * annotations; README "Strategy files" and the graph table say the same for users):
 *
 *   - PB_STRATEGY_PLACEMENT: every op becomes one node on its device, every edge one input.  No
 *     annotation is read.
 *   - PB_STRATEGY_REPLICATED: an op on a device group of n devices gets n replicas, one per
 *     device, in the group's device order.  Under PB_REPL_ALLREDUCE or PB_REPL_PS with n > 1 an
 *     op whose split class is BATCH or SUM is batch-split ("part": replica r computes share r of
 *     the batch, strategy device_share or 1/n); every other replica computes the whole op
 *     ("full": PB_REPL_DUPLICATE, class NONE, optimizer ops).  PB_REPL_SPLIT is refused: a
 *     simulator places split ops first (the topology simulator partitions them with METIS,
 *     which the library does not link).
 *   - Since ABI 1.5, s->op_replication[v] >= 0 replaces op v's option (SFB's duplicate of
 *     single ops of a replicated group: such an op computes the whole batch on every replica,
 *     and an optimizer op whose gradient is whole reads it locally, unsynchronised).  Under
 *     PB_COMPILE_BASE_GROUPS (below) a duplicate, like TAG's code 4, stops the batch split of
 *     the op's whole base group (specs/tag.md §3.2, §9); without it, of the op alone.
 *   - A parameter takes the device group and option of the first optimizer op it feeds.
 *   - A part consumer reads a BATCH-class producer by parts (replica to replica when the
 *     producer is split the same way, else through a Split on the producer's first device, or a
 *     Concat then a Split on the consumer's first device); everything else is read whole.  A
 *     whole read of a split producer goes through one Concat (BATCH) or AddN (SUM) on the
 *     consumer's first device, read by every consumer replica; a whole read of a whole producer
 *     takes the producer's replica on the consumer's device, or replica 0.
 *   - Gradient synchronisation: an optimizer op with n > 1 replicas whose gradient producer is
 *     split gets, under PB_REPL_ALLREDUCE (when the producer's devices are the optimizer op's),
 *     one AllReduce member per device, and otherwise (PB_REPL_PS) one AddN on the parameter
 *     server, the optimizer op's first device.  AllReduce instances are chained so that they
 *     run in reverse creation order, as in the reference.
 *   - Sizes follow the reference: a part of S bytes is S/n (integer division) or floor(S *
 *     share); partial gradients travel at their part size, the reduced gradient at S.  An edge
 *     of 0 bytes is a control dependency: it waits for every replica of its producer.
 *   - Costs: a replica computing the whole op costs cost_us, a part the graph's replica cost for
 *     n even replicas when given, else cost_us * share; both divided by the device type's
 *     speed_vs_ref (when > 0).  Auxiliary nodes (Split, Concat, AddN, AllReduce) cost 0.
 *   - Node order: TAG's queue topological order (pop the front; emit it when every input is
 *     emitted, else push it to the back) over the creation order, which is the gradient
 *     synchronisation nodes first, then per op (in the same queue order of the op graph) the
 *     auxiliary nodes its inputs need followed by its replicas.
 */

typedef enum pb_cnode_kind {
    PB_CNODE_OP = 0,     /* a replica of an op of the graph */
    PB_CNODE_SPLIT = 1,  /* cuts a whole tensor into the parts of a batch split: port r, part r */
    PB_CNODE_CONCAT = 2, /* joins the parts of a batch-split tensor */
    PB_CNODE_ADDN = 3,   /* adds partial sums (a split SUM tensor, a parameter server) */
    PB_CNODE_ALLREDUCE = 4, /* one device's member of a ring AllReduce instance */
    PB_CNODE_SHAPE = 5      /* since 1.4: the Const a Placeholder replica is generated from
                               (PB_COMPILE_PLACEHOLDER) */
} pb_cnode_kind;

/* The compiled graph.  Arrays belong to the pb_compiler that produced it and stay valid until its
 * next pb_compile or pb_compiler_free.  Inputs of node v are in_start[v] .. in_start[v+1]; an
 * input with in_bytes 0 is a control dependency (no data moves). */
typedef struct pb_compiled {
    size_t struct_size;
    int n_nodes;
    int n_inputs;
    int n_collectives;         /* AllReduce instances */
    const int *kind;           /* [n_nodes] pb_cnode_kind */
    const int *origin;         /* [n_nodes] the op replicated, or whose tensor it converts */
    const int *replica;        /* [n_nodes] replica index (OP), 0 otherwise */
    const int *device;         /* [n_nodes] */
    const int *collective;     /* [n_nodes] AllReduce instance, -1 for other kinds */
    const double *cost_us;     /* [n_nodes] compute time on its device */
    const double *param_bytes; /* [n_nodes] persistent memory of a replica (its op's) */
    const int *in_start;       /* [n_nodes+1] */
    const int *in_src;         /* [n_inputs] producing node */
    const int *in_port;        /* [n_inputs] output port of the producing node */
    const double *in_bytes;    /* [n_inputs] bytes read; 0 = control dependency */
    const int *coll_size;      /* [n_collectives] members of each instance */
    int n_split_ops;           /* ops that were batch-split */
    /* Since ABI 1.5: op_part[v] = 1 when op v of the graph was batch-split (its replicas compute
     * parts of the batch), 0 when each replica computes it whole ([graph n_nodes]). */
    const unsigned char *op_part;
} pb_compiled;

typedef struct pb_compiler pb_compiler;

/*
 * What the compiler does beyond the rules above, as bits (TAG's reference behaviour, the default
 * of pb_compiler_new, is all four; specs/tag.md §3.2 and §3.4):
 *
 *   PB_COMPILE_BASE_GROUPS: the duplicate fallback.  Ops joined by tensors that are not
 *   batch-split (a producer whose split class is not BATCH, or a gradient read by an optimizer
 *   op), over the data edges among the descendants of input ops (type Placeholder or
 *   IteratorGetNext), plus each optimizer op with the parameter inputs no other optimizer op
 *   reads (var, m, v; not Adam's shared beta powers), form a base group; when
 *   its members are not all on device groups of the same size n > 1, or one has
 *   PB_REPL_DUPLICATE, no member is batch-split (each replica computes the whole batch).
 *
 *   PB_COMPILE_PRUNE: only the replicas of the ops without successors (the sinks) and their
 *   ancestors (over data and control inputs) are kept; e.g. a replica nobody reads disappears,
 *   while a Concat placed for it stays.  The members of an AllReduce instance are kept or dropped
 *   together.
 *
 *   PB_COMPILE_PLACEHOLDER: in replicated strategies each replica of an op of type Placeholder
 *   waits (no data) for a PB_CNODE_SHAPE node of 0 µs on its device, emitted just before it, as
 *   TAG generates the input from a shape Const; it therefore queues behind the ops ready at the
 *   start.
 *
 *   PB_COMPILE_SUM_PARTS: a batch-split SUM op reading a SUM tensor split the same way reads it
 *   replica to replica (TAG's Part -> Part), e.g. the Identity TensorFlow puts between a weight
 *   gradient and its optimizer op.  Without it the partial sums are added on the consumer's
 *   first device and the whole sum is sent to every replica.
 */
enum {
    PB_COMPILE_BASE_GROUPS = 1u,
    PB_COMPILE_PRUNE = 2u,
    PB_COMPILE_PLACEHOLDER = 4u,
    PB_COMPILE_SUM_PARTS = 8u
};

/* A compiler with its own buffers, reused from one pb_compile to the next (compiling allocates
 * only when a graph is larger than every earlier one).  Caller frees with pb_compiler_free.
 * NULL when out of memory. */
pb_compiler *pb_compiler_new(void);
void pb_compiler_free(pb_compiler *c);
/* Sets the PB_COMPILE_* bits for the next compilations (default: all of them).  Since 1.8. */
void pb_compiler_set_flags(pb_compiler *c, unsigned flags);

/* Compiles strategy s (kind PLACEMENT or REPLICATED, for the op graph g) on cluster cl.  g, cl
 * and s are borrowed for the call.  *out points into the compiler (see pb_compiled).  Errors
 * name the node or device group: a strategy that does not check (pb_strategy_check), a split
 * option, a batch-split op without a split class, an optimizer op without exactly one gradient
 * input. */
int pb_compile(pb_compiler *c, const pb_graph *g, const pb_cluster *cl, const pb_strategy *s,
               const pb_compiled **out, pb_error *err);

#ifdef __cplusplus
}
#endif

#endif
