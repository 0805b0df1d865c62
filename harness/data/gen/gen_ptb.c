/* gen_ptb.c — the ptb family: Penn Treebank language models from ENAS recurrent cells, unrolled. */
#include "gen.h"

/*
 * What a graph is (after ENAS, Pham et al. 2018, recurrent cell search space, fixed-arc child):
 *   the tokens of T BPTT steps are looked up in a tied embedding (vocabulary V, width H);
 *   every step runs the cell: node 0 is  s0 = s + c0 * (tanh(x W_x + s W_s) - s)  computed from
 *   one matmul of [x_t, s_{t-1}] with w_prev and a split into the candidate and the highway gate
 *   (sigmoid); node i = 1..N-1 reads one earlier node p(i), computes one matmul with its own
 *   w_skip_i, applies its activation f_i in {tanh, ReLU, identity, sigmoid} to one half and a
 *   sigmoid gate to the other, and combines highway-style  s_i = s_p + c_i * (f_i(h_i) - s_p);
 *   the step's output (and next state) is the average of the nodes no other node reads;
 *   the T outputs are concatenated and multiplied by the transposed embedding (tied softmax),
 *   then softmax cross-entropy; gradients are clipped by global norm and applied with plain SGD,
 *   as ENAS trains its PTB child models.  The last state is saved for the next batch.
 * Per graph the seed draws the cell (p(i) uniform over earlier nodes, redrawn until no chain of
 * nodes is deeper than GEN_PTB_MAX_DEPTH; f_i uniform); the node count N and the BPTT steps T are
 * spread over their ranges across graph indices.  H = 200, V = 10000, batch 64 (gen_options width,
 * batch, steps_min/max; ENAS's search child is batch 20, H 720, 35 steps, its final model batch
 * 64, H 748: README "Reference measurement semantics and colocation" says why H stays 200).
 *
 * Groups: per step and node, the matmul (with the step's input slice for node 0), the
 * activations (split, f_i, gate) and the highway combination; per step the average; the
 * embedding (variable and the lookup of all steps); each cell variable (w_prev, each w_skip_i);
 * the softmax; the data; the saved state.  See gen.h for gradients and updates.
 */
#define GEN_PTB_H 200
#define GEN_PTB_VOCAB 10000
#define GEN_PTB_BATCH 64
#define GEN_PTB_N_MIN 4
#define GEN_PTB_N_MAX 7
#define GEN_PTB_T_MIN 9
#define GEN_PTB_T_MAX 18
#define GEN_PTB_MAX_NODES 12
#define GEN_PTB_MAX_DEPTH 3
#define GEN_PTB_MAX_STEPS 64

typedef struct gen_ptb_cell {
    int n;                        /* nodes, node 0 included */
    int prev[GEN_PTB_MAX_NODES];  /* p(i) < i for i >= 1 */
    int act[GEN_PTB_MAX_NODES];   /* 0 tanh, 1 relu, 2 identity, 3 sigmoid */
    int loose[GEN_PTB_MAX_NODES]; /* 1 when no node reads node i */
} gen_ptb_cell;

/* Uniform choices as the untrained ENAS controller makes them, redrawn until the longest chain
 * of nodes is at most GEN_PTB_MAX_DEPTH deep. */
static void gen_ptb_sample_cell(pb_rng *rng, int n, gen_ptb_cell *c)
{
    int depth[GEN_PTB_MAX_NODES], deepest;
    do {
        c->n = n;
        deepest = depth[0] = 0;
        for (int i = 0; i < n; i++)
            c->loose[i] = 1;
        for (int i = 1; i < n; i++) {
            c->prev[i] = (int)pb_rng_below(rng, (uint64_t)i);
            c->act[i] = (int)pb_rng_below(rng, 4);
            c->loose[c->prev[i]] = 0;
            depth[i] = depth[c->prev[i]] + 1;
            deepest = depth[i] > deepest ? depth[i] : deepest;
        }
    } while (deepest > GEN_PTB_MAX_DEPTH);
}

/* s_p + c * (f(h) - s_p) from the two halves of ht: the matmul and split form one group, the
 * element-wise highway combination the next. */
static gen_tensor gen_ptb_highway(gen_ctx *g, gen_tensor ht, gen_tensor s_prev, const char *act)
{
    gen_pop(g);
    gen_push(g, GEN_GROUP, "activation");
    gen_tensor hc = gen_split(g, ht, 2);
    gen_tensor h = act ? gen_unary(g, act, hc) : hc;
    gen_tensor c = gen_unary(g, "Sigmoid", gen_port(hc, 1));
    gen_pop(g);
    gen_push(g, GEN_GROUP, "highway");
    gen_tensor d = gen_binary(g, "Sub", h, s_prev);
    return gen_binary(g, "AddV2", s_prev, gen_binary(g, "Mul", c, d));
}

/* One step of the cell; returns the step's output (the next state). */
static gen_tensor gen_ptb_step(gen_ctx *g, const gen_ptb_cell *cell, int t, gen_tensor inputs,
                               gen_tensor s, gen_tensor w_prev, const gen_tensor *w_skip)
{
    static const char *const acts[4] = {"Tanh", "Relu", NULL, "Sigmoid"};
    gen_tensor node[GEN_PTB_MAX_NODES];
    gen_push(g, GEN_SCOPE, "step_%02d", t);
    gen_push(g, GEN_SCOPE, "node_0");
    gen_push(g, GEN_GROUP, "matmul");
    gen_shape xs_shape = gen_shape_of(g, s);
    gen_tensor x = gen_op_emit(g, "StridedSlice", "strided_slice", GEN_GRAD_SLICE, &inputs, 1,
                               &xs_shape, 1, 0);
    gen_tensor xs[2] = {x, s};
    node[0] = gen_ptb_highway(g, gen_matmul(g, gen_concat(g, xs, 2), w_prev, 0), s, "Tanh");
    gen_pop(g);
    gen_pop(g);
    for (int i = 1; i < cell->n; i++) {
        gen_push(g, GEN_SCOPE, "node_%d", i);
        gen_push(g, GEN_GROUP, "matmul");
        gen_tensor p = node[cell->prev[i]];
        node[i] = gen_ptb_highway(g, gen_matmul(g, p, w_skip[i], 0), p, acts[cell->act[i]]);
        gen_pop(g);
        gen_pop(g);
    }
    gen_tensor loose[GEN_PTB_MAX_NODES];
    int n = 0;
    for (int i = 0; i < cell->n; i++)
        if (cell->loose[i])
            loose[n++] = node[i];
    gen_push(g, GEN_GROUP, "output");
    gen_tensor out = gen_add_n(g, loose, n);
    if (n > 1)
        out = gen_binary(g, "Mul", out, gen_const(g, "inv_count", gen_shape0()));
    gen_pop(g);
    gen_pop(g);
    return out;
}

/* Concatenates the step outputs along the batch axis: [T*b, H]. */
static gen_tensor gen_ptb_stack(gen_ctx *g, const gen_tensor *outs, int steps)
{
    gen_shape s = gen_shape_of(g, outs[0]);
    gen_shape o = gen_shape2(s.d[0] * steps, s.d[1]);
    return gen_op_emit(g, "ConcatV2", "concat", GEN_GRAD_CONCAT, outs, steps, &o, 1, 0);
}

int gen_ptb_generate(uint64_t seed, int index, const char *name, const gen_options *opt,
                     pb_graph **out, pb_error *err)
{
    int bs = opt->batch > 0 ? opt->batch : GEN_PTB_BATCH;
    int hidden = opt->width > 0 ? opt->width : GEN_PTB_H;
    int t_min = opt->steps_min > 0 ? opt->steps_min : GEN_PTB_T_MIN;
    int t_max = opt->steps_max > 0 ? opt->steps_max : GEN_PTB_T_MAX;
    if (t_max < t_min || t_max > GEN_PTB_MAX_STEPS)
        return pb_errorf(err, "%s: BPTT steps %d-%d (must be a range within 1-%d)", name, t_min,
                         t_max, GEN_PTB_MAX_STEPS);
    gen_ctx g;
    gen_init(&g, seed, bs);
    g.opt = *opt;
    g.cost_model = opt->cost_model;
    gen_ptb_cell cell;
    gen_ptb_sample_cell(&g.rng, gen_spread(index, GEN_PTB_N_MIN, GEN_PTB_N_MAX), &cell);
    int steps = gen_spread(index * 7 + 3, t_min, t_max);
    gen_tensor outs[GEN_PTB_MAX_STEPS];

    gen_push(&g, GEN_GROUP, "input");
    gen_shape io[3] = {gen_shape1(bs * steps), gen_shape1(bs * steps), gen_shape2(bs, hidden)};
    gen_tensor batch = gen_source(&g, "IteratorGetNext", "IteratorGetNext", io, 2);
    gen_tensor s = gen_source(&g, "VariableV2", "prev_s", &io[2], 1);
    gen_pop(&g);
    gen_push(&g, GEN_SCOPE, "language_model");
    gen_push(&g, GEN_GROUP, "embedding");
    gen_tensor emb = gen_variable(&g, "w", gen_shape2(GEN_PTB_VOCAB, hidden));
    gen_tensor inputs = gen_gather(&g, emb, batch); /* [T*b, H]: all steps at once */
    gen_pop(&g);
    gen_push(&g, GEN_SCOPE, "rnn_cell");
    gen_push(&g, GEN_GROUP, "w_prev");
    gen_tensor w_prev = gen_variable(&g, "w", gen_shape2(2 * hidden, 2 * hidden));
    gen_pop(&g);
    gen_tensor w_skip[GEN_PTB_MAX_NODES];
    for (int i = 1; i < cell.n; i++) {
        gen_push(&g, GEN_GROUP, "w_skip_%d", i);
        w_skip[i] = gen_variable(&g, "w", gen_shape2(hidden, 2 * hidden));
        gen_pop(&g);
    }
    gen_pop(&g);
    gen_push(&g, GEN_SCOPE, "rnn");
    for (int t = 0; t < steps; t++) {
        s = gen_ptb_step(&g, &cell, t, inputs, s, w_prev, w_skip);
        outs[t] = s;
    }
    gen_pop(&g);
    gen_push(&g, GEN_GROUP, "softmax");
    gen_tensor logits = gen_matmul(&g, gen_ptb_stack(&g, outs, steps), emb, 1);
    gen_tensor loss = gen_xent_loss(&g, logits, gen_port(batch, 1));
    gen_pop(&g);
    gen_pop(&g);
    gen_push(&g, GEN_GROUP, "save_state");
    gen_tensor assign[2] = {s, loss};
    gen_op_emit(&g, "Assign", "Assign", GEN_GRAD_NONE, assign, 2, &io[2], 1, 0);
    gen_pop(&g);
    gen_train(&g, loss, GEN_OPT_SGD, 1);
    int rc = gen_finish(&g, name, out, err);
    gen_free(&g);
    return rc;
}
