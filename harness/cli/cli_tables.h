/* cli_tables.h — rendering the papers' tables (store_tables.h) beside the published figures
 * (report/papers.h), as markdown or CSV. */
#ifndef PB_CLI_TABLES_H
#define PB_CLI_TABLES_H

#include "report/papers.h"
#include "store/store_tables.h"

#include <stdio.h>

/* Order win counts: per family, graphs each order won at each (devices, episode), "ours /
 * paper" with the paper's figures from pt (borrowed; NULL: ours only), its orders first. */
void cli_tables_orders(FILE *f, const store_order_wins *w, const papers_order_table *pt, int csv);

/* Embedding tables: improvement %, computation time and EC ratio per embedding, family and
 * devices, then the averages and the change relative to `baseline` (NULL: none), "ours /
 * paper" with the paper's figures from pt (borrowed; NULL: ours only), its embeddings first. */
void cli_tables_embeddings(FILE *f, const store_embedding_table *t,
                           const papers_embedding_table *pt, const char *baseline, int csv);

/*
 * HeterPS tables, one set per resource-type count T: monetary cost per method and model (mean
 * over the ok runs, the spread over seeds, and the gap over the reference method, beside the
 * paper's gap: Figs. 8-10 at T = 2, Figs. 5-7 otherwise), throughput and feasibility (Fig. 10 /
 * 7), scheduling time (Table 3); then Table 2 (BF(2), BF(4) and RL on CTRDNN by layers) when
 * the runs have brute force on CTRDNN models.  pt borrowed (NULL: ours only); methods in the
 * paper's order, then the others.  CSV: one row per (model, T, method) cell.
 */
/* Fig. 4: cost of PROVISION against StaPSRatio and StaRatio per model and throughput limit,
 * with the ratio to ours, whether ours < StaPSRatio < StaRatio, and the paper's largest gaps. */
void cli_tables_heterps_fig4(FILE *f, const store_heterps_fig4 *t, const papers_heterps_tables *pt,
                             int csv);
void cli_tables_heterps(FILE *f, const store_heterps_table *t, const papers_heterps_tables *pt,
                        int csv);

/*
 * TAG's testbed tables (cli_tables_tag.c) over the runs of the topology simulator: per model the
 * per-iteration time of DP-NCCL, DP-NCCL-P, TAG and pure MCTS and the speed-ups (Fig. 5), the
 * strategies of TAG (pure MCTS while TAG has none) as Table 4 beside the paper's, and the search
 * time and simulator calls per model.  pt borrowed (NULL: ours only); models in the paper's
 * order, then the others.  CSV: one row per (model, placer) cell.
 */
void cli_tables_tag(FILE *f, const store_tag_table *t, const papers_tag_tables *pt, int csv);

#endif
