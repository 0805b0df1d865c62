/* test_store_tables.c — the papers' tables from a results file: order win counts (ties,
 * incomplete graphs, families, filters) and embedding means, on hand-built runs whose expected
 * figures are worked out in the comments. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "store/store_tables.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct fixture {
    char path[64];
    store *s;
    int next_id;
} fixture;

static void fixture_open(fixture *fx)
{
    snprintf(fx->path, sizeof fx->path, "/tmp/pb_test_tables_XXXXXX");
    int fd = mkstemp(fx->path);
    assert_true(fd >= 0);
    close(fd);
    remove(fx->path);
    pb_error err = {{0}};
    assert_int_equal(store_open(fx->path, 1, &fx->s, &err), PB_OK);
    fx->next_id = 0;
}

static void fixture_close(fixture *fx)
{
    store_close(fx->s);
    char p[96];
    remove(fx->path);
    snprintf(p, sizeof p, "%s-wal", fx->path);
    remove(p);
    snprintf(p, sizeof p, "%s-shm", fx->path);
    remove(p);
}

typedef struct run_spec {
    const char *dataset, *graph, *placer, *embedding, *traversal;
    int devices, status;
    double initial, best, wall;
    const double *curve; /* best so far per episode 0 .. n_curve-1 */
    int n_curve;
} run_spec;

static void put(fixture *fx, run_spec rs)
{
    char id[32];
    snprintf(id, sizeof id, "run%04d", fx->next_id++);
    store_run r = {0};
    r.run_id = id;
    r.experiment = "tables";
    r.settings_json = "{}";
    r.dataset = rs.dataset;
    r.graph = rs.graph;
    r.graph_checksum = "c";
    r.n_nodes = 10;
    r.n_devices = rs.devices;
    r.cluster = "placeto-k80";
    r.simulator = "placeto";
    r.simulator_version = "1";
    r.placer = rs.placer;
    r.placer_version = "1";
    r.embedding = rs.embedding;
    r.embedding_version = rs.embedding ? "1" : NULL;
    r.traversal = rs.traversal;
    r.traversal_version = rs.traversal ? "1" : NULL;
    r.seed = 1;
    r.placebench_version = "test";
    r.status = rs.status;
    r.error = rs.status ? "failed" : NULL;
    r.initial_us = rs.initial;
    r.best_us = rs.best;
    r.search_wall_s = rs.wall;
    store_curve_point pts[8];
    for (int i = 0; i < rs.n_curve; i++)
        pts[i] = (store_curve_point){i, rs.curve[i], rs.curve[i], 0, 0};
    pb_error err = {{0}};
    assert_int_equal(store_put_run(fx->s, &r, pts, rs.n_curve, &err), PB_OK);
}

/* A placeto/placeto-gnn run of order t on graph g with curve c (3 episodes). */
static void put_order(fixture *fx, const char *dataset, const char *g, int devices, const char *t,
                      double c0, double c1, double c2)
{
    double c[3] = {c0, c1, c2};
    put(fx, (run_spec){dataset, g, "placeto", "placeto-gnn", t, devices, 0, 100, c2, 1, c, 3});
}

static int wins(const store_order_wins *w, const char *family, int devices, int k,
                const char *order)
{
    int i = 0, j = 0, o = 0;
    while (i < w->n_datasets && strcmp(w->datasets[i], family) != 0)
        i++;
    while (j < w->n_devices && w->devices[j] != devices)
        j++;
    while (o < w->n_orders && strcmp(w->orders[o], order) != 0)
        o++;
    assert_true(i < w->n_datasets && j < w->n_devices && o < w->n_orders);
    return w->wins[(((size_t)i * w->n_devices + j) * w->n_episodes + k) * w->n_orders + o];
}

static int cell_int(const int *a, const store_order_wins *w, int i, int j, int k)
{
    return a[((size_t)i * w->n_devices + j) * w->n_episodes + k];
}

/*
 * Family "fam" holds graphs a (dataset given as a file) and b (its folder), 3 devices, orders
 * topo, bfs, lexico, 2 repeats each.  Graph a, episode 0: topo 10,10 / bfs 10,10 / lexico 12,12:
 * topo and bfs tie.  Episode 2: topo 10,20 (mean 15) / bfs 14,14 (14) / lexico 30,1 (15.5): bfs.
 * Graph b: episode 0: lexico 5 wins (topo 6, bfs 7); episode 2: lexico's run stops at episode 1,
 * so b is not compared.  A failed run with 0.1 and a random-placer run with 0.1 must not count.
 * Family "other" (dataset "x/other"), 5 devices: only topo and bfs; bfs wins at episode 2.
 */
static void test_order_wins(void **state)
{
    (void)state;
    fixture fx;
    fixture_open(&fx);
    const char *fa = "datasets/fam/a.json", *fb = "datasets/fam/";
    put_order(&fx, fa, "a.json", 3, "topo", 10, 10, 10);
    put_order(&fx, fa, "a.json", 3, "topo", 10, 10, 20);
    put_order(&fx, fa, "a.json", 3, "bfs", 10, 10, 14);
    put_order(&fx, fa, "a.json", 3, "bfs", 10, 10, 14);
    put_order(&fx, fa, "a.json", 3, "lexico", 12, 12, 30);
    put_order(&fx, fa, "a.json", 3, "lexico", 12, 12, 1);
    put_order(&fx, fb, "b.json", 3, "topo", 6, 6, 6);
    put_order(&fx, fb, "b.json", 3, "bfs", 7, 7, 7);
    double short_curve[2] = {5, 5};
    put(&fx, (run_spec){fb, "b.json", "placeto", "placeto-gnn", "lexico", 3, 0, 100, 5, 1,
                        short_curve, 2});
    double low[3] = {0.1, 0.1, 0.1};
    put(&fx, (run_spec){fa, "a.json", "placeto", "placeto-gnn", "topo", 3, 1, 100, 0.1, 1, low, 3});
    put(&fx, (run_spec){fa, "a.json", "random", NULL, "lexico", 3, 0, 100, 0.1, 1, low, 3});
    put_order(&fx, "x/other", "g.json", 5, "topo", 9, 9, 9);
    put_order(&fx, "x/other", "g.json", 5, "bfs", 9, 9, 8);

    int episodes[2] = {0, 2};
    store_order_wins w;
    pb_error err = {{0}};
    assert_int_equal(store_tables_order_wins(fx.s, "placeto", NULL, episodes, 2, &w, &err), PB_OK);
    assert_int_equal(w.n_datasets, 2);
    assert_string_equal(w.datasets[0], "fam");
    assert_string_equal(w.datasets[1], "other");
    assert_int_equal(w.n_devices, 2);
    assert_int_equal(w.n_orders, 3); /* bfs, lexico, topo */
    assert_string_equal(w.orders[0], "bfs");
    /* fam, 3 devices, episode 0: a tied (topo, bfs), b won by lexico */
    assert_int_equal(wins(&w, "fam", 3, 0, "topo"), 1);
    assert_int_equal(wins(&w, "fam", 3, 0, "bfs"), 1);
    assert_int_equal(wins(&w, "fam", 3, 0, "lexico"), 1);
    assert_int_equal(cell_int(w.graphs, &w, 0, 0, 0), 2);
    assert_int_equal(cell_int(w.ties, &w, 0, 0, 0), 1);
    /* episode 2: only a is compared; bfs */
    assert_int_equal(wins(&w, "fam", 3, 1, "bfs"), 1);
    assert_int_equal(wins(&w, "fam", 3, 1, "topo"), 0);
    assert_int_equal(wins(&w, "fam", 3, 1, "lexico"), 0);
    assert_int_equal(cell_int(w.graphs, &w, 0, 0, 1), 1);
    assert_int_equal(cell_int(w.ties, &w, 0, 0, 1), 0);
    /* fam has no 5-device runs, other no 3-device runs */
    assert_int_equal(cell_int(w.graphs, &w, 0, 1, 0), 0);
    assert_int_equal(cell_int(w.graphs, &w, 1, 0, 0), 0);
    /* other, 5 devices: tie at episode 0, bfs at episode 2 (lexico is not one of its orders) */
    assert_int_equal(wins(&w, "other", 5, 0, "topo"), 1);
    assert_int_equal(wins(&w, "other", 5, 0, "bfs"), 1);
    assert_int_equal(wins(&w, "other", 5, 1, "bfs"), 1);
    assert_int_equal(wins(&w, "other", 5, 1, "topo"), 0);
    assert_int_equal(cell_int(w.graphs, &w, 1, 1, 1), 1);
    store_order_wins_free(&w);

    /* a second embedding makes the unfiltered count an error; the filter selects one */
    put(&fx, (run_spec){fa, "a.json", "placeto", "graphsage", "topo", 3, 0, 100, 0.1, 1, low, 3});
    assert_int_equal(store_tables_order_wins(fx.s, "placeto", NULL, episodes, 2, &w, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "--embedding"));
    store_order_wins_free(&w);
    assert_int_equal(store_tables_order_wins(fx.s, "placeto", "placeto-gnn", episodes, 2, &w, &err),
                     PB_OK);
    assert_int_equal(wins(&w, "fam", 3, 1, "bfs"), 1);
    store_order_wins_free(&w);
    assert_int_equal(store_tables_order_wins(fx.s, "nosuch", NULL, episodes, 2, &w, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "nosuch"));
    store_order_wins_free(&w);
    fixture_close(&fx);
}

static void put_emb(fixture *fx, const char *dataset, const char *graph, int devices,
                    const char *embedding, double initial, double best, double wall)
{
    put(fx, (run_spec){dataset, graph, "placeto", embedding, NULL, devices, 0, initial, best, wall,
                       NULL, 0});
}

/*
 * e1 on fam at 3 devices: graph a improves 20% in 2 s (EC 0.1/s) and 10% in 1 s (0.1/s), graph b
 * 30% in 3 s (0.1/s): cell mean 20%, 2 s, EC 0.1, 2 graphs.  e1 at 5 devices: 50% in 5 s: cell
 * 50%, 5 s, EC 0.1.  Overall e1 = mean of the two cells: 35%, 3.5 s, EC 0.1 (the mean over the
 * four runs would be 27.5%).  e2 at 3 devices only: 0% in 4 s.  A run without an initial step
 * time, a failed run and a random-placer run are left out.
 */
static void test_embedding_table(void **state)
{
    (void)state;
    fixture fx;
    fixture_open(&fx);
    put_emb(&fx, "datasets/fam/a.json", "a.json", 3, "e1", 100, 80, 2);
    put_emb(&fx, "datasets/fam/a.json", "a.json", 3, "e1", 100, 90, 1);
    put_emb(&fx, "datasets/fam", "b.json", 3, "e1", 200, 140, 3);
    put_emb(&fx, "fam", "c.json", 5, "e1", 10, 5, 5);
    put_emb(&fx, "fam", "c.json", 3, "e2", 10, 10, 4);
    put_emb(&fx, "fam", "c.json", 3, "e2", NAN, 1, 4);
    put(&fx, (run_spec){"fam", "c.json", "placeto", "e2", NULL, 3, 1, 10, 1, 4, NULL, 0});
    put(&fx, (run_spec){"fam", "c.json", "random", "e2", NULL, 3, 0, 10, 1, 4, NULL, 0});

    store_embedding_table t;
    pb_error err = {{0}};
    assert_int_equal(store_tables_embeddings(fx.s, "placeto", NULL, &t, &err), PB_OK);
    assert_int_equal(t.n_datasets, 1);
    assert_string_equal(t.datasets[0], "fam");
    assert_int_equal(t.n_devices, 2);
    assert_int_equal(t.n_embeddings, 2);
    const store_embedding_cell *c = &t.cells[0]; /* fam, 3 devices, e1 */
    assert_int_equal(c->n_runs, 3);
    assert_int_equal(c->n_graphs, 2);
    assert_float_equal(c->improvement_pct, 20.0, 1e-9);
    assert_float_equal(c->wall_s, 2.0, 1e-9);
    assert_float_equal(c->ec, 0.1, 1e-9);
    c = &t.cells[1]; /* fam, 3 devices, e2 */
    assert_int_equal(c->n_runs, 1);
    assert_float_equal(c->improvement_pct, 0.0, 1e-9);
    c = &t.cells[2]; /* fam, 5 devices, e1 */
    assert_float_equal(c->improvement_pct, 50.0, 1e-9);
    assert_int_equal(t.cells[3].n_runs, 0); /* fam, 5 devices, e2 */
    assert_true(isnan(t.cells[3].improvement_pct));
    assert_float_equal(t.overall[0].improvement_pct, 35.0, 1e-9);
    assert_float_equal(t.overall[0].wall_s, 3.5, 1e-9);
    assert_float_equal(t.overall[0].ec, 0.1, 1e-9);
    assert_int_equal(t.overall[0].n_runs, 4);
    assert_float_equal(t.overall[1].wall_s, 4.0, 1e-9);
    store_embedding_table_free(&t);
    assert_int_equal(store_tables_embeddings(fx.s, "placeto", "topo", &t, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "topo"));
    store_embedding_table_free(&t);
    fixture_close(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_wins),
        cmocka_unit_test(test_embedding_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
