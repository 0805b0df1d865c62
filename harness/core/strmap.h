/* strmap.h — string → int hash map (open addressing) used for name lookups. */
#ifndef PB_STRMAP_H
#define PB_STRMAP_H

#include <stddef.h>

typedef struct strmap {
    char **keys; /* owned copies */
    int *vals;
    size_t cap; /* power of two */
    size_t len;
} strmap;

void strmap_init(strmap *m);
void strmap_free(strmap *m);
/* Returns the value for key or -1. */
int strmap_get(const strmap *m, const char *key);
/* Inserts or replaces; returns 0, or -1 when out of memory. */
int strmap_put(strmap *m, const char *key, int val);
/* FNV-1a 64-bit hash of n bytes continuing from h (start with STRMAP_FNV_BASIS). */
#define STRMAP_FNV_BASIS 0xcbf29ce484222325ULL
unsigned long long strmap_fnv1a(unsigned long long h, const void *data, size_t n);

#endif
