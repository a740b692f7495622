/* stream.c - reading and writing fofkit streams (format in stream.h and fofstream(5)). */
#include "stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "crccheck.h"

static const unsigned char fk_magic[8] = {0x89, 'F', 'O', 'F', '\r', '\n', 0x1a, '\n'};

#define HDR 64u
#define BLOCK (1u << 20) /* I/O and inflate block size */
#define MAX_RAW (UINT64_C(1) << 56)

struct fk_reader {
    FILE *f;
    char name[256];
    uint64_t off;
    int pending;       /* a chunk header was read, its payload not yet */
    int ended;
    fk_chunk cur;
    unsigned char *blk; /* BLOCK bytes of scratch */
};

struct fk_writer {
    FILE *f;
    int zlevel;
    uint64_t off;
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

/* Reads exactly n bytes; a short read is a truncated stream. */
static int read_exact(fk_reader *r, void *buf, size_t n, const char *what, fk_error *err)
{
    size_t got = fread(buf, 1, n, r->f);
    r->off += got;
    if (got == n) return FK_OK;
    if (ferror(r->f))
        return fk_fail(err, FK_EIO, "%s: read error: %s", r->name, strerror(errno));
    if (r->off == 0)
        return fk_fail(err, FK_EFORMAT, "%s: empty input", r->name);
    return fk_fail(err, FK_EFORMAT, "%s: truncated stream (ends inside %s at byte %llu)", r->name, what,
                   (unsigned long long)r->off);
}

int fk_reader_open(fk_reader **out, FILE *f, const char *name, fk_error *err)
{
    *out = NULL;
    fk_reader *r = calloc(1, sizeof *r);
    unsigned char *blk = malloc(BLOCK);
    if (!r || !blk) {
        free(r);
        free(blk);
        return fk_fail(err, FK_ENOMEM, "out of memory");
    }
    r->f = f;
    r->blk = blk;
    snprintf(r->name, sizeof r->name, "%s", name);
    unsigned char h[HDR];
    int st = read_exact(r, h, HDR, "the stream header", err);
    if (st == FK_OK && memcmp(h, fk_magic, 8) != 0)
        st = fk_fail(err, FK_EFORMAT, "%s: not a fofkit stream (bad magic)", r->name);
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

/* Consumes the payload of the current chunk, passing each stored block to
 * sink (if any), checks the CRC and skips the padding. */
static int drain(fk_reader *r, int (*sink)(void *, const void *, size_t, fk_error *), void *ctx, fk_error *err)
{
    uint64_t left = r->cur.stored;
    uint32_t crc = 0;
    r->pending = 0;
    while (left > 0) {
        size_t n = left < BLOCK ? (size_t)left : BLOCK;
        int st = read_exact(r, r->blk, n, "a chunk payload", err);
        if (st) return st;
        crc = (uint32_t)crc32_z(crc, r->blk, n);
        if (sink && (st = sink(ctx, r->blk, n, err))) return st;
        left -= n;
    }
    if (!fk_crc_ok(r->cur.crc, crc))
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s: payload CRC mismatch (damaged data)", r->name, r->cur.tag);
    uint64_t pad = pad_of(r->cur.stored);
    if (pad == 0) return FK_OK;
    int st = read_exact(r, r->blk, (size_t)pad, "chunk padding", err);
    for (uint64_t i = 0; i < pad && !st; i++)
        if (r->blk[i] != 0)
            st = fk_fail(err, FK_EFORMAT, "%s: chunk %s: nonzero padding (damaged data)", r->name, r->cur.tag);
    return st;
}

int fk_reader_next(fk_reader *r, fk_chunk *c, fk_error *err)
{
    if (r->ended) return 0;
    if (r->pending) {
        int st = drain(r, NULL, NULL, err);
        if (st) return st;
    }
    unsigned char h[HDR];
    size_t got = fread(h, 1, HDR, r->f);
    r->off += got;
    if (got == 0 && !ferror(r->f))
        return fk_fail(err, FK_EFORMAT, "%s: truncated stream (no END chunk)", r->name);
    if (got != HDR) {
        if (ferror(r->f)) return fk_fail(err, FK_EIO, "%s: read error: %s", r->name, strerror(errno));
        return fk_fail(err, FK_EFORMAT, "%s: truncated stream (ends inside a chunk header)", r->name);
    }
    int st = decode(r, h, c, err);
    if (st) return st;
    r->cur = *c;
    r->pending = 1;
    if (strcmp(c->tag, "END") == 0) {
        if (c->stored != 0)
            return fk_fail(err, FK_EFORMAT, "%s: END chunk carries a payload", r->name);
        r->pending = 0;
        r->ended = 1;
        if (fgetc(r->f) != EOF)
            return fk_fail(err, FK_EFORMAT, "%s: data after the END chunk", r->name);
        return 0;
    }
    return 1;
}

struct inflate_ctx {
    z_stream z;
    unsigned char *out;
    uint64_t outsize, done;
    int ended;
    const char *name, *tag;
};

static int inflate_block(void *vctx, const void *in, size_t n, fk_error *err)
{
    struct inflate_ctx *x = vctx;
    if (x->ended)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s: data after the end of its zlib stream", x->name, x->tag);
    x->z.next_in = (Bytef *)in;
    x->z.avail_in = (uInt)n;
    while (x->z.avail_in > 0) {
        uint64_t room = x->outsize - x->done;
        x->z.next_out = x->out + x->done;
        x->z.avail_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
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

static int copy_block(void *vctx, const void *in, size_t n, fk_error *err)
{
    (void)err;
    unsigned char **p = vctx;
    memcpy(*p, in, n);
    *p += n;
    return FK_OK;
}

int fk_reader_read(fk_reader *r, void *buf, uint64_t bufsize, fk_error *err)
{
    if (!r->pending)
        return fk_fail(err, FK_EINVAL, "%s: no chunk payload to read", r->name);
    uint64_t raw = fk_chunk_rawsize(&r->cur);
    if (bufsize != raw)
        return fk_fail(err, FK_EINVAL, "%s: chunk %s: buffer of %llu bytes for %llu", r->name, r->cur.tag,
                       (unsigned long long)bufsize, (unsigned long long)raw);
    if (!(r->cur.flags & FK_CF_ZLIB)) {
        unsigned char *p = buf;
        return drain(r, copy_block, &p, err);
    }
    struct inflate_ctx x;
    memset(&x, 0, sizeof x);
    if (inflateInit(&x.z) != Z_OK) return fk_fail(err, FK_ENOMEM, "out of memory (zlib)");
    x.out = buf;
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

int fk_reader_load(fk_reader *r, void **buf, fk_error *err)
{
    *buf = NULL;
    uint64_t raw = fk_chunk_rawsize(&r->cur);
    void *p = malloc(raw ? (size_t)raw : 1);
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

uint64_t fk_reader_offset(const fk_reader *r)
{
    return r->off;
}

void fk_reader_close(fk_reader *r)
{
    if (!r) return;
    free(r->blk);
    free(r);
}

/* ---- writer ---- */

static int write_all(fk_writer *w, const void *p, uint64_t n, fk_error *err)
{
    if (n && fwrite(p, 1, (size_t)n, w->f) != n)
        return fk_fail(err, FK_EIO, "write error: %s", strerror(errno));
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
    w->f = f;
    w->zlevel = zlevel;
    unsigned char h[HDR] = {0};
    memcpy(h, fk_magic, 8);
    put32(h + 8, FK_STREAM_VERSION);
    put32(h + 60, crc_of(h, 60));
    int st = write_all(w, h, HDR, err);
    if (st) {
        free(w);
        return st;
    }
    *out = w;
    return FK_OK;
}

static int put_stored(fk_writer *w, const fk_chunk *c, const void *stored, fk_error *err)
{
    unsigned char h[HDR];
    encode(h, c);
    int st = write_all(w, h, HDR, err);
    if (!st) st = write_all(w, stored, c->stored, err);
    if (!st) st = write_pad(w, err);
    return st;
}

int fk_writer_put(fk_writer *w, const fk_chunk *spec, const void *data, fk_error *err)
{
    fk_chunk c = *spec;
    if (!tag_ok(c.tag) || fk_dtype_size(c.dtype) == 0 || c.ncols == 0)
        return fk_fail(err, FK_EINVAL, "invalid chunk description (tag '%s', type '%s')", c.tag, c.dtype);
    uint64_t raw = fk_chunk_rawsize(&c);
    c.flags &= ~FK_CF_ZLIB;
    if (w->zlevel == 0) {
        c.stored = raw;
        c.crc = crc_of(data, raw);
        return put_stored(w, &c, data, err);
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
    int st = put_stored(w, &c, z, err);
    free(z);
    return st;
}

int fk_writer_text(fk_writer *w, const char *tag, uint32_t level, const char *text, fk_error *err)
{
    fk_chunk c;
    fk_chunk_init(&c, tag, "|u1", FK_CF_TEXT, strlen(text), 1);
    c.level = level;
    return fk_writer_put(w, &c, text, err);
}

static int write_block(void *vctx, const void *p, size_t n, fk_error *err)
{
    return write_all(vctx, p, n, err);
}

int fk_writer_copy(fk_writer *w, fk_reader *r, const fk_chunk *c, fk_error *err)
{
    if (w->zlevel > 0 && !(c->flags & FK_CF_ZLIB)) {
        void *buf;
        int st = fk_reader_load(r, &buf, err);
        if (st) return st;
        st = fk_writer_put(w, c, buf, err);
        free(buf);
        return st;
    }
    unsigned char h[HDR];
    encode(h, c);
    int st = write_all(w, h, HDR, err);
    if (!st) st = drain(r, write_block, w, err);
    if (!st) st = write_pad(w, err);
    return st;
}

int fk_writer_finish(fk_writer *w, fk_error *err)
{
    fk_chunk c;
    fk_chunk_init(&c, "END", "|u1", 0, 0, 1);
    int st = put_stored(w, &c, "", err);
    if (!st && fflush(w->f) != 0) st = fk_fail(err, FK_EIO, "write error: %s", strerror(errno));
    return st;
}

void fk_writer_free(fk_writer *w)
{
    free(w);
}
