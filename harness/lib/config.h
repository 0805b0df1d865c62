/* config.h — experiments described in Lua: sandboxed evaluation into plain C structs (the only
 * user of Lua). */
#ifndef PB_CONFIG_H
#define PB_CONFIG_H

#include "placebench.h"

/* One option of a plugin reference; a list in Lua is a sweep axis (n_values > 1). */
typedef struct cfg_option {
    char *key;
    char **values; /* text form of each value ("50", "0.001", "true", "max") */
    int n_values;
    int line; /* where the key is written in the config, 0 when unknown */
} cfg_option;

/* A plugin named in the config: "random" or { "random", sim_calls = 100 }. */
typedef struct cfg_plugin {
    char *name;
    cfg_option *opts;
    int n_opts;
    int line;
} cfg_plugin;

/* A sweepable list of plugin references (one entry when not swept; zero when absent). */
typedef struct cfg_plugin_list {
    cfg_plugin *items;
    int n;
} cfg_plugin_list;

typedef struct experiment {
    char *file; /* the config's path as given */
    char *name;
    char *profile; /* selected profile, NULL for none */
    unsigned long long seed;
    int repeats;
    char **datasets; /* paths to node-link JSON files or folders, or family names */
    int n_datasets;
    int *devices;
    int n_devices;
    char **clusters;
    int n_clusters;
    cfg_plugin_list simulators, placers, embeddings, traversals;
    int episodes;        /* budget of learned placers, 0 = plugin default */
    long long sim_calls; /* budget of search placers, 0 = plugin default */
    double timeout_s;    /* per-run wall-time limit, 0 = none */
    char **plugin_path;  /* extra plugin folders */
    int n_plugin_path;
    char *results;     /* results file path */
    char *config_json; /* the evaluated experiment as canonical JSON (recorded in the store) */
    /* Line of each top-level field in the config, for errors found after evaluation. */
    int line_datasets, line_devices, line_clusters, line_simulators, line_placers, line_embeddings,
        line_traversals;
} experiment;

/*
 * Evaluates `path` in a sandbox (base, string, table and math libraries only; no io, os,
 * debug, load of files outside the config's folder tree; math.random seeded from the
 * experiment seed), converts the returned experiment into *out and closes the Lua state.
 * `profile` (may be NULL) selects an entry of the config's `profiles` table, whose fields
 * override the top-level ones.  Errors read "path:line: message".  Caller frees with
 * experiment_free.
 */
int config_load(const char *path, const char *profile, experiment **out, pb_error *err);
void experiment_free(experiment *x);

#endif
