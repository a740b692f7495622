/* stream.c - reading and writing fofkit streams (format in stream.h and fofstream(5)). */
#include "stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "bigmem.h"
#include "crccheck.h"
#include "sniff.h"
#include "fdio.h"
#include "fileio.h"
#include "overlay.h"

static const unsigned char fk_magic[8] = {0x89, 'F', 'O', 'F', '\r', '\n', 0x1a, '\n'};

#define HDR 64u
#define BLOCK (1u << 20) /* scratch: compressed payloads, fallback copies, skips */
#define FIRST (1u << 16) /* the scratch for a payload's first bytes: BLOCK only once these came */
#define MAX_RAW (UINT64_C(1) << 56)

struct fk_reader {
    fk_io io;
    char name[256];
    uint64_t off;
    int pending;       /* a chunk header was read, its payload not yet */
    int ended;
    fk_chunk cur;
    unsigned char *blk; /* scratch, blkcap bytes (up to BLOCK) */
    size_t blkcap;
    /* an overlay followed (fk_reader_follow): its base read first */
    int follow, depth;  /* follow BASE; how many overlays lie above this one */
    char *path;         /* the file's name, for a base's relative name (NULL: stdin) */
    uint64_t nchunks;   /* chunks read from this file so far */
    fk_reader *base;    /* the base's reader (kept open to the end: copies listed read it) */
    FILE *basef;
    int in_base;        /* the base's chunks are being read */
};

struct fk_writer {
    fk_io io;
    int zlevel;
    uint64_t off;
    unsigned char *blk; /* scratch (blkcap bytes) for copies the kernel will not make */
    size_t blkcap;
    /* chunks listed (fk_writer_give; under fk_writer_later, those passed on),
     * written in order by a thread of their own */
    int later, list_reads; /* fk_writer_later; fk_writer_list_reads */
    const fk_reader *later_r;
    struct later_job *q;
    size_t qn, qnext, qcap;
    pthread_t qthread;
    pthread_mutex_t qmu;
    pthread_cond_t qcv, qdone; /* a chunk listed; a given chunk written */
    uint64_t qroom, qheld;     /* fk_writer_room; the given chunks' bytes held */
    int qrunning, qclosed, q_st;
    fk_error q_err;
    unsigned char *qblk; /* the thread's scratch */
};

/* A chunk to write on: its header, and its payload from memory (data) or
 * stored bytes and padding (len) at offset at of the input fd; with put,
 * data is raw and put_chunk makes it (CRC, compression). */
struct later_job {
    fk_chunk c;
    const void *data;
    void *own; /* freed once written (or dropped) */
    int fd;
    uint64_t at, len;
    int put;
    uint64_t held; /* a given chunk's bytes, counted in qheld until freed */
};

/* ---- little-endian packing ---- */

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint32_t crc_of(const void *p, uint64_t n)
{
    return (uint32_t)crc32_z(0L, (const Bytef *)p, (z_size_t)n);
}

static uint64_t pad_of(uint64_t n)
{
    return (FK_STREAM_ALIGN - n % FK_STREAM_ALIGN) % FK_STREAM_ALIGN;
}

/* Scratch of min(want, BLOCK) bytes at least in *blk (*cap bytes), for a
 * move of want bytes of which done have moved: a payload's first FIRST
 * bytes move through a small scratch, and only a payload that really holds
 * more (not one whose header says so) gets BLOCK bytes. Small inputs (and
 * the fuzzers) then allocate little; a large stream reads in BLOCK pieces. */
static int scratch(unsigned char **blk, size_t *cap, uint64_t done, uint64_t want)
{
    uint64_t limit = done < FIRST ? FIRST - done : BLOCK;
    size_t n = (size_t)(want < limit ? want : limit);
    if (n <= *cap) return 0;
    if (n < 4096) n = 4096;
    unsigned char *b = malloc(n);
    if (!b) return -1;
    free(*blk);
    *blk = b;
    *cap = n;
    return 0;
}

/* ---- chunk descriptions ---- */

size_t fk_dtype_size(const char *d)
{
    static const struct { const char *s; size_t n; } t[] = {
        {"<f4", 4}, {"<f8", 8}, {"<u4", 4}, {"<u8", 8},
        {"<i4", 4}, {"<i8", 8}, {"|u1", 1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(d, t[i].s) == 0) return t[i].n;
    return 0;
}

uint64_t fk_chunk_rawsize(const fk_chunk *c)
{
    return c->nrows * c->ncols * fk_dtype_size(c->dtype);
}

void fk_chunk_init(fk_chunk *c, const char *tag, const char *dtype,
                   uint32_t flags, uint64_t nrows, uint32_t ncols)
{
    memset(c, 0, sizeof *c);
    snprintf(c->tag, sizeof c->tag, "%s", tag);
    snprintf(c->dtype, sizeof c->dtype, "%s", dtype);
    c->flags = flags;
    c->nrows = nrows;
    c->ncols = ncols;
}

static int tag_ok(const char *t)
{
    size_t n = strlen(t);
    if (n == 0 || n > FK_TAG_MAX) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= '0' && t[i] <= '9') || t[i] == '_'))
            return 0;
    return 1;
}

static void encode(unsigned char *h, const fk_chunk *c)
{
    memset(h, 0, HDR);
    memcpy(h, c->tag, strlen(c->tag));
    memcpy(h + 8, c->dtype, strlen(c->dtype));
    put32(h + 12, c->flags);
    put64(h + 16, c->nrows);
    put32(h + 24, c->ncols);
    put32(h + 28, c->level);
    put64(h + 32, c->stored);
    put32(h + 40, c->crc);
    put32(h + 60, crc_of(h, 60));
}

/* Decodes and validates a chunk header; the message names the offset. */
static int decode(fk_reader *r, const unsigned char *h, fk_chunk *c, fk_error *err)
{
    uint64_t at = r->off - HDR;
    if (!fk_crc_ok(get32(h + 60), crc_of(h, 60)))
        return fk_fail(err, FK_EFORMAT, "%s: damaged chunk header at byte %llu (CRC mismatch)",
                       r->name, (unsigned long long)at);
    memset(c, 0, sizeof *c);
    memcpy(c->tag, h, 8);
    memcpy(c->dtype, h + 8, 4);
    c->flags = get32(h + 12);
    c->nrows = get64(h + 16);
    c->ncols = get32(h + 24);
    c->level = get32(h + 28);
    c->stored = get64(h + 32);
    c->crc = get32(h + 40);
    if (!tag_ok(c->tag))
        return fk_fail(err, FK_EFORMAT, "%s: bad chunk tag at byte %llu", r->name, (unsigned long long)at);
    size_t es = fk_dtype_size(c->dtype);
    if (es == 0) {
        char shown[5] = {0}; /* the bytes as read, '?' for a byte that is not printable ASCII: one line */
        for (int i = 0; i < 4 && c->dtype[i]; i++) shown[i] = c->dtype[i] > ' ' && c->dtype[i] < 127 ? c->dtype[i] : '?';
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s has unknown element type '%s'", r->name, c->tag, shown);
    }
    if (c->flags & ~FK_CF_KNOWN)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s has unknown flags 0x%x", r->name, c->tag, c->flags);
    if (c->ncols == 0)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s has zero columns", r->name, c->tag);
    if ((c->flags & FK_CF_TEXT) && (strcmp(c->dtype, "|u1") != 0 || c->ncols != 1))
        return fk_fail(err, FK_EFORMAT, "%s: text chunk %s is not a byte array", r->name, c->tag);
    if (c->nrows > MAX_RAW / c->ncols / es)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s is impossibly large (%llu rows)", r->name, c->tag,
                       (unsigned long long)c->nrows);
    uint64_t raw = fk_chunk_rawsize(c);
    if (c->flags & FK_CF_ZLIB) {
        if (c->stored > compressBound((uLong)raw) + 64)
            return fk_fail(err, FK_EFORMAT, "%s: chunk %s: compressed size %llu exceeds any zlib stream of %llu bytes",
                           r->name, c->tag, (unsigned long long)c->stored, (unsigned long long)raw);
    } else if (c->stored != raw) {
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s: payload size %llu does not match %llu rows x %u columns of %s",
                       r->name, c->tag, (unsigned long long)c->stored, (unsigned long long)c->nrows, c->ncols, c->dtype);
    }
    return FK_OK;
}

/* ---- reader ---- */

static int read_error(fk_reader *r, fk_error *err)
{
    return fk_fail(err, FK_EIO, "%s: read error: %s", r->name, strerror(errno));
}

static int truncated(fk_reader *r, const char *what, fk_error *err)
{
    /* a pipe that stops early: its writer stopped, and said why if it was one of ours */
    if (r->io.kind == FK_IO_PIPE && r->off == 0)
        return fk_fail(err, FK_ECUT, "%s: no input (the program writing the pipe stopped before writing anything)",
                       r->name);
    if (r->io.kind == FK_IO_PIPE)
        return fk_fail(err, FK_ECUT, "%s: the stream stops %s%s at byte %llu (the program writing the pipe stopped)",
                       r->name, what ? "inside " : "before its END chunk", what ? what : "", (unsigned long long)r->off);
    if (r->off == 0) return fk_fail(err, FK_EFORMAT, "%s: empty input", r->name);
    return fk_fail(err, FK_EFORMAT, "%s: truncated stream (ends inside %s at byte %llu)", r->name, what,
                   (unsigned long long)r->off);
}

/* Reads exactly n bytes; a short read is a truncated stream. */
static int read_exact(fk_reader *r, void *buf, uint64_t n, const char *what, fk_error *err)
{
    int64_t got = fk_io_read(&r->io, buf, n);
    if (got < 0) return read_error(r, err);
    r->off += (uint64_t)got;
    return (uint64_t)got == n ? FK_OK : truncated(r, what, err);
}

int fk_reader_open(fk_reader **out, FILE *f, const char *name, fk_error *err)
{
    *out = NULL;
    fk_reader *r = calloc(1, sizeof *r);
    if (!r) return fk_fail(err, FK_ENOMEM, "out of memory");
    snprintf(r->name, sizeof r->name, "%s", name);
    if (fk_io_init(&r->io, f, 0) != 0) {
        int st = read_error(r, err);
        fk_reader_close(r);
        return st;
    }
    unsigned char h[HDR];
    int64_t got = fk_io_read(&r->io, h, HDR);
    int st = FK_OK;
    if (got < 0) {
        st = read_error(r, err);
    } else if (got > 0 && memcmp(h, fk_magic, got < 8 ? (size_t)got : 8) != 0) {
        /* not a stream: say what it is, when its first bytes tell */
        int k = fk_sniff(h, (size_t)got);
        if (k != FK_FILE_UNKNOWN)
            st = fk_fail(err, FK_EFORMAT, "%s: not a fofkit stream but %s (%s)", r->name, fk_sniff_what(k),
                         fk_sniff_advice(k));
        else
            st = fk_fail(err, FK_EFORMAT, "%s: not a fofkit stream (bad magic)", r->name);
    } else {
        r->off = (uint64_t)got;
        if (got != HDR) st = truncated(r, "the stream header", err);
    }
    if (st == FK_OK && !fk_crc_ok(get32(h + 60), crc_of(h, 60)))
        st = fk_fail(err, FK_EFORMAT, "%s: damaged stream header (CRC mismatch)", r->name);
    if (st == FK_OK && get32(h + 8) != FK_STREAM_VERSION)
        st = fk_fail(err, FK_EFORMAT, "%s: unsupported stream version %u (this program reads version %u)", r->name,
                     get32(h + 8), FK_STREAM_VERSION);
    if (st != FK_OK) {
        fk_reader_close(r);
        return st;
    }
    *out = r;
    return FK_OK;
}

void fk_reader_set_progress(fk_reader *r, void (*fn)(void *ctx, uint64_t offset), void *ctx)
{
    r->io.tick = fn;
    r->io.tick_ctx = ctx;
}

/* Reads and checks the padding after a payload of stored bytes. */
static int read_pad(fk_reader *r, fk_error *err)
{
    uint64_t pad = pad_of(r->cur.stored);
    unsigned char p[FK_STREAM_ALIGN];
    if (pad == 0) return FK_OK;
    int st = read_exact(r, p, pad, "chunk padding", err);
    for (uint64_t i = 0; i < pad && !st; i++)
        if (p[i] != 0)
            st = fk_fail(err, FK_EFORMAT, "%s: chunk %s: nonzero padding (damaged data)", r->name, r->cur.tag);
    return st;
}

static int crc_mismatch(fk_reader *r, fk_error *err)
{
    return fk_fail(err, FK_EFORMAT, "%s: chunk %s: payload CRC mismatch (damaged data)", r->name, r->cur.tag);
}

/* Consumes the payload of the current chunk block by block, passing each
 * stored block to sink, checks the CRC and the padding. */
static int drain(fk_reader *r, int (*sink)(void *, const void *, size_t, fk_error *), void *ctx, fk_error *err)
{
    uint64_t left = r->cur.stored;
    uint32_t crc = 0;
    r->pending = 0;
    while (left > 0) {
        if (scratch(&r->blk, &r->blkcap, r->cur.stored - left, left))
            return fk_fail(err, FK_ENOMEM, "out of memory");
        size_t n = left < r->blkcap ? (size_t)left : r->blkcap;
        int st = read_exact(r, r->blk, n, "a chunk payload", err);
        if (st) return st;
        crc = (uint32_t)crc32_z(crc, r->blk, n);
        if ((st = sink(ctx, r->blk, n, err))) return st;
        left -= n;
    }
    if (!fk_crc_ok(r->cur.crc, crc)) return crc_mismatch(r, err);
    return read_pad(r, err);
}

/* Moves past the current chunk's payload and padding without reading
 * them: they are checked by whoever reads them. */
static int skip(fk_reader *r, fk_error *err)
{
    uint64_t n = r->cur.stored + pad_of(r->cur.stored), done = 0;
    r->pending = 0;
    while (done < n) {
        if (scratch(&r->blk, &r->blkcap, done, n - done)) return fk_fail(err, FK_ENOMEM, "out of memory");
        uint64_t want = done < FIRST && n - done > FIRST - done ? FIRST - done : n - done;
        int64_t k = fk_io_skip(&r->io, want, r->blk, r->blkcap);
        if (k < 0) return read_error(r, err);
        r->off += (uint64_t)k;
        done += (uint64_t)k;
        if ((uint64_t)k < want) break;
    }
    if (done < n) return truncated(r, done < r->cur.stored ? "a chunk payload" : "chunk padding", err);
    return FK_OK;
}

/* The reader whose file the current chunk comes from: an overlay's base
 * (or the base's base) while the base's chunks are read. */
static fk_reader *act(fk_reader *r)
{
    while (r->in_base) r = r->base;
    return r;
}

/* At an overlay's BASE chunk (its first): the base opened and checked
 * (overlay.h), a reader of its own that follows it in turn. */
static int open_base(fk_reader *r, fk_error *err)
{
    if (r->depth >= FK_OVERLAY_DEPTH)
        return fk_fail(err, FK_EFORMAT, "%s: overlays nested more than %d deep (does one name itself as its base?)",
                       r->name, FK_OVERLAY_DEPTH);
    char *text = NULL, *path = NULL;
    FILE *f = NULL;
    int st = fk_reader_load_text(r, &text, err);
    if (!st) st = fk_overlay_open_base(text, r->path, r->name, &f, &path, err);
    free(text);
    if (!st) st = fk_reader_open(&r->base, f, path, err);
    if (st) {
        if (f) fclose(f);
        free(path);
        return st;
    }
    r->basef = f;
    r->base->follow = 1;
    r->base->depth = r->depth + 1;
    r->base->path = path;
    r->in_base = 1;
    return FK_OK;
}

int fk_reader_follow(fk_reader *r, const char *path, fk_error *err)
{
    free(r->path);
    r->path = NULL;
    if (path && !(r->path = strdup(path))) return fk_fail(err, FK_ENOMEM, "out of memory");
    r->follow = 1;
    return FK_OK;
}

int fk_reader_next(fk_reader *r, fk_chunk *c, fk_error *err)
{
    if (r->in_base) {
        int st = fk_reader_next(r->base, c, err);
        if (st != 0) return st;
        r->in_base = 0; /* the base's END, checked: the overlay's own chunks follow */
    }
    if (r->ended) return 0;
    if (r->pending) {
        int st = skip(r, err);
        if (st) return st;
    }
    unsigned char h[HDR];
    int64_t got = fk_io_read(&r->io, h, HDR);
    if (got < 0) return read_error(r, err);
    r->off += (uint64_t)got;
    if (r->io.kind == FK_IO_PIPE && got != HDR) return truncated(r, got ? "a chunk header" : NULL, err);
    if (got == 0) return fk_fail(err, FK_EFORMAT, "%s: truncated stream (no END chunk)", r->name);
    if (got != HDR) return fk_fail(err, FK_EFORMAT, "%s: truncated stream (ends inside a chunk header)", r->name);
    int st = decode(r, h, c, err);
    if (st) return st;
    /* a regular file must hold the payload its header claims: checked before anything is allocated for it */
    const uint64_t left = r->io.size > r->io.base + r->off ? r->io.size - r->io.base - r->off : 0;
    if (r->io.kind == FK_IO_FILE && c->stored > left)
        return fk_fail(err, FK_EFORMAT,
                       "%s: truncated stream: chunk %s at byte %llu claims %llu bytes of payload, the file holds %llu "
                       "more",
                       r->name, c->tag, (unsigned long long)(r->off - HDR), (unsigned long long)c->stored,
                       (unsigned long long)left);
    r->cur = *c;
    r->pending = 1;
    r->nchunks++;
    if (r->follow && r->nchunks == 1 && strcmp(c->tag, "BASE") == 0) {
        st = open_base(r, err);
        return st ? st : fk_reader_next(r, c, err);
    }
    if (r->base && strcmp(c->tag, "SNAP") == 0)
        return fk_fail(err, FK_EFORMAT, "%s: an overlay with a SNAP chunk of its own (its base's is the stream's)",
                       r->name);
    if (strcmp(c->tag, "END") == 0) {
        if (c->stored != 0)
            return fk_fail(err, FK_EFORMAT, "%s: END chunk carries a payload", r->name);
        r->pending = 0;
        r->ended = 1;
        unsigned char extra;
        got = fk_io_read(&r->io, &extra, 1);
        if (got < 0) return read_error(r, err);
        if (got > 0) return fk_fail(err, FK_EFORMAT, "%s: data after the END chunk", r->name);
        return 0;
    }
    return 1;
}

struct inflate_ctx {
    z_stream z;
    unsigned char *out; /* NULL: inflate into a rolling window, only counting (verification) */
    uint64_t outsize, done;
    int ended;
    const char *name, *tag;
};

static int inflate_block(void *vctx, const void *in, size_t n, fk_error *err)
{
    struct inflate_ctx *x = vctx;
    unsigned char window[1 << 16];
    if (x->ended)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s: data after the end of its zlib stream", x->name, x->tag);
    x->z.next_in = (Bytef *)in;
    x->z.avail_in = (uInt)n;
    while (x->z.avail_in > 0) {
        uint64_t room = x->outsize - x->done;
        if (x->out) {
            x->z.next_out = x->out + x->done;
            x->z.avail_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
        } else {
            x->z.next_out = window;
            x->z.avail_out = room > sizeof window ? (uInt)sizeof window : (uInt)room;
        }
        uInt before = x->z.avail_out;
        int zs = inflate(&x->z, Z_NO_FLUSH);
        x->done += before - x->z.avail_out;
        if (zs == Z_STREAM_END) {
            x->ended = 1;
            if (x->z.avail_in > 0)
                return fk_fail(err, FK_EFORMAT, "%s: chunk %s: data after the end of its zlib stream", x->name, x->tag);
            return FK_OK;
        }
        if (zs == Z_BUF_ERROR && x->done == x->outsize)
            return fk_fail(err, FK_EFORMAT, "%s: chunk %s: decompresses to more than its declared size", x->name, x->tag);
        if (zs != Z_OK)
            return fk_fail(err, FK_EFORMAT, "%s: chunk %s: corrupt zlib data", x->name, x->tag);
    }
    return FK_OK;
}

/* Inflates the current (zlib) chunk into out (raw bytes), or only checks
 * that it inflates to exactly raw bytes when out is NULL. */
static int read_zlib(fk_reader *r, void *out, uint64_t raw, fk_error *err)
{
    struct inflate_ctx x;
    memset(&x, 0, sizeof x);
    if (inflateInit(&x.z) != Z_OK) return fk_fail(err, FK_ENOMEM, "out of memory (zlib)");
    x.out = out;
    x.outsize = raw;
    x.name = r->name;
    x.tag = r->cur.tag;
    int st = drain(r, inflate_block, &x, err);
    /* The whole stored payload was consumed: it must have ended exactly. */
    if (st == FK_OK && (!x.ended || x.done != raw))
        st = fk_fail(err, FK_EFORMAT, "%s: chunk %s: zlib data ends early (%llu of %llu bytes)", r->name,
                     r->cur.tag, (unsigned long long)x.done, (unsigned long long)raw);
    inflateEnd(&x.z);
    return st;
}

static int no_payload(fk_reader *r, fk_error *err)
{
    return fk_fail(err, FK_EINVAL, "%s: no chunk payload to read", r->name);
}

int fk_reader_read(fk_reader *r, void *buf, uint64_t bufsize, fk_error *err)
{
    r = act(r);
    if (!r->pending) return no_payload(r, err);
    uint64_t raw = fk_chunk_rawsize(&r->cur);
    if (bufsize != raw)
        return fk_fail(err, FK_EINVAL, "%s: chunk %s: buffer of %llu bytes for %llu", r->name, r->cur.tag,
                       (unsigned long long)bufsize, (unsigned long long)raw);
    if (r->cur.flags & FK_CF_ZLIB) return read_zlib(r, buf, raw, err);
    /* Raw: straight into buf, checksummed on other cores as it arrives. */
    r->pending = 0;
    uint32_t crc;
    int64_t got = fk_io_read_crc(&r->io, buf, raw, &crc);
    if (got < 0) return read_error(r, err);
    r->off += (uint64_t)got;
    if ((uint64_t)got < raw) return truncated(r, "a chunk payload", err);
    if (!fk_crc_ok(r->cur.crc, crc)) return crc_mismatch(r, err);
    return read_pad(r, err);
}

static int discard_block(void *ctx, const void *p, size_t n, fk_error *err)
{
    (void)ctx, (void)p, (void)n, (void)err;
    return FK_OK;
}

int fk_reader_verify(fk_reader *r, fk_error *err)
{
    r = act(r);
    if (!r->pending) return no_payload(r, err);
    if (r->cur.flags & FK_CF_ZLIB) return read_zlib(r, NULL, fk_chunk_rawsize(&r->cur), err);
    return drain(r, discard_block, NULL, err);
}

int fk_reader_load(fk_reader *r, void **buf, fk_error *err)
{
    *buf = NULL;
    r = act(r);
    uint64_t raw = fk_chunk_rawsize(&r->cur);
    /* Faulted in on every core only when the input can hold it: a raw
     * chunk no larger than what is left of a regular file. A size from a
     * pipe, or a compressed one, may be a lie (a damaged stream would make
     * the faults claim memory for data that never comes). */
    int real = r->io.kind == FK_IO_FILE && r->io.fd >= 0 && !(r->cur.flags & FK_CF_ZLIB) &&
               raw <= (r->io.size > r->off ? r->io.size - r->off : 0);
    void *p = real ? fk_big_alloc((size_t)raw) : fk_big_reserve((size_t)raw);
    if (!p)
        return fk_fail(err, FK_ENOMEM, "%s: out of memory for chunk %s (%llu bytes)", r->name, r->cur.tag,
                       (unsigned long long)raw);
    int st = fk_reader_read(r, p, raw, err);
    if (st) {
        free(p);
        return st;
    }
    *buf = p;
    return FK_OK;
}

int fk_reader_load_text(fk_reader *r, char **text, fk_error *err)
{
    *text = NULL;
    r = act(r);
    if (!(r->cur.flags & FK_CF_TEXT))
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s is not text", r->name, r->cur.tag);
    uint64_t raw = fk_chunk_rawsize(&r->cur);
    char *p = malloc((size_t)raw + 1);
    if (!p) return fk_fail(err, FK_ENOMEM, "out of memory");
    int st = fk_reader_read(r, p, raw, err);
    if (st) {
        free(p);
        return st;
    }
    p[raw] = '\0';
    if (strlen(p) != raw) {
        free(p);
        return fk_fail(err, FK_EFORMAT, "%s: text chunk %s contains a NUL byte", r->name, r->cur.tag);
    }
    *text = p;
    return FK_OK;
}

double fk_reader_waited(const fk_reader *r)
{
    return r->io.waited;
}

uint64_t fk_reader_offset(const fk_reader *r)
{
    return r->off;
}

uint64_t fk_reader_size(const fk_reader *r)
{
    return r->io.kind == FK_IO_FILE ? r->io.size : 0;
}

void fk_reader_close(fk_reader *r)
{
    if (!r) return;
    fk_reader_close(r->base);
    if (r->basef) fclose(r->basef);
    free(r->path);
    free(r->blk);
    free(r);
}

int fk_stream_identity(int fd, const char *name, uint64_t *bytes, uint32_t *crc, fk_error *err)
{
    fk_reader r; /* for decode's messages */
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", name);
    struct stat sb;
    if (fstat(fd, &sb) != 0) return read_error(&r, err);
    if (!S_ISREG(sb.st_mode)) return fk_fail(err, FK_EFORMAT, "%s: not a regular file", name);
    const uint64_t size = (uint64_t)sb.st_size;
    unsigned char h[HDR];
    int64_t got = fk_pread(fd, h, HDR, 0);
    if (got < 0) return read_error(&r, err);
    if (got != HDR || memcmp(h, fk_magic, 8) != 0 || !fk_crc_ok(get32(h + 60), crc_of(h, 60)))
        return fk_fail(err, FK_EFORMAT, "%s: not a fofkit stream", name);
    /* bytes 0 to 59 of each header: a header's own CRC (60 to 63) left out,
     * for a CRC run over a block and its CRC lands on one constant whatever
     * the block (the CRC's residue), and so would the whole sum */
    uint32_t sum = crc_of(h, 60);
    uint64_t at = HDR;
    for (;;) {
        if ((got = fk_pread(fd, h, HDR, at)) < 0) return read_error(&r, err);
        if (got != HDR) return fk_fail(err, FK_EFORMAT, "%s: truncated stream (no END chunk)", name);
        at += HDR;
        r.off = at;
        fk_chunk c;
        int st = decode(&r, h, &c, err);
        if (st) return st;
        sum = (uint32_t)crc32_z(sum, h, 60);
        if (strcmp(c.tag, "END") == 0) break;
        const uint64_t n = c.stored + pad_of(c.stored);
        if (n > size - at)
            return fk_fail(err, FK_EFORMAT, "%s: truncated stream (chunk %s at byte %llu claims %llu bytes)", name,
                           c.tag, (unsigned long long)(at - HDR), (unsigned long long)c.stored);
        at += n;
    }
    if (at != size) return fk_fail(err, FK_EFORMAT, "%s: data after the END chunk", name);
    *bytes = size;
    *crc = sum;
    return FK_OK;
}

/* ---- writer ---- */

/* The output's name comes from fileio.h: the writer is given a FILE alone. */
static int write_error(const fk_writer *w, fk_error *err)
{
    return fk_write_failed(err, NULL, w->io.f, errno);
}

static int write_all(fk_writer *w, const void *p, uint64_t n, fk_error *err)
{
    if (fk_io_write(&w->io, p, n) != 0) return write_error(w, err);
    w->off += n;
    return FK_OK;
}

static int write_pad(fk_writer *w, fk_error *err)
{
    static const unsigned char zeros[FK_STREAM_ALIGN];
    return write_all(w, zeros, pad_of(w->off), err);
}

int fk_writer_open(fk_writer **out, FILE *f, int zlevel, fk_error *err)
{
    *out = NULL;
    if (zlevel < 0 || zlevel > 9)
        return fk_fail(err, FK_EINVAL, "compression level %d is not in 0..9", zlevel);
    fk_writer *w = calloc(1, sizeof *w);
    if (!w) return fk_fail(err, FK_ENOMEM, "out of memory");
    if (fk_io_init(&w->io, f, 1) != 0) {
        int st = write_error(w, err);
        free(w);
        return st;
    }
    w->zlevel = zlevel;
    pthread_mutex_init(&w->qmu, NULL);
    pthread_cond_init(&w->qcv, NULL);
    pthread_cond_init(&w->qdone, NULL);
    unsigned char h[HDR] = {0};
    memcpy(h, fk_magic, 8);
    put32(h + 8, FK_STREAM_VERSION);
    put32(h + 60, crc_of(h, 60));
    int st = write_all(w, h, HDR, err);
    if (st) {
        fk_writer_free(w);
        return st;
    }
    *out = w;
    return FK_OK;
}

/* Header, payload and padding: stored and crc already in c. With given
 * (the payload itself, which the writer frees next), the payload is given
 * up to the output (fk_io_gift): into a pipe, its pages go without a copy. */
static int put_stored(fk_writer *w, const fk_chunk *c, const void *stored, void *given, fk_error *err)
{
    unsigned char h[HDR];
    encode(h, c);
    int st = write_all(w, h, HDR, err);
    if (!st && given) {
        if (fk_io_gift(&w->io, given, c->stored) != 0) return write_error(w, err);
        w->off += c->stored;
    } else if (!st) {
        st = write_all(w, stored, c->stored, err);
    }
    if (!st) st = write_pad(w, err);
    return st;
}

static int bad_chunk(const fk_chunk *c, fk_error *err)
{
    return fk_fail(err, FK_EINVAL, "invalid chunk description (tag '%s', type '%s')", c->tag, c->dtype);
}

/* A chunk made from raw data: CRC, compression; own: data is the writer's
 * to free after, so it may be given up to the output (put_stored). */
static int make_chunk(fk_writer *w, const fk_chunk *spec, const void *data, void *own, fk_error *err)
{
    fk_chunk c = *spec;
    if (!tag_ok(c.tag) || fk_dtype_size(c.dtype) == 0 || c.ncols == 0) return bad_chunk(&c, err);
    uint64_t raw = fk_chunk_rawsize(&c);
    c.flags &= ~FK_CF_ZLIB;
    if (w->zlevel == 0) {
        c.stored = raw;
        c.crc = fk_crc32(0, data, raw);
        return put_stored(w, &c, data, own == data ? own : NULL, err);
    }
    uLongf zn = compressBound((uLong)raw);
    unsigned char *z = malloc(zn ? zn : 1);
    if (!z) return fk_fail(err, FK_ENOMEM, "out of memory compressing chunk %s", c.tag);
    if (compress2(z, &zn, data, (uLong)raw, w->zlevel) != Z_OK) {
        free(z);
        return fk_fail(err, FK_ENOMEM, "zlib failed to compress chunk %s", c.tag);
    }
    c.flags |= FK_CF_ZLIB;
    c.stored = zn;
    c.crc = crc_of(z, zn);
    int st = put_stored(w, &c, z, z, err);
    free(z);
    return st;
}

static int put_chunk(fk_writer *w, const fk_chunk *spec, const void *data, fk_error *err)
{
    return make_chunk(w, spec, data, NULL, err);
}

/* One listed chunk written on (by the list's thread). */
static int write_later(fk_writer *w, const struct later_job *j, fk_error *err)
{
    if (j->put) return make_chunk(w, &j->c, j->data, j->own, err);
    if (j->data) return put_stored(w, &j->c, j->data, j->own == j->data ? j->own : NULL, err);
    unsigned char h[HDR];
    encode(h, &j->c);
    int st = write_all(w, h, HDR, err);
    if (st) return st;
    if (!w->qblk && !(w->qblk = malloc(BLOCK))) return fk_fail(err, FK_ENOMEM, "out of memory");
    errno = 0;
    int64_t k = fk_io_copy_at(j->fd, j->at, &w->io, j->len, w->qblk, BLOCK);
    if (k < 0) return write_error(w, err);
    w->off += (uint64_t)k;
    if ((uint64_t)k < j->len)
        return fk_fail(err, FK_EIO, "copying chunk %s: its input ended %llu bytes early (changed while read?)", j->c.tag,
                       (unsigned long long)(j->len - (uint64_t)k));
    return FK_OK;
}

/* The list's thread: writes the chunks in order as they are listed, until
 * the list is closed and done; after a failure the rest are dropped. */
static void *later_main(void *arg)
{
    fk_writer *w = arg;
    pthread_mutex_lock(&w->qmu);
    for (;;) {
        while (w->qnext == w->qn && !w->qclosed) pthread_cond_wait(&w->qcv, &w->qmu);
        if (w->qnext == w->qn) break;
        struct later_job j = w->q[w->qnext++];
        const int failed = w->q_st;
        pthread_mutex_unlock(&w->qmu);
        fk_error e = {0};
        fk_io_one_core(!j.put); /* a chunk passed on: beside the stage's work, which has every core */
        int st = failed ? FK_OK : write_later(w, &j, &e);
        free(j.own);
        pthread_mutex_lock(&w->qmu);
        if (st && !w->q_st) w->q_st = st, w->q_err = e;
        if (j.held) {
            w->qheld -= j.held;
            pthread_cond_signal(&w->qdone);
        }
    }
    pthread_mutex_unlock(&w->qmu);
    return NULL;
}

/* Lists a chunk for the list's thread (started with the first); without a
 * thread, writes it now. */
static int list_later(fk_writer *w, const struct later_job *j, fk_error *err)
{
    pthread_mutex_lock(&w->qmu);
    if (w->qn == w->qcap) {
        size_t cap = w->qcap ? 2 * w->qcap : 16;
        struct later_job *q = realloc(w->q, cap * sizeof *q);
        if (!q) {
            pthread_mutex_unlock(&w->qmu);
            free(j->own);
            return fk_fail(err, FK_ENOMEM, "out of memory");
        }
        w->q = q, w->qcap = cap;
    }
    if (!w->qrunning) {
        w->qclosed = 0;
        if (pthread_create(&w->qthread, NULL, later_main, w) != 0) {
            pthread_mutex_unlock(&w->qmu);
            int st = write_later(w, j, err); /* nothing listed before: in order */
            free(j->own);
            return st;
        }
        w->qrunning = 1;
    }
    w->q[w->qn++] = *j;
    w->qheld += j->held;
    pthread_cond_signal(&w->qcv);
    pthread_mutex_unlock(&w->qmu);
    return FK_OK;
}

/* Waits for the listed chunks, if any; their failure is this call's. */
static int settle(fk_writer *w, fk_error *err)
{
    if (w->qrunning) {
        pthread_mutex_lock(&w->qmu);
        w->qclosed = 1;
        pthread_cond_signal(&w->qcv);
        pthread_mutex_unlock(&w->qmu);
        pthread_join(w->qthread, NULL);
        w->qrunning = 0;
        w->qn = w->qnext = 0;
    }
    if (!w->q_st) return FK_OK;
    if (err && err->code == FK_OK) *err = w->q_err; /* and every later call fails alike */
    return w->q_st;
}

void fk_writer_later(fk_writer *w, const fk_reader *r)
{
    const char *e = getenv("FOFKIT_WRITE_LATER"); /* 0: written as passed on, to compare */
    w->later = w->zlevel == 0 && r && r->io.kind == FK_IO_FILE && r->io.fd >= 0 && !(e && !strcmp(e, "0"));
    w->later_r = r;
}

void fk_writer_room(fk_writer *w, uint64_t bytes)
{
    w->qroom = bytes;
}

int fk_writer_reserve(fk_writer *w, uint64_t bytes, fk_error *err)
{
    if (!w->qroom || !w->qrunning) return settle(w, err);
    pthread_mutex_lock(&w->qmu);
    while (w->qheld > 0 && w->qheld + bytes > w->qroom && !w->q_st) pthread_cond_wait(&w->qdone, &w->qmu);
    const int failed = w->q_st;
    pthread_mutex_unlock(&w->qmu);
    return failed ? settle(w, err) : FK_OK;
}

int fk_writer_give(fk_writer *w, const fk_chunk *c, void *data, fk_error *err)
{
    const uint64_t size = fk_chunk_rawsize(c);
    int st = fk_writer_reserve(w, size, err); /* room for it among the given chunks not yet written */
    if (st) {
        free(data);
        return st;
    }
    struct later_job j = {*c, data, data, -1, 0, 0, 1, size};
    return list_later(w, &j, err);
}

int fk_writer_put(fk_writer *w, const fk_chunk *spec, const void *data, fk_error *err)
{
    int st = settle(w, err);
    return st ? st : put_chunk(w, spec, data, err);
}

/* A payload as read goes on as it is: stored raw, and a writer that does not compress. */
static int as_read(const fk_writer *w, const fk_chunk *c)
{
    return w->zlevel == 0 && !(c->flags & FK_CF_ZLIB) && c->stored == fk_chunk_rawsize(c);
}

static int header_ok(const fk_chunk *c)
{
    return tag_ok(c->tag) && fk_dtype_size(c->dtype) != 0 && c->ncols != 0;
}

void fk_writer_list_reads(fk_writer *w)
{
    w->list_reads = 1; /* a compressing writer writes them at once all the same (as_read) */
}

int fk_writer_put_read(fk_writer *w, const fk_chunk *c, const void *data, fk_error *err)
{
    const int stored = as_read(w, c);
    if (stored && (w->later || w->list_reads)) {
        if (!header_ok(c)) return bad_chunk(c, err);
        struct later_job j = {*c, data, NULL, -1, 0, 0, 0, 0};
        return list_later(w, &j, err);
    }
    int st = settle(w, err);
    if (st) return st;
    if (!stored) return put_chunk(w, c, data, err);
    if (!header_ok(c)) return bad_chunk(c, err);
    return put_stored(w, c, data, NULL, err);
}

int fk_writer_give_read(fk_writer *w, const fk_chunk *c, void *data, fk_error *err)
{
    if (as_read(w, c) && (w->later || w->list_reads) && header_ok(c)) {
        struct later_job j = {*c, data, data, -1, 0, 0, 0, 0};
        return list_later(w, &j, err);
    }
    int st = fk_writer_put_read(w, c, data, err);
    free(data);
    return st;
}

int fk_writer_text(fk_writer *w, const char *tag, uint32_t level, const char *text, fk_error *err)
{
    fk_chunk c;
    fk_chunk_init(&c, tag, "|u1", FK_CF_TEXT, strlen(text), 1);
    c.level = level;
    if (w->later && tag_ok(c.tag)) { /* a copy listed, in its place among the others */
        char *copy = strdup(text);
        if (!copy) return fk_fail(err, FK_ENOMEM, "out of memory");
        c.stored = c.nrows;
        c.crc = crc_of(copy, c.stored);
        struct later_job j = {c, copy, copy, -1, 0, 0, 0, 0};
        return list_later(w, &j, err);
    }
    return fk_writer_put(w, &c, text, err);
}

int fk_writer_copy(fk_writer *w, fk_reader *outer, const fk_chunk *c, fk_error *err)
{
    fk_reader *r = act(outer); /* an overlay's base while its chunks come */
    if (!r->pending) return no_payload(r, err);
    if (w->later && outer == w->later_r) { /* listed; the reader skips the payload */
        struct later_job j = {*c, NULL, NULL, r->io.fd, r->io.base + r->off, c->stored + pad_of(c->stored), 0, 0};
        return list_later(w, &j, err);
    }
    int st = settle(w, err);
    if (st) return st;
    if (w->zlevel > 0 && !(c->flags & FK_CF_ZLIB)) { /* compressed on the way: read, checked, compressed */
        void *buf;
        st = fk_reader_load(r, &buf, err);
        if (st) return st;
        st = put_chunk(w, c, buf, err);
        free(buf);
        return st;
    }
    /* As stored, payload and padding, input to output without entering
     * this process where the kernel can; the CRC is left to the reader of
     * the payload (its header's CRC was checked). */
    unsigned char h[HDR];
    encode(h, c);
    st = write_all(w, h, HDR, err);
    if (st) return st;
    uint64_t n = c->stored + pad_of(c->stored), done = 0;
    r->pending = 0;
    while (done < n) {
        if (scratch(&w->blk, &w->blkcap, done, n - done)) return fk_fail(err, FK_ENOMEM, "out of memory");
        uint64_t want = done < FIRST && n - done > FIRST - done ? FIRST - done : n - done;
        errno = 0;
        int64_t k = fk_io_transfer(&r->io, &w->io, want, w->blk, w->blkcap);
        if (k < 0) return fk_fail(err, FK_EIO, "%s: copying chunk %s: %s", r->name, c->tag, strerror(errno));
        r->off += (uint64_t)k;
        w->off += (uint64_t)k;
        done += (uint64_t)k;
        if ((uint64_t)k < want) break;
    }
    if (done < n) return truncated(r, done < c->stored ? "a chunk payload" : "chunk padding", err);
    return FK_OK;
}

int fk_writer_finish(fk_writer *w, fk_error *err)
{
    fk_chunk c;
    fk_chunk_init(&c, "END", "|u1", 0, 0, 1);
    int st = settle(w, err);
    if (!st) st = put_stored(w, &c, "", NULL, err);
    if (!st && w->io.fd < 0 && fflush(w->io.f) != 0) st = write_error(w, err);
    return st;
}

void fk_writer_free(fk_writer *w)
{
    if (!w) return;
    settle(w, NULL);
    pthread_mutex_destroy(&w->qmu);
    pthread_cond_destroy(&w->qcv);
    pthread_cond_destroy(&w->qdone);
    free(w->q);
    free(w->qblk);
    free(w->blk);
    free(w);
}
