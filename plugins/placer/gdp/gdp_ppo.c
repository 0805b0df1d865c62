/* gdp_ppo.c — reward, PPO clipped surrogate and entropy of GDP (specs/gdp.md §6.1-§6.3). */
#include "gdp_ppo.h"

#include <math.h>

double gdp_reward(double t_us, double t_ref_us, int valid, double invalid_reward)
{
    if (!valid || !(t_us >= 0) || !(t_ref_us > 0))
        return invalid_reward;
    return -sqrt(t_us / t_ref_us);
}

double gdp_baseline_push(gdp_baseline *b, double r, int valid, int include_invalid)
{
    double adv = b->n ? r - b->sum / (double)b->n : 0;
    if (valid || include_invalid) {
        b->sum += r;
        b->n++;
    }
    return adv;
}

static double gdp_clip(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

double gdp_ppo_clip(const float *logp, int n, int d, const unsigned char *a, const float *old_a,
                    const float *weight, int n_loss, double adv, double eps, int ratio,
                    double scale, float *seed)
{
    if (n_loss < 1)
        return 0;
    if (ratio == GDP_RATIO_GRAPH) {
        double s = 0;
        for (int v = 0; v < n; v++)
            s += weight[v] * ((double)logp[(size_t)v * d + a[v]] - old_a[v]);
        double rho = exp(s), un = rho * adv, cl = gdp_clip(rho, 1 - eps, 1 + eps) * adv;
        if (un <= cl && seed)
            for (int v = 0; v < n; v++)
                seed[(size_t)v * d + a[v]] += (float)(-scale * adv * rho * weight[v]);
        return un <= cl ? un : cl;
    }
    double sum = 0;
    for (int v = 0; v < n; v++) {
        if (weight[v] == 0)
            continue;
        double rho = exp((double)logp[(size_t)v * d + a[v]] - old_a[v]);
        double un = rho * adv, cl = gdp_clip(rho, 1 - eps, 1 + eps) * adv;
        sum += un <= cl ? un : cl;
        if (un <= cl && seed)
            seed[(size_t)v * d + a[v]] += (float)(-scale * adv * rho / n_loss);
    }
    return sum / n_loss;
}

double gdp_entropy(const float *logp, int n, int d, const float *weight, int n_loss, double scale,
                   float *seed)
{
    if (n_loss < 1)
        return 0;
    double total = 0;
    for (int v = 0; v < n; v++) {
        if (weight[v] == 0)
            continue;
        const float *row = logp + (size_t)v * d;
        for (int k = 0; k < d; k++) {
            double p = exp((double)row[k]);
            total -= p * row[k];
            /* dH_v/dlogp_k = -p_k (logp_k + 1); the seed takes d(-scale H / n_loss). */
            if (seed)
                seed[(size_t)v * d + k] += (float)(scale * p * (row[k] + 1.0) / n_loss);
        }
    }
    return total / n_loss;
}

double gdp_ppo_loss(const float *logp, const float *old_logp, int n, int d,
                    const unsigned char *const *acts, const double *adv, int count, int nb,
                    const float *weight, int n_loss, double eps, double c_h, int ratio,
                    float *old_a, float *seed)
{
    if (count < 1 || nb < 1)
        return 0;
    double loss = 0;
    for (int i = 0; i < count; i++) {
        const unsigned char *a = acts[i];
        for (int v = 0; v < n; v++)
            old_a[v] = old_logp[(size_t)v * d + a[v]];
        loss -=
            gdp_ppo_clip(logp, n, d, a, old_a, weight, n_loss, adv[i], eps, ratio, 1.0 / nb, seed) /
            nb;
    }
    return loss - c_h * (double)count / nb *
                      gdp_entropy(logp, n, d, weight, n_loss, c_h * (double)count / nb, seed);
}

void gdp_normalize(double *adv, int n)
{
    if (n < 1)
        return;
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++)
        mean += adv[i];
    mean /= n;
    for (int i = 0; i < n; i++)
        var += (adv[i] - mean) * (adv[i] - mean);
    double sd = sqrt(var / n);
    for (int i = 0; i < n; i++)
        adv[i] = sd > 0 ? (adv[i] - mean) / (sd + 1e-8) : 0;
}
