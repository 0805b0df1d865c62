/* anchors.h — P-GNN's anchor sets and hop distances (specs/placeto.md §3.5), and the sparse
 * weights that turn them into one weighted sum over the pooled GraphSAGE blocks. */
#ifndef EMBEDDING_ANCHORS_H
#define EMBEDDING_ANCHORS_H

#include "placebench.h"

enum { ANCHORS_MAX = 0, ANCHORS_MEAN = 1 };

/* m = int(ln n) size classes and copies = max(int(c m), 1) sets of each: m * copies sets in all
 * (the paper's c log^2 n with the natural log and floors).  0 when n < 3. */
int anchors_count(int n, double c, int *m, int *copies);
/* int(n / 2^(level + exponent)): the size of the sets of size class `level`; may be 0. */
int anchors_size(int n, int level, int exponent);

/* Anchor sets in draw order (size class outer, copy inner), each in its sampled order:
 * node[start[s] .. start[s+1]). */
typedef struct anchors {
    int n_sets;
    int *start; /* [n_sets+1] */
    int *node;
} anchors;

/* Draws the sets as the reference does: for each size class, for each copy,
 * random.sample(population, size) from rng (partial Fisher-Yates over the n nodes listed in
 * population order, the reference's pg.nodes()).  Caller frees with anchors_free (also after an
 * error). */
int anchors_draw(anchors *a, const int *population, int n, double c, int exponent, pb_rng *rng,
                 pb_error *err);
void anchors_free(anchors *a);

/* Hop distances from src along the edges' direction (networkx shortest_path_length on the
 * DiGraph), up to cutoff hops: dist[v] = hops for v reachable within the cutoff, dist[src] = 0,
 * -1 otherwise.  dist and queue: g->n_nodes ints, caller-owned.  Returns the number reached. */
int anchors_distances(const pb_graph *g, int src, int cutoff, int *dist, int *queue);

/*
 * Node v's P-GNN input before F_pos is the mean over all rows of its stacked anchor messages,
 * each message a 2 R_p x d block w * [P_v ; P_k].  With q_k = the column sums of node k's pooled
 * block P_k, that mean is (1 / (2 n_sets R_p)) * sum_k weight * q_k over the entries of row v
 * below; the caller applies the 1 / (2 n_sets R_p) factor.  Per anchor set s of v:
 *   ANCHORS_MAX: the anchor k != v of s with the largest distance from v within the cutoff
 *     (ties: first in s's order), w = 1/(dist+1), adding w to q_v's and to q_k's weight; none:
 *     nothing (the reference's zero message);
 *   ANCHORS_MEAN: every anchor k of s, v itself included at distance 0, with w = 1/(dist+1) when
 *     reachable within the cutoff and 0 otherwise, adding w/|s| to q_v's and q_k's weight; an
 *     empty set adds nothing (the reference fails on one).
 * Row v lists v first (its total weight), then the anchors in set order (repeats allowed).
 */
typedef struct anchors_weights {
    int n;
    int *start; /* [n+1] */
    int *index; /* [start[n]] nodes */
    float *weight;
} anchors_weights;

int anchors_weights_build(anchors_weights *w, const pb_graph *g, const anchors *a, int cutoff,
                          int aggregation, pb_error *err);
void anchors_weights_free(anchors_weights *w);

#endif
