/* cli_tables_tag.c — TAG's tables (Fig. 5's per-iteration times, Table 4's strategies, search
 * time per model, Table 7's playouts until DP-NCCL is beaten, Table 8's hold-out model) from the
 * runs of the topology simulator, beside the paper's figures. */
#include "cli_tables.h"

#include "report/papers.h"

#include <math.h>
#include <string.h>

/* The placers of the tables, in column order: the baselines, then TAG and its ablation. */
static const char *const cli_tag_placers[] = {"dp-nccl", "dp-nccl-p", "tag", "pure-mcts"};
enum { CLI_TAG_N_PLACERS = 4 };

/* The MCTS placer whose strategies a model's Table 4 row shows: tag when it has any, else
 * pure-mcts; NULL when neither does. */
static const store_tag_cell *cli_tag_mcts(const store_tag_table *t, const char *model,
                                          const char **name)
{
    for (int i = 2; i < CLI_TAG_N_PLACERS; i++) {
        const store_tag_cell *c = store_tag_at(t, model, cli_tag_placers[i]);
        if (c && c->n_strategies > 0) {
            *name = cli_tag_placers[i];
            return c;
        }
    }
    return NULL;
}

static const papers_tag_model *cli_tag_paper_model(const papers_tag_tables *pt, const char *m)
{
    for (int i = 0; pt && i < pt->n_models; i++)
        if (strcmp(pt->models[i].model, m) == 0)
            return &pt->models[i];
    return NULL;
}

/* Models in the paper's row order, then the others; returns the one shown at `place`. */
static const char *cli_tag_model_at(const store_tag_table *t, const papers_tag_tables *pt,
                                    int place)
{
    const char *paper[32];
    int n_paper = 0;
    for (int i = 0; pt && i < pt->n_models && n_paper < 32; i++)
        paper[n_paper++] = pt->models[i].model;
    return t->models[papers_display_at((const char *const *)t->models, t->n_models, paper, n_paper,
                                       place)];
}

/* A step time in ms, "OOM (ms)" when no ok run's strategy fits in memory, "failed" when every
 * run failed, "-" without runs. */
static void cli_tag_ms(FILE *f, const store_tag_cell *c)
{
    if (!c || c->n_runs == 0)
        fprintf(f, " - |");
    else if (c->n_ok == 0)
        fprintf(f, " failed (%d) |", c->n_runs);
    else if (c->n_feasible == 0)
        fprintf(f, " OOM (%.2f) |", c->best_us / 1000);
    else
        fprintf(f, " %.2f |", c->best_us / 1000);
}

/* Speed-up of tag over base in %, when both have feasible results. */
static void cli_tag_speedup(FILE *f, const store_tag_cell *base, const store_tag_cell *tag)
{
    if (base && tag && base->n_feasible > 0 && tag->n_feasible > 0)
        fprintf(f, " %+.1f |", (base->best_us / tag->best_us - 1) * 100);
    else
        fprintf(f, " - |");
}

static void cli_tag_fig5(FILE *f, const store_tag_table *t, const papers_tag_tables *pt)
{
    fprintf(f,
            "\n### Per-iteration time (ms, mean over the ok runs; OOM: the strategy does not fit "
            "in memory; TAG's Fig. 5)\n\n");
    fprintf(f, "| model | DP-NCCL | DP-NCCL-P | TAG | pure MCTS | TAG vs DP-NCCL (%%) | TAG vs "
               "DP-NCCL-P (%%) | pure MCTS vs DP-NCCL (%%) |\n");
    fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < t->n_models; i++) {
        const char *m = cli_tag_model_at(t, pt, i);
        const store_tag_cell *c[CLI_TAG_N_PLACERS];
        for (int p = 0; p < CLI_TAG_N_PLACERS; p++)
            c[p] = store_tag_at(t, m, cli_tag_placers[p]);
        fprintf(f, "| %s |", m);
        for (int p = 0; p < CLI_TAG_N_PLACERS; p++)
            cli_tag_ms(f, c[p]);
        cli_tag_speedup(f, c[0], c[2]);
        cli_tag_speedup(f, c[1], c[2]);
        cli_tag_speedup(f, c[0], c[3]);
        fprintf(f, "\n");
    }
    if (pt)
        fprintf(f,
                "\nPaper (testbed, TensorFlow): TAG %.0f-%.0f %% faster than DP-NCCL and "
                "%.0f-%.0f %% faster than DP-NCCL-P over the six models; %s.\n",
                pt->speedup_dp_pct.lo, pt->speedup_dp_pct.hi, pt->speedup_dpp_pct.lo,
                pt->speedup_dpp_pct.hi, pt->oom_note);
}

static void cli_tag_table4(FILE *f, const store_tag_table *t, const papers_tag_tables *pt)
{
    fprintf(f, "\n### Strategies (TAG's Table 4): GPUs per type an op is replicated onto, "
               "gradients by PS / AllReduce — ours / paper\n\n| model | placer |");
    for (int k = 0; k < t->n_types; k++)
        fprintf(f, " %s |", t->types[k]);
    fprintf(f, " PS (%%) | AR (%%) |\n|---|---|");
    for (int k = 0; k < t->n_types + 2; k++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int i = 0; i < t->n_models; i++) {
        const char *m = cli_tag_model_at(t, pt, i), *name = NULL;
        const store_tag_cell *c = cli_tag_mcts(t, m, &name);
        const papers_tag_model *pm = cli_tag_paper_model(pt, m);
        if (!c)
            continue;
        fprintf(f, "| %s | %s |", m, name);
        for (int k = 0; k < t->n_types; k++) {
            int col = -1;
            for (int j = 0; pm && j < 3; j++)
                if (strcmp(pt->types[j], t->types[k]) == 0)
                    col = j;
            fprintf(f, " %.1f", c->replication[k]);
            if (col >= 0)
                fprintf(f, " / %.1f", pm->replication[col]);
            fprintf(f, " |");
        }
        fprintf(f, " %.1f", c->ps_pct);
        if (pm)
            fprintf(f, " / %.1f", pm->ps_pct);
        fprintf(f, " | %.1f", c->ar_pct);
        if (pm)
            fprintf(f, " / %.1f", pm->ar_pct);
        fprintf(f, " |\n");
    }
}

static void cli_tag_search(FILE *f, const store_tag_table *t, const papers_tag_tables *pt)
{
    fprintf(f, "\n### Strategy search (TAG's Fig. 8 scale): wall time and simulator calls\n\n");
    fprintf(f, "| model | placer | runs ok | search (s) | simulator calls | best (ms) |\n");
    fprintf(f, "|---|---|---:|---:|---:|---:|\n");
    for (int i = 0; i < t->n_models; i++) {
        const char *m = cli_tag_model_at(t, pt, i);
        for (int p = 2; p < CLI_TAG_N_PLACERS; p++) {
            const store_tag_cell *c = store_tag_at(t, m, cli_tag_placers[p]);
            if (!c || c->n_runs == 0)
                continue;
            fprintf(f, "| %s | %s | %d/%d |", m, cli_tag_placers[p], c->n_ok, c->n_runs);
            if (c->n_ok > 0)
                fprintf(f, " %.2f | %.0f | %.2f |\n", c->wall_s, c->sim_calls, c->best_us / 1000);
            else
                fprintf(f, " - | - | - |\n");
        }
    }
}

/* A paper figure, "-" when the paper has none. */
static void cli_tag_paper_value(FILE *f, double v, const char *fmt)
{
    if (isnan(v))
        fprintf(f, " - |");
    else
        fprintf(f, fmt, v);
}

/* Whether any model has runs of placer (with curves when `curves`). */
static int cli_tag_has(const store_tag_table *t, const char *placer, int curves)
{
    for (int i = 0; i < t->n_models; i++) {
        const store_tag_cell *c = store_tag_at(t, t->models[i], placer);
        if (c && (curves ? c->n_curves : c->n_runs) > 0)
            return 1;
    }
    return 0;
}

/* TAG's Table 7 from the MCTS runs' curves: playouts until the search first beats DP-NCCL. */
static void cli_tag_table7(FILE *f, const store_tag_table *t, const papers_tag_tables *pt)
{
    if (!cli_tag_has(t, cli_tag_placers[2], 1) && !cli_tag_has(t, cli_tag_placers[3], 1))
        return;
    fprintf(f, "\n### Playouts until the search first beats DP-NCCL (TAG's Table 7: 0-based "
               "index of the first playout with reward > 0)\n\n");
    fprintf(f, "| model | placer | runs that beat it | playouts (mean over those) | simulator "
               "calls by then | playouts, unbeaten runs counted at their budget | paper |\n");
    fprintf(f, "|---|---|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < t->n_models; i++) {
        const char *m = cli_tag_model_at(t, pt, i);
        const papers_tag_model *pm = cli_tag_paper_model(pt, m);
        for (int p = 2; p < CLI_TAG_N_PLACERS; p++) {
            const store_tag_cell *c = store_tag_at(t, m, cli_tag_placers[p]);
            if (!c || c->n_curves == 0)
                continue;
            fprintf(f, "| %s | %s | %d/%d |", m, cli_tag_placers[p], c->n_beat, c->n_curves);
            if (c->n_beat > 0)
                fprintf(f, " %.1f | %.1f |", c->beat_playout, c->beat_calls);
            else
                fprintf(f, " - | - |");
            fprintf(f, " %.1f%s |", c->beat_playout_censored, c->n_beat < c->n_curves ? "+" : "");
            cli_tag_paper_value(f, !pm ? NAN : p == 2 ? pm->t7_tag : pm->t7_pure, " %.1f |");
            fprintf(f, "\n");
        }
    }
    fprintf(f, "\nPaper: mean over 100 random unseen 8-GPU topologies (pure MCTS up to 2000 "
               "playouts, TAG stopped at the first reward > 0, capped at 200).  A '+' marks a "
               "lower bound: some runs never beat DP-NCCL within their playouts.\n");
}

/* TAG's Table 8: speed-up over DP-NCCL of TAG (trained with all models) and TAG- (its parameter
 * file trained without the model: the "tag-holdout" runs). */
static void cli_tag_table8(FILE *f, const store_tag_table *t, const papers_tag_tables *pt)
{
    if (!cli_tag_has(t, "tag-holdout", 0))
        return;
    fprintf(f, "\n### Hold-out model (TAG's Table 8): speed-up over DP-NCCL (%%), TAG trained with "
               "all models, TAG- without this one — ours / paper (testbed)\n\n");
    fprintf(f, "| model | DP-NCCL (ms) | TAG (ms) | TAG- (ms) | TAG | TAG- | paper TAG | paper "
               "TAG- |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < t->n_models; i++) {
        const char *m = cli_tag_model_at(t, pt, i);
        const store_tag_cell *dp = store_tag_at(t, m, "dp-nccl");
        const store_tag_cell *all = store_tag_at(t, m, "tag");
        const store_tag_cell *out = store_tag_at(t, m, "tag-holdout");
        const papers_tag_model *pm = cli_tag_paper_model(pt, m);
        if (!out || out->n_runs == 0)
            continue;
        fprintf(f, "| %s |", m);
        cli_tag_ms(f, dp);
        cli_tag_ms(f, all);
        cli_tag_ms(f, out);
        cli_tag_speedup(f, dp, all);
        cli_tag_speedup(f, dp, out);
        cli_tag_paper_value(f, pm ? pm->t8_testbed_tag : NAN, " %+.1f |");
        cli_tag_paper_value(f, pm ? pm->t8_testbed_holdout : NAN, " %+.1f |");
        fprintf(f, "\n");
    }
}

static void cli_tag_csv(FILE *f, const store_tag_table *t)
{
    fprintf(f, "model,placer,runs,ok,feasible,initial_us,best_us,search_wall_s,sim_calls,"
               "strategies,ps_pct,ar_pct");
    for (int k = 0; k < t->n_types; k++)
        fprintf(f, ",replication_%s", t->types[k]);
    fprintf(f, ",curves,beat,beat_playout,beat_calls,beat_playout_censored\n");
    for (int m = 0; m < t->n_models; m++)
        for (int p = 0; p < t->n_placers; p++) {
            const store_tag_cell *c = &t->cells[m * t->n_placers + p];
            if (c->n_runs == 0)
                continue;
            fprintf(f, "%s,%s,%d,%d,%d,%.17g,%.17g,%.17g,%.17g,%d,%.17g,%.17g", t->models[m],
                    t->placers[p], c->n_runs, c->n_ok, c->n_feasible, c->initial_us, c->best_us,
                    c->wall_s, c->sim_calls, c->n_strategies, c->ps_pct, c->ar_pct);
            for (int k = 0; k < t->n_types; k++)
                fprintf(f, ",%.17g", c->n_strategies > 0 ? c->replication[k] : NAN);
            fprintf(f, ",%d,%d,%.17g,%.17g,%.17g\n", c->n_curves, c->n_beat, c->beat_playout,
                    c->beat_calls, c->beat_playout_censored);
        }
}

void cli_tables_tag(FILE *f, const store_tag_table *t, const papers_tag_tables *pt, int csv)
{
    if (csv) {
        cli_tag_csv(f, t);
        return;
    }
    cli_tag_fig5(f, t, pt);
    cli_tag_table4(f, t, pt);
    cli_tag_search(f, t, pt);
    cli_tag_table7(f, t, pt);
    cli_tag_table8(f, t, pt);
}
