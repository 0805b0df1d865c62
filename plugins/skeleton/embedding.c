/* embedding.c — skeleton of a graph-embedding plugin: copy this file to start one.  A working
 * embedding: each node's features through one ReLU layer plus the mean of its predecessors'
 * transformed features (one round of message passing), on the NN core's autodiff tape. */
#include "placebench.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct skeleton_opts {
    long long width;
} skeleton_opts;

static const pb_option_def skeleton_options[] = {
    {.name = "width",
     .type = PB_OPT_INT,
     .default_value = "16",
     .min = 1,
     .max = 4096,
     .help = "embedding width",
     .offset = offsetof(skeleton_opts, width)},
};

typedef struct skeleton {
    int width;
    pb_rng rng;           /* initial weights, from the run's seed */
    pb_nn_params *params; /* borrowed from init_params: shared with the placer's policy */
    int w, b;             /* parameter ids */
} skeleton;

static int skeleton_create(const pb_create_args *a, void **instance, pb_error *err)
{
    skeleton *e = calloc(1, sizeof *e);
    if (!e)
        return pb_errorf(err, "out of memory");
    e->width = (int)((const skeleton_opts *)a->options)->width;
    pb_rng_seed(&e->rng, a->seed);
    *instance = e;
    return PB_OK;
}

static void skeleton_destroy(void *instance)
{
    free(instance);
}

/* Parameters are named "<plugin>/..." so that they never clash with the placer's. */
static int skeleton_init_params(void *instance, pb_nn_params *params, int feature_dim,
                                int *embedding_dim, pb_error *err)
{
    skeleton *e = instance;
    e->params = params;
    e->w = pb_nn_params_add(params, "skeleton/w", feature_dim, e->width, PB_NN_INIT_GLOROT, &e->rng,
                            err);
    e->b = e->w < 0
               ? -1
               : pb_nn_params_add(params, "skeleton/b", 1, e->width, PB_NN_INIT_ZEROS, NULL, err);
    if (e->b < 0)
        return PB_ERR;
    *embedding_dim = 2 * e->width;
    return PB_OK;
}

/* [h_v, mean of h_u over predecessors u] with h = ReLU(x W + b); ops record on the tape and
 * the tape's sticky error is checked once at the end. */
static int skeleton_forward(void *instance, pb_nn_tape *t, const pb_graph *g, pb_nn_tensor *x,
                            pb_nn_tensor **out, pb_error *err)
{
    skeleton *e = instance;
    pb_nn_tensor *h = pb_nn_linear(t, x, pb_nn_param(t, e->params, e->w),
                                   pb_nn_param(t, e->params, e->b), PB_NN_ACT_RELU);
    pb_nn_csr preds = {g->n_nodes, g->pred_start, g->pred, NULL};
    pb_nn_tensor *parts[2] = {h, pb_nn_aggregate(t, h, &preds, PB_NN_AGG_MEAN)};
    *out = pb_nn_concat_cols(t, 2, parts);
    return pb_nn_tape_status(t, err);
}

static const pb_embedding_ops skeleton_ops = {
    .struct_size = sizeof(pb_embedding_ops),
    .create = skeleton_create,
    .destroy = skeleton_destroy,
    .init_params = skeleton_init_params,
    .forward = skeleton_forward,
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_EMBEDDING, "skeleton-embedding", "1.0",
                       "skeleton: one ReLU layer and the mean over predecessors (copy "
                       "plugins/skeleton/embedding.c)",
                       skeleton_options, skeleton_opts, &skeleton_ops);
