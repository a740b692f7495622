/* so.h - spherical-overdensity radii and masses (M200c, M500c, M200m, Mvir) around halo centres, over every particle. */
#ifndef FK_SO_H
#define FK_SO_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "halostats.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Reference densities. Positions are taken as comoving, in the stream's
 * length unit, at expansion factor a (a = 1: physical coordinates), and
 * every density below is a comoving density in the stream's units (mass /
 * length^3), so that a sphere of comoving radius R holds 4/3 pi R^3 rho of
 * it. With rho_c0 the critical density today (3 H0^2 / (8 pi G)) and
 *   E^2(a) = Omega_m a^-3 + Omega_k a^-2 + Omega_L,  Omega_k = 1 - Omega_m - Omega_L,
 *   rho_crit(a) = rho_c0 E^2(a) a^3         (the physical critical density
 *                                            at a, in comoving units)
 *   rho_mean    = Omega_m rho_c0            (constant in comoving units)
 *   x           = Omega_m a^-3 / E^2(a) - 1
 *   Delta_vir   = 18 pi^2 + 82 x - 39 x^2  (Bryan & Norman 1998, eq. 6, for
 *                 Omega_L > 0: their fit for a flat universe with Lambda)
 *               = 18 pi^2 + 60 x - 32 x^2  (for Omega_L = 0: their fit for
 *                 an open universe)
 * the four thresholds, in this order (FK_SO_*), are
 *   200c  200 rho_crit(a)    500c  500 rho_crit(a)
 *   200m  200 rho_mean       vir   Delta_vir rho_crit(a)
 */
enum { FK_SO_200C = 0, FK_SO_500C = 1, FK_SO_200M = 2, FK_SO_VIR = 3, FK_SO_N = 4 };

#define FK_SO_MINPART 10 /* default particles in the profile's first sphere */
#define FK_SO_TEAM_MIN (1u << 19) /* particles in the first search's cells: every thread searches it */

typedef struct fk_cosmo {
    double omega_m; /* (0, ...)                                 */
    double omega_l; /* >= 0                                     */
    double a;       /* expansion factor, > 0                    */
    double rho_c0;  /* critical density today, comoving, stream units, > 0 */
} fk_cosmo;

/* The FK_SO_N threshold densities of c into rho (and Delta_vir into
 * *delta_vir when not NULL). FK_EINVAL, naming the parameter, when one is
 * out of range or E^2(a) <= 0. */
int fk_so_thresholds(const fk_cosmo *c, double rho[FK_SO_N], double *delta_vir, fk_error *err);

/*
 * The radius. For a centre c, let r_k be the distances (minimum image in a
 * periodic box) of EVERY particle of the stream from c, sorted, M_k the
 * mass of the particles at r <= r_k and rho_k = M_k / (4/3 pi r_k^3) the
 * mean density of the sphere through particle k. The profile starts at the
 * sphere through particle minpart - 1 (counting from 0: the sphere holding
 * at least minpart particles, the centre's own included), or the first at
 * r > 0 if that is farther out: smaller spheres are shot noise (the nearest
 * neighbours of a particle in a thin background can make a sphere of three
 * particles 200 times denser than the mean). For a threshold rho_t, k is
 * the first particle of the profile with rho_k < rho_t; the crossing lies
 * between r_(k-1) and r_k and is interpolated linearly in log rho against
 * log r:
 *   log R = log r_(k-1) + (log rho_t - log rho_(k-1)) (log r_k - log r_(k-1)) / (log rho_k - log rho_(k-1))
 * and M = 4/3 pi R^3 rho_t, which lies in [M_(k-1), M_k] up to the
 * interpolation. The radius is NOT REACHED (R and M are NaN) when the
 * profile's first sphere already has rho_k < rho_t (no sphere of minpart
 * particles is that dense), or when no rho_k falls below rho_t within the
 * largest radius searched (half the box when periodic; the distance to
 * the farthest particle otherwise).
 *
 * Search: a grid of cells over all particles (about 8 particles a cell);
 * for each centre, the particles within r of it, starting from r = the
 * halo's start radius (its members' extent) and doubling until the lowest
 * threshold's crossing is found, then every threshold's crossing is read
 * off the same profile. Spheres of FK_SO_BINS_MIN particles or more are
 * binned by radius and only the bins where the mean density can cross a
 * threshold are sorted (so_profile.h); the masses within each radius are
 * then summed bin by bin, so that with unequal particle masses they (and
 * R, M) can differ from a full sort's by rounding (relative 1.1e-16 times
 * the particles summed); with equal masses they are identical. Centres
 * whose first search holds 2^19 particles or more (the largest halos) are
 * searched one at a time by every thread, the others a thread each; no
 * result depends on the number of threads.
 */

/* All the particles of a stream. */
typedef struct fk_so_particles {
    uint64_t n;
    const float *pos;  /* n x 3 */
    const float *mass; /* n     */
    int periodic;
    double box, origin; /* origin: the box's lower corner on every axis */
    /* n original indices (IDs), or NULL. With IDs, each grid cell holds its
     * particles in ascending ID order, the order every sum over a sphere's
     * particles then follows (ties of radius included): the radii and
     * masses do not depend on the stream's order, nor, under mpirun, on how
     * the particles are split into ranks. Without, the stream's order. */
    const uint64_t *ids;
} fk_so_particles;

typedef struct fk_so_grid fk_so_grid;

/* Builds the grid over p (which must outlive it): O(n), in parallel
 * (OpenMP), 4 floats a particle (and 8 bytes more while it is built); its
 * layout does not depend on the number of threads. FK_EINVAL (a periodic
 * box of side <= 0, n at or above 2^32, a position not finite or, when
 * periodic, outside [origin, origin + box): naming the first), FK_ENOMEM. */
int fk_so_grid_build(const fk_so_particles *p, fk_so_grid **grid, fk_error *err);

void fk_so_grid_free(fk_so_grid *grid);

/* Where a grid's cells lie: cells per axis, the lower corner, the cell
 * side, the particles' upper corner (isolated boxes: it bounds the
 * search). fk_so_grid_build takes the frame of its particles. */
typedef struct fk_so_frame {
    int side;
    double lo[3], hi[3], cell;
} fk_so_frame;

/* The least and greatest coordinate of p's particles on each axis (as
 * doubles; +inf and -inf when there are none). Can't fail. */
void fk_so_bounds(const fk_so_particles *p, double lo[3], double hi[3]);

/* The frame fk_so_grid_build gives n particles: in a periodic box of side
 * box from origin, else (lo, hi unused when periodic) within the bounds lo,
 * hi of fk_so_bounds. Can't fail. */
void fk_so_frame_make(uint64_t n, int periodic, double box, double origin, const double lo[3], const double hi[3],
                      fk_so_frame *f);

/* fk_so_grid_build in the frame f: a part of a larger set of particles
 * (one rank's share of a distributed run, fk_so_frame_make of the whole
 * set's count and bounds) laid out in the cells the whole set's grid has,
 * each cell's particles in p's order (by ID with p's IDs). A search in it
 * gathers what the whole set's grid gathers, in the same order, wherever p
 * holds every particle of the whole set within the search's radius and
 * p's order is the whole set's order restricted (with IDs, in any order); the reach of fk_so_measure_reach and
 * the choice of the centres searched by every thread (the particles in
 * the cells of the first search: p must hold every particle within
 * sqrt(3) (r0 + cell) of the centre for it to be the whole set's) are then
 * the whole set's too. FK_EINVAL for a frame of no cells, else as
 * fk_so_grid_build. */
int fk_so_grid_build_frame(const fk_so_particles *p, const fk_so_frame *f, fk_so_grid **grid, fk_error *err);

/* For each of nh centres (centre[3 h + k]) with start radius r0[h] (> 0;
 * anything else starts from one grid cell), the radius and mass of each of
 * the nt thresholds rho[t] (> 0): R[nt h + t], M[nt h + t] (NaN when not
 * reached, as above; minpart 0 counts as 1). In parallel over centres (OpenMP); each result comes
 * from one sorted profile summed in one order, so it does not depend on the
 * number of threads. FK_EINVAL (a threshold <= 0), FK_ENOMEM. */
int fk_so_measure(const fk_so_grid *grid, uint64_t nh, const double *centre, const double *r0, size_t nt,
                  const double *rho, size_t minpart, double *R, double *M, fk_error *err);

/* fk_so_measure, and each centre's reach into reach[h]: the radius of its
 * last search, r0[h] (one cell when r0[h] is not > 0) times a power of 2,
 * or the search's limit; its radii and masses come from the particles
 * within it alone. */
int fk_so_measure_reach(const fk_so_grid *grid, uint64_t nh, const double *centre, const double *r0, size_t nt,
                        const double *rho, size_t minpart, double *R, double *M, double *reach, fk_error *err);

/* fk_so_measure reading each profile by method (so_profile.h): FK_SO_AUTO
 * (what fk_so_measure does), FK_SO_SORT (every gathered particle sorted:
 * the reference), FK_SO_BINS (radial bins, only those that can hold a
 * crossing sorted: the same crossings, the cumulative masses rounded in
 * another order) or FK_SO_TEAM (FK_SO_BINS with every centre searched by
 * all threads together, as FK_SO_AUTO and FK_SO_BINS do for the centres
 * whose first search holds 2^19 particles or more). */
int fk_so_measure_method(const fk_so_grid *grid, uint64_t nh, const double *centre, const double *r0, size_t nt,
                         const double *rho, size_t minpart, int method, double *R, double *M, fk_error *err);

/* Fills r200c, m200c, ..., rvir, mvir of halos[0..ng) (after
 * fk_halostats_centres: about the centres xc, starting from the radii
 * rc_max) with the thresholds rho of fk_so_thresholds. FK_EINVAL,
 * FK_ENOMEM. */
int fk_halostats_so(const fk_so_grid *grid, uint64_t ng, fk_halo *halos, const double rho[FK_SO_N], size_t minpart,
                    fk_error *err);

/* The crossing of one sorted profile: r[0..n) ascending distances, cm[k]
 * the mass at r <= r[k] (equal radii share the mass of all of them), the
 * profile starting at index first, the threshold rho_t. Sets *R and *M as
 * above; returns 1 when found, 0 when the profile's first sphere is
 * already below rho_t (R, M NaN), and -1 when every rho_k is >= rho_t (R,
 * M NaN: search farther). Can't fail. (In so_profile.c.) */
int fk_so_crossing(const double *r, const double *cm, size_t n, size_t first, double rho_t, double *R, double *M);

#ifdef __cplusplus
}
#endif

#endif
