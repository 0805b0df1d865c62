/* test_topology_heap.c — the topology simulator's heap against the tie order of Rust's
 * BinaryHeap as TAG's simulator uses it (specs/tag.md §4.3, test vector checked there), and
 * against a plain transcription of BinaryHeap (the simulator's heap before its layout work) on
 * random event streams full of ties. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <cmocka.h>

#include "../../../plugins/simulator/topology/topology_heap.h"

/* Push ids 0..9 with ends [5,3,3,7,3,5,0,3,5,5]; pop 3; push (10, 3) and (11, 5); pop the rest:
 * 6,1,2,4,7,10,9,5,8,0,11,3. */
static void test_spec_vector(void **state)
{
    (void)state;
    topo_entry *h = topo_heap_alloc(16);
    assert_non_null(h);
    int n = 0;
    static const double ends[10] = {5, 3, 3, 7, 3, 5, 0, 3, 5, 5};
    for (int i = 0; i < 10; i++)
        topo_push(h, &n, (topo_entry){ends[i], i});
    int got[12], k = 0;
    for (int i = 0; i < 3; i++)
        got[k++] = topo_pop(h, &n).task;
    topo_push(h, &n, (topo_entry){3, 10});
    topo_push(h, &n, (topo_entry){5, 11});
    while (n > 0)
        got[k++] = topo_pop(h, &n).task;
    static const int want[12] = {6, 1, 2, 4, 7, 10, 9, 5, 8, 0, 11, 3};
    assert_int_equal(k, 12);
    assert_memory_equal(got, want, sizeof want);
    topo_heap_free(h);
}

/* Rust's BinaryHeap transcribed index by index (library/alloc/src/collections/binary_heap):
 * push sifts up while the new entry is not <= its parent; pop moves the last entry to the root,
 * walks the hole to the bottom along the child that is not <= its sibling, then sifts up. */
static void ref_sift_up(topo_entry *h, int pos, topo_entry x)
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

static topo_entry ref_pop(topo_entry *h, int *n)
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
    ref_sift_up(h, pos, last);
    return top;
}

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Event streams as the simulator makes them: time never goes back, each pop may push a few
 * entries ending now (zero-length tasks) or a little later, drawn from so few values that most
 * pops are among ties; sizes from 1 to thousands of entries.  Every pop, and the whole array
 * (after each operation while small, then every 97th), must equal the transcription's. */
static void test_random_streams(void **state)
{
    (void)state;
    enum { CAP = 20000 };
    topo_entry *h = topo_heap_alloc(CAP), *r = calloc(CAP, sizeof *r);
    assert_non_null(h);
    assert_non_null(r);
    long long pops = 0, ties = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        uint64_t s = seed;
        int n = 0, m = 0, id = 0, target = 1 + (int)(rng_next(&s) % (seed % 3 ? 64 : 6000));
        int spread = 1 + (int)(rng_next(&s) % 8); /* distinct future times: few, many ties */
        double now = 0, last_end = -1;
        for (int i = 0; i < target; i++) {
            topo_entry x = {(double)(rng_next(&s) % (uint64_t)spread), id++};
            topo_push(h, &n, x);
            ref_sift_up(r, m++, x);
        }
        for (int step = 0; n > 0 && step < 40000; step++) {
            topo_entry a = topo_pop(h, &n), b = ref_pop(r, &m);
            assert_int_equal(a.task, b.task);
            assert_true(a.end == b.end && a.end >= now);
            ties += a.end == last_end;
            last_end = now = a.end;
            pops++;
            int k = (int)(rng_next(&s) % 4); /* 0-3 new entries; about 1.5 a pop keeps it full */
            for (int j = 0; j < k && n + 1 < CAP && id < 4 * target + 8; j++) {
                uint64_t u = rng_next(&s);
                double end = u % 3 == 0 ? now : now + (double)((u >> 8) % (uint64_t)spread);
                topo_entry x = {end, id++};
                topo_push(h, &n, x);
                ref_sift_up(r, m++, x);
            }
            assert_int_equal(n, m);
            if (n < 256 || step % 97 == 0) /* the whole tree, not only the pops */
                assert_memory_equal(h, r, (size_t)n * sizeof *h);
        }
        assert_int_equal(n, 0);
    }
    assert_true(ties > pops / 2); /* the streams do test the tie order */
    topo_heap_free(h);
    free(r);
}

/* The layout: an entry's two children share a cache line, its four grandchildren fill one. */
static void test_layout(void **state)
{
    (void)state;
    topo_entry *h = topo_heap_alloc(100);
    assert_non_null(h);
    for (uintptr_t i = 0; i < 20; i++) {
        assert_int_equal((uintptr_t)&h[2 * i + 1] / 64, (uintptr_t)&h[2 * i + 2] / 64);
        assert_int_equal((uintptr_t)&h[4 * i + 3] % 64, 0);
    }
    topo_heap_free(h);
}

/* The pop compares end times as integers (topo_key): for every time the simulator makes
 * (+0, subnormals, any positive double, +inf) that order, ties included, is the doubles'. */
static void test_integer_keys(void **state)
{
    (void)state;
    static const double t[] = {0.0,
                               4.9e-324,
                               2.2e-308,
                               1e-300,
                               0.5,
                               1.0,
                               1.0000000000000002,
                               3.0,
                               5.7,
                               25.0,
                               1e15,
                               9007199254740993.0,
                               1e300,
                               1.7976931348623157e308,
                               INFINITY};
    size_t n = sizeof t / sizeof t[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            topo_entry a = {t[i], 0}, b = {t[j], 1};
            assert_int_equal(topo_key(&a) >= topo_key(&b), t[i] >= t[j]);
            assert_int_equal(topo_key(&a) == topo_key(&b), t[i] == t[j]);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_vector), cmocka_unit_test(test_random_streams),
        cmocka_unit_test(test_layout), cmocka_unit_test(test_integer_keys)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
