/* papers.h — the registry of the papers placebench reproduces: one const descriptor per paper
 * (report/paper_<name>.c) holding its published figures and how its tables are laid out, the
 * list of registered papers (papers.c) and the look-ups the report, plot and bench code use. */
#ifndef PB_PAPERS_H
#define PB_PAPERS_H

#include <stdio.h>

/*
 * Win counts of traversal orders (the traversal-order paper's Tables II-IV): on how many of the
 * n_graphs graphs of a family each order found the lowest best step time by the end of an
 * episode, per device count.  Names are placebench's (family folders, traversal plugins).
 */
typedef struct papers_order_table {
    const char *tables;        /* which of the paper's tables, as headings cite them */
    const char *const *orders; /* [n_orders] in the paper's column order */
    int n_orders;
    const char *const *families; /* [n_families] */
    int n_families;
    const int *devices; /* [n_devices] */
    int n_devices;
    const int *episodes; /* [n_episodes] 0-based: 9 ends the 10th episode */
    int n_episodes;
    int n_graphs; /* graphs per family the counts are of */
    /* [((family * n_devices + devices) * n_episodes + episode) * n_orders + order] */
    const signed char *wins;
} papers_order_table;

/* One embedding's published figures; NaN where the paper gives none. */
typedef struct papers_embedding {
    double improvement_pct; /* per cell, or the average over cells */
    double wall_s;          /* per cell, or the average over cells */
    double ec;              /* the average over cells only; NaN in cells */
} papers_embedding;

/*
 * Improvement over the initial placement, computation time and EC ratio per graph embedding
 * (the embedding paper's Tables 1-3), per family and device count and averaged over them.  The
 * computation times per cell are the reference timings `placebench bench placer` compares with:
 * the Python/TensorFlow reference's mean wall time of one run.
 */
typedef struct papers_embedding_table {
    const char *tables;            /* which of the paper's tables, as headings cite them */
    const char *const *embeddings; /* [n_embeddings] in the paper's row order */
    int n_embeddings;
    const char *baseline;        /* the embedding the averages' table compares the others with */
    const char *const *families; /* [n_families] */
    int n_families;
    const int *devices; /* [n_devices] */
    int n_devices;
    /* Per cell, as the paper prints them: [(family * n_embeddings + embedding) * n_devices +
     * devices]. */
    const double *improvement_pct;
    const double *wall_s;
    const papers_embedding *overall; /* [n_embeddings]: averages over families and devices */
} papers_embedding_table;

/* A published figure that the paper gives as one value, a range or a bound: lo == hi for one
 * value, lo NaN for "at most hi", both NaN for none. */
typedef struct papers_range {
    double lo, hi;
} papers_range;

/* HeterPS's resource-type classes of Figs. 5-7 and Table 3: T = 2 (and up to 16), 32, 64. */
enum { PAPERS_HETERPS_T_CLASSES = 3 };

/* One HeterPS method's published figures. */
typedef struct papers_heterps_method {
    const char *placer; /* placebench's placer */
    const char *label;  /* the paper's name */
    /* Figs. 8-10 (four models, T = 2, default limits): the largest cost gap over RL-LSTM,
     * (C - C_RL) / C_RL in %. */
    papers_range gap_pct;
    /* Figs. 5-7 (MATCHNET, limits lifted): the cost gap over RL-LSTM in %, for T <= 16, 32, 64. */
    papers_range gap_types_pct[PAPERS_HETERPS_T_CLASSES];
    /* Table 3: scheduling time (s), for T = 2, 32, 64 (for a range over models and T, the same
     * range in each). */
    papers_range sched_s[PAPERS_HETERPS_T_CLASSES];
    const char *sched_model; /* the one model sched_s is of; NULL: any */
} papers_heterps_method;

/* Table 2: scheduling time (s) of brute force with T = 2 and T = 4 on CTRDNN-L. */
typedef struct papers_heterps_bf {
    int layers;
    double bf2_s;
    double bf4_s;      /* NaN: not given */
    int bf4_estimated; /* the paper's figure is an estimate, not a run */
} papers_heterps_bf;

/* HeterPS's published figures: its methods in the paper's order, Table 2 and the claims of
 * Fig. 10 that the tables mark. */
typedef struct papers_heterps_tables {
    const char *tables;    /* which of the paper's tables and figures, as headings cite them */
    const char *reference; /* the method the gaps are relative to (RL-LSTM) */
    const papers_heterps_method *methods; /* [n_methods] */
    int n_methods;
    const papers_heterps_bf *bf; /* [n_bf] by layers */
    int n_bf;
    papers_range rl_s;                 /* Table 2: RL's scheduling time on CTRDNN, flat in L */
    const char *bf_placer, *rl_placer; /* placebench's names for Table 2's BF and RL */
    /* Fig. 10: every method meets the throughput limit except this method on this model. */
    const char *below_tl_placer, *below_tl_model;
    /* Fig. 4: the largest gaps the text gives, in %: ours against StaRatio and StaPSRatio, and
     * StaPSRatio against StaRatio (no figure per throughput limit). */
    double fig4_sta_pct, fig4_ps_pct, fig4_ps_vs_sta_pct;
} papers_heterps_tables;

/* One row of GDP's Table 1 (specs/gdp.md §12): run times in s on `gpus` P100s; NaN for OOM. */
typedef struct papers_gdp_row {
    const char *model; /* placebench's graph name (the zoo's file name without .json) */
    const char *label; /* the paper's row label */
    int gpus;
    double gdp_one, hp, metis, hdp;   /* s; metis NaN = OOM */
    double over_hp_pct, over_hdp_pct; /* as printed */
    double search_speedup;            /* search speed-up over HDP, as printed (x) */
} papers_gdp_row;

/* GDP's Table 1 and the placebench placers of its columns. */
typedef struct papers_gdp_tables {
    const char *tables;
    const papers_gdp_row *rows; /* [n_rows] in the paper's order */
    int n_rows;
    double geomean_hp_pct, geomean_hdp_pct, geomean_search; /* as printed */
    const char *gdp_placer, *hp_placer, *metis_placer, *hdp_placer;
    const char *cluster; /* the cluster preset of its runs */
} papers_gdp_tables;
/* One model of TAG's Table 4 (TAG §5.3): the mean number of GPUs of each type (in `types`
 * order) an op is replicated onto, and the share of gradients synchronised by PS and AllReduce
 * (%). */
typedef struct papers_tag_model {
    const char *model; /* placebench's zoo name */
    const char *label; /* the paper's */
    double replication[3];
    double ps_pct, ar_pct;
    /* Table 7 (§5.7): mean MCTS iterations until a strategy beats DP-NCCL on 100 random unseen
     * topologies, pure MCTS and TAG; Table 8 (§5.8): speed-up over DP-NCCL (%) of TAG trained
     * with all models and of TAG- trained without this one, on the testbed and the cloud.  NaN
     * where the paper has no row (BERT-Large). */
    double t7_pure, t7_tag;
    double t8_testbed_tag, t8_testbed_holdout, t8_cloud_tag, t8_cloud_holdout;
} papers_tag_model;

/* TAG's published testbed figures: Table 4 and Fig. 5's speed-up ranges (the paper prints the
 * per-model bars only as a figure; its text gives the ranges over the six models). */
typedef struct papers_tag_tables {
    const char *tables;
    const char *const *types; /* [3] the GPU types of Table 4's columns (cluster type names) */
    const papers_tag_model *models; /* [n_models] in the paper's row order */
    int n_models;
    papers_range speedup_dp_pct;  /* TAG over DP-NCCL: 8 %-456 % */
    papers_range speedup_dpp_pct; /* TAG over DP-NCCL-P: 1 %-391 % */
    const char *oom_note;         /* what Fig. 5 says ran out of memory */
} papers_tag_tables;

/* A paper: how placebench names it and its tables (NULL for a kind it does not publish). */
typedef struct papers_paper {
    const char *name;   /* short name used in headings ("traversal-order paper") */
    const char *title;  /* the paper's title */
    const char *placer; /* the learned placer whose runs its tables are of */
    const papers_order_table *orders;
    const papers_embedding_table *embeddings;
    const papers_heterps_tables *heterps;
    const papers_gdp_tables *gdp;
    const papers_tag_tables *tag;
} papers_paper;

/* The registered papers in registration order: paper i, or NULL when i is out of range.
 * Borrowed, static. */
const papers_paper *papers_at(int i);

/* The first registered paper with order win counts / embedding tables, or NULL.  Borrowed. */
const papers_paper *papers_with_orders(void);
const papers_paper *papers_with_embeddings(void);
const papers_paper *papers_with_heterps(void);
const papers_paper *papers_with_gdp(void);
const papers_paper *papers_with_tag(void);

/* The method entry of placer, or NULL.  Borrowed from t. */
const papers_heterps_method *papers_heterps_find(const papers_heterps_tables *t,
                                                 const char *placer);
/* papers_display_at with the paper's methods as its list (pt NULL: names in their own order). */
int papers_heterps_display_at(const papers_heterps_tables *pt, const char *const *names, int n,
                              int place);
/* The class of Figs. 5-7 that `types` resource types fall in (0: T <= 16, 1: 32, 2: 64); -1 for
 * the counts the paper has no figures for. */
int papers_heterps_class(int types);
/* The same for Table 3, which gives T = 2, 32 and 64 only. */
int papers_heterps_time_class(int types);

/* Display order of names[0..n): those the paper lists (paper[0..n_paper)) in the paper's order,
 * then the rest in their own order.  Returns the index into names of the one shown at `place`
 * (0 <= place < n). */
int papers_display_at(const char *const *names, int n, const char *const *paper, int n_paper,
                      int place);

/* Graphs on which `order` found the lowest mean best step time by `episode` on `devices` devices
 * of `family`; -1 when t is NULL or has no such cell. */
int papers_order_wins(const papers_order_table *t, const char *family, int devices, int episode,
                      const char *order);

/* One family and device count; all NaN when t is NULL or has no such cell. */
papers_embedding papers_embedding_cell(const papers_embedding_table *t, const char *family,
                                       int devices, const char *embedding);
/* The averages over families and device counts; all NaN when t is NULL or lacks embedding. */
papers_embedding papers_embedding_overall(const papers_embedding_table *t, const char *embedding);

/* ---------------------------------------------------------------- TAG's SFB (paper_tag_sfb.c) */

/* Table 5 of TAG: per-iteration training time (s) on two 1080Ti at batch 4, DP-NCCL and TAG
 * without and with SFB, FlexFlow (NaN: N/A). */
typedef struct papers_sfb_row {
    const char *model; /* placebench's zoo name */
    const char *label; /* the paper's */
    double dp_without_s, dp_with_s, tag_without_s, tag_with_s, flexflow_s;
} papers_sfb_row;

/* Table 6 of TAG: an op type and how often SFB duplicated it over the six models. */
typedef struct papers_sfb_count {
    const char *type;
    int count;
} papers_sfb_count;

typedef struct papers_sfb_tables {
    const char *tables;
    int batch; /* the paper's batch (its code used 6) */
    const papers_sfb_row *rows;
    int n_rows;
    const papers_sfb_count *top; /* Table 6, in the paper's order */
    int n_top;
} papers_sfb_tables;

/* TAG's Tables 5 and 6.  Borrowed, static. */
const papers_sfb_tables *papers_tag_sfb(void);

/* What `placebench bench sfb` measured for one model: DP-NCCL's simulated step time without and
 * with SFB (NaN when not run) and the ops SFB duplicated. */
typedef struct papers_sfb_measured {
    const char *model;
    double without_s, with_s;
    int duplicated;
} papers_sfb_measured;

/* Prints Table 5 (ours beside the paper's DP-NCCL columns, then its TAG and FlexFlow columns)
 * and Table 6 (our op types by count, the first n_show, beside the paper's) as markdown to f.
 * counts[0..n_counts) need not be sorted (they are sorted here, by count then type). */
void papers_tag_sfb_print(FILE *f, const papers_sfb_measured *m, int n, papers_sfb_count *counts,
                          int n_counts, int n_show, int batch, const char *cluster);

#endif
