/* anchors.c — P-GNN anchor sets, bounded hop distances on the directed graph, and the anchor
 * weights of every node (specs/placeto.md §3.5). */
#include "anchors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int anchors_count(int n, double c, int *m, int *copies)
{
    int classes = n >= 1 ? (int)log((double)n) : 0;
    int k = (int)(c * (double)classes);
    *m = classes;
    *copies = k > 1 ? k : 1;
    return classes * *copies;
}

int anchors_size(int n, int level, int exponent)
{
    return (int)ldexp((double)n, -(level + exponent));
}

void anchors_free(anchors *a)
{
    free(a->start);
    free(a->node);
    memset(a, 0, sizeof *a);
}

int anchors_draw(anchors *a, const int *population, int n, double c, int exponent, pb_rng *rng,
                 pb_error *err)
{
    int m, copies;
    memset(a, 0, sizeof *a);
    a->n_sets = anchors_count(n, c, &m, &copies);
    a->start = malloc(((size_t)a->n_sets + 1) * sizeof(int));
    int *pool = malloc(((size_t)n + 1) * sizeof(int));
    if (!a->start || !pool) {
        free(pool);
        return pb_errorf(err, "out of memory");
    }
    a->start[0] = 0;
    for (int s = 0; s < a->n_sets; s++)
        a->start[s + 1] = a->start[s] + anchors_size(n, s / copies, exponent);
    a->node = malloc(((size_t)a->start[a->n_sets] + 1) * sizeof(int));
    if (!a->node) {
        free(pool);
        return pb_errorf(err, "out of memory");
    }
    for (int s = 0; s < a->n_sets; s++) {
        /* Each set is sampled from the whole population, independently of the others. */
        memcpy(pool, population, (size_t)n * sizeof(int));
        int size = a->start[s + 1] - a->start[s];
        for (int j = 0; j < size; j++) {
            int pick = j + (int)pb_rng_below(rng, (uint64_t)(n - j));
            int keep = pool[j];
            pool[j] = pool[pick];
            pool[pick] = keep;
            a->node[a->start[s] + j] = pool[j];
        }
    }
    free(pool);
    return PB_OK;
}

int anchors_distances(const pb_graph *g, int src, int cutoff, int *dist, int *queue)
{
    for (int v = 0; v < g->n_nodes; v++)
        dist[v] = -1;
    int head = 0, tail = 0;
    dist[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        int u = queue[head++];
        if (dist[u] >= cutoff)
            continue;
        for (int e = g->succ_start[u]; e < g->succ_start[u + 1]; e++) {
            int v = g->succ[e];
            if (dist[v] < 0) {
                dist[v] = dist[u] + 1;
                queue[tail++] = v;
            }
        }
    }
    return tail;
}

void anchors_weights_free(anchors_weights *w)
{
    free(w->start);
    free(w->index);
    free(w->weight);
    memset(w, 0, sizeof *w);
}

/* Appends row v's anchor entries after its self entry (at w->start[v]); returns the next free
 * position. */
static int anchors_row(anchors_weights *w, const anchors *a, int v, const int *dist,
                       int aggregation, int pos)
{
    int self = pos++;
    double self_w = 0.0;
    for (int s = 0; s < a->n_sets; s++) {
        const int *set = a->node + a->start[s];
        int size = a->start[s + 1] - a->start[s];
        if (aggregation == ANCHORS_MAX) {
            int best = -1;
            for (int j = 0; j < size; j++)
                if (set[j] != v && dist[set[j]] >= 0 && (best < 0 || dist[set[j]] > dist[best]))
                    best = set[j];
            if (best < 0)
                continue;
            double x = 1.0 / (dist[best] + 1);
            self_w += x;
            w->index[pos] = best;
            w->weight[pos++] = (float)x;
            continue;
        }
        for (int j = 0; j < size; j++) {
            if (dist[set[j]] < 0)
                continue;
            double x = 1.0 / (dist[set[j]] + 1) / size;
            self_w += x;
            w->index[pos] = set[j];
            w->weight[pos++] = (float)x;
        }
    }
    w->index[self] = v;
    w->weight[self] = (float)self_w;
    return pos;
}

int anchors_weights_build(anchors_weights *w, const pb_graph *g, const anchors *a, int cutoff,
                          int aggregation, pb_error *err)
{
    int n = g->n_nodes;
    memset(w, 0, sizeof *w);
    w->n = n;
    /* Per row at most one entry per set (max) or per anchor (mean), plus the self entry. */
    size_t per_row = 1 + (size_t)(aggregation == ANCHORS_MAX ? a->n_sets : a->start[a->n_sets]);
    size_t cap = (size_t)n * per_row + 1;
    w->start = malloc(((size_t)n + 1) * sizeof(int));
    w->index = malloc(cap * sizeof(int));
    w->weight = malloc(cap * sizeof(float));
    int *dist = malloc(((size_t)n + 1) * sizeof(int));
    int *queue = malloc(((size_t)n + 1) * sizeof(int));
    if (!w->start || !w->index || !w->weight || !dist || !queue) {
        free(dist);
        free(queue);
        return pb_errorf(err, "out of memory");
    }
    int pos = 0;
    for (int v = 0; v < n; v++) {
        w->start[v] = pos;
        anchors_distances(g, v, cutoff, dist, queue);
        pos = anchors_row(w, a, v, dist, aggregation, pos);
    }
    w->start[n] = pos;
    free(dist);
    free(queue);
    return PB_OK;
}
