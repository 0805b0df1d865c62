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

#endif
