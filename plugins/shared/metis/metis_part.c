/* metis_part.c — METIS_PartGraphKway behind metis_partition (idx_t of any width). */
#include "metis_part.h"

#include <fcntl.h>
#include <metis.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* METIS prints some diagnostics on stdout ("***Cannot bisect a graph with 0 vertices!" when a
 * graph has few vertices for its parts; the partition is still returned), and stdout belongs to
 * the harness (place --json) and a worker's log: they are silenced around the call. */
static int metis_mute(void)
{
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0)
        dup2(null, STDOUT_FILENO);
    if (null >= 0)
        close(null);
    return saved;
}

static void metis_unmute(int saved)
{
    if (saved < 0)
        return;
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
}

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
        int saved = metis_mute();
        int status =
            METIS_PartGraphKway(&nv, &ncon, x, adj, vw, NULL, aw, &np, NULL, &ub, NULL, &cut, out);
        metis_unmute(saved);
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
