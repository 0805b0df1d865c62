/* paper_tag_sfb.c — TAG's Tables 5 and 6 (sufficient factor broadcasting, paper §5.6) and their
 * markdown beside what `placebench bench sfb` measures. */
#include "papers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Table 5 (seconds per iteration, two machines with one 1080Ti each, batch 4). */
static const papers_sfb_row paper_sfb_rows[] = {
    {"inceptionv3", "InceptionV3", 0.0898, 0.0452, 0.0775, 0.0420, 0.0631},
    {"resnet101", "ResNet101", 0.1122, 0.0854, 0.0508, 0.0490, 0.0552},
    {"vgg19", "VGG19", 0.1195, 0.1192, 0.1167, 0.1169, 0.1083},
    {"transformer", "Transformer", 0.1199, 0.0455, 0.0521, 0.0451, NAN},
    {"bert-small", "BERT-Small", 0.0618, 0.0546, 0.0597, 0.0535, NAN},
    {"bert-large", "BERT-Large", 0.4576, 0.4317, 0.4331, 0.4266, NAN},
};

/* Table 6: the top 5 op types TAG duplicated over the six models. */
static const papers_sfb_count paper_sfb_top[] = {
    {"Reshape", 341}, {"MatMul", 336}, {"Transpose", 89}, {"Conv2DBackpropFilter", 66}, {"Add", 26},
};

static const papers_sfb_tables paper_sfb = {
    .tables = "TAG Tables 5 and 6",
    .batch = 4,
    .rows = paper_sfb_rows,
    .n_rows = (int)(sizeof paper_sfb_rows / sizeof paper_sfb_rows[0]),
    .top = paper_sfb_top,
    .n_top = (int)(sizeof paper_sfb_top / sizeof paper_sfb_top[0]),
};

const papers_sfb_tables *papers_tag_sfb(void)
{
    return &paper_sfb;
}

static const papers_sfb_row *paper_sfb_find(const char *model)
{
    for (int i = 0; i < paper_sfb.n_rows; i++)
        if (strcmp(paper_sfb.rows[i].model, model) == 0)
            return &paper_sfb.rows[i];
    return NULL;
}

/* A time in seconds, "-" for NaN. */
static void paper_sfb_seconds(FILE *f, double s)
{
    if (isnan(s))
        fputs(" - |", f);
    else
        fprintf(f, " %.4f |", s);
}

/* The speed-up of SFB as the paper prints it: without / with - 1, in %. */
static void paper_sfb_speedup(FILE *f, double without, double with)
{
    if (isnan(without) || isnan(with) || !(with > 0))
        fputs(" - |", f);
    else
        fprintf(f, " %.1f%% |", (without / with - 1) * 100);
}

static int paper_sfb_count_cmp(const void *a, const void *b)
{
    const papers_sfb_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->type, y->type);
}

void papers_tag_sfb_print(FILE *f, const papers_sfb_measured *m, int n, papers_sfb_count *counts,
                          int n_counts, int n_show, int batch, const char *cluster)
{
    fprintf(f,
            "\n### %s: per-iteration time (s) without and with SFB\n\n"
            "Ours: DP-NCCL simulated by the topology simulator on cluster %s, batch %d.  The "
            "paper's: measured on two machines with one 1080Ti each, batch %d.\n\n",
            paper_sfb.tables, cluster, batch, paper_sfb.batch);
    fputs("| model | ours DP-NCCL without | ours with SFB | ours speed-up | ops duplicated | "
          "paper DP-NCCL without | paper with SFB | paper speed-up | paper TAG without | "
          "paper TAG with | paper TAG speed-up | paper FlexFlow |\n"
          "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
          f);
    for (int i = 0; i < n; i++) {
        const papers_sfb_row *p = paper_sfb_find(m[i].model);
        fprintf(f, "| %s |", p ? p->label : m[i].model);
        paper_sfb_seconds(f, m[i].without_s);
        paper_sfb_seconds(f, m[i].with_s);
        paper_sfb_speedup(f, m[i].without_s, m[i].with_s);
        fprintf(f, " %d |", m[i].duplicated);
        paper_sfb_seconds(f, p ? p->dp_without_s : NAN);
        paper_sfb_seconds(f, p ? p->dp_with_s : NAN);
        paper_sfb_speedup(f, p ? p->dp_without_s : NAN, p ? p->dp_with_s : NAN);
        paper_sfb_seconds(f, p ? p->tag_without_s : NAN);
        paper_sfb_seconds(f, p ? p->tag_with_s : NAN);
        paper_sfb_speedup(f, p ? p->tag_without_s : NAN, p ? p->tag_with_s : NAN);
        paper_sfb_seconds(f, p ? p->flexflow_s : NAN);
        fputc('\n', f);
    }
    qsort(counts, (size_t)n_counts, sizeof *counts, paper_sfb_count_cmp);
    int rows = n_show > paper_sfb.n_top ? n_show : paper_sfb.n_top;
    fprintf(f,
            "\n### %s: op types SFB duplicated (ours: DP-NCCL with SFB over the models above; "
            "the paper's: TAG over its six models)\n\n"
            "| rank | ours: op type | count | paper: op type | count |\n|--:|---|--:|---|--:|\n",
            paper_sfb.tables);
    for (int r = 0; r < rows; r++) {
        if (r >= n_counts && r >= paper_sfb.n_top)
            break;
        fprintf(f, "| %d |", r + 1);
        if (r < n_counts && r < n_show)
            fprintf(f, " %s | %d |", counts[r].type, counts[r].count);
        else
            fputs(" - | - |", f);
        if (r < paper_sfb.n_top)
            fprintf(f, " %s | %d |\n", paper_sfb.top[r].type, paper_sfb.top[r].count);
        else
            fputs(" - | - |\n", f);
    }
}
