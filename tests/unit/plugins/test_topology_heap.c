/* test_topology_heap.c — the topology simulator's heap against the tie order of Rust's
 * BinaryHeap as TAG's simulator uses it (specs/tag.md §4.3, test vector checked there). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../../plugins/simulator/topology/topology_heap.h"

/* Push ids 0..9 with ends [5,3,3,7,3,5,0,3,5,5]; pop 3; push (10, 3) and (11, 5); pop the rest:
 * 6,1,2,4,7,10,9,5,8,0,11,3. */
static void test_spec_vector(void **state)
{
    (void)state;
    topo_entry h[16];
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
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_spec_vector)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
