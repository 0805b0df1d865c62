/* test_store_board.c — the leaderboard cells of a results file (store_board.c): grouping by
 * problem and placer, means over the ok runs only, labels and order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "store/store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An ok run of `placer` on graph g at 3 devices; embedding and traversal may be NULL. */
static store_run board_run(const char *id, const char *g, const char *placer, const char *emb,
                           const char *trav, double best, double search_s, long long calls)
{
    store_run r = {0};
    r.run_id = id;
    r.experiment = "exp";
    r.settings_json = "{}";
    r.dataset = "ds";
    r.graph = g;
    r.graph_checksum = "abc";
    r.n_nodes = 4;
    r.n_devices = 3;
    r.cluster = "placeto-k80";
    r.simulator = "placeto";
    r.simulator_version = "1.0";
    r.placer = placer;
    r.placer_version = "1.0";
    r.embedding = emb;
    r.traversal = trav;
    r.placebench_version = "test";
    r.status = STORE_OK;
    r.initial_us = NAN;
    r.best_us = best;
    r.search_wall_s = search_s;
    r.sim_calls = calls;
    return r;
}

static store_run board_failed(store_run r)
{
    r.status = STORE_FAILED;
    r.error = "boom";
    r.best_us = NAN;
    return r;
}

/* random on g1: best 100 and 200, search 1 s and 3 s, 10 and 30 calls -> means 150, 2, 20.
 * placeto on g1: one ok run (90 us) and one failed -> 1 of 2 ok, mean 90.
 * random on g2: failed only -> 0 of 1 ok, no means. */
static void test_board_means_and_order(void **state)
{
    (void)state;
    char path[] = "/tmp/pb_test_board_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    remove(path);
    store *s;
    pb_error err;
    assert_int_equal(store_open(path, 1, &s, &err), PB_OK);
    assert_int_equal(store_set_experiment(s, "exp", "{}", 1, &err), PB_OK);
    store_run runs[5] = {
        board_run("a", "g1.json", "random", NULL, NULL, 100, 1, 10),
        board_run("b", "g1.json", "random", NULL, NULL, 200, 3, 30),
        board_run("c", "g1.json", "placeto", "placeto-gnn", "topo", 90, 5, 50),
        board_failed(board_run("d", "g1.json", "placeto", "placeto-gnn", "topo", 0, 7, 70)),
        board_failed(board_run("e", "g2.json", "random", NULL, NULL, 0, 1, 1)),
    };
    for (int i = 0; i < 5; i++)
        assert_int_equal(store_put_run(s, &runs[i], NULL, 0, &err), PB_OK);
    store_board_row *rows = NULL;
    int n = 0;
    assert_int_equal(store_board_rows(s, &rows, &n, &err), PB_OK);
    store_close(s);
    remove(path);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].problem, "g1, 3 devices, placeto-k80, placeto");
    assert_string_equal(rows[0].entry, "placeto / placeto-gnn / topo");
    assert_int_equal(rows[0].n_runs, 2);
    assert_int_equal(rows[0].n_ok, 1);
    assert_true(rows[0].mean_us == 90 && rows[0].mean_search_s == 5);
    assert_true(rows[0].mean_sim_calls == 50);
    assert_string_equal(rows[1].problem, "g1, 3 devices, placeto-k80, placeto");
    assert_string_equal(rows[1].entry, "random");
    assert_int_equal(rows[1].n_runs, 2);
    assert_int_equal(rows[1].n_ok, 2);
    assert_true(rows[1].mean_us == 150 && rows[1].mean_search_s == 2);
    assert_true(rows[1].mean_sim_calls == 20);
    assert_string_equal(rows[2].problem, "g2, 3 devices, placeto-k80, placeto");
    assert_int_equal(rows[2].n_runs, 1);
    assert_int_equal(rows[2].n_ok, 0);
    assert_true(isnan(rows[2].mean_us) && isnan(rows[2].mean_search_s));
    store_board_rows_free(rows, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_board_means_and_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
