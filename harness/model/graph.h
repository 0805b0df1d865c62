/* graph.h — building, validating and freeing pb_graph (op level plus derived grouped graph). */
#ifndef PB_GRAPH_H
#define PB_GRAPH_H

#include "placebench.h"

/* Attributes of one op; unset numbers are 0, unset strings NULL. */
typedef struct graph_node_attrs {
    const char *type;
    double cost_us;
    double flops;
    double bytes_accessed;
    double param_bytes;
    int n_ports;              /* output ports given in port_bytes */
    const double *port_bytes; /* [n_ports]; a port read by an edge beyond n_ports has 0 bytes */
    const char *group;        /* group name, NULL when the graph has no grouping */
    int colocation;           /* colocation class, -1 for none */
    /* Replication annotations (pb_graph.node_role ...): unset are PB_ROLE_OP, PB_SPLIT_UNSET
     * and no replica costs. */
    int role;                      /* pb_node_role */
    int split;                     /* pb_split_class */
    int n_replica_costs;           /* pairs in replica_cost_n / replica_cost_us */
    const int *replica_cost_n;     /* [n_replica_costs] replica counts, each >= 1 */
    const double *replica_cost_us; /* [n_replica_costs] µs of one of that many replicas */
} graph_node_attrs;

typedef struct graph_builder graph_builder;

/* Starts a graph; `name` is copied.  Caller frees with graph_builder_free or graph_build. */
graph_builder *graph_builder_new(const char *name);
void graph_builder_free(graph_builder *b);

/* Adds an op (name copied); returns its index, or PB_ERR for a duplicate name or a bad number
 * (negative, NaN or infinite). */
int graph_add_node(graph_builder *b, const char *name, const graph_node_attrs *a, pb_error *err);
/* Index of a node added earlier, or -1. */
int graph_find_node(const graph_builder *b, const char *name);
int graph_builder_node_count(const graph_builder *b);
/* Op v runs on the device of op `anchor` whatever its group's device (pb_graph.placed_with);
 * the anchor must not be placed with another op itself (graph_build checks). */
int graph_set_placed_with(graph_builder *b, int v, int anchor, pb_error *err);
/* The highest output port an edge may read (ops with more outputs than this do not exist in
 * practice; the bound keeps a malformed file from allocating gigabytes of empty ports). */
#define GRAPH_MAX_PORT 65535

/* Adds src -> dst reading output `port` (0..GRAPH_MAX_PORT).  A second edge between the same pair
 * keeps the first edge's position and takes the later port (the Placeto reference's semantics). */
int graph_add_edge(graph_builder *b, int src, int dst, int port, pb_error *err);

/* Validates (no self loops, acyclic, group graph acyclic), derives CSR, the grouped graph and the
 * checksum.  Consumes the builder in all cases.  On success *out is caller-owned (graph_free). */
int graph_build(graph_builder *b, pb_graph **out, pb_error *err);
void graph_free(pb_graph *g);

/*
 * Where a graph comes from, e.g. "placebench dataset 2, cost_model calibrated" for a generated
 * graph (node-link "graph" attribute "origin"); not part of the checksum, NULL when unknown.
 * The builder copies it (PB_ERR when out of memory); graph_origin's string is borrowed from a
 * graph made by graph_build.
 */
int graph_builder_set_origin(graph_builder *b, const char *origin);
const char *graph_origin(const pb_graph *g);

/* Longest path in edges (the papers' "diameter"); -1 for an empty graph or when out of memory. */
int graph_longest_path(const pb_graph *g);

#endif
