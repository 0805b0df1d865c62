/* topology.c — the topology simulator: TAG's virtual runtime (specs/tag.md §4) running the
 * strategy compiler's execution graph (placebench/compile.h) on a heterogeneous cluster. */
#include "metis_part.h"
#include "placebench.h"
#include "topology_heap.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * The model, as in the reference (specs/tag.md §4):
 *
 *   Tasks.  Every compiled node is one task: a computation on its device, or one member of an
 *   AllReduce instance.  Every input that carries bytes is its own transfer task (no multicast),
 *   waiting for the producer; an input of 0 bytes only makes the consumer wait.  Task ids follow
 *   creation order (compiled node order; a node's transfers, then the node), and a finished task
 *   notifies its dependents in that order.
 *
 *   Scheduling.  A task that becomes ready takes at once the next slot on its resource, in the
 *   order tasks became ready (TensorFlow's per-device FIFO): a computation ends at
 *   max(now, device free) + cost; a transfer between devices ends at max(now, link free) +
 *   floor(bytes / bandwidth) + latency; a transfer inside a device takes no time.  Finished
 *   tasks leave a heap ordered like Rust's BinaryHeap, whose ties the schedules depend on.
 *
 *   Links.  Two devices of one machine have a link of their own per direction; all devices of
 *   machine A share one link towards machine B (contention as the reference's topology has it).
 *   Bandwidth and latency are the cluster's for the device pair.
 *
 *   AllReduce.  Instances run one at a time on one channel without occupying devices; when the
 *   last member is ready the instance takes max(now, channel free) + the NCCL model's time
 *   for the last member's bytes: max(trunc(a1 KB + b1), trunc(a2 KB + b2)), KB = bytes >> 10,
 *   coefficients scaled by nccl_ref_bandwidth / the group's bandwidth (the slowest link between
 *   its machines, or inside its one machine).
 *
 *   Model-parallel split (PB_REPL_SPLIT, which the compiler refuses): resolved here into plain
 *   placements first, as TAG's search builds its "MP" action (specs/tag.md §6): the split ops of
 *   one op group (of the graph's grouping; all split ops of the device group when the graph has
 *   none) are partitioned over the device group's devices by METIS (vertex weight 1 + parameter
 *   elements / 100000, edge weight the tensor's elements or 1000 for an empty one, imbalance
 *   1.5), and each op goes alone on the device of its part.
 *
 *   Barriers (option control_barriers).  A task whose control waits name two or more tasks
 *   waits once on a counter shared by every task whose waits name the same list; the counter
 *   reaches zero at the pop where the last pair would have released them, and the tasks one pop
 *   releases join the FIFO in id order either way, so the schedule is the same.
 *
 *   Memory.  A tensor occupies its producer's device from the producer's end, and each remote
 *   device from its first arrival there, until the last task reading that copy ends; frees come
 *   before allocations when a task ends; the peak is taken at allocations.  Every replica's
 *   parameter bytes (graph attribute "mem") are resident for the whole step.  A device whose
 *   peak exceeds its memory makes the strategy infeasible.
 */

enum { TOPO_COMPUTE = 0, TOPO_TRANSFER = 1, TOPO_COLLECTIVE = 2 };

typedef struct topo_opts {
    long long batch_size;
    double nccl_a1, nccl_b1, nccl_a2, nccl_b2, nccl_ref_bandwidth;
    int base_groups, prune, placeholder, sum_parts; /* compiler switches (placebench/compile.h) */
    int barriers; /* control waits on several tasks through one shared counter */
} topo_opts;

/* A task of one evaluation.  It ends at p->start[t] + dur, the sum every end time (heap, device
 * and link free times) is computed as. */
typedef struct topo_task {
    double dur; /* COMPUTE: the cost; TRANSFER: floor(bytes / bandwidth) + latency, 0 inside a
                   device; COLLECTIVE: the instance's time, set when the instance starts */
    int kind;
    int resource; /* device (COMPUTE, COLLECTIVE) or link (TRANSFER; -1 inside a device) */
    int node;     /* the compiled node (for a transfer: the producer of the tensor) */
    int after;    /* what its end does: p->after[after ..] (see topo_after) */
} topo_task;

/* What taking a slot reads of task `id` (topo_start), in 24 bytes.  A copy follows each task
 * the task waits on, in the block of p->after that task's end reads (topo_after), so that the
 * event loop starts a released task without a miss on a record elsewhere.  A barrier's entry in
 * such a block has an id >= the number of tasks and nothing else. */
typedef struct topo_launch {
    double dur; /* tasks[id].dur (a collective's is set when its instance starts) */
    int id;
    int after;    /* tasks[id].after */
    int resource; /* tasks[id].resource */
    int op;       /* TOPO_COMPUTE, TOPO_TRANSFER, or TOPO_COLLECTIVE + the instance */
} topo_launch;

/* The ints a launch record takes in a block of p->after. */
enum { TOPO_LAUNCH_INTS = (int)(sizeof(topo_launch) / sizeof(int)) };
_Static_assert(sizeof(topo_launch) == 24, "a launch record is 6 ints");

/* What the event loop does not read of a task. */
typedef struct topo_task_info {
    int src, dst;  /* devices of a transfer */
    double amount; /* cost (COMPUTE) or bytes (TRANSFER, COLLECTIVE) */
} topo_task_info;

/* A tensor copy on one device, as the event loop updates it (16 bytes). */
typedef struct topo_buffer {
    double bytes;
    int refs; /* tasks still to read it */
    unsigned short dev;
    unsigned char active; /* allocated */
} topo_buffer;

/* The identity of buffer b, (node, port, device), for building. */
typedef struct topo_buffer_key {
    int node, port, dev;
    int next; /* the node's next buffer, -1 */
} topo_buffer_key;

static inline double topo_end(const double *start, const topo_task *tasks, int t)
{
    return start[t] + tasks[t].dur;
}

/* A growable list of (a, b) pairs turned into CSR lists of b per a, in insertion order. */
typedef struct topo_pairs {
    int n, cap;
    int *a, *b;
    int cap_start, cap_list;
    int *start, *list;
} topo_pairs;

typedef struct topo_prepared {
    const pb_graph *g;   /* borrowed until release */
    const pb_cluster *c; /* borrowed until release */
    topo_opts opts;
    pb_compiler *compiler;
    int nd, n_links;
    int *link_of;     /* [nd*nd] link of the ordered device pair, -1 on the diagonal */
    double *mem_cap;  /* [nd] bytes, 0 = unlimited */
    double *price_us; /* [nd] USD per µs */

    /* Scratch, grown to the largest evaluation. */
    int cap_tasks, cap_nodes, cap_buffers, cap_coll; /* entries allocated */
    topo_task *tasks;                                /* [cap_tasks] */
    topo_launch *launch;                             /* [cap_tasks] each task's launch record */
    double *start;                                   /* [cap_tasks] when each task took its slot */
    topo_task_info *info;                            /* [cap_tasks] */
    const topo_launch **fifo; /* [cap_tasks] the tasks ready, in the order they take slots */
    int *waiting, *main_task;
    topo_entry *heap;
    topo_buffer *buffers, *buffers0; /* [cap_buffers] now; as each evaluation starts */
    topo_buffer_key *keys;           /* [cap_buffers] */
    int *after, cap_after;           /* per task: what its end does (topo_after) */
    int *buf_head;                   /* [cap_nodes] first buffer of each compiled node, -1 */
    int *arrived, *arrival;          /* per instance: members ready; [cap_nodes] arrival lists */
    int *arrival_start;              /* [cap_coll] offset of each instance's arrival list */
    double *coll_scale;              /* [cap_coll] */
    topo_pairs deps, consume, produce;

    /* Barriers (option control_barriers): a task's control waits on two or more tasks become
     * one wait on a counter shared by every task waiting on the same list.  Barrier b is key
     * n_tasks + b of deps: its sources list it as a dependent, it lists the waiting tasks. */
    int n_barriers, cap_bar, cap_bar_src, cap_buckets;
    int *bar_src;            /* the barriers' source lists, one after the other */
    int *bar_off, *bar_next; /* [cap_bar + 1] list start; [cap_bar] next of the hash chain */
    unsigned *bar_hash;      /* [cap_bar] */
    int *bar_bucket;         /* [cap_buckets] first barrier of each hash chain, -1 */
    topo_pairs bar_out;      /* (barrier, waiting task) */
    double *link_free, *dev_free, *mem, *peak, *busy;
    unsigned char *used;

    /* The last strategy evaluated (a copy) and what was built for it: evaluating the same
     * strategy again reuses the compiled graph, the tasks and the buffers. */
    int cached; /* cache_* and the built state below describe the last strategy */
    pb_strategy cache_s;
    int *cache_device, *cache_repl, *cache_start, *cache_devices;
    double *cache_share;
    int cache_cap_nodes, cache_cap_start, cache_cap_devices;
    const pb_compiled *cg;
    int n_tasks, n_buffers;
    int n_moves, cap_moves;
    int *moves;           /* the transfers between devices (over a link), in id order */
    int *waiting0;        /* [cap_tasks] dependencies of each task */
    double *mem0;         /* [nd] resident parameter bytes per device */
    unsigned char *used0; /* [nd] devices holding a node */
} topo_prepared;

/* ---------------------------------------------------------------- options */

/* TAG's fallback NCCL model (specs/tag.md §4.4), which TAG scales by 2810 / the bandwidth. */
static const pb_option_def topo_options[] = {
    {.name = "batch_size",
     .type = PB_OPT_INT,
     .default_value = "0",
     .min = 0,
     .max = 1e9,
     .help = "samples per step, for the throughput; 0: no throughput",
     .offset = offsetof(topo_opts, batch_size)},
    {.name = "nccl_a1",
     .type = PB_OPT_DOUBLE,
     .default_value = "0.043420241077615454",
     .min = 0,
     .max = 1e9,
     .help = "NCCL model, small tensors: µs per KB",
     .offset = offsetof(topo_opts, nccl_a1)},
    {.name = "nccl_b1",
     .type = PB_OPT_DOUBLE,
     .default_value = "368.2013618677043",
     .min = 0,
     .max = 1e9,
     .help = "NCCL model, small tensors: µs",
     .offset = offsetof(topo_opts, nccl_b1)},
    {.name = "nccl_a2",
     .type = PB_OPT_DOUBLE,
     .default_value = "0.27766802543921265",
     .min = 0,
     .max = 1e9,
     .help = "NCCL model, large tensors: µs per KB",
     .offset = offsetof(topo_opts, nccl_a2)},
    {.name = "nccl_b2",
     .type = PB_OPT_DOUBLE,
     .default_value = "211.91926070037152",
     .min = 0,
     .max = 1e9,
     .help = "NCCL model, large tensors: µs",
     .offset = offsetof(topo_opts, nccl_b2)},
    {.name = "nccl_ref_bandwidth",
     .type = PB_OPT_DOUBLE,
     .default_value = "2810",
     .min = 1e-9,
     .max = 1e12,
     .help = "bandwidth (B/µs) the NCCL model holds for; it scales by this / the group's",
     .offset = offsetof(topo_opts, nccl_ref_bandwidth)},
    {.name = "base_groups",
     .type = PB_OPT_BOOL,
     .default_value = "true",
     .min = 1,
     .max = 0,
     .help = "TAG's duplicate fallback: an op whose base group (ops joined by tensors that are "
             "not batch-split) is not replicated alike computes the whole batch",
     .offset = offsetof(topo_opts, base_groups)},
    {.name = "prune",
     .type = PB_OPT_BOOL,
     .default_value = "true",
     .min = 1,
     .max = 0,
     .help = "keep only the ops without successors (TAG's sink) and their ancestors: a replica "
             "nobody reads is dropped",
     .offset = offsetof(topo_opts, prune)},
    {.name = "replace_placeholder",
     .type = PB_OPT_BOOL,
     .default_value = "true",
     .min = 1,
     .max = 0,
     .help = "each replica of a Placeholder op waits for a shape Const of 0 µs on its device, "
             "as TAG generates the input (so it queues behind ops ready at the start)",
     .offset = offsetof(topo_opts, placeholder)},
    {.name = "control_barriers",
     .type = PB_OPT_BOOL,
     .default_value = "true",
     .min = 1,
     .max = 0,
     .help = "a task's control waits on two or more tasks (e.g. on every replica of an op) go "
             "through one counter shared by the tasks waiting on the same list: n + m "
             "dependencies instead of n x m, the same results; false: one per pair",
     .offset = offsetof(topo_opts, barriers)},
    {.name = "sum_parts",
     .type = PB_OPT_BOOL,
     .default_value = "true",
     .min = 1,
     .max = 0,
     .help = "a batch-split 'sum' op reads a 'sum' tensor split alike replica to replica (TAG); "
             "false: the partial sums are added on one device and sent whole to every replica",
     .offset = offsetof(topo_opts, sum_parts)},
};

static int topo_create(const pb_create_args *a, void **instance, pb_error *err)
{
    topo_opts *o = malloc(sizeof *o);
    if (!o)
        return pb_errorf(err, "out of memory");
    *o = *(const topo_opts *)a->options;
    *instance = o;
    return PB_OK;
}

static void topo_destroy(void *instance)
{
    free(instance);
}

/* ---------------------------------------------------------------- growable scratch */

/* Makes *p hold n entries of `size` bytes (capacity *cap, doubled). */
static int topo_grow(void *p, int *cap, int n, size_t size)
{
    if (n <= *cap)
        return 0;
    int c = *cap ? *cap : 16;
    while (c < n)
        c *= 2;
    void *q = realloc(*(void **)p, (size_t)c * size);
    if (!q)
        return -1;
    *(void **)p = q;
    *cap = c;
    return 0;
}

static void topo_pairs_free(topo_pairs *p)
{
    free(p->a);
    free(p->b);
    free(p->start);
    free(p->list);
}

static inline int topo_pair(topo_pairs *p, int a, int b)
{
    int cap = p->cap;
    if (p->n >= p->cap && (topo_grow(&p->a, &cap, p->n + 1, sizeof(int)) ||
                           topo_grow(&p->b, &p->cap, p->n + 1, sizeof(int))))
        return -1;
    p->a[p->n] = a;
    p->b[p->n++] = b;
    return 0;
}

/* The CSR of the pairs over keys 0..n-1 (stable: b's in insertion order). */
static int topo_pairs_index(topo_pairs *p, int n)
{
    if (topo_grow(&p->start, &p->cap_start, n + 1, sizeof(int)) ||
        topo_grow(&p->list, &p->cap_list, p->n > 0 ? p->n : 1, sizeof(int)))
        return -1;
    memset(p->start, 0, ((size_t)n + 1) * sizeof(int));
    for (int i = 0; i < p->n; i++)
        p->start[p->a[i] + 1]++;
    for (int k = 0; k < n; k++)
        p->start[k + 1] += p->start[k];
    for (int i = 0; i < p->n; i++)
        p->list[p->start[p->a[i]]++] = p->b[i];
    for (int k = n; k > 0; k--)
        p->start[k] = p->start[k - 1];
    p->start[0] = 0;
    return 0;
}

/* ---------------------------------------------------------------- prepare */

static void topo_release(void *prepared)
{
    topo_prepared *p = prepared;
    if (!p)
        return;
    pb_compiler_free(p->compiler);
    free(p->link_of);
    free(p->mem_cap);
    free(p->price_us);
    free(p->tasks);
    free(p->launch);
    free(p->start);
    free(p->waiting);
    free(p->fifo);
    free(p->main_task);
    topo_heap_free(p->heap);
    free(p->buffers);
    free(p->buffers0);
    free(p->keys);
    free(p->info);
    free(p->after);
    free(p->moves);
    free(p->buf_head);
    free(p->arrived);
    free(p->arrival);
    free(p->arrival_start);
    free(p->coll_scale);
    topo_pairs_free(&p->deps);
    topo_pairs_free(&p->consume);
    topo_pairs_free(&p->produce);
    topo_pairs_free(&p->bar_out);
    free(p->bar_src);
    free(p->bar_off);
    free(p->bar_next);
    free(p->bar_hash);
    free(p->bar_bucket);
    free(p->link_free);
    free(p->dev_free);
    free(p->mem);
    free(p->peak);
    free(p->busy);
    free(p->used);
    free(p->cache_device);
    free(p->cache_repl);
    free(p->cache_start);
    free(p->cache_devices);
    free(p->cache_share);
    free(p->waiting0);
    free(p->mem0);
    free(p->used0);
    free(p);
}

/* Links: one per ordered pair of devices of a machine, one per ordered pair of machines. */
static void topo_links(topo_prepared *p)
{
    const pb_cluster *c = p->c;
    int nd = p->nd, nm = c->n_machines > 0 ? c->n_machines : 1;
    int next = nd * nd; /* ids of machine pairs come after those of device pairs */
    for (int i = 0; i < nd; i++)
        for (int j = 0; j < nd; j++) {
            int mi = c->device_machine[i], mj = c->device_machine[j];
            p->link_of[i * nd + j] = i == j ? -1 : mi == mj ? i * nd + j : next + mi * nm + mj;
        }
    p->n_links = next + nm * nm;
}

static int topo_prepare(void *instance, const pb_graph *g, const pb_cluster *c, void **prepared,
                        pb_error *err)
{
    if (c->n_devices > 65535) /* a buffer keeps its device in 16 bits */
        return pb_errorf(err,
                         "cluster '%s' has %d devices: the topology simulator takes up to 65535",
                         c->name ? c->name : "?", c->n_devices);
    topo_prepared *p = calloc(1, sizeof *p);
    if (!p)
        return pb_errorf(err, "out of memory");
    p->g = g;
    p->c = c;
    p->opts = *(const topo_opts *)instance;
    p->nd = c->n_devices;
    size_t nd = (size_t)p->nd;
    p->compiler = pb_compiler_new();
    if (p->compiler)
        pb_compiler_set_flags(p->compiler, (p->opts.base_groups ? PB_COMPILE_BASE_GROUPS : 0u) |
                                               (p->opts.prune ? PB_COMPILE_PRUNE : 0u) |
                                               (p->opts.placeholder ? PB_COMPILE_PLACEHOLDER : 0u) |
                                               (p->opts.sum_parts ? PB_COMPILE_SUM_PARTS : 0u));
    p->link_of = malloc(nd * nd * sizeof(int));
    p->mem_cap = malloc(nd * sizeof(double));
    p->price_us = malloc(nd * sizeof(double));
    p->dev_free = malloc(nd * sizeof(double));
    p->mem = malloc(nd * sizeof(double));
    p->peak = malloc(nd * sizeof(double));
    p->busy = malloc(nd * sizeof(double));
    p->used = malloc(nd);
    p->mem0 = malloc(nd * sizeof(double));
    p->used0 = malloc(nd);
    if (!p->mem0 || !p->used0 || !p->compiler || !p->link_of || !p->mem_cap || !p->price_us ||
        !p->dev_free || !p->mem || !p->peak || !p->busy || !p->used) {
        topo_release(p);
        return pb_errorf(err, "out of memory");
    }
    topo_links(p);
    p->link_free = malloc((size_t)p->n_links * sizeof(double));
    if (!p->link_free) {
        topo_release(p);
        return pb_errorf(err, "out of memory");
    }
    for (int d = 0; d < p->nd; d++) {
        const pb_device_type *t = pb_cluster_type(c, c->device_type[d]);
        p->mem_cap[d] = t->memory_bytes;
        p->price_us[d] = t->price_per_hour / 3.6e9;
    }
    *prepared = p;
    return PB_OK;
}

/* ---------------------------------------------------------------- building the tasks */

/* The buffer (node, port, dev), created with `bytes` if new (*created set).  A node has few
 * buffers (one per port and device its tensors reach), kept in a list per node. */
static int topo_buffer_get(topo_prepared *p, int *n_buffers, int node, int port, int dev,
                           double bytes, int *created)
{
    for (int b = p->buf_head[node]; b >= 0; b = p->keys[b].next) {
        const topo_buffer_key *x = &p->keys[b];
        if (x->port == port && x->dev == dev) {
            *created = 0;
            return b;
        }
    }
    int b = (*n_buffers)++;
    p->buffers[b] = (topo_buffer){bytes, 0, (unsigned short)dev, 0};
    p->keys[b] = (topo_buffer_key){node, port, dev, p->buf_head[node]};
    p->buf_head[node] = b;
    *created = 1;
    return b;
}

/* Reallocates *p to exactly n entries of `size` bytes; -1 when out of memory (*p unchanged). */
static int topo_realloc(void *p, int n, size_t size)
{
    void *q = realloc(*(void **)p, (size_t)(n > 0 ? n : 1) * size);
    if (!q)
        return -1;
    *(void **)p = q;
    return 0;
}

/* Sizes every scratch array for compiled graph cg (each grows to twice what is needed, so that
 * evaluations of similar strategies allocate nothing). */
static int topo_reserve(topo_prepared *p, const pb_compiled *cg)
{
    int tasks = cg->n_nodes + cg->n_inputs, nodes = cg->n_nodes, coll = cg->n_collectives + 1;
    int buffers = 2 * cg->n_inputs + 1;
    if (tasks > p->cap_tasks) {
        int cap = 2 * tasks;
        if (topo_realloc(&p->tasks, cap, sizeof(topo_task)) ||
            topo_realloc(&p->launch, cap, sizeof(topo_launch)) ||
            topo_realloc(&p->start, cap, sizeof(double)) ||
            topo_realloc(&p->info, cap, sizeof(topo_task_info)) ||
            topo_realloc(&p->waiting, cap, sizeof(int)) ||
            topo_realloc(&p->waiting0, cap, sizeof(int)) ||
            topo_realloc(&p->fifo, cap, sizeof(const topo_launch *)))
            return -1;
        topo_heap_free(p->heap); /* empty between evaluations: nothing to keep */
        if (!(p->heap = topo_heap_alloc((size_t)cap)))
            return -1;
        p->cap_tasks = cap;
    }
    if (nodes > p->cap_nodes) {
        int cap = 2 * nodes;
        int buckets = 1;
        while (buckets < cap)
            buckets *= 2;
        if (topo_realloc(&p->main_task, cap, sizeof(int)) ||
            topo_realloc(&p->arrival, cap, sizeof(int)) ||
            topo_realloc(&p->buf_head, cap, sizeof(int)) ||
            topo_realloc(&p->bar_off, cap + 1, sizeof(int)) ||
            topo_realloc(&p->bar_next, cap, sizeof(int)) ||
            topo_realloc(&p->bar_hash, cap, sizeof(unsigned)) ||
            topo_realloc(&p->bar_bucket, buckets, sizeof(int)))
            return -1;
        p->cap_nodes = p->cap_bar = cap;
        p->cap_buckets = buckets;
    }
    if (buffers > p->cap_buffers) {
        int cap = 2 * buffers;
        if (topo_realloc(&p->buffers, cap, sizeof(topo_buffer)) ||
            topo_realloc(&p->buffers0, cap, sizeof(topo_buffer)) ||
            topo_realloc(&p->keys, cap, sizeof(topo_buffer_key)))
            return -1;
        p->cap_buffers = cap;
    }
    if (coll > p->cap_coll) {
        int cap = 2 * coll;
        if (topo_realloc(&p->arrived, cap, sizeof(int)) ||
            topo_realloc(&p->arrival_start, cap, sizeof(int)) ||
            topo_realloc(&p->coll_scale, cap, sizeof(double)))
            return -1;
        p->cap_coll = cap;
    }
    return 0;
}

/* ---------------------------------------------------------------- barriers */

/* FNV-1a over a list of task ids. */
static unsigned topo_list_hash(const int *list, int n)
{
    unsigned h = 2166136261u;
    for (int i = 0; i < n; i++) {
        h ^= (unsigned)list[i];
        h *= 16777619u;
    }
    return h;
}

/* The barrier waiting on the n tasks listed at p->bar_src + p->bar_off[p->n_barriers] (just
 * appended there): an earlier barrier with the same list (the appended copy is dropped), or a
 * new one whose sources list it as a dependent.  Its id, or -1 when out of memory.  At most one
 * barrier is made per compiled node, so cap_bar (the node capacity) holds them. */
static int topo_barrier(topo_prepared *p, int n)
{
    int at = p->bar_off[p->n_barriers];
    const int *list = p->bar_src + at;
    unsigned h = topo_list_hash(list, n);
    int *bucket = &p->bar_bucket[h & (unsigned)(p->cap_buckets - 1)];
    for (int b = *bucket; b >= 0; b = p->bar_next[b])
        if (p->bar_hash[b] == h && p->bar_off[b + 1] - p->bar_off[b] == n &&
            memcmp(p->bar_src + p->bar_off[b], list, (size_t)n * sizeof(int)) == 0)
            return b;
    int b = p->n_barriers++;
    p->bar_hash[b] = h;
    p->bar_next[b] = *bucket;
    *bucket = b;
    p->bar_off[b + 1] = at + n;
    for (int i = 0; i < n; i++) /* key -1 - b until the number of tasks is known */
        if (topo_pair(&p->deps, list[i], -1 - b))
            return -1;
    return b;
}

/* Task t's control waits (the n inputs of 0 bytes of node v): one barrier when there are two or
 * more and the option is on, else one dependency each. */
static int topo_control_waits(topo_prepared *p, const pb_compiled *cg, int v, int t, int n)
{
    int at = p->bar_off[p->n_barriers];
    if (n == 0)
        return 0;
    if (!p->opts.barriers || n == 1) {
        for (int i = cg->in_start[v]; i < cg->in_start[v + 1]; i++)
            if (cg->in_bytes[i] == 0 && topo_pair(&p->deps, p->main_task[cg->in_src[i]], t))
                return -1;
        return 0;
    }
    if (topo_grow(&p->bar_src, &p->cap_bar_src, at + n, sizeof(int)))
        return -1;
    int k = 0;
    for (int i = cg->in_start[v]; i < cg->in_start[v + 1]; i++)
        if (cg->in_bytes[i] == 0)
            p->bar_src[at + k++] = p->main_task[cg->in_src[i]];
    int b = topo_barrier(p, n);
    return b < 0 || topo_pair(&p->bar_out, b, t) ? -1 : 0;
}

/* Barrier keys become n_tasks + b, and the barriers' waiting tasks are appended to deps. */
static int topo_barriers_close(topo_prepared *p, int n_tasks)
{
    for (int i = 0; i < p->deps.n; i++)
        if (p->deps.b[i] < 0)
            p->deps.b[i] = n_tasks - 1 - p->deps.b[i];
    for (int i = 0; i < p->bar_out.n; i++)
        if (topo_pair(&p->deps, n_tasks + p->bar_out.a[i], p->bar_out.b[i]))
            return -1;
    return 0;
}

/* The tasks of compiled graph cg, their dependencies and the buffers they read and write.
 *
 * A transfer inside a device reads and writes one buffer, the producer's, and its end changes
 * no memory: the producer's end (which it waits for) allocated that buffer, and the consumer
 * (which waits for it) still holds a reference, so its read would never be the last and its
 * write finds the buffer allocated.  It gets neither, nor the reference its read would count:
 * every free and allocation happens at the same pop as with them (half the events of DP on the
 * zoo are such transfers). */
static int topo_build(topo_prepared *p, const pb_compiled *cg, int *n_tasks, int *n_buffers)
{
    int nd = p->nd, nt = 0;
    p->deps.n = p->consume.n = p->produce.n = p->bar_out.n = 0;
    p->n_barriers = 0;
    p->bar_off[0] = 0;
    *n_buffers = 0;
    memset(p->buf_head, 0xff, (size_t)cg->n_nodes * sizeof(int)); /* every list empty: -1 */
    memset(p->bar_bucket, 0xff, (size_t)p->cap_buckets * sizeof(int));
    for (int v = 0; v < cg->n_nodes; v++) {
        int dv = cg->device[v], first_transfer = nt, waits = 0;
        for (int i = cg->in_start[v]; i < cg->in_start[v + 1]; i++) {
            int u = cg->in_src[i], du = cg->device[u], k = cg->in_port[i];
            double bytes = cg->in_bytes[i];
            if (bytes == 0) {
                waits++;
                continue;
            }
            int t = nt++, created;
            int link = du == dv ? -1 : p->link_of[du * nd + dv], pair = du * nd + dv;
            double dur =
                link < 0 ? 0 : floor(bytes / p->c->link_bandwidth[pair]) + p->c->link_latency[pair];
            p->tasks[t] = (topo_task){dur, TOPO_TRANSFER, link, u, 0};
            p->info[t] = (topo_task_info){du, dv, bytes};
            int from = topo_buffer_get(p, n_buffers, u, k, du, bytes, &created);
            if (created && topo_pair(&p->produce, p->main_task[u], from))
                return -1;
            int to = topo_buffer_get(p, n_buffers, u, k, dv, bytes, &created);
            p->buffers[to].refs++; /* the consumer's read */
            if (topo_pair(&p->deps, p->main_task[u], t))
                return -1;
            if (link < 0) /* inside a device: see topo_build's comment */
                continue;
            p->buffers[from].refs++;
            if (topo_pair(&p->consume, t, from) || topo_pair(&p->produce, t, to))
                return -1;
        }
        int t = nt++;
        int coll = cg->kind[v] == PB_CNODE_ALLREDUCE;
        double amount = coll ? cg->in_bytes[cg->in_start[v]] : cg->cost_us[v];
        p->tasks[t] =
            (topo_task){coll ? 0 : amount, coll ? TOPO_COLLECTIVE : TOPO_COMPUTE, dv, v, 0};
        p->info[t] = (topo_task_info){dv, dv, amount};
        p->main_task[v] = t;
        if (topo_control_waits(p, cg, v, t, waits))
            return -1;
        int x = first_transfer;
        for (int i = cg->in_start[v]; i < cg->in_start[v + 1]; i++) {
            int u = cg->in_src[i];
            if (cg->in_bytes[i] == 0)
                continue;
            int created;
            int to = topo_buffer_get(p, n_buffers, u, cg->in_port[i], dv, 0, &created);
            if (topo_pair(&p->deps, x++, t) || topo_pair(&p->consume, t, to))
                return -1;
        }
    }
    *n_tasks = nt;
    return topo_barriers_close(p, nt);
}

/* The ints before the launch records in a block of p->after whose task has m memory operations:
 * the two counts and the operations, rounded up to even (topo_after). */
static inline int topo_block_head(int m)
{
    return (2 + m + 1) / 2 * 2;
}

/* What the end of each task does, in one block of p->after from tasks[t].after (a finished
 * task's heap entry carries it, so that the event loop reads one place): the number m of memory
 * operations, the number k of dependents, the m operations (the buffers the task frees, as 2 b,
 * then those it allocates, as 2 b + 1, each in the order built), then from the next even int
 * the launch records of the k dependents (deps, in their order).  Blocks start at even ints, so
 * the records are 8-byte aligned (p->after is malloc's).  Fills p->launch on the way. */
static int topo_after(topo_prepared *p, const pb_compiled *cg, int n_tasks)
{
    const int *cs = p->consume.start, *ps = p->produce.start, *ds = p->deps.start;
    long long need = 0;
    for (int t = 0; t < n_tasks; t++) {
        int m = cs[t + 1] - cs[t] + ps[t + 1] - ps[t], k = ds[t + 1] - ds[t];
        p->tasks[t].after = (int)need; /* checked below: need only grows */
        need += topo_block_head(m) + (long long)TOPO_LAUNCH_INTS * k;
        if (need > INT_MAX / 4)
            return -1;
    }
    /* 16 ints more: topo_prefetch_block hints the line after a block's first */
    if (topo_grow(&p->after, &p->cap_after, (int)need + 16, sizeof(int)))
        return -1;
    for (int t = 0; t < n_tasks; t++) {
        const topo_task *x = &p->tasks[t];
        int op = x->kind == TOPO_COLLECTIVE ? TOPO_COLLECTIVE + cg->collective[x->node] : x->kind;
        p->launch[t] = (topo_launch){x->dur, t, x->after, x->resource, op};
    }
    for (int t = 0; t < n_tasks; t++) {
        int *a = p->after + p->tasks[t].after, at = 2;
        a[0] = cs[t + 1] - cs[t] + ps[t + 1] - ps[t];
        a[1] = ds[t + 1] - ds[t];
        for (int i = cs[t]; i < cs[t + 1]; i++)
            a[at++] = 2 * p->consume.list[i];
        for (int i = ps[t]; i < ps[t + 1]; i++)
            a[at++] = 2 * p->produce.list[i] + 1;
        if (at < topo_block_head(a[0]))
            a[at++] = 0; /* padding */
        topo_launch *l = (topo_launch *)(a + at);
        for (int i = ds[t]; i < ds[t + 1]; i++) {
            int d = p->deps.list[i];
            *l++ = d < n_tasks ? p->launch[d] : (topo_launch){0, d, 0, -1, 0};
        }
    }
    return 0;
}

/* The launch records of the dependents in block a of p->after. */
static inline const topo_launch *topo_after_deps(const int *a)
{
    return (const topo_launch *)(a + topo_block_head(a[0]));
}

/* ---------------------------------------------------------------- collectives */

/* The NCCL model's scale for each instance: reference bandwidth / the slowest link between the
 * machines of its devices, or inside its one machine.  Lists each instance's members in
 * p->arrival on the way (topo_reset clears the arrival counts afterwards). */
static void topo_collective_scales(topo_prepared *p, const pb_compiled *cg)
{
    const pb_cluster *c = p->c;
    int nd = p->nd, at = 0;
    for (int k = 0; k < cg->n_collectives; k++) {
        p->arrived[k] = 0;
        p->arrival_start[k] = at;
        at += cg->coll_size[k];
    }
    for (int v = 0; v < cg->n_nodes; v++) {
        int k = cg->collective[v];
        if (k >= 0)
            p->arrival[p->arrival_start[k] + p->arrived[k]++] = v;
    }
    for (int k = 0; k < cg->n_collectives; k++) {
        const int *m = p->arrival + p->arrival_start[k];
        double intra = INFINITY, inter = INFINITY;
        for (int i = 0; i < cg->coll_size[k]; i++)
            for (int j = 0; j < cg->coll_size[k]; j++) {
                int da = cg->device[m[i]], db = cg->device[m[j]];
                if (da == db)
                    continue;
                double bw = c->link_bandwidth[da * nd + db];
                if (c->device_machine[da] == c->device_machine[db])
                    intra = bw < intra ? bw : intra;
                else
                    inter = bw < inter ? bw : inter;
            }
        double bw = isfinite(inter) ? inter : intra;
        p->coll_scale[k] = isfinite(bw) && bw > 0 ? p->opts.nccl_ref_bandwidth / bw : 1.0;
        p->arrived[k] = 0;
    }
}

static double topo_nccl_us(const topo_prepared *p, double scale, double bytes)
{
    double kb = (double)((uint64_t)bytes >> 10);
    const topo_opts *o = &p->opts;
    double small = trunc(o->nccl_a1 * scale * kb + o->nccl_b1 * scale);
    double large = trunc(o->nccl_a2 * scale * kb + o->nccl_b2 * scale);
    return small > large ? small : large;
}

/* ---------------------------------------------------------------- the event loop */

typedef struct topo_run {
    double time;
    int heap_n;
    long long pops;
    double coll_free;
} topo_run;

/* Hints the block of p->after at `at`: its first two cache lines, which hold the blocks of tasks
 * with two dependents and fewer. */
static inline void topo_prefetch_block(const topo_prepared *p, int at)
{
    __builtin_prefetch(&p->after[at]);
    __builtin_prefetch(&p->after[at] + 64 / sizeof(int));
}

/* Takes the next slot of task l->id's resource (specs/tag.md §4.2 step 1).  The block of
 * p->after that the task's end will read is fetched now: half the tasks (transfers inside a
 * device) end at once, and the rest are as likely to be evicted as not by their pop. */
static void topo_start(topo_prepared *p, const pb_compiled *cg, topo_run *run, const topo_launch *l)
{
    int t = l->id;
    if (l->op == TOPO_COMPUTE) {
        double begin = p->dev_free[l->resource] > run->time ? p->dev_free[l->resource] : run->time;
        double end = begin + l->dur;
        p->start[t] = begin;
        p->dev_free[l->resource] = end;
        p->busy[l->resource] += l->dur;
        topo_prefetch_block(p, l->after);
        topo_push(p->heap, &run->heap_n, (topo_entry){end, l->after});
        return;
    }
    if (l->op == TOPO_TRANSFER) {
        double begin = run->time;
        if (l->resource >= 0) {
            begin = p->link_free[l->resource] > begin ? p->link_free[l->resource] : begin;
            p->link_free[l->resource] = begin + l->dur;
        }
        p->start[t] = begin;
        topo_prefetch_block(p, l->after);
        topo_push(p->heap, &run->heap_n, (topo_entry){begin + l->dur, l->after});
        return;
    }
    int k = l->op - TOPO_COLLECTIVE;
    p->arrival[p->arrival_start[k] + p->arrived[k]++] = t;
    if (p->arrived[k] < cg->coll_size[k])
        return;
    double begin = run->coll_free > run->time ? run->coll_free : run->time;
    double dur = topo_nccl_us(p, p->coll_scale[k], p->info[t].amount), end = begin + dur;
    run->coll_free = end;
    for (int i = 0; i < cg->coll_size[k]; i++) {
        int m = p->arrival[p->arrival_start[k] + i];
        p->start[m] = begin;
        p->tasks[m].dur = dur;
        topo_push(p->heap, &run->heap_n, (topo_entry){end, p->tasks[m].after});
    }
}

/* Task t ended: free what it read last, allocate what it wrote (specs/tag.md §4.2 step 2). */
static void topo_finish_memory(topo_prepared *p, const int *ops, int n)
{
    for (int i = 0; i < n; i++) {
        topo_buffer *b = &p->buffers[ops[i] >> 1];
        if (!(ops[i] & 1)) {
            if (b->refs == 1)
                p->mem[b->dev] -= b->bytes;
            b->refs--;
            continue;
        }
        if (b->active)
            continue;
        b->active = 1;
        p->mem[b->dev] += b->bytes;
        if (p->mem[b->dev] > p->peak[b->dev])
            p->peak[b->dev] = p->mem[b->dev];
    }
}

/* Sorts the n launch records of a by task id (insertion sort: a few tasks at a time). */
static void topo_sort_tasks(const topo_launch **a, int n)
{
    for (int i = 1; i < n; i++) {
        const topo_launch *x = a[i];
        int j = i;
        for (; j > 0 && a[j - 1]->id > x->id; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* A task ended: of its n dependents `deps`, those that wait for nothing more join the FIFO (from
 * *tail on), in the order of their ids, as when each pair was its own dependency (a task's
 * dependents are listed in id order; a barrier that fires merges its own list in). */
static void topo_release_dependents(topo_prepared *p, int n_tasks, const topo_launch *deps, int n,
                                    int *tail)
{
    const int *start = p->deps.start, *list = p->deps.list;
    int *waiting = p->waiting, at = *tail, fired = 0;
    const topo_launch **fifo = p->fifo;
    for (int i = 0; i < n; i++) {
        int d = deps[i].id;
        if (--waiting[d] != 0)
            continue;
        if (d < n_tasks) {
            fifo[at++] = &deps[i];
            continue;
        }
        fired = 1;
        for (int j = start[d]; j < start[d + 1]; j++)
            if (--waiting[list[j]] == 0)
                fifo[at++] = &p->launch[list[j]];
    }
    if (fired)
        topo_sort_tasks(fifo + *tail, at - *tail);
    *tail = at;
}

/* Hints the blocks of the tasks most likely to end next: the heap's top three levels, which hold
 * the next pop's task and often the two or three after it (a block fetched at its task's start,
 * topo_start, may be gone by its pop). */
static inline void topo_prefetch_next(const topo_prepared *p, int heap_n)
{
    const topo_entry *h = p->heap;
    for (int i = heap_n < 7 ? heap_n : 7; i-- > 0;)
        topo_prefetch_block(p, h[i].task);
}

/* The heap's entries name a task by its block of p->after (a unique id, which the order ignores),
 * so that a pop reads that block and nothing else of the task. */
static double topo_loop(topo_prepared *p, const pb_compiled *cg, int n_tasks, long long *pops)
{
    topo_run run = {0};
    int head = 0, tail = 0;
    for (int t = 0; t < n_tasks; t++)
        if (p->waiting[t] == 0)
            p->fifo[tail++] = &p->launch[t];
    for (;;) {
        while (head < tail)
            topo_start(p, cg, &run, p->fifo[head++]);
        if (run.heap_n == 0)
            break;
        topo_entry e = topo_pop(p->heap, &run.heap_n);
        topo_prefetch_next(p, run.heap_n);
        run.pops++;
        const int *a = p->after + e.task;
        topo_finish_memory(p, a + 2, a[0]);
        run.time = e.end;
        topo_release_dependents(p, n_tasks, topo_after_deps(a), a[1], &tail);
    }
    *pops = run.pops;
    return run.time;
}

/* ---------------------------------------------------------------- model-parallel split */

/* A strategy with every split op placed alone on one device: the original device groups, then
 * one group per device (group n_groups + d holds device d). */
typedef struct topo_split {
    pb_strategy s;
    int *device, *repl, *start, *devices, *member, *local, *xadj, *adj, *vwgt, *adjwgt, *part;
    double *share;
} topo_split;

static void topo_split_free(topo_split *t)
{
    void *arrays[] = {t->device, t->repl, t->start, t->devices, t->member, t->local,
                      t->xadj,   t->adj,  t->vwgt,  t->adjwgt,  t->part,   t->share};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
}

/* The tensor elements METIS weighs an edge by (TAG: bytes / 4, and 1000 for an empty tensor). */
static int topo_split_weight(double bytes)
{
    double elements = floor(bytes / 4);
    return elements < 1 ? 1000 : elements > 1e9 ? 1000000000 : (int)elements;
}

/* Partitions the k members (ops) over device group dg and places each alone on its part's
 * device. */
static int topo_split_unit(const pb_graph *g, const pb_strategy *s, topo_split *t, int k, int dg,
                           pb_error *err)
{
    for (int i = 0; i < k; i++)
        t->local[t->member[i]] = i;
    int m = 0;
    for (int i = 0; i < k; i++) {
        int v = t->member[i];
        t->xadj[i] = m;
        for (int j = g->succ_start[v]; j < g->succ_start[v + 1]; j++)
            if (t->local[g->succ[j]] >= 0) {
                t->adj[m] = t->local[g->succ[j]];
                t->adjwgt[m++] = topo_split_weight(g->edge_bytes[g->succ_edge[j]]);
            }
        for (int j = g->pred_start[v]; j < g->pred_start[v + 1]; j++)
            if (t->local[g->pred[j]] >= 0) {
                t->adj[m] = t->local[g->pred[j]];
                t->adjwgt[m++] = topo_split_weight(g->edge_bytes[g->pred_edge[j]]);
            }
        double elements = floor(g->param_bytes[v] / 4 / 100000);
        t->vwgt[i] = 1 + (elements > 1e8 ? 100000000 : (int)elements);
    }
    t->xadj[k] = m;
    const int *devs = s->group_devices + s->group_start[dg];
    int parts = s->group_start[dg + 1] - s->group_start[dg];
    if (metis_partition(k, t->xadj, t->adj, t->vwgt, t->adjwgt, parts, 1.5, t->part, err))
        return PB_ERR;
    for (int i = 0; i < k; i++) {
        int v = t->member[i];
        t->local[v] = -1;
        t->device[v] = s->n_device_groups + devs[t->part[i]];
        t->repl[v] = PB_REPL_NONE;
    }
    return PB_OK;
}

/* Allocates t for g and the groups of s plus one per device; -1 when out of memory. */
static int topo_split_alloc(topo_split *t, const pb_strategy *s, const pb_graph *g, int nd)
{
    int ng = s->n_device_groups, total = s->group_start[ng];
    size_t nn = (size_t)(g->n_nodes > 0 ? g->n_nodes : 1), ne = 2 * (size_t)g->n_edges + 1;
    t->device = malloc(nn * sizeof(int));
    t->repl = malloc(nn * sizeof(int));
    t->start = malloc(((size_t)ng + (size_t)nd + 1) * sizeof(int));
    t->devices = malloc(((size_t)total + (size_t)nd) * sizeof(int));
    t->share = malloc(((size_t)total + (size_t)nd) * sizeof(double));
    t->member = malloc(nn * sizeof(int));
    t->local = malloc(nn * sizeof(int));
    t->xadj = malloc((nn + 1) * sizeof(int));
    t->vwgt = malloc(nn * sizeof(int));
    t->part = malloc(nn * sizeof(int));
    t->adj = malloc(ne * sizeof(int));
    t->adjwgt = malloc(ne * sizeof(int));
    return t->device && t->repl && t->start && t->devices && t->share && t->member && t->local &&
                   t->xadj && t->vwgt && t->part && t->adj && t->adjwgt
               ? 0
               : -1;
}

/* *out is s, or (when s has split ops) t->s with every split op placed by METIS. */
static int topo_resolve_split(const topo_prepared *p, const pb_strategy *s, topo_split *t,
                              const pb_strategy **out, pb_error *err)
{
    const pb_graph *g = p->g;
    int n = g->n_nodes, any = 0;
    *out = s;
    if (s->kind != PB_STRATEGY_REPLICATED || pb_strategy_check(s, n, p->c, err))
        return s->kind == PB_STRATEGY_REPLICATED ? PB_ERR : PB_OK;
    for (int v = 0; v < n && !any; v++)
        any = s->replication[v] == PB_REPL_SPLIT;
    if (!any)
        return PB_OK;
    int ng = s->n_device_groups, total = s->group_start[ng], nd = p->nd;
    if (topo_split_alloc(t, s, g, nd))
        return pb_errorf(err, "out of memory");
    const double *share = PB_STRATEGY_HAS(s, device_share) ? s->device_share : NULL;
    memcpy(t->start, s->group_start, ((size_t)ng + 1) * sizeof(int));
    memcpy(t->devices, s->group_devices, (size_t)total * sizeof(int));
    if (share)
        memcpy(t->share, share, (size_t)total * sizeof(double));
    for (int d = 0; d < nd; d++) {
        t->devices[total + d] = d;
        t->share[total + d] = 1;
        t->start[ng + d + 1] = total + d + 1;
    }
    memcpy(t->device, s->device, (size_t)n * sizeof(int));
    memcpy(t->repl, s->replication, (size_t)n * sizeof(int));
    for (int v = 0; v < n; v++)
        t->local[v] = -1;
    for (int v = 0; v < n; v++) {
        if (t->repl[v] != PB_REPL_SPLIT)
            continue;
        int k = 0, dg = s->device[v], unit = g->group_of ? g->group_of[v] : -1;
        for (int u = v; u < n; u++)
            if (t->repl[u] == PB_REPL_SPLIT && s->device[u] == dg &&
                (!g->group_of || g->group_of[u] == unit))
                t->member[k++] = u;
        if (topo_split_unit(g, s, t, k, dg, err))
            return PB_ERR;
    }
    t->s = *s;
    t->s.struct_size = sizeof t->s;
    t->s.device = t->device;
    t->s.replication = t->repl;
    t->s.n_device_groups = ng + nd;
    t->s.group_start = t->start;
    t->s.group_devices = t->devices;
    t->s.device_share = share ? t->share : NULL;
    t->s.op_replication = PB_STRATEGY_HAS(s, op_replication) ? s->op_replication : NULL;
    *out = &t->s;
    return PB_OK;
}

/* ---------------------------------------------------------------- the strategy cache */

/* The batch shares s carries (NULL: even), as the compiler reads them. */
static const double *topo_shares(const pb_strategy *s)
{
    return s->struct_size >= sizeof *s ? s->device_share : NULL;
}

/* Whether s is, value for value, the strategy cached (what the compiler reads of it). */
static int topo_cache_hit(const topo_prepared *p, const pb_strategy *s)
{
    const pb_strategy *c = &p->cache_s;
    if (!p->cached || s->kind != c->kind || s->n_nodes != c->n_nodes ||
        memcmp(s->device, c->device, (size_t)s->n_nodes * sizeof(int)) != 0)
        return 0;
    if (s->kind != PB_STRATEGY_REPLICATED)
        return 1;
    int ng = s->n_device_groups;
    if (ng != c->n_device_groups ||
        memcmp(s->replication, c->replication, (size_t)s->n_nodes * sizeof(int)) != 0 ||
        memcmp(s->group_start, c->group_start, ((size_t)ng + 1) * sizeof(int)) != 0)
        return 0;
    size_t total = (size_t)s->group_start[ng];
    const double *sh = topo_shares(s), *ch = topo_shares(c);
    if (memcmp(s->group_devices, c->group_devices, total * sizeof(int)) != 0 || !sh != !ch)
        return 0;
    return !sh || memcmp(sh, ch, total * sizeof(double)) == 0;
}

/* Keeps a copy of s (a strategy that checked and compiled); -1 when out of memory. */
static int topo_cache_store(topo_prepared *p, const pb_strategy *s)
{
    int n = s->n_nodes, replicated = s->kind == PB_STRATEGY_REPLICATED;
    int ng = replicated ? s->n_device_groups : 0, total = replicated ? s->group_start[ng] : 0;
    const double *sh = replicated ? topo_shares(s) : NULL;
    int cap_nodes = p->cache_cap_nodes, cap_devices = p->cache_cap_devices;
    if (topo_grow(&p->cache_device, &cap_nodes, n + 1, sizeof(int)) ||
        topo_grow(&p->cache_repl, &p->cache_cap_nodes, n + 1, sizeof(int)) ||
        topo_grow(&p->cache_start, &p->cache_cap_start, ng + 1, sizeof(int)) ||
        topo_grow(&p->cache_devices, &cap_devices, total + 1, sizeof(int)) ||
        topo_grow(&p->cache_share, &p->cache_cap_devices, total + 1, sizeof(double)))
        return -1;
    memcpy(p->cache_device, s->device, (size_t)n * sizeof(int));
    p->cache_s = (pb_strategy){.struct_size = sizeof(pb_strategy),
                               .kind = s->kind,
                               .n_nodes = n,
                               .device = p->cache_device};
    if (!replicated)
        return 0;
    memcpy(p->cache_repl, s->replication, (size_t)n * sizeof(int));
    memcpy(p->cache_start, s->group_start, ((size_t)ng + 1) * sizeof(int));
    memcpy(p->cache_devices, s->group_devices, (size_t)total * sizeof(int));
    if (sh)
        memcpy(p->cache_share, sh, (size_t)total * sizeof(double));
    p->cache_s.replication = p->cache_repl;
    p->cache_s.n_device_groups = ng;
    p->cache_s.group_start = p->cache_start;
    p->cache_s.group_devices = p->cache_devices;
    p->cache_s.device_share = sh ? p->cache_share : NULL;
    return 0;
}

/* Lists the transfers over a link, in id order (the order their busy times add up in). */
static int topo_list_moves(topo_prepared *p)
{
    p->n_moves = 0;
    for (int t = 0; t < p->n_tasks; t++) {
        if (p->tasks[t].kind != TOPO_TRANSFER || p->tasks[t].resource < 0)
            continue;
        if (topo_grow(&p->moves, &p->cap_moves, p->n_moves + 1, sizeof(int)))
            return -1;
        p->moves[p->n_moves++] = t;
    }
    return 0;
}

/* Compiles s and builds its tasks, unless s is the strategy built last. */
static int topo_prepare_strategy(topo_prepared *p, const pb_strategy *s, pb_error *err)
{
    if (topo_cache_hit(p, s))
        return PB_OK;
    p->cached = 0;
    const pb_strategy *resolved;
    topo_split split = {0};
    int rc = topo_resolve_split(p, s, &split, &resolved, err);
    if (rc == PB_OK)
        rc = pb_compile(p->compiler, p->g, p->c, resolved, &p->cg, err);
    topo_split_free(&split);
    if (rc != PB_OK)
        return PB_ERR;
    const pb_compiled *cg = p->cg;
    if (topo_reserve(p, cg) || topo_build(p, cg, &p->n_tasks, &p->n_buffers) ||
        topo_pairs_index(&p->deps, p->n_tasks + p->n_barriers) ||
        topo_pairs_index(&p->consume, p->n_tasks) || topo_pairs_index(&p->produce, p->n_tasks) ||
        topo_after(p, cg, p->n_tasks) || topo_cache_store(p, s))
        return pb_errorf(err, "out of memory");
    memcpy(p->buffers0, p->buffers, (size_t)p->n_buffers * sizeof(topo_buffer));
    memset(p->waiting0, 0, ((size_t)p->n_tasks + (size_t)p->n_barriers) * sizeof(int));
    for (int i = 0; i < p->deps.n; i++)
        p->waiting0[p->deps.b[i]]++;
    memset(p->mem0, 0, (size_t)p->nd * sizeof(double));
    memset(p->used0, 0, (size_t)p->nd);
    for (int v = 0; v < cg->n_nodes; v++) {
        p->mem0[cg->device[v]] += cg->param_bytes[v];
        p->used0[cg->device[v]] = 1;
    }
    topo_collective_scales(p, cg);
    if (topo_list_moves(p))
        return pb_errorf(err, "out of memory");
    p->cached = 1;
    return PB_OK;
}

/* ---------------------------------------------------------------- evaluate */

/* Zeroes the per-evaluation state; resident parameters open each device's memory. */
static void topo_reset(topo_prepared *p, const pb_compiled *cg, int n_tasks)
{
    int nd = p->nd;
    memcpy(p->waiting, p->waiting0, ((size_t)n_tasks + (size_t)p->n_barriers) * sizeof(int));
    memcpy(p->buffers, p->buffers0, (size_t)p->n_buffers * sizeof(topo_buffer));
    for (int i = 0; i < p->n_links; i++)
        p->link_free[i] = 0;
    for (int d = 0; d < nd; d++)
        p->dev_free[d] = p->busy[d] = 0;
    memcpy(p->mem, p->mem0, (size_t)nd * sizeof(double));
    memcpy(p->peak, p->mem0, (size_t)nd * sizeof(double));
    memcpy(p->used, p->used0, (size_t)nd);
    for (int k = 0; k < cg->n_collectives; k++)
        p->arrived[k] = 0;
}

static void topo_fill(const topo_prepared *p, const pb_compiled *cg, int n_tasks, double time,
                      long long pops, pb_eval *out)
{
    const pb_graph *g = p->g;
    int nd = p->nd;
    out->step_time_us = time;
    out->n_events = pops;
    out->feasible = 1;
    double price = 0;
    for (int d = 0; d < nd; d++) {
        if (p->mem_cap[d] > 0 && p->peak[d] > p->mem_cap[d])
            out->feasible = 0;
        price += p->used[d] ? p->price_us[d] : 0;
    }
    if (out->peak_mem_bytes)
        memcpy(out->peak_mem_bytes, p->peak, (size_t)nd * sizeof(double));
    if (out->busy_us)
        memcpy(out->busy_us, p->busy, (size_t)nd * sizeof(double));
    if (out->link_busy_us) {
        memset(out->link_busy_us, 0, (size_t)nd * (size_t)nd * sizeof(double));
        for (int i = 0; i < p->n_moves; i++) {
            int t = p->moves[i];
            out->link_busy_us[p->info[t].src * nd + p->info[t].dst] +=
                topo_end(p->start, p->tasks, t) - p->start[t];
        }
    }
    if (out->node_start_us && out->node_end_us) {
        for (int v = 0; v < g->n_nodes; v++) {
            out->node_start_us[v] = INFINITY;
            out->node_end_us[v] = 0;
        }
        for (int t = 0; t < n_tasks; t++) {
            const topo_task *x = &p->tasks[t];
            if (x->kind == TOPO_TRANSFER)
                continue;
            int v = cg->origin[x->node];
            double begin = p->start[t], end = topo_end(p->start, p->tasks, t);
            out->node_start_us[v] = begin < out->node_start_us[v] ? begin : out->node_start_us[v];
            out->node_end_us[v] = end > out->node_end_us[v] ? end : out->node_end_us[v];
        }
    }
    if (out->port_send_us && out->port_arrive_us)
        for (int i = 0; i < g->port_start[g->n_nodes]; i++)
            out->port_send_us[i] = out->port_arrive_us[i] = -1;
    out->throughput =
        p->opts.batch_size > 0 && time > 0 ? (double)p->opts.batch_size / time * 1e6 : 0;
    out->monetary_cost = time * price;
}

/* TAG's op_idle_after (specs/tag.md §4.6): per op, the least (dependent start - task end) over
 * its computations and collective members and their dependents; 0 when one has no dependent. */
static void topo_idle_after(const topo_prepared *p, const pb_compiled *cg, int n_tasks,
                            double *idle)
{
    const pb_graph *g = p->g;
    for (int v = 0; v < g->n_nodes; v++)
        idle[v] = INFINITY;
    for (int t = 0; t < n_tasks; t++) {
        const topo_task *x = &p->tasks[t];
        if (x->kind == TOPO_TRANSFER)
            continue;
        int v = cg->origin[x->node];
        const int *start = p->deps.start, *list = p->deps.list;
        double least = start[t] == start[t + 1] ? 0 : INFINITY;
        for (int i = start[t]; i < start[t + 1]; i++) {
            int d = list[i], from = d < n_tasks ? i : start[d],
                to = d < n_tasks ? i + 1 : start[d + 1];
            for (int j = from; j < to; j++) { /* a barrier: the tasks waiting on it */
                double gap = p->start[list[j]] - topo_end(p->start, p->tasks, t);
                least = gap < least ? gap : least;
            }
        }
        idle[v] = least < idle[v] ? least : idle[v];
    }
}

/* Reports every task (but the no-op transfers inside a device) through out->task_record, when
 * the caller asked for it. */
static void topo_records(const topo_prepared *p, const pb_compiled *cg, int n_tasks,
                         const pb_eval *out)
{
    static const char *const what[] = {"op", "split", "concat", "addn", "allreduce", "shape"};
    if (out->struct_size < sizeof(pb_eval) || !out->task_record)
        return;
    for (int t = 0; t < n_tasks; t++) {
        const topo_task *x = &p->tasks[t];
        int v = x->node, transfer = x->kind == TOPO_TRANSFER;
        if (transfer && x->resource < 0) /* inside a device: no transfer happens */
            continue;
        pb_task_record r = {
            .struct_size = sizeof r,
            .kind = transfer                     ? PB_TASK_TRANSFER
                    : x->kind == TOPO_COLLECTIVE ? PB_TASK_COLLECTIVE
                                                 : PB_TASK_COMPUTE,
            .op = cg->origin[v],
            .replica = !transfer && cg->kind[v] == PB_CNODE_OP ? cg->replica[v] : -1,
            .what = transfer ? "transfer" : what[cg->kind[v]],
            .src_device = p->info[t].src,
            .dst_device = p->info[t].dst,
            .start_us = p->start[t],
            .end_us = topo_end(p->start, p->tasks, t),
            .bytes = x->kind == TOPO_COMPUTE ? 0 : p->info[t].amount,
        };
        out->task_record(out->task_ctx, &r);
    }
}

static int topo_evaluate(void *prepared, const pb_strategy *s, pb_eval *out, pb_error *err)
{
    topo_prepared *p = prepared;
    if (topo_prepare_strategy(p, s, err))
        return PB_ERR;
    const pb_compiled *cg = p->cg;
    int n_tasks = p->n_tasks;
    topo_reset(p, cg, n_tasks);
    long long pops;
    double time = topo_loop(p, cg, n_tasks, &pops);
    topo_fill(p, cg, n_tasks, time, pops, out);
    topo_records(p, cg, n_tasks, out);
    if (out->struct_size >= sizeof(pb_eval) && out->node_idle_after_us)
        topo_idle_after(p, cg, n_tasks, out->node_idle_after_us);
    return PB_OK;
}

static const pb_simulator_ops topo_ops = {
    .struct_size = sizeof(pb_simulator_ops),
    .create = topo_create,
    .destroy = topo_destroy,
    .prepare = topo_prepare,
    .release = topo_release,
    .evaluate = topo_evaluate,
    .accepts = PB_KIND_BIT(PB_STRATEGY_PLACEMENT) | PB_KIND_BIT(PB_STRATEGY_REPLICATED),
};

PB_PLUGIN_WITH_OPTIONS(PB_KIND_SIMULATOR, "topology", "1.0",
                       "TAG's topology simulator: replicas, AllReduce and PS over a "
                       "heterogeneous cluster's links (specs/tag.md §4)",
                       topo_options, topo_opts, &topo_ops);
