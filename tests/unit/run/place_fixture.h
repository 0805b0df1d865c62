/* place_fixture.h — what the in-process run tests (test_place_*.c) share: the plugin loader of
 * the build, graph 0 of the nmt family on a seeded 5-device placeto-k80 cluster, plugin
 * resolution, and a host progress callback that records every curve point.  Include after
 * cmocka.h. */
#ifndef PLACE_FIXTURE_H
#define PLACE_FIXTURE_H

#include "config/cluster.h"
#include "data/gen/gen.h"
#include "model/graph.h"
#include "plugin/loader.h"
#include "run/place.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLACE_FIXTURE_POINTS 64

/* What a run reports through the host: every curve point, in order. */
typedef struct curve {
    int n;
    pb_progress p[PLACE_FIXTURE_POINTS];
} curve;

static void curve_add(void *ctx, const pb_progress *p)
{
    curve *c = ctx;
    assert_true(c->n < PLACE_FIXTURE_POINTS);
    c->p[c->n++] = *p;
}

typedef struct place_fixture {
    loader *l;
    pb_graph *g;
    pb_cluster *cluster;
} place_fixture;

static void place_fixture_resolve(const place_fixture *f, int kind, const char *name, int n,
                                  const char *const *kv, plan_plugin *out)
{
    pb_error err = {{0}};
    if (place_plugin_resolve(f->l, kind, name, kv, n, "test", out, &err))
        fail_msg("%s: %s", name, err.msg);
}

static void place_fixture_open(place_fixture *f)
{
    memset(f, 0, sizeof *f);
    const char *build = getenv("PB_BUILD");
    assert_non_null(build);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/plugins", build);
    const char *extra[1] = {dir};
    pb_error err = {{0}};
    f->l = loader_new(extra, 1, &err);
    assert_non_null(f->l);
    /* nmt graph 0 (192 groups): small enough for a sanitizer build, with fan-outs and joins. */
    if (gen_graph(gen_family_find("nmt"), 1, 0, &f->g, &err))
        fail_msg("%s", err.msg);
    if (cluster_preset_seeded("placeto-k80", 5, 11, &f->cluster, &err))
        fail_msg("%s", err.msg);
}

static void place_fixture_close(place_fixture *f)
{
    cluster_free(f->cluster);
    graph_free(f->g);
    loader_free(f->l);
}

#endif
