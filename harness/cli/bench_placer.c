/* bench_placer.c — `placebench bench placer`: wall time and steps per second of a learned
 * placer's run (20 episodes of placeto with placeto-gnn by default) on one graph per family and
 * several device counts, beside the embedding paper's Table 2 times. */
#include "cli.h"
#include "config/cluster.h"

#include "data/gen/gen.h"
#include "model/graph.h"
#include "plugin/loader.h"
#include "data/nodelink.h"
#include "nn/nn_internal.h"
#include "report/papers.h"
#include "run/place.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char bench_placer_usage[] =
    "placebench bench placer [GRAPH.json]... [--devices 3,5,8] [--episodes 20] "
    "[--placer placeto] [--embedding placeto-gnn] [--opt KIND.KEY=VALUE]... [--seed S] "
    "[--interleave K] [--json]";

static void bench_placer_help(void)
{
    printf("usage: %s\n\n"
           "Times one run of a learned placer per graph and device count, in this process, as a\n"
           "run of an experiment would do it (placebench place), and prints wall time, CPU time\n"
           "and placement steps per second (one step = one node placed, one forward pass of\n"
           "embedding and policy and one simulation), beside the Python/TensorFlow reference's\n"
           "average time of a 20-episode run in the embedding paper's Table 2 (Placeto-GNN,\n"
           "GraphSAGE and P-GNN: embeddings placeto-gnn, graphsage and pgnn).\n\n"
           "  GRAPH.json        graphs to time; default graph 0 of the cifar10, ptb and nmt\n"
           "                    families, generated here from seed 1 (the graphs\n"
           "                    'placebench dataset gen FAMILY' writes as FAMILY-00.json)\n"
           "  --devices LIST    device counts, comma-separated; default 3,5,8\n"
           "  --episodes K      episodes per run; default 20 (the paper's runs)\n"
           "  --placer NAME     default placeto\n"
           "  --embedding NAME  default placeto-gnn\n"
           "  --opt KIND.KEY=VALUE  a plugin option, as in 'placebench place' (repeatable)\n"
           "  --seed S          run seed; default 1\n"
           "  --interleave K    time K runs (seeds S, S+1, ..., S+K-1) interleaved in one\n"
           "                    call, as 'placebench run --interleave K' does; each row\n"
           "                    shows the first run, with wall and CPU time the group's\n"
           "                    divided by K; default 1 (one run alone)\n"
           "  --json            one JSON object per run instead of the table\n\n"
           "A second table says where each run's CPU time went: the forward passes that choose\n"
           "actions, the updates (recomputed forward passes, backward pass, optimizer) and the\n"
           "simulator calls, as CPU seconds of the run's thread.  For the two network phases it\n"
           "gives the dense-product FLOPs (2mnk per matrix product; element-wise work not\n"
           "counted), their rate in GFLOP/s and that rate as a share of this core's FMA peak,\n"
           "measured at start-up (about 0.3 s) with the widest vector instructions the processor\n"
           "reports at run time (AVX-512, AVX2+FMA, or portable scalar C); for the simulator the\n"
           "events simulated and ns per event.  Placers that do not report phases (ABI < 1.7)\n"
           "show 0 for the network phases.\n\n"
           "Set OPENBLAS_NUM_THREADS=1 to time one core (OpenBLAS reads it when it loads).\n",
           bench_placer_usage);
}

#define BENCH_PLACER_MAX 64

/* One run's phase figures, kept for the phase table printed after the main one. */
typedef struct bench_placer_phases {
    char graph[64];
    int devices;
    double cpu_s;
    place_result r;
} bench_placer_phases;

typedef struct bench_placer_args {
    const char *graphs[BENCH_PLACER_MAX];
    int n_graphs;
    int devices[16], n_devices;
    int episodes, json, interleave;
    unsigned long long seed;
    const char *placer, *embedding;
    const char *opts[PB_KIND_PLACER + 1][BENCH_PLACER_MAX];
    int n_opts[PB_KIND_PLACER + 1];
    int isa;            /* nn_cpu_isa() */
    double peak_gflops; /* measured FMA peak of one core with isa */
    bench_placer_phases phases[BENCH_PLACER_MAX];
    int n_phases;
} bench_placer_args;

/* Non-zero when text starts with family followed by a separator ("ptb/00", "ptb-00.json"). */
static int bench_placer_is_family(const char *text, const char *family)
{
    size_t n = strlen(family);
    return strncmp(text, family, n) == 0 && strchr("/-_.", text[n]) && text[n];
}

/* The reference time (the embedding paper's computation time, report/papers.h) of `embedding`
 * for a graph named after one of the paper's families (its name or its file's name), or NAN. */
static double bench_placer_paper_time(const char *graph, const char *embedding, int devices)
{
    const papers_paper *paper = papers_with_embeddings();
    const papers_embedding_table *pt = paper ? paper->embeddings : NULL;
    const char *base = strrchr(graph, '/');
    base = base ? base + 1 : graph;
    for (int i = 0; pt && i < pt->n_families; i++) {
        const char *fam = pt->families[i];
        if (bench_placer_is_family(graph, fam) || bench_placer_is_family(base, fam))
            return papers_embedding_cell(pt, fam, devices, embedding).wall_s;
    }
    return NAN;
}

static int bench_placer_parse_devices(const char *text, bench_placer_args *a)
{
    int max = (int)(sizeof a->devices / sizeof a->devices[0]);
    if (cli_parse_devices(text, a->devices, max, &a->n_devices))
        return cli_error("bench placer: --devices wants a list like 3,5,8, not '%s'", text);
    return a->n_devices ? 0 : cli_error("bench placer: --devices is empty");
}

static int bench_placer_opt(bench_placer_args *a, const char *value)
{
    const char *dot = strchr(value, '.');
    char kind[16];
    size_t len = dot ? (size_t)(dot - value) : 0;
    int k = 0;
    if (dot && len > 0 && len < sizeof kind && strchr(dot, '=')) {
        memcpy(kind, value, len);
        kind[len] = '\0';
        k = loader_kind_from_name(kind);
    }
    if (!k || a->n_opts[k] == BENCH_PLACER_MAX)
        return cli_error("bench placer: --opt wants KIND.KEY=VALUE (KIND placer, embedding, "
                         "traversal or simulator), not '%s'",
                         value);
    a->opts[k][a->n_opts[k]++] = dot + 1;
    return 0;
}

static int bench_placer_option(bench_placer_args *a, const char *arg, const char *value)
{
    char *end;
    errno = 0;
    if (strcmp(arg, "--devices") == 0)
        return bench_placer_parse_devices(value, a);
    if (strcmp(arg, "--placer") == 0)
        a->placer = value;
    else if (strcmp(arg, "--embedding") == 0)
        a->embedding = value;
    else if (strcmp(arg, "--opt") == 0)
        return bench_placer_opt(a, value);
    else if (strcmp(arg, "--episodes") == 0) {
        long v = strtol(value, &end, 10);
        if (errno || end == value || *end || v < 1 || v > 1000000)
            return cli_error("bench placer: --episodes wants a positive integer, not '%s'", value);
        a->episodes = (int)v;
    } else if (strcmp(arg, "--interleave") == 0) {
        unsigned long long v;
        if (cli_parse_u64(value, &v) || v < 1 || v > PLACE_MAX_INTERLEAVE)
            return cli_error("bench placer: --interleave wants an integer from 1 to %d, not '%s'",
                             PLACE_MAX_INTERLEAVE, value);
        a->interleave = (int)v;
    } else if (strcmp(arg, "--seed") == 0) {
        if (cli_parse_u64(value, &a->seed))
            return cli_error("bench placer: --seed wants a non-negative integer, not '%s'", value);
    } else {
        return cli_error("bench placer: unknown argument '%s' (see 'placebench bench placer "
                         "--help')",
                         arg);
    }
    return 0;
}

/* Returns 0 on success, an exit status otherwise, -1 after printing the help. */
static int bench_placer_parse(int argc, char **argv, bench_placer_args *a)
{
    memset(a, 0, sizeof *a);
    a->devices[0] = 3;
    a->devices[1] = 5;
    a->devices[2] = 8;
    a->n_devices = 3;
    a->episodes = 20;
    a->seed = 1;
    a->interleave = 1;
    a->placer = "placeto";
    a->embedding = "placeto-gnn";
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            bench_placer_help();
            return -1;
        }
        if (strcmp(argv[i], "--json") == 0) {
            a->json = 1;
        } else if (strncmp(argv[i], "--", 2) == 0) {
            if (i + 1 >= argc)
                return cli_error("bench placer: %s needs a value", argv[i]);
            int rc = bench_placer_option(a, argv[i], argv[i + 1]);
            if (rc)
                return rc;
            i++;
        } else if (a->n_graphs == BENCH_PLACER_MAX) {
            return cli_error("bench placer: more than %d graphs", BENCH_PLACER_MAX);
        } else {
            a->graphs[a->n_graphs++] = argv[i];
        }
    }
    return 0;
}

/* Counts the episodes a run reports. */
static void bench_placer_progress(void *ctx, const pb_progress *p)
{
    int *episodes = ctx;
    if (p->episode + 1 > *episodes)
        *episodes = p->episode + 1;
}

typedef struct bench_placer_plugins {
    plan_plugin simulator, placer, embedding;
} bench_placer_plugins;

static void bench_placer_plugins_free(bench_placer_plugins *pp)
{
    place_plugin_free(&pp->simulator);
    place_plugin_free(&pp->placer);
    place_plugin_free(&pp->embedding);
}

static int bench_placer_resolve(loader *l, const bench_placer_args *a, bench_placer_plugins *pp,
                                pb_error *err)
{
    memset(pp, 0, sizeof *pp);
    char where[300];
    snprintf(where, sizeof where, "placer '%s'", a->placer);
    if (place_plugin_resolve(l, PB_KIND_SIMULATOR, "placeto", a->opts[PB_KIND_SIMULATOR],
                             a->n_opts[PB_KIND_SIMULATOR], "simulator 'placeto'", &pp->simulator,
                             err) ||
        place_plugin_resolve(l, PB_KIND_PLACER, a->placer, a->opts[PB_KIND_PLACER],
                             a->n_opts[PB_KIND_PLACER], where, &pp->placer, err))
        return PB_ERR;
    snprintf(where, sizeof where, "embedding '%s'", a->embedding);
    return place_plugin_resolve(l, PB_KIND_EMBEDDING, a->embedding, a->opts[PB_KIND_EMBEDDING],
                                a->n_opts[PB_KIND_EMBEDDING], where, &pp->embedding, err);
}

static void bench_placer_header(const bench_placer_args *a)
{
    if (a->json)
        return;
    printf("placer %s, embedding %s, %d episodes per run, one run per row\n", a->placer,
           a->embedding, a->episodes);
    if (a->interleave > 1)
        printf("%d runs interleaved per row (seeds %llu to %llu); times are the group's divided "
               "by %d\n",
               a->interleave, a->seed, a->seed + (unsigned long long)a->interleave - 1,
               a->interleave);
    printf("vector instructions (detected at run time): %s; measured one-core FMA peak %.1f "
           "GFLOP/s\n\n",
           nn_cpu_isa_name(a->isa), a->peak_gflops);
    printf("| graph | nodes | devices | steps | sim calls | wall (s) | CPU (s) | steps/s | "
           "paper Table 2 (s) | speed-up |\n");
    printf("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
}

/* GFLOP/s of flop done in seconds (0 when nothing was timed). */
static double bench_placer_rate(double flop, double seconds)
{
    return seconds > 0 ? flop / seconds * 1e-9 : 0;
}

/* The phase fields of a JSON row. */
static void bench_placer_json_phases(const bench_placer_args *a, const place_result *r)
{
    double fwd = bench_placer_rate(r->forward_flop, r->forward_cpu_s);
    double upd = bench_placer_rate(r->update_flop, r->update_cpu_s);
    printf(", \"isa\": \"%s\", \"peak_gflops\": %.3f, \"forward_cpu_s\": %.6f, "
           "\"forward_gflop\": %.6f, \"forward_gflops\": %.3f, \"update_cpu_s\": %.6f, "
           "\"update_gflop\": %.6f, \"update_gflops\": %.3f, \"sim_cpu_s\": %.6f, "
           "\"sim_events\": %lld, \"sim_ns_per_event\": %.3f",
           nn_cpu_isa_name(a->isa), a->peak_gflops, r->forward_cpu_s, r->forward_flop * 1e-9, fwd,
           r->update_cpu_s, r->update_flop * 1e-9, upd, r->sim_cpu_s, r->sim_events,
           r->sim_events > 0 ? r->sim_cpu_s / (double)r->sim_events * 1e9 : 0);
}

/* The share of the peak a rate reaches, in percent. */
static double bench_placer_share(const bench_placer_args *a, double gflops)
{
    return a->peak_gflops > 0 ? 100 * gflops / a->peak_gflops : 0;
}

/* The phase table: one row per phase of every run timed. */
static void bench_placer_phase_table(const bench_placer_args *a)
{
    if (a->json || a->n_phases == 0)
        return;
    printf("\nwhere the CPU time went (CPU seconds of the run's thread; %% of peak against %.1f "
           "GFLOP/s, %s)\n\n",
           a->peak_gflops, nn_cpu_isa_name(a->isa));
    printf("| graph | devices | phase | CPU (s) | share of run | GFLOP | GFLOP/s | %% of peak | "
           "events | ns/event |\n");
    printf("|---|--:|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for (int i = 0; i < a->n_phases; i++) {
        const bench_placer_phases *ph = &a->phases[i];
        const place_result *r = &ph->r;
        double total = ph->cpu_s > 0 ? ph->cpu_s : 1;
        const char *names[2] = {"forward", "update"};
        double s[2] = {r->forward_cpu_s, r->update_cpu_s}, f[2] = {r->forward_flop, r->update_flop};
        for (int k = 0; k < 2; k++) {
            double rate = bench_placer_rate(f[k], s[k]);
            printf("| %s | %d | %s | %.3f | %.0f%% | %.2f | %.1f | %.1f%% | - | - |\n", ph->graph,
                   ph->devices, names[k], s[k], 100 * s[k] / total, f[k] * 1e-9, rate,
                   bench_placer_share(a, rate));
        }
        printf("| %s | %d | simulator | %.3f | %.0f%% | - | - | - | %lld | %.1f |\n", ph->graph,
               ph->devices, r->sim_cpu_s, 100 * r->sim_cpu_s / total, r->sim_events,
               r->sim_events > 0 ? r->sim_cpu_s / (double)r->sim_events * 1e9 : 0);
        double other = ph->cpu_s - r->forward_cpu_s - r->update_cpu_s - r->sim_cpu_s;
        printf("| %s | %d | other | %.3f | %.0f%% | - | - | - | - | - |\n", ph->graph, ph->devices,
               other, 100 * other / total);
    }
}

static void bench_placer_row(bench_placer_args *a, const pb_graph *g, int devices, long long steps,
                             const place_result *r)
{
    double paper = bench_placer_paper_time(g->name, a->embedding, devices);
    double rate = r->wall_s > 0 ? steps / r->wall_s : 0;
    if (a->n_phases < BENCH_PLACER_MAX) {
        bench_placer_phases *ph = &a->phases[a->n_phases++];
        snprintf(ph->graph, sizeof ph->graph, "%s", g->name);
        ph->devices = devices;
        ph->cpu_s = r->cpu_s;
        ph->r = *r;
    }
    if (a->json) {
        char paper_text[32] = "null"; /* no published time for this graph and device count */
        if (!isnan(paper))
            snprintf(paper_text, sizeof paper_text, "%.3f", paper);
        printf("{\"graph\": \"%s\", \"nodes\": %d, \"devices\": %d, \"episodes\": %d, "
               "\"steps\": %lld, \"simulator_calls\": %lld, \"wall_s\": %.6f, \"cpu_s\": %.6f, "
               "\"steps_per_s\": %.1f, \"paper_s\": %s, \"initial_step_time_us\": %.17g, "
               "\"best_step_time_us\": %.17g, \"interleave\": %d",
               g->name, g->grouped->n_nodes, devices, a->episodes, steps, r->sim_calls, r->wall_s,
               r->cpu_s, rate, paper_text, r->initial_us, r->best_us, a->interleave);
        bench_placer_json_phases(a, r);
        printf("}\n");
        return;
    }
    printf("| %s | %d | %d | %lld | %lld | %.3f | %.3f | %.0f |", g->name, g->grouped->n_nodes,
           devices, steps, r->sim_calls, r->wall_s, r->cpu_s, rate);
    if (isnan(paper))
        printf(" - | - |\n");
    else
        printf(" %.1f | %.0fx |\n", paper, paper / r->wall_s);
    fflush(stdout);
}

/* Times every device count on graph g. */
static int bench_placer_graph(bench_placer_args *a, const bench_placer_plugins *pp,
                              const pb_graph *g)
{
    for (int i = 0; i < a->n_devices; i++) {
        int episodes = 0;
        pb_cluster *c;
        pb_error err;
        if (cluster_preset_seeded("placeto-k80", a->devices[i],
                                  pb_seed_derive(a->seed, "cluster#0"), &c, &err))
            return cli_error("bench placer: %s on %d devices: %s", g->name, a->devices[i], err.msg);
        place_request q = {.graph = g,
                           .cluster = c,
                           .simulator = &pp->simulator,
                           .placer = &pp->placer,
                           .embedding = &pp->embedding,
                           .seed = a->seed,
                           .episodes = a->episodes,
                           .log_id = "bench",
                           .progress = bench_placer_progress,
                           .progress_ctx = &episodes};
        /* Runs 1.. of an interleaved group count their episodes in ignored[]. */
        place_request qs[PLACE_MAX_INTERLEAVE];
        place_result rs[PLACE_MAX_INTERLEAVE] = {0};
        pb_error errs[PLACE_MAX_INTERLEAVE];
        int ignored[PLACE_MAX_INTERLEAVE];
        for (int r = 0; r < a->interleave; r++) {
            qs[r] = q;
            qs[r].seed = a->seed + (unsigned long long)r;
            qs[r].progress_ctx = r == 0 ? (void *)&episodes : (void *)&ignored[r];
            ignored[r] = 0;
        }
        int rc = place_run_multi(qs, a->interleave, rs, errs);
        cluster_free(c);
        for (int r = 0; rc && r < a->interleave; r++)
            if (isnan(rs[r].best_us))
                return cli_error("bench placer: %s on %d devices (seed %llu): %s", g->name,
                                 a->devices[i], qs[r].seed, errs[r].msg);
        bench_placer_row(a, g, a->devices[i], (long long)episodes * g->grouped->n_nodes, &rs[0]);
    }
    return 0;
}

/* Graph k of the run: a file given, or graph 0 of generator family k from seed 1. */
static int bench_placer_load(const bench_placer_args *a, int k, pb_graph **g, pb_error *err)
{
    if (a->n_graphs)
        return nodelink_read(a->graphs[k], g, err);
    return gen_graph(gen_family_at(k), 1, 0, g, err);
}

int bench_placer(int argc, char **argv)
{
    bench_placer_args a;
    int rc = bench_placer_parse(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    pb_error err;
    loader *l = loader_new(NULL, 0, &err);
    if (!l)
        return cli_error("%s", err.msg);
    bench_placer_plugins pp;
    if (bench_placer_resolve(l, &a, &pp, &err)) {
        bench_placer_plugins_free(&pp);
        loader_free(l);
        return cli_error("%s", err.msg);
    }
    a.isa = nn_cpu_isa();
    a.peak_gflops = nn_cpu_peak_gflops(a.isa, 0.3);
    bench_placer_header(&a);
    int n = a.n_graphs ? a.n_graphs : gen_family_count();
    for (int k = 0; k < n && rc == 0; k++) {
        pb_graph *g;
        if (bench_placer_load(&a, k, &g, &err)) {
            rc = cli_error("%s", err.msg);
            break;
        }
        rc = bench_placer_graph(&a, &pp, g);
        graph_free(g);
    }
    bench_placer_phase_table(&a);
    bench_placer_plugins_free(&pp);
    loader_free(l);
    return rc;
}
