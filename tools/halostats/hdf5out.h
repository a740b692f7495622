/* hdf5out.h - halostats --format=hdf5: the catalogue written as a Gadget-4 style HDF5 file. */
#ifndef HALOSTATS_HDF5OUT_H
#define HALOSTATS_HDF5OUT_H

#include <stdint.h>

#include "halostats.h"
#include "prog.h"
#include "snap.h"

/* Returns 1 when this build writes HDF5; otherwise exits with status 1
 * and a one-line message (before any input is read). */
int hdf5_check(void);

/* The catalogue of levels 0 and 1 (gid1 NULL: level 0 alone) as an HDF5
 * file image (*image malloc'd, *size bytes), from the snap->n particles of
 * mass and ids (the grouped ones are enough); fk_halocat_hdf5's errors. */
int hdf5_image(const fk_snap *snap, const float *mass, const uint64_t *ids, const uint32_t *gid0, const uint32_t *gid1,
               fk_halo *const *halos, const uint64_t *ng, int have_mbp, const fk_halo_units *units, void **image,
               size_t *size, fk_error *err);

/* Writes the catalogue of levels 0 and 1 (gid1 NULL: level 0 alone) to
 * the output of std (binary: refused on a terminal without -f) and returns
 * it, to be committed; exits on error. */
fk_output *hdf5_write(const prog_std *std, const fk_snap *snap, const float *mass, const uint64_t *ids,
                      const uint32_t *gid0, const uint32_t *gid1, fk_halo *const *halos, const uint64_t *ng, int have_mbp,
                      const fk_halo_units *units);

#endif
