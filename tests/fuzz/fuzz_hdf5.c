/* fuzz_hdf5.c - fuzz harness: the HDF5 snapshot reader on in-memory file images of every layout it reads, built from the input. */
#include "fuzz.h"
#include "hdf5snap.h"

/*
 * The input does not hold HDF5 bytes: it describes a snapshot of one to
 * three files, which the harness writes with libhdf5 into memory (the core
 * driver, no file on disk) and gives to fk_hdf5_read_images as file images.
 * So every mutation reaches the reader's own logic (the Gadget-3/4, AREPO
 * and SWIFT layouts, attributes present or not, of any type and length,
 * datasets of any class and shape, written or not, counts that agree or
 * not between the header, the datasets and the files) instead of stopping
 * in libhdf5's parsing of damaged bytes, which this harness does not test
 * (the library is not built with the sanitizers or coverage).
 *
 * The description, byte by byte (a byte past the input's end reads as 0,
 * which gives the plain choice; see describe()):
 *   snapshot: files, naming, types, counts, mass table, box, time and
 *             redshift, units, cosmology, periodicity
 *   per file: which header attributes are written and how (type, length,
 *             a count off by one), then per type and dataset its class,
 *             shape and whether it is written; values come from the input
 *             while it lasts, then from a fixed pattern inside the box
 * A snapshot that reads is read again in slices (of 2 or 3, as the input's
 * last byte says) and with some of its types (gsnapcheck.h). Every error must be one line naming one of the files, and
 * none may be out of memory: a header's counts are checked against the
 * datasets before anything is allocated.
 */

#ifdef FK_HAVE_HDF5
#include <hdf5.h>

#include "gsnapcheck.h"

#define MAXFILES 3
#define MAXROWS 4096 /* rows written at most; a larger count is a claim the datasets cannot hold */

typedef struct bytes {
    const uint8_t *p;
    size_t n;
} bytes;

static unsigned u8(bytes *b)
{
    if (!b->n) return 0;
    b->n--;
    return *b->p++;
}

static uint32_t u32(bytes *b)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v = v << 8 | u8(b);
    return v;
}

static double f64(bytes *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | u8(b);
    double x;
    memcpy(&x, &v, 8);
    return x;
}

/* What the snapshot's header says, before each file's departures from it. */
typedef struct snapdesc {
    int nfiles, ntypes, named0;
    uint64_t count[7];
    double mass[7];
    int boxmode;
    double box, box3[3], time, redshift;
    unsigned meta; /* bits: see write_meta */
    double units[3], cosmo[3];
} snapdesc;

static void describe(bytes *b, snapdesc *d)
{
    unsigned v = u8(b);
    d->nfiles = 1 + (int)((v & 0x0f) % MAXFILES);
    d->named0 = !(v & 0x10); /* "snap.0.hdf5", else "snap.hdf5" */
    d->ntypes = 2 + (int)(u8(b) % 6);
    for (int t = 0; t < d->ntypes; t++) {
        v = u8(b);
        d->count[t] = v < 224 ? v % 9 : v < 252 ? v % 224 * 37 : u32(b);
        v = u8(b);
        d->mass[t] = v % 3 == 0 ? 1.0 : v % 3 == 1 ? 0.0 : f64(b);
    }
    d->boxmode = (int)(u8(b) % 6);
    d->box = d->boxmode >= 4 ? f64(b) : 100.0;
    d->box3[0] = d->box3[1] = d->box3[2] = d->box;
    if (d->boxmode == 3) d->box3[2] = d->box * 0.5;
    d->time = (u8(b) & 1) ? f64(b) : 1.0;
    d->redshift = 1 / d->time - 1;
    d->meta = u8(b) | u8(b) << 8;
    for (int i = 0; i < 3; i++) d->units[i] = (d->meta & 0x100) ? f64(b) : (i == 0 ? 3.085678e21 : i == 1 ? 1.989e43 : 1e5);
    for (int i = 0; i < 3; i++) d->cosmo[i] = (d->meta & 0x200) ? f64(b) : (i == 0 ? 0.7 : i == 1 ? 0.3 : 0.7);
}

/* An attribute of n values (n 0: a scalar) of file type ft, written from doubles. */
static void attr(hid_t g, const char *name, hid_t ft, int n, const double *v)
{
    if (n > 8) n = 8;
    hsize_t dim = (hsize_t)n;
    hid_t sp = n ? H5Screate_simple(1, &dim, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
        if (H5Tget_class(ft) == H5T_STRING) {
            char s[8][16];
            memset(s, 0, sizeof s);
            for (int i = 0; i < (n ? n : 1); i++) snprintf(s[i], sizeof s[i], "%g", v[i]);
            H5Awrite(a, ft, s);
        } else {
            H5Awrite(a, H5T_NATIVE_DOUBLE, v);
        }
        H5Aclose(a);
    }
    H5Sclose(sp);
}

/* The file types an attribute or dataset may take, chosen by a byte. */
static hid_t numtype(unsigned v, hid_t *str)
{
    switch (v % 8) {
    case 0: return H5T_STD_U32LE;
    case 1: return H5T_STD_U64LE;
    case 2: return H5T_IEEE_F64LE;
    case 3: return H5T_STD_I32LE;
    case 4: return H5T_IEEE_F32BE;
    case 5: return H5T_STD_I64BE;
    case 6: return H5T_STD_U8LE;
    default:
        *str = H5Tcopy(H5T_C_S1);
        H5Tset_size(*str, 16);
        return *str;
    }
}

static void attr_typed(hid_t g, const char *name, unsigned v, int n, const double *x)
{
    hid_t str = -1, ft = numtype(v, &str);
    attr(g, name, ft, n, x);
    if (str >= 0) H5Tclose(str);
}

static hid_t group(hid_t f, const char *name)
{
    return H5Lexists(f, name, H5P_DEFAULT) > 0 ? H5Gopen2(f, name, H5P_DEFAULT)
                                               : H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

/* The header of file k: counts (this file's share of each type), mass table, box, time, units,
 * cosmology, periodicity; the file's own byte flips attributes off, retypes or lengthens them. */
static void write_header(hid_t f, bytes *b, const snapdesc *d, int k, const uint64_t *mine)
{
    const unsigned how = u8(b), how2 = u8(b);
    hid_t h = group(f, "Header");
    double x[8] = {0};
    const int nt = d->ntypes + ((how2 & 3) == 3 ? 1 : 0) - ((how2 & 3) == 2 ? 1 : 0);
    for (int t = 0; t < d->ntypes; t++) x[t] = (double)mine[t];
    if (!(how & 1)) attr_typed(h, "NumPart_ThisFile", (how2 >> 2) & 4 ? u8(b) : 0, d->ntypes, x);
    for (int t = 0; t < d->ntypes; t++) x[t] = (double)d->count[t] + (t == 1 && (how2 & 0x80) ? 1 : 0);
    if (how & 0x40) {
        double lo[8], hi[8];
        for (int t = 0; t < 8; t++) lo[t] = (double)((uint64_t)x[t] & 0xffffffffu), hi[t] = (double)((uint64_t)x[t] >> 32);
        if (!(how & 2)) attr(h, "NumPart_Total", H5T_STD_U32LE, nt, lo);
        attr(h, "NumPart_Total_HighWord", H5T_STD_U32LE, (how2 & 0x10) ? nt : d->ntypes, hi);
    } else if (!(how & 2)) {
        attr_typed(h, "NumPart_Total", (how2 & 0x40) ? u8(b) : 1, nt, x);
    }
    for (int t = 0; t < d->ntypes; t++) x[t] = d->mass[t];
    if (!(how & 4)) attr(h, "MassTable", H5T_IEEE_F64LE, (how2 & 0x20) ? nt : d->ntypes, x);
    x[0] = (how & 8) ? (double)(d->nfiles + 1) : (double)d->nfiles;
    if (d->nfiles > 1 || (how & 8)) attr(h, "NumFilesPerSnapshot", H5T_STD_I32LE, 0, x);
    if (d->boxmode != 5) attr(h, "BoxSize", H5T_IEEE_F64LE, d->boxmode == 2 || d->boxmode == 3 ? 3 : 0, d->box3);
    if (!(how & 0x10)) attr(h, "Time", H5T_IEEE_F64LE, 0, &d->time);
    attr(h, "Redshift", H5T_IEEE_F64LE, 0, &d->redshift);
    /* units: Gadget's names in Header, Parameters or Units, or SWIFT's */
    const unsigned m = d->meta;
    static const char *const ugroup[3] = {"Header", "Parameters", "Units"};
    if (m & 3) {
        if ((m & 3) == 3) {
            hid_t u = group(f, "Units");
            double ut = d->units[0] / d->units[2];
            attr(u, "Unit length in cgs (U_L)", H5T_IEEE_F64LE, 0, &d->units[0]);
            attr(u, "Unit mass in cgs (U_M)", H5T_IEEE_F64LE, 0, &d->units[1]);
            if (!(how & 0x20)) attr(u, "Unit time in cgs (U_t)", H5T_IEEE_F64LE, 0, &ut);
            H5Gclose(u);
        } else {
            hid_t u = group(f, ugroup[(m & 3) - 1 + ((m >> 12) & 1)]);
            attr(u, "UnitLength_in_cm", H5T_IEEE_F64LE, 0, &d->units[0]);
            attr(u, "UnitMass_in_g", H5T_IEEE_F64LE, 0, &d->units[1]);
            if (!(how & 0x20)) attr(u, "UnitVelocity_in_cm_per_s", H5T_IEEE_F64LE, 0, &d->units[2]);
            H5Gclose(u);
        }
    }
    if (m & 0xc) {
        static const char *const cgroup[3] = {"Header", "Parameters", "Cosmology"};
        hid_t c = group(f, cgroup[((m >> 2) & 3) - 1]);
        if ((m & 0xc) == 0xc && (m & 0x2000)) {
            attr(c, "h", H5T_IEEE_F64LE, 0, &d->cosmo[0]);
            attr(c, "Omega_m", H5T_IEEE_F64LE, 0, &d->cosmo[1]);
            attr(c, "Omega_lambda", H5T_IEEE_F64LE, 0, &d->cosmo[2]);
        } else {
            attr(c, "HubbleParam", H5T_IEEE_F64LE, 0, &d->cosmo[0]);
            attr(c, "Omega0", H5T_IEEE_F64LE, 0, &d->cosmo[1]);
            if (!(how & 0x80)) attr(c, "OmegaLambda", H5T_IEEE_F64LE, 0, &d->cosmo[2]);
        }
        H5Gclose(c);
    }
    /* periodicity: a Periodic attribute, or Gadget-4's Config group */
    x[0] = (m >> 6) & 1;
    if (m & 0x10) {
        hid_t g = (m & 0x4000) ? group(f, "Cosmology") : (H5Iinc_ref(h), h);
        attr(g, "Periodic", (m & 0x8000) ? H5T_STD_I32LE : H5T_IEEE_F64LE, 0, x);
        H5Gclose(g);
    } else if (m & 0x20) {
        hid_t g = group(f, "Config");
        if (m & 0x40) attr(g, "PERIODIC", H5T_STD_I32LE, 0, x);
        H5Gclose(g);
    }
    (void)k;
    H5Gclose(h);
}

/* One dataset of PartType<t>: rows x cols as the byte v chooses (class, shape, written or not),
 * values from the input, then a pattern inside the box. */
static void write_dataset(hid_t g, bytes *b, const char *name, uint64_t rows, int cols, double box, uint64_t id0)
{
    const unsigned v = u8(b);
    if (v % 16 == 15) return; /* absent */
    hid_t str = -1, ft = (v % 16) < 8 ? (cols == 1 && !strcmp(name, "ParticleIDs") ? H5T_STD_U64LE : H5T_IEEE_F32LE)
                                      : numtype(v, &str);
    if ((v >> 4) == 1) rows += 1;
    if ((v >> 4) == 2 && rows) rows -= 1;
    if ((v >> 4) == 3) cols = cols == 3 ? 2 : 3;
    const int rank = (v >> 4) == 4 ? (cols == 1 ? 2 : 1) : (cols > 1 ? 2 : 1);
    const int unwritten = (v >> 4) == 5 || rows > MAXROWS;
    hsize_t dims[2] = {rows, (hsize_t)cols}, chunk[2] = {64, (hsize_t)cols};
    hid_t sp = H5Screate_simple(rank, dims, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
    if (unwritten && rows) H5Pset_chunk(pl, rank, chunk);
    hid_t d = H5Dcreate2(g, name, ft, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    if (d >= 0 && !unwritten && rows) {
        const uint64_t n = rows * (rank == 2 ? (uint64_t)cols : 1);
        double *x = malloc(n * sizeof *x);
        if (!x) abort();
        for (uint64_t i = 0; i < n; i++) {
            if (!strcmp(name, "ParticleIDs"))
                x[i] = b->n >= 4 && (v & 0x80) ? (double)u32(b) : (double)(id0 + i);
            else if (b->n >= 8 && (v & 0x80))
                x[i] = f64(b);
            else
                x[i] = fmod(0.618034 * (double)(i + 1) * box, box > 0 && isfinite(box) ? box : 1.0);
        }
        if (H5Tget_class(ft) != H5T_STRING) H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
        free(x);
    }
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp), H5Pclose(pl);
    if (str >= 0) H5Tclose(str);
}

/* Builds file k of the snapshot in memory and returns its image (malloc'd), or NULL. */
static void *build_file(bytes *b, const snapdesc *d, int k, uint64_t *seen, size_t *size)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 4096, 0);
    hid_t f = H5Fcreate("fuzz.hdf5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (f < 0) return NULL;
    uint64_t mine[7] = {0};
    for (int t = 0; t < d->ntypes; t++) {
        /* file k holds particles [N k / files, N (k + 1) / files) of each type, as snapcopy splits them */
        const uint64_t n = d->count[t], a = n / d->nfiles * k + n % d->nfiles * k / d->nfiles,
                       e = n / d->nfiles * (k + 1) + n % d->nfiles * (k + 1) / d->nfiles;
        mine[t] = e - a;
    }
    write_header(f, b, d, k, mine);
    for (int t = 0; t < d->ntypes; t++) {
        if (!mine[t] && !(u8(b) & 1)) continue;
        char name[16];
        snprintf(name, sizeof name, "PartType%d", t);
        hid_t g = group(f, name);
        write_dataset(g, b, "Coordinates", mine[t], 3, d->box, 0);
        write_dataset(g, b, "Velocities", mine[t], 3, 1.0, 0);
        write_dataset(g, b, "ParticleIDs", mine[t], 1, 0, seen[t]);
        if (d->mass[t] == 0 || (u8(b) & 1)) write_dataset(g, b, "Masses", mine[t], 1, 1.0, 0);
        H5Gclose(g);
        seen[t] += mine[t];
    }
    void *image = NULL;
    H5Fflush(f, H5F_SCOPE_LOCAL);
    ssize_t n = H5Fget_file_image(f, NULL, 0);
    if (n > 0 && (image = malloc((size_t)n)) && H5Fget_file_image(f, image, (size_t)n) != n) {
        free(image);
        image = NULL;
    }
    *size = n > 0 ? (size_t)n : 0;
    H5Fclose(f);
    return image;
}

typedef struct snapshot {
    const char *path;
    const void *image[MAXFILES];
    size_t size[MAXFILES];
    int nimages;
} snapshot;

static int read_images(void *ctx, const fk_gsnap_opts *o, fk_gsnap *s, fk_error *err)
{
    const snapshot *sn = ctx;
    int st = fk_hdf5_read_images(sn->path, sn->image, sn->size, sn->nimages, o, s, NULL, err);
    if (st) {
        /* one line naming one of the files; never out of memory */
        FUZZ_ASSERT_ERR(st, *err);
        FUZZ_ASSERT(st == FK_EFORMAT || st == FK_EIO || st == FK_EINVAL);
        FUZZ_ASSERT(!strncmp(err->msg, "snap.", 5));
    }
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) H5Eset_auto2(H5E_DEFAULT, NULL, NULL), quiet = 1;

    bytes b = {data, size};
    snapdesc d;
    memset(&d, 0, sizeof d);
    describe(&b, &d);
    snapshot sn = {d.named0 ? "snap.0.hdf5" : "snap.hdf5", {0}, {0}, 0};
    uint64_t seen[7] = {0};
    void *image[MAXFILES] = {0};
    for (int k = 0; k < d.nfiles; k++) {
        if (!(image[k] = build_file(&b, &d, k, seen, &sn.size[k]))) break;
        sn.image[k] = image[k];
        sn.nimages = k + 1;
    }
    /* a file left out: the reader must say that it is missing */
    if (sn.nimages > 1 && (u8(&b) & 0x0f) == 0x0f) sn.nimages--;
    fk_gsnap_opts o;
    fk_gsnap_opts_default(&o);
    fk_gsnap w;
    fk_error err = {0};
    int st = read_images(&sn, &o, &w, &err);
    if (st == FK_EINVAL && (strstr(err.msg, "no box size") || strstr(err.msg, "not cubic"))) {
        fk_gsnap_free(&w);
        o.box = 100, o.origin = -10;
        fk_error_clear(&err);
        st = read_images(&sn, &o, &w, &err);
    }
    if (st == FK_OK) {
        gsnap_check(&w, &o);
        /* slices of 2 or 3 (the input's last byte says which): each read opens every file twice */
        const uint32_t r = 2 + (size && (data[size - 1] & 1));
        gsnap_check_parts(read_images, &sn, &w, &o, r, r);
    }
    fk_gsnap_free(&w);
    for (int k = 0; k < MAXFILES; k++) free(image[k]);
    /* every file, group, dataset and attribute the reader opened is closed again (one left open
     * keeps its file image in memory: a leak that grows with every snapshot read) */
    ssize_t open = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    if (open) fprintf(stderr, "%zd HDF5 objects left open\n", open);
    FUZZ_ASSERT(open == 0);
    return 0;
}

#else

/* A build without HDF5: nothing to read (tests/fuzz_replay.bats skips this harness). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)data, (void)size;
    return 0;
}

#endif
