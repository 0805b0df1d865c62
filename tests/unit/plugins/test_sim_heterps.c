/* test_sim_heterps.c — the heterps simulator plugin: the CTRDNN-8 optimum of specs/heterps.md §11
 * on the heterps cluster preset, plans given as placements and as provisioned strategies, and
 * the errors for graphs it cannot simulate. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "config/cluster.h"
#include "data/nodelink.h"
#include "model/graph.h"
#include "plugin/options.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The heterps preset's first 56 devices: a GPU server, 8 V100 then 48 CPU cores. */
#define DEVICES 56

typedef struct test_sim {
    void *so;
    const pb_plugin_desc *desc;
    pb_cluster *cluster;
    int cpu, gpu; /* a device of each type */
} test_sim;

static int test_setup(void **state)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/simulator-heterps.so", getenv("PB_BUILD"));
    test_sim *s = calloc(1, sizeof *s);
    s->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!s->so) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        return -1;
    }
    s->desc = dlsym(s->so, PB_DESCRIPTOR_SYMBOL_NAME);
    pb_error err;
    if (!s->desc || cluster_preset("heterps", DEVICES, &s->cluster, &err)) {
        fprintf(stderr, "no heterps simulator or cluster\n");
        return -1;
    }
    s->cpu = s->gpu = -1;
    for (int d = 0; d < DEVICES; d++) {
        int cpu = strcmp(pb_cluster_type(s->cluster, s->cluster->device_type[d])->name, "CPU") == 0;
        if (cpu && s->cpu < 0)
            s->cpu = d;
        if (!cpu && s->gpu < 0)
            s->gpu = d;
    }
    *state = s;
    return 0;
}

static int test_teardown(void **state)
{
    test_sim *s = *state;
    cluster_free(s->cluster);
    dlclose(s->so);
    free(s);
    return 0;
}

/* An instance with options "key=value" (n of them). */
static void *test_instance(const test_sim *s, const option_kv *kv, int n, option_set *set)
{
    pb_error err;
    if (options_resolve(s->desc, kv, n, "test", set, &err))
        fail_msg("%s", err.msg);
    pb_create_args a = options_create_args(set, NULL, 1);
    void *inst;
    const pb_simulator_ops *ops = s->desc->ops;
    assert_int_equal(ops->create(&a, &inst, &err), PB_OK);
    return inst;
}

static pb_graph *test_dataset(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/datasets/heterps/%s.json", getenv("PB_SRC"), name);
    pb_graph *g;
    pb_error err;
    if (nodelink_read(path, &g, &err))
        fail_msg("%s", err.msg);
    return g;
}

/* Evaluates the plan written as C/G letters as a plain placement. */
static int test_placement(const test_sim *s, void *prep, const char *plan, pb_eval *ev,
                          pb_error *err)
{
    int device[32], n = (int)strlen(plan);
    for (int v = 0; v < n; v++)
        device[v] = plan[v] == 'C' ? s->cpu : s->gpu;
    pb_strategy st;
    pb_strategy_placement(&st, n, device);
    *ev = (pb_eval){.struct_size = sizeof *ev};
    return ((const pb_simulator_ops *)s->desc->ops)->evaluate(prep, &st, ev, err);
}

static void test_ctrdnn8_optimum(void **state)
{
    test_sim *s = *state;
    const pb_simulator_ops *ops = s->desc->ops;
    option_set set;
    void *inst = test_instance(s, NULL, 0, &set), *prep;
    pb_graph *g = test_dataset("ctrdnn-8");
    pb_error err;
    assert_int_equal(ops->prepare(inst, g, s->cluster, &prep, &err), PB_OK);
    pb_eval ev;
    assert_int_equal(test_placement(s, prep, "CCCGGGGC", &ev, &err), PB_OK);
    assert_true(ev.feasible);
    assert_true(fabs(ev.monetary_cost - 4.025) <= 0.0005); /* §11 [V] */
    assert_true(ev.throughput >= 1.2e6);
    assert_true(fabs(ev.step_time_us - 1e6 * 4373472329.0 / ev.throughput) <=
                1e-9 * ev.step_time_us);

    /* The same plan as a provisioned strategy with the counts provisioning gives it (23 cores,
     * 1 GPU, 1 core), and with too few cores for the first stage. */
    int type[8], counts[8] = {23, 1, 1};
    for (int v = 0; v < 8; v++)
        type[v] = s->cluster->device_type["CCCGGGGC"[v] == 'C' ? s->cpu : s->gpu];
    pb_strategy st;
    pb_strategy_placement(&st, 8, type);
    st.kind = PB_STRATEGY_PROVISIONED;
    st.n_stages = 3;
    st.stage_count = counts;
    pb_eval fixed = {.struct_size = sizeof fixed};
    assert_int_equal(ops->evaluate(prep, &st, &fixed, &err), PB_OK);
    assert_true(fixed.feasible);
    assert_true(fixed.monetary_cost == ev.monetary_cost);
    counts[0] = 10;
    assert_int_equal(ops->evaluate(prep, &st, &fixed, &err), PB_OK);
    assert_false(fixed.feasible);
    assert_true(fixed.throughput < 1.2e6);
    /* A penalised cost ranks below every feasible plan: above C_ub = 1.0124 h x 96.64 USD/h. */
    assert_true(fixed.monetary_cost > 4373472329.0 / 1.2e6 / 3600 * (480 * 0.04 + 32 * 2.42));
    st.n_stages = 2;
    assert_int_equal(ops->evaluate(prep, &st, &fixed, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "3 stages"));

    ops->release(prep);
    ops->destroy(inst);
    option_set_free(&set);
    graph_free(g);
}

/* A limit no plan can meet: every plan is infeasible, all-GPU included. */
static void test_unreachable_limit(void **state)
{
    test_sim *s = *state;
    const pb_simulator_ops *ops = s->desc->ops;
    option_set set;
    option_kv kv[] = {{"throughput_limit", "1e12"}};
    void *inst = test_instance(s, kv, 1, &set), *prep;
    pb_graph *g = test_dataset("ctrdnn-8");
    pb_error err;
    assert_int_equal(ops->prepare(inst, g, s->cluster, &prep, &err), PB_OK);
    pb_eval ev;
    assert_int_equal(test_placement(s, prep, "GGGGGGGG", &ev, &err), PB_OK);
    assert_false(ev.feasible);
    assert_true(ev.throughput == 0);
    ops->release(prep);
    ops->destroy(inst);
    option_set_free(&set);
    graph_free(g);
}

/* A one-layer graph of the given name and node type. */
static pb_graph *test_layer_graph(const char *name, const char *type)
{
    graph_builder *b = graph_builder_new(name);
    graph_node_attrs a = {.type = type, .colocation = -1};
    pb_error err;
    assert_int_equal(graph_add_node(b, "l1", &a, &err), 0);
    pb_graph *g;
    assert_int_equal(graph_build(b, &g, &err), PB_OK);
    return g;
}

static void test_bad_graphs(void **state)
{
    test_sim *s = *state;
    const pb_simulator_ops *ops = s->desc->ops;
    option_set set;
    void *inst = test_instance(s, NULL, 0, &set), *prep = NULL;
    pb_error err;
    pb_graph *g = test_layer_graph("ctrdnn-1", "MatMul");
    assert_int_equal(ops->prepare(inst, g, s->cluster, &prep, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "'MatMul' is not a HeterPS layer kind"));
    graph_free(g);
    g = test_layer_graph("ctrdnn-1", "FC in=4 out=4 width=3");
    assert_int_equal(ops->prepare(inst, g, s->cluster, &prep, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "unknown attribute 'width'"));
    graph_free(g);
    g = test_layer_graph("mystery", "FC in=4 out=4");
    assert_int_equal(ops->prepare(inst, g, s->cluster, &prep, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "throughput_limit"));
    graph_free(g);
    ops->destroy(inst);
    option_set_free(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ctrdnn8_optimum),
        cmocka_unit_test(test_unreachable_limit),
        cmocka_unit_test(test_bad_graphs),
    };
    return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
