/* m_etf.c — placer m-ETF of Baechi (Jeon et al., SoCC 2020): memory-constrained earliest-time-first
 * list scheduling (shared/baechi). */
#include "baechi.h"
#include "placebench.h"

#include <stdlib.h>

static int m_etf_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                       pb_error *err)
{
    const baechi_instance *b = instance;
    if (baechi_schedule(p->graph, p->cluster, NULL, b->device_speed, best->device, NULL, err))
        return PB_ERR;
    return baechi_report(b->host, best, initial_us, err);
}

static const pb_placer_ops m_etf_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = baechi_create,
    .destroy = baechi_destroy,
    .place = m_etf_place,
    .uses = 0,
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "m-etf", "1.1",
                       "Baechi m-ETF: memory-constrained earliest-time-first list scheduling",
                       baechi_options, baechi_opts, &m_etf_ops);
