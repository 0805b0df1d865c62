/* nn_internal.h — the tape's records, arenas and helpers shared by the nn_*.c files. */
#ifndef PB_NN_INTERNAL_H
#define PB_NN_INTERNAL_H

#include "placebench.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* One block of an arena. */
typedef struct nn_chunk {
    unsigned char *base;
    size_t size;
    size_t used;
} nn_chunk;

/* Bump allocator made of chunks that are never moved, so pointers stay valid until a reset. */
typedef struct nn_arena {
    nn_chunk *chunks;
    int n_chunks;
    int cap_chunks;
    int cur; /* chunk being filled */
} nn_arena;

/* Arena allocations (and so tensor values) start on this boundary. */
#define NN_ALIGN 64

typedef struct nn_param_info {
    char *name;
    int rows;
    int cols;
    size_t offset;
} nn_param_info;

/* Values and gradients are two flat arrays so optimizers, clipping and gradient snapshots are
 * single loops over contiguous memory. */
struct pb_nn_params {
    nn_param_info *info;
    int n;
    int cap;
    float *values;
    float *grads;
    size_t size;
    size_t cap_size;
};

/* Adam's state (nn_optim.c; saved and restored with the parameters by nn_params.c).  The moments
 * are kept in double: the update is then the formula evaluated exactly and rounded once into the
 * float parameter.  m and v are NULL until the first step or a restore; they hold n values in the
 * order of the parameter set's flat array. */
struct pb_nn_adam {
    double beta1;
    double beta2;
    double epsilon;
    long long t;
    size_t n;
    double *m;
    double *v;
};

typedef struct nn_record nn_record;
typedef void (*nn_backward_fn)(const nn_record *r);

/* A transposed copy of rows [row0, row0 + rows) of a matrix with `cols` columns (cols x rows),
 * shared by the ops of one tape that multiply by the same weights' transpose in their backward
 * pass; made at most once per backward pass (nn_tape_transposed). */
typedef struct nn_transposed {
    const float *src;
    int row0, rows, cols;
    float *data;
    unsigned long pass; /* the backward pass data was made in (0: not yet) */
    struct nn_transposed *next;
} nn_transposed;

/* What backward needs to know about one recorded op.  Fields not used by an op stay zero. */
struct nn_record {
    nn_backward_fn backward;
    pb_nn_tensor *out;
    pb_nn_tensor *in[3];
    pb_nn_tensor **list; /* concat inputs (on the tape) */
    int n_list;
    const int *idx; /* gather/scatter indices or CSR index (borrowed) */
    const int *start;
    const float *weight;
    void *aux;                /* op-specific values saved by the forward pass (on the tape) */
    float *tmp;               /* scratch of the backward pass (on the tape's gradient arena) */
    pb_nn_backward_fn custom; /* pb_nn_custom: the caller's backward, called with aux */
    double flop;              /* dense-product FLOPs of the backward function (pb_nn_tape_flop) */
    float f;
    int i[3];
};

struct pb_nn_tape {
    nn_arena data; /* tensor structs, values, saved auxiliary values */
    nn_arena grad; /* gradients of tape tensors and backward scratch: zeroed by each backward */
    nn_record *rec;
    size_t n_rec;
    size_t cap_rec;
    int record_grad;
    int failed;
    double flop; /* pb_nn_tape_flop */
    char msg[sizeof(((pb_error *)0)->msg)];
    nn_transposed *transposed; /* on the data arena; emptied by pb_nn_tape_reset */
    unsigned long passes;      /* backward passes run */
    int own_gemm; /* the fused kernels give this OpenBLAS's bits (nn_linalg_own_gemm_ok) */
};

/* The widest vector instruction set of this processor, asked at run time (nn_cpu.c); the
 * values are ordered, a larger one including the smaller ones' instructions. */
enum { NN_ISA_PORTABLE = 0, NN_ISA_AVX2 = 1, NN_ISA_AVX512 = 2 };
int nn_cpu_isa(void);
const char *nn_cpu_isa_name(int isa);
/* The best FMA rate of one core in GFLOP/s with isa's instructions (independent multiply-add
 * chains, CPU time of the calling thread, about `seconds` spent); 0 when the processor lacks
 * isa. */
double nn_cpu_peak_gflops(int isa, double seconds);

/* y (n x out) = x (n x in) W (in x out) + b (b may be NULL), then ReLU when relu != 0, in one
 * pass (nn_fused.c), with the widest of isa and what the processor has; the same bits for
 * every isa, and as OpenBLAS's Haswell path computes them. */
/* pb_nn_linear takes the fused kernel for layers of at most this many rows (one to three
 * placement steps), where it is 2.5-4x faster than OpenBLAS's call overhead and packing
 * (README, "Placeto at the machine's limit") and gives OpenBLAS's bits; OpenBLAS for more rows,
 * where its kernel is faster and sums in another order. */
#define NN_FUSED_MAX_ROWS 3
void nn_fused_linear(int isa, int n, int in, int out, const float *x, const float *w,
                     const float *b, int relu, float *y);
/* The same with only the nk inputs ks[0] < ks[1] < ... (NULL: all in): the others must be 0
 * in every row, and leaving them out gives the same bits (finite weights). */
void nn_fused_linear_cols(int isa, int n, int in, int out, const float *x, const float *w,
                          const float *b, int relu, float *y, const int *ks, int nk);

/* The gradients of a dense layer's product for few rows (nn_fused.c), accumulated: dw (in x
 * out) += x^T dz with x n x in and dz n x out, for n <= NN_FUSED_WGRAD_MAX_ROWS; dx (n x in) +=
 * dz W^T, for n <= NN_FUSED_MAX_ROWS.  The same bits for every isa, and as OpenBLAS's Haswell
 * sgemm computes them for those row counts (from 8 rows for dW and 4 rows for dx on OpenBLAS
 * sums in another order).  pb_nn_linear's backward does not use them: measured per shape
 * (PB_BENCH_FUSED=1 test_nn_fused) they were slower than OpenBLAS or within noise on the
 * placers' layers; they stay as the checked statement of OpenBLAS's order and for that
 * comparison. */
#define NN_FUSED_WGRAD_MAX_ROWS 7
void nn_fused_weight_grad(int isa, int n, int in, int out, const float *x, const float *dz,
                          float *dw);
/* The same for the ni rows is[0] < is[1] < ... of dw only (NULL: all in); with x's other
 * columns 0 in every row, the same bits as nn_fused_weight_grad. */
void nn_fused_weight_grad_rows(int isa, int n, int in, int out, const float *x, const float *dz,
                               float *dw, const int *is, int ni);
void nn_fused_input_grad(int isa, int n, int in, int out, const float *dz, const float *w,
                         float *dx);
/* C (m x n, ldc) += op(A) B over k terms (nn_fused.c), op(A) = A (m x k, lda) or, trans_a != 0,
 * A^T (A k x m); B k x n (ldb): each entry's sum from +0 by fused multiply-adds in order of the
 * terms, then added to C.  The same bits for every isa; tiles of up to 16 rows x 16 columns
 * (AVX-512) keep the sums in registers. */
void nn_fused_gemm_acc(int isa, int trans_a, int m, int n, int k, const float *a, int lda,
                       const float *b, int ldb, float *c, int ldc);
/* Whether the fused kernels, cut as nn_linalg.c describes, give the loaded OpenBLAS's bits
 * (its Haswell kernels, checked on a few products); pb_nn_tape_new asks once per tape. */
int nn_linalg_own_gemm_ok(void);

/* Reproducible fast activations (nn_fastmath.c): the same bits with every isa (the widest of
 * isa and what the processor has runs), exp within 1 ulp of the correctly rounded value on
 * [-87, 88] (clamped outside), sigmoid and tanh within 2 ulp (README, "HeterPS: RL-LSTM
 * scheduling in under a second"). */
enum { NN_FM_EXP = 0, NN_FM_SIGMOID = 1, NN_FM_TANH = 2 };
/* y[k] = fn(x[k]) for k < n. */
void nn_fast_map(int isa, int fn, const float *x, float *y, size_t n);
/* One row of an LSTM cell of n units from z (the i, f, g, o pre-activation blocks, 4n) and c:
 * gates (4n: sigmoid i, sigmoid f, tanh g, sigmoid o), c' = f c + i g (one FMA), tanh(c') and
 * h' = o tanh(c'). */
void nn_fast_lstm_row(int isa, int n, const float *z, const float *c, float *gates, float *c_out,
                      float *tc, float *h);
/* Its reverse for one row: dc_out += dh o (1 - tanh(c')^2), then dz (4n, written) of the four
 * blocks and dc += f dc_out (dc may be NULL: c wants no gradient). */
void nn_fast_lstm_grad_row(int isa, int n, const float *gates, const float *tc, const float *c,
                           const float *dh, float *dc_out, float *dc, float *dz);

/* During a forward pass: the shared transposed copy of rows [row0, row0 + rows) of src (cols
 * columns), allocated on the tape (NULL with the tape's error set when out of memory).  During
 * the backward pass: nn_transposed_data fills it (once per pass; the weights do not change
 * during one) and returns it. */
nn_transposed *nn_tape_transposed(pb_nn_tape *t, const float *src, int row0, int rows, int cols);
const float *nn_transposed_data(const pb_nn_tape *t, nn_transposed *tr);

/* Records the first error of a pass (printf-style); always returns NULL. */
void *nn_tape_fail(pb_nn_tape *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* 1 when t is usable and the first n of a, b, c are non-NULL; else records why and returns 0. */
static inline int nn_tape_inputs_ok(pb_nn_tape *t, const char *op, int n, const pb_nn_tensor *a,
                                    const pb_nn_tensor *b, const pb_nn_tensor *c)
{
    if (!t || t->failed)
        return 0;
    const pb_nn_tensor *in[3] = {a, b, c};
    for (int i = 0; i < n && i < 3; i++)
        if (!in[i]) {
            nn_tape_fail(t, "%s: input %d is NULL", op, i + 1);
            return 0;
        }
    return 1;
}

/* 1 when the tape records gradients and one of the (possibly NULL) inputs has a gradient. */
static inline int nn_tape_wants_grad(const pb_nn_tape *t, const pb_nn_tensor *a,
                                     const pb_nn_tensor *b, const pb_nn_tensor *c)
{
    return t->record_grad && ((a && a->grad) || (b && b->grad) || (c && c->grad));
}

/* A new rows x cols tensor with uninitialised values and, when with_grad, a gradient. */
pb_nn_tensor *nn_tape_tensor(pb_nn_tape *t, int rows, int cols, int with_grad);
/* Scratch memory valid until the reset: `n` bytes on the value arena, or floats on the gradient
 * arena (zeroed at the start of every backward). */
void *nn_tape_alloc(pb_nn_tape *t, size_t n);
float *nn_tape_grad_scratch(pb_nn_tape *t, size_t n_floats);
/* Appends a zeroed record for `out`; NULL on failure (recorded). */
nn_record *nn_tape_record(pb_nn_tape *t, nn_backward_fn backward, pb_nn_tensor *out);

/* PB_OK when csr is well formed for an input of x_rows rows (start non-decreasing from 0, every
 * index in range); else records why, naming op, and returns PB_ERR (nn_rows.c). */
int nn_check_csr(pb_nn_tape *t, const char *op, const pb_nn_csr *csr, int x_rows);

/* The logistic function as every sigmoid of the core computes it (no overflow for large |x|). */
static inline float nn_elem_sigmoid(float x)
{
    if (x >= 0.0f)
        return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}
/* Applies activation act (PB_NN_ACT_*) in place. */
void nn_elem_activate(int act, float *v, size_t n);
/* dx += dy * act'(.) expressed through the activation's output y. */
void nn_elem_act_grad(int act, const float *y, const float *dy, float *dx, size_t n);
/* y[0..n) += a * x[0..n) */
void nn_elem_axpy(float *y, float a, const float *x, size_t n);

/* Hot loops work on 4 floats at a time with the compiler's generic vectors (16 bytes: SSE2 on
 * x86-64, NEON on arm64, no instruction-set flags needed).  That gives vector code at -O2 too:
 * the default build is RelWithDebInfo, where GCC 12 does not vectorize loops of unknown length
 * by itself.  Other compilers take the scalar loops that follow every vector loop. */
#if defined(__GNUC__)
#define NN_HAVE_V4 1
typedef float nn_v4 __attribute__((vector_size(16)));
typedef int nn_v4i __attribute__((vector_size(16)));

static inline nn_v4 nn_v4_load(const float *p)
{
    nn_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void nn_v4_store(float *p, nn_v4 v)
{
    memcpy(p, &v, sizeof v);
}

/* x where mask_src > 0, else +0 (NaN in mask_src counts as not positive). */
static inline nn_v4 nn_v4_where_positive(nn_v4 mask_src, nn_v4 x)
{
    nn_v4 zero = {0};
    return (nn_v4)((nn_v4i)x & (nn_v4i)(mask_src > zero));
}
#else
#define NN_HAVE_V4 0
#endif

/* Number of entries of x as a size_t. */
static inline size_t nn_numel(const pb_nn_tensor *x)
{
    return (size_t)x->rows * (size_t)x->cols;
}

/* Sets the number of threads of the BLAS library (nn_linalg.c).  Worker processes use 1: they
 * are the parallelism. */
void nn_blas_threads(int n);

#endif
