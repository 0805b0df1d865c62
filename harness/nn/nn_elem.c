/* nn_elem.c — elementwise ops: broadcast add/sub/mul, scalars, activations, exp/log, dropout. */
#include "nn_internal.h"

#include <math.h>
#include <string.h>

enum { ELEM_ADD, ELEM_SUB, ELEM_MUL };

/* Unary kinds: the activations share their PB_NN_ACT_* numbers. */
enum { ELEM_EXP = 16, ELEM_LOG, ELEM_SCALE, ELEM_ADD_SCALAR };

/* Branch-free: ReLU inputs have random signs, and a mispredicted branch per entry costs more
 * than the arithmetic. */
static void elem_relu(float *v, size_t n)
{
    size_t i = 0;
#if NN_HAVE_V4
    for (; i + 4 <= n; i += 4) {
        nn_v4 x = nn_v4_load(v + i);
        nn_v4_store(v + i, nn_v4_where_positive(x, x));
    }
#endif
    for (; i < n; i++)
        v[i] = v[i] > 0.0f ? v[i] : 0.0f;
}

/* dx += dy where y > 0. */
static void elem_relu_grad(const float *y, const float *dy, float *dx, size_t n)
{
    size_t i = 0;
#if NN_HAVE_V4
    for (; i + 4 <= n; i += 4)
        nn_v4_store(dx + i, nn_v4_load(dx + i) +
                                nn_v4_where_positive(nn_v4_load(y + i), nn_v4_load(dy + i)));
#endif
    for (; i < n; i++)
        dx[i] += y[i] > 0.0f ? dy[i] : 0.0f;
}

void nn_elem_axpy(float *y, float a, const float *x, size_t n)
{
    size_t i = 0;
#if NN_HAVE_V4
    for (; i + 4 <= n; i += 4)
        nn_v4_store(y + i, nn_v4_load(y + i) + a * nn_v4_load(x + i));
#endif
    for (; i < n; i++)
        y[i] += a * x[i];
}

void nn_elem_activate(int act, float *v, size_t n)
{
    switch (act) {
    case PB_NN_ACT_RELU:
        elem_relu(v, n);
        break;
    case PB_NN_ACT_SIGMOID:
        for (size_t i = 0; i < n; i++)
            v[i] = nn_elem_sigmoid(v[i]);
        break;
    case PB_NN_ACT_TANH:
        for (size_t i = 0; i < n; i++)
            v[i] = tanhf(v[i]);
        break;
    default:
        break;
    }
}

void nn_elem_act_grad(int act, const float *y, const float *dy, float *dx, size_t n)
{
    switch (act) {
    case PB_NN_ACT_RELU:
        elem_relu_grad(y, dy, dx, n);
        break;
    case PB_NN_ACT_SIGMOID:
        for (size_t i = 0; i < n; i++)
            dx[i] += dy[i] * y[i] * (1.0f - y[i]);
        break;
    case PB_NN_ACT_TANH:
        for (size_t i = 0; i < n; i++)
            dx[i] += dy[i] * (1.0f - y[i] * y[i]);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            dx[i] += dy[i];
        break;
    }
}

/* Where b's entry for (i, j) is: b[i * row_step + j * col_step]. */
typedef struct elem_bcast {
    size_t row_step;
    size_t col_step;
} elem_bcast;

static int elem_broadcast(const pb_nn_tensor *a, const pb_nn_tensor *b, elem_bcast *bc)
{
    if (b->rows == a->rows && b->cols == a->cols)
        *bc = (elem_bcast){(size_t)a->cols, 1};
    else if (b->rows == 1 && b->cols == a->cols)
        *bc = (elem_bcast){0, 1};
    else if (b->rows == a->rows && b->cols == 1)
        *bc = (elem_bcast){1, 0};
    else if (b->rows == 1 && b->cols == 1)
        *bc = (elem_bcast){0, 0};
    else
        return PB_ERR;
    return PB_OK;
}

static float elem_apply(int kind, float x, float y)
{
    return kind == ELEM_ADD ? x + y : kind == ELEM_SUB ? x - y : x * y;
}

static void elem_binary_backward(const nn_record *r)
{
    const pb_nn_tensor *a = r->in[0], *b = r->in[1], *y = r->out;
    int kind = r->i[0];
    elem_bcast bc = {(size_t)r->i[1], (size_t)r->i[2]};
    for (int i = 0; i < y->rows; i++) {
        for (int j = 0; j < y->cols; j++) {
            size_t k = (size_t)i * (size_t)y->cols + (size_t)j;
            size_t kb = (size_t)i * bc.row_step + (size_t)j * bc.col_step;
            float dy = y->grad[k];
            if (a->grad)
                a->grad[k] += kind == ELEM_MUL ? dy * b->data[kb] : dy;
            if (b->grad)
                b->grad[kb] += kind == ELEM_MUL ? dy * a->data[k] : kind == ELEM_SUB ? -dy : dy;
        }
    }
}

static pb_nn_tensor *elem_binary(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b, int kind,
                                 const char *op)
{
    if (!nn_tape_inputs_ok(t, op, 2, a, b, NULL))
        return NULL;
    elem_bcast bc;
    if (elem_broadcast(a, b, &bc) != PB_OK)
        return nn_tape_fail(t,
                            "%s: %dx%d and %dx%d do not broadcast (b must be %dx%d, 1x%d, %dx1 "
                            "or 1x1)",
                            op, a->rows, a->cols, b->rows, b->cols, a->rows, a->cols, a->cols,
                            a->rows);
    int grad = nn_tape_wants_grad(t, a, b, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, a->rows, a->cols, grad);
    if (!y)
        return NULL;
    for (int i = 0; i < a->rows; i++) {
        const float *ai = a->data + (size_t)i * (size_t)a->cols;
        const float *bi = b->data + (size_t)i * bc.row_step;
        float *yi = y->data + (size_t)i * (size_t)a->cols;
        for (int j = 0; j < a->cols; j++)
            yi[j] = elem_apply(kind, ai[j], bi[(size_t)j * bc.col_step]);
    }
    if (grad) {
        nn_record *r = nn_tape_record(t, elem_binary_backward, y);
        if (!r)
            return NULL;
        r->in[0] = a;
        r->in[1] = b;
        r->i[0] = kind;
        r->i[1] = (int)bc.row_step;
        r->i[2] = (int)bc.col_step;
    }
    return y;
}

pb_nn_tensor *pb_nn_add(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b)
{
    return elem_binary(t, a, b, ELEM_ADD, "pb_nn_add");
}

pb_nn_tensor *pb_nn_sub(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b)
{
    return elem_binary(t, a, b, ELEM_SUB, "pb_nn_sub");
}

pb_nn_tensor *pb_nn_mul(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *b)
{
    return elem_binary(t, a, b, ELEM_MUL, "pb_nn_mul");
}

static void elem_unary_backward(const nn_record *r)
{
    const pb_nn_tensor *x = r->in[0], *y = r->out;
    size_t n = nn_numel(y);
    switch (r->i[0]) {
    case ELEM_EXP:
        for (size_t i = 0; i < n; i++)
            x->grad[i] += y->grad[i] * y->data[i];
        break;
    case ELEM_LOG:
        for (size_t i = 0; i < n; i++)
            x->grad[i] += y->grad[i] / x->data[i];
        break;
    case ELEM_SCALE:
        for (size_t i = 0; i < n; i++)
            x->grad[i] += r->f * y->grad[i];
        break;
    case ELEM_ADD_SCALAR:
        for (size_t i = 0; i < n; i++)
            x->grad[i] += y->grad[i];
        break;
    default:
        nn_elem_act_grad(r->i[0], y->data, y->grad, x->grad, n);
        break;
    }
}

static void elem_unary_forward(int kind, float f, const float *x, float *y, size_t n)
{
    switch (kind) {
    case ELEM_EXP:
        for (size_t i = 0; i < n; i++)
            y[i] = expf(x[i]);
        break;
    case ELEM_LOG:
        for (size_t i = 0; i < n; i++)
            y[i] = logf(x[i]);
        break;
    case ELEM_SCALE:
        for (size_t i = 0; i < n; i++)
            y[i] = f * x[i];
        break;
    case ELEM_ADD_SCALAR:
        for (size_t i = 0; i < n; i++)
            y[i] = x[i] + f;
        break;
    default:
        memcpy(y, x, n * sizeof(float));
        nn_elem_activate(kind, y, n);
        break;
    }
}

static pb_nn_tensor *elem_unary(pb_nn_tape *t, pb_nn_tensor *x, int kind, float f, const char *op)
{
    if (!nn_tape_inputs_ok(t, op, 1, x, NULL, NULL))
        return NULL;
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows, x->cols, grad);
    if (!y)
        return NULL;
    elem_unary_forward(kind, f, x->data, y->data, nn_numel(x));
    if (grad) {
        nn_record *r = nn_tape_record(t, elem_unary_backward, y);
        if (!r)
            return NULL;
        r->in[0] = x;
        r->i[0] = kind;
        r->f = f;
    }
    return y;
}

pb_nn_tensor *pb_nn_scale(pb_nn_tape *t, pb_nn_tensor *x, float s)
{
    return elem_unary(t, x, ELEM_SCALE, s, "pb_nn_scale");
}

pb_nn_tensor *pb_nn_add_scalar(pb_nn_tape *t, pb_nn_tensor *x, float c)
{
    return elem_unary(t, x, ELEM_ADD_SCALAR, c, "pb_nn_add_scalar");
}

pb_nn_tensor *pb_nn_relu(pb_nn_tape *t, pb_nn_tensor *x)
{
    return elem_unary(t, x, PB_NN_ACT_RELU, 0.0f, "pb_nn_relu");
}

pb_nn_tensor *pb_nn_sigmoid(pb_nn_tape *t, pb_nn_tensor *x)
{
    return elem_unary(t, x, PB_NN_ACT_SIGMOID, 0.0f, "pb_nn_sigmoid");
}

pb_nn_tensor *pb_nn_tanh(pb_nn_tape *t, pb_nn_tensor *x)
{
    return elem_unary(t, x, PB_NN_ACT_TANH, 0.0f, "pb_nn_tanh");
}

pb_nn_tensor *pb_nn_exp(pb_nn_tape *t, pb_nn_tensor *x)
{
    return elem_unary(t, x, ELEM_EXP, 0.0f, "pb_nn_exp");
}

pb_nn_tensor *pb_nn_log(pb_nn_tape *t, pb_nn_tensor *x)
{
    return elem_unary(t, x, ELEM_LOG, 0.0f, "pb_nn_log");
}

static void elem_dropout_backward(const nn_record *r)
{
    const float *keep = r->aux;
    size_t n = nn_numel(r->out);
    for (size_t i = 0; i < n; i++)
        r->in[0]->grad[i] += keep[i] * r->out->grad[i];
}

pb_nn_tensor *pb_nn_dropout(pb_nn_tape *t, pb_nn_tensor *x, float rate, pb_rng *rng)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_dropout", 1, x, NULL, NULL))
        return NULL;
    if (!(rate >= 0.0f && rate < 1.0f))
        return nn_tape_fail(t, "pb_nn_dropout: rate %g is outside [0, 1)", (double)rate);
    if (!rng)
        return nn_tape_fail(t, "pb_nn_dropout: no random generator");
    if (rate == 0.0f)
        return x;
    int grad = nn_tape_wants_grad(t, x, NULL, NULL);
    pb_nn_tensor *y = nn_tape_tensor(t, x->rows, x->cols, grad);
    size_t n = nn_numel(x);
    float *keep = y ? nn_tape_alloc(t, n * sizeof(float)) : NULL;
    if (!keep)
        return NULL;
    float scale = 1.0f / (1.0f - rate);
    /* TF keeps an entry when floor(keep_prob + u) = 1, i.e. u >= rate. */
    for (size_t i = 0; i < n; i++) {
        keep[i] = pb_rng_uniform(rng) >= (double)rate ? scale : 0.0f;
        y->data[i] = keep[i] * x->data[i];
    }
    if (grad) {
        nn_record *r = nn_tape_record(t, elem_dropout_backward, y);
        if (!r)
            return NULL;
        r->in[0] = x;
        r->aux = keep;
    }
    return y;
}
