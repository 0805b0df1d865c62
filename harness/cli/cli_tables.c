/* cli_tables.c — the papers' tables as markdown or CSV, our figures beside the published ones. */
#include "cli_tables.h"

#include "report/papers.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- orders */

/* cols[q]: the index of the name shown q-th (papers_display_at). */
static void cli_tables_columns(char *const *names, int n, const char *const *paper, int n_paper,
                               int *cols)
{
    for (int q = 0; q < n; q++)
        cols[q] = papers_display_at((const char *const *)names, n, paper, n_paper, q);
}

static void cli_tables_orders_csv(FILE *f, const store_order_wins *w, const int *cols,
                                  const papers_order_table *pt)
{
    fputs("family,devices,episode,order,wins,graphs,ties,paper_wins\n", f);
    for (int i = 0; i < w->n_datasets; i++)
        for (int j = 0; j < w->n_devices; j++)
            for (int k = 0; k < w->n_episodes; k++) {
                size_t c = ((size_t)i * w->n_devices + j) * w->n_episodes + k;
                if (w->graphs[c] == 0)
                    continue;
                for (int q = 0; q < w->n_orders; q++) {
                    const char *order = w->orders[cols[q]];
                    int paper =
                        papers_order_wins(pt, w->datasets[i], w->devices[j], w->episodes[k], order);
                    fprintf(f, "%s,%d,%d,%s,%d,%d,%d,", w->datasets[i], w->devices[j],
                            w->episodes[k], order, w->wins[c * w->n_orders + cols[q]], w->graphs[c],
                            w->ties[c]);
                    if (paper >= 0)
                        fprintf(f, "%d", paper);
                    fputc('\n', f);
                }
            }
}

static void cli_tables_orders_family(FILE *f, const store_order_wins *w, int i, const int *cols,
                                     const papers_order_table *pt)
{
    fprintf(f,
            "### %s: graphs each order found the lowest mean best step time for "
            "(ours / paper)\n\n| devices | episode | graphs |",
            w->datasets[i]);
    for (int q = 0; q < w->n_orders; q++)
        fprintf(f, " %s |", w->orders[cols[q]]);
    fputs(" ties |\n|--:|--:|--:|", f);
    for (int q = 0; q <= w->n_orders; q++)
        fputs("--:|", f);
    fputc('\n', f);
    for (int j = 0; j < w->n_devices; j++)
        for (int k = 0; k < w->n_episodes; k++) {
            size_t c = ((size_t)i * w->n_devices + j) * w->n_episodes + k;
            if (w->graphs[c] == 0)
                continue;
            fprintf(f, "| %d | %d | %d |", w->devices[j], w->episodes[k], w->graphs[c]);
            for (int q = 0; q < w->n_orders; q++) {
                int paper = papers_order_wins(pt, w->datasets[i], w->devices[j], w->episodes[k],
                                              w->orders[cols[q]]);
                fprintf(f, " %d", w->wins[c * w->n_orders + cols[q]]);
                if (paper >= 0)
                    fprintf(f, " / %d", paper);
                fputs(" |", f);
            }
            fprintf(f, " %d |\n", w->ties[c]);
        }
    fputc('\n', f);
}

void cli_tables_orders(FILE *f, const store_order_wins *w, const papers_order_table *pt, int csv)
{
    int cols[256];
    if (w->n_orders > (int)(sizeof cols / sizeof *cols))
        return;
    cli_tables_columns(w->orders, w->n_orders, pt ? pt->orders : NULL, pt ? pt->n_orders : 0, cols);
    if (csv) {
        cli_tables_orders_csv(f, w, cols, pt);
        return;
    }
    for (int i = 0; i < w->n_datasets; i++)
        cli_tables_orders_family(f, w, i, cols, pt);
    fputs("Episodes are 0-based (9, 19, 49 end the 10th, 20th, 50th episode); each graph's best "
          "step time is averaged over its repeats first; orders tied for the lowest mean all "
          "win (ties column)",
          f);
    if (pt)
        fprintf(f, "; the paper's counts are of %d graphs", pt->n_graphs);
    fputs(".\n\n", f);
}

/* ---------------------------------------------------------------- embeddings */

static void cli_tables_num(FILE *f, double v, int decimals)
{
    if (isnan(v))
        fputs("-", f);
    else
        fprintf(f, "%.*f", decimals, v);
}

/* " ours / paper |" */
static void cli_tables_pair(FILE *f, double ours, double paper, int decimals)
{
    fputc(' ', f);
    cli_tables_num(f, ours, decimals);
    if (!isnan(paper)) {
        fputs(" / ", f);
        cli_tables_num(f, paper, decimals);
    }
    fputs(" |", f);
}

static const store_embedding_cell *cli_tables_cell(const store_embedding_table *t, int i, int j,
                                                   int e)
{
    return &t->cells[((size_t)i * t->n_devices + j) * t->n_embeddings + e];
}

/* Table 1 (metric 0: improvement %) or Table 2 (metric 1: computation time). */
static void cli_tables_embedding_metric(FILE *f, const store_embedding_table *t, const int *cols,
                                        const papers_embedding_table *pt, int metric)
{
    fputs(metric == 0 ? "### Improvement over the initial placement (%), ours / paper\n\n"
                      : "### Average computation time (s), ours / paper\n\n",
          f);
    fputs("| family | embedding |", f);
    for (int j = 0; j < t->n_devices; j++)
        fprintf(f, " %d devices |", t->devices[j]);
    fputs(" graphs |\n|---|---|", f);
    for (int j = 0; j <= t->n_devices; j++)
        fputs("--:|", f);
    fputc('\n', f);
    for (int i = 0; i < t->n_datasets; i++)
        for (int q = 0; q < t->n_embeddings; q++) {
            int e = cols[q];
            fprintf(f, "| %s | %s |", t->datasets[i], t->embeddings[e]);
            int graphs = 0;
            for (int j = 0; j < t->n_devices; j++) {
                const store_embedding_cell *c = cli_tables_cell(t, i, j, e);
                papers_embedding p =
                    papers_embedding_cell(pt, t->datasets[i], t->devices[j], t->embeddings[e]);
                cli_tables_pair(f, metric == 0 ? c->improvement_pct : c->wall_s,
                                metric == 0 ? p.improvement_pct : p.wall_s, metric == 0 ? 2 : 3);
                graphs = c->n_graphs > graphs ? c->n_graphs : graphs;
            }
            fprintf(f, " %d |\n", graphs);
        }
    fputc('\n', f);
}

/* Change relative to the baseline in %: higher-is-better metrics (b - base) / base, the time
 * (base - b) / base (a faster embedding improves on the baseline), as the paper's Table 3. */
static double cli_tables_rel(double v, double base, int time)
{
    if (isnan(v) || isnan(base) || base == 0)
        return NAN;
    return (time ? base - v : v - base) / base * 100;
}

static int cli_tables_find(const store_embedding_table *t, const char *name)
{
    for (int e = 0; name && e < t->n_embeddings; e++)
        if (strcmp(t->embeddings[e], name) == 0)
            return e;
    return -1;
}

static void cli_tables_embedding_summary(FILE *f, const store_embedding_table *t, const int *cols,
                                         const papers_embedding_table *pt, int b)
{
    papers_embedding pb =
        b >= 0 ? papers_embedding_overall(pt, t->embeddings[b]) : (papers_embedding){NAN, NAN, NAN};
    fputs("### Summary over families and device counts, ours / paper\n\n"
          "| embedding | improvement (%) | vs baseline (%) | computation time (s) | vs baseline "
          "(%) | EC ratio | vs baseline (%) | runs |\n|---|--:|--:|--:|--:|--:|--:|--:|\n",
          f);
    for (int q = 0; q < t->n_embeddings; q++) {
        int e = cols[q];
        const store_embedding_cell *o = &t->overall[e];
        const store_embedding_cell *base = b >= 0 ? &t->overall[b] : NULL;
        papers_embedding p = papers_embedding_overall(pt, t->embeddings[e]);
        fprintf(f, "| %s |", t->embeddings[e]);
        cli_tables_pair(f, o->improvement_pct, p.improvement_pct, 3);
        cli_tables_pair(f,
                        base ? cli_tables_rel(o->improvement_pct, base->improvement_pct, 0) : NAN,
                        cli_tables_rel(p.improvement_pct, pb.improvement_pct, 0), 2);
        cli_tables_pair(f, o->wall_s, p.wall_s, 3);
        cli_tables_pair(f, base ? cli_tables_rel(o->wall_s, base->wall_s, 1) : NAN,
                        cli_tables_rel(p.wall_s, pb.wall_s, 1), 2);
        cli_tables_pair(f, o->ec, p.ec, 4);
        cli_tables_pair(f, base ? cli_tables_rel(o->ec, base->ec, 0) : NAN,
                        cli_tables_rel(p.ec, pb.ec, 0), 1);
        fprintf(f, " %d |\n", o->n_runs);
    }
    fprintf(f,
            "\nImprovement = (initial - best) / initial step time; computation time = the "
            "run's search wall time; EC ratio = improvement (as a fraction) per second of "
            "computation, averaged over runs (the paper's EC values have no stated unit; "
            "compare the vs-baseline columns); the summary averages the family x devices "
            "cells; baseline: %s.\n\n",
            b >= 0 ? t->embeddings[b] : "none");
}

static void cli_tables_csv_num(FILE *f, double v)
{
    if (!isnan(v))
        fprintf(f, "%.17g", v);
}

static void cli_tables_embeddings_csv(FILE *f, const store_embedding_table *t, const int *cols,
                                      const papers_embedding_table *pt, int b)
{
    fputs("family,devices,embedding,runs,graphs,improvement_pct,paper_improvement_pct,wall_s,"
          "paper_wall_s,ec_per_s,paper_ec,improvement_vs_baseline_pct,wall_vs_baseline_pct,"
          "ec_vs_baseline_pct\n",
          f);
    for (int i = 0; i <= t->n_datasets; i++)
        for (int j = 0; j < (i < t->n_datasets ? t->n_devices : 1); j++)
            for (int q = 0; q < t->n_embeddings; q++) {
                int e = cols[q];
                int all = i == t->n_datasets;
                const store_embedding_cell *c = all ? &t->overall[e] : cli_tables_cell(t, i, j, e);
                const store_embedding_cell *base = b < 0 ? NULL
                                                   : all ? &t->overall[b]
                                                         : cli_tables_cell(t, i, j, b);
                papers_embedding p = all ? papers_embedding_overall(pt, t->embeddings[e])
                                         : papers_embedding_cell(pt, t->datasets[i], t->devices[j],
                                                                 t->embeddings[e]);
                if (c->n_runs == 0)
                    continue;
                if (all)
                    fprintf(f, "all,,%s,%d,%d,", t->embeddings[e], c->n_runs, c->n_graphs);
                else
                    fprintf(f, "%s,%d,%s,%d,%d,", t->datasets[i], t->devices[j], t->embeddings[e],
                            c->n_runs, c->n_graphs);
                double v[] = {c->improvement_pct,
                              p.improvement_pct,
                              c->wall_s,
                              p.wall_s,
                              c->ec,
                              p.ec,
                              base ? cli_tables_rel(c->improvement_pct, base->improvement_pct, 0)
                                   : NAN,
                              base ? cli_tables_rel(c->wall_s, base->wall_s, 1) : NAN,
                              base ? cli_tables_rel(c->ec, base->ec, 0) : NAN};
                for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
                    cli_tables_csv_num(f, v[k]);
                    fputc(k + 1 < sizeof v / sizeof *v ? ',' : '\n', f);
                }
            }
}

void cli_tables_embeddings(FILE *f, const store_embedding_table *t,
                           const papers_embedding_table *pt, const char *baseline, int csv)
{
    int b = cli_tables_find(t, baseline), cols[256];
    if (t->n_embeddings > (int)(sizeof cols / sizeof *cols))
        return;
    cli_tables_columns(t->embeddings, t->n_embeddings, pt ? pt->embeddings : NULL,
                       pt ? pt->n_embeddings : 0, cols);
    if (csv) {
        cli_tables_embeddings_csv(f, t, cols, pt, b);
        return;
    }
    cli_tables_embedding_metric(f, t, cols, pt, 0);
    cli_tables_embedding_metric(f, t, cols, pt, 1);
    cli_tables_embedding_summary(f, t, cols, pt, b);
}
