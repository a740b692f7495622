/* fileio.h - opening inputs ("-" is stdin) and atomic outputs (temporary file, renamed on commit). */
#ifndef FK_FILEIO_H
#define FK_FILEIO_H

#include <stdio.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens path for reading ("-" or NULL: stdin) with a large buffer. With
 * binary set, a terminal on stdin is refused unless force is set (binary
 * data is not typed). *f is set to the stream (never closed for stdin by
 * fk_input_close). */
int fk_input_open(FILE **f, const char *path, int binary, int force, fk_error *err);
void fk_input_close(FILE *f);

/* An output being written: to stdout, or to a temporary file beside the
 * final path that fk_output_commit renames into place, so that a failed or
 * interrupted program never leaves a half-written file under the final
 * name. */
typedef struct fk_output fk_output;

/* Opens path ("-" or NULL: stdout). With binary set, a terminal on stdout is
 * refused unless force is set. An existing path that is not a regular file
 * (/dev/null, a FIFO) is written in place, not through a temporary. */
int fk_output_open(fk_output **o, const char *path, int binary, int force, fk_error *err);

FILE *fk_output_file(fk_output *o);

/* The name used in messages ("stdout" or the final path). */
const char *fk_output_name(const fk_output *o);

/* Whether o is written into a temporary that commit renames into place
 * (not stdout, not a path written in place): nothing shows under its name
 * until fk_output_commit, so a writer may fill it before its input has been
 * checked. */
int fk_output_atomic(const fk_output *o);

/* The file being written: the temporary that commit renames, or the path
 * itself for an output written in place; NULL for stdout (or when the
 * unnamed file cannot be given a name). For writers that write it through
 * other descriptors (MPI-IO) and commit it here: an output is written into
 * an unnamed file where the system allows (it vanishes with a process that
 * is killed), which this gives its temporary name. */
const char *fk_output_target(fk_output *o);

/* Flushes, fsyncs and closes the temporary file (each step checked) and
 * renames it onto the final path; for stdout, flushes and checks for write
 * errors. Frees o, also on failure (then the temporary is removed). */
int fk_output_commit(fk_output *o, fk_error *err);

/* Discards the output: closes and removes the temporary file. Frees o. */
void fk_output_abort(fk_output *o);

/* The name of the output being written through f in messages ("stdout", or
 * the path given to fk_output_open), or NULL when f is no such output. */
const char *fk_output_name_of(const FILE *f);

/* The one shape of a failed write: "NAME: cannot write: REASON" (FK_EIO),
 * the reason strerror(errnum) ("an I/O error" for 0). name NULL: the output
 * being written through f (fk_output_name_of; "the output" if none). */
int fk_write_failed(fk_error *err, const char *name, const FILE *f, int errnum);

/* Removes every temporary file still open. Async-signal-safe (only
 * unlink(2)); for signal handlers and fatal-error paths. */
void fk_output_cleanup_all(void);

#ifdef __cplusplus
}
#endif

#endif
