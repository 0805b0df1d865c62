/* nn_lstm.c — the LSTM cell (forget-gate variant, gates i, f, g, o) from the core's ops. */
#include "nn/nn_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
    float *dxh;   /* n x (in + hidden): the gradient of [x, h] (libm: gradient arena) */
    const pb_nn_tape *tape;
    nn_transposed *wt; /* PB_NN_MATH_FAST: W^T (h's rows, or all when x wants a gradient) */
    int *ks, nk;       /* PB_NN_MATH_FAST: the columns of [x, h] not 0 in every row */
    int *src, n_u;     /* PB_NN_MATH_FAST: row i repeats unique row src[i] of n_u */
    float *xu;         /* PB_NN_MATH_FAST: the unique rows of [x, h] (n_u x (in + hidden)) */
    float *dzu;        /* PB_NN_MATH_FAST: rows x 4 hidden on the gradient arena */
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
static void nn_lstm_backward_gates(const nn_record *r)
{
    const nn_lstm_saved *sv = r->aux;
    const pb_nn_tensor *c = r->in[2], *h_out = r->out, *c_out = sv->c_out;
    int rows = h_out->rows, n = sv->m->hidden, z_cols = 4 * n;
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
}

static void nn_lstm_backward(const nn_record *r)
{
    const nn_lstm_saved *sv = r->aux;
    const pb_nn_tensor *x = r->in[0], *h = r->in[1], *h_out = r->out, *w = sv->w, *b = sv->b;
    int rows = h_out->rows, n = sv->m->hidden, in = sv->m->in, width = in + n, z_cols = 4 * n;
    float *dz = r->tmp;
    nn_lstm_backward_gates(r);
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

/* The reverse pass of a PB_NN_MATH_FAST step: the same gate gradients, then the products with
 * the fused kernels (nn_fused.c; the same bits on every processor): dW += [x, h]^T dz summed
 * over the rows in order, and the gradient of [x, h] (only h's columns when x is a constant)
 * as dz W^T through a transposed copy of W. */
static void nn_lstm_backward_fast(const nn_record *r)
{
    const nn_lstm_saved *sv = r->aux;
    const pb_nn_tensor *x = r->in[0], *h = r->in[1], *h_out = r->out, *w = sv->w, *b = sv->b;
    int rows = h_out->rows, n = sv->m->hidden, in = sv->m->in, width = in + n, z_cols = 4 * n;
    int isa = nn_cpu_isa();
    float *dz = r->tmp;
    const pb_nn_tensor *c = r->in[2];
    for (int i = 0; i < rows; i++) {
        size_t o = (size_t)i * (size_t)n;
        nn_fast_lstm_grad_row(isa, n, sv->gates + 4 * o, sv->tc + o, c->data + o, h_out->grad + o,
                              sv->c_out->grad + o, c->grad ? c->grad + o : NULL, dz + 4 * o);
    }
    if (b->grad)
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < z_cols; j++)
                b->grad[j] += dz[(size_t)i * (size_t)z_cols + (size_t)j];
    /* dW: repeated rows share [x, h], so their dz are summed first (in row order) and each
     * unique row enters the product once */
    if (w->grad) {
        float *dzu = sv->dzu;
        for (int u = 0; u < sv->n_u; u++)
            memset(dzu + (size_t)u * (size_t)z_cols, 0, (size_t)z_cols * sizeof(float));
        for (int i = 0; i < rows; i++)
            nn_elem_axpy(dzu + (size_t)sv->src[i] * (size_t)z_cols, 1.0f,
                         dz + (size_t)i * (size_t)z_cols, (size_t)z_cols);
        nn_fused_weight_grad_rows(isa, sv->n_u, width, z_cols, sv->xu, dzu, w->grad, sv->ks,
                                  sv->nk);
    }
    if (!x->grad && !h->grad)
        return;
    int first = x->grad ? 0 : in, cols = width - first;
    const float *wt = nn_transposed_data(sv->tape, sv->wt);
    float *d = sv->dxh; /* rows x cols */
    nn_fused_linear(isa, rows, z_cols, cols, dz, wt, NULL, 0, d);
    for (int i = 0; i < rows; i++) {
        const float *di = d + (size_t)i * (size_t)cols;
        if (x->grad)
            nn_elem_axpy(x->grad + (size_t)i * (size_t)in, 1.0f, di, (size_t)in);
        if (h->grad)
            nn_elem_axpy(h->grad + (size_t)i * (size_t)n, 1.0f, di + (first ? 0 : in), (size_t)n);
    }
}

/* A hash of some of a row's bits (every NN_LSTM_HASH_STRIDE-th value), enough to tell most
 * different rows apart before comparing them in full; a short dependency chain per row. */
#define NN_LSTM_HASH_STRIDE 7
static uint64_t nn_lstm_row_hash(const float *a, size_t n_a, const float *b, size_t n_b)
{
    uint64_t hash = 0x9e3779b97f4a7c15ull;
    for (size_t k = 0; k < n_a + n_b; k += NN_LSTM_HASH_STRIDE) {
        uint32_t u;
        memcpy(&u, k < n_a ? a + k : b + (k - n_a), sizeof u);
        hash = (hash ^ u) * 0xff51afd7ed558ccdull;
    }
    return hash ^ (hash >> 29);
}

/* The forward pass of a PB_NN_MATH_FAST step into the saved buffers: rows whose [x, h] and c
 * repeat an earlier row's (plans sharing a prefix) are computed once — every row's result
 * depends on that row alone, so this changes no bit; the others go through the fused product
 * (z = [x, h] W + b, nn_fused.c) and the vectorised cell (nn_fastmath.c). */
static int nn_lstm_forward_fast(pb_nn_tape *t, const pb_nn_lstm *m, const float *xh, const float *c,
                                const pb_nn_tensor *w, const pb_nn_tensor *b, int rows,
                                float *gates, float *tc, float *c_out, float *h_out,
                                nn_lstm_saved *sv)
{
    int n = m->hidden, width = m->in + n, z_cols = 4 * n, isa = nn_cpu_isa();
    int *src = nn_tape_alloc(t, (size_t)(rows > 0 ? rows : 1) * 2 * sizeof(int));
    uint64_t *hash = nn_tape_alloc(t, (size_t)(rows > 0 ? rows : 1) * sizeof(uint64_t));
    float *xu = nn_tape_alloc(t, (size_t)(rows > 0 ? rows : 1) * (size_t)width * sizeof(float));
    float *zu = nn_tape_alloc(t, (size_t)(rows > 0 ? rows : 1) * (size_t)z_cols * sizeof(float));
    int *ks = nn_tape_alloc(t, (size_t)width * sizeof(int));
    if (!src || !hash || !xu || !zu || !ks)
        return PB_ERR;
    int *uniq = src + rows, n_u = 0; /* src[i]: row i's unique row; uniq[u]: its first row */
    for (int i = 0; i < rows; i++) {
        const float *xi = xh + (size_t)i * (size_t)width, *ci = c + (size_t)i * (size_t)n;
        hash[i] = nn_lstm_row_hash(xi, (size_t)width, ci, (size_t)n);
        src[i] = -1;
        for (int u = 0; u < n_u && src[i] < 0; u++) {
            int k = uniq[u];
            if (hash[k] == hash[i] &&
                memcmp(xh + (size_t)k * (size_t)width, xi, (size_t)width * sizeof(float)) == 0 &&
                memcmp(c + (size_t)k * (size_t)n, ci, (size_t)n * sizeof(float)) == 0)
                src[i] = u;
        }
        if (src[i] < 0) {
            memcpy(xu + (size_t)n_u * (size_t)width, xi, (size_t)width * sizeof(float));
            uniq[n_u] = i;
            src[i] = n_u++;
        }
    }
    /* the one-hot features leave most of x's columns 0 in every row: the product skips them */
    int nk = 0;
    for (int k = 0; k < width; k++) {
        int used = 0;
        for (int u = 0; u < n_u && !used; u++)
            used = xu[(size_t)u * (size_t)width + (size_t)k] != 0.0f;
        if (used)
            ks[nk++] = k;
    }
    sv->ks = ks;
    sv->nk = nk;
    sv->src = src;
    sv->n_u = n_u;
    sv->xu = xu;
    nn_fused_linear_cols(isa, n_u, width, z_cols, xu, w->data, b->data, 0, zu, ks, nk);
    for (int u = 0; u < n_u; u++) {
        size_t i = (size_t)uniq[u];
        nn_fast_lstm_row(isa, n, zu + (size_t)u * (size_t)z_cols, c + i * (size_t)n,
                         gates + i * (size_t)z_cols, c_out + i * (size_t)n, tc + i * (size_t)n,
                         h_out + i * (size_t)n);
    }
    for (int i = 0; i < rows; i++) {
        size_t k = (size_t)uniq[src[i]];
        if (k == (size_t)i)
            continue;
        memcpy(gates + (size_t)i * (size_t)z_cols, gates + k * (size_t)z_cols,
               (size_t)z_cols * sizeof(float));
        memcpy(tc + (size_t)i * (size_t)n, tc + k * (size_t)n, (size_t)n * sizeof(float));
        memcpy(c_out + (size_t)i * (size_t)n, c_out + k * (size_t)n, (size_t)n * sizeof(float));
        memcpy(h_out + (size_t)i * (size_t)n, h_out + k * (size_t)n, (size_t)n * sizeof(float));
    }
    t->flop += 2.0 * n_u * z_cols * nk;
    return PB_OK;
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

/* The forward pass of a PB_NN_MATH_LIBM step: the composed cell's arithmetic in one loop (the
 * same GEMM, the same float operations per entry); rows that repeat an earlier row (a policy's
 * plans sharing a prefix) reuse its activations. */
static void nn_lstm_forward_libm(pb_nn_tape *t, const float *xh, const float *c,
                                 const pb_nn_tensor *w, const pb_nn_tensor *b, int rows, int n,
                                 int width, float *z, float *gates, float *tc, float *c_out,
                                 float *h_out, int *rep)
{
    int z_cols = 4 * n;
    /* z = [x, h] W + b, as pb_nn_linear computes it */
    if (rows <= NN_FUSED_MAX_ROWS) {
        nn_fused_linear(nn_cpu_isa(), rows, width, z_cols, xh, w->data, b->data, 0, z);
    } else {
        for (int i = 0; i < rows; i++)
            memcpy(z + (size_t)i * (size_t)z_cols, b->data, (size_t)z_cols * sizeof(float));
        pb_nn_gemm(0, 0, rows, z_cols, width, 1.0f, xh, width, w->data, z_cols, 1.0f, z, z_cols);
    }
    t->flop += 2.0 * rows * z_cols * width;
    int n_rep = 0;
    for (int i = 0; i < rows; i++) {
        const float *zi = z + (size_t)i * (size_t)z_cols;
        float *gt = gates + (size_t)i * (size_t)z_cols, *ti = tc + (size_t)i * (size_t)n;
        float *ci = c_out + (size_t)i * (size_t)n, *hi = h_out + (size_t)i * (size_t)n;
        int same = -1;
        for (int k = 0; k < n_rep && same < 0; k++)
            if (nn_lstm_same_row(z, c, z_cols, n, i, rep[k]))
                same = rep[k];
        if (same >= 0) {
            memcpy(gt, gates + (size_t)same * (size_t)z_cols, (size_t)z_cols * sizeof(float));
            memcpy(ti, tc + (size_t)same * (size_t)n, (size_t)n * sizeof(float));
            memcpy(ci, c_out + (size_t)same * (size_t)n, (size_t)n * sizeof(float));
            memcpy(hi, h_out + (size_t)same * (size_t)n, (size_t)n * sizeof(float));
            continue;
        }
        rep[n_rep++] = i;
        const float *cp = c + (size_t)i * (size_t)n;
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
}

/* One step as a single recorded op.  The forward pass is the composed cell's arithmetic in one
 * loop (the same GEMM, the same float operations per entry); rows that repeat an earlier row
 * (a policy's plans sharing a prefix) reuse its activations. */
void pb_nn_lstm_step(pb_nn_tape *t, pb_nn_params *p, const pb_nn_lstm *m, pb_nn_tensor *x,
                     pb_nn_tensor *h, pb_nn_tensor *c, pb_nn_tensor **h_out, pb_nn_tensor **c_out)
{
    pb_nn_lstm_step_math(t, p, m, PB_NN_MATH_LIBM, x, h, c, h_out, c_out);
}

void pb_nn_lstm_step_math(pb_nn_tape *t, pb_nn_params *p, const pb_nn_lstm *m, int math,
                          pb_nn_tensor *x, pb_nn_tensor *h, pb_nn_tensor *c, pb_nn_tensor **h_out,
                          pb_nn_tensor **c_out)
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
    int fast = math == PB_NN_MATH_FAST;
    if (fast) {
        if (nn_lstm_forward_fast(t, m, xh, c->data, w, b, rows, gates, tc, co->data, ho->data, sv))
            return;
    } else
        nn_lstm_forward_libm(t, xh, c->data, w, b, rows, n, width, z, gates, tc, co->data, ho->data,
                             rep);
    double flop = 2.0 * rows * z_cols * width;
    if (grad) {
        /* the fast pass writes its scratch before reading it: the data arena, which the
         * backward pass does not zero, spares clearing it */
        size_t n_z = (size_t)rows * (size_t)z_cols, n_xh = (size_t)rows * (size_t)width;
        float *dz = fast ? nn_tape_alloc(t, n_z * sizeof(float)) : nn_tape_grad_scratch(t, n_z);
        float *dxh = !dz    ? NULL
                     : fast ? nn_tape_alloc(t, n_xh * sizeof(float))
                            : nn_tape_grad_scratch(t, n_xh);
        float *dzu = fast && dxh ? nn_tape_alloc(t, n_z * sizeof(float)) : NULL;
        if (fast && !dzu)
            return;
        nn_transposed *wt = NULL;
        if (fast && dxh && (x->grad || h->grad)) {
            int first = x->grad ? 0 : m->in;
            wt = nn_tape_transposed(t, w->data, first, width - first, z_cols);
            if (!wt)
                return;
        }
        nn_record *r =
            dxh ? nn_tape_record(t, fast ? nn_lstm_backward_fast : nn_lstm_backward, ho) : NULL;
        if (!r)
            return;
        *sv = (nn_lstm_saved){.m = m,
                              .w = w,
                              .b = b,
                              .c_out = co,
                              .xh = xh,
                              .gates = gates,
                              .tc = tc,
                              .dxh = dxh,
                              .tape = t,
                              .wt = wt,
                              .ks = sv->ks,
                              .nk = sv->nk,
                              .src = sv->src,
                              .n_u = sv->n_u,
                              .xu = sv->xu,
                              .dzu = dzu};
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
