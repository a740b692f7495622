/* gsnap_dist.h - Gadget-family snapshots converted under mpirun: rank r's whole files or slice into a stream of its own, all committed or none. */
#ifndef FK_GSNAP_DIST_H
#define FK_GSNAP_DIST_H

#include "error.h"
#include "gsnap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A snapshot reader (fk_gadget_read, fk_hdf5_read) with its info as void *. */
typedef int (*fk_gsnap_reader)(const char *path, const fk_gsnap_opts *o, fk_gsnap *s, void *info, fk_error *err);

/* Timings and counts of a distributed conversion (this rank's). */
typedef struct fk_gsnap_ranks {
    int rank, size;     /* this rank and the ranks (the launcher's rank, size 1, when MPI did not start) */
    double read_s;      /* seconds reading the slice */
    double write_s;     /* seconds writing it */
    uint64_t n_all;     /* particles kept over every rank */
    int nfiles;         /* files of the snapshot (0: not learned, from stdin) */
    int file_lo, file_hi; /* file_hi > 0: this rank read the whole files [file_lo, file_hi) and no other */
    uint64_t bytes;     /* what the reader read (fk_gsnap's bytes) */
} fk_gsnap_ranks;

/*
 * Collective, every rank of mpirun with the same arguments: starts MPI
 * (dist.h), and rank r of R reads its share of the snapshot path (o's
 * options) with read into s (free it with fk_gsnap_free, also after an
 * error):
 *   - a snapshot of F files, F >= R: the whole files [F r / R, F (r + 1) / R)
 *     and no other (rank 0 reads file 0's header first, for F; each rank
 *     then reads its files' headers, and the particles of each type in the
 *     files before its own are an exclusive scan of the ranks' counts; each
 *     rank checks its header's totals against the sum over the ranks);
 *   - else (and from stdin) slice r of R (o->slice, o->nslices set here).
 * Either way the ranks' particles, one rank after the other, are the whole
 * conversion with the single process's IDs (the order differs from it when
 * several types are kept and whole files are read). It writes s
 * (fk_gsnap_write; source
 * names the input in SNAP) to output with "%r" standing for the rank
 * (fk_dist_expand; binary and force as fk_output_open). Every rank's stream
 * is renamed into place only when every rank succeeded, else none is left.
 * Returns FK_OK on every rank, or on every rank the status and message of
 * the lowest failing rank (FK_EUNSUP in a build without MPI).
 */
int fk_gsnap_convert_ranks(const char *path, const char *source, const char *output, int force, int zlevel,
                           const fk_gsnap_opts *o, fk_gsnap_reader read, void *info, fk_gsnap *s, fk_gsnap_ranks *run,
                           fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
