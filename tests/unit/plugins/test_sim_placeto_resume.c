/* test_sim_placeto_resume.c — the placeto simulator resuming from the previous run's saved states
 * gives, bit for bit, what a fresh handle gives, over chains of placements that differ in few
 * ops (as progressive placers evaluate them), including unchanged and rejected placements. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "config/cluster.h"
#include "plugin/options.h"
#include "data/gen/gen.h"
#include "model/graph.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct resume_sim {
    void *so;
    const pb_simulator_ops *ops;
    void *instance;
} resume_sim;

/* Every output of one evaluation, sized for one graph and cluster. */
typedef struct resume_out {
    int n_ops, n_ports, n_devices;
    pb_eval ev;
    double *buf;
} resume_out;

static int resume_setup(void **state)
{
    const char *build = getenv("PB_BUILD");
    if (!build) {
        fprintf(stderr, "PB_BUILD is not set (run through ctest)\n");
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/simulator-placeto.so", build);
    resume_sim *s = calloc(1, sizeof *s);
    s->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!s->so) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        free(s);
        return -1;
    }
    const pb_plugin_desc *d = dlsym(s->so, PB_DESCRIPTOR_SYMBOL_NAME);
    if (!d || d->kind != PB_KIND_SIMULATOR || strcmp(d->name, "placeto") != 0)
        return -1;
    s->ops = d->ops;
    pb_create_args args = options_create_args(NULL, NULL, 1);
    pb_error err;
    if (s->ops->create(&args, &s->instance, &err) != PB_OK)
        return -1;
    *state = s;
    return 0;
}

static int resume_teardown(void **state)
{
    resume_sim *s = *state;
    s->ops->destroy(s->instance);
    dlclose(s->so);
    free(s);
    return 0;
}

static void resume_out_init(resume_out *o, const pb_graph *g, int nd)
{
    o->n_ops = g->n_nodes;
    o->n_ports = g->port_start[g->n_nodes];
    o->n_devices = nd;
    size_t count = 3 * (size_t)nd + 2 * (size_t)o->n_ops + 2 * (size_t)o->n_ports + 1;
    o->buf = calloc(count, sizeof(double));
    assert_non_null(o->buf);
    double *b = o->buf;
    o->ev = (pb_eval){.struct_size = sizeof(pb_eval),
                      .peak_mem_bytes = b,
                      .busy_us = b + nd,
                      .link_busy_us = b + 2 * nd,
                      .node_start_us = b + 3 * nd,
                      .node_end_us = b + 3 * nd + o->n_ops,
                      .port_send_us = b + 3 * nd + 2 * o->n_ops,
                      .port_arrive_us = b + 3 * nd + 2 * o->n_ops + o->n_ports};
}

static size_t resume_out_bytes(const resume_out *o)
{
    return (3 * (size_t)o->n_devices + 2 * (size_t)o->n_ops + 2 * (size_t)o->n_ports) *
           sizeof(double);
}

static void resume_eval(resume_sim *s, void *prep, const int *placement, int n, resume_out *o)
{
    pb_strategy st;
    pb_strategy_placement(&st, n, (int *)placement);
    pb_error err;
    memset(o->buf, 0xA5, resume_out_bytes(o));
    if (s->ops->evaluate(prep, &st, &o->ev, &err) != PB_OK)
        fail_msg("evaluate: %s", err.msg);
}

/* The placement evaluated by a long-lived handle and by a fresh one: identical bits.  With
 * a->ev.skip_memory the kept handle leaves the peak memory out (its buffer keeps the fill
 * pattern, feasible is 1) and everything else is still the fresh handle's full evaluation. */
static void resume_compare(resume_sim *s, const pb_graph *g, const pb_cluster *c, void *kept,
                           const int *placement, resume_out *a, resume_out *b)
{
    void *fresh = NULL;
    pb_error err;
    if (s->ops->prepare(s->instance, g, c, &fresh, &err) != PB_OK)
        fail_msg("prepare: %s", err.msg);
    resume_eval(s, kept, placement, g->n_nodes, a);
    resume_eval(s, fresh, placement, g->n_nodes, b);
    s->ops->release(fresh);
    assert_memory_equal(&a->ev.step_time_us, &b->ev.step_time_us, sizeof(double));
    assert_int_equal(a->ev.n_events, b->ev.n_events);
    size_t peak = (size_t)a->n_devices * sizeof(double);
    if (!a->ev.skip_memory) {
        assert_int_equal(a->ev.feasible, b->ev.feasible);
        assert_memory_equal(a->buf, b->buf, resume_out_bytes(a));
        return;
    }
    assert_int_equal(a->ev.feasible, 1);
    unsigned char fill[64 * sizeof(double)];
    memset(fill, 0xA5, sizeof fill);
    assert_true(peak <= sizeof fill);
    assert_memory_equal(a->buf, fill, peak);
    assert_memory_equal((char *)a->buf + peak, (char *)b->buf + peak, resume_out_bytes(a) - peak);
}

/* A chain of placements: one op or one group moved, sometimes several ops, an unchanged
 * placement, or a rejected one (a device out of range) in between. */
static void resume_chain_skip(resume_sim *s, const char *family, int index, int nd, int steps,
                              uint64_t seed, int skip_memory)
{
    pb_graph *g = NULL;
    pb_cluster *c = NULL;
    pb_error err;
    const gen_family *f = gen_family_find(family);
    assert_non_null(f);
    /* graph `index` of the family as `placebench dataset gen` writes it (family seed 1) */
    if (gen_graph(f, 1, index, &g, &err) != PB_OK)
        fail_msg("%s %d: %s", family, index, err.msg);
    if (cluster_preset("placeto-k80", nd, &c, &err) != PB_OK)
        fail_msg("cluster_preset: %s", err.msg);
    int n = g->n_nodes;
    pb_rng rng;
    pb_rng_seed(&rng, seed);
    int *pl = malloc((size_t)n * sizeof(int));
    for (int v = 0; v < n; v++)
        pl[v] = (int)pb_rng_below(&rng, (uint64_t)nd);
    void *kept = NULL;
    if (s->ops->prepare(s->instance, g, c, &kept, &err) != PB_OK)
        fail_msg("prepare: %s", err.msg);
    resume_out a, b;
    resume_out_init(&a, g, nd);
    resume_out_init(&b, g, nd);
    for (int t = 0; t < steps; t++) {
        int kind = (int)pb_rng_below(&rng, 10);
        if (kind == 0) { /* rejected placement: must not disturb what the handle keeps */
            int v = (int)pb_rng_below(&rng, (uint64_t)n), old = pl[v];
            pl[v] = nd;
            pb_strategy st;
            pb_strategy_placement(&st, n, pl);
            assert_int_not_equal(s->ops->evaluate(kept, &st, &a.ev, &err), PB_OK);
            pl[v] = old;
        } else if (kind == 1) { /* several ops */
            for (int k = 0; k < 4; k++)
                pl[pb_rng_below(&rng, (uint64_t)n)] = (int)pb_rng_below(&rng, (uint64_t)nd);
        } else if (kind >= 7 && g->group_of) { /* a whole group, as placers move them */
            int grp = g->group_of[pb_rng_below(&rng, (uint64_t)n)];
            int to = (int)pb_rng_below(&rng, (uint64_t)nd);
            for (int v = 0; v < n; v++)
                if (g->group_of[v] == grp)
                    pl[v] = to;
        } else if (kind != 2) { /* one op, mostly in the order a progressive placer visits */
            int v = kind < 6 ? t * n / steps : (int)pb_rng_below(&rng, (uint64_t)n);
            pl[v] = (int)pb_rng_below(&rng, (uint64_t)nd);
        }
        /* skip_memory: every other evaluation of the kept handle leaves the memory out */
        a.ev.skip_memory = skip_memory && pb_rng_below(&rng, 2);
        resume_compare(s, g, c, kept, pl, &a, &b);
    }
    s->ops->release(kept);
    free(a.buf);
    free(b.buf);
    free(pl);
    cluster_free(c);
    graph_free(g);
}

static void resume_chain(resume_sim *s, const char *family, int index, int nd, int steps,
                         uint64_t seed)
{
    resume_chain_skip(s, family, index, nd, steps, seed, 0);
}

/* pb_eval.skip_memory: the same step times, start times, transfers and event counts, resumed
 * or not, whether the previous evaluations swept the memory or not. */
static void test_resume_skip_memory(void **state)
{
    resume_chain_skip(*state, "cifar10", 2, 5, 200, 6, 1);
    resume_chain_skip(*state, "ptb", 1, 8, 200, 7, 1);
    resume_chain_skip(*state, "nmt", 2, 8, 200, 8, 1);
}

static void test_resume_cifar10(void **state)
{
    resume_chain(*state, "cifar10", 0, 3, 300, 1);
    resume_chain(*state, "cifar10", 1, 8, 300, 2);
}

static void test_resume_ptb(void **state)
{
    resume_chain(*state, "ptb", 0, 5, 300, 3);
}

static void test_resume_nmt(void **state)
{
    resume_chain(*state, "nmt", 0, 12, 300, 4); /* GPU:10 sorts before GPU:2 */
    resume_chain(*state, "nmt", 1, 2, 300, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resume_cifar10),
        cmocka_unit_test(test_resume_ptb),
        cmocka_unit_test(test_resume_nmt),
        cmocka_unit_test(test_resume_skip_memory),
    };
    return cmocka_run_group_tests(tests, resume_setup, resume_teardown);
}
