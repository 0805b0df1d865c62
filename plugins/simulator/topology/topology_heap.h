/* topology_heap.h — the finished-task heap of the topology simulator: Rust's BinaryHeap with
 * the order TAG's simulator gives it, so that ties pop as in the reference (specs/tag.md §4.3).
 * Header-only so that tests/unit/plugins/test_topology_heap.c checks the spec's test vector. */
#ifndef PB_TOPOLOGY_HEAP_H
#define PB_TOPOLOGY_HEAP_H

/* A finished task: its end time and id. */
typedef struct topo_entry {
    double end;
    int task;
} topo_entry;

/*
 * Rust's BinaryHeap (a max-heap) with the order reversed on the end time alone, so that ties
 * pop in the order the reference's do (specs/tag.md §4.3): "a <= b" is a.end >= b.end.
 */
static inline int topo_le(const topo_entry *a, const topo_entry *b)
{
    return a->end >= b->end;
}

static inline void topo_sift_up(topo_entry *h, int pos, topo_entry x)
{
    while (pos > 0) {
        int parent = (pos - 1) / 2;
        if (topo_le(&x, &h[parent]))
            break;
        h[pos] = h[parent];
        pos = parent;
    }
    h[pos] = x;
}

static inline void topo_push(topo_entry *h, int *n, topo_entry x)
{
    topo_sift_up(h, (*n)++, x);
}

/* BinaryHeap::pop: the last entry replaces the root, the hole walks to the bottom along the
 * children that are not <= their sibling, and the entry climbs back from there. */
static inline topo_entry topo_pop(topo_entry *h, int *n)
{
    topo_entry last = h[--*n];
    if (*n == 0)
        return last;
    topo_entry top = h[0];
    int end = *n, pos = 0, child = 1;
    while (child + 1 < end) {
        child += topo_le(&h[child], &h[child + 1]);
        h[pos] = h[child];
        pos = child;
        child = 2 * pos + 1;
    }
    if (child == end - 1) {
        h[pos] = h[child];
        pos = child;
    }
    topo_sift_up(h, pos, last);
    return top;
}

#endif
