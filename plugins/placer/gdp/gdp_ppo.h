/* gdp_ppo.h — GDP's reward, mean-reward baseline and PPO clipped objective (specs/gdp.md §6),
 * written as gradients of the loss with respect to the per-node log-probabilities so that one
 * forward pass per graph serves every rollout of that graph in a minibatch. */
#ifndef GDP_PPO_H
#define GDP_PPO_H

#include <stddef.h>

enum { GDP_RATIO_NODE = 0, GDP_RATIO_GRAPH = 1 };

/* -sqrt(t / t_ref) for a valid placement, invalid_reward (-10) otherwise (§6.1). */
double gdp_reward(double t_us, double t_ref_us, int valid, double invalid_reward);

/*
 * The clipped surrogate of one rollout (§6.3): logp is n x d (log pi_theta), a[v] the sampled
 * device, old_a[v] = log pi_old(a_v), weight[v] 1 for units in the loss (0: leader-mode
 * followers), n_loss their count.  Per node: L = (1/n_loss) sum_v w_v min(rho_v A,
 * clip(rho_v, 1-eps, 1+eps) A); per graph: rho = exp(sum_v w_v (log pi - log pi_old)) and
 * L = min(rho A, clip(rho) A).  Adds scale * d(-L)/dlogp into seed (n x d; a clipped term has no
 * gradient, a tie counts as unclipped) and returns L.
 */
double gdp_ppo_clip(const float *logp, int n, int d, const unsigned char *a, const float *old_a,
                    const float *weight, int n_loss, double adv, double eps, int ratio,
                    double scale, float *seed);

/* Mean over the loss units of the entropy of pi(.|v) (d devices): H = (1/n_loss) sum_v w_v H_v.
 * Adds scale * d(-H)/dlogp into seed (when seed is not NULL) and returns H. */
double gdp_entropy(const float *logp, int n, int d, const float *weight, int n_loss, double scale,
                   float *seed);

/*
 * The PPO loss (§6.3) of one graph's share of a minibatch of nb rollouts: count rollouts of this
 * graph, actions acts[i] (n units) with advantages adv[i], under the current log-probabilities
 * logp and the iteration's old_logp (both n x d).  Returns
 *   -(1/nb) sum_i L_clip(i) - c_h (count/nb) H,
 * the graph's part of  -mean_{j in B} L_clip(j) - c_h mean_{j in B} H(j)  (H does not depend on
 * the actions, so the graph's rollouts share it), and adds its gradient with respect to logp into
 * seed (n x d; the caller zeroes it).  old_a is scratch of n floats.
 */
double gdp_ppo_loss(const float *logp, const float *old_logp, int n, int d,
                    const unsigned char *const *acts, const double *adv, int count, int nb,
                    const float *weight, int n_loss, double eps, double c_h, int ratio,
                    float *old_a, float *seed);

/* The bias term of §6.2: the mean of earlier rewards of one graph. */
typedef struct gdp_baseline {
    double sum;
    long long n;
} gdp_baseline;

/* Returns the advantage of reward r (r minus the mean of the earlier rewards, 0 for the first)
 * and adds r to the history unless it is invalid and include_invalid is 0. */
double gdp_baseline_push(gdp_baseline *b, double r, int valid, int include_invalid);

/* Mean and standard deviation normalisation of adv[0..n) in place (ppo2, adv_norm = on); a
 * constant vector becomes zeros. */
void gdp_normalize(double *adv, int n);

#endif
