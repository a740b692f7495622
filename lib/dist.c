/* dist.c - MPI for distributed runs: start and end, the rank and size, agreeing on failure; a stub without MPI. */
#define _GNU_SOURCE
#include "dist.h"

#include <stdlib.h>
#include <string.h>

#ifndef FK_HAVE_MPI

static int nompi(fk_error *err)
{
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
}

int fk_dist_available(void)
{
    return 0;
}

int fk_dist_init(int *rank, int *size, fk_error *err)
{
    *rank = 0;
    *size = 1;
    return nompi(err);
}

int fk_dist_agree(int st, fk_error *err, int *who)
{
    (void)err;
    if (who) *who = 0;
    return st;
}

int fk_dist_sum_u64(uint64_t v, uint64_t *sum, fk_error *err)
{
    *sum = v;
    return nompi(err);
}

int fk_dist_range(double v, double *lo, double *hi, fk_error *err)
{
    *lo = *hi = v;
    return nompi(err);
}

void fk_dist_finalize(void) {}

void fk_dist_sum(uint64_t *v, int n) { (void)v, (void)n; }
void fk_dist_min(uint64_t *v, int n) { (void)v, (void)n; }
void fk_dist_max(uint64_t *v, int n) { (void)v, (void)n; }

int fk_dist_all(int yes)
{
    return yes;
}

void fk_dist_abort(int status)
{
    (void)status;
}

#else

#include <mpi.h>
#ifdef __linux__
#include <sched.h>
#endif

/* Whether this rank's CPUs overlap another rank's of the node (Open MPI
 * binds three ranks or more to a socket each, or none at all). */
static int overlaps_others(MPI_Comm node, int lr, int ls)
{
#ifdef __linux__
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine)) CPU_ZERO(&mine);
    cpu_set_t *all = malloc((size_t)ls * sizeof *all);
    if (!all) return 0;
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, node);
    int over = 0;
    for (int d = 0; d < ls && !over; d++) {
        cpu_set_t both;
        CPU_AND(&both, &mine, &all[d]);
        over = d != lr && CPU_COUNT(&both) > 0;
    }
    free(all);
    return over;
#else
    (void)node, (void)lr, (void)ls;
    return 0;
#endif
}

int fk_dist_available(void)
{
    return 1;
}

/* This thread's communicator, when one was set. */
static _Thread_local int comm_set;
static _Thread_local MPI_Comm comm_now;

MPI_Comm fk_dist_comm(void)
{
    return comm_set ? comm_now : MPI_COMM_WORLD;
}

MPI_Comm fk_dist_comm_set(MPI_Comm comm)
{
    MPI_Comm was = fk_dist_comm();
    comm_now = comm;
    comm_set = 1;
    return was;
}

int fk_dist_init(int *rank, int *size, fk_error *err)
{
    int on = 0;
    MPI_Initialized(&on);
    if (!on) {
        int provided;
        /* Only the main thread calls MPI (OpenMP threads link between the calls). */
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return fk_fail(err, FK_EIO, "MPI could not start");
        atexit(fk_dist_finalize);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    if (!on) {
        /* The ranks sharing this node: a GPU and a share of the cores each. */
        MPI_Comm node;
        int lr = 0, ls = 1;
        int over = 0;
        if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
            MPI_Comm_rank(node, &lr);
            MPI_Comm_size(node, &ls);
            over = overlaps_others(node, lr, ls);
            MPI_Comm_free(&node);
        }
        fk_dist_set_node(lr, ls);
        fk_cores got;
        const char *keep = getenv("FOFKIT_AFFINITY");
        fk_dist_share_cores(lr, ls, keep && !strcmp(keep, "keep") ? -1 : over, &got);
    }
    return FK_OK;
}

int fk_dist_agree(int st, fk_error *err, int *who)
{
    int rank, size, low;
    MPI_Comm_rank(fk_dist_comm(), &rank);
    MPI_Comm_size(fk_dist_comm(), &size);
    int mine = st ? rank : size;
    MPI_Allreduce(&mine, &low, 1, MPI_INT, MPI_MIN, fk_dist_comm());
    if (who) *who = low < size ? low : 0;
    if (low == size) return FK_OK;
    fk_error m;
    memset(&m, 0, sizeof m);
    if (rank == low) {
        m.code = st;
        if (err && err->code) memcpy(m.msg, err->msg, sizeof m.msg);
        m.msg[sizeof m.msg - 1] = 0;
    }
    MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, low, fk_dist_comm());
    if (err) *err = m;
    return m.code;
}

int fk_dist_sum_u64(uint64_t v, uint64_t *sum, fk_error *err)
{
    (void)err;
    MPI_Allreduce(&v, sum, 1, MPI_UINT64_T, MPI_SUM, fk_dist_comm());
    return FK_OK;
}

int fk_dist_range(double v, double *lo, double *hi, fk_error *err)
{
    (void)err;
    MPI_Allreduce(&v, lo, 1, MPI_DOUBLE, MPI_MIN, fk_dist_comm());
    MPI_Allreduce(&v, hi, 1, MPI_DOUBLE, MPI_MAX, fk_dist_comm());
    return FK_OK;
}

static void reduce(uint64_t *v, int n, MPI_Op op)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, op, fk_dist_comm());
}

void fk_dist_sum(uint64_t *v, int n) { reduce(v, n, MPI_SUM); }
void fk_dist_min(uint64_t *v, int n) { reduce(v, n, MPI_MIN); }
void fk_dist_max(uint64_t *v, int n) { reduce(v, n, MPI_MAX); }

int fk_dist_all(int yes)
{
    int all;
    MPI_Allreduce(&yes, &all, 1, MPI_INT, MPI_LAND, fk_dist_comm());
    return all;
}

void fk_dist_finalize(void)
{
    int on = 0, off = 0;
    MPI_Initialized(&on);
    MPI_Finalized(&off);
    if (on && !off) MPI_Finalize();
}

void fk_dist_abort(int status)
{
    int on = 0, off = 0;
    MPI_Initialized(&on);
    MPI_Finalized(&off);
    if (on && !off) MPI_Abort(MPI_COMM_WORLD, status);
}

#endif
