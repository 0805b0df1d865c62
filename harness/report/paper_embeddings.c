/* paper_embeddings.c — the embedding paper's published figures: Tables 1-3, improvement over
 * the initial placement, computation time (the reference timings) and EC ratio per embedding. */
#include "papers.h"

enum { PAPER_EMB_EMBEDDINGS = 3, PAPER_EMB_FAMILIES = 3, PAPER_EMB_DEVICES = 3 };

/* The paper's rows Placeto-GNN, GraphSAGE, P-GNN as placebench names them. */
static const char *const paper_embeddings_names[PAPER_EMB_EMBEDDINGS] = {"placeto-gnn", "graphsage",
                                                                         "pgnn"};
static const char *const paper_embeddings_families[PAPER_EMB_FAMILIES] = {"cifar10", "nmt", "ptb"};
static const int paper_embeddings_devices[PAPER_EMB_DEVICES] = {3, 5, 8};

/* Table 1: improvement over the initial placement (%), [family][embedding][devices]. */
static const double
    paper_embeddings_improvement[PAPER_EMB_FAMILIES][PAPER_EMB_EMBEDDINGS][PAPER_EMB_DEVICES] = {
        {{24.585, 28.250, 34.339}, {29.566, 30.567, 31.374}, {32.717, 36.084, 37.114}},
        {{28.107, 36.042, 38.813}, {27.037, 34.177, 32.388}, {30.232, 39.350, 42.399}},
        {{8.981, 11.304, 15.831}, {12.492, 14.658, 16.625}, {17.930, 21.117, 23.536}}};

/* Table 2: average computation time (s) of a 20-episode run, [family][embedding][devices]. */
static const double
    paper_embeddings_wall[PAPER_EMB_FAMILIES][PAPER_EMB_EMBEDDINGS][PAPER_EMB_DEVICES] = {
        {{110.730, 112.030, 108.118}, {89.116, 91.930, 93.443}, {101.170, 105.721, 103.420}},
        {{47.054, 47.519, 48.996}, {42.504, 43.788, 43.550}, {47.787, 49.009, 49.670}},
        {{335.376, 327.175, 321.450}, {288.443, 298.736, 298.210}, {362.761, 368.460, 371.815}}};

/* Table 3: averages over datasets and device counts: improvement %, time (s), EC ratio. */
static const papers_embedding paper_embeddings_overall[PAPER_EMB_EMBEDDINGS] = {
    {25.139, 162.050, 0.009}, {25.432, 143.302, 0.01}, {31.164, 173.313, 0.011}};

static const papers_embedding_table paper_embeddings_tables = {
    .tables = "Tables 1-3",
    .embeddings = paper_embeddings_names,
    .n_embeddings = PAPER_EMB_EMBEDDINGS,
    .baseline = "placeto-gnn",
    .families = paper_embeddings_families,
    .n_families = PAPER_EMB_FAMILIES,
    .devices = paper_embeddings_devices,
    .n_devices = PAPER_EMB_DEVICES,
    .improvement_pct = &paper_embeddings_improvement[0][0][0],
    .wall_s = &paper_embeddings_wall[0][0][0],
    .overall = paper_embeddings_overall,
};

const papers_paper paper_embeddings = {
    .name = "embedding paper",
    .title = "Graph Representation Matters in Device Placement",
    .placer = "placeto",
    .embeddings = &paper_embeddings_tables,
};
