/* sfb.c — TAG's SFB ILP per gradient (sfb.h), built and solved with CBC's C interface: the one
 * file that includes coin/Cbc_C_Interface.h. */
#include "sfb.h"

#include <coin/Cbc_C_Interface.h>

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the ILP */

double sfb_objective(const sfb_problem *p, const int *x, int *feasible)
{
    double z = 0;
    for (int i = 0; i < p->n; i++)
        z += x[i] ? p->cost[i] : 0;
    for (int e = 0; e < p->n_edges; e++)
        if (x[p->edge_dst[e]] && !x[p->edge_src[e]])
            z += p->edge_cost[e];
    /* x_k <= Σ over k's consumers in V of x_i, for k != 0. */
    int ok = 1;
    for (int k = 1; k < p->n && ok && !p->no_consumer_rows; k++) {
        if (!x[k])
            continue;
        int any = 0;
        for (int e = 0; e < p->n_edges && !any; e++)
            any = p->edge_src[e] == k && x[p->edge_dst[e]];
        ok = any;
    }
    *feasible = ok;
    return z;
}

/* The constraint matrix of p in compressed columns (x_0..x_n-1, then b_0..b_m-1): rows 0..m-1
 * are b_e - x_dst + x_src >= 0, rows m + k - 1 (k = 1..n-1, unless no_consumer_rows) are
 * x_k - Σ_(k,i) x_i <= 0.  Returns the row count, or -1 when out of memory; the caller frees
 * *start, *index and *value. */
static int sfb_matrix(const sfb_problem *p, CoinBigIndex **start, int **index, double **value)
{
    int n = p->n, m = p->n_edges, n_cols = n + m, consumer = !p->no_consumer_rows;
    int n_rows = m + (consumer && n > 1 ? n - 1 : 0);
    size_t nz = (size_t)3 * (size_t)m + (consumer ? (size_t)n + (size_t)m : 0);
    *start = calloc((size_t)n_cols + 1, sizeof **start);
    *index = malloc((nz ? nz : 1) * sizeof **index);
    *value = malloc((nz ? nz : 1) * sizeof **value);
    int *fill = calloc((size_t)n_cols + 1, sizeof *fill);
    if (!*start || !*index || !*value || !fill) {
        free(fill);
        return -1;
    }
    /* Two passes over the same entries: count per column, then place. */
    for (int pass = 0; pass < 2; pass++) {
#define SFB_PUT(col, row, val)                                                                     \
    do {                                                                                           \
        if (pass == 0) {                                                                           \
            (*start)[(col) + 1]++;                                                                 \
        } else {                                                                                   \
            CoinBigIndex at = (*start)[(col)] + fill[(col)]++;                                     \
            (*index)[at] = (row);                                                                  \
            (*value)[at] = (val);                                                                  \
        }                                                                                          \
    } while (0)
        for (int k = 1; consumer && k < n; k++)
            SFB_PUT(k, m + k - 1, 1.0);
        for (int e = 0; e < m; e++) {
            SFB_PUT(p->edge_dst[e], e, -1.0);
            SFB_PUT(p->edge_src[e], e, 1.0);
            if (consumer && p->edge_src[e] > 0)
                SFB_PUT(p->edge_dst[e], m + p->edge_src[e] - 1, -1.0);
            SFB_PUT(n + e, e, 1.0);
        }
#undef SFB_PUT
        for (int c = 0; pass == 0 && c < n_cols; c++)
            (*start)[c + 1] += (*start)[c];
    }
    free(fill);
    return n_rows;
}

int sfb_solve(const sfb_problem *p, double time_limit_s, int *x, double *objective, int *status,
              int *n_cut_vars, int *n_rows, pb_error *err)
{
    memset(x, 0, (size_t)p->n * sizeof(int));
    *objective = 0;
    *status = SFB_NO_SOLUTION;
    int n_cols = p->n + p->n_edges;
    CoinBigIndex *start = NULL;
    int *index = NULL;
    double *value = NULL;
    int rows = sfb_matrix(p, &start, &index, &value);
    double *col_ub = malloc((size_t)(n_cols > 0 ? n_cols : 1) * sizeof(double));
    double *obj = malloc((size_t)(n_cols > 0 ? n_cols : 1) * sizeof(double));
    double *row_lb = malloc((size_t)(rows > 0 ? rows : 1) * sizeof(double));
    double *row_ub = malloc((size_t)(rows > 0 ? rows : 1) * sizeof(double));
    Cbc_Model *m = Cbc_newModel();
    if (rows < 0 || !col_ub || !obj || !row_lb || !row_ub || !m) {
        void *arrays[] = {start, index, value, col_ub, obj, row_lb, row_ub};
        for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
            free(arrays[i]);
        if (m)
            Cbc_deleteModel(m);
        return pb_errorf(err, "out of memory");
    }
    for (int c = 0; c < n_cols; c++) {
        col_ub[c] = 1;
        obj[c] = c < p->n ? p->cost[c] : p->edge_cost[c - p->n];
    }
    for (int r = 0; r < rows; r++) {
        int cut = r < p->n_edges;
        row_lb[r] = cut ? 0 : -DBL_MAX;
        row_ub[r] = cut ? DBL_MAX : 0;
    }
    Cbc_setLogLevel(m, 0);
    if (time_limit_s > 0)
        Cbc_setMaximumSeconds(m, time_limit_s);
    Cbc_loadProblem(m, n_cols, rows, start, index, value, NULL, col_ub, obj, row_lb, row_ub);
    for (int c = 0; c < n_cols; c++)
        Cbc_setInteger(m, c);
    void *arrays[] = {start, index, value, col_ub, obj, row_lb, row_ub};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    if (n_cut_vars)
        *n_cut_vars = p->n_edges;
    if (n_rows)
        *n_rows = rows;
    Cbc_solve(m);
    int have = Cbc_isProvenOptimal(m) || Cbc_numberSavedSolutions(m) > 0;
    if (have && Cbc_getColSolution(m)) {
        const double *sol = Cbc_getColSolution(m);
        for (int i = 0; i < p->n; i++)
            x[i] = sol[i] > 0.5;
        int feasible;
        *objective = sfb_objective(p, x, &feasible);
        *status = Cbc_isProvenOptimal(m) ? SFB_OPTIMAL : SFB_TIME_LIMIT;
        /* Nothing to gain (a tie with duplicating nothing, or a solution that breaks a
         * constraint by rounding): keep the synchronisation, deterministically. */
        if (!feasible || !(*objective < -1e-9)) {
            memset(x, 0, (size_t)p->n * sizeof(int));
            *objective = 0;
        }
    }
    Cbc_deleteModel(m);
    return PB_OK;
}

/* ---------------------------------------------------------------- applying it to a strategy */

/* Scratch of one sfb_apply. */
typedef struct sfb_work {
    const pb_graph *g;
    const pb_cluster *cl;
    int n;
    int *device, *repl; /* the op-level strategy */
    const unsigned char *part;
    double *replica_us;      /* [n] mean compute time of one replica */
    int *idx, *cand, *depth; /* candidate index per op (-1), candidates, their BFS depth */
    double *cost, *edge_cost;
    int *edge_src, *edge_dst;
    int cap_edges;
    int *x;
    double opts_time_limit; /* SFB_MODE_REFERENCE's CBC limit */
} sfb_work;

static void sfb_work_free(sfb_work *w)
{
    void *arrays[] = {w->device, w->repl, w->replica_us, w->idx,      w->cand,    w->depth,
                      w->cost,   w->x,    w->edge_cost,  w->edge_src, w->edge_dst};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
}

static int sfb_role(const pb_graph *g, int v)
{
    if (g->struct_size < offsetof(pb_graph, node_split) || !g->node_role)
        return PB_ROLE_OP;
    return g->node_role[v];
}

/* The slowest link between the devices of group gr (bytes/µs). */
static double sfb_bottleneck(const pb_cluster *cl, const pb_strategy *s, int gr)
{
    double tau = INFINITY;
    for (int a = s->group_start[gr]; a < s->group_start[gr + 1]; a++)
        for (int b = s->group_start[gr]; b < s->group_start[gr + 1]; b++) {
            int i = s->group_devices[a], j = s->group_devices[b];
            if (i != j && cl->link_bandwidth[i * cl->n_devices + j] < tau)
                tau = cl->link_bandwidth[i * cl->n_devices + j];
        }
    return tau;
}

/* The topology simulator's AllReduce time (its collective model at its default coefficients:
 * TAG's NCCL fit, reference bandwidth 2810 B/µs) for group gr's devices reducing L bytes split D
 * ways: each member sends its L/D part. */
static double sfb_nccl_us(const pb_cluster *cl, const pb_strategy *s, int gr, double L, double D)
{
    static const double a1 = 0.043420241077615454, b1 = 368.2013618677043, a2 = 0.27766802543921265,
                        b2 = 211.91926070037152, ref_bw = 2810;
    double intra = INFINITY, inter = INFINITY;
    for (int a = s->group_start[gr]; a < s->group_start[gr + 1]; a++)
        for (int b = s->group_start[gr]; b < s->group_start[gr + 1]; b++) {
            int i = s->group_devices[a], j = s->group_devices[b];
            if (i == j)
                continue;
            double bw = cl->link_bandwidth[i * cl->n_devices + j];
            if (cl->device_machine[i] == cl->device_machine[j])
                intra = bw < intra ? bw : intra;
            else
                inter = bw < inter ? bw : inter;
        }
    double bw = isfinite(inter) ? inter : intra;
    double scale = isfinite(bw) && bw > 0 ? ref_bw / bw : 1.0;
    double kb = (double)((uint64_t)(L / D) >> 10);
    double small = trunc(a1 * scale * kb + b1 * scale), large = trunc(a2 * scale * kb + b2 * scale);
    return small > large ? small : large;
}

static int sfb_edge(sfb_work *w, int n_edges, int src, int dst, double cost)
{
    if (n_edges >= w->cap_edges) {
        int cap = w->cap_edges ? 2 * w->cap_edges : 64;
        int *s = realloc(w->edge_src, (size_t)cap * sizeof(int));
        if (s)
            w->edge_src = s;
        int *d = realloc(w->edge_dst, (size_t)cap * sizeof(int));
        if (d)
            w->edge_dst = d;
        double *c = realloc(w->edge_cost, (size_t)cap * sizeof(double));
        if (c)
            w->edge_cost = c;
        if (!s || !d || !c)
            return PB_ERR;
        w->cap_edges = cap;
    }
    w->edge_src[n_edges] = src;
    w->edge_dst[n_edges] = dst;
    w->edge_cost[n_edges] = cost;
    return PB_OK;
}

/* The candidates of gradient producer p (BFS over data edges, nearest first): ops batch-split
 * on p's device group.  Returns how many; w->idx marks them. */
static int sfb_candidates(sfb_work *w, int p, const sfb_options *o)
{
    const pb_graph *g = w->g;
    int n = 0, limit = o->max_candidates > 0 ? o->max_candidates : g->n_nodes;
    w->cand[n] = p;
    w->depth[n] = 0;
    w->idx[p] = n++;
    for (int head = 0; head < n; head++) {
        int v = w->cand[head];
        if (o->depth > 0 && w->depth[head] >= o->depth)
            continue;
        for (int i = g->pred_start[v]; i < g->pred_start[v + 1]; i++) {
            int u = g->pred[i];
            if (n >= limit || w->idx[u] >= 0 || g->edge_bytes[g->pred_edge[i]] <= 0 ||
                !w->part[u] || w->device[u] != w->device[p])
                continue;
            w->cand[n] = u;
            w->depth[n] = w->depth[head] + 1;
            w->idx[u] = n++;
        }
    }
    return n;
}

/* Builds and solves the ILP of optimizer op a's gradient edge e; marks the chosen ops. */
static int sfb_gradient(sfb_work *w, const pb_strategy *s, int a, int e, const sfb_options *o,
                        int *op_replication, sfb_record *rec, pb_error *err)
{
    const pb_graph *g = w->g;
    int p = g->edge_src[e], gr = w->device[p];
    double t0 = pb_clock_monotonic();
    double D = s->group_start[gr + 1] - s->group_start[gr];
    double tau = sfb_bottleneck(w->cl, s, gr);
    int n = sfb_candidates(w, p, o), n_edges = 0;
    double bcast = D * (D - 1) / tau, L = g->edge_bytes[e];
    for (int i = 0; i < n; i++) {
        int v = w->cand[i];
        w->cost[i] = (D - 1) * w->replica_us[v];
        for (int k = g->pred_start[v]; k < g->pred_start[v + 1]; k++) {
            int u = g->pred[k];
            double bytes = g->edge_bytes[g->pred_edge[k]];
            if (bytes <= 0 || !w->part[u])
                continue; /* a whole producer is already on every device */
            if (w->idx[u] < 0)
                w->cost[i] += bcast * bytes; /* b_ui = x_i */
            else if (sfb_edge(w, n_edges++, w->idx[u], i, bcast * bytes))
                return pb_errorf(err, "out of memory");
        }
    }
    double saving = w->repl[a] == PB_REPL_PS   ? (D - 1) * (D + 1) / D * L / tau
                    : o->sync == SFB_SYNC_NCCL ? sfb_nccl_us(w->cl, s, gr, L, D)
                                               : 2 * (D - 1) / D * L / tau;
    w->cost[0] -= saving;
    sfb_problem prob = {n, w->cost, n_edges, w->edge_src, w->edge_dst, w->edge_cost, saving, 0};
    *rec = (sfb_record){.apply = a, .gradient = p, .n_candidates = n};
    int rc = sfb_solve(&prob, o->time_limit_s, w->x, &rec->objective, &rec->status,
                       &rec->n_cut_vars, &rec->n_rows, err);
    rec->solve_s = pb_clock_monotonic() - t0;
    for (int i = 0; i < n; i++) {
        if (rc == PB_OK && w->x[i]) {
            op_replication[w->cand[i]] = PB_REPL_DUPLICATE;
            rec->n_duplicated++;
        }
        w->idx[w->cand[i]] = -1;
    }
    return rc;
}

/* The op-level strategy of s, compiled once: which ops are batch-split, replica times. */
static int sfb_prepare(sfb_work *w, const pb_strategy *s, pb_error *err)
{
    const pb_graph *g = w->g;
    int n = w->n;
    const int *op_repl = PB_STRATEGY_HAS(s, op_replication) ? s->op_replication : NULL;
    for (int v = 0; v < n; v++) {
        int k = g->group_of ? g->group_of[v] : v;
        w->device[v] = s->device[k];
        w->repl[v] = op_repl && op_repl[v] >= 0 ? op_repl[v] : s->replication[k];
        w->idx[v] = -1;
    }
    pb_strategy ops = *s;
    ops.struct_size = sizeof ops;
    ops.n_nodes = n;
    ops.device = w->device;
    ops.replication = w->repl;
    ops.device_share = PB_STRATEGY_HAS(s, device_share) ? s->device_share : NULL;
    ops.op_replication = NULL;
    pb_compiler *c = pb_compiler_new();
    if (!c)
        return pb_errorf(err, "out of memory");
    const pb_compiled *cg;
    if (pb_compile(c, g, w->cl, &ops, &cg, err)) {
        pb_compiler_free(c);
        return PB_ERR;
    }
    unsigned char *part = malloc((size_t)n + 1);
    int *count = calloc((size_t)n + 1, sizeof(int));
    if (!part || !count) {
        free(part);
        free(count);
        pb_compiler_free(c);
        return pb_errorf(err, "out of memory");
    }
    memcpy(part, cg->op_part, (size_t)n);
    for (int v = 0; v < n; v++)
        w->replica_us[v] = 0;
    for (int j = 0; j < cg->n_nodes; j++)
        if (cg->kind[j] == PB_CNODE_OP) {
            w->replica_us[cg->origin[j]] += cg->cost_us[j];
            count[cg->origin[j]]++;
        }
    for (int v = 0; v < n; v++)
        w->replica_us[v] = count[v] ? w->replica_us[v] / count[v] : 0;
    free(count);
    pb_compiler_free(c);
    w->part = part;
    return PB_OK;
}

/* The reference's one ILP over the whole graph (sfb.h, SFB_MODE_REFERENCE). */
static int sfb_reference(sfb_work *w, const pb_strategy *s, int *op_replication, sfb_record *rec,
                         pb_error *err)
{
    const pb_graph *g = w->g;
    const pb_cluster *cl = w->cl;
    const double B = 2810; /* bytes/µs, the reference's constant for every op */
    double t0 = pb_clock_monotonic();
    int n = 0, n_edges = 0;
    /* Candidates: replicated (M >= 2) and all-reduced, as the reference's r_i = 0. */
    for (int v = 0; v < g->n_nodes; v++) {
        int gr = w->device[v], M = s->group_start[gr + 1] - s->group_start[gr];
        w->idx[v] = M >= 2 && w->repl[v] == PB_REPL_ALLREDUCE ? n++ : -1;
        if (w->idx[v] < 0)
            continue;
        w->cand[w->idx[v]] = v;
        /* T: the mask (1 on the group's devices, 0 elsewhere) used as device indices. */
        double T = 0;
        for (int d = 0; d < cl->n_devices; d++) {
            int in = 0;
            for (int k = s->group_start[gr]; k < s->group_start[gr + 1]; k++)
                in |= s->group_devices[k] == d;
            double speed = pb_cluster_type(cl, cl->device_type[in])->speed_vs_ref;
            T += speed > 0 ? g->cost_us[v] / speed : g->cost_us[v];
        }
        w->cost[w->idx[v]] = (M - 1) * T / cl->n_devices + 1;
    }
    for (int e = 0; e < g->n_edges; e++) {
        int j = g->edge_src[e], i = g->edge_dst[e];
        double S = g->edge_bytes[e] / 4;
        if (S <= 0 || w->idx[i] < 0)
            continue; /* x_i = 0: b_ji = 0 at the optimum */
        int gr = w->device[j];
        double Mj = s->group_start[gr + 1] - s->group_start[gr], c = Mj * (Mj - 1) * S / B;
        if (w->idx[j] < 0)
            w->cost[w->idx[i]] += c; /* x_j = 0: b_ji = x_i */
        else if (sfb_edge(w, n_edges++, w->idx[j], w->idx[i], c))
            return pb_errorf(err, "out of memory");
    }
    for (int l = 0; l < g->n_nodes; l++) {
        if (sfb_role(g, l) != PB_ROLE_APPLY)
            continue;
        for (int k = g->pred_start[l]; k < g->pred_start[l + 1]; k++) {
            int gv = g->pred[k];
            if (sfb_role(g, gv) != PB_ROLE_GRADIENT || w->idx[gv] < 0)
                continue;
            int gr = w->device[gv];
            double M = s->group_start[gr + 1] - s->group_start[gr];
            w->cost[w->idx[gv]] -= 2 * (M - 1) / M * (g->edge_bytes[g->pred_edge[k]] / 4) / B;
        }
    }
    sfb_problem prob = {n, w->cost, n_edges, w->edge_src, w->edge_dst, w->edge_cost, 0, 1};
    *rec = (sfb_record){.apply = -1, .gradient = -1, .n_candidates = n};
    int rc = sfb_solve(&prob, w->opts_time_limit, w->x, &rec->objective, &rec->status,
                       &rec->n_cut_vars, &rec->n_rows, err);
    rec->solve_s = pb_clock_monotonic() - t0;
    for (int i = 0; rc == PB_OK && i < n; i++)
        if (w->x[i]) {
            op_replication[w->cand[i]] = PB_REPL_DUPLICATE;
            rec->n_duplicated++;
        }
    for (int i = 0; i < n; i++)
        w->idx[w->cand[i]] = -1;
    return rc;
}

int sfb_apply(const pb_graph *g, const pb_cluster *cl, const pb_strategy *s, const sfb_options *o,
              int *op_replication, int *n_duplicated,
              void (*record)(void *ctx, const sfb_record *r), void *record_ctx, pb_error *err)
{
    if (s->kind != PB_STRATEGY_REPLICATED)
        return pb_errorf(err, "SFB applies to replicated strategies (kind %d given)", s->kind);
    int n = g->n_nodes;
    size_t sz = (size_t)(n > 0 ? n : 1);
    sfb_work w = {.g = g, .cl = cl, .n = n};
    w.device = malloc(sz * sizeof(int));
    w.repl = malloc(sz * sizeof(int));
    w.replica_us = malloc(sz * sizeof(double));
    w.idx = malloc(sz * sizeof(int));
    w.cand = malloc(sz * sizeof(int));
    w.depth = malloc(sz * sizeof(int));
    w.cost = malloc(sz * sizeof(double));
    w.x = malloc(sz * sizeof(int));
    if (!w.device || !w.repl || !w.replica_us || !w.idx || !w.cand || !w.depth || !w.cost || !w.x) {
        sfb_work_free(&w);
        return pb_errorf(err, "out of memory");
    }
    if (sfb_prepare(&w, s, err)) {
        sfb_work_free(&w);
        return PB_ERR;
    }
    const int *own = PB_STRATEGY_HAS(s, op_replication) ? s->op_replication : NULL;
    for (int v = 0; v < n; v++)
        op_replication[v] = own ? own[v] : -1;
    int rc = PB_OK;
    if (o->mode == SFB_MODE_REFERENCE) {
        sfb_record rec;
        w.opts_time_limit = o->time_limit_s;
        rc = sfb_reference(&w, s, op_replication, &rec, err);
        if (rc == PB_OK && record)
            record(record_ctx, &rec);
    }
    for (int a = 0; a < n && rc == PB_OK && o->mode != SFB_MODE_REFERENCE; a++) {
        if (sfb_role(g, a) != PB_ROLE_APPLY ||
            (w.repl[a] != PB_REPL_ALLREDUCE && w.repl[a] != PB_REPL_PS))
            continue;
        int gr = w.device[a];
        if (s->group_start[gr + 1] - s->group_start[gr] < 2)
            continue;
        for (int i = g->pred_start[a]; i < g->pred_start[a + 1]; i++) {
            int e = g->pred_edge[i];
            if (sfb_role(g, g->pred[i]) != PB_ROLE_GRADIENT || !w.part[g->pred[i]] ||
                g->edge_bytes[e] <= 0 || w.device[g->pred[i]] != gr)
                continue;
            sfb_record rec;
            rc = sfb_gradient(&w, s, a, e, o, op_replication, &rec, err);
            if (rc == PB_OK && record)
                record(record_ctx, &rec);
            break;
        }
    }
    int dup = 0;
    for (int v = 0; v < n; v++)
        dup += op_replication[v] == PB_REPL_DUPLICATE;
    if (n_duplicated)
        *n_duplicated = dup;
    free((void *)w.part);
    sfb_work_free(&w);
    return rc;
}
