/* sniff.h - what a file is by its first bytes (a fofkit stream, tipsy, Gadget-2, HDF5, gzip), and which program reads it. */
#ifndef FK_SNIFF_H
#define FK_SNIFF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A reader that finds its input is not what it reads says what the input
 * is instead and which program reads that, from the first bytes it read:
 *   fofkit stream   0x89 'F' 'O' 'F' '\r' '\n' 0x1a '\n' (fofstream(5))
 *   HDF5            0x89 'H' 'D' 'F' '\r' '\n' 0x1a '\n'
 *   gzip            0x1f 0x8b 0x08
 *   Gadget-2        a record marker of 256 in either byte order (format 1;
 *                   the header record's closing marker at byte 260 when that
 *                   far was read), or of 8 followed by "HEAD" and 8 (format 2)
 *   tipsy           ndim (bytes 12-15) 3 and nbodies (8-11) the sum of the
 *                   three counts (16-27), big- or little-endian
 * FK_SNIFF_BYTES is as many as the tests look at.
 */

#define FK_SNIFF_BYTES 264

enum { FK_FILE_UNKNOWN = 0, FK_FILE_STREAM, FK_FILE_TIPSY, FK_FILE_GADGET2, FK_FILE_HDF5, FK_FILE_GZIP };

/* The kind of a file whose first n bytes are head. */
int fk_sniff(const void *head, size_t n);

/* What a file of kind k is ("an HDF5 file"), and what to do with it instead
 * ("convert a snapshot with hdf52bin"): for messages of the shape
 * "NAME: not a tipsy file but an HDF5 file (convert a snapshot with
 * hdf52bin)". Empty strings for FK_FILE_UNKNOWN. */
const char *fk_sniff_what(int k);
const char *fk_sniff_advice(int k);

/* The end of file the HDF5 superblock at the start of head (got bytes)
 * gives, base address included; 0 when head holds no superblock it can
 * read: a file shorter than this was cut short ("truncated"). The layouts of
 * versions 0 and 1, and of 2 and 3: the HDF5 File Format Specification,
 * section II.A "Disk Format: Level 0A - Format Signature and Superblock". */
uint64_t fk_hdf5_superblock_eof(const unsigned char *head, size_t got);

#ifdef __cplusplus
}
#endif

#endif
