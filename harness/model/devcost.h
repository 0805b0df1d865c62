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
 * The dataset generators' kernel times (cifar10, ptb, nmt and the zoo's op-level graphs), on one
 * GK210 die of a Tesla K80 (the Placeto measurements ran on K80s): 2.8e12 fp32 FLOP/s at base
 * clock (the board's 5.6 TFLOPS over its two dies), 240e9 B/s of GDDR5 (480 GB/s per board), and
 * DEVCOST_LAUNCH_US per kernel.  Two models:
 *   roofline    t = launch + max(flops / peak, bytes / bandwidth): the plain roofline at the
 *               device's peaks (dataset version 1; kept so old graphs stay reproducible);
 *   calibrated  t = launch + factor(class, direction) * max(flops / peak, bytes / bandwidth): the
 *               roofline scaled by the achieved efficiency measured per op class (the default).
 * The factors (devcost.c, devcost_factors) are medians of measured time over this roofline in
 * PipeDream's published per-layer profiles (V100 roofline; README "Cost model calibration"), and
 * are checked against those profiles by tests/unit/model/test_devcost_calibration.c.
 */
typedef enum devcost_model {
    DEVCOST_CALIBRATED = 0, /* the default: zero-initialised options get it */
    DEVCOST_ROOFLINE = 1
} devcost_model;

/* The op classes the calibration distinguishes. */
typedef enum devcost_class {
    DEVCOST_OTHER = 0,   /* no public measurement: plain roofline (factor 1) */
    DEVCOST_CONV1X1,     /* Conv2D and its two backprops with a 1x1 filter */
    DEVCOST_CONVKXK,     /* the same with a larger filter */
    DEVCOST_DEPTHWISE3,  /* DepthwiseConv2dNative (and backprops), 3x3 or smaller */
    DEVCOST_DEPTHWISE5,  /* 5x5 */
    DEVCOST_DEPTHWISE7,  /* 7x7 and larger */
    DEVCOST_BATCHNORM,   /* FusedBatchNorm / FusedBatchNormGrad */
    DEVCOST_ELEMENTWISE, /* Relu, Tanh, Sigmoid, Add, Mul, ... and their gradients */
    DEVCOST_MAXPOOL,     /* MaxPool / MaxPoolGrad */
    DEVCOST_AVGPOOL,     /* AvgPool / AvgPoolGrad */
    DEVCOST_MATMUL,      /* MatMul / BatchMatMul (the LSTM matmuls) */
    DEVCOST_N_CLASSES
} devcost_class;

/* A row of the calibration table: the factors over the roofline and where they come from. */
typedef struct devcost_factor {
    const char *name; /* short class name, e.g. "conv1x1" */
    double forward, backward;
    const char *source;
} devcost_factor;

/* The K80 die above as a catalog entry (static storage). */
const pb_device_type *devcost_k80(void);
/* Row c of the table (static storage); row DEVCOST_OTHER for an out-of-range c. */
const devcost_factor *devcost_factor_of(devcost_class c);
/* "calibrated" / "roofline"; devcost_model_parse returns -1 for another name. */
const char *devcost_model_name(devcost_model m);
int devcost_model_parse(const char *name, devcost_model *out);
/*
 * The class of a TensorFlow op type; `kernel` is the filter's spatial size for convolutions (kh,
 * ignored otherwise).  Types without a measured class get DEVCOST_OTHER.
 */
devcost_class devcost_classify(const char *type, int kernel);
/* µs of a kernel of class c (backward: a gradient op) doing `flops` and moving `bytes` on t
 * (borrowed) under model m. */
double devcost_kernel_us(const pb_device_type *t, devcost_model m, devcost_class c, int backward,
                         double flops, double bytes);

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
