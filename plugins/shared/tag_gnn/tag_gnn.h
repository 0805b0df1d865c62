/* tag_gnn.h — TAG's heterogeneous graph-attention network (specs/tag.md §8): its input graph
 * and features, the network that scores a group's actions, the prior hook for the MCTS placers
 * (tag_search.h) and training from MCTS visit distributions. */
#ifndef PB_TAG_GNN_H
#define PB_TAG_GNN_H

#include "placebench.h"
#include "tag_search.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    /* op-group node features (§8.2): 4 times, 2 sizes, the comm one-hot (n_comm), 2 run-time
     * feedback values, decided and next: 13 in the reference (n_comm 3) */
    TAG_GNN_OP_FEATURES_BASE = 10,
    TAG_GNN_COMM_REFERENCE = TAG_N_COMM, /* PS, AllReduce, MP */
    TAG_GNN_COMM_MAX =
        TAG_COMM_DUPLICATE + 1, /* ... and DUPLICATE (the placer's duplicate_action) */
    TAG_GNN_DEV_FEATURES = 5,   /* device-group node features */
    TAG_GNN_LINK_FEATURES = 1,  /* link (device -> device) edge features */
    TAG_GNN_PREV_FEATURES = 1,  /* prev / succ (op -> op) edge features */
    TAG_GNN_PLACE_FEATURES = 5, /* place / serve (op <-> device) edge features */
    TAG_GNN_EDGE_TYPES = 5      /* link, prev, succ, place, serve */
};

/*
 * The network's input, already normalised (§8.1-8.2).  G op groups, T device groups ("tasks").
 * Edges of each type are lists (src, dst) in the reference's DGL order; succ is prev reversed and
 * serve is place reversed, with the same features, so neither is stored.  Place edges are all
 * (g, t) pairs, g-major: edge g*T + t.  Candidates are the actions the decoder scores for op
 * group `group`.  All arrays are borrowed.
 */
typedef struct tag_gnn_input {
    int n_groups, n_tasks;
    int n_comm;            /* communication options: 3, or 4 with DUPLICATE */
    const float *op_feat;  /* [G * (10 + n_comm)] */
    const float *dev_feat; /* [T * 5] */
    int n_link;
    const int *link_src, *link_dst; /* [n_link] task indices */
    const float *link_feat;         /* [n_link * 1] */
    int n_prev;
    const int *prev_src, *prev_dst; /* [n_prev] group indices */
    const float *prev_feat;         /* [n_prev * 1] */
    const float *place_feat;        /* [G * T * 5] */
    int group;                      /* k: the op group whose actions are scored */
    int n_cand;
    const unsigned char *cand_placed; /* [n_cand * T] 0/1 */
    const int *cand_comm;             /* [n_cand] TAG_COMM_* */
} tag_gnn_input;

/* Network and feature options.  The defaults (tag_gnn_options_default) are the reference code's
 * (§8.3, §14): sizes 256/64, 4 heads, 4 layers, no γ, integer-division utilisation, zero tensor
 * edge features, 3 comm options. */
typedef struct tag_gnn_options {
    int hidden;      /* node embedding width (256) */
    int edge_hidden; /* edge embedding width (64) */
    int heads;       /* attention heads (4); each head is `hidden` wide */
    int layers;      /* GAT layers (4) */
    int gamma;       /* 1: the paper's γ (1 same-type, 0.1 cross-type edges); 0: plain mean */
    int float_utilisation;    /* 1: busy / step time in float; 0: integer division (reference) */
    int tensor_edge_features; /* 1: the prev/succ feature as the paper means it; 0: always 0 */
    int n_comm; /* 3 (reference) or 4 when the search offers DUPLICATE: the comm one-hot's width */
} tag_gnn_options;

void tag_gnn_options_default(tag_gnn_options *o);

typedef struct tag_gnn tag_gnn; /* opaque */

/* A network with freshly initialised parameters (Glorot uniform, drawn from a pb_rng seeded with
 * `seed`; BatchNorm γ 1, β 0, statistics 0 and 1).  Caller frees.  NULL with err on failure. */
tag_gnn *tag_gnn_new(const tag_gnn_options *o, uint64_t seed, pb_error *err);
void tag_gnn_free(tag_gnn *n);
/* The parameters (owned by n): save and load them with pb_nn_params_save / _load. */
pb_nn_params *tag_gnn_params(tag_gnn *n);
const tag_gnn_options *tag_gnn_get_options(const tag_gnn *n);

/* PB_OK when every count, index and option of in is in range; else the error names the field. */
int tag_gnn_input_check(const tag_gnn_input *in, pb_error *err);
/* Records the forward pass on tape t: 1 x n_cand log-probabilities of the candidates (the
 * decoder's log-softmax).  NULL with err set when in fails tag_gnn_input_check; otherwise ops
 * that fail record their error in the tape (pb_nn_tape_status). */
pb_nn_tensor *tag_gnn_forward(tag_gnn *n, pb_nn_tape *t, const tag_gnn_input *in, pb_error *err);
/* prior[c] = p(candidate c) for every candidate (caller-owned, n_cand floats). */
int tag_gnn_priors(tag_gnn *n, const tag_gnn_input *in, float *prior, pb_error *err);

/* The input built from a search state (§8.2), with arrays it owns; reused from one build to the
 * next.  Zero-initialise before the first build; free with tag_gnn_features_free. */
typedef struct tag_gnn_features {
    tag_gnn_input in;
    void *mem; /* one block holding every array of `in` */
    size_t cap;
} tag_gnn_features;

/* Builds f->in for state st, scoring the actions of op group `group` (the whole action list of
 * st).  o picks the feature variants (utilisation, tensor edge features).  Errors name the field
 * that is out of range. */
int tag_gnn_features_build(tag_gnn_features *f, const tag_state *st, int group,
                           const tag_gnn_options *o, pb_error *err);
/* A deep copy of src into dst (dst zero-initialised or built before). */
int tag_gnn_features_copy(tag_gnn_features *dst, const tag_gnn_input *src, pb_error *err);
void tag_gnn_features_free(tag_gnn_features *f);

/* The network's own feature buffer, which tag_gnn_prior_hook builds into (owned by n). */
tag_gnn_features *tag_gnn_hook_features(tag_gnn *n);
/* The prior hook of tag_search.h with ctx = a tag_gnn *: features of st, the network's priors. */
int tag_gnn_prior_hook(void *ctx, const tag_state *st, int group, float *prior_per_action,
                       pb_error *err);

/* --- training (§8.4) */

/* One training record: an input (owned copy) and the target distribution pi over its candidates
 * (normalised MCTS visit counts). */
typedef struct tag_gnn_sample {
    tag_gnn_features x;
    float *pi; /* [x.in.n_cand] */
} tag_gnn_sample;

/* Fills s from an input and visit counts (pi = visits / Σ visits, §7.4); s zero-initialised. */
int tag_gnn_sample_set(tag_gnn_sample *s, const tag_gnn_input *in, const double *visits,
                       pb_error *err);
void tag_gnn_sample_free(tag_gnn_sample *s);

/* The cross-entropy -Σ pi log p of the network on one sample, without gradients. */
int tag_gnn_loss(tag_gnn *n, const tag_gnn_sample *s, double *loss, pb_error *err);

/* Optimiser settings of §8.4: Adam (Keras defaults b1 0.9, b2 0.999, epsilon 1e-7), learning rate
 * 1e-4, Keras clipnorm 0.6 (each gradient tensor clipped on its own). */
typedef struct tag_gnn_train_options {
    double lr;
    double clipnorm;
    double beta1, beta2, epsilon;
} tag_gnn_train_options;

void tag_gnn_train_options_default(tag_gnn_train_options *o);

typedef struct tag_gnn_trainer tag_gnn_trainer; /* an Adam state bound to one network */
tag_gnn_trainer *tag_gnn_trainer_new(tag_gnn *n, const tag_gnn_train_options *o, pb_error *err);
void tag_gnn_trainer_free(tag_gnn_trainer *tr);
/* The trainer's Adam (owned by tr): save and restore it with the parameters through
 * pb_nn_params_save_adam / pb_nn_params_load_adam, so that a chain of runs trains with one
 * optimizer, as TAG's train.py does. */
pb_nn_adam *tag_gnn_trainer_adam(tag_gnn_trainer *tr);
/* One single-sample step (loss, backward, clipnorm, Adam); *loss gets the loss before the step
 * (may be NULL). */
int tag_gnn_train_step(tag_gnn_trainer *tr, const tag_gnn_sample *s, double *loss, pb_error *err);
/* `steps` single-sample steps over samples[0..n) in an order drawn from rng (a fresh shuffle per
 * pass); *mean_loss gets the mean loss of the steps (may be NULL). */
int tag_gnn_train_epoch(tag_gnn_trainer *tr, const tag_gnn_sample *samples, int n, long steps,
                        pb_rng *rng, double *mean_loss, pb_error *err);

#ifdef __cplusplus
}
#endif

#endif
