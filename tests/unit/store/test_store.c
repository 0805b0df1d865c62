/* test_store.c — the results store: exactly-once writes, refusals, merge, exports, report and
 * plot data. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

typedef struct test_dir {
    char path[64];
} test_dir;

static void test_dir_make(test_dir *d)
{
    snprintf(d->path, sizeof d->path, "/tmp/pb_test_store_XXXXXX");
    assert_non_null(mkdtemp(d->path));
}

/* Removes the folder and the files in it (the tests make no subfolders). */
static void test_dir_remove(test_dir *d)
{
    DIR *dir = opendir(d->path);
    assert_non_null(dir);
    struct dirent *e;
    char p[512];
    while ((e = readdir(dir))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", d->path, e->d_name);
        chmod(p, 0600);
        remove(p);
    }
    closedir(dir);
    rmdir(d->path);
}

static void test_path(char *buf, size_t n, const test_dir *d, const char *name)
{
    snprintf(buf, n, "%s/%s", d->path, name);
}

static store_run test_run(const char *id, const char *graph, int repeat, double initial,
                          double best)
{
    store_run r = {0};
    r.run_id = id;
    r.experiment = "exp";
    r.settings_json = "{\"placer\":\"random\"}";
    r.dataset = "ds";
    r.graph = graph;
    r.graph_checksum = "abc123";
    r.n_nodes = 10;
    r.n_devices = 3;
    r.cluster = "placeto-k80";
    r.simulator = "placeto";
    r.simulator_version = "1.0.0";
    r.placer = "random";
    r.placer_version = "1.0.0";
    r.repeat = repeat;
    r.seed = 42;
    r.placebench_version = "0.1.0 (git test)";
    r.status = STORE_OK;
    r.initial_us = initial;
    r.best_us = best;
    r.search_wall_s = 1.5;
    r.sim_calls = 100;
    r.started_at = 1700000000.25;
    r.finished_at = 1700000001.75;
    return r;
}

/* n points: episode i, best so far start - i. */
static store_curve_point *test_curve(int n, double start)
{
    store_curve_point *c = calloc((size_t)n, sizeof *c);
    assert_non_null(c);
    for (int i = 0; i < n; i++)
        c[i] = (store_curve_point){i, start - i + 0.5, start - i, 10LL * (i + 1), 0.5 * (i + 1)};
    return c;
}

static store *test_open_new(const char *path)
{
    store *s = NULL;
    pb_error err = {{0}};
    int rc = store_open(path, 1, &s, &err);
    if (rc)
        fail_msg("store_open: %s", err.msg);
    rc = store_set_experiment(s, "exp", "{\"name\":\"exp\"}", 7, &err);
    if (rc)
        fail_msg("store_set_experiment: %s", err.msg);
    return s;
}

static void test_put(store *s, const store_run *r, const store_curve_point *c, int n)
{
    pb_error err = {{0}};
    if (store_put_run(s, r, c, n, &err))
        fail_msg("store_put_run: %s", err.msg);
}

/* Captures what fn writes to a FILE into a malloc'ed string. */
static char *test_capture_export(store *s, int curves, int jsonl)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    pb_error err = {{0}};
    int rc = curves ? store_export_curves(s, f, jsonl, &err) : store_export_runs(s, f, jsonl, &err);
    fclose(f);
    if (rc)
        fail_msg("export: %s", err.msg);
    return buf;
}

static char *test_capture_report(store *s, int format)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    pb_error err = {{0}};
    int rc = store_report_summary(s, f, format, &err);
    fclose(f);
    if (rc)
        fail_msg("report: %s", err.msg);
    return buf;
}

/* An RFC 4180 reader: rows of fields, each field malloc'ed. */
typedef struct test_csv {
    char ***rows;
    int *n_fields;
    int n_rows;
} test_csv;

static void test_csv_add_field(test_csv *t, char *field)
{
    int r = t->n_rows - 1;
    t->rows[r] = realloc(t->rows[r], (size_t)(t->n_fields[r] + 1) * sizeof(char *));
    t->rows[r][t->n_fields[r]++] = field;
}

static void test_csv_add_row(test_csv *t)
{
    t->rows = realloc(t->rows, (size_t)(t->n_rows + 1) * sizeof *t->rows);
    t->n_fields = realloc(t->n_fields, (size_t)(t->n_rows + 1) * sizeof *t->n_fields);
    t->rows[t->n_rows] = NULL;
    t->n_fields[t->n_rows++] = 0;
}

static test_csv test_csv_parse(const char *text)
{
    test_csv t = {0};
    const char *p = text;
    while (*p) {
        test_csv_add_row(&t);
        for (;;) {
            char *field = calloc(strlen(p) + 1, 1);
            size_t n = 0;
            if (*p == '"') {
                for (p++;; p++) {
                    assert_true(*p != '\0'); /* unterminated quote */
                    if (*p == '"' && p[1] == '"')
                        field[n++] = *p++;
                    else if (*p == '"')
                        break;
                    else
                        field[n++] = *p;
                }
                p++;
            } else {
                while (*p && *p != ',' && *p != '\n')
                    field[n++] = *p++;
            }
            test_csv_add_field(&t, field);
            if (*p == ',') {
                p++;
                continue;
            }
            assert_true(*p == '\n');
            p++;
            break;
        }
    }
    return t;
}

static void test_csv_free(test_csv *t)
{
    for (int r = 0; r < t->n_rows; r++) {
        for (int i = 0; i < t->n_fields[r]; i++)
            free(t->rows[r][i]);
        free(t->rows[r]);
    }
    free(t->rows);
    free(t->n_fields);
}

/* Index of column name in the header row; fails when absent. */
static int test_csv_col(const test_csv *t, const char *name)
{
    for (int i = 0; i < t->n_fields[0]; i++)
        if (strcmp(t->rows[0][i], name) == 0)
            return i;
    fail_msg("no column %s", name);
    return -1;
}

static int test_have_sqlite3_cli(void)
{
    return system("command -v sqlite3 >/dev/null 2>&1") == 0;
}

static void test_sqlite3(const char *db, const char *sql)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "sqlite3 '%s' \"%s\"", db, sql);
    assert_int_equal(system(cmd), 0);
}

/* ---------------------------------------------------------------- open, put, exactly once */

static void test_create_put_has(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store *s = test_open_new(db);
    assert_int_equal(store_count_runs(s), 0);
    store_curve_point *c = test_curve(5, 100);
    store_run r = test_run("run-a", "g1", 0, 120, 96);
    test_put(s, &r, c, 5);
    assert_true(store_has_run(s, "run-a"));
    assert_false(store_has_run(s, "run-b"));
    assert_int_equal(store_count_runs(s), 1);
    assert_string_equal(store_path(s), db);
    store_close(s);
    free(c);
    test_dir_remove(&d);
}

static void test_exactly_once(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store *s = test_open_new(db);
    store_curve_point *c = test_curve(3, 50);
    store_run first = test_run("same", "g1", 0, 60, 47);
    store_run second = test_run("same", "g1", 0, 999, 888);
    test_put(s, &first, c, 3);
    test_put(s, &second, c, 1); /* PB_OK, and nothing changes */
    assert_int_equal(store_count_runs(s), 1);
    char *runs = test_capture_export(s, 0, 0);
    test_csv t = test_csv_parse(runs);
    assert_int_equal(t.n_rows, 2);
    assert_string_equal(t.rows[1][test_csv_col(&t, "best_us")], "47");
    assert_string_equal(t.rows[1][test_csv_col(&t, "initial_us")], "60");
    test_csv_free(&t);
    char *curves = test_capture_export(s, 1, 0);
    test_csv tc = test_csv_parse(curves);
    assert_int_equal(tc.n_rows, 1 + 3);
    test_csv_free(&tc);
    free(runs);
    free(curves);
    store_close(s);
    free(c);
    test_dir_remove(&d);
}

static void test_reopen(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store *s = test_open_new(db);
    store_run r1 = test_run("r1", "g1", 0, 10, 9), r2 = test_run("r2", "g1", 1, 10, 8);
    test_put(s, &r1, NULL, 0);
    test_put(s, &r2, NULL, 0);
    store_close(s);

    pb_error err = {{0}};
    assert_int_equal(store_open(db, 0, &s, &err), PB_OK);
    assert_int_equal(store_count_runs(s), 2);
    assert_true(store_has_run(s, "r2"));
    /* The same experiment may be set again (a resumed sweep does). */
    assert_int_equal(store_set_experiment(s, "exp", "{}", 7, &err), PB_OK);
    store_close(s);
    assert_int_equal(store_open_readonly(db, &s, &err), PB_OK);
    assert_int_equal(store_count_runs(s), 2);
    store_close(s);
    test_dir_remove(&d);
}

static void test_experiment_mismatch(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store *s = test_open_new(db);
    pb_error err = {{0}};
    assert_int_equal(store_set_experiment(s, "other", "{}", 1, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "'exp'"));
    assert_non_null(strstr(err.msg, "'other'"));
    assert_non_null(strstr(err.msg, db));
    store_run r = test_run("x", "g1", 0, 1, 1);
    r.experiment = "other";
    assert_int_equal(store_put_run(s, &r, NULL, 0, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "'other'"));
    assert_int_equal(store_count_runs(s), 0);
    store_close(s);
    test_dir_remove(&d);
}

/* ---------------------------------------------------------------- refusals */

static void test_no_create_when_asked_not_to(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "missing.db");
    store *s = (store *)1;
    pb_error err = {{0}};
    assert_int_equal(store_open(db, 0, &s, &err), PB_ERR);
    assert_null(s);
    assert_non_null(strstr(err.msg, db));
    struct stat sb;
    assert_int_equal(stat(db, &sb), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(store_open_readonly(db, &s, &err), PB_ERR);
    assert_int_equal(stat(db, &sb), -1);
    test_dir_remove(&d);
}

static void test_directory_refused(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    store *s;
    pb_error err = {{0}};
    assert_int_equal(store_open(d.path, 1, &s, &err), PB_ERR);
    assert_non_null(strstr(err.msg, d.path));
    assert_non_null(strstr(err.msg, "directory"));
    test_dir_remove(&d);
}

static void test_non_sqlite_refused(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char path[128];
    test_path(path, sizeof path, &d, "notes.txt");
    const char text[] = "these are my notes, not a database; please keep them as they are\n";
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 100; i++)
        fputs(text, f);
    fclose(f);
    store *s;
    pb_error err = {{0}};
    assert_int_equal(store_open(path, 1, &s, &err), PB_ERR);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "not an SQLite database"));
    /* The file is left as it was. */
    f = fopen(path, "r");
    char line[256];
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, text);
    fclose(f);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, 100 * (long)(sizeof text - 1));
    test_dir_remove(&d);
}

static void test_newer_schema_refused(void **state)
{
    (void)state;
    if (!test_have_sqlite3_cli())
        skip();
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store_close(test_open_new(db));
    test_sqlite3(db, "UPDATE meta SET value = '4' WHERE key = 'schema_version'");
    store *s;
    pb_error err = {{0}};
    assert_int_equal(store_open(db, 1, &s, &err), PB_ERR);
    assert_non_null(strstr(err.msg, db));
    assert_non_null(strstr(err.msg, "newer"));
    assert_int_equal(store_open_readonly(db, &s, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "version 4"));
    test_dir_remove(&d);
}

static void test_foreign_database_refused(void **state)
{
    (void)state;
    if (!test_have_sqlite3_cli())
        skip();
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "other.db");
    test_sqlite3(db, "CREATE TABLE accounts(id INTEGER)");
    store *s;
    pb_error err = {{0}};
    assert_int_equal(store_open(db, 1, &s, &err), PB_ERR);
    assert_non_null(strstr(err.msg, db));
    assert_non_null(strstr(err.msg, "not a placebench results file"));
    test_dir_remove(&d);
}

static void test_unreadable_refused(void **state)
{
    (void)state;
    if (geteuid() == 0) /* root reads anything */
        skip();
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store_close(test_open_new(db));
    assert_int_equal(chmod(db, 0), 0);
    store *s;
    pb_error err = {{0}};
    assert_int_equal(store_open(db, 0, &s, &err), PB_ERR);
    assert_non_null(strstr(err.msg, db));
    assert_non_null(strstr(err.msg, "cannot read"));
    test_dir_remove(&d);
}

/* ---------------------------------------------------------------- exports */

static void test_nan_becomes_null(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store *s = test_open_new(db);
    store_run r = test_run("nan-run", "g1", 0, NAN, NAN);
    r.embedding = "";
    r.status = STORE_FAILED;
    r.error = "plugin said no";
    store_curve_point p = {0, NAN, 5.0, 3, NAN};
    test_put(s, &r, &p, 1);
    char *jl = test_capture_export(s, 0, 1);
    json_error_t je;
    json_t *o = json_loads(jl, 0, &je);
    if (!o)
        fail_msg("jsonl: %s", je.text);
    assert_true(json_is_null(json_object_get(o, "initial_us")));
    assert_true(json_is_null(json_object_get(o, "best_us")));
    assert_true(json_is_null(json_object_get(o, "embedding")));
    assert_true(json_is_null(json_object_get(o, "traversal")));
    assert_string_equal(json_string_value(json_object_get(o, "error")), "plugin said no");
    json_decref(o);
    char *cv = test_capture_export(s, 1, 1);
    o = json_loads(cv, 0, &je);
    assert_non_null(o);
    assert_true(json_is_null(json_object_get(o, "episode_best_us")));
    assert_true(json_is_null(json_object_get(o, "wall_s")));
    assert_true(json_number_value(json_object_get(o, "best_so_far_us")) == 5.0);
    json_decref(o);
    char *csv = test_capture_export(s, 0, 0);
    test_csv t = test_csv_parse(csv);
    assert_string_equal(t.rows[1][test_csv_col(&t, "initial_us")], "");
    assert_string_equal(t.rows[1][test_csv_col(&t, "embedding")], "");
    test_csv_free(&t);
    free(jl);
    free(cv);
    free(csv);
    store_close(s);
    test_dir_remove(&d);
}

/* ---------------------------------------------------------------- the simulator's verdict (schema
 * 2) */

/* The one exported JSON object of run `id` (caller decrefs); fails the test when absent. */
static json_t *test_export_object(store *s, const char *id)
{
    char *jl = test_capture_export(s, 0, 1);
    json_t *found = NULL;
    for (char *line = strtok(jl, "\n"); line && !found; line = strtok(NULL, "\n")) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        if (!o)
            fail_msg("jsonl: %s", je.text);
        if (strcmp(json_string_value(json_object_get(o, "run_id")), id) == 0)
            found = o;
        else
            json_decref(o);
    }
    free(jl);
    if (!found)
        fail_msg("run %s not exported", id);
    return found;
}

static store_run test_verdict_run(const char *id, double throughput, double cost)
{
    store_run r = test_run(id, "ctrdnn-16", 0, NAN, 3605595973.6297898);
    r.simulator = "heterps";
    r.feasible = 1;
    r.throughput = throughput;
    r.monetary_cost = cost;
    return r;
}

static void test_verdict_stored(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store *s = test_open_new(db);
    store_run ok = test_verdict_run("ok", 1212967.9423280421, 9.4346427976646154);
    store_run bad = test_verdict_run("bad", 5.0, 6.0);
    bad.status = STORE_FAILED;
    bad.error = "no plan meets the throughput limit";
    store_run infeasible = test_verdict_run("infeasible", 0.1 + 0.2, 1.0 / 3.0);
    infeasible.feasible = 0;
    test_put(s, &ok, NULL, 0);
    test_put(s, &bad, NULL, 0);
    test_put(s, &infeasible, NULL, 0);
    store_close(s);
    pb_error err = {{0}};
    assert_int_equal(store_open_readonly(db, &s, &err), PB_OK);
    json_t *o = test_export_object(s, "ok");
    assert_int_equal(json_integer_value(json_object_get(o, "feasible")), 1);
    assert_true(json_real_value(json_object_get(o, "throughput")) == 1212967.9423280421);
    assert_true(json_real_value(json_object_get(o, "monetary_cost")) == 9.4346427976646154);
    json_decref(o);
    /* A failed run has no verdict, whatever the struct held. */
    o = test_export_object(s, "bad");
    assert_true(json_is_null(json_object_get(o, "feasible")));
    assert_true(json_is_null(json_object_get(o, "throughput")));
    assert_true(json_is_null(json_object_get(o, "monetary_cost")));
    json_decref(o);
    o = test_export_object(s, "infeasible");
    assert_int_equal(json_integer_value(json_object_get(o, "feasible")), 0);
    assert_true(json_real_value(json_object_get(o, "throughput")) == 0.1 + 0.2);
    assert_true(json_real_value(json_object_get(o, "monetary_cost")) == 1.0 / 3.0);
    json_decref(o);
    char *csv = test_capture_export(s, 0, 0);
    test_csv t = test_csv_parse(csv);
    int row_ok = strcmp(t.rows[1][0], "ok") == 0 ? 1 : strcmp(t.rows[2][0], "ok") == 0 ? 2 : 3;
    assert_string_equal(t.rows[row_ok][test_csv_col(&t, "monetary_cost")], "9.434642797664615");
    assert_string_equal(t.rows[row_ok][test_csv_col(&t, "feasible")], "1");
    test_csv_free(&t);
    free(csv);
    store_close(s);
    test_dir_remove(&d);
}

/* Turns a fresh file into one of schema 1: the runs table without the verdict columns. */
static void test_make_schema_1(const char *db)
{
    test_sqlite3(db, "ALTER TABLE runs DROP COLUMN monetary_cost; ALTER TABLE runs DROP COLUMN "
                     "throughput; ALTER TABLE runs DROP COLUMN feasible; UPDATE meta SET value = "
                     "'1' WHERE key = 'schema_version'");
}

/* Non-zero when the runs table of db has the named column (read with the sqlite3 shell). */
static int test_file_has_column(const char *db, const char *column)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "test \"$(sqlite3 '%s' \"SELECT count(*) FROM pragma_table_info('runs') WHERE name = "
             "'%s'\")\" = 1",
             db, column);
    return system(cmd) == 0;
}

static void test_schema_1_read_migrated_merged(void **state)
{
    (void)state;
    if (!test_have_sqlite3_cli())
        skip();
    test_dir d;
    test_dir_make(&d);
    char old[128], fresh[128], out[128];
    test_path(old, sizeof old, &d, "old.db");
    test_path(fresh, sizeof fresh, &d, "new.db");
    test_path(out, sizeof out, &d, "out.db");
    store_curve_point *c3 = test_curve(3, 10);
    store *s = test_open_new(old);
    store_run r1 = test_run("r1", "g1", 0, 12, 8);
    test_put(s, &r1, c3, 3);
    store_close(s);
    test_make_schema_1(old);
    assert_false(test_file_has_column(old, "monetary_cost"));

    /* Read as it is: the missing columns export as null, nothing is written to the file. */
    pb_error err = {{0}};
    assert_int_equal(store_open_readonly(old, &s, &err), PB_OK);
    json_t *o = test_export_object(s, "r1");
    assert_true(json_number_value(json_object_get(o, "best_us")) == 8);
    assert_true(json_is_null(json_object_get(o, "monetary_cost")));
    assert_true(json_is_null(json_object_get(o, "feasible")));
    json_decref(o);
    store_close(s);
    assert_false(test_file_has_column(old, "monetary_cost"));

    /* Merged with a schema 2 file holding the same run (with a verdict) and another: no conflict,
     * the old row and its curve kept, the new run's verdict carried. */
    s = test_open_new(fresh);
    store_run r1v = test_verdict_run("r1", 2.5, 4.25);
    r1v.graph = "g1";
    r1v.initial_us = 12;
    r1v.best_us = 8;
    store_run r2 = test_verdict_run("r2", 1e6, 7.5);
    test_put(s, &r1v, NULL, 0);
    test_put(s, &r2, NULL, 0);
    store_close(s);
    const char *inputs[] = {old, fresh};
    char *resolved = NULL;
    if (store_merge(out, inputs, 2, STORE_PREFER_NONE, &resolved, &err))
        fail_msg("merge: %s", err.msg);
    assert_null(resolved);
    assert_int_equal(store_open_readonly(out, &s, &err), PB_OK);
    assert_int_equal(store_count_runs(s), 2);
    o = test_export_object(s, "r1");
    assert_true(json_is_null(json_object_get(o, "monetary_cost")));
    json_decref(o);
    o = test_export_object(s, "r2");
    assert_true(json_number_value(json_object_get(o, "monetary_cost")) == 7.5);
    assert_true(json_number_value(json_object_get(o, "throughput")) == 1e6);
    json_decref(o);
    char *curves = test_capture_export(s, 1, 0);
    test_csv tc = test_csv_parse(curves);
    assert_int_equal(tc.n_rows, 1 + 3);
    test_csv_free(&tc);
    free(curves);
    store_close(s);

    /* Opened for writing: migrated in place, the old row kept, new runs carry their verdict. */
    assert_int_equal(store_open(old, 0, &s, &err), PB_OK);
    assert_true(test_file_has_column(old, "monetary_cost"));
    store_run r3 = test_verdict_run("r3", 3.0, 2.0);
    test_put(s, &r3, NULL, 0);
    o = test_export_object(s, "r1");
    assert_true(json_number_value(json_object_get(o, "initial_us")) == 12);
    assert_true(json_is_null(json_object_get(o, "throughput")));
    json_decref(o);
    o = test_export_object(s, "r3");
    assert_true(json_number_value(json_object_get(o, "monetary_cost")) == 2.0);
    json_decref(o);
    store_close(s);
    /* Opening it again finds nothing to migrate. */
    assert_int_equal(store_open(old, 0, &s, &err), PB_OK);
    assert_int_equal(store_count_runs(s), 2);
    store_close(s);
    test_sqlite3(old, "SELECT 1 FROM meta WHERE key = 'schema_version' AND value = '3'");
    free(c3);
    test_dir_remove(&d);
}

/* Two rows of one run whose verdicts differ conflict like rows whose step times differ. */
static void test_merge_verdict_conflict(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char a[128], b[128], out[128];
    test_path(a, sizeof a, &d, "a.db");
    test_path(b, sizeof b, &d, "b.db");
    test_path(out, sizeof out, &d, "out.db");
    store *s = test_open_new(a);
    store_run ra = test_verdict_run("r", 1e6, 9.5);
    test_put(s, &ra, NULL, 0);
    store_close(s);
    s = test_open_new(b);
    store_run rb = test_verdict_run("r", 1e6, 9.75);
    test_put(s, &rb, NULL, 0);
    store_close(s);
    const char *inputs[] = {a, b};
    char *resolved = NULL;
    pb_error err = {{0}};
    assert_int_equal(store_merge(out, inputs, 2, STORE_PREFER_NONE, &resolved, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "1 run differs between"));
    if (store_merge(out, inputs, 2, STORE_PREFER_LAST, &resolved, &err))
        fail_msg("merge --prefer last: %s", err.msg);
    free(resolved);
    assert_int_equal(store_open_readonly(out, &s, &err), PB_OK);
    json_t *o = test_export_object(s, "r");
    assert_true(json_number_value(json_object_get(o, "monetary_cost")) == 9.75);
    json_decref(o);
    store_close(s);
    test_dir_remove(&d);
}

/* Two runs with awkward strings and numbers; CSV and JSONL read back to the same values. */
static void test_put_awkward_runs(store *s)
{
    store_run a = test_run("a", "g,1", 0, 0.1 + 0.2, 1.0 / 3.0);
    a.error = NULL;
    a.settings_json = "{\"k\":\"v, \\\"quoted\\\"\"}";
    a.seed = 18446744073709551615ULL;
    store_run b = test_run("b", "g\"2\"", 1, 1e-300, 123456789.125);
    b.status = STORE_CRASHED;
    b.error = "line one\nline two, with \"quotes\"\tand tab";
    b.best_us = NAN;
    b.sim_calls = 9007199254740993LL;
    test_put(s, &a, NULL, 0);
    test_put(s, &b, NULL, 0);
}

static void test_export_csv(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store *s = test_open_new(db);
    test_put_awkward_runs(s);
    char *csv = test_capture_export(s, 0, 0);
    test_csv t = test_csv_parse(csv);
    assert_int_equal(t.n_rows, 3);
    assert_int_equal(t.n_fields[0], 32); /* every field of store_run */
    assert_int_equal(t.n_fields[1], 32);
    assert_int_equal(t.n_fields[2], 32);
    assert_string_equal(t.rows[0][0], "run_id");
    assert_string_equal(t.rows[1][0], "a"); /* sorted by run_id */
    assert_string_equal(t.rows[1][test_csv_col(&t, "graph")], "g,1");
    assert_string_equal(t.rows[1][test_csv_col(&t, "settings_json")],
                        "{\"k\":\"v, \\\"quoted\\\"\"}");
    assert_string_equal(t.rows[1][test_csv_col(&t, "seed")], "18446744073709551615");
    assert_true(strtod(t.rows[1][test_csv_col(&t, "initial_us")], NULL) == 0.1 + 0.2);
    assert_true(strtod(t.rows[1][test_csv_col(&t, "best_us")], NULL) == 1.0 / 3.0);
    assert_true(strtod(t.rows[1][test_csv_col(&t, "started_at")], NULL) == 1700000000.25);
    assert_string_equal(t.rows[2][test_csv_col(&t, "graph")], "g\"2\"");
    assert_string_equal(t.rows[2][test_csv_col(&t, "error")],
                        "line one\nline two, with \"quotes\"\tand tab");
    assert_string_equal(t.rows[2][test_csv_col(&t, "status")], "2");
    assert_string_equal(t.rows[2][test_csv_col(&t, "sim_calls")], "9007199254740993");
    assert_true(strtod(t.rows[2][test_csv_col(&t, "initial_us")], NULL) == 1e-300);
    assert_string_equal(t.rows[2][test_csv_col(&t, "best_us")], "");
    test_csv_free(&t);
    free(csv);
    store_close(s);
    test_dir_remove(&d);
}

static void test_export_jsonl(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store *s = test_open_new(db);
    test_put_awkward_runs(s);
    store_curve_point *c = test_curve(4, 30.25);
    store_run r = test_run("c", "g3", 0, 40, 27.25);
    test_put(s, &r, c, 4);
    char *jl = test_capture_export(s, 0, 1);
    /* A seed above 2^63 is written as a plain JSON number. */
    assert_non_null(strstr(jl, "\"seed\":18446744073709551615"));
    char *line = jl;
    int n = 0;
    const char *ids[] = {"a", "b", "c"};
    while (*line) {
        char *end = strchr(line, '\n');
        assert_non_null(end);
        *end = '\0';
        json_error_t je;
        json_t *o = json_loads(line, JSON_DECODE_INT_AS_REAL, &je);
        if (!o)
            fail_msg("line %d: %s", n + 1, je.text);
        assert_int_equal(json_object_size(o), 32);
        assert_string_equal(json_string_value(json_object_get(o, "run_id")), ids[n]);
        if (n == 0) {
            assert_true(json_real_value(json_object_get(o, "initial_us")) == 0.1 + 0.2);
            assert_true(json_real_value(json_object_get(o, "best_us")) == 1.0 / 3.0);
            assert_string_equal(json_string_value(json_object_get(o, "settings_json")),
                                "{\"k\":\"v, \\\"quoted\\\"\"}");
        }
        if (n == 1) {
            assert_string_equal(json_string_value(json_object_get(o, "error")),
                                "line one\nline two, with \"quotes\"\tand tab");
            assert_true(json_is_null(json_object_get(o, "best_us")));
            assert_true(json_real_value(json_object_get(o, "status")) == 2);
        }
        json_decref(o);
        line = end + 1;
        n++;
    }
    assert_int_equal(n, 3);
    free(jl);

    char *cv = test_capture_export(s, 1, 1);
    json_error_t je;
    json_t *first = json_loadb(cv, (size_t)(strchr(cv, '\n') - cv), 0, &je);
    assert_non_null(first);
    assert_string_equal(json_string_value(json_object_get(first, "run_id")), "c");
    assert_int_equal(json_integer_value(json_object_get(first, "episode")), 0);
    assert_true(json_number_value(json_object_get(first, "best_so_far_us")) == 30.25);
    assert_true(json_number_value(json_object_get(first, "episode_best_us")) == 30.75);
    assert_int_equal(json_integer_value(json_object_get(first, "sim_calls")), 10);
    json_decref(first);
    int lines = 0;
    for (const char *p = cv; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 4);
    free(cv);
    free(c);
    store_close(s);
    test_dir_remove(&d);
}

/* ---------------------------------------------------------------- merge */

static void test_merge_overlap(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char a[128], b[128], out[128];
    test_path(a, sizeof a, &d, "a.db");
    test_path(b, sizeof b, &d, "b.db");
    test_path(out, sizeof out, &d, "out.db");
    store_curve_point *c3 = test_curve(3, 10), *c5 = test_curve(5, 20);
    store *s = test_open_new(a);
    store_run r1 = test_run("r1", "g1", 0, 12, 8), r2 = test_run("r2", "g1", 1, 12, 7);
    test_put(s, &r1, c3, 3);
    test_put(s, &r2, c3, 3);
    store_close(s);
    s = test_open_new(b);
    store_run r2b = test_run("r2", "g1", 1, 99, 98), r3 = test_run("r3", "g1", 2, 12, 6);
    test_put(s, &r2b, c5, 5);
    test_put(s, &r3, c5, 5);
    store_close(s);

    pb_error err = {{0}};
    const char *inputs[] = {a, b};
    char *resolved = NULL;
    /* r2 has different results in a.db and b.db: refused, naming it, and nothing written. */
    assert_int_equal(store_merge(out, inputs, 2, STORE_PREFER_NONE, &resolved, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "1 run differs between"));
    assert_non_null(strstr(err.msg, ": r2;"));
    assert_null(resolved);
    struct stat sb;
    assert_int_equal(stat(out, &sb), -1);
    if (store_merge(out, inputs, 2, STORE_PREFER_FIRST, &resolved, &err))
        fail_msg("merge: %s", err.msg);
    assert_non_null(resolved);
    assert_non_null(strstr(resolved, "1 conflicting run resolved (--prefer first)"));
    free(resolved);
    /* Merging again (or an overlapping shard) adds nothing. */
    if (store_merge(out, inputs, 2, STORE_PREFER_FIRST, &resolved, &err))
        fail_msg("merge again: %s", err.msg);
    free(resolved);
    assert_int_equal(store_open_readonly(out, &s, &err), PB_OK);
    assert_int_equal(store_count_runs(s), 3);
    char *runs = test_capture_export(s, 0, 0);
    test_csv t = test_csv_parse(runs);
    assert_int_equal(t.n_rows, 4);
    assert_string_equal(t.rows[2][0], "r2");
    assert_string_equal(t.rows[2][test_csv_col(&t, "best_us")], "7"); /* a.db's r2 came first */
    test_csv_free(&t);
    char *curves = test_capture_export(s, 1, 0);
    test_csv tc = test_csv_parse(curves);
    /* r1: 3 points, r2: a.db's 3 points, r3: 5 points. */
    assert_int_equal(tc.n_rows, 1 + 3 + 3 + 5);
    int r2_points = 0;
    for (int i = 1; i < tc.n_rows; i++)
        r2_points += strcmp(tc.rows[i][0], "r2") == 0;
    assert_int_equal(r2_points, 3);
    test_csv_free(&tc);
    free(runs);
    free(curves);
    /* The experiment record came along. */
    assert_int_equal(store_set_experiment(s, "exp", "{}", 7, &err), PB_OK);
    store_close(s);
    free(c3);
    free(c5);
    test_dir_remove(&d);
}

static void test_merge_other_experiment_refused(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char a[128], b[128], out[128];
    test_path(a, sizeof a, &d, "a.db");
    test_path(b, sizeof b, &d, "b.db");
    test_path(out, sizeof out, &d, "out.db");
    store_close(test_open_new(a));
    store *s;
    pb_error err = {{0}};
    assert_int_equal(store_open(b, 1, &s, &err), PB_OK);
    assert_int_equal(store_set_experiment(s, "another", "{}", 1, &err), PB_OK);
    store_close(s);
    const char *inputs[] = {a, b};
    char *resolved = NULL;
    assert_int_equal(store_merge(out, inputs, 2, STORE_PREFER_NONE, &resolved, &err), PB_ERR);
    assert_non_null(strstr(err.msg, a));
    assert_non_null(strstr(err.msg, b));
    assert_non_null(strstr(err.msg, "'exp'"));
    assert_non_null(strstr(err.msg, "'another'"));
    struct stat sb;
    assert_int_equal(stat(out, &sb), -1); /* nothing written */
    test_dir_remove(&d);
}

/* ---------------------------------------------------------------- report */

static void test_report_summary(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store *s = test_open_new(db);
    /* Group (ds, 3, random): improvements (100-75)/100 = 25 %, (200-50)/200 = 75 %; the run with
     * an infinite initial step time counts in the initial mean (inf) but not in the improvement;
     * the failed run counts as failed only. */
    store_run r1 = test_run("r1", "g1", 0, 100, 75), r2 = test_run("r2", "g1", 1, 200, 50);
    store_run r3 = test_run("r3", "g1", 2, INFINITY, 50), r4 = test_run("r4", "g1", 3, NAN, NAN);
    r1.search_wall_s = 1, r2.search_wall_s = 2, r3.search_wall_s = 6;
    r1.sim_calls = 10, r2.sim_calls = 20, r3.sim_calls = 60;
    r4.status = STORE_TIMEOUT;
    r4.error = "over | time";
    r4.search_wall_s = 1000;
    r4.sim_calls = 1000;
    /* Group (ds, 3, placeto/gnn/topo) sorts before random: improvement (80-60)/80 = 25 %. */
    store_run p1 = test_run("p1", "g1", 0, 80, 60);
    p1.placer = "placeto", p1.embedding = "gnn", p1.traversal = "topo";
    p1.search_wall_s = 0.5, p1.sim_calls = 7;
    /* Group (ds, 2, random) sorts first (fewer devices); all its runs failed. */
    store_run f1 = test_run("f1", "g2", 0, 10, NAN);
    f1.n_devices = 2;
    f1.status = STORE_CRASHED;
    f1.error = "signal 11";
    const store_run *all[] = {&r1, &r2, &r3, &r4, &p1, &f1};
    for (int i = 0; i < 6; i++)
        test_put(s, all[i], NULL, 0);

    char *csv = test_capture_report(s, STORE_REPORT_CSV);
    const char *expected =
        "dataset,n_devices,cluster,placer,embedding,traversal,runs_ok,runs_failed,mean_initial_us,"
        "mean_best_us,mean_improvement_pct,mean_search_wall_s,mean_sim_calls\n"
        "ds,2,placeto-k80,random,,,0,1,,,,,\n"
        "ds,3,placeto-k80,placeto,gnn,topo,1,0,80,60,25,0.5,7\n"
        "ds,3,placeto-k80,random,,,3,1,inf,58.333333333333336,50,3,30\n";
    assert_string_equal(csv, expected);
    free(csv);

    char *md = test_capture_report(s, STORE_REPORT_MARKDOWN);
    assert_non_null(strstr(md, "## Summary: exp"));
    assert_non_null(strstr(md, "| ds | 3 | placeto-k80 | placeto | gnn | topo | 1 | 0 | 80.0 | "
                               "60.0 | 25.00 | 0.500 | 7.0 |\n"));
    assert_non_null(strstr(
        md,
        "| ds | 3 | placeto-k80 | random | - | - | 3 | 1 | inf | 58.3 | 50.00 | 3.000 | 30.0 |\n"));
    assert_non_null(
        strstr(md, "| ds | 2 | placeto-k80 | random | - | - | 0 | 1 | - | - | - | - | - |\n"));
    /* Failed runs below the table, in table order, '|' escaped. */
    const char *f = strstr(md, "| f1 | random | g2 | crashed | signal 11 |\n");
    const char *t = strstr(md, "| r4 | random | g1 | timeout | over \\| time |\n");
    assert_non_null(f);
    assert_non_null(t);
    assert_true(f < t);
    assert_true(strstr(md, "| ds | 3 | placeto-k80 | random") < f);
    free(md);
    store_close(s);
    test_dir_remove(&d);
}

/* ---------------------------------------------------------------- plot data */

/* Graph A: repeats 10, 14 (mean 12, variance 8); graph B: 20, 22, 24 (mean 22, variance 4).
 * Mean over graphs 17; pooled s.d. sqrt((1 * 8 + 2 * 4) / (1 + 2)) = sqrt(16 / 3). */
static void test_plot_data(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    store *s = test_open_new(db);
    const double a[] = {10, 14}, b[] = {20, 22, 24};
    char id[16];
    for (int i = 0; i < 5; i++) {
        double v = i < 2 ? a[i] : b[i - 2];
        snprintf(id, sizeof id, "t%d", i);
        store_run r = test_run(id, i < 2 ? "A" : "B", i, 2 * v, v);
        r.placer = "placeto", r.embedding = "gnn", r.traversal = "topo";
        /* Episode 0 at 3v, episode 1 at v; run t0 reports episode 1 twice, the lower counts. */
        store_curve_point c[3] = {
            {0, 3 * v, 3 * v, 1, 1}, {1, v + 5, v + 5, 2, 2}, {1, v, v, 3, 3}};
        if (i > 0)
            c[1] = c[2];
        test_put(s, &r, c, i == 0 ? 3 : 2);
    }
    /* Excluded: a failed run, and (from the bests) a run without a best step time. */
    store_run bad = test_run("zz-failed", "A", 9, 1, 1000);
    bad.placer = "placeto", bad.embedding = "gnn", bad.traversal = "topo";
    bad.status = STORE_FAILED;
    store_curve_point bc = {0, 1000, 1000, 1, 1};
    test_put(s, &bad, &bc, 1);
    store_run nobest = test_run("zz-nobest", "A", 8, 1, NAN);
    test_put(s, &nobest, NULL, 0);
    /* A second series and panel: random on 8 devices, one run (no s.d.). */
    store_run rnd = test_run("rnd", "A", 0, 50, 40);
    rnd.n_devices = 8;
    test_put(s, &rnd, NULL, 0);

    store_plot_data pd;
    pb_error err = {{0}};
    assert_int_equal(store_plot_bests(s, &pd, &err), PB_OK);
    assert_int_equal(pd.n_panels, 2);
    assert_string_equal(pd.panels[0], "ds, 3 devices");
    assert_string_equal(pd.panels[1], "ds, 8 devices");
    assert_int_equal(pd.n_series, 2);
    assert_string_equal(pd.series[0], "placeto / gnn / topo");
    assert_string_equal(pd.series[1], "random");
    assert_int_equal(pd.n_rows, 2);
    const store_plot_row *r = &pd.rows[0];
    assert_int_equal(r->panel, 0);
    assert_int_equal(r->series, 0);
    assert_int_equal(r->episode, -1);
    assert_true(fabs(r->mean_us - 17) < 1e-12);
    assert_true(fabs(r->sd_us - sqrt(16.0 / 3.0)) < 1e-12);
    assert_true(r->min_us == 10 && r->max_us == 24);
    assert_int_equal(r->n_graphs, 2);
    assert_int_equal(r->n_runs, 5);
    r = &pd.rows[1];
    assert_int_equal(r->panel, 1);
    assert_int_equal(r->series, 1);
    assert_true(r->mean_us == 40);
    assert_true(isnan(r->sd_us));
    assert_int_equal(r->n_runs, 1);
    store_plot_data_free(&pd);

    assert_int_equal(store_plot_curves(s, &pd, &err), PB_OK);
    assert_int_equal(pd.n_panels, 1);
    assert_int_equal(pd.n_series, 1);
    assert_int_equal(pd.n_rows, 2);
    assert_int_equal(pd.rows[0].episode, 0);
    assert_true(fabs(pd.rows[0].mean_us - 51) < 1e-12);
    assert_true(fabs(pd.rows[0].sd_us - 3 * sqrt(16.0 / 3.0)) < 1e-12);
    assert_int_equal(pd.rows[1].episode, 1);
    assert_true(fabs(pd.rows[1].mean_us - 17) < 1e-12);
    assert_int_equal(pd.rows[1].n_runs, 5);
    store_plot_data_free(&pd);
    store_close(s);
    test_dir_remove(&d);
}

/* ---------------------------------------------------------------- crashes and concurrency */

enum { TEST_KILL_RUNS = 400, TEST_KILL_POINTS = 20 };

/* The child side: writes runs 0..n-1 (those not stored yet) with their curves, then exits. */
static void test_writer(const char *db, int stride, int offset)
{
    store *s;
    pb_error err;
    if (store_open(db, 1, &s, &err) || store_set_experiment(s, "exp", "{}", 7, &err)) {
        fprintf(stderr, "writer %d: %s\n", (int)getpid(), err.msg);
        _exit(3);
    }
    store_curve_point *c = test_curve(TEST_KILL_POINTS, 1000);
    char id[32];
    for (int k = 0; k < TEST_KILL_RUNS; k++) {
        int i = (offset + k * stride) % TEST_KILL_RUNS;
        snprintf(id, sizeof id, "run-%04d", i);
        if (store_has_run(s, id))
            continue;
        store_run r = test_run(id, "g1", i, 1000, 900);
        if (store_put_run(s, &r, c, TEST_KILL_POINTS, &err)) {
            fprintf(stderr, "writer %d: %s\n", (int)getpid(), err.msg);
            _exit(4);
        }
    }
    free(c);
    store_close(s);
    _exit(0);
}

/* Every stored run has its whole curve: count(curve) == runs * points, and no run twice. */
static void test_check_whole(const char *db, long long *n_runs)
{
    store *s;
    pb_error err = {{0}};
    /* As a re-run does: the writer may have died before the schema was committed. */
    if (store_open(db, 1, &s, &err))
        fail_msg("reopen after kill: %s", err.msg);
    *n_runs = store_count_runs(s);
    char *curves = test_capture_export(s, 1, 0);
    long long lines = 0;
    for (const char *p = curves; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines - 1, *n_runs * TEST_KILL_POINTS);
    free(curves);
    store_close(s);
}

static void test_killed_writer_resumes(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    long long prev = 0, n = 0;
    /* Kill the writer at growing delays; each time the file holds whole runs only. */
    for (int round = 0; round < 6; round++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            test_writer(db, 1, 0);
        struct timespec ts = {0, (5 + 9 * round) * 1000000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        test_check_whole(db, &n);
        assert_true(n >= prev);
        prev = n;
    }
    /* The re-run finishes the sweep: every run present exactly once. */
    pid_t pid = fork();
    if (pid == 0)
        test_writer(db, 1, 0);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    test_check_whole(db, &n);
    assert_int_equal(n, TEST_KILL_RUNS);
    test_dir_remove(&d);
}

/* Two workers writing the same runs at once (in different orders): each run stored once. */
static void test_concurrent_writers(void **state)
{
    (void)state;
    test_dir d;
    test_dir_make(&d);
    char db[128];
    test_path(db, sizeof db, &d, "r.db");
    pid_t pids[2];
    for (int w = 0; w < 2; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0)
            test_writer(db, w == 0 ? 1 : 7, w * 13);
    }
    for (int w = 0; w < 2; w++) {
        int status;
        waitpid(pids[w], &status, 0);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    long long n;
    test_check_whole(db, &n);
    assert_int_equal(n, TEST_KILL_RUNS);
    test_dir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_put_has),
        cmocka_unit_test(test_exactly_once),
        cmocka_unit_test(test_reopen),
        cmocka_unit_test(test_experiment_mismatch),
        cmocka_unit_test(test_no_create_when_asked_not_to),
        cmocka_unit_test(test_directory_refused),
        cmocka_unit_test(test_non_sqlite_refused),
        cmocka_unit_test(test_newer_schema_refused),
        cmocka_unit_test(test_foreign_database_refused),
        cmocka_unit_test(test_unreadable_refused),
        cmocka_unit_test(test_nan_becomes_null),
        cmocka_unit_test(test_verdict_stored),
        cmocka_unit_test(test_schema_1_read_migrated_merged),
        cmocka_unit_test(test_merge_verdict_conflict),
        cmocka_unit_test(test_export_csv),
        cmocka_unit_test(test_export_jsonl),
        cmocka_unit_test(test_merge_overlap),
        cmocka_unit_test(test_merge_other_experiment_refused),
        cmocka_unit_test(test_report_summary),
        cmocka_unit_test(test_plot_data),
        cmocka_unit_test(test_killed_writer_resumes),
        cmocka_unit_test(test_concurrent_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
