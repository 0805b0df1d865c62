/* devcost.c — per-device-type op times (roofline) and TAG's batch-size interpolation. */
#include "devcost.h"

double devcost_op_us(const pb_device_type *t, double flops, double bytes)
{
    if (flops <= 0 && bytes <= 0)
        return DEVCOST_HOST_US;
    double compute = t->peak_flops > 0 ? flops / (DEVCOST_COMPUTE_EFF * t->peak_flops) : 0;
    double memory = t->mem_bandwidth > 0 ? bytes / (DEVCOST_MEMORY_EFF * t->mem_bandwidth) : 0;
    return DEVCOST_LAUNCH_US + 1e6 * (compute > memory ? compute : memory);
}

double devcost_at_batch(const double *batches, const double *times, int n, double b,
                        double overhead_us)
{
    if (n <= 0)
        return 0;
    double x1 = 0, y1 = overhead_us, x2 = batches[0], y2 = times[0];
    if (n >= 2) {
        int k = 1; /* bisect_left over batches[1..n-2]: the first pair whose right end >= b */
        while (k < n - 1 && batches[k] < b)
            k++;
        x1 = batches[k - 1];
        y1 = times[k - 1];
        x2 = batches[k];
        y2 = times[k];
    }
    if (x2 == x1)
        return y2;
    double t = y2 * (b - x1) / (x2 - x1) + y1 * (x2 - b) / (x2 - x1);
    return t > 0 ? t : 0;
}
