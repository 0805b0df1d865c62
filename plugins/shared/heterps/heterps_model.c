/* heterps_model.c — profiles, stages, Formulas 1-7 in their per-example reading, PS cores,
 * provisioning (Formulas 11-13) and the penalised objective (specs/heterps.md §2-3). */
#include "heterps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Relative tolerance of the throughput limit (§1: ">=" with 1e-9). */
#define HETERPS_TOL 1e-9
#define HETERPS_NEWTON_ITERS 100

heterps_profile *heterps_profile_alloc(int n_layers, int n_types)
{
    heterps_profile *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->n_layers = n_layers;
    p->n_types = n_types;
    size_t nl = (size_t)n_layers, ns = nl + 1, nt = (size_t)n_types;
    int ok = 1;
    for (int r = 0; r < HETERPS_N_ROLES; r++) {
        ok &= (p->oct[r] = calloc(nl, sizeof(double))) != NULL;
        ok &= (p->alpha[r] = calloc(nl, sizeof(double))) != NULL;
        ok &= (p->io[r] = calloc(nl, sizeof(double))) != NULL;
        ok &= (p->bnd[r] = calloc(nl, sizeof(double))) != NULL;
        ok &= (p->sum_oct[r] = calloc(ns, sizeof(double))) != NULL;
        ok &= (p->sum_aoct[r] = calloc(ns, sizeof(double))) != NULL;
        ok &= (p->sum_io[r] = calloc(ns, sizeof(double))) != NULL;
    }
    ok &= (p->ps_dense = calloc(nl, sizeof(double))) != NULL;
    ok &= (p->sum_ps = calloc(ns, sizeof(double))) != NULL;
    ok &= (p->role = calloc(nt, sizeof(int))) != NULL;
    ok &= (p->price = calloc(nt, sizeof(double))) != NULL;
    ok &= (p->limit = calloc(nt, sizeof(double))) != NULL;
    if (!ok) {
        heterps_profile_free(p);
        return NULL;
    }
    for (int t = 1; t < n_types; t++)
        p->role[t] = HETERPS_GPU;
    p->mode = HETERPS_BALANCED;
    return p;
}

void heterps_profile_free(heterps_profile *p)
{
    if (!p)
        return;
    for (int r = 0; r < HETERPS_N_ROLES; r++) {
        free(p->oct[r]);
        free(p->alpha[r]);
        free(p->io[r]);
        free(p->bnd[r]);
        free(p->sum_oct[r]);
        free(p->sum_aoct[r]);
        free(p->sum_io[r]);
    }
    free(p->ps_dense);
    free(p->sum_ps);
    free(p->role);
    free(p->price);
    free(p->limit);
    free(p);
}

void heterps_profile_finish(heterps_profile *p)
{
    for (int r = 0; r < HETERPS_N_ROLES; r++)
        for (int l = 0; l < p->n_layers; l++) {
            p->sum_oct[r][l + 1] = p->sum_oct[r][l] + p->oct[r][l];
            p->sum_aoct[r][l + 1] = p->sum_aoct[r][l] + p->alpha[r][l] * p->oct[r][l];
            p->sum_io[r][l + 1] = p->sum_io[r][l] + p->io[r][l];
        }
    for (int l = 0; l < p->n_layers; l++)
        p->sum_ps[l + 1] = p->sum_ps[l] + p->ps_dense[l];
    double rate = 0;
    for (int t = 0; t < p->n_types; t++)
        rate += p->price[t] * p->limit[t];
    p->c_ub = p->epochs * p->examples / p->tl / 3600.0 * rate;
}

double heterps_amdahl(double g, double k)
{
    return 1.0 - g + g / k;
}

double heterps_k_min_at(const heterps_profile *p, double thr, double x, double g)
{
    if (x <= 0)
        return 0;
    double den = p->batch_o / thr - (1.0 - g) * x;
    return den > 0 ? g * x / den : INFINITY;
}

double heterps_k_min(const heterps_profile *p, double x, double g)
{
    return heterps_k_min_at(p, p->tl, x, g);
}

int heterps_stages(const heterps_profile *p, const int *plan, heterps_stage *st)
{
    int n = 0;
    for (int l = 0; l < p->n_layers; l++) {
        if (l > 0 && plan[l] == plan[l - 1]) {
            st[n - 1].last = l;
            continue;
        }
        st[n++] = (heterps_stage){.first = l, .last = l, .type = plan[l]};
    }
    for (int i = 0; i < n; i++) {
        heterps_stage *s = &st[i];
        int r = p->role[s->type];
        s->oct = p->sum_oct[r][s->last + 1] - p->sum_oct[r][s->first];
        s->alpha =
            s->oct > 0 ? (p->sum_aoct[r][s->last + 1] - p->sum_aoct[r][s->first]) / s->oct : 0;
        double io = p->sum_io[r][s->last + 1] - p->sum_io[r][s->first];
        double bnd = i + 1 < n ? p->bnd[r][s->last] : 0;
        s->odt = io + bnd;
        s->beta = s->odt > 0 ? (p->beta_io * io + p->beta_bnd * bnd) / s->odt : 1.0;
    }
    return n;
}

/* Examples per second of stage s on k (real) units. */
static double heterps_stage_thr(const heterps_profile *p, const heterps_stage *s, double k)
{
    double ct = s->oct / p->batch_o * heterps_amdahl(s->alpha, k);
    double dt = s->odt / p->batch_o * heterps_amdahl(s->beta, k);
    double et = ct > dt ? ct : dt;
    return et > 0 ? 1.0 / et : INFINITY;
}

static double heterps_tau_stages(const heterps_profile *p, const heterps_stage *st, int n)
{
    double tau = p->tau_ps_sparse;
    for (int i = 0; i < n; i++)
        if (p->role[st[i].type] == HETERPS_CPU)
            tau += p->sum_ps[st[i].last + 1] - p->sum_ps[st[i].first];
    return tau;
}

double heterps_tau_ps(const heterps_profile *p, const int *plan)
{
    double tau = p->tau_ps_sparse;
    for (int l = 0; l < p->n_layers; l++)
        if (p->role[plan[l]] == HETERPS_CPU)
            tau += p->ps_dense[l];
    return tau;
}

static int heterps_ps_for_tau(const heterps_profile *p, double tau)
{
    return (int)ceil(p->tl * tau - 1e-9);
}

int heterps_ps_cores(const heterps_profile *p, const int *plan)
{
    return heterps_ps_for_tau(p, heterps_tau_ps(p, plan));
}

/* The result of a plan no unit count can make feasible, with violation v. */
static void heterps_unprovisioned(const heterps_profile *p, int n, double v, const char *reason,
                                  heterps_result *r)
{
    *r = (heterps_result){.n_stages = n, .violation = v, .reason = reason};
    r->cost_pen = p->c_ub * (1.0 + (v < 1 ? v : 1));
}

void heterps_evaluate_counts(const heterps_profile *p, const heterps_stage *st, int n, int n_ps,
                             heterps_result *r)
{
    *r = (heterps_result){.n_stages = n, .n_ps = n_ps, .provisioned = 1, .reason = ""};
    double thr = INFINITY, tau = heterps_tau_stages(p, st, n);
    for (int i = 0; i < n; i++) {
        double t = heterps_stage_thr(p, &st[i], st[i].k);
        thr = t < thr ? t : thr;
    }
    if (tau > 0) {
        double t = n_ps / tau;
        thr = t < thr ? t : thr;
    }
    r->thr = thr;
    r->et_total = p->epochs * p->examples / thr;
    double rate = p->price[0] * n_ps, v = 0;
    for (int i = 0; i < n; i++)
        rate += p->price[st[i].type] * st[i].k;
    r->cost = r->et_total / 3600.0 * rate;
    if (thr < p->tl * (1.0 - HETERPS_TOL)) {
        v = (p->tl - thr) / p->tl;
        r->reason = "the throughput is below the limit";
    }
    for (int t = 0; t < p->n_types; t++) {
        double k = t == 0 ? n_ps : 0;
        for (int i = 0; i < n; i++)
            k += st[i].type == t ? st[i].k : 0;
        if (k > p->limit[t] && (k - p->limit[t]) / p->limit[t] > v) {
            v = (k - p->limit[t]) / p->limit[t];
            r->reason = "a resource type exceeds its limit";
        }
    }
    r->violation = v;
    r->feasible = v == 0;
    r->cost_pen = r->feasible ? r->cost : p->c_ub * (1.0 + (v < 1 ? v : 1));
}

/* Formula 12: stage i's units that balance its computation with stage 0's at k1; <= 0 when no
 * count can. */
static double heterps_formula12(const heterps_stage *s0, const heterps_stage *si, double k1)
{
    if (si->oct <= 0)
        return 0;
    double den = s0->oct / si->oct * heterps_amdahl(s0->alpha, k1) - (1.0 - si->alpha);
    return den > 0 ? si->alpha / den : -1;
}

/* h(k1) of §3.3 (paper mode); *ok = 0 when some stage cannot match stage 0. */
static double heterps_paper_h(const heterps_profile *p, const heterps_stage *st, int n, double k1,
                              int *ok)
{
    double thr = heterps_stage_thr(p, &st[0], k1);
    for (int i = 1; i < n; i++) {
        double k = heterps_formula12(&st[0], &st[i], k1);
        if (k < 0) {
            *ok = 0;
            return 0;
        }
        double t = heterps_stage_thr(p, &st[i], k);
        thr = t < thr ? t : thr;
    }
    return thr - p->tl;
}

/* Paper mode: k1 by the safeguarded Newton iteration of §3.3, then Formula 12.  Returns 0 when
 * the plan cannot be provisioned this way. */
static int heterps_paper_counts(const heterps_profile *p, heterps_stage *st, int n)
{
    int ok = 1;
    double eps = HETERPS_TOL * p->tl;
    double lo = heterps_k_min(p, st[0].oct, st[0].alpha), k = lo;
    double h = heterps_paper_h(p, st, n, lo, &ok);
    if (!ok)
        return 0;
    if (h < -eps) {
        double hi = 2 * lo > 1 ? 2 * lo : 1;
        while ((h = heterps_paper_h(p, st, n, hi, &ok)) < 0 && ok) {
            lo = hi;
            hi *= 2;
            if (hi > p->limit[st[0].type])
                return 0;
        }
        if (!ok)
            return 0;
        k = lo;
        for (int it = 0; it < HETERPS_NEWTON_ITERS; it++) {
            h = heterps_paper_h(p, st, n, k, &ok);
            if (!ok)
                return 0;
            if (fabs(h) <= eps)
                break;
            if (h < 0)
                lo = k;
            else
                hi = k;
            double d = 1e-6 * k;
            double slope =
                (heterps_paper_h(p, st, n, k + d, &ok) - heterps_paper_h(p, st, n, k - d, &ok)) /
                (2 * d);
            if (!ok)
                return 0;
            double next = slope > 0 ? k - h / slope : lo;
            k = slope > 0 && next > lo && next < hi ? next : 0.5 * (lo + hi);
        }
    }
    st[0].k_real = k;
    for (int i = 1; i < n; i++)
        st[i].k_real = heterps_formula12(&st[0], &st[i], k);
    return 1;
}

int heterps_ceiling_blocked(const heterps_profile *p, const heterps_stage *st, int n,
                            heterps_result *r)
{
    double v = 0;
    int blocked = 0;
    for (int i = 0; i < n; i++) {
        double a = (1.0 - st[i].alpha) * st[i].oct, b = (1.0 - st[i].beta) * st[i].odt;
        double serial = a > b ? a : b;
        double ceiling = serial > 0 ? p->batch_o / serial : INFINITY;
        if (ceiling > p->tl)
            continue;
        blocked = 1;
        v = (p->tl - ceiling) / p->tl > v ? (p->tl - ceiling) / p->tl : v;
    }
    if (blocked)
        heterps_unprovisioned(p, n, v, "a stage cannot reach the throughput limit (Amdahl ceiling)",
                              r);
    return blocked;
}

void heterps_provision(const heterps_profile *p, const int *plan, heterps_stage *st,
                       heterps_result *r)
{
    int n = heterps_stages(p, plan, st);
    if (heterps_ceiling_blocked(p, st, n, r))
        return;
    if (p->mode == HETERPS_PAPER) {
        if (!heterps_paper_counts(p, st, n)) {
            heterps_unprovisioned(p, n, 1.0, "paper-mode provisioning found no unit counts", r);
            return;
        }
    } else {
        for (int i = 0; i < n; i++) {
            double kc = heterps_k_min(p, st[i].oct, st[i].alpha);
            double kd = heterps_k_min(p, st[i].odt, st[i].beta);
            st[i].k_real = kc > kd ? kc : kd;
        }
    }
    for (int i = 0; i < n; i++) {
        /* Counts beyond any limit only need to stay representable: the limit check fails. */
        double k = ceil(st[i].k_real - 1e-9);
        st[i].k = k < 1 ? 1 : k > 1e9 ? 1000000000 : (int)k;
    }
    int n_ps = heterps_ps_for_tau(p, heterps_tau_stages(p, st, n));
    heterps_evaluate_counts(p, st, n, n_ps, r);
}
