/* test_placeto.c — Placeto pieces against the spec's hand examples: node features (§2.2), both
 * message passers (§2.4) with fixed weights and a finite-difference check of the fused
 * messenger's gradient, the readout sets (§2.5), rewards (§4.4), the turn-based baseline (§4.5)
 * and the per-step logit gradient. */
#include "model/graph.h"
#include "plugin/loader.h"
#include "plugin/options.h"
#include "placebench.h"

/* The placer's RL arithmetic and readout sets are internal to the plugin: compiled in here. */
#include "../../../plugins/placer/placeto/policy.c"
#include "../../../plugins/placer/placeto/reinforce.c"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ------------------------------------------------------------------ graphs */

/* The graph of specs/placeto.md §1.6: A -> B, A -> C, B -> D, C -> D, in insertion order A, B,
 * C, D; costs 10, 20, 30, 5; port-0 bytes 76000, 15200, 38000, none. */
static pb_graph *diamond(void)
{
    pb_error err;
    graph_builder *b = graph_builder_new("diamond");
    const char *names[4] = {"A", "B", "C", "D"};
    double cost[4] = {10, 20, 30, 5}, bytes[4] = {76000, 15200, 38000, 0};
    for (int i = 0; i < 4; i++) {
        graph_node_attrs a = {0};
        a.cost_us = cost[i];
        a.n_ports = i < 3 ? 1 : 0;
        a.port_bytes = &bytes[i];
        a.colocation = -1;
        assert_int_equal(graph_add_node(b, names[i], &a, &err), i);
    }
    int edges[4][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
    for (int i = 0; i < 4; i++)
        assert_true(graph_add_edge(b, edges[i][0], edges[i][1], 0, &err) >= 0);
    pb_graph *g;
    assert_int_equal(graph_build(b, &g, &err), PB_OK);
    return g;
}

static void expect_row(const float *row, const double *want, int n)
{
    for (int j = 0; j < n; j++) {
        if (fabs(row[j] - want[j]) > 1e-6)
            fail_msg("column %d: got %.9g, want %.9g", j, row[j], want[j]);
    }
}

/* ------------------------------------------------------------------ features (§2.2) */

/* The spec's worked example: [M/B] mode, zero placement, step 0 (current A), 2 devices, peak
 * memory [129200, 0]: feature 5 is 129200 everywhere, 0 after the shift, left unscaled. */
static void test_features_spec_example(void **state)
{
    (void)state;
    pb_graph *g = diamond();
    int device[4] = {0, 0, 0, 0}, done[4] = {0, 0, 0, 0};
    double peak[2] = {129200, 0};
    pb_eval ev = {.struct_size = sizeof ev, .peak_mem_bytes = peak};
    pb_place_state s = {sizeof s, g, 2, device, done, 0, &ev, g};
    float out[4 * 7];
    pb_error err;
    assert_int_equal(pb_placeto_features_dim(2), 7);
    assert_int_equal(pb_placeto_features(&s, PB_FEATURE5_PEAK_MEM, out, &err), PB_OK);
    const double want[4][7] = {{1.0 / 3, 1, 0, 1, 0, 1, 0},
                               {2.0 / 3, 0.2, 0, 0, 0, 1, 0},
                               {1, 0.5, 0, 0, 0, 1, 0},
                               {1.0 / 6, 0, 0, 0, 0, 1, 0}};
    for (int v = 0; v < 4; v++)
        expect_row(out + v * 7, want[v], 7);
    graph_free(g);
}

/* Start times of the spec's case 1 (A 0, B 15.7, C 20, D 55; C on device 1), current node B,
 * A already visited: feature 5 = (t - 15.7) / 39.3. */
static void test_features_start_time(void **state)
{
    (void)state;
    pb_graph *g = diamond();
    int device[4] = {0, 0, 1, 0}, done[4] = {1, 0, 0, 0};
    double start[4] = {0, 15.7, 20, 55}, peak[2] = {91200, 38000};
    pb_eval ev = {.struct_size = sizeof ev, .peak_mem_bytes = peak, .node_start_us = start};
    pb_place_state s = {sizeof s, g, 2, device, done, 1, &ev, g};
    float out[4 * 7];
    pb_error err;
    assert_int_equal(pb_placeto_features(&s, PB_FEATURE5_START_TIME, out, &err), PB_OK);
    const double want[4][7] = {{1.0 / 3, 1, 1, 0, -15.7 / 39.3, 1, 0},
                               {2.0 / 3, 0.2, 0, 1, 0, 1, 0},
                               {1, 0.5, 0, 0, 4.3 / 39.3, 0, 1},
                               {1.0 / 6, 0, 0, 0, 1, 1, 0}};
    for (int v = 0; v < 4; v++)
        expect_row(out + v * 7, want[v], 7);
    /* Peak-memory mode, same state: raw [91200, 91200, 38000, 91200] minus B's 91200; the
     * column's maximum is 0, so it is not scaled and C keeps -53200 (the reference's f != 0). */
    assert_int_equal(pb_placeto_features(&s, PB_FEATURE5_PEAK_MEM, out, &err), PB_OK);
    assert_float_equal(out[0 * 7 + 4], 0, 1e-9);
    assert_float_equal(out[2 * 7 + 4], -53200, 1e-3);
    assert_float_equal(out[3 * 7 + 4], 0, 1e-9);
    /* An unplaced node has no one-hot bit. */
    device[3] = -1;
    assert_int_equal(pb_placeto_features(&s, PB_FEATURE5_PEAK_MEM, out, &err), PB_OK);
    assert_float_equal(out[3 * 7 + 5], 0, 0);
    assert_float_equal(out[3 * 7 + 6], 0, 0);
    graph_free(g);
}

/* A group starts when its earliest op starts. */
static void test_features_grouped(void **state)
{
    (void)state;
    pb_error err;
    graph_builder *b = graph_builder_new("grouped");
    const char *names[3] = {"x", "y", "z"}, *groups[3] = {"g1", "g1", "g2"};
    double bytes = 8;
    for (int i = 0; i < 3; i++) {
        graph_node_attrs a = {0};
        a.cost_us = 1 + i;
        a.n_ports = 1;
        a.port_bytes = &bytes;
        a.group = groups[i];
        a.colocation = -1;
        assert_int_equal(graph_add_node(b, names[i], &a, &err), i);
    }
    assert_true(graph_add_edge(b, 0, 1, 0, &err) >= 0);
    assert_true(graph_add_edge(b, 1, 2, 0, &err) >= 0);
    pb_graph *g;
    assert_int_equal(graph_build(b, &g, &err), PB_OK);
    const pb_graph *gg = g->grouped;
    assert_int_equal(gg->n_nodes, 2);
    int device[2] = {0, 1}, done[2] = {0, 0};
    double start[3] = {7, 3, 9}, peak[2] = {0, 0};
    pb_eval ev = {.struct_size = sizeof ev, .peak_mem_bytes = peak, .node_start_us = start};
    pb_place_state s = {sizeof s, gg, 2, device, done, -1, &ev, g};
    float out[2 * 7];
    assert_int_equal(pb_placeto_features(&s, PB_FEATURE5_START_TIME, out, &err), PB_OK);
    assert_float_equal(out[0 * 7 + 4], 3.0 / 9, 1e-6); /* g1 = min(7, 3), no current node */
    assert_float_equal(out[1 * 7 + 4], 1, 1e-6);
    assert_float_equal(out[0 * 7 + 0], 3.0 / 3, 1e-6); /* group cost 1 + 2 = 3, max 3 */
    s.current = 0;
    assert_int_equal(pb_placeto_features(&s, PB_FEATURE5_START_TIME, out, &err), PB_OK);
    assert_float_equal(out[0 * 7 + 4], 0, 1e-6);
    assert_float_equal(out[1 * 7 + 4], 1, 1e-6); /* (9 - 3) / 6 */
    graph_free(g);
}

/* ------------------------------------------------------------------ message passers (§2.4) */

typedef struct gnn_fixture {
    loader *l;
    const loader_entry *entry;
    option_set opts;
    void *inst;
    pb_nn_params *params;
    int dim;
} gnn_fixture;

/* Loads the placeto-gnn plugin of the build tree with "key=value" options, for features of
 * width d. */
static void gnn_open(gnn_fixture *f, int d, int n_kv, const char *const *kv)
{
    pb_error err;
    char path[4096];
    const char *build = getenv("PB_BUILD");
    snprintf(path, sizeof path, "%s/plugins/embedding-placeto-gnn.so", build ? build : ".");
    f->l = loader_new(NULL, 0, &err);
    assert_non_null(f->l);
    if (loader_open_file(f->l, path, &f->entry, &err))
        fail_msg("%s", err.msg);
    option_kv pairs[8];
    char keys[8][64];
    for (int i = 0; i < n_kv; i++) {
        const char *eq = strchr(kv[i], '=');
        snprintf(keys[i], sizeof keys[i], "%.*s", (int)(eq - kv[i]), kv[i]);
        pairs[i] = (option_kv){keys[i], eq + 1};
    }
    if (options_resolve(f->entry->desc, pairs, n_kv, "test", &f->opts, &err))
        fail_msg("%s", err.msg);
    const pb_embedding_ops *ops = f->entry->desc->ops;
    pb_create_args a = options_create_args(&f->opts, NULL, 7);
    assert_int_equal(ops->create(&a, &f->inst, &err), PB_OK);
    f->params = pb_nn_params_new();
    assert_int_equal(ops->init_params(f->inst, f->params, d, &f->dim, &err), PB_OK);
}

static void gnn_close(gnn_fixture *f)
{
    ((const pb_embedding_ops *)f->entry->desc->ops)->destroy(f->inst);
    pb_nn_params_free(f->params);
    option_set_free(&f->opts);
    loader_free(f->l);
}

/* Every weight the identity, every bias zero. */
static void gnn_identity(pb_nn_params *p)
{
    float *v = pb_nn_params_values(p);
    for (int id = 0; id < pb_nn_params_count(p); id++) {
        int r, c;
        pb_nn_params_shape(p, id, &r, &c);
        float *t = v + pb_nn_params_offset(p, id);
        memset(t, 0, (size_t)r * c * sizeof(float));
        if (r == c)
            for (int i = 0; i < r; i++)
                t[i * c + i] = 1;
    }
}

/* Runs the embedding on g (4 nodes) with features e (4 x d); out receives the 4 x dim output. */
static void gnn_run_dim(gnn_fixture *f, const pb_graph *g, const float *e, int d, float *out)
{
    pb_error err;
    const pb_embedding_ops *ops = f->entry->desc->ops;
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *x = pb_nn_constant(t, 4, d, e), *y;
    if (ops->forward(f->inst, t, g, x, &y, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(y->rows, 4);
    assert_int_equal(y->cols, f->dim);
    memcpy(out, y->data, (size_t)4 * f->dim * sizeof(float));
    pb_nn_tape_free(t);
}

static void gnn_run(gnn_fixture *f, const float *e, float *out)
{
    pb_graph *g = diamond();
    gnn_run_dim(f, g, e, 2, out);
    graph_free(g);
}

/* With identity weights and non-negative features every ReLU passes its input, so
 * h_f[v] = s[v] + sum of h_f over parents and h_b[v] = s[v] + sum of h_b over children:
 * s = A [1,0], B [0,1], C [2,0], D [0,3] gives h_f = A [1,0], B [1,1], C [3,0], D [4,4] and
 * h_b = D [0,3], B [0,4], C [2,3], A [3,7]. */
static void test_messenger_sequential_identity(void **state)
{
    (void)state;
    gnn_fixture f;
    const char *kv[] = {"message_passing=sequential"};
    gnn_open(&f, 2, 1, kv);
    assert_int_equal(f.dim, 4);
    gnn_identity(f.params);
    const float e[8] = {1, 0, 0, 1, 2, 0, 0, 3};
    float out[16];
    gnn_run(&f, e, out);
    const double want[4][4] = {{1, 0, 3, 7}, {1, 1, 0, 4}, {3, 0, 2, 3}, {4, 4, 0, 3}};
    for (int v = 0; v < 4; v++)
        expect_row(out + v * 4, want[v], 4);
    gnn_close(&f);
}

/* One radial round: X_1[v] = s[v] + sum of s over parents (children for the backward side) for
 * nodes that have any: forward A [1,0], B [1,1], C [3,0], D [2,4]; backward A [3,1], B [0,4],
 * C [2,3], D [0,3].  Two rounds reach D's grandparent: D [4,4]. */
static void test_messenger_radial_identity(void **state)
{
    (void)state;
    gnn_fixture f;
    const char *kv[] = {"message_passing=radial", "rounds=1"};
    gnn_open(&f, 2, 2, kv);
    gnn_identity(f.params);
    const float e[8] = {1, 0, 0, 1, 2, 0, 0, 3};
    float out[16];
    gnn_run(&f, e, out);
    const double want[4][4] = {{1, 0, 3, 1}, {1, 1, 0, 4}, {3, 0, 2, 3}, {2, 4, 0, 3}};
    for (int v = 0; v < 4; v++)
        expect_row(out + v * 4, want[v], 4);
    gnn_close(&f);
    const char *kv2[] = {"message_passing=radial", "rounds=2"};
    gnn_open(&f, 2, 2, kv2);
    gnn_identity(f.params);
    gnn_run(&f, e, out);
    const double d2[4] = {4, 4, 0, 3};
    expect_row(out + 3 * 4, d2, 4);
    gnn_close(&f);
}

/* A plain-loop transcription of §2.3/§2.4 for any weights, independent of the plugin. */
static const float *ref_param(pb_nn_params *p, const char *prefix, const char *what, int layer)
{
    char name[128];
    snprintf(name, sizeof name, "%s/%s%d", prefix, what, layer);
    int id = pb_nn_params_find(p, name);
    assert_true(id >= 0);
    return pb_nn_params_values(p) + pb_nn_params_offset(p, id);
}

/* FNN with n_layers d x d layers: ReLU between layers, after the last when relu_last. */
static void ref_fnn(pb_nn_params *p, const char *prefix, int n_layers, int relu_last,
                    const double *x, int d, double *y)
{
    double in[16], out[16];
    memcpy(in, x, (size_t)d * sizeof(double));
    for (int l = 0; l < n_layers; l++) {
        const float *w = ref_param(p, prefix, "w", l), *b = ref_param(p, prefix, "b", l);
        for (int j = 0; j < d; j++) {
            out[j] = b[j];
            for (int k = 0; k < d; k++)
                out[j] += in[k] * w[k * d + j];
            if (l + 1 < n_layers || relu_last)
                out[j] = out[j] > 0 ? out[j] : 0;
        }
        memcpy(in, out, (size_t)d * sizeof(double));
    }
    memcpy(y, in, (size_t)d * sizeof(double));
}

/* The diamond's parents (dir 0) or children (dir 1) of v. */
static int ref_nbrs(int dir, int v, int *out)
{
    static const int par[4][2] = {{-1, -1}, {0, -1}, {0, -1}, {1, 2}};
    static const int chi[4][2] = {{1, 2}, {3, -1}, {3, -1}, {-1, -1}};
    const int(*t)[2] = dir == 0 ? par : chi;
    int n = 0;
    for (int i = 0; i < 2; i++)
        if (t[v][i] >= 0)
            out[n++] = t[v][i];
    return n;
}

/* h[v] = s[v] + ReLU(g(sum ReLU(f(h[u])))) over neighbours, sequentially (rounds 0) or in
 * synchronous rounds. */
static void ref_messenger(pb_nn_params *p, const double s[4][16], int d, int rounds,
                          double out[4][32])
{
    static const char *const pre[2][2] = {{"placeto-gnn/fwd/f", "placeto-gnn/fwd/g"},
                                          {"placeto-gnn/bwd/f", "placeto-gnn/bwd/g"}};
    static const int order[2][4] = {{0, 1, 2, 3}, {3, 2, 1, 0}};
    for (int dir = 0; dir < 2; dir++) {
        double h[4][16], prev[4][16];
        memcpy(h, s, sizeof h);
        for (int r = 0; r < (rounds ? rounds : 1); r++) {
            memcpy(prev, h, sizeof h);
            for (int i = 0; i < 4; i++) {
                int v = order[dir][i], nb[2], k = ref_nbrs(dir, v, nb);
                if (!k)
                    continue;
                double agg[16] = {0}, fy[16], gy[16];
                for (int e = 0; e < k; e++) {
                    ref_fnn(p, pre[dir][0], 2, 1, rounds ? prev[nb[e]] : h[nb[e]], d, fy);
                    for (int j = 0; j < d; j++)
                        agg[j] += fy[j];
                }
                ref_fnn(p, pre[dir][1], 2, 1, agg, d, gy);
                for (int j = 0; j < d; j++)
                    h[v][j] = s[v][j] + gy[j];
            }
        }
        for (int v = 0; v < 4; v++)
            for (int j = 0; j < d; j++)
                out[v][dir * d + j] = h[v][j];
    }
}

/* Random weights and biases (so every layer's orientation matters), compared with the plain
 * transcription: T = FNN(d, [d, d], d), then either message passer. */
static void check_against_reference(const char *mode, int rounds, int D)
{
    gnn_fixture f;
    char r_opt[32];
    snprintf(r_opt, sizeof r_opt, "rounds=%d", rounds ? rounds : 8);
    const char *kv[] = {mode, r_opt};
    gnn_open(&f, D, 2, kv);
    pb_rng rng;
    pb_rng_seed(&rng, 99);
    float *v = pb_nn_params_values(f.params);
    for (size_t i = 0; i < pb_nn_params_size(f.params); i++)
        v[i] = (float)(pb_rng_uniform(&rng) * 1.6 - 0.6);
    pb_graph *g = diamond();
    float e[4 * 16];
    for (int i = 0; i < 4 * D; i++)
        e[i] = (float)(pb_rng_uniform(&rng) * 2 - 0.5);
    double s[4][16], want[4][32];
    for (int n = 0; n < 4; n++) {
        double x[16];
        for (int j = 0; j < D; j++)
            x[j] = e[n * D + j];
        ref_fnn(f.params, "placeto-gnn/T", 3, 0, x, D, s[n]);
    }
    ref_messenger(f.params, (const double(*)[16])s, D, rounds, want);
    float out[4 * 2 * 16];
    gnn_run_dim(&f, g, e, D, out);
    for (int n = 0; n < 4; n++)
        for (int j = 0; j < 2 * D; j++)
            if (fabs(out[n * 2 * D + j] - want[n][j]) > 1e-4 * (1 + fabs(want[n][j])))
                fail_msg("%s node %d col %d: got %.7g, want %.7g", mode, n, j, out[n * 2 * D + j],
                         want[n][j]);
    graph_free(g);
    gnn_close(&f);
}

static void test_messenger_sequential_reference(void **state)
{
    (void)state;
    /* 8-float rows, then 16-float rows; 8, 10 and 13 (3, 5 and 8 devices) have passes of their
     * own, 3 and 11 take the general ones. */
    static const int dims[] = {3, 8, 10, 11, 13};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        check_against_reference("message_passing=sequential", 0, dims[i]);
}

static void test_messenger_radial_reference(void **state)
{
    (void)state;
    check_against_reference("message_passing=radial", 1, 3);
    check_against_reference("message_passing=radial", 3, 13);
}

/* ------------------------------------------------------------------ messenger gradient */

/* L = sum(out * r) of forward_batch over `batch` stacked feature blocks. */
static double gnn_loss(gnn_fixture *f, void *prep, pb_nn_tape *t, const float *e, int batch, int d,
                       const float *r, int grad)
{
    const pb_embedding_ops *ops = f->entry->desc->ops;
    pb_error err;
    pb_nn_tape_reset(t, grad);
    pb_nn_tensor *x = pb_nn_constant(t, 4 * batch, d, e), *y;
    if (ops->forward_batch(f->inst, prep, t, x, batch, NULL, &y, &err))
        fail_msg("%s", err.msg);
    double l = 0;
    for (int i = 0; i < y->rows * y->cols; i++)
        l += (double)y->data[i] * r[i];
    if (grad && pb_nn_backward(t, y, r, &err))
        fail_msg("%s", err.msg);
    return l;
}

/* The fused messenger's hand-written backward against central differences, on two stacked
 * blocks (which also checks that blocks do not mix). */
static void check_messenger_gradient(const char *mode, int D)
{
    enum { B = 2 };
    gnn_fixture f;
    const char *kv[] = {mode, "rounds=2"};
    gnn_open(&f, D, 2, kv);
    const pb_embedding_ops *ops = f.entry->desc->ops;
    pb_rng rng;
    pb_rng_seed(&rng, 5);
    size_t np = pb_nn_params_size(f.params);
    float *v = pb_nn_params_values(f.params);
    /* Scaled with the width so that activations stay near 1 and float differences stay exact
     * enough. */
    for (size_t i = 0; i < np; i++)
        v[i] = (float)((pb_rng_uniform(&rng) * 1.6 - 0.6) * sqrt(3.0 / D));
    pb_graph *g = diamond();
    void *prep;
    pb_error err;
    assert_int_equal(ops->prepare(f.inst, g, &prep, &err), PB_OK);
    float e[4 * 16 * B], r[4 * B * 2 * 16];
    for (int i = 0; i < 4 * D * B; i++)
        e[i] = (float)(pb_rng_uniform(&rng) * 2 - 0.5);
    for (int i = 0; i < 4 * B * 2 * D; i++)
        r[i] = (float)(pb_rng_uniform(&rng) * 2 - 1);
    pb_nn_tape *t = pb_nn_tape_new();
    /* Block 1 alone equals block 1 of the batch. */
    float single[4 * 2 * 16];
    gnn_run_dim(&f, g, e + 4 * D, D, single);
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *x = pb_nn_constant(t, 4 * B, D, e), *y;
    assert_int_equal(ops->forward_batch(f.inst, prep, t, x, B, NULL, &y, &err), PB_OK);
    for (int i = 0; i < 4 * 2 * D; i++)
        assert_float_equal(y->data[4 * 2 * D + i], single[i], 1e-5);
    pb_nn_params_zero_grad(f.params);
    gnn_loss(&f, prep, t, e, B, D, r, 1);
    float *grad = malloc(np * sizeof(float));
    memcpy(grad, pb_nn_params_grads(f.params), np * sizeof(float));
    /* A ReLU kink within h of a parameter's value makes the central difference average two
     * slopes; the one-sided differences then still match on the side without the kink. */
    int checked = 0;
    double l0 = gnn_loss(&f, prep, t, e, B, D, r, 0);
    for (size_t i = 0; i < np; i++) {
        float keep = v[i];
        double h = 1e-3;
        v[i] = keep + (float)h;
        double lp = gnn_loss(&f, prep, t, e, B, D, r, 0);
        v[i] = keep - (float)h;
        double lm = gnn_loss(&f, prep, t, e, B, D, r, 0);
        v[i] = keep;
        double num[3] = {(lp - lm) / (2 * h), (lp - l0) / h, (l0 - lm) / h};
        int ok = 0;
        for (int k = 0; k < 3; k++)
            ok |= fabs(num[k] - grad[i]) <= 2e-2 * (1 + fabs(num[k]));
        if (!ok)
            fail_msg("%s, d %d, parameter value %zu: analytic %.6g, numeric %.6g", mode, D, i,
                     grad[i], num[0]);
        checked += fabs(num[0]) > 1e-3;
    }
    assert_true(checked > (int)np / 4); /* the test exercised real gradients */
    free(grad);
    pb_nn_tape_free(t);
    ops->release(f.inst, prep);
    graph_free(g);
    gnn_close(&f);
}

static void test_messenger_gradient(void **state)
{
    (void)state;
    static const int dims[] = {3, 8, 10, 11, 13}; /* as test_messenger_sequential_reference */
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        check_messenger_gradient("message_passing=sequential", dims[i]);
    check_messenger_gradient("message_passing=radial", 3);
}

/* ------------------------------------------------------------------ readout sets (§2.5) */

/* Spec §2.2 example: for B, ancestors {A}, descendants {D}, peers {C}. */
static void test_readout_sets(void **state)
{
    (void)state;
    pb_graph *g = diamond();
    int topo[4];
    pb_error err;
    assert_int_equal(pb_traverse_topo(g, topo, &err), PB_OK);
    /* nx 2.4 topo of the diamond is A, C, B, D (spec §5.8). */
    assert_int_equal(topo[0], 0);
    assert_int_equal(topo[1], 2);
    assert_int_equal(topo[2], 1);
    assert_int_equal(topo[3], 3);
    policy_graph pg;
    assert_int_equal(policy_graph_build(g, topo, &pg, &err), PB_OK);
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tape_reset(t, 0);
    int cur[2] = {1, 0}, *rows[3], n_rows[3];
    pb_nn_csr seg[3];
    assert_int_equal(policy_tri_rows(t, &pg, 2, cur, rows, n_rows, seg), PB_OK);
    /* block 0 (current B): ancestors A, descendants D, peers C; block 1 (current A):
     * descendants B, C, D (rows 4 + j). */
    assert_int_equal(seg[0].start[1], 1);
    assert_int_equal(rows[0][0], 0);
    assert_int_equal(seg[1].start[1], 1);
    assert_int_equal(rows[1][0], 3);
    assert_int_equal(seg[2].start[1], 1);
    assert_int_equal(rows[2][0], 2);
    assert_int_equal(seg[0].start[2], 1); /* A has no ancestors */
    assert_int_equal(seg[1].start[2], 4);
    assert_int_equal(rows[1][1], 5);
    assert_int_equal(rows[1][2], 6);
    assert_int_equal(rows[1][3], 7);
    assert_int_equal(seg[2].start[2], 1); /* nor peers */
    pb_nn_tape_free(t);
    policy_graph_free(&pg);
    graph_free(g);
}

/* ------------------------------------------------------------------ rewards (§4.4) */

/* The spec's example: RT = [87.8, 87.8, 80, 80, 80] us, log run time, discount 1:
 * [A] returns [ln(87.8/80), ln(87.8/80), 0, 0]; [M/B] the same negated. */
static void test_rewards_spec_example(void **state)
{
    (void)state;
    reinforce_cfg c = {REINFORCE_SIGN_INTENDED, 1, 1.0, 0, 11, 10};
    double rt[5] = {87.8, 87.8, 80.0, 80.0, 80.0}, x[5], g[4];
    for (int t = 0; t < 5; t++)
        x[t] = reinforce_reward_runtime(&c, rt[t], 0);
    assert_float_equal(x[0], log(87.8e-6), 1e-12);
    reinforce_returns(&c, x, 4, g);
    const double l = 0.0930348659;
    assert_float_equal(g[0], l, 1e-9);
    assert_float_equal(g[1], l, 1e-9);
    assert_float_equal(g[2], 0, 1e-12);
    assert_float_equal(g[3], 0, 1e-12);
    c.sign = REINFORCE_SIGN_FORKS;
    reinforce_returns(&c, x, 4, g);
    assert_float_equal(g[0], -l, 1e-9);
    assert_float_equal(g[1], -l, 1e-9);
    assert_float_equal(g[3], 0, 1e-12);
}

/* Discounting and the linear (not log) run time: x = [4, 3, 5] s-scaled, r = [1, -2],
 * G_1 = -2, G_0 = 1 + 0.5 * -2 = 0. */
static void test_rewards_discount(void **state)
{
    (void)state;
    reinforce_cfg c = {REINFORCE_SIGN_INTENDED, 0, 0.5, 0, 11, 10};
    double x[3], g[2];
    double rt[3] = {4e6, 3e6, 5e6};
    for (int t = 0; t < 3; t++)
        x[t] = reinforce_reward_runtime(&c, rt[t], 0);
    assert_float_equal(x[1], 3, 1e-12);
    reinforce_returns(&c, x, 2, g);
    assert_float_equal(g[1], -2, 1e-12);
    assert_float_equal(g[0], 0, 1e-12);
}

/* Memory penalty: 2 per GB above 8 GB, capped at 10. */
static void test_rewards_memory_penalty(void **state)
{
    (void)state;
    reinforce_cfg c = {REINFORCE_SIGN_INTENDED, 0, 1, 2, 8, 10};
    assert_float_equal(reinforce_reward_runtime(&c, 1e6, 7e9), 1, 1e-12);
    assert_float_equal(reinforce_reward_runtime(&c, 1e6, 9.5e9), 1 + 2 * 1.5, 1e-9);
    assert_float_equal(reinforce_reward_runtime(&c, 1e6, 100e9), 10, 1e-12);
}

/* ------------------------------------------------------------------ baseline (§4.5) */

/* The current episode is included: after the first push the advantage is 0; the window keeps
 * the last `rounds` episodes. */
static void test_turn_based_baseline(void **state)
{
    (void)state;
    reinforce_baseline b;
    pb_error err;
    assert_int_equal(reinforce_baseline_init(&b, 2, 2, 100, &err), PB_OK);
    double m[2];
    reinforce_baseline_mean(&b, m);
    assert_float_equal(m[0], 0, 0);
    const double e1[2] = {1, 2}, e2[2] = {3, 6}, e3[2] = {5, 10};
    reinforce_baseline_push(&b, e1);
    reinforce_baseline_mean(&b, m);
    assert_float_equal(m[0], 1, 1e-12); /* G - b = 0 in the first training episode */
    assert_float_equal(m[1], 2, 1e-12);
    reinforce_baseline_push(&b, e2);
    reinforce_baseline_mean(&b, m);
    assert_float_equal(m[0], 2, 1e-12);
    assert_float_equal(m[1], 4, 1e-12);
    reinforce_baseline_push(&b, e3); /* window of 2: episodes 2 and 3 */
    reinforce_baseline_mean(&b, m);
    assert_float_equal(m[0], 4, 1e-12);
    assert_float_equal(m[1], 8, 1e-12);
    reinforce_baseline_free(&b);
    /* A run with fewer training episodes than the window holds them all. */
    assert_int_equal(reinforce_baseline_init(&b, 1, 1000, 3, &err), PB_OK);
    assert_int_equal(b.cap, 3);
    reinforce_baseline_free(&b);
}

/* ------------------------------------------------------------------ policy gradient */

/* loss = adv * (-log p_a) - w * H, H = -sum p ln(p + 1e-3), in double. */
static double pg_loss(const double *l, int k, int a, double adv, double w)
{
    double mx = l[0], z = 0, p[8], h = 0;
    for (int i = 1; i < k; i++)
        mx = l[i] > mx ? l[i] : mx;
    for (int i = 0; i < k; i++)
        z += exp(l[i] - mx);
    for (int i = 0; i < k; i++) {
        p[i] = exp(l[i] - mx) / z;
        h -= p[i] * log(p[i] + 1e-3);
    }
    return adv * -log(p[a]) - w * h;
}

static void test_logit_gradient(void **state)
{
    (void)state;
    const float logits[3] = {0.3f, -1.2f, 0.8f};
    float seed[3];
    reinforce_logit_grad(logits, 3, 1, 0.7, 1.0, seed);
    for (int j = 0; j < 3; j++) {
        double lp[3], lm[3], h = 1e-6;
        for (int i = 0; i < 3; i++)
            lp[i] = lm[i] = logits[i];
        lp[j] += h;
        lm[j] -= h;
        double num = (pg_loss(lp, 3, 1, 0.7, 1.0) - pg_loss(lm, 3, 1, 0.7, 1.0)) / (2 * h);
        assert_float_equal(seed[j], num, 1e-5);
    }
    /* Greedy and sampled actions. */
    assert_int_equal(reinforce_argmax(logits, 3), 2);
    pb_rng rng;
    pb_rng_seed(&rng, 3);
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < 20000; i++)
        counts[reinforce_sample(logits, 3, &rng)]++;
    double p[3];
    reinforce_softmax(logits, 3, p);
    for (int j = 0; j < 3; j++)
        assert_float_equal(counts[j] / 20000.0, p[j], 0.015);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_features_spec_example),
        cmocka_unit_test(test_features_start_time),
        cmocka_unit_test(test_features_grouped),
        cmocka_unit_test(test_messenger_sequential_identity),
        cmocka_unit_test(test_messenger_radial_identity),
        cmocka_unit_test(test_messenger_sequential_reference),
        cmocka_unit_test(test_messenger_radial_reference),
        cmocka_unit_test(test_messenger_gradient),
        cmocka_unit_test(test_readout_sets),
        cmocka_unit_test(test_rewards_spec_example),
        cmocka_unit_test(test_rewards_discount),
        cmocka_unit_test(test_rewards_memory_penalty),
        cmocka_unit_test(test_turn_based_baseline),
        cmocka_unit_test(test_logit_gradient),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
