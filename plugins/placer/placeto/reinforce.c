/* reinforce.c — rewards, returns, the turn-based baseline and policy-gradient seeds of the
 * placeto placer. */
#include "reinforce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REINFORCE_MAX_DEVICES 1024
#define REINFORCE_ENTROPY_EPS 1e-3

double reinforce_reward_runtime(const reinforce_cfg *c, double rt_us, double max_peak_bytes)
{
    double x = rt_us * 1e-6;
    if (c->log_runtime)
        x = log(x);
    if (c->mem_penalty > 0) {
        double over = max_peak_bytes / 1e9 - c->max_mem_gb;
        x += c->mem_penalty * (over > 0 ? over : 0);
        if (x > c->max_penalized)
            x = c->max_penalized;
    }
    return x;
}

void reinforce_returns(const reinforce_cfg *c, const double *x, int steps, double *g)
{
    double next = 0;
    for (int t = steps - 1; t >= 0; t--) {
        double r = c->sign == REINFORCE_SIGN_FORKS ? x[t + 1] - x[t] : x[t] - x[t + 1];
        g[t] = t == steps - 1 ? r : r + c->disc * next;
        next = g[t];
    }
}

int reinforce_baseline_init(reinforce_baseline *b, int steps, int rounds, int max_pushes,
                            pb_error *err)
{
    memset(b, 0, sizeof *b);
    b->steps = steps;
    b->rounds = rounds;
    b->cap = rounds < max_pushes ? rounds : max_pushes;
    if (b->cap < 1)
        b->cap = 1;
    b->ring = calloc((size_t)b->cap * (size_t)steps + 1, sizeof(double));
    return b->ring ? PB_OK : pb_errorf(err, "out of memory");
}

void reinforce_baseline_free(reinforce_baseline *b)
{
    free(b->ring);
    b->ring = NULL;
}

void reinforce_baseline_push(reinforce_baseline *b, const double *g)
{
    memcpy(b->ring + (size_t)b->head * b->steps, g, (size_t)b->steps * sizeof(double));
    b->head = (b->head + 1) % b->cap;
    if (b->count < b->cap)
        b->count++;
}

void reinforce_baseline_mean(const reinforce_baseline *b, double *mean)
{
    for (int t = 0; t < b->steps; t++) {
        double s = 0;
        for (int e = 0; e < b->count; e++)
            s += b->ring[(size_t)e * b->steps + t];
        mean[t] = b->count ? s / b->count : 0;
    }
}

void reinforce_softmax(const float *logits, int k, double *p)
{
    double mx = logits[0], sum = 0;
    for (int i = 1; i < k; i++)
        if (logits[i] > mx)
            mx = logits[i];
    for (int i = 0; i < k; i++) {
        p[i] = exp((double)logits[i] - mx);
        sum += p[i];
    }
    for (int i = 0; i < k; i++)
        p[i] /= sum;
}

int reinforce_sample(const float *logits, int k, pb_rng *rng)
{
    double p[REINFORCE_MAX_DEVICES];
    if (k > REINFORCE_MAX_DEVICES)
        k = REINFORCE_MAX_DEVICES;
    reinforce_softmax(logits, k, p);
    double u = pb_rng_uniform(rng), acc = 0;
    for (int i = 0; i < k; i++) {
        acc += p[i];
        if (u < acc)
            return i;
    }
    for (int i = k - 1; i > 0; i--) /* rounding left u above the total: the last likely one */
        if (p[i] > 0)
            return i;
    return 0;
}

int reinforce_argmax(const float *logits, int k)
{
    int best = 0;
    for (int i = 1; i < k; i++)
        if (logits[i] > logits[best])
            best = i;
    return best;
}

void reinforce_logit_grad(const float *logits, int k, int action, double adv, double ent_weight,
                          float *seed)
{
    double p[REINFORCE_MAX_DEVICES], h[REINFORCE_MAX_DEVICES];
    if (k > REINFORCE_MAX_DEVICES)
        k = REINFORCE_MAX_DEVICES;
    reinforce_softmax(logits, k, p);
    /* dH/dp_i = -ln(p_i + eps) - p_i / (p_i + eps); dp_i/dl_j = p_i (delta_ij - p_j). */
    double mean_h = 0;
    for (int i = 0; i < k; i++) {
        h[i] = -log(p[i] + REINFORCE_ENTROPY_EPS) - p[i] / (p[i] + REINFORCE_ENTROPY_EPS);
        mean_h += p[i] * h[i];
    }
    for (int j = 0; j < k; j++) {
        double dent = p[j] * (h[j] - mean_h);
        seed[j] = (float)(adv * (p[j] - (j == action ? 1.0 : 0.0)) - ent_weight * dent);
    }
}
