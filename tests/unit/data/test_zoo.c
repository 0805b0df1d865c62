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
 * roughly proportional with the number of layers."  Our graph is 26.6 % over the count and no
 * faithful option brings it within 15 % (gen_transformer_xl.c and README: not matched, and why),
 * so the test asserts the proportionality (each doubling of the layers doubles the ops within
 * 15 %) and test_zoo_opt_transformer_xl the options.
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

/* Model `model` at `layers` with options "key=value" (n of them). */
static pb_graph *zoo_generate_opts(const char *model, int layers, const char *const *opts, int n)
{
    const gen_model *m = gen_model_find(model);
    assert_non_null(m);
    gen_model_args a = {.layers = layers, .seed = 1};
    pb_error err;
    for (int k = 0; k < n; k++)
        if (gen_model_set_opt(m, &a, opts[k], &err) != PB_OK)
            fail_msg("%s: %s", model, err.msg);
    pb_graph *g = NULL;
    if (gen_model_generate(m, &a, &g, &err) != PB_OK)
        fail_msg("%s: %s", model, err.msg);
    return g;
}

static int zoo_ops_with(const char *model, int layers, const char *opt)
{
    pb_graph *g = zoo_generate_opts(model, layers, &opt, opt ? 1 : 0);
    int n = g->n_nodes;
    graph_free(g);
    return n;
}

/* Nodes of type `type`; with `exclude`, those whose name does not contain it. */
static int zoo_count_type(const pb_graph *g, const char *type, const char *exclude)
{
    int n = 0;
    for (int v = 0; v < g->n_nodes; v++)
        n += strcmp(g->node_type[v], type) == 0 && !(exclude && strstr(g->node_name[v], exclude));
    return n;
}

/* The first output port's bytes of the node named `name`; fails when there is none. */
static double zoo_port_bytes(const pb_graph *g, const char *name)
{
    for (int v = 0; v < g->n_nodes; v++)
        if (strcmp(g->node_name[v], name) == 0)
            return g->port_bytes[g->port_start[v]];
    fail_msg("%s: no node '%s'", g->name, name);
    return 0;
}

/*
 * inceptionv3-gdp's fused_bn.  One slim conv+BN unit, batch norm unfused (gen_slim.c, TF 1.x
 * nn.moments + nn.batch_normalization) against FusedBatchNorm, both in a whole-GraphDef
 * training graph where TensorFlow builds every operand's gradient:
 *   unfused forward 15: moments (2 reduction-indices Consts, 2 Mean, StopGradient,
 *     SquaredDifference, 2 Squeeze) and batchnorm (add/y Const, AddV2, Rsqrt, Mul x*inv,
 *     Mul mean*inv, Sub, AddV2);
 *   unfused backward 97: AddV2 broadcast 10 (2 Shape, BroadcastGradientArgs, 2 Sum, 2 Reshape,
 *     tuple NoOp + 2 Identity), Sub 4 (Neg + tuple), Mul 5 (2 Mul + tuple), Mul broadcast 12,
 *     RsqrtGrad 1, AddV2 broadcast with the epsilon 10, 2 Squeeze 2 + 2 (Shape + Reshape),
 *     2 Mean 17 + 17 (15 shape-arithmetic ops, Tile, RealDiv), SquaredDifference 15 (3 + Sub,
 *     Mul, Sum, Reshape + Sub, Mul, Neg, Sum, Reshape + tuple 3), and 2 AddN (inv read by two
 *     Muls; the conv output by Mean, SquaredDifference and Mul);
 *   fused 7: the gamma Const, FusedBatchNorm, FusedBatchNormGrad and its tuple (NoOp + 3).
 * The variables, their updates and the moving averages are the same either way: 112 - 7 = 105
 * fewer ops per unit, and the spec counts 96 conv+BN units (stem 5, Mixed_5b-d 7 each, 6a 4,
 * 6b-e 10 each, 7a 6, 7b-c 9 each, aux 2).
 */
static void test_zoo_opt_fused_bn(void **state)
{
    (void)state;
    const char *fused = "fused_bn=1";
    pb_graph *u = zoo_generate_opts("inceptionv3-gdp", 0, NULL, 0);
    pb_graph *f = zoo_generate_opts("inceptionv3-gdp", 0, &fused, 1);
    assert_int_equal(u->n_nodes - f->n_nodes, 96 * 105);
    assert_int_equal(zoo_count_type(f, "FusedBatchNorm", NULL), 96);
    assert_int_equal(zoo_count_type(f, "FusedBatchNormGrad", NULL), 96);
    assert_int_equal(zoo_count_type(u, "FusedBatchNorm", NULL), 0);
    assert_int_equal(zoo_count_type(u, "Rsqrt", NULL), 96);
    assert_int_equal(zoo_count_type(f, "Rsqrt", NULL), 0);
    assert_string_equal(f->name, "inceptionv3-gdp+fused_bn=1");
    graph_free(u);
    graph_free(f);
}

/*
 * The variable EMA (tf.train.ExponentialMovingAverage.apply over the model variables).  The
 * decay, once: global_step, Cast, 2 Consts, 2 AddV2, the decay Const, RealDiv, Minimum (9).  Per
 * model variable: the shadow VariableV2 and assign_moving_average (decay Const, 1 - decay Sub,
 * Sub, Mul, AssignSub: 5); in a whole GraphDef (inceptionv3-gdp) also the shadow's initial value
 * var.initialized_value(), a tf.cond of 9 ops (IsVariableInitialized, Switch, switch_t,
 * switch_f, pred_id, RefSwitch, read, Switch_1, Merge), and its Assign and read (11).
 * inceptionv3-gdp's model variables: per conv+BN unit weights, beta, moving_mean,
 * moving_variance (96 x 4), and the logits' and aux logits' weights and biases (4): 388.
 * AmoebaNet's graph counts no initializers: 6 per model variable, counted in the graph (the
 * VariableV2s that are not RMSProp slots).
 */
static void test_zoo_opt_ema(void **state)
{
    (void)state;
    int with = zoo_ops_with("inceptionv3-gdp", 0, NULL);
    int without = zoo_ops_with("inceptionv3-gdp", 0, "ema=0");
    assert_int_equal(with - without, 9 + 388 * (6 + 11));
    pb_graph *a = zoo_generate_opts("amoebanet", 0, NULL, 0);
    int vars = zoo_count_type(a, "VariableV2", "RMSProp");
    assert_true(vars > 0);
    assert_int_equal(zoo_ops_with("amoebanet", 0, "ema=1") - a->n_nodes, 9 + 6 * vars);
    graph_free(a);
}

/*
 * Transformer-XL's options, L layers and S segments.
 * mask=0 leaves out, per layer and segment, score * (1 - m) (Mul with broadcasting: 1 op, and
 * its gradient for the score alone, as the generator needs no gradient of the constant mask:
 * 2 Shape, BroadcastGradientArgs, Mul, Sum, Reshape) and - 1e30 m (Sub: 1 + Shape x2,
 * BroadcastGradientArgs, Sum, Reshape), 13 ops; and once the mask itself (MatrixBandPart, 2
 * Consts, Sub, Mul): 13 L S + 5.
 * dropout=1 adds tf.nn.dropout (TF 1.14: rate Const, Shape, random_uniform's min, max,
 * RandomUniform, sub, mul, add, sub/x, sub, truediv/x, truediv, GreaterEqual, Cast, x * scale,
 * * mask: 16 ops) with its gradient: x * scale with broadcasting 6 (2 Shape,
 * BroadcastGradientArgs, Mul, Sum, Reshape) and _MulGrad of the mask product, which builds both
 * products and a tuple (2 Mul + NoOp + 2 Identity, 5): 27.  Per layer and segment 4 of them
 * (attention probabilities, attention output, both feed-forward layers), per segment the word
 * embeddings and the last output (27 each) and the relative position embeddings, which take no
 * gradient (16): 108 L S + 70 S.
 * segments: each segment is the same sub-graph, so ops are linear in S.
 * mem_len: shapes only; a layer's keys are [memory; segment] = (m + 64) x 64 x 500 floats.
 */
static void test_zoo_opt_transformer_xl(void **state)
{
    (void)state;
    int base2 = zoo_ops_with("transformer-xl", 2, NULL);
    assert_int_equal(base2 - zoo_ops_with("transformer-xl", 2, "mask=0"), 13 * 2 * 4 + 5);
    const char *one_seg[2] = {"segments=2", "mask=0"};
    pb_graph *g = zoo_generate_opts("transformer-xl", 1, one_seg, 2);
    int masked = zoo_ops_with("transformer-xl", 1, "segments=2");
    assert_int_equal(masked - g->n_nodes, 13 * 1 * 2 + 5);
    graph_free(g);
    assert_int_equal(zoo_ops_with("transformer-xl", 2, "dropout=1") - base2, 108 * 2 * 4 + 70 * 4);
    int s3 = zoo_ops_with("transformer-xl", 2, "segments=3");
    int s5 = zoo_ops_with("transformer-xl", 2, "segments=5");
    assert_int_equal(base2 - s3, s5 - base2);
    assert_true(base2 > s3);
    const char *mem = "mem_len=128";
    g = zoo_generate_opts("transformer-xl", 2, &mem, 1);
    assert_int_equal(g->n_nodes, base2);
    zoo_near(zoo_port_bytes(g, "segment_1/layer_0/rel_attn/concat"), 4.0 * (128 + 64) * 64 * 500,
             0);
    zoo_near(zoo_port_bytes(g, "mems"), 4.0 * 128 * 64 * 500, 0);
    assert_string_equal(g->name, "transformer-xl-2l+mem_len=128");
    graph_free(g);
    g = zoo_generate_opts("transformer-xl", 2, NULL, 0);
    zoo_near(zoo_port_bytes(g, "segment_1/layer_0/rel_attn/concat"), 4.0 * (64 + 64) * 64 * 500, 0);
    graph_free(g);
}

/*
 * WaveNet's input_extra: the waveform placeholder holds B x (receptive field + extra) floats,
 * the receptive field of S stacks being (2 - 1) x S x (1 + 2 + ... + 256) + 1 + 1 = 511 S + 2
 * (5 stacks: 2,557); the op count does not change.
 */
static void test_zoo_opt_wavenet(void **state)
{
    (void)state;
    const char *extra = "input_extra=1000";
    pb_graph *d = zoo_generate_opts("wavenet", 5, NULL, 0);
    pb_graph *e = zoo_generate_opts("wavenet", 5, &extra, 1);
    assert_int_equal(d->n_nodes, e->n_nodes);
    zoo_near(zoo_port_bytes(d, "Placeholder"), 4.0 * 64 * (2557 + 4096), 0);
    zoo_near(zoo_port_bytes(e, "Placeholder"), 4.0 * 64 * (2557 + 1000), 0);
    graph_free(d);
    graph_free(e);
}

/* RNNLM and GNMT's steps: every step is the same sub-graph, so ops are linear in T. */
static void test_zoo_opt_steps(void **state)
{
    (void)state;
    const char *const models[2] = {"rnnlm", "gnmt"};
    for (int i = 0; i < 2; i++) {
        int t10 = zoo_ops_with(models[i], 2, "steps=10");
        int t11 = zoo_ops_with(models[i], 2, "steps=11");
        int t12 = zoo_ops_with(models[i], 2, "steps=12");
        assert_int_equal(t12 - t11, t11 - t10);
        assert_true(t11 > t10);
    }
    /* the default is the option's: 48 steps for rnnlm, 50 for gnmt */
    assert_int_equal(zoo_ops_with("rnnlm", 2, "steps=48"), zoo_ops_with("rnnlm", 2, NULL));
    assert_int_equal(zoo_ops_with("gnmt", 2, "steps=50"), zoo_ops_with("gnmt", 2, NULL));
}

/*
 * The vocabularies (rnnlm and transformer-xl, the spec's [I] 10k): the op count does not change,
 * the trainable parameters by 4 bytes per word in the embedding row (2048 or 500 floats), the
 * softmax column (as many) and the softmax bias (1).
 */
static void test_zoo_opt_vocab(void **state)
{
    (void)state;
    static const struct {
        const char *model;
        double width;
    } m[2] = {{"rnnlm", 2048}, {"transformer-xl", 500}};
    for (int i = 0; i < 2; i++) {
        const char *v = "vocab=5000";
        pb_graph *d = zoo_generate_opts(m[i].model, 2, NULL, 0);
        pb_graph *s = zoo_generate_opts(m[i].model, 2, &v, 1);
        assert_int_equal(d->n_nodes, s->n_nodes);
        zoo_near(zoo_trainable_bytes(d) - zoo_trainable_bytes(s), 4.0 * 5000 * (2 * m[i].width + 1),
                 0);
        graph_free(d);
        graph_free(s);
    }
}

/*
 * 2EMB's ids per example (the spec's [I] 22): with 10, the deep embedding looks up 10 ids of
 * 128 floats (out 1,280, its pool summing them: 3 x 1,280 x 512 training FLOPs), the wide one 10
 * of 1 float, whose cut carries the deep pool's 128 live floats too (138 x 4 x 512 bytes).
 */
static void test_zoo_opt_2emb_ids(void **state)
{
    (void)state;
    const char *ids = "ids=10";
    pb_graph *g = zoo_generate_opts("2emb", 0, &ids, 1);
    assert_int_equal(g->n_nodes, 10);
    assert_string_equal(g->node_type[0], "EMB in=10 out=1280 ids=10 dim=128 rows=100000 batch=512");
    zoo_near(g->flops[1], 3.0 * 1280 * 512, 0);
    zoo_near(g->port_bytes[g->port_start[2]], 4.0 * 138 * 512, 0);
    assert_string_equal(g->name, "2emb+ids=10");
    graph_free(g);
}

/*
 * CTRDNN's dnn=1, PaddleRec models/rank/dnn (specs/heterps.md §5): 26 ids into rows of 9 (234
 * floats), 13 dense inputs (247), FC 512, 256, 128, 32 and the softmax of 2: dense parameters
 * 247 x 512 + 512 = 126,976, 512 x 256 + 256 = 131,328, 256 x 128 + 128 = 32,896,
 * 128 x 32 + 32 = 4,128 and 32 x 2 + 2 = 66; 9 layers, so any other --layers is refused.
 */
static void test_zoo_opt_ctrdnn_dnn(void **state)
{
    (void)state;
    static const double params[5] = {126976, 131328, 32896, 4128, 66};
    const char *dnn = "dnn=1";
    pb_graph *g = zoo_generate_opts("ctrdnn", 9, &dnn, 1);
    assert_int_equal(g->n_nodes, 9);
    assert_string_equal(g->name, "ctrdnn-9l+dnn=1");
    assert_string_equal(g->node_type[2], "CONCAT in=247 out=247 batch=512");
    for (int k = 0; k < 5; k++)
        zoo_near(g->param_bytes[3 + k], 4.0 * params[k], 0);
    zoo_near(g->flops[3], 3.0 * 2 * 247 * 512 * 512, 0);
    graph_free(g);
    gen_model_args a = {.seed = 1};
    pb_error err;
    assert_int_equal(gen_model_set_opt(gen_model_find("ctrdnn"), &a, dnn, &err), PB_OK);
    assert_int_equal(gen_model_generate(gen_model_find("ctrdnn"), &a, &g, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "has 9 layers; give --layers 9"));
}

/* Bad options: unknown key, not an integer, out of range, a model without options. */
static void test_zoo_opt_bad(void **state)
{
    (void)state;
    gen_model_args a = {0};
    pb_error err;
    const gen_model *m = gen_model_find("transformer-xl");
    assert_int_equal(gen_model_set_opt(m, &a, "segmentz=3", &err), PB_ERR);
    assert_non_null(strstr(err.msg, "unknown option 'segmentz'"));
    assert_non_null(strstr(err.msg, "segments=4"));
    assert_int_equal(gen_model_set_opt(m, &a, "segments=three", &err), PB_ERR);
    assert_non_null(strstr(err.msg, "segments needs an integer in 1..16"));
    assert_int_equal(gen_model_set_opt(m, &a, "segments=17", &err), PB_ERR);
    assert_int_equal(gen_model_set_opt(m, &a, "segments", &err), PB_ERR);
    assert_int_equal(gen_model_set_opt(gen_model_find("vgg19"), &a, "ema=1", &err), PB_ERR);
    assert_non_null(strstr(err.msg, "has no options"));
    assert_int_equal(a.opt_set, 0);
    /* a value set past gen_model_set_opt is checked when generating */
    a.opt[GEN_TXL_OPT_SEGMENTS] = 17;
    a.opt_set = 1u << GEN_TXL_OPT_SEGMENTS;
    pb_graph *g = NULL;
    assert_int_equal(gen_model_generate(m, &a, &g, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "segments needs an integer in 1..16 (got 17)"));
    a.opt_set = 1u << 5;
    assert_int_equal(gen_model_generate(m, &a, &g, &err), PB_ERR);
    assert_null(g);
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
    assert_string_equal(g->node_type[fc1], "FC in=273 out=400 batch=512");
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
        cmocka_unit_test(test_zoo_opt_fused_bn),
        cmocka_unit_test(test_zoo_opt_ema),
        cmocka_unit_test(test_zoo_opt_transformer_xl),
        cmocka_unit_test(test_zoo_opt_wavenet),
        cmocka_unit_test(test_zoo_opt_steps),
        cmocka_unit_test(test_zoo_opt_vocab),
        cmocka_unit_test(test_zoo_opt_2emb_ids),
        cmocka_unit_test(test_zoo_opt_ctrdnn_dnn),
        cmocka_unit_test(test_zoo_opt_bad),
        cmocka_unit_test(test_zoo_bad_arguments),
        cmocka_unit_test(test_zoo_annotations),
        cmocka_unit_test(test_zoo_chain_sizes),
        cmocka_unit_test(test_devcost_batch_model),
        cmocka_unit_test(test_devcost_roofline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
