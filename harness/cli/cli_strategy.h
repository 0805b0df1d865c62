/* cli_strategy.h — strategy files (device groups and a replication option per op, README
 * "Strategy files") and printing what a topology-aware simulator returns for one. */
#ifndef PB_CLI_STRATEGY_H
#define PB_CLI_STRATEGY_H

#include "placebench.h"

/* A REPLICATED strategy for the op graph, with everything it points to. */
typedef struct cli_strategy {
    pb_strategy s;
    int *device, *replication; /* [n_ops] device group and option of each op */
    int *group_start, *group_devices;
    double *share;      /* NULL: even batch shares */
    char **group_names; /* [n_groups], for messages */
    int n_groups;
    int max_device; /* largest device index named */
} cli_strategy;

/* Reads strategy file `path` for op graph g (borrowed).  Errors name the file and the op, the
 * group or the key.  On success out is caller-owned (cli_strategy_free). */
int cli_strategy_read(const char *path, const pb_graph *g, cli_strategy *out, pb_error *err);
void cli_strategy_free(cli_strategy *s);

/* Writes the distributed graph the strategy compiler makes of op-level strategy s of g on
 * cluster c as node-link JSON to path: nodes "<op>/replica_<r>" and "<op>/aux_<kind>_<k>" with
 * kind, op, device, replica, collective and cost; links with the output port and the bytes read
 * (0: a control dependency).  A model-parallel split is refused (the simulator resolves it). */
int cli_strategy_write_compiled(const char *path, const pb_graph *g, const pb_cluster *c,
                                const pb_strategy *s, pb_error *err);

/* A Chrome trace (ui.perfetto.dev, chrome://tracing) of a simulator's task records: one
 * process per device with the threads "compute" (its computations), "collectives" (its
 * AllReduce members) and "to <j>" (its transfers to device j). */
typedef struct cli_trace {
    const pb_graph *g;    /* borrowed */
    const pb_cluster *c;  /* borrowed */
    void *events;         /* json_t array */
    unsigned char *named; /* [n_devices * (n_devices + 2)] threads already named */
    int failed;           /* out of memory while recording */
} cli_trace;

/* Starts a trace of op graph g on cluster c (both borrowed until cli_trace_free). */
int cli_trace_init(cli_trace *t, const pb_graph *g, const pb_cluster *c, pb_error *err);
/* The pb_eval.task_record callback (ctx: the cli_trace). */
void cli_trace_record(void *ctx, const pb_task_record *r);
/* Writes the trace to path. */
int cli_trace_write(cli_trace *t, const char *path, pb_error *err);
void cli_trace_free(cli_trace *t);

/* Prints ev (arrays for c's devices, n_devices^2 link entries) as text: step time, feasibility,
 * throughput and cost, then per device its type, peak memory, compute time and the time its
 * outgoing links were busy. */
void cli_strategy_print_text(const pb_eval *ev, const pb_cluster *c);
/* The same as one JSON object, numbers exact; eval_ns < 0 leaves it out. */
void cli_strategy_print_json(const pb_eval *ev, const pb_cluster *c, double eval_ns);

#endif
