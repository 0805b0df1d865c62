/* m_topo.c — placer m-TOPO of Baechi (Jeon et al., SoCC 2020): consecutive runs of the topological
 * order per device, balanced by memory (shared/baechi). */
#include "baechi.h"
#include "placebench.h"

#include <stdlib.h>

static int m_topo_create(const pb_create_args *a, void **instance, pb_error *err)
{
    (void)err;
    *instance = (void *)a->host; /* the host is all the placer keeps */
    return PB_OK;
}

static void m_topo_destroy(void *instance)
{
    (void)instance;
}

static int m_topo_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                        pb_error *err)
{
    if (baechi_topo(p->graph, p->cluster, best->device, err))
        return PB_ERR;
    return baechi_report(instance, best, initial_us, err);
}

static const pb_placer_ops m_topo_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = m_topo_create,
    .destroy = m_topo_destroy,
    .place = m_topo_place,
    .uses = 0,
};

PB_PLUGIN(PB_KIND_PLACER, "m-topo", "1.0",
          "Baechi m-TOPO: topological order cut into memory-balanced runs, one per device", NULL, 0,
          &m_topo_ops);
