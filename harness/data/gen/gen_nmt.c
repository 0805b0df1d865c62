/* gen_nmt.c — the nmt family: attention LSTM encoder-decoders (TensorFlow NMT), unrolled. */
#include "gen.h"

/*
 * What a graph is (after the TensorFlow NMT tutorial, Luong et al. 2015 / Bahdanau et al. 2015,
 * in its IWSLT'15 English-Vietnamese configuration):
 *   source and target embeddings, looked up once for all steps and read step by step;
 *   an encoder of GEN_NMT_LAYERS stacked LSTM layers (TF BasicLSTMCell: one matmul of [x, h] with
 *   the kernel plus bias gives the i, j, f, o gates; c' = c sigmoid(f + 1) + sigmoid(i) tanh(j),
 *   h' = tanh(c') sigmoid(o)) unrolled over S source steps; the top layer's outputs are the
 *   attention memory, projected once by the memory layer into the keys;
 *   a decoder of the same depth, started from the encoder's final states, unrolled over D target
 *   steps with one of two attentions: Bahdanau (additive: v^T tanh(K + q W), queried with the
 *   top decoder output of the previous step; the context joins the target embedding as the
 *   bottom layer's input) or Luong (multiplicative: q K^T on the top layer's output; the output
 *   is [h; context] W_c, not fed back);
 *   the D outputs are projected onto the target vocabulary at once, softmax cross-entropy;
 *   gradients clipped by global norm 5, Adam updates.  As in TF NMT the recurrences run in
 *   tf.while_loop (dynamic_rnn, dynamic_decode), unrolled here, so the gradient of a recurrent
 *   weight is accumulated step by step (gen_ctx.loop_accumulate).
 * Per graph the seed picks Bahdanau or Luong attention and the target length D; the source
 * length S is spread over its range across graph indices.  H = 512, batch 128, vocabularies 17191 /
 * 7709 (gen_options width, batch, layers, steps_min/max).  The traversal-order paper's appendix
 * graph "NMT 64-30" has one layer and about 30 steps; README "Reference measurement semantics and
 * colocation" says why the defaults stay at two layers and 5-9 / 3-7 steps.
 *
 * Groups: per step, the input read (a TensorArray read in dynamic_rnn's loop body), and per layer
 * the gate pre-activations (concat, matmul, bias) and the state update (split, activations,
 * c', h'); per decoder step the attention; each layer's weights; the attention weights; the memory
 * layer; the output projection; each embedding; the data.  See gen.h for gradients and updates.
 */
#define GEN_NMT_H 512
#define GEN_NMT_BATCH 128
#define GEN_NMT_SRC_VOCAB 17191
#define GEN_NMT_TGT_VOCAB 7709
#define GEN_NMT_LAYERS 2
#define GEN_NMT_MAX_LAYERS 8
#define GEN_NMT_MAX_STEPS 64
#define GEN_NMT_SRC_MIN 5
#define GEN_NMT_SRC_MAX 9
#define GEN_NMT_TGT_MIN 3
#define GEN_NMT_TGT_MAX 7

typedef struct gen_nmt_weights {
    gen_tensor kernel, bias;
} gen_nmt_weights;

/* One group holding an LSTM layer's kernel [in + H, 4H] and bias. */
static gen_nmt_weights gen_nmt_layer_weights(gen_ctx *g, const char *scope, int layer, int in)
{
    gen_nmt_weights w;
    gen_push(g, GEN_GROUP, "%s/cell_%d", scope, layer);
    w.kernel = gen_variable(g, "kernel", gen_shape2(in + g->opt.width, 4 * g->opt.width));
    w.bias = gen_variable(g, "bias", gen_shape1(4 * g->opt.width));
    gen_pop(g);
    return w;
}

/* TF BasicLSTMCell (forget bias 1) in two groups; updates *c and *h. */
static void gen_nmt_lstm(gen_ctx *g, gen_tensor x, gen_tensor *c, gen_tensor *h,
                         const gen_nmt_weights *w)
{
    gen_push(g, GEN_GROUP, "gates");
    gen_tensor xh[2] = {x, *h};
    gen_tensor z = gen_bias_add(g, gen_matmul(g, gen_concat(g, xh, 2), w->kernel, 0), w->bias);
    gen_pop(g);
    gen_push(g, GEN_GROUP, "state");
    gen_tensor s = gen_split(g, z, 4);
    gen_tensor i = gen_unary(g, "Sigmoid", s);
    gen_tensor j = gen_unary(g, "Tanh", gen_port(s, 1));
    gen_tensor fb = gen_const(g, "forget_bias", gen_shape0());
    gen_tensor f = gen_unary(g, "Sigmoid", gen_binary(g, "AddV2", gen_port(s, 2), fb));
    gen_tensor o = gen_unary(g, "Sigmoid", gen_port(s, 3));
    *c = gen_binary(g, "AddV2", gen_binary(g, "Mul", *c, f), gen_binary(g, "Mul", i, j));
    *h = gen_binary(g, "Mul", gen_unary(g, "Tanh", *c), o);
    gen_pop(g);
}

/* Row block t of an [steps*b, width] tensor: one step's slice. */
static gen_tensor gen_nmt_slice(gen_ctx *g, gen_tensor all, long long width)
{
    gen_shape s = gen_shape2(g->batch, width);
    return gen_op_emit(g, "StridedSlice", "strided_slice", GEN_GRAD_SLICE, &all, 1, &s, 1, 0);
}

/* dynamic_rnn's output TensorArray: step t writes value after the write of step t - 1 (the
 * flow carries the array, i.e. the t + 1 values written so far), in its own group. */
static gen_tensor gen_nmt_ta_write(gen_ctx *g, gen_tensor value, gen_tensor flow, int t)
{
    gen_push(g, GEN_GROUP, "output");
    gen_tensor in[2] = {value, flow};
    gen_shape s = gen_shape1((long long)(gen_shape_elems(gen_shape_of(g, value)) * (t + 1)));
    gen_tensor out = gen_op_emit(g, "TensorArrayWriteV3", "TensorArrayWriteV3", GEN_GRAD_TA_WRITE,
                                 in, t > 0 ? 2 : 1, &s, 1, 0);
    gen_pop(g);
    return out;
}

/* All values of an output TensorArray: [b*steps, H]. */
static gen_tensor gen_nmt_ta_gather(gen_ctx *g, gen_tensor flow, int steps)
{
    gen_shape o = gen_shape2((long long)g->batch * steps, g->opt.width);
    return gen_op_emit(g, "TensorArrayGatherV3", "TensorArrayGatherV3", GEN_GRAD_TA_GATHER, &flow,
                       1, &o, 1, 0);
}

/* Embedding variable and one lookup of all ids, in one group. */
static gen_tensor gen_nmt_embed(gen_ctx *g, const char *name, long long vocab, gen_tensor ids)
{
    gen_push(g, GEN_GROUP, "embeddings/%s", name);
    gen_tensor emb = gen_variable(g, "embedding", gen_shape2(vocab, g->opt.width));
    gen_tensor out = gen_gather(g, emb, ids);
    gen_pop(g);
    return out;
}

/* The recurrent state of the stacked layers. */
typedef struct gen_nmt_state {
    gen_tensor c[GEN_NMT_MAX_LAYERS], h[GEN_NMT_MAX_LAYERS];
} gen_nmt_state;

/* One step of the stacked layers on input x (read in its own group); returns the top output. */
static gen_tensor gen_nmt_layers(gen_ctx *g, gen_tensor x, gen_nmt_state *st,
                                 const gen_nmt_weights *w)
{
    for (int l = 0; l < g->opt.layers; l++) {
        gen_push(g, GEN_SCOPE, "cell_%d", l);
        gen_nmt_lstm(g, x, &st->c[l], &st->h[l], &w[l]);
        x = st->h[l];
        gen_pop(g);
    }
    return x;
}

/* Unrolled encoder; writes the top layer's outputs into the TensorArray whose last flow it leaves
 * in *flow, and the final states in *st. */
static void gen_nmt_encoder(gen_ctx *g, gen_tensor src, int steps, gen_tensor *flow,
                            gen_nmt_state *st)
{
    gen_nmt_weights w[GEN_NMT_MAX_LAYERS];
    gen_push(g, GEN_SCOPE, "encoder");
    for (int l = 0; l < g->opt.layers; l++)
        w[l] = gen_nmt_layer_weights(g, "weights", l, g->opt.width);
    for (int t = 0; t < steps; t++) {
        gen_push(g, GEN_SCOPE, "step_%02d", t);
        gen_push(g, GEN_GROUP, "input");
        gen_tensor x = gen_nmt_slice(g, src, g->opt.width);
        if (t == 0)
            for (int l = 0; l < g->opt.layers; l++)
                st->c[l] = st->h[l] = gen_const(g, "zeros", gen_shape2(g->batch, g->opt.width));
        gen_pop(g);
        *flow = gen_nmt_ta_write(g, gen_nmt_layers(g, x, st, w), *flow, t);
        gen_pop(g);
    }
    gen_pop(g);
}

/* Attention weights: Luong's W_c [2H, H]; Bahdanau's query layer [H, H] and v [H]. */
typedef struct gen_nmt_att {
    int bahdanau;
    gen_tensor w_c, w_query, v, keys, values;
} gen_nmt_att;

/* Alignments [b, S] -> context [b, H] = alignments V. */
static gen_tensor gen_nmt_context(gen_ctx *g, gen_tensor score, const gen_nmt_att *a)
{
    long long src = gen_shape_of(g, a->keys).d[1];
    gen_tensor al = gen_softmax(g, gen_reshape(g, score, gen_shape2(g->batch, src)));
    gen_tensor al3 = gen_reshape(g, al, (gen_shape){3, {g->batch, 1, src, 1}});
    gen_tensor ctx3 = gen_matmul(g, al3, a->values, 0);
    return gen_reshape(g, ctx3, gen_shape2(g->batch, g->opt.width));
}

/* Luong (multiplicative) score: h K^T. */
static gen_tensor gen_nmt_luong_score(gen_ctx *g, gen_tensor h, const gen_nmt_att *a)
{
    gen_tensor q = gen_reshape(g, h, (gen_shape){3, {g->batch, 1, g->opt.width, 1}});
    return gen_matmul(g, q, a->keys, 1);
}

/* Bahdanau (additive) score: v^T tanh(K + h W). */
static gen_tensor gen_nmt_bahdanau_score(gen_ctx *g, gen_tensor h, const gen_nmt_att *a)
{
    gen_shape ks = gen_shape_of(g, a->keys);
    gen_tensor pq = gen_matmul(g, h, a->w_query, 0);
    gen_tensor pq3 = gen_reshape(g, pq, (gen_shape){3, {g->batch, 1, g->opt.width, 1}});
    gen_tensor e = gen_unary(g, "Tanh", gen_binary(g, "AddV2", a->keys, pq3));
    gen_tensor ev = gen_binary(g, "Mul", e, a->v);
    gen_shape ss = gen_shape2(g->batch, ks.d[1]);
    return gen_op_emit(g, "Sum", "Sum", GEN_GRAD_MEAN, &ev, 1, &ss, 1, gen_shape_elems(ks));
}

/* The attention vector [h; context] W_c of the top layer's output h. */
static gen_tensor gen_nmt_attention(gen_ctx *g, gen_tensor h, const gen_nmt_att *a)
{
    gen_tensor score = a->bahdanau ? gen_nmt_bahdanau_score(g, h, a) : gen_nmt_luong_score(g, h, a);
    gen_tensor hc[2] = {h, gen_nmt_context(g, score, a)};
    return gen_matmul(g, gen_concat(g, hc, 2), a->w_c, 0);
}

/* The memory layer: top encoder outputs stacked into values [b, S, H], projected into keys. */
static void gen_nmt_memory(gen_ctx *g, gen_tensor flow, int steps, gen_nmt_att *a)
{
    gen_push(g, GEN_GROUP, "memory_layer");
    gen_tensor flat = gen_nmt_ta_gather(g, flow, steps);
    gen_shape s3 = {3, {g->batch, steps, g->opt.width, 1}};
    a->values = gen_reshape(g, flat, s3);
    gen_tensor kernel = gen_variable(g, "kernel", gen_shape2(g->opt.width, g->opt.width));
    a->keys = gen_reshape(g, gen_matmul(g, flat, kernel, 0), s3);
    gen_pop(g);
}

/* Unrolled decoder from the encoder's final states; writes every step's output into the output
 * TensorArray and returns its last flow. */
static gen_tensor gen_nmt_decoder(gen_ctx *g, gen_tensor tgt, int steps, gen_nmt_att *a,
                                  gen_nmt_state *st)
{
    gen_nmt_weights w[GEN_NMT_MAX_LAYERS];
    gen_push(g, GEN_SCOPE, "decoder");
    for (int l = 0; l < g->opt.layers; l++)
        w[l] = gen_nmt_layer_weights(g, "weights", l, g->opt.width);
    gen_push(g, GEN_GROUP, "weights/attention");
    if (a->bahdanau) {
        a->w_query = gen_variable(g, "query_layer", gen_shape2(g->opt.width, g->opt.width));
        a->v = gen_variable(g, "attention_v", gen_shape1(g->opt.width));
    }
    a->w_c = gen_variable(g, "attention_layer", gen_shape2(2 * g->opt.width, g->opt.width));
    gen_pop(g);
    gen_tensor flow = GEN_NONE;
    for (int t = 0; t < steps; t++) {
        gen_push(g, GEN_SCOPE, "step_%02d", t);
        gen_push(g, GEN_GROUP, "input");
        gen_tensor x = gen_nmt_slice(g, tgt, g->opt.width);
        gen_pop(g);
        gen_tensor h = gen_nmt_layers(g, x, st, w);
        gen_push(g, GEN_GROUP, "attention");
        gen_tensor y = gen_nmt_attention(g, h, a);
        gen_pop(g);
        flow = gen_nmt_ta_write(g, y, flow, t);
        gen_pop(g);
    }
    gen_pop(g);
    return flow;
}

int gen_nmt_generate(uint64_t seed, int index, const char *name, const gen_options *opt,
                     pb_graph **out, pb_error *err)
{
    int layers = opt->layers > 0 ? opt->layers : GEN_NMT_LAYERS;
    if (layers > GEN_NMT_MAX_LAYERS)
        return pb_errorf(err, "%s: %d LSTM layers (at most %d)", name, layers, GEN_NMT_MAX_LAYERS);
    if (opt->steps_max < opt->steps_min || opt->steps_max > GEN_NMT_MAX_STEPS)
        return pb_errorf(err, "%s: steps %d-%d (must be a range within 1-%d)", name, opt->steps_min,
                         opt->steps_max, GEN_NMT_MAX_STEPS);
    gen_ctx g;
    gen_init(&g, seed, opt->batch > 0 ? opt->batch : GEN_NMT_BATCH);
    g.opt = *opt;
    g.cost_model = opt->cost_model;
    g.opt.width = opt->width > 0 ? opt->width : GEN_NMT_H;
    g.opt.layers = layers;
    g.loop_accumulate = 1;
    int src_min = opt->steps_min > 0 ? opt->steps_min : GEN_NMT_SRC_MIN;
    int src_max = opt->steps_max > 0 ? opt->steps_max : GEN_NMT_SRC_MAX;
    int tgt_min = opt->steps_min > 0 ? opt->steps_min : GEN_NMT_TGT_MIN;
    int tgt_max = opt->steps_max > 0 ? opt->steps_max : GEN_NMT_TGT_MAX;
    int src = gen_spread(index, src_min, src_max);
    int tgt = tgt_min + (int)pb_rng_below(&g.rng, (uint64_t)(tgt_max - tgt_min + 1));
    gen_tensor enc_flow = GEN_NONE;
    gen_nmt_state st;
    gen_nmt_att att = {0};
    att.bahdanau = (int)pb_rng_below(&g.rng, 2);

    gen_push(&g, GEN_GROUP, "input");
    gen_shape io[3] = {gen_shape1(g.batch * src), gen_shape1(g.batch * tgt),
                       gen_shape1(g.batch * tgt)};
    gen_tensor batch = gen_source(&g, "IteratorGetNext", "IteratorGetNext", io, 3);
    gen_pop(&g);
    gen_push(&g, GEN_SCOPE, "dynamic_seq2seq");
    gen_tensor src_emb = gen_nmt_embed(&g, "encoder", GEN_NMT_SRC_VOCAB, batch);
    gen_tensor tgt_emb = gen_nmt_embed(&g, "decoder", GEN_NMT_TGT_VOCAB, gen_port(batch, 1));
    gen_nmt_encoder(&g, src_emb, src, &enc_flow, &st);
    gen_push(&g, GEN_SCOPE, "decoder");
    gen_nmt_memory(&g, enc_flow, src, &att);
    gen_pop(&g);
    gen_tensor dec_flow = gen_nmt_decoder(&g, tgt_emb, tgt, &att, &st);
    gen_push(&g, GEN_GROUP, "decoder/output_projection");
    gen_tensor kernel = gen_variable(&g, "kernel", gen_shape2(g.opt.width, GEN_NMT_TGT_VOCAB));
    gen_tensor logits = gen_matmul(&g, gen_nmt_ta_gather(&g, dec_flow, tgt), kernel, 0);
    gen_tensor loss = gen_xent_loss(&g, logits, gen_port(batch, 2));
    gen_pop(&g);
    gen_pop(&g);
    gen_train(&g, loss, GEN_OPT_ADAM, 1);
    int rc = gen_finish(&g, name, out, err);
    gen_free(&g);
    return rc;
}
