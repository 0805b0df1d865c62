/* test_sim_topology.c — the topology simulator plugin against TAG's worked examples
 * (specs/tag.md §12, figures from TAG's own simulator) and hand-computed cases. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "data/nodelink.h"
#include "model/graph.h"
#include "plugin/options.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_MAX 8

/* The loaded plugin, shared by all tests of the group. */
typedef struct test_sim {
    void *so;
    const pb_plugin_desc *desc;
    option_set defaults;
    void *instance;
} test_sim;

/* A cluster of up to TEST_MAX devices, each with its own type. */
typedef struct test_cluster {
    pb_cluster c;
    pb_device_type types[TEST_MAX];
    int type[TEST_MAX], machine[TEST_MAX];
    double bw[TEST_MAX * TEST_MAX], lat[TEST_MAX * TEST_MAX];
} test_cluster;

/* A REPLICATED strategy: device groups and each node's group and option. */
typedef struct test_strategy {
    pb_strategy s;
    int group[TEST_MAX * 2], repl[TEST_MAX * 2], start[TEST_MAX + 1], devices[TEST_MAX * 4];
} test_strategy;

typedef struct test_result {
    pb_eval ev;
    double peak[TEST_MAX], busy[TEST_MAX], link[TEST_MAX * TEST_MAX];
    double start[TEST_MAX * 2], end[TEST_MAX * 2], idle_after[TEST_MAX * 2];
} test_result;

static int test_setup(void **state)
{
    const char *build = getenv("PB_BUILD");
    if (!build) {
        fprintf(stderr, "PB_BUILD is not set (run through ctest)\n");
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/simulator-topology.so", build);
    test_sim *s = calloc(1, sizeof *s);
    s->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!s->so) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        free(s);
        return -1;
    }
    s->desc = dlsym(s->so, PB_DESCRIPTOR_SYMBOL_NAME);
    pb_error err;
    if (!s->desc || s->desc->kind != PB_KIND_SIMULATOR || strcmp(s->desc->name, "topology") != 0 ||
        options_resolve(s->desc, NULL, 0, "topology", &s->defaults, &err) != PB_OK) {
        fprintf(stderr, "%s: no topology simulator descriptor\n", path);
        return -1;
    }
    pb_create_args args = options_create_args(&s->defaults, NULL, 1);
    const pb_simulator_ops *ops = s->desc->ops;
    if (ops->create(&args, &s->instance, &err) != PB_OK) {
        fprintf(stderr, "create: %s\n", err.msg);
        return -1;
    }
    *state = s;
    return 0;
}

static int test_teardown(void **state)
{
    test_sim *s = *state;
    if (!s)
        return 0;
    ((const pb_simulator_ops *)s->desc->ops)->destroy(s->instance);
    option_set_free(&s->defaults);
    dlclose(s->so);
    free(s);
    return 0;
}

/* n devices of speed 1 and unlimited memory; device d on machine machine[d]; every link between
 * machines `inter` B/µs, inside a machine `intra`, latency `latency` µs everywhere. */
static void test_cluster_init(test_cluster *t, int n, const int *machine, double intra,
                              double inter, double latency)
{
    memset(t, 0, sizeof *t);
    int machines = 0;
    for (int d = 0; d < n; d++) {
        t->types[d] = (pb_device_type){.name = "gpu", .speed_vs_ref = 1};
        t->type[d] = d;
        t->machine[d] = machine[d];
        machines = machine[d] + 1 > machines ? machine[d] + 1 : machines;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            t->bw[i * n + j] = machine[i] == machine[j] ? intra : inter;
            t->lat[i * n + j] = latency;
        }
    t->c = (pb_cluster){.struct_size = sizeof(pb_cluster),
                        .name = "test",
                        .n_devices = n,
                        .n_types = n,
                        .types = t->types,
                        .device_type = t->type,
                        .device_machine = t->machine,
                        .n_machines = machines,
                        .link_bandwidth = t->bw,
                        .link_latency = t->lat,
                        .type_size = sizeof(pb_device_type)};
}

static pb_graph *test_graph_file(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/topology/%s", getenv("PB_TESTDATA"), name);
    pb_graph *g = NULL;
    pb_error err;
    if (nodelink_read(path, &g, &err) != PB_OK)
        fail_msg("%s", err.msg);
    return g;
}

/* Device groups given as -1-terminated lists, e.g. {0, 1, -1, 0, -1}; every node starts in
 * group 0 with option `repl`. */
static void test_strategy_init(test_strategy *t, int n_nodes, const int *lists, int n_groups,
                               int repl)
{
    memset(t, 0, sizeof *t);
    int at = 0, g = 0;
    for (int i = 0; g < n_groups; i++) {
        if (lists[i] < 0) {
            t->start[++g] = at;
            continue;
        }
        t->devices[at++] = lists[i];
    }
    for (int v = 0; v < n_nodes; v++)
        t->repl[v] = repl;
    pb_strategy_placement(&t->s, n_nodes, t->group);
    t->s.kind = PB_STRATEGY_REPLICATED;
    t->s.replication = t->repl;
    t->s.n_device_groups = n_groups;
    t->s.group_start = t->start;
    t->s.group_devices = t->devices;
}

/* Node v of g by name. */
static int test_node(const pb_graph *g, const char *name)
{
    for (int v = 0; v < g->n_nodes; v++)
        if (strcmp(g->node_name[v], name) == 0)
            return v;
    fail_msg("no node '%s'", name);
    return -1;
}

/* A pb_eval asking for every output, into the arrays given (each evaluation's per-node times
 * into start, end and idle_after). */
static pb_eval test_eval_all(double *peak, double *busy, double *link, double *start, double *end,
                             double *idle_after)
{
    return (pb_eval){.struct_size = sizeof(pb_eval),
                     .peak_mem_bytes = peak,
                     .busy_us = busy,
                     .link_busy_us = link,
                     .node_start_us = start,
                     .node_end_us = end,
                     .node_idle_after_us = idle_after};
}

/* An empty result whose pb_eval asks for every output. */
static void test_result_init(test_result *r)
{
    memset(r, 0, sizeof *r);
    r->ev = test_eval_all(r->peak, r->busy, r->link, r->start, r->end, r->idle_after);
}

static int test_run(test_sim *s, const pb_graph *g, const pb_cluster *c, const pb_strategy *st,
                    test_result *r, pb_error *err)
{
    const pb_simulator_ops *ops = s->desc->ops;
    void *prepared = NULL;
    assert_int_equal(ops->prepare(s->instance, g, c, &prepared, err), PB_OK);
    test_result_init(r);
    int rc = ops->evaluate(prepared, st, &r->ev, err);
    if (rc == PB_OK) { /* a second evaluation on the same handle gives the same result */
        double step = r->ev.step_time_us;
        assert_int_equal(ops->evaluate(prepared, st, &r->ev, err), PB_OK);
        assert_true(r->ev.step_time_us == step);
    }
    ops->release(prepared);
    return rc;
}

static void test_expect(const test_result *r, double step, double peak0, double peak1)
{
    if (r->ev.step_time_us != step || r->peak[0] != peak0 || r->peak[1] != peak1)
        fail_msg("step %.17g peak [%.17g, %.17g], expected %.17g [%.17g, %.17g]",
                 r->ev.step_time_us, r->peak[0], r->peak[1], step, peak0, peak1);
}

/* ---------------------------------------------------------------- TAG's worked examples */

/* §12 Example 1: x on d0, every other op on d1 (two machines, 2810 B/µs); the NoOp on d0. */
static void test_tag_example1(void **state)
{
    pb_graph *g = test_graph_file("tag_example.json");
    test_cluster tc;
    int machine[2] = {0, 1};
    test_cluster_init(&tc, 2, machine, 2810, 2810, 12);
    int device[7];
    for (int v = 0; v < 7; v++)
        device[v] = 1;
    device[test_node(g, "x")] = 0;
    device[test_node(g, "GradientDescent")] = 0;
    pb_strategy s;
    pb_strategy_placement(&s, 7, device);
    test_result r;
    pb_error err;
    assert_int_equal(test_run(*state, g, &tc.c, &s, &r, &err), PB_OK);
    test_expect(&r, 248, 65536, 524292);
    assert_true(r.busy[0] == 13 && r.busy[1] == 203);
    /* the two x -> d1 edges are separate transfers of 35 µs on one link */
    assert_true(r.link[0 * 2 + 1] == 70);
    int y = test_node(g, "y"), gw = test_node(g, "gW"), upd = test_node(g, "upd");
    assert_true(r.start[y] == 45 && r.end[y] == 145);
    assert_true(r.start[gw] == 145 && r.end[gw] == 225);
    assert_true(r.start[upd] == 225 && r.end[upd] == 245);
    assert_int_equal(r.ev.feasible, 1);
    graph_free(g);
}

/* Groups: 0 = {d0, d1}, 1 = {d0}; every op in group 0 with `repl`, the NoOp alone on d0. */
static void test_tag_dp(test_strategy *t, const pb_graph *g, int repl)
{
    static const int lists[] = {0, 1, -1, 0, -1};
    test_strategy_init(t, g->n_nodes, lists, 2, repl);
    int noop = test_node(g, "GradientDescent");
    t->group[noop] = 1;
    t->repl[noop] = PB_REPL_NONE;
}

/* §12 Example 2: DP with AllReduce on two GPUs of one machine (8000 B/µs). */
static void test_tag_example2(void **state)
{
    pb_graph *g = test_graph_file("tag_example.json");
    test_cluster tc;
    int machine[2] = {0, 0};
    test_cluster_init(&tc, 2, machine, 8000, 8000, 12);
    test_strategy t;
    test_tag_dp(&t, g, PB_REPL_ALLREDUCE);
    test_result r;
    pb_error err;
    if (test_run(*state, g, &tc.c, &t.s, &r, &err) != PB_OK)
        fail_msg("%s", err.msg);
    test_expect(&r, 257, 524292, 524292);
    assert_true(r.busy[0] == 126 && r.busy[1] == 123);
    int y = test_node(g, "y"), gw = test_node(g, "gW"), upd = test_node(g, "upd");
    assert_true(r.start[y] == 9 && r.end[y] == 61);
    /* the gradient's makespan covers its AllReduce (131 µs, 103-234) */
    assert_true(r.start[gw] == 61 && r.end[gw] == 234);
    assert_true(r.start[upd] == 234 && r.end[upd] == 254);
    graph_free(g);
}

/* §12 Example 3: DP with a parameter server on d0, two machines (2810 B/µs). */
static void test_tag_example3(void **state)
{
    pb_graph *g = test_graph_file("tag_example.json");
    test_cluster tc;
    int machine[2] = {0, 1};
    test_cluster_init(&tc, 2, machine, 2810, 2810, 12);
    test_strategy t;
    test_tag_dp(&t, g, PB_REPL_PS);
    test_result r;
    pb_error err;
    if (test_run(*state, g, &tc.c, &t.s, &r, &err) != PB_OK)
        fail_msg("%s", err.msg);
    test_expect(&r, 289, 524292, 524292);
    /* push gW1 -> d0 58 µs (103-161), pull the sum -> d1 105 µs (161-266) */
    assert_true(r.link[1 * 2 + 0] == 58 && r.link[0 * 2 + 1] == 105);
    int gw = test_node(g, "gW"), upd = test_node(g, "upd");
    assert_true(r.end[gw] - r.start[gw] == 100);
    assert_true(r.end[upd] - r.start[upd] == 125);
    graph_free(g);
}

/* §12 Example 4's variant: every op duplicated on both GPUs (SFB), two machines. */
static void test_tag_duplicate(void **state)
{
    pb_graph *g = test_graph_file("tag_example.json");
    test_cluster tc;
    int machine[2] = {0, 1};
    test_cluster_init(&tc, 2, machine, 2810, 2810, 12);
    test_strategy t;
    test_tag_dp(&t, g, PB_REPL_DUPLICATE);
    test_result r;
    pb_error err;
    if (test_run(*state, g, &tc.c, &t.s, &r, &err) != PB_OK)
        fail_msg("%s", err.msg);
    test_expect(&r, 216, 524292, 524292);
    graph_free(g);
}

/* §12 Example 4, mixed: gW, upd and lr on d1 alone, every other op a PS replica on {d0, d1}
 * (W follows upd to d1), the NoOp on d0; two machines at 2810 B/µs.  The base group {W, y, gW,
 * upd} is not replicated alike, so y computes the whole batch (TAG's duplicate fallback); x, its
 * own group, stays split.  y's replica on d0 is read by nobody and pruned; the Concat of x on d0,
 * y's first device, stays.  The spec's timeline: d0 x0 0-6; d1 W 0-2, lr 2-3, x1 3-9 (behind W
 * and lr: x1 waits for its shape Const); x0 -> d1 6-29, x1 -> d0 9-32; the Concat on d0 at 32,
 * sent to y1 on d1 32-67 (65536 / 2810 + 12 = 35); y1 67-167, gW 167-247, upd 247-267, the NoOp
 * on d0 267-270.  Total 270, peak [65536, 524292], makespan of x 32 (0 to the Concat on d0). */
static void test_tag_example4(void **state)
{
    pb_graph *g = test_graph_file("tag_example.json");
    test_cluster tc;
    int machine[2] = {0, 1};
    test_cluster_init(&tc, 2, machine, 2810, 2810, 12);
    static const int lists[] = {0, 1, -1, 0, -1, 1, -1};
    test_strategy t;
    test_strategy_init(&t, g->n_nodes, lists, 3, PB_REPL_PS);
    const char *alone[] = {"gW", "upd", "lr"};
    for (int i = 0; i < 3; i++) {
        t.group[test_node(g, alone[i])] = 2;
        t.repl[test_node(g, alone[i])] = PB_REPL_NONE;
    }
    int noop = test_node(g, "GradientDescent");
    t.group[noop] = 1;
    t.repl[noop] = PB_REPL_NONE;
    test_result r;
    pb_error err;
    if (test_run(*state, g, &tc.c, &t.s, &r, &err) != PB_OK)
        fail_msg("%s", err.msg);
    test_expect(&r, 270, 65536, 524292);
    int x = test_node(g, "x"), y = test_node(g, "y"), gw = test_node(g, "gW");
    int upd = test_node(g, "upd");
    assert_true(r.start[x] == 0 && r.end[x] == 32);
    assert_true(r.start[y] == 67 && r.end[y] == 167);
    assert_true(r.start[gw] == 167 && r.end[gw] == 247);
    assert_true(r.start[upd] == 247 && r.end[upd] == 267);
    assert_true(r.start[noop] == 267 && r.end[noop] == 270);
    /* d0: x0 and the NoOp; d1: W, lr, x1, y1, gW, upd */
    assert_true(r.busy[0] == 6 + 3 && r.busy[1] == 2 + 1 + 6 + 100 + 80 + 20);
    /* links: x0 -> d1 23; x1 -> d0 23; the Concat -> d1 35 */
    assert_true(r.link[0 * 2 + 1] == 23 + 35 && r.link[1 * 2 + 0] == 23);
    graph_free(g);
}

/* Example 2 on GPUs of 500000 bytes: the same schedule, out of memory. */
static void test_oom(void **state)
{
    pb_graph *g = test_graph_file("tag_example.json");
    test_cluster tc;
    int machine[2] = {0, 0};
    test_cluster_init(&tc, 2, machine, 8000, 8000, 12);
    tc.types[0].memory_bytes = tc.types[1].memory_bytes = 500000;
    test_strategy t;
    test_tag_dp(&t, g, PB_REPL_ALLREDUCE);
    test_result r;
    pb_error err;
    assert_int_equal(test_run(*state, g, &tc.c, &t.s, &r, &err), PB_OK);
    test_expect(&r, 257, 524292, 524292);
    assert_int_equal(r.ev.feasible, 0);
    tc.types[0].memory_bytes = tc.types[1].memory_bytes = 524292; /* exactly the peak fits */
    assert_int_equal(test_run(*state, g, &tc.c, &t.s, &r, &err), PB_OK);
    assert_int_equal(r.ev.feasible, 1);
    graph_free(g);
}

/* ---------------------------------------------------------------- hand-computed cases */

typedef struct test_op {
    const char *name;
    double cost, out, mem;
    int role, split;
} test_op;

static pb_graph *test_graph_build(const test_op *ops, int n, const int (*edges)[2], int m)
{
    graph_builder *b = graph_builder_new("hand");
    pb_error err;
    for (int v = 0; v < n; v++) {
        graph_node_attrs a = {.cost_us = ops[v].cost,
                              .param_bytes = ops[v].mem,
                              .n_ports = 1,
                              .port_bytes = &ops[v].out,
                              .colocation = -1,
                              .role = ops[v].role,
                              .split = ops[v].split};
        assert_int_equal(graph_add_node(b, ops[v].name, &a, &err), v);
    }
    for (int e = 0; e < m; e++)
        assert_true(graph_add_edge(b, edges[e][0], edges[e][1], 0, &err) >= 0);
    pb_graph *g = NULL;
    if (graph_build(b, &g, &err) != PB_OK)
        fail_msg("%s", err.msg);
    return g;
}

/* a (d0) -> b (d1, twice as fast) -> c (d0) over 100 B/µs links with 5 µs latency:
 * a 0-10, a->b 1000/100+5 = 15 (10-25), b 40/2 = 20 (25-45), b->c 3000/100+5 = 35 (45-80),
 * c 80-86.  d0 holds a's 7 parameter bytes throughout, a's output (10-25) and b's copy (80-86):
 * peak 3007; d1 a's copy (25-45), then b's output: 3000.  Prices 3.6 and 7.2 USD/h are 1e-9 and
 * 2e-9 USD/µs: 86 µs cost 2.58e-7 USD. */
static void test_chain_two_types(void **state)
{
    test_op ops[3] = {{"a", 10, 1000, 7, 0, 0}, {"b", 40, 3000, 0, 0, 0}, {"c", 6, 0, 0, 0, 0}};
    int edges[2][2] = {{0, 1}, {1, 2}};
    pb_graph *g = test_graph_build(ops, 3, edges, 2);
    test_cluster tc;
    int machine[2] = {0, 0};
    test_cluster_init(&tc, 2, machine, 100, 100, 5);
    tc.types[1].speed_vs_ref = 2;
    tc.types[0].price_per_hour = 3.6;
    tc.types[1].price_per_hour = 7.2;
    int device[3] = {0, 1, 0};
    pb_strategy s;
    pb_strategy_placement(&s, 3, device);
    test_result r;
    pb_error err;
    assert_int_equal(test_run(*state, g, &tc.c, &s, &r, &err), PB_OK);
    test_expect(&r, 86, 3007, 3000);
    assert_true(r.busy[0] == 16 && r.busy[1] == 20);
    assert_true(r.link[0 * 2 + 1] == 15 && r.link[1 * 2 + 0] == 35);
    assert_true(r.start[1] == 25 && r.end[1] == 45 && r.start[2] == 80 && r.end[2] == 86);
    assert_true(fabs(r.ev.monetary_cost - 2.58e-7) < 1e-18);
    graph_free(g);
}

/* x -> y = x W -> gW = x^T y -> upd(W, gW), batch-split over d0 (speed 1) and d1 (speed 2),
 * one machine at 8000 B/µs, 12 µs latency.  Sizes: x, y 4000 (parts 2000), W and gW 1048576
 * (gW parts 524288).  Part costs x 4, y 20, gW 30 on d0 and half on d1; upd 10 and 5.
 * d0: x 0-4, W 4-4, y 4-24, gW 24-54; d1: x 0-2, W 2-2, y 2-12, gW 12-27. */
static pb_graph *test_matmul_graph(void)
{
    test_op ops[5] = {
        {"x", 8, 4000, 0, PB_ROLE_OP, PB_SPLIT_BATCH},
        {"W", 0, 1048576, 0, PB_ROLE_PARAMETER, PB_SPLIT_NONE},
        {"y", 40, 4000, 0, PB_ROLE_OP, PB_SPLIT_BATCH},
        {"gW", 60, 1048576, 0, PB_ROLE_GRADIENT, PB_SPLIT_SUM},
        {"upd", 10, 0, 0, PB_ROLE_APPLY, PB_SPLIT_NONE},
    };
    int edges[6][2] = {{0, 2}, {1, 2}, {0, 3}, {2, 3}, {1, 4}, {3, 4}};
    return test_graph_build(ops, 5, edges, 6);
}

/* Two GPUs of different speeds in one group {d0, d1}. */
static void test_matmul_cluster(test_cluster *tc)
{
    int machine[2] = {0, 0};
    test_cluster_init(tc, 2, machine, 8000, 8000, 12);
    tc->types[1].speed_vs_ref = 2;
}

/* AllReduce of the 524288-byte parts (512 KB) once both gradients are in (54): TAG's model at
 * 8000 B/µs, max(trunc(0.0152514 * 512 + 129.3307), trunc(0.0975309 * 512 + 74.4366)) =
 * max(137, 124) = 137, so 54-191; upd 191-201 on d0, 191-196 on d1.  Busy d0 4+20+30+10 = 64,
 * d1 32.  Each device ends holding W and the reduced gradient: 2 * 1048576. */
static void test_matmul_allreduce(void **state)
{
    pb_graph *g = test_matmul_graph();
    test_cluster tc;
    test_matmul_cluster(&tc);
    static const int lists[] = {0, 1, -1};
    test_strategy t;
    test_strategy_init(&t, 5, lists, 1, PB_REPL_ALLREDUCE);
    test_result r;
    pb_error err;
    if (test_run(*state, g, &tc.c, &t.s, &r, &err) != PB_OK)
        fail_msg("%s", err.msg);
    test_expect(&r, 201, 2097152, 2097152);
    assert_true(r.busy[0] == 64 && r.busy[1] == 32);
    assert_true(r.start[3] == 12 && r.end[3] == 191); /* gW: its replicas and its AllReduce */
    assert_true(r.link[0 * 2 + 1] == 0 && r.link[1 * 2 + 0] == 0);
    graph_free(g);
}

/* The same with a parameter server on d0: push gW1 -> d0 524288/8000 -> 65 + 12 = 77 (27-104),
 * AddN at 104, upd0 104-114, pull the sum -> d1 1048576/8000 -> 131 + 12 = 143 (104-247),
 * upd1 247-252. */
static void test_matmul_ps(void **state)
{
    pb_graph *g = test_matmul_graph();
    test_cluster tc;
    test_matmul_cluster(&tc);
    static const int lists[] = {0, 1, -1};
    test_strategy t;
    test_strategy_init(&t, 5, lists, 1, PB_REPL_PS);
    test_result r;
    pb_error err;
    if (test_run(*state, g, &tc.c, &t.s, &r, &err) != PB_OK)
        fail_msg("%s", err.msg);
    test_expect(&r, 252, 2097152, 2097152);
    assert_true(r.link[1 * 2 + 0] == 77 && r.link[0 * 2 + 1] == 143);
    assert_true(r.busy[0] == 64 && r.busy[1] == 32);
    graph_free(g);
}

/* Three machines: d0 | d1 | d2 d3.  p (d0, 5000 bytes) feeds q (d2), r (d3) and s (d1).  The
 * link from machine 0 to machine 2 (100 B/µs) is shared by both transfers into it: p->q
 * 5000/100 + 1 = 51 (10-61), p->r waits for it (61-112); p->s crosses the fast link 0->1
 * (1000 B/µs): 6 µs (10-16).  q 61-62, r 112-113, s 16-17. */
static void test_bottleneck(void **state)
{
    test_op ops[4] = {
        {"p", 10, 5000, 0, 0, 0}, {"q", 1, 0, 0, 0, 0}, {"r", 1, 0, 0, 0, 0}, {"s", 1, 0, 0, 0, 0}};
    int edges[3][2] = {{0, 1}, {0, 2}, {0, 3}};
    pb_graph *g = test_graph_build(ops, 4, edges, 3);
    test_cluster tc;
    int machine[4] = {0, 1, 2, 2};
    test_cluster_init(&tc, 4, machine, 10000, 1000, 1);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            if ((machine[i] == 0 && machine[j] == 2) || (machine[i] == 2 && machine[j] == 0))
                tc.bw[i * 4 + j] = 100;
    int device[4] = {0, 2, 3, 1};
    pb_strategy s;
    pb_strategy_placement(&s, 4, device);
    test_result r;
    pb_error err;
    assert_int_equal(test_run(*state, g, &tc.c, &s, &r, &err), PB_OK);
    assert_true(r.ev.step_time_us == 113);
    assert_true(r.start[1] == 61 && r.start[2] == 112 && r.start[3] == 16);
    assert_true(r.link[0 * 4 + 2] == 51 && r.link[0 * 4 + 3] == 51 && r.link[0 * 4 + 1] == 6);
    graph_free(g);
}

/* Two AllReduce instances run in reverse creation order (specs/tag.md §4.4, "Collective
 * order"): nodes x, W1, W2, g1, g2, u1, u2 on GPUs d0 and d1 of one machine at 2810 B/µs (the
 * NCCL model unscaled).  Parts: x 5, g1 10, g2 100 µs; u1, u2 4.  Each GPU: x 0-5, then g1
 * and g2 in the order the heap's ties release them, both done at 115.  The gradients' halves are
 * 1024 bytes (1 KB): max(trunc(0.0434 + 368.2), trunc(0.2777 + 211.9)) = 368 µs.  Instance 0 (g1,
 * created first, for u1) waits for instance 1 (g2): 115-483, then 483-851; u2 483-487, u1 851-855.
 */
static void test_collective_order(void **state)
{
    test_op ops[7] = {
        {"x", 10, 4000, 0, PB_ROLE_OP, PB_SPLIT_BATCH},
        {"W1", 0, 2048, 0, PB_ROLE_PARAMETER, PB_SPLIT_NONE},
        {"W2", 0, 2048, 0, PB_ROLE_PARAMETER, PB_SPLIT_NONE},
        {"g1", 20, 2048, 0, PB_ROLE_GRADIENT, PB_SPLIT_SUM},
        {"g2", 200, 2048, 0, PB_ROLE_GRADIENT, PB_SPLIT_SUM},
        {"u1", 4, 0, 0, PB_ROLE_APPLY, PB_SPLIT_NONE},
        {"u2", 4, 0, 0, PB_ROLE_APPLY, PB_SPLIT_NONE},
    };
    int edges[6][2] = {{0, 3}, {0, 4}, {1, 5}, {3, 5}, {2, 6}, {4, 6}};
    pb_graph *g = test_graph_build(ops, 7, edges, 6);
    test_cluster tc;
    int machine[2] = {0, 0};
    test_cluster_init(&tc, 2, machine, 2810, 2810, 12);
    static const int lists[] = {0, 1, -1};
    test_strategy t;
    test_strategy_init(&t, 7, lists, 1, PB_REPL_ALLREDUCE);
    test_result r;
    pb_error err;
    if (test_run(*state, g, &tc.c, &t.s, &r, &err) != PB_OK)
        fail_msg("%s", err.msg);
    assert_true(r.ev.step_time_us == 855);
    assert_true(r.start[3] == 5 && r.end[3] == 851); /* g1 and its AllReduce */
    assert_true(r.end[4] == 483);                    /* g2 and its AllReduce */
    assert_true(r.start[6] == 483 && r.start[5] == 851);
    assert_true(r.busy[0] == 123 && r.busy[1] == 123);
    graph_free(g);
}

/* ---------------------------------------------------------------- model-parallel split */

/* a -> b split over {d0, d1} (two machines, 2810 B/µs, 12 µs): two ops, two parts, so METIS is
 * not called and op i takes part i.  a 0-10 on d0, 28100 bytes -> d1 in 10 + 12 (10-32), b 32-37
 * on d1. */
static void test_split_two_ops(void **state)
{
    test_op ops[2] = {{"a", 10, 28100, 0, 0, 0}, {"b", 5, 0, 0, 0, 0}};
    int edges[1][2] = {{0, 1}};
    pb_graph *g = test_graph_build(ops, 2, edges, 1);
    test_cluster tc;
    int machine[2] = {0, 1};
    test_cluster_init(&tc, 2, machine, 2810, 2810, 12);
    static const int lists[] = {0, 1, -1};
    test_strategy t;
    test_strategy_init(&t, 2, lists, 1, PB_REPL_SPLIT);
    test_result r;
    pb_error err;
    if (test_run(*state, g, &tc.c, &t.s, &r, &err) != PB_OK)
        fail_msg("%s", err.msg);
    assert_true(r.ev.step_time_us == 37);
    assert_true(r.busy[0] == 10 && r.busy[1] == 5 && r.link[0 * 2 + 1] == 22);
    graph_free(g);
}

/* Two independent chains a1 -> b1 and a2 -> b2 (10 µs each op, 1 MB tensors) split over
 * {d0, d1}: METIS's cut of 0 puts each chain on its own device, so both run at once: 20 µs, no
 * transfer; a placement cutting a chain would cost a transfer, one keeping both chains on one
 * device 40 µs. */
static void test_split_metis(void **state)
{
    test_op ops[4] = {{"a1", 10, 1e6, 0, 0, 0},
                      {"b1", 10, 0, 0, 0, 0},
                      {"a2", 10, 1e6, 0, 0, 0},
                      {"b2", 10, 0, 0, 0, 0}};
    int edges[2][2] = {{0, 1}, {2, 3}};
    pb_graph *g = test_graph_build(ops, 4, edges, 2);
    test_cluster tc;
    int machine[2] = {0, 0};
    test_cluster_init(&tc, 2, machine, 8000, 8000, 12);
    static const int lists[] = {0, 1, -1};
    test_strategy t;
    test_strategy_init(&t, 4, lists, 1, PB_REPL_SPLIT);
    test_result r;
    pb_error err;
    if (test_run(*state, g, &tc.c, &t.s, &r, &err) != PB_OK)
        fail_msg("%s", err.msg);
    assert_true(r.ev.step_time_us == 20);
    assert_true(r.busy[0] == 20 && r.busy[1] == 20);
    assert_true(r.link[0 * 2 + 1] == 0 && r.link[1 * 2 + 0] == 0);
    graph_free(g);
}

/* ---------------------------------------------------------------- the Placeto model */

/*
 * Where the topology and Placeto models coincide: two devices (Placeto's one outgoing bus per
 * device is then the one link to the other device), delta1 = delta2 = 0 and latency 0, sizes
 * that are multiples of the bandwidth (the topology model floors bytes / bandwidth), and at
 * most one remote consumer per output port (Placeto sends a port once to all its remote
 * consumers, the topology model once per edge).  a (d0) feeds b (d1) and c (d0); b and c feed d
 * (d0); 100 B/µs.  a 0-10; a -> b 1000 B in 10 µs (10-20); c 10-40; b 20-40; b -> d 500 B in 5
 * (40-45); d 45-50.  Both simulators give 50.
 */
static void test_placeto_agreement(void **state)
{
    test_op ops[4] = {{"a", 10, 1000, 0, 0, 0},
                      {"b", 20, 500, 0, 0, 0},
                      {"c", 30, 2000, 0, 0, 0},
                      {"d", 5, 0, 0, 0, 0}};
    int edges[4][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
    pb_graph *g = test_graph_build(ops, 4, edges, 4);
    test_cluster tc;
    int machine[2] = {0, 0};
    test_cluster_init(&tc, 2, machine, 100, 100, 0);
    tc.c.transfer_speed = 100;
    int device[4] = {0, 1, 0, 0};
    pb_strategy s;
    pb_strategy_placement(&s, 4, device);
    test_result r;
    pb_error err;
    assert_int_equal(test_run(*state, g, &tc.c, &s, &r, &err), PB_OK);
    assert_true(r.ev.step_time_us == 50);

    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/simulator-placeto.so", getenv("PB_BUILD"));
    test_sim placeto = {0};
    placeto.so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(placeto.so);
    placeto.desc = dlsym(placeto.so, PB_DESCRIPTOR_SYMBOL_NAME);
    assert_non_null(placeto.desc);
    assert_int_equal(options_resolve(placeto.desc, NULL, 0, "placeto", &placeto.defaults, &err),
                     PB_OK);
    pb_create_args args = options_create_args(&placeto.defaults, NULL, 1);
    assert_int_equal(
        ((const pb_simulator_ops *)placeto.desc->ops)->create(&args, &placeto.instance, &err),
        PB_OK);
    test_result q;
    if (test_run(&placeto, g, &tc.c, &s, &q, &err) != PB_OK)
        fail_msg("placeto: %s", err.msg);
    assert_true(q.ev.step_time_us == 50);
    ((const pb_simulator_ops *)placeto.desc->ops)->destroy(placeto.instance);
    option_set_free(&placeto.defaults);
    dlclose(placeto.so);
    graph_free(g);
}

/* TAG's "idle after": z (d0, 1 µs) sends 10000 bytes to w (d1) at 100 B/µs + 1 µs: 1-102;
 * a (d0) runs 1-3, but its transfer to b (d1) waits for the link until 102: idle after a = 99.
 * z's transfer starts as z ends (0); w and b have no dependent (0). */
static void test_idle_after(void **state)
{
    test_op ops[4] = {{"z", 1, 10000, 0, 0, 0},
                      {"a", 2, 100, 0, 0, 0},
                      {"w", 1, 0, 0, 0, 0},
                      {"b", 1, 0, 0, 0, 0}};
    int edges[2][2] = {{0, 2}, {1, 3}};
    pb_graph *g = test_graph_build(ops, 4, edges, 2);
    test_cluster tc;
    int machine[2] = {0, 0};
    test_cluster_init(&tc, 2, machine, 100, 100, 1);
    int device[4] = {0, 0, 1, 1};
    pb_strategy s;
    pb_strategy_placement(&s, 4, device);
    test_result r;
    pb_error err;
    assert_int_equal(test_run(*state, g, &tc.c, &s, &r, &err), PB_OK);
    assert_true(r.idle_after[0] == 0 && r.idle_after[1] == 99);
    assert_true(r.idle_after[2] == 0 && r.idle_after[3] == 0);
    /* a -> b: 100 / 100 + 1 = 2 µs, 102-104; b 104-105 */
    assert_true(r.ev.step_time_us == 105);
    graph_free(g);
}

/* ---------------------------------------------------------------- the strategy cache */

/* Every output of two evaluations is the same. */
static void test_same_result(const test_result *a, const test_result *b, int n_nodes, int nd)
{
    assert_true(a->ev.step_time_us == b->ev.step_time_us);
    assert_int_equal(a->ev.feasible, b->ev.feasible);
    assert_true(a->ev.n_events == b->ev.n_events);
    assert_memory_equal(a->peak, b->peak, (size_t)nd * sizeof(double));
    assert_memory_equal(a->busy, b->busy, (size_t)nd * sizeof(double));
    assert_memory_equal(a->link, b->link, (size_t)nd * nd * sizeof(double));
    assert_memory_equal(a->start, b->start, (size_t)n_nodes * sizeof(double));
    assert_memory_equal(a->end, b->end, (size_t)n_nodes * sizeof(double));
    assert_memory_equal(a->idle_after, b->idle_after, (size_t)n_nodes * sizeof(double));
}

/* One prepared handle evaluates a strategy changed in place between calls (options, device
 * lists, shares, back again): each result equals that of a handle that saw only that strategy,
 * so the reuse of the last compiled graph never serves a stale one. */
static void test_cache_changed_in_place(void **state)
{
    test_sim *sim = *state;
    const pb_simulator_ops *ops = sim->desc->ops;
    pb_graph *g = test_graph_file("tag_example.json");
    test_cluster tc;
    int machine[2] = {0, 1};
    test_cluster_init(&tc, 2, machine, 2810, 2810, 12);
    test_strategy t;
    test_tag_dp(&t, g, PB_REPL_ALLREDUCE);
    double share[4] = {0.75, 0.25, 1, 0};
    void *prepared = NULL;
    pb_error err;
    assert_int_equal(ops->prepare(sim->instance, g, &tc.c, &prepared, &err), PB_OK);
    int noop = test_node(g, "GradientDescent");
    for (int step = 0; step < 6; step++) {
        for (int v = 0; v < 7; v++)
            if (v != noop)
                t.repl[v] = step == 1 || step == 4 ? PB_REPL_PS : PB_REPL_ALLREDUCE;
        t.devices[0] = step == 2 ? 1 : 0; /* step 2: the pair in the other order */
        t.devices[1] = step == 2 ? 0 : 1;
        t.s.device_share = step == 3 ? share : NULL;
        test_result cached, fresh;
        test_result_init(&cached);
        if (ops->evaluate(prepared, &t.s, &cached.ev, &err) != PB_OK)
            fail_msg("step %d: %s", step, err.msg);
        assert_int_equal(test_run(sim, g, &tc.c, &t.s, &fresh, &err), PB_OK);
        test_same_result(&cached, &fresh, 7, 2);
        /* Example 2's schedule across machines: the AllReduce takes the unscaled model's
         * max(trunc(0.0434 * 128 + 368.2), trunc(0.2777 * 128 + 211.9)) = 373 µs, 103-476; upd
         * 476-496; the NoOp 496-499. */
        if (step == 0 || step == 5)
            assert_true(cached.ev.step_time_us == 499);
    }
    ops->release(prepared);
    graph_free(g);
}

/* ---------------------------------------------------------------- control barriers */

#define DIFF_OPS 40
#define DIFF_NODES (DIFF_OPS + 6)
#define DIFF_RECORDS 4096

/* Everything one evaluation returns, the tasks it reports in the order reported. */
typedef struct diff_result {
    pb_eval ev;
    double peak[4], busy[4], link[16];
    double start[DIFF_NODES], end[DIFF_NODES], idle_after[DIFF_NODES];
    int n;
    pb_task_record r[DIFF_RECORDS];
} diff_result;

static void diff_record(void *ctx, const pb_task_record *r)
{
    diff_result *d = ctx;
    assert_true(d->n < DIFF_RECORDS);
    pb_task_record *x = &d->r[d->n++];
    memset(x, 0, sizeof *x); /* the padding too: records are compared as bytes */
    x->struct_size = r->struct_size;
    x->kind = r->kind;
    x->op = r->op;
    x->replica = r->replica;
    x->what = r->what; /* the plugin's static names */
    x->src_device = r->src_device;
    x->dst_device = r->dst_device;
    x->start_us = r->start_us;
    x->end_us = r->end_us;
    x->bytes = r->bytes;
}

/* A REPLICATED strategy over groups {0, 1, 2, 3}, {0, 1}, {2}, {1, 3}. */
typedef struct diff_strategy {
    pb_strategy s;
    int group[DIFF_NODES], repl[DIFF_NODES];
} diff_strategy;

/* A seeded random training-like graph: ops over a random DAG, a third of them with outputs of 0
 * bytes (so that all their out-edges are control dependencies), then three gradient ->
 * optimizer pairs reading earlier ops (AllReduce instances, chained). */
static pb_graph *diff_graph(pb_rng *rng, int *n_out)
{
    static char names[DIFF_NODES][16];
    test_op ops[DIFF_NODES];
    int edges[3 * DIFF_OPS + 6][2], m = 0, n = 10 + (int)pb_rng_below(rng, DIFF_OPS - 10);
    for (int v = 0; v < n; v++) {
        snprintf(names[v], sizeof names[v], "op%d", v);
        int control = pb_rng_below(rng, 3) == 0;
        ops[v] = (test_op){names[v],
                           1 + (double)pb_rng_below(rng, 50),
                           control ? 0 : 64 * (double)(1 + pb_rng_below(rng, 100)),
                           (double)pb_rng_below(rng, 3) * 1000,
                           PB_ROLE_OP,
                           1 + (int)pb_rng_below(rng, 3)};
        for (int k = 0; v > 0 && k < 3; k++) {
            int u = (int)pb_rng_below(rng, (uint64_t)v), dup = 0;
            for (int e = 0; e < m; e++)
                dup |= edges[e][0] == u && edges[e][1] == v;
            if (!dup && pb_rng_below(rng, 2)) {
                edges[m][0] = u;
                edges[m++][1] = v;
            }
        }
    }
    for (int k = 0; k < 3; k++) {
        int gr = n++, ap = n++;
        snprintf(names[gr], sizeof names[gr], "grad%d", k);
        snprintf(names[ap], sizeof names[ap], "apply%d", k);
        ops[gr] = (test_op){names[gr], 5, 4096, 0, PB_ROLE_GRADIENT, PB_SPLIT_SUM};
        ops[ap] = (test_op){names[ap], 3, 0, 2048, PB_ROLE_APPLY, PB_SPLIT_NONE};
        edges[m][0] = (int)pb_rng_below(rng, (uint64_t)gr);
        edges[m++][1] = gr;
        edges[m][0] = gr;
        edges[m++][1] = ap;
    }
    *n_out = n;
    return test_graph_build(ops, n, edges, m);
}

/* Each op on a random group, with option none on the one-device group, else a random one of
 * allreduce, ps, duplicate. */
static void diff_strategy_init(pb_rng *rng, diff_strategy *t, int n)
{
    static const int start[5] = {0, 4, 6, 7, 9}, devices[9] = {0, 1, 2, 3, 0, 1, 2, 1, 3};
    static const int options[3] = {PB_REPL_ALLREDUCE, PB_REPL_PS, PB_REPL_DUPLICATE};
    for (int v = 0; v < n; v++) {
        t->group[v] = (int)pb_rng_below(rng, 4);
        t->repl[v] = t->group[v] == 2 ? PB_REPL_NONE : options[pb_rng_below(rng, 3)];
    }
    pb_strategy_placement(&t->s, n, t->group);
    t->s.kind = PB_STRATEGY_REPLICATED;
    t->s.replication = t->repl;
    t->s.n_device_groups = 4;
    t->s.group_start = start;
    t->s.group_devices = devices;
}

static int diff_run(const pb_simulator_ops *ops, void *instance, const pb_graph *g,
                    const pb_cluster *c, const pb_strategy *s, diff_result *r)
{
    void *prepared = NULL;
    pb_error err;
    assert_int_equal(ops->prepare(instance, g, c, &prepared, &err), PB_OK);
    memset(r, 0, sizeof *r);
    r->ev = test_eval_all(r->peak, r->busy, r->link, r->start, r->end, r->idle_after);
    r->ev.task_record = diff_record;
    r->ev.task_ctx = r;
    int rc = ops->evaluate(prepared, s, &r->ev, &err);
    if (rc != PB_OK)
        fail_msg("%s", err.msg);
    ops->release(prepared);
    return rc;
}

/* The barrier path (control_barriers = true, the default) against one dependency per pair, on
 * seeded random graphs and strategies: every output and every task record identical. */
static void test_barriers_differential(void **state)
{
    test_sim *sim = *state;
    const pb_simulator_ops *ops = sim->desc->ops;
    option_kv off = {"control_barriers", "false"};
    option_set set;
    pb_error err;
    assert_int_equal(options_resolve(sim->desc, &off, 1, "topology", &set, &err), PB_OK);
    pb_create_args args = options_create_args(&set, NULL, 1);
    void *pairs = NULL;
    assert_int_equal(ops->create(&args, &pairs, &err), PB_OK);
    test_cluster tc;
    int machine[4] = {0, 0, 1, 1};
    test_cluster_init(&tc, 4, machine, 100, 10, 2);
    static diff_result a, b;
    long long collectives = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        pb_rng rng;
        pb_rng_seed(&rng, seed);
        int n;
        pb_graph *g = diff_graph(&rng, &n);
        diff_strategy t;
        diff_strategy_init(&rng, &t, n);
        diff_run(ops, sim->instance, g, &tc.c, &t.s, &a);
        diff_run(ops, pairs, g, &tc.c, &t.s, &b);
        assert_true(a.ev.step_time_us == b.ev.step_time_us);
        assert_int_equal(a.ev.feasible, b.ev.feasible);
        assert_true(a.ev.n_events == b.ev.n_events);
        assert_memory_equal(a.peak, b.peak, sizeof a.peak);
        assert_memory_equal(a.busy, b.busy, sizeof a.busy);
        assert_memory_equal(a.link, b.link, sizeof a.link);
        assert_memory_equal(a.start, b.start, (size_t)n * sizeof(double));
        assert_memory_equal(a.end, b.end, (size_t)n * sizeof(double));
        assert_memory_equal(a.idle_after, b.idle_after, (size_t)n * sizeof(double));
        assert_int_equal(a.n, b.n);
        assert_memory_equal(a.r, b.r, (size_t)a.n * sizeof(pb_task_record));
        for (int i = 0; i < a.n; i++)
            collectives += a.r[i].kind == PB_TASK_COLLECTIVE;
        graph_free(g);
    }
    assert_true(collectives > 0); /* the draws reach AllReduce chains */
    ops->destroy(pairs);
    option_set_free(&set);
}

/* ---------------------------------------------------------------- bad input */

static void test_refused(void **state, const pb_graph *g, const pb_cluster *c, const pb_strategy *s,
                         const char *want)
{
    test_result r;
    pb_error err = {{0}};
    assert_int_equal(test_run(*state, g, c, s, &r, &err), PB_ERR);
    if (!strstr(err.msg, want))
        fail_msg("message '%s' lacks '%s'", err.msg, want);
}

static void test_bad_input(void **state)
{
    pb_graph *g = test_graph_file("tag_example.json");
    test_cluster tc;
    int machine[2] = {0, 0};
    test_cluster_init(&tc, 2, machine, 8000, 8000, 12);
    test_strategy t;
    test_tag_dp(&t, g, PB_REPL_ALLREDUCE);
    t.group[2] = 2;
    test_refused(state, g, &tc.c, &t.s, "node 2 is given device group 2 (have 2 groups)");
    t.group[2] = 0;
    t.repl[2] = PB_REPL_NONE;
    test_refused(state, g, &tc.c, &t.s, "node 2 is not replicated but its device group 0 has 2");
    graph_free(g);

    /* without annotations a batch split cannot be compiled */
    test_op ops[2] = {{"a", 1, 8, 0, 0, 0}, {"b", 1, 0, 0, 0, PB_SPLIT_NONE}};
    int edges[1][2] = {{0, 1}};
    g = test_graph_build(ops, 2, edges, 1);
    static const int lists[] = {0, 1, -1};
    test_strategy_init(&t, 2, lists, 1, PB_REPL_PS);
    test_refused(state, g, &tc.c, &t.s, "node 'a': device group 0 with option 'ps' splits");
    graph_free(g);

    /* an optimizer op needs its gradient */
    test_op opt[2] = {{"g", 1, 8, 0, 0, PB_SPLIT_SUM}, {"apply", 1, 0, 0, PB_ROLE_APPLY, 0}};
    g = test_graph_build(opt, 2, edges, 1);
    test_strategy_init(&t, 2, lists, 1, PB_REPL_ALLREDUCE);
    test_refused(state, g, &tc.c, &t.s,
                 "optimizer op 'apply' is replicated with option "
                 "'allreduce' but none of its inputs has role 'gradient'");
    graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tag_example1),     cmocka_unit_test(test_tag_example2),
        cmocka_unit_test(test_tag_example3),     cmocka_unit_test(test_tag_duplicate),
        cmocka_unit_test(test_tag_example4),     cmocka_unit_test(test_oom),
        cmocka_unit_test(test_chain_two_types),  cmocka_unit_test(test_matmul_allreduce),
        cmocka_unit_test(test_matmul_ps),        cmocka_unit_test(test_bottleneck),
        cmocka_unit_test(test_collective_order), cmocka_unit_test(test_split_two_ops),
        cmocka_unit_test(test_split_metis),      cmocka_unit_test(test_placeto_agreement),
        cmocka_unit_test(test_idle_after),       cmocka_unit_test(test_cache_changed_in_place),
        cmocka_unit_test(test_bad_input),        cmocka_unit_test(test_barriers_differential),
    };
    return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
