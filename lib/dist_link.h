/* dist_link.h - friends-of-friends linking distributed over MPI ranks: domains (boxes or slabs), ghosts, local linking, a merge across ranks. */
#ifndef FK_DIST_LINK_H
#define FK_DIST_LINK_H

#include <stdint.h>

#include "error.h"
#include "levels.h"
#include "link.h"
#include "linkrun.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every rank holds a slice of the snapshot (any particles, in any order) and
 * gets back, for each of its particles and each level, the lowest ID of the
 * particle's group: the same partition as one process linking the whole
 * snapshot, whatever the number of ranks.
 *
 *  1. Domains, by particle counts (in->decomp): boxes of a recursive
 *     coordinate bisection (FK_DECOMP_RCB, the default: dist_rcb.h), or
 *     slabs (FK_DECOMP_SLABS: along the axis of widest extent, cut where a
 *     global histogram of the coordinate, FK_DIST_BINS bins, reaches k/R of
 *     the particles); every particle goes to the rank of its domain (its
 *     owner).
 *  2. Ghosts: a copy of every particle goes to every other rank whose
 *     domain, widened by the longest linking length (and a margin for
 *     rounding, periodically wrapped in a periodic box), reaches it: for
 *     slabs about 2 b R N^(-1/3) of the particles, for boxes about
 *     6 b R^(1/3) N^(-1/3) (b the linking length over the mean spacing).
 *     Positions are sent as they are, never shifted: the predicate sees the
 *     floats a single process sees, so every pair test gives the same answer.
 *  3. Each rank links its owned particles and ghosts, every level: on its
 *     GPU the whole of it (fk_gpu_link_owned: the tree built and linked
 *     there, one upload and one download), on the CPU with the library's
 *     tree and linker (fk_link_run). A link with an owned end is found
 *     there. Each local group gets its lowest owned index (its key) and
 *     the lowest ID of its owned particles.
 *  4. Merge: a local group that holds owned particles is named across
 *     ranks by its rank's number and its key (names need only be unique:
 *     a group's answer is its lowest ID over all its parts); for each
 *     ghost in it, (owner's index, name) goes to
 *     the ghost's owner, which makes it an edge between two names. Only
 *     such boundary groups travel: the ranks join them together, in rounds
 *     of a distributed union-find (dist_join.h: hooking and pointer
 *     jumping, lowest name as root, no rank gathering them), which give
 *     every name its group's root and lowest ID; every other group's
 *     lowest ID is the rank's own.
 *  5. The labels go back to the rank and position each particle came from.
 *
 * A rank whose particles do not fit its GPU (or with a piece size given)
 * links them in pieces: runs of its owned particles along the widest axis,
 * each with every particle of the rank within the margin of it, the pieces'
 * components joined on the rank before the merge (the same argument: a link
 * with an owned end is found in that end's piece).
 *
 * Every pair of friends is found by the owner of either end (its friend is
 * within l of the owner's domain), so the edges join exactly the components of
 * one global group. IDs need not be unique: keys are stream indices.
 *
 * IDs travel and are kept in 4 bytes when every rank's are below 2^32 - 1,
 * else in 8 (FOFKIT_DIST_WIDE_IDS=1 takes 8 in any case, for tests).
 *
 * Collective: every rank calls it; a failure on any rank is agreed on
 * (fk_dist_agree), so all ranks return the same status and message.
 * FK_EUNSUP without MPI.
 */

#define FK_DIST_BINS 65536

/* The domains of fk_distlink_run (fk_distlink_in's decomp). */
enum { FK_DECOMP_RCB = 0, FK_DECOMP_SLABS = 1 };

typedef struct fk_distlink_in {
    uint64_t n;             /* this rank's particles (below 2^32)             */
    const float *pos, *vel; /* n x 3; vel for 6D (lo[0].psi > 0), else NULL   */
    const uint64_t *id;     /* n: the particles' IDs                          */
    const fk_linkopts *lo;  /* one per level (fk_levels_check'ed), the same on every rank */
    int nlevels;
    int gpu;                /* link on this rank's GPU                        */
    int brute;              /* all pairs instead of the tree (small inputs)   */
    uint32_t leafsize;      /* of the local trees                             */
    uint64_t piece;         /* link at most this many owned particles at a time
                               (0: all at once, unless gpu and gpu_mem say they
                               do not fit: then pieces that do)                */
    uint64_t gpu_mem;       /* the GPU's free bytes (0: unknown)              */
    int decomp;             /* FK_DECOMP_RCB (0) or FK_DECOMP_SLABS           */
} fk_distlink_in;

typedef struct fk_distlink_report {
    uint64_t ntotal;                   /* particles of all ranks                  */
    uint64_t owned, ghosts;            /* this rank's, after the decomposition    */
    uint64_t bytes_sent, bytes_recv;   /* this rank's, every exchange             */
    uint64_t edges[FK_LEVELS_MAX];     /* boundary edges this rank found          */
    uint64_t groups[FK_LEVELS_MAX];    /* global groups, of one particle or more  */
    uint64_t pieces;                   /* this rank's particles linked in so many  */
    int decomp;                        /* FK_DECOMP_RCB or FK_DECOMP_SLABS        */
    int axis;                          /* the slabs' axis (boxes: the widest)     */
    double slab_lo, slab_hi;           /* this rank's slab                        */
    double box_lo[3], box_hi[3];       /* this rank's domain (a slab: the bounds
                                          on the other axes)                     */
    /* the join across ranks (dist_join.h), every level: rounds of hooking,
     * passes of pointer jumping, bytes this rank sent and received, and the
     * most records it held at once */
    uint64_t join_rounds, join_jumps, join_sent, join_recv, join_held;
    double t_decomp, t_link, t_merge, t_return; /* wall time of each step        */
    double t_slabs, t_owned, t_ghosts; /* of t_decomp: the cuts, the owned particles
                                          to their slabs, the ghosts to theirs   */
    double t_moved;                    /* of t_decomp, t_return: in the exchanges
                                          between ranks (dist_alltoall.h)        */
    double t_cross;                    /* of t_merge, the part across ranks: the
                                          edges exchanged and joined over the
                                          ranks (the rest labels the rank's own
                                          components)                           */
    fk_link_report link;               /* the local linking                       */
    /* where the rank ran, for its caller to fill in (fk_distlink_run leaves them) */
    int device;                        /* the GPU's ordinal, -1: the CPU          */
    int threads;                       /* its OpenMP threads                      */
    int cpu_count, cpu_first, cpu_last; /* the cores it may use: how many, the
                                           first and last (-1: unknown)          */
    uint64_t peak_rss;                 /* its peak resident memory, bytes         */
    /* hydro runs (fk_distlink_attach): the linked particles this rank held to
     * attach to (its slab's and, of them, ghosts within the reach), the
     * particles it attached, and the bytes of those arrays (the tree aside) */
    uint64_t att_held, att_ghosts, att_sec, att_bytes;
} fk_distlink_report;

/* Links in's particles with every rank's: gmin[k][i] (n entries per level)
 * gets the lowest ID in the level-k group of particle i. rep may be NULL. */
int fk_distlink_run(const fk_distlink_in *in, uint64_t *const *gmin, fk_distlink_report *rep, fk_error *err);

/*
 * Hydro runs under mpirun (attach.h): the particles of link_types (type[],
 * n entries) are linked across the ranks by fk_distlink_run, and every
 * particle of attach_types joins its nearest one's group by the attaching
 * rule. A secondary's nearest primary may lie up to 6.4 l away, beyond the
 * linking's margin of l, so the attaching has domains of its own (boxes or
 * slabs, as in->decomp), over every particle, with a margin of the reach
 * (decompose): each secondary goes to the rank of its domain (16 bytes),
 * each primary (position, ID, labels: 20 + 8 bytes a level) to every rank
 * whose domain lies within the reach of it, across the period too (a reach
 * wider than a neighbour's domain reaches further ranks, and every rank
 * holds more ghosts). There a tree is built
 * over them and each secondary's nearest found on the CPU or the rank's
 * GPU: the same rule, keys (IDs) and arithmetic as one process, with every
 * candidate within the reach present, so the same groups; the labels go
 * back to the secondaries' ranks. gmin as fk_distlink_run's, the lowest ID
 * of the group with its attached particles (the attached IDs reduced on a
 * home rank per label, a hash, which answers each rank's distinct labels);
 * a particle alone gets its own ID. attached[k] (may be NULL) gets the particles
 * attached at level k over all ranks; rep's groups count every group.
 * Collective; failures agreed on. FK_EUNSUP without MPI.
 */
int fk_distlink_attach(const fk_distlink_in *in, const uint8_t *type, unsigned link_types, unsigned attach_types,
                       uint64_t *const *gmin, fk_distlink_report *rep, uint64_t *attached, uint64_t *nprim,
                       uint64_t *nsec, fk_error *err);

/* Rank 0 gets every rank's report in all (size entries; other ranks may
 * pass NULL). Collective. */
int fk_distlink_gather(const fk_distlink_report *mine, fk_distlink_report *all, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
