/* cli_tables.c — the papers' tables as markdown or CSV, our figures beside the published ones. */
#include "cli_tables.h"

#include "report/papers.h"

#include <math.h>
#include <stdlib.h>
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

/* ---------------------------------------------------------------- HeterPS */

/* A published value, range or bound as text ("-" for none). */
static void cli_tables_range(FILE *f, papers_range r, const char *unit)
{
    if (isnan(r.hi))
        fputs("-", f);
    else if (isnan(r.lo))
        fprintf(f, "<= %g%s", r.hi, unit);
    else if (r.lo == r.hi)
        fprintf(f, "%g%s", r.hi, unit);
    else
        fprintf(f, "%g-%g%s", r.lo, r.hi, unit);
}

/* Methods in the paper's order, then the others (cols[q]: the placer shown q-th). */
static void cli_tables_heterps_methods(const store_heterps_table *t,
                                       const papers_heterps_tables *pt, int *cols)
{
    for (int q = 0; q < t->n_placers; q++)
        cols[q] = papers_heterps_display_at(pt, (const char *const *)t->placers, t->n_placers, q);
}

/* Non-zero when the placer shown q-th has runs with T j on some model. */
static int cli_tables_heterps_has_runs(const store_heterps_table *t, const int *cols, int q, int j)
{
    for (int m = 0; m < t->n_models; m++)
        if (t->cells[(m * t->n_devices + j) * t->n_placers + cols[q]].n_runs > 0)
            return 1;
    return 0;
}

/* What a cell says when it has no mean to show: no runs, all failed, no verdict stored. */
static int cli_tables_heterps_missing(FILE *f, const store_heterps_cell *c, int need_verdict)
{
    if (c->n_runs == 0)
        fputs(" - |", f);
    else if (c->n_ok == 0)
        fprintf(f, " failed (%d run%s) |", c->n_runs, c->n_runs == 1 ? "" : "s");
    else if (need_verdict && c->n_verdict == 0)
        fputs(" not stored |", f);
    else
        return 0;
    return 1;
}

static void cli_tables_heterps_header(FILE *f, const store_heterps_table *t, const char *paper)
{
    fputs("| method |", f);
    for (int m = 0; m < t->n_models; m++)
        fprintf(f, " %s |", t->models[m]);
    fprintf(f, " paper (%s) |\n|---|", paper);
    for (int m = 0; m <= t->n_models; m++)
        fputs("---|", f);
    fputc('\n', f);
}

/* "9.699 (+2.8 %) [9.43-10.23]": mean cost, gap over the reference, spread over the runs. */
static void cli_tables_heterps_cost(FILE *f, const store_heterps_cell *c,
                                    const store_heterps_cell *ref)
{
    if (cli_tables_heterps_missing(f, c, 1))
        return;
    fprintf(f, " %.4g", c->cost);
    if (ref && ref->n_verdict > 0 && ref->cost > 0)
        fprintf(f, " (%+.1f %%)", (c->cost - ref->cost) / ref->cost * 100);
    if (c->cost_max > c->cost_min)
        fprintf(f, " [%.4g-%.4g]", c->cost_min, c->cost_max);
    if (c->n_ok < c->n_runs)
        fprintf(f, " (%d of %d runs failed)", c->n_runs - c->n_ok, c->n_runs);
    fputs(" |", f);
}

static void cli_tables_heterps_cost_table(FILE *f, const store_heterps_table *t,
                                          const papers_heterps_tables *pt, const int *cols, int j)
{
    int types = t->devices[j], cls = papers_heterps_class(types);
    const char *ref_name = pt ? pt->reference : NULL;
    fprintf(f,
            "\n### Monetary cost (USD) per model and method, T = %d (mean over the ok runs, gap "
            "over %s, [spread])\n\n",
            types, ref_name ? ref_name : "-");
    cli_tables_heterps_header(
        f, t, types == 2 ? "Figs. 8-10: largest gap, 4 models" : "Figs. 5-7: gap, MATCHNET");
    for (int q = 0; q < t->n_placers; q++) {
        if (!cli_tables_heterps_has_runs(t, cols, q, j))
            continue;
        const char *placer = t->placers[cols[q]];
        fprintf(f, "| %s |", placer);
        for (int m = 0; m < t->n_models; m++)
            cli_tables_heterps_cost(f, &t->cells[(m * t->n_devices + j) * t->n_placers + cols[q]],
                                    ref_name ? store_heterps_at(t, t->models[m], types, ref_name)
                                             : NULL);
        const papers_heterps_method *pm = papers_heterps_find(pt, placer);
        fputc(' ', f);
        if (!pm)
            fputs("-", f);
        else if (types == 2)
            cli_tables_range(f, pm->gap_pct, " %");
        else
            cli_tables_range(f, cls < 0 ? (papers_range){NAN, NAN} : pm->gap_types_pct[cls], " %");
        fputs(" |\n", f);
    }
}

static void cli_tables_heterps_throughput(FILE *f, const store_heterps_table *t,
                                          const papers_heterps_tables *pt, const int *cols, int j)
{
    fprintf(f,
            "\n### Throughput (examples/s) per model and method, T = %d (mean; feasible plans of "
            "the ok runs)\n\n",
            t->devices[j]);
    cli_tables_heterps_header(f, t, t->devices[j] == 2 ? "Fig. 10" : "Fig. 7");
    for (int q = 0; q < t->n_placers; q++) {
        if (!cli_tables_heterps_has_runs(t, cols, q, j))
            continue;
        const char *placer = t->placers[cols[q]];
        fprintf(f, "| %s |", placer);
        for (int m = 0; m < t->n_models; m++) {
            const store_heterps_cell *c =
                &t->cells[(m * t->n_devices + j) * t->n_placers + cols[q]];
            if (!cli_tables_heterps_missing(f, c, 1))
                fprintf(f, " %.4g (%d/%d feasible) |", c->throughput, c->n_feasible, c->n_ok);
        }
        int below = pt && t->devices[j] == 2 && strcmp(placer, pt->below_tl_placer) == 0;
        fprintf(f, " %s%s |\n", below ? "below TL on " : "meets TL",
                below ? pt->below_tl_model : "");
    }
}

static void cli_tables_heterps_times(FILE *f, const store_heterps_table *t,
                                     const papers_heterps_tables *pt, const int *cols, int j)
{
    int cls = papers_heterps_time_class(t->devices[j]);
    fprintf(f, "\n### Scheduling time (s) per method and model, T = %d (mean over the ok runs)\n\n",
            t->devices[j]);
    cli_tables_heterps_header(f, t, "Table 3");
    for (int q = 0; q < t->n_placers; q++) {
        if (!cli_tables_heterps_has_runs(t, cols, q, j))
            continue;
        const char *placer = t->placers[cols[q]];
        fprintf(f, "| %s |", placer);
        for (int m = 0; m < t->n_models; m++) {
            const store_heterps_cell *c =
                &t->cells[(m * t->n_devices + j) * t->n_placers + cols[q]];
            if (!cli_tables_heterps_missing(f, c, 0))
                fprintf(f, " %.3g |", c->wall_s);
        }
        const papers_heterps_method *pm = papers_heterps_find(pt, placer);
        fputc(' ', f);
        cli_tables_range(f, pm && cls >= 0 ? pm->sched_s[cls] : (papers_range){NAN, NAN}, " s");
        if (pm && cls >= 0 && pm->sched_model && !isnan(pm->sched_s[cls].hi))
            fprintf(f, " on %s", pm->sched_model);
        fputs(" |\n", f);
    }
}

/* " ours / paper |" of a Table 2 time; "est." marks the paper's estimates. */
static void cli_tables_heterps_time_pair(FILE *f, const store_heterps_cell *c, double paper,
                                         int estimated)
{
    if (c && c->n_runs > 0 && c->n_ok == 0) {
        cli_tables_heterps_missing(f, c, 0);
        return;
    }
    if (c && c->n_ok > 0)
        fprintf(f, " %.3g / ", c->wall_s);
    else
        fputs(" - / ", f);
    if (isnan(paper))
        fputs("- |", f);
    else
        fprintf(f, "%.6g%s |", paper, estimated ? " (est.)" : "");
}

/* Table 2: scheduling time of BF(2), BF(4) and RL on CTRDNN-L, and whether every RL run's plan
 * costs what BF(2)'s optimum does. */
static void cli_tables_heterps_table2(FILE *f, const store_heterps_table *t,
                                      const papers_heterps_tables *pt)
{
    int rows = 0;
    for (int i = 0; i < pt->n_bf; i++) {
        char model[32];
        snprintf(model, sizeof model, "ctrdnn-%d", pt->bf[i].layers);
        rows += store_heterps_at(t, model, 2, pt->bf_placer) != NULL;
    }
    if (!rows)
        return;
    fprintf(f, "\n### Table 2: scheduling time (s) on CTRDNN, ours / paper\n\n"
               "| layers | BF(2) | BF(4) | RL (T = 2) | RL cost = BF(2) cost? |\n"
               "|---|---|---|---|---|\n");
    for (int i = 0; i < pt->n_bf; i++) {
        const papers_heterps_bf *b = &pt->bf[i];
        char model[32];
        snprintf(model, sizeof model, "ctrdnn-%d", b->layers);
        const store_heterps_cell *bf2 = store_heterps_at(t, model, 2, pt->bf_placer);
        const store_heterps_cell *bf4 = store_heterps_at(t, model, 4, pt->bf_placer);
        const store_heterps_cell *rl = store_heterps_at(t, model, 2, pt->rl_placer);
        if (!bf2 || bf2->n_runs == 0)
            continue;
        fprintf(f, "| %d |", b->layers);
        cli_tables_heterps_time_pair(f, bf2, b->bf2_s, 0);
        cli_tables_heterps_time_pair(f, bf4, b->bf4_s, b->bf4_estimated);
        if (!rl || !cli_tables_heterps_missing(f, rl, 0)) {
            fprintf(f, " %.3g / ", rl ? rl->wall_s : NAN);
            cli_tables_range(f, pt->rl_s, "");
            fputs(" |", f);
        }
        if (!rl || rl->n_verdict == 0 || bf2->n_verdict == 0)
            fputs(" - |\n", f);
        else if (fabs(rl->cost_max - bf2->cost) <= 1e-9 * bf2->cost &&
                 fabs(rl->cost_min - bf2->cost) <= 1e-9 * bf2->cost)
            fprintf(f, " yes (%.4g; paper: yes) |\n", bf2->cost);
        else
            fprintf(f, " no: %.4g-%.4g vs %.4g (paper: yes) |\n", rl->cost_min, rl->cost_max,
                    bf2->cost);
    }
}

static void cli_tables_heterps_csv(FILE *f, const store_heterps_table *t,
                                   const papers_heterps_tables *pt, const int *cols)
{
    fputs("model,layers,types,method,runs,ok,verdicts,feasible,cost_usd,cost_min,cost_max,"
          "throughput,sched_s,paper_gap_pct_lo,paper_gap_pct_hi,paper_sched_s_lo,"
          "paper_sched_s_hi\n",
          f);
    for (int m = 0; m < t->n_models; m++)
        for (int j = 0; j < t->n_devices; j++)
            for (int q = 0; q < t->n_placers; q++) {
                const store_heterps_cell *c =
                    &t->cells[(m * t->n_devices + j) * t->n_placers + cols[q]];
                if (c->n_runs == 0)
                    continue;
                int types = t->devices[j], cls = papers_heterps_class(types);
                const papers_heterps_method *pm = papers_heterps_find(pt, t->placers[cols[q]]);
                papers_range none = {NAN, NAN};
                papers_range gap = !pm          ? none
                                   : types == 2 ? pm->gap_pct
                                   : cls >= 0   ? pm->gap_types_pct[cls]
                                                : none;
                int tcls = papers_heterps_time_class(types);
                papers_range sched = pm && tcls >= 0 ? pm->sched_s[tcls] : none;
                fprintf(f, "%s,%d,%d,%s,%d,%d,%d,%d,", t->models[m], t->layers[m], types,
                        t->placers[cols[q]], c->n_runs, c->n_ok, c->n_verdict, c->n_feasible);
                const double v[] = {c->cost, c->cost_min, c->cost_max, c->throughput, c->wall_s,
                                    gap.lo,  gap.hi,      sched.lo,    sched.hi};
                for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
                    if (k)
                        fputc(',', f);
                    cli_tables_csv_num(f, v[k]);
                }
                fputc('\n', f);
            }
}

/* The row of (model, tl, provision) in t, or NULL. */
static const store_heterps_fig4_row *cli_fig4_at(const store_heterps_fig4 *t, const char *model,
                                                 double tl, int provision)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->rows[i].model, model) == 0 && t->rows[i].tl_scale == tl &&
            t->rows[i].provision == provision)
            return &t->rows[i];
    return NULL;
}

/* A cost cell: the mean, the ratio to ours; "-" without runs, "failed" or "infeasible". */
static void cli_fig4_cell(FILE *f, const store_heterps_fig4_row *r, double ours, int csv)
{
    if (csv) {
        fputc(',', f);
        if (r && isfinite(r->cost))
            fprintf(f, "%.6g", r->cost);
        return;
    }
    if (!r)
        fputs(" - |", f);
    else if (!isfinite(r->cost))
        fprintf(f, " %s (%d run%s) |", r->n_ok ? "infeasible" : "failed", r->n_runs,
                r->n_runs == 1 ? "" : "s");
    else if (isfinite(ours) && ours > 0)
        fprintf(f, " %.2f (%.2fx, %+.1f %%) |", r->cost, r->cost / ours,
                100 * (r->cost - ours) / ours);
    else
        fprintf(f, " %.2f |", r->cost);
}

void cli_tables_heterps_fig4(FILE *f, const store_heterps_fig4 *t, const papers_heterps_tables *pt,
                             int csv)
{
    if (t->n == 0)
        return;
    if (csv)
        fputs("table,model,tl_scale,ours_usd,sta_ps_ratio_usd,sta_ratio_usd\n", f);
    else
        fputs("\n### Fig. 4: provisioning against StaPSRatio and StaRatio (cost USD, ratio and gap "
              "to ours; the scheduler plans under each rule)\n\n"
              "| model | TL x | ours (PROVISION) | StaPSRatio | StaRatio | ours < StaPSRatio < "
              "StaRatio |\n|---|--:|--:|--:|--:|---|\n",
              f);
    for (int i = 0; i < t->n; i++) {
        const store_heterps_fig4_row *r = &t->rows[i];
        if (i > 0 && strcmp(r->model, t->rows[i - 1].model) == 0 &&
            r->tl_scale == t->rows[i - 1].tl_scale)
            continue; /* one line per (model, TL) */
        const store_heterps_fig4_row *ours = cli_fig4_at(t, r->model, r->tl_scale, 0);
        const store_heterps_fig4_row *ps = cli_fig4_at(t, r->model, r->tl_scale, 2);
        const store_heterps_fig4_row *sta = cli_fig4_at(t, r->model, r->tl_scale, 1);
        if (!ps && !sta)
            continue; /* no static run at this limit: not part of Fig. 4 */
        double c0 = ours ? ours->cost : NAN;
        if (csv)
            fprintf(f, "heterps_fig4,%s,%g", r->model, r->tl_scale);
        else
            fprintf(f, "| %s | %g |", r->model, r->tl_scale);
        cli_fig4_cell(f, ours, NAN, csv);
        cli_fig4_cell(f, ps, c0, csv);
        cli_fig4_cell(f, sta, c0, csv);
        if (csv) {
            fputc('\n', f);
            continue;
        }
        int known = isfinite(c0) && ps && isfinite(ps->cost) && sta && isfinite(sta->cost);
        fprintf(f, " %s |\n", !known ? "-" : c0 < ps->cost && ps->cost < sta->cost ? "yes" : "no");
    }
    if (!csv && pt)
        fprintf(f,
                "\nThe paper gives no cost per limit, only the largest gaps: ours beats StaRatio "
                "by up to %.1f %% and StaPSRatio by up to %.1f %%, and StaPSRatio beats StaRatio "
                "by up to %.1f %%.\n",
                pt->fig4_sta_pct, pt->fig4_ps_pct, pt->fig4_ps_vs_sta_pct);
}

void cli_tables_heterps(FILE *f, const store_heterps_table *t, const papers_heterps_tables *pt,
                        int csv)
{
    int *cols = malloc((size_t)t->n_placers * sizeof *cols);
    if (!cols) {
        fputs("(out of memory)\n", f);
        return;
    }
    cli_tables_heterps_methods(t, pt, cols);
    if (csv) {
        cli_tables_heterps_csv(f, t, pt, cols);
    } else {
        for (int j = 0; j < t->n_devices; j++) {
            cli_tables_heterps_cost_table(f, t, pt, cols, j);
            cli_tables_heterps_throughput(f, t, pt, cols, j);
            cli_tables_heterps_times(f, t, pt, cols, j);
        }
        if (pt)
            cli_tables_heterps_table2(f, t, pt);
    }
    free(cols);
}
