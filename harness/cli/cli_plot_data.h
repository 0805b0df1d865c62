/* cli_plot_data.h — the data files (TSV) that placebench plot hands to the gnuplot scripts:
 * aggregated step times (learning_curves.gp, best_step_time.gp), the traversal-order win heat
 * map (order_wins.gp), the per-embedding bars (embedding_bars.gp) and HeterPS's cost and
 * throughput bars and scheduling times (heterps_bars.gp, heterps_sched_time.gp). */
#ifndef PB_CLI_PLOT_DATA_H
#define PB_CLI_PLOT_DATA_H

#include "report/papers.h"
#include "store/store.h"
#include "store/store_tables.h"

#include <stdio.h>

/*
 * Step-time data.  rows: one block per (panel, series), a blank line between blocks:
 * panel series episode mean sd min max n_graphs n_runs slot n_slots (slot: the series' place
 * among the n_slots series of its panel).  `unit` names the values' unit in the header
 * ("microseconds", "fractions of the initial step time").
 */
void cli_plot_data_rows(FILE *f, const store_plot_data *d, const char *db, const char *unit);
/* "index<TAB>label" per line under a "# index<TAB>what" header. */
void cli_plot_data_labels(FILE *f, char *const *labels, int n, const char *what);

/* Non-zero when the win counts can make a heat map: >= 2 orders and a compared graph. */
int cli_plot_data_wins_drawable(const store_order_wins *w);

/*
 * Heat map data.  Rows are the (devices, episode) pairs some dataset has data for, numbered from
 * 0 by devices then episode (the traversal-order paper's Tables II-IV); columns are the orders
 * in the column order of the paper pt (borrowed; NULL: none), other names after them in sorted
 * order; panels are the datasets.
 *   cells:  panel row col wins graphs ties, one line per (panel, row, order) with data
 *   rows:   panel row graphs ties devices episode label, one line per (panel, row)
 *   panels: index label;  cols: index label
 */
void cli_plot_data_wins_cells(FILE *f, const store_order_wins *w, const papers_order_table *pt,
                              const char *db);
void cli_plot_data_wins_rows(FILE *f, const store_order_wins *w);
void cli_plot_data_wins_panels(FILE *f, const store_order_wins *w);
void cli_plot_data_wins_cols(FILE *f, const store_order_wins *w, const papers_order_table *pt);

/*
 * Bar data.  Embeddings are numbered in the row order of the paper pt (borrowed; NULL: none),
 * other names after them in sorted order.  Groups are the (dataset, devices) cells with data, then
 * per dataset with two or more of them a "mean" group: the mean over its device counts of the cell
 * means (the embedding paper's Figures 4 and 5), for the embeddings that have every one of
 * them.  x places the groups left to right with a gap between datasets.
 *   bars:     group x embedding slot n_slots improvement_pct wall_s ec n_runs n_graphs colour
 *   groups:   group x dataset label;  datasets: index x_centre label
 *   series:   index label colour
 * (colour: the embedding's place in name order, the order of the learning curves' series, so an
 * embedding keeps its colour across the charts).
 */
void cli_plot_data_bars(FILE *f, const store_embedding_table *t, const papers_embedding_table *pt,
                        const char *db);
void cli_plot_data_bar_groups(FILE *f, const store_embedding_table *t);
void cli_plot_data_bar_datasets(FILE *f, const store_embedding_table *t);
void cli_plot_data_bar_series(FILE *f, const store_embedding_table *t,
                              const papers_embedding_table *pt);

/*
 * HeterPS data (store_tables_heterps).  Methods are numbered in the paper pt's order (borrowed;
 * NULL: none), other placers after them in sorted order; a method's colour is that number.
 *   bars:   group x method slot n_slots cost_usd throughput colour, one line per (model, T,
 *           method) with a stored cost; groups are the (T, model) pairs with such a line, in
 *           that order, x their place left to right
 *   groups: group x label ("ctrdnn-16, T = 2")
 *   times:  one block per (method, T) with ok runs, two blank lines between blocks (gnuplot
 *           index): series layers sched_s model; rows by layers
 *   series: bars: index method colour, per method; times: index label colour dash, per
 *           (method, T), dash: T's place among the runs' resource-type counts
 * Each returns the number of data lines written (0: no chart).
 */
int cli_plot_data_heterps_bars(FILE *f, const store_heterps_table *t,
                               const papers_heterps_tables *pt, const char *db);
void cli_plot_data_heterps_groups(FILE *f, const store_heterps_table *t);
void cli_plot_data_heterps_bar_series(FILE *f, const store_heterps_table *t,
                                      const papers_heterps_tables *pt);
int cli_plot_data_heterps_times(FILE *f, const store_heterps_table *t,
                                const papers_heterps_tables *pt, const char *db);
void cli_plot_data_heterps_time_series(FILE *f, const store_heterps_table *t,
                                       const papers_heterps_tables *pt);

/* TAG's testbed chart (tag_testbed.gp): one line per model with an ok run of dp-nccl,
 * dp-nccl-p, tag or pure-mcts: model, the four mean best step times (ms; nan when no ok run's
 * strategy fits in memory), then the mean search times (s) of tag and pure-mcts; nan for none.
 * Returns the lines written. */
int cli_plot_data_tag(FILE *f, const store_tag_table *t, const char *db);

#endif
