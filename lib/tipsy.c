/* tipsy.c - reading tipsy snapshots into arrays (a plain file on every core, each thread reading its own blocks; gzip and pipes block by block) and writing them. */
#include "tipsy.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bigmem.h"
#include "fdio.h"
#include "fileio.h"
#include "sniff.h"
#include "snap.h"
#include "snapunits.h"

const unsigned fk_tipsy_recsize[3] = {48, 36, 44};

static const char *type_name[3] = {"gas", "dark", "star"};

/* Particles converted per block: large enough that a read is a few MB (one
 * system call, one parallel loop), small enough to stay in cache-sized
 * pieces per thread. */
#define BLOCK (1u << 16)

/* Largest single gzread (its length is an unsigned int). */
#define GZ_CHUNK (1u << 30)

void fk_tipsy_opts_default(fk_tipsy_opts *o)
{
    o->format = FK_TIPSY_AUTO;
    o->types = 0;
    o->periodic = 1;
    o->box = 1.0;
    o->origin = -0.5;
    o->slice = o->nslices = 0;
}

const char *fk_tipsy_format_name(int format)
{
    switch (format) {
    case FK_TIPSY_STANDARD: return "standard";
    case FK_TIPSY_NATIVE: return "native";
    }
    return "auto";
}

void fk_tipsy_snap_free(fk_tipsy_snap *s)
{
    free(s->pos);
    free(s->vel);
    free(s->mass);
    free(s->type);
    free(s->id);
    memset(s, 0, sizeof *s);
}

/* ---- byte order ---------------------------------------------------------- */

static inline uint32_t get32(const unsigned char *p, int format)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return format == FK_TIPSY_STANDARD ? __builtin_bswap32(v) : v;
#else
    return format == FK_TIPSY_STANDARD ? v : __builtin_bswap32(v);
#endif
}

static void put32(unsigned char *p, uint32_t v, int format)
{
    for (int i = 0; i < 4; i++) p[format == FK_TIPSY_STANDARD ? 3 - i : i] = (unsigned char)(v >> (8 * i));
}

static inline float getf(const unsigned char *p, int format)
{
    uint32_t u = get32(p, format);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void putf(unsigned char *p, float f, int format)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put32(p, u, format);
}

static double getd(const unsigned char *p, int format)
{
    uint64_t hi = get32(p, format), lo = get32(p + 4, format);
    uint64_t u = format == FK_TIPSY_STANDARD ? hi << 32 | lo : lo << 32 | hi;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static void putd(unsigned char *p, double d, int format)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    int be = format == FK_TIPSY_STANDARD;
    put32(p + (be ? 0 : 4), (uint32_t)(u >> 32), format);
    put32(p + (be ? 4 : 0), (uint32_t)u, format);
}

/* ---- input: plain or gzip through zlib's gz* functions --------------------- */

/* gzread passes plain data through unchanged (and reads large requests
 * straight into the caller's buffer), so one path serves both. carry holds
 * bytes read ahead with the header that turned out to be particle data (the
 * 28-byte native header). */
typedef struct source {
    gzFile gz;
    const char *name;
    unsigned char carry[4];
    size_t ncarry;
    int cut; /* the gzip data ended before the end of its stream */
} source;

/* zlib's message without the "<fd:N>: " that names the descriptor. */
static const char *gz_message(gzFile gz, int *zerr)
{
    const char *msg = gzerror(gz, zerr);
    const char *colon = strncmp(msg, "<fd:", 4) == 0 ? strstr(msg, ">: ") : NULL;
    return colon ? colon + 3 : msg;
}

/* Reads up to len bytes; *got tells how many (fewer only at the end of the
 * input). Errors: corrupt gzip data, a read error. A gzip stream cut short
 * is not an error here (*got says how far it went): the caller reports it
 * as a truncated snapshot. */
static int source_read(source *src, void *buf, size_t len, size_t *got, fk_error *err)
{
    unsigned char *p = buf;
    size_t done = 0;
    *got = 0;
    while (src->ncarry && done < len) {
        p[done++] = src->carry[0];
        memmove(src->carry, src->carry + 1, --src->ncarry);
    }
    while (done < len) {
        size_t want = len - done < GZ_CHUNK ? len - done : GZ_CHUNK;
        int k = gzread(src->gz, p + done, (unsigned)want);
        if (k < 0) {
            int zerr;
            const char *msg = gz_message(src->gz, &zerr);
            if (zerr == Z_ERRNO) return fk_fail(err, FK_EIO, "%s: read error: %s", src->name, strerror(errno));
            if (zerr == Z_MEM_ERROR) return fk_fail(err, FK_ENOMEM, "%s: out of memory in zlib", src->name);
            return fk_fail(err, FK_EFORMAT, "%s: corrupt gzip data (%s)", src->name, msg);
        }
        if (k == 0) {
            int zerr;
            const char *msg = gz_message(src->gz, &zerr);
            if (zerr != Z_OK && zerr != Z_BUF_ERROR) /* Z_BUF_ERROR: compressed data cut short */
                return fk_fail(err, FK_EFORMAT, "%s: corrupt gzip data (%s)", src->name, msg);
            src->cut = zerr == Z_BUF_ERROR;
            break;
        }
        done += (size_t)k;
    }
    *got = done;
    return FK_OK;
}

/* Skips len bytes forward (gzseek: a seek in a plain file, decompressing or
 * reading in a gzip file or a pipe). An input that ends first is reported
 * by the next read. */
static int source_skip(source *src, uint64_t len, fk_error *err)
{
    while (src->ncarry && len) {
        memmove(src->carry, src->carry + 1, --src->ncarry);
        len--;
    }
    if (!len || gzseek(src->gz, (z_off_t)len, SEEK_CUR) >= 0) return FK_OK;
    int zerr;
    const char *msg = gz_message(src->gz, &zerr);
    if (zerr != Z_OK && zerr != Z_BUF_ERROR) {
        if (zerr == Z_ERRNO) return fk_fail(err, FK_EIO, "%s: read error: %s", src->name, strerror(errno));
        return fk_fail(err, FK_EFORMAT, "%s: corrupt gzip data (%s)", src->name, msg);
    }
    /* a pipe of plain data cannot seek: read and drop */
    unsigned char *buf = malloc(1u << 20);
    if (!buf) return fk_fail(err, FK_ENOMEM, "%s: out of memory", src->name);
    int st = FK_OK;
    while (len && !st) {
        size_t want = len < (1u << 20) ? (size_t)len : (1u << 20), got;
        st = source_read(src, buf, want, &got, err);
        if (got < want) break; /* the next read reports the input's end */
        len -= got;
    }
    free(buf);
    return st;
}

/* The file indices [*a, *b) a slice reads (all of them without one). */
static void slice_range(const fk_tipsy_opts *o, uint64_t nbodies, uint64_t *a, uint64_t *b)
{
    *a = 0;
    *b = nbodies;
    if (o->nslices) {
        *a = nbodies * o->slice / o->nslices;
        *b = nbodies * (o->slice + 1) / o->nslices;
    }
}

/* ---- reading ----------------------------------------------------------- */

/* Decodes the header in buf (28 or more bytes) with the given format, or
 * with the one ndim says. */
static int decode_header(const unsigned char *buf, int format, fk_tipsy_header *h, const char *name, fk_error *err)
{
    if (format == FK_TIPSY_AUTO) {
        int32_t be = (int32_t)get32(buf + 12, FK_TIPSY_STANDARD), le = (int32_t)get32(buf + 12, FK_TIPSY_NATIVE);
        if (be == 3)
            format = FK_TIPSY_STANDARD;
        else if (le == 3)
            format = FK_TIPSY_NATIVE;
        else if (fk_sniff(buf, 32) != FK_FILE_UNKNOWN)
            return fk_fail(err, FK_EFORMAT, "%s: not a tipsy file but %s (%s)", name, fk_sniff_what(fk_sniff(buf, 32)),
                           fk_sniff_advice(fk_sniff(buf, 32)));
        else
            return fk_fail(err, FK_EFORMAT,
                           "%s: not a tipsy file: ndim reads %" PRId32 " (big-endian) or %" PRId32
                           " (little-endian), not 3",
                           name, be, le);
    }
    h->format = format;
    h->time = getd(buf, format);
    h->nbodies = get32(buf + 8, format);
    h->ndim = (int32_t)get32(buf + 12, format);
    for (int t = 0; t < 3; t++) h->ntype[t] = get32(buf + 16 + 4 * t, format);
    h->pad = (int32_t)get32(buf + 28, format);
    h->header_size = 32;
    uint64_t sum = (uint64_t)h->ntype[0] + h->ntype[1] + h->ntype[2];
    if (sum != h->nbodies)
        return fk_fail(err, FK_EFORMAT,
                       "%s: inconsistent %s tipsy header: nbodies %" PRIu32 " but nsph + ndark + nstar = %" PRIu64,
                       name, fk_tipsy_format_name(format), h->nbodies, sum);
    return FK_OK;
}

static uint64_t body_bytes(const fk_tipsy_header *h)
{
    uint64_t b = 0;
    for (int t = 0; t < 3; t++) b += (uint64_t)fk_tipsy_recsize[t] * h->ntype[t];
    return b;
}

/* Converts count records of type t from raw (file index of the first:
 * first) into the output arrays at out. Returns the file index of the
 * first bad particle (non-finite, or far outside the box), or UINT64_MAX. */
static inline __attribute__((always_inline)) uint64_t convert(const unsigned char *raw, uint64_t count, int t,
                                                              uint64_t first, const int format, const fk_tipsy_opts *o,
                                                              float lo, float hi, fk_tipsy_snap *s, uint64_t out,
                                                              uint64_t *nwrapped)
{
    const unsigned rec = fk_tipsy_recsize[t];
    uint64_t bad = UINT64_MAX, wrapped = 0;
    #pragma omp parallel for schedule(static) reduction(min : bad) reduction(+ : wrapped) if (count > 4096 && !omp_in_parallel())
    for (uint64_t k = 0; k < count; k++) {
        const unsigned char *r = raw + k * rec;
        float m = getf(r, format), p[3], v[3];
        for (int d = 0; d < 3; d++) {
            p[d] = getf(r + 4 + 4 * d, format);
            v[d] = getf(r + 16 + 4 * d, format);
        }
        int ok = isfinite(m);
        for (int d = 0; d < 3; d++) ok &= isfinite(p[d]) && isfinite(v[d]);
        int moved = 0;
        for (int d = 0; d < 3 && ok && o->periodic; d++) {
            int w = fk_tipsy_wrap(&p[d], o->origin, o->box, lo, hi);
            if (w < 0) ok = 0;
            moved |= w;
        }
        if (!ok) {
            if (first + k < bad) bad = first + k;
            continue;
        }
        wrapped += (uint64_t)moved;
        uint64_t i = out + k;
        for (int d = 0; d < 3; d++) {
            s->pos[3 * i + d] = p[d];
            s->vel[3 * i + d] = v[d];
        }
        s->mass[i] = m;
        s->type[i] = (uint8_t)t;
        if (s->id_size == 8)
            ((uint64_t *)s->id)[i] = first + k;
        else
            ((uint32_t *)s->id)[i] = (uint32_t)(first + k);
    }
    *nwrapped += wrapped;
    return bad;
}

/* convert() with the byte order a constant, so that the swaps compile to
 * single instructions; *nwrapped counts the particles wrapped. On all cores
 * when called outside a parallel region. */
static uint64_t convert_block(const unsigned char *raw, uint64_t count, int t, uint64_t first, int format,
                              const fk_tipsy_opts *o, float lo, float hi, fk_tipsy_snap *s, uint64_t out,
                              uint64_t *nwrapped)
{
    if (format == FK_TIPSY_STANDARD)
        return convert(raw, count, t, first, FK_TIPSY_STANDARD, o, lo, hi, s, out, nwrapped);
    return convert(raw, count, t, first, FK_TIPSY_NATIVE, o, lo, hi, s, out, nwrapped);
}

/* The message for bad particle index (file index) whose record is at r. */
static int bad_particle(const unsigned char *r, uint64_t index, int t, int format, const fk_tipsy_opts *o,
                        const char *name, fk_error *err)
{
    float m = getf(r, format), p[3], v[3];
    for (int d = 0; d < 3; d++) {
        p[d] = getf(r + 4 + 4 * d, format);
        v[d] = getf(r + 16 + 4 * d, format);
    }
    if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
        return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " (%s) has a non-finite position (%g %g %g)", name,
                       index, type_name[t], p[0], p[1], p[2]);
    if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
        return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " (%s) has a non-finite velocity (%g %g %g)", name,
                       index, type_name[t], v[0], v[1], v[2]);
    if (!isfinite(m))
        return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " (%s) has a non-finite mass (%g)", name, index,
                       type_name[t], m);
    return fk_fail(err, FK_EFORMAT,
                   "%s: particle %" PRIu64 " (%s) at (%g %g %g) lies more than one box length outside [%g, %g)"
                   " (wrong --box? or --no-periodic for an isolated snapshot)",
                   name, index, type_name[t], p[0], p[1], p[2], o->origin, o->origin + o->box);
}

/* Size of what is left to read on fd if it is a plain regular file, else -1. */
static int64_t regular_size(int fd)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return -1;
    off_t at = lseek(fd, 0, SEEK_CUR);
    if (at < 0 || at > sb.st_size) return -1;
    return (int64_t)(sb.st_size - at);
}

/* Makes the arrays hold cap particles (at least 1), keeping their content;
 * new ones on huge pages where the kernel gives them, faulted in by the
 * threads that fill them. */
static int alloc_arrays(fk_tipsy_snap *s, uint64_t cap, const char *name, fk_error *err)
{
    uint64_t n = cap ? cap : 1;
    void **a[5] = {(void **)&s->pos, (void **)&s->vel, (void **)&s->mass, (void **)&s->type, &s->id};
    const uint64_t size[5] = {12, 12, 4, 1, s->id_size};
    for (int k = 0; k < 5; k++) {
        void *p = n > SIZE_MAX / size[k] ? NULL : *a[k] ? realloc(*a[k], n * size[k]) : fk_big_reserve(n * size[k]);
        if (!p) return fk_fail(err, FK_ENOMEM, "%s: out of memory for %" PRIu64 " particles", name, s->n);
        *a[k] = p;
    }
    return FK_OK;
}

/* Reads the particles, type by type, block by block, into arrays that hold
 * cap of them, grown (doubled) as particles come when the header's count
 * is not known to be true (compressed input, a pipe). */
static int read_particles(source *src, const fk_tipsy_opts *o, fk_tipsy_snap *s, uint64_t cap, const char *name,
                          fk_error *err)
{
    const fk_tipsy_header *h = &s->hdr;
    /* A block of the largest type's records, or all of them when fewer. */
    size_t rawsize = 1;
    for (int t = 0; t < 3; t++) {
        size_t k = (size_t)(h->ntype[t] < BLOCK ? h->ntype[t] : BLOCK) * fk_tipsy_recsize[t];
        if (k > rawsize) rawsize = k;
    }
    unsigned char *raw = malloc(rawsize);
    if (!raw) return fk_fail(err, FK_ENOMEM, "%s: out of memory", name);
    const float lo = (float)o->origin, hi = (float)(o->origin + o->box);
    uint64_t first = 0, out = 0, sa, sb, skip = 0;
    slice_range(o, h->nbodies, &sa, &sb);
    int st = FK_OK;
    for (int t = 0; t < 3 && !st; t++) {
        const unsigned rec = fk_tipsy_recsize[t];
        const int keep = (o->types >> t) & 1;
        /* this type's file indices [first, first + ntype) met with the slice */
        uint64_t end = first + h->ntype[t], a = sa < first ? first : sa > end ? end : sa,
                 b = sb < first ? first : sb > end ? end : sb;
        skip += (a - first) * rec;
        first = a;
        while (first < b && !st) {
            uint64_t count = b - first < BLOCK ? b - first : BLOCK;
            size_t got = 0;
            if (skip && (st = source_skip(src, skip, err))) break;
            skip = 0;
            if ((st = source_read(src, raw, count * rec, &got, err))) break;
            if (got < count * rec) {
                st = fk_fail(err, FK_EFORMAT,
                             "%s: truncated: the header promises %" PRIu32 " particles (%" PRIu32 " gas, %" PRIu32
                             " dark, %" PRIu32 " star), the input ends after %" PRIu64 " particles%s",
                             name, h->nbodies, h->ntype[0], h->ntype[1], h->ntype[2], first + got / rec,
                             src->cut ? " (gzip data cut short)" : "");
                break;
            }
            if (keep && out + count > cap) {
                cap = cap > s->n / 2 ? s->n : 2 * cap;
                if (cap < out + count) cap = out + count;
                if ((st = alloc_arrays(s, cap, name, err))) break;
            }
            if (keep) {
                uint64_t bad = convert_block(raw, count, t, first, h->format, o, lo, hi, s, out, &s->nwrapped);
                if (bad != UINT64_MAX) {
                    st = bad_particle(raw + (bad - first) * rec, bad, t, h->format, o, name, err);
                    break;
                }
                out += count;
            }
            first += count;
        }
        skip += (end - first) * rec;
        first = end;
    }
    free(raw);
    if (st || o->nslices) return st;
    unsigned char extra;
    size_t got;
    if ((st = source_read(src, &extra, 1, &got, err))) return st;
    if (got) return fk_fail(err, FK_EFORMAT, "%s: trailing data after the %" PRIu32 " particles the header promises",
                            name, h->nbodies);
    return FK_OK;
}

/* How far the first failing block of read_parallel got: a read error, the
 * input ending inside it, or a bad particle. */
enum { FAIL_READ = 1, FAIL_SHORT, FAIL_BAD };
typedef struct block_fail {
    int kind, errnum, type;
    uint64_t index;          /* FAIL_SHORT: particles before the end; FAIL_BAD: the particle */
    unsigned char rec[48];   /* FAIL_BAD: its record */
} block_fail;

/* read_particles for a plain regular file whose size was checked against
 * the header: every thread reads blocks of its own with pread (body: the
 * file offset of the first particle) and converts them straight into the
 * arrays (allocated for s->n). The blocks are read_particles', so the
 * failure reported is the one it reports: that of the first failing block
 * (a read error or the file ending inside it before its first bad
 * particle), whatever the threads' order. */
static int read_parallel(int fd, uint64_t body, const fk_tipsy_opts *o, fk_tipsy_snap *s, const char *name,
                         fk_error *err)
{
    const fk_tipsy_header *h = &s->hdr;
    uint64_t sa, sb, a[3], b[3], at[3], out[3], nblk[4] = {0}, first = 0, bytes = body, kept = 0;
    size_t rawsize = 1;
    slice_range(o, h->nbodies, &sa, &sb);
    /* each type's kept file indices [a, b), their bytes' offset, their first slot */
    for (int t = 0; t < 3; t++) {
        const unsigned rec = fk_tipsy_recsize[t];
        uint64_t end = first + h->ntype[t];
        a[t] = sa < first ? first : sa > end ? end : sa;
        b[t] = (o->types >> t) & 1 ? (sb < first ? first : sb > end ? end : sb) : a[t];
        at[t] = bytes + (a[t] - first) * rec;
        out[t] = kept;
        kept += b[t] - a[t];
        nblk[t + 1] = nblk[t] + (b[t] - a[t] + BLOCK - 1) / BLOCK;
        size_t k = (size_t)(b[t] - a[t] < BLOCK ? b[t] - a[t] : BLOCK) * rec;
        if (k > rawsize) rawsize = k;
        bytes += (uint64_t)h->ntype[t] * rec;
        first = end;
    }
    const float lo = (float)o->origin, hi = (float)(o->origin + o->box);
    uint64_t failed = UINT64_MAX, wrapped = 0; /* the first failing block */
    block_fail fail = {0};
    int nomem = 0;
    #pragma omp parallel reduction(+ : wrapped)
    {
        unsigned char *raw = malloc(rawsize);
        if (!raw) __atomic_store_n(&nomem, 1, __ATOMIC_RELAXED);
        #pragma omp for schedule(dynamic, 1)
        for (uint64_t j = 0; j < nblk[3]; j++) {
            if (!raw || j > __atomic_load_n(&failed, __ATOMIC_RELAXED)) continue;
            const int t = j < nblk[1] ? 0 : j < nblk[2] ? 1 : 2;
            const unsigned rec = fk_tipsy_recsize[t];
            const uint64_t k = (j - nblk[t]) * BLOCK, f = a[t] + k, count = b[t] - f < BLOCK ? b[t] - f : BLOCK;
            block_fail mine = {.type = t};
            int64_t got = fk_pread(fd, raw, count * rec, at[t] + k * rec);
            if (got < 0) {
                mine.kind = FAIL_READ;
                mine.errnum = errno;
            } else if ((uint64_t)got < count * rec) {
                mine.kind = FAIL_SHORT;
                mine.index = f + (uint64_t)got / rec;
            } else {
                mine.index = convert_block(raw, count, t, f, h->format, o, lo, hi, s, out[t] + k, &wrapped);
                if (mine.index == UINT64_MAX) continue;
                mine.kind = FAIL_BAD;
                memcpy(mine.rec, raw + (mine.index - f) * rec, rec);
            }
            #pragma omp critical(fk_tipsy_fail)
            if (j < failed) {
                fail = mine;
                __atomic_store_n(&failed, j, __ATOMIC_RELAXED);
            }
        }
        free(raw);
    }
    s->nwrapped = wrapped;
    if (nomem) return fk_fail(err, FK_ENOMEM, "%s: out of memory", name);
    if (fail.kind == FAIL_READ) return fk_fail(err, FK_EIO, "%s: read error: %s", name, strerror(fail.errnum));
    if (fail.kind == FAIL_SHORT)
        return fk_fail(err, FK_EFORMAT,
                       "%s: truncated: the header promises %" PRIu32 " particles (%" PRIu32 " gas, %" PRIu32
                       " dark, %" PRIu32 " star), the input ends after %" PRIu64 " particles",
                       name, h->nbodies, h->ntype[0], h->ntype[1], h->ntype[2], fail.index);
    if (fail.kind == FAIL_BAD) return bad_particle(fail.rec, fail.index, fail.type, h->format, o, name, err);
    if (o->nslices) return FK_OK;
    unsigned char extra;
    int64_t got = fk_pread(fd, &extra, 1, bytes);
    if (got < 0) return fk_fail(err, FK_EIO, "%s: read error: %s", name, strerror(errno));
    if (got) return fk_fail(err, FK_EFORMAT, "%s: trailing data after the %" PRIu32 " particles the header promises",
                            name, h->nbodies);
    return FK_OK;
}

int fk_tipsy_read(FILE *f, const char *name, const fk_tipsy_opts *o, fk_tipsy_snap *s, fk_error *err)
{
    memset(s, 0, sizeof *s);
    fk_tipsy_opts opt = *o;
    if (opt.types == 0) opt.types = 7;
    if (opt.format < FK_TIPSY_AUTO || opt.format > FK_TIPSY_NATIVE || (opt.types & ~7u) ||
        (opt.nslices && opt.slice >= opt.nslices))
        return fk_fail(err, FK_EINVAL, "%s: invalid tipsy reading options", name);
    if (opt.periodic && !fk_snap_box_ok(opt.origin, opt.box, 1))
        return fk_fail(err, FK_EINVAL, "%s: box %g with origin %g is not a valid periodic box", name, opt.box,
                       opt.origin);
    int fd = fileno(f);
    if (fd < 0) return fk_fail(err, FK_EINVAL, "%s: not a file with a descriptor", name);
    int64_t avail = regular_size(fd);
    const off_t base = avail >= 0 ? lseek(fd, 0, SEEK_CUR) : -1; /* where the snapshot starts */
    int fd2 = dup(fd);
    if (fd2 < 0) return fk_fail(err, FK_EIO, "%s: %s", name, strerror(errno));
    source src = {gzdopen(fd2, "rb"), name, {0}, 0, 0};
    if (!src.gz) {
        close(fd2);
        return fk_fail(err, FK_ENOMEM, "%s: out of memory", name);
    }
    /* zlib's buffers (this, and twice this for output) no larger than a
     * regular file: small snapshots allocate little. */
    gzbuffer(src.gz, avail >= 0 && avail < (1 << 20) ? (avail > 8192 ? (unsigned)avail : 8192u) : 1u << 20);

    unsigned char buf[32] = {0};
    size_t got = 0;
    int st = source_read(&src, buf, sizeof buf, &got, err);
    s->compressed = !gzdirect(src.gz);
    if (!st && got < 32 && src.cut)
        st = fk_fail(err, FK_EFORMAT, "%s: gzip data cut short inside the tipsy header", name);
    if (!st && got == 0) st = fk_fail(err, FK_EFORMAT, "%s: empty input (no tipsy header)", name);
    if (!st && got < 28)
        st = fk_fail(err, FK_EFORMAT, "%s: only %zu bytes, too short for a tipsy header (32 bytes)", name, got);
    if (!st) st = decode_header(buf, opt.format, &s->hdr, name, err);
    if (st) goto done;

    fk_tipsy_header *h = &s->hdr;
    uint64_t body = body_bytes(h);
    if (avail >= 0 && !s->compressed) {
        uint64_t size = (uint64_t)avail;
        if (h->format == FK_TIPSY_NATIVE && size == 28 + body) {
            /* 28-byte header: the 4 bytes read as pad are particle data */
            h->header_size = 28;
            h->pad = 0;
            src.ncarry = got - 28;
            memcpy(src.carry, buf + 28, src.ncarry);
        } else if (size != 32 + body) {
            st = fk_fail(err, FK_EFORMAT,
                         "%s: %s: the header promises %" PRIu32 " particles (%" PRIu32 " gas, %" PRIu32 " dark, %" PRIu32
                         " star) in %" PRIu64 " bytes, the file has %" PRIu64,
                         name, size < 32 + body ? "truncated" : "trailing data", h->nbodies, h->ntype[0], h->ntype[1],
                         h->ntype[2], 32 + body, size);
            goto done;
        }
    }
    if (h->header_size == 32 && got < 32) {
        st = fk_fail(err, FK_EFORMAT, "%s: only %zu bytes, too short for a tipsy header (32 bytes)", name, got);
        goto done;
    }
    uint64_t sa, sb, at = 0;
    slice_range(&opt, h->nbodies, &sa, &sb);
    for (int t = 0; t < 3; t++) {
        uint64_t a = sa > at ? sa : at, b = sb < at + h->ntype[t] ? sb : at + h->ntype[t];
        if (((opt.types >> t) & 1) && b > a) s->ntype[t] = b - a;
        at += h->ntype[t];
    }
    s->n = s->ntype[0] + s->ntype[1] + s->ntype[2];
    s->id_size = strcmp(fk_id_dtype(s->hdr.nbodies), "<u8") == 0 ? 8 : 4;
    /* All of them at once from a regular file of the size the header says;
     * else a block's worth to start with (a damaged or hostile header does
     * not make the reader claim memory for particles that never come). */
    uint64_t cap = avail >= 0 && !s->compressed ? s->n : (s->n < BLOCK ? s->n : BLOCK);
    if ((st = alloc_arrays(s, cap, name, err))) goto done;
    if (avail >= 0 && !s->compressed)
        st = read_parallel(fd, (uint64_t)base + (uint64_t)h->header_size, &opt, s, name, err);
    else
        st = read_particles(&src, &opt, s, cap, name, err);
done:
    gzclose_r(src.gz);
    return st;
}

/* ---- writing ----------------------------------------------------------- */

static int write_bytes(FILE *f, const char *name, const void *p, size_t len, fk_error *err)
{
    if (len && fwrite(p, 1, len, f) != len) return fk_write_failed(err, name, f, errno);
    return FK_OK;
}

int fk_tipsy_write_header(FILE *f, const char *name, const fk_tipsy_header *h, fk_error *err)
{
    if (h->format != FK_TIPSY_STANDARD && h->format != FK_TIPSY_NATIVE)
        return fk_fail(err, FK_EINVAL, "%s: tipsy format must be standard or native", name);
    unsigned char b[32];
    putd(b, h->time, h->format);
    put32(b + 8, h->nbodies, h->format);
    put32(b + 12, (uint32_t)h->ndim, h->format);
    for (int t = 0; t < 3; t++) put32(b + 16 + 4 * t, h->ntype[t], h->format);
    put32(b + 28, (uint32_t)h->pad, h->format);
    return write_bytes(f, name, b, sizeof b, err);
}

int fk_tipsy_write_particles(FILE *f, const char *name, int format, int type, uint64_t n, const float *pos,
                             const float *vel, const float *mass, float mass_all, fk_error *err)
{
    if (type < FK_GAS || type > FK_STAR || (format != FK_TIPSY_STANDARD && format != FK_TIPSY_NATIVE))
        return fk_fail(err, FK_EINVAL, "%s: invalid tipsy particle type or format", name);
    const unsigned rec = fk_tipsy_recsize[type];
    unsigned char *buf = calloc(n < BLOCK ? (n ? n : 1) : BLOCK, rec); /* fields past vel stay zero */
    if (!buf) return fk_fail(err, FK_ENOMEM, "%s: out of memory", name);
    int st = FK_OK;
    for (uint64_t at = 0; at < n && !st; at += BLOCK) {
        uint64_t count = n - at < BLOCK ? n - at : BLOCK;
        #pragma omp parallel for schedule(static) if (count > 4096)
        for (uint64_t k = 0; k < count; k++) {
            unsigned char *r = buf + k * rec;
            uint64_t i = at + k;
            putf(r, mass ? mass[i] : mass_all, format);
            for (int d = 0; d < 3; d++) {
                putf(r + 4 + 4 * d, pos[3 * i + d], format);
                putf(r + 16 + 4 * d, vel ? vel[3 * i + d] : 0.0f, format);
            }
        }
        st = write_bytes(f, name, buf, count * rec, err);
    }
    free(buf);
    return st;
}

int fk_tipsy_write(FILE *f, const char *name, int format, double time, int32_t pad, uint64_t n, const float *pos,
                   const float *vel, const float *mass, const uint8_t *type, fk_error *err)
{
    fk_tipsy_header h = {.time = time, .ndim = 3, .pad = pad, .format = format, .header_size = 32};
    uint64_t count[3] = {0, 0, 0};
    for (uint64_t i = 0; i < n; i++) {
        if (type[i] > FK_STAR || (i && type[i] < type[i - 1]))
            return fk_fail(err, FK_EINVAL, "%s: particle %" PRIu64 ": types must be in the order gas, dark, star",
                           name, i);
        count[type[i]]++;
    }
    if (n > UINT32_MAX) return fk_fail(err, FK_EINVAL, "%s: %" PRIu64 " particles do not fit a tipsy header", name, n);
    h.nbodies = (uint32_t)n;
    for (int t = 0; t < 3; t++) h.ntype[t] = (uint32_t)count[t];
    int st = fk_tipsy_write_header(f, name, &h, err);
    uint64_t at = 0;
    for (int t = 0; t < 3 && !st; t++) {
        st = fk_tipsy_write_particles(f, name, format, t, count[t], pos + 3 * at, vel ? vel + 3 * at : NULL,
                                      mass ? mass + at : NULL, 0.0f, err);
        at += count[t];
    }
    return st;
}

void fk_tipsy_units(double kpc_unit, double msol_unit, fk_snap *snap)
{
    snap->have_units = 1;
    snap->units_per_h = 0;
    snap->unit_length_cm = kpc_unit * FK_KPC_CM;
    snap->unit_mass_g = msol_unit * FK_MSUN_G;
    snap->unit_velocity_cm_s = sqrt(FK_G_CGS * snap->unit_mass_g / snap->unit_length_cm);
}
