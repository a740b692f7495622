/* dist_tree.h - halotree under mpirun: the halos of two snapshots linked by their members' IDs, each rank holding a share of each catalogue's members. */
#ifndef FK_DIST_TREE_H
#define FK_DIST_TREE_H

#include <stdint.h>

#include "error.h"
#include "tree_cat.h"
#include "tree_match.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every rank holds every halo of both catalogues (their rows: len, first)
 * and a share of their members' IDs (fk_treecat_read_part: IDs/ID's places
 * ids_at .. ids_at + nids - 1). Three exchanges:
 *   1. each held member as a 16-byte record (ID; its halo; its rank in the
 *      halo, 1 first, for the earlier catalogue A, 0 for the later B) to
 *      rank hash(ID) % P (SplitMix64's finalizer of the ID: Gadget's
 *      consecutive IDs spread evenly), one all-to-all (fk_dist_alltoall);
 *   2. there, sorted by ID (fk_mtree_sort) and joined: each ID held by one
 *      A and one B halo gives (A halo, B halo, rank), 12 bytes, sent to the
 *      rank that owns the A halo (halo h of n: rank h P / n, blocks in
 *      halo order); an ID twice in one catalogue is the single process's
 *      FK_EFORMAT, the least such ID, agreed on by every rank;
 *   3. the owner sorts its shares by (A halo, B halo, rank) and reduces
 *      them to (A halo, B halo, shared count, score): the score summed in
 *      rank order, as tree_match.c sums it, so that it is the same double
 *      bit for bit (partial sums made on the joining ranks would round
 *      otherwise); every rank gathers every owner's links (MPI_Allgatherv),
 *      which come in (prog, desc) order as the owners' blocks do.
 * Memory a member of the rank's share: its 8-byte ID (the catalogue), 16
 * bytes sent and 16 received in exchange 1 (the send buffer freed before
 * the sort), 16 bytes of the sort's scratch: at most 40 bytes; 16 bytes a
 * member on the wire. A shared member costs 12 bytes in exchange 3 and 32
 * in the owner's sorts.
 */

/* Collective over fk_dist_comm(): fk_mtree_match's links, counts, scores
 * and errors, on every rank, for catalogues each rank read a share of
 * (only the same on every rank). FK_EUNSUP without MPI. */
int fk_dist_mtree_match(const fk_treecat *a, const uint8_t *only, const fk_treecat *b, int weight, const char *aname,
                        const char *bname, fk_treelink **links, uint64_t *nlinks, uint64_t *shared, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
