/* h5write.h - writing Gadget-4 style HDF5 files (the catalogue, the group-ordered snapshot): checked calls, attributes, units. */
#ifndef FK_H5WRITE_H
#define FK_H5WRITE_H

/* Internal to lib/halocat_hdf5.c and lib/halosnap_hdf5.c, built with
 * FK_HAVE_HDF5 only. */
#ifdef FK_HAVE_HDF5

#include <stdint.h>

#include <hdf5.h>

#include "error.h"
#include "halocat_hdf5.h"
#include "halostats.h"

/* A file being written: every call checked, the first failure kept in st
 * (FK_EIO naming what libhdf5 failed to write); later calls do nothing. */
typedef struct fk_h5w {
    int st;
    fk_error *err;
    const fk_gadget_meta *meta; /* the units the datasets' attributes state */
} fk_h5w;

/* Records a failure (r < 0) of writing what. */
void fk_h5_check(fk_h5w *w, herr_t r, const char *what);

/* A new file: in memory (path NULL: the core driver without a backing
 * store, to be taken with fk_h5_image) or at path (truncated). Objects
 * carry no modification times, so the same content gives the same bytes.
 * libhdf5's error printing is turned off: failures come back as statuses.
 * Returns the file, or -1 with w->st set. */
hid_t fk_h5_create(fk_h5w *w, const char *path);

/* The file image of an in-memory file (malloc'd, caller frees); FK_ENOMEM
 * or FK_EIO into w. */
void fk_h5_image(fk_h5w *w, hid_t file, void **image, size_t *size);

/* A new group under loc (close it with H5Gclose), or -1 with w->st set. */
hid_t fk_h5_group(fk_h5w *w, hid_t loc, const char *name);

/* A dataset of rows x cols (cols 1: one dimension) of type under loc. A
 * dimension other than FK_DIM_1 adds Gadget-4's unit attributes from
 * w->meta: to_cgs, length_scaling, mass_scaling, velocity_scaling,
 * h_scaling and a_scaling (physical value in cgs = value x to_cgs x
 * h^h_scaling x a^a_scaling). */
void fk_h5_data(fk_h5w *w, hid_t loc, const char *name, hid_t type, uint64_t rows, int cols, const void *data, fk_dim dim);

/* fk_h5_data with a_scaling given (the dimension's default: lengths 1 and
 * velocities 0.5 in a cosmological run, a snapshot's Coordinates and
 * Velocities): a catalogue's physical values (peculiar velocities, vmax,
 * physical radii) say 0. */
void fk_h5_data_a(fk_h5w *w, hid_t loc, const char *name, hid_t type, uint64_t rows, int cols, const void *data,
                  fk_dim dim, double a_scaling);

/* Attributes of loc: a scalar of type, or a one-dimensional array of n. */
void fk_h5_attr(fk_h5w *w, hid_t loc, const char *name, hid_t type, const void *value);
void fk_h5_attr_array(fk_h5w *w, hid_t loc, const char *name, hid_t type, uint64_t n, const void *values);
void fk_h5_attr_i64(fk_h5w *w, hid_t loc, const char *name, int64_t v);
void fk_h5_attr_i32(fk_h5w *w, hid_t loc, const char *name, int32_t v);
void fk_h5_attr_f64(fk_h5w *w, hid_t loc, const char *name, double v);
void fk_h5_attr_str(fk_h5w *w, hid_t loc, const char *name, const char *v); /* NUL-terminated, fixed length */

/* The Parameters group where Gadget-4 keeps its parameter file's values:
 * UnitLength_in_cm, UnitMass_in_g, UnitVelocity_in_cm_per_s, HubbleParam,
 * Omega0, OmegaLambda, Hubble (H0 in the internal units),
 * ComovingIntegrationOn, BoxSize, from w->meta. */
void fk_h5_parameters(fk_h5w *w, hid_t file, double box);

/* The cosmology attributes of a Header that yt reads there: HubbleParam,
 * Omega0, OmegaLambda. */
void fk_h5_header_cosmology(fk_h5w *w, hid_t header);

#endif

#endif
