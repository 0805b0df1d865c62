/* store_merge.c — joining the shard files of one experiment into one results file. */
#include "store_internal.h"

#include "core/array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Two rows of one run id conflict when their results or settings differ; the wall time and the
 * start and finish times are expected to differ between two executions of one run.  The
 * simulator's verdict is compared only when both rows have one (rows of schema 1 files do not). */
#define STORE_MERGE_DIFFERS                                                                        \
    "(a.status IS NOT b.status OR a.initial_us IS NOT b.initial_us OR a.best_us IS NOT "           \
    "b.best_us OR a.sim_calls IS NOT b.sim_calls OR a.settings_json IS NOT b.settings_json OR "    \
    "a.graph_checksum IS NOT b.graph_checksum OR (a.feasible IS NOT NULL AND b.feasible IS NOT "   \
    "NULL AND (a.feasible IS NOT b.feasible OR a.throughput IS NOT b.throughput OR "               \
    "a.monetary_cost IS NOT b.monetary_cost)))"

/* The columns of seen (store_merge_find_conflicts): those STORE_MERGE_DIFFERS compares. */
#define STORE_MERGE_SEEN_COLUMNS                                                                   \
    "status, initial_us, best_us, sim_calls, settings_json, graph_checksum, feasible, "            \
    "throughput, monetary_cost"

/* Copies the runs of the attached file `schema` into the temporary table `table`, with every
 * column of this schema (NULL where an older file lacks one). */
static int store_merge_runs_copy(store *s, const char *schema, const char *table, pb_error *err)
{
    char *list = store_run_select_list(s, schema, "");
    if (!list)
        return pb_errorf(err, "%s: out of memory", s->path);
    size_t len = strlen(list) + 128;
    char *sql = malloc(len);
    if (sql)
        snprintf(sql, len, "CREATE TEMP TABLE %s AS SELECT %s FROM \"%s\".runs", table, list,
                 schema);
    free(list);
    if (!sql)
        return pb_errorf(err, "%s: out of memory", s->path);
    int rc = store_exec(s, sql, err);
    free(sql);
    return rc;
}

/* The conflicting run ids found between one pair of files, as text for a message. */
typedef struct store_merge_pair {
    int first, second; /* indices into the file list */
    int n;
    char ids[256];
} store_merge_pair;

typedef struct store_merge_conflicts {
    store_merge_pair *pairs;
    int n_pairs, cap_pairs;
    int total;
} store_merge_conflicts;

/* The experiment a results file holds (NULL when none yet), read through a validating open. */
static int store_merge_read_name(const char *path, char **name, pb_error *err)
{
    store *s;
    if (store_open_readonly(path, &s, err))
        return PB_ERR;
    int rc = store_experiment_name(s, name, err);
    store_close(s);
    return rc;
}

/* Remembers the first experiment seen and refuses files of another one. */
static int store_merge_agree(char **name, const char **from, const char *path, char *held,
                             pb_error *err)
{
    if (!held)
        return PB_OK;
    if (!*name) {
        *name = held;
        *from = path;
        return PB_OK;
    }
    int rc = PB_OK;
    if (strcmp(*name, held) != 0)
        rc = pb_errorf(err, "cannot merge: %s holds experiment '%s', %s holds '%s'", *from, *name,
                       path, held);
    free(held);
    return rc;
}

static int store_merge_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Checks every input (and an existing output) before anything is written. */
static int store_merge_check(const char *out, const char *const *inputs, int n, pb_error *err)
{
    char *name = NULL;
    const char *from = NULL;
    int rc = PB_OK;
    struct stat sb;
    if (stat(out, &sb) == 0) {
        char *held = NULL;
        rc = store_merge_read_name(out, &held, err);
        if (rc == PB_OK)
            rc = store_merge_agree(&name, &from, out, held, err);
    }
    for (int i = 0; i < n && rc == PB_OK; i++) {
        char *held = NULL;
        if (store_merge_same_file(out, inputs[i]))
            rc = pb_errorf(err, "cannot merge: %s is both the output and an input", inputs[i]);
        else if ((rc = store_merge_read_name(inputs[i], &held, err)) == PB_OK)
            rc = store_merge_agree(&name, &from, inputs[i], held, err);
    }
    free(name);
    return rc;
}

/* "INSERT ... SELECT" of the given table from the attached shard; sql_fmt takes the column list
 * twice. */
static int store_merge_copy(store *s, const store_column *cols, int n, const char *sql_fmt,
                            const char *shard, pb_error *err)
{
    char *list = store_column_list(cols, n, "");
    if (!list)
        return pb_errorf(err, "%s: out of memory", s->path);
    size_t len = 2 * strlen(list) + strlen(sql_fmt) + 1;
    char *sql = malloc(len);
    if (sql)
        snprintf(sql, len, sql_fmt, list, list);
    free(list);
    if (!sql)
        return pb_errorf(err, "%s: out of memory", s->path);
    char *msg = NULL;
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
    free(sql);
    if (rc != SQLITE_OK) {
        pb_errorf(err, "%s: merging %s: %s", s->path, shard, msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return PB_ERR;
    }
    return PB_OK;
}

/* Copies the shard's experiment record (when the output has none), then the curves of the runs
 * the output lacks, then those runs: one transaction. */
static int store_merge_shard(store *s, const char *shard, int prefer, pb_error *err)
{
    if (store_exec(s, "BEGIN", err))
        return PB_ERR;
    int rc = store_merge_runs_copy(s, "shard", "shard_runs", err);
    /* The shard's version of a conflicting run replaces the output's, curve and all. */
    if (rc == PB_OK && prefer == STORE_PREFER_LAST)
        rc = store_exec(s,
                        "CREATE TEMP TABLE replaced AS SELECT b.run_id FROM temp.shard_runs b "
                        "JOIN main.runs a ON a.run_id = b.run_id WHERE " STORE_MERGE_DIFFERS
                        "; DELETE FROM main.curve WHERE run_id IN replaced; "
                        "DELETE FROM main.log WHERE run_id IN replaced; "
                        "DELETE FROM main.runs WHERE run_id IN replaced; DROP TABLE replaced",
                        err);
    if (rc == PB_OK)
        rc = store_exec(s,
                        "INSERT INTO main.experiment SELECT * FROM shard.experiment "
                        "WHERE NOT EXISTS (SELECT 1 FROM main.experiment) ORDER BY rowid LIMIT 1",
                        err);
    if (rc == PB_OK)
        rc = store_merge_copy(s, store_curve_columns, store_n_curve_columns,
                              "INSERT INTO main.curve(%s) SELECT %s FROM shard.curve "
                              "WHERE run_id NOT IN (SELECT run_id FROM main.runs) "
                              "ORDER BY run_id, episode, rowid",
                              shard, err);
    if (rc == PB_OK && store_has_table(s, "shard", "log"))
        rc = store_exec(s,
                        "INSERT INTO main.log(run_id, text) SELECT run_id, text FROM shard.log "
                        "WHERE run_id NOT IN (SELECT run_id FROM main.runs) ORDER BY run_id",
                        err);
    if (rc == PB_OK)
        rc = store_merge_copy(s, store_run_columns, store_n_run_columns,
                              "INSERT OR IGNORE INTO main.runs(%s) SELECT %s FROM temp.shard_runs "
                              "ORDER BY run_id",
                              shard, err);
    if (rc == PB_OK)
        rc = store_exec(s, "DROP TABLE temp.shard_runs; COMMIT", err);
    return rc == PB_OK ? PB_OK : store_rollback(s);
}

static int store_merge_attach(store *s, const char *shard, int prefer, pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "ATTACH DATABASE ? AS shard", &st, err))
        return PB_ERR;
    sqlite3_bind_text(st, 1, shard, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pb_errorf(err, "%s: cannot attach %s: %s", s->path, shard, sqlite3_errmsg(s->db));
    rc = store_merge_shard(s, shard, prefer, err);
    if (store_exec(s, "DETACH DATABASE shard", rc ? NULL : err))
        return PB_ERR;
    return rc;
}

static void store_merge_note(store_merge_conflicts *c, int first, int second, const char *id)
{
    store_merge_pair *p = NULL;
    for (int i = 0; i < c->n_pairs && !p; i++)
        if (c->pairs[i].first == first && c->pairs[i].second == second)
            p = &c->pairs[i];
    if (!p) {
        if (array_grow(&c->pairs, &c->cap_pairs, c->n_pairs + 1, sizeof *c->pairs))
            return;
        p = &c->pairs[c->n_pairs++];
        *p = (store_merge_pair){first, second, 0, ""};
    }
    size_t at = strlen(p->ids);
    snprintf(p->ids + at, sizeof p->ids - at, "%s%s", p->n ? ", " : "", id);
    p->n++;
    c->total++;
}

/* Compares the runs of the attached file `src` (file k) with those seen so far in the scratch
 * table, then records src's rows (replacing the earlier ones when the last file is preferred). */
static int store_merge_scan(store *scratch, int k, int prefer, store_merge_conflicts *c,
                            pb_error *err)
{
    if (store_merge_runs_copy(scratch, "src", "src_runs", err))
        return PB_ERR;
    sqlite3_stmt *st;
    if (store_prepare(scratch,
                      "SELECT b.run_id, a.file FROM temp.src_runs b JOIN seen a ON a.run_id = "
                      "b.run_id WHERE " STORE_MERGE_DIFFERS " ORDER BY b.run_id",
                      &st, err))
        return PB_ERR;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        store_merge_note(c, sqlite3_column_int(st, 1), k, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return store_sql_error(scratch, "comparing runs", err);
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT OR %s INTO seen SELECT run_id, %d, " STORE_MERGE_SEEN_COLUMNS
             " FROM temp.src_runs; DROP TABLE temp.src_runs",
             prefer == STORE_PREFER_LAST ? "REPLACE" : "IGNORE", k);
    return store_exec(scratch, sql, err);
}

static int store_merge_scan_file(store *scratch, const char *path, int k, int prefer,
                                 store_merge_conflicts *c, pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(scratch, "ATTACH DATABASE ? AS src", &st, err))
        return PB_ERR;
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pb_errorf(err, "cannot read %s: %s", path, sqlite3_errmsg(scratch->db));
    rc = store_merge_scan(scratch, k, prefer, c, err);
    if (store_exec(scratch, "DETACH DATABASE src", rc ? NULL : err))
        return PB_ERR;
    return rc;
}

/* Finds the run ids whose rows conflict between the files (an existing output first, then the
 * inputs in order), before anything is written. */
static int store_merge_find_conflicts(const char *const *files, int n, int prefer,
                                      store_merge_conflicts *c, pb_error *err)
{
    store scratch = {NULL, (char *)"merge"};
    if (sqlite3_open(":memory:", &scratch.db) != SQLITE_OK) {
        sqlite3_close(scratch.db);
        return pb_errorf(err, "merge: out of memory");
    }
    int rc = store_exec(
        &scratch,
        "CREATE TABLE seen(run_id TEXT PRIMARY KEY, file INTEGER, " STORE_MERGE_SEEN_COLUMNS ")",
        err);
    for (int k = 0; k < n && rc == PB_OK; k++)
        rc = store_merge_scan_file(&scratch, files[k], k, prefer, c, err);
    sqlite3_close(scratch.db);
    return rc;
}

/* "2 runs differ between a.db and b.db: r1, r2; 1 between ..." into buf. */
static void store_merge_describe(const store_merge_conflicts *c, const char *const *files,
                                 char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->n_pairs && at < n; i++) {
        const store_merge_pair *p = &c->pairs[i];
        at +=
            (size_t)snprintf(buf + at, n - at, "%s%d run%s %s between %s and %s: %s", i ? "; " : "",
                             p->n, p->n == 1 ? "" : "s", p->n == 1 ? "differs" : "differ",
                             files[p->first], files[p->second], p->ids);
    }
}

int store_merge(const char *out, const char *const *inputs, int n, int prefer, char **resolved,
                pb_error *err)
{
    *resolved = NULL;
    if (n < 1)
        return pb_errorf(err, "%s: no shard files to merge", out);
    if (store_merge_check(out, inputs, n, err))
        return PB_ERR;
    struct stat sb;
    int has_out = stat(out, &sb) == 0;
    const char **files = malloc((size_t)(n + 1) * sizeof *files);
    if (!files)
        return pb_errorf(err, "out of memory");
    if (has_out)
        files[0] = out;
    memcpy(files + has_out, inputs, (size_t)n * sizeof *files);
    store_merge_conflicts c = {0};
    char text[2048];
    int rc = store_merge_find_conflicts(files, n + has_out, prefer, &c, err);
    if (rc == PB_OK && c.total > 0) {
        store_merge_describe(&c, files, text, sizeof text);
        if (prefer == STORE_PREFER_NONE)
            rc = pb_errorf(err, "cannot merge: %s; use --prefer first|last to keep one side", text);
        else if (!(*resolved = malloc(strlen(text) + 80)))
            rc = pb_errorf(err, "out of memory");
        else
            sprintf(*resolved, "%d conflicting run%s resolved (--prefer %s): %s", c.total,
                    c.total == 1 ? "" : "s", prefer == STORE_PREFER_LAST ? "last" : "first", text);
    }
    free(c.pairs);
    free(files);
    store *s;
    if (rc != PB_OK || store_open(out, 1, &s, err)) {
        free(*resolved);
        *resolved = NULL;
        return PB_ERR;
    }
    for (int i = 0; i < n && rc == PB_OK; i++)
        rc = store_merge_attach(s, inputs[i], prefer, err);
    store_close(s);
    return rc;
}
