/* devcost_pb.c — the cost model of devcost.h exported to plugins (placebench.h, ABI 1.9). */
#include "devcost.h"

double pb_op_time_us(const pb_device_type *t, double flops, double bytes)
{
    return devcost_op_us(t, flops, bytes);
}
