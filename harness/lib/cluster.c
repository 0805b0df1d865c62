/* cluster.c — the device-type catalog and the built-in cluster presets. */
#include "cluster.h"

#include <stdlib.h>
#include <string.h>

/* One die of a Tesla K80 (the Placeto papers' device; a p2 instance GPU): 2.8 TFLOP/s fp32 at
 * boost, 240 GB/s, 12 GiB, USD 0.90 per hour. */
static const pb_device_type cluster_k80 = {"K80", 2.8e12, 240e9, 12.0 * 1073741824.0, 0.90, 1.0};

typedef struct cluster_owned {
    pb_cluster c;
    pb_device_type *types;
    int *device_type, *device_machine;
    double *bw, *lat;
} cluster_owned;

static const char *const cluster_names[] = {"placeto-k80", NULL};

const char *const *cluster_preset_names(void)
{
    return cluster_names;
}

void cluster_free(pb_cluster *c)
{
    cluster_owned *o = (cluster_owned *)c;
    if (!o)
        return;
    free(o->types);
    free(o->device_type);
    free(o->device_machine);
    free(o->bw);
    free(o->lat);
    free(o);
}

static int cluster_placeto_k80(int n, pb_cluster **out, pb_error *err)
{
    cluster_owned *o = calloc(1, sizeof *o);
    if (!o)
        return pb_errorf(err, "out of memory");
    o->types = malloc(sizeof *o->types);
    o->device_type = calloc((size_t)n, sizeof(int));
    o->device_machine = calloc((size_t)n, sizeof(int));
    o->bw = calloc((size_t)n * (size_t)n, sizeof(double));
    o->lat = calloc((size_t)n * (size_t)n, sizeof(double));
    if (!o->types || !o->device_type || !o->device_machine || !o->bw || !o->lat) {
        cluster_free(&o->c);
        return pb_errorf(err, "out of memory");
    }
    o->types[0] = cluster_k80;
    for (int i = 0; i < n * n; i++)
        o->bw[i] = 7600.0;
    pb_cluster *c = &o->c;
    c->struct_size = sizeof *c;
    c->name = "placeto-k80";
    c->n_devices = n;
    c->n_types = 1;
    c->types = o->types;
    c->device_type = o->device_type;
    c->device_machine = o->device_machine;
    c->n_machines = 1;
    c->link_bandwidth = o->bw;
    c->link_latency = o->lat;
    c->delta1_us = 5.7;
    c->delta2_us = 25.0;
    c->transfer_speed = 7600.0;
    c->init_offset_us = 0.0;
    *out = c;
    return PB_OK;
}

int cluster_preset(const char *name, int n_devices, pb_cluster **out, pb_error *err)
{
    *out = NULL;
    if (n_devices < 1 || n_devices > 4096)
        return pb_errorf(err, "cluster '%s': %d devices (must be 1..4096)", name, n_devices);
    if (strcmp(name, "placeto-k80") == 0)
        return cluster_placeto_k80(n_devices, out, err);
    return pb_errorf(err, "unknown cluster preset '%s' (known: placeto-k80)", name);
}
