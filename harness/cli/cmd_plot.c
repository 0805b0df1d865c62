/* cmd_plot.c — placebench plot: learning curves and best step times of a results file, drawn by
 * the gnuplot scripts in plots/. */
#include "cli.h"
#include "cli_output.h"

#include "store.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
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
    "Draws the results file DB with gnuplot (found on PATH):\n"
    "  learning_curves   best step time found so far vs episode, one panel per (dataset,\n"
    "                    devices), one line per (placer, embedding, traversal)\n"
    "  best_step_time    bars of the best step time per (placer, embedding, traversal), one\n"
    "                    group per (dataset, devices)\n"
    "Lines and bars are the mean over graphs of the per-graph mean over repeats; bands and error\n"
    "bars are +-1 pooled standard deviation over repeats.  Only runs that finished ok count.\n"
    "The data of each chart is written beside it as TSV (<chart>.tsv, .panels.tsv, .series.tsv).\n"
    "\n"
    "  --out DIR                 output folder (default plots/out/<DB name without .db>)\n"
    "  --format png|svg|both     image formats (default both)\n"
    "\n"
    "The scripts are looked up in $PLACEBENCH_PLOTS_DIR, then beside the program\n"
    "(../share/placebench/plots, ../plots), then in the source and install folders.";

/* The charts: a gnuplot script plots/<stem>.gp drawn from one data extract each. */
typedef struct cmd_plot_chart {
    const char *stem;
    int (*extract)(store *s, store_plot_data *out, pb_error *err);
    const char *what; /* what is missing when the extract is empty */
} cmd_plot_chart;

static const cmd_plot_chart cmd_plot_charts[] = {
    {"learning_curves", store_plot_curves, "learning-curve points of runs that finished ok"},
    {"best_step_time", store_plot_bests, "runs that finished ok with a best step time"},
};

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
static int cmd_plot_mkdirs(const char *path)
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
    for (size_t i = 0; i < sizeof cmd_plot_charts / sizeof cmd_plot_charts[0]; i++) {
        if ((size_t)snprintf(path, sizeof path, "%s/%s.gp", dir, cmd_plot_charts[i].stem) >=
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
            return cli_error("PLACEBENCH_PLOTS_DIR=%s: no readable learning_curves.gp and "
                             "best_step_time.gp there",
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

/* A label as one TSV field: tabs and line breaks become spaces. */
static void cmd_plot_label(FILE *f, const char *t)
{
    for (; *t; t++)
        fputc(*t == '\t' || *t == '\n' || *t == '\r' ? ' ' : *t, f);
}

static void cmd_plot_number(FILE *f, double d)
{
    if (isfinite(d))
        fprintf(f, "\t%.17g", d);
    else
        fputs("\tnan", f);
}

/* Distinct series among rows [from, to) (sorted by series within a panel). */
static int cmd_plot_count_series(const store_plot_data *d, int from, int to)
{
    int n = 0;
    for (int i = from; i < to; i++)
        n += i == from || d->rows[i].series != d->rows[i - 1].series;
    return n;
}

static void cmd_plot_write_row(FILE *f, const store_plot_row *r, int slot, int n_slots)
{
    fprintf(f, "%d\t%d\t%d", r->panel, r->series, r->episode);
    cmd_plot_number(f, r->mean_us);
    cmd_plot_number(f, r->sd_us);
    cmd_plot_number(f, r->min_us);
    cmd_plot_number(f, r->max_us);
    fprintf(f, "\t%d\t%d\t%d\t%d\n", r->n_graphs, r->n_runs, slot, n_slots);
}

/* <stem>.tsv: one block per (panel, series), blank line between blocks.  slot numbers the series
 * present in a panel (bars sit side by side without gaps for absent series). */
static void cmd_plot_write_rows(FILE *f, const store_plot_data *d, const char *db)
{
    fprintf(f,
            "# placebench plot data from %s: over the runs that finished ok, mean_us is the\n"
            "# mean over graphs of the per-graph mean over repeats, sd_us the pooled\n"
            "# within-graph standard deviation over repeats (nan with 1 repeat), min_us and\n"
            "# max_us over all runs; episode -1 means the run's final best step time; slot is\n"
            "# the series' place among the n_slots series of its panel.\n"
            "# panel\tseries\tepisode\tmean_us\tsd_us\tmin_us\tmax_us\tn_graphs\tn_runs\tslot\t"
            "n_slots\n",
            db);
    for (int from = 0, to; from < d->n_rows; from = to) {
        for (to = from; to < d->n_rows && d->rows[to].panel == d->rows[from].panel; to++)
            ;
        int n_slots = cmd_plot_count_series(d, from, to), slot = -1;
        for (int i = from; i < to; i++) {
            int new_series = i == from || d->rows[i].series != d->rows[i - 1].series;
            slot += new_series;
            if (i > 0 && new_series)
                fputc('\n', f);
            cmd_plot_write_row(f, &d->rows[i], slot, n_slots);
        }
    }
}

/* <stem>.panels.tsv or <stem>.series.tsv: "index<TAB>label" per line. */
static void cmd_plot_write_labels(FILE *f, char *const *labels, int n, const char *what)
{
    fprintf(f, "# %s\tlabel\n", what);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d\t", i);
        cmd_plot_label(f, labels[i]);
        fputc('\n', f);
    }
}

/* Writes the three data files of a chart; their paths go to paths[0..2]. */
static int cmd_plot_write_data(const cmd_plot_opts *o, const char *stem, const store_plot_data *d,
                               char paths[3][PATH_MAX])
{
    static const char *const suffix[3] = {".tsv", ".panels.tsv", ".series.tsv"};
    for (int k = 0; k < 3; k++) {
        char name[256];
        snprintf(name, sizeof name, "%s%s", stem, suffix[k]);
        cli_output out;
        if (cmd_plot_join(paths[k], PATH_MAX, o->out_dir, name) || cli_output_open(&out, paths[k]))
            return 1;
        if (k == 0)
            cmd_plot_write_rows(out.f, d, o->db);
        else if (k == 1)
            cmd_plot_write_labels(out.f, d->panels, d->n_panels, "panel (dataset, devices)");
        else
            cmd_plot_write_labels(out.f, d->series, d->n_series,
                                  "series (placer / embedding / traversal)");
        if (cli_output_close(&out, 1))
            return 1;
        printf("%s\n", paths[k]);
    }
    return 0;
}

/* Appends name='value' to buf as a gnuplot assignment (single quotes: no backquote expansion;
 * a quote is written twice). */
static int cmd_plot_gp_var(char *buf, size_t n, const char *name, const char *value)
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

static int cmd_plot_gnuplot(const char *script, const char *vars)
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

/* Runs the chart's script once for an image format and checks the image was written. */
static int cmd_plot_draw(const cmd_plot_opts *o, const char *stem, char data[3][PATH_MAX],
                         const char *ext)
{
    char script[PATH_MAX], image[PATH_MAX], name[256], vars[4 * PATH_MAX + 128] = "";
    snprintf(name, sizeof name, "%s.%s", stem, ext);
    if (cmd_plot_join(script, sizeof script, o->scripts, stem) ||
        strlen(script) + 4 >= sizeof script || cmd_plot_join(image, sizeof image, o->out_dir, name))
        return 1;
    strcat(script, ".gp");
    if (cmd_plot_gp_var(vars, sizeof vars, "data", data[0]) ||
        cmd_plot_gp_var(vars, sizeof vars, "panels", data[1]) ||
        cmd_plot_gp_var(vars, sizeof vars, "series", data[2]) ||
        cmd_plot_gp_var(vars, sizeof vars, "out", image) ||
        cmd_plot_gp_var(vars, sizeof vars, "term", ext))
        return 1;
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

/* Extracts, writes and draws one chart; *drawn is set when there was data. */
static int cmd_plot_chart_run(const cmd_plot_opts *o, store *s, const cmd_plot_chart *c, int *drawn)
{
    store_plot_data d;
    pb_error err = {{0}};
    if (c->extract(s, &d, &err)) {
        store_plot_data_free(&d);
        return cli_error("%s", err.msg);
    }
    int rc = 0;
    char data[3][PATH_MAX];
    if (d.n_rows == 0)
        fprintf(stderr, "placebench: %s: no %s; no %s chart\n", o->db, c->what, c->stem);
    else
        rc = cmd_plot_write_data(o, c->stem, &d, data) ||
             (o->png && cmd_plot_draw(o, c->stem, data, "png")) ||
             (o->svg && cmd_plot_draw(o, c->stem, data, "svg"));
    *drawn |= d.n_rows > 0;
    store_plot_data_free(&d);
    return rc;
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
    store_close(s);
    if (!rc && !drawn)
        return cli_error("%s: no run finished ok: nothing to plot", o.db);
    return rc ? 1 : 0;
}
