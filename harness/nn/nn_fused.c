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

/* Input k of step kk: ks[kk], or kk without a list.  The kernels take only the inputs listed
 * (in increasing order); inputs left out must be 0 in every row, and as each sum starts at +0
 * and a product with 0 adds an exact 0, leaving them out changes no bit (for finite weights). */
static inline int nn_fused_k(const int *ks, int kk)
{
    return ks ? ks[kk] : kk;
}

/* Portable C: fmaf rounds once, like the vector FMAs. */
static void nn_fused_linear_c(int n, int in, int out, const float *x, const float *w,
                              const float *b, int relu, float *y, const int *ks, int nk)
{
    for (int i = 0; i < n; i++) {
        const float *xi = x + (size_t)i * in;
        float *yi = y + (size_t)i * out;
        for (int j = 0; j < out; j++) {
            float acc = 0.0f;
            for (int kk = 0; kk < nk; kk++) {
                int k = nn_fused_k(ks, kk);
                acc = fmaf(xi[k], w[(size_t)k * out + j], acc);
            }
            if (b)
                acc += b[j];
            yi[j] = relu ? (acc > 0.0f ? acc : 0.0f) : acc;
        }
    }
}

#if NN_FUSED_X86
#define NN_FUSED_ROWS 4

/* Lanes below `width` (0 to 16) set. */
static inline __mmask16 nn_fused_mask16(int width)
{
    return (__mmask16)(width <= 0 ? 0u : width >= 16 ? 0xffffu : (1u << width) - 1u);
}

/* One tile of R rows by NB vectors of 16 outputs from column j0: R x NB independent FMA chains
 * (up to 16, enough to cover the FMA latency), each weight load serving R rows.  R and NB are
 * constants at every call and the loops over them unrolled, so the tile stays in registers. */
__attribute__((target("avx512f"), always_inline)) static inline void
nn_fused_tile_512(const int R, const int NB, int in, int out, const float *x, const float *w,
                  const float *b, int relu, float *y, const int *ks, int nk, int j0)
{
    const __m512 zero = _mm512_setzero_ps();
    __mmask16 m[4];
    __m512 acc[8][4];
#pragma GCC unroll 16
    for (int q = 0; q < NB; q++)
        m[q] = nn_fused_mask16(out - j0 - 16 * q);
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 16
        for (int q = 0; q < NB; q++)
            acc[r][q] = zero;
    }
    for (int kk = 0; kk < nk; kk++) {
        int k = nn_fused_k(ks, kk);
        const float *wk = w + (size_t)k * out + j0;
        __m512 wq[4];
#pragma GCC unroll 16
        for (int q = 0; q < NB; q++)
            wq[q] = _mm512_maskz_loadu_ps(m[q], wk + 16 * q);
#pragma GCC unroll 16
        for (int r = 0; r < R; r++) {
            __m512 xr = _mm512_set1_ps(x[(size_t)r * in + k]);
#pragma GCC unroll 16
            for (int q = 0; q < NB; q++)
                acc[r][q] = _mm512_fmadd_ps(xr, wq[q], acc[r][q]);
        }
    }
#pragma GCC unroll 16
    for (int q = 0; q < NB; q++) {
        __m512 bias = b ? _mm512_maskz_loadu_ps(m[q], b + j0 + 16 * q) : zero;
#pragma GCC unroll 16
        for (int r = 0; r < R; r++) {
            __m512 v = b ? _mm512_add_ps(acc[r][q], bias) : acc[r][q];
            if (relu)
                v = _mm512_max_ps(v, zero); /* x > 0 ? x : +0, NaN to +0 */
            _mm512_mask_storeu_ps(y + (size_t)r * out + j0 + 16 * q, m[q], v);
        }
    }
}

/* Tiles of four rows and up to four vectors (64 columns), or of eight rows for 32 columns or
 * fewer (at least eight chains to cover the FMA latency); the last rows one tile each. */
__attribute__((target("avx512f"))) static void nn_fused_linear_512(int n, int in, int out,
                                                                   const float *x, const float *w,
                                                                   const float *b, int relu,
                                                                   float *y, const int *ks, int nk)
{
#define NN_TILE(R, NB)                                                                             \
    nn_fused_tile_512(R, NB, in, out, x + (size_t)i * in, w, b, relu, y + (size_t)i * out, ks, nk, \
                      j0)
    for (int j0 = 0; j0 < out; j0 += 64) {
        int left = out - j0;
        int i = 0;
        for (; left <= 32 && i + 2 * NN_FUSED_ROWS <= n; i += 2 * NN_FUSED_ROWS) {
            if (left > 16)
                NN_TILE(8, 2);
            else
                NN_TILE(8, 1);
        }
        for (; i + NN_FUSED_ROWS <= n; i += NN_FUSED_ROWS) {
            if (left > 32)
                NN_TILE(4, 4);
            else if (left > 16)
                NN_TILE(4, 2);
            else
                NN_TILE(4, 1);
        }
        for (; i < n; i++) {
            if (left > 32)
                NN_TILE(1, 4);
            else if (left > 16)
                NN_TILE(1, 2);
            else
                NN_TILE(1, 1);
        }
    }
#undef NN_TILE
}

/* Lanes below `width` set (AVX2 has no mask registers: a vector of all-ones lanes). */
__attribute__((target("avx2,fma"))) static inline __m256i nn_fused_mask8(int width)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(width), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Two vectors of outputs (16 columns) per pass, four rows per weight load. */
__attribute__((target("avx2,fma"))) static void nn_fused_linear_256(int n, int in, int out,
                                                                    const float *x, const float *w,
                                                                    const float *b, int relu,
                                                                    float *y, const int *ks, int nk)
{
    const __m256 zero = _mm256_setzero_ps();
    for (int j0 = 0; j0 < out; j0 += 16) {
        __m256i m0 = nn_fused_mask8(out - j0), m1 = nn_fused_mask8(out - j0 - 8);
        __m256 bias0 = b ? _mm256_maskload_ps(b + j0, m0) : zero;
        __m256 bias1 = b ? _mm256_maskload_ps(b + j0 + 8, m1) : zero;
        int i = 0;
        for (; i + NN_FUSED_ROWS <= n; i += NN_FUSED_ROWS) {
            __m256 a0[NN_FUSED_ROWS] = {zero, zero, zero, zero};
            __m256 a1[NN_FUSED_ROWS] = {zero, zero, zero, zero};
            const float *xi = x + (size_t)i * in;
            for (int kk = 0; kk < nk; kk++) {
                int k = nn_fused_k(ks, kk);
                const float *wk = w + (size_t)k * out + j0;
                __m256 w0 = _mm256_maskload_ps(wk, m0), w1 = _mm256_maskload_ps(wk + 8, m1);
#pragma GCC unroll 16
                for (int r = 0; r < NN_FUSED_ROWS; r++) {
                    __m256 xr = _mm256_set1_ps(xi[(size_t)r * in + k]);
                    a0[r] = _mm256_fmadd_ps(xr, w0, a0[r]);
                    a1[r] = _mm256_fmadd_ps(xr, w1, a1[r]);
                }
            }
#pragma GCC unroll 16
            for (int r = 0; r < NN_FUSED_ROWS; r++) {
                __m256 v0 = b ? _mm256_add_ps(a0[r], bias0) : a0[r];
                __m256 v1 = b ? _mm256_add_ps(a1[r], bias1) : a1[r];
                if (relu) {
                    v0 = _mm256_max_ps(v0, zero);
                    v1 = _mm256_max_ps(v1, zero);
                }
                float *yr = y + (size_t)(i + r) * out + j0;
                _mm256_maskstore_ps(yr, m0, v0);
                _mm256_maskstore_ps(yr + 8, m1, v1);
            }
        }
    }
    /* the last n % 4 rows: one row and four vectors (32 columns) per pass, four chains */
    for (int i = n - n % NN_FUSED_ROWS; i < n; i++) {
        const float *xi = x + (size_t)i * in;
        for (int j0 = 0; j0 < out; j0 += 32) {
            __m256i m[4];
            __m256 a[4] = {zero, zero, zero, zero};
#pragma GCC unroll 16
            for (int q = 0; q < 4; q++)
                m[q] = nn_fused_mask8(out - j0 - 8 * q);
            for (int kk = 0; kk < nk; kk++) {
                int k = nn_fused_k(ks, kk);
                const float *wk = w + (size_t)k * out + j0;
                __m256 xr = _mm256_set1_ps(xi[k]);
#pragma GCC unroll 16
                for (int q = 0; q < 4; q++)
                    a[q] = _mm256_fmadd_ps(xr, _mm256_maskload_ps(wk + 8 * q, m[q]), a[q]);
            }
#pragma GCC unroll 16
            for (int q = 0; q < 4; q++) {
                __m256 v = b ? _mm256_add_ps(a[q], _mm256_maskload_ps(b + j0 + 8 * q, m[q])) : a[q];
                if (relu)
                    v = _mm256_max_ps(v, zero);
                _mm256_maskstore_ps(y + (size_t)i * out + j0 + 8 * q, m[q], v);
            }
        }
    }
}
#endif

void nn_fused_linear_cols(int isa, int n, int in, int out, const float *x, const float *w,
                          const float *b, int relu, float *y, const int *ks, int nk)
{
    if (!ks)
        nk = in;
#if NN_FUSED_X86
    if (isa >= NN_ISA_AVX512 && nn_cpu_isa() >= NN_ISA_AVX512) {
        nn_fused_linear_512(n, in, out, x, w, b, relu, y, ks, nk);
        return;
    }
    if (isa >= NN_ISA_AVX2 && nn_cpu_isa() >= NN_ISA_AVX2) {
        nn_fused_linear_256(n, in, out, x, w, b, relu, y, ks, nk);
        return;
    }
#endif
    (void)isa;
    nn_fused_linear_c(n, in, out, x, w, b, relu, y, ks, nk);
}

void nn_fused_linear(int isa, int n, int in, int out, const float *x, const float *w,
                     const float *b, int relu, float *y)
{
    nn_fused_linear_cols(isa, n, in, out, x, w, b, relu, y, NULL, in);
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

static void nn_fused_wgrad_c(int n, int in, int out, const float *x, const float *dz, float *dw,
                             const int *is, int ni)
{
    for (int ii = 0; ii < ni; ii++) {
        int i = nn_fused_k(is, ii);
        for (int j = 0; j < out; j++) {
            float acc = 0.0f;
            for (int r = 0; r < n; r++)
                acc = fmaf(x[(size_t)r * in + i], dz[(size_t)r * out + j], acc);
            dw[(size_t)i * out + j] += acc;
        }
    }
}

static void nn_fused_xgrad_c(int n, int in, int out, const float *dz, const float *w, float *dx)
{
    nn_fused_xgrad_body(n, in, out, dz, w, dx);
}

#if NN_FUSED_X86
/* Four rows i of dW and two vectors of outputs (32 columns) at a time: eight chains over the
 * rows r, each dz load serving four of them. */
#define NN_FUSED_WROWS 4
__attribute__((target("avx512f"))) static void nn_fused_wgrad_512(int n, int in, int out,
                                                                  const float *x, const float *dz,
                                                                  float *dw, const int *is, int ni)
{
    const __m512 zero = _mm512_setzero_ps();
    for (int j0 = 0; j0 < out; j0 += 32) {
        __mmask16 m0 = nn_fused_mask16(out - j0), m1 = nn_fused_mask16(out - j0 - 16);
        for (int ii = 0; ii < ni; ii += NN_FUSED_WROWS) {
            int q_n = ni - ii < NN_FUSED_WROWS ? ni - ii : NN_FUSED_WROWS, i[NN_FUSED_WROWS];
            __m512 a0[NN_FUSED_WROWS] = {zero, zero, zero, zero};
            __m512 a1[NN_FUSED_WROWS] = {zero, zero, zero, zero};
#pragma GCC unroll 16
            for (int q = 0; q < NN_FUSED_WROWS; q++)
                i[q] = nn_fused_k(is, ii + (q < q_n ? q : 0));
            for (int r = 0; r < n; r++) {
                const float *dr = dz + (size_t)r * out + j0, *xr = x + (size_t)r * in;
                __m512 d0 = _mm512_maskz_loadu_ps(m0, dr), d1 = _mm512_maskz_loadu_ps(m1, dr + 16);
#pragma GCC unroll 16
                for (int q = 0; q < NN_FUSED_WROWS; q++) {
                    __m512 xv = _mm512_set1_ps(xr[i[q]]);
                    a0[q] = _mm512_fmadd_ps(xv, d0, a0[q]);
                    a1[q] = _mm512_fmadd_ps(xv, d1, a1[q]);
                }
            }
#pragma GCC unroll 16
            for (int q = 0; q < q_n; q++) {
                float *d = dw + (size_t)i[q] * out + j0;
                _mm512_mask_storeu_ps(d, m0, _mm512_add_ps(_mm512_maskz_loadu_ps(m0, d), a0[q]));
                _mm512_mask_storeu_ps(d + 16, m1,
                                      _mm512_add_ps(_mm512_maskz_loadu_ps(m1, d + 16), a1[q]));
            }
        }
    }
}

__attribute__((target("avx2,fma"))) static void nn_fused_wgrad_256(int n, int in, int out,
                                                                   const float *x, const float *dz,
                                                                   float *dw, const int *is, int ni)
{
    const __m256 zero = _mm256_setzero_ps();
    for (int j0 = 0; j0 < out; j0 += 16) {
        __m256i m0 = nn_fused_mask8(out - j0), m1 = nn_fused_mask8(out - j0 - 8);
        for (int ii = 0; ii < ni; ii += NN_FUSED_WROWS) {
            int q_n = ni - ii < NN_FUSED_WROWS ? ni - ii : NN_FUSED_WROWS, i[NN_FUSED_WROWS];
            __m256 a0[NN_FUSED_WROWS] = {zero, zero, zero, zero};
            __m256 a1[NN_FUSED_WROWS] = {zero, zero, zero, zero};
#pragma GCC unroll 16
            for (int q = 0; q < NN_FUSED_WROWS; q++)
                i[q] = nn_fused_k(is, ii + (q < q_n ? q : 0));
            for (int r = 0; r < n; r++) {
                const float *dr = dz + (size_t)r * out + j0, *xr = x + (size_t)r * in;
                __m256 d0 = _mm256_maskload_ps(dr, m0), d1 = _mm256_maskload_ps(dr + 8, m1);
#pragma GCC unroll 16
                for (int q = 0; q < NN_FUSED_WROWS; q++) {
                    __m256 xv = _mm256_set1_ps(xr[i[q]]);
                    a0[q] = _mm256_fmadd_ps(xv, d0, a0[q]);
                    a1[q] = _mm256_fmadd_ps(xv, d1, a1[q]);
                }
            }
#pragma GCC unroll 16
            for (int q = 0; q < q_n; q++) {
                float *d = dw + (size_t)i[q] * out + j0;
                _mm256_maskstore_ps(d, m0, _mm256_add_ps(_mm256_maskload_ps(d, m0), a0[q]));
                _mm256_maskstore_ps(d + 8, m1, _mm256_add_ps(_mm256_maskload_ps(d + 8, m1), a1[q]));
            }
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

void nn_fused_weight_grad_rows(int isa, int n, int in, int out, const float *x, const float *dz,
                               float *dw, const int *is, int ni)
{
    if (!is)
        ni = in;
#if NN_FUSED_X86
    if (isa >= NN_ISA_AVX512 && nn_cpu_isa() >= NN_ISA_AVX512) {
        nn_fused_wgrad_512(n, in, out, x, dz, dw, is, ni);
        return;
    }
    if (isa >= NN_ISA_AVX2 && nn_cpu_isa() >= NN_ISA_AVX2) {
        nn_fused_wgrad_256(n, in, out, x, dz, dw, is, ni);
        return;
    }
#endif
    (void)isa;
    nn_fused_wgrad_c(n, in, out, x, dz, dw, is, ni);
}

void nn_fused_weight_grad(int isa, int n, int in, int out, const float *x, const float *dz,
                          float *dw)
{
    nn_fused_weight_grad_rows(isa, n, in, out, x, dz, dw, NULL, in);
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

/*
 * C (m x n) += op(A) B over k terms (nn_fused_gemm_acc): each entry's sum starts at +0, takes
 * A(i, r) B(r, j) for r = 0, 1, ..., k-1 with one fused multiply-add each, and is then added to
 * C (one rounding).  A(i, r) is a[i lda + r] (trans_a = 0) or a[r lda + i] (trans_a = 1).  Tiles
 * of up to R rows of C by NB vectors of columns keep R x NB independent chains in registers;
 * each load of a row of B serves the R rows, the A entries are broadcast.
 */
static void nn_fused_acc_c(int ta, int m, int n, int k, const float *a, int lda, const float *b,
                           int ldb, float *c, int ldc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int r = 0; r < k; r++) {
                float av = ta ? a[(size_t)r * lda + i] : a[(size_t)i * lda + r];
                acc = fmaf(av, b[(size_t)r * ldb + j], acc);
            }
            c[(size_t)i * ldc + j] += acc;
        }
}

#if NN_FUSED_X86
__attribute__((target("avx512f"), always_inline)) static inline void
nn_fused_acc_tile_512(const int R, const int NB, int ta, int k, const float *a, int lda,
                      const float *b, int ldb, float *c, int ldc, int cols)
{
    __mmask16 m[2];
    __m512 acc[16][2];
#pragma GCC unroll 16
    for (int q = 0; q < NB; q++)
        m[q] = nn_fused_mask16(cols - 16 * q);
#pragma GCC unroll 16
    for (int i = 0; i < R; i++) {
#pragma GCC unroll 16
        for (int q = 0; q < NB; q++)
            acc[i][q] = _mm512_setzero_ps();
    }
    for (int r = 0; r < k; r++) {
        const float *br = b + (size_t)r * ldb;
        __m512 bq[2];
#pragma GCC unroll 16
        for (int q = 0; q < NB; q++)
            bq[q] = _mm512_maskz_loadu_ps(m[q], br + 16 * q);
#pragma GCC unroll 16
        for (int i = 0; i < R; i++) {
            __m512 av = _mm512_set1_ps(ta ? a[(size_t)r * lda + i] : a[(size_t)i * lda + r]);
#pragma GCC unroll 16
            for (int q = 0; q < NB; q++)
                acc[i][q] = _mm512_fmadd_ps(av, bq[q], acc[i][q]);
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < R; i++) {
#pragma GCC unroll 16
        for (int q = 0; q < NB; q++) {
            float *ci = c + (size_t)i * ldc + 16 * q;
            _mm512_mask_storeu_ps(ci, m[q],
                                  _mm512_add_ps(_mm512_maskz_loadu_ps(m[q], ci), acc[i][q]));
        }
    }
}

/* Column blocks of 32 (two vectors, up to 12 rows a tile) or, for the last 16 or fewer, one
 * vector and up to 16 rows. */
__attribute__((target("avx512f"))) static void nn_fused_acc_512(int ta, int m, int n, int k,
                                                                const float *a, int lda,
                                                                const float *b, int ldb, float *c,
                                                                int ldc)
{
#define NN_ACC_TILE(R, NB)                                                                         \
    case R:                                                                                        \
        nn_fused_acc_tile_512(R, NB, ta, k, ai, lda, b + j0, ldb, c + (size_t)i0 * ldc + j0, ldc,  \
                              cols);                                                               \
        break
    for (int j0 = 0; j0 < n; j0 += 32) {
        int cols = n - j0 < 32 ? n - j0 : 32, wide = cols > 16, rmax = wide ? 12 : 16;
        for (int i0 = 0; i0 < m; i0 += rmax) {
            int rows = m - i0 < rmax ? m - i0 : rmax;
            const float *ai = ta ? a + i0 : a + (size_t)i0 * lda;
            if (wide) {
                switch (rows) {
                    NN_ACC_TILE(1, 2);
                    NN_ACC_TILE(2, 2);
                    NN_ACC_TILE(3, 2);
                    NN_ACC_TILE(4, 2);
                    NN_ACC_TILE(5, 2);
                    NN_ACC_TILE(6, 2);
                    NN_ACC_TILE(7, 2);
                    NN_ACC_TILE(8, 2);
                    NN_ACC_TILE(9, 2);
                    NN_ACC_TILE(10, 2);
                    NN_ACC_TILE(11, 2);
                default:
                    nn_fused_acc_tile_512(12, 2, ta, k, ai, lda, b + j0, ldb,
                                          c + (size_t)i0 * ldc + j0, ldc, cols);
                }
            } else {
                switch (rows) {
                    NN_ACC_TILE(1, 1);
                    NN_ACC_TILE(2, 1);
                    NN_ACC_TILE(3, 1);
                    NN_ACC_TILE(4, 1);
                    NN_ACC_TILE(5, 1);
                    NN_ACC_TILE(6, 1);
                    NN_ACC_TILE(7, 1);
                    NN_ACC_TILE(8, 1);
                    NN_ACC_TILE(9, 1);
                    NN_ACC_TILE(10, 1);
                    NN_ACC_TILE(11, 1);
                    NN_ACC_TILE(12, 1);
                    NN_ACC_TILE(13, 1);
                    NN_ACC_TILE(14, 1);
                    NN_ACC_TILE(15, 1);
                default:
                    nn_fused_acc_tile_512(16, 1, ta, k, ai, lda, b + j0, ldb,
                                          c + (size_t)i0 * ldc + j0, ldc, cols);
                }
            }
        }
    }
#undef NN_ACC_TILE
}

__attribute__((target("avx2,fma"), always_inline)) static inline void
nn_fused_acc_tile_256(const int R, const int NB, int ta, int k, const float *a, int lda,
                      const float *b, int ldb, float *c, int ldc, int cols)
{
    __m256i m[2];
    __m256 acc[12][2];
#pragma GCC unroll 16
    for (int q = 0; q < NB; q++)
        m[q] = nn_fused_mask8(cols - 8 * q);
#pragma GCC unroll 16
    for (int i = 0; i < R; i++) {
#pragma GCC unroll 16
        for (int q = 0; q < NB; q++)
            acc[i][q] = _mm256_setzero_ps();
    }
    for (int r = 0; r < k; r++) {
        const float *br = b + (size_t)r * ldb;
        __m256 bq[2];
#pragma GCC unroll 16
        for (int q = 0; q < NB; q++)
            bq[q] = _mm256_maskload_ps(br + 8 * q, m[q]);
#pragma GCC unroll 16
        for (int i = 0; i < R; i++) {
            __m256 av = _mm256_set1_ps(ta ? a[(size_t)r * lda + i] : a[(size_t)i * lda + r]);
#pragma GCC unroll 16
            for (int q = 0; q < NB; q++)
                acc[i][q] = _mm256_fmadd_ps(av, bq[q], acc[i][q]);
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < R; i++) {
#pragma GCC unroll 16
        for (int q = 0; q < NB; q++) {
            float *ci = c + (size_t)i * ldc + 8 * q;
            _mm256_maskstore_ps(ci, m[q], _mm256_add_ps(_mm256_maskload_ps(ci, m[q]), acc[i][q]));
        }
    }
}

/* Column blocks of 16 (two vectors, up to 6 rows a tile) or, for the last 8 or fewer, one
 * vector and up to 12 rows: at most 12 accumulators of the 16 registers. */
__attribute__((target("avx2,fma"))) static void nn_fused_acc_256(int ta, int m, int n, int k,
                                                                 const float *a, int lda,
                                                                 const float *b, int ldb, float *c,
                                                                 int ldc)
{
#define NN_ACC_TILE(R, NB)                                                                         \
    case R:                                                                                        \
        nn_fused_acc_tile_256(R, NB, ta, k, ai, lda, b + j0, ldb, c + (size_t)i0 * ldc + j0, ldc,  \
                              cols);                                                               \
        break
    for (int j0 = 0; j0 < n; j0 += 16) {
        int cols = n - j0 < 16 ? n - j0 : 16, wide = cols > 8, rmax = wide ? 6 : 12;
        for (int i0 = 0; i0 < m; i0 += rmax) {
            int rows = m - i0 < rmax ? m - i0 : rmax;
            const float *ai = ta ? a + i0 : a + (size_t)i0 * lda;
            if (wide) {
                switch (rows) {
                    NN_ACC_TILE(1, 2);
                    NN_ACC_TILE(2, 2);
                    NN_ACC_TILE(3, 2);
                    NN_ACC_TILE(4, 2);
                    NN_ACC_TILE(5, 2);
                default:
                    nn_fused_acc_tile_256(6, 2, ta, k, ai, lda, b + j0, ldb,
                                          c + (size_t)i0 * ldc + j0, ldc, cols);
                }
            } else {
                switch (rows) {
                    NN_ACC_TILE(1, 1);
                    NN_ACC_TILE(2, 1);
                    NN_ACC_TILE(3, 1);
                    NN_ACC_TILE(4, 1);
                    NN_ACC_TILE(5, 1);
                    NN_ACC_TILE(6, 1);
                    NN_ACC_TILE(7, 1);
                    NN_ACC_TILE(8, 1);
                    NN_ACC_TILE(9, 1);
                    NN_ACC_TILE(10, 1);
                    NN_ACC_TILE(11, 1);
                default:
                    nn_fused_acc_tile_256(12, 1, ta, k, ai, lda, b + j0, ldb,
                                          c + (size_t)i0 * ldc + j0, ldc, cols);
                }
            }
        }
    }
#undef NN_ACC_TILE
}
#endif

void nn_fused_gemm_acc(int isa, int trans_a, int m, int n, int k, const float *a, int lda,
                       const float *b, int ldb, float *c, int ldc)
{
    if (m <= 0 || n <= 0 || k <= 0)
        return;
#if NN_FUSED_X86
    if (isa >= NN_ISA_AVX512 && nn_cpu_isa() >= NN_ISA_AVX512) {
        nn_fused_acc_512(trans_a, m, n, k, a, lda, b, ldb, c, ldc);
        return;
    }
    if (isa >= NN_ISA_AVX2 && nn_cpu_isa() >= NN_ISA_AVX2) {
        nn_fused_acc_256(trans_a, m, n, k, a, lda, b, ldb, c, ldc);
        return;
    }
#endif
    (void)isa;
    nn_fused_acc_c(trans_a, m, n, k, a, lda, b, ldb, c, ldc);
}
