/* nn_mlp.c — fully connected networks (the reference's FNN) built from pb_nn_linear. */
#include "nn/nn_internal.h"

#include <stdio.h>

int pb_nn_mlp_init(pb_nn_mlp *m, pb_nn_params *p, const char *prefix, int n_sizes, const int *sizes,
                   int act_out, pb_rng *rng, pb_error *err)
{
    if (!m || !p || !prefix || !sizes)
        return pb_errorf(err, "nn mlp: missing network, parameter set, prefix or sizes");
    if (n_sizes < 2 || n_sizes > PB_NN_MLP_MAX_LAYERS + 1)
        return pb_errorf(err, "nn mlp '%s': %d sizes, expected 2..%d", prefix, n_sizes,
                         PB_NN_MLP_MAX_LAYERS + 1);
    if (act_out < PB_NN_ACT_NONE || act_out > PB_NN_ACT_TANH)
        return pb_errorf(err, "nn mlp '%s': unknown output activation %d", prefix, act_out);
    m->n_layers = n_sizes - 1;
    m->act_out = act_out;
    for (int i = 0; i < m->n_layers; i++) {
        char name[256];
        snprintf(name, sizeof name, "%s/w%d", prefix, i);
        m->weight[i] =
            pb_nn_params_add(p, name, sizes[i], sizes[i + 1], PB_NN_INIT_GLOROT, rng, err);
        if (m->weight[i] < 0)
            return PB_ERR;
        snprintf(name, sizeof name, "%s/b%d", prefix, i);
        m->bias[i] = pb_nn_params_add(p, name, 1, sizes[i + 1], PB_NN_INIT_ZEROS, NULL, err);
        if (m->bias[i] < 0)
            return PB_ERR;
    }
    return PB_OK;
}

pb_nn_tensor *pb_nn_mlp_forward(pb_nn_tape *t, pb_nn_params *p, const pb_nn_mlp *m, pb_nn_tensor *x)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_mlp_forward", 1, x, NULL, NULL))
        return NULL;
    if (!m || m->n_layers < 1 || m->n_layers > PB_NN_MLP_MAX_LAYERS)
        return nn_tape_fail(t, "pb_nn_mlp_forward: network not initialised");
    pb_nn_tensor *h = x;
    for (int i = 0; i < m->n_layers; i++) {
        int act = i + 1 < m->n_layers ? PB_NN_ACT_RELU : m->act_out;
        h = pb_nn_linear(t, h, pb_nn_param(t, p, m->weight[i]), pb_nn_param(t, p, m->bias[i]), act);
    }
    return h;
}
