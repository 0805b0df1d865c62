/* gen_rnnlm.c — GDP's RNNLM: a stacked-LSTM word language model, statically unrolled. */
#include "gen_model.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * specs/gdp.md §10.2 (GDP §6.3.3 "grid of LSTM cells"; Zaremba et al. 2014 large PTB settings):
 * batch 64, vocabulary 10,000, embedding and hidden 2048, L layers (2 by default; 4 and 8 in the
 * paper's batch sets), unrolled T steps as tf.nn.static_rnn does (a weight's gradients summed by
 * one AddN), dropout on the inputs of every layer and on the top outputs, the T outputs
 * concatenated and projected onto the vocabulary by one MatMul, softmax cross-entropy, gradients
 * clipped by global norm, plain SGD.  GDP counts the training step's ops (no initializers).
 *
 * The unroll length is the spec's calibration knob.  With Zaremba's 35 steps a cell-step with its
 * dropout is ~80 ops here and the graph ~6,500 ops, 27 % under the paper's 9,021; the paper's
 * count implies (9,021 - ~170 fixed) / (2 x 80 + ~22 for the output dropout) ~ 48 steps, so
 * the option `steps` defaults to 48 (8,785 ops).  Groups: per step and layer the gates and state,
 * each dropout, each layer's weights, the embedding, the projection and the loss.
 */
#define GEN_RNNLM_HIDDEN 2048
#define GEN_RNNLM_MAX_LAYERS 16

int gen_rnnlm_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err)
{
    int b = a->batch, L = a->layers, T = a->opt[GEN_RNN_OPT_STEPS], H = GEN_RNNLM_HIDDEN,
        V = a->opt[GEN_RNNLM_OPT_VOCAB];
    gen_ctx g;
    gen_init(&g, a->seed, b);
    gen_shape io[2] = {gen_shape1((long long)b * T), gen_shape2((long long)b * T, V)};
    gen_tensor batch = gen_source(&g, "IteratorGetNext", "IteratorGetNext", io, 2);
    gen_push(&g, GEN_GROUP, "embedding");
    gen_tensor emb = gen_variable(&g, "embedding", gen_shape2(V, H));
    gen_tensor inputs = gen_gather(&g, emb, batch);
    gen_pop(&g);
    gen_lstm_weights w[GEN_RNNLM_MAX_LAYERS];
    gen_tensor c[GEN_RNNLM_MAX_LAYERS], h[GEN_RNNLM_MAX_LAYERS];
    gen_push(&g, GEN_SCOPE, "rnn");
    for (int l = 0; l < L; l++) {
        char scope[48];
        snprintf(scope, sizeof scope, "multi_rnn_cell/cell_%d/basic_lstm_cell", l);
        w[l] = gen_lstm_weights_new(&g, scope, H, H);
    }
    gen_tensor *outs = malloc((size_t)T * sizeof *outs);
    for (int t = 0; outs && t < T; t++) {
        gen_push(&g, GEN_SCOPE, "step_%02d", t);
        gen_push(&g, GEN_GROUP, "input");
        gen_tensor x = gen_rnn_step_slice(&g, inputs, b, H);
        if (t == 0)
            for (int l = 0; l < L; l++)
                c[l] = h[l] = gen_const(&g, "zeros", gen_shape2(b, H));
        gen_pop(&g);
        for (int l = 0; l < L; l++) {
            gen_push(&g, GEN_SCOPE, "cell_%d", l);
            gen_lstm_cell(&g, gen_rnn_dropout(&g, x, "dropout"), &c[l], &h[l], &w[l]);
            x = h[l];
            gen_pop(&g);
        }
        outs[t] = gen_rnn_dropout(&g, x, "dropout");
        gen_pop(&g);
    }
    gen_pop(&g);
    if (!outs) {
        gen_free(&g);
        return pb_errorf(err, "out of memory");
    }
    gen_push(&g, GEN_GROUP, "softmax");
    gen_tensor all = gen_reshape(&g, gen_concat(&g, outs, T), gen_shape2((long long)b * T, H));
    free(outs);
    gen_tensor logits = gen_dense(&g, all, V, 1);
    gen_pop(&g);
    gen_push(&g, GEN_GROUP, "loss");
    gen_tensor loss = gen_xent_loss(&g, logits, gen_port(batch, 1));
    gen_pop(&g);
    gen_train(&g, loss, GEN_OPT_SGD, 1);
    int rc = gen_model_finish(&g, a, name, out, err);
    gen_free(&g);
    return rc;
}
