/* cli_zoo.h — `placebench dataset gen|stats|list` for the model zoo (data/gen/gen_model.h). */
#ifndef PB_CLI_ZOO_H
#define PB_CLI_ZOO_H

#include "data/gen/gen_model.h"

/* Writes model m's graph as DIR/<graph name>.json; 0 or 1 (message printed). */
int cli_zoo_gen(const gen_model *m, const gen_model_args *a, const char *dir);

/* `dataset stats` of "zoo" (every model at each depth the papers report, and at its default) or
 * of one model (at a->layers, or its default and each reported depth when 0): ops, edges,
 * parameters, FLOPs, single-device time per catalog device type, the paper's figures beside.
 * as_json prints one JSON object per graph instead.  0 or 1. */
int cli_zoo_stats(const char *what, const gen_model_args *a, int as_json);

/* The zoo's part of `dataset list`. */
void cli_zoo_list(void);

#endif
