/* heterps_search.c — evaluating plans through the host's simulator and keeping the best one, for
 * the HeterPS placers (specs/heterps.md §2.5: one penalised objective, lexicographic ties). */
#include "heterps.h"

#include <stdlib.h>
#include <string.h>

int heterps_search_init(heterps_search *s, const pb_problem *p, const pb_host *host, pb_error *err)
{
    memset(s, 0, sizeof *s);
    s->host = host;
    s->n_layers = p->graph->n_nodes;
    const pb_cluster *c = p->cluster;
    int *ctype = malloc((size_t)c->n_types * sizeof(int));
    s->type_device = malloc((size_t)c->n_types * sizeof(int));
    s->device = malloc((size_t)s->n_layers * sizeof(int));
    s->best_plan = malloc((size_t)s->n_layers * sizeof(int));
    if (!ctype || !s->type_device || !s->device || !s->best_plan) {
        free(ctype);
        heterps_search_free(s);
        return pb_errorf(err, "out of memory");
    }
    s->n_types = heterps_types(c, ctype, s->type_device, err);
    free(ctype);
    if (s->n_types < 0) {
        heterps_search_free(s);
        return PB_ERR;
    }
    pb_strategy_placement(&s->strategy, s->n_layers, s->device);
    return PB_OK;
}

void heterps_search_free(heterps_search *s)
{
    free(s->type_device);
    free(s->device);
    free(s->best_plan);
    memset(s, 0, sizeof *s);
}

int heterps_plan_less(const int *a, const int *b, int n)
{
    for (int l = 0; l < n; l++)
        if (a[l] != b[l])
            return a[l] < b[l];
    return 0;
}

int heterps_search_eval(heterps_search *s, const int *plan, double *cost, int *feasible,
                        pb_error *err)
{
    for (int l = 0; l < s->n_layers; l++)
        s->device[l] = s->type_device[plan[l]];
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
    if (s->host->simulate(s->host->ctx, &s->strategy, &ev, err))
        return PB_ERR;
    s->evaluations++;
    *cost = ev.monetary_cost;
    if (feasible)
        *feasible = ev.feasible;
    if (!s->has_best || ev.monetary_cost < s->best_cost ||
        (ev.monetary_cost == s->best_cost && heterps_plan_less(plan, s->best_plan, s->n_layers))) {
        memcpy(s->best_plan, plan, (size_t)s->n_layers * sizeof(int));
        s->best_cost = ev.monetary_cost;
        s->best_feasible = ev.feasible;
        s->best_thr = ev.throughput;
        s->best_time_us = ev.step_time_us;
        s->has_best = 1;
    }
    return PB_OK;
}

int heterps_search_finish(const heterps_search *s, pb_strategy *best, pb_error *err)
{
    if (!s->has_best)
        return pb_errorf(err, "no plan was evaluated");
    if (!s->best_feasible)
        return pb_errorf(err,
                         "no plan meets the throughput limit and the resource limits: the "
                         "best of %lld evaluated plans has penalised cost %.6g USD%s",
                         s->evaluations, s->best_cost,
                         s->best_thr > 0 ? "" : " and no unit count reaches the limit");
    for (int l = 0; l < s->n_layers; l++)
        best->device[l] = s->type_device[s->best_plan[l]];
    return PB_OK;
}

int heterps_place_fixed(const pb_problem *p, const pb_host *host, const int *plan,
                        int allow_infeasible, pb_strategy *best, double *initial_us, pb_error *err)
{
    heterps_search s;
    *initial_us = -1;
    if (heterps_search_init(&s, p, host, err))
        return PB_ERR;
    double cost;
    int rc = heterps_search_eval(&s, plan, &cost, NULL, err);
    if (rc == PB_OK && allow_infeasible)
        for (int l = 0; l < s.n_layers; l++)
            best->device[l] = s.type_device[plan[l]];
    else if (rc == PB_OK)
        rc = heterps_search_finish(&s, best, err);
    heterps_search_free(&s);
    return rc;
}
