/* dist.h - distributed runs under MPI: whether this is one, rank and size, "%r" in file names, agreeing on failure. */
#ifndef FK_DIST_H
#define FK_DIST_H

#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A program runs distributed when mpirun started it (Open MPI sets
 * OMPI_COMM_WORLD_SIZE, PMIx sets PMIX_RANK) or when one of its file names
 * holds the rank pattern "%r"; only then does it initialise MPI, so a plain
 * run never touches it. Every rank runs the same command line: "%r" in a
 * name stands for the rank (in.%r.fof is in.0.fof on rank 0), "%%" for a
 * percent sign.
 *
 * Failures: every step that can fail on one rank is followed by
 * fk_dist_agree before the next collective step, so that all ranks learn of
 * it, report it once (the lowest failing rank's message) and exit, and no
 * rank waits for one that has given up.
 *
 * fk_dist_wanted, fk_dist_has_pattern and fk_dist_expand (dist_name.c) need
 * no MPI; the rest (dist.c) is built with MPI when the build found it
 * (FK_HAVE_MPI). Without it fk_dist_available says 0, fk_dist_init and the
 * collectives fail with FK_EUNSUP ("this build of fofkit has no MPI"),
 * fk_dist_agree returns the status it is given, and fk_dist_finalize and
 * fk_dist_abort do nothing.
 */

/* Whether this build has MPI. */
int fk_dist_available(void);

#ifdef FK_HAVE_MPI
#include <mpi.h>
/* The communicator every call of lib/dist*.c runs over on this thread:
 * MPI_COMM_WORLD unless fk_dist_comm_set named another (fofkit_fof_mpi does
 * for the length of its call). fk_dist_comm_set returns the one before. */
MPI_Comm fk_dist_comm(void);
MPI_Comm fk_dist_comm_set(MPI_Comm comm);
#endif

/* Whether the process was started by mpirun, or one of the nnames names
 * (NULL entries allowed) holds "%r": the run is distributed. */
int fk_dist_wanted(const char *const *names, int nnames);

/* Whether name holds the rank pattern "%r". */
int fk_dist_has_pattern(const char *name);

/* name with every "%r" replaced by rank and "%%" by "%" (*out malloc'd,
 * caller frees). A "%" followed by anything else is FK_EINVAL. */
int fk_dist_expand(const char *name, int rank, char **out, fk_error *err);

/* Initialises MPI (once); sets *rank and *size. FK_EUNSUP without MPI.
 * It also finds the rank's place on its node (fk_dist_node) and gives each
 * rank its own share of the node's cores (fk_dist_share_cores) where the
 * launcher bound it to fewer (Open MPI binds each of one or two ranks to a
 * single core) or to cores other ranks of the node share (Open MPI binds
 * three ranks or more to a socket each, or --bind-to none to all):
 * FOFKIT_AFFINITY=keep keeps the launcher's binding. What it did is in
 * fk_dist_cores. */
int fk_dist_init(int *rank, int *size, fk_error *err);

/* The calling rank's rank among the ranks of its node, and their number:
 * 0 and 1 until fk_dist_init has run (and without MPI). dist_node.c, no MPI. */
void fk_dist_node(int *local_rank, int *local_size);
void fk_dist_set_node(int local_rank, int local_size);

/* A rank's cores: the node's CPUs the process may use (node), those it was
 * bound to (before) and has now (after), the first and last of them. */
typedef struct fk_cores {
    int node, before, after, first, last;
} fk_cores;

/* Splits the CPUs this process may run on (its cpuset's, online) into
 * local_size shares in order and, when the share of local_rank is wider
 * than the CPUs the process is bound to now, or overlap says that other
 * ranks of the node share them, binds it to that share and makes it
 * OpenMP's default team (unless OMP_NUM_THREADS is set): 1 when it did, 0
 * when it kept the binding (its own and as wide already, overlap < 0 to
 * keep it in any case, or not Linux).
 * dist_node.c, no MPI. */
int fk_dist_share_cores(int local_rank, int local_size, int overlap, fk_cores *got);

/* What fk_dist_init did to the cores (all zero before it ran). */
void fk_dist_cores(fk_cores *got);

/* Collective: every rank passes its status (FK_OK or an error in err); all
 * return FK_OK when every rank did, else the status and message of the
 * lowest failing rank (copied into err on every rank), and *who (may be
 * NULL) is that rank. */
int fk_dist_agree(int st, fk_error *err, int *who);

/* Collective: the sum, and the least and greatest, of every rank's v (the
 * same on every rank). FK_EUNSUP without MPI. */
int fk_dist_sum_u64(uint64_t v, uint64_t *sum, fk_error *err);
int fk_dist_range(double v, double *lo, double *hi, fk_error *err);

/* Collective sums, minima and maxima of n values in place (nothing
 * without MPI: one process holds them all already). */
void fk_dist_sum(uint64_t *v, int n);
void fk_dist_min(uint64_t *v, int n);
void fk_dist_max(uint64_t *v, int n);

/* Collective: 1 on every rank when every rank passes 1. */
int fk_dist_all(int yes);

/* The rank the launcher gives in the environment before MPI starts
 * (OMPI_COMM_WORLD_RANK, PMIX_RANK), or 0: for saying a usage message once. */
int fk_dist_env_rank(void);

/* Ends MPI (after every rank is done with it); harmless when not started.
 * fk_dist_init also has it run at exit. */
void fk_dist_finalize(void);

/* Ends every rank at once with status (for failures that cannot be agreed
 * on); returns only when MPI was never started. */
void fk_dist_abort(int status);

#ifdef __cplusplus
}
#endif

#endif
