/* gen_model.h — the model zoo: named models of the TAG, GDP and HeterPS papers, one generator
 * each, with the op counts and parameter sizes the papers report beside them. */
#ifndef PB_GEN_MODEL_H
#define PB_GEN_MODEL_H

#include "gen.h"

/*
 * A zoo model is one graph (not a family of 32): `placebench dataset gen MODEL [--batch B]
 * [--layers L] [--seed S]`.  The TensorFlow models are training graphs built with the machinery
 * of gen.h (forward, gradients, optimizer); the HeterPS models are layer-level chains.  Which ops
 * a paper's count includes differs between the papers (see each generator's header comment):
 * TAG counts the whole GraphDef it profiles, initializers included (GEN_TF_INIT); GDP counts the
 * training step's ops (specs/gdp.md §10.1).
 */

/* Most options a model has (gen_model.opts). */
#define GEN_MODEL_MAX_OPTS 6

/*
 * A model option (`dataset gen MODEL --opt KEY=VALUE`): an integer knob where the model's spec
 * leaves a reasoned choice ([I]) or names a calibration knob; `def` is the spec's default.
 */
typedef struct gen_model_opt {
    const char *key;
    int def, min, max;
    const char *help; /* what it changes and where the default comes from */
} gen_model_opt;

/* What a generator is asked for; 0 means the model's default. */
typedef struct gen_model_args {
    int batch;
    int layers;
    uint64_t seed;
    int cost_model; /* devcost_model of the op-level models' kernels (0: calibrated) */
    /* Option values by the index of the model's opts; a bit of opt_set says the value was
     * given (gen_model_set_opt), else gen_model_generate fills in the default. */
    int opt[GEN_MODEL_MAX_OPTS];
    unsigned opt_set;
    /* Optional out: the graph's role and split annotations (gen.h, gen_annotate), caller-owned;
     * left zeroed for a model without them (the layer chains). */
    gen_annotations *annot;
} gen_model_args;

/* One figure a paper reports for a model at `layers` (0 when the model has no layer knob). */
typedef struct gen_model_paper {
    int layers;
    double ops;         /* op count of the paper's graph */
    double param_bytes; /* trainable parameter bytes; 0 when the paper does not give them */
    const char *where;  /* table or section */
} gen_model_paper;

#define GEN_MODEL_MAX_PAPER 6

/* WaveNet accepts 1 <= stacks <= this. */
#define GEN_MODEL_MAX_WAVENET_STACKS 16

/* CTRDNN-L accepts 7 <= L <= this. */
#define GEN_CTRDNN_MAX_LAYERS 64

typedef struct gen_model {
    const char *name;
    const char *paper; /* "TAG", "GDP", "HeterPS" */
    const char *description;
    int batch;                  /* default batch */
    int layers;                 /* default layers; 0: no --layers */
    int min_layers, max_layers; /* accepted --layers */
    const char *layers_meaning; /* what --layers counts, for help and list */
    gen_model_paper figures[GEN_MODEL_MAX_PAPER];
    int n_figures;
    /* Variables whose name contains this are left out of the parameter size the paper reports
     * (NULL: none). */
    const char *paper_param_exclude;
    /* Builds the graph; `a` has the defaults filled in.  *out is caller-owned (graph_free). */
    int (*generate)(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err);
    /* What follows the layer count in the graph's name ("<model>-<layers><suffix>"); NULL: "l". */
    const char *suffix;
    /* Options (n_opts of them); a graph made with a value other than the default is named
     * "<name>+<key>=<value>..." for each such option, in this order. */
    gen_model_opt opts[GEN_MODEL_MAX_OPTS];
    int n_opts;
} gen_model;

/* Option indices (gen_model_args.opt) of the models that have options. */
enum { GEN_INC_OPT_FUSED_BN = 0, GEN_INC_OPT_EMA = 1 };  /* inceptionv3-gdp */
enum { GEN_AMOEBA_OPT_EMA = 0 };                         /* amoebanet */
enum { GEN_RNN_OPT_STEPS = 0, GEN_RNNLM_OPT_VOCAB = 1 }; /* rnnlm and gnmt; vocab: rnnlm */
/* transformer-xl */
enum {
    GEN_TXL_OPT_SEGMENTS = 0,
    GEN_TXL_OPT_MEM_LEN = 1,
    GEN_TXL_OPT_MASK = 2,
    GEN_TXL_OPT_DROPOUT = 3,
    GEN_TXL_OPT_VOCAB = 4
};
enum { GEN_WAVENET_OPT_EXTRA = 0 }; /* wavenet */
enum { GEN_2EMB_OPT_IDS = 0 };      /* 2emb */
enum { GEN_CTRDNN_OPT_DNN = 0 };    /* ctrdnn */

/* The models in a fixed order; NULL past the end or for an unknown name. */
int gen_model_count(void);
const gen_model *gen_model_at(int i);
const gen_model *gen_model_find(const char *name);
/* Names joined by ", " into buf (truncated to size). */
void gen_model_names(char *buf, size_t size);
/* The paper's figure for `layers`, or NULL when the paper gives none for that depth. */
const gen_model_paper *gen_model_figure(const gen_model *m, int layers);

/* Sets option "KEY=VALUE" of model m in *a; an unknown key, a value that is not an integer or
 * is out of range is an error naming the model and its options. */
int gen_model_set_opt(const gen_model *m, gen_model_args *a, const char *key_value, pb_error *err);
/* "key=default (min..max)" of every option of m joined by ", " into buf ("" when none). */
void gen_model_opt_list(const gen_model *m, char *buf, size_t size);

/* Fills the defaults into a copy of *a (batch, layers when 0) and checks the ranges; the graph is
 * named "<model>", or "<model>-<layers><suffix>" for a model with layers.  *out is caller-owned. */
int gen_model_generate(const gen_model *m, const gen_model_args *a, pb_graph **out, pb_error *err);

/* ------------------------------------------------------------------ TF-slim layers (gen_slim.c) */

enum {
    GEN_SLIM_VALID = 1,       /* VALID padding (default SAME) */
    GEN_SLIM_LINEAR = 2,      /* no ReLU */
    GEN_SLIM_NO_BIAS = 4,     /* no bias */
    GEN_SLIM_BN = 8,          /* slim.batch_norm instead of the bias */
    GEN_SLIM_BN_UNFUSED = 16, /* slim.batch_norm(fused=False) instead of the bias */
    GEN_SLIM_L2 = 32,         /* slim.l2_regularizer on the weights (gen_add_loss) */
    GEN_SLIM_SCOPE_ONLY = 64  /* the conv's scope is a name scope, not a group of its own */
};
/* slim.conv2d in scope `scope` (a group unless GEN_SLIM_SCOPE_ONLY): Conv2D reading "weights", then
 * BiasAdd ("biases") or batch norm, then ReLU, as `flags` say. */
gen_tensor gen_slim_conv(gen_ctx *g, const char *scope, gen_tensor x, int kh, int kw, int cout,
                         int stride, int flags);
/* slim.batch_norm (center, no scale, training) with its moving-average updates; relu != 0
 * applies tf.nn.relu after it. */
gen_tensor gen_slim_batch_norm(gen_ctx *g, gen_tensor x, int relu);
/* The same in scope `scope`, with a trainable gamma when scale != 0 (AmoebaNet's batch_norm). */
gen_tensor gen_slim_batch_norm_named(gen_ctx *g, const char *scope, gen_tensor x, int scale);
/* The same in scope `scope`, with a trainable gamma when scale != 0 (AmoebaNet's batch_norm). */
gen_tensor gen_slim_batch_norm_named(gen_ctx *g, const char *scope, gen_tensor x, int scale);
/* slim.batch_norm(fused=False) (center, no scale, training): moments over all axes but the
 * last, tf.nn.batch_normalization, and the moving-average updates. */
gen_tensor gen_slim_batch_norm_unfused(gen_ctx *g, gen_tensor x);
/* slim.l2_regularizer(scale)(w): scale * L2Loss(w) in "<w>/Regularizer/l2_regularizer", added to
 * the regularization losses. */
void gen_slim_l2_regularizer(gen_ctx *g, gen_tensor w);
/* tf.nn.dropout (TF 1.x ops) on x. */
gen_tensor gen_slim_dropout(gen_ctx *g, gen_tensor x);
/* An element-wise op (Rsqrt, Exp, ...) whose gradient is one "<Type>Grad" op. */
gen_tensor gen_slim_unary(gen_ctx *g, const char *type, gen_tensor x);
/* tf.contrib.layers.layer_norm over the last axis (scope "LayerNorm": beta, gamma, moments,
 * rsqrt, scale and shift). */
gen_tensor gen_slim_layer_norm(gen_ctx *g, gen_tensor x);
/* The same with given beta and gamma reads (a layer norm whose variables are shared). */
gen_tensor gen_slim_layer_norm_with(gen_ctx *g, gen_tensor x, gen_tensor beta, gen_tensor gamma);
/* reduce_sum(sigmoid_cross_entropy_with_logits(labels, logits)): a scalar loss. */
gen_tensor gen_slim_sigmoid_loss(gen_ctx *g, gen_tensor logits, gen_tensor labels);

/* ------------------------------------------------------------------ recurrent layers (gen_rnn.c)
 */

typedef struct gen_lstm_weights {
    gen_tensor kernel, bias;
} gen_lstm_weights;

/* One group `scope` holding an LSTM layer's kernel [in + hidden, 4 hidden] and bias. */
gen_lstm_weights gen_lstm_weights_new(gen_ctx *g, const char *scope, int in, int hidden);
/* One step of TF BasicLSTMCell (forget bias 1; groups "gates" and "state"): concat [x, h] and its
 * axis, MatMul, BiasAdd, Split and its axis, the gate activations, c' = c sig(f + 1) + sig(i)
 * tanh(j), h' = tanh(c') sig(o); updates *c and *h. */
void gen_lstm_cell(gen_ctx *g, gen_tensor x, gen_tensor *c, gen_tensor *h,
                   const gen_lstm_weights *w);
/* tf.nn.dropout (TF 1.x before 1.14): x / keep * floor(keep + uniform), in group `scope`. */
gen_tensor gen_rnn_dropout(gen_ctx *g, gen_tensor x, const char *scope);
/* One step's [rows, width] block of a step-major tensor (StridedSlice). */
gen_tensor gen_rnn_step_slice(gen_ctx *g, gen_tensor all, long long rows, long long width);

/* Ends a TensorFlow-style model: annotates it (colocation classes in the graph, roles and split
 * classes into *a->annot when asked) and builds it (gen_finish). */
int gen_model_finish(gen_ctx *g, const gen_model_args *a, const char *name, pb_graph **out,
                     pb_error *err);

/* The generators (one file per model family). */
int gen_vgg19_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err);
int gen_resnet101_generate(const gen_model_args *a, const char *name, pb_graph **out,
                           pb_error *err);
int gen_inceptionv3_generate(const gen_model_args *a, const char *name, pb_graph **out,
                             pb_error *err);
int gen_inceptionv3_gdp_generate(const gen_model_args *a, const char *name, pb_graph **out,
                                 pb_error *err);
int gen_transformer_generate(const gen_model_args *a, const char *name, pb_graph **out,
                             pb_error *err);
int gen_bert_small_generate(const gen_model_args *a, const char *name, pb_graph **out,
                            pb_error *err);
int gen_bert_large_generate(const gen_model_args *a, const char *name, pb_graph **out,
                            pb_error *err);
int gen_rnnlm_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err);
int gen_gnmt_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err);
int gen_amoebanet_generate(const gen_model_args *a, const char *name, pb_graph **out,
                           pb_error *err);
int gen_transformer_xl_generate(const gen_model_args *a, const char *name, pb_graph **out,
                                pb_error *err);
int gen_wavenet_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err);
int gen_matchnet_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err);
int gen_ctrdnn_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err);
int gen_2emb_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err);
int gen_nce_generate(const gen_model_args *a, const char *name, pb_graph **out, pb_error *err);

#endif
