/* metis_placer.c — GDP's "TensorFlow METIS" baseline (specs/gdp.md §9): the units (pinned ones
 * excluded) as an undirected graph weighted by GPU compute time and carried bytes, partitioned
 * k-way by METIS over the GPUs; memory is not balanced, so an OOM is a result, not an error. */
#include "gdp_units.h"
#include "metis_part.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct metis_opts {
    long long ufactor;
    int include_cpu;
} metis_opts;

static const pb_option_def metis_options[] = {
    {.name = "ufactor",
     .type = PB_OPT_INT,
     .default_value = "30",
     .min = 1,
     .max = 1000,
     .help = "METIS load imbalance in thousandths (30: the parts' compute may differ by 3 %; "
             "spec §9 [I])",
     .offset = offsetof(metis_opts, ufactor)},
    {.name = "include_cpu",
     .type = PB_OPT_BOOL,
     .default_value = "false",
     .help = "also partition onto the host CPU (spec §1 [I]: GPUs only)",
     .offset = offsetof(metis_opts, include_cpu)},
};

typedef struct metis_placer {
    const pb_host *host;
    metis_opts o;
} metis_placer;

static int metis_create(const pb_create_args *a, void **instance, pb_error *err)
{
    metis_placer *m = calloc(1, sizeof *m);
    if (!m)
        return pb_errorf(err, "out of memory");
    m->host = a->host;
    m->o = *(const metis_opts *)a->options;
    *instance = m;
    return PB_OK;
}

static void metis_destroy(void *instance)
{
    free(instance);
}

/* One undirected pair (a < b) and the KiB it carries. */
typedef struct metis_pair {
    int a, b;
    double kib;
} metis_pair;

static int metis_pair_cmp(const void *x, const void *y)
{
    const metis_pair *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

/*
 * The weighted undirected graph of the units unit[0..n) (index[v] = unit number or -1): vertex
 * weight = compute µs on a GPU of speed `speed` (rounded, >= 1), edge weight = KiB carried in
 * both directions (>= 1), scaled down so that the total fits in int32.  Caller frees the arrays.
 */
static int metis_build(const pb_graph *g, const int *index, int n, double speed, int **xadj_out,
                       int **adj_out, int **vw_out, int **aw_out, pb_error *err)
{
    size_t m_cap = (size_t)(g->n_edges > 0 ? g->n_edges : 1);
    metis_pair *pairs = malloc(m_cap * sizeof *pairs);
    int *xadj = calloc((size_t)n + 1, sizeof *xadj), *vw = malloc((size_t)(n + 1) * sizeof *vw);
    int *fill = malloc((size_t)(n + 1) * sizeof *fill);
    int *adj = malloc(2 * m_cap * sizeof *adj), *aw = malloc(2 * m_cap * sizeof *aw);
    if (!pairs || !xadj || !vw || !fill || !adj || !aw) {
        free(pairs);
        free(xadj);
        free(vw);
        free(fill);
        free(adj);
        free(aw);
        return pb_errorf(err, "out of memory");
    }
    for (int v = 0; v < g->n_nodes; v++)
        if (index[v] >= 0) {
            double w = floor(g->cost_us[v] / speed + 0.5);
            vw[index[v]] = w < 1 ? 1 : w > INT_MAX / 2 ? INT_MAX / 2 : (int)w;
        }
    int m = 0;
    for (int e = 0; e < g->n_edges; e++) {
        int a = index[g->edge_src[e]], b = index[g->edge_dst[e]];
        if (a < 0 || b < 0 || a == b)
            continue;
        pairs[m++] = (metis_pair){a < b ? a : b, a < b ? b : a, g->edge_bytes[e] / 1024.0};
    }
    qsort(pairs, (size_t)m, sizeof *pairs, metis_pair_cmp);
    int k = 0; /* merge parallel pairs (both directions) */
    for (int i = 0; i < m; i++) {
        if (k > 0 && pairs[k - 1].a == pairs[i].a && pairs[k - 1].b == pairs[i].b)
            pairs[k - 1].kib += pairs[i].kib;
        else
            pairs[k++] = pairs[i];
    }
    double total = 0;
    for (int i = 0; i < k; i++)
        total += 2 * (pairs[i].kib < 1 ? 1 : pairs[i].kib);
    double scale = total > INT_MAX / 2 ? (INT_MAX / 2) / total : 1;
    for (int i = 0; i < k; i++) {
        xadj[pairs[i].a + 1]++;
        xadj[pairs[i].b + 1]++;
    }
    for (int v = 0; v < n; v++)
        xadj[v + 1] += xadj[v];
    memcpy(fill, xadj, (size_t)n * sizeof *fill);
    for (int i = 0; i < k; i++) {
        double w = floor((pairs[i].kib < 1 ? 1 : pairs[i].kib) * scale + 0.5);
        int wi = w < 1 ? 1 : (int)w;
        adj[fill[pairs[i].a]] = pairs[i].b;
        aw[fill[pairs[i].a]++] = wi;
        adj[fill[pairs[i].b]] = pairs[i].a;
        aw[fill[pairs[i].b]++] = wi;
    }
    free(fill);
    free(pairs);
    *xadj_out = xadj;
    *adj_out = adj;
    *vw_out = vw;
    *aw_out = aw;
    return PB_OK;
}

static int metis_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                       pb_error *err)
{
    metis_placer *mp = instance;
    const pb_graph *g = p->graph;
    gdpu_devices dev;
    if (gdpu_devices_init(&dev, p->cluster, mp->o.include_cpu, err))
        return PB_ERR;
    unsigned char *pinned = malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1));
    int *index = malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1) * sizeof *index);
    int *part = malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1) * sizeof *part);
    int rc = pinned && index && part ? PB_OK : pb_errorf(err, "out of memory");
    int n = 0;
    if (rc == PB_OK) {
        gdpu_pinned(p, pinned);
        for (int v = 0; v < g->n_nodes; v++)
            index[v] = pinned[v] && dev.host >= 0 ? -1 : n++;
    }
    int *xadj = NULL, *adj = NULL, *vw = NULL, *aw = NULL;
    double speed = pb_cluster_type(p->cluster, p->cluster->device_type[dev.gpu[0]])->speed_vs_ref;
    if (rc == PB_OK)
        rc = metis_build(g, index, n, speed > 0 ? speed : 1, &xadj, &adj, &vw, &aw, err);
    if (rc == PB_OK)
        rc = metis_partition(n, xadj, adj, vw, aw, dev.n_gpus, 1.0 + (double)mp->o.ufactor / 1000.0,
                             part, err);
    for (int v = 0; rc == PB_OK && v < g->n_nodes; v++)
        best->device[v] = index[v] < 0 ? dev.host : dev.gpu[part[index[v]] % dev.n_gpus];
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
    if (rc == PB_OK)
        rc = mp->host->simulate(mp->host->ctx, best, &ev, err);
    if (rc == PB_OK) {
        *initial_us = -1; /* no search: one partition */
        pb_progress pr = {.struct_size = sizeof pr, .episode_best_us = ev.step_time_us, .best_so_far_us = ev.step_time_us, .sim_calls = 1};
        mp->host->progress(mp->host->ctx, &pr);
        if (!ev.feasible)
            mp->host->log(mp->host->ctx, PB_LOG_INFO,
                          "metis: the partition runs out of memory (a result: METIS balances "
                          "compute, not memory)");
    }
    free(xadj);
    free(adj);
    free(vw);
    free(aw);
    free(pinned);
    free(index);
    free(part);
    gdpu_devices_free(&dev);
    return rc;
}

static const pb_placer_ops metis_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = metis_create,
    .destroy = metis_destroy,
    .place = metis_place,
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "metis", "1.0",
                       "GDP's TensorFlow-METIS baseline: k-way METIS partition of the units over "
                       "the GPUs, compute-weighted vertices, byte-weighted edges (spec §9)",
                       metis_options, metis_opts, &metis_ops);
