/* store.c — the results store: opening and creating the SQLite file, writing runs exactly once. */
#include "store_internal.h"

#include "core/clock.h"
#include "core/version.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Writers of one file (workers of a sweep) wait this long for each other's transactions. */
#define STORE_BUSY_TIMEOUT_MS 60000

const store_column store_run_columns[] = {
    {"run_id", STORE_COL_TEXT},
    {"experiment", STORE_COL_TEXT},
    {"settings_json", STORE_COL_TEXT},
    {"dataset", STORE_COL_TEXT},
    {"graph", STORE_COL_TEXT},
    {"graph_checksum", STORE_COL_TEXT},
    {"n_nodes", STORE_COL_INT},
    {"n_devices", STORE_COL_INT},
    {"cluster", STORE_COL_TEXT},
    {"simulator", STORE_COL_TEXT},
    {"simulator_version", STORE_COL_TEXT},
    {"placer", STORE_COL_TEXT},
    {"placer_version", STORE_COL_TEXT},
    {"embedding", STORE_COL_TEXT},
    {"embedding_version", STORE_COL_TEXT},
    {"traversal", STORE_COL_TEXT},
    {"traversal_version", STORE_COL_TEXT},
    {"repeat", STORE_COL_INT},
    {"seed", STORE_COL_U64},
    {"placebench_version", STORE_COL_TEXT},
    {"status", STORE_COL_INT},
    {"error", STORE_COL_TEXT},
    {"initial_us", STORE_COL_REAL},
    {"best_us", STORE_COL_REAL},
    {"search_wall_s", STORE_COL_REAL},
    {"sim_calls", STORE_COL_INT},
    {"started_at", STORE_COL_REAL},
    {"finished_at", STORE_COL_REAL},
    /* Schema 2: the simulator's verdict; files of schema 1 get these columns when opened for
     * writing (ALTER TABLE appends, so they stay last). */
    {"feasible", STORE_COL_INT},
    {"throughput", STORE_COL_REAL},
    {"monetary_cost", STORE_COL_REAL},
    /* Schema 3: where the graph comes from (graph_origin: for a generated graph the dataset
     * version and cost model that made it); NULL when the file does not say. */
    {"graph_origin", STORE_COL_TEXT},
};
const int store_n_run_columns = (int)(sizeof store_run_columns / sizeof store_run_columns[0]);

/* SQL type of each store_col_kind, in enum order. */
static const char *const store_col_sql_type[] = {"TEXT", "INTEGER", "REAL", "TEXT"};

const store_column store_curve_columns[] = {
    {"run_id", STORE_COL_TEXT},          {"episode", STORE_COL_INT},
    {"episode_best_us", STORE_COL_REAL}, {"best_so_far_us", STORE_COL_REAL},
    {"sim_calls", STORE_COL_INT},        {"wall_s", STORE_COL_REAL},
};
const int store_n_curve_columns = (int)(sizeof store_curve_columns / sizeof store_curve_columns[0]);

/* The fixed part of the schema; the runs table is generated from store_run_columns. */
static const char store_schema_sql[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);"
    "CREATE TABLE experiment(name TEXT NOT NULL, config_json TEXT, seed TEXT, created_at REAL);"
    "CREATE TABLE curve(run_id TEXT NOT NULL REFERENCES runs(run_id), episode INTEGER NOT NULL,"
    " episode_best_us REAL, best_so_far_us REAL, sim_calls INTEGER, wall_s REAL);"
    "CREATE INDEX curve_run ON curve(run_id, episode);" STORE_LOG_TABLE_SQL STORE_CLAIM_TABLE_SQL;

int store_sql_error(store *s, const char *what, pb_error *err)
{
    return pb_errorf(err, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

int store_exec(store *s, const char *sql, pb_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return PB_OK;
    pb_errorf(err, "%s: %s", s->path, msg ? msg : sqlite3_errmsg(s->db));
    sqlite3_free(msg);
    return PB_ERR;
}

int store_has_table(store *s, const char *schema, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT 1 FROM %s.sqlite_master WHERE type = 'table' AND name = ?",
             schema);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

int store_prepare(store *s, const char *sql, sqlite3_stmt **st, pb_error *err)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
        return store_sql_error(s, "preparing a query", err);
    return PB_OK;
}

int store_rollback(store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return PB_ERR;
}

char *store_column_list(const store_column *cols, int n, const char *prefix)
{
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(prefix) + strlen(cols[i].name) + 2;
    char *out = malloc(len);
    if (!out)
        return NULL;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i)
            strcat(out, ", ");
        strcat(out, prefix);
        strcat(out, cols[i].name);
    }
    return out;
}

/* "CREATE TABLE runs(...)" from store_run_columns; caller frees. */
static char *store_runs_table_sql(void)
{
    size_t len = 64;
    for (int i = 0; i < store_n_run_columns; i++)
        len += strlen(store_run_columns[i].name) + 32;
    char *sql = malloc(len);
    if (!sql)
        return NULL;
    strcpy(sql, "CREATE TABLE runs(");
    for (int i = 0; i < store_n_run_columns; i++) {
        const store_column *c = &store_run_columns[i];
        size_t at = strlen(sql);
        snprintf(sql + at, len - at, "%s%s %s%s", i ? ", " : "", c->name,
                 store_col_sql_type[c->kind], i == 0 ? " PRIMARY KEY NOT NULL" : "");
    }
    strcat(sql, ")");
    return sql;
}

static int store_write_meta(store *s, const char *key, const char *value, pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", &st, err))
        return PB_ERR;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "writing meta", err);
}

/* Number of schema objects in the file; -1 with err set when it is not an SQLite database. */
static int store_object_count(store *s, pb_error *err)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int n = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        return n;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_NOTADB)
        pb_errorf(err, "%s: not a placebench results file (not an SQLite database)", s->path);
    else
        store_sql_error(s, "cannot read", err);
    return -1;
}

/* Creates the tables of an empty file, inside one transaction (another worker may race us). */
static int store_create_schema(store *s, pb_error *err)
{
    if (store_exec(s, "BEGIN IMMEDIATE", err))
        return PB_ERR;
    int n = store_object_count(s, err);
    if (n < 0)
        return store_rollback(s);
    if (n > 0)
        return store_exec(s, "COMMIT", err) ? store_rollback(s) : PB_OK;
    char *runs = store_runs_table_sql();
    if (!runs) {
        pb_errorf(err, "%s: out of memory", s->path);
        return store_rollback(s);
    }
    char version[16], created[32];
    snprintf(version, sizeof version, "%d", STORE_SCHEMA_VERSION);
    store_export_double(created, sizeof created, pb_clock_seconds(CLOCK_REALTIME));
    int rc = store_exec(s, runs, err) || store_exec(s, store_schema_sql, err) ||
             store_write_meta(s, "schema_version", version, err) ||
             store_write_meta(s, "placebench_version", pb_version_string(), err) ||
             store_write_meta(s, "created_at", created, err) || store_exec(s, "COMMIT", err);
    free(runs);
    return rc ? store_rollback(s) : PB_OK;
}

/* Refuses files that are not placebench results or were written by a newer schema; *version
 * receives the file's. */
static int store_check_schema(store *s, int *version_out, pb_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st,
                           NULL) != SQLITE_OK)
        return pb_errorf(err,
                         "%s: an SQLite database but not a placebench results file (no meta "
                         "table)",
                         s->path);
    int version = -1;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        version = atoi((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (version > STORE_SCHEMA_VERSION)
        return pb_errorf(err,
                         "%s: results schema version %d is newer than this placebench (%s) "
                         "reads (%d); use a newer placebench",
                         s->path, version, pb_version_string(), STORE_SCHEMA_VERSION);
    if (version < 1)
        return pb_errorf(err, "%s: not a placebench results file (no valid schema_version)",
                         s->path);
    *version_out = version;
    return PB_OK;
}

int store_has_column(store *s, const char *schema, const char *table, const char *column)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM pragma_table_info(?, ?) WHERE name = ?", -1, &st,
                           NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, schema, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, column, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

char *store_run_select_list(store *s, const char *schema, const char *prefix)
{
    size_t len = 1;
    for (int i = 0; i < store_n_run_columns; i++)
        len += strlen(prefix) + 2 * strlen(store_run_columns[i].name) + 16;
    char *out = malloc(len);
    if (!out)
        return NULL;
    size_t at = 0;
    for (int i = 0; i < store_n_run_columns; i++) {
        const char *name = store_run_columns[i].name;
        if (store_has_column(s, schema, "runs", name))
            at += (size_t)snprintf(out + at, len - at, "%s%s%s", i ? ", " : "", prefix, name);
        else
            at += (size_t)snprintf(out + at, len - at, "%sNULL AS %s", i ? ", " : "", name);
    }
    return out;
}

/* Brings a file of an older schema up to this one: adds the runs columns it lacks (they read as
 * NULL in its rows) and records the new version.  One transaction, and idempotent, since another
 * process may be doing the same to the same file. */
static int store_migrate(store *s, pb_error *err)
{
    if (store_exec(s, "BEGIN IMMEDIATE", err))
        return PB_ERR;
    for (int i = 0; i < store_n_run_columns; i++) {
        const store_column *c = &store_run_columns[i];
        if (store_has_column(s, "main", "runs", c->name))
            continue;
        char sql[160];
        snprintf(sql, sizeof sql, "ALTER TABLE runs ADD COLUMN %s %s", c->name,
                 store_col_sql_type[c->kind]);
        if (store_exec(s, sql, err))
            return store_rollback(s);
    }
    char version[16];
    snprintf(version, sizeof version, "%d", STORE_SCHEMA_VERSION);
    if (store_write_meta(s, "schema_version", version, err))
        return store_rollback(s);
    return store_exec(s, "COMMIT", err) ? store_rollback(s) : PB_OK;
}

/* SQLITE_OK once the file is in WAL mode (or cannot be, as in memory); SQLITE_BUSY while
 * another connection keeps it from switching. */
static int store_try_wal(store *s)
{
    static const char *const steps[] = {"PRAGMA journal_mode", "PRAGMA journal_mode=WAL"};
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *st;
        int rc = sqlite3_prepare_v2(s->db, steps[i], -1, &st, NULL);
        if (rc != SQLITE_OK)
            return rc;
        rc = sqlite3_step(st);
        const unsigned char *mode = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
        int is_wal = mode && strcmp((const char *)mode, "wal") == 0;
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW)
            return rc;
        if (is_wal || i == 1)
            return SQLITE_OK;
    }
    return SQLITE_OK;
}

/* WAL keeps readers off the writers' backs; FULL makes every committed run survive power loss,
 * not only a killed process.  Switching to WAL needs the file to itself and does not call the
 * busy handler, so workers opening a new file together retry here. */
static int store_set_pragmas(store *s, pb_error *err)
{
    int rc;
    for (int waited = 0; (rc = store_try_wal(s)) == SQLITE_BUSY; waited += 10) {
        if (waited >= STORE_BUSY_TIMEOUT_MS)
            break;
        sqlite3_sleep(10);
    }
    if (rc != SQLITE_OK)
        return store_sql_error(s, "setting WAL mode", err);
    return store_exec(s, "PRAGMA synchronous=FULL", err);
}

/* Checks the path before SQLite sees it, so that errors say what is wrong with it. */
static int store_check_path(const char *path, int create, pb_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno == ENOENT && create)
            return PB_OK;
        return pb_errorf(err, "%s: cannot open results file: %s", path, strerror(errno));
    }
    if (S_ISDIR(sb.st_mode))
        return pb_errorf(err, "%s: is a directory, not a results file", path);
    if (!S_ISREG(sb.st_mode))
        return pb_errorf(err, "%s: not a regular file", path);
    if (access(path, R_OK) != 0)
        return pb_errorf(err, "%s: cannot read results file: %s", path, strerror(errno));
    return PB_OK;
}

static int store_open_mode(const char *path, int create, int readonly, store **out, pb_error *err)
{
    *out = NULL;
    if (!path || !*path)
        return pb_errorf(err, "results file: empty path");
    if (store_check_path(path, create && !readonly, err))
        return PB_ERR;
    store *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return pb_errorf(err, "%s: out of memory", path);
    }
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    if (create && !readonly)
        flags |= SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
        pb_errorf(err, "%s: cannot open results file: %s", path,
                  s->db ? sqlite3_errmsg(s->db) : "out of memory");
        store_close(s);
        return PB_ERR;
    }
    sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
    /* A foreign database is refused before anything (WAL mode included) is written to it. */
    int n = store_object_count(s, err);
    int rc = n < 0 ? PB_ERR : PB_OK;
    if (rc == PB_OK && n == 0 && (readonly || !create))
        rc = pb_errorf(err, "%s: not a placebench results file (an empty database)", path);
    if (rc == PB_OK && n == 0)
        rc = store_set_pragmas(s, err) || store_create_schema(s, err) ? PB_ERR : PB_OK;
    int version = 0;
    if (rc == PB_OK)
        rc = store_check_schema(s, &version, err);
    if (rc == PB_OK && n > 0 && !readonly)
        rc = store_set_pragmas(s, err) ||
                     store_exec(s, STORE_LOG_TABLE_SQL STORE_CLAIM_TABLE_SQL, err)
                 ? PB_ERR
                 : PB_OK;
    if (rc == PB_OK && !readonly && version < STORE_SCHEMA_VERSION)
        rc = store_migrate(s, err);
    if (rc != PB_OK) {
        store_close(s);
        return PB_ERR;
    }
    *out = s;
    return PB_OK;
}

int store_open(const char *path, int create, store **out, pb_error *err)
{
    return store_open_mode(path, create, 0, out, err);
}

int store_open_readonly(const char *path, store **out, pb_error *err)
{
    return store_open_mode(path, 0, 1, out, err);
}

void store_close(store *s)
{
    if (!s)
        return;
    sqlite3_close(s->db);
    free(s->path);
    free(s);
}

const char *store_path(const store *s)
{
    return s->path;
}

/* Text of a column, copied; NULL for NULL. */
static char *store_column_strdup(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return t ? strdup((const char *)t) : NULL;
}

int store_experiment_name(store *s, char **name, pb_error *err)
{
    static const char *const queries[] = {
        "SELECT name FROM experiment ORDER BY rowid LIMIT 1",
        "SELECT experiment FROM runs WHERE experiment IS NOT NULL ORDER BY run_id LIMIT 1",
    };
    *name = NULL;
    for (size_t q = 0; q < 2 && !*name; q++) {
        sqlite3_stmt *st;
        if (store_prepare(s, queries[q], &st, err))
            return PB_ERR;
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            *name = store_column_strdup(st, 0);
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            return store_sql_error(s, "reading the experiment", err);
    }
    return PB_OK;
}

int store_set_experiment(store *s, const char *name, const char *config_json,
                         unsigned long long seed, pb_error *err)
{
    if (!name || !*name)
        return pb_errorf(err, "%s: experiment without a name", s->path);
    if (store_exec(s, "BEGIN IMMEDIATE", err))
        return PB_ERR;
    char *held = NULL;
    if (store_experiment_name(s, &held, err))
        return store_rollback(s);
    if (held && strcmp(held, name) != 0) {
        pb_errorf(err, "%s: holds results of experiment '%s', not '%s'", s->path, held, name);
        free(held);
        return store_rollback(s);
    }
    int has_row = 0;
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT count(*) FROM experiment", &st, err)) {
        free(held);
        return store_rollback(s);
    }
    if (sqlite3_step(st) == SQLITE_ROW)
        has_row = sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    free(held);
    if (has_row)
        return store_exec(s, "COMMIT", err) ? store_rollback(s) : PB_OK;
    if (store_prepare(s,
                      "INSERT INTO experiment(name, config_json, seed, created_at) "
                      "VALUES(?, ?, ?, ?)",
                      &st, err))
        return store_rollback(s);
    char seed_text[32];
    snprintf(seed_text, sizeof seed_text, "%llu", seed);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, config_json, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, seed_text, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 4, pb_clock_seconds(CLOCK_REALTIME));
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        store_sql_error(s, "recording the experiment", err);
        return store_rollback(s);
    }
    return store_exec(s, "COMMIT", err) ? store_rollback(s) : PB_OK;
}

int store_has_run(store *s, const char *run_id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM runs WHERE run_id = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

long long store_count_runs(store *s)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM runs", -1, &st, NULL) != SQLITE_OK)
        return -1;
    long long n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return n;
}

/* Parameter index of :name in st; 0 (which no bind accepts) when the statement lacks it. */
static int store_param(sqlite3_stmt *st, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, ":%s", name);
    return sqlite3_bind_parameter_index(st, key);
}

/* Absent ("" or NULL) strings are stored as NULL. */
static int store_bind_text(sqlite3_stmt *st, const char *name, const char *v)
{
    int i = store_param(st, name);
    if (!v || !*v)
        return sqlite3_bind_null(st, i);
    return sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

static int store_bind_int(sqlite3_stmt *st, const char *name, long long v)
{
    return sqlite3_bind_int64(st, store_param(st, name), v);
}

/* NaN is stored as NULL. */
static int store_bind_real(sqlite3_stmt *st, const char *name, double v)
{
    int i = store_param(st, name);
    return isnan(v) ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, v);
}

static int store_bind_run(sqlite3_stmt *st, const store_run *r, char *seed, size_t n_seed)
{
    snprintf(seed, n_seed, "%llu", r->seed);
    const char *texts[][2] = {
        {"run_id", r->run_id},
        {"experiment", r->experiment},
        {"settings_json", r->settings_json},
        {"dataset", r->dataset},
        {"graph", r->graph},
        {"graph_checksum", r->graph_checksum},
        {"graph_origin", r->graph_origin},
        {"cluster", r->cluster},
        {"simulator", r->simulator},
        {"simulator_version", r->simulator_version},
        {"placer", r->placer},
        {"placer_version", r->placer_version},
        {"embedding", r->embedding},
        {"embedding_version", r->embedding_version},
        {"traversal", r->traversal},
        {"traversal_version", r->traversal_version},
        {"seed", seed},
        {"placebench_version", r->placebench_version},
        {"error", r->error},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        rc |= store_bind_text(st, texts[i][0], texts[i][1]);
    rc |= store_bind_int(st, "n_nodes", r->n_nodes);
    rc |= store_bind_int(st, "n_devices", r->n_devices);
    rc |= store_bind_int(st, "repeat", r->repeat);
    rc |= store_bind_int(st, "status", r->status);
    rc |= store_bind_int(st, "sim_calls", r->sim_calls);
    rc |= store_bind_real(st, "initial_us", r->initial_us);
    rc |= store_bind_real(st, "best_us", r->best_us);
    rc |= store_bind_real(st, "search_wall_s", r->search_wall_s);
    rc |= store_bind_real(st, "started_at", r->started_at);
    rc |= store_bind_real(st, "finished_at", r->finished_at);
    /* A failed run has no verdict: its placer returned no strategy to judge. */
    int ok = r->status == STORE_OK;
    rc |= ok ? store_bind_int(st, "feasible", r->feasible != 0)
             : sqlite3_bind_null(st, store_param(st, "feasible"));
    rc |= store_bind_real(st, "throughput", ok ? r->throughput : NAN);
    rc |= store_bind_real(st, "monetary_cost", ok ? r->monetary_cost : NAN);
    return rc;
}

/* "INSERT OR IGNORE INTO runs(...) VALUES(:...)"; caller frees. */
static char *store_insert_run_sql(void)
{
    char *cols = store_column_list(store_run_columns, store_n_run_columns, "");
    char *params = store_column_list(store_run_columns, store_n_run_columns, ":");
    char *sql = NULL;
    if (cols && params) {
        size_t len = strlen(cols) + strlen(params) + 64;
        if ((sql = malloc(len)))
            snprintf(sql, len, "INSERT OR IGNORE INTO runs(%s) VALUES(%s)", cols, params);
    }
    free(cols);
    free(params);
    return sql;
}

/* Inserts the run; *inserted is 0 when its run_id was already stored. */
static int store_insert_run(store *s, const store_run *r, int *inserted, pb_error *err)
{
    char *sql = store_insert_run_sql();
    if (!sql)
        return pb_errorf(err, "%s: out of memory", s->path);
    sqlite3_stmt *st;
    int rc = store_prepare(s, sql, &st, err);
    free(sql);
    if (rc)
        return PB_ERR;
    char seed[32];
    if (store_bind_run(st, r, seed, sizeof seed) != SQLITE_OK) {
        store_sql_error(s, "binding a run", err);
        sqlite3_finalize(st);
        return PB_ERR;
    }
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return store_sql_error(s, "writing a run", err);
    *inserted = sqlite3_changes(s->db) > 0;
    return PB_OK;
}

static int store_insert_curve(store *s, const char *run_id, const store_curve_point *curve,
                              int n_curve, pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s,
                      "INSERT INTO curve(run_id, episode, episode_best_us, best_so_far_us, "
                      "sim_calls, wall_s) VALUES(:run_id, :episode, :episode_best_us, "
                      ":best_so_far_us, :sim_calls, :wall_s)",
                      &st, err))
        return PB_ERR;
    int rc = SQLITE_DONE;
    for (int i = 0; i < n_curve && rc == SQLITE_DONE; i++) {
        const store_curve_point *p = &curve[i];
        sqlite3_reset(st);
        if (store_bind_text(st, "run_id", run_id) | store_bind_int(st, "episode", p->episode) |
            store_bind_real(st, "episode_best_us", p->episode_best_us) |
            store_bind_real(st, "best_so_far_us", p->best_so_far_us) |
            store_bind_int(st, "sim_calls", p->sim_calls) |
            store_bind_real(st, "wall_s", p->wall_s))
            rc = SQLITE_ERROR;
        else
            rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "writing a curve point", err);
}

static int store_insert_log(store *s, const char *run_id, const char *text, pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "INSERT INTO log(run_id, text) VALUES(?, ?)", &st, err))
        return PB_ERR;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "writing a run's log", err);
}

static int store_check_run(store *s, const store_run *r, const store_curve_point *curve,
                           int n_curve, pb_error *err)
{
    if (!r->run_id || !*r->run_id)
        return pb_errorf(err, "%s: a run without run_id", s->path);
    if (r->status < STORE_OK || r->status > STORE_TIMEOUT)
        return pb_errorf(err, "%s: run %s: status %d is not a store_status", s->path, r->run_id,
                         r->status);
    if (n_curve < 0 || (n_curve > 0 && !curve))
        return pb_errorf(err, "%s: run %s: bad curve (%d points)", s->path, r->run_id, n_curve);
    return PB_OK;
}

/* A file holding one experiment's runs does not take another's. */
static int store_check_run_experiment(store *s, const store_run *r, pb_error *err)
{
    if (!r->experiment || !*r->experiment)
        return PB_OK;
    char *held = NULL;
    if (store_experiment_name(s, &held, err))
        return PB_ERR;
    int rc = PB_OK;
    if (held && strcmp(held, r->experiment) != 0)
        rc = pb_errorf(err, "%s: holds results of experiment '%s', not '%s' (run %s)", s->path,
                       held, r->experiment, r->run_id);
    free(held);
    return rc;
}

int store_put_run(store *s, const store_run *r, const store_curve_point *curve, int n_curve,
                  pb_error *err)
{
    if (store_check_run(s, r, curve, n_curve, err))
        return PB_ERR;
    if (store_exec(s, "BEGIN IMMEDIATE", err))
        return PB_ERR;
    int inserted = 0;
    if (store_check_run_experiment(s, r, err) || store_insert_run(s, r, &inserted, err))
        return store_rollback(s);
    if (inserted && store_insert_curve(s, r->run_id, curve, n_curve, err))
        return store_rollback(s);
    if (inserted && r->log && *r->log && store_insert_log(s, r->run_id, r->log, err))
        return store_rollback(s);
    if (store_unclaim(s, r->run_id, err))
        return store_rollback(s);
    return store_exec(s, "COMMIT", err) ? store_rollback(s) : PB_OK;
}
