/* tag_search.h — TAG's strategy search state (specs/tag.md §2.4, §5-7) as the MCTS placers `tag`
 * and `pure-mcts` build it, and the prior hook through which a GNN (TAG's heterogeneous GAT)
 * scores the actions of an op group. */
#ifndef PB_TAG_SEARCH_H
#define PB_TAG_SEARCH_H

#include "placebench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Communication option of an action (specs/tag.md §6): the order is the spec's encoding, and
 * TAG_N_COMM the width of its one-hot (the code's 3 options).  TAG_COMM_DUPLICATE (every device
 * computes the whole group, the paper's 4th option) lies beyond it and is offered only when the
 * placer's option duplicate_action is on. */
enum { TAG_COMM_PS = 0, TAG_COMM_ALLREDUCE = 1, TAG_COMM_MP = 2, TAG_N_COMM = 3 };
enum { TAG_COMM_DUPLICATE = 3 };

/* Batch sizes the time features are given at: B, B/2, B/4, B/8 (specs/tag.md §2.3, §8.2). */
enum { TAG_N_BATCH = 4 };

/*
 * One op group: a METIS part of the grouped graph (tag_group.h), in MCTS order (group 0 is the
 * most expensive, decided first).  Times are µs, sizes bytes.
 */
typedef struct tag_op_group {
    int n_nodes;
    const int *nodes; /* nodes of the grouped graph (pb_problem.graph), ascending */
    int n_ops;
    const int *ops; /* ops of the op graph (pb_problem.op_graph), ascending */
    /* Σ over its ops of the mean over the cluster's devices of the op's time at batch B/2^k
     * (k = 0..3): the order key (k = 0) and the GNN's first four op features. */
    double time_us[TAG_N_BATCH];
    double param_bytes;      /* Σ parameter bytes of its ops */
    double intra_bytes;      /* Σ bytes of tensors between two of its ops */
    double sqrt_cost_weight; /* its METIS vertex weight, 1 + Σ int(sqrt(mean time)) (§2.3) */
} tag_op_group;

/* One device group (TAG's "task", a node of the device graph): GPUs of one type on one machine
 * (option device_groups=machine) or all devices of one type (device_groups=type). */
typedef struct tag_device_group {
    int n_devices;
    const int *devices;     /* device indices of the cluster, ascending */
    int type;               /* index into the cluster's types */
    int machine;            /* the machine of its first device */
    double memory_bytes;    /* one device's memory */
    double intra_bandwidth; /* bytes/µs between two of its devices; 0 when it has one device */
} tag_device_group;

/*
 * Action a (specs/tag.md §6): placed[a * n_tasks + t] = 1 when device group t takes part (all
 * its GPUs), comm[a] the TAG_COMM_* option.  The list is the spec's expansion order: placements
 * over {0,1}^T with the last device group varying fastest (all-zero skipped), and for each, comm
 * PS, AllReduce, MP (then DUPLICATE when offered); a placement on a single device has PS only (a
 * plain placement).
 */
typedef struct tag_actions {
    int n_actions;
    int n_tasks;
    const unsigned char *placed; /* [n_actions * n_tasks] */
    const int *comm;             /* [n_actions] */
    const int *n_devices;        /* [n_actions] devices the action uses */
} tag_actions;

/* What the simulator said about a strategy (specs/tag.md §4.6, §8.2), for the GNN's run-time
 * features.  Arrays are indexed by the op graph's ops or the cluster's devices. */
typedef struct tag_feedback {
    int valid;                       /* 0: no evaluation yet (arrays NULL) */
    int feasible;                    /* 0: some device ran out of memory */
    double step_time_us;             /* per-iteration time */
    double reward;                   /* the search's reward for it (§6): -1 when infeasible */
    const double *op_makespan_us;    /* [op_graph n_nodes] end - start of the op's tasks */
    const double *op_idle_after_us;  /* [op_graph n_nodes] idle time after the op's tasks */
    const double *device_peak_bytes; /* [n_devices] */
    const double *device_busy_us;    /* [n_devices] computing time */
    const double *link_busy_us;      /* [n_devices * n_devices] */
} tag_feedback;

/*
 * The search state a prior is asked about: the problem's static analysis (op groups, device
 * groups, actions) and the node of the search tree being expanded (its decided actions and the
 * feedback of its own evaluation).  Everything is borrowed for the call.
 */
typedef struct tag_state {
    size_t struct_size;
    const pb_graph *graph;    /* the grouped graph placed */
    const pb_graph *op_graph; /* its op graph */
    const pb_cluster *cluster;
    int n_groups;
    const tag_op_group *groups; /* [n_groups] in MCTS order */
    const int *group_of_node;   /* [graph n_nodes] op group of each node of the grouped graph */
    int n_tasks;
    const tag_device_group *tasks; /* [n_tasks] */
    const int *task_of_device;     /* [cluster n_devices] */
    /* [n_tasks * n_tasks] bytes/µs: the slowest link between two device groups (off the
     * diagonal), the intra bandwidth on it. */
    const double *task_bandwidth;
    /* [(g * n_tasks + t) * TAG_N_BATCH + k]: Σ over the ops of group g and the devices of task t
     * of the op's time at batch B/2^k (the place/serve edge features of §8.2). */
    const double *place_time_us;
    const tag_actions *actions;
    int n_decided;                /* groups 0 .. n_decided-1 are decided */
    const int *decided;           /* [n_decided] action index of each decided group */
    int next_group;               /* the group being decided (n_decided), n_groups when all are */
    const tag_feedback *feedback; /* the evaluation of this state's strategy */
    int baseline_comm;  /* action of the empty state: TAG_COMM_ALLREDUCE or TAG_COMM_MP (OOM) */
    double baseline_us; /* its step time */
} tag_state;

/*
 * The prior hook.  Called when the search expands a node whose next group is `group`
 * (st->next_group); writes prior_per_action[a] >= 0 for every action a of st->actions
 * (st->actions->n_actions floats, caller-owned), summing to 1 (TAG: exp of the decoder's
 * log-softmax).  Returns PB_OK, or PB_ERR with a message in err (the search stops with it).
 * ctx is the pointer given with the hook.  NULL hook: uniform priors (pure MCTS).
 */
typedef int (*tag_prior_fn)(void *ctx, const tag_state *st, int group, float *prior_per_action,
                            pb_error *err);

#ifdef __cplusplus
}
#endif

#endif
