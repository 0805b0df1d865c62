/* single_device.c — baseline placer: every node on one device (the papers' initial placement). */
#include "placebench.h"

#include <stddef.h>

#include <stdlib.h>

typedef struct single_opts {
    long long device;
} single_opts;

static const pb_option_def single_options[] = {
    {.name = "device",
     .type = PB_OPT_INT,
     .default_value = "0",
     .min = 0,
     .max = 4095,
     .choices = NULL,
     .help = "device index that receives every node",
     .offset = offsetof(single_opts, device)},
};

typedef struct single_placer {
    int device;
    const pb_host *host;
} single_placer;

static int single_create(const pb_create_args *a, void **instance, pb_error *err)
{
    const single_opts *o = a->options;
    single_placer *s = calloc(1, sizeof *s);
    if (!s)
        return pb_errorf(err, "out of memory");
    s->device = (int)o->device;
    s->host = a->host;
    *instance = s;
    return PB_OK;
}

static void single_destroy(void *instance)
{
    free(instance);
}

static int single_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                        pb_error *err)
{
    single_placer *s = instance;
    if (s->device >= p->cluster->n_devices)
        return pb_errorf(err, "device %d does not exist (the cluster has %d devices)", s->device,
                         p->cluster->n_devices);
    for (int v = 0; v < p->graph->n_nodes; v++)
        best->device[v] = s->device;
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
    if (s->host->simulate(s->host->ctx, best, &ev, err))
        return PB_ERR;
    *initial_us = ev.step_time_us;
    pb_progress pr = {.struct_size = sizeof pr,
                      .episode_best_us = ev.step_time_us,
                      .best_so_far_us = ev.step_time_us,
                      .sim_calls = 1};
    s->host->progress(s->host->ctx, &pr);
    return PB_OK;
}

static const pb_placer_ops single_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = single_create,
    .destroy = single_destroy,
    .place = single_place,
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "single-device", "1.0",
                       "every node on one device (baseline)", single_options, single_opts,
                       &single_ops);
