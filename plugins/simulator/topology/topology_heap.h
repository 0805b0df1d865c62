/* topology_heap.h — the finished-task heap of the topology simulator: Rust's BinaryHeap with
 * the order TAG's simulator gives it, so that ties pop as in the reference (specs/tag.md §4.3).
 * Header-only so that tests/unit/plugins/test_topology_heap.c checks the spec's test vector and
 * pops in the order of the straightforward transcription on random event streams. */
#ifndef PB_TOPOLOGY_HEAP_H
#define PB_TOPOLOGY_HEAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A finished task: its end time and id (16 bytes). */
typedef struct topo_entry {
    double end;
    int task;
} topo_entry;

/* The walks below round byte offsets to whole entries, and the layout puts siblings in a line. */
_Static_assert(sizeof(topo_entry) == 16, "a heap entry is 16 bytes");

/*
 * Rust's BinaryHeap (a max-heap) with the order reversed on the end time alone, so that ties
 * pop in the order the reference's do (specs/tag.md §4.3): "a <= b" is a.end >= b.end.  Which
 * of two tied entries pops first depends on where they sit in the tree, so only this exact tree
 * (not a d-ary heap, a radix heap or buckets of equal times) gives the reference's schedules.
 *
 * What is tuned is the memory, not the tree: the array starts 16 bytes past a 64-byte boundary
 * (topo_heap_alloc), so that the two children of any entry (2i + 1, 2i + 2) share one cache line
 * and the four grandchildren (4i + 3 .. 4i + 6) fill one line exactly, which a pop's walk
 * loads a level ahead; the walks count in bytes (entry i at 16 i), so that a level is a few
 * instructions.
 */
static inline int topo_le(const topo_entry *a, const topo_entry *b)
{
    return a->end >= b->end;
}

/* An array of n entries laid out as above; free it with topo_heap_free.  NULL when out of
 * memory.  A pop reads (never writes) the grandchildren of the entries it walks past, up to
 * entry 2 n + 2: those are allocated too (address space only, until a walk touches them). */
static inline topo_entry *topo_heap_alloc(size_t n)
{
    size_t bytes = (2 * n + 8) * sizeof(topo_entry);
    unsigned char *base = aligned_alloc(64, (bytes + 63) / 64 * 64);
    return base ? (topo_entry *)(base + 16) : NULL;
}

static inline void topo_heap_free(topo_entry *h)
{
    if (h)
        free((unsigned char *)h - 16);
}

/* Entry x climbs from the hole at byte offset pos (entry pos / 16) while it is not <= its
 * parent. */
static inline void topo_sift_up_bytes(topo_entry *h, size_t pos, topo_entry x)
{
    char *base = (char *)h;
    const size_t size = sizeof(topo_entry);
    while (pos > 0) {
        size_t parent = (pos - size) / 2 & ~(size - 1); /* 16 ((i - 1) / 2) */
        const topo_entry *up = (const topo_entry *)(base + parent);
        if (x.end >= up->end) /* topo_le(&x, up) */
            break;
        *(topo_entry *)(base + pos) = *up;
        pos = parent;
    }
    *(topo_entry *)(base + pos) = x;
}

static inline void topo_sift_up_at(topo_entry *h, size_t pos, topo_entry x)
{
    topo_sift_up_bytes(h, pos * sizeof(topo_entry), x);
}

static inline void topo_push(topo_entry *h, int *n, topo_entry x)
{
    topo_sift_up_at(h, (size_t)(*n)++, x);
}

/* The order of end times as integers: for times >= +0 (and +inf), which every end time of the
 * simulator is (sums of a start >= +0 and a duration >= 0, never -0 or NaN), the IEEE-754 bit
 * patterns compare as signed 64-bit integers exactly as the times do, ties included; a compare
 * and a conditional move on integers are each a cycle, on doubles several. */
static inline int64_t topo_key(const topo_entry *e)
{
    int64_t k;
    memcpy(&k, &e->end, sizeof k);
    return k;
}

/* BinaryHeap::pop: the last entry replaces the root, the hole walks to the bottom along the
 * children that are not <= their sibling (the right one on a tie), and the entry climbs back
 * from there.
 *
 * The walk is bound by latency: each level's comparison needs the children of the entry the
 * previous comparison chose.  So it runs a level ahead: while the children's end times (e0, e1)
 * are compared, the four grandchildren's (one cache line, addressed from the hole alone) are
 * loaded, and the comparison only selects which pair is the next level's; a level's chain is a
 * comparison and a select, and the load overlaps the level before.  The grandchildren of the
 * last levels may lie past the heap's end (never past the allocation: topo_heap_alloc): they are
 * loaded but not compared.  Same comparisons (topo_key), same moves, same tree. */
static inline topo_entry topo_pop(topo_entry *h, int *n)
{
    *n -= 1;
    size_t end = (size_t)*n;
    topo_entry last = h[end];
    if (end == 0)
        return last;
    topo_entry top = h[0];
    char *base = (char *)h;
    const size_t size = sizeof(topo_entry);
    size_t pos = 0, child = size, stop = (end - 1) * size; /* both children while child < stop */
    int64_t e0 = topo_key(&h[1]), e1 = topo_key(&h[2]);    /* the children of the hole */
    while (child < stop) {
        const topo_entry *g = (const topo_entry *)(base + 2 * child + size); /* grandchildren */
        int64_t g0 = topo_key(&g[0]), g1 = topo_key(&g[1]);
        int64_t g2 = topo_key(&g[2]), g3 = topo_key(&g[3]);
        int right = e0 >= e1;           /* topo_le(&c[0], &c[1]): ties go right */
        int64_t mask = -(int64_t)right; /* selects without a branch (compilers make ?: one) */
        child += (size_t)right * size;
        *(topo_entry *)(base + pos) = *(const topo_entry *)(base + child);
        e0 = g0 ^ ((g0 ^ g2) & mask);
        e1 = g1 ^ ((g1 ^ g3) & mask);
        pos = child;
        child = 2 * child + size;
    }
    if (child == stop) {
        *(topo_entry *)(base + pos) = *(const topo_entry *)(base + child);
        pos = child;
    }
    topo_sift_up_bytes(h, pos, last);
    return top;
}

#endif
