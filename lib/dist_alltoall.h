/* dist_alltoall.h - all-to-all exchanges of any size under MPI: fixed-size records, in rounds that keep MPI's int counts. */
#ifndef FK_DIST_ALLTOALL_H
#define FK_DIST_ALLTOALL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * MPI counts and displacements are ints: one MPI_Alltoallv moves at most
 * 2^31 - 1 records into or out of a rank. fk_dist_alltoall moves any
 * number: when what MPI moves lies within an int's reach of the start of
 * every rank's send and receive buffers (and no test asks for rounds), in
 * one MPI_Alltoallv straight from and into the callers' buffers; else in
 * rounds, each moving at most fk_dist_round_cap
 * records between two ranks through buffers of a bounded size (packed from
 * the send buffer, unpacked into the receive buffer at 64-bit offsets).
 * A rank's records to itself never go through MPI: they are copied on every
 * core of the calling thread's OpenMP team.
 *
 * fk_dist_alltoall receives into a buffer of its own; fk_dist_alltoall_at
 * moves the records straight into the caller's array, each source's at an
 * offset the caller gives (which may leave gaps: dist_link's owned
 * particles land in their final arrays around the rank's own, which never
 * travel), so that no received copy is made and unpacked again.
 *
 * FOFKIT_DIST_ROUND=N (N >= 1; the least over the ranks counts) caps the
 * records one round moves between two ranks at N, so that tests meet many
 * rounds with few particles. Built without MPI every call is FK_EUNSUP.
 */

/* The most records one round moves from one rank to another, for R ranks
 * and records of size bytes: INT_MAX / R, and at most 2^28 bytes per pair,
 * lowered by env_cap when it is above 0 (fk_dist_alltoall passes
 * FOFKIT_DIST_ROUND). At least 1. */
uint64_t fk_dist_round_cap(int R, size_t size, uint64_t env_cap);

/* How many of count records the round numbered round moves with cap per
 * round: the rounds move them in order, cap at a time. */
uint64_t fk_dist_round_share(uint64_t count, uint64_t cap, uint64_t round);

/* Collective: rcount[s] gets count[me] of every rank s, this rank's
 * records from it (rcount holds R). Cannot fail under MPI (MPI's errors
 * abort); FK_EUNSUP without it. */
int fk_dist_counts(const uint64_t *count, uint64_t *rcount, fk_error *err);

/* Collective: sends count[d] records of size bytes from send (grouped by
 * destination rank, in rank order) to every rank d; rank s's records to
 * this one, rcount[s] of them (as fk_dist_counts gives them), land in recv
 * from record roff[s] on (roff holds R; blocks must not overlap; recv
 * beyond them is left as it is). Out of memory on any rank fails on every
 * rank (agreed) before anything moves. */
int fk_dist_alltoall_at(const void *send, const uint64_t *count, size_t size, void *recv, const uint64_t *rcount,
                        const uint64_t *roff, fk_error *err);

/* Collective: sends count[d] records of size bytes from send (grouped by
 * destination rank, in rank order) to every rank d; *recv (malloc'd, the
 * caller frees) gets every rank's records to this one, grouped by source
 * rank in rank order, rcount[s] of them from rank s (rcount holds R),
 * *nrecv in all. Out of memory on any rank fails on every rank (agreed)
 * before anything moves; *recv is then NULL. */
int fk_dist_alltoall(const void *send, const uint64_t *count, size_t size, void **recv, uint64_t *rcount,
                     uint64_t *nrecv, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
