/* test_sfb.c — TAG's SFB ILP (plugins/shared/sfb): a hand-derived optimum on the worked-example
 * graph of specs/tag.md §12, and CBC's optimum against brute-force enumeration on random
 * instances. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "data/nodelink.h"
#include "model/graph.h"
#include "sfb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The graph of §12: x, W, y, gW, lr, upd, GradientDescent (node indices 0..6). */
enum { X = 0, W = 1, Y = 2, GW = 3, LR = 4, UPD = 5, NOOP = 6, N_OPS = 7 };

typedef struct test_fixture {
    pb_graph *g;
    pb_device_type type;
    int device_type[2], machine[2];
    double bw[4], lat[4];
    pb_cluster c;
    int start[3], devices[3], group[N_OPS], repl[N_OPS];
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
        free(f);
        return -1;
    }
    f->type = (pb_device_type){.name = "gpu", .speed_vs_ref = 1};
    f->c = (pb_cluster){.struct_size = sizeof(pb_cluster),
                        .n_devices = 2,
                        .n_types = 1,
                        .types = &f->type,
                        .device_type = f->device_type,
                        .device_machine = f->machine,
                        .n_machines = 2,
                        .link_bandwidth = f->bw,
                        .link_latency = f->lat,
                        .type_size = sizeof(pb_device_type)};
    f->machine[1] = 1;
    *state = f;
    return 0;
}

static int test_teardown(void **state)
{
    test_fixture *f = *state;
    graph_free(f->g);
    free(f);
    return 0;
}

/* Every op on group 0 = {d0, d1} with `option`, the NoOp alone on d0 (group 1); links of
 * bandwidth tau both ways. */
static const pb_strategy *test_dp(test_fixture *f, int option, double tau)
{
    f->bw[1] = f->bw[2] = tau;
    int start[3] = {0, 2, 3}, devices[3] = {0, 1, 0};
    memcpy(f->start, start, sizeof start);
    memcpy(f->devices, devices, sizeof devices);
    for (int v = 0; v < N_OPS; v++) {
        f->group[v] = 0;
        f->repl[v] = option;
    }
    f->group[NOOP] = 1;
    f->repl[NOOP] = PB_REPL_NONE;
    pb_strategy_placement(&f->s, N_OPS, f->group);
    f->s.kind = PB_STRATEGY_REPLICATED;
    f->s.replication = f->repl;
    f->s.n_device_groups = 2;
    f->s.group_start = f->start;
    f->s.group_devices = f->devices;
    return &f->s;
}

typedef struct test_records {
    int n;
    sfb_record last;
} test_records;

static void test_record(void *ctx, const sfb_record *r)
{
    test_records *t = ctx;
    t->n++;
    t->last = *r;
}

/* Runs SFB; out[v] = 1 for the duplicated ops. */
static void test_run(test_fixture *f, int option, double tau, int *out, test_records *rec)
{
    const pb_strategy *s = test_dp(f, option, tau);
    int op[N_OPS], dup;
    sfb_options o = {.depth = 0, .time_limit_s = 10, .max_candidates = 0};
    pb_error err;
    memset(rec, 0, sizeof *rec);
    if (sfb_apply(f->g, &f->c, s, &o, op, &dup, test_record, rec, &err) != PB_OK)
        fail_msg("%s", err.msg);
    int count = 0;
    for (int v = 0; v < N_OPS; v++) {
        assert_true(op[v] == -1 || op[v] == PB_REPL_DUPLICATE);
        out[v] = op[v] == PB_REPL_DUPLICATE;
        count += out[v];
    }
    assert_int_equal(dup, count);
}

/*
 * By hand, D = 2: candidates gW (the gradient producer), x and y (its batch-split ancestors; W
 * is whole).  Replica times x 6, y 52, gW 42 (the graph's replica costs for 2).  Cut edges
 * x->gW, y->gW, x->y, each D(D-1) 65536 / tau = k µs; ring AllReduce of gW saves
 * 2(D-1)/D 262144 / tau = s = 2k.  Subsets closed towards gW:
 *   {} 0;  {gW} 42 - s + 2k = 42;  {gW,x} 48 - s + k = 48 - k;  {gW,y} 94 - s + 2k = 94;
 *   {gW,x,y} 100 - s = 100 - 2k.
 * tau = 2621.44: k = 50, so {gW,x} (-2) beats {gW,x,y} (0) and {} (0).
 * tau = 1000: k = 131.072, {gW,x,y} = -162.144.   tau = 4000: k = 32.768, nothing (all >= 0).
 */
static void test_hand_allreduce(void **state)
{
    test_fixture *f = *state;
    int dup[N_OPS];
    test_records rec;
    test_run(f, PB_REPL_ALLREDUCE, 2621.44, dup, &rec);
    int want[N_OPS] = {1, 0, 0, 1, 0, 0, 0};
    assert_memory_equal(dup, want, sizeof want);
    assert_int_equal(rec.n, 1);
    assert_int_equal(rec.last.apply, UPD);
    assert_int_equal(rec.last.gradient, GW);
    assert_int_equal(rec.last.n_candidates, 3);
    assert_int_equal(rec.last.n_cut_vars, 3);
    assert_int_equal(rec.last.n_rows, 3 + 2);
    assert_int_equal(rec.last.status, SFB_OPTIMAL);
    assert_true(fabs(rec.last.objective - -2.0) < 1e-9);

    test_run(f, PB_REPL_ALLREDUCE, 1000, dup, &rec);
    int all[N_OPS] = {1, 0, 1, 1, 0, 0, 0};
    assert_memory_equal(dup, all, sizeof all);
    assert_true(fabs(rec.last.objective - -162.144) < 1e-9);

    test_run(f, PB_REPL_ALLREDUCE, 4000, dup, &rec);
    int none[N_OPS] = {0};
    assert_memory_equal(dup, none, sizeof none);
    assert_true(rec.last.objective == 0);
}

/* A parameter server saves (D-1)(D+1)/D 262144 / tau = 98.304 at tau = 4000 (k = 32.768):
 * {gW} 9.232, {gW,x} 48 - 98.304 + 32.768 = -17.536, {gW,x,y} 1.696. */
static void test_hand_ps(void **state)
{
    test_fixture *f = *state;
    int dup[N_OPS];
    test_records rec;
    test_run(f, PB_REPL_PS, 4000, dup, &rec);
    int want[N_OPS] = {1, 0, 0, 1, 0, 0, 0};
    assert_memory_equal(dup, want, sizeof want);
    assert_true(fabs(rec.last.objective - -17.536) < 1e-9);
}

/* sfb_sync=nccl prices the AllReduce with the topology simulator's collective model: the two
 * devices are on two machines linked at tau = 2810, so the scale is 2810 / 2810 = 1; each member
 * sends 262144 / 2 bytes = 128 KB: max(trunc(0.043420241 * 128 + 368.20136), trunc(0.27766802 *
 * 128 + 211.91926)) = max(373, 247) = 373 µs (specs/tag.md §4.4's table: 373).  k = 2 * 65536 /
 * 2810 = 46.644128:  {gW} 42 - 373 + 2k = -237.71,  {gW,x} 48 - 373 + k = -278.355872,
 * {gW,x,y} 100 - 373 = -273: {gW,x}.  The paper's formula saves only 2k = 93.288 there:
 * {gW,x} 48 - 93.288 + 46.644 = 1.356, {gW,x,y} 6.712, {gW} 42: nothing. */
static void test_hand_nccl(void **state)
{
    test_fixture *f = *state;
    int dup[N_OPS], none[N_OPS] = {0}, want[N_OPS] = {1, 0, 0, 1, 0, 0, 0};
    test_records rec;
    test_run(f, PB_REPL_ALLREDUCE, 2810, dup, &rec);
    assert_memory_equal(dup, none, sizeof none);
    const pb_strategy *s = test_dp(f, PB_REPL_ALLREDUCE, 2810);
    int op[N_OPS], n = 0;
    sfb_options o = {.time_limit_s = 10, .mode = SFB_MODE_GRADIENT, .sync = SFB_SYNC_NCCL};
    pb_error err;
    memset(&rec, 0, sizeof rec);
    if (sfb_apply(f->g, &f->c, s, &o, op, &n, test_record, &rec, &err) != PB_OK)
        fail_msg("%s", err.msg);
    for (int v = 0; v < N_OPS; v++)
        dup[v] = op[v] == PB_REPL_DUPLICATE;
    assert_memory_equal(dup, want, sizeof want);
    assert_int_equal(n, 2);
    assert_true(fabs(rec.last.objective - (48 - 373 + 131072.0 / 2810)) < 1e-9);
}

/* Limits: at depth 1 the candidates would be gW, x and y (both one edge above gW); at most 2
 * keeps gW and x (gW's first input).  y is then outside, so duplicating gW pays for y -> gW:
 * {gW} = 42 - 262.144 + 2 * 131.072 = 42, {gW,x} = 48 - 262.144 + 131.072 = -83.072 (tau =
 * 1000). */
static void test_depth(void **state)
{
    test_fixture *f = *state;
    const pb_strategy *s = test_dp(f, PB_REPL_ALLREDUCE, 1000);
    int op[N_OPS];
    test_records rec = {0};
    sfb_options o = {.depth = 1, .time_limit_s = 10, .max_candidates = 2};
    pb_error err;
    assert_int_equal(sfb_apply(f->g, &f->c, s, &o, op, NULL, test_record, &rec, &err), PB_OK);
    assert_int_equal(rec.last.n_candidates, 2);
    assert_true(fabs(rec.last.objective - -83.072) < 1e-9);
    assert_int_equal(op[X], PB_REPL_DUPLICATE);
    assert_int_equal(op[Y], -1);
}

/*
 * The reference's whole-graph ILP (sfb.h, SFB_MODE_REFERENCE) by hand, on devices 1000x the
 * reference (T = cost / 1000, so (M-1) T + 1 is x 1.01, W 1.002, y 1.1, gW 1.08, lr 1.001, upd
 * 1.02 with M = 2).  A cut edge costs M(M-1) S / 2810 with S = bytes / 4: x->y, x->gW, y->gW
 * 32768/2810 = 11.66, W->y, W->upd, gW->upd 131072/2810 = 46.64, lr->upd 2/2810.  gW's AllReduce
 * saves 2(M-1)/M 65536 / 2810 = 23.3217.  Without consumer constraints the best set is {x, W, y,
 * gW} (no cut: x and W have no inputs, upd is not duplicated): 4.192 - 65536/2810 = -19.1297;
 * {gW, x} gives -9.57, adding upd or lr only adds their cost.
 */
static void test_hand_reference(void **state)
{
    test_fixture *f = *state;
    const pb_strategy *s = test_dp(f, PB_REPL_ALLREDUCE, 1000);
    f->type.speed_vs_ref = 1000;
    int op[N_OPS], dup;
    test_records rec = {0};
    sfb_options o = {.time_limit_s = 10, .mode = SFB_MODE_REFERENCE};
    pb_error err;
    int rc = sfb_apply(f->g, &f->c, s, &o, op, &dup, test_record, &rec, &err);
    f->type.speed_vs_ref = 1;
    assert_int_equal(rc, PB_OK);
    int want[N_OPS] = {
        PB_REPL_DUPLICATE, PB_REPL_DUPLICATE, PB_REPL_DUPLICATE, PB_REPL_DUPLICATE, -1, -1, -1};
    assert_memory_equal(op, want, sizeof want);
    assert_int_equal(dup, 4);
    assert_int_equal(rec.n, 1);
    assert_int_equal(rec.last.apply, -1);
    assert_int_equal(rec.last.n_candidates, 6);             /* all but the NoOp on one device */
    assert_int_equal(rec.last.n_rows, rec.last.n_cut_vars); /* cut rows only */
    assert_true(fabs(rec.last.objective - (4.192 - 65536.0 / 2810)) < 1e-9);
}

/* A placement is refused with a message. */
static void test_refuses_placement(void **state)
{
    test_fixture *f = *state;
    int device[N_OPS] = {0};
    pb_strategy s;
    pb_strategy_placement(&s, N_OPS, device);
    int op[N_OPS];
    sfb_options o = {0, 0, 0, SFB_MODE_GRADIENT, SFB_SYNC_PAPER};
    pb_error err = {{0}};
    assert_int_equal(sfb_apply(f->g, &f->c, &s, &o, op, NULL, NULL, NULL, &err), PB_ERR);
    assert_string_equal(err.msg, "SFB applies to replicated strategies (kind 0 given)");
}

/* ---------------------------------------------------------------- brute force */

static uint64_t test_rng(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 33;
}

static double test_uniform(uint64_t *x, double lo, double hi)
{
    return lo + (hi - lo) * (double)test_rng(x) / 2147483648.0;
}

/* Random instances shaped like SFB's: candidate 0 the root, every other candidate k with at
 * least one consumer i < k (an edge k -> i), extra edges; CBC's optimum equals the best of all
 * 2^n choices that satisfy the constraints (with and without the consumer constraints). */
static void test_brute_force(void **state)
{
    (void)state;
    uint64_t seed = 20261125;
    enum { MAX_N = 11, MAX_E = 40 };
    double cost[MAX_N], edge_cost[MAX_E];
    int src[MAX_E], dst[MAX_E], x[MAX_N], y[MAX_N];
    int nontrivial = 0;
    for (int inst = 0; inst < 300; inst++) {
        int n = 1 + (int)(test_rng(&seed) % MAX_N), m = 0;
        for (int k = 0; k < n; k++)
            cost[k] = test_uniform(&seed, 0, 60);
        cost[0] -= test_uniform(&seed, 0, 250);
        for (int k = 1; k < n; k++) {
            int fan = 1 + (int)(test_rng(&seed) % 3);
            for (int j = 0; j < fan && m < MAX_E; j++) {
                int i = (int)(test_rng(&seed) % (unsigned)k);
                int dup = 0;
                for (int e = 0; e < m; e++)
                    dup |= src[e] == k && dst[e] == i;
                if (dup)
                    continue;
                src[m] = k;
                dst[m] = i;
                edge_cost[m++] = test_uniform(&seed, 0, 80);
            }
        }
        /* Odd instances drop the consumer constraints (the reference's ILP). */
        sfb_problem p = {n, cost, m, src, dst, edge_cost, 0, inst & 1};
        double best = 0; /* the empty choice */
        for (unsigned mask = 1; mask < (1u << n); mask++) {
            for (int i = 0; i < n; i++)
                y[i] = (int)(mask >> i) & 1;
            int feasible;
            double z = sfb_objective(&p, y, &feasible);
            if (feasible && z < best)
                best = z;
        }
        double z;
        int status, cuts, rows;
        pb_error err;
        assert_int_equal(sfb_solve(&p, 0, x, &z, &status, &cuts, &rows, &err), PB_OK);
        assert_int_equal(status, SFB_OPTIMAL);
        assert_int_equal(cuts, m);
        assert_int_equal(rows, m + (inst & 1 ? 0 : n - 1));
        int feasible;
        double check = sfb_objective(&p, x, &feasible);
        assert_true(feasible);
        assert_true(fabs(check - z) < 1e-9);
        if (fabs(z - best) > 1e-6)
            fail_msg("instance %d (n %d, m %d): CBC %.9g, enumeration %.9g", inst, n, m, z, best);
        nontrivial += best < 0;
    }
    /* The instances exercise both outcomes. */
    assert_true(nontrivial > 50 && nontrivial < 290);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_allreduce),    cmocka_unit_test(test_hand_ps),
        cmocka_unit_test(test_hand_nccl),         cmocka_unit_test(test_depth),
        cmocka_unit_test(test_refuses_placement), cmocka_unit_test(test_brute_force),
        cmocka_unit_test(test_hand_reference),
    };
    return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
