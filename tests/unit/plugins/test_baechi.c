/* test_baechi.c — Baechi's placers (plugins/shared/baechi) on graphs small enough to schedule by
 * hand: m-TOPO's memory-balanced cut, m-ETF's earliest start and its memory limit, the favourite
 * child the LP relaxation picks, and the m-SCT placement that follows from it. */
#include "baechi.h"
#include "model/graph.h"
#include "placebench.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

/* A node of the test graphs: cost, and the bytes of each of its output ports. */
typedef struct test_node {
    const char *name;
    double cost;
    int n_ports;
    double port[2];
} test_node;

/* Edges as (src, dst, port). */
static pb_graph *test_graph(const test_node *nodes, int n, const int (*edges)[3], int m)
{
    pb_error err;
    graph_builder *b = graph_builder_new("test");
    for (int i = 0; i < n; i++) {
        graph_node_attrs a = {0};
        a.cost_us = nodes[i].cost;
        a.n_ports = nodes[i].n_ports;
        a.port_bytes = nodes[i].port;
        a.colocation = -1;
        assert_int_equal(graph_add_node(b, nodes[i].name, &a, &err), i);
    }
    for (int i = 0; i < m; i++)
        assert_true(graph_add_edge(b, edges[i][0], edges[i][1], edges[i][2], &err) >= 0);
    pb_graph *g;
    assert_int_equal(graph_build(b, &g, &err), PB_OK);
    return g;
}

/* Two devices of memory `bytes` (0 = unlimited) on a bus of 1 byte/µs without overheads, so a
 * transfer of k bytes takes k µs and nodes run for exactly their cost. */
typedef struct test_cluster {
    pb_device_type type;
    int device_type[2], machine[2];
    pb_cluster c;
} test_cluster;

static void test_cluster_init(test_cluster *t, double bytes)
{
    t->type = (pb_device_type){.name = "T", .memory_bytes = bytes, .speed_vs_ref = 1};
    t->device_type[0] = t->device_type[1] = 0;
    t->machine[0] = t->machine[1] = 0;
    t->c = (pb_cluster){.struct_size = sizeof t->c,
                        .name = "test",
                        .n_devices = 2,
                        .n_types = 1,
                        .types = &t->type,
                        .device_type = t->device_type,
                        .device_machine = t->machine,
                        .n_machines = 1,
                        .transfer_speed = 1,
                        .type_size = sizeof(pb_device_type)};
}

static void expect_placement(const int *got, const int *want, int n)
{
    for (int v = 0; v < n; v++)
        if (got[v] != want[v])
            fail_msg("node %d on device %d, want %d", v, got[v], want[v]);
}

/* Chain A -> B -> C -> D, 100 bytes each: the limit is 400 / 2 + 100 = 300 bytes per device, so
 * device 0 takes A, B, C and device 1 takes D. */
static const test_node chain[4] = {
    {"A", 1, 1, {100}}, {"B", 1, 1, {100}}, {"C", 1, 1, {100}}, {"D", 1, 1, {100}}};
static const int chain_edges[3][3] = {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}};

static void test_topo_balances_memory(void **state)
{
    (void)state;
    pb_graph *g = test_graph(chain, 4, chain_edges, 3);
    test_cluster t;
    test_cluster_init(&t, 0);
    int device[4], want[4] = {0, 0, 0, 1};
    pb_error err;
    assert_int_equal(baechi_topo(g, &t.c, device, &err), PB_OK);
    expect_placement(device, want, 4);
    graph_free(g);
}

/* The same chain on devices of 250 bytes: device 0 is full after A and B. */
static void test_topo_respects_device_memory(void **state)
{
    (void)state;
    pb_graph *g = test_graph(chain, 4, chain_edges, 3);
    test_cluster t;
    test_cluster_init(&t, 250);
    int device[4], want[4] = {0, 0, 1, 1};
    pb_error err;
    assert_int_equal(baechi_topo(g, &t.c, device, &err), PB_OK);
    expect_placement(device, want, 4);
    /* 150 bytes per device cannot hold the four nodes. */
    test_cluster_init(&t, 150);
    assert_int_equal(baechi_topo(g, &t.c, device, &err), PB_ERR);
    graph_free(g);
}

/* Fork A(10) -> B(20) over port 0 (5 bytes), A -> C(20) over port 1 (50 bytes).
 * ETF: A on device 0 (0-10).  Then B and C both start at 10 on device 0 (on device 1 at 15 and
 * 60); B goes first by topological rank (10-30).  C then starts at 30 on device 0 and at 60 on
 * device 1: device 0.  Everything on device 0, makespan 50. */
static const test_node fork_nodes[3] = {
    {"A", 10, 2, {5, 50}}, {"B", 20, 0, {0}}, {"C", 20, 0, {0}}};
static const int fork_edges[2][3] = {{0, 1, 0}, {0, 2, 1}};

static void test_etf_earliest_start(void **state)
{
    (void)state;
    pb_graph *g = test_graph(fork_nodes, 3, fork_edges, 2);
    test_cluster t;
    test_cluster_init(&t, 0);
    int device[3], want[3] = {0, 0, 0};
    double makespan;
    pb_error err;
    assert_int_equal(baechi_schedule(g, &t.c, NULL, 1, device, &makespan, &err), PB_OK);
    expect_placement(device, want, 3);
    assert_true(makespan == 50);
    graph_free(g);
}

/* The fork on a slow device 0 (speed 0.1, a host CPU) and a fast device 1 (speed 1).  With
 * device_speed: A takes 100 on device 0 and 10 on device 1, so it finishes first on device 1
 * (0-10).  B then finishes at 15 + 200 on device 0 and at 10 + 20 = 30 on device 1; C at
 * 60 + 200 or 30: both pairs on device 1 end at 30, B goes first by rank (10-30), then C ends at
 * 50 on device 1 and at 260 on device 0.  Everything on device 1, makespan 50.  Without
 * device_speed the schedule is Baechi's (everything on device 0, as above), and identical
 * devices of speed 2 are planned as Baechi does too. */
static void test_etf_device_speed(void **state)
{
    (void)state;
    pb_graph *g = test_graph(fork_nodes, 3, fork_edges, 2);
    test_cluster t;
    test_cluster_init(&t, 0);
    pb_device_type types[2] = {t.type, t.type};
    types[0].speed_vs_ref = 0.1;
    t.c.types = types;
    t.c.n_types = 2;
    t.device_type[1] = 1;
    int device[3], fast[3] = {1, 1, 1}, first[3] = {0, 0, 0};
    double makespan;
    pb_error err;
    assert_int_equal(baechi_schedule(g, &t.c, NULL, 1, device, &makespan, &err), PB_OK);
    expect_placement(device, fast, 3);
    assert_true(makespan == 50);
    assert_int_equal(baechi_schedule(g, &t.c, NULL, 0, device, &makespan, &err), PB_OK);
    expect_placement(device, first, 3);
    assert_true(makespan == 50);
    types[0].speed_vs_ref = types[1].speed_vs_ref = 2;
    assert_int_equal(baechi_schedule(g, &t.c, NULL, 1, device, &makespan, &err), PB_OK);
    expect_placement(device, first, 3);
    assert_true(makespan == 50);
    graph_free(g);
}

/* Chain A(10, 5 bytes) -> B(10, 8 bytes) on devices of 10 bytes: B does not fit beside A, so it
 * starts on device 1 at 10 + 5 = 15 although device 0 is free at 10. */
static void test_etf_memory_limit(void **state)
{
    (void)state;
    const test_node nodes[2] = {{"A", 10, 1, {5}}, {"B", 10, 1, {8}}};
    const int edges[1][3] = {{0, 1, 0}};
    pb_graph *g = test_graph(nodes, 2, edges, 1);
    test_cluster t;
    test_cluster_init(&t, 10);
    int device[2], want_tight[2] = {0, 1}, want_free[2] = {0, 0};
    double makespan;
    pb_error err;
    assert_int_equal(baechi_schedule(g, &t.c, NULL, 1, device, &makespan, &err), PB_OK);
    expect_placement(device, want_tight, 2);
    assert_true(makespan == 25);
    test_cluster_init(&t, 0);
    assert_int_equal(baechi_schedule(g, &t.c, NULL, 1, device, &makespan, &err), PB_OK);
    expect_placement(device, want_free, 2);
    assert_true(makespan == 20);
    /* Devices of 4 bytes: A (5 bytes) fits nowhere. */
    test_cluster_init(&t, 4);
    assert_int_equal(baechi_schedule(g, &t.c, NULL, 1, device, &makespan, &err), PB_ERR);
    graph_free(g);
}

/* The fork's LP: minimise w = 30 + max(5 x_AB, 50 x_AC) with x_AB + x_AC >= 1, so
 * 5 x_AB = 50 x_AC: x_AB = 10/11, x_AC = 1/11, w = 30 + 50/11.  Only A -> C is below 0.5: C is
 * A's favourite child. */
static void test_sct_favorite_child(void **state)
{
    (void)state;
    pb_graph *g = test_graph(fork_nodes, 3, fork_edges, 2);
    test_cluster t;
    test_cluster_init(&t, 0);
    int favorite[3], want[3] = {2, -1, -1};
    double w;
    pb_error err;
    assert_int_equal(baechi_favorite_children(g, &t.c, favorite, &w, &err), PB_OK);
    expect_placement(favorite, want, 3);
    assert_true(fabs(w - (30 + 50.0 / 11)) < 1e-6);
    graph_free(g);
}

/* m-SCT on the fork: after A, device 0 waits for C (it starts there at 10, on device 1 at 60).
 * B would start at 10 there but is not urgent (its latest start, 15 on device 1, is after 10),
 * so C runs on device 0 (10-30) and B on device 1 (15-35): makespan 35 against ETF's 50. */
static void test_sct_keeps_favorite_child(void **state)
{
    (void)state;
    pb_graph *g = test_graph(fork_nodes, 3, fork_edges, 2);
    test_cluster t;
    test_cluster_init(&t, 0);
    int favorite[3], device[3], want[3] = {0, 1, 0};
    double makespan;
    pb_error err;
    assert_int_equal(baechi_favorite_children(g, &t.c, favorite, NULL, &err), PB_OK);
    assert_int_equal(baechi_schedule(g, &t.c, favorite, 1, device, &makespan, &err), PB_OK);
    expect_placement(device, want, 3);
    assert_true(makespan == 35);
    graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topo_balances_memory),
        cmocka_unit_test(test_topo_respects_device_memory),
        cmocka_unit_test(test_etf_earliest_start),
        cmocka_unit_test(test_etf_memory_limit),
        cmocka_unit_test(test_etf_device_speed),
        cmocka_unit_test(test_sct_favorite_child),
        cmocka_unit_test(test_sct_keeps_favorite_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
