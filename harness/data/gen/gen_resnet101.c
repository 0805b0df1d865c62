/* gen_resnet101.c — ResNet-101 as TAG trains it: tf.contrib.slim resnet_v2_101, Adam. */
#include "gen_model.h"

#include <stdio.h>

/*
 * TAG (ylxdzsw/tag gnn/gen_raw_data.py, `resnet`): 224x224x3 placeholders, resnet_v2_101(x, 1000)
 * without resnet_arg_scope, so slim.conv2d keeps its defaults (biases, ReLU, no normalizer) except
 * where resnet_v2 overrides them, and max_pool2d pads VALID; flatten, reduce_sum of the sigmoid
 * cross-entropy, AdamOptimizer; the whole GraphDef is counted (GEN_TF_UNIFORM).
 * resnet_v2_101: conv1 = conv2d_same 7x7/2 of 64 (linear), pool1 3x3/2; blocks of 3, 4, 23, 3
 * bottleneck units of depth 256, 512, 1024, 2048 (bottleneck a quarter), the last unit of the
 * first three blocks with stride 2.  A unit: preact = batch_norm + ReLU; the shortcut is a linear
 * 1x1 conv of preact when the depth changes, else the input (max-pooled 1x1/s when strided);
 * conv1 1x1, conv2 3x3 (conv2d_same: explicit Pad and VALID when strided), conv3 1x1 linear;
 * shortcut + residual.  Then postnorm (batch_norm + ReLU), global mean, logits 1x1 linear conv,
 * squeeze.  Groups: one per conv, batch norm, pool and add.
 */
static gen_tensor gen_resnet_pad(gen_ctx *g, gen_tensor x, int k)
{
    gen_shape s = gen_shape_of(g, x);
    int pad = k - 1;
    gen_shape o = gen_shape4(s.d[0], s.d[1] + pad, s.d[2] + pad, s.d[3]);
    gen_tensor in[2] = {x, gen_const(g, "Pad/paddings", gen_shape2(4, 2))};
    /* Pad's gradient slices the padding off again: one Slice (GEN_GRAD_CONCAT on input 0). */
    return gen_op_emit(g, "Pad", "Pad", GEN_GRAD_CONCAT, in, 2, &o, 1, 0);
}

/* resnet_utils.conv2d_same: SAME for stride 1, else explicit padding and VALID. */
static gen_tensor gen_resnet_conv_same(gen_ctx *g, const char *scope, gen_tensor x, int k, int c,
                                       int stride, int flags)
{
    if (stride == 1)
        return gen_slim_conv(g, scope, x, k, k, c, 1, flags);
    gen_push(g, GEN_GROUP, "%s_pad", scope);
    x = gen_resnet_pad(g, x, k);
    gen_pop(g);
    return gen_slim_conv(g, scope, x, k, k, c, stride, flags | GEN_SLIM_VALID);
}

static gen_tensor gen_resnet_unit(gen_ctx *g, gen_tensor x, int base, int stride)
{
    int depth = 4 * base;
    gen_shape s = gen_shape_of(g, x);
    gen_push(g, GEN_GROUP, "preact");
    gen_tensor pre = gen_slim_batch_norm(g, x, 1);
    gen_pop(g);
    gen_tensor shortcut = x;
    if (s.d[3] != depth) {
        shortcut = gen_slim_conv(g, "shortcut", pre, 1, 1, depth, stride, GEN_SLIM_LINEAR);
    } else if (stride > 1) {
        gen_push(g, GEN_GROUP, "shortcut");
        shortcut = gen_pool(g, "MaxPool", x, 1, stride, 1);
        gen_pop(g);
    }
    gen_tensor r = gen_slim_conv(g, "conv1", pre, 1, 1, base, 1, 0);
    r = gen_resnet_conv_same(g, "conv2", r, 3, base, stride, 0);
    r = gen_slim_conv(g, "conv3", r, 1, 1, depth, 1, GEN_SLIM_LINEAR);
    gen_push(g, GEN_GROUP, "add");
    gen_tensor y = gen_binary(g, "AddV2", shortcut, r);
    gen_pop(g);
    return y;
}

int gen_resnet101_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err)
{
    static const int units[4] = {3, 4, 23, 3}, base[4] = {64, 128, 256, 512};
    gen_ctx g;
    gen_init(&g, a->seed, a->batch);
    g.tf_graphdef = GEN_TF_UNIFORM;
    gen_shape io[2] = {gen_shape4(a->batch, 224, 224, 3), gen_shape2(a->batch, 1000)};
    gen_tensor x = gen_source(&g, "Placeholder", "Placeholder", &io[0], 1);
    gen_tensor labels = gen_source(&g, "Placeholder", "Placeholder_1", &io[1], 1);
    gen_push(&g, GEN_SCOPE, "resnet_v2_101");
    x = gen_resnet_conv_same(&g, "conv1", x, 7, 64, 2, GEN_SLIM_LINEAR);
    gen_push(&g, GEN_GROUP, "pool1");
    x = gen_pool(&g, "MaxPool", x, 3, 2, 1);
    gen_pop(&g);
    for (int b = 0; b < 4; b++)
        for (int u = 0; u < units[b]; u++) {
            gen_push(&g, GEN_SCOPE, "block%d/unit_%d/bottleneck_v2", b + 1, u + 1);
            x = gen_resnet_unit(&g, x, base[b], b < 3 && u == units[b] - 1 ? 2 : 1);
            gen_pop(&g);
        }
    gen_push(&g, GEN_GROUP, "postnorm");
    x = gen_slim_batch_norm(&g, x, 1);
    x = gen_mean_spatial(&g, x);
    x = gen_reshape(&g, x, gen_shape4(a->batch, 1, 1, 2048));
    gen_pop(&g);
    x = gen_slim_conv(&g, "logits", x, 1, 1, 1000, 1, GEN_SLIM_LINEAR);
    x = gen_reshape(&g, x, gen_shape2(a->batch, 1000)); /* SpatialSqueeze, then flatten */
    gen_pop(&g);
    gen_tensor loss = gen_slim_sigmoid_loss(&g, x, labels);
    gen_train(&g, loss, GEN_OPT_ADAM, 0);
    gen_tf_init_op(&g);
    int rc = gen_model_finish(&g, a, name, out, err);
    gen_free(&g);
    return rc;
}
