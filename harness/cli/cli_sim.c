/* cli_sim.c — loading, preparing and evaluating a simulator plugin for the CLI commands. */
#include "cli_sim.h"

#include "plugin/compat.h"
#include "plugin/options.h"

#include <stdlib.h>
#include <string.h>

int cli_sim_open(cli_sim *s, loader *l, const char *name, const pb_graph *g, const pb_cluster *c,
                 pb_error *err)
{
    return cli_sim_open_with(s, l, name, NULL, 0, g, c, err);
}

int cli_sim_open_with(cli_sim *s, loader *l, const char *name, const option_kv *kv, int n_kv,
                      const pb_graph *g, const pb_cluster *c, pb_error *err)
{
    memset(s, 0, sizeof *s);
    const loader_entry *entry = NULL;
    if (loader_find(l, PB_KIND_SIMULATOR, name, &entry, err) != PB_OK)
        return PB_ERR;
    if (options_resolve(entry->desc, kv, n_kv, name, &s->defaults, err) != PB_OK)
        return PB_ERR;
    const pb_simulator_ops *ops = entry->desc->ops;
    pb_create_args args = options_create_args(&s->defaults, NULL, 0);
    void *instance = NULL;
    if (ops->create(&args, &instance, err) != PB_OK) {
        option_set_free(&s->defaults);
        return PB_ERR;
    }
    void *prepared = NULL;
    if (ops->prepare(instance, g, c, &prepared, err) != PB_OK) {
        ops->destroy(instance);
        option_set_free(&s->defaults);
        return PB_ERR;
    }
    s->desc = entry->desc;
    s->ops = ops;
    s->instance = instance;
    s->prepared = prepared;
    return PB_OK;
}

int cli_sim_evaluate(cli_sim *s, const pb_strategy *ops, pb_eval *out, pb_error *err)
{
    return compat_evaluate(s->desc, s->prepared, ops, out, err);
}

void cli_sim_close(cli_sim *s)
{
    if (!s->ops)
        return;
    s->ops->release(s->prepared);
    s->ops->destroy(s->instance);
    option_set_free(&s->defaults);
    memset(s, 0, sizeof *s);
}

int cli_sim_result_init(cli_sim_result *r, int n_devices, const pb_graph *g, int with_timeline,
                        pb_error *err)
{
    memset(r, 0, sizeof *r);
    size_t nd = (size_t)n_devices;
    size_t nn = with_timeline ? (size_t)g->n_nodes : 0;
    size_t np = with_timeline ? (size_t)g->port_start[g->n_nodes] : 0;
    size_t nl = nd * nd; /* links: per bus or per device pair, as the simulator defines */
    r->buffer = calloc(2 * nd + nl + 2 * nn + 2 * np + 1, sizeof(double));
    if (!r->buffer)
        return pb_errorf(err, "out of memory");
    r->eval.struct_size = sizeof(pb_eval);
    r->eval.peak_mem_bytes = r->buffer;
    r->eval.busy_us = r->buffer + nd;
    r->eval.link_busy_us = r->buffer + 2 * nd;
    if (with_timeline) {
        double *times = r->buffer + 2 * nd + nl;
        r->eval.node_start_us = times;
        r->eval.node_end_us = times + nn;
        r->eval.port_send_us = times + 2 * nn;
        r->eval.port_arrive_us = times + 2 * nn + np;
    }
    return PB_OK;
}

void cli_sim_result_free(cli_sim_result *r)
{
    free(r->buffer);
    memset(r, 0, sizeof *r);
}
