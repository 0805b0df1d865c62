/* placeto.c — the Placeto placer (specs/placeto.md §4): progressive episodes over the traversal
 * order, REINFORCE with a turn-based baseline and entropy term, Adam, best-placement tracking.
 *
 * Design decisions (the reference's behaviour, and where this port departs from it):
 * - Episode (§4.3): start from the initial placement, simulate it, then for each node in the
 *   run's traversal order (topological order when none is named) build the node features,
 *   run embedding + policy, take a device (sampled; argmax in eval episodes) and re-simulate the
 *   whole graph: steps + 1 simulator calls per episode, all through host->simulate (fewer with
 *   resimulate = changed: a step that keeps its node's device reuses the last simulation, which
 *   the deterministic simulator would repeat exactly).
 * - Rewards (§4.4): x_t = ln(run time in s) (log_runtime), plus the optional memory penalty on
 *   the real per-device peak memory (it never fires in [M/B], which pass zeros); reward = x_t -
 *   x_{t+1} by default ([A]'s intent: an improvement is rewarded), or x_{t+1} - x_t with
 *   reward = forks ([M/B]'s code, which reinforces slower placements); discounted returns.
 * - Baseline (§4.5): per step index, the mean return over the last bl_rounds training episodes
 *   with the current one included (so the first training episode's advantage is 0).
 * - Gradient: sum over steps of adv_t * grad(-log p_t) + grad(-entropy_weight * H_t), the
 *   entropy with the reference's +1e-3 inside the log; global-norm clipping at 1.25; Adam
 *   (TF formulation) at a constant lr 1e-3; one update per training episode; episodes with
 *   ep % eval_freq == 0 (episode 0 included) are greedy, update nothing and leave the baseline
 *   and the training best alone.
 * - Memory: instead of the reference's per-step gradients (tens of MB per step set on ptb),
 *   each step's feature matrix and embedding seed are kept (steps x nodes x features floats)
 *   and the steps' forward passes are recomputed after the episode in batches of `batch` steps,
 *   each batch with one backward pass seeded by the per-step logit gradients.  The recomputed
 *   logits equal the sampled ones up to float rounding (a batch runs the same arithmetic).
 * - Initial placement (§4.2): init = best (the [M/B] configs' init_best_pl: all on device 0
 *   until a training episode finds better), zero, random (one fixed random placement, [A]'s
 *   default) or vary (a new random placement every episode).
 * - Best placement (§4.6): an episode's best is the first argmin of x over its steps + 1
 *   placements; the training best (what init = best restarts from) ignores eval episodes, as in
 *   the reference; the placement returned, and best_so_far in the curve, is the lowest x over
 *   all episodes, eval episodes included (best_from = all, like the reference's file of best
 *   placements), or over training episodes and the starting placement (best_from = training,
 *   like its best-so-far log).
 * - The policy head (parent/child/parallel readout of §2.5 and the classifier) lives here, so it
 *   serves any embedding; the embedding plugin gives node features and node embeddings.
 */
#include "placebench.h"
#include "policy.h"
#include "reinforce.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { INIT_BEST = 0, INIT_ZERO = 1, INIT_RANDOM = 2, INIT_VARY = 3 };

typedef struct placeto_opts {
    long long episodes;
    long long steps;
    int reward;
    int log_runtime;
    double disc;
    double lr;
    double entropy;
    double clip;
    long long bl_rounds;
    long long eval_freq;
    int init;
    double mem_penalty;
    double max_mem_gb;
    int readout;
    int small_nn;
    long long batch;
    int resimulate;
    int best_from;
} placeto_opts;

static const pb_option_def placeto_options[] = {
    {.name = "episodes",
     .type = PB_OPT_INT,
     .default_value = "20",
     .min = 1,
     .max = 1e9,
     .choices = NULL,
     .help = "training episodes (the experiment's episodes budget wins; a sim_calls budget gives "
             "sim_calls / (steps + 1) episodes)",
     .offset = offsetof(placeto_opts, episodes)},
    {.name = "steps",
     .type = PB_OPT_INT,
     .default_value = "0",
     .min = 0,
     .max = 1e9,
     .choices = NULL,
     .help = "steps per episode (max_rnds); 0 = one per node, visiting nodes[t % n]",
     .offset = offsetof(placeto_opts, steps)},
    {.name = "reward",
     .type = PB_OPT_ENUM,
     .default_value = "intended",
     .min = 1,
     .max = 0,
     .choices = "intended|forks",
     .help = "intended: r_t = x_t - x_{t+1} ([A]); forks: x_{t+1} - x_t as the [M/B] code computes",
     .offset = offsetof(placeto_opts, reward)},
    {.name = "log_runtime",
     .type = PB_OPT_BOOL,
     .default_value = "true",
     .min = 1,
     .max = 0,
     .choices = NULL,
     .help = "rewards on ln(run time in seconds) ([M/B] configs: on)",
     .offset = offsetof(placeto_opts, log_runtime)},
    {.name = "disc",
     .type = PB_OPT_DOUBLE,
     .default_value = "1",
     .min = 0,
     .max = 1,
     .choices = NULL,
     .help = "discount factor of the returns",
     .offset = offsetof(placeto_opts, disc)},
    {.name = "lr",
     .type = PB_OPT_DOUBLE,
     .default_value = "0.001",
     .min = 0,
     .max = 10,
     .choices = NULL,
     .help = "Adam learning rate (constant, reference 1e-3)",
     .offset = offsetof(placeto_opts, lr)},
    {.name = "entropy",
     .type = PB_OPT_DOUBLE,
     .default_value = "1",
     .min = 0,
     .max = 1e6,
     .choices = NULL,
     .help = "entropy weight (reference ent_dec 1.0)",
     .offset = offsetof(placeto_opts, entropy)},
    {.name = "clip",
     .type = PB_OPT_DOUBLE,
     .default_value = "1.25",
     .min = 0,
     .max = 1e12,
     .choices = NULL,
     .help = "global gradient-norm bound (reference 1.25); 0 = no clipping",
     .offset = offsetof(placeto_opts, clip)},
    {.name = "bl_rounds",
     .type = PB_OPT_INT,
     .default_value = "1000",
     .min = 1,
     .max = 1e6,
     .choices = NULL,
     .help =
         "training episodes the turn-based baseline averages over (bl_n_rnds; [A] suggested 10)",
     .offset = offsetof(placeto_opts, bl_rounds)},
    {.name = "eval_freq",
     .type = PB_OPT_INT,
     .default_value = "5",
     .min = 1,
     .max = 1e9,
     .choices = NULL,
     .help = "episodes with ep % eval_freq == 0 are greedy and do not learn ([M/B] configs: 5)",
     .offset = offsetof(placeto_opts, eval_freq)},
    {.name = "init",
     .type = PB_OPT_ENUM,
     .default_value = "best",
     .min = 1,
     .max = 0,
     .choices = "best|zero|random|vary",
     .help =
         "initial placement: best = best so far, starting all on device 0 ([M/B] init_best_pl); "
         "zero = all on device 0; random = one random placement; vary = a new one per episode",
     .offset = offsetof(placeto_opts, init)},
    {.name = "mem_penalty",
     .type = PB_OPT_DOUBLE,
     .default_value = "0",
     .min = 0,
     .max = 1e12,
     .choices = NULL,
     .help = "reward penalty per GB of peak memory above max_mem_gb ([A] suggested 2); 0 = off",
     .offset = offsetof(placeto_opts, mem_penalty)},
    {.name = "max_mem_gb",
     .type = PB_OPT_DOUBLE,
     .default_value = "11",
     .min = 0,
     .max = 1e12,
     .choices = NULL,
     .help = "device memory (GB) above which the memory penalty applies",
     .offset = offsetof(placeto_opts, max_mem_gb)},
    {.name = "readout",
     .type = PB_OPT_ENUM,
     .default_value = "tri",
     .min = 1,
     .max = 0,
     .choices = "tri|graph",
     .help =
         "policy input: tri = ancestors / descendants / peers aggregation plus the node (tri_agg, "
         "Placeto); graph = one sum over all nodes (the reference's agg_msgs path)",
     .offset = offsetof(placeto_opts, readout)},
    {.name = "small_nn",
     .type = PB_OPT_BOOL,
     .default_value = "false",
     .min = 1,
     .max = 0,
     .choices = NULL,
     .help = "no hidden layers in the readout aggregators, one in the classifier (--small-nn)",
     .offset = offsetof(placeto_opts, small_nn)},
    {.name = "batch",
     .type = PB_OPT_INT,
     .default_value = "4",
     .min = 1,
     .max = 4096,
     .choices = NULL,
     .help =
         "steps whose forward passes are recomputed together for the gradient (speed and memory; "
         "the gradient's float rounding depends on it)",
     .offset = offsetof(placeto_opts, batch)},
    {.name = "resimulate",
     .type = PB_OPT_ENUM,
     .default_value = "changed",
     .min = 1,
     .max = 0,
     .choices = "changed|always",
     .help = "changed: a step that leaves its node on the device it was on reuses the previous "
             "simulation (the simulator is deterministic, so nothing else changes; fewer simulator "
             "calls); always: steps + 1 calls per episode, as the reference",
     .offset = offsetof(placeto_opts, resimulate)},
    {.name = "best_from",
     .type = PB_OPT_ENUM,
     .default_value = "all",
     .min = 1,
     .max = 0,
     .choices = "all|training",
     .help =
         "placement returned: the best of all episodes (the reference's best-placement file also "
         "keeps eval episodes'), or of training episodes only (its best-so-far log)",
     .offset = offsetof(placeto_opts, best_from)},
};

typedef struct placeto {
    int episodes, steps, readout, small_nn, eval_freq, init, bl_rounds, batch, always_simulate;
    int best_training_only;
    double lr, entropy, clip;
    reinforce_cfg rc;
    uint64_t seed;
    pb_rng rng; /* actions, random placements, embedding seeds */
    const pb_host *host;
    pb_nn_params *params; /* of the last place(), kept for save */
    char *load_path;      /* parameters to start the next place() from */
} placeto;

static int placeto_create(const pb_create_args *a, void **instance, pb_error *err)
{
    placeto *pl = calloc(1, sizeof *pl);
    if (!pl)
        return pb_errorf(err, "out of memory");
    const placeto_opts *o = a->options;
    pl->episodes = (int)o->episodes;
    pl->steps = (int)o->steps;
    pl->rc.sign = o->reward ? REINFORCE_SIGN_FORKS : REINFORCE_SIGN_INTENDED;
    pl->rc.log_runtime = (int)o->log_runtime;
    pl->rc.disc = o->disc;
    pl->rc.mem_penalty = o->mem_penalty;
    pl->rc.max_mem_gb = o->max_mem_gb;
    pl->rc.max_penalized = 10;
    pl->lr = o->lr;
    pl->entropy = o->entropy;
    pl->clip = o->clip;
    pl->bl_rounds = (int)o->bl_rounds;
    pl->eval_freq = (int)o->eval_freq;
    pl->init = (int)o->init;
    pl->readout = o->readout ? POLICY_READOUT_GRAPH : POLICY_READOUT_TRI;
    pl->small_nn = (int)o->small_nn;
    pl->batch = (int)o->batch;
    pl->always_simulate = (int)o->resimulate;
    pl->best_training_only = (int)o->best_from;
    pl->seed = a->seed;
    pb_rng_seed(&pl->rng, pb_seed_derive(a->seed, "actions"));
    pl->host = a->host;
    *instance = pl;
    return PB_OK;
}

static void placeto_destroy(void *instance)
{
    placeto *pl = instance;
    pb_nn_params_free(pl->params);
    free(pl->load_path);
    free(pl);
}

/* ------------------------------------------------------------------ one run */

typedef struct placeto_run {
    placeto *pl;
    const pb_problem *p;
    const pb_host *host;
    int n, nd, steps, fdim, edim, batch;
    /* embedding */
    const pb_embedding_ops *eops;
    void *einst, *prep;
    int has_features, has_batch;
    /* network */
    pb_nn_params *params;
    pb_nn_tape *tape;
    pb_nn_adam *adam;
    policy pol;
    policy_graph pg;
    /* placements */
    int *visit, *device, *done, *init_pl, *train_best, *ep_best, *run_best, *init_first;
    /* the episode's steps */
    int *actions, *cur;
    uint64_t *eseed;
    float *feats;   /* [steps * n * fdim] */
    float *seedmat; /* [batch * nd] */
    double *rt, *x, *ret, *base;
    /* simulation */
    pb_eval ev;
    double *peak, *starts;
    reinforce_baseline bl;
    long long calls;
    double t0; /* pb_clock_monotonic() at the start, for budget->wall_s */
    /* Phase accounting for pb_progress: CPU seconds and tape FLOPs of the action-choosing
     * forward passes and of the updates. */
    double fwd_s, fwd_flop, upd_s, upd_flop;
    double train_best_x, run_best_x, run_best_us, ep_best_x, ep_best_us;
} placeto_run;

/* Non-zero when the embedding's ops table has the optional member at `off` set. */
static int placeto_emb_has(const pb_embedding_ops *o, size_t off)
{
    if (o->struct_size < off + sizeof(void (*)(void)))
        return 0;
    void (*fn)(void);
    memcpy(&fn, (const char *)o + off, sizeof fn);
    return fn != NULL;
}

static void placeto_run_free(placeto_run *r)
{
    if (r->prep)
        r->eops->release(r->einst, r->prep);
    policy_graph_free(&r->pg);
    pb_nn_tape_free(r->tape);
    pb_nn_adam_free(r->adam);
    reinforce_baseline_free(&r->bl);
    void *bufs[] = {r->init_first, r->visit,   r->device,   r->done,    r->init_pl,
                    r->train_best, r->ep_best, r->run_best, r->actions, r->cur,
                    r->eseed,      r->feats,   r->seedmat,  r->rt,      r->x,
                    r->ret,        r->base,    r->peak,     r->starts};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
}

/* Whether a step reads the simulation's peak memory: for the memory penalty, or when the
 * embedding's node features do.  When nothing does, the simulator may skip its memory sweep. */
static int placeto_reads_memory(const placeto_run *r)
{
    if (r->pl->rc.mem_penalty > 0)
        return 1;
    if (!r->has_features)
        return 0; /* pb_placeto_features with the start time */
    if (!placeto_emb_has(r->eops, offsetof(pb_embedding_ops, eval_reads)))
        return 1;
    return (r->eops->eval_reads(r->einst) & PB_EVAL_READS_PEAK_MEM) != 0;
}

static int placeto_alloc(placeto_run *r, pb_error *err)
{
    size_t n = (size_t)r->n, s = (size_t)r->steps;
    int **ints[] = {&r->visit,      &r->device,  &r->done,     &r->init_pl,
                    &r->train_best, &r->ep_best, &r->run_best, &r->init_first};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!(*ints[i] = calloc(n, sizeof(int))))
            return pb_errorf(err, "out of memory");
    r->actions = calloc(s, sizeof(int));
    r->cur = calloc(s, sizeof(int));
    r->eseed = calloc(s, sizeof(uint64_t));
    r->feats = malloc(s * n * (size_t)r->fdim * sizeof(float));
    r->seedmat = malloc((size_t)r->batch * (size_t)r->nd * sizeof(float));
    r->rt = calloc(s + 1, sizeof(double));
    r->x = calloc(s + 1, sizeof(double));
    r->ret = calloc(s, sizeof(double));
    r->base = calloc(s, sizeof(double));
    r->peak = calloc((size_t)r->nd, sizeof(double));
    r->starts = calloc((size_t)r->p->op_graph->n_nodes + 1, sizeof(double));
    if (!r->actions || !r->cur || !r->eseed || !r->feats || !r->seedmat || !r->rt || !r->x ||
        !r->ret || !r->base || !r->peak || !r->starts)
        return pb_errorf(err, "out of memory (%d steps of %d nodes x %d features)", r->steps, r->n,
                         r->fdim);
    r->ev = (pb_eval){.struct_size = sizeof(pb_eval),
                      .peak_mem_bytes = r->peak,
                      .node_start_us = r->starts,
                      .skip_memory = !placeto_reads_memory(r)};
    return PB_OK;
}

/* Parameters of embedding and policy, the per-graph data and the optimizer. */
static int placeto_network(placeto_run *r, pb_error *err)
{
    placeto *pl = r->pl;
    const pb_embedding_ref *e = r->p->embedding;
    r->eops = e->ops;
    r->einst = e->instance;
    r->has_features = placeto_emb_has(e->ops, offsetof(pb_embedding_ops, features));
    r->has_batch = placeto_emb_has(e->ops, offsetof(pb_embedding_ops, forward_batch)) &&
                   placeto_emb_has(e->ops, offsetof(pb_embedding_ops, prepare)) &&
                   placeto_emb_has(e->ops, offsetof(pb_embedding_ops, release));
    r->fdim = placeto_emb_has(e->ops, offsetof(pb_embedding_ops, feature_dim))
                  ? e->ops->feature_dim(e->instance, r->nd)
                  : pb_placeto_features_dim(r->nd);
    if (r->fdim < 1)
        return pb_errorf(err, "embedding '%s' reports %d features", e->name, r->fdim);
    pb_nn_params_free(pl->params);
    pl->params = r->params = pb_nn_params_new();
    r->tape = pb_nn_tape_new();
    r->adam = pb_nn_adam_new(0.9, 0.999, 1e-8);
    if (!r->params || !r->tape || !r->adam)
        return pb_errorf(err, "out of memory");
    if (e->ops->init_params(e->instance, r->params, r->fdim, &r->edim, err))
        return PB_ERR;
    pb_rng init_rng;
    pb_rng_seed(&init_rng, pb_seed_derive(pl->seed, "policy"));
    if (policy_init(&r->pol, r->params, pl->readout, r->edim, r->nd, pl->small_nn, &init_rng, err))
        return PB_ERR;
    if (pl->load_path && pb_nn_params_load(r->params, pl->load_path, err))
        return PB_ERR;
    if (r->has_batch && e->ops->prepare(e->instance, r->p->graph, &r->prep, err))
        return PB_ERR;
    return PB_OK;
}

static int placeto_run_init(placeto_run *r, placeto *pl, const pb_problem *p, pb_error *err)
{
    memset(r, 0, sizeof *r);
    r->pl = pl;
    r->p = p;
    r->host = p->host ? p->host : pl->host;
    r->n = p->graph->n_nodes;
    r->nd = p->cluster->n_devices;
    r->steps = pl->steps > 0 ? pl->steps : r->n;
    r->batch = pl->batch;
    r->t0 = pb_clock_monotonic();
    if (!p->embedding || !p->embedding->ops)
        return pb_errorf(err, "placer 'placeto' needs an embedding (e.g. embedding = "
                              "\"placeto-gnn\")");
    if (r->n < 1 || r->nd < 1)
        return pb_errorf(err, "placeto: %d nodes on %d devices", r->n, r->nd);
    if (placeto_network(r, err) || placeto_alloc(r, err))
        return PB_ERR;
    int *topo = malloc((size_t)r->n * sizeof(int));
    if (!topo)
        return pb_errorf(err, "out of memory");
    int rc = pb_traverse_topo(p->graph, topo, err);
    if (rc == PB_OK)
        rc = policy_graph_build(p->graph, topo, &r->pg, err);
    memcpy(r->visit, p->order ? p->order : topo, (size_t)r->n * sizeof(int));
    free(topo);
    return rc;
}

static int placeto_simulate(placeto_run *r, double *x, pb_error *err)
{
    pb_strategy s;
    pb_strategy_placement(&s, r->n, r->device);
    r->ev.feasible = 1;
    if (r->host->simulate(r->host->ctx, &s, &r->ev, err))
        return PB_ERR;
    r->calls++;
    double mx = 0;
    for (int d = 0; d < r->nd; d++)
        if (r->peak[d] > mx)
            mx = r->peak[d];
    *x = reinforce_reward_runtime(&r->pl->rc, r->ev.step_time_us, mx);
    return PB_OK;
}

/* Node embeddings of `batch` stacked feature blocks. */
static int placeto_embed(placeto_run *r, pb_nn_tensor *xin, int batch, const uint64_t *seeds,
                         pb_nn_tensor **h, pb_error *err)
{
    if (r->has_batch)
        return r->eops->forward_batch(r->einst, r->prep, r->tape, xin, batch, seeds, h, err);
    pb_nn_tensor *blocks[64];
    pb_nn_tensor *acc = NULL;
    for (int b0 = 0; b0 < batch; b0 += 64) {
        int m = batch - b0 < 64 ? batch - b0 : 64;
        for (int b = 0; b < m; b++) {
            pb_nn_tensor *xb = pb_nn_rows(r->tape, xin, (b0 + b) * r->n, r->n);
            if (r->eops->forward(r->einst, r->tape, r->p->graph, xb, &blocks[b], err))
                return PB_ERR;
        }
        pb_nn_tensor *part = m == 1 ? blocks[0] : pb_nn_concat_rows(r->tape, m, blocks);
        pb_nn_tensor *two[2] = {acc, part};
        acc = acc ? pb_nn_concat_rows(r->tape, 2, two) : part;
    }
    *h = acc;
    return pb_nn_tape_status(r->tape, err);
}

/* Runs a lock-step group holds at most (placeto_place_multi). */
#define PLACETO_MAX_RUNS 16

/* Node embeddings of k runs' stacked feature blocks: with the embedding's forward_multi in one
 * call that interleaves the runs' chains (each run's embeddings bit for bit its own), else run
 * by run. */
static int placeto_embed_multi(placeto_run *const *rs, int k, pb_nn_tensor *const *xin, int batch,
                               const uint64_t *const *seeds, pb_nn_tensor **h, pb_error *err)
{
    const placeto_run *r0 = rs[0];
    if (k > 1 && r0->has_batch &&
        placeto_emb_has(r0->eops, offsetof(pb_embedding_ops, forward_multi))) {
        void *inst[PLACETO_MAX_RUNS], *prep[PLACETO_MAX_RUNS];
        pb_nn_tape *tapes[PLACETO_MAX_RUNS];
        for (int r = 0; r < k; r++) {
            inst[r] = rs[r]->einst;
            prep[r] = rs[r]->prep;
            tapes[r] = rs[r]->tape;
        }
        return r0->eops->forward_multi(k, inst, prep, tapes, xin, batch, seeds, h, err);
    }
    for (int r = 0; r < k; r++)
        if (placeto_embed(rs[r], xin[r], batch, seeds[r], &h[r], err))
            return PB_ERR;
    return PB_OK;
}

/* Logits (batch x nd) of steps whose features start at feats[r], for each of k runs, each on
 * its own tape, reset here. */
static int placeto_logits(placeto_run *const *rs, int k, int record, const float *const *feats,
                          int batch, const uint64_t *const *seeds, const int *const *cur,
                          pb_nn_tensor **logits, pb_error *err)
{
    pb_nn_tensor *xin[PLACETO_MAX_RUNS], *h[PLACETO_MAX_RUNS];
    for (int r = 0; r < k; r++) {
        placeto_run *run = rs[r];
        pb_nn_tape_reset(run->tape, record);
        xin[r] = pb_nn_constant(run->tape, batch * run->n, run->fdim, feats[r]);
        if (pb_nn_tape_status(run->tape, err))
            return PB_ERR;
    }
    if (placeto_embed_multi(rs, k, xin, batch, seeds, h, err))
        return PB_ERR;
    for (int r = 0; r < k; r++) {
        placeto_run *run = rs[r];
        if (!h[r] || h[r]->cols != run->edim || h[r]->rows != batch * run->n)
            return pb_errorf(err, "embedding '%s' returned %dx%d node embeddings, expected %dx%d",
                             run->p->embedding->name, h[r] ? h[r]->rows : 0, h[r] ? h[r]->cols : 0,
                             batch * run->n, run->edim);
        logits[r] = policy_logits(run->tape, run->params, &run->pol, &run->pg, h[r], batch, cur[r]);
        if (pb_nn_tape_status(run->tape, err))
            return PB_ERR;
    }
    return PB_OK;
}

static int placeto_features(placeto_run *r, int cur, float *out, pb_error *err)
{
    pb_place_state st = {sizeof st, r->p->graph, r->nd,  r->device,
                         r->done,   cur,         &r->ev, r->p->op_graph};
    if (r->has_features)
        return r->eops->features(r->einst, &st, out, err);
    return pb_placeto_features(&st, PB_FEATURE5_START_TIME, out, err);
}

static void placeto_initial_placement(placeto_run *r, int ep)
{
    placeto *pl = r->pl;
    size_t bytes = (size_t)r->n * sizeof(int);
    if (pl->init == INIT_BEST) {
        memcpy(r->device, r->train_best, bytes);
    } else if (pl->init == INIT_ZERO) {
        memset(r->device, 0, bytes);
    } else if (pl->init == INIT_RANDOM && ep > 0) {
        memcpy(r->device, r->init_pl, bytes);
    } else {
        for (int v = 0; v < r->n; v++)
            r->device[v] = (int)pb_rng_below(&pl->rng, (uint64_t)r->nd);
        memcpy(r->init_pl, r->device, bytes);
    }
}

/* Records placement `device` as the episode's best when x is lower. */
static void placeto_track(placeto_run *r, double x, int first)
{
    if (first || x < r->ep_best_x) {
        r->ep_best_x = x;
        r->ep_best_us = r->ev.step_time_us;
        memcpy(r->ep_best, r->device, (size_t)r->n * sizeof(int));
    }
}

static int placeto_episode_begin(placeto_run *r, int ep, pb_error *err)
{
    placeto_initial_placement(r, ep);
    if (ep == 0)
        memcpy(r->init_first, r->device, (size_t)r->n * sizeof(int));
    memset(r->done, 0, (size_t)r->n * sizeof(int));
    if (placeto_simulate(r, &r->x[0], err))
        return PB_ERR;
    r->rt[0] = r->ev.step_time_us;
    placeto_track(r, r->x[0], 1);
    return PB_OK;
}

/* Step t up to the forward pass: the node, its embedding seed and the features (*feat). */
static int placeto_step_features(placeto_run *r, int t, int greedy, int *v, float **feat,
                                 pb_error *err)
{
    *v = r->visit[t % r->n];
    /* Greedy episodes never recompute, so they reuse the first step's feature slot. */
    *feat = r->feats + (greedy ? 0 : (size_t)t * r->n * r->fdim);
    r->eseed[t] = pb_rng_next(&r->pl->rng);
    return placeto_features(r, *v, *feat, err);
}

/* Step t after the forward pass: the action, the new placement and its simulation. */
static int placeto_step_act(placeto_run *r, int t, int greedy, int v, const pb_nn_tensor *logits,
                            pb_error *err)
{
    int a = greedy ? reinforce_argmax(logits->data, r->nd)
                   : reinforce_sample(logits->data, r->nd, &r->pl->rng);
    r->actions[t] = a;
    r->cur[t] = v;
    int same = r->device[v] == a && !r->pl->always_simulate;
    r->device[v] = a;
    if (same)
        r->x[t + 1] = r->x[t];
    else if (placeto_simulate(r, &r->x[t + 1], err))
        return PB_ERR;
    r->rt[t + 1] = r->ev.step_time_us;
    placeto_track(r, r->x[t + 1], 0);
    r->done[v]++;
    return PB_OK;
}

/* One episode of each of k runs in lock-step: every step's forward passes go together (the
 * CPU time of a shared pass is charged in equal parts). */
static int placeto_episode(placeto_run *const *rs, int k, int ep, int greedy, pb_error *err)
{
    for (int r = 0; r < k; r++)
        if (placeto_episode_begin(rs[r], ep, err))
            return PB_ERR;
    for (int t = 0; t < rs[0]->steps; t++) {
        int v[PLACETO_MAX_RUNS];
        float *feat[PLACETO_MAX_RUNS];
        const float *cfeat[PLACETO_MAX_RUNS];
        const uint64_t *seeds[PLACETO_MAX_RUNS];
        const int *cur[PLACETO_MAX_RUNS];
        pb_nn_tensor *logits[PLACETO_MAX_RUNS] = {0};
        double f0[PLACETO_MAX_RUNS];
        for (int r = 0; r < k; r++) {
            if (placeto_step_features(rs[r], t, greedy, &v[r], &feat[r], err))
                return PB_ERR;
            cfeat[r] = feat[r];
            seeds[r] = &rs[r]->eseed[t];
            cur[r] = &v[r];
            f0[r] = pb_nn_tape_flop(rs[r]->tape);
        }
        double c0 = pb_clock_cpu();
        if (placeto_logits(rs, k, 0, cfeat, 1, seeds, cur, logits, err))
            return PB_ERR;
        double share = (pb_clock_cpu() - c0) / k;
        for (int r = 0; r < k; r++) {
            rs[r]->fwd_s += share;
            rs[r]->fwd_flop += pb_nn_tape_flop(rs[r]->tape) - f0[r];
            if (placeto_step_act(rs[r], t, greedy, v[r], logits[r], err))
                return PB_ERR;
        }
    }
    return PB_OK;
}

/* One REINFORCE step of each of k runs from the episode just run, their recomputed forward
 * passes together; accounted as the update phase. */
static int placeto_update(placeto_run *const *rs, int k, pb_error *err)
{
    double c0 = pb_clock_cpu(), f0[PLACETO_MAX_RUNS];
    int R = rs[0]->steps, batch = rs[0]->batch;
    for (int r = 0; r < k; r++) {
        placeto_run *run = rs[r];
        f0[r] = pb_nn_tape_flop(run->tape);
        reinforce_returns(&run->pl->rc, run->x, R, run->ret);
        reinforce_baseline_push(&run->bl, run->ret);
        reinforce_baseline_mean(&run->bl, run->base);
        pb_nn_params_zero_grad(run->params);
    }
    for (int t0 = 0; t0 < R; t0 += batch) {
        int b = R - t0 < batch ? R - t0 : batch;
        const float *feats[PLACETO_MAX_RUNS];
        const uint64_t *seeds[PLACETO_MAX_RUNS];
        const int *cur[PLACETO_MAX_RUNS];
        pb_nn_tensor *logits[PLACETO_MAX_RUNS] = {0};
        for (int r = 0; r < k; r++) {
            feats[r] = rs[r]->feats + (size_t)t0 * rs[r]->n * rs[r]->fdim;
            seeds[r] = rs[r]->eseed + t0;
            cur[r] = rs[r]->cur + t0;
        }
        if (placeto_logits(rs, k, 1, feats, b, seeds, cur, logits, err))
            return PB_ERR;
        for (int r = 0; r < k; r++) {
            placeto_run *run = rs[r];
            int nd = run->nd;
            for (int i = 0; i < b; i++)
                reinforce_logit_grad(logits[r]->data + (size_t)i * nd, nd, run->actions[t0 + i],
                                     run->ret[t0 + i] - run->base[t0 + i], run->pl->entropy,
                                     run->seedmat + (size_t)i * nd);
            if (pb_nn_backward(run->tape, logits[r], run->seedmat, err))
                return PB_ERR;
        }
    }
    double share = (pb_clock_cpu() - c0) / k;
    for (int r = 0; r < k; r++) {
        placeto_run *run = rs[r];
        if (run->pl->clip > 0)
            pb_nn_clip_grad_norm(run->params, run->pl->clip);
        if (pb_nn_adam_step(run->adam, run->params, run->pl->lr, err))
            return PB_ERR;
        run->upd_s += share;
        run->upd_flop += pb_nn_tape_flop(run->tape) - f0[r];
    }
    return PB_OK;
}

/* Bookkeeping after an episode: training best, run best, the curve point. */
static void placeto_after_episode(placeto_run *r, int ep, int greedy)
{
    size_t bytes = (size_t)r->n * sizeof(int);
    if (!greedy && r->ep_best_x < r->train_best_x) {
        r->train_best_x = r->ep_best_x;
        memcpy(r->train_best, r->ep_best, bytes);
    }
    if (ep == 0) { /* the run's best starts as the placement it started from */
        r->run_best_x = r->x[0];
        r->run_best_us = r->rt[0];
        memcpy(r->run_best, r->init_first, bytes);
    }
    if ((!greedy || !r->pl->best_training_only) && r->ep_best_x < r->run_best_x) {
        r->run_best_x = r->ep_best_x;
        r->run_best_us = r->ep_best_us;
        memcpy(r->run_best, r->ep_best, bytes);
    }
    pb_progress pr = {.struct_size = sizeof pr,
                      .episode = ep,
                      .episode_best_us = r->ep_best_us,
                      .best_so_far_us = r->run_best_us,
                      .sim_calls = r->calls,
                      .forward_cpu_s = r->fwd_s,
                      .forward_flop = r->fwd_flop,
                      .update_cpu_s = r->upd_s,
                      .update_flop = r->upd_flop};
    r->host->progress(r->host->ctx, &pr);
}

static int placeto_episode_count(const placeto_run *r)
{
    const pb_budget *b = r->p->budget;
    if (b->episodes > 0)
        return b->episodes;
    if (b->sim_calls > 0) {
        long long e = b->sim_calls / (r->steps + 1);
        return e > 0 ? (int)(e < 1000000000 ? e : 1000000000) : 1;
    }
    return r->pl->episodes;
}

static int placeto_stop(const placeto_run *r)
{
    if (r->host->deadline_passed && r->host->deadline_passed(r->host->ctx))
        return 1;
    return r->p->budget->wall_s > 0 && pb_clock_monotonic() - r->t0 >= r->p->budget->wall_s;
}

/* The episodes of k runs in lock-step (k = 1: one run as place() does it).  A run whose
 * deadline or wall budget has passed stops; the others go on. */
static int placeto_loop(placeto_run *const *rs, int k, double *initial_us, pb_error *err)
{
    int episodes = placeto_episode_count(rs[0]), eval_freq = rs[0]->pl->eval_freq;
    int training = episodes - (episodes + eval_freq - 1) / eval_freq;
    int stopped[PLACETO_MAX_RUNS] = {0};
    for (int r = 0; r < k; r++) {
        placeto_run *run = rs[r];
        if (reinforce_baseline_init(&run->bl, run->steps, run->pl->bl_rounds,
                                    training > 0 ? training : 1, err))
            return PB_ERR;
        memset(run->train_best, 0, (size_t)run->n * sizeof(int)); /* init_best_pl starts at 0 */
        run->train_best_x = INFINITY;
    }
    for (int ep = 0; ep < episodes; ep++) {
        placeto_run *act[PLACETO_MAX_RUNS];
        int m = 0;
        for (int r = 0; r < k; r++) {
            stopped[r] = stopped[r] || (ep > 0 && placeto_stop(rs[r]));
            if (!stopped[r])
                act[m++] = rs[r];
        }
        if (m == 0)
            break;
        int greedy = ep % eval_freq == 0;
        if (placeto_episode(act, m, ep, greedy, err))
            return PB_ERR;
        if (ep == 0)
            for (int r = 0; r < k; r++)
                initial_us[r] = rs[r]->rt[0];
        /* The updates run by run: together (3 runs' tapes of `batch` steps) they were slower
         * on ptb at 8 devices, the larger working set costing more than the overlap gained. */
        for (int i = 0; !greedy && i < m; i++)
            if (placeto_update(&act[i], 1, err))
                return PB_ERR;
        for (int i = 0; i < m; i++)
            placeto_after_episode(act[i], ep, greedy);
    }
    return PB_OK;
}

/* Why runs cannot go in lock-step (NULL when they can): every run must take the same steps,
 * episodes and update batches. */
static const char *placeto_lockstep_mismatch(placeto_run *const *rs, int k)
{
    const placeto_run *a = rs[0];
    for (int r = 1; r < k; r++) {
        const placeto_run *b = rs[r];
        if (b->n != a->n || b->nd != a->nd || b->steps != a->steps || b->fdim != a->fdim)
            return "the runs place different graphs or clusters";
        if (placeto_episode_count(b) != placeto_episode_count(a) ||
            b->pl->eval_freq != a->pl->eval_freq || b->batch != a->batch)
            return "the runs' episodes, eval_freq or batch differ";
        if (b->eops != a->eops || b->has_batch != a->has_batch)
            return "the runs use different embeddings";
    }
    return NULL;
}

static int placeto_place_multi(void *const *instances, const pb_problem *const *problems, int k,
                               pb_strategy *const *best, double *initial_us, pb_error *err)
{
    if (k < 1 || k > PLACETO_MAX_RUNS)
        return pb_errorf(err, "placeto: %d runs at once (1 to %d)", k, PLACETO_MAX_RUNS);
    placeto_run *runs = calloc((size_t)k, sizeof *runs);
    placeto_run *rs[PLACETO_MAX_RUNS] = {0};
    if (!runs)
        return pb_errorf(err, "out of memory");
    int rc = PB_OK, ready = 0;
    for (int r = 0; r < k && rc == PB_OK; r++, ready++) {
        initial_us[r] = -1;
        rs[r] = &runs[r];
        rc = placeto_run_init(&runs[r], instances[r], problems[r], err);
    }
    const char *why = rc == PB_OK ? placeto_lockstep_mismatch(rs, k) : NULL;
    if (why)
        rc = pb_errorf(err, "placeto: %d runs cannot go in lock-step: %s", k, why);
    if (rc == PB_OK)
        rc = placeto_loop(rs, k, initial_us, err);
    for (int r = 0; rc == PB_OK && r < k; r++)
        memcpy(best[r]->device, runs[r].run_best, (size_t)runs[r].n * sizeof(int));
    for (int r = 0; r < ready; r++)
        placeto_run_free(&runs[r]);
    free(runs);
    return rc;
}

static int placeto_place(void *instance, const pb_problem *p, pb_strategy *best, double *initial_us,
                         pb_error *err)
{
    void *inst[1] = {instance};
    const pb_problem *probs[1] = {p};
    pb_strategy *bests[1] = {best};
    return placeto_place_multi(inst, probs, 1, bests, initial_us, err);
}

static int placeto_save(void *instance, const char *path, pb_error *err)
{
    placeto *pl = instance;
    if (!pl->params)
        return pb_errorf(err, "placeto: nothing to save before a placement has run");
    return pb_nn_params_save(pl->params, path, err);
}

static int placeto_load(void *instance, const char *path, pb_error *err)
{
    placeto *pl = instance;
    char *copy = strdup(path);
    if (!copy)
        return pb_errorf(err, "out of memory");
    free(pl->load_path);
    pl->load_path = copy;
    return PB_OK;
}

static const pb_placer_ops placeto_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = placeto_create,
    .destroy = placeto_destroy,
    .place = placeto_place,
    .train = NULL,
    .save = placeto_save,
    .load = placeto_load,
    .uses = PB_USES_EMBEDDING | PB_USES_TRAVERSAL,
    .produces = 0,
    .simulators = NULL,
    .place_multi = placeto_place_multi,
};

PB_PLUGIN_WITH_OPTIONS(
    PB_KIND_PLACER, "placeto", "1.0",
    "Placeto: progressive REINFORCE placement with a graph embedding (Addanki et al.)",
    placeto_options, placeto_opts, &placeto_ops);
