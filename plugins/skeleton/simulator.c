/* simulator.c — skeleton of a simulator plugin: copy this file to start one.  A working,
 * deliberately simple model — step time = the busiest device's summed op costs (scaled by the
 * device type's speed) plus every cut edge's bytes over the link between its two devices. */
#include "placebench.h"

#include <stdlib.h>
#include <string.h>

/* prepare() does all per-graph work once; evaluate() is the hot path and allocates nothing. */
typedef struct skeleton_prepared {
    const pb_graph *g;   /* the op-level graph (borrowed until release) */
    const pb_cluster *c; /* borrowed until release */
    double *load;        /* [n_devices] scratch */
} skeleton_prepared;

static int skeleton_create(const pb_create_args *a, void **instance, pb_error *err)
{
    (void)a;
    (void)err;
    *instance = NULL; /* no options, no state */
    return PB_OK;
}

static void skeleton_destroy(void *instance)
{
    (void)instance;
}

static int skeleton_prepare(void *instance, const pb_graph *g, const pb_cluster *c, void **prepared,
                            pb_error *err)
{
    (void)instance;
    skeleton_prepared *p = calloc(1, sizeof *p);
    double *load = p ? calloc((size_t)c->n_devices, sizeof *load) : NULL;
    if (!load) {
        free(p);
        return pb_errorf(err, "out of memory");
    }
    *p = (skeleton_prepared){g, c, load};
    *prepared = p;
    return PB_OK;
}

static void skeleton_release(void *prepared)
{
    skeleton_prepared *p = prepared;
    free(p->load);
    free(p);
}

/* The speed of device d relative to the reference device of cost_us (1 when unknown). */
static double skeleton_speed(const pb_cluster *c, int d)
{
    const pb_device_type *t = pb_cluster_type(c, c->device_type[d]);
    return t->speed_vs_ref > 0 ? t->speed_vs_ref : 1.0;
}

static int skeleton_evaluate(void *prepared, const pb_strategy *s, pb_eval *out, pb_error *err)
{
    skeleton_prepared *p = prepared;
    const pb_graph *g = p->g;
    const pb_cluster *c = p->c;
    int nd = c->n_devices;
    if (s->kind != PB_STRATEGY_PLACEMENT)
        return pb_errorf(err, "skeleton-simulator: only plain placements");
    memset(p->load, 0, (size_t)nd * sizeof(double));
    for (int v = 0; v < g->n_nodes; v++)
        p->load[s->device[v]] += g->cost_us[v] / skeleton_speed(c, s->device[v]);
    double comm = 0, max = 0;
    for (int e = 0; e < g->n_edges; e++) {
        int a = s->device[g->edge_src[e]], b = s->device[g->edge_dst[e]];
        if (a != b)
            comm += c->link_latency[a * nd + b] + g->edge_bytes[e] / c->link_bandwidth[a * nd + b];
    }
    for (int d = 0; d < nd; d++)
        max = p->load[d] > max ? p->load[d] : max;
    out->step_time_us = max + comm;
    out->feasible = 1;
    if (out->busy_us) /* every output array is optional: fill it only when given */
        memcpy(out->busy_us, p->load, (size_t)nd * sizeof(double));
    return PB_OK;
}

static const pb_simulator_ops skeleton_ops = {
    .struct_size = sizeof(pb_simulator_ops),
    .create = skeleton_create,
    .destroy = skeleton_destroy,
    .prepare = skeleton_prepare,
    .release = skeleton_release,
    .evaluate = skeleton_evaluate,
    .accepts = PB_KIND_BIT(PB_STRATEGY_PLACEMENT), /* the strategy kinds evaluate() takes */
};

PB_PLUGIN(PB_KIND_SIMULATOR, "skeleton-simulator", "1.0",
          "skeleton: busiest device plus cut edges over links (copy plugins/skeleton/simulator.c)",
          NULL, 0, &skeleton_ops);
