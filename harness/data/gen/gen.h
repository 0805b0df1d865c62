/* gen.h — dataset generators (cifar10, ptb, nmt) and the op-emission machinery they share. */
#ifndef PB_GEN_H
#define PB_GEN_H

#include "placebench.h"
#include "core/strmap.h"

/*
 * The families.  Each generator builds a TensorFlow-like TRAINING graph (forward ops, gradient ops
 * mirroring them in reverse dependency order, optimizer update ops) from a model structure, with
 * hierarchical op names, costs from the roofline model below and a grouping; see gen_cifar10.c,
 * gen_ptb.c and gen_nmt.c for what each family is built from.
 *
 * The backward pass follows tf.gradients: gradient ops named "gradients/<op>_grad/<Type>", the
 * gradients an op sends to two or more inputs gated by a "tuple" (GATE_OP, the optimizers'
 * default), several contributions to one tensor summed by an AddN (or, for a variable inside an
 * unrolled tf.while_loop, accumulated step by step, see gen_ctx.loop_accumulate).  Only tensors
 * that depend on a trainable variable get gradients.  The updates are the step's sinks: the
 * NoOp that tf.group adds on top of them only collects control edges and is not emitted.
 *
 * Grouping (the same rule in every family, applied through name scopes):
 *   - every forward op belongs to the group of the innermost enclosing scope opened with
 *     GEN_GROUP (a layer, an RNN cell step, a branch of a conv cell);
 *   - a variable and its read op belong to the group of the scope that creates them;
 *   - the gradient ops of a forward op, and the AddN that sums the gradient of one of its
 *     outputs, belong to "gradients/<group of the forward op>";
 *   - the update ops of a variable (slots and Apply*) belong to "gradients/<group of the variable>"
 *     when gradients go straight to the optimizer, or to "<Optimizer>/update_<group>" when they
 *     pass through gradient clipping first (clipping is one "clip_by_global_norm" group).
 * A forward op and its gradient ops are not colocated: the forward op feeds later forward ops
 * whose gradients flow back into its gradient ops, so one group would be a cycle.  Forward groups
 * form a DAG when every GEN_GROUP scope is convex (nothing leaves it and comes back), gradient
 * groups mirror them, and edges only go forward -> gradients -> clipping -> updates, so the grouped
 * graph is acyclic by construction; graph_build checks it anyway.
 */

/* Paper's Table I (traversal-order paper) for a family: averages over its 32 grouped graphs. */
typedef struct gen_paper_stats {
    double nodes, edges, longest_path;
    int longest_min, longest_max;
} gen_paper_stats;

/*
 * Options of a family's graphs (README "Reference measurement semantics and colocation").  Zero
 * in every field is the behaviour before these options existed (the zoo's models keep it);
 * gen_family.defaults holds each family's documented defaults.
 *   kernelless_free  ops without a GPU kernel (gen_kernelless) cost 0 µs, so the Placeto
 *                    simulator adds no delta1 after them: the reference's cost_d sums the
 *                    kernel times of TensorFlow's stream:all timeline and a missing op costs 0
 *                    (specs/placeto.md 1.1).  0: host ops cost GEN_HOST_OP_US and the
 *                    kernel-less types in gen_kernelless are costed like kernels.
 *   first_port_only  only output port 0 has a size, other ports move 0 bytes (the reference reads
 *                    output[0]'s requested_bytes from step_stats, 1.1).  0: every port its size.
 *   colocate         each optimizer update op, its slots and an Assign to a variable run on the
 *                    variable's device (TensorFlow's loc:@ colocation; Adam's beta powers with
 *                    the first variable by name), through pb_graph.placed_with.  A variable's
 *                    read is in the variable's group either way.
 *   batch, width     batch size and cifar10 filters C / ptb and nmt hidden size H; 0: default.
 *   layers           cifar10 num_layers of every graph (0: spread over 3-6), nmt LSTM layers.
 *   steps_min/max    ptb BPTT steps, nmt source and target steps, spread over the range across
 *                    graph indices (0: the family's ranges).
 *   cost_model       how kernels' FLOPs and bytes become time (devcost_model; README "Cost model
 *                    calibration"); 0 is the calibrated model.
 */
typedef struct gen_options {
    int kernelless_free, first_port_only, colocate;
    int batch, width, layers, steps_min, steps_max;
    int cost_model; /* devcost_model: DEVCOST_CALIBRATED (0, default) or DEVCOST_ROOFLINE */
} gen_options;

typedef struct gen_family {
    const char *name;
    const char *description;
    /* Builds graph `index` with RNG seed `seed` and options `opt`; the graph is named `name`
     * (copied). */
    int (*generate)(uint64_t seed, int index, const char *name, const gen_options *opt,
                    pb_graph **out, pb_error *err);
    int has_paper_stats;
    gen_paper_stats paper;
    gen_options defaults; /* the family's documented defaults (batch etc. filled in) */
} gen_family;

/* The families in a fixed order (gen_family_count of them); NULL past the end / for an unknown
 * name. */
int gen_family_count(void);
const gen_family *gen_family_at(int i);
const gen_family *gen_family_find(const char *name);
/* The families' names in that order joined by ", " into buf (truncated to size), for messages
 * that list them. */
void gen_family_names(char *buf, size_t size);

/*
 * Graph `index` of a family: seed = pb_seed_derive(family_seed, decimal index), name
 * "<family>/<NN>"; opt NULL = the default options.  *out is caller-owned (graph_free).
 */
int gen_graph(const gen_family *f, uint64_t family_seed, int index, pb_graph **out, pb_error *err);
/* The same with options (NULL: f->defaults). */
int gen_graph_with(const gen_family *f, uint64_t family_seed, int index, const gen_options *opt,
                   pb_graph **out, pb_error *err);
/* Is `type` an op TensorFlow runs without a GPU kernel launch (absent from the stream:all
 * timeline the reference's costs come from)? */
int gen_kernelless(const char *type);

/* A size parameter for graph `index`, spread evenly over [lo, hi] across consecutive indices (a
 * golden-ratio low-discrepancy sequence), so any 32 consecutive graphs cover the range. */
int gen_spread(int index, int lo, int hi);

/* ------------------------------------------------------------------ kernel costs */

/*
 * Kernel times come from the one cost model, model/devcost.h: the K80 die there, under the
 * generator's cost model (gen_options.cost_model, gen_ctx.cost_model; the calibrated per-class
 * model by default).  Bookkeeping ops without a kernel (VariableV2, the Identity that reads a
 * variable, NoOp, Const, IteratorGetNext) cost GEN_HOST_OP_US.
 */
#define GEN_HOST_OP_US 1.0

/*
 * What the generated graphs are made with.  GEN_DATASET_VERSION is written into every generated
 * graph file (node-link "graph" attributes, with the cost model's name): 1 for the plain K80
 * roofline, 2 since the calibrated per-class costs (README "Cost model calibration").
 */
#define GEN_DATASET_VERSION 2

/* Plain roofline time in µs of a K80 kernel doing `flops` and moving `bytes` (devcost's roofline
 * model; the calibrated model needs the op's class, see gen_add). */
double gen_roofline_us(double flops, double bytes);

/* ------------------------------------------------------------------ shapes and tensors */

#define GEN_MAX_PORTS 8

typedef struct gen_shape {
    int rank;
    long long d[4];
} gen_shape;

gen_shape gen_shape0(void);
gen_shape gen_shape1(long long a);
gen_shape gen_shape2(long long a, long long b);
gen_shape gen_shape3(long long a, long long b, long long c);
gen_shape gen_shape4(long long a, long long b, long long c, long long d);
double gen_shape_elems(gen_shape s);
/* 4 bytes per element (float32 values and int32 indices alike). */
double gen_shape_bytes(gen_shape s);

/* An output of an op: op index and port; op < 0 means "none". */
typedef struct gen_tensor {
    int op;
    int port;
} gen_tensor;

#define GEN_NONE ((gen_tensor){-1, 0})

/* How the backward pass differentiates an op (see gen_common.c, gen_grad_emit). */
typedef enum gen_grad {
    GEN_GRAD_NONE = 0, /* not differentiated (data, constants, loss bookkeeping) */
    GEN_GRAD_READ,     /* variable read: its gradient goes to the optimizer */
    GEN_GRAD_IDENTITY, /* gradient passes through to every input */
    GEN_GRAD_CONV2D,
    GEN_GRAD_DEPTHWISE,
    GEN_GRAD_MATMUL,
    GEN_GRAD_BIASADD,
    GEN_GRAD_RELU,
    GEN_GRAD_TANH,
    GEN_GRAD_SIGMOID,
    GEN_GRAD_BATCHNORM,
    GEN_GRAD_SUB,
    GEN_GRAD_MUL,
    GEN_GRAD_MAXPOOL,
    GEN_GRAD_AVGPOOL,
    GEN_GRAD_CONCAT,
    GEN_GRAD_SPLIT,
    GEN_GRAD_MEAN,
    GEN_GRAD_GATHER,
    GEN_GRAD_XENT,
    GEN_GRAD_SOFTMAX,
    GEN_GRAD_RESHAPE,
    GEN_GRAD_SLICE,     /* StridedSlice: StridedSliceGrad scatters dy into the input's shape */
    GEN_GRAD_TA_WRITE,  /* TensorArrayWriteV3(value, flow): value's gradient is read from the
                           gradient array, the flow's passes to the previous write */
    GEN_GRAD_TA_GATHER, /* TensorArrayGatherV3(flow): the gradient is scattered into an array */
    GEN_GRAD_BROADCAST, /* AddV2/Sub/Mul/RealDiv/SquaredDifference of broadcast shapes: Shape,
                           Shape_1, BroadcastGradientArgs, then per input the element-wise ops, Sum
                           and Reshape (TF's _AddGrad/_SubGrad/_MulGrad/_RealDivGrad) */
    GEN_GRAD_UNARY,     /* one "<Type>Grad" op of dy and the output (Rsqrt, Exp, Pow, ...) */
    GEN_GRAD_TRANSPOSE, /* InvertPermutation and a Transpose of dy */
    GEN_GRAD_L2LOSS     /* L2Loss: one Mul of the input by dy */
} gen_grad;

typedef enum gen_optimizer {
    GEN_OPT_SGD = 0, /* ApplyGradientDescent */
    GEN_OPT_MOMENTUM = 1,
    GEN_OPT_ADAM = 2,
    GEN_OPT_RMSPROP = 3 /* ApplyRMSProp with momentum: slots "RMSProp" (ms) and "RMSProp_1" */
} gen_optimizer;

enum { GEN_SCOPE = 0, GEN_GROUP = 1 };

/*
 * gen_ctx.tf_graphdef: with GEN_TF_UNIFORM or GEN_TF_NORMAL every variable gets its initializer
 * (weights: xavier random_uniform, 7 ops, or truncated_normal, 6 ops; other variables: zeros or
 * ones, a Const below 1000 elements, else shape + Const + Fill) and "Assign"; Adam's slots get
 * theirs and a "read"; Adam's hyper-parameter Consts, the "Adam" NoOp and the "init" NoOp are
 * emitted; conv gradients read their shapes through one ShapeN.  Initializers run once before
 * training, so they cost nothing per step and their outputs move no bytes.
 */
enum { GEN_TF_STEP = 0, GEN_TF_UNIFORM = 1, GEN_TF_NORMAL = 2 };

typedef struct gen_op gen_op; /* defined in gen_common.c */

/*
 * The state of one graph under construction.  Errors are sticky: the first failure is recorded
 * in `err`, later emission calls return GEN_NONE and do nothing, and gen_finish reports it; so
 * generators can emit a whole model and check once.
 */
typedef struct gen_ctx {
    pb_rng rng;
    int batch;
    gen_op *ops;
    int n_ops, cap_ops;
    char scope[512];
    int scope_len[32], group_len[32], depth;
    char group[512];
    strmap names; /* op name -> next "_N" suffix, for TF-style unique names */
    /* Non-zero: the model runs its recurrence in a tf.while_loop (dynamic_rnn) that is unrolled
     * here, so a variable's gradient is accumulated iteration by iteration instead of by one
     * AddN over all its uses. */
    int loop_accumulate;
    /* devcost_model of the kernels' costs (gen_options.cost_model), applied at gen_finish. */
    int cost_model;
    /* GEN_TF_*: emit what TensorFlow 1.x puts in a GraphDef beyond the training step (the zoo's
     * TAG models, whose op counts are of the whole GraphDef); 0 for the training step only. */
    int tf_graphdef;
    /* Flags (GEN_SLIM_*, gen_model.h) every slim conv of the model takes, as slim's arg_scope
     * gives them; a LINEAR conv (logits) takes only the regularizer. */
    int slim_scope;
    /* The family's options (zero for the zoo's models: the behaviour before they existed). */
    gen_options opt;
    /* The REGULARIZATION_LOSSES collection (gen_add_loss), summed by gen_total_loss. */
    gen_tensor *losses;
    int n_losses, cap_losses;
    int failed;
    pb_error err;
} gen_ctx;

/* Starts a graph with the given batch size, RNG seeded from `seed`. */
void gen_init(gen_ctx *g, uint64_t seed, int batch);
/* Frees everything (also after gen_finish). */
void gen_free(gen_ctx *g);

/* Opens a name scope (printf-style name); with GEN_GROUP the scope also starts a group. */
void gen_push(gen_ctx *g, int kind, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void gen_pop(gen_ctx *g);

/* Emits a kernel op in the current scope: name `base` (made unique), type, gradient rule, inputs,
 * output shapes and FLOPs; bytes moved are the inputs' plus the outputs' sizes.  Returns port 0. */
gen_tensor gen_op_emit(gen_ctx *g, const char *type, const char *base, int grad,
                       const gen_tensor *in, int n_in, const gen_shape *out, int n_out,
                       double flops);
/* Shape of a tensor. */
gen_shape gen_shape_of(const gen_ctx *g, gen_tensor t);
gen_tensor gen_port(gen_tensor t, int port);

/* Layer helpers (TensorFlow op types and names).  All read/write NHWC float32 tensors. */
/* A source op without a kernel (IteratorGetNext, a non-trainable VariableV2, ...). */
gen_tensor gen_source(gen_ctx *g, const char *type, const char *name, const gen_shape *out,
                      int n_out);
gen_tensor gen_variable(gen_ctx *g, const char *name, gen_shape shape);
gen_tensor gen_const(gen_ctx *g, const char *name, gen_shape shape);
gen_tensor gen_conv2d(gen_ctx *g, gen_tensor x, int kh, int kw, int cout, int stride);
gen_tensor gen_depthwise(gen_ctx *g, gen_tensor x, int k, int stride);
gen_tensor gen_batchnorm(gen_ctx *g, gen_tensor x);
gen_tensor gen_unary(gen_ctx *g, const char *type, gen_tensor x); /* Relu, Tanh, Sigmoid */
gen_tensor gen_binary(gen_ctx *g, const char *type, gen_tensor a, gen_tensor b); /* Add/Sub/Mul */
gen_tensor gen_add_n(gen_ctx *g, const gen_tensor *x, int n);
/* AddV2/Sub/Mul/RealDiv whose operands broadcast (b is the smaller, e.g. a bias or a scalar);
 * the output has a's shape. */
gen_tensor gen_broadcast(gen_ctx *g, const char *type, gen_tensor a, gen_tensor b);
/* The "init" NoOp over every Assign (GEN_TF_*); call after gen_train. */
void gen_tf_init_op(gen_ctx *g);
gen_tensor gen_pool(gen_ctx *g, const char *type, gen_tensor x, int k, int stride, int valid);
/* Concatenates along the last axis. */
gen_tensor gen_concat(gen_ctx *g, const gen_tensor *x, int n);
/* Splits x along its last axis into n equal parts: one op with n ports (n <= GEN_MAX_PORTS). */
gen_tensor gen_split(gen_ctx *g, gen_tensor x, int n);
/* [m,k]x[k,n] (MatMul) or [b,m,k]x[b,k,n] (BatchMatMulV2); transpose_b reads w as [.., n, k]. */
gen_tensor gen_matmul(gen_ctx *g, gen_tensor x, gen_tensor w, int transpose_b);
gen_tensor gen_bias_add(gen_ctx *g, gen_tensor x, gen_tensor b);
/* x [m, k] -> x W + b with a new variable "<scope>/w" [k, units] (and "b" when bias). */
gen_tensor gen_dense(gen_ctx *g, gen_tensor x, int units, int bias);
gen_tensor gen_mean_spatial(gen_ctx *g, gen_tensor x); /* [b,h,w,c] -> [b,c] */
gen_tensor gen_reshape(gen_ctx *g, gen_tensor x, gen_shape to);
gen_tensor gen_gather(gen_ctx *g, gen_tensor params, gen_tensor ids); /* embedding lookup */
gen_tensor gen_softmax(gen_ctx *g, gen_tensor x);
/* Mean softmax cross-entropy of logits [b, n] against labels: a scalar loss. */
gen_tensor gen_xent_loss(gen_ctx *g, gen_tensor logits, gen_tensor labels);

/* Adds a scalar to the regularization losses (tf.GraphKeys.REGULARIZATION_LOSSES). */
void gen_add_loss(gen_ctx *g, gen_tensor loss);
/* tf.losses.get_total_loss: loss plus every regularization loss, one AddN "total_loss" (loss
 * itself when there are none). */
gen_tensor gen_total_loss(gen_ctx *g, gen_tensor loss);
/*
 * tf.train.ExponentialMovingAverage(decay, num_updates = global_step).apply(model variables),
 * after gen_train: the decay min(decay, (1 + n) / (10 + n)) once, then per variable made by
 * gen_variable a shadow VariableV2 "<var>/ExponentialMovingAverage" (with its initializer and
 * read under GEN_TF_*) and its update sub, mul, AssignSub.  The shadows are parameter bytes.
 */
void gen_tf_ema(gen_ctx *g);

/* Differentiates `loss`, clips gradients by global norm when clip != 0, and emits the optimizer's
 * update ops and the train op (a NoOp named after the optimizer). */
void gen_train(gen_ctx *g, gen_tensor loss, int optimizer, int clip);

/*
 * What the strategy compiler needs to replicate ops (TAG §4.1.1), per op in emission (= node)
 * order; the values are those of pb_node_role and pb_split_class (node attributes "role" and
 * "split" of the node-link format; README's graph table):
 *   role        parameter: a variable an optimizer op updates (its slots and Adam's beta powers
 *               too); apply: the optimizer op; gradient: the op whose output the optimizer op
 *               applies (its last input); op: the rest;
 *   split       batch: the op's output carries the batch dimension (parts are concatenated);
 *               sum: it is a sum over the batch (weight and bias gradients, embedding gradients,
 *               reductions to a scalar; parts are added), and so are forwarding and adding ops
 *               of such sums; none: it does not depend on the batch (variables, constants,
 *               initializers, optimizer ops, and what reads a sum non-linearly, such as gradient
 *               clipping) — sources with a batch axis start the batch class;
 *   colocation  one class per optimizer op: it, its variable, the variable's same-shaped slots,
 *               their reads and initial assignments; -1 elsewhere.
 * Arrays are caller-owned (gen_annotations_free).
 */
typedef struct gen_annotations {
    int n;
    unsigned char *role, *split;
    int *colocation;
} gen_annotations;
int gen_annotate(const gen_ctx *g, gen_annotations *a, pb_error *err);
void gen_annotations_free(gen_annotations *a);

/* Builds the pb_graph (nodes in emission order, edges in order of their consumers' inputs).
 * *out is caller-owned; the context must still be freed with gen_free. */
int gen_finish(gen_ctx *g, const char *name, pb_graph **out, pb_error *err);
/* The same with each op's colocation class, role and split class from ann (NULL: none). */
int gen_finish_annotated(gen_ctx *g, const char *name, const gen_annotations *ann, pb_graph **out,
                         pb_error *err);

/* The family generators (one file each). */
int gen_cifar10_generate(uint64_t seed, int index, const char *name, const gen_options *opt,
                         pb_graph **out, pb_error *err);
int gen_ptb_generate(uint64_t seed, int index, const char *name, const gen_options *opt,
                     pb_graph **out, pb_error *err);
int gen_nmt_generate(uint64_t seed, int index, const char *name, const gen_options *opt,
                     pb_graph **out, pb_error *err);

#endif
