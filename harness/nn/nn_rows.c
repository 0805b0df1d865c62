/* nn_rows.c — ops that move rows and columns: assign, concat, slice, gather, scatter, sparse
 * neighbour aggregation (sum/mean/max/min over CSR rows), sliding-window row pooling. */
#include "nn_internal.h"

#include <string.h>

static float *rows_row(const pb_nn_tensor *x, float *base, int i)
{
    return base + (size_t)i * (size_t)x->cols;
}

static void rows_add(float *dst, const float *src, int n)
{
    nn_elem_axpy(dst, 1.0f, src, (size_t)n);
}

static void rows_assign_backward(const nn_record *r)
{
    rows_add(r->in[0]->grad, r->out->grad, (int)nn_numel(r->out));
}

pb_nn_tensor *pb_nn_assign(pb_nn_tape *t, pb_nn_tensor *dst, pb_nn_tensor *src)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_assign", 2, dst, src, NULL))
        return NULL;
    if (dst->rows != src->rows || dst->cols != src->cols)
        return nn_tape_fail(t, "pb_nn_assign: a %dx%d tensor into a %dx%d one", src->rows,
                            src->cols, dst->rows, dst->cols);
    if (src->grad && !dst->grad)
        return nn_tape_fail(t, "pb_nn_assign: the destination has no gradient (use pb_nn_buffer)");
    memcpy(dst->data, src->data, nn_numel(src) * sizeof(float));
    if (nn_tape_wants_grad(t, src, NULL, NULL)) {
        nn_record *r = nn_tape_record(t, rows_assign_backward, dst);
        if (!r)
            return NULL;
        r->in[0] = src;
    }
    return dst;
}

/* Concatenation: `side` != 0 places inputs side by side (columns), else stacks them (rows). */
static void rows_concat_backward(const nn_record *r)
{
    const pb_nn_tensor *y = r->out;
    int side = r->i[0], offset = 0;
    for (int q = 0; q < r->n_list; q++) {
        const pb_nn_tensor *x = r->list[q];
        if (x->grad && side)
            for (int i = 0; i < y->rows; i++)
                rows_add(rows_row(x, x->grad, i), rows_row(y, y->grad, i) + offset, x->cols);
        else if (x->grad)
            rows_add(x->grad, rows_row(y, y->grad, offset), (int)nn_numel(x));
        offset += side ? x->cols : x->rows;
    }
}

static int rows_concat_shape(pb_nn_tape *t, int n, pb_nn_tensor *const *xs, int side,
                             const char *op, int *rows, int *cols, int *grad)
{
    if (!nn_tape_inputs_ok(t, op, 0, NULL, NULL, NULL))
        return PB_ERR;
    if (n < 1 || !xs) {
        nn_tape_fail(t, "%s: no inputs", op);
        return PB_ERR;
    }
    *rows = side ? -1 : 0;
    *cols = side ? 0 : -1;
    *grad = 0;
    for (int q = 0; q < n; q++) {
        const pb_nn_tensor *x = xs[q];
        if (!x) {
            nn_tape_fail(t, "%s: input %d is NULL", op, q + 1);
            return PB_ERR;
        }
        int *same = side ? rows : cols, *sum = side ? cols : rows;
        int want = side ? x->rows : x->cols;
        if (*same >= 0 && *same != want) {
            nn_tape_fail(t, "%s: input %d is %dx%d, the first is %dx%d", op, q + 1, x->rows,
                         x->cols, xs[0]->rows, xs[0]->cols);
            return PB_ERR;
        }
        *same = want;
        *sum += side ? x->cols : x->rows;
        *grad |= nn_tape_wants_grad(t, x, NULL, NULL);
    }
    return PB_OK;
}

static pb_nn_tensor *rows_concat(pb_nn_tape *t, int n, pb_nn_tensor *const *xs, int side,
                                 const char *op)
{
    int rows, cols, grad;
    if (rows_concat_shape(t, n, xs, side, op, &rows, &cols, &grad) != PB_OK)
        return NULL;
    pb_nn_tensor *y = nn_tape_tensor(t, rows, cols, grad);
    if (!y)
        return NULL;
    int offset = 0;
    for (int q = 0; q < n; q++) {
        const pb_nn_tensor *x = xs[q];
        if (side)
            for (int i = 0; i < rows; i++)
                memcpy(rows_row(y, y->data, i) + offset, rows_row(x, x->data, i),
                       (size_t)x->cols * sizeof(float));
        else
            memcpy(rows_row(y, y->data, offset), x->data, nn_numel(x) * sizeof(float));
        offset += side ? x->cols : x->rows;
    }
    if (grad) {
        pb_nn_tensor **list = nn_tape_alloc(t, (size_t)n * sizeof *list);
        nn_record *r = list ? nn_tape_record(t, rows_concat_backward, y) : NULL;
        if (!r)
            return NULL;
        memcpy(list, xs, (size_t)n * sizeof *list);
        r->list = list;
        r->n_list = n;
        r->i[0] = side;
    }
    return y;
}

pb_nn_tensor *pb_nn_concat_cols(pb_nn_tape *t, int n, pb_nn_tensor *const *xs)
{
    return rows_concat(t, n, xs, 1, "pb_nn_concat_cols");
}

pb_nn_tensor *pb_nn_concat_rows(pb_nn_tape *t, int n, pb_nn_tensor *const *xs)
{
    return rows_concat(t, n, xs, 0, "pb_nn_concat_rows");
}

static void rows_slice_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    for (int i = 0; i < y->rows; i++)
        rows_add(rows_row(x, x->grad, i) + r->i[0], rows_row(y, y->grad, i), y->cols);
}

pb_nn_tensor *pb_nn_slice_cols(pb_nn_tape *t, pb_nn_tensor *x, int start, int count)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_slice_cols", 1, x, NULL, NULL))
        return NULL;
    if (start < 0 || count < 0 || start > x->cols - count)
        return nn_tape_fail(t, "pb_nn_slice_cols: columns %d..%d+%d of a %dx%d tensor", start,
                            start, count, x->rows, x->cols);
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows, count, grad);
    if (!y)
        return NULL;
    for (int i = 0; i < x->rows; i++)
        memcpy(rows_row(y, y->data, i), rows_row(x, x->data, i) + start,
               (size_t)count * sizeof(float));
    if (grad) {
        nn_record *r = nn_tape_record(t, rows_slice_backward, y);
        if (!r)
            return NULL;
        r->in[0] = x;
        r->i[0] = start;
    }
    return y;
}

static int rows_check_index(pb_nn_tape *t, const char *op, const int *idx, int n, int limit)
{
    if (n > 0 && !idx) {
        nn_tape_fail(t, "%s: no index array", op);
        return PB_ERR;
    }
    for (int i = 0; i < n; i++) {
        if (idx[i] < 0 || idx[i] >= limit) {
            nn_tape_fail(t, "%s: index %d at position %d is outside 0..%d", op, idx[i], i,
                         limit - 1);
            return PB_ERR;
        }
    }
    return PB_OK;
}

static void rows_gather_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    for (int i = 0; i < y->rows; i++)
        rows_add(rows_row(x, x->grad, r->idx[i]), rows_row(y, y->grad, i), x->cols);
}

pb_nn_tensor *pb_nn_gather_rows(pb_nn_tape *t, pb_nn_tensor *x, const int *idx, int n)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_gather_rows", 1, x, NULL, NULL))
        return NULL;
    if (n < 0)
        return nn_tape_fail(t, "pb_nn_gather_rows: negative count %d", n);
    if (rows_check_index(t, "pb_nn_gather_rows", idx, n, x->rows) != PB_OK)
        return NULL;
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, n, x->cols, grad);
    if (!y)
        return NULL;
    for (int i = 0; i < n; i++)
        memcpy(rows_row(y, y->data, i), rows_row(x, x->data, idx[i]),
               (size_t)x->cols * sizeof(float));
    if (grad) {
        nn_record *r = nn_tape_record(t, rows_gather_backward, y);
        if (!r)
            return NULL;
        r->in[0] = x;
        r->idx = idx;
    }
    return y;
}

static void rows_scatter_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    for (int i = 0; i < x->rows; i++)
        rows_add(rows_row(x, x->grad, i), rows_row(y, y->grad, r->idx[i]), x->cols);
}

pb_nn_tensor *pb_nn_scatter_add_rows(pb_nn_tape *t, pb_nn_tensor *x, const int *idx, int n_out)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_scatter_add_rows", 1, x, NULL, NULL))
        return NULL;
    if (n_out < 0)
        return nn_tape_fail(t, "pb_nn_scatter_add_rows: negative row count %d", n_out);
    if (rows_check_index(t, "pb_nn_scatter_add_rows", idx, x->rows, n_out) != PB_OK)
        return NULL;
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, n_out, x->cols, grad);
    if (!y)
        return NULL;
    memset(y->data, 0, nn_numel(y) * sizeof(float));
    for (int i = 0; i < x->rows; i++)
        rows_add(rows_row(y, y->data, idx[i]), rows_row(x, x->data, i), x->cols);
    if (grad) {
        nn_record *r = nn_tape_record(t, rows_scatter_backward, y);
        if (!r)
            return NULL;
        r->in[0] = x;
        r->idx = idx;
    }
    return y;
}

int nn_check_csr(pb_nn_tape *t, const char *op, const pb_nn_csr *csr, int x_rows)
{
    if (!csr || csr->n_rows < 0 || !csr->start) {
        nn_tape_fail(t, "%s: missing or malformed CSR (n_rows, start)", op);
        return PB_ERR;
    }
    if (csr->start[0] != 0) {
        nn_tape_fail(t, "%s: CSR start[0] is %d, not 0", op, csr->start[0]);
        return PB_ERR;
    }
    for (int s = 0; s < csr->n_rows; s++) {
        if (csr->start[s + 1] < csr->start[s]) {
            nn_tape_fail(t, "%s: CSR start decreases at row %d", op, s);
            return PB_ERR;
        }
    }
    int nnz = csr->start[csr->n_rows];
    if (!csr->index && nnz > x_rows) {
        nn_tape_fail(t, "%s: CSR segments cover %d rows, the input has %d", op, nnz, x_rows);
        return PB_ERR;
    }
    return csr->index ? rows_check_index(t, op, csr->index, nnz, x_rows) : PB_OK;
}

static int rows_csr_row(const nn_record *r, int k)
{
    return r->idx ? r->idx[k] : k;
}

static float rows_csr_weight(const nn_record *r, int k)
{
    return r->weight ? r->weight[k] : 1.0f;
}

/* Sum or mean: y[s] = scale_s * sum_k w_k x[row_k]. */
static void rows_agg_sum(const nn_record *r, const pb_nn_tensor *x, pb_nn_tensor *y)
{
    int cols = x->cols;
    for (int s = 0; s < y->rows; s++) {
        float *ys = rows_row(y, y->data, s);
        memset(ys, 0, (size_t)cols * sizeof(float));
        int k0 = r->start[s], k1 = r->start[s + 1];
        for (int k = k0; k < k1; k++) {
            nn_elem_axpy(ys, rows_csr_weight(r, k), rows_row(x, x->data, rows_csr_row(r, k)),
                         (size_t)cols);
        }
        if (r->i[0] == PB_NN_AGG_MEAN && k1 > k0)
            for (int j = 0; j < cols; j++)
                ys[j] /= (float)(k1 - k0);
    }
}

/* Max or min: the winning CSR position of every output entry goes to arg (-1 when empty). */
static void rows_agg_extreme(const nn_record *r, const pb_nn_tensor *x, pb_nn_tensor *y, int *arg)
{
    int cols = x->cols, is_max = r->i[0] == PB_NN_AGG_MAX;
    for (int s = 0; s < y->rows; s++) {
        float *ys = rows_row(y, y->data, s);
        int *as = arg + (size_t)s * (size_t)cols;
        int k0 = r->start[s], k1 = r->start[s + 1];
        for (int j = 0; j < cols; j++) {
            ys[j] = 0.0f;
            as[j] = -1;
        }
        for (int k = k0; k < k1; k++) {
            const float *xr = rows_row(x, x->data, rows_csr_row(r, k));
            float w = rows_csr_weight(r, k);
            for (int j = 0; j < cols; j++) {
                float v = w * xr[j];
                if (k == k0 || (is_max ? v > ys[j] : v < ys[j])) {
                    ys[j] = v;
                    as[j] = k;
                }
            }
        }
    }
}

static void rows_aggregate_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    int cols = x->cols, kind = r->i[0];
    for (int s = 0; s < y->rows; s++) {
        const float *dy = rows_row(y, y->grad, s);
        int k0 = r->start[s], k1 = r->start[s + 1];
        if (kind == PB_NN_AGG_SUM || kind == PB_NN_AGG_MEAN) {
            float scale = kind == PB_NN_AGG_MEAN && k1 > k0 ? 1.0f / (float)(k1 - k0) : 1.0f;
            for (int k = k0; k < k1; k++) {
                nn_elem_axpy(rows_row(x, x->grad, rows_csr_row(r, k)),
                             scale * rows_csr_weight(r, k), dy, (size_t)cols);
            }
            continue;
        }
        const int *as = (const int *)r->aux + (size_t)s * (size_t)cols;
        for (int j = 0; j < cols; j++)
            if (as[j] >= 0)
                rows_row(x, x->grad, rows_csr_row(r, as[j]))[j] +=
                    rows_csr_weight(r, as[j]) * dy[j];
    }
}

pb_nn_tensor *pb_nn_aggregate(pb_nn_tape *t, pb_nn_tensor *x, const pb_nn_csr *csr, int kind)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_aggregate", 1, x, NULL, NULL))
        return NULL;
    if (kind < PB_NN_AGG_SUM || kind > PB_NN_AGG_MIN)
        return nn_tape_fail(t, "pb_nn_aggregate: unknown aggregation %d", kind);
    if (nn_check_csr(t, "pb_nn_aggregate", csr, x->rows) != PB_OK)
        return NULL;
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, csr->n_rows, x->cols, grad);
    if (!y)
        return NULL;
    /* The forward pass reads its CSR through a record, kept only when backward needs it. */
    nn_record local = {.idx = csr->index, .start = csr->start, .weight = csr->weight};
    local.i[0] = kind;
    int *arg = NULL;
    if (kind == PB_NN_AGG_MAX || kind == PB_NN_AGG_MIN) {
        arg = nn_tape_alloc(t, nn_numel(y) * sizeof(int));
        if (!arg)
            return NULL;
        rows_agg_extreme(&local, x, y, arg);
    } else {
        rows_agg_sum(&local, x, y);
    }
    if (grad) {
        nn_record *r = nn_tape_record(t, rows_aggregate_backward, y);
        if (!r)
            return NULL;
        local.backward = rows_aggregate_backward;
        local.out = y;
        local.in[0] = x;
        local.aux = arg;
        *r = local;
    }
    return y;
}

static void rows_avgpool_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    int w = r->i[0];
    for (int i = 0; i < y->rows; i++) {
        const float *dy = rows_row(y, y->grad, i);
        for (int q = 0; q < w; q++) {
            float *dx = rows_row(x, x->grad, i + q);
            for (int j = 0; j < x->cols; j++)
                dx[j] += dy[j] / (float)w;
        }
    }
}

pb_nn_tensor *pb_nn_avgpool_rows(pb_nn_tape *t, pb_nn_tensor *x, int window)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_avgpool_rows", 1, x, NULL, NULL))
        return NULL;
    if (window < 1 || window > x->rows)
        return nn_tape_fail(t, "pb_nn_avgpool_rows: window %d on %d rows", window, x->rows);
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows - window + 1, x->cols, grad);
    if (!y)
        return NULL;
    for (int i = 0; i < y->rows; i++) {
        float *yi = rows_row(y, y->data, i);
        memset(yi, 0, (size_t)x->cols * sizeof(float));
        for (int q = 0; q < window; q++)
            rows_add(yi, rows_row(x, x->data, i + q), x->cols);
        for (int j = 0; j < x->cols; j++)
            yi[j] /= (float)window;
    }
    if (grad) {
        nn_record *r = nn_tape_record(t, rows_avgpool_backward, y);
        if (!r)
            return NULL;
        r->in[0] = x;
        r->i[0] = window;
    }
    return y;
}
