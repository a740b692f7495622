/* test_fdio.c - large writes and file-to-file copies on every core: the same bytes as one write(), at any offset and length, and the plain way wherever the kernel refuses the mapping. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

int main(void)
{
    round_trips(NULL); /* tmpfs */
    const char *tmp = getenv("TMPDIR");
    round_trips(tmp && *tmp ? tmp : "/tmp"); /* a disk: write() there, the same bytes */
    refused();
    CHECK_DONE();
}
