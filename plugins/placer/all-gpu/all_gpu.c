/* all_gpu.c — HeterPS baseline placer: every layer on GPU type 1 (the full-price V100),
 * provisioned by the simulator. */
#include "placebench.h"

#include "heterps.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct all_gpu_opts {
    int allow_infeasible;
} all_gpu_opts;

static const pb_option_def all_gpu_options[] = {
    HETERPS_ALLOW_INFEASIBLE_OPTION(all_gpu_opts, allow_infeasible),
};

typedef struct all_gpu_placer {
    int allow_infeasible;
    const pb_host *host;
} all_gpu_placer;

static int all_gpu_create(const pb_create_args *a, void **instance, pb_error *err)
{
    all_gpu_placer *f = malloc(sizeof *f);
    if (!f)
        return pb_errorf(err, "out of memory");
    f->allow_infeasible = ((const all_gpu_opts *)a->options)->allow_infeasible;
    f->host = a->host;
    *instance = f;
    return PB_OK;
}

static void all_gpu_destroy(void *instance)
{
    free(instance);
}

static int all_gpu_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                         pb_error *err)
{
    const all_gpu_placer *f = instance;
    int n = p->graph->n_nodes, *plan = malloc((size_t)n * sizeof(int));
    if (!plan)
        return pb_errorf(err, "out of memory");
    for (int l = 0; l < n; l++)
        plan[l] = 1; /* the first GPU type */
    int rc = heterps_place_fixed(p, f->host, plan, f->allow_infeasible, best, initial_us, err);
    free(plan);
    return rc;
}

static const pb_placer_ops all_gpu_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = all_gpu_create,
    .destroy = all_gpu_destroy,
    .place = all_gpu_place,
    /* a plan of per-layer resource types, costed by the HeterPS model only */
    .simulators = "heterps",
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "all-gpu", "1.0",
                       "HeterPS baseline: every layer on GPU type 1, the full-price V100 (use with "
                       "the heterps simulator)",
                       all_gpu_options, all_gpu_opts, &all_gpu_ops);
