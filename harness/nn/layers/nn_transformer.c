/* nn_transformer.c — GDP's placement-network layers (specs/gdp.md §4-§5): multi-head attention
 * over a cached, gradient-free segment memory, the post-LN Transformer-XL layer without
 * positional terms, and the superposition gate. */
#include "nn/nn_internal.h"

#include <math.h>
#include <stdio.h>

pb_nn_tensor *pb_nn_stop_gradient(pb_nn_tape *t, pb_nn_tensor *x)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_stop_gradient", 1, x, NULL, NULL))
        return NULL;
    return pb_nn_constant(t, x->rows, x->cols, x->data);
}

pb_nn_tensor *pb_nn_superpose(pb_nn_tape *t, pb_nn_tensor *x, pb_nn_tensor *gate)
{
    return gate ? pb_nn_mul(t, x, gate) : x;
}

/* The fused attention op: per head softmax(q_h k_h^T scale + mask) v_h, the probabilities of
 * every head kept for the reverse pass (heads x L x keys floats) instead of the score, mask and
 * softmax tensors of an unfused graph. */
typedef struct nn_attention_ctx {
    int n_head, mem_rows;
    float scale;
    float *prob;  /* [n_head][L][keys] */
    float *dprob; /* [L][keys] backward scratch */
} nn_attention_ctx;

/* Row i's softmax over keys 0..limit-1 of s (in place), zeros beyond. */
static void nn_attention_softmax_row(float *s, int keys, int limit)
{
    float m = s[0];
    for (int j = 1; j < limit; j++)
        if (s[j] > m)
            m = s[j];
    double sum = 0;
    for (int j = 0; j < limit; j++) {
        s[j] = expf(s[j] - m);
        sum += s[j];
    }
    float inv = (float)(1.0 / sum);
    for (int j = 0; j < limit; j++)
        s[j] *= inv;
    for (int j = limit; j < keys; j++)
        s[j] = 0;
}

static void nn_attention_backward(const nn_record *r)
{
    const nn_attention_ctx *c = r->aux;
    const pb_nn_tensor *q = r->in[0], *k = r->in[1], *v = r->in[2], *out = r->out;
    int L = q->rows, keys = k->rows, hd = q->cols, d = hd / c->n_head;
    float *dp = c->dprob;
    for (int h = 0; h < c->n_head; h++) {
        const float *p = c->prob + (size_t)h * (size_t)L * (size_t)keys, *dout = out->grad + h * d;
        if (v->grad) /* dV_h += P^T dO_h */
            pb_nn_gemm(1, 0, keys, d, L, 1, p, keys, dout, hd, 1, v->grad + h * d, hd);
        if (!q->grad && !k->grad)
            continue;
        /* dP = dO_h V_h^T, then dS = scale P (dP - rowsum(dP P)) in place. */
        pb_nn_gemm(0, 1, L, keys, d, 1, dout, hd, v->data + h * d, hd, 0, dp, keys);
        for (int i = 0; i < L; i++) {
            float *dpi = dp + (size_t)i * (size_t)keys;
            const float *pi = p + (size_t)i * (size_t)keys;
            double dot = 0;
            for (int j = 0; j < keys; j++)
                dot += (double)dpi[j] * pi[j];
            for (int j = 0; j < keys; j++)
                dpi[j] = c->scale * pi[j] * (dpi[j] - (float)dot);
        }
        if (q->grad) /* dQ_h += dS K_h */
            pb_nn_gemm(0, 0, L, d, keys, 1, dp, keys, k->data + h * d, hd, 1, q->grad + h * d, hd);
        if (k->grad) /* dK_h += dS^T Q_h */
            pb_nn_gemm(1, 0, keys, d, L, 1, dp, keys, q->data + h * d, hd, 1, k->grad + h * d, hd);
    }
}

pb_nn_tensor *pb_nn_attention(pb_nn_tape *t, pb_nn_tensor *q, pb_nn_tensor *k, pb_nn_tensor *v,
                              int n_head, int mem_rows)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_attention", 3, q, k, v))
        return NULL;
    if (n_head < 1 || q->cols % n_head || k->cols != q->cols || v->cols != q->cols ||
        k->rows != v->rows || k->rows < 1)
        return nn_tape_fail(t, "pb_nn_attention: q %dx%d, k %dx%d, v %dx%d do not fit %d heads",
                            q->rows, q->cols, k->rows, k->cols, v->rows, v->cols, n_head);
    if (mem_rows >= 0 && k->rows != mem_rows + q->rows)
        return nn_tape_fail(t, "pb_nn_attention: %d keys for %d memory rows and %d queries",
                            k->rows, mem_rows, q->rows);
    int grad = nn_tape_wants_grad(t, q, k, v);
    int L = q->rows, keys = k->rows, hd = q->cols, d = hd / n_head;
    pb_nn_tensor *out = nn_tape_tensor(t, L, hd, grad);
    nn_attention_ctx *c = nn_tape_alloc(t, sizeof *c);
    size_t per_head = (size_t)L * (size_t)keys;
    if (!out || !c)
        return NULL;
    *c =
        (nn_attention_ctx){.n_head = n_head, .mem_rows = mem_rows, .scale = 1.0f / sqrtf((float)d)};
    c->prob = nn_tape_alloc(t, (grad ? (size_t)n_head : 1) * per_head * sizeof(float));
    if (!c->prob)
        return NULL;
    for (int h = 0; h < n_head; h++) {
        float *p = c->prob + (grad ? (size_t)h * per_head : 0);
        pb_nn_gemm(0, 1, L, keys, d, c->scale, q->data + h * d, hd, k->data + h * d, hd, 0, p,
                   keys);
        for (int i = 0; i < L; i++) {
            int limit = mem_rows >= 0 && i + mem_rows + 1 < keys ? i + mem_rows + 1 : keys;
            nn_attention_softmax_row(p + (size_t)i * (size_t)keys, keys, limit);
        }
        pb_nn_gemm(0, 0, L, d, keys, 1, p, keys, v->data + h * d, hd, 0, out->data + h * d, hd);
    }
    if (!grad)
        return out;
    if (!(c->dprob = nn_tape_grad_scratch(t, per_head)))
        return NULL;
    nn_record *r = nn_tape_record(t, nn_attention_backward, out);
    if (!r)
        return NULL;
    r->in[0] = q;
    r->in[1] = k;
    r->in[2] = v;
    r->aux = c;
    return out;
}

static int nn_trf_add(pb_nn_params *p, const char *prefix, const char *what, int rows, int cols,
                      int init, pb_rng *rng, pb_error *err)
{
    char name[256];
    snprintf(name, sizeof name, "%s/%s", prefix, what);
    return pb_nn_params_add(p, name, rows, cols, init, init == PB_NN_INIT_GLOROT ? rng : NULL, err);
}

int pb_nn_trf_init(pb_nn_trf *m, pb_nn_params *p, const char *prefix, int d_model, int n_head,
                   int d_head, int d_inner, float ln_eps, int superposition, int sp_ff_only,
                   pb_rng *rng, pb_error *err)
{
    if (!m || !p || !prefix)
        return pb_errorf(err, "nn transformer: missing layer, parameter set or prefix");
    if (d_model < 1 || n_head < 1 || d_head < 1 || d_inner < 1 || !(ln_eps > 0))
        return pb_errorf(err, "nn transformer '%s': bad sizes %d/%d/%d/%d or eps", prefix, d_model,
                         n_head, d_head, d_inner);
    int hd = n_head * d_head, g = PB_NN_INIT_GLOROT, z = PB_NN_INIT_ZEROS, o = PB_NN_INIT_ONES;
    *m = (pb_nn_trf){.d_model = d_model,
                     .n_head = n_head,
                     .d_head = d_head,
                     .d_inner = d_inner,
                     .ln_eps = ln_eps,
                     .superposition = superposition,
                     .sp_ff_only = sp_ff_only,
                     .sp_o = -1,
                     .sp_2 = -1};
    if ((m->wq = nn_trf_add(p, prefix, "wq", d_model, hd, g, rng, err)) < 0 ||
        (m->wkv = nn_trf_add(p, prefix, "wkv", d_model, 2 * hd, g, rng, err)) < 0 ||
        (m->wo = nn_trf_add(p, prefix, "wo", hd, d_model, g, rng, err)) < 0 ||
        (m->ln1_g = nn_trf_add(p, prefix, "ln1_g", 1, d_model, o, rng, err)) < 0 ||
        (m->ln1_b = nn_trf_add(p, prefix, "ln1_b", 1, d_model, z, rng, err)) < 0 ||
        (m->w1 = nn_trf_add(p, prefix, "w1", d_model, d_inner, g, rng, err)) < 0 ||
        (m->b1 = nn_trf_add(p, prefix, "b1", 1, d_inner, z, rng, err)) < 0 ||
        (m->w2 = nn_trf_add(p, prefix, "w2", d_inner, d_model, g, rng, err)) < 0 ||
        (m->b2 = nn_trf_add(p, prefix, "b2", 1, d_model, z, rng, err)) < 0 ||
        (m->ln2_g = nn_trf_add(p, prefix, "ln2_g", 1, d_model, o, rng, err)) < 0 ||
        (m->ln2_b = nn_trf_add(p, prefix, "ln2_b", 1, d_model, z, rng, err)) < 0)
        return PB_ERR;
    if (!superposition)
        return PB_OK;
    if (!sp_ff_only && (m->sp_o = nn_trf_add(p, prefix, "sp_o", d_model, hd, g, rng, err)) < 0)
        return PB_ERR;
    if ((m->sp_2 = nn_trf_add(p, prefix, "sp_2", d_model, d_inner, g, rng, err)) < 0)
        return PB_ERR;
    return PB_OK;
}

pb_nn_tensor *pb_nn_trf_forward(pb_nn_tape *t, pb_nn_params *p, const pb_nn_trf *m, pb_nn_tensor *x,
                                pb_nn_tensor *mem, int causal, pb_nn_tensor *gate,
                                pb_nn_tensor *gate_mem)
{
    if (!nn_tape_inputs_ok(t, "pb_nn_trf_forward", 1, x, NULL, NULL))
        return NULL;
    if (!m || x->cols != m->d_model || (mem && mem->cols != m->d_model))
        return nn_tape_fail(t, "pb_nn_trf_forward: input width %d, layer width %d", x->cols,
                            m ? m->d_model : -1);
    if (gate && (!m->superposition || gate->cols != m->d_model ||
                 (gate->rows != 1 && gate->rows != x->rows) ||
                 (gate->rows != 1 && mem && (!gate_mem || gate_mem->rows != mem->rows))))
        return nn_tape_fail(t, "pb_nn_trf_forward: gate does not fit the segment and memory");
    /* Attention-side gates: none in ff_only mode. */
    pb_nn_tensor *ga = gate && !m->sp_ff_only ? gate : NULL, *ga_kv = ga;
    if (ga && mem && ga->rows != 1) {
        pb_nn_tensor *both[2] = {gate_mem, ga};
        ga_kv = pb_nn_concat_rows(t, 2, both);
    }
    pb_nn_tensor *kv_in = x;
    if (mem) {
        pb_nn_tensor *both[2] = {mem, x};
        kv_in = pb_nn_concat_rows(t, 2, both);
    }
    int hd = m->n_head * m->d_head;
    pb_nn_tensor *q = pb_nn_matmul(t, pb_nn_superpose(t, x, ga), pb_nn_param(t, p, m->wq));
    pb_nn_tensor *kv = pb_nn_matmul(t, pb_nn_superpose(t, kv_in, ga_kv), pb_nn_param(t, p, m->wkv));
    pb_nn_tensor *k = pb_nn_slice_cols(t, kv, 0, hd), *v = pb_nn_slice_cols(t, kv, hd, hd);
    pb_nn_tensor *att = pb_nn_attention(t, q, k, v, m->n_head, causal ? (mem ? mem->rows : 0) : -1);
    pb_nn_tensor *go = ga ? pb_nn_matmul(t, ga, pb_nn_param(t, p, m->sp_o)) : NULL;
    pb_nn_tensor *a = pb_nn_matmul(t, pb_nn_superpose(t, att, go), pb_nn_param(t, p, m->wo));
    pb_nn_tensor *y = pb_nn_layer_norm(t, pb_nn_add(t, x, a), pb_nn_param(t, p, m->ln1_g),
                                       pb_nn_param(t, p, m->ln1_b), m->ln_eps);
    pb_nn_tensor *f1 = pb_nn_linear(t, pb_nn_superpose(t, y, gate), pb_nn_param(t, p, m->w1),
                                    pb_nn_param(t, p, m->b1), PB_NN_ACT_RELU);
    pb_nn_tensor *g2 = gate ? pb_nn_matmul(t, gate, pb_nn_param(t, p, m->sp_2)) : NULL;
    pb_nn_tensor *f2 = pb_nn_linear(t, pb_nn_superpose(t, f1, g2), pb_nn_param(t, p, m->w2),
                                    pb_nn_param(t, p, m->b2), PB_NN_ACT_NONE);
    return pb_nn_layer_norm(t, pb_nn_add(t, y, f2), pb_nn_param(t, p, m->ln2_g),
                            pb_nn_param(t, p, m->ln2_b), m->ln_eps);
}
