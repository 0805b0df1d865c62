/* gen_cifar10.c — the cifar10 family: CIFAR-10 training graphs of ENAS micro-search-space CNNs. */
#include "gen.h"

#include <stdio.h>

/*
 * What a graph is (after ENAS, Pham et al. 2018, micro search space, fixed-architecture child):
 *   stem: 3x3 conv to 3C channels + batch norm;
 *   num_layers + 2 cells, reduction cells at layers L/3 and 2(L/3) + 1 (channels double, stride 2
 *   on the ops that read the cell inputs); an auxiliary head (relu, 5x5/3 avg pool, 1x1 conv 128,
 *   bn, relu, conv 768, bn, relu, fc 10) after the layer that follows the second reduction, its
 *   loss weighted 0.4; final relu, global average pool, fc 10, softmax cross-entropy; momentum
 *   updates (ENAS's weight decay, gradient clipping and drop-path ops are not modelled).
 * A cell takes the outputs of the two previous cells (calibrated by relu + 1x1 conv + bn, or a
 * factorized reduction when the spatial size differs) and computes B = 5 nodes, each the sum of
 * two ops applied to earlier nodes or the cell inputs: sep conv 3x3 or 5x5 (twice relu, depthwise,
 * pointwise, bn), 3x3 avg pool, 3x3 max pool, or identity.  The nodes no other node reads (cell
 * inputs included) are concatenated (ENAS _fixed_combine).
 * Per graph the seed draws the normal and the reduction architecture (uniform choices, redrawn
 * until no chain of nodes is deeper than GEN_CIFAR10_MAX_DEPTH); num_layers L is spread over
 * GEN_CIFAR10_L_MIN..MAX across graph indices (gen_options.layers: the same L for all).  C = 20
 * and batch 160, ENAS's micro search child (scripts/cifar10_micro_search.sh; the final model's
 * 144 / 36 / 15 layers are `--batch 144 --width 36 --layers 15`), 32x32x3 images.
 *
 * Groups: the stem; each calibration; per node, each repetition of a sep conv, or the pool, or
 * the factorized reduction (its two paths, then its concat + bn); each node's sum; each cell's
 * concat; the aux head; the classifier; the loss.  See gen.h for gradients and updates.
 */
#define GEN_CIFAR10_B 5
#define GEN_CIFAR10_L_MIN 3
#define GEN_CIFAR10_L_MAX 6
#define GEN_CIFAR10_MAX_LAYERS 30
#define GEN_CIFAR10_MAX_DEPTH 2
#define GEN_CIFAR10_C 20
#define GEN_CIFAR10_BATCH 160

enum { GEN_SEP3 = 0, GEN_SEP5, GEN_AVG, GEN_MAX, GEN_IDENTITY, GEN_N_OPS };

/* One cell architecture: per node, inputs x_id, y_id (0,1 = cell inputs) and their ops. */
typedef struct gen_cifar10_arc {
    int x_id[GEN_CIFAR10_B], x_op[GEN_CIFAR10_B], y_id[GEN_CIFAR10_B], y_op[GEN_CIFAR10_B];
} gen_cifar10_arc;

static int gen_cifar10_arc_depth(const gen_cifar10_arc *a)
{
    int d[GEN_CIFAR10_B + 2] = {0}, best = 0;
    for (int i = 0; i < GEN_CIFAR10_B; i++) {
        int dx = d[a->x_id[i]], dy = d[a->y_id[i]];
        d[i + 2] = 1 + (dx > dy ? dx : dy);
        if (d[i + 2] > best)
            best = d[i + 2];
    }
    return best;
}

/* Uniform choices as the untrained ENAS controller makes them, redrawn until the cell is at most
 * GEN_CIFAR10_MAX_DEPTH nodes deep. */
static void gen_cifar10_sample_arc(pb_rng *rng, gen_cifar10_arc *a)
{
    do {
        for (int i = 0; i < GEN_CIFAR10_B; i++) {
            a->x_id[i] = (int)pb_rng_below(rng, (uint64_t)i + 2);
            a->x_op[i] = (int)pb_rng_below(rng, GEN_N_OPS);
            a->y_id[i] = (int)pb_rng_below(rng, (uint64_t)i + 2);
            a->y_op[i] = (int)pb_rng_below(rng, GEN_N_OPS);
        }
    } while (gen_cifar10_arc_depth(a) > GEN_CIFAR10_MAX_DEPTH);
}

static gen_tensor gen_cifar10_relu_conv_bn(gen_ctx *g, gen_tensor x, int k, int c)
{
    x = gen_unary(g, "Relu", x);
    x = gen_conv2d(g, x, k, k, c, 1);
    return gen_batchnorm(g, x);
}

/* ENAS _factorized_reduction: two shifted stride-2 paths of avg pool + 1x1 conv, concat, bn. */
static gen_tensor gen_cifar10_factorized_reduction(gen_ctx *g, gen_tensor x, int c)
{
    gen_tensor path[2];
    gen_push(g, GEN_SCOPE, "path1");
    path[0] = gen_conv2d(g, gen_pool(g, "AvgPool", x, 1, 2, 1), 1, 1, c / 2, 1);
    gen_pop(g);
    gen_push(g, GEN_SCOPE, "path2");
    gen_tensor shifted = gen_op_emit(g, "Pad", "Pad", GEN_GRAD_IDENTITY, &x, 1,
                                     (gen_shape[]){gen_shape_of(g, x)}, 1, 0);
    path[1] = gen_conv2d(g, gen_pool(g, "AvgPool", shifted, 1, 2, 1), 1, 1, c - c / 2, 1);
    gen_pop(g);
    gen_push(g, GEN_GROUP, "final");
    gen_tensor out = gen_batchnorm(g, gen_concat(g, path, 2));
    gen_pop(g);
    return out;
}

/* ENAS _maybe_calibrate_size: both cell inputs at the cell input's size and c channels. */
static void gen_cifar10_calibrate(gen_ctx *g, gen_tensor *in, int c)
{
    gen_shape s0 = gen_shape_of(g, in[0]), s1 = gen_shape_of(g, in[1]);
    if (s0.d[1] != s1.d[1]) {
        gen_push(g, GEN_GROUP, "pool_x");
        in[0] = gen_cifar10_factorized_reduction(g, gen_unary(g, "Relu", in[0]), c);
        gen_pop(g);
    } else if (s0.d[3] != c) {
        gen_push(g, GEN_GROUP, "pool_x");
        in[0] = gen_cifar10_relu_conv_bn(g, in[0], 1, c);
        gen_pop(g);
    }
    if (s1.d[3] != c) {
        gen_push(g, GEN_GROUP, "pool_y");
        in[1] = gen_cifar10_relu_conv_bn(g, in[1], 1, c);
        gen_pop(g);
    }
}

/* ENAS _fixed_conv: stack_convs = 2 times relu, separable conv (depthwise, pointwise), bn. */
static gen_tensor gen_cifar10_sep_conv(gen_ctx *g, gen_tensor x, int k, int c, int stride)
{
    for (int s = 0; s < 2; s++) {
        gen_push(g, GEN_GROUP, "sep_conv_%d", s);
        x = gen_unary(g, "Relu", x);
        gen_push(g, GEN_SCOPE, "separable_conv2d");
        x = gen_depthwise(g, x, k, s == 0 ? stride : 1);
        x = gen_conv2d(g, x, 1, 1, c, 1);
        gen_pop(g);
        x = gen_batchnorm(g, x);
        gen_pop(g);
    }
    return x;
}

/* One op of a node (ENAS _fixed_layer, "x_conv"/"y_conv"); stride 2 on the inputs of a
 * reduction cell.  An identity at stride 1 emits nothing. */
static gen_tensor gen_cifar10_node_op(gen_ctx *g, gen_tensor x, int op, int stride, int c,
                                      const char *branch)
{
    if (op == GEN_IDENTITY && stride == 1)
        return x;
    gen_push(g, GEN_GROUP, "%s", branch);
    if (op == GEN_SEP3 || op == GEN_SEP5)
        x = gen_cifar10_sep_conv(g, x, op == GEN_SEP3 ? 3 : 5, c, stride);
    else if (op == GEN_AVG || op == GEN_MAX)
        x = gen_pool(g, op == GEN_AVG ? "AvgPool" : "MaxPool", x, 3, stride, 0);
    else
        x = gen_cifar10_factorized_reduction(g, x, c);
    gen_pop(g);
    return x;
}

/* ENAS _fixed_layer: calibrated inputs, B nodes, concat of the unused nodes (_fixed_combine,
 * which reduces unused full-size inputs of a reduction cell first). */
static gen_tensor gen_cifar10_cell(gen_ctx *g, int layer, gen_tensor prev_prev, gen_tensor prev,
                                   const gen_cifar10_arc *a, int c, int stride)
{
    gen_tensor node[GEN_CIFAR10_B + 2] = {prev_prev, prev};
    int used[GEN_CIFAR10_B + 2] = {0};
    gen_push(g, GEN_SCOPE, "layer_%d", layer);
    gen_cifar10_calibrate(g, node, c);
    for (int i = 0; i < GEN_CIFAR10_B; i++) {
        gen_push(g, GEN_GROUP, "cell_%d", i);
        int sx = a->x_id[i] < 2 ? stride : 1, sy = a->y_id[i] < 2 ? stride : 1;
        gen_tensor x = gen_cifar10_node_op(g, node[a->x_id[i]], a->x_op[i], sx, c, "x_conv");
        gen_tensor y = gen_cifar10_node_op(g, node[a->y_id[i]], a->y_op[i], sy, c, "y_conv");
        node[i + 2] = gen_binary(g, "AddV2", x, y);
        used[a->x_id[i]] = used[a->y_id[i]] = 1;
        gen_pop(g);
    }
    gen_tensor loose[GEN_CIFAR10_B + 2];
    int n = 0;
    long long hw = gen_shape_of(g, node[GEN_CIFAR10_B + 1]).d[1];
    for (int i = 0; i < GEN_CIFAR10_B + 2; i++) {
        if (used[i])
            continue;
        loose[n] = node[i];
        if (gen_shape_of(g, node[i]).d[1] > hw) {
            gen_push(g, GEN_GROUP, "final_combine/calibrate_%d", i);
            loose[n] = gen_cifar10_factorized_reduction(g, node[i], c);
            gen_pop(g);
        }
        n++;
    }
    gen_push(g, GEN_GROUP, "final_combine");
    gen_tensor out = gen_concat(g, loose, n);
    gen_pop(g);
    gen_pop(g);
    return out;
}

static gen_tensor gen_cifar10_aux_head(gen_ctx *g, gen_tensor x, gen_tensor labels)
{
    gen_push(g, GEN_GROUP, "aux_head");
    x = gen_pool(g, "AvgPool", gen_unary(g, "Relu", x), 5, 3, 1);
    gen_push(g, GEN_SCOPE, "proj");
    x = gen_unary(g, "Relu", gen_batchnorm(g, gen_conv2d(g, x, 1, 1, 128, 1)));
    gen_pop(g);
    gen_push(g, GEN_SCOPE, "avg_pool");
    int hw = (int)gen_shape_of(g, x).d[1];
    x = gen_conv2d(g, x, hw, hw, 768, hw);
    x = gen_unary(g, "Relu", gen_batchnorm(g, x));
    gen_pop(g);
    gen_push(g, GEN_SCOPE, "fc");
    x = gen_reshape(g, x, gen_shape2(gen_shape_of(g, x).d[0], 768));
    x = gen_dense(g, x, 10, 0);
    gen_pop(g);
    gen_tensor loss = gen_xent_loss(g, x, labels);
    gen_pop(g);
    return loss;
}

int gen_cifar10_generate(uint64_t seed, int index, const char *name, const gen_options *opt,
                         pb_graph **out, pb_error *err)
{
    if (opt->layers > GEN_CIFAR10_MAX_LAYERS)
        return pb_errorf(err, "%s: %d layers (at most %d)", name, opt->layers,
                         GEN_CIFAR10_MAX_LAYERS);
    gen_ctx g;
    int batch = opt->batch > 0 ? opt->batch : GEN_CIFAR10_BATCH;
    gen_init(&g, seed, batch);
    g.opt = *opt;
    g.cost_model = opt->cost_model;
    gen_cifar10_arc normal, reduce;
    gen_cifar10_sample_arc(&g.rng, &normal);
    gen_cifar10_sample_arc(&g.rng, &reduce);
    int n = opt->layers > 0
                ? opt->layers
                : gen_spread(index, GEN_CIFAR10_L_MIN, GEN_CIFAR10_L_MAX); /* num_layers */
    int c = opt->width > 0 ? opt->width : GEN_CIFAR10_C;

    gen_push(&g, GEN_GROUP, "input");
    gen_shape io[2] = {gen_shape4(batch, 32, 32, 3), gen_shape2(batch, 10)};
    gen_tensor images = gen_source(&g, "IteratorGetNext", "IteratorGetNext", io, 2),
               labels = gen_port(images, 1);
    gen_pop(&g);
    gen_push(&g, GEN_SCOPE, "child");
    gen_push(&g, GEN_GROUP, "stem_conv");
    gen_tensor x = gen_batchnorm(&g, gen_conv2d(&g, images, 3, 3, 3 * c, 1));
    gen_pop(&g);
    /* ENAS _model: num_layers + 2 layers, reductions at layers d and 2d + 1 (d = L / 3), the aux
     * head after the layer that follows the second reduction. */
    int pool0 = n / 3, pool1 = 2 * (n / 3) + 1;
    gen_tensor prev_prev = x, prev = x, aux_loss = GEN_NONE;
    for (int layer = 0; layer < n + 2; layer++) {
        int reduction = layer == pool0 || layer == pool1;
        if (reduction)
            c *= 2;
        x = gen_cifar10_cell(&g, layer, prev_prev, prev, reduction ? &reduce : &normal, c,
                             reduction ? 2 : 1);
        prev_prev = prev;
        prev = x;
        if (layer == pool1 + 1)
            aux_loss = gen_cifar10_aux_head(&g, x, labels);
    }
    gen_push(&g, GEN_GROUP, "fc");
    x = gen_mean_spatial(&g, gen_unary(&g, "Relu", x));
    x = gen_dense(&g, x, 10, 0);
    gen_pop(&g);
    gen_pop(&g);
    gen_push(&g, GEN_GROUP, "loss");
    gen_tensor loss = gen_xent_loss(&g, x, labels);
    gen_tensor w = gen_const(&g, "aux_weight", gen_shape0());
    loss = gen_binary(&g, "AddV2", loss, gen_binary(&g, "Mul", aux_loss, w));
    gen_pop(&g);
    gen_train(&g, loss, GEN_OPT_MOMENTUM, 0);
    int rc = gen_finish(&g, name, out, err);
    gen_free(&g);
    return rc;
}
