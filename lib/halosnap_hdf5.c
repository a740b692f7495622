/* halosnap_hdf5.c - writes the stream's particles as a Gadget-4 HDF5 snapshot in the catalogue's group order. */
#include "halosnap_hdf5.h"

#include <inttypes.h>
#include <stdlib.h>

#ifndef FK_HAVE_HDF5

int fk_halosnap_hdf5(const fk_halocat *cat, const float *pos, const float *vel, const char *path, fk_error *err)
{
    (void)cat, (void)pos, (void)vel, (void)path;
    return fk_fail(err, FK_EUNSUP, "this build has no HDF5 (install libhdf5-dev, then make config and rebuild)");
}

#else

#include "h5write.h"

#define NTYPES 6

/* One particle type's datasets: the rows of that type in order. */
static void write_type(fk_h5w *w, hid_t file, const fk_halocat *cat, const float *pos, const float *vel, int t,
                       const uint64_t *rows, uint64_t n, void *scratch)
{
    char name[16];
    snprintf(name, sizeof name, "PartType%d", t);
    hid_t g = fk_h5_group(w, file, name);
    if (g < 0) return;
    double lu = cat->units ? cat->units->length : 1, mu = cat->units ? cat->units->mass : 1;
    double vu = cat->units ? cat->units->velocity : 1, origin = cat->snap->origin;
    double *d = scratch;
    float *f = scratch;
    uint64_t *u = scratch;
    for (uint64_t k = 0; k < n; k++)
        for (int a = 0; a < 3; a++) d[3 * k + a] = ((double)pos[3 * rows[k] + a] - origin) * lu;
    fk_h5_data(w, g, "Coordinates", H5T_NATIVE_DOUBLE, n, 3, d, FK_DIM_LENGTH);
    for (uint64_t k = 0; k < n; k++)
        for (int a = 0; a < 3; a++) f[3 * k + a] = (float)(vel[3 * rows[k] + a] * vu);
    fk_h5_data(w, g, "Velocities", H5T_NATIVE_FLOAT, n, 3, f, FK_DIM_VELOCITY);
    for (uint64_t k = 0; k < n; k++) f[k] = (float)(cat->mass[rows[k]] * mu);
    fk_h5_data(w, g, "Masses", H5T_NATIVE_FLOAT, n, 1, f, FK_DIM_MASS);
    for (uint64_t k = 0; k < n; k++) u[k] = cat->pids ? cat->pids[rows[k]] : cat->ids[rows[k]];
    fk_h5_data(w, g, "ParticleIDs", H5T_NATIVE_UINT64, n, 1, u, FK_DIM_1);
    H5Gclose(g);
}

int fk_halosnap_hdf5(const fk_halocat *cat, const float *pos, const float *vel, const char *path, fk_error *err)
{
    uint64_t *order, nids;
    int st = fk_halocat_order(cat, &order, &nids, err);
    if (st) return st;
    const uint64_t n = cat->n;
    uint64_t *rows = malloc((n ? n : 1) * sizeof *rows);
    void *scratch = malloc((n ? n : 1) * 3 * sizeof(double));
    if (!rows || !scratch) {
        free(order), free(rows), free(scratch);
        return fk_fail(err, FK_ENOMEM, "out of memory for a snapshot of %" PRIu64 " particles", n);
    }
    uint32_t npart[NTYPES] = {0};
    uint64_t ntotal[NTYPES] = {0};
    double masstab[NTYPES] = {0};
    for (uint64_t k = 0; k < n; k++) ntotal[fk_gadget_type(cat->snap, cat->ids[order[k]])]++;
    for (int t = 0; t < NTYPES; t++) npart[t] = (uint32_t)ntotal[t];
    fk_h5w w = {FK_OK, err, cat->meta};
    hid_t file = fk_h5_create(&w, path);
    hid_t h = fk_h5_group(&w, file, "Header");
    if (h >= 0) {
        fk_h5_attr_array(&w, h, "NumPart_ThisFile", H5T_NATIVE_UINT32, NTYPES, npart);
        fk_h5_attr_array(&w, h, "NumPart_Total", H5T_NATIVE_UINT64, NTYPES, ntotal);
        fk_h5_attr_array(&w, h, "MassTable", H5T_NATIVE_DOUBLE, NTYPES, masstab);
        fk_h5_attr_i32(&w, h, "NumFilesPerSnapshot", 1);
        fk_h5_attr_f64(&w, h, "Time", cat->meta->time);
        fk_h5_attr_f64(&w, h, "Redshift", cat->meta->redshift);
        fk_h5_attr_f64(&w, h, "BoxSize", cat->snap->box * (cat->units ? cat->units->length : 1));
        H5Gclose(h);
    }
    fk_h5_parameters(&w, file, cat->snap->box * (cat->units ? cat->units->length : 1));
    for (int t = 0; t < NTYPES && !w.st; t++) {
        if (!ntotal[t]) continue;
        uint64_t m = 0;
        for (uint64_t k = 0; k < n; k++)
            if (fk_gadget_type(cat->snap, cat->ids[order[k]]) == t) rows[m++] = order[k];
        write_type(&w, file, cat, pos, vel, t, rows, m, scratch);
    }
    if (file >= 0 && H5Fclose(file) < 0) fk_h5_check(&w, -1, path);
    free(order), free(rows), free(scratch);
    return w.st;
}

#endif
