/* policy.h — the placeto placer's policy head: readout of the node embeddings around the node
 * being placed (specs/placeto.md §2.5) and the classifier that gives the device logits. */
#ifndef PLACETO_POLICY_H
#define PLACETO_POLICY_H

#include "placebench.h"

enum { POLICY_READOUT_TRI = 0, POLICY_READOUT_GRAPH = 1 };

/* The head's parameters (ids in the placer's pb_nn_params). */
typedef struct policy {
    int readout;          /* POLICY_READOUT_* */
    int dim;              /* embedding width D (d_agg) */
    int n_devices;        /* logits per step */
    pb_nn_mlp agg_f[3];   /* tri: ancestors, descendants, peers; graph: [0] over all nodes */
    pb_nn_mlp agg_g[3];   /* the Aggregators' g, ReLU after every layer as f */
    pb_nn_mlp classifier; /* FNN(4D, [8D, 4D], n_devices) (graph: FNN(D, [2D, D], ...)) */
} policy;

/*
 * Registers the head in params ("placeto/..." names): per Aggregator f = FNN(D, [D], D) and
 * g = FNN(D, [D], D) with ReLU after each (small_nn: no hidden layers), and the classifier
 * (small_nn: FNN(4D, [4D], n_devices)).  Glorot weights from rng.
 */
int policy_init(policy *pol, pb_nn_params *params, int readout, int dim, int n_devices,
                int small_nn, pb_rng *rng, pb_error *err);

/* Ancestor and descendant sets of every node as bit rows (transitive, the node excluded). */
typedef struct policy_graph {
    int n;
    int words;      /* 64-bit words per row */
    uint64_t *anc;  /* [n * words] */
    uint64_t *desc; /* [n * words] */
} policy_graph;

/* topo: a topological order of g (borrowed for the call).  Caller frees with
 * policy_graph_free. */
int policy_graph_build(const pb_graph *g, const int *topo, policy_graph *pg, pb_error *err);
void policy_graph_free(policy_graph *pg);

/*
 * Records the logits (batch x n_devices) on tape t.  h is (batch * n) x D: block b holds the
 * node embeddings of step b, whose node being placed is cur[b] (borrowed until the tape is
 * reset).  Tri readout: z = [agg(ancestors) | agg(descendants) | agg(peers) | h[cur]] with
 * agg(S) = ReLU(g(sum_{j in S} ReLU(f(h_j)))), an empty set giving ReLU(g(0)); peers are the
 * nodes neither ancestor nor descendant of cur (nor cur).  Graph readout: z = agg(all nodes).
 * NULL on error (recorded on the tape).
 */
pb_nn_tensor *policy_logits(pb_nn_tape *t, pb_nn_params *params, const policy *pol,
                            const policy_graph *pg, pb_nn_tensor *h, int batch, const int *cur);

#endif
