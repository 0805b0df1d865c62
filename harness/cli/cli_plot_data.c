/* cli_plot_data.c — the TSV files placebench plot hands to the gnuplot scripts. */
#include "cli_plot_data.h"

#include "report/papers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- shared */

/* A label as one TSV field: tabs and line breaks become spaces. */
static void cli_plot_data_label(FILE *f, const char *t)
{
    for (; *t; t++)
        fputc(*t == '\t' || *t == '\n' || *t == '\r' ? ' ' : *t, f);
}

static void cli_plot_data_number(FILE *f, double d)
{
    if (isfinite(d))
        fprintf(f, "\t%.17g", d);
    else
        fputs("\tnan", f);
}

void cli_plot_data_labels(FILE *f, char *const *labels, int n, const char *what)
{
    fprintf(f, "# index\t%s\n", what);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d\t", i);
        cli_plot_data_label(f, labels[i]);
        fputc('\n', f);
    }
}

/* ---------------------------------------------------------------- step times */

/* Distinct series among rows [from, to) (sorted by series within a panel). */
static int cli_plot_data_count_series(const store_plot_data *d, int from, int to)
{
    int n = 0;
    for (int i = from; i < to; i++)
        n += i == from || d->rows[i].series != d->rows[i - 1].series;
    return n;
}

static void cli_plot_data_row(FILE *f, const store_plot_row *r, int slot, int n_slots)
{
    fprintf(f, "%d\t%d\t%d", r->panel, r->series, r->episode);
    cli_plot_data_number(f, r->mean_us);
    cli_plot_data_number(f, r->sd_us);
    cli_plot_data_number(f, r->min_us);
    cli_plot_data_number(f, r->max_us);
    fprintf(f, "\t%d\t%d\t%d\t%d\n", r->n_graphs, r->n_runs, slot, n_slots);
}

void cli_plot_data_rows(FILE *f, const store_plot_data *d, const char *db, const char *unit)
{
    fprintf(f,
            "# placebench plot data from %s (values in %s): over the runs that finished ok,\n"
            "# mean is the mean over graphs of the per-graph mean over repeats, sd the pooled\n"
            "# within-graph standard deviation over repeats (nan with 1 repeat), min and max\n"
            "# over all runs; episode -1 means the run's final best step time; slot is the\n"
            "# series' place among the n_slots series of its panel.\n"
            "# panel\tseries\tepisode\tmean\tsd\tmin\tmax\tn_graphs\tn_runs\tslot\tn_slots\n",
            db, unit);
    for (int from = 0, to; from < d->n_rows; from = to) {
        for (to = from; to < d->n_rows && d->rows[to].panel == d->rows[from].panel; to++)
            ;
        int n_slots = cli_plot_data_count_series(d, from, to), slot = -1;
        for (int i = from; i < to; i++) {
            int new_series = i == from || d->rows[i].series != d->rows[i - 1].series;
            slot += new_series;
            if (i > 0 && new_series)
                fputc('\n', f);
            cli_plot_data_row(f, &d->rows[i], slot, n_slots);
        }
    }
}

/* ---------------------------------------------------------------- order wins */

/* The order shown in column col: the paper's orders first, in its order. */
static int cli_plot_data_order_at(const store_order_wins *w, const papers_order_table *pt, int col)
{
    return papers_display_at((const char *const *)w->orders, w->n_orders, pt ? pt->orders : NULL,
                             pt ? pt->n_orders : 0, col);
}

static int cli_plot_data_cell(const store_order_wins *w, int i, int j, int k)
{
    return (i * w->n_devices + j) * w->n_episodes + k;
}

/* Non-zero when some dataset compared graphs at (devices j, episode k). */
static int cli_plot_data_row_used(const store_order_wins *w, int j, int k)
{
    for (int i = 0; i < w->n_datasets; i++)
        if (w->graphs[cli_plot_data_cell(w, i, j, k)] > 0)
            return 1;
    return 0;
}

int cli_plot_data_wins_drawable(const store_order_wins *w)
{
    if (w->n_orders < 2)
        return 0;
    for (int j = 0; j < w->n_devices; j++)
        for (int k = 0; k < w->n_episodes; k++)
            if (cli_plot_data_row_used(w, j, k))
                return 1;
    return 0;
}

void cli_plot_data_wins_cells(FILE *f, const store_order_wins *w, const papers_order_table *pt,
                              const char *db)
{
    fprintf(f,
            "# placebench order-wins data from %s: graphs each order won, i.e. had the lowest\n"
            "# best step time by the end of the row's episode (mean over repeats; tied orders\n"
            "# all win), out of the graphs compared; ties: graphs won by several orders.\n"
            "# panel\trow\tcol\twins\tgraphs\tties\n",
            db);
    for (int i = 0; i < w->n_datasets; i++) {
        int row = 0;
        for (int j = 0; j < w->n_devices; j++) {
            for (int k = 0; k < w->n_episodes; k++) {
                if (!cli_plot_data_row_used(w, j, k))
                    continue;
                int c = cli_plot_data_cell(w, i, j, k);
                for (int col = 0; w->graphs[c] > 0 && col < w->n_orders; col++)
                    fprintf(f, "%d\t%d\t%d\t%d\t%d\t%d\n", i, row, col,
                            w->wins[c * w->n_orders + cli_plot_data_order_at(w, pt, col)],
                            w->graphs[c], w->ties[c]);
                row++;
            }
        }
    }
}

void cli_plot_data_wins_rows(FILE *f, const store_order_wins *w)
{
    fputs("# panel\trow\tgraphs\tties\tdevices\tepisode\tlabel\n", f);
    for (int i = 0; i < w->n_datasets; i++) {
        int row = 0;
        for (int j = 0; j < w->n_devices; j++) {
            for (int k = 0; k < w->n_episodes; k++) {
                if (!cli_plot_data_row_used(w, j, k))
                    continue;
                int c = cli_plot_data_cell(w, i, j, k);
                fprintf(f, "%d\t%d\t%d\t%d\t%d\t%d\t%d dev, ep %d\n", i, row++, w->graphs[c],
                        w->ties[c], w->devices[j], w->episodes[k], w->devices[j], w->episodes[k]);
            }
        }
    }
}

void cli_plot_data_wins_panels(FILE *f, const store_order_wins *w)
{
    cli_plot_data_labels(f, w->datasets, w->n_datasets, "dataset");
}

void cli_plot_data_wins_cols(FILE *f, const store_order_wins *w, const papers_order_table *pt)
{
    fputs("# index\ttraversal order\n", f);
    for (int col = 0; col < w->n_orders; col++) {
        fprintf(f, "%d\t", col);
        cli_plot_data_label(f, w->orders[cli_plot_data_order_at(w, pt, col)]);
        fputc('\n', f);
    }
}

/* ---------------------------------------------------------------- embedding bars */

static const store_embedding_cell *cli_plot_data_ecell(const store_embedding_table *t, int i, int j,
                                                       int e)
{
    return &t->cells[(i * t->n_devices + j) * t->n_embeddings + e];
}

/* The embedding shown at place `place` (the paper's order, others after). */
static int cli_plot_data_embedding_at(const store_embedding_table *t,
                                      const papers_embedding_table *pt, int place)
{
    return papers_display_at((const char *const *)t->embeddings, t->n_embeddings,
                             pt ? pt->embeddings : NULL, pt ? pt->n_embeddings : 0, place);
}

/* Embeddings with runs in cell (i, j). */
static int cli_plot_data_cell_series(const store_embedding_table *t, int i, int j)
{
    int n = 0;
    for (int e = 0; e < t->n_embeddings; e++)
        n += cli_plot_data_ecell(t, i, j, e)->n_runs > 0;
    return n;
}

/* Device counts of dataset i with data. */
static int cli_plot_data_device_groups(const store_embedding_table *t, int i)
{
    int n = 0;
    for (int j = 0; j < t->n_devices; j++)
        n += cli_plot_data_cell_series(t, i, j) > 0;
    return n;
}

/* Embedding e of dataset i averaged over the dataset's device counts (the paper's Figures 4
 * and 5): means of the cell means; runs summed, graphs the most of one cell.  No runs (no bar)
 * when e lacks one of the device counts, so the mean bars of a dataset compare like with like. */
static store_embedding_cell cli_plot_data_mean_cell(const store_embedding_table *t, int i, int e)
{
    store_embedding_cell m = {0};
    int n = 0, n_ec = 0;
    for (int j = 0; j < t->n_devices; j++) {
        const store_embedding_cell *c = cli_plot_data_ecell(t, i, j, e);
        if (c->n_runs == 0 && cli_plot_data_cell_series(t, i, j) > 0)
            return (store_embedding_cell){0};
        if (c->n_runs == 0)
            continue;
        m.n_runs += c->n_runs;
        m.n_graphs = c->n_graphs > m.n_graphs ? c->n_graphs : m.n_graphs;
        m.improvement_pct += c->improvement_pct;
        m.wall_s += c->wall_s;
        n++;
        if (isfinite(c->ec)) {
            m.ec += c->ec;
            n_ec++;
        }
    }
    m.improvement_pct = n ? m.improvement_pct / n : NAN;
    m.wall_s = n ? m.wall_s / n : NAN;
    m.ec = n_ec ? m.ec / n_ec : NAN;
    return m;
}

/* One bar group: dataset i, devices index j (-1: the mean over device counts), at x; pt: the
 * paper whose embeddings come first. */
typedef void (*cli_plot_data_group_fn)(FILE *f, const store_embedding_table *t,
                                       const papers_embedding_table *pt, int group, double x, int i,
                                       int j);

/* Calls fn for every group in order; the gap between datasets is 0.6 of a group. */
static void cli_plot_data_each_group(FILE *f, const store_embedding_table *t,
                                     const papers_embedding_table *pt, cli_plot_data_group_fn fn)
{
    int group = 0;
    double x = 0;
    for (int i = 0; i < t->n_datasets; i++) {
        int n = cli_plot_data_device_groups(t, i);
        if (n == 0)
            continue;
        for (int j = 0; j < t->n_devices; j++) {
            if (cli_plot_data_cell_series(t, i, j) > 0) {
                fn(f, t, pt, group++, x, i, j);
                x += 1;
            }
        }
        if (n >= 2) {
            fn(f, t, pt, group++, x, i, -1);
            x += 1;
        }
        x += 0.6;
    }
}

static void cli_plot_data_bar_group(FILE *f, const store_embedding_table *t,
                                    const papers_embedding_table *pt, int group, double x, int i,
                                    int j)
{
    int n_slots = 0;
    for (int e = 0; e < t->n_embeddings; e++) {
        store_embedding_cell c =
            j >= 0 ? *cli_plot_data_ecell(t, i, j, e) : cli_plot_data_mean_cell(t, i, e);
        n_slots += c.n_runs > 0;
    }
    for (int place = 0, slot = 0; place < t->n_embeddings; place++) {
        int e = cli_plot_data_embedding_at(t, pt, place);
        store_embedding_cell c =
            j >= 0 ? *cli_plot_data_ecell(t, i, j, e) : cli_plot_data_mean_cell(t, i, e);
        if (c.n_runs == 0)
            continue;
        fprintf(f, "%d\t%g\t%d\t%d\t%d", group, x, place, slot++, n_slots);
        cli_plot_data_number(f, c.improvement_pct);
        cli_plot_data_number(f, c.wall_s);
        cli_plot_data_number(f, c.ec);
        fprintf(f, "\t%d\t%d\t%d\n", c.n_runs, c.n_graphs, e);
    }
}

void cli_plot_data_bars(FILE *f, const store_embedding_table *t, const papers_embedding_table *pt,
                        const char *db)
{
    fprintf(f,
            "# placebench embedding data from %s: over the runs that finished ok with an\n"
            "# initial step time, means of the improvement over the initial placement\n"
            "# ((initial - best) / initial * 100), of the computation (search wall) time and of\n"
            "# the EC ratio (improvement fraction per second); a group's slot is the bar's place\n"
            "# among its n_slots embeddings; colour: the embedding's place in name order (as in\n"
            "# the learning curves' series).\n"
            "# group\tx\tembedding\tslot\tn_slots\timprovement_pct\twall_s\tec\tn_runs\t"
            "n_graphs\tcolour\n",
            db);
    cli_plot_data_each_group(f, t, pt, cli_plot_data_bar_group);
}

static void cli_plot_data_group_label(FILE *f, const store_embedding_table *t,
                                      const papers_embedding_table *pt, int group, double x, int i,
                                      int j)
{
    (void)pt;
    if (j >= 0)
        fprintf(f, "%d\t%g\t%d\t%d dev\n", group, x, i, t->devices[j]);
    else
        fprintf(f, "%d\t%g\t%d\tmean\n", group, x, i);
}

void cli_plot_data_bar_groups(FILE *f, const store_embedding_table *t)
{
    fputs("# group\tx\tdataset\tlabel\n", f);
    cli_plot_data_each_group(f, t, NULL, cli_plot_data_group_label);
}

void cli_plot_data_bar_datasets(FILE *f, const store_embedding_table *t)
{
    fputs("# index\tx_centre\tdataset\n", f);
    double x = 0;
    for (int i = 0; i < t->n_datasets; i++) {
        int n = cli_plot_data_device_groups(t, i);
        if (n == 0)
            continue;
        int groups = n + (n >= 2);
        fprintf(f, "%d\t%g\t", i, x + (groups - 1) / 2.0);
        cli_plot_data_label(f, t->datasets[i]);
        fputc('\n', f);
        x += groups + 0.6;
    }
}

void cli_plot_data_bar_series(FILE *f, const store_embedding_table *t,
                              const papers_embedding_table *pt)
{
    fputs("# index\tembedding\tcolour\n", f);
    for (int place = 0; place < t->n_embeddings; place++) {
        int e = cli_plot_data_embedding_at(t, pt, place);
        fprintf(f, "%d\t", place);
        cli_plot_data_label(f, t->embeddings[e]);
        fprintf(f, "\t%d\n", e);
    }
}

/* ---------------------------------------------------------------- HeterPS */

/* The placer shown q-th: the paper's methods first, in its order. */
static int cli_plot_data_heterps_at(const store_heterps_table *t, const papers_heterps_tables *pt,
                                    int q)
{
    return papers_heterps_display_at(pt, (const char *const *)t->placers, t->n_placers, q);
}

static const store_heterps_cell *cli_plot_data_hcell(const store_heterps_table *t, int m, int j,
                                                     int p)
{
    return &t->cells[(m * t->n_devices + j) * t->n_placers + p];
}

/* Bars of the (model m, T j) group: methods with a stored cost. */
static int cli_plot_data_heterps_slots(const store_heterps_table *t, int m, int j)
{
    int n = 0;
    for (int p = 0; p < t->n_placers; p++)
        n += cli_plot_data_hcell(t, m, j, p)->n_verdict > 0;
    return n;
}

int cli_plot_data_heterps_bars(FILE *f, const store_heterps_table *t,
                               const papers_heterps_tables *pt, const char *db)
{
    fprintf(f,
            "# placebench HeterPS data from %s: over the runs of the heterps simulator that\n"
            "# finished ok with a stored verdict, the mean monetary cost (USD) and throughput\n"
            "# (examples/s) per (model, resource types T, method); slot: the bar's place among\n"
            "# its group's n_slots methods; colour: the method's place in the paper's order.\n"
            "# group\tx\tmethod\tslot\tn_slots\tcost_usd\tthroughput\tcolour\n",
            db);
    int group = 0, lines = 0;
    for (int j = 0; j < t->n_devices; j++)
        for (int m = 0; m < t->n_models; m++) {
            int n_slots = cli_plot_data_heterps_slots(t, m, j), slot = 0;
            if (!n_slots)
                continue;
            for (int q = 0; q < t->n_placers; q++) {
                int p = cli_plot_data_heterps_at(t, pt, q);
                const store_heterps_cell *c = cli_plot_data_hcell(t, m, j, p);
                if (c->n_verdict == 0)
                    continue;
                fprintf(f, "%d\t%d\t", group, group);
                cli_plot_data_label(f, t->placers[p]);
                fprintf(f, "\t%d\t%d", slot++, n_slots);
                cli_plot_data_number(f, c->cost);
                cli_plot_data_number(f, c->throughput);
                fprintf(f, "\t%d\n", q);
                lines++;
            }
            group++;
        }
    return lines;
}

void cli_plot_data_heterps_groups(FILE *f, const store_heterps_table *t)
{
    fputs("# group\tx\tlabel\n", f);
    int group = 0;
    for (int j = 0; j < t->n_devices; j++)
        for (int m = 0; m < t->n_models; m++) {
            if (!cli_plot_data_heterps_slots(t, m, j))
                continue;
            fprintf(f, "%d\t%d\t", group, group);
            cli_plot_data_label(f, t->models[m]);
            fprintf(f, ", T = %d\n", t->devices[j]);
            group++;
        }
}

void cli_plot_data_heterps_bar_series(FILE *f, const store_heterps_table *t,
                                      const papers_heterps_tables *pt)
{
    fputs("# index\tmethod\tcolour\n", f);
    for (int q = 0; q < t->n_placers; q++) {
        fprintf(f, "%d\t", q);
        cli_plot_data_label(f, t->placers[cli_plot_data_heterps_at(t, pt, q)]);
        fprintf(f, "\t%d\n", q);
    }
}

/* Models in order of their layers (then name), for the time-vs-layers lines. */
static void cli_plot_data_heterps_by_layers(const store_heterps_table *t, int *order)
{
    for (int m = 0; m < t->n_models; m++)
        order[m] = m;
    for (int a = 1; a < t->n_models; a++)
        for (int b = a; b > 0 && t->layers[order[b]] < t->layers[order[b - 1]]; b--) {
            int x = order[b];
            order[b] = order[b - 1];
            order[b - 1] = x;
        }
}

/* Non-zero when (placer p, T j) has ok runs on some model. */
static int cli_plot_data_heterps_has_time(const store_heterps_table *t, int j, int p)
{
    for (int m = 0; m < t->n_models; m++)
        if (cli_plot_data_hcell(t, m, j, p)->n_ok > 0)
            return 1;
    return 0;
}

int cli_plot_data_heterps_times(FILE *f, const store_heterps_table *t,
                                const papers_heterps_tables *pt, const char *db)
{
    fprintf(f,
            "# placebench HeterPS scheduling times from %s: mean search wall time (s) of the ok\n"
            "# runs per (method, resource types T) and model, by the model's layers; one block\n"
            "# per series (index in the series file).\n"
            "# series\tlayers\tsched_s\tmodel\n",
            db);
    int *order = malloc((size_t)t->n_models * sizeof *order);
    if (!order)
        return 0;
    cli_plot_data_heterps_by_layers(t, order);
    int series = 0, lines = 0;
    for (int q = 0; q < t->n_placers; q++) {
        int p = cli_plot_data_heterps_at(t, pt, q);
        for (int j = 0; j < t->n_devices; j++) {
            if (!cli_plot_data_heterps_has_time(t, j, p))
                continue;
            if (series++)
                fputs("\n\n", f);
            for (int k = 0; k < t->n_models; k++) {
                const store_heterps_cell *c = cli_plot_data_hcell(t, order[k], j, p);
                if (c->n_ok == 0)
                    continue;
                fprintf(f, "%d\t%d", series - 1, t->layers[order[k]]);
                cli_plot_data_number(f, c->wall_s);
                fputc('\t', f);
                cli_plot_data_label(f, t->models[order[k]]);
                fputc('\n', f);
                lines++;
            }
        }
    }
    free(order);
    return lines;
}

void cli_plot_data_heterps_time_series(FILE *f, const store_heterps_table *t,
                                       const papers_heterps_tables *pt)
{
    fputs("# index\tlabel\tcolour\tdash\n", f);
    int series = 0;
    for (int q = 0; q < t->n_placers; q++) {
        int p = cli_plot_data_heterps_at(t, pt, q);
        for (int j = 0; j < t->n_devices; j++) {
            if (!cli_plot_data_heterps_has_time(t, j, p))
                continue;
            fprintf(f, "%d\t", series++);
            cli_plot_data_label(f, t->placers[p]);
            fprintf(f, ", T = %d\t%d\t%d\n", t->devices[j], q, j);
        }
    }
}

/* ---------------------------------------------------------------- TAG */

int cli_plot_data_tag(FILE *f, const store_tag_table *t, const char *db)
{
    static const char *const placers[] = {"dp-nccl", "dp-nccl-p", "tag", "pure-mcts"};
    fprintf(
        f,
        "# placebench TAG testbed figures from %s: per model, the mean best step time (ms) of\n"
        "# the ok runs of each placer and the mean search wall time (s) of the MCTS placers\n"
        "# (nan: no ok run; for step times also: no strategy that fits in memory, Fig. 5's OOM)\n"
        "# model\tdp-nccl\tdp-nccl-p\ttag\tpure-mcts\ttag_search_s\tpure-mcts_search_s\n",
        db);
    int lines = 0;
    for (int m = 0; m < t->n_models; m++) {
        int any = 0;
        for (int p = 0; p < 4; p++) {
            const store_tag_cell *c = store_tag_at(t, t->models[m], placers[p]);
            any |= c && c->n_ok > 0;
        }
        if (!any)
            continue;
        cli_plot_data_label(f, t->models[m]);
        for (int p = 0; p < 4; p++) {
            const store_tag_cell *c = store_tag_at(t, t->models[m], placers[p]);
            cli_plot_data_number(f, c && c->n_feasible > 0 ? c->best_us / 1000 : NAN);
        }
        for (int p = 2; p < 4; p++) {
            const store_tag_cell *c = store_tag_at(t, t->models[m], placers[p]);
            cli_plot_data_number(f, c && c->n_ok > 0 ? c->wall_s : NAN);
        }
        fputc('\n', f);
        lines++;
    }
    return lines;
}
