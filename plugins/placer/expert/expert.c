/* expert.c — GDP's human-expert placements (specs/gdp.md §8) of the zoo's models, read from the
 * units' TF names: RNNLM and GNMT layer per GPU, Inception-V3 split at its middle conv unit.
 * Backward and optimizer units go with their forward unit (colocate_gradients_with_ops), the
 * input pipeline stays on the host. */
#include "gdp_units.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct expert_opts {
    int hp_gnmt;      /* 0 mirhoseini, 1 separate */
    int hp_inception; /* 0 split, 1 single_gpu */
    int include_cpu;
} expert_opts;

static const pb_option_def expert_options[] = {
    {.name = "hp_gnmt",
     .type = PB_OPT_ENUM,
     .default_value = "mirhoseini",
     .choices = "mirhoseini|separate",
     .help = "GNMT: attention and softmax with the last LSTM layer (mirhoseini, spec §8 [L]) or "
             "on GPU (L mod d) (separate, GDP's wording)",
     .offset = offsetof(expert_opts, hp_gnmt)},
    {.name = "hp_inception",
     .type = PB_OPT_ENUM,
     .default_value = "split",
     .choices = "split|single_gpu",
     .help = "Inception-V3: contiguous parts with equal conv-unit counts (split, spec §8 [L]) or "
             "all on the first GPU (single_gpu)",
     .offset = offsetof(expert_opts, hp_inception)},
    {.name = "include_cpu",
     .type = PB_OPT_BOOL,
     .default_value = "false",
     .help = "count the host CPU as one more device (spec §1 [I]: GPUs only)",
     .offset = offsetof(expert_opts, include_cpu)},
};

typedef struct expert_placer {
    const pb_host *host;
    expert_opts o;
} expert_placer;

/* Layer codes besides a layer index >= 0. */
enum { EXPERT_GLOBAL = -1, EXPERT_LAST = -2, EXPERT_HEAD = -3 };

static int expert_create(const pb_create_args *a, void **instance, pb_error *err)
{
    expert_placer *x = calloc(1, sizeof *x);
    if (!x)
        return pb_errorf(err, "out of memory");
    x->host = a->host;
    x->o = *(const expert_opts *)a->options;
    *instance = x;
    return PB_OK;
}

static void expert_destroy(void *instance)
{
    free(instance);
}

/* The number after the path component that starts with `key` ("cell_" in ".../cell_3/..."),
 * or -1 when no component starts with key followed by a digit. */
static int expert_number(const char *name, const char *key)
{
    size_t k = strlen(key);
    for (const char *s = name; (s = strstr(s, key)) != NULL; s++)
        if ((s == name || s[-1] == '/') && isdigit((unsigned char)s[k]))
            return atoi(s + k);
    return -1;
}

/* 1 when name has a path component equal to comp or starting with comp + "_". */
static int expert_has(const char *name, const char *comp)
{
    size_t k = strlen(comp);
    for (const char *s = name; (s = strstr(s, comp)) != NULL; s++)
        if ((s == name || s[-1] == '/') && (s[k] == '\0' || s[k] == '/'))
            return 1;
    return 0;
}

static int expert_prefix(const char *name, const char *prefix)
{
    return strncmp(name, prefix, strlen(prefix)) == 0;
}

/* GNMT (tensorflow/nmt gnmt_v2 as the zoo names it): encoder layer 0 is the bidirectional one
 * (fw cell_0, bw cell_1), encoder cell_k (k >= 2) is layer k - 1; decoder cell_l is layer l. */
static int expert_gnmt_layer(const char *f)
{
    if (expert_prefix(f, "embeddings/"))
        return 0;
    if (expert_prefix(f, "encoder/")) {
        if (expert_has(f, "memory"))
            return EXPERT_LAST;
        if (expert_prefix(f, "encoder/rnn/"))
            return expert_number(f, "cell_") + 1;
        if (expert_number(f, "bw_step_") >= 0)
            return 0; /* the backward half of the bidirectional layer */
        int k = expert_number(f, "cell_");
        return k >= 2 ? k - 1 : 0;
    }
    if (expert_prefix(f, "decoder/")) {
        int l = expert_number(f, "cell_");
        if (l >= 0)
            return l;
        if (expert_number(f, "step_") >= 0 && expert_has(f, "input"))
            return 0;
        return EXPERT_HEAD; /* attention, memory layer, output projection, softmax */
    }
    if (expert_prefix(f, "loss"))
        return EXPERT_HEAD;
    return EXPERT_GLOBAL;
}

/* RNNLM (the zoo's stacked LSTM): cell_l is layer l; embedding and step inputs with layer 0;
 * the output dropout, softmax and loss with the last layer. */
static int expert_rnnlm_layer(const char *f)
{
    int l = expert_number(f, "cell_");
    if (l >= 0)
        return l;
    if (expert_prefix(f, "embedding") || (expert_prefix(f, "rnn/") && expert_has(f, "input")))
        return 0;
    if (expert_prefix(f, "softmax") || expert_prefix(f, "loss") ||
        (expert_prefix(f, "rnn/") && expert_has(f, "dropout")))
        return EXPERT_LAST;
    return EXPERT_GLOBAL;
}

/* The layer count: 1 + the largest cell index of the weights under `scope`. */
static int expert_layer_count(const pb_graph *g, const char *scope)
{
    int count = 0;
    for (int v = 0; v < g->n_nodes; v++) {
        const char *f = gdpu_forward_name(g->node_name[v]);
        if (!expert_prefix(f, scope))
            continue;
        int l = expert_number(f, "cell_");
        if (l + 1 > count)
            count = l + 1;
    }
    return count;
}

/* Layer-per-GPU placement: layer l of L on GPU floor(l d / L); EXPERT_HEAD on the last layer's
 * GPU (mirhoseini) or on GPU (L mod d) (separate). */
static int expert_layers(const expert_placer *x, const pb_graph *g, const gdpu_devices *dev,
                         int gnmt, int *device, pb_error *err)
{
    int L = expert_layer_count(g, gnmt ? "decoder/multi_rnn_cell/" : "rnn/multi_rnn_cell/");
    if (L <= 0)
        return pb_errorf(err, "expert: graph %s has no %s cells to read the layer count from",
                         g->name, gnmt ? "decoder/multi_rnn_cell" : "rnn/multi_rnn_cell");
    int d = dev->n_gpus;
    for (int v = 0; v < g->n_nodes; v++) {
        const char *f = gdpu_forward_name(g->node_name[v]);
        int l = gnmt ? expert_gnmt_layer(f) : expert_rnnlm_layer(f);
        int gpu;
        if (l == EXPERT_HEAD && gnmt && x->o.hp_gnmt == 1)
            gpu = L % d;
        else {
            if (l == EXPERT_LAST || l == EXPERT_HEAD)
                l = L - 1;
            else if (l < 0)
                l = 0; /* global step, gradient clipping: with the first layer */
            if (l >= L)
                return pb_errorf(err, "expert: unit %s names layer %d of a %d-layer model",
                                 g->node_name[v], l, L);
            gpu = (int)((long long)l * d / L);
        }
        device[v] = dev->gpu[gpu];
    }
    return PB_OK;
}

/* One forward unit's name and its device, for the backward units' look-up. */
typedef struct expert_entry {
    const char *name;
    int device;
} expert_entry;

static int expert_entry_cmp(const void *a, const void *b)
{
    return strcmp(((const expert_entry *)a)->name, ((const expert_entry *)b)->name);
}

/* Inception-V3 (Mirhoseini 2017): the forward units in grappler topological order cut into d
 * contiguous parts with equal numbers of conv units (a unit after the k-th conv unit goes with
 * it); backward and optimizer units follow their forward unit. */
static int expert_contiguous(const pb_problem *p, const gdpu_devices *dev, int single, int *device,
                             pb_error *err)
{
    const pb_graph *g = p->graph, *ops = p->op_graph ? p->op_graph : p->graph;
    int n = g->n_nodes, d = single ? 1 : dev->n_gpus;
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    unsigned char *conv = calloc((size_t)(n > 0 ? n : 1), 1);
    expert_entry *fw = malloc((size_t)(n > 0 ? n : 1) * sizeof *fw);
    if (!order || !conv || !fw) {
        free(order);
        free(conv);
        free(fw);
        return pb_errorf(err, "out of memory");
    }
    int rc = gdpu_topo_fifo(g, order, err);
    for (int v = 0; v < ops->n_nodes; v++)
        if (strcmp(ops->node_type[v], "Conv2D") == 0 && gdpu_is_forward(ops->node_name[v]))
            conv[ops != g && ops->group_of ? ops->group_of[v] : v] = 1;
    int n_conv = 0, n_fw = 0;
    for (int v = 0; v < n; v++)
        n_conv += conv[v] && gdpu_is_forward(g->node_name[v]);
    if (rc == PB_OK && n_conv == 0)
        rc = pb_errorf(err, "expert: graph %s has no forward Conv2D op to split at", g->name);
    int seen = 0, part = 0;
    for (int k = 0; rc == PB_OK && k < n; k++) {
        int v = order[k];
        if (!gdpu_is_forward(g->node_name[v]))
            continue;
        if (conv[v])
            part = (int)((long long)seen++ * d / n_conv);
        device[v] = dev->gpu[part];
        fw[n_fw++] = (expert_entry){g->node_name[v], device[v]};
    }
    qsort(fw, (size_t)n_fw, sizeof *fw, expert_entry_cmp);
    for (int v = 0; rc == PB_OK && v < n; v++) {
        if (gdpu_is_forward(g->node_name[v]))
            continue;
        expert_entry key = {gdpu_forward_name(g->node_name[v]), 0};
        expert_entry *hit = bsearch(&key, fw, (size_t)n_fw, sizeof *fw, expert_entry_cmp);
        device[v] = hit ? hit->device : dev->gpu[0];
    }
    free(order);
    free(conv);
    free(fw);
    return rc;
}

static int expert_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                        pb_error *err)
{
    expert_placer *x = instance;
    const pb_graph *g = p->graph;
    const pb_graph *ops = p->op_graph ? p->op_graph : g;
    char model[64];
    gdpu_model_name(ops->name ? ops->name : "", model, sizeof model);
    int kind = strcmp(model, "rnnlm") == 0           ? 0
               : strcmp(model, "gnmt") == 0          ? 1
               : strncmp(model, "inception", 9) == 0 ? 2
                                                     : -1;
    if (kind < 0)
        return pb_errorf(err,
                         "expert: no human-expert placement for graph '%s' (model '%s'); known: "
                         "rnnlm, gnmt, inception* (specs/gdp.md §8; Transformer-XL, AmoebaNet "
                         "and WaveNet are not in the zoo yet)",
                         ops->name ? ops->name : "?", model);
    gdpu_devices dev;
    if (gdpu_devices_init(&dev, p->cluster, x->o.include_cpu, err))
        return PB_ERR;
    unsigned char *pinned = malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1));
    int rc = pinned ? PB_OK : pb_errorf(err, "out of memory");
    if (rc == PB_OK)
        rc = kind == 2 ? expert_contiguous(p, &dev, x->o.hp_inception == 1, best->device, err)
                       : expert_layers(x, g, &dev, kind == 1, best->device, err);
    if (rc == PB_OK) {
        gdpu_pinned(p, pinned);
        for (int v = 0; v < g->n_nodes; v++)
            if (pinned[v] && dev.host >= 0)
                best->device[v] = dev.host;
    }
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
    if (rc == PB_OK)
        rc = x->host->simulate(x->host->ctx, best, &ev, err);
    if (rc == PB_OK) {
        *initial_us = -1;
        pb_progress pr = {.struct_size = sizeof pr,
                          .episode_best_us = ev.step_time_us,
                          .best_so_far_us = ev.step_time_us,
                          .sim_calls = 1};
        x->host->progress(x->host->ctx, &pr);
    }
    free(pinned);
    gdpu_devices_free(&dev);
    return rc;
}

static const pb_placer_ops expert_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = expert_create,
    .destroy = expert_destroy,
    .place = expert_place,
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "expert", "1.0",
                       "GDP's human-expert placements (spec §8): RNNLM/GNMT layer per GPU, "
                       "Inception-V3 in contiguous halves; backward and optimizer units with "
                       "their forward unit",
                       expert_options, expert_opts, &expert_ops);
