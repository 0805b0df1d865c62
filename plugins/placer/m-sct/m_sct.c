/* m_sct.c — placer m-SCT of Baechi (Jeon et al., SoCC 2020): list scheduling with favourite
 * children from the LP relaxation, solved with CLP (shared/baechi). */
#include "baechi.h"
#include "placebench.h"

#include <stdlib.h>

static int m_sct_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                       pb_error *err)
{
    const baechi_instance *b = instance;
    int *favorite = malloc((size_t)(p->graph->n_nodes > 0 ? p->graph->n_nodes : 1) * sizeof(int));
    if (!favorite)
        return pb_errorf(err, "out of memory");
    int rc =
        baechi_favorite_children(p->graph, p->cluster, favorite, NULL, err) ||
        baechi_schedule(p->graph, p->cluster, favorite, b->device_speed, best->device, NULL, err);
    free(favorite);
    if (rc)
        return PB_ERR;
    return baechi_report(b->host, best, initial_us, err);
}

static const pb_placer_ops m_sct_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = baechi_create,
    .destroy = baechi_destroy,
    .place = m_sct_place,
    .uses = 0,
};

PB_PLUGIN_WITH_OPTIONS(
    PB_KIND_PLACER, "m-sct", "1.1",
    "Baechi m-SCT: ETF that keeps favourite children (from an LP solved with CLP) on their "
    "parent's device",
    baechi_options, baechi_opts, &m_sct_ops);
