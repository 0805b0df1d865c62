/* gen_amoebanet.c — GDP's AmoebaNet: tensorflow/tpu amoeba_net (AmoebaNet-A cells), RMSProp. */
#include "gen_model.h"

#include <stdio.h>
#include <string.h>

/*
 * specs/gdp.md §10.2 (GDP §6.3.2; tensorflow/tpu models/official/amoeba_net defaults): batch 64,
 * 299x299x3 images, 1001 classes, reduction_size 256 filters, stem_reduction_size 32, 2 stem
 * cells, `--layers` normal cells with a reduction cell before cells L/3 and 2L/3, the aux head
 * after cell 2L/3 - 1, drop-connect off (keep 1.0), label-smoothed softmax
 * losses (aux x 0.4) plus the weight decay of every conv, separable and dense weight, RMSProp.
 *
 * AmoebaNet-A (the spec's genotype; `used` marks the hidden states not concatenated at the end):
 *   normal    ops avg_pool_3x3, max_pool_3x3, separable_3x3_2, none, none, avg_pool_3x3,
 *             separable_3x3_2, separable_5x5_2, avg_pool_3x3, separable_3x3_2;
 *             inputs 0,0,1,1,0,1,0,2,5,0; used 1,0,1,0,0,1,0;
 *   reduction ops separable_3x3_2, avg_pool_3x3, max_pool_3x3, separable_7x7_2, max_pool_3x3,
 *             max_pool_3x3, separable_3x3_2, 1x7_7x1, avg_pool_3x3, separable_7x7_2;
 *             inputs 1,0,0,2,1,0,4,0,1,0; used 1,1,0,0,0,0,0.
 * A cell (network_utils.BaseCell): the previous-previous output matched to the current one
 * (factorized reduction when the size differs, else a 1x1 conv when the width differs), ReLU ->
 * 1x1 conv -> batch norm of the input, a one-way Split, five combinations h = left + right, and
 * the unused states concatenated.  separable_kxk_2 is (ReLU, depthwise kxk, pointwise 1x1, batch
 * norm) twice; 1x7_7x1 goes through a 1x1 bottleneck of a quarter of the filters; a pool gets a
 * 1x1 conv and batch norm when the width differs; "none" a strided 1x1 conv when it must reduce.
 * Convs have no bias; batch norm is fused with a trainable gamma and beta and the moving
 * statistics' updates.
 *
 * Counting: the training step (specs/gdp.md §10.1: no initializers).  A normal cell is ~667 ops
 * and the rest (stem, stem and reduction cells, heads, loss) ~3,910, so tensorflow/tpu's default
 * of 12 normal cells gives 11,914 ops, 26 % over GDP's 9,430.  The number of cells is the spec's
 * calibration knob: the default is 8 normal cells (12 cells in all, 9,246 ops, -2.0 %);
 * `--layers 12` builds the tensorflow/tpu default.  The trainer's exponential moving average of
 * every variable is off: its ~5 step ops per variable (~3,300 over ~680 variables) would leave
 * no room for even 8 cells.  Groups: the stem, each cell's base and each
 * combination's left and right branches, the cell outputs, the aux head, the final layer, the loss.
 */
#define GEN_AMOEBA_FILTERS 256
#define GEN_AMOEBA_STEM_FILTERS 32
#define GEN_AMOEBA_CLASSES 1001
#define GEN_AMOEBA_IMAGE 299

typedef struct gen_amoeba_cell {
    const char *ops[10];
    int inputs[10];
    int used[7];
} gen_amoeba_cell;

static const gen_amoeba_cell gen_amoeba_normal = {
    {"avg_pool_3x3", "max_pool_3x3", "separable_3x3_2", "none", "none", "avg_pool_3x3",
     "separable_3x3_2", "separable_5x5_2", "avg_pool_3x3", "separable_3x3_2"},
    {0, 0, 1, 1, 0, 1, 0, 2, 5, 0},
    {1, 0, 1, 0, 0, 1, 0}};

static const gen_amoeba_cell gen_amoeba_reduction = {
    {"separable_3x3_2", "avg_pool_3x3", "max_pool_3x3", "separable_7x7_2", "max_pool_3x3",
     "max_pool_3x3", "separable_3x3_2", "1x7_7x1", "avg_pool_3x3", "separable_7x7_2"},
    {1, 0, 0, 2, 1, 0, 4, 0, 1, 0},
    {1, 1, 0, 0, 0, 0, 0}};

static long long gen_amoeba_width(gen_ctx *g, gen_tensor x)
{
    return gen_shape_of(g, x).d[3];
}

/* slim.conv2d under the AmoebaNet arg_scope: no bias, no activation, weight decay. */
static gen_tensor gen_amoeba_conv(gen_ctx *g, const char *scope, gen_tensor x, int kh, int kw,
                                  long long cout, int stride, int valid)
{
    return gen_slim_conv(g, scope, x, kh, kw, (int)cout, stride,
                         GEN_SLIM_LINEAR | GEN_SLIM_NO_BIAS | GEN_SLIM_SCOPE_ONLY |
                             (valid ? GEN_SLIM_VALID : 0));
}

static gen_tensor gen_amoeba_bn(gen_ctx *g, const char *scope, gen_tensor x)
{
    return gen_slim_batch_norm_named(g, scope, x, 1);
}

static gen_tensor gen_amoeba_relu(gen_ctx *g, gen_tensor x)
{
    return gen_unary(g, "Relu", x);
}

/* slim.separable_conv2d (depth multiplier 1, no bias): depthwise kxk then pointwise 1x1, each
 * weight with its weight decay. */
static gen_tensor gen_amoeba_separable(gen_ctx *g, const char *scope, gen_tensor x, int k,
                                       long long cout, int stride)
{
    gen_push(g, GEN_SCOPE, "%s", scope);
    gen_shape s = gen_shape_of(g, x);
    gen_tensor dw = gen_variable(g, "depthwise_weights", gen_shape4(k, k, s.d[3], 1));
    gen_slim_l2_regularizer(g, dw);
    long long h = (s.d[1] + stride - 1) / stride, w = (s.d[2] + stride - 1) / stride;
    gen_shape o = gen_shape4(s.d[0], h, w, s.d[3]);
    gen_tensor in[2] = {x, dw};
    gen_tensor y = gen_op_emit(g, "DepthwiseConv2dNative", "depthwise", GEN_GRAD_DEPTHWISE, in, 2,
                               &o, 1, 2.0 * gen_shape_elems(o) * k * k);
    gen_tensor pw = gen_variable(g, "pointwise_weights", gen_shape4(1, 1, s.d[3], cout));
    gen_slim_l2_regularizer(g, pw);
    gen_shape po = gen_shape4(s.d[0], h, w, cout);
    gen_tensor pin[2] = {y, pw};
    y = gen_op_emit(g, "Conv2D", "Conv2D", GEN_GRAD_CONV2D, pin, 2, &po, 1,
                    2.0 * gen_shape_elems(po) * (double)s.d[3]);
    gen_pop(g);
    return y;
}

/* network_utils.factorized_reduction. */
static gen_tensor gen_amoeba_factorized(gen_ctx *g, gen_tensor x, long long cout, int stride)
{
    if (stride == 1)
        return gen_amoeba_bn(g, "path_bn", gen_amoeba_conv(g, "path_conv", x, 1, 1, cout, 1, 0));
    gen_tensor p1 = gen_pool(g, "AvgPool", x, 1, stride, 1);
    p1 = gen_amoeba_conv(g, "path1_conv", p1, 1, 1, cout / 2, 1, 0);
    gen_shape s = gen_shape_of(g, x), padded = s;
    padded.d[1]++;
    padded.d[2]++;
    gen_tensor p2 = gen_op_emit(g, "Pad", "Pad", GEN_GRAD_CONCAT, &x, 1, &padded, 1, 0);
    p2 = gen_op_emit(g, "StridedSlice", "strided_slice", GEN_GRAD_SLICE, &p2, 1, &s, 1, 0);
    p2 = gen_pool(g, "AvgPool", p2, 1, stride, 1);
    p2 = gen_amoeba_conv(g, "path2_conv", p2, 1, 1, cout / 2, 1, 0);
    gen_tensor both[2] = {p1, p2};
    return gen_amoeba_bn(g, "final_path_bn", gen_concat(g, both, 2));
}

/* "separable_3x3_2" -> kernel 3, 2 layers; "max_pool_3x3" -> kernel 3. */
static int gen_amoeba_kernel(const char *op)
{
    const char *x = strchr(op, 'x');
    return x && x > op ? x[-1] - '0' : 1;
}

/* _apply_operation: one branch of a combination. */
static gen_tensor gen_amoeba_apply(gen_ctx *g, gen_tensor x, const char *op, int stride,
                                   long long f)
{
    long long in_f = gen_amoeba_width(g, x);
    int k = gen_amoeba_kernel(op);
    char scope[48];
    if (strncmp(op, "separable", 9) == 0) {
        for (int l = 1; l <= 2; l++) {
            x = gen_amoeba_relu(g, x);
            snprintf(scope, sizeof scope, "separable_%dx%d_%d", k, k, l);
            x = gen_amoeba_separable(g, scope, x, k, f, l == 1 ? stride : 1);
            snprintf(scope, sizeof scope, "bn_sep_%dx%d_%d", k, k, l);
            x = gen_amoeba_bn(g, scope, x);
        }
    } else if (strcmp(op, "1x7_7x1") == 0) {
        long long r = f / 4;
        x = gen_amoeba_conv(g, "pre_1x1", gen_amoeba_relu(g, x), 1, 1, r, 1, 0);
        x = gen_amoeba_relu(g, gen_amoeba_bn(g, "pre_bn", x));
        /* the [1, s] and [s, 1] strides of the two convs as one stride s on the second (the
         * same output; the 1x7 conv's FLOPs are counted at full width) */
        x = gen_amoeba_conv(g, "1x7", x, 1, 7, r, 1, 0);
        x = gen_amoeba_relu(g, gen_amoeba_bn(g, "bn_1x7_7x1", x));
        x = gen_amoeba_conv(g, "7x1", x, 7, 1, r, stride, 0);
        x = gen_amoeba_relu(g, gen_amoeba_bn(g, "bn", x));
        x = gen_amoeba_bn(g, "post_bn", gen_amoeba_conv(g, "post_1x1", x, 1, 1, f, 1, 0));
    } else if (strcmp(op, "none") == 0) {
        if (stride > 1 || in_f != f) {
            x = gen_amoeba_conv(g, "1x1", gen_amoeba_relu(g, x), 1, 1, f, stride, 0);
            x = gen_amoeba_bn(g, "bn_1", x);
        }
    } else {
        x = gen_pool(g, op[0] == 'a' ? "AvgPool" : "MaxPool", x, k, stride, 0);
        if (in_f != f)
            x = gen_amoeba_bn(g, "bn_1", gen_amoeba_conv(g, "1x1", x, 1, 1, f, 1, 0));
    }
    return x;
}

/* One cell in scope `scope`: returns its output; prev is the output before the input (or
 * GEN_NONE). */
static gen_tensor gen_amoeba_cell_build(gen_ctx *g, const gen_amoeba_cell *c, const char *scope,
                                        gen_tensor x, gen_tensor prev, double scaling, int stride)
{
    long long f = (long long)(GEN_AMOEBA_FILTERS * scaling);
    gen_tensor h[7];
    gen_push(g, GEN_SCOPE, "%s", scope);
    gen_push(g, GEN_GROUP, "base");
    if (prev.op < 0) {
        prev = x;
    } else if (gen_shape_of(g, prev).d[2] != gen_shape_of(g, x).d[2]) {
        prev = gen_amoeba_factorized(g, gen_amoeba_relu(g, prev), f, 2);
    } else if (gen_amoeba_width(g, prev) != f) {
        prev = gen_amoeba_conv(g, "prev_1x1", gen_amoeba_relu(g, prev), 1, 1, f, 1, 0);
        prev = gen_amoeba_bn(g, "prev_bn", prev);
    }
    x = gen_amoeba_conv(g, "1x1", gen_amoeba_relu(g, x), 1, 1, f, 1, 0);
    h[0] = gen_split(g, gen_amoeba_bn(g, "beginning_bn", x), 1);
    h[1] = prev;
    gen_pop(g);
    for (int it = 0; it < 5; it++) {
        gen_push(g, GEN_SCOPE, "comb_iter_%d", it);
        gen_tensor side[2];
        for (int s = 0; s < 2; s++) {
            int idx = c->inputs[2 * it + s];
            gen_push(g, GEN_GROUP, "%s", s ? "right" : "left");
            side[s] = gen_amoeba_apply(g, h[idx], c->ops[2 * it + s], idx < 2 ? stride : 1, f);
            gen_pop(g);
        }
        gen_push(g, GEN_GROUP, "combine");
        h[2 + it] = gen_binary(g, "AddV2", side[0], side[1]);
        gen_pop(g);
        gen_pop(g);
    }
    gen_push(g, GEN_GROUP, "cell_output");
    gen_tensor out[7];
    int n = 0;
    gen_shape last = gen_shape_of(g, h[6]);
    for (int i = 0; i < 7; i++) {
        if (c->used[i])
            continue;
        gen_shape si = gen_shape_of(g, h[i]);
        if (si.d[2] != last.d[2] || si.d[3] != last.d[3]) {
            gen_push(g, GEN_SCOPE, "reduction_%d", i);
            h[i] = gen_amoeba_factorized(g, h[i], last.d[3], si.d[2] != last.d[2] ? 2 : 1);
            gen_pop(g);
        }
        out[n++] = h[i];
    }
    gen_tensor y = gen_concat(g, out, n);
    gen_pop(g);
    gen_pop(g);
    return y;
}

/* slim.fully_connected (weights with decay, biases) to `units`. */
static gen_tensor gen_amoeba_fc(gen_ctx *g, gen_tensor x, int units)
{
    gen_push(g, GEN_GROUP, "FC");
    gen_shape s = gen_shape_of(g, x);
    gen_tensor w = gen_variable(g, "weights", gen_shape2(s.d[s.rank - 1], units));
    gen_slim_l2_regularizer(g, w);
    gen_tensor y =
        gen_bias_add(g, gen_matmul(g, x, w, 0), gen_variable(g, "biases", gen_shape1(units)));
    gen_pop(g);
    return y;
}

static gen_tensor gen_amoeba_aux(gen_ctx *g, gen_tensor x, int batch)
{
    gen_push(g, GEN_GROUP, "aux_logits");
    x = gen_pool(g, "AvgPool", gen_amoeba_relu(g, x), 5, 3, 1);
    x = gen_amoeba_conv(g, "proj", x, 1, 1, 128, 1, 0);
    x = gen_amoeba_relu(g, gen_amoeba_bn(g, "aux_bn0", x));
    gen_shape s = gen_shape_of(g, x);
    x = gen_amoeba_conv(g, "Conv", x, (int)s.d[1], (int)s.d[2], 768, 1, 1);
    x = gen_amoeba_relu(g, gen_amoeba_bn(g, "aux_bn1", x));
    x = gen_reshape(g, x, gen_shape2(batch, 768)); /* flatten */
    x = gen_amoeba_fc(g, x, GEN_AMOEBA_CLASSES);
    gen_pop(g);
    return x;
}

/* tf.losses.softmax_cross_entropy (label smoothing, weight) in group `scope`. */
static gen_tensor gen_amoeba_loss(gen_ctx *g, const char *scope, gen_tensor logits,
                                  gen_tensor labels)
{
    gen_push(g, GEN_GROUP, "%s", scope);
    gen_shape scalar = gen_shape0();
    gen_tensor smooth = gen_broadcast(g, "Mul", labels, gen_const(g, "smoothing", scalar));
    smooth = gen_broadcast(g, "AddV2", smooth, gen_const(g, "smoothing_offset", scalar));
    gen_tensor loss = gen_xent_loss(g, logits, smooth);
    loss = gen_broadcast(g, "Mul", loss, gen_const(g, "weights", scalar));
    gen_pop(g);
    return loss;
}

int gen_amoebanet_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err)
{
    int b = a->batch, cells = a->layers;
    int red[2] = {cells / 3, 2 * cells / 3}; /* calc_reduction_layers */
    gen_ctx g;
    gen_init(&g, a->seed, b);
    g.slim_scope = GEN_SLIM_L2;
    gen_shape io[2] = {gen_shape4(b, GEN_AMOEBA_IMAGE, GEN_AMOEBA_IMAGE, 3),
                       gen_shape2(b, GEN_AMOEBA_CLASSES)};
    gen_tensor x = gen_source(&g, "Placeholder", "Placeholder", &io[0], 1);
    gen_tensor labels = gen_source(&g, "Placeholder", "Placeholder_1", &io[1], 1);
    gen_push(&g, GEN_GROUP, "stem");
    x = gen_amoeba_conv(&g, "conv0", x, 3, 3, GEN_AMOEBA_STEM_FILTERS, 2, 1);
    x = gen_amoeba_bn(&g, "conv0_bn", x);
    gen_pop(&g);
    gen_tensor prev = GEN_NONE, aux = GEN_NONE;
    char scope[32];
    double scaling = 0.25;
    for (int k = 0; k < 2; k++, scaling *= 2) {
        snprintf(scope, sizeof scope, "cell_stem_%d", k);
        gen_tensor y = gen_amoeba_cell_build(&g, &gen_amoeba_reduction, scope, x, prev, scaling, 2);
        prev = x;
        x = y;
    }
    scaling = 1.0;
    for (int c = 0; c < cells; c++) {
        for (int r = 0; r < 2; r++)
            if (c == red[r]) {
                scaling *= 2;
                snprintf(scope, sizeof scope, "reduction_cell_%d", r);
                gen_tensor y =
                    gen_amoeba_cell_build(&g, &gen_amoeba_reduction, scope, x, prev, scaling, 2);
                prev = x;
                x = y;
            }
        snprintf(scope, sizeof scope, "cell_%d", c);
        gen_tensor y = gen_amoeba_cell_build(&g, &gen_amoeba_normal, scope, x, prev, scaling, 1);
        prev = x;
        x = y;
        if (c == red[1] - 1) {
            gen_push(&g, GEN_SCOPE, "aux_%d", c);
            aux = gen_amoeba_aux(&g, x, b);
            gen_pop(&g);
        }
    }
    gen_push(&g, GEN_SCOPE, "final_layer");
    gen_push(&g, GEN_GROUP, "pool");
    x = gen_mean_spatial(&g, gen_amoeba_relu(&g, x));
    gen_pop(&g);
    gen_push(&g, GEN_GROUP, "dropout");
    x = gen_slim_dropout(&g, x);
    gen_pop(&g);
    x = gen_amoeba_fc(&g, x, GEN_AMOEBA_CLASSES);
    gen_pop(&g);
    gen_tensor losses[3];
    int n = 0;
    if (aux.op >= 0)
        losses[n++] = gen_amoeba_loss(&g, "aux_loss", aux, labels);
    losses[n++] = gen_amoeba_loss(&g, "softmax_loss", x, labels);
    gen_push(&g, GEN_GROUP, "total_loss");
    losses[n++] = gen_add_n(&g, g.losses, g.n_losses); /* regularization_loss */
    gen_tensor loss = gen_add_n(&g, losses, n);
    gen_pop(&g);
    gen_train(&g, loss, GEN_OPT_RMSPROP, 0);
    if (a->opt[GEN_AMOEBA_OPT_EMA])
        gen_tf_ema(&g);
    int rc = gen_model_finish(&g, a, name, out, err);
    gen_free(&g);
    return rc;
}
