/* pgnn.c — the position-aware P-GNN embedding of the embedding paper's reference ([M/B]
 * SAGEMessenger with --sage-position-aware, specs/placeto.md §3.5) as an embedding plugin.
 *
 * What it computes: the GraphSAGE blocks Z_v (2^(H+1) x d, see graphsage.c and sage.h, with the
 * same options), each average-pooled along its rows with a window of floor(d/2)+1, stride 1,
 * VALID (P_v, R_p = 2^(H+1) - floor(d/2) rows; needs 2^(H+1) > floor(d/2), as the reference).
 * Anchor sets: m = int(ln n) size classes, max(int(c m), 1) sets per class (c log^2 n in all),
 * class i sets of int(n / 2^(i + anchor_exponent)) nodes (possibly 0), each a uniform sample of
 * the graph's nodes.  Distances are hop counts along the edges' direction within `cutoff` hops
 * (networkx all_pairs_shortest_path_length(G, cutoff) on the DiGraph, as the reference): an
 * anchor is reachable from v only when it is a descendant of v, so a sink sees no anchor but
 * itself.  Per anchor set, v's message is w * [P_v ; P_k]: anchor_aggregation = max takes the
 * farthest reachable anchor k != v (w = 1/(dist+1); none: zeros), mean averages over every
 * anchor of the set (v itself included at distance 0, unreachable ones as zeros; an empty set,
 * where the reference fails, gives zeros).  v's embedding is F_pos(mean over all rows of all
 * its messages), N x d, so the placer's tri readout applies directly.  The mean is linear in the
 * column sums of the pooled blocks, so it is one weighted sparse sum (anchors.h) on the tape.
 *
 * Randomness.  The successor samples and then the anchor sets are drawn once per graph in
 * prepare(), from one generator seeded with the structure seed (option sample_seed when set,
 * else derived from the create seed, itself pb_seed_derive(run seed, "embedding") in a run), in
 * the reference's order; with equal seeds graphsage and pgnn sample the same successors.
 * prepare() logs the seed and the anchor set sizes ("pgnn: <graph>: ... sample seed S"); the
 * same run seed, or sample_seed=S, gives the same samples and anchor sets.  Dropout draws from
 * seeds[b] in forward_batch (a pure function of parameters, features and seed).  Parameters are
 * named "pgnn/...".
 */
#include "anchors.h"
#include "embed_cache.h"
#include "sage.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pgnn_opts {
    sage_options sage;
    double c;
    long long cutoff;
    long long anchor_exponent;
    int anchor_aggregation;
} pgnn_opts;

static const pb_option_def pgnn_options[] = {
    SAGE_OPTION_DEFS(pgnn_opts, sage),
    {.name = "c",
     .type = PB_OPT_DOUBLE,
     .default_value = "0.2",
     .min = 0,
     .max = 100,
     .choices = NULL,
     .help = "anchor sets per size class: max(int(c * int(ln n)), 1) (reference --pgnn-c)",
     .offset = offsetof(pgnn_opts, c)},
    {.name = "cutoff",
     .type = PB_OPT_INT,
     .default_value = "6",
     .min = 1,
     .max = 1000,
     .choices = NULL,
     .help = "largest hop distance from a node to an anchor that counts (reference "
             "--pgnn-neigh-cutoff)",
     .offset = offsetof(pgnn_opts, cutoff)},
    {.name = "anchor_exponent",
     .type = PB_OPT_INT,
     .default_value = "4",
     .min = 0,
     .max = 30,
     .choices = NULL,
     .help = "size class i holds int(n / 2^(i + anchor_exponent)) nodes (reference "
             "--pgnn-anchor-exponent)",
     .offset = offsetof(pgnn_opts, anchor_exponent)},
    {.name = "anchor_aggregation",
     .type = PB_OPT_ENUM,
     .default_value = "max",
     .min = 1,
     .max = 0,
     .choices = "max|mean",
     .help = "max: the farthest reachable anchor of each set; mean: all anchors of the set, "
             "unreachable ones as zeros (reference --pgnn-aggregation)",
     .offset = offsetof(pgnn_opts, anchor_aggregation)},
};

/* Per-graph data: the fixed samples, anchor sets and anchor weights. */
typedef struct pgnn_graph {
    const pb_graph *g;
    sage_samples samples;
    anchors sets;
    anchors_weights weights;
} pgnn_graph;

typedef struct pgnn {
    sage_config cfg;
    double c;
    int cutoff, exponent, aggregation;
    uint64_t structure_seed;
    pb_rng param_rng, pass_rng;
    const pb_host *host;
    pb_nn_params *params; /* borrowed from init_params */
    sage_model model;     /* model.dim == 0 before init_params */
    pb_nn_mlp pos;        /* F_pos = FNN(d, [d], d) */
    embed_cache cache;    /* the graph forward() last saw */
} pgnn;

/* Defined at the end; forward() hands it to embed_cache_forward. */
static const pb_embedding_ops pgnn_ops;

static int pgnn_create(const pb_create_args *a, void **instance, pb_error *err)
{
    const pgnn_opts *o = a->options;
    pgnn *e = calloc(1, sizeof *e);
    if (!e)
        return pb_errorf(err, "out of memory");
    sage_config_read(&o->sage, &e->cfg);
    e->c = o->c;
    e->cutoff = (int)o->cutoff;
    e->exponent = (int)o->anchor_exponent;
    e->aggregation = o->anchor_aggregation ? ANCHORS_MEAN : ANCHORS_MAX;
    e->structure_seed = sage_structure_seed(&e->cfg, a->seed);
    pb_rng_seed(&e->param_rng, pb_seed_derive(a->seed, "pgnn/params"));
    pb_rng_seed(&e->pass_rng, pb_seed_derive(a->seed, "pgnn/passes"));
    e->host = a->host;
    *instance = e;
    return PB_OK;
}

static void pgnn_release(void *instance, void *prepared)
{
    (void)instance;
    pgnn_graph *pg = prepared;
    if (!pg)
        return;
    sage_samples_free(&pg->samples);
    anchors_free(&pg->sets);
    anchors_weights_free(&pg->weights);
    free(pg);
}

static void pgnn_destroy(void *instance)
{
    pgnn *e = instance;
    embed_cache_free(&e->cache, &pgnn_ops, e);
    free(e);
}

static int pgnn_init_params(void *instance, pb_nn_params *params, int feature_dim,
                            int *embedding_dim, pb_error *err)
{
    pgnn *e = instance;
    int rows = 2 << e->cfg.hops, window = feature_dim / 2 + 1;
    if (feature_dim >= 1 && rows < window)
        return pb_errorf(err,
                         "pgnn: hops=%d gives %d rows per node, fewer than the pooling window "
                         "floor(d/2)+1 = %d for feature width %d; raise hops",
                         e->cfg.hops, rows, window, feature_dim);
    if (sage_model_init(&e->model, &e->cfg, params, "pgnn", feature_dim, &e->param_rng, err) ||
        sage_mlp_init(&e->pos, params, "pgnn/pos", feature_dim, feature_dim, e->cfg.single_layer,
                      &e->param_rng, err))
        return PB_ERR;
    e->params = params;
    *embedding_dim = feature_dim;
    return PB_OK;
}

static int pgnn_feature_dim(void *instance, int n_devices)
{
    (void)instance;
    return pb_placeto_features_dim(n_devices);
}

static int pgnn_features(void *instance, const pb_place_state *s, float *out, pb_error *err)
{
    pgnn *e = instance;
    return pb_placeto_features(s, e->cfg.feature5, out, err);
}

static unsigned pgnn_eval_reads(void *instance)
{
    const pgnn *e = instance;
    return pb_placeto_features_reads(e->cfg.feature5);
}

/* Logs what prepare drew: sample count, anchor set sizes, seed. */
static void pgnn_log_prepared(const pgnn *e, const pgnn_graph *pg)
{
    char msg[512], sizes[256] = "";
    size_t used = 0;
    for (int s = 0; s < pg->sets.n_sets && used + 16 < sizeof sizes; s++)
        used += (size_t)snprintf(sizes + used, sizeof sizes - used, "%s%d", s ? "," : "",
                                 pg->sets.start[s + 1] - pg->sets.start[s]);
    snprintf(msg, sizeof msg,
             "pgnn: %s: %d of %d successor edges sampled (%d of %d nodes have samples), %d "
             "anchor sets of sizes [%s], cutoff %d, sample seed %llu",
             pg->g->name ? pg->g->name : "graph", pg->samples.start[pg->g->n_nodes], pg->g->n_edges,
             sage_samples_nodes(&pg->samples), pg->g->n_nodes, pg->sets.n_sets, sizes, e->cutoff,
             (unsigned long long)e->structure_seed);
    sage_log(e->host, msg);
}

static int pgnn_prepare(void *instance, const pb_graph *g, void **prepared, pb_error *err)
{
    pgnn *e = instance;
    if (g->n_nodes < 1)
        return pb_errorf(err, "pgnn: graph '%s' has no nodes", g->name ? g->name : "");
    pgnn_graph *pg = calloc(1, sizeof *pg);
    int *order = malloc((size_t)g->n_nodes * sizeof(int));
    if (!pg || !order) {
        free(pg);
        free(order);
        return pb_errorf(err, "out of memory");
    }
    pg->g = g;
    pb_rng rng;
    pb_rng_seed(&rng, e->structure_seed);
    /* The reference draws the samples first, then the anchor sets from pg.nodes(). */
    int rc = pb_traverse_topo(g, order, err) ||
             sage_samples_draw(&pg->samples, g, order, e->cfg.sample_ratio, &rng, err) ||
             anchors_draw(&pg->sets, order, g->n_nodes, e->c, e->exponent, &rng, err) ||
             anchors_weights_build(&pg->weights, g, &pg->sets, e->cutoff, e->aggregation, err);
    free(order);
    if (rc) {
        pgnn_release(e, pg);
        return PB_ERR;
    }
    pgnn_log_prepared(e, pg);
    *prepared = pg;
    return PB_OK;
}

/* The anchor weights of `batch` copies of the graph, block-diagonal, on the tape. */
static int pgnn_batch_csr(pb_nn_tape *t, const anchors_weights *w, int batch, pb_nn_csr *csr)
{
    int n = w->n, nnz = w->start[n];
    int *start = pb_nn_alloc(t, ((size_t)n * batch + 1) * sizeof(int));
    int *index = pb_nn_alloc(t, ((size_t)nnz * batch + 1) * sizeof(int));
    float *weight = pb_nn_alloc(t, ((size_t)nnz * batch + 1) * sizeof(float));
    if (!start || !index || !weight)
        return PB_ERR;
    for (int b = 0; b < batch; b++) {
        for (int v = 0; v < n; v++)
            start[b * n + v] = b * nnz + w->start[v];
        for (int k = 0; k < nnz; k++) {
            index[b * nnz + k] = b * n + w->index[k];
            weight[b * nnz + k] = w->weight[k];
        }
    }
    start[n * batch] = nnz * batch;
    *csr = (pb_nn_csr){n * batch, start, index, weight};
    return PB_OK;
}

/* Row weights that turn a block of `rows` rows into the column sums of its average pooling
 * with `window` (stride 1, VALID): row j lies in the windows starting at max(0, j-window+1) ..
 * min(j, rows-window). */
static float *pgnn_pool_weights(pb_nn_tape *t, int rows, int window)
{
    float *w = pb_nn_alloc(t, (size_t)rows * sizeof(float));
    int last = rows - window;
    for (int j = 0; w && j < rows; j++) {
        int lo = j - window + 1 > 0 ? j - window + 1 : 0, hi = j < last ? j : last;
        w[j] = (float)(hi - lo + 1) / (float)window;
    }
    return w;
}

static const uint64_t *pgnn_seeds(pb_nn_tape *t, pgnn *e, const uint64_t *seeds, int batch)
{
    if (seeds)
        return seeds;
    uint64_t *s = pb_nn_alloc(t, (size_t)batch * sizeof *s);
    for (int b = 0; s && b < batch; b++)
        s[b] = pb_rng_next(&e->pass_rng);
    return s;
}

static int pgnn_forward_batch(void *instance, void *prepared, pb_nn_tape *t, pb_nn_tensor *x,
                              int batch, const uint64_t *seeds, pb_nn_tensor **out, pb_error *err)
{
    pgnn *e = instance;
    const pgnn_graph *pg = prepared;
    *out = NULL;
    int d = e->model.dim;
    if (!d)
        return pb_errorf(err, "pgnn: forward before init_params");
    const uint64_t *s = pgnn_seeds(t, e, seeds, batch > 0 ? batch : 1);
    pb_nn_tensor *z;
    if (!s || sage_forward(t, e->params, &e->model, &pg->samples, x, batch, s, &z, err))
        return s ? PB_ERR : pb_nn_tape_status(t, err);
    int rows = 2 << e->cfg.hops, window = d / 2 + 1, pooled = rows - window + 1;
    float *pool = pgnn_pool_weights(t, rows, window);
    pb_nn_csr csr;
    if (!pool || pgnn_batch_csr(t, &pg->weights, batch, &csr))
        return pb_nn_tape_status(t, err);
    pb_nn_tensor *v = pb_nn_aggregate(t, sage_pool_rows(t, z, d, pool), &csr, PB_NN_AGG_SUM);
    if (pg->sets.n_sets > 0)
        v = pb_nn_scale(t, v, 1.0f / (float)(2.0 * pg->sets.n_sets * pooled));
    *out = pb_nn_mlp_forward(t, e->params, &e->pos, v);
    return pb_nn_tape_status(t, err);
}

static int pgnn_forward(void *instance, pb_nn_tape *t, const pb_graph *g, pb_nn_tensor *x,
                        pb_nn_tensor **out, pb_error *err)
{
    pgnn *e = instance;
    return embed_cache_forward(&e->cache, &pgnn_ops, e, t, g, x, out, err);
}

static const pb_embedding_ops pgnn_ops = {
    .struct_size = sizeof(pb_embedding_ops),
    .create = pgnn_create,
    .destroy = pgnn_destroy,
    .init_params = pgnn_init_params,
    .forward = pgnn_forward,
    .feature_dim = pgnn_feature_dim,
    .features = pgnn_features,
    .prepare = pgnn_prepare,
    .release = pgnn_release,
    .forward_batch = pgnn_forward_batch,
    .eval_reads = pgnn_eval_reads,
};

PB_PLUGIN_WITH_OPTIONS(
    PB_KIND_EMBEDDING, "pgnn", "1.0",
    "position-aware P-GNN (embedding paper reference): GraphSAGE blocks, anchor sets "
    "and hop distances",
    pgnn_options, pgnn_opts, &pgnn_ops);
