/* graph.c — graph builder, validation, CSR adjacency, grouped-graph derivation and checksums. */
#include "graph.h"

#include "traverse.h"

#include "core/array.h"
#include "core/strmap.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gb_node {
    char *name;
    char *type;
    double cost_us, flops, bytes_accessed, param_bytes;
    int n_ports;
    double *port_bytes;
    int group; /* index into group names, -1 */
    int colocation;
    int placed_with; /* node index, -1 */
    int role, split, n_replica_costs;
    int *replica_cost_n;
    double *replica_cost_us;
} gb_node;

typedef struct gb_edge {
    int src, dst, port;
} gb_edge;

struct graph_builder {
    char *name;
    char *origin; /* graph_builder_set_origin, or NULL */
    gb_node *nodes;
    int n_nodes, cap_nodes;
    gb_edge *edges;
    int n_edges, cap_edges;
    strmap names;
    strmap pairs; /* "src,dst" -> edge index */
    strmap groups;
    char **group_names;
    int n_groups, cap_groups;
    int has_colocation;
    int has_placed_with;
    int has_annotations; /* some node has a role or split class */
    int has_replica_costs;
};

/* The allocation behind a pb_graph: every array is owned here. */
typedef struct graph_owned {
    pb_graph g;
    char *name, *checksum, *origin;
    char **node_name, **node_type;
    double *cost_us, *flops, *bytes_accessed, *param_bytes, *out_bytes, *port_bytes, *edge_bytes;
    int *port_start, *edge_src, *edge_dst, *edge_port;
    int *succ_start, *succ, *succ_edge, *pred_start, *pred, *pred_edge;
    int *group_of, *colocation, *placed_with;
    unsigned char *node_role, *node_split;
    int *replica_cost_start, *replica_cost_n;
    double *replica_cost_us;
    struct graph_owned *grouped_owned;
} graph_owned;

graph_builder *graph_builder_new(const char *name)
{
    graph_builder *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->name = strdup(name ? name : "");
    strmap_init(&b->names);
    strmap_init(&b->pairs);
    strmap_init(&b->groups);
    return b;
}

void graph_builder_free(graph_builder *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->n_nodes; i++) {
        free(b->nodes[i].name);
        free(b->nodes[i].type);
        free(b->nodes[i].port_bytes);
        free(b->nodes[i].replica_cost_n);
        free(b->nodes[i].replica_cost_us);
    }
    for (int i = 0; i < b->n_groups; i++)
        free(b->group_names[i]);
    free(b->group_names);
    free(b->nodes);
    free(b->edges);
    free(b->name);
    free(b->origin);
    strmap_free(&b->names);
    strmap_free(&b->pairs);
    strmap_free(&b->groups);
    free(b);
}

static int graph_check_number(const char *node, const char *field, double v, pb_error *err)
{
    if (isnan(v) || isinf(v) || v < 0)
        return pb_errorf(err, "node '%s': %s is %g (must be a finite number >= 0)", node, field, v);
    return PB_OK;
}

/* 0.0 for -0.0 (which passes the >= 0 checks): equal graphs must get equal checksums. */
static double graph_positive_zero(double v)
{
    return v == 0 ? 0.0 : v;
}

static int graph_group_index(graph_builder *b, const char *group)
{
    int g = strmap_get(&b->groups, group);
    if (g >= 0)
        return g;
    if (array_grow(&b->group_names, &b->cap_groups, b->n_groups + 1, sizeof(char *)))
        return -1;
    b->group_names[b->n_groups] = strdup(group);
    if (!b->group_names[b->n_groups] || strmap_put(&b->groups, group, b->n_groups))
        return -1;
    return b->n_groups++;
}

/* Range checks of a node's replication annotations. */
static int graph_check_annotations(const char *name, const graph_node_attrs *a, pb_error *err)
{
    if (a->role < PB_ROLE_OP || a->role > PB_ROLE_APPLY)
        return pb_errorf(err, "node '%s': unknown role %d", name, a->role);
    if (a->split < PB_SPLIT_UNSET || a->split > PB_SPLIT_NONE)
        return pb_errorf(err, "node '%s': unknown split class %d", name, a->split);
    for (int i = 0; i < a->n_replica_costs; i++) {
        if (a->replica_cost_n[i] < 1)
            return pb_errorf(err, "node '%s': replica cost for %d replicas (must be >= 1)", name,
                             a->replica_cost_n[i]);
        if (graph_check_number(name, "replica cost", a->replica_cost_us[i], err))
            return PB_ERR;
    }
    return PB_OK;
}

/* Copies the replication annotations of a into n; -1 when out of memory. */
static int graph_copy_annotations(graph_builder *b, gb_node *n, const graph_node_attrs *a)
{
    n->role = a->role;
    n->split = a->split;
    n->n_replica_costs = a->n_replica_costs;
    b->has_annotations |= a->role != PB_ROLE_OP || a->split != PB_SPLIT_UNSET;
    if (a->n_replica_costs == 0)
        return 0;
    b->has_replica_costs = 1;
    n->replica_cost_n = malloc((size_t)a->n_replica_costs * sizeof(int));
    n->replica_cost_us = malloc((size_t)a->n_replica_costs * sizeof(double));
    if (!n->replica_cost_n || !n->replica_cost_us)
        return -1;
    memcpy(n->replica_cost_n, a->replica_cost_n, (size_t)a->n_replica_costs * sizeof(int));
    for (int i = 0; i < a->n_replica_costs; i++)
        n->replica_cost_us[i] = graph_positive_zero(a->replica_cost_us[i]);
    return 0;
}

int graph_add_node(graph_builder *b, const char *name, const graph_node_attrs *a, pb_error *err)
{
    if (!name || !*name)
        return pb_errorf(err, "node %d has an empty name", b->n_nodes);
    if (strmap_get(&b->names, name) >= 0)
        return pb_errorf(err, "duplicate node id '%s'", name);
    if (a->group && !*a->group) /* it would name a node of the grouped graph */
        return pb_errorf(err, "node '%s' has an empty group name", name);
    if (graph_check_number(name, "cost", a->cost_us, err) ||
        graph_check_number(name, "flops", a->flops, err) ||
        graph_check_number(name, "bytes", a->bytes_accessed, err) ||
        graph_check_number(name, "mem", a->param_bytes, err) ||
        graph_check_annotations(name, a, err))
        return PB_ERR;
    for (int p = 0; p < a->n_ports; p++)
        if (graph_check_number(name, "output size", a->port_bytes[p], err))
            return PB_ERR;
    if (array_grow(&b->nodes, &b->cap_nodes, b->n_nodes + 1, sizeof(gb_node)))
        return pb_errorf(err, "out of memory");
    gb_node *n = &b->nodes[b->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = strdup(name);
    n->type = strdup(a->type ? a->type : "");
    n->cost_us = graph_positive_zero(a->cost_us);
    n->flops = graph_positive_zero(a->flops);
    n->bytes_accessed = graph_positive_zero(a->bytes_accessed);
    n->param_bytes = graph_positive_zero(a->param_bytes);
    n->n_ports = a->n_ports;
    n->colocation = a->colocation;
    n->placed_with = -1;
    n->group = -1;
    if (a->n_ports > 0) {
        n->port_bytes = malloc((size_t)a->n_ports * sizeof(double));
        for (int p = 0; n->port_bytes && p < a->n_ports; p++)
            n->port_bytes[p] = graph_positive_zero(a->port_bytes[p]);
    }
    if (a->group)
        n->group = graph_group_index(b, a->group);
    if (!n->name || !n->type || (a->n_ports > 0 && !n->port_bytes) || (a->group && n->group < 0) ||
        graph_copy_annotations(b, n, a) || strmap_put(&b->names, name, b->n_nodes)) {
        free(n->name);
        free(n->type);
        free(n->port_bytes);
        free(n->replica_cost_n);
        free(n->replica_cost_us);
        return pb_errorf(err, "out of memory");
    }
    if (a->colocation >= 0)
        b->has_colocation = 1;
    return b->n_nodes++;
}

int graph_find_node(const graph_builder *b, const char *name)
{
    return strmap_get(&b->names, name);
}

int graph_builder_node_count(const graph_builder *b)
{
    return b->n_nodes;
}

int graph_set_placed_with(graph_builder *b, int v, int anchor, pb_error *err)
{
    if (v < 0 || v >= b->n_nodes || anchor < 0 || anchor >= b->n_nodes)
        return pb_errorf(err, "placed_with %d -> %d names a node that does not exist", v, anchor);
    if (v == anchor)
        return pb_errorf(err, "node '%s' is placed with itself", b->nodes[v].name);
    b->nodes[v].placed_with = anchor;
    b->has_placed_with = 1;
    return PB_OK;
}

int graph_add_edge(graph_builder *b, int src, int dst, int port, pb_error *err)
{
    if (src < 0 || src >= b->n_nodes || dst < 0 || dst >= b->n_nodes)
        return pb_errorf(err, "edge %d -> %d names a node that does not exist", src, dst);
    if (src == dst)
        return pb_errorf(err, "edge '%s' -> '%s' is a self loop", b->nodes[src].name,
                         b->nodes[dst].name);
    if (port < 0 || port > GRAPH_MAX_PORT)
        return pb_errorf(err, "edge '%s' -> '%s' reads port %d (must be 0..%d)", b->nodes[src].name,
                         b->nodes[dst].name, port, GRAPH_MAX_PORT);
    char key[32];
    snprintf(key, sizeof key, "%d,%d", src, dst);
    int e = strmap_get(&b->pairs, key);
    if (e >= 0) {
        b->edges[e].port = port;
        return e;
    }
    if (array_grow(&b->edges, &b->cap_edges, b->n_edges + 1, sizeof(gb_edge)) ||
        strmap_put(&b->pairs, key, b->n_edges))
        return pb_errorf(err, "out of memory");
    b->edges[b->n_edges] = (gb_edge){src, dst, port};
    return b->n_edges++;
}

static void graph_owned_free(graph_owned *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->g.n_nodes; i++) {
        if (o->node_name)
            free(o->node_name[i]);
        if (o->node_type)
            free(o->node_type[i]);
    }
    free(o->node_name);
    free(o->node_type);
    free(o->name);
    free(o->checksum);
    free(o->origin);
    free(o->cost_us);
    free(o->flops);
    free(o->bytes_accessed);
    free(o->param_bytes);
    free(o->out_bytes);
    free(o->port_bytes);
    free(o->edge_bytes);
    free(o->port_start);
    free(o->edge_src);
    free(o->edge_dst);
    free(o->edge_port);
    free(o->succ_start);
    free(o->succ);
    free(o->succ_edge);
    free(o->pred_start);
    free(o->pred);
    free(o->pred_edge);
    free(o->group_of);
    free(o->colocation);
    free(o->placed_with);
    free(o->node_role);
    free(o->node_split);
    free(o->replica_cost_start);
    free(o->replica_cost_n);
    free(o->replica_cost_us);
    graph_owned_free(o->grouped_owned);
    free(o);
}

void graph_free(pb_graph *g)
{
    graph_owned_free((graph_owned *)g);
}

/* Allocates the per-node and per-edge arrays of o for n nodes, m edges, p ports. */
static int graph_alloc(graph_owned *o, int n, int m, int p)
{
    size_t nn = (size_t)n ? (size_t)n : 1, mm = (size_t)m ? (size_t)m : 1,
           pp = (size_t)p ? (size_t)p : 1;
    o->node_name = calloc(nn, sizeof(char *));
    o->node_type = calloc(nn, sizeof(char *));
    o->cost_us = calloc(nn, sizeof(double));
    o->flops = calloc(nn, sizeof(double));
    o->bytes_accessed = calloc(nn, sizeof(double));
    o->param_bytes = calloc(nn, sizeof(double));
    o->out_bytes = calloc(nn, sizeof(double));
    o->port_start = calloc(nn + 1, sizeof(int));
    o->port_bytes = calloc(pp, sizeof(double));
    o->edge_src = calloc(mm, sizeof(int));
    o->edge_dst = calloc(mm, sizeof(int));
    o->edge_port = calloc(mm, sizeof(int));
    o->edge_bytes = calloc(mm, sizeof(double));
    o->succ_start = calloc(nn + 1, sizeof(int));
    o->succ = calloc(mm, sizeof(int));
    o->succ_edge = calloc(mm, sizeof(int));
    o->pred_start = calloc(nn + 1, sizeof(int));
    o->pred = calloc(mm, sizeof(int));
    o->pred_edge = calloc(mm, sizeof(int));
    o->g.n_nodes = n;
    o->g.n_edges = m;
    return (o->node_name && o->node_type && o->cost_us && o->flops && o->bytes_accessed &&
            o->param_bytes && o->out_bytes && o->port_start && o->port_bytes && o->edge_src &&
            o->edge_dst && o->edge_port && o->edge_bytes && o->succ_start && o->succ &&
            o->succ_edge && o->pred_start && o->pred && o->pred_edge)
               ? 0
               : -1;
}

/* Fills CSR arrays from edge_src/edge_dst, keeping edge insertion order within each row. */
static void graph_build_csr(graph_owned *o)
{
    int n = o->g.n_nodes, m = o->g.n_edges;
    for (int e = 0; e < m; e++) {
        o->succ_start[o->edge_src[e] + 1]++;
        o->pred_start[o->edge_dst[e] + 1]++;
    }
    for (int v = 0; v < n; v++) {
        o->succ_start[v + 1] += o->succ_start[v];
        o->pred_start[v + 1] += o->pred_start[v];
    }
    int *sfill = calloc((size_t)n + 1, sizeof(int)), *pfill = calloc((size_t)n + 1, sizeof(int));
    for (int e = 0; e < m; e++) {
        int s = o->edge_src[e], d = o->edge_dst[e];
        int i = o->succ_start[s] + sfill[s]++;
        o->succ[i] = d;
        o->succ_edge[i] = e;
        int j = o->pred_start[d] + pfill[d]++;
        o->pred[j] = s;
        o->pred_edge[j] = e;
    }
    free(sfill);
    free(pfill);
}

static void graph_wire(graph_owned *o)
{
    pb_graph *g = &o->g;
    g->struct_size = sizeof(pb_graph);
    g->name = o->name;
    g->checksum = o->checksum;
    g->node_name = (const char *const *)o->node_name;
    g->node_type = (const char *const *)o->node_type;
    g->cost_us = o->cost_us;
    g->flops = o->flops;
    g->bytes_accessed = o->bytes_accessed;
    g->param_bytes = o->param_bytes;
    g->out_bytes = o->out_bytes;
    g->port_start = o->port_start;
    g->port_bytes = o->port_bytes;
    g->edge_src = o->edge_src;
    g->edge_dst = o->edge_dst;
    g->edge_port = o->edge_port;
    g->edge_bytes = o->edge_bytes;
    g->succ_start = o->succ_start;
    g->succ = o->succ;
    g->succ_edge = o->succ_edge;
    g->pred_start = o->pred_start;
    g->pred = o->pred;
    g->pred_edge = o->pred_edge;
    g->group_of = o->group_of;
    g->colocation = o->colocation;
    g->placed_with = o->placed_with;
    g->node_role = o->node_role;
    g->node_split = o->node_split;
    g->replica_cost_start = o->replica_cost_start;
    g->replica_cost_n = o->replica_cost_n;
    g->replica_cost_us = o->replica_cost_us;
    g->grouped = o->grouped_owned ? &o->grouped_owned->g : g;
}

/* Fails naming a node on a cycle.  Wires o->g first so that traverse_kahn can read it (graph_build
 * wires again once the checksum and the grouped graph exist). */
static int graph_check_acyclic(graph_owned *o, const char *what, pb_error *err)
{
    graph_wire(o);
    int n = o->g.n_nodes, count = 0;
    int *order = malloc(((size_t)n + 1) * sizeof(int));
    if (!order)
        return pb_errorf(err, "out of memory");
    int rc = traverse_kahn(&o->g, 0, order, &count, err);
    if (rc == PB_OK && count < n) {
        int v = traverse_cycle_node(&o->g, order, count);
        rc = v < 0 ? pb_errorf(err, "out of memory")
                   : pb_errorf(err, "%s has a cycle through '%s'", what, o->node_name[v]);
    }
    free(order);
    return rc;
}

static void graph_checksum(graph_owned *o)
{
    const pb_graph *g = &o->g;
    unsigned long long h = STRMAP_FNV_BASIS;
    for (int v = 0; v < g->n_nodes; v++) {
        h = strmap_fnv1a(h, o->node_name[v], strlen(o->node_name[v]) + 1);
        h = strmap_fnv1a(h, o->node_type[v], strlen(o->node_type[v]) + 1);
        h = strmap_fnv1a(h, &o->cost_us[v], sizeof(double));
        h = strmap_fnv1a(h, &o->flops[v], sizeof(double));
        h = strmap_fnv1a(h, &o->bytes_accessed[v], sizeof(double));
        h = strmap_fnv1a(h, &o->param_bytes[v], sizeof(double));
        int np = o->port_start[v + 1] - o->port_start[v];
        h = strmap_fnv1a(h, &np, sizeof np);
        h = strmap_fnv1a(h, &o->port_bytes[o->port_start[v]], (size_t)np * sizeof(double));
        if (o->group_of)
            h = strmap_fnv1a(h, &o->group_of[v], sizeof(int));
        if (o->colocation)
            h = strmap_fnv1a(h, &o->colocation[v], sizeof(int));
        if (o->placed_with)
            h = strmap_fnv1a(h, &o->placed_with[v], sizeof(int));
        if (o->node_role) {
            unsigned char ann[2] = {o->node_role[v], o->node_split[v]};
            h = strmap_fnv1a(h, ann, sizeof ann);
        }
        if (o->replica_cost_start) {
            int a = o->replica_cost_start[v], k = o->replica_cost_start[v + 1] - a;
            h = strmap_fnv1a(h, &k, sizeof k);
            h = strmap_fnv1a(h, &o->replica_cost_n[a], (size_t)k * sizeof(int));
            h = strmap_fnv1a(h, &o->replica_cost_us[a], (size_t)k * sizeof(double));
        }
    }
    for (int e = 0; e < g->n_edges; e++) {
        int t[3] = {o->edge_src[e], o->edge_dst[e], o->edge_port[e]};
        h = strmap_fnv1a(h, t, sizeof t);
    }
    o->checksum = malloc(17);
    if (o->checksum)
        snprintf(o->checksum, 17, "%016llx", h);
}

/* The replication annotations of the builder's nodes, when any node has one; -1 when out of
 * memory. */
static int graph_build_annotations(const graph_builder *b, graph_owned *o)
{
    int n = b->n_nodes;
    size_t nn = n ? (size_t)n : 1;
    if (b->has_annotations) {
        o->node_role = malloc(nn);
        o->node_split = malloc(nn);
        if (!o->node_role || !o->node_split)
            return -1;
        for (int v = 0; v < n; v++) {
            o->node_role[v] = (unsigned char)b->nodes[v].role;
            o->node_split[v] = (unsigned char)b->nodes[v].split;
        }
    }
    if (!b->has_replica_costs)
        return 0;
    int total = 0;
    for (int v = 0; v < n; v++)
        total += b->nodes[v].n_replica_costs;
    o->replica_cost_start = malloc((nn + 1) * sizeof(int));
    o->replica_cost_n = malloc((size_t)total * sizeof(int));
    o->replica_cost_us = malloc((size_t)total * sizeof(double));
    if (!o->replica_cost_start || !o->replica_cost_n || !o->replica_cost_us)
        return -1;
    o->replica_cost_start[0] = 0;
    for (int v = 0; v < n; v++) {
        const gb_node *s = &b->nodes[v];
        int at = o->replica_cost_start[v];
        o->replica_cost_start[v + 1] = at + s->n_replica_costs;
        if (s->n_replica_costs == 0)
            continue;
        memcpy(o->replica_cost_n + at, s->replica_cost_n, (size_t)s->n_replica_costs * sizeof(int));
        memcpy(o->replica_cost_us + at, s->replica_cost_us,
               (size_t)s->n_replica_costs * sizeof(double));
    }
    return 0;
}

/* pb_graph.placed_with: every anchor must itself follow its group (one level, no chains). */
static int graph_build_placed_with(const graph_builder *b, graph_owned *o, pb_error *err)
{
    int n = b->n_nodes;
    for (int v = 0; v < n; v++) {
        int a = b->nodes[v].placed_with;
        if (a >= 0 && b->nodes[a].placed_with >= 0)
            return pb_errorf(err,
                             "node '%s' is placed with '%s', which is itself placed with '%s' "
                             "(name the op at the end of the chain)",
                             o->node_name[v], o->node_name[a],
                             o->node_name[b->nodes[a].placed_with]);
    }
    o->placed_with = malloc((n > 0 ? (size_t)n : 1) * sizeof(int));
    if (!o->placed_with)
        return pb_errorf(err, "out of memory");
    for (int v = 0; v < n; v++)
        o->placed_with[v] = b->nodes[v].placed_with;
    return PB_OK;
}

/* The op-level graph of the builder: nodes, ports padded to the highest port read, edges. */
static int graph_build_ops(graph_builder *b, graph_owned *o, pb_error *err)
{
    int n = b->n_nodes, m = b->n_edges;
    int *nports = calloc((size_t)n + 1, sizeof(int));
    if (!nports)
        return pb_errorf(err, "out of memory");
    for (int v = 0; v < n; v++)
        nports[v] = b->nodes[v].n_ports;
    for (int e = 0; e < m; e++)
        if (b->edges[e].port + 1 > nports[b->edges[e].src])
            nports[b->edges[e].src] = b->edges[e].port + 1;
    long long p = 0; /* a node has as many ports as its edges read: the sum can pass INT_MAX */
    for (int v = 0; v < n; v++)
        p += nports[v];
    if (p > INT_MAX) {
        free(nports);
        return pb_errorf(err, "graph has %lld output ports (at most %d)", p, INT_MAX);
    }
    if (graph_alloc(o, n, m, (int)p)) {
        free(nports);
        return pb_errorf(err, "out of memory");
    }
    o->name = strdup(b->name);
    for (int v = 0; v < n; v++) {
        gb_node *s = &b->nodes[v];
        o->node_name[v] = s->name;
        o->node_type[v] = s->type;
        s->name = s->type = NULL; /* moved */
        o->cost_us[v] = s->cost_us;
        o->flops[v] = s->flops;
        o->bytes_accessed[v] = s->bytes_accessed;
        o->param_bytes[v] = s->param_bytes;
        o->port_start[v + 1] = o->port_start[v] + nports[v];
        double sum = 0;
        for (int k = 0; k < nports[v]; k++) {
            double bytes = k < s->n_ports ? s->port_bytes[k] : 0.0;
            o->port_bytes[o->port_start[v] + k] = bytes;
            sum += bytes;
        }
        o->out_bytes[v] = sum;
    }
    free(nports);
    for (int e = 0; e < m; e++) {
        o->edge_src[e] = b->edges[e].src;
        o->edge_dst[e] = b->edges[e].dst;
        o->edge_port[e] = b->edges[e].port;
        o->edge_bytes[e] = o->port_bytes[o->port_start[o->edge_src[e]] + o->edge_port[e]];
    }
    if (b->has_colocation) {
        o->colocation = malloc((size_t)(n ? n : 1) * sizeof(int));
        if (!o->colocation)
            return pb_errorf(err, "out of memory");
        for (int v = 0; v < n; v++)
            o->colocation[v] = b->nodes[v].colocation;
    }
    if (b->has_placed_with && graph_build_placed_with(b, o, err))
        return PB_ERR;
    if (graph_build_annotations(b, o))
        return pb_errorf(err, "out of memory");
    graph_build_csr(o);
    return graph_check_acyclic(o, "graph", err);
}

/*
 * The grouped graph: one node per group in order of first appearance of its ops, cost and
 * memory summed over members, one output port carrying the members' output bytes; an edge between
 * two groups for every op edge that crosses, in order of first crossing, carrying the bytes of the
 * distinct (producer, port) pairs that cross it (one transfer per port, as the simulator sends).
 */
static int graph_build_grouped(graph_builder *b, graph_owned *o, pb_error *err)
{
    int n = o->g.n_nodes, ng = b->n_groups;
    for (int v = 0; v < n; v++)
        if (b->nodes[v].group < 0)
            return pb_errorf(err, "node '%s' has no group while other nodes do", o->node_name[v]);
    o->group_of = malloc((size_t)(n ? n : 1) * sizeof(int));
    int *first = malloc((size_t)(ng ? ng : 1) * sizeof(int)); /* group label -> grouped index */
    if (!o->group_of || !first) {
        free(first);
        return pb_errorf(err, "out of memory");
    }
    for (int k = 0; k < ng; k++)
        first[k] = -1;
    int count = 0;
    for (int v = 0; v < n; v++) {
        int k = b->nodes[v].group;
        if (first[k] < 0)
            first[k] = count++;
        o->group_of[v] = first[k];
    }
    /* Crossing edges, deduplicated per group pair; bytes per distinct producer port. */
    strmap pair, port_seen;
    strmap_init(&pair);
    strmap_init(&port_seen);
    gb_edge *ge = malloc((size_t)(o->g.n_edges ? o->g.n_edges : 1) * sizeof(gb_edge));
    double *gbytes = calloc((size_t)(o->g.n_edges ? o->g.n_edges : 1), sizeof(double));
    int gm = 0, rc = PB_OK;
    if (!ge || !gbytes)
        rc = pb_errorf(err, "out of memory");
    char key[64];
    for (int e = 0; rc == PB_OK && e < o->g.n_edges; e++) {
        int gs = o->group_of[o->edge_src[e]], gd = o->group_of[o->edge_dst[e]];
        if (gs == gd)
            continue;
        snprintf(key, sizeof key, "%d,%d", gs, gd);
        int ei = strmap_get(&pair, key);
        if (ei < 0) {
            ei = gm++;
            ge[ei] = (gb_edge){gs, gd, 0};
            strmap_put(&pair, key, ei);
        }
        snprintf(key, sizeof key, "%d:%d>%d", o->edge_src[e], o->edge_port[e], gd);
        if (strmap_get(&port_seen, key) < 0) {
            strmap_put(&port_seen, key, 1);
            gbytes[ei] += o->edge_bytes[e];
        }
    }
    strmap_free(&pair);
    strmap_free(&port_seen);
    graph_owned *q = NULL;
    if (rc == PB_OK) {
        q = calloc(1, sizeof *q);
        if (!q || graph_alloc(q, count, gm, count))
            rc = pb_errorf(err, "out of memory");
    }
    if (rc == PB_OK) {
        o->grouped_owned = q;
        q->name = strdup(b->name);
        for (int k = 0; k < ng; k++) {
            if (first[k] < 0)
                continue;
            q->node_name[first[k]] = strdup(b->group_names[k]);
            q->node_type[first[k]] = strdup("group");
        }
        for (int v = 0; v < n; v++) {
            int gv = o->group_of[v];
            q->cost_us[gv] += o->cost_us[v];
            q->flops[gv] += o->flops[v];
            q->bytes_accessed[gv] += o->bytes_accessed[v];
            q->param_bytes[gv] += o->param_bytes[v];
            q->out_bytes[gv] += o->out_bytes[v];
        }
        for (int gv = 0; gv < count; gv++) {
            q->port_start[gv + 1] = gv + 1;
            q->port_bytes[gv] = q->out_bytes[gv];
        }
        for (int e = 0; e < gm; e++) {
            q->edge_src[e] = ge[e].src;
            q->edge_dst[e] = ge[e].dst;
            q->edge_bytes[e] = gbytes[e];
        }
        graph_build_csr(q);
        rc = graph_check_acyclic(q, "group mapping", err);
        if (rc == PB_OK) {
            graph_checksum(q);
            graph_wire(q);
        }
    } else {
        graph_owned_free(q);
    }
    free(first);
    free(ge);
    free(gbytes);
    return rc;
}

int graph_build(graph_builder *b, pb_graph **out, pb_error *err)
{
    *out = NULL;
    graph_owned *o = calloc(1, sizeof *o);
    int rc = o ? graph_build_ops(b, o, err) : pb_errorf(err, "out of memory");
    if (rc == PB_OK && b->n_groups > 0)
        rc = graph_build_grouped(b, o, err);
    if (rc == PB_OK) {
        graph_checksum(o);
        graph_wire(o);
        o->origin = b->origin; /* not part of the content: the checksum ignores it */
        b->origin = NULL;
        if (!o->checksum || !o->name)
            rc = pb_errorf(err, "out of memory");
    }
    graph_builder_free(b);
    if (rc != PB_OK) {
        graph_owned_free(o);
        return rc;
    }
    *out = &o->g;
    return PB_OK;
}

int graph_builder_set_origin(graph_builder *b, const char *origin)
{
    char *copy = origin ? strdup(origin) : NULL;
    if (origin && !copy)
        return PB_ERR;
    free(b->origin);
    b->origin = copy;
    return PB_OK;
}

const char *graph_origin(const pb_graph *g)
{
    return ((const graph_owned *)(const void *)g)->origin;
}

int graph_longest_path(const pb_graph *g)
{
    int n = g->n_nodes, count = 0, best = -1;
    if (n == 0)
        return -1;
    int *order = malloc((size_t)n * sizeof(int)), *dist = calloc((size_t)n, sizeof(int));
    if (order && dist && traverse_kahn(g, 0, order, &count, NULL) == PB_OK) {
        best = 0;
        for (int k = 0; k < count; k++) {
            int v = order[k];
            if (dist[v] > best)
                best = dist[v];
            for (int i = g->succ_start[v]; i < g->succ_start[v + 1]; i++)
                if (dist[v] + 1 > dist[g->succ[i]])
                    dist[g->succ[i]] = dist[v] + 1;
        }
    }
    free(order);
    free(dist);
    return best;
}
