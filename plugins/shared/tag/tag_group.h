/* tag_group.h — TAG's op grouping (specs/tag.md §2.3-2.4): the op times it is weighed by, the
 * METIS partition of a graph's units (base groups) into op groups, and the search order. */
#ifndef PB_TAG_GROUP_H
#define PB_TAG_GROUP_H

#include "placebench.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Time in µs of op v of g on a device of cluster type `type` at batch B/2^k (k = 0..3, B the
 * graph's batch): an op whose outputs carry the batch or sum over it (split class BATCH or SUM)
 * takes the graph's measured time of one of 2^k even replicas when given, else cost / 2^k;
 * every other op takes its whole cost.  Divided by the type's speed_vs_ref (when > 0), as the
 * strategy compiler costs replicas.
 */
double tag_op_time_us(const pb_graph *g, const pb_cluster *c, int v, int type, int k);

/* Mean over the cluster's devices of tag_op_time_us (op v, batch B/2^k). */
double tag_op_mean_time_us(const pb_graph *g, const pb_cluster *c, int v, int k);

/* METIS vertex weight of op v (specs/tag.md §2.3): int(sqrt(mean over the cluster's devices and
 * the batch sizes B, B/2, B/4, B/8 of its time)). */
int tag_op_sqrt_cost(const pb_graph *g, const pb_cluster *c, int v);

/* The weighted graph of units METIS partitions (CSR: the neighbours of u are
 * adj[xadj[u] .. xadj[u+1]), each edge listed from both ends with the same weight). */
typedef struct tag_unit_graph {
    int n_units;
    int *xadj, *adj, *adjwgt, *vwgt;
} tag_unit_graph;

/* Builds the unit graph tag_group_partition hands to METIS (the rules below); caller frees with
 * tag_unit_graph_free. */
int tag_unit_graph_build(const pb_graph *g, const int *unit_of, int n_units, const int *op_weight,
                         tag_unit_graph *out, pb_error *err);
void tag_unit_graph_free(tag_unit_graph *u);

/*
 * Partitions the units of g (unit_of[v] in [0, n_units) for each op v; units are TAG's base
 * groups, e.g. the nodes of g's grouped graph) into at most nparts parts with METIS
 * (metis_part.h), as TAG's grouping.py does (specs/tag.md §2.3):
 *   - vertex u weighs 1 + Σ op_weight[v] over its ops (op_weight NULL: 1 + op count);
 *   - for every op v in order and every input edge (pred order) from another unit, the edge
 *     adds the producer tensor's elements (bytes / 4; a 0-byte edge counts its producer's first
 *     port; 0 elements count 1000) to the weight of the unit pair in both directions; a vertex's
 *     neighbours are in first-insertion order; when the total exceeds what METIS's int weights
 *     hold (2^30), every weight is divided by the same factor (at least 1 left);
 *   - METIS_PartGraphKway, imbalance ubvec (TAG's code 5.0, its paper's balance 2), default
 *     options; with n_units <= nparts each unit is its own part and METIS is not called;
 *   - parts are renumbered in order of first appearance over the ops, so empty parts vanish.
 * part_of_unit: [n_units] (caller-owned) receives each unit's part; *n_parts the parts used.
 * All inputs are borrowed.  Errors: a unit index out of range, METIS failure, out of memory.
 */
int tag_group_partition(const pb_graph *g, const int *unit_of, int n_units, const int *op_weight,
                        int nparts, double ubvec, int *part_of_unit, int *n_parts, pb_error *err);

/*
 * TAG's op groups of the problem (specs/tag.md §2.3): the units are the nodes of
 * op_graph->grouped (each op its own unit when the graph has no grouping), op weights
 * tag_op_sqrt_cost on cluster c.  group_of_node: [n_units] caller-owned.
 */
int tag_group_ops(const pb_graph *op_graph, const pb_cluster *c, int max_groups, double ubvec,
                  int *group_of_node, int *n_groups, pb_error *err);

/*
 * Group order for MCTS (specs/tag.md §2.4): order[0..n_groups) receives the groups sorted by
 * decreasing key[g] (Σ over the group's ops of the mean time at batch B), ties in group index
 * order (a stable sort).  Caller-owned.
 */
void tag_group_order(int n_groups, const double *key, int *order);

#ifdef __cplusplus
}
#endif

#endif
