/* nn_linalg.c — GEMM through OpenBLAS, matmul, linear (fused bias and activation; the fused
 * kernels of nn_fused.c for a few rows), transpose. */
#include "nn_internal.h"

#include <cblas.h>
#include <string.h>

/* Every product goes to OpenBLAS, however small: 0.3.21 has small-matrix kernels (measured on
 * the AVX-512 benchmark machine: 28 ns for a 1x13 row times 13x13, 99 ns for 16x16x16, against
 * 49 ns and 674 ns for a vectorised loop), and on cores without them (OPENBLAS_CORETYPE=Haswell)
 * a loop would win by at most ~50 ns on the tiniest products. */
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
    /* OpenBLAS even for few rows: the fused gradient kernels of nn_fused.c give the same bits
     * but were no faster on any of the placers' shapes (test_nn_fused's timings). */
    if (w->grad)
        pb_nn_gemm(1, 0, in, out, n, 1.0f, x->data, in, dz, out, 1.0f, w->grad, out);
    if (x->grad)
        pb_nn_gemm(0, 1, n, in, out, 1.0f, dz, out, w->data, out, 1.0f, x->grad, in);
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
    int n = x->rows, out = w->cols;
    if (n <= NN_FUSED_MAX_ROWS && act <= PB_NN_ACT_RELU) {
        nn_fused_linear(nn_cpu_isa(), n, x->cols, out, x->data, w->data, b ? b->data : NULL,
                        act == PB_NN_ACT_RELU, y->data);
    } else {
        for (int i = 0; b && i < n; i++)
            memcpy(y->data + (size_t)i * (size_t)out, b->data, (size_t)out * sizeof(float));
        pb_nn_gemm(0, 0, n, out, x->cols, 1.0f, x->data, x->cols, w->data, out, b ? 1.0f : 0.0f,
                   y->data, out);
        nn_elem_activate(act, y->data, nn_numel(y));
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
