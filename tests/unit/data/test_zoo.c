/* test_zoo.c — the model zoo against the papers' op counts and parameter sizes, determinism, and
 * the per-device cost model (model/devcost.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "data/gen/gen_model.h"
#include "model/devcost.h"
#include "model/graph.h"

#include <math.h>
#include <string.h>

/*
 * The papers' figures, copied from the papers (not from gen_model.c):
 *   TAG Table 3 (op counts; "parameter size" in MiB): InceptionV3 5312 / 90,
 *   ResNet101 7951 / 169, VGG19 1169 / 548, Transformer 16859 / 407, BERT-Small 5061 / 98,
 *   BERT-Large 26601 / 2313 (BERT's sizes without the word-embedding table: 305,220 x 1024 or
 *   x 2048 floats would be 1192 or 2384 MiB on their own).
 *   GDP §6.3 (and specs/gdp.md §10.2): RNNLM 2 layers 9,021; GNMT 2 / 4 / 8 layers 28,044 /
 *   46,600 / 83,712 (no parameter sizes given).
 *   GDP §6.3.1: Inception-V3 at batch 64, "The Tensorflow graph of this model contains 24,713
 *   operations".
 *   GDP §6.3.2: AmoebaNet at batch 64, "The Tensorflow graphs contains 9,430 operations" (the
 *   number of normal cells, 8, is the spec's calibration knob; see gen_amoebanet.c).
 *   GDP §6.3.6: "An 5-stack WaveNet contains 4,374 operations and a 10-stack WaveNet contains
 *   8,516 operations".
 *   HeterPS §6.1: "MATCHNET (16), CTRDNN (16), 2EMB (10), and NCE (5), with the number of
 *   layers in parenthesis"; §6.2 CTRDNN with 8, 12, 16 and 20 layers; §6.3 "a CTRDNN of 7
 *   layers".
 */
typedef struct zoo_target {
    const char *model;
    int layers;
    double ops;
    double param_mib; /* 0: the paper gives none */
} zoo_target;

static const zoo_target zoo_targets[] = {
    {"inceptionv3", 0, 5312, 90},
    {"resnet101", 0, 7951, 169},
    {"vgg19", 0, 1169, 548},
    {"transformer", 0, 16859, 407},
    {"bert-small", 0, 5061, 98},
    {"bert-large", 0, 26601, 2313},
    {"rnnlm", 2, 9021, 0},
    {"gnmt", 2, 28044, 0},
    {"gnmt", 4, 46600, 0},
    {"gnmt", 8, 83712, 0},
    {"inceptionv3-gdp", 0, 24713, 0},
    {"amoebanet", 8, 9430, 0},
    {"wavenet", 5, 4374, 0},
    {"wavenet", 10, 8516, 0},
    {"matchnet", 0, 16, 0},
    {"ctrdnn", 16, 16, 0},
    {"ctrdnn", 7, 7, 0},
    {"ctrdnn", 8, 8, 0},
    {"ctrdnn", 12, 12, 0},
    {"ctrdnn", 20, 20, 0},
    {"2emb", 0, 10, 0},
    {"nce", 0, 5, 0},
};

/* Trainable parameter bytes: input 0 of every optimizer (Apply*) op but BERT's word embeddings,
 * or every node's weights in a layer chain. */
static double zoo_trainable_bytes(const pb_graph *g)
{
    double sum = 0;
    int applies = 0;
    for (int v = 0; v < g->n_nodes; v++)
        if (strncmp(g->node_type[v], "Apply", 5) == 0) {
            applies++;
            int var = g->pred[g->pred_start[v]];
            if (!strstr(g->node_name[var], "word_embeddings"))
                sum += g->param_bytes[var];
        }
    for (int v = 0; !applies && v < g->n_nodes; v++)
        sum += g->param_bytes[v];
    return sum;
}

/* |a - b| <= tol, with both values in the message when not. */
#define zoo_near(a, b, tol)                                                                        \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);                                    \
    } while (0)

static pb_graph *zoo_generate(const char *model, int layers, uint64_t seed)
{
    const gen_model *m = gen_model_find(model);
    assert_non_null(m);
    gen_model_args a = {.layers = layers, .seed = seed};
    pb_graph *g = NULL;
    pb_error err;
    int rc = gen_model_generate(m, &a, &g, &err);
    if (rc != PB_OK)
        fail_msg("%s: %s", model, err.msg);
    return g;
}

static void test_zoo_op_counts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof zoo_targets / sizeof zoo_targets[0]; i++) {
        const zoo_target *t = &zoo_targets[i];
        pb_graph *g = zoo_generate(t->model, t->layers, 1);
        double ops = g->n_nodes, mib = zoo_trainable_bytes(g) / (1024.0 * 1024.0);
        print_message("%-16s %6.0f ops (paper %6.0f, %+5.1f%%) %8.1f MiB (paper %6.0f)\n", g->name,
                      ops, t->ops, 100 * (ops - t->ops) / t->ops, mib, t->param_mib);
        if (fabs(ops - t->ops) > 0.15 * t->ops)
            fail_msg("%s: %g ops, paper %g", g->name, ops, t->ops);
        if (t->param_mib > 0 && fabs(mib - t->param_mib) > 0.15 * t->param_mib)
            fail_msg("%s: %g MiB of parameters, paper %g", g->name, mib, t->param_mib);
        graph_free(g);
    }
}

/*
 * GDP §6.3.5: "The 2-layer Transformer-XL contains 2,618 operations.  The number of ops grow
 * roughly proportional with the number of layers."  Our graph is 26 % over the count (README:
 * not matched, and why), so the test asserts the proportionality: each doubling of the layers
 * doubles the ops within 15 %.
 */
static void test_zoo_transformer_xl_proportional(void **state)
{
    (void)state;
    double ops[3];
    for (int k = 0; k < 3; k++) {
        pb_graph *g = zoo_generate("transformer-xl", 2 << k, 1);
        ops[k] = g->n_nodes;
        graph_free(g);
    }
    for (int k = 1; k < 3; k++)
        if (fabs(ops[k] / ops[k - 1] - 2.0) > 0.15 * 2.0)
            fail_msg("transformer-xl: %g ops at %d layers, %g at %d", ops[k - 1], 1 << k, ops[k],
                     2 << k);
}

/* Every model: same seed, same checksum. */
static void test_zoo_deterministic(void **state)
{
    (void)state;
    for (int i = 0; gen_model_at(i); i++) {
        const gen_model *m = gen_model_at(i);
        pb_graph *a = zoo_generate(m->name, 0, 7), *b = zoo_generate(m->name, 0, 7);
        assert_string_equal(a->checksum, b->checksum);
        graph_free(a);
        graph_free(b);
    }
}

static void test_zoo_bad_arguments(void **state)
{
    (void)state;
    pb_graph *g;
    pb_error err;
    gen_model_args a = {.layers = 3, .seed = 1};
    assert_int_equal(gen_model_generate(gen_model_find("ctrdnn"), &a, &g, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "--layers 3"));
    assert_int_equal(gen_model_generate(gen_model_find("nce"), &a, &g, &err), PB_ERR);
    assert_null(gen_model_find("resnet-9000"));
}

/* The HeterPS chains: one node per layer, linked in order, with the spec's sizes. */
static void test_zoo_chain_sizes(void **state)
{
    (void)state;
    pb_graph *g = zoo_generate("ctrdnn", 8, 1);
    assert_int_equal(g->n_edges, 7);
    /* specs/heterps.md §5: fc1 is 273 -> 400 with 109,600 parameters; B = 512. */
    int fc1 = -1;
    for (int v = 0; v < g->n_nodes; v++)
        if (strcmp(g->node_name[v], "fc1") == 0)
            fc1 = v;
    assert_true(fc1 >= 0);
    assert_string_equal(g->node_type[fc1], "FC");
    zoo_near(g->param_bytes[fc1], 4.0 * 109600, 0);
    zoo_near(g->flops[fc1], 3.0 * 2 * 273 * 400 * 512, 0);
    zoo_near(g->port_bytes[g->port_start[fc1]], 4.0 * 400 * 512, 0);
    graph_free(g);
}

/* The compiler's annotations (gen.h gen_annotate) on VGG19 and GNMT: every optimizer op reads
 * exactly one gradient and updates a parameter of its own colocation class; convolutions carry
 * the batch, filter and bias gradients are sums over it, variables and updates are whole. */
static void zoo_check_annotations(const char *model, int layers)
{
    gen_annotations ann = {0};
    gen_model_args a = {.layers = layers, .seed = 1, .annot = &ann};
    pb_graph *g;
    pb_error err;
    if (gen_model_generate(gen_model_find(model), &a, &g, &err) != PB_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(ann.n, g->n_nodes);
    assert_non_null(g->colocation);
    int applies = 0;
    for (int v = 0; v < g->n_nodes; v++) {
        const char *t = g->node_type[v];
        if (strcmp(t, "Conv2D") == 0 || strcmp(t, "Conv2DBackpropInput") == 0)
            assert_int_equal(ann.split[v], PB_SPLIT_BATCH);
        if (strcmp(t, "Conv2DBackpropFilter") == 0 || strcmp(t, "BiasAddGrad") == 0)
            assert_int_equal(ann.split[v], PB_SPLIT_SUM);
        if (strcmp(t, "VariableV2") == 0)
            assert_int_equal(ann.split[v], PB_SPLIT_NONE);
        if (strncmp(t, "Apply", 5) != 0)
            continue;
        applies++;
        assert_int_equal(ann.role[v], PB_ROLE_APPLY);
        assert_int_equal(ann.split[v], PB_SPLIT_NONE);
        int var = g->pred[g->pred_start[v]], grads = 0;
        assert_int_equal(ann.role[var], PB_ROLE_PARAMETER);
        assert_true(g->colocation[v] >= 0);
        assert_int_equal(g->colocation[var], g->colocation[v]);
        for (int k = g->pred_start[v]; k < g->pred_start[v + 1]; k++)
            grads += ann.role[g->pred[k]] == PB_ROLE_GRADIENT;
        assert_int_equal(grads, 1);
    }
    assert_true(applies > 0);
    gen_annotations_free(&ann);
    graph_free(g);
}

static void test_zoo_annotations(void **state)
{
    (void)state;
    zoo_check_annotations("vgg19", 0);
    zoo_check_annotations("gnmt", 2);
    /* RMSProp's updates beside weight decay, batch-norm statistics and EMA shadows (variables no
     * optimizer updates), two passes over shared weights, BiasAdd on 4-d convolutions */
    zoo_check_annotations("inceptionv3-gdp", 0);
    zoo_check_annotations("amoebanet", 3);
    zoo_check_annotations("transformer", 0);
    zoo_check_annotations("transformer-xl", 1);
    zoo_check_annotations("wavenet", 1);
}

/* specs/tag.md §2.5: times {6:10, 10:14, 15:20, 20:27, 30:40, 60:75} give 61 at b = 48, 145 at
 * b = 120 and 8 at b = 4 (the spec's worked example; its middle points do not matter here). */
static void test_devcost_batch_model(void **state)
{
    (void)state;
    const double b[6] = {6, 10, 15, 20, 30, 60}, t[6] = {10, 14, 20, 27, 40, 75};
    zoo_near(devcost_at_batch(b, t, 6, 48, 0), 61, 1e-9);
    zoo_near(devcost_at_batch(b, t, 6, 120, 0), 145, 1e-9);
    zoo_near(devcost_at_batch(b, t, 6, 4, 0), 8, 1e-9);
    zoo_near(devcost_at_batch(b, t, 6, 15, 0), 20, 1e-9);
    /* One point: the line through (0, overhead) and it; 5 + (25 - 5) * 2 = 45 at twice the batch.
     */
    const double b1 = 32, t1 = 25;
    zoo_near(devcost_at_batch(&b1, &t1, 1, 64, 5), 45, 1e-9);
}

/* A V100 (15.7 TFLOP/s, 900 GB/s): 1 GFLOP over 1 MB is compute bound,
 * 1e9 / (0.5 * 15.7e12) s = 127.39 µs, plus 5 µs; 1 GB moved is 1e9 / (0.7 * 900e9) s. */
static void test_devcost_roofline(void **state)
{
    (void)state;
    pb_device_type v100 = {"V100-16G", 15.7e12, 900e9, 0, 0, 0};
    zoo_near(devcost_op_us(&v100, 1e9, 1e6), 5 + 1e6 / (0.5 * 15.7e3), 1e-6);
    zoo_near(devcost_op_us(&v100, 1e6, 1e9), 5 + 1e6 / (0.7 * 900), 1e-6);
    zoo_near(devcost_op_us(&v100, 0, 0), DEVCOST_HOST_US, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zoo_op_counts),
        cmocka_unit_test(test_zoo_transformer_xl_proportional),
        cmocka_unit_test(test_zoo_deterministic),
        cmocka_unit_test(test_zoo_bad_arguments),
        cmocka_unit_test(test_zoo_annotations),
        cmocka_unit_test(test_zoo_chain_sizes),
        cmocka_unit_test(test_devcost_batch_model),
        cmocka_unit_test(test_devcost_roofline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
