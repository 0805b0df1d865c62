/* devcost.c — per-device-type op times (roofline, calibrated per op class) and TAG's batch-size
 * interpolation. */
#include "devcost.h"

#include <string.h>

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

/* ------------------------------------------------------------------ calibrated kernel times */

static const pb_device_type devcost_k80_die = {
    .name = "K80", .peak_flops = 2.8e12, .mem_bandwidth = 240e9, .speed_vs_ref = 1.0};

const pb_device_type *devcost_k80(void)
{
    return &devcost_k80_die;
}

#define DEVCOST_PD "PipeDream profiles (msr-fiddle/pipedream, profiler/*/profiles/*/graph.txt)"

/*
 * Achieved efficiency per op class: measured time over the roofline time max(flops / peak,
 * bytes / bandwidth) of the same work on the GPU that measured it (a V100: 15.7e12 FLOP/s,
 * 900e9 B/s), the median over the layers of the class in four of PipeDream's published profiles
 * (tests/data/pipedream: resnet50, vgg16 and nasnetamobile at batch 128, gnmt at 64).
 * Backward: the layer's backward time over the roofline of its gradient kernels (input
 * and filter gradients for convolutions and matmuls).  Forward: the layer's forward time less the
 * profiler's 0.27 ms synchronisation floor (the image profiles' shortest forward times are 0.266 to
 * 0.277 ms), over the roofline.  The per-class medians, layer counts and quartiles are printed by
 * test_devcost_calibration, which checks them; README "Cost model calibration" has the table.
 */
static const devcost_factor devcost_factors[DEVCOST_N_CLASSES] = {
    [DEVCOST_OTHER] = {"other", 1.0, 1.0, "no public per-op measurement: plain roofline"},
    [DEVCOST_CONV1X1] = {"conv1x1", 1.83, 4.40, DEVCOST_PD ": Conv2d 1x1"},
    [DEVCOST_CONVKXK] = {"convkxk", 0.70, 0.64, DEVCOST_PD ": Conv2d 3x3 and larger, dense"},
    [DEVCOST_DEPTHWISE3] = {"depthwise3", 1.43, 5.60, DEVCOST_PD ": nasnetamobile 3x3 groups=C"},
    [DEVCOST_DEPTHWISE5] = {"depthwise5", 4.15, 10.54, DEVCOST_PD ": nasnetamobile 5x5 groups=C"},
    [DEVCOST_DEPTHWISE7] = {"depthwise7", 4.93, 18.17, DEVCOST_PD ": nasnetamobile 7x7 groups=C"},
    [DEVCOST_BATCHNORM] = {"batchnorm", 2.78, 3.53, DEVCOST_PD ": BatchNorm2d"},
    [DEVCOST_ELEMENTWISE] = {"elementwise", 0.81, 1.56, DEVCOST_PD ": ReLU"},
    [DEVCOST_MAXPOOL] = {"maxpool", 1.61, 2.52, DEVCOST_PD ": MaxPool2d"},
    [DEVCOST_AVGPOOL] = {"avgpool", 1.63, 14.09, DEVCOST_PD ": AvgPool2d"},
    [DEVCOST_MATMUL] = {"matmul", 1.30, 1.19, DEVCOST_PD ": gnmt LSTM layers"},
};

const devcost_factor *devcost_factor_of(devcost_class c)
{
    return &devcost_factors[c > DEVCOST_OTHER && c < DEVCOST_N_CLASSES ? c : DEVCOST_OTHER];
}

const char *devcost_model_name(devcost_model m)
{
    return m == DEVCOST_ROOFLINE ? "roofline" : "calibrated";
}

int devcost_model_parse(const char *name, devcost_model *out)
{
    if (strcmp(name, "calibrated") == 0)
        *out = DEVCOST_CALIBRATED;
    else if (strcmp(name, "roofline") == 0)
        *out = DEVCOST_ROOFLINE;
    else
        return -1;
    return 0;
}

/* Whether `type` is one of the NULL-terminated names. */
static int devcost_is(const char *type, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(type, names[i]) == 0)
            return 1;
    return 0;
}

devcost_class devcost_classify(const char *type, int kernel)
{
    static const char *const elementwise[] = {
        "Relu",     "ReluGrad",  "Relu6",       "Relu6Grad", "Tanh",
        "TanhGrad", "Sigmoid",   "SigmoidGrad", "Add",       "AddV2",
        "AddN",     "Sub",       "Mul",         "RealDiv",   "Neg",
        "BiasAdd",  "Maximum",   "Minimum",     "Square",    "Sqrt",
        "Rsqrt",    "RsqrtGrad", "Exp",         "Pow",       "SquaredDifference",
        "Erf",      NULL};
    if (strncmp(type, "Conv2D", 6) == 0)
        return kernel <= 1 ? DEVCOST_CONV1X1 : DEVCOST_CONVKXK;
    if (strncmp(type, "DepthwiseConv2dNative", 21) == 0)
        return kernel <= 3   ? DEVCOST_DEPTHWISE3
               : kernel <= 5 ? DEVCOST_DEPTHWISE5
                             : DEVCOST_DEPTHWISE7;
    if (strncmp(type, "FusedBatchNorm", 14) == 0)
        return DEVCOST_BATCHNORM;
    if (strncmp(type, "MaxPool", 7) == 0)
        return DEVCOST_MAXPOOL;
    if (strncmp(type, "AvgPool", 7) == 0)
        return DEVCOST_AVGPOOL;
    if (strcmp(type, "MatMul") == 0 || strncmp(type, "BatchMatMul", 11) == 0)
        return DEVCOST_MATMUL;
    return devcost_is(type, elementwise) ? DEVCOST_ELEMENTWISE : DEVCOST_OTHER;
}

double devcost_kernel_us(const pb_device_type *t, devcost_model m, devcost_class c, int backward,
                         double flops, double bytes)
{
    double compute = flops / t->peak_flops, memory = bytes / t->mem_bandwidth;
    double roof = 1e6 * (compute > memory ? compute : memory);
    if (m == DEVCOST_ROOFLINE)
        return DEVCOST_LAUNCH_US + roof;
    const devcost_factor *f = devcost_factor_of(c);
    return DEVCOST_LAUNCH_US + (backward ? f->backward : f->forward) * roof;
}
