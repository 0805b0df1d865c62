/* nn_lstm.c — the LSTM cell (forget-gate variant, gates i, f, g, o) from the core's ops. */
#include "nn/nn_internal.h"

#include <math.h>
#include <stdio.h>

/* Adds "<prefix>/<what>" of rows x cols drawn from U(-r, r); returns its id or PB_ERR. */
static int nn_lstm_uniform(pb_nn_params *p, const char *prefix, const char *what, int rows,
                           int cols, double r, pb_rng *rng, pb_error *err)
{
    char name[256];
    snprintf(name, sizeof name, "%s/%s", prefix, what);
    int id = pb_nn_params_add(p, name, rows, cols, PB_NN_INIT_ZEROS, NULL, err);
    if (id < 0)
        return PB_ERR;
    float *v = pb_nn_params_values(p) + pb_nn_params_offset(p, id);
    for (int k = 0; k < rows * cols; k++)
        v[k] = (float)(r * (2 * pb_rng_uniform(rng) - 1));
    return id;
}

int pb_nn_lstm_init(pb_nn_lstm *m, pb_nn_params *p, const char *prefix, int in, int hidden,
                    pb_rng *rng, pb_error *err)
{
    if (!m || !p || !prefix || !rng)
        return pb_errorf(err, "nn lstm: missing cell, parameter set, prefix or generator");
    if (in < 1 || hidden < 1)
        return pb_errorf(err, "nn lstm '%s': sizes %d -> %d must be positive", prefix, in, hidden);
    m->in = in;
    m->hidden = hidden;
    m->weight =
        nn_lstm_uniform(p, prefix, "w", in + hidden, 4 * hidden, 1 / sqrt(in + hidden), rng, err);
    if (m->weight < 0)
        return PB_ERR;
    char name[256];
    snprintf(name, sizeof name, "%s/b", prefix);
    m->bias = pb_nn_params_add(p, name, 1, 4 * hidden, PB_NN_INIT_ZEROS, NULL, err);
    if (m->bias < 0)
        return PB_ERR;
    float *b = pb_nn_params_values(p) + pb_nn_params_offset(p, m->bias);
    for (int k = hidden; k < 2 * hidden; k++)
        b[k] = 1; /* the forget gate starts open */
    return PB_OK;
}

void pb_nn_lstm_step(pb_nn_tape *t, pb_nn_params *p, const pb_nn_lstm *m, pb_nn_tensor *x,
                     pb_nn_tensor *h, pb_nn_tensor *c, pb_nn_tensor **h_out, pb_nn_tensor **c_out)
{
    *h_out = *c_out = NULL;
    if (!nn_tape_inputs_ok(t, "pb_nn_lstm_step", 3, x, h, c))
        return;
    if (!m || m->hidden < 1) {
        nn_tape_fail(t, "pb_nn_lstm_step: cell not initialised");
        return;
    }
    int n = m->hidden;
    pb_nn_tensor *xh[2] = {x, h};
    pb_nn_tensor *z = pb_nn_linear(t, pb_nn_concat_cols(t, 2, xh), pb_nn_param(t, p, m->weight),
                                   pb_nn_param(t, p, m->bias), PB_NN_ACT_NONE);
    pb_nn_tensor *i = pb_nn_sigmoid(t, pb_nn_slice_cols(t, z, 0, n));
    pb_nn_tensor *f = pb_nn_sigmoid(t, pb_nn_slice_cols(t, z, n, n));
    pb_nn_tensor *g = pb_nn_tanh(t, pb_nn_slice_cols(t, z, 2 * n, n));
    pb_nn_tensor *o = pb_nn_sigmoid(t, pb_nn_slice_cols(t, z, 3 * n, n));
    *c_out = pb_nn_add(t, pb_nn_mul(t, f, c), pb_nn_mul(t, i, g));
    *h_out = pb_nn_mul(t, o, pb_nn_tanh(t, *c_out));
}
