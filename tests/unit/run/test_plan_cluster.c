/* test_plan_cluster.c — the plan builds each run's cluster once, with the seed the run's random
 * topology has always been drawn from, and a worker runs on exactly the cluster the plan built
 * and checked (run/plan.c, run/runner.c). */
#define _XOPEN_SOURCE 700 /* mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config/cluster.h"
#include "config/config.h"
#include "run/place.h"
#include "run/plan.h"
#include "run/runner.h"
#include "store/store.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEED 5
#define REPEATS 3

/* A sweep over the seeded random topology and a fixed preset: 2 clusters x 2 device counts x
 * 3 repeats = 12 distinct clusters for 24 runs. */
static plan *build_plan(char *dir, size_t dir_size)
{
    const char *data = getenv("PB_TESTDATA"), *build = getenv("PB_BUILD");
    assert_non_null(data);
    assert_non_null(build);
    snprintf(dir, dir_size, "/tmp/pb-plan-cluster-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/plan.lua", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "return experiment {\n"
            "  name = 'plan-cluster',\n"
            "  datasets = '%s/graphs/diamond.json',\n"
            "  devices = { 3, 5 },\n"
            "  cluster = { 'tag-random', 'placeto-k80' },\n"
            "  placer = { 'round-robin', 'random' },\n"
            "  sim_calls = 20,\n"
            "  repeats = %d,\n"
            "  seed = %d,\n"
            "  plugin_path = '%s/plugins',\n"
            "  results = '%s/plan.db',\n"
            "}\n",
            data, REPEATS, SEED, build, dir);
    assert_int_equal(fclose(f), 0);
    experiment *x = NULL;
    pb_error err = {{0}};
    if (config_load(path, NULL, &x, &err) != PB_OK)
        fail_msg("config_load: %s", err.msg);
    plan *p = NULL;
    if (plan_build(x, &p, &err) != PB_OK)
        fail_msg("plan_build: %s", err.msg);
    assert_int_equal(p->n_runs, 24);
    return p;
}

static void remove_dir(const char *dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/plan.lua", dir);
    unlink(path);
    rmdir(dir);
}

/* The cluster a worker built for itself before the plan built them: the preset drawn with
 * pb_seed_derive(experiment seed, "cluster#<repeat>"). */
static pb_cluster *cluster_of_repeat(const char *preset, int n_devices, int repeat)
{
    char label[32];
    snprintf(label, sizeof label, "cluster#%d", repeat);
    pb_cluster *c = NULL;
    pb_error err = {{0}};
    if (cluster_preset_seeded(preset, n_devices, pb_seed_derive(SEED, label), &c, &err) != PB_OK)
        fail_msg("%s on %d devices: %s", preset, n_devices, err.msg);
    return c;
}

/* Whether two clusters are the same, field by field and bit for bit. */
static int same_cluster(const pb_cluster *a, const pb_cluster *b)
{
    size_t n = (size_t)a->n_devices;
    if (strcmp(a->name, b->name) != 0 || a->n_devices != b->n_devices || a->n_types != b->n_types ||
        a->n_machines != b->n_machines ||
        memcmp(a->device_type, b->device_type, n * sizeof(int)) != 0 ||
        memcmp(a->device_machine, b->device_machine, n * sizeof(int)) != 0 ||
        memcmp(a->link_bandwidth, b->link_bandwidth, n * n * sizeof(double)) != 0 ||
        memcmp(a->link_latency, b->link_latency, n * n * sizeof(double)) != 0 ||
        a->delta1_us != b->delta1_us || a->delta2_us != b->delta2_us ||
        a->transfer_speed != b->transfer_speed || a->init_offset_us != b->init_offset_us)
        return 0;
    for (int t = 0; t < a->n_types; t++) {
        const pb_device_type *x = &a->types[t], *y = &b->types[t];
        if (strcmp(x->name, y->name) != 0 || x->peak_flops != y->peak_flops ||
            x->mem_bandwidth != y->mem_bandwidth || x->memory_bytes != y->memory_bytes ||
            x->price_per_hour != y->price_per_hour || x->speed_vs_ref != y->speed_vs_ref)
            return 0;
    }
    return 1;
}

static int same_key(const run_spec *a, const run_spec *b)
{
    return strcmp(a->cluster, b->cluster) == 0 && a->n_devices == b->n_devices &&
           a->repeat == b->repeat;
}

static void test_plan_builds_each_cluster_once(void **state)
{
    (void)state;
    char dir[64];
    plan *p = build_plan(dir, sizeof dir);
    assert_int_equal(p->n_clusters, 2 * 2 * REPEATS);
    for (int i = 0; i < p->n_runs; i++) {
        const plan_run *r = &p->runs[i];
        assert_non_null(r->cluster);
        pb_cluster *want = cluster_of_repeat(r->spec->cluster, r->spec->n_devices, r->spec->repeat);
        if (!same_cluster(r->cluster, want))
            fail_msg("run %d (%s, %d devices, repeat %d): the plan's cluster is not the one drawn "
                     "from the repeat's seed",
                     i, r->spec->cluster, r->spec->n_devices, r->spec->repeat);
        cluster_free(want);
        for (int j = 0; j < i; j++)
            assert_int_equal(same_key(r->spec, p->runs[j].spec), r->cluster == p->runs[j].cluster);
    }
    /* The random topology is drawn per repeat: the seed is what makes its clusters differ. */
    const pb_cluster *first[REPEATS] = {NULL};
    for (int i = 0; i < p->n_runs; i++)
        if (strcmp(p->runs[i].spec->cluster, "tag-random") == 0 && p->runs[i].spec->n_devices == 5)
            first[p->runs[i].spec->repeat] = p->runs[i].cluster;
    assert_false(same_cluster(first[0], first[1]) && same_cluster(first[1], first[2]));
    plan_free(p);
    remove_dir(dir);
}

/* The best step time runner_execute reports for run r (the worker's side of a sweep). */
static double execute_best(const plan_run *r)
{
    FILE *out = tmpfile();
    assert_non_null(out);
    assert_int_equal(runner_execute(r, fileno(out)), STORE_OK);
    rewind(out);
    char line[1024];
    double best = -1;
    int status = -1;
    while (fgets(line, sizeof line, out))
        if (line[0] == 'R')
            assert_int_equal(sscanf(line, "R %*d %d %*f %lf", &status, &best), 2);
    fclose(out);
    assert_int_equal(status, STORE_OK);
    return best;
}

/* The best step time of run r placed directly on cluster c. */
static double place_best(const plan_run *r, const pb_cluster *c)
{
    place_request q = {.graph = r->graph,
                       .cluster = c,
                       .simulator = &r->simulator,
                       .placer = &r->placer,
                       .embedding = &r->embedding,
                       .traversal = &r->traversal,
                       .seed = r->spec->seed,
                       .episodes = r->spec->episodes,
                       .sim_calls = r->spec->sim_calls,
                       .log_id = "test"};
    place_result res = {0};
    pb_error err = {{0}};
    if (place_run(&q, &res, &err) != PB_OK)
        fail_msg("place_run: %s", err.msg);
    return res.best_us;
}

static void test_worker_runs_on_the_plan_cluster(void **state)
{
    (void)state;
    char dir[64];
    plan *p = build_plan(dir, sizeof dir);
    plan_run *r = NULL;
    for (int i = 0; i < p->n_runs && !r; i++)
        if (strcmp(p->runs[i].spec->cluster, "tag-random") == 0 &&
            strcmp(p->runs[i].spec->placer.name, "round-robin") == 0 &&
            p->runs[i].spec->n_devices == 5 && p->runs[i].spec->repeat == 1)
            r = &p->runs[i];
    assert_non_null(r);
    /* The result is the one a worker gave when it drew the cluster itself. */
    pb_cluster *drawn = cluster_of_repeat("tag-random", 5, 1);
    double best = execute_best(r);
    assert_true(best > 0);
    assert_true(best == place_best(r, drawn));
    /* Another topology in the plan (here the one the plan used to check, drawn with seed 1)
     * changes what the worker measures: the worker runs on the plan's cluster, whatever it is. */
    pb_cluster *other = NULL;
    pb_error err = {{0}};
    assert_int_equal(cluster_preset_seeded("tag-random", 5, 1, &other, &err), PB_OK);
    assert_false(same_cluster(other, drawn));
    const pb_cluster *planned = r->cluster;
    r->cluster = other;
    double best_other = execute_best(r);
    r->cluster = planned;
    assert_true(best_other == place_best(r, other));
    assert_true(best_other != best);
    cluster_free(other);
    cluster_free(drawn);
    plan_free(p);
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_builds_each_cluster_once),
        cmocka_unit_test(test_worker_runs_on_the_plan_cluster),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
