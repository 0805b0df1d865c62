/* compat.c — the conversions that let plugins built for ABI 1.0/1.1 run on this harness. */
#include "compat.h"

int compat_is_1_1(const pb_plugin_desc *d)
{
    return d->abi_major == 1 && d->abi_minor < 2;
}

void compat_strategy_to_1_1(const pb_strategy *s, compat_strategy_1_1 *out)
{
    *out = (compat_strategy_1_1){
        .kind = s->kind,
        .n_nodes = s->n_nodes,
        .device = s->device,
        .replication = s->replication,
        .n_device_groups = s->n_device_groups,
        .group_start = s->group_start,
        .group_devices = s->group_devices,
        .n_stages = s->n_stages,
        .stage_count = s->stage_count,
    };
}

void compat_strategy_from_1_1(const compat_strategy_1_1 *s, pb_strategy *out)
{
    *out = (pb_strategy){
        .struct_size = sizeof *out,
        .kind = s->kind,
        .n_nodes = s->n_nodes,
        .device = s->device,
        .replication = s->replication,
        .n_device_groups = s->n_device_groups,
        .group_start = s->group_start,
        .group_devices = s->group_devices,
        .n_stages = s->n_stages,
        .stage_count = s->stage_count,
    };
}

void compat_problem_to_1_1(const pb_problem *p, compat_problem_1_1 *out)
{
    *out = (compat_problem_1_1){
        .struct_size = sizeof *out,
        .graph = p->graph,
        .op_graph = p->op_graph,
        .cluster = p->cluster,
        .order = p->order,
    };
    out->budget.episodes = p->budget->episodes;
    out->budget.sim_calls = p->budget->sim_calls;
    out->budget.wall_s = p->budget->wall_s;
    if (p->embedding) {
        out->embedding.ops = p->embedding->ops;
        out->embedding.instance = p->embedding->instance;
        out->embedding.name = p->embedding->name;
    }
}

int compat_evaluate(const pb_plugin_desc *d, void *prepared, const pb_strategy *s, pb_eval *out,
                    pb_error *err)
{
    const pb_simulator_ops *sim = d->ops;
    if (!compat_is_1_1(d))
        return sim->evaluate(prepared, s, out, err);
    compat_strategy_1_1 old;
    compat_strategy_to_1_1(s, &old);
    return sim->evaluate(prepared, (const pb_strategy *)(const void *)&old, out, err);
}
