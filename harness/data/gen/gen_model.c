/* gen_model.c — the model zoo's registry: names, defaults, the papers' figures, dispatch. */
#include "gen_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024.0 * 1024.0)

/*
 * The papers' figures.  TAG Table 3 gives op counts and "parameter size" in MiB of float32
 * trainable weights (VGG19's 143.7 M parameters are 548 MiB).  GDP §6.3 (and its Table 1) gives
 * op counts only.  HeterPS §6 gives the layer counts of its four workloads.  TAG's BERT sizes
 * leave out the 305,220-row word-embedding table: the rest matches them within 0.1 %.
 */
static const gen_model gen_models[] = {
    {"vgg19",
     "TAG",
     "tf.contrib.slim vgg_19 at 224x224, sigmoid cross-entropy, Adam (whole GraphDef)",
     96,
     0,
     0,
     0,
     NULL,
     {{0, 1169, 548 * MiB, "TAG Table 3"}},
     1,
     NULL,
     gen_vgg19_generate,
     NULL,
     .n_opts = 0},
    {"resnet101",
     "TAG",
     "tf.contrib.slim resnet_v2_101 at 224x224, sigmoid cross-entropy, Adam (whole GraphDef)",
     96,
     0,
     0,
     0,
     NULL,
     {{0, 7951, 169 * MiB, "TAG Table 3"}},
     1,
     NULL,
     gen_resnet101_generate,
     NULL,
     .n_opts = 0},
    {"inceptionv3",
     "TAG",
     "tf.contrib.slim inception_v3 at 224x224 (aux head), sigmoid cross-entropy, Adam (whole "
     "GraphDef)",
     96,
     0,
     0,
     0,
     NULL,
     {{0, 5312, 90 * MiB, "TAG Table 3"}},
     1,
     NULL,
     gen_inceptionv3_generate,
     NULL,
     .n_opts = 0},
    {"transformer",
     "TAG",
     "lilianweng/transformer-tensorflow, 6+6 layers, d 512, ff 2048, 8 heads, seq 10, WMT'14 "
     "50k vocabularies, TAG's Adam (whole GraphDef)",
     480,
     0,
     0,
     0,
     NULL,
     {{0, 16859, 407 * MiB, "TAG Table 3"}},
     1,
     NULL,
     gen_transformer_generate,
     NULL,
     .n_opts = 0},
    {"bert-small",
     "TAG",
     "google-research/bert, H = I = 1024, 4 layers, 16 heads, seq 128, SQuAD head, Adam (whole "
     "GraphDef)",
     96,
     0,
     0,
     0,
     NULL,
     {{0, 5061, 98 * MiB, "TAG Table 3 (size without the embedding tables)"}},
     1,
     "word_embeddings",
     gen_bert_small_generate,
     NULL,
     .n_opts = 0},
    {"bert-large",
     "TAG",
     "google-research/bert, H = I = 2048, 24 layers, 16 heads, seq 128, SQuAD head, Adam "
     "(whole GraphDef)",
     16,
     0,
     0,
     0,
     NULL,
     {{0, 26601, 2313 * MiB, "TAG Table 3 (size without the embedding tables)"}},
     1,
     "word_embeddings",
     gen_bert_large_generate,
     NULL,
     .n_opts = 0},
    {"rnnlm",
     "GDP",
     "stacked LSTM language model (hidden 2048, vocabulary 10k), unrolled 48 steps, SGD",
     64,
     2,
     1,
     16,
     "LSTM layers",
     {{2, 9021, 0, "GDP §6.3.3 / Table 1"}},
     1,
     NULL,
     gen_rnnlm_generate,
     NULL,
     .opts = {{"steps", 48, 1, 400,
               "unrolled steps T, the spec's calibration knob (Zaremba's 35 to start; 48 "
               "matches the paper's 9,021 ops)"},
              {"vocab", 10000, 2, 10000000, "vocabulary (the spec's [I]: Zaremba's PTB, 10,000)"}},
     .n_opts = 2},
    {"gnmt",
     "GDP",
     "tensorflow/nmt gnmt_v2 (1024 units, normed Bahdanau, vocabulary 32k), 50+50 steps, SGD",
     64,
     2,
     2,
     16,
     "LSTM layers per side",
     {{2, 28044, 0, "GDP §6.3 / Table 1"},
      {4, 46600, 0, "GDP §6.3 / Table 1"},
      {8, 83712, 0, "GDP §6.3 / Table 1"}},
     3,
     NULL,
     gen_gnmt_generate,
     NULL,
     .opts = {{"steps", 50, 1, 400,
               "unrolled source and target steps (max length 50, the spec's [I])"}},
     .n_opts = 1},
    {"inceptionv3-gdp",
     "GDP",
     "tf-slim inception_v3 at 299x299, 1001 classes, unfused batch norm, weight decay, aux loss, "
     "RMSProp, moving averages (whole GraphDef)",
     64,
     0,
     0,
     0,
     NULL,
     {{0, 24713, 0, "GDP §6.3.1"}},
     1,
     NULL,
     gen_inceptionv3_gdp_generate,
     NULL,
     .opts = {{"fused_bn", 0, 0, 1,
               "1: slim's fused batch norm (FusedBatchNorm); 0: unfused (moments, rsqrt, "
               "moving-average updates), the spec's [I] reading of 24,713 ops"},
              {"ema", 1, 0, 1,
               "1: tf.train.ExponentialMovingAverage (0.9999) over the model variables, as "
               "train_image_classifier's --moving_average_decay; 0: none"}},
     .n_opts = 2},
    {"amoebanet",
     "GDP",
     "tensorflow/tpu amoeba_net, AmoebaNet-A cells (256 filters), 299x299, aux head, weight decay, "
     "RMSProp",
     64,
     8,
     3,
     48,
     "normal cells (2 stem and 2 reduction cells besides)",
     {{8, 9430, 0, "GDP §6.3.2 (8 normal cells: the count's calibration, see gen_amoebanet.c)"}},
     1,
     NULL,
     gen_amoebanet_generate,
     "c",
     .opts = {{"ema", 0, 0, 1,
               "1: the tpu trainer's variable EMA (0.9999); 0 (default): left out, so that 8 "
               "cells land near the paper's count (gen_amoebanet.c)"}},
     .n_opts = 1},
    {"transformer-xl",
     "GDP",
     "kimiyoung/transformer-xl, d 500, ff 1000, 10x50 heads, 4 segments of 64 with memory, "
     "vocabulary 10k, Adam",
     64,
     2,
     1,
     16,
     "layers",
     {{2, 2618, 0, "GDP §6.3.5"}},
     1,
     NULL,
     gen_transformer_xl_generate,
     NULL,
     .opts = {{"segments", 4, 1, 16,
               "segments unrolled in one graph (the spec's [I]: 256 tokens / 64)"},
              {"mem_len", 64, 1, 4096, "memory length of each layer (the spec's [I]: 64)"},
              {"mask", 1, 0, 1, "1: the causal attention mask ops; 0: left out (spec knob)"},
              {"dropout", 0, 0, 1,
               "1: tf.layers.dropout on the embeddings, attention probabilities and output, "
               "both feed-forward layers and the last output, as kimiyoung trains; 0: none"},
              {"vocab", 10000, 2, 10000000,
               "vocabulary of the embedding and the full softmax (the spec's [I]: 10k)"}},
     .n_opts = 5},
    {"wavenet",
     "GDP",
     "ibab/tensorflow-wavenet, S stacks of 9 dilated layers (1..256), 32/32/512 channels, "
     "receptive field + 4,096 samples, Adam",
     64,
     5,
     1,
     GEN_MODEL_MAX_WAVENET_STACKS,
     "stacks of 9 dilated layers",
     {{5, 4374, 0, "GDP §6.3.6"}, {10, 8516, 0, "GDP §6.3.6"}},
     2,
     NULL,
     gen_wavenet_generate,
     "s",
     .opts = {{"input_extra", 4096, 1, 1 << 20,
               "samples beyond the receptive field in the input (the spec's [I]: 4,096)"}},
     .n_opts = 1},
    {"matchnet",
     "HeterPS",
     "multiview SimNet (GRU towers), layer chain",
     512,
     0,
     0,
     0,
     NULL,
     {{0, 16, 0, "HeterPS §6.1: MATCHNET (16)"}},
     1,
     NULL,
     gen_matchnet_generate,
     NULL,
     .n_opts = 0},
    {"ctrdnn",
     "HeterPS",
     "PaddleRec CTR-DNN with L-5 FC layers of 400, layer chain",
     512,
     16,
     7,
     GEN_CTRDNN_MAX_LAYERS,
     "layers of the chain",
     {{16, 16, 0, "HeterPS §6.1: CTRDNN (16)"},
      {8, 8, 0, "HeterPS §6.2: CTRDNN of 8, 12, 16 and 20 layers"},
      {12, 12, 0, "HeterPS §6.2: CTRDNN of 8, 12, 16 and 20 layers"},
      {20, 20, 0, "HeterPS §6.2: CTRDNN of 8, 12, 16 and 20 layers"},
      {7, 7, 0, "HeterPS §6.3: CTRDNN of 7 layers"}},
     5,
     NULL,
     gen_ctrdnn_generate,
     NULL,
     .opts = {{"dnn", 0, 0, 1,
               "1: the newer PaddleRec models/rank/dnn (rows of 9, FC 512-256-128-32, 9 "
               "layers: --layers 9), which the spec keeps as an option; 0: the classic CTR-DNN"}},
     .n_opts = 1},
    {"2emb",
     "HeterPS",
     "wide & deep with two embedding tables, layer chain",
     512,
     0,
     0,
     0,
     NULL,
     {{0, 10, 0, "HeterPS §6.1: 2EMB (10)"}},
     1,
     NULL,
     gen_2emb_generate,
     NULL,
     .opts = {{"ids", 22, 1, 100000,
               "ids per example in each table (the spec's [I]: Avazu's 22 fields)"}},
     .n_opts = 1},
    {"nce",
     "HeterPS",
     "skip-gram word2vec with NCE, layer chain",
     512,
     0,
     0,
     0,
     NULL,
     {{0, 5, 0, "HeterPS §6.1: NCE (5)"}},
     1,
     NULL,
     gen_nce_generate,
     NULL,
     .n_opts = 0},
};

int gen_model_count(void)
{
    return (int)(sizeof gen_models / sizeof gen_models[0]);
}

const gen_model *gen_model_at(int i)
{
    return i >= 0 && i < gen_model_count() ? &gen_models[i] : NULL;
}

const gen_model *gen_model_find(const char *name)
{
    for (int i = 0; gen_model_at(i); i++)
        if (strcmp(gen_models[i].name, name) == 0)
            return &gen_models[i];
    return NULL;
}

void gen_model_names(char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < gen_model_count() && len < size; i++) {
        int w = snprintf(buf + len, size - len, "%s%s", i ? ", " : "", gen_models[i].name);
        len += w > 0 ? (size_t)w : 0;
    }
}

const gen_model_paper *gen_model_figure(const gen_model *m, int layers)
{
    for (int i = 0; i < m->n_figures; i++)
        if (m->figures[i].layers == layers)
            return &m->figures[i];
    return NULL;
}

int gen_model_set_opt(const gen_model *m, gen_model_args *a, const char *key_value, pb_error *err)
{
    char list[512];
    gen_model_opt_list(m, list, sizeof list);
    const char *eq = strchr(key_value, '=');
    size_t len = eq ? (size_t)(eq - key_value) : strlen(key_value);
    int k = 0;
    while (k < m->n_opts &&
           (strlen(m->opts[k].key) != len || strncmp(m->opts[k].key, key_value, len) != 0))
        k++;
    if (k == m->n_opts)
        return pb_errorf(err, "%s: unknown option '%.*s' (%s)", m->name, (int)len, key_value,
                         m->n_opts ? list : "the model has no options");
    const gen_model_opt *o = &m->opts[k];
    char *end;
    errno = 0;
    long v = eq ? strtol(eq + 1, &end, 10) : 0;
    if (!eq || !eq[1] || *end || errno || v < o->min || v > o->max)
        return pb_errorf(err, "%s: option %s needs an integer in %d..%d (got '%s')", m->name,
                         o->key, o->min, o->max, eq ? eq + 1 : "");
    a->opt[k] = (int)v;
    a->opt_set |= 1u << k;
    return PB_OK;
}

void gen_model_opt_list(const gen_model *m, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < m->n_opts && len < size; k++) {
        const gen_model_opt *o = &m->opts[k];
        int w = snprintf(buf + len, size - len, "%s%s=%d (%d..%d)", k ? ", " : "", o->key, o->def,
                         o->min, o->max);
        len += w > 0 ? (size_t)w : 0;
    }
}

int gen_model_generate(const gen_model *m, const gen_model_args *a, pb_graph **out, pb_error *err)
{
    gen_model_args full = *a;
    *out = NULL;
    for (int k = 0; k < m->n_opts; k++) {
        const gen_model_opt *o = &m->opts[k];
        if (!(full.opt_set & 1u << k))
            full.opt[k] = o->def;
        else if (full.opt[k] < o->min || full.opt[k] > o->max)
            return pb_errorf(err, "%s: option %s needs an integer in %d..%d (got %d)", m->name,
                             o->key, o->min, o->max, full.opt[k]);
    }
    if (full.opt_set >> m->n_opts)
        return pb_errorf(err, "%s: an option is set that the model does not have", m->name);
    if (full.batch == 0)
        full.batch = m->batch;
    if (full.layers == 0)
        full.layers = m->layers;
    if (full.batch < 1 || full.batch > 1 << 20)
        return pb_errorf(err, "%s: batch %d is not in 1..%d", m->name, full.batch, 1 << 20);
    if (!m->layers && a->layers)
        return pb_errorf(err, "%s: the model has no --layers", m->name);
    if (m->layers && (full.layers < m->min_layers || full.layers > m->max_layers))
        return pb_errorf(err, "%s: --layers %d is not in %d..%d", m->name, full.layers,
                         m->min_layers, m->max_layers);
    char name[256];
    int len;
    if (m->layers)
        len = snprintf(name, sizeof name, "%s-%d%s", m->name, full.layers,
                       m->suffix ? m->suffix : "l");
    else
        len = snprintf(name, sizeof name, "%s", m->name);
    for (int k = 0; k < m->n_opts; k++)
        if (full.opt[k] != m->opts[k].def && len > 0 && (size_t)len < sizeof name)
            len += snprintf(name + len, sizeof name - (size_t)len, "+%s=%d", m->opts[k].key,
                            full.opt[k]);
    return m->generate(&full, name, out, err);
}

int gen_model_finish(gen_ctx *g, const gen_model_args *a, const char *name, pb_graph **out,
                     pb_error *err)
{
    gen_annotations ann;
    g->cost_model = a->cost_model;
    if (gen_annotate(g, &ann, err) != PB_OK)
        return pb_errorf(err, "%s: %s", name, err->msg);
    int rc = gen_finish_annotated(g, name, &ann, out, err);
    if (rc == PB_OK && a->annot)
        *a->annot = ann;
    else
        gen_annotations_free(&ann);
    return rc;
}
