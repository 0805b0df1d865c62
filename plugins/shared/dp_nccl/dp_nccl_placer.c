/* dp_nccl_placer.c — TAG's data-parallel baselines (specs/tag.md §10): every op replicated on every
 * device of the cluster, gradients reduced by NCCL AllReduce.  Built twice: dp-nccl splits the
 * batch evenly, dp-nccl-p (DP_NCCL_PROPORTIONAL) in proportion to each device's speed. */
#include "placebench.h"

#include <stdlib.h>
#include <string.h>

#if defined(DP_NCCL_PROPORTIONAL)
#define DP_NCCL_NAME "dp-nccl-p"
#define DP_NCCL_DESCRIPTION                                                                        \
    "TAG's DP-NCCL-P: every op replicated on all devices with AllReduce, each device's batch "     \
    "share proportional to its speed (specs/tag.md 10); needs a simulator of replicated "          \
    "strategies (topology)"
#else
#define DP_NCCL_NAME "dp-nccl"
#define DP_NCCL_DESCRIPTION                                                                        \
    "TAG's DP-NCCL: every op replicated on all devices with AllReduce, the batch split evenly "    \
    "(specs/tag.md 10); needs a simulator of replicated strategies (topology)"
#endif

/* The strategy's arrays live here: the harness evaluates the returned strategy after place()
 * returns, so they stay valid until destroy. */
typedef struct dp_placer {
    const pb_host *host;
    int *replication;   /* [nodes placed] */
    int group_start[2]; /* one device group: every device */
    int *group_devices; /* [n_devices] */
    double *share;      /* [n_devices] batch shares (dp-nccl-p) */
} dp_placer;

static int dp_create(const pb_create_args *a, void **instance, pb_error *err)
{
    dp_placer *p = calloc(1, sizeof *p);
    if (!p)
        return pb_errorf(err, "out of memory");
    p->host = a->host;
    *instance = p;
    return PB_OK;
}

static void dp_destroy(void *instance)
{
    dp_placer *p = instance;
    free(p->replication);
    free(p->group_devices);
    free(p->share);
    free(p);
}

/* Batch shares proportional to speed_vs_ref: the simulators cost a replica's share of an op as
 * cost * share / speed, so every device then computes for the same time (the paper's "inverse
 * proportional to computation capacity").  *out = NULL: even shares (dp-nccl). */
static int dp_shares(dp_placer *p, const pb_cluster *c, const double **out, pb_error *err)
{
    *out = NULL;
#if defined(DP_NCCL_PROPORTIONAL)
    double sum = 0;
    for (int d = 0; d < c->n_devices; d++) {
        const pb_device_type *t = pb_cluster_type(c, c->device_type[d]);
        if (!(t->speed_vs_ref > 0))
            return pb_errorf(err, "dp-nccl-p: device %d (%s) has no speed to share the batch by", d,
                             t->name);
        p->share[d] = t->speed_vs_ref;
        sum += t->speed_vs_ref;
    }
    for (int d = 0; d < c->n_devices; d++)
        p->share[d] /= sum;
    *out = p->share;
#else
    (void)p;
    (void)c;
    (void)err;
#endif
    return PB_OK;
}

static int dp_place(void *instance, const pb_problem *prob, pb_strategy *best, double *initial_us,
                    pb_error *err)
{
    dp_placer *p = instance;
    int n = prob->graph->n_nodes, nd = prob->cluster->n_devices;
    free(p->replication);
    free(p->group_devices);
    free(p->share);
    p->replication = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    p->group_devices = malloc((size_t)nd * sizeof(int));
    p->share = malloc((size_t)nd * sizeof(double));
    if (!p->replication || !p->group_devices || !p->share)
        return pb_errorf(err, "out of memory");
    const double *share;
    if (dp_shares(p, prob->cluster, &share, err) != PB_OK)
        return PB_ERR;
    pb_strategy_data_parallel(best, n, best->device, p->replication, PB_REPL_ALLREDUCE, nd,
                              p->group_start, p->group_devices, share);
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
    if (p->host->simulate(p->host->ctx, best, &ev, err) != PB_OK) {
        /* A simulator of plain placements refuses the strategy kind; say what was asked. */
        pb_error why = *err;
        return pb_errorf(err,
                         DP_NCCL_NAME ": the simulator did not take the data-parallel strategy "
                                      "(every op replicated on all %d devices; the topology "
                                      "simulator evaluates such strategies): %s",
                         nd, why.msg);
    }
    *initial_us = ev.step_time_us;
    pb_progress pr = {sizeof pr, 0, ev.step_time_us, ev.step_time_us, 1, 0};
    p->host->progress(p->host->ctx, &pr);
    return PB_OK;
}

static const pb_placer_ops dp_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = dp_create,
    .destroy = dp_destroy,
    .place = dp_place,
    .produces = PB_KIND_BIT(PB_STRATEGY_REPLICATED),
};

PB_PLUGIN(PB_KIND_PLACER, DP_NCCL_NAME, "1.0", DP_NCCL_DESCRIPTION, NULL, 0, &dp_ops);
