/* test_strategy.c — pb_strategy_check on each strategy kind's documented layout, and
 * strategy_expand from groups to ops. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/graph.h"
#include "model/strategy.h"

#include <string.h>

/* Fails the test unless pb_strategy_check refuses s with a message containing `want`. */
static void test_refused(const pb_strategy *s, int n_nodes, const pb_cluster *c, const char *want)
{
    pb_error err = {{0}};
    assert_int_equal(pb_strategy_check(s, n_nodes, c, &err), PB_ERR);
    if (!strstr(err.msg, want))
        fail_msg("message '%s' lacks '%s'", err.msg, want);
}

static void test_placement(void **state)
{
    (void)state;
    pb_cluster c = {.n_devices = 3};
    int device[4] = {0, 2, 1, 2};
    pb_strategy s;
    pb_strategy_placement(&s, 4, device);
    pb_error err;
    assert_int_equal(pb_strategy_check(&s, 4, &c, &err), PB_OK);
    device[1] = 3;
    test_refused(&s, 4, &c, "node 1 placed on device 3 (have 3 devices)");
    device[1] = -1;
    test_refused(&s, 4, &c, "node 1 placed on device -1");
    device[1] = 0;
    test_refused(&s, 5, &c, "strategy has 4 entries for 5 nodes");
    s.struct_size = offsetof(pb_strategy, n_stages);
    test_refused(&s, 4, &c, "strategy of");
    s.struct_size = sizeof s;
    s.kind = 7;
    test_refused(&s, 4, &c, "unknown kind 7");
}

/* Groups {0}, {1, 2}, {0, 1, 2, 3} of 4 devices. */
static void test_replicated(void **state)
{
    (void)state;
    pb_cluster c = {.n_devices = 4};
    int start[4] = {0, 1, 3, 7}, devices[7] = {0, 1, 2, 0, 1, 2, 3};
    int device[3] = {0, 1, 2}, repl[3] = {PB_REPL_NONE, PB_REPL_ALLREDUCE, PB_REPL_SPLIT};
    pb_strategy s;
    pb_strategy_placement(&s, 3, device);
    s.kind = PB_STRATEGY_REPLICATED;
    test_refused(&s, 3, &c, "without device groups");
    s.replication = repl;
    s.n_device_groups = 3;
    s.group_start = start;
    s.group_devices = devices;
    pb_error err;
    assert_int_equal(pb_strategy_check(&s, 3, &c, &err), PB_OK);
    repl[1] = PB_REPL_NONE; /* not replicated on a group of two */
    test_refused(&s, 3, &c, "node 1 is not replicated but its device group 1 has 2 devices");
    repl[1] = 9;
    test_refused(&s, 3, &c, "node 1 has unknown replication option 9");
    repl[1] = PB_REPL_PS;
    device[2] = 3;
    test_refused(&s, 3, &c, "node 2 is given device group 3 (have 3 groups)");
    device[2] = 2;
    devices[5] = 1; /* group 2 = {0, 1, 1, 3} */
    test_refused(&s, 3, &c, "device group 2 names device 1 twice");
    devices[5] = 4;
    test_refused(&s, 3, &c, "device group 2 names device 4 (have 4 devices)");
    devices[5] = 2;
    start[1] = 0; /* group 0 empty */
    test_refused(&s, 3, &c, "device group 0 has no devices");
    start[1] = 1;
    start[0] = 1;
    test_refused(&s, 3, &c, "device group 0 starts at 1");
}

/* Types 0 0 1 1 0: three stages. */
static void test_provisioned(void **state)
{
    (void)state;
    pb_cluster c = {.n_devices = 1, .n_types = 2};
    int device[5] = {0, 0, 1, 1, 0}, count[5] = {2, 1, 6, 0, 0};
    pb_strategy s;
    pb_strategy_placement(&s, 5, device);
    s.kind = PB_STRATEGY_PROVISIONED;
    test_refused(&s, 5, &c, "without stage counts");
    s.stage_count = count;
    s.n_stages = 3;
    pb_error err;
    assert_int_equal(pb_strategy_check(&s, 5, &c, &err), PB_OK);
    s.n_stages = 2;
    test_refused(&s, 5, &c, "declares 2 stages, its nodes form 3");
    s.n_stages = 3;
    count[1] = 0;
    test_refused(&s, 5, &c, "stage 1 (from node 2) has 0 resources");
    count[1] = 1;
    device[4] = 2;
    test_refused(&s, 5, &c, "node 4 is given resource type 2 (have 2 types)");
}

/* Ops a, b, c, d in groups g1, g0, g1, g0: each op takes its group's device and replication. */
static void test_expand(void **state)
{
    (void)state;
    graph_builder *b = graph_builder_new("expand");
    graph_node_attrs a = {0};
    a.cost_us = 1;
    a.colocation = -1;
    const char *names[4] = {"a", "b", "c", "d"}, *group[4] = {"g1", "g0", "g1", "g0"};
    pb_error err;
    for (int v = 0; v < 4; v++) {
        a.group = group[v];
        assert_int_equal(graph_add_node(b, names[v], &a, &err), v);
    }
    assert_true(graph_add_edge(b, 0, 1, 0, &err) >= 0);
    assert_true(graph_add_edge(b, 2, 3, 0, &err) >= 0);
    pb_graph *g = NULL;
    if (graph_build(b, &g, &err) != PB_OK)
        fail_msg("graph_build: %s", err.msg);
    assert_non_null(g->grouped);
    assert_int_equal(g->grouped->n_nodes, 2);
    int gdev[2], grepl[2], odev[4], orepl[4];
    for (int k = 0; k < 2; k++) {
        /* the grouped node that holds op 1 ("b", group 0) gets device 5, the other device 7 */
        int holds_b = g->group_of[1] == k;
        gdev[k] = holds_b ? 5 : 7;
        grepl[k] = holds_b ? PB_REPL_PS : PB_REPL_DUPLICATE;
    }
    pb_strategy grouped, ops;
    pb_strategy_placement(&grouped, 2, gdev);
    grouped.replication = grepl;
    pb_strategy_placement(&ops, 4, odev);
    ops.replication = orepl;
    assert_int_equal(strategy_expand(g, &grouped, &ops, &err), PB_OK);
    for (int v = 0; v < 4; v++) {
        int want_b = g->group_of[v] == g->group_of[1];
        assert_int_equal(odev[v], want_b ? 5 : 7);
        assert_int_equal(orepl[v], want_b ? PB_REPL_PS : PB_REPL_DUPLICATE);
    }
    assert_int_equal(g->group_of[0], g->group_of[2]);
    pb_strategy_placement(&grouped, 3, gdev);
    assert_int_equal(strategy_expand(g, &grouped, &ops, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "strategy has 3 entries, grouped graph has 2 nodes"));
    graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placement),
        cmocka_unit_test(test_replicated),
        cmocka_unit_test(test_provisioned),
        cmocka_unit_test(test_expand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
