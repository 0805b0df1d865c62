/* cluster.c — pb_cluster from the presets of configs/clusters.lua: Lua describes the devices,
 * machines and links (config_cluster.c evaluates it), C expands them into device-level link
 * matrices. */
#include "cluster.h"

#include <stdlib.h>
#include <string.h>

#define CLUSTER_MAX_DEVICES 4096
#define CLUSTER_DEFAULT_SEED 1ULL

/* A pb_cluster with the storage it points into. */
typedef struct cluster_owned {
    pb_cluster c; /* first: cluster_free casts back */
    cfg_cluster *cfg;
    pb_device_type *types;
    double *bw, *lat;
} cluster_owned;

/* The built-in catalog, named after the file it was compiled from (errors cite its lines). */
static cfg_text cluster_catalog(void)
{
    cfg_text src = {"configs/clusters.lua", NULL, 0};
    src.text = cluster_lua_text(&src.len);
    return src;
}

void cluster_free(pb_cluster *c)
{
    cluster_owned *o = (cluster_owned *)c;
    if (!o)
        return;
    config_cluster_free(o->cfg);
    free(o->types);
    free(o->bw);
    free(o->lat);
    free(o);
}

/* Device-level link matrices from the machine links and the network. */
static void cluster_expand_links(const cfg_cluster *cfg, double *bw, double *lat)
{
    int n = cfg->n_devices, m = cfg->n_machines;
    for (int i = 0; i < n; i++) {
        int a = cfg->device_machine[i];
        for (int j = 0; j < n; j++) {
            int b = cfg->device_machine[j];
            size_t at = (size_t)i * (size_t)n + (size_t)j;
            bw[at] = a == b ? cfg->intra_bandwidth[a] : cfg->inter_bandwidth[a * m + b];
            lat[at] = a == b ? cfg->intra_latency[a] : cfg->inter_latency[a * m + b];
        }
    }
}

/* Takes ownership of cfg (freed on failure too). */
static int cluster_from_cfg(cfg_cluster *cfg, pb_cluster **out, pb_error *err)
{
    size_t n = (size_t)cfg->n_devices;
    cluster_owned *o = calloc(1, sizeof *o);
    if (!o) {
        config_cluster_free(cfg);
        return pb_errorf(err, "out of memory");
    }
    o->cfg = cfg;
    o->types = calloc((size_t)cfg->n_types, sizeof *o->types);
    o->bw = malloc(n * n * sizeof(double));
    o->lat = malloc(n * n * sizeof(double));
    if (!o->types || !o->bw || !o->lat) {
        cluster_free(&o->c);
        return pb_errorf(err, "out of memory");
    }
    for (int t = 0; t < cfg->n_types; t++) {
        const cfg_device_type *d = &cfg->types[t];
        o->types[t] = (pb_device_type){.name = d->name,
                                       .peak_flops = d->peak_flops,
                                       .mem_bandwidth = d->mem_bandwidth,
                                       .memory_bytes = d->memory_bytes,
                                       .price_per_hour = d->price_per_hour,
                                       .speed_vs_ref = d->speed_vs_ref};
    }
    cluster_expand_links(cfg, o->bw, o->lat);
    pb_cluster *c = &o->c;
    c->struct_size = sizeof *c;
    c->name = cfg->name;
    c->n_devices = cfg->n_devices;
    c->n_types = cfg->n_types;
    c->types = o->types;
    c->type_size = sizeof *o->types;
    c->device_type = cfg->device_type;
    c->device_machine = cfg->device_machine;
    c->n_machines = cfg->n_machines;
    c->link_bandwidth = o->bw;
    c->link_latency = o->lat;
    c->delta1_us = cfg->delta1_us;
    c->delta2_us = cfg->delta2_us;
    c->transfer_speed = cfg->transfer_speed;
    c->init_offset_us = cfg->init_offset_us;
    *out = c;
    return PB_OK;
}

int cluster_preset_seeded(const char *name, int n_devices, unsigned long long seed,
                          pb_cluster **out, pb_error *err)
{
    *out = NULL;
    if (n_devices < 1 || n_devices > CLUSTER_MAX_DEVICES)
        return pb_errorf(err, "cluster '%s': %d devices (must be 1..%d)", name, n_devices,
                         CLUSTER_MAX_DEVICES);
    cfg_text src = cluster_catalog();
    cfg_cluster *cfg;
    if (config_cluster(&src, name, n_devices, seed, &cfg, err))
        return PB_ERR;
    return cluster_from_cfg(cfg, out, err);
}

int cluster_preset(const char *name, int n_devices, pb_cluster **out, pb_error *err)
{
    return cluster_preset_seeded(name, n_devices, CLUSTER_DEFAULT_SEED, out, err);
}

int cluster_presets(cfg_preset **out, int *n, pb_error *err)
{
    cfg_text src = cluster_catalog();
    return config_cluster_presets(&src, out, n, err);
}
