/* store_board.c — per-problem, per-placer means of a results file: the rows of `placebench
 * compare`'s leaderboard. */
#include "store.h"
#include "store_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char store_board_sql[] =
    "SELECT graph, n_devices, cluster, simulator, placer, COALESCE(embedding, ''),"
    " COALESCE(traversal, ''), count(*), sum(status = 0),"
    " avg(CASE WHEN status = 0 THEN best_us END),"
    " avg(CASE WHEN status = 0 THEN search_wall_s END),"
    " avg(CASE WHEN status = 0 THEN sim_calls END),"
    " avg(CASE WHEN status = 0 AND COALESCE(feasible, 1) THEN monetary_cost END),"
    " sum(status = 0 AND COALESCE(feasible, 1))"
    " FROM runs GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7";

/* A column that may be NULL, as a double (NAN for NULL). */
static double store_board_double(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

/* "graph, N devices, cluster, simulator" and "placer[ / embedding][ / traversal]". */
static int store_board_labels(sqlite3_stmt *st, store_board_row *r)
{
    const char *graph = (const char *)sqlite3_column_text(st, 0);
    const char *cluster = (const char *)sqlite3_column_text(st, 2);
    const char *sim = (const char *)sqlite3_column_text(st, 3);
    const char *placer = (const char *)sqlite3_column_text(st, 4);
    const char *emb = (const char *)sqlite3_column_text(st, 5);
    const char *trav = (const char *)sqlite3_column_text(st, 6);
    graph = graph ? graph : "";
    cluster = cluster ? cluster : "";
    sim = sim ? sim : "";
    placer = placer ? placer : "";
    size_t pn = strlen(graph) + strlen(cluster) + strlen(sim) + 48;
    size_t en = strlen(placer) + strlen(emb) + strlen(trav) + 8;
    r->problem = malloc(pn);
    r->entry = malloc(en);
    if (!r->problem || !r->entry)
        return PB_ERR;
    size_t glen = strlen(graph);
    if (glen > 5 && strcmp(graph + glen - 5, ".json") == 0)
        glen -= 5;
    snprintf(r->problem, pn, "%.*s, %d devices, %s, %s", (int)glen, graph,
             sqlite3_column_int(st, 1), cluster, sim);
    snprintf(r->entry, en, "%s%s%s%s%s", placer, *emb ? " / " : "", emb, *trav ? " / " : "", trav);
    return PB_OK;
}

int store_board_rows(store *s, store_board_row **rows, int *n, pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, store_board_sql, &st, err))
        return PB_ERR;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_board_row *grown = realloc(*rows, (size_t)(*n + 1) * sizeof **rows);
        if (!grown) {
            sqlite3_finalize(st);
            return pb_errorf(err, "out of memory");
        }
        *rows = grown;
        store_board_row *r = &grown[*n];
        memset(r, 0, sizeof *r);
        (*n)++;
        if (store_board_labels(st, r)) {
            sqlite3_finalize(st);
            return pb_errorf(err, "out of memory");
        }
        r->n_runs = sqlite3_column_int(st, 7);
        r->n_ok = sqlite3_column_int(st, 8);
        r->mean_us = store_board_double(st, 9);
        r->mean_search_s = store_board_double(st, 10);
        r->mean_sim_calls = store_board_double(st, 11);
        r->mean_cost = store_board_double(st, 12);
        r->n_feasible = sqlite3_column_int(st, 13);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return store_sql_error(s, "reading the runs", err);
    return PB_OK;
}

void store_board_rows_free(store_board_row *rows, int n)
{
    for (int i = 0; i < n; i++) {
        free(rows[i].problem);
        free(rows[i].entry);
    }
    free(rows);
}
