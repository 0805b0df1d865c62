/* round_robin.c — baseline placer: the k-th node visited goes to device k mod n. */
#include "placebench.h"

#include <stdlib.h>

typedef struct rr_placer {
    const pb_host *host;
} rr_placer;

static int rr_create(const pb_create_args *a, void **instance, pb_error *err)
{
    rr_placer *r = calloc(1, sizeof *r);
    if (!r)
        return pb_errorf(err, "out of memory");
    r->host = a->host;
    *instance = r;
    return PB_OK;
}

static void rr_destroy(void *instance)
{
    free(instance);
}

/* Visits nodes in the run's traversal order when one is named, else in insertion order. */
static int rr_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                    pb_error *err)
{
    rr_placer *r = instance;
    int n = p->graph->n_nodes, d = p->cluster->n_devices;
    for (int k = 0; k < n; k++)
        best->device[p->order ? p->order[k] : k] = k % d;
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
    if (r->host->simulate(r->host->ctx, best, &ev, err))
        return PB_ERR;
    *initial_us = -1; /* no search: there is no distinct starting point */
    pb_progress pr = {.struct_size = sizeof pr,
                      .episode_best_us = ev.step_time_us,
                      .best_so_far_us = ev.step_time_us,
                      .sim_calls = 1};
    r->host->progress(r->host->ctx, &pr);
    return PB_OK;
}

static const pb_placer_ops rr_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = rr_create,
    .destroy = rr_destroy,
    .place = rr_place,
    .uses = PB_USES_TRAVERSAL,
};

PB_PLUGIN(PB_KIND_PLACER, "round-robin", "1.0",
          "node k of the traversal order (or insertion order) on device k mod n (baseline)", NULL,
          0, &rr_ops);
