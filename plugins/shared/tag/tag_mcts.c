/* tag_mcts.c — TAG's MCTS strategy search (specs/tag.md §6-7) on the topology simulator. */
#include "tag_mcts.h"

#include "tag_group.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_MAX_TASKS = 10 };

/* A node of the search tree: the state with `depth` groups decided, the last by `action`. */
typedef struct tag_node {
    int parent, action, depth;
    int child0, n_children; /* children are nodes child0 .. child0+n_children-1 */
    int visits;
    double q;
    float prior;
    int evaluated, feasible;
    double reward, step_us;
} tag_node;

struct tag_mcts {
    const pb_problem *p;
    const pb_host *host;
    tag_mcts_opts o;
    tag_state st;
    /* analysis */
    tag_op_group *groups;
    int *group_nodes, *group_ops, *group_of_node;
    tag_device_group *tasks;
    int *task_devices, *task_of_device;
    double *task_bw, *place_time;
    tag_actions actions;
    unsigned char *placed;
    int *comm, *act_ndev, *act_mask;
    /* device groups of strategies: mask m (1 .. 2^T-1) is group m-1; model-parallel groups
     * n_masks + g * n_masks + m - 1, one per op group, so that each op group is split alone */
    int n_masks, n_dgroups;
    int *dg_start, *dg_devices;
    /* strategies */
    int *device, *repl, *best_device, *best_repl;
    pb_strategy s;
    int *acts; /* [n_groups] decided actions of the state being built */
    /* evaluation */
    pb_eval ev;
    double *peak, *busy, *link, *nstart, *nend, *nidle, *makespan;
    tag_feedback fb;
    /* tree */
    tag_node *nodes;
    int n_nodes, cap_nodes;
    int *perm;
    float *prior;
    int base_action;
    double base_us;
    long long sim_calls;
    pb_rng rng;
};

/* ---------------------------------------------------------------- analysis */

static void *tag_alloc(size_t n, size_t size, int *failed)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        *failed = 1;
    return p;
}

/* Op groups: METIS parts of the grouped graph's nodes, in decreasing time at batch B. */
static int tag_mcts_groups(tag_mcts *m, pb_error *err)
{
    const pb_graph *og = m->p->op_graph, *g = m->p->graph;
    const pb_cluster *c = m->p->cluster;
    int grouped = og->grouped && og->grouped != og && og->group_of;
    if ((grouped ? og->grouped : og) != g && !(g->n_nodes == og->n_nodes && !grouped))
        return pb_errorf(err, "the placed graph is not the op graph's grouping");
    int n = g->n_nodes, failed = 0;
    int *part = tag_alloc((size_t)n, sizeof(int), &failed);
    int n_parts = 0;
    if (failed)
        return pb_errorf(err, "out of memory");
    if (tag_group_ops(og, c, (int)m->o.max_groups, m->o.balance, part, &n_parts, err)) {
        free(part);
        return PB_ERR;
    }
    double *key = tag_alloc((size_t)n_parts, sizeof(double), &failed);
    int *order = tag_alloc((size_t)n_parts, sizeof(int), &failed);
    int *rank = tag_alloc((size_t)n_parts, sizeof(int), &failed);
    m->groups = tag_alloc((size_t)n_parts, sizeof *m->groups, &failed);
    m->group_of_node = tag_alloc((size_t)n, sizeof(int), &failed);
    m->group_nodes = tag_alloc((size_t)n, sizeof(int), &failed);
    m->group_ops = tag_alloc((size_t)og->n_nodes, sizeof(int), &failed);
    int rc = failed ? pb_errorf(err, "out of memory") : PB_OK;
    for (int v = 0; rc == PB_OK && v < og->n_nodes; v++)
        key[part[grouped ? og->group_of[v] : v]] += tag_op_mean_time_us(og, c, v, 0);
    if (rc == PB_OK) {
        tag_group_order(n_parts, key, order);
        for (int i = 0; i < n_parts; i++)
            rank[order[i]] = i;
        for (int u = 0; u < n; u++)
            m->group_of_node[u] = rank[part[u]];
        /* Members listed group by group, ascending inside each group. */
        int at = 0, at_ops = 0;
        for (int gi = 0; gi < n_parts; gi++) {
            tag_op_group *G = &m->groups[gi];
            G->nodes = m->group_nodes + at;
            for (int u = 0; u < n; u++)
                if (m->group_of_node[u] == gi)
                    m->group_nodes[at++] = u;
            G->n_nodes = (int)(m->group_nodes + at - G->nodes);
            G->ops = m->group_ops + at_ops;
            double weight = 1;
            for (int v = 0; v < og->n_nodes; v++) {
                if (m->group_of_node[grouped ? og->group_of[v] : v] != gi)
                    continue;
                m->group_ops[at_ops++] = v;
                for (int k = 0; k < TAG_N_BATCH; k++)
                    G->time_us[k] += tag_op_mean_time_us(og, c, v, k);
                G->param_bytes += og->param_bytes[v];
                weight += tag_op_sqrt_cost(og, c, v);
            }
            G->n_ops = (int)(m->group_ops + at_ops - G->ops);
            G->sqrt_cost_weight = weight;
        }
        for (int e = 0; e < og->n_edges; e++) {
            int a = og->edge_src[e], b = og->edge_dst[e];
            int ga = m->group_of_node[grouped ? og->group_of[a] : a];
            int gb = m->group_of_node[grouped ? og->group_of[b] : b];
            if (ga == gb)
                m->groups[ga].intra_bytes += og->edge_bytes[e];
        }
        m->st.n_groups = n_parts;
    }
    free(part);
    free(key);
    free(order);
    free(rank);
    return rc;
}

/* Device groups (TAG's tasks): devices of one type on one machine, or of one type. */
static int tag_mcts_tasks(tag_mcts *m, pb_error *err)
{
    const pb_cluster *c = m->p->cluster;
    int nd = c->n_devices, failed = 0;
    if (nd < 1)
        return pb_errorf(err, "cluster '%s' has no devices", c->name ? c->name : "");
    m->task_of_device = tag_alloc((size_t)nd, sizeof(int), &failed);
    m->task_devices = tag_alloc((size_t)nd, sizeof(int), &failed);
    m->tasks = tag_alloc((size_t)nd, sizeof *m->tasks, &failed);
    if (failed)
        return pb_errorf(err, "out of memory");
    int T = 0;
    for (int d = 0; d < nd; d++) {
        int t = 0;
        for (; t < T; t++)
            if (m->tasks[t].type == c->device_type[d] &&
                (m->o.device_groups == TAG_TASKS_TYPE ||
                 m->tasks[t].machine == c->device_machine[d]))
                break;
        if (t == T) {
            if (T == TAG_MAX_TASKS)
                return pb_errorf(err,
                                 "cluster '%s' has more than %d device groups (GPUs of one type "
                                 "%s): TAG's action space 3 (2^T - 1) is limited to T <= %d; try "
                                 "device_groups=type",
                                 c->name ? c->name : "", TAG_MAX_TASKS,
                                 m->o.device_groups == TAG_TASKS_TYPE ? "" : "on one machine",
                                 TAG_MAX_TASKS);
            const pb_device_type *ty = pb_cluster_type(c, c->device_type[d]);
            m->tasks[T] = (tag_device_group){.type = c->device_type[d],
                                             .machine = c->device_machine[d],
                                             .memory_bytes = ty->memory_bytes};
            T++;
        }
        m->task_of_device[d] = t;
        m->tasks[t].n_devices++;
    }
    int at = 0;
    for (int t = 0; t < T; t++) {
        m->tasks[t].devices = m->task_devices + at;
        for (int d = 0; d < nd; d++)
            if (m->task_of_device[d] == t)
                m->task_devices[at++] = d;
        const int *dv = m->tasks[t].devices;
        m->tasks[t].intra_bandwidth =
            m->tasks[t].n_devices > 1 ? c->link_bandwidth[dv[0] * nd + dv[1]] : 0;
    }
    m->st.n_tasks = T;
    m->task_bw = tag_alloc((size_t)T * (size_t)T, sizeof(double), &failed);
    if (failed)
        return pb_errorf(err, "out of memory");
    for (int a = 0; a < T; a++)
        for (int b = 0; b < T; b++) {
            double bw = a == b ? m->tasks[a].intra_bandwidth : INFINITY;
            for (int i = 0; a != b && i < m->tasks[a].n_devices; i++)
                for (int j = 0; j < m->tasks[b].n_devices; j++) {
                    double x =
                        c->link_bandwidth[m->tasks[a].devices[i] * nd + m->tasks[b].devices[j]];
                    bw = x < bw ? x : bw;
                }
            m->task_bw[a * T + b] = bw;
        }
    return PB_OK;
}

/* place_time: Σ over group g's ops and task t's devices of the op's time at B/2^k. */
static int tag_mcts_place_time(tag_mcts *m, pb_error *err)
{
    int G = m->st.n_groups, T = m->st.n_tasks, failed = 0;
    m->place_time = tag_alloc((size_t)G * (size_t)T * TAG_N_BATCH, sizeof(double), &failed);
    if (failed)
        return pb_errorf(err, "out of memory");
    const pb_graph *og = m->p->op_graph;
    for (int g = 0; g < G; g++)
        for (int t = 0; t < T; t++)
            for (int k = 0; k < TAG_N_BATCH; k++) {
                double sum = 0;
                for (int i = 0; i < m->groups[g].n_ops; i++)
                    sum +=
                        tag_op_time_us(og, m->p->cluster, m->groups[g].ops[i], m->tasks[t].type, k);
                m->place_time[(g * T + t) * TAG_N_BATCH + k] = sum * m->tasks[t].n_devices;
            }
    return PB_OK;
}

/* The actions in the spec's order, and the device groups strategies use. */
static int tag_mcts_actions(tag_mcts *m, pb_error *err)
{
    int T = m->st.n_tasks, G = m->st.n_groups, nd = m->p->cluster->n_devices, failed = 0;
    int n_masks = (1 << T) - 1, per = m->o.duplicate_action ? 4 : 3;
    m->n_masks = n_masks;
    m->placed = tag_alloc((size_t)n_masks * (size_t)per * (size_t)T, 1, &failed);
    m->comm = tag_alloc((size_t)n_masks * (size_t)per, sizeof(int), &failed);
    m->act_ndev = tag_alloc((size_t)n_masks * (size_t)per, sizeof(int), &failed);
    m->act_mask = tag_alloc((size_t)n_masks * (size_t)per, sizeof(int), &failed);
    m->n_dgroups = n_masks * (G + 1);
    m->dg_start = tag_alloc((size_t)m->n_dgroups + 1, sizeof(int), &failed);
    m->dg_devices = tag_alloc((size_t)(G + 1) * (size_t)(1 << (T - 1 > 0 ? T - 1 : 0)) * (size_t)nd,
                              sizeof(int), &failed);
    if (failed)
        return pb_errorf(err, "out of memory");
    int n = 0, at = 0;
    for (int copy = 0; copy <= G; copy++)
        for (int x = 1; x <= n_masks; x++) {
            m->dg_start[copy * n_masks + x - 1] = at;
            for (int d = 0; d < nd; d++)
                if ((x >> (T - 1 - m->task_of_device[d])) & 1)
                    m->dg_devices[at++] = d;
        }
    m->dg_start[m->n_dgroups] = at;
    for (int x = 1; x <= n_masks; x++) {
        int ndev = m->dg_start[x] - m->dg_start[x - 1];
        for (int cm = 0; cm < per; cm++) {
            if (ndev == 1 && cm != TAG_COMM_PS)
                continue;
            for (int t = 0; t < T; t++)
                m->placed[(size_t)n * (size_t)T + (size_t)t] = (x >> (T - 1 - t)) & 1;
            m->comm[n] = cm;
            m->act_ndev[n] = ndev;
            m->act_mask[n] = x;
            n++;
        }
    }
    m->actions = (tag_actions){.n_actions = n,
                               .n_tasks = T,
                               .placed = m->placed,
                               .comm = m->comm,
                               .n_devices = m->act_ndev};
    return PB_OK;
}

static int tag_mcts_buffers(tag_mcts *m, pb_error *err)
{
    int n = m->p->graph->n_nodes, nops = m->p->op_graph->n_nodes, failed = 0;
    int nd = m->p->cluster->n_devices, G = m->st.n_groups;
    m->device = tag_alloc((size_t)n, sizeof(int), &failed);
    m->repl = tag_alloc((size_t)n, sizeof(int), &failed);
    m->best_device = tag_alloc((size_t)n, sizeof(int), &failed);
    m->best_repl = tag_alloc((size_t)n, sizeof(int), &failed);
    m->acts = tag_alloc((size_t)G, sizeof(int), &failed);
    m->peak = tag_alloc((size_t)nd, sizeof(double), &failed);
    m->busy = tag_alloc((size_t)nd, sizeof(double), &failed);
    m->link = tag_alloc((size_t)nd * (size_t)nd, sizeof(double), &failed);
    m->nstart = tag_alloc((size_t)nops, sizeof(double), &failed);
    m->nend = tag_alloc((size_t)nops, sizeof(double), &failed);
    m->nidle = tag_alloc((size_t)nops, sizeof(double), &failed);
    m->makespan = tag_alloc((size_t)nops, sizeof(double), &failed);
    m->perm = tag_alloc((size_t)m->actions.n_actions, sizeof(int), &failed);
    m->prior = tag_alloc((size_t)m->actions.n_actions, sizeof(float), &failed);
    return failed ? pb_errorf(err, "out of memory") : PB_OK;
}

int tag_mcts_new(const pb_problem *p, const pb_host *host, const tag_mcts_opts *o, tag_mcts **out,
                 pb_error *err)
{
    *out = NULL;
    tag_mcts *m = calloc(1, sizeof *m);
    if (!m)
        return pb_errorf(err, "out of memory");
    m->p = p;
    m->host = host;
    m->o = *o;
    int rc = tag_mcts_tasks(m, err);
    if (rc == PB_OK)
        rc = tag_mcts_groups(m, err);
    if (rc == PB_OK)
        rc = tag_mcts_place_time(m, err);
    if (rc == PB_OK)
        rc = tag_mcts_actions(m, err);
    if (rc == PB_OK)
        rc = tag_mcts_buffers(m, err);
    if (rc != PB_OK) {
        tag_mcts_free(m);
        return PB_ERR;
    }
    m->st = (tag_state){.struct_size = sizeof m->st,
                        .graph = p->graph,
                        .op_graph = p->op_graph,
                        .cluster = p->cluster,
                        .n_groups = m->st.n_groups,
                        .groups = m->groups,
                        .group_of_node = m->group_of_node,
                        .n_tasks = m->st.n_tasks,
                        .tasks = m->tasks,
                        .task_of_device = m->task_of_device,
                        .task_bandwidth = m->task_bw,
                        .place_time_us = m->place_time,
                        .actions = &m->actions,
                        .decided = m->acts,
                        .feedback = &m->fb};
    *out = m;
    return PB_OK;
}

void tag_mcts_free(tag_mcts *m)
{
    if (!m)
        return;
    void *arrays[] = {
        m->groups,       m->group_nodes,    m->group_ops,   m->group_of_node, m->tasks,
        m->task_devices, m->task_of_device, m->task_bw,     m->place_time,    m->placed,
        m->comm,         m->act_ndev,       m->act_mask,    m->dg_start,      m->dg_devices,
        m->device,       m->repl,           m->best_device, m->best_repl,     m->acts,
        m->peak,         m->busy,           m->link,        m->nstart,        m->nend,
        m->nidle,        m->makespan,       m->nodes,       m->perm,          m->prior};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(m);
}

const tag_state *tag_mcts_state(const tag_mcts *m)
{
    return &m->st;
}

/* ---------------------------------------------------------------- strategies */

/* The action of group g in a state with `decided` groups decided (acts[0..decided)): undecided
 * groups copy group 0's action, and the empty state is the baseline (specs/tag.md §6). */
static int tag_mcts_effective(const tag_mcts *m, int decided, int g)
{
    return g < decided ? m->acts[g] : decided > 0 ? m->acts[0] : m->base_action;
}

/* m->s: the REPLICATED strategy of the state with acts[0..decided) decided. */
static void tag_mcts_strategy(tag_mcts *m, int decided)
{
    int n = m->p->graph->n_nodes;
    for (int v = 0; v < n; v++) {
        int g = m->group_of_node[v], a = tag_mcts_effective(m, decided, g);
        int mask = m->act_mask[a], cm = m->comm[a];
        int dg = mask - 1;
        if (m->act_ndev[a] == 1)
            m->repl[v] = PB_REPL_NONE;
        else if (cm == TAG_COMM_PS)
            m->repl[v] = PB_REPL_PS;
        else if (cm == TAG_COMM_ALLREDUCE)
            m->repl[v] = PB_REPL_ALLREDUCE;
        else if (cm == TAG_COMM_DUPLICATE)
            m->repl[v] = PB_REPL_DUPLICATE;
        else {
            m->repl[v] = PB_REPL_SPLIT;
            dg = m->n_masks + g * m->n_masks + mask - 1;
        }
        m->device[v] = dg;
    }
    pb_strategy_placement(&m->s, n, m->device);
    m->s.kind = PB_STRATEGY_REPLICATED;
    m->s.replication = m->repl;
    m->s.n_device_groups = m->n_dgroups;
    m->s.group_start = m->dg_start;
    m->s.group_devices = m->dg_devices;
}

double tag_reward(double base_us, double t_us, int feasible)
{
    if (!feasible)
        return -1;
    double r = base_us / t_us - 1;
    return r > 1 ? sqrt(sqrt(r)) : r;
}

/* Simulates the state with acts[0..decided) decided; fills the feedback when `feedback`. */
static int tag_mcts_simulate(tag_mcts *m, int decided, int feedback, double *step_us, int *feasible,
                             pb_error *err)
{
    tag_mcts_strategy(m, decided);
    m->ev = (pb_eval){.struct_size = sizeof m->ev,
                      .feasible = 1,
                      .peak_mem_bytes = m->peak,
                      .busy_us = m->busy,
                      .link_busy_us = feedback ? m->link : NULL,
                      .node_start_us = feedback ? m->nstart : NULL,
                      .node_end_us = feedback ? m->nend : NULL,
                      .node_idle_after_us = feedback ? m->nidle : NULL};
    m->sim_calls++;
    if (m->host->simulate(m->host->ctx, &m->s, &m->ev, err))
        return PB_ERR;
    *step_us = m->ev.step_time_us;
    *feasible = m->ev.feasible;
    if (feedback) {
        for (int v = 0; v < m->p->op_graph->n_nodes; v++)
            m->makespan[v] = m->nend[v] - m->nstart[v];
        m->fb = (tag_feedback){.valid = 1,
                               .feasible = m->ev.feasible,
                               .step_time_us = m->ev.step_time_us,
                               .op_makespan_us = m->makespan,
                               .op_idle_after_us = m->nidle,
                               .device_peak_bytes = m->peak,
                               .device_busy_us = m->busy,
                               .link_busy_us = m->link};
    }
    return PB_OK;
}

/* ---------------------------------------------------------------- tree */

static int tag_mcts_node_new(tag_mcts *m, int parent, int action, int depth, float prior)
{
    if (m->n_nodes == m->cap_nodes) {
        int cap = m->cap_nodes ? 2 * m->cap_nodes : 1024;
        tag_node *nodes = realloc(m->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes)
            return -1;
        m->nodes = nodes;
        m->cap_nodes = cap;
    }
    m->nodes[m->n_nodes] = (tag_node){
        .parent = parent, .action = action, .depth = depth, .child0 = -1, .prior = prior};
    return m->n_nodes++;
}

/* acts[0 .. depth) of node i, from its path. */
static void tag_mcts_path(tag_mcts *m, int i)
{
    for (; i >= 0 && m->nodes[i].parent >= 0; i = m->nodes[i].parent)
        m->acts[m->nodes[i].depth - 1] = m->nodes[i].action;
}

/* The child of node i with the largest PUCT score (the first among equals). */
static int tag_mcts_select(const tag_mcts *m, int i)
{
    const tag_node *nd = &m->nodes[i];
    double c = m->o.c_puct > 0 ? m->o.c_puct : sqrt(nd->n_children / 10.0);
    double visits = nd->visits;
    if (m->o.puct_visits == TAG_PUCT_CHILDREN) {
        visits = 0;
        for (int k = 0; k < nd->n_children; k++)
            visits += m->nodes[nd->child0 + k].visits;
    }
    double root = sqrt(visits), best = -INFINITY;
    int pick = nd->child0;
    for (int k = 0; k < nd->n_children; k++) {
        const tag_node *ch = &m->nodes[nd->child0 + k];
        double u = ch->q + c * ch->prior * root / (1 + ch->visits);
        if (u > best) {
            best = u;
            pick = nd->child0 + k;
        }
    }
    return pick;
}

/* Priors of the actions for expanding node i (state in m->st): the hook's, checked, or uniform. */
static int tag_mcts_priors(tag_mcts *m, int i, tag_prior_fn prior, void *ctx, pb_error *err)
{
    int n = m->actions.n_actions;
    if (!prior) {
        for (int a = 0; a < n; a++)
            m->prior[a] = 1.0f / (float)n;
        return PB_OK;
    }
    m->st.n_decided = m->nodes[i].depth;
    m->st.next_group = m->nodes[i].depth;
    if (prior(ctx, &m->st, m->st.next_group, m->prior, err))
        return PB_ERR;
    double sum = 0;
    for (int a = 0; a < n; a++) {
        if (!(m->prior[a] >= 0) || !isfinite(m->prior[a]))
            return pb_errorf(err, "the prior of action %d of group %d is %g (want >= 0)", a,
                             m->st.next_group, (double)m->prior[a]);
        sum += m->prior[a];
    }
    if (!(sum > 0))
        return pb_errorf(err, "the priors of group %d sum to 0", m->st.next_group);
    for (int a = 0; a < n; a++)
        m->prior[a] = (float)(m->prior[a] / sum);
    return PB_OK;
}

/* Expands node i: one child per action, in shuffled order. */
static int tag_mcts_expand(tag_mcts *m, int i, tag_prior_fn prior, void *ctx, pb_error *err)
{
    if (tag_mcts_priors(m, i, prior, ctx, err))
        return PB_ERR;
    int n = m->actions.n_actions, depth = m->nodes[i].depth + 1;
    for (int a = 0; a < n; a++)
        m->perm[a] = a;
    if (m->o.shuffle)
        pb_rng_shuffle(&m->rng, m->perm, n);
    int first = m->n_nodes;
    for (int k = 0; k < n; k++)
        if (tag_mcts_node_new(m, i, m->perm[k], depth, m->prior[m->perm[k]]) < 0)
            return pb_errorf(err, "out of memory (%d search nodes)", m->n_nodes);
    m->nodes[i].child0 = first;
    m->nodes[i].n_children = n;
    return PB_OK;
}

/* Evaluates node i (its path is in acts) unless cached. */
static int tag_mcts_evaluate(tag_mcts *m, int i, int feedback, pb_error *err)
{
    tag_node *nd = &m->nodes[i];
    if (nd->evaluated)
        return PB_OK;
    double t;
    int feasible;
    if (tag_mcts_simulate(m, nd->depth, feedback, &t, &feasible, err))
        return PB_ERR;
    nd = &m->nodes[i];
    nd->evaluated = 1;
    nd->step_us = t;
    nd->feasible = feasible;
    nd->reward = tag_reward(m->base_us, t, feasible);
    m->fb.reward = nd->reward;
    return PB_OK;
}

static void tag_mcts_backup(tag_mcts *m, int i, double v)
{
    for (; i >= 0; i = m->nodes[i].parent) {
        tag_node *nd = &m->nodes[i];
        nd->visits++;
        nd->q += (v - nd->q) / nd->visits;
    }
}

/* The action on every device group with `comm`, or -1. */
static int tag_mcts_all_tasks(const tag_mcts *m, int comm)
{
    for (int a = 0; a < m->actions.n_actions; a++)
        if (m->act_mask[a] == m->n_masks && m->comm[a] == comm)
            return a;
    return -1;
}

/* The baseline (specs/tag.md §6): DP-NCCL on every device, model-parallel if that runs out of
 * memory; the root node holds its evaluation. */
static int tag_mcts_baseline(tag_mcts *m, int want_feedback, pb_error *err)
{
    int nd = m->p->cluster->n_devices;
    m->base_action = tag_mcts_all_tasks(m, nd > 1 ? TAG_COMM_ALLREDUCE : TAG_COMM_PS);
    double t;
    int feasible;
    if (tag_mcts_simulate(m, 0, 0, &t, &feasible, err))
        return PB_ERR;
    if (!feasible && nd > 1) {
        m->base_action = tag_mcts_all_tasks(m, TAG_COMM_MP);
        if (tag_mcts_simulate(m, 0, 0, &t, &feasible, err))
            return PB_ERR;
    }
    m->base_us = t;
    m->st.baseline_comm = m->comm[m->base_action];
    m->st.baseline_us = t;
    m->n_nodes = 0;
    if (tag_mcts_node_new(m, -1, -1, 0, 1) < 0)
        return pb_errorf(err, "out of memory");
    /* The root's own evaluation is the baseline's; re-simulated only for the GNN's feedback. */
    if (want_feedback)
        return tag_mcts_evaluate(m, 0, 1, err);
    m->nodes[0].evaluated = 1;
    m->nodes[0].step_us = t;
    m->nodes[0].feasible = feasible;
    m->nodes[0].reward = tag_reward(t, t, feasible);
    return PB_OK;
}

static int tag_mcts_stop(const tag_mcts *m, long long playout, double start)
{
    const pb_budget *b = m->p->budget;
    if (playout >= m->o.playouts)
        return 1;
    if (b->sim_calls > 0 && m->sim_calls >= b->sim_calls)
        return 1;
    if (b->wall_s > 0 && pb_clock_monotonic() - start >= b->wall_s)
        return 1;
    return m->host->deadline_passed(m->host->ctx);
}

/* Copies the strategy of node i into the best arrays. */
static void tag_mcts_keep(tag_mcts *m, int i)
{
    tag_mcts_path(m, i);
    tag_mcts_strategy(m, m->nodes[i].depth);
    size_t n = (size_t)m->p->graph->n_nodes;
    memcpy(m->best_device, m->device, n * sizeof(int));
    memcpy(m->best_repl, m->repl, n * sizeof(int));
}

static int tag_mcts_infeasible(const tag_mcts *m, pb_error *err)
{
    const pb_cluster *c = m->p->cluster;
    int worst = 0;
    double over = -INFINITY;
    for (int d = 0; d < c->n_devices; d++) {
        double mem = pb_cluster_type(c, c->device_type[d])->memory_bytes;
        double x = mem > 0 ? m->peak[d] / mem : 0;
        if (x > over) {
            over = x;
            worst = d;
        }
    }
    const pb_device_type *ty = pb_cluster_type(c, c->device_type[worst]);
    return pb_errorf(err,
                     "no strategy fits in memory: all %lld evaluated (DP-NCCL and model "
                     "parallelism over all %d devices among them) run out of memory; e.g. the "
                     "last needs %.2f GiB on device %d (%s, %.2f GiB)",
                     m->sim_calls, c->n_devices, m->peak[worst] / 1073741824.0, worst, ty->name,
                     ty->memory_bytes / 1073741824.0);
}

/* One playout below node `root`: select to a leaf (*leaf), evaluate it, expand it, back its
 * reward up. */
static int tag_mcts_playout(tag_mcts *m, int root, tag_prior_fn prior, void *ctx, int *leaf,
                            pb_error *err)
{
    int i = root;
    while (m->nodes[i].n_children > 0)
        i = tag_mcts_select(m, i);
    tag_mcts_path(m, i);
    if (tag_mcts_evaluate(m, i, prior != NULL, err))
        return PB_ERR;
    if (m->nodes[i].depth < m->st.n_groups && m->nodes[i].n_children == 0 &&
        tag_mcts_expand(m, i, prior, ctx, err))
        return PB_ERR;
    tag_mcts_backup(m, i, m->nodes[i].reward);
    *leaf = i;
    return PB_OK;
}

int tag_mcts_run(tag_mcts *m, tag_prior_fn prior, void *prior_ctx, uint64_t seed, pb_strategy *best,
                 double *initial_us, pb_error *err)
{
    double start = pb_clock_monotonic();
    pb_rng_seed(&m->rng, seed);
    m->sim_calls = 0;
    *initial_us = -1;
    if (tag_mcts_baseline(m, prior != NULL, err))
        return PB_ERR;
    *initial_us = m->base_us;
    int best_node = 0;
    tag_mcts_keep(m, 0);
    double best_us = m->nodes[0].feasible ? m->nodes[0].step_us : INFINITY;
    for (long long it = 0; !tag_mcts_stop(m, it, start); it++) {
        int i;
        if (tag_mcts_playout(m, 0, prior, prior_ctx, &i, err))
            return PB_ERR;
        if (m->nodes[i].reward > m->nodes[best_node].reward) {
            best_node = i;
            best_us = m->nodes[i].step_us;
            tag_mcts_keep(m, i);
        }
        pb_progress pr = {.struct_size = sizeof pr,
                          .episode = (int)it,
                          .episode_best_us = m->nodes[i].feasible ? m->nodes[i].step_us : best_us,
                          .best_so_far_us = best_us,
                          .sim_calls = m->sim_calls};
        m->host->progress(m->host->ctx, &pr);
        if (m->o.stop_when_better && m->nodes[best_node].reward > 0)
            break; /* TAG's Table 7 runs stop at the first reward > 0 */
    }
    if (!m->nodes[best_node].feasible)
        return tag_mcts_infeasible(m, err);
    tag_mcts_path(m, best_node);
    m->st.n_decided = m->nodes[best_node].depth;
    m->st.next_group = m->st.n_decided;
    pb_strategy_placement(best, m->p->graph->n_nodes, m->best_device);
    best->kind = PB_STRATEGY_REPLICATED;
    best->replication = m->best_repl;
    best->n_device_groups = m->n_dgroups;
    best->group_start = m->dg_start;
    best->group_devices = m->dg_devices;
    return PB_OK;
}

/* ---------------------------------------------------------------- description */

void tag_mcts_describe(const tag_mcts *m, char *buf, size_t n)
{
    static const char *const comm_names[] = {"ps", "allreduce", "mp", "duplicate"};
    const pb_cluster *c = m->p->cluster;
    const pb_graph *og = m->p->op_graph;
    size_t at = 0;
#define TAG_PUT(...)                                                                               \
    do {                                                                                           \
        int k_ = snprintf(buf + at, at < n ? n - at : 0, __VA_ARGS__);                             \
        at += k_ > 0 ? (size_t)k_ : 0;                                                             \
    } while (0)
    TAG_PUT("tag-strategy {\"types\":[");
    for (int t = 0; t < c->n_types; t++)
        TAG_PUT("%s\"%s\"", t ? "," : "", pb_cluster_type(c, t)->name);
    TAG_PUT("],\"baseline_us\":%.17g,\"groups\":[", m->base_us);
    int decided = m->st.n_decided;
    for (int g = 0; g < m->st.n_groups; g++) {
        int a = tag_mcts_effective(m, decided, g);
        int grads = 0;
        for (int i = 0; og->node_role && i < m->groups[g].n_ops; i++)
            grads += og->node_role[m->groups[g].ops[i]] == PB_ROLE_APPLY;
        TAG_PUT("%s{\"comm\":\"%s\",\"ops\":%d,\"grads\":%d,\"time_us\":%.17g,\"devices\":[",
                g ? "," : "", m->act_ndev[a] == 1 ? "single" : comm_names[m->comm[a]],
                m->groups[g].n_ops, grads, m->groups[g].time_us[0]);
        for (int t = 0; t < c->n_types; t++) {
            int count = 0;
            for (int d = 0; d < c->n_devices; d++)
                count += c->device_type[d] == t &&
                         ((m->act_mask[a] >> (m->st.n_tasks - 1 - m->task_of_device[d])) & 1);
            TAG_PUT("%s%d", t ? "," : "", count);
        }
        TAG_PUT("]}");
    }
    TAG_PUT("],\"decided\":%d,\"sim_calls\":%lld}", decided, m->sim_calls);
#undef TAG_PUT
    if (n > 0 && at >= n)
        buf[n - 1] = '\0';
}

/* ---------------------------------------------------------------- self-play (§7.4) */

/* The child of `root` drawn with probability visits / Σ visits (the first child when none was
 * visited). */
static int tag_mcts_draw_child(tag_mcts *m, int root)
{
    const tag_node *nd = &m->nodes[root];
    double total = 0;
    for (int k = 0; k < nd->n_children; k++)
        total += m->nodes[nd->child0 + k].visits;
    double u = pb_rng_uniform(&m->rng) * total;
    for (int k = 0; k < nd->n_children; k++) {
        u -= m->nodes[nd->child0 + k].visits;
        if (u < 0)
            return nd->child0 + k;
    }
    return nd->child0;
}

int tag_mcts_selfplay(tag_mcts *m, tag_prior_fn prior, void *prior_ctx, uint64_t seed,
                      long long limit, tag_visit_fn record, void *record_ctx, pb_error *err)
{
    double start = pb_clock_monotonic();
    pb_rng_seed(&m->rng, seed);
    m->sim_calls = 0;
    if (tag_mcts_baseline(m, prior != NULL, err))
        return PB_ERR;
    int G = m->st.n_groups, n_actions = m->actions.n_actions, root = 0;
    double *visits = malloc((size_t)n_actions * sizeof *visits);
    if (!visits)
        return pb_errorf(err, "out of memory");
    int rc = PB_OK, moves = G / 4 > 0 ? G / 4 : 1, leaf;
    for (int i = 0; i < moves && rc == PB_OK && m->nodes[root].depth < G; i++) {
        /* At least 2 visits: the root's own and one below it to learn from.  tag_mcts_stop at
         * playout 0: only the budget and the deadline stop self-play. */
        double want = fmax(2, fmin((double)(G - i) * ldexp(8, m->st.n_tasks), (double)limit));
        while (rc == PB_OK && (m->nodes[root].visits < want || m->nodes[root].n_children == 0) &&
               !tag_mcts_stop(m, 0, start))
            rc = tag_mcts_playout(m, root, prior, prior_ctx, &leaf, err);
        if (rc != PB_OK || m->nodes[root].n_children == 0)
            break;
        for (int a = 0; a < n_actions; a++)
            visits[a] = 0;
        const tag_node *nd = &m->nodes[root];
        double total = 0;
        for (int k = 0; k < nd->n_children; k++) {
            visits[m->nodes[nd->child0 + k].action] = m->nodes[nd->child0 + k].visits;
            total += m->nodes[nd->child0 + k].visits;
        }
        if (total == 0)
            break; /* the budget stopped it before any child was visited */
        /* The root's state with the feedback of its own strategy. */
        double t;
        int feasible;
        tag_mcts_path(m, root);
        rc = tag_mcts_simulate(m, m->nodes[root].depth, 1, &t, &feasible, err);
        if (rc != PB_OK)
            break;
        m->fb.reward = m->nodes[root].reward;
        m->st.n_decided = m->nodes[root].depth;
        m->st.next_group = m->nodes[root].depth;
        rc = record(record_ctx, &m->st, visits, err);
        root = tag_mcts_draw_child(m, root);
    }
    free(visits);
    return rc;
}
