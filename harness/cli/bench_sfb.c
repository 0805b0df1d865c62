/* bench_sfb.c — `placebench bench sfb`: TAG's SFB ILP (plugins/shared/sfb, through the dp-nccl
 * placer's sfb option) on every gradient of the TAG zoo models: solve times and counts, and
 * Tables 5 and 6 (step time with and without SFB, the op types duplicated) beside the paper's. */
#include "cli.h"
#include "config/cluster.h"

#include "data/gen/gen_model.h"
#include "model/graph.h"
#include "plugin/loader.h"
#include "report/papers.h"
#include "run/place.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char bench_sfb_usage[] =
    "placebench bench sfb [MODEL]... [--batch 4] [--cluster tag-sfb] [--devices 2] [--depth D] "
    "[--time-limit S] [--max-candidates K] [--mode gradient|reference] [--sync paper|nccl] "
    "[--seed S] [--top K]";

/* TAG's six models (Table 5's rows); the Transformer only when the zoo has it. */
static const char *const bench_sfb_models[] = {"inceptionv3", "resnet101",  "vgg19",
                                               "transformer", "bert-small", "bert-large"};

static void bench_sfb_help(void)
{
    printf(
        "usage: %s\n\n"
        "TAG's sufficient factor broadcasting (paper 4.2.3; specs/tag.md 9) on DP-NCCL: for\n"
        "every gradient of every model, the ILP that picks the ops to duplicate instead of\n"
        "synchronising the gradient, built and solved with CBC (the dp-nccl placer with\n"
        "option sfb=true).  Each model is generated from the zoo at the batch given, placed\n"
        "by dp-nccl without and with SFB, and simulated by the topology simulator.\n\n"
        "Prints per model: ILPs solved (one per gradient), candidate ops per ILP (median, max),\n"
        "solve time per ILP in ms (building and solving, median and max), ILPs stopped by\n"
        "the time limit (their best solution is used), ops duplicated, and the step time\n"
        "without and with SFB; then the median and maximum solve time over all gradients\n"
        "(goal: median <= 20 ms, max <= 300 ms), and TAG's Table 5 (step times; ours beside\n"
        "the paper's) and Table 6 (op types duplicated most).\n\n"
        "  MODEL             zoo models; default the six of TAG's Table 5: inceptionv3,\n"
        "                    resnet101, vgg19, transformer (skipped with a note when the zoo\n"
        "                    has no such model), bert-small, bert-large\n"
        "  --batch B         batch of the generated graphs; default 4 (the paper's Table 5)\n"
        "  --cluster NAME    cluster preset; default tag-sfb (two machines, one 1080Ti each)\n"
        "  --devices N       devices of the preset; default 2\n"
        "  --depth D         dp-nccl's sfb_depth: candidates at most D edges above the\n"
        "                    gradient (0: no limit); default the placer's (8)\n"
        "  --time-limit S    dp-nccl's sfb_time_limit: CBC's limit per ILP in seconds;\n"
        "                    default the placer's (1)\n"
        "  --max-candidates K  dp-nccl's sfb_max_candidates; default the placer's (256)\n"
        "  --mode M          dp-nccl's sfb_mode: gradient (default; one ILP per gradient,\n"
        "                    the paper's) or reference (one ILP per model, the reference\n"
        "                    code's; the ILP columns then count models, not gradients)\n"
        "  --sync P          dp-nccl's sfb_sync: how the per-gradient ILP prices an AllReduce,\n"
        "                    paper (default; 2(D-1)/D L/tau) or nccl (the topology simulator's\n"
        "                    collective model at its default coefficients)\n"
        "  --seed S          run and cluster seed; default 1\n"
        "  --top K           op types listed in Table 6; default 5\n\n"
        "Times are wall times of this process (one core); CBC runs single-threaded.\n",
        bench_sfb_usage);
}

#define BENCH_SFB_MAX 32

typedef struct bench_sfb_args {
    const char *models[BENCH_SFB_MAX];
    int n_models;
    int batch, devices, top;
    unsigned long long seed;
    const char *cluster;
    const char *opts[8]; /* placer options "key=value" besides sfb */
    int n_opts;
    char opt_text[8][64];
} bench_sfb_args;

/* Appends the placer option key=value (a repeated key replaces the earlier value). */
static int bench_sfb_add_opt(bench_sfb_args *a, const char *key, const char *value)
{
    size_t kl = strlen(key);
    int i = 0;
    while (i < a->n_opts && !(strncmp(a->opt_text[i], key, kl) == 0 && a->opt_text[i][kl] == '='))
        i++;
    if (i == (int)(sizeof a->opts / sizeof a->opts[0]))
        return cli_error("bench sfb: too many placer options");
    snprintf(a->opt_text[i], sizeof a->opt_text[i], "%s=%s", key, value);
    a->opts[i] = a->opt_text[i];
    if (i == a->n_opts)
        a->n_opts++;
    return 0;
}

/* One gradient's ILP, as the placer logs it (plugins/shared/dp_nccl, dp_sfb_record). */
typedef struct bench_sfb_ilp {
    int candidates, status;
    double solve_ms;
} bench_sfb_ilp;

typedef struct bench_sfb_log {
    bench_sfb_ilp *ilp;
    int n, cap;
    int bad; /* a line that did not parse, or out of memory */
} bench_sfb_log;

static void bench_sfb_on_log(void *ctx, int level, const char *msg)
{
    bench_sfb_log *l = ctx;
    if (level != PB_LOG_DEBUG || strncmp(msg, "sfb apply=", 10) != 0)
        return;
    bench_sfb_ilp x;
    double solve_s, objective;
    int apply, gradient, cuts, rows, dup;
    if (sscanf(msg,
               "sfb apply=%d gradient=%d candidates=%d cut_vars=%d rows=%d duplicated=%d "
               "objective_us=%lg solve_s=%lg status=%d",
               &apply, &gradient, &x.candidates, &cuts, &rows, &dup, &objective, &solve_s,
               &x.status) != 9) {
        l->bad = 1;
        return;
    }
    x.solve_ms = solve_s * 1e3;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 256;
        bench_sfb_ilp *p = realloc(l->ilp, (size_t)cap * sizeof *p);
        if (!p) {
            l->bad = 1;
            return;
        }
        l->ilp = p;
        l->cap = cap;
    }
    l->ilp[l->n++] = x;
}

static int bench_sfb_int(const char *arg, const char *value, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end || v < lo || v > hi)
        return cli_error("bench sfb: %s wants an integer in [%d, %d], not '%s'", arg, lo, hi,
                         value);
    *out = (int)v;
    return 0;
}

/* A placer option passed through: --depth etc. become sfb_depth=... after a check. */
static int bench_sfb_passthrough(bench_sfb_args *a, const char *key, const char *arg,
                                 const char *value, int is_double)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || end == value || *end || v < 0 || (!is_double && v != floor(v)))
        return cli_error("bench sfb: %s wants a non-negative %s, not '%s'", arg,
                         is_double ? "number" : "integer", value);
    return bench_sfb_add_opt(a, key, value);
}

static int bench_sfb_option(bench_sfb_args *a, const char *arg, const char *value)
{
    if (strcmp(arg, "--batch") == 0)
        return bench_sfb_int(arg, value, 1, 1 << 20, &a->batch);
    if (strcmp(arg, "--devices") == 0)
        return bench_sfb_int(arg, value, 1, 4096, &a->devices);
    if (strcmp(arg, "--top") == 0)
        return bench_sfb_int(arg, value, 1, 1000, &a->top);
    if (strcmp(arg, "--cluster") == 0) {
        a->cluster = value;
        return 0;
    }
    if (strcmp(arg, "--seed") == 0)
        return cli_parse_u64(value, &a->seed)
                   ? cli_error("bench sfb: --seed wants a non-negative integer, not '%s'", value)
                   : 0;
    if (strcmp(arg, "--depth") == 0)
        return bench_sfb_passthrough(a, "sfb_depth", arg, value, 0);
    if (strcmp(arg, "--time-limit") == 0)
        return bench_sfb_passthrough(a, "sfb_time_limit", arg, value, 1);
    if (strcmp(arg, "--max-candidates") == 0)
        return bench_sfb_passthrough(a, "sfb_max_candidates", arg, value, 0);
    if (strcmp(arg, "--mode") == 0) {
        if (strcmp(value, "gradient") != 0 && strcmp(value, "reference") != 0)
            return cli_error("bench sfb: --mode wants gradient or reference, not '%s'", value);
        return bench_sfb_add_opt(a, "sfb_mode", value);
    }
    if (strcmp(arg, "--sync") == 0) {
        if (strcmp(value, "paper") != 0 && strcmp(value, "nccl") != 0)
            return cli_error("bench sfb: --sync wants paper or nccl, not '%s'", value);
        return bench_sfb_add_opt(a, "sfb_sync", value);
    }
    return cli_error("bench sfb: unknown argument '%s' (see 'placebench bench sfb --help')", arg);
}

/* Returns 0 on success, an exit status otherwise, -1 after printing the help. */
static int bench_sfb_parse(int argc, char **argv, bench_sfb_args *a)
{
    memset(a, 0, sizeof *a);
    a->batch = 4;
    a->devices = 2;
    a->top = 5;
    a->seed = 1;
    a->cluster = "tag-sfb";
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            bench_sfb_help();
            return -1;
        }
        if (strncmp(argv[i], "--", 2) == 0) {
            if (i + 1 >= argc)
                return cli_error("bench sfb: %s needs a value", argv[i]);
            int rc = bench_sfb_option(a, argv[i], argv[i + 1]);
            if (rc)
                return rc;
            i++;
        } else if (a->n_models == BENCH_SFB_MAX) {
            return cli_error("bench sfb: more than %d models", BENCH_SFB_MAX);
        } else if (!gen_model_find(argv[i])) {
            char names[512];
            gen_model_names(names, sizeof names);
            return cli_error("bench sfb: unknown model '%s' (the zoo has: %s)", argv[i], names);
        } else {
            a->models[a->n_models++] = argv[i];
        }
    }
    if (a->n_models == 0)
        for (size_t i = 0; i < sizeof bench_sfb_models / sizeof bench_sfb_models[0]; i++) {
            if (gen_model_find(bench_sfb_models[i]))
                a->models[a->n_models++] = bench_sfb_models[i];
            else
                fprintf(stderr, "placebench: bench sfb: the model zoo has no '%s'; skipped\n",
                        bench_sfb_models[i]);
        }
    return 0;
}

/* Everything measured, over the models. */
typedef struct bench_sfb_totals {
    double *solve_ms; /* every ILP's */
    int n, cap;
    papers_sfb_measured rows[BENCH_SFB_MAX];
    int n_rows;
    papers_sfb_count *counts; /* op type (strdup) and duplicates, over the models */
    int n_counts, cap_counts;
} bench_sfb_totals;

static void bench_sfb_totals_free(bench_sfb_totals *t)
{
    for (int i = 0; i < t->n_counts; i++)
        free((char *)t->counts[i].type);
    free(t->counts);
    free(t->solve_ms);
}

static int bench_sfb_count(bench_sfb_totals *t, const char *type)
{
    for (int i = 0; i < t->n_counts; i++)
        if (strcmp(t->counts[i].type, type) == 0) {
            t->counts[i].count++;
            return 0;
        }
    if (t->n_counts == t->cap_counts) {
        int cap = t->cap_counts ? 2 * t->cap_counts : 32;
        papers_sfb_count *p = realloc(t->counts, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        t->counts = p;
        t->cap_counts = cap;
    }
    char *copy = strdup(type);
    if (!copy)
        return -1;
    t->counts[t->n_counts++] = (papers_sfb_count){copy, 1};
    return 0;
}

static int bench_sfb_keep_times(bench_sfb_totals *t, const bench_sfb_log *l)
{
    if (t->n + l->n > t->cap) {
        int cap = t->n + l->n + 1024;
        double *p = realloc(t->solve_ms, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        t->solve_ms = p;
        t->cap = cap;
    }
    for (int i = 0; i < l->n; i++)
        t->solve_ms[t->n++] = l->ilp[i].solve_ms;
    return 0;
}

typedef struct bench_sfb_plugins {
    plan_plugin simulator, without, with;
} bench_sfb_plugins;

static void bench_sfb_plugins_free(bench_sfb_plugins *pp)
{
    place_plugin_free(&pp->simulator);
    place_plugin_free(&pp->without);
    place_plugin_free(&pp->with);
}

static int bench_sfb_resolve(loader *l, const bench_sfb_args *a, bench_sfb_plugins *pp,
                             pb_error *err)
{
    memset(pp, 0, sizeof *pp);
    const char *with[9] = {"sfb=true"}, *without[1] = {"sfb=false"};
    for (int i = 0; i < a->n_opts; i++)
        with[1 + i] = a->opts[i];
    return place_plugin_resolve(l, PB_KIND_SIMULATOR, "topology", NULL, 0, "simulator 'topology'",
                                &pp->simulator, err) ||
           place_plugin_resolve(l, PB_KIND_PLACER, "dp-nccl", without, 1, "placer 'dp-nccl'",
                                &pp->without, err) ||
           place_plugin_resolve(l, PB_KIND_PLACER, "dp-nccl", with, 1 + a->n_opts,
                                "placer 'dp-nccl'", &pp->with, err);
}

/* Prints model m's row: its ILPs (l) and step times. */
static void bench_sfb_row(const pb_graph *g, bench_sfb_log *l, int duplicated, double without_us,
                          double with_us)
{
    int limited = 0, max_cand = 0;
    double *v = malloc((size_t)(l->n > 0 ? l->n : 1) * sizeof *v);
    double *cand = malloc((size_t)(l->n > 0 ? l->n : 1) * sizeof *cand);
    double med_ms = NAN, max_ms = NAN, med_cand = NAN;
    if (v && cand && l->n > 0) {
        for (int i = 0; i < l->n; i++) {
            v[i] = l->ilp[i].solve_ms;
            cand[i] = l->ilp[i].candidates;
            limited += l->ilp[i].status != 0;
            max_cand = l->ilp[i].candidates > max_cand ? l->ilp[i].candidates : max_cand;
        }
        med_ms = cli_median_sort(v, l->n);
        max_ms = v[l->n - 1];
        med_cand = cli_median_sort(cand, l->n);
    }
    printf("| %s | %d | %d | %.0f | %d | %.3f | %.3f | %d | %d | %.3f | %.3f |\n", g->name,
           g->n_nodes, l->n, med_cand, max_cand, med_ms, max_ms, limited, duplicated,
           without_us / 1e3, with_us / 1e3);
    fflush(stdout);
    free(v);
    free(cand);
}

/* Model `name`: generated, placed by dp-nccl without and with SFB. */
static int bench_sfb_model(const bench_sfb_args *a, const bench_sfb_plugins *pp, const char *name,
                           bench_sfb_totals *t)
{
    gen_model_args ga = {.batch = a->batch, .seed = a->seed};
    pb_graph *g;
    pb_cluster *c;
    pb_error err;
    if (gen_model_generate(gen_model_find(name), &ga, &g, &err))
        return cli_error("bench sfb: %s: %s", name, err.msg);
    if (cluster_preset_seeded(a->cluster, a->devices, pb_seed_derive(a->seed, "cluster#0"), &c,
                              &err)) {
        graph_free(g);
        return cli_error("bench sfb: cluster '%s': %s", a->cluster, err.msg);
    }
    bench_sfb_log log = {0};
    int *op = malloc((size_t)g->n_nodes * sizeof(int));
    place_request q = {.graph = g,
                       .cluster = c,
                       .simulator = &pp->simulator,
                       .placer = &pp->without,
                       .seed = a->seed,
                       .log_id = "bench sfb"};
    place_result without = {0}, with = {.best_op_replication = op};
    int rc = op ? place_run(&q, &without, &err) : pb_errorf(&err, "out of memory");
    q.placer = &pp->with;
    q.log = bench_sfb_on_log;
    q.log_ctx = &log;
    if (rc == PB_OK)
        rc = place_run(&q, &with, &err);
    if (rc == PB_OK && log.bad)
        rc = pb_errorf(&err, "the placer's SFB log lines did not parse (or out of memory)");
    int duplicated = 0;
    for (int v = 0; rc == PB_OK && v < g->n_nodes; v++)
        if (op[v] == PB_REPL_DUPLICATE) {
            duplicated++;
            if (bench_sfb_count(t, g->node_type[v][0] ? g->node_type[v] : "(untyped)"))
                rc = pb_errorf(&err, "out of memory");
        }
    if (rc == PB_OK && bench_sfb_keep_times(t, &log))
        rc = pb_errorf(&err, "out of memory");
    if (rc == PB_OK) {
        bench_sfb_row(g, &log, duplicated, without.best_us, with.best_us);
        t->rows[t->n_rows++] =
            (papers_sfb_measured){name, without.best_us / 1e6, with.best_us / 1e6, duplicated};
    }
    free(log.ilp);
    free(op);
    cluster_free(c);
    graph_free(g);
    return rc == PB_OK ? 0 : cli_error("bench sfb: %s: %s", name, err.msg);
}

static void bench_sfb_summary(const bench_sfb_args *a, bench_sfb_totals *t)
{
    if (t->n == 0) {
        printf("\nno gradient was synchronised, so no ILP was solved\n");
    } else {
        double med = cli_median_sort(t->solve_ms, t->n), max = t->solve_ms[t->n - 1];
        printf("\nSFB ILP solve time over all %d ILPs of %d models: median %.3f ms, max "
               "%.3f ms (goal: median <= 20 ms, max <= 300 ms: %s)\n",
               t->n, t->n_rows, med, max, med <= 20 && max <= 300 ? "met" : "not met");
    }
    papers_tag_sfb_print(stdout, t->rows, t->n_rows, t->counts, t->n_counts, a->top, a->batch,
                         a->cluster);
}

int bench_sfb(int argc, char **argv)
{
    bench_sfb_args a;
    int rc = bench_sfb_parse(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    pb_error err;
    loader *l = loader_new(NULL, 0, &err);
    if (!l)
        return cli_error("%s", err.msg);
    bench_sfb_plugins pp;
    if (bench_sfb_resolve(l, &a, &pp, &err)) {
        bench_sfb_plugins_free(&pp);
        loader_free(l);
        return cli_error("bench sfb: %s", err.msg);
    }
    printf("SFB per gradient (TAG 4.2.3, CBC) on DP-NCCL: cluster %s, %d devices, batch %d, "
           "seed %llu",
           a.cluster, a.devices, a.batch, a.seed);
    for (int i = 0; i < a.n_opts; i++)
        printf(", %s", a.opts[i]);
    printf("\n\n| model | ops | ILPs | candidates median | max | solve ms median | max | "
           "time-limited | ops duplicated | step ms without | with SFB |\n"
           "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    bench_sfb_totals t = {0};
    for (int i = 0; i < a.n_models && rc == 0; i++)
        rc = bench_sfb_model(&a, &pp, a.models[i], &t);
    if (rc == 0)
        bench_sfb_summary(&a, &t);
    bench_sfb_totals_free(&t);
    bench_sfb_plugins_free(&pp);
    loader_free(l);
    return rc;
}
