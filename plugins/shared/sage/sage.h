/* sage.h — GraphSAGE as the embedding paper's reference builds it (specs/placeto.md §3.2-3.4):
 * successor samples drawn once per graph, the level recursion as batched autodiff ops, and the
 * option table and seeds shared by the graphsage and pgnn plugins. */
#ifndef EMBEDDING_SAGE_H
#define EMBEDDING_SAGE_H

#include "placebench.h"

#define SAGE_MAX_HOPS 6
/* Largest sample_seed option value: the integers a double (and a Lua number) holds exactly. */
#define SAGE_SEED_MAX 9007199254740991.0

/* The options both plugins share, first in their tables (sage_config_read). */
typedef struct sage_options {
    long long hops;
    double sample_ratio;
    double dropout;
    int aggregation;
    int single_layer;
    int feature5;
    long long sample_seed;
} sage_options;

/* clang-format off */
/* The shared entries of an option table whose options struct holds a sage_options called
 * `member_`: SAGE_OPTION_DEFS(graphsage_opts, sage). */
#define SAGE_OPTION_DEFS(type_, member_)                                                           \
    {.name = "hops",                                                                               \
     .type = PB_OPT_INT,                                                                           \
     .default_value = "3",                                                                         \
     .min = 0,                                                                                     \
     .max = SAGE_MAX_HOPS,                                                                         \
     .choices = NULL,                                                                              \
     .help = "H: levels 0..H of the recursion; a node's block doubles at every level, to 2^(H+1) rows (reference --sage-hops; the papers' configs use 3)", \
     .offset = offsetof(type_, member_.hops)},                                                     \
    {.name = "sample_ratio",                                                                       \
     .type = PB_OPT_DOUBLE,                                                                        \
     .default_value = "0.8",                                                                       \
     .min = 0,                                                                                     \
     .max = 1,                                                                                     \
     .choices = NULL,                                                                              \
     .help = "share of a node's successors sampled once per graph: int(count * ratio), so a node with one successor gets none below ratio 1 (reference --sage-sample-ratio)", \
     .offset = offsetof(type_, member_.sample_ratio)},                                             \
    {.name = "dropout",                                                                            \
     .type = PB_OPT_DOUBLE,                                                                        \
     .default_value = "0.7",                                                                       \
     .min = 0,                                                                                     \
     .max = 0.99,                                                                                  \
     .choices = NULL,                                                                              \
     .help = "dropout rate after every level, in training and greedy episodes alike as in the reference (--sage-dropout-rate); 0 turns it off", \
     .offset = offsetof(type_, member_.dropout)},                                                  \
    {.name = "aggregation",                                                                        \
     .type = PB_OPT_ENUM,                                                                          \
     .default_value = "max",                                                                       \
     .min = 1,                                                                                     \
     .max = 0,                                                                                     \
     .choices = "max|mean|sum|min",                                                                \
     .help = "elementwise aggregation of the sampled successors' blocks (reference --sage-aggregation)", \
     .offset = offsetof(type_, member_.aggregation)},                                              \
    {.name = "single_layer",                                                                       \
     .type = PB_OPT_BOOL,                                                                          \
     .default_value = "false",                                                                     \
     .min = 1,                                                                                     \
     .max = 0,                                                                                     \
     .choices = NULL,                                                                              \
     .help = "every network a single ReLU(xW+b) layer d->d (reference use_single_layer_perceptron)", \
     .offset = offsetof(type_, member_.single_layer)},                                             \
    {.name = "feature5",                                                                           \
     .type = PB_OPT_ENUM,                                                                          \
     .default_value = "start-time",                                                                \
     .min = 1,                                                                                     \
     .max = 0,                                                                                     \
     .choices = "start-time|peak-mem",                                                             \
     .help = "5th node feature: the simulated start time ([A] intent) or the peak memory of the node's device (what the [M/B] forks that introduced GraphSAGE and P-GNN compute)", \
     .offset = offsetof(type_, member_.feature5)},                                                 \
    {.name = "sample_seed",                                                                        \
     .type = PB_OPT_INT,                                                                           \
     .default_value = "0",                                                                         \
     .min = 0,                                                                                     \
     .max = SAGE_SEED_MAX,                                                                         \
     .choices = NULL,                                                                              \
     .help = "seed of the draws fixed for a run (successor samples, anchor sets); 0 derives it from the run seed; the seed used is logged when a graph is prepared, give it here to reuse them", \
     .offset = offsetof(type_, member_.sample_seed)}
/* clang-format on */

typedef struct sage_config {
    int hops;             /* H */
    double sample_ratio;  /* share of the successors sampled */
    float dropout;        /* rate after every level */
    int aggregation;      /* PB_NN_AGG_* over the sampled successors */
    int single_layer;     /* every network ReLU(xW+b), d -> d */
    int feature5;         /* PB_FEATURE5_* */
    uint64_t sample_seed; /* 0: derive from the create seed */
} sage_config;

/* Reads the shared options into cfg. */
void sage_config_read(const sage_options *o, sage_config *cfg);

/* The seed of the run-fixed draws: cfg->sample_seed when set, else derived from the create
 * seed and kept to 53 bits (never 0), so that the logged value can be given back as
 * sample_seed. */
uint64_t sage_structure_seed(const sage_config *cfg, uint64_t create_seed);

/* The trainable networks (specs §3.2); the tensors live in a pb_nn_params. */
typedef struct sage_model {
    sage_config cfg;
    int dim;                            /* d: feature width, also the width of every output */
    pb_nn_mlp self;                     /* T_s = FNN(d, [d], d) */
    pb_nn_mlp level[SAGE_MAX_HOPS + 1]; /* F_i = FNN(d, [d (i+1)], d) */
} sage_model;

/* FNN(d, [hidden], d) named `name`, or with single_layer ReLU(xW+b) d -> d. */
int sage_mlp_init(pb_nn_mlp *m, pb_nn_params *p, const char *name, int d, int hidden,
                  int single_layer, pb_rng *rng, pb_error *err);

/* Registers T_s and F_0..F_H as "<prefix>/self" and "<prefix>/level<i>" for feature width d,
 * Glorot weights drawn from rng in that order. */
int sage_model_init(sage_model *m, const sage_config *cfg, pb_nn_params *p, const char *prefix,
                    int d, pb_rng *rng, pb_error *err);

/* The sampled successors of every node: sample[start[v] .. start[v+1]); has[v] = 1 when v has
 * at least one.  pos[v] = sum over u < v of (1 + has[u]): at level i node v's F_i input starts
 * at row 2^i pos[v] of its block (2 2^i rows with samples, 2^i without), pos[n] 2^i rows in
 * all. */
typedef struct sage_samples {
    int n;
    int *start;         /* [n+1] */
    int *sample;        /* [start[n]] */
    unsigned char *has; /* [n] */
    int *pos;           /* [n+1] */
} sage_samples;

/* The number of nodes with at least one sample. */
int sage_samples_nodes(const sage_samples *s);

/* int(count * ratio) as Python computes it (a double product, floored). */
int sage_sample_count(int count, double ratio);

/* Draws, for every node in `order` (the reference's pg.nodes(): networkx-2.4 topological order),
 * sage_sample_count(out-degree, ratio) distinct successors uniformly from rng, as
 * random.sample(succ, k) does (partial Fisher-Yates over the successor list).  Caller frees with
 * sage_samples_free (also after an error). */
int sage_samples_draw(sage_samples *s, const pb_graph *g, const int *order, double ratio,
                      pb_rng *rng, pb_error *err);
void sage_samples_free(sage_samples *s);

/*
 * The fused input of F_i at level i (r = 2^i rows per node), for `batch` blocks of s->n nodes:
 * a (the aggregate of the sampled successors) and x (the node itself) are (batch*n*r) x d.  For
 * a node with samples its 2r x d input is [a_v^T | x_v^T] (d x 2r) read row-major as 2r x d,
 * which interleaves aggregate and self entries as the reference's reshape does; a node without
 * samples gives its r rows of x alone (the reference applies F_i to them and pads the result).
 * Output (batch * r * s->pos[n]) x d, node v of block b at row r (b pos[n] + pos[v]); the
 * gradient is the inverse permutation.  NULL on error (recorded by the next op); s is borrowed
 * until the tape is reset.
 */
pb_nn_tensor *sage_combine(pb_nn_tape *t, pb_nn_tensor *a, pb_nn_tensor *x, int r,
                           const sage_samples *s, int batch);

/*
 * sage_combine(aggregate(x), x) in one op, with the rows known to be zero left out: a's block of
 * node v is the elementwise `kind` (PB_NN_AGG_*) over v's sampled successors u (in sample order)
 * of their r x d blocks of x (the same batch block), mean dividing by the sample count; max and
 * min pass the gradient to the first winner.  x is (batch*n*r) x d.  A node with samples gives
 * its 2r rows as sage_combine does; one without gives rows skip..r of its x block only (its first
 * `skip` rows are the previous level's zero padding, read as zeros, and get no gradient).  Node v
 * of batch block b starts at row b C + cpos[v], cpos[v] = sum over u < v of (2r with samples,
 * r - skip without), C = cpos[n]; when skip > 0 one zero row follows the batch*C rows (F_i of it
 * stands for F_i of every left-out row).  skip = 0 gives exactly sage_combine's layout.  NULL on
 * error (recorded by the next op); s is borrowed until the tape is reset.
 */
pb_nn_tensor *sage_gather_combine(pb_nn_tape *t, pb_nn_tensor *x, int r, int skip,
                                  const sage_samples *s, int batch, int kind);

/*
 * The level's output from F_i's output y, laid out as sage_gather_combine's output with the same
 * r and skip: node v's 2r x d block is its 2r rows of y (with samples) or r zero rows followed by
 * `skip` copies of y's last row (F_i of a zero row) and its r - skip rows of y (without); every
 * entry is multiplied by its dropout factor: 0 with probability `rate`, else 1/(1-rate) (TF's
 * inverted dropout; rate 0: 1).  Block b's factors are drawn from rng[b], one 32-bit half of a
 * pb_rng_next per entry of the uncompacted F_i output (2r rows per node with samples, r without,
 * in node order, row-major), so skip does not change the draws; the padding draws none.  Output
 * (batch*n*2r) x d.  NULL on error (recorded by the next op).
 */
pb_nn_tensor *sage_expand(pb_nn_tape *t, pb_nn_tensor *y, int r, int skip, const sage_samples *s,
                          int batch, float rate, pb_rng *rng);

/*
 * Records the recursion of specs §3.4 on x ((batch*n) x d, block b the features of the graph of
 * s for step b): X_0 = T_s(x); for i = 0..H: aggregate the samples' level-i blocks, combine,
 * F_i, then pad and dropout in sage_expand (block b's draws from a generator seeded with
 * seeds[b], continuing across levels); finally each node's 2^(H+1) x d block is L2-normalised as a
 * whole (eps 1e-12). *out receives the blocks flattened: (batch*n) x (2^(H+1) d), node v's block
 * row-major in row v.  s and seeds are borrowed until the tape is reset.
 */
int sage_forward(pb_nn_tape *t, pb_nn_params *p, const sage_model *m, const sage_samples *s,
                 pb_nn_tensor *x, int batch, const uint64_t *seeds, pb_nn_tensor **out,
                 pb_error *err);

/* Weighted sum of each node's block rows: z ((batch*n) x (R d)) -> (batch*n) x d, row j of
 * every block weighted by w[j] (R floats, borrowed until the tape is reset). */
pb_nn_tensor *sage_pool_rows(pb_nn_tape *t, pb_nn_tensor *z, int d, const float *w);

/* Logs `msg` through host at INFO level when host has a log function. */
void sage_log(const pb_host *host, const char *msg);

#endif
