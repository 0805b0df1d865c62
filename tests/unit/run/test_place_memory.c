/* test_place_memory.c — placeto asks the simulator to skip its memory sweep (pb_eval.skip_memory)
 * only when nothing reads the peak memory, and skipping it changes no result: runs with and
 * without the sweep agree bit for bit, and runs whose features read the peak memory get it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "place_fixture.h"

typedef struct fixture {
    place_fixture base;
    plan_plugin sim, trav;
} fixture;

static void fixture_open(fixture *f)
{
    place_fixture_open(&f->base);
    place_fixture_resolve(&f->base, PB_KIND_SIMULATOR, "placeto", 0, NULL, &f->sim);
    place_fixture_resolve(&f->base, PB_KIND_TRAVERSAL, "topo", 0, NULL, &f->trav);
}

static void fixture_close(fixture *f)
{
    place_plugin_free(&f->sim);
    place_plugin_free(&f->trav);
    place_fixture_close(&f->base);
}

/* What one run gives: curve, best placement and the summary. */
typedef struct outcome {
    curve c;
    place_result res;
    int *device;
} outcome;

/* A 7-episode placeto run with embedding `emb` (its feature5 option) and placer option
 * `penalty` (mem_penalty=..., whose default 0 lets the sweep be skipped). */
static void run(fixture *f, const char *emb, const char *feature5, const char *penalty, outcome *o)
{
    const char *ekv[1] = {feature5}, *pkv[1] = {penalty};
    plan_plugin placer, embedding;
    place_fixture_resolve(&f->base, PB_KIND_PLACER, "placeto", penalty ? 1 : 0, pkv, &placer);
    place_fixture_resolve(&f->base, PB_KIND_EMBEDDING, emb, feature5 ? 1 : 0, ekv, &embedding);
    int n = f->base.g->grouped->n_nodes;
    memset(o, 0, sizeof *o);
    o->device = calloc((size_t)n, sizeof(int));
    assert_non_null(o->device);
    o->res.best_device = o->device;
    place_request q = {.graph = f->base.g,
                       .cluster = f->base.cluster,
                       .simulator = &f->sim,
                       .placer = &placer,
                       .embedding = &embedding,
                       .traversal = &f->trav,
                       .seed = 7,
                       .episodes = 7,
                       .log_id = "test",
                       .progress = curve_add,
                       .progress_ctx = &o->c};
    pb_error err = {{0}};
    if (place_run(&q, &o->res, &err))
        fail_msg("%s: %s", emb, err.msg);
    place_plugin_free(&placer);
    place_plugin_free(&embedding);
}

static int same(const fixture *f, const outcome *a, const outcome *b)
{
    int n = f->base.g->grouped->n_nodes;
    if (a->c.n != b->c.n || a->res.sim_calls != b->res.sim_calls ||
        a->res.sim_events != b->res.sim_events ||
        memcmp(&a->res.best_us, &b->res.best_us, sizeof(double)) ||
        memcmp(&a->res.update_flop, &b->res.update_flop, sizeof(double)) ||
        memcmp(a->device, b->device, (size_t)n * sizeof(int)))
        return 0;
    for (int i = 0; i < a->c.n; i++)
        if (memcmp(&a->c.p[i].episode_best_us, &b->c.p[i].episode_best_us, sizeof(double)) ||
            memcmp(&a->c.p[i].best_so_far_us, &b->c.p[i].best_so_far_us, sizeof(double)))
            return 0;
    return 1;
}

/* mem_penalty = 1e-9 per GB never changes a reward here (no device comes near 11 GB) but makes
 * the placer read the peak memory, so the simulator sweeps it on every call. */
static void check_embedding(const char *emb)
{
    fixture f;
    fixture_open(&f);
    outcome skipped, swept, mem_read, mem_swept;
    run(&f, emb, NULL, NULL, &skipped);
    run(&f, emb, NULL, "mem_penalty=1e-9", &swept);
    assert_true(same(&f, &skipped, &swept));
    /* Features of the peak memory: never skipped, so equal to the run that sweeps anyway, and
     * not the start-time run (the feature is read). */
    run(&f, emb, "feature5=peak-mem", NULL, &mem_read);
    run(&f, emb, "feature5=peak-mem", "mem_penalty=1e-9", &mem_swept);
    assert_true(same(&f, &mem_read, &mem_swept));
    assert_false(same(&f, &mem_read, &skipped));
    outcome *all[] = {&skipped, &swept, &mem_read, &mem_swept};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]->device);
    fixture_close(&f);
}

static void test_placeto_gnn(void **state)
{
    (void)state;
    check_embedding("placeto-gnn");
}

static void test_graphsage(void **state)
{
    (void)state;
    check_embedding("graphsage");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placeto_gnn),
        cmocka_unit_test(test_graphsage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
