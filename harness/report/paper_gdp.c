/* paper_gdp.c — GDP's published figures (Zhou et al., "GDP: Generalized Device Placement for
 * Dataflow Graphs", 2019): Table 1, run times of GDP-one, HP, METIS and HDP on 2/4/8 P100s, the
 * speed-ups and the search speed-up over HDP, as specs/gdp.md §12 transcribes them. */
#include "papers.h"

#include <math.h>
#include <stddef.h>

/* The models are named as the zoo names their graphs ("transformer-xl-<L>l", "inceptionv3-gdp",
 * "amoebanet-8c" (the zoo's 8-cell calibration), "wavenet-<S>s"): only those names match runs. */
static const papers_gdp_row paper_gdp_rows[] = {
    {"rnnlm-2l", "2-layer RNNLM", 2, 0.234, 0.257, 0.355, 0.243, 9.8, 4, 2.95},
    {"rnnlm-4l", "4-layer RNNLM", 4, 0.409, 0.48, NAN, 0.490, 17.4, 19.8, 1.76},
    {"gnmt-2l", "2-layer GNMT", 2, 0.301, 0.384, NAN, 0.376, 27.6, 24.9, 30},
    {"gnmt-4l", "4-layer GNMT", 4, 0.409, 0.469, NAN, 0.520, 14.7, 27.1, 58.8},
    {"gnmt-8l", "8-layer GNMT", 8, 0.649, 0.610, NAN, 0.693, -6, 6.8, 7.35},
    {"transformer-xl-2l", "2-layer Transformer-XL", 2, 0.386, 0.473, NAN, 0.435, 22.5, 12.7, 40},
    {"transformer-xl-4l", "4-layer Transformer-XL", 4, 0.580, 0.641, NAN, 0.621, 11.4, 7.1, 26.7},
    {"transformer-xl-8l", "8-layer Transformer-XL", 8, 0.748, 0.813, NAN, 0.789, 8.9, 5.5, 16.7},
    {"inceptionv3-gdp", "Inception", 2, 0.405, 0.418, 0.423, 0.417, 3.2, 3, 13.5},
    {"amoebanet-8c", "AmoebaNet", 4, 0.394, 0.44, 0.426, 0.418, 26.1, 6.1, 58.8},
    {"wavenet-2s", "2-stack 18-layer WaveNet", 2, 0.317, 0.376, NAN, 0.354, 18.6, 11.7, 6.67},
    {"wavenet-4s", "4-stack 36-layer WaveNet", 4, 0.659, 0.988, NAN, 0.721, 50, 9.4, 20},
};

static const papers_gdp_tables paper_gdp_tables = {
    .tables = "Table 1",
    .rows = paper_gdp_rows,
    .n_rows = (int)(sizeof paper_gdp_rows / sizeof paper_gdp_rows[0]),
    .geomean_hp_pct = 16,
    .geomean_hdp_pct = 9.2,
    .geomean_search = 15,
    .gdp_placer = "gdp",
    .hp_placer = "expert",
    .metis_placer = "metis",
    .hdp_placer = "hdp",
    .cluster = "gdp-p100",
};

const papers_paper paper_gdp = {
    .name = "GDP paper",
    .title = "GDP: Generalized Device Placement for Dataflow Graphs",
    .placer = "gdp",
    .gdp = &paper_gdp_tables,
};
