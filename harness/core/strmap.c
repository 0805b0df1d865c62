/* strmap.c — string → int hash map with FNV-1a hashing. */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

unsigned long long strmap_fnv1a(unsigned long long h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

void strmap_init(strmap *m)
{
    memset(m, 0, sizeof *m);
}

void strmap_free(strmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    strmap_init(m);
}

static size_t strmap_slot(const strmap *m, const char *key)
{
    size_t mask = m->cap - 1;
    size_t i = strmap_fnv1a(STRMAP_FNV_BASIS, key, strlen(key)) & mask;
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & mask;
    return i;
}

int strmap_get(const strmap *m, const char *key)
{
    if (m->cap == 0)
        return -1;
    size_t i = strmap_slot(m, key);
    return m->keys[i] ? m->vals[i] : -1;
}

static int strmap_grow(strmap *m)
{
    strmap old = *m;
    m->cap = old.cap ? old.cap * 2 : 16;
    m->len = 0;
    m->keys = calloc(m->cap, sizeof *m->keys);
    m->vals = calloc(m->cap, sizeof *m->vals);
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        *m = old;
        return -1;
    }
    for (size_t i = 0; i < old.cap; i++) {
        if (!old.keys[i])
            continue;
        size_t j = strmap_slot(m, old.keys[i]);
        m->keys[j] = old.keys[i];
        m->vals[j] = old.vals[i];
        m->len++;
    }
    free(old.keys);
    free(old.vals);
    return 0;
}

int strmap_put(strmap *m, const char *key, int val)
{
    if ((m->len + 1) * 2 > m->cap && strmap_grow(m) != 0)
        return -1;
    size_t i = strmap_slot(m, key);
    if (!m->keys[i]) {
        m->keys[i] = strdup(key);
        if (!m->keys[i])
            return -1;
        m->len++;
    }
    m->vals[i] = val;
    return 0;
}
