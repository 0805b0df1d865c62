/* gen_bert.c — BERT-Small and BERT-Large as TAG trains them: google-research/bert modeling.py
 * with a SQuAD span head, Adam. */
#include "gen_model.h"

#include <stdio.h>

/*
 * TAG (ylxdzsw/tag gnn/gen_raw_data.py, `bert` and `berts`; configs bert/bert_{large,small}/
 * bert_config.json): BertModel with hidden H, intermediate I, L layers, 16 heads, vocabulary
 * 305,220, 2 token types, GELU, dropout 0.1, sequences of 128 fed as float placeholders cast to
 * int32 (x100), SQuAD's start/end logits and their mean one-hot log-softmax loss, reduce_sum, Adam;
 * the whole GraphDef is counted, variables initialised by truncated_normal(0.02)
 * (GEN_TF_NORMAL).  BERT-Small: H = I = 1024, L = 4, 512 positions; BERT-Large: H = I = 2048,
 * L = 24, 1024 positions.
 *
 * Per layer (modeling.py transformer_model on the [B*S, H] matrix): query / key / value dense
 * layers, each reshaped and transposed to heads, scores = q k^T (BatchMatMul) scaled by
 * 1/sqrt(d), the expanded attention mask turned into an adder (1 - m) * -10000 and added, softmax,
 * dropout, context = probs v, transposed and reshaped back, the output dense layer, dropout,
 * residual add and layer norm (tf.contrib.layers.layer_norm: moments, rsqrt, scale and shift);
 * the intermediate dense layer with GELU (tanh approximation, 8 ops), the output dense layer,
 * dropout, residual add, layer norm.  The pooler is built but is not in the loss.
 * Groups: the embeddings, each layer's attention, attention output, intermediate and output
 * blocks, the pooler, the SQuAD head and loss.
 */
typedef struct gen_bert_cfg {
    int hidden, intermediate, layers, positions;
} gen_bert_cfg;

#define GEN_BERT_SEQ 128
#define GEN_BERT_HEADS 16
#define GEN_BERT_VOCAB 305220

static gen_tensor gen_bert_scalar(gen_ctx *g, const char *name)
{
    return gen_const(g, name, gen_shape0());
}

/* tf.layers.dense: MatMul and BiasAdd reading "<scope>/kernel" and "<scope>/bias". */
static gen_tensor gen_bert_dense(gen_ctx *g, const char *scope, gen_tensor x, int units)
{
    gen_push(g, GEN_SCOPE, "%s", scope);
    gen_shape s = gen_shape_of(g, x);
    gen_tensor y =
        gen_matmul(g, x, gen_variable(g, "kernel", gen_shape2(s.d[s.rank - 1], units)), 0);
    y = gen_bias_add(g, y, gen_variable(g, "bias", gen_shape1(units)));
    gen_pop(g);
    return y;
}

/* modeling.py gelu: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static gen_tensor gen_bert_gelu(gen_ctx *g, gen_tensor x)
{
    gen_tensor cube = gen_broadcast(g, "Pow", x, gen_bert_scalar(g, "Pow/y"));
    gen_tensor inner =
        gen_binary(g, "AddV2", x, gen_broadcast(g, "Mul", cube, gen_bert_scalar(g, "mul/x")));
    gen_tensor t =
        gen_unary(g, "Tanh", gen_broadcast(g, "Mul", inner, gen_bert_scalar(g, "mul_1/x")));
    gen_tensor cdf =
        gen_broadcast(g, "Mul", gen_broadcast(g, "AddV2", t, gen_bert_scalar(g, "add_1/x")),
                      gen_bert_scalar(g, "mul_2/x"));
    return gen_binary(g, "Mul", x, cdf);
}

/* [B*S, H] -> [B*heads, S, d] (Reshape, then Transpose; heads merged into the batch axis). */
static gen_tensor gen_bert_heads(gen_ctx *g, gen_tensor x, int batch, int hidden)
{
    int d = hidden / GEN_BERT_HEADS;
    gen_tensor r = gen_reshape(g, x, gen_shape4(batch, GEN_BERT_SEQ, GEN_BERT_HEADS, d));
    gen_shape o = {3, {(long long)batch * GEN_BERT_HEADS, GEN_BERT_SEQ, d, 1}};
    gen_tensor in[2] = {r, gen_const(g, "transpose/perm", gen_shape1(4))};
    return gen_op_emit(g, "Transpose", "transpose", GEN_GRAD_TRANSPOSE, in, 2, &o, 1, 0);
}

static gen_tensor gen_bert_bmm(gen_ctx *g, gen_tensor a, gen_tensor b, int transpose_b)
{
    gen_shape sa = gen_shape_of(g, a), sb = gen_shape_of(g, b), o = sa;
    o.d[2] = transpose_b ? sb.d[1] : sb.d[2];
    gen_tensor in[2] = {a, b};
    return gen_op_emit(g, "BatchMatMulV2", "MatMul", GEN_GRAD_MATMUL, in, 2, &o, 1,
                       2.0 * gen_shape_elems(o) * (double)sa.d[2]);
}

static gen_tensor gen_bert_attention(gen_ctx *g, gen_tensor x, gen_tensor adder, int batch,
                                     int hidden)
{
    gen_push(g, GEN_GROUP, "attention/self");
    gen_tensor q = gen_bert_heads(g, gen_bert_dense(g, "query", x, hidden), batch, hidden);
    gen_tensor k = gen_bert_heads(g, gen_bert_dense(g, "key", x, hidden), batch, hidden);
    gen_tensor v = gen_bert_heads(g, gen_bert_dense(g, "value", x, hidden), batch, hidden);
    gen_tensor scores = gen_bert_bmm(g, q, k, 1);
    scores = gen_broadcast(g, "Mul", scores, gen_bert_scalar(g, "Mul/y"));
    scores = gen_broadcast(g, "AddV2", scores, adder);
    gen_tensor probs = gen_slim_dropout(g, gen_softmax(g, scores));
    gen_tensor ctx = gen_bert_bmm(g, probs, v, 0);
    gen_shape o = gen_shape4(batch, GEN_BERT_SEQ, GEN_BERT_HEADS, hidden / GEN_BERT_HEADS);
    gen_tensor in[2] = {ctx, gen_const(g, "transpose_3/perm", gen_shape1(4))};
    ctx = gen_op_emit(g, "Transpose", "transpose_3", GEN_GRAD_TRANSPOSE, in, 2, &o, 1, 0);
    ctx = gen_reshape(g, ctx, gen_shape2((long long)batch * GEN_BERT_SEQ, hidden));
    gen_pop(g);
    return ctx;
}

/* dense, dropout, residual add, layer norm ("attention/output" and "output"). */
static gen_tensor gen_bert_output(gen_ctx *g, const char *scope, gen_tensor x, gen_tensor residual,
                                  int hidden)
{
    gen_push(g, GEN_GROUP, "%s", scope);
    gen_tensor y = gen_slim_dropout(g, gen_bert_dense(g, "dense", x, hidden));
    y = gen_slim_layer_norm(g, gen_binary(g, "AddV2", y, residual));
    gen_pop(g);
    return y;
}

/* The feature placeholders as TAG feeds them: tf.cast(100 * placeholder, int32). */
static gen_tensor gen_bert_feature(gen_ctx *g, gen_shape s)
{
    gen_tensor p = gen_source(g, "Placeholder", "Placeholder", &s, 1);
    gen_tensor m = gen_broadcast(g, "Mul", p, gen_bert_scalar(g, "mul/x"));
    return gen_op_emit(g, "Cast", "Cast", GEN_GRAD_NONE, &m, 1, &s, 1, gen_shape_elems(s));
}

static gen_tensor gen_bert_embeddings(gen_ctx *g, const gen_bert_cfg *c, gen_tensor ids,
                                      gen_tensor types, int batch)
{
    long long n = (long long)batch * GEN_BERT_SEQ;
    gen_push(g, GEN_GROUP, "bert/embeddings");
    gen_tensor table = gen_variable(g, "word_embeddings", gen_shape2(GEN_BERT_VOCAB, c->hidden));
    gen_tensor flat = gen_reshape(g, ids, gen_shape1(n));
    gen_tensor x = gen_gather(g, table, flat);
    gen_tensor type_table = gen_variable(g, "token_type_embeddings", gen_shape2(2, c->hidden));
    gen_tensor t = gen_reshape(g, types, gen_shape1(n));
    gen_shape oh = gen_shape2(n, 2);
    t = gen_op_emit(g, "OneHot", "one_hot", GEN_GRAD_NONE, &t, 1, &oh, 1, (double)n * 2);
    x = gen_binary(g, "AddV2", x, gen_matmul(g, t, type_table, 0));
    gen_tensor pos = gen_variable(g, "position_embeddings", gen_shape2(c->positions, c->hidden));
    gen_shape ps = gen_shape2(GEN_BERT_SEQ, c->hidden);
    gen_tensor sl[2] = {pos, gen_const(g, "Slice/begin", gen_shape1(2))};
    pos = gen_op_emit(g, "Slice", "Slice", GEN_GRAD_CONCAT, sl, 2, &ps, 1, 0);
    x = gen_broadcast(g, "AddV2", x, pos);
    x = gen_slim_dropout(g, gen_slim_layer_norm(g, x));
    gen_pop(g);
    return x;
}

/* create_attention_mask_from_input_mask, then the adder every layer expands: [B, S, S]. */
static gen_tensor gen_bert_mask(gen_ctx *g, gen_tensor mask, int batch)
{
    gen_push(g, GEN_GROUP, "bert/encoder");
    gen_shape s = gen_shape4(batch, 1, GEN_BERT_SEQ, GEN_BERT_SEQ);
    gen_tensor m = gen_reshape(g, mask, gen_shape4(batch, 1, 1, GEN_BERT_SEQ));
    m = gen_op_emit(g, "Cast", "Cast", GEN_GRAD_NONE, &m, 1, &s, 1, 0);
    gen_tensor ones = gen_op_emit(g, "Fill", "ones", GEN_GRAD_NONE, NULL, 0, &s, 1, 0);
    m = gen_broadcast(g, "Mul", ones, m);
    gen_pop(g);
    return m;
}

static int gen_bert_generate(const gen_bert_cfg *c, const gen_model_args *a, const char *name,
                             pb_graph **out, pb_error *err)
{
    int b = a->batch, h = c->hidden;
    long long n = (long long)b * GEN_BERT_SEQ;
    gen_ctx g;
    gen_init(&g, a->seed, b);
    g.tf_graphdef = GEN_TF_NORMAL;
    gen_tensor ids = gen_bert_feature(&g, gen_shape2(b, GEN_BERT_SEQ));
    gen_tensor mask = gen_bert_feature(&g, gen_shape2(b, GEN_BERT_SEQ));
    gen_tensor types = gen_bert_feature(&g, gen_shape2(b, GEN_BERT_SEQ));
    gen_tensor start = gen_bert_feature(&g, gen_shape1(b));
    gen_tensor end = gen_bert_feature(&g, gen_shape1(b));
    gen_tensor x = gen_bert_embeddings(&g, c, ids, types, b);
    gen_tensor m = gen_bert_mask(&g, mask, b);
    x = gen_reshape(&g, x, gen_shape2(n, h));
    for (int l = 0; l < c->layers; l++) {
        gen_push(&g, GEN_SCOPE, "bert/encoder/layer_%d", l);
        gen_push(&g, GEN_SCOPE, "attention");
        gen_tensor e = gen_op_emit(&g, "ExpandDims", "ExpandDims", GEN_GRAD_NONE, &m, 1,
                                   &(gen_shape){4, {b, 1, GEN_BERT_SEQ, GEN_BERT_SEQ}}, 1, 0);
        gen_tensor adder =
            gen_broadcast(&g, "Mul", gen_broadcast(&g, "Sub", gen_bert_scalar(&g, "sub/x"), e),
                          gen_bert_scalar(&g, "mul/y"));
        gen_pop(&g);
        gen_tensor att = gen_bert_attention(&g, x, adder, b, h);
        gen_tensor y = gen_bert_output(&g, "attention/output", att, x, h);
        gen_push(&g, GEN_GROUP, "intermediate");
        gen_tensor mid = gen_bert_gelu(&g, gen_bert_dense(&g, "dense", y, c->intermediate));
        gen_pop(&g);
        x = gen_bert_output(&g, "output", mid, y, h);
        gen_pop(&g);
    }
    gen_tensor seq = gen_reshape(&g, x, gen_shape4(b, GEN_BERT_SEQ, h, 1));
    gen_push(&g, GEN_GROUP, "bert/pooler");
    gen_shape first = gen_shape2(b, h);
    gen_tensor f =
        gen_op_emit(&g, "StridedSlice", "strided_slice", GEN_GRAD_SLICE, &seq, 1, &first, 1, 0);
    f = gen_unary(&g, "Tanh", gen_bert_dense(&g, "dense", f, h));
    gen_pop(&g);
    gen_push(&g, GEN_GROUP, "squad");
    gen_tensor w = gen_variable(&g, "output_weights", gen_shape2(2, h));
    gen_tensor logits = gen_matmul(&g, x, w, 1);
    logits = gen_bias_add(&g, logits, gen_variable(&g, "output_bias", gen_shape1(2)));
    gen_tensor side = gen_split(&g, logits, 2); /* transpose + unstack: start and end logits */
    gen_tensor loss[2];
    for (int k = 0; k < 2; k++) {
        gen_tensor lg = gen_reshape(&g, gen_port(side, k), gen_shape2(b, GEN_BERT_SEQ));
        gen_shape os = gen_shape2(b, GEN_BERT_SEQ);
        gen_tensor pos = k ? end : start;
        gen_tensor oh = gen_op_emit(&g, "OneHot", "one_hot", GEN_GRAD_NONE, &pos, 1, &os, 1, 0);
        gen_tensor lp = gen_op_emit(&g, "LogSoftmax", "LogSoftmax", GEN_GRAD_SOFTMAX, &lg, 1, &os,
                                    1, 5.0 * (double)n);
        gen_tensor prod = gen_binary(&g, "Mul", oh, lp);
        gen_shape bs = gen_shape1(b), scalar = gen_shape0();
        gen_tensor sum = gen_op_emit(&g, "Sum", "Sum", GEN_GRAD_MEAN, &prod, 1, &bs, 1, (double)n);
        gen_tensor mean = gen_op_emit(&g, "Mean", "Mean", GEN_GRAD_MEAN, &sum, 1, &scalar, 1, b);
        loss[k] = gen_op_emit(&g, "Neg", "Neg", GEN_GRAD_IDENTITY, &mean, 1, &scalar, 1, 1);
    }
    gen_tensor total = gen_broadcast(&g, "RealDiv", gen_binary(&g, "AddV2", loss[0], loss[1]),
                                     gen_bert_scalar(&g, "truediv/y"));
    gen_shape scalar = gen_shape0();
    total = gen_op_emit(&g, "Sum", "Sum", GEN_GRAD_MEAN, &total, 1, &scalar, 1, 1);
    gen_pop(&g);
    gen_train(&g, total, GEN_OPT_ADAM, 0);
    gen_tf_init_op(&g);
    int rc = gen_model_finish(&g, a, name, out, err);
    gen_free(&g);
    return rc;
}

int gen_bert_small_generate(const gen_model_args *a, const char *name, pb_graph **out,
                            pb_error *err)
{
    gen_bert_cfg c = {1024, 1024, 4, 512};
    return gen_bert_generate(&c, a, name, out, err);
}

int gen_bert_large_generate(const gen_model_args *a, const char *name, pb_graph **out,
                            pb_error *err)
{
    gen_bert_cfg c = {2048, 2048, 24, 1024};
    return gen_bert_generate(&c, a, name, out, err);
}
