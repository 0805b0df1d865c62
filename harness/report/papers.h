/* papers.h — the published figures of the tables placebench reproduces, to print beside ours:
 * the traversal-order paper's Tables II-IV and the embedding paper's Tables 1-3. */
#ifndef PB_PAPERS_H
#define PB_PAPERS_H

enum { PAPERS_N_ORDERS = 6, PAPERS_N_EMBEDDINGS = 3 };

/* The traversal orders of Tables II-IV as placebench names them, in the paper's column order
 * (lexico, topo, dfs_pre, rev_topo, dfs_post, bfs). */
extern const char *const papers_orders[PAPERS_N_ORDERS];
/* The embeddings of Tables 1-3 as placebench names them (Placeto-GNN, GraphSAGE, P-GNN). */
extern const char *const papers_embeddings[PAPERS_N_EMBEDDINGS];

/* Display order of names[0..n): those the paper lists (paper[0..n_paper)) in the paper's order,
 * then the rest in their own order.  Returns the index into names of the one shown at `place`
 * (0 <= place < n). */
int papers_display_at(const char *const *names, int n, const char *const *paper, int n_paper,
                      int place);

/* Graphs (of 32) on which `order` found the lowest mean best step time by episode `episode`
 * (9, 19 or 49) on `devices` (3, 5 or 8) devices of `family` (cifar10, nmt, ptb); -1 when the
 * paper has no such cell. */
int papers_order_wins(const char *family, int devices, int episode, const char *order);

/* One embedding's published figures; NaN where the paper gives none. */
typedef struct papers_embedding {
    double improvement_pct; /* Table 1 (cells) or Table 3 (overall) */
    double wall_s;          /* Table 2 (cells) or Table 3 (overall) */
    double ec;              /* Table 3 only (overall); NaN in cells */
} papers_embedding;

/* Tables 1 and 2: one family and device count. */
papers_embedding papers_embedding_cell(const char *family, int devices, const char *embedding);
/* Table 3: the averages over families and device counts. */
papers_embedding papers_embedding_overall(const char *embedding);

#endif
