/* tree_rank.h - a catalogue's members ranked by their distance from their halo's centre, from the snapshot's positions, for SubLink's 1/rank score. */
#ifndef FK_TREE_RANK_H
#define FK_TREE_RANK_H

#include "error.h"
#include "tree_cat.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * SubLink's score weights each shared member by 1/rank, the rank by binding
 * energy. fofkit's catalogues list members by snapshot index, so they hold
 * no such rank; the distance from the halo's centre (GroupPos/SubhaloPos:
 * the potential minimum, halostats' default centre and SUBFIND's) is its
 * stand-in here: the nearest member is rank 1. The positions are the
 * snapshot's own (Coordinates by ParticleIDs), in its length unit, which is
 * the catalogue's (halostats writes the stream's; Gadget-4 its own);
 * distances are the periodic box's nearest images.
 */

/* Reorders each halo's member IDs in c (read from catname) nearest first,
 * ties in the file's order, with the positions of the HDF5 snapshot
 * snapname (fk_hdf5_read: one file or many; IDs matched by a sort and a
 * join); sets c->ranked. FK_EFORMAT when a member's ID is not in the
 * snapshot (naming both files) or the snapshot has no ParticleIDs; the
 * reader's errors (FK_EIO, FK_EFORMAT, FK_EUNSUP without HDF5); FK_ENOMEM. */
int fk_treecat_rank_distance(fk_treecat *c, const char *catname, const char *snapname, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
