/* plan.h — an experiment made ready to run: runs expanded, plugins loaded, options resolved,
 * graphs loaded and validated.  Everything that can be wrong with a config is found here,
 * before any plugin runs and before a results file is created. */
#ifndef PB_PLAN_H
#define PB_PLAN_H

#include "config/config.h"
#include "plugin/loader.h"
#include "plugin/options.h"
#include "sweep.h"

/* A plugin of one run: what was loaded and its resolved options. */
typedef struct plan_plugin {
    const loader_entry *entry; /* NULL when the run has no plugin of this kind */
    option_set opts;
} plan_plugin;

typedef struct plan_run {
    const run_spec *spec;
    const pb_graph *graph; /* borrowed from the plan */
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
} plan;

/* Builds the plan of experiment x (taking ownership of x in all cases).  Errors carry the
 * config's file:line.  Caller frees with plan_free. */
int plan_build(experiment *x, plan **out, pb_error *err);
void plan_free(plan *p);

#endif
