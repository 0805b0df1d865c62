/* hdp_model.c — HDP's grouper and seq2seq placer (specs/gdp.md §7.3-7.4) on the NN core. */
#include "hdp_model.h"

#include <math.h>
#include <stdlib.h>

static int hdp_add(pb_nn_params *p, const char *name, int rows, int cols, int init, pb_rng *rng,
                   int *id, pb_error *err)
{
    *id = pb_nn_params_add(p, name, rows, cols, init, rng, err);
    return *id < 0 ? PB_ERR : PB_OK;
}

int hdp_net_init(hdp_net *net, const hdp_sizes *s, pb_rng *rng, pb_error *err)
{
    net->s = *s;
    net->params = pb_nn_params_new();
    if (!net->params)
        return pb_errorf(err, "out of memory");
    int h = s->hidden, he = s->hidden / 2, G = PB_NN_INIT_GLOROT;
    pb_nn_params *p = net->params;
    if (hdp_add(p, "grouper/w_ff", s->n_features, s->group_hidden, G, rng, &net->w_ff, err) ||
        hdp_add(p, "grouper/w_sm", s->group_hidden, s->n_groups, G, rng, &net->w_sm, err) ||
        hdp_add(p, "encoder/fw/w", s->group_width + he, 4 * he, G, rng, &net->enc_fw, err) ||
        hdp_add(p, "encoder/bw/w", s->group_width + he, 4 * he, G, rng, &net->enc_bw, err) ||
        hdp_add(p, "encoder/forget_bias", 1, 1, PB_NN_INIT_ONES, rng, &net->enc_forget, err) ||
        hdp_add(p, "decoder/w", 2 * h, 4 * h, G, rng, &net->dec, err) ||
        hdp_add(p, "decoder/forget_bias", 1, 1, PB_NN_INIT_ONES, rng, &net->dec_forget, err) ||
        hdp_add(p, "attention/w1", h, h, G, rng, &net->attn1, err) ||
        hdp_add(p, "attention/w2", h, h, G, rng, &net->attn2, err) ||
        hdp_add(p, "attention/v", 1, h, G, rng, &net->attn_v, err) ||
        hdp_add(p, "device_embeddings", s->n_devices, h, G, rng, &net->dev_emb, err) ||
        hdp_add(p, "device_go_embedding", 1, h, G, rng, &net->go_emb, err) ||
        hdp_add(p, "device_softmax", 2 * h, s->n_devices, G, rng, &net->w_dev, err)) {
        hdp_net_free(net);
        return PB_ERR;
    }
    return PB_OK;
}

void hdp_net_free(hdp_net *net)
{
    pb_nn_params_free(net->params);
    net->params = NULL;
}

void hdp_lstm_step(pb_nn_tape *t, pb_nn_tensor *w, pb_nn_tensor *forget, pb_nn_tensor *x,
                   pb_nn_tensor *h, pb_nn_tensor *c, pb_nn_tensor **h_out, pb_nn_tensor **c_out)
{
    pb_nn_tensor *xh[2] = {x, h};
    pb_nn_tensor *z = pb_nn_matmul(t, pb_nn_concat_cols(t, 2, xh), w);
    int n = h ? h->cols : 0;
    pb_nn_tensor *i = pb_nn_sigmoid(t, pb_nn_slice_cols(t, z, 0, n));
    pb_nn_tensor *f = pb_nn_sigmoid(t, pb_nn_add(t, pb_nn_slice_cols(t, z, n, n), forget));
    pb_nn_tensor *o = pb_nn_sigmoid(t, pb_nn_slice_cols(t, z, 2 * n, n));
    pb_nn_tensor *g = pb_nn_tanh(t, pb_nn_slice_cols(t, z, 3 * n, n));
    *c_out = pb_nn_add(t, pb_nn_mul(t, i, g), pb_nn_mul(t, f, c));
    *h_out = pb_nn_mul(t, o, pb_nn_tanh(t, *c_out));
}

pb_nn_tensor *hdp_attend(pb_nn_tape *t, pb_nn_tensor *h, pb_nn_tensor *w_attn2, pb_nn_tensor *v,
                         pb_nn_tensor *mem)
{
    pb_nn_tensor *query = pb_nn_matmul(t, h, w_attn2);
    pb_nn_tensor *e = pb_nn_rowdot(t, pb_nn_tanh(t, pb_nn_add(t, mem, query)), v);
    pb_nn_tensor *alpha = pb_nn_softmax(t, pb_nn_reshape(t, e, 1, mem ? mem->rows : 0));
    return pb_nn_matmul(t, alpha, mem);
}

/* A standard normal draw (Box-Muller on two uniforms of rng). */
static double hdp_normal(pb_rng *rng)
{
    double u1 = pb_rng_uniform(rng), u2 = pb_rng_uniform(rng);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

/* logits + N(0, (noise ||logits||_F / sqrt(numel))^2) as a constant, the code's
 * _add_noise; logits unchanged when noise is 0. */
static pb_nn_tensor *hdp_noisy(pb_nn_tape *t, pb_nn_tensor *logits, const hdp_pick *pick)
{
    if (!logits || pick->noise <= 0)
        return logits;
    size_t n = (size_t)logits->rows * (size_t)logits->cols;
    double norm = 0;
    for (size_t k = 0; k < n; k++)
        norm += (double)logits->data[k] * logits->data[k];
    double std = pick->noise * sqrt(norm) / sqrt((double)n);
    pb_nn_tensor *noise = pb_nn_constant(t, logits->rows, logits->cols, NULL);
    for (size_t k = 0; noise && k < n; k++)
        noise->data[k] = (float)(std * hdp_normal(pick->rng));
    return pb_nn_add(t, logits, noise);
}

/* The action of one row of log-probabilities: replayed, argmax or sampled. */
static int hdp_choose(const float *logp, int n, const hdp_pick *pick, int index)
{
    if (pick->replay)
        return pick->replay[index];
    int best = 0;
    for (int k = 1; k < n; k++)
        if (logp[k] > logp[best])
            best = k;
    if (pick->greedy)
        return best;
    double u = pb_rng_uniform(pick->rng), acc = 0;
    for (int k = 0; k < n; k++) {
        acc += exp((double)logp[k]);
        if (u < acc)
            return k;
    }
    return best; /* rounding left u above the total */
}

pb_nn_tensor *hdp_grouper(pb_nn_tape *t, hdp_net *net, pb_nn_tensor *x, const hdp_pick *pick,
                          int *group)
{
    pb_nn_params *p = net->params;
    pb_nn_tensor *hidden = pb_nn_matmul(t, x, pb_nn_param(t, p, net->w_ff));
    pb_nn_tensor *logits =
        hdp_noisy(t, pb_nn_matmul(t, hidden, pb_nn_param(t, p, net->w_sm)), pick);
    pb_nn_tensor *logp = pb_nn_log_softmax(t, logits);
    if (!logp)
        return NULL;
    int n = logp->rows, k = logp->cols;
    pb_nn_tensor *onehot = pb_nn_constant(t, n, k, NULL);
    if (!onehot)
        return NULL;
    for (int v = 0; v < n; v++) {
        group[v] = hdp_choose(logp->data + (size_t)v * k, k, pick, v);
        onehot->data[(size_t)v * k + group[v]] = 1;
    }
    return pb_nn_sum(t, pb_nn_mul(t, logp, onehot));
}

/* One direction of the encoder over the rows of e in the given direction; out[i] receives the
 * hidden state after i + 1 steps, *h and *c the final state. */
static void hdp_encode(pb_nn_tape *t, pb_nn_tensor *w, pb_nn_tensor *forget, pb_nn_tensor *e,
                       int backward, pb_nn_tensor **out, pb_nn_tensor **h, pb_nn_tensor **c)
{
    int n = e->rows;
    for (int i = 0; i < n; i++) {
        pb_nn_tensor *x = pb_nn_rows(t, e, backward ? n - 1 - i : i, 1);
        hdp_lstm_step(t, w, forget, x, *h, *c, h, c);
        out[i] = *h;
    }
}

pb_nn_tensor *hdp_placer(pb_nn_tape *t, hdp_net *net, pb_nn_tensor *e, const hdp_pick *pick,
                         int *device)
{
    pb_nn_params *p = net->params;
    int n = net->s.n_groups, h = net->s.hidden, d = net->s.n_devices;
    if (!e)
        return NULL;
    pb_nn_tensor **fw = pb_nn_alloc(t, (size_t)n * 2 * sizeof *fw);
    int *taken = pb_nn_alloc(t, (size_t)n * sizeof *taken); /* gather indices live on the tape */
    if (!fw || !taken)
        return NULL;
    pb_nn_tensor **bw = fw + n;
    pb_nn_tensor *fh = pb_nn_constant(t, 1, h / 2, NULL), *fc = fh;
    pb_nn_tensor *bh = fh, *bc = fh;
    pb_nn_tensor *ef = pb_nn_param(t, p, net->enc_forget);
    hdp_encode(t, pb_nn_param(t, p, net->enc_fw), ef, e, 0, fw, &fh, &fc);
    hdp_encode(t, pb_nn_param(t, p, net->enc_bw), ef, e, 1, bw, &bh, &bc);
    /* memory row i = [fw_h after group i, bw_h after i + 1 backward steps] (the code's
     * alignment), transformed by W_attn1 */
    pb_nn_tensor *rows_f = pb_nn_concat_rows(t, n, fw), *rows_b = pb_nn_concat_rows(t, n, bw);
    pb_nn_tensor *both[2] = {rows_f, rows_b};
    pb_nn_tensor *mem =
        pb_nn_matmul(t, pb_nn_concat_cols(t, 2, both), pb_nn_param(t, p, net->attn1));
    pb_nn_tensor *hc[2] = {fc, bc}, *hh[2] = {fh, bh};
    pb_nn_tensor *c = pb_nn_concat_cols(t, 2, hc), *hs = pb_nn_concat_cols(t, 2, hh);
    pb_nn_tensor *w = pb_nn_param(t, p, net->dec), *df = pb_nn_param(t, p, net->dec_forget);
    pb_nn_tensor *w2 = pb_nn_param(t, p, net->attn2), *v = pb_nn_param(t, p, net->attn_v);
    pb_nn_tensor *wd = pb_nn_param(t, p, net->w_dev), *emb = pb_nn_param(t, p, net->dev_emb);
    pb_nn_tensor *x = pb_nn_param(t, p, net->go_emb), *total = NULL;
    for (int g = 0; g < n; g++) {
        hdp_lstm_step(t, w, df, x, hs, c, &hs, &c);
        pb_nn_tensor *ctx = hdp_attend(t, hs, w2, v, mem);
        pb_nn_tensor *hx[2] = {hs, ctx};
        pb_nn_tensor *logits = pb_nn_matmul(t, pb_nn_concat_cols(t, 2, hx), wd);
        logits = pb_nn_scale(t, logits, (float)(1.0 / pick->temperature));
        if (pick->tanh_c > 0)
            logits = pb_nn_scale(t, pb_nn_tanh(t, logits), (float)pick->tanh_c);
        pb_nn_tensor *logp = pb_nn_log_softmax(t, hdp_noisy(t, logits, pick));
        if (!logp)
            return NULL;
        device[g] = hdp_choose(logp->data, d, pick, g);
        pb_nn_tensor *chosen = pb_nn_slice_cols(t, logp, device[g], 1);
        total = total ? pb_nn_add(t, total, chosen) : chosen;
        taken[g] = device[g];
        x = pb_nn_gather_rows(t, emb, taken + g, 1);
    }
    return total;
}

double hdp_learning_rate(double lr, double dec, int start, int every, long long k)
{
    if (k < start)
        return lr;
    return lr * pow(dec, (double)((k - start) / every));
}
