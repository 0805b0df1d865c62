/* heterps_sim.c — the HeterPS simulator (specs/heterps.md §2-3): a layer chain, a resource type
 * per layer, provisioned stages, pipeline throughput, training time and monetary cost. */
#include "placebench.h"

#include "heterps.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct hsim_opts {
    double throughput_limit, tl_scale, epochs, examples;
    int mode;
    double batch_o, o_cpu, beta_io, beta_bnd, w_ps, c_ps;
    double cpu_limit, gpu_limit, limit_scale;
    int infeasible;
    int profile;
    int provision;
} hsim_opts;

/* clang-format off */
static const pb_option_def hsim_options[] = {
    {.name = "throughput_limit", .type = PB_OPT_DOUBLE, .default_value = "0", .min = 0, .max = 1e15,
     .help = "TL, examples/s the plan must reach; 0 = the model's default of spec §5 (CTRDNN 1.2e6, MATCHNET 5e4, 2EMB 2e5, NCE 1e6)",
     .offset = offsetof(hsim_opts, throughput_limit)},
    {.name = "tl_scale", .type = PB_OPT_DOUBLE, .default_value = "1", .min = 1e-6, .max = 1e6,
     .help = "multiplies TL (Fig. 4 sweeps 0.25, 0.5, 1, 2)",
     .offset = offsetof(hsim_opts, tl_scale)},
    {.name = "epochs", .type = PB_OPT_DOUBLE, .default_value = "0", .min = 0, .max = 1e9,
     .help = "E, training epochs; 0 = the model's default of spec §5",
     .offset = offsetof(hsim_opts, epochs)},
    {.name = "examples", .type = PB_OPT_DOUBLE, .default_value = "0", .min = 0, .max = 1e15,
     .help = "M, examples per epoch; 0 = the model's default of spec §5",
     .offset = offsetof(hsim_opts, examples)},
    {.name = "mode", .type = PB_OPT_ENUM, .default_value = "balanced", .min = 1, .max = 0,
     .choices = "balanced|paper",
     .help = "provisioning: balanced = every stage at k* (equal ET); paper = Formula 12 (equal CT) with Newton on k1 (spec §3.3)",
     .offset = offsetof(hsim_opts, mode)},
    {.name = "batch_o", .type = PB_OPT_DOUBLE, .default_value = "512", .min = 1, .max = 1e9,
     .help = "B_o, the profiling batch (spec §4)", .offset = offsetof(hsim_opts, batch_o)},
    {.name = "o_cpu", .type = PB_OPT_DOUBLE, .default_value = "40e-6", .min = 0, .max = 1,
     .help = "per-layer overhead of a CPU batch, s (spec §4; 1e-3 with batch_o 64 imitates the paper's small-batch CPU profiling)",
     .offset = offsetof(hsim_opts, o_cpu)},
    {.name = "beta_io", .type = PB_OPT_DOUBLE, .default_value = "0.999", .min = 0, .max = 1,
     .help = "parallel fraction of input and sparse-parameter traffic (spec §4)",
     .offset = offsetof(hsim_opts, beta_io)},
    {.name = "beta_bnd", .type = PB_OPT_DOUBLE, .default_value = "0.995", .min = 0, .max = 1,
     .help = "parallel fraction of the traffic across a stage boundary (spec §4)",
     .offset = offsetof(hsim_opts, beta_bnd)},
    {.name = "w_ps", .type = PB_OPT_DOUBLE, .default_value = "260416666.66666666", .min = 1, .max = 1e15,
     .help = "W_PS, bytes/s one PS core serves: a core's NIC share 12.5e9/48 (spec §2.4 prints it rounded, 2.6e8)", .offset = offsetof(hsim_opts, w_ps)},
    {.name = "c_ps", .type = PB_OPT_DOUBLE, .default_value = "0.2e-6", .min = 0, .max = 1,
     .help = "c_PS, PS core-seconds per sparse id (spec §2.4)", .offset = offsetof(hsim_opts, c_ps)},
    {.name = "cpu_limit", .type = PB_OPT_DOUBLE, .default_value = "480", .min = 1, .max = 1e12,
     .help = "N_CPU,limit, CPU cores (10 servers x 48, spec §8)", .offset = offsetof(hsim_opts, cpu_limit)},
    {.name = "gpu_limit", .type = PB_OPT_DOUBLE, .default_value = "32", .min = 1, .max = 1e12,
     .help = "N_t,limit of each GPU type (4 servers x 8, spec §8)", .offset = offsetof(hsim_opts, gpu_limit)},
    {.name = "limit_scale", .type = PB_OPT_DOUBLE, .default_value = "1", .min = 1e-6, .max = 1e9,
     .help = "multiplies every limit (spec §8: 100 lifts them for Figs. 5-7)",
     .offset = offsetof(hsim_opts, limit_scale)},
    {.name = "infeasible", .type = PB_OPT_ENUM, .default_value = "penalise", .min = 1, .max = 0,
     .choices = "penalise|capped",
     .help = "a placement that misses TL or a limit: penalise = cost C_ub (1 + v), which every searcher needs (spec §2.5); capped = the plan with each type scaled down to its limit, its throughput and cost as they are (spec §3.4, for reporting fixed plans)",
     .offset = offsetof(hsim_opts, infeasible)},
    {.name = "profile", .type = PB_OPT_ENUM, .default_value = "spec", .min = 1, .max = 0,
     .choices = "spec|devcost",
     .help = "a layer's OCT on a CPU core and a GPU: spec = the profile generator of spec §4 (its constants; the spec's worked example and checked optima); devcost = the harness's per-device cost model (the model zoo's roofline, pb_op_time_us) on the cluster's CPU type and first GPU type; alpha, IO and BND stay §4's",
     .offset = offsetof(hsim_opts, profile)},
    {.name = "provision", .type = PB_OPT_ENUM, .default_value = "heterps", .min = 1, .max = 0,
     .choices = "heterps|sta-ratio|sta-ps-ratio",
     .help = "unit counts of a placement's stages: heterps = PROVISION(SP), Formulas 11-13 in the mode above; sta-ratio = StaRatio, the least g GPUs with 6g cores shared by the CPU stages and the PS; sta-ps-ratio = StaPSRatio, g GPUs, 6g training cores and 6g PS cores (spec §3.5, Fig. 4; searchers then plan under that rule)",
     .offset = offsetof(hsim_opts, provision)},
};
/* clang-format on */

/* One prepared graph on one cluster. */
typedef struct hsim_prepared {
    heterps_profile *profile;
    const pb_cluster *cluster; /* borrowed until release */
    int n_cluster_types;
    int *type_of_cluster_type; /* [n_cluster_types] plan type, -1 when the cluster has no device */
    int *plan;                 /* [n_layers] scratch */
    heterps_stage *stages;     /* [n_layers] scratch */
    int capped;                /* report infeasible placements capped (§3.4) */
    int provision;             /* 0 = PROVISION(SP), else 1 + HETERPS_STA_RATIO / _PS_RATIO */
    int g_max;                 /* static provisioning: the most GPUs the limits allow */
} hsim_prepared;

static int hsim_create(const pb_create_args *a, void **instance, pb_error *err)
{
    hsim_opts *o = malloc(sizeof *o);
    if (!o)
        return pb_errorf(err, "out of memory");
    *o = *(const hsim_opts *)a->options;
    *instance = o;
    return PB_OK;
}

static void hsim_destroy(void *instance)
{
    free(instance);
}

static void hsim_release(void *prepared)
{
    hsim_prepared *h = prepared;
    if (!h)
        return;
    heterps_profile_free(h->profile);
    free(h->type_of_cluster_type);
    free(h->plan);
    free(h->stages);
    free(h);
}

/* The profile of graph g under the options, with the types, prices and limits of cluster c. */
static int hsim_profile(const hsim_opts *o, const pb_graph *g, const pb_cluster *c,
                        hsim_prepared *h, pb_error *err)
{
    int n = g->n_nodes;
    int *ctype = malloc((size_t)c->n_types * sizeof(int));
    int *dev = malloc((size_t)c->n_types * sizeof(int));
    heterps_layer *layers = malloc((size_t)n * sizeof *layers);
    int rc = ctype && dev && layers ? PB_OK : pb_errorf(err, "out of memory");
    int n_types = rc == PB_OK ? heterps_types(c, ctype, dev, err) : PB_ERR;
    double tl = 0, epochs = 0, examples = 0;
    if (n_types < 0 || heterps_layers_read(g, layers, err))
        rc = PB_ERR;
    if (rc == PB_OK && (o->throughput_limit <= 0 || o->epochs <= 0 || o->examples <= 0))
        rc = heterps_workload(g->name, &tl, &epochs, &examples, err);
    if (rc == PB_OK) {
        heterps_hw hw;
        heterps_hw_default(&hw);
        hw.batch_o = o->batch_o;
        hw.o[HETERPS_CPU] = o->o_cpu;
        hw.w_ps = o->w_ps;
        hw.c_ps = o->c_ps;
        h->profile = heterps_profile_new(layers, n, n_types, &hw, o->beta_io, o->beta_bnd);
        if (!h->profile)
            rc = pb_errorf(err, "out of memory");
    }
    if (rc == PB_OK && o->profile == 1) {
        const pb_device_type *role_type[HETERPS_N_ROLES] = {pb_cluster_type(c, ctype[0]),
                                                            pb_cluster_type(c, ctype[1])};
        heterps_profile_devcost(h->profile, layers, role_type);
    }
    if (rc == PB_OK) {
        heterps_profile *p = h->profile;
        p->tl = (o->throughput_limit > 0 ? o->throughput_limit : tl) * o->tl_scale;
        p->epochs = o->epochs > 0 ? o->epochs : epochs;
        p->examples = o->examples > 0 ? o->examples : examples;
        p->mode = o->mode == 1 ? HETERPS_PAPER : HETERPS_BALANCED;
        for (int t = 0; t < n_types; t++) {
            p->price[t] = pb_cluster_type(c, ctype[t])->price_per_hour;
            p->limit[t] = (t == 0 ? o->cpu_limit : o->gpu_limit) * o->limit_scale;
            h->type_of_cluster_type[ctype[t]] = t;
        }
        heterps_profile_finish(p);
    }
    free(ctype);
    free(dev);
    free(layers);
    return rc;
}

static int hsim_prepare(void *instance, const pb_graph *g, const pb_cluster *c, void **prepared,
                        pb_error *err)
{
    if (g->grouped != g)
        return pb_errorf(err,
                         "heterps simulator: graph '%s' has a grouping; a HeterPS model is "
                         "a plain layer chain",
                         g->name);
    hsim_prepared *h = calloc(1, sizeof *h);
    if (!h)
        return pb_errorf(err, "out of memory");
    h->n_cluster_types = c->n_types;
    h->type_of_cluster_type = malloc((size_t)c->n_types * sizeof(int));
    h->plan = malloc((size_t)g->n_nodes * sizeof(int));
    h->stages = malloc((size_t)g->n_nodes * sizeof(heterps_stage));
    if (!h->type_of_cluster_type || !h->plan || !h->stages) {
        hsim_release(h);
        return pb_errorf(err, "out of memory");
    }
    for (int i = 0; i < c->n_types; i++)
        h->type_of_cluster_type[i] = -1;
    if (hsim_profile(instance, g, c, h, err)) {
        hsim_release(h);
        return PB_ERR;
    }
    h->cluster = c;
    const hsim_opts *o = instance;
    h->capped = o->infeasible == 1;
    h->provision = o->provision;
    /* g GPUs and 6g (StaRatio) or 12g (StaPSRatio) cores: beyond the limits every g fails */
    const heterps_profile *p = h->profile;
    double gpus = 0;
    for (int t = 1; t < p->n_types; t++)
        gpus += p->limit[t];
    double by_cpu = p->limit[0] / (o->provision == 2 ? 12 : 6);
    double g_max = floor(gpus < by_cpu ? gpus : by_cpu);
    h->g_max = g_max < 1 ? 1 : g_max > 1e6 ? 1000000 : (int)g_max;
    *prepared = h;
    return PB_OK;
}

/* The plan of strategy s: a plain placement gives each layer its device's type, a provisioned
 * strategy names the cluster type directly. */
static int hsim_plan(const hsim_prepared *h, const pb_strategy *s, pb_error *err)
{
    for (int v = 0; v < h->profile->n_layers; v++) {
        int ct =
            s->kind == PB_STRATEGY_PLACEMENT ? h->cluster->device_type[s->device[v]] : s->device[v];
        int t = ct >= 0 && ct < h->n_cluster_types ? h->type_of_cluster_type[ct] : -1;
        if (t < 0)
            return pb_errorf(err,
                             "heterps simulator: layer %d is on a resource type the cluster "
                             "has no device of",
                             v);
        h->plan[v] = t;
    }
    return PB_OK;
}

static int hsim_evaluate(void *prepared, const pb_strategy *s, pb_eval *out, pb_error *err)
{
    hsim_prepared *h = prepared;
    const heterps_profile *p = h->profile;
    if (s->kind != PB_STRATEGY_PLACEMENT && s->kind != PB_STRATEGY_PROVISIONED)
        return pb_errorf(err, "heterps simulator: strategies are placements or provisioned plans");
    if (hsim_plan(h, s, err))
        return PB_ERR;
    heterps_result r;
    if (s->kind == PB_STRATEGY_PLACEMENT && h->provision) {
        int g;
        heterps_static(p, h->plan, h->provision == 1 ? HETERPS_STA_RATIO : HETERPS_STA_PS_RATIO,
                       h->g_max, h->stages, &r, &g);
    } else if (s->kind == PB_STRATEGY_PLACEMENT) {
        heterps_provision(p, h->plan, h->stages, &r);
        if (!r.feasible && h->capped)
            heterps_capped(p, h->plan, h->stages, &r);
    } else {
        int n = heterps_stages(p, h->plan, h->stages);
        if (n != s->n_stages)
            return pb_errorf(err, "heterps simulator: the plan has %d stages, the strategy %d", n,
                             s->n_stages);
        for (int i = 0; i < n; i++)
            h->stages[i].k = s->stage_count[i];
        heterps_evaluate_counts(p, h->stages, n, heterps_ps_cores(p, h->plan), &r);
    }
    /* A plan without unit counts has no time of its own: it gets the time at the limit scaled by
     * the same penalty as its cost, so both order plans alike. */
    double at_limit = p->epochs * p->examples / p->tl;
    out->step_time_us = 1e6 * (r.provisioned ? r.et_total : at_limit * r.cost_pen / p->c_ub);
    out->feasible = r.feasible;
    out->throughput = r.thr;
    out->monetary_cost = r.feasible || !h->capped ? r.cost_pen : r.cost;
    return PB_OK;
}

static const pb_simulator_ops hsim_ops = {
    .struct_size = sizeof(pb_simulator_ops),
    .create = hsim_create,
    .destroy = hsim_destroy,
    .prepare = hsim_prepare,
    .release = hsim_release,
    .evaluate = hsim_evaluate,
    .accepts = PB_KIND_BIT(PB_STRATEGY_PLACEMENT) | PB_KIND_BIT(PB_STRATEGY_PROVISIONED),
};

PB_PLUGIN_WITH_OPTIONS(
    PB_KIND_SIMULATOR, "heterps", "1.0",
    "HeterPS cost model: layer chain on CPU cores and GPU types, provisioned "
    "stages, pipeline throughput, training time and monetary cost (spec heterps)",
    hsim_options, hsim_opts, &hsim_ops);
