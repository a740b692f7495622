/* h5write.c - writing Gadget-4 style HDF5 files: checked calls, untimed objects, attributes, Gadget-4's unit attributes and Parameters. */
#include "h5write.h"

#ifdef FK_HAVE_HDF5

#include <stdlib.h>
#include <string.h>

#include "snapunits.h"

void fk_h5_check(fk_h5w *w, herr_t r, const char *what)
{
    if (r < 0 && w->st == FK_OK) w->st = fk_fail(w->err, FK_EIO, "HDF5: libhdf5 failed to write %s", what);
}

/* A property list whose objects carry no modification times. */
static hid_t untimed(hid_t cls)
{
    hid_t p = H5Pcreate(cls);
    if (p >= 0) H5Pset_obj_track_times(p, 0);
    return p;
}

hid_t fk_h5_create(fk_h5w *w, const char *path)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file = -1;
    if (!path) fk_h5_check(w, fapl < 0 ? -1 : H5Pset_fapl_core(fapl, 1 << 20, 0), "the file access list");
    if (!w->st) file = H5Fcreate(path ? path : "fofkit.hdf5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    fk_h5_check(w, file < 0 ? -1 : 0, path ? path : "the file");
    if (fapl >= 0) H5Pclose(fapl);
    return w->st ? -1 : file;
}

void fk_h5_image(fk_h5w *w, hid_t file, void **image, size_t *size)
{
    if (w->st) return;
    fk_h5_check(w, H5Fflush(file, H5F_SCOPE_GLOBAL), "the file");
    if (w->st) return;
    ssize_t len = H5Fget_file_image(file, NULL, 0);
    void *buf = len > 0 ? malloc((size_t)len) : NULL;
    if (len > 0 && !buf) {
        w->st = fk_fail(w->err, FK_ENOMEM, "out of memory for an HDF5 file image of %zd bytes", len);
    } else if (len <= 0 || H5Fget_file_image(file, buf, (size_t)len) != len) {
        free(buf);
        fk_h5_check(w, -1, "the file image");
    } else {
        *image = buf;
        *size = (size_t)len;
    }
}

hid_t fk_h5_group(fk_h5w *w, hid_t loc, const char *name)
{
    if (w->st) return -1;
    hid_t gcpl = untimed(H5P_GROUP_CREATE);
    hid_t g = gcpl < 0 ? -1 : H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    if (gcpl >= 0) H5Pclose(gcpl);
    fk_h5_check(w, g < 0 ? -1 : 0, name);
    return g;
}

void fk_h5_attr(fk_h5w *w, hid_t loc, const char *name, hid_t type, const void *value)
{
    if (w->st) return;
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = sp < 0 ? -1 : H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    fk_h5_check(w, a < 0 ? -1 : H5Awrite(a, type, value), name);
    if (a >= 0) H5Aclose(a);
    if (sp >= 0) H5Sclose(sp);
}

void fk_h5_attr_array(fk_h5w *w, hid_t loc, const char *name, hid_t type, uint64_t n, const void *values)
{
    if (w->st) return;
    hsize_t dims[1] = {n};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t a = sp < 0 ? -1 : H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    fk_h5_check(w, a < 0 ? -1 : H5Awrite(a, type, values), name);
    if (a >= 0) H5Aclose(a);
    if (sp >= 0) H5Sclose(sp);
}

void fk_h5_attr_i64(fk_h5w *w, hid_t loc, const char *name, int64_t v)
{
    fk_h5_attr(w, loc, name, H5T_NATIVE_INT64, &v);
}

void fk_h5_attr_i32(fk_h5w *w, hid_t loc, const char *name, int32_t v)
{
    fk_h5_attr(w, loc, name, H5T_NATIVE_INT32, &v);
}

void fk_h5_attr_f64(fk_h5w *w, hid_t loc, const char *name, double v)
{
    fk_h5_attr(w, loc, name, H5T_NATIVE_DOUBLE, &v);
}

void fk_h5_attr_str(fk_h5w *w, hid_t loc, const char *name, const char *v)
{
    if (w->st) return;
    hid_t t = H5Tcopy(H5T_C_S1);
    fk_h5_check(w, t < 0 ? -1 : H5Tset_size(t, strlen(v) + 1), name);
    fk_h5_attr(w, loc, name, t, v);
    if (t >= 0) H5Tclose(t);
}

/* Gadget-4's unit attributes of a dataset of dimension dim (a_scaling as
 * the dimension says unless a_given, then a_set). */
static void unit_attrs(fk_h5w *w, hid_t d, fk_dim dim, int a_given, double a_set)
{
    const fk_gadget_meta *m = w->meta;
    double to_cgs = 0, l = 0, ms = 0, v = 0, h = 0, a = 0;
    switch (dim) {
    case FK_DIM_LENGTH:
        to_cgs = m->unit_length_cm, l = 1, h = m->units_per_h ? -1 : 0, a = m->comoving ? 1 : 0;
        break;
    case FK_DIM_MASS: to_cgs = m->unit_mass_g, ms = 1, h = m->units_per_h ? -1 : 0; break;
    case FK_DIM_VELOCITY: to_cgs = m->unit_velocity_cm_s, v = 1, a = m->comoving ? 0.5 : 0; break;
    default: return;
    }
    if (a_given) a = a_set;
    fk_h5_attr_f64(w, d, "to_cgs", to_cgs);
    fk_h5_attr_f64(w, d, "length_scaling", l);
    fk_h5_attr_f64(w, d, "mass_scaling", ms);
    fk_h5_attr_f64(w, d, "velocity_scaling", v);
    fk_h5_attr_f64(w, d, "h_scaling", h);
    fk_h5_attr_f64(w, d, "a_scaling", a);
}

/* fk_h5_data and fk_h5_data_a. */
static void data_attrs(fk_h5w *w, hid_t loc, const char *name, hid_t type, uint64_t rows, int cols, const void *data,
                       fk_dim dim, int a_given, double a_set)
{
    if (w->st) return;
    hsize_t dims[2] = {rows, (hsize_t)cols};
    hid_t sp = H5Screate_simple(cols > 1 ? 2 : 1, dims, NULL);
    hid_t dcpl = untimed(H5P_DATASET_CREATE);
    hid_t d = sp < 0 || dcpl < 0 ? -1 : H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dcpl >= 0) H5Pclose(dcpl);
    fk_h5_check(w, d < 0 ? -1 : H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), name);
    if (d >= 0 && w->meta) unit_attrs(w, d, dim, a_given, a_set);
    if (d >= 0) H5Dclose(d);
    if (sp >= 0) H5Sclose(sp);
}

void fk_h5_data(fk_h5w *w, hid_t loc, const char *name, hid_t type, uint64_t rows, int cols, const void *data, fk_dim dim)
{
    data_attrs(w, loc, name, type, rows, cols, data, dim, 0, 0);
}

void fk_h5_data_a(fk_h5w *w, hid_t loc, const char *name, hid_t type, uint64_t rows, int cols, const void *data,
                  fk_dim dim, double a_scaling)
{
    data_attrs(w, loc, name, type, rows, cols, data, dim, 1, a_scaling);
}

void fk_h5_header_cosmology(fk_h5w *w, hid_t header)
{
    fk_h5_attr_f64(w, header, "HubbleParam", w->meta->hubble);
    fk_h5_attr_f64(w, header, "Omega0", w->meta->omega0);
    fk_h5_attr_f64(w, header, "OmegaLambda", w->meta->omega_lambda);
}

void fk_h5_parameters(fk_h5w *w, hid_t file, double box)
{
    const fk_gadget_meta *m = w->meta;
    hid_t g = fk_h5_group(w, file, "Parameters");
    if (g < 0) return;
    fk_h5_attr_f64(w, g, "UnitLength_in_cm", m->unit_length_cm);
    fk_h5_attr_f64(w, g, "UnitMass_in_g", m->unit_mass_g);
    fk_h5_attr_f64(w, g, "UnitVelocity_in_cm_per_s", m->unit_velocity_cm_s);
    fk_h5_header_cosmology(w, g);
    /* H0 = 100 h km/s/Mpc in the internal units (Gadget's "Hubble": 0.1 in kpc/h and km/s) */
    double h0 = 1e7 / (1000 * FK_KPC_CM) * (m->units_per_h ? 1 : m->hubble);
    fk_h5_attr_f64(w, g, "Hubble", h0 * m->unit_length_cm / m->unit_velocity_cm_s);
    fk_h5_attr_i32(w, g, "ComovingIntegrationOn", m->comoving ? 1 : 0);
    fk_h5_attr_f64(w, g, "BoxSize", box);
    H5Gclose(g);
}

#else

typedef int fk_h5write_unused; /* ISO C wants a declaration in every file */

#endif
