/* cmd_run.c — `placebench run`: run (or resume) an experiment's sweep. */
#include "cli.h"

#include "config/config.h"
#include "run/place.h"
#include "run/plan.h"
#include "run/runner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char run_usage[] =
    "placebench run CONFIG [-j N] [--shard i/N] [--profile NAME] [--timeout S]\n"
    "                      [--results FILE] [--sample K [--sample-seed S]] [--interleave K]\n"
    "                      [--quiet]\n"
    "\n"
    "Runs every run of the experiment described by CONFIG (a Lua file) that the results file\n"
    "does not hold yet, so re-running a killed or finished sweep resumes it.  Each run executes\n"
    "in its own worker process: a plugin that crashes or hangs fails only its run, which is\n"
    "stored with the cause.  Progress goes to stderr.\n"
    "\n"
    "  -j N            worker processes at once (default 1); OpenBLAS uses 1 thread each\n"
    "  --shard i/N     run only the runs whose index modulo N is i (0 <= i < N); join the\n"
    "                  shards' results files with 'placebench merge'\n"
    "  --profile NAME  apply the config's profiles[NAME] overrides (e.g. quick)\n"
    "  --timeout S     per-run wall-time limit in seconds, overriding the config's 'timeout'\n"
    "  --results FILE  results file (default: the config's 'results', else results/NAME.db)\n"
    "  --sample K      run only K of the runs (of the shard), drawn uniformly at random without\n"
    "                  replacement, and print the wall time the whole sweep would take at the\n"
    "                  same -j, extrapolated from theirs (runs already stored are not re-run\n"
    "                  and not timed: use a fresh --results file to measure); the runs are\n"
    "                  ordinary runs of the sweep, which a later full run skips\n"
    "  --sample-seed S the draw's seed (default: the experiment's seed)\n"
    "  --interleave K  a worker takes up to K runs (1..16, default 1) that follow each other in\n"
    "                  the plan with the same graph, device count, plugins and budget\n"
    "                  (repeats, other traversal orders) and interleaves them in one process\n"
    "                  (placers with place_multi, e.g. placeto; others run them one after the\n"
    "                  other); each run's results are what it gives alone, its time limit is\n"
    "                  K times its own for the group and its stored wall time the group's / K;\n"
    "                  a crash, timeout or out-of-memory fails the whole group\n"
    "  --quiet         no progress output\n"
    "\n"
    "Exit status: 0 when the sweep completed (failed runs are recorded in the results file and\n"
    "listed on stderr), 1 on a bad config or an unusable results file, 2 on bad arguments.";

/* Parses "i/N" with 0 <= i < N. */
static int run_parse_shard(const char *s, int *i, int *n)
{
    char extra;
    if (sscanf(s, "%d/%d%c", i, n, &extra) != 2 || *n < 1 || *i < 0 || *i >= *n)
        return -1;
    return 0;
}

/* After a sample: the wall time of the shard's runs at the same -j, from the sampled runs'. */
static void run_print_extrapolation(const runner_opts *o, const runner_summary *sum)
{
    int timed = sum->ok + sum->failed;
    if (timed == 0) {
        printf("sample of %d of %d runs (seed %llu): none ran (all already stored), nothing to "
               "extrapolate from\n",
               sum->in_shard, sum->shard_all, o->sample_seed);
        return;
    }
    double per_run = sum->wall_s / timed, total = per_run * sum->shard_all;
    printf("sample of %d of %d runs (seed %llu): %d ran in %.1f s at -j %d, %.3f s of wall time "
           "per run; all %d runs: %.0f s = %.2f h at -j %d (extrapolated)\n",
           sum->in_shard, sum->shard_all, o->sample_seed, timed, sum->wall_s, o->jobs, per_run,
           sum->shard_all, total, total / 3600, o->jobs);
}

/* A --timeout beyond this (a year) is a typo, not a limit. */
#define RUN_MAX_TIMEOUT_S 31536000.0

/* -j's value: a whole number 1..1024 and nothing else ("2x" and "1.5" are refused). */
static int run_parse_jobs(const char *text, int *jobs)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < 1 || v > 1024)
        return -1;
    *jobs = (int)v;
    return 0;
}

int cmd_run(int argc, char **argv)
{
    runner_opts o = {.jobs = 1, .shard_count = 1, .progress = isatty(2) ? 2 : 1};
    const char *config = NULL, *profile = NULL;
    int sample_seed_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (cli_is_help(a)) {
            puts(run_usage);
            return 0;
        } else if (strcmp(a, "-j") == 0 && more) {
            if (run_parse_jobs(argv[++i], &o.jobs))
                return cli_error("-j %s: need a whole number of worker processes, 1..1024",
                                 argv[i]);
        } else if (strncmp(a, "-j", 2) == 0 && a[2]) {
            if (run_parse_jobs(a + 2, &o.jobs))
                return cli_error("%s: need a whole number of worker processes, 1..1024", a);
        } else if (strcmp(a, "--shard") == 0 && more) {
            if (run_parse_shard(argv[++i], &o.shard_index, &o.shard_count))
                return cli_error("--shard %s: expected i/N with 0 <= i < N", argv[i]);
        } else if (strcmp(a, "--profile") == 0 && more) {
            profile = argv[++i];
        } else if (strcmp(a, "--timeout") == 0 && more) {
            char *end;
            o.timeout_s = strtod(argv[++i], &end);
            if (end == argv[i] || *end || !(o.timeout_s > 0 && o.timeout_s <= RUN_MAX_TIMEOUT_S))
                return cli_error("--timeout %s: need a number of seconds, more than 0 and at most "
                                 "%g",
                                 argv[i], RUN_MAX_TIMEOUT_S);
        } else if (strcmp(a, "--results") == 0 && more) {
            o.results = argv[++i];
        } else if (strcmp(a, "--sample") == 0 && more) {
            char *end;
            long k = strtol(argv[++i], &end, 10);
            if (*end || k < 1 || k > 100000000)
                return cli_error("--sample %s: need a number of runs >= 1", argv[i]);
            o.sample = (int)k;
        } else if (strcmp(a, "--sample-seed") == 0 && more) {
            if (cli_parse_u64(argv[++i], &o.sample_seed))
                return cli_error("--sample-seed %s: need a non-negative integer", argv[i]);
            sample_seed_set = 1;
        } else if (strcmp(a, "--interleave") == 0 && more) {
            char *end;
            long k = strtol(argv[++i], &end, 10);
            if (end == argv[i] || *end || k < 1 || k > PLACE_MAX_INTERLEAVE)
                return cli_error("--interleave %s: need a number of runs from 1 to %d", argv[i],
                                 PLACE_MAX_INTERLEAVE);
            o.interleave = (int)k;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o.progress = 0;
        } else if (a[0] == '-') {
            return cli_error("run: unknown option '%s' (see 'placebench run --help')", a);
        } else if (!config) {
            config = a;
        } else {
            return cli_usage(run_usage);
        }
    }
    if (!config)
        return cli_usage(run_usage);
    /* Workers are processes: BLAS must not spawn its own threads on top (read at load). */
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
    experiment *x;
    plan *p;
    pb_error err;
    if (config_load(config, profile, &x, &err) || plan_build(x, &p, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    if (o.progress)
        plan_print_skipped(p, stderr);
    const char *results = o.results ? o.results : p->x->results;
    if (o.sample > 0 && !sample_seed_set)
        o.sample_seed = p->x->seed;
    char banner[4600];
    snprintf(banner, sizeof banner, "experiment '%s': %d runs%s, results in %s", p->x->name,
             p->n_runs, o.shard_count > 1 ? " (before sharding)" : "", results);
    o.banner = banner; /* once the results file is open: an unusable one is the only line */
    runner_summary sum;
    int rc = runner_run(p, &o, &sum, &err);
    plan_free(p);
    if (rc) {
        fprintf(stderr, "placebench: %s\n", err.msg);
        return 1;
    }
    char elsewhere[96];
    snprintf(elsewhere, sizeof elsewhere, "; %d being run by another process", sum.elsewhere);
    if (o.progress)
        fprintf(stderr,
                "done: %d runs in this shard, %d already stored, %d ok, %d failed, %.1f s%s\n",
                sum.in_shard, sum.skipped, sum.ok, sum.failed, sum.wall_s,
                sum.elsewhere ? elsewhere : "");
    if (o.sample > 0)
        run_print_extrapolation(&o, &sum);
    return 0;
}
