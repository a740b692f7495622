/* grpfile.h - the tipsy .grp text of a group-id array: first line the count, then one id a line. */
#ifndef FK_GRPFILE_H
#define FK_GRPFILE_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"

/* Writes the .grp text of gid (nsource rows, original order) to f:
 * "nsource\n", then gid[r] in decimal, one a line. Formatted on all cores
 * (OpenMP) into per-thread buffers written in order, so the bytes are the
 * same for every number of threads; at most 11 bytes a row of buffers for
 * a block of rows at a time. FK_EIO when a write fails (name is used in the
 * message), FK_ENOMEM. */
int fk_grp_write(FILE *f, const uint32_t *gid, uint64_t nsource, const char *name, fk_error *err);

/* As fk_grp_write, but stops between blocks of rows once *stop (read
 * atomically; NULL: never) is set by another thread, returning FK_ECUT with
 * no message: that thread's error is the one to report. */
int fk_grp_write_stop(FILE *f, const uint32_t *gid, uint64_t nsource, const char *name, const int *stop,
                      fk_error *err);

/* Formats rows lo..hi-1 of gid as .grp lines (no count line) into out, which
 * holds at least FK_GRP_ROW_MAX bytes a row, on the calling thread; returns
 * the bytes written. Can't fail. */
#define FK_GRP_ROW_MAX 11
size_t fk_grp_format(const uint32_t *gid, uint64_t lo, uint64_t hi, char *out);

/* The bytes fk_grp_format writes for rows lo..hi-1, on the calling thread. */
uint64_t fk_grp_bytes(const uint32_t *gid, uint64_t lo, uint64_t hi);

#endif
