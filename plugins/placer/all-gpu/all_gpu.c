/* all_gpu.c — HeterPS baseline placer: every layer on GPU type 1 (the full-price V100),
 * provisioned by the simulator. */
#include "placebench.h"

#include "heterps.h"

#include <stdint.h>
#include <stdlib.h>

static int all_gpu_create(const pb_create_args *a, void **instance, pb_error *err)
{
    (void)err;
    *instance = (void *)(uintptr_t)a->host; /* the host is all the placer keeps */
    return PB_OK;
}

static void all_gpu_destroy(void *instance)
{
    (void)instance;
}

static int all_gpu_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                         pb_error *err)
{
    int n = p->graph->n_nodes, *plan = malloc((size_t)n * sizeof(int));
    if (!plan)
        return pb_errorf(err, "out of memory");
    for (int l = 0; l < n; l++)
        plan[l] = 1; /* the first GPU type */
    int rc = heterps_place_fixed(p, instance, plan, best, initial_us, err);
    free(plan);
    return rc;
}

static const pb_placer_ops all_gpu_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = all_gpu_create,
    .destroy = all_gpu_destroy,
    .place = all_gpu_place,
};

PB_PLUGIN(PB_KIND_PLACER, "all-gpu", "1.0",
          "HeterPS baseline: every layer on GPU type 1, the full-price V100 (use with the heterps "
          "simulator)",
          NULL, 0, &all_gpu_ops);
