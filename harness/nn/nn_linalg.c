/* nn_linalg.c — GEMM through OpenBLAS or, where they give its bits, the fused kernels of
 * nn_fused.c; matmul, linear (fused bias and activation), transpose. */
#include "nn_internal.h"

#include <cblas.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Every product goes to OpenBLAS, however small: 0.3.21 has small-matrix kernels (measured on
 * the AVX-512 benchmark machine: 28 ns for a 1x13 row times 13x13, 99 ns for 16x16x16, against
 * 49 ns and 674 ns for a vectorised loop), and on cores without them (OPENBLAS_CORETYPE=Haswell)
 * a loop would win by at most ~50 ns on the tiniest products.  pb_nn_tape_gemm and the tape's
 * own ops take the fused kernels instead where those give OpenBLAS's bits (below). */
void pb_nn_gemm(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
                const float *b, int ldb, float beta, float *c, int ldc)
{
    if (m == 0 || n == 0)
        return;
    if (k == 0) { /* C = beta C; BLAS wants lda >= 1 even then */
        for (int i = 0; i < m; i++) {
            float *ci = c + (size_t)i * (size_t)ldc;
            for (int j = 0; j < n; j++)
                ci[j] = beta == 0.0f ? 0.0f : beta * ci[j];
        }
        return;
    }
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/*
 * Where OpenBLAS 0.3.21's Haswell sgemm (OPENBLAS_CORETYPE=Haswell, the project's environment)
 * sums in the fused kernels' order, measured on a grid of shapes (README, "Placeto: OpenBLAS's
 * order in the own kernels"; test_nn_owngemm asserts it).  For C (m x n) += op(A) op(B) over k
 * row-major, OpenBLAS's level-3 driver cuts k into blocks of GEMM_Q = 320 (a rest between 320
 * and 640 into two halves rounded up to 8), and per block its kernel sums each entry from +0 by
 * FMAs in order and adds the sum to C.  Its micro-tiles are 12 rows of C wide (then 4, 2, 1);
 * the 4-row tiles, and everything once n >= 16, sum in other orders, except where k <= 7 or n
 * <= 7.  So the own kernels give its bits on all m rows when k <= 7 or n <= 7 or m <= 3, on the
 * rows before the last m % 12 when n <= 15 (all of them when m % 12 <= 3), and OpenBLAS called
 * on the remaining rows alone computes them as in the whole call.  All of this for one OpenBLAS
 * thread, as runs use it (place.c): with more, OpenBLAS splits large products among its threads
 * and its bits change with their number, so the fused kernels are not taken.
 */
#define LINALG_GEMM_Q 320
#define LINALG_GEMM_UNROLL 8
#define LINALG_OWN_MAX_ROWS 4096 /* the rows checked (OpenBLAS's row blocks are far larger) */

static int linalg_own_rows(int m, int n, int k)
{
    if (m > LINALG_OWN_MAX_ROWS)
        return 0;
    if (k <= 7 || n <= 7 || m <= 3)
        return m;
    if (n <= 15)
        return m - (m % 12 <= 3 ? 0 : m % 12);
    return 0;
}

/* The size of the next block of k that OpenBLAS's driver takes, `left` terms being left. */
static int linalg_k_block(int left)
{
    if (left >= 2 * LINALG_GEMM_Q)
        return LINALG_GEMM_Q;
    if (left > LINALG_GEMM_Q)
        return (left / 2 + LINALG_GEMM_UNROLL - 1) / LINALG_GEMM_UNROLL * LINALG_GEMM_UNROLL;
    return left;
}

/* C (m x n) += op(A) B with the fused kernel, block by block of k as OpenBLAS's driver. */
static void linalg_own_acc(int ta, int m, int n, int k, const float *a, int lda, const float *b,
                           int ldb, float *c, int ldc)
{
    int isa = nn_cpu_isa();
    for (int k0 = 0; k0 < k;) {
        int kb = linalg_k_block(k - k0);
        const float *ak = ta ? a + (size_t)k0 * (size_t)lda : a + k0;
        nn_fused_gemm_acc(isa, ta, m, n, kb, ak, lda, b + (size_t)k0 * (size_t)ldb, ldb, c, ldc);
        k0 += kb;
    }
}

/* pb_nn_gemm, with the leading rows that the fused kernel computes with OpenBLAS's bits taken by
 * it when own != 0.  Only weight-gradient products (A^T B, alpha 1, beta 0 or 1) more than 8
 * columns wide: there the kernel is 1.2-3.8x faster than OpenBLAS; on A B and A B^T, and on
 * narrower A^T B, it was slower (PB_BENCH_OWNGEMM=1 test_nn_owngemm). */
static void linalg_gemm(int own, int trans_a, int trans_b, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta, float *c,
                        int ldc)
{
    int rows = 0;
    if (own && openblas_get_num_threads() == 1 && trans_a && !trans_b && n > 8 && alpha == 1.0f &&
        (beta == 0.0f || beta == 1.0f) && k > 0)
        rows = linalg_own_rows(m, n, k);
    if (rows > 0) {
        if (beta == 0.0f) /* OpenBLAS clears C first, then adds the sums (a -0 sum gives +0) */
            for (int i = 0; i < rows; i++)
                memset(c + (size_t)i * (size_t)ldc, 0, (size_t)n * sizeof(float));
        linalg_own_acc(trans_a, rows, n, k, a, lda, b, ldb, c, ldc);
    }
    if (rows < m) {
        const float *ar = trans_a ? a + rows : a + (size_t)rows * (size_t)lda;
        pb_nn_gemm(trans_a, trans_b, m - rows, n, k, alpha, ar, lda, b, ldb, beta,
                   c + (size_t)rows * (size_t)ldc, ldc);
    }
}

void pb_nn_tape_gemm(const pb_nn_tape *t, int trans_a, int trans_b, int m, int n, int k,
                     float alpha, const float *a, int lda, const float *b, int ldb, float beta,
                     float *c, int ldc)
{
    linalg_gemm(t && t->own_gemm, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* A deterministic pseudo-random float in [-1, 1) with a few binades of spread. */
static float linalg_probe_value(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    float u = (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
    return u * (float)(1u << ((*s >> 3) % 5)) / 4.0f;
}

/* Whether the fused kernels reproduce this OpenBLAS's sums as linalg_own_rows says: its Haswell
 * kernels (the core type checked by name), and products checked against it bit for bit: weight
 * gradients with k blocks (a changed GEMM_Q, e.g. by OPENBLAS_BLOCK_FACTOR, fails) and with
 * four terms, and layers' forward products with a row remainder. */
static int linalg_probe_own_gemm(void)
{
    const char *core = openblas_get_corename();
    if (!core || strcmp(core, "Haswell") != 0)
        return 0;
    static const int probes[][4] = {/* 1: C += A^T B (m x n, k terms); 0: a layer's forward */
                                    {1, 13, 13, 1000},
                                    {1, 104, 40, 4},
                                    {0, 29, 13, 13},
                                    {0, 14, 6, 300}};
    enum { AB = 13 * 1000, C = 104 * 40 }; /* the largest operand and product above */
    float *buf = malloc((size_t)(2 * AB + 2 * C) * sizeof(float));
    if (!buf)
        return 0;
    float *a = buf, *b = a + AB, *c0 = b + AB, *c1 = c0 + C;
    int ok = 1;
    uint32_t s = 21;
    for (size_t p = 0; ok && p < sizeof probes / sizeof probes[0]; p++) {
        int grad = probes[p][0], m = probes[p][1], n = probes[p][2], k = probes[p][3];
        for (int i = 0; i < m * k; i++)
            a[i] = linalg_probe_value(&s);
        for (int i = 0; i < k * n; i++)
            b[i] = linalg_probe_value(&s);
        for (int i = 0; i < m * n; i++)
            c0[i] = c1[i] = linalg_probe_value(&s);
        if (grad) {
            pb_nn_gemm(1, 0, m, n, k, 1.0f, a, m, b, n, 1.0f, c0, n);
            linalg_gemm(1, 1, 0, m, n, k, 1.0f, a, m, b, n, 1.0f, c1, n);
        } else { /* bias row c1[0..n), rows computed as pb_nn_linear would */
            int own = linalg_own_rows(m, n, k);
            for (int i = 1; i < m; i++)
                memcpy(c0 + (size_t)i * n, c0, (size_t)n * sizeof(float));
            pb_nn_gemm(0, 0, m, n, k, 1.0f, a, k, b, n, 1.0f, c0, n);
            memcpy(c1 + (size_t)own * n, c0 + (size_t)own * n,
                   (size_t)(m - own) * n * sizeof(float));
            nn_fused_linear(nn_cpu_isa(), own, k, n, a, b, c1, 0, c1 + C / 2);
            memcpy(c1, c1 + C / 2, (size_t)own * n * sizeof(float));
        }
        ok = memcmp(c0, c1, (size_t)m * n * sizeof(float)) == 0;
    }
    free(buf);
    return ok;
}

/* The probe's answer does not change within a process (the loaded OpenBLAS and its block sizes
 * are fixed), so it runs once; the thread count can change, so it is asked on every call. */
int nn_linalg_own_gemm_ok(void)
{
    static atomic_int known = -1; /* -1 not probed yet, else the probe's answer */
    if (openblas_get_num_threads() != 1)
        return 0;
    int ok = atomic_load(&known);
    if (ok < 0) {
        ok = linalg_probe_own_gemm();
        atomic_store(&known, ok);
    }
    return ok;
}

/* C = op(A) op(B), op(A) m x k, op(B) k x n: dA and dB by the transposed products. */
static void linalg_matmul_backward(const nn_record *r)
{
    const pb_nn_tensor *a = r->in[0], *b = r->in[1], *c = r->out;
    int ta = r->i[0], tb = r->i[1];
    int m = c->rows, n = c->cols, k = ta ? a->rows : a->cols;
    if (a->grad) {
        if (!ta) /* dA = dC op(B)^T */
            pb_nn_gemm(0, !tb, m, k, n, 1.0f, c->grad, n, b->data, b->cols, 1.0f, a->grad, a->cols);
        else /* dA (k x m) = op(B) dC^T */
            pb_nn_gemm(tb, 1, k, m, n, 1.0f, b->data, b->cols, c->grad, n, 1.0f, a->grad, a->cols);
    }
    if (b->grad) {
        if (!tb) /* dB = op(A)^T dC */
            pb_nn_gemm(!ta, 0, k, n, m, 1.0f, a->data, a->cols, c->grad, n, 1.0f, b->grad, b->cols);
        else /* dB (n x k) = dC^T op(A) */
            pb_nn_gemm(1, ta, n, k, m, 1.0f, c->grad, n, a->data, a->cols, 1.0f, b->grad, b->cols);
    }
}

pb_nn_tensor *pb_nn_matmul_t(pb_nn_tape *t, pb_nn_tensor *a, int trans_a, pb_nn_tensor *b,
                             int trans_b)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_matmul", 2, a, b, NULL))
        return NULL;
    int ta = trans_a != 0, tb = trans_b != 0;
    int m = ta ? a->cols : a->rows, k = ta ? a->rows : a->cols;
    int kb = tb ? b->cols : b->rows, n = tb ? b->rows : b->cols;
    if (k != kb)
        return nn_tape_fail(t, "pb_nn_matmul: %dx%d%s times %dx%d%s: inner sizes %d and %d differ",
                            a->rows, a->cols, ta ? "^T" : "", b->rows, b->cols, tb ? "^T" : "", k,
                            kb);
    int grad = nn_tape_wants_grad(t, a, b, NULL);
    pb_nn_tensor *c = nn_tape_tensor(t, m, n, grad);
    if (!c)
        return NULL;
    pb_nn_gemm(ta, tb, m, n, k, 1.0f, a->data, a->cols, b->data, b->cols, 0.0f, c->data, n);
    double flop = 2.0 * m * n * k;
    t->flop += flop;
    if (grad) {
        nn_record *r = nn_tape_record(t, linalg_matmul_backward, c);
        if (!r)
            return NULL;
        r->flop = flop * ((a->grad != NULL) + (b->grad != NULL));
        r->in[0] = a;
        r->in[1] = b;
        r->i[0] = ta;
        r->i[1] = tb;
    }
    return c;
}

pb_nn_tensor *pb_nn_matmul(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b)
{
    return pb_nn_matmul_t(t, a, 0, b, 0);
}

/* y = act(x w + b): dz = dy act'(y) (dy itself without activation), then the three products. */
static void linalg_linear_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *w = r->in[1], *b = r->in[2], *y = r->out;
    int n = y->rows, out = y->cols, in = x->cols;
    const float *dz = y->grad;
    if (r->i[0] != PB_NN_ACT_NONE) {
        nn_elem_act_grad(r->i[0], y->data, y->grad, r->tmp, nn_numel(y));
        dz = r->tmp;
    }
    if (b && b->grad)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < out; j++)
                b->grad[j] += dz[(size_t)i * (size_t)out + (size_t)j];
    /* OpenBLAS, or where they give its bits (r->i[1]: the tape's own_gemm) the fused kernels. */
    if (w->grad)
        linalg_gemm(r->i[1], 1, 0, in, out, n, 1.0f, x->data, in, dz, out, 1.0f, w->grad, out);
    if (x->grad)
        linalg_gemm(r->i[1], 0, 1, n, in, out, 1.0f, dz, out, w->data, out, 1.0f, x->grad, in);
}

/* Leading rows of a linear layer's product the fused kernel computes: 1-3 rows (any core type:
 * the project's arithmetic since the fused kernels came), or where it gives this OpenBLAS's
 * bits (k within one block of OpenBLAS's driver: the kernel adds the bias after the sum). */
static int linalg_linear_own_rows(const pb_nn_tape *t, int n, int in, int out, int act)
{
    if (n <= NN_FUSED_MAX_ROWS && act <= PB_NN_ACT_RELU)
        return n;
    if (!t->own_gemm || in > LINALG_GEMM_Q)
        return 0;
    return linalg_own_rows(n, out, in);
}

pb_nn_tensor *pb_nn_linear(pb_nn_tape *t, pb_nn_tensor *x, pb_nn_tensor *w, pb_nn_tensor *b,
                           int act)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_linear", 2, x, w, NULL))
        return NULL;
    if (x->cols != w->rows)
        return nn_tape_fail(t, "pb_nn_linear: input %dx%d does not fit weights %dx%d", x->rows,
                            x->cols, w->rows, w->cols);
    if (b && (b->rows != 1 || b->cols != w->cols))
        return nn_tape_fail(t, "pb_nn_linear: bias %dx%d, expected 1x%d", b->rows, b->cols,
                            w->cols);
    if (act < PB_NN_ACT_NONE || act > PB_NN_ACT_TANH)
        return nn_tape_fail(t, "pb_nn_linear: unknown activation %d", act);
    int grad = nn_tape_wants_grad(t, x, w, b);
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows, w->cols, grad);
    if (!y)
        return NULL;
    int n = x->rows, out = w->cols, in = x->cols;
    int own = linalg_linear_own_rows(t, n, in, out, act);
    if (own > 0) {
        int relu = act == PB_NN_ACT_RELU;
        nn_fused_linear(nn_cpu_isa(), own, in, out, x->data, w->data, b ? b->data : NULL, relu,
                        y->data);
        if (!relu)
            nn_elem_activate(act, y->data, (size_t)own * (size_t)out);
    }
    if (own < n) { /* OpenBLAS on the other rows: bias rows, the product onto them, activation */
        float *yr = y->data + (size_t)own * (size_t)out;
        for (int i = 0; b && i < n - own; i++)
            memcpy(yr + (size_t)i * (size_t)out, b->data, (size_t)out * sizeof(float));
        pb_nn_gemm(0, 0, n - own, out, in, 1.0f, x->data + (size_t)own * (size_t)in, in, w->data,
                   out, b ? 1.0f : 0.0f, yr, out);
        nn_elem_activate(act, yr, (size_t)(n - own) * (size_t)out);
    }
    double flop = 2.0 * n * out * x->cols;
    t->flop += flop;
    if (grad) {
        float *tmp = act != PB_NN_ACT_NONE ? nn_tape_grad_scratch(t, nn_numel(y)) : NULL;
        nn_record *r = nn_tape_record(t, linalg_linear_backward, y);
        if (!r || (act != PB_NN_ACT_NONE && !tmp))
            return NULL;
        r->flop = flop * ((w->grad != NULL) + (x->grad != NULL));
        r->in[0] = x;
        r->in[1] = w;
        r->in[2] = b;
        r->i[0] = act;
        r->i[1] = t->own_gemm;
        r->tmp = tmp;
    }
    return y;
}

static void linalg_transpose_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    for (int i = 0; i < x->rows; i++)
        for (int j = 0; j < x->cols; j++)
            x->grad[(size_t)i * (size_t)x->cols + (size_t)j] +=
                y->grad[(size_t)j * (size_t)y->cols + (size_t)i];
}

pb_nn_tensor *pb_nn_transpose(pb_nn_tape *t, pb_nn_tensor *x)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_transpose", 1, x, NULL, NULL))
        return NULL;
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, x->cols, x->rows, grad);
    if (!y)
        return NULL;
    for (int i = 0; i < x->rows; i++)
        for (int j = 0; j < x->cols; j++)
            y->data[(size_t)j * (size_t)y->cols + (size_t)i] =
                x->data[(size_t)i * (size_t)x->cols + (size_t)j];
    if (grad) {
        nn_record *r = nn_tape_record(t, linalg_transpose_backward, y);
        if (!r)
            return NULL;
        r->in[0] = x;
    }
    return y;
}

void nn_blas_threads(int n)
{
    /* OpenBLAS reads OPENBLAS_NUM_THREADS when it is loaded, which is before main() for a
     * program linked with libplacebench: setting the variable later has no effect. */
    openblas_set_num_threads(n);
}
