/* gen_model.c — the model zoo's registry: names, defaults, the papers' figures, dispatch. */
#include "gen_model.h"

#include <stdio.h>
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
     NULL},
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
     NULL},
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
     NULL},
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
     NULL},
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
     NULL},
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
     NULL},
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
     NULL},
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
     NULL},
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
     NULL},
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
     "c"},
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
     NULL},
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
     "s"},
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
     NULL},
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
     NULL},
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
     NULL},
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
     NULL},
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

int gen_model_generate(const gen_model *m, const gen_model_args *a, pb_graph **out, pb_error *err)
{
    gen_model_args full = *a;
    *out = NULL;
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
    char name[64];
    if (m->layers)
        snprintf(name, sizeof name, "%s-%d%s", m->name, full.layers, m->suffix ? m->suffix : "l");
    else
        snprintf(name, sizeof name, "%s", m->name);
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
