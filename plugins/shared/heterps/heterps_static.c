/* heterps_static.c — provisioning other than PROVISION(SP): the static baselines StaRatio
 * (GPU : core = 1 : 6) and StaPSRatio (GPU : training cores : PS cores = 1 : 6 : 6) of
 * specs/heterps.md §3.5, and the capped evaluation of fixed plans (§3.4). */
#include "heterps.h"

#include <math.h>
#include <stdlib.h>

#define HETERPS_MAX_SPLIT 4096

int heterps_split(const double *w, int m, int units, int *out)
{
    if (units < m)
        return 0;
    double total = 0, rest[HETERPS_MAX_SPLIT];
    for (int i = 0; i < m; i++)
        total += w[i];
    int free_units = units - m, given = 0;
    for (int i = 0; i < m; i++) {
        double q = total > 0 ? free_units * w[i] / total : (double)free_units / m;
        out[i] = 1 + (int)floor(q);
        rest[i] = q - floor(q);
        given += out[i] - 1;
    }
    for (; given < free_units; given++) {
        int best = 0;
        for (int i = 1; i < m; i++)
            best = rest[i] > rest[best] ? i : best;
        out[best]++;
        rest[best] = -1;
    }
    return 1;
}

/* Stage indices of one role (plus, for CPU under StaRatio, the PS pseudo-stage as index n). */
static int heterps_class(const heterps_profile *p, const heterps_stage *st, int n, int role,
                         int with_ps, double tau, int *idx, double *w)
{
    int m = 0;
    for (int i = 0; i < n && m < HETERPS_MAX_SPLIT - 1; i++) {
        if (p->role[st[i].type] != role)
            continue;
        idx[m] = i;
        w[m++] = st[i].oct > st[i].odt ? st[i].oct : st[i].odt;
    }
    if (with_ps && tau > 0) {
        idx[m] = n;
        w[m++] = p->batch_o * tau;
    }
    return m;
}

/* The counts of ratio `which` at g GPUs, then the evaluation; 0 when g is too small to give every
 * stage a unit. */
static int heterps_static_at(const heterps_profile *p, heterps_stage *st, int n, int which, int g,
                             double tau, heterps_result *r)
{
    int idx[HETERPS_MAX_SPLIT], units[HETERPS_MAX_SPLIT];
    double w[HETERPS_MAX_SPLIT];
    w[0] = 0; /* GCC -O3 warns that w may be read uninitialised (m = 0 reads none) */
    int ps_share = which == HETERPS_STA_RATIO;
    int m = heterps_class(p, st, n, HETERPS_GPU, 0, tau, idx, w);
    if (!heterps_split(w, m, g, units))
        return 0;
    for (int j = 0; j < m; j++)
        st[idx[j]].k = units[j];
    int used_gpu = m > 0;
    m = heterps_class(p, st, n, HETERPS_CPU, ps_share, tau, idx, w);
    if (!heterps_split(w, m, 6 * g, units))
        return 0;
    int n_ps = ps_share ? 0 : 6 * g, used_cpu = 0;
    for (int j = 0; j < m; j++) {
        if (idx[j] == n)
            n_ps = units[j];
        else
            st[idx[j]].k = units[j];
        used_cpu += units[j];
    }
    heterps_evaluate_counts(p, st, n, n_ps, r);
    /* Idle units are paid for: the training cores of a plan without CPU stages (StaPSRatio) and
     * the GPUs of a plan without GPU stages (priced as type 1). */
    double idle =
        (ps_share ? 0 : 6 * g - used_cpu) * p->price[0] + (used_gpu ? 0 : g * p->price[1]);
    r->cost += r->et_total / 3600.0 * idle;
    if (r->feasible)
        r->cost_pen = r->cost;
    return 1;
}

void heterps_static(const heterps_profile *p, const int *plan, int which, int g_max,
                    heterps_stage *st, heterps_result *r, int *g_out)
{
    *g_out = 0;
    if (p->n_layers >= HETERPS_MAX_SPLIT) {
        *r = (heterps_result){.reason = "too many layers for static provisioning", .violation = 1};
        r->cost_pen = 2 * p->c_ub;
        return;
    }
    int n = heterps_stages(p, plan, st);
    if (heterps_ceiling_blocked(p, st, n, r))
        return;
    double tau = heterps_tau_ps(p, plan);
    *r = (heterps_result){.n_stages = n, .reason = "no GPU count meets the throughput limit"};
    r->cost_pen = 2 * p->c_ub;
    r->violation = 1;
    for (int g = 1; g <= g_max; g++) {
        heterps_result at;
        if (!heterps_static_at(p, st, n, which, g, tau, &at))
            continue;
        *r = at;
        *g_out = g;
        if (at.thr >= p->tl * (1.0 - 1e-9))
            return;
    }
}

/* The real count at which stage s runs at throughput thr (Formula 13 with thr for TL). */
static double heterps_k_at(const heterps_profile *p, const heterps_stage *s, double thr)
{
    double kc = heterps_k_min_at(p, thr, s->oct, s->alpha);
    double kd = heterps_k_min_at(p, thr, s->odt, s->beta);
    return kc > kd ? kc : kd;
}

/* Scales the counts of type t (stages, and the PS cores for t = 0) down to its limit. */
static void heterps_cap_type(const heterps_profile *p, heterps_stage *st, int n, int *n_ps, int t)
{
    int idx[HETERPS_MAX_SPLIT], units[HETERPS_MAX_SPLIT], m = 0;
    double w[HETERPS_MAX_SPLIT], total = 0;
    for (int i = 0; i < n; i++)
        if (st[i].type == t) {
            idx[m] = i;
            w[m++] = st[i].k;
            total += st[i].k;
        }
    if (t == 0 && *n_ps > 0) {
        idx[m] = n;
        w[m++] = *n_ps;
        total += *n_ps;
    }
    int limit = (int)floor(p->limit[t]);
    if (total <= limit || !heterps_split(w, m, limit, units))
        return;
    for (int j = 0; j < m; j++) {
        if (idx[j] == n)
            *n_ps = units[j];
        else
            st[idx[j]].k = units[j];
    }
}

void heterps_capped(const heterps_profile *p, const int *plan, heterps_stage *st, heterps_result *r)
{
    if (p->n_layers >= HETERPS_MAX_SPLIT) {
        *r = (heterps_result){.reason = "too many layers for a capped evaluation", .violation = 1};
        r->cost_pen = 2 * p->c_ub;
        return;
    }
    int n = heterps_stages(p, plan, st);
    for (int i = 0; i < n; i++) {
        double a = (1.0 - st[i].alpha) * st[i].oct, b = (1.0 - st[i].beta) * st[i].odt;
        double serial = a > b ? a : b;
        double ceiling = serial > 0 ? p->batch_o / serial : INFINITY;
        double k = heterps_k_at(p, &st[i], ceiling > p->tl ? p->tl : 0.99 * ceiling);
        k = ceil(k - 1e-9);
        st[i].k = k < 1 ? 1 : k > 1e9 ? 1000000000 : (int)k;
    }
    int n_ps = heterps_ps_cores(p, plan);
    for (int t = 0; t < p->n_types; t++)
        heterps_cap_type(p, st, n, &n_ps, t);
    heterps_evaluate_counts(p, st, n, n_ps, r);
}
