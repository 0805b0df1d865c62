/* strategy.c — strategy expansion (group → ops) and validation. */
#include "strategy.h"

int strategy_expand(const pb_graph *op_graph, const pb_strategy *grouped, pb_strategy *ops,
                    pb_error *err)
{
    const pb_graph *gg = op_graph->grouped;
    if (grouped->n_nodes != gg->n_nodes)
        return pb_errorf(err, "strategy has %d entries, grouped graph has %d nodes",
                         grouped->n_nodes, gg->n_nodes);
    int n = op_graph->n_nodes;
    ops->kind = grouped->kind;
    ops->n_nodes = n;
    ops->n_device_groups = grouped->n_device_groups;
    ops->group_start = grouped->group_start;
    ops->group_devices = grouped->group_devices;
    ops->n_stages = grouped->n_stages;
    if (ops->stage_count && grouped->stage_count)
        for (int s = 0; s < grouped->n_stages; s++)
            ops->stage_count[s] = grouped->stage_count[s];
    for (int v = 0; v < n; v++) {
        int g = op_graph->group_of ? op_graph->group_of[v] : v;
        ops->device[v] = grouped->device[g];
        if (ops->replication)
            ops->replication[v] = grouped->replication ? grouped->replication[g] : PB_REPL_NONE;
    }
    return PB_OK;
}

int strategy_check(const pb_strategy *s, int n_nodes, int n_devices, pb_error *err)
{
    if (s->n_nodes != n_nodes)
        return pb_errorf(err, "strategy has %d entries for %d nodes", s->n_nodes, n_nodes);
    if (s->kind == PB_STRATEGY_PLACEMENT)
        for (int v = 0; v < n_nodes; v++)
            if (s->device[v] < 0 || s->device[v] >= n_devices)
                return pb_errorf(err, "node %d placed on device %d (have %d devices)", v,
                                 s->device[v], n_devices);
    return PB_OK;
}
