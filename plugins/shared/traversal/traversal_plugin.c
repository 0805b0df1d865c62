/* traversal_plugin.c — one traversal-order plugin; which order is chosen by a TRAVERSAL_<ORDER>
 * compile definition (one build per folder plugins/traversal/<name>/). */
#include "placebench.h"
#include "placebench/placeto.h"

#include <stdlib.h>

#if defined(TRAVERSAL_LEXICO)
#define TRAVERSAL_NAME "lexico"
#define TRAVERSAL_DESCRIPTION                                                                      \
    "nodes sorted by name, the reference's 'alpha' (arXiv 2201.09676; specs/placeto.md 5.1)"
#elif defined(TRAVERSAL_TOPO)
#define TRAVERSAL_NAME "topo"
#define TRAVERSAL_DESCRIPTION                                                                      \
    "networkx 2.4 topological sort, Kahn with a LIFO ready stack (arXiv 2201.09676; "              \
    "specs/placeto.md 5.2)"
#elif defined(TRAVERSAL_REVERSED_TOPO)
#define TRAVERSAL_NAME "reversed-topo"
#define TRAVERSAL_DESCRIPTION                                                                      \
    "the networkx 2.4 topological sort reversed (arXiv 2201.09676; specs/placeto.md 5.3)"
#elif defined(TRAVERSAL_DFS_PREORDER)
#define TRAVERSAL_NAME "dfs-preorder"
#define TRAVERSAL_DESCRIPTION                                                                      \
    "networkx 2.4 DFS preorder rooted at every node in insertion order (arXiv 2201.09676; "        \
    "specs/placeto.md 5.5)"
#elif defined(TRAVERSAL_DFS_POSTORDER)
#define TRAVERSAL_NAME "dfs-postorder"
#define TRAVERSAL_DESCRIPTION                                                                      \
    "networkx 2.4 DFS postorder rooted at every node in insertion order (arXiv 2201.09676; "       \
    "specs/placeto.md 5.5)"
#elif defined(TRAVERSAL_BFS)
#define TRAVERSAL_NAME "bfs"
#define TRAVERSAL_DESCRIPTION                                                                      \
    "BFS from each source in name order, repeats dropped (arXiv 2201.09676; specs/placeto.md "     \
    "5.6)"
#elif defined(TRAVERSAL_LEXICO_TOPO)
#define TRAVERSAL_NAME "lexico-topo"
#define TRAVERSAL_DESCRIPTION                                                                      \
    "topological sort taking the smallest ready name first, as Placeto's get_sorted_nodes "        \
    "(specs/placeto.md 5.4)"
#elif defined(TRAVERSAL_RANDOM)
#define TRAVERSAL_NAME "random"
#define TRAVERSAL_DESCRIPTION                                                                      \
    "seeded uniform shuffle of the nodes, as Placeto's get_sorted_nodes (specs/placeto.md 5.7)"
#else
#error "define one TRAVERSAL_<ORDER> to choose the order this plugin builds"
#endif

/* An instance only remembers its seed ("random" draws from it afresh on every call, so the
 * same instance gives the same order each time). */
typedef struct traversal_instance {
    unsigned long long seed;
} traversal_instance;

static int traversal_create(const pb_create_args *args, void **instance, pb_error *err)
{
    traversal_instance *t = malloc(sizeof *t);
    if (!t)
        return pb_errorf(err, "traversal '%s': out of memory", TRAVERSAL_NAME);
    t->seed = args->seed;
    *instance = t;
    return PB_OK;
}

static void traversal_destroy(void *instance)
{
    free(instance);
}

static int traversal_order(void *instance, const pb_graph *g, int *order, pb_error *err)
{
    const traversal_instance *t = instance;
    return pb_traverse_by_name(TRAVERSAL_NAME, g, t->seed, order, err);
}

static const pb_traversal_ops traversal_ops = {
    sizeof(pb_traversal_ops),
    traversal_create,
    traversal_destroy,
    traversal_order,
};

PB_PLUGIN(PB_KIND_TRAVERSAL, TRAVERSAL_NAME, "1.0", TRAVERSAL_DESCRIPTION, NULL, 0, &traversal_ops);
