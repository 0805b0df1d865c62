/* nn_optim.c — optimizers over a parameter set: Adam (TensorFlow formulation), SGD, and global
 * gradient-norm clipping. */
#include "nn_internal.h"

#include <math.h>
#include <stdlib.h>

pb_nn_adam *pb_nn_adam_new(double beta1, double beta2, double epsilon)
{
    pb_nn_adam *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->beta1 = beta1;
    a->beta2 = beta2;
    a->epsilon = epsilon;
    return a;
}

void pb_nn_adam_free(pb_nn_adam *a)
{
    if (!a)
        return;
    free(a->m);
    free(a->v);
    free(a);
}

long long pb_nn_adam_steps(const pb_nn_adam *a)
{
    return a ? a->t : 0;
}

static int optim_adam_bind(pb_nn_adam *a, size_t n, pb_error *err)
{
    if (a->m || a->t > 0) {
        if (n != a->n)
            return pb_errorf(err,
                             "nn adam: the parameter set has %zu values, it had %zu at the "
                             "first step",
                             n, a->n);
        return PB_OK;
    }
    a->m = calloc(n + 1, sizeof *a->m);
    a->v = calloc(n + 1, sizeof *a->v);
    if (!a->m || !a->v)
        return pb_errorf(err, "nn adam: out of memory for %zu values", n);
    a->n = n;
    return PB_OK;
}

int pb_nn_adam_step(pb_nn_adam *a, pb_nn_params *p, double lr, pb_error *err)
{
    if (!a || !p)
        return pb_errorf(err, "nn adam: missing optimizer or parameters");
    size_t n = pb_nn_params_size(p);
    if (optim_adam_bind(a, n, err) != PB_OK)
        return PB_ERR;
    a->t++;
    double lr_t =
        lr * sqrt(1.0 - pow(a->beta2, (double)a->t)) / (1.0 - pow(a->beta1, (double)a->t));
    float *theta = pb_nn_params_values(p);
    const float *g = pb_nn_params_grads(p);
    for (size_t i = 0; i < n; i++) {
        a->m[i] = a->beta1 * a->m[i] + (1.0 - a->beta1) * g[i];
        a->v[i] = a->beta2 * a->v[i] + (1.0 - a->beta2) * (double)g[i] * g[i];
        theta[i] = (float)(theta[i] - lr_t * a->m[i] / (sqrt(a->v[i]) + a->epsilon));
    }
    return PB_OK;
}

void pb_nn_sgd_step(pb_nn_params *p, double lr)
{
    size_t n = pb_nn_params_size(p);
    float *theta = pb_nn_params_values(p);
    const float *g = pb_nn_params_grads(p);
    for (size_t i = 0; i < n; i++)
        theta[i] = (float)(theta[i] - lr * g[i]);
}

/* Scales g[0..n) to L2 norm max_norm when it is finite and above; returns the norm before. */
static double optim_clip_range(float *g, size_t n, double max_norm)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)g[i] * g[i];
    double norm = sqrt(s);
    if (max_norm > 0.0 && isfinite(norm) && norm > max_norm) {
        double scale = max_norm / norm;
        for (size_t i = 0; i < n; i++)
            g[i] = (float)(g[i] * scale);
    }
    return norm;
}

double pb_nn_clip_grad_norm(pb_nn_params *p, double max_norm)
{
    return optim_clip_range(pb_nn_params_grads(p), pb_nn_params_size(p), max_norm);
}

void pb_nn_clip_each_norm(pb_nn_params *p, double max_norm)
{
    float *g = pb_nn_params_grads(p);
    for (int id = 0; id < pb_nn_params_count(p); id++) {
        int rows, cols;
        pb_nn_params_shape(p, id, &rows, &cols);
        optim_clip_range(g + pb_nn_params_offset(p, id), (size_t)rows * (size_t)cols, max_norm);
    }
}
