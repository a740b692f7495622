/* so_profile.h - the first threshold crossings of a sphere's cumulative profile: every particle sorted, or radial bins of which only those that can hold a crossing are sorted. */
#ifndef FK_SO_PROFILE_H
#define FK_SO_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "shells.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How fk_so_profile reads the profile (fk_so_measure_method, so.h). */
enum {
    FK_SO_AUTO = 0, /* bins from FK_SO_BINS_MIN particles on, else a full sort */
    FK_SO_SORT = 1, /* every particle sorted (the reference)                  */
    FK_SO_BINS = 2, /* radial bins, whatever the number of particles          */
    FK_SO_TEAM = 3  /* radial bins, every centre searched by all threads      */
};

/*
 * Radial bins: up to 2^FK_SO_BIN_BITS a factor 2 in radius (each 0.54%
 * to 1.1% wide; fewer for fewer particles, see so_profile.c), from the
 * search radius down FK_SO_BIN_SPAN factors of 2 (closer particles share
 * the first bin). A bin's key is the top bits of the binary64 radius, so
 * particles at equal radii share a bin.
 * FK_SO_BINS_MIN: spheres of fewer particles are sorted whole. Bins pay
 * from a few dozen particles on: bench/sobench on the 16.7M mock, 1
 * thread (a loaded 2-core machine), the masses took 1.47 s of CPU with
 * bins from 8192 particles on, 1.23 s from 4096, 1.04 s from 1024, 0.99 s
 * from 256 and 0.80 to 0.89 s with bins for every sphere.
 * FK_SO_PIECE: a team's bins are made in pieces of this many particles
 * (fk_so_profile), hundreds for the largest halos of a 134M snapshot.
 */
#define FK_SO_BIN_BITS 7
#define FK_SO_BIN_SPAN 12
#define FK_SO_NBIN (FK_SO_BIN_SPAN * (1 << FK_SO_BIN_BITS) + 2)
#define FK_SO_BINS_MIN 64
#define FK_SO_PIECE (1u << 16)

/* One thread's buffers (zero-initialise; fk_so_prof_free). */
typedef struct fk_so_prof {
    fk_shell *sh;   /* the gathered particles: (r^2, m), any order         */
    fk_shell *tmp;  /* sort scratch; the bins, bin by bin                   */
    double *r, *cm; /* a sorted stretch's radii and cumulative masses      */
    uint32_t *bin;  /* each gathered particle's bin                        */
    size_t cap;
    /* the bins of the last profile */
    size_t nb;
    uint32_t cnt[FK_SO_NBIN];
    size_t off[FK_SO_NBIN + 1];
    double msum[FK_SO_NBIN], rmax[FK_SO_NBIN];
    unsigned char sorted[FK_SO_NBIN];
} fk_so_prof;

/* Room for n gathered particles in w->sh (and the other buffers). 0, or
 * -1 when out of memory (what was there is kept). */
int fk_so_prof_reserve(fk_so_prof *w, size_t n);

void fk_so_prof_free(fk_so_prof *w);

/*
 * The crossings of the profile of the n particles in w->sh, gathered
 * within rmax of the centre (every particle of the stream there, and none
 * beyond), for the nt thresholds rho[t], the profile starting at index
 * first (see fk_so_crossing, so.h). First the lowest threshold rho[low]:
 * when no sphere is below it and final is 0, returns -1 (search farther;
 * R and M untouched; the n particles are in w->sh, in some order, for the
 * caller to add the next shell to). Otherwise R[t], M[t] for every t (NaN where not
 * reached) and 0. FK_SO_SORT sorts every particle and sums the masses
 * outward; FK_SO_BINS sums each bin's masses in w->sh's order, adds the
 * bins' sums outward, and sorts only the bins where the mean density can
 * cross a threshold: the same crossings as the full sort, the cumulative
 * masses rounded in another order (identical when the masses are equal,
 * as integer multiples of one float below 2^29 particles). Overwrites
 * w->sh. team: called outside a parallel region, the bins are made by
 * every thread, in pieces of FK_SO_PIECE particles whose sums are added in
 * order (the same on any number of threads). 0 or -1 as above, or
 * FK_ENOMEM (team only).
 */
int fk_so_profile(fk_so_prof *w, size_t n, double rmax, int method, size_t first, size_t nt, const double *rho,
                  size_t low, int final, int team, double *R, double *M);

#ifdef __cplusplus
}
#endif

#endif
