/* test_gdp.c — GDP placer pieces against specs/gdp.md's hand-computed examples: the reward
 * (§6.1), the mean-reward baseline (§6.2), the clipped PPO objective and entropy of one
 * minibatch (§6.7), units, FIFO order and HDP-layout adjacency features (§1-§2), and the
 * segment / memory bookkeeping of the placement network (§4.2). */
#include "model/graph.h"
#include "placebench.h"

/* The placer's internals are compiled in here. */
#include "../../../plugins/placer/gdp/gdp_net.c"
#include "../../../plugins/placer/gdp/gdp_ppo.c"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void near(double got, double want, double tol, const char *what)
{
    if (fabs(got - want) > tol)
        fail_msg("%s: got %.9g, want %.9g", what, got, want);
}

/* §6.1: 2-layer GNMT, T = 0.301 s, T_ref = 0.384 s gives -0.885355; invalid gives -10. */
static void test_reward(void **state)
{
    (void)state;
    near(gdp_reward(301000, 384000, 1, -10), -0.885355, 1e-6, "reward");
    near(gdp_reward(301000, 384000, 0, -10), -10, 0, "invalid reward");
}

/* §6.2: rewards -1.0, -0.9, -10 (OOM), -0.8 give advantages 0, +0.1, -9.05, +3.1667; with the
 * invalid reward excluded from the mean the last one is +0.15. */
static void test_baseline(void **state)
{
    (void)state;
    gdp_baseline b = {0};
    near(gdp_baseline_push(&b, -1.0, 1, 1), 0, 1e-12, "A1");
    near(gdp_baseline_push(&b, -0.9, 1, 1), 0.1, 1e-12, "A2");
    near(gdp_baseline_push(&b, -10, 0, 1), -9.05, 1e-12, "A3");
    near(gdp_baseline_push(&b, -0.8, 1, 1), 3.166667, 1e-6, "A4");
    gdp_baseline e = {0};
    gdp_baseline_push(&e, -1.0, 1, 0);
    gdp_baseline_push(&e, -0.9, 1, 0);
    near(gdp_baseline_push(&e, -10, 0, 0), -9.05, 1e-12, "A3 (exclude)");
    near(gdp_baseline_push(&e, -0.8, 1, 0), 0.15, 1e-12, "A4 (exclude)");
}

/* §6.7: one rollout, N = 3, d = 2, A = -0.1, eps 0.2, c_H 0.05: pi_old(a) 0.5, 0.8, 0.3 and
 * pi_new(a) 0.7, 0.6, 0.3 (a = device 0 everywhere).  L_clip = -0.106667; per-node gradients of
 * -L_clip +0.046667, 0 (clipped), +0.033333; entropies 0.610864, 0.673012, 0.610864, mean
 * 0.631580; loss 0.075088. */
static void test_ppo_worked_example(void **state)
{
    (void)state;
    const float logp[6] = {logf(0.7f), logf(0.3f), logf(0.6f), logf(0.4f), logf(0.3f), logf(0.7f)};
    const float old_a[3] = {logf(0.5f), logf(0.8f), logf(0.3f)}, w[3] = {1, 1, 1};
    const unsigned char a[3] = {0, 0, 0};
    float seed[6] = {0};
    double l = gdp_ppo_clip(logp, 3, 2, a, old_a, w, 3, -0.1, 0.2, GDP_RATIO_NODE, 1, seed);
    near(l, -0.106667, 1e-6, "L_clip");
    near(seed[0], 0.046667, 1e-6, "node 0 gradient");
    near(seed[2], 0, 0, "node 1 gradient (clipped)");
    near(seed[4], 0.033333, 1e-6, "node 2 gradient");
    near(seed[1] + seed[3] + seed[5], 0, 0, "gradient of actions not taken");
    double h = gdp_entropy(logp, 3, 2, w, 3, 0, NULL);
    near(h, 0.631580, 1e-6, "mean entropy");
    near(-l - 0.05 * h, 0.075088, 1e-6, "loss");
}

/* The entropy term's gradient against central differences of -c H in each log-probability
 * (treated as independent inputs, as the seed is). */
static void test_entropy_gradient(void **state)
{
    (void)state;
    float logp[6] = {logf(0.7f), logf(0.3f), logf(0.6f), logf(0.4f), logf(0.1f), logf(0.9f)};
    const float w[3] = {1, 0, 1}; /* node 1 a leader-mode follower: out of the loss */
    float seed[6] = {0};
    gdp_entropy(logp, 3, 2, w, 2, 0.05, seed);
    for (int k = 0; k < 6; k++) {
        float keep = logp[k];
        logp[k] = keep + 1e-3f;
        double hp = gdp_entropy(logp, 3, 2, w, 2, 0, NULL);
        logp[k] = keep - 1e-3f;
        double hm = gdp_entropy(logp, 3, 2, w, 2, 0, NULL);
        logp[k] = keep;
        near(seed[k], -0.05 * (hp - hm) / 2e-3, 1e-4, "entropy gradient");
    }
    near(seed[2] + seed[3], 0, 0, "follower's gradient");
}

/* Whole-graph ratio: rho = exp(0.1 + 0.05) = 1.161834 inside the clip range gives L = rho A and
 * gradient -A rho per node; rho = exp(0.3) = 1.349859 > 1.2 with A = 1 is clipped (L = 1.2, no
 * gradient); with A = -1 the unclipped -1.349859 is the minimum. */
static void test_ppo_graph_ratio(void **state)
{
    (void)state;
    const float logp[4] = {-0.2f, -1.7f, -0.5f, -0.9f}, w[2] = {1, 1};
    const unsigned char a[2] = {0, 1};
    float old_a[2] = {-0.3f, -0.95f}, seed[4] = {0};
    near(gdp_ppo_clip(logp, 2, 2, a, old_a, w, 2, 1, 0.2, GDP_RATIO_GRAPH, 1, seed), 1.161834, 1e-5,
         "L inside the range");
    near(seed[0], -1.161834, 1e-5, "gradient node 0");
    near(seed[3], -1.161834, 1e-5, "gradient node 1");
    old_a[0] = -0.4f;
    old_a[1] = -1.0f;
    memset(seed, 0, sizeof seed);
    near(gdp_ppo_clip(logp, 2, 2, a, old_a, w, 2, 1, 0.2, GDP_RATIO_GRAPH, 1, seed), 1.2, 1e-6,
         "clipped");
    near(seed[0] + seed[3], 0, 0, "clipped gradient");
    near(gdp_ppo_clip(logp, 2, 2, a, old_a, w, 2, -1, 0.2, GDP_RATIO_GRAPH, 1, seed), -1.349859,
         1e-5, "negative advantage");
}

/* A -> B, A -> C, B -> D, C -> D (types MatMul, Relu, Add, AddN; one output port each of 76000,
 * 15200, 38000 bytes, D none). */
static pb_graph *diamond(const int *colocation)
{
    pb_error err;
    graph_builder *b = graph_builder_new("diamond");
    const char *names[4] = {"A", "B", "C", "D"}, *types[4] = {"MatMul", "Relu", "Add", "AddN"};
    double bytes[4] = {76000, 15200, 38000, 0};
    for (int i = 0; i < 4; i++) {
        graph_node_attrs a = {0};
        a.type = types[i];
        a.cost_us = 10 * (i + 1);
        a.n_ports = i < 3 ? 1 : 0;
        a.port_bytes = &bytes[i];
        a.colocation = colocation ? colocation[i] : -1;
        assert_int_equal(graph_add_node(b, names[i], &a, &err), i);
    }
    int edges[4][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
    for (int i = 0; i < 4; i++)
        assert_true(graph_add_edge(b, edges[i][0], edges[i][1], 0, &err) >= 0);
    pb_graph *g;
    if (graph_build(b, &g, &err))
        fail_msg("%s", err.msg);
    return g;
}

static gdp_net_config small_config(void)
{
    return (gdp_net_config){.gs_layers = 1,
                            .gs_dim = 4,
                            .gs_knn = 5,
                            .gs_dir = GDP_DIR_BOTH,
                            .gs_pool_act = PB_NN_ACT_SIGMOID,
                            .adj_ids = 1,
                            .trf_layers = 1,
                            .d_model = 4,
                            .n_head = 2,
                            .d_head = 2,
                            .d_inner = 3,
                            .seg_len = 2,
                            .mem_len = 2,
                            .causal = 1,
                            .ln_eps = 1e-5f};
}

/* gdp_graph_prepare or a test failure. */
static void prepare(gdp_graph *gg, const pb_graph *g, const gdp_net_config *cfg, pb_rng *rng)
{
    pb_error err;
    if (gdp_graph_prepare(gg, g, cfg, rng, &err))
        fail_msg("%s", err.msg);
}

/* §2 features in the HDP adjacency layout: A meets (B, +1), (C, +1); B (A, -1), (D, +1); ids are
 * sequence positions / N. */
static void test_features_and_neighbours(void **state)
{
    (void)state;
    pb_graph *g = diamond(NULL);
    gdp_net_config cfg = small_config();
    gdp_graph gg;
    pb_rng rng;
    pb_rng_seed(&rng, 1);
    prepare(&gg, g, &cfg, &rng);
    assert_int_equal(gg.n_units, 4);
    int fd = gg.fdim, adj = GDP_VOCAB_SIZE + 1 + GDP_SHAPE_SLOTS;
    assert_int_equal(fd, GDP_VOCAB_SIZE + 1 + 25 + 20);
    assert_true(gdp_type_index("MatMul") > 0 && gdp_type_index("NoSuchOp") == 0);
    near(gg.x[gdp_type_index("MatMul")], 1, 0, "A's type one-hot");
    near(gg.x[fd + gdp_type_index("Relu")], 1, 0, "B's type one-hot");
    near(gg.x[GDP_VOCAB_SIZE + 1], log2(76001.0) / 32, 1e-6, "A's port-0 size");
    const double a_adj[4] = {0.25, 1, 0.5, 1}, b_adj[4] = {0, -1, 0.75, 1};
    for (int k = 0; k < 4; k++) {
        near(gg.x[adj + k], a_adj[k], 1e-7, "A's adjacency");
        near(gg.x[fd + adj + k], b_adj[k], 1e-7, "B's adjacency");
    }
    near(gg.x[adj + 4], 0, 0, "A's padding");
    /* Undirected neighbourhoods in the order edges are met. */
    const int want_start[5] = {0, 2, 4, 6, 8}, want[8] = {1, 2, 0, 3, 0, 3, 1, 2};
    for (int u = 0; u <= 4; u++)
        assert_int_equal(gg.nbr_start[u], want_start[u]);
    for (int k = 0; k < 8; k++)
        assert_int_equal(gg.nbr[k], want[k]);
    gdp_graph_free(&gg);
    cfg.gs_knn = 1; /* one of the two neighbours, drawn */
    prepare(&gg, g, &cfg, &rng);
    assert_int_equal(gg.nbr_start[4], 4);
    assert_true(gg.nbr[0] == 1 || gg.nbr[0] == 2);
    gdp_graph_free(&gg);
    graph_free(g);
}

/* Colocation: contract makes B and C (class 0) one unit placed by B; leader keeps four units
 * with C following B and out of the loss; expansion gives every member its unit's device. */
static void test_colocation_units(void **state)
{
    (void)state;
    const int cls[4] = {-1, 0, 0, -1};
    pb_graph *g = diamond(cls);
    gdp_net_config cfg = small_config();
    gdp_graph gg;
    pb_rng rng;
    pb_rng_seed(&rng, 1);
    prepare(&gg, g, &cfg, &rng);
    assert_int_equal(gg.n_units, 3);
    assert_int_equal(gg.unit_of[1], gg.unit_of[2]);
    const unsigned char ua[3] = {0, 1, 0};
    int dev[4];
    gdp_graph_expand(&gg, ua, dev);
    assert_true(dev[0] == 0 && dev[1] == 1 && dev[2] == 1 && dev[3] == 0);
    gdp_graph_free(&gg);
    cfg.colocation = GDP_COLOC_LEADER;
    prepare(&gg, g, &cfg, &rng);
    assert_int_equal(gg.n_units, 4);
    assert_int_equal(gg.n_loss, 3);
    near(gg.weight[gg.unit_of[2]], 0, 0, "follower weight");
    const unsigned char la[4] = {0, 1, 0, 0};
    gdp_graph_expand(&gg, la, dev);
    assert_true(dev[2] == 1);
    assert_int_equal(gdp_graph_splits_class(&gg, dev), 0);
    dev[2] = 0;
    assert_int_equal(gdp_graph_splits_class(&gg, dev), 1);
    gdp_graph_free(&gg);
    graph_free(g);
}

/* §4.2: N = 5, L = 2, M = 2: segments {0,1}, {2,3}, {4}; node 4 attends to memory rows 2, 3
 * and itself, so its output equals one layer applied to x[4] with memory x[2..3]; node 2 sees
 * memory rows 0, 1. */
static void test_segment_bookkeeping(void **state)
{
    (void)state;
    gdp_net_config cfg = small_config();
    pb_nn_params *p = pb_nn_params_new();
    pb_rng rng;
    pb_rng_seed(&rng, 9);
    pb_error err;
    pb_nn_trf layer;
    assert_int_equal(pb_nn_trf_init(&layer, p, "t", 4, 2, 2, 3, 1e-5f, 0, 0, &rng, &err), PB_OK);
    float x[20];
    for (int k = 0; k < 20; k++)
        x[k] = (float)sin(k * 0.7 + 0.3);
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *xs = pb_nn_constant(t, 5, 4, x);
    pb_nn_tensor *all = gdp_trf_segments(t, p, &layer, &cfg, xs, NULL);
    pb_nn_tensor *n4 = pb_nn_trf_forward(t, p, &layer, pb_nn_constant(t, 1, 4, x + 16),
                                         pb_nn_constant(t, 2, 4, x + 8), 1, NULL, NULL);
    pb_nn_tensor *n23 = pb_nn_trf_forward(t, p, &layer, pb_nn_constant(t, 2, 4, x + 8),
                                          pb_nn_constant(t, 2, 4, x), 1, NULL, NULL);
    pb_nn_tensor *n01 =
        pb_nn_trf_forward(t, p, &layer, pb_nn_constant(t, 2, 4, x), NULL, 1, NULL, NULL);
    if (pb_nn_tape_status(t, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(all->rows, 5);
    for (int k = 0; k < 4; k++) {
        near(all->data[16 + k], n4->data[k], 1e-6, "node 4");
        near(all->data[8 + k], n23->data[k], 1e-6, "node 2");
        near(all->data[12 + k], n23->data[4 + k], 1e-6, "node 3");
        near(all->data[k], n01->data[k], 1e-6, "node 0");
    }
    /* Memory 1 changes node 4 (it then sees node 3 only). */
    cfg.mem_len = 1;
    pb_nn_tensor *m1 = gdp_trf_segments(t, p, &layer, &cfg, xs, NULL);
    if (pb_nn_tape_status(t, &err))
        fail_msg("%s", err.msg);
    double diff = 0;
    for (int k = 0; k < 4; k++)
        diff += fabs(m1->data[16 + k] - n4->data[k]);
    assert_true(diff > 1e-4);
    pb_nn_tape_free(t);
    pb_nn_params_free(p);
}

/* The whole network on the diamond: rows are log-probabilities over the devices given. */
static void test_network_forward(void **state)
{
    (void)state;
    pb_graph *g = diamond(NULL);
    gdp_net_config cfg = small_config();
    cfg.superposition = 1;
    cfg.gs_layers = 2;
    gdp_graph gg;
    pb_rng rng;
    pb_rng_seed(&rng, 1);
    pb_error err;
    assert_int_equal(gdp_graph_prepare(&gg, g, &cfg, &rng, &err), PB_OK);
    pb_nn_params *p = pb_nn_params_new();
    gdp_net net;
    assert_int_equal(gdp_net_init(&net, &cfg, p, gg.fdim, &rng, &err), PB_OK);
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tape_reset(t, 1);
    pb_nn_tensor *lp = gdp_net_forward(t, p, &net, &gg, 3);
    if (pb_nn_tape_status(t, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(lp->rows, 4);
    assert_int_equal(lp->cols, 3);
    for (int v = 0; v < 4; v++)
        near(exp(lp->data[v * 3]) + exp(lp->data[v * 3 + 1]) + exp(lp->data[v * 3 + 2]), 1, 1e-5,
             "probabilities sum to 1");
    float seed[12] = {0};
    seed[0] = 1;
    assert_int_equal(pb_nn_backward(t, lp, seed, &err), PB_OK);
    /* The gradient reaches the first GraphSAGE layer and the conditioning layer. */
    const float *gr = pb_nn_params_grads(p);
    int ids[2] = {pb_nn_params_find(p, "gdp/sage0/w_comb"), pb_nn_params_find(p, "gdp/cond/w1")};
    for (int i = 0; i < 2; i++) {
        assert_true(ids[i] >= 0);
        int r, c;
        pb_nn_params_shape(p, ids[i], &r, &c);
        double s = 0;
        for (int k = 0; k < r * c; k++)
            s += fabs(gr[pb_nn_params_offset(p, ids[i]) + k]);
        assert_true(s > 0);
    }
    pb_nn_tape_free(t);
    pb_nn_params_free(p);
    gdp_graph_free(&gg);
    graph_free(g);
}

/* The full PPO loss through the whole network (GraphSAGE x2, the conditioning layer, two
 * Transformer-XL layers, superposition on every dense layer, the device softmax) against central
 * differences in every parameter value.  pi_old comes from the initial parameters; the loss is
 * taken at parameters moved by uniform noise of +-0.05, so the ratios differ from 1 (some
 * clipped, some not), with three rollouts of positive and negative advantage and the entropy term
 * (c_H = 0.05).  Memory is off: the Transformer-XL memory is gradient-free by design (§4.2), so
 * through it the analytic gradient is not the derivative a difference quotient measures; one
 * segment and two segments (their outputs concatenated) are checked.  Tolerance as in test_nn.c
 * (float32 network, loss in double): |numeric - analytic| <= 2e-3 + 1e-2 |analytic|, at h = 1e-2,
 * else 1e-3, else 1e-4 (the clipped ratio, ReLU and max-pool put kinks and strong curvature in
 * reach of the larger steps; at 1e-4 float rounding of the O(1) loss is ~1e-3).  A missing or
 * mis-signed term is off by the gradient's own size at every step. */
typedef struct loss_case {
    gdp_graph *gg;
    gdp_net *net;
    const float *old_logp;
    const unsigned char *const *acts;
    const double *adv;
    int n_roll, d;
} loss_case;

static double full_loss(pb_nn_tape *t, pb_nn_params *p, const loss_case *c, int grad)
{
    pb_error err;
    pb_nn_tape_reset(t, grad);
    pb_nn_tensor *lp = gdp_net_forward(t, p, c->net, c->gg, c->d);
    if (pb_nn_tape_status(t, &err))
        fail_msg("%s", err.msg);
    int n = c->gg->n_units;
    float seed[64] = {0}, old_a[16];
    assert_true(n * c->d <= 64 && n <= 16);
    double l = gdp_ppo_loss(lp->data, c->old_logp, n, c->d, c->acts, c->adv, c->n_roll, c->n_roll,
                            c->gg->weight, c->gg->n_loss, 0.2, 0.05, GDP_RATIO_NODE, old_a, seed);
    if (grad && pb_nn_backward(t, lp, seed, &err))
        fail_msg("%s", err.msg);
    return l;
}

static void full_loss_check(int seg_len, int mem_len)
{
    pb_graph *g = diamond(NULL);
    gdp_net_config cfg = small_config();
    cfg.superposition = 1;
    cfg.gs_layers = 2;
    cfg.trf_layers = 2;
    cfg.seg_len = seg_len;
    cfg.mem_len = mem_len;
    gdp_graph gg;
    pb_rng rng;
    pb_rng_seed(&rng, 3);
    prepare(&gg, g, &cfg, &rng);
    pb_nn_params *p = pb_nn_params_new();
    gdp_net net;
    pb_error err;
    assert_int_equal(gdp_net_init(&net, &cfg, p, gg.fdim, &rng, &err), PB_OK);
    pb_nn_tape *t = pb_nn_tape_new();
    const int d = 3;
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *lp0 = gdp_net_forward(t, p, &net, &gg, d);
    float old_logp[12];
    memcpy(old_logp, lp0->data, sizeof old_logp);
    size_t n = pb_nn_params_size(p);
    float *v = pb_nn_params_values(p);
    for (size_t k = 0; k < n; k++)
        v[k] += (float)(0.1 * pb_rng_uniform(&rng) - 0.05);
    const unsigned char a0[4] = {0, 1, 2, 0}, a1[4] = {2, 2, 1, 0}, a2[4] = {1, 0, 0, 2};
    const unsigned char *const acts[3] = {a0, a1, a2};
    const double adv[3] = {0.7, -1.3, 0.4};
    loss_case c = {&gg, &net, old_logp, acts, adv, 3, d};
    /* The loss is not flat: the ratios moved. */
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *lp1 = gdp_net_forward(t, p, &net, &gg, d);
    double moved = 0;
    for (int k = 0; k < 12; k++)
        moved += fabs(lp1->data[k] - old_logp[k]);
    assert_true(moved > 0.05);
    pb_nn_params_zero_grad(p);
    full_loss(t, p, &c, 1);
    float *ana = malloc(n * sizeof *ana);
    memcpy(ana, pb_nn_params_grads(p), n * sizeof *ana);
    double norm = 0;
    for (size_t k = 0; k < n; k++) {
        norm += fabs(ana[k]);
        int ok = 0;
        for (double h = 1e-2; h > 1e-5 && !ok; h /= 10) {
            float keep = v[k];
            v[k] = (float)(keep + h);
            double hp = (double)v[k] - keep, lp = full_loss(t, p, &c, 0);
            v[k] = (float)(keep - h);
            double hm = keep - (double)v[k], lm = full_loss(t, p, &c, 0);
            v[k] = keep;
            double num = (lp - lm) / (hp + hm);
            ok = fabs(num - ana[k]) <= 2e-3 + 1e-2 * fabs(ana[k]);
            if (!ok && h < 2e-4)
                fail_msg("value %zu: analytic %.6g, numeric %.6g (h = %g)", k, (double)ana[k], num,
                         h);
        }
    }
    assert_true(norm > 1e-2); /* the check is not vacuous */
    free(ana);
    pb_nn_tape_free(t);
    pb_nn_params_free(p);
    gdp_graph_free(&gg);
    graph_free(g);
}

static void test_full_loss_gradient(void **state)
{
    (void)state;
    full_loss_check(4, 0); /* one segment */
    full_loss_check(2, 0); /* two segments, no memory */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reward),
        cmocka_unit_test(test_baseline),
        cmocka_unit_test(test_ppo_worked_example),
        cmocka_unit_test(test_entropy_gradient),
        cmocka_unit_test(test_ppo_graph_ratio),
        cmocka_unit_test(test_features_and_neighbours),
        cmocka_unit_test(test_colocation_units),
        cmocka_unit_test(test_segment_bookkeeping),
        cmocka_unit_test(test_network_forward),
        cmocka_unit_test(test_full_loss_gradient),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
