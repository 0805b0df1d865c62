/* test_place_multi.c — interleaved runs (run/place.c place_run_multi, placeto's place_multi,
 * placeto-gnn's forward_multi): each of K runs in one call gives exactly what it gives alone —
 * learning curve, placement, initial and best step times, simulator calls, FLOP counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "place_fixture.h"

#include <math.h>

#define K 3

typedef struct fixture {
    place_fixture base;
    pb_graph *g; /* base.g */
    plan_plugin sim, placer, placer_batch2, emb, trav[K];
} fixture;

static void resolve(fixture *f, int kind, const char *name, int n, const char *const *kv,
                    plan_plugin *out)
{
    place_fixture_resolve(&f->base, kind, name, n, kv, out);
}

static void fixture_open(fixture *f)
{
    memset(f, 0, sizeof *f);
    place_fixture_open(&f->base);
    f->g = f->base.g;
    resolve(f, PB_KIND_SIMULATOR, "placeto", 0, NULL, &f->sim);
    resolve(f, PB_KIND_PLACER, "placeto", 0, NULL, &f->placer);
    const char *batch2[] = {"batch=2"};
    resolve(f, PB_KIND_PLACER, "placeto", 1, batch2, &f->placer_batch2);
    resolve(f, PB_KIND_EMBEDDING, "placeto-gnn", 0, NULL, &f->emb);
    const char *orders[K] = {"topo", "bfs", "reversed-topo"};
    for (int r = 0; r < K; r++)
        resolve(f, PB_KIND_TRAVERSAL, orders[r], 0, NULL, &f->trav[r]);
}

static void fixture_close(fixture *f)
{
    place_plugin_free(&f->sim);
    place_plugin_free(&f->placer);
    place_plugin_free(&f->placer_batch2);
    place_plugin_free(&f->emb);
    for (int r = 0; r < K; r++)
        place_plugin_free(&f->trav[r]);
    place_fixture_close(&f->base);
}

/* Run r: its own seed and traversal order, 7 episodes (greedy 0 and 5, five updates). */
static place_request request(fixture *f, int r, curve *c, const plan_plugin *placer)
{
    c->n = 0;
    return (place_request){.graph = f->g,
                           .cluster = f->base.cluster,
                           .simulator = &f->sim,
                           .placer = placer,
                           .embedding = &f->emb,
                           .traversal = &f->trav[r],
                           .seed = 100 + 17 * (unsigned long long)r,
                           .episodes = 7,
                           .log_id = "test",
                           .progress = curve_add,
                           .progress_ctx = c};
}

static void expect_same_result(const place_result *a, const int *da, const place_result *b,
                               const int *db, int n)
{
    assert_memory_equal(&a->initial_us, &b->initial_us, sizeof a->initial_us);
    assert_memory_equal(&a->best_us, &b->best_us, sizeof a->best_us);
    assert_int_equal(a->sim_calls, b->sim_calls);
    assert_int_equal(a->sim_events, b->sim_events);
    assert_memory_equal(&a->forward_flop, &b->forward_flop, sizeof a->forward_flop);
    assert_memory_equal(&a->update_flop, &b->update_flop, sizeof a->update_flop);
    assert_memory_equal(da, db, (size_t)n * sizeof(int));
}

/* The curves' search results, bit for bit (wall and CPU seconds aside). */
static void expect_same_curve(const curve *a, const curve *b)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->n, 7);
    for (int i = 0; i < a->n; i++) {
        assert_int_equal(a->p[i].episode, b->p[i].episode);
        assert_memory_equal(&a->p[i].episode_best_us, &b->p[i].episode_best_us, sizeof(double));
        assert_memory_equal(&a->p[i].best_so_far_us, &b->p[i].best_so_far_us, sizeof(double));
        assert_int_equal(a->p[i].sim_calls, b->p[i].sim_calls);
    }
}

/* K runs alone and then together through placer `placer`; both must agree in everything. */
static void check_alone_vs_together(fixture *f, const plan_plugin *placer)
{
    int n = f->g->grouped->n_nodes;
    curve alone_c[K], multi_c[K];
    int *alone_d = calloc((size_t)K * n, sizeof(int)),
        *multi_d = calloc((size_t)K * n, sizeof(int));
    assert_non_null(alone_d);
    assert_non_null(multi_d);
    place_result alone[K], multi[K];
    place_request qs[K];
    pb_error errs[K];
    for (int r = 0; r < K; r++) {
        place_request q = request(f, r, &alone_c[r], placer);
        memset(&alone[r], 0, sizeof alone[r]);
        alone[r].best_device = alone_d + (size_t)r * n;
        if (place_run(&q, &alone[r], &errs[r]))
            fail_msg("run %d alone: %s", r, errs[r].msg);
    }
    for (int r = 0; r < K; r++) {
        qs[r] = request(f, r, &multi_c[r], placer);
        memset(&multi[r], 0, sizeof multi[r]);
        multi[r].best_device = multi_d + (size_t)r * n;
    }
    if (place_run_multi(qs, K, multi, errs))
        fail_msg("runs together: %s / %s / %s", errs[0].msg, errs[1].msg, errs[2].msg);
    for (int r = 0; r < K; r++) {
        expect_same_result(&alone[r], alone_d + (size_t)r * n, &multi[r], multi_d + (size_t)r * n,
                           n);
        expect_same_curve(&alone_c[r], &multi_c[r]);
    }
    /* The runs differ from each other (else the check above would prove little). */
    assert_memory_not_equal(alone_d, alone_d + n, (size_t)n * sizeof(int));
    free(alone_d);
    free(multi_d);
}

static void test_interleaved_equals_alone(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f);
    check_alone_vs_together(&f, &f.placer);
    fixture_close(&f);
}

/* Runs that cannot go in lock-step (run 1 recomputes 2 steps at a time) are each run alone,
 * with the same results. */
static void test_mismatched_runs_fall_back(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f);
    int n = f.g->grouped->n_nodes;
    curve c[K], solo;
    int *d = calloc((size_t)K * n, sizeof(int)), *solo_d = calloc((size_t)n, sizeof(int));
    assert_non_null(d);
    assert_non_null(solo_d);
    place_request qs[K];
    place_result res[K];
    pb_error errs[K];
    for (int r = 0; r < K; r++) {
        qs[r] = request(&f, r, &c[r], r == 1 ? &f.placer_batch2 : &f.placer);
        memset(&res[r], 0, sizeof res[r]);
        res[r].best_device = d + (size_t)r * n;
    }
    if (place_run_multi(qs, K, res, errs))
        fail_msg("%s", errs[0].msg);
    place_request q = request(&f, 1, &solo, &f.placer_batch2);
    place_result one = {0};
    one.best_device = solo_d;
    pb_error err = {{0}};
    if (place_run(&q, &one, &err))
        fail_msg("%s", err.msg);
    expect_same_result(&one, solo_d, &res[1], d + n, n);
    expect_same_curve(&solo, &c[1]);
    free(d);
    free(solo_d);
    fixture_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleaved_equals_alone),
        cmocka_unit_test(test_mismatched_runs_fall_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
