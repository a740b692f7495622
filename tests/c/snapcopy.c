/* snapcopy.c - test helper: rewrites an HDF5 snapshot as Gadget-2 binary (format 1/2, either byte order) or split HDF5. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gadget.h"
#include "hdf5snap.h"
#include "prog.h"

#ifdef FK_HAVE_HDF5
#include <hdf5.h>
#endif

/*
 * Usage: snapcopy [OPTION]... IN OUT
 * IN is an HDF5 snapshot (a name ending in .hdf5) or a Gadget-2 one.
 *   --to=gadget2|hdf5   what to write (default gadget2)
 *   --format=1|2        Gadget-2 SnapFormat (default 1)
 *   --big               Gadget-2 big-endian (default little)
 *   --files=N           split over N files: OUT.0 ... (Gadget-2), OUT.0.hdf5 ... (HDF5)
 *   --double            positions, velocities and masses as doubles
 *   --ids8              8-byte IDs
 *   --masses            every mass in a MASS block / Masses dataset, the mass table 0
 *   --omit=NAME         HDF5: leave dataset PartType1/NAME out of every file
 *   --total-plus=K      write NumPart_Total (npartTotal) of type 1 K too large
 *   --swift[=SIDES]     HDF5 in SWIFT's layout: BoxSize of 3 sides (SIDES "a,b,c" overrides),
 *                       a Units and a Cosmology group with SWIFT's names, every mass in Masses
 *   --highword=K        write the totals as 32 bits and a high word, that of type 1 being K
 *   --claim=N           HDF5: type 1's NumPart_ThisFile and NumPart_Total say N (one file), its
 *                       datasets keep their rows
 *   --unwritten         HDF5, with --claim: type 1's datasets declare N rows (chunked) and none
 *                       is written
 * The particles are split type by type: file k holds particles
 * [N k / files, N (k + 1) / files) of every type, so the snapshot's order
 * (fk_gsnap) is kept. Exits 0, or 1 with a message.
 */

typedef struct opts {
    int to_hdf5, format, big, files, dbl, ids8, masses, total_plus;
    long highword; /* -1: none */
    uint64_t claim; /* 0: none */
    int unwritten;
    int swift;
    double sides[3];
    const char *omit;
} opts;

static FILE *out;
static int big;

static void put_bytes(const void *p, size_t n, int swap)
{
    unsigned char b[8];
    memcpy(b, p, n);
    if (swap)
        for (size_t i = 0; i < n / 2; i++) {
            unsigned char t = b[i];
            b[i] = b[n - 1 - i];
            b[n - 1 - i] = t;
        }
    fwrite(b, 1, n, out);
}
static void put_u32(uint32_t v) { put_bytes(&v, 4, big); }
static void put_u64(uint64_t v) { put_bytes(&v, 8, big); }
static void put_f64(double v) { put_bytes(&v, 8, big); }
static void put_val(double v, int dbl)
{
    if (dbl)
        put_f64(v);
    else {
        float f = (float)v;
        put_bytes(&f, 4, big);
    }
}

static void record_begin(const opts *o, const char *label, uint32_t len)
{
    if (o->format == 2) {
        char lab[4] = {' ', ' ', ' ', ' '};
        memcpy(lab, label, strlen(label));
        put_u32(8);
        fwrite(lab, 1, 4, out);
        put_u32(len + 8);
        put_u32(8);
    }
    put_u32(len);
}

/* Particles of type t in file k of the split. */
static uint64_t share(uint64_t n, int k, int files, uint64_t *first)
{
    *first = n * k / files;
    return n * (k + 1) / files - *first;
}

/* The particle slots of s of type t (all types kept: slot = first of type + k). */
static uint64_t type_start(const fk_gsnap *s, int t)
{
    return fk_gsnap_slot(s, t, 0);
}

static void write_gadget2(const fk_gsnap *s, const opts *o, const char *base)
{
    const int vs = o->dbl ? 8 : 4, is = o->ids8 ? 8 : 4;
    for (int k = 0; k < o->files; k++) {
        char name[4096];
        if (o->files > 1)
            snprintf(name, sizeof name, "%s.%d", base, k);
        else
            snprintf(name, sizeof name, "%s", base);
        if (!(out = fopen(name, "wb"))) prog_die(1, "cannot create %s", name);
        uint64_t first[6], np[6], n = 0, nvar = 0;
        for (int t = 0; t < 6; t++) {
            np[t] = t < s->hdr.ntypes ? share(s->hdr.ntotal[t], k, o->files, &first[t]) : 0;
            n += np[t];
            if (o->masses || s->hdr.masstab[t] == 0) nvar += np[t];
        }
        record_begin(o, "HEAD", 256);
        for (int t = 0; t < 6; t++) put_u32((uint32_t)np[t]);
        for (int t = 0; t < 6; t++) put_f64(o->masses || t >= s->hdr.ntypes ? 0 : s->hdr.masstab[t]);
        put_f64(s->hdr.time), put_f64(s->hdr.redshift), put_u32(0), put_u32(0);
        for (int t = 0; t < 6; t++) {
            uint64_t tot = (t < s->hdr.ntypes ? s->hdr.ntotal[t] : 0) + (t == 1 ? (uint64_t)o->total_plus : 0);
            put_u32((uint32_t)tot);
        }
        put_u32(0), put_u32((uint32_t)o->files);
        put_f64(s->hdr.box), put_f64(s->hdr.omega0), put_f64(s->hdr.omega_lambda), put_f64(s->hdr.hubble);
        put_u32(0), put_u32(0);
        for (int t = 0; t < 6; t++) {
            uint64_t tot = (t < s->hdr.ntypes ? s->hdr.ntotal[t] : 0) + (t == 1 ? (uint64_t)o->total_plus : 0);
            put_u32((uint32_t)(tot >> 32) + (t == 1 && o->highword > 0 ? (uint32_t)o->highword : 0));
        }
        for (int i = 192; i < 256; i += 4) put_u32(0);
        put_u32(256);
        static const char *blocks[4] = {"POS", "VEL", "ID", "MASS"};
        for (int b = 0; b < 4; b++) {
            int ncomp = b < 2 ? 3 : 1;
            uint64_t count = b == 3 ? nvar : n;
            if (b == 3 && !nvar) continue;
            uint32_t len = (uint32_t)(count * ncomp * (b == 2 ? is : vs));
            record_begin(o, blocks[b], len);
            for (int t = 0; t < 6; t++) {
                if (b == 3 && !(o->masses || s->hdr.masstab[t] == 0)) continue;
                for (uint64_t j = 0; j < np[t]; j++) {
                    uint64_t i = type_start(s, t) + first[t] + j;
                    if (b == 0) for (int d = 0; d < 3; d++) put_val(s->pos[3 * i + d], o->dbl);
                    if (b == 1) for (int d = 0; d < 3; d++) put_val(s->vel[3 * i + d], o->dbl);
                    if (b == 2) o->ids8 ? put_u64(s->pid[i]) : put_u32((uint32_t)s->pid[i]);
                    if (b == 3) put_val(s->mass[i], o->dbl);
                }
            }
            put_u32(len);
        }
        /* a block the reader skips (the gas's internal energy, zeros), as in real snapshots */
        uint32_t len = (uint32_t)(np[0] * 4);
        record_begin(o, "U", len);
        for (uint64_t j = 0; j < np[0]; j++) put_u32(0);
        put_u32(len);
        if (fclose(out)) prog_die(1, "cannot write %s", name);
    }
}

#ifdef FK_HAVE_HDF5
static void attr(hid_t g, const char *name, hid_t type, int n, const void *v)
{
    hsize_t dim = (hsize_t)n;
    hid_t sp = n ? H5Screate_simple(1, &dim, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || H5Awrite(a, type == H5T_STD_U32LE ? H5T_NATIVE_UINT32 : type == H5T_STD_U64LE ? H5T_NATIVE_UINT64
                                                                                          : type == H5T_STD_I32LE ? H5T_NATIVE_INT32
                                                                                                                  : H5T_NATIVE_DOUBLE,
                              v) < 0)
        prog_die(1, "cannot write attribute %s", name);
    H5Aclose(a), H5Sclose(sp);
}

static void dataset(hid_t g, const char *name, int dbl, hid_t mem_type, uint64_t n, int ncols, const void *v)
{
    hsize_t dims[2] = {n, (hsize_t)ncols};
    hid_t sp = H5Screate_simple(ncols > 1 ? 2 : 1, dims, NULL);
    hid_t ft = mem_type == H5T_NATIVE_FLOAT ? (dbl ? H5T_IEEE_F64LE : H5T_IEEE_F32LE) : H5T_STD_U64LE;
    hid_t d = H5Dcreate2(g, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0 || H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) prog_die(1, "cannot write dataset %s", name);
    H5Dclose(d), H5Sclose(sp);
}

/* A chunked dataset of n rows of which none is written (--unwritten). */
static void unwritten(hid_t g, const char *name, uint64_t n, int ncols)
{
    hsize_t dims[2] = {n, (hsize_t)ncols}, chunk[2] = {1024, (hsize_t)ncols};
    hid_t sp = H5Screate_simple(ncols > 1 ? 2 : 1, dims, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(pl, ncols > 1 ? 2 : 1, chunk);
    hid_t d = H5Dcreate2(g, name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    if (d < 0) prog_die(1, "cannot create dataset %s", name);
    H5Dclose(d), H5Sclose(sp), H5Pclose(pl);
}

static void write_hdf5(const fk_gsnap *s, const opts *o, const char *base)
{
    const int nt = s->hdr.ntypes;
    for (int k = 0; k < o->files; k++) {
        char name[4096];
        snprintf(name, sizeof name, "%s.%d.hdf5", base, k);
        hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        if (f < 0) prog_die(1, "cannot create %s", name);
        hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        uint32_t np[FK_GSNAP_NTYPES], rows[FK_GSNAP_NTYPES]; /* what the header says, what the datasets hold */
        uint64_t first[FK_GSNAP_NTYPES], tot[FK_GSNAP_NTYPES];
        double mt[FK_GSNAP_NTYPES];
        for (int t = 0; t < nt; t++) {
            np[t] = rows[t] = (uint32_t)share(s->hdr.ntotal[t], k, o->files, &first[t]);
            tot[t] = s->hdr.ntotal[t] + (t == 1 ? (uint64_t)o->total_plus : 0);
            mt[t] = o->masses ? 0 : s->hdr.masstab[t];
            if (t == 1 && o->claim) np[t] = (uint32_t)o->claim, tot[t] = o->claim;
        }
        int32_t nf = o->files;
        attr(h, "NumPart_ThisFile", H5T_STD_U32LE, nt, np);
        if (o->highword >= 0) {
            uint32_t lo[FK_GSNAP_NTYPES], hi[FK_GSNAP_NTYPES];
            for (int t = 0; t < nt; t++) {
                lo[t] = (uint32_t)tot[t];
                hi[t] = (uint32_t)(tot[t] >> 32) + (t == 1 ? (uint32_t)o->highword : 0);
            }
            attr(h, "NumPart_Total", H5T_STD_U32LE, nt, lo);
            attr(h, "NumPart_Total_HighWord", H5T_STD_U32LE, nt, hi);
        } else {
            attr(h, "NumPart_Total", H5T_STD_U64LE, nt, tot);
        }
        attr(h, "MassTable", H5T_IEEE_F64LE, nt, mt);
        attr(h, "NumFilesPerSnapshot", H5T_STD_I32LE, 0, &nf);
        if (o->swift)
            attr(h, "BoxSize", H5T_IEEE_F64LE, 3, o->sides);
        else
            attr(h, "BoxSize", H5T_IEEE_F64LE, 0, &s->hdr.box);
        attr(h, "Time", H5T_IEEE_F64LE, 0, &s->hdr.time);
        attr(h, "Redshift", H5T_IEEE_F64LE, 0, &s->hdr.redshift);
        H5Gclose(h);
        if (o->swift) {
            hid_t u = H5Gcreate2(f, "Units", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            double ut = s->hdr.unit_length_cm / s->hdr.unit_velocity_cm_s;
            attr(u, "Unit length in cgs (U_L)", H5T_IEEE_F64LE, 0, &s->hdr.unit_length_cm);
            attr(u, "Unit mass in cgs (U_M)", H5T_IEEE_F64LE, 0, &s->hdr.unit_mass_g);
            attr(u, "Unit time in cgs (U_t)", H5T_IEEE_F64LE, 0, &ut);
            H5Gclose(u);
            hid_t c = H5Gcreate2(f, "Cosmology", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            attr(c, "h", H5T_IEEE_F64LE, 0, &s->hdr.hubble);
            attr(c, "Omega_m", H5T_IEEE_F64LE, 0, &s->hdr.omega0);
            attr(c, "Omega_lambda", H5T_IEEE_F64LE, 0, &s->hdr.omega_lambda);
            if (s->hdr.have_omega_baryon) attr(c, "Omega_b", H5T_IEEE_F64LE, 0, &s->hdr.omega_baryon);
            int32_t run = s->hdr.comoving;
            attr(c, "Cosmological run", H5T_STD_I32LE, 0, &run);
            H5Gclose(c);
        } else {
            hid_t p = H5Gcreate2(f, "Parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            attr(p, "UnitLength_in_cm", H5T_IEEE_F64LE, 0, &s->hdr.unit_length_cm);
            attr(p, "UnitMass_in_g", H5T_IEEE_F64LE, 0, &s->hdr.unit_mass_g);
            attr(p, "UnitVelocity_in_cm_per_s", H5T_IEEE_F64LE, 0, &s->hdr.unit_velocity_cm_s);
            attr(p, "HubbleParam", H5T_IEEE_F64LE, 0, &s->hdr.hubble);
            attr(p, "Omega0", H5T_IEEE_F64LE, 0, &s->hdr.omega0);
            attr(p, "OmegaLambda", H5T_IEEE_F64LE, 0, &s->hdr.omega_lambda);
            if (s->hdr.have_omega_baryon) attr(p, "OmegaBaryon", H5T_IEEE_F64LE, 0, &s->hdr.omega_baryon);
            int32_t com = s->hdr.comoving;
            attr(p, "ComovingIntegrationOn", H5T_STD_I32LE, 0, &com);
            H5Gclose(p);
        }
        for (int t = 0; t < nt; t++) {
            if (!rows[t]) continue;
            char g[32];
            snprintf(g, sizeof g, "PartType%d", t);
            hid_t pg = H5Gcreate2(f, g, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            uint64_t at = type_start(s, t) + first[t];
            if (t == 1 && o->unwritten) {
                unwritten(pg, "Coordinates", np[t], 3);
                unwritten(pg, "Velocities", np[t], 3);
                H5Gclose(pg);
                continue;
            }
            const int skip = t == 1 && o->omit;
            if (!(skip && !strcmp(o->omit, "Coordinates")))
                dataset(pg, "Coordinates", o->dbl, H5T_NATIVE_FLOAT, rows[t], 3, s->pos + 3 * at);
            if (!(skip && !strcmp(o->omit, "Velocities"))) {
                dataset(pg, "Velocities", o->dbl, H5T_NATIVE_FLOAT, rows[t], 3, s->vel + 3 * at);
                /* the velocities' a-scaling as each layout names it */
                hid_t d = H5Dopen2(pg, "Velocities", H5P_DEFAULT);
                attr(d, o->swift ? "a-scale exponent" : "a_scaling", H5T_IEEE_F64LE, 0, &s->hdr.vel_a_scaling);
                H5Dclose(d);
            }
            if (!(skip && !strcmp(o->omit, "ParticleIDs")))
                dataset(pg, "ParticleIDs", 0, H5T_NATIVE_UINT64, rows[t], 1, s->pid + at);
            if (o->masses && !(skip && !strcmp(o->omit, "Masses")))
                dataset(pg, "Masses", o->dbl, H5T_NATIVE_FLOAT, rows[t], 1, s->mass + at);
            H5Gclose(pg);
        }
        if (H5Fclose(f) < 0) prog_die(1, "cannot write %s", name);
    }
}
#endif

int main(int argc, char **argv)
{
    prog_init("snapcopy");
    opts o = {.format = 1, .files = 1, .highword = -1};
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--to=hdf5")) o.to_hdf5 = 1;
        else if (!strcmp(a, "--to=gadget2")) o.to_hdf5 = 0;
        else if (!strncmp(a, "--format=", 9)) o.format = (int)prog_parse_int("--format", a + 9, 1, 2);
        else if (!strcmp(a, "--big")) o.big = 1;
        else if (!strncmp(a, "--files=", 8)) o.files = (int)prog_parse_int("--files", a + 8, 1, 1000);
        else if (!strcmp(a, "--double")) o.dbl = 1;
        else if (!strcmp(a, "--ids8")) o.ids8 = 1;
        else if (!strcmp(a, "--masses")) o.masses = 1;
        else if (!strncmp(a, "--omit=", 7)) o.omit = a + 7;
        else if (!strncmp(a, "--total-plus=", 13)) o.total_plus = (int)prog_parse_int("--total-plus", a + 13, 0, 1000000);
        else if (!strcmp(a, "--swift")) o.swift = o.masses = 1;
        else if (!strncmp(a, "--swift=", 8)) {
            o.swift = o.masses = 1;
            if (prog_parse_list("--swift", a + 8, o.sides, 3, 0, 1e30) != 3) prog_usage("--swift needs 3 sides");
        }
        else if (!strncmp(a, "--claim=", 8)) o.claim = (uint64_t)prog_parse_int("--claim", a + 8, 1, UINT32_MAX);
        else if (!strcmp(a, "--unwritten")) o.unwritten = 1;
        else if (!strncmp(a, "--highword=", 11)) o.highword = (long)prog_parse_int("--highword", a + 11, 0, 1000);
        else prog_usage("unknown option %s", a);
    }
    if (argc - i != 2) prog_usage("needs IN OUT");
    fk_gsnap_opts so;
    fk_gsnap_opts_default(&so);
    so.periodic = 0; /* copy the positions as they are */
    fk_gsnap s;
    fk_error err = {0};
    size_t len = strlen(argv[i]);
    int hdf5 = len > 5 && !strcmp(argv[i] + len - 5, ".hdf5");
    if (hdf5 ? fk_hdf5_read(argv[i], &so, &s, NULL, &err) : fk_gadget_read(argv[i], &so, &s, NULL, &err))
        prog_fail(&err);
    if (o.to_hdf5 && !fk_hdf5_available()) prog_die(1, "built without HDF5");
    if (o.swift && o.sides[0] == 0) o.sides[0] = o.sides[1] = o.sides[2] = s.hdr.box;
    big = o.big;
    if (o.to_hdf5) {
#ifdef FK_HAVE_HDF5
        write_hdf5(&s, &o, argv[i + 1]);
#endif
    } else {
        write_gadget2(&s, &o, argv[i + 1]);
    }
    fk_gsnap_free(&s);
    return 0;
}
