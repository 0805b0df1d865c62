/* hdp_model.h — HDP's hierarchical controller (specs/gdp.md §7, TensorFlow's
 * grappler/hierarchical_controller.py): op features, group embeddings, the feed-forward grouper
 * and the seq2seq LSTM placer with attention, on the NN core. */
#ifndef PB_HDP_MODEL_H
#define PB_HDP_MODEL_H

#include "placebench.h"

enum { HDP_SHAPE_SLOTS = 25, HDP_ADJ_SLOTS = 20, HDP_OP_FEATURES = 1 + 25 + 20 };

/*
 * Op features (§7.2), one row of HDP_OP_FEATURES floats per important op, ops numbered in
 * topological order 0..n-1: [type_index, 25 shape slots, 20 adjacency slots].  dims[25 v + 5 i +
 * j] is axis j of output port i of op v, -1 when absent (copied as is).  The consumers of op u
 * are succ[succ_start[u] .. succ_start[u+1]) (op numbers, in graph-def order); walking u in
 * order, each edge appends (w, +1) to u's list and (u, -1) to w's list, the first 20 numbers
 * kept, zero padded.  out: n rows, caller-owned.
 */
void hdp_op_features(int n, const int *type_index, const float *dims, const int *succ_start,
                     const int *succ, float *out);

/* Width of a group embedding row: 2 n_groups + n_types + 25. */
int hdp_group_width(int n_groups, int n_types);

/*
 * Group embeddings (§7.4) of a grouping group[n] of the ops into n_groups, n_types the number of
 * used op types: per group [dag row | dag column | type counts + shape sums (overlapping in the
 * first columns, the code's quirk)], each row divided by (its max + 1).  Shape sums add the dims
 * > 0 of dims (layout as hdp_op_features).  out: n_groups rows of hdp_group_width floats,
 * caller-owned.
 */
void hdp_group_features(int n, int n_groups, int n_types, const int *group, const int *type_index,
                        const float *dims, const int *succ_start, const int *succ, float *out);

/* The controller's sizes (hierarchical_controller_hparams). */
typedef struct hdp_sizes {
    int n_features;   /* op feature width (46) */
    int group_hidden; /* grouping_hidden_size, 64 */
    int n_groups;
    int group_width; /* hdp_group_width(n_groups, n_types) */
    int hidden;      /* placer LSTM width, 512; the encoder directions have hidden / 2 */
    int n_devices;
} hdp_sizes;

/* The trainable tensors (parameter ids in params). */
typedef struct hdp_net {
    hdp_sizes s;
    pb_nn_params *params;           /* owned */
    int w_ff, w_sm;                 /* grouper: features -> group_hidden -> n_groups, no bias */
    int enc_fw, enc_bw, enc_forget; /* encoder LSTMs ((width + h/2) x 2h, no bias), forget bias */
    int dec, dec_forget;            /* decoder LSTM ((h + h) x 4h), forget bias */
    int attn1, attn2, attn_v;       /* memory and query transforms (h x h), v (1 x h) */
    int dev_emb, go_emb, w_dev;     /* device embeddings (d x h), go (1 x h), [h, ctx] -> d */
} hdp_net;

/* Creates the parameters: Glorot-uniform weights drawn from rng in the order above, forget
 * biases 1.0 (forget_bias_init). */
int hdp_net_init(hdp_net *net, const hdp_sizes *s, pb_rng *rng, pb_error *err);
void hdp_net_free(hdp_net *net);

/* One HDP LSTM step (the code's lstm()): z = [x, h].W, no bias, split i, f, o, g; i = sigmoid(i),
 * f = sigmoid(f + forget), o = sigmoid(o), g = tanh(g); c' = i g + f c, h' = o tanh(c'). */
void hdp_lstm_step(pb_nn_tape *t, pb_nn_tensor *w, pb_nn_tensor *forget, pb_nn_tensor *x,
                   pb_nn_tensor *h, pb_nn_tensor *c, pb_nn_tensor **h_out, pb_nn_tensor **c_out);

/* Additive attention of the decoder: e_j = v . tanh(h.W_attn2 + mem_j), alpha = softmax(e),
 * returns the context alpha . mem (1 x h); mem is the transformed encoder memory (G x h). */
pb_nn_tensor *hdp_attend(pb_nn_tape *t, pb_nn_tensor *h, pb_nn_tensor *w_attn2, pb_nn_tensor *v,
                         pb_nn_tensor *mem);

/* How a forward pass picks its actions. */
typedef struct hdp_pick {
    pb_rng *rng;        /* sampling and noise draws */
    double noise;       /* logits_std_noise (0: none) */
    double temperature; /* placer logits / temperature */
    double tanh_c;      /* placer logits = tanh(.) * tanh_c (0: no tanh) */
    const int *replay;  /* given actions (NULL: sample) */
    int greedy;         /* argmax instead of sampling (when replay is NULL) */
} hdp_pick;

/* Grouper: logits (X.W_ff).W_sm + noise for the n ops of x (n x n_features); writes group[n]
 * and returns sum_ops log softmax[group] (1 x 1). */
pb_nn_tensor *hdp_grouper(pb_nn_tape *t, hdp_net *net, pb_nn_tensor *x, const hdp_pick *pick,
                          int *group);

/* Placer: encodes the group embeddings e (n_groups x group_width) with the bi-LSTM, decodes one
 * device per group (attention over the memory); writes device[n_groups] (0..n_devices-1) and
 * returns sum_t log softmax(logits_t)[device_t] (1 x 1). */
pb_nn_tensor *hdp_placer(pb_nn_tape *t, hdp_net *net, pb_nn_tensor *e, const hdp_pick *pick,
                         int *device);

/* HDP's learning rate at global step k: lr for k < start, else lr dec^floor((k - start) / every).
 */
double hdp_learning_rate(double lr, double dec, int start, int every, long long k);

#endif
