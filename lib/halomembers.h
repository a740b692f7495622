/* halomembers.h - the members of every group, group by group in ID order, by a parallel counting sort in ID order (dense IDs) or followed by a sort by ID. */
#ifndef FK_HALOMEMBERS_H
#define FK_HALOMEMBERS_H

#include <stdint.h>

#include "error.h"

/*
 * The members of groups 1..ng of n particles: group g's are
 * index[first[g - 1] .. first[g]), their stream indices in ascending order
 * of the particles' IDs (the original indices: the order every per-group
 * sum of halostats.c, unbind.c and the potentials follows, so that a
 * catalogue does not depend on the stream's order, on how the particles
 * are split into ranks, nor on the number of threads), or, without IDs, in
 * ascending order. One array of 4-byte indices (8-byte ones only for 2^32
 * particles or more) beside the particles: the members' positions,
 * velocities and masses are read through it, never copied.
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
 * grp[i] (0: none) with ID ids[i] (NULL: i). Counting sort on every core:
 * the particles are cut into blocks, each block's members of group g go
 * after the earlier blocks' ones, so the result does not depend on the
 * number of threads. Dense IDs (spanning at most 1.5 n + 2^16, distinct:
 * a stream's, Gadget's 1..N) are counted in ID order through a table
 * indexed by ID (8 bytes an ID while it runs), so no group needs sorting;
 * otherwise each group not yet in ID order is then sorted by ID (a radix
 * sort, the groups in parallel, each on one thread; a stream in the
 * source's order needs none). A particle in a group beyond ng is left out
 * and the lowest such one kept in bad (the caller reports it). Counts take
 * at most n / 2 x 4 bytes beside the index, the sort 32 bytes a member of
 * the largest group a thread. FK_ENOMEM. */
int fk_halo_order_build(uint64_t n, const uint32_t *grp, const uint64_t *ids, uint64_t ng, fk_halo_order *o,
                        fk_error *err);

/* Sorting stream indices by their particles' IDs: a thread's scratch,
 * zeroed to start, grown as needed, kept from one call to the next. */
typedef struct fk_id_keyed {
    uint64_t id, i;
} fk_id_keyed;

typedef struct fk_id_sorter {
    fk_id_keyed *buf; /* 2 cap entries */
    uint64_t *count;  /* a radix pass's counts */
    uint64_t cap;
} fk_id_sorter;

/* The n stream indices idx32[0..n) (or idx64: one of them NULL) put in
 * ascending order of ids[index], stable among equal IDs: untouched when
 * they are in that order already, else an insertion sort (a few) or a
 * least significant digit radix sort of the IDs less the least, 11 bits a
 * pass. One thread. FK_ENOMEM (nothing in err; the indices untouched). */
int fk_id_sort(fk_id_sorter *s, uint32_t *idx32, uint64_t *idx64, uint64_t n, const uint64_t *ids);

void fk_id_sort_free(fk_id_sorter *s);

/* Releases what fk_halo_order_build allocated; o may be zeroed. */
void fk_halo_order_free(fk_halo_order *o);

/* The same counting sort and sort by ID into arrays of the caller's:
 * index[first[g - 1] .. first[g]) = group g's members, with first from the
 * group sizes (ng + 1 entries). Particles beyond ng are left out. FK_ENOMEM
 * (nothing in err). */
int fk_halo_order_fill(uint64_t n, const uint32_t *grp, const uint64_t *ids, uint64_t ng, const uint64_t *first,
                       uint64_t *index);

#endif
