/* nn_fastmath.c — reproducible fast exp, sigmoid and tanh (and the LSTM cell's entries built on
 * them) for AVX-512, AVX2+FMA and portable C, picked at run time, all giving the same bits. */
#include "nn_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define NN_FM_X86 1
#else
#define NN_FM_X86 0
#endif

/*
 * Why these and how accurate (README, "HeterPS: RL-LSTM scheduling in under a second").  libm's
 * tanhf (through expm1f) and expf took a third of the heterps scheduler's time; they are scalar
 * calls.  The versions here are branch-free and vectorised; each uses only IEEE operations that
 * round once (add, sub, mul, div, FMA — the portable version calls fmaf) plus exact bit
 * operations, in one order written once (nn_fastmath_body.h), so AVX-512, AVX2 and portable C
 * give the same bits and a seed gives the same plan on every machine (test_nn_fastmath checks
 * it on a grid of inputs).
 *
 * Coefficients: e^r on |r| <= ln2/2 as 1 + r + r^2 (E2 + E3 r + ... + E6 r^4), and tanh a on
 * 0 <= a < 0.625 as a + a u (T0 + T1 u + ... + T4 u^4), u = a^2, fitted (weighted least squares
 * on Chebyshev nodes, re-weighted towards the minimax error) in double precision for this file;
 * their own relative error is 3.1e-9 (exp) and 4.1e-9 (tanh), far below a float's half ulp
 * (6e-8), so what remains is the float rounding of the steps.  Measured against the correctly
 * rounded value over every float of the tested ranges (test_nn_fastmath states the bounds):
 * exp within 1 ulp, sigmoid and tanh within 2 ulp.
 */
#define NN_FM_LOG2E 1.442695022e+00f   /* 0x3fb8aa3b */
#define NN_FM_LN2_HI 6.931471825e-01f  /* 0x3f317218, ln 2 rounded to float */
#define NN_FM_LN2_LO -1.904654212e-09f /* 0xb102e308, ln 2 - NN_FM_LN2_HI */
#define NN_FM_MAGIC 12582912.0f        /* 1.5 * 2^23: adding it rounds to an integer */
#define NN_FM_E2 4.999999404e-01f      /* 0x3efffffe */
#define NN_FM_E3 1.666652113e-01f      /* 0x3e2aaa49 */
#define NN_FM_E4 4.166838899e-02f      /* 0x3d2aac79 */
#define NN_FM_E5 8.368710987e-03f      /* 0x3c091ceb */
#define NN_FM_E6 1.381460461e-03f      /* 0x3ab5121f */
#define NN_FM_T0 -3.333328366e-01f     /* 0xbeaaaa9a */
#define NN_FM_T1 1.333149076e-01f      /* 0x3e0883b4 */
#define NN_FM_T2 -5.374348536e-02f     /* 0xbd5c2221 */
#define NN_FM_T3 2.065055445e-02f      /* 0x3ca92b5a */
#define NN_FM_T4 -5.717011169e-03f     /* 0xbbbb55c4 */
#define NN_FM_TANH_SPLIT 0.625f
/* exp's input range: 2^n stays a normal float (n from -126 to 127) */
#define NN_FM_EXP_LO -87.0f
#define NN_FM_EXP_HI 88.0f

/* --- portable C */
static inline uint32_t nn_fm_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float nn_fm_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline float nn_fm_pow2_c(float t)
{
    return nn_fm_float((nn_fm_bits(t) - (nn_fm_bits(NN_FM_MAGIC) - 127u)) << 23);
}

#define FM_ATTR inline
#define FM_NAME(x) x##_c
#define V float
#define FM_SET(c) (c)
#define FM_ADD(a, b) ((a) + (b))
#define FM_SUB(a, b) ((a) - (b))
#define FM_MUL(a, b) ((a) * (b))
#define FM_DIV(a, b) ((a) / (b))
#define FM_FMA(a, b, c) fmaf(a, b, c)
#define FM_ABS(a) fabsf(a)
#define FM_NEG(a) (-(a))
#define FM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FM_MAX(a, b) ((a) > (b) ? (a) : (b))
#define FM_SEL_GE0(x, a, b) ((x) >= 0.0f ? (a) : (b))
#define FM_SEL_LT(x, y, a, b) ((x) < (y) ? (a) : (b))
#define FM_COPYSIGN(y, x) nn_fm_float(nn_fm_bits(y) | (nn_fm_bits(x) & 0x80000000u))
#define FM_POW2(t) nn_fm_pow2_c(t)
#include "nn_fastmath_body.h"

#if NN_FM_X86
/* --- AVX-512 */
#define FM_ATTR __attribute__((target("avx512f"))) inline
#define FM_NAME(x) x##_512
#define V __m512
#define FM_SET(c) _mm512_set1_ps(c)
#define FM_ADD(a, b) _mm512_add_ps(a, b)
#define FM_SUB(a, b) _mm512_sub_ps(a, b)
#define FM_MUL(a, b) _mm512_mul_ps(a, b)
#define FM_DIV(a, b) _mm512_div_ps(a, b)
#define FM_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define FM_ABS(a)                                                                                  \
    _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff)))
#define FM_NEG(a)                                                                                  \
    _mm512_castsi512_ps(                                                                           \
        _mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32((int)0x80000000u)))
#define FM_MIN(a, b) _mm512_min_ps(a, b)
#define FM_MAX(a, b) _mm512_max_ps(a, b)
#define FM_SEL_GE0(x, a, b)                                                                        \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ), b, a)
#define FM_SEL_LT(x, y, a, b) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, y, _CMP_LT_OQ), b, a)
#define FM_COPYSIGN(y, x)                                                                          \
    _mm512_castsi512_ps(_mm512_or_si512(                                                           \
        _mm512_castps_si512(y),                                                                    \
        _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u))))
#define FM_POW2(t)                                                                                 \
    _mm512_castsi512_ps(_mm512_slli_epi32(                                                         \
        _mm512_sub_epi32(_mm512_castps_si512(t),                                                   \
                         _mm512_set1_epi32((int)(nn_fm_bits(NN_FM_MAGIC) - 127u))),                \
        23))
#include "nn_fastmath_body.h"

/* --- AVX2 + FMA */
#define FM_ATTR __attribute__((target("avx2,fma"))) inline
#define FM_NAME(x) x##_256
#define V __m256
#define FM_SET(c) _mm256_set1_ps(c)
#define FM_ADD(a, b) _mm256_add_ps(a, b)
#define FM_SUB(a, b) _mm256_sub_ps(a, b)
#define FM_MUL(a, b) _mm256_mul_ps(a, b)
#define FM_DIV(a, b) _mm256_div_ps(a, b)
#define FM_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define FM_ABS(a)                                                                                  \
    _mm256_castsi256_ps(_mm256_and_si256(_mm256_castps_si256(a), _mm256_set1_epi32(0x7fffffff)))
#define FM_NEG(a)                                                                                  \
    _mm256_castsi256_ps(                                                                           \
        _mm256_xor_si256(_mm256_castps_si256(a), _mm256_set1_epi32((int)0x80000000u)))
#define FM_MIN(a, b) _mm256_min_ps(a, b)
#define FM_MAX(a, b) _mm256_max_ps(a, b)
#define FM_SEL_GE0(x, a, b)                                                                        \
    _mm256_blendv_ps(b, a, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ))
#define FM_SEL_LT(x, y, a, b) _mm256_blendv_ps(b, a, _mm256_cmp_ps(x, y, _CMP_LT_OQ))
#define FM_COPYSIGN(y, x)                                                                          \
    _mm256_castsi256_ps(_mm256_or_si256(                                                           \
        _mm256_castps_si256(y),                                                                    \
        _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32((int)0x80000000u))))
#define FM_POW2(t)                                                                                 \
    _mm256_castsi256_ps(_mm256_slli_epi32(                                                         \
        _mm256_sub_epi32(_mm256_castps_si256(t),                                                   \
                         _mm256_set1_epi32((int)(nn_fm_bits(NN_FM_MAGIC) - 127u))),                \
        23))
#include "nn_fastmath_body.h"

/* Lanes below `width` set, for AVX2's masked loads and stores. */
__attribute__((target("avx2,fma"))) static inline __m256i nn_fm_mask8(size_t width)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)width),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif

/* The version to run: the widest of isa and what the processor has. */
static int nn_fm_isa(int isa)
{
    int have = nn_cpu_isa();
    return isa < have ? isa : have;
}

static void nn_fm_map_c(int fn, const float *x, float *y, size_t n)
{
    for (size_t k = 0; k < n; k++)
        y[k] = fn == NN_FM_EXP       ? nn_fm_exp_clamped_c(x[k])
               : fn == NN_FM_SIGMOID ? nn_fm_sigmoid_c(x[k])
                                     : nn_fm_tanh_c(x[k]);
}

static void nn_fm_row_c(int n, const float *z, const float *c, float *gates, float *c_out,
                        float *tc, float *h)
{
    for (int j = 0; j < n; j++)
        nn_fm_lstm_c(z[j], z[n + j], z[2 * n + j], z[3 * n + j], c[j], gates + j, gates + n + j,
                     gates + 2 * n + j, gates + 3 * n + j, c_out + j, tc + j, h + j);
}

static void nn_fm_grad_c(int n, const float *gates, const float *tc, const float *c,
                         const float *dh, float *dcn, float *dc, float *dz)
{
    for (int j = 0; j < n; j++) {
        float d;
        nn_fm_lstm_grad_c(gates[j], gates[n + j], gates[2 * n + j], gates[3 * n + j], tc[j], c[j],
                          dh[j], dcn + j, &d, dz + j, dz + n + j, dz + 2 * n + j, dz + 3 * n + j);
        if (dc)
            dc[j] += d;
    }
}

#if NN_FM_X86
__attribute__((target("avx512f"))) static void nn_fm_grad_512(int n, const float *gates,
                                                              const float *tc, const float *c,
                                                              const float *dh, float *dcn,
                                                              float *dc, float *dz)
{
    for (int j = 0; j < n; j += 16) {
        __mmask16 m = (__mmask16)(n - j >= 16 ? 0xffffu : (1u << (n - j)) - 1u);
        __m512 dcv = _mm512_maskz_loadu_ps(m, dcn + j), d, zi, zf, zg, zo;
        nn_fm_lstm_grad_512(_mm512_maskz_loadu_ps(m, gates + j),
                            _mm512_maskz_loadu_ps(m, gates + n + j),
                            _mm512_maskz_loadu_ps(m, gates + 2 * n + j),
                            _mm512_maskz_loadu_ps(m, gates + 3 * n + j),
                            _mm512_maskz_loadu_ps(m, tc + j), _mm512_maskz_loadu_ps(m, c + j),
                            _mm512_maskz_loadu_ps(m, dh + j), &dcv, &d, &zi, &zf, &zg, &zo);
        _mm512_mask_storeu_ps(dcn + j, m, dcv);
        if (dc)
            _mm512_mask_storeu_ps(dc + j, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dc + j), d));
        _mm512_mask_storeu_ps(dz + j, m, zi);
        _mm512_mask_storeu_ps(dz + n + j, m, zf);
        _mm512_mask_storeu_ps(dz + 2 * n + j, m, zg);
        _mm512_mask_storeu_ps(dz + 3 * n + j, m, zo);
    }
}

__attribute__((target("avx2,fma"))) static void nn_fm_grad_256(int n, const float *gates,
                                                               const float *tc, const float *c,
                                                               const float *dh, float *dcn,
                                                               float *dc, float *dz)
{
    for (int j = 0; j < n; j += 8) {
        __m256i m = nn_fm_mask8((size_t)(n - j >= 8 ? 8 : n - j));
        __m256 dcv = _mm256_maskload_ps(dcn + j, m), d, zi, zf, zg, zo;
        nn_fm_lstm_grad_256(_mm256_maskload_ps(gates + j, m), _mm256_maskload_ps(gates + n + j, m),
                            _mm256_maskload_ps(gates + 2 * n + j, m),
                            _mm256_maskload_ps(gates + 3 * n + j, m), _mm256_maskload_ps(tc + j, m),
                            _mm256_maskload_ps(c + j, m), _mm256_maskload_ps(dh + j, m), &dcv, &d,
                            &zi, &zf, &zg, &zo);
        _mm256_maskstore_ps(dcn + j, m, dcv);
        if (dc)
            _mm256_maskstore_ps(dc + j, m, _mm256_add_ps(_mm256_maskload_ps(dc + j, m), d));
        _mm256_maskstore_ps(dz + j, m, zi);
        _mm256_maskstore_ps(dz + n + j, m, zf);
        _mm256_maskstore_ps(dz + 2 * n + j, m, zg);
        _mm256_maskstore_ps(dz + 3 * n + j, m, zo);
    }
}

__attribute__((target("avx512f"))) static void nn_fm_map_512(int fn, const float *x, float *y,
                                                             size_t n)
{
    for (size_t k = 0; k < n; k += 16) {
        __mmask16 m = (__mmask16)(n - k >= 16 ? 0xffffu : (1u << (n - k)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(m, x + k);
        v = fn == NN_FM_EXP       ? nn_fm_exp_clamped_512(v)
            : fn == NN_FM_SIGMOID ? nn_fm_sigmoid_512(v)
                                  : nn_fm_tanh_512(v);
        _mm512_mask_storeu_ps(y + k, m, v);
    }
}

__attribute__((target("avx512f"))) static void nn_fm_row_512(int n, const float *z, const float *c,
                                                             float *gates, float *c_out, float *tc,
                                                             float *h)
{
    for (int j = 0; j < n; j += 16) {
        __mmask16 m = (__mmask16)(n - j >= 16 ? 0xffffu : (1u << (n - j)) - 1u);
        __m512 ig, fg, gg, og, cn, t, hv;
        nn_fm_lstm_512(_mm512_maskz_loadu_ps(m, z + j), _mm512_maskz_loadu_ps(m, z + n + j),
                       _mm512_maskz_loadu_ps(m, z + 2 * n + j),
                       _mm512_maskz_loadu_ps(m, z + 3 * n + j), _mm512_maskz_loadu_ps(m, c + j),
                       &ig, &fg, &gg, &og, &cn, &t, &hv);
        _mm512_mask_storeu_ps(gates + j, m, ig);
        _mm512_mask_storeu_ps(gates + n + j, m, fg);
        _mm512_mask_storeu_ps(gates + 2 * n + j, m, gg);
        _mm512_mask_storeu_ps(gates + 3 * n + j, m, og);
        _mm512_mask_storeu_ps(c_out + j, m, cn);
        _mm512_mask_storeu_ps(tc + j, m, t);
        _mm512_mask_storeu_ps(h + j, m, hv);
    }
}

__attribute__((target("avx2,fma"))) static void nn_fm_map_256(int fn, const float *x, float *y,
                                                              size_t n)
{
    for (size_t k = 0; k < n; k += 8) {
        __m256i m = nn_fm_mask8(n - k >= 8 ? 8 : n - k);
        __m256 v = _mm256_maskload_ps(x + k, m);
        v = fn == NN_FM_EXP       ? nn_fm_exp_clamped_256(v)
            : fn == NN_FM_SIGMOID ? nn_fm_sigmoid_256(v)
                                  : nn_fm_tanh_256(v);
        _mm256_maskstore_ps(y + k, m, v);
    }
}

__attribute__((target("avx2,fma"))) static void nn_fm_row_256(int n, const float *z, const float *c,
                                                              float *gates, float *c_out, float *tc,
                                                              float *h)
{
    for (int j = 0; j < n; j += 8) {
        __m256i m = nn_fm_mask8((size_t)(n - j >= 8 ? 8 : n - j));
        __m256 ig, fg, gg, og, cn, t, hv;
        nn_fm_lstm_256(_mm256_maskload_ps(z + j, m), _mm256_maskload_ps(z + n + j, m),
                       _mm256_maskload_ps(z + 2 * n + j, m), _mm256_maskload_ps(z + 3 * n + j, m),
                       _mm256_maskload_ps(c + j, m), &ig, &fg, &gg, &og, &cn, &t, &hv);
        _mm256_maskstore_ps(gates + j, m, ig);
        _mm256_maskstore_ps(gates + n + j, m, fg);
        _mm256_maskstore_ps(gates + 2 * n + j, m, gg);
        _mm256_maskstore_ps(gates + 3 * n + j, m, og);
        _mm256_maskstore_ps(c_out + j, m, cn);
        _mm256_maskstore_ps(tc + j, m, t);
        _mm256_maskstore_ps(h + j, m, hv);
    }
}
#endif

void nn_fast_map(int isa, int fn, const float *x, float *y, size_t n)
{
#if NN_FM_X86
    switch (nn_fm_isa(isa)) {
    case NN_ISA_AVX512:
        nn_fm_map_512(fn, x, y, n);
        return;
    case NN_ISA_AVX2:
        nn_fm_map_256(fn, x, y, n);
        return;
    default:
        break;
    }
#endif
    (void)isa;
    nn_fm_map_c(fn, x, y, n);
}

void nn_fast_lstm_row(int isa, int n, const float *z, const float *c, float *gates, float *c_out,
                      float *tc, float *h)
{
#if NN_FM_X86
    switch (nn_fm_isa(isa)) {
    case NN_ISA_AVX512:
        nn_fm_row_512(n, z, c, gates, c_out, tc, h);
        return;
    case NN_ISA_AVX2:
        nn_fm_row_256(n, z, c, gates, c_out, tc, h);
        return;
    default:
        break;
    }
#endif
    (void)isa;
    nn_fm_row_c(n, z, c, gates, c_out, tc, h);
}

void nn_fast_lstm_grad_row(int isa, int n, const float *gates, const float *tc, const float *c,
                           const float *dh, float *dc_out, float *dc, float *dz)
{
#if NN_FM_X86
    switch (nn_fm_isa(isa)) {
    case NN_ISA_AVX512:
        nn_fm_grad_512(n, gates, tc, c, dh, dc_out, dc, dz);
        return;
    case NN_ISA_AVX2:
        nn_fm_grad_256(n, gates, tc, c, dh, dc_out, dc, dz);
        return;
    default:
        break;
    }
#endif
    (void)isa;
    nn_fm_grad_c(n, gates, tc, c, dh, dc_out, dc, dz);
}
