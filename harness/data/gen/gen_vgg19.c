/* gen_vgg19.c — VGG19 as TAG trains it: tf.contrib.slim vgg_19, sigmoid cross-entropy, Adam. */
#include "gen_model.h"

#include <stdio.h>

/*
 * TAG (ylxdzsw/tag gnn/gen_raw_data.py, `vgg`): 224x224x3 placeholders, vgg.vgg_19(x, 1000)
 * without an arg_scope (slim.conv2d's defaults: biases, ReLU, xavier weights), the loss
 * reduce_sum(sigmoid_cross_entropy_with_logits) against a [B, 1000] label placeholder, and
 * AdamOptimizer.minimize; TAG counts the whole GraphDef (GEN_TF_UNIFORM).  vgg_19: five blocks of
 * 2, 2, 4, 4, 4 3x3 convs (64, 128, 256, 512, 512 channels) each followed by a 2x2 max pool, fc6
 * as a 7x7 VALID conv of 4096, dropout, fc7 as a 1x1 conv of 4096, dropout, fc8 a linear 1x1 conv
 * of 1000, squeezed to [B, 1000].  Groups: one per conv layer, pool, dropout, the loss.
 */
int gen_vgg19_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err)
{
    static const int convs[5] = {2, 2, 4, 4, 4}, width[5] = {64, 128, 256, 512, 512};
    gen_ctx g;
    gen_init(&g, a->seed, a->batch);
    g.tf_graphdef = GEN_TF_UNIFORM;
    gen_shape io[2] = {gen_shape4(a->batch, 224, 224, 3), gen_shape2(a->batch, 1000)};
    gen_tensor x = gen_source(&g, "Placeholder", "Placeholder", &io[0], 1);
    gen_tensor labels = gen_source(&g, "Placeholder", "Placeholder_1", &io[1], 1);
    gen_push(&g, GEN_SCOPE, "vgg_19");
    for (int b = 0; b < 5; b++) {
        gen_push(&g, GEN_SCOPE, "conv%d", b + 1);
        for (int c = 0; c < convs[b]; c++) {
            char scope[32];
            snprintf(scope, sizeof scope, "conv%d_%d", b + 1, c + 1);
            x = gen_slim_conv(&g, scope, x, 3, 3, width[b], 1, 0);
        }
        gen_pop(&g);
        gen_push(&g, GEN_GROUP, "pool%d", b + 1);
        x = gen_pool(&g, "MaxPool", x, 2, 2, 1);
        gen_pop(&g);
    }
    x = gen_slim_conv(&g, "fc6", x, 7, 7, 4096, 1, GEN_SLIM_VALID);
    gen_push(&g, GEN_GROUP, "dropout6");
    x = gen_slim_dropout(&g, x);
    gen_pop(&g);
    x = gen_slim_conv(&g, "fc7", x, 1, 1, 4096, 1, 0);
    gen_push(&g, GEN_GROUP, "dropout7");
    x = gen_slim_dropout(&g, x);
    gen_pop(&g);
    x = gen_slim_conv(&g, "fc8", x, 1, 1, 1000, 1, GEN_SLIM_LINEAR);
    x = gen_reshape(&g, x, gen_shape2(a->batch, 1000)); /* fc8/squeezed */
    gen_pop(&g);
    gen_tensor loss = gen_slim_sigmoid_loss(&g, x, labels);
    gen_train(&g, loss, GEN_OPT_ADAM, 0);
    gen_tf_init_op(&g);
    int rc = gen_model_finish(&g, a, name, out, err);
    gen_free(&g);
    return rc;
}
