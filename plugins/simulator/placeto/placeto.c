/* placeto.c — the Placeto event simulator (specs/placeto.md §1), bit-for-bit with tf_sim.py. */
#include "placebench.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * How the reference's data structures map onto this file.
 *
 * Global event heap.  The reference orders (time, op, arg) tuples.  An event here is a time and
 * a 64-bit key: the kind in the top 2 bits (remove_dependency 0 < run_bus 1 < run_dev 2, the
 * string order of the reference's op names), then 31 bits of rank of `arg` (the rank of the
 * resource name among the resource names, or of the (parent name, child name) pair among all
 * edges, both by strcmp and computed once in prepare), then 31 bits of payload (the resource, or
 * the child op).  Pending events never share a rank (one wake-up per resource, one release per
 * edge), so the key order is the reference's tuple order and no two pending events tie.
 *
 * Ready queues.  The reference keeps a min-heap of ((ready_time, seq), item) per resource.  A
 * device receives items only at the current event time and a bus only at the end time of an op
 * of its own device (those end times never decrease), so both heaps receive items in
 * (ready_time, seq) order and behave as FIFOs.  Each op enters its device's queue once and each
 * (producer, port) its bus's queue at most once per evaluation, so the queues are slices of two
 * arrays, partitioned by the placement at the start of each evaluation.
 *
 * A prepared handle holds every buffer an evaluation needs: evaluate() allocates nothing, and one
 * handle serves one evaluation at a time.
 *
 * Resuming.  Progressive placers evaluate long chains of placements that differ in one node.  Up
 * to the first event whose outcome depends on the device of a changed op, a run is the same as
 * the previous run (placeto_divergence says where that can first happen: when a parent starts or
 * sends, or when the op is queued).  A run therefore saves its whole engine state at
 * PLACETO_SNAPS points of its run order (after the k-th op started), and the next evaluation
 * resumes from the latest point before that event instead of from the beginning; from there it
 * repeats the reference's events exactly.  What ops write once per run (start, end, run order,
 * transfer send times, port marks) stays valid for the ops that started before the resumed
 * point and is not saved; the memory sweep always runs over the whole run.
 */

enum { PLACETO_REMOVE_DEPENDENCY = 0, PLACETO_RUN_BUS = 1, PLACETO_RUN_DEV = 2 };
enum { PLACETO_SNAPS = 16 }; /* saved engine states per run, see "Resuming" */

#define PLACETO_FIELD_BITS 31
#define PLACETO_FIELD_MAX ((1L << PLACETO_FIELD_BITS) - 1)
#define PLACETO_PAYLOAD_MASK ((UINT64_C(1) << PLACETO_FIELD_BITS) - 1)

/* Times are finite and >= +0, so their IEEE bit patterns order like the numbers. */
typedef struct placeto_event {
    uint64_t t;   /* bits of the time, a double */
    uint64_t key; /* kind | rank | payload, see above */
} placeto_event;

/* Where a saved engine state is (the arrays are in placeto_prepared, slot by slot). */
typedef struct placeto_snap {
    int n_run;  /* ops started when it was saved: the slot's threshold */
    int heap_n; /* pending events */
    long long n_idle, n_bus_pops;
    double run_time;
} placeto_snap;

/* One entry of the post-run memory sweep (§1.4): amount > 0 allocates, < 0 frees. */
typedef struct placeto_memev {
    double t;
    double amount;
    int dev;
} placeto_memev;

typedef struct placeto_prepared {
    int n_ops, n_edges, n_ports, n_devices, n_sources, n_mem_ops;
    double delta1, delta2, init_offset;
    int exact_sums; /* output sizes are integers with a total below 2^53 */

    /* Graph tables, copied from the pb_graph in prepare. */
    char *names;         /* op names, NUL-separated, for error messages */
    int *name_off;       /* [n_ops] */
    double *cost;        /* [n_ops] µs */
    double *cost_trunc;  /* [n_ops] int(cost), for the memory sweep */
    double *mem;         /* [n_ops] sum of the output port sizes */
    int *n_parents;      /* [n_ops] distinct parents */
    int *parent_start;   /* [n_ops+1] parents (pb_graph pred lists) */
    int *parent;         /* [n_edges] */
    int *sources;        /* ops without parents, in node order */
    int *child_start;    /* [n_ops+1] children in node order (the reference's children dict) */
    int *child;          /* [n_edges] */
    int *child_port;     /* [n_edges] global port index read by the child */
    uint64_t *child_key; /* [n_edges] remove_dependency key of the edge */
    int *port_start;     /* [n_ops+1] */
    int *port_owner;     /* [n_ports] op producing the port */
    double *port_delay;  /* [n_ports] bytes / transfer speed */
    int *mem_ops;        /* ops with a non-zero output size, in node order */
    uint64_t *dev_key;   /* [n_devices] run_dev key of each device */
    uint64_t *bus_key;   /* [n_devices] run_bus key of each device's bus */
    double *mem_limit;   /* [n_devices] bytes, 0 = unlimited */

    /* Scratch of one evaluation. */
    const int *dev;                       /* the placement being evaluated */
    int *remaining;                       /* [n_ops] parents not yet released */
    int *dq, *dq_head, *dq_tail, *dq_off; /* device queues: slices of dq[n_ops] from dq_off */
    int *bq, *bq_head, *bq_tail, *bq_off; /* bus queues of ports: slices of bq[n_ports] */
    unsigned char *dev_state, *bus_state; /* [n_devices] PLACETO_IDLE, _RESTING or _WAKING */
    double *dev_rest, *bus_rest;          /* [n_devices] wake-up time while resting */
    placeto_event *heap;                  /* [n_edges + 2 n_devices] the event queue, sorted */
    int heap_n;
    long long n_idle; /* idle wake-ups of the reference folded in so far ("Event count" below) */
    long long n_bus_pops; /* bus wake-ups popped from the heap so far */
    uint64_t *port_mark;  /* [n_ports] == run_stamp of its op: queued on the bus in this run */
    uint64_t *run_stamp;  /* [n_ops] a number unique to the op's latest start (run_dev call) */
    uint64_t stamp;       /* the last number handed out */
    double *port_send;    /* [n_ports] when the bus started sending the port (valid when marked) */
    double *start, *end;  /* [n_ops] */
    int *run_order;       /* [n_ops] ops in the order they started */
    int n_run;
    int *dev_run; /* [n_devices] 1 + position in run_order of the device's latest op, 0 if none */
    int *run_pos; /* [n_ops] position of the op in run_order */

    /* Resuming (see above): the placement of the previous run and its saved states. */
    int have_prev;
    int *prev_dev;              /* [n_ops] */
    int n_snaps;                /* slots valid for prev_dev, in increasing n_run */
    int snap_next;              /* slot the running evaluation saves next (n_snaps while it runs) */
    int snap_at[PLACETO_SNAPS]; /* threshold n_run of each slot, increasing; 0 = unused */
    placeto_snap snap[PLACETO_SNAPS];
    placeto_event *snap_heap;  /* [PLACETO_SNAPS * (n_edges + 2 n_devices)] */
    int *snap_remaining;       /* [PLACETO_SNAPS * n_ops] */
    int *snap_queue;           /* [PLACETO_SNAPS * (n_ops + n_ports)] live queue entries */
    int *snap_int;             /* [PLACETO_SNAPS * 5 n_devices] queue lengths, dev_run */
    unsigned char *snap_state; /* [PLACETO_SNAPS * 2 n_devices] */
    double *snap_dbl;          /* [PLACETO_SNAPS * 4 n_devices] rests, busy, link_busy */
    placeto_memev *alloc_ev, *free_ev, *free_tmp;       /* [n_ops] memory sweep, any sizes */
    double *alloc_t;                                    /* [n_ops] memory sweep, integer sizes */
    int *alloc_op, *alloc_index, *bucket, *bucket_next; /* [n_ops] */
    double *cur, *peak, *busy, *link_busy;              /* [n_devices] */
} placeto_prepared;

/* ---------------------------------------------------------------- the event queue */

/* The pending events, sorted latest first in heap[0..heap_n): popping is taking the last entry.
 * Few events are pending at a time (about four on average on the family graphs at 8 devices,
 * against a binary heap's two to three levels of unpredictable compares per push and per pop),
 * so an insertion walk is cheaper than a heap; see placeto_push for long queues.  Since the
 * order is total (no two pending events tie), any queue hands events out in the same order. */

/* Written without branches: which of two events comes first is unpredictable. */
static inline int placeto_before(uint64_t ta, uint64_t ka, uint64_t tb, uint64_t kb)
{
#if defined(__SIZEOF_INT128__)
    return ((unsigned __int128)ta << 64 | ka) < ((unsigned __int128)tb << 64 | kb);
#else
    return (ta < tb) | ((ta == tb) & (ka < kb));
#endif
}

static inline uint64_t placeto_time_bits(double t)
{
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    return bits;
}

static inline double placeto_time(uint64_t bits)
{
    double t;
    memcpy(&t, &bits, sizeof t);
    return t;
}

/* Index in the sorted queue h[0..n) (latest first) where event (t, key) belongs: after every
 * later event.  Bisection without branches: the outcome of a comparison is unpredictable. */
static int placeto_slot(const placeto_event *h, int n, uint64_t t, uint64_t key)
{
    const placeto_event *base = h;
    int len = n;
    while (len > 0) {
        int half = len >> 1;
        int later = !placeto_before(base[half].t, base[half].key, t, key);
        base += later ? half + 1 : 0;
        len = later ? len - half - 1 : half;
    }
    return (int)(base - h);
}

/* Inserts by walking from the earliest end and moving earlier events up: the pending events are
 * few (about four on the family graphs) and new ones mostly come after them.  A walk that gets
 * long (wide fan-outs releasing many children at one time) bisects the rest and moves it as one
 * block. */
static inline void placeto_push(placeto_prepared *p, double time, uint64_t key)
{
    enum { WALK = 8 };
    uint64_t t = placeto_time_bits(time);
    placeto_event *h = p->heap;
    int i = p->heap_n++;
    for (int k = 0; k < WALK; k++, i--) {
        if (i == 0 || !placeto_before(h[i - 1].t, h[i - 1].key, t, key)) {
            h[i] = (placeto_event){t, key};
            return;
        }
        h[i] = h[i - 1];
    }
    int j = placeto_slot(h, i, t, key);
    memmove(h + j + 1, h + j, (size_t)(i - j) * sizeof *h);
    h[j] = (placeto_event){t, key};
}

/* Removes the first event: the last entry of the sorted queue. */
static inline placeto_event placeto_pop(placeto_prepared *p)
{
    return p->heap[--p->heap_n];
}

/* ---------------------------------------------------------------- the event engine (§1.3) */

/*
 * Idle wake-ups stay out of the heap.  In the reference, a resource that finishes a job always
 * schedules a wake-up; when it pops with an empty queue the resource goes idle, and the only
 * trace it leaves is its time in run_time.  Here a resource whose queue is empty when it finishes
 * only notes the time (PLACETO_RESTING) and pushes that same wake-up event when work arrives
 * before it, or goes straight to PLACETO_IDLE when work arrives after it.  The heap then holds
 * exactly the events of the reference that do something, in the same order; the noted times of
 * resources still resting at the end enter run_time.
 *
 * Event count.  pb_eval.n_events is the number of events the reference pops from its heap: the
 * events popped here plus the idle wake-ups folded in, one for every rest that ends without its
 * wake-up being pushed (work arrived after it, or it is still resting at the end).  Both the
 * initial wake-ups of source devices and the extra bus wake-ups of run_bus's push-back branch
 * are popped events and count; the memory sweep is not an event.  Graphs are acyclic, so every
 * op runs: the heap pops one run_dev per op, one remove_dependency per edge and the counted bus
 * wake-ups, and the main loop needs no counter of its own.
 */
enum { PLACETO_IDLE = 0, PLACETO_RESTING = 1, PLACETO_WAKING = 2 };

/*
 * Whether the reference's wake-up (t, run_dev, d) of a device resting until exactly the current
 * time t has already popped (idle) when a release at t makes d ready.  It was queued when d last
 * ran, and a release sorts before it, so it has popped only if some event sorting after it popped
 * at time t since then.  Releases and bus wake-ups sort before every run_dev, and the first event
 * that does something after an idle wake-up of another device was already queued, so sorts after
 * that one: it suffices to look for a device sorting after d whose latest op started at t after
 * d's latest op.  Rare (zero-cost ops and exact ties), so a scan over the devices.
 */
static int placeto_rest_popped(const placeto_prepared *p, int d, double t)
{
    for (int d2 = 0; d2 < p->n_devices; d2++)
        if (p->dev_key[d2] > p->dev_key[d] && p->dev_run[d2] > p->dev_run[d] &&
            p->start[p->run_order[p->dev_run[d2] - 1]] == t)
            return 1;
    return 0;
}

/* add_to_dev_queue for a device, at the time t of a remove_dependency (or the start): a
 * wake-up at the resting time t_rest > t is still pending in the reference, since releases
 * sort before run_dev at equal times; one before t has already popped, one at t may have
 * (placeto_rest_popped).  Either way the device wakes at max(t_rest, t). */
static inline void placeto_ready(placeto_prepared *p, double t, int op)
{
    int d = p->dev[op];
    p->dq[p->dq_tail[d]++] = op;
    if (p->dev_state[d] == PLACETO_WAKING)
        return;
    int resting = p->dev_state[d] == PLACETO_RESTING;
    double rest = p->dev_rest[d];
    p->n_idle += resting && (rest < t || (rest == t && placeto_rest_popped(p, d, t)));
    double wake = resting && rest >= t ? rest : t;
    p->dev_state[d] = PLACETO_WAKING;
    placeto_push(p, wake, p->dev_key[d]);
}

/* add_to_dev_queue for bus b during run_dev at time t, item ready at `ready`: a bus wake-up at
 * t_rest <= t has already popped (run_bus sorts before run_dev at equal times). */
static inline void placeto_ready_bus(placeto_prepared *p, double t, int b, double ready)
{
    if (p->bus_state[b] == PLACETO_WAKING)
        return;
    int resting = p->bus_state[b] == PLACETO_RESTING;
    p->n_idle += resting && p->bus_rest[b] <= t;
    double wake = resting && p->bus_rest[b] > t ? p->bus_rest[b] : ready;
    p->bus_state[b] = PLACETO_WAKING;
    placeto_push(p, wake, p->bus_key[b]);
}

/* run_dev: start the next queued op of device d; release same-device children at its end and
 * queue one transfer per output port that has children elsewhere, in order of first appearance
 * of the port among those children. */
static void placeto_run_dev(placeto_prepared *p, double t, int d)
{
    int n = p->dq[p->dq_head[d]++];
    double cost = p->cost[n];
    double end = t + cost;
    uint64_t stamp = ++p->stamp;
    p->start[n] = t;
    p->end[n] = end;
    p->run_stamp[n] = stamp;
    p->run_pos[n] = p->n_run;
    p->run_order[p->n_run++] = n;
    p->dev_run[d] = p->n_run;
    p->busy[d] += cost;
    double wake = cost != 0 ? end + p->delta1 : end;
    if (p->dq_head[d] < p->dq_tail[d]) {
        placeto_push(p, wake, p->dev_key[d]);
    } else {
        p->dev_state[d] = PLACETO_RESTING;
        p->dev_rest[d] = wake;
    }
    const int *dev = p->dev;
    for (int i = p->child_start[n]; i < p->child_start[n + 1]; i++) {
        if (dev[p->child[i]] == d) {
            placeto_push(p, end, p->child_key[i]);
            continue;
        }
        int port = p->child_port[i];
        if (p->port_mark[port] == stamp)
            continue;
        p->port_mark[port] = stamp;
        p->bq[p->bq_tail[d]++] = port;
        placeto_ready_bus(p, t, d, end);
    }
}

/* run_bus: send the head transfer of bus b if its producer has finished (else wake again when it
 * does); the data reaches every remote child of the port at t + delay, the bus is free again
 * delta2 later.  The send time is noted unconditionally: a store is cheaper than asking whether
 * the caller wants transfer times. */
static void placeto_run_bus(placeto_prepared *p, double t, int b)
{
    p->n_bus_pops++;
    int port = p->bq[p->bq_head[b]];
    int n = p->port_owner[port];
    if (p->end[n] > t) {
        placeto_push(p, p->end[n], p->bus_key[b]);
        return;
    }
    p->bq_head[b]++;
    p->port_send[port] = t;
    double delay = p->port_delay[port];
    double arrive = t + delay;
    const int *dev = p->dev;
    for (int i = p->child_start[n]; i < p->child_start[n + 1]; i++)
        if (p->child_port[i] == port && dev[p->child[i]] != b)
            placeto_push(p, arrive, p->child_key[i]);
    double wake = arrive + p->delta2;
    if (p->bq_head[b] < p->bq_tail[b]) {
        placeto_push(p, wake, p->bus_key[b]);
    } else {
        p->bus_state[b] = PLACETO_RESTING;
        p->bus_rest[b] = wake;
    }
    p->link_busy[b] += delay + p->delta2;
}

/* Saves the engine state in slot p->snap_next (see "Resuming"); run_time is the main loop's. */
static void placeto_save(placeto_prepared *p, double run_time)
{
    int i = p->snap_next++, n = p->n_ops, nd = p->n_devices;
    placeto_snap *s = &p->snap[i];
    size_t heap_cap = (size_t)p->n_edges + 2 * (size_t)nd;
    s->n_run = p->n_run;
    s->heap_n = p->heap_n;
    s->n_idle = p->n_idle;
    s->n_bus_pops = p->n_bus_pops;
    s->run_time = run_time;
    memcpy(p->snap_heap + i * heap_cap, p->heap, (size_t)p->heap_n * sizeof *p->heap);
    memcpy(p->snap_remaining + (size_t)i * n, p->remaining, (size_t)n * sizeof(int));
    int *q = p->snap_queue + (size_t)i * ((size_t)n + (size_t)p->n_ports);
    int *len = p->snap_int + (size_t)i * 5 * nd, k = 0;
    for (int d = 0; d < nd; d++) {
        len[d] = p->dq_head[d] - p->dq_off[d];
        len[nd + d] = p->dq_tail[d] - p->dq_off[d];
        for (int j = p->dq_head[d]; j < p->dq_tail[d]; j++)
            q[k++] = p->dq[j];
    }
    for (int d = 0; d < nd; d++) {
        len[2 * nd + d] = p->bq_head[d] - p->bq_off[d];
        len[3 * nd + d] = p->bq_tail[d] - p->bq_off[d];
        for (int j = p->bq_head[d]; j < p->bq_tail[d]; j++)
            q[k++] = p->bq[j];
        len[4 * nd + d] = p->dev_run[d];
    }
    unsigned char *st = p->snap_state + (size_t)i * 2 * nd;
    memcpy(st, p->dev_state, (size_t)nd);
    memcpy(st + nd, p->bus_state, (size_t)nd);
    double *x = p->snap_dbl + (size_t)i * 4 * nd;
    memcpy(x, p->dev_rest, (size_t)nd * sizeof(double));
    memcpy(x + nd, p->bus_rest, (size_t)nd * sizeof(double));
    memcpy(x + 2 * nd, p->busy, (size_t)nd * sizeof(double));
    memcpy(x + 3 * nd, p->link_busy, (size_t)nd * sizeof(double));
}

/* Puts back the state of slot i into queues partitioned for the current placement (queued ops
 * and ports keep their places relative to their queue's slice).  Returns its run_time. */
static double placeto_restore(placeto_prepared *p, int i)
{
    int n = p->n_ops, nd = p->n_devices;
    const placeto_snap *s = &p->snap[i];
    size_t heap_cap = (size_t)p->n_edges + 2 * (size_t)nd;
    p->n_run = s->n_run;
    p->heap_n = s->heap_n;
    p->n_idle = s->n_idle;
    p->n_bus_pops = s->n_bus_pops;
    memcpy(p->heap, p->snap_heap + i * heap_cap, (size_t)s->heap_n * sizeof *p->heap);
    memcpy(p->remaining, p->snap_remaining + (size_t)i * n, (size_t)n * sizeof(int));
    const int *q = p->snap_queue + (size_t)i * ((size_t)n + (size_t)p->n_ports);
    const int *len = p->snap_int + (size_t)i * 5 * nd;
    int k = 0;
    for (int d = 0; d < nd; d++) {
        p->dq_head[d] = p->dq_off[d] + len[d];
        p->dq_tail[d] = p->dq_off[d] + len[nd + d];
        for (int j = p->dq_head[d]; j < p->dq_tail[d]; j++)
            p->dq[j] = q[k++];
    }
    for (int d = 0; d < nd; d++) {
        p->bq_head[d] = p->bq_off[d] + len[2 * nd + d];
        p->bq_tail[d] = p->bq_off[d] + len[3 * nd + d];
        for (int j = p->bq_head[d]; j < p->bq_tail[d]; j++)
            p->bq[j] = q[k++];
        p->dev_run[d] = len[4 * nd + d];
    }
    const unsigned char *st = p->snap_state + (size_t)i * 2 * nd;
    memcpy(p->dev_state, st, (size_t)nd);
    memcpy(p->bus_state, st + nd, (size_t)nd);
    const double *x = p->snap_dbl + (size_t)i * 4 * nd;
    memcpy(p->dev_rest, x, (size_t)nd * sizeof(double));
    memcpy(p->bus_rest, x + nd, (size_t)nd * sizeof(double));
    memcpy(p->busy, x + 2 * nd, (size_t)nd * sizeof(double));
    memcpy(p->link_busy, x + 3 * nd, (size_t)nd * sizeof(double));
    p->snap_next = i + 1;
    return s->run_time;
}

/* The main loop from the state set up by placeto_begin, whose run_time so far is run_time;
 * returns the reference's run_time, the largest time of any event it pops, and in *n_events the
 * number of events it pops (see "Event count" above).  Saves the engine state at the slots'
 * thresholds. */
static double placeto_run(placeto_prepared *p, double run_time, long long *n_events)
{
    int save_at = p->snap_next < PLACETO_SNAPS ? p->snap_at[p->snap_next] : 0;
    while (p->heap_n > 0) {
        placeto_event e = placeto_pop(p);
        double t = placeto_time(e.t);
        if (t > run_time)
            run_time = t;
        int arg = (int)(e.key & PLACETO_PAYLOAD_MASK);
        switch ((int)(e.key >> 62)) {
        case PLACETO_REMOVE_DEPENDENCY:
            if (--p->remaining[arg] == 0)
                placeto_ready(p, t, arg);
            break;
        case PLACETO_RUN_BUS:
            placeto_run_bus(p, t, arg);
            break;
        default:
            placeto_run_dev(p, t, arg);
            if (p->n_run == save_at) {
                placeto_save(p, run_time);
                save_at = p->snap_next < PLACETO_SNAPS ? p->snap_at[p->snap_next] : 0;
            }
            break;
        }
    }
    p->n_snaps = p->snap_next;
    long long idle = p->n_idle;
    for (int d = 0; d < p->n_devices; d++) {
        if (p->dev_state[d] == PLACETO_RESTING) {
            idle++;
            run_time = p->dev_rest[d] > run_time ? p->dev_rest[d] : run_time;
        }
        if (p->bus_state[d] == PLACETO_RESTING) {
            idle++;
            run_time = p->bus_rest[d] > run_time ? p->bus_rest[d] : run_time;
        }
    }
    *n_events = (long long)p->n_run + p->n_edges + p->n_bus_pops + idle;
    return run_time;
}

/* ---------------------------------------------------------------- the memory sweep (§1.4) */

/* The reference sorts (time, '+'/'-', signed amount, device) tuples and sweeps them.  The device
 * never matters (each device has its own running sum) and equal tuples have equal effects, so
 * events of one sign are ordered here by (time, signed amount); at equal times allocations come
 * before frees.  Without branches: the outcome is unpredictable. */
static inline int placeto_memev_before(const placeto_memev *a, const placeto_memev *b)
{
    return (a->t < b->t) | ((a->t == b->t) & (a->amount < b->amount));
}

/* Bottom-up merge sort of a[0..n) using tmp[n]; returns the array that holds the result. */
static placeto_memev *placeto_sort(placeto_memev *a, placeto_memev *tmp, int n)
{
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n;
            int hi = lo + 2 * width < n ? lo + 2 * width : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                int take = placeto_memev_before(&a[j], &a[i]);
                tmp[k++] = *(take ? &a[j] : &a[i]);
                j += take;
                i += 1 - take;
            }
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        placeto_memev *swap = a;
        a = tmp;
        tmp = swap;
    }
    return a;
}

/* When the outputs of op n are freed: after its last consumer, max(start, int(start_c) +
 * int(cost_c) - 1) over its children c. */
static inline double placeto_free_time(const placeto_prepared *p, int n)
{
    double t_free = p->start[n];
    for (int j = p->child_start[n]; j < p->child_start[n + 1]; j++) {
        int c = p->child[j];
        double last_use = trunc(p->start[c]) + p->cost_trunc[c] - 1.0;
        if (last_use > t_free)
            t_free = last_use;
    }
    return t_free;
}

/* Allocation events in run order, where start times never decrease; equal start times are then
 * put in order of amount.  Returns the count. */
static int placeto_allocations(placeto_prepared *p)
{
    placeto_memev *a = p->alloc_ev;
    int k = 0;
    for (int r = 0; r < p->n_run; r++) {
        int n = p->run_order[r];
        if (p->mem[n] == 0)
            continue;
        placeto_memev x = {p->start[n], p->mem[n], p->dev[n]};
        int j = k++;
        for (; j > 0 && placeto_memev_before(&x, &a[j - 1]); j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
    return k;
}

/* Sorted free events; frees at or after the last allocation cannot lower any peak and are left
 * out. */
static const placeto_memev *placeto_frees(placeto_prepared *p, double last_alloc, int *count)
{
    placeto_memev *f = p->free_ev;
    int k = 0;
    for (int i = 0; i < p->n_mem_ops; i++) {
        int n = p->mem_ops[i];
        double t_free = placeto_free_time(p, n);
        f[k] = (placeto_memev){t_free, -p->mem[n], p->dev[n]};
        k += t_free < last_alloc;
    }
    *count = k;
    return placeto_sort(f, p->free_tmp, k);
}

/* The sweep in the reference's order, for any sizes. */
static void placeto_memory_sorted(placeto_prepared *p)
{
    int na = placeto_allocations(p), nf = 0;
    if (na == 0)
        return;
    const placeto_memev *a = p->alloc_ev, *f = placeto_frees(p, a[na - 1].t, &nf);
    double *cur = p->cur, *peak = p->peak;
    for (int i = 0, j = 0; i < na; i++) {
        for (; j < nf && f[j].t < a[i].t; j++)
            cur[f[j].dev] += f[j].amount;
        int d = a[i].dev;
        cur[d] += a[i].amount;
        if (cur[d] > peak[d])
            peak[d] = cur[d];
    }
}

/* Index of the first of the sorted times t[0..n) after x, where t[from] <= x.  Most outputs
 * are freed a few allocations after their own (their readers run next), so the search gallops
 * from `from` (steps 1, 2, 4, ...) and bisects the last step without branches.  Holds
 * base[0] <= x, and every time from base + len on is after x. */
static inline int placeto_first_after(const double *t, int n, int from, double x)
{
    int lo = from, step = 1;
    while (lo + step < n && t[lo + step] <= x) {
        lo += step;
        step *= 2;
    }
    const double *base = t + lo;
    int len = (lo + step < n ? lo + step : n) - lo;
    while (len > 1) {
        int half = len >> 1;
        base = base[half] <= x ? base + half : base;
        len -= half;
    }
    return (int)(base - t) + 1;
}

/*
 * The sweep for integer sizes whose total fits a double's 53-bit mantissa (the reference's byte
 * counts): every running sum is then exact in any order, so a free only has to be applied before
 * the first allocation later than it, and allocations at equal times may come in any order (the
 * device's maximum over them is reached after the last).  Frees are bucketed by that allocation
 * instead of sorted.
 */
static void placeto_memory_exact(placeto_prepared *p)
{
    int na = 0;
    for (int r = 0; r < p->n_run; r++) {
        int n = p->run_order[r];
        if (p->mem[n] != 0) {
            p->alloc_t[na] = p->start[n];
            p->alloc_index[n] = na;
            p->alloc_op[na++] = n;
        }
    }
    for (int i = 0; i < na; i++)
        p->bucket[i] = -1;
    for (int i = 0; i < p->n_mem_ops; i++) {
        int n = p->mem_ops[i];
        int pos = placeto_first_after(p->alloc_t, na, p->alloc_index[n], placeto_free_time(p, n));
        if (pos < na) {
            p->bucket_next[n] = p->bucket[pos];
            p->bucket[pos] = n;
        }
    }
    const int *dev = p->dev;
    double *cur = p->cur, *peak = p->peak;
    for (int i = 0; i < na; i++) {
        for (int n = p->bucket[i]; n >= 0; n = p->bucket_next[n])
            cur[dev[n]] -= p->mem[n];
        int n = p->alloc_op[i], d = dev[n];
        cur[d] += p->mem[n];
        if (cur[d] > peak[d])
            peak[d] = cur[d];
    }
}

/* §1.4: each op's outputs are allocated on its own device at its start and freed after its last
 * consumer; a device's peak is the maximum of its running sum. */
static void placeto_memory(placeto_prepared *p)
{
    for (int d = 0; d < p->n_devices; d++)
        p->cur[d] = p->peak[d] = 0;
    if (p->exact_sums)
        placeto_memory_exact(p);
    else
        placeto_memory_sorted(p);
}

/* ---------------------------------------------------------------- evaluate */

/* Checks the strategy and partitions the queue arrays by the placement (dq_off, bq_off). */
static int placeto_partition(placeto_prepared *p, const pb_strategy *s, pb_error *err)
{
    if (s->kind != PB_STRATEGY_PLACEMENT)
        return pb_errorf(err, "placeto simulator: strategy kind %d is not a plain placement",
                         s->kind);
    if (s->n_nodes != p->n_ops)
        return pb_errorf(err, "placeto simulator: strategy has %d entries, graph has %d ops",
                         s->n_nodes, p->n_ops);
    int nd = p->n_devices;
    for (int d = 0; d < nd; d++)
        p->dq_off[d] = p->bq_off[d] = 0;
    const int *dev = s->device;
    for (int v = 0; v < p->n_ops; v++) {
        int d = dev[v];
        if (d < 0 || d >= nd)
            return pb_errorf(err, "op '%s' is placed on device %d (the cluster has %d devices)",
                             p->names + p->name_off[v], d, nd);
        p->dq_off[d]++;
        p->bq_off[d] += p->port_start[v + 1] - p->port_start[v];
    }
    int dq_off = 0, bq_off = 0;
    for (int d = 0; d < nd; d++) {
        int nq = p->dq_off[d], nb = p->bq_off[d];
        p->dq_off[d] = dq_off;
        p->bq_off[d] = bq_off;
        dq_off += nq;
        bq_off += nb;
    }
    return PB_OK;
}

/* The state before the first event: empty queues, idle resources, the sources made ready. */
static double placeto_fresh(placeto_prepared *p)
{
    for (int d = 0; d < p->n_devices; d++) {
        p->dq_head[d] = p->dq_tail[d] = p->dq_off[d];
        p->bq_head[d] = p->bq_tail[d] = p->bq_off[d];
        p->dev_state[d] = p->bus_state[d] = PLACETO_IDLE;
        p->busy[d] = p->link_busy[d] = 0;
        p->dev_run[d] = 0;
    }
    memcpy(p->remaining, p->n_parents, (size_t)p->n_ops * sizeof(int));
    p->heap_n = 0;
    p->n_idle = 0;
    p->n_bus_pops = 0;
    p->n_run = 0;
    p->snap_next = 0;
    for (int i = 0; i < p->n_sources; i++)
        placeto_ready(p, p->init_offset, p->sources[i]);
    return 0;
}

/*
 * How many ops of the previous run may have started before an event that reads the device of an
 * op placed differently now (n_ops when none does).  For a changed op o moved from device a to
 * device b: a parent n compares o's device with its own when it starts (run_dev) and when its
 * bus sends (run_bus), which comes out the same unless n is on a or b (or n moved too); o itself
 * is queued on its device once its last parent has started (its releases come later).  A changed
 * source is queued before the first event: 0.
 */
static int placeto_divergence(const placeto_prepared *p, const int *dev)
{
    int first = p->n_ops;
    for (int v = 0; v < p->n_ops; v++) {
        int a = p->prev_dev[v], b = dev[v];
        if (a == b)
            continue;
        if (p->parent_start[v] == p->parent_start[v + 1])
            return 0;
        int last = 0;
        for (int e = p->parent_start[v]; e < p->parent_start[v + 1]; e++) {
            int n = p->parent[e], pos = p->run_pos[n], dn = p->prev_dev[n];
            if ((dn == a || dn == b || dn != dev[n]) && pos < first)
                first = pos;
            if (pos + 1 > last)
                last = pos + 1;
        }
        if (last < first)
            first = last;
    }
    return first;
}

/* Sets up the run of placement s: resumes from the latest saved state of the previous run that
 * precedes every read of a changed device, or starts afresh.  Returns the run_time so far. */
static int placeto_begin(placeto_prepared *p, const pb_strategy *s, double *run_time, pb_error *err)
{
    if (placeto_partition(p, s, err) != PB_OK)
        return PB_ERR;
    p->dev = s->device;
    int i = -1;
    if (p->have_prev) {
        int first = placeto_divergence(p, s->device);
        for (int k = 0; k < p->n_snaps && p->snap[k].n_run <= first; k++)
            i = k;
    }
    *run_time = i >= 0 ? placeto_restore(p, i) : placeto_fresh(p);
    return PB_OK;
}

static void placeto_copy(double *dst, const double *src, int n)
{
    if (dst)
        memcpy(dst, src, (size_t)n * sizeof(double));
}

/* Transfer times of the latest run: a port queued on a bus (marked) was sent before the run
 * ended; arrivals are recomputed as run_bus computed them (t + delay), so they are the same
 * doubles. */
static void placeto_copy_transfers(const placeto_prepared *p, double *send, double *arrive)
{
    for (int k = 0; k < p->n_ports; k++) {
        int sent = p->port_mark[k] == p->run_stamp[p->port_owner[k]];
        if (send)
            send[k] = sent ? p->port_send[k] : -1;
        if (arrive)
            arrive[k] = sent ? p->port_send[k] + p->port_delay[k] : -1;
    }
}

static int placeto_evaluate(void *prepared, const pb_strategy *s, pb_eval *out, pb_error *err)
{
    placeto_prepared *p = prepared;
    if (!PB_EVAL_HAS(out, n_events))
        return pb_errorf(err, "placeto simulator: pb_eval of %zu bytes, need %zu", out->struct_size,
                         offsetof(pb_eval, n_events) + sizeof out->n_events);
    /* The memory sweep runs over the whole run even when the events resumed (about as long as
     * the events themselves): left out when the caller reads no memory. */
    int memory = !(PB_EVAL_HAS(out, skip_memory) && out->skip_memory);
    double run_time = 0;
    if (placeto_begin(p, s, &run_time, err) != PB_OK)
        return PB_ERR;
    long long n_events = 0;
    run_time = placeto_run(p, run_time, &n_events);
    if (p->n_ops > 0)
        memcpy(p->prev_dev, s->device, (size_t)p->n_ops * sizeof(int));
    p->have_prev = 1;
    out->step_time_us = run_time;
    out->n_events = n_events;
    out->feasible = 1;
    if (memory) {
        placeto_memory(p);
        for (int d = 0; d < p->n_devices; d++)
            if (p->mem_limit[d] > 0 && p->peak[d] > p->mem_limit[d])
                out->feasible = 0;
        placeto_copy(out->peak_mem_bytes, p->peak, p->n_devices);
    }
    placeto_copy(out->busy_us, p->busy, p->n_devices);
    placeto_copy(out->link_busy_us, p->link_busy, p->n_devices);
    placeto_copy(out->node_start_us, p->start, p->n_ops);
    placeto_copy(out->node_end_us, p->end, p->n_ops);
    if (out->port_send_us || out->port_arrive_us)
        placeto_copy_transfers(p, out->port_send_us, out->port_arrive_us);
    out->throughput = 0;
    out->monetary_cost = 0;
    return PB_OK;
}

/* ---------------------------------------------------------------- prepare */

/* Places the arrays of p in one block at base, each 64-byte aligned; with base == NULL only
 * measures.  Returns the block's size. */
static size_t placeto_layout(placeto_prepared *p, char *base, size_t name_bytes)
{
    size_t off = 0;
    int n = p->n_ops, m = p->n_edges, np = p->n_ports, nd = p->n_devices;
#define PLACETO_CARVE(field, count)                                                                \
    do {                                                                                           \
        off = (off + 63) & ~(size_t)63;                                                            \
        p->field = base ? (void *)(base + off) : NULL;                                             \
        off += (size_t)(count) * sizeof *p->field;                                                 \
    } while (0)
    PLACETO_CARVE(names, name_bytes);
    PLACETO_CARVE(name_off, n);
    PLACETO_CARVE(cost, n);
    PLACETO_CARVE(cost_trunc, n);
    PLACETO_CARVE(mem, n);
    PLACETO_CARVE(n_parents, n);
    PLACETO_CARVE(parent_start, n + 1);
    PLACETO_CARVE(parent, m);
    PLACETO_CARVE(sources, n);
    PLACETO_CARVE(child_start, n + 1);
    PLACETO_CARVE(child, m);
    PLACETO_CARVE(child_port, m);
    PLACETO_CARVE(child_key, m);
    PLACETO_CARVE(port_start, n + 1);
    PLACETO_CARVE(port_owner, np);
    PLACETO_CARVE(port_delay, np);
    PLACETO_CARVE(mem_ops, n);
    PLACETO_CARVE(dev_key, nd);
    PLACETO_CARVE(bus_key, nd);
    PLACETO_CARVE(mem_limit, nd);
    PLACETO_CARVE(remaining, n);
    PLACETO_CARVE(dq, n);
    PLACETO_CARVE(dq_head, nd);
    PLACETO_CARVE(dq_tail, nd);
    PLACETO_CARVE(dq_off, nd);
    PLACETO_CARVE(bq, np);
    PLACETO_CARVE(bq_head, nd);
    PLACETO_CARVE(bq_tail, nd);
    PLACETO_CARVE(bq_off, nd);
    PLACETO_CARVE(dev_state, nd);
    PLACETO_CARVE(bus_state, nd);
    PLACETO_CARVE(dev_rest, nd);
    PLACETO_CARVE(bus_rest, nd);
    PLACETO_CARVE(heap, (size_t)m + 2 * (size_t)nd);
    PLACETO_CARVE(port_mark, np);
    PLACETO_CARVE(run_stamp, n);
    PLACETO_CARVE(port_send, np);
    PLACETO_CARVE(start, n);
    PLACETO_CARVE(end, n);
    PLACETO_CARVE(run_order, n);
    PLACETO_CARVE(dev_run, nd);
    PLACETO_CARVE(run_pos, n);
    PLACETO_CARVE(prev_dev, n);
    PLACETO_CARVE(snap_heap, PLACETO_SNAPS * ((size_t)m + 2 * (size_t)nd));
    PLACETO_CARVE(snap_remaining, PLACETO_SNAPS * (size_t)n);
    PLACETO_CARVE(snap_queue, PLACETO_SNAPS * ((size_t)n + (size_t)np));
    PLACETO_CARVE(snap_int, PLACETO_SNAPS * 5 * (size_t)nd);
    PLACETO_CARVE(snap_state, PLACETO_SNAPS * 2 * (size_t)nd);
    PLACETO_CARVE(snap_dbl, PLACETO_SNAPS * 4 * (size_t)nd);
    PLACETO_CARVE(alloc_ev, n);
    PLACETO_CARVE(free_ev, n);
    PLACETO_CARVE(free_tmp, n);
    PLACETO_CARVE(alloc_t, n);
    PLACETO_CARVE(alloc_op, n);
    PLACETO_CARVE(alloc_index, n);
    PLACETO_CARVE(bucket, n);
    PLACETO_CARVE(bucket_next, n);
    PLACETO_CARVE(cur, nd);
    PLACETO_CARVE(peak, nd);
    PLACETO_CARVE(busy, nd);
    PLACETO_CARVE(link_busy, nd);
#undef PLACETO_CARVE
    return off;
}

typedef struct placeto_named {
    const char *name;
    int index;
} placeto_named;

static int placeto_named_cmp(const void *a, const void *b)
{
    const placeto_named *x = a, *y = b;
    return strcmp(x->name, y->name);
}

/* rank[i] = position of names[i] in strcmp order (names are distinct). */
static int placeto_rank_names(const char *const *names, int n, int *rank)
{
    placeto_named *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    for (int i = 0; i < n; i++)
        v[i] = (placeto_named){names[i], i};
    qsort(v, (size_t)n, sizeof *v, placeto_named_cmp);
    for (int r = 0; r < n; r++)
        rank[v[r].index] = r;
    free(v);
    return 0;
}

static inline uint64_t placeto_key(int kind, uint64_t rank, uint64_t payload)
{
    return (uint64_t)kind << 62 | rank << PLACETO_FIELD_BITS | payload;
}

/* Ranks the resource names fmt % d (d = 0..n-1) by string compare. */
static int placeto_rank_resources(const char *fmt, int n, int *rank)
{
    enum { WIDTH = 64 };
    char *text = calloc((size_t)(n > 0 ? n : 1), WIDTH);
    const char **names = calloc((size_t)(n > 0 ? n : 1), sizeof *names);
    int rc = -1;
    if (text && names) {
        for (int d = 0; d < n; d++) {
            snprintf(text + (size_t)d * WIDTH, WIDTH, fmt, d);
            names[d] = text + (size_t)d * WIDTH;
        }
        rc = placeto_rank_names(names, n, rank);
    }
    free(text);
    free(names);
    return rc;
}

/* Keys of the devices '/device:GPU:%d' and of their buses '/bus/device:GPU:%d', ranked by
 * string compare as the reference's heap compares them ('/device:GPU:10' < '/device:GPU:2'). */
static int placeto_resource_keys(placeto_prepared *p)
{
    int nd = p->n_devices;
    int *rank = calloc((size_t)(nd > 0 ? nd : 1), sizeof *rank);
    int rc = rank ? placeto_rank_resources("/device:GPU:%d", nd, rank) : -1;
    for (int d = 0; rc == 0 && d < nd; d++)
        p->dev_key[d] = placeto_key(PLACETO_RUN_DEV, (uint64_t)rank[d], (uint64_t)d);
    if (rc == 0)
        rc = placeto_rank_resources("/bus/device:GPU:%d", nd, rank);
    for (int d = 0; rc == 0 && d < nd; d++)
        p->bus_key[d] = placeto_key(PLACETO_RUN_BUS, (uint64_t)rank[d], (uint64_t)d);
    free(rank);
    return rc;
}

typedef struct placeto_pair {
    uint64_t names; /* rank of the parent's name << 32 | rank of the child's name */
    int slot;       /* index into child[] */
} placeto_pair;

static int placeto_pair_cmp(const void *a, const void *b)
{
    const placeto_pair *x = a, *y = b;
    return (x->names > y->names) - (x->names < y->names);
}

/* remove_dependency keys: edges ranked by (parent name, child name), as the reference's heap
 * compares its (parent, child) tuples. */
static int placeto_edge_keys(placeto_prepared *p, const pb_graph *g)
{
    int n = p->n_ops, m = p->n_edges;
    int *rank = malloc((size_t)(n > 0 ? n : 1) * sizeof *rank);
    placeto_pair *pairs = malloc((size_t)(m > 0 ? m : 1) * sizeof *pairs);
    if (!rank || !pairs || placeto_rank_names(g->node_name, n, rank)) {
        free(rank);
        free(pairs);
        return -1;
    }
    for (int v = 0; v < n; v++)
        for (int i = p->child_start[v]; i < p->child_start[v + 1]; i++)
            pairs[i] = (placeto_pair){(uint64_t)rank[v] << 32 | (uint64_t)rank[p->child[i]], i};
    qsort(pairs, (size_t)m, sizeof *pairs, placeto_pair_cmp);
    for (int r = 0; r < m; r++) {
        int i = pairs[r].slot;
        p->child_key[i] =
            placeto_key(PLACETO_REMOVE_DEPENDENCY, (uint64_t)r, (uint64_t)p->child[i]);
    }
    free(rank);
    free(pairs);
    return 0;
}

static int placeto_cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Orders the children child[a..b) of one producer by their position in the node list, as the
 * reference's children dict: it is filled while walking the nodes in metagraph order and reading
 * each node's inputs, so a child enters at its own turn whatever order the links come in
 * (specs/placeto.md §1.2).  A producer has each child once, so (child << 32 | port) keys sort
 * without ties; scratch holds b - a keys.  Lists already in order (networkx writes links grouped
 * by source in node order) are left as they are. */
static void placeto_sort_children(placeto_prepared *p, int a, int b, uint64_t *scratch)
{
    int sorted = 1;
    for (int i = a + 1; i < b && sorted; i++)
        sorted = p->child[i - 1] < p->child[i];
    if (sorted)
        return;
    for (int i = a; i < b; i++)
        scratch[i - a] = (uint64_t)p->child[i] << 32 | (uint32_t)p->child_port[i];
    qsort(scratch, (size_t)(b - a), sizeof *scratch, placeto_cmp_u64);
    for (int i = a; i < b; i++) {
        p->child[i] = (int)(scratch[i - a] >> 32);
        p->child_port[i] = (int)(uint32_t)scratch[i - a];
    }
}

/* Copies the per-op tables of g (§1.2): costs, output sizes, children in node order with the
 * port each reads, parent counts, sources in node order. */
static void placeto_copy_graph(placeto_prepared *p, const pb_graph *g, uint64_t *scratch)
{
    size_t off = 0;
    for (int v = 0; v < p->n_ops; v++) {
        size_t len = strlen(g->node_name[v]) + 1;
        memcpy(p->names + off, g->node_name[v], len);
        p->name_off[v] = (int)off;
        off += len;
        p->cost[v] = g->cost_us[v];
        p->cost_trunc[v] = trunc(g->cost_us[v]);
        p->mem[v] = g->out_bytes[v]; /* summed port by port, like the reference's sum() */
        p->n_parents[v] = g->pred_start[v + 1] - g->pred_start[v];
        p->parent_start[v] = g->pred_start[v];
        if (p->n_parents[v] == 0)
            p->sources[p->n_sources++] = v;
        if (p->mem[v] != 0)
            p->mem_ops[p->n_mem_ops++] = v;
        p->child_start[v] = g->succ_start[v];
        p->port_start[v] = g->port_start[v];
        for (int k = g->port_start[v]; k < g->port_start[v + 1]; k++)
            p->port_owner[k] = v;
    }
    p->child_start[p->n_ops] = g->succ_start[p->n_ops];
    p->parent_start[p->n_ops] = g->pred_start[p->n_ops];
    for (int i = 0; i < g->pred_start[p->n_ops]; i++)
        p->parent[i] = g->pred[i];
    p->port_start[p->n_ops] = g->port_start[p->n_ops];
    double total = 0;
    int integral = 1;
    for (int v = 0; v < p->n_ops; v++) {
        integral &= p->mem[v] == trunc(p->mem[v]);
        total += p->mem[v];
    }
    p->exact_sums = integral && total < 9007199254740992.0; /* 2^53 */
    for (int i = 0; i < p->n_edges; i++) {
        int e = g->succ_edge[i];
        p->child[i] = g->succ[i];
        p->child_port[i] = g->port_start[g->edge_src[e]] + g->edge_port[e];
    }
    for (int v = 0; v < p->n_ops; v++)
        placeto_sort_children(p, p->child_start[v], p->child_start[v + 1], scratch);
}

static int placeto_check_inputs(const pb_graph *g, const pb_cluster *c, pb_error *err)
{
    if (c->struct_size < offsetof(pb_cluster, init_offset_us) + sizeof c->init_offset_us)
        return pb_errorf(err, "placeto simulator: cluster struct of %zu bytes is too old",
                         c->struct_size);
    if (c->n_devices < 1 || c->n_devices > PLACETO_FIELD_MAX / 2)
        return pb_errorf(err, "placeto simulator: cluster has %d devices", c->n_devices);
    if (g->n_nodes >= PLACETO_FIELD_MAX || g->n_edges >= PLACETO_FIELD_MAX)
        return pb_errorf(err, "placeto simulator: graph '%s' is too large (%d ops, %d edges)",
                         g->name, g->n_nodes, g->n_edges);
    if (!isfinite(c->delta1_us) || c->delta1_us < 0 || !isfinite(c->delta2_us) ||
        c->delta2_us < 0 || !isfinite(c->init_offset_us) || c->init_offset_us < 0)
        return pb_errorf(err,
                         "cluster '%s': delta1 %g, delta2 %g and init offset %g µs must be finite "
                         "and >= 0",
                         c->name, c->delta1_us, c->delta2_us, c->init_offset_us);
    if (!isfinite(c->transfer_speed) || c->transfer_speed <= 0)
        return pb_errorf(err, "cluster '%s': transfer speed %g bytes/µs must be positive", c->name,
                         c->transfer_speed);
    return PB_OK;
}

static void placeto_release(void *prepared)
{
    free(prepared);
}

static int placeto_prepare(void *instance, const pb_graph *g, const pb_cluster *c, void **prepared,
                           pb_error *err)
{
    (void)instance;
    *prepared = NULL;
    if (placeto_check_inputs(g, c, err) != PB_OK)
        return PB_ERR;
    placeto_prepared shape = {0};
    shape.n_ops = g->n_nodes;
    shape.n_edges = g->n_edges;
    shape.n_ports = g->port_start[g->n_nodes];
    shape.n_devices = c->n_devices;
    size_t name_bytes = 0;
    for (int v = 0; v < g->n_nodes; v++)
        name_bytes += strlen(g->node_name[v]) + 1;
    size_t header = (sizeof shape + 63) & ~(size_t)63;
    size_t body = placeto_layout(&shape, NULL, name_bytes);
    char *block = calloc(1, header + body);
    if (!block)
        return pb_errorf(err, "placeto simulator: out of memory for graph '%s'", g->name);
    placeto_prepared *p = (placeto_prepared *)block;
    *p = shape;
    placeto_layout(p, block + header, name_bytes);
    p->delta1 = c->delta1_us;
    p->delta2 = c->delta2_us;
    p->init_offset = c->init_offset_us + 0.0; /* -0.0 becomes +0.0: times must be >= +0 */
    int max_children = 0;
    for (int v = 0; v < g->n_nodes; v++)
        if (g->succ_start[v + 1] - g->succ_start[v] > max_children)
            max_children = g->succ_start[v + 1] - g->succ_start[v];
    uint64_t *scratch = malloc((size_t)(max_children > 0 ? max_children : 1) * sizeof *scratch);
    if (!scratch) {
        free(block);
        return pb_errorf(err, "placeto simulator: out of memory for graph '%s'", g->name);
    }
    placeto_copy_graph(p, g, scratch);
    free(scratch);
    for (int i = 0, k = 0; i < PLACETO_SNAPS; i++) {
        int at = (int)((long long)(i + 1) * p->n_ops / (PLACETO_SNAPS + 1));
        if (at > (k > 0 ? p->snap_at[k - 1] : 0))
            p->snap_at[k++] = at;
    }
    for (int k = 0; k < p->n_ports; k++)
        p->port_delay[k] = g->port_bytes[k] / c->transfer_speed;
    for (int d = 0; d < p->n_devices; d++)
        p->mem_limit[d] = pb_cluster_type(c, c->device_type[d])->memory_bytes;
    if (placeto_resource_keys(p) || placeto_edge_keys(p, g)) {
        placeto_release(p);
        return pb_errorf(err, "placeto simulator: out of memory for graph '%s'", g->name);
    }
    *prepared = p;
    return PB_OK;
}

/* ---------------------------------------------------------------- plugin */

/* The simulator has no options and no per-instance state: a prepared handle carries
 * everything, so create() hands back a NULL instance. */
static int placeto_create(const pb_create_args *args, void **instance, pb_error *err)
{
    (void)args;
    (void)err;
    *instance = NULL;
    return PB_OK;
}

static void placeto_destroy(void *instance)
{
    (void)instance;
}

static const pb_simulator_ops placeto_ops = {
    .struct_size = sizeof(pb_simulator_ops),
    .create = placeto_create,
    .destroy = placeto_destroy,
    .prepare = placeto_prepare,
    .release = placeto_release,
    .evaluate = placeto_evaluate,
    .accepts = PB_KIND_BIT(PB_STRATEGY_PLACEMENT),
};

PB_PLUGIN(PB_KIND_SIMULATOR, "placeto", "1.0",
          "Placeto event simulator (tf_sim.py): per-device FIFO, one outgoing bus per device, "
          "bit-exact step time and peak memory",
          NULL, 0, &placeto_ops);
