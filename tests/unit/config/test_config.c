/* test_config.c — Lua experiments (config.c), their expansion into runs (sweep.c) and typed
 * plugin options (options.c). */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp, symlink */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config/config.h"
#include "plugin/options.h"
#include "core/strmap.h"
#include "run/sweep.h"

#include <ctype.h>
#include <dirent.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The tests run in $PB_TESTDATA: configs name graphs relative to the working directory. */
static char testdata[PATH_MAX];

static int setup_group(void **state)
{
    (void)state;
    const char *d = getenv("PB_TESTDATA");
    if (!d) {
        fprintf(stderr, "PB_TESTDATA must name tests/data (ctest sets it)\n");
        return -1;
    }
    if (!realpath(d, testdata) || chdir(testdata) != 0)
        return -1;
    return 0;
}

static int back_to_testdata(void **state)
{
    (void)state;
    return chdir(testdata);
}

static experiment *load_ok(const char *path, const char *profile)
{
    experiment *x = NULL;
    pb_error err = {{0}};
    if (config_load(path, profile, &x, &err) != PB_OK)
        fail_msg("%s: unexpected error: %s", path, err.msg);
    assert_non_null(x);
    return x;
}

/* Loads a config that must fail; returns the message. */
static void load_fails(const char *path, const char *profile, pb_error *err)
{
    experiment *x = (experiment *)1;
    assert_int_equal(config_load(path, profile, &x, err), PB_ERR);
    assert_null(x);
    assert_null(strchr(err->msg, '\n'));
}

static int has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void expect_contains(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle))
        fail_msg("'%s' does not contain '%s'", haystack, needle);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_temp_dir(char *buf, size_t n)
{
    snprintf(buf, n, "/tmp/pb-test-config-XXXXXX");
    assert_non_null(mkdtemp(buf));
}

/* ---------------------------------------------------------------- config → struct */

static void test_sweep_config_struct(void **state)
{
    (void)state;
    experiment *x = load_ok("configs/sweep.lua", NULL);
    assert_string_equal(x->file, "configs/sweep.lua");
    assert_string_equal(x->name, "sweep-test");
    assert_null(x->profile);
    assert_true(x->seed == 42);
    assert_int_equal(x->repeats, 3);
    assert_int_equal(x->n_datasets, 1);
    assert_string_equal(x->datasets[0], "graphs/tiny.json");
    assert_int_equal(x->n_devices, 2);
    assert_int_equal(x->devices[0], 2);
    assert_int_equal(x->devices[1], 4);
    assert_int_equal(x->n_clusters, 1);
    assert_string_equal(x->clusters[0], "placeto-k80");
    assert_int_equal(x->simulators.n, 1);
    assert_string_equal(x->simulators.items[0].name, "fake");
    assert_int_equal(x->placers.n, 2);
    assert_string_equal(x->placers.items[0].name, "single-device");
    assert_int_equal(x->placers.items[0].n_opts, 0);
    const cfg_plugin *random = &x->placers.items[1];
    assert_string_equal(random->name, "random");
    assert_int_equal(random->n_opts, 2); /* sorted by key */
    assert_string_equal(random->opts[0].key, "report_every");
    assert_int_equal(random->opts[0].n_values, 1);
    assert_string_equal(random->opts[0].values[0], "5");
    assert_string_equal(random->opts[1].key, "sim_calls");
    assert_int_equal(random->opts[1].n_values, 3);
    assert_string_equal(random->opts[1].values[0], "10");
    assert_string_equal(random->opts[1].values[2], "30");
    assert_int_equal(x->embeddings.n, 0);
    assert_int_equal(x->traversals.n, 2);
    assert_string_equal(x->traversals.items[1].name, "lexico");
    assert_int_equal(x->episodes, 7);
    assert_true(x->sim_calls == 500);
    assert_true(x->timeout_s == 2.5);
    assert_int_equal(x->n_plugin_path, 1);
    assert_string_equal(x->plugin_path[0], "configs/../plugins");
    assert_string_equal(x->results, "results/sweep-test.db");
    /* Lines, counted by hand in configs/sweep.lua. */
    assert_int_equal(x->line_experiment, 4);
    assert_int_equal(x->line_name, 5);
    assert_int_equal(x->line_datasets, 8);
    assert_int_equal(x->line_devices, 9);
    assert_int_equal(x->line_clusters, 10);
    assert_int_equal(x->line_simulators, 11);
    assert_int_equal(x->line_placers, 12);
    assert_int_equal(x->placers.items[0].line, 13);
    assert_int_equal(random->line, 14);
    assert_int_equal(random->opts[1].line, 14);
    assert_int_equal(x->line_traversals, 16);
    assert_int_equal(x->line_sim_calls, 18);
    assert_int_equal(x->line_embeddings, 4); /* absent: the experiment call */
    experiment_free(x);
}

static void test_config_json_canonical(void **state)
{
    (void)state;
    experiment *x = load_ok("configs/sweep.lua", NULL);
    json_error_t jerr;
    json_t *j = json_loads(x->config_json, 0, &jerr);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "name")), "sweep-test");
    assert_int_equal(json_integer_value(json_object_get(j, "seed")), 42);
    json_t *placer = json_array_get(json_object_get(j, "placer"), 1);
    json_t *calls = json_object_get(json_object_get(placer, "options"), "sim_calls");
    assert_int_equal(json_array_size(calls), 3);
    assert_string_equal(json_string_value(json_array_get(calls, 1)), "20");
    /* Canonical: compact with sorted keys, so re-encoding the same way changes nothing. */
    char *again = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    assert_string_equal(again, x->config_json);
    free(again);
    json_decref(j);
    experiment_free(x);
}

static void test_defaults(void **state)
{
    (void)state;
    experiment *x = load_ok("configs/minimal.lua", NULL);
    assert_string_equal(x->name, "minimal");
    assert_true(x->seed == 1);
    assert_int_equal(x->repeats, 1);
    assert_string_equal(x->clusters[0], "placeto-k80");
    assert_int_equal(x->simulators.n, 1);
    assert_string_equal(x->simulators.items[0].name, "placeto");
    assert_int_equal(x->embeddings.n, 0);
    assert_int_equal(x->traversals.n, 0);
    assert_int_equal(x->episodes, 0);
    assert_true(x->sim_calls == 0);
    assert_true(x->timeout_s == 0);
    assert_int_equal(x->n_plugin_path, 0);
    assert_string_equal(x->results, "results/minimal.db");
    experiment_free(x);
}

static void test_lua_code_builds_lists(void **state)
{
    (void)state;
    experiment *x = load_ok("configs/loops.lua", NULL);
    assert_int_equal(x->n_devices, 4);
    assert_int_equal(x->devices[3], 8);
    assert_int_equal(x->traversals.n, 3);
    assert_string_equal(x->traversals.items[2].name, "bfs");
    assert_string_equal(x->placers.items[0].opts[0].values[0], "30"); /* load("return 1 + 2") */
    experiment_free(x);
}

static void test_profiles(void **state)
{
    (void)state;
    experiment *x = load_ok("configs/profiles.lua", NULL);
    assert_int_equal(x->repeats, 10);
    assert_int_equal(x->n_devices, 3);
    experiment_free(x);

    x = load_ok("configs/profiles.lua", "quick");
    assert_string_equal(x->profile, "quick");
    assert_int_equal(x->repeats, 1);
    assert_int_equal(x->n_devices, 1);
    assert_int_equal(x->devices[0], 2);
    assert_int_equal(x->line_repeats, 10); /* the profile's line, not the top-level one */
    assert_int_equal(x->line_devices, 11);
    assert_int_equal(x->placers.n, 1); /* not overridden */
    assert_int_equal(x->line_placers, 6);
    expect_contains(x->config_json, "\"profile\":\"quick\"");
    experiment_free(x);

    x = load_ok("configs/profiles.lua", "wide");
    assert_int_equal(x->placers.n, 2);
    assert_string_equal(x->placers.items[1].name, "round-robin");
    assert_int_equal(x->placers.items[1].line, 14);
    assert_string_equal(x->results, "results/wide.db");
    assert_int_equal(x->repeats, 10);
    experiment_free(x);

    pb_error err;
    load_fails("configs/profiles.lua", "quik", &err);
    assert_string_equal(err.msg,
                        "configs/profiles.lua:8: unknown profile 'quik' (did you mean 'quick'?)");
    load_fails("configs/profiles.lua", "everything", &err);
    assert_string_equal(err.msg,
                        "configs/profiles.lua:8: unknown profile 'everything' (profiles: quick, "
                        "wide)");
    load_fails("configs/minimal.lua", "quick", &err);
    assert_string_equal(err.msg,
                        "configs/minimal.lua:2: unknown profile 'quick' (the config defines no "
                        "profiles)");
}

/* ---------------------------------------------------------------- sandbox */

static void test_include_inside(void **state)
{
    (void)state;
    experiment *x = load_ok("configs/include_main.lua", NULL);
    assert_int_equal(x->n_devices, 2); /* from parts/devices.lua, included by parts/common.lua */
    assert_int_equal(x->devices[0], 3);
    assert_int_equal(x->devices[1], 5);
    assert_string_equal(x->placers.items[0].name, "round-robin");
    assert_string_equal(x->datasets[0], "graphs/tiny.json");
    experiment_free(x);
}

static void test_include_outside_refused(void **state)
{
    (void)state;
    pb_error err;
    load_fails("bad_configs/include_outside.lua", NULL, &err);
    assert_true(has_prefix(err.msg,
                           "bad_configs/include_outside.lua:2: include('../graphs/tiny.json') "
                           "is refused"));

    /* A symbolic link inside the folder that points outside it is refused too. */
    char dir[64], path[PATH_MAX], target[PATH_MAX];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/cfg", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(target, sizeof target, "%s/outside.lua", dir);
    write_file(target, "return 7\n");
    snprintf(path, sizeof path, "%s/cfg/link.lua", dir);
    assert_int_equal(symlink(target, path), 0);
    snprintf(path, sizeof path, "%s/cfg/main.lua", dir);
    write_file(path, "-- includes a link that leaves the folder\nlocal n = include('link.lua')\n"
                     "return experiment { datasets = 'graphs/tiny.json', devices = n, "
                     "placer = 'random' }\n");
    load_fails(path, NULL, &err);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "%s:2: include('link.lua') is refused", path);
    assert_true(has_prefix(err.msg, want));
    /* ...and an absolute path out of the tree. */
    write_file(path, "return include('/etc/passwd')\n");
    load_fails(path, NULL, &err);
    expect_contains(err.msg, "is outside the config's folder");
    remove_tree(dir);
}

static void test_forbidden_calls(void **state)
{
    (void)state;
    pb_error err;
    load_fails("bad_configs/os_execute.lua", NULL, &err);
    assert_true(has_prefix(err.msg, "bad_configs/os_execute.lua:2: 'os' is not available"));
    assert_int_equal(access("pwned", F_OK), -1);
    load_fails("bad_configs/io_open.lua", NULL, &err);
    assert_true(has_prefix(err.msg, "bad_configs/io_open.lua:2: 'io' is not available"));
    load_fails("bad_configs/require.lua", NULL, &err);
    assert_true(has_prefix(err.msg, "bad_configs/require.lua:2: 'require' is not available"));
    load_fails("bad_configs/binary_chunk.lua", NULL, &err);
    assert_string_equal(err.msg,
                        "bad_configs/binary_chunk.lua:2: attempt to load a binary chunk (mode is "
                        "'t')");

    char dir[64], path[PATH_MAX];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/c.lua", dir);
    const char *forbidden[] = {"debug.getinfo(1)", "package.loadlib('x', 'y')", "dofile('x')",
                               "loadfile('x')", "setmetatable(_G, nil)"};
    const char *message[] = {"'debug' is not available", "'package' is not available",
                             "'dofile' is not available", "'loadfile' is not available",
                             "cannot change a protected metatable"};
    for (int i = 0; i < 5; i++) {
        char text[256];
        snprintf(text, sizeof text, "-- forbidden\n%s\nreturn 1\n", forbidden[i]);
        write_file(path, text);
        load_fails(path, NULL, &err);
        char want[PATH_MAX + 16];
        snprintf(want, sizeof want, "%s:2: ", path);
        assert_true(has_prefix(err.msg, want));
        expect_contains(err.msg, message[i]);
    }
    remove_tree(dir);
}

static void test_endless_loop_stops(void **state)
{
    (void)state;
    pb_error err;
    load_fails("bad_configs/infinite_loop.lua", NULL, &err);
    assert_true(has_prefix(err.msg, "bad_configs/infinite_loop.lua:4: config ran too long"));
}

static void test_memory_bomb_stops(void **state)
{
    (void)state;
    pb_error err;
    load_fails("bad_configs/memory_bomb.lua", NULL, &err);
    assert_string_equal(err.msg,
                        "bad_configs/memory_bomb.lua:5: config used more than 256 MB of memory");
    /* One huge allocation is refused the same way. */
    char dir[64], path[PATH_MAX];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/big.lua", dir);
    write_file(path, "local s = string.rep('x', 1 << 30)\nreturn s\n");
    load_fails(path, NULL, &err);
    expect_contains(err.msg, ":1: config used more than 256 MB of memory");
    remove_tree(dir);
}

static void test_random_is_seeded_from_experiment_seed(void **state)
{
    (void)state;
    experiment *a = load_ok("configs/random_seeded.lua", NULL);
    experiment *b = load_ok("configs/random_seeded.lua", NULL);
    experiment *explicit = load_ok("configs/random_explicit.lua", NULL);
    experiment *other = load_ok("configs/random_other_seed.lua", NULL);
    assert_int_equal(a->episodes, b->episodes);
    assert_true(a->sim_calls == b->sim_calls);
    assert_int_equal(a->episodes, explicit->episodes);
    assert_true(a->sim_calls == explicit->sim_calls);
    assert_true(a->episodes != other->episodes || a->sim_calls != other->sim_calls);
    experiment_free(a);
    experiment_free(b);
    experiment_free(explicit);
    experiment_free(other);

    a = load_ok("configs/random_default.lua", NULL);
    b = load_ok("configs/random_default_explicit.lua", NULL);
    assert_int_equal(a->episodes, b->episodes);
    assert_true(a->sim_calls == b->sim_calls);
    experiment_free(a);
    experiment_free(b);

    pb_error err;
    load_fails("bad_configs/seed_from_random.lua", NULL, &err);
    assert_string_equal(err.msg,
                        "bad_configs/seed_from_random.lua:3: field 'seed' must not depend on "
                        "math.random");
}

static void test_print_goes_to_stderr_once(void **state)
{
    (void)state;
    char dir[64], path[PATH_MAX];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/p.lua", dir);
    /* seed 7 makes two passes (see config.h): the output must appear once. */
    write_file(path, "-- prints\nprint('hello', math.random(1, 9))\n"
                     "return experiment { seed = 7, datasets = 'x', devices = 2, placer = 'r' }\n");
    fflush(stderr);
    int saved = dup(2);
    FILE *capture = tmpfile();
    assert_non_null(capture);
    dup2(fileno(capture), 2);
    experiment *x = load_ok(path, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    experiment_free(x);
    char text[PATH_MAX + 64] = "";
    rewind(capture);
    size_t n = fread(text, 1, sizeof text - 1, capture);
    text[n] = '\0';
    fclose(capture);
    char want[PATH_MAX + 32];
    snprintf(want, sizeof want, "%s:2: hello\t", path);
    assert_true(has_prefix(text, want));
    assert_int_equal(strlen(text), strlen(want) + 2); /* one digit and one newline */
    assert_true(text[n - 1] == '\n');
    remove_tree(dir);
}

/* ---------------------------------------------------------------- sweeps */

static run_spec *expand_ok(const experiment *x, int *n)
{
    run_spec *runs = NULL;
    pb_error err = {{0}};
    if (sweep_expand(x, NULL, &runs, n, &err) != PB_OK)
        fail_msg("sweep_expand: %s", err.msg);
    return runs;
}

static const char *option_of(const run_plugin *p, const char *key)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->keys[i], key) == 0)
            return p->values[i];
    return NULL;
}

static void test_sweep_count_and_order(void **state)
{
    (void)state;
    experiment *x = load_ok("configs/sweep.lua", NULL);
    int n;
    run_spec *r = expand_ok(x, &n);
    /* 1 graph x 2 devices x 1 cluster x 1 simulator x (single-device: 1 + random: 3 option
     * values) x 2 traversals x 3 repeats. */
    assert_int_equal(n, 1 * 2 * 1 * 1 * (1 + 3) * 2 * 3);
    /* Order: devices > placers > traversals > option values > repeats. */
    assert_int_equal(r[0].n_devices, 2);
    assert_string_equal(r[0].placer.name, "single-device");
    assert_string_equal(r[0].traversal.name, "topo");
    assert_int_equal(r[0].repeat, 0);
    assert_int_equal(r[2].repeat, 2);
    assert_string_equal(r[3].traversal.name, "lexico");
    assert_int_equal(r[3].repeat, 0);
    assert_string_equal(r[6].placer.name, "random");
    assert_string_equal(r[6].traversal.name, "topo");
    assert_string_equal(option_of(&r[6].placer, "sim_calls"), "10");
    assert_string_equal(option_of(&r[9].placer, "sim_calls"), "20");
    assert_string_equal(option_of(&r[12].placer, "sim_calls"), "30");
    assert_string_equal(option_of(&r[12].placer, "report_every"), "5");
    assert_string_equal(r[12].placer.keys[0], "report_every");
    assert_ptr_equal(r[12].placer.ref, &x->placers.items[1]);
    assert_string_equal(r[15].traversal.name, "lexico");
    assert_string_equal(option_of(&r[15].placer, "sim_calls"), "10");
    assert_int_equal(r[24].n_devices, 4);
    assert_string_equal(r[24].placer.name, "single-device");
    /* Settings every run carries. */
    for (int i = 0; i < n; i++) {
        assert_string_equal(r[i].graph_path, "graphs/tiny.json");
        assert_string_equal(r[i].dataset, "graphs/tiny.json");
        assert_string_equal(r[i].cluster, "placeto-k80");
        assert_string_equal(r[i].simulator.name, "fake");
        assert_null(r[i].embedding.name);
        assert_int_equal(r[i].episodes, 7);
        assert_true(r[i].sim_calls == 500);
        assert_true(r[i].timeout_s == 2.5);
    }
    json_t *s = json_loads(r[13].settings_json, 0, NULL);
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(s, "graph")), "graphs/tiny.json");
    assert_string_equal(json_string_value(json_object_get(s, "graph_file")), "tiny.json");
    assert_int_equal(json_integer_value(json_object_get(s, "devices")), 2);
    assert_int_equal(json_integer_value(json_object_get(s, "repeat")), 1);
    assert_int_equal(json_integer_value(json_object_get(s, "seed")), 42);
    assert_true(json_is_null(json_object_get(s, "embedding")));
    json_t *placer = json_object_get(s, "placer");
    assert_string_equal(json_string_value(json_object_get(placer, "name")), "random");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(placer, "options"), "sim_calls")), "30");
    json_decref(s);
    sweep_free(r, n);
    experiment_free(x);
}

/* The documented derivations: id = FNV-1a of settings_json, seed from the settings without the
 * repeat plus "#repeat". */
static void check_identity(const run_spec *r, unsigned long long experiment_seed)
{
    char id[17];
    snprintf(id, sizeof id, "%016llx",
             strmap_fnv1a(STRMAP_FNV_BASIS, r->settings_json, strlen(r->settings_json)));
    assert_string_equal(r->run_id, id);
    json_t *s = json_loads(r->settings_json, 0, NULL);
    assert_non_null(s);
    json_object_del(s, "repeat");
    char *base = json_dumps(s, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    char label[4096];
    snprintf(label, sizeof label, "%s#%d", base, r->repeat);
    assert_true(r->seed == pb_seed_derive(experiment_seed, label));
    free(base);
    json_decref(s);
}

static void test_run_ids_stable_and_unique(void **state)
{
    (void)state;
    experiment *x1 = load_ok("configs/sweep.lua", NULL);
    experiment *x2 = load_ok("configs/sweep.lua", NULL);
    int n1, n2;
    run_spec *a = expand_ok(x1, &n1), *b = expand_ok(x2, &n2);
    assert_int_equal(n1, n2);
    strmap seen;
    strmap_init(&seen);
    for (int i = 0; i < n1; i++) {
        assert_string_equal(a[i].run_id, b[i].run_id);
        assert_true(a[i].seed == b[i].seed);
        assert_string_equal(a[i].settings_json, b[i].settings_json);
        assert_int_equal((int)strlen(a[i].run_id), 16);
        for (const char *p = a[i].run_id; *p; p++)
            assert_true(isxdigit((unsigned char)*p));
        assert_int_equal(strmap_get(&seen, a[i].run_id), -1);
        assert_int_equal(strmap_put(&seen, a[i].run_id, i), 0);
        check_identity(&a[i], 42);
    }
    strmap_free(&seen);
    /* Seeds differ between the repeats of one setting. */
    assert_true(a[0].seed != a[1].seed && a[1].seed != a[2].seed && a[0].seed != a[2].seed);
    sweep_free(a, n1);
    sweep_free(b, n2);
    experiment_free(x1);
    experiment_free(x2);
}

/* Writes a variant of configs/sweep.lua with one device count and the given seed and timeout. */
static void write_variant(const char *path, int seed, const char *timeout)
{
    char text[1024];
    snprintf(text, sizeof text,
             "return experiment {\n"
             "  name = 'a-different-name', seed = %d, repeats = 3,\n"
             "  datasets = { 'graphs/tiny.json' }, devices = 4, cluster = 'placeto-k80',\n"
             "  simulator = 'fake',\n"
             "  placer = { 'single-device', { 'random', report_every = 5,\n"
             "             sim_calls = { 10, 20, 30 } } },\n"
             "  traversal = { 'topo', 'lexico' }, episodes = 7, sim_calls = 500,\n"
             "  timeout = %s,\n"
             "}\n",
             seed, timeout);
    write_file(path, text);
}

static void test_ids_independent_of_position(void **state)
{
    (void)state;
    experiment *full = load_ok("configs/sweep.lua", NULL);
    int nf;
    run_spec *f = expand_ok(full, &nf);
    char dir[64], path[PATH_MAX];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/variant.lua", dir);

    /* Only the devices = 4 half of the sweep: same runs, same ids and seeds. */
    write_variant(path, 42, "2.5");
    experiment *half = load_ok(path, NULL);
    int nh;
    run_spec *h = expand_ok(half, &nh);
    assert_int_equal(nh, nf / 2);
    for (int i = 0; i < nh; i++) {
        assert_string_equal(h[i].run_id, f[nf / 2 + i].run_id);
        assert_true(h[i].seed == f[nf / 2 + i].seed);
    }
    sweep_free(h, nh);
    experiment_free(half);

    /* Another setting (seed, timeout): other ids. */
    const int seeds[] = {43, 42};
    const char *timeouts[] = {"2.5", "3"};
    for (int v = 0; v < 2; v++) {
        write_variant(path, seeds[v], timeouts[v]);
        experiment *other = load_ok(path, NULL);
        int no;
        run_spec *o = expand_ok(other, &no);
        assert_int_equal(no, nh);
        for (int i = 0; i < no; i++) {
            assert_string_not_equal(o[i].run_id, f[nf / 2 + i].run_id);
            check_identity(&o[i], other->seed);
        }
        sweep_free(o, no);
        experiment_free(other);
    }
    remove_tree(dir);
    sweep_free(f, nf);
    experiment_free(full);
}

static void test_dataset_resolution(void **state)
{
    (void)state;
    char dir[64], path[PATH_MAX];
    make_temp_dir(dir, sizeof dir);
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(mkdir("folder", 0700), 0);
    write_file("folder/c.json", "{}");
    write_file("folder/a.json", "{}");
    write_file("folder/b.json", "{}");
    write_file("folder/notes.txt", "not a graph");
    assert_int_equal(mkdir("folder/sub.json", 0700), 0); /* a folder, not a graph */
    assert_int_equal(mkdir("datasets", 0700), 0);
    assert_int_equal(mkdir("datasets/fam", 0700), 0);
    write_file("datasets/fam/g2.json", "{}");
    write_file("datasets/fam/g1.json", "{}");
    assert_int_equal(mkdir("empty", 0700), 0);
    write_file("single.json", "{}");
    write_file("ok.lua", "return experiment { datasets = { 'folder', 'fam', 'single.json' },\n"
                         "  devices = 2, placer = 'random' }\n");
    experiment *x = load_ok("ok.lua", NULL);
    int n;
    run_spec *r = expand_ok(x, &n);
    const char *want[] = {"folder/a.json",        "folder/b.json",        "folder/c.json",
                          "datasets/fam/g1.json", "datasets/fam/g2.json", "single.json"};
    const char *entry[] = {"folder", "folder", "folder", "fam", "fam", "single.json"};
    assert_int_equal(n, 6);
    for (int i = 0; i < n; i++) {
        assert_string_equal(r[i].graph_path, want[i]);
        assert_string_equal(r[i].dataset, entry[i]);
    }
    sweep_free(r, n);
    experiment_free(x);

    pb_error err;
    const char *bad[] = {"missing-family", "empty", "nowhere/graph.json"};
    const char *msg[] = {
        "ok2.lua:3: dataset 'missing-family' not found (no such file or folder, nor a folder "
        "datasets/missing-family/ in the working directory)",
        "ok2.lua:3: dataset 'empty': folder 'empty' has no .json graph files",
        "ok2.lua:3: dataset 'nowhere/graph.json' not found"};
    for (int i = 0; i < 3; i++) {
        char text[256];
        snprintf(text, sizeof text,
                 "return experiment {\n  devices = 2, placer = 'random',\n  datasets = '%s',\n}\n",
                 bad[i]);
        write_file("ok2.lua", text);
        x = load_ok("ok2.lua", NULL);
        r = (run_spec *)1;
        assert_int_equal(sweep_expand(x, NULL, &r, &n, &err), PB_ERR);
        assert_null(r);
        assert_true(has_prefix(err.msg, msg[i]));
        experiment_free(x);
    }
    /* Values listed twice: the list's own line, or (for the same graph reached twice) the
     * experiment's. */
    const char *twice[] = {"placer = 'random', datasets = { 'folder', 'folder/a.json' }",
                           "placer = 'random', datasets = 'single.json', cluster = { 'k', 'k' }",
                           "datasets = 'single.json',\n  placer = { 'random', x = { 5, 5 } }"};
    const char *twice_msg[] = {"ok2.lua:1: the sweep lists the same run twice (graph "
                               "folder/a.json, 2 devices, cluster placeto-k80, simulator placeto, "
                               "placer random, embedding -, traversal -, repeat 0)",
                               "ok2.lua:3: field 'cluster' lists 'k' twice",
                               "ok2.lua:4: option 'x' of 'random' lists '5' twice"};
    for (int i = 0; i < 3; i++) {
        char text[256];
        snprintf(text, sizeof text, "return experiment {\n  devices = 2,\n  %s,\n}\n", twice[i]);
        write_file("ok2.lua", text);
        x = load_ok("ok2.lua", NULL);
        assert_int_equal(sweep_expand(x, NULL, &r, &n, &err), PB_ERR);
        assert_string_equal(err.msg, twice_msg[i]);
        experiment_free(x);
    }
    snprintf(path, sizeof path, "%s", dir);
    assert_int_equal(chdir(testdata), 0);
    remove_tree(path);
}

/* ---------------------------------------------------------------- bad configs */

/* Placer "random" as the harness ships it (the option table the bad configs are written for). */
static const pb_option_def random_like_options[] = {
    {.name = "sim_calls", .type = PB_OPT_INT, .default_value = "1000", .min = 1, .max = 1e9, .choices = NULL, .help = "simulator calls"},
    {.name = "report_every", .type = PB_OPT_INT, .default_value = "0", .min = 0, .max = 1e9, .choices = NULL, .help = "progress interval"},
};
static const pb_plugin_desc random_like = {.abi_major = PB_ABI_MAJOR,
                                           .abi_minor = PB_ABI_MINOR,
                                           .struct_size = sizeof(pb_plugin_desc),
                                           .kind = PB_KIND_PLACER,
                                           .name = "random",
                                           .version = "1.0",
                                           .description = "uniform random placements",
                                           .options = random_like_options,
                                           .n_options = 2,
                                           .option_size = sizeof(pb_option_def)};

/* Resolves the placer options of every run the way the plan does; returns PB_ERR at the first
 * error, with the config's file:line of the plugin. */
static int resolve_placer_options(const experiment *x, const run_spec *r, int n, pb_error *err)
{
    for (int i = 0; i < n; i++) {
        option_kv kv[8];
        for (int k = 0; k < r[i].placer.n && k < 8; k++)
            kv[k] = (option_kv){r[i].placer.keys[k], r[i].placer.values[k]};
        char where[600];
        int line = r[i].placer.ref->n_opts ? r[i].placer.ref->opts[0].line : r[i].placer.ref->line;
        snprintf(where, sizeof where, "%s:%d: placer '%s'", x->file, line, r[i].placer.name);
        option_set s;
        if (options_resolve(&random_like, kv, r[i].placer.n, where, &s, err))
            return PB_ERR;
        option_set_free(&s);
    }
    return PB_OK;
}

/* Checks one bad config: its error (from the config, the sweep or, for option errors, the option
 * table of "random") is one line "file:N: ..." holding the expected text. */
static void check_bad_config(const char *file)
{
    char path[PATH_MAX], expect[512] = "";
    snprintf(path, sizeof path, "bad_configs/%s", file);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char first[512];
    assert_non_null(fgets(first, sizeof first, f));
    fclose(f);
    assert_true(has_prefix(first, "-- expect: "));
    snprintf(expect, sizeof expect, "%s", first + strlen("-- expect: "));
    expect[strcspn(expect, "\n")] = '\0';

    pb_error err = {{0}};
    experiment *x = NULL;
    int rc = config_load(path, NULL, &x, &err);
    run_spec *r = NULL;
    int n = 0;
    if (rc == PB_OK)
        rc = sweep_expand(x, NULL, &r, &n, &err);
    if (rc == PB_OK && strcmp(x->placers.items[0].name, "random") == 0)
        rc = resolve_placer_options(x, r, n, &err);
    if (rc == PB_OK) {
        /* Only unknown plugin names are left to the plugin loader. */
        assert_string_equal(file, "unknown_plugin.lua");
        assert_string_equal(x->placers.items[0].name, "randon");
        assert_int_equal(x->placers.items[0].line, 6);
    } else {
        if (!strstr(err.msg, expect))
            fail_msg("%s: error '%s' lacks '%s'", path, err.msg, expect);
        size_t pl = strlen(path);
        assert_true(has_prefix(err.msg, path) && err.msg[pl] == ':' &&
                    isdigit((unsigned char)err.msg[pl + 1]));
        assert_null(strchr(err.msg, '\n'));
    }
    sweep_free(r, n);
    experiment_free(x);
}

static void test_bad_configs(void **state)
{
    (void)state;
    DIR *d = opendir("bad_configs");
    assert_non_null(d);
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".lua") != 0)
            continue;
        check_bad_config(e->d_name);
        count++;
    }
    closedir(d);
    assert_true(count >= 10);
}

static void test_error_lines(void **state)
{
    (void)state;
    pb_error err;
    load_fails("bad_configs/unknown_field.lua", NULL, &err);
    assert_string_equal(err.msg,
                        "bad_configs/unknown_field.lua:7: unknown field 'repeates' (did you mean "
                        "'repeats'?)");
    load_fails("bad_configs/syntax_error.lua", NULL, &err);
    assert_string_equal(err.msg, "bad_configs/syntax_error.lua:4: '}' expected (to close '{' at "
                                 "line 2) near 'devices'");
    load_fails("bad_configs/wrong_type.lua", NULL, &err);
    assert_string_equal(err.msg,
                        "bad_configs/wrong_type.lua:7: field 'repeats' must be an integer (got "
                        "string)");
    load_fails("bad_configs/bad_devices.lua", NULL, &err);
    assert_string_equal(err.msg, "bad_configs/bad_devices.lua:4: field 'devices': entry 2 is 0; "
                                 "it must be between 1 and 65536");
    load_fails("bad_configs/missing_placer.lua", NULL, &err);
    assert_true(has_prefix(err.msg, "bad_configs/missing_placer.lua:2: missing field 'placer'"));
    experiment *x = load_ok("bad_configs/unknown_option.lua", NULL);
    assert_int_equal(x->placers.items[0].line, 7);
    assert_string_equal(x->placers.items[0].opts[0].key, "sim_cals");
    assert_int_equal(x->placers.items[0].opts[0].line, 8);
    experiment_free(x);

    /* Long paths are not shortened the way Lua shortens chunk names. */
    char dir[64], path[PATH_MAX];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path,
             "%s/a-folder-name-long-enough-to-exceed-the-sixty-characters-of-lua-chunk-ids.lua",
             dir);
    write_file(path, "-- one\n-- two\nlocal x = nil + 1\n");
    load_fails(path, NULL, &err);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "%s:3: attempt to perform arithmetic on a nil value", path);
    assert_string_equal(err.msg, want);
    /* error() without a position, and with a table, still get one. */
    write_file(path, "-- one\nerror('plain', 0)\n");
    load_fails(path, NULL, &err);
    snprintf(want, sizeof want, "%s:2: plain", path);
    assert_string_equal(err.msg, want);
    write_file(path, "\nerror({})\n");
    load_fails(path, NULL, &err);
    snprintf(want, sizeof want, "%s:2: the config raised an error value of type table", path);
    assert_string_equal(err.msg, want);
    /* A plugin list cannot nest, options need a name first, messages stay on one line. */
    write_file(path, "return experiment { datasets = 'x', devices = 2,\n"
                     "  placer = { { 'a', 'b' } } }\n");
    load_fails(path, NULL, &err);
    expect_contains(err.msg, ":2: field 'placer': entry 1 is a list; lists do not nest");
    write_file(path, "return experiment { datasets = 'x', devices = 2,\n"
                     "  placer = { sim_calls = 3 } }\n");
    load_fails(path, NULL, &err);
    expect_contains(err.msg,
                    ":2: field 'placer': a plugin reference starts with the plugin's name");
    write_file(path, "error('two\\nlines')\n");
    load_fails(path, NULL, &err);
    expect_contains(err.msg, ":1: two lines");
    remove_tree(dir);
}

/* ---------------------------------------------------------------- options */

typedef struct toy_opts {
    long long steps;
    double rate;
    int verbose;
    const char *label;
    int pool;
    double budget;
} toy_opts;
static const pb_option_def toy_options[] = {
    {.name = "steps", .type = PB_OPT_INT, .default_value = "10", .min = 1, .max = 100, .choices = NULL, .help = "number of steps", .offset = offsetof(toy_opts, steps)},
    {.name = "rate", .type = PB_OPT_DOUBLE, .default_value = "0.5", .min = 0, .max = 1, .choices = NULL, .help = "learning rate", .offset = offsetof(toy_opts, rate)},
    {.name = "verbose", .type = PB_OPT_BOOL, .default_value = "true", .min = 0, .max = -1, .choices = NULL, .help = "chatty", .offset = offsetof(toy_opts, verbose)},
    {.name = "label", .type = PB_OPT_STRING, .default_value = "abc", .min = 0, .max = -1, .choices = NULL, .help = "a name", .offset = offsetof(toy_opts, label)},
    {.name = "pool", .type = PB_OPT_ENUM, .default_value = "mean", .min = 0, .max = -1, .choices = "max|mean|sum", .help = "aggregation", .offset = offsetof(toy_opts, pool)},
    {.name = "budget", .type = PB_OPT_DOUBLE, .default_value = "1e6", .min = 1, .max = 1e308, .choices = NULL, .help = "no upper bound worth printing", .offset = offsetof(toy_opts, budget)},
};
static const pb_plugin_desc toy = {.abi_major = PB_ABI_MAJOR,
                                   .abi_minor = PB_ABI_MINOR,
                                   .struct_size = sizeof(pb_plugin_desc),
                                   .kind = PB_KIND_PLACER,
                                   .name = "toy",
                                   .version = "2.1",
                                   .description = "a toy placer",
                                   .options = toy_options,
                                   .n_options = 6,
                                   .option_size = sizeof(pb_option_def),
                                   .options_struct_size = sizeof(toy_opts)};

static int resolve(const char *key, const char *value, option_set *s, pb_error *err)
{
    option_kv kv = {key, value};
    return options_resolve(&toy, &kv, key ? 1 : 0, "cfg.lua:3: placer 'toy'", s, err);
}

static void test_options_defaults_and_values(void **state)
{
    (void)state;
    option_set s;
    pb_error err;
    assert_int_equal(resolve(NULL, NULL, &s, &err), PB_OK);
    assert_int_equal(s.n, 6);
    assert_int_equal(s.values[0].i, 10);
    assert_true(s.values[0].d == 10.0);
    assert_true(s.values[1].d == 0.5);
    assert_int_equal(s.values[2].i, 1);
    assert_string_equal(s.values[3].s, "abc");
    assert_int_equal(s.values[4].i, 1); /* "mean" is choice 1 */
    assert_string_equal(s.values[4].s, "mean");
    assert_true(s.values[5].d == 1e6);
    option_set_free(&s);

    option_kv kv[] = {
        {"pool", "sum"}, {"steps", "42"}, {"rate", "0.25"}, {"verbose", "0"}, {"label", "xyz"}};
    assert_int_equal(options_resolve(&toy, kv, 5, "w", &s, &err), PB_OK);
    assert_int_equal(s.values[0].i, 42);
    assert_true(s.values[1].d == 0.25);
    assert_int_equal(s.values[2].i, 0);
    assert_string_equal(s.values[3].s, "xyz");
    assert_int_equal(s.values[4].i, 2);
    assert_string_equal(s.texts[0], "42");
    /* The same values in the plugin's options struct, through the table's offsets. */
    const toy_opts *o = s.object;
    assert_non_null(o);
    assert_true(o->steps == 42);
    assert_true(o->rate == 0.25);
    assert_int_equal(o->verbose, 0);
    assert_string_equal(o->label, "xyz");
    assert_int_equal(o->pool, 2);
    assert_true(o->budget == 1e6);
    pb_create_args args = options_create_args(&s, NULL, 5);
    assert_ptr_equal(args.options, o);
    assert_int_equal(args.value_size, sizeof(pb_value));
    assert_true(args.seed == 5);
    option_set_free(&s);

    assert_int_equal(resolve("verbose", "false", &s, &err), PB_OK);
    assert_int_equal(s.values[2].i, 0);
    option_set_free(&s);
    assert_int_equal(resolve("verbose", "1", &s, &err), PB_OK);
    assert_int_equal(s.values[2].i, 1);
    option_set_free(&s);
    assert_int_equal(resolve("steps", "100", &s, &err), PB_OK); /* inclusive bounds */
    option_set_free(&s);
    assert_int_equal(resolve("rate", "0", &s, &err), PB_OK);
    option_set_free(&s);
}

/* An options struct layout the loader must refuse: overlapping or out-of-struct offsets. */
static void test_options_layout(void **state)
{
    (void)state;
    pb_error err;
    assert_int_equal(options_check_layout(&toy, &err), PB_OK);
    pb_option_def bad[6];
    memcpy(bad, toy_options, sizeof bad);
    pb_plugin_desc d = toy;
    d.options = bad;
    bad[1].offset = offsetof(toy_opts, steps); /* rate over steps */
    assert_int_equal(options_check_layout(&d, &err), PB_ERR);
    assert_string_equal(err.msg, "options 'steps' and 'rate' overlap in the options struct");
    memcpy(bad, toy_options, sizeof bad);
    bad[5].offset = sizeof(toy_opts); /* budget past the end */
    assert_int_equal(options_check_layout(&d, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "option 'budget' lies at offset"));
    d.options_struct_size = 0; /* no struct: offsets are not read */
    assert_int_equal(options_check_layout(&d, &err), PB_OK);
}

static void test_options_errors(void **state)
{
    (void)state;
    option_set s;
    pb_error err;
    struct {
        const char *key, *value, *msg;
    } cases[] = {
        {"steps", "101",
         "cfg.lua:3: placer 'toy': option 'steps' is 101, out of range (must be in [1, 100])"},
        {"steps", "0",
         "cfg.lua:3: placer 'toy': option 'steps' is 0, out of range (must be in [1, 100])"},
        {"steps", "1.5", "cfg.lua:3: placer 'toy': option 'steps' must be an integer, not '1.5'"},
        {"steps", " 5", "cfg.lua:3: placer 'toy': option 'steps' must be an integer, not ' 5'"},
        {"rate", "1.5",
         "cfg.lua:3: placer 'toy': option 'rate' is 1.5, out of range (must be in [0, 1])"},
        {"rate", "nan",
         "cfg.lua:3: placer 'toy': option 'rate' must be a finite number, not 'nan'"},
        {"rate", "inf",
         "cfg.lua:3: placer 'toy': option 'rate' must be a finite number, not 'inf'"},
        {"rate", "fast", "cfg.lua:3: placer 'toy': option 'rate' must be a number, not 'fast'"},
        {"budget", "0.5",
         "cfg.lua:3: placer 'toy': option 'budget' is 0.5, out of range (must be >= 1)"},
        {"verbose", "yes",
         "cfg.lua:3: placer 'toy': option 'verbose' must be true or false, not 'yes'"},
        {"pool", "median",
         "cfg.lua:3: placer 'toy': option 'pool' is 'median', must be one of max|mean|sum"},
        {"stpes", "3", "cfg.lua:3: placer 'toy': unknown option 'stpes' (did you mean 'steps'?)"},
        {"temperature", "3",
         "cfg.lua:3: placer 'toy': unknown option 'temperature' (options: steps, rate, verbose, "
         "label, pool, budget)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s.n = -1;
        assert_int_equal(resolve(cases[i].key, cases[i].value, &s, &err), PB_ERR);
        assert_string_equal(err.msg, cases[i].msg);
        assert_null(s.values);
    }
    /* A `where` without the plugin's name gets it appended. */
    option_kv kv = {"stpes", "3"};
    assert_int_equal(options_resolve(&toy, &kv, 1, "cfg.lua:3", &s, &err), PB_ERR);
    assert_string_equal(
        err.msg, "cfg.lua:3: unknown option 'stpes' of placer 'toy' (did you mean 'steps'?)");
    option_kv twice[] = {{"steps", "3"}, {"steps", "4"}};
    assert_int_equal(options_resolve(&toy, twice, 2, "cfg.lua:3: placer 'toy'", &s, &err), PB_ERR);
    assert_string_equal(err.msg, "cfg.lua:3: placer 'toy': option 'steps' is given twice");

    /* A plugin without options, and an option without a default (required). */
    pb_plugin_desc bare = toy;
    bare.n_options = 0;
    assert_int_equal(options_resolve(&bare, &kv, 1, "w: placer 'toy'", &s, &err), PB_ERR);
    assert_string_equal(err.msg, "w: placer 'toy': unknown option 'stpes' (it takes no options)");
    pb_option_def required[] = {
        {.name = "path", .type = PB_OPT_STRING, .min = 0, .max = -1, .help = "a file"}};
    bare.options_struct_size = 0;
    bare.options = required;
    bare.n_options = 1;
    assert_int_equal(options_resolve(&bare, NULL, 0, "w: placer 'toy'", &s, &err), PB_ERR);
    assert_string_equal(err.msg, "w: placer 'toy': option 'path' has no default and must be given");
    option_kv path = {"path", "/x"};
    assert_int_equal(options_resolve(&bare, &path, 1, "w", &s, &err), PB_OK);
    assert_string_equal(s.values[0].s, "/x");
    option_set_free(&s);
}

static void test_did_you_mean(void **state)
{
    (void)state;
    const char *fields[] = {"repeats", "seed", "sim_calls", "report_every"};
    assert_string_equal(options_did_you_mean("repeat", fields, 4), "repeats");
    assert_string_equal(options_did_you_mean("sim_cals", fields, 4), "sim_calls");
    assert_string_equal(options_did_you_mean("sed", fields, 4), "seed");
    assert_null(options_did_you_mean("xyz", fields, 4));
    assert_null(options_did_you_mean("anything", fields, 0));
    /* The limit is max(2, len/3): 12 letters allow 4 edits, not 5. */
    const char *long_names[] = {"abcdefghwxyz"};
    assert_string_equal(options_did_you_mean("abcdefghijkl", long_names, 1), "abcdefghwxyz");
    const char *farther[] = {"abcdefgvwxyz"};
    assert_null(options_did_you_mean("abcdefghijkl", farther, 1));
}

static void test_format_double(void **state)
{
    (void)state;
    char buf[40];
    const double values[] = {0.001, 50.0,     0.1,  1e300, 1.0 / 3.0, -2.5,
                             1e-7,  123456.0, 1e16, 1e20,  0.0001,    2.5e-5};
    const char *texts[] = {"0.001",
                           "50",
                           "0.1",
                           "1e+300",
                           "0.3333333333333333",
                           "-2.5",
                           "1e-07",
                           "123456",
                           "10000000000000000",
                           "1e+20",
                           "0.0001",
                           "2.5e-05"};
    for (int i = 0; i < 12; i++) {
        options_format_double(values[i], buf, sizeof buf);
        assert_string_equal(buf, texts[i]);
    }
}

static void test_print_help(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    options_print_help(f, &toy);
    fclose(f);
    expect_contains(text, "placer toy 2.1: a toy placer\n");
    expect_contains(text, "option");
    expect_contains(text, "range / choices");
    const char *rows[][4] = {{"steps", "int", "10", "[1, 100]"},
                             {"rate", "double", "0.5", "[0, 1]"},
                             {"verbose", "bool", "true", "true|false"},
                             {"pool", "enum", "mean", "max|mean|sum"},
                             {"budget", "double", "1e6", ">= 1"}};
    for (int i = 0; i < 5; i++) {
        const char *line = strstr(text, rows[i][0]);
        assert_non_null(line);
        const char *end = strchr(line, '\n');
        for (int k = 1; k < 4; k++) {
            const char *at = strstr(line, rows[i][k]);
            assert_true(at && at < end);
        }
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_config_struct),
        cmocka_unit_test(test_config_json_canonical),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_lua_code_builds_lists),
        cmocka_unit_test(test_profiles),
        cmocka_unit_test(test_include_inside),
        cmocka_unit_test(test_include_outside_refused),
        cmocka_unit_test(test_forbidden_calls),
        cmocka_unit_test(test_endless_loop_stops),
        cmocka_unit_test(test_memory_bomb_stops),
        cmocka_unit_test(test_random_is_seeded_from_experiment_seed),
        cmocka_unit_test(test_print_goes_to_stderr_once),
        cmocka_unit_test(test_sweep_count_and_order),
        cmocka_unit_test(test_run_ids_stable_and_unique),
        cmocka_unit_test(test_ids_independent_of_position),
        cmocka_unit_test_teardown(test_dataset_resolution, back_to_testdata),
        cmocka_unit_test(test_bad_configs),
        cmocka_unit_test(test_error_lines),
        cmocka_unit_test(test_options_defaults_and_values),
        cmocka_unit_test(test_options_errors),
        cmocka_unit_test(test_options_layout),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test(test_format_double),
        cmocka_unit_test(test_print_help),
    };
    return cmocka_run_group_tests(tests, setup_group, NULL);
}
