/* lp.c — linear programs solved with COIN-OR CLP through its C interface. */
#include "lp.h"

#include <coin/Clp_C_Interface.h>

#include <float.h>
#include <stdlib.h>
#include <string.h>

struct lp {
    int n_cols;
    double *lb, *ub, *obj;
    /* Rows in compressed form: row r is entries row_start[r] .. row_start[r+1]. */
    int n_rows, cap_rows, n_entries, cap_entries;
    CoinBigIndex *row_start;
    int *col;
    double *val, *row_lo, *row_hi;
};

/* LP_INF as CLP's infinity. */
static double lp_bound(double b)
{
    if (b >= LP_INF)
        return DBL_MAX;
    if (b <= -LP_INF)
        return -DBL_MAX;
    return b;
}

lp *lp_new(int n_cols, const double *lb, const double *ub, const double *obj)
{
    lp *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    size_t n = n_cols > 0 ? (size_t)n_cols : 1;
    m->n_cols = n_cols;
    m->lb = malloc(n * sizeof(double));
    m->ub = malloc(n * sizeof(double));
    m->obj = malloc(n * sizeof(double));
    m->row_start = malloc(sizeof(CoinBigIndex));
    if (!m->lb || !m->ub || !m->obj || !m->row_start) {
        lp_free(m);
        return NULL;
    }
    for (int j = 0; j < n_cols; j++) {
        m->lb[j] = lp_bound(lb[j]);
        m->ub[j] = lp_bound(ub[j]);
        m->obj[j] = obj[j];
    }
    m->row_start[0] = 0;
    return m;
}

void lp_free(lp *m)
{
    if (!m)
        return;
    free(m->lb);
    free(m->ub);
    free(m->obj);
    free(m->row_start);
    free(m->col);
    free(m->val);
    free(m->row_lo);
    free(m->row_hi);
    free(m);
}

/* Makes room for one more row of n entries. */
static int lp_grow(lp *m, int n)
{
    if (m->n_rows + 1 > m->cap_rows) {
        int cap = m->cap_rows ? 2 * m->cap_rows : 64;
        CoinBigIndex *rs = realloc(m->row_start, (size_t)(cap + 1) * sizeof *rs);
        if (rs)
            m->row_start = rs;
        double *lo = realloc(m->row_lo, (size_t)cap * sizeof *lo);
        if (lo)
            m->row_lo = lo;
        double *hi = realloc(m->row_hi, (size_t)cap * sizeof *hi);
        if (hi)
            m->row_hi = hi;
        if (!rs || !lo || !hi)
            return PB_ERR;
        m->cap_rows = cap;
    }
    if (m->n_entries + n > m->cap_entries) {
        int cap = m->cap_entries ? 2 * m->cap_entries : 256;
        while (cap < m->n_entries + n)
            cap *= 2;
        int *col = realloc(m->col, (size_t)cap * sizeof *col);
        if (col)
            m->col = col;
        double *val = realloc(m->val, (size_t)cap * sizeof *val);
        if (val)
            m->val = val;
        if (!col || !val)
            return PB_ERR;
        m->cap_entries = cap;
    }
    return PB_OK;
}

int lp_add_row(lp *m, int n, const int *cols, const double *vals, double lo, double hi,
               pb_error *err)
{
    for (int k = 0; k < n; k++)
        if (cols[k] < 0 || cols[k] >= m->n_cols)
            return pb_errorf(err, "lp: column %d of a row is outside 0..%d", cols[k],
                             m->n_cols - 1);
    if (lp_grow(m, n))
        return pb_errorf(err, "lp: out of memory");
    memcpy(m->col + m->n_entries, cols, (size_t)n * sizeof(int));
    memcpy(m->val + m->n_entries, vals, (size_t)n * sizeof(double));
    m->n_entries += n;
    m->row_lo[m->n_rows] = lp_bound(lo);
    m->row_hi[m->n_rows] = lp_bound(hi);
    m->row_start[++m->n_rows] = m->n_entries;
    return PB_OK;
}

int lp_solve(lp *m, double *x, double *objective, pb_error *err)
{
    Clp_Simplex *s = Clp_newModel();
    if (!s)
        return pb_errorf(err, "lp: CLP could not create a model");
    Clp_setLogLevel(s, 0);
    CoinBigIndex *starts = calloc((size_t)m->n_cols + 1, sizeof *starts);
    if (!starts) {
        Clp_deleteModel(s);
        return pb_errorf(err, "lp: out of memory");
    }
    /* Empty columns first, then the rows that fill them. */
    Clp_addColumns(s, m->n_cols, m->lb, m->ub, m->obj, starts, NULL, NULL);
    free(starts);
    Clp_addRows(s, m->n_rows, m->row_lo, m->row_hi, m->row_start, m->col, m->val);
    Clp_initialSolve(s);
    int status = Clp_status(s);
    if (status != 0) {
        static const char *const why[] = {"optimal", "infeasible", "unbounded",
                                          "stopped on a limit", "stopped on errors"};
        Clp_deleteModel(s);
        return pb_errorf(err, "lp: CLP did not solve the program (%s)",
                         status >= 0 && status <= 4 ? why[status] : "unknown status");
    }
    memcpy(x, Clp_getColSolution(s), (size_t)m->n_cols * sizeof(double));
    *objective = Clp_objectiveValue(s);
    Clp_deleteModel(s);
    return PB_OK;
}
