/* baechi.h — the memory-aware placers of Baechi (Jeon et al., SoCC 2020): m-TOPO, m-ETF and
 * m-SCT on a graph's own cost model, shared by the plugins m-topo, m-etf and m-sct. */
#ifndef PB_SHARED_BAECHI_H
#define PB_SHARED_BAECHI_H

#include "placebench.h"

/*
 * The cost model the three placers plan with is the Placeto simulator's: node v runs for
 * cost_us[v] (+ delta1_us when the cost is non-zero) on any device; an edge between two devices
 * sends edge_bytes[e] over the sender's one outgoing bus in edge_bytes / transfer_speed µs, after
 * which the bus rests delta2_us (a cluster without a bus speed uses its link bandwidth and
 * latency instead).  Memory: node v needs param_bytes[v] + out_bytes[v] on its device, counted
 * for the whole step (Baechi's conservative placement rule), against the memory of the device's
 * type (0 = unlimited).  A node that fits on no device is an error naming it.
 */

/* Time node v keeps its device busy. */
double baechi_node_us(const pb_graph *g, const pb_cluster *c, int v);
/* Time edge e's data takes from sender a to receiver b (a != b). */
double baechi_edge_us(const pb_graph *g, const pb_cluster *c, int e, int a, int b);
/* Memory node v needs on its device. */
double baechi_node_bytes(const pb_graph *g, int v);

/* Kahn's topological order with a FIFO queue, sources in node order (Baechi's topo_order):
 * order[] gets the nodes, rank[] (may be NULL) each node's position.  Both caller-owned,
 * n_nodes ints. */
int baechi_topo_order(const pb_graph *g, int *order, int *rank, pb_error *err);

/* m-TOPO: the nodes in topological order filled onto device 0, 1, ... in turn, each device taking
 * nodes while its memory stays within total / n_devices + the largest node's (and within the
 * device's memory).  Graphs without memory data are split by compute time the same way.
 * device[] is caller-owned, n_nodes ints. */
int baechi_topo(const pb_graph *g, const pb_cluster *c, int *device, pb_error *err);

/*
 * m-ETF when favorite == NULL: list scheduling that repeatedly starts the (ready node, device)
 * pair with the earliest start time (ties: topological rank, then device index), a device being
 * a candidate only while the node fits in its memory.
 *
 * m-SCT when favorite[] is given (favorite[u] = the favourite child of u, or -1): the same, except
 * that a device whose last node's favourite child f is ready, not yet placed and starts there no
 * later than anywhere else waits for f; meanwhile it may only run a node v that is urgent, i.e.
 * whose latest start over all devices comes before f's start there (v then goes at the time it
 * became urgent).
 *
 * device_speed (the plugins' option of that name; Baechi itself assumes identical devices): on a
 * cluster whose device types differ in speed_vs_ref, node v takes baechi_node_us / speed on a
 * device and the pair with the earliest finish (start + that time) is chosen instead of the
 * earliest start, so that a slow device (GDP's host CPU) is not filled first because it is free
 * first.  On identical devices, or with device_speed 0, the schedule is Baechi's.
 *
 * device[] (caller-owned, n_nodes ints) receives the placement; *makespan_us (may be NULL) the
 * schedule's own estimate of the step time.
 */
int baechi_schedule(const pb_graph *g, const pb_cluster *c, const int *favorite, int device_speed,
                    int *device, double *makespan_us, pb_error *err);

/* The options of m-etf and m-sct, and the instance they keep. */
typedef struct baechi_opts {
    int device_speed;
} baechi_opts;

typedef struct baechi_instance {
    const pb_host *host;
    int device_speed;
} baechi_instance;

/* The option table of m-etf and m-sct (BAECHI_N_OPTIONS entries), and their create/destroy. */
#define BAECHI_N_OPTIONS 1
extern const pb_option_def baechi_options[BAECHI_N_OPTIONS];
int baechi_create(const pb_create_args *a, void **instance, pb_error *err);
void baechi_destroy(void *instance);

/*
 * m-SCT's favourite children: the LP relaxation of the scheduling problem on unboundedly many
 * devices (variables x_e in [0, 1]: edge e crosses devices; s_v >= 0 start times; w makespan;
 * minimise w subject to s_u + p_u + c_e x_e <= s_v for each edge e = (u, v), s_v + p_v <= w,
 * and for every node the x of its out-edges, and of its in-edges, sum to at least their count
 * minus one), solved with CLP; an edge whose x is below 0.5 makes v the favourite child of u
 * (edges taken in edge order: a later favourite edge into v removes the earlier parent's).
 * favorite[] is caller-owned, n_nodes ints; *lp_makespan_us (may be NULL) gets w.
 */
int baechi_favorite_children(const pb_graph *g, const pb_cluster *c, int *favorite,
                             double *lp_makespan_us, pb_error *err);

/* The end of each plugin's place(): one simulation of best through the host, reported as the
 * run's single learning-curve point; *initial_us = -1 (there is no initial placement). */
int baechi_report(const pb_host *h, pb_strategy *best, double *initial_us, pb_error *err);

#endif
