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

#define COMM MPI_COMM_WORLD

/* FOFKIT_DIST_ROUND, 0 when unset or not a positive number. */
static uint64_t env_round(void)
{
    const char *e = getenv("FOFKIT_DIST_ROUND");
    char *end;
    unsigned long long v = e ? strtoull(e, &end, 10) : 0;
    return e && *e && !*end ? (uint64_t)v : 0;
}

/* The ranks of this node when they are all of the run's (MPI_COMM_NULL
 * otherwise, and with FOFKIT_DIST_SHARED=0): found once. */
static MPI_Comm one_node(void)
{
    static int known = 0;
    static MPI_Comm node = MPI_COMM_NULL;
    if (!known) {
        known = 1;
        const char *e = getenv("FOFKIT_DIST_SHARED");
        int R, n = 0, all;
        MPI_Comm c;
        MPI_Comm_size(COMM, &R);
        if (MPI_Comm_split_type(COMM, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c) != MPI_SUCCESS) c = MPI_COMM_NULL;
        if (c != MPI_COMM_NULL) MPI_Comm_size(c, &n);
        int mine = n == R && !(e && !strcmp(e, "0"));
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, COMM);
        if (all)
            node = c;
        else if (c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
    }
    return node;
}

/* memcpy on every core, in 1 MiB pieces. */
static void team_copy(unsigned char *dst, const unsigned char *src, size_t n)
{
    const size_t piece = (size_t)1 << 20;
    const int64_t pieces = (int64_t)((n + piece - 1) / piece);
    #pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < pieces; b++) {
        const size_t at = (size_t)b * piece;
        memcpy(dst + at, src + at, n - at < piece ? n - at : piece);
    }
}

/* Every rank on one node: each puts what it sends in a window of shared
 * memory, and each copies what comes to it straight out of the others'
 * windows, on every core. One copy more than MPI's, but at the memory's
 * rate: Open MPI's shared-memory transport moved 4 GB a rank at 0.4 GB/s
 * on a 4-GPU host. Collective over node (all of the run's ranks). */
static int shared_round(const unsigned char *send, const uint64_t *count, const uint64_t *rcount, size_t size,
                        unsigned char *recv, int R, int rank, MPI_Comm node, fk_error *err)
{
    uint64_t ns = 0;
    uint64_t *soff = malloc((size_t)R * sizeof *soff), *from = malloc((size_t)R * sizeof *from);
    int st = !soff || !from ? fk_fail(err, FK_ENOMEM, "rank %d: out of memory", rank) : FK_OK;
    if (!st)
        for (int q = 0; q < R; q++) soff[q] = ns, ns += count[q];
    unsigned char *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    if ((st = fk_dist_agree(st, err, NULL)) == FK_OK &&
        MPI_Win_allocate_shared((MPI_Aint)(ns ? ns * size : 1), 1, MPI_INFO_NULL, node, &base, &win) != MPI_SUCCESS)
        st = fk_fail(err, FK_ENOMEM, "rank %d: no shared memory for %" PRIu64 " records of %zu bytes", rank, ns, size);
    if ((st = fk_dist_agree(st, err, NULL)) == FK_OK) {
        /* where each source keeps what it sends here */
        MPI_Alltoall(soff, 1, MPI_UINT64_T, from, 1, MPI_UINT64_T, COMM);
        MPI_Win_fence(0, win);
        team_copy(base, send, ns * size);
        MPI_Win_fence(0, win);
        uint64_t at = 0;
        for (int q = 0; q < R; q++) {
            MPI_Aint bytes;
            int unit;
            unsigned char *src;
            MPI_Win_shared_query(win, q, &bytes, &unit, &src);
            team_copy(recv + at * size, src + from[q] * size, rcount[q] * size);
            at += rcount[q];
        }
        MPI_Win_fence(0, win);
    }
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
    free(soff), free(from);
    return st;
}

/* Every record in one MPI_Alltoallv (counts and displacements fit an int). */
static void one_round(const void *send, const uint64_t *count, const uint64_t *rcount, MPI_Datatype t, void *recv, int R,
                      int *sc, int *sd, int *rc, int *rd)
{
    uint64_t so = 0, ro = 0;
    for (int q = 0; q < R; q++) {
        sc[q] = (int)count[q], sd[q] = (int)so, so += count[q];
        rc[q] = (int)rcount[q], rd[q] = (int)ro, ro += rcount[q];
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
    const MPI_Comm node = plan[2] == UINT64_MAX ? one_node() : MPI_COMM_NULL; /* rounds asked: no shortcut */
    const int whole = node != MPI_COMM_NULL || (plan[0] <= INT_MAX && (plan[2] == UINT64_MAX || plan[1] <= plan[2]));
    const uint64_t rounds = whole ? 1 : (plan[1] + cap - 1) / cap;
    int *sc = malloc((size_t)R * sizeof *sc), *sd = malloc((size_t)R * sizeof *sd), *rc = malloc((size_t)R * sizeof *rc),
        *rd = malloc((size_t)R * sizeof *rd);
    uint64_t *soff = malloc((size_t)(R + 1) * sizeof *soff), *roff = malloc((size_t)(R + 1) * sizeof *roff);
    unsigned char *sbuf = NULL, *rbuf = NULL;
    void *out = fk_big_alloc(nr ? nr * size : 1); /* filled by MPI: faulted in on every core first */
    int st = FK_OK;
    if (!whole) {
        sbuf = malloc((size_t)R * cap * size);
        rbuf = malloc((size_t)R * cap * size);
    }
    if (!sc || !sd || !rc || !rd || !soff || !roff || !out || (!whole && (!sbuf || !rbuf)))
        st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory receiving %" PRIu64 " records of %zu bytes", rank, nr, size);
    if ((st = fk_dist_agree(st, err, NULL)) == FK_OK) {
        MPI_Datatype t;
        MPI_Type_contiguous((int)size, MPI_BYTE, &t);
        MPI_Type_commit(&t);
        if (node != MPI_COMM_NULL) {
            st = shared_round(send, count, rcount, size, out, R, rank, node, err);
        } else if (whole) {
            one_round(send, count, rcount, t, out, R, sc, sd, rc, rd);
        } else {
            soff[0] = roff[0] = 0;
            for (int q = 0; q < R; q++) soff[q + 1] = soff[q] + count[q], roff[q + 1] = roff[q] + rcount[q];
            in_rounds(send, count, rcount, size, t, out, R, cap, rounds, sbuf, rbuf, sc, sd, rc, rd, soff, roff);
        }
        MPI_Type_free(&t);
        if (!st) {
            *recv = out;
            *nrecv = nr;
            out = NULL;
        }
    }
    free(out), free(sbuf), free(rbuf), free(sc), free(sd), free(rc), free(rd), free(soff), free(roff);
    return st;
}

#endif
