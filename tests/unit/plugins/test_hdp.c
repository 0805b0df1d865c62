/* test_hdp.c — HDP's controller (plugins/shared/hdp): the op features and group embeddings of
 * specs/gdp.md §7.7, the attention on a hand-worked case, the learning-rate staircase of §7.5,
 * and finite-difference gradients of log p(grouping) + log p(placement) through the grouper,
 * the bi-LSTM encoder, the attention decoder and the device softmax. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "hdp_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* §7.7: A (MatMul) -> B (Relu), A -> C (Add), B -> D (AddN), C -> D; every op one output
 * [2, 3]; used types sorted Add 0, AddN 1, MatMul 2, Relu 3. */
static const int ex_type[4] = {2, 3, 0, 1};
static const int ex_succ_start[5] = {0, 2, 3, 4, 4};
static const int ex_succ[4] = {1, 2, 3, 3};

static void ex_dims(float *dims)
{
    for (int v = 0; v < 4; v++) {
        for (int j = 0; j < HDP_SHAPE_SLOTS; j++)
            dims[v * HDP_SHAPE_SLOTS + j] = -1;
        dims[v * HDP_SHAPE_SLOTS] = 2;
        dims[v * HDP_SHAPE_SLOTS + 1] = 3;
    }
}

static void test_op_features(void **state)
{
    (void)state;
    float dims[4 * HDP_SHAPE_SLOTS], out[4 * HDP_OP_FEATURES];
    ex_dims(dims);
    hdp_op_features(4, ex_type, dims, ex_succ_start, ex_succ, out);
    float a[HDP_OP_FEATURES], b[HDP_OP_FEATURES];
    for (int j = 0; j < HDP_OP_FEATURES; j++)
        a[j] = b[j] = j >= 3 && j < 26 ? -1 : 0;
    a[0] = 2, a[1] = 2, a[2] = 3, a[26] = 1, a[27] = 1, a[28] = 2, a[29] = 1;
    b[0] = 3, b[1] = 2, b[2] = 3, b[26] = 0, b[27] = -1, b[28] = 3, b[29] = 1;
    for (int j = 0; j < HDP_OP_FEATURES; j++) {
        assert_float_equal(out[j], a[j], 0);
        assert_float_equal(out[HDP_OP_FEATURES + j], b[j], 0);
    }
}

static void test_group_features(void **state)
{
    (void)state;
    float dims[4 * HDP_SHAPE_SLOTS];
    ex_dims(dims);
    int group[4] = {0, 0, 1, 1};
    int w = hdp_group_width(2, 4);
    assert_int_equal(w, 33);
    float out[2 * 33];
    hdp_group_features(4, 2, 4, group, ex_type, dims, ex_succ_start, ex_succ, out);
    const double row0[8] = {1 / 7.0, 2 / 7.0, 1 / 7.0, 0, 4 / 7.0, 6 / 7.0, 1 / 7.0, 1 / 7.0};
    const double row1[6] = {0, 0.125, 0.25, 0.125, 0.625, 0.875};
    for (int j = 0; j < w; j++) {
        assert_float_equal(out[j], j < 8 ? row0[j] : 0, 1e-6);
        assert_float_equal(out[w + j], j < 6 ? row1[j] : 0, 1e-6);
    }
}

/* mem = [[1, 0], [0, 1]], h = 0: both scores are v . tanh(mem_j) = tanh(1) with v = [1, 1], so
 * alpha = [0.5, 0.5] and the context is [0.5, 0.5].  With v = [2, 0]: scores 2 tanh(1) and 0,
 * alpha_0 = 1 / (1 + exp(-2 tanh 1)) = 0.821007, context [0.821007, 0.178993]. */
static void test_attention(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    const float mem_v[4] = {1, 0, 0, 1}, zero[2] = {0, 0}, w_v[4] = {1, 0, 0, 1};
    const float v1[2] = {1, 1}, v2[2] = {2, 0};
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *mem = pb_nn_constant(t, 2, 2, mem_v), *h = pb_nn_constant(t, 1, 2, zero);
    pb_nn_tensor *w = pb_nn_constant(t, 2, 2, w_v);
    pb_nn_tensor *c1 = hdp_attend(t, h, w, pb_nn_constant(t, 1, 2, v1), mem);
    pb_nn_tensor *c2 = hdp_attend(t, h, w, pb_nn_constant(t, 1, 2, v2), mem);
    assert_non_null(c1);
    assert_float_equal(c1->data[0], 0.5, 1e-6);
    assert_float_equal(c1->data[1], 0.5, 1e-6);
    assert_float_equal(c2->data[0], 0.821007, 1e-6);
    assert_float_equal(c2->data[1], 0.178993, 1e-6);
    pb_nn_tape_free(t);
}

/* §7.5: lr 0.1 before step 400, then 0.1 x 0.95^floor((k - 400) / 50). */
static void test_learning_rate(void **state)
{
    (void)state;
    assert_float_equal(hdp_learning_rate(0.1, 0.95, 400, 50, 0), 0.1, 1e-15);
    assert_float_equal(hdp_learning_rate(0.1, 0.95, 400, 50, 449), 0.1, 1e-15);
    assert_float_equal(hdp_learning_rate(0.1, 0.95, 400, 50, 450), 0.095, 1e-15);
    assert_float_equal(hdp_learning_rate(0.1, 0.95, 400, 50, 500), 0.09025, 1e-15);
}

enum { FD_OPS = 5, FD_GROUPS = 3, FD_TYPES = 2 };

/* log p of a fixed grouping and placement of the 5-op chain, no noise. */
static double fd_logp(hdp_net *net, pb_nn_tape *t, const float *x, int record, pb_nn_tensor **out)
{
    static const int succ_start[FD_OPS + 1] = {0, 1, 2, 3, 4, 4}, succ[4] = {1, 2, 3, 4};
    static const int type[FD_OPS] = {0, 1, 0, 1, 1}, groups[FD_OPS] = {0, 2, 1, 1, 0};
    static const int places[FD_GROUPS] = {1, 0, 1};
    float dims[FD_OPS * HDP_SHAPE_SLOTS], e[FD_GROUPS * 33];
    for (int k = 0; k < FD_OPS * HDP_SHAPE_SLOTS; k++)
        dims[k] = k % 7 == 0 ? (float)(k % 5 + 1) : -1;
    int group[FD_OPS], device[FD_GROUPS];
    pb_nn_tape_reset(t, record);
    pb_nn_tensor *xt = pb_nn_constant(t, FD_OPS, HDP_OP_FEATURES, x);
    hdp_pick pg = {NULL, 0, 1, 0, groups, 0};
    pb_nn_tensor *lg = hdp_grouper(t, net, xt, &pg, group);
    hdp_group_features(FD_OPS, FD_GROUPS, FD_TYPES, group, type, dims, succ_start, succ, e);
    hdp_pick pp = {NULL, 0, 1.3, 1, places, 0};
    pb_nn_tensor *ld = hdp_placer(t, net, pb_nn_constant(t, FD_GROUPS, 33, e), &pp, device);
    pb_nn_tensor *sum = pb_nn_add(t, lg, ld);
    assert_int_equal(pb_nn_tape_status(t, NULL), PB_OK);
    for (int g = 0; g < FD_GROUPS; g++)
        assert_int_equal(device[g], places[g]);
    if (out)
        *out = sum;
    return sum->data[0];
}

static void test_gradients(void **state)
{
    (void)state;
    hdp_sizes s = {HDP_OP_FEATURES, 3, FD_GROUPS, hdp_group_width(FD_GROUPS, FD_TYPES), 4, 2};
    assert_int_equal(s.group_width, 33);
    hdp_net net;
    pb_rng rng;
    pb_rng_seed(&rng, 11);
    pb_error err;
    assert_int_equal(hdp_net_init(&net, &s, &rng, &err), PB_OK);
    float x[FD_OPS * HDP_OP_FEATURES];
    for (int k = 0; k < FD_OPS * HDP_OP_FEATURES; k++)
        x[k] = (float)(pb_rng_uniform(&rng) - 0.5);
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tensor *y;
    fd_logp(&net, t, x, 1, &y);
    pb_nn_params_zero_grad(net.params);
    assert_int_equal(pb_nn_backward(t, y, NULL, &err), PB_OK);
    size_t n = pb_nn_params_size(net.params);
    float *grad = malloc(n * sizeof *grad);
    memcpy(grad, pb_nn_params_grads(net.params), n * sizeof *grad);
    float *theta = pb_nn_params_values(net.params);
    int checked = 0, nonzero = 0;
    /* every tensor, three entries each (first, middle, last) */
    for (int id = 0; id < pb_nn_params_count(net.params); id++) {
        int rows, cols;
        pb_nn_params_shape(net.params, id, &rows, &cols);
        size_t off = pb_nn_params_offset(net.params, id), len = (size_t)rows * (size_t)cols;
        size_t pick[3] = {0, len / 2, len - 1};
        for (int q = 0; q < 3; q++) {
            size_t k = off + pick[q];
            float keep = theta[k];
            const float h = 1e-2f;
            theta[k] = keep + h;
            double up = fd_logp(&net, t, x, 0, NULL);
            theta[k] = keep - h;
            double down = fd_logp(&net, t, x, 0, NULL);
            theta[k] = keep;
            double fd = (up - down) / (2 * h);
            if (fabs(fd - grad[k]) > 2e-3 + 2e-2 * fabs(fd))
                fail_msg("%s[%zu]: backward %.6f, finite difference %.6f",
                         pb_nn_params_name(net.params, id), pick[q], grad[k], fd);
            checked++;
            nonzero += fabs(grad[k]) > 1e-6;
        }
    }
    assert_int_equal(checked, 3 * 13);
    assert_true(nonzero > 20); /* the check is not vacuous */
    free(grad);
    pb_nn_tape_free(t);
    hdp_net_free(&net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_features), cmocka_unit_test(test_group_features),
        cmocka_unit_test(test_attention),   cmocka_unit_test(test_learning_rate),
        cmocka_unit_test(test_gradients),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
