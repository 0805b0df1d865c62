/* cmd_bench.c — `placebench bench`: speed benchmarks (simulator evaluations per second). */
#include "cli.h"

#include "cli_sim.h"
#include "config/cluster.h"
#include "core/clock.h"
#include "model/graph.h"
#include "plugin/loader.h"
#include "data/nodelink.h"
#include "model/strategy.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char bench_usage[] =
    "placebench bench simulator [GRAPH.json | DIR]... [--devices 3,5,8] [--evals K] [--seed S] "
    "[--simulator NAME] [--cluster NAME] [--strategy random|dp-nccl]\n"
    "       placebench bench placer --help   (placer speed)\n"
    "       placebench bench sfb --help      (TAG's SFB ILP times, Tables 5 and 6)";

static void bench_print_help(void)
{
    printf("usage: %s\n\n"
           "Measures how fast a simulator plugin evaluates random placements.  For every graph\n"
           "and device count it times K evaluations of uniformly random placements, drawn\n"
           "with the seeded generator:\n"
           "  level 'grouped'  placements of the grouped graph's nodes (what placers return),\n"
           "                   expanded to ops as the runner does;\n"
           "  level 'op'       placements drawn directly over the ops.\n"
           "A graph without a grouping has only the 'op' level.  Only the simulator's\n"
           "evaluate() calls are timed (drawing and expanding placements is not), after one\n"
           "untimed warm-up evaluation; the graph is prepared once per device count.\n\n"
           "  GRAPH.json | DIR  node-link graphs; a folder is searched recursively for *.json\n"
           "                    files (files that are not node-link graphs are skipped with a\n"
           "                    note on stderr)\n"
           "  --devices LIST    comma-separated device counts; default 3,5,8\n"
           "  --evals K         timed evaluations per graph, level and device count; default 2000\n"
           "  --seed S          seed of the placements; default 1\n"
           "  --simulator NAME  simulator plugin, with its default options; default placeto\n"
           "  --cluster NAME    cluster preset (placebench cluster list); default placeto-k80\n"
           "  --strategy WHAT   random (default): the random placements above; dp-nccl: TAG's\n"
           "                    DP-NCCL strategy (every op replicated on all devices, AllReduce,\n"
           "                    even batch split; a simulator of replicated strategies such as\n"
           "                    topology), one strategy evaluated K times (default K = 20), each\n"
           "                    evaluation timed alone: the row gives the median ms and the\n"
           "                    minimum, events per evaluation and events per second at the\n"
           "                    median; no summary\n\n"
           "Columns: nodes placed, ops simulated, evaluations per second, ns per evaluation,\n"
           "mean events per evaluation and ns per event (timed ns / events).  Events are what\n"
           "the simulator reports in pb_eval.n_events; the placeto plugin counts the events\n"
           "the reference simulator pops from its heap, idle wake-ups included, even those it\n"
           "folds away itself.  '-' when the simulator does not count events.\n\n"
           "After the rows, a summary per input (a file, or a folder such as one dataset\n"
           "family): for each level and device count, the minimum, median and maximum over\n"
           "its graphs of evaluations per second and of ns per event.\n",
           bench_usage);
}

enum { BENCH_MAX_DEVICE_COUNTS = 32 };

typedef struct bench_args {
    char **inputs; /* graph files or folders, borrowed from argv */
    int n_inputs;
    int devices[BENCH_MAX_DEVICE_COUNTS];
    int n_devices;
    long evals; /* 0 until given: the default depends on the strategy */
    unsigned long long seed;
    const char *simulator, *cluster;
    int dp_nccl; /* --strategy dp-nccl */
} bench_args;

static int bench_option(const char *arg, const char *value, bench_args *a)
{
    char *end;
    errno = 0;
    if (strcmp(arg, "--devices") == 0) {
        if (cli_parse_devices(value, a->devices, BENCH_MAX_DEVICE_COUNTS, &a->n_devices) ||
            a->n_devices == 0)
            return cli_error("bench: --devices '%s' is not a list like 3,5,8 (1..4096)", value);
    } else if (strcmp(arg, "--evals") == 0) {
        a->evals = strtol(value, &end, 10);
        if (errno || !*value || *end || a->evals < 1)
            return cli_error("bench: --evals '%s' is not a positive number", value);
    } else if (strcmp(arg, "--seed") == 0) {
        if (cli_parse_u64(value, &a->seed))
            return cli_error("bench: --seed '%s' is not a non-negative integer", value);
    } else if (strcmp(arg, "--simulator") == 0) {
        a->simulator = value;
    } else if (strcmp(arg, "--cluster") == 0) {
        a->cluster = value;
    } else if (strcmp(arg, "--strategy") == 0) {
        if (strcmp(value, "random") != 0 && strcmp(value, "dp-nccl") != 0)
            return cli_error("bench: --strategy '%s' is not random or dp-nccl", value);
        a->dp_nccl = strcmp(value, "dp-nccl") == 0;
    } else {
        return cli_error("bench: unknown argument '%s' (see 'placebench bench --help')", arg);
    }
    return 0;
}

/* Returns 0 on success, an exit status otherwise, -1 after printing the help (exit 0). */
static int bench_parse_args(int argc, char **argv, bench_args *a)
{
    if (argc < 2)
        return cli_usage(bench_usage);
    if (cli_is_help(argv[1])) {
        bench_print_help();
        return -1;
    }
    if (strcmp(argv[1], "simulator") != 0)
        return cli_error("bench: unknown benchmark '%s' (known: simulator, placer, sfb)", argv[1]);
    for (int i = 2; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            bench_print_help();
            return -1;
        }
        if (strncmp(argv[i], "--", 2) != 0) {
            a->inputs[a->n_inputs++] = argv[i];
            continue;
        }
        if (i + 1 >= argc)
            return cli_error("bench: %s needs a value", argv[i]);
        int status = bench_option(argv[i], argv[i + 1], a);
        if (status)
            return status;
        i++;
    }
    if (a->n_inputs == 0)
        return cli_usage(bench_usage);
    return 0;
}

/* ---------------------------------------------------------------- finding graph files */

typedef struct bench_file {
    char *path;
    int input; /* index of the input (file or folder) it came from */
} bench_file;

typedef struct bench_files {
    bench_file *file;
    int n, cap;
    int input; /* the input being collected */
} bench_files;

static int bench_add_file(bench_files *f, const char *path)
{
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 64;
        bench_file *p = realloc(f->file, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        f->file = p;
        f->cap = cap;
    }
    f->file[f->n].path = strdup(path);
    f->file[f->n].input = f->input;
    return f->file[f->n++].path ? 0 : -1;
}

static void bench_files_free(bench_files *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->file[i].path);
    free(f->file);
}

static int bench_path_cmp(const void *a, const void *b)
{
    return strcmp(((const bench_file *)a)->path, ((const bench_file *)b)->path);
}

static int bench_ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/* Adds every *.json file under dir (recursively) to f. */
static int bench_walk(bench_files *f, const char *dir, int depth)
{
    if (depth > 16)
        return cli_error("bench: %s: folders nested too deeply", dir);
    DIR *d = opendir(dir);
    if (!d)
        return cli_error("bench: cannot open folder %s: %s", dir, strerror(errno));
    struct dirent *e;
    int status = 0;
    while (status == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(n);
        if (!path) {
            status = cli_error("out of memory");
            break;
        }
        snprintf(path, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            status = bench_walk(f, path, depth + 1);
        else if (bench_ends_with(e->d_name, ".json") && bench_add_file(f, path))
            status = cli_error("out of memory");
        free(path);
    }
    closedir(d);
    return status;
}

/* The graph files to measure: files as given, folders expanded and sorted by path. */
static int bench_collect(const bench_args *a, bench_files *f)
{
    for (int i = 0; i < a->n_inputs; i++) {
        f->input = i;
        struct stat st;
        if (stat(a->inputs[i], &st) != 0)
            return cli_error("bench: %s: %s", a->inputs[i], strerror(errno));
        if (!S_ISDIR(st.st_mode)) {
            if (bench_add_file(f, a->inputs[i]))
                return cli_error("out of memory");
            continue;
        }
        int first = f->n, status = bench_walk(f, a->inputs[i], 0);
        if (status)
            return status;
        qsort(f->file + first, (size_t)(f->n - first), sizeof *f->file, bench_path_cmp);
    }
    return 0;
}

/* ---------------------------------------------------------------- timing */

/* Placements are drawn in batches so that timing brackets many evaluations at once. */
enum { BENCH_BATCH_INTS = 1 << 22 };

typedef struct bench_level {
    const pb_graph *g; /* op-level graph */
    int by_group;      /* draw over g->grouped and expand */
    int n_devices;
    int batch;      /* placements per batch */
    int *draws;     /* [batch * nodes placed] */
    int *op_device; /* [batch * ops] */
    cli_sim *sim;
    cli_sim_result *result;
} bench_level;

/* Draws `count` placements into l->op_device (expanded when by group). */
static int bench_draw(bench_level *l, pb_rng *rng, int count, pb_error *err)
{
    const pb_graph *g = l->g;
    int placed = l->by_group ? g->grouped->n_nodes : g->n_nodes;
    for (int k = 0; k < count; k++) {
        int *draw = l->by_group ? l->draws + (size_t)k * (size_t)placed
                                : l->op_device + (size_t)k * (size_t)g->n_nodes;
        for (int v = 0; v < placed; v++)
            draw[v] = (int)pb_rng_below(rng, (uint64_t)l->n_devices);
        if (!l->by_group)
            continue;
        pb_strategy groups, ops;
        pb_strategy_placement(&groups, placed, draw);
        pb_strategy_placement(&ops, g->n_nodes, l->op_device + (size_t)k * (size_t)g->n_nodes);
        if (strategy_expand(g, &groups, &ops, err) != PB_OK)
            return PB_ERR;
    }
    return PB_OK;
}

/* Times `evals` evaluations; *ns receives the total wall time of the evaluate() calls and
 * *events the events they reported. */
static int bench_time(bench_level *l, long evals, uint64_t seed, double *ns, long long *events,
                      pb_error *err)
{
    pb_rng rng;
    pb_rng_seed(&rng, seed);
    const pb_graph *g = l->g;
    pb_eval *ev = &l->result->eval;
    *ns = 0;
    *events = 0;
    int warm = 1;
    for (long done = 0; done < evals;) {
        int count = evals - done < l->batch ? (int)(evals - done) : l->batch;
        if (bench_draw(l, &rng, count, err) != PB_OK)
            return PB_ERR;
        pb_strategy ops;
        if (warm) {
            pb_strategy_placement(&ops, g->n_nodes, l->op_device);
            if (cli_sim_evaluate(l->sim, &ops, ev, err) != PB_OK)
                return PB_ERR;
            warm = 0;
        }
        long long batch_events = 0;
        double t0 = pb_clock_monotonic();
        for (int k = 0; k < count; k++) {
            pb_strategy_placement(&ops, g->n_nodes, l->op_device + (size_t)k * (size_t)g->n_nodes);
            if (cli_sim_evaluate(l->sim, &ops, ev, err) != PB_OK)
                return PB_ERR;
            batch_events += ev->n_events;
        }
        *ns += (pb_clock_monotonic() - t0) * 1e9;
        *events += batch_events;
        done += count;
    }
    return PB_OK;
}

/* ---------------------------------------------------------------- results */

/* One measured row, kept for the summary. */
typedef struct bench_row {
    int input, by_group, devices;
    double evals_per_s;
    double ns_per_event; /* < 0 when the simulator does not count events */
} bench_row;

typedef struct bench_rows {
    bench_row *row;
    int n, cap;
} bench_rows;

static int bench_rows_add(bench_rows *r, bench_row row)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        bench_row *p = realloc(r->row, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        r->row = p;
        r->cap = cap;
    }
    r->row[r->n++] = row;
    return 0;
}

static void bench_print_row(const char *path, const bench_row *row, int placed, int ops, long evals,
                            long long events)
{
    double per_eval = 1e9 / row->evals_per_s;
    printf("%-8s %7d %7d %7d %12.0f %12.0f", row->by_group ? "grouped" : "op", placed, ops,
           row->devices, row->evals_per_s, per_eval);
    if (row->ns_per_event >= 0)
        printf(" %10.1f %9.2f", (double)events / (double)evals, row->ns_per_event);
    else
        printf(" %10s %9s", "-", "-");
    printf("  %s\n", path);
}

/* One graph at one device count: prepares the simulator, times each level. */
static int bench_devices(const bench_args *a, loader *ld, const bench_file *file, const pb_graph *g,
                         int n_devices, bench_rows *rows, pb_error *err)
{
    pb_cluster *c = NULL;
    if (cluster_preset(a->cluster, n_devices, &c, err) != PB_OK)
        return PB_ERR;
    int n = g->n_nodes > 0 ? g->n_nodes : 1;
    bench_level l = {g, 0, n_devices, 0, NULL, NULL, NULL, NULL};
    l.batch = BENCH_BATCH_INTS / n; /* at most 256 placements, at least one */
    l.batch = l.batch < 1 ? 1 : l.batch > 256 ? 256 : l.batch;
    cli_sim sim = {0};
    cli_sim_result result = {0};
    l.sim = &sim;
    l.result = &result;
    l.draws = malloc((size_t)l.batch * (size_t)(g->grouped->n_nodes + 1) * sizeof(int));
    l.op_device = malloc((size_t)l.batch * (size_t)n * sizeof(int));
    int rc = l.draws && l.op_device ? PB_OK : pb_errorf(err, "out of memory");
    if (rc == PB_OK)
        rc = cli_sim_result_init(&result, n_devices, g, 0, err);
    if (rc == PB_OK)
        rc = cli_sim_open(&sim, ld, a->simulator, g, c, err);
    for (int by_group = g->grouped != g; rc == PB_OK && by_group >= 0; by_group--) {
        double ns = 0;
        long long events = 0;
        l.by_group = by_group;
        uint64_t seed = pb_seed_derive(a->seed, by_group ? "grouped" : "op");
        rc = bench_time(&l, a->evals, seed, &ns, &events, err);
        if (rc != PB_OK)
            break;
        bench_row row = {file->input, by_group, n_devices, 1e9 * (double)a->evals / ns,
                         events > 0 ? ns / (double)events : -1};
        bench_print_row(file->path, &row, by_group ? g->grouped->n_nodes : g->n_nodes, g->n_nodes,
                        a->evals, events);
        fflush(stdout);
        if (bench_rows_add(rows, row))
            rc = pb_errorf(err, "out of memory");
    }
    cli_sim_close(&sim);
    cli_sim_result_free(&result);
    free(l.draws);
    free(l.op_device);
    cluster_free(c);
    return rc;
}

/* ---------------------------------------------------------------- DP-NCCL */

static int bench_double_cmp(const void *a, const void *b);

/* One graph at one device count under DP-NCCL: the same op-level strategy evaluated a->evals
 * times after one untimed warm-up, each evaluation timed alone (they take milliseconds). */
static int bench_dp_devices(const bench_args *a, loader *ld, const bench_file *file,
                            const pb_graph *g, int n_devices, pb_error *err)
{
    pb_cluster *c = NULL;
    if (cluster_preset(a->cluster, n_devices, &c, err) != PB_OK)
        return PB_ERR;
    size_t n = (size_t)(g->n_nodes > 0 ? g->n_nodes : 1);
    int *group = malloc(n * sizeof(int)), *repl = malloc(n * sizeof(int));
    int *devices = malloc((size_t)n_devices * sizeof(int)), start[2];
    double *ms = malloc((size_t)a->evals * sizeof(double));
    cli_sim sim = {0};
    cli_sim_result result = {0};
    int rc = group && repl && devices && ms ? PB_OK : pb_errorf(err, "out of memory");
    if (rc == PB_OK)
        rc = cli_sim_result_init(&result, n_devices, g, 0, err);
    if (rc == PB_OK)
        rc = cli_sim_open(&sim, ld, a->simulator, g, c, err);
    pb_strategy s;
    if (rc == PB_OK) {
        pb_strategy_data_parallel(&s, g->n_nodes, group, repl, PB_REPL_ALLREDUCE, n_devices, start,
                                  devices, NULL);
        rc = cli_sim_evaluate(&sim, &s, &result.eval, err);
    }
    long long events = result.eval.n_events;
    for (long k = 0; rc == PB_OK && k < a->evals; k++) {
        double t0 = pb_clock_monotonic();
        rc = cli_sim_evaluate(&sim, &s, &result.eval, err);
        ms[k] = (pb_clock_monotonic() - t0) * 1e3;
    }
    if (rc == PB_OK) {
        double median = cli_median_sort(ms, (int)a->evals);
        printf("%7d %7d %10.3f %10.3f %10lld %12.0f %14.1f  %s\n", g->n_nodes, n_devices, median,
               ms[0], events, events > 0 ? (double)events / (median * 1e-3) : 0,
               result.eval.step_time_us, file->path);
        fflush(stdout);
    }
    cli_sim_close(&sim);
    cli_sim_result_free(&result);
    free(group);
    free(repl);
    free(devices);
    free(ms);
    cluster_free(c);
    return rc;
}

/* ---------------------------------------------------------------- summary */

static int bench_double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_median_sort(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_double_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Sorts v[0..n) (n > 0) and prints its minimum, median and maximum. */
static void bench_print_spread(double *v, int n, const char *fmt)
{
    double median = cli_median_sort(v, n);
    printf(fmt, v[0], median, v[n - 1]);
}

/* Min/median/max over the graphs of one input, level and device count; scratch holds rows->n. */
static void bench_summary_line(const bench_args *a, const bench_rows *rows, int input, int by_group,
                               int devices, double *scratch)
{
    int n = 0, counted = 1;
    for (int i = 0; i < rows->n; i++) {
        const bench_row *r = &rows->row[i];
        if (r->input != input || r->by_group != by_group || r->devices != devices)
            continue;
        scratch[n++] = r->evals_per_s;
        counted &= r->ns_per_event >= 0;
    }
    if (n == 0)
        return;
    printf("%-8s %7d %6d ", by_group ? "grouped" : "op", devices, n);
    bench_print_spread(scratch, n, " %9.0f %9.0f %9.0f");
    n = 0;
    for (int i = 0; counted && i < rows->n; i++) {
        const bench_row *r = &rows->row[i];
        if (r->input == input && r->by_group == by_group && r->devices == devices)
            scratch[n++] = r->ns_per_event;
    }
    if (counted)
        bench_print_spread(scratch, n, "  %8.2f %8.2f %8.2f");
    else
        printf("  %8s %8s %8s", "-", "-", "-");
    printf("  %s\n", a->inputs[input]);
}

static int bench_print_summary(const bench_args *a, const bench_rows *rows)
{
    double *scratch = malloc((size_t)(rows->n > 0 ? rows->n : 1) * sizeof(double));
    if (!scratch)
        return cli_error("out of memory");
    printf("\n# summary per input: minimum, median and maximum over its graphs\n");
    printf("%-8s %7s %6s  %29s  %26s  %s\n", "level", "devices", "graphs",
           "evals/s (min median max)", "ns/event (min median max)", "input");
    for (int i = 0; i < a->n_inputs; i++)
        for (int by_group = 1; by_group >= 0; by_group--)
            for (int k = 0; k < a->n_devices; k++)
                bench_summary_line(a, rows, i, by_group, a->devices[k], scratch);
    free(scratch);
    return 0;
}

/* The CPU the figures were measured on (first "model name" of /proc/cpuinfo), if known. */
static void bench_print_machine(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *colon = strchr(line, ':');
        if (colon)
            printf("# cpu: %s", colon + 2);
        break;
    }
    if (f)
        fclose(f);
}

static int bench_run(const bench_args *a, const bench_files *files)
{
    pb_error err;
    loader *ld = loader_new(NULL, 0, &err);
    if (!ld)
        return cli_error("bench: %s", err.msg);
    bench_print_machine();
    if (a->dp_nccl) {
        printf("# simulator %s, cluster %s, DP-NCCL, %ld evaluations per row\n", a->simulator,
               a->cluster, a->evals);
        printf("%7s %7s %10s %10s %10s %12s %14s  %s\n", "ops", "devices", "median ms", "min ms",
               "events", "events/s", "step us", "graph");
    } else {
        printf("# simulator %s, cluster %s, %ld evaluations per row, seed %llu\n", a->simulator,
               a->cluster, a->evals, a->seed);
        printf("%-8s %7s %7s %7s %12s %12s %10s %9s  %s\n", "level", "nodes", "ops", "devices",
               "evals/s", "ns/eval", "events", "ns/event", "graph");
    }
    bench_rows rows = {0};
    int status = 0, measured = 0;
    for (int i = 0; status == 0 && i < files->n; i++) {
        const bench_file *file = &files->file[i];
        pb_graph *g = NULL;
        if (nodelink_read(file->path, &g, &err) != PB_OK) {
            fprintf(stderr, "placebench: bench: skipped %s\n", err.msg);
            continue;
        }
        for (int k = 0; status == 0 && k < a->n_devices; k++)
            if ((a->dp_nccl ? bench_dp_devices(a, ld, file, g, a->devices[k], &err)
                            : bench_devices(a, ld, file, g, a->devices[k], &rows, &err)) != PB_OK)
                status = cli_error("bench: %s: %s", file->path, err.msg);
        measured++;
        graph_free(g);
    }
    loader_free(ld);
    if (status == 0 && measured == 0)
        status = cli_error("bench: no node-link graph among the inputs");
    if (status == 0 && !a->dp_nccl)
        status = bench_print_summary(a, &rows);
    free(rows.row);
    return status;
}

int cmd_bench(int argc, char **argv)
{
    /* `bench placer` lives in bench_placer.c; everything else here is `bench simulator`. */
    if (argc >= 2 && strcmp(argv[1], "placer") == 0)
        return bench_placer(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "sfb") == 0)
        return bench_sfb(argc - 1, argv + 1);
    bench_args a = {0};
    a.inputs = calloc((size_t)argc + 1, sizeof(char *));
    if (!a.inputs)
        return cli_error("out of memory");
    a.devices[0] = 3;
    a.devices[1] = 5;
    a.devices[2] = 8;
    a.n_devices = 3;
    a.seed = 1;
    a.simulator = "placeto";
    a.cluster = "placeto-k80";
    int status = bench_parse_args(argc, argv, &a);
    if (a.evals == 0)
        a.evals = a.dp_nccl ? 20 : 2000;
    bench_files files = {0};
    if (status == 0)
        status = bench_collect(&a, &files);
    if (status == 0)
        status = bench_run(&a, &files);
    bench_files_free(&files);
    free(a.inputs);
    return status < 0 ? 0 : status;
}
