/* sage.c — the GraphSAGE recursion of the embedding paper's reference: successor samples, the
 * per-level combine op, and the batched forward pass shared by the graphsage and pgnn plugins. */
#include "sage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sage_config_read(const sage_options *o, sage_config *cfg)
{
    static const int agg[4] = {PB_NN_AGG_MAX, PB_NN_AGG_MEAN, PB_NN_AGG_SUM, PB_NN_AGG_MIN};
    long long a = o->aggregation;
    cfg->hops = (int)o->hops;
    cfg->sample_ratio = o->sample_ratio;
    cfg->dropout = (float)o->dropout;
    cfg->aggregation = agg[a >= 0 && a < 4 ? a : 0];
    cfg->single_layer = (int)o->single_layer;
    cfg->feature5 = o->feature5 ? PB_FEATURE5_PEAK_MEM : PB_FEATURE5_START_TIME;
    cfg->sample_seed = (uint64_t)o->sample_seed;
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

/* What the fused level ops keep for their reverse pass. */
typedef struct sage_level_ctx {
    int r, batch, d;
    int skip; /* leading rows of a block without samples left out of F_i's input (zero rows) */
    const sage_samples *s;
    const int *cpos; /* [n+1]: row of node v's F_i input rows within a batch block */
    float *keep;     /* sage_expand: the dropout factor of every entry of the uncompacted y */
} sage_level_ctx;

/* cpos of sage.h's F_i input layout: node v's rows start at cpos[v] of its batch block, 2r rows
 * with samples and r - skip without; cpos[n] rows per block.  On the tape, NULL when out of
 * memory. */
static int *sage_compact_pos(pb_nn_tape *t, const sage_samples *s, int r, int skip)
{
    int *cpos = pb_nn_alloc(t, ((size_t)s->n + 1) * sizeof(int));
    if (!cpos)
        return NULL;
    cpos[0] = 0;
    for (int v = 0; v < s->n; v++)
        cpos[v + 1] = cpos[v] + (s->has[v] ? 2 * r : r - skip);
    return cpos;
}

/* Rows of F_i's input for `batch` blocks: one extra zero row at the end when skip > 0. */
static int sage_input_rows(const sage_level_ctx *c)
{
    return c->batch * c->cpos[c->s->n] + (c->skip > 0);
}

/* The F_i input rows of node block k (node k % n of batch block k / n) in a matrix m. */
static float *sage_input_block(const sage_level_ctx *c, float *m, size_t k)
{
    size_t n = (size_t)c->s->n;
    return m + (k / n * (size_t)c->cpos[n] + (size_t)c->cpos[k % n]) * (size_t)c->d;
}

/* Node block k of a (batch*n*r) x d matrix (size = r*d entries per block); NULL for NULL. */
static float *sage_block(float *m, size_t k, size_t size)
{
    return m ? m + k * size : NULL;
}

/* Copies between node block k's F_i input rows o and its sources, the block's r x d rows a
 * (aggregate) and x (self): forward (back == 0) writes o from a and x; backward adds o's
 * gradient into a's and x's (either may be NULL).  Without samples o is x's rows skip..r. */
static void sage_combine_block(const sage_level_ctx *c, size_t k, float *a, float *x, float *o,
                               int back)
{
    int r = c->r, d = c->d, w = 2 * r;
    if (!c->s->has[k % (size_t)c->s->n]) {
        size_t from = (size_t)c->skip * d, size = (size_t)(r - c->skip) * d;
        if (!back)
            memcpy(o, x + from, size * sizeof(float));
        else if (x)
            for (size_t e = 0; e < size; e++)
                x[from + e] += o[e];
        return;
    }
    /* Entry (ch, j) of the d x 2r matrix [a^T | x^T] is input entry ch*2r + j. */
    for (int j = 0; j < w; j++) {
        float *src = j < r ? a : x;
        if (!src)
            continue;
        src += (size_t)(j < r ? j : j - r) * d;
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
    size_t size = (size_t)c->r * c->d;
    for (size_t k = 0; k < (size_t)c->s->n * c->batch; k++)
        sage_combine_block(c, k, sage_block(in[0]->grad, k, size), sage_block(in[1]->grad, k, size),
                           sage_input_block(c, out->grad, k), 1);
}

pb_nn_tensor *sage_combine(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *x, int r,
                           const sage_samples *s, int batch)
{
    pb_nn_tensor *in[2] = {a, x};
    if (!a || !x || !s || r < 1 || batch < 1 || a->rows != s->n * batch * r || x->rows != a->rows ||
        x->cols != a->cols)
        return NULL;
    sage_level_ctx *c = pb_nn_alloc(t, sizeof *c);
    int *cpos = sage_compact_pos(t, s, r, 0);
    if (!c || !cpos)
        return NULL;
    *c = (sage_level_ctx){r, batch, a->cols, 0, s, cpos, NULL};
    pb_nn_tensor *y = pb_nn_custom(t, sage_input_rows(c), a->cols, 2, in, sage_combine_backward, c);
    if (!y)
        return NULL;
    size_t size = (size_t)r * a->cols;
    for (size_t k = 0; k < (size_t)s->n * batch; k++)
        sage_combine_block(c, k, a->data + k * size, x->data + k * size,
                           sage_input_block(c, y->data, k), 0);
    return y;
}

/* What sage_gather_combine keeps for its reverse pass. */
typedef struct sage_gather_ctx {
    sage_level_ctx c;
    int kind;    /* PB_NN_AGG_* */
    int *arg;    /* max/min: the winning sample (index into s->sample) of every aggregate entry,
                  * at x's entry of the same (block, row, channel); NULL otherwise */
    float *dagg; /* r x d: one block's aggregate gradient during the reverse pass */
} sage_gather_ctx;

/* Writes the aggregate of node block k's samples (row j, r x d, row-major) into agg, and the
 * winners into arg (max/min, may be NULL). */
static void sage_gather_block(const sage_gather_ctx *g, size_t k, const float *x, float *agg,
                              int *arg)
{
    const sage_samples *s = g->c.s;
    size_t n = (size_t)s->n, r = (size_t)g->c.r, d = (size_t)g->c.d, base = k / n * n;
    int v = (int)(k % n), e0 = s->start[v], e1 = s->start[v + 1];
    size_t size = r * d;
    const float *src = x + (base + (size_t)s->sample[e0]) * size;
    memcpy(agg, src, size * sizeof(float));
    if (arg)
        for (size_t q = 0; q < size; q++)
            arg[q] = e0;
    for (int e = e0 + 1; e < e1; e++) {
        src = x + (base + (size_t)s->sample[e]) * size;
        if (g->kind == PB_NN_AGG_SUM || g->kind == PB_NN_AGG_MEAN) {
            for (size_t q = 0; q < size; q++)
                agg[q] += src[q];
            continue;
        }
        int is_max = g->kind == PB_NN_AGG_MAX;
        if (!arg) /* without a reverse pass: branch-free, so the compiler vectorises it */
            for (size_t q = 0; q < size; q++)
                agg[q] = (is_max ? src[q] > agg[q] : src[q] < agg[q]) ? src[q] : agg[q];
        else
            for (size_t q = 0; q < size; q++)
                if (is_max ? src[q] > agg[q] : src[q] < agg[q]) {
                    agg[q] = src[q];
                    arg[q] = e;
                }
    }
    if (g->kind == PB_NN_AGG_MEAN)
        for (size_t q = 0; q < size; q++)
            agg[q] /= (float)(e1 - e0);
}

/* Adds node block k's aggregate gradient (dagg, r x d) into the samples' rows of dx. */
static void sage_scatter_block(const sage_gather_ctx *g, size_t k, const float *dagg, float *dx)
{
    const sage_samples *s = g->c.s;
    size_t n = (size_t)s->n, r = (size_t)g->c.r, d = (size_t)g->c.d, base = k / n * n;
    int v = (int)(k % n), e0 = s->start[v], e1 = s->start[v + 1];
    size_t size = r * d;
    if (g->arg) {
        const int *arg = g->arg + k * size;
        for (size_t q = 0; q < size; q++)
            dx[(base + (size_t)s->sample[arg[q]]) * size + q] += dagg[q];
        return;
    }
    float scale = g->kind == PB_NN_AGG_MEAN ? 1.0f / (float)(e1 - e0) : 1.0f;
    for (int e = e0; e < e1; e++) {
        float *dst = dx + (base + (size_t)s->sample[e]) * size;
        for (size_t q = 0; q < size; q++)
            dst[q] += dagg[q] * scale;
    }
}

static void sage_gather_backward(void *ctx, const pb_nn_tensor *out, pb_nn_tensor *const *in,
                                 int n_in)
{
    (void)n_in;
    const sage_gather_ctx *g = ctx;
    const sage_samples *s = g->c.s;
    size_t size = (size_t)g->c.r * g->c.d;
    float *dx = in[0]->grad;
    for (size_t k = 0; k < (size_t)s->n * g->c.batch; k++) {
        float *o = sage_input_block(&g->c, out->grad, k);
        if (!s->has[k % (size_t)s->n]) {
            sage_combine_block(&g->c, k, NULL, dx + k * size, o, 1);
            continue;
        }
        memset(g->dagg, 0, size * sizeof(float));
        sage_combine_block(&g->c, k, g->dagg, dx + k * size, o, 1);
        sage_scatter_block(g, k, g->dagg, dx);
    }
}

pb_nn_tensor *sage_gather_combine(pb_nn_tape *t, pb_nn_tensor *x, int r, int skip,
                                  const sage_samples *s, int batch, int kind)
{
    pb_nn_tensor *in[1] = {x};
    if (!x || !s || r < 1 || skip < 0 || skip >= r || batch < 1 || x->rows != s->n * batch * r ||
        kind < PB_NN_AGG_SUM || kind > PB_NN_AGG_MIN)
        return NULL;
    sage_gather_ctx *g = pb_nn_alloc(t, sizeof *g);
    size_t size = (size_t)r * x->cols;
    float *agg = pb_nn_alloc(t, size * sizeof(float));
    int *cpos = sage_compact_pos(t, s, r, skip);
    if (!g || !agg || !cpos)
        return NULL;
    *g = (sage_gather_ctx){{r, batch, x->cols, skip, s, cpos, NULL}, kind, NULL, agg};
    int rows = sage_input_rows(&g->c);
    pb_nn_tensor *y = pb_nn_custom(t, rows, x->cols, 1, in, sage_gather_backward, g);
    if (!y)
        return NULL;
    if (y->grad && (kind == PB_NN_AGG_MAX || kind == PB_NN_AGG_MIN)) {
        g->arg = pb_nn_alloc(t, (size_t)x->rows * x->cols * sizeof(int));
        if (!g->arg)
            return NULL;
    }
    for (size_t k = 0; k < (size_t)s->n * batch; k++) {
        if (s->has[k % (size_t)s->n])
            sage_gather_block(g, k, x->data, agg, g->arg ? g->arg + k * size : NULL);
        sage_combine_block(&g->c, k, agg, x->data + k * size, sage_input_block(&g->c, y->data, k),
                           0);
    }
    if (skip > 0)
        memset(y->data + (size_t)(rows - 1) * x->cols, 0, (size_t)x->cols * sizeof(float));
    return y;
}

/* Where node block k's entries of the uncompacted y (its F_i output rows, the zero rows'
 * included) start: the dropout factors are indexed so. */
static size_t sage_keep_row(const sage_level_ctx *c, size_t k)
{
    const sage_samples *s = c->s;
    size_t n = (size_t)s->n;
    return (size_t)c->r * (k / n * (size_t)s->pos[n] + (size_t)s->pos[k % n]);
}

/* The y row that output row j (0 .. 2r) of node block k reads, or -1 for a padding row. */
static long sage_expand_source(const sage_level_ctx *c, size_t k, int j, size_t y_rows)
{
    size_t n = (size_t)c->s->n;
    size_t row0 = k / n * (size_t)c->cpos[n] + (size_t)c->cpos[k % n];
    if (c->s->has[k % n])
        return (long)(row0 + (size_t)j);
    if (j < c->r)
        return -1;
    if (j < c->r + c->skip)
        return (long)y_rows - 1; /* F_i of a zero row */
    return (long)(row0 + (size_t)(j - c->r - c->skip));
}

static void sage_expand_backward(void *ctx, const pb_nn_tensor *out, pb_nn_tensor *const *in,
                                 int n_in)
{
    (void)n_in;
    const sage_level_ctx *c = ctx;
    float *dy = in[0]->grad;
    size_t d = (size_t)c->d, y_rows = (size_t)in[0]->rows;
    for (size_t k = 0; k < (size_t)c->s->n * c->batch; k++) {
        const float *keep = c->keep + sage_keep_row(c, k) * d;
        int has = c->s->has[k % (size_t)c->s->n];
        for (int j = has ? 0 : c->r; j < 2 * c->r; j++) {
            const float *go = out->grad + (2 * (size_t)c->r * k + (size_t)j) * d;
            const float *f = keep + (size_t)(has ? j : j - c->r) * d;
            float *dst = dy + (size_t)sage_expand_source(c, k, j, y_rows) * d;
            for (size_t e = 0; e < d; e++)
                dst[e] += go[e] * f[e];
        }
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

pb_nn_tensor *sage_expand(pb_nn_tape *t, pb_nn_tensor *y, int r, int skip, const sage_samples *s,
                          int batch, float rate, pb_rng *rng)
{
    pb_nn_tensor *in[1] = {y};
    if (!y || !s || r < 1 || skip < 0 || skip >= r || batch < 1 || !(rate < 1.0f))
        return NULL;
    sage_level_ctx *c = pb_nn_alloc(t, sizeof *c);
    int *cpos = sage_compact_pos(t, s, r, skip);
    if (!c || !cpos)
        return NULL;
    size_t d = (size_t)y->cols, per_block = (size_t)r * s->pos[s->n] * d;
    float *keep = pb_nn_alloc(t, per_block * batch * sizeof(float) + 1);
    if (!keep)
        return NULL;
    *c = (sage_level_ctx){r, batch, y->cols, skip, s, cpos, keep};
    if (y->rows != sage_input_rows(c))
        return NULL;
    for (int b = 0; b < batch; b++)
        sage_expand_draw(keep + b * per_block, per_block, rate, &rng[b]);
    pb_nn_tensor *out =
        pb_nn_custom(t, s->n * batch * 2 * r, y->cols, 1, in, sage_expand_backward, c);
    if (!out)
        return NULL;
    size_t y_rows = (size_t)y->rows;
    for (size_t k = 0; k < (size_t)s->n * batch; k++) {
        const float *f = keep + sage_keep_row(c, k) * d;
        int has = s->has[k % (size_t)s->n];
        float *dst = out->data + 2 * (size_t)r * k * d;
        if (!has) {
            memset(dst, 0, (size_t)r * d * sizeof(float));
            dst += (size_t)r * d;
        }
        for (int j = has ? 0 : r; j < 2 * r; j++, dst += d, f += d) {
            const float *src = y->data + (size_t)sage_expand_source(c, k, j, y_rows) * d;
            for (size_t e = 0; e < d; e++)
                dst[e] = src[e] * f[e];
        }
    }
    return out;
}

/* ------------------------------------------------------------------ the forward pass */

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
        /* From level 1 on, the first r/2 rows of a block without samples are the previous
         * level's zero padding: F_i maps them all to F_i(0), computed once. */
        int skip = r / 2;
        pb_nn_tensor *in = sage_gather_combine(t, h, r, skip, s, batch, m->cfg.aggregation);
        pb_nn_tensor *y = pb_nn_mlp_forward(t, p, &m->level[i], in);
        h = sage_expand(t, y, r, skip, s, batch, m->cfg.dropout, rng);
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
