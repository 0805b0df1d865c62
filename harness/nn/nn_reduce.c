/* nn_reduce.c — reductions and normalisations: softmax, log-softmax, layer norm, L2 normalise,
 * sums and means, row-wise dot products. */
#include "nn_internal.h"

#include <math.h>
#include <string.h>

static float *reduce_row(const pb_nn_tensor *x, float *base, int i)
{
    return base + (size_t)i * (size_t)x->cols;
}

/* Records a backward step reading in[0] (and in[1]) when the tape wants gradients. */
static int reduce_record(pb_nn_tape *t, nn_backward_fn fn, pb_nn_tensor *y, pb_nn_tensor *a,
                         pb_nn_tensor *b, void *aux)
{
    nn_record *r = nn_tape_record(t, fn, y);
    if (!r)
        return PB_ERR;
    r->in[0] = a;
    r->in[1] = b;
    r->aux = aux;
    return PB_OK;
}

/* Writes the max-shifted exponentials of row x into p and returns their sum. */
static double reduce_shifted_exp(const float *x, float *p, int n, float *max_out)
{
    float m = x[0];
    for (int j = 1; j < n; j++)
        m = x[j] > m ? x[j] : m;
    double s = 0.0;
    for (int j = 0; j < n; j++) {
        p[j] = expf(x[j] - m);
        s += p[j];
    }
    *max_out = m;
    return s;
}

static void reduce_softmax_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    for (int i = 0; i < y->rows; i++) {
        const float *yi = reduce_row(y, y->data, i), *dy = reduce_row(y, y->grad, i);
        float *dx = reduce_row(x, x->grad, i);
        double dot = 0.0;
        for (int j = 0; j < y->cols; j++)
            dot += (double)dy[j] * yi[j];
        for (int j = 0; j < y->cols; j++)
            dx[j] += yi[j] * (dy[j] - (float)dot);
    }
}

pb_nn_tensor *pb_nn_softmax(pb_nn_tape *t, pb_nn_tensor *x)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_softmax", 1, x, NULL, NULL))
        return NULL;
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows, x->cols, grad);
    if (!y)
        return NULL;
    for (int i = 0; x->cols > 0 && i < x->rows; i++) {
        float m, *yi = reduce_row(y, y->data, i);
        float inv = (float)(1.0 / reduce_shifted_exp(reduce_row(x, x->data, i), yi, x->cols, &m));
        for (int j = 0; j < x->cols; j++)
            yi[j] *= inv;
    }
    if (grad && reduce_record(t, reduce_softmax_backward, y, x, NULL, NULL) != PB_OK)
        return NULL;
    return y;
}

/* dx = dy - softmax * sum(dy); the softmax was saved by the forward pass. */
static void reduce_log_softmax_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    const float *p = r->aux;
    for (int i = 0; i < y->rows; i++) {
        const float *dy = reduce_row(y, y->grad, i), *pi = reduce_row(y, (float *)p, i);
        float *dx = reduce_row(x, x->grad, i);
        double s = 0.0;
        for (int j = 0; j < y->cols; j++)
            s += dy[j];
        for (int j = 0; j < y->cols; j++)
            dx[j] += dy[j] - pi[j] * (float)s;
    }
}

pb_nn_tensor *pb_nn_log_softmax(pb_nn_tape *t, pb_nn_tensor *x)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_log_softmax", 1, x, NULL, NULL))
        return NULL;
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows, x->cols, grad);
    float *p = y ? nn_tape_alloc(t, nn_numel(x) * sizeof(float)) : NULL;
    if (!p)
        return NULL;
    for (int i = 0; x->cols > 0 && i < x->rows; i++) {
        const float *xi = reduce_row(x, x->data, i);
        float m, *pi = reduce_row(x, p, i), *yi = reduce_row(y, y->data, i);
        double s = reduce_shifted_exp(xi, pi, x->cols, &m);
        float log_s = (float)log(s);
        for (int j = 0; j < x->cols; j++) {
            yi[j] = (xi[j] - m) - log_s; /* x - m is exact near the max: no loss at large x */
            pi[j] = (float)(pi[j] / s);
        }
    }
    if (grad && reduce_record(t, reduce_log_softmax_backward, y, x, NULL, p) != PB_OK)
        return NULL;
    return y;
}

/* Saved by the layer-norm forward pass: the normalised input and 1/std of every row. */
typedef struct reduce_ln_saved {
    float *xhat;
    float *rstd;
} reduce_ln_saved;

static void reduce_layer_norm_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *gamma = r->in[1], *beta = r->in[2], *y = r->out;
    const reduce_ln_saved *sv = r->aux;
    int c = x->cols;
    for (int i = 0; i < x->rows; i++) {
        const float *dy = reduce_row(y, y->grad, i), *xh = reduce_row(x, sv->xhat, i);
        double mean_g = 0.0, mean_gx = 0.0;
        for (int j = 0; j < c; j++) {
            float g = dy[j] * (gamma ? gamma->data[j] : 1.0f);
            mean_g += g;
            mean_gx += (double)g * xh[j];
            if (gamma && gamma->grad)
                gamma->grad[j] += dy[j] * xh[j];
            if (beta && beta->grad)
                beta->grad[j] += dy[j];
        }
        mean_g /= c;
        mean_gx /= c;
        if (!x->grad)
            continue;
        float *dx = reduce_row(x, x->grad, i);
        for (int j = 0; j < c; j++) {
            float g = dy[j] * (gamma ? gamma->data[j] : 1.0f);
            dx[j] += sv->rstd[i] * (g - (float)mean_g - xh[j] * (float)mean_gx);
        }
    }
}

static void reduce_layer_norm_row(const float *x, int c, float eps, float *xhat, float *rstd)
{
    double mean = 0.0, var = 0.0;
    for (int j = 0; j < c; j++)
        mean += x[j];
    mean /= c;
    for (int j = 0; j < c; j++)
        var += (x[j] - mean) * (x[j] - mean);
    var /= c;
    *rstd = (float)(1.0 / sqrt(var + eps));
    for (int j = 0; j < c; j++)
        xhat[j] = (float)((x[j] - mean) * *rstd);
}

pb_nn_tensor *pb_nn_layer_norm(pb_nn_tape *t, pb_nn_tensor *x, pb_nn_tensor *gamma,
                               pb_nn_tensor *beta, float eps)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_layer_norm", 1, x, NULL, NULL))
        return NULL;
    if ((gamma && (gamma->rows != 1 || gamma->cols != x->cols)) ||
        (beta && (beta->rows != 1 || beta->cols != x->cols)))
        return nn_tape_fail(t, "pb_nn_layer_norm: gamma and beta must be 1x%d", x->cols);
    if (x->cols < 1 || !(eps >= 0.0f))
        return nn_tape_fail(t, "pb_nn_layer_norm: needs columns and eps >= 0");
    int grad = nn_tape_wants_grad(t, x, gamma, beta);
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows, x->cols, grad);
    reduce_ln_saved *sv = y ? nn_tape_alloc(t, sizeof *sv) : NULL;
    if (!sv || !(sv->xhat = nn_tape_alloc(t, nn_numel(x) * sizeof(float))) ||
        !(sv->rstd = nn_tape_alloc(t, (size_t)x->rows * sizeof(float))))
        return NULL;
    for (int i = 0; i < x->rows; i++) {
        float *xh = reduce_row(x, sv->xhat, i), *yi = reduce_row(y, y->data, i);
        reduce_layer_norm_row(reduce_row(x, x->data, i), x->cols, eps, xh, &sv->rstd[i]);
        for (int j = 0; j < x->cols; j++)
            yi[j] = xh[j] * (gamma ? gamma->data[j] : 1.0f) + (beta ? beta->data[j] : 0.0f);
    }
    if (grad) {
        if (reduce_record(t, reduce_layer_norm_backward, y, x, gamma, sv) != PB_OK)
            return NULL;
        t->rec[t->n_rec - 1].in[2] = beta;
    }
    return y;
}

/* One group (a row, or the whole matrix) of n entries: y = x / sqrt(max(sum x^2, eps)).  Saved
 * per group: inv = the factor, and clamped != 0 when eps won (then the factor is a constant). */
static void reduce_l2_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    const float *saved = r->aux;
    int groups = r->i[0];
    size_t n = nn_numel(x) / (size_t)(groups ? groups : 1);
    for (int g = 0; g < groups; g++) {
        const float *yg = y->data + g * n, *dy = y->grad + g * n;
        float *dx = x->grad + g * n, inv = saved[2 * g];
        double dot = 0.0;
        if (saved[2 * g + 1] == 0.0f)
            for (size_t k = 0; k < n; k++)
                dot += (double)dy[k] * yg[k];
        for (size_t k = 0; k < n; k++)
            dx[k] += inv * (dy[k] - yg[k] * (float)dot);
    }
}

pb_nn_tensor *pb_nn_l2_normalize(pb_nn_tape *t, pb_nn_tensor *x, int per_row, float eps)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_l2_normalize", 1, x, NULL, NULL))
        return NULL;
    if (!(eps > 0.0f))
        return nn_tape_fail(t, "pb_nn_l2_normalize: eps must be > 0");
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    int groups = per_row ? x->rows : 1;
    size_t n = per_row ? (size_t)x->cols : nn_numel(x);
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows, x->cols, grad);
    float *saved = y ? nn_tape_alloc(t, 2 * (size_t)groups * sizeof(float)) : NULL;
    if (!saved)
        return NULL;
    for (int g = 0; g < groups; g++) {
        const float *xg = x->data + g * n;
        double s = 0.0;
        for (size_t k = 0; k < n; k++)
            s += (double)xg[k] * xg[k];
        int clamped = !(s > eps);
        float inv = (float)(1.0 / sqrt(clamped ? (double)eps : s));
        saved[2 * g] = inv;
        saved[2 * g + 1] = (float)clamped;
        for (size_t k = 0; k < n; k++)
            y->data[g * n + k] = xg[k] * inv;
    }
    if (grad) {
        if (reduce_record(t, reduce_l2_backward, y, x, NULL, saved) != PB_OK)
            return NULL;
        t->rec[t->n_rec - 1].i[0] = groups;
    }
    return y;
}

/* Sums: kind 0 = all entries (1x1), 1 = over rows (1 x cols), 2 = over columns (rows x 1);
 * f scales the result (1/count for means). */
enum { REDUCE_ALL, REDUCE_OVER_ROWS, REDUCE_OVER_COLS };

static size_t reduce_target(int kind, int i, int j)
{
    return kind == REDUCE_ALL ? 0 : kind == REDUCE_OVER_ROWS ? (size_t)j : (size_t)i;
}

static void reduce_sum_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    for (int i = 0; i < x->rows; i++) {
        float *dx = reduce_row(x, x->grad, i);
        for (int j = 0; j < x->cols; j++)
            dx[j] += r->f * y->grad[reduce_target(r->i[0], i, j)];
    }
}

static pb_nn_tensor *reduce_sum(pb_nn_tape *t, pb_nn_tensor *x, int kind, int mean, const char *op)
{
    if (!nn_tape_inputs_ok(t, op, 1, x, NULL, NULL))
        return NULL;
    int rows = kind == REDUCE_OVER_COLS ? x->rows : 1;
    int cols = kind == REDUCE_OVER_ROWS ? x->cols : 1;
    size_t count = kind == REDUCE_ALL         ? nn_numel(x)
                   : kind == REDUCE_OVER_ROWS ? (size_t)x->rows
                                              : (size_t)x->cols;
    float f = mean && count > 0 ? (float)(1.0 / (double)count) : 1.0f;
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, rows, cols, grad);
    double *acc = y ? nn_tape_alloc(t, nn_numel(y) * sizeof(double)) : NULL;
    if (!acc)
        return NULL;
    memset(acc, 0, nn_numel(y) * sizeof(double));
    for (int i = 0; i < x->rows; i++) {
        const float *xi = reduce_row(x, x->data, i);
        for (int j = 0; j < x->cols; j++)
            acc[reduce_target(kind, i, j)] += xi[j];
    }
    for (size_t k = 0; k < nn_numel(y); k++)
        y->data[k] = (float)(acc[k] * f);
    if (grad) {
        if (reduce_record(t, reduce_sum_backward, y, x, NULL, NULL) != PB_OK)
            return NULL;
        t->rec[t->n_rec - 1].i[0] = kind;
        t->rec[t->n_rec - 1].f = f;
    }
    return y;
}

pb_nn_tensor *pb_nn_sum(pb_nn_tape *t, pb_nn_tensor *x)
{
    return reduce_sum(t, x, REDUCE_ALL, 0, "pb_nn_sum");
}

pb_nn_tensor *pb_nn_mean(pb_nn_tape *t, pb_nn_tensor *x)
{
    return reduce_sum(t, x, REDUCE_ALL, 1, "pb_nn_mean");
}

pb_nn_tensor *pb_nn_colsum(pb_nn_tape *t, pb_nn_tensor *x)
{
    return reduce_sum(t, x, REDUCE_OVER_ROWS, 0, "pb_nn_colsum");
}

pb_nn_tensor *pb_nn_colmean(pb_nn_tape *t, pb_nn_tensor *x)
{
    return reduce_sum(t, x, REDUCE_OVER_ROWS, 1, "pb_nn_colmean");
}

pb_nn_tensor *pb_nn_rowsum(pb_nn_tape *t, pb_nn_tensor *x)
{
    return reduce_sum(t, x, REDUCE_OVER_COLS, 0, "pb_nn_rowsum");
}

static void reduce_rowdot_backward(const nn_record *r)
{
    const pb_nn_tensor *a = r->in[0], *b = r->in[1], *y = r->out;
    int bcast = b->rows == 1 && a->rows != 1;
    for (int i = 0; i < a->rows; i++) {
        const float *bi = reduce_row(b, b->data, bcast ? 0 : i);
        const float *ai = reduce_row(a, a->data, i);
        float dy = y->grad[i];
        if (a->grad)
            for (int j = 0; j < a->cols; j++)
                reduce_row(a, a->grad, i)[j] += dy * bi[j];
        if (b->grad)
            for (int j = 0; j < a->cols; j++)
                reduce_row(b, b->grad, bcast ? 0 : i)[j] += dy * ai[j];
    }
}

pb_nn_tensor *pb_nn_rowdot(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_rowdot", 2, a, b, NULL))
        return NULL;
    if (b->cols != a->cols || (b->rows != a->rows && b->rows != 1))
        return nn_tape_fail(t, "pb_nn_rowdot: %dx%d with %dx%d (need %dx%d or 1x%d)", a->rows,
                            a->cols, b->rows, b->cols, a->rows, a->cols, a->cols);
    int grad = nn_tape_wants_grad(t, a, b, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, a->rows, 1, grad);
    if (!y)
        return NULL;
    int bcast = b->rows == 1 && a->rows != 1;
    for (int i = 0; i < a->rows; i++) {
        const float *ai = reduce_row(a, a->data, i), *bi = reduce_row(b, b->data, bcast ? 0 : i);
        double s = 0.0;
        for (int j = 0; j < a->cols; j++)
            s += (double)ai[j] * bi[j];
        y->data[i] = (float)s;
    }
    if (grad && reduce_record(t, reduce_rowdot_backward, y, a, b, NULL) != PB_OK)
        return NULL;
    return y;
}
