/* dist_tree.c - halotree under mpirun: members routed to rank hash(ID) % P, joined there, the shares reduced by the earlier halo's owner (see dist_tree.h). */
#include "dist_tree.h"

#ifndef FK_HAVE_MPI

int fk_dist_mtree_match(const fk_treecat *a, const uint8_t *only, const fk_treecat *b, int weight, const char *aname,
                        const char *bname, fk_treelink **links, uint64_t *nlinks, uint64_t *shared, fk_error *err)
{
    (void)a, (void)only, (void)b, (void)weight, (void)aname, (void)bname;
    *links = NULL, *nlinks = 0, *shared = 0;
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
}

#else

#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "dist.h"
#include "dist_alltoall.h"

#define COMM fk_dist_comm() /* this thread's communicator (dist.h) */


/* The rank that joins an ID, and the one that owns halo h of n. */
static inline int id_rank(uint64_t id, int R)
{
    return (int)(fk_mtree_mix64(id) % (uint64_t)R);
}

static inline int owner_of(uint64_t h, uint64_t n, int R)
{
    return (int)(h * (uint64_t)R / n);
}

/* The first halo of c whose members reach past place p (halos lie in the
 * order of their places: groups one after the other, subhalos group by group). */
static uint64_t first_halo(const fk_treecat *c, uint64_t p)
{
    uint64_t lo = 0, hi = c->nhalo;
    while (lo < hi) {
        uint64_t m = lo + (hi - lo) / 2;
        if (c->first[m] + c->len[m] <= p) lo = m + 1; else hi = m;
    }
    return lo;
}

/* The held members of c's halos (only's) as records to their joining
 * ranks: counted into count (R) when out is NULL, else placed at the
 * cursors at (R). side 0: (ID, halo, rank in the halo), 1: (ID, halo, 0). */
static void route(const fk_treecat *c, const uint8_t *only, int side, int R, uint64_t *count, fk_treerec *out,
                  uint64_t *at)
{
    const uint64_t lo = c->ids_at, hi = c->ids_at + c->nids;
    for (uint64_t h = first_halo(c, lo); h < c->nhalo && c->first[h] < hi; h++) {
        if (only && !only[h]) continue;
        const uint64_t f = c->first[h], a = f > lo ? f : lo, e = f + c->len[h], b = e < hi ? e : hi;
        for (uint64_t p = a; p < b; p++) {
            const uint64_t id = (uint64_t)c->ids[p - lo];
            const int d = id_rank(id, R);
            if (!out) {
                count[d]++;
                continue;
            }
            const uint64_t r = p - f + 1;
            out[at[d]++] = (fk_treerec){id, (uint32_t)h, side ? 0 : (uint32_t)(r > UINT32_MAX ? UINT32_MAX : r)};
        }
    }
}

/* One shared member: its A halo, B halo and rank in the A halo. */
typedef struct share {
    uint32_t prog, desc, rank;
} share;

/* An ID twice in one catalogue, the least this rank found: A's, then B's
 * (ID, the two halos), UINT64_MAX none. */
typedef struct dups {
    uint64_t v[6];
} dups;

/* A local failure agreed on by every rank (frees nothing: the caller does). */
static int agree(int st, fk_error *err)
{
    return fk_dist_agree(st, err, NULL);
}

int fk_dist_mtree_match(const fk_treecat *a, const uint8_t *only, const fk_treecat *b, int weight, const char *aname,
                        const char *bname, fk_treelink **links, uint64_t *nlinks, uint64_t *shared, fk_error *err)
{
    *links = NULL, *nlinks = 0, *shared = 0;
    if (a->nhalo > UINT32_MAX - 1 || b->nhalo > UINT32_MAX - 1)
        return fk_fail(err, FK_EINVAL, "more than 2^32 - 2 halos in one catalogue");
    int R;
    MPI_Comm_size(COMM, &R);
    uint64_t *count = calloc((size_t)R * 4, sizeof *count), *rcount = count + R, *at = count + 2 * R;
    fk_treerec *send = NULL, *recv = NULL, *tmp = NULL, *r2 = NULL;
    share *jsend = NULL, *jrecv = NULL;
    fk_treelink *mine = NULL, *all = NULL;
    int *cnt = NULL, *displ = NULL;
    int st = count ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory");

    /* 1. every held member to the rank of its ID */
    uint64_t nsend = 0;
    if (!st) {
        route(a, only, 0, R, count, NULL, NULL);
        route(b, NULL, 1, R, count, NULL, NULL);
        for (int d = 0; d < R; d++) at[d] = nsend, nsend += count[d];
        if (!(send = fk_big_alloc((nsend ? nsend : 1) * sizeof *send)))
            st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " members", nsend);
    }
    if ((st = agree(st, err))) goto done;
    route(a, only, 0, R, NULL, send, at);
    route(b, NULL, 1, R, NULL, send, at);
    uint64_t n = 0;
    if ((st = fk_dist_alltoall(send, count, sizeof *send, (void **)&recv, rcount, &n, err))) goto done;
    free(send), send = NULL;

    /* 2. joined by ID: stable, so each run of an ID holds its records in the places' order */
    if (!(tmp = fk_big_alloc((n ? n : 1) * sizeof *tmp)))
        st = fk_fail(err, FK_ENOMEM, "out of memory to join %" PRIu64 " members", n);
    if ((st = agree(st, err))) goto done;
    fk_mtree_sort(recv, tmp, n);
    dups dp = {{UINT64_MAX, 0, 0, UINT64_MAX, 0, 0}};
    share *jn = (share *)tmp; /* the joined shares, in the sort's scratch (12 bytes of its 16 a record) */
    uint64_t nj = 0;
    memset(count, 0, (size_t)R * sizeof *count);
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i, ia = UINT64_MAX, ib = UINT64_MAX;
        int na = 0, nb = 0;
        for (; j < n && recv[j].key == recv[i].key; j++) {
            const int in_a = recv[j].b != 0;
            int *k = in_a ? &na : &nb;
            uint64_t *first = in_a ? &ia : &ib, *d = dp.v + (in_a ? 0 : 3);
            if (*k == 0) *first = j;
            else if (*k == 1 && d[0] == UINT64_MAX) {
                const uint32_t h0 = recv[*first].a, h1 = recv[j].a;
                d[0] = recv[j].key, d[1] = h0 < h1 ? h0 : h1, d[2] = h0 < h1 ? h1 : h0;
            }
            (*k)++;
        }
        if (na == 1 && nb == 1) {
            jn[nj++] = (share){recv[ia].a, recv[ib].a, recv[ia].b};
            count[owner_of(recv[ia].a, a->nhalo, R)]++;
        }
        i = j;
    }
    /* the least duplicate of every rank's: A's first, as the single process */
    {
        uint64_t *every = malloc((size_t)R * sizeof dp);
        if (!every) st = fk_fail(err, FK_ENOMEM, "out of memory");
        if ((st = agree(st, err))) goto done;
        MPI_Allgather(dp.v, 6, MPI_UINT64_T, every, 6, MPI_UINT64_T, COMM);
        for (int side = 0; side < 2 && !st; side++) {
            int best = -1;
            for (int q = 0; q < R; q++)
                if (every[q * 6 + side * 3] != UINT64_MAX && (best < 0 || every[q * 6 + side * 3] < every[best * 6 + side * 3]))
                    best = q;
            if (best >= 0) {
                const uint64_t *d = every + best * 6 + side * 3;
                st = fk_fail(err, FK_EFORMAT, "%s: particle ID %" PRIu64 " lies in halos %" PRIu64 " and %" PRIu64
                             " (the halos must not overlap)", side ? bname : aname, d[0], d[1], d[2]);
            }
        }
        free(every);
        if (st) goto done;
    }
    free(recv), recv = NULL;
    fk_dist_sum(&nj, 1);
    *shared = nj;
    nj = 0;
    for (int d = 0; d < R; d++) at[d] = nj, nj += count[d];
    if (!(jsend = malloc((nj ? nj : 1) * sizeof *jsend))) st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " shares", nj);
    if ((st = agree(st, err))) goto done;
    for (uint64_t k = 0; k < nj; k++) jsend[at[owner_of(jn[k].prog, a->nhalo, R)]++] = jn[k];
    free(tmp), tmp = NULL;
    uint64_t m = 0;
    if ((st = fk_dist_alltoall(jsend, count, sizeof *jsend, (void **)&jrecv, rcount, &m, err))) goto done;
    free(jsend), jsend = NULL;

    /* 3. the owner's shares by (prog, desc, rank): by rank, then stably by (prog, desc) */
    r2 = fk_big_alloc((m ? m : 1) * sizeof *r2), tmp = fk_big_alloc((m ? m : 1) * sizeof *tmp);
    if (!r2 || !tmp) st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " shares", m);
    if ((st = agree(st, err))) goto done;
    for (uint64_t k = 0; k < m; k++) r2[k] = (fk_treerec){jrecv[k].rank, jrecv[k].prog, jrecv[k].desc};
    free(jrecv), jrecv = NULL;
    fk_mtree_sort(r2, tmp, m);
    for (uint64_t k = 0; k < m; k++) r2[k] = (fk_treerec){(uint64_t)r2[k].a << 32 | r2[k].b, (uint32_t)r2[k].key, 0};
    fk_mtree_sort(r2, tmp, m);
    uint64_t nl = 0;
    for (uint64_t k = 0; k < m; k++) nl += k == 0 || r2[k].key != r2[k - 1].key;
    if (!(mine = malloc((nl ? nl : 1) * sizeof *mine))) st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " links", nl);
    if ((st = agree(st, err))) goto done;
    nl = 0;
    for (uint64_t i = 0; i < m;) {
        uint64_t j = i;
        double s = 0; /* summed by rank, most bound first: tree_match.c's sum */
        for (; j < m && r2[j].key == r2[i].key; j++) s += weight == FK_TREE_WEIGHT_COUNT ? 1.0 : 1.0 / r2[j].a;
        mine[nl++] = (fk_treelink){(uint32_t)(r2[i].key >> 32), (uint32_t)r2[i].key, j - i, s};
        i = j;
    }
    free(r2), r2 = NULL;
    free(tmp), tmp = NULL;

    /* every owner's links to every rank, in the owners' order: (prog, desc) order */
    uint64_t total = nl;
    fk_dist_sum(&total, 1);
    if (total > INT_MAX) {
        st = fk_fail(err, FK_EUNSUP, "%" PRIu64 " links: more than MPI's int counts gather at once", total);
        goto done;
    }
    cnt = malloc((size_t)R * sizeof *cnt), displ = malloc((size_t)R * sizeof *displ);
    all = malloc((total ? total : 1) * sizeof *all);
    if (!cnt || !displ || !all) st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " links", total);
    if ((st = agree(st, err))) goto done;
    int nlmine = (int)nl;
    MPI_Allgather(&nlmine, 1, MPI_INT, cnt, 1, MPI_INT, COMM);
    for (int q = 0, o = 0; q < R; q++) displ[q] = o, o += cnt[q];
    MPI_Datatype lt;
    MPI_Type_contiguous((int)sizeof(fk_treelink), MPI_BYTE, &lt);
    MPI_Type_commit(&lt);
    MPI_Allgatherv(mine, nlmine, lt, all, cnt, displ, lt, COMM);
    MPI_Type_free(&lt);
    *links = all, *nlinks = total;
    all = NULL;
done:
    free(count), free(send), free(recv), free(tmp), free(r2), free(jsend), free(jrecv), free(mine), free(all);
    free(cnt), free(displ);
    return st;
}

#endif
