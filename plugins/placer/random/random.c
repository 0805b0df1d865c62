/* random.c — baseline placer: uniform random placements, keep the best (random search). */
#include "placebench.h"

#include <stddef.h>

#include <stdlib.h>
#include <string.h>

typedef struct random_opts {
    long long sim_calls;
    long long report_every;
} random_opts;

static const pb_option_def random_options[] = {
    {.name = "sim_calls",
     .type = PB_OPT_INT,
     .default_value = "1000",
     .min = 1,
     .max = 1e9,
     .choices = NULL,
     .help = "random placements to evaluate (the experiment's sim_calls budget, when set, wins)",
     .offset = offsetof(random_opts, sim_calls)},
    {.name = "report_every",
     .type = PB_OPT_INT,
     .default_value = "0",
     .min = 0,
     .max = 1e9,
     .choices = NULL,
     .help = "placements per learning-curve point; 0 = sim_calls/50 (at least 1)",
     .offset = offsetof(random_opts, report_every)},
};

typedef struct random_placer {
    long long sim_calls, report_every;
    pb_rng rng;
    const pb_host *host;
} random_placer;

static int random_create(const pb_create_args *a, void **instance, pb_error *err)
{
    const random_opts *o = a->options;
    random_placer *r = calloc(1, sizeof *r);
    if (!r)
        return pb_errorf(err, "out of memory");
    r->sim_calls = o->sim_calls;
    r->report_every = o->report_every;
    r->host = a->host;
    pb_rng_seed(&r->rng, a->seed);
    *instance = r;
    return PB_OK;
}

static void random_destroy(void *instance)
{
    free(instance);
}

static int random_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                        pb_error *err)
{
    random_placer *r = instance;
    int n = p->graph->n_nodes, d = p->cluster->n_devices;
    long long calls = p->budget->sim_calls > 0 ? p->budget->sim_calls : r->sim_calls;
    long long every = r->report_every > 0 ? r->report_every : (calls / 50 > 0 ? calls / 50 : 1);
    int *cand = malloc((size_t)n * sizeof(int));
    if (!cand)
        return pb_errorf(err, "out of memory");
    pb_strategy s;
    pb_strategy_placement(&s, n, cand);
    double best_us = 0, window_best = 0;
    int rc = PB_OK;
    for (long long c = 0; c < calls; c++) {
        for (int v = 0; v < n; v++)
            cand[v] = (int)pb_rng_below(&r->rng, (uint64_t)d);
        pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
        if ((rc = r->host->simulate(r->host->ctx, &s, &ev, err)) != PB_OK)
            break;
        if (c == 0)
            *initial_us = ev.step_time_us;
        if (c == 0 || ev.step_time_us < best_us) {
            best_us = ev.step_time_us;
            memcpy(best->device, cand, (size_t)n * sizeof(int));
        }
        if (c % every == 0 || ev.step_time_us < window_best)
            window_best = ev.step_time_us;
        if ((c + 1) % every == 0 || c + 1 == calls) {
            pb_progress pr = {.struct_size = sizeof pr,
                              .episode = (int)(c / every),
                              .episode_best_us = window_best,
                              .best_so_far_us = best_us,
                              .sim_calls = c + 1};
            r->host->progress(r->host->ctx, &pr);
        }
        if (r->host->deadline_passed(r->host->ctx))
            break;
    }
    free(cand);
    return rc;
}

static const pb_placer_ops random_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = random_create,
    .destroy = random_destroy,
    .place = random_place,
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "random", "1.0",
                       "random search: uniform random placements, the best one kept (baseline)",
                       random_options, random_opts, &random_ops);
