/* traverse.c — node visiting orders over a DAG, ported from networkx 2.4 (specs/placeto.md §5). */
#include "traverse.h"

#include <stdlib.h>
#include <string.h>

typedef int (*traverse_fn)(const pb_graph *g, int *order, pb_error *err);

const char *const traverse_names[] = {"lexico",       "topo",          "reversed-topo",
                                      "dfs-preorder", "dfs-postorder", "bfs",
                                      "lexico-topo",  "random",        NULL};

/* Parallel to traverse_names.  "random" (NULL here) takes a seed and is called apart. */
static const traverse_fn traverse_fns[] = {traverse_lexico,
                                           traverse_topo,
                                           traverse_reversed_topo,
                                           traverse_dfs_preorder,
                                           traverse_dfs_postorder,
                                           traverse_bfs,
                                           traverse_lexico_topo,
                                           NULL,
                                           NULL};

_Static_assert(sizeof traverse_fns / sizeof traverse_fns[0] ==
                   sizeof traverse_names / sizeof traverse_names[0],
               "traverse_fns must list one entry per traverse_names entry");

/* Allocates n elements of size elem (at least one, so an empty graph is not out of memory). */
static void *traverse_alloc(int n, size_t elem, int zeroed)
{
    size_t count = n > 0 ? (size_t)n : 1;
    return zeroed ? calloc(count, elem) : malloc(count * elem);
}

static const char *traverse_graph_label(const pb_graph *g)
{
    return g->name && g->name[0] ? g->name : "(unnamed)";
}

static int traverse_in_degree(const pb_graph *g, int v)
{
    return g->pred_start[v + 1] - g->pred_start[v];
}

int traverse_cycle_node(const pb_graph *g, const int *order, int count)
{
    unsigned char *done = traverse_alloc(g->n_nodes, 1, 1),
                  *seen = traverse_alloc(g->n_nodes, 1, 1);
    if (!done || !seen) {
        free(done);
        free(seen);
        return -1;
    }
    for (int i = 0; i < count; i++)
        done[order[i]] = 1;
    int v = 0;
    while (done[v])
        v++;
    while (!seen[v]) {
        seen[v] = 1;
        int next = v;
        for (int i = g->pred_start[v]; i < g->pred_start[v + 1] && next == v; i++)
            if (!done[g->pred[i]])
                next = g->pred[i];
        if (next == v)
            break;
        v = next;
    }
    free(done);
    free(seen);
    return v;
}

/* The error of a walk that emitted only order[0..count) of the nodes because of a cycle. */
static int traverse_cycle_error(const pb_graph *g, const int *order, int count, pb_error *err)
{
    int v = traverse_cycle_node(g, order, count);
    if (v < 0)
        return pb_errorf(err, "out of memory");
    return pb_errorf(err, "graph '%s' has a cycle through node '%s'", traverse_graph_label(g),
                     g->node_name[v]);
}

/* ---------------------------------------------------------------- name order */

typedef struct traverse_named {
    const char *name;
    int index;
} traverse_named;

/* By name (strcmp), then by insertion index (names are unique in a pb_graph; the index only
 * makes the order total for hand-made graphs). */
static int traverse_named_cmp(const void *a, const void *b)
{
    const traverse_named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c != 0)
        return c;
    return (x->index > y->index) - (x->index < y->index);
}

/* Writes nodes[0..k) sorted by name into out (out may alias nodes). */
static int traverse_sort_by_name(const pb_graph *g, const int *nodes, int k, int *out,
                                 pb_error *err)
{
    traverse_named *tmp = traverse_alloc(k, sizeof *tmp, 0);
    if (!tmp)
        return pb_errorf(err, "out of memory");
    for (int i = 0; i < k; i++)
        tmp[i] = (traverse_named){g->node_name[nodes[i]], nodes[i]};
    qsort(tmp, (size_t)k, sizeof *tmp, traverse_named_cmp);
    for (int i = 0; i < k; i++)
        out[i] = tmp[i].index;
    free(tmp);
    return PB_OK;
}

int traverse_lexico(const pb_graph *g, int *order, pb_error *err)
{
    for (int v = 0; v < g->n_nodes; v++)
        order[v] = v;
    return traverse_sort_by_name(g, order, g->n_nodes, order, err);
}

/* ---------------------------------------------------------------- topological orders */

/*
 * The ready set of Kahn's algorithm.  networkx 2.4's topological_sort keeps a LIFO stack (the
 * most recently freed node is taken first); lexicographical_topological_sort a binary min-heap
 * keyed by (name, index).  The two differ only in push and pop, so one Kahn loop serves both and
 * the in-degree bookkeeping exists once.
 */
typedef struct traverse_ready {
    const pb_graph *g;
    int by_name; /* 0: LIFO stack, 1: min-heap by (name, index) */
    int *a;
    int len;
} traverse_ready;

static int traverse_ready_less(const traverse_ready *r, int x, int y)
{
    int c = strcmp(r->g->node_name[x], r->g->node_name[y]);
    return c < 0 || (c == 0 && x < y);
}

static void traverse_ready_push(traverse_ready *r, int v)
{
    int i = r->len++;
    while (r->by_name && i > 0) {
        int parent = (i - 1) / 2;
        if (!traverse_ready_less(r, v, r->a[parent]))
            break;
        r->a[i] = r->a[parent];
        i = parent;
    }
    r->a[i] = v;
}

static int traverse_ready_pop(traverse_ready *r)
{
    if (!r->by_name)
        return r->a[--r->len];
    int top = r->a[0], last = r->a[--r->len], i = 0;
    for (;;) {
        int child = 2 * i + 1;
        if (child >= r->len)
            break;
        if (child + 1 < r->len && traverse_ready_less(r, r->a[child + 1], r->a[child]))
            child++;
        if (!traverse_ready_less(r, r->a[child], last))
            break;
        r->a[i] = r->a[child];
        i = child;
    }
    if (r->len > 0)
        r->a[i] = last;
    return top;
}

int traverse_kahn(const pb_graph *g, int by_name, int *order, int *count, pb_error *err)
{
    int n = g->n_nodes;
    int *indeg = traverse_alloc(n, sizeof(int), 0);
    traverse_ready r = {g, by_name, traverse_alloc(n, sizeof(int), 0), 0};
    *count = 0;
    if (!indeg || !r.a) {
        free(indeg);
        free(r.a);
        return pb_errorf(err, "out of memory");
    }
    for (int v = 0; v < n; v++) {
        indeg[v] = traverse_in_degree(g, v);
        if (indeg[v] == 0)
            traverse_ready_push(&r, v);
    }
    while (r.len > 0) {
        int v = traverse_ready_pop(&r);
        for (int i = g->succ_start[v]; i < g->succ_start[v + 1]; i++)
            if (--indeg[g->succ[i]] == 0)
                traverse_ready_push(&r, g->succ[i]);
        order[(*count)++] = v;
    }
    free(indeg);
    free(r.a);
    return PB_OK;
}

/* Kahn's algorithm that fails on a cycle. */
static int traverse_kahn_all(const pb_graph *g, int by_name, int *order, pb_error *err)
{
    int count;
    if (traverse_kahn(g, by_name, order, &count, err) != PB_OK)
        return PB_ERR;
    return count == g->n_nodes ? PB_OK : traverse_cycle_error(g, order, count, err);
}

int traverse_topo(const pb_graph *g, int *order, pb_error *err)
{
    return traverse_kahn_all(g, 0, order, err);
}

int traverse_reversed_topo(const pb_graph *g, int *order, pb_error *err)
{
    if (traverse_topo(g, order, err) != PB_OK)
        return PB_ERR;
    for (int i = 0, j = g->n_nodes - 1; i < j; i++, j--) {
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    return PB_OK;
}

int traverse_lexico_topo(const pb_graph *g, int *order, pb_error *err)
{
    return traverse_kahn_all(g, 1, order, err);
}

/* ---------------------------------------------------------------- depth first */

/* dfs_labeled_edges(G) with an explicit stack: cursor[v] is the next successor slot of v, so each
 * edge is looked at once.  Emits into order at discovery (preorder) or at exhaustion. */
static int traverse_dfs(const pb_graph *g, int postorder, int *order, pb_error *err)
{
    int n = g->n_nodes;
    int *cursor = traverse_alloc(n, sizeof(int), 0), *stack = traverse_alloc(n, sizeof(int), 0);
    unsigned char *visited = traverse_alloc(n, 1, 1);
    if (!cursor || !stack || !visited) {
        free(cursor);
        free(stack);
        free(visited);
        return pb_errorf(err, "out of memory");
    }
    int count = 0;
    for (int root = 0; root < n; root++) {
        if (visited[root])
            continue;
        int top = 0;
        visited[root] = 1;
        cursor[root] = g->succ_start[root];
        stack[top++] = root;
        if (!postorder)
            order[count++] = root;
        while (top > 0) {
            int v = stack[top - 1];
            if (cursor[v] == g->succ_start[v + 1]) {
                top--;
                if (postorder)
                    order[count++] = v;
                continue;
            }
            int c = g->succ[cursor[v]++];
            if (visited[c])
                continue;
            visited[c] = 1;
            cursor[c] = g->succ_start[c];
            stack[top++] = c;
            if (!postorder)
                order[count++] = c;
        }
    }
    free(cursor);
    free(stack);
    free(visited);
    return PB_OK;
}

int traverse_dfs_preorder(const pb_graph *g, int *order, pb_error *err)
{
    return traverse_dfs(g, 0, order, err);
}

int traverse_dfs_postorder(const pb_graph *g, int *order, pb_error *err)
{
    return traverse_dfs(g, 1, order, err);
}

/* ---------------------------------------------------------------- breadth first */

/*
 * The reference runs a fresh BFS (own visited set) from each source and then drops repeats.  One
 * visited set shared by all sources gives the same list in O(n + m): a node already emitted for
 * an earlier source has all its descendants emitted too, so in the fresh BFS it only ever
 * discovers old nodes; skipping it changes neither which new nodes are discovered nor the
 * order (FIFO discovery order restricted to new nodes) in which they are.  The output array is
 * the BFS queue.
 */
int traverse_bfs(const pb_graph *g, int *order, pb_error *err)
{
    int n = g->n_nodes;
    int *sources = traverse_alloc(n, sizeof(int), 1); /* zeroed: only a warning wants it */
    unsigned char *visited = traverse_alloc(n, 1, 1);
    if (!sources || !visited) {
        free(sources);
        free(visited);
        return pb_errorf(err, "out of memory");
    }
    int n_sources = 0;
    for (int v = 0; v < n; v++)
        if (traverse_in_degree(g, v) == 0)
            sources[n_sources++] = v;
    int rc = traverse_sort_by_name(g, sources, n_sources, sources, err);
    int tail = 0;
    for (int k = 0; rc == PB_OK && k < n_sources; k++) {
        int head = tail;
        visited[sources[k]] = 1;
        order[tail++] = sources[k];
        while (head < tail) {
            int v = order[head++];
            for (int i = g->succ_start[v]; i < g->succ_start[v + 1]; i++) {
                int c = g->succ[i];
                if (!visited[c]) {
                    visited[c] = 1;
                    order[tail++] = c;
                }
            }
        }
    }
    free(sources);
    free(visited);
    if (rc == PB_OK && tail < n)
        rc = traverse_cycle_error(g, order, tail, err);
    return rc;
}

/* ---------------------------------------------------------------- random and lookup */

int traverse_random(const pb_graph *g, unsigned long long seed, int *order, pb_error *err)
{
    (void)err;
    for (int v = 0; v < g->n_nodes; v++)
        order[v] = v;
    pb_rng rng;
    pb_rng_seed(&rng, (uint64_t)seed);
    pb_rng_shuffle(&rng, order, g->n_nodes);
    return PB_OK;
}

int traverse_by_name(const char *name, const pb_graph *g, unsigned long long seed, int *order,
                     pb_error *err)
{
    for (int i = 0; traverse_names[i]; i++) {
        if (strcmp(name, traverse_names[i]) != 0)
            continue;
        if (!traverse_fns[i])
            return traverse_random(g, seed, order, err);
        return traverse_fns[i](g, order, err);
    }
    char known[256] = "";
    for (int i = 0; traverse_names[i]; i++) {
        if (i > 0)
            strncat(known, ", ", sizeof known - strlen(known) - 1);
        strncat(known, traverse_names[i], sizeof known - strlen(known) - 1);
    }
    return pb_errorf(err, "unknown traversal order '%s' (known: %s)", name, known);
}
