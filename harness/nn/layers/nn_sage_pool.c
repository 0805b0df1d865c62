/* nn_sage_pool.c — GDP's GraphSAGE layer (specs/gdp.md §3.1): sigmoid max-pooling over the
 * neighbours, then one dense layer over [self, pooled]. */
#include "nn/nn_internal.h"

#include <stdio.h>

int pb_nn_sage_pool_init(pb_nn_sage_pool *m, pb_nn_params *p, const char *prefix, int in, int out,
                         int act, pb_rng *rng, pb_error *err)
{
    if (!m || !p || !prefix)
        return pb_errorf(err, "nn sage pool: missing layer, parameter set or prefix");
    if (in < 1 || out < 1 || act < PB_NN_ACT_NONE || act > PB_NN_ACT_TANH)
        return pb_errorf(err, "nn sage pool '%s': bad sizes %d -> %d or activation %d", prefix, in,
                         out, act);
    *m = (pb_nn_sage_pool){.in = in, .out = out, .act = act, .pool_act = PB_NN_ACT_SIGMOID};
    char name[256];
    snprintf(name, sizeof name, "%s/w_pool", prefix);
    if ((m->w_pool = pb_nn_params_add(p, name, in, out, PB_NN_INIT_GLOROT, rng, err)) < 0)
        return PB_ERR;
    snprintf(name, sizeof name, "%s/b_pool", prefix);
    if ((m->b_pool = pb_nn_params_add(p, name, 1, out, PB_NN_INIT_ZEROS, NULL, err)) < 0)
        return PB_ERR;
    snprintf(name, sizeof name, "%s/w_comb", prefix);
    if ((m->w_comb = pb_nn_params_add(p, name, in + out, out, PB_NN_INIT_GLOROT, rng, err)) < 0)
        return PB_ERR;
    snprintf(name, sizeof name, "%s/b_comb", prefix);
    if ((m->b_comb = pb_nn_params_add(p, name, 1, out, PB_NN_INIT_ZEROS, NULL, err)) < 0)
        return PB_ERR;
    return PB_OK;
}

pb_nn_tensor *pb_nn_sage_pool_forward(pb_nn_tape *t, pb_nn_params *p, const pb_nn_sage_pool *m,
                                      pb_nn_tensor *x, const pb_nn_csr *nbr)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_sage_pool_forward", 1, x, NULL, NULL))
        return NULL;
    if (!m || !nbr || x->cols != m->in || nbr->n_rows != x->rows)
        return nn_tape_fail(t, "pb_nn_sage_pool_forward: input %dx%d does not fit the layer",
                            x->rows, x->cols);
    pb_nn_tensor *msg =
        pb_nn_linear(t, x, pb_nn_param(t, p, m->w_pool), pb_nn_param(t, p, m->b_pool), m->pool_act);
    pb_nn_tensor *both[2] = {x, pb_nn_aggregate(t, msg, nbr, PB_NN_AGG_MAX)};
    return pb_nn_linear(t, pb_nn_concat_cols(t, 2, both), pb_nn_param(t, p, m->w_comb),
                        pb_nn_param(t, p, m->b_comb), m->act);
}
