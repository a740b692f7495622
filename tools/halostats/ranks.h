/* ranks.h - halostats --format=stream: each particle's place in its group's members, most bound first (MORDER, MRANK chunks). */
#ifndef HALOSTATS_RANKS_H
#define HALOSTATS_RANKS_H

#include <stdint.h>

#include "halostats.h"
#include "hs.h"
#include "stream.h"

/* With potential centres (--centre=mbp), on w: the MORDER record (order
 * radius, levels, definition) and for every level k an MRANK chunk (<u4,
 * nsource rows, original order): each particle's place in its group's
 * members, 1 nearest the group's centre (its most bound member), ties to
 * the lower original index, 0 for none (memberorder.h: the order of
 * halostats' HDF5 catalogue without --unbind). Exits on error. */
void hs_rank_chunks(fk_writer *w, const input *in, const options *o, fk_halo *const *halos, const uint64_t *ng);

#endif
