/* gen_slim.c — TF-slim layers as tf.contrib.slim writes them into a GraphDef (conv with bias,
 * batch norm, dropout, sigmoid cross-entropy), shared by the zoo's TAG CNNs. */
#include "gen_model.h"

#include <string.h>

static long long gen_slim_out(long long in, int k, int stride, int valid)
{
    return valid ? (in - k) / stride + 1 : (in + stride - 1) / stride;
}

gen_tensor gen_slim_conv(gen_ctx *g, const char *scope, gen_tensor x, int kh, int kw, int cout,
                         int stride, int flags)
{
    gen_push(g, flags & GEN_SLIM_SCOPE_ONLY ? GEN_SCOPE : GEN_GROUP, "%s", scope);
    flags |= flags & GEN_SLIM_LINEAR ? g->slim_scope & GEN_SLIM_L2 : g->slim_scope;
    gen_shape s = gen_shape_of(g, x);
    int valid = (flags & GEN_SLIM_VALID) != 0;
    gen_tensor in[2] = {x, gen_variable(g, "weights", gen_shape4(kh, kw, s.d[3], cout))};
    if (flags & GEN_SLIM_L2)
        gen_slim_l2_regularizer(g, in[1]);
    gen_shape o = gen_shape4(s.d[0], gen_slim_out(s.d[1], kh, stride, valid),
                             gen_slim_out(s.d[2], kw, stride, valid), cout);
    double flops = 2.0 * gen_shape_elems(o) * kh * kw * (double)s.d[3];
    gen_tensor y = gen_op_emit(g, "Conv2D", "Conv2D", GEN_GRAD_CONV2D, in, 2, &o, 1, flops);
    if (flags & GEN_SLIM_BN_UNFUSED)
        y = gen_slim_batch_norm_unfused(g, y);
    else if (flags & GEN_SLIM_BN)
        y = gen_slim_batch_norm(g, y, 0);
    else if (!(flags & GEN_SLIM_NO_BIAS))
        y = gen_bias_add(g, y, gen_variable(g, "biases", gen_shape1(cout)));
    if (!(flags & GEN_SLIM_LINEAR))
        y = gen_unary(g, "Relu", y);
    gen_pop(g);
    return y;
}

/* AssignMovingAvg of a moving statistic `avg` towards `value` (decay Const, sub, mul,
 * AssignSub), which TensorFlow keeps in UPDATE_OPS; variables no gradient reaches. */
static void gen_slim_moving_average(gen_ctx *g, gen_tensor avg, gen_tensor value)
{
    gen_shape c = gen_shape_of(g, avg);
    gen_tensor decay = gen_const(g, "AssignMovingAvg/decay", gen_shape0());
    gen_tensor d[2] = {avg, value};
    gen_tensor diff =
        gen_op_emit(g, "Sub", "AssignMovingAvg/sub", GEN_GRAD_NONE, d, 2, &c, 1, (double)c.d[0]);
    gen_tensor m[2] = {diff, decay};
    gen_tensor step =
        gen_op_emit(g, "Mul", "AssignMovingAvg/mul", GEN_GRAD_NONE, m, 2, &c, 1, (double)c.d[0]);
    gen_tensor a[2] = {avg, step};
    gen_op_emit(g, "AssignSub", "AssignMovingAvg", GEN_GRAD_NONE, a, 2, &c, 1, (double)c.d[0]);
}

/* A mean over every axis but the last, keeping them ([1, 1, 1, C]). */
static gen_tensor gen_slim_moment(gen_ctx *g, gen_tensor x)
{
    gen_shape s = gen_shape_of(g, x), o = gen_shape4(1, 1, 1, s.d[s.rank - 1]);
    gen_const(g, "reduction_indices", gen_shape1(3));
    return gen_op_emit(g, "Mean", "Mean", GEN_GRAD_MEAN, &x, 1, &o, 1, gen_shape_elems(s));
}

/* A reduction over the last axis keeping it (Mean and its reduction-indices Const). */
static gen_tensor gen_slim_mean(gen_ctx *g, gen_tensor x)
{
    gen_shape s = gen_shape_of(g, x), o = s;
    o.d[o.rank - 1] = 1;
    gen_const(g, "reduction_indices", gen_shape1(1));
    return gen_op_emit(g, "Mean", "Mean", GEN_GRAD_MEAN, &x, 1, &o, 1, gen_shape_elems(s));
}

/* tf.nn.moments: the mean (over every axis but the last when all_but_last, else over the last),
 * its StopGradient, the SquaredDifference and its mean, in the current scope. */
static void gen_slim_moments(gen_ctx *g, gen_tensor x, int all_but_last, gen_tensor *mean,
                             gen_tensor *var)
{
    *mean = all_but_last ? gen_slim_moment(g, x) : gen_slim_mean(g, x);
    gen_shape ms = gen_shape_of(g, *mean);
    gen_tensor sg =
        gen_op_emit(g, "StopGradient", "StopGradient", GEN_GRAD_NONE, mean, 1, &ms, 1, 0);
    gen_tensor d = gen_broadcast(g, "SquaredDifference", x, sg);
    *var = all_but_last ? gen_slim_moment(g, d) : gen_slim_mean(g, d);
}

gen_tensor gen_slim_batch_norm_unfused(gen_ctx *g, gen_tensor x)
{
    gen_push(g, GEN_SCOPE, "BatchNorm");
    gen_shape s = gen_shape_of(g, x), c = gen_shape1(s.d[s.rank - 1]);
    gen_tensor beta = gen_variable(g, "beta", c);
    gen_tensor avg[2] = {gen_variable(g, "moving_mean", c), gen_variable(g, "moving_variance", c)};
    gen_push(g, GEN_SCOPE, "moments");
    gen_tensor mean, var;
    gen_slim_moments(g, x, 1, &mean, &var);
    gen_tensor m[2];
    m[0] = gen_op_emit(g, "Squeeze", "Squeeze", GEN_GRAD_RESHAPE, &mean, 1, &c, 1, 0);
    m[1] = gen_op_emit(g, "Squeeze", "Squeeze_1", GEN_GRAD_RESHAPE, &var, 1, &c, 1, 0);
    gen_pop(g);
    for (int k = 0; k < 2; k++)
        gen_slim_moving_average(g, avg[k], m[k]);
    gen_push(g, GEN_SCOPE, "batchnorm");
    gen_tensor inv = gen_slim_unary(
        g, "Rsqrt", gen_broadcast(g, "AddV2", m[1], gen_const(g, "add/y", gen_shape0())));
    gen_tensor xs = gen_broadcast(g, "Mul", x, inv);
    gen_tensor shift = gen_binary(g, "Sub", beta, gen_binary(g, "Mul", m[0], inv));
    gen_tensor y = gen_broadcast(g, "AddV2", xs, shift);
    gen_pop(g);
    gen_pop(g);
    return y;
}

void gen_slim_l2_regularizer(gen_ctx *g, gen_tensor w)
{
    gen_push(g, GEN_SCOPE, "Regularizer/l2_regularizer");
    gen_shape scalar = gen_shape0();
    gen_tensor scale = gen_const(g, "scale", scalar);
    gen_tensor l2 = gen_op_emit(g, "L2Loss", "L2Loss", GEN_GRAD_L2LOSS, &w, 1, &scalar, 1,
                                2.0 * gen_shape_elems(gen_shape_of(g, w)));
    gen_add_loss(g, gen_binary(g, "Mul", scale, l2));
    gen_pop(g);
}

/*
 * slim.batch_norm as called without an arg_scope (center, no scale, decay 0.999, training): a
 * FusedBatchNorm reading the beta variable, a ones Const for gamma and two empty Consts, plus the
 * moving_mean / moving_variance variables (not trainable) and their AssignMovingAvg updates
 * (decay Const, sub, sub_1, mul, AssignSub each), which TensorFlow keeps in UPDATE_OPS.
 */
gen_tensor gen_slim_batch_norm_named(gen_ctx *g, const char *scope, gen_tensor x, int scale)
{
    gen_push(g, GEN_SCOPE, "%s", scope);
    gen_shape s = gen_shape_of(g, x), c = gen_shape1(s.d[s.rank - 1]);
    gen_tensor gamma = scale ? GEN_NONE : gen_const(g, "Const", c);
    gen_tensor beta = gen_variable(g, "beta", c);
    if (scale)
        gamma = gen_variable(g, "gamma", c);
    gen_tensor in[3] = {x, gamma, beta};
    gen_shape o[3] = {s, c, c};
    gen_tensor y = gen_op_emit(g, "FusedBatchNorm", "FusedBatchNorm", GEN_GRAD_BATCHNORM, in, 3, o,
                               3, 8.0 * gen_shape_elems(s));
    for (int k = 1; k <= 2; k++) { /* variables no gradient reaches, so never trained */
        gen_tensor avg = gen_variable(g, k == 1 ? "moving_mean" : "moving_variance", c);
        gen_slim_moving_average(g, avg, gen_port(y, k));
    }
    gen_pop(g);
    return y;
}

gen_tensor gen_slim_batch_norm(gen_ctx *g, gen_tensor x, int relu)
{
    gen_tensor y = gen_slim_batch_norm_named(g, "BatchNorm", x, 0);
    return relu ? gen_unary(g, "Relu", y) : y;
}

/* tf.nn.dropout as TensorFlow 1.14 writes it (dropout_v2 with rate = 1 - keep_prob):
 * x * (1 / (1 - rate)) * cast(uniform(shape(x)) >= rate). */
gen_tensor gen_slim_dropout(gen_ctx *g, gen_tensor x)
{
    gen_push(g, GEN_SCOPE, "dropout");
    gen_shape s = gen_shape_of(g, x), scalar = gen_shape0();
    double e = gen_shape_elems(s);
    gen_tensor rate = gen_const(g, "rate", scalar);
    gen_shape dims = gen_shape1(s.rank);
    gen_tensor shape = gen_op_emit(g, "Shape", "Shape", GEN_GRAD_NONE, &x, 1, &dims, 1, 0);
    gen_push(g, GEN_SCOPE, "random_uniform");
    gen_tensor lo = gen_const(g, "min", scalar), hi = gen_const(g, "max", scalar);
    gen_tensor r =
        gen_op_emit(g, "RandomUniform", "RandomUniform", GEN_GRAD_NONE, &shape, 1, &s, 1, e);
    gen_tensor d[2] = {hi, lo};
    gen_tensor span = gen_op_emit(g, "Sub", "sub", GEN_GRAD_NONE, d, 2, &scalar, 1, 1);
    gen_tensor m[2] = {r, span};
    gen_tensor scaled = gen_op_emit(g, "Mul", "mul", GEN_GRAD_NONE, m, 2, &s, 1, e);
    gen_tensor a[2] = {scaled, lo};
    gen_tensor u = gen_op_emit(g, "AddV2", "random_uniform", GEN_GRAD_NONE, a, 2, &s, 1, e);
    gen_pop(g);
    gen_tensor k1[2] = {gen_const(g, "sub/x", scalar), rate};
    gen_tensor keep = gen_op_emit(g, "Sub", "sub", GEN_GRAD_NONE, k1, 2, &scalar, 1, 1);
    gen_tensor k2[2] = {gen_const(g, "truediv/x", scalar), keep};
    gen_tensor scale = gen_op_emit(g, "RealDiv", "truediv", GEN_GRAD_NONE, k2, 2, &scalar, 1, 1);
    gen_tensor k3[2] = {u, rate};
    gen_tensor keep_mask =
        gen_op_emit(g, "GreaterEqual", "GreaterEqual", GEN_GRAD_NONE, k3, 2, &s, 1, e);
    gen_tensor mask = gen_op_emit(g, "Cast", "Cast", GEN_GRAD_NONE, &keep_mask, 1, &s, 1, e);
    gen_tensor y = gen_binary(g, "Mul", gen_broadcast(g, "Mul", x, scale), mask);
    gen_pop(g);
    return y;
}

/* tf.nn.sigmoid_cross_entropy_with_logits summed over batch and classes (TAG's loss):
 * max(x, 0) - x z + log(1 + exp(-|x|)) through ZerosLike, GreaterEqual, two Selects, Neg, Mul,
 * Sub, Exp, Log1p, Add, then Sum. */
gen_tensor gen_slim_sigmoid_loss(gen_ctx *g, gen_tensor logits, gen_tensor labels)
{
    gen_push(g, GEN_GROUP, "logistic_loss");
    gen_shape s = gen_shape_of(g, logits), scalar = gen_shape0();
    double e = gen_shape_elems(s);
    gen_tensor zeros =
        gen_op_emit(g, "ZerosLike", "zeros_like", GEN_GRAD_NONE, &logits, 1, &s, 1, 0);
    gen_tensor c[2] = {logits, zeros};
    gen_tensor cond = gen_op_emit(g, "GreaterEqual", "GreaterEqual", GEN_GRAD_NONE, c, 2, &s, 1, e);
    gen_tensor s1[3] = {cond, logits, zeros};
    gen_tensor relu = gen_op_emit(g, "Select", "Select", GEN_GRAD_IDENTITY, s1, 3, &s, 1, e);
    gen_tensor neg = gen_op_emit(g, "Neg", "Neg", GEN_GRAD_IDENTITY, &logits, 1, &s, 1, e);
    gen_tensor s2[3] = {cond, neg, logits};
    gen_tensor nabs = gen_op_emit(g, "Select", "Select_1", GEN_GRAD_IDENTITY, s2, 3, &s, 1, e);
    gen_tensor xz = gen_binary(g, "Mul", logits, labels);
    gen_tensor lin = gen_binary(g, "Sub", relu, xz);
    gen_tensor ex = gen_op_emit(g, "Exp", "Exp", GEN_GRAD_SIGMOID, &nabs, 1, &s, 1, 4 * e);
    gen_tensor lp = gen_op_emit(g, "Log1p", "Log1p", GEN_GRAD_SIGMOID, &ex, 1, &s, 1, 4 * e);
    gen_tensor loss = gen_binary(g, "AddV2", lin, lp);
    gen_pop(g);
    return gen_op_emit(g, "Sum", "Sum", GEN_GRAD_MEAN, &loss, 1, &scalar, 1, e);
}

/* An element-wise op whose gradient is one "<Type>Grad" op. */
gen_tensor gen_slim_unary(gen_ctx *g, const char *type, gen_tensor x)
{
    gen_shape s = gen_shape_of(g, x);
    return gen_op_emit(g, type, type, GEN_GRAD_UNARY, &x, 1, &s, 1, 4.0 * gen_shape_elems(s));
}

/* tf.contrib.layers.layer_norm over the last axis. */
gen_tensor gen_slim_layer_norm(gen_ctx *g, gen_tensor x)
{
    gen_push(g, GEN_SCOPE, "LayerNorm");
    gen_shape s = gen_shape_of(g, x), c = gen_shape1(s.d[s.rank - 1]);
    gen_tensor beta = gen_variable(g, "beta", c), gamma = gen_variable(g, "gamma", c);
    gen_tensor y = gen_slim_layer_norm_with(g, x, beta, gamma);
    gen_pop(g);
    return y;
}

gen_tensor gen_slim_layer_norm_with(gen_ctx *g, gen_tensor x, gen_tensor beta, gen_tensor gamma)
{
    gen_push(g, GEN_SCOPE, "moments");
    gen_tensor mean, var;
    gen_slim_moments(g, x, 0, &mean, &var);
    gen_pop(g);
    gen_push(g, GEN_SCOPE, "batchnorm");
    gen_tensor inv = gen_slim_unary(
        g, "Rsqrt", gen_broadcast(g, "AddV2", var, gen_const(g, "add/y", gen_shape0())));
    inv = gen_broadcast(g, "Mul", gamma, inv);
    gen_tensor xs = gen_broadcast(g, "Mul", x, inv);
    gen_tensor shift = gen_broadcast(g, "Sub", beta, gen_broadcast(g, "Mul", mean, inv));
    gen_tensor y = gen_broadcast(g, "AddV2", xs, shift);
    gen_pop(g);
    return y;
}
