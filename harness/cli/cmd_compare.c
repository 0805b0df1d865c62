/* cmd_compare.c — `placebench compare PLUGIN.so`: a placer ranked against the built-in placers
 * on a standard suite (configs/suite/), with a leaderboard per problem and its plots. */
/* realpath() is an X/Open function; the build only asks for POSIX 2008. */
#define _XOPEN_SOURCE 700
#include "cli.h"
#include "cmd_plot.h"

#include "config/config.h"
#include "plugin/loader.h"
#include "run/plan.h"
#include "run/runner.h"
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char compare_usage[] =
    "placebench compare PLUGIN.so [--suite NAME] [-j N] [--results FILE] [--resume]\n"
    "                             [--out DIR] [--no-plot] [--quiet]\n"
    "\n"
    "Ranks the placer plugin PLUGIN.so against the built-in placers on a suite of problems\n"
    "(a problem: one graph on a cluster of some size and a simulator; each suite fixes the\n"
    "budgets and repeats).  The built-in placers' runs are made once and kept in the suite's\n"
    "results file (resumed like any sweep when interrupted); the plugin's runs go to their own\n"
    "file, made afresh each time (--resume continues an interrupted one).  Prints a\n"
    "leaderboard per problem (mean step time, search time and simulator calls over the\n"
    "repeats, and the rank by step time, or by monetary cost in a problem file that sets\n"
    "objective = \"cost\") and the mean rank of each placer over the problems,\n"
    "and draws with gnuplot the step time against the search time per problem and a heat map\n"
    "of the ranks.\n"
    "\n"
    "  --suite NAME    every problem file of configs/suite/ (placeto.lua, zoo.lua,\n"
    "                  heterps.lua: one experiment each, the problems of one simulator with\n"
    "                  the placers that apply) with its profile NAME (quick or full),\n"
    "                  looked for from the working folder, then in the source tree; or the\n"
    "                  path of one experiment file, or of a folder of them (run without a\n"
    "                  profile; files named _*.lua are only included by others); default quick.  A problem file the plugin does not apply to\n"
    "                  (its strategy kinds or simulators, ABI 1.4) is skipped with a message\n"
    "  -j N            worker processes at once (default 1)\n"
    "  --results FILE  the built-in placers' results, for a one-file suite (default: the\n"
    "                  suite's results file; a folder suite keeps one per problem file)\n"
    "  --resume        keep the plugin's earlier runs of this suite instead of redoing them\n"
    "  --out DIR       plots folder (default plots/out/<suite>-<placer>)\n"
    "  --no-plot       no plots\n"
    "  --quiet         no progress output\n"
    "\n"
    "The suite's graphs must exist: placebench dataset gen cifar10 --out datasets/cifar10 (and\n"
    "nmt, ptb; vgg19 and bert-small --out datasets/zoo; the HeterPS chains are in the tree).";

typedef struct compare_opts {
    const char *plugin, *suite, *results, *out_dir;
    int jobs, progress, plot, resume;
} compare_opts;

/* One cell of the merged leaderboard. */
typedef struct compare_cell {
    const store_board_row *row;
    int user;    /* the compared plugin's */
    int problem; /* index into the sorted problem labels */
    int entry;   /* index into the sorted entry labels */
    int by_cost; /* the problem's objective is monetary cost (objective = "cost") */
    double key;  /* what ranks: mean step time, or mean cost; NAN without an ok (feasible) run */
    int rank;    /* 1 = lowest key; cells without one rank last */
} compare_cell;

typedef struct compare_board {
    store_board_row *rows;
    int n_rows;
    unsigned char *user, *by_cost; /* per row: the compared plugin's; ranked by cost */
    compare_cell *cells;
    const char **problems, **entries;
    int n_problems, n_entries;
    const char *user_entry; /* borrowed from rows; NULL when the plugin has no row */
} compare_board;

/* snprintf that reports truncation: prints the error and returns 1 when buf is too small. */
static int compare_fmt(char *buf, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int compare_fmt(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= n)
        return cli_error("compare: name or path too long: %s...", buf);
    return 0;
}

static int compare_parse(int argc, char **argv, compare_opts *o)
{
    *o = (compare_opts){.suite = "quick", .jobs = 1, .progress = isatty(2) ? 2 : 1, .plot = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (cli_is_help(a)) {
            puts(compare_usage);
            return -1;
        } else if (strcmp(a, "--suite") == 0 && more) {
            o->suite = argv[++i];
        } else if (strcmp(a, "-j") == 0 && more) {
            o->jobs = atoi(argv[++i]);
            if (o->jobs < 1 || o->jobs > 1024)
                return cli_error("-j %s: need 1..1024 worker processes", argv[i]);
        } else if (strncmp(a, "-j", 2) == 0 && a[2]) {
            o->jobs = atoi(a + 2);
            if (o->jobs < 1 || o->jobs > 1024)
                return cli_error("%s: need 1..1024 worker processes", a);
        } else if (strcmp(a, "--results") == 0 && more) {
            o->results = argv[++i];
        } else if (strcmp(a, "--out") == 0 && more) {
            o->out_dir = argv[++i];
        } else if (strcmp(a, "--resume") == 0) {
            o->resume = 1;
        } else if (strcmp(a, "--no-plot") == 0) {
            o->plot = 0;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o->progress = 0;
        } else if (a[0] == '-' || o->plugin) {
            return cli_usage(compare_usage);
        } else {
            o->plugin = a;
        }
    }
    if (!o->plugin)
        return cli_usage(compare_usage);
    return 0;
}

/* The suite: a path as given (a .lua file, or a folder whose files run without a profile), else
 * the folder configs/suite here, or else in the source tree, whose files run with the profile
 * NAME (*profile set to suite). */
static int compare_suite_path(const char *suite, char *buf, size_t n, const char **profile)
{
    size_t len = strlen(suite);
    *profile = NULL;
    if (strchr(suite, '/') || (len > 4 && strcmp(suite + len - 4, ".lua") == 0))
        return compare_fmt(buf, n, "%s", suite);
    *profile = suite;
    struct stat st;
    if (stat("configs/suite", &st) == 0 && S_ISDIR(st.st_mode))
        return compare_fmt(buf, n, "configs/suite");
    return compare_fmt(buf, n, "%s", PB_SUITES_SOURCE_DIR);
}

static int compare_path_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The suite's problem files: the file itself, or the *.lua files of the folder sorted by name
 * (each an experiment: one kind of problem with the placers that apply to it).  Caller frees
 * each and the array. */
static int compare_suite_files(const char *path, char ***files, int *n)
{
    struct stat st;
    *files = NULL;
    *n = 0;
    if (stat(path, &st) != 0)
        return cli_error("compare: %s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        *files = malloc(sizeof **files);
        if (!*files || !((*files)[0] = strdup(path)))
            return cli_error("out of memory");
        *n = 1;
        return 0;
    }
    DIR *d = opendir(path);
    if (!d)
        return cli_error("compare: %s: %s", path, strerror(errno));
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        /* Files starting with '_' are included by the others (shared lists), not problems. */
        if (len <= 4 || strcmp(e->d_name + len - 4, ".lua") != 0 || e->d_name[0] == '.' ||
            e->d_name[0] == '_')
            continue;
        char **grown = realloc(*files, (size_t)(*n + 1) * sizeof **files);
        char *file = malloc(strlen(path) + len + 2);
        if (grown)
            *files = grown;
        if (!grown || !file) {
            free(file);
            rc = cli_error("out of memory");
        } else {
            sprintf(file, "%s/%s", path, e->d_name);
            (*files)[(*n)++] = file;
        }
    }
    closedir(d);
    if (!rc && *n == 0)
        rc = cli_error("compare: the suite folder %s holds no .lua problem files", path);
    if (!rc)
        qsort(*files, (size_t)*n, sizeof **files, compare_path_cmp);
    return rc;
}

/* The suite's name: the folder's or the file's base name without ".lua". */
static void compare_suite_name(const char *path, char *out, size_t n)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    const char *base = path;
    for (size_t i = 0; i < len; i++)
        if (path[i] == '/')
            base = path + i + 1;
    size_t bl = (size_t)(path + len - base);
    if (bl > 4 && strncmp(base + bl - 4, ".lua", 4) == 0)
        bl -= 4;
    snprintf(out, n, "%.*s", (int)bl, base);
}

/* Loads the plugin file and copies its placer name; its folder (absolute) goes to dir. */
static int compare_plugin_name(const char *plugin, char *name, size_t n, char *dir, size_t dn)
{
    char real[PATH_MAX];
    if (!realpath(plugin, real))
        return cli_error("%s: %s", plugin, strerror(errno));
    pb_error err;
    loader *l = loader_new(NULL, 0, &err);
    if (!l)
        return cli_error("%s", err.msg);
    const loader_entry *e, *other;
    char other_real[PATH_MAX];
    int rc = 0;
    if (loader_open_file(l, real, &e, &err)) {
        rc = cli_error("%s", err.msg);
    } else if (e->desc->kind != PB_KIND_PLACER) {
        rc = cli_error("%s: a %s plugin, not a placer", plugin, loader_kind_name(e->desc->kind));
    } else if (loader_scan(l, &err) == PB_OK &&
               loader_find(l, PB_KIND_PLACER, e->desc->name, &other, &err) == PB_OK &&
               /* the search path may reach the same file by another spelling (bin/../lib) */
               (!realpath(other->path, other_real) || strcmp(other_real, real) != 0)) {
        rc = cli_error("%s: its placer is named '%s' like the one in %s; give it a name of its own",
                       plugin, e->desc->name, other->path);
    } else if (!(rc = compare_fmt(name, n, "%s", e->desc->name) ||
                      compare_fmt(dir, dn, "%s", real))) {
        *strrchr(dir, '/') = '\0';
    }
    loader_free(l);
    return rc;
}

/* Runs the suite's experiment x (owned) into results; prints the error and returns 1 on
 * failure. */
/* Runs the experiment's plan into results (taking x); *n_runs: how many runs it has (0 when every
 * placer/simulator pair was skipped as not applying, which is said on stderr). */
static int compare_run(experiment *x, const compare_opts *o, const char *results, const char *who,
                       int *n_runs)
{
    plan *p;
    pb_error err;
    if (plan_build(x, &p, &err))
        return cli_error("%s", err.msg);
    *n_runs = p->n_runs;
    if (p->n_runs == 0) {
        for (int i = 0; i < p->n_skipped; i++)
            fprintf(stderr, "compare: %s: skipped %s: %s\n", p->x->name, who, p->skipped[i]);
        plan_free(p);
        return 0;
    }
    if (o->progress) {
        plan_print_skipped(p, stderr);
        fprintf(stderr, "compare: %s: %s: %d runs, results in %s\n", p->x->name, who, p->n_runs,
                results);
    }
    runner_opts ro = {
        .jobs = o->jobs, .shard_count = 1, .results = results, .progress = o->progress};
    runner_summary sum;
    int rc = runner_run(p, &ro, &sum, &err);
    plan_free(p);
    if (rc)
        return cli_error("%s", err.msg);
    if (o->progress)
        fprintf(stderr, "compare: %s: %d already stored, %d ok, %d failed, %.1f s\n", who,
                sum.skipped, sum.ok, sum.failed, sum.wall_s);
    return 0;
}

static int compare_results_dir(const char *results)
{
    char dir[PATH_MAX];
    if (compare_fmt(dir, sizeof dir, "%s", results))
        return 1;
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    return cmd_plot_mkdirs(dir);
}

/* ---------------------------------------------------------------- the leaderboard */

static int compare_read(compare_board *b, const char *path, int user, int by_cost)
{
    store *s;
    pb_error err;
    if (store_open_readonly(path, &s, &err))
        return cli_error("%s", err.msg);
    int from = b->n_rows;
    int rc = store_board_rows(s, &b->rows, &b->n_rows, &err);
    store_close(s);
    if (rc)
        return cli_error("%s", err.msg);
    size_t n = (size_t)(b->n_rows > 0 ? b->n_rows : 1);
    unsigned char *u = realloc(b->user, n), *c = u ? realloc(b->by_cost, n) : NULL;
    if (u)
        b->user = u;
    if (c)
        b->by_cost = c;
    if (!u || !c)
        return cli_error("out of memory");
    for (int i = from; i < b->n_rows; i++) {
        b->user[i] = (unsigned char)user;
        b->by_cost[i] = (unsigned char)by_cost;
    }
    return 0;
}

static int compare_strcmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct labels of one field of the rows, sorted (offset: problem or entry). */
static const char **compare_labels(const compare_board *b, size_t offset, int *n)
{
    const char **l = malloc((size_t)(b->n_rows > 0 ? b->n_rows : 1) * sizeof *l);
    if (!l)
        return NULL;
    for (int i = 0; i < b->n_rows; i++)
        l[i] = *(char *const *)(const void *)((const char *)&b->rows[i] + offset);
    qsort(l, (size_t)b->n_rows, sizeof *l, compare_strcmp);
    int k = 0;
    for (int i = 0; i < b->n_rows; i++)
        if (k == 0 || strcmp(l[k - 1], l[i]) != 0)
            l[k++] = l[i];
    *n = k;
    return l;
}

static int compare_index(const char **labels, int n, const char *label)
{
    const char **hit = bsearch(&label, labels, (size_t)n, sizeof *labels, compare_strcmp);
    return hit ? (int)(hit - labels) : -1;
}

/* Problem, then mean step time (cells without one last), then entry. */
static int compare_cell_order(const void *pa, const void *pb)
{
    const compare_cell *a = pa, *b = pb;
    if (a->problem != b->problem)
        return a->problem < b->problem ? -1 : 1;
    double x = a->key, y = b->key;
    if (isnan(x) != isnan(y))
        return isnan(x) ? 1 : -1;
    if (!isnan(x) && x != y)
        return x < y ? -1 : 1;
    return a->entry - b->entry;
}

/* Cells sorted by problem and step time, with their ranks (equal means share a rank). */
static int compare_rank(compare_board *b)
{
    b->problems = compare_labels(b, offsetof(store_board_row, problem), &b->n_problems);
    b->entries = compare_labels(b, offsetof(store_board_row, entry), &b->n_entries);
    b->cells = malloc((size_t)(b->n_rows > 0 ? b->n_rows : 1) * sizeof *b->cells);
    if (!b->problems || !b->entries || !b->cells)
        return cli_error("out of memory");
    for (int i = 0; i < b->n_rows; i++) {
        compare_cell *c = &b->cells[i];
        c->row = &b->rows[i];
        c->user = b->user[i];
        c->by_cost = b->by_cost[i];
        c->key = c->by_cost ? c->row->mean_cost : c->row->mean_us;
        c->problem = compare_index(b->problems, b->n_problems, c->row->problem);
        c->entry = compare_index(b->entries, b->n_entries, c->row->entry);
        if (c->user)
            b->user_entry = c->row->entry;
    }
    qsort(b->cells, (size_t)b->n_rows, sizeof *b->cells, compare_cell_order);
    for (int i = 0; i < b->n_rows; i++) {
        compare_cell *c = &b->cells[i];
        int first = i;
        while (first > 0 && b->cells[first - 1].problem == c->problem)
            first--;
        if (isnan(c->key)) {
            int count = i;
            while (count < b->n_rows && b->cells[count].problem == c->problem)
                count++;
            c->rank = count - first;
        } else if (i > first && b->cells[i - 1].key == c->key) {
            c->rank = b->cells[i - 1].rank;
        } else {
            c->rank = i - first + 1;
        }
    }
    return 0;
}

static void compare_print_problem(const compare_board *b, int lo, int hi)
{
    int by_cost = b->cells[lo].by_cost;
    printf("\n### %s%s\n\n", b->problems[b->cells[lo].problem],
           by_cost ? " (ranked by monetary cost of feasible plans)" : "");
    printf("| rank | placer | step time (us) |%s search time (s) | sim calls | runs ok |\n"
           "|---:|---|---:|%s---:|---:|---:|\n",
           by_cost ? " cost (USD) |" : "", by_cost ? "---:|" : "");
    for (int i = lo; i < hi; i++) {
        const compare_cell *c = &b->cells[i];
        const store_board_row *r = c->row;
        const char *mark = c->user ? "**" : "";
        char cost[48] = "";
        if (by_cost && isnan(r->mean_cost))
            snprintf(cost, sizeof cost, " - |");
        else if (by_cost)
            snprintf(cost, sizeof cost, " %.4g |", r->mean_cost);
        if (isnan(r->mean_us))
            printf("| %d | %s%s%s | - |%s - | - | 0/%d |\n", c->rank, mark, r->entry, mark,
                   by_cost ? " - |" : "", r->n_runs);
        else
            printf("| %d | %s%s%s | %.2f |%s %.3f | %.0f | %d/%d |\n", c->rank, mark, r->entry,
                   mark, r->mean_us, cost, r->mean_search_s, r->mean_sim_calls, r->n_ok, r->n_runs);
    }
}

/* Mean rank, wins and problems per entry, best mean rank first. */
static void compare_print_overall(const compare_board *b)
{
    int ne = b->n_entries;
    double *sum = calloc((size_t)ne, sizeof(double));
    int *wins = calloc((size_t)ne, sizeof(int)), *count = calloc((size_t)ne, sizeof(int));
    int *order = malloc((size_t)ne * sizeof(int));
    if (!sum || !wins || !count || !order) {
        free(sum);
        free(wins);
        free(count);
        free(order);
        return;
    }
    for (int i = 0; i < b->n_rows; i++) {
        const compare_cell *c = &b->cells[i];
        sum[c->entry] += c->rank;
        wins[c->entry] += c->rank == 1;
        count[c->entry]++;
    }
    for (int e = 0; e < ne; e++)
        order[e] = e;
    for (int i = 1; i < ne; i++) /* insertion sort by mean rank: a handful of placers */
        for (int j = i; j > 0; j--) {
            int a = order[j - 1], z = order[j];
            if (sum[z] / count[z] >= sum[a] / count[a])
                break;
            order[j - 1] = z;
            order[j] = a;
        }
    printf("\n### overall (%d problems)\n\n| placer | mean rank | wins | problems |\n"
           "|---|---:|---:|---:|\n",
           b->n_problems);
    for (int i = 0; i < ne; i++) {
        int e = order[i];
        const char *mark = b->user_entry && strcmp(b->entries[e], b->user_entry) == 0 ? "**" : "";
        printf("| %s%s%s | %.2f | %d | %d |\n", mark, b->entries[e], mark, sum[e] / count[e],
               wins[e], count[e]);
    }
    free(sum);
    free(wins);
    free(count);
    free(order);
}

static void compare_print(const compare_board *b, const char *suite, const char *placer)
{
    printf("## %s on %s: leaderboard (mean over repeats; rank by step time, or by cost where "
           "the problem says so)\n",
           placer, suite);
    for (int lo = 0; lo < b->n_rows;) {
        int hi = lo;
        while (hi < b->n_rows && b->cells[hi].problem == b->cells[lo].problem)
            hi++;
        compare_print_problem(b, lo, hi);
        lo = hi;
    }
    compare_print_overall(b);
}

static void compare_board_free(compare_board *b)
{
    store_board_rows_free(b->rows, b->n_rows);
    free(b->user);
    free(b->by_cost);
    free(b->cells);
    free(b->problems);
    free(b->entries);
}

/* ---------------------------------------------------------------- plots */

/* Writes the plots' data files under dir: cells.tsv (problem entry step_ms search_s rank user,
 * the cells with an ok run), problems.tsv and entries.tsv (index label short-label). */
static int compare_plot_data(const compare_board *b, const char *dir)
{
    char path[PATH_MAX];
    if (compare_fmt(path, sizeof path, "%s/cells.tsv", dir))
        return 1;
    FILE *f = fopen(path, "w");
    if (!f)
        return cli_error("%s: %s", path, strerror(errno));
    fprintf(f, "# problem\tentry\tstep_ms\tsearch_s\trank\tuser\n");
    for (int i = 0; i < b->n_rows; i++) {
        const compare_cell *c = &b->cells[i];
        if (!isnan(c->row->mean_us))
            fprintf(f, "%d\t%d\t%.17g\t%.17g\t%d\t%d\n", c->problem, c->entry,
                    c->row->mean_us / 1000, fmax(c->row->mean_search_s, 1e-6), c->rank, c->user);
    }
    int bad = fclose(f) != 0;
    const char *const names[2] = {"problems.tsv", "entries.tsv"};
    const char **labels[2] = {b->problems, b->entries};
    int counts[2] = {b->n_problems, b->n_entries};
    for (int k = 0; k < 2 && !bad; k++) {
        if (compare_fmt(path, sizeof path, "%s/%s", dir, names[k]))
            return 1;
        if (!(f = fopen(path, "w")))
            return cli_error("%s: %s", path, strerror(errno));
        fprintf(f, "# index\tlabel\tshort label\n");
        for (int i = 0; i < counts[k]; i++) {
            /* The short label drops the simulator: "cifar10-01, 3 devices, placeto-k80" (the
             * cluster tells apart the zoo's problems of one size on two machines). */
            const char *comma = strchr(labels[k][i], ',');
            comma = comma ? strchr(comma + 1, ',') : NULL;
            comma = comma ? strchr(comma + 1, ',') : NULL;
            int len = comma ? (int)(comma - labels[k][i]) : (int)strlen(labels[k][i]);
            fprintf(f, "%d\t%s\t%.*s\n", i, labels[k][i], len, labels[k][i]);
        }
        bad |= fclose(f) != 0;
    }
    return bad ? cli_error("%s: could not write the plot data", dir) : 0;
}

/* Runs plots/<script>.gp on the data in dir, writing dir/<script>.png and .svg. */
static int compare_draw(const char *scripts, const char *dir, const char *script, const char *title)
{
    static const char *const formats[2] = {"png", "svg"};
    for (int k = 0; k < 2; k++) {
        char vars[4 * PATH_MAX] = "", path[PATH_MAX], out[PATH_MAX], gp[PATH_MAX];
        int bad = compare_fmt(gp, sizeof gp, "%s/%s.gp", scripts, script) ||
                  compare_fmt(out, sizeof out, "%s/%s.%s", dir, script, formats[k]);
        static const char *const files[3][2] = {
            {"data", "cells"}, {"problems", "problems"}, {"entries", "entries"}};
        for (int i = 0; i < 3 && !bad; i++)
            bad = compare_fmt(path, sizeof path, "%s/%s.tsv", dir, files[i][1]) ||
                  cmd_plot_gp_var(vars, sizeof vars, files[i][0], path);
        bad |= cmd_plot_gp_var(vars, sizeof vars, "out", out);
        bad |= cmd_plot_gp_var(vars, sizeof vars, "term", formats[k]);
        bad |= cmd_plot_gp_var(vars, sizeof vars, "subtitle", title);
        fflush(stdout);
        if (bad || cmd_plot_gnuplot(gp, vars))
            return 1;
        printf("%s\n", out);
    }
    return 0;
}

static int compare_plot(const compare_board *b, const compare_opts *o, const char *suite,
                        const char *placer)
{
    char dir[PATH_MAX], scripts[PATH_MAX], title[256];
    if ((o->out_dir ? compare_fmt(dir, sizeof dir, "%s", o->out_dir)
                    : compare_fmt(dir, sizeof dir, "plots/out/%s-%s", suite, placer)) ||
        compare_fmt(title, sizeof title, "%s on %s", placer, suite) ||
        cmd_plot_scripts_dir(scripts, sizeof scripts) || cmd_plot_mkdirs(dir) ||
        compare_plot_data(b, dir))
        return 1;
    printf("\nplots:\n");
    return compare_draw(scripts, dir, "compare_scatter", title) ||
           compare_draw(scripts, dir, "compare_ranks", title);
}

/* ---------------------------------------------------------------- the command */

/* One problem file of the suite: the built-ins' runs (cached in the file's results), then the
 * plugin's (afresh unless --resume), both read into the board. */
static int compare_problem(const compare_opts *o, const char *file, const char *profile,
                           const char *placer, const char *folder, compare_board *b, char *name,
                           size_t name_size)
{
    experiment *x, *mine;
    pb_error err;
    if (config_load(file, profile, &x, &err))
        return cli_error("%s", err.msg);
    snprintf(name, name_size, "%s", x->name);
    for (int i = 0; i < x->placers.n; i++)
        if (strcmp(x->placers.items[i].name, placer) == 0) {
            cli_error("compare: '%s' is one of the suite's own placers (%s); give yours a name of "
                      "its own",
                      placer, file);
            experiment_free(x);
            return 1;
        }
    char builtin[PATH_MAX], user[PATH_MAX + 160], user_name[300];
    int by_cost = x->objective_cost, n_builtin, n_user;
    if (compare_fmt(builtin, sizeof builtin, "%s", o->results ? o->results : x->results) ||
        compare_fmt(user_name, sizeof user_name, "%s-%s", x->name, placer) ||
        compare_fmt(user, sizeof user, "results/%s.db", user_name) ||
        compare_results_dir(builtin)) {
        experiment_free(x);
        return 1;
    }
    if (compare_run(x, o, builtin, "built-in placers", &n_builtin))
        return 1;
    if (config_load(file, profile, &mine, &err))
        return cli_error("%s", err.msg);
    if (experiment_use_placer(mine, placer, folder, user_name, user, &err)) {
        experiment_free(mine);
        return cli_error("%s", err.msg);
    }
    int fresh = o->resume || remove(user) == 0 || errno == ENOENT;
    if (!fresh)
        cli_error("%s: %s", user, strerror(errno));
    if (!fresh || compare_results_dir(user)) {
        experiment_free(mine);
        return 1;
    }
    if (compare_run(mine, o, user, placer, &n_user))
        return 1;
    if (n_user == 0) /* the plugin does not apply here: no row of its own, nothing to rank */
        return 0;
    return (n_builtin && compare_read(b, builtin, 0, by_cost)) || compare_read(b, user, 1, by_cost);
}

/* Runs every problem file of the suite, then prints and plots the leaderboard. */
static int compare_main(const compare_opts *o, const char *suite_path, const char *profile)
{
    char placer[128], folder[PATH_MAX], suite[128];
    if (compare_plugin_name(o->plugin, placer, sizeof placer, folder, sizeof folder))
        return 1;
    char **files;
    int n_files;
    if (compare_suite_files(suite_path, &files, &n_files))
        return 1;
    compare_suite_name(suite_path, suite, sizeof suite);
    if (profile)
        snprintf(suite, sizeof suite, "suite-%.100s", profile);
    else if (n_files > 1 && strncmp(suite, "suite-", 6) != 0) {
        char folder_name[120];
        snprintf(folder_name, sizeof folder_name, "%.119s", suite);
        snprintf(suite, sizeof suite, "suite-%s", folder_name);
    }
    int rc = o->results && n_files > 1
                 ? cli_error("compare: --results names one file; suite '%s' has %d problem "
                             "files, each with its own results file",
                             suite, n_files)
                 : 0;
    compare_board b = {0};
    char name[128];
    for (int i = 0; i < n_files && !rc; i++)
        /* A one-file suite goes by its experiment's name, a folder by "suite-<folder>". */
        rc = compare_problem(o, files[i], profile, placer, folder, &b,
                             n_files == 1 && !profile ? suite : name,
                             n_files == 1 && !profile ? sizeof suite : sizeof name);
    for (int i = 0; i < n_files; i++)
        free(files[i]);
    free(files);
    if (!rc && b.n_rows == 0)
        rc = cli_error("compare: placer '%s' applies to none of suite '%s''s problems", placer,
                       suite);
    rc = rc || compare_rank(&b);
    if (!rc) {
        compare_print(&b, suite, placer);
        if (o->plot)
            rc = compare_plot(&b, o, suite, placer);
    }
    compare_board_free(&b);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    compare_opts o;
    int rc = compare_parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    /* Workers are processes: BLAS must not spawn its own threads on top (read at load). */
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
    char suite_path[PATH_MAX];
    const char *profile;
    if (compare_suite_path(o.suite, suite_path, sizeof suite_path, &profile))
        return 1;
    return compare_main(&o, suite_path, profile);
}
