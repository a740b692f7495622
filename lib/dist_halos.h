/* dist_halos.h - halostats under mpirun: each group's members gathered on one rank, its row computed there, the rows gathered on rank 0. */
#ifndef FK_DIST_HALOS_H
#define FK_DIST_HALOS_H

#include <stdint.h>

#include "error.h"
#include "halostats.h"
#include "levels.h"
#include "potential.h"
#include "unbind.h"

/*
 * Input, rank r of R: the rank's particles in its stream order (as groups
 * --format=stream under mpirun leaves them) and per level k the global group
 * number of each (GIDL, 0: none) and the global number of groups.
 *
 * How, level by level:
 *   1. owners: the members of every group are summed over the ranks (an
 *      allreduce, 8 bytes a group), and the groups are dealt largest first,
 *      each to the rank with the fewest members so far (ties: the lower
 *      rank), a greedy that balances the members; the same on every rank;
 *   2. every particle of a group goes to the group's owner (one alltoallv,
 *      41 bytes a particle: position, velocity, mass, ID, group, type), each rank's
 *      in its stream order; the owner receives them by rank;
 *   3. the owner gathers each group's members in ID order (halomembers.h),
 *      the order one process puts them in, whatever its stream's order, and
 *      computes its groups' rows with the calls halostats makes in one
 *      process (fk_halostats_compute, fk_halostats_centres_phi and, when
 *      asked, fk_unbind_halos_phi), then sets id to the global number;
 *   4. rank 0 gathers every row (MPI_Gatherv, sizeof (fk_halo) a row) into
 *      group order.
 * Every sum of a group runs over its members in ID order, as in one process
 * on the same particles in any stream order, so the rows are bit for bit the
 * single process's for every R and any split of the particles. The fields level and host are left 0 (the
 * caller has GPAR); ref is the member's index in the owner's arrays.
 *
 * Checks, on every rank: the same number of levels, groups per level, box,
 * origin and periodicity; every GIDL value at most the level's groups, and
 * what fk_halostats_compute checks of a grouped particle (mass, finite
 * values), named by its index in the rank's stream; every group a member on
 * some rank. Limits: at most 2^31 - 1 members sent to or
 * received by one rank per level (FK_EUNSUP).
 */

typedef struct fk_dhalos_in {
    uint64_t n;                           /* this rank's particles               */
    const float *pos, *vel, *mass;        /* n x 3, n x 3, n                     */
    const uint64_t *ids;                  /* n original indices                  */
    int periodic;
    double box, origin;
    int nlevels;                          /* 1..FK_LEVELS_MAX                    */
    const uint32_t *gid[FK_LEVELS_MAX];   /* n per level: group numbers, 0 none  */
    uint64_t ngroups[FK_LEVELS_MAX];      /* the level's groups, over all ranks  */
    const char *name;                     /* the input, in messages              */
    int comoving;                         /* fk_halo_input's: a comoving stream's */
    double vscale, hflow;                 /* peculiar velocities, Hubble flow    */
    const uint8_t *type;                  /* n of snap.h's types, or NULL: every particle dark; the
                                           * contaminants' m_hires is the least dark mass over
                                           * every rank (fk_halo_hires_mass, halostats.h) */
} fk_dhalos_in;

typedef struct fk_dhalos_opts {
    fk_centre centre;
    fk_pot_params pot;        /* G in the stream's units                           */
    fk_pot_minima_fn minima;  /* NULL: the CPU's (fk_pot_minima)                   */
    int unbind;               /* the self-bound part of every group (unbind.h)     */
    fk_unbind_params up;      /* with unbind                                       */
} fk_dhalos_opts;

typedef struct fk_dhalos_info {
    int rank, ranks;
    uint64_t members_max, members_min; /* members one rank computed (all levels): most, least */
    uint64_t sent_max, sent_sum;       /* bytes sent to other ranks (members, rows): most by one rank, all ranks */
    double t_route, t_compute, t_gather; /* rank 0's wall time: members to owners, rows, rows to rank 0 */
    double t_compute_max;              /* the slowest rank's rows                   */
    /* rank 0's rows in parts: members in group order, the properties of
     * fk_halostats_compute, the centres' gather, potentials and profiles
     * (fk_halo_timing), the unbinding */
    double t_order, t_props, t_centre_gather, t_potential, t_profile, t_unbind;
    uint64_t candidates[FK_LEVELS_MAX], ntree[FK_LEVELS_MAX]; /* potentials: exact candidates, groups by tree */
} fk_dhalos_info;

/* Collective (MPI started: fk_dist_init): the rows of every group of every
 * level. On rank 0, rows[k] gets a malloc'd array of in->ngroups[k] rows
 * (the caller frees them); elsewhere rows[k] is set NULL. Every rank returns
 * the same status and, on failure, the same message in err (the lowest
 * failing rank's); nothing is left allocated then. FK_EUNSUP in a build
 * without MPI. */
int fk_dhalos_run(const fk_dhalos_in *in, const fk_dhalos_opts *o, fk_halo **rows, fk_dhalos_info *info, fk_error *err);

#endif
