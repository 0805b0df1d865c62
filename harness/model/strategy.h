/* strategy.h — expanding strategies of the grouped graph to the op-level graph. */
#ifndef PB_STRATEGY_H
#define PB_STRATEGY_H

#include "placebench.h"

/* Writes into ops (sized for op_graph: device/replication arrays owned by the caller) the
 * op-level strategy of `grouped` (for op_graph->grouped): every op takes its group's choice. */
int strategy_expand(const pb_graph *op_graph, const pb_strategy *grouped, pb_strategy *ops,
                    pb_error *err);
/* Ops placed with another op (pb_graph.placed_with) take its device and replication option, as
 * TensorFlow's colocation overrides a requested device; strategy_expand applies it, and so must
 * any code that builds an op-level strategy another way. */
void strategy_apply_placed_with(const pb_graph *op_graph, pb_strategy *ops);

/* Validation of every kind is the public pb_strategy_check (placebench.h). */

#endif
