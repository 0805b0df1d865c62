/* test_papers.c — the papers registry: spot checks of the copied figures against the papers'
 * text, and checks every registered paper's tables must pass (rows of win counts sum to the
 * graphs counted, the averages' table is the mean of the cells). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "report/papers.h"

#include <math.h>
#include <string.h>

static void test_spot_checks(void **state)
{
    (void)state;
    const papers_order_table *o = papers_with_orders()->orders;
    assert_int_equal(papers_order_wins(o, "cifar10", 8, 19, "dfs-postorder"), 17);
    assert_int_equal(papers_order_wins(o, "nmt", 5, 49, "reversed-topo"), 27);
    assert_int_equal(papers_order_wins(o, "ptb", 5, 9, "bfs"), 27);
    assert_int_equal(papers_order_wins(o, "ptb", 4, 9, "bfs"), -1);
    assert_int_equal(papers_order_wins(o, "ptb", 3, 9, "random"), -1);
    assert_int_equal(papers_order_wins(NULL, "ptb", 3, 9, "bfs"), -1);
    /* Tables II-IV give each of the 32 graphs of a row one best order. */
    for (int c = 0; c < o->n_families * o->n_devices * o->n_episodes; c++) {
        int sum = 0;
        for (int k = 0; k < o->n_orders; k++)
            sum += o->wins[c * o->n_orders + k];
        assert_int_equal(sum, 32);
    }
    const papers_embedding_table *e = papers_with_embeddings()->embeddings;
    assert_float_equal(papers_embedding_cell(e, "ptb", 8, "pgnn").improvement_pct, 23.536, 1e-9);
    assert_float_equal(papers_embedding_cell(e, "nmt", 3, "graphsage").wall_s, 42.504, 1e-9);
    assert_true(isnan(papers_embedding_cell(e, "nmt", 4, "graphsage").wall_s));
    assert_true(isnan(papers_embedding_cell(NULL, "nmt", 3, "graphsage").wall_s));
    assert_float_equal(papers_embedding_overall(e, "pgnn").improvement_pct, 31.164, 1e-9);
    assert_true(isnan(papers_embedding_overall(e, "random").ec));
}

/* Each (family, devices, episode) row counts every graph at least once (tied orders all win). */
static void check_order_table(const papers_order_table *t)
{
    for (int c = 0; c < t->n_families * t->n_devices * t->n_episodes; c++) {
        int sum = 0;
        for (int o = 0; o < t->n_orders; o++)
            sum += t->wins[c * t->n_orders + o];
        assert_true(sum >= t->n_graphs);
    }
}

/* The averages are the means over families and device counts, to the paper's rounding. */
static void check_embedding_table(const papers_embedding_table *t)
{
    int n = t->n_families * t->n_devices;
    assert_non_null(t->baseline);
    assert_true(isfinite(papers_embedding_overall(t, t->baseline).improvement_pct));
    for (int e = 0; e < t->n_embeddings; e++) {
        double imp = 0, wall = 0;
        for (int f = 0; f < t->n_families; f++)
            for (int d = 0; d < t->n_devices; d++) {
                int c = (f * t->n_embeddings + e) * t->n_devices + d;
                imp += t->improvement_pct[c];
                wall += t->wall_s[c];
            }
        assert_float_equal(imp / n, t->overall[e].improvement_pct, 6e-4);
        assert_float_equal(wall / n, t->overall[e].wall_s, 6e-4);
    }
}

static void test_registered(void **state)
{
    (void)state;
    int n = 0;
    for (const papers_paper *p; (p = papers_at(n)); n++) {
        assert_non_null(p->name);
        assert_non_null(p->placer);
        assert_true(p->orders || p->embeddings);
        if (p->orders)
            check_order_table(p->orders);
        if (p->embeddings)
            check_embedding_table(p->embeddings);
    }
    assert_int_equal(n, 2);
    assert_null(papers_at(-1));
    assert_string_equal(papers_with_orders()->name, "traversal-order paper");
    assert_string_equal(papers_with_embeddings()->name, "embedding paper");
}

static void test_display_order(void **state)
{
    (void)state;
    const char *const paper[] = {"lexico", "topo", "bfs"};
    const char *const names[] = {"bfs", "custom", "lexico", "a-order"};
    /* lexico, bfs (the paper's order), then custom and a-order (their own order) */
    int expect[] = {2, 0, 1, 3};
    for (int q = 0; q < 4; q++)
        assert_int_equal(papers_display_at(names, 4, paper, 3, q), expect[q]);
    assert_int_equal(papers_display_at(names, 4, NULL, 0, 1), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spot_checks),
        cmocka_unit_test(test_registered),
        cmocka_unit_test(test_display_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
