/* test_nn_fastmath.c — the fast activations and kernels of the PB_NN_MATH_FAST LSTM
 * (nn_fastmath.c, nn_fused.c): every ISA version the processor runs gives the bits of portable
 * C on a grid of inputs and shapes, and the approximations stay within their stated error of
 * the correctly rounded values over a dense sweep of floats. */
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

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Every 257th positive float below 100 and its negative, plus the special values: about 8.7
 * million inputs. */
static float *sweep(size_t *n)
{
    size_t cap = 2 * (0x42c80000u / 257 + 1) + 16, k = 0;
    float *x = malloc(cap * sizeof *x);
    assert_non_null(x);
    for (uint32_t b = 0; b < 0x42c80000u; b += 257) {
        x[k++] = from_bits(b);
        x[k++] = from_bits(b | 0x80000000u);
    }
    const float special[] = {INFINITY, -INFINITY, 1e30f,   -1e30f, 88.0f, -87.0f, 88.5f,
                             -87.5f,   0.625f,    -0.625f, 9.5f,   -9.5f, 1e-40f, -1e-40f};
    for (size_t s = 0; s < sizeof special / sizeof special[0]; s++)
        x[k++] = special[s];
    *n = k;
    return x;
}

static void expect_same_bits(const char *what, const float *a, const float *b, size_t n,
                             const float *in)
{
    for (size_t k = 0; k < n; k++)
        if (memcmp(a + k, b + k, sizeof(float)) != 0)
            fail_msg("%s, entry %zu (input %.9g): %.9g against portable C %.9g", what, k,
                     in ? (double)in[k] : 0.0, (double)a[k], (double)b[k]);
}

static void test_activations_same_bits_every_isa(void **state)
{
    (void)state;
    size_t n;
    float *x = sweep(&n), *port = malloc(n * sizeof *port), *vec = malloc(n * sizeof *vec);
    assert_non_null(port);
    assert_non_null(vec);
    /* NaN too: every version clamps or selects it the same way */
    x[n - 1] = NAN;
    for (int fn = NN_FM_EXP; fn <= NN_FM_TANH; fn++) {
        nn_fast_map(NN_ISA_PORTABLE, fn, x, port, n);
        for (int isa = NN_ISA_AVX2; isa <= nn_cpu_isa(); isa++) {
            memset(vec, 0, n * sizeof *vec);
            /* odd lengths leave masked tails */
            nn_fast_map(isa, fn, x, vec, n - 3);
            nn_fast_map(isa, fn, x + n - 3, vec + n - 3, 3);
            char what[64];
            snprintf(what, sizeof what, "function %d with %s", fn, nn_cpu_isa_name(isa));
            expect_same_bits(what, vec, port, n, x);
        }
    }
    free(x);
    free(port);
    free(vec);
}

/* ulps between y and the exact value r, in units of the float spacing at r (subnormal spacing
 * below the normal range). */
static double ulp_error(float y, double r)
{
    double a = fabs(r);
    int e;
    frexp(a < 1.1754943508222875e-38 ? 1.1754943508222875e-38 : a, &e);
    return fabs((double)y - r) / ldexp(1.0, e - 24);
}

/*
 * The bounds, measured on this sweep and explained (nn_fastmath.c): the polynomials' own error is
 * 3.1e-9 (exp) and 4.1e-9 (tanh) relative, 0.05 ulp; the rest is float rounding of the steps.
 * exp: the product p 2^n and p's last addition round (0.5 + 0.5 ulp at most): bound 1 ulp.
 * sigmoid: exp's error, then 1 + e and the division each round: bound 2.5 ulp; libm's expf with
 *   the same formula (the libm path's nn_elem_sigmoid) measures 2.26 ulp on this sweep.
 * tanh: polynomial branch 1 ulp; 1 - 2/(e^2a + 1) from a = 0.625 on, where 2/(e+1) < 0.45 and
 *   its error counts at most 0.45/0.55 of an ulp of the result: bound 1.5 ulp.
 * libm's expf and tanhf are within 1 ulp of the exact value, so the difference to them is
 * bounded by the sum.
 */
static void test_activation_error_bounds(void **state)
{
    (void)state;
    size_t n;
    float *x = sweep(&n), *y = malloc(n * sizeof *y);
    assert_non_null(y);
    const double bound[3] = {1.0, 2.5, 1.5};
    const char *name[3] = {"exp", "sigmoid", "tanh"};
    for (int fn = NN_FM_EXP; fn <= NN_FM_TANH; fn++) {
        nn_fast_map(NN_ISA_PORTABLE, fn, x, y, n);
        double worst = 0, worst_libm = 0, at = 0;
        size_t checked = 0;
        for (size_t k = 0; k < n; k++) {
            double v = x[k], exact;
            float libm;
            if (!isfinite(v))
                continue;
            if (fn == NN_FM_EXP) {
                if (v < -87.0 || v > 88.0)
                    continue;
                exact = exp(v);
                libm = expf(x[k]);
            } else if (fn == NN_FM_SIGMOID) {
                if (v < -87.0)
                    continue;
                exact = 1 / (1 + exp(-v));
                libm = 1 / (1 + expf(-x[k]));
            } else {
                exact = tanh(v);
                libm = tanhf(x[k]);
            }
            checked++;
            double e = ulp_error(y[k], exact);
            if (e > worst) {
                worst = e;
                at = v;
            }
            double d = ulp_error(y[k], (double)libm);
            worst_libm = d > worst_libm ? d : worst_libm;
        }
        print_message("%s: %zu inputs, max %.3f ulp from the exact value (at %.9g), %.3f ulp from "
                      "libm\n",
                      name[fn], checked, worst, at, worst_libm);
        if (worst > bound[fn])
            fail_msg("%s: %.3f ulp at %.9g, bound %.1f", name[fn], worst, at, bound[fn]);
        if (worst_libm > bound[fn] + 1.0)
            fail_msg("%s: %.3f ulp from libm, bound %.1f", name[fn], worst_libm, bound[fn] + 1);
    }
    /* the clamped ends: saturation, no overflow, no NaN */
    float ends[6] = {100.0f, -100.0f, INFINITY, -INFINITY, 1e-30f, -1e-30f}, out[6];
    nn_fast_map(NN_ISA_PORTABLE, NN_FM_TANH, ends, out, 6);
    assert_true(out[0] == 1.0f && out[1] == -1.0f && out[2] == 1.0f && out[3] == -1.0f);
    assert_true(out[4] == 1e-30f && out[5] == -1e-30f); /* tanh x = x below a float's precision */
    nn_fast_map(NN_ISA_PORTABLE, NN_FM_SIGMOID, ends, out, 6);
    assert_true(out[0] == 1.0f && out[2] == 1.0f && out[1] > 0.0f && out[1] < 2e-38f);
    assert_true(out[4] == 0.5f && out[5] == 0.5f);
    free(x);
    free(y);
}

static float *random_floats(pb_rng *rng, size_t count, double scale)
{
    float *v = malloc((count ? count : 1) * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < count; i++)
        v[i] = (float)(scale * (2 * pb_rng_uniform(rng) - 1));
    return v;
}

/* The LSTM rows forward and backward, hidden sizes with and without tails. */
static void test_lstm_rows_same_bits_every_isa(void **state)
{
    (void)state;
    pb_rng rng;
    pb_rng_seed(&rng, 7);
    const int sizes[] = {1, 3, 8, 15, 16, 17, 33, 64, 100};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
        int n = sizes[q];
        float *z = random_floats(&rng, 4 * (size_t)n, 6), *c = random_floats(&rng, (size_t)n, 3);
        float *dh = random_floats(&rng, (size_t)n, 1), *dc0 = random_floats(&rng, (size_t)n, 1);
        float out[2][7][400];
        for (int isa = NN_ISA_PORTABLE; isa <= nn_cpu_isa(); isa++) {
            int v = isa != NN_ISA_PORTABLE;
            float *g = out[v][0], *cn = out[v][1], *tc = out[v][2], *h = out[v][3];
            float *dcn = out[v][4], *dc = out[v][5], *dz = out[v][6];
            nn_fast_lstm_row(isa, n, z, c, g, cn, tc, h);
            memcpy(dcn, dc0, (size_t)n * sizeof(float));
            memcpy(dc, dc0, (size_t)n * sizeof(float));
            nn_fast_lstm_grad_row(isa, n, g, tc, c, dh, dcn, dc, dz);
            for (int a = 0; v && a < 7; a++)
                expect_same_bits(nn_cpu_isa_name(isa), out[1][a], out[0][a],
                                 a == 0 || a == 6 ? 4 * (size_t)n : (size_t)n, NULL);
        }
        /* against the formulas in double precision: the cell's value to a few ulp */
        for (int j = 0; j < n; j++) {
            double ig = 1 / (1 + exp(-(double)z[j])), fg = 1 / (1 + exp(-(double)z[n + j]));
            double gg = tanh((double)z[2 * n + j]), og = 1 / (1 + exp(-(double)z[3 * n + j]));
            double cn = fg * c[j] + ig * gg, h = og * tanh(cn);
            assert_true(fabs(out[0][1][j] - cn) <= 1e-6 * (1 + fabs(cn)));
            assert_true(fabs(out[0][3][j] - h) <= 1e-6 * (1 + fabs(h)));
        }
        free(z);
        free(c);
        free(dh);
        free(dc0);
    }
}

/* The product kernels with and without lists of columns: every ISA gives portable C's bits,
 * and leaving out columns that are 0 in every row changes no bit. */
static void test_kernels_with_column_lists(void **state)
{
    (void)state;
    pb_rng rng;
    pb_rng_seed(&rng, 11);
    const int shapes[][3] = {{1, 99, 256}, {3, 99, 256}, {21, 99, 256}, {32, 256, 64},
                             {5, 31, 2},   {7, 40, 17},  {4, 70, 33},   {9, 13, 100}};
    for (size_t q = 0; q < sizeof shapes / sizeof shapes[0]; q++) {
        int n = shapes[q][0], in = shapes[q][1], out = shapes[q][2];
        float *x = random_floats(&rng, (size_t)n * in, 1);
        float *w = random_floats(&rng, (size_t)in * out, 1);
        float *b = random_floats(&rng, (size_t)out, 1);
        float *dz = random_floats(&rng, (size_t)n * out, 1);
        int *ks = malloc((size_t)in * sizeof *ks), nk = 0;
        for (int k = 0; k < in; k++) { /* about a third of the columns kept, the others 0 */
            if (k % 3 == 0 || k == in - 1)
                ks[nk++] = k;
            else
                for (int i = 0; i < n; i++)
                    x[(size_t)i * in + k] = 0.0f;
        }
        size_t ny = (size_t)n * out, nw = (size_t)in * out;
        float *y[3], *dw[3];
        for (int v = 0; v < 3; v++) {
            y[v] = malloc(ny * sizeof(float));
            dw[v] = calloc(nw, sizeof(float));
        }
        /* 0: portable, all columns; 1: portable, the list; 2: each ISA, the list */
        nn_fused_linear(NN_ISA_PORTABLE, n, in, out, x, w, b, 0, y[0]);
        nn_fused_weight_grad(NN_ISA_PORTABLE, n, in, out, x, dz, dw[0]);
        for (int isa = NN_ISA_PORTABLE; isa <= nn_cpu_isa(); isa++) {
            int v = isa == NN_ISA_PORTABLE ? 1 : 2;
            memset(dw[v], 0, nw * sizeof(float));
            nn_fused_linear_cols(isa, n, in, out, x, w, b, 0, y[v], ks, nk);
            nn_fused_weight_grad_rows(isa, n, in, out, x, dz, dw[v], ks, nk);
            expect_same_bits(nn_cpu_isa_name(isa), y[v], y[0], ny, NULL);
            expect_same_bits(nn_cpu_isa_name(isa), dw[v], dw[0], nw, NULL);
        }
        for (int v = 0; v < 3; v++) {
            free(y[v]);
            free(dw[v]);
        }
        free(x);
        free(w);
        free(b);
        free(dz);
        free(ks);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_activations_same_bits_every_isa),
        cmocka_unit_test(test_activation_error_bounds),
        cmocka_unit_test(test_lstm_rows_same_bits_every_isa),
        cmocka_unit_test(test_kernels_with_column_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
