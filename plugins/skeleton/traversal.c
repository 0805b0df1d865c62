/* traversal.c — skeleton of a traversal-order plugin: copy this file to start one.  A working
 * order: nodes by decreasing compute cost, ties in insertion order. */
#include "placebench.h"

#include <stdlib.h>

static int skeleton_create(const pb_create_args *a, void **instance, pb_error *err)
{
    (void)a;
    (void)err;
    *instance = NULL;
    return PB_OK;
}

static void skeleton_destroy(void *instance)
{
    (void)instance;
}

/* Writes a permutation of 0..n-1 into order (caller-owned).  Insertion sort keeps it stable and
 * short; a real order on large graphs would sort an index array with a comparator. */
static int skeleton_order(void *instance, const pb_graph *g, int *order, pb_error *err)
{
    (void)instance;
    (void)err;
    for (int i = 0; i < g->n_nodes; i++) {
        int v = i, j = i;
        while (j > 0 && g->cost_us[order[j - 1]] < g->cost_us[v]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = v;
    }
    return PB_OK;
}

static const pb_traversal_ops skeleton_ops = {
    .struct_size = sizeof(pb_traversal_ops),
    .create = skeleton_create,
    .destroy = skeleton_destroy,
    .order = skeleton_order,
};

PB_PLUGIN(PB_KIND_TRAVERSAL, "skeleton-traversal", "1.0",
          "skeleton: nodes by decreasing cost (copy plugins/skeleton/traversal.c)", NULL, 0,
          &skeleton_ops);
