/* cmd_plot.c — placebench plot: learning curves, best step times and the papers' tables of a
 * results file, drawn by the gnuplot scripts in plots/. */
#include "cli.h"
#include "cmd_plot.h"
#include "cli_output.h"
#include "cli_gdp.h"

#include "cli_plot_data.h"
#include "report/papers.h"
#include "store/store.h"
#include "store/store_tables.h"

#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static const char cmd_plot_usage[] =
    "placebench plot DB [--out DIR] [--format png|svg|both]\n"
    "\n"
    "Draws the results file DB with gnuplot (found on PATH), each chart the data supports:\n"
    "  learning_curves   best step time found so far vs episode, one panel per (dataset,\n"
    "                    devices), one line per (placer, embedding, traversal)\n"
    "  learning_curves_relative\n"
    "                    the same as % of each run's initial step time (runs that report\n"
    "                    one), so every graph weighs the same whatever its size\n"
    "  best_step_time    bars of the best step time per (placer, embedding, traversal), one\n"
    "                    group per (dataset, devices)\n"
    "  order_wins        when placeto runs use 2 or more traversal orders: heat map of the\n"
    "                    graphs each order won (lowest best step time, mean over repeats, by\n"
    "                    the end of episode 9, 19, 49; a graph counts when all orders reach\n"
    "                    that episode), one panel per dataset family, rows\n"
    "                    (devices, episode), as the traversal-order paper's Tables II-IV; with\n"
    "                    several embeddings one map per embedding (order_wins-<embedding>)\n"
    "  embedding_bars    when placeto runs use 2 or more embeddings: bars per embedding of the\n"
    "                    improvement over the initial placement (%) and of the computation\n"
    "                    time (s), grouped by (dataset family, devices) plus the mean over\n"
    "                    device counts, as the embedding paper's Tables 1-2 and Figures 4-5\n"
    "                    (means over the runs with an initial step time, of all traversal\n"
    "                    orders together)\n"
    "  gdp_table1        when runs used the gdp-p100 cluster: GDP's Table 1 as bars of the run\n"
    "                    time per (model, GPUs) and method (GDP-one, HP, METIS, HDP), the\n"
    "                    paper's run times as diamonds (the rows of 'report --tables gdp')\n"
    "  tag_testbed       when there are runs of tag or pure-mcts: bars of the per-iteration\n"
    "                    time of DP-NCCL, DP-NCCL-P, TAG and pure MCTS per model (TAG's Fig. 5)\n"
    "                    and of the MCTS placers' search time (means over the ok runs)\n"
    "Curves and best_step_time bars are the mean over graphs of the per-graph mean over\n"
    "repeats; bands and error bars are +-1 pooled standard deviation over repeats.  Only runs\n"
    "that finished ok count.\n"
    "The data of each chart is written beside it as TSV (<chart>.tsv and label files); every\n"
    "file written is named on stdout, a chart left out is said on stderr.\n"
    "\n"
    "  --out DIR                 output folder (default plots/out/<DB name without .db>)\n"
    "  --format png|svg|both     image formats (default both)\n"
    "\n"
    "The scripts are looked up in $PLACEBENCH_PLOTS_DIR, then beside the program\n"
    "(../share/placebench/plots, ../plots), then in the source and install folders.";

/* The gnuplot scripts plots/<name>.gp. */
static const char *const cmd_plot_scripts[] = {
    "learning_curves", "best_step_time",     "order_wins", "embedding_bars",
    "heterps_bars",    "heterps_sched_time", "gdp_table1", "tag_testbed"};

/* The charts of aggregated step times: drawn by plots/<script>.gp from one extract each. */
typedef struct cmd_plot_chart {
    const char *stem;   /* output file names */
    const char *script; /* plots/<script>.gp */
    const char *vars;   /* further gnuplot assignments ("" for none) */
    const char *unit;   /* of the extract's values, for the data file's header */
    int (*extract)(store *s, store_plot_data *out, pb_error *err);
    const char *what; /* what is missing when the extract is empty */
} cmd_plot_chart;

static const cmd_plot_chart cmd_plot_charts[] = {
    {"learning_curves", "learning_curves", "", "microseconds", store_plot_curves,
     "learning-curve points of runs that finished ok"},
    {"learning_curves_relative", "learning_curves", "relative=1",
     "fractions of the initial step time", store_plot_curves_relative,
     "learning-curve points of runs that finished ok with an initial step time"},
    {"best_step_time", "best_step_time", "", "microseconds", store_plot_bests,
     "runs that finished ok with a best step time"},
};

/* Up to this many data files per chart, each passed to gnuplot as a variable. */
enum { CMD_PLOT_MAX_FILES = 5 };

typedef struct cmd_plot_files {
    int n;
    const char *var[CMD_PLOT_MAX_FILES];
    char path[CMD_PLOT_MAX_FILES][PATH_MAX];
} cmd_plot_files;

typedef struct cmd_plot_opts {
    const char *db;
    char out_dir[PATH_MAX];
    char scripts[PATH_MAX];
    int png, svg;
} cmd_plot_opts;

static int cmd_plot_join(char *buf, size_t n, const char *dir, const char *name)
{
    if ((size_t)snprintf(buf, n, "%s/%s", dir, name) >= n)
        return cli_error("path too long: %s/%s", dir, name);
    return 0;
}

/* mkdir -p */
int cmd_plot_mkdirs(const char *path)
{
    char buf[PATH_MAX];
    if ((size_t)snprintf(buf, sizeof buf, "%s", path) >= sizeof buf)
        return cli_error("path too long: %s", path);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return cli_error("%s: cannot create folder: %s", buf, strerror(errno));
        *p = c;
        if (c == '\0')
            break;
    }
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return cli_error("%s: not a folder", path);
    return 0;
}

/* plots/out/<basename of db without .db> */
static int cmd_plot_default_dir(cmd_plot_opts *o)
{
    const char *base = strrchr(o->db, '/');
    base = base ? base + 1 : o->db;
    size_t n = strlen(base);
    if (n > 3 && strcmp(base + n - 3, ".db") == 0)
        n -= 3;
    if (n == 0)
        return cli_error("plot: cannot name an output folder after '%s'; give --out DIR", o->db);
    if ((size_t)snprintf(o->out_dir, sizeof o->out_dir, "plots/out/%.*s", (int)n, base) >=
        sizeof o->out_dir)
        return cli_error("path too long: %s", o->db);
    return 0;
}

static int cmd_plot_has_scripts(const char *dir)
{
    char path[PATH_MAX];
    for (size_t i = 0; i < sizeof cmd_plot_scripts / sizeof cmd_plot_scripts[0]; i++) {
        if ((size_t)snprintf(path, sizeof path, "%s/%s.gp", dir, cmd_plot_scripts[i]) >=
                sizeof path ||
            access(path, R_OK) != 0)
            return 0;
    }
    return 1;
}

/* The folder of the running program (from /proc/self/exe); "" when unknown. */
static void cmd_plot_exe_dir(char *buf, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", buf, n - 1);
    buf[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    else
        buf[0] = '\0';
}

/* $PLACEBENCH_PLOTS_DIR, else beside the program (installed or build tree), else the source and
 * install folders compiled in. */
static int cmd_plot_find_scripts(cmd_plot_opts *o)
{
    const char *env = getenv("PLACEBENCH_PLOTS_DIR");
    if (env && *env) {
        if (!cmd_plot_has_scripts(env))
            return cli_error("PLACEBENCH_PLOTS_DIR=%s: no readable learning_curves.gp, "
                             "best_step_time.gp, order_wins.gp and embedding_bars.gp there",
                             env);
        snprintf(o->scripts, sizeof o->scripts, "%s", env);
        return 0;
    }
    char exe[PATH_MAX], cand[4][PATH_MAX];
    cmd_plot_exe_dir(exe, sizeof exe);
    int n = 0;
    if (exe[0]) {
        snprintf(cand[n++], PATH_MAX, "%.4000s/../share/placebench/plots", exe);
        snprintf(cand[n++], PATH_MAX, "%.4000s/../plots", exe);
    }
    snprintf(cand[n++], PATH_MAX, "%s", PB_PLOTS_SOURCE_DIR);
    snprintf(cand[n++], PATH_MAX, "%s", store_plot_install_dir());
    for (int i = 0; i < n; i++) {
        if (cmd_plot_has_scripts(cand[i])) {
            snprintf(o->scripts, sizeof o->scripts, "%.4000s", cand[i]);
            return 0;
        }
    }
    return cli_error("plot: gnuplot scripts not found (looked in %s, %s); set "
                     "PLACEBENCH_PLOTS_DIR to the plots/ folder",
                     PB_PLOTS_SOURCE_DIR, store_plot_install_dir());
}

int cmd_plot_scripts_dir(char *buf, size_t n)
{
    cmd_plot_opts o;
    memset(&o, 0, sizeof o);
    if (cmd_plot_find_scripts(&o))
        return 1;
    snprintf(buf, n, "%s", o.scripts);
    return 0;
}

static int cmd_plot_parse(int argc, char **argv, cmd_plot_opts *o)
{
    const char *out = NULL, *format = "both";
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "--out") == 0 || strcmp(argv[i], "--format") == 0) && i + 1 >= argc)
            return cli_error("plot: %s needs a value", argv[i]);
        if (strcmp(argv[i], "--out") == 0)
            out = argv[++i];
        else if (strcmp(argv[i], "--format") == 0)
            format = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_error("plot: unknown option '%s' (see 'placebench plot --help')", argv[i]);
        else if (!o->db)
            o->db = argv[i];
        else
            return cli_error("plot: one results file only ('%s' is a second one)", argv[i]);
    }
    if (!o->db)
        return cli_usage(cmd_plot_usage);
    int both = strcmp(format, "both") == 0;
    o->png = both || strcmp(format, "png") == 0;
    o->svg = both || strcmp(format, "svg") == 0;
    if (!o->png && !o->svg)
        return cli_error("plot: --format '%s': expected png, svg or both", format);
    if (out && (size_t)snprintf(o->out_dir, sizeof o->out_dir, "%s", out) >= sizeof o->out_dir)
        return cli_error("path too long: %s", out);
    return out ? 0 : cmd_plot_default_dir(o);
}

/* Opens <out_dir>/<stem><suffix> as data file k of the chart, for gnuplot variable var. */
static int cmd_plot_data_open(const cmd_plot_opts *o, cmd_plot_files *files, const char *var,
                              const char *stem, const char *suffix, cli_output *out)
{
    char name[512];
    if ((size_t)snprintf(name, sizeof name, "%s%s", stem, suffix) >= sizeof name)
        return cli_error("plot: file name too long: %s%s", stem, suffix);
    int k = files->n;
    if (k == CMD_PLOT_MAX_FILES || cmd_plot_join(files->path[k], PATH_MAX, o->out_dir, name) ||
        cli_output_open(out, files->path[k]))
        return 1;
    files->var[k] = var;
    files->n++;
    return 0;
}

/* Completes the data file opened last and names it on stdout. */
static int cmd_plot_data_close(cmd_plot_files *files, cli_output *out)
{
    if (cli_output_close(out, 1))
        return 1;
    printf("%s\n", files->path[files->n - 1]);
    return 0;
}

/* <stem>.tsv, <stem>.panels.tsv, <stem>.series.tsv of a step-time chart. */
static int cmd_plot_write_data(const cmd_plot_opts *o, const cmd_plot_chart *c,
                               const store_plot_data *d, cmd_plot_files *files)
{
    cli_output out;
    if (cmd_plot_data_open(o, files, "data", c->stem, ".tsv", &out))
        return 1;
    cli_plot_data_rows(out.f, d, o->db, c->unit);
    if (cmd_plot_data_close(files, &out) ||
        cmd_plot_data_open(o, files, "panels", c->stem, ".panels.tsv", &out))
        return 1;
    cli_plot_data_labels(out.f, d->panels, d->n_panels, "panel (dataset, devices)");
    if (cmd_plot_data_close(files, &out) ||
        cmd_plot_data_open(o, files, "series", c->stem, ".series.tsv", &out))
        return 1;
    cli_plot_data_labels(out.f, d->series, d->n_series, "series (placer / embedding / traversal)");
    return cmd_plot_data_close(files, &out);
}

/* Appends name='value' to buf as a gnuplot assignment (single quotes: no backquote expansion;
 * a quote is written twice). */
int cmd_plot_gp_var(char *buf, size_t n, const char *name, const char *value)
{
    if (strchr(value, '\n'))
        return cli_error("plot: path with a line break is not supported: %s", value);
    size_t at = strlen(buf);
    int w = snprintf(buf + at, n - at, "%s%s='", at ? "; " : "", name);
    if (w < 0 || (size_t)w >= n - at)
        return cli_error("plot: path too long: %s", value);
    at += (size_t)w;
    for (const char *p = value; *p; p++) {
        if (at + 3 >= n)
            return cli_error("plot: path too long: %s", value);
        if (*p == '\'')
            buf[at++] = '\'';
        buf[at++] = *p;
    }
    buf[at++] = '\'';
    buf[at] = '\0';
    return 0;
}

int cmd_plot_gnuplot(const char *script, const char *vars)
{
    char *argv[] = {"gnuplot", "-e", (char *)vars, (char *)script, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
    if (rc == ENOENT)
        return cli_error("plot: gnuplot not found on PATH (install gnuplot, e.g. the "
                         "gnuplot-nox package)");
    if (rc != 0)
        return cli_error("plot: cannot run gnuplot: %s", strerror(rc));
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return cli_error("plot: waiting for gnuplot: %s", strerror(errno));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status))
        return cli_error("plot: gnuplot failed on %s (exit status %d)", script,
                         WEXITSTATUS(status));
    return cli_error("plot: gnuplot died on signal %d running %s", WTERMSIG(status), script);
}

/* What one drawing runs: plots/<script>.gp writing <stem>.<ext>, with the data files, the raw
 * gnuplot assignments `raw` ("" for none) and a subtitle string (NULL for none). */
typedef struct cmd_plot_drawing {
    const char *script, *stem, *raw, *subtitle;
    const cmd_plot_files *files;
} cmd_plot_drawing;

/* Runs the drawing's script once for an image format and checks the image was written. */
static int cmd_plot_draw(const cmd_plot_opts *o, const cmd_plot_drawing *dr, const char *ext)
{
    char script[PATH_MAX], image[PATH_MAX], name[512], vars[(CMD_PLOT_MAX_FILES + 3) * PATH_MAX];
    vars[0] = '\0';
    if ((size_t)snprintf(name, sizeof name, "%s.%s", dr->stem, ext) >= sizeof name ||
        (size_t)snprintf(script, sizeof script, "%s/%s.gp", o->scripts, dr->script) >=
            sizeof script ||
        cmd_plot_join(image, sizeof image, o->out_dir, name))
        return cli_error("plot: path too long: %s/%s", o->out_dir, dr->stem);
    for (int k = 0; k < dr->files->n; k++)
        if (cmd_plot_gp_var(vars, sizeof vars, dr->files->var[k], dr->files->path[k]))
            return 1;
    if (cmd_plot_gp_var(vars, sizeof vars, "out", image) ||
        cmd_plot_gp_var(vars, sizeof vars, "term", ext) ||
        (dr->subtitle && cmd_plot_gp_var(vars, sizeof vars, "subtitle", dr->subtitle)))
        return 1;
    if (*dr->raw && strlen(vars) + strlen(dr->raw) + 3 > sizeof vars)
        return cli_error("plot: paths too long for the gnuplot command line: %s", o->out_dir);
    if (*dr->raw)
        strcat(strcat(vars, "; "), dr->raw);
    remove(image);
    fflush(stdout);
    if (cmd_plot_gnuplot(script, vars))
        return 1;
    struct stat sb;
    if (stat(image, &sb) != 0 || sb.st_size == 0)
        return cli_error("plot: gnuplot ran %s but wrote no %s", script, image);
    printf("%s\n", image);
    return 0;
}

/* Draws in each format asked for. */
static int cmd_plot_draw_all(const cmd_plot_opts *o, const cmd_plot_drawing *dr)
{
    return (o->png && cmd_plot_draw(o, dr, "png")) || (o->svg && cmd_plot_draw(o, dr, "svg"));
}

/* Extracts, writes and draws one step-time chart; *drawn is set when there was data. */
static int cmd_plot_chart_run(const cmd_plot_opts *o, store *s, const cmd_plot_chart *c, int *drawn)
{
    store_plot_data d;
    pb_error err = {{0}};
    if (c->extract(s, &d, &err)) {
        store_plot_data_free(&d);
        return cli_error("%s", err.msg);
    }
    int rc = 0;
    cmd_plot_files files = {0};
    cmd_plot_drawing dr = {c->script, c->stem, c->vars, NULL, &files};
    if (d.n_rows == 0)
        fprintf(stderr, "placebench: %s: no %s; no %s chart\n", o->db, c->what, c->stem);
    else
        rc = cmd_plot_write_data(o, c, &d, &files) || cmd_plot_draw_all(o, &dr);
    *drawn |= d.n_rows > 0;
    store_plot_data_free(&d);
    return rc;
}

/* ---------------------------------------------------------------- paper tables */

/* "order_wins" or "order_wins-<embedding>" with characters unsafe in file names as '_'. */
static void cmd_plot_wins_stem(char *buf, size_t n, const char *embedding)
{
    snprintf(buf, n, "order_wins%s%s", embedding ? "-" : "", embedding ? embedding : "");
    for (char *p = buf; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            *p = '_';
}

/* Writes the heat map's four data files and draws it. */
static int cmd_plot_wins_draw(const cmd_plot_opts *o, const store_order_wins *w,
                              const papers_paper *paper, const char *embedding)
{
    char stem[256], subtitle[512];
    cmd_plot_wins_stem(stem, sizeof stem, embedding);
    snprintf(subtitle, sizeof subtitle, "placer %s%s%s", paper->placer,
             embedding ? ", embedding " : "", embedding ? embedding : "");
    cmd_plot_files files = {0};
    cli_output out;
    if (cmd_plot_data_open(o, &files, "data", stem, ".tsv", &out))
        return 1;
    cli_plot_data_wins_cells(out.f, w, paper->orders, o->db);
    if (cmd_plot_data_close(&files, &out) ||
        cmd_plot_data_open(o, &files, "rows", stem, ".rows.tsv", &out))
        return 1;
    cli_plot_data_wins_rows(out.f, w);
    if (cmd_plot_data_close(&files, &out) ||
        cmd_plot_data_open(o, &files, "panels", stem, ".panels.tsv", &out))
        return 1;
    cli_plot_data_wins_panels(out.f, w);
    if (cmd_plot_data_close(&files, &out) ||
        cmd_plot_data_open(o, &files, "cols", stem, ".cols.tsv", &out))
        return 1;
    cli_plot_data_wins_cols(out.f, w, paper->orders);
    if (cmd_plot_data_close(&files, &out))
        return 1;
    cmd_plot_drawing dr = {"order_wins", stem, "", subtitle, &files};
    return cmd_plot_draw_all(o, &dr);
}

/* "9, 19 or 49": the episodes of the paper's win counts. */
static void cmd_plot_episode_list(char *buf, size_t n, const papers_order_table *pt)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < pt->n_episodes && at < n; k++) {
        const char *sep = k == 0 ? "" : k + 1 == pt->n_episodes ? " or " : ", ";
        int w = snprintf(buf + at, n - at, "%s%d", sep, pt->episodes[k]);
        at += w > 0 ? (size_t)w : 0;
    }
}

/* Win counts of the paper's placer's orders with one embedding (NULL: the only one) at the
 * paper's episodes; *drawn is set when they made a heat map.  A results file without such runs
 * is not an error: *why says so. */
static int cmd_plot_wins_one(const cmd_plot_opts *o, store *s, const papers_paper *paper,
                             const char *embedding, int *drawn, pb_error *why)
{
    const papers_order_table *pt = paper->orders;
    store_order_wins w;
    int rc = 0;
    if (store_tables_order_wins(s, paper->placer, embedding, pt->episodes, pt->n_episodes, &w,
                                why) == PB_OK) {
        if (cli_plot_data_wins_drawable(&w)) {
            rc = cmd_plot_wins_draw(o, &w, paper, embedding);
            *drawn = 1;
        } else {
            char episodes[256];
            cmd_plot_episode_list(episodes, sizeof episodes, pt);
            pb_errorf(why,
                      "%s: fewer than 2 traversal orders of placer '%s'%s%s, or no graph "
                      "compared at episode %s",
                      o->db, paper->placer, embedding ? " with embedding " : "",
                      embedding ? embedding : "", episodes);
        }
    }
    store_order_wins_free(&w);
    return rc;
}

/* The order-wins heat map of the first paper with win counts, or one per embedding when the
 * placer's runs use several. */
static int cmd_plot_order_wins(const cmd_plot_opts *o, store *s, int *drawn)
{
    const papers_paper *paper = papers_with_orders();
    if (!paper) {
        fputs("placebench: no order_wins chart: no registered paper has order win counts\n",
              stderr);
        return 0;
    }
    pb_error why = {{0}}, why_each = {{0}};
    int done = 0, rc = cmd_plot_wins_one(o, s, paper, NULL, &done, &why);
    store_embedding_table t = {0};
    const pb_error *reason = &why;
    if (!rc && !done && store_tables_embeddings(s, paper->placer, NULL, &t, &why_each) == PB_OK &&
        t.n_embeddings > 1) {
        for (int e = 0; !rc && e < t.n_embeddings; e++)
            rc = cmd_plot_wins_one(o, s, paper, t.embeddings[e], &done, &why_each);
        reason = &why_each; /* the last embedding's reason */
    }
    store_embedding_table_free(&t);
    if (!rc && !done)
        fprintf(stderr, "placebench: no order_wins chart: %s\n", reason->msg);
    *drawn |= done;
    return rc;
}

/* Writes the embedding bars' four data files and draws them. */
static int cmd_plot_bars_draw(const cmd_plot_opts *o, const store_embedding_table *t,
                              const papers_paper *paper)
{
    static const char stem[] = "embedding_bars";
    char subtitle[256];
    snprintf(subtitle, sizeof subtitle, "placer %s", paper->placer);
    cmd_plot_files files = {0};
    cli_output out;
    if (cmd_plot_data_open(o, &files, "data", stem, ".tsv", &out))
        return 1;
    cli_plot_data_bars(out.f, t, paper->embeddings, o->db);
    if (cmd_plot_data_close(&files, &out) ||
        cmd_plot_data_open(o, &files, "groups", stem, ".groups.tsv", &out))
        return 1;
    cli_plot_data_bar_groups(out.f, t);
    if (cmd_plot_data_close(&files, &out) ||
        cmd_plot_data_open(o, &files, "datasets", stem, ".datasets.tsv", &out))
        return 1;
    cli_plot_data_bar_datasets(out.f, t);
    if (cmd_plot_data_close(&files, &out) ||
        cmd_plot_data_open(o, &files, "series", stem, ".series.tsv", &out))
        return 1;
    cli_plot_data_bar_series(out.f, t, paper->embeddings);
    if (cmd_plot_data_close(&files, &out))
        return 1;
    cmd_plot_drawing dr = {"embedding_bars", stem, "", subtitle, &files};
    return cmd_plot_draw_all(o, &dr);
}

/* The embedding bars of the first paper with embedding tables, when its placer's runs use 2 or
 * more embeddings. */
static int cmd_plot_embedding_bars(const cmd_plot_opts *o, store *s, int *drawn)
{
    const papers_paper *paper = papers_with_embeddings();
    if (!paper) {
        fputs("placebench: no embedding_bars chart: no registered paper has embedding tables\n",
              stderr);
        return 0;
    }
    store_embedding_table t;
    pb_error why = {{0}};
    int rc = 0;
    if (store_tables_embeddings(s, paper->placer, NULL, &t, &why) != PB_OK) {
        fprintf(stderr, "placebench: no embedding_bars chart: %s\n", why.msg);
    } else if (t.n_embeddings < 2) {
        fprintf(stderr,
                "placebench: no embedding_bars chart: %s: the runs of placer '%s' use one "
                "embedding (%s)\n",
                o->db, paper->placer, t.embeddings[0]);
    } else {
        rc = cmd_plot_bars_draw(o, &t, paper);
        *drawn = 1;
    }
    store_embedding_table_free(&t);
    return rc;
}

/* ---------------------------------------------------------------- HeterPS */

/* Writes heterps_bars.tsv and its label files and draws them; *drawn set when there were bars. */
static int cmd_plot_heterps_bars(const cmd_plot_opts *o, const store_heterps_table *t,
                                 const papers_heterps_tables *pt, int *drawn)
{
    static const char stem[] = "heterps_bars";
    cmd_plot_files files = {0};
    cli_output out;
    if (cmd_plot_data_open(o, &files, "data", stem, ".tsv", &out))
        return 1;
    int lines = cli_plot_data_heterps_bars(out.f, t, pt, o->db);
    if (cmd_plot_data_close(&files, &out))
        return 1;
    if (lines == 0) {
        fprintf(stderr,
                "placebench: %s: no run of the heterps simulator finished ok with a stored "
                "cost; no %s chart\n",
                o->db, stem);
        return 0;
    }
    if (cmd_plot_data_open(o, &files, "groups", stem, ".groups.tsv", &out))
        return 1;
    cli_plot_data_heterps_groups(out.f, t);
    if (cmd_plot_data_close(&files, &out) ||
        cmd_plot_data_open(o, &files, "series", stem, ".series.tsv", &out))
        return 1;
    cli_plot_data_heterps_bar_series(out.f, t, pt);
    if (cmd_plot_data_close(&files, &out))
        return 1;
    *drawn = 1;
    cmd_plot_drawing dr = {"heterps_bars", stem, "", NULL, &files};
    return cmd_plot_draw_all(o, &dr);
}

/* Writes heterps_sched_time.tsv and its series file and draws them. */
static int cmd_plot_heterps_times(const cmd_plot_opts *o, const store_heterps_table *t,
                                  const papers_heterps_tables *pt, int *drawn)
{
    static const char stem[] = "heterps_sched_time";
    cmd_plot_files files = {0};
    cli_output out;
    if (cmd_plot_data_open(o, &files, "data", stem, ".tsv", &out))
        return 1;
    int lines = cli_plot_data_heterps_times(out.f, t, pt, o->db);
    if (cmd_plot_data_close(&files, &out))
        return 1;
    if (lines == 0) {
        fprintf(stderr,
                "placebench: %s: no run of the heterps simulator finished ok; no %s chart\n", o->db,
                stem);
        return 0;
    }
    if (cmd_plot_data_open(o, &files, "series", stem, ".series.tsv", &out))
        return 1;
    cli_plot_data_heterps_time_series(out.f, t, pt);
    if (cmd_plot_data_close(&files, &out))
        return 1;
    *drawn = 1;
    cmd_plot_drawing dr = {"heterps_sched_time", stem, "", NULL, &files};
    return cmd_plot_draw_all(o, &dr);
}

/* The HeterPS charts, when there are runs of the heterps simulator. */
static int cmd_plot_heterps(const cmd_plot_opts *o, store *s, int *drawn)
{
    const papers_paper *paper = papers_with_heterps();
    store_heterps_table t;
    pb_error why = {{0}};
    int rc = 0;
    /* No run of the heterps simulator is no error (as for GDP's and TAG's charts): a Placeto
     * results file plots without a word about HeterPS. */
    if (store_tables_heterps(s, &t, &why) == PB_OK)
        rc = cmd_plot_heterps_bars(o, &t, paper ? paper->heterps : NULL, drawn) ||
             cmd_plot_heterps_times(o, &t, paper ? paper->heterps : NULL, drawn);
    store_heterps_table_free(&t);
    return rc;
}

/* ---------------------------------------------------------------- TAG */

/* TAG's testbed chart, when there are runs of tag or pure-mcts. */
static int cmd_plot_tag(const cmd_plot_opts *o, store *s, int *drawn)
{
    static const char stem[] = "tag_testbed";
    store_tag_table t;
    pb_error why = {{0}};
    int mcts = 0;
    if (store_tables_tag(s, &t, &why) == PB_OK)
        for (int p = 0; p < t.n_placers; p++)
            mcts |= strcmp(t.placers[p], "tag") == 0 || strcmp(t.placers[p], "pure-mcts") == 0;
    if (!mcts) {
        store_tag_table_free(&t);
        return 0;
    }
    cmd_plot_files files = {0};
    cli_output out;
    int rc = cmd_plot_data_open(o, &files, "data", stem, ".tsv", &out);
    int lines = rc ? 0 : cli_plot_data_tag(out.f, &t, o->db);
    store_tag_table_free(&t);
    if (rc || cmd_plot_data_close(&files, &out))
        return 1;
    if (lines == 0) {
        fprintf(stderr,
                "placebench: %s: no run of TAG's testbed placers finished ok; no %s chart\n", o->db,
                stem);
        return 0;
    }
    *drawn = 1;
    cmd_plot_drawing dr = {"tag_testbed", stem, "", NULL, &files};
    return cmd_plot_draw_all(o, &dr);
}

/* ---------------------------------------------------------------- GDP */

/* GDP's Table 1 chart, when there are runs on the GDP cluster. */
static int cmd_plot_gdp(const cmd_plot_opts *o, store *s, int *drawn)
{
    static const char stem[] = "gdp_table1";
    const papers_paper *paper = papers_with_gdp();
    const papers_gdp_tables *pt = paper ? paper->gdp : NULL;
    store_gdp_table t;
    pb_error why = {{0}};
    /* Drawn only when there are runs on the GDP cluster; no such run is no error (as for the
     * HeterPS and TAG charts), so a Placeto results file plots without a word about GDP. */
    if (store_tables_gdp(s, pt ? pt->cluster : "gdp-p100", &t, &why) != PB_OK) {
        store_gdp_table_free(&t);
        return 0;
    }
    cmd_plot_files files = {0};
    cli_output out;
    int rc = cmd_plot_data_open(o, &files, "data", stem, ".tsv", &out);
    int lines = rc ? 0 : cli_gdp_plot_data(out.f, &t, pt, o->db);
    store_gdp_table_free(&t);
    if (rc || cmd_plot_data_close(&files, &out))
        return 1;
    if (lines == 0) {
        fprintf(stderr, "placebench: %s: no run on the GDP cluster fitted; no %s chart\n", o->db,
                stem);
        return 0;
    }
    *drawn = 1;
    cmd_plot_drawing dr = {"gdp_table1", stem, "", NULL, &files};
    return cmd_plot_draw_all(o, &dr);
}

int cmd_plot(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            puts(cmd_plot_usage);
            return 0;
        }
    }
    cmd_plot_opts o = {0};
    int rc = cmd_plot_parse(argc, argv, &o);
    if (rc)
        return rc;
    pb_error err = {{0}};
    store *s;
    if (store_open_readonly(o.db, &s, &err))
        return cli_error("%s", err.msg);
    int drawn = 0;
    rc = cmd_plot_find_scripts(&o) || cmd_plot_mkdirs(o.out_dir);
    for (size_t i = 0; !rc && i < sizeof cmd_plot_charts / sizeof cmd_plot_charts[0]; i++)
        rc = cmd_plot_chart_run(&o, s, &cmd_plot_charts[i], &drawn);
    rc = rc || cmd_plot_order_wins(&o, s, &drawn) || cmd_plot_embedding_bars(&o, s, &drawn) ||
         cmd_plot_heterps(&o, s, &drawn) || cmd_plot_gdp(&o, s, &drawn) ||
         cmd_plot_tag(&o, s, &drawn);
    store_close(s);
    if (!rc && !drawn)
        return cli_error("%s: no run finished ok: nothing to plot", o.db);
    return rc ? 1 : 0;
}
