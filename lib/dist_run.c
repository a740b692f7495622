/* dist_run.c - a program run under mpirun: detection, lazy MPI start, rank file names, errors agreed by every rank. */
#include "dist_run.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FK_HAVE_MPI
#include <mpi.h>
#endif

int fk_drun_has_rank(const char *pattern)
{
    for (const char *p = pattern; p && *p; p++) {
        if (p[0] != '%') continue;
        if (p[1] == 'r') return 1;
        if (p[1] == '%') p++;
    }
    return 0;
}

/* The number of processes the launcher says it started, or 1. */
static long env_size(void)
{
    const char *e = getenv("OMPI_COMM_WORLD_SIZE");
    if (!e) e = getenv("PMI_SIZE");
    return e ? atol(e) : 1;
}

int fk_drun_wanted(const char *path)
{
    return env_size() > 1 || fk_drun_has_rank(path);
}

int fk_drun_env_rank(void)
{
    const char *e = getenv("OMPI_COMM_WORLD_RANK");
    if (!e) e = getenv("PMIX_RANK");
    return e ? atoi(e) : 0;
}

int fk_drun_expand(const char *pattern, int rank, char *out, size_t size, const char *what, fk_error *err)
{
    size_t k = 0;
    for (const char *p = pattern; *p; p++) {
        char num[16];
        const char *add = num;
        if (p[0] == '%' && p[1] == 'r') {
            snprintf(num, sizeof num, "%d", rank);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            add = "%";
            p++;
        } else if (p[0] == '%') {
            return fk_fail(err, FK_EINVAL, "%s '%s': '%%' must be followed by 'r' (the rank) or '%%'", what, pattern);
        } else {
            num[0] = *p;
            num[1] = '\0';
        }
        size_t len = strlen(add);
        if (k + len >= size) return fk_fail(err, FK_EINVAL, "%s '%s': the name is too long", what, pattern);
        memcpy(out + k, add, len);
        k += len;
    }
    out[k] = '\0';
    return FK_OK;
}

#ifdef FK_HAVE_MPI

static int started;

void fk_drun_finish(void)
{
    int fin = 0;
    if (started && MPI_Finalized(&fin) == MPI_SUCCESS && !fin) MPI_Finalize();
}

int fk_drun_start(int *rank, int *size, fk_error *err)
{
    if (!started) {
        int provided;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return fk_fail(err, FK_EIO, "MPI could not start");
        started = 1;
        atexit(fk_drun_finish);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return FK_OK;
}

int fk_drun_agree(int st, fk_error *err)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine = st ? rank : size, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == size) return FK_OK;
    fk_error e = {0};
    if (rank == first) {
        e = *err;
        e.code = st;
    }
    MPI_Bcast(&e, (int)sizeof e, MPI_BYTE, first, MPI_COMM_WORLD);
    *err = e;
    return e.code;
}

static void reduce(uint64_t *v, int n, MPI_Op op)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, op, MPI_COMM_WORLD);
}

void fk_drun_sum(uint64_t *v, int n) { reduce(v, n, MPI_SUM); }
void fk_drun_min(uint64_t *v, int n) { reduce(v, n, MPI_MIN); }
void fk_drun_max(uint64_t *v, int n) { reduce(v, n, MPI_MAX); }

int fk_drun_all(int yes)
{
    int all;
    MPI_Allreduce(&yes, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

#else /* a build without MPI: nothing starts, so nothing collective is ever called */

int fk_drun_start(int *rank, int *size, fk_error *err)
{
    *rank = 0;
    *size = 1;
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
}

int fk_drun_agree(int st, fk_error *err)
{
    (void)err;
    return st;
}

void fk_drun_sum(uint64_t *v, int n) { (void)v, (void)n; }
void fk_drun_min(uint64_t *v, int n) { (void)v, (void)n; }
void fk_drun_max(uint64_t *v, int n) { (void)v, (void)n; }
int fk_drun_all(int yes) { return yes; }
void fk_drun_finish(void) {}

#endif
