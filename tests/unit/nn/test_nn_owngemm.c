/* test_nn_owngemm.c — pb_nn_tape_gemm and the tape's linear layers with the fused kernels
 * (nn_linalg.c, nn_fused_gemm_acc): OpenBLAS's bits on a grid of shapes of every kind (C = A B,
 * A^T B, A B^T; whole products, row tails, blocks of k), the ISA versions against portable C,
 * and a case by hand.  Under OPENBLAS_CORETYPE=Haswell (the project's environment) the tape
 * must take the fused kernels; elsewhere it must fall back to OpenBLAS, so the bits hold too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_internal.h"
#include "placebench.h"

static int haswell_core(void)
{
    const char *core = getenv("OPENBLAS_CORETYPE");
    return core && strcmp(core, "Haswell") == 0;
}

/* Values of several binades and both signs, so that another summation order shows in the
 * bits. */
static void fill(pb_rng *rng, float *v, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        double u = 2 * pb_rng_uniform(rng) - 1;
        v[i] = (float)(u * (double)(1u << pb_rng_below(rng, 6)) / 8);
    }
}

typedef struct grid_buf {
    float *a, *b, *c0, *c1, *c2;
} grid_buf;

/* C (m x n) = alpha op(A) op(B) + beta C with pb_nn_tape_gemm on tape t and with pb_nn_gemm:
 * the same bits. */
static void check_product(pb_rng *rng, const pb_nn_tape *t, grid_buf *g, int ta, int tb, int m,
                          int n, int k, float beta)
{
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    fill(rng, g->a, na);
    fill(rng, g->b, nb);
    fill(rng, g->c0, nc);
    memcpy(g->c1, g->c0, nc * sizeof(float));
    int lda = ta ? m : k, ldb = tb ? k : n;
    pb_nn_gemm(ta, tb, m, n, k, 1.0f, g->a, lda, g->b, ldb, beta, g->c0, n);
    pb_nn_tape_gemm(t, ta, tb, m, n, k, 1.0f, g->a, lda, g->b, ldb, beta, g->c1, n);
    if (memcmp(g->c0, g->c1, nc * sizeof(float)) != 0)
        fail_msg("%s%s %dx%dx%d beta %g: pb_nn_tape_gemm differs from OpenBLAS", ta ? "T" : "N",
                 tb ? "T" : "N", m, n, k, (double)beta);
}

static grid_buf grid_alloc(size_t floats)
{
    grid_buf g = {malloc(floats * sizeof(float)), malloc(floats * sizeof(float)),
                  malloc(floats * sizeof(float)), malloc(floats * sizeof(float)),
                  malloc(floats * sizeof(float))};
    assert_true(g.a && g.b && g.c0 && g.c1 && g.c2);
    return g;
}

static void grid_free(grid_buf *g)
{
    free(g->a);
    free(g->b);
    free(g->c0);
    free(g->c1);
    free(g->c2);
}

static const int grid_rows[] = {1,  2,  3,  4,  5,   6,   7,   8,   9,   10,  11,   12,  13,
                                14, 15, 16, 17, 19,  20,  23,  24,  25,  27,  28,   29,  35,
                                36, 40, 96, 99, 191, 192, 193, 269, 520, 768, 1076, 2080};
static const int grid_cols[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                11, 12, 13, 14, 15, 16, 17, 24, 26, 33};

/* C = A B and C = A B^T (a layer's forward product and its input gradient): rows of C by
 * OpenBLAS's 12-row tiles and tails, narrow and wide outputs, short and long sums. */
static void test_rows_grid(void **state)
{
    (void)state;
    static const int inner[] = {1, 2, 3, 5, 7, 8, 9, 13, 16, 26, 52};
    pb_nn_tape *t = pb_nn_tape_new();
    assert_non_null(t);
    if (haswell_core())
        assert_int_equal(t->own_gemm, 1); /* the project's environment takes the fused kernels */
    grid_buf g = grid_alloc((size_t)2080 * 52);
    pb_rng rng;
    pb_rng_seed(&rng, 16);
    for (size_t ri = 0; ri < sizeof grid_rows / sizeof grid_rows[0]; ri++)
        for (size_t ci = 0; ci < sizeof grid_cols / sizeof grid_cols[0]; ci++)
            for (size_t ki = 0; ki < sizeof inner / sizeof inner[0]; ki++)
                for (int tb = 0; tb < 2; tb++)
                    check_product(&rng, t, &g, 0, tb, grid_rows[ri], grid_cols[ci], inner[ki],
                                  (float)((ri + ci + ki) % 2));
    grid_free(&g);
    pb_nn_tape_free(t);
}

/* C = A^T B (weight gradients): sums over up to 2,080 rows, cut in OpenBLAS's blocks of k (320,
 * and a rest between 320 and 640 in two halves), and long sums into wide products. */
static void test_sums_grid(void **state)
{
    (void)state;
    static const int terms[] = {1,   2,   3,   4,   7,   8,   9,   13,  100,  319, 320,
                                321, 383, 639, 640, 641, 700, 768, 960, 1000, 2080};
    static const int dims[] = {1, 2, 3, 4, 7, 8, 11, 12, 13, 14, 15, 16, 17, 24, 25, 26};
    pb_nn_tape *t = pb_nn_tape_new();
    assert_non_null(t);
    grid_buf g = grid_alloc((size_t)2080 * 26);
    pb_rng rng;
    pb_rng_seed(&rng, 320);
    for (size_t mi = 0; mi < sizeof dims / sizeof dims[0]; mi++)
        for (size_t ni = 0; ni < sizeof dims / sizeof dims[0]; ni++)
            for (size_t ki = 0; ki < sizeof terms / sizeof terms[0]; ki++)
                check_product(&rng, t, &g, 1, 0, dims[mi], dims[ni], terms[ki],
                              (float)((mi + ki) % 2));
    /* long sums in the other kinds, and the classifier's 4-row gradients */
    static const int long_k[][3] = {{12, 13, 700}, {29, 13, 1000}, {3, 40, 641},  {24, 5, 960},
                                    {13, 8, 321},  {104, 208, 4},  {208, 104, 4}, {104, 8, 4}};
    for (size_t i = 0; i < sizeof long_k / sizeof long_k[0]; i++)
        for (int kind = 0; kind < 3; kind++)
            check_product(&rng, t, &g, kind == 1, kind == 2, long_k[i][0], long_k[i][1],
                          long_k[i][2], 1.0f);
    grid_free(&g);
    pb_nn_tape_free(t);
}

/* Every ISA version of the kernel gives portable C's bits, with strides and both layouts of A. */
static void test_isa_versions(void **state)
{
    (void)state;
    pb_rng rng;
    pb_rng_seed(&rng, 5);
    grid_buf g = grid_alloc((size_t)80 * 80);
    for (int trial = 0; trial < 400; trial++) {
        int ta = trial % 2, m = 1 + (int)pb_rng_below(&rng, 40),
            n = 1 + (int)pb_rng_below(&rng, 70);
        int k = 1 + (int)pb_rng_below(&rng, 60), pad = (int)pb_rng_below(&rng, 3);
        int lda = (ta ? m : k) + pad, ldb = n + pad, ldc = n + pad;
        fill(&rng, g.a, (size_t)80 * 80);
        fill(&rng, g.b, (size_t)80 * 80);
        fill(&rng, g.c0, (size_t)80 * 80);
        memcpy(g.c1, g.c0, (size_t)80 * 80 * sizeof(float));
        nn_fused_gemm_acc(NN_ISA_PORTABLE, ta, m, n, k, g.a, lda, g.b, ldb, g.c0, ldc);
        for (int isa = NN_ISA_AVX2; isa <= nn_cpu_isa(); isa++) {
            memcpy(g.c2, g.c1, (size_t)80 * 80 * sizeof(float));
            nn_fused_gemm_acc(isa, ta, m, n, k, g.a, lda, g.b, ldb, g.c2, ldc);
            if (memcmp(g.c0, g.c2, (size_t)80 * 80 * sizeof(float)) != 0)
                fail_msg("%s %s %dx%dx%d (pad %d) differs from portable C", nn_cpu_isa_name(isa),
                         ta ? "TN" : "NN", m, n, k, pad);
        }
    }
    grid_free(&g);
}

/* By hand: C += A^T B with sums whose order shows.  Column 0 of C: 1e8 + 1 - 1e8 from +0 in
 * order is 0 in floats (1e8 + 1 rounds to 1e8), then + 5 = 5; column 1: 3 * 2 + 4 * 0.5 = 8, + 1
 * = 9.  Entries beyond the 2 x 2 product (ldc 3) stay untouched. */
static void test_by_hand(void **state)
{
    (void)state;
    const float a[3] = {1e8f, 1.0f, -1e8f}; /* A is 3 x 1 (k x m): one row of C */
    const float b[6] = {1, 3, 1, 4, 1, 0.5f};
    float c[3] = {5, 1, -7};
    for (int isa = NN_ISA_PORTABLE; isa <= nn_cpu_isa(); isa++) {
        float got[3];
        memcpy(got, c, sizeof got);
        nn_fused_gemm_acc(isa, 1, 1, 2, 3, a, 1, b, 2, got, 3);
        assert_true(got[0] == 5.0f);
        assert_true(got[1] == 1.0f + 3e8f + 4.0f - 0.5e8f);
        assert_true(got[2] == -7.0f);
    }
    /* beta 0: a -0 sum is stored as +0, as OpenBLAS clears C and adds. */
    pb_nn_tape *t = pb_nn_tape_new();
    assert_non_null(t);
    const float x[1] = {-0.0f}, w[1] = {1.0f};
    float y[1] = {7.0f};
    pb_nn_tape_gemm(t, 0, 0, 1, 1, 1, 1.0f, x, 1, w, 1, 0.0f, y, 1);
    assert_false(signbit(y[0]));
    pb_nn_tape_free(t);
}

/* A linear layer's values and gradients on a tape that takes the fused kernels equal those on
 * a tape that does not (OpenBLAS only), for the placers' layer shapes and tails. */
static void check_linear(pb_rng *rng, int n, int in, int out, int act)
{
    pb_nn_params *p = pb_nn_params_new();
    assert_non_null(p);
    pb_error err = {0};
    int wid = pb_nn_params_add(p, "w", in, out, PB_NN_INIT_GLOROT, rng, &err);
    int bid = pb_nn_params_add(p, "b", 1, out, PB_NN_INIT_GLOROT, rng, &err);
    assert_true(wid >= 0 && bid >= 0);
    float *x = malloc((size_t)n * in * sizeof(float)),
          *seed = malloc((size_t)n * out * sizeof(float));
    float *y[2], *grads[2];
    assert_true(x && seed);
    fill(rng, x, (size_t)n * in);
    fill(rng, seed, (size_t)n * out);
    size_t np = (size_t)in * out + out;
    for (int own = 0; own < 2; own++) {
        pb_nn_tape *t = pb_nn_tape_new();
        assert_non_null(t);
        t->own_gemm = own && t->own_gemm;
        pb_nn_params_zero_grad(p);
        pb_nn_tensor *xin = pb_nn_buffer(t, n, in);
        assert_non_null(xin);
        memcpy(xin->data, x, (size_t)n * in * sizeof(float));
        pb_nn_tensor *h = pb_nn_linear(t, xin, pb_nn_param(t, p, wid), pb_nn_param(t, p, bid), act);
        pb_nn_tensor *yt = pb_nn_linear(t, h, pb_nn_param(t, p, wid), NULL, PB_NN_ACT_NONE);
        assert_non_null(yt);
        assert_int_equal(pb_nn_backward(t, yt, seed, &err), PB_OK);
        y[own] = malloc((size_t)n * out * sizeof(float));
        grads[own] = malloc((np + (size_t)n * in) * sizeof(float));
        assert_true(y[own] && grads[own]);
        memcpy(y[own], yt->data, (size_t)n * out * sizeof(float));
        memcpy(grads[own], p->grads, np * sizeof(float));
        memcpy(grads[own] + np, xin->grad, (size_t)n * in * sizeof(float));
        pb_nn_tape_free(t);
    }
    if (memcmp(y[0], y[1], (size_t)n * out * sizeof(float)) != 0 ||
        memcmp(grads[0], grads[1], (np + (size_t)n * in) * sizeof(float)) != 0)
        fail_msg("linear %dx%d->%d act %d: fused kernels differ from OpenBLAS", n, in, out, act);
    for (int own = 0; own < 2; own++) {
        free(y[own]);
        free(grads[own]);
    }
    free(x);
    free(seed);
    pb_nn_params_free(p);
}

static void test_linear_layers(void **state)
{
    (void)state;
    static const int shapes[][2] = {{768, 13},  {192, 13}, {269, 13}, {520, 13}, {1076, 13},
                                    {2080, 13}, {268, 8},  {191, 10}, {4, 5},    {29, 15},
                                    {3, 26},    {40, 26},  {12, 7}};
    pb_rng rng;
    pb_rng_seed(&rng, 13);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int act = PB_NN_ACT_NONE; act <= PB_NN_ACT_RELU; act++)
            check_linear(&rng, shapes[s][0], shapes[s][1], shapes[s][1], act);
    check_linear(&rng, 24, 13, 13, PB_NN_ACT_TANH);
}

/* With several OpenBLAS threads (its bits then depend on their number) the tape leaves every
 * product to OpenBLAS. */
static void test_threads_fall_back(void **state)
{
    (void)state;
    nn_blas_threads(2);
    pb_nn_tape *t = pb_nn_tape_new();
    assert_non_null(t);
    grid_buf g = grid_alloc((size_t)2080 * 26);
    pb_rng rng;
    pb_rng_seed(&rng, 2);
    check_product(&rng, t, &g, 1, 0, 13, 15, 2080, 0.0f);
    check_product(&rng, t, &g, 0, 0, 2080, 13, 13, 1.0f);
    check_product(&rng, t, &g, 0, 1, 2080, 13, 13, 1.0f);
    grid_free(&g);
    pb_nn_tape_free(t);
    nn_blas_threads(1);
}

/* ns per call of pb_nn_gemm and pb_nn_tape_gemm (best of 5 batches of CPU time) on the shapes
 * placeto with placeto-gnn runs at 8 devices (PB_BENCH_OWNGEMM=1). */
static double bench_ns(const pb_nn_tape *t, int ta, int tb, int m, int n, int k, grid_buf *g)
{
    int lda = ta ? m : k, ldb = tb ? k : n;
    double flop = 2.0 * m * n * k, best = 1e30;
    long reps = (long)(2e8 / (flop + 2e3)) + 1;
    for (int round = 0; round < 5; round++) {
        double t0 = pb_clock_cpu();
        for (long r = 0; r < reps; r++)
            pb_nn_tape_gemm(t, ta, tb, m, n, k, 1.0f, g->a, lda, g->b, ldb, 1.0f, g->c0, n);
        double dt = (pb_clock_cpu() - t0) / (double)reps;
        best = dt < best ? dt : best;
    }
    return best * 1e9;
}

static void bench_owngemm(void)
{
    static const int shapes[][5] = {
        /* trans_a, trans_b, m, n, k */
        {0, 0, 192, 13, 13}, {0, 0, 768, 13, 13},  {0, 0, 269, 13, 13}, {0, 0, 2080, 13, 13},
        {1, 0, 13, 13, 768}, {1, 0, 13, 13, 2080}, {0, 1, 768, 13, 13}, {0, 1, 2080, 13, 13},
        {1, 0, 104, 208, 4}, {1, 0, 208, 104, 4},  {1, 0, 104, 8, 4}};
    pb_nn_tape *t = pb_nn_tape_new();
    grid_buf g = grid_alloc((size_t)2080 * 208);
    pb_rng rng;
    pb_rng_seed(&rng, 1);
    fill(&rng, g.a, (size_t)2080 * 208);
    fill(&rng, g.b, (size_t)2080 * 208);
    fill(&rng, g.c0, (size_t)2080 * 208);
    printf("| op(A) op(B) | m x n x k | OpenBLAS ns | tape ns |\n|---|--:|--:|--:|\n");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int *x = shapes[s];
        double blas = bench_ns(NULL, x[0], x[1], x[2], x[3], x[4], &g);
        double own = bench_ns(t, x[0], x[1], x[2], x[3], x[4], &g);
        printf("| %s%s | %d x %d x %d | %.0f | %.0f |\n", x[0] ? "T" : "N", x[1] ? "T" : "N", x[2],
               x[3], x[4], blas, own);
    }
    static const int layers[][3] = {{192, 13, 13}, {768, 13, 13}, {264, 13, 13}, {2076, 13, 13}};
    printf("\n| linear, bias, ReLU | n x in x out | OpenBLAS ns | fused ns |\n|---|--:|--:|--:|\n");
    for (size_t s = 0; s < sizeof layers / sizeof layers[0]; s++) {
        int n = layers[s][0], in = layers[s][1], out = layers[s][2];
        double best[2] = {1e30, 1e30};
        long reps = (long)(2e8 / (2.0 * n * in * out)) + 1;
        for (int round = 0; round < 10; round++) {
            int fused = round % 2;
            double t0 = pb_clock_cpu();
            for (long r = 0; r < reps; r++) {
                if (fused) {
                    nn_fused_linear(nn_cpu_isa(), n, in, out, g.a, g.b, g.c1, 1, g.c0);
                    continue;
                }
                for (int i = 0; i < n; i++)
                    memcpy(g.c0 + (size_t)i * out, g.c1, (size_t)out * sizeof(float));
                pb_nn_gemm(0, 0, n, out, in, 1.0f, g.a, in, g.b, out, 1.0f, g.c0, out);
                nn_elem_activate(PB_NN_ACT_RELU, g.c0, (size_t)n * out);
            }
            double dt = (pb_clock_cpu() - t0) / (double)reps;
            best[fused] = dt < best[fused] ? dt : best[fused];
        }
        printf("| | %d x %d x %d | %.0f | %.0f |\n", n, in, out, best[0] * 1e9, best[1] * 1e9);
    }
    grid_free(&g);
    pb_nn_tape_free(t);
}

int main(void)
{
    nn_blas_threads(1); /* as runs use OpenBLAS (place.c) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),       cmocka_unit_test(test_isa_versions),
        cmocka_unit_test(test_rows_grid),     cmocka_unit_test(test_sums_grid),
        cmocka_unit_test(test_linear_layers), cmocka_unit_test(test_threads_fall_back),
    };
    if (!haswell_core())
        printf("OPENBLAS_CORETYPE is not Haswell: the tape falls back to OpenBLAS\n");
    const char *bench = getenv("PB_BENCH_OWNGEMM");
    if (bench && strcmp(bench, "1") == 0)
        bench_owngemm();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
