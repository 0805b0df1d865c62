/* test_nn_fused.c — the fused dense-layer kernels (nn_fused.c): every ISA version the processor
 * runs gives the bits of the portable C version and of the OpenBLAS path (bias copied, sgemm with
 * beta 1, ReLU pass; for the gradients sgemm TN and NT with beta 1) on the layer shapes of the
 * placers and on awkward ones; hand-checked cases; the FMA peak probe.  With PB_BENCH_FUSED=1 it
 * also prints timings of both paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "nn/nn_internal.h"
#include "placebench.h"

#include <time.h>

/* The path pb_nn_linear took before the fused kernels: bias rows, sgemm adding onto them,
 * then the activation over the whole output. */
static void reference_linear(int n, int in, int out, const float *x, const float *w, const float *b,
                             int relu, float *y)
{
    for (int i = 0; b && i < n; i++)
        memcpy(y + (size_t)i * out, b, (size_t)out * sizeof(float));
    pb_nn_gemm(0, 0, n, out, in, 1.0f, x, in, w, out, b ? 1.0f : 0.0f, y, out);
    nn_elem_activate(relu ? PB_NN_ACT_RELU : PB_NN_ACT_NONE, y, (size_t)n * out);
}

/* OpenBLAS's kernels sum in the fused kernels' order for at most NN_FUSED_MAX_ROWS rows on the
 * Haswell core type the project's environment sets (OPENBLAS_CORETYPE=Haswell, also on AVX-512
 * machines); other core types have kernels of their own, whose order is not asserted. */
static int openblas_order(void)
{
    const char *core = getenv("OPENBLAS_CORETYPE");
    return core && strcmp(core, "Haswell") == 0;
}

static float *random_floats(pb_rng *rng, size_t count)
{
    float *v = malloc((count ? count : 1) * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < count; i++)
        v[i] = (float)(2 * pb_rng_uniform(rng) - 1);
    return v;
}

/* Layer shapes: the placeto policy at 3/5/8 devices (d = 8, 10, 13: aggregators d x d on n - 1
 * rows, classifier 4d -> 8d -> 4d -> devices on 1 row or a batch), GraphSAGE-like widths, and
 * odd sizes that leave masked tails and row remainders. */
static const int shapes[][3] = {
    {519, 13, 13}, {3, 13, 13}, {1, 52, 104}, {1, 104, 52},  {1, 52, 8},  {16, 52, 104},
    {16, 104, 52}, {16, 52, 8}, {268, 8, 8},  {191, 10, 10}, {1, 40, 80}, {7, 5, 3},
    {5, 1, 17},    {2, 33, 31}, {9, 16, 16},  {6, 64, 128},  {1, 1, 1},   {4, 3, 129}};

static void check_shape(pb_rng *rng, int n, int in, int out, int relu, int bias)
{
    float *x = random_floats(rng, (size_t)n * in), *w = random_floats(rng, (size_t)in * out);
    float *b = bias ? random_floats(rng, (size_t)out) : NULL;
    size_t bytes = (size_t)n * out * sizeof(float);
    float *want = malloc(bytes), *port = malloc(bytes), *got = malloc(bytes);
    assert_true(want && port && got);
    nn_fused_linear(NN_ISA_PORTABLE, n, in, out, x, w, b, relu, port);
    if (n <= NN_FUSED_MAX_ROWS && openblas_order()) {
        reference_linear(n, in, out, x, w, b, relu, want);
        if (memcmp(port, want, bytes) != 0)
            fail_msg("portable %dx%d->%d relu %d bias %d differs from OpenBLAS", n, in, out, relu,
                     bias);
    } else {
        /* Other orders: the same values up to rounding. */
        reference_linear(n, in, out, x, w, b, relu, want);
        for (int k = 0; k < n * out; k++)
            if (fabsf(port[k] - want[k]) > 1e-5f * (float)in)
                fail_msg("portable %dx%d->%d entry %d: %g, OpenBLAS %g", n, in, out, k,
                         (double)port[k], (double)want[k]);
    }
    for (int isa = NN_ISA_AVX2; isa <= nn_cpu_isa(); isa++) {
        memset(got, 0xff, bytes);
        nn_fused_linear(isa, n, in, out, x, w, b, relu, got);
        if (memcmp(got, port, bytes) != 0)
            fail_msg("%s %dx%d->%d relu %d bias %d differs from portable", nn_cpu_isa_name(isa), n,
                     in, out, relu, bias);
    }
    free(x);
    free(w);
    free(b);
    free(want);
    free(port);
    free(got);
}

static void test_fused_matches_portable_and_openblas(void **state)
{
    (void)state;
    pb_rng rng;
    pb_rng_seed(&rng, 21);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int relu = 0; relu < 2; relu++)
            for (int bias = 0; bias < 2; bias++)
                check_shape(&rng, shapes[s][0], shapes[s][1], shapes[s][2], relu, bias);
    if (!openblas_order())
        printf("OPENBLAS_CORETYPE is not Haswell: bit-identity with OpenBLAS not checked\n");
}

/* Every shape pb_nn_linear sends to the fused kernel, up to 130 wide: OpenBLAS's bits. */
static void test_fused_grid(void **state)
{
    (void)state;
    pb_rng rng;
    pb_rng_seed(&rng, 3);
    for (int n = 1; n <= NN_FUSED_MAX_ROWS; n++)
        for (int in = 1; in <= 130; in += 3)
            for (int out = 1; out <= 130; out += 5)
                check_shape(&rng, n, in, out, (in + out) % 2, out % 3 != 0);
}

/* The gradient products as pb_nn_linear's backward gave them before the fused kernels. */
static void reference_grads(int n, int in, int out, const float *x, const float *w, const float *dz,
                            float *dw, float *dx)
{
    pb_nn_gemm(1, 0, in, out, n, 1.0f, x, in, dz, out, 1.0f, dw, out);
    pb_nn_gemm(0, 1, n, in, out, 1.0f, dz, out, w, out, 1.0f, dx, in);
}

/* dW and dx (accumulated onto random gradients) of every ISA version against portable C, and
 * of portable C against OpenBLAS for the rows each kernel is used for. */
static void check_grads(pb_rng *rng, int n, int in, int out)
{
    float *x = random_floats(rng, (size_t)n * in), *w = random_floats(rng, (size_t)in * out);
    float *dz = random_floats(rng, (size_t)n * out);
    float *dw0 = random_floats(rng, (size_t)in * out), *dx0 = random_floats(rng, (size_t)n * in);
    size_t wb = (size_t)in * out * sizeof(float), xb = (size_t)n * in * sizeof(float);
    float *dw_ref = malloc(wb), *dx_ref = malloc(xb), *dw_port = malloc(wb), *dx_port = malloc(xb),
          *dw = malloc(wb), *dx = malloc(xb);
    assert_true(dw_ref && dx_ref && dw_port && dx_port && dw && dx);
    memcpy(dw_ref, dw0, wb);
    memcpy(dx_ref, dx0, xb);
    reference_grads(n, in, out, x, w, dz, dw_ref, dx_ref);
    memcpy(dw_port, dw0, wb);
    memcpy(dx_port, dx0, xb);
    nn_fused_weight_grad(NN_ISA_PORTABLE, n, in, out, x, dz, dw_port);
    nn_fused_input_grad(NN_ISA_PORTABLE, n, in, out, dz, w, dx_port);
    if (openblas_order() && n <= NN_FUSED_WGRAD_MAX_ROWS && memcmp(dw_port, dw_ref, wb) != 0)
        fail_msg("dW of %d rows %dx%d differs from OpenBLAS", n, in, out);
    if (openblas_order() && n <= NN_FUSED_MAX_ROWS && memcmp(dx_port, dx_ref, xb) != 0)
        fail_msg("dx of %d rows %dx%d differs from OpenBLAS", n, in, out);
    for (int k = 0; k < in * out; k++)
        if (fabsf(dw_port[k] - dw_ref[k]) > 1e-5f * (float)(n + 1))
            fail_msg("dW of %d rows %dx%d entry %d: %g, OpenBLAS %g", n, in, out, k,
                     (double)dw_port[k], (double)dw_ref[k]);
    for (int k = 0; k < n * in; k++)
        if (fabsf(dx_port[k] - dx_ref[k]) > 1e-5f * (float)(out + 1))
            fail_msg("dx of %d rows %dx%d entry %d: %g, OpenBLAS %g", n, in, out, k,
                     (double)dx_port[k], (double)dx_ref[k]);
    for (int isa = NN_ISA_AVX2; isa <= nn_cpu_isa(); isa++) {
        memcpy(dw, dw0, wb);
        memcpy(dx, dx0, xb);
        nn_fused_weight_grad(isa, n, in, out, x, dz, dw);
        nn_fused_input_grad(isa, n, in, out, dz, w, dx);
        if (memcmp(dw, dw_port, wb) != 0 || memcmp(dx, dx_port, xb) != 0)
            fail_msg("%s gradients of %d rows %dx%d differ from portable", nn_cpu_isa_name(isa), n,
                     in, out);
    }
    free(x);
    free(w);
    free(dz);
    free(dw0);
    free(dx0);
    free(dw_ref);
    free(dx_ref);
    free(dw_port);
    free(dx_port);
    free(dw);
    free(dx);
}

/* Every shape pb_nn_linear's backward sends to the fused kernels, up to 130 wide, and a few
 * with more rows (the ISA versions against portable C). */
static void test_fused_grads_grid(void **state)
{
    (void)state;
    pb_rng rng;
    pb_rng_seed(&rng, 5);
    for (int n = 1; n <= NN_FUSED_WGRAD_MAX_ROWS + 2; n++)
        for (int in = 1; in <= 130; in += 7)
            for (int out = 1; out <= 130; out += 6)
                check_grads(&rng, n, in, out);
    if (!openblas_order())
        printf("OPENBLAS_CORETYPE is not Haswell: bit-identity with OpenBLAS not checked\n");
}

/* x = [1 -2; 3 0.5], dz = [1 0 -1; 2 1 0.5], W = [1 2 -1; 0.5 -1 4], onto dW = 1 and dx = 0:
 * x^T dz = [1*1 + 3*2, 0 + 3, -1 + 1.5; -2 + 1, 0 + 0.5, 2 + 0.25] = [7 3 0.5; -1 0.5 2.25],
 * so dW = [8 4 1.5; 0 1.5 3.25]; dz W^T row 1 = [1 + 0 + 1, 0.5 + 0 - 4] = [2 -3.5], row 2 =
 * [2 + 2 - 0.5, 1 - 1 + 2] = [3.5 2]. */
static void test_fused_grads_by_hand(void **state)
{
    (void)state;
    const float x[] = {1, -2, 3, 0.5f}, dz[] = {1, 0, -1, 2, 1, 0.5f};
    const float w[] = {1, 2, -1, 0.5f, -1, 4};
    const float want_dw[] = {8, 4, 1.5f, 0, 1.5f, 3.25f}, want_dx[] = {2, -3.5f, 3.5f, 2};
    for (int isa = NN_ISA_PORTABLE; isa <= nn_cpu_isa(); isa++) {
        float dw[6] = {1, 1, 1, 1, 1, 1}, dx[4] = {0};
        nn_fused_weight_grad(isa, 2, 2, 3, x, dz, dw);
        nn_fused_input_grad(isa, 2, 2, 3, dz, w, dx);
        assert_memory_equal(dw, want_dw, sizeof want_dw);
        assert_memory_equal(dx, want_dx, sizeof want_dx);
    }
}

/* x = [1 -2; 3 0.5], W = [1 2 -1; 0.5 -1 4], b = [0.25 -3 1]:
 * x W = [0 4 -9; 3.25 5.5 -1], + b = [0.25 1 -8; 3.5 2.5 0], ReLU keeps the non-negatives. */
static void test_fused_by_hand(void **state)
{
    (void)state;
    const float x[] = {1, -2, 3, 0.5f}, w[] = {1, 2, -1, 0.5f, -1, 4}, b[] = {0.25f, -3, 1};
    const float want[] = {0.25f, 1, 0, 3.5f, 2.5f, 0}, want_lin[] = {0.25f, 1, -8, 3.5f, 2.5f, 0};
    for (int isa = NN_ISA_PORTABLE; isa <= nn_cpu_isa(); isa++) {
        float y[6];
        nn_fused_linear(isa, 2, 2, 3, x, w, b, 1, y);
        assert_memory_equal(y, want, sizeof want);
        nn_fused_linear(isa, 2, 2, 3, x, w, b, 0, y);
        assert_memory_equal(y, want_lin, sizeof want_lin);
    }
}

/* The peak probe runs and gives a positive rate for the processor's ISA, none for a wider one. */
static void test_peak_probe(void **state)
{
    (void)state;
    int isa = nn_cpu_isa();
    assert_true(nn_cpu_peak_gflops(isa, 0.02) > 0);
    if (isa < NN_ISA_AVX512)
        assert_true(nn_cpu_peak_gflops(isa + 1, 0.02) == 0);
}

/* FLOP counts by hand: a 2x3 input through a 3x4 linear layer is 2*2*4*3 = 48 FLOPs forward;
 * backward with W and b trainable and x constant computes dW only (48 more); a 4x2 by 2x5
 * matmul of two parameters is 80 forward and 2 * 80 backward (dA and dB).  Resets keep the
 * count. */
static void test_tape_flop_counts(void **state)
{
    (void)state;
    pb_error err;
    pb_nn_params *p = pb_nn_params_new();
    pb_nn_tape *t = pb_nn_tape_new();
    assert_true(p && t);
    int w = pb_nn_params_add(p, "w", 3, 4, PB_NN_INIT_ONES, NULL, &err);
    int b = pb_nn_params_add(p, "b", 1, 4, PB_NN_INIT_ONES, NULL, &err);
    int a = pb_nn_params_add(p, "a", 4, 2, PB_NN_INIT_ONES, NULL, &err);
    int c = pb_nn_params_add(p, "c", 2, 5, PB_NN_INIT_ONES, NULL, &err);
    assert_true(w >= 0 && b >= 0 && a >= 0 && c >= 0);
    const float xv[6] = {1, 2, 3, 4, 5, 6};
    pb_nn_tape_reset(t, 1);
    pb_nn_tensor *y = pb_nn_linear(t, pb_nn_constant(t, 2, 3, xv), pb_nn_param(t, p, w),
                                   pb_nn_param(t, p, b), PB_NN_ACT_RELU);
    assert_true(pb_nn_tape_flop(t) == 48);
    assert_int_equal(pb_nn_backward(t, y, NULL, &err), PB_OK);
    assert_true(pb_nn_tape_flop(t) == 96);
    pb_nn_tape_reset(t, 1);
    pb_nn_tensor *m = pb_nn_matmul(t, pb_nn_param(t, p, a), pb_nn_param(t, p, c));
    assert_true(pb_nn_tape_flop(t) == 96 + 80);
    assert_int_equal(pb_nn_backward(t, m, NULL, &err), PB_OK);
    assert_true(pb_nn_tape_flop(t) == 96 + 80 + 160);
    pb_nn_tape_count(t, 4);
    assert_true(pb_nn_tape_flop(t) == 340);
    pb_nn_tape_free(t);
    pb_nn_params_free(p);
}

/* Nanoseconds per call of f over reps calls, best of 5 rounds (thread CPU time). */
static double bench_ns(int which, int isa, int reps, int n, int in, int out, const float *x,
                       const float *w, const float *b, float *y)
{
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = pb_clock_seconds(CLOCK_THREAD_CPUTIME_ID);
        for (int r = 0; r < reps; r++) {
            if (which)
                nn_fused_linear(isa, n, in, out, x, w, b, 1, y);
            else
                reference_linear(n, in, out, x, w, b, 1, y);
        }
        double dt = (pb_clock_seconds(CLOCK_THREAD_CPUTIME_ID) - t0) / reps * 1e9;
        best = dt < best ? dt : best;
    }
    return best;
}

/* Nanoseconds per call of one backward product of n rows (part 0: dW, 1: dx; which 0:
 * OpenBLAS, 1: fused with isa), best of 5 rounds. */
static double bench_grads_ns(int part, int which, int isa, int reps, int n, int in, int out,
                             const float *x, const float *w, const float *dz, float *dw, float *dx)
{
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = pb_clock_seconds(CLOCK_THREAD_CPUTIME_ID);
        for (int r = 0; r < reps; r++) {
            if (part == 0 && which)
                nn_fused_weight_grad(isa, n, in, out, x, dz, dw);
            else if (part == 0)
                pb_nn_gemm(1, 0, in, out, n, 1.0f, x, in, dz, out, 1.0f, dw, out);
            else if (which)
                nn_fused_input_grad(isa, n, in, out, dz, w, dx);
            else
                pb_nn_gemm(0, 1, n, in, out, 1.0f, dz, out, w, out, 1.0f, dx, in);
        }
        double dt = (pb_clock_seconds(CLOCK_THREAD_CPUTIME_ID) - t0) / reps * 1e9;
        best = dt < best ? dt : best;
    }
    return best;
}

/* The backward products of the placeto policy's small layers (n = 1 to 4 steps, d = 8 to 13;
 * classifier 4d -> 8d -> 4d -> devices), OpenBLAS against the fused kernels. */
static void bench_grads(void)
{
    static const int gshapes[][3] = {{1, 13, 13},  {3, 13, 13},  {4, 13, 13},  {1, 52, 104},
                                     {3, 52, 104}, {1, 104, 52}, {3, 104, 52}, {3, 52, 8},
                                     {4, 52, 104}, {7, 52, 104}, {2, 8, 8},    {3, 10, 10}};
    pb_rng rng;
    pb_rng_seed(&rng, 2);
    const char *isa = nn_cpu_isa_name(nn_cpu_isa());
    printf("\nbackward products, accumulated\n\n");
    printf("| n | in | out | dW OpenBLAS (ns) | dW fused %s (ns) | dx OpenBLAS (ns) | dx fused %s "
           "(ns) |\n",
           isa, isa);
    printf("|--:|--:|--:|--:|--:|--:|--:|\n");
    for (size_t s = 0; s < sizeof gshapes / sizeof gshapes[0]; s++) {
        int n = gshapes[s][0], in = gshapes[s][1], out = gshapes[s][2], top = nn_cpu_isa();
        float *x = random_floats(&rng, (size_t)n * in), *w = random_floats(&rng, (size_t)in * out);
        float *dz = random_floats(&rng, (size_t)n * out);
        float *dw = random_floats(&rng, (size_t)in * out),
              *dx = random_floats(&rng, (size_t)n * in);
        int reps = (int)(2e6 / ((double)n * in * out + 100)) + 10;
        double t[4];
        for (int k = 0; k < 4; k++)
            t[k] = bench_grads_ns(k / 2, k % 2, top, reps, n, in, out, x, w, dz, dw, dx);
        printf("| %d | %d | %d | %.0f | %.0f | %.0f | %.0f |\n", n, in, out, t[0], t[1], t[2],
               t[3]);
        free(x);
        free(w);
        free(dz);
        free(dw);
        free(dx);
    }
}

static void bench_fused(void)
{
    pb_rng rng;
    pb_rng_seed(&rng, 1);
    printf("| n | in | out | OpenBLAS (ns) | fused %s (ns) | fused avx2 (ns) | portable (ns) |\n",
           nn_cpu_isa_name(nn_cpu_isa()));
    printf("|--:|--:|--:|--:|--:|--:|--:|\n");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int n = shapes[s][0], in = shapes[s][1], out = shapes[s][2];
        float *x = random_floats(&rng, (size_t)n * in), *w = random_floats(&rng, (size_t)in * out);
        float *b = random_floats(&rng, (size_t)out), *y = malloc((size_t)n * out * sizeof *y);
        int reps = (int)(2e6 / ((double)n * in * out + 100)) + 10;
        printf("| %d | %d | %d | %.0f | %.0f | %.0f | %.0f |\n", n, in, out,
               bench_ns(0, 0, reps, n, in, out, x, w, b, y),
               bench_ns(1, nn_cpu_isa(), reps, n, in, out, x, w, b, y),
               bench_ns(1, NN_ISA_AVX2, reps, n, in, out, x, w, b, y),
               bench_ns(1, NN_ISA_PORTABLE, reps, n, in, out, x, w, b, y));
        free(x);
        free(w);
        free(b);
        free(y);
    }
}

int main(void)
{
    nn_blas_threads(1);
    if (getenv("PB_BENCH_FUSED")) {
        bench_fused();
        bench_grads();
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fused_by_hand),
        cmocka_unit_test(test_fused_matches_portable_and_openblas),
        cmocka_unit_test(test_fused_grid),
        cmocka_unit_test(test_fused_grads_by_hand),
        cmocka_unit_test(test_fused_grads_grid),
        cmocka_unit_test(test_peak_probe),
        cmocka_unit_test(test_tape_flop_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
