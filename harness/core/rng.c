/* rng.c — xoshiro256** with splitmix64 seeding, and seed derivation; the only randomness source. */
#include "placebench.h"

#include <string.h>

static uint64_t rng_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void pb_rng_seed(pb_rng *rng, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = rng_splitmix64(&x);
}

static uint64_t rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t pb_rng_next(pb_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rng_rotl(s[3], 45);
    return result;
}

uint64_t pb_rng_below(pb_rng *rng, uint64_t n)
{
    /* Rejection sampling on the top of the range keeps the draw unbiased. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
        x = pb_rng_next(rng);
    } while (x >= limit);
    return x % n;
}

double pb_rng_uniform(pb_rng *rng)
{
    return (double)(pb_rng_next(rng) >> 11) * 0x1.0p-53;
}

void pb_rng_shuffle(pb_rng *rng, int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)pb_rng_below(rng, (uint64_t)i + 1);
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

uint64_t pb_seed_derive(uint64_t parent, const char *label)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ parent;
    for (const unsigned char *p = (const unsigned char *)label; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return rng_splitmix64(&h);
}
