/* papers.c — the list of registered papers and the look-ups into their published figures. */
#include "papers.h"

#include <math.h>
#include <string.h>

/* The registered papers, in the order look-ups search them.  A new paper is one file,
 * report/paper_<name>.c, defining `const papers_paper paper_<name>`, declared and listed here. */
extern const papers_paper paper_traversal_order, paper_embeddings, paper_heterps, paper_tag;
static const papers_paper *const papers_registered[] = {&paper_traversal_order, &paper_embeddings,
                                                        &paper_heterps, &paper_tag};

enum { PAPERS_N = (int)(sizeof papers_registered / sizeof papers_registered[0]) };

const papers_paper *papers_at(int i)
{
    return i >= 0 && i < PAPERS_N ? papers_registered[i] : NULL;
}

const papers_paper *papers_with_orders(void)
{
    for (int i = 0; i < PAPERS_N; i++)
        if (papers_registered[i]->orders)
            return papers_registered[i];
    return NULL;
}

const papers_paper *papers_with_embeddings(void)
{
    for (int i = 0; i < PAPERS_N; i++)
        if (papers_registered[i]->embeddings)
            return papers_registered[i];
    return NULL;
}

const papers_paper *papers_with_heterps(void)
{
    for (int i = 0; i < PAPERS_N; i++)
        if (papers_registered[i]->heterps)
            return papers_registered[i];
    return NULL;
}

const papers_paper *papers_with_tag(void)
{
    for (int i = 0; i < PAPERS_N; i++)
        if (papers_registered[i]->tag)
            return papers_registered[i];
    return NULL;
}

const papers_heterps_method *papers_heterps_find(const papers_heterps_tables *t, const char *placer)
{
    for (int i = 0; t && placer && i < t->n_methods; i++)
        if (strcmp(t->methods[i].placer, placer) == 0)
            return &t->methods[i];
    return NULL;
}

int papers_heterps_display_at(const papers_heterps_tables *pt, const char *const *names, int n,
                              int place)
{
    const char *paper[32];
    int n_paper = 0;
    for (int i = 0; pt && i < pt->n_methods && n_paper < 32; i++)
        paper[n_paper++] = pt->methods[i].placer;
    return papers_display_at(names, n, paper, n_paper, place);
}

int papers_heterps_class(int types)
{
    if (types >= 2 && types <= 16)
        return 0;
    return types == 32 ? 1 : types == 64 ? 2 : -1;
}

int papers_heterps_time_class(int types)
{
    return types == 2 ? 0 : types == 32 ? 1 : types == 64 ? 2 : -1;
}

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

int papers_order_wins(const papers_order_table *t, const char *family, int devices, int episode,
                      const char *order)
{
    if (!t)
        return -1;
    int f = papers_find(t->families, t->n_families, family);
    int d = papers_find_int(t->devices, t->n_devices, devices);
    int e = papers_find_int(t->episodes, t->n_episodes, episode);
    int o = papers_find(t->orders, t->n_orders, order);
    if (f < 0 || d < 0 || e < 0 || o < 0)
        return -1;
    return t->wins[((f * t->n_devices + d) * t->n_episodes + e) * t->n_orders + o];
}

papers_embedding papers_embedding_cell(const papers_embedding_table *t, const char *family,
                                       int devices, const char *embedding)
{
    if (!t)
        return (papers_embedding){NAN, NAN, NAN};
    int f = papers_find(t->families, t->n_families, family);
    int d = papers_find_int(t->devices, t->n_devices, devices);
    int e = papers_find(t->embeddings, t->n_embeddings, embedding);
    if (f < 0 || d < 0 || e < 0)
        return (papers_embedding){NAN, NAN, NAN};
    int c = (f * t->n_embeddings + e) * t->n_devices + d;
    return (papers_embedding){t->improvement_pct[c], t->wall_s[c], NAN};
}

papers_embedding papers_embedding_overall(const papers_embedding_table *t, const char *embedding)
{
    int e = t ? papers_find(t->embeddings, t->n_embeddings, embedding) : -1;
    if (e < 0)
        return (papers_embedding){NAN, NAN, NAN};
    return t->overall[e];
}
