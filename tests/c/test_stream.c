/* test_stream.c - round trips and damage detection for the stream format (raw and compressed). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "check.h"
#include "fdio.h"
#include "kv.h"
#include "overlay.h"
#include "stream.h"

/* Through a real descriptor (a temporary file): chunks put and handed over
 * (fk_writer_give), one of them large enough (40 MiB) for the reader's
 * slices and the CRC on other cores, read back in order and intact; a
 * damaged byte deep in the large one is caught. */
static void descriptor_round_trip(void)
{
    const uint64_t big = 10u << 20; /* floats: 40 MiB */
    float *a = malloc(big * 4), *b = malloc(1000 * 4);
    for (uint64_t i = 0; i < big; i++) a[i] = (float)(i % 65521) - 7.5f;
    for (int i = 0; i < 1000; i++) b[i] = (float)i;
    FILE *f = tmpfile();
    fk_writer *w;
    fk_error err = {0};
    CHECK(fk_writer_open(&w, f, 0, &err) == FK_OK);
    fk_chunk c;
    fk_chunk_init(&c, "BIG", "<f4", 0, big, 1);
    float *give = malloc(big * 4);
    memcpy(give, a, big * 4);
    CHECK(fk_writer_give(w, &c, give, &err) == FK_OK); /* the writer frees it */
    fk_chunk_init(&c, "SMALL", "<f4", 0, 1000, 1);
    CHECK(fk_writer_put(w, &c, b, &err) == FK_OK);
    float *give2 = malloc(1000 * 4);
    memcpy(give2, b, 1000 * 4);
    fk_chunk_init(&c, "LAST", "<f4", 0, 1000, 1);
    CHECK(fk_writer_give(w, &c, give2, &err) == FK_OK);
    CHECK_MSG(fk_writer_finish(w, &err) == FK_OK, "%s", err.msg);
    fk_writer_free(w);
    const char *order[] = {"BIG", "SMALL", "LAST"};
    { /* a caller that peeked at the first byte through stdio still reads the whole stream */
        rewind(f);
        int ch = getc(f);
        CHECK(ch == 0x89 && ungetc(ch, f) == ch);
        fk_reader *r;
        fk_error e = {0};
        CHECK_MSG(fk_reader_open(&r, f, "peeked", &e) == FK_OK, "%s", e.msg);
        int k = 0, st;
        while ((st = fk_reader_next(r, &c, &e)) == 1) CHECK(k < 3 && strcmp(c.tag, order[k++]) == 0);
        CHECK_MSG(st == 0 && k == 3, "%s", e.msg);
        fk_reader_close(r);
    }
    for (int damage = 0; damage < 2; damage++) {
        if (damage) { /* a bit deep inside BIG's payload */
            long at = 64 + 64 + 30l * 1024 * 1024 + 3;
            fseek(f, at, SEEK_SET);
            int ch = fgetc(f);
            fseek(f, at, SEEK_SET);
            fputc(ch ^ 4, f);
            fflush(f);
        }
        rewind(f);
        fk_reader *r;
        fk_error e = {0};
        CHECK(fk_reader_open(&r, f, "tmp", &e) == FK_OK);
        int k = 0, st;
        while ((st = fk_reader_next(r, &c, &e)) == 1) {
            CHECK(k < 3 && strcmp(c.tag, order[k]) == 0);
            void *d;
            st = fk_reader_load(r, &d, &e);
            if (damage && k == 0) {
                CHECK(st == FK_EFORMAT && strstr(e.msg, "chunk BIG: payload CRC mismatch"));
                break;
            }
            CHECK_MSG(st == FK_OK, "%s", e.msg);
            CHECK(memcmp(d, k == 0 ? (void *)a : (void *)b, k == 0 ? big * 4 : 4000) == 0);
            free(d);
            k++;
        }
        if (!damage) CHECK(st == 0 && k == 3);
        fk_reader_close(r);
    }
    fclose(f);
    /* a chunk handed over to a full disk: the failure comes with the next call */
    FILE *full = fopen("/dev/full", "wb");
    if (full) {
        fk_error e = {0};
        int st = fk_writer_open(&w, full, 0, &e);
        if (st == FK_OK) { /* the header may sit in a buffer: then the give fails */
            float *g = malloc(big * 4);
            memcpy(g, a, big * 4);
            fk_chunk_init(&c, "BIG", "<f4", 0, big, 1);
            st = fk_writer_give(w, &c, g, &e);
            if (st == FK_OK) st = fk_writer_finish(w, &e);
            fk_writer_free(w);
        }
        CHECK(st == FK_EIO && strstr(e.msg, "No space left"));
        fclose(full);
    }
    /* the CRC on every core is zlib's, for any length and start */
    for (uint64_t n = 0; n < big * 4; n = n * 3 + 1000003)
        for (uint32_t start = 0; start < 2; start++)
            CHECK(fk_crc32(start * 12345, a, n) == (uint32_t)crc32_z(start * 12345, (const Bytef *)a, n));
    free(a);
    free(b);
}

/* The reading end of a pipe drained into memory by a thread of its own. */
typedef struct drain_ctx {
    int fd;
    char *buf;
    size_t len;
} drain_ctx;

static void *drain_pipe(void *arg)
{
    drain_ctx *d = arg;
    FILE *m = open_memstream(&d->buf, &d->len);
    char b[65536];
    ssize_t k;
    while ((k = read(d->fd, b, sizeof b)) > 0) fwrite(b, 1, (size_t)k, m);
    fclose(m);
    return NULL;
}

/* fk_writer_later: a stream read from a regular file and written on with
 * its chunks listed (copies by offset, payloads kept, a text, a 4-byte
 * payload handed over) and new chunks after them: the output holds every
 * chunk in order, intact; a listed chunk that fails to go to a full disk
 * fails the next call. */
static void later_round_trip(void)
{
    const uint64_t big = 5u << 20;
    float *a = malloc(big * 4);
    for (uint64_t i = 0; i < big; i++) a[i] = (float)(i % 4099) * 0.5f;
    FILE *src = tmpfile();
    fk_writer *w;
    fk_error err = {0};
    fk_chunk c;
    CHECK(fk_writer_open(&w, src, 0, &err) == FK_OK);
    const char *tags[] = {"A", "B", "C", "D"};
    for (int k = 0; k < 4; k++) {
        fk_chunk_init(&c, tags[k], "<f4", 0, big - (uint64_t)k * 1001, 1);
        CHECK(fk_writer_put(w, &c, a + k, &err) == FK_OK);
    }
    CHECK(fk_writer_finish(w, &err) == FK_OK);
    fk_writer_free(w);
    for (int kind = 0; kind < 4; kind++) { /* a file, a full disk, a pipe; a file with FOFKIT_WRITE_LATER=0 */
        const int full = kind == 1;
        int fds[2] = {-1, -1};
        pthread_t reader;
        drain_ctx dc = {-1, NULL, 0};
        FILE *out = NULL;
        if (kind == 2 && pipe(fds) == 0) {
            dc.fd = fds[0];
            out = fdopen(fds[1], "wb");
            pthread_create(&reader, NULL, drain_pipe, &dc);
        } else if (kind != 2) {
            out = full ? fopen("/dev/full", "wb") : tmpfile();
        }
        if (kind == 3) setenv("FOFKIT_WRITE_LATER", "0", 1);
        if (!out) continue;
        rewind(src);
        fk_reader *r;
        CHECK(fk_reader_open(&r, src, "src", &err) == FK_OK);
        int st = fk_writer_open(&w, out, 0, &err);
        void *kept = NULL;
        if (st == FK_OK) {
            fk_writer_later(w, r);
            unsetenv("FOFKIT_WRITE_LATER");
            int k = 0;
            while (st == FK_OK && (st = fk_reader_next(r, &c, &err)) == 1) {
                if (k == 1) { /* loaded, written on from the caller's buffer */
                    st = fk_reader_load(r, &kept, &err);
                    if (!st) st = fk_writer_put_read(w, &c, kept, &err);
                } else if (k == 2) { /* loaded and handed over */
                    void *given;
                    st = fk_reader_load(r, &given, &err);
                    if (!st) st = fk_writer_give_read(w, &c, given, &err);
                } else {
                    st = fk_writer_copy(w, r, &c, &err);
                }
                if (!st && k == 2) st = fk_writer_text(w, "NOTE", 0, "listed text", &err);
                k++;
            }
            if (st == 0 && k == 4) {
                fk_chunk_init(&c, "NEW", "<f4", 0, 1000, 1);
                st = fk_writer_put(w, &c, a, &err); /* waits for the list */
            }
            if (st == FK_OK) st = fk_writer_finish(w, &err);
            fk_writer_free(w);
        }
        fk_reader_close(r);
        free(kept);
        if (full) {
            CHECK_MSG(st == FK_EIO && strstr(err.msg, "No space left"), "%d %s", st, err.msg);
            fclose(out);
            fk_error_clear(&err);
            continue;
        }
        CHECK_MSG(st == FK_OK, "%s", err.msg);
        FILE *back = out;
        if (kind == 2) { /* the pipe closed, its bytes read back from memory */
            fclose(out);
            pthread_join(reader, NULL);
            close(fds[0]);
            back = fmemopen(dc.buf, dc.len, "rb");
        } else {
            rewind(out);
        }
        CHECK(fk_reader_open(&r, back, "out", &err) == FK_OK);
        const char *want[] = {"A", "B", "C", "NOTE", "D", "NEW"};
        int k = 0;
        while ((st = fk_reader_next(r, &c, &err)) == 1) {
            CHECK(k < 6 && strcmp(c.tag, want[k]) == 0);
            void *d;
            if (k == 3) {
                char *t;
                CHECK(fk_reader_load_text(r, &t, &err) == FK_OK && strcmp(t, "listed text") == 0);
                free(t);
            } else {
                CHECK_MSG(fk_reader_load(r, &d, &err) == FK_OK, "%s", err.msg);
                int j = k < 3 ? k : k == 4 ? 3 : 0;
                uint64_t rows = k == 5 ? 1000 : big - (uint64_t)j * 1001;
                CHECK(c.nrows == rows && memcmp(d, a + j, rows * 4) == 0);
                free(d);
            }
            k++;
        }
        CHECK_MSG(st == 0 && k == 6, "%d %s", k, err.msg);
        fk_reader_close(r);
        fclose(back);
        free(dc.buf);
    }
    fclose(src);
    free(a);
}

/* Writes the stream file path: chunk tag (n floats of a from a[0]) and,
 * when tag2, a second of n / 2; or, with base, an overlay of base holding
 * them (fk_overlay_start). */
static void write_file(const char *path, const char *base, const char *tag, const char *tag2, const float *a,
                       uint64_t n)
{
    FILE *f = fopen(path, "wb");
    fk_writer *w = NULL;
    fk_error err = {0};
    fk_chunk c;
    int st = base ? fk_overlay_start(&w, f, base, path, "test_stream", 0, &err) : fk_writer_open(&w, f, 0, &err);
    fk_chunk_init(&c, tag, "<f4", 0, n, 1);
    if (!st) st = fk_writer_put(w, &c, a, &err);
    fk_chunk_init(&c, tag2 ? tag2 : "X", "<f4", 0, n / 2, 1);
    if (!st && tag2) st = fk_writer_put(w, &c, a + 1, &err);
    if (!st) st = fk_writer_finish(w, &err);
    CHECK_MSG(st == FK_OK, "%s: %s", path, err.msg);
    fk_writer_free(w);
    fclose(f);
}

/* Overlays (overlay.h): a base, an overlay of it in another directory and
 * an overlay of that read with follow as one stream (tags, payloads), and
 * written on (a file through fk_writer_later, the copies by offset from
 * each file) as the whole stream; without follow BASE is a chunk; a base
 * rewritten with the same sizes (other payloads: the headers' CRC differs,
 * though each header ends with its own CRC) is refused. */
static void overlay_chain(void)
{
    char dir[] = "/tmp/fk-overlay-XXXXXX", cwd[4096];
    CHECK(mkdtemp(dir) != NULL && getcwd(cwd, sizeof cwd) && chdir(dir) == 0);
    /* names relative to the working directory, as the programs are given them */
    const char *sub = "ov", *base = "b.fof", *o1 = "ov/o1.fof", *o2 = "o2.fof", *whole = "w.fof";
    mkdir(sub, 0700);
    const uint64_t n = 3u << 20; /* 12 MiB: read and checked on several cores */
    float *a = malloc((n + 8) * 4);
    for (uint64_t i = 0; i < n + 8; i++) a[i] = (float)(i % 7919) * 0.125f;
    write_file(base, NULL, "A", "B", a, n);
    write_file(o1, base, "C", NULL, a + 2, 1000);
    write_file(o2, o1, "D", "E", a + 3, 5000);
    fk_error err = {0};
    fk_chunk c;
    char *text = NULL;
    /* the names: relative to the overlay's directory */
    FILE *f = fopen(o1, "rb");
    fk_reader *r;
    CHECK(fk_reader_open(&r, f, o1, &err) == FK_OK);
    CHECK(fk_reader_next(r, &c, &err) == 1 && !strcmp(c.tag, "BASE")); /* not followed: a chunk */
    CHECK(fk_reader_load_text(r, &text, &err) == FK_OK && strstr(text, "base ../b.fof\n") == text);
    free(text);
    fk_reader_close(r);
    fclose(f);
    for (int pass = 0; pass < 2; pass++) { /* read, then written on and read back */
        const char *name = pass ? whole : o2;
        f = fopen(name, "rb");
        CHECK(fk_reader_open(&r, f, name, &err) == FK_OK);
        if (!pass) CHECK(fk_reader_follow(r, name, &err) == FK_OK);
        FILE *out = pass ? NULL : fopen(whole, "wb");
        fk_writer *w = NULL;
        if (out) {
            CHECK(fk_writer_open(&w, out, 0, &err) == FK_OK);
            fk_writer_later(w, r);
        }
        const char *want[] = {"A", "B", "C", "D", "E"};
        const uint64_t rows[] = {n, n / 2, 1000, 5000, 2500}, from[] = {0, 1, 2, 3, 4};
        int k = 0, st;
        while ((st = fk_reader_next(r, &c, &err)) == 1) {
            CHECK_MSG(k < 5 && !strcmp(c.tag, want[k]) && c.nrows == rows[k], "%d %s", k, c.tag);
            if (k == 1 && w) { /* one loaded and written on, the others copied */
                void *d;
                CHECK(fk_reader_load(r, &d, &err) == FK_OK && memcmp(d, a + from[k], rows[k] * 4) == 0);
                CHECK(fk_writer_give_read(w, &c, d, &err) == FK_OK);
            } else if (w) {
                CHECK_MSG(fk_writer_copy(w, r, &c, &err) == FK_OK, "%s", err.msg);
            } else {
                void *d;
                CHECK(fk_reader_load(r, &d, &err) == FK_OK && memcmp(d, a + from[k], rows[k] * 4) == 0);
                free(d);
            }
            k++;
        }
        CHECK_MSG(st == 0 && k == 5, "%d %d %s", st, k, err.msg);
        if (w) {
            CHECK(fk_writer_finish(w, &err) == FK_OK);
            fk_writer_free(w);
            fclose(out);
        }
        fk_reader_close(r);
        fclose(f);
    }
    /* the base rewritten: the same sizes, other payloads */
    uint64_t b1, b2;
    uint32_t c1, c2;
    int fd = open(base, O_RDONLY);
    CHECK(fk_stream_identity(fd, base, &b1, &c1, &err) == FK_OK);
    close(fd);
    write_file(base, NULL, "A", "B", a + 5, n);
    fd = open(base, O_RDONLY);
    CHECK(fk_stream_identity(fd, base, &b2, &c2, &err) == FK_OK);
    close(fd);
    CHECK(b1 == b2 && c1 != c2);
    f = fopen(o2, "rb");
    CHECK(fk_reader_open(&r, f, o2, &err) == FK_OK && fk_reader_follow(r, o2, &err) == FK_OK);
    CHECK(fk_reader_next(r, &c, &err) == FK_EFORMAT);
    CHECK_MSG(strstr(err.msg, "ov/o1.fof: its base ov/../b.fof is not the stream it was written on (") == err.msg,
              "%s", err.msg);
    fk_reader_close(r);
    fclose(f);
    unlink(base), unlink(o1), unlink(o2), unlink(whole);
    rmdir(sub);
    CHECK(chdir(cwd) == 0 && rmdir(dir) == 0);
    free(a);
}

/* Writes a stream of a text chunk and a float array to a memory file. */
static char *make_stream(int zlevel, size_t *len, const float *arr, uint64_t n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    fk_writer *w;
    fk_error err = {0};
    CHECK(fk_writer_open(&w, f, zlevel, &err) == FK_OK);
    CHECK(fk_writer_text(w, "META", 0, "n 5\nname test\n", &err) == FK_OK);
    fk_chunk c;
    fk_chunk_init(&c, "POS", "<f4", FK_CF_PARTICLE, n, 3);
    CHECK(fk_writer_put(w, &c, arr, &err) == FK_OK);
    CHECK(fk_writer_finish(w, &err) == FK_OK);
    fk_writer_free(w);
    fclose(f);
    return buf;
}

/* Reads a stream back; returns the status of the first failure (or FK_OK)
 * and the message in err. */
static int read_stream(const char *buf, size_t len, const float *expect, uint64_t n, fk_error *err)
{
    FILE *f = fmemopen((void *)buf, len, "rb");
    fk_reader *r;
    int st = fk_reader_open(&r, f, "mem", err);
    if (st) {
        fclose(f);
        return st;
    }
    fk_chunk c;
    int chunks = 0;
    while ((st = fk_reader_next(r, &c, err)) == 1) {
        chunks++;
        if (strcmp(c.tag, "META") == 0) {
            char *text;
            if ((st = fk_reader_load_text(r, &text, err))) break;
            uint64_t v = 0;
            CHECK(fk_kv_get_u64(text, "n", &v, "META", err) == FK_OK && v == 5);
            free(text);
        } else if (strcmp(c.tag, "POS") == 0) {
            CHECK(c.nrows == n && c.ncols == 3 && (c.flags & FK_CF_PARTICLE));
            float *got;
            if ((st = fk_reader_load(r, (void **)&got, err))) break;
            CHECK(memcmp(got, expect, n * 12) == 0);
            free(got);
        }
    }
    if (st == 0) CHECK(chunks == 2);
    fk_reader_close(r);
    fclose(f);
    return st;
}

int main(void)
{
    const uint64_t n = 100000;
    float *arr = malloc(n * 12);
    for (uint64_t i = 0; i < 3 * n; i++) arr[i] = (float)(i % 977) * 0.25f - 3.0f;
    for (int z = 0; z <= 6; z += 6) {
        size_t len;
        char *buf = make_stream(z, &len, arr, n);
        fk_error err = {0};
        CHECK(len % 64 == 0);
        CHECK_MSG(read_stream(buf, len, arr, n, &err) == 0, "%s", err.msg);
        if (z) CHECK(len < n * 12); /* compressed */
        /* every header and payload starts on a 64-byte boundary: POS payload at 64+64+64+64 */
        if (!z) CHECK(memcmp(buf + 256, arr, 12) == 0);

        /* truncation anywhere is an error, never a success */
        for (size_t cut = 0; cut < len; cut += (cut < 300 ? 1 : 4099)) {
            fk_error e2 = {0};
            int st = read_stream(buf, cut, arr, n, &e2);
            CHECK_MSG(st < 0, "cut at %zu read as valid", cut);
        }
        /* a flipped bit anywhere in headers or payload is caught */
        size_t spots[] = {3, 70, 100, 130, 200, 260, len / 2, len - 70};
        for (size_t k = 0; k < sizeof spots / sizeof spots[0]; k++) {
            buf[spots[k]] ^= 0x10;
            fk_error e2 = {0};
            CHECK_MSG(read_stream(buf, len, arr, n, &e2) < 0, "flip at %zu not detected", spots[k]);
            buf[spots[k]] ^= 0x10;
        }
        /* trailing garbage after END */
        char *more = malloc(len + 1);
        memcpy(more, buf, len);
        more[len] = 'x';
        fk_error e3 = {0};
        CHECK(read_stream(more, len + 1, arr, n, &e3) == FK_EFORMAT);
        CHECK(strstr(e3.msg, "after the END") != NULL);
        free(more);
        free(buf);
    }
    /* empty input and wrong magic */
    fk_error e = {0};
    CHECK(read_stream("", 0, arr, n, &e) == FK_EFORMAT && strstr(e.msg, "empty"));
    fk_error_clear(&e);
    char junk[64] = "this is not a stream at all, just some text that goes on......";
    CHECK(read_stream(junk, 64, arr, n, &e) == FK_EFORMAT && strstr(e.msg, "magic"));
    free(arr);
    descriptor_round_trip();
    later_round_trip();
    overlay_chain();
    CHECK_DONE();
}
