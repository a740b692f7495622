/* gsnap_slice.h - slices of a Gadget-family snapshot: which particles of each type slice K of R holds. */
#ifndef FK_GSNAP_SLICE_H
#define FK_GSNAP_SLICE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The converters write the kept particles type by type (gsnap.h): every
 * kept particle of type 0 over all files, then of type 1, and so on. Slice
 * K of R holds the kept particles [floor(N K / R), floor(N (K + 1) / R)) of
 * the N kept, in that order, so that the R slices, one after the other, are
 * the whole conversion, and their sizes differ by one at most. Within type
 * t, it holds the particles [first[t], first[t] + count[t]) (numbered within
 * their type over the whole snapshot); a file holding particles
 * [seen, seen + n) of type t contributes the part fk_gslice_part gives.
 */

#define FK_GSLICE_NTYPES 7

typedef struct fk_gslice {
    uint64_t first[FK_GSLICE_NTYPES]; /* first particle of each type held (index within the type) */
    uint64_t count[FK_GSLICE_NTYPES]; /* particles of each type held (0 for a type not kept) */
    uint64_t n;                       /* particles held, the sum of count */
} fk_gslice;

/* floor(n k / r) for 0 <= k <= r, 1 <= r < 2^32, exact for every n below
 * 2^64 (no 128-bit product). */
uint64_t fk_slice_bound(uint64_t n, uint64_t k, uint64_t r);

/* The slice k of r (r 0: every kept particle) of a snapshot of ntotal[t]
 * particles of type t (ntypes types), the types of the bits of keep kept.
 * k must be below r. */
void fk_gslice_make(fk_gslice *sl, const uint64_t *ntotal, int ntypes, unsigned keep, uint32_t k, uint32_t r);

/* The particles of type t a file holding particles [seen, seen + n) of that
 * type contributes to the slice: returns how many, and *skip how many of
 * the file's particles of type t come before them. */
uint64_t fk_gslice_part(const fk_gslice *sl, int t, uint64_t seen, uint64_t n, uint64_t *skip);

#ifdef __cplusplus
}
#endif

#endif
