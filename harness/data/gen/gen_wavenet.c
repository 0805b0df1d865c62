/* gen_wavenet.c — GDP's WaveNet: ibab/tensorflow-wavenet's training graph, S stacks of 9 dilated
 * layers, with one dilated Conv2D per causal convolution. */
#include "gen_model.h"

#include <stdio.h>

/*
 * specs/gdp.md §10.2 (GDP §6.3.6; ibab/tensorflow-wavenet model.py defaults): batch 64, filter
 * width 2, dilations 1, 2, ..., 256 in every stack, residual and dilation channels 32, skip
 * channels 512, quantisation 256 (mu-law encoded, one-hot input), biases on, Adam.  The receptive
 * field is (w - 1) sum(dilations) + 1 + (w - 1) = 511 S + 2 samples (4 stacks: 2,046, the paper's
 * "2048"); the input is the receptive field plus 4,096 samples (the spec's [I] length, option
 * `input_extra`), so every
 * layer sees [B, 1, T, C] tensors (NHWC with a unit height) of T ~ 4,100 .. 9,200.
 *
 * The network (ibab's _create_network and loss): mu-law encoding of the waveform placeholder,
 * one-hot, the input without its last sample; the causal layer (width-2 conv, 256 -> 32); per
 * dilated layer the filter and gate convolutions (causal, dilated, each with its bias), tanh x
 * sigmoid, the 1x1 "dense" conv with bias added to the input cut to the same width (the
 * residual), and the 1x1 "skip" conv with bias of the last output_width samples; the skip outputs
 * summed, ReLU, 1x1 conv 512 -> 512 with bias, ReLU, 1x1 conv 512 -> 256 with bias; softmax
 * cross-entropy against the one-hot input shifted by the receptive field, its mean; Adam.  GDP
 * counts the training step's ops (no initializers).
 *
 * Two choices follow the spec's calibration note: a causal dilated convolution is one Conv2D op
 * with dilation (ibab's time_to_batch / batch_to_time reshapes would add ~60 ops per layer), and
 * a bias is one BiasAdd (ibab's broadcasting tf.add has a 7-op gradient: the paper's 92 ops per
 * layer leave no room for four of them).  The cuts are strided slices.  Groups: the encoding, the
 * causal layer, each dilated layer, the post-processing and the loss.
 */
#define GEN_WAVENET_LAYERS_PER_STACK 9
#define GEN_WAVENET_RESIDUAL 32
#define GEN_WAVENET_DILATION 32
#define GEN_WAVENET_SKIP 512
#define GEN_WAVENET_QUANT 256

static gen_shape gen_wavenet_shape(long long batch, long long t, long long c)
{
    return gen_shape4(batch, 1, t, c);
}

/* A width-k causal convolution of x [B, 1, T, Cin] with dilation d (VALID, so T - (k-1) d wide),
 * its weights "<name>" [1, k, Cin, Cout] in the current scope, plus a bias "<name>_bias". */
static gen_tensor gen_wavenet_conv(gen_ctx *g, const char *name, gen_tensor x, int k, int dilation,
                                   int cout, int bias)
{
    gen_shape s = gen_shape_of(g, x);
    gen_tensor in[2] = {x, gen_variable(g, name, gen_shape4(1, k, s.d[3], cout))};
    gen_shape o = gen_wavenet_shape(s.d[0], s.d[2] - (long long)(k - 1) * dilation, cout);
    double flops = 2.0 * gen_shape_elems(o) * k * (double)s.d[3];
    gen_tensor y = gen_op_emit(g, "Conv2D", k > 1 ? "causal_conv" : name, GEN_GRAD_CONV2D, in, 2,
                               &o, 1, flops);
    if (bias) {
        char b[48];
        snprintf(b, sizeof b, "%s_bias", name);
        y = gen_bias_add(g, y, gen_variable(g, b, gen_shape1(cout)));
    }
    return y;
}

/* The last `width` samples of x (a strided slice of the time axis). */
static gen_tensor gen_wavenet_tail(gen_ctx *g, gen_tensor x, long long width)
{
    gen_shape s = gen_shape_of(g, x);
    s.d[2] = width;
    return gen_op_emit(g, "StridedSlice", "strided_slice", GEN_GRAD_SLICE, &x, 1, &s, 1, 0);
}

/* One dilated layer: returns the skip contribution [B, 1, out_width, skip]; *x becomes the
 * residual output. */
static gen_tensor gen_wavenet_layer(gen_ctx *g, int index, int dilation, gen_tensor *x,
                                    long long out_width)
{
    gen_push(g, GEN_GROUP, "dilated_stack/layer%d", index);
    gen_tensor f = gen_wavenet_conv(g, "filter", *x, 2, dilation, GEN_WAVENET_DILATION, 1);
    gen_tensor gate = gen_wavenet_conv(g, "gate", *x, 2, dilation, GEN_WAVENET_DILATION, 1);
    gen_tensor out = gen_binary(g, "Mul", gen_unary(g, "Tanh", f), gen_unary(g, "Sigmoid", gate));
    gen_tensor dense = gen_wavenet_conv(g, "dense", out, 1, 1, GEN_WAVENET_RESIDUAL, 1);
    gen_tensor skip =
        gen_wavenet_conv(g, "skip", gen_wavenet_tail(g, out, out_width), 1, 1, GEN_WAVENET_SKIP, 1);
    gen_tensor cut = gen_wavenet_tail(g, *x, gen_shape_of(g, dense).d[2]);
    *x = gen_binary(g, "AddV2", cut, dense);
    gen_pop(g);
    return skip;
}

/* ibab's mu_law_encode of the waveform [B, T] and one_hot: [B, 1, T, 256]. */
static gen_tensor gen_wavenet_encode(gen_ctx *g, gen_tensor audio, long long batch, long long t)
{
    static const char *const types[] = {"Abs", "Minimum", "Mul", "Log1p", "RealDiv", "Sign",
                                        "Mul", "AddV2",   "Mul", "Mul",   "AddV2",   "Cast"};
    gen_push(g, GEN_GROUP, "encode");
    gen_shape s = gen_shape2(batch, t);
    gen_tensor x = audio;
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        x = gen_op_emit(g, types[k], types[k], GEN_GRAD_NONE, &x, 1, &s, 1, gen_shape_elems(s));
    gen_shape oh = gen_wavenet_shape(batch, t, GEN_WAVENET_QUANT);
    x = gen_op_emit(g, "OneHot", "one_hot", GEN_GRAD_NONE, &x, 1, &oh, 1, gen_shape_elems(oh));
    gen_pop(g);
    return x;
}

int gen_wavenet_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err)
{
    int b = a->batch, n_layers = a->layers * GEN_WAVENET_LAYERS_PER_STACK;
    long long field = 0;
    for (int l = 0; l < n_layers; l++)
        field += 1LL << (l % GEN_WAVENET_LAYERS_PER_STACK);
    field += 2; /* (w - 1) sum(dilations) + 1 + (w - 1), w = 2 */
    long long t = field + a->opt[GEN_WAVENET_OPT_EXTRA], out_width = t - field;
    gen_ctx g;
    gen_init(&g, a->seed, b);
    gen_shape wave = gen_shape2(b, t);
    gen_tensor audio = gen_source(&g, "Placeholder", "Placeholder", &wave, 1);
    gen_push(&g, GEN_SCOPE, "wavenet");
    gen_tensor encoded = gen_wavenet_encode(&g, audio, b, t);
    gen_push(&g, GEN_GROUP, "causal_layer");
    gen_shape in_s = gen_wavenet_shape(b, t - 1, GEN_WAVENET_QUANT);
    gen_tensor x =
        gen_op_emit(&g, "StridedSlice", "strided_slice", GEN_GRAD_NONE, &encoded, 1, &in_s, 1, 0);
    x = gen_wavenet_conv(&g, "filter", x, 2, 1, GEN_WAVENET_RESIDUAL, 0);
    gen_pop(&g);
    gen_tensor skips[GEN_MODEL_MAX_WAVENET_STACKS * GEN_WAVENET_LAYERS_PER_STACK];
    for (int l = 0; l < n_layers; l++)
        skips[l] = gen_wavenet_layer(&g, l, 1 << (l % GEN_WAVENET_LAYERS_PER_STACK), &x, out_width);
    gen_push(&g, GEN_GROUP, "postprocessing");
    gen_tensor y = gen_unary(&g, "Relu", gen_add_n(&g, skips, n_layers));
    y = gen_unary(&g, "Relu", gen_wavenet_conv(&g, "postprocess1", y, 1, 1, GEN_WAVENET_SKIP, 1));
    y = gen_wavenet_conv(&g, "postprocess2", y, 1, 1, GEN_WAVENET_QUANT, 1);
    gen_pop(&g);
    gen_push(&g, GEN_GROUP, "loss");
    long long rows = (long long)b * out_width;
    gen_shape target_s = gen_wavenet_shape(b, out_width, GEN_WAVENET_QUANT);
    gen_tensor target = gen_op_emit(&g, "StridedSlice", "strided_slice", GEN_GRAD_NONE, &encoded, 1,
                                    &target_s, 1, 0);
    target = gen_reshape(&g, target, gen_shape2(rows, GEN_WAVENET_QUANT));
    gen_tensor logits = gen_reshape(&g, y, gen_shape2(rows, GEN_WAVENET_QUANT));
    gen_tensor loss = gen_xent_loss(&g, logits, target);
    gen_pop(&g);
    gen_pop(&g);
    gen_train(&g, loss, GEN_OPT_ADAM, 0);
    int rc = gen_model_finish(&g, a, name, out, err);
    gen_free(&g);
    return rc;
}
