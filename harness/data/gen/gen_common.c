/* gen_common.c — what the dataset generators share: K80 roofline costs, shapes, TF-like names and
 * groups, forward layer ops, the backward pass, gradient clipping and optimizer updates. */
#include "gen.h"

#include "model/devcost.h"
#include "model/graph.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gen_op {
    char *name, *type, *group;
    int grad; /* gen_grad */
    gen_tensor *in;
    int n_in;
    gen_shape out[GEN_MAX_PORTS];
    int n_out;
    double flops, bytes, cost_us, param_bytes;
    int needs_grad; /* some trainable variable is upstream */
    int init;       /* part of tf.global_variables_initializer (GEN_TF_*) */
    int wgrad;      /* gradient of operand wgrad - 1 (a weight, or an activation); 0: none */
    int model_var;  /* a variable made by gen_variable (not an optimizer slot) */
    int anchor;     /* the op whose device this one takes (gen_options.colocate), -1 */
    /* A GPU kernel: gen_finish sets cost_us to its devcost time under g->cost_model, from its
     * class, direction, flops and kernel_bytes (code that fixes another cost clears `kernel`). */
    int kernel, kernel_class, backward;
    double kernel_bytes;
};

/* ------------------------------------------------------------------ families */

static const gen_family gen_families[] = {
    {"cifar10",
     "CIFAR-10 CNNs from ENAS micro cells (normal/reduction, stem, aux head), momentum training",
     gen_cifar10_generate,
     1,
     {303.44, 444.22, 95.63, 74, 154},
     {0, 0, 1, 160, 20, 0, 0, 0, DEVCOST_CALIBRATED}},
    {"ptb",
     "PTB language models from ENAS recurrent cells unrolled over BPTT steps, SGD training",
     gen_ptb_generate,
     1,
     {500.75, 1285.44, 316.09, 216, 450},
     {0, 0, 1, 64, 200, 0, 9, 18, DEVCOST_CALIBRATED}},
    {"nmt",
     "attention LSTM encoder-decoders unrolled over source/target steps, Adam training",
     gen_nmt_generate,
     1,
     {179.44, 476.25, 63.13, 41, 69},
     {0, 0, 1, 128, 512, 2, 0, 0, DEVCOST_CALIBRATED}},
};

int gen_family_count(void)
{
    return (int)(sizeof gen_families / sizeof gen_families[0]);
}

const gen_family *gen_family_at(int i)
{
    return i >= 0 && i < gen_family_count() ? &gen_families[i] : NULL;
}

const gen_family *gen_family_find(const char *name)
{
    for (int i = 0; gen_family_at(i); i++)
        if (strcmp(gen_family_at(i)->name, name) == 0)
            return gen_family_at(i);
    return NULL;
}

void gen_family_names(char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < gen_family_count() && len < size; i++) {
        int w = snprintf(buf + len, size - len, "%s%s", i ? ", " : "", gen_families[i].name);
        len += w > 0 ? (size_t)w : 0;
    }
}

int gen_graph(const gen_family *f, uint64_t family_seed, int index, pb_graph **out, pb_error *err)
{
    return gen_graph_with(f, family_seed, index, NULL, out, err);
}

int gen_graph_with(const gen_family *f, uint64_t family_seed, int index, const gen_options *opt,
                   pb_graph **out, pb_error *err)
{
    char label[32], name[96];
    snprintf(label, sizeof label, "%d", index);
    snprintf(name, sizeof name, "%s/%02d", f->name, index);
    return f->generate(pb_seed_derive(family_seed, label), index, name, opt ? opt : &f->defaults,
                       out, err);
}

int gen_kernelless(const char *type)
{
    /* Variables, constants and control ops own no kernel; Identity, Reshape, Squeeze,
     * ExpandDims, StopGradient and the TensorArray's read and write forward or store a buffer;
     * shape arithmetic runs on the host (int32 in host memory); the input pipeline on the CPU. */
    static const char *const types[] = {"VariableV2",
                                        "Const",
                                        "NoOp",
                                        "Identity",
                                        "Reshape",
                                        "Squeeze",
                                        "ExpandDims",
                                        "Shape",
                                        "ShapeN",
                                        "Size",
                                        "Rank",
                                        "StopGradient",
                                        "Placeholder",
                                        "BroadcastGradientArgs",
                                        "InvertPermutation",
                                        "IteratorGetNext",
                                        "TensorArrayV3",
                                        "TensorArrayReadV3",
                                        "TensorArrayWriteV3"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(type, types[i]) == 0)
            return 1;
    return 0;
}

int gen_spread(int index, int lo, int hi)
{
    double u = fmod((index + 1) * 0.6180339887498949, 1.0);
    int v = lo + (int)floor(u * (hi - lo + 1));
    return v > hi ? hi : v;
}

/* ------------------------------------------------------------------ costs and shapes */

double gen_roofline_us(double flops, double bytes)
{
    return devcost_kernel_us(devcost_k80(), DEVCOST_ROOFLINE, DEVCOST_OTHER, 0, flops, bytes);
}

/* The devcost class of a kernel op: by type, with the filter size for convolutions (the filter is
 * input 1 of a convolution and of its input gradient, the output of its filter gradient). */
static int gen_cost_class(const gen_ctx *g, const char *type, const gen_tensor *in, int n_in,
                          const gen_shape *out)
{
    gen_shape w = gen_shape0(); /* [kh, kw, cin, cout] */
    if (strstr(type, "BackpropFilter"))
        w = out[0];
    else if (n_in >= 2 && (strncmp(type, "Conv2D", 6) == 0 || strncmp(type, "Depthwise", 9) == 0))
        w = g->ops[in[1].op].out[in[1].port];
    return devcost_classify(type, (int)(w.d[0] > w.d[1] ? w.d[0] : w.d[1]));
}

/* The time of kernel op o under the context's cost model. */
static double gen_kernel_us(const gen_ctx *g, const gen_op *o)
{
    return devcost_kernel_us(devcost_k80(), (devcost_model)g->cost_model,
                             (devcost_class)o->kernel_class, o->backward, o->flops,
                             o->kernel_bytes);
}

gen_shape gen_shape0(void)
{
    return (gen_shape){0, {1, 1, 1, 1}};
}

gen_shape gen_shape1(long long a)
{
    return (gen_shape){1, {a, 1, 1, 1}};
}

gen_shape gen_shape2(long long a, long long b)
{
    return (gen_shape){2, {a, b, 1, 1}};
}

gen_shape gen_shape3(long long a, long long b, long long c)
{
    return (gen_shape){3, {a, b, c, 1}};
}

gen_shape gen_shape4(long long a, long long b, long long c, long long d)
{
    return (gen_shape){4, {a, b, c, d}};
}

double gen_shape_elems(gen_shape s)
{
    double n = 1;
    for (int i = 0; i < s.rank; i++)
        n *= (double)s.d[i];
    return n;
}

double gen_shape_bytes(gen_shape s)
{
    return 4.0 * gen_shape_elems(s);
}

static long long gen_last(gen_shape s)
{
    return s.rank > 0 ? s.d[s.rank - 1] : 1;
}

/* ------------------------------------------------------------------ context */

void gen_init(gen_ctx *g, uint64_t seed, int batch)
{
    memset(g, 0, sizeof *g);
    pb_rng_seed(&g->rng, seed);
    g->batch = batch;
    strmap_init(&g->names);
}

void gen_free(gen_ctx *g)
{
    for (int i = 0; i < g->n_ops; i++) {
        free(g->ops[i].name);
        free(g->ops[i].type);
        free(g->ops[i].group);
        free(g->ops[i].in);
    }
    free(g->ops);
    free(g->losses);
    strmap_free(&g->names);
    memset(g, 0, sizeof *g);
}

static void gen_fail(gen_ctx *g, const char *msg)
{
    if (!g->failed)
        pb_errorf(&g->err, "%s", msg);
    g->failed = 1;
}

void gen_push(gen_ctx *g, int kind, const char *fmt, ...)
{
    if (g->depth >= 32) {
        gen_fail(g, "generator: name scopes nested too deeply");
        return;
    }
    g->scope_len[g->depth] = (int)strlen(g->scope);
    g->group_len[g->depth] = (int)strlen(g->group);
    g->depth++;
    size_t len = strlen(g->scope);
    if (len && len + 1 < sizeof g->scope)
        g->scope[len++] = '/';
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(g->scope + len, sizeof g->scope - len, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= sizeof g->scope - len)
        gen_fail(g, "generator: name scope too long");
    if (kind == GEN_GROUP)
        memcpy(g->group, g->scope, sizeof g->group);
}

void gen_pop(gen_ctx *g)
{
    if (g->depth == 0)
        return;
    g->depth--;
    g->scope[g->scope_len[g->depth]] = '\0';
    g->group[g->group_len[g->depth]] = '\0';
}

/* scope/base made unique the way TensorFlow does: a repeated name gets "_1", "_2", ... */
static char *gen_unique_name(gen_ctx *g, const char *base)
{
    char full[640], cand[660];
    snprintf(full, sizeof full, "%s%s%s", g->scope, g->scope[0] ? "/" : "", base);
    int k = strmap_get(&g->names, full);
    if (k < 0) {
        if (strmap_put(&g->names, full, 1))
            return NULL;
        return strdup(full);
    }
    do {
        snprintf(cand, sizeof cand, "%s_%d", full, k++);
    } while (strmap_get(&g->names, cand) >= 0);
    if (strmap_put(&g->names, full, k) || strmap_put(&g->names, cand, 1))
        return NULL;
    return strdup(cand);
}

/* Appends an op; host ops (no kernel) cost GEN_HOST_OP_US.  Returns its index or -1. */
static int gen_add(gen_ctx *g, const char *type, const char *base, int grad, const gen_tensor *in,
                   int n_in, const gen_shape *out, int n_out, double flops, int host)
{
    if (g->failed)
        return -1;
    for (int i = 0; i < n_in; i++)
        if (in[i].op < 0 || in[i].op >= g->n_ops ||
            (in[i].port > 0 && in[i].port >= g->ops[in[i].op].n_out)) {
            pb_errorf(&g->err, "generator: input %d of %s '%.300s/%.100s' is a missing tensor", i,
                      type, g->scope, base);
            g->failed = 1;
            return -1;
        }
    if (n_out > GEN_MAX_PORTS) {
        gen_fail(g, "generator: too many output ports");
        return -1;
    }
    if (g->n_ops == g->cap_ops) {
        int cap = g->cap_ops ? 2 * g->cap_ops : 1024;
        gen_op *p = realloc(g->ops, (size_t)cap * sizeof *p);
        if (!p) {
            gen_fail(g, "out of memory");
            return -1;
        }
        g->ops = p;
        g->cap_ops = cap;
    }
    gen_op *o = &g->ops[g->n_ops];
    memset(o, 0, sizeof *o);
    o->name = gen_unique_name(g, base);
    o->type = strdup(type);
    o->group = strdup(g->group[0] ? g->group : g->scope[0] ? g->scope : o->name ? o->name : "");
    o->in = malloc((size_t)(n_in ? n_in : 1) * sizeof *o->in);
    if (!o->name || !o->type || !o->group || !o->in) {
        free(o->name);
        free(o->type);
        free(o->group);
        free(o->in);
        gen_fail(g, "out of memory");
        return -1;
    }
    o->grad = grad;
    o->n_in = n_in;
    o->n_out = n_out;
    o->flops = flops;
    o->needs_grad = grad == GEN_GRAD_READ;
    for (int i = 0; i < n_in; i++) {
        o->in[i] = in[i];
        if (in[i].port < g->ops[in[i].op].n_out) /* else a control input of a port-less op */
            o->bytes += gen_shape_bytes(g->ops[in[i].op].out[in[i].port]);
        o->needs_grad |= g->ops[in[i].op].needs_grad;
    }
    for (int p = 0; p < n_out; p++) {
        o->out[p] = out[p];
        o->bytes += gen_shape_bytes(out[p]);
    }
    o->cost_us = host ? GEN_HOST_OP_US : gen_roofline_us(flops, o->bytes);
    if (host)
        o->bytes = 0;
    o->anchor = -1;
    o->kernel = !host;
    o->kernel_bytes = o->bytes;
    o->kernel_class = host ? DEVCOST_OTHER : gen_cost_class(g, type, in, n_in, out);
    o->backward = strncmp(o->name, "gradients/", 10) == 0;
    if (g->opt.kernelless_free && (host || gen_kernelless(type))) {
        o->cost_us = 0; /* no kernel: gen_finish keeps the 0 */
        o->kernel = 0;
    }
    return g->n_ops++;
}

gen_tensor gen_op_emit(gen_ctx *g, const char *type, const char *base, int grad,
                       const gen_tensor *in, int n_in, const gen_shape *out, int n_out,
                       double flops)
{
    int i = gen_add(g, type, base, grad, in, n_in, out, n_out, flops, 0);
    return i < 0 ? GEN_NONE : (gen_tensor){i, 0};
}

gen_shape gen_shape_of(const gen_ctx *g, gen_tensor t)
{
    if (t.op < 0 || t.op >= g->n_ops)
        return gen_shape0();
    return g->ops[t.op].out[t.port];
}

gen_tensor gen_port(gen_tensor t, int port)
{
    return (gen_tensor){t.op, port};
}

/* ------------------------------------------------------------------ forward layer ops */

gen_tensor gen_source(gen_ctx *g, const char *type, const char *name, const gen_shape *out,
                      int n_out)
{
    int i = gen_add(g, type, name, GEN_GRAD_NONE, NULL, 0, out, n_out, 0, 1);
    return i < 0 ? GEN_NONE : (gen_tensor){i, 0};
}

/* An op of the initializer (GEN_TF_*): runs once, so it costs nothing per step and its output
 * moves no bytes. */
static int gen_init_add(gen_ctx *g, const char *type, const char *base, const gen_tensor *in,
                        int n_in)
{
    gen_shape none = gen_shape1(0);
    int i = gen_add(g, type, base, GEN_GRAD_NONE, in, n_in, &none, 1, 0, 1);
    if (i >= 0) {
        g->ops[i].cost_us = 0;
        g->ops[i].init = 1;
    }
    return i;
}

/* Saves the scope into `saved` and sets it to op v's name followed by `suffix`. */
static void gen_scope_of(gen_ctx *g, int v, const char *suffix, char *saved)
{
    memcpy(saved, g->scope, sizeof g->scope);
    snprintf(g->scope, sizeof g->scope, "%.400s%s", g->ops[v].name, suffix);
}

/* The initial value of variable v (see GEN_TF_* in gen.h) and its Assign. */
static void gen_tf_initialize(gen_ctx *g, int v, int random)
{
    char saved[sizeof g->scope];
    gen_tensor value = GEN_NONE;
    if (random) {
        int normal = g->tf_graphdef == GEN_TF_NORMAL;
        gen_scope_of(g, v, normal ? "/Initializer/truncated_normal" : "/Initializer/random_uniform",
                     saved);
        gen_tensor shape = {gen_init_add(g, "Const", "shape", NULL, 0), 0};
        gen_tensor lo = {gen_init_add(g, "Const", normal ? "mean" : "min", NULL, 0), 0};
        gen_tensor hi = {gen_init_add(g, "Const", normal ? "stddev" : "max", NULL, 0), 0};
        gen_tensor r = {gen_init_add(g, normal ? "TruncatedNormal" : "RandomUniform",
                                     normal ? "TruncatedNormal" : "RandomUniform", &shape, 1),
                        0};
        gen_tensor span = hi;
        if (!normal) {
            gen_tensor d[2] = {hi, lo};
            span = (gen_tensor){gen_init_add(g, "Sub", "sub", d, 2), 0};
        }
        gen_tensor m[2] = {r, span};
        gen_tensor scaled = {gen_init_add(g, "Mul", "mul", m, 2), 0};
        gen_tensor a[2] = {scaled, lo};
        value = (gen_tensor){gen_init_add(g, "AddV2", "add", a, 2), 0};
    } else if (gen_shape_elems(g->ops[v].out[0]) < 1000) {
        gen_scope_of(g, v, "/Initializer", saved);
        value = (gen_tensor){gen_init_add(g, "Const", "zeros", NULL, 0), 0};
    } else {
        gen_scope_of(g, v, "/Initializer/zeros", saved);
        gen_tensor in[2] = {{gen_init_add(g, "Const", "shape_as_tensor", NULL, 0), 0},
                            {gen_init_add(g, "Const", "Const", NULL, 0), 0}};
        value = (gen_tensor){gen_init_add(g, "Fill", "Fill", in, 2), 0};
    }
    char inner[sizeof g->scope];
    gen_scope_of(g, v, "", inner);
    gen_tensor in[2] = {{v, 0}, value};
    gen_init_add(g, "Assign", "Assign", in, 2);
    memcpy(g->scope, saved, sizeof g->scope);
}

/* Weights are drawn at random, everything else (biases, scales, offsets, slots) starts constant. */
static int gen_is_weight(const char *name)
{
    static const char *const weights[] = {
        "w",         "weights",    "kernel",      "depthwise_weights", "pointwise_weights",
        "embedding", "embeddings", "embed_lookup"};
    for (size_t i = 0; i < sizeof weights / sizeof weights[0]; i++)
        if (strcmp(name, weights[i]) == 0)
            return 1;
    return 0;
}

gen_tensor gen_variable(gen_ctx *g, const char *name, gen_shape shape)
{
    int v = gen_add(g, "VariableV2", name, GEN_GRAD_NONE, NULL, 0, &shape, 1, 0, 1);
    if (v < 0)
        return GEN_NONE;
    g->ops[v].param_bytes = gen_shape_bytes(shape);
    g->ops[v].model_var = 1;
    /* "<var>/read", with the variable's own (possibly "_N"-suffixed) last name component. */
    const char *slash = strrchr(g->ops[v].name, '/');
    char read[300];
    snprintf(read, sizeof read, "%s/read", slash ? slash + 1 : g->ops[v].name);
    gen_tensor t = {v, 0};
    int r = gen_add(g, "Identity", read, GEN_GRAD_READ, &t, 1, &shape, 1, 0, 1);
    if (r >= 0 && g->tf_graphdef)
        gen_tf_initialize(g, v, gen_is_weight(name));
    return r < 0 ? GEN_NONE : (gen_tensor){r, 0};
}

void gen_tf_init_op(gen_ctx *g)
{
    int n = 0;
    for (int i = 0; i < g->n_ops; i++)
        n += g->ops[i].init && strcmp(g->ops[i].type, "Assign") == 0;
    gen_tensor *in = malloc((size_t)(n ? n : 1) * sizeof *in);
    if (!in) {
        gen_fail(g, "out of memory");
        return;
    }
    n = 0;
    for (int i = 0; i < g->n_ops; i++)
        if (g->ops[i].init && strcmp(g->ops[i].type, "Assign") == 0)
            in[n++] = (gen_tensor){i, 0};
    char saved[sizeof g->scope];
    memcpy(saved, g->scope, sizeof saved);
    g->scope[0] = '\0';
    int i = gen_add(g, "NoOp", "init", GEN_GRAD_NONE, in, n, NULL, 0, 0, 1);
    if (i >= 0) {
        g->ops[i].cost_us = 0;
        g->ops[i].init = 1;
    }
    memcpy(g->scope, saved, sizeof saved);
    free(in);
}

gen_tensor gen_const(gen_ctx *g, const char *name, gen_shape shape)
{
    int i = gen_add(g, "Const", name, GEN_GRAD_NONE, NULL, 0, &shape, 1, 0, 1);
    return i < 0 ? GEN_NONE : (gen_tensor){i, 0};
}

static long long gen_out_size(long long in, int k, int stride, int valid)
{
    return valid ? (in - k) / stride + 1 : (in + stride - 1) / stride;
}

gen_tensor gen_conv2d(gen_ctx *g, gen_tensor x, int kh, int kw, int cout, int stride)
{
    gen_shape s = gen_shape_of(g, x);
    gen_tensor in[2] = {x, gen_variable(g, "w", gen_shape4(kh, kw, s.d[3], cout))};
    gen_shape o = gen_shape4(s.d[0], gen_out_size(s.d[1], kh, stride, 0),
                             gen_out_size(s.d[2], kw, stride, 0), cout);
    double flops = 2.0 * gen_shape_elems(o) * kh * kw * (double)s.d[3];
    return gen_op_emit(g, "Conv2D", "Conv2D", GEN_GRAD_CONV2D, in, 2, &o, 1, flops);
}

gen_tensor gen_depthwise(gen_ctx *g, gen_tensor x, int k, int stride)
{
    gen_shape s = gen_shape_of(g, x);
    gen_tensor in[2] = {x, gen_variable(g, "depthwise_weights", gen_shape4(k, k, s.d[3], 1))};
    gen_shape o = gen_shape4(s.d[0], gen_out_size(s.d[1], k, stride, 0),
                             gen_out_size(s.d[2], k, stride, 0), s.d[3]);
    double flops = 2.0 * gen_shape_elems(o) * k * k;
    return gen_op_emit(g, "DepthwiseConv2dNative", "depthwise", GEN_GRAD_DEPTHWISE, in, 2, &o, 1,
                       flops);
}

gen_tensor gen_batchnorm(gen_ctx *g, gen_tensor x)
{
    gen_shape s = gen_shape_of(g, x), c = gen_shape1(gen_last(s));
    gen_tensor in[3] = {x, gen_variable(g, "scale", c), gen_variable(g, "offset", c)};
    gen_shape o[3] = {s, c, c};
    return gen_op_emit(g, "FusedBatchNorm", "FusedBatchNorm", GEN_GRAD_BATCHNORM, in, 3, o, 3,
                       8.0 * gen_shape_elems(s));
}

gen_tensor gen_unary(gen_ctx *g, const char *type, gen_tensor x)
{
    int grad = strcmp(type, "Relu") == 0      ? GEN_GRAD_RELU
               : strcmp(type, "Tanh") == 0    ? GEN_GRAD_TANH
               : strcmp(type, "Sigmoid") == 0 ? GEN_GRAD_SIGMOID
                                              : GEN_GRAD_IDENTITY;
    gen_shape s = gen_shape_of(g, x);
    double per = grad == GEN_GRAD_RELU ? 1.0 : 4.0;
    return gen_op_emit(g, type, type, grad, &x, 1, &s, 1, per * gen_shape_elems(s));
}

gen_tensor gen_binary(gen_ctx *g, const char *type, gen_tensor a, gen_tensor b)
{
    int grad = strcmp(type, "Sub") == 0   ? GEN_GRAD_SUB
               : strcmp(type, "Mul") == 0 ? GEN_GRAD_MUL
                                          : GEN_GRAD_IDENTITY;
    gen_shape sa = gen_shape_of(g, a), sb = gen_shape_of(g, b);
    gen_shape s = gen_shape_elems(sa) >= gen_shape_elems(sb) ? sa : sb;
    gen_tensor in[2] = {a, b};
    const char *base = strcmp(type, "AddV2") == 0 ? "add"
                       : strcmp(type, "Sub") == 0 ? "sub"
                                                  : "mul";
    return gen_op_emit(g, type, base, grad, in, 2, &s, 1, gen_shape_elems(s));
}

gen_tensor gen_add_n(gen_ctx *g, const gen_tensor *x, int n)
{
    if (n == 1)
        return x[0];
    gen_shape s = gen_shape_of(g, x[0]);
    return gen_op_emit(g, "AddN", "AddN", GEN_GRAD_IDENTITY, x, n, &s, 1,
                       (n - 1) * gen_shape_elems(s));
}

gen_tensor gen_broadcast(gen_ctx *g, const char *type, gen_tensor a, gen_tensor b)
{
    gen_shape s = gen_shape_of(g, a);
    gen_tensor in[2] = {a, b};
    const char *base = strcmp(type, "AddV2") == 0     ? "add"
                       : strcmp(type, "Sub") == 0     ? "sub"
                       : strcmp(type, "Mul") == 0     ? "mul"
                       : strcmp(type, "RealDiv") == 0 ? "truediv"
                                                      : type;
    return gen_op_emit(g, type, base, GEN_GRAD_BROADCAST, in, 2, &s, 1, gen_shape_elems(s));
}

gen_tensor gen_pool(gen_ctx *g, const char *type, gen_tensor x, int k, int stride, int valid)
{
    gen_shape s = gen_shape_of(g, x);
    gen_shape o = gen_shape4(s.d[0], gen_out_size(s.d[1], k, stride, valid),
                             gen_out_size(s.d[2], k, stride, valid), s.d[3]);
    int grad = strcmp(type, "MaxPool") == 0 ? GEN_GRAD_MAXPOOL : GEN_GRAD_AVGPOOL;
    return gen_op_emit(g, type, type, grad, &x, 1, &o, 1, (double)k * k * gen_shape_elems(o));
}

gen_tensor gen_concat(gen_ctx *g, const gen_tensor *x, int n)
{
    if (n == 1)
        return x[0];
    gen_shape o = gen_shape_of(g, x[0]);
    for (int i = 1; i < n; i++)
        o.d[o.rank - 1] += gen_last(gen_shape_of(g, x[i]));
    return gen_op_emit(g, "ConcatV2", "concat", GEN_GRAD_CONCAT, x, n, &o, 1, 0);
}

gen_tensor gen_split(gen_ctx *g, gen_tensor x, int n)
{
    gen_shape o[GEN_MAX_PORTS], s = gen_shape_of(g, x);
    for (int p = 0; p < n && p < GEN_MAX_PORTS; p++) {
        o[p] = s;
        o[p].d[s.rank - 1] = gen_last(s) / n;
    }
    return gen_op_emit(g, "Split", "split", GEN_GRAD_SPLIT, &x, 1, o, n, 0);
}

gen_tensor gen_matmul(gen_ctx *g, gen_tensor x, gen_tensor w, int transpose_b)
{
    gen_shape sx = gen_shape_of(g, x), sw = gen_shape_of(g, w), o = sx;
    long long k = gen_last(sx);
    long long n = transpose_b ? sw.d[sw.rank - 2] : gen_last(sw);
    o.d[o.rank - 1] = n;
    gen_tensor in[2] = {x, w};
    const char *type = sx.rank == 3 ? "BatchMatMulV2" : "MatMul";
    return gen_op_emit(g, type, type, GEN_GRAD_MATMUL, in, 2, &o, 1,
                       2.0 * gen_shape_elems(o) * (double)k);
}

gen_tensor gen_bias_add(gen_ctx *g, gen_tensor x, gen_tensor b)
{
    gen_shape s = gen_shape_of(g, x);
    gen_tensor in[2] = {x, b};
    return gen_op_emit(g, "BiasAdd", "BiasAdd", GEN_GRAD_BIASADD, in, 2, &s, 1, gen_shape_elems(s));
}

gen_tensor gen_dense(gen_ctx *g, gen_tensor x, int units, int bias)
{
    gen_shape s = gen_shape_of(g, x);
    gen_tensor y = gen_matmul(g, x, gen_variable(g, "w", gen_shape2(gen_last(s), units)), 0);
    return bias ? gen_bias_add(g, y, gen_variable(g, "b", gen_shape1(units))) : y;
}

gen_tensor gen_mean_spatial(gen_ctx *g, gen_tensor x)
{
    gen_shape s = gen_shape_of(g, x), o = gen_shape2(s.d[0], s.d[3]);
    return gen_op_emit(g, "Mean", "Mean", GEN_GRAD_MEAN, &x, 1, &o, 1, gen_shape_elems(s));
}

gen_tensor gen_reshape(gen_ctx *g, gen_tensor x, gen_shape to)
{
    if (g->tf_graphdef) { /* tf.reshape of a static shape writes it as a Const */
        gen_tensor in[2] = {x, gen_const(g, "Reshape/shape", gen_shape1(to.rank))};
        return gen_op_emit(g, "Reshape", "Reshape", GEN_GRAD_RESHAPE, in, 2, &to, 1, 0);
    }
    return gen_op_emit(g, "Reshape", "Reshape", GEN_GRAD_RESHAPE, &x, 1, &to, 1, 0);
}

gen_tensor gen_gather(gen_ctx *g, gen_tensor params, gen_tensor ids)
{
    gen_shape sp = gen_shape_of(g, params), si = gen_shape_of(g, ids);
    gen_shape o = gen_shape2(si.d[0], sp.d[1]);
    gen_tensor in[2] = {params, ids};
    return gen_op_emit(g, "GatherV2", "embedding_lookup", GEN_GRAD_GATHER, in, 2, &o, 1, 0);
}

gen_tensor gen_softmax(gen_ctx *g, gen_tensor x)
{
    gen_shape s = gen_shape_of(g, x);
    return gen_op_emit(g, "Softmax", "Softmax", GEN_GRAD_SOFTMAX, &x, 1, &s, 1,
                       5.0 * gen_shape_elems(s));
}

gen_tensor gen_xent_loss(gen_ctx *g, gen_tensor logits, gen_tensor labels)
{
    gen_shape s = gen_shape_of(g, logits);
    gen_shape o[2] = {gen_shape1(s.d[0]), s};
    gen_tensor in[2] = {logits, labels};
    gen_tensor x = gen_op_emit(g, "SoftmaxCrossEntropyWithLogits", "SoftmaxCrossEntropyWithLogits",
                               GEN_GRAD_XENT, in, 2, o, 2, 6.0 * gen_shape_elems(s));
    gen_shape scalar = gen_shape0();
    return gen_op_emit(g, "Mean", "Mean", GEN_GRAD_MEAN, &x, 1, &scalar, 1, (double)s.d[0]);
}

/* ------------------------------------------------------------------ backward pass */

/* Gradient contributions per (forward op, port), summed when the op's dy is needed. */
typedef struct gen_grads {
    gen_tensor *t;
    int n, cap;
} gen_grads;

typedef struct gen_bwd {
    gen_grads *acc; /* [n_fwd * GEN_MAX_PORTS] */
    int n_fwd;
    int *var; /* variable ops that received a gradient, in the order found */
    gen_tensor *vgrad;
    int n_var;
    /* Gradients of the op being differentiated, held back until they are gated. */
    gen_tensor *pend_x, *pend_dy;
    int n_pend, cap_pend, collecting;
} gen_bwd;

static void gen_grad_add(gen_ctx *g, gen_bwd *b, gen_tensor x, gen_tensor dy)
{
    gen_grads *l = &b->acc[x.op * GEN_MAX_PORTS + x.port];
    if (g->loop_accumulate && g->ops[x.op].grad == GEN_GRAD_READ && l->n == 1) {
        /* A loop-invariant variable in a while loop: its gradient is a running sum carried
         * from iteration to iteration, one add in each iteration's gradient scope. */
        gen_tensor in[2] = {l->t[0], dy};
        gen_shape s = gen_shape_of(g, dy);
        l->t[0] =
            gen_op_emit(g, "AddV2", "accumulate", GEN_GRAD_NONE, in, 2, &s, 1, gen_shape_elems(s));
        return;
    }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 4;
        gen_tensor *p = realloc(l->t, (size_t)cap * sizeof *p);
        if (!p) {
            gen_fail(g, "out of memory");
            return;
        }
        l->t = p;
        l->cap = cap;
    }
    l->t[l->n++] = dy;
}

static void gen_grad_push(gen_ctx *g, gen_bwd *b, gen_tensor x, gen_tensor dy)
{
    if (g->failed || x.op < 0 || dy.op < 0 || x.op >= b->n_fwd)
        return;
    /* TensorFlow gates every gradient a gradient function returns, needed or not (GEN_TF_*). */
    if (!g->ops[x.op].needs_grad && !(b->collecting && g->tf_graphdef))
        return;
    if (b->collecting) {
        if (b->n_pend == b->cap_pend) {
            int cap = b->cap_pend ? 2 * b->cap_pend : 16;
            gen_tensor *px = realloc(b->pend_x, (size_t)cap * sizeof *px);
            if (px)
                b->pend_x = px;
            gen_tensor *pd = realloc(b->pend_dy, (size_t)cap * sizeof *pd);
            if (pd)
                b->pend_dy = pd;
            if (!px || !pd) {
                gen_fail(g, "out of memory");
                return;
            }
            b->cap_pend = cap;
        }
        b->pend_x[b->n_pend] = x;
        b->pend_dy[b->n_pend++] = dy;
        return;
    }
    gen_grad_add(g, b, x, dy);
}

/*
 * TensorFlow's GATE_OP (the optimizers' default): the gradients an op sends to two or more inputs
 * are tupled, a NoOp "tuple/group_deps" waits for all of them and one Identity
 * "tuple/control_dependency[_N]" per input forwards each.  A single gradient goes out as it is.
 */
static void gen_grad_gate(gen_ctx *g, gen_bwd *b)
{
    int n = b->n_pend;
    b->collecting = 0;
    b->n_pend = 0;
    if (n == 1 || g->failed) {
        for (int k = 0; k < n; k++)
            if (g->ops[b->pend_x[k].op].needs_grad)
                gen_grad_add(g, b, b->pend_x[k], b->pend_dy[k]);
        return;
    }
    int deps = gen_add(g, "NoOp", "tuple/group_deps", GEN_GRAD_NONE, b->pend_dy, n, NULL, 0, 0, 1);
    for (int k = 0; k < n && deps >= 0; k++) {
        gen_tensor in[2] = {b->pend_dy[k], {deps, 0}};
        gen_shape s = gen_shape_of(g, b->pend_dy[k]);
        int id =
            gen_add(g, "Identity", "tuple/control_dependency", GEN_GRAD_NONE, in, 2, &s, 1, 0, 1);
        if (id >= 0 && g->ops[b->pend_x[k].op].needs_grad)
            gen_grad_add(g, b, b->pend_x[k], (gen_tensor){id, 0});
    }
}

/* Saves the scope and group, and switches to those of op i's gradient ops. */
typedef struct gen_saved {
    char scope[512], group[512];
    int depth;
} gen_saved;

static void gen_save(const gen_ctx *g, gen_saved *s)
{
    memcpy(s->scope, g->scope, sizeof s->scope);
    memcpy(s->group, g->group, sizeof s->group);
    s->depth = g->depth;
}

static void gen_restore(gen_ctx *g, const gen_saved *s)
{
    memcpy(g->scope, s->scope, sizeof g->scope);
    memcpy(g->group, s->group, sizeof g->group);
    g->depth = s->depth;
}

/* dst = a + b, failing the context when it does not fit. */
static void gen_join(gen_ctx *g, char *dst, size_t n, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la + lb + 1 > n) {
        gen_fail(g, "generator: op name or group too long");
        dst[0] = '\0';
        return;
    }
    memmove(dst, a, la);
    memcpy(dst + la, b, lb + 1);
}

static void gen_set_scope(gen_ctx *g, const char *scope, const char *group_prefix,
                          const char *group)
{
    gen_join(g, g->scope, sizeof g->scope, scope, "");
    gen_join(g, g->group, sizeof g->group, group_prefix, group);
    g->depth = 0;
}

static void gen_grad_scope(gen_ctx *g, int i)
{
    char scope[sizeof g->scope];
    snprintf(scope, sizeof scope, "gradients/%s_grad", g->ops[i].name);
    gen_set_scope(g, scope, "gradients/", g->ops[i].group);
}

static int gen_needs(const gen_ctx *g, gen_tensor x)
{
    return x.op >= 0 && g->ops[x.op].needs_grad;
}

/* One gradient op of the current gradient scope with output shape like tensor `like`. */
static gen_tensor gen_gop(gen_ctx *g, const char *type, const gen_tensor *in, int n,
                          gen_tensor like, double flops)
{
    gen_shape s = gen_shape_of(g, like);
    return gen_op_emit(g, type, type, GEN_GRAD_NONE, in, n, &s, 1, flops);
}

/* Weight-style rules: one gradient op per differentiable input of a two-input op. */
static void gen_grad_pair(gen_ctx *g, gen_bwd *b, int i, gen_tensor dy, const char *tx,
                          const char *tw)
{
    gen_tensor x = g->ops[i].in[0], w = g->ops[i].in[1];
    double f = g->ops[i].flops;
    if (gen_needs(g, x) || g->tf_graphdef) {
        gen_tensor in[2] = {dy, w};
        gen_grad_push(g, b, x, gen_gop(g, tx, in, 2, x, f));
    }
    if (gen_needs(g, w) || g->tf_graphdef) {
        gen_tensor in[2] = {x, dy};
        gen_tensor dw = gen_gop(g, tw, in, 2, w, f);
        if (dw.op >= 0)
            g->ops[dw.op].wgrad = w.op + 1;
        gen_grad_push(g, b, w, dw);
    }
}

static void gen_grad_batchnorm(gen_ctx *g, gen_bwd *b, int i, gen_tensor dy)
{
    const gen_op *o = &g->ops[i];
    gen_tensor in[5] = {dy, o->in[0], o->in[1], {i, 1}, {i, 2}};
    gen_shape s[3] = {o->out[0], o->out[1], o->out[2]};
    gen_tensor x = o->in[0], scale = o->in[1], offset = o->in[2];
    gen_tensor d = gen_op_emit(g, "FusedBatchNormGrad", "FusedBatchNormGrad", GEN_GRAD_NONE, in, 5,
                               s, 3, 10.0 * gen_shape_elems(s[0]));
    gen_grad_push(g, b, x, d);
    gen_grad_push(g, b, scale, gen_port(d, 1));
    gen_grad_push(g, b, offset, gen_port(d, 2));
}

static void gen_grad_multi_out(gen_ctx *g, gen_bwd *b, int i, const gen_tensor *dy)
{
    /* Split: concatenate the output gradients, with zeros for outputs that got none. */
    gen_tensor parts[GEN_MAX_PORTS];
    int n = g->ops[i].n_out;
    for (int p = 0; p < n; p++) {
        gen_tensor y = {i, p};
        parts[p] = dy[p].op >= 0 ? dy[p] : gen_gop(g, "ZerosLike", &y, 1, y, 0);
    }
    gen_tensor x = g->ops[i].in[0];
    gen_grad_push(g, b, x, gen_gop(g, "ConcatV2", parts, n, x, 0));
}

static void gen_grad_softmax(gen_ctx *g, gen_bwd *b, int i, gen_tensor dy)
{
    gen_tensor y = {i, 0}, x = g->ops[i].in[0];
    double e = gen_shape_elems(gen_shape_of(g, y));
    gen_tensor in[2] = {dy, y};
    gen_tensor m = gen_gop(g, "Mul", in, 2, y, e);
    gen_tensor s = gen_gop(g, "Sum", &m, 1, y, e);
    gen_tensor in2[2] = {dy, s};
    gen_tensor d = gen_gop(g, "Sub", in2, 2, y, e);
    gen_tensor in3[2] = {d, y};
    gen_grad_push(g, b, x, gen_gop(g, "Mul", in3, 2, x, e));
}

/* The ShapeN that TensorFlow's conv gradients read their input sizes from (GEN_TF_* only). */
static void gen_grad_shape_n(gen_ctx *g, const gen_tensor *in)
{
    gen_shape s[2] = {gen_shape1(4), gen_shape1(4)};
    if (g->tf_graphdef)
        gen_add(g, "ShapeN", "ShapeN", GEN_GRAD_NONE, in, 2, s, 2, 0, 1);
}

/* The shape arithmetic of TensorFlow's _MeanGrad/_SumGrad (GEN_TF_* only): the reduced shape
 * (Shape, Size, add, mod, range, Fill, DynamicStitch, Maximum, floordiv) and the divisor
 * (Shape, Prod, Prod, Maximum, floordiv, Cast), host ops on int32 shapes. */
static void gen_grad_mean_shapes(gen_ctx *g, gen_tensor x)
{
    static const char *const types[] = {"Shape", "Size",          "AddV2",   "FloorMod", "Range",
                                        "Fill",  "DynamicStitch", "Maximum", "FloorDiv", "Shape",
                                        "Prod",  "Prod",          "Maximum", "FloorDiv", "Cast"};
    gen_shape s = gen_shape1(gen_shape_of(g, x).rank);
    gen_tensor prev = x;
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        int i = gen_add(g, types[k], types[k], GEN_GRAD_NONE, &prev, 1, &s, 1, 0, 1);
        if (i < 0)
            return;
        prev = (gen_tensor){i, 0};
    }
}

/* A host op computing the shape of x (an int32 vector). */
static gen_tensor gen_shape_op(gen_ctx *g, const char *base, gen_tensor x)
{
    gen_shape s = gen_shape1(gen_shape_of(g, x).rank);
    int i = gen_add(g, "Shape", base, GEN_GRAD_NONE, &x, 1, &s, 1, 0, 1);
    return i < 0 ? GEN_NONE : (gen_tensor){i, 0};
}

/* BatchMatMulV2's gradient reduces over broadcast batch axes (GEN_TF_* only): both shapes, their
 * batch parts (StridedSlice) and BroadcastGradientArgs. */
static void gen_grad_batch_dims(gen_ctx *g, const gen_tensor *in)
{
    gen_tensor part[2];
    for (int k = 0; k < 2; k++) {
        gen_tensor s = gen_shape_op(g, k ? "Shape_1" : "Shape", in[k]);
        gen_shape o = gen_shape1(1);
        int i = gen_add(g, "StridedSlice", "strided_slice", GEN_GRAD_NONE, &s, 1, &o, 1, 0, 1);
        part[k] = i < 0 ? GEN_NONE : (gen_tensor){i, 0};
    }
    gen_shape axes[2] = {gen_shape1(1), gen_shape1(1)};
    if (part[0].op >= 0 && part[1].op >= 0)
        gen_add(g, "BroadcastGradientArgs", "BroadcastGradientArgs", GEN_GRAD_NONE, part, 2, axes,
                2, 0, 1);
    for (int k = 0; k < 6; k++) /* begin, end and strides of the two slices */
        gen_const(g, "strided_slice/stack", gen_shape1(1));
}

/* TensorFlow's gradients of a broadcasting AddV2/Sub/Mul/RealDiv: the operands' shapes and the
 * reduction axes between them, then per differentiable operand its element-wise gradient
 * summed over the broadcast axes and reshaped to the operand's shape. */
static void gen_grad_broadcast(gen_ctx *g, gen_bwd *b, int i, gen_tensor dy)
{
    char type[32];
    snprintf(type, sizeof type, "%s", g->ops[i].type);
    gen_tensor x[2] = {g->ops[i].in[0], g->ops[i].in[1]};
    gen_tensor shape[2] = {gen_shape_op(g, "Shape", x[0]), gen_shape_op(g, "Shape_1", x[1])};
    gen_shape axes[2] = {gen_shape1(4), gen_shape1(4)};
    int args = gen_add(g, "BroadcastGradientArgs", "BroadcastGradientArgs", GEN_GRAD_NONE, shape, 2,
                       axes, 2, 0, 1);
    double e = gen_shape_elems(gen_shape_of(g, dy));
    for (int k = 0; k < 2 && args >= 0; k++) {
        /* TensorFlow builds both operands' gradients, needed or not (GEN_TF_*). */
        if (!gen_needs(g, x[k]) && !g->tf_graphdef)
            continue;
        gen_tensor t = dy;
        if (strcmp(type, "Sub") == 0 && k == 1) {
            t = gen_gop(g, "Neg", &dy, 1, dy, e);
        } else if (strcmp(type, "Mul") == 0) {
            gen_tensor in[2] = {dy, x[1 - k]};
            t = gen_gop(g, "Mul", in, 2, dy, e);
        } else if (strcmp(type, "RealDiv") == 0 && k == 0) {
            gen_tensor in[2] = {dy, x[1]};
            t = gen_gop(g, "RealDiv", in, 2, dy, e);
        } else if (strcmp(type, "SquaredDifference") == 0) {
            gen_tensor in[2] = {x[0], x[1]};
            gen_tensor diff = gen_gop(g, "Sub", in, 2, dy, e);
            gen_tensor in2[2] = {dy, diff};
            t = gen_gop(g, "Mul", in2, 2, dy, 2 * e);
            if (k == 1)
                t = gen_gop(g, "Neg", &t, 1, dy, e);
        } else if (strcmp(type, "RealDiv") == 0) {
            gen_tensor n = gen_gop(g, "Neg", &x[0], 1, x[0], e);
            gen_tensor in[2] = {n, x[1]};
            gen_tensor q = gen_gop(g, "RealDiv", in, 2, dy, e);
            gen_tensor in2[2] = {q, x[1]};
            gen_tensor q2 = gen_gop(g, "RealDiv", in2, 2, dy, e);
            gen_tensor in3[2] = {dy, q2};
            t = gen_gop(g, "Mul", in3, 2, dy, e);
        }
        gen_tensor in[2] = {t, {args, k}};
        gen_tensor sum = gen_gop(g, "Sum", in, 2, x[k], e);
        gen_tensor in2[2] = {sum, shape[k]};
        gen_grad_push(g, b, x[k], gen_gop(g, "Reshape", in2, 2, x[k], 0));
    }
}

/* Emits the gradient ops of forward op i given dy per output port (GEN_NONE when none).  Inputs
 * are copied first: emitting may move g->ops. */
static void gen_grad_emit(gen_ctx *g, gen_bwd *b, int i, const gen_tensor *dy)
{
    gen_tensor in[8], d = dy[0], y = {i, 0};
    int n_in = g->ops[i].n_in < 8 ? g->ops[i].n_in : 8, rule = g->ops[i].grad;
    memcpy(in, g->ops[i].in, (size_t)n_in * sizeof *in);
    double e = gen_shape_elems(gen_shape_of(g, y)), f = g->ops[i].flops;
    switch (rule) {
    case GEN_GRAD_IDENTITY:
        for (int k = 0; k < g->ops[i].n_in; k++)
            gen_grad_push(g, b, g->ops[i].in[k], d);
        break;
    case GEN_GRAD_CONV2D:
        gen_grad_shape_n(g, in);
        gen_grad_pair(g, b, i, d, "Conv2DBackpropInput", "Conv2DBackpropFilter");
        break;
    case GEN_GRAD_DEPTHWISE:
        gen_grad_shape_n(g, in);
        gen_grad_pair(g, b, i, d, "DepthwiseConv2dNativeBackpropInput",
                      "DepthwiseConv2dNativeBackpropFilter");
        break;
    case GEN_GRAD_MATMUL: {
        const char *t = gen_shape_of(g, y).rank == 3 ? "BatchMatMulV2" : "MatMul";
        if (gen_shape_of(g, y).rank == 3 && g->tf_graphdef)
            gen_grad_batch_dims(g, in);
        gen_grad_pair(g, b, i, d, t, t);
        break;
    }
    case GEN_GRAD_BIASADD: {
        gen_grad_push(g, b, in[0], d);
        if (gen_needs(g, in[1])) {
            gen_tensor db = gen_gop(g, "BiasAddGrad", &d, 1, in[1], e);
            if (db.op >= 0)
                g->ops[db.op].wgrad = in[1].op + 1;
            gen_grad_push(g, b, in[1], db);
        }
        break;
    }
    case GEN_GRAD_RELU:
    case GEN_GRAD_TANH:
    case GEN_GRAD_SIGMOID: {
        gen_tensor a[2] = {d, y};
        const char *t = rule == GEN_GRAD_RELU   ? "ReluGrad"
                        : rule == GEN_GRAD_TANH ? "TanhGrad"
                                                : "SigmoidGrad";
        gen_grad_push(g, b, in[0], gen_gop(g, t, a, 2, in[0], e));
        break;
    }
    case GEN_GRAD_BATCHNORM:
        gen_grad_batchnorm(g, b, i, d);
        break;
    case GEN_GRAD_SUB:
        gen_grad_push(g, b, in[0], d);
        if (gen_needs(g, in[1]))
            gen_grad_push(g, b, in[1], gen_gop(g, "Neg", &d, 1, in[1], e));
        break;
    case GEN_GRAD_MUL:
        for (int k = 0; k < 2; k++)
            if (gen_needs(g, in[k]) || g->tf_graphdef) {
                gen_tensor a[2] = {d, in[1 - k]};
                gen_grad_push(g, b, in[k], gen_gop(g, "Mul", a, 2, in[k], e));
            }
        break;
    case GEN_GRAD_MAXPOOL: {
        gen_tensor a[3] = {in[0], y, d};
        gen_grad_push(g, b, in[0], gen_gop(g, "MaxPoolGrad", a, 3, in[0], f));
        break;
    }
    case GEN_GRAD_AVGPOOL:
        gen_grad_push(g, b, in[0], gen_gop(g, "AvgPoolGrad", &d, 1, in[0], f));
        break;
    case GEN_GRAD_CONCAT:
        for (int k = 0; k < g->ops[i].n_in; k++) {
            gen_tensor xk = g->ops[i].in[k];
            if (gen_needs(g, xk))
                gen_grad_push(g, b, xk, gen_gop(g, "Slice", &d, 1, xk, 0));
        }
        break;
    case GEN_GRAD_SPLIT:
        gen_grad_multi_out(g, b, i, dy);
        break;
    case GEN_GRAD_MEAN: {
        if (g->tf_graphdef)
            gen_grad_mean_shapes(g, in[0]);
        gen_tensor t = gen_gop(g, "Tile", &d, 1, in[0], 0);
        gen_grad_push(g, b, in[0], gen_gop(g, "RealDiv", &t, 1, in[0], f));
        break;
    }
    case GEN_GRAD_GATHER: {
        gen_tensor a[2] = {d, in[1]};
        gen_grad_push(g, b, in[0], gen_gop(g, "UnsortedSegmentSum", a, 2, in[0], e));
        break;
    }
    case GEN_GRAD_XENT: {
        gen_tensor a[2] = {d, {i, 1}};
        gen_grad_push(g, b, in[0], gen_gop(g, "Mul", a, 2, in[0], f / 6.0));
        break;
    }
    case GEN_GRAD_SOFTMAX:
        gen_grad_softmax(g, b, i, d);
        break;
    case GEN_GRAD_RESHAPE:
        if (g->tf_graphdef) /* _ReshapeGrad reads the input's shape */
            gen_shape_op(g, "Shape", in[0]);
        gen_grad_push(g, b, in[0], gen_gop(g, "Reshape", &d, 1, in[0], 0));
        break;
    case GEN_GRAD_TA_WRITE:
        if (gen_needs(g, in[0]))
            gen_grad_push(g, b, in[0], gen_gop(g, "TensorArrayReadV3", &d, 1, in[0], 0));
        if (n_in > 1)
            gen_grad_push(g, b, in[1], d);
        break;
    case GEN_GRAD_TA_GATHER:
        gen_grad_push(g, b, in[0], gen_gop(g, "TensorArrayScatterV3", &d, 1, in[0], 0));
        break;
    case GEN_GRAD_SLICE:
        gen_grad_push(g, b, in[0], gen_gop(g, "StridedSliceGrad", &d, 1, in[0], 0));
        break;
    case GEN_GRAD_BROADCAST:
        gen_grad_broadcast(g, b, i, d);
        break;
    case GEN_GRAD_UNARY: {
        char t[64];
        snprintf(t, sizeof t, "%.50sGrad", g->ops[i].type);
        gen_tensor a[2] = {d, y};
        gen_grad_push(g, b, in[0], gen_gop(g, t, a, 2, in[0], 2 * e));
        break;
    }
    case GEN_GRAD_TRANSPOSE: {
        gen_shape s = gen_shape1(gen_shape_of(g, in[0]).rank);
        int perm = gen_add(g, "InvertPermutation", "InvertPermutation", GEN_GRAD_NONE, NULL, 0, &s,
                           1, 0, 1);
        gen_tensor a[2] = {d, {perm, 0}};
        if (perm >= 0)
            gen_grad_push(g, b, in[0], gen_gop(g, "Transpose", a, 2, in[0], 0));
        break;
    }
    case GEN_GRAD_L2LOSS: {
        gen_tensor a[2] = {in[0], d};
        gen_grad_push(g, b, in[0], gen_gop(g, "Mul", a, 2, in[0], f / 2.0));
        break;
    }
    default:
        break;
    }
}

/* dy of one output port of op i: its single contribution, or their AddN. */
static gen_tensor gen_grad_sum(gen_ctx *g, gen_bwd *b, int i, int port)
{
    gen_grads *l = &b->acc[i * GEN_MAX_PORTS + port];
    if (l->n == 0)
        return GEN_NONE;
    if (l->n == 1)
        return l->t[0];
    gen_set_scope(g, "gradients", "gradients/", g->ops[i].group);
    gen_tensor sum = gen_add_n(g, l->t, l->n);
    if (sum.op >= 0) /* the sum of op i's gradients has op i's shape, batch axis or not */
        g->ops[sum.op].wgrad = i + 1;
    return sum;
}

static void gen_bwd_record_var(gen_ctx *g, gen_bwd *b, int var, gen_tensor grad)
{
    int *v = realloc(b->var, (size_t)(b->n_var + 1) * sizeof *v);
    if (v)
        b->var = v;
    gen_tensor *t = realloc(b->vgrad, (size_t)(b->n_var + 1) * sizeof *t);
    if (t)
        b->vgrad = t;
    if (!v || !t) {
        gen_fail(g, "out of memory");
        return;
    }
    b->var[b->n_var] = var;
    b->vgrad[b->n_var++] = grad;
}

/* Reverse-mode pass over the forward ops, from `loss` back to every variable read. */
static void gen_backward(gen_ctx *g, gen_bwd *b, gen_tensor loss)
{
    b->n_fwd = g->n_ops;
    b->acc = calloc((size_t)b->n_fwd * GEN_MAX_PORTS, sizeof *b->acc);
    if (!b->acc) {
        gen_fail(g, "out of memory");
        return;
    }
    gen_set_scope(g, "gradients", "gradients/", g->ops[loss.op].group);
    gen_shape scalar = gen_shape0();
    if (g->tf_graphdef) { /* tf.gradients' Fill reads them */
        gen_const(g, "Shape", gen_shape1(0));
        gen_const(g, "grad_ys_0", scalar);
    }
    gen_tensor one = gen_op_emit(g, "Fill", "Fill", GEN_GRAD_NONE, NULL, 0, &scalar, 1, 1);
    gen_grad_push(g, b, loss, one);
    for (int i = b->n_fwd - 1; i >= 0 && !g->failed; i--) {
        if (!g->ops[i].needs_grad || g->ops[i].grad == GEN_GRAD_NONE)
            continue;
        gen_tensor dy[GEN_MAX_PORTS];
        int any = 0;
        for (int p = 0; p < GEN_MAX_PORTS; p++) {
            dy[p] = p < g->ops[i].n_out ? gen_grad_sum(g, b, i, p) : GEN_NONE;
            any |= dy[p].op >= 0;
        }
        if (!any)
            continue;
        if (g->ops[i].grad == GEN_GRAD_READ) {
            gen_bwd_record_var(g, b, g->ops[i].in[0].op, dy[0]);
            continue;
        }
        gen_grad_scope(g, i);
        b->collecting = 1;
        gen_grad_emit(g, b, i, dy);
        gen_grad_gate(g, b);
    }
}

static void gen_bwd_free(gen_bwd *b)
{
    for (int i = 0; b->acc && i < b->n_fwd * GEN_MAX_PORTS; i++)
        free(b->acc[i].t);
    free(b->acc);
    free(b->var);
    free(b->vgrad);
    free(b->pend_x);
    free(b->pend_dy);
}

/* ------------------------------------------------------------------ clipping and optimizers */

/* tf.clip_by_global_norm: one L2Loss per gradient, their sum, the scale, one Mul per gradient. */
static void gen_clip(gen_ctx *g, gen_bwd *b)
{
    gen_set_scope(g, "clip_by_global_norm", "", "clip_by_global_norm");
    gen_tensor *l2 = malloc((size_t)(b->n_var ? b->n_var : 1) * sizeof *l2);
    if (!l2) {
        gen_fail(g, "out of memory");
        return;
    }
    gen_shape scalar = gen_shape0();
    for (int k = 0; k < b->n_var; k++)
        l2[k] = gen_op_emit(g, "L2Loss", "L2Loss", GEN_GRAD_NONE, &b->vgrad[k], 1, &scalar, 1,
                            2.0 * gen_shape_elems(gen_shape_of(g, b->vgrad[k])));
    gen_tensor sum =
        gen_op_emit(g, "AddN", "global_norm", GEN_GRAD_NONE, l2, b->n_var, &scalar, 1, b->n_var);
    gen_tensor norm = gen_op_emit(g, "Sqrt", "Sqrt", GEN_GRAD_NONE, &sum, 1, &scalar, 1, 1);
    gen_tensor scale = gen_op_emit(g, "RealDiv", "truediv", GEN_GRAD_NONE, &norm, 1, &scalar, 1, 1);
    for (int k = 0; k < b->n_var; k++) {
        gen_tensor in[2] = {b->vgrad[k], scale};
        b->vgrad[k] =
            gen_gop(g, "Mul", in, 2, b->vgrad[k], gen_shape_elems(gen_shape_of(g, b->vgrad[k])));
    }
    free(l2);
}

static const char *gen_opt_name(int optimizer)
{
    return optimizer == GEN_OPT_ADAM       ? "Adam"
           : optimizer == GEN_OPT_MOMENTUM ? "Momentum"
           : optimizer == GEN_OPT_RMSPROP  ? "RMSProp"
                                           : "GradientDescent";
}

/* A slot's (or beta power's) initializer, Assign and "read" (GEN_TF_*): TensorFlow creates them
 * although the step reads the variable itself. */
static void gen_tf_slot_extras(gen_ctx *g, int slot)
{
    gen_tf_initialize(g, slot, 0);
    char saved[sizeof g->scope];
    gen_scope_of(g, slot, "", saved);
    gen_tensor v = {slot, 0};
    gen_init_add(g, "Identity", "read", &v, 1);
    memcpy(g->scope, saved, sizeof saved);
}

/* A slot variable of `var` ("<var>/Momentum", "<var>/Adam_1") in the current group. */
static gen_tensor gen_slot(gen_ctx *g, int var, const char *suffix)
{
    gen_shape s = g->ops[var].out[0];
    char scope[sizeof g->scope];
    memcpy(scope, g->scope, sizeof scope);
    gen_join(g, g->scope, sizeof g->scope, g->ops[var].name, "");
    int i = gen_add(g, "VariableV2", suffix, GEN_GRAD_NONE, NULL, 0, &s, 1, 0, 1);
    memcpy(g->scope, scope, sizeof scope);
    if (i < 0)
        return GEN_NONE;
    g->ops[i].param_bytes = gen_shape_bytes(s);
    if (g->tf_graphdef)
        gen_tf_slot_extras(g, i);
    return (gen_tensor){i, 0};
}

/* The update ops of variable `var`; returns the Apply op. */
static int gen_apply(gen_ctx *g, int optimizer, int var, gen_tensor grad, const gen_tensor *beta,
                     int clipped)
{
    const char *opt = gen_opt_name(optimizer);
    char scope[sizeof g->scope], group[sizeof g->group];
    snprintf(scope, sizeof scope, "%s/update_%s", opt, g->ops[var].name);
    if (clipped)
        snprintf(group, sizeof group, "%s/update_%s", opt, g->ops[var].group);
    else
        snprintf(group, sizeof group, "gradients/%s", g->ops[var].group);
    gen_set_scope(g, scope, "", group);
    gen_tensor in[6] = {{var, 0}};
    int n = 1;
    const char *type = "ApplyGradientDescent";
    if (optimizer == GEN_OPT_MOMENTUM) {
        in[n++] = gen_slot(g, var, "Momentum");
        type = "ApplyMomentum";
    } else if (optimizer == GEN_OPT_ADAM) {
        in[n++] = gen_slot(g, var, "Adam");
        in[n++] = gen_slot(g, var, "Adam_1");
        in[n++] = beta[0];
        in[n++] = beta[1];
        type = "ApplyAdam";
    } else if (optimizer == GEN_OPT_RMSPROP) {
        in[n++] = gen_slot(g, var, "RMSProp");
        in[n++] = gen_slot(g, var, "RMSProp_1");
        type = "ApplyRMSProp";
    }
    in[n++] = grad;
    double e = gen_shape_elems(g->ops[var].out[0]);
    int a = gen_add(g, type, type, GEN_GRAD_NONE, in, n, NULL, 0, (2.0 + 3.0 * (n - 2)) * e, 0);
    if (a >= 0) { /* an Apply reads var, slots and grad and writes var and slots in place */
        g->ops[a].kernel_bytes = 4.0 * e * (2 * n - 1);
        g->ops[a].cost_us = gen_roofline_us(g->ops[a].flops, g->ops[a].kernel_bytes);
    }
    if (a >= 0) /* TensorFlow colocates the update and the slots with the variable */
        for (int k = 0; k < n - 1; k++)
            if (in[k].op >= 0 && (k == 0 || g->ops[in[k].op].anchor < 0) &&
                !(optimizer == GEN_OPT_ADAM && k >= 3))
                g->ops[k == 0 ? a : in[k].op].anchor = var;
    return a;
}

/* Adam's beta1_power / beta2_power accumulators, one group for both. */
static void gen_adam_betas(gen_ctx *g, gen_tensor *beta)
{
    gen_set_scope(g, "", "", "Adam/beta_power");
    gen_shape scalar = gen_shape0();
    for (int k = 0; k < 2; k++) {
        int i = gen_add(g, "VariableV2", k ? "beta2_power" : "beta1_power", GEN_GRAD_NONE, NULL, 0,
                        &scalar, 1, 0, 1);
        beta[k] = i < 0 ? GEN_NONE : (gen_tensor){i, 0};
        if (i >= 0)
            g->ops[i].param_bytes = 4;
        if (i >= 0 && g->tf_graphdef)
            gen_tf_slot_extras(g, i);
    }
}

/* Adam creates its beta powers colocated with the first of the variables it updates by name
 * (tf.train.AdamOptimizer._create_slots). */
static void gen_adam_anchor_betas(gen_ctx *g, const gen_bwd *b, const gen_tensor *beta)
{
    int first = -1;
    for (int k = 0; k < b->n_var; k++)
        if (first < 0 || strcmp(g->ops[b->var[k]].name, g->ops[first].name) < 0)
            first = b->var[k];
    for (int k = 0; k < 2 && first >= 0; k++)
        if (beta[k].op >= 0)
            g->ops[beta[k].op].anchor = first;
}

/*
 * Adam's beta powers advance once every update is done: "Adam/mul{,_1}" (control inputs from every
 * ApplyAdam) and "Adam/Assign{,_1}".  No train NoOp is emitted: tf.group's NoOp only collects
 * control edges and costs nothing, and the update ops are what a step fetches.
 */
static void gen_adam_advance(gen_ctx *g, const int *apply, int n_apply, const gen_tensor *beta)
{
    gen_set_scope(g, "Adam", "", "Adam");
    gen_tensor *in = malloc((size_t)(n_apply + 1) * sizeof *in);
    if (!in) {
        gen_fail(g, "out of memory");
        return;
    }
    for (int k = 0; k < n_apply; k++)
        in[k] = (gen_tensor){apply[k], 0};
    gen_shape scalar = gen_shape0();
    if (g->tf_graphdef) /* the hyper-parameters every ApplyAdam reads */
        for (int k = 0; k < 4; k++)
            gen_const(g,
                      k == 0   ? "learning_rate"
                      : k == 1 ? "beta1"
                      : k == 2 ? "beta2"
                               : "epsilon",
                      scalar);
    for (int k = 0; k < 2; k++) {
        in[n_apply] = beta[k];
        gen_tensor m = gen_op_emit(g, "Mul", "mul", GEN_GRAD_NONE, in, n_apply + 1, &scalar, 1, 1);
        if (m.op >= 0) /* _finish runs both updates under colocate_with(beta1_power) */
            g->ops[m.op].anchor = beta[0].op;
        gen_tensor a[2] = {beta[k], m};
        gen_op_emit(g, "Assign", "Assign", GEN_GRAD_NONE, a, 2, &scalar, 1, 1);
    }
    free(in);
}

void gen_train(gen_ctx *g, gen_tensor loss, int optimizer, int clip)
{
    if (g->failed || loss.op < 0)
        return;
    gen_saved saved;
    gen_save(g, &saved);
    gen_bwd b = {0};
    gen_backward(g, &b, loss);
    /* Updates in variable creation order, as TensorFlow lists trainable variables. */
    for (int i = 1; i < b.n_var; i++)
        for (int j = i; j > 0 && b.var[j - 1] > b.var[j]; j--) {
            int tv = b.var[j];
            b.var[j] = b.var[j - 1];
            b.var[j - 1] = tv;
            gen_tensor tg = b.vgrad[j];
            b.vgrad[j] = b.vgrad[j - 1];
            b.vgrad[j - 1] = tg;
        }
    if (clip && !g->failed)
        gen_clip(g, &b);
    gen_tensor beta[2] = {GEN_NONE, GEN_NONE};
    if (optimizer == GEN_OPT_ADAM && !g->failed)
        gen_adam_betas(g, beta);
    int *apply = malloc((size_t)(b.n_var ? b.n_var : 1) * sizeof *apply);
    int n_apply = 0;
    for (int k = 0; apply && k < b.n_var && !g->failed; k++)
        apply[n_apply++] = gen_apply(g, optimizer, b.var[k], b.vgrad[k], beta, clip);
    if (!apply)
        gen_fail(g, "out of memory");
    else if (optimizer == GEN_OPT_ADAM && !g->failed) {
        gen_adam_anchor_betas(g, &b, beta);
        gen_adam_advance(g, apply, n_apply, beta);
    } else if (optimizer == GEN_OPT_RMSPROP && g->tf_graphdef && !g->failed) {
        gen_set_scope(g, "RMSProp", "", "RMSProp"); /* the hyper-parameters every Apply reads */
        static const char *const hyper[] = {"learning_rate", "decay", "momentum", "epsilon"};
        for (int k = 0; k < 4; k++)
            gen_const(g, hyper[k], gen_shape0());
    }
    free(apply);
    gen_bwd_free(&b);
    gen_restore(g, &saved);
}

/* ------------------------------------------------------------------ losses and averages */

void gen_add_loss(gen_ctx *g, gen_tensor loss)
{
    if (g->failed || loss.op < 0)
        return;
    if (g->n_losses == g->cap_losses) {
        int cap = g->cap_losses ? 2 * g->cap_losses : 64;
        gen_tensor *p = realloc(g->losses, (size_t)cap * sizeof *p);
        if (!p) {
            gen_fail(g, "out of memory");
            return;
        }
        g->losses = p;
        g->cap_losses = cap;
    }
    g->losses[g->n_losses++] = loss;
}

gen_tensor gen_total_loss(gen_ctx *g, gen_tensor loss)
{
    if (g->failed || g->n_losses == 0)
        return loss;
    gen_tensor *in = malloc((size_t)(g->n_losses + 1) * sizeof *in);
    if (!in) {
        gen_fail(g, "out of memory");
        return GEN_NONE;
    }
    in[0] = loss;
    memcpy(in + 1, g->losses, (size_t)g->n_losses * sizeof *in);
    gen_shape scalar = gen_shape0();
    gen_tensor t = gen_op_emit(g, "AddN", "total_loss", GEN_GRAD_IDENTITY, in, g->n_losses + 1,
                               &scalar, 1, g->n_losses);
    free(in);
    return t;
}

/* What variable v's initializer Assign writes (the variable itself when it has none). */
static gen_tensor gen_initial_value(const gen_ctx *g, int v)
{
    for (int i = v + 1; i < g->n_ops; i++)
        if (g->ops[i].init && g->ops[i].n_in == 2 && g->ops[i].in[0].op == v &&
            strcmp(g->ops[i].type, "Assign") == 0)
            return g->ops[i].in[1];
    return (gen_tensor){v, 0};
}

/*
 * The initial value of EMA shadow `sh` under GEN_TF_*: TensorFlow 1.x creates the slot from
 * var.initialized_value(), a tf.cond on IsVariableInitialized (Switch, switch_t, switch_f,
 * pred_id, the read through a RefSwitch, the initial value through a Switch, Merge); then the
 * shadow's Assign and read.
 */
static void gen_ema_initialize(gen_ctx *g, int v, int sh)
{
    char saved[sizeof g->scope];
    gen_scope_of(g, v, "", saved);
    gen_tensor var = {v, 0};
    gen_tensor pred = {gen_init_add(g, "IsVariableInitialized", "IsVariableInitialized", &var, 1),
                       0};
    gen_tensor pp[2] = {pred, pred};
    gen_tensor sw = {gen_init_add(g, "Switch", "cond/Switch", pp, 2), 0};
    gen_init_add(g, "Identity", "cond/switch_t", &sw, 1);
    gen_init_add(g, "Identity", "cond/switch_f", &sw, 1);
    gen_tensor id = {gen_init_add(g, "Identity", "cond/pred_id", &pred, 1), 0};
    gen_tensor rs[2] = {var, id};
    gen_tensor rsw = {gen_init_add(g, "RefSwitch", "cond/read/Switch", rs, 2), 0};
    gen_tensor rd = {gen_init_add(g, "Identity", "cond/read", &rsw, 1), 0};
    gen_tensor iv[2] = {gen_initial_value(g, v), id};
    gen_tensor isw = {gen_init_add(g, "Switch", "cond/Switch_1", iv, 2), 0};
    gen_tensor mg[2] = {isw, rd};
    gen_tensor merged = {gen_init_add(g, "Merge", "cond/Merge", mg, 2), 0};
    memcpy(g->scope, saved, sizeof saved);
    gen_scope_of(g, sh, "", saved);
    gen_tensor as[2] = {{sh, 0}, merged};
    gen_init_add(g, "Assign", "Assign", as, 2);
    gen_tensor shadow = {sh, 0};
    gen_init_add(g, "Identity", "read", &shadow, 1);
    memcpy(g->scope, saved, sizeof saved);
}

/* The shadow of variable v and its update (assign_moving_average with a tensor decay: its own
 * 1 - decay, then sub, mul, AssignSub). */
static void gen_ema_var(gen_ctx *g, int v, gen_tensor decay)
{
    gen_shape s = g->ops[v].out[0], scalar = gen_shape0();
    double e = gen_shape_elems(s);
    char saved[sizeof g->scope];
    gen_scope_of(g, v, "", saved);
    int sh =
        gen_add(g, "VariableV2", "ExponentialMovingAverage", GEN_GRAD_NONE, NULL, 0, &s, 1, 0, 1);
    memcpy(g->scope, saved, sizeof saved);
    if (sh < 0)
        return;
    g->ops[sh].param_bytes = gen_shape_bytes(s);
    if (g->tf_graphdef)
        gen_ema_initialize(g, v, sh);
    gen_tensor shadow = {sh, 0}, value = {v + 1, 0}; /* v + 1: the variable's read */
    gen_push(g, GEN_SCOPE, "AssignMovingAvg");
    gen_tensor o[2] = {gen_const(g, "decay/x", scalar), decay};
    gen_tensor one_minus = gen_op_emit(g, "Sub", "decay", GEN_GRAD_NONE, o, 2, &scalar, 1, 1);
    gen_tensor d[2] = {shadow, value};
    gen_tensor diff = gen_op_emit(g, "Sub", "sub", GEN_GRAD_NONE, d, 2, &s, 1, e);
    gen_tensor m[2] = {diff, one_minus};
    gen_tensor step = gen_op_emit(g, "Mul", "mul", GEN_GRAD_NONE, m, 2, &s, 1, e);
    gen_tensor a[2] = {shadow, step};
    gen_op_emit(g, "AssignSub", "AssignMovingAvg", GEN_GRAD_NONE, a, 2, &s, 1, e);
    gen_pop(g);
}

void gen_tf_ema(gen_ctx *g)
{
    if (g->failed)
        return;
    gen_saved saved;
    gen_save(g, &saved);
    gen_set_scope(g, "ExponentialMovingAverage", "", "ExponentialMovingAverage");
    gen_shape scalar = gen_shape0();
    /* decay = min(decay, (1 + n) / (10 + n)) with n = cast(global_step) */
    gen_tensor n = gen_source(g, "VariableV2", "global_step", &scalar, 1);
    n = gen_op_emit(g, "Cast", "Cast", GEN_GRAD_NONE, &n, 1, &scalar, 1, 1);
    gen_tensor lo[2] = {gen_const(g, "add/x", scalar), n};
    gen_tensor hi[2] = {gen_const(g, "add_1/x", scalar), n};
    gen_tensor q[2] = {gen_op_emit(g, "AddV2", "add", GEN_GRAD_NONE, lo, 2, &scalar, 1, 1),
                       gen_op_emit(g, "AddV2", "add_1", GEN_GRAD_NONE, hi, 2, &scalar, 1, 1)};
    gen_tensor r[2] = {gen_const(g, "decay", scalar),
                       gen_op_emit(g, "RealDiv", "truediv", GEN_GRAD_NONE, q, 2, &scalar, 1, 1)};
    gen_tensor decay = gen_op_emit(g, "Minimum", "Minimum", GEN_GRAD_NONE, r, 2, &scalar, 1, 1);
    int n_ops = g->n_ops;
    for (int v = 0; v < n_ops && !g->failed; v++)
        if (g->ops[v].model_var)
            gen_ema_var(g, v, decay);
    gen_restore(g, &saved);
}

/* ------------------------------------------------------------------ annotations */

/* Does op o's first output carry the batch dimension first? */
static int gen_has_batch_axis(const gen_ctx *g, const gen_op *o)
{
    if (o->n_out < 1 || o->out[0].rank < 1)
        return 0;
    long long d = o->out[0].d[0];
    return g->batch > 0 && d >= g->batch && d % g->batch == 0;
}

/* Bookkeeping that forwards its input unchanged (the tuple's Identity, the gating NoOp). */
static int gen_is_forwarding(const gen_op *o)
{
    return strcmp(o->type, "Identity") == 0 || strcmp(o->type, "NoOp") == 0;
}

/* Split class of op i from its inputs' classes (see gen_annotate in gen.h). */
static unsigned char gen_split_of(const gen_ctx *g, int i, const unsigned char *split)
{
    const gen_op *o = &g->ops[i];
    if (strncmp(o->type, "Apply", 5) == 0 || o->init)
        return PB_SPLIT_NONE;
    if (o->n_in == 0) /* data and initial states have a batch axis, variables do not */
        return gen_has_batch_axis(g, o) && strcmp(o->type, "VariableV2") != 0 ? PB_SPLIT_BATCH
                                                                              : PB_SPLIT_NONE;
    if (o->bytes == 0 && o->flops == 0 && !gen_is_forwarding(o))
        return PB_SPLIT_NONE; /* shape arithmetic on the host */
    int batch = 0, sum = 0;
    for (int k = 0; k < o->n_in; k++) {
        batch |= split[o->in[k].op] == PB_SPLIT_BATCH;
        sum |= split[o->in[k].op] == PB_SPLIT_SUM;
    }
    if (batch) { /* a weight's gradient sums over the batch; an activation's keeps it */
        if (o->wgrad)
            return split[o->wgrad - 1] == PB_SPLIT_BATCH ? PB_SPLIT_BATCH : PB_SPLIT_SUM;
        if (strcmp(o->type, "UnsortedSegmentSum") == 0)
            return PB_SPLIT_SUM;
        return gen_has_batch_axis(g, o) ? PB_SPLIT_BATCH : PB_SPLIT_SUM;
    }
    if (sum) { /* partial sums stay partial through linear ops */
        static const char *const linear[] = {"AddN", "AddV2", "Sum", "Reshape", "Neg", "Slice"};
        for (size_t k = 0; k < sizeof linear / sizeof linear[0]; k++)
            if (strcmp(o->type, linear[k]) == 0)
                return PB_SPLIT_SUM;
        return gen_is_forwarding(o) ? PB_SPLIT_SUM : PB_SPLIT_NONE;
    }
    return PB_SPLIT_NONE;
}

int gen_annotate(const gen_ctx *g, gen_annotations *a, pb_error *err)
{
    memset(a, 0, sizeof *a);
    if (g->failed)
        return pb_errorf(err, "%s", g->err.msg);
    size_t n = (size_t)(g->n_ops ? g->n_ops : 1);
    a->role = calloc(n, 1);
    a->split = calloc(n, 1);
    a->colocation = malloc(n * sizeof *a->colocation);
    if (!a->role || !a->split || !a->colocation) {
        gen_annotations_free(a);
        return pb_errorf(err, "out of memory");
    }
    a->n = g->n_ops;
    for (int i = 0; i < g->n_ops; i++) {
        a->split[i] = gen_split_of(g, i, a->split);
        a->colocation[i] = -1;
    }
    int classes = 0;
    for (int i = 0; i < g->n_ops; i++) {
        const gen_op *o = &g->ops[i];
        if (strncmp(o->type, "Apply", 5) != 0 || o->n_in < 2)
            continue;
        a->role[i] = PB_ROLE_APPLY;
        a->role[o->in[o->n_in - 1].op] = PB_ROLE_GRADIENT;
        /* the variable and its slots (same shape); the scalar beta powers feed every update */
        int var = o->in[0].op, cls = classes++;
        a->colocation[i] = cls;
        for (int k = 0; k < o->n_in - 1; k++) {
            const gen_op *v = &g->ops[o->in[k].op];
            if (strcmp(v->type, "VariableV2") != 0)
                continue;
            a->role[o->in[k].op] = PB_ROLE_PARAMETER;
            if (gen_shape_elems(v->out[0]) == gen_shape_elems(g->ops[var].out[0]) &&
                (k == 0 || v->out[0].rank > 0))
                a->colocation[o->in[k].op] = cls;
        }
    }
    /* reads and initial assignments go with their variable */
    for (int i = 0; i < g->n_ops; i++) {
        const gen_op *o = &g->ops[i];
        if (o->n_in >= 1 && a->colocation[o->in[0].op] >= 0 &&
            strcmp(g->ops[o->in[0].op].type, "VariableV2") == 0 &&
            (strcmp(o->type, "Identity") == 0 || strcmp(o->type, "Assign") == 0))
            a->colocation[i] = a->colocation[o->in[0].op];
    }
    return PB_OK;
}

void gen_annotations_free(gen_annotations *a)
{
    free(a->role);
    free(a->split);
    free(a->colocation);
    memset(a, 0, sizeof *a);
}

/* ------------------------------------------------------------------ building the pb_graph */

/* The op whose device op i takes (gen_options.colocate): its anchor's own anchor, and so on; an
 * Assign to a variable outside the initializer goes with the variable. -1 for none. */
static int gen_anchor_of(const gen_ctx *g, int i)
{
    const gen_op *o = &g->ops[i];
    int a = o->anchor;
    if (a < 0 && !o->init && o->n_in >= 1 && strcmp(g->ops[o->in[0].op].type, "VariableV2") == 0 &&
        (strcmp(o->type, "Assign") == 0 || strcmp(o->type, "AssignAdd") == 0 ||
         strcmp(o->type, "AssignSub") == 0))
        a = o->in[0].op;
    for (int hops = 0; a >= 0 && g->ops[a].anchor >= 0 && hops < g->n_ops; hops++)
        a = g->ops[a].anchor;
    return a == i ? -1 : a;
}

int gen_finish(gen_ctx *g, const char *name, pb_graph **out, pb_error *err)
{
    return gen_finish_annotated(g, name, NULL, out, err);
}

int gen_finish_annotated(gen_ctx *g, const char *name, const gen_annotations *ann, pb_graph **out,
                         pb_error *err)
{
    *out = NULL;
    if (g->failed)
        return pb_errorf(err, "%s: %s", name, g->err.msg);
    graph_builder *b = graph_builder_new(name);
    char origin[96];
    snprintf(origin, sizeof origin, "placebench dataset %d, cost_model %s", GEN_DATASET_VERSION,
             devcost_model_name((devcost_model)g->cost_model));
    if (!b || graph_builder_set_origin(b, origin)) {
        graph_builder_free(b);
        return pb_errorf(err, "out of memory");
    }
    pb_error inner;
    for (int i = 0; i < g->n_ops; i++) {
        const gen_op *o = &g->ops[i];
        double ports[GEN_MAX_PORTS];
        for (int p = 0; p < o->n_out; p++)
            ports[p] = p > 0 && g->opt.first_port_only ? 0.0 : gen_shape_bytes(o->out[p]);
        graph_node_attrs a = {.type = o->type,
                              .cost_us = o->kernel ? gen_kernel_us(g, o) : o->cost_us,
                              .flops = o->flops,
                              .bytes_accessed = o->bytes,
                              .param_bytes = o->param_bytes,
                              .n_ports = o->n_out,
                              .port_bytes = ports,
                              .group = o->group,
                              .colocation = ann ? ann->colocation[i] : -1,
                              .role = ann ? ann->role[i] : PB_ROLE_OP,
                              .split = ann ? ann->split[i] : PB_SPLIT_UNSET};
        if (graph_add_node(b, o->name, &a, &inner) < 0) {
            graph_builder_free(b);
            return pb_errorf(err, "%s: %s", name, inner.msg);
        }
    }
    for (int i = 0; i < g->n_ops; i++)
        for (int k = 0; k < g->ops[i].n_in; k++)
            if (graph_add_edge(b, g->ops[i].in[k].op, i, g->ops[i].in[k].port, &inner) < 0) {
                graph_builder_free(b);
                return pb_errorf(err, "%s: %s", name, inner.msg);
            }
    for (int i = 0; g->opt.colocate && i < g->n_ops; i++) {
        int a = gen_anchor_of(g, i);
        if (a >= 0 && graph_set_placed_with(b, i, a, &inner) != PB_OK) {
            graph_builder_free(b);
            return pb_errorf(err, "%s: %s", name, inner.msg);
        }
    }
    if (graph_build(b, out, &inner) != PB_OK)
        return pb_errorf(err, "%s: %s", name, inner.msg);
    return PB_OK;
}
