/* place.c — one run in this process: simulator, traversal order, embedding, the host table and
 * the placer on the request's cluster, set up and torn down in one place. */
#include "place.h"

#include "nn/nn_internal.h"

#include "core/clock.h"
#include "plugin/compat.h"
#include "plugin/options.h"
#include "model/strategy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the host table of one run points at. */
typedef struct place_host {
    const place_request *q;
    const pb_graph *op_graph;
    const pb_plugin_desc *sim;
    void *prepared;
    const pb_cluster *cluster;
    int placer_is_1_1; /* the placer passes strategies in the ABI 1.1 layout */
    pb_strategy ops;   /* op-level strategy buffer for expanding group strategies */
    int *ops_device, *ops_replication, *ops_stage;
    long long calls;
    double sim_cpu_s;     /* CPU time of this thread in the placer's simulate calls */
    long long sim_events; /* events those calls simulated (pb_eval.n_events) */
    double soft_deadline; /* monotonic seconds; 0 = none */
    double start;         /* monotonic seconds when the placer was called */
    pb_progress last;     /* the latest progress report, in the current layout */
    int points;           /* progress reports received */
} place_host;

/* Evaluates a strategy of the grouped graph (current layout). */
static int place_evaluate(place_host *h, const pb_strategy *s, pb_eval *out, pb_error *err)
{
    const pb_graph *g = h->op_graph;
    const pb_strategy *op_s = s;
    if (g->grouped != g) {
        h->ops.stage_count = h->ops_stage;
        h->ops.replication = h->ops_replication;
        if (strategy_expand(g, s, &h->ops, err))
            return PB_ERR;
        op_s = &h->ops;
    }
    if (pb_strategy_check(op_s, g->n_nodes, h->cluster, err))
        return PB_ERR;
    h->calls++;
    return compat_evaluate(h->sim, h->prepared, op_s, out, err);
}

static int place_host_simulate(void *ctx, const pb_strategy *s, pb_eval *out, pb_error *err)
{
    place_host *h = ctx;
    double t0 = pb_clock_cpu();
    int rc;
    if (!h->placer_is_1_1) {
        rc = place_evaluate(h, s, out, err);
    } else {
        pb_strategy now;
        compat_strategy_from_1_1((const compat_strategy_1_1 *)(const void *)s, &now);
        rc = place_evaluate(h, &now, out, err);
    }
    h->sim_cpu_s += pb_clock_cpu() - t0;
    h->sim_events += out->n_events;
    return rc;
}

/* The host, not the placer, measures the search's wall time of every curve point. */
static void place_host_progress(void *ctx, const pb_progress *p)
{
    place_host *h = ctx;
    pb_progress own = {0}; /* a placer built for an older ABI sends a shorter struct */
    size_t n = p->struct_size < sizeof own ? p->struct_size : sizeof own;
    memcpy(&own, p, n);
    own.struct_size = sizeof own;
    h->last = own;
    h->points++;
    if (!h->q->progress)
        return;
    own.wall_s = pb_clock_monotonic() - h->start;
    h->q->progress(h->q->progress_ctx, &own);
}

static void place_host_log(void *ctx, int level, const char *msg)
{
    place_host *h = ctx;
    static const char *const names[] = {"debug", "info", "warn"};
    if (h->q->log)
        h->q->log(h->q->log_ctx, level, msg);
    if (level >= PB_LOG_INFO)
        fprintf(stderr, "[%s] %s: %s\n", h->q->log_id ? h->q->log_id : "place",
                names[level > 2 ? 2 : level], msg);
}

static int place_host_deadline(void *ctx)
{
    place_host *h = ctx;
    return h->soft_deadline > 0 && pb_clock_monotonic() >= h->soft_deadline;
}

static int place_has(const plan_plugin *pp)
{
    return pp && pp->entry;
}

/* Creates an instance of a resolved plugin. */
static int place_create(const plan_plugin *pp, const pb_host *host, unsigned long long run_seed,
                        const char *label, void **inst, pb_error *err)
{
    const pb_traversal_ops *common = pp->entry->desc->ops; /* create is first in every table */
    pb_create_args a = options_create_args(&pp->opts, host, pb_seed_derive(run_seed, label));
    return common->create(&a, inst, err);
}

/* Everything one run allocates, released in one place. */
typedef struct place_state {
    pb_budget budget;
    pb_embedding_ref embedding;
    void *sim_inst, *prepared, *trav_inst, *emb_inst, *placer_inst;
    int *order, *best_device;
    double *peak;
    pb_strategy best; /* what the placer returns, over best_device */
} place_state;

static void place_state_free(const place_request *q, place_host *h, place_state *st)
{
    if (st->placer_inst)
        ((const pb_placer_ops *)q->placer->entry->desc->ops)->destroy(st->placer_inst);
    if (st->emb_inst)
        ((const pb_embedding_ops *)q->embedding->entry->desc->ops)->destroy(st->emb_inst);
    if (st->trav_inst)
        ((const pb_traversal_ops *)q->traversal->entry->desc->ops)->destroy(st->trav_inst);
    const pb_simulator_ops *sim = q->simulator->entry->desc->ops;
    if (st->prepared)
        sim->release(st->prepared);
    if (st->sim_inst)
        sim->destroy(st->sim_inst);
    free(st->order);
    free(st->best_device);
    free(st->peak);
    free(h->ops_device);
    free(h->ops_replication);
    free(h->ops_stage);
}

/* Sets up simulator, traversal order and embedding; fills the problem. */
static int place_setup(const place_request *q, place_host *h, const pb_host *host, place_state *st,
                       pb_problem *prob, pb_error *err)
{
    const pb_graph *g = q->graph, *gg = g->grouped;
    const pb_simulator_ops *sim = q->simulator->entry->desc->ops;
    h->sim = q->simulator->entry->desc;
    h->cluster = q->cluster;
    if (place_create(q->simulator, host, q->seed, "simulator", &st->sim_inst, err) ||
        sim->prepare(st->sim_inst, g, q->cluster, &st->prepared, err))
        return PB_ERR;
    h->prepared = st->prepared;
    size_t n = (size_t)g->n_nodes;
    h->ops_device = malloc(n * sizeof(int));
    h->ops_replication = malloc(n * sizeof(int));
    h->ops_stage = malloc(n * sizeof(int));
    st->best_device = malloc((size_t)gg->n_nodes * sizeof(int));
    st->peak = calloc((size_t)q->cluster->n_devices, sizeof(double));
    if (!h->ops_device || !h->ops_replication || !h->ops_stage || !st->best_device || !st->peak)
        return pb_errorf(err, "out of memory");
    pb_strategy_placement(&h->ops, g->n_nodes, h->ops_device);
    memset(prob, 0, sizeof *prob);
    prob->struct_size = sizeof *prob;
    prob->graph = gg;
    prob->op_graph = g;
    prob->cluster = q->cluster;
    st->budget = (pb_budget){
        .struct_size = sizeof st->budget, .episodes = q->episodes, .sim_calls = q->sim_calls};
    prob->budget = &st->budget;
    if (place_has(q->traversal)) {
        const pb_traversal_ops *t = q->traversal->entry->desc->ops;
        st->order = malloc((size_t)gg->n_nodes * sizeof(int));
        if (!st->order)
            return pb_errorf(err, "out of memory");
        if (place_create(q->traversal, host, q->seed, "traversal", &st->trav_inst, err) ||
            t->order(st->trav_inst, gg, st->order, err))
            return PB_ERR;
        prob->order = st->order;
    }
    if (place_has(q->embedding)) {
        if (place_create(q->embedding, host, q->seed, "embedding", &st->emb_inst, err))
            return PB_ERR;
        st->embedding = (pb_embedding_ref){.struct_size = sizeof st->embedding,
                                           .ops = q->embedding->entry->desc->ops,
                                           .instance = st->emb_inst,
                                           .name = q->embedding->entry->desc->name};
        prob->embedding = &st->embedding;
    }
    return PB_OK;
}

/* Runs the placer and fills the timings of res; the strategy goes to st->best_device. */
static int place_call(const place_request *q, place_host *h, const pb_host *host, place_state *st,
                      const pb_problem *prob, place_result *res, pb_error *err)
{
    if (place_create(q->placer, host, q->seed, "placer", &st->placer_inst, err))
        return PB_ERR;
    const pb_placer_ops *pl = q->placer->entry->desc->ops;
    int n = q->graph->grouped->n_nodes;
    pb_strategy_placement(&st->best, n, st->best_device);
    double c = pb_clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
    double initial = NAN;
    h->start = pb_clock_monotonic();
    int rc;
    if (h->placer_is_1_1) {
        compat_problem_1_1 old_prob;
        compat_strategy_1_1 old_best;
        compat_problem_to_1_1(prob, &old_prob);
        compat_strategy_to_1_1(&st->best, &old_best);
        rc = pl->place(st->placer_inst, (const pb_problem *)(const void *)&old_prob,
                       (pb_strategy *)(void *)&old_best, &initial, err);
        compat_strategy_from_1_1(&old_best, &st->best);
    } else {
        rc = pl->place(st->placer_inst, prob, &st->best, &initial, err);
    }
    res->wall_s = pb_clock_monotonic() - h->start;
    res->cpu_s = pb_clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - c;
    res->initial_us = initial < 0 ? NAN : initial;
    return rc;
}

/* What the host counted during the placer's call (also for a failed call). */
static void place_counters(const place_host *h, place_result *res)
{
    res->sim_calls = h->calls;
    res->sim_cpu_s = h->sim_cpu_s;
    res->sim_events = h->sim_events;
    res->forward_cpu_s = h->last.forward_cpu_s;
    res->forward_flop = h->last.forward_flop;
    res->update_cpu_s = h->last.update_cpu_s;
    res->update_flop = h->last.update_flop;
}

/* After the placer returned st->best: its counters, and the harness's own evaluation of it. */
static int place_finish(const place_request *q, place_host *h, place_state *st, place_result *res,
                        pb_error *err)
{
    int n = q->graph->grouped->n_nodes;
    pb_strategy bs = st->best;
    place_counters(h, res);
    /* The harness evaluates the returned strategy itself: the stored step time is the
     * simulator's, not the placer's claim. */
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1, .peak_mem_bytes = st->peak};
    if (place_evaluate(h, &bs, &ev, err))
        return PB_ERR;
    h->calls = res->sim_calls;
    res->best_us = ev.step_time_us;
    res->feasible = ev.feasible;
    res->throughput = ev.throughput;
    res->monetary_cost = ev.monetary_cost;
    res->kind = bs.kind;
    if (res->best_device)
        memcpy(res->best_device, st->best_device, (size_t)n * sizeof(int));
    if (res->peak_mem)
        memcpy(res->peak_mem, st->peak, (size_t)q->cluster->n_devices * sizeof(double));
    if (res->best_op_replication) {
        const int *own = PB_STRATEGY_HAS(&bs, op_replication) ? bs.op_replication : NULL;
        for (int v = 0; v < q->graph->n_nodes; v++)
            res->best_op_replication[v] = own ? own[v] : -1;
    }
    return PB_OK;
}

/* Clears res and checks that the request's placer and simulator go together. */
static int place_begin(const place_request *q, place_result *res, pb_error *err)
{
    res->initial_us = res->best_us = NAN;
    res->sim_calls = 0;
    res->wall_s = res->cpu_s = 0;
    res->sim_cpu_s = res->forward_cpu_s = res->forward_flop = res->update_cpu_s = res->update_flop =
        0;
    res->sim_events = 0;
    char why[256];
    if (!loader_pair_applies(q->placer->entry, q->simulator->entry, why, sizeof why))
        return pb_errorf(err, "%s", why);
    return PB_OK;
}

/* The host of request q. */
static void place_host_init(const place_request *q, place_host *h, pb_host *host)
{
    memset(h, 0, sizeof *h);
    h->q = q;
    h->op_graph = q->graph;
    h->placer_is_1_1 = compat_is_1_1(q->placer->entry->desc);
    if (q->timeout_s > 0)
        h->soft_deadline = pb_clock_monotonic() + 0.9 * q->timeout_s;
    *host =
        (pb_host){sizeof *host,       h, place_host_simulate, place_host_progress, place_host_log,
                  place_host_deadline};
}

int place_run(const place_request *q, place_result *res, pb_error *err)
{
    nn_blas_threads(1);
    if (place_begin(q, res, err))
        return PB_ERR;
    place_host h;
    pb_host host;
    place_host_init(q, &h, &host);
    place_state st = {0};
    pb_problem prob;
    int rc = place_setup(q, &h, &host, &st, &prob, err);
    if (rc == PB_OK)
        rc = place_call(q, &h, &host, &st, &prob, res, err);
    if (rc == PB_OK)
        rc = place_finish(q, &h, &st, res, err);
    else
        place_counters(&h, res);
    place_state_free(q, &h, &st);
    return rc;
}

/* Whether the requests can go to one place_multi call: the same placer, built for ABI 1.9 with
 * place_multi, on the same graph and as many devices (each run simulates on its own cluster). */
static int place_multi_applies(const place_request *qs, int k)
{
    const pb_plugin_desc *d = qs[0].placer->entry->desc;
    const pb_placer_ops *ops = d->ops;
    if (k < 2 || compat_is_1_1(d) ||
        ops->struct_size < offsetof(pb_placer_ops, place_multi) + sizeof ops->place_multi ||
        !ops->place_multi)
        return 0;
    for (int r = 1; r < k; r++)
        if (qs[r].placer->entry != qs[0].placer->entry || qs[r].graph != qs[0].graph ||
            qs[r].cluster->n_devices != qs[0].cluster->n_devices)
            return 0;
    return 1;
}

/* One place_multi call for the k set-up runs; the group's wall and CPU time are shared
 * equally. */
static int place_call_multi(const place_request *qs, int k, place_host *h, const pb_host *host,
                            place_state *st, pb_problem *prob, place_result *res, pb_error *err)
{
    const pb_placer_ops *ops = qs[0].placer->entry->desc->ops;
    void **inst = calloc((size_t)k, sizeof *inst);
    const pb_problem **probs = calloc((size_t)k, sizeof *probs);
    pb_strategy **best = calloc((size_t)k, sizeof *best);
    double *initial = calloc((size_t)k, sizeof *initial);
    int rc = inst && probs && best && initial ? PB_OK : pb_errorf(err, "out of memory");
    for (int r = 0; r < k && rc == PB_OK; r++) {
        rc = place_create(qs[r].placer, &host[r], qs[r].seed, "placer", &st[r].placer_inst, err);
        inst[r] = st[r].placer_inst;
        prob[r].host = &host[r];
        probs[r] = &prob[r];
        pb_strategy_placement(&st[r].best, qs[r].graph->grouped->n_nodes, st[r].best_device);
        best[r] = &st[r].best;
    }
    if (rc == PB_OK) {
        double c = pb_clock_seconds(CLOCK_PROCESS_CPUTIME_ID), start = pb_clock_monotonic();
        for (int r = 0; r < k; r++)
            h[r].start = start;
        rc = ops->place_multi(inst, probs, k, best, initial, err);
        double wall = pb_clock_monotonic() - start;
        double cpu = pb_clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - c;
        for (int r = 0; r < k; r++) {
            res[r].wall_s = wall / k;
            res[r].cpu_s = cpu / k;
            res[r].initial_us = initial[r] < 0 ? NAN : initial[r];
        }
    }
    free(inst);
    free(probs);
    free(best);
    free(initial);
    return rc;
}

int place_run_multi(const place_request *qs, int k, place_result *res, pb_error *errs)
{
    nn_blas_threads(1);
    if (!place_multi_applies(qs, k)) {
        int failed = 0;
        for (int r = 0; r < k; r++)
            failed |= place_run(&qs[r], &res[r], &errs[r]) != PB_OK;
        return failed ? PB_ERR : PB_OK;
    }
    place_host *h = calloc((size_t)k, sizeof *h);
    pb_host *host = calloc((size_t)k, sizeof *host);
    place_state *st = calloc((size_t)k, sizeof *st);
    pb_problem *prob = calloc((size_t)k, sizeof *prob);
    int rc = h && host && st && prob ? PB_OK : pb_errorf(&errs[0], "out of memory"), ready = 0;
    for (int r = 0; r < k && rc == PB_OK; r++, ready++) {
        rc = place_begin(&qs[r], &res[r], &errs[r]);
        place_host_init(&qs[r], &h[r], &host[r]);
        if (rc == PB_OK)
            rc = place_setup(&qs[r], &h[r], &host[r], &st[r], &prob[r], &errs[r]);
    }
    if (rc == PB_OK)
        rc = place_call_multi(qs, k, h, host, st, prob, res, &errs[0]);
    int failed = 0, started = 0;
    for (int r = 0; r < k && rc == PB_OK; r++)
        failed |= place_finish(&qs[r], &h[r], &st[r], &res[r], &errs[r]) != PB_OK;
    for (int r = 0; r < ready; r++) {
        started |= h[r].points > 0;
        if (rc != PB_OK) {
            place_counters(&h[r], &res[r]);
            errs[r] = errs[0];
        }
        place_state_free(&qs[r], &h[r], &st[r]);
    }
    free(h);
    free(host);
    free(st);
    free(prob);
    if (rc != PB_OK && !started) { /* the runs alone, each with its own result or error */
        rc = PB_OK;
        failed = 0;
        for (int r = 0; r < k; r++)
            failed |= place_run(&qs[r], &res[r], &errs[r]) != PB_OK;
    }
    return rc != PB_OK || failed ? PB_ERR : PB_OK;
}

/* Records the last curve point of each graph of place_train. */
static void place_train_progress(void *ctx, const pb_progress *p)
{
    place_train_result *r = ctx;
    r->best_us = p->best_so_far_us;
    r->curve_points++;
}

int place_train(const place_request *qs, int n, const char *save_path, place_train_result *res,
                double *wall_s, pb_error *err)
{
    nn_blas_threads(1);
    *wall_s = 0;
    if (n < 1)
        return pb_errorf(err, "train: no graphs");
    const pb_placer_ops *ops = qs[0].placer->entry->desc->ops;
    const char *name = qs[0].placer->entry->desc->name;
    if (compat_is_1_1(qs[0].placer->entry->desc) || !ops->train)
        return pb_errorf(err, "train: placer '%s' does not train on several graphs (no train())",
                         name);
    if (save_path && !ops->save)
        return pb_errorf(err, "train: placer '%s' cannot save its parameters", name);
    place_request *q = calloc((size_t)n, sizeof *q);
    place_host *h = calloc((size_t)n, sizeof *h);
    pb_host *host = calloc((size_t)n, sizeof *host);
    place_state *st = calloc((size_t)n, sizeof *st);
    pb_problem *prob = calloc((size_t)n, sizeof *prob);
    const pb_problem **probs = calloc((size_t)n, sizeof *probs);
    int rc = PB_OK, ready = 0;
    if (!q || !h || !host || !st || !prob || !probs)
        rc = pb_errorf(err, "out of memory");
    for (int i = 0; i < n && !rc; i++, ready++) {
        q[i] = qs[i];
        res[i] = (place_train_result){.best_us = NAN};
        q[i].progress = place_train_progress;
        q[i].progress_ctx = &res[i];
        h[i].q = &q[i];
        h[i].op_graph = q[i].graph;
        if (q[i].timeout_s > 0)
            h[i].soft_deadline = pb_clock_monotonic() + 0.9 * q[i].timeout_s;
        host[i] = (pb_host){sizeof host[i],      &h[i],          place_host_simulate,
                            place_host_progress, place_host_log, place_host_deadline};
        rc = place_setup(&q[i], &h[i], &host[i], &st[i], &prob[i], err);
        prob[i].host = &host[i];
        probs[i] = &prob[i];
    }
    if (!rc)
        rc = place_create(q[0].placer, &host[0], q[0].seed, "placer", &st[0].placer_inst, err);
    if (!rc) {
        double start = pb_clock_monotonic();
        for (int i = 0; i < n; i++)
            h[i].start = start;
        rc = ops->train(st[0].placer_inst, probs, n, err);
        *wall_s = pb_clock_monotonic() - start;
        for (int i = 0; i < n; i++)
            res[i].sim_calls = h[i].calls;
    }
    if (!rc && save_path)
        rc = ops->save(st[0].placer_inst, save_path, err);
    for (int i = 0; i < ready; i++)
        place_state_free(&q[i], &h[i], &st[i]);
    free(q);
    free(h);
    free(host);
    free(st);
    free(prob);
    free(probs);
    return rc;
}

int place_plugin_resolve(loader *l, int kind, const char *name, const char *const *kv, int n,
                         const char *where, plan_plugin *out, pb_error *err)
{
    memset(out, 0, sizeof *out);
    if (loader_find(l, kind, name, &out->entry, err))
        return PB_ERR;
    option_kv *pairs = calloc((size_t)(n > 0 ? n : 1), sizeof *pairs);
    char **keys = calloc((size_t)(n > 0 ? n : 1), sizeof *keys);
    int rc = pairs && keys ? PB_OK : pb_errorf(err, "out of memory");
    for (int i = 0; rc == PB_OK && i < n; i++) {
        const char *eq = strchr(kv[i], '=');
        if (!eq || eq == kv[i])
            rc = pb_errorf(err, "%s: option '%s' is not key=value", where, kv[i]);
        else if (!(keys[i] = strndup(kv[i], (size_t)(eq - kv[i]))))
            rc = pb_errorf(err, "out of memory");
        else
            pairs[i] = (option_kv){keys[i], eq + 1};
    }
    if (rc == PB_OK)
        rc = options_resolve(out->entry->desc, pairs, n, where, &out->opts, err);
    for (int i = 0; keys && i < n; i++)
        free(keys[i]);
    free(keys);
    free(pairs);
    if (rc != PB_OK)
        out->entry = NULL;
    return rc;
}

void place_plugin_free(plan_plugin *pp)
{
    if (pp->entry)
        option_set_free(&pp->opts);
    pp->entry = NULL;
}
