/* halosnap_hdf5.h - the stream's particles as a Gadget-4 HDF5 snapshot in the catalogue's group order, the snapshot Gadget-4 writes beside its catalogue. */
#ifndef FK_HALOSNAP_HDF5_H
#define FK_HALOSNAP_HDF5_H

#include "error.h"
#include "halocat_hdf5.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Gadget-4 writes, with its group catalogue, a snapshot whose particles of
 * each type come group by group in the catalogue's order, so that a
 * group's members are GroupLenType[t] particles from GroupOffsetType[t]
 * (and a subhalo's likewise): pynbody finds members only that way. This is
 * that snapshot for the catalogue cat (fk_halocat_order's order, type by
 * type), of the stream's particles:
 *
 *   PATH                          TYPE        CONTENT
 *   Header (attributes)           NumPart_ThisFile (uint32 x 6), NumPart_Total (uint64 x 6),
 *                                 MassTable (float64 x 6, zeros: every type has Masses),
 *                                 NumFilesPerSnapshot (int32, 1), Time, Redshift, BoxSize
 *   Parameters (attributes)       the units and cosmology, as the catalogue's (h5write.h)
 *   PartTypeT/Coordinates         float64 x 3 positions from the box's lower corner
 *   PartTypeT/Velocities          float32 x 3 velocities
 *   PartTypeT/Masses              float32     masses
 *   PartTypeT/ParticleIDs         uint64      the snapshot's own IDs (PID), else the original indices
 * for T = 0 (gas), 1 (dark), 4 (star) when the stream has particles of that
 * type; values in the catalogue's units (cat->units, cat->meta) with
 * Gadget-4's unit attributes. The stream's particles only: a stream of the
 * dark matter gives a snapshot of the dark matter.
 */

/* Writes the snapshot of cat, whose particles' positions and velocities
 * (stream order) are pos and vel, to the file path (created or truncated;
 * the caller renames it into place). FK_EFORMAT as fk_halocat_order,
 * FK_ENOMEM, FK_EIO when libhdf5 fails, FK_EUNSUP without HDF5. */
int fk_halosnap_hdf5(const fk_halocat *cat, const float *pos, const float *vel, const char *path, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
