/* plan.c — validating an experiment completely (plugins, options, graphs, clusters) before it
 * runs. */
#include "plan.h"

#include "config/cluster.h"
#include "core/array.h"
#include "model/graph.h"
#include "data/nodelink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Loads one plugin of a run and resolves its options; `line` locates it in the config. */
static int plan_resolve_plugin(plan *p, int kind, const run_plugin *rp, int fallback_line,
                               plan_plugin *out, pb_error *err)
{
    memset(out, 0, sizeof *out);
    if (!rp->name)
        return PB_OK;
    int line = rp->ref && rp->ref->line > 0 ? rp->ref->line : fallback_line;
    pb_error inner;
    if (loader_find(p->loader, kind, rp->name, &out->entry, &inner))
        return pb_errorf(err, "%s:%d: %s", p->x->file, line, inner.msg);
    option_kv *kv = malloc((size_t)(rp->n ? rp->n : 1) * sizeof *kv);
    if (!kv)
        return pb_errorf(err, "out of memory");
    for (int i = 0; i < rp->n; i++)
        kv[i] = (option_kv){rp->keys[i], rp->values[i]};
    char where[600];
    snprintf(where, sizeof where, "%s:%d: %s '%s'", p->x->file, line, loader_kind_name(kind),
             rp->name);
    int rc = options_resolve(out->entry->desc, kv, rp->n, where, &out->opts, err);
    /* Point at the offending option's own line when the config has it. */
    for (int i = 0; rc != PB_OK && rp->ref && i < rp->ref->n_opts; i++) {
        char quoted[256];
        snprintf(quoted, sizeof quoted, "'%s'", rp->ref->opts[i].key);
        if (rp->ref->opts[i].line > 0 && strstr(err->msg, quoted)) {
            snprintf(where, sizeof where, "%s:%d: %s '%s'", p->x->file, rp->ref->opts[i].line,
                     loader_kind_name(kind), rp->name);
            options_resolve(out->entry->desc, kv, rp->n, where, &out->opts, err);
            break;
        }
    }
    free(kv);
    return rc;
}

/* A generated graph (one with an origin) must come from the experiment's cost_model. */
static int plan_check_cost_model(const experiment *x, const char *path, const pb_graph *g,
                                 pb_error *err)
{
    const char *origin = graph_origin(g),
               *want = x->cost_model_roofline ? "roofline" : "calibrated";
    const char *at = origin ? strstr(origin, "cost_model ") : NULL;
    if (!at || strcmp(at + 11, want) == 0)
        return PB_OK;
    return pb_errorf(err,
                     "%s:%d: cost_model \"%s\": graph %s was generated with %s; regenerate it "
                     "('placebench dataset gen ... --cost-model %s') or set cost_model = \"%s\"",
                     x->file, x->line_cost_model, want, path, at, want, at + 11);
}

static int plan_load_graph(plan *p, const char *path, const pb_graph **out, pb_error *err)
{
    for (int i = 0; i < p->n_graphs; i++)
        if (strcmp(p->graph_paths[i], path) == 0) {
            *out = p->graphs[i];
            return PB_OK;
        }
    pb_graph *g;
    if (nodelink_read(path, &g, err))
        return PB_ERR;
    if (g->n_nodes == 0) {
        graph_free(g);
        return pb_errorf(err, "%s: graph has no nodes", path);
    }
    if (plan_check_cost_model(p->x, path, g, err)) {
        graph_free(g);
        return PB_ERR;
    }
    char **np = realloc(p->graph_paths, (size_t)(p->n_graphs + 1) * sizeof(char *));
    if (np)
        p->graph_paths = np;
    pb_graph **ng = realloc(p->graphs, (size_t)(p->n_graphs + 1) * sizeof(pb_graph *));
    if (ng)
        p->graphs = ng;
    if (!np || !ng) {
        graph_free(g);
        return pb_errorf(err, "out of memory");
    }
    p->graph_paths[p->n_graphs] = strdup(path);
    p->graphs[p->n_graphs++] = g;
    *out = g;
    return PB_OK;
}

/* A random topology is drawn per repeat from the experiment seed, not the run seed: every
 * placer of one repeat is measured on the same cluster. */
static unsigned long long plan_cluster_seed(const experiment *x, int repeat)
{
    char label[32];
    snprintf(label, sizeof label, "cluster#%d", repeat);
    return pb_seed_derive(x->seed, label);
}

/* Builds the cluster of run s with `seed` and files it under `key` as entry *at. */
static int plan_add_cluster(plan *p, const run_spec *s, unsigned long long seed, const char *key,
                            int *at, pb_error *err)
{
    pb_cluster *c;
    pb_error inner;
    if (cluster_preset_seeded(s->cluster, s->n_devices, seed, &c, &inner))
        return pb_errorf(err, "%s:%d: %s", p->x->file,
                         p->x->line_clusters ? p->x->line_clusters : p->x->line_devices, inner.msg);
    if (array_grow(&p->clusters, &p->cap_clusters, p->n_clusters + 1, sizeof *p->clusters) ||
        strmap_put(&p->cluster_index, key, p->n_clusters)) {
        cluster_free(c);
        return pb_errorf(err, "out of memory");
    }
    *at = p->n_clusters;
    p->clusters[p->n_clusters++] = (plan_cluster){s->cluster, s->n_devices, seed, c};
    return PB_OK;
}

/* The cluster of run s: built for the first run with its (preset, devices, seed), then shared. */
static int plan_resolve_cluster(plan *p, const run_spec *s, const pb_cluster **out, pb_error *err)
{
    unsigned long long seed = plan_cluster_seed(p->x, s->repeat);
    size_t len = strlen(s->cluster) + 64;
    char *key = malloc(len);
    if (!key)
        return pb_errorf(err, "out of memory");
    snprintf(key, len, "%s\n%d\n%llu", s->cluster, s->n_devices, seed);
    int at = strmap_get(&p->cluster_index, key);
    int rc = at >= 0 ? PB_OK : plan_add_cluster(p, s, seed, key, &at, err);
    free(key);
    if (rc == PB_OK)
        *out = p->clusters[at].cluster;
    return rc;
}

static int plan_run_resolve(plan *p, int i, pb_error *err)
{
    const run_spec *s = &p->specs[i];
    plan_run *r = &p->runs[i];
    r->spec = s;
    const experiment *x = p->x;
    if (plan_resolve_plugin(p, PB_KIND_SIMULATOR, &s->simulator, x->line_simulators, &r->simulator,
                            err) ||
        plan_resolve_plugin(p, PB_KIND_PLACER, &s->placer, x->line_placers, &r->placer, err) ||
        plan_resolve_plugin(p, PB_KIND_EMBEDDING, &s->embedding, x->line_embeddings, &r->embedding,
                            err) ||
        plan_resolve_plugin(p, PB_KIND_TRAVERSAL, &s->traversal, x->line_traversals, &r->traversal,
                            err))
        return PB_ERR;
    if (!r->simulator.entry)
        return pb_errorf(err, "%s:%d: no simulator given", x->file, x->line_simulators);
    if (!r->placer.entry)
        return pb_errorf(err, "%s:%d: no placer given", x->file, x->line_placers);
    if (plan_resolve_cluster(p, s, &r->cluster, err))
        return PB_ERR;
    return plan_load_graph(p, s->graph_path, &r->graph, err);
}

/* sweep_uses callback: the placer plugin's PB_USES_* bits; both when it cannot be found (the
 * plan's own resolution then reports why). */
static unsigned plan_placer_uses(void *ctx, const char *placer)
{
    const loader_entry *e;
    pb_error ignored;
    if (loader_find(((plan *)ctx)->loader, PB_KIND_PLACER, placer, &e, &ignored))
        return PB_USES_EMBEDDING | PB_USES_TRAVERSAL;
    return loader_placer_uses(e);
}

/* sweep_uses callback: whether the placer runs with the simulator; a pair that does not is
 * remembered once in plan.skipped.  Plugins that cannot be found apply (the plan's own resolution
 * then reports why). */
static int plan_pair_applies(void *ctx, const char *placer, const char *simulator, char *why,
                             size_t n)
{
    plan *p = ctx;
    const loader_entry *pe, *se;
    pb_error ignored;
    if (loader_find(p->loader, PB_KIND_PLACER, placer, &pe, &ignored) ||
        loader_find(p->loader, PB_KIND_SIMULATOR, simulator, &se, &ignored) ||
        loader_pair_applies(pe, se, why, n))
        return 1;
    for (int i = 0; i < p->n_skipped; i++)
        if (strcmp(p->skipped[i], why) == 0)
            return 0;
    char **grown = realloc(p->skipped, (size_t)(p->n_skipped + 1) * sizeof *grown);
    char *copy = strdup(why);
    if (grown)
        p->skipped = grown;
    if (grown && copy)
        p->skipped[p->n_skipped++] = copy;
    else
        free(copy);
    return 0;
}

void plan_print_skipped(const plan *p, FILE *f)
{
    for (int i = 0; i < p->n_skipped; i++)
        fprintf(f, "skipped: %s (no runs)\n", p->skipped[i]);
}

int plan_build(experiment *x, plan **out, pb_error *err)
{
    *out = NULL;
    plan *p = calloc(1, sizeof *p);
    if (!p) {
        experiment_free(x);
        return pb_errorf(err, "out of memory");
    }
    p->x = x;
    strmap_init(&p->cluster_index);
    p->loader = loader_new((const char *const *)x->plugin_path, x->n_plugin_path, err);
    sweep_uses uses = {plan_placer_uses, p, plan_pair_applies};
    if (!p->loader || sweep_expand(x, &uses, &p->specs, &p->n_runs, err)) {
        plan_free(p);
        return PB_ERR;
    }
    p->runs = calloc((size_t)(p->n_runs ? p->n_runs : 1), sizeof(plan_run));
    if (!p->runs) {
        plan_free(p);
        return pb_errorf(err, "out of memory");
    }
    for (int i = 0; i < p->n_runs; i++)
        if (plan_run_resolve(p, i, err)) {
            plan_free(p);
            return PB_ERR;
        }
    *out = p;
    return PB_OK;
}

static void plan_plugin_free(plan_plugin *pp)
{
    if (pp->entry)
        option_set_free(&pp->opts);
}

void plan_free(plan *p)
{
    if (!p)
        return;
    for (int i = 0; p->runs && i < p->n_runs; i++) {
        plan_plugin_free(&p->runs[i].simulator);
        plan_plugin_free(&p->runs[i].placer);
        plan_plugin_free(&p->runs[i].embedding);
        plan_plugin_free(&p->runs[i].traversal);
    }
    free(p->runs);
    if (p->specs)
        sweep_free(p->specs, p->n_runs);
    for (int i = 0; i < p->n_graphs; i++) {
        free(p->graph_paths[i]);
        graph_free(p->graphs[i]);
    }
    free(p->graph_paths);
    free(p->graphs);
    for (int i = 0; i < p->n_clusters; i++)
        cluster_free(p->clusters[i].cluster);
    free(p->clusters);
    strmap_free(&p->cluster_index);
    for (int i = 0; i < p->n_skipped; i++)
        free(p->skipped[i]);
    free(p->skipped);
    loader_free(p->loader);
    experiment_free(p->x);
    free(p);
}
