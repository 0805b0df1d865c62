/* metis_part.c — METIS_PartGraphKway behind metis_partition (idx_t of any width). */
#include "metis_part.h"

#include <metis.h>
#include <stdlib.h>

/* A copy of a[0..n) as idx_t; NULL when out of memory. */
static idx_t *metis_copy(const int *a, int n)
{
    idx_t *out = malloc((size_t)(n > 0 ? n : 1) * sizeof(idx_t));
    for (int i = 0; out && i < n; i++)
        out[i] = (idx_t)a[i];
    return out;
}

int metis_partition(int n, const int *xadj, const int *adjncy, const int *vwgt, const int *adjwgt,
                    int nparts, double ubvec, int *part, pb_error *err)
{
    if (n <= nparts) {
        for (int v = 0; v < n; v++)
            part[v] = v;
        return PB_OK;
    }
    int m = xadj[n];
    idx_t *x = metis_copy(xadj, n + 1), *adj = metis_copy(adjncy, m), *vw = metis_copy(vwgt, n);
    idx_t *aw = metis_copy(adjwgt, m), *out = malloc((size_t)n * sizeof(idx_t));
    idx_t nv = n, ncon = 1, np = nparts, cut = 0;
    real_t ub = (real_t)ubvec;
    int rc = x && adj && vw && aw && out ? PB_OK : pb_errorf(err, "out of memory");
    if (rc == PB_OK) {
        int status =
            METIS_PartGraphKway(&nv, &ncon, x, adj, vw, NULL, aw, &np, NULL, &ub, NULL, &cut, out);
        if (status != METIS_OK)
            rc = pb_errorf(err, "METIS_PartGraphKway failed (status %d) on %d vertices, %d parts",
                           status, n, nparts);
    }
    for (int v = 0; rc == PB_OK && v < n; v++)
        part[v] = (int)out[v];
    free(x);
    free(adj);
    free(vw);
    free(aw);
    free(out);
    return rc;
}
