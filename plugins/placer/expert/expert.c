/* expert.c — GDP's human-expert placements (specs/gdp.md §8) of the zoo's models, read from the
 * units' TF names: RNNLM and GNMT layer per GPU, Inception-V3 split at its middle conv unit,
 * Transformer-XL layer per GPU, WaveNet stack per GPU, AmoebaNet in contiguous cell groups.
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
    int balance; /* AmoebaNet: 0 cells, 1 flops */
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
    {.name = "balance",
     .type = PB_OPT_ENUM,
     .default_value = "cells",
     .choices = "cells|flops",
     .help = "AmoebaNet: contiguous parts with equal cell counts (cells, spec §8 [I], GPipe-style) "
             "or equal forward compute (flops: the cells' forward units' cost)",
     .offset = offsetof(expert_opts, balance)},
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

/* ------------------------------------------------------------------ Transformer-XL, WaveNet,
 * AmoebaNet (spec §8 [I]).  Each unit gets a "part" (a layer, a stack or a cell index) or a code;
 * units no rule names (gradient sums such as the top-level AddN_k, Adam's and the clipping
 * globals) go with a neighbour (expert_neighbours). */

/* Transformer-XL (the zoo's kimiyoung tf/ graph): transformer/layer_l/... and segment_s/layer_l/...
 * are layer l, mems_l is layer l's memory (mems: layer 0); embeddings and the shared
 * positional terms with layer 0; the segments' and the total loss with the last layer. */
static int expert_txl_layer(const char *f)
{
    int l = expert_number(f, "layer_");
    if (l >= 0)
        return l;
    if (strcmp(f, "mems") == 0)
        return 0;
    if (expert_prefix(f, "mems_") && isdigit((unsigned char)f[5]))
        return atoi(f + 5);
    if (expert_prefix(f, "transformer/") || expert_has(f, "embed") ||
        expert_prefix(f, "IteratorGetNext"))
        return 0;
    if (expert_has(f, "loss") || expert_prefix(f, "loss"))
        return EXPERT_LAST;
    return EXPERT_GLOBAL;
}

/* WaveNet (ibab/tensorflow-wavenet as the zoo names it): dilated_stack/layerK is stack K / 9 (9
 * dilations per stack); the input (encode, causal_layer) with stack 0; post-processing (the skip
 * sum and the 1x1 layers) and the loss with the last stack. */
static int expert_wavenet_stack(const char *f)
{
    int k = expert_number(f, "layer");
    if (k >= 0 && strstr(f, "dilated_stack/"))
        return k / 9;
    if (strstr(f, "wavenet/encode") || strstr(f, "wavenet/causal_layer") ||
        expert_prefix(f, "Placeholder"))
        return 0;
    if (strstr(f, "wavenet/postprocessing") || strstr(f, "wavenet/loss"))
        return EXPERT_LAST;
    return EXPERT_GLOBAL;
}

/* AmoebaNet: the cell a unit belongs to, as its scope name ("cell_stem_0", "cell_3",
 * "reduction_cell_1") in out, or a code: the stem convolutions with the first cell (EXPERT_HEAD
 * is reused for "the first part"), aux_K with cell_K, the final layer and the losses with the
 * last cell. */
enum { EXPERT_FIRST = -4, EXPERT_AUX = -5 };
static int expert_amoeba_cell(const char *f, char *out, size_t size)
{
    const char *slash = strchr(f, '/');
    size_t n = slash ? (size_t)(slash - f) : strlen(f);
    if ((expert_prefix(f, "cell_") || expert_prefix(f, "reduction_cell_")) && n < size) {
        memcpy(out, f, n);
        out[n] = '\0';
        return 0;
    }
    if (expert_prefix(f, "aux_") && isdigit((unsigned char)f[4])) {
        snprintf(out, size, "cell_%d", atoi(f + 4));
        return EXPERT_AUX;
    }
    if (expert_prefix(f, "stem") || expert_prefix(f, "Placeholder"))
        return EXPERT_FIRST;
    if (expert_prefix(f, "final_layer") || expert_has(f, "softmax_loss") ||
        expert_has(f, "aux_loss") || expert_prefix(f, "total_loss"))
        return EXPERT_LAST;
    return EXPERT_GLOBAL;
}

/* Units without a device (device[v] < 0) take the device of their first successor that has one,
 * walking the grappler order backwards (a gradient sum feeds the backward op of the tensor it sums,
 * which sits with its forward op), else of their first predecessor that has one, else the first
 * GPU. */
static int expert_neighbours(const pb_graph *g, const gdpu_devices *dev, int *device, pb_error *err)
{
    int n = g->n_nodes;
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    if (!order)
        return pb_errorf(err, "out of memory");
    int rc = gdpu_topo_fifo(g, order, err);
    for (int k = n - 1; rc == PB_OK && k >= 0; k--) {
        int v = order[k];
        for (int e = g->succ_start[v]; device[v] < 0 && e < g->succ_start[v + 1]; e++)
            if (device[g->succ[e]] >= 0)
                device[v] = device[g->succ[e]];
    }
    for (int k = 0; rc == PB_OK && k < n; k++) {
        int v = order[k];
        for (int e = g->pred_start[v]; device[v] < 0 && e < g->pred_start[v + 1]; e++)
            if (device[g->pred[e]] >= 0)
                device[v] = device[g->pred[e]];
        if (device[v] < 0)
            device[v] = dev->gpu[0];
    }
    free(order);
    return rc;
}

/* Part p of P on GPU floor(p d / P). */
static int expert_gpu(const gdpu_devices *dev, int p, int parts)
{
    return dev->gpu[(int)((long long)p * dev->n_gpus / parts)];
}

/* Transformer-XL layer l / WaveNet stack s on GPU floor(l d / L). */
static int expert_txl_wavenet(const pb_graph *g, const gdpu_devices *dev, int wavenet, int *device,
                              pb_error *err)
{
    int L = 0;
    for (int v = 0; v < g->n_nodes; v++) {
        const char *f = gdpu_forward_name(g->node_name[v]);
        int l = wavenet ? expert_wavenet_stack(f) : expert_txl_layer(f);
        if (l + 1 > L)
            L = l + 1;
    }
    if (L <= 0)
        return pb_errorf(err, "expert: graph %s has no %s to read the %s count from", g->name,
                         wavenet ? "wavenet/dilated_stack/layerK units" : "layer_l units",
                         wavenet ? "stack" : "layer");
    for (int v = 0; v < g->n_nodes; v++) {
        const char *f = gdpu_forward_name(g->node_name[v]);
        int l = wavenet ? expert_wavenet_stack(f) : expert_txl_layer(f);
        device[v] = l == EXPERT_GLOBAL ? -1 : expert_gpu(dev, l == EXPERT_LAST ? L - 1 : l, L);
    }
    return expert_neighbours(g, dev, device, err);
}

/* AmoebaNet (spec §8 [I], GPipe-style): the cells in the order the grappler order first meets
 * them, cut into d contiguous parts of equal cell counts (balance = cells) or of equal forward
 * cost (balance = flops: the cost of the cells' forward units; a cell goes to the part its cost
 * midpoint falls in). */
static int expert_amoebanet(const expert_placer *x, const pb_graph *g, const gdpu_devices *dev,
                            int *device, pb_error *err)
{
    int n = g->n_nodes;
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    int *cell_of = malloc((size_t)(n > 0 ? n : 1) * sizeof *cell_of);
    char(*names)[64] = malloc((size_t)(n > 0 ? n : 1) * sizeof *names);
    double *cost = calloc((size_t)(n > 0 ? n : 1), sizeof *cost);
    int *cell_gpu = malloc((size_t)(n > 0 ? n : 1) * sizeof *cell_gpu);
    if (!order || !cell_of || !names || !cost || !cell_gpu) {
        free(order);
        free(cell_of);
        free(names);
        free(cost);
        free(cell_gpu);
        return pb_errorf(err, "out of memory");
    }
    int rc = gdpu_topo_fifo(g, order, err), n_cells = 0;
    /* cells in forward order: a unit of a cell not seen yet opens it */
    for (int k = 0; rc == PB_OK && k < n; k++) {
        int v = order[k];
        char name[64];
        const char *f = gdpu_forward_name(g->node_name[v]);
        int code = expert_amoeba_cell(f, name, sizeof name);
        cell_of[v] = code;
        if (code != 0 && code != EXPERT_AUX)
            continue;
        int c = 0;
        while (c < n_cells && strcmp(names[c], name) != 0)
            c++;
        if (c == n_cells && code == 0)
            snprintf(names[n_cells++], sizeof names[0], "%s", name);
        cell_of[v] = c < n_cells ? c : EXPERT_GLOBAL; /* an aux head before its cell: a global */
        if (c < n_cells && gdpu_is_forward(g->node_name[v]) && code == 0)
            cost[c] += g->cost_us ? g->cost_us[v] : 1;
    }
    if (rc == PB_OK && n_cells == 0)
        rc = pb_errorf(err, "expert: graph %s has no AmoebaNet cells (cell_*, reduction_cell_*)",
                       g->name);
    double total = 0, acc = 0;
    for (int c = 0; c < n_cells; c++)
        total += cost[c];
    for (int c = 0; rc == PB_OK && c < n_cells; c++) {
        int part = c * dev->n_gpus / n_cells;
        if (x->o.balance == 1 && total > 0)
            part = (int)((acc + cost[c] / 2) / total * dev->n_gpus);
        acc += cost[c];
        cell_gpu[c] = dev->gpu[part < dev->n_gpus ? part : dev->n_gpus - 1];
    }
    for (int v = 0; rc == PB_OK && v < n; v++) {
        int c = cell_of[v];
        device[v] = c >= 0              ? cell_gpu[c]
                    : c == EXPERT_FIRST ? cell_gpu[0]
                    : c == EXPERT_LAST  ? cell_gpu[n_cells - 1]
                                        : -1;
    }
    if (rc == PB_OK)
        rc = expert_neighbours(g, dev, device, err);
    free(order);
    free(cell_of);
    free(names);
    free(cost);
    free(cell_gpu);
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
    int kind = strcmp(model, "rnnlm") == 0                 ? 0
               : strcmp(model, "gnmt") == 0                ? 1
               : strncmp(model, "inception", 9) == 0       ? 2
               : strncmp(model, "transformer-xl", 14) == 0 ? 3
               : strncmp(model, "wavenet", 7) == 0         ? 4
               : strncmp(model, "amoebanet", 9) == 0       ? 5
                                                           : -1;
    if (kind < 0)
        return pb_errorf(err,
                         "expert: no human-expert placement for graph '%s' (model '%s'); known: "
                         "rnnlm, gnmt, inception*, transformer-xl*, wavenet*, amoebanet* "
                         "(specs/gdp.md §8)",
                         ops->name ? ops->name : "?", model);
    gdpu_devices dev;
    if (gdpu_devices_init(&dev, p->cluster, x->o.include_cpu, err))
        return PB_ERR;
    unsigned char *pinned = malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1));
    int rc = pinned ? PB_OK : pb_errorf(err, "out of memory");
    if (rc == PB_OK)
        rc = kind == 2   ? expert_contiguous(p, &dev, x->o.hp_inception == 1, best->device, err)
             : kind == 3 ? expert_txl_wavenet(g, &dev, 0, best->device, err)
             : kind == 4 ? expert_txl_wavenet(g, &dev, 1, best->device, err)
             : kind == 5 ? expert_amoebanet(x, g, &dev, best->device, err)
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
                       "GDP's human-expert placements (spec §8): RNNLM/GNMT/Transformer-XL "
                       "layer per GPU, WaveNet stack per GPU, Inception-V3 and AmoebaNet in "
                       "contiguous parts; backward and optimizer units with their forward unit",
                       expert_options, expert_opts, &expert_ops);
