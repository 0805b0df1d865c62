/* test_traverse.c — traversal orders against the spec's test vectors (specs/placeto.md §5.8). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/graph.h"
#include "model/traverse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct test_edge {
    const char *src, *dst;
} test_edge;

/* Builds a graph with nodes inserted in the order given and edges added in the order given. */
static pb_graph *test_build(const char *const *names, int n, const test_edge *edges, int m)
{
    graph_builder *b = graph_builder_new("test");
    graph_node_attrs a = {0};
    a.colocation = -1;
    pb_error err;
    for (int i = 0; i < n; i++)
        assert_int_equal(graph_add_node(b, names[i], &a, &err), i);
    for (int e = 0; e < m; e++) {
        int s = graph_find_node(b, edges[e].src), d = graph_find_node(b, edges[e].dst);
        assert_true(s >= 0 && d >= 0);
        assert_true(graph_add_edge(b, s, d, 0, &err) >= 0);
    }
    pb_graph *g = NULL;
    if (graph_build(b, &g, &err) != PB_OK)
        fail_msg("graph_build: %s", err.msg);
    return g;
}

static void test_assert_names(const pb_graph *g, const int *order, const char *const *expected,
                              const char *what)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (strcmp(g->node_name[order[i]], expected[i]) != 0)
            fail_msg("%s: position %d is '%s', expected '%s'", what, i, g->node_name[order[i]],
                     expected[i]);
}

static int test_is_permutation(const int *order, int n)
{
    char *seen = calloc((size_t)n + 1, 1);
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        ok = order[i] >= 0 && order[i] < n && !seen[order[i]];
        if (ok)
            seen[order[i]] = 1;
    }
    free(seen);
    return ok;
}

/* §5.8: nodes inserted n3, n1, n0, n2, n4, n5; edges n0→n1, n0→n2, n1→n3, n2→n3, n3→n4, n5→n2. */
static pb_graph *test_vector_graph(void)
{
    static const char *const names[] = {"n3", "n1", "n0", "n2", "n4", "n5"};
    static const test_edge edges[] = {{"n0", "n1"}, {"n0", "n2"}, {"n1", "n3"},
                                      {"n2", "n3"}, {"n3", "n4"}, {"n5", "n2"}};
    return test_build(names, 6, edges, 6);
}

static void test_spec_vector(void **state)
{
    (void)state;
    static const struct {
        const char *order;
        const char *expected[6];
    } table[] = {
        {"topo", {"n5", "n0", "n2", "n1", "n3", "n4"}},
        {"reversed-topo", {"n4", "n3", "n1", "n2", "n0", "n5"}},
        {"lexico", {"n0", "n1", "n2", "n3", "n4", "n5"}},
        {"lexico-topo", {"n0", "n1", "n5", "n2", "n3", "n4"}},
        {"dfs-preorder", {"n3", "n4", "n1", "n0", "n2", "n5"}},
        {"dfs-postorder", {"n4", "n3", "n1", "n2", "n0", "n5"}},
        {"bfs", {"n0", "n1", "n2", "n3", "n4", "n5"}},
    };
    pb_graph *g = test_vector_graph();
    for (size_t t = 0; t < sizeof table / sizeof table[0]; t++) {
        int order[6];
        pb_error err;
        if (traverse_by_name(table[t].order, g, 0, order, &err) != PB_OK)
            fail_msg("%s: %s", table[t].order, err.msg);
        test_assert_names(g, order, table[t].expected, table[t].order);
    }
    graph_free(g);
}

/* The direct functions agree with the lookup (a wrong row in the lookup table would not). */
static void test_direct_functions(void **state)
{
    (void)state;
    pb_graph *g = test_vector_graph();
    int a[6], b[6];
    pb_error err;
    static const char *const topo[] = {"n5", "n0", "n2", "n1", "n3", "n4"};
    static const char *const pre[] = {"n3", "n4", "n1", "n0", "n2", "n5"};
    static const char *const post[] = {"n4", "n3", "n1", "n2", "n0", "n5"};
    static const char *const lt[] = {"n0", "n1", "n5", "n2", "n3", "n4"};
    assert_int_equal(traverse_topo(g, a, &err), PB_OK);
    test_assert_names(g, a, topo, "traverse_topo");
    assert_int_equal(traverse_dfs_preorder(g, a, &err), PB_OK);
    test_assert_names(g, a, pre, "traverse_dfs_preorder");
    assert_int_equal(traverse_dfs_postorder(g, a, &err), PB_OK);
    test_assert_names(g, a, post, "traverse_dfs_postorder");
    assert_int_equal(traverse_lexico_topo(g, a, &err), PB_OK);
    test_assert_names(g, a, lt, "traverse_lexico_topo");
    assert_int_equal(traverse_random(g, 7, a, &err), PB_OK);
    assert_int_equal(traverse_by_name("random", g, 7, b, &err), PB_OK);
    assert_memory_equal(a, b, sizeof a);
    graph_free(g);
}

/* §1.6 / §5.8: insertion A, B, C, D; edges A→B, A→C, B→D, C→D; the LIFO stack gives A, C, B, D. */
static void test_topo_abcd(void **state)
{
    (void)state;
    static const char *const names[] = {"A", "B", "C", "D"};
    static const test_edge edges[] = {{"A", "B"}, {"A", "C"}, {"B", "D"}, {"C", "D"}};
    static const char *const expected[] = {"A", "C", "B", "D"};
    static const char *const reversed[] = {"D", "B", "C", "A"};
    pb_graph *g = test_build(names, 4, edges, 4);
    int order[4];
    pb_error err;
    assert_int_equal(traverse_topo(g, order, &err), PB_OK);
    test_assert_names(g, order, expected, "topo");
    assert_int_equal(traverse_reversed_topo(g, order, &err), PB_OK);
    test_assert_names(g, order, reversed, "reversed-topo");
    graph_free(g);
}

/* Byte order, as Python sorts str: '/' < digits < upper case < '_' < lower case. */
static void test_lexico_byte_order(void **state)
{
    (void)state;
    static const char *const names[] = {"b", "_x", "Z", "a/b", "9", "a0", "/"};
    static const char *const expected[] = {"/", "9", "Z", "_x", "a/b", "a0", "b"};
    pb_graph *g = test_build(names, 7, NULL, 0);
    int order[7];
    pb_error err;
    assert_int_equal(traverse_lexico(g, order, &err), PB_OK);
    test_assert_names(g, order, expected, "lexico");
    graph_free(g);
}

/* A random DAG: n nodes with random names, inserted in an order unrelated to the hidden
 * topological rank, edges only from lower to higher rank, added in random order. */
static pb_graph *test_random_dag(int n, int m, unsigned long long seed)
{
    pb_rng rng;
    pb_rng_seed(&rng, seed);
    int *rank = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        rank[i] = i;
    pb_rng_shuffle(&rng, rank, n);
    graph_builder *b = graph_builder_new("random-dag");
    graph_node_attrs a = {0};
    a.colocation = -1;
    pb_error err;
    static const char alphabet[] = "/0123456789ABCZ_abcxyz";
    for (int i = 0; i < n; i++) {
        char name[32];
        int len = 1 + (int)pb_rng_below(&rng, 6);
        for (int k = 0; k < len; k++)
            name[k] = alphabet[pb_rng_below(&rng, sizeof alphabet - 1)];
        snprintf(name + len, sizeof name - (size_t)len, "#%d", i);
        assert_int_equal(graph_add_node(b, name, &a, &err), i);
    }
    for (int e = 0; e < m; e++) {
        int s = (int)pb_rng_below(&rng, (uint64_t)n), d = (int)pb_rng_below(&rng, (uint64_t)n);
        if (s == d)
            continue;
        if (rank[s] > rank[d]) {
            int t = s;
            s = d;
            d = t;
        }
        assert_true(graph_add_edge(b, s, d, 0, &err) >= 0);
    }
    free(rank);
    pb_graph *g = NULL;
    if (graph_build(b, &g, &err) != PB_OK)
        fail_msg("graph_build: %s", err.msg);
    return g;
}

static void test_position(const int *order, int n, int *pos)
{
    for (int i = 0; i < n; i++)
        pos[order[i]] = i;
}

static void test_assert_topological(const pb_graph *g, const int *pos, const char *what)
{
    for (int e = 0; e < g->n_edges; e++)
        if (pos[g->edge_src[e]] >= pos[g->edge_dst[e]])
            fail_msg("%s: edge '%s' -> '%s' goes backwards", what, g->node_name[g->edge_src[e]],
                     g->node_name[g->edge_dst[e]]);
}

/* Every node that is not a source comes after at least one of its predecessors (true of any
 * walk that only discovers nodes through edges: bfs, and dfs-preorder for non-roots). */
static int test_after_some_pred(const pb_graph *g, const int *pos, int v)
{
    for (int i = g->pred_start[v]; i < g->pred_start[v + 1]; i++)
        if (pos[g->pred[i]] < pos[v])
            return 1;
    return 0;
}

/* The spec's bfs taken literally: a fresh BFS per source, concatenated, repeats dropped. */
static void test_bfs_literal(const pb_graph *g, int *order)
{
    int n = g->n_nodes, count = 0;
    char *emitted = calloc((size_t)n, 1), *visited = malloc((size_t)n);
    int *queue = malloc((size_t)n * sizeof(int));
    const char *const *names = g->node_name;
    for (int pass = 0; pass < n; pass++) {
        /* Sources in name order: pick the smallest source name greater than the last one. */
        int s = -1;
        for (int v = 0; v < n; v++)
            if (g->pred_start[v + 1] == g->pred_start[v] && !emitted[v] &&
                (s < 0 || strcmp(names[v], names[s]) < 0))
                s = v;
        if (s < 0)
            break;
        memset(visited, 0, (size_t)n);
        int head = 0, tail = 0;
        queue[tail++] = s;
        visited[s] = 1;
        while (head < tail) {
            int v = queue[head++];
            if (!emitted[v]) {
                emitted[v] = 1;
                order[count++] = v;
            }
            for (int i = g->succ_start[v]; i < g->succ_start[v + 1]; i++)
                if (!visited[g->succ[i]]) {
                    visited[g->succ[i]] = 1;
                    queue[tail++] = g->succ[i];
                }
        }
    }
    assert_int_equal(count, n);
    free(emitted);
    free(visited);
    free(queue);
}

/* lexico-topo taken literally: repeatedly emit the ready node with the smallest name (O(n^2)). */
static void test_lexico_topo_literal(const pb_graph *g, int *order)
{
    int n = g->n_nodes;
    int *indeg = malloc((size_t)n * sizeof(int));
    char *emitted = calloc((size_t)n, 1);
    for (int v = 0; v < n; v++)
        indeg[v] = g->pred_start[v + 1] - g->pred_start[v];
    for (int k = 0; k < n; k++) {
        int best = -1;
        for (int v = 0; v < n; v++)
            if (!emitted[v] && indeg[v] == 0 &&
                (best < 0 || strcmp(g->node_name[v], g->node_name[best]) < 0))
                best = v;
        assert_true(best >= 0);
        emitted[best] = 1;
        order[k] = best;
        for (int i = g->succ_start[best]; i < g->succ_start[best + 1]; i++)
            indeg[g->succ[i]]--;
    }
    free(indeg);
    free(emitted);
}

static void test_random_dags(void **state)
{
    (void)state;
    for (unsigned long long seed = 1; seed <= 20; seed++) {
        int n = 50 + (int)(seed * 37 % 400);
        pb_graph *g = test_random_dag(n, (int)(seed % 4 + 1) * n / 2, seed);
        int *order = malloc((size_t)n * sizeof(int)), *pos = malloc((size_t)n * sizeof(int)),
            *ref = malloc((size_t)n * sizeof(int));
        for (int k = 0; traverse_names[k]; k++) {
            pb_error err;
            const char *name = traverse_names[k];
            if (traverse_by_name(name, g, seed, order, &err) != PB_OK)
                fail_msg("%s: %s", name, err.msg);
            if (!test_is_permutation(order, n))
                fail_msg("%s on seed %llu is not a permutation", name, seed);
            test_position(order, n, pos);
            if (strcmp(name, "topo") == 0)
                test_assert_topological(g, pos, name);
            if (strcmp(name, "lexico-topo") == 0) {
                test_lexico_topo_literal(g, ref);
                assert_memory_equal(order, ref, (size_t)n * sizeof(int));
            }
            if (strcmp(name, "lexico") == 0)
                for (int i = 1; i < n; i++)
                    assert_true(strcmp(g->node_name[order[i - 1]], g->node_name[order[i]]) < 0);
            if (strcmp(name, "reversed-topo") == 0 || strcmp(name, "dfs-postorder") == 0) {
                /* Reversed, both are topological (reverse DFS postorder is a topological sort). */
                for (int i = 0; i < n; i++)
                    pos[order[i]] = n - 1 - i;
                test_assert_topological(g, pos, name);
            }
            if (strcmp(name, "bfs") == 0) {
                for (int v = 0; v < n; v++)
                    assert_true(g->pred_start[v + 1] == g->pred_start[v] ||
                                test_after_some_pred(g, pos, v));
                test_bfs_literal(g, ref);
                assert_memory_equal(order, ref, (size_t)n * sizeof(int));
            }
        }
        free(order);
        free(pos);
        free(ref);
        graph_free(g);
    }
}

static void test_random_seeds(void **state)
{
    (void)state;
    pb_graph *g = test_random_dag(200, 300, 99);
    int a[200], b[200], c[200], identity = 1;
    pb_error err;
    assert_int_equal(traverse_random(g, 42, a, &err), PB_OK);
    assert_int_equal(traverse_random(g, 42, b, &err), PB_OK);
    assert_int_equal(traverse_random(g, 43, c, &err), PB_OK);
    assert_true(test_is_permutation(a, 200));
    assert_true(test_is_permutation(c, 200));
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    for (int i = 0; i < 200; i++)
        identity &= a[i] == i;
    assert_false(identity);
    graph_free(g);
}

/* A 20,000-node chain in insertion order: a recursive DFS would go 20,000 frames deep. */
static void test_deep_chain(void **state)
{
    (void)state;
    enum { N = 20000 };
    graph_builder *b = graph_builder_new("chain");
    graph_node_attrs a = {0};
    a.colocation = -1;
    pb_error err;
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%05d", i);
        assert_int_equal(graph_add_node(b, name, &a, &err), i);
        if (i > 0)
            assert_true(graph_add_edge(b, i - 1, i, 0, &err) >= 0);
    }
    pb_graph *g = NULL;
    assert_int_equal(graph_build(b, &g, &err), PB_OK);
    int *order = malloc(N * sizeof(int));
    assert_int_equal(traverse_dfs_preorder(g, order, &err), PB_OK);
    for (int i = 0; i < N; i++)
        assert_int_equal(order[i], i);
    assert_int_equal(traverse_dfs_postorder(g, order, &err), PB_OK);
    for (int i = 0; i < N; i++)
        assert_int_equal(order[i], N - 1 - i);
    free(order);
    graph_free(g);
}

static void test_empty_graph(void **state)
{
    (void)state;
    pb_graph *g = test_build(NULL, 0, NULL, 0);
    int dummy = -1;
    for (int k = 0; traverse_names[k]; k++) {
        pb_error err;
        assert_int_equal(traverse_by_name(traverse_names[k], g, 1, &dummy, &err), PB_OK);
    }
    assert_int_equal(dummy, -1);
    graph_free(g);
}

static void test_cycle_rejected_by_builder(void **state)
{
    (void)state;
    static const char *const names[] = {"x", "a", "b", "c"};
    graph_builder *b = graph_builder_new("cyclic");
    graph_node_attrs a = {0};
    a.colocation = -1;
    pb_error err;
    for (int i = 0; i < 4; i++)
        assert_int_equal(graph_add_node(b, names[i], &a, &err), i);
    assert_true(graph_add_edge(b, 0, 1, 0, &err) >= 0);
    assert_true(graph_add_edge(b, 1, 2, 0, &err) >= 0);
    assert_true(graph_add_edge(b, 2, 3, 0, &err) >= 0);
    assert_true(graph_add_edge(b, 3, 1, 0, &err) >= 0);
    pb_graph *g = NULL;
    assert_int_equal(graph_build(b, &g, &err), PB_ERR);
    assert_null(g);
    assert_non_null(strstr(err.msg, "cycle"));
}

/* graph_build never returns a cyclic graph, so the orders' own cycle errors are checked on
 * pb_graphs made by hand (only the fields the orders read are set). */
static void test_hand_graph(pb_graph *g, const char *const *names, int n, int m,
                            const int *succ_start, const int *succ, const int *pred_start,
                            const int *pred)
{
    memset(g, 0, sizeof *g);
    g->struct_size = sizeof *g;
    g->name = "hand-made";
    g->n_nodes = n;
    g->n_edges = m;
    g->node_name = names;
    g->succ_start = succ_start;
    g->succ = succ;
    g->pred_start = pred_start;
    g->pred = pred;
    g->grouped = g;
}

/* The order fails and its message names a node of the cycle a, b, c. */
static void test_expect_cycle(const pb_graph *g, const char *name)
{
    int order[4];
    pb_error err = {""};
    assert_int_equal(traverse_by_name(name, g, 0, order, &err), PB_ERR);
    if (!strstr(err.msg, "cycle") ||
        !(strstr(err.msg, "'a'") || strstr(err.msg, "'b'") || strstr(err.msg, "'c'")))
        fail_msg("%s: error does not name a node on the cycle: %s", name, err.msg);
}

static void test_cycle_errors(void **state)
{
    (void)state;
    static const char *const names[] = {"x", "a", "b", "c"};
    /* G1: x -> a, a -> b, b -> c, c -> a: the cycle is reachable from the source x. */
    static const int s1_start[] = {0, 1, 2, 3, 4}, s1[] = {1, 2, 3, 1};
    static const int p1_start[] = {0, 0, 2, 3, 4}, p1[] = {0, 3, 1, 2};
    pb_graph g;
    test_hand_graph(&g, names, 4, 4, s1_start, s1, p1_start, p1);
    test_expect_cycle(&g, "topo");
    test_expect_cycle(&g, "reversed-topo");
    test_expect_cycle(&g, "lexico-topo");
    /* bfs reaches every node from x (x, a, b, c); DFS and the name orders are defined on any
     * digraph. */
    static const char *const total[] = {"bfs", "dfs-preorder", "dfs-postorder", "lexico", "random"};
    for (size_t k = 0; k < sizeof total / sizeof total[0]; k++) {
        int order[4];
        pb_error err;
        assert_int_equal(traverse_by_name(total[k], &g, 0, order, &err), PB_OK);
        assert_true(test_is_permutation(order, 4));
        if (k == 0)
            test_assert_names(&g, order, names, "bfs");
    }
    /* G2: a -> b, b -> c, c -> a and an isolated x: no source leads into the cycle. */
    static const int s2_start[] = {0, 0, 1, 2, 3}, s2[] = {2, 3, 1};
    static const int p2_start[] = {0, 0, 1, 2, 3}, p2[] = {3, 1, 2};
    test_hand_graph(&g, names, 4, 3, s2_start, s2, p2_start, p2);
    test_expect_cycle(&g, "topo");
    test_expect_cycle(&g, "lexico-topo");
    test_expect_cycle(&g, "bfs");
}

static void test_unknown_name(void **state)
{
    (void)state;
    pb_graph *g = test_vector_graph();
    int order[6];
    pb_error err;
    assert_int_equal(traverse_by_name("alpha", g, 0, order, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "'alpha'"));
    assert_non_null(strstr(err.msg, "lexico-topo"));
    graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_vector),
        cmocka_unit_test(test_direct_functions),
        cmocka_unit_test(test_topo_abcd),
        cmocka_unit_test(test_lexico_byte_order),
        cmocka_unit_test(test_random_dags),
        cmocka_unit_test(test_random_seeds),
        cmocka_unit_test(test_deep_chain),
        cmocka_unit_test(test_empty_graph),
        cmocka_unit_test(test_cycle_rejected_by_builder),
        cmocka_unit_test(test_cycle_errors),
        cmocka_unit_test(test_unknown_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
