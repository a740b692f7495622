/* dist_groups.h - groups under mpirun: per-rank GMIN chunks numbered globally, one .grp file or per-rank streams. */
#ifndef FK_DIST_GROUPS_H
#define FK_DIST_GROUPS_H

#include <stdint.h>

#include "error.h"
#include "groups.h"
#include "levels.h"

/*
 * Input, rank r of R: a stream (the name with "%r" replaced by r) of that
 * rank's particles, as foflink under mpirun leaves it: SNAP (n the rank's
 * particles, nsource the whole snapshot's, the same on every rank), ID, and
 * per level k a GMIN chunk:
 *   GMIN  <u8, n rows, 1 column, per particle (stream order), level k: the
 *         lowest original index (ID) among the members of the particle's
 *         level-k group, on whatever rank they are
 * LINK, when present, may say `ranks R` and `rank r`: they must match the
 * run. A SINK chunk is passed on and otherwise ignored (its indices are the
 * rank's own); other chunks pass on unread.
 *
 * What is computed is exactly what groups computes in one process on the
 * whole snapshot: group sizes summed over ranks, the minimum size applied to
 * the global sizes, numbers 1..ngroups by decreasing size, ties by lowest
 * original index (FK_GROUPS_ORDER; the GMIN value is that index).
 *
 * How (R ranks, IDs split into R equal ranges [q nsource / R, (q+1)
 * nsource / R), range q owned by rank q):
 *   1. each rank counts its particles per GMIN value, a block of them a
 *      core and a run of one value at a time: a value it owns into its
 *      range's sizes, the others into the block's hash table, whose (value,
 *      count) pairs go to the value's owner (one alltoallv, 16 bytes a pair;
 *      a value in two blocks is sent twice, the owner adds both);
 *   2. owners sum them into global sizes; the kept groups' size histograms
 *      are gathered by every rank (at most sqrt(2 nsource) sizes a rank), so
 *      each owner numbers its groups without any sort across ranks: the
 *      number of (size s, value v) is 1 + the kept groups larger than s +
 *      those of size s on lower ranks (smaller values) + those of size s
 *      below v on its own rank;
 *   3. owners answer each pair with its group number (4 bytes a pair);
 *   4. every particle's (ID, group) goes to the ID's owner (12 bytes a
 *      particle; nothing crosses ranks when each rank holds its own ID
 *      range, as tipsy2bin slices do), which checks that no ID repeats, that
 *      each kept group's lowest ID is a particle of that group, and holds
 *      the .grp rows of its range.
 *
 * Outputs:
 *   grp     one .grp text file (FK_DGROUPS_GRP), byte for byte what groups
 *           --format=grp writes in one process: every rank formats its range
 *           and writes it at its offset (MPI-IO, offsets from an exscan of
 *           the byte lengths) into a temporary file that rank 0 renames after
 *           every rank succeeded, or removes.
 *   stream  per-rank streams (output name with "%r"): the input passed on
 *           with, per level k, GRPS (the global counts, and `ranks`, `rank`,
 *           `nlocal` the rank's particles) and
 *             GIDL  <u4, n rows, 1 column, per particle (stream order),
 *                   level k: the particle's group number (0: none)
 *           and from level 1 on GPAR as groups writes it (the whole table on
 *           every rank). GID (nsource rows) is not written. With overlay,
 *           those chunks alone after a BASE naming the input (overlay.h):
 *           4 bytes a particle a level instead of the whole stream again.
 * An input that is an overlay is read with its base (fk_reader_follow).
 * Limits: a rank's particles fit 32 bits, the group numbers 32 bits
 * (FK_EUNSUP otherwise).
 */

enum { FK_DGROUPS_STREAM = 0, FK_DGROUPS_GRP = 1 };

typedef struct fk_dgroups_opts {
    const char *input;  /* name, "%r" for the rank                      */
    const char *output; /* grp: one file; stream: name with "%r"         */
    int format;         /* FK_DGROUPS_STREAM or FK_DGROUPS_GRP          */
    uint32_t level;     /* grp: the level written                       */
    uint64_t minsize;
    int zlevel, force;
    int overlay;        /* stream: write an overlay of the input (overlay.h), BASE then the chunks above alone */
} fk_dgroups_opts;

typedef struct fk_dgroups_info {
    int rank, ranks, nlev;
    fk_groups lev[FK_LEVELS_MAX]; /* global counts of the levels resolved */
    uint64_t sent_max, sent_sum;  /* bytes sent to other ranks: most by one rank, all ranks */
    double seconds;               /* rank 0's wall time, and its parts: */
    double t_read, t_route, t_number, t_check, t_write; /* reading; IDs to owners; numbering (all
                                                         * levels); checks; writing */
} fk_dgroups_info;

/* Collective (MPI must have been started: fk_dist_init): runs groups on
 * this rank's stream. Every rank returns the same status and, on failure,
 * the same message in err (the lowest failing rank's); on failure no output
 * is left under its final name on any rank. FK_EUNSUP in a build without
 * MPI. */
int fk_dgroups_run(const fk_dgroups_opts *o, fk_dgroups_info *info, fk_error *err);

#endif
