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

/* The largest memory_limit, GB (a petabyte: beyond any machine, short of overflowing a limit in
 * bytes). */
#define CONFIG_MAX_MEMORY_GB 1e6

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
    int episodes;           /* budget of learned placers, 0 = plugin default */
    long long sim_calls;    /* budget of search placers, 0 = plugin default */
    double timeout_s;       /* per-run wall-time limit, 0 = none */
    double memory_limit_gb; /* memory of one worker, GB; 0 = none, -1 = not given (the runner's
                               default, from the machine's memory and -j) */
    int objective_cost;     /* objective = "cost": leaderboards rank by monetary cost, not by
                               step time */
    char **plugin_path;     /* extra plugin folders */
    int n_plugin_path;
    /* cost_model = "roofline": the generated graphs must have been made with the plain roofline
     * (else with the default, "calibrated") */
    int cost_model_roofline;
    char *results;     /* results file path */
    char *config_json; /* the evaluated experiment as canonical JSON (recorded in the store) */
    /* Line of each top-level field in the config, for errors found after evaluation. */
    int line_datasets, line_devices, line_clusters, line_simulators, line_placers, line_embeddings,
        line_traversals;
    /* Lines of the remaining fields, and of the `experiment { ... }` call (the fallback line of
     * every field: a field that is not written in the config's own text, e.g. a default, an
     * include or a computed key, reports this line). */
    int line_name, line_seed, line_repeats, line_episodes, line_sim_calls, line_timeout,
        line_plugin_path, line_results, line_experiment, line_memory_limit, line_objective,
        line_cost_model;
} experiment;

/*
 * The config language (Lua 5.4), as config_load reads it:
 *
 * - The chunk returns `experiment { field = value, ... }`.  Fields: name (string; default the
 *   file's base name without ".lua"), seed (integer >= 0; default 1), repeats (integer >= 1;
 *   default 1), datasets (string or list; required), devices (integer >= 1 or list; required),
 *   cluster (string or list; default "placeto-k80"), simulator (plugin reference(s); default
 *   "placeto"), placer (required), embedding and traversal (optional), episodes and sim_calls
 *   (integers >= 0, 0 = plugin default), timeout (seconds >= 0, 0 = none), memory_limit (GB per
 *   worker, 0 < n <= CONFIG_MAX_MEMORY_GB, or 0 = none; default from the machine's memory and -j,
 *   see runner.h), objective ("step_time", the default, or "cost": what `placebench compare`
 *   ranks the placers by; a HeterPS problem is ranked by monetary cost), cost_model
 *   ("calibrated", the default, or "roofline": the cost model the experiment's generated graphs
 *   must have been made with, checked against each graph's origin; graphs without an origin,
 *   such as imported or hand-written ones, are taken as they are), plugin_path (string or
 *   list; relative folders are relative to the config's folder), results (default
 *   "results/<name>.db", relative to the working directory), profiles (name -> table of fields
 *   that override the top-level ones when that profile is selected).  Other keys are errors.
 *
 * - Plugin references.  A string names a plugin without options.  A table is ONE reference when
 *   it has at least one string key, or when its only entry is [1] = string: then [1] is the
 *   plugin's name and every other key is an option (string key; value a string, number or
 *   boolean, or a list of those, which makes the option a sweep axis).  Any other table is a
 *   LIST of references: keys exactly 1..n, each entry a string or a one-reference table (lists
 *   do not nest).  So { "random", sim_calls = 100 } is one reference and { "random", "topo" } or
 *   { "random", { "round-robin", x = 1 } } are lists.  Options are kept sorted by key.
 *
 * - Sandbox: only the base, string, table and math libraries; dofile, loadfile and require do
 *   not exist and load accepts text chunks only; reading io, os, debug, package, coroutine,
 *   utf8, require, dofile or loadfile is an error that says so.  print writes to stderr (held
 *   back until the evaluation is over, so a second pass does not print twice).
 *   include("file.lua") evaluates another file (relative to the including file's folder) and
 *   returns its results, but only when its real path lies inside the main config's folder tree.
 *   Limits: 256 MB of memory, 200 million VM instructions and 20 million line events (a loop
 *   iteration counts as one), after which evaluation fails with "config ran too long"; time spent
 *   inside a single library call (e.g. a pathological string.find) is not bounded.
 *
 * - math.random is seeded with the experiment's seed, in two passes: the config is evaluated
 *   with math.randomseed(1) (1 is the default seed); when the result's seed is another value s,
 *   it is evaluated again from scratch with math.randomseed(s), and that evaluation must give
 *   the seed s again (a seed drawn from math.random is an error).
 */

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

/* Makes x run the one placer `placer` (no options) instead of its own, with `folder` first on its
 * plugin path, under the experiment name `name` and into the results file `results` (all
 * copied): a suite's problems for another placer (placebench compare). */
int experiment_use_placer(experiment *x, const char *placer, const char *folder, const char *name,
                          const char *results, pb_error *err);

/* ---------------------------------------------------------------- cluster catalogs */

/* Lua source held in memory (e.g. configs/clusters.lua, built into the library). */
typedef struct cfg_text {
    const char *name; /* how errors name it, e.g. "configs/clusters.lua" */
    const char *text;
    size_t len;
} cfg_text;

typedef struct cfg_device_type {
    char *name;
    double peak_flops, mem_bandwidth, memory_bytes, price_per_hour, speed_vs_ref;
} cfg_device_type;

/* A cluster description as a preset built it, with its device types resolved. */
typedef struct cfg_cluster {
    char *name;             /* the preset's name */
    cfg_device_type *types; /* [n_types], in order of first use by a device */
    int n_types;
    int n_devices;
    int *device_type;                        /* [n_devices] index into types */
    int *device_machine;                     /* [n_devices] 0-based machine */
    int n_machines;                          /* every machine holds at least one device */
    double *intra_bandwidth, *intra_latency; /* [n_machines] link inside each machine */
    /* [n_machines * n_machines] row-major, between machines (the diagonal is not used). */
    double *inter_bandwidth, *inter_latency;
    double delta1_us, delta2_us, transfer_speed, init_offset_us; /* Placeto bus model */
} cfg_cluster;

/* A preset's name and one-line description. */
typedef struct cfg_preset {
    char *name;
    char *about;
} cfg_preset;

/*
 * The cluster catalog language (see configs/clusters.lua for the full contract): the chunk
 * returns { device_types = { NAME = {...} }, presets = { NAME = { about = "...", build = f } } };
 * f(n, seed) returns a description of exactly n devices (devices, machines, network, types,
 * placeto) or nil and a message when n does not fit.  Bandwidths are bytes per µs, latencies
 * µs.  Unknown keys in a description or a device type are errors.
 *
 * config_cluster evaluates `src` in the config sandbox (same libraries, limits and forbidden
 * names as experiments; no include), seeds math.random with `seed` just before calling the
 * preset's build, and converts the description into *out (caller frees with config_cluster_free;
 * the Lua state is closed before return).  Errors: "cluster 'NAME': message" when the preset
 * refuses n; "unknown cluster preset 'X' (did you mean 'Y'?)"; "SRC:line: message" for an error
 * raised while evaluating; "SRC: cluster 'NAME': field: message" for a bad description.
 */
int config_cluster(const cfg_text *src, const char *preset, int n_devices, unsigned long long seed,
                   cfg_cluster **out, pb_error *err);
void config_cluster_free(cfg_cluster *c);

/* The presets of `src`, sorted by name, into *out[*n] (caller frees with
 * config_cluster_presets_free). */
int config_cluster_presets(const cfg_text *src, cfg_preset **out, int *n, pb_error *err);
void config_cluster_presets_free(cfg_preset *p, int n);

#endif
