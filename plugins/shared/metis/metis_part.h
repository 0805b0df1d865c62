/* metis_part.h — k-way graph partitioning with METIS, the one place plugins call libmetis. */
#ifndef PB_METIS_PART_H
#define PB_METIS_PART_H

#include "placebench.h"

/*
 * Partitions the undirected graph of n vertices given in CSR form (neighbours of v:
 * adjncy[xadj[v] .. xadj[v+1]), each edge listed from both ends with the same weight in adjwgt)
 * with vertex weights vwgt into nparts parts by METIS_PartGraphKway: one constraint, imbalance
 * `ubvec` (1.5 = 50 %), METIS's default options (so its fixed seed).  With n <= nparts vertex v
 * goes to part v and METIS is not called (as TAG's metis.py does).  part: n ints, caller-owned.
 * All arrays are borrowed.
 */
int metis_partition(int n, const int *xadj, const int *adjncy, const int *vwgt, const int *adjwgt,
                    int nparts, double ubvec, int *part, pb_error *err);

#endif
