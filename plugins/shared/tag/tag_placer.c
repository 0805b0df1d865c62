/* tag_placer.c — TAG's MCTS placers (specs/tag.md §7, §10), built twice: pure-mcts (uniform
 * priors) and tag (TAG_GNN: priors from the heterogeneous GAT, read from a parameter file). */
#include "placebench.h"

#include "tag_mcts.h"

#include <stddef.h>
#include <stdlib.h>

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

#define TAG_OPT(field) offsetof(tag_mcts_opts, field)

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
#if defined(TAG_GNN)
    {.name = "params",
     .type = PB_OPT_STRING,
     .default_value = "",
     .help = "file of the trained heterogeneous GAT's parameters (TAG's priors)",
     .offset = TAG_OPT(params)},
#endif
};

typedef struct tag_placer {
    const pb_host *host;
    tag_mcts_opts o;
    uint64_t seed;
    tag_mcts *search; /* of the last place(): the returned strategy's arrays live in it */
} tag_placer;

static int tag_placer_create(const pb_create_args *a, void **instance, pb_error *err)
{
    const tag_mcts_opts *o = a->options;
#if defined(TAG_GNN)
    /* The GNN (hetero-gat) is not part of this build: refuse rather than search with uniform
     * priors under TAG's name. */
    if (!o->params || !*o->params)
        return pb_errorf(err, "tag needs the trained GNN's parameters: --opt placer.params=FILE "
                              "(for TAG's search with uniform priors use the pure-mcts placer)");
    return pb_errorf(err,
                     "tag: the heterogeneous GAT that reads '%s' is not built in this version "
                     "(TAG's priors are unavailable); use the pure-mcts placer for TAG's search "
                     "with uniform priors",
                     o->params);
#endif
    tag_placer *p = calloc(1, sizeof *p);
    if (!p)
        return pb_errorf(err, "out of memory");
    p->host = a->host;
    p->o = *o;
    p->seed = a->seed;
    *instance = p;
    return PB_OK;
}

static void tag_placer_destroy(void *instance)
{
    tag_placer *p = instance;
    tag_mcts_free(p->search);
    free(p);
}

static int tag_placer_place(void *instance, const pb_problem *prob, pb_strategy *best,
                            double *initial_us, pb_error *err)
{
    tag_placer *p = instance;
    *initial_us = -1;
    tag_mcts_free(p->search);
    p->search = NULL;
    if (tag_mcts_new(prob, p->host, &p->o, &p->search, err))
        return PB_ERR;
    if (tag_mcts_run(p->search, NULL, NULL, p->seed, best, initial_us, err))
        return PB_ERR;
    char line[16384];
    tag_mcts_describe(p->search, line, sizeof line);
    p->host->log(p->host->ctx, PB_LOG_INFO, line);
    return PB_OK;
}

static const pb_placer_ops tag_placer_ops = {
    sizeof(pb_placer_ops),
    tag_placer_create,
    tag_placer_destroy,
    tag_placer_place,
    NULL,
    NULL,
    NULL,
    0,
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_PLACER, TAG_PLACER_NAME, "1.0", TAG_PLACER_DESCRIPTION, tag_options,
                       tag_mcts_opts, &tag_placer_ops);
