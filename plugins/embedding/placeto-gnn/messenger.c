/* messenger.c — the sequential message passer as one fused op: node-by-node matrix-vector
 * products forward, reverse-order backward, weight gradients deferred to one GEMM each.
 *
 * Rows are kept padded to P = d rounded up to 8 floats (zeros beyond d), and weights as padded
 * P x P copies and their transposes, so every product is a fixed number of 8-float vector
 * operations; the hot functions are compiled for AVX-512 and AVX2 as well as the baseline and
 * picked at load time. */
#include "messenger.h"

#include <string.h>

#define MESSENGER_LANES 8
#define MESSENGER_MAX_VEC (MESSENGER_MAX_DIM / MESSENGER_LANES)

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define MESSENGER_HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MESSENGER_HOT
#endif

typedef float messenger_v8 __attribute__((vector_size(32)));
typedef int messenger_v8i __attribute__((vector_size(32)));

static inline __attribute__((always_inline)) messenger_v8 messenger_load(const float *p)
{
    messenger_v8 v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* x where mask_src > 0, else +0. */
static inline __attribute__((always_inline)) messenger_v8 messenger_where_positive(messenger_v8 m,
                                                                                   messenger_v8 x)
{
    messenger_v8 zero = {0};
    return (messenger_v8)((messenger_v8i)x & (messenger_v8i)(m > zero));
}

static inline __attribute__((always_inline)) void messenger_store(float *p, messenger_v8 v)
{
    memcpy(p, &v, sizeof v);
}

/* Every lane set to lane k of x. */
static inline __attribute__((always_inline)) messenger_v8 messenger_lane8(messenger_v8 x, int k)
{
    messenger_v8i idx = {0};
    return __builtin_shuffle(x, idx + k);
}

/* messenger_matvec for P = 8, x in a register (see messenger_matvec16_reg). */
static inline __attribute__((always_inline)) messenger_v8
messenger_matvec8_reg(messenger_v8 xv, int d, const float *w, const float *b, int relu)
{
    messenger_v8 acc[4] = {{0}, {0}, {0}, {0}};
    if (b)
        acc[0] = messenger_load(b);
    int k = 0;
    for (; k + 3 < d; k += 4)
        for (int q = 0; q < 4; q++)
            acc[q] += messenger_lane8(xv, k + q) * messenger_load(w + (size_t)(k + q) * 8);
    for (int q = 0; k < d; k++, q++)
        acc[q] += messenger_lane8(xv, k) * messenger_load(w + (size_t)k * 8);
    messenger_v8 sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    return relu ? messenger_where_positive(sum, sum) : sum;
}

/* Rows of exactly 16 floats (5 to 11 devices) as one 16-float vector: one AVX-512 register, or
 * two AVX2 ones where that is what the clone has. */
typedef float messenger_v16 __attribute__((vector_size(64)));
typedef int messenger_v16i __attribute__((vector_size(64)));

static inline __attribute__((always_inline)) messenger_v16 messenger_load16(const float *p)
{
    messenger_v16 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline __attribute__((always_inline)) void messenger_store16(float *p, messenger_v16 v)
{
    memcpy(p, &v, sizeof v);
}

static inline __attribute__((always_inline)) messenger_v16
messenger_where_positive16(messenger_v16 m, messenger_v16 x)
{
    messenger_v16 zero = {0};
    return (messenger_v16)((messenger_v16i)x & (messenger_v16i)(m > zero));
}

/* Every lane set to lane k of x. */
static inline __attribute__((always_inline)) messenger_v16 messenger_lane16(messenger_v16 x, int k)
{
    messenger_v16i idx = {0};
    return __builtin_shuffle(x, idx + k);
}

/* messenger_matvec for P = 16, on a row held in a register; returns the output row.  Entries of
 * x are broadcast from the register, not loaded one by one: x was usually just stored as a whole
 * vector, and forwarding such a store to narrow loads is slow. */
static inline __attribute__((always_inline)) messenger_v16
messenger_matvec16_reg(messenger_v16 xv, int d, const float *w, const float *b, int relu)
{
    messenger_v16 acc[4] = {{0}, {0}, {0}, {0}};
    if (b)
        acc[0] = messenger_load16(b);
    int k = 0;
    for (; k + 3 < d; k += 4)
        for (int q = 0; q < 4; q++)
            acc[q] += messenger_lane16(xv, k + q) * messenger_load16(w + (size_t)(k + q) * 16);
    for (int q = 0; k < d; k++, q++)
        acc[q] += messenger_lane16(xv, k) * messenger_load16(w + (size_t)k * 16);
    messenger_v16 sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    return relu ? messenger_where_positive16(sum, sum) : sum;
}

/* messenger_matvec for P = 16. */
static inline __attribute__((always_inline)) void
messenger_matvec16(const float *x, int d, const float *w, const float *b, float *y, int relu)
{
    messenger_store16(y, messenger_matvec16_reg(messenger_load16(x), d, w, b, relu));
}

/* One layer, padded: weights w and wt (= w transposed) are P x P, b is P. */
typedef struct messenger_layer {
    float *w, *wt, *b;
    pb_nn_tensor *wp, *bp; /* the parameters (gradients go there) */
} messenger_layer;

typedef struct messenger_net {
    int n_layers;
    messenger_layer layer[MESSENGER_MAX_LAYERS];
} messenger_net;

/* What one direction saved in the forward pass: (batch*n) x P padded rows on the tape, in node
 * major order (row v*batch + b holds node v of block b: one node's blocks are adjacent, which
 * keeps a node's work and its neighbours' rows in few cache lines). */
typedef struct messenger_side {
    const int *order, *nbr_start, *nbr;
    messenger_net f, g;
    float *agg;                        /* sum of the neighbours' f outputs (grad mode only) */
    float *gact[MESSENGER_MAX_LAYERS]; /* outputs of g's layers (grad mode only) */
    float *h;                          /* the direction's node states */
    float *fact[MESSENGER_MAX_LAYERS]; /* outputs of f's layers (the last always) */
    float *dfout;                      /* backward: dL/d(f output), summed over readers */
    float *dzf[MESSENGER_MAX_LAYERS];  /* backward: dL/d(pre-activation) of f's layers */
    float *dzg[MESSENGER_MAX_LAYERS];  /* backward: same for g */
} messenger_side;

typedef struct messenger_ctx {
    int n, batch, d, p, grad;
    messenger_side side[2];
    /* Padded node-major copies of the input, and in grad mode of each side's output gradient
     * and of the input gradient: rows are written once, outside the dependency chain, so the
     * chain itself only moves whole vectors. */
    float *sp, *dop[2], *dsp;
    pb_nn_tape *tape; /* where the backward pass counts its products (pb_nn_tape_count) */
    double back_flop;
} messenger_ctx;

/* y = b + x.W over the first d entries of x (P-padded rows, nv vectors); relu when asked.  Four
 * accumulators per vector shorten the dependency chain (a node's four products are chained, so
 * latency, not throughput, bounds the single-step pass); no branch on zero inputs. */
static inline __attribute__((always_inline)) void
messenger_matvec(const float *x, int d, const float *w, const float *b, float *y, int nv, int relu)
{
    if (nv == 2) {
        messenger_matvec16(x, d, w, b, y, relu);
        return;
    }
    if (nv == 1) {
        messenger_store(y, messenger_matvec8_reg(messenger_load(x), d, w, b, relu));
        return;
    }
    messenger_v8 acc[4][MESSENGER_MAX_VEC];
    int p = nv * MESSENGER_LANES, k = 0;
    for (int v = 0; v < nv; v++) {
        acc[0][v] = b ? messenger_load(b + v * MESSENGER_LANES) : (messenger_v8){0};
        acc[1][v] = acc[2][v] = acc[3][v] = (messenger_v8){0};
    }
    for (; k + 3 < d; k += 4)
        for (int q = 0; q < 4; q++) {
            const float *wk = w + (size_t)(k + q) * p;
            float xk = x[k + q];
            for (int v = 0; v < nv; v++)
                acc[q][v] += xk * messenger_load(wk + v * MESSENGER_LANES);
        }
    for (int q = 0; k < d; k++, q++)
        for (int v = 0; v < nv; v++)
            acc[q][v] += x[k] * messenger_load(w + (size_t)k * p + v * MESSENGER_LANES);
    for (int v = 0; v < nv; v++) {
        messenger_v8 sum = (acc[0][v] + acc[1][v]) + (acc[2][v] + acc[3][v]);
        messenger_store(y + v * MESSENGER_LANES, relu ? messenger_where_positive(sum, sum) : sum);
    }
}

/* z = dy where y > 0, else 0 (the ReLU's backward), padded rows. */
static inline __attribute__((always_inline)) void
messenger_relu_back(const float *y, const float *dy, float *z, int nv)
{
    if (nv == 2) {
        messenger_store16(z, messenger_where_positive16(messenger_load16(y), messenger_load16(dy)));
        return;
    }
    for (int v = 0; v < nv; v++)
        messenger_store(z + v * MESSENGER_LANES,
                        messenger_where_positive(messenger_load(y + v * MESSENGER_LANES),
                                                 messenger_load(dy + v * MESSENGER_LANES)));
}

static inline __attribute__((always_inline)) void messenger_add(float *y, const float *x, int nv)
{
    if (nv == 2) {
        messenger_store16(y, messenger_load16(y) + messenger_load16(x));
        return;
    }
    for (int v = 0; v < nv; v++)
        messenger_store(y + v * MESSENGER_LANES, messenger_load(y + v * MESSENGER_LANES) +
                                                     messenger_load(x + v * MESSENGER_LANES));
}

/* Runs net on row in; layer l's output goes to out[l] (a scratch row when out[l] is NULL,
 * then off is not applied).  Returns the last layer's output row. */
static inline __attribute__((always_inline)) const float *
messenger_net_row(const messenger_net *m, const float *in, float *const *out, size_t off,
                  float *scratch, int d, int nv)
{
    const float *x = in;
    if (nv == 2) { /* the row stays in a register from layer to layer */
        messenger_v16 xv = messenger_load16(in);
        for (int l = 0; l < m->n_layers; l++) {
            float *y = out[l] ? out[l] + off : scratch + (size_t)l * 16;
            xv = messenger_matvec16_reg(xv, d, m->layer[l].w, m->layer[l].b, 1);
            messenger_store16(y, xv);
            x = y;
        }
        return x;
    }
    for (int l = 0; l < m->n_layers; l++) {
        float *y = out[l] ? out[l] + off : scratch + (size_t)l * nv * MESSENGER_LANES;
        messenger_matvec(x, d, m->layer[l].w, m->layer[l].b, y, nv, 1);
        x = y;
    }
    return x;
}

/* Backward through net for one row: dy (clobbered) is dL/d(output); dz[l] + off receive the
 * pre-activation gradients; the result dL/d(input) is left in dx. */
static inline __attribute__((always_inline)) void
messenger_net_row_back(const messenger_net *m, float *const *act, float *const *dz, size_t off,
                       float *dy, float *dx, int d, int nv)
{
    for (int l = m->n_layers - 1; l >= 0; l--) {
        float *z = dz[l] + off;
        messenger_relu_back(act[l] + off, dy, z, nv);
        messenger_matvec(z, d, m->layer[l].wt, NULL, dx, nv, 0);
        if (l > 0)
            memcpy(dy, dx, (size_t)nv * MESSENGER_LANES * sizeof(float));
    }
}

static inline __attribute__((always_inline)) void messenger_node_forward_nv(messenger_side *sd,
                                                                            const float *sp, int v,
                                                                            int batch, int d,
                                                                            int nv, int grad)
{
    int p = nv * MESSENGER_LANES, lo = sd->nbr_start[v], hi = sd->nbr_start[v + 1];
    float scratch[(MESSENGER_MAX_LAYERS + 1) * MESSENGER_MAX_DIM] __attribute__((aligned(32)));
    float *local_agg = scratch + (size_t)MESSENGER_MAX_LAYERS * p;
    float *none[MESSENGER_MAX_LAYERS] = {0}; /* no saved layer outputs: scratch rows */
    int f_last = sd->f.n_layers - 1;
    for (int b = 0; b < batch; b++) {
        size_t off = ((size_t)v * batch + b) * p;
        float *h = sd->h + off;
        memcpy(h, sp + off, (size_t)p * sizeof(float));
        float *a = grad ? sd->agg + off : local_agg;
        memset(a, 0, (size_t)p * sizeof(float));
        if (hi > lo) {
            for (int e = lo; e < hi; e++)
                messenger_add(a, sd->fact[f_last] + ((size_t)sd->nbr[e] * batch + b) * p, nv);
            const float *gy =
                messenger_net_row(&sd->g, a, grad ? sd->gact : none, off, scratch, d, nv);
            messenger_add(h, gy, nv);
        } else if (grad) {
            for (int l = 0; l < sd->g.n_layers; l++)
                memset(sd->gact[l] + off, 0, (size_t)p * sizeof(float));
        }
        float *fout[MESSENGER_MAX_LAYERS] = {0};
        for (int l = 0; l < sd->f.n_layers; l++)
            fout[l] = grad || l == f_last ? sd->fact[l] : NULL;
        messenger_net_row(&sd->f, h, fout, off, scratch, d, nv);
    }
}

/* The forward pass over all nodes, the two directions interleaved (they are independent, so
 * the processor overlaps their dependency chains). */
static inline __attribute__((always_inline)) void messenger_pass_forward_nv(messenger_ctx *c,
                                                                            int nv, int d)
{
    for (int i = 0; i < c->n; i++)
        for (int k = 0; k < 2; k++)
            messenger_node_forward_nv(&c->side[k], c->sp, c->side[k].order[i], c->batch, d, nv,
                                      c->grad);
}

/* Calls pass(c, nv, d) specialised for 8 and 16 padded floats, so that the accumulators stay in
 * registers, and for the feature widths of 3, 5 and 8 devices (d = 8, 10, 13): with d a
 * constant the products are unrolled and the lane broadcasts use constant shuffles instead of an
 * index built per entry (about 20 % of a single-step pass).  Same arithmetic in the same order
 * for every d. */
#define MESSENGER_DISPATCH(pass, c)                                                                \
    do {                                                                                           \
        int nv_ = (c)->p / MESSENGER_LANES;                                                        \
        if ((c)->d == 8)                                                                           \
            pass(c, 1, 8);                                                                         \
        else if ((c)->d == 10)                                                                     \
            pass(c, 2, 10);                                                                        \
        else if ((c)->d == 13)                                                                     \
            pass(c, 2, 13);                                                                        \
        else if (nv_ == 1)                                                                         \
            pass(c, 1, (c)->d);                                                                    \
        else if (nv_ == 2)                                                                         \
            pass(c, 2, (c)->d);                                                                    \
        else                                                                                       \
            pass(c, nv_, (c)->d);                                                                  \
    } while (0)

MESSENGER_HOT
static void messenger_pass_forward(messenger_ctx *c)
{
    MESSENGER_DISPATCH(messenger_pass_forward_nv, c);
}

static inline __attribute__((always_inline)) void
messenger_node_backward_nv(messenger_side *sd, const float *dop, float *dsp, int v, int batch,
                           int d, int nv)
{
    int p = nv * MESSENGER_LANES, lo = sd->nbr_start[v], hi = sd->nbr_start[v + 1];
    float buf[2 * MESSENGER_MAX_DIM] __attribute__((aligned(64)));
    float *dy = buf, *dx = buf + p;
    memset(dx, 0, (size_t)p * sizeof(float)); /* written by every layer's backward; the compiler
                                                  cannot tell that n_layers >= 1 */
    for (int b = 0; b < batch; b++) {
        size_t off = ((size_t)v * batch + b) * p;
        memcpy(dy, sd->dfout + off, (size_t)p * sizeof(float));
        messenger_net_row_back(&sd->f, sd->fact, sd->dzf, off, dy, dx, d, nv);
        memcpy(dy, dop + off, (size_t)p * sizeof(float));
        messenger_add(dy, dx, nv); /* dL/dh: the output's gradient plus f's */
        messenger_add(dsp + off, dy, nv);
        if (hi == lo) {
            for (int l = 0; l < sd->g.n_layers; l++)
                memset(sd->dzg[l] + off, 0, (size_t)p * sizeof(float));
            continue;
        }
        messenger_net_row_back(&sd->g, sd->gact, sd->dzg, off, dy, dx, d, nv);
        for (int e = lo; e < hi; e++)
            messenger_add(sd->dfout + ((size_t)sd->nbr[e] * batch + b) * p, dx, nv);
    }
}

/* The backward pass over all nodes in reverse order, both directions interleaved; dout is the
 * output gradient, ds the gradient of s (may be NULL). */
static inline __attribute__((always_inline)) void messenger_pass_backward_nv(messenger_ctx *c,
                                                                             int nv, int d)
{
    for (int i = c->n - 1; i >= 0; i--)
        for (int k = 0; k < 2; k++)
            messenger_node_backward_nv(&c->side[k], c->dop[k], c->dsp, c->side[k].order[i],
                                       c->batch, d, nv);
}

MESSENGER_HOT
static void messenger_pass_backward(messenger_ctx *c)
{
    MESSENGER_DISPATCH(messenger_pass_backward_nv, c);
}

/* dW += in^T.dz and db += column sums of dz over all rows, for every layer of net; the products
 * with tape t's kernels (the fused ones where they give OpenBLAS's bits: d x d x rows). */
static void messenger_net_weight_grads(const pb_nn_tape *t, const messenger_net *m, const float *in,
                                       float *const *act, float *const *dz, int rows, int d, int p)
{
    for (int l = 0; l < m->n_layers; l++) {
        const float *x = l == 0 ? in : act[l - 1];
        const messenger_layer *ly = &m->layer[l];
        if (ly->wp->grad)
            pb_nn_tape_gemm(t, 1, 0, d, d, rows, 1.0f, x, p, dz[l], p, 1.0f, ly->wp->grad, d);
        if (ly->bp->grad) {
            float *g = ly->bp->grad;
            for (int r = 0; r < rows; r++) {
                const float *z = dz[l] + (size_t)r * p;
                for (int j = 0; j < d; j++)
                    g[j] += z[j];
            }
        }
    }
}

/* Copies columns col .. col+d-1 of the block-major (batch*n) x width matrix src into the padded
 * node-major rows of dst. */
static void messenger_pad(const messenger_ctx *c, const float *src, int width, int col, float *dst)
{
    int n = c->n, batch = c->batch, d = c->d, p = c->p;
    for (int b = 0; b < batch; b++)
        for (int v = 0; v < n; v++) {
            float *row = dst + ((size_t)v * batch + b) * p;
            memcpy(row, src + ((size_t)b * n + v) * width + col, (size_t)d * sizeof(float));
            memset(row + d, 0, (size_t)(p - d) * sizeof(float));
        }
}

static void messenger_backward(void *vctx, const pb_nn_tensor *out, pb_nn_tensor *const *in,
                               int n_in)
{
    (void)n_in;
    messenger_ctx *c = vctx;
    int n = c->n, batch = c->batch, d = c->d, p = c->p, rows = n * batch;
    for (int k = 0; k < 2; k++)
        memset(c->side[k].dfout, 0, (size_t)rows * p * sizeof(float));
    memset(c->dsp, 0, (size_t)rows * p * sizeof(float));
    messenger_pad(c, out->grad, 2 * d, 0, c->dop[0]);
    messenger_pad(c, out->grad, 2 * d, d, c->dop[1]);
    messenger_pass_backward(c);
    pb_nn_tape_count(c->tape, c->back_flop);
    float *ds = in[0]->grad;
    for (int b = 0; ds && b < batch; b++)
        for (int v = 0; v < n; v++) {
            const float *src = c->dsp + ((size_t)v * batch + b) * p;
            float *dst = ds + ((size_t)b * n + v) * d;
            for (int j = 0; j < d; j++)
                dst[j] += src[j];
        }
    for (int k = 0; k < 2; k++) {
        messenger_side *sd = &c->side[k];
        messenger_net_weight_grads(c->tape, &sd->f, sd->h, sd->fact, sd->dzf, rows, d, p);
        messenger_net_weight_grads(c->tape, &sd->g, sd->agg, sd->gact, sd->dzg, rows, d, p);
    }
}

/* Counts the matrix-vector products of the forward pass on the tape (2 d^2 per layer and row: f
 * on every node, g on nodes with neighbours) and notes those of the backward pass (the same
 * products with the transposed weights, plus one d x d x rows GEMM per layer). */
static void messenger_count(messenger_ctx *c, pb_nn_tape *t)
{
    double per_row = 2.0 * c->d * c->d, fwd = 0, gemm = 0;
    for (int k = 0; k < 2; k++) {
        const messenger_side *sd = &c->side[k];
        int linked = 0;
        for (int v = 0; v < c->n; v++)
            linked += sd->nbr_start[v + 1] > sd->nbr_start[v];
        fwd +=
            per_row * c->batch * ((double)c->n * sd->f.n_layers + (double)linked * sd->g.n_layers);
        gemm += per_row * c->batch * c->n * (sd->f.n_layers + sd->g.n_layers);
    }
    pb_nn_tape_count(t, fwd);
    c->tape = t;
    c->back_flop = fwd + gemm;
}

static float *messenger_floats(pb_nn_tape *t, size_t count)
{
    return pb_nn_alloc(t, count * sizeof(float));
}

/* Padded copies of one network's weights (and transposes) on the tape. */
static int messenger_net_copy(pb_nn_tape *t, const messenger_mlp *m, messenger_net *out, int d,
                              int p)
{
    out->n_layers = m->n_layers;
    for (int l = 0; l < m->n_layers; l++) {
        messenger_layer *ly = &out->layer[l];
        ly->wp = m->w[l];
        ly->bp = m->b[l];
        ly->w = messenger_floats(t, (size_t)p * p);
        ly->wt = messenger_floats(t, (size_t)p * p);
        ly->b = messenger_floats(t, (size_t)p);
        if (!ly->w || !ly->wt || !ly->b)
            return PB_ERR;
        memset(ly->w, 0, (size_t)p * p * sizeof(float));
        memset(ly->wt, 0, (size_t)p * p * sizeof(float));
        memset(ly->b, 0, (size_t)p * sizeof(float));
        const float *src = m->w[l]->data;
        for (int k = 0; k < d; k++)
            for (int j = 0; j < d; j++) {
                ly->w[(size_t)k * p + j] = src[(size_t)k * d + j];
                ly->wt[(size_t)j * p + k] = src[(size_t)k * d + j];
            }
        memcpy(ly->b, m->b[l]->data, (size_t)d * sizeof(float));
    }
    return PB_OK;
}

static int messenger_side_init(pb_nn_tape *t, messenger_side *sd, const messenger_dir *dir,
                               size_t rows, int d, int p, int grad)
{
    sd->order = dir->order;
    sd->nbr_start = dir->nbr_start;
    sd->nbr = dir->nbr;
    if (messenger_net_copy(t, &dir->f, &sd->f, d, p) ||
        messenger_net_copy(t, &dir->g, &sd->g, d, p))
        return PB_ERR;
    size_t m = rows * (size_t)p;
    int ok = (sd->h = messenger_floats(t, m)) != NULL;
    for (int l = 0; ok && l < sd->f.n_layers; l++)
        ok = (sd->fact[l] = messenger_floats(t, m)) != NULL;
    if (!grad || !ok)
        return ok ? PB_OK : PB_ERR;
    ok = (sd->agg = messenger_floats(t, m)) && (sd->dfout = messenger_floats(t, m));
    for (int l = 0; ok && l < sd->f.n_layers; l++)
        ok = (sd->dzf[l] = messenger_floats(t, m)) != NULL;
    for (int l = 0; ok && l < sd->g.n_layers; l++)
        ok = (sd->gact[l] = messenger_floats(t, m)) && (sd->dzg[l] = messenger_floats(t, m));
    return ok ? PB_OK : PB_ERR;
}

/* Appends the direction's weights to the custom op's input list. */
static int messenger_collect(const messenger_dir *dir, pb_nn_tensor **in, int k)
{
    const messenger_mlp *m[2] = {&dir->f, &dir->g};
    for (int i = 0; i < 2; i++)
        for (int l = 0; l < m[i]->n_layers; l++) {
            in[k++] = m[i]->w[l];
            in[k++] = m[i]->b[l];
        }
    return k;
}

static int messenger_dir_ok(const messenger_dir *dir, int d)
{
    const messenger_mlp *m[2] = {&dir->f, &dir->g};
    for (int i = 0; i < 2; i++) {
        if (m[i]->n_layers < 1 || m[i]->n_layers > MESSENGER_MAX_LAYERS)
            return 0;
        for (int l = 0; l < m[i]->n_layers; l++)
            if (!m[i]->w[l] || !m[i]->b[l] || m[i]->w[l]->rows != d || m[i]->w[l]->cols != d ||
                m[i]->b[l]->rows != 1 || m[i]->b[l]->cols != d)
                return 0;
    }
    return dir->order && dir->nbr_start && (dir->nbr || dir->nbr_start[0] == 0);
}

/* Checks the input, records the op on tape t and fills *cp and *yp; the forward pass itself is
 * left to the caller (messenger_pass_forward or messenger_pass_forward_group). */
static int messenger_setup(pb_nn_tape *t, int n, int batch, pb_nn_tensor *s,
                           const messenger_dir *fwd, const messenger_dir *bwd, messenger_ctx **cp,
                           pb_nn_tensor **yp, pb_error *err)
{
    if (pb_nn_tape_status(t, err) != PB_OK)
        return PB_ERR;
    if (!s)
        return pb_errorf(err, "messenger: no input");
    int d = s->cols;
    if (n <= 0 || batch <= 0 || s->rows != n * batch || d < 1 || d > MESSENGER_MAX_DIM)
        return pb_errorf(err, "messenger: input of %dx%d for %d blocks of %d nodes", s->rows, d,
                         batch, n);
    if (!messenger_dir_ok(fwd, d) || !messenger_dir_ok(bwd, d))
        return pb_errorf(err, "messenger: aggregator weights are not %dx%d layers", d, d);
    pb_nn_tensor *in[1 + 4 * 2 * MESSENGER_MAX_LAYERS];
    in[0] = s;
    int n_in = messenger_collect(bwd, in, messenger_collect(fwd, in, 1));
    messenger_ctx *c = pb_nn_alloc(t, sizeof *c);
    if (!c)
        return pb_nn_tape_status(t, err);
    memset(c, 0, sizeof *c);
    c->n = n;
    c->batch = batch;
    c->d = d;
    c->p = (d + MESSENGER_LANES - 1) / MESSENGER_LANES * MESSENGER_LANES;
    pb_nn_tensor *y = pb_nn_custom(t, n * batch, 2 * d, n_in, in, messenger_backward, c);
    if (!y)
        return pb_nn_tape_status(t, err);
    c->grad = y->grad != NULL;
    size_t rows = (size_t)n * batch;
    size_t m = rows * (size_t)c->p;
    if (messenger_side_init(t, &c->side[0], fwd, rows, d, c->p, c->grad) ||
        messenger_side_init(t, &c->side[1], bwd, rows, d, c->p, c->grad) ||
        !(c->sp = messenger_floats(t, m)) ||
        (c->grad && (!(c->dop[0] = messenger_floats(t, m)) ||
                     !(c->dop[1] = messenger_floats(t, m)) || !(c->dsp = messenger_floats(t, m)))))
        return pb_nn_tape_status(t, err);
    messenger_pad(c, s->data, d, 0, c->sp);
    *cp = c;
    *yp = y;
    return PB_OK;
}

/* After the forward pass: counts its products and copies the node states into y. */
static void messenger_finish(messenger_ctx *c, pb_nn_tape *t, pb_nn_tensor *y)
{
    int n = c->n, d = c->d;
    messenger_count(c, t);
    for (int b = 0; b < c->batch; b++)
        for (int v = 0; v < n; v++) {
            size_t r = (size_t)b * n + v, q = ((size_t)v * c->batch + b) * c->p;
            memcpy(y->data + r * 2 * d, c->side[0].h + q, (size_t)d * sizeof(float));
            memcpy(y->data + r * 2 * d + d, c->side[1].h + q, (size_t)d * sizeof(float));
        }
}

int messenger_sequential(pb_nn_tape *t, int n, int batch, pb_nn_tensor *s, const messenger_dir *fwd,
                         const messenger_dir *bwd, pb_nn_tensor **out, pb_error *err)
{
    *out = NULL;
    messenger_ctx *c = NULL;
    pb_nn_tensor *y = NULL;
    if (messenger_setup(t, n, batch, s, fwd, bwd, &c, &y, err))
        return PB_ERR;
    messenger_pass_forward(c);
    messenger_finish(c, t, y);
    *out = y;
    return PB_OK;
}

/* The forward passes of several runs' contexts of the same shape (n, batch, d, grad and the
 * same processing orders), node by node: each node of each run and side runs exactly the
 * arithmetic of messenger_pass_forward, only the runs' independent chains are interleaved. */
typedef struct messenger_group {
    messenger_ctx *const *c;
    int k, d, p;
} messenger_group;

static inline __attribute__((always_inline)) void
messenger_pass_forward_group_nv(const messenger_group *gr, int nv, int d)
{
    messenger_ctx *const *c = gr->c;
    for (int i = 0; i < c[0]->n; i++)
        for (int r = 0; r < gr->k; r++)
            for (int k = 0; k < 2; k++)
                messenger_node_forward_nv(&c[r]->side[k], c[r]->sp, c[r]->side[k].order[i],
                                          c[r]->batch, d, nv, c[r]->grad);
}

MESSENGER_HOT
static void messenger_pass_forward_group(const messenger_group *gr)
{
    MESSENGER_DISPATCH(messenger_pass_forward_group_nv, gr);
}

/* Whether the contexts can share one interleaved pass. */
static int messenger_same_shape(messenger_ctx *const *c, int k)
{
    for (int r = 1; r < k; r++) {
        if (c[r]->n != c[0]->n || c[r]->batch != c[0]->batch || c[r]->d != c[0]->d ||
            c[r]->grad != c[0]->grad)
            return 0;
        for (int s = 0; s < 2; s++)
            if (c[r]->side[s].order != c[0]->side[s].order &&
                memcmp(c[r]->side[s].order, c[0]->side[s].order, (size_t)c[0]->n * sizeof(int)))
                return 0;
    }
    return 1;
}

int messenger_sequential_multi(int k, pb_nn_tape *const *t, int n, int batch,
                               pb_nn_tensor *const *s, const messenger_dir *dirs,
                               pb_nn_tensor **out, pb_error *err)
{
    messenger_ctx *c[MESSENGER_MAX_RUNS];
    if (k < 1 || k > MESSENGER_MAX_RUNS)
        return pb_errorf(err, "messenger: %d runs at once (1 to %d)", k, MESSENGER_MAX_RUNS);
    for (int r = 0; r < k; r++) {
        out[r] = NULL;
        if (messenger_setup(t[r], n, batch, s[r], &dirs[2 * r], &dirs[2 * r + 1], &c[r], &out[r],
                            err))
            return PB_ERR;
    }
    if (!messenger_same_shape(c, k))
        return pb_errorf(err, "messenger: runs of different shapes cannot be interleaved");
    messenger_group gr = {c, k, c[0]->d, c[0]->p};
    messenger_pass_forward_group(&gr);
    for (int r = 0; r < k; r++)
        messenger_finish(c[r], t[r], out[r]);
    return PB_OK;
}
