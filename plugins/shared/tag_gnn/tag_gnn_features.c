/* tag_gnn_features.c — the heterogeneous graph and its features (specs/tag.md §8.1-8.2) built
 * from a search state, and the prior hook that feeds them to the network. */
#include "tag_gnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sizes of the arrays of one input. */
typedef struct feat_sizes {
    int G, T, n_link, n_prev, n_cand, n_comm;
} feat_sizes;

static size_t feat_op_width(const feat_sizes *z)
{
    return (size_t)(TAG_GNN_OP_FEATURES_BASE + z->n_comm);
}

static size_t feat_align(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

static size_t feat_bytes(const feat_sizes *z)
{
    size_t floats = (size_t)z->G * feat_op_width(z) + (size_t)z->T * TAG_GNN_DEV_FEATURES +
                    (size_t)z->n_link * TAG_GNN_LINK_FEATURES +
                    (size_t)z->n_prev * TAG_GNN_PREV_FEATURES +
                    (size_t)z->G * (size_t)z->T * TAG_GNN_PLACE_FEATURES;
    size_t ints = 2 * (size_t)z->n_link + 2 * (size_t)z->n_prev + (size_t)z->n_cand;
    return feat_align(floats * sizeof(float)) + feat_align(ints * sizeof(int)) +
           feat_align((size_t)z->n_cand * (size_t)z->T) + 16;
}

/* Points f->in's arrays into f->mem (grown as needed); contents unset except the counts. */
static int feat_layout(tag_gnn_features *f, const feat_sizes *z, pb_error *err)
{
    size_t need = feat_bytes(z);
    if (need > f->cap) {
        void *m = realloc(f->mem, need);
        if (!m)
            return pb_errorf(err, "tag GNN features: out of memory (%zu bytes)", need);
        f->mem = m;
        f->cap = need;
    }
    memset(f->mem, 0, need);
    float *fl = f->mem;
    tag_gnn_input *in = &f->in;
    in->n_groups = z->G;
    in->n_tasks = z->T;
    in->n_link = z->n_link;
    in->n_prev = z->n_prev;
    in->n_cand = z->n_cand;
    in->n_comm = z->n_comm;
    float *op = fl, *dev = op + (size_t)z->G * feat_op_width(z);
    float *link = dev + (size_t)z->T * TAG_GNN_DEV_FEATURES;
    float *prev = link + (size_t)z->n_link * TAG_GNN_LINK_FEATURES;
    float *place = prev + (size_t)z->n_prev * TAG_GNN_PREV_FEATURES;
    float *fl_end = place + (size_t)z->G * (size_t)z->T * TAG_GNN_PLACE_FEATURES;
    int *ints = (int *)((char *)f->mem + feat_align((size_t)((char *)fl_end - (char *)fl)));
    int *link_src = ints, *link_dst = link_src + z->n_link, *prev_src = link_dst + z->n_link;
    int *prev_dst = prev_src + z->n_prev, *comm = prev_dst + z->n_prev;
    unsigned char *placed =
        (unsigned char *)ints +
        feat_align((size_t)(2 * z->n_link + 2 * z->n_prev + z->n_cand) * sizeof(int));
    in->op_feat = op;
    in->dev_feat = dev;
    in->link_feat = link;
    in->prev_feat = prev;
    in->place_feat = place;
    in->link_src = link_src;
    in->link_dst = link_dst;
    in->prev_src = prev_src;
    in->prev_dst = prev_dst;
    in->cand_comm = comm;
    in->cand_placed = placed;
    return PB_OK;
}

int tag_gnn_features_copy(tag_gnn_features *dst, const tag_gnn_input *src, pb_error *err)
{
    if (tag_gnn_input_check(src, err) != PB_OK)
        return PB_ERR;
    feat_sizes z = {src->n_groups, src->n_tasks, src->n_link,
                    src->n_prev,   src->n_cand,  src->n_comm};
    if (feat_layout(dst, &z, err) != PB_OK)
        return PB_ERR;
    tag_gnn_input *in = &dst->in;
    memcpy((float *)in->op_feat, src->op_feat, (size_t)z.G * feat_op_width(&z) * sizeof(float));
    memcpy((float *)in->dev_feat, src->dev_feat,
           (size_t)z.T * TAG_GNN_DEV_FEATURES * sizeof(float));
    if (z.n_link > 0) {
        memcpy((float *)in->link_feat, src->link_feat, (size_t)z.n_link * sizeof(float));
        memcpy((int *)in->link_src, src->link_src, (size_t)z.n_link * sizeof(int));
        memcpy((int *)in->link_dst, src->link_dst, (size_t)z.n_link * sizeof(int));
    }
    if (z.n_prev > 0) {
        memcpy((float *)in->prev_feat, src->prev_feat, (size_t)z.n_prev * sizeof(float));
        memcpy((int *)in->prev_src, src->prev_src, (size_t)z.n_prev * sizeof(int));
        memcpy((int *)in->prev_dst, src->prev_dst, (size_t)z.n_prev * sizeof(int));
    }
    memcpy((float *)in->place_feat, src->place_feat,
           (size_t)z.G * (size_t)z.T * TAG_GNN_PLACE_FEATURES * sizeof(float));
    memcpy((int *)in->cand_comm, src->cand_comm, (size_t)z.n_cand * sizeof(int));
    memcpy((unsigned char *)in->cand_placed, src->cand_placed, (size_t)z.n_cand * (size_t)z.T);
    in->group = src->group;
    return PB_OK;
}

void tag_gnn_features_free(tag_gnn_features *f)
{
    if (!f)
        return;
    free(f->mem);
    memset(f, 0, sizeof *f);
}

/* --- from a search state */

/* The action a group is evaluated with (§6 dump_strategy): its own when decided, group 0's when
 * some group is decided, else the baseline (every device group, baseline_comm). */
static void feat_effective(const tag_state *st, int g, const unsigned char **placed, int *comm)
{
    const tag_actions *A = st->actions;
    if (st->n_decided > 0) {
        int a = st->decided[g < st->n_decided ? g : 0];
        *placed = A->placed + (size_t)a * (size_t)A->n_tasks;
        *comm = A->comm[a];
    } else {
        *placed = NULL; /* every device group */
        *comm = st->baseline_comm;
    }
}

static int feat_state_ok(const tag_state *st, int group, int n_comm, pb_error *err)
{
    if (!st || !st->op_graph || !st->groups || !st->tasks || !st->actions || !st->task_bandwidth ||
        !st->place_time_us)
        return pb_errorf(err, "tag GNN features: the search state lacks groups, device groups, "
                              "actions or bandwidths");
    if (st->n_groups < 1 || st->n_tasks < 1 || st->actions->n_tasks != st->n_tasks ||
        st->actions->n_actions < 1)
        return pb_errorf(err,
                         "tag GNN features: %d op groups, %d device groups, %d actions over "
                         "%d device groups",
                         st->n_groups, st->n_tasks, st->actions->n_actions, st->actions->n_tasks);
    if (group < 0 || group >= st->n_groups)
        return pb_errorf(err, "tag GNN features: group %d is not in [0, %d)", group, st->n_groups);
    if (st->n_decided < 0 || st->n_decided > st->n_groups || (st->n_decided > 0 && !st->decided))
        return pb_errorf(err, "tag GNN features: n_decided %d of %d groups", st->n_decided,
                         st->n_groups);
    for (int g = 0; g < st->n_decided; g++)
        if (st->decided[g] < 0 || st->decided[g] >= st->actions->n_actions)
            return pb_errorf(err, "tag GNN features: decided[%d] = %d is not an action", g,
                             st->decided[g]);
    if (st->baseline_comm < 0 || st->baseline_comm >= n_comm)
        return pb_errorf(err, "tag GNN features: baseline_comm %d", st->baseline_comm);
    for (int a = 0; a < st->actions->n_actions; a++)
        if (st->actions->comm[a] < 0 || st->actions->comm[a] >= n_comm)
            return pb_errorf(err,
                             "tag GNN features: action %d has comm option %d; the network knows "
                             "%d (n_comm; 4 when the search offers DUPLICATE)",
                             a, st->actions->comm[a], n_comm);
    return PB_OK;
}

typedef struct feat_norm {
    double cl2;  /* ‖group time at B‖₂ */
    double bmax; /* the largest bandwidth, inter or intra */
} feat_norm;

static feat_norm feat_normalisers(const tag_state *st)
{
    feat_norm z = {0, 0};
    for (int g = 0; g < st->n_groups; g++)
        z.cl2 += st->groups[g].time_us[0] * st->groups[g].time_us[0];
    z.cl2 = sqrt(z.cl2);
    for (int i = 0; i < st->n_tasks * st->n_tasks; i++)
        z.bmax = fmax(z.bmax, st->task_bandwidth[i]);
    for (int t = 0; t < st->n_tasks; t++)
        z.bmax = fmax(z.bmax, st->tasks[t].intra_bandwidth);
    /* A graph of zero-time groups or a cluster without links: normalise by 1, not by 0. */
    if (!(z.cl2 > 0))
        z.cl2 = 1;
    if (!(z.bmax > 0))
        z.bmax = 1;
    return z;
}

static void feat_ops(const tag_state *st, int group, int n_comm, feat_norm z, float *op)
{
    const tag_feedback *fb = st->feedback;
    int fb_ok = fb && fb->valid && fb->op_makespan_us && fb->op_idle_after_us;
    for (int g = 0; g < st->n_groups; g++) {
        const tag_op_group *gr = &st->groups[g];
        float *f = op + (size_t)g * (size_t)(TAG_GNN_OP_FEATURES_BASE + n_comm);
        for (int k = 0; k < TAG_N_BATCH; k++)
            f[k] = (float)(gr->time_us[k] / z.cl2);
        /* Sizes in elements (4 bytes each, §1). */
        f[4] = (float)(gr->param_bytes / 4 / (z.cl2 * z.bmax));
        f[5] = (float)(gr->intra_bytes / 4 / (z.cl2 * z.bmax));
        const unsigned char *placed;
        int comm;
        feat_effective(st, g, &placed, &comm);
        f[6 + comm] = 1;
        float *rest = f + 6 + n_comm; /* feedback, decided, next */
        if (fb_ok && gr->n_ops > 0) {
            double mk = 0, idle = 0;
            for (int i = 0; i < gr->n_ops; i++) {
                mk += fb->op_makespan_us[gr->ops[i]] / z.cl2;
                idle += fb->op_idle_after_us[gr->ops[i]] / z.cl2;
            }
            rest[0] = (float)(mk / gr->n_ops);
            rest[1] = (float)(idle / gr->n_ops);
        }
        rest[2] = g < st->n_decided ? 1.0f : 0.0f;
        rest[3] = g == group ? 1.0f : 0.0f;
    }
}

static void feat_devices(const tag_state *st, const tag_gnn_options *o, feat_norm z, float *dev)
{
    const tag_feedback *fb = st->feedback;
    int fb_ok = fb && fb->valid;
    for (int t = 0; t < st->n_tasks; t++) {
        const tag_device_group *task = &st->tasks[t];
        float *f = dev + (size_t)t * TAG_GNN_DEV_FEATURES;
        f[0] = (float)(task->n_devices / 4.0);
        f[1] = (float)(task->memory_bytes / (z.cl2 * z.bmax));
        f[2] = (float)(task->intra_bandwidth / z.bmax);
        if (!fb_ok || task->n_devices < 1)
            continue;
        double peak = 0, util = 0;
        for (int i = 0; i < task->n_devices; i++) {
            int d = task->devices[i];
            if (fb->device_peak_bytes && task->memory_bytes > 0)
                peak = fmax(peak, fb->device_peak_bytes[d] / task->memory_bytes);
            if (fb->device_busy_us && fb->step_time_us > 0) {
                double u = fb->device_busy_us[d] / fb->step_time_us;
                /* The reference divides integers (§4.6): 0 unless the device never idled. */
                util += o->float_utilisation
                            ? u
                            : floor(floor(fb->device_busy_us[d]) / floor(fb->step_time_us));
            }
        }
        f[3] = (float)peak;
        f[4] = (float)(util / task->n_devices);
    }
}

/* Link edges (§8.1): for every ordered pair (t, t'), t != t', both t -> t' and t' -> t. */
static void feat_links(const tag_state *st, feat_norm z, tag_gnn_input *in)
{
    int T = st->n_tasks, k = 0;
    int *src = (int *)in->link_src, *dst = (int *)in->link_dst;
    float *feat = (float *)in->link_feat;
    for (int a = 0; a < T; a++)
        for (int b = 0; b < T; b++) {
            if (a == b)
                continue;
            int pair[2][2] = {{a, b}, {b, a}};
            for (int d = 0; d < 2; d++, k++) {
                src[k] = pair[d][0];
                dst[k] = pair[d][1];
                feat[k] = (float)(st->task_bandwidth[pair[d][0] * T + pair[d][1]] / z.bmax);
            }
        }
}

typedef struct feat_succ {
    int j;
    double elems;
} feat_succ;

static int feat_succ_cmp(const void *a, const void *b)
{
    int x = ((const feat_succ *)a)->j, y = ((const feat_succ *)b)->j;
    return (x > y) - (x < y);
}

/* The elements an edge carries; a control edge counts as its producer's port 0 (§8.1). */
static double feat_edge_elems(const pb_graph *g, int e)
{
    double bytes = g->edge_bytes ? g->edge_bytes[e] : 0;
    int src = g->edge_src[e];
    if (bytes <= 0 && g->port_start && g->port_bytes && g->port_start[src + 1] > g->port_start[src])
        bytes = g->port_bytes[g->port_start[src]];
    return bytes / 4;
}

/* Prev edges (§8.1): one per distinct (group(i), group(j)) over op pairs i != j carrying > 0
 * elements, first seen over (i, j) row-major, self-loops included.  Counts them when in is NULL.
 * Returns the count, or -1 when out of memory. */
static int feat_prev(const tag_state *st, const int *group_of_op, const tag_gnn_options *o,
                     feat_norm z, tag_gnn_input *in)
{
    const pb_graph *g = st->op_graph;
    int G = st->n_groups, n = 0, max_deg = 0;
    for (int i = 0; i < g->n_nodes; i++)
        max_deg = g->succ_start[i + 1] - g->succ_start[i] > max_deg
                      ? g->succ_start[i + 1] - g->succ_start[i]
                      : max_deg;
    int *seen = malloc((size_t)G * (size_t)G * sizeof *seen);
    feat_succ *s = malloc(((size_t)max_deg + 1) * sizeof *s);
    if (!seen || !s) {
        free(seen);
        free(s);
        return -1;
    }
    for (int k = 0; k < G * G; k++)
        seen[k] = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        int gi = group_of_op[i], m = 0;
        if (gi < 0)
            continue;
        for (int k = g->succ_start[i]; k < g->succ_start[i + 1]; k++)
            if (g->succ[k] != i)
                s[m++] = (feat_succ){g->succ[k], feat_edge_elems(g, g->succ_edge[k])};
        qsort(s, (size_t)m, sizeof *s, feat_succ_cmp);
        for (int k = 0; k < m; k++) {
            double elems = s[k].elems;
            while (k + 1 < m && s[k + 1].j == s[k].j)
                elems += s[++k].elems;
            int gj = group_of_op[s[k].j];
            if (gj < 0 || !(elems > 0))
                continue;
            int *slot = &seen[gi * G + gj];
            if (*slot < 0) {
                *slot = n++;
                if (in) {
                    ((int *)in->prev_src)[*slot] = gi;
                    ((int *)in->prev_dst)[*slot] = gj;
                }
            }
            /* The reference writes this feature with `==` (a typo), so it stays 0 (§8.2). */
            if (in && o->tensor_edge_features)
                ((float *)in->prev_feat)[*slot] += (float)(elems / (z.cl2 * z.bmax));
        }
    }
    free(seen);
    free(s);
    return n;
}

static void feat_place(const tag_state *st, feat_norm z, float *place)
{
    int T = st->n_tasks;
    for (int g = 0; g < st->n_groups; g++) {
        const unsigned char *placed;
        int comm;
        feat_effective(st, g, &placed, &comm);
        for (int t = 0; t < T; t++) {
            float *f = place + ((size_t)g * (size_t)T + (size_t)t) * TAG_GNN_PLACE_FEATURES;
            for (int k = 0; k < TAG_N_BATCH; k++)
                f[k] = (float)(st->place_time_us[((size_t)g * (size_t)T + (size_t)t) * TAG_N_BATCH +
                                                 (size_t)k] /
                               z.cl2);
            f[4] = !placed || placed[t] ? 1.0f : 0.0f;
        }
    }
}

int tag_gnn_features_build(tag_gnn_features *f, const tag_state *st, int group,
                           const tag_gnn_options *o, pb_error *err)
{
    if (feat_state_ok(st, group, o->n_comm, err) != PB_OK)
        return PB_ERR;
    const pb_graph *g = st->op_graph;
    int *group_of_op = malloc(((size_t)g->n_nodes + 1) * sizeof *group_of_op);
    if (!group_of_op)
        return pb_errorf(err, "tag GNN features: out of memory");
    for (int i = 0; i < g->n_nodes; i++)
        group_of_op[i] = -1;
    for (int k = 0; k < st->n_groups; k++)
        for (int i = 0; i < st->groups[k].n_ops; i++) {
            int op = st->groups[k].ops[i];
            if (op < 0 || op >= g->n_nodes) {
                free(group_of_op);
                return pb_errorf(err, "tag GNN features: op group %d lists op %d of %d", k, op,
                                 g->n_nodes);
            }
            group_of_op[op] = k;
        }
    feat_norm z = feat_normalisers(st);
    const tag_actions *A = st->actions;
    feat_sizes sz = {st->n_groups,
                     st->n_tasks,
                     2 * st->n_tasks * (st->n_tasks - 1),
                     feat_prev(st, group_of_op, o, z, NULL),
                     A->n_actions,
                     o->n_comm};
    if (sz.n_prev < 0 || feat_layout(f, &sz, err) != PB_OK ||
        feat_prev(st, group_of_op, o, z, &f->in) != sz.n_prev) {
        free(group_of_op);
        return sz.n_prev < 0 ? pb_errorf(err, "tag GNN features: out of memory") : PB_ERR;
    }
    free(group_of_op);
    tag_gnn_input *in = &f->in;
    in->group = group;
    feat_ops(st, group, o->n_comm, z, (float *)in->op_feat);
    feat_devices(st, o, z, (float *)in->dev_feat);
    feat_links(st, z, in);
    feat_place(st, z, (float *)in->place_feat);
    memcpy((int *)in->cand_comm, A->comm, (size_t)A->n_actions * sizeof(int));
    memcpy((unsigned char *)in->cand_placed, A->placed, (size_t)A->n_actions * (size_t)A->n_tasks);
    return PB_OK;
}

int tag_gnn_prior_hook(void *ctx, const tag_state *st, int group, float *prior_per_action,
                       pb_error *err)
{
    tag_gnn *n = ctx;
    tag_gnn_features *f = tag_gnn_hook_features(n);
    if (tag_gnn_features_build(f, st, group, tag_gnn_get_options(n), err) != PB_OK)
        return PB_ERR;
    return tag_gnn_priors(n, &f->in, prior_per_action, err);
}
