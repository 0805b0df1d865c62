/* bo.c — HeterPS baseline placer: Bayesian optimisation over plans (specs/heterps.md §7.3): an
 * exact GP on plans with the Hamming kernel exp(-3 d_H / L), target ln C_pen standardised,
 * expected improvement over fresh random plans and the incumbent's single-layer mutations. */
#include "placebench.h"

#include "heterps.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct bo_opts {
    long long initial, budget, candidates;
    double xi, noise, length;
} bo_opts;

static const pb_option_def bo_options[] = {
    {.name = "initial",
     .type = PB_OPT_INT,
     .default_value = "10",
     .min = 1,
     .max = 100000,
     .help = "uniformly random plans evaluated before the GP guides the search",
     .offset = offsetof(bo_opts, initial)},
    {.name = "budget",
     .type = PB_OPT_INT,
     .default_value = "150",
     .min = 1,
     .max = 100000,
     .help = "plans evaluated in all, the initial ones included (the run's sim_calls, when set, "
             "wins)",
     .offset = offsetof(bo_opts, budget)},
    {.name = "candidates",
     .type = PB_OPT_INT,
     .default_value = "256",
     .min = 0,
     .max = 1000000,
     .help = "fresh random plans per acquisition, besides the incumbent's L*(T-1) single-layer "
             "mutations",
     .offset = offsetof(bo_opts, candidates)},
    {.name = "xi",
     .type = PB_OPT_DOUBLE,
     .default_value = "0.01",
     .min = 0,
     .max = 10,
     .help = "exploration margin of expected improvement",
     .offset = offsetof(bo_opts, xi)},
    {.name = "noise",
     .type = PB_OPT_DOUBLE,
     .default_value = "1e-6",
     .min = 0,
     .max = 1,
     .help = "GP noise variance added to the kernel's diagonal",
     .offset = offsetof(bo_opts, noise)},
    {.name = "length",
     .type = PB_OPT_DOUBLE,
     .default_value = "3",
     .min = 1e-6,
     .max = 1e6,
     .help = "kernel sharpness c of exp(-c d_H / L)",
     .offset = offsetof(bo_opts, length)},
};

typedef struct bo_placer {
    bo_opts o;
    const pb_host *host;
    pb_rng rng;
} bo_placer;

/* The evaluated plans, their targets and the GP's factorisation. */
typedef struct bo_state {
    int n, cap, L, T;
    int *x;       /* [cap * L] evaluated plans */
    double *y;    /* [cap] ln C_pen */
    double *chol; /* [cap * cap] lower Cholesky factor of K + noise I */
    double *alpha, *z, *kstar, *v;
    double mean, sd, best_z; /* standardisation and the best standardised target */
} bo_state;

static int bo_create(const pb_create_args *a, void **instance, pb_error *err)
{
    bo_placer *b = malloc(sizeof *b);
    if (!b)
        return pb_errorf(err, "out of memory");
    *b = (bo_placer){.o = *(const bo_opts *)a->options, .host = a->host};
    pb_rng_seed(&b->rng, a->seed);
    *instance = b;
    return PB_OK;
}

static void bo_destroy(void *instance)
{
    free(instance);
}

static double bo_kernel(const bo_placer *b, const int *x1, const int *x2, int L)
{
    int d = 0;
    for (int l = 0; l < L; l++)
        d += x1[l] != x2[l];
    return exp(-b->o.length * d / L);
}

/* Refits the GP on the n plans: standardises y, factorises, solves for alpha.  0 when the
 * kernel matrix is not positive definite. */
static int bo_fit(const bo_placer *b, bo_state *st)
{
    int n = st->n, L = st->L;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++)
        sum += st->y[i];
    st->mean = sum / n;
    for (int i = 0; i < n; i++)
        sq += (st->y[i] - st->mean) * (st->y[i] - st->mean);
    st->sd = n > 1 && sq > 0 ? sqrt(sq / n) : 1.0;
    st->best_z = INFINITY;
    for (int i = 0; i < n; i++) {
        st->z[i] = (st->y[i] - st->mean) / st->sd;
        st->best_z = st->z[i] < st->best_z ? st->z[i] : st->best_z;
    }
    double *c = st->chol;
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double s = bo_kernel(b, st->x + (size_t)i * L, st->x + (size_t)j * L, L);
            if (i == j)
                s += b->o.noise;
            for (int k = 0; k < j; k++)
                s -= c[i * n + k] * c[j * n + k];
            if (i == j && s <= 0)
                return 0;
            c[i * n + j] = i == j ? sqrt(s) : s / c[j * n + j];
        }
    for (int i = 0; i < n; i++) { /* L a = z, then L^T alpha = a */
        double s = st->z[i];
        for (int k = 0; k < i; k++)
            s -= c[i * n + k] * st->alpha[k];
        st->alpha[i] = s / c[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = st->alpha[i];
        for (int k = i + 1; k < n; k++)
            s -= c[k * n + i] * st->alpha[k];
        st->alpha[i] = s / c[i * n + i];
    }
    return 1;
}

/* Expected improvement (minimisation) of plan x under the fitted GP. */
static double bo_ei(const bo_placer *b, bo_state *st, const int *x)
{
    int n = st->n, L = st->L;
    double mu = 0;
    for (int i = 0; i < n; i++) {
        st->kstar[i] = bo_kernel(b, x, st->x + (size_t)i * L, L);
        mu += st->kstar[i] * st->alpha[i];
    }
    double var = 1.0 + b->o.noise;
    for (int i = 0; i < n; i++) {
        double s = st->kstar[i];
        for (int k = 0; k < i; k++)
            s -= st->chol[i * n + k] * st->v[k];
        st->v[i] = s / st->chol[i * n + i];
        var -= st->v[i] * st->v[i];
    }
    double sigma = var > 0 ? sqrt(var) : 0, gain = st->best_z - mu - b->o.xi;
    if (sigma <= 0)
        return gain > 0 ? gain : 0;
    double u = gain / sigma;
    return gain * 0.5 * erfc(-u / sqrt(2.0)) +
           sigma * exp(-0.5 * u * u) / sqrt(2 * 3.14159265358979323846);
}

static int bo_seen(const bo_state *st, const int *x)
{
    for (int i = 0; i < st->n; i++)
        if (memcmp(st->x + (size_t)i * st->L, x, (size_t)st->L * sizeof(int)) == 0)
            return 1;
    return 0;
}

/* Scores candidate x and keeps it in best when its EI is higher. */
static void bo_consider(const bo_placer *b, bo_state *st, const int *x, int *best, double *best_ei)
{
    if (bo_seen(st, x))
        return;
    double ei = bo_ei(b, st, x);
    if (ei > *best_ei) {
        *best_ei = ei;
        memcpy(best, x, (size_t)st->L * sizeof(int));
    }
}

/* The next plan to evaluate into next; 0 when every candidate was evaluated already. */
static int bo_acquire(bo_placer *b, bo_state *st, const int *incumbent, int *cand, int *next)
{
    int L = st->L;
    double best_ei = -1;
    for (long long c = 0; c < b->o.candidates; c++) {
        for (int l = 0; l < L; l++)
            cand[l] = (int)pb_rng_below(&b->rng, (uint64_t)st->T);
        bo_consider(b, st, cand, next, &best_ei);
    }
    for (int l = 0; l < L; l++)
        for (int t = 0; t < st->T; t++) {
            if (t == incumbent[l])
                continue;
            memcpy(cand, incumbent, (size_t)L * sizeof(int));
            cand[l] = t;
            bo_consider(b, st, cand, next, &best_ei);
        }
    return best_ei >= 0;
}

static int bo_add(bo_state *st, heterps_search *s, const int *x, pb_error *err)
{
    double cost;
    if (heterps_search_eval(s, x, &cost, NULL, err))
        return PB_ERR;
    memcpy(st->x + (size_t)st->n * st->L, x, (size_t)st->L * sizeof(int));
    st->y[st->n++] = log(cost);
    return PB_OK;
}

static int bo_run(bo_placer *b, heterps_search *s, bo_state *st, int *cand, int *next,
                  pb_error *err)
{
    int L = st->L;
    long long initial = b->o.initial < st->cap ? b->o.initial : st->cap;
    for (long long i = 0; i < initial; i++) {
        for (int l = 0; l < L; l++)
            next[l] = (int)pb_rng_below(&b->rng, (uint64_t)st->T);
        if (!bo_seen(st, next) && bo_add(st, s, next, err))
            return PB_ERR;
    }
    while (st->n < st->cap && !b->host->deadline_passed(b->host->ctx)) {
        if (!bo_fit(b, st))
            return pb_errorf(err, "bo: the GP kernel matrix is not positive definite (raise "
                                  "noise)");
        if (!bo_acquire(b, st, s->best_plan, cand, next))
            break;
        if (bo_add(st, s, next, err))
            return PB_ERR;
        pb_progress pr = {.struct_size = sizeof pr,
                          .episode = st->n,
                          .episode_best_us = s->best_time_us,
                          .best_so_far_us = s->best_time_us,
                          .sim_calls = s->evaluations};
        b->host->progress(b->host->ctx, &pr);
    }
    return PB_OK;
}

static int bo_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                    pb_error *err)
{
    bo_placer *b = instance;
    heterps_search s;
    *initial_us = -1;
    if (heterps_search_init(&s, p, b->host, err))
        return PB_ERR;
    bo_state st = {.L = s.n_layers, .T = s.n_types};
    st.cap = (int)(p->budget->sim_calls > 0 ? p->budget->sim_calls : b->o.budget);
    size_t cap = (size_t)st.cap, L = (size_t)st.L;
    st.x = malloc(cap * L * sizeof(int));
    st.y = malloc(cap * sizeof(double));
    st.chol = malloc(cap * cap * sizeof(double));
    st.alpha = malloc(cap * sizeof(double));
    st.z = malloc(cap * sizeof(double));
    st.kstar = malloc(cap * sizeof(double));
    st.v = malloc(cap * sizeof(double));
    int *cand = malloc(L * sizeof(int)), *next = malloc(L * sizeof(int));
    int rc = st.x && st.y && st.chol && st.alpha && st.z && st.kstar && st.v && cand && next
                 ? bo_run(b, &s, &st, cand, next, err)
                 : pb_errorf(err, "out of memory");
    if (rc == PB_OK)
        rc = heterps_search_finish(&s, best, err);
    free(st.x);
    free(st.y);
    free(st.chol);
    free(st.alpha);
    free(st.z);
    free(st.kstar);
    free(st.v);
    free(cand);
    free(next);
    heterps_search_free(&s);
    return rc;
}

static const pb_placer_ops bo_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = bo_create,
    .destroy = bo_destroy,
    .place = bo_place,
    /* a plan of per-layer resource types, costed by the HeterPS model only */
    .simulators = "heterps",
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "bo", "1.0",
                       "HeterPS baseline: Bayesian optimisation over plans, GP with a Hamming "
                       "kernel and expected improvement (use with the heterps simulator)",
                       bo_options, bo_opts, &bo_ops);
