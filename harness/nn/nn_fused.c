/* nn_fused.c — the small dense layer y = act(x W + b) in one pass over the rows (product, bias,
 * ReLU, no separate copies), and its weight and input gradients for few rows, for AVX-512,
 * AVX2+FMA and portable C, picked at run time. */
#include "nn_internal.h"

#include <math.h>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define NN_FUSED_X86 1
#else
#define NN_FUSED_X86 0
#endif

/*
 * Arithmetic order, the same in every version: each output starts at 0, takes x[k] w[k][j] for
 * k = 0, 1, ... with one fused multiply-add each (one rounding per step), then gets the bias
 * added (one rounding), then the ReLU.  That is the order OpenBLAS's Haswell kernel uses for
 * the same call (the bias copied into y, then y = 1 * (x W) + 1 * y), so results are those of
 * the OpenBLAS path bit for bit (test_nn checks it), and the three versions agree with each
 * other on every processor.  Rows go four at a time so that one load of a weight row serves
 * four outputs; columns in vectors of the ISA's width, the last one masked (no padding copies).
 */

/* Portable C: fmaf rounds once, like the vector FMAs. */
static void nn_fused_linear_c(int n, int in, int out, const float *x, const float *w,
                              const float *b, int relu, float *y)
{
    for (int i = 0; i < n; i++) {
        const float *xi = x + (size_t)i * in;
        float *yi = y + (size_t)i * out;
        for (int j = 0; j < out; j++) {
            float acc = 0.0f;
            for (int k = 0; k < in; k++)
                acc = fmaf(xi[k], w[(size_t)k * out + j], acc);
            if (b)
                acc += b[j];
            yi[j] = relu ? (acc > 0.0f ? acc : 0.0f) : acc;
        }
    }
}

#if NN_FUSED_X86
#define NN_FUSED_ROWS 4

__attribute__((target("avx512f"))) static void nn_fused_linear_512(int n, int in, int out,
                                                                   const float *x, const float *w,
                                                                   const float *b, int relu,
                                                                   float *y)
{
    const __m512 zero = _mm512_setzero_ps();
    for (int j0 = 0; j0 < out; j0 += 16) {
        int width = out - j0 < 16 ? out - j0 : 16;
        __mmask16 m = (__mmask16)((1u << width) - 1u);
        __m512 bias = b ? _mm512_maskz_loadu_ps(m, b + j0) : zero;
        int i = 0;
        for (; i + NN_FUSED_ROWS <= n; i += NN_FUSED_ROWS) {
            __m512 acc[NN_FUSED_ROWS] = {zero, zero, zero, zero};
            const float *xi = x + (size_t)i * in;
            for (int k = 0; k < in; k++) {
                __m512 wk = _mm512_maskz_loadu_ps(m, w + (size_t)k * out + j0);
                for (int r = 0; r < NN_FUSED_ROWS; r++)
                    acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(xi[(size_t)r * in + k]), wk, acc[r]);
            }
            for (int r = 0; r < NN_FUSED_ROWS; r++) {
                __m512 v = b ? _mm512_add_ps(acc[r], bias) : acc[r];
                if (relu)
                    v = _mm512_max_ps(v, zero); /* x > 0 ? x : +0, NaN to +0 */
                _mm512_mask_storeu_ps(y + (size_t)(i + r) * out + j0, m, v);
            }
        }
        for (; i < n; i++) {
            __m512 acc = zero;
            const float *xi = x + (size_t)i * in;
            for (int k = 0; k < in; k++)
                acc = _mm512_fmadd_ps(_mm512_set1_ps(xi[k]),
                                      _mm512_maskz_loadu_ps(m, w + (size_t)k * out + j0), acc);
            __m512 v = b ? _mm512_add_ps(acc, bias) : acc;
            if (relu)
                v = _mm512_max_ps(v, zero);
            _mm512_mask_storeu_ps(y + (size_t)i * out + j0, m, v);
        }
    }
}

/* Lanes below `width` set (AVX2 has no mask registers: a vector of all-ones lanes). */
__attribute__((target("avx2,fma"))) static inline __m256i nn_fused_mask8(int width)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(width), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__attribute__((target("avx2,fma"))) static void nn_fused_linear_256(int n, int in, int out,
                                                                    const float *x, const float *w,
                                                                    const float *b, int relu,
                                                                    float *y)
{
    const __m256 zero = _mm256_setzero_ps();
    for (int j0 = 0; j0 < out; j0 += 8) {
        __m256i m = nn_fused_mask8(out - j0 < 8 ? out - j0 : 8);
        __m256 bias = b ? _mm256_maskload_ps(b + j0, m) : zero;
        int i = 0;
        for (; i + NN_FUSED_ROWS <= n; i += NN_FUSED_ROWS) {
            __m256 acc[NN_FUSED_ROWS] = {zero, zero, zero, zero};
            const float *xi = x + (size_t)i * in;
            for (int k = 0; k < in; k++) {
                __m256 wk = _mm256_maskload_ps(w + (size_t)k * out + j0, m);
                for (int r = 0; r < NN_FUSED_ROWS; r++)
                    acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(xi[(size_t)r * in + k]), wk, acc[r]);
            }
            for (int r = 0; r < NN_FUSED_ROWS; r++) {
                __m256 v = b ? _mm256_add_ps(acc[r], bias) : acc[r];
                if (relu)
                    v = _mm256_max_ps(v, zero);
                _mm256_maskstore_ps(y + (size_t)(i + r) * out + j0, m, v);
            }
        }
        for (; i < n; i++) {
            __m256 acc = zero;
            const float *xi = x + (size_t)i * in;
            for (int k = 0; k < in; k++)
                acc = _mm256_fmadd_ps(_mm256_set1_ps(xi[k]),
                                      _mm256_maskload_ps(w + (size_t)k * out + j0, m), acc);
            __m256 v = b ? _mm256_add_ps(acc, bias) : acc;
            if (relu)
                v = _mm256_max_ps(v, zero);
            _mm256_maskstore_ps(y + (size_t)i * out + j0, m, v);
        }
    }
}
#endif

void nn_fused_linear(int isa, int n, int in, int out, const float *x, const float *w,
                     const float *b, int relu, float *y)
{
#if NN_FUSED_X86
    if (isa >= NN_ISA_AVX512 && nn_cpu_isa() >= NN_ISA_AVX512) {
        nn_fused_linear_512(n, in, out, x, w, b, relu, y);
        return;
    }
    if (isa >= NN_ISA_AVX2 && nn_cpu_isa() >= NN_ISA_AVX2) {
        nn_fused_linear_256(n, in, out, x, w, b, relu, y);
        return;
    }
#endif
    (void)isa;
    nn_fused_linear_c(n, in, out, x, w, b, relu, y);
}

/*
 * Backward, for few rows (README, "Fused backward"): dW += x^T dz and dx += dz W^T, each entry's
 * sum started at 0 and taken in order (rows r = 0, 1, ... for dW; outputs j = 0, 1, ... for dx)
 * by fused multiply-adds, then added to the gradient (one rounding) — the order of OpenBLAS
 * 0.3.21's Haswell sgemm for dW up to NN_FUSED_WGRAD_MAX_ROWS rows and for dx up to
 * NN_FUSED_MAX_ROWS rows (test_nn_fused checks both on a grid of shapes).
 */

static inline __attribute__((always_inline)) void
nn_fused_xgrad_body(int n, int in, int out, const float *dz, const float *w, float *dx)
{
    /* The in chains of a row are independent: the processor overlaps them. */
    for (int r = 0; r < n; r++)
        for (int i = 0; i < in; i++) {
            const float *wi = w + (size_t)i * out, *dzr = dz + (size_t)r * out;
            float acc = 0.0f;
            for (int j = 0; j < out; j++)
                acc = fmaf(dzr[j], wi[j], acc);
            dx[(size_t)r * in + i] += acc;
        }
}

static void nn_fused_wgrad_c(int n, int in, int out, const float *x, const float *dz, float *dw)
{
    for (int i = 0; i < in; i++)
        for (int j = 0; j < out; j++) {
            float acc = 0.0f;
            for (int r = 0; r < n; r++)
                acc = fmaf(x[(size_t)r * in + i], dz[(size_t)r * out + j], acc);
            dw[(size_t)i * out + j] += acc;
        }
}

static void nn_fused_xgrad_c(int n, int in, int out, const float *dz, const float *w, float *dx)
{
    nn_fused_xgrad_body(n, in, out, dz, w, dx);
}

#if NN_FUSED_X86
/* Row i of dW, one vector of outputs at a time: one chain over the rows per lane. */
__attribute__((target("avx512f"))) static void
nn_fused_wgrad_512(int n, int in, int out, const float *x, const float *dz, float *dw)
{
    for (int j0 = 0; j0 < out; j0 += 16) {
        int width = out - j0 < 16 ? out - j0 : 16;
        __mmask16 m = (__mmask16)((1u << width) - 1u);
        for (int i = 0; i < in; i++) {
            __m512 acc = _mm512_setzero_ps();
            for (int r = 0; r < n; r++)
                acc = _mm512_fmadd_ps(_mm512_set1_ps(x[(size_t)r * in + i]),
                                      _mm512_maskz_loadu_ps(m, dz + (size_t)r * out + j0), acc);
            float *d = dw + (size_t)i * out + j0;
            _mm512_mask_storeu_ps(d, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, d), acc));
        }
    }
}

__attribute__((target("avx2,fma"))) static void
nn_fused_wgrad_256(int n, int in, int out, const float *x, const float *dz, float *dw)
{
    for (int j0 = 0; j0 < out; j0 += 8) {
        __m256i m = nn_fused_mask8(out - j0 < 8 ? out - j0 : 8);
        for (int i = 0; i < in; i++) {
            __m256 acc = _mm256_setzero_ps();
            for (int r = 0; r < n; r++)
                acc = _mm256_fmadd_ps(_mm256_set1_ps(x[(size_t)r * in + i]),
                                      _mm256_maskload_ps(dz + (size_t)r * out + j0, m), acc);
            float *d = dw + (size_t)i * out + j0;
            _mm256_maskstore_ps(d, m, _mm256_add_ps(_mm256_maskload_ps(d, m), acc));
        }
    }
}

/* dx's sums run along a row of W: scalar chains, with the FMA instruction instead of libm's
 * fmaf (the same rounding). */
__attribute__((target("avx2,fma"))) static void
nn_fused_xgrad_fma(int n, int in, int out, const float *dz, const float *w, float *dx)
{
    nn_fused_xgrad_body(n, in, out, dz, w, dx);
}
#endif

void nn_fused_weight_grad(int isa, int n, int in, int out, const float *x, const float *dz,
                          float *dw)
{
#if NN_FUSED_X86
    if (isa >= NN_ISA_AVX512 && nn_cpu_isa() >= NN_ISA_AVX512) {
        nn_fused_wgrad_512(n, in, out, x, dz, dw);
        return;
    }
    if (isa >= NN_ISA_AVX2 && nn_cpu_isa() >= NN_ISA_AVX2) {
        nn_fused_wgrad_256(n, in, out, x, dz, dw);
        return;
    }
#endif
    (void)isa;
    nn_fused_wgrad_c(n, in, out, x, dz, dw);
}

void nn_fused_input_grad(int isa, int n, int in, int out, const float *dz, const float *w,
                         float *dx)
{
#if NN_FUSED_X86
    if (isa >= NN_ISA_AVX2 && nn_cpu_isa() >= NN_ISA_AVX2) {
        nn_fused_xgrad_fma(n, in, out, dz, w, dx);
        return;
    }
#endif
    (void)isa;
    nn_fused_xgrad_c(n, in, out, dz, w, dx);
}
