/* tag_gnn.c — TAG's heterogeneous GAT network (specs/tag.md §8.3): encoders, four attention
 * layers over five edge types, and the decoder that scores one op group's actions. */
#include "tag_gnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_GNN_MAX_LAYERS 8
#define TAG_GNN_BN_EPS 1e-3 /* Keras BatchNormalization's default epsilon */
#define TAG_GNN_LEAKY 0.2f

enum { NODE_OP = 0, NODE_DEV = 1 };
enum { ET_LINK = 0, ET_PREV = 1, ET_SUCC = 2, ET_PLACE = 3, ET_SERVE = 4 };

static const int et_src_type[TAG_GNN_EDGE_TYPES] = {NODE_DEV, NODE_OP, NODE_OP, NODE_OP, NODE_DEV};
static const int et_dst_type[TAG_GNN_EDGE_TYPES] = {NODE_DEV, NODE_OP, NODE_OP, NODE_DEV, NODE_OP};
static const int et_features[TAG_GNN_EDGE_TYPES] = {TAG_GNN_LINK_FEATURES, TAG_GNN_PREV_FEATURES,
                                                    TAG_GNN_PREV_FEATURES, TAG_GNN_PLACE_FEATURES,
                                                    TAG_GNN_PLACE_FEATURES};
static const char *const et_name[TAG_GNN_EDGE_TYPES] = {"link", "prev", "succ", "place", "serve"};

typedef struct gnn_dense {
    int w, b; /* b = -1: no bias */
} gnn_dense;

/* BatchNorm in inference mode: gamma, beta trainable; mean, var statistics never updated (the
 * reference never trains BatchNorm's statistics, §8.3). */
typedef struct gnn_bn {
    int gamma, beta, mean, var;
} gnn_bn;

typedef struct gnn_gat {
    int fc_src, fc_dst, attn_l, attn_r;
    gnn_bn bn_src, bn_dst;
} gnn_gat;

struct tag_gnn {
    tag_gnn_options o;
    pb_nn_params *p;
    pb_nn_tape *tape; /* the priors' tape (no gradients) */
    gnn_dense enc_node[2], enc_edge[TAG_GNN_EDGE_TYPES];
    gnn_bn bn_node[2], bn_edge[TAG_GNN_EDGE_TYPES];
    gnn_gat gat[TAG_GNN_MAX_LAYERS][TAG_GNN_EDGE_TYPES];
    gnn_dense update[TAG_GNN_MAX_LAYERS][2];
    gnn_dense dec_dev1, dec_dev2, dec_hidden, dec_out;
    tag_gnn_features feat; /* the prior hook's input */
};

void tag_gnn_options_default(tag_gnn_options *o)
{
    *o = (tag_gnn_options){.hidden = 256,
                           .edge_hidden = 64,
                           .heads = 4,
                           .layers = 4,
                           .gamma = 0,
                           .float_utilisation = 0,
                           .tensor_edge_features = 0,
                           .n_comm = TAG_GNN_COMM_REFERENCE};
}

/* --- parameters */

typedef struct gnn_builder {
    pb_nn_params *p;
    pb_rng rng;
    pb_error *err;
    int failed;
} gnn_builder;

static int gnn_add(gnn_builder *b, const char *name, int rows, int cols, int init)
{
    if (b->failed)
        return -1;
    int id = pb_nn_params_add(b->p, name, rows, cols, init, &b->rng, b->err);
    if (id < 0)
        b->failed = 1;
    return id;
}

static gnn_dense gnn_add_dense(gnn_builder *b, const char *prefix, int in, int out, int bias)
{
    char name[96];
    snprintf(name, sizeof name, "%s/w", prefix);
    gnn_dense d = {gnn_add(b, name, in, out, PB_NN_INIT_GLOROT), -1};
    if (bias) {
        snprintf(name, sizeof name, "%s/b", prefix);
        d.b = gnn_add(b, name, 1, out, PB_NN_INIT_ZEROS);
    }
    return d;
}

static gnn_bn gnn_add_bn(gnn_builder *b, const char *prefix, int width)
{
    char name[96];
    gnn_bn n;
    snprintf(name, sizeof name, "%s/bn_gamma", prefix);
    n.gamma = gnn_add(b, name, 1, width, PB_NN_INIT_ONES);
    snprintf(name, sizeof name, "%s/bn_beta", prefix);
    n.beta = gnn_add(b, name, 1, width, PB_NN_INIT_ZEROS);
    snprintf(name, sizeof name, "%s/bn_mean", prefix);
    n.mean = gnn_add(b, name, 1, width, PB_NN_INIT_ZEROS);
    snprintf(name, sizeof name, "%s/bn_var", prefix);
    n.var = gnn_add(b, name, 1, width, PB_NN_INIT_ONES);
    return n;
}

static int gnn_check_options(const tag_gnn_options *o, pb_error *err)
{
    if (o->hidden < 1 || o->edge_hidden < 1 || o->heads < 1 || o->layers < 1 ||
        o->layers > TAG_GNN_MAX_LAYERS || o->n_comm < TAG_GNN_COMM_REFERENCE ||
        o->n_comm > TAG_GNN_COMM_MAX)
        return pb_errorf(err,
                         "tag GNN: hidden %d, edge_hidden %d, heads %d, layers %d, n_comm %d: each "
                         "must be >= 1, layers <= %d, n_comm 3 or 4",
                         o->hidden, o->edge_hidden, o->heads, o->layers, o->n_comm,
                         TAG_GNN_MAX_LAYERS);
    return PB_OK;
}

/* Adds every tensor in the order of §8.3 (encoders, layers, decoder). */
static void gnn_build(tag_gnn *n, gnn_builder *b)
{
    const tag_gnn_options *o = &n->o;
    int H = o->hidden, EH = o->edge_hidden, wide = o->heads * o->hidden;
    n->enc_node[NODE_OP] = gnn_add_dense(b, "enc/op", TAG_GNN_OP_FEATURES_BASE + o->n_comm, H, 1);
    n->bn_node[NODE_OP] = gnn_add_bn(b, "enc/op", H);
    n->enc_node[NODE_DEV] = gnn_add_dense(b, "enc/device", TAG_GNN_DEV_FEATURES, H, 1);
    n->bn_node[NODE_DEV] = gnn_add_bn(b, "enc/device", H);
    char prefix[64];
    for (int r = 0; r < TAG_GNN_EDGE_TYPES; r++) {
        snprintf(prefix, sizeof prefix, "enc/%s", et_name[r]);
        n->enc_edge[r] = gnn_add_dense(b, prefix, et_features[r], EH, 1);
        n->bn_edge[r] = gnn_add_bn(b, prefix, EH);
    }
    for (int l = 0; l < o->layers; l++) {
        for (int r = 0; r < TAG_GNN_EDGE_TYPES; r++) {
            gnn_gat *g = &n->gat[l][r];
            snprintf(prefix, sizeof prefix, "gat%d/%s/fc_src", l, et_name[r]);
            g->fc_src = gnn_add_dense(b, prefix, H + EH, wide, 0).w;
            g->bn_src = gnn_add_bn(b, prefix, wide);
            snprintf(prefix, sizeof prefix, "gat%d/%s/fc_dst", l, et_name[r]);
            g->fc_dst = gnn_add_dense(b, prefix, H, wide, 0).w;
            g->bn_dst = gnn_add_bn(b, prefix, wide);
            snprintf(prefix, sizeof prefix, "gat%d/%s/attn_l", l, et_name[r]);
            g->attn_l = gnn_add(b, prefix, 1, wide, PB_NN_INIT_GLOROT);
            snprintf(prefix, sizeof prefix, "gat%d/%s/attn_r", l, et_name[r]);
            g->attn_r = gnn_add(b, prefix, 1, wide, PB_NN_INIT_GLOROT);
        }
        snprintf(prefix, sizeof prefix, "gat%d/update/op", l);
        n->update[l][NODE_OP] = gnn_add_dense(b, prefix, wide, H, 1);
        snprintf(prefix, sizeof prefix, "gat%d/update/device", l);
        n->update[l][NODE_DEV] = gnn_add_dense(b, prefix, wide, H, 1);
    }
    n->dec_dev1 = gnn_add_dense(b, "dec/device1", H + 1, H, 1);
    n->dec_dev2 = gnn_add_dense(b, "dec/device2", H, H, 1);
    n->dec_hidden = gnn_add_dense(b, "dec/hidden", 2 * H + o->n_comm, H, 1);
    n->dec_out = gnn_add_dense(b, "dec/out", H, 1, 1);
}

tag_gnn *tag_gnn_new(const tag_gnn_options *o, uint64_t seed, pb_error *err)
{
    if (gnn_check_options(o, err) != PB_OK)
        return NULL;
    tag_gnn *n = calloc(1, sizeof *n);
    if (!n) {
        pb_errorf(err, "tag GNN: out of memory");
        return NULL;
    }
    n->o = *o;
    n->p = pb_nn_params_new();
    n->tape = pb_nn_tape_new();
    if (!n->p || !n->tape) {
        pb_errorf(err, "tag GNN: out of memory");
        tag_gnn_free(n);
        return NULL;
    }
    gnn_builder b = {.p = n->p, .err = err};
    pb_rng_seed(&b.rng, seed);
    gnn_build(n, &b);
    if (b.failed) {
        tag_gnn_free(n);
        return NULL;
    }
    return n;
}

void tag_gnn_free(tag_gnn *n)
{
    if (!n)
        return;
    pb_nn_params_free(n->p);
    pb_nn_tape_free(n->tape);
    tag_gnn_features_free(&n->feat);
    free(n);
}

pb_nn_params *tag_gnn_params(tag_gnn *n)
{
    return n->p;
}

tag_gnn_features *tag_gnn_hook_features(tag_gnn *n)
{
    return &n->feat;
}

const tag_gnn_options *tag_gnn_get_options(const tag_gnn *n)
{
    return &n->o;
}

/* --- forward */

static pb_nn_tensor *gnn_dense_fwd(pb_nn_tape *t, tag_gnn *n, gnn_dense d, pb_nn_tensor *x, int act)
{
    return pb_nn_linear(t, x, pb_nn_param(t, n->p, d.w),
                        d.b >= 0 ? pb_nn_param(t, n->p, d.b) : NULL, act);
}

/* gamma (x - mean) / sqrt(var + eps) + beta, folded as x * g' + b' so that two full-size ops
 * run; the statistics enter as constants (no gradient). */
static pb_nn_tensor *gnn_bn_fwd(pb_nn_tape *t, tag_gnn *n, gnn_bn bn, pb_nn_tensor *x)
{
    if (!x)
        return NULL;
    pb_nn_tensor *mean = pb_nn_param(t, n->p, bn.mean), *var = pb_nn_param(t, n->p, bn.var);
    if (!mean || !var)
        return NULL;
    pb_nn_tensor *inv = pb_nn_constant(t, 1, var->cols, NULL);
    pb_nn_tensor *neg_mean = pb_nn_constant(t, 1, mean->cols, NULL);
    if (!inv || !neg_mean)
        return NULL;
    for (int j = 0; j < var->cols; j++) {
        inv->data[j] = (float)(1.0 / sqrt((double)var->data[j] + TAG_GNN_BN_EPS));
        neg_mean->data[j] = -mean->data[j];
    }
    pb_nn_tensor *g = pb_nn_mul(t, pb_nn_param(t, n->p, bn.gamma), inv);
    pb_nn_tensor *shift = pb_nn_add(t, pb_nn_param(t, n->p, bn.beta), pb_nn_mul(t, g, neg_mean));
    return pb_nn_add(t, pb_nn_mul(t, x, g), shift);
}

/* The edges of one type: source and destination node indices, and the CSR of each destination's
 * incoming edges (in edge order). */
typedef struct gnn_edges {
    int n;
    int *src, *dst;
    int *start, *index;
    pb_nn_tensor *feat; /* n x features */
} gnn_edges;

/* Fills e's arrays on the tape; 0 on failure (recorded in the tape). */
static int gnn_edges_make(pb_nn_tape *t, const tag_gnn_input *in, int r, gnn_edges *e)
{
    int G = in->n_groups, T = in->n_tasks;
    int n = r == ET_LINK ? in->n_link : (r == ET_PREV || r == ET_SUCC) ? in->n_prev : G * T;
    int n_dst = et_dst_type[r] == NODE_OP ? G : T;
    e->n = n;
    e->src = pb_nn_alloc(t, (size_t)(n + 1) * sizeof(int));
    e->dst = pb_nn_alloc(t, (size_t)(n + 1) * sizeof(int));
    e->start = pb_nn_alloc(t, (size_t)(n_dst + 2) * sizeof(int));
    e->index = pb_nn_alloc(t, (size_t)(n + 1) * sizeof(int));
    if (!e->src || !e->dst || !e->start || !e->index)
        return 0;
    const float *feat = r == ET_LINK                     ? in->link_feat
                        : (r == ET_PREV || r == ET_SUCC) ? in->prev_feat
                                                         : in->place_feat;
    for (int k = 0; k < n; k++) {
        switch (r) {
        case ET_LINK:
            e->src[k] = in->link_src[k], e->dst[k] = in->link_dst[k];
            break;
        case ET_PREV:
            e->src[k] = in->prev_src[k], e->dst[k] = in->prev_dst[k];
            break;
        case ET_SUCC:
            e->src[k] = in->prev_dst[k], e->dst[k] = in->prev_src[k];
            break;
        case ET_PLACE:
            e->src[k] = k / T, e->dst[k] = k % T;
            break;
        default:
            e->src[k] = k % T, e->dst[k] = k / T;
            break;
        }
    }
    memset(e->start, 0, (size_t)(n_dst + 2) * sizeof(int));
    for (int k = 0; k < n; k++)
        e->start[e->dst[k] + 2]++;
    for (int v = 0; v < n_dst; v++)
        e->start[v + 2] += e->start[v + 1];
    for (int k = 0; k < n; k++)
        e->index[e->start[e->dst[k] + 1]++] = k;
    e->feat = n > 0 ? pb_nn_constant(t, n, et_features[r], feat) : NULL;
    return n == 0 || e->feat != NULL;
}

/* One edge type of one layer: the attention-weighted messages arriving at each destination. */
static pb_nn_tensor *gnn_gat_fwd(pb_nn_tape *t, tag_gnn *n, const gnn_gat *g, const gnn_edges *e,
                                 pb_nn_tensor *h_src, pb_nn_tensor *h_dst, pb_nn_tensor *e_emb)
{
    /* concat(h_src[src], e) . W computed as (h_src . W_top)[src] + e . W_bot: the same sum, with
     * the wide product over the source nodes instead of the (more numerous) edges. */
    pb_nn_tensor *w = pb_nn_param(t, n->p, g->fc_src);
    int H = n->o.hidden;
    pb_nn_tensor *from_node = pb_nn_matmul(t, h_src, pb_nn_rows(t, w, 0, H));
    pb_nn_tensor *from_edge = pb_nn_matmul(t, e_emb, pb_nn_rows(t, w, H, n->o.edge_hidden));
    pb_nn_tensor *m = gnn_bn_fwd(
        t, n, g->bn_src, pb_nn_add(t, pb_nn_gather_rows(t, from_node, e->src, e->n), from_edge));
    pb_nn_tensor *hd =
        gnn_bn_fwd(t, n, g->bn_dst, pb_nn_matmul(t, h_dst, pb_nn_param(t, n->p, g->fc_dst)));
    pb_nn_tensor *el = pb_nn_head_dot(t, m, pb_nn_param(t, n->p, g->attn_l), n->o.heads);
    pb_nn_tensor *er = pb_nn_head_dot(t, hd, pb_nn_param(t, n->p, g->attn_r), n->o.heads);
    pb_nn_tensor *score = pb_nn_leaky_relu(
        t, pb_nn_add(t, el, pb_nn_gather_rows(t, er, e->dst, e->n)), TAG_GNN_LEAKY);
    pb_nn_csr csr = {h_dst ? h_dst->rows : 0, e->start, e->index, NULL};
    return pb_nn_attend(t, m, pb_nn_segment_softmax(t, score, &csr), &csr);
}

static int gnn_indices_ok(const char *what, const int *v, int n, int bound, pb_error *err)
{
    for (int i = 0; i < n; i++)
        if (v[i] < 0 || v[i] >= bound)
            return pb_errorf(err, "tag GNN input: %s[%d] = %d is not in [0, %d)", what, i, v[i],
                             bound);
    return PB_OK;
}

int tag_gnn_input_check(const tag_gnn_input *in, pb_error *err)
{
    if (!in || in->n_groups < 1 || in->n_tasks < 1 || in->n_cand < 1 || in->n_link < 0 ||
        in->n_prev < 0)
        return pb_errorf(err, "tag GNN input: needs >= 1 op group, device group and candidate");
    if (in->n_comm < TAG_GNN_COMM_REFERENCE || in->n_comm > TAG_GNN_COMM_MAX)
        return pb_errorf(err, "tag GNN input: n_comm %d is not 3 or 4", in->n_comm);
    if (in->group < 0 || in->group >= in->n_groups)
        return pb_errorf(err, "tag GNN input: group %d is not in [0, %d)", in->group, in->n_groups);
    if (!in->op_feat || !in->dev_feat || !in->place_feat || !in->cand_placed || !in->cand_comm ||
        (in->n_link > 0 && (!in->link_src || !in->link_dst || !in->link_feat)) ||
        (in->n_prev > 0 && (!in->prev_src || !in->prev_dst || !in->prev_feat)))
        return pb_errorf(err, "tag GNN input: a feature or edge array is missing");
    for (int c = 0; c < in->n_cand; c++)
        if (in->cand_comm[c] < 0 || in->cand_comm[c] >= in->n_comm)
            return pb_errorf(err, "tag GNN input: cand_comm[%d] = %d is not a TAG_COMM_* option", c,
                             in->cand_comm[c]);
    if (gnn_indices_ok("link_src", in->link_src, in->n_link, in->n_tasks, err) != PB_OK ||
        gnn_indices_ok("link_dst", in->link_dst, in->n_link, in->n_tasks, err) != PB_OK ||
        gnn_indices_ok("prev_src", in->prev_src, in->n_prev, in->n_groups, err) != PB_OK ||
        gnn_indices_ok("prev_dst", in->prev_dst, in->n_prev, in->n_groups, err) != PB_OK)
        return PB_ERR;
    return PB_OK;
}

/* The decoder (§8.3): per candidate, an MLP over each task's embedding and placed bit, the mean
 * over tasks, then an MLP over [that mean, the group's embedding, the comm one-hot]. */
static pb_nn_tensor *gnn_decode(pb_nn_tape *t, tag_gnn *n, const tag_gnn_input *in,
                                pb_nn_tensor *h_op, pb_nn_tensor *h_dev)
{
    int C = in->n_cand, T = in->n_tasks;
    int *task_rows = pb_nn_alloc(t, (size_t)C * (size_t)T * sizeof(int));
    int *group_rows = pb_nn_alloc(t, (size_t)C * sizeof(int));
    int *seg = pb_nn_alloc(t, (size_t)(C + 1) * sizeof(int));
    pb_nn_tensor *placed = pb_nn_constant(t, C * T, 1, NULL);
    pb_nn_tensor *comm = pb_nn_constant(t, C, in->n_comm, NULL);
    if (!task_rows || !group_rows || !seg || !placed || !comm)
        return NULL;
    for (int c = 0; c < C; c++) {
        for (int k = 0; k < T; k++) {
            task_rows[c * T + k] = k;
            placed->data[c * T + k] =
                in->cand_placed[(size_t)c * (size_t)T + (size_t)k] ? 1.0f : 0.0f;
        }
        group_rows[c] = in->group;
        seg[c] = c * T;
        comm->data[c * in->n_comm + in->cand_comm[c]] = 1.0f;
    }
    seg[C] = C * T;
    /* tanh(concat(E_dev[t], P_t) . W + b) as tanh((E_dev . W_top)[t] + P_t W_bot + b): the wide
     * product once per device group, not once per (candidate, device group). */
    pb_nn_tensor *w1 = pb_nn_param(t, n->p, n->dec_dev1.w);
    pb_nn_tensor *per_task = pb_nn_matmul(t, h_dev, pb_nn_rows(t, w1, 0, n->o.hidden));
    pb_nn_tensor *hd = pb_nn_add(t, pb_nn_gather_rows(t, per_task, task_rows, C * T),
                                 pb_nn_matmul(t, placed, pb_nn_rows(t, w1, n->o.hidden, 1)));
    hd = pb_nn_tanh(t, pb_nn_add(t, hd, pb_nn_param(t, n->p, n->dec_dev1.b)));
    hd = gnn_dense_fwd(t, n, n->dec_dev2, hd, PB_NN_ACT_TANH);
    pb_nn_csr per_cand = {C, seg, NULL, NULL};
    pb_nn_tensor *z_in[3] = {pb_nn_aggregate(t, hd, &per_cand, PB_NN_AGG_MEAN),
                             pb_nn_gather_rows(t, h_op, group_rows, C), comm};
    pb_nn_tensor *z =
        gnn_dense_fwd(t, n, n->dec_hidden, pb_nn_concat_cols(t, 3, z_in), PB_NN_ACT_TANH);
    pb_nn_tensor *score = gnn_dense_fwd(t, n, n->dec_out, z, PB_NN_ACT_NONE);
    return pb_nn_log_softmax(t, pb_nn_reshape(t, score, 1, C));
}

pb_nn_tensor *tag_gnn_forward(tag_gnn *n, pb_nn_tape *t, const tag_gnn_input *in, pb_error *err)
{
    if (tag_gnn_input_check(in, err) != PB_OK)
        return NULL;
    if (in->n_comm != n->o.n_comm) {
        pb_errorf(err, "tag GNN: the input has %d comm options, the network %d", in->n_comm,
                  n->o.n_comm);
        return NULL;
    }
    const tag_gnn_options *o = &n->o;
    int G = in->n_groups, T = in->n_tasks;
    pb_nn_tensor *h[2];
    h[NODE_OP] = gnn_bn_fwd(
        t, n, n->bn_node[NODE_OP],
        gnn_dense_fwd(t, n, n->enc_node[NODE_OP],
                      pb_nn_constant(t, G, TAG_GNN_OP_FEATURES_BASE + in->n_comm, in->op_feat),
                      PB_NN_ACT_TANH));
    h[NODE_DEV] = gnn_bn_fwd(t, n, n->bn_node[NODE_DEV],
                             gnn_dense_fwd(t, n, n->enc_node[NODE_DEV],
                                           pb_nn_constant(t, T, TAG_GNN_DEV_FEATURES, in->dev_feat),
                                           PB_NN_ACT_TANH));
    gnn_edges e[TAG_GNN_EDGE_TYPES];
    pb_nn_tensor *e_emb[TAG_GNN_EDGE_TYPES] = {0};
    for (int r = 0; r < TAG_GNN_EDGE_TYPES; r++) {
        if (!gnn_edges_make(t, in, r, &e[r]))
            return NULL;
        if (e[r].n > 0)
            e_emb[r] = gnn_bn_fwd(t, n, n->bn_edge[r],
                                  gnn_dense_fwd(t, n, n->enc_edge[r], e[r].feat, PB_NN_ACT_TANH));
    }
    /* Edge types entering each node type: op <- prev, succ, serve; device <- link, place. */
    const int n_types[2] = {3, 2};
    for (int l = 0; l < o->layers; l++) {
        pb_nn_tensor *acc[2] = {NULL, NULL};
        for (int r = 0; r < TAG_GNN_EDGE_TYPES; r++) {
            if (e[r].n == 0)
                continue; /* no messages: contributes zeros to the mean */
            int s = et_src_type[r], d = et_dst_type[r];
            pb_nn_tensor *out = gnn_gat_fwd(t, n, &n->gat[l][r], &e[r], h[s], h[d], e_emb[r]);
            if (o->gamma && s != d)
                out = pb_nn_scale(t, out, 0.1f);
            acc[d] = acc[d] ? pb_nn_add(t, acc[d], out) : out;
        }
        pb_nn_tensor *next[2];
        for (int d = 0; d < 2; d++) {
            pb_nn_tensor *agg = acc[d] ? pb_nn_scale(t, acc[d], 1.0f / (float)n_types[d])
                                       : pb_nn_constant(t, h[d]->rows, o->heads * o->hidden, NULL);
            int act = l + 1 < o->layers ? PB_NN_ACT_TANH : PB_NN_ACT_NONE;
            next[d] = pb_nn_add(t, h[d], gnn_dense_fwd(t, n, n->update[l][d], agg, act));
        }
        h[0] = next[0];
        h[1] = next[1];
        if (!h[0] || !h[1])
            return NULL;
    }
    return gnn_decode(t, n, in, h[NODE_OP], h[NODE_DEV]);
}

int tag_gnn_priors(tag_gnn *n, const tag_gnn_input *in, float *prior, pb_error *err)
{
    pb_nn_tape_reset(n->tape, 0);
    pb_nn_tensor *y = tag_gnn_forward(n, n->tape, in, err);
    if (!y || pb_nn_tape_status(n->tape, err) != PB_OK)
        return PB_ERR;
    for (int c = 0; c < in->n_cand; c++)
        prior[c] = expf(y->data[c]);
    return PB_OK;
}
