/* msr.h — the MSR dnn-partitioning graphs (msr-fiddle/dnn-partitioning) and their expert splits. */
#ifndef PB_MSR_H
#define PB_MSR_H

#include "placebench.h"

/* The machine an MSR file describes. */
typedef struct msr_limits {
    int max_accelerators;    /* maxFPGAs */
    int max_cpus;            /* maxCPUs */
    double max_accel_memory; /* maxSizePerFPGA, bytes */
} msr_limits;

/*
 * Reads one MSR graph file (datasets/msr-dnn-partitioning/{LayerGraphs,OperatorGraphs}/NAME.json):
 * a node per entry of `nodes`, in file order, named by its `name` (its `id` when it has none),
 * with cost = fpgaLatency (the accelerator latency, ms) * 1000 in µs, mem = `size` bytes, type
 * "backward" or "forward" from isBackwardNode, and colocation = colorClass (nodes sharing a class
 * must share a device; -1 when absent).  cpuLatency is not kept: the CPU's speed comes from the
 * cluster's device types.  Each link `sourceId` -> `destId` reads an output port of its source
 * whose bytes are the link's `size` (0 when absent); a source whose links carry different sizes
 * gets one port per distinct size, in order of first appearance.  limits may be NULL.  Errors
 * name the file and the node or edge.  *out is caller-owned (graph_free).
 */
int msr_read(const char *path, pb_graph **out, msr_limits *limits, pb_error *err);

/*
 * Reads a human-expert split (datasets/msr-dnn-partitioning/human-experts/NAME_expert.json:
 * fpgas[k].nodes and cpus[k].nodes list node ids) of the graph read by msr_read from graph_path, as
 * a placement of g's nodes: device[v] = k for fpgas[k], n_fpgas + k for cpus[k] (accelerators
 * first, CPUs numbered after them).  device has g->n_nodes entries (caller-owned); *n_devices
 * receives n_fpgas + n_cpus.  A node the split leaves out, places twice, or an id the graph does
 * not have is an error naming it.
 */
int msr_read_expert(const char *graph_path, const char *expert_path, const pb_graph *g, int *device,
                    int *n_devices, pb_error *err);

#endif
