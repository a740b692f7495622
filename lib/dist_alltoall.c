/* dist_alltoall.c - all-to-all exchanges of any size under MPI: fixed-size records, in rounds that keep MPI's int counts. */
#include "dist_alltoall.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "dist.h"

#ifndef FK_HAVE_MPI

int fk_dist_alltoall(const void *send, const uint64_t *count, size_t size, void **recv, uint64_t *rcount,
                     uint64_t *nrecv, fk_error *err)
{
    (void)send, (void)count, (void)size, (void)rcount;
    *recv = NULL;
    *nrecv = 0;
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
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
 * count[q] records from soff[q] to rank q, rcount[q] from rank q to roff[q]. */
static void one_round(const void *send, const uint64_t *count, const uint64_t *rcount, MPI_Datatype t, void *recv, int R,
                      int *sc, int *sd, int *rc, int *rd, const uint64_t *soff, const uint64_t *roff)
{
    for (int q = 0; q < R; q++) {
        sc[q] = (int)count[q], sd[q] = (int)soff[q];
        rc[q] = (int)rcount[q], rd[q] = (int)roff[q];
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

int fk_dist_alltoall(const void *send, const uint64_t *count, size_t size, void **recv, uint64_t *rcount,
                     uint64_t *nrecv, fk_error *err)
{
    int R, rank;
    MPI_Comm_size(COMM, &R);
    MPI_Comm_rank(COMM, &rank);
    *recv = NULL;
    *nrecv = 0;
    MPI_Alltoall(count, 1, MPI_UINT64_T, rcount, 1, MPI_UINT64_T, COMM);
    /* the plan, the same on every rank: one call, or rounds of cap records a pair */
    uint64_t ns = 0, nr = 0, most = 0;
    for (int q = 0; q < R; q++) {
        ns += count[q], nr += rcount[q];
        if (count[q] > most) most = count[q];
    }
    uint64_t env = env_round() ? env_round() : UINT64_MAX;
    uint64_t plan[3] = {ns > nr ? ns : nr, most, env};
    fk_dist_max(plan, 2);
    fk_dist_min(plan + 2, 1);
    const uint64_t cap = fk_dist_round_cap(R, size, plan[2] == UINT64_MAX ? 0 : plan[2]);
    const int whole = plan[0] <= INT_MAX && (plan[2] == UINT64_MAX || plan[1] <= plan[2]);
    const uint64_t rounds = whole ? 1 : (plan[1] + cap - 1) / cap;
    int *sc = malloc((size_t)R * sizeof *sc), *sd = malloc((size_t)R * sizeof *sd), *rc = malloc((size_t)R * sizeof *rc),
        *rd = malloc((size_t)R * sizeof *rd);
    uint64_t *soff = malloc((size_t)(R + 1) * sizeof *soff), *roff = malloc((size_t)(R + 1) * sizeof *roff);
    uint64_t *mc = malloc((size_t)R * sizeof *mc), *mr = malloc((size_t)R * sizeof *mr); /* what MPI moves */
    unsigned char *sbuf = NULL, *rbuf = NULL;
    void *out = fk_big_alloc(nr ? nr * size : 1); /* filled by MPI: faulted in on every core first */
    int st = FK_OK;
    if (!whole) {
        sbuf = malloc((size_t)R * cap * size);
        rbuf = malloc((size_t)R * cap * size);
    }
    if (!sc || !sd || !rc || !rd || !soff || !roff || !mc || !mr || !out || (!whole && (!sbuf || !rbuf)))
        st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory receiving %" PRIu64 " records of %zu bytes", rank, nr, size);
    if ((st = fk_dist_agree(st, err, NULL)) == FK_OK) {
        MPI_Datatype t;
        MPI_Type_contiguous((int)size, MPI_BYTE, &t);
        MPI_Type_commit(&t);
        soff[0] = roff[0] = 0;
        for (int q = 0; q < R; q++) {
            soff[q + 1] = soff[q] + count[q], roff[q + 1] = roff[q] + rcount[q];
            mc[q] = q == rank ? 0 : count[q], mr[q] = q == rank ? 0 : rcount[q];
        }
        copy_self((const unsigned char *)send + soff[rank] * size, (unsigned char *)out + roff[rank] * size,
                  count[rank] * size);
        if (whole)
            one_round(send, mc, mr, t, out, R, sc, sd, rc, rd, soff, roff);
        else
            in_rounds(send, mc, mr, size, t, out, R, cap, rounds, sbuf, rbuf, sc, sd, rc, rd, soff, roff);
        MPI_Type_free(&t);
        *recv = out;
        *nrecv = nr;
        out = NULL;
    }
    free(out), free(sbuf), free(rbuf), free(sc), free(sd), free(rc), free(rd), free(soff), free(roff), free(mc), free(mr);
    return st;
}

#endif
