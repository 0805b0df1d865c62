/* gdp_net.c — the GDP placer's units, sequence order, features and network (specs/gdp.md §1-§5).
 *
 * Departures forced by the harness's graph model, and why:
 * - Output shapes (§2) are not part of pb_graph, only bytes per output port; shape slot 5p of
 *   port p < 5 holds log2(1 + bytes)/32 and the other four axes stay 0.
 * - Pinned ops do not exist in the placer's graph (every node may go to every device of the
 *   cluster), so nothing is removed from the sequence.
 */
#include "gdp_net.h"

#include "baechi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The global op-type vocabulary (§2: one index shared by every graph, so that parameters
 * transfer): sorted for bsearch; the one-hot slot of a type is its index + 1, slot 0 is
 * "unknown".  Appending a type changes the feature width and so the parameter files. */
static const char *const gdp_vocabulary[] = {"Add",
                                             "AddN",
                                             "AddV2",
                                             "ApplyAdam",
                                             "ApplyGradientDescent",
                                             "ApplyMomentum",
                                             "ApplyRMSProp",
                                             "Assign",
                                             "AssignAdd",
                                             "AssignSub",
                                             "AvgPool",
                                             "AvgPoolGrad",
                                             "BatchMatMulV2",
                                             "BiasAdd",
                                             "BiasAddGrad",
                                             "BroadcastGradientArgs",
                                             "Cast",
                                             "ConcatOffset",
                                             "ConcatV2",
                                             "Const",
                                             "Conv2D",
                                             "Conv2DBackpropFilter",
                                             "Conv2DBackpropInput",
                                             "DepthwiseConv2dNative",
                                             "DepthwiseConv2dNativeBackpropFilter",
                                             "DepthwiseConv2dNativeBackpropInput",
                                             "DynamicStitch",
                                             "Equal",
                                             "Erf",
                                             "Exp",
                                             "ExpandDims",
                                             "Fill",
                                             "Floor",
                                             "FloorDiv",
                                             "FloorMod",
                                             "FusedBatchNorm",
                                             "FusedBatchNormGrad",
                                             "GatherV2",
                                             "Greater",
                                             "GreaterEqual",
                                             "Identity",
                                             "InvertPermutation",
                                             "IteratorGetNext",
                                             "L2Loss",
                                             "Less",
                                             "Log",
                                             "Log1p",
                                             "LogSoftmax",
                                             "MatMul",
                                             "Max",
                                             "MaxPool",
                                             "MaxPoolGrad",
                                             "Maximum",
                                             "Mean",
                                             "Min",
                                             "Minimum",
                                             "Mul",
                                             "Neg",
                                             "NoOp",
                                             "OneHot",
                                             "Pack",
                                             "Pad",
                                             "Placeholder",
                                             "Pow",
                                             "PreventGradient",
                                             "Prod",
                                             "RandomUniform",
                                             "Range",
                                             "RealDiv",
                                             "Reciprocal",
                                             "Relu",
                                             "ReluGrad",
                                             "Reshape",
                                             "ReverseSequence",
                                             "Rsqrt",
                                             "RsqrtGrad",
                                             "Select",
                                             "Shape",
                                             "ShapeN",
                                             "Sigmoid",
                                             "SigmoidGrad",
                                             "Size",
                                             "Slice",
                                             "Softmax",
                                             "SoftmaxCrossEntropyWithLogits",
                                             "SparseSoftmaxCrossEntropyWithLogits",
                                             "Split",
                                             "SplitV",
                                             "Sqrt",
                                             "Square",
                                             "SquaredDifference",
                                             "Squeeze",
                                             "StopGradient",
                                             "StridedSlice",
                                             "StridedSliceGrad",
                                             "Sub",
                                             "Sum",
                                             "Tanh",
                                             "TanhGrad",
                                             "Tile",
                                             "Transpose",
                                             "TruncatedNormal",
                                             "Unpack",
                                             "UnsortedSegmentSum",
                                             "VariableV2",
                                             "ZerosLike"};

#define GDP_VOCAB_SIZE ((int)(sizeof gdp_vocabulary / sizeof gdp_vocabulary[0]))

static int gdp_vocab_cmp(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

int gdp_type_index(const char *type)
{
    if (!type)
        return 0;
    const char *const *hit = bsearch(type, gdp_vocabulary, (size_t)GDP_VOCAB_SIZE,
                                     sizeof gdp_vocabulary[0], gdp_vocab_cmp);
    return hit ? (int)(hit - gdp_vocabulary) + 1 : 0;
}

int gdp_feature_dim(const gdp_net_config *cfg)
{
    return GDP_VOCAB_SIZE + 1 + GDP_SHAPE_SLOTS + GDP_ADJ_SLOTS + (cfg->extra_features ? 2 : 0);
}

/* ------------------------------------------------------------------ units and order */

/* unit_of and the sequence: one unit per colocation class (contract) or per node. */
static int gdp_units(gdp_graph *gg, const int *topo, int contract, int **first_out, pb_error *err)
{
    const pb_graph *g = gg->g;
    int n = g->n_nodes, max_class = -1;
    const int *cls = contract ? g->colocation : NULL;
    for (int v = 0; cls && v < n; v++)
        if (cls[v] > max_class)
            max_class = cls[v];
    int *class_unit = malloc((size_t)(max_class + 2) * sizeof *class_unit);
    int *first = malloc((size_t)n * sizeof *first + 1);
    if (!class_unit || !first) {
        free(class_unit);
        free(first);
        return pb_errorf(err, "gdp: out of memory");
    }
    for (int c = 0; c <= max_class; c++)
        class_unit[c] = -1;
    int nu = 0;
    for (int i = 0; i < n; i++) {
        int v = topo[i];
        if (cls && cls[v] >= 0 && class_unit[cls[v]] >= 0) {
            gg->unit_of[v] = class_unit[cls[v]];
            continue;
        }
        if (cls && cls[v] >= 0)
            class_unit[cls[v]] = nu;
        first[nu] = v;
        gg->unit_of[v] = nu++;
    }
    free(class_unit);
    gg->n_units = nu;
    *first_out = first;
    return PB_OK;
}

/* Leaders (first member of each class in sequence order) for leader and penalize modes. */
static void gdp_leaders(gdp_graph *gg, const int *topo, int mode)
{
    const pb_graph *g = gg->g;
    int n = g->n_nodes, max_class = -1;
    for (int v = 0; v < n; v++)
        gg->leader[v] = v;
    if (!g->colocation || mode == GDP_COLOC_CONTRACT)
        return;
    for (int v = 0; v < n; v++)
        if (g->colocation[v] > max_class)
            max_class = g->colocation[v];
    int *lead = malloc((size_t)(max_class + 1) * sizeof *lead + 1);
    if (!lead)
        return; /* leaders stay themselves: only leader mode loses its overrides */
    for (int c = 0; c <= max_class; c++)
        lead[c] = -1;
    for (int i = 0; i < n; i++) {
        int v = topo[i], c = g->colocation[v];
        if (c < 0)
            continue;
        if (lead[c] < 0)
            lead[c] = v;
        if (mode == GDP_COLOC_LEADER)
            gg->leader[v] = lead[c];
    }
    free(lead);
}

/* Neighbourhoods over units: the unit edges in the order a walk of the nodes in sequence order
 * meets them, duplicates merged.  Also fills the adjacency-id features (HDP layout, §2). */
static int gdp_neighbours(gdp_graph *gg, const int *topo, int dir, float *adj, int adj_stride,
                          pb_error *err)
{
    const pb_graph *g = gg->g;
    int nu = gg->n_units, n = g->n_nodes;
    int *cnt = calloc((size_t)nu + 1, sizeof *cnt), *stamp = malloc((size_t)nu * sizeof *stamp + 1);
    int *adj_n = calloc((size_t)nu + 1, sizeof *adj_n);
    gg->nbr_all_start = calloc((size_t)nu + 1, sizeof *gg->nbr_all_start);
    if (!cnt || !stamp || !adj_n || !gg->nbr_all_start) {
        free(cnt);
        free(stamp);
        free(adj_n);
        return pb_errorf(err, "gdp: out of memory");
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (int u = 0; u < nu; u++)
                gg->nbr_all_start[u + 1] = gg->nbr_all_start[u] + cnt[u];
            gg->nbr_all = malloc((size_t)gg->nbr_all_start[nu] * sizeof *gg->nbr_all + 1);
            if (!gg->nbr_all)
                break;
            memset(cnt, 0, (size_t)nu * sizeof *cnt);
        }
        for (int i = 0; i < n; i++) {
            int v = topo[i], uv = gg->unit_of[v];
            for (int k = g->succ_start[v]; k < g->succ_start[v + 1]; k++) {
                int uw = gg->unit_of[g->succ[k]];
                if (uw == uv)
                    continue;
                if (pass == 1 && adj && adj_n[uv] < GDP_ADJ_SLOTS / 2) { /* (id, +1) to uv */
                    float *row = adj + (size_t)uv * (size_t)adj_stride;
                    row[2 * adj_n[uv]] = (float)uw / (float)nu;
                    row[2 * adj_n[uv]++ + 1] = 1;
                }
                if (pass == 1 && adj && adj_n[uw] < GDP_ADJ_SLOTS / 2) { /* (id, -1) to uw */
                    float *row = adj + (size_t)uw * (size_t)adj_stride;
                    row[2 * adj_n[uw]] = (float)uv / (float)nu;
                    row[2 * adj_n[uw]++ + 1] = -1;
                }
                if (dir != GDP_DIR_IN) { /* uw is a successor of uv */
                    if (pass == 1)
                        gg->nbr_all[gg->nbr_all_start[uv] + cnt[uv]] = uw;
                    cnt[uv]++;
                }
                if (dir != GDP_DIR_OUT) {
                    if (pass == 1)
                        gg->nbr_all[gg->nbr_all_start[uw] + cnt[uw]] = uv;
                    cnt[uw]++;
                }
            }
        }
    }
    free(adj_n);
    free(cnt);
    if (!gg->nbr_all) {
        free(stamp);
        return pb_errorf(err, "gdp: out of memory");
    }
    /* Merge duplicates in place, keeping first occurrences. */
    for (int u = 0; u < nu; u++)
        stamp[u] = -1;
    int w = 0;
    for (int u = 0; u < nu; u++) {
        int s = gg->nbr_all_start[u], e = gg->nbr_all_start[u + 1];
        gg->nbr_all_start[u] = w;
        for (int k = s; k < e; k++) {
            int x = gg->nbr_all[k];
            if (stamp[x] == u)
                continue;
            stamp[x] = u;
            gg->nbr_all[w++] = x;
        }
    }
    gg->nbr_all_start[nu] = w;
    free(stamp);
    return PB_OK;
}

void gdp_graph_resample(gdp_graph *gg, int knn, pb_rng *rng)
{
    int nu = gg->n_units, w = 0;
    for (int u = 0; u < nu; u++) {
        int s = gg->nbr_all_start[u], deg = gg->nbr_all_start[u + 1] - s;
        gg->nbr_start[u] = w;
        if (deg <= knn) {
            memcpy(gg->nbr + w, gg->nbr_all + s, (size_t)deg * sizeof(int));
            w += deg;
            continue;
        }
        /* knn distinct neighbours, uniformly: partial Fisher-Yates over a copy. */
        int *pick = gg->nbr + w;
        int tmp[64];
        int *pool = deg <= 64 ? tmp : malloc((size_t)deg * sizeof *pool);
        if (!pool) { /* keep the first knn: a fallback that stays deterministic */
            memcpy(pick, gg->nbr_all + s, (size_t)knn * sizeof(int));
            w += knn;
            continue;
        }
        memcpy(pool, gg->nbr_all + s, (size_t)deg * sizeof(int));
        for (int i = 0; i < knn; i++) {
            int j = i + (int)pb_rng_below(rng, (uint64_t)(deg - i));
            int t = pool[i];
            pool[i] = pool[j];
            pool[j] = t;
            pick[i] = pool[i];
        }
        if (pool != tmp)
            free(pool);
        w += knn;
    }
    gg->nbr_start[nu] = w;
}

static float gdp_log_size(double x)
{
    return x > 0 ? (float)(log2(1 + x) / 32) : 0;
}

static void gdp_features(gdp_graph *gg, const int *first, const gdp_net_config *cfg)
{
    const pb_graph *g = gg->g;
    int fd = gg->fdim, adj_at = GDP_VOCAB_SIZE + 1 + GDP_SHAPE_SLOTS;
    for (int u = 0; u < gg->n_units; u++) {
        int v = first[u];
        float *row = gg->x + (size_t)u * (size_t)fd;
        row[gdp_type_index(g->node_type ? g->node_type[v] : NULL)] = 1;
        for (int p = 0; p < 5 && g->port_start && g->port_start[v] + p < g->port_start[v + 1]; p++)
            row[GDP_VOCAB_SIZE + 1 + 5 * p] = gdp_log_size(g->port_bytes[g->port_start[v] + p]);
        if (cfg->extra_features) {
            row[adj_at + GDP_ADJ_SLOTS] = gdp_log_size(g->out_bytes ? g->out_bytes[v] : 0);
            row[adj_at + GDP_ADJ_SLOTS + 1] = gdp_log_size(g->cost_us ? g->cost_us[v] : 0);
        }
    }
}

int gdp_graph_prepare(gdp_graph *gg, const pb_graph *g, const gdp_net_config *cfg, pb_rng *rng,
                      pb_error *err)
{
    memset(gg, 0, sizeof *gg);
    gg->g = g;
    int n = gg->n_nodes = g->n_nodes;
    if (n < 1)
        return pb_errorf(err, "gdp: graph '%s' has no nodes", g->name ? g->name : "?");
    int *topo = malloc((size_t)n * sizeof *topo), *first = NULL;
    gg->unit_of = malloc((size_t)n * sizeof *gg->unit_of);
    gg->leader = malloc((size_t)n * sizeof *gg->leader);
    if (!topo || !gg->unit_of || !gg->leader) {
        free(topo);
        return pb_errorf(err, "gdp: out of memory");
    }
    /* grappler's topological order (§1): Kahn with a FIFO queue seeded with the sources in
     * insertion order, fan-outs appended in fan-out order, which is Baechi's topo_order. */
    int rc = baechi_topo_order(g, topo, NULL, err);
    if (!rc)
        rc = gdp_units(gg, topo, cfg->colocation == GDP_COLOC_CONTRACT, &first, err);
    if (rc) {
        free(topo);
        return rc;
    }
    gdp_leaders(gg, topo, cfg->colocation);
    gg->fdim = gdp_feature_dim(cfg);
    int nu = gg->n_units;
    gg->x = calloc((size_t)nu * (size_t)gg->fdim, sizeof *gg->x);
    gg->weight = malloc((size_t)nu * sizeof *gg->weight);
    if (!gg->x || !gg->weight) {
        free(topo);
        free(first);
        return pb_errorf(err, "gdp: out of memory");
    }
    gg->n_loss = 0;
    for (int u = 0; u < nu; u++) {
        int follower = gg->leader[first[u]] != first[u];
        gg->weight[u] = follower ? 0.0f : 1.0f;
        gg->n_loss += !follower;
    }
    gdp_features(gg, first, cfg);
    float *adj = cfg->adj_ids ? gg->x + GDP_VOCAB_SIZE + 1 + GDP_SHAPE_SLOTS : NULL;
    rc = gdp_neighbours(gg, topo, cfg->gs_dir, adj, gg->fdim, err);
    free(topo);
    free(first);
    if (rc)
        return rc;
    gg->nbr_start = malloc(((size_t)nu + 1) * sizeof *gg->nbr_start);
    gg->nbr = malloc((size_t)gg->nbr_all_start[nu] * sizeof *gg->nbr + 1);
    if (!gg->nbr_start || !gg->nbr)
        return pb_errorf(err, "gdp: out of memory");
    gdp_graph_resample(gg, cfg->gs_knn, rng);
    gg->csr = (pb_nn_csr){nu, gg->nbr_start, gg->nbr, NULL};
    return PB_OK;
}

void gdp_graph_expand(const gdp_graph *gg, const unsigned char *unit_dev, int *device)
{
    for (int v = 0; v < gg->n_nodes; v++)
        device[v] = unit_dev[gg->unit_of[v]];
    for (int v = 0; v < gg->n_nodes; v++)
        device[v] = device[gg->leader[v]];
}

int gdp_graph_splits_class(const gdp_graph *gg, const int *device)
{
    const pb_graph *g = gg->g;
    if (!g->colocation)
        return 0;
    int max_class = -1;
    for (int v = 0; v < g->n_nodes; v++)
        if (g->colocation[v] > max_class)
            max_class = g->colocation[v];
    int *dev = malloc((size_t)(max_class + 1) * sizeof *dev + 1), split = 0;
    if (!dev)
        return 0;
    for (int c = 0; c <= max_class; c++)
        dev[c] = -1;
    for (int v = 0; v < g->n_nodes && !split; v++) {
        int c = g->colocation[v];
        if (c < 0)
            continue;
        if (dev[c] >= 0 && dev[c] != device[v])
            split = 1;
        dev[c] = device[v];
    }
    free(dev);
    return split;
}

void gdp_graph_free(gdp_graph *gg)
{
    free(gg->unit_of);
    free(gg->leader);
    free(gg->weight);
    free(gg->x);
    free(gg->nbr_all_start);
    free(gg->nbr_all);
    free(gg->nbr_start);
    free(gg->nbr);
    memset(gg, 0, sizeof *gg);
}

/* ------------------------------------------------------------------ network */

int gdp_net_init(gdp_net *net, const gdp_net_config *cfg, pb_nn_params *p, int fdim, pb_rng *rng,
                 pb_error *err)
{
    memset(net, 0, sizeof *net);
    net->cfg = *cfg;
    net->film_gamma = -1;
    if (cfg->gs_layers < 1 || cfg->gs_layers > GDP_MAX_GS_LAYERS || cfg->trf_layers < 0 ||
        cfg->trf_layers > GDP_MAX_TRF_LAYERS)
        return pb_errorf(err, "gdp: gs_layers 1..%d and trf_layers 0..%d", GDP_MAX_GS_LAYERS,
                         GDP_MAX_TRF_LAYERS);
    if (cfg->gs_dim != cfg->d_model)
        return pb_errorf(err,
                         "gdp: gs_dim (%d) must equal d_model (%d): GraphSAGE's output is "
                         "the placer's input",
                         cfg->gs_dim, cfg->d_model);
    char name[64];
    for (int l = 0; l < cfg->gs_layers; l++) {
        snprintf(name, sizeof name, "gdp/sage%d", l);
        int act = l + 1 < cfg->gs_layers ? PB_NN_ACT_RELU : PB_NN_ACT_NONE;
        if (pb_nn_sage_pool_init(&net->sage[l], p, name, l ? cfg->gs_dim : fdim, cfg->gs_dim, act,
                                 rng, err))
            return PB_ERR;
        net->sage[l].pool_act = cfg->gs_pool_act;
    }
    int sp = cfg->superposition && cfg->placer_net == GDP_NET_TRANSFORMER;
    if (sp && pb_nn_trf_init(&net->cond, p, "gdp/cond", cfg->d_model, cfg->n_head, cfg->d_head,
                             cfg->d_inner, cfg->ln_eps, 0, 0, rng, err))
        return PB_ERR;
    if (cfg->placer_net == GDP_NET_MLP) {
        const int sizes[3] = {cfg->d_model, 2 * cfg->d_model, cfg->d_model};
        if (pb_nn_mlp_init(&net->mlp, p, "gdp/mlp", 3, sizes, PB_NN_ACT_RELU, rng, err))
            return PB_ERR;
    }
    for (int l = 0; cfg->placer_net == GDP_NET_TRANSFORMER && l < cfg->trf_layers; l++) {
        snprintf(name, sizeof name, "gdp/trf%d", l);
        if (pb_nn_trf_init(&net->trf[l], p, name, cfg->d_model, cfg->n_head, cfg->d_head,
                           cfg->d_inner, cfg->ln_eps, sp, cfg->sp_where == GDP_SP_FF_OUT, rng, err))
            return PB_ERR;
    }
    if (sp && cfg->sp_form == GDP_FORM_FILM1 &&
        (net->film_gamma =
             pb_nn_params_add(p, "gdp/film_gamma", 1, 1, PB_NN_INIT_ZEROS, NULL, err)) < 0)
        return PB_ERR;
    if ((net->w_out = pb_nn_params_add(p, "gdp/w_out", cfg->d_model, GDP_D_MAX, PB_NN_INIT_GLOROT,
                                       rng, err)) < 0 ||
        (net->b_out = pb_nn_params_add(p, "gdp/b_out", 1, GDP_D_MAX, PB_NN_INIT_ZEROS, NULL, err)) <
            0)
        return PB_ERR;
    if (cfg->out_init_scale > 0 && cfg->out_init_scale != 1) {
        float *w = pb_nn_params_values(p) + pb_nn_params_offset(p, net->w_out);
        for (int k = 0; k < cfg->d_model * GDP_D_MAX; k++)
            w[k] *= cfg->out_init_scale;
    }
    return PB_OK;
}

/* One Transformer-XL layer over every segment of x (n x d): segment [st, st + L) attends to the
 * inputs of the mem_len nodes before it (gradient-free) and to itself. */
static pb_nn_tensor *gdp_trf_segments(pb_nn_tape *t, pb_nn_params *p, const pb_nn_trf *layer,
                                      const gdp_net_config *cfg, pb_nn_tensor *x,
                                      pb_nn_tensor *gate)
{
    if (!x)
        return NULL;
    int n = x->rows, L = cfg->seg_len, n_seg = (n + L - 1) / L;
    pb_nn_tensor **outs = pb_nn_alloc(t, (size_t)n_seg * sizeof *outs);
    if (!outs)
        return NULL;
    for (int s = 0; s < n_seg; s++) {
        int st = s * L, len = st + L <= n ? L : n - st;
        int m = st < cfg->mem_len ? st : cfg->mem_len;
        pb_nn_tensor *mem = m ? pb_nn_stop_gradient(t, pb_nn_rows(t, x, st - m, m)) : NULL;
        pb_nn_tensor *g = gate, *gm = NULL;
        if (gate && gate->rows > 1) {
            g = pb_nn_rows(t, gate, st, len);
            gm = m ? pb_nn_stop_gradient(t, pb_nn_rows(t, gate, st - m, m)) : NULL;
        }
        outs[s] =
            pb_nn_trf_forward(t, p, layer, pb_nn_rows(t, x, st, len), mem, cfg->causal, g, gm);
    }
    return n_seg == 1 ? outs[0] : pb_nn_concat_rows(t, n_seg, outs);
}

pb_nn_tensor *gdp_net_forward(pb_nn_tape *t, pb_nn_params *p, const gdp_net *net,
                              const gdp_graph *gg, int n_devices)
{
    const gdp_net_config *cfg = &net->cfg;
    pb_nn_tensor *h = pb_nn_constant(t, gg->n_units, gg->fdim, gg->x);
    for (int l = 0; l < cfg->gs_layers; l++)
        h = pb_nn_sage_pool_forward(t, p, &net->sage[l], h, &gg->csr);
    if (cfg->gs_l2norm)
        h = pb_nn_l2_normalize(t, h, 1, 1e-12f);
    pb_nn_tensor *gate = NULL;
    if (cfg->placer_net == GDP_NET_MLP) {
        h = pb_nn_mlp_forward(t, p, &net->mlp, h);
    } else {
        if (cfg->superposition) {
            gate = gdp_trf_segments(t, p, &net->cond, cfg, h, NULL);
            if (cfg->sp_form == GDP_FORM_FILM1)
                gate =
                    pb_nn_add_scalar(t, pb_nn_mul(t, gate, pb_nn_param(t, p, net->film_gamma)), 1);
            if (cfg->sp_scope == GDP_SCOPE_GRAPH)
                gate = pb_nn_colmean(t, gate);
        }
        for (int l = 0; l < cfg->trf_layers; l++)
            h = gdp_trf_segments(t, p, &net->trf[l], cfg, h, gate);
    }
    pb_nn_tensor *logits =
        pb_nn_linear(t, pb_nn_superpose(t, h, gate), pb_nn_param(t, p, net->w_out),
                     pb_nn_param(t, p, net->b_out), PB_NN_ACT_NONE);
    /* Absent devices' logits are -inf: the softmax runs over the first n_devices only. */
    if (n_devices < GDP_D_MAX)
        logits = pb_nn_slice_cols(t, logits, 0, n_devices);
    return pb_nn_log_softmax(t, logits);
}
