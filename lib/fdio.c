/* fdio.c - moving bytes fast: whole reads and writes on descriptors, zero-copy transfers and skips, CRC-32 on every core. */
#define _GNU_SOURCE
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <zlib.h>

#include "clock.h"
#ifdef _OPENMP
#include <omp.h>
#endif

#define PIPE_SIZE (1 << 20)     /* the unprivileged maximum on Linux (/proc/sys/fs/pipe-max-size) */
#define MAX_SYSCALL (1u << 30)  /* bytes asked of one read, write or transfer call */
#define SLICE (UINT64_C(8) << 20) /* CRC work unit: 8 MiB, ~3 ms of one core */
#define KICK (UINT64_C(64) << 20) /* start writeback of a regular output every 64 MiB */
#define WINDOW 32                  /* slices faulted in ahead of the read at once: 256 MiB */
#define MSLICE (UINT64_C(32) << 20) /* a thread's share of a parallel write: 32 MiB of the file, mapped alone */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

static uint64_t par_min = UINT64_C(64) << 20;
static _Thread_local int one_core; /* fk_io_one_core: this thread's writes on its own core */

uint64_t fk_io_parallel_min(uint64_t n)
{
    uint64_t old = par_min;
    par_min = n;
    return old;
}

void fk_io_one_core(int on)
{
    one_core = on;
}

/* tmpfs (and memfd): memory, where one core's write() is the limit. On a
 * disk's file system (ext4, measured) the mapped writes were slower than
 * write(): 4 GB in 2.5 s against 2.05 s, the fsync included. */
static int mappable_fs(int fd)
{
    struct statfs s;
    return fstatfs(fd, &s) == 0 && (unsigned long)s.f_type == 0x01021994UL;
}

int fk_io_init(fk_io *io, FILE *f, int for_write)
{
    memset(io, 0, sizeof *io);
    io->f = f;
    io->fd = fileno(f);
    if (io->fd < 0) return 0; /* a memory stream: stdio only */
#ifdef __GLIBC__
    /* Input already in f's buffer (a caller peeked with getc/ungetc):
     * reading the descriptor would skip it, so stdio it is. */
    if (!for_write && f->_IO_read_ptr < f->_IO_read_end) {
        io->fd = -1;
        return 0;
    }
#endif
    if (for_write && fflush(f) != 0) return -1;
    struct stat sb;
    if (fstat(io->fd, &sb) != 0) return -1;
    if (S_ISREG(sb.st_mode)) {
        io->kind = FK_IO_FILE;
        io->size = (uint64_t)sb.st_size;
        off_t at = lseek(io->fd, 0, SEEK_CUR);
        io->base = io->flushed = at > 0 ? (uint64_t)at : 0;
        /* FOFKIT_PARALLEL_WRITE=0: every write the plain way (to measure the difference) */
        const char *pw = getenv("FOFKIT_PARALLEL_WRITE");
        io->mappable = for_write && !(pw && !strcmp(pw, "0")) && mappable_fs(io->fd);
    } else if (S_ISFIFO(sb.st_mode)) {
        io->kind = FK_IO_PIPE;
        if (fcntl(io->fd, F_GETPIPE_SZ) < PIPE_SIZE) (void)fcntl(io->fd, F_SETPIPE_SZ, PIPE_SIZE);
    }
    return 0;
}

static void moved(fk_io *io, uint64_t k)
{
    io->moved += k;
    if (io->tick) io->tick(io->tick_ctx, io->moved);
}

/* Before reading a pipe: when nothing is there yet, waits for its writer,
 * the time counted in io->waited (what -v reports apart from the work). */
static void wait_input(fk_io *io)
{
    if (io->kind != FK_IO_PIPE) return;
    struct pollfd p = {io->fd, POLLIN, 0};
    if (poll(&p, 1, 0) != 0) return; /* data, the end, or an error: read() says which */
    const double t0 = fk_now();
    while (poll(&p, 1, -1) < 0 && errno == EINTR) {}
    io->waited += fk_now() - t0;
}

int64_t fk_io_read(fk_io *io, void *buf, uint64_t n)
{
    if (io->fd < 0) {
        size_t got = fread(buf, 1, (size_t)n, io->f);
        if (got < n && ferror(io->f)) return -1;
        moved(io, got);
        return (int64_t)got;
    }
    uint64_t got = 0;
    while (got < n) {
        uint64_t want = n - got < MAX_SYSCALL ? n - got : MAX_SYSCALL;
        wait_input(io);
        ssize_t k = read(io->fd, (char *)buf + got, (size_t)want);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) break;
        got += (uint64_t)k;
        moved(io, (uint64_t)k);
    }
    return (int64_t)got;
}

int64_t fk_pread(int fd, void *buf, uint64_t n, uint64_t at)
{
    uint64_t got = 0;
    while (got < n) {
        uint64_t want = n - got < MAX_SYSCALL ? n - got : MAX_SYSCALL;
        ssize_t k = pread(fd, (char *)buf + got, (size_t)want, (off_t)(at + got));
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) break;
        got += (uint64_t)k;
    }
    return (int64_t)got;
}

uint32_t fk_crc32(uint32_t crc, const void *p, uint64_t n)
{
    const unsigned char *b = p;
    uint64_t ns = (n + SLICE - 1) / SLICE;
    if (ns < 2) return (uint32_t)crc32_z(crc, b, (z_size_t)n);
    uint32_t part[64];
    uint64_t per = (ns + 63) / 64 * SLICE; /* at most 64 parts of whole slices */
    int np = (int)((n + per - 1) / per);
    #pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < np; k++) {
        uint64_t s = (uint64_t)k * per, e = s + per < n ? s + per : n;
        part[k] = (uint32_t)crc32_z(0, b + s, (z_size_t)(e - s));
    }
    for (int k = 0; k < np; k++) {
        uint64_t s = (uint64_t)k * per, e = s + per < n ? s + per : n;
        crc = (uint32_t)crc32_combine(crc, part[k], (z_off_t)(e - s));
    }
    return crc;
}

#ifdef _OPENMP
/* A regular file's next n bytes read on every core: each thread preads its
 * slices (their pages faulted in by the thread that reads them) and
 * checksums them; the descriptor is left after what was read. -2 when the
 * descriptor has no offset to read from (the caller reads in order). */
static int64_t read_crc_file(fk_io *io, unsigned char *b, uint64_t n, uint32_t *crc)
{
    off_t at = lseek(io->fd, 0, SEEK_CUR);
    if (at < 0) return -2;
    const uint64_t ns = (n + SLICE - 1) / SLICE;
    uint32_t *part = malloc(ns * sizeof *part);
    int64_t *got = malloc(ns * sizeof *got);
    if (!part || !got) {
        free(part), free(got);
        return -2;
    }
    int err = 0;
    #pragma omp parallel for schedule(dynamic, 1)
    for (uint64_t k = 0; k < ns; k++) {
        uint64_t s = k * SLICE, len = s + SLICE < n ? SLICE : n - s;
        int64_t r = fk_pread(io->fd, b + s, len, (uint64_t)at + s);
        got[k] = r;
        if (r < 0) {
            #pragma omp atomic write
            err = errno;
            continue;
        }
        part[k] = (uint32_t)crc32_z(0, b + s, (z_size_t)r);
        #pragma omp critical(fk_io_moved)
        moved(io, (uint64_t)r);
    }
    /* what was read: the slices up to the first short one (the end of the file) */
    uint64_t total = 0;
    uint32_t c = 0;
    for (uint64_t k = 0; !err && k < ns; k++) {
        uint64_t len = k * SLICE + SLICE < n ? SLICE : n - k * SLICE;
        c = (uint32_t)crc32_combine(c, part[k], (z_off_t)got[k]);
        total += (uint64_t)got[k];
        if ((uint64_t)got[k] < len) break;
    }
    free(part), free(got);
    if (err) {
        errno = err;
        return -1;
    }
    if (lseek(io->fd, at + (off_t)total, SEEK_SET) < 0) return -1;
    *crc = c;
    return (int64_t)total;
}
#endif

int64_t fk_io_read_crc(fk_io *io, void *buf, uint64_t n, uint32_t *crc)
{
    unsigned char *b = buf;
    uint64_t ns = (n + SLICE - 1) / SLICE;
#ifdef _OPENMP
    if (ns >= 2 && io->kind == FK_IO_FILE && io->fd >= 0 && omp_get_max_threads() > 1 && !omp_in_parallel()) {
        int64_t got = read_crc_file(io, b, n, crc);
        if (got != -2) return got;
    }
    if (ns >= 2 && omp_get_max_threads() > 1 && !omp_in_parallel()) {
        /* One thread reads slice after slice; the others checksum the
         * slices already read, so the CRC costs no time beside the read.
         * Before each window of slices is read, every thread faults its
         * pages in (a fresh page's fault inside read() costs as much as the
         * copy, on the reading thread alone); a window at a time, so that a
         * stream that declares more than it holds claims at most a window
         * beyond what came. */
        uint32_t *part = malloc(ns * sizeof *part);
        if (part) {
            int64_t got = 0;
            int bad = 0, err = 0;
            #pragma omp parallel
            #pragma omp single
            for (uint64_t k = 0; k < ns && !bad; k++) {
                uint64_t s = k * SLICE, len = s + SLICE < n ? SLICE : n - s;
                if (k % WINDOW == 0) {
                    uint64_t we = s + WINDOW * SLICE < n ? s + WINDOW * SLICE : n;
                    volatile unsigned char *vb = b;
                    #pragma omp taskloop grainsize(1)
                    for (uint64_t p = s; p < we; p += SLICE)
                        for (uint64_t q = p; q < p + SLICE && q < we; q += 4096) vb[q] = 0;
                }
                int64_t r = fk_io_read(io, b + s, len);
                if (r < 0) {
                    err = errno;
                    bad = 1;
                    break;
                }
                got += r;
                if ((uint64_t)r < len) bad = 1; /* the end of the input: CRC of what came */
                #pragma omp task firstprivate(s, r)
                part[k] = (uint32_t)crc32_z(0, b + s, (z_size_t)r);
            }
            if (err) {
                free(part);
                errno = err;
                return -1;
            }
            uint32_t c = 0;
            for (uint64_t k = 0; k * SLICE < (uint64_t)got; k++) {
                uint64_t s = k * SLICE, len = s + SLICE < (uint64_t)got ? SLICE : (uint64_t)got - s;
                c = (uint32_t)crc32_combine(c, part[k], (z_off_t)len);
            }
            free(part);
            *crc = c;
            return got;
        }
    }
#endif
    int64_t got = fk_io_read(io, b, n);
    if (got >= 0) *crc = fk_crc32(0, b, (uint64_t)got);
    return got;
}

/* Starts writeback of what a regular output holds beyond what was started
 * already, once KICK bytes have piled up (or all of it when force). */
static void kick_writeback(fk_io *io, int force)
{
    if (io->kind != FK_IO_FILE) return;
    uint64_t end = io->base + io->done;
    if (end - io->flushed < (force ? 1 : KICK)) return;
    (void)sync_file_range(io->fd, (off64_t)io->flushed, (off64_t)(end - io->flushed), SYNC_FILE_RANGE_WRITE);
    io->flushed = end;
}

/* Fills len bytes at dst, the bytes off.. of a parallel write: 0 done, -1
 * error (errno), 1 the source ended early (the caller writes the plain way,
 * which says how). */
typedef int (*fill_fn)(void *ctx, char *dst, uint64_t off, uint64_t len);

/* Cuts a failed parallel write back to where it began: best effort, the
 * caller reports the first error. */
static void truncate_back(int fd, off_t at)
{
    if (ftruncate(fd, at) != 0) return;
}

/* n bytes appended to a regular output on every core (see fdio.h): the
 * file extended, each thread's slices mapped alone, faulted in with
 * MADV_POPULATE_WRITE and filled. Returns 0, -1 with errno (the file cut
 * back to where it was), or -2 when the plain write() should do it (not a
 * file for this, or a step the kernel refused: nothing changed). */
static int par_fill(fk_io *out, uint64_t n, fill_fn fill, void *ctx)
{
#ifdef _OPENMP
    if (out->fd < 0 || out->kind != FK_IO_FILE || !out->mappable || n < par_min || n == 0 || one_core ||
        omp_get_max_threads() < 2 || omp_in_parallel())
        return -2;
    struct stat sb;
    const off_t at0 = lseek(out->fd, 0, SEEK_CUR);
    if (at0 < 0 || fstat(out->fd, &sb) != 0 || sb.st_size != at0) return -2; /* appending only */
    const uint64_t at = (uint64_t)at0, end = at + n, pg = (uint64_t)sysconf(_SC_PAGESIZE);
    if (ftruncate(out->fd, (off_t)end) != 0) {
        int e = errno;
        truncate_back(out->fd, at0);
        errno = e;
        return e == EINVAL || e == EPERM ? -2 : -1;
    }
    int err = 0, plain = 0;
    #pragma omp parallel for schedule(dynamic, 1)
    for (uint64_t k = at / MSLICE; k <= (end - 1) / MSLICE; k++) {
        int e0, p0;
        #pragma omp atomic read
        e0 = err;
        #pragma omp atomic read
        p0 = plain;
        if (e0 || p0) continue;
        const uint64_t s = k * MSLICE > at ? k * MSLICE : at, e = (k + 1) * MSLICE < end ? (k + 1) * MSLICE : end;
        const uint64_t ms = s / pg * pg; /* mappings start on a page */
        const size_t len = (size_t)(e - ms);
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, out->fd, (off_t)ms);
        int r, why = 0;
        if (m == MAP_FAILED) {
            r = 1;
        } else {
            if (madvise(m, len, MADV_POPULATE_WRITE) != 0) {
                /* EINVAL: a kernel without it; EFAULT: a fault that would
                 * have raised SIGBUS, the disk (or tmpfs) full */
                r = errno == EINVAL ? 1 : -1;
                why = errno == EFAULT ? ENOSPC : errno;
            } else {
                r = fill(ctx, m + (s - ms), s - at, e - s);
                why = errno;
            }
            munmap(m, len);
        }
        if (r < 0) {
            #pragma omp atomic write
            err = why ? why : EIO;
        } else if (r > 0) {
            #pragma omp atomic write
            plain = 1;
        }
    }
    if (err || plain) {
        truncate_back(out->fd, at0);
        if (!err) return -2;
        errno = err;
        return -1;
    }
    if (lseek(out->fd, (off_t)end, SEEK_SET) < 0) return -1;
    out->done += n;
    kick_writeback(out, 0);
    return 0;
#else
    (void)out, (void)n, (void)fill, (void)ctx;
    return -2;
#endif
}

static int fill_copy(void *ctx, char *dst, uint64_t off, uint64_t len)
{
    memcpy(dst, (const char *)ctx + off, (size_t)len);
    return 0;
}

typedef struct {
    int fd;
    uint64_t at;
} source;

static int fill_pread(void *ctx, char *dst, uint64_t off, uint64_t len)
{
    const source *src = ctx;
    int64_t k = fk_pread(src->fd, dst, len, src->at + off);
    return k < 0 ? -1 : (uint64_t)k < len;
}

int fk_io_write(fk_io *io, const void *buf, uint64_t n)
{
    if (io->fd < 0) return n && fwrite(buf, 1, (size_t)n, io->f) != n ? -1 : 0;
    if (n >= par_min) {
        int r = par_fill(io, n, fill_copy, (void *)buf);
        if (r != -2) return r;
    }
    const char *p = buf;
    while (n > 0) {
        ssize_t k = write(io->fd, p, (size_t)(n < MAX_SYSCALL ? n : MAX_SYSCALL));
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        p += k;
        n -= (uint64_t)k;
        io->done += (uint64_t)k;
        kick_writeback(io, 0);
    }
    return 0;
}

/* Whether errno says "this kernel or these descriptors cannot do that",
 * for which the next method is tried. */
static int refused(int e)
{
    return e == EINVAL || e == ENOSYS || e == EXDEV || e == EOPNOTSUPP || e == EBADF || e == ESPIPE ||
           e == EPERM || e == ETXTBSY;
}

#define GIFT_MIN (UINT64_C(4) << 20)   /* payloads from 4 MiB go to a pipe by vmsplice */
#define GIFT_DROP (UINT64_C(16) << 20) /* given pages dropped from this process 16 MiB at a time */

/* Pages [from, to) dropped from this process: a later touch of the range
 * (malloc reusing it, say) finds fresh zero pages, never the ones a pipe
 * still holds. */
static int drop_pages(char *from, char *to)
{
    return to > from ? madvise(from, (size_t)(to - from), MADV_DONTNEED) : 0;
}

int fk_io_gift(fk_io *io, void *buf, uint64_t n)
{
    static long page;
    if (!page) page = sysconf(_SC_PAGESIZE);
    const uintptr_t pg = page > 0 ? (uintptr_t)page : 4096;
    char *p = buf, *end = p + n;
    char *a = (char *)(((uintptr_t)p + pg - 1) & ~(pg - 1)), *b = (char *)((uintptr_t)end & ~(pg - 1));
    if (io->fd < 0 || io->kind != FK_IO_PIPE || io->no_gift || n < GIFT_MIN || b <= a) return fk_io_write(io, buf, n);
    if (fk_io_write(io, p, (uint64_t)(a - p))) return -1; /* the part before the first whole page */
    char *q = a, *dropped = a;
    while (q < b) {
        struct iovec v = {q, (size_t)(b - q < MAX_SYSCALL ? b - q : MAX_SYSCALL)};
        ssize_t k = vmsplice(io->fd, &v, 1, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && q == a && refused(errno)) { /* this kernel or descriptor: plain writes */
            io->no_gift = 1;
            return fk_io_write(io, q, (uint64_t)(end - q));
        }
        if (k <= 0) {
            int e = errno;
            (void)drop_pages(dropped, (char *)((uintptr_t)q & ~(pg - 1)));
            errno = k < 0 ? e : EIO;
            return -1;
        }
        q += k;
        io->done += (uint64_t)k;
        char *upto = (char *)((uintptr_t)q & ~(pg - 1));
        if (upto - dropped >= (ptrdiff_t)GIFT_DROP) {
            if (drop_pages(dropped, upto)) return -1;
            dropped = upto;
        }
    }
    if (drop_pages(dropped, b)) return -1;
    return fk_io_write(io, b, (uint64_t)(end - b)); /* the part after the last whole page */
}


/* One zero-copy call moving up to n bytes: > 0 moved, 0 end of input, -1
 * error (errno), -2 refused (use the next method). */
static int64_t zero_copy(fk_io *in, fk_io *out, uint64_t n)
{
    if (in->fd < 0 || out->fd < 0 || in->no_splice) return -2;
    size_t want = n < MAX_SYSCALL ? (size_t)n : MAX_SYSCALL;
    ssize_t k;
    wait_input(in);
    do {
        if (in->kind == FK_IO_PIPE || out->kind == FK_IO_PIPE)
            k = splice(in->fd, NULL, out->fd, NULL, want, SPLICE_F_MOVE | SPLICE_F_MORE);
        else if (in->kind == FK_IO_FILE && out->kind == FK_IO_FILE)
            k = copy_file_range(in->fd, NULL, out->fd, NULL, want, 0);
        else if (in->kind == FK_IO_FILE)
            k = sendfile(out->fd, in->fd, NULL, want);
        else
            return -2;
    } while (k < 0 && errno == EINTR);
    if (k < 0 && refused(errno)) {
        in->no_splice = 1;
        return -2;
    }
    return k;
}

int64_t fk_io_transfer(fk_io *in, fk_io *out, uint64_t n, void *scratch, size_t scratchsize)
{
    uint64_t moved = 0;
    if (n >= par_min && in->fd >= 0 && in->kind == FK_IO_FILE && out->mappable) {
        off_t at = lseek(in->fd, 0, SEEK_CUR);
        if (at >= 0 && (uint64_t)at + n <= in->size) { /* on every core, when the input holds it all */
            source src = {in->fd, (uint64_t)at};
            int r = par_fill(out, n, fill_pread, &src);
            if (r == -1) return -1;
            if (r == 0) {
                if (lseek(in->fd, at + (off_t)n, SEEK_SET) < 0) return -1;
                in->moved += n;
                if (in->tick) in->tick(in->tick_ctx, in->moved);
                return (int64_t)n;
            }
        }
    }
    while (moved < n) {
        int64_t k = zero_copy(in, out, n - moved);
        if (k == -2) break;
        if (k < 0) return -1;
        if (k == 0) return (int64_t)moved;
        moved += (uint64_t)k;
        in->moved += (uint64_t)k;
        if (in->tick) in->tick(in->tick_ctx, in->moved);
        out->done += (uint64_t)k;
        kick_writeback(out, 0);
    }
    while (moved < n) { /* the fallback: through scratch */
        uint64_t want = n - moved < scratchsize ? n - moved : scratchsize;
        int64_t k = fk_io_read(in, scratch, want);
        if (k < 0) return -1;
        if (k > 0 && fk_io_write(out, scratch, (uint64_t)k) != 0) return -1;
        moved += (uint64_t)k;
        if ((uint64_t)k < want) break;
    }
    return (int64_t)moved;
}

int64_t fk_io_copy_at(int fd, uint64_t at, fk_io *out, uint64_t n, void *scratch, size_t scratchsize)
{
    if (n >= par_min) {
        source src = {fd, at};
        int r = par_fill(out, n, fill_pread, &src);
        if (r == 0) return (int64_t)n;
        if (r == -1) return -1;
    }
    uint64_t moved = 0;
    int kernel = out->fd >= 0 && (out->kind == FK_IO_FILE || out->kind == FK_IO_PIPE);
    while (kernel && moved < n) {
        const size_t want = n - moved < MAX_SYSCALL ? (size_t)(n - moved) : MAX_SYSCALL;
        loff_t o = (loff_t)(at + moved);
        ssize_t k = out->kind == FK_IO_FILE ? copy_file_range(fd, &o, out->fd, NULL, want, 0)
                                            : splice(fd, &o, out->fd, NULL, want, SPLICE_F_MOVE | SPLICE_F_MORE);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && refused(errno)) break;
        if (k < 0) return -1;
        if (k == 0) return (int64_t)moved;
        moved += (uint64_t)k;
        out->done += (uint64_t)k;
        kick_writeback(out, 0);
    }
    while (moved < n) { /* the fallback: through scratch */
        const uint64_t want = n - moved < scratchsize ? n - moved : scratchsize;
        int64_t k = fk_pread(fd, scratch, want, at + moved);
        if (k < 0) return -1;
        if (k > 0 && fk_io_write(out, scratch, (uint64_t)k) != 0) return -1;
        moved += (uint64_t)k;
        if ((uint64_t)k < want) break;
    }
    return (int64_t)moved;
}

int64_t fk_io_skip(fk_io *in, uint64_t n, void *scratch, size_t scratchsize)
{
    if (in->fd >= 0 && in->kind == FK_IO_FILE) {
        off_t at = lseek(in->fd, 0, SEEK_CUR);
        if (at >= 0) {
            uint64_t left = (uint64_t)at < in->size ? in->size - (uint64_t)at : 0;
            uint64_t k = n < left ? n : left;
            if (lseek(in->fd, (off_t)k, SEEK_CUR) >= 0) {
                moved(in, k);
                return (int64_t)k;
            }
        }
    }
    uint64_t skipped = 0;
    if (in->fd >= 0 && in->kind == FK_IO_PIPE && !in->no_splice) {
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        while (null >= 0 && skipped < n) {
            wait_input(in);
            ssize_t k = splice(in->fd, NULL, null, NULL, n - skipped < MAX_SYSCALL ? n - skipped : MAX_SYSCALL,
                               SPLICE_F_MOVE);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0 && refused(errno)) break;
            if (k < 0) {
                int e = errno;
                close(null);
                errno = e;
                return -1;
            }
            if (k == 0) {
                close(null);
                return (int64_t)skipped;
            }
            skipped += (uint64_t)k;
            moved(in, (uint64_t)k);
        }
        if (null >= 0) close(null);
    }
    while (skipped < n) {
        uint64_t want = n - skipped < scratchsize ? n - skipped : scratchsize;
        int64_t k = fk_io_read(in, scratch, want);
        if (k < 0) return -1;
        skipped += (uint64_t)k;
        if ((uint64_t)k < want) break;
    }
    return (int64_t)skipped;
}
