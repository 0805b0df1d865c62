/* placebench/placeto.h — helpers for progressive (Placeto-family) placers and their embeddings:
 * node features and the traversal orders (harness/model/).  Included by placebench.h. */
#ifndef PLACEBENCH_PLACETO_H
#define PLACEBENCH_PLACETO_H

#include "placebench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Library helpers for progressive placers and their embeddings (libplacebench,
 * harness/model/progressive.c). */

/* What the 5th Placeto node feature holds (specs/placeto.md §2.2): the simulated start time of
 * the node (the [A] intent; a group starts when its earliest op starts), or the peak memory of
 * the device the node sits on (what the [M/B] forks compute). */
enum { PB_FEATURE5_START_TIME = 0, PB_FEATURE5_PEAK_MEM = 1 };

/* 5 + n_devices: [cost, out_size, done, current, feature 5, one-hot device (n_devices)]. */
static inline int pb_placeto_features_dim(int n_devices)
{
    return 5 + n_devices;
}

/* Writes the Placeto node features of s, normalised as the reference does at every fetch:
 * feature 5 made relative to the current node's, then the columns cost, out_size and feature 5
 * divided by their maximum when it is not 0.  out: s->graph->n_nodes rows of
 * pb_placeto_features_dim(s->n_devices) floats (caller-owned).  Feature 5 is 0 while s->eval is
 * NULL; PB_FEATURE5_START_TIME needs s->eval->node_start_us, PB_FEATURE5_PEAK_MEM
 * s->eval->peak_mem_bytes. */
int pb_placeto_features(const pb_place_state *s, int feature5, float *out, pb_error *err);

/* What pb_placeto_features reads of s->eval with this feature-5 mode, as PB_EVAL_READS_* bits
 * (for pb_embedding_ops.eval_reads). */
unsigned pb_placeto_features_reads(int feature5);

/* networkx 2.4 topological_sort of g (Kahn with a LIFO ready stack, specs/placeto.md §5.2): the
 * reference's node index order.  order: g->n_nodes ints, caller-owned.  Fails on a cycle. */
int pb_traverse_topo(const pb_graph *g, int *order, pb_error *err);

/* The traversal order called `name` (lexico, topo, reversed-topo, dfs-preorder, dfs-postorder,
 * bfs, lexico-topo or random, specs/placeto.md §5; `seed` is read by "random" only) into order
 * (g->n_nodes ints, caller-owned).  An unknown name is an error listing the known ones. */
int pb_traverse_by_name(const char *name, const pb_graph *g, unsigned long long seed, int *order,
                        pb_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PLACEBENCH_PLACETO_H */
