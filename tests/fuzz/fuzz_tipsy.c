/* fuzz_tipsy.c - fuzz harness: the tipsy reader (plain and gzip, both byte orders) on a real file descriptor. */
#define _GNU_SOURCE
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "snap.h"
#include "tipsy.h"

/* The input is a whole file, as tipsy2bin would open it: written to a
 * memory file (memfd) so that the reader sees a regular file with a size,
 * or, for gzip-compressed input, decompresses it on the fly. Every input is
 * read with tipsy2bin's defaults; one that reads is read again with other
 * options (a forced byte order, some types only, isolated boundaries, another
 * box), and every result is checked against the reader's promises: counts,
 * finite values inside the box, file-order types and IDs, and a write and
 * read back that gives the same arrays. */

/* A fresh descriptor (the reader's FILE owns it) of one memory file that
 * holds data alone; created once per process, since creating one costs more
 * than a read of a small snapshot. The previous content is gone: a FILE
 * from an earlier call must not be read again. */
static FILE *memfile(const void *data, size_t size)
{
    static int mfd = -1;
    if (mfd < 0 && (mfd = memfd_create("fuzz_tipsy", 0)) < 0) abort();
    if (ftruncate(mfd, 0) != 0 || (size && pwrite(mfd, data, size, 0) != (ssize_t)size)) abort();
    if (lseek(mfd, 0, SEEK_SET) != 0) abort();
    int fd = dup(mfd);
    if (fd < 0) abort();
    FILE *f = fdopen(fd, "rb");
    if (!f) abort();
    return f;
}

/* The promises of fk_tipsy_read for a snapshot read with options o. */
static void check_snap(const fk_tipsy_snap *s, const fk_tipsy_opts *o)
{
    const fk_tipsy_header *h = &s->hdr;
    unsigned types = o->types ? o->types : 7;
    FUZZ_ASSERT(h->format == FK_TIPSY_STANDARD || h->format == FK_TIPSY_NATIVE);
    FUZZ_ASSERT((uint64_t)h->ntype[0] + h->ntype[1] + h->ntype[2] == h->nbodies);
    uint64_t n = 0;
    for (int t = 0; t < 3; t++) {
        FUZZ_ASSERT(s->ntype[t] == (((types >> t) & 1) ? h->ntype[t] : 0));
        n += s->ntype[t];
    }
    FUZZ_ASSERT(s->n == n && s->nwrapped <= n);
    FUZZ_ASSERT(s->id_size == (h->nbodies > (UINT64_C(1) << 31) ? 8u : 4u));
    const float lo = (float)o->origin, hi = (float)(o->origin + o->box);
    uint64_t prev_id = 0;
    for (uint64_t i = 0; i < n; i++) {
        for (int d = 0; d < 3; d++) {
            float x = s->pos[3 * i + d];
            FUZZ_ASSERT(isfinite(x) && isfinite(s->vel[3 * i + d]));
            if (o->periodic) FUZZ_ASSERT(x >= lo && x < hi);
        }
        FUZZ_ASSERT(isfinite(s->mass[i]));
        FUZZ_ASSERT(s->type[i] <= FK_STAR && ((types >> s->type[i]) & 1));
        FUZZ_ASSERT(i == 0 || s->type[i] >= s->type[i - 1]);
        uint64_t id = s->id_size == 8 ? ((const uint64_t *)s->id)[i] : ((const uint32_t *)s->id)[i];
        FUZZ_ASSERT(id < h->nbodies && (i == 0 || id > prev_id));
        prev_id = id;
    }
    /* What a stream's POS chunk must hold is what the reader gives. */
    if (o->periodic) {
        fk_snap snap = {.n = n, .box = o->box, .origin = o->origin, .periodic = 1};
        fk_error err = {0};
        FUZZ_ASSERT(fk_snap_check_positions(&snap, s->pos, "fuzz", &err) == FK_OK);
    }
}

/* Writes s as a tipsy file of its own byte order and reads it back: the
 * same particles, bit for bit (no wrapping moves a particle a second time). */
static void check_roundtrip(const fk_tipsy_snap *s, const fk_tipsy_opts *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *w = open_memstream(&buf, &len);
    if (!w) abort();
    fk_error err = {0};
    int st = fk_tipsy_write(w, "fuzz", s->hdr.format, s->hdr.time, s->hdr.pad, s->n, s->pos, s->vel, s->mass, s->type,
                            &err);
    FUZZ_ASSERT(st == FK_OK);
    FUZZ_ASSERT(fclose(w) == 0);
    FILE *f = memfile(buf, len);
    fk_tipsy_opts o2 = *o;
    o2.types = 0;
    fk_tipsy_snap t;
    st = fk_tipsy_read(f, "fuzz", &o2, &t, &err);
    FUZZ_ASSERT(st == FK_OK);
    FUZZ_ASSERT(t.n == s->n && t.hdr.format == s->hdr.format && t.nwrapped == 0);
    FUZZ_ASSERT(memcmp(t.pos, s->pos, s->n * 12) == 0 && memcmp(t.vel, s->vel, s->n * 12) == 0);
    FUZZ_ASSERT(memcmp(t.mass, s->mass, s->n * 4) == 0 && memcmp(t.type, s->type, s->n) == 0);
    FUZZ_ASSERT(t.hdr.time == s->hdr.time || (isnan(t.hdr.time) && isnan(s->hdr.time)));
    fk_tipsy_snap_free(&t);
    fclose(f);
    free(buf);
}

static int read_with(const uint8_t *data, size_t size, const fk_tipsy_opts *o, int roundtrip)
{
    FILE *f = memfile(data, size);
    fk_tipsy_snap s;
    fk_error err = {0};
    int st = fk_tipsy_read(f, "fuzz", o, &s, &err);
    FUZZ_ASSERT_ERR(st, err);
    FUZZ_ASSERT(st == FK_OK || st == FK_EFORMAT || st == FK_ENOMEM);
    if (st == FK_OK) {
        check_snap(&s, o);
        /* Kept particles only: a type left out changes the file. */
        if (roundtrip && s.n < (UINT64_C(1) << 20)) check_roundtrip(&s, o);
    }
    fk_tipsy_snap_free(&s);
    fclose(f);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fk_tipsy_opts o;
    fk_tipsy_opts_default(&o);
    if (read_with(data, size, &o, 1) != FK_OK) return 0;
    static const struct { int format; unsigned types; int periodic; double box, origin; } variants[] = {
        {FK_TIPSY_STANDARD, 0, 1, 1.0, -0.5},   {FK_TIPSY_NATIVE, 0, 1, 1.0, -0.5},
        {FK_TIPSY_AUTO, 2, 1, 1.0, -0.5},       {FK_TIPSY_AUTO, 5, 0, 1.0, -0.5},
        {FK_TIPSY_AUTO, 0, 1, 0.25, 0.0},       {FK_TIPSY_AUTO, 0, 1, 3e5, -7.0},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        o.format = variants[v].format;
        o.types = variants[v].types;
        o.periodic = variants[v].periodic;
        o.box = variants[v].box;
        o.origin = variants[v].origin;
        read_with(data, size, &o, 0);
    }
    return 0;
}
