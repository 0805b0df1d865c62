/* papers.c — the published figures of the reproduced tables, copied from the papers' text
 * (traversal-order-device-placement Tables II-IV, graph-embedding-device-placement Tables 1-3). */
#include "papers.h"

#include <math.h>
#include <string.h>

const char *const papers_orders[PAPERS_N_ORDERS] = {
    "lexico", "topo", "dfs-preorder", "reversed-topo", "dfs-postorder", "bfs"};

const char *const papers_embeddings[PAPERS_N_EMBEDDINGS] = {"placeto-gnn", "graphsage", "pgnn"};

static const char *const papers_families[3] = {"cifar10", "nmt", "ptb"};
static const int papers_devices[3] = {3, 5, 8};
static const int papers_episodes[3] = {9, 19, 49};

/* [family][devices][episode][order], as printed: Table II (cifar10), III (nmt), IV (ptb). */
static const signed char papers_wins[3][3][3][PAPERS_N_ORDERS] = {
    {{{1, 6, 10, 10, 4, 1}, {3, 3, 7, 8, 11, 0}, {5, 4, 5, 8, 8, 2}},
     {{0, 9, 6, 6, 9, 2}, {0, 9, 3, 10, 8, 2}, {2, 6, 6, 9, 6, 3}},
     {{0, 8, 3, 10, 11, 0}, {1, 4, 2, 8, 17, 0}, {0, 5, 1, 11, 15, 0}}},
    {{{0, 2, 0, 22, 1, 7}, {0, 0, 1, 23, 1, 7}, {0, 0, 1, 24, 1, 6}},
     {{0, 0, 1, 24, 1, 6}, {0, 0, 2, 26, 0, 4}, {0, 0, 0, 27, 0, 5}},
     {{0, 0, 0, 23, 3, 6}, {0, 0, 0, 24, 1, 7}, {0, 0, 0, 24, 3, 5}}},
    {{{0, 1, 6, 1, 0, 24}, {0, 1, 10, 1, 2, 18}, {0, 1, 8, 5, 2, 16}},
     {{0, 0, 3, 0, 2, 27}, {0, 1, 3, 2, 2, 24}, {0, 1, 2, 6, 5, 18}},
     {{0, 0, 2, 1, 1, 28}, {0, 0, 2, 5, 4, 21}, {0, 0, 2, 13, 5, 12}}}};

/* Table 1: improvement over the initial placement (%), [family][embedding][devices]. */
static const double papers_improvement[3][PAPERS_N_EMBEDDINGS][3] = {
    {{24.585, 28.250, 34.339}, {29.566, 30.567, 31.374}, {32.717, 36.084, 37.114}},
    {{28.107, 36.042, 38.813}, {27.037, 34.177, 32.388}, {30.232, 39.350, 42.399}},
    {{8.981, 11.304, 15.831}, {12.492, 14.658, 16.625}, {17.930, 21.117, 23.536}}};

/* Table 2: average computation time (s), [family][embedding][devices]. */
static const double papers_wall[3][PAPERS_N_EMBEDDINGS][3] = {
    {{110.730, 112.030, 108.118}, {89.116, 91.930, 93.443}, {101.170, 105.721, 103.420}},
    {{47.054, 47.519, 48.996}, {42.504, 43.788, 43.550}, {47.787, 49.009, 49.670}},
    {{335.376, 327.175, 321.450}, {288.443, 298.736, 298.210}, {362.761, 368.460, 371.815}}};

/* Table 3: averages over datasets and device counts: improvement %, time (s), EC ratio. */
static const papers_embedding papers_overall[PAPERS_N_EMBEDDINGS] = {
    {25.139, 162.050, 0.009}, {25.432, 143.302, 0.01}, {31.164, 173.313, 0.011}};

static int papers_find(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

static int papers_find_int(const int *values, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (values[i] == v)
            return i;
    return -1;
}

/* A name's place in the paper's list; n_paper for names it does not list. */
static int papers_rank(const char *name, const char *const *paper, int n_paper)
{
    int i = papers_find(paper, n_paper, name);
    return i < 0 ? n_paper : i;
}

int papers_display_at(const char *const *names, int n, const char *const *paper, int n_paper,
                      int place)
{
    for (int o = 0; o < n; o++) {
        int rank = papers_rank(names[o], paper, n_paper), before = 0;
        for (int q = 0; q < n; q++) {
            int r = papers_rank(names[q], paper, n_paper);
            before += r < rank || (r == rank && q < o);
        }
        if (before == place)
            return o;
    }
    return 0;
}

int papers_order_wins(const char *family, int devices, int episode, const char *order)
{
    int f = papers_find(papers_families, 3, family),
        d = papers_find_int(papers_devices, 3, devices);
    int e = papers_find_int(papers_episodes, 3, episode);
    int o = papers_find(papers_orders, PAPERS_N_ORDERS, order);
    if (f < 0 || d < 0 || e < 0 || o < 0)
        return -1;
    return papers_wins[f][d][e][o];
}

papers_embedding papers_embedding_cell(const char *family, int devices, const char *embedding)
{
    int f = papers_find(papers_families, 3, family),
        d = papers_find_int(papers_devices, 3, devices);
    int e = papers_find(papers_embeddings, PAPERS_N_EMBEDDINGS, embedding);
    if (f < 0 || d < 0 || e < 0)
        return (papers_embedding){NAN, NAN, NAN};
    return (papers_embedding){papers_improvement[f][e][d], papers_wall[f][e][d], NAN};
}

papers_embedding papers_embedding_overall(const char *embedding)
{
    int e = papers_find(papers_embeddings, PAPERS_N_EMBEDDINGS, embedding);
    if (e < 0)
        return (papers_embedding){NAN, NAN, NAN};
    return papers_overall[e];
}
