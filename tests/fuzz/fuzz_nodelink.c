/* fuzz_nodelink.c — fuzz target for the node-link JSON reader (nodelink.c) and the graph builder
 * behind it (graph.c): a graph that parses must be a consistent DAG and survive a round trip. */
#define _XOPEN_SOURCE 700 /* mkdtemp */

#include "fuzz_target.h"
#include "model/graph.h"
#include "data/nodelink.h"
#include "core/strmap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LABEL "fuzz/input.json"

/* Aborts with a message when an invariant does not hold. */
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_nodelink: invariant violated at %s:%d: %s\n", __FILE__,          \
                    __LINE__, #cond);                                                              \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static int fuzz_finite_size(double v)
{
    return isfinite(v) && v >= 0 && !signbit(v); /* -0.0 would change the checksum */
}

/* Per-node fields: names unique and non-empty, numbers finite and >= 0, ports consistent. */
static void fuzz_check_nodes(const pb_graph *g)
{
    strmap names;
    strmap_init(&names);
    CHECK(g->port_start[0] == 0);
    for (int v = 0; v < g->n_nodes; v++) {
        CHECK(g->node_name[v] && g->node_name[v][0]);
        CHECK(strmap_get(&names, g->node_name[v]) < 0);
        CHECK(strmap_put(&names, g->node_name[v], v) == 0);
        CHECK(g->node_type[v]);
        CHECK(fuzz_finite_size(g->cost_us[v]) && fuzz_finite_size(g->flops[v]));
        CHECK(fuzz_finite_size(g->bytes_accessed[v]) && fuzz_finite_size(g->param_bytes[v]));
        CHECK(g->port_start[v + 1] >= g->port_start[v]);
        double sum = 0;
        for (int p = g->port_start[v]; p < g->port_start[v + 1]; p++) {
            CHECK(fuzz_finite_size(g->port_bytes[p]));
            sum += g->port_bytes[p];
        }
        CHECK(g->out_bytes[v] == sum);
        CHECK(!g->colocation || g->colocation[v] >= -1);
    }
    strmap_free(&names);
}

/* Edges: endpoints in range, no self loop, a port the producer has, (src, dst) pairs unique.
 * An op edge carries its port's bytes; a group edge carries the bytes of the distinct producer
 * ports that cross it, at most all of its source group's output. */
static void fuzz_check_edges(const pb_graph *g, int is_grouped)
{
    strmap pairs;
    strmap_init(&pairs);
    char key[32];
    for (int e = 0; e < g->n_edges; e++) {
        int s = g->edge_src[e], d = g->edge_dst[e];
        CHECK(s >= 0 && s < g->n_nodes && d >= 0 && d < g->n_nodes && s != d);
        CHECK(g->edge_port[e] >= 0 && g->edge_port[e] < g->port_start[s + 1] - g->port_start[s]);
        double port = g->port_bytes[g->port_start[s] + g->edge_port[e]];
        if (is_grouped)
            CHECK(fuzz_finite_size(g->edge_bytes[e]) && g->edge_bytes[e] <= port * (1 + 1e-9));
        else
            CHECK(g->edge_bytes[e] == port);
        snprintf(key, sizeof key, "%d,%d", s, d);
        CHECK(strmap_get(&pairs, key) < 0);
        CHECK(strmap_put(&pairs, key, e) == 0);
    }
    strmap_free(&pairs);
}

/* One CSR direction: offsets from 0 to n_edges, row v lists exactly the edges at v (`end` is
 * edge_src for successors, edge_dst for predecessors) in insertion order. */
static void fuzz_check_csr(const pb_graph *g, const int *start, const int *adj, const int *adj_edge,
                           const int *end, const int *other)
{
    CHECK(start[0] == 0 && start[g->n_nodes] == g->n_edges);
    int *count = calloc((size_t)g->n_nodes + 1, sizeof(int));
    CHECK(count);
    for (int e = 0; e < g->n_edges; e++)
        count[end[e]]++;
    for (int v = 0; v < g->n_nodes; v++) {
        CHECK(start[v + 1] - start[v] == count[v]);
        for (int i = start[v]; i < start[v + 1]; i++) {
            int e = adj_edge[i];
            CHECK(e >= 0 && e < g->n_edges && end[e] == v && other[e] == adj[i]);
            CHECK(i == start[v] || adj_edge[i - 1] < e);
        }
    }
    free(count);
}

/* A topological order by Kahn's algorithm (FIFO); returns how many nodes it reached. */
static int fuzz_topo_order(const pb_graph *g, int *order)
{
    int n = g->n_nodes, head = 0, tail = 0;
    int *indeg = calloc((size_t)n + 1, sizeof(int));
    CHECK(indeg);
    for (int v = 0; v < n; v++)
        if ((indeg[v] = g->pred_start[v + 1] - g->pred_start[v]) == 0)
            order[tail++] = v;
    while (head < tail) {
        int v = order[head++];
        for (int i = g->succ_start[v]; i < g->succ_start[v + 1]; i++)
            if (--indeg[g->succ[i]] == 0)
                order[tail++] = g->succ[i];
    }
    free(indeg);
    return tail;
}

/* Acyclic, and graph_longest_path agrees with a longest-path pass over our own order. */
static void fuzz_check_dag(const pb_graph *g)
{
    int n = g->n_nodes;
    int *order = malloc(((size_t)n + 1) * sizeof(int)), *dist = calloc((size_t)n + 1, sizeof(int));
    CHECK(order && dist);
    CHECK(fuzz_topo_order(g, order) == n);
    int best = n ? 0 : -1;
    for (int k = 0; k < n; k++) {
        int v = order[k];
        for (int i = g->succ_start[v]; i < g->succ_start[v + 1]; i++)
            if (dist[v] + 1 > dist[g->succ[i]])
                dist[g->succ[i]] = dist[v] + 1;
        if (dist[v] > best)
            best = dist[v];
    }
    CHECK(graph_longest_path(g) == best);
    free(order);
    free(dist);
}

static void fuzz_check_graph(const pb_graph *g, int is_grouped)
{
    CHECK(g->struct_size == sizeof(pb_graph));
    CHECK(g->name && g->checksum && strlen(g->checksum) == 16);
    CHECK(g->n_nodes >= 0 && g->n_edges >= 0);
    fuzz_check_nodes(g);
    fuzz_check_edges(g, is_grouped);
    fuzz_check_csr(g, g->succ_start, g->succ, g->succ_edge, g->edge_src, g->edge_dst);
    fuzz_check_csr(g, g->pred_start, g->pred, g->pred_edge, g->edge_dst, g->edge_src);
    /* n_edges is the sum of successor counts (and of predecessor counts). */
    int sum = 0;
    for (int v = 0; v < g->n_nodes; v++)
        sum += g->succ_start[v + 1] - g->succ_start[v];
    CHECK(sum == g->n_edges);
    fuzz_check_dag(g);
}

/* The grouped graph: groups numbered by first appearance, sums of members, one edge per pair of
 * groups that an op edge crosses and no other, acyclic. */
static void fuzz_check_grouping(const pb_graph *g)
{
    const pb_graph *q = g->grouped;
    CHECK(q);
    if (!g->group_of) {
        CHECK(q == g);
        return;
    }
    CHECK(q != g && q->grouped == q && !q->group_of);
    fuzz_check_graph(q, 1);
    double *cost = calloc((size_t)q->n_nodes + 1, sizeof(double));
    CHECK(cost);
    int seen = 0;
    for (int v = 0; v < g->n_nodes; v++) {
        int k = g->group_of[v];
        CHECK(k >= 0 && k <= seen && k < q->n_nodes);
        seen += k == seen;
        cost[k] += g->cost_us[v];
    }
    CHECK(seen == q->n_nodes);
    for (int k = 0; k < q->n_nodes; k++)
        CHECK(q->cost_us[k] == cost[k] && strcmp(q->node_type[k], "group") == 0);
    free(cost);
    char key[32];
    strmap crossed;
    strmap_init(&crossed);
    for (int e = 0; e < g->n_edges; e++) {
        int a = g->group_of[g->edge_src[e]], b = g->group_of[g->edge_dst[e]];
        snprintf(key, sizeof key, "%d,%d", a, b);
        if (a != b)
            CHECK(strmap_put(&crossed, key, 1) == 0);
    }
    CHECK((int)crossed.len == q->n_edges);
    for (int e = 0; e < q->n_edges; e++) {
        snprintf(key, sizeof key, "%d,%d", q->edge_src[e], q->edge_dst[e]);
        CHECK(strmap_get(&crossed, key) == 1);
    }
    strmap_free(&crossed);
}

/* A private folder for the round-trip file, removed at exit. */
static char fuzz_dir[64];
static char fuzz_file[96];

static void fuzz_cleanup(void)
{
    unlink(fuzz_file);
    rmdir(fuzz_dir);
}

static const char *fuzz_roundtrip_path(void)
{
    if (!fuzz_file[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/pb-fuzz-nodelink-XXXXXX",
                 tmp && strlen(tmp) < 32 ? tmp : "/tmp");
        CHECK(mkdtemp(fuzz_dir));
        snprintf(fuzz_file, sizeof fuzz_file, "%s/roundtrip.json", fuzz_dir);
        atexit(fuzz_cleanup);
    }
    return fuzz_file;
}

/* nodelink_write then nodelink_read gives the same graph (same checksums, same shape). */
static void fuzz_check_roundtrip(const pb_graph *g)
{
    const char *path = fuzz_roundtrip_path();
    pb_error err = {{0}};
    pb_graph *back = NULL;
    unlink(path); /* truncating the old file would make ext4 flush it at close (slow) */
    if (nodelink_write(path, g, &err) != PB_OK || nodelink_read(path, &back, &err) != PB_OK) {
        fprintf(stderr, "fuzz_nodelink: round trip failed: %s\n", err.msg);
        abort();
    }
    CHECK(back->n_nodes == g->n_nodes && back->n_edges == g->n_edges);
    CHECK(strcmp(back->checksum, g->checksum) == 0);
    CHECK(back->grouped->n_nodes == g->grouped->n_nodes);
    CHECK(strcmp(back->grouped->checksum, g->grouped->checksum) == 0);
    graph_free(back);
}

/* A failed parse returns no graph and a one-line message that names the input first. */
static void fuzz_check_error(const pb_graph *g, const pb_error *err)
{
    CHECK(g == NULL);
    CHECK(strncmp(err->msg, LABEL ":", strlen(LABEL) + 1) == 0);
    CHECK(strlen(err->msg) > strlen(LABEL) + 1);
    CHECK(!strpbrk(err->msg, "\r\n"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    CHECK(text);
    memcpy(text, data, size);
    text[size] = '\0';
    pb_graph *g = NULL;
    pb_error err = {{0}};
    int rc = nodelink_parse(text, LABEL, &g, &err);
    free(text);
    if (rc != PB_OK) {
        fuzz_check_error(g, &err);
        return 0;
    }
    CHECK(rc == PB_OK && g);
    fuzz_check_graph(g, 0);
    fuzz_check_grouping(g);
    fuzz_check_roundtrip(g);
    graph_free(g);
    return 0;
}
