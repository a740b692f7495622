/* fdio.h - moving bytes fast: whole reads and writes on descriptors, zero-copy transfers and skips, CRC-32 on every core. */
#ifndef FK_FDIO_H
#define FK_FDIO_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The stream layer reads and writes through these, never through stdio
 * buffers, so that a payload goes from the kernel straight into its final
 * array (one copy) and a chunk a program does not read goes from its input
 * to its output without entering user space at all:
 *
 *   from \ to   pipe               regular file        other (tty, socket)
 *   pipe        splice(2)          splice(2)           read + write
 *   file        splice(2)          copy_file_range(2)  sendfile(2)
 *
 * falling back to read + write in large blocks whenever the kernel refuses
 * one (EINVAL, ENOSYS, EXDEV, ...). A FILE without a descriptor (fmemopen,
 * open_memstream) is read and written through stdio.
 */

enum { FK_IO_OTHER = 0, FK_IO_FILE = 1, FK_IO_PIPE = 2 };

typedef struct fk_io {
    FILE *f;       /* the stream given; used directly only when fd < 0  */
    int fd;        /* its descriptor, or -1                             */
    int kind;      /* FK_IO_FILE (regular: seekable), FK_IO_PIPE, OTHER */
    int no_splice; /* the kernel refused splice/copy_file_range once    */
    int no_gift;   /* the kernel refused vmsplice once (fk_io_gift)      */
    uint64_t size; /* regular input files: the size when opened         */
    uint64_t moved; /* bytes read, skipped or transferred from it so far */
    double waited;  /* a pipe: seconds spent waiting for its writer (no data there to read) */
    void (*tick)(void *ctx, uint64_t moved); /* if set, called as they move */
    void *tick_ctx;
    uint64_t base, done, flushed; /* regular output files: the offset at
                      start, bytes written since, and how far writeback
                      was started (sync_file_range), so that the fsync of
                      an atomic output finds little left to do           */
    int mappable;   /* a regular output on tmpfs: large writes go on
                      every core (below), unless the environment has
                      FOFKIT_PARALLEL_WRITE=0                            */
} fk_io;

/* Sets io up on f (not owned). For writing, f's stdio buffer is flushed
 * first; nothing may be read or written through f's buffer afterwards. For
 * reading, input already in f's buffer (peeked with getc and ungetc) makes
 * io read through stdio (detected with the C library's GNU internals; with
 * another C library, do not peek).
 * Pipes are widened to 1 MiB where the system allows (fewer wake-ups).
 * Returns 0, or -1 with errno set. */
int fk_io_init(fk_io *io, FILE *f, int for_write);

/* Reads n bytes into buf, fewer only at the end of the input. Returns the
 * bytes read, or -1 with errno set. */
int64_t fk_io_read(fk_io *io, void *buf, uint64_t n);

/* As fk_io_read, and sets *crc to the zlib CRC-32 of what was read: from a
 * regular file every core preads and checksums its slices; from a pipe one
 * thread reads while the others checksum what came. */
int64_t fk_io_read_crc(fk_io *io, void *buf, uint64_t n, uint32_t *crc);

/* Writes the n bytes of buf (all of them, or -1 with errno set).
 *
 * One write() into a file holds the file's lock while it copies, so one
 * core writes at a time whatever the threads. So a large write (from
 * fk_io_parallel_min bytes, default 64 MiB) at the end of a regular file
 * on tmpfs goes on every core instead: the file is extended, and each
 * thread maps its slices, faults them in (MADV_POPULATE_WRITE, which
 * returns an error where a fault would raise SIGBUS: a full tmpfs gives
 * ENOSPC, and the file is cut back to where it was) and copies into them.
 * Where the kernel refuses any step (no mapping, Linux before 5.14), plain
 * write() it is. Measured on a 64-core H100 host, 17.7 GB into /dev/shm:
 * 6.1 s on one thread, 3.7 s on 16, 4.3 s on 32 (the page allocation is
 * the limit); on its ext4 disk no gain (4 GB: 2.05 s by write(), 2.5 s
 * mapped), so a disk keeps write(). */
int fk_io_write(fk_io *io, const void *buf, uint64_t n);

/* As fk_io_write, for a buffer the caller gives up: into a pipe, from 4
 * MiB, its whole pages are handed to the pipe (vmsplice(2): no copy, no
 * page of the pipe's own to fill) and dropped from this process as they go
 * (MADV_DONTNEED), so that nothing written into that memory later, by this
 * process or by malloc reusing it, can reach the reader: the buffer's
 * contents are gone once this returns, and it is only to be freed. The
 * reader gets the same bytes. Elsewhere, or where the kernel refuses, plain
 * fk_io_write. Measured on a 2-core Intel Xeon, 2 GiB through a pipe of 1
 * MiB: 3.45 GB/s against 1.65 GB/s by write(). */
int fk_io_gift(fk_io *io, void *buf, uint64_t n);
/* With on, the calling thread's writes and copies stay on one core (no
 * team of threads of their own): for a thread that writes beside the
 * program's own work on every core (stream.h, fk_writer_later). */
void fk_io_one_core(int on);

/* The size from which fk_io_write and fk_io_transfer into a regular file
 * go on every core (default 64 MiB; UINT64_MAX: never). Returns the old
 * value. For tests and measurements. */
uint64_t fk_io_parallel_min(uint64_t n);

/* Moves n bytes from in to out, zero-copy where the kernel can (see
 * above); from a regular file into a regular file as fk_io_write does, on
 * every core (each thread preads its slices into its mapped slices of the
 * output: one copy, no scratch); scratch (scratchsize bytes) serves the
 * fallback. Returns the
 * bytes moved (fewer than n only at the end of the input), or -1 with
 * errno set. */
int64_t fk_io_transfer(fk_io *in, fk_io *out, uint64_t n, void *scratch, size_t scratchsize);

/* Copies n bytes at offset at of the regular file fd (its file offset
 * untouched: another thread may be reading it) to out, as fk_io_transfer
 * does from a regular file. Returns the bytes copied (fewer than n only at
 * the end of the file), or -1 with errno set. */
int64_t fk_io_copy_at(int fd, uint64_t at, fk_io *out, uint64_t n, void *scratch, size_t scratchsize);

/* Skips n bytes of in: a seek on a regular file, a splice into /dev/null
 * or reads into scratch otherwise. Returns the bytes skipped (fewer than n
 * only at the end of the input), or -1 with errno set. */
int64_t fk_io_skip(fk_io *in, uint64_t n, void *scratch, size_t scratchsize);

/* Reads n bytes at offset at of the descriptor fd (pread: the file offset
 * stays, so that threads read their own ranges of one file at once):
 * returns the bytes read, fewer only at the end of the file, or -1 (errno). */
int64_t fk_pread(int fd, void *buf, uint64_t n, uint64_t at);

/* zlib's CRC-32 of n bytes continuing crc (0 to start), on every core for
 * large n (slices combined with crc32_combine): the same value as
 * crc32_z(crc, p, n). */
uint32_t fk_crc32(uint32_t crc, const void *p, uint64_t n);

#ifdef __cplusplus
}
#endif

#endif
