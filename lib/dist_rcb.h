/* dist_rcb.h - recursive coordinate bisection of the particles over MPI ranks: each rank a box, equal counts, ghosts by box distance. */
#ifndef FK_DIST_RCB_H
#define FK_DIST_RCB_H

#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The ranks' domains of a distributed link (dist_link.h, --decomp=rcb):
 * the box of every particle (the bounds over all ranks) is cut in two
 * along its widest side where the particles below the cut are
 * floor(n_lo / n) of the box's, n ranks shared n_lo = n / 2 below and the
 * rest above; each half is cut again for its ranks, until each box has one
 * rank (the recursive coordinate bisection of Berger and Bokhari, IEEE
 * Trans. Comput. C-36, 570 (1987); pkdgrav's domains are such a tree,
 * Stadel 2001, PhD thesis, University of Washington). A particle belongs to the rank whose box it lies in: below a cut
 * when its coordinate (a float, widened to a double) is less than the cut,
 * the same comparison on every rank. The cuts are found from histograms of
 * every box's particles at once, summed over the ranks: FK_RCB_BINS bins
 * over the box's side, then FK_RCB_BINS within the bin holding the quantile,
 * FK_RCB_PASSES times (a resolution of the side over FK_RCB_BINS to the
 * FK_RCB_PASSES), each level of the tree one allreduce a pass. The counts
 * only balance the ranks: any cut gives the same groups.
 *
 * A rank's ghosts are the particles within the margin of its box: the
 * distance from a point to a box, axis by axis the gap to the box's side
 * (the nearest periodic image's in a periodic box), summed in squares. Each
 * particle's ranks are found down the tree, a box at a time.
 */

#define FK_RCB_BINS 256
#define FK_RCB_PASSES 3

typedef struct fk_rcb_node {
    double lo[3], hi[3]; /* the box: every particle of its ranks lies in it   */
    double cut;          /* below (coordinate < cut): kid[0]; else kid[1]      */
    int axis;            /* the cut's axis                                    */
    int r0, r1;          /* its ranks [r0, r1)                                */
    int kid[2];          /* the halves' nodes; -1 at a leaf (one rank)        */
} fk_rcb_node;

typedef struct fk_rcb {
    int nranks, nnodes;
    fk_rcb_node *node; /* 2 R - 1, node 0 the whole box                       */
    int *leaf;         /* R: each rank's node                                 */
    double period;     /* > 0: periodic with this period on every axis        */
    double margin;     /* ghosts within this distance of a box                */
    int deep;          /* whether a particle deeper than twice the margin in its
                          own box needs no test (the box within one period) */
} fk_rcb;

/* Collective: the tree over every rank's n particles (pos n x 3), within
 * the bounds gmn, gmx (the same on every rank), for the ghosts' margin and
 * period (0: none). FK_ENOMEM agreed on; FK_EUNSUP without MPI. */
int fk_rcb_build(const float *pos, uint64_t n, const double gmn[3], const double gmx[3], double margin,
                 double period, fk_rcb *t, fk_error *err);

/* The rank whose box holds x. No MPI. */
int fk_rcb_owner(const fk_rcb *t, const float *x);

/* The ranks other than self (ascending, at most t->nranks) whose box lies
 * within the margin of x: their count, the ranks in out. No MPI. */
int fk_rcb_reaches(const fk_rcb *t, const float *x, int self, int *out);

/* The distance from x to box i (its images' nearest in a periodic box),
 * squared. No MPI. */
double fk_rcb_gap2(const fk_rcb *t, int i, const float *x);

void fk_rcb_free(fk_rcb *t);

#ifdef __cplusplus
}
#endif

#endif
