/* placebench/nn.h — the neural-network core of libplacebench (harness/nn/): tensors on a tape,
 * reverse-mode autodiff, parameter sets, optimizers.  Included by placebench.h. */
#ifndef PLACEBENCH_NN_H
#define PLACEBENCH_NN_H

#include "placebench.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Small dense float32 tensors, reverse-mode autodiff on a tape, trainable parameter sets and
 * optimizers, shared by learned placers and embeddings (libplacebench, harness/nn/).
 *
 * Tensors are row-major matrices of rank <= 2: a vector is a 1 x n row, a scalar is 1 x 1.
 * Conventions follow the Placeto reference: row vectors, y = x.W + b, W stored in x out.
 *
 * A tape records one forward pass.  Every tensor an op returns lives on the tape (the struct,
 * its values and its gradient) until pb_nn_tape_reset() or pb_nn_tape_free(); a reset keeps the
 * memory, so a forward pass no bigger than an earlier one allocates nothing.
 *
 * Errors are sticky: an op given a NULL input or mismatched shapes, or one that runs out of
 * memory, records a message in the tape and returns NULL, and every later op then returns NULL.
 * A forward pass is therefore written without checks and tested once with pb_nn_tape_status().
 *
 * Gradients: a tensor's grad is NULL when no gradient flows to it (constants, and everything on
 * a tape reset with record_grad = 0, which records nothing for backward and is the cheap mode for
 * greedy evaluation).  pb_nn_backward() zeroes the gradients of all tape tensors and ADDS the
 * gradient it computes into the parameters' gradients, so backward passes accumulate until
 * pb_nn_params_zero_grad().
 *
 * Index arrays given to ops (gather, scatter, pb_nn_csr) are borrowed: they must stay valid and
 * unchanged until the tape is reset.  Nothing here reads the clock or global state; randomness
 * comes from an explicit pb_rng.  A tape, parameter set or optimizer must not be used by two
 * threads at once; distinct ones are independent.
 */

typedef struct pb_nn_params pb_nn_params; /* opaque, see pb_nn_params_new() */
typedef struct pb_nn_tape pb_nn_tape;     /* opaque, see pb_nn_tape_new() */

/* A tensor on a tape.  The struct and its arrays are owned by the tape (a parameter's arrays by
 * its pb_nn_params); callers may read data and write the data of constants they created. */
typedef struct pb_nn_tensor {
    int rows;
    int cols;
    float *data; /* rows*cols values, row-major */
    float *grad; /* same layout; NULL when no gradient flows to this tensor */
} pb_nn_tensor;

/* --- tapes */

/* A new empty tape that records gradients; NULL when out of memory.  Caller frees. */
pb_nn_tape *pb_nn_tape_new(void);
void pb_nn_tape_free(pb_nn_tape *t);
/* Forgets every tensor of the tape (their pointers become invalid), clears a recorded error, and
 * sets whether the next forward pass records gradients (record_grad != 0) or not. */
void pb_nn_tape_reset(pb_nn_tape *t, int record_grad);
/* PB_OK, or PB_ERR with the first error an op met on this tape (since the last reset). */
int pb_nn_tape_status(const pb_nn_tape *t, pb_error *err);
/* Reverse pass from y: seed holds dL/dy (y->rows*y->cols values, borrowed), NULL meaning all
 * ones (for a 1 x 1 loss, dL/dy = 1).  Zeroes the gradients of the tape's tensors first, then
 * adds dL/dtheta into the gradients of the parameters.  Fails when the tape holds an error or y
 * does not depend on any parameter. */
int pb_nn_backward(pb_nn_tape *t, pb_nn_tensor *y, const float *seed, pb_error *err);
/* The dense-product work done on the tape since it was created (resets do not clear it), in
 * floating-point operations: 2 m n k per m x k by k x n product of matmul and linear, forward and
 * backward, plus what custom ops report with pb_nn_tape_count.  Element-wise work is not counted
 * (it is what a machine's FMA peak does not measure).  For FLOP rates (bench placer). */
double pb_nn_tape_flop(const pb_nn_tape *t);
/* Adds flop to the tape's count: a custom op reports its products (its backward function too,
 * through a tape pointer kept in its context).  NULL t is ignored. */
void pb_nn_tape_count(pb_nn_tape *t, double flop);

/* --- leaves and views */

/* A constant (no gradient): values (rows*cols, borrowed, copied) or zeros when values is NULL.
 * The caller may fill its data afterwards, before any op reads it. */
pb_nn_tensor *pb_nn_constant(pb_nn_tape *t, int rows, int cols, const float *values);
/* A zero-filled tensor whose row blocks are written once each with pb_nn_assign() before being
 * read: how a recursion (message passing level by level) assembles its output without copying
 * the whole matrix at every level.  Has a gradient when the tape records gradients. */
pb_nn_tensor *pb_nn_buffer(pb_nn_tape *t, int rows, int cols);
/* Parameter `id` of p as a tensor whose data and grad are p's own storage (no copy).  Valid until
 * the tape is reset or a parameter is added to p. */
pb_nn_tensor *pb_nn_param(pb_nn_tape *t, pb_nn_params *p, int id);
/* Rows start .. start+count-1 of x as a view sharing x's values and gradient (no copy, free). */
pb_nn_tensor *pb_nn_rows(pb_nn_tape *t, pb_nn_tensor *x, int start, int count);
/* x seen as rows x cols (same element count, row-major order kept), sharing its storage. */
pb_nn_tensor *pb_nn_reshape(pb_nn_tape *t, pb_nn_tensor *x, int rows, int cols);
/* Copies src into dst (same shape; dst a pb_nn_buffer or a pb_nn_rows view of one) and returns
 * dst; the gradient that later readers put into dst flows back into src. */
pb_nn_tensor *pb_nn_assign(pb_nn_tape *t, pb_nn_tensor *dst, pb_nn_tensor *src);

/* --- linear algebra (every product through OpenBLAS sgemm) */

pb_nn_tensor *pb_nn_matmul(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b);
/* op(a).op(b) where op transposes when trans_* != 0 (attention scores: Q.K^T). */
pb_nn_tensor *pb_nn_matmul_t(pb_nn_tape *t, pb_nn_tensor *a, int trans_a, pb_nn_tensor *b,
                             int trans_b);

enum { PB_NN_ACT_NONE = 0, PB_NN_ACT_RELU = 1, PB_NN_ACT_SIGMOID = 2, PB_NN_ACT_TANH = 3 };

/* act(x.w + b): x is n x in, w in x out, b 1 x out or NULL; one fused op. */
pb_nn_tensor *pb_nn_linear(pb_nn_tape *t, pb_nn_tensor *x, pb_nn_tensor *w, pb_nn_tensor *b,
                           int act);
pb_nn_tensor *pb_nn_transpose(pb_nn_tape *t, pb_nn_tensor *x);

/* --- elementwise.  b is broadcast: same shape as a, or 1 x cols (a bias row), or rows x 1 (a
 * per-row factor such as a mask column), or 1 x 1. */

pb_nn_tensor *pb_nn_add(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b);
pb_nn_tensor *pb_nn_sub(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b);
pb_nn_tensor *pb_nn_mul(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b);
pb_nn_tensor *pb_nn_scale(pb_nn_tape *t, pb_nn_tensor *x, float s);      /* s*x */
pb_nn_tensor *pb_nn_add_scalar(pb_nn_tape *t, pb_nn_tensor *x, float c); /* x+c */
pb_nn_tensor *pb_nn_relu(pb_nn_tape *t, pb_nn_tensor *x);                /* gradient 0 at x = 0 */
pb_nn_tensor *pb_nn_sigmoid(pb_nn_tape *t, pb_nn_tensor *x);
pb_nn_tensor *pb_nn_tanh(pb_nn_tape *t, pb_nn_tensor *x);
pb_nn_tensor *pb_nn_exp(pb_nn_tape *t, pb_nn_tensor *x);
pb_nn_tensor *pb_nn_log(pb_nn_tape *t, pb_nn_tensor *x); /* natural log; x > 0 */
/* Inverted dropout: each entry is kept with probability 1-rate and then scaled by 1/(1-rate),
 * else zeroed; draws one pb_rng_uniform per entry, row-major.  0 <= rate < 1; rate 0 returns x.
 * Applies whether or not the tape records gradients (the reference keeps it on in evaluation). */
pb_nn_tensor *pb_nn_dropout(pb_nn_tape *t, pb_nn_tensor *x, float rate, pb_rng *rng);

/* --- rows and columns */

/* Side by side (equal rows) / stacked (equal cols); xs is borrowed for the call only. */
pb_nn_tensor *pb_nn_concat_cols(pb_nn_tape *t, int n, pb_nn_tensor *const *xs);
pb_nn_tensor *pb_nn_concat_rows(pb_nn_tape *t, int n, pb_nn_tensor *const *xs);
/* Columns start .. start+count-1 of x (a copy). */
pb_nn_tensor *pb_nn_slice_cols(pb_nn_tape *t, pb_nn_tensor *x, int start, int count);
/* out[i] = x[idx[i]] for i < n (rows may repeat); the gradient is scatter-added back. */
pb_nn_tensor *pb_nn_gather_rows(pb_nn_tape *t, pb_nn_tensor *x, const int *idx, int n);
/* out (n_out x cols, zero-initialised) with out[idx[i]] += x[i] for every row i of x. */
pb_nn_tensor *pb_nn_scatter_add_rows(pb_nn_tape *t, pb_nn_tensor *x, const int *idx, int n_out);

/* A sparse 0/1 (or weighted) row-selection matrix in CSR form, e.g. the parents, ancestors or
 * sampled neighbours of each node.  Output row s aggregates the input rows
 * index[start[s]] .. index[start[s+1]-1], each multiplied by weight[k] when weight != NULL;
 * index NULL means the input rows start[s] .. start[s+1]-1 themselves (contiguous segments).
 * The struct is copied, its arrays are borrowed. */
typedef struct pb_nn_csr {
    int n_rows;          /* output rows */
    const int *start;    /* [n_rows+1], non-decreasing, start[0] = 0 */
    const int *index;    /* [start[n_rows]] input row numbers, or NULL */
    const float *weight; /* [start[n_rows]] or NULL (all 1) */
} pb_nn_csr;

enum { PB_NN_AGG_SUM = 0, PB_NN_AGG_MEAN = 1, PB_NN_AGG_MAX = 2, PB_NN_AGG_MIN = 3 };

/* n_rows x cols: per output row the sum, mean (sum / entry count), or elementwise max or min of
 * the selected (weighted) input rows; an empty row gives zeros.  Max and min pass the gradient
 * to the entry that won (the first one on ties). */
pb_nn_tensor *pb_nn_aggregate(pb_nn_tape *t, pb_nn_tensor *x, const pb_nn_csr *csr, int kind);
/* Mean over a sliding window of `window` consecutive rows, stride 1, no padding:
 * (rows - window + 1) x cols (TF AvgPool1D 'VALID' along the rows, as P-GNN uses it). */
pb_nn_tensor *pb_nn_avgpool_rows(pb_nn_tape *t, pb_nn_tensor *x, int window);

/* --- reductions and normalisations */

pb_nn_tensor *pb_nn_softmax(pb_nn_tape *t, pb_nn_tensor *x);     /* per row, max-shifted */
pb_nn_tensor *pb_nn_log_softmax(pb_nn_tape *t, pb_nn_tensor *x); /* per row, max-shifted */
/* Per row: (x - mean) / sqrt(var + eps) * gamma + beta, with the biased variance; gamma and beta
 * are 1 x cols or NULL (1 and 0). */
pb_nn_tensor *pb_nn_layer_norm(pb_nn_tape *t, pb_nn_tensor *x, pb_nn_tensor *gamma,
                               pb_nn_tensor *beta, float eps);
/* x / sqrt(max(sum x^2, eps)) per row (per_row != 0, GraphSAGE) or over the whole matrix
 * (per_row = 0, TF l2_normalize with axis=None); eps 1e-12 in the reference. */
pb_nn_tensor *pb_nn_l2_normalize(pb_nn_tape *t, pb_nn_tensor *x, int per_row, float eps);
pb_nn_tensor *pb_nn_sum(pb_nn_tape *t, pb_nn_tensor *x);     /* 1 x 1, all entries */
pb_nn_tensor *pb_nn_mean(pb_nn_tape *t, pb_nn_tensor *x);    /* 1 x 1, all entries */
pb_nn_tensor *pb_nn_colsum(pb_nn_tape *t, pb_nn_tensor *x);  /* 1 x cols: sum over rows */
pb_nn_tensor *pb_nn_colmean(pb_nn_tape *t, pb_nn_tensor *x); /* 1 x cols: mean over rows */
pb_nn_tensor *pb_nn_rowsum(pb_nn_tape *t, pb_nn_tensor *x);  /* rows x 1: sum over columns */
/* rows x 1: dot product of each row of a with the same row of b (rows x cols) or with b
 * (1 x cols): attention scores. */
pb_nn_tensor *pb_nn_rowdot(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b);

/* --- graph attention (GAT): edges are rows, grouped by destination node with a pb_nn_csr whose
 * output row s lists the incoming edges of node s */

/* x where x > 0, else slope * x (gradient slope at x = 0). */
pb_nn_tensor *pb_nn_leaky_relu(pb_nn_tape *t, pb_nn_tensor *x, float slope);
/* n x heads: y[i][h] = sum_j x[i][h*d + j] a[h*d + j], x n x (heads*d), a 1 x (heads*d); the
 * per-head attention logits of DGL's GATConv (el, er). */
pb_nn_tensor *pb_nn_head_dot(pb_nn_tape *t, pb_nn_tensor *x, pb_nn_tensor *a, int heads);
/* Same shape as x: a softmax over the rows of each CSR segment, column by column (DGL's
 * edge_softmax with one column per head).  Rows of x in no segment give 0; a row in two
 * segments is an error.  csr->weight is ignored. */
pb_nn_tensor *pb_nn_segment_softmax(pb_nn_tape *t, pb_nn_tensor *x, const pb_nn_csr *csr);
/* csr->n_rows x cols: out[s][h*d + j] = sum over the rows e of segment s of
 * alpha[e][h] m[e][h*d + j], with m E x cols, alpha E x heads and d = cols / heads: multi-head
 * attention-weighted message sum.  csr->weight is ignored. */
pb_nn_tensor *pb_nn_attend(pb_nn_tape *t, pb_nn_tensor *m, pb_nn_tensor *alpha,
                           const pb_nn_csr *csr);

/* --- fused ops written outside the core (a message passer's whole recursion, say) */

/* The reverse pass of a custom op: out->grad holds dL/dout; add dL/din[i] into in[i]->grad for
 * every input whose grad is not NULL.  ctx is the pointer given to pb_nn_custom(). */
typedef void (*pb_nn_backward_fn)(void *ctx, const pb_nn_tensor *out, pb_nn_tensor *const *in,
                                  int n_in);

/* A new rows x cols output of an op the caller computes: the caller writes out->data
 * (uninitialised) before any other op reads it.  When the tape records gradients and one of the
 * n_in inputs (copied list, each non-NULL) has one, out gets a gradient and backward(ctx, ...)
 * runs in the reverse pass; otherwise out->grad is NULL and backward never runs, so the caller can
 * skip saving what it would need.  ctx is borrowed until the tape is reset (pb_nn_alloc ties it
 * to the tape). */
pb_nn_tensor *pb_nn_custom(pb_nn_tape *t, int rows, int cols, int n_in, pb_nn_tensor *const *in,
                           pb_nn_backward_fn backward, void *ctx);
/* n bytes on the tape, 64-byte aligned, valid until the tape is reset; NULL (recorded as the
 * tape's error) when out of memory. */
void *pb_nn_alloc(pb_nn_tape *t, size_t n);
/* C = alpha op(A) op(B) + beta C on row-major float matrices (cblas_sgemm; op transposes when
 * trans_* != 0), for fused ops: the one GEMM of the core, so plugins need no BLAS of their own. */
void pb_nn_gemm(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
                const float *b, int ldb, float beta, float *c, int ldc);
/* pb_nn_gemm with the kernels tape t uses for its own ops (ABI 1.15): the NN core's fused kernels
 * on the products (or leading rows of them) where they give the loaded OpenBLAS's bits, OpenBLAS
 * elsewhere; the same results as pb_nn_gemm, faster on narrow products.  t may be NULL
 * (pb_nn_gemm) and is only read. */
void pb_nn_tape_gemm(const pb_nn_tape *t, int trans_a, int trans_b, int m, int n, int k,
                     float alpha, const float *a, int lda, const float *b, int ldb, float beta,
                     float *c, int ldc);

/* --- parameters */

/* A new empty parameter set; NULL when out of memory.  Caller frees with pb_nn_params_free. */
pb_nn_params *pb_nn_params_new(void);
void pb_nn_params_free(pb_nn_params *p);

enum {
    PB_NN_INIT_GLOROT = 0, /* U(-r, r), r = sqrt(6 / (rows + cols)), drawn row-major from rng */
    PB_NN_INIT_ZEROS = 1,
    PB_NN_INIT_ONES = 2
};

/* Adds a rows x cols tensor named `name` (unique in p; copied) initialised as `init` (rng is only
 * read for PB_NN_INIT_GLOROT) with a zero gradient; returns its id (>= 0, ids count up from 0 in
 * the order of adding) or PB_ERR.  Invalidates tensors pb_nn_param() made from p. */
int pb_nn_params_add(pb_nn_params *p, const char *name, int rows, int cols, int init, pb_rng *rng,
                     pb_error *err);
/* The id of the tensor named `name`, or -1. */
int pb_nn_params_find(const pb_nn_params *p, const char *name);
int pb_nn_params_count(const pb_nn_params *p);
/* Name (owned by p) and shape of tensor id. */
const char *pb_nn_params_name(const pb_nn_params *p, int id);
void pb_nn_params_shape(const pb_nn_params *p, int id, int *rows, int *cols);
/* All values (and gradients) are one contiguous array of pb_nn_params_size() floats, tensor id
 * at pb_nn_params_offset(id), in the order of adding.  Owned by p; moved by pb_nn_params_add. */
size_t pb_nn_params_size(const pb_nn_params *p);
size_t pb_nn_params_offset(const pb_nn_params *p, int id);
float *pb_nn_params_values(pb_nn_params *p);
float *pb_nn_params_grads(pb_nn_params *p);
void pb_nn_params_zero_grad(pb_nn_params *p);
/* Writes every tensor (name, shape, values) as JSON; the file appears complete or not at all. */
int pb_nn_params_save(const pb_nn_params *p, const char *path, pb_error *err);
/* Reads a file written by pb_nn_params_save into p, which must hold exactly the same names with
 * the same shapes (order free); on any mismatch p is left unchanged and the error names the file
 * and the tensor. */
int pb_nn_params_load(pb_nn_params *p, const char *path, pb_error *err);
/* Since ABI 1.10: the same with an Adam optimizer's state, so that one optimizer continues across
 * processes (TAG trains through a chain of runs with one Adam).  Saving with a (NULL, or never
 * stepped: as pb_nn_params_save) adds an "adam" section: the step count and hyper-parameters,
 * and per tensor its first and second moments as "adam_m_b64" / "adam_v_b64" (base64 of
 * little-endian float64s, exact).  Loading with a restores them into a when the file has the
 * section (*restored = 1; its beta1, beta2 and epsilon must be a's, else an error naming the
 * field) and leaves a as it is when the file has none (*restored = 0); a NULL a ignores the
 * section.  Files without the section load as before, and older readers ignore it. */
typedef struct pb_nn_adam pb_nn_adam;
int pb_nn_params_save_adam(const pb_nn_params *p, const pb_nn_adam *a, const char *path,
                           pb_error *err);
int pb_nn_params_load_adam(pb_nn_params *p, pb_nn_adam *a, const char *path, int *restored,
                           pb_error *err);

/* A fully connected network, the reference's FNN(in, hidden[], out): linear layers with ReLU
 * between them and act_out after the last.  Plain data; the tensors live in a pb_nn_params. */
#define PB_NN_MLP_MAX_LAYERS 8
typedef struct pb_nn_mlp {
    int n_layers;
    int act_out;
    int weight[PB_NN_MLP_MAX_LAYERS]; /* parameter ids: "<prefix>/w<i>", Glorot */
    int bias[PB_NN_MLP_MAX_LAYERS];   /* parameter ids: "<prefix>/b<i>", zeros, 1 x out */
} pb_nn_mlp;

/* Adds the layers sizes[0] -> sizes[1] -> ... -> sizes[n_sizes-1] (2 <= n_sizes <=
 * PB_NN_MLP_MAX_LAYERS + 1) to p and describes them in *m.  On error p keeps the layers added
 * before it. */
int pb_nn_mlp_init(pb_nn_mlp *m, pb_nn_params *p, const char *prefix, int n_sizes, const int *sizes,
                   int act_out, pb_rng *rng, pb_error *err);
/* Records the network applied to every row of x (n x sizes[0]) -> n x sizes[last]. */
pb_nn_tensor *pb_nn_mlp_forward(pb_nn_tape *t, pb_nn_params *p, const pb_nn_mlp *m,
                                pb_nn_tensor *x);

/* Recurrent cells over a batch of n rows; the weights of both act on [x, h] (x first), and
 * initialise as U(-r, r), r = 1/sqrt(in + hidden), drawn row-major from rng. */

/* An LSTM cell with a forget gate: z = [x, h].W + b split into four hidden-wide blocks in the
 * order i, f, g, o; c' = sigmoid(f) * c + sigmoid(i) * tanh(g), h' = sigmoid(o) * tanh(c').
 * W is (in + hidden) x 4 hidden ("<prefix>/w"), b is 1 x 4 hidden ("<prefix>/b"), zeros except
 * 1 in the forget block. */
typedef struct pb_nn_lstm {
    int in, hidden;
    int weight, bias; /* parameter ids */
} pb_nn_lstm;

int pb_nn_lstm_init(pb_nn_lstm *m, pb_nn_params *p, const char *prefix, int in, int hidden,
                    pb_rng *rng, pb_error *err);
/* One step: x is n x in, h and c are n x hidden; *h_out and *c_out receive h' and c' (NULL,
 * with the tape's error set, when an op failed). */
void pb_nn_lstm_step(pb_nn_tape *t, pb_nn_params *p, const pb_nn_lstm *m, pb_nn_tensor *x,
                     pb_nn_tensor *h, pb_nn_tensor *c, pb_nn_tensor **h_out, pb_nn_tensor **c_out);
/* The arithmetic of a step (ABI 1.13): PB_NN_MATH_LIBM, pb_nn_lstm_step's (the composed cell's:
 * OpenBLAS products, libm's expf and tanhf); PB_NN_MATH_FAST, the NN core's own products and
 * vectorised activations (within 2.5 ulp of the exact values), the same bits on every processor
 * (README, "HeterPS: RL-LSTM scheduling in under a second"). */
enum { PB_NN_MATH_LIBM = 0, PB_NN_MATH_FAST = 1 };
void pb_nn_lstm_step_math(pb_nn_tape *t, pb_nn_params *p, const pb_nn_lstm *m, int math,
                          pb_nn_tensor *x, pb_nn_tensor *h, pb_nn_tensor *c, pb_nn_tensor **h_out,
                          pb_nn_tensor **c_out);

/* An Elman cell: h' = tanh([x, h].W + b), W (in + hidden) x hidden ("<prefix>/w"), b 1 x hidden
 * ("<prefix>/b", zeros). */
typedef struct pb_nn_elman {
    int in, hidden;
    int weight, bias; /* parameter ids */
} pb_nn_elman;

int pb_nn_elman_init(pb_nn_elman *m, pb_nn_params *p, const char *prefix, int in, int hidden,
                     pb_rng *rng, pb_error *err);
/* One step: x is n x in, h is n x hidden; returns h'. */
pb_nn_tensor *pb_nn_elman_step(pb_nn_tape *t, pb_nn_params *p, const pb_nn_elman *m,
                               pb_nn_tensor *x, pb_nn_tensor *h);

/* --- attention and graph layers (GDP, specs/gdp.md §3-§5) */

/* A copy of x's values with no gradient: the cached segment memory of Transformer-XL
 * ("gradient flows disabled"). */
pb_nn_tensor *pb_nn_stop_gradient(pb_nn_tape *t, pb_nn_tensor *x);

/* Scaled dot-product attention of n_head heads: q is L x (n_head d), k and v are (m+L) x (n_head
 * d) (m rows of memory first, then the L rows of the segment), each head the d consecutive
 * columns h d .. h d + d - 1.  Per head softmax(q_h k_h^T / sqrt(d) + mask) v_h, the heads side
 * by side (L x n_head d).  mem_rows >= 0 applies Transformer-XL's causal mask (query i may see
 * key j when j <= i + mem_rows); mem_rows < 0 masks nothing. */
pb_nn_tensor *pb_nn_attention(pb_nn_tape *t, pb_nn_tensor *q, pb_nn_tensor *k, pb_nn_tensor *v,
                              int n_head, int mem_rows);

/* x (.) gate, the feature conditioning of GDP's superposition (Eq. 5: the input of a dense layer
 * multiplied elementwise by a context); gate is x's shape or 1 x cols (one context for every
 * row), NULL returns x. */
pb_nn_tensor *pb_nn_superpose(pb_nn_tape *t, pb_nn_tensor *x, pb_nn_tensor *gate);

/* One Transformer-XL layer without positional terms (kimiyoung/transformer-xl attn_type 2 with
 * the positional embedding left out, post-LN): Q = x W_q, [K|V] = [mem; x] W_kv (no biases),
 * Y = LN(x + attention W_o), Z = LN(Y + ReLU(Y W_1 + b_1) W_2 + b_2).  With superposition every
 * dense layer's input is multiplied by the gate c (specs/gdp.md §5): c itself for the d_model
 * wide inputs, c P_o and c P_2 (learned, no bias) for the n_head d_head and d_inner wide ones;
 * sp_ff_only limits it to W_1 and W_2. */
typedef struct pb_nn_trf {
    int d_model, n_head, d_head, d_inner;
    float ln_eps;
    int superposition, sp_ff_only;
    int wq, wkv, wo, ln1_g, ln1_b, w1, b1, w2, b2, ln2_g, ln2_b; /* parameter ids */
    int sp_o, sp_2; /* projections of the gate, -1 without superposition */
} pb_nn_trf;

/* Registers "<prefix>/wq", "/wkv", "/wo", "/ln1_g", "/ln1_b", "/w1", "/b1", "/w2", "/b2",
 * "/ln2_g", "/ln2_b" (and "/sp_o", "/sp_2" with superposition), Glorot weights from rng in that
 * order, layer-norm gains 1, biases 0. */
int pb_nn_trf_init(pb_nn_trf *m, pb_nn_params *p, const char *prefix, int d_model, int n_head,
                   int d_head, int d_inner, float ln_eps, int superposition, int sp_ff_only,
                   pb_rng *rng, pb_error *err);
/* One segment: x is L x d_model, mem m x d_model (NULL when m = 0; give it through
 * pb_nn_stop_gradient), causal as in pb_nn_attention.  gate: NULL (no conditioning), L x
 * d_model (per row) or 1 x d_model (per graph); gate_mem: the gate of the memory rows (m x
 * d_model, NULL when mem is NULL or gate has one row). */
pb_nn_tensor *pb_nn_trf_forward(pb_nn_tape *t, pb_nn_params *p, const pb_nn_trf *m, pb_nn_tensor *x,
                                pb_nn_tensor *mem, int causal, pb_nn_tensor *gate,
                                pb_nn_tensor *gate_mem);

/* GDP's GraphSAGE layer (specs/gdp.md §3.1, Eq. 2-3): pooled = elementwise max over each node's
 * neighbours (nbr, rows of x) of pool_act(x_u W_pool + b_pool), zeros for a node without any;
 * out = act([x, pooled] W_comb + b_comb).  pool_act is sigmoid after init (GDP; GraphSAGE's own
 * is ReLU): set the field to change it. */
typedef struct pb_nn_sage_pool {
    int in, out, act, pool_act;
    int w_pool, b_pool, w_comb, b_comb; /* parameter ids */
} pb_nn_sage_pool;

/* Registers "<prefix>/w_pool" (in x out), "/b_pool", "/w_comb" ((in+out) x out), "/b_comb". */
int pb_nn_sage_pool_init(pb_nn_sage_pool *m, pb_nn_params *p, const char *prefix, int in, int out,
                         int act, pb_rng *rng, pb_error *err);
pb_nn_tensor *pb_nn_sage_pool_forward(pb_nn_tape *t, pb_nn_params *p, const pb_nn_sage_pool *m,
                                      pb_nn_tensor *x, const pb_nn_csr *nbr);

/* --- optimizers (they read the gradients in p and update its values) */

/* Adam in TensorFlow's formulation: at step k, m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2,
 * lr_k = lr sqrt(1-b2^k) / (1-b1^k), theta -= lr_k m / (sqrt(v) + epsilon).  TF 1 defaults:
 * 0.9, 0.999, 1e-8.  Every tensor of p is updated at every step (a zero gradient still moves a
 * tensor by its momentum).  The moments are kept in double.  NULL when out of memory; caller
 * frees. */
typedef struct pb_nn_adam pb_nn_adam;
pb_nn_adam *pb_nn_adam_new(double beta1, double beta2, double epsilon);
void pb_nn_adam_free(pb_nn_adam *a);
/* One step with learning rate lr (the caller applies any schedule).  Fails when p's size changed
 * since the first step. */
int pb_nn_adam_step(pb_nn_adam *a, pb_nn_params *p, double lr, pb_error *err);
long long pb_nn_adam_steps(const pb_nn_adam *a); /* steps taken so far */
/* theta -= lr g. */
void pb_nn_sgd_step(pb_nn_params *p, double lr);
/* Returns the global L2 norm of p's gradients (in double) and, when max_norm > 0 and the norm is
 * finite and above max_norm, scales them by max_norm / norm (TF clip_by_global_norm). */
double pb_nn_clip_grad_norm(pb_nn_params *p, double max_norm);
/* Clips each tensor's gradient on its own to L2 norm max_norm (when finite and above): Keras
 * `clipnorm` in TF 2.1, which TAG's training uses, unlike the global norm above. */
void pb_nn_clip_each_norm(pb_nn_params *p, double max_norm);

#ifdef __cplusplus
}
#endif

#endif /* PLACEBENCH_NN_H */
