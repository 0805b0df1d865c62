/* clock.h — the system clocks in seconds: the one place that calls clock_gettime. */
#ifndef PB_CLOCK_H
#define PB_CLOCK_H

#include "placebench.h" /* pb_clock_monotonic, the same clock for plugins */

#include <time.h>

/* Seconds on `clock`: CLOCK_MONOTONIC for durations and deadlines, CLOCK_REALTIME for
 * timestamps, CLOCK_PROCESS_CPUTIME_ID for this process's CPU time. */
double pb_clock_seconds(clockid_t clock);

#endif
