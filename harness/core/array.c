/* array.c — growing a dynamic array by doubling. */
#include "array.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int array_grow(void *items, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int ncap = *cap > 0 ? *cap : 16;
    while (ncap < need) {
        if (ncap > INT_MAX / 2)
            return -1;
        ncap *= 2;
    }
    void *old;
    memcpy(&old, items, sizeof old);
    void *grown = realloc(old, (size_t)ncap * elem);
    if (!grown)
        return -1;
    memcpy(items, &grown, sizeof grown);
    *cap = ncap;
    return 0;
}
