/* test_heterps_model.c — the HeterPS cost model and provisioning (plugins/shared/heterps) against
 * the worked example of specs/heterps.md §10 and the magnitudes of §4. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "heterps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CPU 0
#define GPU 1

/* |got - want| <= tol * |want| */
static void assert_rel(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fabs(want))) {
        fprintf(stderr, "got %.10g, want %.10g (rel tol %g)\n", got, want, tol);
        fail();
    }
}

/* got rounds to want at the printed number of decimals. */
static void assert_printed(double got, double want, int decimals)
{
    if (!(fabs(got - want) <= 0.5 * pow(10, -decimals))) {
        fprintf(stderr, "got %.10g, printed %.*f\n", got, decimals, want);
        fail();
    }
}

/* §10: T = 2, L = 3, B_o = 100, TL = 10,000, E = 1, M = 36e6, tau_PS = 50e-6, beta = 0.5 for
 * the boundary traffic, no IO.  gpu_limit lets a test tighten N_GPU. */
static heterps_profile *worked_example(double gpu_limit, int mode)
{
    static const double oct[2][3] = {{0.04, 1.00, 0.20}, {0.03, 0.015, 0.005}};
    static const double alpha[3] = {0.95, 0.90, 0.90};
    static const double odt[2][3] = {{0.01, 0.01, 0}, {0.002, 0.002, 0}};
    heterps_profile *p = heterps_profile_alloc(3, 2);
    assert_non_null(p);
    for (int r = 0; r < 2; r++)
        for (int l = 0; l < 3; l++) {
            p->oct[r][l] = oct[r][l];
            p->alpha[r][l] = alpha[l];
            p->bnd[r][l] = odt[r][l];
        }
    p->tau_ps_sparse = 50e-6;
    p->beta_io = 0.5;
    p->beta_bnd = 0.5;
    p->batch_o = 100;
    p->tl = 10000;
    p->epochs = 1;
    p->examples = 36e6;
    p->mode = mode;
    p->price[CPU] = 0.04;
    p->price[GPU] = 2.42;
    p->limit[CPU] = 480;
    p->limit[GPU] = gpu_limit;
    heterps_profile_finish(p);
    return p;
}

static void test_worked_example_cgg(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        heterps_profile *p = worked_example(32, mode);
        int plan[3] = {CPU, GPU, GPU};
        heterps_stage st[3];
        heterps_result r;
        heterps_provision(p, plan, st, &r);
        assert_int_equal(r.n_stages, 2);
        assert_rel(st[0].oct, 0.04, 1e-12);
        assert_rel(st[0].odt, 0.01, 1e-12);
        assert_rel(st[0].beta, 0.5, 1e-12);
        assert_rel(st[1].oct, 0.02, 1e-12);
        assert_rel(st[1].alpha, 0.9, 1e-12);
        assert_true(st[1].odt == 0);
        /* compute bound 0.038/0.008, communication bound 1.0: k*_1 = max = 4.75 */
        assert_rel(heterps_k_min(p, st[0].oct, st[0].alpha), 4.75, 1e-12);
        assert_rel(heterps_k_min(p, st[0].odt, st[0].beta), 1.0, 1e-12);
        assert_rel(st[0].k_real, 4.75, 1e-9);
        assert_rel(st[1].k_real, 2.25, 1e-9);
        assert_int_equal(st[0].k, 5);
        assert_int_equal(st[1].k, 3);
        assert_int_equal(r.n_ps, 1);
        assert_rel(r.thr, 100 / (0.04 * 0.24), 1e-12); /* 10,416.67 ex/s */
        assert_rel(r.et_total, 3456, 1e-12);
        assert_rel(r.cost, 7.20, 1e-12);
        assert_true(r.feasible);
        assert_true(r.cost_pen == r.cost);
        heterps_profile_free(p);
    }
}

static void test_worked_example_ggg(void **state)
{
    (void)state;
    heterps_profile *p = worked_example(32, HETERPS_BALANCED);
    int plan[3] = {GPU, GPU, GPU};
    heterps_stage st[3];
    heterps_result r;
    heterps_provision(p, plan, st, &r);
    assert_int_equal(r.n_stages, 1);
    assert_rel(st[0].oct, 0.05, 1e-12);
    assert_rel(st[0].alpha, 0.93, 1e-12);
    assert_rel(st[0].k_real, 0.0465 / 0.0065, 1e-12);
    assert_int_equal(st[0].k, 8);
    assert_rel(r.thr, 100 / (0.05 * 0.18625), 1e-12); /* 10,738.26 */
    assert_rel(r.et_total, 3352.5, 1e-12);
    assert_rel(r.cost, 3352.5 / 3600 * 19.40, 1e-12);
    assert_rel(r.cost, 18.0663, 1e-5);
    heterps_profile_free(p);
}

static void test_worked_example_infeasible(void **state)
{
    (void)state;
    heterps_profile *p = worked_example(32, HETERPS_BALANCED);
    assert_rel(p->c_ub, 96.64, 1e-12);
    /* Amdahl ceilings of the table: C,C,C 819.7; C,C,G 980.4; C,G,C and G,G,C 5,000. */
    static const int plans[][3] = {{CPU, CPU, CPU}, {CPU, CPU, GPU}, {CPU, GPU, CPU},
                                   {GPU, GPU, CPU}, {GPU, CPU, CPU}, {GPU, CPU, GPU}};
    static const double ceiling[] = {
        100 / ((1 - 1.118 / 1.24) * 1.24), 100 / ((1 - 0.938 / 1.04) * 1.04), 5000, 5000, 0, 0};
    for (int i = 0; i < 6; i++) {
        heterps_stage st[3];
        heterps_result r;
        heterps_provision(p, plans[i], st, &r);
        assert_false(r.feasible);
        assert_false(r.provisioned);
        assert_true(r.cost_pen > p->c_ub);
        if (ceiling[i] > 0)
            assert_rel(r.violation, (10000 - ceiling[i]) / 10000, 1e-9);
        else
            assert_true(r.violation >= 0.9); /* a CPU stage holding l2: ceiling <= 1,000 */
    }
    assert_rel(100 / ((1 - 1.118 / 1.24) * 1.24), 819.7, 1e-4);
    assert_rel(100 / ((1 - 0.938 / 1.04) * 1.04), 980.4, 1e-4);
    heterps_profile_free(p);
}

static void test_worked_example_gpu_limit(void **state)
{
    (void)state;
    heterps_profile *p = worked_example(4, HETERPS_BALANCED);
    int plan[3] = {GPU, GPU, GPU};
    heterps_stage st[3];
    heterps_result r;
    heterps_provision(p, plan, st, &r);
    assert_false(r.feasible);
    assert_rel(r.violation, 1.0, 1e-12); /* (8 - 4)/4 */
    assert_rel(r.cost_pen, 2 * p->c_ub, 1e-12);
    heterps_profile_free(p);
}

/* §3.4: G,G,G with N_GPU = 4 reported capped: 4 GPUs (8 scaled down), f(0.93, 4) = 0.3025,
 * 100 / (0.05 x 0.3025) = 6,611.57 ex/s, 5,445 s, (4 x 2.42 + 0.04) USD/h = 14.7015 USD. */
static void test_worked_example_capped(void **state)
{
    (void)state;
    heterps_profile *p = worked_example(4, HETERPS_BALANCED);
    int plan[3] = {GPU, GPU, GPU};
    heterps_stage st[3];
    heterps_result r;
    heterps_capped(p, plan, st, &r);
    assert_int_equal(st[0].k, 4);
    assert_int_equal(r.n_ps, 1);
    assert_rel(r.thr, 100 / (0.05 * 0.3025), 1e-12);
    assert_rel(r.et_total, 5445, 1e-12);
    assert_rel(r.cost, 5445.0 / 3600 * 9.72, 1e-12);
    assert_false(r.feasible);
    heterps_profile_free(p);
    /* A feasible plan is not changed by capping: C,G,G as provisioned. */
    p = worked_example(32, HETERPS_BALANCED);
    int cgg[3] = {CPU, GPU, GPU};
    heterps_capped(p, cgg, st, &r);
    assert_int_equal(st[0].k, 5);
    assert_int_equal(st[1].k, 3);
    assert_rel(r.cost, 7.20, 1e-12);
    assert_true(r.feasible);
    heterps_profile_free(p);
}

/* Exhaustive search over the 8 plans: the optimum is C,G,G. */
/* Static provisioning (§3.5) of the worked example, by hand.  (C,G,G): S1 = CPU{l1} (OCT 0.04,
 * ODT 0.01, weight max = 0.04), S2 = GPU{l2,l3} (OCT 0.02, alpha 0.9), PS pseudo-stage weight
 * B_o tau_PS = 100 * 50e-6 = 0.005.  S2 needs 0.02 (0.1 + 0.9/g) <= 0.01 (TL 10,000 per 100
 * examples): g >= 2.25, so g = 3.
 * - StaRatio: 18 cores over S1 and the PS, one each and 16 by weight: 16 * 0.04/0.045 = 14.22,
 *   16 * 0.005/0.045 = 1.78, the last unit to the larger remainder (PS): S1 15, PS 3.  S1: CT
 *   0.04 (0.05 + 0.95/15) = 0.004533, DT 0.01 (0.5 + 0.5/15) = 0.005333 -> 18,750 ex/s; S2
 *   0.008 -> 12,500; PS 3/50e-6 = 60,000.  Thr 12,500, ET 36e6/12,500 = 2,880 s = 0.8 h, cost
 *   0.8 (3 * 2.42 + 18 * 0.04) = 6.384 USD.
 * - StaPSRatio: S1 18 cores, 18 PS cores: thr still 12,500 (S2), cost 0.8 (7.26 + 36 * 0.04) =
 *   6.96 USD.
 * (G,G,G): one stage (OCT 0.05, alpha 0.93): 0.05 (0.07 + 0.93/g) <= 0.01 gives g = 8, thr
 * 100 / (0.05 * 0.18625) = 10,738.26, ET 3,352.5 s = 0.93125 h.  StaRatio gives the PS all 48
 * cores: 0.93125 (8 * 2.42 + 48 * 0.04) = 19.817; StaPSRatio pays 48 idle training cores and
 * 48 PS cores: 0.93125 (19.36 + 96 * 0.04) = 21.605.
 * (C,C,C): its Amdahl ceiling (819.7 ex/s) is below TL: refused with g = 0. */
static void test_worked_example_static(void **state)
{
    (void)state;
    heterps_profile *p = worked_example(32, HETERPS_BALANCED);
    heterps_stage st[3];
    heterps_result r;
    int g, cgg[3] = {CPU, GPU, GPU}, ggg[3] = {GPU, GPU, GPU}, ccc[3] = {CPU, CPU, CPU};
    heterps_static(p, cgg, HETERPS_STA_RATIO, 32, st, &r, &g);
    assert_int_equal(g, 3);
    assert_int_equal(st[0].k, 15);
    assert_int_equal(st[1].k, 3);
    assert_int_equal(r.n_ps, 3);
    assert_rel(r.thr, 12500, 1e-12);
    assert_rel(r.et_total, 2880, 1e-12);
    assert_rel(r.cost, 6.384, 1e-12);
    assert_true(r.feasible && r.cost_pen == r.cost);
    heterps_static(p, cgg, HETERPS_STA_PS_RATIO, 32, st, &r, &g);
    assert_int_equal(g, 3);
    assert_int_equal(st[0].k, 18);
    assert_int_equal(st[1].k, 3);
    assert_int_equal(r.n_ps, 18);
    assert_rel(r.thr, 12500, 1e-12);
    assert_rel(r.cost, 6.96, 1e-12);
    assert_true(r.feasible);
    heterps_static(p, ggg, HETERPS_STA_RATIO, 32, st, &r, &g);
    assert_int_equal(g, 8);
    assert_int_equal(r.n_ps, 48);
    assert_rel(r.thr, 100 / (0.05 * 0.18625), 1e-12);
    assert_rel(r.cost, 0.93125 * 21.28, 1e-12);
    heterps_static(p, ggg, HETERPS_STA_PS_RATIO, 32, st, &r, &g);
    assert_int_equal(g, 8);
    assert_int_equal(r.n_ps, 48);
    assert_rel(r.cost, 0.93125 * 23.2, 1e-12);
    /* g_max 7 is one GPU short: no count meets TL, penalised */
    heterps_static(p, ggg, HETERPS_STA_RATIO, 7, st, &r, &g);
    assert_false(r.feasible);
    assert_true(r.cost_pen > p->c_ub);
    heterps_static(p, ccc, HETERPS_STA_PS_RATIO, 32, st, &r, &g);
    assert_int_equal(g, 0);
    assert_false(r.feasible);
    assert_false(r.provisioned);
    assert_true(r.cost_pen > p->c_ub);
    heterps_profile_free(p);
}

static void test_worked_example_optimum(void **state)
{
    (void)state;
    heterps_profile *p = worked_example(32, HETERPS_BALANCED);
    double best = INFINITY;
    int best_code = -1;
    for (int code = 0; code < 8; code++) {
        int plan[3] = {(code >> 2) & 1, (code >> 1) & 1, code & 1};
        heterps_stage st[3];
        heterps_result r;
        heterps_provision(p, plan, st, &r);
        if (r.cost_pen < best) {
            best = r.cost_pen;
            best_code = code;
        }
    }
    assert_int_equal(best_code, 3); /* 0b011 = C,G,G */
    assert_rel(best, 7.20, 1e-12);
    heterps_profile_free(p);
}

/* §4's magnitudes at B_o = 512 (ms per batch on one unit, CPU / V100). */
static void test_profile_magnitudes(void **state)
{
    (void)state;
    heterps_layer layers[4] = {
        {.kind = HETERPS_EMB,
         .ids = 26,
         .dim = 10,
         .rows = 1000001,
         .in = 26,
         .out = 260,
         .cut = 273},
        {.kind = HETERPS_FC, .flops = 2 * 400 * 400, .in = 400, .out = 400, .cut = 400},
        {.kind = HETERPS_RNN,
         .flops = 79 * 3 * 2 * 256 * 128,
         .steps = 79,
         .in = 10112,
         .out = 10112,
         .cut = 10112},
        {.kind = HETERPS_CONCAT, .in = 273, .out = 273, .cut = 273},
    };
    heterps_hw hw;
    heterps_hw_default(&hw);
    heterps_profile *p = heterps_profile_new(layers, 4, 2, &hw, 0.999, 0.995);
    assert_non_null(p);
    assert_printed(p->oct[CPU][0] * 1e3, 4.18, 2);
    assert_printed(p->oct[GPU][0] * 1e3, 0.73, 2);
    assert_printed(p->io[CPU][0] * 1e3, 4.50, 2);
    assert_printed(p->io[GPU][0] * 1e3, 0.75, 2);
    assert_printed(p->oct[CPU][1] * 1e3, 10.3, 1);
    assert_printed(p->oct[GPU][1] * 1e3, 0.116, 3);
    assert_printed(p->oct[CPU][2] * 1e3, 2396, 0);
    assert_printed(p->oct[GPU][2] * 1e3, 13.7, 1);
    assert_printed(p->bnd[CPU][3] * 1e3, 4.34, 2);
    assert_printed(p->bnd[GPU][3] * 1e3, 0.77, 2);
    heterps_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example_cgg),
        cmocka_unit_test(test_worked_example_ggg),
        cmocka_unit_test(test_worked_example_infeasible),
        cmocka_unit_test(test_worked_example_gpu_limit),
        cmocka_unit_test(test_worked_example_optimum),
        cmocka_unit_test(test_worked_example_capped),
        cmocka_unit_test(test_worked_example_static),
        cmocka_unit_test(test_profile_magnitudes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
