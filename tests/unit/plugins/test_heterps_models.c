/* test_heterps_models.c — the HeterPS models of datasets/heterps under the default profile of
 * specs/heterps.md §4, against the figures the spec checked with an independent prototype
 * (§3.5 and §11, marked [V]). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "heterps.h"

#include "data/nodelink.h"
#include "model/graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU 0
#define GPU 1
#define MAX_LAYERS 20

/* The model's profile for T = 2 (CPU 0.04, V100 2.42 USD/h; limits 480 and 32 times scale). */
static heterps_profile *model_profile(const char *name, double limit_scale, int mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/datasets/heterps/%s.json", getenv("PB_SRC"), name);
    pb_graph *g;
    pb_error err;
    if (nodelink_read(path, &g, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        fail();
    }
    heterps_layer layers[MAX_LAYERS];
    assert_true(g->n_nodes <= MAX_LAYERS);
    assert_int_equal(heterps_layers_read(g, layers, &err), PB_OK);
    heterps_hw hw;
    heterps_hw_default(&hw);
    heterps_profile *p = heterps_profile_new(layers, g->n_nodes, 2, &hw, 0.999, 0.995);
    assert_non_null(p);
    assert_int_equal(heterps_workload(g->name, &p->tl, &p->epochs, &p->examples, &err), PB_OK);
    p->mode = mode;
    p->price[CPU] = 0.04;
    p->price[GPU] = 2.42;
    p->limit[CPU] = 480 * limit_scale;
    p->limit[GPU] = 32 * limit_scale;
    heterps_profile_finish(p);
    graph_free(g);
    return p;
}

/* The optimum of all 2^L plans (ties to the lexicographically smaller plan). */
static double exhaustive(const heterps_profile *p, int *best)
{
    int L = p->n_layers, plan[MAX_LAYERS];
    heterps_stage st[MAX_LAYERS];
    double best_cost = INFINITY;
    for (long code = 0; code < 1L << L; code++) {
        for (int l = 0; l < L; l++)
            plan[l] = (int)(code >> (L - 1 - l)) & 1;
        heterps_result r;
        heterps_provision(p, plan, st, &r);
        if (r.cost_pen < best_cost) {
            best_cost = r.cost_pen;
            memcpy(best, plan, (size_t)L * sizeof(int));
        }
    }
    return best_cost;
}

static void plan_text(const int *plan, int n, char *out)
{
    for (int l = 0; l < n; l++)
        out[l] = plan[l] == CPU ? 'C' : 'G';
    out[n] = '\0';
}

/* Totals of a provisioned plan: cores (training + PS) and GPUs. */
static void totals(const heterps_profile *p, const int *plan, int *cores, int *gpus,
                   heterps_result *r)
{
    heterps_stage st[MAX_LAYERS];
    heterps_provision(p, plan, st, r);
    *cores = r->n_ps;
    *gpus = 0;
    for (int i = 0; i < r->n_stages; i++)
        *(st[i].type == CPU ? cores : gpus) += st[i].k;
}

static void test_ctrdnn8_optimum(void **state)
{
    (void)state;
    heterps_profile *p = model_profile("ctrdnn-8", 1, HETERPS_BALANCED);
    int best[MAX_LAYERS], cores, gpus;
    char text[MAX_LAYERS + 1];
    double cost = exhaustive(p, best);
    plan_text(best, p->n_layers, text);
    assert_string_equal(text, "CCCGGGGC");
    assert_true(fabs(cost - 4.025) <= 0.0005);
    heterps_result r;
    totals(p, best, &cores, &gpus, &r);
    assert_int_equal(cores, 40);
    assert_int_equal(gpus, 1);
    heterps_profile_free(p);
}

static void test_ctrdnn16_optimum(void **state)
{
    (void)state;
    heterps_profile *p = model_profile("ctrdnn-16", 1, HETERPS_BALANCED);
    int best[MAX_LAYERS], cores, gpus;
    char text[MAX_LAYERS + 1];
    double cost = exhaustive(p, best);
    plan_text(best, p->n_layers, text);
    /* emb, pool, concat, fc1 on CPU; fc2-fc11 and fc_out on GPU; loss on CPU */
    assert_string_equal(text, "CCCCGGGGGGGGGGGC");
    assert_true(fabs(cost - 9.435) <= 0.0005);
    heterps_result r;
    totals(p, best, &cores, &gpus, &r);
    assert_int_equal(cores, 54);
    assert_int_equal(gpus, 3);
    heterps_profile_free(p);
}

static void test_ctrdnn20_optimum(void **state)
{
    (void)state;
    heterps_profile *p = model_profile("ctrdnn-20", 1, HETERPS_BALANCED);
    int best[MAX_LAYERS];
    double cost = exhaustive(p, best);
    assert_true(fabs(cost - 11.87) <= 0.005);
    heterps_profile_free(p);
}

/* CPU-only CTRDNN-16 needs 369 training and 140 PS cores, 509 > 480: it misses the limit. */
static void test_ctrdnn16_cpu_only(void **state)
{
    (void)state;
    heterps_profile *p = model_profile("ctrdnn-16", 1, HETERPS_BALANCED);
    int plan[MAX_LAYERS] = {0}, cores, gpus;
    heterps_result r;
    totals(p, plan, &cores, &gpus, &r);
    assert_int_equal(r.n_ps, 140);
    assert_int_equal(cores - r.n_ps, 369);
    assert_false(r.feasible);
    /* Capped (§3.4): 480 cores split 1 each plus 478 in proportion 369 : 140, the larger
     * remainder (0.53 against 0.47) to the training stage: 348 + 132. */
    heterps_stage st[MAX_LAYERS];
    heterps_capped(p, plan, st, &r);
    assert_int_equal(r.n_stages, 1);
    assert_int_equal(st[0].k, 348);
    assert_int_equal(r.n_ps, 132);
    assert_true(r.thr < p->tl);
    assert_false(r.feasible);
    heterps_profile_free(p);
}

/* Static provisioning of the optimum's plan against balanced provisioning (§3.5 [V]). */
static void static_ratios(const char *model, double limit_scale, double want_sta, double want_ps)
{
    heterps_profile *p = model_profile(model, limit_scale, HETERPS_BALANCED);
    int best[MAX_LAYERS], g;
    double cost = exhaustive(p, best);
    heterps_stage st[MAX_LAYERS];
    heterps_result sta, ps;
    heterps_static(p, best, HETERPS_STA_RATIO, 100000, st, &sta, &g);
    assert_true(sta.thr >= p->tl);
    heterps_static(p, best, HETERPS_STA_PS_RATIO, 100000, st, &ps, &g);
    assert_true(ps.thr >= p->tl);
    assert_true(fabs(sta.cost / cost - want_sta) <= 0.005);
    assert_true(fabs(ps.cost / cost - want_ps) <= 0.005);
    heterps_profile_free(p);
}

static void test_static_ratios_ctrdnn16(void **state)
{
    (void)state;
    static_ratios("ctrdnn-16", 1, 2.54, 1.54);
}

static void test_static_ratios_matchnet(void **state)
{
    (void)state;
    static_ratios("matchnet", 1, 3.07, 1.85);
}

/* Fig. 4's order on CTRDNN-16's optimal plan, balanced provisioning < StaPSRatio < StaRatio
 * (§11), at TL x 1 and x 2.  (At x 0.25 and x 0.5 it does not hold: the one GPU the plan needs
 * runs with slack, and StaPSRatio's extra PS cores, cheap, shorten the time the GPU is paid
 * for.) */
static void test_static_order_over_tl(void **state)
{
    (void)state;
    static const double scale[] = {1, 2};
    for (int i = 0; i < 2; i++) {
        heterps_profile *p = model_profile("ctrdnn-16", 1, HETERPS_BALANCED);
        p->tl *= scale[i];
        heterps_profile_finish(p);
        int best[MAX_LAYERS], g;
        double cost = exhaustive(p, best);
        heterps_stage st[MAX_LAYERS];
        heterps_result sta, ps;
        heterps_static(p, best, HETERPS_STA_RATIO, 100000, st, &sta, &g);
        heterps_static(p, best, HETERPS_STA_PS_RATIO, 100000, st, &ps, &g);
        assert_true(cost < ps.cost && ps.cost < sta.cost);
        heterps_profile_free(p);
    }
}

/* Paper mode raises every stage with a DT-bound first stage: on MATCHNET it picks all-GPU, and
 * balanced mode's optimum is 18% cheaper (§3.3 [V]). */
static void test_matchnet_modes(void **state)
{
    (void)state;
    heterps_profile *paper = model_profile("matchnet", 1, HETERPS_PAPER);
    heterps_profile *balanced = model_profile("matchnet", 1, HETERPS_BALANCED);
    int best[MAX_LAYERS];
    char text[MAX_LAYERS + 1];
    double c_paper = exhaustive(paper, best);
    plan_text(best, paper->n_layers, text);
    assert_string_equal(text, "GGGGGGGGGGGGGGGG");
    double c_bal = exhaustive(balanced, best);
    plan_text(best, balanced->n_layers, text);
    assert_true(strchr(text, 'C') && strchr(text, 'G'));
    assert_true(fabs((1 - c_bal / c_paper) - 0.18) <= 0.005);
    heterps_profile_free(paper);
    heterps_profile_free(balanced);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ctrdnn8_optimum),
        cmocka_unit_test(test_ctrdnn16_optimum),
        cmocka_unit_test(test_ctrdnn20_optimum),
        cmocka_unit_test(test_ctrdnn16_cpu_only),
        cmocka_unit_test(test_static_ratios_ctrdnn16),
        cmocka_unit_test(test_static_ratios_matchnet),
        cmocka_unit_test(test_static_order_over_tl),
        cmocka_unit_test(test_matchnet_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
