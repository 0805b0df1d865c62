/* store_report.c — the summary table of a results file (markdown or CSV). */
#include "store_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Columns 0-5 name the group, 6-7 count runs, 8-12 are means (NULL when there is nothing to
 * average).  "BETWEEN -1e308 AND 1e308" keeps finite step times only.  NULLIF folds the "" of
 * hand-made files into the NULL the store writes for an absent name. */
static const char store_report_sql[] =
    "SELECT NULLIF(dataset, '') AS d, n_devices, NULLIF(cluster, '') AS c,"
    " NULLIF(placer, '') AS p,"
    " NULLIF(embedding, '') AS e, NULLIF(traversal, '') AS t,"
    " SUM(status = 0), SUM(status <> 0),"
    " AVG(CASE WHEN status = 0 THEN initial_us END),"
    " AVG(CASE WHEN status = 0 THEN best_us END),"
    " AVG(CASE WHEN status = 0 AND initial_us > 0 AND initial_us <= 1e308"
    "      AND best_us BETWEEN -1e308 AND 1e308"
    "     THEN (initial_us - best_us) / initial_us * 100 END),"
    " AVG(CASE WHEN status = 0 THEN search_wall_s END),"
    " AVG(CASE WHEN status = 0 THEN sim_calls END)"
    " FROM runs GROUP BY d, n_devices, c, p, e, t ORDER BY d, n_devices, c, p, e, t";

static const char store_report_failed_sql[] =
    "SELECT run_id, placer, graph, status, error FROM runs WHERE status <> 0"
    " ORDER BY dataset, n_devices, cluster, placer, embedding, traversal, graph, repeat, run_id";

enum { STORE_REPORT_GROUP_COLS = 6, STORE_REPORT_COLS = 13 };

static const char *const store_report_csv_header[STORE_REPORT_COLS] = {"dataset",
                                                                       "n_devices",
                                                                       "cluster",
                                                                       "placer",
                                                                       "embedding",
                                                                       "traversal",
                                                                       "runs_ok",
                                                                       "runs_failed",
                                                                       "mean_initial_us",
                                                                       "mean_best_us",
                                                                       "mean_improvement_pct",
                                                                       "mean_search_wall_s",
                                                                       "mean_sim_calls"};

static const char *const store_report_md_header[STORE_REPORT_COLS] = {
    "dataset", "devices",      "cluster",   "placer",          "embedding",  "traversal", "ok",
    "failed",  "initial (µs)", "best (µs)", "improvement (%)", "search (s)", "sim calls"};

/* Decimals shown in markdown for the mean columns 8-12. */
static const int store_report_md_decimals[STORE_REPORT_COLS] = {0, 0, 0, 0, 0, 0, 0,
                                                                0, 1, 1, 2, 3, 1};

const char *store_status_name(int status, char *buf, size_t n)
{
    static const char *const names[] = {"ok", "failed", "crashed", "timeout"};
    if (status >= STORE_OK && status <= STORE_TIMEOUT)
        return names[status];
    snprintf(buf, n, "status %d", status);
    return buf;
}

/* A markdown table cell: '|' escaped, line breaks flattened, "-" for empty. */
static void store_report_md_cell(FILE *f, const char *t)
{
    fputs("| ", f);
    if (!t || !*t)
        fputc('-', f);
    for (; t && *t; t++) {
        if (*t == '|')
            fputs("\\|", f);
        else if (*t == '\n' || *t == '\r')
            fputc(' ', f);
        else
            fputc(*t, f);
    }
    fputc(' ', f);
}

static void store_report_md_row(FILE *f, sqlite3_stmt *st)
{
    for (int i = 0; i < STORE_REPORT_COLS; i++) {
        int type = sqlite3_column_type(st, i);
        if (i < STORE_REPORT_GROUP_COLS + 2 || type == SQLITE_NULL) {
            store_report_md_cell(f, (const char *)sqlite3_column_text(st, i));
            continue;
        }
        char buf[64];
        snprintf(buf, sizeof buf, "%.*f", store_report_md_decimals[i],
                 sqlite3_column_double(st, i));
        store_report_md_cell(f, buf);
    }
    fputs("|\n", f);
}

static void store_report_csv_row(FILE *f, sqlite3_stmt *st)
{
    for (int i = 0; i < STORE_REPORT_COLS; i++) {
        if (i)
            fputc(',', f);
        int type = sqlite3_column_type(st, i);
        if (type == SQLITE_NULL)
            continue;
        if (i < STORE_REPORT_GROUP_COLS + 2) {
            store_export_csv_field(f, (const char *)sqlite3_column_text(st, i));
            continue;
        }
        char buf[40];
        store_export_double(buf, sizeof buf, sqlite3_column_double(st, i));
        fputs(buf, f);
    }
    fputc('\n', f);
}

static void store_report_header(FILE *f, int format)
{
    for (int i = 0; i < STORE_REPORT_COLS; i++) {
        if (format == STORE_REPORT_CSV)
            fprintf(f, "%s%s", i ? "," : "", store_report_csv_header[i]);
        else
            store_report_md_cell(f, store_report_md_header[i]);
    }
    if (format == STORE_REPORT_CSV) {
        fputc('\n', f);
        return;
    }
    fputs("|\n", f);
    for (int i = 0; i < STORE_REPORT_COLS; i++)
        fputs(i < STORE_REPORT_GROUP_COLS ? "|---" : "|--:", f);
    fputs("|\n", f);
}

/* "## Summary: <experiment>" and the run count above the markdown table. */
static int store_report_title(store *s, FILE *f, pb_error *err)
{
    char *name = NULL;
    if (store_experiment_name(s, &name, err))
        return PB_ERR;
    long long n = store_count_runs(s);
    if (n < 0) {
        free(name);
        return store_sql_error(s, "counting runs", err);
    }
    fputs("## Summary: ", f);
    fputs(name ? name : "(no experiment recorded)", f);
    fprintf(f,
            "\n\n%lld run%s in %s. Means are over the runs that finished ok; improvement is "
            "(initial - best) / initial.\n\n",
            n, n == 1 ? "" : "s", s->path);
    free(name);
    return PB_OK;
}

static int store_report_table(store *s, FILE *f, int format, pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, store_report_sql, &st, err))
        return PB_ERR;
    store_report_header(f, format);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (format == STORE_REPORT_CSV)
            store_report_csv_row(f, st);
        else
            store_report_md_row(f, st);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "reading runs", err);
}

/* Lists the runs that did not finish ok (nothing when all did). */
static int store_report_failed(store *s, FILE *f, pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, store_report_failed_sql, &st, err))
        return PB_ERR;
    int rc, n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n++ == 0)
            fputs("\n### Runs that did not finish ok\n\n"
                  "| run_id | placer | graph | status | error |\n|---|---|---|---|---|\n",
                  f);
        char buf[32];
        store_report_md_cell(f, (const char *)sqlite3_column_text(st, 0));
        store_report_md_cell(f, (const char *)sqlite3_column_text(st, 1));
        store_report_md_cell(f, (const char *)sqlite3_column_text(st, 2));
        store_report_md_cell(f, store_status_name(sqlite3_column_int(st, 3), buf, sizeof buf));
        store_report_md_cell(f, (const char *)sqlite3_column_text(st, 4));
        fputs("|\n", f);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "reading failed runs", err);
}

int store_report_summary(store *s, FILE *f, int format, pb_error *err)
{
    if (format != STORE_REPORT_MARKDOWN && format != STORE_REPORT_CSV)
        return pb_errorf(err, "%s: unknown report format %d", s->path, format);
    if (format == STORE_REPORT_MARKDOWN && store_report_title(s, f, err))
        return PB_ERR;
    if (store_report_table(s, f, format, err))
        return PB_ERR;
    if (format == STORE_REPORT_MARKDOWN && store_report_failed(s, f, err))
        return PB_ERR;
    if (fflush(f) != 0 || ferror(f))
        return pb_errorf(err, "%s: writing the report failed: %s", s->path, strerror(errno));
    return PB_OK;
}
