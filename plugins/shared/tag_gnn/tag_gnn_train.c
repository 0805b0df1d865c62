/* tag_gnn_train.c — training TAG's GNN from MCTS visit distributions (specs/tag.md §7.4, §8.4):
 * cross-entropy against the normalised visits, Adam with Keras clipnorm, single-sample steps. */
#include "tag_gnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tag_gnn_sample_set(tag_gnn_sample *s, const tag_gnn_input *in, const double *visits,
                       pb_error *err)
{
    if (tag_gnn_features_copy(&s->x, in, err) != PB_OK)
        return PB_ERR;
    double total = 0;
    for (int c = 0; c < in->n_cand; c++) {
        if (!(visits[c] >= 0) || !isfinite(visits[c]))
            return pb_errorf(err, "tag GNN sample: visits[%d] = %g", c, visits[c]);
        total += visits[c];
    }
    if (!(total > 0))
        return pb_errorf(err, "tag GNN sample: no candidate was visited");
    float *pi = realloc(s->pi, (size_t)in->n_cand * sizeof *pi);
    if (!pi)
        return pb_errorf(err, "tag GNN sample: out of memory");
    s->pi = pi;
    for (int c = 0; c < in->n_cand; c++)
        pi[c] = (float)(visits[c] / total);
    return PB_OK;
}

void tag_gnn_sample_free(tag_gnn_sample *s)
{
    if (!s)
        return;
    tag_gnn_features_free(&s->x);
    free(s->pi);
    s->pi = NULL;
}

/* Records -Σ pi log p on t; NULL with err set on failure. */
static pb_nn_tensor *train_loss(tag_gnn *n, pb_nn_tape *t, const tag_gnn_sample *s, pb_error *err)
{
    pb_nn_tensor *logp = tag_gnn_forward(n, t, &s->x.in, err);
    if (!logp)
        return NULL;
    pb_nn_tensor *pi = pb_nn_constant(t, 1, s->x.in.n_cand, s->pi);
    pb_nn_tensor *loss = pb_nn_scale(t, pb_nn_sum(t, pb_nn_mul(t, logp, pi)), -1.0f);
    if (pb_nn_tape_status(t, err) != PB_OK)
        return NULL;
    return loss;
}

int tag_gnn_loss(tag_gnn *n, const tag_gnn_sample *s, double *loss, pb_error *err)
{
    pb_nn_tape *t = pb_nn_tape_new();
    if (!t)
        return pb_errorf(err, "tag GNN: out of memory");
    pb_nn_tape_reset(t, 0);
    pb_nn_tensor *y = train_loss(n, t, s, err);
    if (y)
        *loss = y->data[0];
    pb_nn_tape_free(t);
    return y ? PB_OK : PB_ERR;
}

void tag_gnn_train_options_default(tag_gnn_train_options *o)
{
    *o = (tag_gnn_train_options){
        .lr = 1e-4, .clipnorm = 0.6, .beta1 = 0.9, .beta2 = 0.999, .epsilon = 1e-7};
}

struct tag_gnn_trainer {
    tag_gnn *net;
    tag_gnn_train_options o;
    pb_nn_adam *adam;
    pb_nn_tape *tape;
    int *order;
    int order_cap;
};

tag_gnn_trainer *tag_gnn_trainer_new(tag_gnn *n, const tag_gnn_train_options *o, pb_error *err)
{
    if (!(o->lr > 0) || !(o->clipnorm >= 0) || !(o->beta1 >= 0 && o->beta1 < 1) ||
        !(o->beta2 >= 0 && o->beta2 < 1) || !(o->epsilon > 0)) {
        pb_errorf(err,
                  "tag GNN training: lr %g, clipnorm %g, beta1 %g, beta2 %g, epsilon %g out "
                  "of range",
                  o->lr, o->clipnorm, o->beta1, o->beta2, o->epsilon);
        return NULL;
    }
    tag_gnn_trainer *tr = calloc(1, sizeof *tr);
    if (tr) {
        tr->net = n;
        tr->o = *o;
        tr->adam = pb_nn_adam_new(o->beta1, o->beta2, o->epsilon);
        tr->tape = pb_nn_tape_new();
    }
    if (!tr || !tr->adam || !tr->tape) {
        tag_gnn_trainer_free(tr);
        pb_errorf(err, "tag GNN training: out of memory");
        return NULL;
    }
    return tr;
}

void tag_gnn_trainer_free(tag_gnn_trainer *tr)
{
    if (!tr)
        return;
    pb_nn_adam_free(tr->adam);
    pb_nn_tape_free(tr->tape);
    free(tr->order);
    free(tr);
}

pb_nn_adam *tag_gnn_trainer_adam(tag_gnn_trainer *tr)
{
    return tr ? tr->adam : NULL;
}

int tag_gnn_train_step(tag_gnn_trainer *tr, const tag_gnn_sample *s, double *loss, pb_error *err)
{
    pb_nn_params *p = tag_gnn_params(tr->net);
    pb_nn_tape_reset(tr->tape, 1);
    pb_nn_tensor *y = train_loss(tr->net, tr->tape, s, err);
    if (!y)
        return PB_ERR;
    if (loss)
        *loss = y->data[0];
    pb_nn_params_zero_grad(p);
    if (pb_nn_backward(tr->tape, y, NULL, err) != PB_OK)
        return PB_ERR;
    if (tr->o.clipnorm > 0)
        pb_nn_clip_each_norm(p, tr->o.clipnorm);
    return pb_nn_adam_step(tr->adam, p, tr->o.lr, err);
}

int tag_gnn_train_epoch(tag_gnn_trainer *tr, const tag_gnn_sample *samples, int n, long steps,
                        pb_rng *rng, double *mean_loss, pb_error *err)
{
    if (n < 1 || steps < 0)
        return pb_errorf(err, "tag GNN training: %d samples, %ld steps", n, steps);
    if (n > tr->order_cap) {
        int *o = realloc(tr->order, (size_t)n * sizeof *o);
        if (!o)
            return pb_errorf(err, "tag GNN training: out of memory");
        tr->order = o;
        tr->order_cap = n;
    }
    double total = 0;
    for (long k = 0; k < steps; k++) {
        int pos = (int)(k % n);
        if (pos == 0) {
            for (int i = 0; i < n; i++)
                tr->order[i] = i;
            pb_rng_shuffle(rng, tr->order, n);
        }
        double l;
        if (tag_gnn_train_step(tr, &samples[tr->order[pos]], &l, err) != PB_OK)
            return PB_ERR;
        total += l;
    }
    if (mean_loss)
        *mean_loss = steps > 0 ? total / (double)steps : 0;
    return PB_OK;
}
