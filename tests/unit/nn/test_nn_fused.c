/* test_nn_fused.c — the fused dense-layer kernels (nn_fused.c): every ISA version the processor
 * runs gives the bits of the portable C version and of the OpenBLAS path (bias copied, sgemm with
 * beta 1, ReLU pass) on the layer shapes of the placers and on awkward ones; a hand-checked
 * case; the FMA peak probe.  With PB_BENCH_FUSED=1 it also prints timings of both paths. */
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
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fused_by_hand),
        cmocka_unit_test(test_fused_matches_portable_and_openblas),
        cmocka_unit_test(test_fused_grid),
        cmocka_unit_test(test_peak_probe),
        cmocka_unit_test(test_tape_flop_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
