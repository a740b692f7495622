/* dist_so.h - halostats --so under mpirun: each halo's sphere measured on one rank over every rank's particles within it (ghost spheres), the radii and masses gathered on rank 0. */
#ifndef FK_DIST_SO_H
#define FK_DIST_SO_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "halostats.h"
#include "so.h"

/*
 * One process measures a halo's SO radii over every particle of the stream
 * within the radius it searches (so.h): it starts at the halo's rc_max (one
 * grid cell when that is 0) and doubles it until the lowest threshold is
 * crossed. Under mpirun each rank holds any share of the particles, so the
 * rank that measures a halo (its measurer) needs every particle of every
 * rank within that radius, which nobody knows beforehand. How, after the
 * rows are computed (fk_dhalos_run) and gathered on rank 0:
 *
 *   1. spheres: rank 0 orders the halos of level 0 by their centres along a
 *      Morton curve and cuts them into R runs of about equal members, a run
 *      a rank (neighbouring spheres overlap: a particle within several goes
 *      to fewer ranks), gives a halo of a deeper level to the rank of its
 *      host, and broadcasts every halo's centre, rc_max, mass and rank (48
 *      bytes a halo);
 *   2. the frame: the cells of the single process's grid (so.h,
 *      fk_so_frame_make over the run's particle count and, for an isolated
 *      box, its bounds: a min and max over the ranks);
 *   3. rounds: each rank finds its particles within the requested radius of
 *      every sphere (a cell grid over its own particles, the minimum image
 *      in a periodic box) and sends each to the sphere's measurer once
 *      (position, mass, its index in the rank's stream and its ID: 32
 *      bytes); the measurer keeps what it got in (rank, index) order, builds
 *      the SO grid over them in the whole run's frame, each cell's particles
 *      by ID (fk_so_grid_build_frame, so.h), so that every search within the
 *      radius gathers the particles one process gathers in the order it
 *      gathers them, whatever the split, and measures
 *      (fk_so_measure_reach). A sphere
 *      whose last search stayed within its radius is done: its radii and
 *      masses are the single process's, bit for bit. Any other is asked
 *      again with the radius of that search (at least one doubling more;
 *      what the rank sent before is not sent again), until none is left:
 *      at most one round a doubling up to the search's limit (half a
 *      periodic box);
 *   4. rank 0 gathers the radii and masses (64 bytes a halo) into the rows.
 * The first round asks for the first radius of the search's doubling that
 * reaches twice the radius within which the halo's FoF mass would meet the
 * lowest threshold, times FOFKIT_DIST_SO_START (default 1; less asks more
 * halos again, for tests). On the 4M-particle mock of bench/mpi_halos 76 of
 * 5311 halos were asked again (1161 with 1.2 times that radius, which held
 * 3.2M particles in all against 2.4M: a halo asked again asks for a whole
 * doubling more). Where
 * the cells of the first search could hold FK_SO_TEAM_MIN particles or more
 * (a bound summed over the ranks; FOFKIT_DIST_SO_TEAM=N lowers that count,
 * for tests), the first radius also covers those cells (sqrt(3) (r0 + a
 * cell)), so that the measurer counts them as one process does and searches
 * the sphere the same way (by one thread or by all).
 *
 * Memory: every rank a grid index over its own particles (8 bytes a
 * particle and a cell) and the indices it sent (8 bytes each); a measurer
 * its spheres' particles (about 70 bytes each, with the SO grid) and the
 * SO grid's cells, 8 bytes a cell of the whole run's grid (one cell for
 * about 8 of the run's particles, at most 2^30 cells). Every rank receives
 * the spheres of every halo (48 bytes each).
 */

typedef struct fk_dso_in {
    uint64_t n;               /* this rank's particles, in its stream order */
    const float *pos, *mass;  /* n x 3, n                                   */
    int periodic;
    double box, origin;
    uint64_t ntotal;          /* every rank's particles                     */
    const uint64_t *ids;      /* n original indices (IDs), unique over the ranks: the
                                 order of the sums over a grid cell (so.h), or NULL
                                 (then the ranks' streams concatenated must be the
                                 single process's order, and IDs the stream indices) */
} fk_dso_in;

/* What one rank did. */
typedef struct fk_dso_rank {
    uint64_t spheres;     /* halos it measured                                     */
    uint64_t particles;   /* particles it measured them over (its own among them)  */
    uint64_t sent;        /* its particles it sent to other ranks' spheres        */
    uint64_t bytes;       /* bytes it sent to other ranks (ghosts, requests,
                             results; rank 0 also the spheres)                     */
    double seconds;       /* its time in fk_dso_run                                */
} fk_dso_rank;

typedef struct fk_dso_info {
    int ranks, rounds;     /* rounds: ghost exchanges                              */
    uint64_t spheres;      /* halos, all levels                                    */
    uint64_t asked[64];    /* spheres asked for in round k (the first 64 rounds)  */
    fk_dso_rank *rank;     /* on rank 0: one per rank (free() it); elsewhere NULL  */
    double t_index, t_ghosts, t_measure, t_gather; /* rank 0's seconds: the index over its
                                                      particles, finding and moving ghosts,
                                                      measuring, the results to rank 0 */
} fk_dso_info;

/* Collective (MPI started): the SO radii and masses of every halo of every
 * level, as fk_halostats_so computes them in one process over the ranks'
 * particles (with the IDs of in: in any order; without, concatenated), with the thresholds rho and minpart. rows and ng:
 * on rank 0 the nlevels levels' rows (from fk_dhalos_run, host set from
 * level 1 on), whose r200c, m200c, ..., rvir, mvir are filled in; ng[k] (on
 * every rank) their counts; elsewhere rows may be NULL. Every position must
 * be finite (and, periodic, inside the box): the caller checks them. Every
 * rank returns the same status and, on failure, the same message (the
 * lowest failing rank's). FK_EUNSUP in a build without MPI. */
int fk_dso_run(const fk_dso_in *in, fk_halo *const *rows, const uint64_t *ng, int nlevels, const double rho[FK_SO_N],
               size_t minpart, fk_dso_info *info, fk_error *err);

/* Collective: the sum of every rank's masses, exact and independent of
 * order (spacing.h's sums of the significands by binary exponent, added
 * over the ranks, then fk_spacing_mass), as one process sums its stream
 * (halostats --so): the same bits for any number of ranks and any split,
 * into *total on every rank. FK_EFORMAT (a negative or non-finite mass,
 * named in the stream name), agreed on by every rank; FK_EUNSUP without
 * MPI. */
int fk_dso_mass_total(uint64_t n, const float *mass, double *total, const char *name, fk_error *err);

#endif
