/* potential.h - Plummer-softened gravitational potentials of a group's members (exact sums, a Barnes-Hut tree) and their minimum. */
#ifndef FK_POTENTIAL_H
#define FK_POTENTIAL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The potential. For the n members of a group, with positions x_i in one
 * frame (a group that straddles a periodic boundary is unwrapped first, as
 * halostats does about its reference member) and masses m_i >= 0:
 *
 *   phi_i = -G sum_{j != i} m_j / sqrt(|x_i - x_j|^2 + eps^2)
 *
 * the Plummer-softened potential at member i of all the others, in the
 * units of G m / length. The most bound particle is the member of lowest
 * phi_i (the first in member order among equals).
 *
 * Two ways to compute it:
 *   exact   the all-pairs double loop in double precision, O(n^2)
 *           (fk_pot_exact); the reference for everything else.
 *   tree    Barnes-Hut (fk_pot_tree): a binary tree over the members (median
 *           split of the widest axis, leaves of at most FK_POT_LEAF), each
 *           node a monopole plus quadrupole about its centre of mass, with
 *           the softened kernel's own Taylor terms. Subtrees of at most
 *           FK_POT_GROUP members walk the tree together: node B serves as a
 *           multipole when |c_T - c_B| > r_T + b_B / theta (c the centres of
 *           mass, r_T and b_B radii of spheres about them holding every
 *           member: every target sees B under an angle below theta), else it
 *           is opened; the members of opened leaves are summed exactly.
 *           Nodes of mass 0, and the members of mass 0 of opened leaves, are
 *           left out: their terms are 0 (the unbinding sums the leavers'
 *           potential over a tree where only they have mass).
 *
 * The minimum (fk_pot_minimum, fk_pot_minima): exact sums for groups of at
 * most nexact members. Above that the tree, then the candidates, the
 * members whose tree potential is within tol * |least tree potential| of
 * the least (at most ncand of them, lowest first), are summed again exactly
 * (fk_pot_exact_at, O(n) each), and the lowest of those is the answer. So
 * the potential reported is always an exact sum, and the member is the
 * exact minimum whenever the tree's errors at it and at the tree's own
 * minimum are below tol / 2 times the least potential's magnitude. tol = 0
 * asks for FK_POT_TOL_COEF * theta^4, which covers at least 1.37 times twice
 * the largest error (over all members, relative to the least potential)
 * measured on FoF groups of real snapshots (one with five particle
 * masses) and of mock NFW halos, for theta from 0.3 to 1 (bench/potbench.c;
 * the figures are in halostats(1)).
 *
 * Data layout: structure of arrays, double precision, so that the same
 * arrays can be handed to a GPU implementation of this interface.
 */

#define FK_POT_LEAF 16        /* members per tree leaf, at most */
#define FK_POT_GROUP 32       /* members per group of targets sharing a walk, at most */
#define FK_POT_THETA 0.7      /* default opening angle */
#define FK_POT_NEXACT 2000    /* default largest group summed exactly */
#define FK_POT_NCAND 256      /* default most candidates re-evaluated exactly */
#define FK_POT_ALONE 65536    /* fk_pot_minima: larger groups get every thread, one at a time */
#define FK_POT_TOL_COEF 0.02  /* automatic tol: this times theta^4 */

typedef struct fk_pot_params {
    double G;         /* gravitational constant, > 0                          */
    double eps;       /* Plummer softening length, > 0                         */
    double theta;     /* opening angle, (0, 1]                                 */
    uint64_t nexact;  /* groups of at most this many members: exact sums       */
    double tol;       /* tree: candidate window, relative, >= 0 (0: automatic) */
    uint32_t ncand;   /* tree: most candidates re-evaluated exactly, >= 1      */
} fk_pot_params;

/* G = 1, eps = 0 (to be set: it has no default of its own), theta =
 * FK_POT_THETA, nexact = FK_POT_NEXACT, tol = 0, ncand = FK_POT_NCAND. */
void fk_pot_defaults(fk_pot_params *p);

/* FK_EINVAL, naming the parameter, unless every one is in range. */
int fk_pot_check(const fk_pot_params *p, fk_error *err);

/* The members of one group: n positions and masses, structure of arrays. */
typedef struct fk_pot_members {
    size_t n;
    const double *x, *y, *z; /* positions, n each */
    const double *m;         /* masses >= 0, n    */
} fk_pot_members;

/* phi[i] for every member by the all-pairs double loop (each pair once,
 * in a fixed order): O(n^2), sequential, no allocation. Can't fail. */
void fk_pot_exact(const fk_pot_members *g, double G, double eps, double *phi);

/* phi_i for one member i < n by the exact sum over the others, O(n).
 * Can't fail. */
double fk_pot_exact_at(const fk_pot_members *g, double G, double eps, size_t i);

/* Counts of a tree evaluation, for benchmarks and tests. */
typedef struct fk_pot_tree_stats {
    uint64_t nodes, groups;  /* tree nodes, groups of targets (walks) */
    uint64_t node_terms;     /* target-node interactions (multipoles)   */
    uint64_t particle_terms; /* target-member interactions (exact terms) */
} fk_pot_tree_stats;

/* phi[i] for every member by the Barnes-Hut tree with p's G, eps and theta,
 * in parallel (OpenMP over groups of targets); each phi[i] is summed by one
 * thread in a fixed order, so the result does not depend on the number of
 * threads. stats may be NULL. FK_EINVAL (bad parameters, n not below 2^32),
 * FK_ENOMEM. */
int fk_pot_tree(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_pot_tree_stats *stats, fk_error *err);

/* The candidate window tol of p, relative: p->tol, or when that is 0,
 * FK_POT_TOL_COEF * theta^4. */
double fk_pot_tolerance(const fk_pot_params *p);

/* How a minimum was found. */
enum { FK_POT_BY_EXACT = 0, FK_POT_BY_TREE = 1 };

typedef struct fk_pot_min {
    uint64_t index;      /* the member of least potential                        */
    double phi;          /* its potential, an exact sum (0 for a group of one)   */
    uint32_t method;     /* FK_POT_BY_EXACT or FK_POT_BY_TREE                    */
    uint32_t candidates; /* members evaluated exactly after the tree (0: exact) */
} fk_pot_min;

/* The minimum of one group, as described above; OpenMP within the group
 * when it takes the tree. FK_EINVAL, FK_ENOMEM. */
int fk_pot_minimum(const fk_pot_members *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err);

/* Many groups at once: group k's members are [first[k], first[k+1]) of the
 * arrays (first has ngroups + 1 ascending entries, first[0] = 0). */
typedef struct fk_pot_groups {
    uint64_t ngroups;
    const uint64_t *first;
    const double *x, *y, *z, *m;
    double *phi; /* NULL, or first[ngroups] entries: every member's potential as the
                    minimum search computed it (exact sums, or the tree's), kept for
                    the unbinding's first pass (unbind.h) */
} fk_pot_groups;

/* min[k] for every group k, as fk_pot_minimum would give it: the groups
 * that take the tree and have more than FK_POT_ALONE members one after
 * another, each with every thread; the others a thread each, largest first
 * (one barrier in all: for thousands of small groups, per-group parallel
 * regions cost more than they save). The answer does not depend on the
 * number of threads. With g->phi, every member's potential goes there too.
 * This is the entry point a GPU implementation provides too. FK_EINVAL,
 * FK_ENOMEM. */
int fk_pot_minima(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err);

/* The shape of fk_pot_minima, for callers that take either implementation
 * (the CPU's above, or a GPU's behind the same contract). */
typedef int (*fk_pot_minima_fn)(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
