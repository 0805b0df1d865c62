/* brute_force.c — HeterPS baseline placer: every one of the T^L plans in mixed-radix order (layer
 * 1 most significant), the cheapest kept (specs/heterps.md §7.1); exact. */
#include "placebench.h"

#include "heterps.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct bf_opts {
    double max_plans;
    long long report_every;
} bf_opts;

static const pb_option_def bf_options[] = {
    {.name = "max_plans",
     .type = PB_OPT_DOUBLE,
     .default_value = "1e10",
     .min = 1,
     .max = 1e18,
     .help = "refuse (with an error) a problem of more than this many plans T^L",
     .offset = offsetof(bf_opts, max_plans)},
    {.name = "report_every",
     .type = PB_OPT_INT,
     .default_value = "65536",
     .min = 1,
     .max = 1e12,
     .help = "plans per learning-curve point (and per deadline check)",
     .offset = offsetof(bf_opts, report_every)},
};

typedef struct bf_placer {
    bf_opts o;
    const pb_host *host;
} bf_placer;

static int bf_create(const pb_create_args *a, void **instance, pb_error *err)
{
    bf_placer *b = malloc(sizeof *b);
    if (!b)
        return pb_errorf(err, "out of memory");
    *b = (bf_placer){.o = *(const bf_opts *)a->options, .host = a->host};
    *instance = b;
    return PB_OK;
}

static void bf_destroy(void *instance)
{
    free(instance);
}

/* The next plan in mixed-radix order; 0 after the last one. */
static int bf_next(int *plan, int n, int types)
{
    for (int l = n - 1; l >= 0; l--) {
        if (++plan[l] < types)
            return 1;
        plan[l] = 0;
    }
    return 0;
}

static int bf_search(const bf_placer *b, heterps_search *s, int *plan, pb_error *err)
{
    long long done = 0;
    double total = pow(s->n_types, s->n_layers);
    do {
        double cost;
        if (heterps_search_eval(s, plan, &cost, NULL, err))
            return PB_ERR;
        if (++done % b->o.report_every != 0)
            continue;
        pb_progress pr = {.struct_size = sizeof pr,
                          .episode = (int)(done / b->o.report_every),
                          .episode_best_us = s->best_time_us,
                          .best_so_far_us = s->best_time_us,
                          .sim_calls = done};
        b->host->progress(b->host->ctx, &pr);
        if (b->host->deadline_passed(b->host->ctx))
            return pb_errorf(err,
                             "brute force: the deadline passed after %lld of %.0f plans "
                             "(the optimum is only known after all of them)",
                             done, total);
    } while (bf_next(plan, s->n_layers, s->n_types));
    return PB_OK;
}

static int bf_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                    pb_error *err)
{
    const bf_placer *b = instance;
    heterps_search s;
    *initial_us = -1;
    if (heterps_search_init(&s, p, b->host, err))
        return PB_ERR;
    double total = pow(s.n_types, s.n_layers);
    int *plan = calloc((size_t)s.n_layers, sizeof(int));
    int rc = plan ? PB_OK : pb_errorf(err, "out of memory");
    if (rc == PB_OK && total > b->o.max_plans)
        rc = pb_errorf(err,
                       "brute force: %d types ^ %d layers = %.3g plans exceeds max_plans "
                       "(%.3g)",
                       s.n_types, s.n_layers, total, b->o.max_plans);
    if (rc == PB_OK)
        rc = bf_search(b, &s, plan, err);
    if (rc == PB_OK)
        rc = heterps_search_finish(&s, best, err);
    free(plan);
    heterps_search_free(&s);
    return rc;
}

static const pb_placer_ops bf_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = bf_create,
    .destroy = bf_destroy,
    .place = bf_place,
    /* a plan of per-layer resource types, costed by the HeterPS model only */
    .simulators = "heterps",
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "brute-force", "1.0",
                       "HeterPS baseline: all T^L plans, the cheapest kept (exact; use with the "
                       "heterps simulator)",
                       bf_options, bf_opts, &bf_ops);
