/* array.h — growing a dynamic array by doubling: the one copy of that loop. */
#ifndef PB_ARRAY_H
#define PB_ARRAY_H

#include <stddef.h>

/* Makes *items (an array of `elem`-byte entries with capacity *cap) hold at least `need`
 * entries, doubling from 16.  Returns 0, or -1 when out of memory (the array is unchanged). */
int array_grow(void *items, int *cap, int need, size_t elem);

#endif
