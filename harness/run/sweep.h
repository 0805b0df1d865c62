/* sweep.h — expanding an experiment into its list of runs, with ids and seeds. */
#ifndef PB_SWEEP_H
#define PB_SWEEP_H

#include "config/config.h"

/* A plugin with one value chosen for each of its options. */
typedef struct run_plugin {
    const char *name;      /* borrowed from the experiment; NULL when the run has none */
    const cfg_plugin *ref; /* the config entry it came from */
    const char **keys;     /* [n] owned array of borrowed strings */
    const char **values;   /* [n] */
    int n;
} run_plugin;

typedef struct run_spec {
    char *run_id;        /* 16 hex digits: hash of settings_json */
    char *settings_json; /* canonical JSON of every resolved setting, repeat and seed included */
    const char *dataset; /* the dataset entry as written in the config */
    char *graph_path;    /* the node-link JSON file of this run's graph */
    int n_devices;
    const char *cluster;
    run_plugin simulator, placer, embedding, traversal;
    int repeat;
    unsigned long long seed; /* derived from (experiment seed, settings, repeat) */
    int episodes;
    long long sim_calls;
    double timeout_s;
} run_spec;

/* Which kinds a placer consults (PB_USES_* bits): the embedding and traversal axes are expanded
 * only for placers that use them (a placer using neither gets embedding and traversal null).
 * NULL, or a NULL fn: every placer uses both. */
typedef struct sweep_uses {
    unsigned (*fn)(void *ctx, const char *placer);
    void *ctx;
    /* Optional: 0 when `placer` cannot run with `simulator` (the sweep then makes no runs of the
     * pair), with the reason written into why; 1 when it can. */
    int (*applies)(void *ctx, const char *placer, const char *simulator, char *why, size_t n);
} sweep_uses;

/*
 * Expands every sweep axis (datasets → graph files, devices, clusters, simulators, placers,
 * embeddings, traversals, list-valued plugin options, repeats) in a fixed order into *runs
 * (caller frees with sweep_free).  Dataset entries are a .json file, a folder (its *.json files
 * sorted by name) or a family name found as datasets/<name>/ under the working directory.
 */
int sweep_expand(const experiment *x, const sweep_uses *uses, run_spec **runs, int *n,
                 pb_error *err);
/* More on sweep_expand: the exact order, the keys of settings_json and the derivation of run_id
 * and seed are described at the top of sweep.c; repeats count from 0.  Two runs with identical
 * settings (a value listed twice) and missing or empty dataset folders are errors that name the
 * config's file:line. */
void sweep_free(run_spec *runs, int n);

#endif
