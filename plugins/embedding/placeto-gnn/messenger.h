/* messenger.h — Placeto's sequential full-depth message passer (specs/placeto.md §2.4a) as one
 * fused autodiff op. */
#ifndef PLACETO_GNN_MESSENGER_H
#define PLACETO_GNN_MESSENGER_H

#include "placebench.h"

/* A small network whose every layer is act(x.W + b) with ReLU, including the last: the
 * reference's ReLU(FNN(x)) as an Aggregator applies it (f before the sum, g after). */
#define MESSENGER_MAX_LAYERS 2
#define MESSENGER_MAX_DIM 256
typedef struct messenger_mlp {
    int n_layers;                          /* 1 or 2 */
    pb_nn_tensor *w[MESSENGER_MAX_LAYERS]; /* d x d */
    pb_nn_tensor *b[MESSENGER_MAX_LAYERS]; /* 1 x d */
} messenger_mlp;

/* One direction: nodes are processed in `order`; node v aggregates the rows of its neighbours
 * nbr[nbr_start[v] .. nbr_start[v+1]) (its parents for the forward pass, its children for the
 * backward pass), which `order` must list before v. */
typedef struct messenger_dir {
    const int *order;     /* [n] borrowed */
    const int *nbr_start; /* [n+1] borrowed */
    const int *nbr;       /* borrowed */
    messenger_mlp f, g;   /* the direction's Aggregator: ReLU(g(sum of ReLU(f(h_nbr)))) */
} messenger_dir;

/*
 * h[v] = s[v] + (v has neighbours ? ReLU(g(sum_{u in nbr(v)} ReLU(f(h[u])))) : 0), for each
 * direction, on `batch` independent blocks of n rows stacked in s ((batch*n) x d).  Returns the
 * (batch*n) x 2d tensor [h_forward | h_backward] on tape t in *out (d <= MESSENGER_MAX_DIM).
 * The backward pass walks the nodes in reverse order and defers every weight gradient to one
 * GEMM per weight over all nodes.  The index arrays must stay valid until the tape is reset.
 */
int messenger_sequential(pb_nn_tape *t, int n, int batch, pb_nn_tensor *s, const messenger_dir *fwd,
                         const messenger_dir *bwd, pb_nn_tensor **out, pb_error *err);

/* messenger_sequential for k <= MESSENGER_MAX_RUNS independent runs of the same graph at once:
 * run r records on tape t[r] with input s[r] and directions dirs[2r] (forward) and dirs[2r+1]
 * (backward), and gets in out[r] bit for bit what messenger_sequential gives it alone; the
 * runs' node-by-node chains are interleaved so that the processor overlaps them.  The runs must
 * have the same shape (n, batch, width, gradient mode, processing orders). */
#define MESSENGER_MAX_RUNS 16
int messenger_sequential_multi(int k, pb_nn_tape *const *t, int n, int batch,
                               pb_nn_tensor *const *s, const messenger_dir *dirs,
                               pb_nn_tensor **out, pb_error *err);

#endif
