/* greedy.c — HeterPS baseline placer: one pass over the layers; layer l takes the type t whose
 * plan (earlier layers fixed, layer l and all later layers on t) is cheapest
 * (specs/heterps.md §7.5), L*T evaluations. */
#include "placebench.h"

#include "heterps.h"

#include <stdint.h>
#include <stdlib.h>

static int greedy_create(const pb_create_args *a, void **instance, pb_error *err)
{
    (void)err;
    *instance = (void *)(uintptr_t)a->host; /* the host is all the placer keeps */
    return PB_OK;
}

static void greedy_destroy(void *instance)
{
    (void)instance;
}

/* Fixes plan[0..n) layer by layer with the fill-forward rule. */
static int greedy_pass(heterps_search *s, int *plan, int *trial, pb_error *err)
{
    int n = s->n_layers;
    for (int l = 0; l < n; l++) {
        double best = 0;
        for (int t = 0; t < s->n_types; t++) {
            for (int k = 0; k < n; k++)
                trial[k] = k < l ? plan[k] : t;
            double cost;
            if (heterps_search_eval(s, trial, &cost, NULL, err))
                return PB_ERR;
            if (t == 0 || cost < best) {
                best = cost;
                plan[l] = t;
            }
        }
    }
    return PB_OK;
}

static int greedy_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                        pb_error *err)
{
    heterps_search s;
    *initial_us = -1;
    if (heterps_search_init(&s, p, instance, err))
        return PB_ERR;
    int *plan = calloc((size_t)s.n_layers, sizeof(int));
    int *trial = calloc((size_t)s.n_layers, sizeof(int));
    int rc = plan && trial ? greedy_pass(&s, plan, trial, err) : pb_errorf(err, "out of memory");
    /* Each step re-evaluates the previous step's choice (t = plan[l-1]), so the pass ends on the
     * cheapest plan it evaluated: the search's best (ties to the smaller plan, §2.5). */
    if (rc == PB_OK)
        rc = heterps_search_finish(&s, best, err);
    free(plan);
    free(trial);
    heterps_search_free(&s);
    return rc;
}

static const pb_placer_ops greedy_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = greedy_create,
    .destroy = greedy_destroy,
    .place = greedy_place,
    /* a plan of per-layer resource types, costed by the HeterPS model only */
    .simulators = "heterps",
};

PB_PLUGIN(PB_KIND_PLACER, "greedy", "1.0",
          "HeterPS baseline: fill-forward greedy pass over the layers (use with the heterps "
          "simulator)",
          NULL, 0, &greedy_ops);
