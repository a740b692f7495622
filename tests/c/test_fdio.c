/* test_fdio.c - large writes and file-to-file copies on every core: the same bytes as one write(), at any offset and length, and the plain way wherever the kernel refuses the mapping. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"
#include "fdio.h"

#define MIB (UINT64_C(1) << 20)

static unsigned char *pattern(uint64_t n, unsigned seed)
{
    unsigned char *p = malloc(n);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        p[i] = (unsigned char)x;
    }
    return p;
}

static uint64_t size_of(int fd)
{
    struct stat sb;
    return fstat(fd, &sb) == 0 ? (uint64_t)sb.st_size : UINT64_MAX;
}

/* The whole of fd equals want (n bytes). */
static int holds(int fd, const unsigned char *want, uint64_t n)
{
    if (size_of(fd) != n) return 0;
    unsigned char *got = malloc(n ? n : 1);
    int ok = fk_pread(fd, got, n, 0) == (int64_t)n && memcmp(got, want, n) == 0;
    free(got);
    return ok;
}

/* A fresh output: a file in dir, or a memfd (tmpfs) when dir is NULL. */
static FILE *output(const char *dir, char *name, size_t cap)
{
    int fd;
    name[0] = 0;
    if (!dir) {
        fd = memfd_create("fdio", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    } else {
        snprintf(name, cap, "%s/fk-fdio-XXXXXX", dir);
        fd = mkstemp(name);
    }
    return fd < 0 ? NULL : fdopen(fd, "w+b");
}

/* Writes and copies through fk_io, each from 3 MiB on (so that small sizes
 * take the threads' path): a head of odd length first, so that the large
 * parts start off a page; then the file must hold exactly those bytes. */
static void round_trips(const char *dir)
{
    const uint64_t sizes[] = {3 * MIB, 32 * MIB - 1, 32 * MIB + 4097, 97 * MIB + 13};
    unsigned char *src = pattern(100 * MIB, 7);
    uint64_t old = fk_io_parallel_min(3 * MIB);
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        for (uint64_t head = 0; head < 5000; head += 4093) {
            char name[256];
            FILE *f = output(dir, name, sizeof name);
            if (!f) {
                printf("test_fdio: no output in %s (%s): skipped\n", dir ? dir : "memfd", strerror(errno));
                free(src);
                fk_io_parallel_min(old);
                return;
            }
            fk_io io;
            CHECK(fk_io_init(&io, f, 1) == 0);
            CHECK(io.kind == FK_IO_FILE);
            const uint64_t n = sizes[i];
            CHECK(fk_io_write(&io, src, head) == 0);
            CHECK(fk_io_write(&io, src + head, n) == 0);
            CHECK(fk_io_write(&io, src + head + n, 100) == 0); /* and on after it, through write() */
            CHECK_MSG(holds(io.fd, src, head + n + 100), "%s: write of %llu after %llu", dir ? dir : "memfd",
                      (unsigned long long)n, (unsigned long long)head);
            CHECK(io.done == head + n + 100);

            /* the same bytes copied file to file, from an offset, into an output with a head */
            char name2[256];
            FILE *g = output(dir, name2, sizeof name2);
            fk_io in, out;
            CHECK(g && fk_io_init(&in, f, 0) == 0 && fk_io_init(&out, g, 1) == 0);
            in.size = head + n + 100;
            CHECK(lseek(in.fd, (off_t)head, SEEK_SET) == (off_t)head);
            CHECK(fk_io_write(&out, src, 777) == 0);
            char scratch[4096];
            CHECK(fk_io_transfer(&in, &out, n, scratch, sizeof scratch) == (int64_t)n);
            CHECK(lseek(in.fd, 0, SEEK_CUR) == (off_t)(head + n)); /* the input left after what was copied */
            CHECK(in.moved == n);
            unsigned char *want = malloc(777 + n);
            memcpy(want, src, 777);
            memcpy(want + 777, src + head, n);
            CHECK_MSG(holds(out.fd, want, 777 + n), "%s: copy of %llu", dir ? dir : "memfd", (unsigned long long)n);
            /* asked for more than the input holds: what it holds, then the end */
            CHECK(fk_io_transfer(&in, &out, 200, scratch, sizeof scratch) == 100);
            free(want);
            fclose(g);
            fclose(f);
            if (name[0]) unlink(name);
            if (name2[0]) unlink(name2);
        }
    }
    fk_io_parallel_min(old);
    free(src);
}

/* A memfd sealed against writing refuses the mapping: the plain write says
 * why (EPERM), and the file is as it was. */
static void refused(void)
{
    char name[256];
    FILE *f = output(NULL, name, sizeof name);
    if (!f) return;
    unsigned char *src = pattern(8 * MIB, 3);
    uint64_t old = fk_io_parallel_min(MIB);
    fk_io io;
    CHECK(fk_io_init(&io, f, 1) == 0 && io.mappable);
    CHECK(fk_io_write(&io, src, 1000) == 0);
    CHECK(fcntl(io.fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK) == 0);
    errno = 0;
    CHECK(fk_io_write(&io, src, 8 * MIB) == -1 && errno == EPERM);
    CHECK(holds(io.fd, src, 1000));
    fk_io_parallel_min(old);
    free(src);
    fclose(f);
}

/* The reader of gifts(): all but the last `hold` bytes, then the rest once
 * the writer says its buffer has been written over. */
typedef struct reader {
    int fd;
    unsigned char *out;
    uint64_t n, hold, got;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
} reader;

static void *read_pipe(void *arg)
{
    reader *r = arg;
    while (r->got < r->n) {
        if (r->got >= r->n - r->hold) {
            pthread_mutex_lock(&r->mu);
            while (!r->go) pthread_cond_wait(&r->cv, &r->mu);
            pthread_mutex_unlock(&r->mu);
        }
        uint64_t want = r->got < r->n - r->hold ? r->n - r->hold - r->got : r->n - r->got;
        ssize_t k = read(r->fd, r->out + r->got, want);
        if (k <= 0) break;
        r->got += (uint64_t)k;
    }
    return NULL;
}

/* fk_io_gift into a pipe: the reader gets the bytes the buffer held, even
 * those still in the pipe when the writer writes over the buffer; the
 * buffer's whole pages read as zeros after (dropped); below 4 MiB, and into
 * a file, plain writes that leave the buffer as it was. */
static void gifts(void)
{
    const uint64_t sizes[] = {4 * MIB - 1, 4 * MIB + 4097, 40 * MIB + 123};
    const uint64_t offs[] = {0, 13, 4096};
    for (int i = 0; i < 3; i++) {
        uint64_t n = sizes[i], off = offs[i];
        unsigned char *want = pattern(n, 7 + (unsigned)i), *buf = malloc(n + off), *out = malloc(n);
        memcpy(buf + off, want, n);
        int fds[2];
        CHECK(pipe(fds) == 0);
        FILE *f = fdopen(fds[1], "w");
        fk_io io;
        CHECK(f && fk_io_init(&io, f, 1) == 0 && io.kind == FK_IO_PIPE);
        long cap = fcntl(fds[1], F_GETPIPE_SZ);
        reader r = {fds[0], out, n, (uint64_t)(cap > 0 ? cap : 65536) / 2, 0, PTHREAD_MUTEX_INITIALIZER,
                    PTHREAD_COND_INITIALIZER, 0};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, read_pipe, &r) == 0);
        CHECK(fk_io_gift(&io, buf + off, n) == 0);
        CHECK(io.done == n);
        /* the pages given are gone from the buffer; the bytes around them stay */
        uint64_t zeros = 0;
        for (uint64_t k = 0; k < n; k++) zeros += buf[off + k] == 0 && want[k] != 0;
        if (n >= 4 * MIB)
            CHECK(zeros > n / 2);
        else
            CHECK(zeros == 0);
        CHECK(buf[off] == want[0] && buf[off + n - 1] == want[n - 1]);
        memset(buf, 0xAA, n + off); /* written over while the pipe still holds its last pages */
        pthread_mutex_lock(&r.mu);
        r.go = 1;
        pthread_cond_signal(&r.cv);
        pthread_mutex_unlock(&r.mu);
        fclose(f);
        pthread_join(t, NULL);
        CHECK(r.got == n && memcmp(out, want, n) == 0);
        close(fds[0]);
        free(want), free(buf), free(out);
    }
    /* into a regular file: written, the buffer untouched */
    char name[256];
    FILE *f = output(NULL, name, sizeof name);
    if (!f) return;
    unsigned char *src = pattern(8 * MIB, 9), *copy = malloc(8 * MIB);
    memcpy(copy, src, 8 * MIB);
    fk_io io;
    CHECK(fk_io_init(&io, f, 1) == 0 && fk_io_gift(&io, src, 8 * MIB) == 0);
    CHECK(memcmp(src, copy, 8 * MIB) == 0 && holds(io.fd, copy, 8 * MIB));
    free(src), free(copy);
    fclose(f);
}

int main(void)
{
    gifts();
    round_trips(NULL); /* tmpfs */
    const char *tmp = getenv("TMPDIR");
    round_trips(tmp && *tmp ? tmp : "/tmp"); /* a disk: write() there, the same bytes */
    refused();
    CHECK_DONE();
}
