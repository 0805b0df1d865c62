/* runner.h — running a plan: worker processes, time limits, crash isolation, progress, and
 * one results-store transaction per finished run. */
#ifndef PB_RUNNER_H
#define PB_RUNNER_H

#include "plan.h"

typedef struct runner_opts {
    int jobs;            /* worker processes at once (>= 1) */
    int shard_index;     /* run the runs whose index % shard_count == shard_index */
    int shard_count;     /* 1 = everything */
    double timeout_s;    /* > 0 overrides the config's per-run limit */
    const char *results; /* results file; NULL = the experiment's */
    int progress;        /* 0 quiet, 1 plain lines, 2 a refreshing terminal line */
    int sample;          /* > 0: run only this many of the shard's runs, drawn at random */
    unsigned long long sample_seed; /* the draw's seed */
    const char *banner; /* with progress: printed on stderr once the results file is open */
    /* > 1: a worker takes up to this many runs of one graph, cluster and set of plugins that
     * follow each other in the plan, and runs them interleaved (place_run_multi); each run's
     * results are what it gives alone, its time limit and stored wall time are shares of the
     * group's.  At most PLACE_MAX_INTERLEAVE. */
    int interleave;
} runner_opts;

typedef struct runner_summary {
    int in_shard;  /* runs of this shard (of the sample, when sampling) */
    int shard_all; /* runs of this shard before sampling */
    int skipped;   /* already in the results file (or stored by another process meanwhile) */
    int elsewhere; /* claimed by another live process sweeping the same file; not run here */
    int ok;
    int failed; /* failed, crashed or timed out */
    double wall_s;
} runner_summary;

/* Without memory_limit in the config, -j N workers share this part of the machine's memory
 * equally, but each gets at least RUNNER_MEMORY_MIN_GB. */
#define RUNNER_MEMORY_SHARE 0.8
#define RUNNER_MEMORY_MIN_GB 1.0

/* The memory limit of one worker in GB (0: none): `configured_gb` when it is >= 0 (the config's
 * memory_limit), else RUNNER_MEMORY_SHARE of the machine's memory divided by `jobs`.  A run that
 * fails close to its limit is stored with the error "out of memory: limit N GB (...)". */
double runner_memory_limit_gb(double configured_gb, int jobs);

/* Runs every run of the shard that the results file does not hold yet, claiming each in the
 * file before starting it (store_claim_run): a run another live process has claimed is left to
 * it, and looked at again once this process has nothing else to do.  Returns PB_ERR only for
 * errors of the harness itself (results file unusable); failed runs are stored, not returned. */
int runner_run(plan *p, const runner_opts *o, runner_summary *sum, pb_error *err);

/* Runs one run of a plan in this process, on the cluster the plan built for it, and reports
 * through `fd` (the worker's side of the protocol: lines "P i ...", "E i ...", "R i ..." for run
 * i of the worker's group, here 0); exposed for tests.  Returns the
 * store_status. */
int runner_execute(const plan_run *r, int fd);

#endif
