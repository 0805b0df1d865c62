/* reinforce.h — the RL arithmetic of the placeto placer (specs/placeto.md §4.4, §4.5): reward
 * run times, returns, the turn-based baseline, action sampling and the per-step gradient with
 * respect to the logits. */
#ifndef PLACETO_REINFORCE_H
#define PLACETO_REINFORCE_H

#include "placebench.h"

enum { REINFORCE_SIGN_INTENDED = 0, REINFORCE_SIGN_FORKS = 1 };

typedef struct reinforce_cfg {
    int sign;             /* REINFORCE_SIGN_*: r_t = x_t - x_{t+1} ([A]) or x_{t+1} - x_t ([M/B]) */
    int log_runtime;      /* x_t = ln(run time in seconds) */
    double disc;          /* discount factor of the returns */
    double mem_penalty;   /* 0 = off */
    double max_mem_gb;    /* memory above this (GB = 1e9 bytes) is penalised */
    double max_penalized; /* x_t is capped here when the penalty is on (reference: 10) */
} reinforce_cfg;

/* The reward run time x of one simulation: run time rt_us (µs) in seconds, its log when
 * log_runtime, plus the memory penalty on the largest per-device peak (bytes) when on. */
double reinforce_reward_runtime(const reinforce_cfg *c, double rt_us, double max_peak_bytes);

/* Returns of one episode of R steps from x[0..R]: r_t by the configured sign and
 * G_t = r_t + disc * G_{t+1}, G_{R-1} = r_{R-1}.  g: R doubles, caller-owned. */
void reinforce_returns(const reinforce_cfg *c, const double *x, int steps, double *g);

/*
 * The turn-based baseline: for each step index t, the returns of the last `rounds` training
 * episodes; b_t is their mean, the current episode's included (it is pushed before the mean is
 * taken, as the reference does).
 */
typedef struct reinforce_baseline {
    int steps;    /* step indices per episode */
    int rounds;   /* window (bl_n_rnds) */
    int cap;      /* ring capacity = min(rounds, episodes that can be pushed) */
    int count;    /* episodes held (<= cap) */
    int head;     /* slot the next episode goes to */
    double *ring; /* [cap * steps] */
} reinforce_baseline;

/* max_pushes bounds the ring's memory (the run's training episodes).  Caller frees. */
int reinforce_baseline_init(reinforce_baseline *b, int steps, int rounds, int max_pushes,
                            pb_error *err);
void reinforce_baseline_free(reinforce_baseline *b);
/* Appends an episode's returns g[0..steps). */
void reinforce_baseline_push(reinforce_baseline *b, const double *g);
/* b_t for every step (steps doubles, caller-owned); 0 when nothing was pushed. */
void reinforce_baseline_mean(const reinforce_baseline *b, double *mean);

/* Softmax of k logits into p (double). */
void reinforce_softmax(const float *logits, int k, double *p);
/* A device drawn from softmax(logits) with one pb_rng_uniform draw. */
int reinforce_sample(const float *logits, int k, pb_rng *rng);
/* The first index of the largest logit (greedy action of eval episodes). */
int reinforce_argmax(const float *logits, int k);

/*
 * d(loss)/d(logits) of one step, loss = adv * (-log p_a) - ent_weight * H with p = softmax,
 * H = -sum p_k ln(p_k + 1e-3) (the reference's entropy, note the 1e-3): seed (k floats) =
 * adv * (p - onehot(a)) - ent_weight * dH/dlogits.
 */
void reinforce_logit_grad(const float *logits, int k, int action, double adv, double ent_weight,
                          float *seed);

#endif
