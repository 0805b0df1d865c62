/* genetic.c — HeterPS baseline placer: a genetic algorithm over plans (specs/heterps.md §7.4):
 * uniform random initial population, elitism, tournament selection, one-point crossover,
 * per-gene mutation to a uniform type; fitness is the penalised cost. */
#include "placebench.h"

#include "heterps.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct genetic_opts {
    long long population, generations, elitism, tournament;
    double crossover, mutation;
} genetic_opts;

static const pb_option_def genetic_options[] = {
    {.name = "population",
     .type = PB_OPT_INT,
     .default_value = "50",
     .min = 2,
     .max = 100000,
     .help = "chromosomes (plans) per generation",
     .offset = offsetof(genetic_opts, population)},
    {.name = "generations",
     .type = PB_OPT_INT,
     .default_value = "100",
     .min = 0,
     .max = 1000000,
     .help = "generations after the initial population",
     .offset = offsetof(genetic_opts, generations)},
    {.name = "elitism",
     .type = PB_OPT_INT,
     .default_value = "2",
     .min = 0,
     .max = 100000,
     .help = "best plans copied unchanged into the next generation",
     .offset = offsetof(genetic_opts, elitism)},
    {.name = "tournament",
     .type = PB_OPT_INT,
     .default_value = "3",
     .min = 1,
     .max = 100000,
     .help = "plans drawn (with replacement) per tournament selection",
     .offset = offsetof(genetic_opts, tournament)},
    {.name = "crossover",
     .type = PB_OPT_DOUBLE,
     .default_value = "0.9",
     .min = 0,
     .max = 1,
     .help = "probability of one-point crossover of two parents",
     .offset = offsetof(genetic_opts, crossover)},
    {.name = "mutation",
     .type = PB_OPT_DOUBLE,
     .default_value = "0",
     .min = 0,
     .max = 1,
     .help = "per-gene probability of mutation to a uniform type; 0 = 1/L",
     .offset = offsetof(genetic_opts, mutation)},
};

typedef struct genetic_placer {
    genetic_opts o;
    const pb_host *host;
    pb_rng rng;
} genetic_placer;

/* One generation's plans (row i at plan + i*n) and their costs. */
typedef struct genetic_pop {
    int *plan;
    double *cost;
} genetic_pop;

static int genetic_create(const pb_create_args *a, void **instance, pb_error *err)
{
    const genetic_opts *o = a->options;
    if (o->elitism > o->population)
        return pb_errorf(err, "genetic: elitism (%lld) exceeds the population (%lld)", o->elitism,
                         o->population);
    genetic_placer *g = malloc(sizeof *g);
    if (!g)
        return pb_errorf(err, "out of memory");
    *g = (genetic_placer){.o = *o, .host = a->host};
    pb_rng_seed(&g->rng, a->seed);
    *instance = g;
    return PB_OK;
}

static void genetic_destroy(void *instance)
{
    free(instance);
}

/* Index of the better of plans i and j: lower cost, ties to the smaller plan. */
static int genetic_better(const genetic_pop *p, int n, int i, int j)
{
    if (p->cost[i] != p->cost[j])
        return p->cost[i] < p->cost[j] ? i : j;
    return heterps_plan_less(p->plan + (size_t)j * n, p->plan + (size_t)i * n, n) ? j : i;
}

static int genetic_tournament(genetic_placer *g, const genetic_pop *p, int n)
{
    int best = (int)pb_rng_below(&g->rng, (uint64_t)g->o.population);
    for (long long k = 1; k < g->o.tournament; k++)
        best = genetic_better(p, n, best, (int)pb_rng_below(&g->rng, (uint64_t)g->o.population));
    return best;
}

/* Moves the `elitism` best plans of cur to the front of next, in order. */
static void genetic_elites(const genetic_placer *g, const genetic_pop *cur, genetic_pop *next,
                           int n, char *taken)
{
    int pop = (int)g->o.population;
    memset(taken, 0, (size_t)pop);
    for (int e = 0; e < g->o.elitism; e++) {
        int best = -1;
        for (int i = 0; i < pop; i++)
            if (!taken[i])
                best = best < 0 ? i : genetic_better(cur, n, best, i);
        taken[best] = 1;
        memcpy(next->plan + (size_t)e * n, cur->plan + (size_t)best * n, (size_t)n * sizeof(int));
        next->cost[e] = cur->cost[best];
    }
}

/* Fills plans first..population of next from cur and evaluates them. */
static int genetic_breed(genetic_placer *g, heterps_search *s, const genetic_pop *cur,
                         genetic_pop *next, int first, pb_error *err)
{
    int n = s->n_layers, pop = (int)g->o.population;
    double mutation = g->o.mutation > 0 ? g->o.mutation : 1.0 / n;
    for (int i = first; i < pop; i += 2) {
        const int *a = cur->plan + (size_t)genetic_tournament(g, cur, n) * n;
        const int *b = cur->plan + (size_t)genetic_tournament(g, cur, n) * n;
        int cut = n > 1 && pb_rng_uniform(&g->rng) < g->o.crossover
                      ? 1 + (int)pb_rng_below(&g->rng, (uint64_t)(n - 1))
                      : n;
        for (int c = 0; c < 2 && i + c < pop; c++) {
            int *child = next->plan + (size_t)(i + c) * n;
            for (int l = 0; l < n; l++) {
                child[l] = (l < cut) == (c == 0) ? a[l] : b[l];
                if (pb_rng_uniform(&g->rng) < mutation)
                    child[l] = (int)pb_rng_below(&g->rng, (uint64_t)s->n_types);
            }
            if (heterps_search_eval(s, child, &next->cost[i + c], NULL, err))
                return PB_ERR;
        }
    }
    return PB_OK;
}

static int genetic_run(genetic_placer *g, heterps_search *s, genetic_pop *pops, char *taken,
                       pb_error *err)
{
    int n = s->n_layers, pop = (int)g->o.population;
    genetic_pop *cur = &pops[0], *next = &pops[1];
    for (int i = 0; i < pop; i++) {
        int *plan = cur->plan + (size_t)i * n;
        for (int l = 0; l < n; l++)
            plan[l] = (int)pb_rng_below(&g->rng, (uint64_t)s->n_types);
        if (heterps_search_eval(s, plan, &cur->cost[i], NULL, err))
            return PB_ERR;
    }
    for (long long gen = 0; gen < g->o.generations; gen++) {
        genetic_elites(g, cur, next, n, taken);
        if (genetic_breed(g, s, cur, next, (int)g->o.elitism, err))
            return PB_ERR;
        genetic_pop *t = cur;
        cur = next;
        next = t;
        pb_progress pr = {.struct_size = sizeof pr,
                          .episode = (int)gen,
                          .episode_best_us = s->best_time_us,
                          .best_so_far_us = s->best_time_us,
                          .sim_calls = s->evaluations};
        g->host->progress(g->host->ctx, &pr);
        if (g->host->deadline_passed(g->host->ctx))
            break;
    }
    return PB_OK;
}

static int genetic_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                         pb_error *err)
{
    genetic_placer *g = instance;
    heterps_search s;
    *initial_us = -1;
    if (heterps_search_init(&s, p, g->host, err))
        return PB_ERR;
    size_t pop = (size_t)g->o.population, n = (size_t)s.n_layers;
    genetic_pop pops[2];
    char *taken = malloc(pop);
    int rc = taken ? PB_OK : PB_ERR;
    for (int k = 0; k < 2; k++) {
        pops[k].plan = malloc(pop * n * sizeof(int));
        pops[k].cost = malloc(pop * sizeof(double));
        rc = pops[k].plan && pops[k].cost ? rc : PB_ERR;
    }
    rc = rc == PB_OK ? genetic_run(g, &s, pops, taken, err) : pb_errorf(err, "out of memory");
    if (rc == PB_OK)
        rc = heterps_search_finish(&s, best, err);
    for (int k = 0; k < 2; k++) {
        free(pops[k].plan);
        free(pops[k].cost);
    }
    free(taken);
    heterps_search_free(&s);
    return rc;
}

static const pb_placer_ops genetic_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = genetic_create,
    .destroy = genetic_destroy,
    .place = genetic_place,
    /* a plan of per-layer resource types, costed by the HeterPS model only */
    .simulators = "heterps",
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "genetic", "1.0",
                       "HeterPS baseline: genetic algorithm over plans (use with the heterps "
                       "simulator)",
                       genetic_options, genetic_opts, &genetic_ops);
