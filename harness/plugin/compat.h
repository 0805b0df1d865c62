/* compat.h — calling plugins built for an older ABI minor: the 1.1 layouts of pb_problem and
 * pb_strategy, and the conversions the harness applies at the two calls that pass them. */
#ifndef PB_COMPAT_H
#define PB_COMPAT_H

#include "placebench.h"

/* pb_strategy before ABI 1.2 (no struct_size). */
typedef struct compat_strategy_1_1 {
    int kind;
    int n_nodes;
    int *device;
    int *replication;
    int n_device_groups;
    const int *group_start;
    const int *group_devices;
    int n_stages;
    int *stage_count;
} compat_strategy_1_1;

/* pb_problem before ABI 1.2 (budget and embedding reference embedded by value). */
typedef struct compat_problem_1_1 {
    size_t struct_size;
    const pb_graph *graph;
    const pb_graph *op_graph;
    const pb_cluster *cluster;
    struct {
        int episodes;
        long long sim_calls;
        double wall_s;
    } budget;
    const int *order;
    struct {
        const pb_embedding_ops *ops;
        void *instance;
        const char *name;
    } embedding;
} compat_problem_1_1;

/* Non-zero when the plugin was built before ABI 1.2 and takes the layouts above. */
int compat_is_1_1(const pb_plugin_desc *d);

/* The 1.1 views of a current strategy and problem (arrays shared, not copied). */
void compat_strategy_to_1_1(const pb_strategy *s, compat_strategy_1_1 *out);
void compat_problem_to_1_1(const pb_problem *p, compat_problem_1_1 *out);
/* The current view of a 1.1 strategy (arrays shared). */
void compat_strategy_from_1_1(const compat_strategy_1_1 *s, pb_strategy *out);

/* The simulator's evaluate(), with s converted for a plugin built before ABI 1.2. */
int compat_evaluate(const pb_plugin_desc *d, void *prepared, const pb_strategy *s, pb_eval *out,
                    pb_error *err);

#endif
