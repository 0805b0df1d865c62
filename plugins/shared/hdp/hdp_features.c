/* hdp_features.c — HDP's op features and group embeddings (specs/gdp.md §7.2, §7.4). */
#include "hdp_model.h"

#include <string.h>

void hdp_op_features(int n, const int *type_index, const float *dims, const int *succ_start,
                     const int *succ, float *out)
{
    for (int v = 0; v < n; v++) {
        float *row = out + (size_t)v * HDP_OP_FEATURES;
        row[0] = (float)type_index[v];
        memcpy(row + 1, dims + (size_t)v * HDP_SHAPE_SLOTS, HDP_SHAPE_SLOTS * sizeof *row);
        memset(row + 1 + HDP_SHAPE_SLOTS, 0, HDP_ADJ_SLOTS * sizeof *row);
    }
    /* The code keeps one list per op and truncates it at the end, which is the same as writing
     * while fewer than 20 numbers are there; a written pair has a non-zero direction. */
    for (int u = 0; u < n; u++)
        for (int k = succ_start[u]; k < succ_start[u + 1]; k++) {
            int w = succ[k];
            int pairs[2][3] = {{u, w, +1}, {w, u, -1}};
            for (int q = 0; q < 2; q++) {
                float *adj = out + (size_t)pairs[q][0] * HDP_OP_FEATURES + 1 + HDP_SHAPE_SLOTS;
                int used = 0;
                while (used < HDP_ADJ_SLOTS && adj[used + 1] != 0)
                    used += 2; /* a written pair always has a non-zero direction */
                if (used + 2 <= HDP_ADJ_SLOTS) {
                    adj[used] = (float)pairs[q][1];
                    adj[used + 1] = (float)pairs[q][2];
                }
            }
        }
}

int hdp_group_width(int n_groups, int n_types)
{
    return 2 * n_groups + n_types + HDP_SHAPE_SLOTS;
}

void hdp_group_features(int n, int n_groups, int n_types, const int *group, const int *type_index,
                        const float *dims, const int *succ_start, const int *succ, float *out)
{
    int width = hdp_group_width(n_groups, n_types);
    memset(out, 0, (size_t)n_groups * (size_t)width * sizeof *out);
    for (int u = 0; u < n; u++) {
        float *row = out + (size_t)group[u] * width;
        for (int k = succ_start[u]; k < succ_start[u + 1]; k++) {
            int gw = group[succ[k]];
            row[gw] += 1;                                       /* dag[g, g'] */
            out[(size_t)gw * width + n_groups + group[u]] += 1; /* dag^T[g', g] */
        }
        float *block = row + 2 * n_groups;
        block[type_index[u]] += 1;
        for (int j = 0; j < HDP_SHAPE_SLOTS; j++) {
            float dim = dims[(size_t)u * HDP_SHAPE_SLOTS + j];
            if (dim > 0)
                block[j] += dim; /* overlaps the type counts: the code's quirk */
        }
    }
    for (int g = 0; g < n_groups; g++) {
        float *row = out + (size_t)g * width, max = row[0];
        for (int j = 1; j < width; j++)
            if (row[j] > max)
                max = row[j];
        for (int j = 0; j < width; j++)
            row[j] /= max + 1;
    }
}
