/* gadget.c - the Gadget-2 binary snapshot reader: Fortran records checked, format 1 and 2, either byte order, many files; a regular file's blocks read and decoded on every core. */
#include "gadget.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fdio.h"
#include "fileio.h"
#include "sniff.h"

/* One open file being read record by record. */
typedef struct rd {
    FILE *f;
    const char *name;
    int big;      /* values are big-endian */
    uint64_t off; /* bytes read (or seeked over) so far */
    int64_t size; /* a regular file's size (skips seek), or -1 (a pipe: skipped bytes are read) */
} rd;

/* Particles decoded at a time (a block is read in pieces of this many). */
#define PIECE 65536

/* The raw header, decoded. */
typedef struct g2hdr {
    uint32_t npart[6];
    double mass[6];
    double time, redshift;
    uint32_t nall[6], nallhw[6];
    int32_t num_files;
    double box, omega0, omega_lambda, hubble;
} g2hdr;

static uint32_t u32(const unsigned char *b, int big)
{
    return big ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
               : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

static uint64_t u64(const unsigned char *b, int big)
{
    return big ? (uint64_t)u32(b, 1) << 32 | u32(b + 4, 1) : (uint64_t)u32(b + 4, 0) << 32 | u32(b, 0);
}

static float f32(const unsigned char *b, int big)
{
    uint32_t v = u32(b, big);
    float x;
    memcpy(&x, &v, 4);
    return x;
}

static double f64(const unsigned char *b, int big)
{
    uint64_t v = u64(b, big);
    double x;
    memcpy(&x, &v, 8);
    return x;
}

/* An rd for the open file f (at its start). */
static rd rd_open(FILE *f, const char *name)
{
    struct stat sb;
    int regular = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && ftello(f) == 0;
    return (rd){f, name, 0, 0, regular ? (int64_t)sb.st_size : -1};
}

/* The file ends (at r->off) inside the record of len bytes that starts at start. */
static int truncated(const rd *r, const char *block, uint64_t start, uint64_t len, fk_error *err)
{
    if (r->off == 0) return fk_fail(err, FK_EFORMAT, "%s: empty input (no Gadget header)", r->name);
    return fk_fail(err, FK_EFORMAT,
                   "%s: block %s: truncated: the file ends at byte %" PRIu64 ", inside the record of %" PRIu64
                   " bytes that starts at byte %" PRIu64,
                   r->name, block, r->off, len, start);
}

/* Reads exactly n bytes of the record of len bytes that starts at start
 * (block names it in messages). */
static int get(rd *r, void *buf, size_t n, const char *block, uint64_t start, uint64_t len, fk_error *err)
{
    size_t got = fread(buf, 1, n, r->f);
    r->off += got;
    if (got == n) return FK_OK;
    if (ferror(r->f)) return fk_fail(err, FK_EIO, "%s: block %s: read error: %s", r->name, block, strerror(errno));
    return truncated(r, block, start, len, err);
}

/* Opens a record: reads its leading marker into *len. Returns 1 at a clean
 * end of file (when eof_ok), FK_OK, or an error. */
static int rec_open(rd *r, const char *block, int eof_ok, uint32_t *len, uint64_t *start, fk_error *err)
{
    unsigned char b[4];
    *start = r->off;
    size_t got = fread(b, 1, 4, r->f);
    r->off += got;
    if (got == 0 && feof(r->f) && eof_ok) return 1;
    if (got != 4) {
        if (ferror(r->f)) return fk_fail(err, FK_EIO, "%s: block %s: read error: %s", r->name, block, strerror(errno));
        if (r->off == 0) return fk_fail(err, FK_EFORMAT, "%s: empty input (no Gadget header)", r->name);
        return fk_fail(err, FK_EFORMAT, "%s: block %s: truncated: the file ends at byte %" PRIu64 " inside a record marker",
                       r->name, block, r->off);
    }
    *len = u32(b, r->big);
    return FK_OK;
}

/* Closes a record of len bytes opened at start: its trailing marker must say len. */
static int rec_close(rd *r, const char *block, uint32_t len, uint64_t start, fk_error *err)
{
    unsigned char b[4];
    int st = get(r, b, 4, block, start, len, err);
    if (st) return st;
    uint32_t end = u32(b, r->big);
    if (end != len)
        return fk_fail(err, FK_EFORMAT,
                       "%s: block %s: record markers disagree: %" PRIu32 " bytes at offset %" PRIu64 ", %" PRIu32
                       " at offset %" PRIu64,
                       r->name, block, len, start, end, r->off - 4);
    return FK_OK;
}

/* Moves forward to byte to of the file, inside the record of len bytes
 * that starts at start: a seek in a regular file (which must reach that
 * far), else the bytes read and dropped (a pipe cannot seek). */
static int advance(rd *r, uint64_t to, const char *block, uint64_t start, uint64_t len, fk_error *err)
{
    if (r->size >= 0) {
        if (to > (uint64_t)r->size) {
            r->off = (uint64_t)r->size;
            return truncated(r, block, start, len, err);
        }
        if (to != r->off && fseeko(r->f, (off_t)to, SEEK_SET))
            return fk_fail(err, FK_EIO, "%s: block %s: cannot seek: %s", r->name, block, strerror(errno));
        r->off = to;
        return FK_OK;
    }
    unsigned char tmp[65536];
    while (r->off < to) {
        size_t k = to - r->off < sizeof tmp ? (size_t)(to - r->off) : sizeof tmp;
        int st = get(r, tmp, k, block, start, len, err);
        if (st) return st;
    }
    return FK_OK;
}

static void decode_header(const unsigned char *b, int big, g2hdr *h)
{
    for (int t = 0; t < 6; t++) {
        h->npart[t] = u32(b + 4 * t, big);
        h->mass[t] = f64(b + 24 + 8 * t, big);
        h->nall[t] = u32(b + 96 + 4 * t, big);
        h->nallhw[t] = u32(b + 168 + 4 * t, big);
    }
    h->time = f64(b + 72, big);
    h->redshift = f64(b + 80, big);
    h->num_files = (int32_t)u32(b + 124, big);
    h->box = f64(b + 128, big);
    h->omega0 = f64(b + 136, big);
    h->omega_lambda = f64(b + 144, big);
    h->hubble = f64(b + 152, big);
}

/* The header of the whole snapshot from file 0's. */
static void snapshot_header(const g2hdr *g, fk_gsnap_header *h)
{
    memset(h, 0, sizeof *h);
    h->ntypes = 6;
    int nall_zero = 1;
    for (int t = 0; t < 6; t++) {
        h->ntotal[t] = (uint64_t)g->nallhw[t] << 32 | g->nall[t];
        h->masstab[t] = g->mass[t];
        if (h->ntotal[t]) nall_zero = 0;
    }
    h->nfiles = g->num_files > 1 ? g->num_files : 1;
    /* old initial conditions leave npartTotal 0 in a single file */
    if (nall_zero && h->nfiles == 1)
        for (int t = 0; t < 6; t++) h->ntotal[t] = g->npart[t];
    h->time = g->time;
    h->redshift = g->redshift;
    h->box = g->box;
    h->periodic = -1;
    if (g->hubble > 0) {
        h->have_cosmology = 1;
        h->hubble = g->hubble;
        h->omega0 = g->omega0;
        h->omega_lambda = g->omega_lambda;
    }
    /* The header carries no units: Gadget's defaults (its parameter file's
     * UnitLength_in_cm 3.085678e21, UnitMass_in_g 1.989e43,
     * UnitVelocity_in_cm_per_s 1e5: kpc/h, 1e10 Msun/h, km/s). */
    h->have_units = 1;
    h->units_per_h = 1;
    h->unit_length_cm = 3.085678e21;
    h->unit_mass_g = 1.989e43;
    h->unit_velocity_cm_s = 1e5;
    /* Nor ComovingIntegrationOn: a cosmological run is one whose header has
     * HubbleParam > 0, Omega0 > 0, 0 < Time <= 1 and the Redshift 1/Time - 1
     * that Gadget-2 writes only then (io.c: "if(All.ComovingIntegrationOn)
     * header.redshift = 1.0 / All.Time - 1; else header.redshift = 0"). Its
     * velocities are Gadget's v_pec / sqrt(a). */
    h->vel_a_scaling = 0.5;
    h->comoving = fk_gadget_looks_comoving(g->hubble, g->omega0, g->time, g->redshift);
}

int fk_gadget_looks_comoving(double hubble, double omega0, double time, double redshift)
{
    if (!(hubble > 0 && omega0 > 0 && time > 0 && time <= 1 && isfinite(redshift))) return 0;
    const double z = 1 / time - 1;
    /* written in double from the same Time: equal to rounding */
    return fabs(redshift - z) <= 1e-6 * (1 + z);
}

/* Decodes c values of a block (rec bytes each, big-endian or not) from buf
 * into particles at, at + 1, ... of s: ncomp floats or doubles (wide) each
 * into dst, or with ids one integer (4 or 8 bytes) each into s->pid. */
static void decode(const unsigned char *buf, uint64_t c, uint64_t rec, int big, int wide, int ncomp, int ids,
                   fk_gsnap *s, float *dst, uint64_t at)
{
    const uint64_t w = wide ? 8 : 4;
    for (uint64_t i = 0; i < c; i++) {
        const unsigned char *p = buf + i * rec;
        if (ids) {
            s->pid[at + i] = wide ? u64(p, big) : u32(p, big);
            continue;
        }
        for (int k = 0; k < ncomp; k++, p += w) dst[(at + i) * ncomp + k] = wide ? (float)f64(p, big) : f32(p, big);
    }
}

/* The m 4-byte values at b, in the file's byte order (big-endian or not),
 * put in this machine's by u32 where the orders differ. */
static void to_native(unsigned char *b, uint64_t m, int big)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (!big) return;
#else
    if (big) return;
#endif
    for (uint64_t i = 0; i < m; i++) {
        const uint32_t v = u32(b + 4 * i, big);
        memcpy(b + 4 * i, &v, 4);
    }
}

/* Reads m values (rec bytes each) from byte r->off of a regular file that
 * holds them on every core, each thread reading pieces of its own with
 * pread and decoding them into particles at, at + 1, ...; then moves the
 * file to their end. Floats (not ids, not doubles) are read straight into
 * place, put in this machine's byte order there (to_native); the rest
 * through bufs[thread] (PIECE values of 3 doubles, allocated when NULL). */
static int read_span(rd *r, const char *block, uint64_t start, uint64_t len, uint64_t m, uint64_t rec, int wide,
                     int ncomp, int ids, fk_gsnap *s, float *dst, uint64_t at, unsigned char **bufs, fk_error *err)
{
    const int fd = fileno(r->f), big = r->big, direct = !wide && !ids;
    const uint64_t from = r->off, pieces = (m + PIECE - 1) / PIECE;
    uint64_t failed = UINT64_MAX, reached = 0; /* the first piece that failed, and how far it read */
    int nomem = 0, e = 0;
#pragma omp parallel
    {
        unsigned char **mine = &bufs[omp_get_thread_num()];
        if (!*mine && !direct) *mine = malloc(PIECE * 3 * 8);
        unsigned char *buf = *mine;
        if (!buf && !direct) __atomic_store_n(&nomem, 1, __ATOMIC_RELAXED);
#pragma omp for schedule(dynamic, 1)
        for (uint64_t j = 0; j < pieces; j++) {
            const uint64_t c = m - j * PIECE < PIECE ? m - j * PIECE : PIECE, off = from + j * PIECE * rec;
            if ((!buf && !direct) || j > __atomic_load_n(&failed, __ATOMIC_RELAXED)) continue;
            float *to = direct ? dst + (at + j * PIECE) * (uint64_t)ncomp : NULL;
            int64_t got = fk_pread(fd, direct ? (void *)to : buf, c * rec, off);
            if (got == (int64_t)(c * rec)) {
                if (!direct)
                    decode(buf, c, rec, big, wide, ncomp, ids, s, dst, at + j * PIECE);
                else
                    to_native((unsigned char *)to, c * (uint64_t)ncomp, big);
                continue;
            }
#pragma omp critical(fk_gadget_fail)
            if (j < failed) {
                failed = j;
                e = got < 0 ? errno : 0;
                reached = off + (got > 0 ? (uint64_t)got : 0);
            }
        }
    }
    if (nomem) return fk_fail(err, FK_ENOMEM, "%s: out of memory", r->name);
    if (failed != UINT64_MAX && e) return fk_fail(err, FK_EIO, "%s: block %s: read error: %s", r->name, block, strerror(e));
    if (failed != UINT64_MAX) {
        r->off = reached;
        return truncated(r, block, start, len, err);
    }
    r->off = from + m * rec;
    if (fseeko(r->f, (off_t)r->off, SEEK_SET))
        return fk_fail(err, FK_EIO, "%s: block %s: cannot seek: %s", r->name, block, strerror(errno));
    return FK_OK;
}

/* The arrays a block fills. */
enum { B_POS, B_VEL, B_MASS, B_ID };

static float *block_array(fk_gsnap *s, int which)
{
    return which == B_POS ? s->pos : which == B_VEL ? s->vel : which == B_MASS ? s->mass : NULL;
}

/* Reads what s holds of a block of per-particle values, its payload (len
 * bytes of the record that starts at start) beginning at r->off: ncomp
 * floats or doubles (wide) each, or for B_ID one integer (4 or 8 bytes)
 * each into s->pid, for the file's particles of every type in order (for
 * B_MASS, of the types of mass 0). Only the held particles' bytes are read:
 * from a regular file on every core (read_span), else through bufs[0],
 * PIECE particles at a time, s's arrays grown as they arrive; ends at the
 * payload's end. */
static int read_block(rd *r, const char *block, uint32_t len, uint64_t start, fk_gsnap *s, const g2hdr *g,
                      const uint64_t *seen, int wide, int ncomp, int which, unsigned char **bufs, fk_error *err)
{
    const int mass_only = which == B_MASS, ids = which == B_ID;
    const uint64_t body = r->off, w = wide ? 8 : 4, rec = w * (uint64_t)ncomp;
    const int big = r->big;
    uint64_t at = 0;
    int st = FK_OK;
    for (int t = 0; t < 6 && !st; t++) {
        if (mass_only && g->mass[t] != 0) continue;
        uint64_t skip, m = fk_gsnap_part(s, t, seen[t], g->npart[t], &skip);
        if (m && !(st = advance(r, body + (at + skip) * rec, block, start, len, err))) {
            const uint64_t slot = fk_gsnap_slot(s, t, seen[t] + skip);
            if (r->size >= 0 && r->off + m * rec <= (uint64_t)r->size) {
                /* the file holds them: their arrays are vouched for */
                if (!(st = fk_gsnap_reserve(s, slot + m, r->name, err)))
                    st = read_span(r, block, start, len, m, rec, wide, ncomp, ids, s, block_array(s, which), slot,
                                   bufs, err);
            } else {
                /* a pipe: the arrays grow as the particles arrive */
                for (uint64_t j = 0; j < m && !st; j += PIECE) {
                    const uint64_t c = m - j < PIECE ? m - j : PIECE;
                    if (!(st = get(r, bufs[0], c * rec, block, start, len, err)) &&
                        !(st = fk_gsnap_reserve(s, slot + j + c, r->name, err)))
                        decode(bufs[0], c, rec, big, wide, ncomp, ids, s, block_array(s, which), slot + j);
                }
            }
        }
        at += g->npart[t];
    }
    return st ? st : advance(r, body + len, block, start, len, err);
}

/* The bytes a file of format 1 or 2 must hold at least when its header g
 * is true: the header, and the records of POS, VEL and ID (4-byte values),
 * and of MASS when a type present has mass 0. */
static uint64_t least_bytes(const g2hdr *g, int format)
{
    const uint64_t rec = format == 2 ? 16 + 8 : 8; /* a record's markers, and its label record */
    uint64_t n = 0, nvar = 0;
    for (int t = 0; t < 6; t++) {
        n += g->npart[t];
        if (g->mass[t] == 0) nvar += g->npart[t];
    }
    return rec + 256 + (n ? 3 * rec + 28 * n : 0) + (nvar ? rec + 4 * nvar : 0);
}

/* A regular file must hold what its header claims before anything is
 * allocated for it (a pipe's size is unknown: its particles are counted as
 * they arrive). */
static int claims_fit(const rd *r, const g2hdr *g, int format, fk_error *err)
{
    const uint64_t need = least_bytes(g, format);
    if (r->size < 0 || (uint64_t)r->size >= need) return FK_OK;
    uint64_t n = 0;
    for (int t = 0; t < 6; t++) n += g->npart[t];
    return fk_fail(err, FK_EFORMAT,
                   "%s: the header claims %" PRIu64 " particles in this file, which needs at least %" PRIu64
                   " bytes; the file holds %" PRId64 " (truncated, or not a Gadget-2 snapshot)",
                   r->name, n, need, r->size);
}

/* A format 2 label as text for messages: its 4 characters without the
 * trailing blanks, '?' for any that is not printable ASCII (one line). */
static void label_text(const unsigned char *lab, char *name, size_t size)
{
    char shown[5];
    int e = 4;
    while (e > 0 && (lab[e - 1] == ' ' || lab[e - 1] == '\0')) e--;
    for (int i = 0; i < e; i++) shown[i] = lab[i] < 33 || lab[i] > 126 ? '?' : (char)lab[i];
    shown[e] = '\0';
    snprintf(name, size, "%s", shown);
}

/* Reads the header record of the file r (after finding its byte order and,
 * in format 2, the HEAD label) into *g; *format gets 1 or 2. */
static int read_head(rd *r, g2hdr *g, int *format, fk_error *err)
{
    unsigned char m[4];
    int st = get(r, m, 4, "HEAD", 0, 256, err);
    if (st) return st;
    int big;
    if (u32(m, 0) == 256 || u32(m, 0) == 8)
        big = 0;
    else if (u32(m, 1) == 256 || u32(m, 1) == 8)
        big = 1;
    else {
        /* say what it is, when its first bytes tell */
        unsigned char head[FK_SNIFF_BYTES];
        memcpy(head, m, 4);
        const int k = fk_sniff(head, 4 + fread(head + 4, 1, sizeof head - 4, r->f));
        if (k != FK_FILE_UNKNOWN)
            return fk_fail(err, FK_EFORMAT, "%s: not a Gadget-2 snapshot but %s (%s)", r->name, fk_sniff_what(k),
                           fk_sniff_advice(k));
        return fk_fail(err, FK_EFORMAT,
                       "%s: not a Gadget-2 snapshot (the first record marker is neither 256 nor 8 in either byte order)",
                       r->name);
    }
    r->big = big;
    *format = u32(m, big) == 8 ? 2 : 1;
    uint32_t len = u32(m, big);
    uint64_t start = 0;
    unsigned char lab[8];
    if (*format == 2) {
        if ((st = get(r, lab, 8, "HEAD", start, len, err)) || (st = rec_close(r, "HEAD", len, start, err))) return st;
        if (memcmp(lab, "HEAD", 4)) {
            char name[8];
            label_text(lab, name, sizeof name);
            return fk_fail(err, FK_EFORMAT, "%s: format 2 snapshot whose first block is '%s', not HEAD", r->name, name);
        }
        if ((st = rec_open(r, "HEAD", 0, &len, &start, err))) return st;
    }
    if (len != 256)
        return fk_fail(err, FK_EFORMAT, "%s: block HEAD: the header record holds %" PRIu32 " bytes, not 256", r->name, len);
    unsigned char hb[256];
    if ((st = get(r, hb, 256, "HEAD", start, len, err)) || (st = rec_close(r, "HEAD", len, start, err))) return st;
    decode_header(hb, big, g);
    return FK_OK;
}

/* The name of file k of a snapshot whose first file is path (ending in
 * ".0"); 0 when path does not name a first file. */
static int file_name(const char *path, int k, char *buf, size_t size)
{
    size_t n = strlen(path);
    if (!strcmp(path, "-") || n < 2 || strcmp(path + n - 2, ".0")) return 0;
    snprintf(buf, size, "%.*s.%d", (int)(n - 2), path, k);
    return 1;
}

/* Whether s holds particles of a file whose particles of each type t are
 * numbers [before[t], before[t] + npart[t]) of their type. */
static int touched(const fk_gsnap *s, const uint64_t *before, const uint32_t *npart)
{
    uint64_t skip, held = 0;
    for (int t = 0; t < 6; t++) held += fk_gsnap_part(s, t, before[t], npart[t], &skip);
    return held > 0;
}

/* The particles of each type over the files [k0, k1), from the headers
 * alone, so that the header's totals are checked, and the size of each file
 * whose particles s holds, before anything is allocated. r0 is file k0, read
 * up to the end of its header g0 (format); first[t] counts the particles of
 * type t in the files before k0. *vouched is cleared when such a file is
 * not regular (its size unknown). */
static int count_files(const char *path, const rd *r0, const g2hdr *g0, int format, const fk_gsnap *s, int k0, int k1,
                       const uint64_t *first, uint64_t *sum, int *vouched, fk_error *err)
{
    uint64_t before[6];
    for (int t = 0; t < 6; t++) before[t] = first[t];
    int st = FK_OK;
    if (touched(s, before, g0->npart)) {
        if ((st = claims_fit(r0, g0, format, err))) return st;
        if (r0->size < 0) *vouched = 0;
    }
    for (int t = 0; t < 6; t++) sum[t] = g0->npart[t], before[t] += g0->npart[t];
    size_t size = strlen(path) + 16;
    char *name = malloc(size);
    if (!name) return fk_fail(err, FK_ENOMEM, "out of memory");
    for (int k = k0 + 1; k < k1 && !st; k++) {
        if (!file_name(path, k, name, size)) {
            st = fk_fail(err, FK_EINVAL, "%s: the snapshot is split over %d files (num_files): name its first file, NAME.0",
                         r0->name, s->hdr.nfiles);
            break;
        }
        FILE *f;
        if ((st = fk_input_open(&f, name, 0, 1, err))) break;
        rd r = rd_open(f, name);
        g2hdr g;
        int fmt;
        st = read_head(&r, &g, &fmt, err);
        if (!st && touched(s, before, g.npart)) {
            st = claims_fit(&r, &g, fmt, err);
            if (r.size < 0) *vouched = 0;
        }
        fk_input_close(f);
        for (int t = 0; t < 6 && !st; t++) sum[t] += g.npart[t], before[t] += g.npart[t];
    }
    free(name);
    return st;
}

/* Reads every block of the file r after its header g (format 1 or 2): what
 * s holds of POS, VEL, ID and MASS (nfile particles, nvar of them with
 * masses in the MASS block), every other block skipped, every record
 * marker checked. buf holds PIECE particles of 3 doubles. */
static int read_blocks(rd *r, int format, fk_gsnap *s, const g2hdr *g, const uint64_t *seen, uint64_t nfile,
                       uint64_t nvar, unsigned char **bufs, fk_gadget_info *info, fk_error *err)
{
    int st;
    uint32_t len;
    uint64_t start;
    unsigned char lab[8];
    int got_pos = 0, got_vel = 0, got_id = 0, got_mass = 0;
    for (int b = 1;; b++) {
        char name[16];
        if (format == 2) {
            st = rec_open(r, "label", 1, &len, &start, err);
            if (st == 1) break;
            if (st) return st;
            if (len != 8)
                return fk_fail(err, FK_EFORMAT,
                               "%s: block label record at offset %" PRIu64 " holds %" PRIu32 " bytes, not 8 (not format 2?)",
                               r->name, start, len);
            if ((st = get(r, lab, 8, "label", start, len, err)) || (st = rec_close(r, "label", len, start, err)))
                return st;
            label_text(lab, name, sizeof name);
            if ((st = rec_open(r, name, 0, &len, &start, err))) return st;
        } else {
            st = rec_open(r, "after the last", 1, &len, &start, err);
            if (st == 1) break;
            if (st) return st;
            static const char *order[4] = {"POS", "VEL", "ID", "MASS"};
            if (b <= 3 || (b == 4 && nvar))
                snprintf(name, sizeof name, "%s", order[b - 1]);
            else
                snprintf(name, sizeof name, "%d", b + 1); /* the header is block 1 */
        }
        int is_pos = !strcmp(name, "POS"), is_vel = !strcmp(name, "VEL"), is_id = !strcmp(name, "ID"),
            is_mass = !strcmp(name, "MASS") && nvar;
        if (!is_pos && !is_vel && !is_id && !is_mass) {
            if ((st = advance(r, r->off + len, name, start, len, err)) || (st = rec_close(r, name, len, start, err)))
                return st;
            continue;
        }
        uint64_t count = is_mass ? nvar : nfile, ncomp = is_pos || is_vel ? 3 : 1;
        int wide;
        if (len == count * ncomp * 4)
            wide = 0;
        else if (len == count * ncomp * 8)
            wide = 1;
        else
            return fk_fail(err, FK_EFORMAT,
                           "%s: block %s at offset %" PRIu64 " holds %" PRIu32 " bytes for %" PRIu64
                           " particles (neither 4- nor 8-byte values)",
                           r->name, name, start, len, count);
        const int which = is_pos ? B_POS : is_vel ? B_VEL : is_mass ? B_MASS : B_ID;
        if ((st = read_block(r, name, len, start, s, g, seen, wide, (int)ncomp, which, bufs, err)) ||
            (st = rec_close(r, name, len, start, err)))
            return st;
        got_pos |= is_pos, got_vel |= is_vel, got_mass |= is_mass, got_id |= is_id;
        if (is_pos) s->wide_pos |= wide;
        if (is_id && info) info->id_bytes = wide ? 8 : 4;
    }
    const char *missing = !got_pos ? "POS" : !got_vel ? "VEL" : !got_id ? "ID" : nvar && !got_mass ? "MASS" : NULL;
    if (missing && nfile)
        return fk_fail(err, FK_EFORMAT, "%s: missing block %s%s", r->name, missing,
                       !strcmp(missing, "MASS") ? " (the header's mass table is 0 for a type present)" : "");
    return FK_OK;
}

/* Reads file k: header, then every block. The first file read (file 0, or
 * o->file_lo with whole files) starts s and leaves its header in *file0; the
 * others are checked against it. path is the name given (to find the other
 * files). With o->headers_only, the first file's header and the others'
 * counts (s->nfile) are all that is read. */
static int read_file(rd *r, int k, const char *path, const fk_gsnap_opts *o, fk_gsnap *s, g2hdr *file0, uint64_t *seen,
                     fk_gadget_info *info, fk_error *err)
{
    int format, st;
    g2hdr g;
    if ((st = read_head(r, &g, &format, err))) return st;
    const int big = r->big;

    const int whole = o->file_hi > 0;
    if (k == (whole ? o->file_lo : 0)) {
        *file0 = g;
        fk_gsnap_header h;
        snapshot_header(&g, &h);
        if ((st = fk_gsnap_begin(s, &h, o, r->name, err))) return st;
        uint64_t sum[6];
        int vouched = 1;
        if ((st = count_files(path, r, &g, format, s, k, whole ? o->file_hi : h.nfiles, seen, sum, &vouched, err)))
            return st;
        if (o->headers_only) {
            for (int t = 0; t < 6; t++) s->nfile[t] = sum[t];
            return FK_OK;
        }
        for (int t = 0; t < 6; t++)
            if (sum[t] != (whole ? o->file_count[t] : h.ntotal[t]))
                return fk_fail(err, FK_EFORMAT,
                               "%s: inconsistent counts: the files hold %" PRIu64 " particles of type %d, the header's "
                               "total says %" PRIu64,
                               r->name, sum[t], t, whole ? o->file_count[t] : h.ntotal[t]);
        /* counts read from a pipe are believed as the particles arrive */
        if ((st = fk_gsnap_reserve(s, vouched ? s->n : PIECE, r->name, err))) return st;
        if (info) info->format = format, info->big_endian = big;
    } else {
        for (int t = 0; t < 6; t++)
            if (g.nall[t] != file0->nall[t] || g.nallhw[t] != file0->nallhw[t] || g.mass[t] != file0->mass[t])
                return fk_fail(err, FK_EFORMAT,
                               "%s: inconsistent counts: header of file %d disagrees with file 0's on type %d "
                               "(total %" PRIu32 " vs %" PRIu32 ", mass %g vs %g)",
                               r->name, k, t, g.nall[t], file0->nall[t], g.mass[t], file0->mass[t]);
    }
    uint64_t nfile = 0, nvar = 0;
    for (int t = 0; t < 6; t++) {
        if (seen[t] + g.npart[t] > s->hdr.ntotal[t])
            return fk_fail(err, FK_EFORMAT,
                           "%s: inconsistent counts: %" PRIu64 " particles of type %d up to this file, more than the "
                           "header's total %" PRIu64,
                           r->name, seen[t] + g.npart[t], t, s->hdr.ntotal[t]);
        nfile += g.npart[t];
        if (g.mass[t] == 0) nvar += g.npart[t];
    }
    /* a slice that holds none of this file's particles reads nothing more of it */
    uint64_t held = 0, skip;
    for (int t = 0; t < 6; t++) held += fk_gsnap_part(s, t, seen[t], g.npart[t], &skip);
    if (o->nslices && !held) {
        for (int t = 0; t < 6; t++) seen[t] += g.npart[t];
        s->bytes += r->off;
        if (info) info->bytes += r->off;
        return FK_OK;
    }
    /* a buffer of PIECE values a thread, bufs[0] now, the others when used */
    const int nt = omp_get_max_threads();
    unsigned char **bufs = calloc((size_t)nt, sizeof *bufs);
    if (bufs) bufs[0] = malloc(PIECE * 3 * 8);
    if (!bufs || !bufs[0]) {
        free(bufs);
        return fk_fail(err, FK_ENOMEM, "%s: out of memory", r->name);
    }
    st = read_blocks(r, format, s, &g, seen, nfile, nvar, bufs, info, err);
    for (int t = 0; t < nt; t++) free(bufs[t]);
    free(bufs);
    if (st) return st;

    for (int t = 0; t < 6; t++) {
        uint64_t m = fk_gsnap_part(s, t, seen[t], g.npart[t], &skip);
        if (m && g.mass[t] != 0) {
            uint64_t slot = fk_gsnap_slot(s, t, seen[t] + skip);
#pragma omp parallel for schedule(static)
            for (uint64_t j = 0; j < m; j++) s->mass[slot + j] = (float)g.mass[t];
        }
        seen[t] += g.npart[t];
    }
    s->bytes += r->off;
    if (info) info->bytes += r->off, info->double_pos |= s->wide_pos;
    return FK_OK;
}

int fk_gadget_read(const char *path, const fk_gsnap_opts *o, fk_gsnap *s, fk_gadget_info *info, fk_error *err)
{
    memset(s, 0, sizeof *s);
    if (info) memset(info, 0, sizeof *info);
    const int use_stdin = !strcmp(path, "-");
    const char *name0 = use_stdin ? "stdin" : path;
    /* whole files: only [file_lo, file_hi), their particles numbered from file_first on */
    const int whole = o->file_hi > 0, k0 = whole ? o->file_lo : 0;
    uint64_t seen[6] = {0}, want[6];
    for (int t = 0; t < 6; t++) seen[t] = whole ? o->file_first[t] : 0;
    g2hdr h0 = {0};
    size_t plen = strlen(path);
    char *name = malloc(plen + 16);
    if (!name) return fk_fail(err, FK_ENOMEM, "out of memory");
    int st = FK_OK;
    if (whole && (k0 < 0 || o->file_hi <= k0 || (use_stdin && o->file_hi > 1)))
        st = fk_fail(err, FK_EINVAL, "%s: files %d to %d do not exist", name0, k0, o->file_hi - 1);
    for (int k = k0; st == FK_OK && (k == k0 || k < (whole ? o->file_hi : s->hdr.nfiles)); k++) {
        if (k == 0) {
            snprintf(name, plen + 16, "%s", name0);
        } else if (!file_name(path, k, name, plen + 16)) {
            /* count_files made sure that path names a first file, unless file k is the first read */
            st = fk_fail(err, FK_EINVAL, "%s: the snapshot is split over files: name its first file, NAME.0", path);
            break;
        }
        FILE *f = stdin; /* "-": the program opened it */
        if (!use_stdin && (st = fk_input_open(&f, name, 0, 1, err))) break;
        rd r = rd_open(f, name);
        st = read_file(&r, k, path, o, s, &h0, seen, info, err);
        fk_input_close(f);
        if (o->headers_only) break;
    }
    if (o->headers_only) {
        free(name);
        return st;
    }
    for (int t = 0; t < 6; t++) want[t] = whole ? o->file_first[t] + o->file_count[t] : s->hdr.ntotal[t];
    for (int t = 0; st == FK_OK && t < 6; t++)
        if (seen[t] != want[t])
            st = fk_fail(err, FK_EFORMAT,
                         "%s: inconsistent counts: the files hold %" PRIu64 " particles of type %d, the header's total "
                         "says %" PRIu64,
                         name0, seen[t] - (whole ? o->file_first[t] : 0), t, want[t] - (whole ? o->file_first[t] : 0));
    free(name);
    if (st == FK_OK) st = fk_gsnap_finish(s, name0, err);
    return st;
}
