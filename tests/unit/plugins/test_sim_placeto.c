/* test_sim_placeto.c — the placeto simulator plugin against specs/placeto.md §1 and hand-checked
 * cases, plus reference-computed cases from tests/data/sim. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "config/cluster.h"
#include "plugin/options.h"
#include "model/graph.h"
#include "data/nodelink.h"

#include <dlfcn.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_MAX 16

/* The loaded plugin, shared by all tests of the group. */
typedef struct test_sim {
    void *so;
    const pb_simulator_ops *ops;
    void *instance;
} test_sim;

typedef struct test_node {
    const char *name;
    double cost;
    int n_ports;
    double ports[4];
} test_node;

typedef struct test_edge {
    const char *src, *dst;
    int port;
} test_edge;

/* What one evaluation returns, with room for TEST_MAX ops, output ports and devices. */
typedef struct test_result {
    double step;
    int feasible;
    long long events;
    double peak[TEST_MAX], busy[TEST_MAX], link[TEST_MAX];
    double start[TEST_MAX], end[TEST_MAX];
    double send[TEST_MAX], arrive[TEST_MAX]; /* per output port, in node order */
} test_result;

static int test_setup(void **state)
{
    const char *build = getenv("PB_BUILD");
    if (!build) {
        fprintf(stderr, "PB_BUILD is not set (run through ctest)\n");
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/simulator-placeto.so", build);
    test_sim *s = calloc(1, sizeof *s);
    s->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!s->so) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        free(s);
        return -1;
    }
    const pb_plugin_desc *d = dlsym(s->so, PB_DESCRIPTOR_SYMBOL_NAME);
    if (!d || d->kind != PB_KIND_SIMULATOR || strcmp(d->name, "placeto") != 0) {
        fprintf(stderr, "%s: no placeto simulator descriptor\n", path);
        return -1;
    }
    s->ops = d->ops;
    pb_create_args args = options_create_args(NULL, NULL, 1);
    pb_error err;
    if (s->ops->create(&args, &s->instance, &err) != PB_OK) {
        fprintf(stderr, "create: %s\n", err.msg);
        return -1;
    }
    *state = s;
    return 0;
}

static int test_teardown(void **state)
{
    test_sim *s = *state;
    s->ops->destroy(s->instance);
    dlclose(s->so);
    free(s);
    return 0;
}

/* Builds a graph with the nodes in the order given (the metagraph order) and the edges in the
 * order given (the order of the reference's input lists). */
static pb_graph *test_graph(const test_node *nodes, int n, const test_edge *edges, int m)
{
    graph_builder *b = graph_builder_new("test");
    pb_error err;
    for (int i = 0; i < n; i++) {
        graph_node_attrs a = {0};
        a.colocation = -1;
        a.cost_us = nodes[i].cost;
        a.n_ports = nodes[i].n_ports;
        a.port_bytes = nodes[i].ports;
        if (graph_add_node(b, nodes[i].name, &a, &err) != i)
            fail_msg("graph_add_node %s: %s", nodes[i].name, err.msg);
    }
    for (int e = 0; e < m; e++) {
        int s = graph_find_node(b, edges[e].src), d = graph_find_node(b, edges[e].dst);
        assert_true(s >= 0 && d >= 0);
        if (graph_add_edge(b, s, d, edges[e].port, &err) < 0)
            fail_msg("graph_add_edge: %s", err.msg);
    }
    pb_graph *g = NULL;
    if (graph_build(b, &g, &err) != PB_OK)
        fail_msg("graph_build: %s", err.msg);
    return g;
}

static int test_eval_on(test_sim *s, const pb_graph *g, const pb_cluster *c, const int *placement,
                        test_result *r, pb_error *err)
{
    void *prep = NULL;
    if (s->ops->prepare(s->instance, g, c, &prep, err) != PB_OK)
        return PB_ERR;
    memset(r, 0, sizeof *r);
    assert_true(g->n_nodes <= TEST_MAX && g->port_start[g->n_nodes] <= TEST_MAX);
    pb_strategy st;
    pb_strategy_placement(&st, g->n_nodes, (int *)placement);
    pb_eval ev = {.struct_size = sizeof ev,
                  .peak_mem_bytes = r->peak,
                  .busy_us = r->busy,
                  .link_busy_us = r->link,
                  .node_start_us = r->start,
                  .node_end_us = r->end,
                  .port_send_us = r->send,
                  .port_arrive_us = r->arrive};
    int rc = s->ops->evaluate(prep, &st, &ev, err);
    r->step = ev.step_time_us;
    r->feasible = ev.feasible;
    r->events = ev.n_events;
    s->ops->release(prep);
    return rc;
}

/* Evaluates a placement on the placeto-k80 preset with n_devices devices. */
static void test_eval(test_sim *s, const pb_graph *g, int n_devices, const int *placement,
                      test_result *r)
{
    pb_cluster *c = NULL;
    pb_error err;
    if (cluster_preset("placeto-k80", n_devices, &c, &err) != PB_OK)
        fail_msg("cluster_preset: %s", err.msg);
    if (test_eval_on(s, g, c, placement, r, &err) != PB_OK)
        fail_msg("evaluate: %s", err.msg);
    cluster_free(c);
}

/* §1.6: A (10 µs, 76000 B) feeds B (20 µs, 15200 B) and C (30 µs, 38000 B); both feed D (5 µs). */
static pb_graph *test_spec_graph(void)
{
    static const test_node nodes[] = {
        {"A", 10, 1, {76000}}, {"B", 20, 1, {15200}}, {"C", 30, 1, {38000}}, {"D", 5, 1, {0}}};
    static const test_edge edges[] = {{"A", "B", 0}, {"A", "C", 0}, {"B", "D", 0}, {"C", "D", 0}};
    return test_graph(nodes, 4, edges, 4);
}

enum { A, B, C, D };

static void test_spec_case1(void **state)
{
    pb_graph *g = test_spec_graph();
    test_result r;
    static const int pl[] = {0, 0, 1, 0};
    test_eval(*state, g, 2, pl, &r);
    /* The spec's table: bus1's trailing delta2 after C's transfer (50 + 5 + 25) sets run_time. */
    assert_true(r.step == 80.0);
    assert_true(r.start[A] == 0.0);
    assert_true(r.start[B] == 15.7);
    assert_true(r.start[C] == 20.0);
    assert_true(r.start[D] == 55.0);
    assert_true(r.end[D] == 60.0);
    assert_true(r.peak[0] == 91200.0);
    assert_true(r.peak[1] == 38000.0);
    assert_int_equal(r.feasible, 1);
    /* busy = sum of costs per device; each bus sent one transfer: 10+25 and 5+25. */
    assert_true(r.busy[0] == 35.0 && r.busy[1] == 30.0);
    assert_true(r.link[0] == 35.0 && r.link[1] == 30.0);
    /* Ports in node order: A 0, B 1, C 2, D 3.  bus0 sends A's port from 10 to 20; bus1 C's
     * from 50 to 55; B and D feed only their own device, so they are never sent. */
    assert_true(r.send[0] == 10.0 && r.arrive[0] == 20.0);
    assert_true(r.send[1] == -1.0 && r.arrive[1] == -1.0);
    assert_true(r.send[2] == 50.0 && r.arrive[2] == 55.0);
    assert_true(r.send[3] == -1.0 && r.arrive[3] == -1.0);
    /* The table's rows, one event each: run_dev GPU0 at 0; release (A,B) and run_bus bus0 at 10;
     * run_dev GPU0 at 15.7; release (A,C) and run_dev GPU1 at 20; release (B,D) at 35.7; idle
     * wake-ups at 41.4 and 45; run_bus bus1 at 50; release (C,D) and run_dev GPU0 at 55; idle
     * wake-ups at 55.7, 65.7 and 80: 15 events. */
    assert_int_equal(r.events, 15);
    graph_free(g);
}

static void test_spec_case2(void **state)
{
    pb_graph *g = test_spec_graph();
    test_result r;
    static const int pl[] = {0, 0, 0, 0};
    test_eval(*state, g, 2, pl, &r);
    assert_true(r.step == 87.80000000000001);
    /* B before C because ('A','B') < ('A','C'). */
    assert_true(r.start[B] == 15.7);
    assert_true(r.start[C] == 41.400000000000006);
    assert_true(r.end[C] == 71.4);
    assert_true(r.start[D] == 77.10000000000001);
    assert_true(r.end[D] == 82.10000000000001);
    assert_true(r.peak[0] == 129200.0);
    assert_true(r.peak[1] == 0.0);
    assert_true(r.link[0] == 0.0 && r.link[1] == 0.0);
    for (int k = 0; k < 4; k++)
        assert_true(r.send[k] == -1.0 && r.arrive[k] == -1.0);
    /* run_dev at 0 (A); releases (A,B), (A,C) at 10; run_dev at 15.7 (B); release (B,D) at 35.7;
     * run_dev at 41.4 (C); release (C,D) at 71.4; run_dev at 77.1 (D); idle wake-up at 87.8. */
    assert_int_equal(r.events, 9);
    graph_free(g);
}

static void test_spec_case3(void **state)
{
    pb_graph *g = test_spec_graph();
    test_result r;
    static const int pl[] = {0, 1, 1, 1};
    test_eval(*state, g, 2, pl, &r);
    assert_true(r.step == 92.10000000000001);
    /* One multicast transfer at 10 delivers A's output to B and C at 20. */
    assert_true(r.start[B] == 20.0);
    assert_true(r.end[B] == 40.0);
    assert_true(r.start[C] == 45.7);
    assert_true(r.end[C] == 75.7);
    assert_true(r.start[D] == 81.4);
    assert_true(r.end[D] == 86.4);
    assert_true(r.peak[0] == 76000.0);
    assert_true(r.peak[1] == 53200.0);
    assert_true(r.link[0] == 35.0 && r.link[1] == 0.0);
    assert_true(r.send[0] == 10.0 && r.arrive[0] == 20.0);
    assert_true(r.send[1] == -1.0 && r.send[2] == -1.0 && r.send[3] == -1.0);
    /* run_dev GPU0 at 0; run_bus bus0 at 10; idle GPU0 at 15.7; releases (A,B), (A,C) and
     * run_dev GPU1 at 20 (B); release (B,D) at 40; idle bus0 at 45; run_dev GPU1 at 45.7 (C);
     * release (C,D) at 75.7; run_dev GPU1 at 81.4 (D); idle GPU1 at 92.1. */
    assert_int_equal(r.events, 12);
    graph_free(g);
}

/* Fractional sizes take the simulator's general memory sweep (sorted like the reference's
 * tuples).  Case 1 with B of 15200.25 bytes: B's only child D is on its own device, so no
 * transfer changes; GPU0 holds A (76000, until 49) and B (from 15.7) at once: 91200.25. */
static void test_fractional_sizes(void **state)
{
    static const test_node nodes[] = {
        {"A", 10, 1, {76000}}, {"B", 20, 1, {15200.25}}, {"C", 30, 1, {38000}}, {"D", 5, 1, {0}}};
    static const test_edge edges[] = {{"A", "B", 0}, {"A", "C", 0}, {"B", "D", 0}, {"C", "D", 0}};
    pb_graph *g = test_graph(nodes, 4, edges, 4);
    test_result r;
    static const int pl[] = {0, 0, 1, 0};
    test_eval(*state, g, 2, pl, &r);
    assert_true(r.step == 80.0);
    assert_true(r.peak[0] == 91200.25);
    assert_true(r.peak[1] == 38000.0);
    graph_free(g);
}

/* Reusing one prepared handle: every evaluation starts from a clean state. */
static void test_repeated_evaluations(void **state)
{
    test_sim *s = *state;
    pb_graph *g = test_spec_graph();
    pb_cluster *c = NULL;
    pb_error err;
    assert_int_equal(cluster_preset("placeto-k80", 2, &c, &err), PB_OK);
    void *prep = NULL;
    assert_int_equal(s->ops->prepare(s->instance, g, c, &prep, &err), PB_OK);
    static const int pls[3][4] = {{0, 0, 1, 0}, {0, 0, 0, 0}, {0, 1, 1, 1}};
    static const double steps[3] = {80.0, 87.80000000000001, 92.10000000000001};
    static const long long events[3] = {15, 9, 12};
    /* Send times of C's port (sent only in case 1) and A's port (cases 1 and 3). */
    static const double send_c[3] = {50.0, -1.0, -1.0}, send_a[3] = {10.0, -1.0, 10.0};
    for (int round = 0; round < 7; round++) {
        int k = round % 3;
        double peak[2], send[4], arrive[4];
        pb_strategy st;
        pb_strategy_placement(&st, 4, (int *)pls[k]);
        pb_eval ev = {.struct_size = sizeof ev, .peak_mem_bytes = peak};
        if (round >= 3) { /* transfer times asked for in later rounds only */
            ev.port_send_us = send;
            ev.port_arrive_us = arrive;
        }
        assert_int_equal(s->ops->evaluate(prep, &st, &ev, &err), PB_OK);
        assert_true(ev.step_time_us == steps[k]);
        assert_int_equal(ev.n_events, events[k]);
        if (round >= 3)
            assert_true(send[0] == send_a[k] && send[2] == send_c[k] && send[1] == -1.0);
    }
    s->ops->release(prep);
    cluster_free(c);
    graph_free(g);
}

/*
 * Zero-cost ops: Z (0 µs, 100 B) feeds Y (10 µs, 50 B, no children), both on GPU0.
 * t=0 run_dev: Z runs 0-0; no delta1, so GPU0 wakes again at 0; release (Z,Y) at 0.
 * t=0 remove_dependency sorts before run_dev: Y is queued in time; t=0 run_dev: Y runs 0-10,
 * wake-up at 10+5.7 = 15.7, the last event.  Memory on GPU0: Z +100 at 0, freed at
 * max(0, int(0)+int(10)-1) = 9; Y +50 at 0 and, without children, freed at 0.  Sorted:
 * (0,+,50) (0,+,100) (0,-,-50) (9,-,-100): running sum 50, 150, 100, 0, so the peak is 150
 * (frees sorted first at time 0 would give 100).
 */
static void test_zero_cost(void **state)
{
    static const test_node nodes[] = {{"Z", 0, 1, {100}}, {"Y", 10, 1, {50}}};
    static const test_edge edges[] = {{"Z", "Y", 0}};
    pb_graph *g = test_graph(nodes, 2, edges, 1);
    test_result r;
    static const int pl[] = {0, 0};
    test_eval(*state, g, 1, pl, &r);
    assert_true(r.start[0] == 0.0 && r.end[0] == 0.0);
    assert_true(r.start[1] == 0.0);
    assert_true(r.step == 10.0 + 5.7);
    assert_true(r.peak[0] == 150.0);
    /* run_dev (Z), release (Z,Y), run_dev (Y) at 0 (Z's wake-up at 0 is still pending when Y is
     * released, so it runs Y), idle wake-up at 15.7. */
    assert_int_equal(r.events, 4);
    assert_true(r.send[0] == -1.0 && r.send[1] == -1.0);
    graph_free(g);
}

/*
 * A chain A (1 µs) -> Z (0 µs) -> C (3 µs) on one device: delta1 after A and C only.
 * A 0-1, wake 1+5.7; Z runs at 6.7 and ends there, releasing C at 6.7, which runs at once:
 * 6.7-(6.7+3), wake (6.7+3)+5.7.  Step = ((1+5.7)+3)+5.7, one delta1 fewer than ops.
 */
static void test_chain_one_device(void **state)
{
    static const test_node nodes[] = {{"A", 1, 0, {0}}, {"Z", 0, 0, {0}}, {"C", 3, 0, {0}}};
    static const test_edge edges[] = {{"A", "Z", 0}, {"Z", "C", 0}};
    pb_graph *g = test_graph(nodes, 3, edges, 2);
    test_result r;
    static const int pl[] = {0, 0, 0};
    test_eval(*state, g, 3, pl, &r);
    assert_true(r.start[1] == 1.0 + 5.7);
    assert_true(r.start[2] == 1.0 + 5.7);
    assert_true(r.end[2] == (1.0 + 5.7) + 3.0);
    assert_true(r.step == ((1.0 + 5.7) + 3.0) + 5.7);
    assert_true(r.busy[0] == 4.0 && r.busy[1] == 0.0 && r.busy[2] == 0.0);
    /* No output bytes anywhere: nothing allocated. */
    assert_true(r.peak[0] == 0.0);
    /* run_dev at 0 (A); release (A,Z) at 1; run_dev at 6.7 (Z); release (Z,C) and run_dev (C) at
     * 6.7; idle wake-up at 15.4. */
    assert_int_equal(r.events, 6);
    graph_free(g);
}

/* A graph without ops: no event pops, run_time stays at its initial 0, nothing is allocated. */
static void test_empty_graph(void **state)
{
    pb_graph *g = test_graph(NULL, 0, NULL, 0);
    test_result r;
    test_eval(*state, g, 2, NULL, &r);
    assert_true(r.step == 0.0);
    assert_true(r.peak[0] == 0.0 && r.peak[1] == 0.0);
    assert_int_equal(r.feasible, 1);
    assert_int_equal(r.events, 0);
    graph_free(g);
}

/*
 * Two output ports with remote children: P (10 µs, ports 7600 B and 15200 B, i.e. 1 and 2 µs on
 * the bus) on GPU0; X reads port 1 and Y port 0, both on GPU1, 5 µs each; P's children in order
 * X, Y, so the bus sends port 1 first.
 * t=10 bus0: port 1, X released at 10+2 = 12, bus free at 37; t=37: port 0, Y released at 38,
 * bus free at 63; t=63 idle wake-up (the last event).  X 12-17, Y 38-43 (wake 48.7).
 * Memory: P holds 22800 B on GPU0 from 0 to max(12+5-1, 38+5-1) = 42.
 */
static void test_multi_port(void **state)
{
    static const test_node nodes[] = {
        {"P", 10, 2, {7600, 15200}}, {"X", 5, 0, {0}}, {"Y", 5, 0, {0}}};
    static const test_edge edges[] = {{"P", "X", 1}, {"P", "Y", 0}};
    pb_graph *g = test_graph(nodes, 3, edges, 2);
    test_result r;
    static const int pl[] = {0, 1, 1};
    test_eval(*state, g, 2, pl, &r);
    assert_true(r.start[1] == 12.0);
    assert_true(r.start[2] == 38.0);
    assert_true(r.step == 63.0);
    assert_true(r.link[0] == (2.0 + 25.0) + (1.0 + 25.0));
    assert_true(r.peak[0] == 22800.0 && r.peak[1] == 0.0);
    assert_true(r.send[1] == 10.0 && r.arrive[1] == 12.0);
    assert_true(r.send[0] == 37.0 && r.arrive[0] == 38.0);
    /* run_dev GPU0 at 0; run_bus at 10; release (P,X) and run_dev GPU1 at 12; idle GPU0 at
     * 15.7; idle GPU1 at 22.7; run_bus at 37; release (P,Y) and run_dev GPU1 at 38; idle GPU1 at
     * 48.7; idle bus0 at 63. */
    assert_int_equal(r.events, 11);
    graph_free(g);
}

/*
 * A child reading two ports of one parent keeps one edge with the last port listed (§1.2), so
 * one transfer of port 0 (7600 B, 1 µs) is sent: X released at 10+1 = 11, bus free at 36.
 * X 11-16, wake 21.7; the step is the bus's 36.
 */
static void test_duplicate_edge_last_port(void **state)
{
    static const test_node nodes[] = {{"P", 10, 2, {7600, 15200}}, {"X", 5, 0, {0}}};
    static const test_edge edges[] = {{"P", "X", 1}, {"P", "X", 0}};
    pb_graph *g = test_graph(nodes, 2, edges, 2);
    test_result r;
    static const int pl[] = {0, 1};
    test_eval(*state, g, 2, pl, &r);
    assert_true(r.start[1] == 11.0);
    assert_true(r.step == 36.0);
    assert_true(r.link[0] == 26.0);
    graph_free(g);
}

/*
 * Multicast: P (10 µs, 76000 B = 10 µs on the bus) on GPU0 feeds X on GPU1 and Y on GPU2 through
 * one port: one transfer at 10 releases both at 20; bus0 free at 45.  X and Y run 20-25 (wake-ups
 * 30.7).  The step is the bus's 45; two transfers would end at 80.
 */
static void test_multicast(void **state)
{
    static const test_node nodes[] = {{"P", 10, 1, {76000}}, {"X", 5, 0, {0}}, {"Y", 5, 0, {0}}};
    static const test_edge edges[] = {{"P", "X", 0}, {"P", "Y", 0}};
    pb_graph *g = test_graph(nodes, 3, edges, 2);
    test_result r;
    static const int pl[] = {0, 1, 2};
    test_eval(*state, g, 3, pl, &r);
    assert_true(r.start[1] == 20.0 && r.start[2] == 20.0);
    assert_true(r.step == 45.0);
    assert_true(r.link[0] == 35.0);
    assert_true(r.send[0] == 10.0 && r.arrive[0] == 20.0);
    /* run_dev GPU0 at 0; run_bus at 10; idle GPU0 at 15.7; releases (P,X), (P,Y) and run_dev
     * GPU1, GPU2 at 20; idle GPU1, GPU2 at 30.7; idle bus0 at 45. */
    assert_int_equal(r.events, 10);
    graph_free(g);
}

/*
 * Ties on one device.  P (10 µs) feeds "z" (inserted first, 30 µs) and "a" (20 µs); all on GPU0.
 * Both releases happen at 10 and ('P','a') < ('P','z'), so "a" gets the smaller seq and runs
 * first: a at 10+5.7, z at ((10+5.7)+20)+5.7.  The sources "s2" and "s1" (inserted in that
 * order, 1 µs each, on GPU1) are queued in node order: s2 at 0, s1 at 1+5.7.
 */
static void test_tie_fifo(void **state)
{
    static const test_node nodes[] = {{"P", 10, 0, {0}},
                                      {"z", 30, 0, {0}},
                                      {"a", 20, 0, {0}},
                                      {"s2", 1, 0, {0}},
                                      {"s1", 1, 0, {0}}};
    static const test_edge edges[] = {{"P", "z", 0}, {"P", "a", 0}};
    pb_graph *g = test_graph(nodes, 5, edges, 2);
    test_result r;
    static const int pl[] = {0, 0, 0, 1, 1};
    test_eval(*state, g, 2, pl, &r);
    assert_true(r.start[2] == 10.0 + 5.7);
    assert_true(r.start[1] == ((10.0 + 5.7) + 20.0) + 5.7);
    assert_true(r.start[3] == 0.0);
    assert_true(r.start[4] == 1.0 + 5.7);
    graph_free(g);
}

/*
 * Device names compare as strings: with 11 devices '/device:GPU:10' < '/device:GPU:2'.
 * W (0 µs, one 0-byte port) on GPU2 and X (0 µs, one 0-byte port) on GPU10 are sources; their
 * children V and Y (10 µs each) are on GPU0.  At t=0: run_dev GPU10 first: X runs, its port goes
 * on bus10 at 0; run_bus bus10 (buses before devices) sends it in 0 µs, so (X,Y) is released at
 * 0 and Y queued on GPU0, which wakes at 0 and, '/device:GPU:0' being smallest, runs Y 0-10 before
 * GPU2 gets its turn.  Then run_dev GPU2: W runs, bus2 sends at 0, V is queued behind Y and runs
 * at 10+5.7.  Step = ((10+5.7)+10)+5.7.  With numeric device order V would run first.
 */
static void test_tie_device_names(void **state)
{
    static const test_node nodes[] = {
        {"W", 0, 1, {0}}, {"X", 0, 1, {0}}, {"V", 10, 0, {0}}, {"Y", 10, 0, {0}}};
    static const test_edge edges[] = {{"W", "V", 0}, {"X", "Y", 0}};
    pb_graph *g = test_graph(nodes, 4, edges, 2);
    test_result r;
    static const int pl[] = {2, 10, 0, 0};
    test_eval(*state, g, 11, pl, &r);
    assert_true(r.start[3] == 0.0);
    assert_true(r.start[2] == 10.0 + 5.7);
    assert_true(r.step == ((10.0 + 5.7) + 10.0) + 5.7);
    /* Control: with W on GPU1 and X on GPU2 of 3 devices, '/device:GPU:1' < '/device:GPU:2' runs
     * W first, so V (fed by W) runs at 0 and Y at 10+5.7. */
    static const int pl3[] = {1, 2, 0, 0};
    test_eval(*state, g, 3, pl3, &r);
    assert_true(r.start[2] == 0.0);
    assert_true(r.start[3] == 10.0 + 5.7);
    graph_free(g);
}

/*
 * The run_bus push-back branch.  A (10 µs, 76000 B) on GPU0 feeds C (1 µs) on GPU1 and B (30 µs,
 * 7600 B) on GPU0; B feeds D (1 µs) on GPU1.
 * t=10: bus0 sends A's output (10 µs): C released at 20, bus0 wakes at 45.  t=15.7: B runs
 * 15.7-45.7 and queues its port on bus0 with ready time 45.7.  t=45: bus0 wakes but B has not
 * finished: the item goes back and bus0 wakes at 45.7, sends 1 µs: D released at 45.7+1 and runs
 * then; bus0 free at (45.7+1)+25, the last event.  (Sending at 45 would start D at 46.)
 */
static void test_bus_push_back(void **state)
{
    static const test_node nodes[] = {
        {"A", 10, 1, {76000}}, {"B", 30, 1, {7600}}, {"C", 1, 0, {0}}, {"D", 1, 0, {0}}};
    static const test_edge edges[] = {{"A", "C", 0}, {"A", "B", 0}, {"B", "D", 0}};
    pb_graph *g = test_graph(nodes, 4, edges, 3);
    test_result r;
    static const int pl[] = {0, 0, 1, 1};
    test_eval(*state, g, 2, pl, &r);
    double b_end = (10.0 + 5.7) + 30.0;
    assert_true(r.start[2] == 20.0);
    assert_true(r.end[1] == b_end);
    assert_true(r.start[3] == b_end + 1.0);
    assert_true(r.step == (b_end + 1.0) + 25.0);
    assert_true(r.link[0] == (10.0 + 25.0) + (1.0 + 25.0));
    assert_true(r.send[0] == 10.0 && r.arrive[0] == 20.0);
    assert_true(r.send[1] == b_end && r.arrive[1] == b_end + 1.0);
    /* run_dev GPU0 at 0; release (A,B) and run_bus at 10; run_dev GPU0 at 15.7 (B); release
     * (A,C) and run_dev GPU1 at 20; idle GPU1 at 26.7; bus0 at 45 (pushed back); bus0 at 45.7;
     * release (B,D) and run_dev GPU1 at 46.7; idle GPU0 at 51.4, GPU1 at 53.4, bus0 at 71.7. */
    assert_int_equal(r.events, 14);
    graph_free(g);
}

/*
 * A bus that goes idle and is used again.  A (10 µs, 7600 B = 1 µs) on GPU0 feeds X (1 µs) on
 * GPU1 and B (20 µs) on GPU0; B feeds C (5 µs, 15200 B = 2 µs) on GPU0, which feeds Y (1 µs) on
 * GPU1.  bus0 sends A's port 10-11 and rests until 36, before C starts at
 * ((10+5.7)+20)+5.7 = 41.4: its idle wake-up at 36 pops, and C's port goes out when C ends.
 * Events: run_dev GPU0 at 0; release (A,B) and run_bus at 10; release (A,X) and run_dev GPU1 at
 * 11 (X); run_dev GPU0 at 15.7 (B); idle GPU1 at 17.7; release (B,C) at 35.7; idle bus0 at 36;
 * run_dev GPU0 at 41.4 (C); run_bus at 46.4; release (C,Y) and run_dev GPU1 at 48.4 (Y); idle
 * GPU0 at 52.1, GPU1 at 55.1 and bus0 at 73.4: 16.
 */
static void test_bus_idle_then_reused(void **state)
{
    static const test_node nodes[] = {{"A", 10, 1, {7600}},
                                      {"X", 1, 0, {0}},
                                      {"B", 20, 1, {0}},
                                      {"C", 5, 1, {15200}},
                                      {"Y", 1, 0, {0}}};
    static const test_edge edges[] = {{"A", "X", 0}, {"A", "B", 0}, {"B", "C", 0}, {"C", "Y", 0}};
    pb_graph *g = test_graph(nodes, 5, edges, 4);
    test_result r;
    static const int pl[] = {0, 1, 0, 0, 1};
    test_eval(*state, g, 2, pl, &r);
    double c_start = ((10.0 + 5.7) + 20.0) + 5.7, c_end = c_start + 5.0;
    assert_true(r.start[3] == c_start);
    assert_true(r.send[0] == 10.0 && r.arrive[0] == 11.0);
    assert_true(r.send[1] == -1.0 && r.arrive[1] == -1.0);
    assert_true(r.send[2] == c_end && r.arrive[2] == c_end + 2.0);
    assert_true(r.start[4] == c_end + 2.0);
    assert_true(r.step == (c_end + 2.0) + 25.0);
    assert_true(r.link[0] == (1.0 + 25.0) + (2.0 + 25.0));
    assert_int_equal(r.events, 16);
    graph_free(g);
}

/*
 * Idle wake-ups at the current time.  All ops cost 0 and all ports hold 0 bytes, so everything
 * happens at t = 0 and only the buses' delta2 passes time.
 * (a) W on GPU1, X on GPU2 feeds Y on GPU1.  GPU1 runs W and its wake-up (0, GPU1) pops idle
 * before (0, GPU2); GPU2 runs X, bus2 sends at 0, (X,Y) is released at 0 and GPU1 is woken by a
 * new event.  Events: run_dev GPU1, idle GPU1, run_dev GPU2, run_bus bus2, release (X,Y),
 * run_dev GPU1 (Y), idle GPU1, idle GPU2, all at 0; idle bus2 at 25: 9.
 * (b) V on GPU2 feeds X on GPU1, which feeds Y on GPU2.  GPU2 runs V; bus2 and the release (V,X)
 * come before GPU2's wake-up (0, GPU2), and so do GPU1 running X, bus1 and the release (X,Y): Y is
 * queued while that wake-up is still pending, and it runs Y.  Events: run_dev GPU2, run_bus
 * bus2, release (V,X), run_dev GPU1, run_bus bus1, release (X,Y), idle GPU1, run_dev GPU2 (Y),
 * idle GPU2, all at 0; idle bus1 and bus2 at 25: 11.
 */
static void test_events_wake_up_ties(void **state)
{
    static const test_node nodes_a[] = {{"W", 0, 0, {0}}, {"X", 0, 1, {0}}, {"Y", 0, 0, {0}}};
    static const test_edge edges_a[] = {{"X", "Y", 0}};
    pb_graph *g = test_graph(nodes_a, 3, edges_a, 1);
    test_result r;
    static const int pl_a[] = {1, 2, 1};
    test_eval(*state, g, 3, pl_a, &r);
    assert_true(r.start[2] == 0.0 && r.step == 25.0);
    assert_true(r.send[0] == 0.0 && r.arrive[0] == 0.0);
    assert_int_equal(r.events, 9);
    graph_free(g);

    static const test_node nodes_b[] = {{"V", 0, 1, {0}}, {"X", 0, 1, {0}}, {"Y", 0, 0, {0}}};
    static const test_edge edges_b[] = {{"V", "X", 0}, {"X", "Y", 0}};
    g = test_graph(nodes_b, 3, edges_b, 2);
    static const int pl_b[] = {2, 1, 2};
    test_eval(*state, g, 3, pl_b, &r);
    assert_true(r.start[2] == 0.0 && r.step == 25.0);
    assert_true(r.send[0] == 0.0 && r.send[1] == 0.0);
    assert_int_equal(r.events, 11);
    graph_free(g);
}

/* Feasibility: case 1 on devices of 90000 bytes: GPU0 peaks at 91200, so it runs out of memory;
 * a memory of 0 means unlimited. */
static void test_feasible(void **state)
{
    pb_graph *g = test_spec_graph();
    pb_cluster *c = NULL;
    pb_error err;
    assert_int_equal(cluster_preset("placeto-k80", 2, &c, &err), PB_OK);
    pb_device_type small = c->types[0];
    small.memory_bytes = 90000;
    pb_cluster copy = *c;
    copy.types = &small;
    static const int pl[] = {0, 0, 1, 0};
    test_result r;
    assert_int_equal(test_eval_on(*state, g, &copy, pl, &r, &err), PB_OK);
    assert_int_equal(r.feasible, 0);
    assert_true(r.step == 80.0);
    small.memory_bytes = 0;
    assert_int_equal(test_eval_on(*state, g, &copy, pl, &r, &err), PB_OK);
    assert_int_equal(r.feasible, 1);
    cluster_free(c);
    graph_free(g);
}

/* Parameters come from the cluster: delta1 3, delta2 10, 1000 B/µs, init offset 2.  Case 1:
 * A 2-12 (wake 15); bus0 sends 76 µs from 12: C released at 88; B 15-35; C runs 88-118 and its
 * 38 µs transfer releases D at 156 (bus1 free at 166); D 156-161 (wake 164).  Step 166. */
static void test_cluster_parameters(void **state)
{
    pb_graph *g = test_spec_graph();
    pb_cluster *c = NULL;
    pb_error err;
    assert_int_equal(cluster_preset("placeto-k80", 2, &c, &err), PB_OK);
    pb_cluster copy = *c;
    copy.delta1_us = 3;
    copy.delta2_us = 10;
    copy.transfer_speed = 1000;
    copy.init_offset_us = 2;
    static const int pl[] = {0, 0, 1, 0};
    test_result r;
    assert_int_equal(test_eval_on(*state, g, &copy, pl, &r, &err), PB_OK);
    assert_true(r.start[A] == 2.0 && r.start[B] == 15.0 && r.start[C] == 88.0);
    assert_true(r.start[D] == 156.0);
    assert_true(r.step == 166.0);
    cluster_free(c);
    graph_free(g);
}

static void test_errors(void **state)
{
    test_sim *s = *state;
    pb_graph *g = test_spec_graph();
    pb_cluster *c = NULL;
    pb_error err;
    assert_int_equal(cluster_preset("placeto-k80", 2, &c, &err), PB_OK);
    void *prep = NULL;
    assert_int_equal(s->ops->prepare(s->instance, g, c, &prep, &err), PB_OK);
    double peak[2];
    pb_eval ev = {.struct_size = sizeof ev, .peak_mem_bytes = peak};
    pb_strategy st;
    int bad[] = {0, 0, 2, 0};
    pb_strategy_placement(&st, 4, bad);
    assert_int_equal(s->ops->evaluate(prep, &st, &ev, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "'C'"));
    int negative[] = {0, -1, 0, 0};
    pb_strategy_placement(&st, 4, negative);
    assert_int_equal(s->ops->evaluate(prep, &st, &ev, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "'B'"));
    int ok[] = {0, 0, 0, 0};
    pb_strategy_placement(&st, 3, ok);
    assert_int_equal(s->ops->evaluate(prep, &st, &ev, &err), PB_ERR);
    /* A failed evaluation leaves the handle usable. */
    pb_strategy_placement(&st, 4, ok);
    assert_int_equal(s->ops->evaluate(prep, &st, &ev, &err), PB_OK);
    assert_true(ev.step_time_us == 87.80000000000001);
    s->ops->release(prep);
    cluster_free(c);
    graph_free(g);
}

/* Reads the placement and expected results of one reference case (see tests/data/sim/README). */
static void test_reference_case(test_sim *s, const char *dir, const char *name)
{
    char path[4096];
    pb_error err;
    snprintf(path, sizeof path, "%s/sim/%s.graph.json", dir, name);
    pb_graph *g = NULL;
    if (nodelink_read(path, &g, &err) != PB_OK)
        fail_msg("%s", err.msg);
    snprintf(path, sizeof path, "%s/sim/%s.expect.json", dir, name);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        fail_msg("%s:%d: %s", path, je.line, je.text);
    int nd = (int)json_integer_value(json_object_get(root, "devices"));
    json_t *placement = json_object_get(root, "placement");
    int *pl = calloc((size_t)g->n_nodes, sizeof(int));
    for (int v = 0; v < g->n_nodes; v++) {
        json_t *d = json_object_get(placement, g->node_name[v]);
        if (!json_is_integer(d))
            fail_msg("%s: no device for '%s'", path, g->node_name[v]);
        pl[v] = (int)json_integer_value(d);
    }
    pb_cluster *c = NULL;
    assert_int_equal(cluster_preset("placeto-k80", nd, &c, &err), PB_OK);
    void *prep = NULL;
    if (s->ops->prepare(s->instance, g, c, &prep, &err) != PB_OK)
        fail_msg("%s: %s", name, err.msg);
    double *peak = calloc((size_t)nd, sizeof(double));
    double *start = calloc((size_t)g->n_nodes, sizeof(double));
    pb_strategy st;
    pb_strategy_placement(&st, g->n_nodes, pl);
    pb_eval ev = {.struct_size = sizeof ev, .peak_mem_bytes = peak, .node_start_us = start};
    if (s->ops->evaluate(prep, &st, &ev, &err) != PB_OK)
        fail_msg("%s: %s", name, err.msg);
    double want = json_number_value(json_object_get(root, "step_time_us"));
    if (ev.step_time_us != want)
        fail_msg("%s: step %.17g, reference %.17g", name, ev.step_time_us, want);
    json_t *peaks = json_object_get(root, "peak_memory_bytes");
    for (int d = 0; d < nd; d++)
        if (peak[d] != json_number_value(json_array_get(peaks, (size_t)d)))
            fail_msg("%s: peak[%d] %.17g, reference %.17g", name, d, peak[d],
                     json_number_value(json_array_get(peaks, (size_t)d)));
    long long want_events = (long long)json_integer_value(json_object_get(root, "n_events"));
    if (ev.n_events != want_events)
        fail_msg("%s: %lld events, reference %lld", name, ev.n_events, want_events);
    json_t *starts = json_object_get(root, "start_us");
    for (int v = 0; v < g->n_nodes; v++) {
        double ref = json_number_value(json_object_get(starts, g->node_name[v]));
        if (start[v] != ref)
            fail_msg("%s: start of '%s' %.17g, reference %.17g", name, g->node_name[v], start[v],
                     ref);
    }
    s->ops->release(prep);
    cluster_free(c);
    graph_free(g);
    json_decref(root);
    free(pl);
    free(peak);
    free(start);
}

/* Random graphs (zero costs, several ports, duplicate edges, control inputs, up to 11 devices,
 * integer and fractional sizes) whose results were computed by the reference simulator itself. */
static void test_reference_cases(void **state)
{
    const char *dir = getenv("PB_TESTDATA");
    if (!dir)
        fail_msg("PB_TESTDATA is not set (run through ctest)");
    char path[4096];
    snprintf(path, sizeof path, "%s/sim/cases.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!*line || *line == '#')
            continue;
        test_reference_case(*state, dir, line);
        n++;
    }
    fclose(f);
    assert_true(n > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_case1),
        cmocka_unit_test(test_spec_case2),
        cmocka_unit_test(test_spec_case3),
        cmocka_unit_test(test_fractional_sizes),
        cmocka_unit_test(test_repeated_evaluations),
        cmocka_unit_test(test_zero_cost),
        cmocka_unit_test(test_chain_one_device),
        cmocka_unit_test(test_empty_graph),
        cmocka_unit_test(test_multi_port),
        cmocka_unit_test(test_duplicate_edge_last_port),
        cmocka_unit_test(test_multicast),
        cmocka_unit_test(test_tie_fifo),
        cmocka_unit_test(test_tie_device_names),
        cmocka_unit_test(test_bus_push_back),
        cmocka_unit_test(test_bus_idle_then_reused),
        cmocka_unit_test(test_events_wake_up_ties),
        cmocka_unit_test(test_feasible),
        cmocka_unit_test(test_cluster_parameters),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_reference_cases),
    };
    return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
