/* gen_transformer_xl.c — GDP's Transformer-XL: kimiyoung/transformer-xl (tf/model.py), the
 * 256-token sequence unrolled as 4 segments of 64 with the memory between them. */
#include "gen_model.h"

#include <stdio.h>

/*
 * specs/gdp.md §10.2 (GDP §6.3.5; kimiyoung/transformer-xl tf/model.py): batch 64, d_model 500,
 * d_inner 1000, 10 heads of 50, vocabulary 10,000 with a full softmax, L layers, relative
 * positional attention with the r_w / r_r biases shared by the layers (untie_r off), post-layer-
 * norm, Adam with gradients clipped by global norm.  The spec's [I] unroll: the 256-token
 * sequence as 4 segments of 64 in one graph, each layer's input of segment s kept (StopGradient)
 * as the memory (mem_len 64) of that layer in segment s + 1; segment 0 reads zero memories.
 *
 * Per segment and layer (rel_multihead_attn and positionwise_FF): the memory concatenated before
 * the input, the qkv projection and its 3-way Split, the last 64 queries, the projected relative
 * positions r; q + r_w_bias against the keys (AC) and q + r_r_bias against r (BD, through
 * rel_shift: Pad, Reshape, Slice, Reshape), each a reshape/transpose to heads and one
 * BatchMatMulV2 (TF 1.14 lowers the einsums that way); (AC + BD) scaled, the causal mask applied
 * as score (1 - m) - 1e30 m, softmax over the keys, probabilities times values, back to
 * [tokens, 500], the output projection, residual and layer norm; then dense 1000 + ReLU, dense
 * 500, residual and layer norm.  Embedding lookup scaled by sqrt(d); the sinusoid of the relative
 * positions built once (Range, outer product, Sin, Cos, ConcatV2).  Per segment the logits, the
 * softmax cross-entropy and its mean; the segment losses averaged.
 *
 * Options (gen_model.c): segments (4), mem_len (64), mask (1), dropout (0) and vocab (10k).  Each
 * layer's memory for the next segment is kimiyoung's _cache_mem: the last mem_len rows of [memory;
 * the layer's input] (ConcatV2, StridedSlice, StopGradient).
 *
 * Not matched: GDP's 2-layer graph has 2,618 ops; this one has 3,314 (+26.6 %).  Per layer and
 * segment it has 362 ops: 72 forward (the spec estimates ~80) and 290 gradient ops, ~4x the
 * forward where the spec assumed ~3x.  The gradient ops follow the same TensorFlow rules as the
 * RNNLM and GNMT graphs, which land within 3-5 % of their counts; what makes them 4x here is the
 * attention's broadcasting adds and layer norms (19 BroadcastGradientArgs blocks) and TF's
 * gradient tuples (27 NoOp + 54 Identity).  The configurations tried, none faithful:
 *   - mask=0 (the spec's knob): 3,205 ops, +22.4 %;
 *   - dropout=1 (as kimiyoung trains): 4,458, +70 %;
 *   - segments=3: 2,546, -2.8 %, but 3 x 64 tokens is not the paper's sequence of 256;
 *   - the graph without gradient tuples (what Grappler's dependency optimizer removes): 2,643,
 *     +1.0 %, but counted that way RNNLM and GNMT would be 30-31 % under theirs, and GDP counts
 *     its graphs one way.
 * So the spec's 4 segments are kept and the difference is reported (README).  The paper's other
 * statement, ops "grow roughly proportional with the number of layers", holds: 1,561 ops per
 * layer and 192 besides.  Groups: per segment and layer the attention, the attention output, the
 * feed-forward and the memory cache; each layer's weights; the embedding table; the positions
 * and masks; per segment the embedding and the loss.
 */
#define GEN_TXL_D 500
#define GEN_TXL_INNER 1000
#define GEN_TXL_HEADS 10
#define GEN_TXL_HEAD_D 50
#define GEN_TXL_SEG 64
#define GEN_TXL_MAX_SEGMENTS 16
#define GEN_TXL_MAX_LAYERS 16

/* A dense layer without bias (tf.layers.dense(use_bias=False)) named `scope`: [n, k] -> [n, u]. */
static gen_tensor gen_txl_proj(gen_ctx *g, gen_tensor x, gen_tensor kernel)
{
    return gen_matmul(g, x, kernel, 0);
}

/* Reshape then Transpose: x [rows, ...] to `heads` ([B*H, T, D] or [H, T, D]). */
static gen_tensor gen_txl_to_heads(gen_ctx *g, gen_tensor x, gen_shape split, gen_shape heads)
{
    x = gen_reshape(g, x, split);
    return gen_op_emit(g, "Transpose", "transpose", GEN_GRAD_TRANSPOSE, &x, 1, &heads, 1, 0);
}

/* [a, m, k] x [a, n, k]^T or [a, m, k] x [a, k, n]. */
static gen_tensor gen_txl_bmm(gen_ctx *g, gen_tensor a, gen_tensor b, int transpose_b)
{
    return gen_matmul(g, a, b, transpose_b);
}

typedef struct gen_txl_layer {
    gen_tensor qkv, r, o, ff1_w, ff1_b, ff2_w, ff2_b;
    gen_tensor ln_beta[2], ln_gamma[2]; /* the attention's and the feed-forward's layer norm */
} gen_txl_layer;

typedef struct gen_txl_shared {
    gen_tensor r_w_bias, r_r_bias, pos, mask_keep, mask_drop;
    long long mem_len; /* memory length m; keys span m + the segment */
    int mask;          /* apply the causal mask */
    int dropout;       /* tf.layers.dropout where kimiyoung's model has it */
} gen_txl_shared;

/* tf.layers.dropout(x) when the model is built with dropout, else x. */
static gen_tensor gen_txl_dropout(gen_ctx *g, const gen_txl_shared *s, gen_tensor x)
{
    return s->dropout ? gen_slim_dropout(g, x) : x;
}

/* One layer of one segment; `mem` is the layer's memory [m*B, d].  Returns the output. */
static gen_tensor gen_txl_layer_step(gen_ctx *g, const gen_txl_layer *w, const gen_txl_shared *s,
                                     gen_tensor h, gen_tensor mem, int batch)
{
    long long q = GEN_TXL_SEG, k = s->mem_len + GEN_TXL_SEG, B = batch, H = GEN_TXL_HEADS,
              D = GEN_TXL_HEAD_D;
    gen_push(g, GEN_GROUP, "rel_attn");
    gen_tensor both[2] = {mem, h};
    gen_tensor cat = gen_op_emit(g, "ConcatV2", "concat", GEN_GRAD_CONCAT, both, 2,
                                 &(gen_shape){2, {k * B, GEN_TXL_D, 1, 1}}, 1, 0);
    gen_tensor heads = gen_split(g, gen_txl_proj(g, cat, w->qkv), 3);
    gen_tensor r_k = gen_txl_proj(g, s->pos, w->r);
    gen_tensor wq = gen_op_emit(g, "StridedSlice", "strided_slice", GEN_GRAD_SLICE, &heads, 1,
                                &(gen_shape){2, {q * B, H * D, 1, 1}}, 1, 0);
    gen_tensor rw_q = gen_broadcast(g, "AddV2", wq, s->r_w_bias);
    gen_tensor rr_q = gen_broadcast(g, "AddV2", wq, s->r_r_bias);
    gen_tensor qh = gen_txl_to_heads(g, rw_q, gen_shape4(q, B, H, D), gen_shape3(B * H, q, D));
    gen_tensor kh =
        gen_txl_to_heads(g, gen_port(heads, 1), gen_shape4(k, B, H, D), gen_shape3(B * H, k, D));
    gen_tensor vh =
        gen_txl_to_heads(g, gen_port(heads, 2), gen_shape4(k, B, H, D), gen_shape3(B * H, k, D));
    gen_tensor ac = gen_txl_bmm(g, qh, kh, 1);
    /* BD: per head [q*B, D] x [D, k], then rel_shift and the AC layout */
    gen_tensor rq = gen_txl_to_heads(g, rr_q, gen_shape4(q, B, H, D), gen_shape3(H, q * B, D));
    gen_tensor rk = gen_txl_to_heads(g, r_k, gen_shape3(k, H, D), gen_shape3(H, k, D));
    gen_tensor bd = gen_txl_bmm(g, rq, rk, 1);
    gen_shape padded = gen_shape3(H, q * B, k + 1);
    bd = gen_op_emit(g, "Pad", "Pad", GEN_GRAD_CONCAT, &bd, 1, &padded, 1, 0);
    bd = gen_reshape(g, bd, gen_shape3(H, k + 1, q * B));
    bd = gen_op_emit(g, "Slice", "Slice", GEN_GRAD_SLICE, &bd, 1, &(gen_shape){3, {H, k, q * B, 1}},
                     1, 0);
    bd = gen_reshape(g, bd, gen_shape3(H, q * B, k));
    gen_shape score_s = gen_shape3(B * H, q, k);
    bd = gen_op_emit(g, "Transpose", "transpose", GEN_GRAD_TRANSPOSE, &bd, 1, &score_s, 1, 0);
    gen_tensor score = gen_binary(g, "AddV2", ac, bd);
    score = gen_broadcast(g, "Mul", score, gen_const(g, "scale", gen_shape0()));
    if (s->mask)
        score = gen_broadcast(g, "Sub", gen_broadcast(g, "Mul", score, s->mask_keep), s->mask_drop);
    gen_tensor prob = gen_txl_dropout(g, s, gen_softmax(g, score)); /* dropatt */
    gen_tensor vec = gen_txl_bmm(g, prob, vh, 0);
    vec = gen_op_emit(g, "Transpose", "transpose", GEN_GRAD_TRANSPOSE, &vec, 1,
                      &(gen_shape){4, {q, B, H, D}}, 1, 0);
    vec = gen_reshape(g, vec, gen_shape2(q * B, H * D));
    gen_pop(g);
    gen_push(g, GEN_GROUP, "rel_attn_output");
    gen_tensor y = gen_txl_dropout(g, s, gen_txl_proj(g, vec, w->o));
    gen_push(g, GEN_SCOPE, "LayerNorm");
    y = gen_slim_layer_norm_with(g, gen_binary(g, "AddV2", y, h), w->ln_beta[0], w->ln_gamma[0]);
    gen_pop(g);
    gen_pop(g);
    gen_push(g, GEN_GROUP, "ff");
    gen_tensor f = gen_unary(g, "Relu", gen_bias_add(g, gen_matmul(g, y, w->ff1_w, 0), w->ff1_b));
    f = gen_txl_dropout(g, s, f);
    f = gen_txl_dropout(g, s, gen_bias_add(g, gen_matmul(g, f, w->ff2_w, 0), w->ff2_b));
    gen_push(g, GEN_SCOPE, "LayerNorm");
    f = gen_slim_layer_norm_with(g, gen_binary(g, "AddV2", f, y), w->ln_beta[1], w->ln_gamma[1]);
    gen_pop(g);
    gen_pop(g);
    return f;
}

/* The variables of layer l (scope "transformer/layer_<l>"). */
static gen_txl_layer gen_txl_layer_new(gen_ctx *g, int l)
{
    gen_txl_layer w;
    long long hd = GEN_TXL_HEADS * GEN_TXL_HEAD_D;
    gen_push(g, GEN_GROUP, "transformer/layer_%d/weights", l);
    w.qkv = gen_variable(g, "rel_attn/qkv/kernel", gen_shape2(GEN_TXL_D, 3 * hd));
    w.r = gen_variable(g, "rel_attn/r/kernel", gen_shape2(GEN_TXL_D, hd));
    w.o = gen_variable(g, "rel_attn/o/kernel", gen_shape2(hd, GEN_TXL_D));
    w.ff1_w = gen_variable(g, "ff/layer_1/kernel", gen_shape2(GEN_TXL_D, GEN_TXL_INNER));
    w.ff1_b = gen_variable(g, "ff/layer_1/bias", gen_shape1(GEN_TXL_INNER));
    w.ff2_w = gen_variable(g, "ff/layer_2/kernel", gen_shape2(GEN_TXL_INNER, GEN_TXL_D));
    w.ff2_b = gen_variable(g, "ff/layer_2/bias", gen_shape1(GEN_TXL_D));
    for (int k = 0; k < 2; k++) {
        gen_push(g, GEN_SCOPE, "%s/LayerNorm", k ? "ff" : "rel_attn");
        w.ln_beta[k] = gen_variable(g, "beta", gen_shape1(GEN_TXL_D));
        w.ln_gamma[k] = gen_variable(g, "gamma", gen_shape1(GEN_TXL_D));
        gen_pop(g);
    }
    gen_pop(g);
    return w;
}

/* The sinusoid of the relative positions klen-1 .. 0 ([k, d], no gradient) and the masks. */
static void gen_txl_positions(gen_ctx *g, gen_txl_shared *s)
{
    long long q = GEN_TXL_SEG, k = s->mem_len + GEN_TXL_SEG;
    gen_push(g, GEN_GROUP, "transformer/positions");
    gen_shape half = gen_shape2(k, GEN_TXL_D / 2), seq = gen_shape1(k);
    gen_tensor pos = gen_op_emit(g, "Range", "range", GEN_GRAD_NONE, NULL, 0, &seq, 1, (double)k);
    gen_tensor in[2] = {pos, gen_const(g, "inv_freq", gen_shape1(GEN_TXL_D / 2))};
    gen_tensor outer =
        gen_op_emit(g, "Einsum", "einsum", GEN_GRAD_NONE, in, 2, &half, 1, gen_shape_elems(half));
    gen_tensor sc[2] = {
        gen_op_emit(g, "Sin", "Sin", GEN_GRAD_NONE, &outer, 1, &half, 1, gen_shape_elems(half)),
        gen_op_emit(g, "Cos", "Cos", GEN_GRAD_NONE, &outer, 1, &half, 1, gen_shape_elems(half))};
    s->pos = gen_concat(g, sc, 2);
    if (!s->mask) {
        gen_pop(g);
        return;
    }
    /* the causal mask over [memory; segment] and the two factors it is applied with */
    gen_shape ms = gen_shape3(1, q, k), scalar = gen_shape0();
    gen_tensor m = gen_op_emit(g, "MatrixBandPart", "MatrixBandPart", GEN_GRAD_NONE, NULL, 0, &ms,
                               1, gen_shape_elems(ms));
    gen_tensor one[2] = {gen_const(g, "sub/x", scalar), m};
    s->mask_keep = gen_op_emit(g, "Sub", "sub", GEN_GRAD_NONE, one, 2, &ms, 1, gen_shape_elems(ms));
    gen_tensor big[2] = {m, gen_const(g, "mul/y", scalar)};
    s->mask_drop = gen_op_emit(g, "Mul", "mul", GEN_GRAD_NONE, big, 2, &ms, 1, gen_shape_elems(ms));
    gen_pop(g);
}

int gen_transformer_xl_generate(const gen_model_args *a, const char *name, pb_graph **out,
                                pb_error *err)
{
    int L = a->layers, b = a->batch, S = a->opt[GEN_TXL_OPT_SEGMENTS],
        V = a->opt[GEN_TXL_OPT_VOCAB];
    long long n = (long long)GEN_TXL_SEG * b, m = (long long)a->opt[GEN_TXL_OPT_MEM_LEN] * b;
    gen_ctx g;
    gen_init(&g, a->seed, b);
    gen_shape io[2] = {gen_shape1(n * S), gen_shape2(n * S, V)};
    gen_tensor data = gen_source(&g, "IteratorGetNext", "IteratorGetNext", io, 2);
    gen_push(&g, GEN_GROUP, "transformer/adaptive_embed");
    gen_tensor table = gen_variable(&g, "lookup_table", gen_shape2(V, GEN_TXL_D));
    gen_pop(&g);
    gen_txl_shared s = {.mem_len = a->opt[GEN_TXL_OPT_MEM_LEN],
                        .mask = a->opt[GEN_TXL_OPT_MASK],
                        .dropout = a->opt[GEN_TXL_OPT_DROPOUT]};
    gen_push(&g, GEN_GROUP, "transformer/weights");
    s.r_w_bias = gen_variable(&g, "r_w_bias", gen_shape1(GEN_TXL_HEADS * GEN_TXL_HEAD_D));
    s.r_r_bias = gen_variable(&g, "r_r_bias", gen_shape1(GEN_TXL_HEADS * GEN_TXL_HEAD_D));
    gen_tensor softmax_w = gen_variable(&g, "softmax/weight", gen_shape2(GEN_TXL_D, V));
    gen_tensor softmax_b = gen_variable(&g, "softmax/bias", gen_shape1(V));
    gen_pop(&g);
    gen_txl_layer w[GEN_TXL_MAX_LAYERS];
    gen_tensor mem[GEN_TXL_MAX_LAYERS];
    for (int l = 0; l < L; l++)
        w[l] = gen_txl_layer_new(&g, l);
    gen_txl_positions(&g, &s);
    gen_shape hs = gen_shape2(m, GEN_TXL_D);
    for (int l = 0; l < L; l++)
        mem[l] = gen_source(&g, "Placeholder", "mems", &hs, 1);
    gen_tensor pos = s.pos;
    gen_tensor losses[GEN_TXL_MAX_SEGMENTS];
    for (int seg = 0; seg < S; seg++) {
        gen_push(&g, GEN_SCOPE, "segment_%d", seg);
        gen_push(&g, GEN_GROUP, "embed");
        gen_tensor ids = gen_rnn_step_slice(&g, data, n, 1);
        ids = gen_reshape(&g, ids, gen_shape1(n));
        gen_tensor h = gen_gather(&g, table, ids);
        h = gen_broadcast(&g, "Mul", h, gen_const(&g, "emb_scale", gen_shape0()));
        h = gen_txl_dropout(&g, &s, h);
        s.pos = gen_txl_dropout(&g, &s, pos);
        gen_pop(&g);
        for (int l = 0; l < L; l++) {
            gen_push(&g, GEN_SCOPE, "layer_%d", l);
            gen_tensor in = h;
            h = gen_txl_layer_step(&g, &w[l], &s, h, mem[l], b);
            /* _cache_mem: the last mem_len rows of [memory; the layer's input], without gradient */
            gen_push(&g, GEN_GROUP, "cache_mem");
            gen_tensor both[2] = {mem[l], in};
            gen_shape cs = gen_shape2(m + n, GEN_TXL_D), ms = gen_shape2(m, GEN_TXL_D);
            gen_tensor cat =
                gen_op_emit(&g, "ConcatV2", "concat", GEN_GRAD_NONE, both, 2, &cs, 1, 0);
            cat =
                gen_op_emit(&g, "StridedSlice", "strided_slice", GEN_GRAD_NONE, &cat, 1, &ms, 1, 0);
            mem[l] =
                gen_op_emit(&g, "StopGradient", "StopGradient", GEN_GRAD_NONE, &cat, 1, &ms, 1, 0);
            gen_pop(&g);
            gen_pop(&g);
        }
        gen_push(&g, GEN_GROUP, "loss");
        h = gen_txl_dropout(&g, &s, h);
        gen_tensor logits = gen_bias_add(&g, gen_matmul(&g, h, softmax_w, 0), softmax_b);
        gen_tensor labels = gen_rnn_step_slice(&g, gen_port(data, 1), n, V);
        losses[seg] = gen_xent_loss(&g, logits, labels);
        gen_pop(&g);
        gen_pop(&g);
    }
    gen_push(&g, GEN_GROUP, "loss");
    gen_tensor loss = gen_broadcast(&g, "RealDiv", gen_add_n(&g, losses, S),
                                    gen_const(&g, "segments", gen_shape0()));
    gen_pop(&g);
    gen_train(&g, loss, GEN_OPT_ADAM, 1);
    int rc = gen_model_finish(&g, a, name, out, err);
    gen_free(&g);
    return rc;
}
