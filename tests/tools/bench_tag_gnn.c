/* bench_tag_gnn.c — time of TAG's heterogeneous GAT on one search state: the op groups and
 * device groups TAG's search builds for a model on a cluster preset, the reference-size network
 * (or smaller), N prior evaluations (forward only) and N training steps (forward, backward,
 * clipnorm, Adam).  Usage: bench_tag_gnn GRAPH.json [--cluster C] [--devices N] [--groups G]
 * [--device-groups machine|type] [--evals N] [--hidden H]. */
#include "config/cluster.h"
#include "data/nodelink.h"
#include "model/graph.h"
#include "placebench.h"
#include "tag_gnn.h"
#include "tag_mcts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int bench_simulate(void *ctx, const pb_strategy *s, pb_eval *out, pb_error *err)
{
    (void)ctx, (void)s, (void)err;
    out->step_time_us = 1;
    out->feasible = 1;
    return PB_OK;
}

static void bench_progress(void *ctx, const pb_progress *p)
{
    (void)ctx, (void)p;
}

static void bench_log(void *ctx, int level, const char *msg)
{
    (void)ctx, (void)level, (void)msg;
}

static int bench_deadline(void *ctx)
{
    (void)ctx;
    return 0;
}

static int bench_fail(const char *what, const pb_error *err)
{
    fprintf(stderr, "bench_tag_gnn: %s: %s\n", what, err ? err->msg : "");
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return bench_fail("usage: bench_tag_gnn GRAPH.json [--cluster C] [--devices N] "
                          "[--groups G] [--device-groups machine|type] [--evals N] [--hidden H]",
                          NULL);
    const char *cluster = "tag-testbed";
    int devices = 16, groups = 60, by_type = 0, evals = 10, hidden = 256;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--cluster"))
            cluster = argv[i + 1];
        else if (!strcmp(argv[i], "--devices"))
            devices = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--groups"))
            groups = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--device-groups"))
            by_type = !strcmp(argv[i + 1], "type");
        else if (!strcmp(argv[i], "--evals"))
            evals = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--hidden"))
            hidden = atoi(argv[i + 1]);
        else
            return bench_fail(argv[i], NULL);
    }
    pb_error err;
    pb_graph *g;
    pb_cluster *c;
    if (nodelink_read(argv[1], &g, &err))
        return bench_fail(argv[1], &err);
    if (cluster_preset(cluster, devices, &c, &err))
        return bench_fail(cluster, &err);
    pb_host host = {sizeof host, NULL, bench_simulate, bench_progress, bench_log, bench_deadline};
    pb_budget budget = {sizeof budget, 0, 0, 0};
    pb_problem p = {.struct_size = sizeof p,
                    .graph = g->grouped ? g->grouped : g,
                    .op_graph = g,
                    .cluster = c,
                    .budget = &budget};
    tag_mcts_opts mo = {.playouts = 1,
                        .max_groups = groups,
                        .balance = 5,
                        .device_groups = by_type ? TAG_TASKS_TYPE : TAG_TASKS_MACHINE};
    tag_mcts *m;
    if (tag_mcts_new(&p, &host, &mo, &m, &err))
        return bench_fail("tag_mcts_new", &err);
    const tag_state *st = tag_mcts_state(m);
    tag_gnn_options o;
    tag_gnn_options_default(&o);
    o.hidden = hidden;
    tag_gnn *n = tag_gnn_new(&o, 1, &err);
    tag_gnn_features f = {0};
    if (!n || tag_gnn_features_build(&f, st, 0, &o, &err))
        return bench_fail("network", &err);
    float *prior = malloc((size_t)f.in.n_cand * sizeof *prior);
    double *visits = malloc((size_t)f.in.n_cand * sizeof *visits);
    for (int a = 0; a < f.in.n_cand; a++)
        visits[a] = 1 + a % 3;
    tag_gnn_sample s = {0};
    if (tag_gnn_sample_set(&s, &f.in, visits, &err))
        return bench_fail("sample", &err);
    tag_gnn_train_options to;
    tag_gnn_train_options_default(&to);
    tag_gnn_trainer *tr = tag_gnn_trainer_new(n, &to, &err);
    /* One of each first: allocations and page faults are not timed. */
    if (tag_gnn_priors(n, &f.in, prior, &err) || tag_gnn_train_step(tr, &s, NULL, &err))
        return bench_fail("warm-up", &err);
    double t0 = pb_clock_monotonic();
    clock_t c0 = clock();
    for (int i = 0; i < evals; i++)
        if (tag_gnn_priors(n, &f.in, prior, &err))
            return bench_fail("priors", &err);
    double t1 = pb_clock_monotonic();
    clock_t c1 = clock();
    for (int i = 0; i < evals; i++)
        if (tag_gnn_train_step(tr, &s, NULL, &err))
            return bench_fail("train step", &err);
    double t2 = pb_clock_monotonic();
    clock_t c2 = clock();
    printf(
        "{\"graph\": \"%s\", \"cluster\": \"%s\", \"devices\": %d, \"op_groups\": %d, "
        "\"device_groups\": %d, \"candidates\": %d, \"prev_edges\": %d, \"parameters\": %zu, "
        "\"evals\": %d, \"forward_ms\": %.3f, \"train_step_ms\": %.3f, \"forward_cpu_ms\": %.3f, "
        "\"train_step_cpu_ms\": %.3f}\n",
        argv[1], cluster, devices, f.in.n_groups, f.in.n_tasks, f.in.n_cand, f.in.n_prev,
        pb_nn_params_size(tag_gnn_params(n)), evals, 1e3 * (t1 - t0) / evals,
        1e3 * (t2 - t1) / evals, 1e3 * (double)(c1 - c0) / CLOCKS_PER_SEC / evals,
        1e3 * (double)(c2 - c1) / CLOCKS_PER_SEC / evals);
    tag_gnn_sample_free(&s);
    tag_gnn_trainer_free(tr);
    tag_gnn_features_free(&f);
    tag_gnn_free(n);
    free(prior);
    free(visits);
    tag_mcts_free(m);
    cluster_free(c);
    graph_free(g);
    return 0;
}
