/* filter.h - a stage of the pipeline as the stream sees it: the chunks it reads, loaded and checked; the rest passed on unread. */
#ifndef FK_FILTER_H
#define FK_FILTER_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "snap.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A stage says which chunks it wants (an array of fk_want) and what to do
 * with them; fk_filter_read does the rest, in one pass over the input:
 *
 *   a wanted chunk      is checked (element type, columns, rows), loaded
 *                       (its CRC checked as it arrives) and, with
 *                       FK_W_PASS, written on as it was read (its CRC not
 *                       computed again);
 *   FK_W_DROP           is neither read nor written on (a chunk the stage
 *                       replaces);
 *   FK_W_REFUSE         is an error ("NAME: stream HINT (it has a TAG
 *                       chunk)");
 *   any other chunk     is passed on unread (fk_writer_copy: splice,
 *                       copy_file_range), or skipped when nothing is
 *                       written on.
 *
 * Then FK_W_REQUIRED chunks that did not come are an error ("NAME: stream
 * has no TAG chunk (HINT)"). A second chunk of a tag and level is an error
 * ("NAME: stream has two TAG chunks"). Only level 0 is wanted unless
 * FK_W_LEVELS is set (then levels 0 to FK_WANT_LEVELS - 1; a higher one is
 * an error); chunks of other levels pass on.
 */

#define FK_WANT_LEVELS 8

enum {
    FK_W_PARTICLE = 1 << 0, /* one row per particle of SNAP (fk_snap_check_chunk)       */
    FK_W_ID = 1 << 1,       /* with FK_W_PARTICLE: <u4 or <u8, one column (the ID chunk) */
    FK_W_TEXT = 1 << 2,     /* a text chunk, loaded NUL-terminated                       */
    FK_W_PASS = 1 << 3,     /* written on as read                                        */
    FK_W_REQUIRED = 1 << 4, /* missing: an error                                         */
    FK_W_REFUSE = 1 << 5,   /* present: an error                                         */
    FK_W_DROP = 1 << 6,     /* neither read nor written on                               */
    FK_W_LEVELS = 1 << 7    /* one per level                                             */
};

typedef struct fk_want {
    const char *tag;
    uint32_t flags;     /* FK_W_* */
    const char *dtype;  /* the element type asked, or NULL for any (FK_W_ID: <u4 or <u8) */
    uint32_t ncols;     /* the columns asked, or 0 for any                                 */
    const char *hint;   /* for the messages of FK_W_REQUIRED and FK_W_REFUSE               */
    /* filled by fk_filter_read: */
    int found;                        /* chunks of this tag met (dropped ones too)         */
    int nlevels;                      /* 1 + the highest level loaded, 0 when none         */
    uint64_t seq[FK_WANT_LEVELS];     /* the chunk's position in the stream (SNAP is 0)    */
    fk_chunk chunk[FK_WANT_LEVELS];
    void *data[FK_WANT_LEVELS];       /* the payloads, malloc'd: the caller owns them      */
} fk_want;

typedef struct fk_filter {
    const char *name; /* the input in messages */
    fk_reader *r;
    fk_writer *w;     /* NULL: nothing is written on */
    fk_snap snap;
    uint64_t seq;     /* chunks read so far after SNAP */
} fk_filter;

/* Starts reading in (name in messages) and, when out is not NULL, a stream
 * on out (zlib level zlevel): the SNAP chunk is read, parsed and written
 * on. */
int fk_filter_start(fk_filter *f, FILE *in, const char *name, FILE *out, int zlevel, fk_error *err);

/* As fk_filter_start, reading an overlay with its base (fk_reader_follow:
 * path the input's file name, NULL for stdin): the distributed stages. */
int fk_filter_start_follow(fk_filter *f, FILE *in, const char *name, const char *path, FILE *out, int zlevel,
                           fk_error *err);

/* The chunks written on from now on go by a thread of the writer's own
 * while the stage works (fk_writer_later): for a stage whose work can go
 * on meanwhile. The payloads of FK_W_PASS chunks must then stay as they
 * were read until fk_filter_finish (or the next chunk the stage writes). */
void fk_filter_later(fk_filter *f);

/* Reads the rest of the input, to its END chunk, as described above. On
 * failure what was loaded stays in want (fk_want_free frees it). */
int fk_filter_read(fk_filter *f, fk_want *want, int nwant, fk_error *err);

/* As fk_filter_read, but stops as soon as every chunk want names (its tag
 * not empty; not FK_W_REFUSE or FK_W_DROP; level 0) has been loaded, with
 * *more = 1: the stage can do its work and write what it makes before the
 * rest of the input, which fk_filter_read then reads on (a second chunk of
 * a wanted tag, or a refused one, still an error there). At the end of the
 * input (a wanted chunk missing: the rest of the stream is read as by
 * fk_filter_read), *more = 0. */
int fk_filter_read_until(fk_filter *f, fk_want *want, int nwant, int *more, fk_error *err);

/* Ends the stream written on (END chunk). */
int fk_filter_finish(fk_filter *f, fk_error *err);

/* Frees the reader and writer (not the files). */
void fk_filter_free(fk_filter *f);

/* Frees every payload want holds. */
void fk_want_free(fk_want *want, int nwant);

#ifdef __cplusplus
}
#endif

#endif
