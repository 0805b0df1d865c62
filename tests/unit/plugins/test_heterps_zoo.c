/* test_heterps_zoo.c — the model zoo's HeterPS chains (harness/data/gen/gen_heterps.c) and the
 * heterps simulator read the same layers: a zoo chain gives the layer descriptors of the
 * datasets/heterps file of the same model; and the devcost profile times each layer with the
 * harness's cost model on the flops and bytes the zoo's node carries. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "heterps.h"

#include "data/gen/gen_model.h"
#include "data/nodelink.h"
#include "model/graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LAYERS 20

/* |a - b| <= tol, with both values in the message when not. */
#define near(a, b, tol)                                                                            \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);                                    \
    } while (0)

static pb_graph *zoo_chain(const char *model, int layers)
{
    gen_model_args a = {.layers = layers, .seed = 1};
    pb_graph *g = NULL;
    pb_error err;
    if (gen_model_generate(gen_model_find(model), &a, &g, &err) != PB_OK)
        fail_msg("%s: %s", model, err.msg);
    return g;
}

static pb_graph *dataset_chain(const char *file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/datasets/heterps/%s.json", getenv("PB_SRC"), file);
    pb_graph *g = NULL;
    pb_error err;
    if (nodelink_read(path, &g, &err) != PB_OK)
        fail_msg("%s", err.msg);
    return g;
}

static void same(double a, double b, const char *what, const char *layer)
{
    if (!(fabs(a - b) <= 1e-12 * fmax(1, fabs(b))))
        fail_msg("layer %s: %s %.17g (zoo) against %.17g (datasets/heterps)", layer, what, a, b);
}

/* Every HeterPS model of datasets/heterps against the zoo's chain of the same model. */
static void test_zoo_chains_are_the_datasets(void **state)
{
    (void)state;
    static const struct {
        const char *model, *file;
        int layers;
    } models[] = {{"ctrdnn", "ctrdnn-8", 8},
                  {"ctrdnn", "ctrdnn-12", 12},
                  {"ctrdnn", "ctrdnn-16", 16},
                  {"ctrdnn", "ctrdnn-20", 20},
                  {"matchnet", "matchnet", 0},
                  {"2emb", "2emb", 0},
                  {"nce", "nce", 0}};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        pb_graph *z = zoo_chain(models[i].model, models[i].layers);
        pb_graph *d = dataset_chain(models[i].file);
        assert_int_equal(z->n_nodes, d->n_nodes);
        heterps_layer lz[MAX_LAYERS], ld[MAX_LAYERS];
        pb_error err;
        assert_true(z->n_nodes <= MAX_LAYERS);
        assert_int_equal(heterps_layers_read(z, lz, &err), PB_OK);
        assert_int_equal(heterps_layers_read(d, ld, &err), PB_OK);
        for (int l = 0; l < z->n_nodes; l++) {
            const char *name = d->node_name[l];
            assert_string_equal(z->node_name[l], name);
            assert_int_equal(lz[l].kind, ld[l].kind);
            same(lz[l].flops, ld[l].flops, "flops", name);
            same(lz[l].ids, ld[l].ids, "ids", name);
            same(lz[l].dim, ld[l].dim, "dim", name);
            same(lz[l].rows, ld[l].rows, "rows", name);
            same(lz[l].steps, ld[l].steps, "steps", name);
            same(lz[l].in, ld[l].in, "in", name);
            same(lz[l].out, ld[l].out, "out", name);
            same(lz[l].cut, ld[l].cut, "cut", name);
            same(lz[l].params, ld[l].params, "params", name);
        }
        graph_free(z);
        graph_free(d);
    }
}

/*
 * profile=devcost: CTRDNN-8's fc1 (273 -> 400, specs/heterps.md §5) at B_o = 512 is one op of
 * 3 x 2 x 273 x 400 x 512 = 335,462,400 FLOPs moving 8 x (273 + 400) x 512 = 2,756,608 bytes;
 * its embedding looks up 26 ids of 10 floats: 0 FLOPs and 8 x (26 + 260) x 512 + 4 x 26 x 10 x
 * 512 = 1,703,936 bytes.  OCT is pb_op_time_us of those on each role's device type (the cost
 * model's own figures are tested with it, test_zoo.c), and the zoo's node carries the same flops
 * and bytes, so `dataset stats` times the layer the same way.  alpha, IO and BND stay §4's.
 */
static void test_devcost_profile(void **state)
{
    (void)state;
    pb_graph *g = zoo_chain("ctrdnn", 8);
    heterps_layer y[8];
    pb_error err;
    assert_int_equal(heterps_layers_read(g, y, &err), PB_OK);
    heterps_hw hw;
    heterps_hw_default(&hw);
    heterps_profile *spec = heterps_profile_new(y, 8, 2, &hw, 0.999, 0.995);
    heterps_profile *dev = heterps_profile_new(y, 8, 2, &hw, 0.999, 0.995);
    pb_device_type cpu = {"CPU", 166.4e9, 19.55e9, 0, 0, 0};
    pb_device_type v100 = {"V100-16G", 15.7e12, 900e9, 0, 0, 0};
    const pb_device_type *const role[HETERPS_N_ROLES] = {&cpu, &v100};
    heterps_profile_devcost(dev, y, role);
    const int emb = 0, fc1 = 3;
    assert_string_equal(g->node_name[fc1], "fc1");
    near(g->flops[fc1], 335462400.0, 0);
    near(g->bytes_accessed[fc1], 2756608.0, 0);
    near(g->bytes_accessed[emb], 1703936.0, 0);
    near(dev->oct[HETERPS_GPU][fc1], 1e-6 * pb_op_time_us(&v100, 335462400.0, 2756608.0), 1e-18);
    near(dev->oct[HETERPS_CPU][fc1], 1e-6 * pb_op_time_us(&cpu, 335462400.0, 2756608.0), 1e-18);
    near(dev->oct[HETERPS_CPU][emb], 1e-6 * pb_op_time_us(&cpu, 0, 1703936.0), 1e-18);
    for (int r = 0; r < HETERPS_N_ROLES; r++)
        for (int l = 0; l < 8; l++) {
            near(dev->oct[r][l], 1e-6 * pb_op_time_us(role[r], g->flops[l], g->bytes_accessed[l]),
                 1e-15);
            near(dev->alpha[r][l], spec->alpha[r][l], 0);
            near(dev->io[r][l], spec->io[r][l], 0);
            near(dev->bnd[r][l], spec->bnd[r][l], 0);
        }
    /* the spec's profile is §4's formula: fc1 on a V100, o + B (3 F / R_fc + 8 (in + out) / R_mem)
     */
    near(spec->oct[HETERPS_GPU][fc1], 60e-6 + 512 * (3 * 218400 / 10e12 + 8 * 673 / 500e9), 1e-15);
    heterps_profile_free(spec);
    heterps_profile_free(dev);
    graph_free(g);
}

/* The zoo writes the attributes the simulator reads, batch=B among them. */
static void test_batch_attribute(void **state)
{
    (void)state;
    pb_graph *g = zoo_chain("nce", 0);
    assert_non_null(strstr(g->node_type[1], "SAMPLER in=300 out=305 batch=512"));
    graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zoo_chains_are_the_datasets),
        cmocka_unit_test(test_devcost_profile),
        cmocka_unit_test(test_batch_attribute),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
