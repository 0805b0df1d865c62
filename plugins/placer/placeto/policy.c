/* policy.c — the placeto policy head: parent/child/parallel readout and classifier. */
#include "policy.h"

#include <stdlib.h>
#include <string.h>

int policy_init(policy *pol, pb_nn_params *params, int readout, int dim, int n_devices,
                int small_nn, pb_rng *rng, pb_error *err)
{
    memset(pol, 0, sizeof *pol);
    pol->readout = readout;
    pol->dim = dim;
    pol->n_devices = n_devices;
    int d = dim, a_sizes[3] = {d, d, d}, a_n = small_nn ? 2 : 3;
    int n_agg = readout == POLICY_READOUT_TRI ? 3 : 1;
    static const char *const names[3][2] = {{"placeto/agg_parents/f", "placeto/agg_parents/g"},
                                            {"placeto/agg_children/f", "placeto/agg_children/g"},
                                            {"placeto/agg_peers/f", "placeto/agg_peers/g"}};
    static const char *const graph_names[2] = {"placeto/agg_graph/f", "placeto/agg_graph/g"};
    for (int k = 0; k < n_agg; k++) {
        const char *nf = n_agg == 3 ? names[k][0] : graph_names[0];
        const char *ng = n_agg == 3 ? names[k][1] : graph_names[1];
        if (pb_nn_mlp_init(&pol->agg_f[k], params, nf, a_n, a_sizes, PB_NN_ACT_RELU, rng, err) ||
            pb_nn_mlp_init(&pol->agg_g[k], params, ng, a_n, a_sizes, PB_NN_ACT_RELU, rng, err))
            return PB_ERR;
    }
    int in = n_agg == 3 ? 4 * d : d;
    int c_big[4] = {in, 2 * in, in, n_devices}, c_small[3] = {in, in, n_devices};
    if (small_nn)
        return pb_nn_mlp_init(&pol->classifier, params, "placeto/classifier", 3, c_small,
                              PB_NN_ACT_NONE, rng, err);
    return pb_nn_mlp_init(&pol->classifier, params, "placeto/classifier", 4, c_big, PB_NN_ACT_NONE,
                          rng, err);
}

int policy_graph_build(const pb_graph *g, const int *topo, policy_graph *pg, pb_error *err)
{
    int n = g->n_nodes;
    memset(pg, 0, sizeof *pg);
    pg->n = n;
    pg->words = (n + 63) / 64;
    size_t cells = (size_t)n * pg->words + 1;
    pg->anc = calloc(cells, sizeof(uint64_t));
    pg->desc = calloc(cells, sizeof(uint64_t));
    if (!pg->anc || !pg->desc) {
        policy_graph_free(pg);
        return pb_errorf(err, "out of memory");
    }
    int w = pg->words;
    for (int i = 0; i < n; i++) {
        int v = topo[i];
        uint64_t *row = pg->anc + (size_t)v * w;
        for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++) {
            int p = g->pred[e];
            const uint64_t *pr = pg->anc + (size_t)p * w;
            for (int k = 0; k < w; k++)
                row[k] |= pr[k];
            row[p / 64] |= (uint64_t)1 << (p % 64);
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        int v = topo[i];
        uint64_t *row = pg->desc + (size_t)v * w;
        for (int e = g->succ_start[v]; e < g->succ_start[v + 1]; e++) {
            int s = g->succ[e];
            const uint64_t *sr = pg->desc + (size_t)s * w;
            for (int k = 0; k < w; k++)
                row[k] |= sr[k];
            row[s / 64] |= (uint64_t)1 << (s % 64);
        }
    }
    return PB_OK;
}

void policy_graph_free(policy_graph *pg)
{
    free(pg->anc);
    free(pg->desc);
    pg->anc = pg->desc = NULL;
}

/* The rows of the tri readout for `batch` steps, on the tape: rows[k] lists, block after block,
 * the ancestors (k = 0), descendants (1) and peers (2) of cur[b] as rows of h; seg[k] is the CSR
 * that sums each block's contiguous segment of the gathered rows. */
static int policy_tri_rows(pb_nn_tape *t, const policy_graph *pg, int batch, const int *cur,
                           int **rows, int *n_rows, pb_nn_csr *seg)
{
    int n = pg->n, w = pg->words;
    for (int k = 0; k < 3; k++) {
        int *start = pb_nn_alloc(t, (size_t)(batch + 1) * sizeof(int));
        rows[k] = pb_nn_alloc(t, ((size_t)batch * n + 1) * sizeof(int));
        if (!start || !rows[k])
            return PB_ERR;
        seg[k] = (pb_nn_csr){batch, start, NULL, NULL};
        start[0] = 0;
        n_rows[k] = 0;
    }
    for (int b = 0; b < batch; b++) {
        const uint64_t *anc = pg->anc + (size_t)cur[b] * w, *desc = pg->desc + (size_t)cur[b] * w;
        for (int j = 0; j < n; j++) {
            uint64_t bit = (uint64_t)1 << (j % 64);
            int k = (anc[j / 64] & bit) ? 0 : (desc[j / 64] & bit) ? 1 : j != cur[b] ? 2 : -1;
            if (k >= 0)
                rows[k][n_rows[k]++] = b * n + j;
        }
        for (int k = 0; k < 3; k++)
            ((int *)seg[k].start)[b + 1] = n_rows[k];
    }
    return PB_OK;
}

/* Selection of every node of each block (graph readout). */
static int policy_all_csr(pb_nn_tape *t, int n, int batch, pb_nn_csr *csr)
{
    int *start = pb_nn_alloc(t, (size_t)(batch + 1) * sizeof(int));
    if (!start)
        return PB_ERR;
    for (int b = 0; b <= batch; b++)
        start[b] = b * n;
    *csr = (pb_nn_csr){batch, start, NULL, NULL};
    return PB_OK;
}

/* ReLU(g(sum over the selection of ReLU(f(h)))) for each output row of csr. */
static pb_nn_tensor *policy_aggregate(pb_nn_tape *t, pb_nn_params *params, const pb_nn_mlp *f,
                                      const pb_nn_mlp *g, pb_nn_tensor *h, const pb_nn_csr *csr)
{
    pb_nn_tensor *fx = pb_nn_mlp_forward(t, params, f, h);
    return pb_nn_mlp_forward(t, params, g, pb_nn_aggregate(t, fx, csr, PB_NN_AGG_SUM));
}

pb_nn_tensor *policy_logits(pb_nn_tape *t, pb_nn_params *params, const policy *pol,
                            const policy_graph *pg, pb_nn_tensor *h, int batch, const int *cur)
{
    if (pol->readout == POLICY_READOUT_GRAPH) {
        pb_nn_csr all;
        if (policy_all_csr(t, pg->n, batch, &all))
            return NULL;
        pb_nn_tensor *z = policy_aggregate(t, params, &pol->agg_f[0], &pol->agg_g[0], h, &all);
        return pb_nn_mlp_forward(t, params, &pol->classifier, z);
    }
    /* Each Aggregator's f runs on the rows its set selects only: every node is in one set, so
     * the three f networks together see n - 1 rows per step instead of 3n. */
    pb_nn_csr seg[3];
    int *rows[3], n_rows[3];
    int *self = pb_nn_alloc(t, (size_t)batch * sizeof(int));
    if (!self || policy_tri_rows(t, pg, batch, cur, rows, n_rows, seg))
        return NULL;
    for (int b = 0; b < batch; b++)
        self[b] = b * pg->n + cur[b];
    pb_nn_tensor *parts[4];
    for (int k = 0; k < 3; k++) {
        pb_nn_tensor *sel = pb_nn_gather_rows(t, h, rows[k], n_rows[k]);
        parts[k] = policy_aggregate(t, params, &pol->agg_f[k], &pol->agg_g[k], sel, &seg[k]);
    }
    parts[3] = pb_nn_gather_rows(t, h, self, batch);
    pb_nn_tensor *z = pb_nn_concat_cols(t, 4, parts);
    return pb_nn_mlp_forward(t, params, &pol->classifier, z);
}
