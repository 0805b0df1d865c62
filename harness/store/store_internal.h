/* store_internal.h — what the store_*.c files share: the connection, the runs columns, SQL helpers
 * (private to the store; nothing outside store*.c includes it). */
#ifndef PB_STORE_INTERNAL_H
#define PB_STORE_INTERNAL_H

#include "store.h"

#include <sqlite3.h>

/* Version of the file layout written in meta.schema_version; files of a newer one are refused,
 * files of an older one are migrated when opened for writing.
 * 1: the first layout.  2: runs.feasible, runs.throughput, runs.monetary_cost.
 * 3: runs.graph_origin (which dataset version and cost model made the graph). */
#define STORE_SCHEMA_VERSION 3

/* Plugins' output of each run that wrote any; files written before it existed get it when opened
 * for writing. */
#define STORE_LOG_TABLE_SQL                                                                        \
    "CREATE TABLE IF NOT EXISTS log(run_id TEXT PRIMARY KEY NOT NULL REFERENCES runs(run_id),"     \
    " text TEXT NOT NULL);"

/* Runs being computed: who claimed each (see store_claim_run); files written before it existed
 * get it when opened for writing. */
#define STORE_CLAIM_TABLE_SQL                                                                      \
    "CREATE TABLE IF NOT EXISTS claim(run_id TEXT PRIMARY KEY NOT NULL, host TEXT NOT NULL,"       \
    " boot_id TEXT NOT NULL, pid INTEGER NOT NULL, start_time INTEGER NOT NULL, claimed_at REAL);"

/* Removes the claim of run_id (inside the caller's transaction).  (store_claim.c) */
int store_unclaim(store *s, const char *run_id, pb_error *err);

/* Non-zero when the file (schema "main", or an attached one) has the named table. */
int store_has_table(store *s, const char *schema, const char *table);
/* Non-zero when the named table of the file (schema "main", or an attached one) has the column. */
int store_has_column(store *s, const char *schema, const char *table, const char *column);
/* The runs columns in store_run_columns order for a SELECT from schema's runs table, each prefixed
 * by `prefix` (may be ""), "NULL AS name" for those the file lacks (an older schema read as it
 * is); caller frees.  NULL when out of memory. */
char *store_run_select_list(store *s, const char *schema, const char *prefix);

struct store {
    sqlite3 *db;
    char *path; /* as given to store_open, for messages */
};

/* How a runs column is stored and exported. */
typedef enum store_col_kind {
    STORE_COL_TEXT, /* TEXT, NULL when absent */
    STORE_COL_INT,  /* INTEGER */
    STORE_COL_REAL, /* REAL, NULL for NaN */
    STORE_COL_U64   /* unsigned 64-bit stored as TEXT decimal digits (SQLite integers are signed) */
} store_col_kind;

typedef struct store_column {
    const char *name;
    store_col_kind kind;
} store_column;

/* The runs table, in column order (the schema, the insert and the exports derive from it). */
extern const store_column store_run_columns[];
extern const int store_n_run_columns;
/* The curve table, in column order. */
extern const store_column store_curve_columns[];
extern const int store_n_curve_columns;

/* Writes "<path>: <what>: <sqlite message>" into err; returns PB_ERR. */
int store_sql_error(store *s, const char *what, pb_error *err);
/* Runs SQL without results. */
int store_exec(store *s, const char *sql, pb_error *err);
/* Prepares one statement; caller finalizes. */
int store_prepare(store *s, const char *sql, sqlite3_stmt **st, pb_error *err);
/* Rolls back an open transaction (ignoring errors) and returns PB_ERR. */
int store_rollback(store *s);
/* Comma-separated list of the given columns, each prefixed by `prefix` (may be ""); caller frees.
 * NULL when out of memory. */
char *store_column_list(const store_column *cols, int n, const char *prefix);

/* The experiment name recorded in the file (experiment table, else the runs' names); NULL when
 * the file has none.  Caller frees. */
int store_experiment_name(store *s, char **name, pb_error *err);

/* Shortest text that reads back as exactly d ("%.17g" at worst); "nan", "inf", "-inf" for the
 * non-finite.  (store_export.c) */
void store_export_double(char *buf, size_t n, double d);
/* Writes t as one CSV field, quoted when RFC 4180 asks for it.  (store_export.c) */
void store_export_csv_field(FILE *f, const char *t);

#endif
