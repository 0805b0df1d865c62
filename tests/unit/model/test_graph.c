/* test_graph.c — graph builder, validation, CSR order, grouped graph, node-link round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/graph.h"
#include "data/nodelink.h"
#include "model/strategy.h"

static int add(graph_builder *b, const char *name, double cost, double out, const char *group)
{
    graph_node_attrs a = {0};
    a.cost_us = cost;
    a.n_ports = 1;
    a.port_bytes = &out;
    a.group = group;
    a.colocation = -1;
    pb_error err;
    int id = graph_add_node(b, name, &a, &err);
    assert_true(id >= 0);
    return id;
}

static void edge(graph_builder *b, int s, int d, int port)
{
    pb_error err;
    assert_true(graph_add_edge(b, s, d, port, &err) >= 0);
}

/* Successor lists keep edge insertion order; a repeated pair keeps its first position and the
 * last port (the Placeto reference's children dict). */
static void test_csr_order_and_parallel_edges(void **state)
{
    (void)state;
    graph_builder *b = graph_builder_new("t");
    int a = add(b, "a", 1, 10, NULL), c = add(b, "c", 1, 10, NULL), x = add(b, "x", 1, 10, NULL);
    edge(b, a, x, 0);
    edge(b, a, c, 0);
    edge(b, a, x, 2); /* same pair again: port 2 wins, position stays first */
    pb_graph *g;
    pb_error err;
    assert_int_equal(graph_build(b, &g, &err), PB_OK);
    assert_int_equal(g->n_edges, 2);
    assert_int_equal(g->succ_start[a + 1] - g->succ_start[a], 2);
    assert_int_equal(g->succ[g->succ_start[a]], x);
    assert_int_equal(g->succ[g->succ_start[a] + 1], c);
    assert_int_equal(g->edge_port[g->succ_edge[g->succ_start[a]]], 2);
    /* Port 2 of a was never given a size: ports are padded with zero bytes. */
    assert_int_equal(g->port_start[a + 1] - g->port_start[a], 3);
    assert_true(g->port_bytes[g->port_start[a] + 2] == 0.0);
    assert_true(g->out_bytes[a] == 10.0);
    assert_ptr_equal(g->grouped, g);
    graph_free(g);
}

static void test_rejects_bad_input(void **state)
{
    (void)state;
    pb_error err;
    graph_builder *b = graph_builder_new("t");
    add(b, "a", 1, 1, NULL);
    graph_node_attrs bad = {0};
    bad.colocation = -1;
    assert_true(graph_add_node(b, "a", &bad, &err) < 0);
    assert_non_null(strstr(err.msg, "duplicate node id 'a'"));
    bad.cost_us = NAN;
    assert_true(graph_add_node(b, "n", &bad, &err) < 0);
    assert_non_null(strstr(err.msg, "node 'n': cost"));
    bad.cost_us = -1;
    assert_true(graph_add_node(b, "n", &bad, &err) < 0);
    bad.cost_us = INFINITY;
    assert_true(graph_add_node(b, "n", &bad, &err) < 0);
    assert_true(graph_add_edge(b, 0, 0, 0, &err) < 0);
    assert_non_null(strstr(err.msg, "self loop"));
    graph_builder_free(b);

    b = graph_builder_new("cyc");
    int x = add(b, "x", 1, 1, NULL), y = add(b, "y", 1, 1, NULL), z = add(b, "z", 1, 1, NULL);
    edge(b, x, y, 0);
    edge(b, y, z, 0);
    edge(b, z, y, 0);
    pb_graph *g;
    assert_int_equal(graph_build(b, &g, &err), PB_ERR);
    assert_null(g);
    /* The node named lies on the cycle y <-> z. */
    assert_true(strstr(err.msg, "cycle through 'y'") || strstr(err.msg, "cycle through 'z'"));
}

/* Groups: first-appearance order, summed costs, crossing bytes once per producer port. */
static void test_grouped_graph(void **state)
{
    (void)state;
    graph_builder *b = graph_builder_new("grp");
    int p = add(b, "p", 3, 100, "B"); /* group B appears first */
    int q = add(b, "q", 4, 50, "A");
    int r = add(b, "r", 5, 0, "A");
    int s = add(b, "s", 6, 0, "C");
    edge(b, p, q, 0); /* B -> A carries p's 100 bytes ... */
    edge(b, p, r, 0); /* ... once, though two ops of A read it */
    edge(b, q, s, 0); /* A -> C: 50 */
    edge(b, p, s, 0); /* B -> C: 100 */
    pb_graph *g;
    pb_error err;
    assert_int_equal(graph_build(b, &g, &err), PB_OK);
    const pb_graph *gg = g->grouped;
    assert_int_equal(gg->n_nodes, 3);
    assert_string_equal(gg->node_name[0], "B");
    assert_string_equal(gg->node_name[1], "A");
    assert_string_equal(gg->node_name[2], "C");
    assert_true(gg->cost_us[1] == 9.0);
    assert_int_equal(g->group_of[r], 1);
    assert_int_equal(gg->n_edges, 3);
    double want[3][3] = {{0, 1, 100}, {1, 2, 50}, {0, 2, 100}};
    for (int e = 0; e < 3; e++) {
        assert_int_equal(gg->edge_src[e], (int)want[e][0]);
        assert_int_equal(gg->edge_dst[e], (int)want[e][1]);
        assert_true(gg->edge_bytes[e] == want[e][2]);
    }
    /* Expansion of a group placement to ops. */
    int gdev[3] = {1, 0, 2}, odev[4];
    pb_strategy gs, os;
    pb_strategy_placement(&gs, 3, gdev);
    pb_strategy_placement(&os, 4, odev);
    assert_int_equal(strategy_expand(g, &gs, &os, &err), PB_OK);
    assert_int_equal(odev[p], 1);
    assert_int_equal(odev[q], 0);
    assert_int_equal(odev[r], 0);
    assert_int_equal(odev[s], 2);
    assert_int_equal(graph_longest_path(g), 2);
    assert_int_equal(graph_longest_path(gg), 2);
    graph_free(g);
}

static void test_group_cycle_rejected(void **state)
{
    (void)state;
    graph_builder *b = graph_builder_new("gc");
    int a1 = add(b, "a1", 1, 1, "A"), b1 = add(b, "b1", 1, 1, "B"), a2 = add(b, "a2", 1, 1, "A");
    edge(b, a1, b1, 0);
    edge(b, b1, a2, 0); /* A -> B -> A */
    pb_graph *g;
    pb_error err;
    assert_int_equal(graph_build(b, &g, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "group mapping has a cycle"));
}

static void test_nodelink_round_trip(void **state)
{
    (void)state;
    const char *json =
        "{\"directed\": true, \"nodes\": ["
        "{\"id\": \"a\", \"cost\": 1.5, \"out_sizes\": [10, 20], \"mem\": 7, \"group\": \"g1\"},"
        "{\"id\": 3, \"cost\": 2, \"out_size\": 5, \"group\": \"g2\"}],"
        "\"edges\": [{\"source\": \"a\", \"target\": 3, \"port\": 1}]}";
    pb_graph *g, *h;
    pb_error err;
    assert_int_equal(nodelink_parse(json, "mem.json", &g, &err), PB_OK);
    assert_string_equal(g->node_name[1], "3");
    assert_int_equal(g->edge_port[0], 1);
    assert_true(g->edge_bytes[0] == 20.0);
    assert_true(g->out_bytes[0] == 30.0);
    char path[] = "/tmp/pb_test_graph_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(nodelink_write(path, g, &err), PB_OK);
    assert_int_equal(nodelink_read(path, &h, &err), PB_OK);
    unlink(path);
    assert_string_equal(g->checksum, h->checksum);
    assert_string_equal(g->grouped->checksum, h->grouped->checksum);
    graph_free(g);
    graph_free(h);
}

static void test_nodelink_errors(void **state)
{
    (void)state;
    pb_graph *g;
    pb_error err;
    struct {
        const char *json, *want;
    } cases[] = {
        {"{\"nodes\": [{\"id\": \"a\"}], \"links\": [{\"source\": \"a\", \"target\": \"b\"}]}",
         "f.json: link #0 'a' -> 'b' is dangling: no node 'b'"},
        {"{\"nodes\": [{\"id\": \"a\", \"cost\": -3}], \"links\": []}",
         "f.json: node 'a': field 'cost'"},
        {"{\"nodes\": [{\"id\": \"a\", \"out_sizes\": [1, -2]}], \"links\": []}",
         "node 'a': out_sizes[1]"},
        {"{\"nodes\": [{\"id\": \"a\"}, {\"id\": \"a\"}], \"links\": []}", "duplicate node id 'a'"},
        {"{\"nodes\": [{\"cost\": 1}], \"links\": []}", "node #0 has no string or integer 'id'"},
        {"{\"nodes\": [}", "f.json:1:"},
        {"{\"directed\": false, \"nodes\": [], \"links\": []}", "undirected"},
        {"{\"nodes\": [{\"id\": \"a\"}]}", "no 'links' key"},
        {"{\"nodes\": [{\"id\": \"a\", \"cost\": 1e308}], \"links\": []}", "above the bound"},
        {"{\"nodes\": [{\"id\": \"a\", \"out_sizes\": [1e300]}], \"links\": []}",
         "out_sizes[0] is 1e+300, above the bound"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(nodelink_parse(cases[i].json, "f.json", &g, &err), PB_ERR);
        assert_null(g);
        if (!strstr(err.msg, cases[i].want))
            fail_msg("case %zu: got '%s', want '%s'", i, err.msg, cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csr_order_and_parallel_edges),
        cmocka_unit_test(test_rejects_bad_input),
        cmocka_unit_test(test_grouped_graph),
        cmocka_unit_test(test_group_cycle_rejected),
        cmocka_unit_test(test_nodelink_round_trip),
        cmocka_unit_test(test_nodelink_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
