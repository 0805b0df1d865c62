/* gdp_net.h — the GDP placer's graph preparation (placement units, sequence order, node
 * features, sampled neighbourhoods) and its network: GraphSAGE x4, the superposition context,
 * Transformer-XL x2 over segments with a cached memory, the per-node device softmax
 * (specs/gdp.md §1-§5). */
#ifndef GDP_NET_H
#define GDP_NET_H

#include "placebench.h"

#define GDP_D_MAX 8         /* output logits; absent devices are left out of the softmax */
#define GDP_MAX_GS_LAYERS 8 /* gs_layers range */
#define GDP_MAX_TRF_LAYERS 8
#define GDP_SHAPE_SLOTS 25
#define GDP_ADJ_SLOTS 20

enum { GDP_DIR_BOTH = 0, GDP_DIR_IN = 1, GDP_DIR_OUT = 2 };
enum { GDP_COLOC_CONTRACT = 0, GDP_COLOC_LEADER = 1, GDP_COLOC_PENALIZE = 2 };
enum { GDP_SP_ALL = 0, GDP_SP_FF_OUT = 1 };
enum { GDP_SCOPE_NODE = 0, GDP_SCOPE_GRAPH = 1 };
enum { GDP_FORM_RAW = 0, GDP_FORM_FILM1 = 1 };
enum { GDP_NET_TRANSFORMER = 0, GDP_NET_MLP = 1 };

/* The network's shape and switches (the plugin's options, resolved). */
typedef struct gdp_net_config {
    int gs_layers, gs_dim, gs_knn, gs_dir, gs_pool_act, gs_l2norm, gs_resample;
    int adj_ids, extra_features;
    int placer_net; /* GDP_NET_*: Transformer-XL layers or the no-attention MLP ablation */
    int trf_layers, d_model, n_head, d_head, d_inner, seg_len, mem_len, causal;
    float ln_eps;
    int superposition, sp_where, sp_scope, sp_form;
    int colocation; /* GDP_COLOC_* */
    /* The output layer's Glorot values are multiplied by this (ppo2 initialises its policy head
     * at scale 0.01: a uniform first policy); 1 = plain Glorot.  Appended. */
    float out_init_scale;
} gdp_net_config;

/* Feature width for a configuration: the global op-type vocabulary (slot 0 = unknown), 25 shape
 * slots, 20 adjacency slots, 2 optional size features. */
int gdp_feature_dim(const gdp_net_config *cfg);
/* Index of an op type in the global vocabulary, 0 when unknown. */
int gdp_type_index(const char *type);

/*
 * One graph as the network sees it.  Units are what is placed: the nodes of the placer's graph,
 * or (colocation = contract) one unit per colocation class, featured by its first member in the
 * sequence order.  seq[i] is the unit at sequence position i (grappler's FIFO topological order
 * of first members); unit_of[v] maps the placer graph's node v to its unit.  follower[v] (leader
 * mode) marks nodes whose device is overridden by their class leader and left out of the loss.
 */
typedef struct gdp_graph {
    const pb_graph *g;
    int n_nodes;   /* nodes of the placer's graph */
    int n_units;   /* units placed (the sequence length) */
    int *unit_of;  /* [n_nodes] unit (sequence position) of each node */
    int *leader;   /* [n_nodes] node whose device v takes (v itself unless a follower) */
    float *weight; /* [n_units] loss weight of each unit (0 for followers), sum = n_loss */
    int n_loss;    /* units in the loss */
    float *x;      /* [n_units * feature_dim] input features, sequence order */
    int fdim;
    int *nbr_all_start, *nbr_all; /* full neighbourhoods (unit positions) */
    int *nbr_start, *nbr;         /* the sampled ones, <= knn each */
    pb_nn_csr csr;
} gdp_graph;

/* Prepares g (borrowed until gdp_graph_free) for cfg; the neighbour subsets are drawn from rng. */
int gdp_graph_prepare(gdp_graph *gg, const pb_graph *g, const gdp_net_config *cfg, pb_rng *rng,
                      pb_error *err);
/* Redraws the neighbour subsets of nodes with more than knn neighbours (gs_resample). */
void gdp_graph_resample(gdp_graph *gg, int knn, pb_rng *rng);
/* Expands a unit placement (sequence order) to the placer graph's nodes. */
void gdp_graph_expand(const gdp_graph *gg, const unsigned char *unit_dev, int *device);
/* 1 when the placement splits a colocation class (penalize mode); 0 otherwise. */
int gdp_graph_splits_class(const gdp_graph *gg, const int *device);
void gdp_graph_free(gdp_graph *gg);

/* Parameter ids of the network. */
typedef struct gdp_net {
    gdp_net_config cfg;
    pb_nn_sage_pool sage[GDP_MAX_GS_LAYERS];
    pb_nn_trf cond; /* the conditioning layer c (superposition on) */
    pb_nn_trf trf[GDP_MAX_TRF_LAYERS];
    pb_nn_mlp mlp;  /* placer_net = mlp */
    int film_gamma; /* sp_form film1 */
    int w_out, b_out;
} gdp_net;

/* Registers every tensor ("gdp/..." names) in p for features of width fdim; Glorot from rng. */
int gdp_net_init(gdp_net *net, const gdp_net_config *cfg, pb_nn_params *p, int fdim, pb_rng *rng,
                 pb_error *err);
/* Records the forward pass of gg on tape t; returns the log-probabilities (n_units x n_devices,
 * 1 <= n_devices <= GDP_D_MAX, the caller checks) or NULL with the tape's error. */
pb_nn_tensor *gdp_net_forward(pb_nn_tape *t, pb_nn_params *p, const gdp_net *net,
                              const gdp_graph *gg, int n_devices);

#endif
