/* paper_tag.c — TAG's published testbed figures (Zhang et al., "Expediting Distributed DNN
 * Training with Device Topology-Aware Graph Deployment", §5.3, §5.7, §5.8): Table 4, the
 * speed-up ranges of Fig. 5, Table 7 (iterations to beat DP-NCCL) and Table 8 (hold-out model). */
#include "papers.h"

#include <math.h>

static const char *const paper_tag_types[] = {"V100-32G", "1080Ti", "P100"};

/* Table 4: GPUs of each type (V100, 1080Ti, P100) ops are replicated onto, on average, and the
 * gradients synchronised by PS and AllReduce (ResNet101's 67 % + 23 % and BERT-Large's 3.5 % +
 * 0 % are as printed). */
static const papers_tag_model paper_tag_models[] = {
    {"inceptionv3", "InceptionV3", {4.0, 8.0, 0.0}, 100, 0, 66.0, 9.5, 456.1, 456.1, 117.7, 117.7},
    {"vgg19", "VGG19", {4.0, 2.1, 0.0}, 100, 0, 56.6, 17.7, 286.2, 213.6, 43.6, 43.6},
    {"resnet101", "ResNet101", {4.0, 8.0, 4.0}, 67, 23, 73.4, 4.6, 7.7, 7.1, 12.2, 10.4},
    {"transformer",
     "Transformer",
     {4.0, 8.0, 0.0},
     1.7,
     98.3,
     145.0,
     121.8,
     80.3,
     80.3,
     15.0,
     13.4},
    {"bert-small", "Bert-Small", {3.9, 0.1, 0.1}, 15.0, 85.0, 97.8, 7.9, 298.4, 279.6, 84.5, 84.5},
    {"bert-large", "Bert-Large", {0.6, 0.5, 0.1}, 3.5, 0, NAN, NAN, NAN, NAN, NAN, NAN},
};

static const papers_tag_tables paper_tag_tables = {
    .tables = "Table 4, Fig. 5, Tables 7 and 8",
    .types = paper_tag_types,
    .models = paper_tag_models,
    .n_models = (int)(sizeof paper_tag_models / sizeof paper_tag_models[0]),
    .speedup_dp_pct = {8, 456},
    .speedup_dpp_pct = {1, 391},
    .oom_note = "DP-NCCL and DP-NCCL-P run out of memory on BERT-Large",
};

const papers_paper paper_tag = {
    .name = "TAG paper",
    .title = "Expediting Distributed DNN Training with Device Topology-Aware Graph Deployment",
    .placer = "tag",
    .tag = &paper_tag_tables,
};
