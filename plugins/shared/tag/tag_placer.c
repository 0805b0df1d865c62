/* tag_placer.c — TAG's MCTS placers (specs/tag.md §7, §10), built twice: pure-mcts (uniform
 * priors) and tag (TAG_GNN: priors from the heterogeneous GAT, read from a parameter file). */
#include "placebench.h"

#include "tag_mcts.h"
#if defined(TAG_GNN)
#include "tag_gnn.h"
#endif

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(TAG_GNN)
#define TAG_PLACER_NAME "tag"
#define TAG_PLACER_DESCRIPTION                                                                     \
    "TAG (Zhang et al.): MCTS over METIS op groups (decreasing compute time), each group given "   \
    "a set of device groups and PS / AllReduce / model parallelism, PUCT with priors from TAG's "  \
    "heterogeneous GAT (option params); reward the squashed speed-up over DP-NCCL "                \
    "(specs/tag.md 6-7); REPLICATED strategies, simulator topology"
#else
#define TAG_PLACER_NAME "pure-mcts"
#define TAG_PLACER_DESCRIPTION                                                                     \
    "TAG's pure-MCTS ablation: TAG's search (METIS op groups, PS / AllReduce / model "             \
    "parallelism on sets of device groups, PUCT, reward the squashed speed-up over DP-NCCL; "      \
    "specs/tag.md 6-7) with uniform priors; REPLICATED strategies, simulator topology"
#endif

/* The search's options, and for tag the GNN's and its training's. */
typedef struct tag_placer_opts {
    tag_mcts_opts mcts;
#if defined(TAG_GNN)
    const char *train_out;
    int selfplay_priors; /* 0: the GNN's, 1: uniform (TAG's initial data) */
    long long selfplay_limit, steps_per_sample;
    double lr, clipnorm;
    long long hidden, edge_hidden, heads, layers;
    int gamma, float_utilisation, tensor_edge_features;
    int adam_state; /* 0: continue the optimizer saved with params, 1: restart it per run */
#endif
} tag_placer_opts;

#define TAG_OPT(field) offsetof(tag_placer_opts, mcts.field)
#define TAG_GNN_OPT(field) offsetof(tag_placer_opts, field)

static const pb_option_def tag_options[] = {
    {.name = "playouts",
     .type = PB_OPT_INT,
     .default_value = "800",
     .min = 1,
     .max = 1e8,
     .help = "MCTS playouts, each at most one simulator call (TAG: best of the first 50/800/2000; "
             "800 visits per decision in self-play)",
     .offset = TAG_OPT(playouts)},
    {.name = "groups",
     .type = PB_OPT_INT,
     .default_value = "40",
     .min = 1,
     .max = 100000,
     .help = "op groups METIS makes, at most (TAG's code 40, its paper 60)",
     .offset = TAG_OPT(max_groups)},
    {.name = "balance",
     .type = PB_OPT_DOUBLE,
     .default_value = "5",
     .min = 1.001,
     .max = 1000,
     .help = "METIS imbalance (ubvec) of the grouping (TAG's code 5.0, its paper 2)",
     .offset = TAG_OPT(balance)},
    {.name = "device_groups",
     .type = PB_OPT_ENUM,
     .default_value = "machine",
     .choices = "machine|type",
     .help = "TAG's device groups (tasks): the GPUs of one type on one machine, or all GPUs of "
             "one type (as TAG's code merges its testbed into 3)",
     .offset = TAG_OPT(device_groups)},
    {.name = "c_puct",
     .type = PB_OPT_DOUBLE,
     .default_value = "0",
     .min = 0,
     .max = 1e6,
     .help = "PUCT exploration constant; 0: sqrt(children / 10), as TAG's code",
     .offset = TAG_OPT(c_puct)},
    {.name = "puct_visits",
     .type = PB_OPT_ENUM,
     .default_value = "parent",
     .choices = "parent|children",
     .help = "N in PUCT's sqrt(N): the parent's own visits (TAG's code) or the sum of its "
             "children's (its paper)",
     .offset = TAG_OPT(puct_visits)},
    {.name = "duplicate_action",
     .type = PB_OPT_BOOL,
     .default_value = "false",
     .help = "offer a 4th option per device set, duplicate (every device computes the whole "
             "group; the paper's), besides PS, AllReduce and model parallelism (the code's 3)",
     .offset = TAG_OPT(duplicate_action)},
    {.name = "shuffle",
     .type = PB_OPT_BOOL,
     .default_value = "true",
     .help = "shuffle a node's children after expansion (TAG's code), so ties go to a random "
             "child",
     .offset = TAG_OPT(shuffle)},
    {.name = "stop_when_better",
     .type = PB_OPT_BOOL,
     .default_value = "false",
     .help = "stop the search at the first playout whose strategy beats the baseline (reward > "
             "0), as TAG's Table 7 runs do; the run's curve then ends at that playout",
     .offset = TAG_OPT(stop_when_better)},
#if defined(TAG_GNN)
    {.name = "params",
     .type = PB_OPT_STRING,
     .default_value = "",
     .help = "file of the trained heterogeneous GAT's parameters (TAG's priors), written by "
             "train_out; its network options (hidden, heads, ...) must be the ones it was "
             "trained with",
     .offset = TAG_OPT(params)},
    {.name = "train_out",
     .type = PB_OPT_STRING,
     .default_value = "",
     .help = "train the GNN on this problem first (self-play of specs/tag.md 7.4, then "
             "steps_per_sample single-sample Adam steps per record, 8.4) and write its parameters "
             "here; starts from params when given, else from a fresh network",
     .offset = TAG_GNN_OPT(train_out)},
    {.name = "selfplay_priors",
     .type = PB_OPT_ENUM,
     .default_value = "gnn",
     .choices = "gnn|uniform",
     .help = "priors of the self-play search: the GNN being trained, or uniform (TAG's initial "
             "data, pure-MCTS self-play)",
     .offset = TAG_GNN_OPT(selfplay_priors)},
    {.name = "selfplay_limit",
     .type = PB_OPT_INT,
     .default_value = "800",
     .min = 1,
     .max = 1e8,
     .help = "self-play visits per decision, at most: min((G - i) 2^T 8, limit) (TAG's "
             "worker_run 800; collect_data 8000)",
     .offset = TAG_GNN_OPT(selfplay_limit)},
    {.name = "steps_per_sample",
     .type = PB_OPT_INT,
     .default_value = "4",
     .min = 0,
     .max = 1e6,
     .help = "single-sample training steps per self-play record (TAG: len(data) * 4)",
     .offset = TAG_GNN_OPT(steps_per_sample)},
    {.name = "lr",
     .type = PB_OPT_DOUBLE,
     .default_value = "1e-4",
     .min = 1e-12,
     .max = 1,
     .help = "Adam's learning rate (TAG 1e-4; its loss-curve runs 1e-5)",
     .offset = TAG_GNN_OPT(lr)},
    {.name = "clipnorm",
     .type = PB_OPT_DOUBLE,
     .default_value = "0.6",
     .min = 0,
     .max = 1e6,
     .help = "Keras clipnorm: each gradient tensor clipped to this L2 norm (TAG 0.6); 0 = none",
     .offset = TAG_GNN_OPT(clipnorm)},
    {.name = "hidden",
     .type = PB_OPT_INT,
     .default_value = "256",
     .min = 1,
     .max = 4096,
     .help = "GNN node embedding width (TAG 256)",
     .offset = TAG_GNN_OPT(hidden)},
    {.name = "edge_hidden",
     .type = PB_OPT_INT,
     .default_value = "64",
     .min = 1,
     .max = 4096,
     .help = "GNN edge embedding width (TAG 64)",
     .offset = TAG_GNN_OPT(edge_hidden)},
    {.name = "heads",
     .type = PB_OPT_INT,
     .default_value = "4",
     .min = 1,
     .max = 64,
     .help = "attention heads of each GAT layer (TAG 4)",
     .offset = TAG_GNN_OPT(heads)},
    {.name = "layers",
     .type = PB_OPT_INT,
     .default_value = "4",
     .min = 1,
     .max = 8,
     .help = "GAT layers (TAG 4)",
     .offset = TAG_GNN_OPT(layers)},
    {.name = "gamma",
     .type = PB_OPT_BOOL,
     .default_value = "false",
     .help = "the paper's edge-type weights (1 same-type, 0.1 op-device edges); TAG's code has "
             "none (plain mean over edge types)",
     .offset = TAG_GNN_OPT(gamma)},
    {.name = "float_utilisation",
     .type = PB_OPT_BOOL,
     .default_value = "false",
     .help = "device utilisation feature as busy / step time; TAG's code divides integers (0 "
             "unless the device never idles)",
     .offset = TAG_GNN_OPT(float_utilisation)},
    {.name = "tensor_edge_features",
     .type = PB_OPT_BOOL,
     .default_value = "false",
     .help = "op-op edges carry their tensor elements / (CL2 Bmax); TAG's code leaves them 0 "
             "(an == typo)",
     .offset = TAG_GNN_OPT(tensor_edge_features)},
    {.name = "adam_state",
     .type = PB_OPT_ENUM,
     .default_value = "continue",
     .choices = "continue|restart",
     .help = "training: continue the Adam optimizer whose step count and moments params carries "
             "and write them to train_out, so a chain of runs trains with one optimizer (TAG); "
             "restart: a fresh Adam in each run, the file without them",
     .offset = TAG_GNN_OPT(adam_state)},
#endif
};

typedef struct tag_placer {
    const pb_host *host;
    tag_placer_opts o;
    uint64_t seed;
    tag_mcts *search; /* of the last place(): the returned strategy's arrays live in it */
#if defined(TAG_GNN)
    tag_gnn *gnn;
    tag_gnn_trainer *trainer; /* with train_out */
    int adam_restored;        /* the trainer's Adam continues the one saved with params */
#endif
} tag_placer;

static void tag_placer_destroy(void *instance)
{
    tag_placer *p = instance;
    tag_mcts_free(p->search);
#if defined(TAG_GNN)
    tag_gnn_trainer_free(p->trainer);
    tag_gnn_free(p->gnn);
#endif
    free(p);
}

#if defined(TAG_GNN)
/* The network the options describe, its parameters read from params when given. */
static int tag_placer_gnn(tag_placer *p, pb_error *err)
{
    const tag_placer_opts *o = &p->o;
    if ((!o->mcts.params || !*o->mcts.params) && (!o->train_out || !*o->train_out))
        return pb_errorf(err, "tag needs the trained GNN's parameters: --opt placer.params=FILE "
                              "(--opt placer.train_out=FILE trains one; for TAG's search with "
                              "uniform priors use the pure-mcts placer)");
    tag_gnn_options g;
    tag_gnn_options_default(&g);
    g.hidden = (int)o->hidden;
    g.edge_hidden = (int)o->edge_hidden;
    g.heads = (int)o->heads;
    g.layers = (int)o->layers;
    g.gamma = o->gamma;
    g.float_utilisation = o->float_utilisation;
    g.tensor_edge_features = o->tensor_edge_features;
    g.n_comm = o->mcts.duplicate_action ? TAG_GNN_COMM_MAX : TAG_GNN_COMM_REFERENCE;
    p->gnn = tag_gnn_new(&g, pb_seed_derive(p->seed, "tag-gnn-init"), err);
    if (!p->gnn)
        return PB_ERR;
    if (o->train_out && *o->train_out) {
        tag_gnn_train_options to;
        tag_gnn_train_options_default(&to);
        to.lr = o->lr;
        to.clipnorm = o->clipnorm;
        p->trainer = tag_gnn_trainer_new(p->gnn, &to, err);
        if (!p->trainer)
            return PB_ERR;
    }
    if (o->mcts.params && *o->mcts.params) {
        pb_error load;
        pb_nn_adam *adam = o->adam_state == 0 ? tag_gnn_trainer_adam(p->trainer) : NULL;
        if (pb_nn_params_load_adam(tag_gnn_params(p->gnn), adam, o->mcts.params, &p->adam_restored,
                                   &load) != PB_OK)
            return pb_errorf(err,
                             "tag: the GNN's parameters (placer.params) do not load: %s (the "
                             "network options hidden, edge_hidden, heads, layers and "
                             "duplicate_action must be those it was trained with)",
                             load.msg);
    }
    return PB_OK;
}
#endif

static int tag_placer_create(const pb_create_args *a, void **instance, pb_error *err)
{
    tag_placer *p = calloc(1, sizeof *p);
    if (!p)
        return pb_errorf(err, "out of memory");
    p->host = a->host;
    p->o = *(const tag_placer_opts *)a->options;
    p->seed = a->seed;
#if defined(TAG_GNN)
    if (tag_placer_gnn(p, err) != PB_OK) {
        tag_placer_destroy(p);
        return PB_ERR;
    }
#endif
    *instance = p;
    return PB_OK;
}

#if defined(TAG_GNN)
/* Self-play records (specs/tag.md 7.4) for training. */
typedef struct tag_records {
    tag_gnn *gnn;
    tag_gnn_sample *s;
    int n, cap;
} tag_records;

static int tag_record(void *ctx, const tag_state *st, const double *visits, pb_error *err)
{
    tag_records *r = ctx;
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        tag_gnn_sample *s = realloc(r->s, (size_t)cap * sizeof *s);
        if (!s)
            return pb_errorf(err, "out of memory (%d self-play records)", r->n);
        memset(s + r->cap, 0, (size_t)(cap - r->cap) * sizeof *s);
        r->s = s;
        r->cap = cap;
    }
    tag_gnn_features *f = tag_gnn_hook_features(r->gnn);
    if (tag_gnn_features_build(f, st, st->next_group, tag_gnn_get_options(r->gnn), err) != PB_OK)
        return PB_ERR;
    if (tag_gnn_sample_set(&r->s[r->n], &f->in, visits, err) != PB_OK)
        return PB_ERR;
    r->n++;
    return PB_OK;
}

static void tag_records_free(tag_records *r)
{
    for (int i = 0; i < r->cap; i++)
        tag_gnn_sample_free(&r->s[i]);
    free(r->s);
}

/* Self-play on this problem, training on its records, the parameters written to train_out. */
static int tag_placer_train(tag_placer *p, pb_error *err)
{
    const tag_placer_opts *o = &p->o;
    tag_records rec = {.gnn = p->gnn};
    int uniform = o->selfplay_priors == 1;
    int rc = tag_mcts_selfplay(p->search, uniform ? NULL : tag_gnn_prior_hook, p->gnn,
                               pb_seed_derive(p->seed, "tag-selfplay"), o->selfplay_limit,
                               tag_record, &rec, err);
    tag_gnn_trainer *tr = p->trainer;
    double before = 0, after = 0;
    long steps = (long)rec.n * (long)o->steps_per_sample;
    if (rc == PB_OK && rec.n == 0)
        rc = pb_errorf(err, "tag training: self-play recorded nothing (budget too small?)");
    for (int i = 0; rc == PB_OK && i < rec.n; i++) {
        double l;
        rc = tag_gnn_loss(p->gnn, &rec.s[i], &l, err);
        before += l / rec.n;
    }
    if (rc == PB_OK) {
        pb_rng rng;
        pb_rng_seed(&rng, pb_seed_derive(p->seed, "tag-train"));
        rc = tag_gnn_train_epoch(tr, rec.s, rec.n, steps, &rng, NULL, err);
    }
    for (int i = 0; rc == PB_OK && i < rec.n; i++) {
        double l;
        rc = tag_gnn_loss(p->gnn, &rec.s[i], &l, err);
        after += l / rec.n;
    }
    pb_nn_adam *adam = o->adam_state == 0 ? tag_gnn_trainer_adam(tr) : NULL;
    if (rc == PB_OK)
        rc = pb_nn_params_save_adam(tag_gnn_params(p->gnn), adam, o->train_out, err);
    if (rc == PB_OK) {
        char line[640];
        snprintf(line, sizeof line,
                 "tag-train {\"records\": %d, \"steps\": %ld, \"loss_before\": %.17g, "
                 "\"loss_after\": %.17g, \"adam_continued\": %s, \"adam_steps\": %lld, "
                 "\"params\": \"%s\"}",
                 rec.n, steps, before, after, p->adam_restored ? "true" : "false",
                 pb_nn_adam_steps(tag_gnn_trainer_adam(tr)), o->train_out);
        p->host->log(p->host->ctx, PB_LOG_INFO, line);
    }
    tag_records_free(&rec);
    return rc;
}
#endif

static int tag_placer_place(void *instance, const pb_problem *prob, pb_strategy *best,
                            double *initial_us, pb_error *err)
{
    tag_placer *p = instance;
    *initial_us = -1;
    tag_mcts_free(p->search);
    p->search = NULL;
    if (tag_mcts_new(prob, p->host, &p->o.mcts, &p->search, err))
        return PB_ERR;
    tag_prior_fn prior = NULL;
    void *prior_ctx = NULL;
#if defined(TAG_GNN)
    if (p->o.train_out && *p->o.train_out && tag_placer_train(p, err))
        return PB_ERR;
    prior = tag_gnn_prior_hook;
    prior_ctx = p->gnn;
#endif
    if (tag_mcts_run(p->search, prior, prior_ctx, p->seed, best, initial_us, err))
        return PB_ERR;
    char line[16384];
    tag_mcts_describe(p->search, line, sizeof line);
    p->host->log(p->host->ctx, PB_LOG_INFO, line);
    return PB_OK;
}

/* Its strategies use PB_REPL_SPLIT (model parallelism), which only the topology simulator
 * resolves (by METIS); other simulators of replicated strategies would refuse them. */
static const pb_placer_ops tag_placer_ops = {
    .struct_size = sizeof(pb_placer_ops),
    .create = tag_placer_create,
    .destroy = tag_placer_destroy,
    .place = tag_placer_place,
    .produces = PB_KIND_BIT(PB_STRATEGY_REPLICATED),
    .simulators = "topology",
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, TAG_PLACER_NAME, "1.0", TAG_PLACER_DESCRIPTION, tag_options,
                       tag_placer_opts, &tag_placer_ops);
