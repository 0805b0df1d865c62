/* test_gdp_baselines.c — GDP's fixed baselines (specs/gdp.md §8, §9) on small graphs against a
 * mock host: the expert placements of RNNLM and GNMT units derived by hand from §8's rules, the
 * error for a model without one, and METIS's cut of two tight pairs; gdp_units' name parsing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gdp_units.h"

#include "model/graph.h"
#include "plugin/options.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GDP's machine with n GPUs: device 0 the host CPU, devices 1..n P100s. */

static const pb_device_type test_types[2] = {{.name = "CPU-host", .speed_vs_ref = 1},
                                             {.name = "P100", .speed_vs_ref = 1}};
static const int test_device_type[5] = {0, 1, 1, 1, 1};

/* The mock host: counts simulator calls and curve points; with oom every placement is
 * infeasible.  Step time = 100 x the number of distinct devices used + the unit count. */
typedef struct test_host {
    long long calls, points, last_point_calls;
    int oom;
} test_host;

static int test_simulate(void *ctx, const pb_strategy *s, pb_eval *out, pb_error *err)
{
    (void)err;
    test_host *h = ctx;
    h->calls++;
    int used[8] = {0}, distinct = 0;
    for (int v = 0; v < s->n_nodes; v++)
        if (s->device[v] >= 0 && s->device[v] < 8 && !used[s->device[v]]++)
            distinct++;
    out->feasible = !h->oom;
    out->step_time_us = 100.0 * distinct + s->n_nodes;
    return PB_OK;
}

static void test_progress(void *ctx, const pb_progress *p)
{
    test_host *h = ctx;
    h->points++;
    h->last_point_calls = p->sim_calls;
}

static void test_log(void *ctx, int level, const char *msg)
{
    (void)ctx;
    (void)level;
    (void)msg;
}

static int test_deadline(void *ctx)
{
    (void)ctx;
    return 0;
}

/* A graph of named units (no grouping) in a chain in the order given, types from `types` (NULL:
 * "Op"; a name "IteratorGetNext" gets that type), extra edges from `edges` (pairs, -1 ends). */
static pb_graph *test_graph(const char *name, const char *const *names, int n, const double *costs,
                            const double *bytes, const int *edges)
{
    pb_error err;
    graph_builder *b = graph_builder_new(name);
    for (int v = 0; v < n; v++) {
        double port = bytes ? bytes[v] : 4096;
        graph_node_attrs a = {.type = strcmp(names[v], "IteratorGetNext") ? "Op" : names[v],
                              .cost_us = costs ? costs[v] : 10,
                              .n_ports = 1,
                              .port_bytes = &port,
                              .colocation = -1};
        assert_int_equal(graph_add_node(b, names[v], &a, &err), v);
    }
    for (int k = 0; edges[k] >= 0; k += 2)
        assert_true(graph_add_edge(b, edges[k], edges[k + 1], 0, &err) >= 0);
    pb_graph *g;
    if (graph_build(b, &g, &err))
        fail_msg("%s", err.msg);
    return g;
}

/* Runs placer `name` (options kv[n_kv], `episodes` as the budget, 0: none) on g with n_gpus GPUs
 * and the mock host h; device[] receives the placement.  Returns place()'s status. */
static int test_place_with(const char *name, const option_kv *kv, int n_kv, const pb_graph *g,
                           int n_gpus, int episodes, test_host *h, int *device, pb_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/placer-%s.so", getenv("PB_BUILD"), name);
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so)
        fail_msg("dlopen %s: %s", path, dlerror());
    const pb_plugin_desc *d = dlsym(so, PB_DESCRIPTOR_SYMBOL_NAME);
    const pb_placer_ops *ops = d->ops;
    option_set set;
    if (options_resolve(d, kv, n_kv, name, &set, err))
        fail_msg("%s", err->msg);
    pb_host host = {sizeof host, h, test_simulate, test_progress, test_log, test_deadline};
    pb_create_args a = options_create_args(&set, &host, 3);
    void *inst;
    assert_int_equal(ops->create(&a, &inst, err), PB_OK);
    pb_cluster c = {.struct_size = sizeof c,
                    .name = "gdp-test",
                    .n_devices = 1 + n_gpus,
                    .n_types = 2,
                    .types = test_types,
                    .device_type = test_device_type,
                    .type_size = sizeof(pb_device_type)};
    pb_budget budget = {.struct_size = sizeof budget, .episodes = episodes};
    pb_problem prob = {
        .struct_size = sizeof prob, .graph = g, .op_graph = g, .cluster = &c, .budget = &budget};
    pb_strategy best;
    pb_strategy_placement(&best, g->n_nodes, device);
    double initial;
    int rc = ops->place(inst, &prob, &best, &initial, err);
    ops->destroy(inst);
    option_set_free(&set);
    dlclose(so);
    return rc;
}

/* A fixed placer: one placement, simulated once. */
static int test_place(const char *name, const option_kv *kv, int n_kv, const pb_graph *g,
                      int n_gpus, int *device, pb_error *err)
{
    test_host h = {0};
    int rc = test_place_with(name, kv, n_kv, g, n_gpus, 0, &h, device, err);
    if (rc == PB_OK)
        assert_int_equal(h.calls, 1);
    return rc;
}

static const int no_edges[] = {-1};

/* §8 RNNLM, L = 2: layer l on GPU floor(l d / 2) (device 1 + that); embedding and step inputs
 * with layer 0; output dropout, softmax, loss with layer 1; backward and update units with their
 * forward unit; the input pipeline on the host; the gradient clipping with layer 0. */
static void test_expert_rnnlm(void **state)
{
    (void)state;
    const char *names[] = {"IteratorGetNext",
                           "embedding",
                           "rnn/step_00/input",
                           "rnn/step_00/cell_0/gates",
                           "rnn/step_00/cell_1/gates",
                           "rnn/step_00/dropout",
                           "softmax",
                           "loss",
                           "rnn/multi_rnn_cell/cell_0/basic_lstm_cell",
                           "rnn/multi_rnn_cell/cell_1/basic_lstm_cell",
                           "gradients/rnn/step_00/cell_1/gates",
                           "GradientDescent/update_rnn/multi_rnn_cell/cell_1/basic_lstm_cell",
                           "gradients/embedding",
                           "clip_by_global_norm"};
    const int two[] = {0, 1, 1, 1, 2, 2, 2, 2, 1, 2, 2, 2, 1, 1};
    const int four[] = {0, 1, 1, 1, 3, 3, 3, 3, 1, 3, 3, 3, 1, 1}; /* layer 1 on GPU 2 of 4 */
    int n = (int)(sizeof names / sizeof names[0]), device[14];
    pb_graph *g = test_graph("rnnlm-2l", names, n, NULL, NULL, no_edges);
    pb_error err;
    assert_int_equal(test_place("expert", NULL, 0, g, 2, device, &err), PB_OK);
    for (int v = 0; v < n; v++)
        if (device[v] != two[v])
            fail_msg("2 GPUs: %s on device %d, expected %d", names[v], device[v], two[v]);
    assert_int_equal(test_place("expert", NULL, 0, g, 4, device, &err), PB_OK);
    for (int v = 0; v < n; v++)
        if (device[v] != four[v])
            fail_msg("4 GPUs: %s on device %d, expected %d", names[v], device[v], four[v]);
    graph_free(g);
}

/* §8 GNMT, L = 2: encoder layer 0 = the bidirectional layer (fw cell_0, bw cell_1), encoder
 * cell_2 = layer 1; decoder cell_l = layer l; attention and softmax with the last layer
 * (mirhoseini) or on GPU (L mod d) = GPU 0 (separate, d = 2). */
static void test_expert_gnmt(void **state)
{
    (void)state;
    const char *names[] = {"embeddings/encoder",
                           "encoder/bw_step_00/cell_1/gates",
                           "encoder/step_00/cell_0/gates",
                           "encoder/step_00/bidirectional_concat",
                           "encoder/step_00/cell_2/gates",
                           "encoder/rnn/multi_rnn_cell/cell_0/basic_lstm_cell",
                           "encoder/memory",
                           "decoder/multi_rnn_cell/cell_0/basic_lstm_cell",
                           "decoder/multi_rnn_cell/cell_1/basic_lstm_cell",
                           "decoder/step_00/input",
                           "decoder/step_00/cell_0/state",
                           "decoder/step_00/attention",
                           "decoder/step_00/cell_1_input",
                           "decoder/step_00/output",
                           "gradients/decoder/step_00/attention",
                           "loss"};
    const int mirhoseini[] = {1, 1, 1, 1, 2, 2, 2, 1, 2, 1, 1, 2, 2, 2, 2, 2};
    const int separate[] = {1, 1, 1, 1, 2, 2, 2, 1, 2, 1, 1, 1, 2, 1, 1, 1};
    int n = (int)(sizeof names / sizeof names[0]), device[16];
    pb_graph *g = test_graph("gnmt-2l", names, n, NULL, NULL, no_edges);
    pb_error err;
    assert_int_equal(test_place("expert", NULL, 0, g, 2, device, &err), PB_OK);
    for (int v = 0; v < n; v++)
        if (device[v] != mirhoseini[v])
            fail_msg("mirhoseini: %s on device %d, expected %d", names[v], device[v],
                     mirhoseini[v]);
    option_kv sep[] = {{"hp_gnmt", "separate"}};
    assert_int_equal(test_place("expert", sep, 1, g, 2, device, &err), PB_OK);
    for (int v = 0; v < n; v++)
        if (device[v] != separate[v])
            fail_msg("separate: %s on device %d, expected %d", names[v], device[v], separate[v]);
    graph_free(g);
}

/* Checks a fixed placement against want[] (devices: 0 host, 1.. the GPUs). */
static void expect_devices(const char *what, const char *const *names, int n, const int *device,
                           const int *want)
{
    for (int v = 0; v < n; v++)
        if (device[v] != want[v])
            fail_msg("%s: %s on device %d, expected %d", what, names[v], device[v], want[v]);
}

/* §8 Transformer-XL, L = 2 on 2 GPUs: layer l (weights and every segment) on GPU l; embeddings,
 * the shared positional terms and mems with layer 0, mems_1 with layer 1, the segments' and the
 * total loss with the last layer; the top-level gradient sum AddN_3 (no rule names it) takes the
 * device of its successor, the layer-1 weights' update (edge AddN_3 -> update); Adam's global
 * beta1_power, with no successor placed by a rule and its predecessor AddN_3, follows it. */
static void test_expert_txl(void **state)
{
    (void)state;
    const char *names[] = {"IteratorGetNext",
                           "transformer/adaptive_embed",
                           "transformer/weights",
                           "transformer/positions",
                           "transformer/layer_0/weights",
                           "transformer/layer_1/weights",
                           "mems",
                           "mems_1",
                           "segment_0/embed",
                           "segment_0/layer_0/rel_attn",
                           "segment_2/layer_1/ff",
                           "segment_3/loss",
                           "loss",
                           "gradients/segment_1/layer_1/rel_attn",
                           "AddN_3",
                           "Adam/update_transformer/layer_1/weights",
                           "beta1_power"};
    const int edges[] = {14, 15, 14, 16, -1};
    const int want[] = {0, 1, 1, 1, 1, 2, 1, 2, 1, 1, 2, 2, 2, 2, 2, 2, 2};
    int n = (int)(sizeof names / sizeof names[0]), device[17];
    pb_graph *g = test_graph("transformer-xl-2l", names, n, NULL, NULL, edges);
    pb_error err;
    assert_int_equal(test_place("expert", NULL, 0, g, 2, device, &err), PB_OK);
    expect_devices("transformer-xl", names, n, device, want);
    graph_free(g);
}

/* §8 WaveNet, 2 stacks of 9 layers on 2 GPUs: dilated layers 0-8 on GPU 1, 9-17 on GPU 2; the
 * input (encode, causal layer) on GPU 1; the skip sum (post-processing) and the loss on the last
 * GPU; a gradient sum with no rule and no placed neighbour on the first GPU. */
static void test_expert_wavenet(void **state)
{
    (void)state;
    const char *names[] = {"Placeholder",
                           "wavenet/encode",
                           "wavenet/causal_layer",
                           "wavenet/dilated_stack/layer0",
                           "wavenet/dilated_stack/layer8",
                           "wavenet/dilated_stack/layer9",
                           "wavenet/dilated_stack/layer17",
                           "wavenet/postprocessing",
                           "wavenet/loss",
                           "gradients/wavenet/dilated_stack/layer10",
                           "AddN_7"};
    const int want[] = {1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 1};
    int n = (int)(sizeof names / sizeof names[0]), device[11];
    pb_graph *g = test_graph("wavenet-2s", names, n, NULL, NULL, no_edges);
    pb_error err;
    assert_int_equal(test_place("expert", NULL, 0, g, 2, device, &err), PB_OK);
    expect_devices("wavenet", names, n, device, want);
    graph_free(g);
}

/* §8 AmoebaNet on 2 GPUs: the cells in order (cell_stem_0, cell_0, reduction_cell_0, cell_1),
 * 2 per GPU (balance = cells); the stem with the first cell, aux_1 with cell_1, the final layer
 * and the losses with the last cell.  With balance = flops (forward costs 100, 100, 500, 100 µs
 * per cell; a cell goes to the part its cost midpoint falls in: 50, 150, 450, 750 of 800 ->
 * parts 0, 0, 1, 1) the split is the same; with costs 500, 100, 100, 100 (midpoints 250, 550,
 * 650, 750 of 800) only the first cell stays on GPU 1. */
static void test_expert_amoebanet(void **state)
{
    (void)state;
    const char *names[] = {"Placeholder",
                           "stem/conv0",
                           "cell_stem_0/base",
                           "cell_0/comb_iter_0/left",
                           "reduction_cell_0/comb_iter_1",
                           "cell_1/cell_output",
                           "aux_1/aux_logits",
                           "final_layer/FC",
                           "softmax_loss",
                           "total_loss",
                           "gradients/cell_0/comb_iter_0/left"};
    const int edges[] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 5, 7, 7, 8, 8, 9, 9, 10, -1};
    const int want[] = {1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 1};
    const int want_front[] = {1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2};
    double costs[11] = {0, 0, 100, 100, 500, 100, 0, 0, 0, 0, 0};
    int n = (int)(sizeof names / sizeof names[0]), device[11];
    pb_graph *g = test_graph("amoebanet-4c", names, n, costs, NULL, edges);
    pb_error err;
    assert_int_equal(test_place("expert", NULL, 0, g, 2, device, &err), PB_OK);
    expect_devices("amoebanet cells", names, n, device, want);
    option_kv flops[] = {{"balance", "flops"}};
    assert_int_equal(test_place("expert", flops, 1, g, 2, device, &err), PB_OK);
    expect_devices("amoebanet flops", names, n, device, want);
    graph_free(g);
    costs[2] = 500;
    costs[4] = 100;
    g = test_graph("amoebanet-4c", names, n, costs, NULL, edges);
    assert_int_equal(test_place("expert", flops, 1, g, 2, device, &err), PB_OK);
    expect_devices("amoebanet flops, heavy first cell", names, n, device, want_front);
    graph_free(g);
}

static void test_expert_unknown(void **state)
{
    (void)state;
    const char *names[] = {"a", "b"};
    int device[2];
    pb_graph *g = test_graph("nce-2l", names, 2, NULL, NULL, no_edges);
    pb_error err;
    assert_int_equal(test_place("expert", NULL, 0, g, 2, device, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "no human-expert placement for graph 'nce-2l'"));
    graph_free(g);
}

/* METIS on IteratorGetNext -> a -> b -> c -> d, 100 µs each, a-b and c-d carrying 1 MiB,
 * b-c 1 KiB: with 3 % imbalance both parts hold two units (200 of 400 µs), and the only 2 + 2
 * split that cuts 1 KiB instead of >= 1 MiB is {a, b} | {c, d}.  The iterator stays on the host. */
static void test_metis(void **state)
{
    (void)state;
    const char *names[] = {"IteratorGetNext", "a", "b", "c", "d"};
    const double costs[] = {1, 100, 100, 100, 100};
    const double bytes[] = {1024, 1048576, 1024, 1048576, 4};
    const int edges[] = {0, 1, 1, 2, 2, 3, 3, 4, -1};
    int device[5];
    pb_graph *g = test_graph("chain", names, 5, costs, bytes, edges);
    pb_error err;
    assert_int_equal(test_place("metis", NULL, 0, g, 2, device, &err), PB_OK);
    assert_int_equal(device[0], 0);
    assert_int_equal(device[1], device[2]);
    assert_int_equal(device[3], device[4]);
    assert_int_not_equal(device[1], device[3]);
    assert_true(device[1] >= 1 && device[3] >= 1);
    graph_free(g);
}

/* HDP with a small controller on a chain: the budget is its step count (no 1 % improvement in
 * 800 steps, the default patience, cannot happen in 12), a curve point at the end, early stop
 * with a small patience, every unit on a GPU and the iterator on the host, the same seed the same
 * placement; with every placement out of memory it still returns one (the fastest failure), not an
 * error. */
static void test_hdp(void **state)
{
    (void)state;
    const char *names[] = {"IteratorGetNext", "a", "b", "c", "d", "e", "gradients/e"};
    const int edges[] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, -1};
    pb_graph *g = test_graph("chain", names, 7, NULL, NULL, edges);
    option_kv small[] = {{"hidden_size", "8"}, {"grouping_hidden_size", "4"}, {"num_groups", "3"}};
    int first[7], again[7];
    pb_error err;
    test_host h = {0};
    assert_int_equal(test_place_with("hdp", small, 3, g, 2, 12, &h, first, &err), PB_OK);
    assert_int_equal(h.calls, 12);
    assert_int_equal(h.last_point_calls, 12);
    assert_int_equal(first[0], 0);
    for (int v = 1; v < 7; v++)
        assert_true(first[v] == 1 || first[v] == 2);
    test_host h2 = {0};
    assert_int_equal(test_place_with("hdp", small, 3, g, 2, 12, &h2, again, &err), PB_OK);
    assert_memory_equal(first, again, sizeof first);
    /* patience 3: the mock's step times take 3 values, so the search stops at most 4 steps
     * after its last 1 % improvement, with a curve point at the stop. */
    option_kv patient[] = {{"hidden_size", "8"},
                           {"grouping_hidden_size", "4"},
                           {"num_groups", "3"},
                           {"patience", "3"}};
    test_host hp = {0};
    assert_int_equal(test_place_with("hdp", patient, 4, g, 2, 1000, &hp, again, &err), PB_OK);
    assert_true(hp.calls >= 4 && hp.calls < 1000);
    assert_int_equal(hp.last_point_calls, hp.calls);
    test_host oom = {.oom = 1};
    assert_int_equal(test_place_with("hdp", small, 3, g, 2, 5, &oom, again, &err), PB_OK);
    assert_int_equal(oom.calls, 5);
    for (int v = 1; v < 7; v++)
        assert_true(again[v] == 1 || again[v] == 2);
    graph_free(g);
}

static void test_names(void **state)
{
    (void)state;
    char model[32];
    assert_int_equal(gdpu_model_name("datasets/zoo/gnmt-4l.json", model, sizeof model), 4);
    assert_string_equal(model, "gnmt");
    assert_int_equal(gdpu_model_name("InceptionV3", model, sizeof model), 0);
    assert_string_equal(model, "inceptionv3");
    assert_string_equal(gdpu_forward_name("gradients/decoder/x"), "decoder/x");
    assert_string_equal(gdpu_forward_name("GradientDescent/update_embedding"), "embedding");
    assert_string_equal(gdpu_forward_name("decoder/update_x"), "x");
    assert_true(gdpu_is_forward("rnn/step_00/input"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expert_rnnlm),
        cmocka_unit_test(test_expert_gnmt),
        cmocka_unit_test(test_expert_txl),
        cmocka_unit_test(test_expert_wavenet),
        cmocka_unit_test(test_expert_amoebanet),
        cmocka_unit_test(test_expert_unknown),
        cmocka_unit_test(test_metis),
        cmocka_unit_test(test_hdp),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
