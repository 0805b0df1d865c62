/* gen_rnn.c — recurrent layers of the zoo's GDP models, statically unrolled: TF BasicLSTMCell and
 * the dropout between layers, in the training-step convention of specs/gdp.md §10.1. */
#include "gen_model.h"

gen_lstm_weights gen_lstm_weights_new(gen_ctx *g, const char *scope, int in, int hidden)
{
    gen_lstm_weights w;
    gen_push(g, GEN_GROUP, "%s", scope);
    w.kernel = gen_variable(g, "kernel", gen_shape2(in + hidden, 4LL * hidden));
    w.bias = gen_variable(g, "bias", gen_shape1(4LL * hidden));
    gen_pop(g);
    return w;
}

void gen_lstm_cell(gen_ctx *g, gen_tensor x, gen_tensor *c, gen_tensor *h,
                   const gen_lstm_weights *w)
{
    gen_push(g, GEN_GROUP, "gates");
    gen_tensor xh[2] = {x, *h};
    gen_const(g, "concat/axis", gen_shape0());
    gen_tensor z = gen_bias_add(g, gen_matmul(g, gen_concat(g, xh, 2), w->kernel, 0), w->bias);
    gen_pop(g);
    gen_push(g, GEN_GROUP, "state");
    gen_const(g, "split/split_dim", gen_shape0());
    gen_tensor s = gen_split(g, z, 4);
    gen_tensor i = gen_unary(g, "Sigmoid", s);
    gen_tensor j = gen_unary(g, "Tanh", gen_port(s, 1));
    gen_tensor fb = gen_const(g, "add/y", gen_shape0());
    gen_tensor f = gen_unary(g, "Sigmoid", gen_broadcast(g, "AddV2", gen_port(s, 2), fb));
    gen_tensor o = gen_unary(g, "Sigmoid", gen_port(s, 3));
    *c = gen_binary(g, "AddV2", gen_binary(g, "Mul", *c, f), gen_binary(g, "Mul", i, j));
    *h = gen_binary(g, "Mul", gen_unary(g, "Tanh", *c), o);
    gen_pop(g);
}

gen_tensor gen_rnn_dropout(gen_ctx *g, gen_tensor x, const char *scope)
{
    gen_push(g, GEN_GROUP, "%s", scope);
    gen_shape s = gen_shape_of(g, x), dims = gen_shape1(s.rank);
    double e = gen_shape_elems(s);
    gen_tensor keep = gen_const(g, "keep_prob", gen_shape0());
    gen_tensor shape = gen_op_emit(g, "Shape", "Shape", GEN_GRAD_NONE, &x, 1, &dims, 1, 0);
    gen_tensor r =
        gen_op_emit(g, "RandomUniform", "random_uniform", GEN_GRAD_NONE, &shape, 1, &s, 1, e);
    gen_tensor in[2] = {keep, r};
    gen_tensor sum = gen_op_emit(g, "AddV2", "add", GEN_GRAD_NONE, in, 2, &s, 1, e);
    gen_tensor mask = gen_op_emit(g, "Floor", "Floor", GEN_GRAD_NONE, &sum, 1, &s, 1, e);
    gen_tensor y = gen_binary(g, "Mul", gen_broadcast(g, "RealDiv", x, keep), mask);
    gen_pop(g);
    return y;
}

gen_tensor gen_rnn_step_slice(gen_ctx *g, gen_tensor all, long long rows, long long width)
{
    gen_shape s = gen_shape2(rows, width);
    return gen_op_emit(g, "StridedSlice", "strided_slice", GEN_GRAD_SLICE, &all, 1, &s, 1, 0);
}
