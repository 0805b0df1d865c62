/* cli_gdp.c — GDP's Table 1 beside the paper's (specs/gdp.md §12). */
#include "cli_gdp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The columns of Table 1, in the paper's order. */
enum { GDP_ONE, GDP_HP, GDP_METIS, GDP_HDP, GDP_METHODS };
static const char *const cli_gdp_labels[GDP_METHODS] = {"GDP-one", "HP", "METIS", "HDP"};

static const char *cli_gdp_placer(const papers_gdp_tables *pt, int method)
{
    static const char *const fallback[GDP_METHODS] = {"gdp", "expert", "metis", "hdp"};
    if (!pt)
        return fallback[method];
    const char *names[GDP_METHODS] = {pt->gdp_placer, pt->hp_placer, pt->metis_placer,
                                      pt->hdp_placer};
    return names[method];
}

/* One (model, GPUs) row: our cells per method (NULL: no runs) and the paper's row (NULL). */
typedef struct cli_gdp_line {
    const char *model;
    int gpus;
    const store_gdp_row *cell[GDP_METHODS];
    const papers_gdp_row *paper;
} cli_gdp_line;

/* Mean run time in s of a cell whose runs fit, else NaN. */
static double cli_gdp_time(const store_gdp_row *r)
{
    return r && r->n_feasible > 0 ? r->best_us / 1e6 : NAN;
}

static void cli_gdp_cell(FILE *f, const store_gdp_row *r)
{
    if (!r)
        fputs(" - |", f);
    else if (r->n_ok == 0)
        fprintf(f, " failed (%d) |", r->n_runs);
    else if (r->n_feasible == 0)
        fputs(" OOM |", f);
    else {
        fprintf(f, " %.3f", r->best_us / 1e6);
        if (r->n_feasible < r->n_ok)
            fprintf(f, " (%d of %d OOM)", r->n_ok - r->n_feasible, r->n_ok);
        if (r->n_ok < r->n_runs)
            fprintf(f, " (%d failed)", r->n_runs - r->n_ok);
        fputs(" |", f);
    }
}

static void cli_gdp_pct(FILE *f, double x)
{
    if (isnan(x))
        fputs(" - |", f);
    else
        fprintf(f, " %+.1f %% |", x);
}

static void cli_gdp_paper_time(FILE *f, double t)
{
    if (isnan(t))
        fputs(" OOM", f);
    else
        fprintf(f, " %.3f", t);
}

/* Speed-up of GDP-one over method m in %: T_m / T_GDP - 1. */
static double cli_gdp_over(const cli_gdp_line *l, int m)
{
    double g = cli_gdp_time(l->cell[GDP_ONE]), x = cli_gdp_time(l->cell[m]);
    return g > 0 && x > 0 ? (x / g - 1) * 100 : NAN;
}

/* Search speed-up over HDP: HDP's time to come within 1 % of its final best over GDP-one's. */
static double cli_gdp_search(const cli_gdp_line *l)
{
    const store_gdp_row *g = l->cell[GDP_ONE], *h = l->cell[GDP_HDP];
    if (!g || !h || !(g->reach_s > 0) || !(h->reach_s > 0) || g->n_feasible == 0 ||
        h->n_feasible == 0)
        return NAN;
    return h->reach_s / g->reach_s;
}

static int cli_gdp_line_find(const cli_gdp_line *lines, int n, const char *model, int gpus)
{
    for (int i = 0; i < n; i++)
        if (lines[i].gpus == gpus && strcmp(lines[i].model, model) == 0)
            return i;
    return -1;
}

/* The paper's pairs first (those with runs), then the other (model, GPUs) of the runs. */
static int cli_gdp_lines(const store_gdp_table *t, const papers_gdp_tables *pt, cli_gdp_line *lines)
{
    int n = 0;
    for (int i = 0; pt && i < pt->n_rows; i++) {
        const papers_gdp_row *p = &pt->rows[i];
        cli_gdp_line l = {p->model, p->gpus, {NULL}, p};
        int any = 0;
        for (int m = 0; m < GDP_METHODS; m++)
            any |=
                (l.cell[m] = store_gdp_at(t, p->model, p->gpus + 1, cli_gdp_placer(pt, m))) != NULL;
        if (any)
            lines[n++] = l;
    }
    for (int r = 0; r < t->n_rows; r++) {
        const store_gdp_row *row = &t->rows[r];
        int gpus = row->devices - 1;
        if (cli_gdp_line_find(lines, n, row->model, gpus) >= 0)
            continue;
        cli_gdp_line l = {row->model, gpus, {NULL}, NULL};
        for (int m = 0; m < GDP_METHODS; m++)
            l.cell[m] = store_gdp_at(t, row->model, row->devices, cli_gdp_placer(pt, m));
        lines[n++] = l;
    }
    return n;
}

static void cli_gdp_csv(FILE *f, const cli_gdp_line *lines, int n, const store_gdp_table *t)
{
    fputs("model,gpus,method,placer,runs,ok,feasible,run_time_s,search_wall_s,reach_1pct_s,"
          "reach_1pct_sim_calls,paper_run_time_s\n",
          f);
    for (int i = 0; i < n; i++)
        for (int m = 0; m < GDP_METHODS; m++) {
            const store_gdp_row *r = lines[i].cell[m];
            if (!r)
                continue;
            const papers_gdp_row *p = lines[i].paper;
            double paper = !p               ? NAN
                           : m == GDP_ONE   ? p->gdp_one
                           : m == GDP_HP    ? p->hp
                           : m == GDP_METIS ? p->metis
                                            : p->hdp;
            fprintf(f, "%s,%d,%s,%s,%d,%d,%d,%.17g,%.17g,%.17g,%.17g,%.17g\n", lines[i].model,
                    lines[i].gpus, cli_gdp_labels[m], r->placer, r->n_runs, r->n_ok, r->n_feasible,
                    cli_gdp_time(r), r->wall_s, r->reach_s, r->reach_calls, paper);
        }
    (void)t;
}

/* Geometric mean of T_m / T_GDP - 1 over the lines with both, in %; *count receives how many. */
static double cli_gdp_geomean(const cli_gdp_line *lines, int n, int m, int *count)
{
    double sum = 0;
    *count = 0;
    for (int i = 0; i < n; i++) {
        double x = m < 0 ? cli_gdp_search(&lines[i]) : cli_gdp_over(&lines[i], m) / 100 + 1;
        if (x > 0) {
            sum += log(x);
            (*count)++;
        }
    }
    if (*count == 0)
        return NAN;
    double g = exp(sum / *count);
    return m < 0 ? g : (g - 1) * 100;
}

/* The paper's GEOMEAN rows: printed, from its run times, and of its printed percentages. */
static void cli_gdp_paper_geomeans(FILE *f, const papers_gdp_tables *pt)
{
    double hp = 0, hdp = 0, php = 0, phdp = 0, search = 0;
    for (int i = 0; i < pt->n_rows; i++) {
        const papers_gdp_row *p = &pt->rows[i];
        hp += log(p->hp / p->gdp_one);
        hdp += log(p->hdp / p->gdp_one);
        php += log(1 + p->over_hp_pct / 100);
        phdp += log(1 + p->over_hdp_pct / 100);
        search += log(p->search_speedup);
    }
    int n = pt->n_rows;
    fprintf(f,
            "\nPaper GEOMEAN over its %d rows: printed %+.1f %% over HP, %+.1f %% over HDP, "
            "search %.3gx; from its run times %+.1f %% / %+.1f %%; of its printed percentages "
            "%+.1f %% / %+.1f %%; of its search speed-ups %.3gx.\n",
            n, pt->geomean_hp_pct, pt->geomean_hdp_pct, pt->geomean_search, (exp(hp / n) - 1) * 100,
            (exp(hdp / n) - 1) * 100, (exp(php / n) - 1) * 100, (exp(phdp / n) - 1) * 100,
            exp(search / n));
}

/* The paper's claims (§12) counted on our lines. */
static void cli_gdp_claims(FILE *f, const cli_gdp_line *lines, int n)
{
    int vs_hdp = 0, le_hdp = 0, vs_hp = 0, le_hp = 0, metis = 0, oom = 0, calib = 0, within = 0;
    for (int i = 0; i < n; i++) {
        const cli_gdp_line *l = &lines[i];
        double g = cli_gdp_time(l->cell[GDP_ONE]);
        double hp = cli_gdp_time(l->cell[GDP_HP]), hdp = cli_gdp_time(l->cell[GDP_HDP]);
        if (g > 0 && hdp > 0) {
            vs_hdp++;
            le_hdp += g <= hdp;
        }
        if (g > 0 && hp > 0) {
            vs_hp++;
            le_hp += g <= hp;
        }
        const store_gdp_row *mt = l->cell[GDP_METIS];
        if (mt && mt->n_ok > 0) {
            metis++;
            oom += mt->n_feasible == 0;
        }
        if (l->paper && hp > 0) {
            calib++;
            within += hp <= 2 * l->paper->hp && hp >= l->paper->hp / 2;
        }
    }
    fputs("\nClaims (paper, spec §12) on these rows:\n", f);
    fprintf(f, "- GDP-one <= HDP: %d of %d rows (paper: 12 of 12)\n", le_hdp, vs_hdp);
    fprintf(f, "- GDP-one <= HP: %d of %d rows (paper: 11 of 12, not 8-layer GNMT)\n", le_hp,
            vs_hp);
    fprintf(f, "- METIS OOM: %d of %d rows (paper: 9 of 12)\n", oom, metis);
    fprintf(f, "- calibration (spec §11.3): our HP within 2x of the paper's HP on %d of %d rows\n",
            within, calib);
}

void cli_gdp_table1(FILE *f, const store_gdp_table *t, const papers_gdp_tables *pt, int csv)
{
    cli_gdp_line *lines =
        calloc((size_t)t->n_rows + (pt ? (size_t)pt->n_rows : 0) + 1, sizeof *lines);
    if (!lines) {
        fputs("out of memory\n", f);
        return;
    }
    int n = cli_gdp_lines(t, pt, lines);
    if (csv) {
        cli_gdp_csv(f, lines, n, t);
        free(lines);
        return;
    }
    fputs("Run time per training step in s (mean over the runs whose placement fits; OOM: none "
          "fits); speed-up = T_method / T_GDP-one - 1; search = HDP's time to come within 1 % of "
          "its final step time over GDP-one's (search wall time on this machine).\n\n",
          f);
    fputs("| model | GPUs | GDP-one | HP | METIS | HDP | over HP | over HDP | search vs HDP | "
          "paper GDP-one / HP / METIS / HDP | paper over HP / HDP, search |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|\n",
          f);
    for (int i = 0; i < n; i++) {
        const cli_gdp_line *l = &lines[i];
        fprintf(f, "| %s | %d |", l->model, l->gpus);
        for (int m = 0; m < GDP_METHODS; m++)
            cli_gdp_cell(f, l->cell[m]);
        cli_gdp_pct(f, cli_gdp_over(l, GDP_HP));
        cli_gdp_pct(f, cli_gdp_over(l, GDP_HDP));
        double s = cli_gdp_search(l);
        if (isnan(s))
            fputs(" - |", f);
        else
            fprintf(f, " %.3gx |", s);
        if (l->paper) {
            const papers_gdp_row *p = l->paper;
            cli_gdp_paper_time(f, p->gdp_one);
            fputs(" /", f);
            cli_gdp_paper_time(f, p->hp);
            fputs(" /", f);
            cli_gdp_paper_time(f, p->metis);
            fputs(" /", f);
            cli_gdp_paper_time(f, p->hdp);
            fprintf(f, " | %+.1f %% / %+.1f %%, %.3gx |\n", p->over_hp_pct, p->over_hdp_pct,
                    p->search_speedup);
        } else
            fputs(" - | - |\n", f);
    }
    int c_hp, c_hdp, c_s;
    double g_hp = cli_gdp_geomean(lines, n, GDP_HP, &c_hp);
    double g_hdp = cli_gdp_geomean(lines, n, GDP_HDP, &c_hdp);
    double g_s = cli_gdp_geomean(lines, n, -1, &c_s);
    fputs("| GEOMEAN | | | | | |", f);
    cli_gdp_pct(f, g_hp);
    cli_gdp_pct(f, g_hdp);
    if (isnan(g_s))
        fputs(" - |", f);
    else
        fprintf(f, " %.3gx |", g_s);
    if (pt)
        fprintf(f, " | %+.1f %% / %+.1f %%, %.3gx |\n", pt->geomean_hp_pct, pt->geomean_hdp_pct,
                pt->geomean_search);
    else
        fputs(" | |\n", f);
    fprintf(f,
            "\nOur GEOMEAN rows are over %d (HP), %d (HDP) and %d (search) rows with both "
            "runs.\n",
            c_hp, c_hdp, c_s);
    int have_gdp = 0;
    for (int i = 0; i < n; i++)
        have_gdp |= lines[i].cell[GDP_ONE] != NULL;
    if (!have_gdp)
        fprintf(f,
                "\nNo run of placer '%s' (GDP-one) in this file: its column and the "
                "speed-ups over it are empty.\n",
                cli_gdp_placer(pt, GDP_ONE));
    if (pt) {
        cli_gdp_paper_geomeans(f, pt);
        fputs("Paper rows without runs here:", f);
        int missing = 0;
        for (int i = 0; i < pt->n_rows; i++)
            if (cli_gdp_line_find(lines, n, pt->rows[i].model, pt->rows[i].gpus) < 0)
                fprintf(f, "%s %s (%d GPUs)", missing++ ? "," : "", pt->rows[i].label,
                        pt->rows[i].gpus);
        fputs(missing ? ".\n" : " none.\n", f);
    }
    cli_gdp_claims(f, lines, n);
    free(lines);
}

int cli_gdp_plot_data(FILE *f, const store_gdp_table *t, const papers_gdp_tables *pt,
                      const char *db)
{
    cli_gdp_line *lines =
        calloc((size_t)t->n_rows + (pt ? (size_t)pt->n_rows : 0) + 1, sizeof *lines);
    if (!lines)
        return 0;
    int n = cli_gdp_lines(t, pt, lines), with_data = 0;
    fprintf(f,
            "# placebench GDP Table 1 data from %s: mean run time (s) over the runs that fit\n"
            "# x\tlabel\tgdp\thp\tmetis\thdp\tpaper_gdp\tpaper_hp\tpaper_metis\tpaper_hdp\n",
            db);
    for (int i = 0; i < n; i++) {
        const cli_gdp_line *l = &lines[i];
        const papers_gdp_row *p = l->paper;
        double paper[GDP_METHODS] = {p ? p->gdp_one : NAN, p ? p->hp : NAN, p ? p->metis : NAN,
                                     p ? p->hdp : NAN};
        int any = 0;
        fprintf(f, "%d\t%s, %d GPUs", i, l->model, l->gpus);
        for (int m = 0; m < GDP_METHODS; m++) {
            double x = cli_gdp_time(l->cell[m]);
            any |= !isnan(x);
            fprintf(f, isnan(x) ? "\tNaN" : "\t%.17g", x);
        }
        for (int m = 0; m < GDP_METHODS; m++)
            fprintf(f, isnan(paper[m]) ? "\tNaN" : "\t%.17g", paper[m]);
        fputc('\n', f);
        with_data += any;
    }
    free(lines);
    return with_data;
}
