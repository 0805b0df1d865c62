/* traverse.h — the graph traversal orders of the traversal-order paper (networkx 2.4 semantics). */
#ifndef PB_TRAVERSE_H
#define PB_TRAVERSE_H

#include "placebench.h"

/*
 * Every order writes a permutation of 0..g->n_nodes-1 into `order` (caller-owned, g->n_nodes
 * ints) and returns PB_OK, or PB_ERR with a message in err (out of memory, or a cycle where
 * the order says so: the message names a node on it; graph_build never yields a cyclic graph).
 * "Node order" is index order (the insertion order), "successor order" is g->succ[g->succ_start[v]
 * ..] (edge insertion order), names compare with strcmp (byte order, which for UTF-8 is code-point
 * order, as Python sorts str).  All run in O(n + m) or O(n log n + m) time and iterate (no
 * recursion).  Semantics: specs/placeto.md §5.
 */

/* "lexico" (the reference's "alpha", §5.1): nodes sorted by name.  Not topological. */
int traverse_lexico(const pb_graph *g, int *order, pb_error *err);

/* "topo" (§5.2): networkx 2.4 topological_sort, Kahn's algorithm with a LIFO ready stack that
 * starts as the sources in node order.  Fails on a cycle. */
int traverse_topo(const pb_graph *g, int *order, pb_error *err);

/* "reversed-topo" (§5.3): the exact reverse of traverse_topo.  Fails on a cycle. */
int traverse_reversed_topo(const pb_graph *g, int *order, pb_error *err);

/* "dfs-preorder" / "dfs-postorder" (§5.5): networkx 2.4 dfs_labeled_edges with no source, i.e.
 * rooted at every not yet visited node in node order, successors in successor order; preorder
 * emits a node when it is discovered, postorder when its successors are exhausted.  Defined on
 * any digraph (a cycle is not an error). */
int traverse_dfs_preorder(const pb_graph *g, int *order, pb_error *err);
int traverse_dfs_postorder(const pb_graph *g, int *order, pb_error *err);

/* "bfs" (§5.6): for each source (in-degree 0) in name order, the source and then its
 * nx.bfs_edges targets (FIFO, successor order, a visited set per source); duplicates dropped,
 * keeping the first.  Fails when some node is reached from no source, which only a cycle can
 * cause (a cycle below a source is walked like any other nodes). */
int traverse_bfs(const pb_graph *g, int *order, pb_error *err);

/* "lexico-topo" (§5.4): Kahn's algorithm taking the ready node with the smallest (name,
 * insertion index) first, as nx.lexicographical_topological_sort.  Fails on a cycle. */
int traverse_lexico_topo(const pb_graph *g, int *order, pb_error *err);

/* "random" (§5.7): a Fisher-Yates shuffle of the node order drawn from pb_rng seeded with
 * `seed`; the same seed gives the same order. */
int traverse_random(const pb_graph *g, unsigned long long seed, int *order, pb_error *err);

/* Kahn's algorithm, the one copy behind "topo", "lexico-topo", graph_build's cycle check and
 * graph_longest_path.  The ready set starts as the sources in node order; the next node taken is
 * the one made ready last (by_name 0: networkx 2.4 topological_sort's LIFO stack) or the
 * smallest by (name, index) (by_name 1: lexicographical_topological_sort).  Writes the nodes it
 * orders into order[0..*count) (caller-owned, g->n_nodes ints); *count < g->n_nodes when the
 * others lie on or after a cycle.  Returns PB_ERR only when out of memory. */
int traverse_kahn(const pb_graph *g, int by_name, int *order, int *count, pb_error *err);

/* A node on a cycle of g, after a walk emitted only order[0..count) of its nodes and every node
 * left out has a predecessor left out too (after traverse_kahn: its in-degree never reached 0;
 * after bfs: it is no source and no predecessor was reached).  Walking such predecessors must
 * repeat a node, and the node that repeats lies on a cycle.  -1 when out of memory. */
int traverse_cycle_node(const pb_graph *g, const int *order, int count);

/* The public names above, in that order, NULL-terminated. */
extern const char *const traverse_names[];

/* Runs the order called `name` (one of traverse_names; seed is used by "random" only).  An
 * unknown name is an error listing the known ones. */
int traverse_by_name(const char *name, const pb_graph *g, unsigned long long seed, int *order,
                     pb_error *err);

#endif
