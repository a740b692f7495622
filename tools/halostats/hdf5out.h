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
 * parts of its level 1 groups: subhalos.h) to out, opened before the input
 * was read and committed by the caller, and with o->snapshot the
 * group-ordered snapshot to snap (opened likewise), committed here. Exits
 * on error. */
void hdf5_write(fk_output *out, fk_output *snap, const input *in, const options *o, fk_halo *const *halos,
                const uint64_t *ng);

/* Under mpirun (rank 0): the catalogue of levels 0 and 1 (gid1 NULL: level
 * 0 alone; the level 1 groups as the subhalos) as an HDF5 file image (*image malloc'd, *size bytes),
 * from the snap->n particles of mass, ids and pids (the snapshot's IDs of
 * the PID chunks, or NULL: the catalogue names the members by ids; the
 * grouped ones are enough), in the units and with the SO and bound
 * columns of o, each run of members nearest its centre first when pos
 * (their positions) is given and the centres are potential minima
 * (memberorder.h), else by ID; fk_halocat_hdf5's errors. */
int hdf5_image(const fk_snap *snap, const float *pos, const float *mass, const uint64_t *ids, const uint64_t *pids,
               const uint32_t *gid0, const uint32_t *gid1, fk_halo *const *halos, const uint64_t *ng, const options *o,
               void **image, size_t *size, fk_error *err);

#endif
