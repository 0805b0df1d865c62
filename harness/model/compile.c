/* compile.c — the strategy compiler (placebench/compile.h): replicas, batch splits, format
 * conversions and gradient synchronisation, in TAG's node order (specs/tag.md §3). */
#include "placebench.h"

#include "core/array.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* What a memoised conversion of a tensor produces (the reference memoises per tensor and target
 * form, so every consumer needing the same form reads the same node). */
enum { COMPILE_TO_WHOLE = 0, COMPILE_TO_PARTS = 1, COMPILE_SYNC = 2 };

typedef struct compile_memo {
    int op, port, kind;
    int target; /* the consumer's first device (WHOLE) or device group (PARTS, SYNC) */
    int node;   /* the node built; AllReduce members follow it, one per device */
    int next;   /* next memo of the same op, -1 */
} compile_memo;

typedef struct compile_input {
    int dst, src, port;
    double bytes;
} compile_input;

struct pb_compiler {
    /* The call being compiled (borrowed). */
    const pb_graph *g;
    const pb_cluster *cl;
    const pb_strategy *s;
    const double *share; /* s->device_share when the strategy has it, else NULL */
    const int *op_repl;  /* s->op_replication when the strategy has it, else NULL */
    unsigned flags;      /* PB_COMPILE_* */

    /* Per op of g. */
    int cap_ops;
    int *op_order, *first, *nrep, *group, *repl, *memo_head, *base, *base_n;
    unsigned char *part, *in_d;

    /* Nodes in creation order, their inputs, memos, creation ("emit") order, collectives. */
    int cap_nodes, n_nodes;
    int *kind, *origin, *replica, *device, *collective, *emit, *queue, *rank, *in_count;
    unsigned char *done, *keep;
    double *cost, *param;
    int n_emit, n_out_inputs;
    int cap_inputs, n_inputs;
    compile_input *inputs;
    int *csr_start, *csr_src; /* inputs by creation id, for the sort */
    int cap_csr;
    int cap_memo, n_memo;
    compile_memo *memo;
    int cap_coll, n_coll;
    int *coll_size, *coll_first; /* members of instance k: coll_first[k] + 0 .. coll_size[k]-1 */

    /* The result, in the sorted order. */
    int cap_out_nodes, cap_out_inputs;
    int *o_kind, *o_origin, *o_replica, *o_device, *o_collective, *o_in_start, *o_in_src,
        *o_in_port;
    double *o_cost, *o_param, *o_in_bytes;
    pb_compiled out;
};

pb_compiler *pb_compiler_new(void)
{
    pb_compiler *c = calloc(1, sizeof(pb_compiler));
    if (c)
        c->flags = PB_COMPILE_BASE_GROUPS | PB_COMPILE_PRUNE | PB_COMPILE_PLACEHOLDER |
                   PB_COMPILE_SUM_PARTS;
    return c;
}

void pb_compiler_set_flags(pb_compiler *c, unsigned flags)
{
    c->flags = flags;
}

void pb_compiler_free(pb_compiler *c)
{
    if (!c)
        return;
    void *arrays[] = {c->op_order,   c->first,     c->nrep,      c->group,        c->repl,
                      c->memo_head,  c->part,      c->base,      c->base_n,       c->in_d,
                      c->keep,       c->kind,      c->origin,    c->replica,      c->device,
                      c->collective, c->emit,      c->queue,     c->rank,         c->in_count,
                      c->done,       c->cost,      c->param,     c->inputs,       c->csr_start,
                      c->csr_src,    c->memo,      c->coll_size, c->coll_first,   c->o_kind,
                      c->o_origin,   c->o_replica, c->o_device,  c->o_collective, c->o_in_start,
                      c->o_in_src,   c->o_in_port, c->o_cost,    c->o_param,      c->o_in_bytes};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(c);
}

/* ---------------------------------------------------------------- buffers */

/* Grows every per-op array to n ops (array_grow from their shared capacity gives each the same
 * new capacity). */
static int compile_reserve_ops(pb_compiler *c, int n)
{
    if (n <= c->cap_ops)
        return PB_OK;
    int cap = c->cap_ops;
    int cap_int = cap, cap_byte = cap;
    int **ints[] = {&c->op_order, &c->first,     &c->nrep, &c->group,
                    &c->repl,     &c->memo_head, &c->base, &c->base_n};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        cap_int = cap;
        if (array_grow(ints[i], &cap_int, n, sizeof(int)))
            return PB_ERR;
    }
    if (array_grow(&c->part, &cap_byte, n, 1))
        return PB_ERR;
    cap_byte = cap;
    if (array_grow(&c->in_d, &cap_byte, n, 1))
        return PB_ERR;
    c->cap_ops = cap_int < cap_byte ? cap_int : cap_byte;
    return PB_OK;
}

/* Grows every per-node array to n nodes (creation-order and output arrays alike; array_grow from
 * their shared capacity gives each the same new capacity). */
static int compile_reserve_nodes(pb_compiler *c, int n)
{
    if (n <= c->cap_nodes)
        return PB_OK;
    int cap = c->cap_nodes, got = cap;
    int **ints[] = {&c->kind,     &c->origin,    &c->replica,  &c->device,      &c->collective,
                    &c->emit,     &c->queue,     &c->rank,     &c->in_count,    &c->o_kind,
                    &c->o_origin, &c->o_replica, &c->o_device, &c->o_collective};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        got = cap;
        if (array_grow(ints[i], &got, n, sizeof(int)))
            return PB_ERR;
    }
    double **dbls[] = {&c->cost, &c->param, &c->o_cost, &c->o_param};
    for (size_t i = 0; i < sizeof dbls / sizeof dbls[0]; i++) {
        got = cap;
        if (array_grow(dbls[i], &got, n, sizeof(double)))
            return PB_ERR;
    }
    got = cap;
    if (array_grow(&c->done, &got, n, 1))
        return PB_ERR;
    got = cap;
    if (array_grow(&c->keep, &got, n, 1))
        return PB_ERR;
    /* One entry more than the node capacity for the CSR starts (a graph filling the capacity
     * exactly needs it; growing to n + 1 alone could leave them one short). */
    int starts = cap ? cap + 1 : 0;
    if (array_grow(&c->csr_start, &starts, got + 1, sizeof(int)))
        return PB_ERR;
    starts = cap ? cap + 1 : 0;
    if (array_grow(&c->o_in_start, &starts, got + 1, sizeof(int)))
        return PB_ERR;
    c->cap_nodes = got;
    return PB_OK;
}

/* ---------------------------------------------------------------- annotations */

static int compile_role(const pb_graph *g, int v)
{
    if (g->struct_size < offsetof(pb_graph, node_split) || !g->node_role)
        return PB_ROLE_OP;
    return g->node_role[v];
}

static int compile_split(const pb_graph *g, int v)
{
    if (g->struct_size < offsetof(pb_graph, replica_cost_start) || !g->node_split)
        return PB_SPLIT_UNSET;
    return g->node_split[v];
}

/* The measured cost of one of n even replicas of v, or its even share of cost_us. */
static double compile_replica_cost(const pb_graph *g, int v, int n)
{
    if (g->struct_size >= sizeof(pb_graph) && g->replica_cost_start)
        for (int i = g->replica_cost_start[v]; i < g->replica_cost_start[v + 1]; i++)
            if (g->replica_cost_n[i] == n)
                return g->replica_cost_us[i];
    return g->cost_us[v] / n;
}

/* The devices of op v (its device group, or its one device). */
static const int *compile_devices(const pb_compiler *c, int v)
{
    const pb_strategy *s = c->s;
    if (s->kind == PB_STRATEGY_PLACEMENT)
        return &s->device[v];
    return s->group_devices + s->group_start[c->group[v]];
}

/* The batch shares of op v's replicas, NULL for even shares. */
static const double *compile_shares(const pb_compiler *c, int v)
{
    if (!c->share || c->s->kind == PB_STRATEGY_PLACEMENT)
        return NULL;
    return c->share + c->s->group_start[c->group[v]];
}

/* Bytes of part r of a tensor of S bytes split like op v. */
static double compile_part_bytes(const pb_compiler *c, int v, int r, double S)
{
    const double *sh = compile_shares(c, v);
    return sh ? floor(S * sh[r]) : floor(S / c->nrep[v]);
}

/* Whether ops a and b are split into the same parts (replica r of one reads replica r of the
 * other, wherever it is). */
static int compile_same_split(const pb_compiler *c, int a, int b)
{
    if (c->nrep[a] != c->nrep[b])
        return 0;
    const double *sa = compile_shares(c, a), *sb = compile_shares(c, b);
    if (!sa || !sb)
        return sa == sb;
    for (int r = 0; r < c->nrep[a]; r++)
        if (sa[r] != sb[r])
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- building nodes */

/* A new node of creation id c->n_nodes (not yet in the emit order). */
static int compile_node(pb_compiler *c, int kind, int origin, int device, pb_error *err)
{
    if (c->n_nodes >= c->cap_nodes && compile_reserve_nodes(c, c->n_nodes + 1))
        return pb_errorf(err, "out of memory");
    int id = c->n_nodes++;
    c->kind[id] = kind;
    c->origin[id] = origin;
    c->replica[id] = 0;
    c->device[id] = device;
    c->collective[id] = -1;
    c->cost[id] = 0;
    c->param[id] = 0;
    return id;
}

static void compile_emit(pb_compiler *c, int node)
{
    c->emit[c->n_emit++] = node;
}

static int compile_input_add(pb_compiler *c, int dst, int src, int port, double bytes,
                             pb_error *err)
{
    if (c->n_inputs >= c->cap_inputs &&
        array_grow(&c->inputs, &c->cap_inputs, c->n_inputs + 1, sizeof(compile_input)))
        return pb_errorf(err, "out of memory");
    c->inputs[c->n_inputs++] = (compile_input){dst, src, port, bytes};
    return PB_OK;
}

/* The memoised node of (op, port, kind, target), or -1. */
static int compile_memo_find(const pb_compiler *c, int op, int port, int kind, int target)
{
    for (int m = c->memo_head[op]; m >= 0; m = c->memo[m].next)
        if (c->memo[m].port == port && c->memo[m].kind == kind && c->memo[m].target == target)
            return c->memo[m].node;
    return -1;
}

static int compile_memo_add(pb_compiler *c, int op, int port, int kind, int target, int node,
                            pb_error *err)
{
    if (array_grow(&c->memo, &c->cap_memo, c->n_memo + 1, sizeof(compile_memo)))
        return pb_errorf(err, "out of memory");
    c->memo[c->n_memo] = (compile_memo){op, port, kind, target, node, c->memo_head[op]};
    c->memo_head[op] = c->n_memo++;
    return PB_OK;
}

/* A node joining every replica of split op u's port k on device d: Concat for a batch tensor,
 * AddN for partial sums.  Each replica's part travels at its part size. */
static int compile_gather(pb_compiler *c, int u, int k, double S, int d, pb_error *err)
{
    int kind = compile_split(c->g, u) == PB_SPLIT_BATCH ? PB_CNODE_CONCAT : PB_CNODE_ADDN;
    int m = compile_node(c, kind, u, d, err);
    if (m < 0)
        return PB_ERR;
    for (int q = 0; q < c->nrep[u]; q++)
        if (compile_input_add(c, m, c->first[u] + q, k, compile_part_bytes(c, u, q, S), err))
            return PB_ERR;
    compile_emit(c, m);
    return m;
}

/* The Split giving consumer v's parts of u's port k (memoised per v's device group). */
static int compile_to_parts(pb_compiler *c, int u, int k, double S, int v, pb_error *err)
{
    int m = compile_memo_find(c, u, k, COMPILE_TO_PARTS, c->group[v]);
    if (m >= 0)
        return m;
    int src = c->first[u], port = k, d = compile_devices(c, u)[0];
    if (c->part[u]) { /* split otherwise: join on the consumer's first device, split there */
        d = compile_devices(c, v)[0];
        src = compile_gather(c, u, k, S, d, err);
        port = 0;
        if (src < 0)
            return PB_ERR;
    }
    m = compile_node(c, PB_CNODE_SPLIT, u, d, err);
    if (m < 0 || compile_input_add(c, m, src, port, S, err))
        return PB_ERR;
    compile_emit(c, m);
    return compile_memo_add(c, u, k, COMPILE_TO_PARTS, c->group[v], m, err) ? PB_ERR : m;
}

/* Whether op v reads only the shape of its inputs (TensorFlow's Shape, ShapeN, Size, Rank): on a
 * batch-split input each replica can read its own part, as TensorFlow's replicas do, instead of
 * the whole tensor joined on one device. */
static int compile_reads_shape(const pb_graph *g, int v)
{
    static const char *const types[] = {"Shape", "ShapeN", "Size", "Rank"};
    const char *t = g->node_type ? g->node_type[v] : NULL;
    for (size_t i = 0; t && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(t, types[i]) == 0)
            return 1;
    return 0;
}

/* The replica of u on device d, or -1. */
static int compile_replica_on(const pb_compiler *c, int u, int d)
{
    const int *du = compile_devices(c, u);
    for (int q = 0; q < c->nrep[u]; q++)
        if (du[q] == d)
            return q;
    return -1;
}

/* The inputs of replica r of v for edge e (producer u, port k, S bytes). */
static int compile_read(pb_compiler *c, int v, int r, int e, pb_error *err)
{
    const pb_graph *g = c->g;
    int u = g->edge_src[e], k = g->edge_port[e], dst = c->first[v] + r;
    double S = g->edge_bytes[e];
    if (S == 0) { /* a control dependency waits for every replica */
        for (int q = 0; q < c->nrep[u]; q++)
            if (compile_input_add(c, dst, c->first[u] + q, k, 0, err))
                return PB_ERR;
        return PB_OK;
    }
    int sync = c->s->kind == PB_STRATEGY_REPLICATED
                   ? compile_memo_find(c, u, k, COMPILE_SYNC, c->group[v])
                   : -1;
    if (sync >= 0 && compile_role(g, v) == PB_ROLE_APPLY) {
        int src = c->kind[sync] == PB_CNODE_ALLREDUCE ? sync + r : sync;
        return compile_input_add(c, dst, src, 0, S, err);
    }
    if ((c->flags & PB_COMPILE_SUM_PARTS) && c->part[v] && c->part[u] &&
        compile_split(g, u) == PB_SPLIT_SUM && compile_split(g, v) == PB_SPLIT_SUM &&
        compile_same_split(c, u, v))
        return compile_input_add(c, dst, c->first[u] + r, k, compile_part_bytes(c, v, r, S), err);
    if (c->part[v] && compile_split(g, u) == PB_SPLIT_BATCH) {
        double bytes = compile_part_bytes(c, v, r, S);
        if (c->part[u] && compile_same_split(c, u, v))
            return compile_input_add(c, dst, c->first[u] + r, k, bytes, err);
        int m = compile_to_parts(c, u, k, S, v, err);
        return m < 0 ? PB_ERR : compile_input_add(c, dst, m, r, bytes, err);
    }
    int local =
        c->part[u] && compile_reads_shape(g, v) ? compile_replica_on(c, u, c->device[dst]) : -1;
    if (local >= 0)
        return compile_input_add(c, dst, c->first[u] + local, k, compile_part_bytes(c, u, local, S),
                                 err);
    if (c->part[u]) {
        int d = compile_devices(c, v)[0];
        int m = compile_memo_find(c, u, k, COMPILE_TO_WHOLE, d);
        if (m < 0) {
            m = compile_gather(c, u, k, S, d, err);
            if (m < 0 || compile_memo_add(c, u, k, COMPILE_TO_WHOLE, d, m, err))
                return PB_ERR;
        }
        return compile_input_add(c, dst, m, 0, S, err);
    }
    int q = compile_replica_on(c, u, c->device[dst]);
    return compile_input_add(c, dst, c->first[u] + (q >= 0 ? q : 0), k, S, err);
}

/* ---------------------------------------------------------------- strategy analysis */

/* ---------------------------------------------------------------- TAG's base groups */

/* Whether op v is of one of the types TAG treats as the step's input (specs/tag.md §2.2). */
static int compile_is_input(const pb_graph *g, int v)
{
    const char *t = g->node_type ? g->node_type[v] : NULL;
    return t && (strcmp(t, "Placeholder") == 0 || strcmp(t, "IteratorGetNext") == 0);
}

static int compile_find(int *parent, int v)
{
    while (parent[v] != v) {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    return v;
}

/* Puts u (grouped or not) into v's group. */
static void compile_union(int *parent, int v, int u)
{
    int rv = compile_find(parent, v);
    if (parent[u] < 0) {
        parent[u] = rv;
        return;
    }
    int ru = compile_find(parent, u);
    if (ru != rv)
        parent[ru] = rv;
}

/* Whether parameter p is read by optimizer op a alone among the optimizer ops: TAG groups an
 * optimizer op with its reference inputs (var, m, v), not with what every optimizer op reads by
 * value (Adam's beta1_power, beta2_power). */
static int compile_own_parameter(const pb_graph *g, int p, int a)
{
    for (int i = g->succ_start[p]; i < g->succ_start[p + 1]; i++)
        if (g->succ[i] != a && compile_role(g, g->succ[i]) == PB_ROLE_APPLY)
            return 0;
    return 1;
}

/* Whether the tensor of edge e (producer p) into v stays whole in TAG's analysis: a producer
 * that is not batch-split, or a gradient read by an optimizer op (TAG unflags it). */
static int compile_unbatched(const pb_graph *g, int p, int v)
{
    return compile_split(g, p) != PB_SPLIT_BATCH ||
           (compile_role(g, v) == PB_ROLE_APPLY && compile_role(g, p) == PB_ROLE_GRADIENT);
}

/*
 * TAG's base groups (specs/tag.md §2.2, with the graph's annotations for its batch flags): each
 * optimizer op starts a group with the parameter inputs no other optimizer op reads; then, in node
 * order, an input op or a descendant of one (over data edges) joins the group of every producer
 * that has a group and whose tensor stays whole, merging groups; what is left alone is a group of
 * its own.  A group whose members do not all have the same replica count n > 1, or that holds a
 * duplicate, is not batch-split (§3.2: "a replicated Full op computes the full batch on every
 * replica").
 */
static void compile_base_groups(pb_compiler *c)
{
    const pb_graph *g = c->g;
    int n = g->n_nodes, *parent = c->base;
    for (int v = 0; v < n; v++) {
        parent[v] = -1;
        c->in_d[v] = 0;
    }
    for (int v = 0; v < n; v++) {
        if (compile_role(g, v) != PB_ROLE_APPLY)
            continue;
        if (parent[v] < 0)
            parent[v] = v;
        for (int i = g->pred_start[v]; i < g->pred_start[v + 1]; i++)
            if (compile_role(g, g->pred[i]) == PB_ROLE_PARAMETER &&
                g->edge_bytes[g->pred_edge[i]] && compile_own_parameter(g, g->pred[i], v))
                compile_union(parent, v, g->pred[i]);
    }
    for (int j = 0; j < n; j++) {
        int v = c->op_order[j];
        for (int i = g->pred_start[v]; i < g->pred_start[v + 1]; i++) {
            int p = g->pred[i];
            if (g->edge_bytes[g->pred_edge[i]] && (compile_is_input(g, p) || c->in_d[p]))
                c->in_d[v] = 1;
        }
        if (!c->in_d[v] && !compile_is_input(g, v))
            continue;
        for (int i = g->pred_start[v]; i < g->pred_start[v + 1]; i++) {
            int p = g->pred[i];
            if (!g->edge_bytes[g->pred_edge[i]] || parent[p] < 0 || !compile_unbatched(g, p, v))
                continue;
            if (parent[v] < 0)
                parent[v] = compile_find(parent, p);
            else
                compile_union(parent, p, v);
        }
        if (parent[v] < 0)
            parent[v] = v;
    }
    for (int v = 0; v < n; v++) {
        if (parent[v] < 0)
            parent[v] = v;
        c->base_n[v] = -1; /* per root: the members' replica count, -2 when they differ */
    }
    for (int v = 0; v < n; v++) {
        int r = compile_find(parent, v);
        int count = c->repl[v] == PB_REPL_DUPLICATE ? -2 : c->nrep[v];
        c->base_n[r] = c->base_n[r] == -1 || c->base_n[r] == count ? count : -2;
    }
    for (int v = 0; v < n; v++)
        if (c->base_n[compile_find(parent, v)] <= 1)
            c->part[v] = 0;
}

/* The name of option r, for messages. */
static const char *compile_option_name(int r)
{
    static const char *const names[] = {"none", "allreduce", "ps", "duplicate", "split"};
    return r >= 0 && r <= PB_REPL_SPLIT ? names[r] : "?";
}

/* Device group and option of every op (a parameter takes its optimizer op's), replica counts,
 * and which ops are batch-split; refuses what cannot be compiled. */
static int compile_forms(pb_compiler *c, pb_error *err)
{
    const pb_graph *g = c->g;
    const pb_strategy *s = c->s;
    int n = g->n_nodes;
    for (int v = 0; v < n; v++) {
        c->group[v] = s->kind == PB_STRATEGY_PLACEMENT ? -1 : s->device[v];
        c->repl[v] = s->kind == PB_STRATEGY_PLACEMENT ? PB_REPL_NONE : s->replication[v];
        if (c->op_repl && pb_strategy_op_option_bad(c->op_repl[v]))
            return pb_errorf(err,
                             "node '%s': per-op replication option %d (allowed: -1 = the "
                             "node's, 1 allreduce, 2 ps, 3 duplicate)",
                             g->node_name[v], c->op_repl[v]);
        if (c->op_repl && c->op_repl[v] >= 0)
            c->repl[v] = c->op_repl[v];
    }
    if (s->kind == PB_STRATEGY_REPLICATED)
        for (int v = 0; v < n; v++) {
            if (compile_role(g, v) != PB_ROLE_PARAMETER)
                continue;
            for (int i = g->succ_start[v]; i < g->succ_start[v + 1]; i++)
                if (compile_role(g, g->succ[i]) == PB_ROLE_APPLY) {
                    c->group[v] = s->device[g->succ[i]];
                    c->repl[v] = c->repl[g->succ[i]];
                    break;
                }
        }
    for (int v = 0; v < n; v++) {
        int gr = c->group[v], r = c->repl[v];
        c->nrep[v] = gr < 0 ? 1 : s->group_start[gr + 1] - s->group_start[gr];
        c->part[v] = 0;
        if (r == PB_REPL_SPLIT)
            return pb_errorf(err,
                             "node '%s': device group %d: option 'split' (model-parallel) is not "
                             "supported by the strategy compiler",
                             g->node_name[v], gr);
        int batch_split = (r == PB_REPL_ALLREDUCE || r == PB_REPL_PS) && c->nrep[v] > 1 &&
                          compile_role(g, v) != PB_ROLE_APPLY;
        if (!batch_split)
            continue;
        int cls = compile_split(g, v);
        if (cls == PB_SPLIT_UNSET)
            return pb_errorf(err,
                             "node '%s': device group %d with option '%s' splits the batch, but "
                             "the node has no 'split' annotation ('batch', 'sum' or 'none')",
                             g->node_name[v], gr, compile_option_name(r));
        c->part[v] = cls == PB_SPLIT_BATCH || cls == PB_SPLIT_SUM;
    }
    if (s->kind == PB_STRATEGY_REPLICATED && (c->flags & PB_COMPILE_BASE_GROUPS))
        compile_base_groups(c);
    return PB_OK;
}

/* The gradient input edge of optimizer op a: exactly one input with role gradient. */
static int compile_gradient_edge(const pb_compiler *c, int a, pb_error *err)
{
    const pb_graph *g = c->g;
    int found = -1;
    for (int i = g->pred_start[a]; i < g->pred_start[a + 1]; i++) {
        if (compile_role(g, g->pred[i]) != PB_ROLE_GRADIENT)
            continue;
        if (found >= 0)
            return pb_errorf(err, "optimizer op '%s' reads two gradients ('%s' and '%s')",
                             g->node_name[a], g->node_name[g->edge_src[found]],
                             g->node_name[g->pred[i]]);
        found = g->pred_edge[i];
    }
    if (found < 0)
        return pb_errorf(err,
                         "optimizer op '%s' is replicated with option '%s' but none of its inputs "
                         "has role 'gradient'",
                         g->node_name[a], compile_option_name(c->repl[a]));
    return found;
}

/* AllReduce members (one per device of a) or an AddN on the parameter server for optimizer op
 * a's split gradient. */
static int compile_sync(pb_compiler *c, int a, pb_error *err)
{
    int e = compile_gradient_edge(c, a, err);
    if (e < 0)
        return PB_ERR;
    const pb_graph *g = c->g;
    int p = g->edge_src[e], k = g->edge_port[e], n = c->nrep[a];
    double S = g->edge_bytes[e];
    if (!c->part[p] || S == 0 || compile_memo_find(c, p, k, COMPILE_SYNC, c->group[a]) >= 0)
        return PB_OK;
    const int *da = compile_devices(c, a), *dp = compile_devices(c, p);
    int ring = c->repl[a] == PB_REPL_ALLREDUCE && c->nrep[p] == n &&
               memcmp(da, dp, (size_t)n * sizeof(int)) == 0;
    int node = -1;
    if (ring) {
        int cap = c->cap_coll;
        if (array_grow(&c->coll_size, &cap, c->n_coll + 1, sizeof(int)) ||
            array_grow(&c->coll_first, &c->cap_coll, c->n_coll + 1, sizeof(int)))
            return pb_errorf(err, "out of memory");
        int inst = c->n_coll++;
        c->coll_size[inst] = n;
        c->coll_first[inst] = c->n_nodes;
        for (int r = 0; r < n; r++) {
            int m = compile_node(c, PB_CNODE_ALLREDUCE, p, da[r], err);
            if (m < 0 ||
                compile_input_add(c, m, c->first[p] + r, k, compile_part_bytes(c, p, r, S), err))
                return PB_ERR;
            c->collective[m] = inst;
            compile_emit(c, m);
            node = r == 0 ? m : node;
        }
    } else {
        node = compile_gather(c, p, k, S, da[0], err);
        if (node < 0)
            return PB_ERR;
        c->kind[node] = PB_CNODE_ADDN; /* a parameter server adds, whatever the class */
    }
    return compile_memo_add(c, p, k, COMPILE_SYNC, c->group[a], node, err);
}

/* Instance k waits for every member of instance k+1: collectives run last-created first. */
static int compile_chain_collectives(pb_compiler *c, pb_error *err)
{
    for (int k = 0; k + 1 < c->n_coll; k++)
        for (int i = 0; i < c->coll_size[k]; i++)
            for (int j = 0; j < c->coll_size[k + 1]; j++)
                if (compile_input_add(c, c->coll_first[k] + i, c->coll_first[k + 1] + j, 0, 0, err))
                    return PB_ERR;
    return PB_OK;
}

/* ---------------------------------------------------------------- order */

/*
 * TAG's queue topological order: start from `initial` (n of the ids 0 .. n_ids-1, closed under
 * inputs), pop the front; emit it if every
 * input (in_src[in_start[x] .. in_start[x+1])) is emitted, else push it to the back.  out[i] is
 * the i-th id emitted.  queue and done are n-entry scratch; scan[x] (n entries) remembers the
 * first input of x not yet seen emitted, so that a node pushed back resumes its check there (an
 * emitted input stays emitted: the order is the same, the work linear).
 */
static int compile_queue_sort(int n_ids, int n, const int *initial, const int *in_start,
                              const int *in_src, int *queue, unsigned char *done, int *scan,
                              int *out, pb_error *err)
{
    memcpy(queue, initial, (size_t)n * sizeof(int));
    memset(done, 0, (size_t)n_ids);
    for (int i = 0; i < n; i++)
        scan[initial[i]] = in_start[initial[i]];
    int head = 0, len = n, emitted = 0, stalled = 0;
    while (len > 0) {
        int x = queue[head];
        head = head + 1 == n ? 0 : head + 1;
        len--;
        int i = scan[x], end = in_start[x + 1];
        while (i < end && done[in_src[i]])
            i++;
        scan[x] = i;
        int ready = i == end;
        if (ready) {
            done[x] = 1;
            out[emitted++] = x;
            stalled = 0;
            continue;
        }
        if (++stalled > len + 1)
            return pb_errorf(err, "the compiled graph has a cycle");
        queue[(head + len) % n] = x;
        len++;
    }
    return PB_OK;
}

/* Inputs by creation id (stable), for the sort and the output. */
static int compile_csr(pb_compiler *c, pb_error *err)
{
    int n = c->n_nodes, m = c->n_inputs;
    int cap = c->cap_csr;
    if (array_grow(&c->csr_src, &cap, m > 0 ? m : 1, sizeof(int)))
        return pb_errorf(err, "out of memory");
    c->cap_csr = cap;
    memset(c->csr_start, 0, ((size_t)n + 1) * sizeof(int));
    for (int i = 0; i < m; i++)
        c->csr_start[c->inputs[i].dst + 1]++;
    for (int v = 0; v < n; v++)
        c->csr_start[v + 1] += c->csr_start[v];
    memset(c->in_count, 0, (size_t)n * sizeof(int));
    for (int i = 0; i < m; i++) {
        int d = c->inputs[i].dst;
        c->csr_src[c->csr_start[d] + c->in_count[d]++] = c->inputs[i].src;
    }
    return PB_OK;
}

/* The output arrays in sorted order (c->queue holds the order, c->rank the inverse). */
static int compile_output(pb_compiler *c, int kept, pb_error *err)
{
    int n = c->n_nodes, m = c->n_inputs;
    if (m > c->cap_out_inputs) {
        int cap = c->cap_out_inputs, got = cap;
        if (array_grow(&c->o_in_src, &got, m, sizeof(int)))
            return pb_errorf(err, "out of memory");
        got = cap;
        if (array_grow(&c->o_in_port, &got, m, sizeof(int)))
            return pb_errorf(err, "out of memory");
        got = cap;
        if (array_grow(&c->o_in_bytes, &got, m, sizeof(double)))
            return pb_errorf(err, "out of memory");
        c->cap_out_inputs = got;
    }
    /* Inputs of each node in creation order: an index of c->inputs per CSR slot. */
    int *slot = c->csr_src; /* reused: the sort is done */
    memset(c->in_count, 0, (size_t)n * sizeof(int));
    for (int i = 0; i < m; i++) {
        int d = c->inputs[i].dst;
        slot[c->csr_start[d] + c->in_count[d]++] = i;
    }
    int at = 0;
    for (int j = 0; j < kept; j++) {
        int x = c->queue[j];
        c->o_kind[j] = c->kind[x];
        c->o_origin[j] = c->origin[x];
        c->o_replica[j] = c->replica[x];
        c->o_device[j] = c->device[x];
        c->o_collective[j] = c->collective[x];
        c->o_cost[j] = c->cost[x];
        c->o_param[j] = c->param[x];
        c->o_in_start[j] = at;
        for (int i = c->csr_start[x]; i < c->csr_start[x + 1]; i++, at++) {
            const compile_input *in = &c->inputs[slot[i]];
            c->o_in_src[at] = c->rank[in->src];
            c->o_in_port[at] = in->port;
            c->o_in_bytes[at] = in->bytes;
        }
    }
    c->o_in_start[kept] = at;
    c->n_out_inputs = at;
    return PB_OK;
}

/* ---------------------------------------------------------------- the compiler */

/* Creation ids of every op's replicas, with their devices, costs and parameter bytes. */
static int compile_replicas(pb_compiler *c, pb_error *err)
{
    const pb_graph *g = c->g;
    for (int v = 0; v < g->n_nodes; v++) {
        const int *devs = compile_devices(c, v);
        const double *sh = compile_shares(c, v);
        c->first[v] = c->n_nodes;
        for (int r = 0; r < c->nrep[v]; r++) {
            int id = compile_node(c, PB_CNODE_OP, v, devs[r], err);
            if (id < 0)
                return PB_ERR;
            double cost = g->cost_us[v];
            if (c->part[v])
                cost = sh ? cost * sh[r] : compile_replica_cost(g, v, c->nrep[v]);
            double speed = pb_cluster_type(c->cl, c->cl->device_type[devs[r]])->speed_vs_ref;
            c->replica[id] = r;
            c->cost[id] = speed > 0 ? cost / speed : cost;
            c->param[id] = g->param_bytes[v];
        }
    }
    return PB_OK;
}

/* TAG's replace_placeholder: replica r of Placeholder v is generated from a shape Const (0 µs)
 * on its device, emitted just before it; the replica waits for it (no data moves). */
static int compile_shape(pb_compiler *c, int v, int r, pb_error *err)
{
    int dst = c->first[v] + r;
    int m = compile_node(c, PB_CNODE_SHAPE, v, c->device[dst], err);
    if (m < 0 || compile_input_add(c, dst, m, 0, 0, err))
        return PB_ERR;
    compile_emit(c, m);
    return PB_OK;
}

/* Marks in c->keep the ancestors of the nodes on the stack (c->rank, `top` entries). */
static void compile_mark_ancestors(pb_compiler *c, int top)
{
    int *stack = c->rank;
    while (top > 0) {
        int x = stack[--top];
        for (int i = c->csr_start[x]; i < c->csr_start[x + 1]; i++) {
            int u = c->csr_src[i];
            if (!c->keep[u]) {
                c->keep[u] = 1;
                stack[top++] = u;
            }
        }
    }
}

/* TAG's pruning (specs/tag.md §3.4): keeps the replicas of every op without successors (TAG's
 * sink, a NoOp, has one replica, on device 0) and their ancestors, and every member of an
 * AllReduce instance one member of which is kept; drops the rest from the emit order.  Returns
 * the nodes kept. */
static int compile_prune(pb_compiler *c)
{
    const pb_graph *g = c->g;
    int top = 0;
    memset(c->keep, 0, (size_t)c->n_nodes);
    for (int v = 0; v < g->n_nodes; v++)
        for (int r = 0; g->succ_start[v] == g->succ_start[v + 1] && r < c->nrep[v]; r++) {
            c->keep[c->first[v] + r] = 1;
            c->rank[top++] = c->first[v] + r;
        }
    for (int more = 1; more;) {
        compile_mark_ancestors(c, top);
        top = more = 0;
        for (int k = 0; k < c->n_coll; k++) {
            int any = 0;
            for (int i = 0; i < c->coll_size[k]; i++)
                any |= c->keep[c->coll_first[k] + i];
            for (int i = 0; any && i < c->coll_size[k]; i++)
                if (!c->keep[c->coll_first[k] + i]) {
                    c->keep[c->coll_first[k] + i] = 1;
                    c->rank[top++] = c->coll_first[k] + i;
                    more = 1;
                }
        }
    }
    int m = 0;
    for (int i = 0; i < c->n_emit; i++)
        if (c->keep[c->emit[i]])
            c->emit[m++] = c->emit[i];
    c->n_emit = m;
    return m;
}

static int compile_build(pb_compiler *c, pb_error *err)
{
    const pb_graph *g = c->g;
    int n = g->n_nodes;
    if (compile_forms(c, err) || compile_replicas(c, err))
        return PB_ERR;
    for (int v = 0; v < n; v++)
        c->memo_head[v] = -1;
    for (int i = 0; i < n; i++) {
        int a = c->op_order[i];
        if (compile_role(g, a) == PB_ROLE_APPLY && c->nrep[a] > 1 &&
            (c->repl[a] == PB_REPL_ALLREDUCE || c->repl[a] == PB_REPL_PS) &&
            compile_sync(c, a, err))
            return PB_ERR;
    }
    if (compile_chain_collectives(c, err))
        return PB_ERR;
    for (int i = 0; i < n; i++) {
        int v = c->op_order[i];
        for (int r = 0; r < c->nrep[v]; r++)
            for (int j = g->pred_start[v]; j < g->pred_start[v + 1]; j++)
                if (compile_read(c, v, r, g->pred_edge[j], err))
                    return PB_ERR;
        int shape = c->s->kind == PB_STRATEGY_REPLICATED && (c->flags & PB_COMPILE_PLACEHOLDER) &&
                    g->node_type && strcmp(g->node_type[v], "Placeholder") == 0;
        for (int r = 0; r < c->nrep[v]; r++) {
            if (shape && compile_shape(c, v, r, err))
                return PB_ERR;
            compile_emit(c, c->first[v] + r);
        }
    }
    return PB_OK;
}

int pb_compile(pb_compiler *c, const pb_graph *g, const pb_cluster *cl, const pb_strategy *s,
               const pb_compiled **out, pb_error *err)
{
    if (pb_strategy_check(s, g->n_nodes, cl, err))
        return PB_ERR;
    if (s->kind != PB_STRATEGY_PLACEMENT && s->kind != PB_STRATEGY_REPLICATED)
        return pb_errorf(err,
                         "the strategy compiler takes placements and replicated strategies, "
                         "not kind %d",
                         s->kind);
    c->g = g;
    c->cl = cl;
    c->s = s;
    c->share = PB_STRATEGY_HAS(s, device_share) ? s->device_share : NULL;
    c->op_repl = PB_STRATEGY_HAS(s, op_replication) && s->kind == PB_STRATEGY_REPLICATED
                     ? s->op_replication
                     : NULL;
    c->n_nodes = c->n_inputs = c->n_memo = c->n_coll = c->n_emit = 0;
    int n = g->n_nodes;
    if (compile_reserve_ops(c, n) || compile_reserve_nodes(c, n))
        return pb_errorf(err, "out of memory");
    for (int v = 0; v < n; v++)
        c->emit[v] = v;
    if (compile_queue_sort(n, n, c->emit, g->pred_start, g->pred, c->queue, c->done, c->in_count,
                           c->op_order, err) ||
        compile_build(c, err) || compile_csr(c, err))
        return PB_ERR;
    int kept = c->s->kind == PB_STRATEGY_REPLICATED && (c->flags & PB_COMPILE_PRUNE)
                   ? compile_prune(c)
                   : c->n_emit;
    if (compile_queue_sort(c->n_nodes, kept, c->emit, c->csr_start, c->csr_src, c->rank, c->done,
                           c->in_count, c->queue, err))
        return PB_ERR;
    for (int j = 0; j < kept; j++)
        c->rank[c->queue[j]] = j;
    if (compile_output(c, kept, err))
        return PB_ERR;
    int split = 0;
    for (int v = 0; v < n; v++)
        split += c->part[v];
    c->out = (pb_compiled){
        .struct_size = sizeof(pb_compiled),
        .n_nodes = kept,
        .n_inputs = c->n_out_inputs,
        .n_collectives = c->n_coll,
        .kind = c->o_kind,
        .origin = c->o_origin,
        .replica = c->o_replica,
        .device = c->o_device,
        .collective = c->o_collective,
        .cost_us = c->o_cost,
        .param_bytes = c->o_param,
        .in_start = c->o_in_start,
        .in_src = c->o_in_src,
        .in_port = c->o_in_port,
        .in_bytes = c->o_in_bytes,
        .coll_size = c->coll_size,
        .n_split_ops = split,
        .op_part = c->part,
    };
    *out = &c->out;
    return PB_OK;
}
