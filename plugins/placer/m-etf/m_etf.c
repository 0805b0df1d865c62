/* m_etf.c — placer m-ETF of Baechi (Jeon et al., SoCC 2020): memory-constrained earliest-time-first
 * list scheduling (shared/baechi). */
#include "baechi.h"
#include "placebench.h"

#include <stdlib.h>

static int m_etf_create(const pb_create_args *a, void **instance, pb_error *err)
{
    (void)err;
    *instance = (void *)a->host; /* the host is all the placer keeps */
    return PB_OK;
}

static void m_etf_destroy(void *instance)
{
    (void)instance;
}

static int m_etf_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                       pb_error *err)
{
    if (baechi_schedule(p->graph, p->cluster, NULL, best->device, NULL, err))
        return PB_ERR;
    return baechi_report(instance, best, initial_us, err);
}

static const pb_placer_ops m_etf_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = m_etf_create,
    .destroy = m_etf_destroy,
    .place = m_etf_place,
    .uses = 0,
};

PB_PLUGIN(PB_KIND_PLACER, "m-etf", "1.0",
          "Baechi m-ETF: memory-constrained earliest-time-first list scheduling", NULL, 0,
          &m_etf_ops);
