/* halomembers.h - the members of every group, group by group in stream order, by a parallel counting sort. */
#ifndef FK_HALOMEMBERS_H
#define FK_HALOMEMBERS_H

#include <stdint.h>

#include "error.h"

/*
 * The members of groups 1..ng of n particles: group g's are
 * index[first[g - 1] .. first[g]), their stream indices in ascending order
 * (the order every per-group sum of halostats.c follows, the stream's).
 * One array of 4-byte indices (8-byte ones only for 2^32 particles or
 * more) beside the particles: the members' positions, velocities and masses
 * are read through it, never copied.
 */
typedef struct fk_halo_order {
    uint64_t n, ng;     /* particles, groups                                       */
    uint64_t *first;    /* ng + 1 offsets, first[0] = 0                            */
    uint32_t *index;    /* the members' stream indices (n <= 2^32), or NULL        */
    uint64_t *index64;  /* the same when n > 2^32 (index is NULL then)             */
    uint64_t bad;       /* the lowest particle whose group is beyond ng, or n: none */
    uint32_t bad_group; /* its group                                               */
} fk_halo_order;

/* The stream index of member k (0 <= k < first[ng]). */
static inline uint64_t fk_halo_order_at(const fk_halo_order *o, uint64_t k)
{
    return o->index ? o->index[k] : o->index64[k];
}

/* Gathers the members of every group of n particles, particle i in group
 * grp[i] (0: none). Counting sort on every core: the particles are cut
 * into blocks, each block's members of group g go after the earlier
 * blocks' ones, so the result does not depend on the number of threads. A
 * particle in a group beyond ng is left out and the lowest such one kept
 * in bad (the caller reports it). Counts take at most n / 2 x 4 bytes
 * beside the index. FK_ENOMEM. */
int fk_halo_order_build(uint64_t n, const uint32_t *grp, uint64_t ng, fk_halo_order *o, fk_error *err);

/* Releases what fk_halo_order_build allocated; o may be zeroed. */
void fk_halo_order_free(fk_halo_order *o);

/* The same counting sort into arrays of the caller's: index[first[g - 1] ..
 * first[g]) = group g's members, with first from the group sizes (ng + 1
 * entries). Particles beyond ng are left out. FK_ENOMEM (nothing in err). */
int fk_halo_order_fill(uint64_t n, const uint32_t *grp, uint64_t ng, const uint64_t *first, uint64_t *index);

#endif
