/* dp_nccl_placer.c — TAG's data-parallel baselines (specs/tag.md §10): every op replicated on every
 * device of the cluster, gradients reduced by NCCL AllReduce.  Built twice: dp-nccl splits the
 * batch evenly, dp-nccl-p (DP_NCCL_PROPORTIONAL) in proportion to each device's speed. */
#include "placebench.h"
#include "sfb.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(DP_NCCL_PROPORTIONAL)
#define DP_NCCL_NAME "dp-nccl-p"
#define DP_NCCL_DESCRIPTION                                                                        \
    "TAG's DP-NCCL-P: every op replicated on all devices with AllReduce, each device's batch "     \
    "share proportional to its speed (specs/tag.md 10); needs a simulator of replicated "          \
    "strategies (topology)"
#else
#define DP_NCCL_NAME "dp-nccl"
#define DP_NCCL_DESCRIPTION                                                                        \
    "TAG's DP-NCCL: every op replicated on all devices with AllReduce, the batch split evenly "    \
    "(specs/tag.md 10); needs a simulator of replicated strategies (topology)"
#endif

typedef struct dp_opts {
    int sfb;               /* apply SFB to the data-parallel strategy */
    long long sfb_depth;   /* sfb_options.depth */
    double sfb_time_limit; /* seconds per gradient */
    long long sfb_max_candidates;
    int sfb_mode; /* SFB_MODE_GRADIENT or SFB_MODE_REFERENCE (the enum's index) */
    int sfb_sync; /* SFB_SYNC_PAPER or SFB_SYNC_NCCL (the enum's index) */
} dp_opts;

/* TAG's SFB on the data-parallel strategy (Table 5's "DP-NCCL with SFB"), off by default. */
static const pb_option_def dp_options[] = {
    {.name = "sfb",
     .type = PB_OPT_BOOL,
     .default_value = "false",
     .help = "sufficient factor broadcasting: per gradient, the ILP of TAG 4.2.3 (CBC) picks ops "
             "to duplicate instead of synchronising the gradient",
     .offset = offsetof(dp_opts, sfb)},
    {.name = "sfb_depth",
     .type = PB_OPT_INT,
     .default_value = "8",
     .min = 0,
     .max = 1e9,
     .help = "SFB candidates: ancestors of the gradient at most this many edges away (0: all)",
     .offset = offsetof(dp_opts, sfb_depth)},
    {.name = "sfb_time_limit",
     .type = PB_OPT_DOUBLE,
     .default_value = "1",
     .min = 0,
     .max = 1e6,
     .help = "CBC's time limit per gradient, seconds (0: none); the best solution found is used",
     .offset = offsetof(dp_opts, sfb_time_limit)},
    {.name = "sfb_max_candidates",
     .type = PB_OPT_INT,
     .default_value = "256",
     .min = 0,
     .max = 1e9,
     .help = "SFB candidates per gradient at most (the nearest first; 0: no limit)",
     .offset = offsetof(dp_opts, sfb_max_candidates)},
    {.name = "sfb_mode",
     .type = PB_OPT_ENUM,
     .default_value = "gradient",
     .choices = "gradient|reference",
     .help = "gradient: the paper's ILP per gradient (4.2.3); reference: the reference code's one "
             "whole-graph ILP (specs/tag.md 9: B = 2810, elements, no consumer constraint, +x)",
     .offset = offsetof(dp_opts, sfb_mode)},
    {.name = "sfb_sync",
     .type = PB_OPT_ENUM,
     .default_value = "paper",
     .choices = "paper|nccl",
     .help = "sfb_mode=gradient: an AllReduce's saving priced by the paper's 2(D-1)/D L/tau, or by "
             "the topology simulator's collective model (TAG's NCCL fit at its default "
             "coefficients, on the L/D bytes each member sends)",
     .offset = offsetof(dp_opts, sfb_sync)},
};

/* The strategy's arrays live here: the harness evaluates the returned strategy after place()
 * returns, so they stay valid until destroy. */
typedef struct dp_placer {
    const pb_host *host;
    dp_opts opts;
    int *op_replication; /* [op-graph nodes] SFB's duplicates */
    int *replication;    /* [nodes placed] */
    int group_start[2];  /* one device group: every device */
    int *group_devices;  /* [n_devices] */
    double *share;       /* [n_devices] batch shares (dp-nccl-p) */
} dp_placer;

static int dp_create(const pb_create_args *a, void **instance, pb_error *err)
{
    dp_placer *p = calloc(1, sizeof *p);
    if (!p)
        return pb_errorf(err, "out of memory");
    p->host = a->host;
    p->opts = *(const dp_opts *)a->options;
    *instance = p;
    return PB_OK;
}

static void dp_destroy(void *instance)
{
    dp_placer *p = instance;
    free(p->replication);
    free(p->group_devices);
    free(p->share);
    free(p->op_replication);
    free(p);
}

/* One line per gradient at debug level: what `placebench bench sfb` reads (sfb_record). */
static void dp_sfb_record(void *ctx, const sfb_record *r)
{
    dp_placer *p = ctx;
    char line[256];
    snprintf(line, sizeof line,
             "sfb apply=%d gradient=%d candidates=%d cut_vars=%d rows=%d duplicated=%d "
             "objective_us=%.17g solve_s=%.17g status=%d",
             r->apply, r->gradient, r->n_candidates, r->n_cut_vars, r->n_rows, r->n_duplicated,
             r->objective, r->solve_s, r->status);
    p->host->log(p->host->ctx, PB_LOG_DEBUG, line);
}

/* SFB on the data-parallel strategy best (of prob->graph): the duplicated ops go into
 * best->op_replication. */
static int dp_sfb(dp_placer *p, const pb_problem *prob, pb_strategy *best, pb_error *err)
{
    const pb_graph *g = prob->op_graph;
    free(p->op_replication);
    p->op_replication = malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1) * sizeof(int));
    if (!p->op_replication)
        return pb_errorf(err, "out of memory");
    sfb_options o = {(int)p->opts.sfb_depth, p->opts.sfb_time_limit,
                     (int)p->opts.sfb_max_candidates,
                     p->opts.sfb_mode ? SFB_MODE_REFERENCE : SFB_MODE_GRADIENT,
                     p->opts.sfb_sync ? SFB_SYNC_NCCL : SFB_SYNC_PAPER};
    int dup;
    if (sfb_apply(g, prob->cluster, best, &o, p->op_replication, &dup, dp_sfb_record, p, err)) {
        pb_error why = *err;
        return pb_errorf(err, DP_NCCL_NAME ": SFB: %s", why.msg);
    }
    best->op_replication = p->op_replication;
    char line[96];
    snprintf(line, sizeof line, "sfb: %d ops duplicated", dup);
    p->host->log(p->host->ctx, PB_LOG_INFO, line);
    return PB_OK;
}

/* Batch shares proportional to speed_vs_ref: the simulators cost a replica's share of an op as
 * cost * share / speed, so every device then computes for the same time (the paper's "inverse
 * proportional to computation capacity").  *out = NULL: even shares (dp-nccl). */
static int dp_shares(dp_placer *p, const pb_cluster *c, const double **out, pb_error *err)
{
    *out = NULL;
#if defined(DP_NCCL_PROPORTIONAL)
    double sum = 0;
    for (int d = 0; d < c->n_devices; d++) {
        const pb_device_type *t = pb_cluster_type(c, c->device_type[d]);
        if (!(t->speed_vs_ref > 0))
            return pb_errorf(err, "dp-nccl-p: device %d (%s) has no speed to share the batch by", d,
                             t->name);
        p->share[d] = t->speed_vs_ref;
        sum += t->speed_vs_ref;
    }
    for (int d = 0; d < c->n_devices; d++)
        p->share[d] /= sum;
    *out = p->share;
#else
    (void)p;
    (void)c;
    (void)err;
#endif
    return PB_OK;
}

static int dp_place(void *instance, const pb_problem *prob, pb_strategy *best, double *initial_us,
                    pb_error *err)
{
    dp_placer *p = instance;
    int n = prob->graph->n_nodes, nd = prob->cluster->n_devices;
    free(p->replication);
    free(p->group_devices);
    free(p->share);
    p->replication = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    p->group_devices = malloc((size_t)nd * sizeof(int));
    p->share = malloc((size_t)nd * sizeof(double));
    if (!p->replication || !p->group_devices || !p->share)
        return pb_errorf(err, "out of memory");
    const double *share;
    if (dp_shares(p, prob->cluster, &share, err) != PB_OK)
        return PB_ERR;
    pb_strategy_data_parallel(best, n, best->device, p->replication, PB_REPL_ALLREDUCE, nd,
                              p->group_start, p->group_devices, share);
    if (p->opts.sfb && nd > 1 && dp_sfb(p, prob, best, err))
        return PB_ERR;
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
    if (p->host->simulate(p->host->ctx, best, &ev, err) != PB_OK) {
        /* A simulator of plain placements refuses the strategy kind; say what was asked. */
        pb_error why = *err;
        return pb_errorf(err,
                         DP_NCCL_NAME ": the simulator did not take the data-parallel strategy "
                                      "(every op replicated on all %d devices; the topology "
                                      "simulator evaluates such strategies): %s",
                         nd, why.msg);
    }
    *initial_us = ev.step_time_us;
    pb_progress pr = {.struct_size = sizeof pr,
                      .episode_best_us = ev.step_time_us,
                      .best_so_far_us = ev.step_time_us,
                      .sim_calls = 1};
    p->host->progress(p->host->ctx, &pr);
    return PB_OK;
}

static const pb_placer_ops dp_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = dp_create,
    .destroy = dp_destroy,
    .place = dp_place,
    .produces = PB_KIND_BIT(PB_STRATEGY_REPLICATED),
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, DP_NCCL_NAME, "1.1", DP_NCCL_DESCRIPTION, dp_options,
                       dp_opts, &dp_ops);
