/* hdf5snap.h - reading HDF5 snapshots of Gadget-3/4, AREPO and SWIFT (one file or many) through libhdf5. */
#ifndef FK_HDF5SNAP_H
#define FK_HDF5SNAP_H

#include "error.h"
#include "gsnap.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Layout read (Gadget-3, Gadget-4, AREPO, SWIFT):
 *   PATH                              TYPE                 DESCRIPTION
 *   /Header  NumPart_ThisFile         int[NTYPES]          particles of each type in this file
 *   /Header  NumPart_Total            uint[NTYPES]         in the whole snapshot (low 32 bits, or all 64)
 *   /Header  NumPart_Total_HighWord   uint[NTYPES]         high 32 bits (optional; 0 when absent)
 *   /Header  MassTable                double[NTYPES]       mass of every particle of a type, 0: per particle
 *   /Header  NumFilesPerSnapshot      int                  files of the snapshot (optional, 1)
 *   /Header  BoxSize                  double or double[3]  side of the box (SWIFT: 3 equal sides)
 *   /Header  Time, Redshift           double               expansion factor, redshift
 *   /PartTypeN/Coordinates            float or double[n][3]
 *   /PartTypeN/Velocities             float or double[n][3]
 *   /PartTypeN/ParticleIDs            integer[n] (optional)
 *   /PartTypeN/Masses                 float or double[n]   (needed when MassTable[N] is 0)
 * NTYPES is 6 in Gadget-2/3 and AREPO, the compiled number of types in Gadget-4 (2 in its example
 * runs), 7 in SWIFT.
 *
 * Units and cosmology, each attribute taken from the first group that has it:
 *   UnitLength_in_cm, UnitMass_in_g, UnitVelocity_in_cm_per_s   /Header, /Parameters, /Units
 *   HubbleParam, Omega0, OmegaLambda                           /Header, /Parameters, /Cosmology
 *   SWIFT: /Units "Unit length in cgs (U_L)", "Unit mass in cgs (U_M)", "Unit time in cgs (U_t)"
 *          (velocity unit U_L/U_t); /Cosmology "h", "Omega_m", "Omega_lambda"
 * Gadget and AREPO units are per h (a length unit of 3.085678e21 cm means 1 kpc/h); SWIFT's are not.
 *
 * Periodicity: /Header Periodic or /Cosmology Periodic (SWIFT) when present; else Gadget-4's
 * /Config group, where the attribute PERIODIC is present exactly when the run was periodic; else
 * unknown (the reader treats it as periodic).
 *
 * Multi-file snapshots: a name ending in ".0.hdf5" (or ".0.h5") whose header says
 * NumFilesPerSnapshot N > 1 is read with NAME.1.hdf5 ... NAME.(N-1).hdf5.
 */

/* Whether this build reads HDF5 (built with libhdf5). */
int fk_hdf5_available(void);

/* What the reader found. */
typedef struct fk_hdf5_info {
    int swift;      /* the SWIFT layout (a /Units group with its names) */
    int double_pos; /* some coordinates were doubles */
} fk_hdf5_info;

/* Reads the HDF5 snapshot path (a file: HDF5 cannot be read from a pipe) and
 * every file it is split into. Fills s (free it with fk_gsnap_free, also
 * after an error) and info (may be NULL). Returns FK_OK, or FK_EFORMAT (not
 * HDF5, a missing group, dataset or attribute, a dataset of the wrong shape,
 * counts that disagree, non-finite values, far outside the box), FK_EIO
 * (cannot open), FK_EINVAL (no box for a periodic snapshot, a non-cubic box),
 * FK_ENOMEM, or FK_EUNSUP in a build without HDF5. */
int fk_hdf5_read(const char *path, const fk_gsnap_opts *o, fk_gsnap *s, fk_hdf5_info *info, fk_error *err);

/* As fk_hdf5_read, the snapshot's files held in memory as HDF5 file images
 * (for tests and fuzzing): file k, named as the snapshot named path names
 * it, is images[k] of sizes[k] bytes; a file k at or past nimages does not
 * exist. The images are copied, never written. */
int fk_hdf5_read_images(const char *path, const void *const *images, const size_t *sizes, int nimages,
                        const fk_gsnap_opts *o, fk_gsnap *s, fk_hdf5_info *info, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
