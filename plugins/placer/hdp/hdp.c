/* hdp.c — HDP, TensorFlow's hierarchical device placer (specs/gdp.md §7: grappler's
 * hierarchical_controller.py and graph_placer.py), GDP's learned baseline: a feed-forward grouper
 * and a seq2seq LSTM placer with attention trained together by REINFORCE with a moving-average
 * baseline, reward sqrt(run time), failures 100 s. */
#include "gdp_units.h"
#include "hdp_model.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hdp_opts {
    long long steps, hidden, grouping_hidden, num_groups, stop_noise_step, stop_sampling;
    long long start_decay_step, decay_steps, stop_updating_after_steps, progress_every, patience;
    double temperature, tanh_constant, noise, failing_signal, bl_dec, grad_bound, lr, lr_dec;
    int start_with_failing_signal, fidelity, include_cpu, shape_feature;
} hdp_opts;

#define HDP_INT(n, def, lo, hi, field, text)                                                       \
    {                                                                                              \
        .name = n, .type = PB_OPT_INT, .default_value = def, .min = lo, .max = hi, .help = text,   \
        .offset = offsetof(hdp_opts, field)                                                        \
    }
#define HDP_DBL(n, def, lo, hi, field, text)                                                       \
    {                                                                                              \
        .name = n, .type = PB_OPT_DOUBLE, .default_value = def, .min = lo, .max = hi,              \
        .help = text, .offset = offsetof(hdp_opts, field)                                          \
    }

static const pb_option_def hdp_options[] = {
    HDP_INT("steps", "4000", 1, 1e9, steps,
            "controller steps (one sampled and measured placement each; the run's budget "
            "episodes or sim_calls override it); spec §6.4: GDP's 10 x 400 rollouts"),
    HDP_INT("hidden_size", "512", 2, 4096, hidden,
            "placer LSTM width (the encoder: half per "
            "direction)"),
    HDP_INT("grouping_hidden_size", "64", 1, 4096, grouping_hidden, "grouper hidden width"),
    HDP_INT("num_groups", "0", 0, 4096, num_groups,
            "groups; 0 = min(256, 20 x the devices placed on) (num_groups None)"),
    HDP_DBL("temperature", "1", 1e-6, 1e6, temperature, "placer logits divided by it"),
    HDP_DBL("tanh_constant", "1", 0, 1e6, tanh_constant,
            "placer logits = tanh(logits) x it; 0 = no tanh"),
    HDP_DBL("logits_std_noise", "0.5", 0, 1e3, noise,
            "Gaussian noise on the logits, std = it x ||logits|| / sqrt(numel)"),
    HDP_INT("stop_noise_step", "750", 0, 1e9, stop_noise_step, "no noise after this step"),
    HDP_INT("stop_sampling", "500", 0, 1e9, stop_sampling,
            "from this step the placer replays its last placement; the grouper keeps sampling"),
    HDP_DBL("failing_signal", "100", 1e-6, 1e9, failing_signal,
            "run time in seconds of a failed (out of memory) placement"),
    {.name = "start_with_failing_signal",
     .type = PB_OPT_BOOL,
     .default_value = "true",
     .help = "baseline starts at sqrt(failing_signal), else at the first reward",
     .offset = offsetof(hdp_opts, start_with_failing_signal)},
    HDP_DBL("bl_dec", "0.9", 0, 1, bl_dec, "moving-average decay of the baseline"),
    HDP_DBL("grad_bound", "1", 0, 1e9, grad_bound, "global gradient-norm clip; 0 = none"),
    HDP_DBL("lr", "0.1", 0, 1e3, lr, "Adam learning rate before start_decay_step"),
    HDP_DBL("lr_dec", "0.95", 0, 1, lr_dec, "staircase decay factor"),
    HDP_INT("start_decay_step", "400", 0, 1e9, start_decay_step, "first decayed step"),
    HDP_INT("decay_steps", "50", 1, 1e9, decay_steps, "steps per decay"),
    HDP_INT("stop_updating_after_steps", "1000", 0, 1e9, stop_updating_after_steps,
            "from this step failed samples leave the loss and the baseline"),
    {.name = "hdp_fidelity",
     .type = PB_OPT_ENUM,
     .default_value = "paper",
     .choices = "paper|tf_code",
     .help = "paper: the loss uses the evaluated grouping and placement (spec §7.6 [I]); "
             "tf_code: fresh samples on an all-zero placer input, the released code's bug",
     .offset = offsetof(hdp_opts, fidelity)},
    {.name = "include_cpu",
     .type = PB_OPT_BOOL,
     .default_value = "false",
     .help = "the host CPU is one more device to place on (spec §1 [I]: GPUs only)",
     .offset = offsetof(hdp_opts, include_cpu)},
    {.name = "shape_feature",
     .type = PB_OPT_ENUM,
     .default_value = "log2",
     .choices = "log2|elements",
     .help = "the graphs carry bytes per output port, not dims: slot 5i of port i holds "
             "log2(1 + elements) or the raw element count (other axes -1)",
     .offset = offsetof(hdp_opts, shape_feature)},
    HDP_INT("patience", "800", 0, 1e9, patience,
            "stop when the best step time has not improved by 1 % for this many steps (GDP's "
            "budget rule, spec §6.4: 2 iterations x 400 rollouts); 0 = run every step"),
    HDP_INT("progress_every", "10", 1, 1e9, progress_every,
            "a curve point every this many steps (and at every improvement)"),
};

typedef struct hdp_placer_ctx {
    const pb_host *host;
    hdp_opts o;
    uint64_t seed;
} hdp_placer_ctx;

static int hdp_create(const pb_create_args *a, void **instance, pb_error *err)
{
    hdp_placer_ctx *h = calloc(1, sizeof *h);
    if (!h)
        return pb_errorf(err, "out of memory");
    h->host = a->host;
    h->o = *(const hdp_opts *)a->options;
    h->seed = a->seed;
    *instance = h;
    return PB_OK;
}

static void hdp_destroy(void *instance)
{
    free(instance);
}

/* The problem as HDP sees it: the important ops (unpinned units) in grappler order. */
typedef struct hdp_problem {
    int n;           /* important ops */
    int *unit;       /* [n] unit of the placed graph, in topological order */
    int *type_index; /* [n] rank of the op's type among the used types, sorted */
    int n_types;
    float *dims;     /* [n * 25] */
    int *succ_start; /* [n + 1] consumers among the important ops */
    int *succ;
    unsigned char *pinned; /* [units] */
} hdp_problem;

static void hdp_problem_free(hdp_problem *q)
{
    free(q->unit);
    free(q->type_index);
    free(q->dims);
    free(q->succ_start);
    free(q->succ);
    free(q->pinned);
}

/* The op type of unit v: its own, or for a group the type of its first member op. */
static const char *hdp_unit_type(const pb_problem *p, const int *first_member, int v)
{
    const pb_graph *ops = p->op_graph ? p->op_graph : p->graph;
    if (ops != p->graph && first_member[v] >= 0)
        return ops->node_type[first_member[v]];
    return p->graph->node_type[v];
}

static int hdp_str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int hdp_problem_init(hdp_problem *q, const pb_problem *p, int host, int shape_elements,
                            pb_error *err)
{
    const pb_graph *g = p->graph, *ops = p->op_graph ? p->op_graph : p->graph;
    int units = g->n_nodes, sz = units > 0 ? units : 1;
    memset(q, 0, sizeof *q);
    int *order = malloc((size_t)sz * sizeof *order), *pos = malloc((size_t)sz * sizeof *pos);
    int *first = malloc((size_t)sz * sizeof *first);
    const char **types = malloc((size_t)sz * sizeof *types);
    q->pinned = malloc((size_t)sz);
    q->unit = malloc((size_t)sz * sizeof *q->unit);
    q->type_index = malloc((size_t)sz * sizeof *q->type_index);
    q->dims = malloc((size_t)sz * HDP_SHAPE_SLOTS * sizeof *q->dims);
    q->succ_start = calloc((size_t)sz + 1, sizeof *q->succ_start);
    q->succ = malloc((size_t)(g->n_edges > 0 ? g->n_edges : 1) * sizeof *q->succ);
    int rc = order && pos && first && types && q->pinned && q->unit && q->type_index && q->dims &&
                     q->succ_start && q->succ
                 ? PB_OK
                 : pb_errorf(err, "out of memory");
    if (rc == PB_OK)
        rc = gdpu_topo_fifo(g, order, err);
    if (rc == PB_OK) {
        gdpu_pinned(p, q->pinned);
        for (int v = 0; v < units; v++)
            first[v] = -1;
        if (ops != g && ops->group_of)
            for (int v = ops->n_nodes - 1; v >= 0; v--)
                first[ops->group_of[v]] = v;
        for (int k = 0; k < units; k++) {
            int v = order[k];
            pos[v] = -1;
            if (q->pinned[v] && host >= 0)
                continue;
            pos[v] = q->n;
            q->unit[q->n++] = v;
        }
        /* used types, sorted (ListAvailableOps order restricted to the used ones) */
        for (int i = 0; i < q->n; i++)
            types[i] = hdp_unit_type(p, first, q->unit[i]);
        qsort(types, (size_t)q->n, sizeof *types, hdp_str_cmp);
        for (int i = 0; i < q->n; i++)
            if (q->n_types == 0 || strcmp(types[q->n_types - 1], types[i]) != 0)
                types[q->n_types++] = types[i];
        for (int i = 0; i < q->n; i++) {
            const char *t = hdp_unit_type(p, first, q->unit[i]);
            const char **hit = bsearch(&t, types, (size_t)q->n_types, sizeof *types, hdp_str_cmp);
            q->type_index[i] = (int)(hit - types);
        }
        for (int i = 0; i < q->n; i++) {
            int v = q->unit[i];
            float *d = q->dims + (size_t)i * HDP_SHAPE_SLOTS;
            for (int j = 0; j < HDP_SHAPE_SLOTS; j++)
                d[j] = -1;
            int np = g->port_start ? g->port_start[v + 1] - g->port_start[v] : 1;
            for (int port = 0; port < np && port < 5; port++) {
                double bytes =
                    g->port_start ? g->port_bytes[g->port_start[v] + port] : g->out_bytes[v];
                double elems = bytes / 4.0;
                d[5 * port] = (float)(shape_elements ? elems : log2(1.0 + elems));
            }
        }
        int m = 0;
        for (int i = 0; i < q->n; i++) {
            int v = q->unit[i];
            for (int k = g->succ_start[v]; k < g->succ_start[v + 1]; k++)
                if (pos[g->succ[k]] >= 0)
                    q->succ[m++] = pos[g->succ[k]];
            q->succ_start[i + 1] = m;
        }
    }
    free(order);
    free(pos);
    free(first);
    free(types);
    if (rc != PB_OK)
        hdp_problem_free(q);
    return rc;
}

/* One controller step's samples and what they cost. */
typedef struct hdp_run {
    hdp_placer_ctx *ctx;
    const pb_problem *p;
    hdp_problem q;
    gdpu_devices dev;
    hdp_net net;
    pb_nn_tape *tape;
    pb_nn_adam *adam;
    pb_rng rng;
    float *x;    /* op features [n x 46] */
    float *e;    /* group embeddings [G x width] */
    int *group;  /* [n] */
    int *placed; /* [G] device per group (action index) */
    int *cached; /* [G] the placer's cached placement */
    int *device; /* [units] the strategy's devices */
    int n_groups, width, have_cached;
} hdp_run;

static void hdp_run_free(hdp_run *r)
{
    hdp_problem_free(&r->q);
    gdpu_devices_free(&r->dev);
    hdp_net_free(&r->net);
    pb_nn_tape_free(r->tape);
    pb_nn_adam_free(r->adam);
    free(r->x);
    free(r->e);
    free(r->group);
    free(r->placed);
    free(r->cached);
    free(r->device);
}

static int hdp_run_init(hdp_run *r, hdp_placer_ctx *ctx, const pb_problem *p, pb_error *err)
{
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->p = p;
    const hdp_opts *o = &ctx->o;
    if (gdpu_devices_init(&r->dev, p->cluster, o->include_cpu, err))
        return PB_ERR;
    if (hdp_problem_init(&r->q, p, r->dev.host, o->shape_feature == 1, err)) {
        gdpu_devices_free(&r->dev);
        return PB_ERR;
    }
    if (r->q.n == 0) {
        hdp_run_free(r);
        return pb_errorf(err, "hdp: graph %s has no unit to place", p->graph->name);
    }
    int d = r->dev.n_gpus;
    r->n_groups = o->num_groups > 0 ? (int)o->num_groups : (20 * d < 256 ? 20 * d : 256);
    r->width = hdp_group_width(r->n_groups, r->q.n_types);
    pb_rng_seed(&r->rng, ctx->seed);
    pb_rng init_rng;
    pb_rng_seed(&init_rng, pb_seed_derive(ctx->seed, "hdp/init"));
    hdp_sizes s = {HDP_OP_FEATURES, (int)o->grouping_hidden, r->n_groups,
                   r->width,        (int)o->hidden / 2 * 2,  d};
    int units = p->graph->n_nodes;
    r->x = malloc((size_t)r->q.n * HDP_OP_FEATURES * sizeof *r->x);
    r->e = malloc((size_t)r->n_groups * (size_t)r->width * sizeof *r->e);
    r->group = malloc((size_t)r->q.n * sizeof *r->group);
    r->placed = malloc((size_t)r->n_groups * sizeof *r->placed);
    r->cached = malloc((size_t)r->n_groups * sizeof *r->cached);
    r->device = malloc((size_t)units * sizeof *r->device);
    r->tape = pb_nn_tape_new();
    r->adam = pb_nn_adam_new(0.9, 0.999, 1e-8);
    if (!r->x || !r->e || !r->group || !r->placed || !r->cached || !r->device || !r->tape ||
        !r->adam) {
        hdp_run_free(r);
        return pb_errorf(err, "out of memory");
    }
    if (hdp_net_init(&r->net, &s, &init_rng, err)) {
        hdp_run_free(r);
        return PB_ERR;
    }
    hdp_op_features(r->q.n, r->q.type_index, r->q.dims, r->q.succ_start, r->q.succ, r->x);
    for (int v = 0; v < units; v++)
        r->device[v] = r->dev.host; /* pinned units; the others are overwritten */
    return PB_OK;
}

/*
 * Records grouper + placer on the tape with the given noise and returns log p(grouping) +
 * log p(placement) (1 x 1).  replay: the placer's actions to replay (NULL: sample); zero_input:
 * the placer reads all-zero group embeddings (tf_code's unfed placeholder).
 */
static pb_nn_tensor *hdp_forward(hdp_run *r, int record, double noise, const int *replay,
                                 int zero_input)
{
    const hdp_opts *o = &r->ctx->o;
    pb_nn_tape_reset(r->tape, record);
    pb_nn_tensor *x = pb_nn_constant(r->tape, r->q.n, HDP_OP_FEATURES, r->x);
    hdp_pick pg = {&r->rng, noise, 1, 0, NULL, 0};
    pb_nn_tensor *lg = hdp_grouper(r->tape, &r->net, x, &pg, r->group);
    if (!lg)
        return NULL;
    if (zero_input)
        memset(r->e, 0, (size_t)r->n_groups * (size_t)r->width * sizeof *r->e);
    else
        hdp_group_features(r->q.n, r->n_groups, r->q.n_types, r->group, r->q.type_index, r->q.dims,
                           r->q.succ_start, r->q.succ, r->e);
    pb_nn_tensor *e = pb_nn_constant(r->tape, r->n_groups, r->width, r->e);
    hdp_pick pp = {&r->rng, noise, o->temperature, o->tanh_constant, replay, 0};
    pb_nn_tensor *ld = hdp_placer(r->tape, &r->net, e, &pp, r->placed);
    return pb_nn_add(r->tape, lg, ld);
}

/* One Adam step on loss = (R - b) (log p), or on a zero loss when logp is NULL (a dropped
 * failure: TF still applies Adam with zero gradients). */
static int hdp_update(hdp_run *r, pb_nn_tensor *logp, double advantage, long long step,
                      pb_error *err)
{
    const hdp_opts *o = &r->ctx->o;
    pb_nn_params_zero_grad(r->net.params);
    if (logp) {
        pb_nn_tensor *loss = pb_nn_scale(r->tape, logp, (float)advantage);
        if (pb_nn_tape_status(r->tape, err) || pb_nn_backward(r->tape, loss, NULL, err))
            return PB_ERR;
    }
    if (o->grad_bound > 0)
        pb_nn_clip_grad_norm(r->net.params, o->grad_bound);
    double lr =
        hdp_learning_rate(o->lr, o->lr_dec, (int)o->start_decay_step, (int)o->decay_steps, step);
    return pb_nn_adam_step(r->adam, r->net.params, lr, err);
}

static int hdp_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                     pb_error *err)
{
    hdp_placer_ctx *ctx = instance;
    const hdp_opts *o = &ctx->o;
    hdp_run r;
    if (hdp_run_init(&r, ctx, p, err))
        return PB_ERR;
    long long steps = gdpu_budget(p->budget, o->steps);
    double fail_reward = sqrt(o->failing_signal);
    double baseline = o->start_with_failing_signal ? fail_reward : NAN;
    double best_us = INFINITY, best_any = INFINITY;
    int have_feasible = 0, rc = PB_OK;
    double mark_us = INFINITY; /* the best when it last improved by 1 % */
    long long mark_step = 0;
    *initial_us = -1;
    for (long long k = 0; k < steps && rc == PB_OK; k++) {
        double noise = k <= o->stop_noise_step ? o->noise : 0;
        const int *replay = k >= o->stop_sampling && r.have_cached ? r.cached : NULL;
        pb_nn_tensor *logp = hdp_forward(&r, o->fidelity == 0, noise, replay, 0);
        if (!logp) {
            rc = pb_nn_tape_status(r.tape, err);
            break;
        }
        if (!replay) {
            memcpy(r.cached, r.placed, (size_t)r.n_groups * sizeof *r.cached);
            r.have_cached = 1;
        }
        for (int i = 0; i < r.q.n; i++)
            r.device[r.q.unit[i]] = r.dev.gpu[r.placed[r.group[i]]];
        pb_strategy s;
        pb_strategy_placement(&s, p->graph->n_nodes, r.device);
        pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
        if ((rc = ctx->host->simulate(ctx->host->ctx, &s, &ev, err)) != PB_OK)
            break;
        double run_s = ev.feasible ? ev.step_time_us / 1e6 : o->failing_signal;
        double reward = sqrt(run_s);
        if (k == 0)
            *initial_us = ev.step_time_us;
        int improved = 0;
        if (ev.feasible && ev.step_time_us < best_us) {
            best_us = ev.step_time_us;
            have_feasible = improved = 1;
            memcpy(best->device, r.device, (size_t)p->graph->n_nodes * sizeof *best->device);
        } else if (!have_feasible && ev.step_time_us < best_any) {
            best_any = ev.step_time_us; /* the least bad failure, if nothing ever fits */
            memcpy(best->device, r.device, (size_t)p->graph->n_nodes * sizeof *best->device);
        }
        if (isnan(baseline))
            baseline = reward;
        int failed = reward >= fail_reward;
        int dropped = k >= o->stop_updating_after_steps && failed;
        if (o->fidelity == 1 && !dropped)
            logp = hdp_forward(&r, 1, noise, NULL, 1); /* the released code's loss */
        if (!logp) {
            rc = pb_nn_tape_status(r.tape, err);
            break;
        }
        if ((rc = hdp_update(&r, dropped ? NULL : logp, reward - baseline, k, err)) != PB_OK)
            break;
        if (k < o->stop_updating_after_steps || !failed)
            baseline = o->bl_dec * baseline + (1 - o->bl_dec) * reward;
        if (improved && best_us < mark_us / 1.01) {
            mark_us = best_us;
            mark_step = k;
        }
        int stop = o->patience > 0 && k - mark_step >= o->patience;
        if (improved || stop || (k + 1) % o->progress_every == 0 || k + 1 == steps) {
            pb_progress pr = {.struct_size = sizeof pr,
                              .episode = (int)k,
                              .episode_best_us = ev.step_time_us,
                              .best_so_far_us = have_feasible ? best_us : best_any,
                              .sim_calls = k + 1};
            ctx->host->progress(ctx->host->ctx, &pr);
        }
        if (ctx->host->deadline_passed(ctx->host->ctx) || stop)
            break;
    }
    if (rc == PB_OK && !have_feasible)
        ctx->host->log(ctx->host->ctx, PB_LOG_INFO,
                       "hdp: no sampled placement fit in memory; returning the fastest failure");
    hdp_run_free(&r);
    return rc;
}

static const pb_placer_ops hdp_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = hdp_create,
    .destroy = hdp_destroy,
    .place = hdp_place,
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "hdp", "1.0",
                       "HDP (TensorFlow's hierarchical controller, GDP's baseline): feed-forward "
                       "grouper + bi-LSTM/attention seq2seq placer, REINFORCE, reward "
                       "sqrt(run time) (spec §7)",
                       hdp_options, hdp_opts, &hdp_ops);
