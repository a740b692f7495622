/* test_tipsy.c - tipsy reading and writing: round trips, byte order, selection, gzip, pipes, wrapping, every error. */
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "snap.h"
#include "tipsy.h"

/* ---- building inputs ------------------------------------------------------ */

typedef struct buf {
    unsigned char *p;
    size_t len;
} buf;

/* A snapshot of ng gas, nd dark, ns star particles with distinct values,
 * positions inside [-0.5, 0.5). */
typedef struct arrays {
    uint64_t n;
    float *pos, *vel, *mass;
    uint8_t *type;
} arrays;

static arrays make_arrays(uint64_t ng, uint64_t nd, uint64_t ns)
{
    arrays a = {ng + nd + ns, NULL, NULL, NULL, NULL};
    a.pos = malloc(a.n * 12 + 1);
    a.vel = malloc(a.n * 12 + 1);
    a.mass = malloc(a.n * 4 + 1);
    a.type = malloc(a.n + 1);
    for (uint64_t i = 0; i < a.n; i++) {
        a.type[i] = i < ng ? FK_GAS : i < ng + nd ? FK_DARK : FK_STAR;
        for (int d = 0; d < 3; d++) {
            a.pos[3 * i + d] = (float)((double)((i * 7919 + (uint64_t)d * 104729) % 1000003) / 1000003.0 - 0.5);
            a.vel[3 * i + d] = (float)i * 0.001f - (float)d * 3.25f;
        }
        a.mass[i] = 1.0f / (float)(i + 1);
    }
    return a;
}

static void free_arrays(arrays *a)
{
    free(a->pos);
    free(a->vel);
    free(a->mass);
    free(a->type);
}

static buf write_tipsy(const arrays *a, int format, double time, int32_t pad)
{
    buf b = {NULL, 0};
    FILE *f = open_memstream((char **)&b.p, &b.len);
    fk_error err = {0};
    CHECK_MSG(fk_tipsy_write(f, "mem", format, time, pad, a->n, a->pos, a->vel, a->mass, a->type, &err) == FK_OK, "%s",
              err.msg);
    fclose(f);
    return b;
}

/* The bytes as a regular file, positioned at its start. */
static FILE *as_file(const void *p, size_t len)
{
    FILE *f = tmpfile();
    if (len) CHECK(fwrite(p, 1, len, f) == len);
    fflush(f);
    rewind(f);
    return f;
}

/* The bytes through a pipe, written by a child process (so the reader sees
 * no size). *child is waited for by close_pipe. */
static FILE *as_pipe(const void *p, size_t len, pid_t *child)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(NULL);
    *child = fork();
    if (*child == 0) {
        close(fds[0]);
        const unsigned char *q = p;
        while (len) {
            ssize_t k = write(fds[1], q, len);
            if (k <= 0) _exit(1);
            q += k;
            len -= (size_t)k;
        }
        _exit(0);
    }
    close(fds[1]);
    return fdopen(fds[0], "rb");
}

static void close_pipe(FILE *f, pid_t child)
{
    fclose(f);
    waitpid(child, NULL, 0);
}

/* gzip-compressed bytes. */
static buf gzip_bytes(const void *p, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    CHECK(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    buf b = {malloc(deflateBound(&z, len) + 64), 0};
    z.next_in = (unsigned char *)p;
    z.avail_in = (uInt)len;
    z.next_out = b.p;
    z.avail_out = (uInt)(deflateBound(&z, len) + 64);
    CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
    b.len = z.total_out;
    deflateEnd(&z);
    return b;
}

enum { FILEIN, PIPEIN, GZFILE, GZPIPE };

/* Reads the bytes given through one of the input kinds. */
static int read_as(const void *p, size_t len, int how, const fk_tipsy_opts *o, fk_tipsy_snap *s, fk_error *err)
{
    fk_error_clear(err);
    buf z = {NULL, 0};
    if (how == GZFILE || how == GZPIPE) {
        z = gzip_bytes(p, len);
        p = z.p;
        len = z.len;
    }
    pid_t child = 0;
    FILE *f = how == FILEIN || how == GZFILE ? as_file(p, len) : as_pipe(p, len, &child);
    int st = fk_tipsy_read(f, "in", o, s, err);
    if (child)
        close_pipe(f, child);
    else
        fclose(f);
    free(z.p);
    return st;
}

static fk_tipsy_opts opts_types(unsigned types)
{
    fk_tipsy_opts o;
    fk_tipsy_opts_default(&o);
    o.types = types;
    return o;
}

/* Checks that s holds particles of a whose types are in mask, in order, with their file indices as IDs. */
static void check_same(const fk_tipsy_snap *s, const arrays *a, unsigned mask)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < a->n; i++) {
        if (!((mask >> a->type[i]) & 1)) continue;
        if (k >= s->n) {
            CHECK_MSG(0, "too few particles read: %llu", (unsigned long long)s->n);
            return;
        }
        CHECK(memcmp(s->pos + 3 * k, a->pos + 3 * i, 12) == 0);
        CHECK(memcmp(s->vel + 3 * k, a->vel + 3 * i, 12) == 0);
        CHECK(memcmp(s->mass + k, a->mass + i, 4) == 0);
        CHECK(s->type[k] == a->type[i]);
        CHECK(s->id_size == 4 && ((uint32_t *)s->id)[k] == i);
        k++;
    }
    CHECK(k == s->n);
}

/* Expects reading p through how to fail with code and exactly msg. */
static void expect_error(const void *p, size_t len, int how, const fk_tipsy_opts *o, int code, const char *msg)
{
    fk_tipsy_snap s;
    fk_error err = {0};
    int st = read_as(p, len, how, o, &s, &err);
    CHECK_MSG(st == code && strcmp(err.msg, msg) == 0, "how %d: got %d '%s', expected %d '%s'", how, st, err.msg, code,
              msg);
    fk_tipsy_snap_free(&s);
}

/* ---- the tests ------------------------------------------------------------- */

static void test_round_trip(void)
{
    arrays a = make_arrays(5, 7, 3);
    buf std = write_tipsy(&a, FK_TIPSY_STANDARD, 0.25, 0);
    buf nat = write_tipsy(&a, FK_TIPSY_NATIVE, 0.25, 0);
    CHECK(std.len == 32 + 5 * 48 + 7 * 36 + 3 * 44 && nat.len == std.len);
    /* standard header: time 0.25 big-endian, nbodies 15, ndim 3, 5 7 3, pad 0 */
    static const unsigned char hdr[32] = {0x3f, 0xd0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 0, 0, 0, 3,
                                          0,    0,    0, 5, 0, 0, 0, 7, 0, 0, 0, 3,  0, 0, 0, 0};
    CHECK(memcmp(std.p, hdr, 32) == 0);
    /* native is standard with every field byte-reversed */
    int swapped = 1;
    for (size_t i = 0; i < 8; i++) swapped &= nat.p[i] == std.p[7 - i];
    for (size_t w = 8; w < std.len; w += 4)
        for (int k = 0; k < 4; k++) swapped &= nat.p[w + k] == std.p[w + 3 - k];
    CHECK(swapped);
    /* the star's record: mass, pos, vel, then metals tform eps phi zero */
    const unsigned char *star = std.p + 32 + 5 * 48 + 7 * 36;
    float m;
    uint32_t u = (uint32_t)star[0] << 24 | (uint32_t)star[1] << 16 | (uint32_t)star[2] << 8 | star[3];
    memcpy(&m, &u, 4);
    CHECK(m == a.mass[12]);
    static const unsigned char zero[16] = {0};
    CHECK(memcmp(star + 28, zero, 16) == 0);

    for (int how = FILEIN; how <= GZPIPE; how++) {
        for (int fmt = 0; fmt < 2; fmt++) {
            buf *b = fmt ? &nat : &std;
            fk_tipsy_snap s;
            fk_error err = {0};
            fk_tipsy_opts o = opts_types(0);
            CHECK_MSG(read_as(b->p, b->len, how, &o, &s, &err) == FK_OK, "%s", err.msg);
            CHECK(s.hdr.format == (fmt ? FK_TIPSY_NATIVE : FK_TIPSY_STANDARD));
            CHECK(s.hdr.time == 0.25 && s.hdr.nbodies == 15 && s.hdr.ndim == 3 && s.hdr.header_size == 32);
            CHECK(s.hdr.ntype[0] == 5 && s.hdr.ntype[1] == 7 && s.hdr.ntype[2] == 3);
            CHECK(s.n == 15 && s.ntype[0] == 5 && s.ntype[1] == 7 && s.ntype[2] == 3 && s.nwrapped == 0);
            CHECK(s.compressed == (how == GZFILE || how == GZPIPE));
            check_same(&s, &a, 7);
            fk_tipsy_snap_free(&s);
            /* forcing the right format reads the same */
            o.format = fmt ? FK_TIPSY_NATIVE : FK_TIPSY_STANDARD;
            CHECK_MSG(read_as(b->p, b->len, how, &o, &s, &err) == FK_OK, "%s", err.msg);
            check_same(&s, &a, 7);
            fk_tipsy_snap_free(&s);
        }
    }
    free(std.p);
    free(nat.p);
    free_arrays(&a);
}

static void test_selection(void)
{
    arrays a = make_arrays(4, 6, 5);
    buf b = write_tipsy(&a, FK_TIPSY_STANDARD, 1, 0);
    for (unsigned mask = 1; mask < 8; mask++) {
        fk_tipsy_snap s;
        fk_error err = {0};
        fk_tipsy_opts o = opts_types(mask);
        CHECK_MSG(read_as(b.p, b.len, mask & 1 ? FILEIN : PIPEIN, &o, &s, &err) == FK_OK, "%s", err.msg);
        CHECK(s.ntype[0] == (mask & 1 ? 4u : 0u) && s.ntype[1] == (mask & 2 ? 6u : 0u) &&
              s.ntype[2] == (mask & 4 ? 5u : 0u));
        CHECK(s.hdr.nbodies == 15);
        check_same(&s, &a, mask);
        fk_tipsy_snap_free(&s);
    }
    free(b.p);
    free_arrays(&a);
}

/* Many blocks: a snapshot larger than the reader's block, read every way. */
static void test_large(void)
{
    arrays a = make_arrays(70000, 150000, 1000);
    buf b = write_tipsy(&a, FK_TIPSY_STANDARD, 1, 0);
    for (int how = FILEIN; how <= GZPIPE; how++) {
        fk_tipsy_snap s;
        fk_error err = {0};
        fk_tipsy_opts o = opts_types(how == PIPEIN ? 6 : 0);
        CHECK_MSG(read_as(b.p, b.len, how, &o, &s, &err) == FK_OK, "%s", err.msg);
        check_same(&s, &a, how == PIPEIN ? 6 : 7);
        fk_tipsy_snap_free(&s);
    }
    /* a bad particle in a late block is named by its file index */
    fk_tipsy_opts o = opts_types(0);
    const size_t at = 32 + 70000 * 48 + 149999 * 36 + 16; /* dark 149999's vx */
    unsigned char saved[4];
    memcpy(saved, b.p + at, 4);
    memcpy(b.p + at, "\x7f\x80\x00\x00", 4); /* +inf */
    expect_error(b.p, b.len, FILEIN, &o, FK_EFORMAT,
                 "in: particle 219999 (dark) has a non-finite velocity (inf 216.749 213.499)");
    /* with a second bad particle in an earlier block (gas 65600's mass, a
     * block read by another thread), every input kind and every number of
     * threads names that one; a slice that starts after it names the late one */
    const size_t early = 32 + 65600 * 48;
    unsigned char saved2[4];
    memcpy(saved2, b.p + early, 4);
    memcpy(b.p + early, "\x7f\xc0\x00\x00", 4); /* nan */
    static const int threads[] = {1, 2, 3, 8};
    const int nt = omp_get_max_threads();
    for (int k = 0; k < 4; k++) {
        omp_set_num_threads(threads[k]);
        for (int how = FILEIN; how <= GZPIPE; how++)
            expect_error(b.p, b.len, how, &o, FK_EFORMAT, "in: particle 65600 (gas) has a non-finite mass (nan)");
        fk_tipsy_opts late = o;
        late.slice = 2;
        late.nslices = 3;
        expect_error(b.p, b.len, FILEIN, &late, FK_EFORMAT,
                     "in: particle 219999 (dark) has a non-finite velocity (inf 216.749 213.499)");
    }
    omp_set_num_threads(nt);
    memcpy(b.p + early, saved2, 4);
    memcpy(b.p + at, saved, 4);
    /* truncation in a late block, through a pipe: how many particles arrived */
    expect_error(b.p, b.len - 50, PIPEIN, &o, FK_EFORMAT,
                 "in: truncated: the header promises 221000 particles (70000 gas, 150000 dark, 1000 star), the input "
                 "ends after 220998 particles");
    expect_error(b.p, b.len - 50, GZFILE, &o, FK_EFORMAT,
                 "in: truncated: the header promises 221000 particles (70000 gas, 150000 dark, 1000 star), the input "
                 "ends after 220998 particles");
    free(b.p);
    free_arrays(&a);
}

static void test_pad_and_28(void)
{
    arrays a = make_arrays(2, 3, 1);
    buf b = write_tipsy(&a, FK_TIPSY_NATIVE, 2.5, 1);
    fk_tipsy_snap s;
    fk_error err = {0};
    fk_tipsy_opts o = opts_types(0);
    CHECK_MSG(read_as(b.p, b.len, FILEIN, &o, &s, &err) == FK_OK, "%s", err.msg);
    CHECK(s.hdr.pad == 1 && s.hdr.header_size == 32);
    fk_tipsy_snap_free(&s);

    /* the 28-byte native header: the same file without its pad field */
    memmove(b.p + 28, b.p + 32, b.len - 32);
    CHECK_MSG(read_as(b.p, b.len - 4, FILEIN, &o, &s, &err) == FK_OK, "%s", err.msg);
    CHECK(s.hdr.header_size == 28 && s.hdr.time == 2.5 && s.n == 6);
    check_same(&s, &a, 7);
    fk_tipsy_snap_free(&s);
    o.format = FK_TIPSY_NATIVE;
    CHECK_MSG(read_as(b.p, b.len - 4, FILEIN, &o, &s, &err) == FK_OK, "%s", err.msg);
    CHECK(s.hdr.header_size == 28);
    fk_tipsy_snap_free(&s);
    /* not recognisable without the size: read as 32 bytes, it comes out short */
    o.format = FK_TIPSY_AUTO;
    expect_error(b.p, b.len - 4, PIPEIN, &o, FK_EFORMAT,
                 "in: truncated: the header promises 6 particles (2 gas, 3 dark, 1 star), the input ends after 5 particles");
    /* standard files have no 28-byte variant */
    buf sb = write_tipsy(&a, FK_TIPSY_STANDARD, 2.5, 0);
    memmove(sb.p + 28, sb.p + 32, sb.len - 32);
    expect_error(sb.p, sb.len - 4, FILEIN, &o, FK_EFORMAT,
                 "in: truncated: the header promises 6 particles (2 gas, 3 dark, 1 star) in 280 bytes, the file has 276");
    free(sb.p);
    free(b.p);
    free_arrays(&a);
}

/* Reads one dark particle at (x, y, z) with the given box; returns the status, the wrapped position in out. */
static int wrap_one(float x, float y, float z, double box, double origin, int periodic, float out[3], fk_error *err)
{
    arrays a = make_arrays(0, 1, 0);
    a.pos[0] = x;
    a.pos[1] = y;
    a.pos[2] = z;
    buf b = write_tipsy(&a, FK_TIPSY_STANDARD, 1, 0);
    fk_tipsy_opts o = opts_types(0);
    o.box = box;
    o.origin = origin;
    o.periodic = periodic;
    fk_tipsy_snap s;
    int st = read_as(b.p, b.len, FILEIN, &o, &s, err);
    if (!st) {
        memcpy(out, s.pos, 12);
        CHECK(s.nwrapped == (memcmp(out, a.pos, 12) != 0));
    }
    fk_tipsy_snap_free(&s);
    free(b.p);
    free_arrays(&a);
    return st;
}

static void test_wrap(void)
{
    float p[3];
    fk_error err = {0};
    /* the edges: -0.5 stays, 0.5 is -0.5; a hair below -0.5 comes in at the top */
    CHECK(wrap_one(-0.5f, 0.5f, 0.49999997f, 1, -0.5, 1, p, &err) == FK_OK);
    CHECK(p[0] == -0.5f && p[1] == -0.5f && p[2] == 0.49999997f);
    CHECK(wrap_one(-0.50000006f, 1.4999999f, -1.5f, 1, -0.5, 1, p, &err) == FK_OK);
    CHECK(p[0] == 0.49999994f && p[1] == 0.49999988f && p[2] == -0.5f);
    /* x + L rounds to exactly origin + L: that point is the origin */
    CHECK(wrap_one(-1e-10f, 0.0f, 0.99999994f, 1, 0, 1, p, &err) == FK_OK);
    CHECK(p[0] == 0.0f && p[1] == 0.0f && p[2] == 0.99999994f);
    /* a box whose edges are not floats: the result is inside [(float)origin, (float)(origin + box)) */
    CHECK(wrap_one(0.2f, (float)-0.1, -0.1000001f, 0.3, -0.1, 1, p, &err) == FK_OK);
    for (int d = 0; d < 3; d++) CHECK(p[d] >= (float)-0.1 && p[d] < (float)0.2);
    /* more than one box length outside */
    CHECK(wrap_one(0.1f, 1.5f, 0.2f, 1, -0.5, 1, p, &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "in: particle 0 (dark) at (0.1 1.5 0.2) lies more than one box length outside "
                               "[-0.5, 0.5) (wrong --box? or --no-periodic for an isolated snapshot)"),
              "%s", err.msg);
    CHECK(wrap_one(-1.5000001f, 0, 0, 1, -0.5, 1, p, &err) == FK_EFORMAT);
    CHECK(wrap_one(25.0f, 0, 0, 100, -50, 1, p, &err) == FK_OK && p[0] == 25.0f);
    /* isolated: nothing is wrapped or checked but finiteness */
    CHECK(wrap_one(12.0f, -7.5f, 0.5f, 1, -0.5, 0, p, &err) == FK_OK);
    CHECK(p[0] == 12.0f && p[1] == -7.5f && p[2] == 0.5f);

    /* fk_tipsy_wrap directly */
    float x = 0.5f;
    CHECK(fk_tipsy_wrap(&x, -0.5, 1, -0.5f, 0.5f) == 1 && x == -0.5f);
    x = 0.25f;
    CHECK(fk_tipsy_wrap(&x, -0.5, 1, -0.5f, 0.5f) == 0 && x == 0.25f);
    x = 3.0f;
    CHECK(fk_tipsy_wrap(&x, -0.5, 1, -0.5f, 0.5f) == -1 && x == 3.0f);
}

/* Overwrites the 4-byte field at off (big-endian). */
static void poke(unsigned char *p, size_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[off + (size_t)i] = (unsigned char)(v >> (24 - 8 * i));
}

static void test_errors(void)
{
    arrays a = make_arrays(1, 10, 2);
    buf b = write_tipsy(&a, FK_TIPSY_STANDARD, 1, 0);
    fk_tipsy_opts o = opts_types(0);
    const char *trunc = "in: truncated: the header promises 13 particles (1 gas, 10 dark, 2 star) in 528 bytes, the file "
                        "has 527";

    for (int how = FILEIN; how <= GZPIPE; how++) {
        expect_error(b.p, 0, how, &o, FK_EFORMAT, "in: empty input (no tipsy header)");
        expect_error(b.p, 20, how, &o, FK_EFORMAT, "in: only 20 bytes, too short for a tipsy header (32 bytes)");
        expect_error(b.p, b.len - 1, how, &o, FK_EFORMAT,
                     how == FILEIN ? trunc
                                   : "in: truncated: the header promises 13 particles (1 gas, 10 dark, 2 star), the "
                                     "input ends after 12 particles");
        unsigned char *more = malloc(b.len + 3);
        memcpy(more, b.p, b.len);
        memcpy(more + b.len, "xyz", 3);
        expect_error(more, b.len + 3, how, &o, FK_EFORMAT,
                     how == FILEIN ? "in: trailing data: the header promises 13 particles (1 gas, 10 dark, 2 star) in "
                                     "528 bytes, the file has 531"
                                   : "in: trailing data after the 13 particles the header promises");
        free(more);
    }
    expect_error(b.p, 30, FILEIN, &o, FK_EFORMAT,
                 "in: truncated: the header promises 13 particles (1 gas, 10 dark, 2 star) in 528 bytes, the file has 30");
    expect_error(b.p, 30, PIPEIN, &o, FK_EFORMAT, "in: only 30 bytes, too short for a tipsy header (32 bytes)");

    unsigned char *c = malloc(b.len);
    /* ndim */
    memcpy(c, b.p, b.len);
    poke(c, 12, 2);
    expect_error(c, b.len, FILEIN, &o, FK_EFORMAT,
                 "in: not a tipsy file: ndim reads 2 (big-endian) or 33554432 (little-endian), not 3");
    /* a forced format skips the ndim test but not the others */
    o.format = FK_TIPSY_STANDARD;
    fk_tipsy_snap s;
    fk_error err = {0};
    CHECK_MSG(read_as(c, b.len, FILEIN, &o, &s, &err) == FK_OK && s.hdr.ndim == 2, "%s", err.msg);
    fk_tipsy_snap_free(&s);
    o.format = FK_TIPSY_NATIVE;
    /* (byte-swapped, 13 = 1 + 10 + 2 still adds up: the size check catches it) */
    expect_error(b.p, b.len, FILEIN, &o, FK_EFORMAT,
                 "in: truncated: the header promises 218103808 particles (16777216 gas, 167772160 dark, 33554432 star) "
                 "in 8321499168 bytes, the file has 528");
    memcpy(c, b.p, b.len);
    poke(c, 8, 0x0e000000u);
    expect_error(c, b.len, FILEIN, &o, FK_EFORMAT,
                 "in: inconsistent native tipsy header: nbodies 14 but nsph + ndark + nstar = 218103808");
    o.format = FK_TIPSY_AUTO;
    /* nbodies != nsph + ndark + nstar */
    memcpy(c, b.p, b.len);
    poke(c, 8, 14);
    expect_error(c, b.len, FILEIN, &o, FK_EFORMAT,
                 "in: inconsistent standard tipsy header: nbodies 14 but nsph + ndark + nstar = 13");
    /* counts that do not match the size: more, then fewer particles than the file holds */
    memcpy(c, b.p, b.len);
    poke(c, 8, 14);
    poke(c, 20, 11);
    expect_error(c, b.len, FILEIN, &o, FK_EFORMAT,
                 "in: truncated: the header promises 14 particles (1 gas, 11 dark, 2 star) in 564 bytes, the file has 528");
    poke(c, 8, 12);
    poke(c, 20, 9);
    expect_error(c, b.len, FILEIN, &o, FK_EFORMAT,
                 "in: trailing data: the header promises 12 particles (1 gas, 9 dark, 2 star) in 492 bytes, the file has "
                 "528");
    /* non-finite values, named by file index and type */
    memcpy(c, b.p, b.len);
    memcpy(c + 32 + 48 + 36 * 3 + 8, "\x7f\xc0\x00\x00", 4); /* dark 3 (file index 4): y = NaN */
    expect_error(c, b.len, FILEIN, &o, FK_EFORMAT, "in: particle 4 (dark) has a non-finite position (-0.468324 nan -0.258867)");
    memcpy(c, b.p, b.len);
    memcpy(c + 32 + 48 + 36 * 10 + 44, "\xff\x80\x00\x00", 4); /* star 1 (file index 12): mass = -inf */
    expect_error(c, b.len, GZFILE, &o, FK_EFORMAT, "in: particle 12 (star) has a non-finite mass (-inf)");
    /* ... but only for particles kept */
    o.types = 3;
    CHECK_MSG(read_as(c, b.len, FILEIN, &o, &s, &err) == FK_OK && s.n == 11, "%s", err.msg);
    fk_tipsy_snap_free(&s);
    o.types = 0;
    /* far outside the box */
    memcpy(c, b.p, b.len);
    memcpy(c + 32 + 4, "\x40\x00\x00\x00", 4); /* gas 0: x = 2 */
    expect_error(c, b.len, PIPEIN, &o, FK_EFORMAT,
                 "in: particle 0 (gas) at (2 -0.395271 -0.290543) lies more than one box length outside [-0.5, 0.5) "
                 "(wrong --box? or --no-periodic for an isolated snapshot)");
    o.box = 4;
    o.origin = -2;
    CHECK_MSG(read_as(c, b.len, FILEIN, &o, &s, &err) == FK_OK && s.pos[0] == -2.0f && s.nwrapped == 1, "%s", err.msg);
    fk_tipsy_snap_free(&s);
    o = opts_types(0);

    /* corrupt gzip: a valid gzip header and then garbage; a damaged CRC */
    buf z = gzip_bytes(b.p, b.len);
    memcpy(c, z.p, 10);
    memset(c + 10, 0xff, 40);
    expect_error(c, 50, FILEIN, &o, FK_EFORMAT, "in: corrupt gzip data (invalid block type)");
    memcpy(c, z.p, z.len);
    c[z.len - 6] ^= 0x55;
    expect_error(c, z.len, FILEIN, &o, FK_EFORMAT, "in: corrupt gzip data (incorrect data check)");
    /* a gzip stream cut short is a truncated snapshot */
    fk_error_clear(&err);
    CHECK(read_as(z.p, z.len / 2, FILEIN, &o, &s, &err) == FK_EFORMAT);
    const char *cut = "in: truncated: the header promises 13 particles (1 gas, 10 dark, 2 star), the input ends after ";
    CHECK_MSG(!strncmp(err.msg, cut, strlen(cut)), "%s", err.msg);
    fk_tipsy_snap_free(&s);
    free(z.p);

    /* bad options and inputs */
    o.box = 0;
    expect_error(b.p, b.len, FILEIN, &o, FK_EINVAL, "in: box 0 with origin -0.5 is not a valid periodic box");
    o = opts_types(8);
    expect_error(b.p, b.len, FILEIN, &o, FK_EINVAL, "in: invalid tipsy reading options");
    o = opts_types(0);
    FILE *mf = fmemopen(b.p, b.len, "rb");
    fk_error_clear(&err);
    CHECK(fk_tipsy_read(mf, "mem", &o, &s, &err) == FK_EINVAL);
    fk_tipsy_snap_free(&s);
    fclose(mf);

    /* writing: types out of order, bad format, a write error */
    FILE *devnull = fopen("/dev/null", "wb");
    uint8_t types[3] = {1, 0, 2};
    fk_error_clear(&err);
    CHECK(fk_tipsy_write(devnull, "out", FK_TIPSY_STANDARD, 1, 0, 3, a.pos, NULL, NULL, types, &err) == FK_EINVAL);
    CHECK_MSG(!strcmp(err.msg, "out: particle 1: types must be in the order gas, dark, star"), "%s", err.msg);
    fk_error_clear(&err);
    CHECK(fk_tipsy_write(devnull, "out", FK_TIPSY_AUTO, 1, 0, 3, a.pos, NULL, NULL, a.type, &err) == FK_EINVAL);
    fclose(devnull);
    FILE *full = fopen("/dev/full", "wb");
    if (full) {
        setvbuf(full, NULL, _IONBF, 0);
        fk_error_clear(&err);
        CHECK(fk_tipsy_write(full, "full", FK_TIPSY_STANDARD, 1, 0, a.n, a.pos, NULL, NULL, a.type, &err) == FK_EIO);
        CHECK_MSG(!strcmp(err.msg, "full: cannot write: No space left on device"), "%s", err.msg);
        fclose(full);
    }
    free(c);
    free(b.p);
    free_arrays(&a);
}

/* Writing with NULL velocities and a common mass. */
static void test_write_defaults(void)
{
    arrays a = make_arrays(0, 3, 0);
    buf b = {NULL, 0};
    FILE *f = open_memstream((char **)&b.p, &b.len);
    fk_error err = {0};
    fk_tipsy_header h = {.time = 1, .nbodies = 3, .ndim = 3, .ntype = {0, 3, 0}, .format = FK_TIPSY_NATIVE};
    CHECK(fk_tipsy_write_header(f, "mem", &h, &err) == FK_OK);
    CHECK(fk_tipsy_write_particles(f, "mem", FK_TIPSY_NATIVE, FK_DARK, 3, a.pos, NULL, NULL, 0.125f, &err) == FK_OK);
    fclose(f);
    fk_tipsy_snap s;
    fk_tipsy_opts o = opts_types(0);
    CHECK_MSG(read_as(b.p, b.len, FILEIN, &o, &s, &err) == FK_OK, "%s", err.msg);
    CHECK(s.n == 3 && s.mass[0] == 0.125f && s.mass[2] == 0.125f && s.vel[0] == 0 && s.vel[8] == 0);
    CHECK(memcmp(s.pos, a.pos, 36) == 0);
    fk_tipsy_snap_free(&s);
    free(b.p);
    free_arrays(&a);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    test_round_trip();
    test_selection();
    test_large();
    test_pad_and_28();
    test_wrap();
    test_errors();
    test_write_defaults();
    CHECK_DONE();
}
