/* test_embeddings.c — the graphsage and pgnn embedding plugins: sample and anchor-set counts from
 * the spec's formulas, hop distances, anchor weights, the combine and expand ops (values by hand
 * and finite-difference gradient checks), hand-computed forward passes, determinism, batching, and
 * a finite-difference check of whole forward passes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/graph.h"
#include "plugin/options.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plugins export only their descriptors, so their internal modules are compiled into this
 * test as well, to check samples, anchor sets and the combine op directly. */
#include "../../../plugins/shared/sage/sage.c"
#include "../../../plugins/embedding/pgnn/anchors.c"

/* ------------------------------------------------------------------ graphs */

typedef struct test_edge {
    int src, dst;
} test_edge;

/* Nodes n0 .. n<n-1> inserted in index order, edges in the order given. */
static pb_graph *test_graph(int n, const test_edge *edges, int m)
{
    graph_builder *b = graph_builder_new("test");
    graph_node_attrs a = {0};
    a.colocation = -1;
    a.cost_us = 1;
    pb_error err;
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        assert_int_equal(graph_add_node(b, name, &a, &err), i);
    }
    for (int e = 0; e < m; e++)
        assert_true(graph_add_edge(b, edges[e].src, edges[e].dst, 0, &err) >= 0);
    pb_graph *g = NULL;
    if (graph_build(b, &g, &err) != PB_OK)
        fail_msg("graph_build: %s", err.msg);
    return g;
}

/* 0 -> {1, 2, 3}, 1 -> {4, 5}, 2 -> {4, 5, 6}, 3 -> 6, {4, 5, 6} -> 7. */
static const test_edge diamond_edges[] = {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {1, 5}, {2, 4},
                                          {2, 5}, {2, 6}, {3, 6}, {4, 7}, {5, 7}, {6, 7}};
#define DIAMOND_N 8
#define DIAMOND_M 12

/* A chain 0 -> 1 -> ... -> 8 with a shortcut 0 -> 5. */
static const test_edge chain_edges[] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5},
                                        {5, 6}, {6, 7}, {7, 8}, {0, 5}};
#define CHAIN_N 9
#define CHAIN_M 9

static int test_is_successor(const pb_graph *g, int v, int u)
{
    for (int e = g->succ_start[v]; e < g->succ_start[v + 1]; e++)
        if (g->succ[e] == u)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ samples */

/* int(count * 0.8), by hand: 0.8 -> 0, 1.6 -> 1, 2.4 -> 2, 3.2 -> 3, 4.0 -> 4, 8.0 -> 8. */
static void test_sample_count(void **state)
{
    (void)state;
    const int count[] = {0, 1, 2, 3, 4, 5, 10}, want[] = {0, 0, 1, 2, 3, 4, 8};
    for (int i = 0; i < 7; i++)
        assert_int_equal(sage_sample_count(count[i], 0.8), want[i]);
    assert_int_equal(sage_sample_count(3, 1.0), 3);
    assert_int_equal(sage_sample_count(3, 0.5), 1); /* 1.5 */
    assert_int_equal(sage_sample_count(7, 0.0), 0);
}

static void test_samples_draw(void **state)
{
    (void)state;
    pb_graph *g = test_graph(DIAMOND_N, diamond_edges, DIAMOND_M);
    int order[DIAMOND_N];
    pb_error err;
    assert_int_equal(pb_traverse_topo(g, order, &err), PB_OK);
    pb_rng rng;
    pb_rng_seed(&rng, 7);
    sage_samples s;
    assert_int_equal(sage_samples_draw(&s, g, order, 0.8, &rng, &err), PB_OK);
    /* Out-degrees 3, 2, 3, 1, 1, 1, 1, 0 -> int(0.8 * degree) = 2, 1, 2, 0, 0, 0, 0, 0. */
    const int want[DIAMOND_N] = {2, 1, 2, 0, 0, 0, 0, 0};
    for (int v = 0; v < DIAMOND_N; v++) {
        assert_int_equal(s.start[v + 1] - s.start[v], want[v]);
        assert_int_equal(s.has[v], want[v] > 0);
        for (int e = s.start[v]; e < s.start[v + 1]; e++) {
            assert_true(test_is_successor(g, v, s.sample[e]));
            for (int f = s.start[v]; f < e; f++)
                assert_int_not_equal(s.sample[f], s.sample[e]);
        }
    }
    sage_samples_free(&s);
    graph_free(g);
}

/* A node with 20 successors keeps 16: equal seeds draw equal samples, different seeds do not
 * (C(20,16) = 4845 subsets, in draw order far more). */
static void test_samples_seeded(void **state)
{
    (void)state;
    test_edge edges[20];
    for (int i = 0; i < 20; i++)
        edges[i] = (test_edge){0, i + 1};
    pb_graph *g = test_graph(21, edges, 20);
    int order[21];
    pb_error err;
    assert_int_equal(pb_traverse_topo(g, order, &err), PB_OK);
    sage_samples s[3];
    const uint64_t seeds[3] = {11, 11, 12};
    for (int i = 0; i < 3; i++) {
        pb_rng rng;
        pb_rng_seed(&rng, seeds[i]);
        assert_int_equal(sage_samples_draw(&s[i], g, order, 0.8, &rng, &err), PB_OK);
        assert_int_equal(s[i].start[1], 16);
    }
    assert_memory_equal(s[0].sample, s[1].sample, 16 * sizeof(int));
    assert_memory_not_equal(s[0].sample, s[2].sample, 16 * sizeof(int));
    for (int i = 0; i < 3; i++)
        sage_samples_free(&s[i]);
    graph_free(g);
}

/* ------------------------------------------------------------------ anchor sets */

/* Counts and sizes from m = int(ln n), copies = max(int(c m), 1), size_i = int(n / 2^(i+e)):
 * n = 100, c = 0.2, e = 4: ln 100 = 4.61 -> m = 4, int(0.8) = 0 -> 1 copy, 100/16, /32, /64,
 *   /128 -> 6, 3, 1, 0 (the spec's example);
 * n = 100, c = 0.5: int(2.0) = 2 copies -> 8 sets 6, 6, 3, 3, 1, 1, 0, 0;
 * n = 300: ln 300 = 5.70 -> m = 5, int(1.0) = 1 -> 18, 9, 4, 2, 1;
 * n = 500: ln 500 = 6.21 -> m = 6, int(1.2) = 1 -> 31, 15, 7, 3, 1, 0;
 * n = 20: ln 20 = 3.00 (2.996) -> m = 2 -> 1, 0;  n = 2: ln 2 = 0.69 -> m = 0, no sets. */
static void test_anchor_counts(void **state)
{
    (void)state;
    struct {
        int n;
        double c;
        int sets, m, copies;
        int sizes[8];
    } cases[] = {
        {100, 0.2, 4, 4, 1, {6, 3, 1, 0}},
        {100, 0.5, 8, 4, 2, {6, 6, 3, 3, 1, 1, 0, 0}},
        {300, 0.2, 5, 5, 1, {18, 9, 4, 2, 1}},
        {500, 0.2, 6, 6, 1, {31, 15, 7, 3, 1, 0}},
        {20, 0.2, 2, 2, 1, {1, 0}},
        {2, 0.2, 0, 0, 1, {0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int m, copies, n = cases[i].n;
        assert_int_equal(anchors_count(n, cases[i].c, &m, &copies), cases[i].sets);
        assert_int_equal(m, cases[i].m);
        assert_int_equal(copies, cases[i].copies);
        int *population = malloc((size_t)n * sizeof(int));
        for (int v = 0; v < n; v++)
            population[v] = n - 1 - v;
        pb_rng rng;
        pb_rng_seed(&rng, 3);
        anchors a;
        pb_error err;
        assert_int_equal(anchors_draw(&a, population, n, cases[i].c, 4, &rng, &err), PB_OK);
        assert_int_equal(a.n_sets, cases[i].sets);
        for (int s = 0; s < a.n_sets; s++) {
            assert_int_equal(a.start[s + 1] - a.start[s], cases[i].sizes[s]);
            for (int j = a.start[s]; j < a.start[s + 1]; j++) {
                assert_true(a.node[j] >= 0 && a.node[j] < n);
                for (int k = a.start[s]; k < j; k++)
                    assert_int_not_equal(a.node[k], a.node[j]);
            }
        }
        anchors_free(&a);
        free(population);
    }
    assert_int_equal(anchors_size(100, 0, 4), 6);
    assert_int_equal(anchors_size(100, 3, 4), 0);
    assert_int_equal(anchors_size(64, 2, 4), 1); /* 64 / 64 exactly */
}

static void test_anchor_seeded(void **state)
{
    (void)state;
    int population[300];
    for (int v = 0; v < 300; v++)
        population[v] = v;
    anchors a[3];
    const uint64_t seeds[3] = {5, 5, 6};
    pb_error err;
    for (int i = 0; i < 3; i++) {
        pb_rng rng;
        pb_rng_seed(&rng, seeds[i]);
        assert_int_equal(anchors_draw(&a[i], population, 300, 0.2, 4, &rng, &err), PB_OK);
    }
    size_t bytes = (size_t)a[0].start[a[0].n_sets] * sizeof(int);
    assert_memory_equal(a[0].node, a[1].node, bytes);
    assert_memory_not_equal(a[0].node, a[2].node, bytes);
    for (int i = 0; i < 3; i++)
        anchors_free(&a[i]);
}

/* Hop distances on the chain with its shortcut 0 -> 5, along the edges' direction. */
static void test_hop_distances(void **state)
{
    (void)state;
    pb_graph *g = test_graph(CHAIN_N, chain_edges, CHAIN_M);
    int dist[CHAIN_N], queue[CHAIN_N];
    struct {
        int src, cutoff, reached;
        int want[CHAIN_N];
    } cases[] = {
        /* from 0: 1..4 along the chain, 5 through the shortcut, 6..8 after it */
        {0, 6, 9, {0, 1, 2, 3, 4, 1, 2, 3, 4}},
        {0, 3, 7, {0, 1, 2, 3, -1, 1, 2, 3, -1}},
        /* from 1: the shortcut is behind it; 8 is 7 hops away, beyond the cutoff */
        {1, 6, 7, {-1, 0, 1, 2, 3, 4, 5, 6, -1}},
        {8, 6, 1, {-1, -1, -1, -1, -1, -1, -1, -1, 0}},
        {4, 1, 2, {-1, -1, -1, -1, 0, 1, -1, -1, -1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(anchors_distances(g, cases[i].src, cases[i].cutoff, dist, queue),
                         cases[i].reached);
        assert_memory_equal(dist, cases[i].want, sizeof dist);
    }
    graph_free(g);
}

/* Sets (in draw order) {7, 3, 2}, {0}, {}, {8, 6} on the chain, cutoff 6. */
static const int weight_set_start[] = {0, 3, 4, 4, 6};
static int weight_set_node[] = {7, 3, 2, 0, 8, 6};

static void test_expect_row(const anchors_weights *w, int v, int n, const int *index,
                            const double *weight)
{
    assert_int_equal(w->start[v + 1] - w->start[v], n);
    for (int k = 0; k < n; k++) {
        assert_int_equal(w->index[w->start[v] + k], index[k]);
        if (fabs(w->weight[w->start[v] + k] - weight[k]) > 1e-7)
            fail_msg("row %d entry %d: weight %.9g, expected %.9g", v, k,
                     (double)w->weight[w->start[v] + k], weight[k]);
    }
}

static void test_anchor_weights(void **state)
{
    (void)state;
    pb_graph *g = test_graph(CHAIN_N, chain_edges, CHAIN_M);
    anchors a = {4, (int *)weight_set_start, weight_set_node};
    anchors_weights w;
    pb_error err;
    assert_int_equal(anchors_weights_build(&w, g, &a, 6, ANCHORS_MAX, &err), PB_OK);
    /* Node 1 (distances 2:1, 3:2, 6:5, 7:6; 0 and 8 unreachable): set 1 -> 7 (6 hops, 1/7),
     * set 2 -> none, set 3 -> none, set 4 -> 6 (1/6). */
    test_expect_row(&w, 1, 3, (int[]){1, 7, 6}, (double[]){1.0 / 7 + 1.0 / 6, 1.0 / 7, 1.0 / 6});
    /* Node 0 (distances 7:3, 3:3, 2:2, 8:4, 6:2): set 1 ties 7 and 3 at 3 hops, the first (7)
     * wins, 1/4; set 2 holds only 0 itself: none; set 4 -> 8, 1/5. */
    test_expect_row(&w, 0, 3, (int[]){0, 7, 8}, (double[]){1.0 / 4 + 1.0 / 5, 1.0 / 4, 1.0 / 5});
    /* Node 8 is a sink: no anchor reachable but itself, which max excludes. */
    test_expect_row(&w, 8, 1, (int[]){8}, (double[]){0});
    anchors_weights_free(&w);

    assert_int_equal(anchors_weights_build(&w, g, &a, 6, ANCHORS_MEAN, &err), PB_OK);
    /* Node 1, mean: set 1 (size 3): 7 -> 1/7/3, 3 -> 1/3/3, 2 -> 1/2/3; set 2 ({0}, size 1):
     * unreachable, nothing; set 4 (size 2): 8 unreachable, 6 -> 1/6/2. */
    double w7 = 1.0 / 21, w3 = 1.0 / 9, w2 = 1.0 / 6, w6 = 1.0 / 12;
    test_expect_row(&w, 1, 5, (int[]){1, 7, 3, 2, 6},
                    (double[]){w7 + w3 + w2 + w6, w7, w3, w2, w6});
    /* Node 0, mean: set 1: 7 -> 1/4/3, 3 -> 1/4/3, 2 -> 1/3/3; set 2: 0 itself at distance 0,
     * 1/1/1; set 4: 8 -> 1/5/2, 6 -> 1/3/2. */
    test_expect_row(&w, 0, 7, (int[]){0, 7, 3, 2, 0, 8, 6},
                    (double[]){1.0 / 12 + 1.0 / 12 + 1.0 / 9 + 1 + 1.0 / 10 + 1.0 / 6, 1.0 / 12,
                               1.0 / 12, 1.0 / 9, 1, 1.0 / 10, 1.0 / 6});
    anchors_weights_free(&w);
    graph_free(g);
}

/* ------------------------------------------------------------------ the combine op */

static void test_expect_values(const pb_nn_tensor *y, int rows, int cols, const double *want,
                               double tol)
{
    assert_non_null(y);
    assert_int_equal(y->rows, rows);
    assert_int_equal(y->cols, cols);
    for (int k = 0; k < rows * cols; k++)
        if (fabs(y->data[k] - want[k]) > tol)
            fail_msg("entry %d: got %.9g, expected %.9g", k, (double)y->data[k], want[k]);
}

/* Samples of n nodes of which those with has[v] = 1 have one (pos as sage_samples_draw sets
 * it); only has and pos matter to combine and expand. */
typedef struct test_samples {
    sage_samples s;
    unsigned char has[8];
    int pos[9];
} test_samples;

static void test_samples_init(test_samples *ts, int n, const unsigned char *has)
{
    memset(ts, 0, sizeof *ts);
    ts->s.n = n;
    ts->s.has = ts->has;
    ts->s.pos = ts->pos;
    for (int v = 0; v < n; v++) {
        ts->has[v] = has[v];
        ts->pos[v + 1] = ts->pos[v] + 1 + has[v];
    }
}

static void test_combine_values(void **state)
{
    (void)state;
    pb_nn_tape *t = pb_nn_tape_new();
    test_samples one, two;
    test_samples_init(&one, 1, (const unsigned char[]){1});
    test_samples_init(&two, 2, (const unsigned char[]){1, 0});
    /* r = 1, d = 3: [a^T | x^T] = [[1,4],[2,5],[3,6]] read row-major: 1 4 2 / 5 3 6. */
    pb_nn_tensor *a = pb_nn_constant(t, 1, 3, (float[]){1, 2, 3});
    pb_nn_tensor *x = pb_nn_constant(t, 1, 3, (float[]){4, 5, 6});
    test_expect_values(sage_combine(t, a, x, 1, &one.s, 1), 2, 3, (double[]){1, 4, 2, 5, 3, 6}, 0);
    /* r = 2, d = 2: rows of a 11 12 / 21 22, of x 31 32 / 41 42; [a^T | x^T] =
     * [[11,21,31,41],[12,22,32,42]] read as 4 x 2. */
    a = pb_nn_constant(t, 2, 2, (float[]){11, 12, 21, 22});
    x = pb_nn_constant(t, 2, 2, (float[]){31, 32, 41, 42});
    test_expect_values(sage_combine(t, a, x, 2, &one.s, 1), 4, 2,
                       (double[]){11, 21, 31, 41, 12, 22, 32, 42}, 0);
    /* Two nodes, the second without samples (its x row alone), in 2 batch blocks, d = 1:
     * block 1 gives a0 x0 x1 = 1 5 6, block 2 a2 x2 x3 = 3 7 8. */
    a = pb_nn_constant(t, 4, 1, (float[]){1, 2, 3, 4});
    x = pb_nn_constant(t, 4, 1, (float[]){5, 6, 7, 8});
    pb_nn_tensor *y = sage_combine(t, a, x, 1, &two.s, 2);
    test_expect_values(y, 6, 1, (double[]){1, 5, 6, 3, 7, 8}, 0);
    /* Expanding those rows without dropout: node 2's row goes after one zero row. */
    pb_rng rng[2];
    test_expect_values(sage_expand(t, y, 1, 0, &two.s, 2, 0.0f, rng), 8, 1,
                       (double[]){1, 5, 0, 6, 3, 7, 0, 8}, 0);
    pb_error err;
    assert_int_equal(pb_nn_tape_status(t, &err), PB_OK);
    pb_nn_tape_free(t);
}

/* Dropout in expand: every entry is 0 or y / (1 - rate), the padding stays 0, about `rate` of
 * the entries are dropped (20000 entries at rate 0.7: 14000 expected, standard deviation 65),
 * and equal generator seeds give equal factors. */
static void test_expand_dropout(void **state)
{
    (void)state;
    enum { ROWS = 2000, D = 10 };
    test_samples two;
    test_samples_init(&two, 2, (const unsigned char[]){1, 0});
    int r = ROWS / 3; /* node 1: 2r rows, node 2: r rows */
    pb_nn_tape *t = pb_nn_tape_new();
    float *v = malloc((size_t)3 * r * D * sizeof *v);
    for (int k = 0; k < 3 * r * D; k++)
        v[k] = 1.0f + (float)k;
    pb_nn_tensor *y = pb_nn_constant(t, 3 * r, D, v);
    pb_rng rng[2];
    pb_rng_seed(&rng[0], 5);
    pb_nn_tensor *o1 = sage_expand(t, y, r, 0, &two.s, 1, 0.7f, rng);
    pb_rng_seed(&rng[0], 5);
    pb_nn_tensor *o2 = sage_expand(t, y, r, 0, &two.s, 1, 0.7f, rng);
    assert_non_null(o1);
    assert_int_equal(o1->rows, 4 * r);
    assert_memory_equal(o1->data, o2->data, (size_t)4 * r * D * sizeof(float));
    int dropped = 0;
    float scale = 1.0f / (1.0f - 0.7f);
    for (int row = 0; row < 4 * r; row++)
        for (int c = 0; c < D; c++) {
            float got = o1->data[row * D + c];
            if (row >= 2 * r && row < 3 * r) {
                assert_true(got == 0.0f); /* node 2's padding */
                continue;
            }
            int src = row < 2 * r ? row : row - r;
            float want = v[src * D + c] * scale;
            assert_true(got == 0.0f || got == want);
            dropped += got == 0.0f;
        }
    if (abs(dropped - 14000) > 4 * 65)
        fail_msg("%d of 20000 entries dropped at rate 0.7", dropped);
    free(v);
    pb_nn_tape_free(t);
}

/* Finite-difference check: the loss sum(r .* y) for fixed random r, perturbing every value of
 * the parameter set p; build() records y on a tape. */
typedef pb_nn_tensor *(*fd_build)(pb_nn_tape *t, pb_nn_params *p, void *ctx);

static double fd_loss(pb_nn_tape *t, pb_nn_params *p, fd_build build, void *ctx, const float *r)
{
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *y = build(t, p, ctx);
    assert_non_null(y);
    double l = 0;
    for (size_t k = 0; k < (size_t)y->rows * (size_t)y->cols; k++)
        l += (double)r[k] * y->data[k];
    return l;
}

static double fd_numeric(pb_nn_tape *t, pb_nn_params *p, fd_build build, void *ctx, const float *r,
                         size_t k, double h)
{
    float *v = pb_nn_params_values(p), keep = v[k];
    v[k] = (float)(keep + h);
    double hp = (double)v[k] - keep, lp = fd_loss(t, p, build, ctx, r);
    v[k] = (float)(keep - h);
    double hm = keep - (double)v[k], lm = fd_loss(t, p, build, ctx, r);
    v[k] = keep;
    return (lp - lm) / (hp + hm);
}

/* Every value must match with one of the steps h, h/3, h/10, h/30: a ReLU or max kink can sit
 * inside a step (the whole passes have many: max over samples, ReLU after every hidden layer),
 * while a wrong gradient fails at all of them. */
static void fd_check(pb_nn_params *p, fd_build build, void *ctx, double h, double atol, double rtol)
{
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tape_reset(t, 1);
    pb_nn_tensor *y = build(t, p, ctx);
    assert_non_null(y);
    size_t ny = (size_t)y->rows * (size_t)y->cols, n = pb_nn_params_size(p);
    float *r = malloc(ny * sizeof *r), *ana = malloc(n * sizeof *ana);
    pb_rng rng;
    pb_rng_seed(&rng, 77);
    for (size_t k = 0; k < ny; k++)
        r[k] = (float)(2 * pb_rng_uniform(&rng) - 1);
    pb_nn_params_zero_grad(p);
    pb_error err;
    if (pb_nn_backward(t, y, r, &err) != PB_OK)
        fail_msg("backward: %s", err.msg);
    memcpy(ana, pb_nn_params_grads(p), n * sizeof *ana);
    const double steps[4] = {h, h / 3, h / 10, h / 30};
    for (size_t k = 0; k < n; k++) {
        double num[4];
        int ok = 0;
        for (int i = 0; i < 4 && !ok; i++) {
            num[i] = fd_numeric(t, p, build, ctx, r, k, steps[i]);
            ok = fabs(num[i] - ana[k]) <= atol + rtol * fabs(ana[k]);
        }
        if (!ok)
            fail_msg("value %zu: analytic gradient %.6g, numeric %.6g, %.6g, %.6g, %.6g (h = %g "
                     "down to %g)",
                     k, (double)ana[k], num[0], num[1], num[2], num[3], steps[0], steps[3]);
    }
    free(r);
    free(ana);
    pb_nn_tape_free(t);
}

typedef struct level_case {
    int r, batch;
    const sage_samples *s;
    float rate; /* expand */
    int skip;   /* expand */
} level_case;

static pb_nn_tensor *combine_build(pb_nn_tape *t, pb_nn_params *p, void *ctx)
{
    const level_case *c = ctx;
    return sage_combine(t, pb_nn_param(t, p, 0), pb_nn_param(t, p, 1), c->r, c->s, c->batch);
}

/* Expand with generators seeded afresh at every build, so the dropout factors stay fixed. */
static pb_nn_tensor *expand_build(pb_nn_tape *t, pb_nn_params *p, void *ctx)
{
    const level_case *c = ctx;
    pb_rng rng[4];
    for (int b = 0; b < c->batch; b++)
        pb_rng_seed(&rng[b], 40 + (uint64_t)b);
    return sage_expand(t, pb_nn_param(t, p, 0), c->r, c->skip, c->s, c->batch, c->rate, rng);
}

static void test_combine_expand_gradient(void **state)
{
    (void)state;
    test_samples ts;
    test_samples_init(&ts, 3, (const unsigned char[]){1, 0, 1});
    for (int r = 1; r <= 4; r *= 2) {
        level_case c = {r, 2, &ts.s, 0.4f, 0};
        int rows = 3 * c.batch * r, d = 3;
        pb_nn_params *p = pb_nn_params_new();
        pb_rng rng;
        pb_rng_seed(&rng, 100 + (uint64_t)r);
        pb_error err;
        assert_int_equal(pb_nn_params_add(p, "a", rows, d, PB_NN_INIT_GLOROT, &rng, &err), 0);
        assert_int_equal(pb_nn_params_add(p, "x", rows, d, PB_NN_INIT_GLOROT, &rng, &err), 1);
        /* Both ops are linear: the central difference is exact up to float rounding. */
        fd_check(p, combine_build, &c, 1e-2, 1e-4, 1e-3);
        pb_nn_params_free(p);
        p = pb_nn_params_new();
        /* y as combine lays it out: r * pos[n] = 5r rows per batch block. */
        assert_int_equal(
            pb_nn_params_add(p, "y", c.batch * r * ts.pos[3], d, PB_NN_INIT_GLOROT, &rng, &err), 0);
        fd_check(p, expand_build, &c, 1e-2, 1e-4, 1e-3);
        pb_nn_params_free(p);
        /* With the zero rows of node 1 (no samples) left out: r - skip rows for it, plus the
         * shared last row. */
        c.skip = r / 2;
        p = pb_nn_params_new();
        int compact = c.batch * (2 * r + (r - c.skip) + 2 * r) + (c.skip > 0);
        assert_int_equal(pb_nn_params_add(p, "y", compact, d, PB_NN_INIT_GLOROT, &rng, &err), 0);
        fd_check(p, expand_build, &c, 1e-2, 1e-4, 1e-3);
        pb_nn_params_free(p);
    }
}

/* Expand with skip: nodes 0 and 2 with samples, node 1 without; r = 2, skip = 1, d = 1.  The
 * compact y has rows 1..4 (node 0), 5 (node 1's second row), 6..9 (node 2), and 10, F_i of a
 * zero row.  Without dropout node 1's block is 0 0 10 5.  With dropout the factors are those of
 * the uncompacted y 1 2 3 4 10 5 6 7 8 9 expanded with skip 0 from the same seed. */
static void test_expand_skip(void **state)
{
    (void)state;
    test_samples ts;
    test_samples_init(&ts, 3, (const unsigned char[]){1, 0, 1});
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *y = pb_nn_constant(t, 10, 1, (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
    pb_nn_tensor *full = pb_nn_constant(t, 10, 1, (float[]){1, 2, 3, 4, 10, 5, 6, 7, 8, 9});
    pb_rng rng[1];
    test_expect_values(sage_expand(t, y, 2, 1, &ts.s, 1, 0.0f, rng), 12, 1,
                       (double[]){1, 2, 3, 4, 0, 0, 10, 5, 6, 7, 8, 9}, 0);
    pb_rng_seed(&rng[0], 9);
    pb_nn_tensor *o1 = sage_expand(t, y, 2, 1, &ts.s, 1, 0.5f, rng);
    pb_rng_seed(&rng[0], 9);
    pb_nn_tensor *o2 = sage_expand(t, full, 2, 0, &ts.s, 1, 0.5f, rng);
    assert_non_null(o1);
    assert_non_null(o2);
    assert_memory_equal(o1->data, o2->data, 12 * sizeof(float));
    /* A compact y of the wrong height is refused. */
    pb_nn_tensor *bad = pb_nn_constant(t, 9, 1, NULL);
    assert_null(sage_expand(t, bad, 2, 1, &ts.s, 1, 0.0f, rng));
    pb_nn_tape_free(t);
}

/* Three nodes: 0 samples {1, 2}, 1 none, 2 samples {1}. */
typedef struct test_gather_samples {
    sage_samples s;
    int start[4], sample[3], pos[4];
    unsigned char has[3];
} test_gather_samples;

static void test_gather_samples_init(test_gather_samples *g)
{
    memset(g, 0, sizeof *g);
    memcpy(g->start, (const int[]){0, 2, 2, 3}, sizeof g->start);
    memcpy(g->sample, (const int[]){1, 2, 1}, sizeof g->sample);
    memcpy(g->has, (const unsigned char[]){1, 0, 1}, sizeof g->has);
    memcpy(g->pos, (const int[]){0, 2, 3, 5}, sizeof g->pos);
    g->s = (sage_samples){3, g->start, g->sample, g->has, g->pos};
}

/* x rows 0: (1, 5), 1: (3, 2), 2: (-1, 4); node 0 aggregates rows 1 and 2, node 2 row 1.  With
 * r = 1 a node with samples gives rows (a0, x0), (a1, x1), one without its own row. */
static void test_gather_values(void **state)
{
    (void)state;
    test_gather_samples g;
    test_gather_samples_init(&g);
    const float xv[6] = {1, 5, 3, 2, -1, 4};
    /* Node 0's aggregate of (3, 2) and (-1, 4) per kind: sum (2, 6), mean (1, 3), max (3, 4),
     * min (-1, 2); node 2's is (3, 2) for every kind. */
    const int kinds[4] = {PB_NN_AGG_SUM, PB_NN_AGG_MEAN, PB_NN_AGG_MAX, PB_NN_AGG_MIN};
    const double a0[4][2] = {{2, 6}, {1, 3}, {3, 4}, {-1, 2}};
    pb_nn_tape *t = pb_nn_tape_new();
    for (int i = 0; i < 4; i++) {
        pb_nn_tape_reset(t, 0);
        pb_nn_tensor *x = pb_nn_constant(t, 3, 2, xv);
        double want[10] = {a0[i][0], 1, a0[i][1], 5, 3, 2, 3, -1, 2, 4};
        test_expect_values(sage_gather_combine(t, x, 1, 0, &g.s, 1, kinds[i]), 5, 2, want, 0);
    }
    /* r = 2, two batch blocks: block b's nodes read block b's rows only.  Node v's rows are
     * (10b + 2v, 10b + 2v + 1) in channel 0 and their negatives in channel 1 (d = 2); with max,
     * node 0 of block b aggregates rows of node 2 (larger in channel 0, node 1 in channel 1). */
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *x = pb_nn_constant(t, 12, 2, NULL);
    for (int row = 0; row < 12; row++) {
        int b = row / 6, v = row % 6 / 2, j = row % 2;
        x->data[2 * row] = (float)(10 * b + 2 * v + j);
        x->data[2 * row + 1] = -x->data[2 * row];
    }
    /* Node 0 (block b, base 10b): a rows (4, -2) and (5, -3); x rows (0, 0) and (1, -1).  The
     * d x 2r matrix [a^T | x^T] is ((4, 5, 0, 1), (-2, -3, 0, -1)), read as 4 rows of 2. */
    double want[40];
    for (int b = 0; b < 2; b++) {
        double o = 10.0 * b;
        const double blk[20] = {
            4 + o, 5 + o,  0 + o, 1 + o,  -2 - o, -3 - o, 0 - o,  -1 - o, /* node 0 */
            2 + o, -2 - o, 3 + o, -3 - o,                                 /* node 1 */
            2 + o, 3 + o,  4 + o, 5 + o,  -2 - o, -3 - o, -4 - o, -5 - o  /* node 2 */
        };
        memcpy(want + 20 * b, blk, sizeof blk);
    }
    test_expect_values(sage_gather_combine(t, x, 2, 0, &g.s, 2, PB_NN_AGG_MAX), 20, 2, want, 0);
    /* skip = 1: node 1 (no samples) keeps its second row only, and one zero row ends the
     * output: blocks of 9 rows (node 0: 4, node 1: 1, node 2: 4), 19 rows in all. */
    double want_skip[38];
    for (int b = 0; b < 2; b++) {
        memcpy(want_skip + 18 * b, want + 20 * b, 8 * sizeof(double));
        memcpy(want_skip + 18 * b + 8, want + 20 * b + 10, 2 * sizeof(double));
        memcpy(want_skip + 18 * b + 10, want + 20 * b + 12, 8 * sizeof(double));
    }
    want_skip[36] = want_skip[37] = 0;
    test_expect_values(sage_gather_combine(t, x, 2, 1, &g.s, 2, PB_NN_AGG_MAX), 19, 2, want_skip,
                       0);
    pb_nn_tape_free(t);
}

typedef struct gather_case {
    int r, skip, batch, kind;
    const sage_samples *s;
} gather_case;

static pb_nn_tensor *gather_build(pb_nn_tape *t, pb_nn_params *p, void *ctx)
{
    const gather_case *c = ctx;
    return sage_gather_combine(t, pb_nn_param(t, p, 0), c->r, c->skip, c->s, c->batch, c->kind);
}

static void test_gather_gradient(void **state)
{
    (void)state;
    test_gather_samples g;
    test_gather_samples_init(&g);
    const int kinds[4] = {PB_NN_AGG_SUM, PB_NN_AGG_MEAN, PB_NN_AGG_MAX, PB_NN_AGG_MIN};
    for (int i = 0; i < 4; i++)
        for (int r = 1; r <= 4; r *= 2) {
            gather_case c = {r, r / 2, 2, kinds[i], &g.s};
            pb_nn_params *p = pb_nn_params_new();
            pb_rng rng;
            pb_rng_seed(&rng, 300 + (uint64_t)(4 * i + r));
            pb_error err;
            assert_int_equal(
                pb_nn_params_add(p, "x", 3 * c.batch * r, 3, PB_NN_INIT_GLOROT, &rng, &err), 0);
            fd_check(p, gather_build, &c, 1e-2, 1e-4, 1e-3);
            pb_nn_params_free(p);
        }
}

/* ------------------------------------------------------------------ the plugins */

typedef struct test_log {
    char last[512];
    int count;
} test_log;

static void test_host_log(void *ctx, int level, const char *msg)
{
    (void)level;
    test_log *l = ctx;
    snprintf(l->last, sizeof l->last, "%s", msg);
    l->count++;
}

/* A loaded embedding plugin and one instance with its parameters. */
typedef struct test_emb {
    void *so;
    const pb_plugin_desc *desc;
    const pb_embedding_ops *ops;
    void *inst;
    pb_nn_params *params;
    int dim;
    test_log log;
    pb_host host;
} test_emb;

static const pb_plugin_desc *test_load(const char *name, void **so)
{
    const char *build = getenv("PB_BUILD");
    if (!build)
        fail_msg("PB_BUILD is not set (run through ctest)");
    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/embedding-%s.so", build, name);
    *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*so)
        fail_msg("dlopen %s: %s", path, dlerror());
    const pb_plugin_desc *d = dlsym(*so, PB_DESCRIPTOR_SYMBOL_NAME);
    assert_non_null(d);
    assert_int_equal(d->kind, PB_KIND_EMBEDDING);
    return d;
}

/* Creates plugin `name` with options "key=value" pairs (kv, n) and create seed `seed`, and
 * registers its parameters for feature width f.  Returns PB_ERR (message in err) when
 * init_params refuses. */
static int test_emb_open(test_emb *e, const char *name, const option_kv *kv, int n, uint64_t seed,
                         int f, pb_error *err)
{
    memset(e, 0, sizeof *e);
    e->desc = test_load(name, &e->so);
    e->ops = e->desc->ops;
    option_set opts;
    if (options_resolve(e->desc, kv, n, "test", &opts, err) != PB_OK)
        fail_msg("options: %s", err->msg);
    e->host = (pb_host){sizeof e->host, &e->log, NULL, NULL, test_host_log, NULL};
    pb_create_args a = options_create_args(&opts, &e->host, seed);
    assert_int_equal(e->ops->create(&a, &e->inst, err), PB_OK);
    option_set_free(&opts);
    e->params = pb_nn_params_new();
    return e->ops->init_params(e->inst, e->params, f, &e->dim, err);
}

static void test_emb_close(test_emb *e)
{
    e->ops->destroy(e->inst);
    pb_nn_params_free(e->params);
    dlclose(e->so);
}

/* Features of `batch` blocks of n nodes x f, uniform in [0, 1). */
static float *test_features(int n, int f, int batch, uint64_t seed)
{
    float *x = malloc((size_t)n * f * batch * sizeof *x);
    pb_rng rng;
    pb_rng_seed(&rng, seed);
    for (int k = 0; k < n * f * batch; k++)
        x[k] = (float)pb_rng_uniform(&rng);
    return x;
}

/* forward_batch on the prepared graph; the output copied into a malloc'd array. */
static float *test_run(test_emb *e, void *prep, const float *x, int n, int f, int batch,
                       const uint64_t *seeds, int *rows, int *cols)
{
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *X = pb_nn_constant(t, n * batch, f, x), *y;
    pb_error err;
    if (e->ops->forward_batch(e->inst, prep, t, X, batch, seeds, &y, &err) != PB_OK)
        fail_msg("forward_batch: %s", err.msg);
    *rows = y->rows;
    *cols = y->cols;
    float *out = malloc((size_t)y->rows * y->cols * sizeof *out);
    memcpy(out, y->data, (size_t)y->rows * y->cols * sizeof *out);
    for (int k = 0; k < y->rows * y->cols; k++)
        if (!isfinite(out[k]))
            fail_msg("output entry %d is not finite", k);
    pb_nn_tape_free(t);
    return out;
}

/* Sets an FNN(d, [d], d) named prefix to the identity on non-negative inputs: W = I, b = 0. */
static void test_identity_mlp(pb_nn_params *p, const char *prefix, int d)
{
    for (int l = 0; l < 2; l++) {
        char name[128];
        snprintf(name, sizeof name, "%s/w%d", prefix, l);
        int id = pb_nn_params_find(p, name);
        assert_true(id >= 0);
        float *w = pb_nn_params_values(p) + pb_nn_params_offset(p, id);
        for (int i = 0; i < d * d; i++)
            w[i] = i % (d + 1) == 0 ? 1.0f : 0.0f;
        snprintf(name, sizeof name, "%s/b%d", prefix, l);
        id = pb_nn_params_find(p, name);
        assert_true(id >= 0);
        memset(pb_nn_params_values(p) + pb_nn_params_offset(p, id), 0, (size_t)d * sizeof(float));
    }
}

/* H = 0, d = 2, no dropout, every network the identity on the (positive) features, graph
 * 0 -> 1 sampled with ratio 1: node 0's block is [a^T | x^T] read row-major with a = x1 = (3, 4),
 * x0 = (1, 2): rows (3, 1), (4, 2), norm sqrt(30); node 1 has no successor: rows (0, 0), (3, 4),
 * norm 5. */
static void test_graphsage_by_hand(void **state)
{
    (void)state;
    const test_edge e01[] = {{0, 1}};
    pb_graph *g = test_graph(2, e01, 1);
    const float x[4] = {1, 2, 3, 4};
    const double s30 = sqrt(30.0);
    const double want_graph[8] = {3 / s30, 1 / s30, 4 / s30, 2 / s30, 0, 0, 0.6, 0.8};
    const double want_node[4] = {3.5 / s30, 1.5 / s30, 0.3, 0.4};
    for (int output = 0; output < 2; output++) {
        option_kv kv[] = {{"hops", "0"},
                          {"sample_ratio", "1"},
                          {"dropout", "0"},
                          {"output", output ? "graph" : "node"}};
        test_emb e;
        pb_error err;
        assert_int_equal(test_emb_open(&e, "graphsage", kv, 4, 1, 2, &err), PB_OK);
        assert_int_equal(e.dim, output ? 4 : 2);
        test_identity_mlp(e.params, "graphsage/self", 2);
        test_identity_mlp(e.params, "graphsage/level0", 2);
        void *prep;
        assert_int_equal(e.ops->prepare(e.inst, g, &prep, &err), PB_OK);
        int rows, cols;
        uint64_t seed = 9;
        float *y = test_run(&e, prep, x, 2, 2, 1, &seed, &rows, &cols);
        pb_nn_tensor view = {rows, cols, y, NULL};
        test_expect_values(&view, 2, output ? 4 : 2, output ? want_graph : want_node, 1e-6);
        free(y);
        e.ops->release(e.inst, prep);
        test_emb_close(&e);
    }
    graph_free(g);
}

/* P-GNN on the chain 0 -> 1 -> 2 with H = 0, d = 2, ratio 1, no dropout, identity networks,
 * anchor_exponent 0: m = int(ln 3) = 1, one set of int(3 / 1) = 3 nodes (all of them, so its
 * order does not matter: no ties below).  Blocks: node 0 rows (3,1), (4,2) / sqrt(30); node 1
 * [x2^T | x1^T] = rows (5,3), (6,4) / sqrt(86); node 2 rows (0,0), (5,6) / sqrt(61).  The pool
 * window floor(2/2)+1 = 2 leaves R_p = 1 row, the block's mean P_v.  Max: node 0's farthest
 * anchor is 2 (2 hops, w = 1/3), node 1's is 2 (w = 1/2), node 2 sees none (zero message).
 * The mean over the 2 rows of the one message: w (P_v + P_k) / 2. */
static void test_pgnn_by_hand(void **state)
{
    (void)state;
    const test_edge chain3[] = {{0, 1}, {1, 2}};
    pb_graph *g = test_graph(3, chain3, 2);
    const float x[6] = {1, 2, 3, 4, 5, 6};
    double p0[2] = {3.5 / sqrt(30.0), 1.5 / sqrt(30.0)};
    double p1[2] = {5.5 / sqrt(86.0), 3.5 / sqrt(86.0)};
    double p2[2] = {2.5 / sqrt(61.0), 3.0 / sqrt(61.0)};
    const double want[6] = {
        (p0[0] + p2[0]) / 6, (p0[1] + p2[1]) / 6, (p1[0] + p2[0]) / 4, (p1[1] + p2[1]) / 4, 0, 0};
    option_kv kv[] = {
        {"hops", "0"}, {"sample_ratio", "1"}, {"dropout", "0"}, {"anchor_exponent", "0"}};
    test_emb e;
    pb_error err;
    assert_int_equal(test_emb_open(&e, "pgnn", kv, 4, 1, 2, &err), PB_OK);
    assert_int_equal(e.dim, 2);
    test_identity_mlp(e.params, "pgnn/self", 2);
    test_identity_mlp(e.params, "pgnn/level0", 2);
    test_identity_mlp(e.params, "pgnn/pos", 2);
    void *prep;
    assert_int_equal(e.ops->prepare(e.inst, g, &prep, &err), PB_OK);
    assert_non_null(strstr(e.log.last, "1 anchor sets of sizes [3]"));
    int rows, cols;
    uint64_t seed = 4;
    float *y = test_run(&e, prep, x, 3, 2, 1, &seed, &rows, &cols);
    pb_nn_tensor view = {rows, cols, y, NULL};
    test_expect_values(&view, 3, 2, want, 1e-6);
    free(y);
    e.ops->release(e.inst, prep);
    test_emb_close(&e);
    graph_free(g);
}

/* The plugin cases run by the generic tests below. */
typedef struct plugin_case {
    const char *name;
    option_kv kv[3];
    int n_kv;
    int width_factor; /* embedding width / feature width */
} plugin_case;

static const plugin_case plugin_cases[] = {
    {"graphsage", {{"output", "node"}}, 1, 1},
    {"graphsage", {{"output", "graph"}}, 1, 16}, /* 2^(3+1) rows per block */
    {"graphsage", {{"aggregation", "mean"}, {"single_layer", "true"}}, 2, 1},
    {"pgnn", {{"anchor_aggregation", "max"}}, 1, 1},
    {"pgnn", {{"anchor_aggregation", "mean"}, {"c", "0.6"}}, 2, 1},
};
#define N_PLUGIN_CASES (sizeof plugin_cases / sizeof plugin_cases[0])

/* A 40-node random DAG (edges i -> j, i < j, probability 0.15) so that anchor sets and samples
 * are not trivial: n = 40 gives m = int(ln 40) = 3 size classes. */
static pb_graph *test_random_dag(uint64_t seed)
{
    enum { N = 40 };
    test_edge edges[N * N];
    int m = 0;
    pb_rng rng;
    pb_rng_seed(&rng, seed);
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            if (pb_rng_uniform(&rng) < 0.15)
                edges[m++] = (test_edge){i, j};
    return test_graph(N, edges, m);
}

/* Shapes, parameter names, and the same seeds giving the same output in two instances. */
static void test_plugins_shapes_and_determinism(void **state)
{
    (void)state;
    pb_graph *g = test_random_dag(21);
    int n = g->n_nodes, f = 8; /* 5 + 3 devices */
    float *x = test_features(n, f, 1, 5);
    for (size_t c = 0; c < N_PLUGIN_CASES; c++) {
        const plugin_case *pc = &plugin_cases[c];
        test_emb e[2];
        float *y[2];
        pb_error err;
        for (int i = 0; i < 2; i++) {
            assert_int_equal(test_emb_open(&e[i], pc->name, pc->kv, pc->n_kv, 42, f, &err), PB_OK);
            assert_int_equal(e[i].dim, pc->width_factor * f);
            for (int id = 0; id < pb_nn_params_count(e[i].params); id++) {
                const char *pn = pb_nn_params_name(e[i].params, id);
                if (strncmp(pn, pc->name, strlen(pc->name)) != 0 || pn[strlen(pc->name)] != '/')
                    fail_msg("parameter '%s' is not under '%s/'", pn, pc->name);
            }
            void *prep;
            assert_int_equal(e[i].ops->prepare(e[i].inst, g, &prep, &err), PB_OK);
            assert_int_equal(e[i].log.count, 1);
            assert_non_null(strstr(e[i].log.last, "sample seed "));
            int rows, cols;
            uint64_t seed = 1234;
            y[i] = test_run(&e[i], prep, x, n, f, 1, &seed, &rows, &cols);
            assert_int_equal(rows, n);
            assert_int_equal(cols, e[i].dim);
            e[i].ops->release(e[i].inst, prep);
        }
        assert_memory_equal(y[0], y[1], (size_t)n * e[0].dim * sizeof(float));
        for (int i = 0; i < 2; i++) {
            free(y[i]);
            test_emb_close(&e[i]);
        }
    }
    free(x);
    graph_free(g);
}

/* Largest absolute difference of two n-float arrays. */
static double test_max_diff(const float *a, const float *b, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs((double)a[i] - (double)b[i]) > worst)
            worst = fabs((double)a[i] - (double)b[i]);
    return worst;
}

/* A batch runs the same arithmetic as its blocks alone, but BLAS may round a product's rows
 * differently with the number of rows (OpenBLAS 0.3.21's Haswell kernels do: a row in the 4-row
 * tail of a 40-row product lies in a full 16-row panel of a 120-row one).  Every output row is
 * L2-normalised, so entries lie in [-1, 1]: the bound below is about 170 units in the last place
 * of 1.0 (the differences measured with those kernels stay below 3e-7), and a seed that changes
 * the dropout masks must move the output by a hundred times more. */
#define TEST_ROUNDING_BOUND 1e-5

/* One instance: equal seeds repeat a pass exactly, a different seed changes the dropout, and a
 * batch of blocks equals the blocks run alone up to float rounding. */
static void test_plugins_seeds_and_batches(void **state)
{
    (void)state;
    pb_graph *g = test_random_dag(22);
    int n = g->n_nodes, f = 8, batch = 3;
    float *x = test_features(n, f, batch, 6);
    const uint64_t seeds[3] = {7, 8, 7};
    for (size_t c = 0; c < N_PLUGIN_CASES; c++) {
        const plugin_case *pc = &plugin_cases[c];
        test_emb e;
        pb_error err;
        assert_int_equal(test_emb_open(&e, pc->name, pc->kv, pc->n_kv, 43, f, &err), PB_OK);
        void *prep;
        assert_int_equal(e.ops->prepare(e.inst, g, &prep, &err), PB_OK);
        int rows, cols, D = e.dim;
        size_t block = (size_t)n * D;
        float *all = test_run(&e, prep, x, n, f, batch, seeds, &rows, &cols);
        assert_int_equal(rows, n * batch);
        float *all_again = test_run(&e, prep, x, n, f, batch, seeds, &rows, &cols);
        assert_memory_equal(all_again, all, (size_t)batch * block * sizeof(float));
        free(all_again);
        for (int b = 0; b < batch; b++) {
            float *one =
                test_run(&e, prep, x + (size_t)b * n * f, n, f, 1, &seeds[b], &rows, &cols);
            float *one_again =
                test_run(&e, prep, x + (size_t)b * n * f, n, f, 1, &seeds[b], &rows, &cols);
            assert_memory_equal(one_again, one, block * sizeof(float));
            double diff = test_max_diff(one, all + b * block, block);
            if (diff > TEST_ROUNDING_BOUND)
                fail_msg("%s case %zu: block %d differs from its batch by %g", pc->name, c, b,
                         diff);
            free(one);
            free(one_again);
        }
        /* Block 0's features with seed 8 instead of 7: other dropout masks. */
        float *other = test_run(&e, prep, x, n, f, 1, &seeds[1], &rows, &cols);
        double moved = test_max_diff(other, all, block);
        if (moved < 1e2 * TEST_ROUNDING_BOUND)
            fail_msg("%s case %zu: another seed moved the output by only %g", pc->name, c, moved);
        free(other);
        free(all);
        e.ops->release(e.inst, prep);
        test_emb_close(&e);
    }
    free(x);
    graph_free(g);
}

/* The run-fixed draws follow the structure seed: with dropout off and the same weights (same
 * create seed), another sample_seed changes the output, and the logged seed given back as
 * sample_seed reproduces it. */
static void test_plugins_sample_seed(void **state)
{
    (void)state;
    pb_graph *g = test_random_dag(23);
    int n = g->n_nodes, f = 8;
    float *x = test_features(n, f, 1, 7);
    const char *names[2] = {"graphsage", "pgnn"};
    for (int c = 0; c < 2; c++) {
        test_emb e[3];
        float *y[3];
        char logged[32] = "";
        pb_error err;
        for (int i = 0; i < 3; i++) {
            option_kv kv[2] = {{"dropout", "0"},
                               {"sample_seed", i == 0   ? "0"
                                               : i == 1 ? logged
                                                        : "99"}};
            assert_int_equal(test_emb_open(&e[i], names[c], kv, 2, 77, f, &err), PB_OK);
            void *prep;
            assert_int_equal(e[i].ops->prepare(e[i].inst, g, &prep, &err), PB_OK);
            if (i == 0) {
                const char *s = strstr(e[i].log.last, "sample seed ");
                assert_non_null(s);
                snprintf(logged, sizeof logged, "%s", s + strlen("sample seed "));
            }
            int rows, cols;
            uint64_t seed = 1;
            y[i] = test_run(&e[i], prep, x, n, f, 1, &seed, &rows, &cols);
            e[i].ops->release(e[i].inst, prep);
        }
        size_t bytes = (size_t)n * e[0].dim * sizeof(float);
        assert_memory_equal(y[0], y[1], bytes);
        assert_memory_not_equal(y[0], y[2], bytes);
        for (int i = 0; i < 3; i++) {
            free(y[i]);
            test_emb_close(&e[i]);
        }
    }
    free(x);
    graph_free(g);
}

/* The node output is the mean of the graph output's block rows (same weights, samples and
 * dropout: equal create seeds and pass seeds). */
static void test_graphsage_node_is_pooled_graph(void **state)
{
    (void)state;
    pb_graph *g = test_random_dag(24);
    int n = g->n_nodes, f = 8, R = 16;
    float *x = test_features(n, f, 1, 8);
    float *y[2];
    for (int i = 0; i < 2; i++) {
        option_kv kv[1] = {{"output", i ? "graph" : "node"}};
        test_emb e;
        pb_error err;
        assert_int_equal(test_emb_open(&e, "graphsage", kv, 1, 5, f, &err), PB_OK);
        void *prep;
        assert_int_equal(e.ops->prepare(e.inst, g, &prep, &err), PB_OK);
        int rows, cols;
        uint64_t seed = 3;
        y[i] = test_run(&e, prep, x, n, f, 1, &seed, &rows, &cols);
        e.ops->release(e.inst, prep);
        test_emb_close(&e);
    }
    for (int v = 0; v < n; v++)
        for (int c = 0; c < f; c++) {
            double s = 0;
            for (int j = 0; j < R; j++)
                s += y[1][(size_t)v * R * f + (size_t)j * f + c];
            if (fabs(s / R - y[0][(size_t)v * f + c]) > 1e-6)
                fail_msg("node %d column %d: pooled %.9g, node output %.9g", v, c, s / R,
                         (double)y[0][(size_t)v * f + c]);
        }
    free(y[0]);
    free(y[1]);
    free(x);
    graph_free(g);
}

/* P-GNN against its definition computed literally from the GraphSAGE blocks: this test draws
 * the samples and anchor sets again from the logged seed, runs sage_forward with P-GNN's own
 * weights, pools each block with a window of floor(d/2)+1, stacks every anchor set's message
 * w [P_v ; P_k] and takes the mean over all rows, then F_pos. */
static void test_pgnn_literal(void **state)
{
    (void)state;
    pb_graph *g = test_random_dag(25);
    int n = g->n_nodes, f = 8, H = 3, R = 16, win = f / 2 + 1, Rp = R - win + 1;
    float *x = test_features(n, f, 1, 9);
    for (int agg = 0; agg < 2; agg++) {
        option_kv kv[2] = {{"anchor_aggregation", agg ? "mean" : "max"}, {"c", "0.7"}};
        test_emb e;
        pb_error err;
        assert_int_equal(test_emb_open(&e, "pgnn", kv, 2, 31, f, &err), PB_OK);
        void *prep;
        assert_int_equal(e.ops->prepare(e.inst, g, &prep, &err), PB_OK);
        int rows, cols;
        uint64_t seed = 17;
        float *y = test_run(&e, prep, x, n, f, 1, &seed, &rows, &cols);
        e.ops->release(e.inst, prep);

        /* The same draws, from the logged seed. */
        uint64_t structure = strtoull(strstr(e.log.last, "sample seed ") + 12, NULL, 10);
        int order[64];
        assert_int_equal(pb_traverse_topo(g, order, &err), PB_OK);
        pb_rng rng;
        pb_rng_seed(&rng, structure);
        sage_samples s;
        anchors a;
        assert_int_equal(sage_samples_draw(&s, g, order, 0.8, &rng, &err), PB_OK);
        assert_int_equal(anchors_draw(&a, order, n, 0.7, 4, &rng, &err), PB_OK);
        /* n = 40: m = int(ln 40) = 3, copies = int(0.7 * 3) = 2: 6 sets of 2, 2, 1, 1, 0, 0. */
        assert_int_equal(a.n_sets, 6);
        /* Z with P-GNN's weights: a model of the same names in a scratch set, values copied. */
        pb_nn_params *scratch = pb_nn_params_new();
        sage_model model;
        sage_config cfg = {H, 0.8, 0.7f, PB_NN_AGG_MAX, 0, 0, 1};
        assert_int_equal(sage_model_init(&model, &cfg, scratch, "pgnn", f, &rng, &err), PB_OK);
        for (int id = 0; id < pb_nn_params_count(scratch); id++) {
            int src = pb_nn_params_find(e.params, pb_nn_params_name(scratch, id));
            int r0, c0;
            assert_true(src >= 0);
            pb_nn_params_shape(scratch, id, &r0, &c0);
            memcpy(pb_nn_params_values(scratch) + pb_nn_params_offset(scratch, id),
                   pb_nn_params_values(e.params) + pb_nn_params_offset(e.params, src),
                   (size_t)r0 * c0 * sizeof(float));
        }
        pb_nn_tape *t = pb_nn_tape_new();
        pb_nn_tape_reset(t, 0);
        pb_nn_tensor *z;
        assert_int_equal(
            sage_forward(t, scratch, &model, &s, pb_nn_constant(t, n, f, x), 1, &seed, &z, &err),
            PB_OK);
        /* Pooled blocks P[v][r][c]. */
        double *P = calloc((size_t)n * Rp * f, sizeof *P);
        for (int v = 0; v < n; v++)
            for (int r = 0; r < Rp; r++)
                for (int c = 0; c < f; c++) {
                    double sum = 0;
                    for (int j = r; j < r + win; j++)
                        sum += z->data[(size_t)v * R * f + (size_t)j * f + c];
                    P[((size_t)v * Rp + r) * f + c] = sum / win;
                }
        int dist[64], queue[64];
        int pw0 = pb_nn_params_find(e.params, "pgnn/pos/w0"),
            pb0 = pb_nn_params_find(e.params, "pgnn/pos/b0");
        int pw1 = pb_nn_params_find(e.params, "pgnn/pos/w1"),
            pb1 = pb_nn_params_find(e.params, "pgnn/pos/b1");
        const float *W0 = pb_nn_params_values(e.params) + pb_nn_params_offset(e.params, pw0);
        const float *B0 = pb_nn_params_values(e.params) + pb_nn_params_offset(e.params, pb0);
        const float *W1 = pb_nn_params_values(e.params) + pb_nn_params_offset(e.params, pw1);
        const float *B1 = pb_nn_params_values(e.params) + pb_nn_params_offset(e.params, pb1);
        for (int v = 0; v < n; v++) {
            anchors_distances(g, v, 6, dist, queue);
            double sum[16] = {0};
            long long stacked = 0;
            for (int si = 0; si < a.n_sets; si++) {
                const int *set = a.node + a.start[si];
                int size = a.start[si + 1] - a.start[si];
                stacked += 2 * Rp; /* every set contributes one 2 R_p-row message */
                for (int j = 0; j < size; j++) {
                    int k = set[j];
                    double w;
                    if (agg == 0) {
                        /* max: only the farthest reachable anchor other than v, first on ties */
                        int best = -1;
                        for (int q = 0; q < size; q++)
                            if (set[q] != v && dist[set[q]] >= 0 &&
                                (best < 0 || dist[set[q]] > dist[best]))
                                best = set[q];
                        if (k != best)
                            continue;
                        w = 1.0 / (dist[k] + 1);
                    } else {
                        w = dist[k] >= 0 ? 1.0 / (dist[k] + 1) / size : 0;
                    }
                    for (int r = 0; r < Rp; r++)
                        for (int c = 0; c < f; c++)
                            sum[c] += w * (P[((size_t)v * Rp + r) * f + c] +
                                           P[((size_t)k * Rp + r) * f + c]);
                }
            }
            double mean[16], hid[16];
            for (int c = 0; c < f; c++)
                mean[c] = stacked ? sum[c] / (double)stacked : 0;
            for (int j = 0; j < f; j++) {
                double h = B0[j];
                for (int c = 0; c < f; c++)
                    h += mean[c] * W0[c * f + j];
                hid[j] = h > 0 ? h : 0;
            }
            for (int j = 0; j < f; j++) {
                double o = B1[j];
                for (int c = 0; c < f; c++)
                    o += hid[c] * W1[c * f + j];
                if (fabs(o - y[(size_t)v * f + j]) > 1e-5 + 1e-4 * fabs(o))
                    fail_msg("%s, node %d column %d: plugin %.9g, definition %.9g",
                             agg ? "mean" : "max", v, j, (double)y[(size_t)v * f + j], o);
            }
        }
        free(P);
        pb_nn_tape_free(t);
        pb_nn_params_free(scratch);
        sage_samples_free(&s);
        anchors_free(&a);
        free(y);
        test_emb_close(&e);
    }
    free(x);
    graph_free(g);
}

/* P-GNN's pooling needs 2^(H+1) >= floor(d/2)+1 rows: hops = 1 (4 rows) with d = 8 (window 5)
 * is refused, as the reference's VALID pooling fails there. */
static void test_pgnn_window_error(void **state)
{
    (void)state;
    option_kv kv[1] = {{"hops", "1"}};
    test_emb e;
    pb_error err = {{0}};
    assert_int_equal(test_emb_open(&e, "pgnn", kv, 1, 1, 8, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "pooling window"));
    test_emb_close(&e);
    assert_int_equal(test_emb_open(&e, "pgnn", kv, 1, 1, 6, &err), PB_OK); /* window 4 */
    test_emb_close(&e);
}

/* Whole forward passes against finite differences in every parameter (dropout on: the seed
 * fixes its masks, so the pass is a deterministic function of the parameters).  Moderate
 * dropout: at 0.7 some blocks come out of the last level nearly all zero, and their L2
 * normalisation is smooth but curved beyond what a float32 central difference resolves. */
typedef struct whole_case {
    test_emb *e;
    void *prep;
    const float *x;
    int n, f, batch;
    const uint64_t *seeds;
} whole_case;

static pb_nn_tensor *whole_build(pb_nn_tape *t, pb_nn_params *p, void *ctx)
{
    (void)p; /* the instance reads its own parameter set, which is p */
    const whole_case *w = ctx;
    pb_nn_tensor *y, *X = pb_nn_constant(t, w->n * w->batch, w->f, w->x);
    pb_error err;
    if (w->e->ops->forward_batch(w->e->inst, w->prep, t, X, w->batch, w->seeds, &y, &err))
        fail_msg("forward_batch: %s", err.msg);
    return y;
}

static void test_plugins_gradient(void **state)
{
    (void)state;
    pb_graph *g = test_graph(DIAMOND_N, diamond_edges, DIAMOND_M);
    int n = DIAMOND_N, f = 6, batch = 2;
    float *x = test_features(n, f, batch, 10);
    const uint64_t seeds[2] = {3, 4};
    const plugin_case cases[] = {
        {"graphsage", {{"hops", "2"}, {"dropout", "0.3"}}, 2, 1},
        {"graphsage", {{"output", "graph"}, {"aggregation", "mean"}}, 2, 1},
        {"pgnn", {{"hops", "2"}, {"dropout", "0.3"}}, 2, 1},
        {"pgnn",
         {{"anchor_aggregation", "mean"}, {"anchor_exponent", "1"}, {"dropout", "0.3"}},
         3,
         1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        test_emb e;
        pb_error err;
        assert_int_equal(test_emb_open(&e, cases[c].name, cases[c].kv, cases[c].n_kv, 50, f, &err),
                         PB_OK);
        void *prep;
        assert_int_equal(e.ops->prepare(e.inst, g, &prep, &err), PB_OK);
        /* Biases start at 0, which puts the hidden units of the zero rows padding leaves in
         * the blocks exactly on their ReLU kink; move them off it. */
        pb_rng rng;
        pb_rng_seed(&rng, 90 + c);
        for (int id = 0; id < pb_nn_params_count(e.params); id++) {
            const char *pn = strrchr(pb_nn_params_name(e.params, id), '/');
            int r0, c0;
            pb_nn_params_shape(e.params, id, &r0, &c0);
            float *v = pb_nn_params_values(e.params) + pb_nn_params_offset(e.params, id);
            for (int k = 0; pn && pn[1] == 'b' && k < r0 * c0; k++)
                v[k] = (float)(0.2 * pb_rng_uniform(&rng) - 0.1);
        }
        whole_case w = {&e, prep, x, n, f, batch, seeds};
        fd_check(e.params, whole_build, &w, 1e-3, 2e-3, 2e-2);
        e.ops->release(e.inst, prep);
        test_emb_close(&e);
    }
    free(x);
    graph_free(g);
}

/* forward() without prepare: the plugin prepares the graph itself, draws its own seed. */
static void test_plugins_plain_forward(void **state)
{
    (void)state;
    pb_graph *g = test_graph(DIAMOND_N, diamond_edges, DIAMOND_M);
    int f = 8;
    float *x = test_features(DIAMOND_N, f, 1, 11);
    for (size_t c = 0; c < N_PLUGIN_CASES; c++) {
        test_emb e;
        pb_error err;
        assert_int_equal(test_emb_open(&e, plugin_cases[c].name, plugin_cases[c].kv,
                                       plugin_cases[c].n_kv, 60, f, &err),
                         PB_OK);
        pb_nn_tape *t = pb_nn_tape_new();
        for (int rep = 0; rep < 2; rep++) {
            pb_nn_tape_reset(t, 1);
            pb_nn_tensor *y;
            assert_int_equal(
                e.ops->forward(e.inst, t, g, pb_nn_constant(t, DIAMOND_N, f, x), &y, &err), PB_OK);
            assert_int_equal(y->rows, DIAMOND_N);
            assert_int_equal(y->cols, e.dim);
        }
        assert_int_equal(e.log.count, 1); /* prepared once, cached */
        pb_nn_tape_free(t);
        test_emb_close(&e);
    }
    free(x);
    graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_count),
        cmocka_unit_test(test_samples_draw),
        cmocka_unit_test(test_samples_seeded),
        cmocka_unit_test(test_anchor_counts),
        cmocka_unit_test(test_anchor_seeded),
        cmocka_unit_test(test_hop_distances),
        cmocka_unit_test(test_anchor_weights),
        cmocka_unit_test(test_combine_values),
        cmocka_unit_test(test_expand_dropout),
        cmocka_unit_test(test_combine_expand_gradient),
        cmocka_unit_test(test_expand_skip),
        cmocka_unit_test(test_gather_values),
        cmocka_unit_test(test_gather_gradient),
        cmocka_unit_test(test_graphsage_by_hand),
        cmocka_unit_test(test_pgnn_by_hand),
        cmocka_unit_test(test_plugins_shapes_and_determinism),
        cmocka_unit_test(test_plugins_seeds_and_batches),
        cmocka_unit_test(test_plugins_sample_seed),
        cmocka_unit_test(test_graphsage_node_is_pooled_graph),
        cmocka_unit_test(test_pgnn_literal),
        cmocka_unit_test(test_pgnn_window_error),
        cmocka_unit_test(test_plugins_gradient),
        cmocka_unit_test(test_plugins_plain_forward),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
