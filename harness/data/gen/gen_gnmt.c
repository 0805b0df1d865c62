/* gen_gnmt.c — GDP's GNMT: the tensorflow/nmt gnmt_v2 encoder-decoder, statically unrolled. */
#include "gen_model.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * specs/gdp.md §10.2 (Wu et al. 2016; tensorflow/nmt wmt16_gnmt_4_layer.json): batch 64, 1024
 * units, L layers per side (2, 4 or 8), vocabularies of 32,000 (BPE), source and target unrolled
 * over 50 steps (option `steps`; static unroll: GDP places the unrolled graph).  Encoder: a
 * bidirectional first layer (forward and backward cells, the backward one over ReverseSequence'd
 * inputs, outputs concatenated) and L - 1 unidirectional layers, residual connections on the last L
 * - 2. Decoder (gnmt_v2): normed Bahdanau attention (v g / |v|, bias) queried by the bottom layer's
 * output; the context joins the input of every decoder layer (the previous step's context for the
 * bottom layer); residual connections from the third layer on.  Dropout 0.2 on every cell's input
 * (DropoutWrapper).  Per step the top output is projected onto the vocabulary and scored by a
 * sparse softmax cross-entropy; the step losses are summed and divided by the batch; gradients
 * clipped by global norm 5; SGD.  The training step's ops are counted (no initializers).
 * Groups: per step and cell the gates, the state and the dropout; per decoder step the attention
 * and the projection; each cell's weights; the embeddings; the memory layer.
 */
#define GEN_GNMT_H 1024
#define GEN_GNMT_VOCAB 32000
#define GEN_GNMT_MAX_LAYERS 16

typedef struct gen_gnmt_att {
    gen_tensor w_query, v, g, b, keys, memory;
    int steps; /* source steps */
} gen_gnmt_att;

/* Normed Bahdanau attention of query h [B, H] over the memory: the context [B, H]. */
static gen_tensor gen_gnmt_attend(gen_ctx *g, gen_tensor h, const gen_gnmt_att *a, int batch)
{
    gen_push(g, GEN_GROUP, "attention");
    gen_tensor q = gen_matmul(g, h, a->w_query, 0);
    q = gen_reshape(g, q, gen_shape3(batch, 1, GEN_GNMT_H));
    gen_tensor s = gen_broadcast(g, "AddV2", gen_broadcast(g, "AddV2", a->keys, q), a->b);
    s = gen_unary(g, "Tanh", s);
    /* normed_v = g v / sqrt(sum(v^2)), rebuilt every step inside the attention function */
    gen_shape scalar = gen_shape0();
    gen_tensor sq = gen_binary(g, "Mul", a->v, a->v);
    gen_tensor ss = gen_op_emit(g, "Sum", "Sum", GEN_GRAD_MEAN, &sq, 1, &scalar, 1, GEN_GNMT_H);
    gen_tensor r = gen_op_emit(g, "Rsqrt", "Rsqrt", GEN_GRAD_UNARY, &ss, 1, &scalar, 1, 1);
    gen_tensor nv = gen_broadcast(g, "Mul", gen_broadcast(g, "Mul", a->v, a->g), r);
    gen_tensor prod = gen_broadcast(g, "Mul", s, nv);
    gen_shape sc = gen_shape2(batch, a->steps);
    gen_tensor score = gen_op_emit(g, "Sum", "Sum_1", GEN_GRAD_MEAN, &prod, 1, &sc, 1,
                                   gen_shape_elems(gen_shape_of(g, prod)));
    gen_tensor al = gen_softmax(g, score);
    al = gen_reshape(g, al, gen_shape3(batch, 1, a->steps));
    gen_tensor ctx = gen_matmul(g, al, a->memory, 0);
    ctx = gen_reshape(g, ctx, gen_shape2(batch, GEN_GNMT_H));
    gen_pop(g);
    return ctx;
}

/* One cell-step with dropout on its input and an optional residual connection. */
static gen_tensor gen_gnmt_cell(gen_ctx *g, int index, gen_tensor x, gen_tensor *c, gen_tensor *h,
                                const gen_lstm_weights *w, gen_tensor residual)
{
    gen_push(g, GEN_SCOPE, "cell_%d", index);
    gen_lstm_cell(g, gen_rnn_dropout(g, x, "dropout"), c, h, w);
    gen_tensor y = *h;
    if (residual.op >= 0) {
        gen_push(g, GEN_GROUP, "residual");
        y = gen_binary(g, "AddV2", y, residual);
        gen_pop(g);
    }
    gen_pop(g);
    return y;
}

/* The encoder: returns the memory [B, S, H] (top outputs of every step). */
static gen_tensor gen_gnmt_encoder(gen_ctx *g, gen_tensor src, int L, int b, int T)
{
    int n_cells = L + 1; /* forward and backward first layer, then L - 1 layers */
    gen_lstm_weights w[GEN_GNMT_MAX_LAYERS + 1];
    gen_tensor c[GEN_GNMT_MAX_LAYERS + 1], h[GEN_GNMT_MAX_LAYERS + 1];
    gen_push(g, GEN_SCOPE, "encoder");
    for (int k = 0; k < n_cells; k++) {
        char scope[64];
        if (k < 2)
            snprintf(scope, sizeof scope, "bidirectional_rnn/%s/basic_lstm_cell",
                     k == 0 ? "fw" : "bw");
        else
            snprintf(scope, sizeof scope, "rnn/multi_rnn_cell/cell_%d/basic_lstm_cell", k - 2);
        w[k] = gen_lstm_weights_new(g, scope, k == 2 ? 2 * GEN_GNMT_H : GEN_GNMT_H, GEN_GNMT_H);
    }
    gen_push(g, GEN_GROUP, "bidirectional_rnn/bw/ReverseSequence");
    gen_shape rs = gen_shape_of(g, src);
    gen_tensor rev =
        gen_op_emit(g, "ReverseSequence", "ReverseSequence", GEN_GRAD_RESHAPE, &src, 1, &rs, 1, 0);
    gen_pop(g);
    gen_tensor *outs = malloc((size_t)T * sizeof *outs);
    gen_tensor *bw = malloc((size_t)T * sizeof *bw);
    if (!outs || !bw) {
        free(outs);
        free(bw);
        gen_pop(g);
        return GEN_NONE;
    }
    /* the backward cell runs first over the reversed sequence: its output of step t is read by
     * the forward pass at step T - 1 - t */
    for (int t = 0; t < T; t++) {
        gen_push(g, GEN_SCOPE, "bw_step_%02d", t);
        gen_push(g, GEN_GROUP, "input");
        gen_tensor x = gen_rnn_step_slice(g, rev, b, GEN_GNMT_H);
        if (t == 0)
            c[1] = h[1] = gen_const(g, "zeros", gen_shape2(b, GEN_GNMT_H));
        gen_pop(g);
        bw[T - 1 - t] = gen_gnmt_cell(g, 1, x, &c[1], &h[1], &w[1], GEN_NONE);
        gen_pop(g);
    }
    for (int t = 0; t < T; t++) {
        gen_push(g, GEN_SCOPE, "step_%02d", t);
        gen_push(g, GEN_GROUP, "input");
        gen_tensor x = gen_rnn_step_slice(g, src, b, GEN_GNMT_H);
        if (t == 0)
            for (int k = 0; k < n_cells; k++)
                if (k != 1)
                    c[k] = h[k] = gen_const(g, "zeros", gen_shape2(b, GEN_GNMT_H));
        gen_pop(g);
        gen_tensor fw = gen_gnmt_cell(g, 0, x, &c[0], &h[0], &w[0], GEN_NONE);
        gen_push(g, GEN_GROUP, "bidirectional_concat");
        gen_tensor pair[2] = {fw, bw[t]};
        x = gen_concat(g, pair, 2);
        gen_pop(g);
        for (int k = 2; k < n_cells; k++) /* residual on the last L - 2 layers */
            x = gen_gnmt_cell(g, k, x, &c[k], &h[k], &w[k], k >= 3 ? x : GEN_NONE);
        outs[t] = x;
        gen_pop(g);
    }
    free(bw);
    gen_push(g, GEN_GROUP, "memory");
    gen_tensor mem = gen_concat(g, outs, T);
    free(outs);
    mem = gen_reshape(g, mem, gen_shape3(b, T, GEN_GNMT_H));
    gen_pop(g);
    gen_pop(g);
    return mem;
}

int gen_gnmt_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err)
{
    int b = a->batch, L = a->layers, T = a->opt[GEN_RNN_OPT_STEPS];
    long long rows = (long long)b * T;
    gen_ctx g;
    gen_init(&g, a->seed, b);
    gen_shape io[3] = {gen_shape1(rows), gen_shape1(rows), gen_shape1(rows)};
    gen_tensor batch = gen_source(&g, "IteratorGetNext", "IteratorGetNext", io, 3);
    gen_tensor emb[2];
    for (int k = 0; k < 2; k++) {
        gen_push(&g, GEN_GROUP, "embeddings/%s", k ? "decoder" : "encoder");
        gen_tensor table = gen_variable(&g, "embedding", gen_shape2(GEN_GNMT_VOCAB, GEN_GNMT_H));
        emb[k] = gen_gather(&g, table, gen_port(batch, k));
        gen_pop(&g);
    }
    gen_tensor mem = gen_gnmt_encoder(&g, emb[0], L, b, T);
    gen_gnmt_att att;
    gen_push(&g, GEN_SCOPE, "decoder");
    gen_push(&g, GEN_GROUP, "memory_layer");
    gen_tensor wm = gen_variable(&g, "kernel", gen_shape2(GEN_GNMT_H, GEN_GNMT_H));
    att.memory = mem;
    att.steps = T;
    att.keys =
        gen_reshape(&g, gen_matmul(&g, gen_reshape(&g, mem, gen_shape2(rows, GEN_GNMT_H)), wm, 0),
                    gen_shape3(b, T, GEN_GNMT_H));
    gen_pop(&g);
    gen_push(&g, GEN_GROUP, "attention_weights");
    att.w_query = gen_variable(&g, "query_layer/kernel", gen_shape2(GEN_GNMT_H, GEN_GNMT_H));
    att.v = gen_variable(&g, "attention_v", gen_shape1(GEN_GNMT_H));
    att.g = gen_variable(&g, "attention_g", gen_shape0());
    att.b = gen_variable(&g, "attention_b", gen_shape1(GEN_GNMT_H));
    gen_pop(&g);
    gen_lstm_weights w[GEN_GNMT_MAX_LAYERS];
    gen_tensor c[GEN_GNMT_MAX_LAYERS], h[GEN_GNMT_MAX_LAYERS];
    for (int l = 0; l < L; l++) {
        char scope[64];
        snprintf(scope, sizeof scope, "multi_rnn_cell/cell_%d/basic_lstm_cell", l);
        w[l] = gen_lstm_weights_new(&g, scope, 2 * GEN_GNMT_H, GEN_GNMT_H);
    }
    gen_push(&g, GEN_GROUP, "output_projection");
    gen_tensor proj = gen_variable(&g, "kernel", gen_shape2(GEN_GNMT_H, GEN_GNMT_VOCAB));
    gen_pop(&g);
    gen_tensor *losses = malloc((size_t)T * sizeof *losses);
    gen_tensor ctx = GEN_NONE;
    for (int t = 0; losses && t < T; t++) {
        gen_push(&g, GEN_SCOPE, "step_%02d", t);
        gen_push(&g, GEN_GROUP, "input");
        gen_tensor x = gen_rnn_step_slice(&g, emb[1], b, GEN_GNMT_H);
        if (t == 0) {
            for (int l = 0; l < L; l++)
                c[l] = h[l] = gen_const(&g, "zeros", gen_shape2(b, GEN_GNMT_H));
            ctx = gen_const(&g, "zeros", gen_shape2(b, GEN_GNMT_H));
        }
        gen_tensor in0[2] = {x, ctx};
        x = gen_concat(&g, in0, 2);
        gen_pop(&g);
        x = gen_gnmt_cell(&g, 0, x, &c[0], &h[0], &w[0], GEN_NONE);
        ctx = gen_gnmt_attend(&g, x, &att, b);
        for (int l = 1; l < L; l++) {
            gen_push(&g, GEN_GROUP, "cell_%d_input", l);
            gen_tensor in[2] = {x, ctx};
            gen_tensor xi = gen_concat(&g, in, 2);
            gen_pop(&g);
            x = gen_gnmt_cell(&g, l, xi, &c[l], &h[l], &w[l], l >= 2 ? x : GEN_NONE);
        }
        gen_push(&g, GEN_GROUP, "output");
        gen_tensor logits = gen_matmul(&g, x, proj, 0);
        gen_tensor labels = gen_rnn_step_slice(&g, gen_port(batch, 2), b, 1);
        gen_shape o[2] = {gen_shape1(b), gen_shape_of(&g, logits)};
        gen_tensor in[2] = {logits, labels};
        losses[t] = gen_op_emit(&g, "SparseSoftmaxCrossEntropyWithLogits",
                                "SparseSoftmaxCrossEntropyWithLogits", GEN_GRAD_XENT, in, 2, o, 2,
                                6.0 * gen_shape_elems(o[1]));
        gen_shape scalar = gen_shape0();
        losses[t] = gen_op_emit(&g, "Sum", "Sum", GEN_GRAD_MEAN, &losses[t], 1, &scalar, 1, b);
        gen_pop(&g);
        gen_pop(&g);
    }
    gen_pop(&g);
    if (!losses) {
        gen_free(&g);
        return pb_errorf(err, "out of memory");
    }
    gen_push(&g, GEN_GROUP, "loss");
    gen_tensor loss = gen_broadcast(&g, "RealDiv", gen_add_n(&g, losses, T),
                                    gen_const(&g, "batch_size", gen_shape0()));
    free(losses);
    gen_pop(&g);
    gen_train(&g, loss, GEN_OPT_SGD, 1);
    int rc = gen_model_finish(&g, a, name, out, err);
    gen_free(&g);
    return rc;
}
