/* all_cpu.c — HeterPS baseline placer: every layer on CPU cores, provisioned by the simulator. */
#include "placebench.h"

#include "heterps.h"

#include <stdint.h>
#include <stdlib.h>

static int all_cpu_create(const pb_create_args *a, void **instance, pb_error *err)
{
    (void)err;
    *instance = (void *)(uintptr_t)a->host; /* the host is all the placer keeps */
    return PB_OK;
}

static void all_cpu_destroy(void *instance)
{
    (void)instance;
}

static int all_cpu_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                         pb_error *err)
{
    int *plan = calloc((size_t)p->graph->n_nodes, sizeof(int)); /* type 0: CPU cores */
    if (!plan)
        return pb_errorf(err, "out of memory");
    int rc = heterps_place_fixed(p, instance, plan, best, initial_us, err);
    free(plan);
    return rc;
}

static const pb_placer_ops all_cpu_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = all_cpu_create,
    .destroy = all_cpu_destroy,
    .place = all_cpu_place,
};

PB_PLUGIN(PB_KIND_PLACER, "all-cpu", "1.0",
          "HeterPS baseline: every layer on CPU cores (use with the heterps simulator)", NULL, 0,
          &all_cpu_ops);
