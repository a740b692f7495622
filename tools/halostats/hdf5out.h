/* hdf5out.h - halostats --format=hdf5: the catalogue written as a Gadget-4 style HDF5 file, and the group-ordered snapshot beside it. */
#ifndef HALOSTATS_HDF5OUT_H
#define HALOSTATS_HDF5OUT_H

#include <stdint.h>

#include "halostats.h"
#include "hs.h"
#include "prog.h"

/* Returns 1 when this build writes HDF5; otherwise exits with status 1
 * and a one-line message (before any input is read). */
int hdf5_check(void);

/* Writes the catalogue of level 0 and its subhalos (those of the level 1
 * groups, or with --unbind each bound group's main subhalo and the bound
 * parts of its level 1 groups: subhalos.h) to the output of std (binary:
 * refused on a terminal without -f), and with o->snapshot the
 * group-ordered snapshot to that file, committed first; returns the
 * catalogue's output, to be committed. Exits on error. */
fk_output *hdf5_write(const prog_std *std, const input *in, const options *o, fk_halo *const *halos, const uint64_t *ng);

#endif
