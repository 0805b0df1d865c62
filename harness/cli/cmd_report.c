/* cmd_report.c — placebench report: the summary table and the papers' tables of a results file. */
#include "cli.h"
#include "cli_gdp.h"
#include "cli_output.h"
#include "cli_tables.h"

#include "report/papers.h"
#include "store/store.h"
#include "store/store_tables.h"

#include <stdlib.h>
#include <string.h>

static const char cmd_report_usage[] =
    "placebench report DB [--tables LIST] [--csv] [--out FILE] [--placer NAME]\n"
    "                     [--embedding NAME] [--traversal NAME] [--baseline NAME]\n"
    "                     [--episodes LIST]\n"
    "\n"
    "Prints tables of the results file DB, markdown by default.\n"
    "\n"
    "  summary     one row per (dataset, devices, cluster, placer, embedding, traversal): runs\n"
    "              ok and failed, then over the ok runs the mean initial and best step time\n"
    "              (us), the mean improvement over the initial placement (%), the mean search\n"
    "              wall time (s) and the mean number of simulator calls; the runs that did not\n"
    "              finish ok are listed below it.\n"
    "  orders      the traversal-order paper's Tables II-IV: per family (the folder a dataset\n"
    "              entry names or its graph files lie in), device count and episode, how many\n"
    "              graphs each traversal order found the lowest mean (over repeats) best step\n"
    "              time for, beside the paper's counts.\n"
    "  embeddings  the embedding paper's Tables 1-3: improvement over the initial placement,\n"
    "              computation time and EC ratio per embedding, family and device count, their\n"
    "              averages and the change relative to the baseline embedding, beside the\n"
    "              paper's figures.\n"
    "  heterps     the HeterPS paper's tables, over the runs of the heterps simulator, per\n"
    "              number of resource types: monetary cost (mean, spread, gap over RL-LSTM),\n"
    "              throughput and feasibility, and scheduling time per method and model, then\n"
    "              Table 2 (BF(2), BF(4), RL on CTRDNN), beside the paper's figures; with\n"
    "              runs of the simulator's provision = sta-ratio or sta-ps-ratio, Fig. 4\n"
    "              (cost per model, throughput limit and provisioning rule).\n"
    "  gdp         the GDP paper's Table 1, over the runs on the gdp-p100 cluster: run time of\n"
    "              GDP-one (gdp), HP (expert), METIS (metis) and HDP (hdp) per model and GPU\n"
    "              count, speed-ups over HP and HDP, search speed-up over HDP, GEOMEAN and the\n"
    "              paper's claims, beside the paper's figures.\n"
    "  tag         the TAG paper's testbed tables, over the runs of the topology simulator, per\n"
    "              model: per-iteration time of DP-NCCL, DP-NCCL-P, tag and pure-mcts and\n"
    "              the speed-ups (Fig. 5), the MCTS strategies' GPUs per type and PS /\n"
    "              AllReduce share of gradients (Table 4), search time and simulator calls.\n"
    "\n"
    "  --tables LIST     comma-separated of summary, orders, embeddings, heterps, gdp, tag;\n"
    "                    default: the summary, then the orders tables when the placer's runs\n"
    "                    have 2 or more orders, the embedding tables when they have 2 or more\n"
    "                    embeddings, the HeterPS tables when there are runs of the heterps\n"
    "                    simulator, GDP's Table 1 when there are runs on the gdp-p100 cluster\n"
    "                    and the TAG tables when there are runs of tag or pure-mcts\n"
    "  --csv             CSV instead of markdown (full precision; one table: the summary unless\n"
    "                    --tables names another)\n"
    "  --out FILE        write to FILE instead of stdout (FILE appears only when complete)\n"
    "  --placer NAME     the learned placer of the paper tables (default placeto)\n"
    "  --embedding NAME  orders tables: only runs with this embedding (needed when the runs use\n"
    "                    several)\n"
    "  --traversal NAME  embedding tables: only runs with this traversal order\n"
    "  --baseline NAME   embedding the summary compares with (default placeto-gnn)\n"
    "  --episodes LIST   orders tables: 0-based episodes compared (default 9,19,49)";

enum {
    REPORT_SUMMARY = 1,
    REPORT_ORDERS = 2,
    REPORT_EMBEDDINGS = 4,
    REPORT_HETERPS = 8,
    REPORT_GDP = 16,
    REPORT_TAG = 32
};

/* Options not given (NULL placer and baseline, no episodes) take the paper's: its placer, its
 * baseline embedding, the episodes of its win counts. */
typedef struct report_args {
    const char *db, *out, *placer, *embedding, *traversal, *baseline;
    int tables; /* REPORT_* bits; 0 = automatic */
    int csv;
    int episodes[16];
    int n_episodes;
} report_args;

static int report_parse_tables(const char *list, int *tables)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    *tables = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "summary") == 0)
            *tables |= REPORT_SUMMARY;
        else if (strcmp(t, "orders") == 0)
            *tables |= REPORT_ORDERS;
        else if (strcmp(t, "embeddings") == 0)
            *tables |= REPORT_EMBEDDINGS;
        else if (strcmp(t, "heterps") == 0)
            *tables |= REPORT_HETERPS;
        else if (strcmp(t, "gdp") == 0)
            *tables |= REPORT_GDP;
        else if (strcmp(t, "tag") == 0)
            *tables |= REPORT_TAG;
        else
            return cli_error("report: --tables: unknown table '%s' (summary, orders, embeddings, "
                             "heterps, gdp, tag)",
                             t);
    }
    return *tables ? 0 : cli_error("report: --tables: empty list");
}

static int report_parse_episodes(const char *list, report_args *a)
{
    a->n_episodes = 0;
    const char *p = list;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 1000000000 || (*end && *end != ',') ||
            a->n_episodes == (int)(sizeof a->episodes / sizeof *a->episodes))
            return cli_error("report: --episodes: '%s' is not a list of at most 16 episode "
                             "numbers (0-based)",
                             list);
        a->episodes[a->n_episodes++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return a->n_episodes ? 0 : cli_error("report: --episodes: empty list");
}

/* The option's value slot, or NULL when arg takes none. */
static const char **report_value_slot(report_args *a, const char *arg)
{
    static const char *const names[] = {"--out", "--placer", "--embedding", "--traversal",
                                        "--baseline"};
    const char **slots[] = {&a->out, &a->placer, &a->embedding, &a->traversal, &a->baseline};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(arg, names[i]) == 0)
            return slots[i];
    return NULL;
}

/* Returns -1 when parsed, else the exit status to return. */
static int report_parse(int argc, char **argv, report_args *a)
{
    *a = (report_args){0};
    for (int i = 1; i < argc; i++) {
        const char **slot = report_value_slot(a, argv[i]);
        int takes = slot || strcmp(argv[i], "--tables") == 0 || strcmp(argv[i], "--episodes") == 0;
        if (takes && i + 1 >= argc)
            return cli_error("report: %s needs a value", argv[i]);
        if (cli_is_help(argv[i])) {
            puts(cmd_report_usage);
            return 0;
        }
        if (slot)
            *slot = argv[++i];
        else if (strcmp(argv[i], "--tables") == 0) {
            if (report_parse_tables(argv[++i], &a->tables))
                return 1;
        } else if (strcmp(argv[i], "--episodes") == 0) {
            if (report_parse_episodes(argv[++i], a))
                return 1;
        } else if (strcmp(argv[i], "--csv") == 0)
            a->csv = 1;
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_error("report: unknown option '%s' (see 'placebench report --help')",
                             argv[i]);
        else if (!a->db)
            a->db = argv[i];
        else
            return cli_error("report: one results file only ('%s' is a second one)", argv[i]);
    }
    if (!a->db)
        return cli_usage(cmd_report_usage);
    int t = a->tables;
    if (a->csv && t && (t & (t - 1)))
        return cli_error("report: --csv writes one table; name one with --tables");
    return -1;
}

/* The orders tables of one embedding (NULL: the runs' only one), beside the paper's.  In
 * automatic mode they are written only when there are 2 or more orders, and a failure is no
 * error. */
static int report_orders(store *s, const report_args *a, const papers_paper *paper,
                         const char *embedding, FILE *f, pb_error *err, int automatic)
{
    const papers_order_table *pt = paper->orders;
    const int *episodes = a->n_episodes ? a->episodes : pt->episodes;
    int n_episodes = a->n_episodes ? a->n_episodes : pt->n_episodes;
    store_order_wins w;
    pb_error quiet = {{0}};
    int rc = store_tables_order_wins(s, a->placer ? a->placer : paper->placer, embedding, episodes,
                                     n_episodes, &w, automatic ? &quiet : err);
    if (!rc && (!automatic || w.n_orders >= 2)) {
        if (!a->csv)
            fprintf(f, "\n## Traversal orders: best-order counts (%s, %s)%s%s\n\n", paper->name,
                    pt->tables, embedding ? ", embedding " : "", embedding ? embedding : "");
        cli_tables_orders(f, &w, pt, a->csv);
    }
    store_order_wins_free(&w);
    return rc && !automatic;
}

/* The HeterPS tables beside the paper's.  In automatic mode they are written only when there are
 * runs of the heterps simulator, and their absence is no error. */
static int report_heterps(store *s, const report_args *a, FILE *f, pb_error *err, int automatic)
{
    const papers_paper *paper = papers_with_heterps();
    store_heterps_table t;
    pb_error quiet = {{0}};
    int rc = store_tables_heterps(s, &t, automatic ? &quiet : err);
    if (!rc) {
        if (!a->csv)
            fprintf(f, "\n## HeterPS: cost, throughput and scheduling time (%s, %s)\n",
                    paper ? paper->name : "no paper", paper ? paper->heterps->tables : "-");
        cli_tables_heterps(f, &t, paper ? paper->heterps : NULL, a->csv);
        store_heterps_fig4 fig4;
        rc =
            store_tables_heterps_fig4(s, paper ? paper->heterps->rl_placer : "heterps", &fig4, err);
        if (!rc)
            cli_tables_heterps_fig4(f, &fig4, paper ? paper->heterps : NULL, a->csv);
        store_heterps_fig4_free(&fig4);
    }
    store_heterps_table_free(&t);
    return rc && !automatic;
}

/* TAG's tables beside the paper's.  In automatic mode they are written only when there are runs
 * of tag or pure-mcts, and their absence is no error. */
static int report_tag(store *s, const report_args *a, FILE *f, pb_error *err, int automatic)
{
    const papers_paper *paper = papers_with_tag();
    store_tag_table t;
    pb_error quiet = {{0}};
    int rc = store_tables_tag(s, &t, automatic ? &quiet : err);
    int mcts = 0;
    for (int p = 0; !rc && p < t.n_placers; p++)
        mcts |= strcmp(t.placers[p], "tag") == 0 || strcmp(t.placers[p], "pure-mcts") == 0;
    if (!rc && (mcts || !automatic)) {
        if (!a->csv)
            fprintf(f, "\n## TAG: testbed step time, strategies and search time (%s, %s)\n",
                    paper ? paper->name : "no paper", paper ? paper->tag->tables : "-");
        cli_tables_tag(f, &t, paper ? paper->tag : NULL, a->csv);
    }
    store_tag_table_free(&t);
    return rc && !automatic;
}

/* GDP's Table 1 beside the paper's.  In automatic mode it is written only when there are runs on
 * the GDP cluster, and their absence is no error. */
static int report_gdp(store *s, const report_args *a, FILE *f, pb_error *err, int automatic)
{
    const papers_paper *paper = papers_with_gdp();
    const papers_gdp_tables *pt = paper ? paper->gdp : NULL;
    store_gdp_table t;
    pb_error quiet = {{0}};
    int rc = store_tables_gdp(s, pt ? pt->cluster : "gdp-p100", &t, automatic ? &quiet : err);
    if (!rc) {
        if (!a->csv)
            fprintf(f, "\n## GDP: run time per model and method (%s, %s)\n\n",
                    paper ? paper->name : "no paper", pt ? pt->tables : "-");
        cli_gdp_table1(f, &t, pt, a->csv);
    }
    store_gdp_table_free(&t);
    return rc && !automatic;
}

/* Writes the requested tables; automatic mode skips paper tables the data does not support and
 * gives the orders tables once per embedding when the runs use several. */
static int report_write(store *s, const report_args *a, FILE *f, pb_error *err)
{
    int tables = a->tables ? a->tables : REPORT_SUMMARY;
    int automatic = a->tables == 0 && !a->csv;
    if ((tables & REPORT_SUMMARY) &&
        store_report_summary(s, f, a->csv ? STORE_REPORT_CSV : STORE_REPORT_MARKDOWN, err))
        return 1;
    int want_ord = (tables & REPORT_ORDERS) || automatic;
    int want_emb = (tables & REPORT_EMBEDDINGS) || automatic;
    const papers_paper *po = want_ord ? papers_with_orders() : NULL;
    const papers_paper *pe = want_emb ? papers_with_embeddings() : NULL;
    if (!automatic && ((want_ord && !po) || (want_emb && !pe))) {
        pb_errorf(err, "report: no registered paper has %s tables",
                  want_ord && !po ? "order" : "embedding");
        return 1;
    }
    store_embedding_table t;
    pb_error quiet = {{0}};
    int have_emb = pe && !store_tables_embeddings(s, a->placer ? a->placer : pe->placer,
                                                  a->traversal, &t, automatic ? &quiet : err);
    int rc = pe && !have_emb && !automatic;
    if (!rc && po) {
        if (automatic && !a->embedding && have_emb && t.n_embeddings >= 2)
            for (int e = 0; e < t.n_embeddings; e++)
                report_orders(s, a, po, t.embeddings[e], f, err, 1);
        else
            rc = report_orders(s, a, po, a->embedding, f, err, automatic);
    }
    if (!rc && have_emb && (!automatic || t.n_embeddings >= 2)) {
        const papers_embedding_table *pt = pe->embeddings;
        if (!a->csv)
            fprintf(f, "\n## Graph embeddings (%s, %s)\n\n", pe->name, pt->tables);
        cli_tables_embeddings(f, &t, pt, a->baseline ? a->baseline : pt->baseline, a->csv);
    }
    if (pe)
        store_embedding_table_free(&t);
    if (!rc && ((tables & REPORT_HETERPS) || automatic))
        rc = report_heterps(s, a, f, err, automatic);
    if (!rc && ((tables & REPORT_GDP) || automatic))
        rc = report_gdp(s, a, f, err, automatic);
    if (!rc && ((tables & REPORT_TAG) || automatic))
        rc = report_tag(s, a, f, err, automatic);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    report_args a;
    int rc = report_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    pb_error err = {{0}};
    store *s;
    if (store_open_readonly(a.db, &s, &err))
        return cli_error("%s", err.msg);
    cli_output o;
    if (cli_output_open(&o, a.out)) {
        store_close(s);
        return 1;
    }
    rc = report_write(s, &a, o.f, &err);
    store_close(s);
    if (rc) {
        cli_output_close(&o, 0);
        return cli_error("%s", err.msg);
    }
    return cli_output_close(&o, 1);
}
