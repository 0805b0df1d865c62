/* kernel_compare.c — times the placers' dense-layer GEMM shapes single-threaded with OpenBLAS
 * (through pb_nn_gemm, as the product calls it), libxsmm's JIT kernels and the project's fused
 * kernels, and checks whether each gives OpenBLAS's bits.  A measurement, not part of the product
 * (README, "Comparing the GEMM kernels with libxsmm").
 *
 * usage: kernel_compare SHAPES.txt [--graph NAME] [--top N] [--budget MS]
 * SHAPES.txt lines: graph path ta tb m n k beta count (tests/tools/kernel-compare/shapes-8dev.txt). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libxsmm.h>

#include "core/clock.h"
#include "nn/nn_internal.h"
#include "placebench.h"

enum { V_BLAS, V_XSMM, V_FUSED, V_COUNT };

/* Which GEMM of a dense layer a shape is: y = x W + b (bias rows copied into C, beta 1; or the
 * fused kernel with the bias), dW += x^T dz, dx += dz W^T. */
enum { K_FWD, K_DW, K_DX, K_OTHER };
static const char *const kind_name[] = {"fwd", "dW", "dx", "other"};

typedef struct {
    char graph[32], path[8];
    int ta, tb, m, n, k;
    float beta;
    long count;
    int kind;
    double sec[V_COUNT]; /* per call; 0 = not available */
    int same[V_COUNT];   /* 1 = OpenBLAS's bits, 0 = differ, -1 = not run */
    int xsmm_copy;       /* libxsmm had no transposed kernel: an explicit transpose is timed */
} shape;

/* Operands of one shape, row-major as pb_nn_gemm takes them. */
typedef struct {
    float *a, *b, *c, *c0, *bias, *t; /* t: scratch for libxsmm's explicit transpose */
    int lda, ldb;
    libxsmm_smmfunction xsmm;
} operands;

static int shape_kind(const shape *s)
{
    if (!s->ta && !s->tb && s->beta == 1.0f)
        return K_FWD;
    if (s->ta && !s->tb && s->beta == 1.0f)
        return K_DW;
    if (!s->ta && s->tb && s->beta == 1.0f)
        return K_DX;
    return K_OTHER;
}

static float *floats(size_t count, pb_rng *rng)
{
    float *v = malloc((count ? count : 1) * sizeof *v);
    if (!v) {
        fprintf(stderr, "kernel_compare: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < count; i++)
        v[i] = rng ? (float)(2 * pb_rng_uniform(rng) - 1) : 0.0f;
    return v;
}

/* The forward pass starts C from the bias rows (pb_nn_linear's path); the gradients accumulate
 * onto what C holds. */
static void reset_c(const shape *s, operands *o)
{
    if (s->kind == K_FWD)
        for (int i = 0; i < s->m; i++)
            memcpy(o->c + (size_t)i * s->n, o->bias, (size_t)s->n * sizeof(float));
    else
        memcpy(o->c, o->c0, (size_t)s->m * s->n * sizeof(float));
}

/* rows x cols row-major src into cols x rows dst. */
static void transpose(int rows, int cols, const float *src, float *dst)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            dst[(size_t)j * rows + i] = src[(size_t)i * cols + j];
}

/* libxsmm is column-major: row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T on
 * the same buffers, so A and B swap and so do their transpose flags.  libxsmm 1.17's JIT may
 * refuse transposed operands; then the transposed operand is copied (and the copy timed). */
static libxsmm_smmfunction xsmm_kernel(const shape *s, const operands *o, int with_trans)
{
    const float alpha = 1.0f, beta = s->beta;
    int flags = with_trans ? (s->tb ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) |
                                 (s->ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0)
                           : 0;
    libxsmm_blasint lda = with_trans ? o->ldb : s->n, ldb = with_trans ? o->lda : s->k;
    libxsmm_blasint ldc = s->n;
    return libxsmm_smmdispatch(s->n, s->m, s->k, &lda, &ldb, &ldc, &alpha, &beta, &flags, NULL);
}

static void run_xsmm(const shape *s, operands *o)
{
    if (s->kind == K_FWD)
        reset_c(s, o);
    const float *a = o->a, *b = o->b;
    if (o->t && s->ta) { /* op(A) = A^T, A stored k x m */
        transpose(s->k, s->m, o->a, o->t);
        a = o->t;
    } else if (o->t && s->tb) { /* op(B) = B^T, B stored n x k */
        transpose(s->n, s->k, o->b, o->t);
        b = o->t;
    }
    o->xsmm(b, a, o->c);
}

static void run(int v, const shape *s, operands *o)
{
    switch (v) {
    case V_BLAS:
        if (s->kind == K_FWD)
            reset_c(s, o);
        pb_nn_gemm(s->ta, s->tb, s->m, s->n, s->k, 1.0f, o->a, o->lda, o->b, o->ldb, s->beta, o->c,
                   s->n);
        break;
    case V_XSMM:
        run_xsmm(s, o);
        break;
    case V_FUSED: {
        int isa = nn_cpu_isa();
        if (s->kind == K_FWD)
            nn_fused_linear(isa, s->m, s->k, s->n, o->a, o->b, o->bias, 0, o->c);
        else if (s->kind == K_DW) /* dW (k_in x n) += x^T dz: x is A (m = in rows stored k x m) */
            nn_fused_weight_grad(isa, s->k, s->m, s->n, o->a, o->b, o->c);
        else /* dx (m x in) += dz W^T: dz is A (m x k = out), W is B stored n x k */
            nn_fused_input_grad(isa, s->m, s->n, s->k, o->a, o->b, o->c);
        break;
    }
    }
}

/* Seconds per call: the best of five batches of CPU time of this thread, each batch at least
 * budget / 5 seconds. */
static double time_variant(int v, const shape *s, operands *o, double budget)
{
    long reps = 1;
    double best = 0;
    for (int round = 0, timed = 0; timed < 5 && round < 40; round++) {
        reset_c(s, o);
        double t0 = pb_clock_seconds(CLOCK_THREAD_CPUTIME_ID);
        for (long r = 0; r < reps; r++)
            run(v, s, o);
        double dt = pb_clock_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
        if (dt < budget / 5) {
            reps *= 2;
            continue;
        }
        timed++;
        if (best == 0 || dt / reps < best)
            best = dt / reps;
    }
    return best;
}

static void measure(shape *s, double budget, pb_rng *rng)
{
    operands o = {0};
    int am = s->ta ? s->k : s->m, ak = s->ta ? s->m : s->k; /* A stored am x ak */
    int bk = s->tb ? s->n : s->k, bn = s->tb ? s->k : s->n; /* B stored bk x bn */
    o.lda = ak;
    o.ldb = bn;
    o.a = floats((size_t)am * ak, rng);
    o.b = floats((size_t)bk * bn, rng);
    o.c0 = floats((size_t)s->m * s->n, rng);
    o.bias = floats((size_t)s->n, rng);
    o.c = floats((size_t)s->m * s->n, NULL);
    float *ref = floats((size_t)s->m * s->n, NULL);

    int has_fused = s->kind != K_OTHER;
    o.xsmm = xsmm_kernel(s, &o, 1);
    if (!o.xsmm && (s->ta || s->tb)) {
        o.xsmm = xsmm_kernel(s, &o, 0);
        o.t = floats((size_t)s->k * (s->ta ? s->m : s->n), NULL);
        s->xsmm_copy = 1;
    }
    for (int v = 0; v < V_COUNT; v++) {
        s->sec[v] = 0;
        s->same[v] = -1;
        if ((v == V_XSMM && !o.xsmm) || (v == V_FUSED && !has_fused))
            continue;
        reset_c(s, &o);
        run(v, s, &o);
        if (v == V_BLAS)
            memcpy(ref, o.c, (size_t)s->m * s->n * sizeof(float));
        s->same[v] = memcmp(ref, o.c, (size_t)s->m * s->n * sizeof(float)) == 0;
        s->sec[v] = time_variant(v, s, &o, budget);
    }
    free(o.a);
    free(o.b);
    free(o.c);
    free(o.c0);
    free(o.bias);
    free(o.t);
    free(ref);
}

/* Seconds per libxsmm_smmdispatch of a 26 x 4 x 26 kernel it has already generated. */
static double dispatch_seconds(void)
{
    const float alpha = 1.0f, beta = 1.0f;
    const int flags = 0, reps = 100000;
    volatile libxsmm_smmfunction sink = NULL;
    sink = libxsmm_smmdispatch(26, 4, 26, NULL, NULL, NULL, &alpha, &beta, &flags, NULL);
    double t0 = pb_clock_seconds(CLOCK_THREAD_CPUTIME_ID);
    for (int r = 0; r < reps; r++)
        sink = libxsmm_smmdispatch(26, 4, 26, NULL, NULL, NULL, &alpha, &beta, &flags, NULL);
    (void)sink;
    return (pb_clock_seconds(CLOCK_THREAD_CPUTIME_ID) - t0) / reps;
}

static int read_shapes(const char *file, const char *only, shape **out, int *count)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        fprintf(stderr, "kernel_compare: %s: %s\n", file, strerror(errno));
        return -1;
    }
    int cap = 0, n = 0, line = 0;
    shape *v = NULL;
    char buf[256];
    while (fgets(buf, sizeof buf, f)) {
        line++;
        if (buf[0] == '#' || buf[0] == '\n')
            continue;
        shape s = {0};
        if (sscanf(buf, "%31s %7s %d %d %d %d %d %f %ld", s.graph, s.path, &s.ta, &s.tb, &s.m, &s.n,
                   &s.k, &s.beta, &s.count) != 9 ||
            s.m < 1 || s.n < 1 || s.k < 1 || s.count < 1) {
            fprintf(stderr,
                    "kernel_compare: %s:%d: expected 'graph path ta tb m n k beta count' "
                    "with m, n, k, count >= 1\n",
                    file, line);
            fclose(f);
            free(v);
            return -1;
        }
        if (only && strcmp(only, s.graph) != 0)
            continue;
        s.kind = shape_kind(&s);
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            shape *grown = realloc(v, (size_t)cap * sizeof *v);
            if (!grown) {
                fprintf(stderr, "kernel_compare: out of memory\n");
                exit(1);
            }
            v = grown;
        }
        v[n++] = s;
    }
    fclose(f);
    *out = v;
    *count = n;
    return 0;
}

/* The product's kernel for a shape: the fused one for its fused calls, OpenBLAS otherwise. */
static int product_variant(const shape *s)
{
    return strcmp(s->path, "fused") == 0 ? V_FUSED : V_BLAS;
}

static double gflops(const shape *s, int v)
{
    return s->sec[v] > 0 ? 2.0 * s->m * s->n * s->k / s->sec[v] * 1e-9 : 0;
}

static int by_weight(const void *pa, const void *pb)
{
    const shape *a = pa, *b = pb;
    double wa = a->count * a->sec[product_variant(a)], wb = b->count * b->sec[product_variant(b)];
    return wa < wb ? 1 : wa > wb ? -1 : 0;
}

static void print_shape(const shape *s)
{
    printf("| %s | %s %s | %d x %d x %d | %ld |", s->graph, kind_name[s->kind], s->path, s->m, s->n,
           s->k, s->count);
    for (int v = 0; v < V_COUNT; v++) {
        if (s->sec[v] > 0)
            printf(" %.0f ns %.1f%s |", s->sec[v] * 1e9, gflops(s, v),
                   v == V_BLAS  ? ""
                   : s->same[v] ? " ="
                                : " ≠");
        else
            printf(" - |");
    }
    printf("%s\n", s->xsmm_copy ? " (libxsmm: transpose copied)" : "");
}

/* Time in a run of the calls of shapes v[i..j) that satisfy keep, with each kernel (the product's
 * where a kernel does not cover a shape), with the fastest per shape, and with the fastest of those
 * that give OpenBLAS's bits; calls and calls whose fastest kernel gives OpenBLAS's bits. */
typedef struct {
    long calls, same_calls;
    double product, alt[V_COUNT], best, best_same;
} totals;

static void add_shape(totals *t, const shape *s)
{
    int prod = product_variant(s), best = prod, best_same = V_BLAS;
    t->calls += s->count;
    t->product += s->count * s->sec[prod];
    for (int a = 0; a < V_COUNT; a++) {
        t->alt[a] += s->count * s->sec[s->sec[a] > 0 ? a : prod];
        if (s->sec[a] > 0 && s->sec[a] < s->sec[best])
            best = a;
        if (s->sec[a] > 0 && s->same[a] == 1 && s->sec[a] < s->sec[best_same])
            best_same = a;
    }
    t->best += s->count * s->sec[best];
    t->best_same += s->count * s->sec[best_same];
    if (s->same[best] == 1)
        t->same_calls += s->count;
}

static void print_totals_row(const char *graph, const char *what, const totals *t)
{
    printf("| %s | %s | %ld | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.0f %% |\n", graph, what,
           t->calls, t->product, t->alt[V_BLAS], t->alt[V_XSMM], t->alt[V_FUSED], t->best,
           t->best_same, 100.0 * t->same_calls / t->calls);
}

/* Per graph and per GEMM (fwd/dW/dx and the product's path), then per graph in all. */
static void print_totals(const shape *v, int n)
{
    printf("Seconds of CPU time a 20-episode run spends in these GEMMs with each kernel (where a "
           "kernel does not cover a shape, the product's):\n\n| graph | GEMM | calls | product | "
           "all openblas | libxsmm | fused | fastest per shape | fastest with OpenBLAS's bits | "
           "calls whose fastest gives OpenBLAS's bits |\n"
           "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    static const char *const paths[] = {"blas", "fused"};
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && strcmp(v[j].graph, v[i].graph) == 0)
            j++;
        for (int kind = K_FWD; kind <= K_OTHER; kind++)
            for (int p = 0; p < 2; p++) {
                totals t = {0};
                for (int q = i; q < j; q++)
                    if (v[q].kind == kind && strcmp(v[q].path, paths[p]) == 0)
                        add_shape(&t, &v[q]);
                if (t.calls) {
                    char what[32];
                    snprintf(what, sizeof what, "%s %s", kind_name[kind], paths[p]);
                    print_totals_row(v[i].graph, what, &t);
                }
            }
        totals all = {0};
        for (int q = i; q < j; q++)
            add_shape(&all, &v[q]);
        print_totals_row(v[i].graph, "**all**", &all);
        i = j;
    }
}

/* Over all shapes: how many each kernel computes with OpenBLAS's bits. */
static void print_bits(const shape *v, int n)
{
    static const char *const name[V_COUNT] = {"openblas", "libxsmm", "fused"};
    printf("\nShapes computed with OpenBLAS's bits:");
    for (int a = V_XSMM; a < V_COUNT; a++) {
        int run = 0, same = 0;
        for (int i = 0; i < n; i++) {
            run += v[i].same[a] >= 0;
            same += v[i].same[a] == 1;
        }
        printf(" %s %d of %d;", name[a], same, run);
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *file = NULL, *only = NULL;
    int top = 40;
    double budget = 2e-3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--graph") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--top") == 0 && i + 1 < argc)
            top = atoi(argv[++i]);
        else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc)
            budget = atof(argv[++i]) * 1e-3;
        else if (argv[i][0] != '-' && !file)
            file = argv[i];
        else {
            fprintf(stderr, "usage: kernel_compare SHAPES.txt [--graph NAME] [--top N] "
                            "[--budget MS]\n");
            return 2;
        }
    }
    if (!file || budget <= 0) {
        fprintf(stderr,
                "usage: kernel_compare SHAPES.txt [--graph NAME] [--top N] [--budget MS]\n");
        return 2;
    }
    shape *v;
    int n;
    if (read_shapes(file, only, &v, &n) != 0)
        return 1;
    nn_blas_threads(1);
    libxsmm_init();
    const char *core = getenv("OPENBLAS_CORETYPE");
    printf("kernel_compare: %d shapes; OPENBLAS_CORETYPE=%s; fused isa %s; libxsmm %s target %s;"
           " per shape and kernel the best of 5 batches of >= %.2f ms CPU time\n\n",
           n, core ? core : "(unset: native)", nn_cpu_isa_name(nn_cpu_isa()), LIBXSMM_VERSION,
           libxsmm_get_target_arch(), budget * 1e3 / 5);
    printf("libxsmm dispatch of a kernel already generated (the lookup a product would pay per "
           "call without caching the pointer): %.0f ns\n\n",
           dispatch_seconds() * 1e9);
    pb_rng rng;
    pb_rng_seed(&rng, 21);
    for (int i = 0; i < n; i++)
        measure(&v[i], budget, &rng);
    print_totals(v, n);
    print_bits(v, n);

    printf("\nShapes by time in a run with the product's kernel (ns per call, GFLOP/s; = / ≠: "
           "OpenBLAS's bits or not):\n\n| graph | GEMM | m x n x k | calls | openblas | libxsmm "
           "| fused |\n|---|---|--:|--:|--:|--:|--:|\n");
    qsort(v, (size_t)n, sizeof *v, by_weight);
    for (int i = 0; i < n && i < top; i++)
        print_shape(&v[i]);
    libxsmm_finalize();
    free(v);
    return 0;
}
