/* progressive.c — helpers for progressive placers and their embeddings: the Placeto node
 * features (specs/placeto.md §2.2) and the reference's node index order. */
#include "placebench.h"

#include "traverse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int pb_traverse_topo(const pb_graph *g, int *order, pb_error *err)
{
    return traverse_topo(g, order, err);
}

int pb_traverse_by_name(const char *name, const pb_graph *g, unsigned long long seed, int *order,
                        pb_error *err)
{
    return traverse_by_name(name, g, seed, order, err);
}

/* Raw feature 5 of every node of s->graph into f5 (n_nodes doubles). */
static int progressive_feature5(const pb_place_state *s, int feature5, double *f5, pb_error *err)
{
    const pb_graph *g = s->graph;
    int n = g->n_nodes;
    for (int v = 0; v < n; v++)
        f5[v] = 0;
    if (!s->eval)
        return PB_OK;
    if (feature5 == PB_FEATURE5_PEAK_MEM) {
        if (!s->eval->peak_mem_bytes)
            return pb_errorf(err, "placeto features: the evaluation has no peak memory");
        for (int v = 0; v < n; v++)
            if (s->device[v] >= 0 && s->device[v] < s->n_devices)
                f5[v] = s->eval->peak_mem_bytes[s->device[v]];
        return PB_OK;
    }
    if (!s->eval->node_start_us)
        return pb_errorf(err, "placeto features: the evaluation has no node start times");
    const pb_graph *ops = s->op_graph ? s->op_graph : g;
    if (ops == g) {
        for (int v = 0; v < n; v++)
            f5[v] = s->eval->node_start_us[v];
        return PB_OK;
    }
    if (ops->grouped != g || !ops->group_of)
        return pb_errorf(err, "placeto features: op_graph is not the op graph of graph");
    /* A group starts when its earliest op starts. */
    for (int v = 0; v < n; v++)
        f5[v] = INFINITY;
    for (int o = 0; o < ops->n_nodes; o++) {
        double t = s->eval->node_start_us[o];
        int v = ops->group_of[o];
        if (t < f5[v])
            f5[v] = t;
    }
    for (int v = 0; v < n; v++)
        if (isinf(f5[v]))
            f5[v] = 0;
    return PB_OK;
}

/* Divides column c of the n x dim matrix out (values in raw, double) by its maximum when the
 * maximum is not 0, and stores it as float. */
static void progressive_put_normalised(float *out, int n, int dim, int c, const double *raw)
{
    double mx = raw[0];
    for (int v = 1; v < n; v++)
        if (raw[v] > mx)
            mx = raw[v];
    for (int v = 0; v < n; v++)
        out[(size_t)v * dim + c] = (float)(mx != 0 ? raw[v] / mx : raw[v]);
}

unsigned pb_placeto_features_reads(int feature5)
{
    return feature5 == PB_FEATURE5_PEAK_MEM ? PB_EVAL_READS_PEAK_MEM : PB_EVAL_READS_START_TIMES;
}

int pb_placeto_features(const pb_place_state *s, int feature5, float *out, pb_error *err)
{
    if (!s || !s->graph || !s->device || !out)
        return pb_errorf(err, "placeto features: missing state");
    if (feature5 != PB_FEATURE5_START_TIME && feature5 != PB_FEATURE5_PEAK_MEM)
        return pb_errorf(err, "placeto features: unknown feature-5 mode %d", feature5);
    const pb_graph *g = s->graph;
    int n = g->n_nodes, nd = s->n_devices, dim = pb_placeto_features_dim(nd);
    if (n <= 0)
        return PB_OK;
    double *raw = malloc((size_t)n * sizeof(double));
    if (!raw)
        return pb_errorf(err, "out of memory");
    memset(out, 0, (size_t)n * (size_t)dim * sizeof(float));
    for (int v = 0; v < n; v++) {
        float *row = out + (size_t)v * dim;
        row[2] = s->done ? (float)s->done[v] : 0.0f;
        row[3] = v == s->current ? 1.0f : 0.0f;
        if (s->device[v] >= 0 && s->device[v] < nd)
            row[5 + s->device[v]] = 1.0f;
    }
    progressive_put_normalised(out, n, dim, 0, g->cost_us);
    progressive_put_normalised(out, n, dim, 1, g->out_bytes);
    if (progressive_feature5(s, feature5, raw, err)) {
        free(raw);
        return PB_ERR;
    }
    if (s->current >= 0 && s->current < n) {
        double cur = raw[s->current];
        for (int v = 0; v < n; v++)
            raw[v] -= cur;
    }
    progressive_put_normalised(out, n, dim, 4, raw);
    free(raw);
    return PB_OK;
}
