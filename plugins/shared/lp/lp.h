/* lp.h — a linear program built row by row and solved with COIN-OR CLP (the only user of CLP's
 * C interface; placer plugins link it as a static library). */
#ifndef PB_SHARED_LP_H
#define PB_SHARED_LP_H

#include "placebench.h"

typedef struct lp lp;

/* A minimisation over n_cols columns with bounds [lb[j], ub[j]] (LP_INF for none) and objective
 * coefficients obj[j]; the arrays are copied.  NULL when out of memory. */
lp *lp_new(int n_cols, const double *lb, const double *ub, const double *obj);
void lp_free(lp *m);

#define LP_INF 1e300

/* Adds the row lo <= sum_k vals[k] * x[cols[k]] <= hi (LP_INF / -LP_INF for an open side); the
 * arrays are copied. */
int lp_add_row(lp *m, int n, const int *cols, const double *vals, double lo, double hi,
               pb_error *err);

/* Solves to optimality and writes the columns into x (caller-owned, n_cols doubles) and the
 * objective into *objective.  An infeasible, unbounded or unfinished solve is an error. */
int lp_solve(lp *m, double *x, double *objective, pb_error *err);

#endif
