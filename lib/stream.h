/* stream.h - the fofkit stream: a versioned, tagged-chunk binary format read and written through pipes. */
#ifndef FK_STREAM_H
#define FK_STREAM_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Layout (all integers little-endian; see fofstream(5) for the full text).
 *
 * A stream is a 64-byte stream header followed by chunks. Every chunk is a
 * 64-byte chunk header followed by its payload, zero-padded to a multiple of
 * 64 bytes, so every header and every payload starts at a file offset that is
 * a multiple of 64 (arrays can be mapped in place, e.g. by numpy). The last
 * chunk is always END; a stream without it is truncated.
 *
 * Stream header
 *   OFFSET SIZE DESCRIPTION
 *        0    8 magic: 0x89 'F' 'O' 'F' '\r' '\n' 0x1a '\n'
 *        8    4 format version (FK_STREAM_VERSION)
 *       12   48 reserved, zero
 *       60    4 CRC-32 (zlib) of bytes 0..59
 *
 * Chunk header
 *   OFFSET SIZE DESCRIPTION
 *        0    8 tag: ASCII [A-Z0-9_], NUL-padded ("POS", "SINK", ...)
 *        8    4 element type as a numpy typestr, NUL-padded: "<f4", "<f8",
 *               "<u4", "<u8", "<i4", "<i8", "|u1"
 *       12    4 flags: bit 0 payload is a zlib stream (FK_CF_ZLIB);
 *               bit 1 one row per particle, in stream order (FK_CF_PARTICLE);
 *               bit 2 payload is UTF-8 "key value" text lines (FK_CF_TEXT)
 *       16    8 rows
 *       24    4 columns (elements per row, >= 1)
 *       28    4 level: instance number for tags that repeat (0 otherwise)
 *       32    8 stored payload size in bytes (after compression, if any)
 *       40    4 CRC-32 (zlib) of the stored payload bytes
 *       44   16 reserved, zero
 *       60    4 CRC-32 (zlib) of bytes 0..59 of this header
 *   The uncompressed payload is rows * columns * element size bytes, the
 *   array in C (row-major) order.
 */

#define FK_STREAM_VERSION 1u
#define FK_STREAM_ALIGN 64u
#define FK_TAG_MAX 8
#define FK_CF_ZLIB 1u
#define FK_CF_PARTICLE 2u
#define FK_CF_TEXT 4u
#define FK_CF_KNOWN (FK_CF_ZLIB | FK_CF_PARTICLE | FK_CF_TEXT)

/* A chunk header, decoded. */
typedef struct fk_chunk {
    char tag[FK_TAG_MAX + 1];
    char dtype[5];
    uint32_t flags;
    uint64_t nrows;
    uint32_t ncols;
    uint32_t level;
    uint64_t stored; /* payload bytes as stored           */
    uint32_t crc;    /* CRC-32 of the stored payload      */
} fk_chunk;

/* Size in bytes of one element of a typestr, or 0 if it is not one of the
 * supported ones. */
size_t fk_dtype_size(const char *dtype);

/* Uncompressed payload size of c (rows * columns * element size). */
uint64_t fk_chunk_rawsize(const fk_chunk *c);

/* Fills c for a new chunk; stored and crc are set by the writer. */
void fk_chunk_init(fk_chunk *c, const char *tag, const char *dtype,
                   uint32_t flags, uint64_t nrows, uint32_t ncols);

typedef struct fk_reader fk_reader;
typedef struct fk_writer fk_writer;

/* Starts reading a stream from f (not owned; name is used in messages) and
 * checks its header. Reading goes through f's descriptor (fdio.h), not its
 * stdio buffer: nothing may have been read from f through stdio before. On
 * error *r is NULL and FK_EFORMAT/FK_EIO/FK_ENOMEM is returned: an empty
 * input, a wrong magic, an unknown version. */
int fk_reader_open(fk_reader **r, FILE *f, const char *name, fk_error *err);

/* Calls fn(ctx, bytes read so far) as the reading goes on (after each
 * payload or block of one), for progress reports. */
void fk_reader_set_progress(fk_reader *r, void (*fn)(void *ctx, uint64_t offset), void *ctx);

/* Makes r follow an overlay (fofstream(5), OVERLAYS; overlay.h): a stream
 * whose first chunk is BASE holds only the chunks a stage added to another
 * stream file, its base, which BASE names, sizes and identifies. r then
 * reads the base's chunks (its own base's first, when it is an overlay too)
 * and after the base's END the overlay's own: one stream, as if they had
 * been appended to the base. The base is opened and checked at the BASE
 * chunk: one that cannot be opened, or is not the stream the overlay was
 * written on, fails there ("NAME: its base BASE ..."). path is the file r
 * reads (a relative base is found beside it), NULL for stdin (the working
 * directory). Call before the first fk_reader_next; without this call BASE
 * is a chunk as any other (a program does not open files a stream names
 * unless asked to). */
int fk_reader_follow(fk_reader *r, const char *path, fk_error *err);

/* The identity of the stream file on descriptor fd (a regular file; name
 * in messages): its size, and the CRC-32 of bytes 0 to 59 of its stream
 * header and of every chunk header in order, END's included (each holds its
 * payload's size and CRC), read with pread (fd's offset untouched), no
 * payload read: what an overlay's BASE records of its base. FK_EFORMAT for
 * a file that is not a whole stream. */
int fk_stream_identity(int fd, const char *name, uint64_t *bytes, uint32_t *crc, fk_error *err);

/* Advances to the next chunk, first skipping the payload of the current one
 * if it was neither read nor copied: a payload nobody reads is not
 * checksummed (fk_reader_verify checks one without keeping it). Every
 * header is checked (CRC, fields). Returns 1 and fills c when a chunk
 * follows, 0 at the END chunk (after checking that nothing follows it), or
 * a negative status: a truncated stream, a damaged header, a malformed
 * field. */
int fk_reader_next(fk_reader *r, fk_chunk *c, fk_error *err);

/* Reads the current chunk's payload, verifying its CRC (on other cores as
 * it arrives) and its padding and decompressing it, into buf, which must
 * hold exactly fk_chunk_rawsize() bytes (bufsize). */
int fk_reader_read(fk_reader *r, void *buf, uint64_t bufsize, fk_error *err);

/* Consumes the current chunk's payload, checking everything
 * fk_reader_read checks (CRC, padding, that a zlib payload inflates to
 * exactly its size), keeping nothing: for `fofdump --check`. */
int fk_reader_verify(fk_reader *r, fk_error *err);

/* As fk_reader_read, into a new malloc'd buffer (*buf, free() it). A chunk
 * of zero bytes gives a valid 1-byte allocation. */
int fk_reader_load(fk_reader *r, void **buf, fk_error *err);

/* As fk_reader_load for a FK_CF_TEXT chunk, NUL-terminated. */
int fk_reader_load_text(fk_reader *r, char **text, fk_error *err);

/* Seconds spent so far waiting for the input's writer (a pipe with
 * nothing in it), apart from the reading and checking: for -v. */
double fk_reader_waited(const fk_reader *r);

/* Bytes consumed so far (the stream header included). */
uint64_t fk_reader_offset(const fk_reader *r);

/* The input's size when it is a regular file, else 0 (for progress). */
uint64_t fk_reader_size(const fk_reader *r);

void fk_reader_close(fk_reader *r);

/* Starts a stream on f (not owned): writes the stream header, through f's
 * descriptor (f's stdio buffer is flushed first and not used after). With zlevel
 * 1..9 every chunk written is zlib-compressed at that level (pass-through
 * chunks too); with 0, new chunks are raw and pass-through chunks keep their
 * stored form. */
int fk_writer_open(fk_writer **w, FILE *f, int zlevel, fk_error *err);

/* Writes one chunk: c describes it (tag, dtype, flags, rows, columns,
 * level); data holds fk_chunk_rawsize(c) bytes. */
int fk_writer_put(fk_writer *w, const fk_chunk *c, const void *data,
                  fk_error *err);

/* Writes a chunk that was just read (fk_reader_read or _load, so its CRC
 * was verified) and not changed, described by the c the reader gave: its
 * CRC is taken from c, not computed again. Behaves as fk_writer_put when the
 * writer compresses or the chunk was stored compressed. */
int fk_writer_put_read(fk_writer *w, const fk_chunk *c, const void *data, fk_error *err);

/* As fk_writer_put, handing data over (a malloc'd buffer: the writer frees
 * it): the chunk is written by the writer's own thread while the caller
 * goes on (reading the next chunk, say), the same thread that writes the
 * chunks of fk_writer_later. The next call on w waits for it first (or,
 * under fk_writer_later or for a give with room, fk_writer_room, lists its
 * chunk after it), so the chunks keep their order, and a failure to write
 * it is that call's failure. */
int fk_writer_give(fk_writer *w, const fk_chunk *c, void *data, fk_error *err);

/* Lets given chunks (fk_writer_give) wait their turn while the bytes of
 * those not yet written, the new one's included, total at most bytes (0,
 * the default: the next call waits for the one given before): the caller
 * reads on while the writer is slower for a while, in that much memory. */
void fk_writer_room(fk_writer *w, uint64_t bytes);

/* Waits until the given chunks not yet written leave bytes of the room
 * (fk_writer_room) free, or none is left (without room: until all are
 * written): before making a chunk to give, so that it and what it is made
 * from fit too. A failure to write one of them is this call's. */
int fk_writer_reserve(fk_writer *w, uint64_t bytes, fk_error *err);

/* From now on, the chunks of r passed on unread (fk_writer_copy) and those
 * written on as read (fk_writer_put_read) are listed, not written: a
 * thread of the writer's own writes them, in order, while the caller goes
 * on (the copies by offset: r keeps reading, and skips their payloads).
 * Text chunks (fk_writer_text) are listed too, as copies. The next other
 * call on w (fk_writer_put, _give, _finish, a copy that cannot be listed)
 * waits for the list first, so the chunks keep
 * their order, and a failure to write a listed chunk is that call's. The
 * payloads given to fk_writer_put_read must stay as they are until then.
 * Only for a regular input file and a writer that does not compress
 * (zlevel 0); otherwise nothing changes. For a stage whose own work (the
 * link, say) can go on while the chunks it passes on are written.
 * FOFKIT_WRITE_LATER=0 in the environment: nothing changes either (the
 * chunks written as they are passed on, to measure the difference). */
void fk_writer_later(fk_writer *w, const fk_reader *r);

/* From now on, the chunks written on as read (fk_writer_put_read, _give_read)
 * are listed for the writer's thread, whatever the input: the stage reads
 * on (the next chunks it needs) while they are written. Their payloads must
 * stay as they are until the next call on w that waits for the list (any
 * other write, fk_writer_finish). Only for a writer that does not compress.
 * For a stage that reads several chunks before its work (foflink: POS, the
 * tree, MASS and TYPE) and keeps them unchanged. */
void fk_writer_list_reads(fk_writer *w);

/* As fk_writer_put_read, handing data over (a malloc'd buffer: the writer
 * frees it once written; listed under fk_writer_later). */
int fk_writer_give_read(fk_writer *w, const fk_chunk *c, void *data, fk_error *err);

/* Writes a FK_CF_TEXT chunk holding the NUL-terminated text (under
 * fk_writer_later, a copy listed). */
int fk_writer_text(fk_writer *w, const char *tag, uint32_t level,
                   const char *text, fk_error *err);

/* Copies the current chunk of r (described by c, its payload not yet read)
 * to w as it is stored, without reading it into this process where the
 * kernel can move it (splice, copy_file_range, sendfile: see fdio.h) and
 * without checking its CRC: the program that reads the payload checks it.
 * A writer that compresses (zlevel > 0) reads, checks and compresses an
 * uncompressed chunk instead. */
int fk_writer_copy(fk_writer *w, fk_reader *r, const fk_chunk *c,
                   fk_error *err);

/* Writes the END chunk and flushes. The stream is complete only after this
 * returns FK_OK. */
int fk_writer_finish(fk_writer *w, fk_error *err);

void fk_writer_free(fk_writer *w);

#ifdef __cplusplus
}
#endif

#endif
