/* cli_sim.h — a simulator plugin prepared for one graph and cluster (simulate and bench). */
#ifndef PB_CLI_SIM_H
#define PB_CLI_SIM_H

#include "plugin/loader.h"
#include "plugin/options.h"
#include "placebench.h"

typedef struct cli_sim {
    const pb_plugin_desc *desc;
    const pb_simulator_ops *ops;
    option_set defaults; /* the options the instance was created with */
    void *instance;
    void *prepared;
} cli_sim;

/* Finds simulator `name` with loader l, creates an instance with its options' defaults and
 * prepares it for g (the op-level graph) and c.  l, g and c are borrowed and must outlive the
 * session.  On failure nothing is held and s needs no cli_sim_close. */
int cli_sim_open(cli_sim *s, loader *l, const char *name, const pb_graph *g, const pb_cluster *c,
                 pb_error *err);
/* The same with the given options (borrowed for the call) instead of the defaults. */
int cli_sim_open_with(cli_sim *s, loader *l, const char *name, const option_kv *kv, int n_kv,
                      const pb_graph *g, const pb_cluster *c, pb_error *err);
/* Evaluates an op-level strategy; out's arrays are the caller's. */
int cli_sim_evaluate(cli_sim *s, const pb_strategy *ops, pb_eval *out, pb_error *err);
void cli_sim_close(cli_sim *s);

/* pb_eval with arrays for n_devices devices (n_devices^2 link entries) and, for a timeline, the
 * start and end of every op and the send and arrival of every output port of the op graph. */
typedef struct cli_sim_result {
    pb_eval eval;
    double *buffer; /* one allocation behind every array of eval */
} cli_sim_result;

/* Allocates the arrays for op graph g (borrowed, read only here); node and port times only when
 * with_timeline.  Returns PB_ERR when out of memory.  Free with cli_sim_result_free. */
int cli_sim_result_init(cli_sim_result *r, int n_devices, const pb_graph *g, int with_timeline,
                        pb_error *err);
void cli_sim_result_free(cli_sim_result *r);

#endif
