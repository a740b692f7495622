/* haloearly.h - halostats -m's work before its input has ended: the levels numbered, their members gathered, their potentials' minima found. */
#ifndef FK_HALOEARLY_H
#define FK_HALOEARLY_H

#include <stdint.h>

#include "error.h"
#include "groups.h"
#include "halomembers.h"
#include "halostats.h"
#include "levels.h"
#include "potential.h"
#include "snap.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * foflink writes LINK and its SINK levels before the particle chunks it
 * passes on (ID, VEL: fofstream(5)), after the POS, MASS and TYPE it read.
 * So halostats -m, reading its input on a feed (streamfeed.h), has what the
 * groups, their members and the potentials' minima need while the
 * velocities still come: this is that work, done as the rest of halostats
 * does it later (the same calls, the same bytes), so that it only has to
 * take the results. What halostats does after its input has ended:
 * fk_halostats_compute_members on the members gathered here, then
 * fk_halostats_centres_found with the minima found here (the minima left,
 * beside the profiles on a device, and the profiles), or, when a device's
 * minima go on on the finder's thread (fk_halo_early_finder_start),
 * fk_halostats_centres_await with fk_halo_early_found as its wait.
 */

typedef struct fk_halo_early_level {
    uint32_t *gid;          /* nsource group ids, the source's order (groups -m N's GID) */
    fk_groups grps;         /* its numbers (GRPS)                                        */
    uint32_t *gpar;         /* from level 1: ngroups + 1 parents (GPAR); else NULL       */
    fk_halo_order members;  /* the members, gathered (zeroed: not gathered)              */
    fk_pot_min *min;        /* the minima of groups [0, found), or NULL: none found here  */
    uint64_t found;
    int bg, over;           /* found by the finder's thread; it is done with this level   */
    double secs_gather, secs_potential; /* the members'; the doubles and minima's        */
    double secs_minima;                 /* of secs_potential, the minima's calls alone    */
} fk_halo_early_level;

typedef struct fk_halo_early {
    int nlevels;            /* the levels numbered here (0: none)                          */
    fk_halo_early_level lv[FK_LEVELS_MAX];
    double secs_groups;     /* the IDs checked, every level resolved, numbered, parented   */
    int minima_failed;      /* a level's minima not found here: found the old way later   */
    struct fk_halo_finder *finder; /* the minima's thread (fk_halo_early_finder_start)     */
} fk_halo_early;

/* The groups of nlevels SINK levels (1..FK_LEVELS_MAX) of snap's particles
 * with original indices ids, as groups -m minsize numbers them: the IDs
 * checked (fk_groups_check_ids), each sinks[k] resolved in place
 * (fk_groups_resolve) and numbered into e->lv[k].gid and grps, from level 1
 * the parents (fk_groups_parents). The failures and messages are those of
 * those calls, level by level (e->nlevels the levels done); FK_ENOMEM.
 * name for messages. */
int fk_halo_early_groups(fk_halo_early *e, const fk_snap *snap, uint64_t *ids, uint32_t *const *sinks, int nlevels,
                         uint64_t minsize, const char *name, fk_error *err);

/* Level k's members (fk_halo_order_build over each particle's group,
 * gid[ids[i]]) into e->lv[k].members, then, when pot is not NULL, their
 * potentials' minima (fk_halostats_minima through minima; phi as there)
 * into e->lv[k].min, batch after batch until stop(stop_ctx) says so (the
 * input has ended: the rest found beside the profiles, as before; found
 * the groups done). in: the particles' positions, masses and IDs, the box
 * (vel may be NULL). A failure of the minima is not one: they are found
 * later, as before (e->minima_failed set). FK_ENOMEM of the members. */
int fk_halo_early_level_work(fk_halo_early *e, int k, const fk_halo_input *in, const fk_pot_params *pot,
                             fk_pot_minima_fn minima, int (*stop)(void *), void *stop_ctx, double *phi,
                             fk_error *err);

/* For a device's minima, which had better run from the first batch to the
 * last without a pause: the minima of levels 0 .. nlevels - 1 (their
 * members gathered) found on a thread of their own, level after level,
 * batch after batch (fk_halostats_minima; phi, when not NULL, level 0's),
 * while the stage reads on, measures the groups and makes the profiles of
 * the groups whose minima have come (fk_halo_early_found, the wait of
 * fk_halostats_centres_await). in and pot are copied. A failure stops the
 * thread: the levels' found say how far it went (e->minima_failed set).
 * FK_ENOMEM; nothing started then. */
int fk_halo_early_finder_start(fk_halo_early *e, int nlevels, const fk_halo_input *in, const fk_pot_params *pot,
                               fk_pot_minima_fn minima, double *phi, fk_error *err);

/* fk_halo_found_fn (halostats.h) of level k of the finder: ctx is
 * &e->lv[k]'s early, as fk_halo_early_waiter makes it. */
typedef struct fk_halo_early_wait {
    fk_halo_early *e;
    int k;
} fk_halo_early_wait;
uint64_t fk_halo_early_found(void *ctx, uint64_t have, int *over);

/* Stops the finder after its batch and waits for it (nothing when none
 * runs): before its minima or phi are dropped, or read in full. */
void fk_halo_early_finder_stop(fk_halo_early *e);

/* Frees what e holds but the gid and gpar arrays handed out (set to NULL
 * by the taker) and zeroes it, the finder stopped first. */
void fk_halo_early_free(fk_halo_early *e);

#ifdef __cplusplus
}
#endif

#endif
