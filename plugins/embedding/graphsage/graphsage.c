/* graphsage.c — the GraphSAGE embedding of the embedding paper's reference ([M/B]
 * SAGEMessenger, specs/placeto.md §3.1-3.4) as an embedding plugin.
 *
 * What it computes (sage.h): T_s on the Placeto node features, then levels i = 0..H over a fixed
 * sample of each node's successors (int(out-degree * sample_ratio) of them), each level
 * aggregating the samples' blocks (max by default), interleaving aggregate and self as the
 * reference's reshape does, applying F_i and dropout; a node's final block of 2^(H+1) x d rows is
 * L2-normalised as a whole.  d is the feature width (5 + devices) and every network keeps it.
 *
 * output = node (default) or graph: the reference's GraphSAGE output is that block per node,
 * N * 2^(H+1) rows, which cannot feed the placer's parent/child/parallel readout (1 x N masks;
 * the shipped configuration fails with a size mismatch, spec §3.4).
 * - node: each node's block mean-pooled to one row: N x d, embedding width d.  Works with every
 *   readout of the placer; the default, because the placer's default readout is the tri-
 *   aggregation (Placeto's policy input, which the paper's GraphSAGE swaps only the messenger
 *   of).  configs/embeddings-check.lua and the paper-table reproduction use it.
 * - graph: the block itself, unpooled, as one row of width 2^(H+1) d per node.  Pair it with the
 *   placer's readout=graph, the reference's only runnable SAGE setup (--tri-agg False
 *   --agg-msgs True): one unmasked Aggregator summing over the whole output, a classifier that
 *   sees the graph as a whole and the current node only through its curr_bit feature.  The
 *   placer's aggregator then reads a node's rows together (its first layer is 2^(H+1) d wide)
 *   where the reference's reads them one by one: block-diagonal weights with equal blocks give
 *   exactly the reference's sum over rows, so the reference's policy is one point of this one.
 *   With the tri readout it also runs, on 2^(H+1) d-wide rows.
 *
 * Randomness.  The successor samples are drawn once per graph in prepare(), in the reference's
 * node order (networkx-2.4 topological), from the structure seed: option sample_seed when set,
 * else derived from the create seed (itself pb_seed_derive(run seed, "embedding") in a run).
 * prepare() logs the seed it used ("graphsage: <graph>: ... sample seed S"); rerunning with the
 * same run seed, or with sample_seed=S, draws the same samples.  Dropout (after every level, on
 * in training and greedy episodes as in the reference) draws from seeds[b] in forward_batch, so
 * a forward pass is a pure function of (parameters, features, seed).  Weights are Glorot from a
 * generator derived from the create seed.  All parameters are named "graphsage/...".
 */
#include "embed_cache.h"
#include "sage.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OUTPUT_NODE = 0, OUTPUT_GRAPH = 1 };

typedef struct graphsage_opts {
    sage_options sage;
    int output;
} graphsage_opts;

static const pb_option_def graphsage_options[] = {
    SAGE_OPTION_DEFS(graphsage_opts, sage),
    {.name = "output",
     .type = PB_OPT_ENUM,
     .default_value = "node",
     .min = 1,
     .max = 0,
     .choices = "node|graph",
     .help = "node: each node's 2^(H+1) x d block mean-pooled to one row of d (works with the tri "
             "readout); graph: the block unpooled as one row of 2^(H+1)*d, the reference's output, "
             "meant for the placer's readout=graph",
     .offset = offsetof(graphsage_opts, output)},
};

/* Per-graph data: the fixed successor samples. */
typedef struct graphsage_graph {
    const pb_graph *g;
    sage_samples samples;
} graphsage_graph;

typedef struct graphsage {
    sage_config cfg;
    int output;
    uint64_t structure_seed;
    pb_rng param_rng; /* initial weights */
    pb_rng pass_rng;  /* per-pass seeds when the caller gives none */
    const pb_host *host;
    pb_nn_params *params; /* borrowed from init_params */
    sage_model model;     /* model.dim == 0 before init_params */
    embed_cache cache;    /* the graph forward() last saw */
} graphsage;

/* Defined at the end; forward() hands it to embed_cache_forward. */
static const pb_embedding_ops graphsage_ops;

static int graphsage_create(const pb_create_args *a, void **instance, pb_error *err)
{
    const graphsage_opts *o = a->options;
    graphsage *e = calloc(1, sizeof *e);
    if (!e)
        return pb_errorf(err, "out of memory");
    sage_config_read(&o->sage, &e->cfg);
    e->output = (int)o->output;
    e->structure_seed = sage_structure_seed(&e->cfg, a->seed);
    pb_rng_seed(&e->param_rng, pb_seed_derive(a->seed, "graphsage/params"));
    pb_rng_seed(&e->pass_rng, pb_seed_derive(a->seed, "graphsage/passes"));
    e->host = a->host;
    *instance = e;
    return PB_OK;
}

static void graphsage_release(void *instance, void *prepared)
{
    (void)instance;
    graphsage_graph *gg = prepared;
    if (!gg)
        return;
    sage_samples_free(&gg->samples);
    free(gg);
}

static void graphsage_destroy(void *instance)
{
    graphsage *e = instance;
    embed_cache_free(&e->cache, &graphsage_ops, e);
    free(e);
}

static int graphsage_init_params(void *instance, pb_nn_params *params, int feature_dim,
                                 int *embedding_dim, pb_error *err)
{
    graphsage *e = instance;
    if (sage_model_init(&e->model, &e->cfg, params, "graphsage", feature_dim, &e->param_rng, err))
        return PB_ERR;
    e->params = params;
    *embedding_dim = e->output == OUTPUT_NODE ? feature_dim : (2 << e->cfg.hops) * feature_dim;
    return PB_OK;
}

static int graphsage_feature_dim(void *instance, int n_devices)
{
    (void)instance;
    return pb_placeto_features_dim(n_devices);
}

static int graphsage_features(void *instance, const pb_place_state *s, float *out, pb_error *err)
{
    graphsage *e = instance;
    return pb_placeto_features(s, e->cfg.feature5, out, err);
}

static unsigned graphsage_eval_reads(void *instance)
{
    const graphsage *e = instance;
    return pb_placeto_features_reads(e->cfg.feature5);
}

static int graphsage_prepare(void *instance, const pb_graph *g, void **prepared, pb_error *err)
{
    graphsage *e = instance;
    graphsage_graph *gg = calloc(1, sizeof *gg);
    int *order = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
    if (!gg || !order) {
        free(gg);
        free(order);
        return pb_errorf(err, "out of memory");
    }
    gg->g = g;
    pb_rng rng;
    pb_rng_seed(&rng, e->structure_seed);
    if (g->n_nodes < 1 || pb_traverse_topo(g, order, err) ||
        sage_samples_draw(&gg->samples, g, order, e->cfg.sample_ratio, &rng, err)) {
        free(order);
        graphsage_release(e, gg);
        return g->n_nodes < 1 ? pb_errorf(err, "graphsage: graph '%s' has no nodes", g->name)
                              : PB_ERR;
    }
    free(order);
    char msg[256];
    snprintf(msg, sizeof msg,
             "graphsage: %s: %d of %d successor edges sampled (ratio %g; %d of %d nodes have "
             "samples), sample seed %llu",
             g->name ? g->name : "graph", gg->samples.start[g->n_nodes], g->n_edges,
             e->cfg.sample_ratio, sage_samples_nodes(&gg->samples), g->n_nodes,
             (unsigned long long)e->structure_seed);
    sage_log(e->host, msg);
    *prepared = gg;
    return PB_OK;
}

/* seeds, or batch fresh ones from the instance's generator (on the tape). */
static const uint64_t *graphsage_seeds(pb_nn_tape *t, graphsage *e, const uint64_t *seeds,
                                       int batch)
{
    if (seeds)
        return seeds;
    uint64_t *s = pb_nn_alloc(t, (size_t)batch * sizeof *s);
    for (int b = 0; s && b < batch; b++)
        s[b] = pb_rng_next(&e->pass_rng);
    return s;
}

static int graphsage_forward_batch(void *instance, void *prepared, pb_nn_tape *t, pb_nn_tensor *x,
                                   int batch, const uint64_t *seeds, pb_nn_tensor **out,
                                   pb_error *err)
{
    graphsage *e = instance;
    const graphsage_graph *gg = prepared;
    *out = NULL;
    if (!e->model.dim)
        return pb_errorf(err, "graphsage: forward before init_params");
    const uint64_t *s = graphsage_seeds(t, e, seeds, batch > 0 ? batch : 1);
    if (!s)
        return pb_nn_tape_status(t, err);
    pb_nn_tensor *z;
    if (sage_forward(t, e->params, &e->model, &gg->samples, x, batch, s, &z, err))
        return PB_ERR;
    if (e->output == OUTPUT_GRAPH) {
        *out = z;
        return PB_OK;
    }
    int rows = 2 << e->cfg.hops;
    float *w = pb_nn_alloc(t, (size_t)rows * sizeof(float));
    for (int j = 0; w && j < rows; j++)
        w[j] = 1.0f / (float)rows;
    *out = w ? sage_pool_rows(t, z, e->model.dim, w) : NULL;
    if (pb_nn_tape_status(t, err))
        return PB_ERR;
    return *out ? PB_OK : pb_errorf(err, "graphsage: pooling failed");
}

static int graphsage_forward(void *instance, pb_nn_tape *t, const pb_graph *g, pb_nn_tensor *x,
                             pb_nn_tensor **out, pb_error *err)
{
    graphsage *e = instance;
    return embed_cache_forward(&e->cache, &graphsage_ops, e, t, g, x, out, err);
}

static const pb_embedding_ops graphsage_ops = {
    .struct_size = sizeof(pb_embedding_ops),
    .create = graphsage_create,
    .destroy = graphsage_destroy,
    .init_params = graphsage_init_params,
    .forward = graphsage_forward,
    .feature_dim = graphsage_feature_dim,
    .features = graphsage_features,
    .prepare = graphsage_prepare,
    .release = graphsage_release,
    .forward_batch = graphsage_forward_batch,
    .eval_reads = graphsage_eval_reads,
};

PB_PLUGIN_WITH_OPTIONS(
    PB_KIND_EMBEDDING, "graphsage", "1.0",
    "GraphSAGE over sampled successors (embedding paper reference): per-node pooled or "
    "the reference's unpooled blocks",
    graphsage_options, graphsage_opts, &graphsage_ops);
