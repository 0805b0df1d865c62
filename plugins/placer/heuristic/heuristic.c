/* heuristic.c — HeterPS baseline placer: the first layer on CPU cores and the rest on GPU type 1
 * (AIBox, specs/heterps.md §7.8), or the reverse as §6.2 of the paper words it. */
#include "placebench.h"

#include "heterps.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct heuristic_opts {
    int variant;
    int allow_infeasible;
} heuristic_opts;

static const pb_option_def heuristic_options[] = {
    {.name = "variant",
     .type = PB_OPT_ENUM,
     .default_value = "first_cpu",
     .min = 1,
     .max = 0,
     .choices = "first_cpu|first_gpu",
     .help = "first_cpu: first layer on CPU, rest on GPU type 1 (AIBox, Paddle's heter mode); "
             "first_gpu: first layer on GPU type 1, rest on CPU (the paper's §6.2 text)",
     .offset = offsetof(heuristic_opts, variant)},
    HETERPS_ALLOW_INFEASIBLE_OPTION(heuristic_opts, allow_infeasible),
};

typedef struct heuristic_placer {
    int first_gpu, allow_infeasible;
    const pb_host *host;
} heuristic_placer;

static int heuristic_create(const pb_create_args *a, void **instance, pb_error *err)
{
    const heuristic_opts *o = a->options;
    heuristic_placer *h = malloc(sizeof *h);
    if (!h)
        return pb_errorf(err, "out of memory");
    *h = (heuristic_placer){
        .first_gpu = o->variant == 1, .allow_infeasible = o->allow_infeasible, .host = a->host};
    *instance = h;
    return PB_OK;
}

static void heuristic_destroy(void *instance)
{
    free(instance);
}

static int heuristic_place(void *instance, const pb_problem *p, pb_strategy *best,
                           double *initial_us, pb_error *err)
{
    const heuristic_placer *h = instance;
    int n = p->graph->n_nodes, *plan = malloc((size_t)n * sizeof(int));
    if (!plan)
        return pb_errorf(err, "out of memory");
    for (int l = 0; l < n; l++)
        plan[l] = (l == 0) == h->first_gpu; /* 1 = GPU type 1, 0 = CPU cores */
    int rc = heterps_place_fixed(p, h->host, plan, h->allow_infeasible, best, initial_us, err);
    free(plan);
    return rc;
}

static const pb_placer_ops heuristic_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = heuristic_create,
    .destroy = heuristic_destroy,
    .place = heuristic_place,
    /* a plan of per-layer resource types, costed by the HeterPS model only */
    .simulators = "heterps",
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "heuristic", "1.0",
                       "HeterPS baseline: first layer on CPU cores, the rest on GPU type 1 "
                       "(AIBox; use with the heterps simulator)",
                       heuristic_options, heuristic_opts, &heuristic_ops);
