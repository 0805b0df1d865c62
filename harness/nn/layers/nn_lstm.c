/* nn_lstm.c — the LSTM cell (forget-gate variant, gates i, f, g, o) from the core's ops. */
#include "nn/nn_internal.h"

#include <math.h>
#include <stdio.h>

/* Adds "<prefix>/<what>" of rows x cols drawn from U(-r, r); returns its id or PB_ERR. */
static int nn_lstm_uniform(pb_nn_params *p, const char *prefix, const char *what, int rows,
                           int cols, double r, pb_rng *rng, pb_error *err)
{
    char name[256];
    snprintf(name, sizeof name, "%s/%s", prefix, what);
    int id = pb_nn_params_add(p, name, rows, cols, PB_NN_INIT_ZEROS, NULL, err);
    if (id < 0)
        return PB_ERR;
    float *v = pb_nn_params_values(p) + pb_nn_params_offset(p, id);
    for (int k = 0; k < rows * cols; k++)
        v[k] = (float)(r * (2 * pb_rng_uniform(rng) - 1));
    return id;
}

int pb_nn_lstm_init(pb_nn_lstm *m, pb_nn_params *p, const char *prefix, int in, int hidden,
                    pb_rng *rng, pb_error *err)
{
    if (!m || !p || !prefix || !rng)
        return pb_errorf(err, "nn lstm: missing cell, parameter set, prefix or generator");
    if (in < 1 || hidden < 1)
        return pb_errorf(err, "nn lstm '%s': sizes %d -> %d must be positive", prefix, in, hidden);
    m->in = in;
    m->hidden = hidden;
    m->weight =
        nn_lstm_uniform(p, prefix, "w", in + hidden, 4 * hidden, 1 / sqrt(in + hidden), rng, err);
    if (m->weight < 0)
        return PB_ERR;
    char name[256];
    snprintf(name, sizeof name, "%s/b", prefix);
    m->bias = pb_nn_params_add(p, name, 1, 4 * hidden, PB_NN_INIT_ZEROS, NULL, err);
    if (m->bias < 0)
        return PB_ERR;
    float *b = pb_nn_params_values(p) + pb_nn_params_offset(p, m->bias);
    for (int k = hidden; k < 2 * hidden; k++)
        b[k] = 1; /* the forget gate starts open */
    return PB_OK;
}

/* What the backward pass of one step reads: the step's input [x, h], the four gate activations
 * (i, f, g, o blocks, the layout of z), tanh(c') and the parameter tensors. */
typedef struct nn_lstm_saved {
    const pb_nn_lstm *m;
    pb_nn_tensor *w, *b, *c_out;
    float *xh;    /* n x (in + hidden) */
    float *gates; /* n x 4 hidden */
    float *tc;    /* n x hidden */
    float *dxh;   /* n x (in + hidden) on the gradient arena: the gradient of [x, h] */
} nn_lstm_saved;

/* 0 + x: the composed cell accumulated every gradient into a zeroed buffer, which turns -0 into
 * +0; kept so the fused step gives the same bits. */
static inline float nn_lstm_acc0(float x)
{
    return 0.0f + x;
}

/* The reverse pass of one step, operation for operation the reverse pass of the cell composed
 * of the core's ops (concat, linear, four slices and activations, the products and sums), in
 * their order, so every gradient has the bits it had then; only the fused loops, the skipped
 * gradient of a constant input x and the missing temporaries differ. */
static void nn_lstm_backward(const nn_record *r)
{
    const nn_lstm_saved *sv = r->aux;
    const pb_nn_tensor *x = r->in[0], *h = r->in[1], *c = r->in[2], *h_out = r->out;
    const pb_nn_tensor *c_out = sv->c_out, *w = sv->w, *b = sv->b;
    int rows = h_out->rows, n = sv->m->hidden, in = sv->m->in, width = in + n, z_cols = 4 * n;
    float *dz = r->tmp;
    for (int i = 0; i < rows; i++) {
        const float *gt = sv->gates + (size_t)i * (size_t)z_cols;
        const float *tc = sv->tc + (size_t)i * (size_t)n, *cp = c->data + (size_t)i * (size_t)n;
        const float *dh = h_out->grad + (size_t)i * (size_t)n;
        float *dcn = c_out->grad + (size_t)i * (size_t)n;
        float *dcp = c->grad ? c->grad + (size_t)i * (size_t)n : NULL;
        float *dzi = dz + (size_t)i * (size_t)z_cols;
        for (int j = 0; j < n; j++) {
            float ig = gt[j], fg = gt[n + j], gg = gt[2 * n + j], og = gt[3 * n + j];
            float d_o = nn_lstm_acc0(dh[j] * tc[j]); /* h' = o tanh(c') */
            float d_tc = nn_lstm_acc0(dh[j] * og);
            dcn[j] += d_tc * (1.0f - tc[j] * tc[j]); /* tanh(c') */
            float d_fc = nn_lstm_acc0(dcn[j]);       /* c' = f c + i g */
            float d_ig = nn_lstm_acc0(dcn[j]);
            float d_i = nn_lstm_acc0(d_ig * gg);
            float d_g = nn_lstm_acc0(d_ig * ig);
            float d_f = nn_lstm_acc0(d_fc * cp[j]);
            if (dcp)
                dcp[j] += d_fc * fg;
            /* the activations' gradients, then the slices' copies into dz */
            dzi[3 * n + j] = nn_lstm_acc0(nn_lstm_acc0(d_o * og * (1.0f - og)));
            dzi[2 * n + j] = nn_lstm_acc0(nn_lstm_acc0(d_g * (1.0f - gg * gg)));
            dzi[n + j] = nn_lstm_acc0(nn_lstm_acc0(d_f * fg * (1.0f - fg)));
            dzi[j] = nn_lstm_acc0(nn_lstm_acc0(d_i * ig * (1.0f - ig)));
        }
    }
    /* z = [x, h] W + b */
    if (b->grad)
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < z_cols; j++)
                b->grad[j] += dz[(size_t)i * (size_t)z_cols + (size_t)j];
    if (w->grad)
        pb_nn_gemm(1, 0, width, z_cols, rows, 1.0f, sv->xh, width, dz, z_cols, 1.0f, w->grad,
                   z_cols);
    float *dxh = sv->dxh; /* zeroed with the gradient arena */
    /* [x, h]'s gradient in full even when only h wants it: a GEMM over h's columns alone
     * takes other OpenBLAS kernels and changes the bits (measured), so x's columns are the
     * price of identical results. */
    if (x->grad || h->grad) {
        pb_nn_gemm(0, 1, rows, width, z_cols, 1.0f, dz, z_cols, w->data, z_cols, 1.0f, dxh, width);
        for (int i = 0; i < rows; i++) {
            if (x->grad)
                nn_elem_axpy(x->grad + (size_t)i * (size_t)in, 1.0f,
                             dxh + (size_t)i * (size_t)width, (size_t)in);
            if (h->grad)
                nn_elem_axpy(h->grad + (size_t)i * (size_t)n, 1.0f,
                             dxh + (size_t)i * (size_t)width + in, (size_t)n);
        }
    }
}

/* Row i of the gate activations, c', tanh(c') and h' equal row `same`'s when its z and c rows
 * have the same bits: the same inputs give the same outputs, without the transcendentals. */
static int nn_lstm_same_row(const float *z, const float *c, int z_cols, int n, int i, int same)
{
    const float *zi = z + (size_t)i * (size_t)z_cols, *zs = z + (size_t)same * (size_t)z_cols;
    return memcmp(zi, zs, (size_t)z_cols * sizeof(float)) == 0 &&
           memcmp(c + (size_t)i * (size_t)n, c + (size_t)same * (size_t)n,
                  (size_t)n * sizeof(float)) == 0;
}

/* One step as a single recorded op.  The forward pass is the composed cell's arithmetic in one
 * loop (the same GEMM, the same float operations per entry); rows that repeat an earlier row
 * (a policy's plans sharing a prefix) reuse its activations. */
void pb_nn_lstm_step(pb_nn_tape *t, pb_nn_params *p, const pb_nn_lstm *m, pb_nn_tensor *x,
                     pb_nn_tensor *h, pb_nn_tensor *c, pb_nn_tensor **h_out, pb_nn_tensor **c_out)
{
    *h_out = *c_out = NULL;
    if (!nn_tape_inputs_ok(t, "pb_nn_lstm_step", 3, x, h, c))
        return;
    if (!m || m->hidden < 1) {
        nn_tape_fail(t, "pb_nn_lstm_step: cell not initialised");
        return;
    }
    int n = m->hidden, rows = x->rows, width = m->in + n, z_cols = 4 * n;
    if (x->cols != m->in || h->rows != rows || h->cols != n || c->rows != rows || c->cols != n) {
        nn_tape_fail(t, "pb_nn_lstm_step: x %dx%d, h %dx%d and c %dx%d do not fit a %d -> %d cell",
                     x->rows, x->cols, h->rows, h->cols, c->rows, c->cols, m->in, n);
        return;
    }
    pb_nn_tensor *w = pb_nn_param(t, p, m->weight), *b = pb_nn_param(t, p, m->bias);
    if (!w || !b)
        return;
    if (w->rows != width || w->cols != z_cols || b->rows != 1 || b->cols != z_cols) {
        nn_tape_fail(t, "pb_nn_lstm_step: parameters %dx%d and %dx%d, expected %dx%d and 1x%d",
                     w->rows, w->cols, b->rows, b->cols, width, z_cols, z_cols);
        return;
    }
    int grad = nn_tape_wants_grad(t, x, h, c) || nn_tape_wants_grad(t, w, b, NULL);
    nn_lstm_saved *sv = nn_tape_alloc(t, sizeof *sv);
    float *xh = sv ? nn_tape_alloc(t, (size_t)rows * (size_t)width * sizeof(float)) : NULL;
    float *gates = xh ? nn_tape_alloc(t, (size_t)rows * (size_t)z_cols * sizeof(float)) : NULL;
    float *tc = gates ? nn_tape_alloc(t, (size_t)rows * (size_t)n * sizeof(float)) : NULL;
    float *z = tc ? nn_tape_alloc(t, (size_t)rows * (size_t)z_cols * sizeof(float)) : NULL;
    pb_nn_tensor *ho = z ? nn_tape_tensor(t, rows, n, grad) : NULL;
    pb_nn_tensor *co = ho ? nn_tape_tensor(t, rows, n, grad) : NULL;
    int *rep = co ? nn_tape_alloc(t, (size_t)(rows > 0 ? rows : 1) * sizeof(int)) : NULL;
    if (!rep)
        return;
    for (int i = 0; i < rows; i++) {
        memcpy(xh + (size_t)i * (size_t)width, x->data + (size_t)i * (size_t)m->in,
               (size_t)m->in * sizeof(float));
        memcpy(xh + (size_t)i * (size_t)width + m->in, h->data + (size_t)i * (size_t)n,
               (size_t)n * sizeof(float));
    }
    /* z = [x, h] W + b, as pb_nn_linear computes it */
    if (rows <= NN_FUSED_MAX_ROWS) {
        nn_fused_linear(nn_cpu_isa(), rows, width, z_cols, xh, w->data, b->data, 0, z);
    } else {
        for (int i = 0; i < rows; i++)
            memcpy(z + (size_t)i * (size_t)z_cols, b->data, (size_t)z_cols * sizeof(float));
        pb_nn_gemm(0, 0, rows, z_cols, width, 1.0f, xh, width, w->data, z_cols, 1.0f, z, z_cols);
    }
    double flop = 2.0 * rows * z_cols * width;
    t->flop += flop;
    int n_rep = 0;
    for (int i = 0; i < rows; i++) {
        const float *zi = z + (size_t)i * (size_t)z_cols;
        float *gt = gates + (size_t)i * (size_t)z_cols, *ti = tc + (size_t)i * (size_t)n;
        float *ci = co->data + (size_t)i * (size_t)n, *hi = ho->data + (size_t)i * (size_t)n;
        int same = -1;
        for (int k = 0; k < n_rep && same < 0; k++)
            if (nn_lstm_same_row(z, c->data, z_cols, n, i, rep[k]))
                same = rep[k];
        if (same >= 0) {
            memcpy(gt, gates + (size_t)same * (size_t)z_cols, (size_t)z_cols * sizeof(float));
            memcpy(ti, tc + (size_t)same * (size_t)n, (size_t)n * sizeof(float));
            memcpy(ci, co->data + (size_t)same * (size_t)n, (size_t)n * sizeof(float));
            memcpy(hi, ho->data + (size_t)same * (size_t)n, (size_t)n * sizeof(float));
            continue;
        }
        rep[n_rep++] = i;
        const float *cp = c->data + (size_t)i * (size_t)n;
        for (int j = 0; j < n; j++) {
            float ig = nn_elem_sigmoid(zi[j]), fg = nn_elem_sigmoid(zi[n + j]);
            float gg = tanhf(zi[2 * n + j]), og = nn_elem_sigmoid(zi[3 * n + j]);
            gt[j] = ig;
            gt[n + j] = fg;
            gt[2 * n + j] = gg;
            gt[3 * n + j] = og;
            float fc = fg * cp[j], igg = ig * gg;
            ci[j] = fc + igg;
            ti[j] = tanhf(ci[j]);
            hi[j] = og * ti[j];
        }
    }
    if (grad) {
        float *dz = nn_tape_grad_scratch(t, (size_t)rows * (size_t)z_cols);
        float *dxh = dz ? nn_tape_grad_scratch(t, (size_t)rows * (size_t)width) : NULL;
        nn_record *r = dxh ? nn_tape_record(t, nn_lstm_backward, ho) : NULL;
        if (!r)
            return;
        *sv = (nn_lstm_saved){
            .m = m, .w = w, .b = b, .c_out = co, .xh = xh, .gates = gates, .tc = tc, .dxh = dxh};
        r->in[0] = x;
        r->in[1] = h;
        r->in[2] = c;
        r->aux = sv;
        r->tmp = dz;
        r->flop = flop * ((w->grad != NULL) + (x->grad != NULL || h->grad != NULL));
    }
    *h_out = ho;
    *c_out = co;
}
