/* gen_transformer.c — TAG's Transformer: lilianweng/transformer-tensorflow as TAG's
 * gen_raw_data.py builds it (its own Adam, then TAG's Adam on the summed loss). */
#include "gen_model.h"

#include <stdio.h>

/*
 * TAG (ylxdzsw/tag gnn/gen_raw_data.py, `transformer`): Transformer(num_heads 8, d_model 512,
 * d_ff 2048) with 6 encoder and 6 decoder layers, sequences of 10, batch 480, the WMT'14 en-de
 * vocabularies (vocab.50K.en / .de plus <pad>: 50,001 words each), dropout 0.1 (tf.nn.dropout),
 * label smoothing 0.1, then TAG's AdamOptimizer(0.2).minimize(reduce_sum(loss)); the whole
 * GraphDef is counted, variables glorot-uniform (GEN_TF_UNIFORM).
 *
 * One optimizer, not two.  TAG imports its own copy of transformer.py (its build_model takes a
 * dataset name and a fourth argument, unlike lilianweng's, and the copy is not in TAG's
 * repository).  lilianweng's build_model also minimizes the loss with its own Adam; with that
 * second backward pass and second set of slots the graph has 26,708 ops (+58 % against TAG's
 * 16,859), without it 15,473 (-8.2 %), so TAG's copy evidently does not build its own train
 * op.  The vocabulary: load_vocab lower-cases the words and drops duplicates, which the paper's
 * 407 MiB suggests leaves ~40,700 per side; the files are not at hand, so the 50,001 upper bound
 * is kept (parameters +13 %).
 *
 * transformer.py: the input and the target each embedded (embed_lookup) plus the sinusoid table
 * looked up by a tiled range, then dropout; an encoder layer is layer_norm(x + attention(x)) and
 * layer_norm(x + ff(x)); a decoder layer adds a masked self-attention before the attention over
 * the encoder output (whose query is the layer's input, as the code has it).  Attention: Q, K, V
 * dense layers with ReLU, each split into 8 heads along the features and concatenated along the
 * batch; Q K^T through a Transpose of K; the decoder's lower-triangular mask (Tile of a Const)
 * applied as out * m + (1 - m) * -1e10; softmax of out / sqrt(64); times V; split back and
 * concatenated along the features; the output dense layer and dropout.  Feed-forward: dense 2048
 * with ReLU, dense 512, dropout.  tf.layers.dense on [batch, 10, features] is TF 1.14's static
 * tensordot: Transpose and Reshape of the input and of the kernel, MatMul, Reshape back, then
 * BiasAdd.  The output dense layer over the target vocabulary, its softmax and argmax (the
 * prediction, not in the loss), and the mean softmax cross-entropy against the label-smoothed
 * one-hot targets.  Groups: each dense layer, each attention's heads and core, each layer norm,
 * the embeddings and the loss.
 */
#define GEN_TF_SEQ 10
#define GEN_TF_D 512
#define GEN_TF_FF 2048
#define GEN_TF_HEADS 8
#define GEN_TF_LAYERS 6
#define GEN_TF_VOCAB 50001

/* A Transpose with its perm Const. */
static gen_tensor gen_tf_transpose(gen_ctx *g, gen_tensor x, gen_shape to)
{
    gen_tensor in[2] = {x, gen_const(g, "transpose/perm", gen_shape1(to.rank))};
    return gen_op_emit(g, "Transpose", "transpose", GEN_GRAD_TRANSPOSE, in, 2, &to, 1, 0);
}

/* tf.layers.dense(x [B, S, k], units, activation) in group `scope`. */
static gen_tensor gen_tf_dense(gen_ctx *g, const char *scope, gen_tensor x, int units, int relu)
{
    gen_push(g, GEN_GROUP, "%s", scope);
    gen_shape s = gen_shape_of(g, x);
    long long k = s.d[2], rows = s.d[0] * s.d[1];
    gen_tensor w = gen_variable(g, "kernel", gen_shape2(k, units));
    gen_tensor bias = gen_variable(g, "bias", gen_shape1(units));
    gen_push(g, GEN_SCOPE, "Tensordot");
    gen_tensor a = gen_reshape(g, gen_tf_transpose(g, x, s), gen_shape2(rows, k));
    gen_tensor b =
        gen_reshape(g, gen_tf_transpose(g, w, gen_shape2(k, units)), gen_shape2(k, units));
    gen_tensor y = gen_reshape(g, gen_matmul(g, a, b, 0), gen_shape3(s.d[0], s.d[1], units));
    gen_pop(g);
    y = gen_bias_add(g, y, bias);
    if (relu)
        y = gen_unary(g, "Relu", y);
    gen_pop(g);
    return y;
}

/* A sublayer's end: the dense layer to d_model (no activation), then tf.nn.dropout. */
static gen_tensor gen_tf_dense_dropout(gen_ctx *g, const char *scope, gen_tensor x)
{
    x = gen_tf_dense(g, scope, x, GEN_TF_D, 0);
    gen_push(g, GEN_GROUP, "dropout");
    x = gen_slim_dropout(g, x);
    gen_pop(g);
    return x;
}

/* tf.concat(tf.split(x, 8, axis=2), axis=0): [B, S, d] -> [8B, S, d/8]. */
static gen_tensor gen_tf_split_heads(gen_ctx *g, gen_tensor x)
{
    gen_shape s = gen_shape_of(g, x);
    gen_tensor parts = gen_split(g, x, GEN_TF_HEADS), p[GEN_TF_HEADS];
    for (int h = 0; h < GEN_TF_HEADS; h++)
        p[h] = gen_port(parts, h);
    gen_shape o = gen_shape3(s.d[0] * GEN_TF_HEADS, s.d[1], s.d[2] / GEN_TF_HEADS);
    return gen_op_emit(g, "ConcatV2", "concat", GEN_GRAD_CONCAT, p, GEN_TF_HEADS, &o, 1, 0);
}

/* tf.concat(tf.split(x, 8, axis=0), axis=2): [8B, S, d/8] -> [B, S, d]. */
static gen_tensor gen_tf_merge_heads(gen_ctx *g, gen_tensor x)
{
    gen_shape s = gen_shape_of(g, x), part = s;
    part.d[0] /= GEN_TF_HEADS;
    gen_shape parts_s[GEN_TF_HEADS];
    for (int h = 0; h < GEN_TF_HEADS; h++)
        parts_s[h] = part;
    gen_tensor parts = gen_op_emit(g, "Split", "split", GEN_GRAD_SPLIT, &x, 1, parts_s,
                                   GEN_TF_HEADS, 0),
               p[GEN_TF_HEADS];
    for (int h = 0; h < GEN_TF_HEADS; h++)
        p[h] = gen_port(parts, h);
    gen_shape o = gen_shape3(part.d[0], s.d[1], s.d[2] * GEN_TF_HEADS);
    return gen_op_emit(g, "ConcatV2", "concat", GEN_GRAD_CONCAT, p, GEN_TF_HEADS, &o, 1, 0);
}

/* multihead_attention in scope `scope`: query [B, S, d] over memory. */
static gen_tensor gen_tf_attention(gen_ctx *g, const char *scope, gen_tensor query,
                                   gen_tensor memory, int masked)
{
    gen_push(g, GEN_SCOPE, "%s", scope);
    gen_tensor q = gen_tf_dense(g, "dense", query, GEN_TF_D, 1);
    gen_tensor k = gen_tf_dense(g, "dense_1", memory, GEN_TF_D, 1);
    gen_tensor v = gen_tf_dense(g, "dense_2", memory, GEN_TF_D, 1);
    gen_push(g, GEN_GROUP, "heads");
    q = gen_tf_split_heads(g, q);
    k = gen_tf_split_heads(g, k);
    v = gen_tf_split_heads(g, v);
    gen_shape ks = gen_shape_of(g, k);
    gen_tensor out =
        gen_matmul(g, q, gen_tf_transpose(g, k, gen_shape3(ks.d[0], ks.d[2], ks.d[1])), 0);
    gen_shape os = gen_shape_of(g, out), scalar = gen_shape0();
    if (masked) { /* construct_binary_mask: tile(expand_dims(Const)) */
        gen_tensor m = gen_const(g, "Const", gen_shape3(1, os.d[1], os.d[2]));
        m = gen_op_emit(g, "Tile", "Tile", GEN_GRAD_NONE, &m, 1, &os, 1, 0);
        gen_tensor one[2] = {gen_const(g, "sub/x", scalar), m};
        gen_tensor neg =
            gen_op_emit(g, "Sub", "sub", GEN_GRAD_NONE, one, 2, &os, 1, gen_shape_elems(os));
        gen_tensor big[2] = {neg, gen_const(g, "mul_1/y", scalar)};
        gen_tensor add =
            gen_op_emit(g, "Mul", "mul_1", GEN_GRAD_NONE, big, 2, &os, 1, gen_shape_elems(os));
        out = gen_binary(g, "AddV2", gen_binary(g, "Mul", out, m), add);
    }
    gen_tensor d = gen_const(g, "Cast/x", scalar);
    d = gen_op_emit(g, "Cast", "Cast", GEN_GRAD_NONE, &d, 1, &scalar, 1, 1);
    d = gen_op_emit(g, "Sqrt", "Sqrt", GEN_GRAD_NONE, &d, 1, &scalar, 1, 1);
    out = gen_softmax(g, gen_broadcast(g, "RealDiv", out, d));
    out = gen_tf_merge_heads(g, gen_matmul(g, out, v, 0));
    gen_pop(g);
    out = gen_tf_dense_dropout(g, "dense_3", out);
    gen_pop(g);
    return out;
}

static gen_tensor gen_tf_ff(gen_ctx *g, gen_tensor x)
{
    gen_push(g, GEN_SCOPE, "ff");
    x = gen_tf_dense_dropout(g, "dense_1", gen_tf_dense(g, "dense", x, GEN_TF_FF, 1));
    gen_pop(g);
    return x;
}

/* layer_norm(x + y) in its own group ("LayerNorm", "LayerNorm_1", ... in a layer). */
static gen_tensor gen_tf_add_norm(gen_ctx *g, int index, gen_tensor x, gen_tensor y)
{
    if (index)
        gen_push(g, GEN_GROUP, "LayerNorm_%d", index);
    else
        gen_push(g, GEN_GROUP, "LayerNorm");
    x = gen_slim_layer_norm(g, gen_binary(g, "AddV2", x, y));
    gen_pop(g);
    return x;
}

/* preprocess: embedding plus the sinusoid table, dropout. */
static gen_tensor gen_tf_preprocess(gen_ctx *g, const char *scope, gen_tensor ids, int batch)
{
    gen_push(g, GEN_GROUP, "%s", scope);
    gen_shape s = gen_shape3(batch, GEN_TF_SEQ, GEN_TF_D), seq = gen_shape1(GEN_TF_SEQ);
    gen_tensor table = gen_variable(g, "embed_lookup", gen_shape2(GEN_TF_VOCAB, GEN_TF_D));
    gen_tensor in[2] = {table, ids};
    gen_tensor x = gen_op_emit(g, "GatherV2", "embedding_lookup", GEN_GRAD_GATHER, in, 2, &s, 1, 0);
    gen_tensor pos = gen_op_emit(g, "Range", "range", GEN_GRAD_NONE, NULL, 0, &seq, 1, GEN_TF_SEQ);
    gen_shape row = gen_shape2(1, GEN_TF_SEQ), all = gen_shape2(batch, GEN_TF_SEQ);
    pos = gen_op_emit(g, "ExpandDims", "ExpandDims", GEN_GRAD_NONE, &pos, 1, &row, 1, 0);
    pos = gen_op_emit(g, "Tile", "Tile", GEN_GRAD_NONE, &pos, 1, &all, 1, 0);
    gen_tensor lk[2] = {gen_const(g, "Const", gen_shape2(GEN_TF_SEQ, GEN_TF_D)), pos};
    pos = gen_op_emit(g, "GatherV2", "embedding_lookup_1", GEN_GRAD_NONE, lk, 2, &s, 1, 0);
    x = gen_slim_dropout(g, gen_binary(g, "AddV2", x, pos));
    gen_pop(g);
    return x;
}

int gen_transformer_generate(const gen_model_args *a, const char *name, pb_graph **out,
                             pb_error *err)
{
    int b = a->batch;
    gen_ctx g;
    gen_init(&g, a->seed, b);
    g.tf_graphdef = GEN_TF_UNIFORM;
    gen_shape ids = gen_shape2(b, GEN_TF_SEQ);
    gen_push(&g, GEN_SCOPE, "transformer");
    gen_tensor input = gen_source(&g, "Placeholder", "input", &ids, 1);
    gen_tensor target = gen_source(&g, "Placeholder", "target", &ids, 1);
    gen_tensor x = gen_tf_preprocess(&g, "input_preprocess", input, b);
    for (int l = 0; l < GEN_TF_LAYERS; l++) {
        gen_push(&g, GEN_SCOPE, "encoder/enc_%d", l);
        x = gen_tf_add_norm(&g, 0, x, gen_tf_attention(&g, "attn", x, x, 0));
        x = gen_tf_add_norm(&g, 1, x, gen_tf_ff(&g, x));
        gen_pop(&g);
    }
    gen_tensor enc = x;
    x = gen_tf_preprocess(&g, "target_preprocess", target, b);
    for (int l = 0; l < GEN_TF_LAYERS; l++) {
        gen_push(&g, GEN_SCOPE, "decoder/dec_%d", l);
        gen_tensor y = gen_tf_add_norm(&g, 0, x, gen_tf_attention(&g, "self_attn", x, x, 1));
        y = gen_tf_add_norm(&g, 1, y, gen_tf_attention(&g, "attn", x, enc, 0));
        x = gen_tf_add_norm(&g, 2, y, gen_tf_ff(&g, y));
        gen_pop(&g);
    }
    gen_tensor logits = gen_tf_dense(&g, "dense", x, GEN_TF_VOCAB, 0);
    gen_push(&g, GEN_GROUP, "loss");
    gen_shape oh = gen_shape3(b, GEN_TF_SEQ, GEN_TF_VOCAB), scalar = gen_shape0();
    double e = gen_shape_elems(oh);
    gen_tensor labels = gen_op_emit(&g, "OneHot", "one_hot", GEN_GRAD_NONE, &target, 1, &oh, 1, e);
    gen_tensor ls[2] = {gen_const(&g, "mul/x", scalar), labels};
    labels = gen_op_emit(&g, "Mul", "mul", GEN_GRAD_NONE, ls, 2, &oh, 1, e);
    gen_tensor la[2] = {labels, gen_const(&g, "add/y", scalar)};
    labels = gen_op_emit(&g, "AddV2", "add", GEN_GRAD_NONE, la, 2, &oh, 1, e);
    gen_tensor probas = gen_softmax(&g, logits); /* the prediction, outside the loss */
    gen_shape pred = gen_shape2(b, GEN_TF_SEQ);
    gen_op_emit(&g, "ArgMax", "ArgMax", GEN_GRAD_NONE, &probas, 1, &pred, 1, e);
    long long rows = (long long)b * GEN_TF_SEQ;
    gen_tensor loss = gen_xent_loss(&g, gen_reshape(&g, logits, gen_shape2(rows, GEN_TF_VOCAB)),
                                    gen_reshape(&g, labels, gen_shape2(rows, GEN_TF_VOCAB)));
    gen_pop(&g);
    gen_pop(&g);
    gen_tensor total = gen_op_emit(&g, "Sum", "Sum", GEN_GRAD_MEAN, &loss, 1, &scalar, 1, 1);
    gen_train(&g, total, GEN_OPT_ADAM, 0);
    gen_tf_init_op(&g);
    int rc = gen_model_finish(&g, a, name, out, err);
    gen_free(&g);
    return rc;
}
