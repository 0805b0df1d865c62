/* store_merge.c — joining the shard files of one experiment into one results file. */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
static int store_merge_shard(store *s, const char *shard, pb_error *err)
{
    if (store_exec(s, "BEGIN", err))
        return PB_ERR;
    int rc = store_exec(s,
                        "INSERT INTO main.experiment SELECT * FROM shard.experiment "
                        "WHERE NOT EXISTS (SELECT 1 FROM main.experiment) ORDER BY rowid LIMIT 1",
                        err);
    if (rc == PB_OK)
        rc = store_merge_copy(s, store_curve_columns, store_n_curve_columns,
                              "INSERT INTO main.curve(%s) SELECT %s FROM shard.curve "
                              "WHERE run_id NOT IN (SELECT run_id FROM main.runs) "
                              "ORDER BY run_id, episode, rowid",
                              shard, err);
    if (rc == PB_OK)
        rc = store_merge_copy(s, store_run_columns, store_n_run_columns,
                              "INSERT OR IGNORE INTO main.runs(%s) SELECT %s FROM shard.runs "
                              "ORDER BY run_id",
                              shard, err);
    if (rc == PB_OK)
        rc = store_exec(s, "COMMIT", err);
    return rc == PB_OK ? PB_OK : store_rollback(s);
}

static int store_merge_attach(store *s, const char *shard, pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "ATTACH DATABASE ? AS shard", &st, err))
        return PB_ERR;
    sqlite3_bind_text(st, 1, shard, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pb_errorf(err, "%s: cannot attach %s: %s", s->path, shard, sqlite3_errmsg(s->db));
    rc = store_merge_shard(s, shard, err);
    if (store_exec(s, "DETACH DATABASE shard", rc ? NULL : err))
        return PB_ERR;
    return rc;
}

int store_merge(const char *out, const char *const *inputs, int n, pb_error *err)
{
    if (n < 1)
        return pb_errorf(err, "%s: no shard files to merge", out);
    if (store_merge_check(out, inputs, n, err))
        return PB_ERR;
    store *s;
    if (store_open(out, 1, &s, err))
        return PB_ERR;
    int rc = PB_OK;
    for (int i = 0; i < n && rc == PB_OK; i++)
        rc = store_merge_attach(s, inputs[i], err);
    store_close(s);
    return rc;
}
