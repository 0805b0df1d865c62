/* sage.c — the GraphSAGE recursion of the embedding paper's reference: successor samples, the
 * per-level combine op, and the batched forward pass shared by the graphsage and pgnn plugins. */
#include "sage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sage_config_read(const pb_value *opts, sage_config *cfg)
{
    static const int agg[4] = {PB_NN_AGG_MAX, PB_NN_AGG_MEAN, PB_NN_AGG_SUM, PB_NN_AGG_MIN};
    long long a = opts[SAGE_OPT_AGGREGATION].i;
    cfg->hops = (int)opts[SAGE_OPT_HOPS].i;
    cfg->sample_ratio = opts[SAGE_OPT_SAMPLE_RATIO].d;
    cfg->dropout = (float)opts[SAGE_OPT_DROPOUT].d;
    cfg->aggregation = agg[a >= 0 && a < 4 ? a : 0];
    cfg->single_layer = (int)opts[SAGE_OPT_SINGLE_LAYER].i;
    cfg->feature5 = opts[SAGE_OPT_FEATURE5].i ? PB_FEATURE5_PEAK_MEM : PB_FEATURE5_START_TIME;
    cfg->sample_seed = (uint64_t)opts[SAGE_OPT_SAMPLE_SEED].i;
}

uint64_t sage_structure_seed(const sage_config *cfg, uint64_t create_seed)
{
    if (cfg->sample_seed)
        return cfg->sample_seed;
    uint64_t s = pb_seed_derive(create_seed, "sage/structure") & (((uint64_t)1 << 53) - 1);
    return s ? s : 1;
}

int sage_mlp_init(pb_nn_mlp *m, pb_nn_params *p, const char *name, int d, int hidden,
                  int single_layer, pb_rng *rng, pb_error *err)
{
    if (single_layer) {
        int sizes[2] = {d, d};
        return pb_nn_mlp_init(m, p, name, 2, sizes, PB_NN_ACT_RELU, rng, err);
    }
    int sizes[3] = {d, hidden, d};
    return pb_nn_mlp_init(m, p, name, 3, sizes, PB_NN_ACT_NONE, rng, err);
}

int sage_model_init(sage_model *m, const sage_config *cfg, pb_nn_params *p, const char *prefix,
                    int d, pb_rng *rng, pb_error *err)
{
    if (cfg->hops < 0 || cfg->hops > SAGE_MAX_HOPS)
        return pb_errorf(err, "%s: hops %d outside 0..%d", prefix, cfg->hops, SAGE_MAX_HOPS);
    if (d < 1)
        return pb_errorf(err, "%s: feature width %d", prefix, d);
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->dim = d;
    char name[128];
    snprintf(name, sizeof name, "%s/self", prefix);
    if (sage_mlp_init(&m->self, p, name, d, d, cfg->single_layer, rng, err))
        return PB_ERR;
    for (int i = 0; i <= cfg->hops; i++) {
        snprintf(name, sizeof name, "%s/level%d", prefix, i);
        if (sage_mlp_init(&m->level[i], p, name, d, d * (i + 1), cfg->single_layer, rng, err))
            return PB_ERR;
    }
    return PB_OK;
}

int sage_sample_count(int count, double ratio)
{
    return (int)((double)count * ratio);
}

int sage_samples_nodes(const sage_samples *s)
{
    int count = 0;
    for (int v = 0; v < s->n; v++)
        count += s->has[v];
    return count;
}

void sage_samples_free(sage_samples *s)
{
    free(s->start);
    free(s->sample);
    free(s->has);
    free(s->pos);
    memset(s, 0, sizeof *s);
}

/* Partial Fisher-Yates: the first k entries of pool (len entries, reordered) become a uniform
 * sample without replacement, in draw order. */
static void sage_pick(int *pool, int len, int k, pb_rng *rng)
{
    for (int j = 0; j < k; j++) {
        int pick = j + (int)pb_rng_below(rng, (uint64_t)(len - j));
        int keep = pool[j];
        pool[j] = pool[pick];
        pool[pick] = keep;
    }
}

int sage_samples_draw(sage_samples *s, const pb_graph *g, const int *order, double ratio,
                      pb_rng *rng, pb_error *err)
{
    int n = g->n_nodes;
    memset(s, 0, sizeof *s);
    s->n = n;
    s->start = malloc(((size_t)n + 1) * sizeof(int));
    s->has = calloc((size_t)n + 1, 1);
    s->pos = malloc(((size_t)n + 1) * sizeof(int));
    int *pool = malloc(((size_t)g->n_edges + 1) * sizeof(int));
    if (!s->start || !s->has || !s->pos || !pool) {
        free(pool);
        return pb_errorf(err, "out of memory");
    }
    s->start[0] = 0;
    s->pos[0] = 0;
    for (int v = 0; v < n; v++) {
        int k = sage_sample_count(g->succ_start[v + 1] - g->succ_start[v], ratio);
        s->start[v + 1] = s->start[v] + k;
        s->has[v] = k > 0;
        s->pos[v + 1] = s->pos[v] + 1 + s->has[v];
    }
    s->sample = malloc(((size_t)s->start[n] + 1) * sizeof(int));
    if (!s->sample) {
        free(pool);
        return pb_errorf(err, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        int v = order[i], deg = g->succ_start[v + 1] - g->succ_start[v];
        int k = s->start[v + 1] - s->start[v];
        memcpy(pool, g->succ + g->succ_start[v], (size_t)deg * sizeof(int));
        sage_pick(pool, deg, k, rng);
        memcpy(s->sample + s->start[v], pool, (size_t)k * sizeof(int));
    }
    free(pool);
    return PB_OK;
}

/* ------------------------------------------------------------------ combine and expand */

/* What the two fused ops keep for their reverse pass. */
typedef struct sage_level_ctx {
    int r, batch, d;
    const sage_samples *s;
    float *keep; /* sage_expand: the dropout factor of every entry of y */
} sage_level_ctx;

/* Where node block k (node k % n of batch block k / n) starts in combine's layout, in units of
 * r rows. */
static size_t sage_block_pos(const sage_samples *s, size_t k)
{
    return k / (size_t)s->n * (size_t)s->pos[s->n] + (size_t)s->pos[k % (size_t)s->n];
}

/* Copies between node block k's F_i input rows (in, at row r*pos) and its sources: forward
 * (back == 0) writes `in` from a and x; backward adds in's gradient into a's and x's (either may
 * be NULL). */
static void sage_combine_block(const sage_level_ctx *c, size_t k, size_t pos, float *a, float *x,
                               float *in, int back)
{
    int r = c->r, d = c->d, w = 2 * r;
    size_t row0 = k * (size_t)r, size = (size_t)r * d;
    float *o = in + pos * size;
    if (!c->s->has[k % (size_t)c->s->n]) {
        if (!back)
            memcpy(o, x + row0 * d, size * sizeof(float));
        else if (x)
            for (size_t e = 0; e < size; e++)
                x[row0 * d + e] += o[e];
        return;
    }
    /* Entry (ch, j) of the d x 2r matrix [a^T | x^T] is input entry ch*2r + j. */
    for (int j = 0; j < w; j++) {
        float *src = j < r ? a : x;
        if (!src)
            continue;
        src += (row0 + (size_t)(j < r ? j : j - r)) * d;
        for (int ch = 0; ch < d; ch++) {
            if (!back)
                o[(size_t)ch * w + j] = src[ch];
            else
                src[ch] += o[(size_t)ch * w + j];
        }
    }
}

static void sage_combine_backward(void *ctx, const pb_nn_tensor *out, pb_nn_tensor *const *in,
                                  int n_in)
{
    (void)n_in;
    const sage_level_ctx *c = ctx;
    const sage_samples *s = c->s;
    for (size_t k = 0; k < (size_t)s->n * c->batch; k++)
        sage_combine_block(c, k, sage_block_pos(s, k), in[0]->grad, in[1]->grad, out->grad, 1);
}

pb_nn_tensor *sage_combine(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *x, int r,
                           const sage_samples *s, int batch)
{
    pb_nn_tensor *in[2] = {a, x};
    if (!a || !x || !s || r < 1 || batch < 1 || a->rows != s->n * batch * r || x->rows != a->rows ||
        x->cols != a->cols)
        return NULL;
    sage_level_ctx *c = pb_nn_alloc(t, sizeof *c);
    if (!c)
        return NULL;
    *c = (sage_level_ctx){r, batch, a->cols, s, NULL};
    pb_nn_tensor *y =
        pb_nn_custom(t, batch * r * s->pos[s->n], a->cols, 2, in, sage_combine_backward, c);
    if (!y)
        return NULL;
    for (size_t k = 0; k < (size_t)s->n * batch; k++)
        sage_combine_block(c, k, sage_block_pos(s, k), a->data, x->data, y->data, 0);
    return y;
}

/* Node block k of the level output and where its rows of y start (y_row) and end up (out_row). */
static void sage_expand_rows(const sage_level_ctx *c, size_t k, size_t *y_row, size_t *out_row,
                             size_t *count)
{
    const sage_samples *s = c->s;
    size_t r = (size_t)c->r;
    int has = s->has[k % (size_t)s->n];
    *y_row = r * sage_block_pos(s, k);
    *out_row = 2 * r * k + (has ? 0 : r);
    *count = has ? 2 * r : r;
}

static void sage_expand_backward(void *ctx, const pb_nn_tensor *out, pb_nn_tensor *const *in,
                                 int n_in)
{
    (void)n_in;
    const sage_level_ctx *c = ctx;
    float *dy = in[0]->grad;
    size_t d = (size_t)c->d;
    for (size_t k = 0; k < (size_t)c->s->n * c->batch; k++) {
        size_t y_row, out_row, count;
        sage_expand_rows(c, k, &y_row, &out_row, &count);
        const float *go = out->grad + out_row * d, *keep = c->keep + y_row * d;
        for (size_t e = 0; e < count * d; e++)
            dy[y_row * d + e] += go[e] * keep[e];
    }
}

/* The dropout factors of y's rows of batch block b, from rng. */
static void sage_expand_draw(float *keep, size_t count, float rate, pb_rng *rng)
{
    if (rate <= 0.0f) {
        for (size_t e = 0; e < count; e++)
            keep[e] = 1.0f;
        return;
    }
    float scale = 1.0f / (1.0f - rate);
    /* Kept when u >= rate, u a 32-bit uniform: TF keeps an entry when floor(keep_prob + u) = 1.
     * The outcome is a coin flip no branch predictor learns, so the factor is selected with a bit
     * mask (a float's bits and-ed with all ones or all zeros), not with a branch. */
    uint32_t threshold = (uint32_t)ldexp((double)rate, 32), scale_bits;
    memcpy(&scale_bits, &scale, sizeof scale_bits);
    uint64_t bits = 0;
    for (size_t e = 0; e < count; e++) {
        if (e % 2 == 0)
            bits = pb_rng_next(rng);
        uint32_t u = (uint32_t)(e % 2 == 0 ? bits >> 32 : bits);
        uint32_t f = scale_bits & (0u - (uint32_t)(u >= threshold));
        memcpy(&keep[e], &f, sizeof f);
    }
}

pb_nn_tensor *sage_expand(pb_nn_tape *t, pb_nn_tensor *y, int r, const sage_samples *s, int batch,
                          float rate, pb_rng *rng)
{
    pb_nn_tensor *in[1] = {y};
    int block_rows = r * (s ? s->pos[s->n] : 0);
    if (!y || !s || r < 1 || batch < 1 || y->rows != batch * block_rows || !(rate < 1.0f))
        return NULL;
    sage_level_ctx *c = pb_nn_alloc(t, sizeof *c);
    float *keep = pb_nn_alloc(t, (size_t)y->rows * y->cols * sizeof(float) + 1);
    if (!c || !keep)
        return NULL;
    *c = (sage_level_ctx){r, batch, y->cols, s, keep};
    size_t d = (size_t)y->cols, per_block = (size_t)block_rows * d;
    for (int b = 0; b < batch; b++)
        sage_expand_draw(keep + b * per_block, per_block, rate, &rng[b]);
    pb_nn_tensor *out =
        pb_nn_custom(t, s->n * batch * 2 * r, y->cols, 1, in, sage_expand_backward, c);
    if (!out)
        return NULL;
    for (size_t k = 0; k < (size_t)s->n * batch; k++) {
        size_t y_row, out_row, count;
        sage_expand_rows(c, k, &y_row, &out_row, &count);
        if (count == (size_t)r)
            memset(out->data + (out_row - r) * d, 0, (size_t)r * d * sizeof(float));
        const float *src = y->data + y_row * d, *f = keep + y_row * d;
        float *dst = out->data + out_row * d;
        for (size_t e = 0; e < count * d; e++)
            dst[e] = src[e] * f[e];
    }
    return out;
}

/* ------------------------------------------------------------------ the forward pass */

/* Level-i selection (r rows per node): output row (b, v, j) aggregates rows (b, u, j) of the
 * sampled successors u of v. */
static int sage_level_csr(pb_nn_tape *t, const sage_samples *s, int r, int batch, pb_nn_csr *csr)
{
    int n = s->n;
    size_t rows = (size_t)n * batch * r, total = (size_t)s->start[n] * batch * r;
    int *start = pb_nn_alloc(t, (rows + 1) * sizeof(int));
    int *index = pb_nn_alloc(t, (total + 1) * sizeof(int));
    if (!start || !index)
        return PB_ERR;
    size_t row = 0;
    int k = 0;
    for (int b = 0; b < batch; b++)
        for (int v = 0; v < n; v++)
            for (int j = 0; j < r; j++) {
                start[row++] = k;
                for (int e = s->start[v]; e < s->start[v + 1]; e++)
                    index[k++] = ((b * n + s->sample[e]) * r) + j;
            }
    start[rows] = k;
    *csr = (pb_nn_csr){(int)rows, start, index, NULL};
    return PB_OK;
}

int sage_forward(pb_nn_tape *t, pb_nn_params *p, const sage_model *m, const sage_samples *s,
                 pb_nn_tensor *x, int batch, const uint64_t *seeds, pb_nn_tensor **out,
                 pb_error *err)
{
    int n = s->n, d = m->dim;
    *out = NULL;
    if (!x || batch < 1 || n < 1 || x->rows != n * batch || x->cols != d || !seeds)
        return pb_errorf(err, "sage: features of %dx%d for %d blocks of %d nodes x %d",
                         x ? x->rows : 0, x ? x->cols : 0, batch, n, d);
    pb_rng *rng = pb_nn_alloc(t, (size_t)batch * sizeof *rng);
    if (!rng)
        return pb_nn_tape_status(t, err);
    for (int b = 0; b < batch; b++)
        pb_rng_seed(&rng[b], seeds[b]);
    pb_nn_tensor *h = pb_nn_mlp_forward(t, p, &m->self, x);
    for (int i = 0; i <= m->cfg.hops; i++) {
        int r = 1 << i;
        pb_nn_csr csr;
        if (sage_level_csr(t, s, r, batch, &csr))
            return pb_nn_tape_status(t, err);
        pb_nn_tensor *agg = pb_nn_aggregate(t, h, &csr, m->cfg.aggregation);
        pb_nn_tensor *in = sage_combine(t, agg, h, r, s, batch);
        pb_nn_tensor *y = pb_nn_mlp_forward(t, p, &m->level[i], in);
        h = sage_expand(t, y, r, s, batch, m->cfg.dropout, rng);
    }
    int rows = 2 << m->cfg.hops;
    pb_nn_tensor *z = pb_nn_reshape(t, h, n * batch, rows * d);
    *out = pb_nn_l2_normalize(t, z, 1, 1e-12f);
    return pb_nn_tape_status(t, err);
}

pb_nn_tensor *sage_pool_rows(pb_nn_tape *t, pb_nn_tensor *z, int d, const float *w)
{
    if (!z || d < 1 || z->cols % d)
        return NULL; /* the next op records the failure */
    int rows = z->cols / d, nodes = z->rows;
    size_t total = (size_t)nodes * rows;
    int *start = pb_nn_alloc(t, ((size_t)nodes + 1) * sizeof(int));
    float *weight = pb_nn_alloc(t, total * sizeof(float));
    if (!start || !weight)
        return NULL;
    for (int v = 0; v <= nodes; v++)
        start[v] = v * rows;
    for (size_t k = 0; k < total; k++)
        weight[k] = w[k % (size_t)rows];
    pb_nn_csr csr = {nodes, start, NULL, weight};
    return pb_nn_aggregate(t, pb_nn_reshape(t, z, nodes * rows, d), &csr, PB_NN_AGG_SUM);
}

void sage_log(const pb_host *host, const char *msg)
{
    if (host && host->log)
        host->log(host->ctx, PB_LOG_INFO, msg);
}
