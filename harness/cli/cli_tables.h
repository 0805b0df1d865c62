/* cli_tables.h — rendering the papers' tables (store_tables.h) beside the published figures
 * (papers.h), as markdown or CSV. */
#ifndef PB_CLI_TABLES_H
#define PB_CLI_TABLES_H

#include "store/store_tables.h"

#include <stdio.h>

/* Tables II-IV: per family, graphs each order won at each (devices, episode), "ours / paper". */
void cli_tables_orders(FILE *f, const store_order_wins *w, int csv);

/* Tables 1-3: improvement %, computation time and EC ratio per embedding, family and devices,
 * then the averages and the change relative to `baseline` (NULL: none), "ours / paper". */
void cli_tables_embeddings(FILE *f, const store_embedding_table *t, const char *baseline, int csv);

#endif
