/* cmd_dataset.c — `placebench dataset gen|stats|export|import|list`: the graph datasets. */
#include "cli.h"

#include "cli_genopt.h"
#include "cli_output.h"
#include "cli_torch.h"
#include "cli_zoo.h"
#include "core/clock.h"
#include "core/fileio.h"
#include "data/gen/gen.h"
#include "model/devcost.h"
#include "model/graph.h"
#include "data/msr.h"
#include "data/nodelink.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char dataset_usage[] =
    "placebench dataset gen|stats|export|import|list ... (placebench dataset --help)";

static void dataset_print_help(void)
{
    char families[256], models[512];
    gen_family_names(families, sizeof families);
    gen_model_names(models, sizeof models);
    printf(
        "usage: placebench dataset SUBCOMMAND ...\n\n"
        "  gen FAMILY [--count N] [--seed S] [--first K] [FAMILY OPTIONS] [--cost-model M]\n"
        "      --out DIR\n"
        "      generates graphs K .. K+N-1 (default 0 .. 31) of a family (%s)\n"
        "      from seed S (default 1) and writes DIR/<family>-NN.json: networkx node-link\n"
        "      JSON at op level, each op with its 'group'.  Graph i's seed is\n"
        "      pb_seed_derive(S, \"i\"), so a graph does not depend on --count.\n"
        "      The experiments read datasets/<family>/*.json from the project root:\n"
        "        placebench dataset gen cifar10 --out datasets/cifar10\n"
        "      --cost-model calibrated (default) times each kernel by the K80 roofline\n"
        "      scaled by its op class's measured efficiency (README \"Cost model\n"
        "      calibration\"); roofline is the plain K80 roofline of dataset version 1,\n"
        "      which reproduces graphs made before the calibration.  Each file names its\n"
        "      origin (graph attribute 'origin': dataset version and cost model), and\n"
        "      results store it (runs.graph_origin).\n"
        "%s"
        "  gen MODEL [--layers L] [--batch B] [--seed S] [--opt KEY=VALUE ...]\n"
        "      [--cost-model M] --out DIR\n"
        "      one graph of the model zoo (%s)\n"
        "      as DIR/<model>[-<L>l].json (wavenet -<L>s: stacks; amoebanet -<L>c:\n"
        "      normal cells): TAG, GDP and HeterPS models (dataset list).  --opt sets one\n"
        "      of the model's options (dataset list shows them with their defaults); a\n"
        "      value other than the default adds '+KEY=VALUE' to the graph's name.\n"
        "      --cost-model as above; HeterPS's layer chains keep their roofline costs.\n"
        "  stats [--json|--balance] [--seed S] [--count N] [FAMILY OPTIONS] FILE|DIR|FAMILY ...\n"
        "      for each graph file, folder of .json graphs, or family name (generated in\n"
        "      memory): graphs, average grouped nodes, edges and longest path (edges), the\n"
        "      longest paths' range, and op-level averages; for cifar10, ptb and nmt (a\n"
        "      family, or a folder of that name) also Table I of the traversal-order paper\n"
        "      and the difference.  --json prints one JSON object per graph instead: nodes,\n"
        "      edges, longest path, maximum in/out degree and degree histogram (networkx's:\n"
        "      index = in + out degree) of the op-level and of the grouped graph.\n"
        "      --balance prints per set the mean compute time per op, the same with delta1\n"
        "      (5.7 us after every op costing more than 0: the Placeto simulator's device\n"
        "      time) and the mean time to send an op's outputs over the Placeto bus\n"
        "      (7600 B/us), all in us, transfer / compute, the share of\n"
        "      ops costing 0, the bytes crossing group boundaries per graph (MB; ops placed\n"
        "      with another op count in its group) and the shares of them that are\n"
        "      variable -> update edges and reads of variables, by bytes and by number of\n"
        "      transfers (one per producer, port and consuming group).\n"
        "  stats [--json] [--layers L] [--batch B] [--opt KEY=VALUE ...] zoo|MODEL ...\n"
        "      per zoo model (each depth its paper reports, or --layers L): ops, edges,\n"
        "      trainable parameter MiB, GFLOPs and single-device step time per device type,\n"
        "      with the paper's op count and parameter size beside them.\n"
        "  export --graph IN.json --out OUT.json [--grouped]\n"
        "      rewrites a graph as node-link JSON; --grouped writes the grouped graph (one node\n"
        "      per group: cost, mem and output bytes summed; links carry the crossing bytes).\n"
        "  import --msr FILE.json --out OUT.json [--expert SPLIT.json --placement-out P.json]\n"
        "      converts an MSR dnn-partitioning graph (datasets/msr-dnn-partitioning/) to\n"
        "      node-link JSON: accelerator latency as cost (ms -> us), size as mem, edge\n"
        "      sizes as output bytes, color classes as 'colocation'.  With --expert, also\n"
        "      writes the human-expert split (human-experts/*.json) as a placement file\n"
        "      {node: device} for 'placebench simulate' (accelerators first, then CPUs).\n"
        "  import --torch MODEL --out OUT.json [--batch B]\n"
        "      traces the training step of a PyTorch model (inception_v3, resnet101, vgg19,\n"
        "      bert) with harness/data/torch_export.py (torch, torchvision, functorch; the\n"
        "      Python in $PLACEBENCH_PYTHON, default python3), batch B (default 2), and\n"
        "      writes it as node-link JSON after the usual validation.\n"
        "  list\n"
        "      the generator families and the paper's Table I numbers, and the zoo's models\n"
        "      with their defaults.\n\n"
        "Generation is deterministic: the same family, seed and index give the same graph\n"
        "(same checksum) on every machine.\n",
        families, cli_genopt_help, models);
}

/* Parses a non-negative integer option value; -1 when it is not one. */
static long long dataset_number(const char *text)
{
    if (!text[0] || text[0] == '-')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    return errno || *end ? -1 : v;
}

/* Writes g to path through PATH.tmp, so a failed write leaves no file. */
static int dataset_write_graph(const char *path, const pb_graph *g)
{
    cli_output o;
    if (cli_output_open(&o, path))
        return 1;
    pb_error err;
    int ok = nodelink_fwrite(o.f, g, &err) == PB_OK;
    if (!ok)
        cli_error("%s: %s", path, err.msg);
    return cli_output_close(&o, ok) || !ok;
}

/* mkdir -p. */
static int dataset_mkdirs(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* ------------------------------------------------------------------ gen */

#define DATASET_MAX_OPTS 16

typedef struct dataset_gen_args {
    const char *family, *out, *cost_model;
    long long count, seed, first;
    cli_genopt opt;                     /* --layers and --batch are the zoo's too */
    const char *zopt[DATASET_MAX_OPTS]; /* --opt KEY=VALUE, in order */
    int n_zopt;
} dataset_gen_args;

/* Applies the --opt values to model m's arguments; 0 or 1 (message printed). */
static int dataset_model_opts(const gen_model *m, gen_model_args *ma, const char *const *opt, int n,
                              const char *cmd)
{
    pb_error err;
    for (int k = 0; k < n; k++)
        if (gen_model_set_opt(m, ma, opt[k], &err) != PB_OK)
            return cli_error("dataset %s: --opt %s: %s", cmd, opt[k], err.msg);
    return 0;
}

static int dataset_gen_parse(int argc, char **argv, dataset_gen_args *a)
{
    a->count = 32;
    a->seed = 1;
    cli_genopt_init(&a->opt);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int is_opt = cli_genopt_parse("dataset gen", argc, argv, &i, &a->opt);
        if (is_opt < 0)
            return 1;
        if (is_opt)
            continue;
        if (arg[0] != '-') {
            if (a->family)
                return cli_error("dataset gen: more than one family ('%s', '%s')", a->family, arg);
            a->family = arg;
            continue;
        }
        if (i + 1 >= argc)
            return cli_error("dataset gen: %s needs a value", arg);
        const char *v = argv[++i];
        long long *slot = strcmp(arg, "--count") == 0   ? &a->count
                          : strcmp(arg, "--seed") == 0  ? &a->seed
                          : strcmp(arg, "--first") == 0 ? &a->first
                                                        : NULL;
        if (strcmp(arg, "--out") == 0)
            a->out = v;
        else if (strcmp(arg, "--cost-model") == 0)
            a->cost_model = v;
        else if (strcmp(arg, "--opt") == 0 && a->n_zopt == DATASET_MAX_OPTS)
            return cli_error("dataset gen: more than %d --opt", DATASET_MAX_OPTS);
        else if (strcmp(arg, "--opt") == 0)
            a->zopt[a->n_zopt++] = v;
        else if (!slot)
            return cli_error("dataset gen: unknown option '%s'", arg);
        else if ((*slot = dataset_number(v)) < 0)
            return cli_error("dataset gen: %s '%s' is not a non-negative integer", arg, v);
    }
    if (!a->family || !a->out)
        return cli_usage("placebench dataset gen FAMILY [--count N] [--seed S] [--first K] "
                         "[FAMILY OPTIONS] [--cost-model calibrated|roofline] --out DIR");
    if (a->count < 1 || a->first + a->count > 10000)
        return cli_error("dataset gen: --count must be 1..10000 (and --first + --count <= 10000)");
    return 0;
}

static int dataset_gen(int argc, char **argv)
{
    dataset_gen_args a = {0};
    int rc = dataset_gen_parse(argc, argv, &a);
    if (rc)
        return rc;
    const gen_family *f = gen_family_find(a.family);
    const gen_model *m = f ? NULL : gen_model_find(a.family);
    if (!f && !m) {
        char families[256], models[512];
        gen_family_names(families, sizeof families);
        gen_model_names(models, sizeof models);
        return cli_error("dataset gen: unknown family or model '%s' (families: %s; models: %s)",
                         a.family, families, models);
    }
    devcost_model cost = DEVCOST_CALIBRATED;
    if (a.cost_model && devcost_model_parse(a.cost_model, &cost) != 0)
        return cli_error("dataset gen: --cost-model '%s' is not one of calibrated, roofline",
                         a.cost_model);
    if (f && a.n_zopt)
        return cli_error("dataset gen: --opt is for zoo models, not '%s'", f->name);
    if (m && (a.first || a.count != 32 || cli_genopt_family_only(&a.opt)))
        return cli_error("dataset gen: --count, --first, --kernelless, --ports, --colocate, "
                         "--width and --steps are for families, not '%s'",
                         m->name);
    if (dataset_mkdirs(a.out) != 0)
        return cli_error("dataset gen: cannot create folder '%s': %s", a.out, strerror(errno));
    if (m) {
        gen_model_args ma = {.batch = (int)a.opt.batch,
                             .layers = (int)a.opt.layers,
                             .seed = (uint64_t)a.seed,
                             .cost_model = (int)cost};
        if (dataset_model_opts(m, &ma, a.zopt, a.n_zopt, "gen"))
            return 1;
        return cli_zoo_gen(m, &ma, a.out);
    }
    gen_options opt;
    char described[256];
    cli_genopt_resolve(&a.opt, f, &opt);
    opt.cost_model = (int)cost;
    cli_genopt_describe(&opt, described, sizeof described);
    double t0 = pb_clock_monotonic();
    long long ops = 0, groups = 0;
    for (long long i = a.first; i < a.first + a.count; i++) {
        pb_graph *g;
        pb_error err;
        if (gen_graph_with(f, (uint64_t)a.seed, (int)i, &opt, &g, &err) != PB_OK)
            return cli_error("dataset gen: %s", err.msg);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s-%02lld.json", a.out, f->name, i);
        ops += g->n_nodes;
        groups += g->grouped->n_nodes;
        rc = dataset_write_graph(path, g);
        graph_free(g);
        if (rc)
            return 1;
    }
    fprintf(stderr,
            "placebench: wrote %lld %s graphs (%lld ops, %lld groups) to %s in %.2f s (%s)\n",
            a.count, f->name, ops, groups, a.out, pb_clock_monotonic() - t0, described);
    return 0;
}

/* ------------------------------------------------------------------ graph sets for stats */

typedef struct dataset_set {
    char name[256];   /* family, folder or file name */
    pb_graph **graph; /* owned */
    char **label;     /* file path or generated name, owned */
    int n;
} dataset_set;

static void dataset_set_free(dataset_set *s)
{
    for (int i = 0; i < s->n; i++) {
        graph_free(s->graph[i]);
        free(s->label[i]);
    }
    free(s->graph);
    free(s->label);
    memset(s, 0, sizeof *s);
}

static int dataset_set_add(dataset_set *s, pb_graph *g, const char *label)
{
    pb_graph **gs = realloc(s->graph, (size_t)(s->n + 1) * sizeof *gs);
    if (gs)
        s->graph = gs;
    char **ls = realloc(s->label, (size_t)(s->n + 1) * sizeof *ls);
    if (ls)
        s->label = ls;
    char *l = strdup(label);
    if (!gs || !ls || !l) {
        free(l);
        graph_free(g);
        return cli_error("out of memory");
    }
    s->graph[s->n] = g;
    s->label[s->n++] = l;
    return 0;
}

static int dataset_set_read(dataset_set *s, const char *path)
{
    pb_graph *g;
    pb_error err;
    if (nodelink_read(path, &g, &err) != PB_OK)
        return cli_error("%s", err.msg);
    return dataset_set_add(s, g, path);
}

/* The .json files of a folder, in name order. */
static int dataset_set_folder(dataset_set *s, const char *dir)
{
    char **names;
    int n, rc = 0;
    pb_error err;
    if (fileio_list(dir, ".json", &names, &n, &err))
        return cli_error("%s", err.msg);
    if (n == 0)
        rc = cli_error("%s: no .json graph files in the folder", dir);
    for (int i = 0; !rc && i < n; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(len);
        if (!path) {
            rc = cli_error("out of memory");
            break;
        }
        snprintf(path, len, "%s/%s", dir, names[i]);
        rc = dataset_set_read(s, path);
        free(path);
    }
    fileio_list_free(names, n);
    return rc;
}

static int dataset_set_generate(dataset_set *s, const gen_family *f, long long seed,
                                long long count, const cli_genopt *flags)
{
    gen_options opt;
    cli_genopt_resolve(flags, f, &opt);
    for (long long i = 0; i < count; i++) {
        pb_graph *g;
        pb_error err;
        if (gen_graph_with(f, (uint64_t)seed, (int)i, &opt, &g, &err) != PB_OK)
            return cli_error("%s", err.msg);
        if (dataset_set_add(s, g, g->name))
            return 1;
    }
    return 0;
}

/* A file, a folder, or a family name; the set is named after the folder's or file's base name or
 * the family. */
static int dataset_set_load(dataset_set *s, const char *what, long long seed, long long count,
                            const cli_genopt *flags)
{
    struct stat st;
    char trimmed[4096];
    snprintf(trimmed, sizeof trimmed, "%s", what);
    for (size_t n = strlen(trimmed); n > 1 && trimmed[n - 1] == '/'; n--)
        trimmed[n - 1] = '\0';
    const char *base = strrchr(trimmed, '/') ? strrchr(trimmed, '/') + 1 : trimmed;
    snprintf(s->name, sizeof s->name, "%.255s", base);
    if (stat(what, &st) == 0 && (cli_genopt_family_only(flags) || flags->batch || flags->layers))
        return cli_error("dataset stats: '%s' is a file or folder: the family options "
                         "(--kernelless, --ports, --colocate, --batch, --width, --layers, --steps) "
                         "apply to families generated in memory",
                         what);
    if (stat(what, &st) == 0)
        return S_ISDIR(st.st_mode) ? dataset_set_folder(s, what) : dataset_set_read(s, what);
    const gen_family *f = gen_family_find(what);
    if (!f) {
        char families[256];
        gen_family_names(families, sizeof families);
        return cli_error("dataset stats: '%s' is neither a file, a folder nor a family (%s)", what,
                         families);
    }
    return dataset_set_generate(s, f, seed, count, flags);
}

/* ------------------------------------------------------------------ stats */

typedef struct dataset_summary {
    double nodes, edges, longest, op_nodes, op_edges;
    int lp_min, lp_max;
} dataset_summary;

static void dataset_summarize(const dataset_set *s, dataset_summary *m)
{
    memset(m, 0, sizeof *m);
    m->lp_min = -1;
    for (int i = 0; i < s->n; i++) {
        const pb_graph *g = s->graph[i], *q = g->grouped;
        int lp = graph_longest_path(q);
        m->nodes += q->n_nodes;
        m->edges += q->n_edges;
        m->longest += lp;
        m->op_nodes += g->n_nodes;
        m->op_edges += g->n_edges;
        if (m->lp_min < 0 || lp < m->lp_min)
            m->lp_min = lp;
        if (lp > m->lp_max)
            m->lp_max = lp;
    }
    if (s->n > 0) {
        m->nodes /= s->n;
        m->edges /= s->n;
        m->longest /= s->n;
        m->op_nodes /= s->n;
        m->op_edges /= s->n;
    }
}

static double dataset_pct(double ours, double paper)
{
    return 100.0 * (ours - paper) / paper;
}

static void dataset_print_summary(const dataset_set *s)
{
    dataset_summary m;
    dataset_summarize(s, &m);
    char range[32];
    snprintf(range, sizeof range, "%d-%d", m.lp_min, m.lp_max);
    printf("%-22s %6d %8.1f %8.1f %8.1f %9s %9.1f %9.1f\n", s->name, s->n, m.nodes, m.edges,
           m.longest, range, m.op_nodes, m.op_edges);
    const gen_family *f = gen_family_find(s->name);
    if (!f || !f->has_paper_stats)
        return;
    const gen_paper_stats *p = &f->paper;
    snprintf(range, sizeof range, "%d-%d", p->longest_min, p->longest_max);
    printf("%-22s %6d %8.1f %8.1f %8.1f %9s\n", "  paper (Table I)", 32, p->nodes, p->edges,
           p->longest_path, range);
    printf("%-22s %6s %+7.1f%% %+7.1f%% %+7.1f%%\n", "  difference", "",
           dataset_pct(m.nodes, p->nodes), dataset_pct(m.edges, p->edges),
           dataset_pct(m.longest, p->longest_path));
}

/* networkx's degree_histogram (index = in + out degree) and the maximum in/out degrees. */
static json_t *dataset_graph_json(const pb_graph *g)
{
    int max_in = 0, max_out = 0, max_deg = 0;
    for (int v = 0; v < g->n_nodes; v++) {
        int in = g->pred_start[v + 1] - g->pred_start[v];
        int out = g->succ_start[v + 1] - g->succ_start[v];
        max_in = in > max_in ? in : max_in;
        max_out = out > max_out ? out : max_out;
        max_deg = in + out > max_deg ? in + out : max_deg;
    }
    long long *hist = calloc((size_t)max_deg + 1, sizeof *hist);
    json_t *o = json_object(), *h = json_array();
    for (int v = 0; hist && v < g->n_nodes; v++)
        hist[g->pred_start[v + 1] - g->pred_start[v] + g->succ_start[v + 1] - g->succ_start[v]]++;
    for (int d = 0; hist && d <= max_deg && g->n_nodes > 0; d++)
        json_array_append_new(h, json_integer(hist[d]));
    free(hist);
    json_object_set_new(o, "nodes", json_integer(g->n_nodes));
    json_object_set_new(o, "edges", json_integer(g->n_edges));
    json_object_set_new(o, "longest_path", json_integer(graph_longest_path(g)));
    json_object_set_new(o, "max_in_degree", json_integer(max_in));
    json_object_set_new(o, "max_out_degree", json_integer(max_out));
    json_object_set_new(o, "degree_histogram", h);
    return o;
}

static int dataset_print_json(const dataset_set *s)
{
    for (int i = 0; i < s->n; i++) {
        const pb_graph *g = s->graph[i];
        json_t *o = json_object();
        json_object_set_new(o, "set", json_string(s->name));
        json_object_set_new(o, "graph", json_string(s->label[i]));
        json_object_set_new(o, "checksum", json_string(g->checksum));
        json_object_set_new(o, "op", dataset_graph_json(g));
        json_object_set_new(o, "grouped", dataset_graph_json(g->grouped));
        char *text = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        if (!text)
            return cli_error("out of memory");
        puts(text);
        free(text);
    }
    return 0;
}

static int dataset_stats(int argc, char **argv)
{
    int as_json = 0, balance = 0, n_sets = 0, n_opt = 0;
    long long seed = 1, count = 32;
    const char *opt[DATASET_MAX_OPTS];
    cli_genopt flags;
    cli_genopt_init(&flags);
    for (int i = 1; i < argc; i++) {
        int is_opt = cli_genopt_parse("dataset stats", argc, argv, &i, &flags);
        if (is_opt < 0)
            return 1;
        if (is_opt) {
            continue;
        } else if (strcmp(argv[i], "--opt") == 0) {
            if (i + 1 >= argc)
                return cli_error("dataset stats: --opt needs KEY=VALUE");
            if (n_opt == DATASET_MAX_OPTS)
                return cli_error("dataset stats: more than %d --opt", DATASET_MAX_OPTS);
            opt[n_opt++] = argv[++i];
        } else if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "--balance") == 0) {
            *(argv[i][2] == 'j' ? &as_json : &balance) = 1;
        } else if (strcmp(argv[i], "--seed") == 0 || strcmp(argv[i], "--count") == 0) {
            long long v = i + 1 < argc ? dataset_number(argv[i + 1]) : -1;
            if (v < 0 || (argv[i][2] == 'c' && (v < 1 || v > 10000)))
                return cli_error("dataset stats: %s needs a non-negative integer%s", argv[i],
                                 argv[i][2] == 'c' ? " 1..10000" : "");
            *(argv[i][2] == 's' ? &seed : &count) = v;
            i++;
        } else if (argv[i][0] == '-') {
            return cli_error("dataset stats: unknown option '%s'", argv[i]);
        } else {
            n_sets++;
        }
    }
    if (n_sets == 0)
        return cli_usage("placebench dataset stats [--json|--balance] [--seed S] [--count N] "
                         "[FAMILY OPTIONS] FILE|DIR|FAMILY ...");
    if (as_json && balance)
        return cli_error("dataset stats: --json and --balance exclude each other");
    int header = as_json; /* printed once the first set has loaded */
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            i += strcmp(argv[i], "--json") != 0 && strcmp(argv[i], "--balance") != 0;
            continue;
        }
        struct stat st;
        if (stat(argv[i], &st) != 0 && !gen_family_find(argv[i]) &&
            (gen_model_find(argv[i]) || strcmp(argv[i], "zoo") == 0)) {
            if (cli_genopt_family_only(&flags) || balance)
                return cli_error("dataset stats: --balance and the family options are not for "
                                 "zoo models ('%s')",
                                 argv[i]);
            gen_model_args ma = {
                .batch = (int)flags.batch, .layers = (int)flags.layers, .seed = (uint64_t)seed};
            const gen_model *m = gen_model_find(argv[i]);
            if (n_opt && !m)
                return cli_error("dataset stats: --opt applies to one model, not to 'zoo'");
            if (n_opt && dataset_model_opts(m, &ma, opt, n_opt, "stats"))
                return 1;
            if (cli_zoo_stats(argv[i], &ma, as_json))
                return 1;
            continue;
        }
        dataset_set s = {0};
        int rc = dataset_set_load(&s, argv[i], seed, count, &flags);
        if (!rc && !header++) {
            if (balance)
                cli_balance_header();
            else
                printf("%-22s %6s %8s %8s %8s %9s %9s %9s\n", "set", "graphs", "nodes", "edges",
                       "longest", "lp-range", "op-nodes", "op-edges");
        }
        if (!rc && as_json)
            rc = dataset_print_json(&s);
        else if (!rc && balance)
            cli_balance_print(s.name, (const pb_graph *const *)s.graph, s.n);
        else if (!rc)
            dataset_print_summary(&s);
        dataset_set_free(&s);
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------ export, import, list */

static int dataset_export(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    int grouped = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--grouped") == 0) {
            grouped = 1;
        } else if ((strcmp(argv[i], "--graph") == 0 || strcmp(argv[i], "--out") == 0) &&
                   i + 1 < argc) {
            *(argv[i][2] == 'g' ? &in : &out) = argv[i + 1];
            i++;
        } else {
            return cli_error("dataset export: unexpected argument '%s'", argv[i]);
        }
    }
    if (!in || !out)
        return cli_usage("placebench dataset export --graph IN.json --out OUT.json [--grouped]");
    pb_graph *g;
    pb_error err;
    if (nodelink_read(in, &g, &err) != PB_OK)
        return cli_error("%s", err.msg);
    int rc = dataset_write_graph(out, grouped ? g->grouped : g);
    graph_free(g);
    return rc;
}

/* Writes an expert split as a placement file: {"node name": device, ...}. */
static int dataset_write_placement(const char *path, const pb_graph *g, const int *device)
{
    json_t *o = json_object();
    for (int v = 0; o && v < g->n_nodes; v++)
        json_object_set_new(o, g->node_name[v], json_integer(device[v]));
    int rc = o ? json_dump_file(o, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : -1;
    json_decref(o);
    if (rc != 0)
        return cli_error("%s: cannot write", path);
    return 0;
}

static int dataset_import(int argc, char **argv)
{
    static const char usage[] = "placebench dataset import --msr FILE.json --out OUT.json "
                                "[--expert SPLIT.json --placement-out P.json] | --torch MODEL "
                                "--out OUT.json [--batch B]";
    const char *msr = NULL, *out = NULL, *expert = NULL, *placement = NULL, *torch = NULL;
    const char *batch = NULL;
    for (int i = 1; i < argc; i++) {
        const char **slot = strcmp(argv[i], "--msr") == 0             ? &msr
                            : strcmp(argv[i], "--out") == 0           ? &out
                            : strcmp(argv[i], "--expert") == 0        ? &expert
                            : strcmp(argv[i], "--placement-out") == 0 ? &placement
                            : strcmp(argv[i], "--torch") == 0         ? &torch
                            : strcmp(argv[i], "--batch") == 0         ? &batch
                                                                      : NULL;
        if (!slot || i + 1 >= argc)
            return cli_error("dataset import: unexpected argument '%s'", argv[i]);
        *slot = argv[++i];
    }
    if (torch && out && !msr && !expert && !placement) {
        long long b = batch ? dataset_number(batch) : 0;
        if (b < 0 || b > 4096)
            return cli_error("dataset import: --batch '%s' is not an integer 1..4096", batch);
        return cli_torch_import(torch, (int)b, out);
    }
    if (!msr || !out || !expert != !placement || torch || batch)
        return cli_usage(usage);
    pb_graph *g;
    pb_error err;
    if (msr_read(msr, &g, NULL, &err) != PB_OK)
        return cli_error("%s", err.msg);
    int rc = dataset_write_graph(out, g);
    if (rc == 0 && expert) {
        int *device = malloc((size_t)g->n_nodes * sizeof(int)), n_devices = 0;
        if (!device)
            rc = cli_error("out of memory");
        else if (msr_read_expert(msr, expert, g, device, &n_devices, &err) != PB_OK)
            rc = cli_error("%s", err.msg);
        else
            rc = dataset_write_placement(placement, g, device);
        if (rc == 0)
            fprintf(stderr, "%s: expert split over %d devices written to %s\n", expert, n_devices,
                    placement);
        free(device);
    }
    graph_free(g);
    return rc;
}

static int dataset_list(void)
{
    printf("%-8s %8s %8s %8s %9s  %s\n", "family", "nodes", "edges", "longest", "lp-range",
           "built from");
    for (int i = 0; gen_family_at(i); i++) {
        const gen_family *f = gen_family_at(i);
        char range[32];
        snprintf(range, sizeof range, "%d-%d", f->paper.longest_min, f->paper.longest_max);
        printf("%-8s %8.1f %8.1f %8.1f %9s  %s\n", f->name, f->paper.nodes, f->paper.edges,
               f->paper.longest_path, range, f->description);
    }
    printf("(nodes, edges, longest path: the paper's Table I averages of the grouped graphs)\n");
    printf("\ndefault options of the families (dataset gen --help):\n");
    for (int i = 0; gen_family_at(i); i++) {
        char described[256];
        cli_genopt_describe(&gen_family_at(i)->defaults, described, sizeof described);
        printf("%-8s %s\n", gen_family_at(i)->name, described);
    }
    cli_zoo_list();
    return 0;
}

int cmd_dataset(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage(dataset_usage);
    if (cli_is_help(argv[1])) {
        dataset_print_help();
        return 0;
    }
    for (int i = 2; i < argc; i++)
        if (cli_is_help(argv[i])) {
            dataset_print_help();
            return 0;
        }
    const char *sub = argv[1];
    if (strcmp(sub, "gen") == 0)
        return dataset_gen(argc - 1, argv + 1);
    if (strcmp(sub, "stats") == 0)
        return dataset_stats(argc - 1, argv + 1);
    if (strcmp(sub, "export") == 0)
        return dataset_export(argc - 1, argv + 1);
    if (strcmp(sub, "import") == 0)
        return dataset_import(argc - 1, argv + 1);
    if (strcmp(sub, "list") == 0)
        return dataset_list();
    cli_error("dataset: unknown subcommand '%s' (gen, stats, export, import, list)", sub);
    return 2;
}
