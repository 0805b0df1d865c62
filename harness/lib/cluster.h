/* cluster.h — device-type catalog and cluster construction (pb_cluster). */
#ifndef PB_CLUSTER_H
#define PB_CLUSTER_H

#include "placebench.h"

/* Builds the named preset with n_devices devices; caller frees with cluster_free.
 * Known presets: "placeto-k80" (n identical K80s, one outgoing bus each, 7600 B/µs,
 * delta1 5.7 µs, delta2 25 µs, init offset 0). */
int cluster_preset(const char *name, int n_devices, pb_cluster **out, pb_error *err);
void cluster_free(pb_cluster *c);
/* Names of the known presets, NULL-terminated. */
const char *const *cluster_preset_names(void);

#endif
