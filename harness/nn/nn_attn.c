/* nn_attn.c — graph-attention ops: leaky ReLU, per-head dot products, softmax over segments of
 * rows (the incoming edges of each node) and the attention-weighted multi-head sum. */
#include "nn_internal.h"

#include <math.h>
#include <string.h>

static float *attn_row(const pb_nn_tensor *x, float *base, int i)
{
    return base + (size_t)i * (size_t)x->cols;
}

static int attn_csr_row(const nn_record *r, int k)
{
    return r->idx ? r->idx[k] : k;
}

static void attn_leaky_relu_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    for (size_t k = 0; k < nn_numel(x); k++)
        x->grad[k] += x->data[k] > 0 ? y->grad[k] : r->f * y->grad[k];
}

pb_nn_tensor *pb_nn_leaky_relu(pb_nn_tape *t, pb_nn_tensor *x, float slope)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_leaky_relu", 1, x, NULL, NULL))
        return NULL;
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows, x->cols, grad);
    if (!y)
        return NULL;
    for (size_t k = 0; k < nn_numel(x); k++)
        y->data[k] = x->data[k] > 0 ? x->data[k] : slope * x->data[k];
    if (grad) {
        nn_record *r = nn_tape_record(t, attn_leaky_relu_backward, y);
        if (!r)
            return NULL;
        r->in[0] = x;
        r->f = slope;
    }
    return y;
}

static void attn_head_dot_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *a = r->in[1], *y = r->out;
    int heads = y->cols, d = x->cols / heads;
    for (int i = 0; i < x->rows; i++) {
        const float *xi = attn_row(x, x->data, i), *dy = attn_row(y, y->grad, i);
        for (int h = 0; h < heads; h++) {
            size_t o = (size_t)h * (size_t)d;
            if (x->grad)
                nn_elem_axpy(attn_row(x, x->grad, i) + o, dy[h], a->data + o, (size_t)d);
            if (a->grad)
                nn_elem_axpy(a->grad + o, dy[h], xi + o, (size_t)d);
        }
    }
}

pb_nn_tensor *pb_nn_head_dot(pb_nn_tape *t, pb_nn_tensor *x, pb_nn_tensor *a, int heads)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_head_dot", 2, x, a, NULL))
        return NULL;
    if (heads < 1 || x->cols % heads != 0 || a->rows != 1 || a->cols != x->cols)
        return nn_tape_fail(t, "pb_nn_head_dot: %dx%d by %dx%d does not split into %d heads",
                            x->rows, x->cols, a->rows, a->cols, heads);
    int grad = nn_tape_wants_grad(t, x, a, NULL), d = x->cols / heads;
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows, heads, grad);
    if (!y)
        return NULL;
    for (int i = 0; i < x->rows; i++) {
        const float *xi = attn_row(x, x->data, i);
        for (int h = 0; h < heads; h++) {
            double s = 0.0;
            for (int j = h * d; j < (h + 1) * d; j++)
                s += (double)xi[j] * a->data[j];
            y->data[(size_t)i * (size_t)heads + (size_t)h] = (float)s;
        }
    }
    if (grad) {
        nn_record *r = nn_tape_record(t, attn_head_dot_backward, y);
        if (!r)
            return NULL;
        r->in[0] = x;
        r->in[1] = a;
    }
    return y;
}

/* dx = y (dy - sum over the segment of y dy), per segment and column. */
static void attn_segment_softmax_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    for (int s = 0; s < r->i[0]; s++) {
        for (int c = 0; c < x->cols; c++) {
            double dot = 0.0;
            for (int k = r->start[s]; k < r->start[s + 1]; k++) {
                int e = attn_csr_row(r, k);
                dot += (double)attn_row(y, y->grad, e)[c] * attn_row(y, y->data, e)[c];
            }
            for (int k = r->start[s]; k < r->start[s + 1]; k++) {
                int e = attn_csr_row(r, k);
                float ye = attn_row(y, y->data, e)[c];
                attn_row(x, x->grad, e)[c] += ye * (attn_row(y, y->grad, e)[c] - (float)dot);
            }
        }
    }
}

/* 1 when no row of x is in two segments of csr; else records why. */
static int attn_rows_once(pb_nn_tape *t, const pb_nn_csr *csr, int x_rows)
{
    unsigned char *seen = nn_tape_alloc(t, (size_t)x_rows + 1);
    if (!seen)
        return 0;
    memset(seen, 0, (size_t)x_rows + 1);
    for (int k = 0; k < csr->start[csr->n_rows]; k++) {
        int e = csr->index ? csr->index[k] : k;
        if (seen[e]++) {
            nn_tape_fail(t, "pb_nn_segment_softmax: row %d is in two segments", e);
            return 0;
        }
    }
    return 1;
}

pb_nn_tensor *pb_nn_segment_softmax(pb_nn_tape *t, pb_nn_tensor *x, const pb_nn_csr *csr)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_segment_softmax", 1, x, NULL, NULL))
        return NULL;
    if (nn_check_csr(t, "pb_nn_segment_softmax", csr, x->rows) != PB_OK ||
        !attn_rows_once(t, csr, x->rows))
        return NULL;
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows, x->cols, grad);
    if (!y)
        return NULL;
    memset(y->data, 0, nn_numel(y) * sizeof(float));
    nn_record local = {.idx = csr->index, .start = csr->start};
    local.i[0] = csr->n_rows;
    for (int s = 0; s < csr->n_rows; s++) {
        if (csr->start[s] == csr->start[s + 1])
            continue;
        for (int c = 0; c < x->cols; c++) {
            float m = -INFINITY;
            for (int k = csr->start[s]; k < csr->start[s + 1]; k++) {
                float v = attn_row(x, x->data, attn_csr_row(&local, k))[c];
                m = v > m ? v : m;
            }
            double sum = 0.0;
            for (int k = csr->start[s]; k < csr->start[s + 1]; k++) {
                int e = attn_csr_row(&local, k);
                float p = expf(attn_row(x, x->data, e)[c] - m);
                attn_row(y, y->data, e)[c] = p;
                sum += p;
            }
            float inv = (float)(1.0 / sum);
            for (int k = csr->start[s]; k < csr->start[s + 1]; k++)
                attn_row(y, y->data, attn_csr_row(&local, k))[c] *= inv;
        }
    }
    if (grad) {
        nn_record *r = nn_tape_record(t, attn_segment_softmax_backward, y);
        if (!r)
            return NULL;
        local.backward = attn_segment_softmax_backward;
        local.out = y;
        local.in[0] = x;
        *r = local;
    }
    return y;
}

static void attn_attend_backward(const nn_record *r)
{
    const pb_nn_tensor *m = r->in[0], *alpha = r->in[1], *y = r->out;
    int heads = alpha->cols, d = m->cols / heads;
    for (int s = 0; s < y->rows; s++) {
        const float *dy = attn_row(y, y->grad, s);
        for (int k = r->start[s]; k < r->start[s + 1]; k++) {
            int e = attn_csr_row(r, k);
            const float *me = attn_row(m, m->data, e), *ae = attn_row(alpha, alpha->data, e);
            for (int h = 0; h < heads; h++) {
                size_t o = (size_t)h * (size_t)d;
                if (m->grad)
                    nn_elem_axpy(attn_row(m, m->grad, e) + o, ae[h], dy + o, (size_t)d);
                if (alpha->grad) {
                    double g = 0.0;
                    for (int j = 0; j < d; j++)
                        g += (double)dy[o + (size_t)j] * me[o + (size_t)j];
                    attn_row(alpha, alpha->grad, e)[h] += (float)g;
                }
            }
        }
    }
}

pb_nn_tensor *pb_nn_attend(pb_nn_tape *t, pb_nn_tensor *m, pb_nn_tensor *alpha,
                           const pb_nn_csr *csr)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_attend", 2, m, alpha, NULL))
        return NULL;
    if (alpha->rows != m->rows || alpha->cols < 1 || m->cols % alpha->cols != 0)
        return nn_tape_fail(t, "pb_nn_attend: messages %dx%d do not split into the %dx%d weights",
                            m->rows, m->cols, alpha->rows, alpha->cols);
    if (nn_check_csr(t, "pb_nn_attend", csr, m->rows) != PB_OK)
        return NULL;
    int grad = nn_tape_wants_grad(t, m, alpha, NULL);
    int heads = alpha->cols, d = m->cols / heads;
    pb_nn_tensor *y = nn_tape_tensor(t, csr->n_rows, m->cols, grad);
    if (!y)
        return NULL;
    memset(y->data, 0, nn_numel(y) * sizeof(float));
    nn_record local = {.idx = csr->index, .start = csr->start};
    for (int s = 0; s < csr->n_rows; s++) {
        float *ys = attn_row(y, y->data, s);
        for (int k = csr->start[s]; k < csr->start[s + 1]; k++) {
            int e = attn_csr_row(&local, k);
            const float *me = attn_row(m, m->data, e), *ae = attn_row(alpha, alpha->data, e);
            for (int h = 0; h < heads; h++) {
                size_t o = (size_t)h * (size_t)d;
                nn_elem_axpy(ys + o, ae[h], me + o, (size_t)d);
            }
        }
    }
    if (grad) {
        nn_record *r = nn_tape_record(t, attn_attend_backward, y);
        if (!r)
            return NULL;
        local.backward = attn_attend_backward;
        local.out = y;
        local.in[0] = m;
        local.in[1] = alpha;
        *r = local;
    }
    return y;
}
