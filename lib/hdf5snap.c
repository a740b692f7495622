/* hdf5snap.c - the HDF5 snapshot reader (Gadget-3/4, AREPO, SWIFT layouts, many files); a stub without libhdf5. */
#include "hdf5snap.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "fileio.h"
#include "sniff.h"

#ifndef FK_HAVE_HDF5

int fk_hdf5_available(void)
{
    return 0;
}

int fk_hdf5_read(const char *path, const fk_gsnap_opts *o, fk_gsnap *s, fk_hdf5_info *info, fk_error *err)
{
    (void)o;
    memset(s, 0, sizeof *s);
    if (info) memset(info, 0, sizeof *info);
    return fk_fail(err, FK_EUNSUP, "%s: this build of fofkit has no HDF5 support (build it with libhdf5-dev installed)",
                   path);
}

int fk_hdf5_read_images(const char *path, const void *const *images, const size_t *sizes, int nimages,
                        const fk_gsnap_opts *o, fk_gsnap *s, fk_hdf5_info *info, fk_error *err)
{
    (void)images, (void)sizes, (void)nimages;
    return fk_hdf5_read(path, o, s, info, err);
}

#else

#include <hdf5.h>

int fk_hdf5_available(void)
{
    return 1;
}

/* Whether attribute attr exists on group grp (both may be absent). */
static int has_attr(hid_t f, const char *grp, const char *attr)
{
    return H5Lexists(f, grp, H5P_DEFAULT) > 0 && H5Aexists_by_name(f, grp, attr, H5P_DEFAULT) > 0;
}

/* Reads attribute grp/attr, converted to mem (H5T_NATIVE_DOUBLE or
 * H5T_NATIVE_UINT64), into buf of at most max values; *count gets the
 * number of values (may be NULL: then exactly one is required). */
static int get_attr(hid_t f, const char *name, const char *grp, const char *attr, hid_t mem, void *buf, int max, int *count,
                    fk_error *err)
{
    if (!has_attr(f, grp, attr)) return fk_fail(err, FK_EFORMAT, "%s: missing attribute %s/%s", name, grp, attr);
    hid_t a = H5Aopen_by_name(f, grp, attr, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sp = a < 0 ? -1 : H5Aget_space(a);
    hssize_t np = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
    int st = FK_OK;
    if (np < 1 || np > max || (!count && np != 1))
        st = fk_fail(err, FK_EFORMAT, "%s: attribute %s/%s holds %lld values (%s expected)", name, grp, attr, (long long)np,
                     count ? "1 to 7" : "1");
    else if (H5Aread(a, mem, buf) < 0)
        st = fk_fail(err, FK_EFORMAT, "%s: attribute %s/%s cannot be read as a number", name, grp, attr);
    if (count) *count = (int)np;
    if (sp >= 0) H5Sclose(sp);
    if (a >= 0) H5Aclose(a);
    return st;
}

/* An optional scalar attribute looked for in each group of grps (NULL
 * ended); returns 1 when found (into *v), 0 when absent, or an error. */
static int find_dbl(hid_t f, const char *name, const char *const *grps, const char *attr, double *v, fk_error *err)
{
    for (int k = 0; grps[k]; k++)
        if (has_attr(f, grps[k], attr)) {
            int st = get_attr(f, name, grps[k], attr, H5T_NATIVE_DOUBLE, v, 1, NULL, err);
            return st ? st : 1;
        }
    return 0;
}

/* The header of file f; file 0 gives the snapshot's, later files are checked
 * against it (h0). npart gets this file's counts. */
static int read_header(hid_t f, const char *name, fk_gsnap_header *h, uint64_t *npart, fk_hdf5_info *info, fk_error *err)
{
    memset(h, 0, sizeof *h);
    uint64_t tot[FK_GSNAP_NTYPES] = {0}, hw[FK_GSNAP_NTYPES] = {0};
    int nt, n2, n3 = 0, st;
    if (H5Lexists(f, "Header", H5P_DEFAULT) <= 0) return fk_fail(err, FK_EFORMAT, "%s: missing group Header", name);
    if ((st = get_attr(f, name, "Header", "NumPart_ThisFile", H5T_NATIVE_UINT64, npart, FK_GSNAP_NTYPES, &nt, err)) ||
        (st = get_attr(f, name, "Header", "NumPart_Total", H5T_NATIVE_UINT64, tot, FK_GSNAP_NTYPES, &n2, err)))
        return st;
    if (has_attr(f, "Header", "NumPart_Total_HighWord") &&
        (st = get_attr(f, name, "Header", "NumPart_Total_HighWord", H5T_NATIVE_UINT64, hw, FK_GSNAP_NTYPES, &n3, err)))
        return st;
    if (n2 != nt || (n3 && n3 != nt))
        return fk_fail(err, FK_EFORMAT, "%s: inconsistent counts: NumPart_ThisFile has %d types, NumPart_Total %d%s", name,
                       nt, n2, n3 && n3 != nt ? " (and NumPart_Total_HighWord differs)" : "");
    h->ntypes = nt;
    for (int t = 0; t < nt; t++) {
        /* the high word is 0 when NumPart_Total is already 64-bit; a 32-bit total never exceeds 2^32 */
        if (tot[t] >> 32 && hw[t])
            return fk_fail(err, FK_EFORMAT, "%s: NumPart_Total of type %d has bits above 32 and a high word too", name, t);
        h->ntotal[t] = tot[t] + (hw[t] << 32);
    }
    int nm = 0;
    if (has_attr(f, "Header", "MassTable") &&
        (st = get_attr(f, name, "Header", "MassTable", H5T_NATIVE_DOUBLE, h->masstab, FK_GSNAP_NTYPES, &nm, err)))
        return st;
    if (nm && nm != nt)
        return fk_fail(err, FK_EFORMAT, "%s: MassTable has %d types, NumPart_ThisFile %d", name, nm, nt);
    double nf = 1, box3[3] = {0, 0, 0};
    static const char *const hdr[] = {"Header", NULL};
    if ((st = find_dbl(f, name, hdr, "NumFilesPerSnapshot", &nf, err)) < 0) return st;
    if (!(nf >= 1 && nf <= 1e6 && nf == (int)nf))
        return fk_fail(err, FK_EFORMAT, "%s: NumFilesPerSnapshot %g is not a file count", name, nf);
    h->nfiles = (int)nf;
    if ((st = find_dbl(f, name, hdr, "Time", &h->time, err)) < 0 ||
        (st = find_dbl(f, name, hdr, "Redshift", &h->redshift, err)) < 0)
        return st;
    if (has_attr(f, "Header", "BoxSize")) {
        int nb;
        if ((st = get_attr(f, name, "Header", "BoxSize", H5T_NATIVE_DOUBLE, box3, 3, &nb, err))) return st;
        h->box = box3[0];
        for (int d = 1; d < nb; d++)
            if (box3[d] != box3[0]) h->box = -1; /* not cubic: refused unless --box is given */
    }
    /* periodicity */
    static const char *const per[] = {"Header", "Cosmology", NULL};
    double p;
    h->periodic = -1;
    if ((st = find_dbl(f, name, per, "Periodic", &p, err)) < 0) return st;
    if (st == 1)
        h->periodic = p != 0;
    else if (H5Lexists(f, "Config", H5P_DEFAULT) > 0)
        h->periodic = H5Aexists_by_name(f, "Config", "PERIODIC", H5P_DEFAULT) > 0;
    /* units and cosmology */
    static const char *const where[] = {"Header", "Parameters", "Units", NULL};
    static const char *const cosmo[] = {"Header", "Parameters", "Cosmology", NULL};
    int a, b, c;
    if ((a = find_dbl(f, name, where, "UnitLength_in_cm", &h->unit_length_cm, err)) < 0 ||
        (b = find_dbl(f, name, where, "UnitMass_in_g", &h->unit_mass_g, err)) < 0 ||
        (c = find_dbl(f, name, where, "UnitVelocity_in_cm_per_s", &h->unit_velocity_cm_s, err)) < 0)
        return FK_EFORMAT;
    if (a && b && c) {
        h->have_units = 1;
        h->units_per_h = 1;
    } else {
        static const char *const sw[] = {"Units", NULL};
        double ut = 0;
        if ((a = find_dbl(f, name, sw, "Unit length in cgs (U_L)", &h->unit_length_cm, err)) < 0 ||
            (b = find_dbl(f, name, sw, "Unit mass in cgs (U_M)", &h->unit_mass_g, err)) < 0 ||
            (c = find_dbl(f, name, sw, "Unit time in cgs (U_t)", &ut, err)) < 0)
            return FK_EFORMAT;
        if (a && b && c && ut > 0) {
            h->have_units = 1;
            h->units_per_h = 0;
            h->unit_velocity_cm_s = h->unit_length_cm / ut;
            if (info) info->swift = 1;
        }
    }
    if (h->have_units && !(h->unit_length_cm > 0 && h->unit_mass_g > 0 && h->unit_velocity_cm_s > 0)) h->have_units = 0;
    if ((a = find_dbl(f, name, cosmo, "HubbleParam", &h->hubble, err)) < 0 ||
        (b = find_dbl(f, name, cosmo, "Omega0", &h->omega0, err)) < 0 ||
        (c = find_dbl(f, name, cosmo, "OmegaLambda", &h->omega_lambda, err)) < 0)
        return FK_EFORMAT;
    if (!(a && b && c)) {
        static const char *const sw[] = {"Cosmology", NULL};
        if ((a = find_dbl(f, name, sw, "h", &h->hubble, err)) < 0 ||
            (b = find_dbl(f, name, sw, "Omega_m", &h->omega0, err)) < 0 ||
            (c = find_dbl(f, name, sw, "Omega_lambda", &h->omega_lambda, err)) < 0)
            return FK_EFORMAT;
    }
    h->have_cosmology = a && b && c && h->hubble > 0;
    /* Omega_b (Gadget's OmegaBaryon, SWIFT's Omega_b) */
    static const char *const ob[] = {"Header", "Parameters", "Cosmology", NULL};
    if ((a = find_dbl(f, name, ob, "OmegaBaryon", &h->omega_baryon, err)) < 0) return FK_EFORMAT;
    if (!a && (a = find_dbl(f, name, ob, "Omega_b", &h->omega_baryon, err)) < 0) return FK_EFORMAT;
    h->have_omega_baryon = a && h->omega_baryon >= 0 && isfinite(h->omega_baryon);
    /* a cosmological run: Gadget's ComovingIntegrationOn, SWIFT's "Cosmological run" */
    double com = 0;
    if ((a = find_dbl(f, name, ob, "ComovingIntegrationOn", &com, err)) < 0) return FK_EFORMAT;
    if (!a && (a = find_dbl(f, name, ob, "Cosmological run", &com, err)) < 0) return FK_EFORMAT;
    h->comoving = a && com != 0 && h->time > 0 && h->time <= 1;
    /* the velocities' a-scaling: the first Velocities dataset's attribute
     * (Gadget-4 "a_scaling", SWIFT "a-scale exponent"), else Gadget's 0.5
     * (SWIFT's 0) */
    h->vel_a_scaling = info && info->swift ? 0 : 0.5;
    for (int t = 0; t < nt && h->comoving; t++) {
        char grp[32], ds[64];
        snprintf(grp, sizeof grp, "PartType%d", t);
        snprintf(ds, sizeof ds, "%s/Velocities", grp);
        if (H5Lexists(f, grp, H5P_DEFAULT) <= 0 || H5Lexists(f, ds, H5P_DEFAULT) <= 0) continue;
        double e;
        if ((a = find_dbl(f, name, (const char *const[]){ds, NULL}, "a_scaling", &e, err)) < 0) return FK_EFORMAT;
        if (!a && (a = find_dbl(f, name, (const char *const[]){ds, NULL}, "a-scale exponent", &e, err)) < 0)
            return FK_EFORMAT;
        if (a && isfinite(e) && fabs(e) <= 4) h->vel_a_scaling = e;
        break;
    }
    return FK_OK;
}

/* Bytes a thread reads at a time on the direct path. */
#define DIRECT_PIECE ((uint64_t)8 << 20)

/* Rows [row0, row0 + nrows) of dataset d (stored as ty; ncols values of
 * type mem each) read with pread on every core straight into dst, when HDF5
 * would only copy them: d is contiguous (so unfiltered), ty is mem (H5Tequal:
 * no conversion), in a file of the POSIX driver whose descriptor HDF5 hands
 * out. 1: read; 0: not such a dataset (H5Dread reads it); -1: a read error
 * or a short read (H5Dread then says what is wrong). Gadget-4 writes its
 * particle arrays so: one thread's H5Dread took 3.8 s for the 3.8 GB of a
 * 134M snapshot on a 16-core host. */
static int read_direct(hid_t f, hid_t d, hid_t ty, hid_t mem, uint64_t row0, uint64_t nrows, int ncols, void *dst)
{
    hid_t dcpl = H5Dget_create_plist(d), fapl = H5Fget_access_plist(f);
    int ok = dcpl >= 0 && fapl >= 0 && H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_driver(fapl) == H5FD_SEC2 &&
             H5Tequal(ty, mem) > 0;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (fapl >= 0) H5Pclose(fapl);
    const haddr_t at = ok ? H5Dget_offset(d) : HADDR_UNDEF;
    void *h = NULL;
    if (at == HADDR_UNDEF || H5Fget_vfd_handle(f, H5P_DEFAULT, &h) < 0 || !h) return 0;
    const int fd = *(const int *)h;
    const uint64_t row = H5Tget_size(mem) * (uint64_t)ncols, from = (uint64_t)at + row0 * row, bytes = nrows * row,
                   pieces = (bytes + DIRECT_PIECE - 1) / DIRECT_PIECE;
    int bad = 0;
    #pragma omp parallel for schedule(dynamic, 1) reduction(| : bad)
    for (uint64_t j = 0; j < pieces; j++) {
        const uint64_t o = j * DIRECT_PIECE, len = bytes - o < DIRECT_PIECE ? bytes - o : DIRECT_PIECE;
        bad |= fk_pread(fd, (char *)dst + o, len, from + o) != (int64_t)len;
    }
    return bad ? -1 : 1;
}

/* Reads rows [row0, row0 + nrows) of the open dataset d (file space sp, of
 * 1 or 2 dimensions: ncols > 1; stored as ty) of file f into dst as mem
 * (read_direct where it can); negative on failure. */
static herr_t read_rows(hid_t f, hid_t d, hid_t sp, hid_t ty, hid_t mem, uint64_t row0, uint64_t nrows, int ncols,
                        void *dst)
{
    if (read_direct(f, d, ty, mem, row0, nrows, ncols, dst) == 1) return 0;
    const int nd = ncols > 1 ? 2 : 1;
    hsize_t off[2] = {row0, 0}, cnt[2] = {nrows, (hsize_t)ncols};
    if (H5Sselect_hyperslab(sp, H5S_SELECT_SET, off, NULL, cnt, NULL) < 0) return -1;
    hid_t ms = H5Screate_simple(nd, cnt, NULL);
    if (ms < 0) return -1;
    herr_t r = H5Dread(d, mem, ms, sp, H5P_DEFAULT, dst);
    H5Sclose(ms);
    return r;
}

/* Reads rows [row0, row0 + nrows) of dataset PartType<t>/<ds>, which must
 * have n rows and ncols columns, into dst, converted to mem (a hyperslab:
 * only those rows are read). Absent: FK_EMISSING when optional, else an
 * error. */
static int get_dataset(hid_t f, const char *name, int t, const char *ds, uint64_t n, uint64_t row0, uint64_t nrows,
                       int ncols, hid_t mem, void *dst, int optional, int *wide, fk_error *err)
{
    char grp[32], path[96];
    snprintf(grp, sizeof grp, "PartType%d", t);
    snprintf(path, sizeof path, "%s/%s", grp, ds);
    if (H5Lexists(f, grp, H5P_DEFAULT) <= 0 || H5Lexists(f, path, H5P_DEFAULT) <= 0) {
        if (optional) return FK_EMISSING;
        return fk_fail(err, FK_EFORMAT, "%s: missing dataset %s (%" PRIu64 " particles of type %d in this file)", name, path,
                       n, t);
    }
    int st = FK_OK;
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    hid_t sp = d < 0 ? -1 : H5Dget_space(d);
    hid_t ty = d < 0 ? -1 : H5Dget_type(d);
    hsize_t dims[2] = {0, 0};
    int nd = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
    if (nd >= 1 && nd <= 2) H5Sget_simple_extent_dims(sp, dims, NULL);
    H5T_class_t cl = ty < 0 ? H5T_NO_CLASS : H5Tget_class(ty);
    H5D_space_status_t space = H5D_SPACE_STATUS_ERROR;
    if (d < 0 || sp < 0 || ty < 0)
        st = fk_fail(err, FK_EFORMAT, "%s: dataset %s cannot be opened", name, path);
    else if (cl != H5T_FLOAT && cl != H5T_INTEGER)
        st = fk_fail(err, FK_EFORMAT, "%s: dataset %s is not numeric", name, path);
    else if (nd != (ncols > 1 ? 2 : 1) || dims[0] != n || (ncols > 1 && dims[1] != (hsize_t)ncols))
        st = fk_fail(err, FK_EFORMAT,
                     "%s: dataset %s has shape %llu x %llu, but NumPart_ThisFile claims %" PRIu64 " x %d",
                     name, path, (unsigned long long)dims[0], nd == 2 ? (unsigned long long)dims[1] : 1ULL, n, ncols);
    else if (n && (H5Dget_space_status(d, &space) < 0 || space != H5D_SPACE_STATUS_ALLOCATED))
        /* rows declared but never written read as the fill value: they hold nothing */
        st = fk_fail(err, FK_EFORMAT, "%s: dataset %s declares %" PRIu64 " rows but %s written", name, path, n,
                     space == H5D_SPACE_STATUS_PART_ALLOCATED ? "only some were" : "none was");
    else if (nrows && read_rows(f, d, sp, ty, mem, row0, nrows, ncols, dst) < 0)
        st = fk_fail(err, FK_EFORMAT, "%s: dataset %s cannot be read", name, path);
    if (wide && ty >= 0) *wide = cl == H5T_FLOAT && H5Tget_size(ty) > 4;
    if (ty >= 0) H5Tclose(ty);
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
    return st;
}

/* The datasets of the open file f that s will read (the types of which it
 * holds particles; the file holds particles [before[t], before[t] +
 * npart[t]) of type t) must have the rows that NumPart_ThisFile (npart)
 * claims, checked before anything is allocated for them: Coordinates,
 * Velocities, ParticleIDs when present, Masses when the mass table gives
 * none. Only the shapes are read. */
static int check_claims(hid_t f, const char *name, const fk_gsnap *s, const uint64_t *before, const uint64_t *npart,
                        fk_error *err)
{
    for (int t = 0; t < s->hdr.ntypes; t++) {
        uint64_t skip;
        if (!fk_gsnap_part(s, t, before[t], npart[t], &skip)) continue;
        int st;
        if ((st = get_dataset(f, name, t, "Coordinates", npart[t], 0, 0, 3, H5T_NATIVE_FLOAT, NULL, 0, NULL, err)) ||
            (st = get_dataset(f, name, t, "Velocities", npart[t], 0, 0, 3, H5T_NATIVE_FLOAT, NULL, 0, NULL, err)))
            return st;
        st = get_dataset(f, name, t, "ParticleIDs", npart[t], 0, 0, 1, H5T_NATIVE_UINT64, NULL, 1, NULL, err);
        if (st && st != FK_EMISSING) return st;
        if (s->hdr.masstab[t] == 0 &&
            (st = get_dataset(f, name, t, "Masses", npart[t], 0, 0, 1, H5T_NATIVE_FLOAT, NULL, 1, NULL, err))) {
            if (st == FK_EMISSING)
                return fk_fail(err, FK_EFORMAT, "%s: missing dataset PartType%d/Masses (MassTable is 0 for type %d)", name,
                               t, t);
            return st;
        }
    }
    return FK_OK;
}

/* Reads the particles s holds of one open file into s (only their rows);
 * seen counts each type's particles in the files before. */
static int read_particles(hid_t f, const char *name, fk_gsnap *s, const uint64_t *npart, uint64_t *seen, fk_error *err)
{
    for (int t = 0; t < s->hdr.ntypes; t++) {
        uint64_t n = npart[t];
        if (seen[t] + n > s->hdr.ntotal[t])
            return fk_fail(err, FK_EFORMAT,
                           "%s: inconsistent counts: %" PRIu64 " particles of type %d up to this file, more than "
                           "NumPart_Total's %" PRIu64,
                           name, seen[t] + n, t, s->hdr.ntotal[t]);
        uint64_t r0, m = fk_gsnap_part(s, t, seen[t], n, &r0);
        if (m) {
            uint64_t at = fk_gsnap_slot(s, t, seen[t] + r0);
            int wide = 0, st;
            if ((st = get_dataset(f, name, t, "Coordinates", n, r0, m, 3, H5T_NATIVE_FLOAT, s->pos + 3 * at, 0, &wide,
                                  err)))
                return st;
            s->wide_pos |= wide;
            if ((st = get_dataset(f, name, t, "Velocities", n, r0, m, 3, H5T_NATIVE_FLOAT, s->vel + 3 * at, 0, NULL,
                                  err)))
                return st;
            st = get_dataset(f, name, t, "ParticleIDs", n, r0, m, 1, H5T_NATIVE_UINT64, s->pid + at, 1, NULL, err);
            if (st && st != FK_EMISSING) return st;
            if (s->hdr.masstab[t] != 0) {
                for (uint64_t j = 0; j < m; j++) s->mass[at + j] = (float)s->hdr.masstab[t];
            } else if ((st = get_dataset(f, name, t, "Masses", n, r0, m, 1, H5T_NATIVE_FLOAT, s->mass + at, 1, NULL,
                                         err))) {
                if (st == FK_EMISSING)
                    return fk_fail(err, FK_EFORMAT, "%s: missing dataset PartType%d/Masses (MassTable is 0 for type %d)",
                                   name, t, t);
                return st;
            }
        }
        seen[t] += n;
    }
    return FK_OK;
}


/* The name of file k of a snapshot whose first file is path ("...0.hdf5"). */
static int file_name(const char *path, int k, char *buf, size_t size)
{
    static const char *const ext[] = {".0.hdf5", ".0.h5"};
    size_t n = strlen(path);
    for (int e = 0; e < 2; e++) {
        size_t m = strlen(ext[e]);
        if (n > m && !strcmp(path + n - m, ext[e])) {
            snprintf(buf, size, "%.*s.%d%s", (int)(n - m), path, k, ext[e] + 2);
            return 1;
        }
    }
    return 0;
}

/* Where a snapshot's files come from: the files named, or images in memory. */
typedef struct source {
    const void *const *images; /* NULL: files */
    const size_t *sizes;
    int nimages;
} source;

/* A file that HDF5 cannot open: cut short when it holds fewer bytes than its
 * superblock says it has, else a file HDF5 refuses. */
static int open_failed(const unsigned char *head, size_t got, uint64_t size, const char *name, fk_error *err)
{
    const uint64_t eof = fk_hdf5_superblock_eof(head, got);
    if (eof > size)
        return fk_fail(err, FK_EFORMAT, "%s: truncated: the file holds %" PRIu64 " of the %" PRIu64
                       " bytes its HDF5 superblock gives", name, size, eof);
    return fk_fail(err, FK_EFORMAT, "%s: HDF5 file cannot be opened", name);
}

/* Opens file k of a snapshot, named name, as HDF5 (FK_EIO when missing,
 * FK_EFORMAT when not HDF5, or cut short). */
static int open_file(const source *src, int k, const char *name, hid_t *f, fk_error *err)
{
    if (!src->images) {
        FILE *probe;
        int st = fk_input_open(&probe, name, 0, 1, err);
        if (st) return st;
        unsigned char head[FK_SNIFF_BYTES];
        const size_t got = fread(head, 1, sizeof head, probe);
        const int k = fk_sniff(head, got);
        const int64_t size = fseeko(probe, 0, SEEK_END) == 0 ? (int64_t)ftello(probe) : -1;
        fk_input_close(probe);
        if (H5Fis_hdf5(name) <= 0) {
            if (got == 0) return fk_fail(err, FK_EFORMAT, "%s: empty input (not an HDF5 file)", name);
            if (k != FK_FILE_UNKNOWN && k != FK_FILE_HDF5)
                return fk_fail(err, FK_EFORMAT, "%s: not an HDF5 file but %s (%s)", name, fk_sniff_what(k),
                               fk_sniff_advice(k));
            return fk_fail(err, FK_EFORMAT, "%s: not an HDF5 file", name);
        }
        *f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (*f < 0 && size >= 0) return open_failed(head, got, (uint64_t)size, name, err);
    } else {
        static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
        if (k >= src->nimages) return fk_fail(err, FK_EIO, "%s: cannot open: %s", name, strerror(ENOENT));
        if (src->sizes[k] < 8 || memcmp(src->images[k], sig, 8))
            return fk_fail(err, FK_EFORMAT, "%s: not an HDF5 file", name);
        /* the core driver on a copy of the image, nothing written back */
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
        *f = -1;
        if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0 &&
            H5Pset_file_image(fapl, (void *)src->images[k], src->sizes[k]) >= 0)
            *f = H5Fopen(name, H5F_ACC_RDONLY, fapl);
        if (fapl >= 0) H5Pclose(fapl);
        if (*f < 0) return open_failed((const unsigned char *)src->images[k], src->sizes[k], src->sizes[k], name, err);
    }
    if (*f < 0) return fk_fail(err, FK_EFORMAT, "%s: HDF5 file cannot be opened", name);
    return FK_OK;
}

/* The particles of each type over the files [k0, k1), from the headers
 * alone, so that NumPart_Total is checked, and the datasets of every file
 * whose particles s holds (check_claims), before anything is allocated. f0
 * is file k0 (its counts npart0); first[t] counts the particles of type t in
 * the files before it. */
static int count_files(const source *src, const char *path, hid_t f0, const char *name0, const fk_gsnap *s, int k0,
                       int k1, const uint64_t *first, const uint64_t *npart0, uint64_t *sum, fk_error *err)
{
    uint64_t before[FK_GSNAP_NTYPES];
    for (int t = 0; t < FK_GSNAP_NTYPES; t++) before[t] = first[t];
    int st = check_claims(f0, name0, s, before, npart0, err);
    if (st) return st;
    for (int t = 0; t < FK_GSNAP_NTYPES; t++) sum[t] = npart0[t], before[t] += npart0[t];
    size_t size = strlen(path) + 32;
    char *name = malloc(size);
    if (!name) return fk_fail(err, FK_ENOMEM, "out of memory");
    for (int k = k0 + 1; k < k1 && !st; k++) {
        if (!file_name(path, k, name, size)) {
            st = fk_fail(err, FK_EINVAL,
                         "%s: the snapshot is split over %d files (NumFilesPerSnapshot): name its first file, NAME.0.hdf5",
                         path, s->hdr.nfiles);
            break;
        }
        hid_t f;
        if ((st = open_file(src, k, name, &f, err))) break;
        fk_gsnap_header h;
        uint64_t np[FK_GSNAP_NTYPES] = {0};
        st = read_header(f, name, &h, np, NULL, err);
        if (!st && h.ntypes != s->hdr.ntypes)
            st = fk_fail(err, FK_EFORMAT, "%s: inconsistent counts: %d types, file 0 has %d", name, h.ntypes,
                         s->hdr.ntypes);
        if (!st) st = check_claims(f, name, s, before, np, err);
        H5Fclose(f);
        for (int t = 0; t < FK_GSNAP_NTYPES && !st; t++) sum[t] += np[t], before[t] += np[t];
    }
    free(name);
    return st;
}

/* fk_hdf5_read of the files of src. */
static int read_snapshot(const source *src, const char *path, const fk_gsnap_opts *o, fk_gsnap *s, fk_hdf5_info *info,
                         fk_error *err)
{
    memset(s, 0, sizeof *s);
    if (info) memset(info, 0, sizeof *info);
    /* the library reports through fk_error only: HDF5's own error printing off */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    size_t size = strlen(path) + 32;
    char *name = malloc(size);
    if (!name) return fk_fail(err, FK_ENOMEM, "out of memory");
    /* whole files: only [file_lo, file_hi), their particles numbered from file_first on */
    const int whole = o->file_hi > 0, k0 = whole ? o->file_lo : 0;
    uint64_t seen[FK_GSNAP_NTYPES] = {0}, want[FK_GSNAP_NTYPES];
    for (int t = 0; t < FK_GSNAP_NTYPES; t++) seen[t] = whole ? o->file_first[t] : 0;
    fk_gsnap_header h0 = {0};
    int st = FK_OK;
    if (whole && (k0 < 0 || o->file_hi <= k0))
        st = fk_fail(err, FK_EINVAL, "%s: files %d to %d do not exist", path, k0, o->file_hi - 1);
    for (int k = k0; st == FK_OK && (k == k0 || k < (whole ? o->file_hi : s->hdr.nfiles)); k++) {
        if (k == 0)
            snprintf(name, size, "%s", path);
        else if (!file_name(path, k, name, size)) {
            if (k == k0) /* whole files from k0 on: no header read yet */
                st = fk_fail(err, FK_EINVAL, "%s: the snapshot is split over files: name its first file, NAME.0.hdf5",
                             path);
            else
                st = fk_fail(err, FK_EINVAL,
                             "%s: the snapshot is split over %d files (NumFilesPerSnapshot): name its first file, "
                             "NAME.0.hdf5",
                             path, s->hdr.nfiles);
            break;
        }
        hid_t f;
        if ((st = open_file(src, k, name, &f, err))) break;
        hsize_t fsize = 0;
        if (H5Fget_filesize(f, &fsize) < 0) fsize = 0;
        fk_gsnap_header h;
        uint64_t npart[FK_GSNAP_NTYPES] = {0};
        st = read_header(f, name, &h, npart, info, err);
        if (!st && k == k0) {
            h0 = h;
            if (h.box < 0 && !(o->box > 0))
                st = fk_fail(err, FK_EINVAL, "%s: the box (BoxSize) is not cubic: give --box", name);
            if (h.box < 0) h.box = 0;
            uint64_t sum[FK_GSNAP_NTYPES];
            if (!st) st = fk_gsnap_begin(s, &h, o, name, err);
            if (!st) st = count_files(src, path, f, name, s, k, whole ? o->file_hi : h.nfiles, seen, npart, sum, err);
            if (!st && o->headers_only) {
                for (int t = 0; t < FK_GSNAP_NTYPES; t++) s->nfile[t] = sum[t];
                H5Fclose(f);
                break;
            }
            for (int t = 0; t < h.ntypes && !st; t++)
                if (sum[t] != (whole ? o->file_count[t] : h.ntotal[t]))
                    st = fk_fail(err, FK_EFORMAT,
                                 "%s: inconsistent counts: the files hold %" PRIu64 " particles of type %d, NumPart_Total "
                                 "says %" PRIu64,
                                 path, sum[t], t, whole ? o->file_count[t] : h.ntotal[t]);
            /* the datasets vouch for the counts */
            if (!st) st = fk_gsnap_reserve(s, s->n, name, err);
        } else if (!st) {
            int same = h.ntypes == h0.ntypes && h.nfiles == h0.nfiles;
            for (int t = 0; t < h.ntypes && same; t++) same = h.ntotal[t] == h0.ntotal[t] && h.masstab[t] == h0.masstab[t];
            if (!same)
                st = fk_fail(err, FK_EFORMAT,
                             "%s: inconsistent counts: its header (NumPart_Total, MassTable, NumFilesPerSnapshot) "
                             "differs from file 0's",
                             name);
        }
        if (!st) st = read_particles(f, name, s, npart, seen, err);
        s->bytes += (uint64_t)fsize; /* after fk_gsnap_begin zeroed s */
        H5Fclose(f);
    }
    if (o->headers_only) {
        free(name);
        return st;
    }
    for (int t = 0; t < FK_GSNAP_NTYPES; t++) want[t] = whole ? o->file_first[t] + o->file_count[t] : s->hdr.ntotal[t];
    for (int t = 0; st == FK_OK && t < s->hdr.ntypes; t++)
        if (seen[t] != want[t])
            st = fk_fail(err, FK_EFORMAT,
                         "%s: inconsistent counts: the files hold %" PRIu64 " particles of type %d, NumPart_Total says "
                         "%" PRIu64,
                         path, seen[t] - (whole ? o->file_first[t] : 0), t, want[t] - (whole ? o->file_first[t] : 0));
    free(name);
    if (info) info->double_pos = s->wide_pos;
    if (st == FK_OK) st = fk_gsnap_finish(s, path, err);
    return st;
}

int fk_hdf5_read(const char *path, const fk_gsnap_opts *o, fk_gsnap *s, fk_hdf5_info *info, fk_error *err)
{
    const source files = {NULL, NULL, 0};
    return read_snapshot(&files, path, o, s, info, err);
}

int fk_hdf5_read_images(const char *path, const void *const *images, const size_t *sizes, int nimages,
                        const fk_gsnap_opts *o, fk_gsnap *s, fk_hdf5_info *info, fk_error *err)
{
    const source mem = {images, sizes, nimages};
    return read_snapshot(&mem, path, o, s, info, err);
}

#endif
