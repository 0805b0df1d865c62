/* test_heterps_placers.c — the HeterPS placer plugins against a mock host whose simulator is the
 * worked example of specs/heterps.md §10 (T = 2, L = 3): the plans §10 lists for BF, Greedy and
 * both Heuristic variants, and the errors for infeasible answers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "heterps.h"

#include "model/graph.h"
#include "plugin/options.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two devices: device 0 is a CPU core, device 1 a V100. */
static const pb_device_type test_types[2] = {{.name = "CPU", .price_per_hour = 0.04},
                                             {.name = "V100-16G", .price_per_hour = 2.42}};
static const int test_device_type[2] = {0, 1};

typedef struct test_host {
    heterps_profile *profile;
    long long calls;
} test_host;

/* The worked example's profile (as in test_heterps_model.c) with N_GPU = gpu_limit. */
static heterps_profile *test_profile(double gpu_limit)
{
    static const double oct[2][3] = {{0.04, 1.00, 0.20}, {0.03, 0.015, 0.005}};
    static const double alpha[3] = {0.95, 0.90, 0.90};
    static const double odt[2][3] = {{0.01, 0.01, 0}, {0.002, 0.002, 0}};
    heterps_profile *p = heterps_profile_alloc(3, 2);
    for (int r = 0; r < 2; r++)
        for (int l = 0; l < 3; l++) {
            p->oct[r][l] = oct[r][l];
            p->alpha[r][l] = alpha[l];
            p->bnd[r][l] = odt[r][l];
        }
    p->tau_ps_sparse = 50e-6;
    p->beta_io = p->beta_bnd = 0.5;
    p->batch_o = 100;
    p->tl = 10000;
    p->epochs = 1;
    p->examples = 36e6;
    p->price[0] = 0.04;
    p->price[1] = 2.42;
    p->limit[0] = 480;
    p->limit[1] = gpu_limit;
    heterps_profile_finish(p);
    return p;
}

/* The mock simulator: device d runs plan type d, provisioned as the heterps simulator does. */
static int test_simulate(void *ctx, const pb_strategy *s, pb_eval *out, pb_error *err)
{
    test_host *h = ctx;
    (void)err;
    heterps_stage st[3];
    heterps_result r;
    heterps_provision(h->profile, s->device, st, &r);
    h->calls++;
    out->feasible = r.feasible;
    out->throughput = r.thr;
    out->monetary_cost = r.cost_pen;
    out->step_time_us = 1e6 * r.et_total;
    return PB_OK;
}

static void test_progress(void *ctx, const pb_progress *p)
{
    (void)ctx;
    (void)p;
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

/* Runs placer `name` with options kv[n] on the worked example; writes the plan as C/G letters
 * into plan (or the error into err) and returns place()'s status. */
static int test_place(const char *name, const option_kv *kv, int n, double gpu_limit, char *plan,
                      pb_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/placer-%s.so", getenv("PB_BUILD"), name);
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so)
        fail_msg("dlopen %s: %s", path, dlerror());
    const pb_plugin_desc *d = dlsym(so, PB_DESCRIPTOR_SYMBOL_NAME);
    assert_non_null(d);
    const pb_placer_ops *ops = d->ops;
    option_set set;
    if (options_resolve(d, kv, n, name, &set, err))
        fail_msg("%s", err->msg);
    test_host h = {.profile = test_profile(gpu_limit)};
    pb_host host = {sizeof host, &h, test_simulate, test_progress, test_log, test_deadline};
    pb_create_args a = options_create_args(&set, &host, 7);
    void *inst;
    assert_int_equal(ops->create(&a, &inst, err), PB_OK);

    graph_builder *b = graph_builder_new("worked-example");
    /* The kinds of §10's layers, for the learned placers' features (the mock simulator reads
     * the profile instead). */
    const char *names[3] = {"l1", "l2", "l3"};
    const char *types[3] = {"EMB in=1 out=10 ids=1 dim=10 rows=100", "FC in=10 out=10",
                            "FC in=10 out=2"};
    for (int v = 0; v < 3; v++) {
        graph_node_attrs attrs = {.type = types[v], .colocation = -1};
        assert_int_equal(graph_add_node(b, names[v], &attrs, err), v);
    }
    assert_true(graph_add_edge(b, 0, 1, 0, err) >= 0 && graph_add_edge(b, 1, 2, 0, err) >= 0);
    pb_graph *g;
    assert_int_equal(graph_build(b, &g, err), PB_OK);
    pb_cluster c = {.struct_size = sizeof c,
                    .name = "worked-example",
                    .n_devices = 2,
                    .n_types = 2,
                    .types = test_types,
                    .device_type = test_device_type,
                    .type_size = sizeof(pb_device_type)};
    pb_budget budget = {.struct_size = sizeof budget};
    pb_problem prob = {
        .struct_size = sizeof prob, .graph = g, .op_graph = g, .cluster = &c, .budget = &budget};
    int device[3] = {-1, -1, -1};
    pb_strategy best;
    pb_strategy_placement(&best, 3, device);
    double initial;
    int rc = ops->place(inst, &prob, &best, &initial, err);
    for (int v = 0; v < 3; v++)
        plan[v] = device[v] == 0 ? 'C' : device[v] == 1 ? 'G' : '?';
    plan[3] = '\0';
    ops->destroy(inst);
    option_set_free(&set);
    graph_free(g);
    heterps_profile_free(h.profile);
    dlclose(so);
    return rc;
}

/* Checks that placer `name` returns `want`. */
static void test_expect(const char *name, const option_kv *kv, int n, const char *want)
{
    char plan[4];
    pb_error err;
    if (test_place(name, kv, n, 32, plan, &err))
        fail_msg("%s: %s", name, err.msg);
    if (strcmp(plan, want) != 0)
        fail_msg("%s returned %s, the spec says %s", name, plan, want);
}

static void test_brute_force(void **state)
{
    (void)state;
    test_expect("brute-force", NULL, 0, "CGG");
}

static void test_greedy(void **state)
{
    (void)state;
    test_expect("greedy", NULL, 0, "GGG"); /* fill-forward stays on all-GPU */
}

static void test_heuristic(void **state)
{
    (void)state;
    test_expect("heuristic", NULL, 0, "CGG");
    option_kv first_gpu[] = {{"variant", "first_gpu"}};
    char plan[4];
    pb_error err;
    assert_int_equal(test_place("heuristic", first_gpu, 1, 32, plan, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "no plan meets the throughput limit")); /* G,C,C */
}

static void test_fixed(void **state)
{
    (void)state;
    test_expect("all-gpu", NULL, 0, "GGG");
    char plan[4];
    pb_error err;
    assert_int_equal(test_place("all-cpu", NULL, 0, 32, plan, &err), PB_ERR);
    /* With N_GPU = 4 the 8 GPUs of G,G,G exceed the limit. */
    assert_int_equal(test_place("all-gpu", NULL, 0, 4, plan, &err), PB_ERR);
}

/* The space has 8 plans: the searchers and the learned schedulers find the optimum. */
static void test_searchers(void **state)
{
    (void)state;
    test_expect("genetic", NULL, 0, "CGG");
    test_expect("bo", NULL, 0, "CGG");
    option_kv short_run[] = {{"rounds", "30"}};
    test_expect("heterps", short_run, 1, "CGG");
    test_expect("rl-rnn", short_run, 1, "CGG");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_brute_force), cmocka_unit_test(test_greedy),
        cmocka_unit_test(test_heuristic),   cmocka_unit_test(test_fixed),
        cmocka_unit_test(test_searchers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
