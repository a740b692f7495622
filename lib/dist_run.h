/* dist_run.h - a program run under mpirun: detection, lazy MPI start, rank file names, errors agreed by every rank. */
#ifndef FK_DIST_RUN_H
#define FK_DIST_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/*
 * A program runs distributed when mpirun started it with more than one
 * process (Open MPI sets OMPI_COMM_WORLD_SIZE, PMI launchers PMI_SIZE) or
 * when a file name it was given holds the rank pattern "%r"; a single
 * process under mpirun with plain names runs as without it. MPI is started
 * only then (lazily, by
 * fk_drun_start), so a plain run never touches it. Each rank r reads and
 * writes its own files: "%r" in a name becomes r in decimal ("%%" a
 * single "%").
 *
 * Errors: every step that can fail on one rank alone is followed by
 * fk_drun_agree, after which every rank holds the same status and the
 * message of the lowest failing rank; the program prints it on rank 0 only
 * and every rank exits with the same status. No rank leaves a collective
 * step while another waits in it, so a bad input never hangs the run.
 *
 * A build without MPI (FK_HAVE_MPI unset) keeps the detection and the file
 * names; fk_drun_start fails with FK_EUNSUP ("this build of fofkit has no
 * MPI").
 */

/* 1 when the environment says mpirun started more than one process or
 * path holds "%r"; 0 otherwise. Touches no MPI. path may be NULL. */
int fk_drun_wanted(const char *path);

/* The rank and size the environment gives before MPI starts
 * (OMPI_COMM_WORLD_RANK, PMIX_RANK), or 0 and 1: for quieting repeated
 * usage messages on ranks above 0. */
int fk_drun_env_rank(void);

/* Starts MPI once (threads funnelled: OpenMP regions make no MPI calls)
 * and sets *rank and *size; MPI is finalised at exit. FK_EUNSUP without
 * MPI, FK_EIO when MPI fails to start. */
int fk_drun_start(int *rank, int *size, fk_error *err);

/* Writes pattern with every "%r" replaced by rank (and "%%" by "%") into
 * out (size bytes). FK_EINVAL when it does not fit or another "%"
 * sequence appears (what names the option in the message). */
int fk_drun_expand(const char *pattern, int rank, char *out, size_t size, const char *what, fk_error *err);

/* 1 when pattern holds "%r". */
int fk_drun_has_rank(const char *pattern);

/* Collective: every rank passes its own status (with its message in err);
 * every rank gets back the status of the lowest failing rank, its message
 * in err, or FK_OK. */
int fk_drun_agree(int st, fk_error *err);

/* Collective sums, minima and maxima of n uint64_t values in place. */
void fk_drun_sum(uint64_t *v, int n);
void fk_drun_min(uint64_t *v, int n);
void fk_drun_max(uint64_t *v, int n);

/* Collective: 1 on every rank when every rank passes 1. */
int fk_drun_all(int yes);

/* Finalises MPI if it was started (also done at exit); idempotent. */
void fk_drun_finish(void);

#endif
