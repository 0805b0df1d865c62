/* test_tag_gnn.c — TAG's heterogeneous GAT (plugins/shared/tag_gnn): the size of the reference
 * network, features of a search state worked out by hand (specs/tag.md §8.1-8.2), the whole
 * network's gradient against finite differences, priors, training and its determinism. */
#include "model/graph.h"
#include "placebench.h"
#include "tag_gnn.h"
#include "tag_mcts.h"
#include "config/cluster.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------------ a state worked by hand */

/*
 * Ops a, b, c, d (one port each: 400, 800, 40, 0 bytes); edges a->c, a->b, b->c, c->d, inserted
 * in that order so that the row-major (i, j) walk has to sort a's successors.  Op groups
 * g0 = {a, b}, g1 = {c, d}.  Device groups t0 = devices {0, 1} (memory 1000, intra 10) and
 * t1 = device {2} (memory 2000).  Bandwidths t0->t1 4, t1->t0 2.
 */
typedef struct hand_state {
    pb_graph *ops;
    int g0_ops[2], g1_ops[2];
    tag_op_group groups[2];
    int t0_dev[2], t1_dev[1];
    tag_device_group tasks[2];
    double bw[4];
    double place[2 * 2 * TAG_N_BATCH];
    unsigned char placed[7 * 2];
    int comm[7], ndev[7];
    tag_actions actions;
    int decided[1];
    double makespan[4], idle[4], peak[3], busy[3];
    tag_feedback fb;
    tag_state st;
} hand_state;

static pb_graph *hand_graph(void)
{
    const char *names[] = {"a", "b", "c", "d"};
    const double bytes[] = {400, 800, 40, 0};
    pb_error err;
    graph_builder *b = graph_builder_new("hand");
    for (int i = 0; i < 4; i++) {
        graph_node_attrs a = {0};
        a.cost_us = 1;
        a.n_ports = 1;
        a.port_bytes = &bytes[i];
        a.colocation = -1;
        assert_int_equal(graph_add_node(b, names[i], &a, &err), i);
    }
    const int edges[][2] = {{0, 2}, {0, 1}, {1, 2}, {2, 3}};
    for (int i = 0; i < 4; i++)
        assert_true(graph_add_edge(b, edges[i][0], edges[i][1], 0, &err) >= 0);
    pb_graph *g;
    assert_int_equal(graph_build(b, &g, &err), PB_OK);
    return g;
}

static void hand_init(hand_state *h)
{
    memset(h, 0, sizeof *h);
    h->ops = hand_graph();
    h->g0_ops[0] = 0, h->g0_ops[1] = 1, h->g1_ops[0] = 2, h->g1_ops[1] = 3;
    h->groups[0] = (tag_op_group){.n_ops = 2,
                                  .ops = h->g0_ops,
                                  .time_us = {30, 16, 8, 4},
                                  .param_bytes = 4000,
                                  .intra_bytes = 1600};
    h->groups[1] = (tag_op_group){.n_ops = 2,
                                  .ops = h->g1_ops,
                                  .time_us = {40, 20, 10, 5},
                                  .param_bytes = 0,
                                  .intra_bytes = 160};
    h->t0_dev[0] = 0, h->t0_dev[1] = 1, h->t1_dev[0] = 2;
    h->tasks[0] = (tag_device_group){
        .n_devices = 2, .devices = h->t0_dev, .memory_bytes = 1000, .intra_bandwidth = 10};
    h->tasks[1] = (tag_device_group){
        .n_devices = 1, .devices = h->t1_dev, .memory_bytes = 2000, .intra_bandwidth = 0};
    const double bw[4] = {10, 4, 2, 0};
    memcpy(h->bw, bw, sizeof bw);
    const double place[] = {10, 6, 4, 2, 5, 3, 2, 1, 20, 10, 5, 3, 25, 15, 10, 5};
    memcpy(h->place, place, sizeof place);
    /* §6's expansion for T = 2: (0,1) PS; (1,0) PS AR MP; (1,1) PS AR MP. */
    const unsigned char placed[] = {0, 1, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1};
    const int comm[] = {0, 0, 1, 2, 0, 1, 2}, ndev[] = {1, 2, 2, 2, 3, 3, 3};
    memcpy(h->placed, placed, sizeof placed);
    memcpy(h->comm, comm, sizeof comm);
    memcpy(h->ndev, ndev, sizeof ndev);
    h->actions = (tag_actions){7, 2, h->placed, h->comm, h->ndev};
    h->decided[0] = 3; /* (1,0) MP */
    const double mk[] = {10, 20, 30, 50}, idle[] = {0, 5, 0, 0}, peak[] = {500, 250, 1000},
                 busy[] = {100, 50, 99};
    memcpy(h->makespan, mk, sizeof mk);
    memcpy(h->idle, idle, sizeof idle);
    memcpy(h->peak, peak, sizeof peak);
    memcpy(h->busy, busy, sizeof busy);
    h->fb = (tag_feedback){.valid = 1,
                           .feasible = 1,
                           .step_time_us = 100,
                           .op_makespan_us = h->makespan,
                           .op_idle_after_us = h->idle,
                           .device_peak_bytes = h->peak,
                           .device_busy_us = h->busy};
    h->st = (tag_state){.struct_size = sizeof h->st,
                        .op_graph = h->ops,
                        .n_groups = 2,
                        .groups = h->groups,
                        .n_tasks = 2,
                        .tasks = h->tasks,
                        .task_bandwidth = h->bw,
                        .place_time_us = h->place,
                        .actions = &h->actions,
                        .n_decided = 1,
                        .decided = h->decided,
                        .next_group = 1,
                        .feedback = &h->fb,
                        .baseline_comm = TAG_COMM_ALLREDUCE,
                        .baseline_us = 120};
}

static void hand_free(hand_state *h)
{
    graph_free(h->ops);
}

static void expect_floats(const float *got, const double *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (fabs(got[i] - want[i]) > 1e-6)
            fail_msg("%s[%d]: got %.9g, expected %.9g", what, i, (double)got[i], want[i]);
}

static void test_features_by_hand(void **state)
{
    (void)state;
    hand_state h;
    hand_init(&h);
    tag_gnn_options o;
    tag_gnn_options_default(&o);
    tag_gnn_features f = {0};
    pb_error err;
    assert_int_equal(tag_gnn_features_build(&f, &h.st, 1, &o, &err), PB_OK);
    const tag_gnn_input *in = &f.in;
    /* CL2 = ‖(30, 40)‖ = 50; Bmax = 10 (t0's intra); CL2·Bmax = 500.  Both groups take the
     * effective action of decided group 0: (1,0) MP.  Makespan g0 = (10 + 20) / 50 / 2. */
    const double op[] = {0.6, 0.32, 0.16, 0.08, 2, 0.8,  0, 0, 1, 0.3, 0.05, 1, 0,
                         0.8, 0.4,  0.2,  0.1,  0, 0.08, 0, 0, 1, 0.8, 0,    0, 1};
    expect_floats(in->op_feat, op, 26, "op_feat");
    /* t0: 2/4, 1000/500, 10/10, max(500, 250)/1000, mean(100 div 100, 50 div 100) = 0.5;
     * t1: 1/4, 2000/500, 0, 1000/2000, 99 div 100 = 0. */
    const double dev[] = {0.5, 2, 1, 0.5, 0.5, 0.25, 4, 0, 0.5, 0};
    expect_floats(in->dev_feat, dev, 10, "dev_feat");
    /* Links: pair (0,1) gives 0->1, 1->0; pair (1,0) gives 1->0, 0->1 (duplicated, §8.1). */
    assert_int_equal(in->n_link, 4);
    const int lsrc[] = {0, 1, 1, 0}, ldst[] = {1, 0, 0, 1};
    assert_memory_equal(in->link_src, lsrc, sizeof lsrc);
    assert_memory_equal(in->link_dst, ldst, sizeof ldst);
    expect_floats(in->link_feat, (double[]){0.4, 0.2, 0.2, 0.4}, 4, "link_feat");
    /* Prev, first seen over (i, j) row-major: (a,b) g0->g0, (a,c) g0->g1, (b,c) again, (c,d)
     * g1->g1; features all 0 in the reference. */
    assert_int_equal(in->n_prev, 3);
    const int psrc[] = {0, 0, 1}, pdst[] = {0, 1, 1};
    assert_memory_equal(in->prev_src, psrc, sizeof psrc);
    assert_memory_equal(in->prev_dst, pdst, sizeof pdst);
    expect_floats(in->prev_feat, (double[]){0, 0, 0}, 3, "prev_feat");
    /* Place: times / 50 and the placed bit of (1,0). */
    const double place[] = {0.2, 0.12, 0.08, 0.04, 1, 0.1, 0.06, 0.04, 0.02, 0,
                            0.4, 0.2,  0.1,  0.06, 1, 0.5, 0.3,  0.2,  0.1,  0};
    expect_floats(in->place_feat, place, 20, "place_feat");
    assert_int_equal(in->group, 1);
    assert_int_equal(in->n_cand, 7);
    assert_memory_equal(in->cand_comm, h.comm, sizeof h.comm);

    /* The paper's variants: float utilisation (t0 (1 + 0.5)/2, t1 0.99) and the tensor edge
     * feature in elements / 500: g0->g0 100, g0->g1 100 + 200, g1->g1 10. */
    o.float_utilisation = 1;
    o.tensor_edge_features = 1;
    assert_int_equal(tag_gnn_features_build(&f, &h.st, 1, &o, &err), PB_OK);
    assert_float_equal(in->dev_feat[4], 0.75, 1e-6);
    assert_float_equal(in->dev_feat[9], 0.99, 1e-6);
    expect_floats(in->prev_feat, (double[]){0.2, 0.6, 0.02}, 3, "prev_feat (fixed)");

    /* No decided group: every group takes the baseline, all device groups with AllReduce. */
    h.st.n_decided = 0;
    assert_int_equal(tag_gnn_features_build(&f, &h.st, 0, &o, &err), PB_OK);
    assert_float_equal(in->op_feat[7], 1, 0);
    assert_float_equal(in->op_feat[11], 0, 0);
    assert_float_equal(in->op_feat[12], 1, 0);
    assert_float_equal(in->place_feat[9], 1, 0);

    /* A DUPLICATE action (comm 3) needs the 4-option network; with it the op features are 14
     * wide, the one-hot four. */
    h.comm[6] = TAG_COMM_DUPLICATE;
    assert_int_equal(tag_gnn_features_build(&f, &h.st, 0, &o, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "action 6 has comm option 3"));
    o.n_comm = 4;
    assert_int_equal(tag_gnn_features_build(&f, &h.st, 0, &o, &err), PB_OK);
    assert_int_equal(in->n_comm, 4);
    expect_floats(in->op_feat,
                  (double[]){0.6, 0.32, 0.16, 0.08, 2, 0.8, 0, 1, 0, 0, 0.3, 0.05, 0, 1}, 14,
                  "op_feat (4 comm options)");
    o.n_comm = 3;
    h.comm[6] = TAG_COMM_MP;

    /* Bad state: a decided action out of range. */
    h.st.n_decided = 1;
    h.decided[0] = 7;
    assert_int_equal(tag_gnn_features_build(&f, &h.st, 1, &o, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "decided[0] = 7"));
    tag_gnn_features_free(&f);
    hand_free(&h);
}

/* ------------------------------------------------------------------ the network */

static void test_reference_size(void **state)
{
    (void)state;
    tag_gnn_options o;
    tag_gnn_options_default(&o);
    pb_error err;
    tag_gnn *n = tag_gnn_new(&o, 1, &err);
    assert_non_null(n);
    /* §8.3: 14,374,273 values including BatchNorm statistics. */
    assert_int_equal(pb_nn_params_size(tag_gnn_params(n)), 14374273);
    tag_gnn_free(n);
    /* A 4th comm option (DUPLICATE) widens the op encoder's and the decoder's input by one row
     * of 256. */
    o.n_comm = 4;
    n = tag_gnn_new(&o, 1, &err);
    assert_non_null(n);
    assert_int_equal(pb_nn_params_size(tag_gnn_params(n)), 14374273 + 2 * 256);
    tag_gnn_free(n);
    o.n_comm = 5;
    assert_null(tag_gnn_new(&o, 1, &err));
    assert_non_null(strstr(err.msg, "n_comm 5"));
}

static tag_gnn_options tiny_options(int gamma)
{
    tag_gnn_options o;
    tag_gnn_options_default(&o);
    o.hidden = 3;
    o.edge_hidden = 2;
    o.heads = 2;
    o.layers = 2;
    o.gamma = gamma;
    return o;
}

static double fd_loss(tag_gnn *n, pb_nn_tape *t, const tag_gnn_input *in, const float *r)
{
    pb_error err;
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *y = tag_gnn_forward(n, t, in, &err);
    assert_non_null(y);
    double l = 0;
    for (int c = 0; c < y->cols; c++)
        l += (double)r[c] * y->data[c];
    return l;
}

static double fd_numeric(tag_gnn *n, pb_nn_tape *t, const tag_gnn_input *in, const float *r,
                         size_t k, double h)
{
    float *v = pb_nn_params_values(tag_gnn_params(n)), keep = v[k];
    v[k] = (float)(keep + h);
    double hp = (double)v[k] - keep, lp = fd_loss(n, t, in, r);
    v[k] = (float)(keep - h);
    double hm = keep - (double)v[k], lm = fd_loss(n, t, in, r);
    v[k] = keep;
    return (lp - lm) / (hp + hm);
}

/* The whole network's gradient (encoders, GAT layers, decoder) against central differences,
 * with the tolerances of the NN core's tests (tests/unit/nn/test_nn.c). */
static void check_network_gradient(int gamma)
{
    hand_state h;
    hand_init(&h);
    tag_gnn_options o = tiny_options(gamma);
    tag_gnn_features f = {0};
    pb_error err;
    assert_int_equal(tag_gnn_features_build(&f, &h.st, 1, &o, &err), PB_OK);
    tag_gnn *n = tag_gnn_new(&o, 5, &err);
    assert_non_null(n);
    pb_nn_params *p = tag_gnn_params(n);
    /* Non-trivial BatchNorm affine values so their gradients are tested away from 1 and 0. */
    pb_rng rng;
    pb_rng_seed(&rng, 9);
    for (int id = 0; id < pb_nn_params_count(p); id++) {
        const char *name = pb_nn_params_name(p, id);
        if (strstr(name, "bn_gamma") || strstr(name, "bn_beta") || strstr(name, "/b")) {
            int rows, cols;
            pb_nn_params_shape(p, id, &rows, &cols);
            float *v = pb_nn_params_values(p) + pb_nn_params_offset(p, id);
            for (int k = 0; k < rows * cols; k++)
                v[k] += (float)(0.4 * pb_rng_uniform(&rng) - 0.2);
        }
    }
    pb_nn_tape *t = pb_nn_tape_new();
    pb_nn_tape_reset(t, 1);
    pb_nn_tensor *y = tag_gnn_forward(n, t, &f.in, &err);
    if (pb_nn_tape_status(t, &err) != PB_OK || !y)
        fail_msg("forward: %s", err.msg);
    float r[7];
    for (int c = 0; c < 7; c++)
        r[c] = (float)(2 * pb_rng_uniform(&rng) - 1);
    pb_nn_params_zero_grad(p);
    assert_int_equal(pb_nn_backward(t, y, r, &err), PB_OK);
    size_t size = pb_nn_params_size(p);
    float *ana = malloc(size * sizeof *ana);
    memcpy(ana, pb_nn_params_grads(p), size * sizeof *ana);
    /* BatchNorm statistics are not trained (§8.3): no gradient reaches them. */
    unsigned char *stat = calloc(size, 1);
    for (int id = 0; id < pb_nn_params_count(p); id++) {
        const char *name = pb_nn_params_name(p, id);
        int rows, cols;
        pb_nn_params_shape(p, id, &rows, &cols);
        if (strstr(name, "bn_mean") || strstr(name, "bn_var"))
            memset(stat + pb_nn_params_offset(p, id), 1, (size_t)rows * (size_t)cols);
    }
    int nonzero = 0;
    for (size_t k = 0; k < size; k++) {
        if (stat[k]) {
            assert_true(ana[k] == 0);
            continue;
        }
        nonzero += ana[k] != 0;
        double num = fd_numeric(n, t, &f.in, r, k, 1e-2);
        if (fabs(num - ana[k]) <= 2e-3 + 1e-2 * fabs(ana[k]))
            continue;
        double fine = fd_numeric(n, t, &f.in, r, k, 1e-3);
        if (fabs(fine - ana[k]) > 2e-3 + 1e-2 * fabs(ana[k]))
            fail_msg("%s value %zu: analytic %.6g, numeric %.6g / %.6g", gamma ? "gamma" : "mean",
                     k, (double)ana[k], num, fine);
    }
    /* Everything but the BatchNorm statistics (1/3 of the BN values) gets a gradient. */
    assert_true(nonzero > (int)(size / 2));
    free(stat);
    free(ana);
    pb_nn_tape_free(t);
    tag_gnn_free(n);
    tag_gnn_features_free(&f);
    hand_free(&h);
}

static void test_network_gradient(void **state)
{
    (void)state;
    check_network_gradient(0);
    check_network_gradient(1);
}

static void test_priors(void **state)
{
    (void)state;
    hand_state h;
    hand_init(&h);
    tag_gnn_options o = tiny_options(0);
    o.hidden = 8;
    pb_error err;
    tag_gnn *n = tag_gnn_new(&o, 3, &err), *same = tag_gnn_new(&o, 3, &err),
            *other = tag_gnn_new(&o, 4, &err);
    float p[7], q[7], r[7];
    assert_int_equal(tag_gnn_prior_hook(n, &h.st, 1, p, &err), PB_OK);
    assert_int_equal(tag_gnn_prior_hook(same, &h.st, 1, q, &err), PB_OK);
    assert_int_equal(tag_gnn_prior_hook(other, &h.st, 1, r, &err), PB_OK);
    double s = 0;
    for (int c = 0; c < 7; c++) {
        assert_true(p[c] > 0);
        s += p[c];
    }
    assert_float_equal(s, 1, 1e-5);
    assert_memory_equal(p, q, sizeof p);
    assert_memory_not_equal(p, r, sizeof p);
    /* Candidates are scored independently: swapping two swaps their priors. */
    tag_gnn_features f = {0};
    assert_int_equal(tag_gnn_features_build(&f, &h.st, 1, &o, &err), PB_OK);
    int *comm = (int *)f.in.cand_comm;
    unsigned char *placed = (unsigned char *)f.in.cand_placed;
    int c1 = comm[1];
    comm[1] = comm[5], comm[5] = c1;
    for (int t = 0; t < 2; t++) {
        unsigned char x = placed[1 * 2 + t];
        placed[1 * 2 + t] = placed[5 * 2 + t], placed[5 * 2 + t] = x;
    }
    assert_int_equal(tag_gnn_priors(n, &f.in, q, &err), PB_OK);
    assert_float_equal(q[1], p[5], 1e-6);
    assert_float_equal(q[5], p[1], 1e-6);
    assert_float_equal(q[0], p[0], 1e-6);
    /* Bad input names the field. */
    comm[2] = 3;
    assert_int_equal(tag_gnn_priors(n, &f.in, q, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "cand_comm[2] = 3"));
    tag_gnn_features_free(&f);
    tag_gnn_free(n);
    tag_gnn_free(same);
    tag_gnn_free(other);
    hand_free(&h);
}

/* ------------------------------------------------------------------ training */

/* Two samples of the hand state h (which it changes) for a network of options o. */
static void tiny_samples(hand_state *h, const tag_gnn_options *o, tag_gnn_features *f,
                         tag_gnn_sample s[2])
{
    pb_error err;
    const double visits0[7] = {0, 1, 2, 30, 1, 5, 1}, visits1[7] = {10, 0, 0, 0, 0, 20, 0};
    assert_int_equal(tag_gnn_features_build(f, &h->st, 1, o, &err), PB_OK);
    assert_int_equal(tag_gnn_sample_set(&s[0], &f->in, visits0, &err), PB_OK);
    h->st.n_decided = 0;
    assert_int_equal(tag_gnn_features_build(f, &h->st, 0, o, &err), PB_OK);
    assert_int_equal(tag_gnn_sample_set(&s[1], &f->in, visits1, &err), PB_OK);
}

/* Trains a tiny network on two samples of the hand state; returns the losses before and after
 * and the final parameters (caller frees). */
static float *train_tiny(uint64_t seed, double *before, double *after, size_t *size)
{
    hand_state h;
    hand_init(&h);
    tag_gnn_options o = tiny_options(0);
    o.hidden = 8;
    pb_error err;
    tag_gnn *n = tag_gnn_new(&o, seed, &err);
    assert_non_null(n);
    tag_gnn_features f = {0};
    tag_gnn_sample s[2] = {0};
    tiny_samples(&h, &o, &f, s);
    assert_float_equal(s[0].pi[3], 30.0 / 40, 1e-7);
    tag_gnn_train_options to;
    tag_gnn_train_options_default(&to);
    to.lr = 3e-3;
    tag_gnn_trainer *tr = tag_gnn_trainer_new(n, &to, &err);
    assert_non_null(tr);
    double l0, l1;
    *before = 0;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(tag_gnn_loss(n, &s[i], &l0, &err), PB_OK);
        *before += l0;
    }
    pb_rng rng;
    pb_rng_seed(&rng, seed + 100);
    assert_int_equal(tag_gnn_train_epoch(tr, s, 2, 200, &rng, NULL, &err), PB_OK);
    *after = 0;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(tag_gnn_loss(n, &s[i], &l1, &err), PB_OK);
        *after += l1;
    }
    *size = pb_nn_params_size(tag_gnn_params(n));
    float *v = malloc(*size * sizeof *v);
    memcpy(v, pb_nn_params_values(tag_gnn_params(n)), *size * sizeof *v);
    tag_gnn_trainer_free(tr);
    tag_gnn_sample_free(&s[0]);
    tag_gnn_sample_free(&s[1]);
    tag_gnn_features_free(&f);
    tag_gnn_free(n);
    hand_free(&h);
    return v;
}

static void test_training(void **state)
{
    (void)state;
    double b1, a1, b2, a2;
    size_t n1, n2;
    float *v1 = train_tiny(11, &b1, &a1, &n1), *v2 = train_tiny(11, &b2, &a2, &n2);
    /* Cross-entropy is at least the targets' entropy, H(pi0) + H(pi1) = 0.9023 + 0.6365. */
    const double pi[] = {1 / 40., 2 / 40., 30 / 40., 1 / 40., 5 / 40., 1 / 40., 1 / 3., 2 / 3.};
    double entropy = 0;
    for (int i = 0; i < 8; i++)
        entropy -= pi[i] * log(pi[i]);
    assert_float_equal(entropy, 1.5388, 1e-3);
    assert_true(a1 < b1 - 0.5);
    assert_true(a1 >= entropy - 1e-4);
    /* Same seed, same result, bit for bit. */
    assert_int_equal(n1, n2);
    assert_memory_equal(v1, v2, n1 * sizeof *v1);
    assert_true(b1 == b2 && a1 == a2);
    free(v1);
    free(v2);
}

/* One optimizer across a chain (TAG's train.py keeps one Adam): 3 steps on sample 0 and 3 on
 * sample 1 with one trainer give, bit for bit, what a second network and trainer give after
 * loading the first's parameters and Adam state (pb_nn_params_load_adam) and taking the 3 steps
 * on sample 1.  Loading the parameters alone (a fresh Adam, adam_state=restart) does not. */
static void test_chained_training(void **state)
{
    (void)state;
    hand_state h;
    hand_init(&h);
    tag_gnn_options o = tiny_options(0);
    o.hidden = 8;
    pb_error err;
    tag_gnn_features f = {0};
    tag_gnn_sample s[2] = {0};
    tiny_samples(&h, &o, &f, s);
    tag_gnn_train_options to;
    tag_gnn_train_options_default(&to);
    to.lr = 3e-3;
    tag_gnn *one = tag_gnn_new(&o, 31, &err), *first = tag_gnn_new(&o, 31, &err);
    tag_gnn *second = tag_gnn_new(&o, 99, &err), *fresh = tag_gnn_new(&o, 98, &err);
    tag_gnn_trainer *t_one = tag_gnn_trainer_new(one, &to, &err);
    tag_gnn_trainer *t_first = tag_gnn_trainer_new(first, &to, &err);
    tag_gnn_trainer *t_second = tag_gnn_trainer_new(second, &to, &err);
    tag_gnn_trainer *t_fresh = tag_gnn_trainer_new(fresh, &to, &err);
    for (int k = 0; k < 6; k++)
        assert_int_equal(tag_gnn_train_step(t_one, &s[k / 3], NULL, &err), PB_OK);
    for (int k = 0; k < 3; k++)
        assert_int_equal(tag_gnn_train_step(t_first, &s[0], NULL, &err), PB_OK);
    char path[] = "/tmp/test_tag_gnn_chain_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(
        pb_nn_params_save_adam(tag_gnn_params(first), tag_gnn_trainer_adam(t_first), path, &err),
        PB_OK);
    int restored = 0;
    assert_int_equal(pb_nn_params_load_adam(tag_gnn_params(second), tag_gnn_trainer_adam(t_second),
                                            path, &restored, &err),
                     PB_OK);
    assert_int_equal(restored, 1);
    assert_int_equal(pb_nn_params_load(tag_gnn_params(fresh), path, &err), PB_OK);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(tag_gnn_train_step(t_second, &s[1], NULL, &err), PB_OK);
        assert_int_equal(tag_gnn_train_step(t_fresh, &s[1], NULL, &err), PB_OK);
    }
    assert_int_equal(pb_nn_adam_steps(tag_gnn_trainer_adam(t_second)), 6);
    size_t n = pb_nn_params_size(tag_gnn_params(one));
    assert_memory_equal(pb_nn_params_values(tag_gnn_params(second)),
                        pb_nn_params_values(tag_gnn_params(one)), n * sizeof(float));
    assert_memory_not_equal(pb_nn_params_values(tag_gnn_params(fresh)),
                            pb_nn_params_values(tag_gnn_params(one)), n * sizeof(float));
    unlink(path);
    tag_gnn_trainer_free(t_one);
    tag_gnn_trainer_free(t_first);
    tag_gnn_trainer_free(t_second);
    tag_gnn_trainer_free(t_fresh);
    tag_gnn_free(one);
    tag_gnn_free(first);
    tag_gnn_free(second);
    tag_gnn_free(fresh);
    tag_gnn_sample_free(&s[0]);
    tag_gnn_sample_free(&s[1]);
    tag_gnn_features_free(&f);
    hand_free(&h);
}

static void test_save_load(void **state)
{
    (void)state;
    hand_state h;
    hand_init(&h);
    tag_gnn_options o = tiny_options(1);
    pb_error err;
    tag_gnn *a = tag_gnn_new(&o, 21, &err), *b = tag_gnn_new(&o, 22, &err);
    char path[] = "/tmp/test_tag_gnn_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(pb_nn_params_save(tag_gnn_params(a), path, &err), PB_OK);
    assert_int_equal(pb_nn_params_load(tag_gnn_params(b), path, &err), PB_OK);
    float p[7], q[7];
    assert_int_equal(tag_gnn_prior_hook(a, &h.st, 1, p, &err), PB_OK);
    assert_int_equal(tag_gnn_prior_hook(b, &h.st, 1, q, &err), PB_OK);
    assert_memory_equal(p, q, sizeof p);
    /* A network of another shape refuses the file. */
    tag_gnn_options wide = o;
    wide.hidden = 4;
    tag_gnn *c = tag_gnn_new(&wide, 1, &err);
    assert_int_equal(pb_nn_params_load(tag_gnn_params(c), path, &err), PB_ERR);
    unlink(path);
    tag_gnn_free(a);
    tag_gnn_free(b);
    tag_gnn_free(c);
    hand_free(&h);
}

/* ------------------------------------------------------------------ self-play (tag_mcts) */

/* A simulator whose step time depends on the strategy of the first and last node only. */
typedef struct sp_host {
    pb_host host;
    int n_ops, n_devices;
    long calls;
} sp_host;

static int sp_simulate(void *ctx, const pb_strategy *s, pb_eval *out, pb_error *err)
{
    sp_host *h = ctx;
    (void)err;
    int last = s->n_nodes - 1;
    out->step_time_us = 100 + (s->device[0] * 7 + s->replication[0] * 3 + s->device[last] * 5) % 13;
    out->feasible = 1;
    for (int d = 0; d < h->n_devices; d++) {
        if (out->peak_mem_bytes)
            out->peak_mem_bytes[d] = 1e9;
        if (out->busy_us)
            out->busy_us[d] = 50;
    }
    for (int v = 0; v < h->n_ops; v++) {
        if (out->node_start_us)
            out->node_start_us[v] = v;
        if (out->node_end_us)
            out->node_end_us[v] = v + 2;
        if (out->node_idle_after_us)
            out->node_idle_after_us[v] = 1;
    }
    h->calls++;
    return PB_OK;
}

static void sp_progress(void *ctx, const pb_progress *p)
{
    (void)ctx, (void)p;
}

static void sp_log(void *ctx, int level, const char *msg)
{
    (void)ctx, (void)level, (void)msg;
}

static int sp_deadline(void *ctx)
{
    (void)ctx;
    return 0;
}

/* What the record callback saw. */
typedef struct sp_seen {
    int n, n_groups, n_actions;
    int decided[16];
    double sum[16];
    double visits[16][16];
    int feedback_ok;
    tag_gnn *gnn; /* non-NULL: also turn each record into a training sample */
} sp_seen;

static int sp_record(void *ctx, const tag_state *st, const double *visits, pb_error *err)
{
    sp_seen *s = ctx;
    assert_true(s->n < 16 && st->actions->n_actions <= 16);
    s->n_groups = st->n_groups;
    s->n_actions = st->actions->n_actions;
    s->decided[s->n] = st->n_decided;
    assert_int_equal(st->next_group, st->n_decided);
    s->feedback_ok &= st->feedback->valid && st->feedback->op_makespan_us[0] == 2;
    for (int a = 0; a < s->n_actions; a++) {
        s->visits[s->n][a] = visits[a];
        s->sum[s->n] += visits[a];
    }
    if (s->gnn) {
        tag_gnn_features f = {0};
        tag_gnn_sample smp = {0};
        if (tag_gnn_features_build(&f, st, st->next_group, tag_gnn_get_options(s->gnn), err) ||
            tag_gnn_sample_set(&smp, &f.in, visits, err))
            return PB_ERR;
        tag_gnn_sample_free(&smp);
        tag_gnn_features_free(&f);
    }
    s->n++;
    return PB_OK;
}

/* A chain of 24 ops on 6 testbed GPUs (4 V100 on one machine, 2 1080Ti on another). */
static void run_selfplay(uint64_t seed, long long limit, tag_gnn *gnn, sp_seen *seen)
{
    const int n = 24;
    pb_error err;
    graph_builder *b = graph_builder_new("chain");
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "op%02d", i);
        double bytes = 1000;
        graph_node_attrs a = {0};
        a.cost_us = 10 + (i * 37) % 50;
        a.n_ports = 1;
        a.port_bytes = &bytes;
        a.colocation = -1;
        a.split = PB_SPLIT_BATCH;
        assert_int_equal(graph_add_node(b, name, &a, &err), i);
    }
    for (int i = 0; i + 1 < n; i++)
        assert_true(graph_add_edge(b, i, i + 1, 0, &err) >= 0);
    pb_graph *g;
    assert_int_equal(graph_build(b, &g, &err), PB_OK);
    pb_cluster *c;
    if (cluster_preset("tag-testbed", 6, &c, &err))
        fail_msg("cluster: %s", err.msg);
    sp_host h = {{sizeof h.host, &h, sp_simulate, sp_progress, sp_log, sp_deadline}, n, 6, 0};
    pb_budget budget = {sizeof budget, 0, 0, 0};
    pb_problem p = {
        .struct_size = sizeof p, .graph = g, .op_graph = g, .cluster = c, .budget = &budget};
    tag_mcts_opts o = {.playouts = 1,
                       .max_groups = 12,
                       .balance = 5,
                       .device_groups = TAG_TASKS_MACHINE,
                       .shuffle = 1};
    tag_mcts *m;
    if (tag_mcts_new(&p, &h.host, &o, &m, &err))
        fail_msg("tag_mcts_new: %s", err.msg);
    memset(seen, 0, sizeof *seen);
    seen->feedback_ok = 1;
    seen->gnn = gnn;
    if (tag_mcts_selfplay(m, gnn ? tag_gnn_prior_hook : NULL, gnn, seed, limit, sp_record, seen,
                          &err))
        fail_msg("self-play: %s", err.msg);
    tag_mcts_free(m);
    cluster_free(c);
    graph_free(g);
}

static void test_selfplay(void **state)
{
    (void)state;
    sp_seen a, b, c;
    run_selfplay(7, 40, NULL, &a);
    /* Two machines: 2 device groups, placements 01, 10, 11 with PS, AllReduce, MP each. */
    assert_int_equal(a.n_actions, 9);
    /* §7.4: G // 4 moves (at least one), the root one group deeper at each. */
    int moves = a.n_groups / 4 > 0 ? a.n_groups / 4 : 1;
    if (a.n_groups < 4)
        fail_msg("%d op groups", a.n_groups);
    assert_int_equal(a.n, moves);
    for (int i = 0; i < a.n; i++)
        assert_int_equal(a.decided[i], i);
    /* The first root: playouts until 40 visits = min((G - 0) 2^2 8, 40); the first playout
     * stops at the root itself (evaluated, expanded), the other 39 reach its children.  A later
     * root, once a child, has 40 visits too, its first one its own: 39 below it. */
    for (int i = 0; i < a.n; i++)
        assert_float_equal(a.sum[i], 39, 0);
    assert_true(a.feedback_ok);
    /* Deterministic in the seed. */
    run_selfplay(7, 40, NULL, &b);
    assert_memory_equal(a.visits, b.visits, sizeof a.visits);
    run_selfplay(8, 40, NULL, &c);
    assert_memory_not_equal(a.visits, c.visits, sizeof a.visits);
    /* A limit of 1 still visits one child: the root's own visit teaches nothing. */
    run_selfplay(7, 1, NULL, &c);
    assert_int_equal(c.n, moves);
    for (int i = 0; i < c.n; i++)
        assert_float_equal(c.sum[i], 1, 0);
    /* With the GNN's priors, and every record a valid training sample. */
    tag_gnn_options o = tiny_options(0);
    pb_error err;
    tag_gnn *n = tag_gnn_new(&o, 1, &err);
    run_selfplay(7, 10, n, &c);
    assert_int_equal(c.n, moves);
    assert_float_equal(c.sum[0], 9, 0);
    tag_gnn_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_features_by_hand), cmocka_unit_test(test_reference_size),
        cmocka_unit_test(test_network_gradient), cmocka_unit_test(test_priors),
        cmocka_unit_test(test_training),         cmocka_unit_test(test_save_load),
        cmocka_unit_test(test_chained_training), cmocka_unit_test(test_selfplay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
