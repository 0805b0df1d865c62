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
#include <stdio.h>
#include <stdlib.h>
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

/* Every method is named once, the reference's gaps are 0, and Table 2's brute-force times grow
 * as T^L (spec §11: about x16 per 4 layers at T = 2, x256 at T = 4; within a factor of 2). */
static void check_heterps_table(const papers_heterps_tables *t)
{
    const papers_heterps_method *ref = papers_heterps_find(t, t->reference);
    assert_non_null(ref);
    assert_true(ref->gap_pct.lo == 0 && ref->gap_pct.hi == 0);
    for (int i = 0; i < t->n_methods; i++)
        assert_ptr_equal(papers_heterps_find(t, t->methods[i].placer), &t->methods[i]);
    for (int i = 1; i < t->n_bf; i++) {
        assert_int_equal(t->bf[i].layers - t->bf[i - 1].layers, 4);
        double r2 = t->bf[i].bf2_s / t->bf[i - 1].bf2_s, r4 = t->bf[i].bf4_s / t->bf[i - 1].bf4_s;
        assert_true(r2 >= 8 && r2 <= 32);
        assert_true(isnan(r4) || (r4 >= 128 && r4 <= 512));
    }
    assert_non_null(t->bf_placer);
    assert_non_null(papers_heterps_find(t, t->rl_placer));
}

static void test_heterps(void **state)
{
    (void)state;
    const papers_heterps_tables *t = papers_with_heterps()->heterps;
    assert_float_equal(papers_heterps_find(t, "bo")->gap_pct.hi, 38.1, 1e-12);
    assert_true(isnan(papers_heterps_find(t, "bo")->gap_pct.lo));
    assert_float_equal(papers_heterps_find(t, "all-cpu")->gap_types_pct[2].hi, 20019, 1e-12);
    assert_float_equal(papers_heterps_find(t, "greedy")->sched_s[1].hi, 0.27, 1e-12);
    assert_null(papers_heterps_find(t, "placeto"));
    assert_null(papers_heterps_find(NULL, "bo"));
    assert_int_equal(papers_heterps_class(2), 0);
    assert_int_equal(papers_heterps_class(16), 0);
    assert_int_equal(papers_heterps_class(17), -1);
    assert_int_equal(papers_heterps_class(64), 2);
    assert_int_equal(papers_heterps_time_class(4), -1);
    assert_int_equal(papers_heterps_time_class(32), 1);
    /* The paper's methods in its order, then the others in their own. */
    const char *const names[] = {"all-gpu", "zz", "heterps", "greedy"};
    int expect[] = {2, 3, 0, 1};
    for (int q = 0; q < 4; q++)
        assert_int_equal(papers_heterps_display_at(t, names, 4, q), expect[q]);
}

/* GDP's Table 1 as transcribed (specs/gdp.md §12): the printed speed-ups agree with the run
 * times to 1 point except the two inconsistencies §12 notes (AmoebaNet over HP, 4-layer
 * Transformer-XL over HP); METIS fits on 3 rows; GEOMEAN of the time ratios 15.0 % / 11.2 %. */
static void test_gdp(void **state)
{
    (void)state;
    const papers_gdp_tables *t = papers_with_gdp()->gdp;
    assert_int_equal(t->n_rows, 12);
    assert_string_equal(t->hp_placer, "expert");
    int metis_fits = 0, off = 0;
    double hp = 0, hdp = 0;
    for (int i = 0; i < t->n_rows; i++) {
        const papers_gdp_row *r = &t->rows[i];
        metis_fits += !isnan(r->metis);
        double over_hp = (r->hp / r->gdp_one - 1) * 100, over_hdp = (r->hdp / r->gdp_one - 1) * 100;
        assert_true(fabs(over_hdp - r->over_hdp_pct) < 1);
        if (fabs(over_hp - r->over_hp_pct) >= 1) {
            off++;
            assert_true(strcmp(r->model, "amoebanet-8c") == 0 ||
                        strcmp(r->model, "transformer-xl-4l") == 0);
        }
        hp += log(r->hp / r->gdp_one);
        hdp += log(r->hdp / r->gdp_one);
    }
    assert_int_equal(off, 1); /* AmoebaNet: 11.7 % against 26.1 %; TXL-4's 10.5 % is within 1 */
    assert_int_equal(metis_fits, 3);
    assert_float_equal((exp(hp / 12) - 1) * 100, 15.0, 0.05);
    assert_float_equal((exp(hdp / 12) - 1) * 100, 11.2, 0.05);
}

/* TAG's Table 4 as transcribed (paper_tag.c): six models, GPUs per type within the testbed's
 * 4 V100 / 8 1080Ti / 4 P100, PS + AR at most 100 %; spot values from the paper's table. */
static void check_tag_table(const papers_tag_tables *t)
{
    assert_int_equal(t->n_models, 6);
    const double most[3] = {4, 8, 4};
    for (int i = 0; i < t->n_models; i++) {
        for (int k = 0; k < 3; k++)
            assert_true(t->models[i].replication[k] >= 0 && t->models[i].replication[k] <= most[k]);
        assert_true(t->models[i].ps_pct + t->models[i].ar_pct <= 100 + 1e-9);
    }
    assert_string_equal(t->types[1], "1080Ti");
    assert_string_equal(t->models[1].model, "vgg19");
    assert_float_equal(t->models[1].replication[1], 2.1, 1e-12);
    assert_float_equal(t->models[4].ps_pct, 15.0, 1e-12);
    assert_float_equal(t->speedup_dp_pct.lo, 8, 0);
    assert_float_equal(t->speedup_dp_pct.hi, 456, 0);
    assert_float_equal(t->speedup_dpp_pct.hi, 391, 0);
}

static void test_registered(void **state)
{
    (void)state;
    int n = 0;
    for (const papers_paper *p; (p = papers_at(n)); n++) {
        assert_non_null(p->name);
        assert_non_null(p->placer);
        assert_true(p->orders || p->embeddings || p->heterps || p->gdp || p->tag);
        if (p->orders)
            check_order_table(p->orders);
        if (p->embeddings)
            check_embedding_table(p->embeddings);
        if (p->heterps)
            check_heterps_table(p->heterps);
        if (p->tag)
            check_tag_table(p->tag);
    }
    assert_int_equal(n, 5);
    assert_null(papers_at(-1));
    assert_string_equal(papers_with_orders()->name, "traversal-order paper");
    assert_string_equal(papers_with_embeddings()->name, "embedding paper");
    assert_string_equal(papers_with_heterps()->name, "HeterPS paper");
    assert_string_equal(papers_with_tag()->name, "TAG paper");
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

/* TAG's Tables 5 and 6 as transcribed (paper §5.6), and the markdown beside ours: speed-up =
 * without / with - 1, our op types sorted by count (ties by name), '-' where a figure is N/A. */
static void test_tag_sfb(void **state)
{
    (void)state;
    const papers_sfb_tables *t = papers_tag_sfb();
    assert_int_equal(t->n_rows, 6);
    assert_int_equal(t->batch, 4);
    assert_string_equal(t->rows[3].model, "transformer");
    assert_true(t->rows[3].dp_without_s == 0.1199 && t->rows[3].dp_with_s == 0.0455);
    assert_true(isnan(t->rows[5].flexflow_s) && t->rows[0].flexflow_s == 0.0631);
    assert_string_equal(t->top[1].type, "MatMul");
    assert_int_equal(t->top[1].count, 336);
    papers_sfb_measured m[2] = {{"vgg19", 0.2, 0.1, 7}, {"made-up", 0.3, NAN, 0}};
    papers_sfb_count c[3] = {{"Mul", 2}, {"Add", 5}, {"Abs", 2}};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    papers_tag_sfb_print(f, m, 2, c, 3, 2, 4, "tag-sfb");
    fclose(f);
    assert_non_null(strstr(text, "| VGG19 | 0.2000 | 0.1000 | 100.0% | 7 | 0.1195 | 0.1192 | 0.3% "
                                 "| 0.1167 | 0.1169 | -0.2% | 0.1083 |\n"));
    assert_non_null(strstr(text, "| made-up | 0.3000 | - | - | 0 | - | - | - | - | - | - | - |\n"));
    assert_non_null(strstr(text, "| 1 | Add | 5 | Reshape | 341 |\n"));
    assert_non_null(strstr(text, "| 2 | Abs | 2 | MatMul | 336 |\n"));
    assert_non_null(strstr(text, "| 3 | - | - | Transpose | 89 |\n"));
    assert_non_null(strstr(text, "| 5 | - | - | Add | 26 |\n"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spot_checks),   cmocka_unit_test(test_heterps),
        cmocka_unit_test(test_gdp),           cmocka_unit_test(test_registered),
        cmocka_unit_test(test_display_order), cmocka_unit_test(test_tag_sfb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
