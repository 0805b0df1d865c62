/* placer.c — skeleton of a placer plugin: copy this file to start one (see README, "Write your
 * own placer").  It is a complete, working placer — greedy local search: move one node at a time
 * to the device that lowers the step time most — built in CI so that it keeps compiling. */
#include "placebench.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* 1. Options: a struct of your own, filled by the harness through the table's offsets. */
typedef struct skeleton_opts {
    long long rounds;
} skeleton_opts;

static const pb_option_def skeleton_options[] = {
    {.name = "rounds",
     .type = PB_OPT_INT,
     .default_value = "2",
     .min = 1,
     .max = 1000,
     .help = "passes over all nodes (the experiment's sim_calls budget, when set, caps the calls)",
     .offset = offsetof(skeleton_opts, rounds)},
};

/* 2. The instance: what create() keeps for place(). */
typedef struct skeleton {
    skeleton_opts opts;
    const pb_host *host; /* simulate, progress, log, deadline: valid until destroy() */
} skeleton;

static int skeleton_create(const pb_create_args *a, void **instance, pb_error *err)
{
    skeleton *s = calloc(1, sizeof *s);
    if (!s)
        return pb_errorf(err, "out of memory"); /* errors are values, never exit() */
    s->opts = *(const skeleton_opts *)a->options;
    s->host = a->host;
    *instance = s;
    return PB_OK;
}

static void skeleton_destroy(void *instance)
{
    free(instance);
}

/* One simulator call through the host; the host counts it and checks the strategy. */
static int skeleton_simulate(const skeleton *s, const pb_strategy *st, double *us, pb_error *err)
{
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
    if (s->host->simulate(s->host->ctx, st, &ev, err))
        return PB_ERR;
    *us = ev.feasible ? ev.step_time_us : 1e300; /* out of memory: worse than anything */
    return PB_OK;
}

/* 3. place(): fill `best` (caller-owned, sized for p->graph) and report progress. */
static int skeleton_place(void *instance, const pb_problem *p, pb_strategy *best,
                          double *initial_us, pb_error *err)
{
    skeleton *s = instance;
    int n = p->graph->n_nodes, d = p->cluster->n_devices;
    long long budget = p->budget->sim_calls, calls = 0;
    memset(best->device, 0, (size_t)n * sizeof(int)); /* start: everything on device 0 */
    double best_us;
    if (skeleton_simulate(s, best, &best_us, err))
        return PB_ERR;
    *initial_us = best_us;
    calls++;
    for (int round = 0; round < s->opts.rounds; round++) {
        for (int v = 0; v < n; v++) {
            int keep = best->device[v];
            for (int dev = 0; dev < d; dev++) {
                if (dev == keep || (budget > 0 && calls >= budget) ||
                    s->host->deadline_passed(s->host->ctx))
                    continue;
                best->device[v] = dev;
                double us;
                if (skeleton_simulate(s, best, &us, err))
                    return PB_ERR;
                calls++;
                if (us < best_us) {
                    best_us = us;
                    keep = dev;
                }
            }
            best->device[v] = keep;
        }
        /* One learning-curve point per round (the host fills the wall time). */
        pb_progress pr = {.struct_size = sizeof pr,
                          .episode = round,
                          .episode_best_us = best_us,
                          .best_so_far_us = best_us,
                          .sim_calls = calls};
        s->host->progress(s->host->ctx, &pr);
    }
    return PB_OK;
}

/* 4. The ops table and the one exported descriptor. */
static const pb_placer_ops skeleton_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = skeleton_create,
    .destroy = skeleton_destroy,
    .place = skeleton_place,
    .uses = 0, /* PB_USES_EMBEDDING / PB_USES_TRAVERSAL when the placer reads them */
    .produces = PB_KIND_BIT(PB_STRATEGY_PLACEMENT), /* the strategy kinds place() returns */
    .simulators = NULL, /* or "name,name": the only simulators this placer works with */
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "skeleton-placer", "1.0",
                       "skeleton: greedy one-node moves (copy plugins/skeleton/placer.c)",
                       skeleton_options, skeleton_opts, &skeleton_ops);
