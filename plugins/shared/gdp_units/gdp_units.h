/* gdp_units.h — what GDP's baselines share (specs/gdp.md §1, §7-9): the cluster's GPUs and host,
 * the units pinned to the host, and the forward name of a backward or optimizer unit. */
#ifndef PB_GDP_UNITS_H
#define PB_GDP_UNITS_H

#include "placebench.h"

/*
 * The devices a GDP baseline places on.  GDP's machine (cluster gdp-p100) is a host CPU and
 * P100s; the placers' action space is the GPUs (spec §1, include_cpu = false), and the
 * input-pipeline units stay on the host.  A device is the host when its type's name starts with
 * "CPU"; the first such device is `host` (-1 when there is none).
 */
typedef struct gdpu_devices {
    int n_gpus;
    int *gpu; /* [n_gpus] device indices of the GPUs, in cluster order (caller frees) */
    int host; /* device index of the host CPU, or -1 */
} gdpu_devices;

/* Fills *d for cluster c; with include_cpu the host is one more action (listed last).  Fails
 * when the cluster has no device to place on. */
int gdpu_devices_init(gdpu_devices *d, const pb_cluster *c, int include_cpu, pb_error *err);
void gdpu_devices_free(gdpu_devices *d);

/*
 * pinned[v] (caller-owned, p->graph->n_nodes) = 1 for the units of the placed graph that hold an
 * input-pipeline op (IteratorGetNext and the iterator ops: a single supported device, the CPU, as
 * HDP's GetSupportedDevices sees it), else 0.  Returns how many are pinned.
 */
int gdpu_pinned(const pb_problem *p, unsigned char *pinned);

/*
 * The forward name of a unit: `name` without a leading "gradients/" (TF's autodiff scope) or an
 * optimizer's "<Optimizer>/update_" prefix, so a backward or apply unit finds the forward unit it
 * belongs with (TF's colocate_gradients_with_ops, spec §8).  Returns a pointer into name.
 */
const char *gdpu_forward_name(const char *name);

/* 1 when the unit's name is a forward one (gdpu_forward_name returns it unchanged). */
int gdpu_is_forward(const char *name);

/*
 * The model a graph is, from its name (the zoo's "<model>[-<L>l]", possibly a file path): copies
 * the model part (lower case, without directories, ".json" and the "-<L>l" suffix) into out and
 * returns the L of the suffix, or 0 when there is none.
 */
int gdpu_model_name(const char *graph_name, char *out, size_t size);

/*
 * Grappler's topological order (core/grappler/utils/topological_sort.cc, spec §1): Kahn's
 * algorithm with a FIFO queue seeded with the sources in insertion order, the fan-outs of a
 * dequeued node appended in successor-list order.  order: g->n_nodes ints, caller-owned.  Fails
 * on a cycle, naming a node on it.
 */
int gdpu_topo_fifo(const pb_graph *g, int *order, pb_error *err);

/* The search budget in rollouts: budget->sim_calls when set, else budget->episodes, else def. */
long long gdpu_budget(const pb_budget *b, long long def);

#endif
