/* subhalos.h - the subhalos of a catalogue after unbinding: each bound group's main subhalo and the bound parts of its level 1 groups, disjoint. */
#ifndef FK_SUBHALOS_H
#define FK_SUBHALOS_H

#include <stdint.h>

#include "error.h"
#include "halostats.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Subhalos as SUBFIND's are (Gadget-4's catalogue): self-bound sets of
 * particles, a particle in one at most, each inside its group. From the
 * unbinding of level 0 (its bound members, BGID level 0) and, when there is
 * a level 1, of level 1:
 *   satellites   the bound part of every level 1 group that has one, but
 *                the host's central level 1 group: the one holding the
 *                host's most bound member (with potential centres), else
 *                the host's largest level 1 group (the lowest id)
 *   main         of every level 0 group: its bound members that lie in
 *                none of its satellites (the central level 1 group's bound
 *                members among them), when there is one
 * so a main subhalo is its group's bound part less the bound parts of its
 * satellites, as SUBFIND's main subhalo is. Rows come host by host: the
 * main subhalo first, then the satellites by level 1 id. A row's level is
 * 0 for a main subhalo (id: its group's), 1 for a satellite (id: its level
 * 1 group's); host is the level 0 group.
 */

/* What the subhalos are made from: per original index (nsource entries)
 * the groups and bound parts of levels 0 and 1 (gid1, bgid1 NULL: one
 * level), and the halos of both levels (mbp_id read when mbp is set). */
typedef struct fk_subhalo_in {
    uint64_t nsource;
    const uint32_t *gid0, *bgid0, *gid1, *bgid1;
    const fk_halo *h0, *h1;
    uint64_t ng0, ng1;
    int mbp;
} fk_subhalo_in;

/* Fills gsub (nsource entries: 1 + the row of each original index's
 * subhalo, 0 for none) and *rows (malloc'd, *nrows of them, caller frees:
 * level, id, host and n set, the rest 0). FK_EFORMAT when a bound member's
 * group disagrees with its level's group (naming the particle), FK_ENOMEM. */
int fk_subhalos_bound(const fk_subhalo_in *in, uint32_t *gsub, fk_halo **rows, uint64_t *nrows, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
