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

/* Prints ev (arrays for c's devices, n_devices^2 link entries) as text: step time, feasibility,
 * throughput and cost, then per device its type, peak memory, compute time and the time its
 * outgoing links were busy. */
void cli_strategy_print_text(const pb_eval *ev, const pb_cluster *c);
/* The same as one JSON object, numbers exact; eval_ns < 0 leaves it out. */
void cli_strategy_print_json(const pb_eval *ev, const pb_cluster *c, double eval_ns);

#endif
