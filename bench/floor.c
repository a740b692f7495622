/* floor - the machine's I/O floor for bench/run: read a file (on one core or every core), copy it through a pipe, write and fsync N bytes. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

/* 128 KiB blocks: the buffer stays in the core's cache between blocks. Reading a 200 MB file
 * from the page cache on the 2-core machine (Xeon, AVX-512): 0.070-0.084 s in 128 KiB blocks,
 * 0.19-0.22 s in 1 or 8 MiB blocks; a system call per block is still negligible. */
#define BLOCK ((size_t)128 << 10)

static const char *usage_text =
    "usage: floor read FILE          read FILE in 128 KiB blocks (page cache as it is)\n"
    "       floor readall FILE       read FILE on every core (OMP_NUM_THREADS): each thread preads\n"
    "                                its share in 128 KiB blocks\n"
    "       floor pipe FILE          read FILE and write it to a pipe read by a child process\n"
    "       floor gift FILE          FILE mapped into memory first (not timed), then handed to a pipe\n"
    "                                of 1 MiB by vmsplice, read by a child: a pipe's rate when the\n"
    "                                writer gives its pages, as the stages do (fk_io_gift)\n"
    "       floor write BYTES FILE   write BYTES bytes to FILE, fsync, close (FILE is removed after)\n"
    "       floor writeall BYTES FILE  the same on every core: FILE extended, each thread maps 32 MiB\n"
    "                                slices, faults them in (MADV_POPULATE_WRITE) and fills them\n"
    "       floor touch BYTES        fault in BYTES of fresh memory on every core and fill it, twice\n"
    "                                (a line each): a freshly started virtual machine backs its memory\n"
    "                                at the first touch, several times slower than the second\n"
    "Prints 'BYTES SECONDS' on stdout; errors on stderr, exit 1 (2 for usage).\n";

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what, const char *name)
{
    fprintf(stderr, "floor: %s: %s: %s\n", name, what, strerror(errno));
    exit(1);
}

/* Reads fd to its end into buf (BLOCK bytes); returns the bytes read. */
static uint64_t drain(int fd, char *buf, const char *name)
{
    uint64_t total = 0;
    for (;;) {
        ssize_t r = read(fd, buf, BLOCK);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) die("read", name);
        if (r == 0) return total;
        total += (uint64_t)r;
    }
}

/* Writes len bytes of buf to fd, whole. */
static void put(int fd, const char *buf, size_t len, const char *name)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) die("write", name);
        buf += w;
        len -= (size_t)w;
    }
}

static int open_in(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) die("open", path);
    return fd;
}

static uint64_t floor_read(const char *path, char *buf)
{
    int fd = open_in(path);
    uint64_t n = drain(fd, buf, path);
    close(fd);
    return n;
}

/* Every thread preads its share of the file (a contiguous part, in blocks)
 * into a block of its own: the rate a reader on every core could reach. */
static uint64_t floor_readall(const char *path)
{
    int fd = open_in(path);
    struct stat st;
    if (fstat(fd, &st) != 0) die("stat", path);
    const uint64_t size = (uint64_t)st.st_size;
    uint64_t total = 0;
    int bad = 0;
    #pragma omp parallel reduction(+ : total) reduction(| : bad)
    {
        char *b = malloc(BLOCK);
        if (!b) bad = 1;
        else memset(b, 0x5a, BLOCK);
        const int T = omp_get_num_threads(), t = omp_get_thread_num();
        const uint64_t blocks = (size + BLOCK - 1) / BLOCK;
        const uint64_t lo = blocks * (uint64_t)t / (uint64_t)T * BLOCK, hi = blocks * (uint64_t)(t + 1) / (uint64_t)T * BLOCK;
        for (uint64_t at = lo; b && at < hi && at < size;) {
            ssize_t r = pread(fd, b, BLOCK, (off_t)at);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                bad = r < 0;
                break;
            }
            total += (uint64_t)r;
            at += (uint64_t)r;
        }
        free(b);
    }
    if (bad) die("read", path);
    close(fd);
    return total;
}

/* The parent reads the file and writes it into the pipe; a child reads the pipe to its end, as the
 * next stage of a pipeline would. The pipe keeps the kernel's default capacity (64 KiB), as a
 * shell pipeline's does. */
static uint64_t floor_pipe(const char *path, char *buf)
{
    int fd = open_in(path), p[2];
    struct stat st;
    if (fstat(fd, &st) != 0) die("stat", path);
    if (pipe(p) != 0) die("pipe", path);
    pid_t pid = fork();
    if (pid < 0) die("fork", path);
    if (pid == 0) {
        close(p[1]);
        _exit(drain(p[0], buf, "pipe") == (uint64_t)st.st_size ? 0 : 1); /* every byte arrived */
    }
    close(p[0]);
    uint64_t total = 0;
    for (;;) {
        ssize_t r = read(fd, buf, BLOCK);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) die("read", path);
        if (r == 0) break;
        put(p[1], buf, (size_t)r, "pipe");
        total += (uint64_t)r;
    }
    close(p[1]);
    close(fd);
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "floor: %s: the reading end of the pipe did not get every byte\n", path);
        exit(1);
    }
    return total;
}

/* FILE mapped and faulted in before *t0 is set; then its pages handed to a 1 MiB pipe by vmsplice
 * and read to the end by a child. */
static uint64_t floor_gift(const char *path, char *buf, double *t0)
{
    int fd = open_in(path), p[2];
    struct stat st;
    if (fstat(fd, &st) != 0) die("stat", path);
    size_t n = (size_t)st.st_size;
    char *m = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0) : NULL;
    if (n && m == MAP_FAILED) die("mmap", path);
    if (pipe(p) != 0) die("pipe", path);
    (void)fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
    *t0 = now();
    pid_t pid = fork();
    if (pid < 0) die("fork", path);
    if (pid == 0) {
        close(p[1]);
        _exit(drain(p[0], buf, "pipe") == (uint64_t)n ? 0 : 1);
    }
    close(p[0]);
    for (size_t done = 0; done < n;) {
        struct iovec v = {m + done, n - done};
        ssize_t k = vmsplice(p[1], &v, 1, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) die("vmsplice", path);
        done += (size_t)k;
    }
    close(p[1]);
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "floor: %s: the reading end of the pipe did not get every byte\n", path);
        exit(1);
    }
    if (n) munmap(m, n);
    close(fd);
    return n;
}

/* The same commit as the programs' outputs (lib/fileio.c): write, fsync, close; then removed. */
static uint64_t floor_write(uint64_t bytes, const char *path, char *buf)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die("open", path);
    for (uint64_t left = bytes; left > 0;) {
        size_t len = left < BLOCK ? (size_t)left : BLOCK;
        put(fd, buf, len, path);
        left -= len;
    }
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) die("fsync", path);
    if (close(fd) != 0) die("close", path);
    return bytes;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* floor_write on every core, the way lib/fdio.c writes a large buffer into a regular file. */
static uint64_t floor_writeall(uint64_t bytes, const char *path)
{
    const uint64_t slice = (uint64_t)32 << 20;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die("open", path);
    if (ftruncate(fd, (off_t)bytes) != 0) die("ftruncate", path);
    int bad = 0;
    #pragma omp parallel for schedule(dynamic, 1) reduction(| : bad)
    for (uint64_t s = 0; s < bytes; s += slice) {
        size_t len = (size_t)(bytes - s < slice ? bytes - s : slice);
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)s);
        if (m == MAP_FAILED) {
            bad = 1;
            continue;
        }
        if (madvise(m, len, MADV_POPULATE_WRITE) != 0) bad = 1;
        else memset(m, 0x5a, len);
        munmap(m, len);
    }
    if (bad) die("mmap and fill", path);
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) die("fsync", path);
    if (close(fd) != 0) die("close", path);
    return bytes;
}

/* BYTES of anonymous memory mapped, faulted in and filled by every thread in 4 MiB pieces, and
 * unmapped: the seconds, or -1 when the mapping fails. */
static double floor_touch(uint64_t bytes)
{
    const uint64_t piece = UINT64_C(4) << 20;
    double t0 = now();
    char *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    #pragma omp parallel for schedule(static)
    for (uint64_t a = 0; a < bytes; a += piece) memset(p + a, 0x5a, bytes - a < piece ? bytes - a : piece);
    double t = now() - t0;
    munmap(p, bytes ? bytes : 1);
    return t;
}

int main(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        fputs(usage_text, stdout);
        return 0;
    }
    int ok = (argc == 3 && (!strcmp(argv[1], "read") || !strcmp(argv[1], "readall") || !strcmp(argv[1], "pipe") ||
                            !strcmp(argv[1], "gift"))) ||
             (argc == 4 && (!strcmp(argv[1], "write") || !strcmp(argv[1], "writeall"))) ||
             (argc == 3 && !strcmp(argv[1], "touch"));
    uint64_t bytes = 0;
    if (ok && (argc == 4 || !strcmp(argv[1], "touch"))) {
        char *end;
        errno = 0;
        bytes = strtoull(argv[2], &end, 10);
        ok = errno == 0 && end != argv[2] && *end == '\0' && argv[2][0] != '-';
    }
    if (!ok) {
        fputs(usage_text, stderr);
        return 2;
    }
    if (!strcmp(argv[1], "touch")) {
        for (int round = 0; round < 2; round++) {
            double t = floor_touch(bytes);
            if (t < 0) {
                fprintf(stderr, "floor: cannot map %" PRIu64 " bytes: %s\n", bytes, strerror(errno));
                return 1;
            }
            printf("%" PRIu64 " %.6f\n", bytes, t);
        }
        return fflush(stdout) == 0 ? 0 : 1;
    }
    char *buf = malloc(BLOCK);
    if (!buf) {
        fprintf(stderr, "floor: out of memory\n");
        return 3;
    }
    memset(buf, 0x5a, BLOCK); /* touch every page before the clock starts */
    double t0 = now();
    uint64_t n;
    if (!strcmp(argv[1], "read"))
        n = floor_read(argv[2], buf);
    else if (!strcmp(argv[1], "readall"))
        n = floor_readall(argv[2]);
    else if (!strcmp(argv[1], "pipe"))
        n = floor_pipe(argv[2], buf);
    else if (!strcmp(argv[1], "gift"))
        n = floor_gift(argv[2], buf, &t0);
    else if (!strcmp(argv[1], "writeall"))
        n = floor_writeall(bytes, argv[3]);
    else
        n = floor_write(bytes, argv[3], buf);
    double t = now() - t0;
    if (argc == 4) unlink(argv[3]);
    printf("%" PRIu64 " %.6f\n", n, t);
    free(buf);
    return fflush(stdout) == 0 ? 0 : 1;
}
