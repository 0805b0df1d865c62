/* test_compile.c — the strategy compiler on TAG's worked-example graph (specs/tag.md §12):
 * replicas, Split / Concat / AddN insertion, gradient synchronisation, batch shares. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "data/nodelink.h"
#include "model/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The graph of §12: x, W, y, gW, lr, upd, GradientDescent (node indices 0..6). */
enum { X = 0, W = 1, Y = 2, GW = 3, LR = 4, UPD = 5, NOOP = 6, N_OPS = 7 };

typedef struct test_fixture {
    pb_graph *g;
    pb_compiler *compiler;
    pb_device_type type;
    int device_type[2], machine[2];
    double bw[4], lat[4];
    pb_cluster c;
    /* groups 0 = {d0, d1}, 1 = {d0}, 2 = {d1} */
    int start[4], devices[4], group[N_OPS], repl[N_OPS];
    double share[4];
    pb_strategy s;
} test_fixture;

static int test_setup(void **state)
{
    test_fixture *f = calloc(1, sizeof *f);
    char path[4096];
    snprintf(path, sizeof path, "%s/topology/tag_example.json", getenv("PB_TESTDATA"));
    pb_error err;
    if (nodelink_read(path, &f->g, &err) != PB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    f->compiler = pb_compiler_new();
    f->type = (pb_device_type){.name = "gpu", .speed_vs_ref = 1};
    f->c = (pb_cluster){.struct_size = sizeof(pb_cluster),
                        .n_devices = 2,
                        .n_types = 1,
                        .types = &f->type,
                        .device_type = f->device_type,
                        .device_machine = f->machine,
                        .n_machines = 1,
                        .link_bandwidth = f->bw,
                        .link_latency = f->lat,
                        .type_size = sizeof(pb_device_type)};
    int start[4] = {0, 2, 3, 4}, devices[4] = {0, 1, 0, 1};
    memcpy(f->start, start, sizeof start);
    memcpy(f->devices, devices, sizeof devices);
    *state = f;
    return 0;
}

static int test_teardown(void **state)
{
    test_fixture *f = *state;
    graph_free(f->g);
    pb_compiler_free(f->compiler);
    free(f);
    return 0;
}

/* Every op in group 0 with option repl, the NoOp alone on d0 (group 1). */
static pb_strategy *test_dp(test_fixture *f, int repl)
{
    for (int v = 0; v < N_OPS; v++) {
        f->group[v] = 0;
        f->repl[v] = repl;
    }
    f->group[NOOP] = 1;
    f->repl[NOOP] = PB_REPL_NONE;
    pb_strategy_placement(&f->s, N_OPS, f->group);
    f->s.kind = PB_STRATEGY_REPLICATED;
    f->s.replication = f->repl;
    f->s.n_device_groups = 3;
    f->s.group_start = f->start;
    f->s.group_devices = f->devices;
    return &f->s;
}

static const pb_compiled *test_compile(test_fixture *f)
{
    const pb_compiled *cg = NULL;
    pb_error err;
    if (pb_compile(f->compiler, f->g, &f->c, &f->s, &cg, &err) != PB_OK)
        fail_msg("%s", err.msg);
    return cg;
}

/* The node of kind `kind` replicating or converting op `origin` with replica index r on device
 * d (-1: any), or -1. */
static int test_find(const pb_compiled *cg, int kind, int origin, int r, int d)
{
    for (int v = 0; v < cg->n_nodes; v++)
        if (cg->kind[v] == kind && cg->origin[v] == origin && cg->replica[v] == r &&
            (d < 0 || cg->device[v] == d))
            return v;
    return -1;
}

static int test_count(const pb_compiled *cg, int kind)
{
    int n = 0;
    for (int v = 0; v < cg->n_nodes; v++)
        n += cg->kind[v] == kind;
    return n;
}

/* Bytes node v reads from node src (-1 when it reads nothing from it). */
static double test_reads(const pb_compiled *cg, int v, int src)
{
    for (int i = cg->in_start[v]; i < cg->in_start[v + 1]; i++)
        if (cg->in_src[i] == src)
            return cg->in_bytes[i];
    return -1;
}

/* Inputs come before their readers. */
static void test_topological(const pb_compiled *cg)
{
    for (int v = 0; v < cg->n_nodes; v++)
        for (int i = cg->in_start[v]; i < cg->in_start[v + 1]; i++)
            assert_true(cg->in_src[i] < v);
}

static void test_placement(void **state)
{
    test_fixture *f = *state;
    int device[N_OPS] = {0, 1, 1, 1, 1, 1, 0};
    pb_strategy_placement(&f->s, N_OPS, device);
    const pb_compiled *cg = test_compile(f);
    assert_int_equal(cg->n_nodes, N_OPS);
    assert_int_equal(cg->n_inputs, f->g->n_edges);
    for (int v = 0; v < N_OPS; v++) {
        assert_int_equal(cg->origin[v], v); /* already in queue order */
        assert_int_equal(cg->device[v], device[v]);
        assert_true(cg->cost_us[v] == f->g->cost_us[v]);
    }
    assert_true(test_reads(cg, Y, X) == 65536 && test_reads(cg, NOOP, UPD) == 0);
}

/* Example 2's compiled graph: x, y, gW split in halves, W, lr, upd whole on both devices, one
 * AllReduce member per device reading its half gradient (131072) and read whole (262144), and
 * (TAG's replace_placeholder) a shape node before each x replica, on its device, that the replica
 * waits for without data: 6 ops x 2 + the NoOp + 2 AllReduce members + 2 shape nodes. */
static void test_allreduce(void **state)
{
    test_fixture *f = *state;
    test_dp(f, PB_REPL_ALLREDUCE);
    const pb_compiled *cg = test_compile(f);
    test_topological(cg);
    assert_int_equal(cg->n_nodes, 2 * 6 + 1 + 2 + 2);
    assert_int_equal(test_count(cg, PB_CNODE_SHAPE), 2);
    assert_int_equal(cg->n_collectives, 1);
    assert_int_equal(cg->n_split_ops, 3);
    for (int d = 0; d < 2; d++) {
        int x = test_find(cg, PB_CNODE_OP, X, d, d), y = test_find(cg, PB_CNODE_OP, Y, d, d);
        int w = test_find(cg, PB_CNODE_OP, W, d, d), gw = test_find(cg, PB_CNODE_OP, GW, d, d);
        int upd = test_find(cg, PB_CNODE_OP, UPD, d, d);
        int ar = test_find(cg, PB_CNODE_ALLREDUCE, GW, 0, d);
        assert_true(x >= 0 && y >= 0 && w >= 0 && gw >= 0 && upd >= 0 && ar >= 0);
        int shape = test_find(cg, PB_CNODE_SHAPE, X, 0, d);
        assert_true(shape >= 0 && test_reads(cg, x, shape) == 0 && cg->cost_us[shape] == 0);
        assert_int_equal(cg->in_start[x + 1] - cg->in_start[x], 1);
        assert_true(test_reads(cg, y, x) == 32768 && test_reads(cg, y, w) == 262144);
        assert_true(test_reads(cg, gw, x) == 32768 && test_reads(cg, gw, y) == 32768);
        assert_true(test_reads(cg, ar, gw) == 131072 && test_reads(cg, upd, ar) == 262144);
        assert_true(cg->cost_us[y] == 52 && cg->cost_us[gw] == 42 && cg->cost_us[x] == 6);
        assert_true(cg->cost_us[upd] == 20);
    }
    int noop = test_find(cg, PB_CNODE_OP, NOOP, 0, 0);
    assert_true(test_reads(cg, noop, test_find(cg, PB_CNODE_OP, UPD, 1, 1)) == 0);
}

/* Example 3: the halves of gW are added on the parameter server d0, read whole by both. */
static void test_ps(void **state)
{
    test_fixture *f = *state;
    test_dp(f, PB_REPL_PS);
    const pb_compiled *cg = test_compile(f);
    assert_int_equal(test_count(cg, PB_CNODE_ADDN), 1);
    assert_int_equal(test_count(cg, PB_CNODE_ALLREDUCE), 0);
    int sum = test_find(cg, PB_CNODE_ADDN, GW, 0, 0);
    assert_true(sum >= 0);
    for (int d = 0; d < 2; d++) {
        assert_true(test_reads(cg, sum, test_find(cg, PB_CNODE_OP, GW, d, d)) == 131072);
        assert_true(test_reads(cg, test_find(cg, PB_CNODE_OP, UPD, d, d), sum) == 262144);
    }
}

/* x alone on d0 feeding split y and gW: one Split on x's device, its port r read by replica r
 * of both. */
static void test_split_insertion(void **state)
{
    test_fixture *f = *state;
    test_dp(f, PB_REPL_ALLREDUCE);
    f->group[X] = 1;
    f->repl[X] = PB_REPL_NONE;
    const pb_compiled *cg = test_compile(f);
    test_topological(cg);
    assert_int_equal(test_count(cg, PB_CNODE_SPLIT), 1);
    int split = test_find(cg, PB_CNODE_SPLIT, X, 0, 0);
    assert_true(split >= 0);
    assert_true(test_reads(cg, split, test_find(cg, PB_CNODE_OP, X, 0, 0)) == 65536);
    for (int r = 0; r < 2; r++)
        for (int op = Y; op <= GW; op++) {
            int v = test_find(cg, PB_CNODE_OP, op, r, r);
            int i = cg->in_start[v];
            assert_int_equal(cg->in_src[i], split);
            assert_int_equal(cg->in_port[i], r);
            assert_true(cg->in_bytes[i] == 32768);
        }
}

/* gW alone on d1 reading split x and y: one Concat of each on d1; its gradient is whole, so
 * no synchronisation, and both upd replicas read gW on d1.  (Without TAG's duplicate fallback:
 * gW shares a base group with y, which it would otherwise keep whole; test_base_group_fallback.) */
static void test_concat_insertion(void **state)
{
    test_fixture *f = *state;
    test_dp(f, PB_REPL_ALLREDUCE);
    f->group[GW] = 2;
    f->repl[GW] = PB_REPL_NONE;
    pb_compiler_set_flags(f->compiler, PB_COMPILE_PRUNE | PB_COMPILE_PLACEHOLDER);
    const pb_compiled *cg = test_compile(f);
    pb_compiler_set_flags(f->compiler,
                          PB_COMPILE_BASE_GROUPS | PB_COMPILE_PRUNE | PB_COMPILE_PLACEHOLDER);
    test_topological(cg);
    assert_int_equal(test_count(cg, PB_CNODE_CONCAT), 2);
    assert_int_equal(cg->n_collectives, 0);
    int gw = test_find(cg, PB_CNODE_OP, GW, 0, 1);
    for (int op = X; op <= Y; op += Y - X) {
        int cat = test_find(cg, PB_CNODE_CONCAT, op, 0, 1);
        assert_true(cat >= 0 && test_reads(cg, gw, cat) == 65536);
        for (int r = 0; r < 2; r++)
            assert_true(test_reads(cg, cat, test_find(cg, PB_CNODE_OP, op, r, r)) == 32768);
    }
    for (int d = 0; d < 2; d++)
        assert_true(test_reads(cg, test_find(cg, PB_CNODE_OP, UPD, d, d), gw) == 262144);
}

/* The same strategy in TAG's reference mode (specs/tag.md §3.2, §12 Example 4): the base group
 * {W, y, gW, upd} has members on 2 devices (y, W and upd) and on 1 (gW), so y computes the whole
 * batch on both devices, reading x (its own base group, still split) through one Concat on d0,
 * its first device; gW on d1 reads x through a second Concat on d1 and y's replica on d1.  Only
 * the x Concats exist, and upd reads gW whole.  Nobody reads y's replica on d0: pruned, while the
 * Concat on d0 stays for y's replica on d1. */
static void test_base_group_fallback(void **state)
{
    test_fixture *f = *state;
    test_dp(f, PB_REPL_ALLREDUCE);
    f->group[GW] = 2;
    f->repl[GW] = PB_REPL_NONE;
    const pb_compiled *cg = test_compile(f);
    test_topological(cg);
    assert_int_equal(cg->n_split_ops, 1); /* x */
    assert_int_equal(test_count(cg, PB_CNODE_CONCAT), 2);
    int cat0 = test_find(cg, PB_CNODE_CONCAT, X, 0, 0),
        cat1 = test_find(cg, PB_CNODE_CONCAT, X, 0, 1);
    int gw = test_find(cg, PB_CNODE_OP, GW, 0, 1);
    assert_true(cat0 >= 0 && cat1 >= 0 && test_reads(cg, gw, cat1) == 65536);
    int y = test_find(cg, PB_CNODE_OP, Y, 1, 1);
    assert_true(y >= 0 && test_reads(cg, y, cat0) == 65536 && cg->cost_us[y] == 100);
    assert_true(test_reads(cg, gw, y) == 65536);
    assert_int_equal(test_find(cg, PB_CNODE_OP, Y, 0, -1), -1);
    for (int d = 0; d < 2; d++)
        assert_true(test_reads(cg, test_find(cg, PB_CNODE_OP, UPD, d, d), gw) == 262144);
}

/* A graph of tests/data/topology. */
static pb_graph *test_graph_named(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/topology/%s", getenv("PB_TESTDATA"), name);
    pb_graph *g;
    pb_error err;
    if (nodelink_read(path, &g, &err) != PB_OK)
        fail_msg("%s", err.msg);
    return g;
}

/* s: the n ops of a graph replicated with AllReduce over {d0, d1} (group 0 of f). */
static void test_all_allreduce(test_fixture *f, pb_strategy *s, int *group, int *repl, int n)
{
    for (int v = 0; v < n; v++) {
        group[v] = 0;
        repl[v] = PB_REPL_ALLREDUCE;
    }
    pb_strategy_placement(s, n, group);
    s->kind = PB_STRATEGY_REPLICATED;
    s->replication = repl;
    s->n_device_groups = 3;
    s->group_start = f->start;
    s->group_devices = f->devices;
}

/* x (batch) -> Shape -> y: every replica of the Shape op reads its own replica's part of x, as
 * TensorFlow's replicas do, not x joined by a Concat on one device (which sent whole
 * activations across the cluster for every Shape op of the zoo's graphs). */
static void test_shape_reads_local_part(void **state)
{
    test_fixture *f = *state;
    pb_graph *g = test_graph_named("shape_read.json");
    int group[3], repl[3];
    pb_strategy s;
    test_all_allreduce(f, &s, group, repl, 3);
    const pb_compiled *cg = NULL;
    pb_error err;
    if (pb_compile(f->compiler, g, &f->c, &s, &cg, &err) != PB_OK)
        fail_msg("%s", err.msg);
    test_topological(cg);
    assert_int_equal(test_count(cg, PB_CNODE_CONCAT), 0);
    for (int r = 0; r < 2; r++) {
        int shp = test_find(cg, PB_CNODE_OP, 1, r, r), x = test_find(cg, PB_CNODE_OP, 0, r, r);
        assert_true(shp >= 0 && x >= 0);
        assert_true(test_reads(cg, shp, x) == 32768);
        assert_true(test_reads(cg, test_find(cg, PB_CNODE_OP, 2, r, r), shp) == 16);
    }
    graph_free(g);
}

/* x -> gW (sum) -> g (Identity, sum, the gradient) -> upd, AllReduce over {d0, d1}: replica r of
 * g reads replica r of gW at its part size (262144 / 2), and the AllReduce members read g's
 * replicas; no AddN.  Without PB_COMPILE_SUM_PARTS (the compiler before it) g's replicas read
 * one AddN of gW's parts on d0, whole. */
static void test_sum_parts(void **state)
{
    test_fixture *f = *state;
    pb_graph *g = test_graph_named("sum_chain.json");
    int group[5], repl[5];
    pb_strategy s;
    test_all_allreduce(f, &s, group, repl, 5);
    const pb_compiled *cg = NULL;
    pb_error err;
    for (int with = 1; with >= 0; with--) {
        pb_compiler_set_flags(f->compiler, PB_COMPILE_BASE_GROUPS | PB_COMPILE_PRUNE |
                                               PB_COMPILE_PLACEHOLDER |
                                               (with ? PB_COMPILE_SUM_PARTS : 0u));
        if (pb_compile(f->compiler, g, &f->c, &s, &cg, &err) != PB_OK)
            fail_msg("%s", err.msg);
        test_topological(cg);
        assert_int_equal(cg->n_collectives, 1);
        assert_int_equal(test_count(cg, PB_CNODE_ADDN), with ? 0 : 1);
        int sum = test_find(cg, PB_CNODE_ADDN, 2, 0, 0);
        for (int r = 0; r < 2; r++) {
            int gw = test_find(cg, PB_CNODE_OP, 2, r, r), id = test_find(cg, PB_CNODE_OP, 3, r, r);
            assert_true(gw >= 0 && id >= 0);
            if (with)
                assert_true(test_reads(cg, id, gw) == 131072);
            else
                assert_true(test_reads(cg, id, sum) == 262144 && test_reads(cg, sum, gw) == 131072);
            assert_true(test_reads(cg, test_find(cg, PB_CNODE_ALLREDUCE, 3, 0, r), id) == 131072);
        }
    }
    pb_compiler_set_flags(f->compiler, PB_COMPILE_BASE_GROUPS | PB_COMPILE_PRUNE |
                                           PB_COMPILE_PLACEHOLDER | PB_COMPILE_SUM_PARTS);
    graph_free(g);
}

/* Two layers whose optimizer ops both read a shared parameter (Adam's beta power): layer 1 (W1,
 * y1, g1, u1) is data-parallel on {d0, d1}, layer 2 alone on d1.  The shared parameter does not
 * join the layers' base groups, so layer 1 is replicated alike and y1 and g1 are batch-split (with
 * x: 3 split ops); were the layers one group, layer 2's single device would make y1 and g1
 * compute the whole batch (1 split op, x). */
static void test_base_groups_shared_parameter(void **state)
{
    test_fixture *f = *state;
    pb_graph *g = test_graph_named("two_layers.json");
    int group[10], repl[10];
    pb_strategy s;
    test_all_allreduce(f, &s, group, repl, 10);
    for (int v = 0; v < 10; v++)
        if (strchr(g->node_name[v], '2')) {
            group[v] = 2;
            repl[v] = PB_REPL_NONE;
        }
    const pb_compiled *cg = NULL;
    pb_error err;
    if (pb_compile(f->compiler, g, &f->c, &s, &cg, &err) != PB_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(cg->n_split_ops, 3);
    assert_int_equal(cg->n_collectives, 1);
    graph_free(g);
}

/* Shares 3/4 and 1/4: parts of floor(S * share), costs cost_us * share. */
static void test_shares(void **state)
{
    test_fixture *f = *state;
    test_dp(f, PB_REPL_ALLREDUCE);
    double share[4] = {0.75, 0.25, 1, 1};
    f->s.device_share = share;
    const pb_compiled *cg = test_compile(f);
    int y0 = test_find(cg, PB_CNODE_OP, Y, 0, 0), y1 = test_find(cg, PB_CNODE_OP, Y, 1, 1);
    assert_true(cg->cost_us[y0] == 75 && cg->cost_us[y1] == 25);
    assert_true(test_reads(cg, y0, test_find(cg, PB_CNODE_OP, X, 0, 0)) == 49152);
    assert_true(test_reads(cg, y1, test_find(cg, PB_CNODE_OP, X, 1, 1)) == 16384);
    assert_true(test_reads(cg, test_find(cg, PB_CNODE_ALLREDUCE, GW, 0, 1),
                           test_find(cg, PB_CNODE_OP, GW, 1, 1)) == 65536);
    share[1] = 0.5;
    pb_error err = {{0}};
    const pb_compiled *out;
    assert_int_equal(pb_compile(f->compiler, f->g, &f->c, &f->s, &out, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "the batch shares of device group 0 sum to 1.25"));
}

/* The library compiler refuses a model-parallel split (simulators resolve it with METIS). */
static void test_split_refused(void **state)
{
    test_fixture *f = *state;
    test_dp(f, PB_REPL_ALLREDUCE);
    f->repl[Y] = PB_REPL_SPLIT;
    pb_error err = {{0}};
    const pb_compiled *out;
    assert_int_equal(pb_compile(f->compiler, f->g, &f->c, &f->s, &out, &err), PB_ERR);
    assert_string_equal(err.msg, "node 'y': device group 0: option 'split' (model-parallel) is "
                                 "not supported by the strategy compiler");
}

/* SFB's rewrite (ABI 1.5 op_replication) without TAG's base groups (PB_COMPILE_BASE_GROUPS
 * off: a duplicate applies to its op alone): x and gW duplicated inside the AllReduce group.  gW
 * is whole on both devices, so nothing is synchronised and each upd reads its local gW; y stays
 * split and reads x through one Split on x's first device; gW reads x locally and y through a
 * Concat on its first device. */
static void test_op_duplicate(void **state)
{
    test_fixture *f = *state;
    test_dp(f, PB_REPL_ALLREDUCE);
    int op[N_OPS] = {-1, -1, -1, -1, -1, -1, -1};
    op[X] = op[GW] = PB_REPL_DUPLICATE;
    f->s.op_replication = op;
    pb_compiler_set_flags(f->compiler,
                          PB_COMPILE_PRUNE | PB_COMPILE_PLACEHOLDER | PB_COMPILE_SUM_PARTS);
    const pb_compiled *cg = test_compile(f);
    pb_compiler_set_flags(f->compiler, PB_COMPILE_BASE_GROUPS | PB_COMPILE_PRUNE |
                                           PB_COMPILE_PLACEHOLDER | PB_COMPILE_SUM_PARTS);
    test_topological(cg);
    assert_int_equal(cg->n_collectives, 0);
    assert_int_equal(cg->n_split_ops, 1);
    assert_int_equal(cg->op_part[X], 0);
    assert_int_equal(cg->op_part[Y], 1);
    assert_int_equal(cg->op_part[GW], 0);
    int split = test_find(cg, PB_CNODE_SPLIT, X, 0, 0),
        concat = test_find(cg, PB_CNODE_CONCAT, Y, 0, 0);
    assert_true(split >= 0 && concat >= 0);
    assert_int_equal(test_count(cg, PB_CNODE_SPLIT), 1);
    assert_int_equal(test_count(cg, PB_CNODE_CONCAT), 1);
    for (int d = 0; d < 2; d++) {
        int x = test_find(cg, PB_CNODE_OP, X, d, d), y = test_find(cg, PB_CNODE_OP, Y, d, d);
        int gw = test_find(cg, PB_CNODE_OP, GW, d, d), upd = test_find(cg, PB_CNODE_OP, UPD, d, d);
        assert_true(cg->cost_us[x] == 10 && cg->cost_us[gw] == 80 && cg->cost_us[y] == 52);
        assert_true(test_reads(cg, y, split) == 32768);
        assert_true(test_reads(cg, gw, x) == 65536 && test_reads(cg, gw, concat) == 65536);
        assert_true(test_reads(cg, upd, gw) == 262144);
        assert_true(test_reads(cg, concat, y) == 32768);
    }
    assert_true(test_reads(cg, split, test_find(cg, PB_CNODE_OP, X, 0, 0)) == 65536);
}

/* The same kind of rewrite in TAG's reference mode (specs/tag.md §9: SFB's code 4 "stops batch
 * splitting of its whole base group"; §3.2: a group with a code-4 member stays Full): gW alone
 * duplicated.  Its base group is {W, y, gW, upd} (§12), so y too computes the whole batch on both
 * devices (cost 100, not 52), although its own option is allreduce; x, a group of its own, stays
 * split (n_split_ops 1).  y and gW read x whole (Full on {d0, d1}), memoised as one conversion: a
 * single Concat of x's two parts (32768 bytes each) on d0, the consumers' first device (§3.4),
 * which every replica of y and gW reads (65536).  gW reads y on its own device; its gradient is
 * Full, so there is no AllReduce and each upd reads the local gW (§3.3, 262144).  No Split: no
 * Part consumer reads a Full producer. */
static void test_op_duplicate_base_group(void **state)
{
    test_fixture *f = *state;
    test_dp(f, PB_REPL_ALLREDUCE);
    int op[N_OPS] = {-1, -1, -1, -1, -1, -1, -1};
    op[GW] = PB_REPL_DUPLICATE;
    f->s.op_replication = op;
    const pb_compiled *cg = test_compile(f);
    test_topological(cg);
    assert_int_equal(cg->n_collectives, 0);
    assert_int_equal(cg->n_split_ops, 1);
    assert_int_equal(cg->op_part[X], 1);
    assert_int_equal(cg->op_part[Y], 0);
    assert_int_equal(cg->op_part[GW], 0);
    assert_int_equal(test_count(cg, PB_CNODE_SPLIT), 0);
    assert_int_equal(test_count(cg, PB_CNODE_CONCAT), 1);
    int concat = test_find(cg, PB_CNODE_CONCAT, X, 0, 0);
    assert_true(concat >= 0);
    for (int d = 0; d < 2; d++) {
        int x = test_find(cg, PB_CNODE_OP, X, d, d), y = test_find(cg, PB_CNODE_OP, Y, d, d);
        int gw = test_find(cg, PB_CNODE_OP, GW, d, d), upd = test_find(cg, PB_CNODE_OP, UPD, d, d);
        assert_true(cg->cost_us[y] == 100 && cg->cost_us[gw] == 80);
        assert_true(test_reads(cg, concat, x) == 32768);
        assert_true(test_reads(cg, y, concat) == 65536 && test_reads(cg, gw, concat) == 65536);
        assert_true(test_reads(cg, gw, y) == 65536);
        assert_true(test_reads(cg, upd, gw) == 262144);
    }
}

/* An op_replication entry that is not -1, allreduce, ps or duplicate names the op. */
static void test_op_option_refused(void **state)
{
    test_fixture *f = *state;
    test_dp(f, PB_REPL_ALLREDUCE);
    int op[N_OPS] = {-1, -1, PB_REPL_NONE, -1, -1, -1, -1};
    f->s.op_replication = op;
    pb_error err = {{0}};
    const pb_compiled *out;
    assert_int_equal(pb_compile(f->compiler, f->g, &f->c, &f->s, &out, &err), PB_ERR);
    assert_string_equal(err.msg, "node 'y': per-op replication option 0 (allowed: -1 = the "
                                 "node's, 1 allreduce, 2 ps, 3 duplicate)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placement),
        cmocka_unit_test(test_allreduce),
        cmocka_unit_test(test_ps),
        cmocka_unit_test(test_split_insertion),
        cmocka_unit_test(test_concat_insertion),
        cmocka_unit_test(test_base_group_fallback),
        cmocka_unit_test(test_shape_reads_local_part),
        cmocka_unit_test(test_sum_parts),
        cmocka_unit_test(test_base_groups_shared_parameter),
        cmocka_unit_test(test_shares),
        cmocka_unit_test(test_split_refused),
        cmocka_unit_test(test_op_duplicate),
        cmocka_unit_test(test_op_duplicate_base_group),
        cmocka_unit_test(test_op_option_refused),
    };
    return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
