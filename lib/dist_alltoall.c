/* dist_alltoall.c - all-to-all exchanges of any size under MPI: fixed-size records, in rounds that keep MPI's int counts. */
#include "dist_alltoall.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "dist.h"

#ifndef FK_HAVE_MPI

static int nompi(fk_error *err)
{
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
}

int fk_dist_counts(const uint64_t *count, uint64_t *rcount, fk_error *err)
{
    (void)count, (void)rcount;
    return nompi(err);
}

int fk_dist_alltoall_at(const void *send, const uint64_t *count, size_t size, void *recv, const uint64_t *rcount,
                        const uint64_t *roff, fk_error *err)
{
    (void)send, (void)count, (void)size, (void)recv, (void)rcount, (void)roff;
    return nompi(err);
}

int fk_dist_alltoall(const void *send, const uint64_t *count, size_t size, void **recv, uint64_t *rcount,
                     uint64_t *nrecv, fk_error *err)
{
    (void)send, (void)count, (void)size, (void)rcount;
    *recv = NULL;
    *nrecv = 0;
    return nompi(err);
}

#else

#include <mpi.h>

#define COMM fk_dist_comm() /* this thread's communicator (dist.h) */

/* FOFKIT_DIST_ROUND, 0 when unset or not a positive number. */
static uint64_t env_round(void)
{
    const char *e = getenv("FOFKIT_DIST_ROUND");
    char *end;
    unsigned long long v = e ? strtoull(e, &end, 10) : 0;
    return e && *e && !*end ? (uint64_t)v : 0;
}

/* Every record in one MPI_Alltoallv (counts and displacements fit an int):
 * count[q] records from soff[q] to rank q, rcount[q] from rank q to roff[q].
 * An empty block's displacement is 0: only those of blocks that move are
 * known to fit. */
static void one_round(const void *send, const uint64_t *count, const uint64_t *rcount, MPI_Datatype t, void *recv, int R,
                      int *sc, int *sd, int *rc, int *rd, const uint64_t *soff, const uint64_t *roff)
{
    for (int q = 0; q < R; q++) {
        sc[q] = (int)count[q], sd[q] = count[q] ? (int)soff[q] : 0;
        rc[q] = (int)rcount[q], rd[q] = rcount[q] ? (int)roff[q] : 0;
    }
    MPI_Alltoallv(send, sc, sd, t, recv, rc, rd, t, COMM);
}

/* rounds of at most cap records a pair, through pack and unpack buffers of R cap records each */
static void in_rounds(const unsigned char *send, const uint64_t *count, const uint64_t *rcount, size_t size,
                      MPI_Datatype t, unsigned char *recv, int R, uint64_t cap, uint64_t rounds, unsigned char *sbuf,
                      unsigned char *rbuf, int *sc, int *sd, int *rc, int *rd, const uint64_t *soff,
                      const uint64_t *roff)
{
    for (uint64_t k = 0; k < rounds; k++) {
        int so = 0, ro = 0;
        for (int q = 0; q < R; q++) {
            uint64_t ns = fk_dist_round_share(count[q], cap, k), nr = fk_dist_round_share(rcount[q], cap, k);
            memcpy(sbuf + (size_t)so * size, send + (soff[q] + k * cap) * size, ns * size);
            sc[q] = (int)ns, sd[q] = so, so += (int)ns;
            rc[q] = (int)nr, rd[q] = ro, ro += (int)nr;
        }
        MPI_Alltoallv(sbuf, sc, sd, t, rbuf, rc, rd, t, COMM);
        for (int q = 0; q < R; q++)
            memcpy(recv + (roff[q] + k * cap) * size, rbuf + (size_t)rd[q] * size, (size_t)rc[q] * size);
    }
}

/* This rank's records to itself, copied on every core beside MPI, which
 * would copy them on one: 1/R of what a rank sends, half of it at 2 ranks. */
static void copy_self(const unsigned char *send, unsigned char *recv, uint64_t bytes)
{
    const uint64_t piece = (uint64_t)1 << 22;
    #pragma omp parallel for schedule(static)
    for (uint64_t a = 0; a < bytes; a += piece) memcpy(recv + a, send + a, bytes - a < piece ? bytes - a : piece);
}

int fk_dist_counts(const uint64_t *count, uint64_t *rcount, fk_error *err)
{
    (void)err;
    MPI_Alltoall(count, 1, MPI_UINT64_T, rcount, 1, MPI_UINT64_T, COMM);
    return FK_OK;
}

static int no_memory(fk_error *err, int rank, uint64_t nr, size_t size)
{
    return fk_fail(err, FK_ENOMEM, "rank %d: out of memory receiving %" PRIu64 " records of %zu bytes", rank, nr, size);
}

/* fk_dist_alltoall_at after the caller's own status st: st and this call's
 * allocations are agreed on together, every rank taking part in every
 * collective whatever its status (roff is not read unless st is FK_OK). */
static int move_at(int st, const void *send, const uint64_t *count, size_t size, void *recv, const uint64_t *rcount,
                   const uint64_t *roff, fk_error *err)
{
    int R, rank;
    MPI_Comm_size(COMM, &R);
    MPI_Comm_rank(COMM, &rank);
    int *sc = malloc((size_t)R * sizeof *sc), *sd = malloc((size_t)R * sizeof *sd), *rc = malloc((size_t)R * sizeof *rc),
        *rd = malloc((size_t)R * sizeof *rd);
    uint64_t *soff = malloc((size_t)(R + 1) * sizeof *soff);
    uint64_t *mc = malloc((size_t)R * sizeof *mc), *mr = malloc((size_t)R * sizeof *mr); /* what MPI moves */
    uint64_t nr = 0;
    for (int q = 0; q < R; q++) nr += rcount[q];
    if (!st && (!sc || !sd || !rc || !rd || !soff || !mc || !mr)) st = no_memory(err, rank, nr, size);
    /* the plan, the same on every rank: one call, or rounds of cap records a
     * pair. One call when what MPI moves, a rank's records to itself left
     * out, lies within an int's reach in both buffers (the caller's offsets
     * may leave gaps). */
    uint64_t span = 0, most = 0;
    if (!st) {
        soff[0] = 0;
        for (int q = 0; q < R; q++) {
            soff[q + 1] = soff[q] + count[q];
            mc[q] = q == rank ? 0 : count[q], mr[q] = q == rank ? 0 : rcount[q];
            if (mc[q] && soff[q + 1] > span) span = soff[q + 1];
            if (mr[q] && roff[q] + mr[q] > span) span = roff[q] + mr[q];
            if (mc[q] > most) most = mc[q];
        }
    }
    uint64_t env = env_round() ? env_round() : UINT64_MAX;
    uint64_t plan[3] = {span, most, env};
    fk_dist_max(plan, 2);
    fk_dist_min(plan + 2, 1);
    const uint64_t cap = fk_dist_round_cap(R, size, plan[2] == UINT64_MAX ? 0 : plan[2]);
    const int whole = plan[0] <= INT_MAX && (plan[2] == UINT64_MAX || plan[1] <= plan[2]);
    const uint64_t rounds = whole ? 1 : (plan[1] + cap - 1) / cap;
    unsigned char *sbuf = NULL, *rbuf = NULL;
    if (!st && !whole && (!(sbuf = malloc((size_t)R * cap * size)) || !(rbuf = malloc((size_t)R * cap * size))))
        st = no_memory(err, rank, nr, size);
    if ((st = fk_dist_agree(st, err, NULL)) == FK_OK) {
        MPI_Datatype t;
        MPI_Type_contiguous((int)size, MPI_BYTE, &t);
        MPI_Type_commit(&t);
        if (count[rank])
            copy_self((const unsigned char *)send + soff[rank] * size, (unsigned char *)recv + roff[rank] * size,
                      count[rank] * size);
        if (whole)
            one_round(send, mc, mr, t, recv, R, sc, sd, rc, rd, soff, roff);
        else
            in_rounds(send, mc, mr, size, t, recv, R, cap, rounds, sbuf, rbuf, sc, sd, rc, rd, soff, roff);
        MPI_Type_free(&t);
    }
    free(sbuf), free(rbuf), free(sc), free(sd), free(rc), free(rd), free(soff), free(mc), free(mr);
    return st;
}

int fk_dist_alltoall_at(const void *send, const uint64_t *count, size_t size, void *recv, const uint64_t *rcount,
                        const uint64_t *roff, fk_error *err)
{
    return move_at(FK_OK, send, count, size, recv, rcount, roff, err);
}

int fk_dist_alltoall(const void *send, const uint64_t *count, size_t size, void **recv, uint64_t *rcount,
                     uint64_t *nrecv, fk_error *err)
{
    int R, rank;
    MPI_Comm_size(COMM, &R);
    MPI_Comm_rank(COMM, &rank);
    *recv = NULL;
    *nrecv = 0;
    int st = fk_dist_counts(count, rcount, err);
    uint64_t nr = 0;
    for (int q = 0; q < R; q++) nr += rcount[q];
    uint64_t *roff = malloc((size_t)R * sizeof *roff);
    void *out = fk_big_alloc(nr ? nr * size : 1); /* filled by MPI: faulted in on every core first */
    if (!st && (!roff || !out)) st = no_memory(err, rank, nr, size);
    if (!st) {
        roff[0] = 0;
        for (int q = 1; q < R; q++) roff[q] = roff[q - 1] + rcount[q - 1];
    }
    if ((st = move_at(st, send, count, size, out, rcount, roff, err)) == FK_OK) {
        *recv = out;
        *nrecv = nr;
        out = NULL;
    }
    free(out), free(roff);
    return st;
}

#endif
