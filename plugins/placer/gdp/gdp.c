/* gdp.c — the GDP placer (specs/gdp.md): GraphSAGE embedding + segment-recurrent Transformer-XL
 * placement network, one-shot per-node device softmax, PPO with the mean-reward baseline.
 *
 * Modes (§6.6): one (GDP-one: search on the run's graph from the current parameters), finetune
 * (parameters from `load`, then a short search: ft_rollouts rollouts in iterations of ft_k, one
 * minibatch, `epochs` epochs), zeroshot (parameters from `load`, no update: the argmax placement,
 * or the best of zeroshot_samples samples).  GDP-batch trains one parameter set on several
 * problems through the placer's train() (each problem simulated by its own host).  `save` writes
 * the parameters after place() or train() in the NN core's parameter-file format.
 *
 * Decisions beyond the spec (each an option or stated here):
 * - The devices GDP chooses from are the cluster's non-CPU devices (include_cpu = false; all
 *   devices when the cluster has no other); at most 8 (d_max).
 * - T_ref (§6.1) is the best feasible of the baselines this plugin can compute itself with one
 *   simulator call each: every unit on the first device (single) and the sequence cut into
 *   contiguous parts of equal compute cost, one per device (chunks); t_ref_us overrides it (give
 *   the HP time there).  Those calls count as simulator calls.
 * - initial_us is the step time of the first rollout (the untrained policy's sample), or of the
 *   argmax placement in zeroshot mode.
 * - If no sampled placement is valid, the returned placement is the T_ref baseline placement,
 *   and a warning is logged.
 */
#include "gdp_net.h"
#include "gdp_ppo.h"
#include "placebench.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MODE_ONE = 0, MODE_FINETUNE = 1, MODE_ZEROSHOT = 2 };
enum { TREF_MIN = 0, TREF_SINGLE = 1, TREF_CHUNKS = 2 };
enum { LR_CONSTANT = 0, LR_NOAM = 1 };

typedef struct gdp_opts {
    int mode;
    long long iterations, rollouts, minibatches, epochs;
    double clip_eps, entropy;
    int ratio;
    double lr;
    int lr_schedule;
    double noam_scale;
    long long warmup;
    double adam_eps, clip_norm;
    int adv_norm, baseline_invalid;
    double invalid_reward;
    int t_ref;
    double t_ref_us, early_stop;
    long long patience, max_rollouts, ft_rollouts, ft_k, zeroshot_samples;
    const char *load, *save;
    int include_cpu;
    /* network */
    long long gs_layers, gs_dim, gs_knn;
    int gs_pool_act, gs_dir, gs_resample, gs_l2norm, adj_ids, extra_features, placer_net;
    long long trf_layers, d_model, n_head, d_head, d_inner, seg_len, mem_len;
    int trf_mask;
    double ln_eps;
    int superposition, sp_where, sp_scope, sp_form, colocation;
    double out_init_scale;
} gdp_opts;

#define GDP_INT(name_, def_, lo_, hi_, field_, help_)                                              \
    {                                                                                              \
        .name = name_, .type = PB_OPT_INT, .default_value = def_, .min = lo_, .max = hi_,          \
        .help = help_, .offset = offsetof(gdp_opts, field_)                                        \
    }
#define GDP_DBL(name_, def_, lo_, hi_, field_, help_)                                              \
    {                                                                                              \
        .name = name_, .type = PB_OPT_DOUBLE, .default_value = def_, .min = lo_, .max = hi_,       \
        .help = help_, .offset = offsetof(gdp_opts, field_)                                        \
    }
#define GDP_ENUM(name_, def_, choices_, field_, help_)                                             \
    {                                                                                              \
        .name = name_, .type = PB_OPT_ENUM, .default_value = def_, .min = 1, .max = 0,             \
        .choices = choices_, .help = help_, .offset = offsetof(gdp_opts, field_)                   \
    }
#define GDP_BOOL(name_, def_, field_, help_)                                                       \
    {                                                                                              \
        .name = name_, .type = PB_OPT_BOOL, .default_value = def_, .min = 1, .max = 0,             \
        .help = help_, .offset = offsetof(gdp_opts, field_)                                        \
    }
#define GDP_STR(name_, field_, help_)                                                              \
    {                                                                                              \
        .name = name_, .type = PB_OPT_STRING, .default_value = "", .min = 1, .max = 0,             \
        .help = help_, .offset = offsetof(gdp_opts, field_)                                        \
    }

/* clang-format off */
static const pb_option_def gdp_options[] = {
    GDP_ENUM("mode", "one", "one|finetune|zeroshot", mode,
             "one: PPO search on this graph (GDP-one); finetune: start from `load`, ft_rollouts rollouts in iterations of ft_k (< 50 steps, §6.6); zeroshot: `load` and no update"),
    GDP_INT("iterations", "10", 1, 1e6, iterations,
            "PPO iterations (the run's episodes budget wins) [I: §6.4 budget]"),
    GDP_INT("rollouts", "400", 1, 1e7, rollouts, "K: placements sampled per PPO iteration (Table 4)"),
    GDP_INT("minibatches", "40", 1, 1e6, minibatches, "minibatches per epoch (Table 4)"),
    GDP_INT("epochs", "5", 0, 1e4, epochs, "passes over the K rollouts per iteration (Table 4)"),
    GDP_DBL("clip_eps", "0.2", 0, 1, clip_eps, "PPO clip range epsilon"),
    GDP_DBL("entropy", "0.05", 0, 1e3, entropy, "entropy coefficient c_H"),
    GDP_ENUM("ratio", "node", "node|graph", ratio,
             "PPO ratio per node (default) or of the whole placement [I: §6.3]"),
    GDP_DBL("lr", "5e-4", 0, 10, lr, "Adam learning rate (constant schedule) [I: §6.4]"),
    GDP_ENUM("lr_schedule", "constant", "constant|noam", lr_schedule,
             "noam: lr_t = noam_scale d_model^-1/2 min(t^-1/2, t warmup^-3/2) (Table 4's 0.5 read as a schedule multiplier)"),
    GDP_DBL("noam_scale", "0.5", 0, 1e3, noam_scale, "multiplier of the noam schedule"),
    GDP_INT("warmup", "400", 1, 1e9, warmup, "warm-up steps of the noam schedule"),
    GDP_DBL("adam_eps", "1e-5", 0, 1, adam_eps, "Adam epsilon (ppo2)"),
    GDP_DBL("clip_norm", "0.5", 0, 1e9, clip_norm, "global gradient-norm clip, 0 = off (ppo2)"),
    GDP_BOOL("adv_norm", "false", adv_norm, "normalise advantages per minibatch (ppo2) [I]"),
    GDP_ENUM("baseline_invalid", "include", "include|exclude", baseline_invalid,
             "whether invalid (-10) rewards enter the mean-reward baseline [I: §6.2]"),
    GDP_DBL("invalid_reward", "-10", -1e9, 0, invalid_reward, "reward of an invalid (out of memory) placement"),
    GDP_ENUM("t_ref", "min", "min|single|chunks", t_ref,
             "T_ref of the reward -sqrt(T/T_ref): the best feasible of the single-device and equal-cost contiguous placements, or one of them [I: §6.1]"),
    GDP_DBL("t_ref_us", "0", 0, 1e15, t_ref_us, "T_ref in µs given directly (e.g. the HP step time); 0 = computed"),
    GDP_DBL("early_stop", "0.01", 0, 1, early_stop,
            "stop when the best step time improved by less than this share over `patience` iterations; 0 = never [I: §6.4]"),
    GDP_INT("patience", "2", 1, 1e6, patience, "iterations of the early-stop window"),
    GDP_INT("max_rollouts", "0", 0, 1e12, max_rollouts,
            "cap on sampled placements, 0 = none (a run's sim_calls budget wins and counts T_ref's calls too)"),
    GDP_INT("ft_rollouts", "50", 1, 1e9, ft_rollouts, "finetune: placements sampled in all (§6.6: < 50 steps)"),
    GDP_INT("ft_k", "10", 1, 1e9, ft_k, "finetune: rollouts per PPO iteration (one minibatch)"),
    GDP_INT("zeroshot_samples", "0", 0, 1e9, zeroshot_samples,
            "zeroshot: also sample this many placements and keep the best (0 = argmax only)"),
    GDP_STR("load", load, "parameter file (pb_nn_params JSON) to start from; required by finetune and zeroshot"),
    GDP_STR("save", save, "parameter file written after place() or train(); empty = none"),
    GDP_BOOL("include_cpu", "false", include_cpu,
             "the host CPU is an action too (default: GPUs only, CPU devices get nothing) [I: §1]"),
    GDP_INT("gs_layers", "4", 1, GDP_MAX_GS_LAYERS, gs_layers, "GraphSAGE layers (Table 3)"),
    GDP_INT("gs_dim", "128", 1, 4096, gs_dim, "GraphSAGE width; must equal d_model (Table 3)"),
    GDP_INT("gs_knn", "5", 1, 1000, gs_knn, "GraphSAGE maximum neighbours (Table 3)"),
    GDP_ENUM("gs_pool_act", "sigmoid", "sigmoid|relu", gs_pool_act,
             "activation inside the max-pool (GDP: sigmoid; GraphSAGE: relu)"),
    GDP_ENUM("gs_dir", "both", "both|in|out", gs_dir, "neighbourhood: predecessors and successors, or one side [I: §3.2]"),
    GDP_ENUM("gs_resample", "per_run", "per_run|per_forward", gs_resample,
             "draw the <= gs_knn neighbour subsets once per graph and run, or before every forward pass [I: §3.2]"),
    GDP_BOOL("gs_l2norm", "false", gs_l2norm, "GraphSAGE's final L2 normalisation of X0 [I]"),
    GDP_BOOL("adj_ids", "true", adj_ids, "the 20 adjacency-id features (HDP layout) [I: §2]"),
    GDP_BOOL("extra_features", "false", extra_features,
             "two more features: log2(1+output bytes)/32 and log2(1+compute µs)/32 [I: §2]"),
    GDP_ENUM("placer_net", "transformer", "transformer|mlp", placer_net,
             "Transformer-XL placer or the no-attention ablation (per-node MLP d -> 2d -> d, Fig. 3)"),
    GDP_INT("trf_layers", "2", 0, GDP_MAX_TRF_LAYERS, trf_layers, "Transformer-XL layers (Table 3)"),
    GDP_INT("d_model", "128", 1, 4096, d_model, "attention width (Table 3)"),
    GDP_INT("n_head", "5", 1, 64, n_head, "attention heads (Table 3)"),
    GDP_INT("d_head", "25", 1, 4096, d_head, "width per head (Table 3)"),
    GDP_INT("d_inner", "256", 1, 65536, d_inner, "feed-forward width (Table 3)"),
    GDP_INT("seg_len", "128", 1, 1e7, seg_len, "segment length L [I: §4.2]"),
    GDP_INT("mem_len", "128", 0, 1e7, mem_len, "memory length M [I: §4.2]"),
    GDP_ENUM("trf_mask", "causal", "causal|none", trf_mask, "attention mask within segment + memory [I: §4.2]"),
    GDP_DBL("ln_eps", "1e-5", 1e-12, 1, ln_eps, "layer-norm epsilon [I: §4.1]"),
    GDP_BOOL("superposition", "true", superposition, "feature conditioning of Eq. 5 (off: the Fig. 3 ablation)"),
    GDP_ENUM("sp_where", "all", "all|ff_out", sp_where,
             "gated dense layers: every one of the placer, or W1, W2 and the output only [I: §5]"),
    GDP_ENUM("sp_scope", "node", "node|graph", sp_scope, "gate per node or the mean over the graph [I: §5]"),
    GDP_ENUM("sp_form", "raw", "raw|film1", sp_form, "gate c(x0) itself, or 1 + gamma c(x0) with gamma from 0 [I: §5]"),
    GDP_ENUM("colocation", "contract", "contract|leader|penalize", colocation,
             "colocation classes: one unit each, placed by their first member, or penalised when split [I: §1]"),
    GDP_DBL("out_init_scale", "1", 0, 1, out_init_scale,
            "the output layer's Glorot values times this; 1 (default) = plain Glorot: its logits differ by ~2 and are shared by all nodes, so the first policy leans to one device (a random break of the devices' symmetry); 0.01 = ppo2's policy-head scale: a uniform first policy, which for identical devices is a stationary point of the expected reward [not in the spec]"),
};
/* clang-format on */

#define GDP_N_OPTIONS ((int)(sizeof gdp_options / sizeof gdp_options[0]))

/* One graph being searched or trained on. */
typedef struct gdp_task {
    const pb_problem *prob;
    const pb_host *host;
    gdp_graph gg;
    int n_act;              /* devices to choose from */
    int act_dev[GDP_D_MAX]; /* action -> cluster device */
    double t_ref_us;
    int *ref_device;       /* [n_nodes] the T_ref baseline placement */
    gdp_baseline baseline; /* rewards so far */
    double best_us;        /* best valid step time, INFINITY when none */
    int *best_device;      /* [n_nodes] */
    double iter_best_us;
    double iter_reward; /* sum of this iteration's rewards */
    int iter_n;
    int iter_invalid;             /* invalid (out of memory) rollouts this iteration */
    double iter_entropy;          /* mean entropy of pi_old over the loss units */
    double iter_share[GDP_D_MAX]; /* mean probability of each device under pi_old */
    double first_us;              /* step time of the first rollout, NAN before */
    long long sim_calls;
    float *old_logp; /* [n_units * n_act] log pi_old of this iteration */
    int *device;     /* [n_nodes] scratch */
} gdp_task;

typedef struct gdp_placer {
    gdp_opts o;
    gdp_net_config cfg;
    const pb_host *host;
    uint64_t seed;
    pb_rng structure_rng, sample_rng, shuffle_rng;
    pb_nn_params *params;
    gdp_net net;
    pb_nn_adam *adam;
    pb_nn_tape *tape;
    double t0;
    /* Update statistics of the current iteration, for the log. */
    long long it_steps;
    double it_gnorm, it_small;
} gdp_placer;

static void gdp_log(const pb_host *h, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#include <stdarg.h>

static void gdp_log(const pb_host *h, int level, const char *fmt, ...)
{
    if (!h || !h->log)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    h->log(h->ctx, level, msg);
}

static void gdp_config(const gdp_opts *o, gdp_net_config *c)
{
    *c = (gdp_net_config){
        .gs_layers = (int)o->gs_layers,
        .gs_dim = (int)o->gs_dim,
        .gs_knn = (int)o->gs_knn,
        .gs_dir = o->gs_dir,
        .gs_pool_act = o->gs_pool_act == 0 ? PB_NN_ACT_SIGMOID : PB_NN_ACT_RELU,
        .gs_l2norm = o->gs_l2norm,
        .gs_resample = o->gs_resample,
        .adj_ids = o->adj_ids,
        .extra_features = o->extra_features,
        .placer_net = o->placer_net,
        .trf_layers = (int)o->trf_layers,
        .d_model = (int)o->d_model,
        .n_head = (int)o->n_head,
        .d_head = (int)o->d_head,
        .d_inner = (int)o->d_inner,
        .seg_len = (int)o->seg_len,
        .mem_len = (int)o->mem_len,
        .causal = o->trf_mask == 0,
        .ln_eps = (float)o->ln_eps,
        .superposition = o->superposition,
        .sp_where = o->sp_where,
        .sp_scope = o->sp_scope,
        .sp_form = o->sp_form,
        .colocation = o->colocation,
        .out_init_scale = (float)o->out_init_scale,
    };
}

static void gdp_destroy(void *instance)
{
    gdp_placer *pl = instance;
    if (!pl)
        return;
    pb_nn_params_free(pl->params);
    pb_nn_adam_free(pl->adam);
    pb_nn_tape_free(pl->tape);
    free(pl);
}

static int gdp_create(const pb_create_args *a, void **instance, pb_error *err)
{
    gdp_placer *pl = calloc(1, sizeof *pl);
    if (!pl)
        return pb_errorf(err, "gdp: out of memory");
    pl->o = *(const gdp_opts *)a->options;
    pl->host = a->host;
    pl->seed = a->seed;
    gdp_config(&pl->o, &pl->cfg);
    pb_rng init_rng;
    pb_rng_seed(&init_rng, pb_seed_derive(a->seed, "gdp/init"));
    pb_rng_seed(&pl->structure_rng, pb_seed_derive(a->seed, "gdp/neighbours"));
    pb_rng_seed(&pl->sample_rng, pb_seed_derive(a->seed, "gdp/rollouts"));
    pb_rng_seed(&pl->shuffle_rng, pb_seed_derive(a->seed, "gdp/minibatches"));
    pl->params = pb_nn_params_new();
    pl->adam = pb_nn_adam_new(0.9, 0.999, pl->o.adam_eps);
    pl->tape = pb_nn_tape_new();
    int rc = PB_OK;
    if (!pl->params || !pl->adam || !pl->tape)
        rc = pb_errorf(err, "gdp: out of memory");
    if (!rc)
        rc =
            gdp_net_init(&pl->net, &pl->cfg, pl->params, gdp_feature_dim(&pl->cfg), &init_rng, err);
    if (!rc && pl->o.load && pl->o.load[0])
        rc = pb_nn_params_load(pl->params, pl->o.load, err);
    if (!rc && pl->o.mode != MODE_ONE && !(pl->o.load && pl->o.load[0]))
        rc = pb_errorf(err, "gdp: mode %s needs a parameter file in option 'load'",
                       pl->o.mode == MODE_FINETUNE ? "finetune" : "zeroshot");
    if (rc) {
        gdp_destroy(pl);
        return rc;
    }
    *instance = pl;
    return PB_OK;
}

/* ------------------------------------------------------------------ tasks */

static int gdp_is_cpu(const pb_cluster *c, int dev)
{
    const char *name = pb_cluster_type(c, c->device_type[dev])->name;
    return name && strncmp(name, "CPU", 3) == 0;
}

static void gdp_task_free(gdp_task *t)
{
    gdp_graph_free(&t->gg);
    free(t->ref_device);
    free(t->best_device);
    free(t->old_logp);
    free(t->device);
}

/* Simulates t->device on the task's graph; *valid is 0 for out of memory (or a split class in
 * penalize mode). */
static int gdp_simulate(gdp_placer *pl, gdp_task *t, double *us, int *valid, pb_error *err)
{
    pb_strategy s;
    pb_strategy_placement(&s, t->gg.n_nodes, t->device);
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
    if (t->host->simulate(t->host->ctx, &s, &ev, err))
        return PB_ERR;
    t->sim_calls++;
    *us = ev.step_time_us;
    *valid =
        ev.feasible && isfinite(ev.step_time_us) &&
        !(pl->cfg.colocation == GDP_COLOC_PENALIZE && gdp_graph_splits_class(&t->gg, t->device));
    return PB_OK;
}

/* T_ref (§6.1) from the baselines computed here: single device and equal-cost chunks. */
static int gdp_task_t_ref(gdp_placer *pl, gdp_task *t, pb_error *err)
{
    const pb_graph *g = t->prob->graph;
    int n = g->n_nodes, nu = t->gg.n_units;
    double cand_us[2] = {INFINITY, INFINITY};
    int cand_valid[2] = {0, 0}, *cand_dev[2];
    cand_dev[0] = t->ref_device;
    cand_dev[1] = malloc((size_t)n * sizeof(int));
    unsigned char *unit_dev = malloc((size_t)nu + 1);
    double *unit_cost = calloc((size_t)nu + 1, sizeof *unit_cost);
    if (!cand_dev[1] || !unit_dev || !unit_cost) {
        free(cand_dev[1]);
        free(unit_dev);
        free(unit_cost);
        return pb_errorf(err, "gdp: out of memory");
    }
    int rc = PB_OK;
    for (int v = 0; v < n; v++)
        unit_cost[t->gg.unit_of[v]] += g->cost_us ? g->cost_us[v] : 1;
    double total = 0, acc = 0;
    for (int u = 0; u < nu; u++)
        total += unit_cost[u];
    for (int which = 0; which < 2 && !rc; which++) {
        if ((pl->o.t_ref == TREF_SINGLE && which == 1) ||
            (pl->o.t_ref == TREF_CHUNKS && which == 0))
            continue;
        for (int u = 0; u < nu; u++) {
            int part = 0;
            if (which == 1) {
                part = total > 0 ? (int)(acc / total * t->n_act) : u * t->n_act / nu;
                acc += unit_cost[u];
            }
            unit_dev[u] = (unsigned char)(part < t->n_act ? part : t->n_act - 1);
        }
        gdp_graph_expand(&t->gg, unit_dev, t->device);
        for (int v = 0; v < n; v++)
            t->device[v] = t->act_dev[t->device[v]];
        rc = gdp_simulate(pl, t, &cand_us[which], &cand_valid[which], err);
        memcpy(cand_dev[which], t->device, (size_t)n * sizeof(int));
    }
    int pick = -1;
    for (int w = 0; w < 2; w++)
        if (isfinite(cand_us[w]) &&
            (pick < 0 || (cand_valid[w] && !cand_valid[pick]) ||
             (cand_valid[w] == cand_valid[pick] && cand_us[w] < cand_us[pick])))
            pick = w;
    if (!rc && pick < 0)
        rc = pb_errorf(err, "gdp: no baseline step time for T_ref");
    if (!rc) {
        if (pick == 1)
            memcpy(t->ref_device, cand_dev[1], (size_t)n * sizeof(int));
        t->t_ref_us = pl->o.t_ref_us > 0 ? pl->o.t_ref_us : cand_us[pick];
        if (!cand_valid[pick])
            gdp_log(
                t->host, PB_LOG_WARN,
                "gdp: no baseline placement fits in memory; T_ref = %.6g µs of an infeasible one",
                t->t_ref_us);
        gdp_log(t->host, PB_LOG_INFO,
                "gdp: '%s': %d units placed on %d devices, T_ref %.6g µs (%s)",
                g->name ? g->name : "?", nu, t->n_act, t->t_ref_us,
                pl->o.t_ref_us > 0 ? "given"
                : pick             ? "chunks"
                                   : "single device");
    }
    free(cand_dev[1]);
    free(unit_dev);
    free(unit_cost);
    return rc;
}

static int gdp_task_init(gdp_placer *pl, gdp_task *t, const pb_problem *p, const pb_host *host,
                         pb_error *err)
{
    memset(t, 0, sizeof *t);
    t->prob = p;
    t->host = host;
    t->best_us = INFINITY;
    t->first_us = NAN;
    const pb_cluster *c = p->cluster;
    for (int dev = 0; dev < c->n_devices; dev++)
        if (pl->o.include_cpu || !gdp_is_cpu(c, dev)) {
            if (t->n_act == GDP_D_MAX)
                return pb_errorf(err,
                                 "gdp: more than %d devices to choose from (d_max); use a "
                                 "smaller --devices",
                                 GDP_D_MAX);
            t->act_dev[t->n_act++] = dev;
        }
    if (!t->n_act) /* only CPUs: they are the devices */
        for (int dev = 0; dev < c->n_devices && t->n_act < GDP_D_MAX; dev++)
            t->act_dev[t->n_act++] = dev;
    if (gdp_graph_prepare(&t->gg, p->graph, &pl->cfg, &pl->structure_rng, err))
        return PB_ERR;
    int n = t->gg.n_nodes;
    t->ref_device = malloc((size_t)n * sizeof(int));
    t->best_device = malloc((size_t)n * sizeof(int));
    t->device = malloc((size_t)n * sizeof(int));
    t->old_logp = malloc((size_t)t->gg.n_units * (size_t)t->n_act * sizeof(float));
    if (!t->ref_device || !t->best_device || !t->device || !t->old_logp)
        return pb_errorf(err, "gdp: out of memory");
    return gdp_task_t_ref(pl, t, err);
}

/* ------------------------------------------------------------------ search */

/* How a search runs (from the mode, the options and the run's budget). */
typedef struct gdp_schedule {
    long long iterations, k, minibatches, epochs, max_rollouts;
    double wall_s;
    int update;
    double early_stop; /* 0 = off */
} gdp_schedule;

static pb_nn_tensor *gdp_forward(gdp_placer *pl, gdp_task *t, int record_grad, pb_error *err)
{
    if (pl->cfg.gs_resample == 1)
        gdp_graph_resample(&t->gg, pl->cfg.gs_knn, &pl->structure_rng);
    pb_nn_tape_reset(pl->tape, record_grad);
    pb_nn_tensor *lp = gdp_net_forward(pl->tape, pl->params, &pl->net, &t->gg, t->n_act);
    if (pb_nn_tape_status(pl->tape, err))
        return NULL;
    return lp;
}

/* The iteration's policy statistics for the log: mean entropy of pi_old over the loss units and
 * the mean probability of each device. */
static void gdp_policy_stats(gdp_task *t)
{
    int d = t->n_act;
    double h = 0;
    for (int k = 0; k < GDP_D_MAX; k++)
        t->iter_share[k] = 0;
    for (int u = 0; u < t->gg.n_units; u++) {
        const float *row = t->old_logp + (size_t)u * d;
        for (int k = 0; k < d; k++) {
            double p = exp((double)row[k]);
            t->iter_share[k] += p / t->gg.n_units;
            h -= t->gg.weight[u] * p * row[k];
        }
    }
    t->iter_entropy = t->gg.n_loss ? h / t->gg.n_loss : 0;
}

/* Samples a_v ~ pi_old(.|v) for every unit. */
static void gdp_sample(gdp_placer *pl, const gdp_task *t, unsigned char *a)
{
    int d = t->n_act;
    for (int u = 0; u < t->gg.n_units; u++) {
        const float *row = t->old_logp + (size_t)u * d;
        double r = pb_rng_uniform(&pl->sample_rng), acc = 0;
        int k = 0;
        for (; k < d - 1; k++) {
            acc += exp((double)row[k]);
            if (r < acc)
                break;
        }
        a[u] = (unsigned char)k;
    }
}

static void gdp_argmax(const gdp_task *t, unsigned char *a)
{
    int d = t->n_act;
    for (int u = 0; u < t->gg.n_units; u++) {
        const float *row = t->old_logp + (size_t)u * d;
        int best = 0;
        for (int k = 1; k < d; k++)
            if (row[k] > row[best])
                best = k;
        a[u] = (unsigned char)best;
    }
}

/* Evaluates unit actions a on task t: reward, advantage against the mean of earlier rewards,
 * best tracking.  *adv receives the advantage. */
static int gdp_evaluate(gdp_placer *pl, gdp_task *t, const unsigned char *a, double *adv,
                        pb_error *err)
{
    gdp_graph_expand(&t->gg, a, t->device);
    for (int v = 0; v < t->gg.n_nodes; v++)
        t->device[v] = t->act_dev[t->device[v]];
    double us;
    int valid;
    if (gdp_simulate(pl, t, &us, &valid, err))
        return PB_ERR;
    if (isnan(t->first_us))
        t->first_us = us;
    double r = gdp_reward(us, t->t_ref_us, valid, pl->o.invalid_reward);
    *adv = gdp_baseline_push(&t->baseline, r, valid, pl->o.baseline_invalid == 0);
    t->iter_reward += r;
    t->iter_n++;
    t->iter_invalid += !valid;
    if (valid && us < t->iter_best_us)
        t->iter_best_us = us;
    if (valid && us < t->best_us) {
        t->best_us = us;
        memcpy(t->best_device, t->device, (size_t)t->gg.n_nodes * sizeof(int));
    }
    return PB_OK;
}

static double gdp_lr(const gdp_placer *pl)
{
    if (pl->o.lr_schedule == LR_CONSTANT)
        return pl->o.lr;
    double step = (double)(pb_nn_adam_steps(pl->adam) + 1), w = (double)pl->o.warmup;
    double m = fmin(1 / sqrt(step), step * pow(w, -1.5));
    return pl->o.noam_scale / sqrt((double)pl->cfg.d_model) * m;
}

/* One PPO update over a minibatch of rollouts (indices idx[0..nb)). */
static int gdp_update(gdp_placer *pl, gdp_task *tasks, int n_tasks, const int *task_of,
                      unsigned char *const *acts, const double *adv_all, const int *idx, int nb,
                      float *seed, float *old_a, pb_error *err)
{
    double *adv = malloc((size_t)nb * sizeof *adv + 1),
           *task_adv = malloc((size_t)nb * sizeof *adv + 1);
    const unsigned char **task_acts = malloc((size_t)nb * sizeof *task_acts + 1);
    if (!adv || !task_adv || !task_acts) {
        free(adv);
        free(task_adv);
        free(task_acts);
        return pb_errorf(err, "gdp: out of memory");
    }
    for (int i = 0; i < nb; i++)
        adv[i] = adv_all[idx[i]];
    if (pl->o.adv_norm)
        gdp_normalize(adv, nb);
    pb_nn_params_zero_grad(pl->params);
    int rc = PB_OK;
    for (int ti = 0; ti < n_tasks && !rc; ti++) {
        int count = 0;
        for (int i = 0; i < nb; i++)
            if (task_of[idx[i]] == ti) {
                task_acts[count] = acts[idx[i]];
                task_adv[count++] = adv[i];
            }
        if (!count)
            continue;
        gdp_task *t = &tasks[ti];
        pb_nn_tensor *lp = gdp_forward(pl, t, 1, err);
        if (!lp) {
            rc = PB_ERR;
            break;
        }
        int nu = t->gg.n_units, d = t->n_act;
        memset(seed, 0, (size_t)nu * (size_t)d * sizeof *seed);
        gdp_ppo_loss(lp->data, t->old_logp, nu, d, task_acts, task_adv, count, nb, t->gg.weight,
                     t->gg.n_loss, pl->o.clip_eps, pl->o.entropy, pl->o.ratio, old_a, seed);
        rc = pb_nn_backward(pl->tape, lp, seed, err);
    }
    free(task_adv);
    free(task_acts);
    free(adv);
    if (rc)
        return rc;
    size_t np = pb_nn_params_size(pl->params), small = 0;
    const float *gr = pb_nn_params_grads(pl->params);
    double g2 = 0;
    for (size_t i = 0; i < np; i++) {
        g2 += (double)gr[i] * gr[i];
        small += fabsf(gr[i]) < pl->o.adam_eps;
    }
    pl->it_steps++;
    pl->it_gnorm += sqrt(g2);
    pl->it_small += np ? (double)small / (double)np : 0;
    if (pl->o.clip_norm > 0)
        pb_nn_clip_grad_norm(pl->params, pl->o.clip_norm);
    return pb_nn_adam_step(pl->adam, pl->params, gdp_lr(pl), err);
}

static int gdp_out_of_time(const gdp_placer *pl, const gdp_task *tasks, int n_tasks,
                           const gdp_schedule *s)
{
    if (s->wall_s > 0 && pb_clock_monotonic() - pl->t0 >= s->wall_s)
        return 1;
    for (int i = 0; i < n_tasks; i++)
        if (tasks[i].host->deadline_passed && tasks[i].host->deadline_passed(tasks[i].host->ctx))
            return 1;
    return 0;
}

/* The PPO loop of §6.5 over tasks (GDP-one: one task). */
static int gdp_search(gdp_placer *pl, gdp_task *tasks, int n_tasks, const gdp_schedule *s,
                      pb_error *err)
{
    long long k = s->k;
    int max_units = 0, max_cells = 0;
    for (int i = 0; i < n_tasks; i++) {
        if (tasks[i].gg.n_units > max_units)
            max_units = tasks[i].gg.n_units;
        if (tasks[i].gg.n_units * tasks[i].n_act > max_cells)
            max_cells = tasks[i].gg.n_units * tasks[i].n_act;
    }
    unsigned char *pool = malloc((size_t)k * (size_t)max_units + 1);
    unsigned char **acts = malloc((size_t)k * sizeof *acts);
    int *task_of = malloc((size_t)k * sizeof *task_of), *idx = malloc((size_t)k * sizeof *idx);
    double *adv = malloc((size_t)k * sizeof *adv);
    float *seed = malloc((size_t)max_cells * sizeof *seed),
          *old_a = malloc((size_t)max_units * sizeof *old_a);
    double *hist_best = calloc((size_t)s->iterations + 1, sizeof *hist_best);
    int rc = PB_OK;
    if (!pool || !acts || !task_of || !idx || !adv || !seed || !old_a || !hist_best)
        rc = pb_errorf(err, "gdp: out of memory");
    long long rollouts = 0;
    int stop = 0;
    for (long long it = 0; it < s->iterations && !rc && !stop; it++) {
        for (int i = 0; i < n_tasks && !rc; i++) {
            pb_nn_tensor *lp = gdp_forward(pl, &tasks[i], 0, err);
            if (!lp) {
                rc = PB_ERR;
                break;
            }
            memcpy(tasks[i].old_logp, lp->data,
                   (size_t)lp->rows * (size_t)lp->cols * sizeof(float));
            gdp_policy_stats(&tasks[i]);
            tasks[i].iter_best_us = INFINITY;
            tasks[i].iter_reward = 0;
            tasks[i].iter_n = 0;
            tasks[i].iter_invalid = 0;
        }
        long long got = 0;
        for (; got < k && !rc; got++) {
            if ((s->max_rollouts > 0 && rollouts >= s->max_rollouts) ||
                gdp_out_of_time(pl, tasks, n_tasks, s)) {
                stop = 1;
                break;
            }
            int ti = (int)(got % n_tasks);
            acts[got] = pool + (size_t)got * (size_t)max_units;
            task_of[got] = ti;
            gdp_sample(pl, &tasks[ti], acts[got]);
            rc = gdp_evaluate(pl, &tasks[ti], acts[got], &adv[got], err);
            rollouts++;
        }
        if (rc)
            break;
        for (long long e = 0; s->update && got > 0 && e < s->epochs && !rc; e++) {
            for (long long i = 0; i < got; i++)
                idx[i] = (int)i;
            pb_rng_shuffle(&pl->shuffle_rng, idx, (int)got);
            long long mbs = s->minibatches < got ? s->minibatches : got;
            for (long long m = 0; m < mbs && !rc; m++) {
                long long lo = m * got / mbs, hi = (m + 1) * got / mbs;
                rc = gdp_update(pl, tasks, n_tasks, task_of, acts, adv, idx + lo, (int)(hi - lo),
                                seed, old_a, err);
            }
        }
        if (pl->it_steps)
            gdp_log(tasks[0].host, PB_LOG_INFO,
                    "gdp: iteration %lld: %lld Adam steps, mean gradient norm %.3g (before the "
                    "clip), %.0f%% of gradient values below adam_eps",
                    it, pl->it_steps, pl->it_gnorm / pl->it_steps,
                    100 * pl->it_small / pl->it_steps);
        pl->it_steps = 0;
        pl->it_gnorm = pl->it_small = 0;
        double best_all = 0;
        for (int i = 0; i < n_tasks; i++) {
            gdp_task *t = &tasks[i];
            pb_progress pr = {.struct_size = sizeof pr,
                              .episode = (int)it,
                              .episode_best_us =
                                  isfinite(t->iter_best_us) ? t->iter_best_us : t->best_us,
                              .best_so_far_us = t->best_us,
                              .sim_calls = t->sim_calls};
            if (t->host->progress && isfinite(t->best_us))
                t->host->progress(t->host->ctx, &pr);
            if (t->iter_n) {
                char share[8 * GDP_D_MAX + 1];
                int at = 0;
                for (int dv = 0; dv < t->n_act; dv++)
                    at += snprintf(share + at, sizeof share - (size_t)at, "%s%.2f", dv ? " " : "",
                                   t->iter_share[dv]);
                gdp_log(t->host, PB_LOG_INFO,
                        "gdp: iteration %lld: mean reward %.4f over %d rollouts (%d invalid), "
                        "best %.6g µs; pi_old: entropy %.4f nats per unit, device shares %s",
                        it, t->iter_reward / t->iter_n, t->iter_n, t->iter_invalid, t->best_us,
                        t->iter_entropy, share);
            }
            best_all += log(t->best_us);
        }
        hist_best[it] = best_all;
        /* Early stop (§6.4): the (log-summed) best improved by less than early_stop over the
         * last `patience` iterations; never while a graph has no valid placement yet (its log
         * is +inf). */
        if (s->early_stop > 0 && it >= pl->o.patience && isfinite(hist_best[it - pl->o.patience]) &&
            hist_best[it - pl->o.patience] - hist_best[it] < -log1p(-s->early_stop) * n_tasks)
            stop = 1;
    }
    free(pool);
    free(acts);
    free(task_of);
    free(idx);
    free(adv);
    free(seed);
    free(old_a);
    free(hist_best);
    return rc;
}

/* The run's sim_calls budget covers the calls already made (used: T_ref's baselines). */
static void gdp_schedule_for(const gdp_placer *pl, const pb_problem *p, long long used,
                             gdp_schedule *s)
{
    const gdp_opts *o = &pl->o;
    *s = (gdp_schedule){.iterations = o->iterations,
                        .k = o->rollouts,
                        .minibatches = o->minibatches,
                        .epochs = o->epochs,
                        .max_rollouts = o->max_rollouts,
                        .update = 1,
                        .early_stop = o->early_stop};
    if (o->mode == MODE_FINETUNE) {
        s->k = o->ft_k;
        s->minibatches = 1;
        s->max_rollouts = o->ft_rollouts;
        s->iterations = (o->ft_rollouts + o->ft_k - 1) / o->ft_k;
        s->early_stop = 0; /* the fine-tuning budget is fixed (< 50 steps) */
    }
    if (p && p->budget) {
        if (p->budget->episodes > 0)
            s->iterations = p->budget->episodes;
        if (p->budget->sim_calls > 0) /* at least one rollout */
            s->max_rollouts = p->budget->sim_calls > used + 1 ? p->budget->sim_calls - used : 1;
        s->wall_s = p->budget->wall_s;
    }
}

static int gdp_save_if_asked(gdp_placer *pl, pb_error *err)
{
    if (!pl->o.save || !pl->o.save[0])
        return PB_OK;
    return pb_nn_params_save(pl->params, pl->o.save, err);
}

/* Zero-shot (§6.6): the argmax placement, then zeroshot_samples samples; no update. */
static int gdp_zeroshot(gdp_placer *pl, gdp_task *t, pb_error *err)
{
    pb_nn_tensor *lp = gdp_forward(pl, t, 0, err);
    if (!lp)
        return PB_ERR;
    memcpy(t->old_logp, lp->data, (size_t)lp->rows * (size_t)lp->cols * sizeof(float));
    unsigned char *a = malloc((size_t)t->gg.n_units + 1);
    if (!a)
        return pb_errorf(err, "gdp: out of memory");
    double adv;
    int rc = PB_OK;
    t->iter_best_us = INFINITY;
    gdp_argmax(t, a);
    rc = gdp_evaluate(pl, t, a, &adv, err);
    for (long long i = 0; i < pl->o.zeroshot_samples && !rc; i++) {
        gdp_sample(pl, t, a);
        rc = gdp_evaluate(pl, t, a, &adv, err);
    }
    free(a);
    if (!rc && t->host->progress && isfinite(t->best_us)) {
        pb_progress pr = {.struct_size = sizeof pr,
                          .episode = 0,
                          .episode_best_us = t->best_us,
                          .best_so_far_us = t->best_us,
                          .sim_calls = t->sim_calls};
        t->host->progress(t->host->ctx, &pr);
    }
    return rc;
}

static int gdp_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                     pb_error *err)
{
    gdp_placer *pl = instance;
    if (!pl->host || !pl->host->simulate)
        return pb_errorf(err, "gdp: needs a host that simulates");
    pl->t0 = pb_clock_monotonic();
    gdp_task t;
    int rc = gdp_task_init(pl, &t, p, pl->host, err);
    if (!rc && pl->o.mode == MODE_ZEROSHOT) {
        rc = gdp_zeroshot(pl, &t, err);
    } else if (!rc) {
        gdp_schedule s;
        gdp_schedule_for(pl, p, t.sim_calls, &s);
        rc = gdp_search(pl, &t, 1, &s, err);
    }
    if (!rc) {
        if (isfinite(t.best_us)) {
            memcpy(best->device, t.best_device, (size_t)t.gg.n_nodes * sizeof(int));
        } else {
            gdp_log(pl->host, PB_LOG_WARN,
                    "gdp: no sampled placement was valid; returning the "
                    "T_ref baseline placement");
            memcpy(best->device, t.ref_device, (size_t)t.gg.n_nodes * sizeof(int));
        }
        *initial_us = isnan(t.first_us) ? -1 : t.first_us;
        rc = gdp_save_if_asked(pl, err);
    }
    gdp_task_free(&t);
    return rc;
}

/* GDP-batch (§6.6): one parameter set trained on every problem; problem i is simulated by its
 * own host (pb_problem.host, ABI 1.4), the create host when it has none. */
static int gdp_train(void *instance, const pb_problem *const *problems, int n, pb_error *err)
{
    gdp_placer *pl = instance;
    if (n < 1)
        return pb_errorf(err, "gdp: train needs at least one problem");
    gdp_task *tasks = calloc((size_t)n, sizeof *tasks);
    if (!tasks)
        return pb_errorf(err, "gdp: out of memory");
    pl->t0 = pb_clock_monotonic();
    int rc = PB_OK, made = 0;
    for (int i = 0; i < n && !rc; i++, made++) {
        const pb_problem *p = problems[i];
        const pb_host *h = p->struct_size >= offsetof(pb_problem, host) + sizeof p->host && p->host
                               ? p->host
                               : pl->host;
        if (!h || !h->simulate)
            rc = pb_errorf(err, "gdp: problem %d has no host that simulates", i);
        else
            rc = gdp_task_init(pl, &tasks[i], p, h, err);
    }
    if (!rc) {
        gdp_schedule s;
        long long used = 0;
        for (int i = 0; i < n; i++)
            used += tasks[i].sim_calls;
        gdp_schedule_for(pl, problems[0], used, &s);
        rc = gdp_search(pl, tasks, n, &s, err);
    }
    for (int i = 0; !rc && i < n; i++)
        gdp_log(tasks[i].host, PB_LOG_INFO,
                "gdp: batch result '%s': best %.6g µs after %lld simulator calls",
                problems[i]->graph->name ? problems[i]->graph->name : "?", tasks[i].best_us,
                tasks[i].sim_calls);
    if (!rc)
        rc = gdp_save_if_asked(pl, err);
    for (int i = 0; i < made; i++)
        gdp_task_free(&tasks[i]);
    free(tasks);
    return rc;
}

static int gdp_save(void *instance, const char *path, pb_error *err)
{
    gdp_placer *pl = instance;
    return pb_nn_params_save(pl->params, path, err);
}

static int gdp_load(void *instance, const char *path, pb_error *err)
{
    gdp_placer *pl = instance;
    return pb_nn_params_load(pl->params, path, err);
}

static const pb_placer_ops gdp_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = gdp_create,
    .destroy = gdp_destroy,
    .place = gdp_place,
    .train = gdp_train,
    .save = gdp_save,
    .load = gdp_load,
    .uses = 0,
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, "gdp", "1.0",
                       "GDP: GraphSAGE + Transformer-XL placement network trained with PPO, "
                       "one-shot placement of every node; GDP-one, fine-tune, zero-shot, batch "
                       "training (train())",
                       gdp_options, gdp_opts, &gdp_ops);
