/* runner.c — the sweep runner: one forked worker per run, at most -j at once, wall-time limits,
 * crash isolation, progress on stderr, results written by the parent only. */
#include "runner.h"

#include "isolate.h"
#include "place.h"
#include "store/store.h"
#include "core/clock.h"
#include "core/version.h"
#include "model/graph.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A run's log keeps this much of what its plugins write on stdout and stderr; the rest is
 * counted. */
#define RUNNER_LOG_LIMIT 65536

#define RUNNER_GB 1073741824.0 /* memory limits are in GB of 2^30 bytes */

/* ------------------------------------------------------------ worker side */

/* Writes one protocol line; the parent ignores a line cut short by a crash. */
static void runner_send(int fd, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    for (int off = 0; off < n;) {
        ssize_t w = write(fd, buf + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        off += (int)w;
    }
}

/* Where a run of the worker reports: the pipe and the run's index in the worker's group. */
typedef struct runner_channel {
    int fd, index;
} runner_channel;

/* A learning-curve point, sent to the parent as a "P" line. */
static void runner_progress_line(void *ctx, const pb_progress *p)
{
    const runner_channel *ch = ctx;
    runner_send(ch->fd, "P %d %d %.17g %.17g %lld %.17g", ch->index, p->episode, p->episode_best_us,
                p->best_so_far_us, p->sim_calls, p->wall_s);
}

/* Sends the final result line of run `index` (with the simulator's verdict on the returned
 * strategy) and an error line; returns status. */
static int runner_finish(int fd, int index, int status, const place_result *res, const char *error)
{
    if (error) {
        char clean[512];
        snprintf(clean, sizeof clean, "%s", error);
        for (char *c = clean; *c; c++)
            if (*c == '\n' || *c == '\r')
                *c = ' ';
        runner_send(fd, "E %d %s", index, clean);
    }
    runner_send(fd, "R %d %d %.17g %.17g %lld %.17g %d %.17g %.17g", index, status, res->initial_us,
                res->best_us, res->sim_calls, res->wall_s, res->feasible, res->throughput,
                res->monetary_cost);
    return status;
}

/* Runs k runs of one graph interleaved in this process (place_run_multi; k = 1: one run) and
 * reports each through fd; a run's time limit is its own times k, the group sharing the wall.
 * Returns the first run's store_status. */
static int runner_execute_runs(const plan_run *const *rs, int k, int fd)
{
    place_request q[PLACE_MAX_INTERLEAVE];
    place_result res[PLACE_MAX_INTERLEAVE];
    pb_error errs[PLACE_MAX_INTERLEAVE];
    runner_channel ch[PLACE_MAX_INTERLEAVE];
    for (int i = 0; i < k; i++) {
        const run_spec *s = rs[i]->spec;
        ch[i] = (runner_channel){fd, i};
        q[i] = (place_request){
            .graph = rs[i]->graph,
            .cluster = rs[i]->cluster,
            .simulator = &rs[i]->simulator,
            .placer = &rs[i]->placer,
            .embedding = &rs[i]->embedding,
            .traversal = &rs[i]->traversal,
            .seed = s->seed,
            .episodes = s->episodes,
            .sim_calls = s->sim_calls,
            .timeout_s = s->timeout_s * k,
            .log_id = s->run_id,
            .progress = runner_progress_line,
            .progress_ctx = &ch[i],
        };
        memset(&res[i], 0, sizeof res[i]);
        errs[i].msg[0] = '\0';
    }
    int any_failed = k == 1 ? place_run(&q[0], &res[0], &errs[0]) != PB_OK
                            : place_run_multi(q, k, res, errs) != PB_OK;
    if (any_failed && isolate_memory_exhausted())
        runner_send(fd, "O");
    int first = STORE_OK;
    for (int i = 0; i < k; i++) {
        /* place_run_multi leaves best_us NAN for exactly the runs that failed */
        int ok = k == 1 ? !any_failed : !isnan(res[i].best_us);
        int status =
            runner_finish(fd, i, ok ? STORE_OK : STORE_FAILED, &res[i], ok ? NULL : errs[i].msg);
        if (i == 0)
            first = status;
    }
    return first;
}

int runner_execute(const plan_run *r, int fd)
{
    return runner_execute_runs(&r, 1, fd);
}

/* ------------------------------------------------------------ parent side */

/* What the parent learns of one run of a worker. */
typedef struct runner_outcome {
    store_curve_point *curve;
    int n_curve, cap_curve;
    int have_result, status;
    double initial, best, wall;
    long long calls;
    int feasible;
    double throughput, monetary_cost;
    char error[520];
} runner_outcome;

typedef struct runner_worker {
    pid_t pid;
    int fd;
    int out_fd;                    /* the worker's stdout and stderr; -1 once closed */
    int run[PLACE_MAX_INTERLEAVE]; /* indices into plan runs (an interleaved group) */
    int n_runs;                    /* runs of the group, 1 without --interleave */
    runner_outcome out[PLACE_MAX_INTERLEAVE];
    double started_mono, started_wall, deadline;
    int timed_out;
    char buf[4096];
    size_t len;
    int out_of_memory; /* the worker failed close to its memory limit */
    char *log;         /* RUNNER_LOG_LIMIT + room for the truncation note, or NULL */
    size_t log_len;
    long long log_dropped;
} runner_worker;

/* The outcome a protocol line's run index names, or NULL. */
static runner_outcome *runner_line_outcome(runner_worker *w, const char *line, int *used)
{
    int i;
    if (sscanf(line + 1, " %d%n", &i, used) != 1 || i < 0 || i >= w->n_runs)
        return NULL;
    *used += 1;
    return &w->out[i];
}

static void runner_worker_line(runner_worker *w, char *line)
{
    if (line[0] == 'O' && line[1] == '\0') {
        w->out_of_memory = 1;
        return;
    }
    int used = 0;
    runner_outcome *o = runner_line_outcome(w, line, &used);
    if (!o)
        return;
    const char *rest = line + used;
    if (line[0] == 'P') {
        store_curve_point pt;
        if (sscanf(rest, "%d %lf %lf %lld %lf", &pt.episode, &pt.episode_best_us,
                   &pt.best_so_far_us, &pt.sim_calls, &pt.wall_s) != 5)
            return;
        if (o->n_curve == o->cap_curve) {
            int ncap = o->cap_curve ? o->cap_curve * 2 : 64;
            store_curve_point *nc = realloc(o->curve, (size_t)ncap * sizeof *nc);
            if (!nc)
                return;
            o->curve = nc;
            o->cap_curve = ncap;
        }
        o->curve[o->n_curve++] = pt;
    } else if (line[0] == 'E' && *rest == ' ') {
        snprintf(o->error, sizeof o->error, "%s", rest + 1);
    } else if (line[0] == 'R') {
        if (sscanf(rest, "%d %lf %lf %lld %lf %d %lf %lf", &o->status, &o->initial, &o->best,
                   &o->calls, &o->wall, &o->feasible, &o->throughput, &o->monetary_cost) == 8)
            o->have_result = 1;
    }
}

/* Reads what is available; returns 0 at end of file. */
static int runner_worker_read(runner_worker *w)
{
    ssize_t n = read(w->fd, w->buf + w->len, sizeof w->buf - 1 - w->len);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : 0;
    if (n == 0)
        return 0;
    w->len += (size_t)n;
    w->buf[w->len] = '\0';
    char *start = w->buf, *nl;
    while ((nl = strchr(start, '\n')) != NULL) {
        *nl = '\0';
        runner_worker_line(w, start);
        start = nl + 1;
    }
    w->len = strlen(start);
    memmove(w->buf, start, w->len + 1);
    if (w->len == sizeof w->buf - 1)
        w->len = 0; /* an over-long line: drop it */
    return 1;
}

/* Reads what the worker wrote on stdout or stderr into its log; returns 0 at end of file (or
 * when nothing more can be read now, with `drain`). */
static int runner_worker_output(runner_worker *w, int drain)
{
    char chunk[4096];
    for (;;) {
        ssize_t n = read(w->out_fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return !drain;
        if (n <= 0) {
            close(w->out_fd);
            w->out_fd = -1;
            return 0;
        }
        size_t keep = w->log_len < RUNNER_LOG_LIMIT ? RUNNER_LOG_LIMIT - w->log_len : 0;
        if (keep > (size_t)n)
            keep = (size_t)n;
        if (keep && !w->log)
            w->log = malloc(RUNNER_LOG_LIMIT + 80);
        if (keep && w->log) {
            memcpy(w->log + w->log_len, chunk, keep);
            w->log_len += keep;
        }
        w->log_dropped += n - (ssize_t)(w->log && keep ? keep : 0);
        if (!drain)
            return 1;
    }
}

/* The log as stored: the output kept, NUL bytes made visible, and what was not kept. */
static const char *runner_log_text(runner_worker *w)
{
    if (!w->log)
        return NULL;
    for (size_t i = 0; i < w->log_len; i++)
        if (w->log[i] == '\0')
            w->log[i] = '?';
    size_t n = w->log_len;
    if (w->log_dropped > 0)
        n += (size_t)snprintf(w->log + n, 80, "%s[%lld bytes of output not kept]\n",
                              n && w->log[n - 1] != '\n' ? "\n" : "", w->log_dropped);
    w->log[n] = '\0';
    return w->log;
}

static void runner_describe_exit(const runner_worker *w, runner_outcome *o, int wstatus,
                                 double timeout, double memory_gb)
{
    if (w->timed_out) {
        o->status = STORE_TIMEOUT;
        if (w->n_runs > 1)
            snprintf(o->error, sizeof o->error,
                     "timeout: killed after the %.6g s wall-time limit of %d interleaved runs "
                     "(%.6g s each)",
                     timeout, w->n_runs, timeout / w->n_runs);
        else
            snprintf(o->error, sizeof o->error, "timeout: killed after the %.6g s wall-time limit",
                     timeout);
    } else if (WIFSIGNALED(wstatus)) {
        o->status = STORE_CRASHED;
        snprintf(o->error, sizeof o->error, "crashed: signal %d (%s)", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)));
    } else if (!o->have_result) {
        o->status = STORE_CRASHED;
        snprintf(o->error, sizeof o->error, "crashed: worker exited with status %d and no result",
                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    }
    if (w->out_of_memory && !w->timed_out && o->status != STORE_OK) {
        char why[sizeof o->error];
        memcpy(why, o->error, sizeof why);
        int n = snprintf(o->error, sizeof o->error, "out of memory: limit %.6g GB (", memory_gb);
        if (n > 0 && (size_t)n < sizeof o->error)
            snprintf(o->error + n, sizeof o->error - (size_t)n, "%.*s)",
                     (int)(sizeof o->error - (size_t)n - 2), why);
    }
}

static const char *runner_plugin_version(const plan_plugin *pp)
{
    return pp->entry ? pp->entry->desc->version : NULL;
}

static int runner_store(store *st, const plan *p, runner_worker *w, int i, pb_error *err)
{
    const runner_outcome *o = &w->out[i];
    const plan_run *r = &p->runs[w->run[i]];
    const run_spec *s = r->spec;
    int ok = o->status == STORE_OK;
    store_run rec = {
        .run_id = s->run_id,
        .experiment = p->x->name,
        .settings_json = s->settings_json,
        .dataset = s->dataset,
        .graph = r->graph->name,
        .graph_checksum = r->graph->checksum,
        .graph_origin = graph_origin(r->graph),
        .n_nodes = r->graph->grouped->n_nodes,
        .n_devices = s->n_devices,
        .cluster = s->cluster,
        .simulator = s->simulator.name,
        .simulator_version = runner_plugin_version(&r->simulator),
        .placer = s->placer.name,
        .placer_version = runner_plugin_version(&r->placer),
        .embedding = s->embedding.name,
        .embedding_version = runner_plugin_version(&r->embedding),
        .traversal = s->traversal.name,
        .traversal_version = runner_plugin_version(&r->traversal),
        .repeat = s->repeat,
        .seed = s->seed,
        .placebench_version = pb_version_string(),
        .status = o->status,
        .error = ok ? NULL : o->error,
        .initial_us = o->have_result ? o->initial : NAN,
        .best_us = ok ? o->best : NAN,
        .search_wall_s =
            o->have_result ? o->wall : (pb_clock_monotonic() - w->started_mono) / w->n_runs,
        .sim_calls = o->calls,
        .started_at = w->started_wall,
        .finished_at = pb_clock_seconds(CLOCK_REALTIME),
        .log = runner_log_text(w),
        .feasible = o->feasible,
        .throughput = o->throughput,
        .monetary_cost = o->monetary_cost,
    };
    return store_put_run(st, &rec, o->curve, o->n_curve, err);
}

/* The worker: never returns.  Its stdout and stderr go to out_fd (the run's log). */
static void runner_child(const plan *p, const int *runs, int k, int fd, int out_fd, pid_t parent,
                         double memory_gb)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(3);
    isolate_worker(parent);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0)
        _exit(4);
    close(out_fd);
    setvbuf(stdout, NULL, _IOLBF, 0); /* what was printed before a crash reaches the log */
    if (memory_gb > 0)
        isolate_limit_memory((unsigned long long)(memory_gb * RUNNER_GB), fd, "O\n");
    const plan_run *rs[PLACE_MAX_INTERLEAVE];
    for (int i = 0; i < k; i++)
        rs[i] = &p->runs[runs[i]];
    runner_execute_runs(rs, k, fd);
    fflush(NULL);
    close(fd);
    _exit(0);
}

static int runner_spawn(const plan *p, const int *runs, int k, runner_worker *w,
                        const runner_worker *all, int n_all, double timeout, double memory_gb,
                        pb_error *err)
{
    int fds[2], out[2];
    if (pipe(fds) != 0)
        return pb_errorf(err, "pipe: %s", strerror(errno));
    if (pipe(out) != 0) {
        close(fds[0]);
        close(fds[1]);
        return pb_errorf(err, "pipe: %s", strerror(errno));
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        close(out[0]);
        close(out[1]);
        return pb_errorf(err, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        close(out[0]);
        for (int i = 0; i < n_all; i++)
            if (all[i].pid > 0) {
                close(all[i].fd);
                if (all[i].out_fd >= 0)
                    close(all[i].out_fd);
            }
        runner_child(p, runs, k, fds[1], out[1], parent, memory_gb);
    }
    close(fds[1]);
    close(out[1]);
    fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
    memset(w, 0, sizeof *w);
    w->pid = pid;
    w->fd = fds[0];
    w->out_fd = out[0];
    w->n_runs = k;
    for (int i = 0; i < k; i++) {
        w->run[i] = runs[i];
        w->out[i].status = STORE_FAILED;
        w->out[i].initial = w->out[i].best = NAN;
    }
    w->started_mono = pb_clock_monotonic();
    w->started_wall = pb_clock_seconds(CLOCK_REALTIME);
    w->deadline = timeout > 0 ? w->started_mono + timeout * k : 0;
    return PB_OK;
}

typedef struct runner_progress {
    int mode; /* 0 quiet, 1 lines, 2 terminal */
    int total, done, ok, failed;
    double t0, last_print;
} runner_progress;

static void runner_format_eta(double s, char *buf, size_t n)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
    else
        snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
}

static void runner_print_progress(runner_progress *pr, int force)
{
    if (pr->mode == 0)
        return;
    double now = pb_clock_monotonic();
    if (!force && pr->mode == 1 && now - pr->last_print < 5.0)
        return;
    pr->last_print = now;
    double el = now - pr->t0;
    char eta[32] = "?";
    if (pr->done > 0)
        runner_format_eta(el / pr->done * (pr->total - pr->done), eta, sizeof eta);
    char line[200];
    snprintf(line, sizeof line, "[%d/%d] %.0f%%  ok %d  failed %d  elapsed %.0fs  ETA %s", pr->done,
             pr->total, pr->total ? 100.0 * pr->done / pr->total : 100.0, pr->ok, pr->failed, el,
             eta);
    if (pr->mode == 2)
        fprintf(stderr, "\r%-78s", line);
    else
        fprintf(stderr, "%s\n", line);
}

/* Finalises a worker whose pipe reached end of file: reap, classify, store. */
static int runner_reap(store *st, const plan *p, runner_worker *w, double timeout, double memory_gb,
                       runner_progress *pr, pb_error *err)
{
    int wstatus = 0;
    while (waitpid(w->pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    close(w->fd);
    if (w->out_fd >= 0) /* the rest of its output; a process it left behind may hold the pipe */
        runner_worker_output(w, 1);
    if (w->out_fd >= 0)
        close(w->out_fd);
    w->out_fd = -1;
    int rc = PB_OK;
    for (int i = 0; i < w->n_runs; i++) {
        runner_outcome *o = &w->out[i];
        runner_describe_exit(w, o, wstatus, timeout, memory_gb);
        if (rc == PB_OK)
            rc = runner_store(st, p, w, i, err);
        pr->done++;
        if (o->status == STORE_OK) {
            pr->ok++;
        } else {
            pr->failed++;
            const run_spec *s = p->runs[w->run[i]].spec;
            if (pr->mode == 2)
                fputc('\n', stderr);
            if (pr->mode)
                fprintf(stderr, "run %s (%s on %s, %d devices, repeat %d) failed: %s\n", s->run_id,
                        s->placer.name, p->runs[w->run[i]].graph->name, s->n_devices, s->repeat,
                        o->error);
        }
        free(o->curve);
        o->curve = NULL;
    }
    free(w->log);
    w->log = NULL;
    w->pid = 0;
    runner_print_progress(pr, 0);
    return rc;
}

static int runner_open_store(const plan *p, const runner_opts *o, store **st, pb_error *err)
{
    const char *path = o->results ? o->results : p->x->results;
    /* Create the folder of the results file if needed (one level, e.g. results/). */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            return pb_errorf(err, "%s: cannot create folder: %s", dir, strerror(errno));
    }
    if (store_open(path, 1, st, err))
        return PB_ERR;
    if (store_set_experiment(*st, p->x->name, p->x->config_json, p->x->seed, err)) {
        store_close(*st);
        return PB_ERR;
    }
    return PB_OK;
}

/* Kills timed-out workers; returns the poll timeout in ms until the next deadline. */
static int runner_enforce_deadlines(runner_worker *ws, int jobs)
{
    double now = pb_clock_monotonic(), next = 1.0;
    for (int i = 0; i < jobs; i++) {
        if (ws[i].pid <= 0 || ws[i].deadline <= 0 || ws[i].timed_out)
            continue;
        if (now >= ws[i].deadline) {
            ws[i].timed_out = 1;
            kill(ws[i].pid, SIGKILL);
        } else if (ws[i].deadline - now < next) {
            next = ws[i].deadline - now;
        }
    }
    return (int)(next * 1000) + 1;
}

static int runner_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Writes the indices of the shard's runs to pick (all of them, or o->sample drawn uniformly
 * without replacement from o->sample_seed, in plan order) into out; returns their count.
 * *shard_all receives the shard's run count. */
static int runner_pick(const plan *p, int shards, const runner_opts *o, int *out, int *shard_all)
{
    int n = 0;
    for (int i = 0; i < p->n_runs; i++)
        if (i % shards == o->shard_index)
            out[n++] = i;
    *shard_all = n;
    if (o->sample <= 0 || o->sample >= n)
        return n;
    pb_rng rng;
    pb_rng_seed(&rng, o->sample_seed);
    for (int k = 0; k < o->sample; k++) {
        int j = k + (int)pb_rng_below(&rng, (uint64_t)(n - k));
        int t = out[k];
        out[k] = out[j];
        out[j] = t;
    }
    qsort(out, (size_t)o->sample, sizeof *out, runner_cmp_int);
    return o->sample;
}

double runner_memory_limit_gb(double configured_gb, int jobs)
{
    if (configured_gb >= 0)
        return configured_gb;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 0;
    double gb =
        RUNNER_MEMORY_SHARE * (double)pages * (double)page / RUNNER_GB / (jobs > 0 ? jobs : 1);
    return gb > RUNNER_MEMORY_MIN_GB ? gb : RUNNER_MEMORY_MIN_GB;
}

/* Claims run i: *taken is 1 when this process now has it.  A run stored meanwhile is counted
 * as skipped; a run claimed elsewhere goes to `deferred` (on the final pass: counted as
 * elsewhere). */
static int runner_claim_one(store *st, const plan *p, int i, int *deferred, int *n_deferred,
                            int final_pass, runner_summary *sum, runner_progress *pr, int *taken,
                            pb_error *err)
{
    int outcome;
    *taken = 0;
    if (store_claim_run(st, p->runs[i].spec->run_id, &outcome, err))
        return PB_ERR;
    if (outcome == STORE_CLAIM_TAKEN) {
        *taken = 1;
        return PB_OK;
    }
    if (outcome == STORE_CLAIM_HELD && !final_pass) {
        deferred[(*n_deferred)++] = i;
        return PB_OK;
    }
    pr->total--;
    if (outcome == STORE_CLAIM_STORED)
        sum->skipped++;
    else
        sum->elsewhere++;
    return PB_OK;
}

/* Claims the next run of todo[*next..] that no other process has: *run receives its index, or
 * -1 when none is left. */
static int runner_claim_next(store *st, const plan *p, const int *todo, int n_todo, int *next,
                             int *deferred, int *n_deferred, int final_pass, runner_summary *sum,
                             runner_progress *pr, int *run, pb_error *err)
{
    *run = -1;
    while (*next < n_todo) {
        int i = todo[(*next)++], taken;
        if (runner_claim_one(st, p, i, deferred, n_deferred, final_pass, sum, pr, &taken, err))
            return PB_ERR;
        if (taken) {
            *run = i;
            return PB_OK;
        }
    }
    return PB_OK;
}

/* Whether run b can join run a's interleaved worker: the same graph, device count, plugins and
 * budget (seeds, repeats' clusters, traversal orders and plugin options may differ; a placer
 * that cannot run them in lock-step runs them one after the other). */
static int runner_can_join(const plan *p, int a, int b)
{
    const plan_run *x = &p->runs[a], *y = &p->runs[b];
    return x->graph == y->graph && x->cluster->n_devices == y->cluster->n_devices &&
           x->placer.entry == y->placer.entry && x->simulator.entry == y->simulator.entry &&
           x->embedding.entry == y->embedding.entry && x->spec->episodes == y->spec->episodes &&
           x->spec->sim_calls == y->spec->sim_calls && x->spec->timeout_s == y->spec->timeout_s;
}

/* Claims up to `interleave` runs for one worker: the next run, then as many of the runs right
 * after it in todo as can join it; *k receives their count (0 when none is left). */
static int runner_claim_group(store *st, const plan *p, const int *todo, int n_todo, int *next,
                              int *deferred, int *n_deferred, int final_pass, runner_summary *sum,
                              runner_progress *pr, int interleave, int *runs, int *k, pb_error *err)
{
    *k = 0;
    if (runner_claim_next(st, p, todo, n_todo, next, deferred, n_deferred, final_pass, sum, pr,
                          &runs[0], err))
        return PB_ERR;
    if (runs[0] < 0)
        return PB_OK;
    *k = 1;
    while (*k < interleave && *next < n_todo && runner_can_join(p, runs[0], todo[*next])) {
        int i = todo[(*next)++], taken;
        if (runner_claim_one(st, p, i, deferred, n_deferred, final_pass, sum, pr, &taken, err))
            return PB_ERR;
        if (taken)
            runs[(*k)++] = i;
    }
    return PB_OK;
}

int runner_run(plan *p, const runner_opts *o, runner_summary *sum, pb_error *err)
{
    memset(sum, 0, sizeof *sum);
    store *st;
    if (runner_open_store(p, o, &st, err))
        return PB_ERR;
    if (o->progress && o->banner)
        fprintf(stderr, "%s\n", o->banner);
    int shards = o->shard_count > 0 ? o->shard_count : 1;
    int *todo = malloc((size_t)(p->n_runs ? p->n_runs : 1) * sizeof(int)), n_todo = 0;
    int *deferred = malloc((size_t)(p->n_runs ? p->n_runs : 1) * sizeof(int)), n_deferred = 0;
    int jobs = o->jobs > 0 ? o->jobs : 1;
    int interleave = o->interleave < 1                      ? 1
                     : o->interleave > PLACE_MAX_INTERLEAVE ? PLACE_MAX_INTERLEAVE
                                                            : o->interleave;
    runner_worker *ws = calloc((size_t)jobs, sizeof *ws);
    if (!todo || !deferred || !ws) {
        free(todo);
        free(deferred);
        free(ws);
        store_close(st);
        return pb_errorf(err, "out of memory");
    }
    int n_pick = runner_pick(p, shards, o, todo, &sum->shard_all);
    for (int k = 0; k < n_pick; k++) {
        int i = todo[k];
        sum->in_shard++;
        if (store_has_run(st, p->runs[i].spec->run_id))
            sum->skipped++;
        else
            todo[n_todo++] = i;
    }
    runner_progress pr = {o->progress, n_todo, 0, 0, 0, pb_clock_monotonic(), 0};
    if (pr.mode && sum->skipped)
        fprintf(stderr, "%d of %d runs already in the results file; %d to run\n", sum->skipped,
                sum->in_shard, n_todo);
    signal(SIGPIPE, SIG_IGN);
    double memory_gb = runner_memory_limit_gb(p->x->memory_limit_gb, jobs);
    int next = 0, active = 0, rc = PB_OK, final_pass = 0;
    struct pollfd *pfd = malloc((size_t)jobs * 2 * sizeof *pfd);
    int *slot = malloc((size_t)jobs * 2 * sizeof(int));
    while (rc == PB_OK && pfd && slot) {
        if (next == n_todo && active == 0 && n_deferred > 0 && !final_pass) {
            /* Runs another process had claimed: done by now, or free again if it died. */
            memcpy(todo, deferred, (size_t)n_deferred * sizeof *todo);
            n_todo = n_deferred;
            n_deferred = next = 0;
            final_pass = 1;
        }
        if (next == n_todo && active == 0)
            break;
        for (int i = 0; i < jobs && next < n_todo && rc == PB_OK; i++)
            if (ws[i].pid <= 0) {
                int runs[PLACE_MAX_INTERLEAVE], k;
                rc = runner_claim_group(st, p, todo, n_todo, &next, deferred, &n_deferred,
                                        final_pass, sum, &pr, interleave, runs, &k, err);
                if (rc != PB_OK || k == 0)
                    break;
                double timeout = o->timeout_s > 0 ? o->timeout_s : p->runs[runs[0]].spec->timeout_s;
                rc = runner_spawn(p, runs, k, &ws[i], ws, jobs, timeout, memory_gb, err);
                active += rc == PB_OK;
            }
        int np = 0;
        /* slot: the worker's index, negated minus one for its output pipe */
        for (int i = 0; i < jobs; i++)
            if (ws[i].pid > 0) {
                pfd[np] = (struct pollfd){ws[i].fd, POLLIN, 0};
                slot[np++] = i;
                if (ws[i].out_fd >= 0) {
                    pfd[np] = (struct pollfd){ws[i].out_fd, POLLIN, 0};
                    slot[np++] = -i - 1;
                }
            }
        int wait_ms = runner_enforce_deadlines(ws, jobs);
        if (np == 0)
            continue;
        if (poll(pfd, (nfds_t)np, wait_ms) < 0 && errno != EINTR) {
            rc = pb_errorf(err, "poll: %s", strerror(errno));
            break;
        }
        for (int k = 0; k < np && rc == PB_OK; k++) {
            if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (slot[k] < 0) {
                runner_worker *w = &ws[-slot[k] - 1];
                if (w->pid > 0 && w->out_fd == pfd[k].fd)
                    runner_worker_output(w, 0);
                continue;
            }
            runner_worker *w = &ws[slot[k]];
            if (runner_worker_read(w))
                continue;
            double timeout = o->timeout_s > 0 ? o->timeout_s : p->runs[w->run[0]].spec->timeout_s;
            rc = runner_reap(st, p, w, timeout * w->n_runs, memory_gb, &pr, err);
            active--;
        }
    }
    for (int i = 0; i < jobs; i++)
        if (ws[i].pid > 0) { /* only after a harness error: stop the rest */
            kill(ws[i].pid, SIGKILL);
            waitpid(ws[i].pid, NULL, 0);
            close(ws[i].fd);
            if (ws[i].out_fd >= 0)
                close(ws[i].out_fd);
            for (int r = 0; r < ws[i].n_runs; r++)
                free(ws[i].out[r].curve);
            free(ws[i].log);
        }
    runner_print_progress(&pr, 1);
    if (pr.mode == 2)
        fputc('\n', stderr);
    sum->ok = pr.ok;
    sum->failed = pr.failed;
    sum->wall_s = pb_clock_monotonic() - pr.t0;
    pb_error ignored;
    store_release_claims(st, &ignored);
    free(pfd);
    free(slot);
    free(todo);
    free(deferred);
    free(ws);
    store_close(st);
    return rc;
}
