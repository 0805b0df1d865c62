/* nn_elman.c — the Elman recurrent cell h' = tanh([x, h].W + b) from the core's ops. */
#include "nn/nn_internal.h"

#include <math.h>
#include <stdio.h>

int pb_nn_elman_init(pb_nn_elman *m, pb_nn_params *p, const char *prefix, int in, int hidden,
                     pb_rng *rng, pb_error *err)
{
    if (!m || !p || !prefix || !rng)
        return pb_errorf(err, "nn elman: missing cell, parameter set, prefix or generator");
    if (in < 1 || hidden < 1)
        return pb_errorf(err, "nn elman '%s': sizes %d -> %d must be positive", prefix, in, hidden);
    m->in = in;
    m->hidden = hidden;
    char name[256];
    snprintf(name, sizeof name, "%s/w", prefix);
    m->weight = pb_nn_params_add(p, name, in + hidden, hidden, PB_NN_INIT_ZEROS, NULL, err);
    if (m->weight < 0)
        return PB_ERR;
    float *w = pb_nn_params_values(p) + pb_nn_params_offset(p, m->weight);
    double r = 1 / sqrt(in + hidden);
    for (int k = 0; k < (in + hidden) * hidden; k++)
        w[k] = (float)(r * (2 * pb_rng_uniform(rng) - 1));
    snprintf(name, sizeof name, "%s/b", prefix);
    m->bias = pb_nn_params_add(p, name, 1, hidden, PB_NN_INIT_ZEROS, NULL, err);
    return m->bias < 0 ? PB_ERR : PB_OK;
}

pb_nn_tensor *pb_nn_elman_step(pb_nn_tape *t, pb_nn_params *p, const pb_nn_elman *m,
                               pb_nn_tensor *x, pb_nn_tensor *h)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_elman_step", 2, x, h, NULL))
        return NULL;
    if (!m || m->hidden < 1)
        return nn_tape_fail(t, "pb_nn_elman_step: cell not initialised");
    pb_nn_tensor *xh[2] = {x, h};
    return pb_nn_linear(t, pb_nn_concat_cols(t, 2, xh), pb_nn_param(t, p, m->weight),
                        pb_nn_param(t, p, m->bias), PB_NN_ACT_TANH);
}
