/* test_tag.c — TAG's grouping and MCTS search (plugins/shared/tag) against hand-derived figures:
 * op times at sub-batches, METIS vertex and edge weights, part numbering, group order, the action
 * list, the reward, and a search with a mock simulator. */
#include "model/graph.h"
#include "placebench.h"
#include "tag_group.h"
#include "tag_mcts.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A node: cost, split class, bytes of its first output port, and a replica cost for n = 2. */
typedef struct test_node {
    const char *name;
    double cost;
    int split;
    double port0;
    double cost_half; /* 0: none given */
} test_node;

/* Edges (src, dst, port); every node has ports 0 (port0 bytes) and 1 (empty). */
static pb_graph *test_graph(const test_node *nodes, int n, const int (*edges)[3], int m)
{
    pb_error err;
    graph_builder *b = graph_builder_new("test");
    for (int i = 0; i < n; i++) {
        int two = 2;
        double ports[2] = {nodes[i].port0, 0};
        graph_node_attrs a = {0};
        a.cost_us = nodes[i].cost;
        a.n_ports = 2;
        a.port_bytes = ports;
        a.colocation = -1;
        a.split = nodes[i].split;
        if (nodes[i].cost_half > 0) {
            a.n_replica_costs = 1;
            a.replica_cost_n = &two;
            a.replica_cost_us = &nodes[i].cost_half;
        }
        assert_int_equal(graph_add_node(b, nodes[i].name, &a, &err), i);
    }
    for (int i = 0; i < m; i++)
        assert_true(graph_add_edge(b, edges[i][0], edges[i][1], edges[i][2], &err) >= 0);
    pb_graph *g;
    if (graph_build(b, &g, &err) != PB_OK)
        fail_msg("graph_build: %s", err.msg);
    return g;
}

/* Up to 4 devices: device d of type type[d] (speeds 1 and 2) on machine machine[d]. */
typedef struct test_cluster {
    pb_device_type types[2];
    int type[4], machine[4];
    double bw[16], lat[16];
    pb_cluster c;
} test_cluster;

static void test_cluster_init(test_cluster *t, int n, const int *type, const int *machine)
{
    memset(t, 0, sizeof *t);
    t->types[0] = (pb_device_type){.name = "slow", .memory_bytes = 1e9, .speed_vs_ref = 1};
    t->types[1] = (pb_device_type){.name = "fast", .memory_bytes = 1e9, .speed_vs_ref = 2};
    int machines = 0;
    for (int d = 0; d < n; d++) {
        t->type[d] = type[d];
        t->machine[d] = machine[d];
        machines = machine[d] + 1 > machines ? machine[d] + 1 : machines;
    }
    for (int i = 0; i < n * n; i++)
        t->bw[i] = machine[i / n] == machine[i % n] ? 8000 : 2810;
    t->c = (pb_cluster){.struct_size = sizeof t->c,
                        .name = "test",
                        .n_devices = n,
                        .n_types = 2,
                        .types = t->types,
                        .device_type = t->type,
                        .device_machine = t->machine,
                        .n_machines = machines,
                        .link_bandwidth = t->bw,
                        .link_latency = t->lat,
                        .type_size = sizeof(pb_device_type)};
}

/* ---------------------------------------------------------------- op times */

static void test_op_time(void **state)
{
    (void)state;
    /* a: batch-split, 80 µs, one of 2 replicas measured at 42 µs; b: not batch-dependent. */
    const test_node nodes[] = {{"a", 80, PB_SPLIT_BATCH, 4, 42}, {"b", 80, PB_SPLIT_NONE, 4, 0}};
    pb_graph *g = test_graph(nodes, 2, NULL, 0);
    test_cluster tc;
    test_cluster_init(&tc, 2, (const int[]){0, 1}, (const int[]){0, 0});
    assert_float_equal(tag_op_time_us(g, &tc.c, 0, 0, 0), 80, 1e-12);
    assert_float_equal(tag_op_time_us(g, &tc.c, 0, 0, 1), 42, 1e-12); /* the measured half */
    assert_float_equal(tag_op_time_us(g, &tc.c, 0, 0, 2), 20, 1e-12); /* 80 / 4 */
    assert_float_equal(tag_op_time_us(g, &tc.c, 0, 1, 3), 5, 1e-12);  /* 80 / 8 / speed 2 */
    assert_float_equal(tag_op_time_us(g, &tc.c, 1, 0, 3), 80, 1e-12);
    assert_float_equal(tag_op_time_us(g, &tc.c, 1, 1, 2), 40, 1e-12);
    /* Mean over the two devices at B/2: (42 + 21) / 2. */
    assert_float_equal(tag_op_mean_time_us(g, &tc.c, 0, 1), 31.5, 1e-12);
    /* sqrt cost of a: times per device (80, 42, 20, 10) and (40, 21, 10, 5): mean 28.5,
     * sqrt 5.34 -> 5.  Of b: (80 x 4, 40 x 4): mean 60, sqrt 7.75 -> 7. */
    assert_int_equal(tag_op_sqrt_cost(g, &tc.c, 0), 5);
    assert_int_equal(tag_op_sqrt_cost(g, &tc.c, 1), 7);
    graph_free(g);
}

/* ---------------------------------------------------------------- partition */

/* Fewer units than parts: no METIS, each unit its own part, numbered by first appearance over
 * the ops. */
static void test_partition_small(void **state)
{
    (void)state;
    const test_node nodes[] = {
        {"a", 1, 0, 4, 0}, {"b", 1, 0, 4, 0}, {"c", 1, 0, 4, 0}, {"d", 1, 0, 4, 0}};
    pb_graph *g = test_graph(nodes, 4, NULL, 0);
    int unit_of[] = {2, 0, 2, 1}, part[3], n_parts;
    pb_error err;
    assert_int_equal(tag_group_partition(g, unit_of, 3, NULL, 3, 5.0, part, &n_parts, &err), PB_OK);
    assert_int_equal(n_parts, 3);
    assert_int_equal(part[2], 0); /* op 0 */
    assert_int_equal(part[0], 1); /* op 1 */
    assert_int_equal(part[1], 2); /* op 3 */
    unit_of[3] = 3;
    assert_int_equal(tag_group_partition(g, unit_of, 3, NULL, 3, 5.0, part, &n_parts, &err),
                     PB_ERR);
    assert_non_null(strstr(err.msg, "op 3 (d)"));
    graph_free(g);
}

/* Two 4-cliques of heavy tensors (1e6 elements) joined by one light one (1 element): METIS cuts
 * the light edge; parts are numbered by first appearance over the ops, and the units of the
 * first clique's ops are 4-7. */
static void test_partition_cliques(void **state)
{
    (void)state;
    test_node nodes[8];
    static const char *const names[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    for (int i = 0; i < 8; i++)
        nodes[i] = (test_node){names[i], 1, 0, i == 3 ? 4 : 4e6, 0};
    int edges[13][3], m = 0;
    for (int base = 0; base < 8; base += 4)
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++) {
                edges[m][0] = base + i;
                edges[m][1] = base + j;
                edges[m][2] = 0;
                m++;
            }
    edges[m][0] = 3;
    edges[m][1] = 4;
    edges[m][2] = 0;
    m++;
    pb_graph *g = test_graph(nodes, 8, (const int(*)[3])edges, m);
    int unit_of[8] = {4, 5, 6, 7, 0, 1, 2, 3}, part[8], n_parts;
    pb_error err;
    assert_int_equal(tag_group_partition(g, unit_of, 8, NULL, 2, 1.05, part, &n_parts, &err),
                     PB_OK);
    assert_int_equal(n_parts, 2);
    for (int u = 0; u < 8; u++)
        assert_int_equal(part[u], u < 4 ? 1 : 0);
    graph_free(g);
}

/* The unit graph METIS gets: a -> b reads a's empty port 1 (0 bytes), so it weighs a's port 0
 * (1e6 elements); b -> c 400 bytes (100 elements); d -> c reads d's empty port 0: 1000.
 * Neighbours in first-insertion order (ops in order, inputs in edge order). */
static void test_unit_graph(void **state)
{
    (void)state;
    const test_node nodes[] = {
        {"a", 1, 0, 4e6, 0}, {"b", 1, 0, 400, 0}, {"c", 1, 0, 4, 0}, {"d", 1, 0, 0, 0}};
    const int edges[][3] = {{0, 1, 1}, {1, 2, 0}, {3, 2, 0}};
    pb_graph *g = test_graph(nodes, 4, edges, 3);
    int unit_of[] = {0, 1, 2, 3}, weight[] = {5, 0, 2, 7};
    tag_unit_graph u;
    pb_error err;
    assert_int_equal(tag_unit_graph_build(g, unit_of, 4, weight, &u, &err), PB_OK);
    const int xadj[] = {0, 1, 3, 5, 6}, adj[] = {1, 0, 2, 1, 3, 2};
    const int w[] = {1000000, 1000000, 100, 100, 1000, 1000}, vw[] = {6, 1, 3, 8};
    for (int i = 0; i < 5; i++)
        assert_int_equal(u.xadj[i], xadj[i]);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(u.adj[i], adj[i]);
        assert_int_equal(u.adjwgt[i], w[i]);
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(u.vwgt[i], vw[i]);
    tag_unit_graph_free(&u);
    /* Units {a, b} and {c, d}: one edge b -> c (100) and d -> c stays inside; vertex weights
     * 1 + 2 ops without op weights. */
    int two[] = {0, 0, 1, 1};
    assert_int_equal(tag_unit_graph_build(g, two, 2, NULL, &u, &err), PB_OK);
    assert_int_equal(u.xadj[2], 2);
    assert_int_equal(u.adjwgt[0], 100);
    assert_int_equal(u.vwgt[0], 3);
    assert_int_equal(u.vwgt[1], 3);
    tag_unit_graph_free(&u);
    graph_free(g);
    /* a's port of 4e10 bytes: total 2 (1e10 + 100 + 1000) = 20000002200 > 2^30, so every
     * weight is divided by ceil(18.63) = 19: 526315789, 5, 52. */
    const test_node big[] = {
        {"a", 1, 0, 4e10, 0}, {"b", 1, 0, 400, 0}, {"c", 1, 0, 4, 0}, {"d", 1, 0, 0, 0}};
    g = test_graph(big, 4, edges, 3);
    assert_int_equal(tag_unit_graph_build(g, unit_of, 4, NULL, &u, &err), PB_OK);
    assert_int_equal(u.adjwgt[0], 526315789);
    assert_int_equal(u.adjwgt[2], 5);
    assert_int_equal(u.adjwgt[4], 52);
    tag_unit_graph_free(&u);
    graph_free(g);
}

static void test_group_order(void **state)
{
    (void)state;
    const double key[] = {5, 9, 5, 9, 1};
    int order[5];
    tag_group_order(5, key, order);
    const int want[] = {1, 3, 0, 2, 4};
    for (int i = 0; i < 5; i++)
        assert_int_equal(order[i], want[i]);
}

static void test_reward(void **state)
{
    (void)state;
    assert_float_equal(tag_reward(100, 40, 1), pow(1.5, 0.25), 1e-12); /* the spec: 1.1067 */
    assert_float_equal(tag_reward(100, 40, 1), 1.1067, 1e-4);
    assert_float_equal(tag_reward(100, 50, 1), 1, 1e-12); /* r = 1 is not squashed */
    assert_float_equal(tag_reward(100, 100, 1), 0, 1e-12);
    assert_float_equal(tag_reward(100, 200, 1), -0.5, 1e-12);
    assert_float_equal(tag_reward(100, 10, 0), -1, 1e-12);
}

/* ---------------------------------------------------------------- search with a mock host */

typedef struct mock_host {
    pb_host host;
    int calls, progress_calls;
    int feasible;
    int first_group[64], first_repl[64], second[64][2];
    int good_group, good_repl; /* the strategy that runs in 50 µs; all others 100 */
} mock_host;

static int mock_simulate(void *ctx, const pb_strategy *s, pb_eval *out, pb_error *err)
{
    mock_host *h = ctx;
    (void)err;
    assert_int_equal(s->kind, PB_STRATEGY_REPLICATED);
    if (h->calls < 64) {
        h->first_group[h->calls] = s->device[0];
        h->first_repl[h->calls] = s->replication[0];
        h->second[h->calls][0] = s->n_nodes > 1 ? s->device[1] : -1;
        h->second[h->calls][1] = s->n_nodes > 1 ? s->replication[1] : -1;
    }
    h->calls++;
    int good = 1;
    for (int v = 0; v < s->n_nodes; v++)
        good &= s->device[v] == h->good_group && s->replication[v] == h->good_repl;
    out->step_time_us = good ? 50 : 100;
    out->feasible = h->feasible;
    for (int d = 0; out->peak_mem_bytes && d < 3; d++)
        out->peak_mem_bytes[d] = 2e9;
    return PB_OK;
}

static void mock_progress(void *ctx, const pb_progress *p)
{
    (void)p;
    ((mock_host *)ctx)->progress_calls++;
}

static void mock_log(void *ctx, int level, const char *msg)
{
    (void)ctx;
    (void)level;
    (void)msg;
}

static int mock_deadline(void *ctx)
{
    (void)ctx;
    return 0;
}

static void mock_init(mock_host *h)
{
    memset(h, 0, sizeof *h);
    h->host = (pb_host){sizeof h->host, h, mock_simulate, mock_progress, mock_log, mock_deadline};
    h->feasible = 1;
    h->good_group = -1;
}

/* Device 0 alone on machine 0 (slow), devices 1 and 2 on machine 1 (fast): two device groups. */
static const int mock_types[] = {0, 1, 1}, mock_machines[] = {0, 1, 1};

static tag_mcts_opts mock_opts(long long playouts)
{
    return (tag_mcts_opts){.playouts = playouts,
                           .max_groups = 40,
                           .balance = 5,
                           .device_groups = TAG_TASKS_MACHINE,
                           .shuffle = 1};
}

/* A search problem on the mock cluster: the graph of `nodes`, a budget of sim_calls (0: none),
 * and the search analysed with `playouts` (f->m). */
typedef struct search_fixture {
    pb_graph *g;
    test_cluster tc;
    mock_host h;
    pb_budget budget;
    pb_problem p;
    tag_mcts_opts o;
    tag_mcts *m;
} search_fixture;

static void fixture_init(search_fixture *f, const test_node *nodes, int n, long long playouts,
                         long long sim_calls)
{
    f->g = test_graph(nodes, n, NULL, 0);
    test_cluster_init(&f->tc, 3, mock_types, mock_machines);
    mock_init(&f->h);
    f->budget = (pb_budget){sizeof f->budget, 0, sim_calls, 0};
    f->p = (pb_problem){.struct_size = sizeof f->p,
                        .graph = f->g,
                        .op_graph = f->g,
                        .cluster = &f->tc.c,
                        .budget = &f->budget};
    f->o = mock_opts(playouts);
    pb_error err;
    if (tag_mcts_new(&f->p, &f->h.host, &f->o, &f->m, &err) != PB_OK)
        fail_msg("tag_mcts_new: %s", err.msg);
}

static void fixture_free(search_fixture *f)
{
    tag_mcts_free(f->m);
    graph_free(f->g);
}

static const test_node one_op[] = {{"a", 10, PB_SPLIT_BATCH, 4, 0}};

/* The spec's action list for tasks {device 0} and {1, 2}: placements 01, 10, 11 (last task
 * fastest); a single device has PS only. */
static void test_actions(void **state)
{
    (void)state;
    search_fixture f;
    fixture_init(&f, one_op, 1, 10, 0);
    const tag_state *st = tag_mcts_state(f.m);
    assert_int_equal(st->n_tasks, 2);
    assert_int_equal(st->tasks[1].n_devices, 2);
    assert_float_equal(st->task_bandwidth[0 * 2 + 1], 2810, 0);
    assert_float_equal(st->task_bandwidth[1 * 2 + 1], 8000, 0);
    const tag_actions *a = st->actions;
    assert_int_equal(a->n_actions, 7);
    const int placed[7][2] = {{0, 1}, {0, 1}, {0, 1}, {1, 0}, {1, 1}, {1, 1}, {1, 1}};
    const int comm[7] = {0, 1, 2, 0, 0, 1, 2}, ndev[7] = {2, 2, 2, 1, 3, 3, 3};
    for (int i = 0; i < 7; i++) {
        assert_int_equal(a->placed[i * 2], placed[i][0]);
        assert_int_equal(a->placed[i * 2 + 1], placed[i][1]);
        assert_int_equal(a->comm[i], comm[i]);
        assert_int_equal(a->n_devices[i], ndev[i]);
    }
    /* One group of one op: 10 µs on the slow device, 5 on the fast; B/2: 5 and 2.5. */
    assert_int_equal(st->n_groups, 1);
    assert_float_equal(st->groups[0].time_us[0], (10 + 5 + 5) / 3.0, 1e-12);
    assert_float_equal(st->place_time_us[(0 * 2 + 1) * TAG_N_BATCH + 1], 2 * 2.5, 1e-12);
    tag_mcts_free(f.m);
    f.o.device_groups = TAG_TASKS_TYPE; /* types: still {0} and {1, 2} */
    f.o.duplicate_action = 1;
    pb_error err;
    assert_int_equal(tag_mcts_new(&f.p, &f.h.host, &f.o, &f.m, &err), PB_OK);
    assert_int_equal(tag_mcts_state(f.m)->actions->n_actions, 9); /* 4 + 1 + 4 */
    fixture_free(&f);
}

/* One group, 7 actions: the baseline (AllReduce on all 3 devices) then every child once; the
 * mock makes PS on devices {1, 2} twice as fast, and the search must return it. */
static void test_search_finds_best(void **state)
{
    (void)state;
    search_fixture f;
    fixture_init(&f, one_op, 1, 200, 0);
    f.h.good_group = 0; /* mask 01 = device group 0: devices {1, 2} */
    f.h.good_repl = PB_REPL_PS;
    pb_strategy best;
    double initial;
    pb_error err;
    assert_int_equal(tag_mcts_run(f.m, NULL, NULL, 7, &best, &initial, &err), PB_OK);
    /* Baseline: mask 11 (device group 2), AllReduce. */
    assert_int_equal(f.h.first_group[0], 2);
    assert_int_equal(f.h.first_repl[0], PB_REPL_ALLREDUCE);
    assert_float_equal(initial, 100, 0);
    /* 1 baseline + 7 children; the root and revisited leaves come from the cache. */
    assert_int_equal(f.h.calls, 8);
    assert_int_equal(f.h.progress_calls, 200);
    assert_int_equal(best.kind, PB_STRATEGY_REPLICATED);
    assert_int_equal(best.device[0], 0);
    assert_int_equal(best.replication[0], PB_REPL_PS);
    assert_int_equal(best.group_start[1] - best.group_start[0], 2);
    assert_int_equal(best.group_devices[best.group_start[0]], 1);
    fixture_free(&f);
}

/* Two independent ops make two groups; the second playout decides group 0 only, and group 1
 * copies its action (specs/tag.md §6).  A simulator-call budget stops the search. */
static void test_search_undecided_copy(void **state)
{
    (void)state;
    const test_node nodes[] = {{"a", 20, PB_SPLIT_BATCH, 4, 0}, {"b", 10, PB_SPLIT_BATCH, 4, 0}};
    search_fixture f;
    fixture_init(&f, nodes, 2, 1000, 5);
    assert_int_equal(tag_mcts_state(f.m)->n_groups, 2);
    assert_int_equal(tag_mcts_state(f.m)->group_of_node[0], 0); /* a is the more expensive */
    pb_strategy best;
    double initial;
    pb_error err;
    assert_int_equal(tag_mcts_run(f.m, NULL, NULL, 3, &best, &initial, &err), PB_OK);
    assert_int_equal(f.h.calls, 5);
    /* Same action for both groups; a model-parallel action splits each group alone, on its own
     * copy of the device set: group g's copy of mask m is 3 + 3 g + m - 1. */
    for (int c = 1; c < 5; c++) {
        int split = f.h.first_repl[c] == PB_REPL_SPLIT;
        assert_int_equal(f.h.second[c][0], f.h.first_group[c] + (split ? 3 : 0));
        assert_int_equal(f.h.second[c][1], f.h.first_repl[c]);
    }
    fixture_free(&f);
}

static void test_search_nothing_fits(void **state)
{
    (void)state;
    search_fixture f;
    fixture_init(&f, one_op, 1, 20, 0);
    f.h.feasible = 0;
    pb_strategy best;
    double initial;
    pb_error err;
    assert_int_equal(tag_mcts_run(f.m, NULL, NULL, 3, &best, &initial, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "no strategy fits in memory"));
    assert_non_null(strstr(err.msg, "1.86 GiB on device 0 (slow, 0.93 GiB)"));
    /* Baseline DP-NCCL out of memory: model parallelism over all devices is tried next. */
    assert_int_equal(f.h.first_group[1], 2 + 3 * 1); /* the MP copy of mask 11 for group 0 */
    assert_int_equal(f.h.first_repl[1], PB_REPL_SPLIT);
    fixture_free(&f);
}

/* A prior hook sees the state being expanded and its feedback; a negative prior stops the
 * search with a message. */
static int test_prior_calls;
static int test_prior(void *ctx, const tag_state *st, int group, float *prior, pb_error *err)
{
    (void)ctx;
    (void)err;
    test_prior_calls++;
    assert_int_equal(group, st->next_group);
    assert_int_equal(st->n_decided, 0);
    assert_true(st->feedback->valid);
    assert_float_equal(st->feedback->step_time_us, 100, 0);
    for (int a = 0; a < st->actions->n_actions; a++)
        prior[a] = a == 1 ? -1.0f : 1.0f;
    return PB_OK;
}

static void test_search_prior_errors(void **state)
{
    (void)state;
    search_fixture f;
    fixture_init(&f, one_op, 1, 20, 0);
    pb_strategy best;
    double initial;
    pb_error err;
    assert_int_equal(tag_mcts_run(f.m, test_prior, NULL, 3, &best, &initial, &err), PB_ERR);
    assert_string_equal(err.msg, "the prior of action 1 of group 0 is -1 (want >= 0)");
    assert_int_equal(test_prior_calls, 1);
    fixture_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_time),
        cmocka_unit_test(test_partition_small),
        cmocka_unit_test(test_partition_cliques),
        cmocka_unit_test(test_unit_graph),
        cmocka_unit_test(test_group_order),
        cmocka_unit_test(test_reward),
        cmocka_unit_test(test_actions),
        cmocka_unit_test(test_search_finds_best),
        cmocka_unit_test(test_search_undecided_copy),
        cmocka_unit_test(test_search_nothing_fits),
        cmocka_unit_test(test_search_prior_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
