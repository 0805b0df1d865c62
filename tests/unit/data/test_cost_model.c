/* test_cost_model.c — the generators' cost models: `roofline` reproduces the graphs made before the
 * calibration (dataset version 1) exactly, `calibrated` (the default) scales kernels by class. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "data/gen/gen.h"
#include "data/gen/gen_model.h"
#include "model/devcost.h"
#include "model/graph.h"

#include <math.h>
#include <string.h>

/*
 * Graph checksums (canonical content: names, types, costs, bytes, edges, groups) of graphs made
 * by main at 4ffea7f, before the calibration, with `placebench dataset gen FAMILY --out D` (seed
 * 1) and `placebench dataset gen vgg19 --batch 8` / `rnnlm --layers 1 --batch 4`, read back with
 * `placebench dataset stats --json`.
 */
static const struct {
    const char *family;
    int index;
    const char *checksum;
} cost_v1_families[] = {
    {"cifar10", 0, "ab9e1c59199dd753"}, {"cifar10", 1, "38dc24c259d2f7f0"},
    {"cifar10", 2, "64746aec400c7d63"}, {"cifar10", 3, "9a4d430772dbda75"},
    {"ptb", 0, "dfd0df4cc6168e43"},     {"ptb", 1, "8f4f7a225019c844"},
    {"ptb", 2, "8a93ff7fc190ae1b"},     {"ptb", 3, "28ea236f803291b3"},
    {"nmt", 0, "bee97f1354b4344b"},     {"nmt", 1, "fb4faf54805a6324"},
    {"nmt", 2, "f4335b83413b027b"},     {"nmt", 3, "14c503d5ed9b549a"},
};

static const struct {
    const char *model;
    int batch, layers;
    const char *checksum;
} cost_v1_models[] = {
    {"vgg19", 8, 0, "3327668a1a30b160"},
    {"rnnlm", 4, 1, "dfc555e63e2e22cc"},
};

static pb_graph *cost_family(const char *family, int index, int model)
{
    /* Version 1's sizes and no colocation (README "Reference measurement semantics and
     * colocation": cifar10's batch was 128 before it took ENAS's search batch). */
    gen_options opt = {.cost_model = model, .batch = strcmp(family, "cifar10") == 0 ? 128 : 0};
    pb_graph *g = NULL;
    pb_error err;
    if (gen_graph_with(gen_family_find(family), 1, index, &opt, &g, &err) != PB_OK)
        fail_msg("%s/%d: %s", family, index, err.msg);
    return g;
}

static pb_graph *cost_model_graph(int i, int model)
{
    gen_model_args a = {.batch = cost_v1_models[i].batch,
                        .layers = cost_v1_models[i].layers,
                        .seed = 1,
                        .cost_model = model};
    pb_graph *g = NULL;
    pb_error err;
    if (gen_model_generate(gen_model_find(cost_v1_models[i].model), &a, &g, &err) != PB_OK)
        fail_msg("%s: %s", cost_v1_models[i].model, err.msg);
    return g;
}

static void test_roofline_reproduces_v1(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cost_v1_families / sizeof cost_v1_families[0]; i++) {
        pb_graph *g =
            cost_family(cost_v1_families[i].family, cost_v1_families[i].index, DEVCOST_ROOFLINE);
        if (strcmp(g->checksum, cost_v1_families[i].checksum) != 0)
            fail_msg("%s: checksum %s, version 1 had %s", g->name, g->checksum,
                     cost_v1_families[i].checksum);
        graph_free(g);
    }
    for (size_t i = 0; i < sizeof cost_v1_models / sizeof cost_v1_models[0]; i++) {
        pb_graph *g = cost_model_graph((int)i, DEVCOST_ROOFLINE);
        if (strcmp(g->checksum, cost_v1_models[i].checksum) != 0)
            fail_msg("%s: checksum %s, version 1 had %s", g->name, g->checksum,
                     cost_v1_models[i].checksum);
        graph_free(g);
    }
}

/* Calibrated: the same ops, edges and bytes; each kernel's time is launch + factor x (roofline -
 * launch) for its class and direction, host ops are unchanged. */
static void test_calibrated_scales_kernels(void **state)
{
    (void)state;
    pb_graph *r = cost_family("cifar10", 0, DEVCOST_ROOFLINE);
    pb_graph *c = cost_family("cifar10", 0, DEVCOST_CALIBRATED);
    pb_graph *d = cost_family("cifar10", 0, 0); /* zero-initialised options: the default */
    assert_string_equal(c->checksum, d->checksum);
    assert_string_not_equal(c->checksum, r->checksum);
    assert_int_equal(r->n_nodes, c->n_nodes);
    assert_int_equal(r->n_edges, c->n_edges);
    int conv1x1_bwd = 0, relu = 0;
    for (int v = 0; v < r->n_nodes; v++) {
        assert_string_equal(r->node_name[v], c->node_name[v]);
        assert_true(r->out_bytes[v] == c->out_bytes[v]);
        const char *type = r->node_type[v];
        if (strcmp(type, "Conv2DBackpropFilter") == 0) {
            /* the 1x1 and the kxk backward factor (ENAS cells have both) */
            double ratio =
                (c->cost_us[v] - DEVCOST_LAUNCH_US) / (r->cost_us[v] - DEVCOST_LAUNCH_US);
            int is1 = fabs(ratio - devcost_factor_of(DEVCOST_CONV1X1)->backward) < 1e-9;
            int isk = fabs(ratio - devcost_factor_of(DEVCOST_CONVKXK)->backward) < 1e-9;
            assert_true(is1 || isk);
            conv1x1_bwd += is1;
        }
        if (strcmp(type, "Relu") == 0) {
            double want = DEVCOST_LAUNCH_US + devcost_factor_of(DEVCOST_ELEMENTWISE)->forward *
                                                  (r->cost_us[v] - DEVCOST_LAUNCH_US);
            assert_true(fabs(c->cost_us[v] - want) < 1e-9 * want);
            relu++;
        }
        if (strcmp(type, "VariableV2") == 0)
            assert_true(c->cost_us[v] == r->cost_us[v]);
    }
    assert_true(conv1x1_bwd > 0);
    assert_true(relu > 0);
    graph_free(r);
    graph_free(c);
    graph_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roofline_reproduces_v1),
        cmocka_unit_test(test_calibrated_scales_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
