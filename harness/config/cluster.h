/* cluster.h — clusters (pb_cluster) built from the presets of configs/clusters.lua, the
 * device-type catalog and cluster presets compiled into the library. */
#ifndef PB_CLUSTER_H
#define PB_CLUSTER_H

#include "config.h"
#include "placebench.h"

#include <stddef.h>

/*
 * Builds preset `name` with exactly n_devices devices (1..4096); caller frees with
 * cluster_free.  Presets (configs/clusters.lua; `placebench cluster list`):
 *   placeto-k80  n identical K80s in one machine, one outgoing bus each: 7600 B/µs, delta1
 *                5.7 µs, delta2 25 µs, init offset 0 (any n);
 *   tag-testbed  TAG §5.2 testbed, 16 GPUs on 7 machines (the first n devices);
 *   tag-cloud    TAG §5.2 cloud, 32 GPUs on 6 machines (the first n devices);
 *   heterps      HeterPS cluster, 32 V100 and 672 CPU cores on 14 servers, with its prices
 *                (the first n devices);
 *   tag-random   TAG §5.2 random topology drawn from the seed (n = 1..48);
 *   gdp-p100     GDP's machine: a host CPU and 8 P100s on PCIe (the first n of 9 devices);
 *   tag-testbed-code  the testbed as TAG's code simulates it: 3 groups, 2810 B/µs, 12 µs.
 * A device count that does not fit the preset is an error ("cluster 'NAME': ...").  The link
 * matrices hold, for devices i != j, the link of their machine when they share one and the
 * network's otherwise; the diagonal holds the device's machine link.  cluster_preset uses
 * seed 1, the default experiment seed.
 */
int cluster_preset(const char *name, int n_devices, pb_cluster **out, pb_error *err);
/* As cluster_preset; `seed` seeds the preset's random draws (only tag-random draws). */
int cluster_preset_seeded(const char *name, int n_devices, unsigned long long seed,
                          pb_cluster **out, pb_error *err);
void cluster_free(pb_cluster *c);

/* The presets, sorted by name, with their one-line descriptions; caller frees with
 * config_cluster_presets_free. */
int cluster_presets(cfg_preset **out, int *n, pb_error *err);

/* The text of configs/clusters.lua as it was at build time (static storage; defined in the
 * generated cluster_lua.c). */
const char *cluster_lua_text(size_t *len);

#endif
