/* heterps_rl.c — the HeterPS scheduler (specs/heterps.md §6, Algorithm 1): a recurrent policy
 * reads one layer per step and gives P(type | layer, earlier types); REINFORCE with a
 * moving-average baseline on R = -C_pen / C_norm, pre-training on uniformly random plans.  Built
 * as the placer `heterps` (LSTM cell, HETERPS_RL_LSTM) and as `rl-rnn` (Elman cell,
 * HETERPS_RL_ELMAN). */
#include "placebench.h"

#include "heterps.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(HETERPS_RL_LSTM)
#define HRL_NAME "heterps"
#define HRL_CELL_DEFAULT "lstm"
#define HRL_ABOUT                                                                                  \
    "HeterPS scheduler: LSTM policy over layers trained with REINFORCE (use with the heterps "     \
    "simulator)"
#elif defined(HETERPS_RL_ELMAN)
#define HRL_NAME "rl-rnn"
#define HRL_CELL_DEFAULT "elman"
#define HRL_ABOUT                                                                                  \
    "HeterPS baseline RL-RNN: the heterps scheduler with an Elman cell (use with the heterps "     \
    "simulator)"
#else
#error "define HETERPS_RL_LSTM or HETERPS_RL_ELMAN"
#endif

enum { HRL_LSTM = 0, HRL_ELMAN = 1 };
enum { HRL_ADAM = 0, HRL_SGD = 1 };
enum { HRL_MATH_FAST = 0, HRL_MATH_LIBM = 1 };

typedef struct hrl_opts {
    int cell;
    long long hidden, rounds, pretrain, plans;
    int optimizer;
    double lr, clip, entropy, baseline_decay;
    int baseline_first, prev_action;
    int math;
} hrl_opts;

/* clang-format off */
static const pb_option_def hrl_options[] = {
    {.name = "cell", .type = PB_OPT_ENUM, .default_value = HRL_CELL_DEFAULT, .min = 1, .max = 0,
     .choices = "lstm|elman", .help = "recurrent cell: lstm (HeterPS) or elman (the RL-RNN baseline)",
     .offset = offsetof(hrl_opts, cell)},
    {.name = "hidden", .type = PB_OPT_INT, .default_value = "64", .min = 1, .max = 4096,
     .help = "H, hidden units of the cell", .offset = offsetof(hrl_opts, hidden)},
    {.name = "rounds", .type = PB_OPT_INT, .default_value = "800", .min = 0, .max = 10000000,
     .help = "I, on-policy rounds after pre-training (the run's episodes, when set, win)",
     .offset = offsetof(hrl_opts, rounds)},
    {.name = "pretrain", .type = PB_OPT_INT, .default_value = "20", .min = 0, .max = 10000000,
     .help = "P, first rounds on uniformly random plans", .offset = offsetof(hrl_opts, pretrain)},
    {.name = "plans", .type = PB_OPT_INT, .default_value = "32", .min = 1, .max = 100000,
     .help = "N = G, plans sampled per round", .offset = offsetof(hrl_opts, plans)},
    {.name = "optimizer", .type = PB_OPT_ENUM, .default_value = "adam", .min = 1, .max = 0,
     .choices = "adam|sgd", .help = "adam (0.9, 0.999, 1e-8) or plain SGD (Formula 16, strict paper)",
     .offset = offsetof(hrl_opts, optimizer)},
    {.name = "lr", .type = PB_OPT_DOUBLE, .default_value = "0.003", .min = 0, .max = 10,
     .help = "learning rate eta", .offset = offsetof(hrl_opts, lr)},
    {.name = "clip", .type = PB_OPT_DOUBLE, .default_value = "5", .min = 0, .max = 1e9,
     .help = "global gradient-norm clip; 0 = none", .offset = offsetof(hrl_opts, clip)},
    {.name = "entropy", .type = PB_OPT_DOUBLE, .default_value = "0.2", .min = 0, .max = 100,
     .help = "beta_H, weight of the policy's entropy in the objective (0 in a strict-paper run)",
     .offset = offsetof(hrl_opts, entropy)},
    {.name = "baseline_decay", .type = PB_OPT_DOUBLE, .default_value = "0.1", .min = 0, .max = 1,
     .help = "gamma of the moving-average baseline b <- (1-gamma) b + gamma mean(R)",
     .offset = offsetof(hrl_opts, baseline_decay)},
    {.name = "baseline_first", .type = PB_OPT_BOOL, .default_value = "true", .min = 1, .max = 0,
     .help = "start b at the first round's mean reward (false: at 0, as the paper)",
     .offset = offsetof(hrl_opts, baseline_first)},
    {.name = "prev_action", .type = PB_OPT_BOOL, .default_value = "true", .min = 1, .max = 0,
     .help = "feed the previous layer's type (one-hot) to the cell: P(a_l | a_1..a_l-1)",
     .offset = offsetof(hrl_opts, prev_action)},
    {.name = "math", .type = PB_OPT_ENUM, .default_value = "fast", .min = 1, .max = 0,
     .choices = "fast|libm", .help = "LSTM arithmetic: fast (own products and vectorised "
     "tanh/sigmoid, the same bits on every processor) or libm (OpenBLAS and libm: the "
     "results before the fast path); the elman cell always uses libm",
     .offset = offsetof(hrl_opts, math)},
};
/* clang-format on */

typedef struct hrl_placer {
    hrl_opts o;
    const pb_host *host;
    uint64_t seed; /* the run's: "policy" seeds the initial weights, "plans" the sampling */
} hrl_placer;

/* One run: the policy, its features and the round's buffers. */
typedef struct hrl_run {
    const hrl_placer *pl;
    heterps_search *search;
    int L, T, D, N, H;
    float *features; /* [L * D] static part; the previous-action columns are filled per row */
    pb_nn_params *params;
    pb_nn_lstm lstm;
    pb_nn_elman elman;
    int w_out, b_out;
    pb_nn_tape *tape;
    pb_nn_adam *adam;
    int *plans;                  /* [N * L] */
    double *reward;              /* [N] */
    pb_nn_tensor **logp, **prob; /* [L] this round's per-layer outputs (N x T) */
    double c_norm, baseline;
    int has_baseline;
} hrl_run;

static int hrl_create(const pb_create_args *a, void **instance, pb_error *err)
{
    hrl_placer *p = malloc(sizeof *p);
    if (!p)
        return pb_errorf(err, "out of memory");
    *p = (hrl_placer){.o = *(const hrl_opts *)a->options, .host = a->host};
    p->seed = a->seed;
    *instance = p;
    return PB_OK;
}

static void hrl_destroy(void *instance)
{
    free(instance);
}

/* Static features of §6 per layer: one-hot index, one-hot kind, s, w, c. */
static int hrl_features(hrl_run *r, const pb_graph *g, pb_error *err)
{
    heterps_layer *layers = malloc((size_t)r->L * sizeof *layers);
    if (!layers)
        return pb_errorf(err, "out of memory");
    if (heterps_layers_read(g, layers, err)) {
        free(layers);
        return PB_ERR;
    }
    heterps_hw hw;
    heterps_hw_default(&hw);
    for (int l = 0; l < r->L; l++) {
        const heterps_layer *y = &layers[l];
        float *f = r->features + (size_t)l * r->D;
        f[l] = 1;
        f[r->L + y->kind] = 1;
        double bnd = hw.lambda[HETERPS_CPU] + hw.batch_o * 8 * y->cut / hw.w[HETERPS_CPU];
        f[r->L + HETERPS_N_KINDS] = (float)(log10(1 + 4 * y->in) / 10);
        f[r->L + HETERPS_N_KINDS + 1] = (float)(log10(1 + 4 * (y->params + y->rows * y->dim)) / 10);
        f[r->L + HETERPS_N_KINDS + 2] = (float)(log10(1 + 1e6 * bnd / hw.batch_o) / 3);
    }
    free(layers);
    return PB_OK;
}

static int hrl_policy_init(hrl_run *r, pb_error *err)
{
    pb_rng init;
    pb_rng_seed(&init, pb_seed_derive(r->pl->seed, "policy"));
    int rc = r->pl->o.cell == HRL_LSTM
                 ? pb_nn_lstm_init(&r->lstm, r->params, "cell", r->D, r->H, &init, err)
                 : pb_nn_elman_init(&r->elman, r->params, "cell", r->D, r->H, &init, err);
    if (rc)
        return PB_ERR;
    r->w_out = pb_nn_params_add(r->params, "out/w", r->H, r->T, PB_NN_INIT_ZEROS, NULL, err);
    r->b_out = pb_nn_params_add(r->params, "out/b", 1, r->T, PB_NN_INIT_ZEROS, NULL, err);
    if (r->w_out < 0 || r->b_out < 0)
        return PB_ERR;
    float *w = pb_nn_params_values(r->params) + pb_nn_params_offset(r->params, r->w_out);
    for (int k = 0; k < r->H * r->T; k++)
        w[k] = (float)((2 * pb_rng_uniform(&init) - 1) / sqrt(r->H));
    return PB_OK;
}

/* Draws a type from row n of prob. */
static int hrl_draw(pb_rng *rng, const float *prob, int T)
{
    double u = pb_rng_uniform(rng), acc = 0;
    for (int t = 0; t < T - 1; t++) {
        acc += prob[t];
        if (u < acc)
            return t;
    }
    return T - 1;
}

static int hrl_argmax(const float *prob, int T)
{
    int best = 0;
    for (int t = 1; t < T; t++)
        best = prob[t] > prob[best] ? t : best;
    return best;
}

enum { HRL_SAMPLE, HRL_RANDOM, HRL_GREEDY };

/* Records the policy over all layers for n rows, choosing the types by `how` into r->plans and
 * keeping each layer's log-probabilities and probabilities. */
static void hrl_forward(hrl_run *r, pb_rng *rng, int n, int how)
{
    pb_nn_tape *t = r->tape;
    int L = r->L, T = r->T, D = r->D;
    pb_nn_tensor *h = pb_nn_constant(t, n, r->H, NULL), *c = pb_nn_constant(t, n, r->H, NULL);
    pb_nn_tensor *w = pb_nn_param(t, r->params, r->w_out), *b = pb_nn_param(t, r->params, r->b_out);
    for (int l = 0; l < L; l++) {
        pb_nn_tensor *x = pb_nn_constant(t, n, D, NULL);
        if (!x)
            return;
        for (int k = 0; k < n; k++) {
            float *row = x->data + (size_t)k * D;
            memcpy(row, r->features + (size_t)l * D, (size_t)D * sizeof(float));
            if (r->pl->o.prev_action && l > 0)
                row[L + HETERPS_N_KINDS + 3 + r->plans[(size_t)k * L + l - 1]] = 1;
        }
        if (r->pl->o.cell == HRL_LSTM) {
            pb_nn_tensor *h2, *c2;
            pb_nn_lstm_step_math(t, r->params, &r->lstm,
                                 r->pl->o.math == HRL_MATH_FAST ? PB_NN_MATH_FAST : PB_NN_MATH_LIBM,
                                 x, h, c, &h2, &c2);
            h = h2;
            c = c2;
        } else {
            h = pb_nn_elman_step(t, r->params, &r->elman, x, h);
        }
        pb_nn_tensor *logits = pb_nn_linear(t, h, w, b, PB_NN_ACT_NONE);
        r->logp[l] = pb_nn_log_softmax(t, logits);
        r->prob[l] = pb_nn_softmax(t, logits);
        if (!r->prob[l])
            return;
        for (int k = 0; k < n; k++) {
            const float *pr = r->prob[l]->data + (size_t)k * T;
            int a = how == HRL_RANDOM   ? (int)pb_rng_below(rng, (uint64_t)T)
                    : how == HRL_GREEDY ? hrl_argmax(pr, T)
                                        : hrl_draw(rng, pr, T);
            r->plans[(size_t)k * L + l] = a;
        }
    }
}

/* C_norm: the cheapest feasible homogeneous plan; when none is feasible, the cheapest penalised
 * one (the simulator does not expose C_ub itself). */
static int hrl_norm(hrl_run *r, pb_error *err)
{
    double feasible_best = INFINITY, any_best = INFINITY;
    for (int t = 0; t < r->T; t++) {
        for (int l = 0; l < r->L; l++)
            r->plans[l] = t;
        double cost;
        int ok;
        if (heterps_search_eval(r->search, r->plans, &cost, &ok, err))
            return PB_ERR;
        feasible_best = ok && cost < feasible_best ? cost : feasible_best;
        any_best = cost < any_best ? cost : any_best;
    }
    r->c_norm = isfinite(feasible_best) ? feasible_best : any_best;
    return r->c_norm > 0 ? PB_OK
                         : pb_errorf(err, "%s: the homogeneous plans cost nothing", HRL_NAME);
}

/* The REINFORCE loss of this round: -(1/N) sum_n A_n sum_l log P(a_nl) - beta_H (1/N) sum H. */
static pb_nn_tensor *hrl_loss(hrl_run *r)
{
    pb_nn_tape *t = r->tape;
    int L = r->L, T = r->T, N = r->N;
    pb_nn_tensor *loss = NULL;
    for (int l = 0; l < L; l++) {
        pb_nn_tensor *m = pb_nn_constant(t, N, T, NULL);
        if (!m)
            return NULL;
        for (int k = 0; k < N; k++)
            m->data[(size_t)k * T + r->plans[(size_t)k * L + l]] =
                (float)(-(r->reward[k] - r->baseline) / N);
        pb_nn_tensor *term = pb_nn_sum(t, pb_nn_mul(t, r->logp[l], m));
        if (r->pl->o.entropy > 0) {
            pb_nn_tensor *neg_h = pb_nn_sum(t, pb_nn_mul(t, r->prob[l], r->logp[l]));
            term = pb_nn_add(t, term, pb_nn_scale(t, neg_h, (float)(r->pl->o.entropy / N)));
        }
        loss = loss ? pb_nn_add(t, loss, term) : term;
    }
    return loss;
}

/* One round of Algorithm 1: plans (sampled or random), their costs, the update, the baseline. */
static int hrl_round(hrl_run *r, pb_rng *rng, int pretraining, pb_error *err)
{
    pb_nn_tape_reset(r->tape, 1);
    hrl_forward(r, rng, r->N, pretraining ? HRL_RANDOM : HRL_SAMPLE);
    double mean = 0;
    for (int k = 0; k < r->N && pb_nn_tape_status(r->tape, err) == PB_OK; k++) {
        double cost;
        if (heterps_search_eval(r->search, r->plans + (size_t)k * r->L, &cost, NULL, err))
            return PB_ERR;
        r->reward[k] = -cost / r->c_norm;
        mean += r->reward[k] / r->N;
    }
    if (pb_nn_tape_status(r->tape, err))
        return PB_ERR;
    if (!r->has_baseline) {
        r->baseline = r->pl->o.baseline_first ? mean : 0;
        r->has_baseline = 1;
    }
    pb_nn_tensor *loss = hrl_loss(r);
    pb_nn_params_zero_grad(r->params);
    if (pb_nn_backward(r->tape, loss, NULL, err))
        return PB_ERR;
    pb_nn_clip_grad_norm(r->params, r->pl->o.clip);
    if (r->pl->o.optimizer == HRL_SGD)
        pb_nn_sgd_step(r->params, r->pl->o.lr);
    else if (pb_nn_adam_step(r->adam, r->params, r->pl->o.lr, err))
        return PB_ERR;
    double g = r->pl->o.baseline_decay;
    r->baseline = (1 - g) * r->baseline + g * mean;
    return PB_OK;
}

/* Pre-training, on-policy rounds, then the argmax decode, which the host's log reports. */
static int hrl_train(hrl_run *r, long long rounds, pb_error *err)
{
    pb_rng rng;
    pb_rng_seed(&rng, pb_seed_derive(r->pl->seed, "plans"));
    const pb_host *host = r->pl->host;
    long long total = r->pl->o.pretrain + rounds;
    for (long long k = 0; k < total; k++) {
        if (hrl_round(r, &rng, k < r->pl->o.pretrain, err))
            return PB_ERR;
        pb_progress pr = {.struct_size = sizeof pr,
                          .episode = (int)k,
                          .episode_best_us = r->search->best_time_us,
                          .best_so_far_us = r->search->best_time_us,
                          .sim_calls = r->search->evaluations};
        host->progress(host->ctx, &pr);
        if (host->deadline_passed(host->ctx))
            break;
    }
    pb_nn_tape_reset(r->tape, 0);
    hrl_forward(r, &rng, 1, HRL_GREEDY);
    double cost;
    int ok;
    if (pb_nn_tape_status(r->tape, err) ||
        heterps_search_eval(r->search, r->plans, &cost, &ok, err))
        return PB_ERR;
    char msg[160];
    snprintf(msg, sizeof msg, "argmax plan: %.6g USD%s; best sampled plan: %.6g USD", cost,
             ok ? "" : " (infeasible)", r->search->best_cost);
    host->log(host->ctx, PB_LOG_INFO, msg);
    return PB_OK;
}

static void hrl_run_free(hrl_run *r)
{
    free(r->features);
    free(r->plans);
    free(r->reward);
    free(r->logp);
    free(r->prob);
    pb_nn_params_free(r->params);
    pb_nn_tape_free(r->tape);
    pb_nn_adam_free(r->adam);
}

static int hrl_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                     pb_error *err)
{
    hrl_placer *pl = instance;
    heterps_search s;
    *initial_us = -1;
    if (heterps_search_init(&s, p, pl->host, err))
        return PB_ERR;
    hrl_run r = {.pl = pl,
                 .search = &s,
                 .L = s.n_layers,
                 .T = s.n_types,
                 .N = (int)pl->o.plans,
                 .H = (int)pl->o.hidden};
    r.D = r.L + HETERPS_N_KINDS + 3 + (pl->o.prev_action ? r.T : 0);
    size_t n = (size_t)r.N > 1 ? (size_t)r.N : 1;
    r.features = calloc((size_t)r.L * (size_t)r.D, sizeof(float));
    r.plans = calloc(n * (size_t)r.L, sizeof(int));
    r.reward = calloc(n, sizeof(double));
    r.logp = calloc((size_t)r.L, sizeof *r.logp);
    r.prob = calloc((size_t)r.L, sizeof *r.prob);
    r.params = pb_nn_params_new();
    r.tape = pb_nn_tape_new();
    r.adam = pb_nn_adam_new(0.9, 0.999, 1e-8);
    int rc = r.features && r.plans && r.reward && r.logp && r.prob && r.params && r.tape && r.adam
                 ? PB_OK
                 : pb_errorf(err, "out of memory");
    long long rounds = p->budget->episodes > 0 ? p->budget->episodes : pl->o.rounds;
    if (rc == PB_OK)
        rc = hrl_features(&r, p->graph, err);
    if (rc == PB_OK)
        rc = hrl_policy_init(&r, err);
    if (rc == PB_OK)
        rc = hrl_norm(&r, err);
    if (rc == PB_OK)
        rc = hrl_train(&r, rounds, err);
    if (rc == PB_OK)
        rc = heterps_search_finish(&s, best, err);
    hrl_run_free(&r);
    heterps_search_free(&s);
    return rc;
}

static const pb_placer_ops hrl_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = hrl_create,
    .destroy = hrl_destroy,
    .place = hrl_place,
    /* a plan of per-layer resource types, costed by the HeterPS model only */
    .simulators = "heterps",
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, HRL_NAME, "1.0", HRL_ABOUT, hrl_options, hrl_opts, &hrl_ops);
