/* gdp_units.c — devices, pinned units and forward names for GDP's baselines. */
#include "gdp_units.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int gdpu_is_host_type(const char *name)
{
    return name && strncmp(name, "CPU", 3) == 0;
}

int gdpu_devices_init(gdpu_devices *d, const pb_cluster *c, int include_cpu, pb_error *err)
{
    d->n_gpus = 0;
    d->host = -1;
    d->gpu = malloc((size_t)(c->n_devices > 0 ? c->n_devices : 1) * sizeof *d->gpu);
    if (!d->gpu)
        return pb_errorf(err, "out of memory");
    for (int i = 0; i < c->n_devices; i++) {
        const pb_device_type *t = pb_cluster_type(c, c->device_type[i]);
        if (!gdpu_is_host_type(t->name))
            d->gpu[d->n_gpus++] = i;
        else if (d->host < 0)
            d->host = i;
    }
    if (include_cpu && d->host >= 0)
        d->gpu[d->n_gpus++] = d->host;
    if (d->n_gpus == 0) {
        gdpu_devices_free(d);
        return pb_errorf(err,
                         "cluster %s has no GPU among its %d devices (GDP places on GPUs; "
                         "gdp-p100 needs --devices >= 2: the host CPU comes first)",
                         c->name ? c->name : "?", c->n_devices);
    }
    return PB_OK;
}

void gdpu_devices_free(gdpu_devices *d)
{
    free(d->gpu);
    d->gpu = NULL;
    d->n_gpus = 0;
}

static int gdpu_is_input_type(const char *type)
{
    static const char *const input_types[] = {"IteratorGetNext", "IteratorV2", "Iterator",
                                              "OneShotIterator", "MakeIterator"};
    for (size_t i = 0; type && i < sizeof input_types / sizeof input_types[0]; i++)
        if (strcmp(type, input_types[i]) == 0)
            return 1;
    return 0;
}

int gdpu_pinned(const pb_problem *p, unsigned char *pinned)
{
    const pb_graph *g = p->graph, *ops = p->op_graph ? p->op_graph : p->graph;
    memset(pinned, 0, (size_t)g->n_nodes);
    int count = 0;
    for (int v = 0; v < ops->n_nodes; v++) {
        if (!gdpu_is_input_type(ops->node_type[v]))
            continue;
        int u = ops != g && ops->group_of ? ops->group_of[v] : v;
        if (u >= 0 && u < g->n_nodes && !pinned[u]) {
            pinned[u] = 1;
            count++;
        }
    }
    return count;
}

const char *gdpu_forward_name(const char *name)
{
    if (strncmp(name, "gradients/", 10) == 0)
        return name + 10;
    const char *slash = strchr(name, '/');
    if (slash && strncmp(slash + 1, "update_", 7) == 0)
        return slash + 8;
    return name;
}

int gdpu_is_forward(const char *name)
{
    return gdpu_forward_name(name) == name;
}

int gdpu_model_name(const char *graph_name, char *out, size_t size)
{
    const char *base = strrchr(graph_name, '/');
    base = base ? base + 1 : graph_name;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    int layers = 0;
    /* a "-<digits>l" suffix */
    if (n >= 3 && base[n - 1] == 'l' && isdigit((unsigned char)base[n - 2])) {
        size_t k = n - 2;
        while (k > 0 && isdigit((unsigned char)base[k - 1]))
            k--;
        if (k > 0 && base[k - 1] == '-') {
            layers = atoi(base + k);
            n = k - 1;
        }
    }
    if (size == 0)
        return layers;
    if (n >= size)
        n = size - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)tolower((unsigned char)base[i]);
    out[n] = '\0';
    return layers;
}

long long gdpu_budget(const pb_budget *b, long long def)
{
    if (b && b->sim_calls > 0)
        return b->sim_calls;
    if (b && b->episodes > 0)
        return b->episodes;
    return def;
}

int gdpu_topo_fifo(const pb_graph *g, int *order, pb_error *err)
{
    int n = g->n_nodes;
    int *indeg = malloc((size_t)(n > 0 ? n : 1) * sizeof *indeg);
    if (!indeg)
        return pb_errorf(err, "out of memory");
    int tail = 0;
    for (int v = 0; v < n; v++) {
        indeg[v] = g->pred_start[v + 1] - g->pred_start[v];
        if (indeg[v] == 0)
            order[tail++] = v;
    }
    for (int head = 0; head < tail; head++) {
        int u = order[head];
        for (int k = g->succ_start[u]; k < g->succ_start[u + 1]; k++)
            if (--indeg[g->succ[k]] == 0)
                order[tail++] = g->succ[k];
    }
    int rc = PB_OK;
    if (tail < n) {
        int v = 0;
        while (v < n && indeg[v] == 0)
            v++;
        rc = pb_errorf(err, "graph %s has a cycle through node %s", g->name ? g->name : "?",
                       g->node_name[v]);
    }
    free(indeg);
    return rc;
}
