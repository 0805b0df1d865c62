/* cli_gdp.h — GDP's Table 1 from a results file (store_tables_gdp) beside the paper's. */
#ifndef PB_CLI_GDP_H
#define PB_CLI_GDP_H

#include "report/papers.h"
#include "store/store_tables.h"

#include <stdio.h>

/*
 * Table 1: per model and GPU count (devices - 1 on the GDP cluster, whose first device is the
 * host CPU), the mean run time of GDP-one, HP, METIS and HDP ("OOM" when no run's placement fits,
 * "-" without runs), the speed-ups over HP and HDP (T_X / T_GDP - 1) and the search speed-up
 * over HDP (time to come within 1 % of the final step time), with the paper's figures beside;
 * then the GEOMEAN rows (ours, and the paper's in both conventions) and the paper's qualitative
 * claims counted on our rows.  The paper's (model, GPUs) pairs come first, then the other cells
 * of the runs.  pt borrowed (NULL: ours only).  CSV: one row per (model, GPUs, method).
 */
void cli_gdp_table1(FILE *f, const store_gdp_table *t, const papers_gdp_tables *pt, int csv);

/*
 * The data of plots/gdp_table1.gp: one line per row of Table 1 (the same rows, in the same
 * order): x, "model, N GPUs", our mean run time of GDP-one, HP, METIS, HDP and the paper's four
 * (s; NaN where there is none: no run, failed, OOM).  Returns the lines with a run time of ours.
 */
int cli_gdp_plot_data(FILE *f, const store_gdp_table *t, const papers_gdp_tables *pt,
                      const char *db);

#endif
