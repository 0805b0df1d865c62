/* gen_inceptionv3.c — Inception-V3 as TAG trains it: tf.contrib.slim inception_v3, Adam. */
#include "gen_model.h"

#include <stdio.h>

/*
 * TAG (ylxdzsw/tag gnn/gen_raw_data.py, `inception`): 224x224x3 placeholders,
 * inception.inception_v3(x, 1000) without inception_v3_arg_scope (slim.conv2d with biases and
 * ReLU, no batch norm), reduce_sum of the sigmoid cross-entropy of the main logits, Adam; the
 * whole GraphDef is counted (GEN_TF_UNIFORM).  The network is slim's inception_v3_base (stem of
 * five VALID/SAME convs and two max pools; Mixed_5b-d, 6a, 6b-e, 7a, 7b-c with their branches as
 * in slim), the auxiliary head after Mixed_6e (5x5/3 avg pool, 1x1 conv 128, a VALID conv of 768
 * over the remaining 3x3, 1x1 conv 1000; not in the loss, so its variables get no update), and
 * the logits (VALID avg pool over the 5x5 map, dropout, 1x1 conv 1000).  One group per conv,
 * pool and concat.
 */
typedef struct gen_inc {
    gen_ctx *g;
    int branch; /* Branch_<n> scopes of the current block */
} gen_inc;

/* One conv of a branch: scope "Conv2d_0x_KxK" as slim names them (the letter counts per branch). */
static gen_tensor gen_inc_conv(gen_ctx *g, gen_tensor x, int kh, int kw, int c, int stride,
                               int valid, int index)
{
    char scope[48];
    snprintf(scope, sizeof scope, "Conv2d_%s%c_%dx%d", valid ? "1" : "0", 'a' + index, kh, kw);
    return gen_slim_conv(g, scope, x, kh, kw, c, stride, valid ? GEN_SLIM_VALID : 0);
}

/* A pool in its own group, named as slim names it ("MaxPool_3a_3x3"). */
static gen_tensor gen_inc_pool(gen_ctx *g, const char *type, const char *tag, gen_tensor x, int k,
                               int stride, int valid)
{
    gen_push(g, GEN_GROUP, "%s_%s_%dx%d", type, tag, k, k);
    x = gen_pool(g, type, x, k, stride, valid);
    gen_pop(g);
    return x;
}

static gen_tensor gen_inc_concat(gen_ctx *g, const gen_tensor *b, int n)
{
    gen_push(g, GEN_GROUP, "concat");
    gen_tensor y = gen_concat(g, b, n);
    gen_pop(g);
    return y;
}

/* A chain of convs in Branch_<k>: n convs (kh[i] x kw[i], c[i] channels), SAME, stride 1. */
static gen_tensor gen_inc_chain(gen_ctx *g, int k, gen_tensor x, int n, const int *kh,
                                const int *kw, const int *c)
{
    gen_push(g, GEN_SCOPE, "Branch_%d", k);
    for (int i = 0; i < n; i++)
        x = gen_inc_conv(g, x, kh[i], kw[i], c[i], 1, 0, i);
    gen_pop(g);
    return x;
}

/* Branch_3 of the Mixed blocks: 3x3 avg pool then a 1x1 conv. */
static gen_tensor gen_inc_pool_branch(gen_ctx *g, gen_tensor x, int c)
{
    gen_push(g, GEN_SCOPE, "Branch_3");
    x = gen_inc_pool(g, "AvgPool", "0a", x, 3, 1, 0);
    x = gen_inc_conv(g, x, 1, 1, c, 1, 0, 1);
    gen_pop(g);
    return x;
}

static gen_tensor gen_inc_mixed5(gen_ctx *g, gen_tensor x, int pool_c)
{
    gen_tensor b[4];
    b[0] = gen_inc_chain(g, 0, x, 1, (int[]){1}, (int[]){1}, (int[]){64});
    b[1] = gen_inc_chain(g, 1, x, 2, (int[]){1, 5}, (int[]){1, 5}, (int[]){48, 64});
    b[2] = gen_inc_chain(g, 2, x, 3, (int[]){1, 3, 3}, (int[]){1, 3, 3}, (int[]){64, 96, 96});
    b[3] = gen_inc_pool_branch(g, x, pool_c);
    return gen_inc_concat(g, b, 4);
}

static gen_tensor gen_inc_mixed6(gen_ctx *g, gen_tensor x, int c)
{
    gen_tensor b[4];
    b[0] = gen_inc_chain(g, 0, x, 1, (int[]){1}, (int[]){1}, (int[]){192});
    b[1] = gen_inc_chain(g, 1, x, 3, (int[]){1, 1, 7}, (int[]){1, 7, 1}, (int[]){c, c, 192});
    b[2] = gen_inc_chain(g, 2, x, 5, (int[]){1, 7, 1, 7, 1}, (int[]){1, 1, 7, 1, 7},
                         (int[]){c, c, c, c, 192});
    b[3] = gen_inc_pool_branch(g, x, 192);
    return gen_inc_concat(g, b, 4);
}

/* Mixed_7b/c: the 3x3 branches end in a 1x3 and a 3x1 conv side by side, concatenated. */
static gen_tensor gen_inc_split_end(gen_ctx *g, gen_tensor x)
{
    gen_tensor s[2] = {gen_inc_conv(g, x, 1, 3, 384, 1, 0, 1),
                       gen_inc_conv(g, x, 3, 1, 384, 1, 0, 2)};
    return gen_inc_concat(g, s, 2);
}

static gen_tensor gen_inc_mixed7(gen_ctx *g, gen_tensor x)
{
    gen_tensor b[4];
    b[0] = gen_inc_chain(g, 0, x, 1, (int[]){1}, (int[]){1}, (int[]){320});
    gen_push(g, GEN_SCOPE, "Branch_1");
    b[1] = gen_inc_split_end(g, gen_inc_conv(g, x, 1, 1, 384, 1, 0, 0));
    gen_pop(g);
    gen_push(g, GEN_SCOPE, "Branch_2");
    gen_tensor t = gen_inc_conv(g, x, 1, 1, 448, 1, 0, 0);
    b[2] = gen_inc_split_end(g, gen_inc_conv(g, t, 3, 3, 384, 1, 0, 1));
    gen_pop(g);
    b[3] = gen_inc_pool_branch(g, x, 192);
    return gen_inc_concat(g, b, 4);
}

static gen_tensor gen_inc_reductions(gen_ctx *g, gen_tensor x, int which)
{
    gen_tensor b[3];
    gen_push(g, GEN_SCOPE, "Branch_0");
    if (which == 6) {
        b[0] = gen_inc_conv(g, x, 3, 3, 384, 2, 1, 0);
    } else {
        b[0] = gen_inc_conv(g, gen_inc_conv(g, x, 1, 1, 192, 1, 0, 0), 3, 3, 320, 2, 1, 1);
    }
    gen_pop(g);
    gen_push(g, GEN_SCOPE, "Branch_1");
    if (which == 6) {
        gen_tensor t = gen_inc_conv(g, x, 1, 1, 64, 1, 0, 0);
        b[1] = gen_inc_conv(g, gen_inc_conv(g, t, 3, 3, 96, 1, 0, 1), 3, 3, 96, 2, 1, 2);
    } else {
        gen_tensor t = gen_inc_conv(g, x, 1, 1, 192, 1, 0, 0);
        t = gen_inc_conv(g, gen_inc_conv(g, t, 1, 7, 192, 1, 0, 1), 7, 1, 192, 1, 0, 2);
        b[1] = gen_inc_conv(g, t, 3, 3, 192, 2, 1, 3);
    }
    gen_pop(g);
    gen_push(g, GEN_SCOPE, "Branch_2");
    b[2] = gen_inc_pool(g, "MaxPool", "1a", x, 3, 2, 1);
    gen_pop(g);
    return gen_inc_concat(g, b, 3);
}

static gen_tensor gen_inc_stem(gen_ctx *g, gen_tensor x)
{
    x = gen_slim_conv(g, "Conv2d_1a_3x3", x, 3, 3, 32, 2, GEN_SLIM_VALID);
    x = gen_slim_conv(g, "Conv2d_2a_3x3", x, 3, 3, 32, 1, GEN_SLIM_VALID);
    x = gen_slim_conv(g, "Conv2d_2b_3x3", x, 3, 3, 64, 1, 0);
    x = gen_inc_pool(g, "MaxPool", "3a", x, 3, 2, 1);
    x = gen_slim_conv(g, "Conv2d_3b_1x1", x, 1, 1, 80, 1, GEN_SLIM_VALID);
    x = gen_slim_conv(g, "Conv2d_4a_3x3", x, 3, 3, 192, 1, GEN_SLIM_VALID);
    return gen_inc_pool(g, "MaxPool", "5a", x, 3, 2, 1);
}

/* AuxLogits after Mixed_6e: computed in the GraphDef, not part of TAG's loss; [B, classes]. */
static gen_tensor gen_inc_aux(gen_ctx *g, gen_tensor x, int batch, int classes)
{
    gen_push(g, GEN_SCOPE, "AuxLogits");
    x = gen_inc_pool(g, "AvgPool", "1a", x, 5, 3, 1);
    x = gen_slim_conv(g, "Conv2d_1b_1x1", x, 1, 1, 128, 1, 0);
    gen_shape s = gen_shape_of(g, x);
    x = gen_slim_conv(g, "Conv2d_2a", x, (int)s.d[1], (int)s.d[2], 768, 1, GEN_SLIM_VALID);
    x = gen_slim_conv(g, "Conv2d_2b_1x1", x, 1, 1, classes, 1, GEN_SLIM_LINEAR);
    x = gen_reshape(g, x, gen_shape2(batch, classes));
    gen_pop(g);
    return x;
}

/* What differs between TAG's and GDP's Inception-V3 (see the header comments). */
typedef struct gen_inc_cfg {
    int image, classes;
    int tf_graphdef; /* GEN_TF_* */
    int slim_scope;  /* GEN_SLIM_* flags of inception_v3_arg_scope (0: no arg_scope) */
    int softmax;     /* softmax cross-entropy with the aux head in the loss; else TAG's sigmoid */
    int optimizer;   /* GEN_OPT_* */
    int ema;         /* ExponentialMovingAverage of the model variables */
} gen_inc_cfg;

static int gen_inc_generate(const gen_inc_cfg *c, const gen_model_args *a, const char *name,
                            pb_graph **out, pb_error *err)
{
    static const int mixed6_c[4] = {128, 160, 160, 192};
    gen_ctx g;
    gen_init(&g, a->seed, a->batch);
    g.tf_graphdef = c->tf_graphdef;
    g.slim_scope = c->slim_scope;
    gen_shape io[2] = {gen_shape4(a->batch, c->image, c->image, 3),
                       gen_shape2(a->batch, c->classes)};
    gen_tensor x = gen_source(&g, "Placeholder", "Placeholder", &io[0], 1);
    gen_tensor labels = gen_source(&g, "Placeholder", "Placeholder_1", &io[1], 1);
    gen_push(&g, GEN_SCOPE, "InceptionV3");
    x = gen_inc_stem(&g, x);
    for (int k = 0; k < 3; k++) {
        gen_push(&g, GEN_SCOPE, "Mixed_5%c", 'b' + k);
        x = gen_inc_mixed5(&g, x, k == 0 ? 32 : 64);
        gen_pop(&g);
    }
    gen_push(&g, GEN_SCOPE, "Mixed_6a");
    x = gen_inc_reductions(&g, x, 6);
    gen_pop(&g);
    for (int k = 0; k < 4; k++) {
        gen_push(&g, GEN_SCOPE, "Mixed_6%c", 'b' + k);
        x = gen_inc_mixed6(&g, x, mixed6_c[k]);
        gen_pop(&g);
    }
    gen_tensor aux = gen_inc_aux(&g, x, a->batch, c->classes);
    gen_push(&g, GEN_SCOPE, "Mixed_7a");
    x = gen_inc_reductions(&g, x, 7);
    gen_pop(&g);
    for (int k = 0; k < 2; k++) {
        gen_push(&g, GEN_SCOPE, "Mixed_7%c", 'b' + k);
        x = gen_inc_mixed7(&g, x);
        gen_pop(&g);
    }
    gen_push(&g, GEN_SCOPE, "Logits");
    gen_shape s = gen_shape_of(&g, x);
    x = gen_inc_pool(&g, "AvgPool", "1a", x, (int)s.d[1], 1, 1);
    gen_push(&g, GEN_GROUP, "Dropout_1b");
    x = gen_slim_dropout(&g, x);
    gen_pop(&g);
    x = gen_slim_conv(&g, "Conv2d_1c_1x1", x, 1, 1, c->classes, 1, GEN_SLIM_LINEAR);
    x = gen_reshape(&g, x, gen_shape2(a->batch, c->classes)); /* SpatialSqueeze */
    gen_pop(&g);
    gen_pop(&g);
    gen_tensor loss;
    if (c->softmax) {
        /* train_image_classifier: softmax cross-entropy of the logits, 0.4 x that of the aux
         * logits, plus the regularization losses */
        gen_push(&g, GEN_GROUP, "softmax_cross_entropy_loss");
        gen_tensor main_loss = gen_xent_loss(&g, x, labels);
        gen_pop(&g);
        gen_push(&g, GEN_GROUP, "softmax_cross_entropy_loss_1");
        gen_tensor aux_loss = gen_broadcast(&g, "Mul", gen_xent_loss(&g, aux, labels),
                                            gen_const(&g, "weights", gen_shape0()));
        gen_pop(&g);
        gen_add_loss(&g, aux_loss);
        gen_push(&g, GEN_GROUP, "total_loss");
        loss = gen_total_loss(&g, main_loss);
        gen_pop(&g);
    } else {
        loss = gen_slim_sigmoid_loss(&g, x, labels);
    }
    gen_train(&g, loss, c->optimizer, 0);
    if (c->ema)
        gen_tf_ema(&g);
    if (c->tf_graphdef)
        gen_tf_init_op(&g);
    int rc = gen_model_finish(&g, a, name, out, err);
    gen_free(&g);
    return rc;
}

int gen_inceptionv3_generate(const gen_model_args *a, const char *name, pb_graph **out,
                             pb_error *err)
{
    gen_inc_cfg c = {224, 1000, GEN_TF_UNIFORM, 0, 0, GEN_OPT_ADAM, 0};
    return gen_inc_generate(&c, a, name, out, err);
}

int gen_inceptionv3_gdp_generate(const gen_model_args *a, const char *name, pb_graph **out,
                                 pb_error *err)
{
    int bn = a->opt[GEN_INC_OPT_FUSED_BN] ? GEN_SLIM_BN : GEN_SLIM_BN_UNFUSED;
    gen_inc_cfg c = {
        299, 1001, GEN_TF_NORMAL, bn | GEN_SLIM_L2, 1, GEN_OPT_RMSPROP, a->opt[GEN_INC_OPT_EMA]};
    return gen_inc_generate(&c, a, name, out, err);
}
