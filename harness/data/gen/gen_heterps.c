/* gen_heterps.c — the HeterPS workloads (MATCHNET, CTRDNN-L, 2EMB, NCE) as layer-level chains. */
#include "gen_model.h"

#include "model/graph.h"

#include <stdio.h>
#include <string.h>

/*
 * HeterPS schedules layers, not ops: each model is a chain of its layers (specs/heterps.md §5, the
 * tables there, after the PaddleRec models the paper names).  A node is one layer, in the
 * encoding the heterps simulator reads (datasets/heterps/README.md, heterps_layers_read), so the
 * zoo's chains and the simulator's profiles come from these tables:
 *   type         its kind (EMB, POOL, CONCAT, FC, RNN, SIM, SAMPLER, DOT, LOSS, REDUCE) and the
 *                per-example attributes in=, out= (floats), ids=, dim=, rows= (EMB), steps=
 *                (RNN) and batch=B, which says that flops is the training FLOPs of a batch of B;
 *   flops        3 F B: forward F per example, backward twice that, for a batch of B;
 *   bytes        8 (in + out) B: every input and output float read and written once (§4);
 *                an embedding also reads its ids' rows (4 dim bytes per id);
 *   mem          4 x its dense parameters (the sparse tables live on the parameter servers and
 *                are described by ids, dim and rows);
 *   out_sizes    4 cut B: the floats that cross a stage boundary after the layer (the gradient
 *                travels back with the same size);
 *   cost         K80 roofline µs of flops and bytes, as every generated graph.
 * The default batch is the profiling batch B_o = 512 of §4.
 */

typedef struct gen_layer {
    const char *name, *kind;
    double in, out, cut;   /* floats per example */
    double params;         /* dense parameters */
    double flops;          /* forward FLOPs per example */
    double ids, dim, rows; /* EMB: ids per example, row width and rows of its table */
    double steps;          /* RNN: recurrent steps */
} gen_layer;

/* " key=value", the shortest text that reads back as v. */
static int gen_heterps_attr(char *buf, size_t size, const char *key, double v)
{
    return snprintf(buf, size, " %s=%.17g", key, v);
}

/* The node type of layer y at batch b: its kind and attributes. */
static void gen_heterps_type(const gen_layer *y, int b, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s", y->kind);
    const char *keys[6] = {"in", "out", "ids", "dim", "rows", "steps"};
    double vals[6] = {y->in, y->out, y->ids, y->dim, y->rows, y->steps};
    for (int k = 0; k < 6 && n < size; k++)
        if (k < 2 || vals[k] > 0)
            n += (size_t)gen_heterps_attr(buf + n, size - n, keys[k], vals[k]);
    if (n < size)
        gen_heterps_attr(buf + n, size - n, "batch", b);
}

/* Builds the chain of n layers at batch b. */
static int gen_heterps_chain(const gen_layer *l, int n, int b, const char *name, pb_graph **out,
                             pb_error *err)
{
    graph_builder *gb = graph_builder_new(name);
    if (!gb)
        return pb_errorf(err, "out of memory");
    pb_error inner;
    for (int i = 0; i < n; i++) {
        double port = 4.0 * l[i].cut * b;
        double bytes = 8.0 * (l[i].in + l[i].out) * b + 4.0 * l[i].ids * l[i].dim * b;
        double flops = 3.0 * l[i].flops * b;
        char type[256];
        gen_heterps_type(&l[i], b, type, sizeof type);
        graph_node_attrs a = {.type = type,
                              .cost_us = gen_roofline_us(flops, bytes),
                              .flops = flops,
                              .bytes_accessed = bytes,
                              .param_bytes = 4.0 * l[i].params,
                              .n_ports = 1,
                              .port_bytes = &port,
                              .colocation = -1};
        if (graph_add_node(gb, l[i].name, &a, &inner) < 0 ||
            (i > 0 && graph_add_edge(gb, i - 1, i, 0, &inner) < 0)) {
            graph_builder_free(gb);
            return pb_errorf(err, "%s: %s", name, inner.msg);
        }
    }
    if (graph_build(gb, out, &inner) != PB_OK)
        return pb_errorf(err, "%s: %s", name, inner.msg);
    return PB_OK;
}

/* MATCHNET (16): multiview SimNet, towers query / positive / negative linearised, then the two
 * cosine similarities, the hinge loss and its mean (specs/heterps.md §5).  Vocabulary 6,327,
 * embedding and GRU 128, sequence lengths 79 / 99 / 90; GRU FLOPs = steps 3 2 (emb+hid) hid. */
int gen_matchnet_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err)
{
    static const char *tower[3] = {"q", "pt", "nt"};
    static const double steps[3] = {79, 99, 90};
    static const double cut_emb[3] = {10112, 12800, 11776}, cut_fc[3] = {128, 256, 384};
    gen_layer l[16];
    char names[16][32];
    int n = 0;
    for (int t = 0; t < 3; t++) {
        double seq = steps[t] * 128;
        const char *kind[4] = {"EMB", "RNN", "POOL", "FC"};
        const char *part[4] = {"emb", "gru", "pool", "fc"};
        double in[4] = {steps[t], seq, seq, 128}, outf[4] = {seq, seq, 128, 128};
        double cut[4] = {cut_emb[t], cut_emb[t], cut_fc[t], cut_fc[t]};
        double params[4] = {0, 3.0 * (256 * 128 + 128), 0, 128.0 * 128 + 128};
        double flops[4] = {0, steps[t] * 3 * 2 * (128 + 128) * 128, seq, 2.0 * 128 * 128};
        for (int k = 0; k < 4; k++, n++) {
            snprintf(names[n], sizeof names[n], "%s_%s", tower[t], part[k]);
            l[n] = (gen_layer){.name = names[n],
                               .kind = kind[k],
                               .in = in[k],
                               .out = outf[k],
                               .cut = cut[k],
                               .params = params[k],
                               .flops = flops[k],
                               .ids = k == 0 ? steps[t] : 0,
                               .dim = k == 0 ? 128 : 0,
                               .rows = k == 0 ? 6327 : 0,
                               .steps = k == 1 ? steps[t] : 0};
        }
    }
    l[n++] = (gen_layer){"cos_pos", "SIM", 256, 1, 257, 0, 768, 0, 0, 0, 0};
    l[n++] = (gen_layer){"cos_neg", "SIM", 256, 1, 2, 0, 768, 0, 0, 0, 0};
    l[n++] = (gen_layer){"hinge", "LOSS", 2, 1, 1, 0, 4, 0, 0, 0, 0};
    l[n++] = (gen_layer){"mean", "REDUCE", 1, 1, 1, 0, 1, 0, 0, 0, 0};
    return gen_heterps_chain(l, n, a->batch, name, out, err);
}

/* CTRDNN-L: PaddleRec CTR-DNN (26 sparse slots of one id in a 1,000,001 x 10 table, 13 dense
 * inputs, FC 400 layers, softmax of 2).  L = 8 is the classic model; L - 5 FC layers of 400 in
 * general; L = 7 is CTRDNN-8 without its pool layer (the paper's §6.3 "CTRDNN of 7 layers").
 * Option dnn=1: the newer PaddleRec models/rank/dnn the spec keeps as an option (§5): rows of 9
 * floats and FC 512-256-128-32 before the softmax of 2, 9 layers. */
int gen_ctrdnn_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err)
{
    static const double rank_dnn[4] = {512, 256, 128, 32};
    int L = a->layers, n = 0, dnn = a->opt[GEN_CTRDNN_OPT_DNN];
    if (dnn && L != 9)
        return pb_errorf(err,
                         "%s: the PaddleRec rank/dnn variant (dnn=1) has 9 layers; give "
                         "--layers 9",
                         name);
    double dim = dnn ? 9 : 10, emb = 26 * dim, cat = emb + 13, width = 400;
    gen_layer l[GEN_CTRDNN_MAX_LAYERS];
    char names[GEN_CTRDNN_MAX_LAYERS][16];
    l[n++] = (gen_layer){"emb", "EMB", 26, emb, emb, 0, 0, 26, dim, 1000001, 0};
    if (L != 7)
        l[n++] = (gen_layer){"pool", "POOL", emb, emb, emb, 0, emb, 0, 0, 0, 0};
    l[n++] = (gen_layer){"concat", "CONCAT", cat, cat, cat, 0, 0, 0, 0, 0, 0};
    int fcs = dnn ? 4 : L == 7 ? 3 : L - 5;
    double in = cat;
    for (int k = 0; k < fcs; k++, n++) {
        width = dnn ? rank_dnn[k] : 400;
        snprintf(names[k], sizeof names[k], "fc%d", k + 1);
        l[n] = (gen_layer){names[k],       "FC", in, width, width, in * width + width,
                           2 * in * width, 0,    0,  0,     0};
        in = width;
    }
    l[n++] = (gen_layer){"fc_out", "FC", in, 2, 2, 2 * in + 2, 4 * in, 0, 0, 0, 0};
    l[n++] = (gen_layer){"loss", "LOSS", 2, 1, 1, 0, 10, 0, 0, 0, 0};
    return gen_heterps_chain(l, n, a->batch, name, out, err);
}

/* 2EMB: wide & deep with two embedding tables, 1e5 x 128 (deep) and 1e5 x 1 (wide), n ids per
 * example in each (option ids: the spec's [I] 22, Avazu's fields), after Paddle's fleet CTR test
 * (specs/heterps.md §5).  The deep pool's 128 floats stay live across the wide layers' cuts. */
int gen_2emb_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err)
{
    double n = a->opt[GEN_2EMB_OPT_IDS];
    const gen_layer l[10] = {
        {"deep_emb", "EMB", n, n * 128, n * 128, 0, 0, n, 128, 1e5, 0},
        {"deep_pool", "POOL", n * 128, 128, 128, 0, n * 128, 0, 0, 0, 0},
        {"wide_emb", "EMB", n, n, 128 + n, 0, 0, n, 1, 1e5, 0},
        {"wide_pool", "POOL", n, 1, 129, 0, n, 0, 0, 0, 0},
        {"fc64", "FC", 128, 64, 65, 8256, 2 * 128 * 64, 0, 0, 0, 0},
        {"fc32", "FC", 64, 32, 33, 2080, 2 * 64 * 32, 0, 0, 0, 0},
        {"fc1", "FC", 32, 1, 2, 33, 2 * 32, 0, 0, 0, 0},
        {"concat", "CONCAT", 2, 2, 2, 0, 0, 0, 0, 0, 0},
        {"fc_out", "FC", 2, 2, 2, 6, 2 * 2 * 2, 0, 0, 0, 0},
        {"ce", "LOSS", 2, 1, 1, 0, 10, 0, 0, 0, 0},
    };
    return gen_heterps_chain(l, 10, a->batch, name, out, err);
}

/* NCE: skip-gram word2vec with NCE and 5 negatives, vocabulary 354,051, dimension 300
 * (PaddleRec word2vec, specs/heterps.md §5). */
int gen_nce_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err)
{
    static const gen_layer l[5] = {
        {"in_emb", "EMB", 1, 300, 300, 0, 0, 1, 300, 354051, 0},
        {"sampler", "SAMPLER", 300, 305, 305, 0, 100, 0, 0, 0, 0},
        {"nce_w", "EMB", 6, 1806, 2106, 0, 0, 6, 301, 354051, 0},
        {"logits", "DOT", 2100, 6, 6, 0, 3600, 0, 0, 0, 0},
        {"loss", "LOSS", 6, 1, 1, 0, 60, 0, 0, 0, 0},
    };
    return gen_heterps_chain(l, 5, a->batch, name, out, err);
}
