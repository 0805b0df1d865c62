/* all_cpu.c — HeterPS baseline placer: every layer on CPU cores, provisioned by the simulator. */
#include "placebench.h"

#include "heterps.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct all_cpu_opts {
    int allow_infeasible;
} all_cpu_opts;

static const pb_option_def all_cpu_options[] = {
    HETERPS_ALLOW_INFEASIBLE_OPTION(all_cpu_opts, allow_infeasible),
};

typedef struct all_cpu_placer {
    int allow_infeasible;
    const pb_host *host;
} all_cpu_placer;

static int all_cpu_create(const pb_create_args *a, void **instance, pb_error *err)
{
    all_cpu_placer *f = malloc(sizeof *f);
    if (!f)
        return pb_errorf(err, "out of memory");
    f->allow_infeasible = ((const all_cpu_opts *)a->options)->allow_infeasible;
    f->host = a->host;
    *instance = f;
    return PB_OK;
}

static void all_cpu_destroy(void *instance)
{
    free(instance);
}

static int all_cpu_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                         pb_error *err)
{
    const all_cpu_placer *f = instance;
    int *plan = calloc((size_t)p->graph->n_nodes, sizeof(int)); /* type 0: CPU cores */
    if (!plan)
        return pb_errorf(err, "out of memory");
    int rc = heterps_place_fixed(p, f->host, plan, f->allow_infeasible, best, initial_us, err);
    free(plan);
    return rc;
}

static const pb_placer_ops all_cpu_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = all_cpu_create,
    .destroy = all_cpu_destroy,
    .place = all_cpu_place,
    /* a plan of per-layer resource types, costed by the HeterPS model only */
    .simulators = "heterps",
};

PB_PLUGIN_WITH_OPTIONS(
    PB_KIND_PLACER, "all-cpu", "1.0",
    "HeterPS baseline: every layer on CPU cores (use with the heterps simulator)", all_cpu_options,
    all_cpu_opts, &all_cpu_ops);
