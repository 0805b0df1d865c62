/* test_datasets.c — generated families against the paper's Table I, determinism, names, and the
 * graph validation errors (through nodelink_parse). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "data/gen/gen.h"
#include "model/graph.h"
#include "data/nodelink.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Table I of the traversal-order paper (papers/traversal-order-device-placement.txt), copied
 * here from the paper rather than from the library so the test checks the library's copy too. */
typedef struct test_table1 {
    const char *family;
    double nodes, edges, longest;
    int lp_min, lp_max;
} test_table1;

static const test_table1 test_paper[] = {
    {"cifar10", 303.44, 444.22, 95.63, 74, 154},
    {"ptb", 500.75, 1285.44, 316.09, 216, 450},
    {"nmt", 179.44, 476.25, 63.13, 41, 69},
};

#define TEST_GRAPHS 32
#define TEST_SEED 1 /* the seed the documentation tells users to generate with */

static pb_graph *test_generate(const char *family, uint64_t seed, int index)
{
    const gen_family *f = gen_family_find(family);
    assert_non_null(f);
    pb_graph *g = NULL;
    pb_error err;
    if (gen_graph(f, seed, index, NULL, &g, &err) != PB_OK)
        fail_msg("%s graph %d: %s", family, index, err.msg);
    return g;
}

/* Each family's 32 grouped graphs are within 10% of Table I on the three averages, and the
 * longest paths spread over a range that overlaps the paper's. */
static void test_table1_within_10_percent(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof test_paper / sizeof test_paper[0]; k++) {
        const test_table1 *p = &test_paper[k];
        double nodes = 0, edges = 0, longest = 0;
        int lp_min = 1 << 30, lp_max = 0;
        for (int i = 0; i < TEST_GRAPHS; i++) {
            pb_graph *g = test_generate(p->family, TEST_SEED, i);
            const pb_graph *q = g->grouped;
            assert_true(q != g);
            int lp = graph_longest_path(q);
            nodes += q->n_nodes;
            edges += q->n_edges;
            longest += lp;
            lp_min = lp < lp_min ? lp : lp_min;
            lp_max = lp > lp_max ? lp : lp_max;
            graph_free(g);
        }
        nodes /= TEST_GRAPHS;
        edges /= TEST_GRAPHS;
        longest /= TEST_GRAPHS;
        printf("%-8s nodes %.1f (%.1f) edges %.1f (%.1f) longest %.1f (%.1f) range %d-%d\n",
               p->family, nodes, p->nodes, edges, p->edges, longest, p->longest, lp_min, lp_max);
        if (fabs(nodes - p->nodes) > 0.1 * p->nodes)
            fail_msg("%s: average nodes %.1f not within 10%% of %.1f", p->family, nodes, p->nodes);
        if (fabs(edges - p->edges) > 0.1 * p->edges)
            fail_msg("%s: average edges %.1f not within 10%% of %.1f", p->family, edges, p->edges);
        if (fabs(longest - p->longest) > 0.1 * p->longest)
            fail_msg("%s: average longest path %.1f not within 10%% of %.1f", p->family, longest,
                     p->longest);
        if (lp_max < p->lp_min || lp_min > p->lp_max)
            fail_msg("%s: longest paths %d-%d do not overlap the paper's %d-%d", p->family, lp_min,
                     lp_max, p->lp_min, p->lp_max);
        /* a spread, not one size: the paper's ranges span a factor 1.7-2.1 */
        if ((double)lp_max < 1.4 * lp_min)
            fail_msg("%s: longest paths %d-%d hardly vary", p->family, lp_min, lp_max);
    }
}

/* The library's copy of Table I is the paper's. */
static void test_family_table(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof test_paper / sizeof test_paper[0]; k++) {
        const gen_family *f = gen_family_find(test_paper[k].family);
        assert_non_null(f);
        assert_true(f->has_paper_stats);
        assert_true(fabs(f->paper.nodes - test_paper[k].nodes) < 1e-9);
        assert_true(fabs(f->paper.edges - test_paper[k].edges) < 1e-9);
        assert_true(fabs(f->paper.longest_path - test_paper[k].longest) < 1e-9);
        assert_int_equal(f->paper.longest_min, test_paper[k].lp_min);
        assert_int_equal(f->paper.longest_max, test_paper[k].lp_max);
    }
    assert_null(gen_family_find("imagenet"));
}

/* Same seed and index -> same checksum; another seed changes the family's graphs. */
static void test_deterministic(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof test_paper / sizeof test_paper[0]; k++) {
        const char *fam = test_paper[k].family;
        int differ = 0;
        for (int i = 0; i < 8; i++) {
            pb_graph *a = test_generate(fam, 7, i), *b = test_generate(fam, 7, i);
            pb_graph *c = test_generate(fam, 8, i);
            assert_string_equal(a->checksum, b->checksum);
            assert_string_equal(a->grouped->checksum, b->grouped->checksum);
            assert_int_equal(a->n_nodes, b->n_nodes);
            differ += strcmp(a->checksum, c->checksum) != 0;
            graph_free(a);
            graph_free(b);
            graph_free(c);
        }
        if (differ == 0)
            fail_msg("%s: seeds 7 and 8 give the same 8 graphs", fam);
    }
    /* the architecture families draw their cells from the seed: graph 0 alone differs */
    const char *random_cells[] = {"cifar10", "ptb"};
    for (int k = 0; k < 2; k++) {
        pb_graph *a = test_generate(random_cells[k], 1, 0),
                 *b = test_generate(random_cells[k], 2, 0);
        assert_string_not_equal(a->checksum, b->checksum);
        graph_free(a);
        graph_free(b);
    }
}

/* Every op is named with TF-like scopes: non-empty components separated by '/', gradient ops
 * under "gradients/", and each op in a group; groups hold several ops on average. */
static void test_names_hierarchical(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof test_paper / sizeof test_paper[0]; k++) {
        pb_graph *g = test_generate(test_paper[k].family, TEST_SEED, 3);
        int grads = 0, forward_deep = 0, flat = 0;
        assert_non_null(g->group_of);
        for (int v = 0; v < g->n_nodes; v++) {
            const char *n = g->node_name[v];
            assert_true(n[0] != '/' && n[strlen(n) - 1] != '/' && !strstr(n, "//"));
            flat += strchr(n, '/') == NULL; /* TF keeps e.g. Adam's beta1_power at the root */
            grads += strncmp(n, "gradients/", 10) == 0;
            int depth = 0;
            for (const char *c = n; *c; c++)
                depth += *c == '/';
            forward_deep += strncmp(n, "gradients/", 10) != 0 && depth >= 2;
            assert_true(g->group_of[v] >= 0 && g->group_of[v] < g->grouped->n_nodes);
        }
        assert_true(flat <= g->n_nodes / 100);
        assert_true(grads > g->n_nodes / 4);
        assert_true(forward_deep > g->n_nodes / 8);
        assert_true(g->n_nodes >= 4 * g->grouped->n_nodes);
        /* a gradient group exists for some forward group: "gradients/" + its name */
        int mirrored = 0;
        for (int q = 0; q < g->grouped->n_nodes && !mirrored; q++) {
            const char *gn = g->grouped->node_name[q];
            if (strncmp(gn, "gradients/", 10) != 0)
                continue;
            for (int r = 0; r < g->grouped->n_nodes && !mirrored; r++)
                mirrored = strcmp(g->grouped->node_name[r], gn + 10) == 0;
        }
        assert_true(mirrored);
        graph_free(g);
    }
}

/* Node-link round trip keeps everything the checksum covers. */
static void test_nodelink_round_trip(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof test_paper / sizeof test_paper[0]; k++) {
        pb_graph *g = test_generate(test_paper[k].family, TEST_SEED, 5), *back = NULL;
        char path[] = "/tmp/pb_test_datasets_XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        FILE *f = fdopen(fd, "w");
        pb_error err;
        assert_int_equal(nodelink_fwrite(f, g, &err), PB_OK);
        fclose(f);
        if (nodelink_read(path, &back, &err) != PB_OK)
            fail_msg("%s", err.msg);
        remove(path);
        assert_string_equal(back->checksum, g->checksum);
        assert_string_equal(back->grouped->checksum, g->grouped->checksum);
        graph_free(back);
        graph_free(g);
    }
}

/* 2.8e12 FLOPs take one second on the K80 die; 240e9 bytes too; plus the 5 µs launch. */
static void test_roofline(void **state)
{
    (void)state;
    assert_true(fabs(gen_roofline_us(2.8e12, 0) - (1e6 + 5.0)) < 1e-6);
    assert_true(fabs(gen_roofline_us(0, 240e9) - (1e6 + 5.0)) < 1e-6);
    assert_true(fabs(gen_roofline_us(2.8e6, 24e6) - (100.0 + 5.0)) < 1e-9); /* memory-bound */
    assert_true(fabs(gen_shape_bytes(gen_shape4(128, 32, 32, 3)) - 4.0 * 128 * 32 * 32 * 3) < 1e-9);
}

/* gen_spread covers the whole range within any 32 consecutive indices. */
static void test_spread(void **state)
{
    (void)state;
    int seen[8] = {0};
    for (int i = 0; i < 32; i++) {
        int v = gen_spread(i, 3, 10);
        assert_true(v >= 3 && v <= 10);
        seen[v - 3]++;
    }
    for (int k = 0; k < 8; k++)
        assert_true(seen[k] >= 2 && seen[k] <= 6);
}

/* ------------------------------------------------------------------ validation */

/* Parses text, expects failure with a message that contains every string in want[]. */
static void test_rejects(const char *text, const char *const *want, int n_want)
{
    pb_graph *g = (pb_graph *)&g; /* must be reset to NULL on failure */
    pb_error err = {{0}};
    assert_int_equal(nodelink_parse(text, "bad.json", &g, &err), PB_ERR);
    assert_null(g);
    assert_non_null(strstr(err.msg, "bad.json"));
    for (int i = 0; i < n_want; i++)
        if (!strstr(err.msg, want[i]))
            fail_msg("error '%s' does not mention '%s'", err.msg, want[i]);
}

static void test_reject_cycle(void **state)
{
    (void)state;
    const char *text = "{\"directed\": true, \"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\"}, "
                       "{\"id\": \"c\"}, {\"id\": \"d\"}], \"links\": [{\"source\": \"a\", "
                       "\"target\": \"b\"}, {\"source\": \"b\", \"target\": \"c\"}, "
                       "{\"source\": \"c\", \"target\": \"b\"}, {\"source\": \"c\", "
                       "\"target\": \"d\"}]}";
    pb_graph *g = NULL;
    pb_error err;
    assert_int_equal(nodelink_parse(text, "bad.json", &g, &err), PB_ERR);
    assert_null(g);
    assert_non_null(strstr(err.msg, "cycle"));
    /* the node named lies on the cycle b <-> c */
    assert_true(strstr(err.msg, "'b'") || strstr(err.msg, "'c'"));
}

static void test_reject_dangling_and_duplicate(void **state)
{
    (void)state;
    const char *dangling[] = {"dangling", "'ghost'"};
    test_rejects("{\"nodes\": [{\"id\": \"a\"}], \"links\": [{\"source\": \"a\", \"target\": "
                 "\"ghost\"}]}",
                 dangling, 2);
    const char *dup[] = {"duplicate", "'a'"};
    test_rejects("{\"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\"}, {\"id\": \"a\"}], \"links\": []}",
                 dup, 2);
    const char *self[] = {"self loop", "'a'"};
    test_rejects("{\"nodes\": [{\"id\": \"a\"}], \"links\": [{\"source\": \"a\", \"target\": "
                 "\"a\"}]}",
                 self, 2);
}

static void test_reject_bad_numbers(void **state)
{
    (void)state;
    const char *neg[] = {"'n1'", "cost", "-3"};
    test_rejects("{\"nodes\": [{\"id\": \"n0\"}, {\"id\": \"n1\", \"cost\": -3}], \"links\": []}",
                 neg, 3);
    const char *nan[] = {"'n1'", "cost", "NaN"};
    test_rejects("{\"nodes\": [{\"id\": \"n0\"}, {\"id\": \"n1\", \"cost\": NaN}], \"links\": []}",
                 nan, 3);
    const char *inf[] = {"'n0'", "mem", "Infinity"};
    test_rejects("{\"nodes\": [{\"id\": \"n0\", \"mem\": Infinity}], \"links\": []}", inf, 3);
    const char *big[] = {"'n0'", "out_size", "Infinity"};
    test_rejects("{\"nodes\": [{\"id\": \"n0\", \"out_size\": 1e999}], \"links\": []}", big, 3);
    const char *minus_inf[] = {"'x'", "cost", "-Infinity"};
    test_rejects("{\"nodes\": [{\"id\": \"x\", \"cost\": -Infinity}], \"links\": []}", minus_inf,
                 3);
    const char *size[] = {"'n0'", "out_sizes[1]"};
    test_rejects("{\"nodes\": [{\"id\": \"n0\", \"out_sizes\": [4, -8]}], \"links\": []}", size, 2);
    /* a string that merely looks like NaN stays a string: not a number */
    const char *str[] = {"'n0'", "cost", "not a number"};
    test_rejects("{\"nodes\": [{\"id\": \"n0\", \"cost\": \"12\"}], \"links\": []}", str, 3);
}

/* a -> b -> c with a and c in group G1, b in G2: G1 -> G2 -> G1. */
static void test_reject_group_cycle(void **state)
{
    (void)state;
    const char *text = "{\"nodes\": [{\"id\": \"a\", \"group\": \"G1\"}, {\"id\": \"b\", "
                       "\"group\": \"G2\"}, {\"id\": \"c\", \"group\": \"G1\"}], \"links\": "
                       "[{\"source\": \"a\", \"target\": \"b\"}, {\"source\": \"b\", "
                       "\"target\": \"c\"}]}";
    pb_graph *g = NULL;
    pb_error err;
    assert_int_equal(nodelink_parse(text, "bad.json", &g, &err), PB_ERR);
    assert_null(g);
    assert_non_null(strstr(err.msg, "group"));
    assert_true(strstr(err.msg, "'G1'") || strstr(err.msg, "'G2'"));
    /* the same ops grouped {a, b}, {c} are fine */
    const char *ok = "{\"nodes\": [{\"id\": \"a\", \"group\": \"G1\"}, {\"id\": \"b\", "
                     "\"group\": \"G1\"}, {\"id\": \"c\", \"group\": \"G2\"}], \"links\": "
                     "[{\"source\": \"a\", \"target\": \"b\"}, {\"source\": \"b\", "
                     "\"target\": \"c\"}]}";
    assert_int_equal(nodelink_parse(ok, "ok.json", &g, &err), PB_OK);
    assert_int_equal(g->grouped->n_nodes, 2);
    assert_int_equal(g->grouped->n_edges, 1);
    graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table1_within_10_percent),
        cmocka_unit_test(test_family_table),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_names_hierarchical),
        cmocka_unit_test(test_nodelink_round_trip),
        cmocka_unit_test(test_roofline),
        cmocka_unit_test(test_spread),
        cmocka_unit_test(test_reject_cycle),
        cmocka_unit_test(test_reject_dangling_and_duplicate),
        cmocka_unit_test(test_reject_bad_numbers),
        cmocka_unit_test(test_reject_group_cycle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
