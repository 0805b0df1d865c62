/* test_nn.c — the NN core: forward values by hand, a finite-difference gradient check of every
 * op, Adam against a hand-computed example, clipping, save/load, determinism, tape behaviour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn/nn_internal.h"
#include "placebench.h"

#define E1 2.718281828459045

/* ------------------------------------------------------------------ helpers */

static pb_nn_tensor *cst(pb_nn_tape *t, int rows, int cols, const float *v)
{
    pb_nn_tensor *x = pb_nn_constant(t, rows, cols, v);
    assert_non_null(x);
    return x;
}

static void expect_values(const pb_nn_tensor *y, int rows, int cols, const double *want, double tol)
{
    assert_non_null(y);
    assert_int_equal(y->rows, rows);
    assert_int_equal(y->cols, cols);
    for (int k = 0; k < rows * cols; k++) {
        if (fabs(y->data[k] - want[k]) > tol)
            fail_msg("entry %d: got %.9g, expected %.9g", k, (double)y->data[k], want[k]);
    }
}

static void expect_status_ok(pb_nn_tape *t)
{
    pb_error err = {{0}};
    if (pb_nn_tape_status(t, &err) != PB_OK)
        fail_msg("tape error: %s", err.msg);
}

/* ------------------------------------------------------------------ forward values by hand */

static void test_forward_matmul(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
    pb_nn_tensor *A = cst(t, 2, 2, a), *B = cst(t, 2, 2, b);
    expect_values(pb_nn_matmul(t, A, B), 2, 2, (double[]){19, 22, 43, 50}, 0);
    expect_values(pb_nn_matmul_t(t, A, 0, B, 1), 2, 2, (double[]){17, 23, 39, 53}, 0);
    expect_values(pb_nn_matmul_t(t, A, 1, B, 0), 2, 2, (double[]){26, 30, 38, 44}, 0);
    expect_values(pb_nn_matmul_t(t, A, 1, B, 1), 2, 2, (double[]){23, 31, 34, 46}, 0);
    expect_values(pb_nn_transpose(t, cst(t, 2, 3, (float[]){1, 2, 3, 4, 5, 6})), 3, 2,
                  (double[]){1, 4, 2, 5, 3, 6}, 0);
    /* x = [1, -2], W = [[1, 2], [3, 4]], b = [0.5, 10]: xW = [-5, -6] -> +b = [-4.5, 4]. */
    pb_nn_tensor *x = cst(t, 1, 2, (float[]){1, -2}), *w = cst(t, 2, 2, (float[]){1, 2, 3, 4});
    pb_nn_tensor *bias = cst(t, 1, 2, (float[]){0.5f, 10});
    expect_values(pb_nn_linear(t, x, w, bias, PB_NN_ACT_NONE), 1, 2, (double[]){-4.5, 4}, 0);
    expect_values(pb_nn_linear(t, x, w, bias, PB_NN_ACT_RELU), 1, 2, (double[]){0, 4}, 0);
    expect_values(pb_nn_linear(t, x, w, NULL, PB_NN_ACT_TANH), 1, 2, (double[]){tanh(-5), tanh(-6)},
                  1e-6);
    expect_values(pb_nn_linear(t, x, w, bias, PB_NN_ACT_SIGMOID), 1, 2,
                  (double[]){1 / (1 + exp(4.5)), 1 / (1 + exp(-4))}, 1e-6);
    expect_status_ok(t);
    pb_nn_tape_free(t);
}

/* OpenBLAS picks its kernels by size and transposition: besides the 2x2 products above, check
 * every transpose combination at a medium size against a double-precision triple loop. */
static void test_forward_matmul_blas(void **state)
{
    (void)state;
    enum { M = 33, K = 40, N = 17 };
    pb_rng rng;
    pb_rng_seed(&rng, 3);
    float a[M * K], b[K * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(2 * pb_rng_uniform(&rng) - 1);
    for (int i = 0; i < K * N; i++)
        b[i] = (float)(2 * pb_rng_uniform(&rng) - 1);
    for (int ta = 0; ta < 2; ta++) {
        for (int tb = 0; tb < 2; tb++) {
            pb_nn_tape *t = pb_nn_tape_new();
            /* Stored shapes so that op(A) is M x K and op(B) is K x N. */
            pb_nn_tensor *A = ta ? cst(t, K, M, a) : cst(t, M, K, a);
            pb_nn_tensor *B = tb ? cst(t, N, K, b) : cst(t, K, N, b);
            pb_nn_tensor *C = pb_nn_matmul_t(t, A, ta, B, tb);
            double want[M * N];
            for (int i = 0; i < M; i++) {
                for (int j = 0; j < N; j++) {
                    double s = 0;
                    for (int p = 0; p < K; p++)
                        s += (double)(ta ? a[p * M + i] : a[i * K + p]) *
                             (tb ? b[j * K + p] : b[p * N + j]);
                    want[i * N + j] = s;
                }
            }
            /* 40 float products of magnitude <= 1: rounding stays far below 1e-4. */
            expect_values(C, M, N, want, 1e-4);
            pb_nn_tape_free(t);
        }
    }
}

static void test_forward_elementwise(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tensor *a = cst(t, 2, 2, (float[]){1, 2, 3, 4});
    expect_values(pb_nn_add(t, a, cst(t, 2, 2, (float[]){10, 20, 30, 40})), 2, 2,
                  (double[]){11, 22, 33, 44}, 0);
    expect_values(pb_nn_add(t, a, cst(t, 1, 2, (float[]){10, 20})), 2, 2,
                  (double[]){11, 22, 13, 24}, 0);
    expect_values(pb_nn_sub(t, a, cst(t, 2, 1, (float[]){1, 2})), 2, 2, (double[]){0, 1, 1, 2}, 0);
    expect_values(pb_nn_mul(t, a, cst(t, 1, 1, (float[]){-2})), 2, 2, (double[]){-2, -4, -6, -8},
                  0);
    expect_values(pb_nn_mul(t, a, cst(t, 2, 1, (float[]){0, 1})), 2, 2, (double[]){0, 0, 3, 4}, 0);
    expect_values(pb_nn_scale(t, a, 0.5f), 2, 2, (double[]){0.5, 1, 1.5, 2}, 0);
    expect_values(pb_nn_add_scalar(t, a, -1), 2, 2, (double[]){0, 1, 2, 3}, 0);
    pb_nn_tensor *x = cst(t, 1, 3, (float[]){-1, 0, 2});
    expect_values(pb_nn_relu(t, x), 1, 3, (double[]){0, 0, 2}, 0);
    expect_values(pb_nn_sigmoid(t, x), 1, 3, (double[]){1 / (1 + E1), 0.5, 1 / (1 + exp(-2))},
                  1e-7);
    expect_values(pb_nn_tanh(t, x), 1, 3, (double[]){tanh(-1), 0, tanh(2)}, 1e-7);
    expect_values(pb_nn_exp(t, x), 1, 3, (double[]){exp(-1), 1, exp(2)}, 1e-6);
    expect_values(pb_nn_log(t, a), 2, 2, (double[]){0, log(2), log(3), log(4)}, 1e-7);
    /* Far outside expf's range the sigmoid saturates instead of producing NaN. */
    expect_values(pb_nn_sigmoid(t, cst(t, 1, 2, (float[]){-1000, 1000})), 1, 2, (double[]){0, 1},
                  0);
    expect_status_ok(t);
    pb_nn_tape_free(t);
}

static void test_forward_rows(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tensor *a = cst(t, 2, 2, (float[]){1, 2, 3, 4}), *b = cst(t, 2, 1, (float[]){5, 6});
    pb_nn_tensor *ab[] = {a, b}, *aa[] = {a, a};
    expect_values(pb_nn_concat_cols(t, 2, ab), 2, 3, (double[]){1, 2, 5, 3, 4, 6}, 0);
    expect_values(pb_nn_concat_rows(t, 2, aa), 4, 2, (double[]){1, 2, 3, 4, 1, 2, 3, 4}, 0);
    expect_values(pb_nn_slice_cols(t, a, 1, 1), 2, 1, (double[]){2, 4}, 0);
    const int gi[] = {1, 1, 0};
    expect_values(pb_nn_gather_rows(t, a, gi, 3), 3, 2, (double[]){3, 4, 3, 4, 1, 2}, 0);
    const int si[] = {2, 0};
    expect_values(pb_nn_scatter_add_rows(t, a, si, 3), 3, 2, (double[]){3, 4, 0, 0, 1, 2}, 0);
    expect_values(pb_nn_rows(t, a, 1, 1), 1, 2, (double[]){3, 4}, 0);
    expect_values(pb_nn_reshape(t, a, 1, 4), 1, 4, (double[]){1, 2, 3, 4}, 0);
    /* Window 2 over rows [1,2],[3,4],[5,7]: [2,3],[4,5.5]. */
    pb_nn_tensor *p = cst(t, 3, 2, (float[]){1, 2, 3, 4, 5, 7});
    expect_values(pb_nn_avgpool_rows(t, p, 2), 2, 2, (double[]){2, 3, 4, 5.5}, 0);
    pb_nn_tensor *buf = pb_nn_buffer(t, 3, 2);
    pb_nn_assign(t, pb_nn_rows(t, buf, 1, 2), pb_nn_rows(t, p, 0, 2));
    expect_values(buf, 3, 2, (double[]){0, 0, 1, 2, 3, 4}, 0);
    expect_status_ok(t);
    pb_nn_tape_free(t);
}

/* Rows of x: r0 = [1, -1], r1 = [3, 0], r2 = [2, 5].  Segments: {r0, r2, r1} weighted
 * {1, 2, -1}, {} and {r1, r1}. */
static void test_forward_aggregate(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tensor *x = cst(t, 3, 2, (float[]){1, -1, 3, 0, 2, 5});
    const int start[] = {0, 3, 3, 5}, index[] = {0, 2, 1, 1, 1};
    const float weight[] = {1, 2, -1, 1, 1};
    pb_nn_csr csr = {3, start, index, weight};
    /* weighted rows: [1,-1], [4,10], [-3,0]; then [3,0], [3,0]. */
    expect_values(pb_nn_aggregate(t, x, &csr, PB_NN_AGG_SUM), 3, 2, (double[]){2, 9, 0, 0, 6, 0},
                  0);
    expect_values(pb_nn_aggregate(t, x, &csr, PB_NN_AGG_MEAN), 3, 2,
                  (double[]){2.0 / 3, 3, 0, 0, 3, 0}, 1e-7);
    expect_values(pb_nn_aggregate(t, x, &csr, PB_NN_AGG_MAX), 3, 2, (double[]){4, 10, 0, 0, 3, 0},
                  0);
    expect_values(pb_nn_aggregate(t, x, &csr, PB_NN_AGG_MIN), 3, 2, (double[]){-3, -1, 0, 0, 3, 0},
                  0);
    /* Contiguous segments without an index: rows {r0, r1} and {r2}. */
    const int seg[] = {0, 2, 3};
    pb_nn_csr contiguous = {2, seg, NULL, NULL};
    expect_values(pb_nn_aggregate(t, x, &contiguous, PB_NN_AGG_MAX), 2, 2, (double[]){3, 0, 2, 5},
                  0);
    expect_status_ok(t);
    pb_nn_tape_free(t);
}

/* Ties of max and min send the whole gradient to the first entry listed. */
static void test_aggregate_tie_gradient(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_error err;
    int x = pb_nn_params_add(p, "x", 3, 1, PB_NN_INIT_ONES, NULL, &err);
    const int start[] = {0, 3}, index[] = {2, 0, 1};
    pb_nn_csr csr = {1, start, index, NULL};
    for (int kind = PB_NN_AGG_MAX; kind <= PB_NN_AGG_MIN; kind++) {
        pb_nn_tape *t = pb_nn_tape_new();
        pb_nn_params_zero_grad(p);
        pb_nn_tensor *y = pb_nn_aggregate(t, pb_nn_param(t, p, x), &csr, kind);
        assert_int_equal(pb_nn_backward(t, y, NULL, &err), PB_OK);
        const float want[] = {0, 0, 1};
        assert_memory_equal(pb_nn_params_grads(p), want, sizeof want);
        pb_nn_tape_free(t);
    }
    pb_nn_params_free(p);
}

static void test_forward_reduce(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    /* Logits 1000 and 1001: without the max shift exp overflows.  log-softmax = -log(1+e) and
     * 1-log(1+e) shifted: [-1.31326169, -0.31326169]. */
    pb_nn_tensor *big = cst(t, 1, 2, (float[]){1000, 1001});
    expect_values(pb_nn_log_softmax(t, big), 1, 2, (double[]){-log(1 + E1), 1 - log(1 + E1)}, 1e-6);
    expect_values(pb_nn_softmax(t, big), 1, 2, (double[]){1 / (1 + E1), E1 / (1 + E1)}, 1e-7);
    /* Layer norm of [1, 2, 3]: mean 2, biased variance 2/3, so [-1, 0, 1] / sqrt(2/3). */
    pb_nn_tensor *r = cst(t, 1, 3, (float[]){1, 2, 3});
    double z = 1 / sqrt(2.0 / 3);
    expect_values(pb_nn_layer_norm(t, r, NULL, NULL, 0), 1, 3, (double[]){-z, 0, z}, 1e-6);
    expect_values(pb_nn_layer_norm(t, r, cst(t, 1, 3, (float[]){2, 2, 2}),
                                   cst(t, 1, 3, (float[]){1, 1, 1}), 0),
                  1, 3, (double[]){1 - 2 * z, 1, 1 + 2 * z}, 1e-6);
    pb_nn_tensor *m = cst(t, 2, 2, (float[]){3, 4, 0, 1});
    expect_values(pb_nn_l2_normalize(t, m, 1, 1e-12f), 2, 2, (double[]){0.6, 0.8, 0, 1}, 1e-7);
    double n = sqrt(26.0);
    expect_values(pb_nn_l2_normalize(t, m, 0, 1e-12f), 2, 2, (double[]){3 / n, 4 / n, 0, 1 / n},
                  1e-7);
    /* Below eps the divisor is sqrt(eps): 0.1 / sqrt(4). */
    expect_values(pb_nn_l2_normalize(t, cst(t, 1, 1, (float[]){0.1f}), 1, 4), 1, 1,
                  (double[]){0.05}, 1e-8);
    expect_values(pb_nn_sum(t, m), 1, 1, (double[]){8}, 0);
    expect_values(pb_nn_mean(t, m), 1, 1, (double[]){2}, 0);
    expect_values(pb_nn_colsum(t, m), 1, 2, (double[]){3, 5}, 0);
    expect_values(pb_nn_colmean(t, m), 1, 2, (double[]){1.5, 2.5}, 0);
    expect_values(pb_nn_rowsum(t, m), 2, 1, (double[]){7, 1}, 0);
    expect_values(pb_nn_rowdot(t, m, cst(t, 2, 2, (float[]){1, 2, 3, 4})), 2, 1, (double[]){11, 4},
                  0);
    expect_values(pb_nn_rowdot(t, m, cst(t, 1, 2, (float[]){-1, 1})), 2, 1, (double[]){1, 1}, 0);
    expect_status_ok(t);
    pb_nn_tape_free(t);
}

/* Dropout keeps an entry when u >= rate and scales it by 1/(1-rate); the same draws decide. */
static void test_forward_dropout(void **state)
{
    (void)state;
    enum { N = 1000 };
    pb_nn_tape *t = pb_nn_tape_new();
    float ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1;
    pb_rng rng, ref;
    pb_rng_seed(&rng, 5);
    pb_rng_seed(&ref, 5);
    pb_nn_tensor *y = pb_nn_dropout(t, cst(t, 1, N, ones), 0.75f, &rng);
    assert_non_null(y);
    int kept = 0;
    for (int i = 0; i < N; i++) {
        int keep = pb_rng_uniform(&ref) >= 0.75;
        assert_true(y->data[i] == (keep ? 4.0f : 0.0f));
        kept += keep;
    }
    assert_in_range(kept, 200, 300); /* 250 expected, sd ~14 */
    pb_nn_tensor *x = cst(t, 1, 2, (float[]){1, 2});
    assert_ptr_equal(pb_nn_dropout(t, x, 0, &rng), x);
    assert_null(pb_nn_dropout(t, x, 1, &rng));
    pb_nn_tape_free(t);
}

/* ------------------------------------------------------------------ finite-difference checks */

/*
 * For an op y = f(inputs), the check takes L = sum_k R_k y_k with fixed random weights R (so
 * every output entry matters with a different weight), gets dL/dinput from pb_nn_backward with
 * seed R, and compares it with the central difference (L(v+h) - L(v-h)) / (2h) for every input
 * entry.  The ops compute in float32; L is summed in double.
 *
 * Tolerances: h = 1e-2 on inputs of magnitude <= 2.  The outputs an input entry affects carry a
 * rounding error of a few float ulps (~2e-7 relative, so ~1e-6 summed over the <= 24 outputs one
 * entry reaches here); divided by 2h that is ~5e-5.  The truncation error of the central
 * difference is h^2/6 |f'''|, ~2e-4 for the most curved op here (exp on [-1, 1] times weights
 * <= 1).  So |numeric - analytic| must stay below 2e-3 + 1e-2 |analytic|; a wrong gradient (a
 * missing term, a wrong sign, a transposed index) is off by the size of the gradient itself,
 * 0.1 to 1 here.
 *
 * Non-smooth ops (ReLU, max/min) have kinks, and a kink less than h away from an input entry
 * makes that entry's difference meaningless.  Such an entry is checked again with h = 1e-3: the
 * kink is then out of reach unless it is closer than 1e-3, the rounding term grows to ~5e-4,
 * still inside the tolerance, and a wrong gradient fails at both step sizes.  (Max/min inputs
 * are drawn 0.15 apart, so their ties are out of reach of either step.)
 */
#define FD_H 1e-2
#define FD_ATOL 2e-3
#define FD_RTOL 1e-2

enum {
    GEN_ANY,     /* uniform in [-1, 1] */
    GEN_AWAY,    /* |x| in [0.2, 1], random sign: ReLU inputs */
    GEN_POS,     /* uniform in [0.5, 2]: log */
    GEN_DISTINCT /* a shuffled grid with spacing 0.15: max/min without near-ties */
};

typedef pb_nn_tensor *(*fd_build)(pb_nn_tape *t, pb_nn_params *p, const void *ctx);

typedef struct fd_input {
    int rows, cols, gen;
} fd_input;

static void fd_fill(float *v, int n, int gen, pb_rng *rng)
{
    int *perm = malloc((size_t)n * sizeof *perm + 1);
    for (int i = 0; i < n; i++)
        perm[i] = i;
    pb_rng_shuffle(rng, perm, n);
    for (int i = 0; i < n; i++) {
        double u = pb_rng_uniform(rng);
        switch (gen) {
        case GEN_AWAY:
            v[i] = (float)((0.2 + 0.8 * u) * (pb_rng_uniform(rng) < 0.5 ? -1 : 1));
            break;
        case GEN_POS:
            v[i] = (float)(0.5 + 1.5 * u);
            break;
        case GEN_DISTINCT:
            v[i] = (float)((perm[i] - n / 2) * 0.15 + 0.03);
            break;
        default:
            v[i] = (float)(2 * u - 1);
            break;
        }
    }
    free(perm);
}

/* Parameters "in0", "in1", ... with the given shapes and value kinds. */
static pb_nn_params *fd_inputs(int n, const fd_input *in, uint64_t seed)
{
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, seed);
    pb_error err;
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%d", i);
        int id = pb_nn_params_add(p, name, in[i].rows, in[i].cols, PB_NN_INIT_ZEROS, NULL, &err);
        assert_int_equal(id, i);
        fd_fill(pb_nn_params_values(p) + pb_nn_params_offset(p, id), in[i].rows * in[i].cols,
                in[i].gen, &rng);
    }
    return p;
}

static double fd_loss(pb_nn_tape *t, pb_nn_params *p, fd_build build, const void *ctx,
                      const float *r)
{
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *y = build(t, p, ctx);
    expect_status_ok(t);
    double l = 0;
    for (size_t k = 0; k < (size_t)y->rows * (size_t)y->cols; k++)
        l += (double)r[k] * y->data[k];
    return l;
}

/* The central difference of the loss in value k of p, with the step actually representable. */
static double fd_numeric(pb_nn_tape *t, pb_nn_params *p, fd_build build, const void *ctx,
                         const float *r, size_t k, double h)
{
    float *v = pb_nn_params_values(p), keep = v[k];
    v[k] = (float)(keep + h);
    double hp = (double)v[k] - keep, lp = fd_loss(t, p, build, ctx, r);
    v[k] = (float)(keep - h);
    double hm = keep - (double)v[k], lm = fd_loss(t, p, build, ctx, r);
    v[k] = keep;
    return (lp - lm) / (hp + hm);
}

/* Compares analytic and numeric gradients for every value of p (see the comment above). */
static void fd_check(pb_nn_params *p, fd_build build, const void *ctx)
{
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tensor *y = build(t, p, ctx);
    expect_status_ok(t);
    size_t ny = (size_t)y->rows * (size_t)y->cols;
    float *r = malloc(ny * sizeof *r + 1);
    pb_rng rng;
    pb_rng_seed(&rng, 77);
    for (size_t k = 0; k < ny; k++)
        r[k] = (float)(2 * pb_rng_uniform(&rng) - 1);
    pb_nn_params_zero_grad(p);
    pb_error err;
    if (pb_nn_backward(t, y, r, &err) != PB_OK)
        fail_msg("backward: %s", err.msg);
    size_t n = pb_nn_params_size(p);
    float *ana = malloc(n * sizeof *ana + 1);
    memcpy(ana, pb_nn_params_grads(p), n * sizeof *ana);
    for (size_t k = 0; k < n; k++) {
        double num = fd_numeric(t, p, build, ctx, r, k, FD_H);
        if (fabs(num - ana[k]) <= FD_ATOL + FD_RTOL * fabs(ana[k]))
            continue;
        double fine = fd_numeric(t, p, build, ctx, r, k, FD_H / 10);
        if (fabs(fine - ana[k]) > FD_ATOL + FD_RTOL * fabs(ana[k]))
            fail_msg("value %zu of the inputs: analytic gradient %.6g, numeric %.6g (h = %g) and "
                     "%.6g (h = %g)",
                     k, (double)ana[k], num, FD_H, fine, FD_H / 10);
    }
    free(ana);
    free(r);
    pb_nn_tape_free(t);
}

static void fd_run(int n, const fd_input *in, fd_build build, const void *ctx)
{
    pb_nn_params *p = fd_inputs(n, in, 1000 + (uint64_t)n);
    fd_check(p, build, ctx);
    pb_nn_params_free(p);
}

static pb_nn_tensor *in_(pb_nn_tape *t, pb_nn_params *p, int i)
{
    return pb_nn_param(t, p, i);
}

/* matmul with the transpose flags in ctx (an int[2]). */
static pb_nn_tensor *b_matmul(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    const int *f = ctx;
    return pb_nn_matmul_t(t, in_(t, p, 0), f[0], in_(t, p, 1), f[1]);
}

static void test_grad_matmul(void **state)
{
    (void)state;
    for (int ta = 0; ta < 2; ta++) {
        for (int tb = 0; tb < 2; tb++) {
            int flags[2] = {ta, tb};
            /* op(A) 3x4, op(B) 4x2, and a size where OpenBLAS uses other kernels. */
            fd_input small[] = {{ta ? 4 : 3, ta ? 3 : 4, GEN_ANY},
                                {tb ? 2 : 4, tb ? 4 : 2, GEN_ANY}};
            fd_run(2, small, b_matmul, flags);
            fd_input big[] = {{ta ? 16 : 12, ta ? 12 : 16, GEN_ANY},
                              {tb ? 24 : 16, tb ? 16 : 24, GEN_ANY}};
            fd_run(2, big, b_matmul, flags);
        }
    }
}

/* ctx: int[2] = {activation, with_bias}. */
static pb_nn_tensor *b_linear(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    const int *c = ctx;
    return pb_nn_linear(t, in_(t, p, 0), in_(t, p, 1), c[1] ? in_(t, p, 2) : NULL, c[0]);
}

static void test_grad_linear(void **state)
{
    (void)state;
    fd_input in[] = {{3, 4, GEN_ANY}, {4, 5, GEN_ANY}, {1, 5, GEN_ANY}};
    for (int act = PB_NN_ACT_NONE; act <= PB_NN_ACT_TANH; act++) {
        int c[2] = {act, 1};
        fd_run(3, in, b_linear, c);
    }
    int nobias[2] = {PB_NN_ACT_TANH, 0};
    fd_run(2, in, b_linear, nobias);
    /* A bigger layer: the three backward products at sizes where OpenBLAS uses other kernels. */
    fd_input big[] = {{20, 16, GEN_ANY}, {16, 24, GEN_ANY}, {1, 24, GEN_ANY}};
    int c[2] = {PB_NN_ACT_SIGMOID, 1};
    fd_run(3, big, b_linear, c);
}

static pb_nn_tensor *b_transpose(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    (void)ctx;
    return pb_nn_transpose(t, in_(t, p, 0));
}

static void test_grad_transpose(void **state)
{
    (void)state;
    fd_input in[] = {{3, 5, GEN_ANY}};
    fd_run(1, in, b_transpose, NULL);
}

/* ctx: the binary op. */
typedef pb_nn_tensor *(*binary_op)(pb_nn_tape *, pb_nn_tensor *, pb_nn_tensor *);

static pb_nn_tensor *b_binary(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    binary_op op = *(const binary_op *)ctx;
    return op(t, in_(t, p, 0), in_(t, p, 1));
}

static void test_grad_add_sub_mul(void **state)
{
    (void)state;
    const binary_op ops[] = {pb_nn_add, pb_nn_sub, pb_nn_mul};
    const int shapes[4][2] = {{3, 4}, {1, 4}, {3, 1}, {1, 1}};
    for (int o = 0; o < 3; o++) {
        for (int s = 0; s < 4; s++) {
            fd_input in[] = {{3, 4, GEN_ANY}, {shapes[s][0], shapes[s][1], GEN_ANY}};
            fd_run(2, in, b_binary, &ops[o]);
        }
    }
}

typedef pb_nn_tensor *(*unary_op)(pb_nn_tape *, pb_nn_tensor *);

static pb_nn_tensor *b_unary(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    unary_op op = *(const unary_op *)ctx;
    return op(t, in_(t, p, 0));
}

static pb_nn_tensor *op_scale(pb_nn_tape *t, pb_nn_tensor *x)
{
    return pb_nn_scale(t, x, -1.5f);
}

static pb_nn_tensor *op_add_scalar(pb_nn_tape *t, pb_nn_tensor *x)
{
    return pb_nn_add_scalar(t, x, 0.75f);
}

static void test_grad_unary(void **state)
{
    (void)state;
    const struct {
        unary_op op;
        int gen;
    } cases[] = {{pb_nn_relu, GEN_AWAY},   {pb_nn_sigmoid, GEN_ANY}, {pb_nn_tanh, GEN_ANY},
                 {pb_nn_exp, GEN_ANY},     {pb_nn_log, GEN_POS},     {op_scale, GEN_ANY},
                 {op_add_scalar, GEN_ANY}, {pb_nn_softmax, GEN_ANY}, {pb_nn_log_softmax, GEN_ANY},
                 {pb_nn_sum, GEN_ANY},     {pb_nn_mean, GEN_ANY},    {pb_nn_colsum, GEN_ANY},
                 {pb_nn_colmean, GEN_ANY}, {pb_nn_rowsum, GEN_ANY},  {pb_nn_transpose, GEN_ANY}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fd_input in[] = {{3, 4, cases[i].gen}};
        fd_run(1, in, b_unary, &cases[i].op);
    }
}

/* The same seed at every evaluation gives the same mask, so the op is a fixed linear map. */
static pb_nn_tensor *b_dropout(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    (void)ctx;
    pb_rng rng;
    pb_rng_seed(&rng, 11);
    return pb_nn_dropout(t, in_(t, p, 0), 0.5f, &rng);
}

static void test_grad_dropout(void **state)
{
    (void)state;
    fd_input in[] = {{4, 5, GEN_ANY}};
    fd_run(1, in, b_dropout, NULL);
}

static pb_nn_tensor *b_concat(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    pb_nn_tensor *xs[] = {in_(t, p, 0), in_(t, p, 1), in_(t, p, 0)};
    return *(const int *)ctx ? pb_nn_concat_cols(t, 3, xs) : pb_nn_concat_rows(t, 3, xs);
}

static pb_nn_tensor *b_slice(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    (void)ctx;
    return pb_nn_slice_cols(t, in_(t, p, 0), 1, 3);
}

static void test_grad_concat_slice(void **state)
{
    (void)state;
    int side = 1;
    fd_input cols[] = {{3, 2, GEN_ANY}, {3, 4, GEN_ANY}};
    fd_run(2, cols, b_concat, &side);
    side = 0;
    fd_input rows[] = {{2, 3, GEN_ANY}, {4, 3, GEN_ANY}};
    fd_run(2, rows, b_concat, &side);
    fd_input in[] = {{3, 5, GEN_ANY}};
    fd_run(1, in, b_slice, NULL);
}

static const int fd_idx[] = {2, 0, 2, 3, 2};

static pb_nn_tensor *b_gather(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    (void)ctx;
    return pb_nn_gather_rows(t, in_(t, p, 0), fd_idx, 5);
}

static pb_nn_tensor *b_scatter(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    (void)ctx;
    return pb_nn_scatter_add_rows(t, in_(t, p, 0), fd_idx, 5);
}

static void test_grad_gather_scatter(void **state)
{
    (void)state;
    fd_input g[] = {{4, 3, GEN_ANY}};
    fd_run(1, g, b_gather, NULL); /* rows repeat: gradients add up */
    fd_input s[] = {{5, 3, GEN_ANY}};
    fd_run(1, s, b_scatter, NULL); /* targets repeat, output rows 1 and 4 stay zero */
}

/* ctx: {kind, weighted, contiguous}. */
static pb_nn_tensor *b_aggregate(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    const int *c = ctx;
    static const int start[] = {0, 3, 3, 5, 8}, index[] = {0, 4, 2, 1, 1, 3, 0, 4};
    static const float weight[] = {1, -0.5f, 2, 1.5f, 1, -1, 0.5f, 1};
    static const int seg[] = {0, 2, 2, 5};
    pb_nn_csr csr = {4, start, index, c[1] ? weight : NULL};
    pb_nn_csr contiguous = {3, seg, NULL, c[1] ? weight : NULL};
    return pb_nn_aggregate(t, in_(t, p, 0), c[2] ? &contiguous : &csr, c[0]);
}

static void test_grad_aggregate(void **state)
{
    (void)state;
    for (int kind = PB_NN_AGG_SUM; kind <= PB_NN_AGG_MIN; kind++) {
        for (int v = 0; v < 4; v++) {
            int c[3] = {kind, v & 1, v >> 1};
            fd_input in[] = {{5, 3, GEN_DISTINCT}};
            fd_run(1, in, b_aggregate, c);
        }
    }
}

static pb_nn_tensor *b_avgpool(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    return pb_nn_avgpool_rows(t, in_(t, p, 0), *(const int *)ctx);
}

static void test_grad_avgpool(void **state)
{
    (void)state;
    fd_input in[] = {{6, 3, GEN_ANY}};
    for (int w = 1; w <= 6; w += 2)
        fd_run(1, in, b_avgpool, &w);
}

/* ctx: {with gamma and beta}. */
static pb_nn_tensor *b_layer_norm(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    int affine = *(const int *)ctx;
    return pb_nn_layer_norm(t, in_(t, p, 0), affine ? in_(t, p, 1) : NULL,
                            affine ? in_(t, p, 2) : NULL, 1e-5f);
}

static void test_grad_layer_norm(void **state)
{
    (void)state;
    int affine = 1;
    fd_input in[] = {{3, 5, GEN_ANY}, {1, 5, GEN_POS}, {1, 5, GEN_ANY}};
    fd_run(3, in, b_layer_norm, &affine);
    affine = 0;
    fd_run(1, in, b_layer_norm, &affine);
}

/* ctx: {per_row, eps}. */
static pb_nn_tensor *b_l2(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    const float *c = ctx;
    return pb_nn_l2_normalize(t, in_(t, p, 0), c[0] != 0, c[1]);
}

static void test_grad_l2_normalize(void **state)
{
    (void)state;
    fd_input in[] = {{3, 4, GEN_ANY}};
    float per_row[2] = {1, 1e-12f}, whole[2] = {0, 1e-12f};
    fd_run(1, in, b_l2, per_row);
    fd_run(1, in, b_l2, whole);
    /* eps above every row's sum of squares (<= 4): the clamped, linear regime. */
    float clamped[2] = {1, 9};
    fd_run(1, in, b_l2, clamped);
}

static pb_nn_tensor *b_rowdot(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    (void)ctx;
    return pb_nn_rowdot(t, in_(t, p, 0), in_(t, p, 1));
}

static void test_grad_rowdot(void **state)
{
    (void)state;
    fd_input same[] = {{3, 4, GEN_ANY}, {3, 4, GEN_ANY}};
    fd_run(2, same, b_rowdot, NULL);
    fd_input bcast[] = {{3, 4, GEN_ANY}, {1, 4, GEN_ANY}};
    fd_run(2, bcast, b_rowdot, NULL);
}

/* The level-by-level recursion pattern: block 2 of a buffer is computed from block 1 read back
 * through a row view, and the whole buffer is read through a reshape view. */
static pb_nn_tensor *b_views(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    (void)ctx;
    pb_nn_tensor *buf = pb_nn_buffer(t, 4, 3);
    pb_nn_assign(t, pb_nn_rows(t, buf, 0, 2), pb_nn_tanh(t, in_(t, p, 0)));
    pb_nn_tensor *first = pb_nn_rows(t, buf, 0, 2);
    pb_nn_assign(t, pb_nn_rows(t, buf, 2, 2), pb_nn_mul(t, first, in_(t, p, 1)));
    pb_nn_tensor *all = pb_nn_reshape(t, buf, 2, 6);
    return pb_nn_add(t, all, pb_nn_reshape(t, in_(t, p, 1), 1, 6));
}

static void test_grad_views_and_buffers(void **state)
{
    (void)state;
    fd_input in[] = {{2, 3, GEN_ANY}, {2, 3, GEN_ANY}};
    fd_run(2, in, b_views, NULL);
}

/* A custom op, y = x.w computed and differentiated by the caller through pb_nn_gemm; ctx
 * counts the backward calls. */
static void custom_matmul_backward(void *ctx, const pb_nn_tensor *y, pb_nn_tensor *const *in,
                                   int n_in)
{
    assert_int_equal(n_in, 2);
    const pb_nn_tensor *x = in[0], *w = in[1];
    (*(int *)ctx)++;
    if (x->grad)
        pb_nn_gemm(0, 1, x->rows, x->cols, y->cols, 1.0f, y->grad, y->cols, w->data, w->cols, 1.0f,
                   x->grad, x->cols);
    if (w->grad)
        pb_nn_gemm(1, 0, w->rows, w->cols, x->rows, 1.0f, x->data, x->cols, y->grad, y->cols, 1.0f,
                   w->grad, w->cols);
}

static pb_nn_tensor *custom_matmul(pb_nn_tape *t, pb_nn_tensor *x, pb_nn_tensor *w, int *calls)
{
    pb_nn_tensor *in[] = {x, w};
    pb_nn_tensor *y = pb_nn_custom(t, x->rows, w->cols, 2, in, custom_matmul_backward, calls);
    if (y)
        pb_nn_gemm(0, 0, x->rows, w->cols, x->cols, 1.0f, x->data, x->cols, w->data, w->cols, 0.0f,
                   y->data, y->cols);
    return y;
}

static pb_nn_tensor *b_custom(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    int *calls = pb_nn_alloc(t, sizeof *calls);
    *calls = 0;
    (void)ctx;
    return pb_nn_tanh(t, custom_matmul(t, in_(t, p, 0), in_(t, p, 1), calls));
}

static void test_grad_custom_op(void **state)
{
    (void)state;
    fd_input in[] = {{3, 4, GEN_ANY}, {4, 2, GEN_ANY}};
    fd_run(2, in, b_custom, NULL);
    /* Without gradients nothing is recorded and the backward never runs. */
    pb_nn_tape *t = pb_nn_tape_new();
    int calls = 0;
    pb_nn_tensor *x = cst(t, 1, 2, (float[]){1, 2}), *w = cst(t, 2, 1, (float[]){3, 4});
    pb_nn_tensor *y = custom_matmul(t, x, w, &calls);
    assert_null(y->grad);
    assert_true(y->data[0] == 11.0f);
    pb_nn_params *p = pb_nn_params_new();
    pb_error err;
    pb_nn_params_add(p, "w", 2, 1, PB_NN_INIT_ONES, NULL, &err);
    y = custom_matmul(t, x, pb_nn_param(t, p, 0), &calls);
    assert_non_null(y->grad);
    assert_int_equal(pb_nn_backward(t, y, NULL, &err), PB_OK);
    assert_int_equal(calls, 1);
    assert_true(pb_nn_params_grads(p)[0] == 1.0f && pb_nn_params_grads(p)[1] == 2.0f);
    pb_nn_tape_reset(t, 0);
    calls = 0;
    y = custom_matmul(t, cst(t, 1, 2, (float[]){1, 2}), pb_nn_param(t, p, 0), &calls);
    assert_null(y->grad);
    assert_null(pb_nn_custom(t, 1, 1, 1, (pb_nn_tensor *[]){NULL}, custom_matmul_backward, &calls));
    assert_int_equal(pb_nn_tape_status(t, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "pb_nn_custom: input 1 is NULL"));
    pb_nn_params_free(p);
    pb_nn_tape_free(t);
}

/* An MLP (parameters from pb_nn_mlp_init) on a constant input, then the Placeto policy head:
 * log-softmax picked at one action. */
static pb_nn_tensor *b_mlp(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    const pb_nn_mlp *m = ctx;
    static const float x[] = {0.5f, -1, 0.25f, 2, -0.5f, 1, 0, -2};
    pb_nn_tensor *h = pb_nn_mlp_forward(t, p, m, pb_nn_constant(t, 2, 4, x));
    return pb_nn_slice_cols(t, pb_nn_log_softmax(t, h), 1, 1);
}

static void test_grad_mlp(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, 21);
    pb_nn_mlp m;
    pb_error err;
    const int sizes[] = {4, 6, 5, 3};
    assert_int_equal(pb_nn_mlp_init(&m, p, "policy", 4, sizes, PB_NN_ACT_NONE, &rng, &err), PB_OK);
    assert_int_equal(pb_nn_params_count(p), 6);
    assert_int_equal(pb_nn_params_find(p, "policy/w1"), m.weight[1]);
    /* Biases start at zero; give them values so their gradient check is not degenerate. */
    for (int i = 0; i < 3; i++) {
        int r, c;
        pb_nn_params_shape(p, m.bias[i], &r, &c);
        fd_fill(pb_nn_params_values(p) + pb_nn_params_offset(p, m.bias[i]), c, GEN_ANY, &rng);
    }
    fd_check(p, b_mlp, &m);
    pb_nn_params_free(p);
}

/* A cell and the arithmetic of its steps. */
typedef struct lstm_fd {
    pb_nn_lstm m;
    int math;
} lstm_fd;

/* Two LSTM steps from (x, h, c) with the same x: [h2, c2]. */
static pb_nn_tensor *b_lstm(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    const lstm_fd *k = ctx;
    pb_nn_tensor *h1, *c1, *h2, *c2, *x = in_(t, p, 0);
    pb_nn_lstm_step_math(t, p, &k->m, k->math, x, in_(t, p, 1), in_(t, p, 2), &h1, &c1);
    pb_nn_lstm_step_math(t, p, &k->m, k->math, x, h1, c1, &h2, &c2);
    pb_nn_tensor *both[2] = {h2, c2};
    return pb_nn_concat_cols(t, 2, both);
}

/* pb_nn_lstm_step (PB_NN_MATH_LIBM) and, with other bits, PB_NN_MATH_FAST: its own products,
 * vectorised activations and gate gradients. */
static void check_grad_lstm(int math)
{
    const fd_input in[] = {{2, 3, GEN_ANY}, {2, 4, GEN_ANY}, {2, 4, GEN_ANY}};
    pb_nn_params *p = fd_inputs(3, in, 31);
    pb_rng rng;
    pb_rng_seed(&rng, 32);
    lstm_fd k = {.math = math};
    pb_error err;
    assert_int_equal(pb_nn_lstm_init(&k.m, p, "lstm", 3, 4, &rng, &err), PB_OK);
    /* The bias starts at 0 and 1 (forget block): other values keep the check general. */
    fd_fill(pb_nn_params_values(p) + pb_nn_params_offset(p, k.m.bias), 16, GEN_ANY, &rng);
    fd_check(p, b_lstm, &k);
    pb_nn_params_free(p);
}

static void test_grad_lstm(void **state)
{
    (void)state;
    check_grad_lstm(PB_NN_MATH_LIBM);
}

static void test_grad_lstm_fast(void **state)
{
    (void)state;
    check_grad_lstm(PB_NN_MATH_FAST);
}

/* The LSTM cell composed of the core's ops, as pb_nn_lstm_step was written before it became one
 * fused op: the reference the fused step must match bit for bit. */
static void ref_lstm_step(pb_nn_tape *t, pb_nn_params *p, const pb_nn_lstm *m, pb_nn_tensor *x,
                          pb_nn_tensor *h, pb_nn_tensor *c, pb_nn_tensor **h_out,
                          pb_nn_tensor **c_out)
{
    int n = m->hidden;
    pb_nn_tensor *xh[2] = {x, h};
    pb_nn_tensor *z = pb_nn_linear(t, pb_nn_concat_cols(t, 2, xh), pb_nn_param(t, p, m->weight),
                                   pb_nn_param(t, p, m->bias), PB_NN_ACT_NONE);
    pb_nn_tensor *i = pb_nn_sigmoid(t, pb_nn_slice_cols(t, z, 0, n));
    pb_nn_tensor *f = pb_nn_sigmoid(t, pb_nn_slice_cols(t, z, n, n));
    pb_nn_tensor *g = pb_nn_tanh(t, pb_nn_slice_cols(t, z, 2 * n, n));
    pb_nn_tensor *o = pb_nn_sigmoid(t, pb_nn_slice_cols(t, z, 3 * n, n));
    *c_out = pb_nn_add(t, pb_nn_mul(t, f, c), pb_nn_mul(t, i, g));
    *h_out = pb_nn_mul(t, o, pb_nn_tanh(t, *c_out));
}

/* One case of the comparison: `steps` steps over `rows` rows (rows 2k and 2k+1 read the same x,
 * so the fused step's reuse of repeated rows is exercised), a linear head on every h and the
 * final c in the loss; inputs constant or parameters (with gradients). */
typedef struct lstm_case {
    int rows, in, hidden, steps, inputs_are_params;
} lstm_case;

/* Runs the case with the fused (fused != 0; 2: with PB_NN_MATH_FAST) or the composed cell;
 * returns the values of every h and the gradients of all parameters, concatenated (caller
 * frees). */
static float *lstm_case_run(const lstm_case *k, int fused, size_t *n_out)
{
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, 1234);
    pb_error err;
    int xs = pb_nn_params_add(p, "x", k->steps * k->rows, k->in, PB_NN_INIT_ZEROS, NULL, &err);
    int h0 = pb_nn_params_add(p, "h0", k->rows, k->hidden, PB_NN_INIT_ZEROS, NULL, &err);
    int c0 = pb_nn_params_add(p, "c0", k->rows, k->hidden, PB_NN_INIT_ZEROS, NULL, &err);
    int head = pb_nn_params_add(p, "head", k->hidden, 3, PB_NN_INIT_GLOROT, &rng, &err);
    pb_nn_lstm m;
    assert_int_equal(pb_nn_lstm_init(&m, p, "cell", k->in, k->hidden, &rng, &err), PB_OK);
    float *v = pb_nn_params_values(p);
    for (int r = 0; r < k->steps * k->rows; r++)
        for (int j = 0; j < k->in; j++)
            v[pb_nn_params_offset(p, xs) + (size_t)r * k->in + j] =
                r % 2 ? v[pb_nn_params_offset(p, xs) + (size_t)(r - 1) * k->in + j]
                      : (float)(2 * pb_rng_uniform(&rng) - 1);
    for (int j = 0; j < 4 * k->hidden; j++) /* a general bias */
        v[pb_nn_params_offset(p, m.bias) + j] = (float)(pb_rng_uniform(&rng) - 0.5);
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tensor *x_all = k->inputs_are_params ? pb_nn_param(t, p, xs)
                                               : pb_nn_constant(t, k->steps * k->rows, k->in,
                                                                v + pb_nn_params_offset(p, xs));
    pb_nn_tensor *h =
        k->inputs_are_params ? pb_nn_param(t, p, h0) : pb_nn_constant(t, k->rows, k->hidden, NULL);
    pb_nn_tensor *c =
        k->inputs_are_params ? pb_nn_param(t, p, c0) : pb_nn_constant(t, k->rows, k->hidden, NULL);
    size_t n_h = (size_t)k->steps * k->rows * k->hidden, n_p = pb_nn_params_size(p);
    float *out = malloc((n_h + n_p) * sizeof *out);
    pb_nn_tensor *loss = NULL;
    for (int s = 0; s < k->steps; s++) {
        pb_nn_tensor *x = pb_nn_rows(t, x_all, s * k->rows, k->rows), *h2, *c2;
        if (fused == 2)
            pb_nn_lstm_step_math(t, p, &m, PB_NN_MATH_FAST, x, h, c, &h2, &c2);
        else
            (fused ? pb_nn_lstm_step : ref_lstm_step)(t, p, &m, x, h, c, &h2, &c2);
        h = h2;
        c = c2;
        expect_status_ok(t);
        memcpy(out + (size_t)s * k->rows * k->hidden, h->data,
               (size_t)k->rows * k->hidden * sizeof(float));
        pb_nn_tensor *y = pb_nn_log_softmax(t, pb_nn_matmul(t, h, pb_nn_param(t, p, head)));
        pb_nn_tensor *term = pb_nn_sum(t, pb_nn_mul(t, y, y));
        loss = loss ? pb_nn_add(t, loss, term) : term;
    }
    loss = pb_nn_add(t, loss, pb_nn_sum(t, pb_nn_mul(t, c, c)));
    pb_nn_params_zero_grad(p);
    assert_int_equal(pb_nn_backward(t, loss, NULL, &err), PB_OK);
    memcpy(out + n_h, pb_nn_params_grads(p), n_p * sizeof(float));
    *n_out = n_h + n_p;
    pb_nn_tape_free(t);
    pb_nn_params_free(p);
    return out;
}

/* Runs every case with the step variant (lstm_case_run's `fused`) and the composed cell and
 * compares values and gradients: bit for bit when rel is 0, else to rel times the largest
 * magnitude of the values and of the gradients. */
static void compare_lstm_cases(int variant, double rel)
{
    static const lstm_case cases[] = {{1, 3, 4, 3, 1},  {2, 5, 4, 3, 0},    {5, 7, 8, 4, 1},
                                      {32, 7, 8, 3, 0}, {32, 31, 64, 4, 0}, {32, 31, 64, 2, 1}};
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        size_t na, nb;
        float *a = lstm_case_run(&cases[q], variant, &na), *b = lstm_case_run(&cases[q], 0, &nb);
        assert_int_equal(na, nb);
        size_t n_h = (size_t)cases[q].steps * cases[q].rows * cases[q].hidden;
        double big[2] = {0, 0};
        for (size_t i = 0; i < na; i++)
            big[i >= n_h] = fmax(big[i >= n_h], fabs(b[i]));
        for (size_t i = 0; i < na; i++)
            if (rel == 0 ? memcmp(&a[i], &b[i], sizeof(float)) != 0
                         : fabs(a[i] - b[i]) > rel * big[i >= n_h])
                fail_msg("case %zu entry %zu: step %.9g, composed %.9g", q, i, (double)a[i],
                         (double)b[i]);
        free(a);
        free(b);
    }
}

/* The fused LSTM step gives exactly the bits of the composed cell: values and gradients, with
 * one to 32 rows (the fused kernel and OpenBLAS), repeated rows, constant or learned inputs,
 * and the HeterPS policy's shape (32 plans, 31 features, 64 hidden). */
static void test_lstm_fused_matches_composed(void **state)
{
    (void)state;
    compare_lstm_cases(1, 0);
}

/* The fast cell computes the same function: on the same cases (repeated rows included, which
 * its forward pass computes once and its weight gradient sums first) values and gradients agree
 * with the composed cell's to float accuracy (1e-5 of the largest magnitude of each part; the
 * activations differ by at most 2.5 ulp). */
static void test_lstm_fast_matches_composed(void **state)
{
    (void)state;
    compare_lstm_cases(2, 1e-5);
}

/* Two Elman steps from (x, h) with the same x. */
static pb_nn_tensor *b_elman(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    const pb_nn_elman *m = ctx;
    pb_nn_tensor *x = in_(t, p, 0);
    return pb_nn_elman_step(t, p, m, x, pb_nn_elman_step(t, p, m, x, in_(t, p, 1)));
}

static void test_grad_elman(void **state)
{
    (void)state;
    const fd_input in[] = {{2, 3, GEN_ANY}, {2, 4, GEN_ANY}};
    pb_nn_params *p = fd_inputs(2, in, 41);
    pb_rng rng;
    pb_rng_seed(&rng, 42);
    pb_nn_elman m;
    pb_error err;
    assert_int_equal(pb_nn_elman_init(&m, p, "elman", 3, 4, &rng, &err), PB_OK);
    fd_fill(pb_nn_params_values(p) + pb_nn_params_offset(p, m.bias), 4, GEN_ANY, &rng);
    fd_check(p, b_elman, &m);
    pb_nn_params_free(p);
}

/* One step of a 1 -> 1 LSTM and Elman cell with weights set by hand, against the formulas. */
static void test_forward_recurrent(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, 5);
    pb_nn_lstm l;
    pb_nn_elman e;
    pb_error err;
    assert_int_equal(pb_nn_lstm_init(&l, p, "l", 1, 1, &rng, &err), PB_OK);
    assert_int_equal(pb_nn_elman_init(&e, p, "e", 1, 1, &rng, &err), PB_OK);
    float *v = pb_nn_params_values(p);
    const float *lb = v + pb_nn_params_offset(p, l.bias);
    assert_true(lb[0] == 0 && lb[1] == 1 && lb[2] == 0 && lb[3] == 0); /* forget bias 1 */
    for (size_t k = 0; k < 8; k++)                                     /* U(-1/sqrt 2, 1/sqrt 2) */
        assert_true(fabsf(v[pb_nn_params_offset(p, l.weight) + k]) <= 0.70711f);
    /* rows: x then h; columns i, f, g, o */
    static const float lw[8] = {1, 0, 2, 1, 0.5f, -1, 0.25f, 2};
    memcpy(v + pb_nn_params_offset(p, l.weight), lw, sizeof lw);
    static const float ew[2] = {0.8f, -0.6f}, eb = 0.1f;
    memcpy(v + pb_nn_params_offset(p, e.weight), ew, sizeof ew);
    v[pb_nn_params_offset(p, e.bias)] = eb;
    pb_nn_tape *t = pb_nn_tape_new();
    const float x = 0.5f, h = -0.4f, c = 0.3f;
    pb_nn_tensor *h1, *c1;
    pb_nn_lstm_step(t, p, &l, pb_nn_constant(t, 1, 1, &x), pb_nn_constant(t, 1, 1, &h),
                    pb_nn_constant(t, 1, 1, &c), &h1, &c1);
    pb_nn_tensor *eh =
        pb_nn_elman_step(t, p, &e, pb_nn_constant(t, 1, 1, &x), pb_nn_constant(t, 1, 1, &h));
    expect_status_ok(t);
    double zi = 0.5 * 1 - 0.4 * 0.5, zf = 0.5 * 0 + 0.4 + 1, zg = 0.5 * 2 - 0.4 * 0.25,
           zo = 0.5 * 1 - 0.4 * 2;
    double want_c = 0.3 / (1 + exp(-zf)) + tanh(zg) / (1 + exp(-zi));
    double want_h = tanh(want_c) / (1 + exp(-zo));
    assert_true(fabs(c1->data[0] - want_c) < 1e-6);
    assert_true(fabs(h1->data[0] - want_h) < 1e-6);
    assert_true(fabs(eh->data[0] - tanh(0.5 * 0.8 + 0.4 * 0.6 + 0.1)) < 1e-6);
    pb_nn_tape_free(t);
    pb_nn_params_free(p);
}

/* ------------------------------------------------------------------ GDP layers (specs/gdp.md) */

/* §4.4: one head, d = 2, memory [[1, 0]], segment [[0, 1], [1, 1]], keys = values = the three
 * rows; the causal mask (memory 1) and no mask. */
static void test_forward_attention_worked_example(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    static const float h[] = {0, 1, 1, 1}, kv[] = {1, 0, 0, 1, 1, 1};
    pb_nn_tensor *q = cst(t, 2, 2, h), *k = cst(t, 3, 2, kv);
    pb_nn_tensor *causal = pb_nn_attention(t, q, k, k, 1, 1);
    pb_nn_tensor *none = pb_nn_attention(t, q, k, k, 1, -1);
    expect_status_ok(t);
    static const double want_causal[] = {0.330238, 0.669762, 0.751745, 0.751745};
    expect_values(causal, 2, 2, want_causal, 1e-6);
    assert_true(fabs(none->data[0] - 0.598888) < 1e-6 && fabs(none->data[1] - 0.802224) < 1e-6);
    /* Two heads that are copies of the one head give the same numbers side by side. */
    static const float h2[] = {0, 1, 0, 1, 1, 1, 1, 1},
                       kv2[] = {1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1};
    pb_nn_tensor *k2 = cst(t, 3, 4, kv2);
    pb_nn_tensor *two = pb_nn_attention(t, cst(t, 2, 4, h2), k2, k2, 2, 1);
    expect_status_ok(t);
    static const double want_two[] = {0.330238, 0.669762, 0.330238, 0.669762,
                                      0.751745, 0.751745, 0.751745, 0.751745};
    expect_values(two, 2, 4, want_two, 1e-6);
    pb_nn_attention(t, q, k, k, 1, 0); /* 3 keys cannot be 0 memory rows + 2 queries */
    pb_error err;
    assert_int_equal(pb_nn_tape_status(t, &err), PB_ERR);
    pb_nn_tape_free(t);
}

/* §5: gate [2, 0.5] on [1, 4] gives [2, 2]; a 1-row gate broadcasts; NULL is the identity. */
static void test_forward_superpose(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    static const float c[] = {2, 0.5f}, x[] = {1, 4, 3, -2};
    pb_nn_tensor *xs = cst(t, 2, 2, x);
    pb_nn_tensor *y = pb_nn_superpose(t, xs, cst(t, 1, 2, c));
    expect_status_ok(t);
    static const double want[] = {2, 2, 6, -1};
    expect_values(y, 2, 2, want, 0);
    assert_ptr_equal(pb_nn_superpose(t, xs, NULL), xs);
    pb_nn_tape_free(t);
}

/* §3.3: nodes 0, 1, 2, edges 1->0 and 2->0, W_pool = I, W_comb adds the halves, ReLU; padding the
 * neighbour lists with repeats (knn 5 with replacement) gives the same numbers. */
static void test_forward_sage_pool_worked_example(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, 3);
    pb_nn_sage_pool m;
    pb_error err;
    assert_int_equal(pb_nn_sage_pool_init(&m, p, "gs0", 2, 2, PB_NN_ACT_RELU, &rng, &err), PB_OK);
    float *v = pb_nn_params_values(p);
    static const float eye[] = {1, 0, 0, 1}, comb[] = {1, 0, 0, 1, 1, 0, 0, 1};
    memcpy(v + pb_nn_params_offset(p, m.w_pool), eye, sizeof eye);
    memcpy(v + pb_nn_params_offset(p, m.w_comb), comb, sizeof comb);
    pb_nn_tape *t = pb_nn_tape_new();
    static const float x[] = {1, 1, 1, 0, 0, 2};
    static const int start[] = {0, 2, 3, 4}, idx[] = {1, 2, 0, 0};
    static const int start5[] = {0, 5, 10, 15},
                     idx5[] = {1, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    pb_nn_csr nbr = {3, start, idx, NULL}, nbr5 = {3, start5, idx5, NULL};
    pb_nn_tensor *xs = cst(t, 3, 2, x);
    pb_nn_tensor *y = pb_nn_sage_pool_forward(t, p, &m, xs, &nbr);
    pb_nn_tensor *y5 = pb_nn_sage_pool_forward(t, p, &m, xs, &nbr5);
    expect_status_ok(t);
    static const double want[] = {1.731059, 1.880797, 1.731059, 0.731059, 0.731059, 2.731059};
    expect_values(y, 3, 2, want, 1e-6);
    expect_values(y5, 3, 2, want, 1e-6);
    pb_nn_tape_free(t);
    pb_nn_params_free(p);
}

/* Attention with n_head and memory rows from ctx (an int[2]); inputs q, k, v. */
static pb_nn_tensor *b_attention(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    const int *a = ctx;
    return pb_nn_attention(t, in_(t, p, 0), in_(t, p, 1), in_(t, p, 2), a[0], a[1]);
}

static void test_grad_attention(void **state)
{
    (void)state;
    const fd_input in[] = {{3, 4, GEN_ANY}, {5, 4, GEN_ANY}, {5, 4, GEN_ANY}};
    const int causal_mem[2] = {2, 2}, unmasked[2] = {2, -1}, one_head[2] = {1, 2};
    fd_run(3, in, b_attention, causal_mem);
    fd_run(3, in, b_attention, unmasked);
    fd_run(3, in, b_attention, one_head);
}

/* What a Transformer-XL layer test varies. */
typedef struct trf_case {
    pb_nn_trf m;
    int gate_rows; /* 0: no gate, 1: per graph, else per row */
    int with_mem;
    int causal;
} trf_case;

/* One layer on x = param "x" (3 x 4), memory a constant (2 x 4, gradient-free as the cache is),
 * gate = param "gate"; the memory's gate a constant. */
static pb_nn_tensor *b_trf(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    const trf_case *c = ctx;
    static const float mem[] = {0.3f, -0.7f, 0.1f, 0.9f, -0.4f, 0.2f, 0.8f, -0.1f};
    static const float gmem[] = {1.2f, 0.6f, -0.5f, 0.9f, 0.7f, 1.1f, 0.4f, -0.8f};
    pb_nn_tensor *x = pb_nn_param(t, p, pb_nn_params_find(p, "x"));
    pb_nn_tensor *memt = c->with_mem ? pb_nn_constant(t, 2, 4, mem) : NULL;
    pb_nn_tensor *gate = c->gate_rows ? pb_nn_param(t, p, pb_nn_params_find(p, "gate")) : NULL;
    pb_nn_tensor *gm = c->with_mem && c->gate_rows > 1 ? pb_nn_constant(t, 2, 4, gmem) : NULL;
    return pb_nn_trf_forward(t, p, &c->m, x, memt, c->causal, gate, gm);
}

static void trf_fd(int superposition, int ff_only, int gate_rows, int with_mem, int causal)
{
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, 31);
    pb_error err;
    trf_case c = {.gate_rows = gate_rows, .with_mem = with_mem, .causal = causal};
    assert_int_equal(
        pb_nn_trf_init(&c.m, p, "trf", 4, 2, 3, 5, 1e-5f, superposition, ff_only, &rng, &err),
        PB_OK);
    /* Gains, biases and inputs away from their initial constants. */
    int nt = pb_nn_params_count(p);
    for (int i = 0; i < nt; i++) {
        int r, cc;
        pb_nn_params_shape(p, i, &r, &cc);
        if (r == 1)
            fd_fill(pb_nn_params_values(p) + pb_nn_params_offset(p, i), cc, GEN_ANY, &rng);
    }
    int xid = pb_nn_params_add(p, "x", 3, 4, PB_NN_INIT_ZEROS, NULL, &err);
    fd_fill(pb_nn_params_values(p) + pb_nn_params_offset(p, xid), 12, GEN_ANY, &rng);
    if (gate_rows) {
        int gid = pb_nn_params_add(p, "gate", gate_rows, 4, PB_NN_INIT_ZEROS, NULL, &err);
        fd_fill(pb_nn_params_values(p) + pb_nn_params_offset(p, gid), gate_rows * 4, GEN_ANY, &rng);
    }
    fd_check(p, b_trf, &c);
    pb_nn_params_free(p);
}

static void test_grad_transformer_layer(void **state)
{
    (void)state;
    trf_fd(0, 0, 0, 0, 1); /* first segment, causal */
    trf_fd(0, 0, 0, 1, 1); /* with memory, causal */
    trf_fd(0, 0, 0, 1, 0); /* with memory, no mask */
    trf_fd(1, 0, 3, 1, 1); /* superposition on every dense layer, per-row gate */
    trf_fd(1, 0, 1, 1, 1); /* per-graph gate */
    trf_fd(1, 1, 3, 1, 1); /* feed-forward layers only */
}

/* The memory is a stop-gradient copy: nothing flows back into what it was copied from. */
static void test_stop_gradient(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_error err;
    int id = pb_nn_params_add(p, "h", 1, 2, PB_NN_INIT_ONES, NULL, &err);
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tensor *h = pb_nn_param(t, p, id);
    pb_nn_tensor *y = pb_nn_sum(t, pb_nn_add(t, pb_nn_scale(t, h, 3), pb_nn_stop_gradient(t, h)));
    assert_int_equal(pb_nn_backward(t, y, NULL, &err), PB_OK);
    assert_true(y->data[0] == 8);
    assert_true(pb_nn_params_grads(p)[0] == 3 && pb_nn_params_grads(p)[1] == 3);
    pb_nn_tape_free(t);
    pb_nn_params_free(p);
}

/* A GraphSAGE layer with knn-padded neighbour lists and an empty neighbourhood (node 3). */
static pb_nn_tensor *b_sage_pool(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    static const int start[] = {0, 3, 4, 6, 6}, idx[] = {1, 2, 3, 0, 0, 3};
    static const pb_nn_csr nbr = {4, start, idx, NULL};
    return pb_nn_sage_pool_forward(t, p, ctx, pb_nn_param(t, p, pb_nn_params_find(p, "x")), &nbr);
}

static void test_grad_sage_pool(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, 41);
    pb_error err;
    pb_nn_sage_pool m;
    assert_int_equal(pb_nn_sage_pool_init(&m, p, "gs", 3, 4, PB_NN_ACT_NONE, &rng, &err), PB_OK);
    fd_fill(pb_nn_params_values(p) + pb_nn_params_offset(p, m.b_pool), 4, GEN_ANY, &rng);
    fd_fill(pb_nn_params_values(p) + pb_nn_params_offset(p, m.b_comb), 4, GEN_ANY, &rng);
    int xid = pb_nn_params_add(p, "x", 4, 3, PB_NN_INIT_ZEROS, NULL, &err);
    fd_fill(pb_nn_params_values(p) + pb_nn_params_offset(p, xid), 12, GEN_DISTINCT, &rng);
    fd_check(p, b_sage_pool, &m);
    pb_nn_params_free(p);
}

/* ------------------------------------------------------------------ tape behaviour */

static void test_tape_errors_are_sticky(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tensor *a = cst(t, 2, 3, NULL), *b = cst(t, 2, 3, NULL);
    assert_null(pb_nn_matmul(t, a, b));
    assert_null(pb_nn_relu(t, a)); /* everything after the first error fails */
    pb_error err;
    assert_int_equal(pb_nn_tape_status(t, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "pb_nn_matmul: 2x3 times 2x3"));
    assert_int_equal(pb_nn_backward(t, a, NULL, &err), PB_ERR);
    pb_nn_tape_reset(t, 1);
    assert_int_equal(pb_nn_tape_status(t, NULL), PB_OK);
    a = cst(t, 2, 3, NULL);
    assert_null(pb_nn_add(t, a, cst(t, 3, 2, NULL)));
    assert_int_equal(pb_nn_tape_status(t, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "pb_nn_add: 2x3 and 3x2 do not broadcast"));
    pb_nn_tape_reset(t, 1);
    const int bad[] = {0, 3};
    assert_null(pb_nn_gather_rows(t, cst(t, 2, 2, NULL), bad, 2));
    assert_int_equal(pb_nn_tape_status(t, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "index 3 at position 1 is outside 0..1"));
    pb_nn_tape_reset(t, 1);
    const int start[] = {0, 2, 1};
    pb_nn_csr csr = {2, start, NULL, NULL};
    assert_null(pb_nn_aggregate(t, cst(t, 2, 2, NULL), &csr, PB_NN_AGG_SUM));
    assert_int_equal(pb_nn_tape_status(t, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "start decreases at row 1"));
    pb_nn_tape_reset(t, 1);
    assert_null(pb_nn_relu(t, NULL));
    assert_int_equal(pb_nn_tape_status(t, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "pb_nn_relu: input 1 is NULL"));
    pb_nn_tape_free(t);
}

/* Backward needs a path to a parameter; constants and no-grad tapes record nothing. */
static void test_tape_no_grad_mode(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, 1);
    pb_error err;
    int w = pb_nn_params_add(p, "w", 3, 2, PB_NN_INIT_GLOROT, &rng, &err);
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tensor *x = cst(t, 1, 3, (float[]){1, 2, 3});
    pb_nn_tensor *y = pb_nn_matmul(t, x, pb_nn_param(t, p, w));
    assert_non_null(y->grad);
    float with_grad[2] = {y->data[0], y->data[1]};
    assert_int_equal(pb_nn_backward(t, pb_nn_tanh(t, x), NULL, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "does not depend on any parameter"));
    pb_nn_tape_reset(t, 0);
    x = cst(t, 1, 3, (float[]){1, 2, 3});
    y = pb_nn_matmul(t, x, pb_nn_param(t, p, w));
    assert_null(y->grad);
    assert_true(y->data[0] == with_grad[0] && y->data[1] == with_grad[1]);
    assert_int_equal(t->n_rec, 0);
    assert_int_equal(pb_nn_backward(t, y, NULL, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "does not record gradients"));
    pb_nn_tape_free(t);
    pb_nn_params_free(p);
}

/* Two backward passes add up in the parameters' gradients; zero_grad clears them.  For y = x.w
 * with x = [1, 2, 3], dy/dw = x^T (times the seed of each output column). */
static void test_backward_accumulates(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_error err;
    int w = pb_nn_params_add(p, "w", 3, 2, PB_NN_INIT_ONES, NULL, &err);
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tensor *y = pb_nn_matmul(t, cst(t, 1, 3, (float[]){1, 2, 3}), pb_nn_param(t, p, w));
    const float seed[] = {1, -2};
    assert_int_equal(pb_nn_backward(t, y, seed, &err), PB_OK);
    assert_int_equal(pb_nn_backward(t, y, seed, &err), PB_OK);
    const float want[] = {2, -4, 4, -8, 6, -12};
    assert_memory_equal(pb_nn_params_grads(p), want, sizeof want);
    pb_nn_params_zero_grad(p);
    for (int i = 0; i < 6; i++)
        assert_true(pb_nn_params_grads(p)[i] == 0);
    pb_nn_tape_free(t);
    pb_nn_params_free(p);
}

/* A second pass of the same shape reuses the first pass's memory: after the reset one chunk per
 * arena holds everything and the tensors land at the same addresses. */
static void test_tape_reuses_memory(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    float *first[2] = {NULL, NULL};
    for (int pass = 0; pass < 2; pass++) {
        pb_nn_tape_reset(t, 1);
        pb_nn_tensor *x = NULL;
        for (int i = 0; i < 400; i++) /* ~4 MB: several chunks on the first pass */
            x = pb_nn_constant(t, 50, 50, NULL);
        expect_status_ok(t);
        first[pass] = x->data;
        if (pass == 0)
            assert_true(t->data.n_chunks > 1);
        else
            assert_int_equal(t->data.n_chunks, 1);
    }
    pb_nn_tape_reset(t, 1);
    pb_nn_tensor *x = NULL;
    for (int i = 0; i < 400; i++)
        x = pb_nn_constant(t, 50, 50, NULL);
    assert_ptr_equal(x->data, first[1]);
    pb_nn_tape_free(t);
}

/* ------------------------------------------------------------------ parameters */

static void test_params_glorot_and_names(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, 9);
    pb_error err;
    assert_int_equal(pb_nn_params_add(p, "a", 40, 60, PB_NN_INIT_GLOROT, &rng, &err), 0);
    assert_int_equal(pb_nn_params_add(p, "b", 1, 60, PB_NN_INIT_ZEROS, NULL, &err), 1);
    assert_int_equal(pb_nn_params_add(p, "g", 1, 60, PB_NN_INIT_ONES, NULL, &err), 2);
    assert_int_equal(pb_nn_params_add(p, "a", 1, 1, PB_NN_INIT_ZEROS, NULL, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "'a' is already defined"));
    assert_int_equal(pb_nn_params_add(p, "z", 0, 1, PB_NN_INIT_ZEROS, NULL, &err), PB_ERR);
    assert_int_equal(pb_nn_params_add(p, "r", 2, 2, PB_NN_INIT_GLOROT, NULL, &err), PB_ERR);
    assert_int_equal(pb_nn_params_size(p), 2400 + 60 + 60);
    assert_int_equal(pb_nn_params_offset(p, 2), 2460);
    assert_string_equal(pb_nn_params_name(p, 1), "b");
    assert_int_equal(pb_nn_params_find(p, "g"), 2);
    assert_int_equal(pb_nn_params_find(p, "nope"), -1);
    /* U(-r, r) with r = sqrt(6 / (40 + 60)): every value inside, and a variance near r^2/3. */
    const float *v = pb_nn_params_values(p);
    double r = sqrt(0.06), s2 = 0;
    for (int i = 0; i < 2400; i++) {
        assert_true(fabs(v[i]) <= r);
        s2 += (double)v[i] * v[i];
    }
    assert_true(fabs(s2 / 2400 - r * r / 3) < 0.1 * r * r / 3);
    for (int i = 0; i < 60; i++)
        assert_true(v[2400 + i] == 0.0f && v[2460 + i] == 1.0f);
    pb_nn_params_free(p);
}

static char *tmp_path(const char *tag)
{
    static char path[128];
    snprintf(path, sizeof path, "/tmp/pb_test_nn_%s_%ld.json", tag, (long)getpid());
    return path;
}

static pb_nn_params *three_params(uint64_t seed)
{
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, seed);
    pb_error err;
    assert_int_equal(pb_nn_params_add(p, "enc/w0", 3, 2, PB_NN_INIT_GLOROT, &rng, &err), 0);
    assert_int_equal(pb_nn_params_add(p, "enc/b0", 1, 2, PB_NN_INIT_GLOROT, &rng, &err), 1);
    assert_int_equal(pb_nn_params_add(p, "head", 2, 4, PB_NN_INIT_GLOROT, &rng, &err), 2);
    return p;
}

static void test_params_save_load(void **state)
{
    (void)state;
    const char *path = tmp_path("roundtrip");
    pb_nn_params *a = three_params(1), *b = three_params(2);
    pb_error err;
    assert_int_equal(pb_nn_params_save(a, path, &err), PB_OK);
    assert_memory_not_equal(pb_nn_params_values(a), pb_nn_params_values(b), 16 * sizeof(float));
    assert_int_equal(pb_nn_params_load(b, path, &err), PB_OK);
    assert_memory_equal(pb_nn_params_values(a), pb_nn_params_values(b), 16 * sizeof(float));
    /* Order is free: a set built in another order loads by name. */
    pb_nn_params *c = pb_nn_params_new();
    pb_nn_params_add(c, "head", 2, 4, PB_NN_INIT_ZEROS, NULL, &err);
    pb_nn_params_add(c, "enc/b0", 1, 2, PB_NN_INIT_ZEROS, NULL, &err);
    pb_nn_params_add(c, "enc/w0", 3, 2, PB_NN_INIT_ZEROS, NULL, &err);
    assert_int_equal(pb_nn_params_load(c, path, &err), PB_OK);
    assert_memory_equal(pb_nn_params_values(c), pb_nn_params_values(a) + 8, 8 * sizeof(float));
    assert_memory_equal(pb_nn_params_values(c) + 8, pb_nn_params_values(a) + 6, 2 * sizeof(float));
    unlink(path);
    pb_nn_params_free(a);
    pb_nn_params_free(b);
    pb_nn_params_free(c);
}

/* Loads that must fail, each with the file and the tensor named, leaving the values alone. */
static void expect_load_error(pb_nn_params *p, const char *path, const char *what)
{
    float before[64];
    size_t n = pb_nn_params_size(p);
    memcpy(before, pb_nn_params_values(p), n * sizeof(float));
    pb_error err = {{0}};
    assert_int_equal(pb_nn_params_load(p, path, &err), PB_ERR);
    if (!strstr(err.msg, path) || !strstr(err.msg, what))
        fail_msg("error '%s' does not name '%s' and '%s'", err.msg, path, what);
    assert_memory_equal(pb_nn_params_values(p), before, n * sizeof(float));
}

/* Tensors of more than 65536 values are written as base64 of their float32 bytes (version 2):
 * every bit comes back, and the text is the hand-encoded one. */
static void test_params_save_load_b64(void **state)
{
    (void)state;
    const char *path = tmp_path("b64");
    pb_error err;
    pb_nn_params *a = pb_nn_params_new(), *b = pb_nn_params_new();
    /* 65537 and 65539 values: 4 n bytes leave 2 and 1 bytes over a multiple of 3. */
    const int cols[] = {65537, 65539, 3};
    const char *names[] = {"ones", "mixed", "small"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pb_nn_params_add(a, names[i], 1, cols[i], PB_NN_INIT_ONES, NULL, &err), i);
        assert_int_equal(pb_nn_params_add(b, names[i], 1, cols[i], PB_NN_INIT_ZEROS, NULL, &err),
                         i);
    }
    float *v = pb_nn_params_values(a) + pb_nn_params_offset(a, 1);
    pb_rng rng;
    pb_rng_seed(&rng, 5);
    for (int k = 0; k < 65539; k++)
        v[k] = (float)((pb_rng_uniform(&rng) - 0.5) * pow(10, (int)(pb_rng_below(&rng, 60)) - 30));
    v[0] = -0.0f;
    v[1] = 1e-42f; /* subnormal */
    v[2] = FLT_MAX;
    assert_int_equal(pb_nn_params_save(a, path, &err), PB_OK);
    assert_int_equal(pb_nn_params_load(b, path, &err), PB_OK);
    assert_memory_equal(pb_nn_params_values(a), pb_nn_params_values(b),
                        pb_nn_params_size(a) * sizeof(float));
    /* 1.0f is 00 00 80 3F little-endian: "AACAPwAAgD8AAIA/" per three values; 65537 ones end
     * with one value (4 bytes = 3 + 1) "AACAPwAAgD8=".  The small tensor stays a number list. */
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    assert_non_null(strstr(text, "\"version\": 2"));
    assert_non_null(strstr(text, "\"values_b64\": \"AACAPwAAgD8AAIA/AACAPw"));
    assert_non_null(strstr(text, "AACAPwAAgD8=\""));
    assert_non_null(strstr(text, "\"values\": ["));
    /* A damaged string names the tensor. */
    char *at = strstr(text, "AACAPwAAgD8AAIA/");
    at[5] = '*';
    f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    assert_int_equal(pb_nn_params_load(b, path, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "tensor 'ones': values_b64 is not base64 of 1x65537 float32s"));
    unlink(path);
    pb_nn_params_free(a);
    pb_nn_params_free(b);
}

static void test_params_load_mismatch(void **state)
{
    (void)state;
    const char *path = tmp_path("mismatch");
    pb_nn_params *saved = three_params(1);
    pb_error err;
    assert_int_equal(pb_nn_params_save(saved, path, &err), PB_OK);

    pb_nn_params *shape = pb_nn_params_new();
    pb_nn_params_add(shape, "enc/w0", 2, 3, PB_NN_INIT_ONES, NULL, &err);
    pb_nn_params_add(shape, "enc/b0", 1, 2, PB_NN_INIT_ONES, NULL, &err);
    pb_nn_params_add(shape, "head", 2, 4, PB_NN_INIT_ONES, NULL, &err);
    expect_load_error(shape, path, "tensor 'enc/w0' is 3x2 in the file, the model expects 2x3");

    pb_nn_params *extra = three_params(3);
    pb_nn_params_add(extra, "tail", 1, 1, PB_NN_INIT_ONES, NULL, &err);
    expect_load_error(extra, path, "parameter 'tail' (1x1) is missing from the file");

    pb_nn_params *fewer = pb_nn_params_new();
    pb_nn_params_add(fewer, "enc/w0", 3, 2, PB_NN_INIT_ONES, NULL, &err);
    expect_load_error(fewer, path, "tensor 'enc/b0' is not a parameter of this model");

    FILE *f = fopen(path, "w");
    fputs("{\"format\": \"placebench-nn-params\",\n \"version\": 1,\n \"tensors\": [\n", f);
    fclose(f);
    expect_load_error(saved, path, ":4:");
    f = fopen(path, "w");
    fputs("{\"format\": \"placebench-nn-params\", \"version\": 1, \"tensors\": [{\"name\": "
          "\"head\", \"rows\": 2, \"cols\": 4, \"values\": [1, 2]}]}",
          f);
    fclose(f);
    expect_load_error(saved, path, "tensor 'head' has 2 values, 2x4 needs 8");
    f = fopen(path, "w");
    fputs("{\"format\": \"something-else\"}", f);
    fclose(f);
    expect_load_error(saved, path, "not a placebench parameter file");
    unlink(path);
    expect_load_error(saved, path, path);
    assert_int_equal(pb_nn_params_save(saved, "/nonexistent-dir/p.json", &err), PB_ERR);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/p.json: cannot write"));
    pb_nn_params_free(saved);
    pb_nn_params_free(shape);
    pb_nn_params_free(extra);
    pb_nn_params_free(fewer);
}

/* ------------------------------------------------------------------ optimizers */

/*
 * Two Adam steps by hand, with beta1 = 0.5, beta2 = 0.75 and a large epsilon = 0.1 so that its
 * place in the formula shows.  One value, theta0 = 1, lr = 0.1, gradients 2 then 4.
 *   step 1: m = 0.5*2 = 1, v = 0.25*4 = 1, lr_1 = 0.1*sqrt(1-0.75)/(1-0.5) = 0.1,
 *           theta1 = 1 - 0.1 * 1/(1 + 0.1) = 0.909090909...
 *   step 2: m = 0.5*1 + 0.5*4 = 2.5, v = 0.75*1 + 0.25*16 = 4.75,
 *           lr_2 = 0.1*sqrt(1-0.5625)/(1-0.25) = 0.0881917104,
 *           theta2 = theta1 - 0.0881917104 * 2.5/(sqrt(4.75) + 0.1)
 *                  = 0.9090909091 - 0.2204792759/2.2794494718 = 0.8123656...
 * The textbook (bias-corrected m-hat, v-hat) form would give 0.8108..., so the check tells the two
 * apart.  A second value with gradient 0 then -1 checks the sign handling:
 *   step 1: m = 0, v = 0: no move;  step 2: m = -0.5, v = 0.25,
 *           theta = 0 + 0.0881917104 * 0.5/(0.5 + 0.1) = 0.0734930920.
 */
static void test_adam_two_steps(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_error err;
    assert_int_equal(pb_nn_params_add(p, "theta", 1, 2, PB_NN_INIT_ZEROS, NULL, &err), 0);
    float *v = pb_nn_params_values(p), *g = pb_nn_params_grads(p);
    v[0] = 1;
    pb_nn_adam *adam = pb_nn_adam_new(0.5, 0.75, 0.1);
    g[0] = 2;
    g[1] = 0;
    assert_int_equal(pb_nn_adam_step(adam, p, 0.1, &err), PB_OK);
    assert_float_equal(v[0], 0.9090909091, 1e-7);
    assert_float_equal(v[1], 0.0, 0);
    g[0] = 4;
    g[1] = -1;
    assert_int_equal(pb_nn_adam_step(adam, p, 0.1, &err), PB_OK);
    double lr2 = 0.1 * sqrt(0.4375) / 0.75;
    assert_float_equal(lr2, 0.0881917104, 1e-10);
    assert_float_equal(v[0], 0.9090909091 - lr2 * 2.5 / (sqrt(4.75) + 0.1), 1e-7);
    assert_float_equal(v[0], 0.8123656, 1e-6);
    assert_float_equal(v[1], 0.0734930920, 1e-7);
    assert_int_equal(pb_nn_adam_steps(adam), 2);
    /* The optimizer is bound to the set's size at its first step. */
    pb_nn_params_add(p, "late", 1, 1, PB_NN_INIT_ZEROS, NULL, &err);
    assert_int_equal(pb_nn_adam_step(adam, p, 0.1, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "3 values, it had 2"));
    pb_nn_adam_free(adam);
    pb_nn_params_free(p);
}

/* Adam saved with the parameters continues bit for bit: 2 steps, a save, a load into a fresh
 * set and a fresh optimizer, and 2 more steps give exactly the values of 4 steps in one process
 * (the moments are float64s in base64, exact).  The file without the section, a loader that does
 * not want it, hyper-parameters that differ and damaged moments are each handled. */
static void adam_grads(pb_nn_params *p, int step)
{
    float *g = pb_nn_params_grads(p);
    for (size_t i = 0; i < pb_nn_params_size(p); i++)
        g[i] = (float)(sin(0.37 * (double)(i + 1) * (step + 1)) * (i % 5 == 0 ? 1e-3 : 1.0));
}

static pb_nn_params *adam_set(void)
{
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, 11);
    pb_error err;
    /* one tensor large enough for values_b64, one written as numbers */
    assert_int_equal(pb_nn_params_add(p, "big", 2, 40000, PB_NN_INIT_GLOROT, &rng, &err), 0);
    assert_int_equal(pb_nn_params_add(p, "small", 3, 2, PB_NN_INIT_GLOROT, &rng, &err), 1);
    return p;
}

static void test_adam_save_continue(void **state)
{
    (void)state;
    const char *path = tmp_path("adam");
    pb_error err;
    pb_nn_params *one = adam_set(), *chain = adam_set();
    pb_nn_adam *a1 = pb_nn_adam_new(0.9, 0.999, 1e-7), *a2 = pb_nn_adam_new(0.9, 0.999, 1e-7);
    /* A fresh optimizer adds nothing: the file is the plain one. */
    assert_int_equal(pb_nn_params_save_adam(chain, a2, path, &err), PB_OK);
    int restored = -1;
    assert_int_equal(pb_nn_params_load_adam(chain, a2, path, &restored, &err), PB_OK);
    assert_int_equal(restored, 0);
    assert_int_equal(pb_nn_adam_steps(a2), 0);
    for (int k = 0; k < 4; k++) {
        adam_grads(one, k);
        assert_int_equal(pb_nn_adam_step(a1, one, 1e-2, &err), PB_OK);
    }
    for (int k = 0; k < 2; k++) {
        adam_grads(chain, k);
        assert_int_equal(pb_nn_adam_step(a2, chain, 1e-2, &err), PB_OK);
    }
    assert_int_equal(pb_nn_params_save_adam(chain, a2, path, &err), PB_OK);
    pb_nn_params_free(chain);
    pb_nn_adam_free(a2);
    /* the next "run": parameters and optimizer from the file */
    chain = pb_nn_params_new();
    pb_nn_params_add(chain, "small", 3, 2, PB_NN_INIT_ZEROS, NULL, &err); /* order is free */
    pb_nn_params_add(chain, "big", 2, 40000, PB_NN_INIT_ZEROS, NULL, &err);
    a2 = pb_nn_adam_new(0.9, 0.999, 1e-7);
    assert_int_equal(pb_nn_params_load_adam(chain, a2, path, &restored, &err), PB_OK);
    assert_int_equal(restored, 1);
    assert_int_equal(pb_nn_adam_steps(a2), 2);
    /* the gradients of steps 2 and 3 in the first set's order */
    pb_nn_params *order = adam_set();
    for (int k = 2; k < 4; k++) {
        adam_grads(order, k);
        float *g = pb_nn_params_grads(chain);
        memcpy(g, pb_nn_params_grads(order) + 80000, 6 * sizeof(float));
        memcpy(g + 6, pb_nn_params_grads(order), 80000 * sizeof(float));
        assert_int_equal(pb_nn_adam_step(a2, chain, 1e-2, &err), PB_OK);
    }
    assert_int_equal(pb_nn_adam_steps(a2), 4);
    assert_memory_equal(pb_nn_params_values(chain), pb_nn_params_values(one) + 80000,
                        6 * sizeof(float));
    assert_memory_equal(pb_nn_params_values(chain) + 6, pb_nn_params_values(one),
                        80000 * sizeof(float));
    /* Without its moments the same two steps land elsewhere (the test can fail). */
    pb_nn_params *fresh = adam_set();
    pb_nn_adam *a3 = pb_nn_adam_new(0.9, 0.999, 1e-7);
    assert_int_equal(pb_nn_params_load(fresh, path, &err), PB_OK);
    for (int k = 2; k < 4; k++) {
        adam_grads(fresh, k);
        assert_int_equal(pb_nn_adam_step(a3, fresh, 1e-2, &err), PB_OK);
    }
    assert_memory_not_equal(pb_nn_params_values(fresh), pb_nn_params_values(one),
                            80006 * sizeof(float));
    /* A loader without an optimizer reads the values (the section is optional). */
    assert_int_equal(pb_nn_params_load_adam(fresh, NULL, path, &restored, &err), PB_OK);
    assert_int_equal(restored, 0);
    /* Other hyper-parameters: an error naming the field, nothing changed. */
    pb_nn_adam *other = pb_nn_adam_new(0.9, 0.99, 1e-7);
    float keep = pb_nn_params_values(fresh)[0];
    pb_nn_params_values(fresh)[0] = 7.0f;
    assert_int_equal(pb_nn_params_load_adam(fresh, other, path, &restored, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "adam.beta2 is 0.999 in the file, 0.99 in this optimizer"));
    assert_int_equal(pb_nn_adam_steps(other), 0);
    assert_true(pb_nn_params_values(fresh)[0] == 7.0f);
    (void)keep;
    /* Damaged moments name the tensor. */
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[4 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    assert_non_null(strstr(text, "\"steps\": 2"));
    char *at = strstr(text, "\"adam_v_b64\": \"");
    assert_non_null(at);
    at[16] = '*';
    f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    pb_nn_adam *a4 = pb_nn_adam_new(0.9, 0.999, 1e-7);
    assert_int_equal(pb_nn_params_load_adam(fresh, a4, path, &restored, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "adam_v_b64 is not base64 of"));
    assert_int_equal(pb_nn_adam_steps(a4), 0);
    unlink(path);
    pb_nn_adam_free(a1);
    pb_nn_adam_free(a2);
    pb_nn_adam_free(a3);
    pb_nn_adam_free(a4);
    pb_nn_adam_free(other);
    pb_nn_params_free(one);
    pb_nn_params_free(chain);
    pb_nn_params_free(order);
    pb_nn_params_free(fresh);
}

static void test_sgd_and_clipping(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_error err;
    pb_nn_params_add(p, "a", 1, 1, PB_NN_INIT_ONES, NULL, &err);
    pb_nn_params_add(p, "b", 1, 1, PB_NN_INIT_ONES, NULL, &err);
    float *g = pb_nn_params_grads(p), *v = pb_nn_params_values(p);
    /* Gradients (3, 4): global norm 5, clipped to 1.25 = scaled by 1/4 -> (0.75, 1). */
    g[0] = 3;
    g[1] = 4;
    assert_float_equal(pb_nn_clip_grad_norm(p, 0), 5, 1e-12); /* measures only */
    assert_true(g[0] == 3 && g[1] == 4);
    assert_float_equal(pb_nn_clip_grad_norm(p, 1.25), 5, 1e-12);
    assert_float_equal(g[0], 0.75, 1e-7);
    assert_float_equal(g[1], 1.0, 1e-7);
    /* Below the bound nothing changes. */
    assert_float_equal(pb_nn_clip_grad_norm(p, 1.25), 1.25, 1e-6);
    assert_float_equal(g[0], 0.75, 1e-7);
    pb_nn_sgd_step(p, 0.5);
    assert_float_equal(v[0], 1 - 0.375, 1e-7);
    assert_float_equal(v[1], 0.5, 1e-7);
    pb_nn_params_free(p);
}

/* ------------------------------------------------------------------ graph attention */

/* Incoming edges of 3 nodes over 6 edge rows: node 0 <- {4, 1}, node 1 <- {} , node 2 <- {0, 5,
 * 2}; row 3 is in no segment. */
static const int attn_start[] = {0, 2, 2, 5};
static const int attn_index[] = {4, 1, 0, 5, 2};

static void test_forward_graph_attention(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tape_reset(t, 0);
    /* leaky ReLU 0.2: -1 -> -0.2, 0 -> 0, 3 -> 3. */
    expect_values(pb_nn_leaky_relu(t, cst(t, 1, 3, (float[]){-1, 0, 3}), 0.2f), 1, 3,
                  (double[]){-0.2, 0, 3}, 1e-7);
    /* Two heads of width 2: row (1,2 | 3,4) . (1,-1 | 2,0.5) = (-1, 8). */
    expect_values(pb_nn_head_dot(t, cst(t, 1, 4, (float[]){1, 2, 3, 4}),
                                 cst(t, 1, 4, (float[]){1, -1, 2, 0.5f}), 2),
                  1, 2, (double[]){-1, 8}, 1e-6);
    /* Scores per edge row (2 heads).  Node 0: rows 4, 1 with head 0 scores 0, ln 3 -> 1/4, 3/4;
     * head 1 equal scores -> 1/2 each.  Node 2: rows 0, 5, 2 all head 0 equal -> 1/3; head 1
     * scores ln 1, ln 2, ln 5 -> 1/8, 2/8, 5/8.  Row 3 is in no segment -> 0. */
    float l3 = logf(3), l2 = logf(2), l5 = logf(5);
    pb_nn_tensor *x = cst(t, 6, 2, (float[]){7, 0, l3, 9, 7, l5, 100, 100, 0, 9, 7, l2});
    pb_nn_csr csr = {3, attn_start, attn_index, NULL};
    pb_nn_tensor *a = pb_nn_segment_softmax(t, x, &csr);
    expect_values(a, 6, 2,
                  (double[]){1.0 / 3, 1.0 / 8, 0.75, 0.5, 1.0 / 3, 5.0 / 8, 0, 0, 0.25, 0.5,
                             1.0 / 3, 2.0 / 8},
                  1e-6);
    /* Messages of width 2 per head (4 columns); node 1 has no edge -> zeros.
     * node 0 = 1/4 m4 + 3/4 m1 (head 0) and 1/2 m4 + 1/2 m1 (head 1); node 2 = (m0 + m5 + m2)/3
     * (head 0) and 1/8 m0 + 5/8 m2 + 2/8 m5 (head 1). */
    float mv[6 * 4];
    for (int e = 0; e < 6; e++)
        for (int j = 0; j < 4; j++)
            mv[e * 4 + j] = (float)(e * 10 + j);
    pb_nn_tensor *out = pb_nn_attend(t, cst(t, 6, 4, mv), a, &csr);
    double n0[4] = {0.25 * 40 + 0.75 * 10, 0.25 * 41 + 0.75 * 11, 0.5 * 42 + 0.5 * 12,
                    0.5 * 43 + 0.5 * 13};
    double n2[4] = {(0 + 50 + 20) / 3.0, (1 + 51 + 21) / 3.0, (2 + 5 * 22.0 + 2 * 52) / 8,
                    (3 + 5 * 23.0 + 2 * 53) / 8};
    expect_values(out, 3, 4,
                  (double[]){n0[0], n0[1], n0[2], n0[3], 0, 0, 0, 0, n2[0], n2[1], n2[2], n2[3]},
                  1e-4);
    expect_status_ok(t);
    /* A row in two segments is refused. */
    const int twice_start[] = {0, 1, 2}, twice_index[] = {0, 0};
    pb_nn_csr twice = {2, twice_start, twice_index, NULL};
    assert_null(pb_nn_segment_softmax(t, x, &twice));
    pb_error err;
    assert_int_equal(pb_nn_tape_status(t, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "two segments"));
    pb_nn_tape_free(t);
}

static pb_nn_tensor *b_leaky(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    (void)ctx;
    return pb_nn_leaky_relu(t, in_(t, p, 0), 0.2f);
}

static pb_nn_tensor *b_head_dot(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    return pb_nn_head_dot(t, in_(t, p, 0), in_(t, p, 1), *(const int *)ctx);
}

static pb_nn_tensor *b_segment_softmax(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    return pb_nn_segment_softmax(t, in_(t, p, 0), ctx);
}

static pb_nn_tensor *b_attend(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    return pb_nn_attend(t, in_(t, p, 0), in_(t, p, 1), ctx);
}

/* One GAT head block as the TAG network chains it: logits el (edge) + er (gathered by
 * destination), leaky ReLU, softmax per destination, weighted message sum. */
static const int attn_dst[] = {2, 0, 2, 1, 0, 2};
static pb_nn_tensor *b_gat_chain(pb_nn_tape *t, pb_nn_params *p, const void *ctx)
{
    pb_nn_tensor *m = in_(t, p, 0), *h = in_(t, p, 1);
    pb_nn_tensor *el = pb_nn_head_dot(t, m, in_(t, p, 2), 2);
    pb_nn_tensor *er = pb_nn_gather_rows(t, pb_nn_head_dot(t, h, in_(t, p, 3), 2), attn_dst, 6);
    pb_nn_tensor *a =
        pb_nn_segment_softmax(t, pb_nn_leaky_relu(t, pb_nn_add(t, el, er), 0.2f), ctx);
    return pb_nn_attend(t, m, a, ctx);
}

static void test_grad_graph_attention(void **state)
{
    (void)state;
    fd_input leaky[] = {{3, 4, GEN_AWAY}};
    fd_run(1, leaky, b_leaky, NULL);
    for (int heads = 1; heads <= 3; heads++) {
        fd_input in[] = {{4, 6, GEN_ANY}, {1, 6, GEN_ANY}};
        fd_run(2, in, b_head_dot, &heads);
    }
    pb_nn_csr csr = {3, attn_start, attn_index, NULL};
    fd_input scores[] = {{6, 2, GEN_ANY}};
    fd_run(1, scores, b_segment_softmax, &csr);
    const int contiguous_start[] = {0, 3, 6};
    pb_nn_csr contiguous = {2, contiguous_start, NULL, NULL};
    fd_run(1, scores, b_segment_softmax, &contiguous);
    fd_input att[] = {{6, 4, GEN_ANY}, {6, 2, GEN_ANY}};
    fd_run(2, att, b_attend, &csr);
    fd_input chain[] = {{6, 4, GEN_ANY}, {3, 4, GEN_ANY}, {1, 4, GEN_ANY}, {1, 4, GEN_ANY}};
    fd_run(4, chain, b_gat_chain, &csr);
}

static void test_clip_each_norm(void **state)
{
    (void)state;
    pb_nn_params *p = pb_nn_params_new();
    pb_error err;
    pb_nn_params_add(p, "a", 1, 2, PB_NN_INIT_ZEROS, NULL, &err);
    pb_nn_params_add(p, "b", 1, 1, PB_NN_INIT_ZEROS, NULL, &err);
    float *g = pb_nn_params_grads(p);
    /* a's gradient (3, 4) has norm 5 -> clipped to 0.6: (0.36, 0.48); b's 0.5 stays. */
    g[0] = 3;
    g[1] = 4;
    g[2] = 0.5f;
    pb_nn_clip_each_norm(p, 0.6);
    assert_float_equal(g[0], 0.36, 1e-7);
    assert_float_equal(g[1], 0.48, 1e-7);
    assert_float_equal(g[2], 0.5, 1e-7);
    pb_nn_params_free(p);
}

/* ------------------------------------------------------------------ determinism */

/* Init, a forward pass with dropout, backward, clipping and three Adam steps from one seed. */
static void train_run(uint64_t seed, float *out_values, float *out_y)
{
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, seed);
    pb_nn_mlp m;
    pb_error err;
    const int sizes[] = {6, 8, 3};
    assert_int_equal(pb_nn_mlp_init(&m, p, "f", 3, sizes, PB_NN_ACT_NONE, &rng, &err), PB_OK);
    pb_nn_adam *adam = pb_nn_adam_new(0.9, 0.999, 1e-8);
    pb_nn_tape *t = pb_nn_tape_new();
    float x[5 * 6];
    for (int i = 0; i < 30; i++)
        x[i] = (float)pb_rng_uniform(&rng);
    for (int step = 0; step < 3; step++) {
        pb_nn_tape_reset(t, 1);
        pb_nn_tensor *h = pb_nn_dropout(t, pb_nn_constant(t, 5, 6, x), 0.3f, &rng);
        pb_nn_tensor *y = pb_nn_mean(t, pb_nn_log_softmax(t, pb_nn_mlp_forward(t, p, &m, h)));
        pb_nn_params_zero_grad(p);
        assert_int_equal(pb_nn_backward(t, y, NULL, &err), PB_OK);
        pb_nn_clip_grad_norm(p, 1.25);
        assert_int_equal(pb_nn_adam_step(adam, p, 1e-2, &err), PB_OK);
        out_y[step] = y->data[0];
    }
    memcpy(out_values, pb_nn_params_values(p), pb_nn_params_size(p) * sizeof(float));
    pb_nn_tape_free(t);
    pb_nn_adam_free(adam);
    pb_nn_params_free(p);
}

static void test_determinism(void **state)
{
    (void)state;
    enum { N = 6 * 8 + 8 + 8 * 3 + 3 };
    float a[N], b[N], c[N], ya[3], yb[3], yc[3];
    train_run(42, a, ya);
    train_run(42, b, yb);
    train_run(43, c, yc);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_equal(ya, yb, sizeof ya);
    assert_memory_not_equal(a, c, sizeof a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_matmul),
        cmocka_unit_test(test_forward_matmul_blas),
        cmocka_unit_test(test_forward_elementwise),
        cmocka_unit_test(test_forward_rows),
        cmocka_unit_test(test_forward_aggregate),
        cmocka_unit_test(test_aggregate_tie_gradient),
        cmocka_unit_test(test_forward_reduce),
        cmocka_unit_test(test_forward_dropout),
        cmocka_unit_test(test_grad_matmul),
        cmocka_unit_test(test_grad_linear),
        cmocka_unit_test(test_grad_transpose),
        cmocka_unit_test(test_grad_add_sub_mul),
        cmocka_unit_test(test_grad_unary),
        cmocka_unit_test(test_grad_dropout),
        cmocka_unit_test(test_grad_concat_slice),
        cmocka_unit_test(test_grad_gather_scatter),
        cmocka_unit_test(test_grad_aggregate),
        cmocka_unit_test(test_grad_avgpool),
        cmocka_unit_test(test_grad_layer_norm),
        cmocka_unit_test(test_grad_l2_normalize),
        cmocka_unit_test(test_grad_rowdot),
        cmocka_unit_test(test_grad_views_and_buffers),
        cmocka_unit_test(test_grad_custom_op),
        cmocka_unit_test(test_grad_mlp),
        cmocka_unit_test(test_grad_lstm),
        cmocka_unit_test(test_lstm_fused_matches_composed),
        cmocka_unit_test(test_grad_lstm_fast),
        cmocka_unit_test(test_lstm_fast_matches_composed),
        cmocka_unit_test(test_grad_elman),
        cmocka_unit_test(test_forward_recurrent),
        cmocka_unit_test(test_tape_errors_are_sticky),
        cmocka_unit_test(test_tape_no_grad_mode),
        cmocka_unit_test(test_backward_accumulates),
        cmocka_unit_test(test_tape_reuses_memory),
        cmocka_unit_test(test_params_glorot_and_names),
        cmocka_unit_test(test_params_save_load),
        cmocka_unit_test(test_params_load_mismatch),
        cmocka_unit_test(test_adam_two_steps),
        cmocka_unit_test(test_adam_save_continue),
        cmocka_unit_test(test_sgd_and_clipping),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_forward_attention_worked_example),
        cmocka_unit_test(test_forward_superpose),
        cmocka_unit_test(test_forward_sage_pool_worked_example),
        cmocka_unit_test(test_grad_attention),
        cmocka_unit_test(test_grad_transformer_layer),
        cmocka_unit_test(test_stop_gradient),
        cmocka_unit_test(test_grad_sage_pool),
        cmocka_unit_test(test_forward_graph_attention),
        cmocka_unit_test(test_grad_graph_attention),
        cmocka_unit_test(test_clip_each_norm),
        cmocka_unit_test(test_params_save_load_b64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
