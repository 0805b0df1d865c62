/* plan.h — an experiment made ready to run: runs expanded, plugins loaded, options resolved,
 * graphs loaded and validated, clusters built.  Everything that can be wrong with a config is
 * found here, before any plugin runs and before a results file is created. */
#ifndef PB_PLAN_H
#define PB_PLAN_H

#include "config/config.h"
#include "core/strmap.h"
#include "plugin/loader.h"
#include "plugin/options.h"
#include "sweep.h"

#include <stdio.h>

/* A plugin of one run: what was loaded and its resolved options. */
typedef struct plan_plugin {
    const loader_entry *entry; /* NULL when the run has no plugin of this kind */
    option_set opts;
} plan_plugin;

/* A cluster built once by the plan and shared by every run with its preset, device count and
 * seed; workers run on it as it is (they never build a cluster, so never enter Lua). */
typedef struct plan_cluster {
    const char *preset; /* borrowed from the experiment */
    int n_devices;
    unsigned long long seed; /* seeds the preset's random draws (see plan_build) */
    pb_cluster *cluster;     /* owned */
} plan_cluster;

typedef struct plan_run {
    const run_spec *spec;
    const pb_graph *graph;     /* borrowed from the plan */
    const pb_cluster *cluster; /* borrowed from the plan: the cluster the plan checked */
    plan_plugin simulator, placer, embedding, traversal;
} plan_run;

typedef struct plan {
    experiment *x; /* owned */
    loader *loader;
    run_spec *specs;
    plan_run *runs;
    int n_runs;
    char **graph_paths;
    pb_graph **graphs;
    int n_graphs;
    plan_cluster *clusters;
    int n_clusters, cap_clusters;
    strmap cluster_index; /* "preset\ndevices\nseed" -> index into clusters */
    /* Placer/simulator pairs of the experiment that do not apply (no runs made), each once:
     * why the pair was skipped (loader_pair_applies). */
    char **skipped;
    int n_skipped;
} plan;

/* Builds the plan of experiment x (taking ownership of x in all cases).  Each run's cluster is
 * built here, once per (preset, devices, seed): the seed is pb_seed_derive(experiment seed,
 * "cluster#<repeat>"), so a random topology is drawn per repeat and every placer of one repeat
 * is measured on the same cluster.  Errors carry the config's file:line.  Caller frees with
 * plan_free. */
int plan_build(experiment *x, plan **out, pb_error *err);

/* Prints "skipped: <why>" to f for each pair the plan skipped (plan.skipped). */
void plan_print_skipped(const plan *p, FILE *f);
void plan_free(plan *p);

#endif
