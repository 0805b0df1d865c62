/* strategy.c — strategy expansion (group → ops) and validation of every strategy kind. */
#include "strategy.h"

#include <math.h>
#include <stddef.h>

int strategy_expand(const pb_graph *op_graph, const pb_strategy *grouped, pb_strategy *ops,
                    pb_error *err)
{
    const pb_graph *gg = op_graph->grouped;
    if (grouped->n_nodes != gg->n_nodes)
        return pb_errorf(err, "strategy has %d entries, grouped graph has %d nodes",
                         grouped->n_nodes, gg->n_nodes);
    int n = op_graph->n_nodes;
    ops->struct_size = sizeof *ops;
    ops->kind = grouped->kind;
    ops->n_nodes = n;
    ops->n_device_groups = grouped->n_device_groups;
    ops->group_start = grouped->group_start;
    ops->group_devices = grouped->group_devices;
    ops->device_share = PB_STRATEGY_HAS(grouped, device_share) ? grouped->device_share : NULL;
    ops->op_replication = NULL; /* folded into ops->replication below */
    const int *op_repl = PB_STRATEGY_HAS(grouped, op_replication) ? grouped->op_replication : NULL;
    ops->n_stages = grouped->n_stages;
    if (ops->stage_count && grouped->stage_count)
        for (int s = 0; s < grouped->n_stages; s++)
            ops->stage_count[s] = grouped->stage_count[s];
    for (int v = 0; op_repl && v < n; v++)
        if (pb_strategy_op_option_bad(op_repl[v]))
            return pb_errorf(err,
                             "op '%s': per-op replication option %d (allowed: -1 = the "
                             "group's, 1 allreduce, 2 ps, 3 duplicate)",
                             op_graph->node_name[v], op_repl[v]);
    for (int v = 0; v < n; v++) {
        int g = op_graph->group_of ? op_graph->group_of[v] : v;
        ops->device[v] = grouped->device[g];
        if (ops->replication)
            ops->replication[v] = op_repl && op_repl[v] >= 0 ? op_repl[v]
                                  : grouped->replication     ? grouped->replication[g]
                                                             : PB_REPL_NONE;
    }
    strategy_apply_placed_with(op_graph, ops);
    return PB_OK;
}

void strategy_apply_placed_with(const pb_graph *op_graph, pb_strategy *ops)
{
    /* the anchor itself follows its group (graph_build refuses chains) */
    for (int v = 0; op_graph->placed_with && v < op_graph->n_nodes; v++) {
        int a = op_graph->placed_with[v];
        if (a < 0)
            continue;
        ops->device[v] = ops->device[a];
        if (ops->replication)
            ops->replication[v] = ops->replication[a];
    }
}

/* The device groups of a REPLICATED strategy: non-empty, valid and distinct devices. */
static int strategy_check_groups(const pb_strategy *s, int n_devices, pb_error *err)
{
    if (s->n_device_groups < 1 || !s->group_start || !s->group_devices || !s->replication)
        return pb_errorf(err, "replicated strategy without device groups or replication options");
    if (s->group_start[0] != 0)
        return pb_errorf(err, "device group 0 starts at %d, not 0", s->group_start[0]);
    for (int g = 0; g < s->n_device_groups; g++) {
        int a = s->group_start[g], b = s->group_start[g + 1];
        if (b <= a)
            return pb_errorf(err, "device group %d has no devices", g);
        for (int i = a; i < b; i++) {
            int d = s->group_devices[i];
            if (d < 0 || d >= n_devices)
                return pb_errorf(err, "device group %d names device %d (have %d devices)", g, d,
                                 n_devices);
            for (int j = a; j < i; j++)
                if (s->group_devices[j] == d)
                    return pb_errorf(err, "device group %d names device %d twice", g, d);
        }
    }
    return PB_OK;
}

/* Batch shares (since ABI 1.3): positive, finite, summing to 1 over each group. */
static int strategy_check_shares(const pb_strategy *s, pb_error *err)
{
    if (!PB_STRATEGY_HAS(s, device_share) || !s->device_share)
        return PB_OK;
    for (int g = 0; g < s->n_device_groups; g++) {
        double sum = 0;
        for (int i = s->group_start[g]; i < s->group_start[g + 1]; i++) {
            double x = s->device_share[i];
            if (!isfinite(x) || x <= 0)
                return pb_errorf(err, "device group %d gives device %d a batch share of %g", g,
                                 s->group_devices[i], x);
            sum += x;
        }
        if (fabs(sum - 1) > 1e-9)
            return pb_errorf(err, "the batch shares of device group %d sum to %.17g, not 1", g,
                             sum);
    }
    return PB_OK;
}

static int strategy_check_replicated(const pb_strategy *s, int n_nodes, int n_devices,
                                     pb_error *err)
{
    if (strategy_check_groups(s, n_devices, err) || strategy_check_shares(s, err))
        return PB_ERR;
    for (int v = 0; v < n_nodes; v++) {
        int g = s->device[v], r = s->replication[v];
        if (g < 0 || g >= s->n_device_groups)
            return pb_errorf(err, "node %d is given device group %d (have %d groups)", v, g,
                             s->n_device_groups);
        if (r < PB_REPL_NONE || r > PB_REPL_SPLIT)
            return pb_errorf(err, "node %d has unknown replication option %d", v, r);
        if (r == PB_REPL_NONE && s->group_start[g + 1] - s->group_start[g] != 1)
            return pb_errorf(err,
                             "node %d is not replicated but its device group %d has %d devices", v,
                             g, s->group_start[g + 1] - s->group_start[g]);
    }
    return PB_OK;
}

static int strategy_check_provisioned(const pb_strategy *s, int n_nodes, int n_types, pb_error *err)
{
    if (!s->stage_count)
        return pb_errorf(err, "provisioned strategy without stage counts");
    int stages = 0;
    for (int v = 0; v < n_nodes; v++) {
        if (s->device[v] < 0 || s->device[v] >= n_types)
            return pb_errorf(err, "node %d is given resource type %d (have %d types)", v,
                             s->device[v], n_types);
        if (v == 0 || s->device[v] != s->device[v - 1]) {
            if (stages < s->n_stages && s->stage_count[stages] < 1)
                return pb_errorf(err, "stage %d (from node %d) has %d resources", stages, v,
                                 s->stage_count[stages]);
            stages++;
        }
    }
    if (stages != s->n_stages)
        return pb_errorf(err, "provisioned strategy declares %d stages, its nodes form %d",
                         s->n_stages, stages);
    return PB_OK;
}

int pb_strategy_check(const pb_strategy *s, int n_nodes, const pb_cluster *c, pb_error *err)
{
    if (s->struct_size < offsetof(pb_strategy, stage_count) + sizeof s->stage_count)
        return pb_errorf(err, "strategy of %zu bytes, ABI %d.%d needs %zu", s->struct_size,
                         PB_ABI_MAJOR, PB_ABI_MINOR, sizeof *s);
    if (s->n_nodes != n_nodes)
        return pb_errorf(err, "strategy has %d entries for %d nodes", s->n_nodes, n_nodes);
    if (n_nodes > 0 && !s->device)
        return pb_errorf(err, "strategy without a device array");
    switch (s->kind) {
    case PB_STRATEGY_PLACEMENT:
        for (int v = 0; v < n_nodes; v++)
            if (s->device[v] < 0 || s->device[v] >= c->n_devices)
                return pb_errorf(err, "node %d placed on device %d (have %d devices)", v,
                                 s->device[v], c->n_devices);
        return PB_OK;
    case PB_STRATEGY_REPLICATED:
        return strategy_check_replicated(s, n_nodes, c->n_devices, err);
    case PB_STRATEGY_PROVISIONED:
        return strategy_check_provisioned(s, n_nodes, c->n_types, err);
    default:
        return pb_errorf(err, "strategy of unknown kind %d", s->kind);
    }
}
