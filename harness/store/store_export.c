/* store_export.c — runs and curve points out of the store as CSV (RFC 4180) or JSON lines. */
#include "store_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void store_export_double(char *buf, size_t n, double d)
{
    if (isnan(d)) {
        snprintf(buf, n, "nan");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, n, d > 0 ? "inf" : "-inf");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

/* A CSV field, quoted (with doubled quotes) when it holds a comma, quote or line break. */
void store_export_csv_field(FILE *f, const char *t)
{
    if (!strpbrk(t, ",\"\r\n")) {
        fputs(t, f);
        return;
    }
    fputc('"', f);
    for (; *t; t++) {
        if (*t == '"')
            fputc('"', f);
        fputc(*t, f);
    }
    fputc('"', f);
}

/* A JSON string; bytes >= 0x80 pass through (the store holds UTF-8). */
static void store_export_json_text(FILE *f, const char *t)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\r')
            fputs("\\r", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static int store_export_is_digits(const char *t)
{
    size_t n = strspn(t, "0123456789");
    return n > 0 && n <= 20 && t[n] == '\0';
}

/* One value of column i of the current row. */
static void store_export_value(FILE *f, sqlite3_stmt *st, int i, store_col_kind kind, int jsonl)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL) {
        if (jsonl)
            fputs("null", f);
        return;
    }
    if (kind == STORE_COL_INT) {
        fprintf(f, "%lld", (long long)sqlite3_column_int64(st, i));
        return;
    }
    if (kind == STORE_COL_REAL) {
        double d = sqlite3_column_double(st, i);
        char buf[40];
        store_export_double(buf, sizeof buf, d);
        /* JSON has no infinities: they become null there (the CSV keeps "inf"). */
        fputs(jsonl && !isfinite(d) ? "null" : buf, f);
        return;
    }
    const char *t = (const char *)sqlite3_column_text(st, i);
    if (!jsonl)
        store_export_csv_field(f, t);
    else if (kind == STORE_COL_U64 && store_export_is_digits(t))
        fputs(t, f);
    else
        store_export_json_text(f, t);
}

static void store_export_row(FILE *f, sqlite3_stmt *st, const store_column *cols, int n, int jsonl)
{
    if (jsonl)
        fputc('{', f);
    for (int i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        if (jsonl) {
            store_export_json_text(f, cols[i].name);
            fputc(':', f);
        }
        store_export_value(f, st, i, cols[i].kind, jsonl);
    }
    fputs(jsonl ? "}\n" : "\n", f);
}

/* Writes every row of "SELECT <list> FROM <from_order>" (a header line first in CSV); list (NULL
 * when out of memory) names cols in order and is freed here. */
static int store_export_table(store *s, FILE *f, const store_column *cols, int n, char *list,
                              const char *from_order, int jsonl, pb_error *err)
{
    if (!list)
        return pb_errorf(err, "%s: out of memory", s->path);
    size_t len = strlen(list) + strlen(from_order) + 32;
    char *sql = malloc(len);
    if (sql)
        snprintf(sql, len, "SELECT %s FROM %s", list, from_order);
    free(list);
    if (!sql)
        return pb_errorf(err, "%s: out of memory", s->path);
    sqlite3_stmt *st;
    int rc = store_prepare(s, sql, &st, err);
    free(sql);
    if (rc)
        return PB_ERR;
    for (int i = 0; !jsonl && i < n; i++)
        fprintf(f, "%s%s", i ? "," : "", cols[i].name);
    if (!jsonl)
        fputc('\n', f);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        store_export_row(f, st, cols, n, jsonl);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return store_sql_error(s, "reading results", err);
    if (fflush(f) != 0 || ferror(f))
        return pb_errorf(err, "%s: writing the export failed: %s", s->path, strerror(errno));
    return PB_OK;
}

int store_export_runs(store *s, FILE *f, int jsonl, pb_error *err)
{
    /* A file of an older schema exports the columns it lacks as empty (null). */
    return store_export_table(s, f, store_run_columns, store_n_run_columns,
                              store_run_select_list(s, "main", ""), "runs ORDER BY run_id", jsonl,
                              err);
}

int store_export_curves(store *s, FILE *f, int jsonl, pb_error *err)
{
    return store_export_table(s, f, store_curve_columns, store_n_curve_columns,
                              store_column_list(store_curve_columns, store_n_curve_columns, ""),
                              "curve ORDER BY run_id, episode, rowid", jsonl, err);
}

static const store_column store_log_columns[] = {{"run_id", STORE_COL_TEXT},
                                                 {"text", STORE_COL_TEXT}};

int store_export_logs(store *s, FILE *f, int jsonl, pb_error *err)
{
    /* A file written before logs were kept has none: the header only. */
    const char *from = store_has_table(s, "main", "log")
                           ? "log ORDER BY run_id"
                           : "(SELECT NULL AS run_id, NULL AS text) WHERE 0";
    return store_export_table(s, f, store_log_columns, 2,
                              store_column_list(store_log_columns, 2, ""), from, jsonl, err);
}
