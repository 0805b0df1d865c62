/* heterps_layers.c — layer descriptors read from a graph, the default profile generator of
 * specs/heterps.md §4, the workload defaults of §5 and the resource types of a cluster. */
#include "heterps.h"

#include <stdlib.h>
#include <string.h>

void heterps_hw_default(heterps_hw *hw)
{
    *hw = (heterps_hw){
        .r_fc = {50e9, 10e12},
        .r_rnn = {10e9, 2e12},
        .c_id = {0.3e-6, 0.05e-6},
        .r_mem = {8e9, 500e9},
        .o = {40e-6, 60e-6},
        .o_step = {2e-6, 20e-6},
        .w = {12.5e9 / 48, 12.5e9 / 8},
        .lambda = {50e-6, 50e-6},
        .alpha_emb = {0.999, 0.99},
        .alpha_dense = {0.999, 0.99},
        .alpha_light = {0.999, 0.999},
        .batch_o = 512,
        /* A CPU core's share of the NIC, 12.5e9/48, which §2.4 prints rounded as 2.6e8: the
         * spec's checked optima (CTRDNN-8 4.025, CTRDNN-20 11.87 USD) need the unrounded value. */
        .w_ps = 12.5e9 / 48,
        .c_ps = 0.2e-6,
    };
}

/* One layer on one role (§4): OCT, alpha, IO and BND for B_o examples. */
static void heterps_layer_profile(const heterps_layer *y, const heterps_hw *hw, int r,
                                  heterps_profile *p, int l)
{
    double b = hw->batch_o;
    double rate = y->kind == HETERPS_RNN ? hw->r_rnn[r] : hw->r_fc[r];
    p->oct[r][l] =
        hw->o[r] +
        b * (3 * y->flops / rate + y->ids * hw->c_id[r] + 8 * (y->in + y->out) / hw->r_mem[r]) +
        y->steps * hw->o_step[r];
    p->io[r][l] = y->kind == HETERPS_EMB ? b * y->ids * (8 + 8 * y->dim) / hw->w[r] : 0;
    p->bnd[r][l] = hw->lambda[r] + b * 8 * y->cut / hw->w[r];
    if (y->kind == HETERPS_EMB)
        p->alpha[r][l] = hw->alpha_emb[r];
    else if (y->kind == HETERPS_FC || y->kind == HETERPS_RNN)
        p->alpha[r][l] = hw->alpha_dense[r];
    else
        p->alpha[r][l] = hw->alpha_light[r];
}

heterps_profile *heterps_profile_new(const heterps_layer *layers, int n_layers, int n_types,
                                     const heterps_hw *hw, double beta_io, double beta_bnd)
{
    heterps_profile *p = heterps_profile_alloc(n_layers, n_types);
    if (!p)
        return NULL;
    p->batch_o = hw->batch_o;
    p->beta_io = beta_io;
    p->beta_bnd = beta_bnd;
    for (int l = 0; l < n_layers; l++) {
        const heterps_layer *y = &layers[l];
        for (int r = 0; r < HETERPS_N_ROLES; r++)
            heterps_layer_profile(y, hw, r, p, l);
        if (y->kind == HETERPS_EMB)
            p->tau_ps_sparse += y->ids * (8 * y->dim / hw->w_ps + hw->c_ps);
        /* §2.4 with B = B_o: dense parameters pulled and pushed once per batch. */
        p->ps_dense[l] = 8 * y->params / (hw->batch_o * hw->w_ps);
    }
    return p;
}

void heterps_profile_devcost(heterps_profile *p, const heterps_layer *layers,
                             const pb_device_type *const role_type[HETERPS_N_ROLES])
{
    double b = p->batch_o;
    for (int l = 0; l < p->n_layers; l++) {
        const heterps_layer *y = &layers[l];
        double flops = 3 * y->flops * b;
        double bytes = 8 * (y->in + y->out) * b + 4 * y->ids * y->dim * b;
        for (int r = 0; r < HETERPS_N_ROLES; r++)
            p->oct[r][l] = 1e-6 * pb_op_time_us(role_type[r], flops, bytes);
    }
}

static const char *const heterps_kind_names[HETERPS_N_KINDS] = {
    "EMB", "POOL", "CONCAT", "FC", "RNN", "SIM", "SAMPLER", "DOT", "LOSS", "REDUCE"};

/* Reads "key=value" attributes after the kind into y and *batch; unknown keys are errors. */
static int heterps_attrs(const char *text, const char *node, heterps_layer *y, double *batch,
                         pb_error *err)
{
    static const char *const keys[] = {"ids", "dim", "rows", "steps", "in", "out", "batch"};
    double *slots[] = {&y->ids, &y->dim, &y->rows, &y->steps, &y->in, &y->out, batch};
    const char *s = text;
    while (*s) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        size_t len = strcspn(s, "= ");
        if (s[len] != '=')
            return pb_errorf(err, "layer '%s': attribute '%.*s' is not key=value", node, (int)len,
                             s);
        int k = 0;
        while (k < 7 && (strlen(keys[k]) != len || strncmp(keys[k], s, len) != 0))
            k++;
        if (k == 7)
            return pb_errorf(err,
                             "layer '%s': unknown attribute '%.*s' (ids, dim, rows, steps, "
                             "in, out, batch)",
                             node, (int)len, s);
        char *end;
        double v = strtod(s + len + 1, &end);
        if (end == s + len + 1 || (*end && *end != ' ') || !(v >= 0))
            return pb_errorf(err, "layer '%s': attribute '%.*s' needs a number >= 0", node,
                             (int)len, s);
        *slots[k] = v;
        s = end;
    }
    return PB_OK;
}

static int heterps_kind_of(const char *type, const char *node, int *kind, size_t *len,
                           pb_error *err)
{
    *len = strcspn(type, " ");
    for (int k = 0; k < HETERPS_N_KINDS; k++)
        if (strlen(heterps_kind_names[k]) == *len &&
            strncmp(heterps_kind_names[k], type, *len) == 0) {
            *kind = k;
            return PB_OK;
        }
    return pb_errorf(err,
                     "layer '%s': type '%.*s' is not a HeterPS layer kind (EMB, POOL, CONCAT, "
                     "FC, RNN, SIM, SAMPLER, DOT, LOSS, REDUCE)",
                     node, (int)*len, type);
}

int heterps_layers_read(const pb_graph *g, heterps_layer *layers, pb_error *err)
{
    for (int v = 0; v < g->n_nodes; v++) {
        const char *name = g->node_name[v];
        heterps_layer *y = &layers[v];
        *y = (heterps_layer){0};
        size_t len;
        double batch = 0;
        if (heterps_kind_of(g->node_type[v], name, &y->kind, &len, err) ||
            heterps_attrs(g->node_type[v] + len, name, y, &batch, err))
            return PB_ERR;
        /* batch=B: flops and the output port are those of a batch of B examples (3 F B and
         * 4 cut B, the model zoo's chains); without it, per example (datasets/heterps) */
        y->flops = batch > 0 ? g->flops[v] / (3 * batch) : g->flops[v];
        y->params = g->param_bytes[v] / 4;
        int ports = g->port_start[v + 1] - g->port_start[v];
        y->cut =
            ports > 0 ? g->port_bytes[g->port_start[v]] / (4 * (batch > 0 ? batch : 1)) : y->out;
        int n_succ = g->succ_start[v + 1] - g->succ_start[v];
        int chained =
            v + 1 < g->n_nodes ? n_succ == 1 && g->succ[g->succ_start[v]] == v + 1 : n_succ == 0;
        if (!chained)
            return pb_errorf(err,
                             "layer '%s': a HeterPS model is a chain in node order (each "
                             "layer feeds exactly the next)",
                             name);
    }
    return PB_OK;
}

typedef struct heterps_model_default {
    const char *prefix;
    double tl, epochs, examples;
} heterps_model_default;

/* §5, "Workload defaults": E*M/TL matches the paper's average training times. */
static const heterps_model_default heterps_defaults[] = {
    {"ctrdnn", 1.2e6, 1, 4373472329.0},
    {"matchnet", 5e4, 1, 2.49e8},
    {"2emb", 2e5, 10, 40428967},
    {"nce", 1e6, 1, 5.34e9},
};

int heterps_workload(const char *graph_name, double *tl, double *epochs, double *examples,
                     pb_error *err)
{
    const char *base = strrchr(graph_name, '/');
    base = base ? base + 1 : graph_name;
    for (size_t i = 0; i < sizeof heterps_defaults / sizeof heterps_defaults[0]; i++) {
        const heterps_model_default *d = &heterps_defaults[i];
        if (strncmp(base, d->prefix, strlen(d->prefix)) == 0) {
            *tl = d->tl;
            *epochs = d->epochs;
            *examples = d->examples;
            return PB_OK;
        }
    }
    return pb_errorf(err,
                     "graph '%s' is none of the HeterPS models (ctrdnn*, matchnet, 2emb, "
                     "nce): set the options throughput_limit, epochs and examples",
                     graph_name);
}

static int heterps_first_device(const pb_cluster *c, int type)
{
    for (int d = 0; d < c->n_devices; d++)
        if (c->device_type[d] == type)
            return d;
    return -1;
}

int heterps_types(const pb_cluster *c, int *cluster_type, int *device, pb_error *err)
{
    int cpu = -1;
    for (int i = 0; i < c->n_types; i++)
        if (strcmp(pb_cluster_type(c, i)->name, "CPU") == 0)
            cpu = i;
    int first = cpu >= 0 ? heterps_first_device(c, cpu) : -1;
    if (first < 0)
        return pb_errorf(err,
                         "cluster '%s' has no CPU devices: HeterPS plans put type 0 on CPU "
                         "cores (use the heterps preset with enough devices)",
                         c->name);
    cluster_type[0] = cpu;
    device[0] = first;
    int n = 1;
    for (int i = 0; i < c->n_types; i++) {
        int d = i == cpu ? -1 : heterps_first_device(c, i);
        if (d < 0)
            continue;
        cluster_type[n] = i;
        device[n++] = d;
    }
    if (n < 2)
        return pb_errorf(err, "cluster '%s' has only CPU devices: HeterPS needs a GPU type too",
                         c->name);
    return n;
}
