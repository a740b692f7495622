/* overlay.h - overlays: streams holding only the chunks a stage added to another stream file, their base, which a BASE chunk names, sizes and identifies. */
#ifndef FK_OVERLAY_H
#define FK_OVERLAY_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An overlay (fofstream(5), OVERLAYS) is a stream whose first chunk is BASE,
 * then the chunks a stage made, then END: no SNAP, none of its input's
 * chunks. A reader that follows it (fk_reader_follow) reads the base's
 * chunks and then the overlay's, one stream. So a stage under mpirun writes
 * only what it adds to a rank's particles (foflink's LINK and GMIN, 8 bytes
 * a particle a level; groups' GRPS, GIDL, GPAR, 4) instead of the whole
 * stream again.
 *
 * BASE, text, key value lines:
 *   base         the base's file name: relative to the overlay's directory
 *                (as a symbolic link's target, and qemu-img's backing file:
 *                "looked up relative to the directory containing" the
 *                image), or absolute; an overlay read from stdin finds a
 *                relative one in the working directory
 *   bytes        the base's size
 *   headers_crc  the CRC-32 of bytes 0 to 59 of the base's stream header
 *                and chunk headers (fk_stream_identity: each holds its
 *                payload's size and CRC), decimal
 *   program      the program that wrote the overlay (for the messages)
 * A base of another size or other headers (rewritten, another rank's, of
 * another run) is refused before any of its chunks is read.
 */

#define FK_OVERLAY_DEPTH 16 /* overlays above one stream, at most: a loop of names ends there */

/* The BASE record (*text, malloc'd) of an overlay written at output (NULL
 * or "-": stdout, whose reader finds the base from the working directory)
 * on the stream file input, written by program: input's name relative to
 * output's directory (absolute when input is), its size and headers' CRC.
 * FK_EINVAL when input is stdin; FK_EFORMAT when it is not a whole stream
 * file. */
int fk_overlay_record(const char *input, const char *output, const char *program, char **text, fk_error *err);

/* Starts an overlay on out (fk_writer_open, zlib level zlevel): the stream
 * header and the BASE chunk of fk_overlay_record. */
int fk_overlay_start(fk_writer **w, FILE *out, const char *input, const char *output, const char *program,
                     int zlevel, fk_error *err);

/* Opens the base that an overlay's BASE record (text) names, the overlay
 * being the file overlay_path (NULL: stdin) called overlay_name in
 * messages: *f open for reading at its start, *path (malloc'd) its name as
 * found. A base that cannot be opened (FK_EIO), is not a whole stream, or
 * is not of the size and headers BASE records (FK_EFORMAT: "OVERLAY: its
 * base BASE is not the stream it was written on (...)") fails. */
int fk_overlay_open_base(const char *text, const char *overlay_path, const char *overlay_name, FILE **f, char **path,
                         fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
