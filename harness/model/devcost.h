/* devcost.h — the one cost model of an op on a device type: roofline with achieved efficiency
 * and a per-op overhead, and TAG's linear model of time against batch size. */
#ifndef PB_DEVCOST_H
#define PB_DEVCOST_H

#include "placebench.h"

/*
 * Time of an op on a device type of the catalog (configs/clusters.lua: peak FLOP/s and memory
 * bandwidth):
 *     t = overhead + max(flops / (DEVCOST_COMPUTE_EFF peak), bytes / (DEVCOST_MEMORY_EFF bw))
 * with the achieved fractions and the kernel overhead of specs/gdp.md §11.2 (η_c 0.5, η_m 0.7,
 * about 5 µs per kernel launch).  An op that moves nothing and computes nothing (a variable, a
 * read, a NoOp, a Const) is bookkeeping on the host: DEVCOST_HOST_US on every device.
 */
#define DEVCOST_COMPUTE_EFF 0.5
#define DEVCOST_MEMORY_EFF 0.7
#define DEVCOST_LAUNCH_US 5.0
#define DEVCOST_HOST_US 1.0

/* µs of an op doing `flops` and moving `bytes` on device type t (borrowed). */
double devcost_op_us(const pb_device_type *t, double flops, double bytes);

/*
 * TAG's batch-size model (paper §4.1.2; specs/tag.md §2.5, ProfileData.get): from times[i]
 * measured at batches[i] (n >= 1 points, batches strictly increasing), the time at batch b by
 * the straight line through the two neighbouring points (the first or last pair beyond the
 * ends, so it extrapolates), clamped at 0.  With one point the line goes through it and through
 * (0, overhead_us): the per-op overhead does not scale with the batch.
 */
double devcost_at_batch(const double *batches, const double *times, int n, double b,
                        double overhead_us);

#endif
