/* nn_cpu.c — which vector instruction set this processor offers (asked at run time, never
 * assumed at build time) and its measured one-core FMA peak, the yardstick of FLOP rates. */
#include "nn_internal.h"

#include "core/clock.h"

#include <time.h>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define NN_CPU_X86 1
#else
#define NN_CPU_X86 0
#endif

int nn_cpu_isa(void)
{
#if NN_CPU_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return NN_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return NN_ISA_AVX2;
#endif
    return NN_ISA_PORTABLE;
}

const char *nn_cpu_isa_name(int isa)
{
    return isa == NN_ISA_AVX512 ? "avx512" : isa == NN_ISA_AVX2 ? "avx2" : "portable";
}

/* Twelve independent chains of acc = acc * a + b, enough to cover the FMA latency times the
 * number of FMA pipes of current cores; returns a sum of the chains so that none is dropped. */
#define NN_CPU_CHAINS 12

#if NN_CPU_X86
__attribute__((target("avx512f"))) static float nn_cpu_fma512(long iters)
{
    __m512 acc[NN_CPU_CHAINS], a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (int c = 0; c < NN_CPU_CHAINS; c++)
        acc[c] = _mm512_set1_ps((float)c);
    for (long i = 0; i < iters; i++)
        for (int c = 0; c < NN_CPU_CHAINS; c++)
            acc[c] = _mm512_fmadd_ps(acc[c], a, b);
    for (int c = 1; c < NN_CPU_CHAINS; c++)
        acc[0] = _mm512_add_ps(acc[0], acc[c]);
    return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2,fma"))) static float nn_cpu_fma256(long iters)
{
    __m256 acc[NN_CPU_CHAINS], a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (int c = 0; c < NN_CPU_CHAINS; c++)
        acc[c] = _mm256_set1_ps((float)c);
    for (long i = 0; i < iters; i++)
        for (int c = 0; c < NN_CPU_CHAINS; c++)
            acc[c] = _mm256_fmadd_ps(acc[c], a, b);
    for (int c = 1; c < NN_CPU_CHAINS; c++)
        acc[0] = _mm256_add_ps(acc[0], acc[c]);
    float out[8];
    _mm256_storeu_ps(out, acc[0]);
    return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}
#endif

/* Scalar C: a multiply and an add per step (what the portable kernels do). */
static float nn_cpu_scalar(long iters)
{
    float acc[NN_CPU_CHAINS], a = 0.999999f, b = 1e-7f;
    for (int c = 0; c < NN_CPU_CHAINS; c++)
        acc[c] = (float)c;
    for (long i = 0; i < iters; i++)
        for (int c = 0; c < NN_CPU_CHAINS; c++)
            acc[c] = acc[c] * a + b;
    float s = 0;
    for (int c = 0; c < NN_CPU_CHAINS; c++)
        s += acc[c];
    return s;
}

/* FLOPs of `iters` steps of the loop for isa, run once; *sink keeps the result alive. */
static double nn_cpu_run(int isa, long iters, volatile float *sink)
{
#if NN_CPU_X86
    if (isa == NN_ISA_AVX512) {
        *sink = nn_cpu_fma512(iters);
        return 2.0 * 16 * NN_CPU_CHAINS * (double)iters;
    }
    if (isa == NN_ISA_AVX2) {
        *sink = nn_cpu_fma256(iters);
        return 2.0 * 8 * NN_CPU_CHAINS * (double)iters;
    }
#endif
    *sink = nn_cpu_scalar(iters);
    return 2.0 * NN_CPU_CHAINS * (double)iters;
}

double nn_cpu_peak_gflops(int isa, double seconds)
{
    volatile float sink = 0;
    if (isa > nn_cpu_isa())
        return 0; /* the instructions would fault */
    long iters = 1 << 12;
    double best = 0, spent = 0;
    for (int round = 0; spent < seconds && round < 64; round++) {
        double t0 = pb_clock_seconds(CLOCK_THREAD_CPUTIME_ID);
        double flop = nn_cpu_run(isa, iters, &sink);
        double dt = pb_clock_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
        spent += dt;
        if (dt < seconds / 20) { /* too short to time well: longer rounds */
            iters *= 2;
            continue;
        }
        if (flop / dt > best)
            best = flop / dt;
    }
    (void)sink;
    return best * 1e-9;
}
