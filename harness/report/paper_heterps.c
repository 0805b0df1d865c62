/* paper_heterps.c — HeterPS's published figures (Liu et al., FGCS 2023): Table 2 and Table 3's
 * scheduling times and the cost gaps of Figs. 5-10, as specs/heterps.md §11 transcribes them. */
#include "papers.h"

#include <math.h>
#include <stddef.h>

/* "at most x", "x", "lo to hi", none. */
#define AT_MOST(x)                                                                                 \
    {                                                                                              \
        NAN, (x)                                                                                   \
    }
#define ONE(x)                                                                                     \
    {                                                                                              \
        (x), (x)                                                                                   \
    }
#define RANGE(lo, hi)                                                                              \
    {                                                                                              \
        (lo), (hi)                                                                                 \
    }
#define NONE                                                                                       \
    {                                                                                              \
        NAN, NAN                                                                                   \
    }
#define NONE3                                                                                      \
    {                                                                                              \
        NONE, NONE, NONE                                                                           \
    }

/*
 * Gaps are (C_method - C_RL) / C_RL in % (spec §11: the paper's percentages, some above 100).
 * Figs. 8-10: RL beats RL-RNN by up to 37.3 %, BO 38.1 %, Genetic 6.2 %, Greedy 29.3 %, GPU 229 %
 * and Heuristic 57.4 % (no figure for CPU).  Figs. 5-7, MATCHNET: T <= 16: RL-RNN 321, BO 27.9,
 * Genetic 289, Greedy 291, GPU 304, Heuristic 312, CPU 4137; T = 32: BO 47, Genetic = Greedy
 * 1058, GPU 1757, CPU 19370, Heuristic 1795; T = 64: BO 1812, GA = Greedy 1091, GPU 1819, CPU
 * 20019, Heuristic 2999 (none for RL-RNN at 32 and 64).  Table 3: GPU, CPU and Heuristic
 * <= 0.002 s; Greedy 0.02, 0.27, 0.57 s at T = 2, 32, 64; RL-LSTM 89, 62, 55 s on MATCHNET at
 * T = 2, 32, 64; BO 464-1042 s (no T given); none for Genetic and RL-RNN (only their order).
 */
static const papers_heterps_method paper_heterps_methods[] = {
    {"heterps",
     "RL-LSTM (HeterPS)",
     ONE(0),
     {ONE(0), ONE(0), ONE(0)},
     {ONE(89), ONE(62), ONE(55)},
     "matchnet"},
    {"rl-rnn", "RL-RNN", AT_MOST(37.3), {ONE(321), NONE, NONE}, NONE3, NULL},
    {"bo",
     "BO",
     AT_MOST(38.1),
     {ONE(27.9), ONE(47), ONE(1812)},
     {RANGE(464, 1042), RANGE(464, 1042), RANGE(464, 1042)},
     NULL},
    {"genetic", "Genetic", AT_MOST(6.2), {ONE(289), ONE(1058), ONE(1091)}, NONE3, NULL},
    {"greedy",
     "Greedy",
     AT_MOST(29.3),
     {ONE(291), ONE(1058), ONE(1091)},
     {ONE(0.02), ONE(0.27), ONE(0.57)},
     NULL},
    {"all-cpu",
     "CPU",
     NONE,
     {ONE(4137), ONE(19370), ONE(20019)},
     {AT_MOST(0.002), AT_MOST(0.002), AT_MOST(0.002)},
     NULL},
    {"all-gpu",
     "GPU",
     AT_MOST(229),
     {ONE(304), ONE(1757), ONE(1819)},
     {AT_MOST(0.002), AT_MOST(0.002), AT_MOST(0.002)},
     NULL},
    {"heuristic",
     "Heuristic",
     AT_MOST(57.4),
     {ONE(312), ONE(1795), ONE(2999)},
     {AT_MOST(0.002), AT_MOST(0.002), AT_MOST(0.002)},
     NULL},
    {"brute-force", "BF", NONE, NONE3, NONE3, NULL},
};

/* Fig. 10's CTRDNN is the four-model experiments' CTRDNN-16 (spec §11). */

/* Table 2: BF(2) and BF(4) on CTRDNN-8/12/16/20 (BF(4) on 16 layers estimated, on 20 not
 * given); RL 15.9-19.1 s on all four. */
static const papers_heterps_bf paper_heterps_bf[] = {
    {8, 0.068, 11.37, 0},
    {12, 0.71, 3776.82, 0},
    {16, 11.74, 1254017, 1},
    {20, 217.26, NAN, 0},
};

static const papers_heterps_tables paper_heterps_tables = {
    .tables = "Tables 2-3, Figs. 4-10",
    .reference = "heterps",
    .methods = paper_heterps_methods,
    .n_methods = (int)(sizeof paper_heterps_methods / sizeof paper_heterps_methods[0]),
    .bf = paper_heterps_bf,
    .n_bf = (int)(sizeof paper_heterps_bf / sizeof paper_heterps_bf[0]),
    .rl_s = RANGE(15.9, 19.1),
    .bf_placer = "brute-force",
    .rl_placer = "heterps",
    .below_tl_placer = "all-cpu",
    .below_tl_model = "ctrdnn-16",
    /* "ours beats StaRatio by up to 57.9 %, StaPSRatio by up to 48.3 %; StaPSRatio beats
     * StaRatio by up to 55.8 %" (spec §11, Fig. 4) */
    .fig4_sta_pct = 57.9,
    .fig4_ps_pct = 48.3,
    .fig4_ps_vs_sta_pct = 55.8,
};

const papers_paper paper_heterps = {
    .name = "HeterPS paper",
    .title = "HeterPS: Distributed deep learning with reinforcement learning based scheduling in "
             "heterogeneous environments",
    .placer = "heterps",
    .heterps = &paper_heterps_tables,
};
