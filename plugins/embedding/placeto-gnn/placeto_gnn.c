/* placeto_gnn.c — the Placeto graph embedding: node features (specs/placeto.md §2.2) and the
 * sequential or k-round radial message passer (§2.4), as an embedding plugin.
 *
 * Interface (placebench.h, pb_embedding_ops with the optional progressive-placer members):
 * - feature_dim/features: the standard Placeto features, 5 + n_devices wide, through
 *   pb_placeto_features with the feature-5 mode of option feature5 ([A] start time by default,
 *   the [M/B] forks' device peak memory on request).
 * - init_params: T = FNN(d, [d, d], d) and per direction an Aggregator f = FNN(d, [d], d),
 *   g = FNN(d, [d], d) (small_nn: no hidden layers), d = feature width, Glorot weights drawn
 *   from the create seed; embedding width 2d (d with message_passing = none).
 * - forward/forward_batch: S = T(E), then [h_forward | h_backward]:
 *   sequential ([M/B], the papers' runs): h[v] = S[v] + ReLU(g(sum over parents u of
 *   ReLU(f(h[u])))) in networkx-2.4 topological order, and over children in the reverse order;
 *   radial ([A], k rounds): X_r = has_parent * ReLU(g(F.ReLU(f(X_{r-1})))) + S, X_0 = S.
 * The parent/child/parallel aggregation of §2.5 and the classifier are the placer's policy head
 * (the placeto placer's readout), as in the reference, where only the messenger is swapped for
 * GraphSAGE or P-GNN.  Rows are in the graph's node order; nothing here is random after
 * init_params, so seeds are not used.
 */
#include "embed_cache.h"
#include "messenger.h"
#include "placebench.h"

#include <stddef.h>

#include <stdlib.h>
#include <string.h>

enum { GNN_SEQUENTIAL = 0, GNN_RADIAL = 1, GNN_NONE = 2 };

typedef struct gnn_opts {
    int message_passing;
    long long rounds;
    int feature5;
    int small_nn;
} gnn_opts;

static const pb_option_def gnn_options[] = {
    {.name = "message_passing",
     .type = PB_OPT_ENUM,
     .default_value = "sequential",
     .min = 1,
     .max = 0,
     .choices = "sequential|radial|none",
     .help = "sequential: one full-depth pass in topological order and one in reverse ([M/B] "
             "Messenger, what the embedding and traversal-order papers ran); radial: `rounds` "
             "synchronous rounds ([A] RadialMessenger); none: the features themselves",
     .offset = offsetof(gnn_opts, message_passing)},
    {.name = "rounds",
     .type = PB_OPT_INT,
     .default_value = "8",
     .min = 1,
     .max = 64,
     .choices = NULL,
     .help = "rounds of the radial message passer (k; [A]'s hyperparameters used 8)",
     .offset = offsetof(gnn_opts, rounds)},
    {.name = "feature5",
     .type = PB_OPT_ENUM,
     .default_value = "start-time",
     .min = 1,
     .max = 0,
     .choices = "start-time|peak-mem",
     .help = "5th node feature: the simulated start time ([A] intent; a group starts with its "
             "earliest op) or the peak memory of the node's device (what [M/B] compute)",
     .offset = offsetof(gnn_opts, feature5)},
    {.name = "small_nn",
     .type = PB_OPT_BOOL,
     .default_value = "false",
     .min = 1,
     .max = 0,
     .choices = NULL,
     .help = "no hidden layers: T = FNN(d, [d], d), f and g = FNN(d, d) (reference --small-nn)",
     .offset = offsetof(gnn_opts, small_nn)},
};

/* Per-graph data: processing orders and neighbour lists. */
typedef struct gnn_graph {
    const pb_graph *g;
    int n;
    int *topo;     /* [n] networkx-2.4 topological order */
    int *reverse;  /* [n] its reverse */
    float *has_in; /* [n] 1 when the node has a parent */
    float *has_out;
} gnn_graph;

typedef struct gnn {
    int mode, rounds, feature5, small_nn;
    pb_rng rng;
    pb_nn_params *params; /* borrowed from init_params */
    int dim;              /* feature width d, 0 before init_params */
    pb_nn_mlp t;          /* node self-transform */
    pb_nn_mlp f[2], g[2]; /* [0] over parents, [1] over children */
    embed_cache cache;    /* the graph forward() last saw */
} gnn;

/* Defined at the end; forward() hands it to embed_cache_forward. */
static const pb_embedding_ops gnn_ops;

static int gnn_create(const pb_create_args *a, void **instance, pb_error *err)
{
    const gnn_opts *o = a->options;
    gnn *e = calloc(1, sizeof *e);
    if (!e)
        return pb_errorf(err, "out of memory");
    e->mode = (int)o->message_passing;
    e->rounds = (int)o->rounds;
    e->feature5 = o->feature5 ? PB_FEATURE5_PEAK_MEM : PB_FEATURE5_START_TIME;
    e->small_nn = (int)o->small_nn;
    pb_rng_seed(&e->rng, a->seed);
    *instance = e;
    return PB_OK;
}

static void gnn_release(void *instance, void *prepared)
{
    (void)instance;
    gnn_graph *gg = prepared;
    if (!gg)
        return;
    free(gg->topo);
    free(gg->reverse);
    free(gg->has_in);
    free(gg->has_out);
    free(gg);
}

static void gnn_destroy(void *instance)
{
    gnn *e = instance;
    embed_cache_free(&e->cache, &gnn_ops, e);
    free(e);
}

static int gnn_init_params(void *instance, pb_nn_params *params, int feature_dim,
                           int *embedding_dim, pb_error *err)
{
    gnn *e = instance;
    int d = feature_dim;
    if (d < 1 || d > MESSENGER_MAX_DIM)
        return pb_errorf(err, "placeto-gnn: feature width %d outside 1..%d", d, MESSENGER_MAX_DIM);
    e->params = params;
    e->dim = d;
    *embedding_dim = e->mode == GNN_NONE ? d : 2 * d;
    if (e->mode == GNN_NONE)
        return PB_OK;
    int t_sizes[4] = {d, d, d, d}, a_sizes[3] = {d, d, d};
    int t_n = e->small_nn ? 3 : 4, a_n = e->small_nn ? 2 : 3;
    static const char *const names[2][2] = {{"placeto-gnn/fwd/f", "placeto-gnn/fwd/g"},
                                            {"placeto-gnn/bwd/f", "placeto-gnn/bwd/g"}};
    if (pb_nn_mlp_init(&e->t, params, "placeto-gnn/T", t_n, t_sizes, PB_NN_ACT_NONE, &e->rng, err))
        return PB_ERR;
    for (int k = 0; k < 2; k++)
        if (pb_nn_mlp_init(&e->f[k], params, names[k][0], a_n, a_sizes, PB_NN_ACT_RELU, &e->rng,
                           err) ||
            pb_nn_mlp_init(&e->g[k], params, names[k][1], a_n, a_sizes, PB_NN_ACT_RELU, &e->rng,
                           err))
            return PB_ERR;
    return PB_OK;
}

static int gnn_feature_dim(void *instance, int n_devices)
{
    (void)instance;
    return pb_placeto_features_dim(n_devices);
}

static int gnn_features(void *instance, const pb_place_state *s, float *out, pb_error *err)
{
    gnn *e = instance;
    return pb_placeto_features(s, e->feature5, out, err);
}

static unsigned gnn_eval_reads(void *instance)
{
    const gnn *e = instance;
    return pb_placeto_features_reads(e->feature5);
}

static int gnn_prepare(void *instance, const pb_graph *g, void **prepared, pb_error *err)
{
    (void)instance;
    gnn_graph *gg = calloc(1, sizeof *gg);
    int n = g->n_nodes;
    size_t cnt = (size_t)(n > 0 ? n : 1);
    if (gg) {
        gg->g = g;
        gg->n = n;
        gg->topo = malloc(cnt * sizeof(int));
        gg->reverse = malloc(cnt * sizeof(int));
        gg->has_in = malloc(cnt * sizeof(float));
        gg->has_out = malloc(cnt * sizeof(float));
    }
    if (!gg || !gg->topo || !gg->reverse || !gg->has_in || !gg->has_out) {
        gnn_release(instance, gg);
        return pb_errorf(err, "out of memory");
    }
    if (pb_traverse_topo(g, gg->topo, err)) {
        gnn_release(instance, gg);
        return PB_ERR;
    }
    for (int i = 0; i < n; i++) {
        gg->reverse[i] = gg->topo[n - 1 - i];
        gg->has_in[i] = g->pred_start[i + 1] > g->pred_start[i] ? 1.0f : 0.0f;
        gg->has_out[i] = g->succ_start[i + 1] > g->succ_start[i] ? 1.0f : 0.0f;
    }
    *prepared = gg;
    return PB_OK;
}

/* The messenger's view of direction k (0: parents in topological order, 1: children in the
 * reverse order). */
static void gnn_dir(pb_nn_tape *t, const gnn *e, const gnn_graph *gg, int k, messenger_dir *dir)
{
    const pb_graph *g = gg->g;
    dir->order = k == 0 ? gg->topo : gg->reverse;
    dir->nbr_start = k == 0 ? g->pred_start : g->succ_start;
    dir->nbr = k == 0 ? g->pred : g->succ;
    const pb_nn_mlp *m[2] = {&e->f[k], &e->g[k]};
    messenger_mlp *out[2] = {&dir->f, &dir->g};
    for (int i = 0; i < 2; i++) {
        out[i]->n_layers = m[i]->n_layers;
        for (int l = 0; l < m[i]->n_layers; l++) {
            out[i]->w[l] = pb_nn_param(t, e->params, m[i]->weight[l]);
            out[i]->b[l] = pb_nn_param(t, e->params, m[i]->bias[l]);
        }
    }
}

/* The block-diagonal neighbour lists of `batch` copies of the graph, on the tape. */
static pb_nn_csr gnn_batch_csr(pb_nn_tape *t, const pb_graph *g, int k, int batch)
{
    const int *start = k == 0 ? g->pred_start : g->succ_start;
    const int *nbr = k == 0 ? g->pred : g->succ;
    int n = g->n_nodes, m = start[n];
    pb_nn_csr c = {0, NULL, NULL, NULL};
    int *s = pb_nn_alloc(t, ((size_t)n * batch + 1) * sizeof(int));
    int *idx = pb_nn_alloc(t, ((size_t)m * batch + 1) * sizeof(int));
    if (!s || !idx)
        return c;
    for (int b = 0; b < batch; b++) {
        for (int v = 0; v < n; v++)
            s[b * n + v] = b * m + start[v];
        for (int e = 0; e < m; e++)
            idx[b * m + e] = b * n + nbr[e];
    }
    s[n * batch] = m * batch;
    c.n_rows = n * batch;
    c.start = s;
    c.index = idx;
    return c;
}

/* The mask column (batch*n x 1) of nodes that have a neighbour in direction k. */
static pb_nn_tensor *gnn_batch_mask(pb_nn_tape *t, const gnn_graph *gg, int k, int batch)
{
    pb_nn_tensor *m = pb_nn_constant(t, gg->n * batch, 1, NULL);
    if (m)
        for (int b = 0; b < batch; b++)
            memcpy(m->data + (size_t)b * gg->n, k == 0 ? gg->has_in : gg->has_out,
                   (size_t)gg->n * sizeof(float));
    return m;
}

static pb_nn_tensor *gnn_radial(pb_nn_tape *t, const gnn *e, const gnn_graph *gg, int batch,
                                pb_nn_tensor *s)
{
    pb_nn_tensor *side[2];
    for (int k = 0; k < 2; k++) {
        pb_nn_csr csr = gnn_batch_csr(t, gg->g, k, batch);
        pb_nn_tensor *mask = gnn_batch_mask(t, gg, k, batch);
        pb_nn_tensor *x = s;
        for (int r = 0; r < e->rounds && csr.start; r++) {
            pb_nn_tensor *fx = pb_nn_mlp_forward(t, e->params, &e->f[k], x);
            pb_nn_tensor *agg = pb_nn_aggregate(t, fx, &csr, PB_NN_AGG_SUM);
            pb_nn_tensor *gx = pb_nn_mlp_forward(t, e->params, &e->g[k], agg);
            x = pb_nn_add(t, pb_nn_mul(t, gx, mask), s);
        }
        side[k] = csr.start ? x : NULL;
    }
    return side[0] && side[1] ? pb_nn_concat_cols(t, 2, side) : NULL;
}

/* Checks the features and applies the node transform T; *s is NULL when the embedding is the
 * features themselves (message_passing = none, *s then x). */
static int gnn_transform(const gnn *e, const gnn_graph *gg, pb_nn_tape *t, pb_nn_tensor *x,
                         int batch, pb_nn_tensor **s, pb_error *err)
{
    *s = NULL;
    if (!e->dim)
        return pb_errorf(err, "placeto-gnn: forward before init_params");
    if (!x || x->cols != e->dim || batch < 1 || x->rows != gg->n * batch)
        return pb_errorf(err, "placeto-gnn: features of %dx%d for %d blocks of %d nodes x %d",
                         x ? x->rows : 0, x ? x->cols : 0, batch, gg->n, e->dim);
    if (e->mode == GNN_NONE) {
        *s = x;
        return PB_OK;
    }
    *s = pb_nn_mlp_forward(t, e->params, &e->t, x);
    return pb_nn_tape_status(t, err);
}

static int gnn_forward_batch(void *instance, void *prepared, pb_nn_tape *t, pb_nn_tensor *x,
                             int batch, const uint64_t *seeds, pb_nn_tensor **out, pb_error *err)
{
    (void)seeds; /* nothing random after init_params */
    gnn *e = instance;
    const gnn_graph *gg = prepared;
    pb_nn_tensor *s = NULL;
    *out = NULL;
    if (gnn_transform(e, gg, t, x, batch, &s, err))
        return PB_ERR;
    if (e->mode == GNN_NONE) {
        *out = s;
        return PB_OK;
    }
    if (e->mode == GNN_RADIAL) {
        *out = gnn_radial(t, e, gg, batch, s);
        return pb_nn_tape_status(t, err);
    }
    messenger_dir dir[2];
    gnn_dir(t, e, gg, 0, &dir[0]);
    gnn_dir(t, e, gg, 1, &dir[1]);
    if (pb_nn_tape_status(t, err))
        return PB_ERR;
    return messenger_sequential(t, gg->n, batch, s, &dir[0], &dir[1], out, err);
}

/* forward_batch of k runs; the sequential message passer interleaves their chains, other
 * modes (or runs of mixed modes or graphs) run forward_batch run by run. */
static int gnn_forward_multi(int k, void *const *instances, void *const *prepared,
                             pb_nn_tape *const *tapes, pb_nn_tensor *const *x, int batch,
                             const uint64_t *const *seeds, pb_nn_tensor **out, pb_error *err)
{
    int n = ((const gnn_graph *)prepared[0])->n, together = k > 1 && k <= MESSENGER_MAX_RUNS;
    for (int r = 0; r < k && together; r++)
        together = ((const gnn *)instances[r])->mode == GNN_SEQUENTIAL &&
                   ((const gnn_graph *)prepared[r])->n == n;
    if (!together) {
        for (int r = 0; r < k; r++)
            if (gnn_forward_batch(instances[r], prepared[r], tapes[r], x[r], batch,
                                  seeds ? seeds[r] : NULL, &out[r], err))
                return PB_ERR;
        return PB_OK;
    }
    pb_nn_tensor *s[MESSENGER_MAX_RUNS];
    messenger_dir dirs[2 * MESSENGER_MAX_RUNS];
    for (int r = 0; r < k; r++) {
        const gnn *e = instances[r];
        const gnn_graph *gg = prepared[r];
        out[r] = NULL;
        if (gnn_transform(e, gg, tapes[r], x[r], batch, &s[r], err))
            return PB_ERR;
        gnn_dir(tapes[r], e, gg, 0, &dirs[2 * r]);
        gnn_dir(tapes[r], e, gg, 1, &dirs[2 * r + 1]);
        if (pb_nn_tape_status(tapes[r], err))
            return PB_ERR;
    }
    return messenger_sequential_multi(k, tapes, n, batch, s, dirs, out, err);
}

static int gnn_forward(void *instance, pb_nn_tape *t, const pb_graph *g, pb_nn_tensor *x,
                       pb_nn_tensor **out, pb_error *err)
{
    gnn *e = instance;
    return embed_cache_forward(&e->cache, &gnn_ops, e, t, g, x, out, err);
}

static const pb_embedding_ops gnn_ops = {
    .struct_size = sizeof(pb_embedding_ops),
    .create = gnn_create,
    .destroy = gnn_destroy,
    .init_params = gnn_init_params,
    .forward = gnn_forward,
    .feature_dim = gnn_feature_dim,
    .features = gnn_features,
    .prepare = gnn_prepare,
    .release = gnn_release,
    .forward_batch = gnn_forward_batch,
    .forward_multi = gnn_forward_multi,
    .eval_reads = gnn_eval_reads,
};

PB_PLUGIN_WITH_OPTIONS(
    PB_KIND_EMBEDDING, "placeto-gnn", "1.0",
    "Placeto's graph embedding: node features and the sequential or radial message passer",
    gnn_options, gnn_opts, &gnn_ops);
