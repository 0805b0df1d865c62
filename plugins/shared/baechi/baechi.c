/* baechi.c — Baechi's memory-aware placers (m-TOPO, m-ETF, m-SCT) on the Placeto cost model. */
#include "baechi.h"

#include "lp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the cost model */

double baechi_node_us(const pb_graph *g, const pb_cluster *c, int v)
{
    double us = g->cost_us[v];
    return us > 0 ? us + c->delta1_us : us;
}

double baechi_edge_us(const pb_graph *g, const pb_cluster *c, int e, int a, int b)
{
    double bytes = g->edge_bytes[e];
    if (c->transfer_speed > 0)
        return bytes / c->transfer_speed;
    int n = c->n_devices;
    double bw = c->link_bandwidth ? c->link_bandwidth[a * n + b] : 0;
    double lat = c->link_latency ? c->link_latency[a * n + b] : 0;
    return (bw > 0 ? bytes / bw : 0) + lat;
}

/* How long a device's outgoing bus rests after a transfer (Placeto's delta2). */
static double baechi_bus_rest(const pb_cluster *c)
{
    return c->transfer_speed > 0 ? c->delta2_us : 0;
}

double baechi_node_bytes(const pb_graph *g, int v)
{
    return g->param_bytes[v] + g->out_bytes[v];
}

/* Memory of device d, 0 = unlimited. */
static double baechi_device_bytes(const pb_cluster *c, int d)
{
    return pb_cluster_type(c, c->device_type[d])->memory_bytes;
}

int baechi_topo_order(const pb_graph *g, int *order, int *rank, pb_error *err)
{
    int n = g->n_nodes, head = 0, tail = 0;
    int *pending = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (!pending)
        return pb_errorf(err, "out of memory");
    for (int v = 0; v < n; v++) {
        pending[v] = g->pred_start[v + 1] - g->pred_start[v];
        if (pending[v] == 0)
            order[tail++] = v;
    }
    while (head < tail) {
        int u = order[head++];
        for (int k = g->succ_start[u]; k < g->succ_start[u + 1]; k++)
            if (--pending[g->succ[k]] == 0)
                order[tail++] = g->succ[k];
    }
    free(pending);
    if (tail != n)
        return pb_errorf(err, "graph %s has a cycle", g->name);
    if (rank)
        for (int i = 0; i < n; i++)
            rank[order[i]] = i;
    return PB_OK;
}

/* ---------------------------------------------------------------- m-TOPO */

int baechi_topo(const pb_graph *g, const pb_cluster *c, int *device, pb_error *err)
{
    int n = g->n_nodes, nd = c->n_devices;
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (!order)
        return pb_errorf(err, "out of memory");
    if (baechi_topo_order(g, order, NULL, err)) {
        free(order);
        return PB_ERR;
    }
    double total = 0, largest = 0;
    for (int v = 0; v < n; v++) {
        total += baechi_node_bytes(g, v);
        largest = fmax(largest, baechi_node_bytes(g, v));
    }
    int by_memory = total > 0;
    if (!by_memory)
        for (int v = 0; v < n; v++) {
            total += baechi_node_us(g, c, v);
            largest = fmax(largest, baechi_node_us(g, c, v));
        }
    double limit = total / nd + largest, used = 0, used_bytes = 0;
    int d = 0;
    for (int i = 0; i < n; i++) {
        int v = order[i];
        double w = by_memory ? baechi_node_bytes(g, v) : baechi_node_us(g, c, v);
        double bytes = baechi_node_bytes(g, v);
        while (d < nd && (used + w > limit || (baechi_device_bytes(c, d) > 0 &&
                                               used_bytes + bytes > baechi_device_bytes(c, d)))) {
            d++;
            used = used_bytes = 0;
        }
        if (d == nd) {
            free(order);
            return pb_errorf(err, "m-topo: node %s (%.0f bytes) fits on no device left",
                             g->node_name[v], bytes);
        }
        device[v] = d;
        used += w;
        used_bytes += bytes;
    }
    free(order);
    return PB_OK;
}

/* ---------------------------------------------------------------- m-ETF and m-SCT */

typedef struct baechi_sched {
    const pb_graph *g;
    const pb_cluster *c;
    const int *favorite;
    int n, nd;
    int *device;  /* [n] -1 until placed */
    int *rank;    /* [n] topological rank, the tie-break */
    int *pending; /* [n] parents not placed yet */
    int *ready;   /* [n] placed-parents nodes not placed yet, in the order they became ready */
    int n_ready;
    int *last;        /* [nd] last node placed on the device, -1 = none */
    int *reserved;    /* [nd] favourite child the device waits for, -1 = none */
    double *end;      /* [n] */
    double *avail;    /* [nd] when the device is free */
    double *bus;      /* [nd] when the device's outgoing bus is free */
    double *bus_try;  /* [nd] scratch copy of bus for trial starts */
    double *used;     /* [nd] bytes placed on the device */
    double *est;      /* [nd] scratch: start times of one node on each device */
    double *wait_for; /* [nd] start time of the reserved child on the device */
    double *speed;    /* [nd] compute speed of the device (all 1 unless device_speed applies) */
    int by_finish;    /* choose by earliest finish (device types of different speeds) */
} baechi_sched;

static void baechi_sched_free(baechi_sched *s)
{
    free(s->device);
    free(s->rank);
    free(s->pending);
    free(s->ready);
    free(s->last);
    free(s->reserved);
    free(s->end);
    free(s->avail);
    free(s->bus);
    free(s->bus_try);
    free(s->used);
    free(s->est);
    free(s->wait_for);
    free(s->speed);
}

/* Compute speed of device d relative to the graph's costs (1 when the type does not say). */
static double baechi_device_speed(const pb_cluster *c, int d)
{
    double speed = pb_cluster_type(c, c->device_type[d])->speed_vs_ref;
    return speed > 0 ? speed : 1;
}

static int baechi_sched_init(baechi_sched *s, const pb_graph *g, const pb_cluster *c,
                             const int *favorite, int device_speed, pb_error *err)
{
    memset(s, 0, sizeof *s);
    s->g = g;
    s->c = c;
    s->favorite = favorite;
    s->n = g->n_nodes;
    s->nd = c->n_devices;
    size_t n = (size_t)(s->n > 0 ? s->n : 1), nd = (size_t)s->nd;
    s->device = malloc(n * sizeof(int));
    s->rank = malloc(n * sizeof(int));
    s->pending = malloc(n * sizeof(int));
    s->ready = malloc(n * sizeof(int));
    s->end = calloc(n, sizeof(double));
    s->last = malloc(nd * sizeof(int));
    s->reserved = malloc(nd * sizeof(int));
    s->avail = calloc(nd, sizeof(double));
    s->bus = calloc(nd, sizeof(double));
    s->bus_try = calloc(nd, sizeof(double));
    s->used = calloc(nd, sizeof(double));
    s->est = calloc(nd, sizeof(double));
    s->wait_for = calloc(nd, sizeof(double));
    s->speed = malloc(nd * sizeof(double));
    if (!s->device || !s->rank || !s->pending || !s->ready || !s->end || !s->last || !s->reserved ||
        !s->avail || !s->bus || !s->bus_try || !s->used || !s->est || !s->wait_for || !s->speed) {
        baechi_sched_free(s);
        return pb_errorf(err, "out of memory");
    }
    for (int d = 0; d < s->nd; d++) {
        s->speed[d] = device_speed ? baechi_device_speed(c, d) : 1;
        s->by_finish |= s->speed[d] != s->speed[0];
    }
    for (int d = 0; s->by_finish == 0 && d < s->nd; d++)
        s->speed[d] = 1;   /* identical devices: Baechi's own model, whatever their speed */
    int *order = s->ready; /* borrowed as scratch before the first node is ready */
    if (baechi_topo_order(g, order, s->rank, err)) {
        baechi_sched_free(s);
        return PB_ERR;
    }
    for (int d = 0; d < s->nd; d++)
        s->last[d] = -1;
    for (int v = 0; v < s->n; v++) {
        s->device[v] = -1;
        s->pending[v] = g->pred_start[v + 1] - g->pred_start[v];
    }
    for (int v = 0; v < s->n; v++)
        if (s->pending[v] == 0)
            s->ready[s->n_ready++] = v;
    return PB_OK;
}

/* When v's inputs are all on device d, the transfers booked on `bus` (updated). */
static double baechi_inputs_ready(const baechi_sched *s, int v, int d, double *bus)
{
    const pb_graph *g = s->g;
    double t = 0;
    for (int k = g->pred_start[v]; k < g->pred_start[v + 1]; k++) {
        int u = g->pred[k], a = s->device[u];
        double at = s->end[u];
        if (a != d) {
            double start = fmax(s->end[u], bus[a]);
            at = start + baechi_edge_us(g, s->c, g->pred_edge[k], a, d);
            bus[a] = at + baechi_bus_rest(s->c);
        }
        t = fmax(t, at);
    }
    return t;
}

/* Earliest start of ready node v on device d, INFINITY when v does not fit in d's memory. */
static double baechi_start(baechi_sched *s, int v, int d)
{
    double cap = baechi_device_bytes(s->c, d);
    if (cap > 0 && s->used[d] + baechi_node_bytes(s->g, v) > cap)
        return INFINITY;
    memcpy(s->bus_try, s->bus, (size_t)s->nd * sizeof(double));
    return fmax(s->avail[d], baechi_inputs_ready(s, v, d, s->bus_try));
}

/* Fills s->est with v's start on every device; returns the latest finite one (-1: none). */
static double baechi_starts(baechi_sched *s, int v)
{
    double latest = -1;
    for (int d = 0; d < s->nd; d++) {
        s->est[d] = baechi_start(s, v, d);
        if (isfinite(s->est[d]))
            latest = fmax(latest, s->est[d]);
    }
    return latest;
}

/* m-SCT: which favourite child each device waits for (s->reserved, s->wait_for). */
static void baechi_reserve(baechi_sched *s)
{
    for (int d = 0; d < s->nd; d++) {
        s->reserved[d] = -1;
        int u = s->last[d];
        int f = s->favorite && u >= 0 ? s->favorite[u] : -1;
        if (f < 0 || s->device[f] >= 0 || s->pending[f] > 0)
            continue;
        baechi_starts(s, f);
        double here = s->est[d], best = INFINITY;
        for (int k = 0; k < s->nd; k++)
            best = fmin(best, s->est[k]);
        if (isfinite(here) && here <= best) {
            s->reserved[d] = f;
            s->wait_for[d] = here;
        }
    }
}

/* Places v on d at its earliest start there, booking its input transfers. */
static void baechi_commit(baechi_sched *s, int i, int d)
{
    int v = s->ready[i];
    double start = fmax(s->avail[d], baechi_inputs_ready(s, v, d, s->bus));
    s->device[v] = d;
    s->end[v] = start + baechi_node_us(s->g, s->c, v) / s->speed[d];
    s->avail[d] = s->end[v];
    s->used[d] += baechi_node_bytes(s->g, v);
    s->last[d] = v;
    memmove(s->ready + i, s->ready + i + 1, (size_t)(s->n_ready - i - 1) * sizeof(int));
    s->n_ready--;
    const pb_graph *g = s->g;
    for (int k = g->succ_start[v]; k < g->succ_start[v + 1]; k++)
        if (--s->pending[g->succ[k]] == 0)
            s->ready[s->n_ready++] = g->succ[k];
}

/* Chooses the next (ready index, device) pair; -1 in *best_i when nothing fits anywhere. */
static void baechi_choose(baechi_sched *s, int *best_i, int *best_d)
{
    double best_key = INFINITY;
    int best_rank = 0;
    *best_i = *best_d = -1;
    baechi_reserve(s);
    for (int i = 0; i < s->n_ready; i++) {
        int v = s->ready[i];
        double urgent = baechi_starts(s, v);
        for (int d = 0; d < s->nd; d++) {
            double key = s->est[d];
            if (!isfinite(key))
                continue;
            if (s->by_finish)
                key += baechi_node_us(s->g, s->c, v) / s->speed[d];
            if (s->reserved[d] >= 0 && s->reserved[d] != v) {
                if (!(urgent < s->wait_for[d]))
                    continue;
                key = urgent;
            }
            int better = key < best_key ||
                         (key == best_key &&
                          (s->rank[v] < best_rank || (s->rank[v] == best_rank && d < *best_d)));
            if (*best_i < 0 || better) {
                best_key = key;
                best_rank = s->rank[v];
                *best_i = i;
                *best_d = d;
            }
        }
    }
}

int baechi_schedule(const pb_graph *g, const pb_cluster *c, const int *favorite, int device_speed,
                    int *device, double *makespan_us, pb_error *err)
{
    baechi_sched s;
    if (baechi_sched_init(&s, g, c, favorite, device_speed, err))
        return PB_ERR;
    for (int placed = 0; placed < s.n; placed++) {
        int i, d;
        baechi_choose(&s, &i, &d);
        if (i < 0) {
            int v = s.ready[0];
            pb_errorf(err, "%s: node %s (%.0f bytes) fits in the memory of no device",
                      favorite ? "m-sct" : "m-etf", g->node_name[v], baechi_node_bytes(g, v));
            baechi_sched_free(&s);
            return PB_ERR;
        }
        baechi_commit(&s, i, d);
    }
    double makespan = 0;
    for (int v = 0; v < s.n; v++)
        makespan = fmax(makespan, s.end[v]);
    memcpy(device, s.device, (size_t)s.n * sizeof(int));
    if (makespan_us)
        *makespan_us = makespan;
    baechi_sched_free(&s);
    return PB_OK;
}

/* ---------------------------------------------------------------- favourite children */

/* Rows of the favourite-child LP; columns are x_e (edges), then s_v (nodes), then w. */
static int baechi_lp_rows(lp *m, const pb_graph *g, const pb_cluster *c, int *cols, double *vals,
                          pb_error *err)
{
    int ne = g->n_edges, n = g->n_nodes, w = ne + n;
    for (int e = 0; e < ne; e++) {
        int u = g->edge_src[e], v = g->edge_dst[e];
        int rc[3] = {ne + u, ne + v, e};
        double rv[3] = {1, -1, baechi_edge_us(g, c, e, 0, 1)};
        if (lp_add_row(m, 3, rc, rv, -LP_INF, -baechi_node_us(g, c, u), err))
            return PB_ERR;
    }
    for (int v = 0; v < n; v++) {
        int rc[2] = {ne + v, w};
        double rv[2] = {1, -1};
        if (lp_add_row(m, 2, rc, rv, -LP_INF, -baechi_node_us(g, c, v), err))
            return PB_ERR;
        int k = 0;
        for (int j = g->succ_start[v]; j < g->succ_start[v + 1]; j++, k++) {
            cols[k] = g->succ_edge[j];
            vals[k] = 1;
        }
        if (k > 1 && lp_add_row(m, k, cols, vals, k - 1, LP_INF, err))
            return PB_ERR;
        k = 0;
        for (int j = g->pred_start[v]; j < g->pred_start[v + 1]; j++, k++) {
            cols[k] = g->pred_edge[j];
            vals[k] = 1;
        }
        if (k > 1 && lp_add_row(m, k, cols, vals, k - 1, LP_INF, err))
            return PB_ERR;
    }
    return PB_OK;
}

int baechi_favorite_children(const pb_graph *g, const pb_cluster *c, int *favorite,
                             double *lp_makespan_us, pb_error *err)
{
    int ne = g->n_edges, n = g->n_nodes, n_cols = ne + n + 1;
    for (int v = 0; v < n; v++)
        favorite[v] = -1;
    if (c->n_devices < 2) {
        if (lp_makespan_us)
            *lp_makespan_us = NAN;
        return PB_OK; /* one device: nothing crosses, every child is as good as another */
    }
    double *lb = calloc((size_t)n_cols, sizeof(double));
    double *ub = malloc((size_t)n_cols * sizeof(double));
    double *obj = calloc((size_t)n_cols, sizeof(double));
    double *x = malloc((size_t)n_cols * sizeof(double));
    int *cols = malloc((size_t)(ne > 0 ? ne : 1) * sizeof(int));
    double *vals = malloc((size_t)(ne > 0 ? ne : 1) * sizeof(double));
    int *parent = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    lp *m = NULL;
    int rc = PB_ERR;
    double w = 0;
    if (!lb || !ub || !obj || !x || !cols || !vals || !parent) {
        pb_errorf(err, "out of memory");
        goto done;
    }
    for (int j = 0; j < n_cols; j++)
        ub[j] = j < ne ? 1 : LP_INF;
    obj[n_cols - 1] = 1;
    if (!(m = lp_new(n_cols, lb, ub, obj))) {
        pb_errorf(err, "out of memory");
        goto done;
    }
    if (baechi_lp_rows(m, g, c, cols, vals, err) || lp_solve(m, x, &w, err))
        goto done;
    for (int v = 0; v < n; v++)
        parent[v] = -1;
    for (int e = 0; e < ne; e++) {
        if (x[e] > 0.5 + 1e-9)
            continue;
        int u = g->edge_src[e], v = g->edge_dst[e];
        if (parent[v] >= 0 && favorite[parent[v]] == v)
            favorite[parent[v]] = -1;
        if (favorite[u] >= 0)
            parent[favorite[u]] = -1;
        favorite[u] = v;
        parent[v] = u;
    }
    if (lp_makespan_us)
        *lp_makespan_us = w;
    rc = PB_OK;
done:
    lp_free(m);
    free(lb);
    free(ub);
    free(obj);
    free(x);
    free(cols);
    free(vals);
    free(parent);
    return rc;
}

/* ---------------------------------------------------------------- the plugins' common end */

int baechi_report(const pb_host *h, pb_strategy *best, double *initial_us, pb_error *err)
{
    pb_eval ev = {.struct_size = sizeof ev, .feasible = 1};
    if (h->simulate(h->ctx, best, &ev, err))
        return PB_ERR;
    *initial_us = -1; /* a constructive placer has no initial placement */
    pb_progress pr = {.struct_size = sizeof pr,
                      .episode = 0,
                      .episode_best_us = ev.step_time_us,
                      .best_so_far_us = ev.step_time_us,
                      .sim_calls = 1};
    h->progress(h->ctx, &pr);
    return PB_OK;
}

/* ---------------------------------------------------------------- the plugins' options */

const pb_option_def baechi_options[BAECHI_N_OPTIONS] = {
    {.name = "device_speed",
     .type = PB_OPT_BOOL,
     .default_value = "true",
     .min = 1,
     .max = 0,
     .help = "on device types of different speeds (speed_vs_ref), plan with each device's own "
             "compute time and choose the earliest finish, not the earliest start (Baechi "
             "assumes identical devices; identical devices are planned as Baechi does)",
     .offset = offsetof(baechi_opts, device_speed)}};

int baechi_create(const pb_create_args *a, void **instance, pb_error *err)
{
    baechi_instance *b = malloc(sizeof *b);
    if (!b)
        return pb_errorf(err, "out of memory");
    const baechi_opts *o = a->options;
    b->host = a->host;
    b->device_speed = o ? o->device_speed : 1;
    *instance = b;
    return PB_OK;
}

void baechi_destroy(void *instance)
{
    free(instance);
}
