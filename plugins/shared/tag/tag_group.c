/* tag_group.c — TAG's op grouping: op times, METIS partition of base groups, MCTS group order
 * (specs/tag.md §2.3-2.4). */
#include "tag_group.h"

#include "metis_part.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

double tag_op_time_us(const pb_graph *g, const pb_cluster *c, int v, int type, int k)
{
    double t = g->cost_us[v];
    int n = 1 << k;
    int split = g->node_split ? g->node_split[v] : PB_SPLIT_UNSET;
    if (k > 0 && (split == PB_SPLIT_BATCH || split == PB_SPLIT_SUM)) {
        double part = t / n;
        if (g->replica_cost_start)
            for (int i = g->replica_cost_start[v]; i < g->replica_cost_start[v + 1]; i++)
                if (g->replica_cost_n[i] == n)
                    part = g->replica_cost_us[i];
        t = part;
    }
    double speed = pb_cluster_type(c, type)->speed_vs_ref;
    return speed > 0 ? t / speed : t;
}

double tag_op_mean_time_us(const pb_graph *g, const pb_cluster *c, int v, int k)
{
    if (c->n_devices <= 0)
        return tag_op_time_us(g, c, v, 0, k);
    double sum = 0;
    for (int d = 0; d < c->n_devices; d++)
        sum += tag_op_time_us(g, c, v, c->device_type[d], k);
    return sum / c->n_devices;
}

int tag_op_sqrt_cost(const pb_graph *g, const pb_cluster *c, int v)
{
    double sum = 0;
    for (int k = 0; k < 4; k++)
        sum += tag_op_mean_time_us(g, c, v, k);
    double r = sqrt(sum / 4);
    return r > 1e8 ? 100000000 : (int)r;
}

/* One direction of a unit pair's edge, before merging. */
typedef struct tag_adj {
    int a, b;
    long long seq; /* insertion order */
    double w;
} tag_adj;

static int tag_adj_by_pair(const void *x, const void *y)
{
    const tag_adj *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static int tag_adj_by_first(const void *x, const void *y)
{
    const tag_adj *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/* Elements METIS weighs edge e by: bytes / 4, a 0-byte edge its producer's first port, and 1000
 * for an empty tensor (TAG's metis.py). */
static double tag_edge_elements(const pb_graph *g, int e)
{
    double bytes = g->edge_bytes[e];
    if (!(bytes > 0)) {
        int u = g->edge_src[e];
        bytes = g->port_start[u] < g->port_start[u + 1] ? g->port_bytes[g->port_start[u]] : 0;
    }
    double elements = floor(bytes / 4);
    return elements >= 1 ? elements : 1000;
}

/* The merged unit adjacency (CSR, neighbours in first-insertion order) with int weights. */
static int tag_group_csr(const pb_graph *g, const int *unit_of, int n_units, int *xadj, int **adj,
                         int **adjwgt, pb_error *err)
{
    size_t cap = 2 * (size_t)g->n_edges + 1;
    tag_adj *e = malloc(cap * sizeof *e);
    if (!e)
        return pb_errorf(err, "out of memory");
    size_t m = 0;
    long long seq = 0;
    for (int v = 0; v < g->n_nodes; v++)
        for (int j = g->pred_start[v]; j < g->pred_start[v + 1]; j++) {
            int a = unit_of[g->pred[j]], b = unit_of[v];
            if (a == b)
                continue;
            double w = tag_edge_elements(g, g->pred_edge[j]);
            e[m++] = (tag_adj){a, b, seq++, w};
            e[m++] = (tag_adj){b, a, seq++, w};
        }
    qsort(e, m, sizeof *e, tag_adj_by_pair);
    size_t k = 0; /* merge each pair into its first entry */
    for (size_t i = 0; i < m; i++) {
        if (k > 0 && e[k - 1].a == e[i].a && e[k - 1].b == e[i].b)
            e[k - 1].w += e[i].w;
        else
            e[k++] = e[i];
    }
    qsort(e, k, sizeof *e, tag_adj_by_first);
    double total = 0;
    for (size_t i = 0; i < k; i++)
        total += e[i].w;
    double factor = total > (double)(1 << 30) ? ceil(total / (double)(1 << 30)) : 1;
    *adj = malloc((k + 1) * sizeof(int));
    *adjwgt = malloc((k + 1) * sizeof(int));
    if (!*adj || !*adjwgt) {
        free(e);
        return pb_errorf(err, "out of memory");
    }
    size_t i = 0;
    for (int u = 0; u < n_units; u++) {
        xadj[u] = (int)i;
        for (; i < k && e[i].a == u; i++) {
            double w = floor(e[i].w / factor);
            (*adj)[i] = e[i].b;
            (*adjwgt)[i] = w < 1 ? 1 : (int)w;
        }
    }
    xadj[n_units] = (int)k;
    free(e);
    return PB_OK;
}

void tag_unit_graph_free(tag_unit_graph *u)
{
    free(u->xadj);
    free(u->adj);
    free(u->adjwgt);
    free(u->vwgt);
    memset(u, 0, sizeof *u);
}

int tag_unit_graph_build(const pb_graph *g, const int *unit_of, int n_units, const int *op_weight,
                         tag_unit_graph *out, pb_error *err)
{
    memset(out, 0, sizeof *out);
    for (int v = 0; v < g->n_nodes; v++)
        if (unit_of[v] < 0 || unit_of[v] >= n_units)
            return pb_errorf(err, "grouping: op %d (%s) has unit %d, outside 0..%d", v,
                             g->node_name[v], unit_of[v], n_units - 1);
    out->n_units = n_units;
    out->xadj = malloc(((size_t)n_units + 1) * sizeof(int));
    out->vwgt = malloc(((size_t)n_units + 1) * sizeof(int));
    if (!out->xadj || !out->vwgt) {
        tag_unit_graph_free(out);
        return pb_errorf(err, "out of memory");
    }
    for (int u = 0; u < n_units; u++)
        out->vwgt[u] = 1;
    for (int v = 0; v < g->n_nodes; v++) {
        long long w = (long long)out->vwgt[unit_of[v]] + (op_weight ? op_weight[v] : 1);
        out->vwgt[unit_of[v]] = w > INT32_MAX / 2 ? INT32_MAX / 2 : (int)w;
    }
    if (tag_group_csr(g, unit_of, n_units, out->xadj, &out->adj, &out->adjwgt, err)) {
        tag_unit_graph_free(out);
        return PB_ERR;
    }
    return PB_OK;
}

int tag_group_partition(const pb_graph *g, const int *unit_of, int n_units, const int *op_weight,
                        int nparts, double ubvec, int *part_of_unit, int *n_parts, pb_error *err)
{
    *n_parts = 0;
    if (nparts < 1)
        return pb_errorf(err, "grouping: %d parts asked (at least 1)", nparts);
    tag_unit_graph ug;
    if (tag_unit_graph_build(g, unit_of, n_units, op_weight, &ug, err))
        return PB_ERR;
    int *part = malloc(((size_t)n_units + 1) * sizeof(int));
    int *renum = malloc(((size_t)n_units + 1) * sizeof(int));
    int rc = part && renum ? PB_OK : pb_errorf(err, "out of memory");
    if (rc == PB_OK)
        rc =
            metis_partition(n_units, ug.xadj, ug.adj, ug.vwgt, ug.adjwgt, nparts, ubvec, part, err);
    if (rc == PB_OK) {
        /* Parts in order of first appearance over the ops; a unit without ops comes after. */
        for (int p = 0; p < n_units; p++)
            renum[p] = -1;
        int next = 0;
        for (int v = 0; v < g->n_nodes; v++)
            if (renum[part[unit_of[v]]] < 0)
                renum[part[unit_of[v]]] = next++;
        for (int u = 0; u < n_units; u++) {
            if (renum[part[u]] < 0)
                renum[part[u]] = next++;
            part_of_unit[u] = renum[part[u]];
        }
        *n_parts = next;
    }
    free(part);
    free(renum);
    tag_unit_graph_free(&ug);
    return rc;
}

int tag_group_ops(const pb_graph *op_graph, const pb_cluster *c, int max_groups, double ubvec,
                  int *group_of_node, int *n_groups, pb_error *err)
{
    const pb_graph *g = op_graph;
    int grouped = g->grouped && g->grouped != g && g->group_of;
    int n_units = grouped ? g->grouped->n_nodes : g->n_nodes;
    int *unit = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
    int *weight = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
    int rc = unit && weight ? PB_OK : pb_errorf(err, "out of memory");
    for (int v = 0; rc == PB_OK && v < g->n_nodes; v++) {
        unit[v] = grouped ? g->group_of[v] : v;
        weight[v] = tag_op_sqrt_cost(g, c, v);
    }
    if (rc == PB_OK)
        rc = tag_group_partition(g, unit, n_units, weight, max_groups, ubvec, group_of_node,
                                 n_groups, err);
    free(unit);
    free(weight);
    return rc;
}

void tag_group_order(int n_groups, const double *key, int *order)
{
    /* Insertion sort: stable, and n_groups is at most a few hundred. */
    for (int i = 0; i < n_groups; i++) {
        int g = i, j = i;
        for (; j > 0 && key[order[j - 1]] < key[g]; j--)
            order[j] = order[j - 1];
        order[j] = g;
    }
}
