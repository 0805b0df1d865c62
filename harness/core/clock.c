/* clock.c — reading the system clocks, for the harness and (monotonic) for plugins. */
#include "clock.h"

double pb_clock_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double pb_clock_monotonic(void)
{
    return pb_clock_seconds(CLOCK_MONOTONIC);
}

double pb_clock_cpu(void)
{
    return pb_clock_seconds(CLOCK_THREAD_CPUTIME_ID);
}
