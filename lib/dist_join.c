/* dist_join.c - components joined across MPI ranks in rounds of hooking and pointer jumping (see dist_join.h); a stub without MPI. */
#include "dist_join.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "dist_alltoall.h"

#ifndef FK_HAVE_MPI

int fk_dist_join(uint64_t nn, const uint64_t *names, const uint64_t *mid, uint64_t ne, const uint64_t *edges,
                 uint64_t *root, uint64_t *low, fk_dist_join_report *rep, fk_error *err)
{
    (void)nn, (void)names, (void)mid, (void)ne, (void)edges, (void)root, (void)low, (void)rep;
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
}

#else

#include <mpi.h>

typedef struct jstate {
    int rank, size;
    fk_dist_join_report *rep;
} jstate;

static int owner(uint64_t name)
{
    return (int)(name >> 32);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_pair(const void *a, const void *b)
{
    const uint64_t *p = a, *q = b;
    if (p[0] != q[0]) return p[0] < q[0] ? -1 : 1;
    return (p[1] > q[1]) - (p[1] < q[1]);
}

/* The index of x among the n sorted values of v (stride words apart), or -1. */
static int64_t find_name(const uint64_t *v, uint64_t n, size_t stride, uint64_t x)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (v[mid * stride] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo * stride] == x ? (int64_t)lo : -1;
}

/* Sorted, distinct: the first n values of v kept once each; returns how many. */
static uint64_t uniq(uint64_t *v, uint64_t n)
{
    qsort(v, n, 8, cmp_u64);
    uint64_t u = 0;
    for (uint64_t i = 0; i < n; i++)
        if (!u || v[i] != v[u - 1]) v[u++] = v[i];
    return u;
}

static void held(jstate *j, uint64_t n)
{
    if (n > j->rep->held) j->rep->held = n;
}

/* After every rank agreed on st: count[] records of size bytes from s
 * (grouped by destination in rank order) to every rank; *rb (malloc'd)
 * gets what came, rcnt[] from each rank, *nr in all. */
static int move(jstate *j, int st, const void *s, uint64_t *cnt, size_t size, void **rb, uint64_t *rcnt,
                uint64_t *nr, fk_error *err)
{
    *rb = NULL;
    *nr = 0;
    st = fk_dist_agree(st, err, NULL);
    if (!st) st = fk_dist_alltoall(s, cnt, size, rb, rcnt, nr, err);
    if (!st)
        for (int d = 0; d < j->size; d++)
            if (d != j->rank) j->rep->bytes_sent += cnt[d] * size, j->rep->bytes_recv += rcnt[d] * size;
    return st;
}

/* n records of size bytes, sorted by their first word (a name), each to
 * the rank that holds that name. */
static int send_sorted(jstate *j, int st, const void *s, uint64_t n, size_t size, void **rb, uint64_t *rcnt,
                       uint64_t *nr, fk_error *err)
{
    const int R = j->size;
    uint64_t *cnt = calloc((size_t)R, 8);
    if (!st && !cnt) st = fk_fail(err, FK_ENOMEM, "out of memory joining groups across ranks");
    for (uint64_t i = 0; !st && i < n; i++) {
        uint64_t name;
        memcpy(&name, (const unsigned char *)s + i * size, 8);
        if (owner(name) >= R) {
            st = fk_fail(err, FK_EINVAL, "the join met the name of rank %d of %d (internal error)", owner(name), R);
            break;
        }
        cnt[owner(name)]++;
    }
    st = move(j, st, s, cnt, size, rb, rcnt, nr, err);
    free(cnt);
    return st;
}

/* Answers (size bytes each, in the order received) back to the ranks that
 * asked, rcnt[] of them to each; *back gets this rank's answers in the
 * order it asked, *nb of them. */
static int answer(jstate *j, int st, const void *s, const uint64_t *rcnt, size_t size, void **back, uint64_t *nb,
                  fk_error *err)
{
    const int R = j->size;
    uint64_t *cnt = malloc((size_t)R * 8), *rc = malloc((size_t)R * 8);
    if (!st && (!cnt || !rc)) st = fk_fail(err, FK_ENOMEM, "out of memory joining groups across ranks");
    if (!st) memcpy(cnt, rcnt, (size_t)R * 8);
    st = move(j, st, s, cnt, size, back, rc, nb, err);
    free(cnt), free(rc);
    return st;
}

/* ans[i] gets the parent of node q[i] (nq sorted distinct names, any
 * rank's), asked of the ranks that hold them. */
static int ask(jstate *j, int st, const uint64_t *q, uint64_t nq, const uint64_t *names, const uint64_t *par,
               uint64_t nn, uint64_t *ans, fk_error *err)
{
    uint64_t *rcnt = malloc((size_t)j->size * 8), nr = 0, nb = 0, *rep = NULL;
    void *rb = NULL, *back = NULL;
    if (!st && !rcnt) st = fk_fail(err, FK_ENOMEM, "out of memory joining groups across ranks");
    st = send_sorted(j, st, q, nq, 8, &rb, rcnt, &nr, err);
    if (!st && !(rep = malloc((nr ? nr : 1) * 8))) st = fk_fail(err, FK_ENOMEM, "out of memory joining groups across ranks");
    for (uint64_t k = 0; !st && k < nr; k++) {
        int64_t i = find_name(names, nn, 1, ((const uint64_t *)rb)[k]);
        if (i < 0)
            st = fk_fail(err, FK_EINVAL, "the join met a name no rank holds (internal error)");
        else
            rep[k] = par[i];
    }
    held(j, nn + nq + nr);
    st = answer(j, st, rep, rcnt, 8, &back, &nb, err);
    if (!st && nb != nq) st = fk_fail(err, FK_EINVAL, "the join got %" PRIu64 " answers for %" PRIu64 " (internal error)", nb, nq);
    if (!st) memcpy(ans, back, nq * 8);
    free(rcnt), free(rb), free(rep), free(back);
    return fk_dist_agree(st, err, NULL);
}

/* *v summed over the ranks, after every rank agreed on st. */
static int sum_all(int st, uint64_t *v, fk_error *err)
{
    st = fk_dist_agree(st, err, NULL);
    if (!st) MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_UINT64_T, MPI_SUM, fk_dist_comm());
    return st;
}

int fk_dist_join(uint64_t nn, const uint64_t *names, const uint64_t *mid, uint64_t ne, const uint64_t *edges,
                 uint64_t *root, uint64_t *low, fk_dist_join_report *rep_, fk_error *err)
{
    fk_dist_join_report rep0;
    jstate j;
    j.rep = rep_ ? rep_ : &rep0;
    memset(j.rep, 0, sizeof *j.rep);
    MPI_Comm_rank(fk_dist_comm(), &j.rank);
    MPI_Comm_size(fk_dist_comm(), &j.size);
    const uint64_t nmax = (nn > ne ? nn : ne) + 1;
    uint64_t *par = malloc((nn + 1) * 8), *e = malloc((ne + 1) * 16), *q = malloc(nmax * 8), *qa = malloc(nmax * 8),
             *hk = malloc((ne + 1) * 16);
    int st = (!par || !e || !q || !qa || !hk) ? fk_fail(err, FK_ENOMEM, "out of memory joining groups across ranks")
                                              : FK_OK;
    for (uint64_t i = 0; !st && i < nn; i++) {
        if (owner(names[i]) != j.rank || (i && names[i] <= names[i - 1]))
            st = fk_fail(err, FK_EINVAL, "the join's names are not this rank's, sorted (internal error)");
        par[i] = names[i];
    }
    for (uint64_t k = 0; !st && k < ne; k++)
        if (find_name(names, nn, 1, edges[2 * k]) < 0)
            st = fk_fail(err, FK_EINVAL, "the join met an edge from a name this rank does not hold (internal error)");
    if (!st) memcpy(e, edges, ne * 16);
    uint64_t m = ne; /* the edges still joining two trees */
    held(&j, nn + ne);
    st = fk_dist_agree(st, err, NULL);
    while (!st) {
        /* 1. the roots of the edges' far ends; edges within one tree dropped,
         * the others' (higher root, lower root) to the higher's rank */
        uint64_t nq = 0, nh = 0, keep = 0;
        for (uint64_t k = 0; k < m; k++) q[nq++] = e[2 * k + 1];
        nq = uniq(q, nq);
        st = ask(&j, st, q, nq, names, par, nn, qa, err);
        j.rep->rounds++;
        if (st) break;
        for (uint64_t k = 0; k < m; k++) {
            const uint64_t a = e[2 * k], b = e[2 * k + 1];
            const uint64_t la = par[find_name(names, nn, 1, a)], lb = qa[find_name(q, nq, 1, b)];
            if (la == lb) continue;
            e[2 * keep] = a, e[2 * keep + 1] = b, keep++;
            hk[2 * nh] = la > lb ? la : lb;
            hk[2 * nh + 1] = la > lb ? lb : la;
            nh++;
        }
        m = keep;
        qsort(hk, nh, 16, cmp_pair);
        uint64_t u = 0; /* one request per root: the lowest root offered */
        for (uint64_t k = 0; k < nh; k++)
            if (!u || hk[2 * k] != hk[2 * u - 2]) hk[2 * u] = hk[2 * k], hk[2 * u + 1] = hk[2 * k + 1], u++;
        nh = u;
        uint64_t any = nh;
        if ((st = sum_all(st, &any, err)) || !any) break;
        uint64_t *rcnt = malloc((size_t)j.size * 8), nr = 0;
        void *rb = NULL;
        if (!rcnt) st = fk_fail(err, FK_ENOMEM, "out of memory joining groups across ranks");
        st = send_sorted(&j, st, hk, nh, 16, &rb, rcnt, &nr, err);
        held(&j, nn + m + nr);
        for (uint64_t k = 0; !st && k < nr; k++) {
            const uint64_t *h = (const uint64_t *)rb + 2 * k;
            int64_t i = find_name(names, nn, 1, h[0]);
            if (i < 0)
                st = fk_fail(err, FK_EINVAL, "the join met a root no rank holds (internal error)");
            else if (h[1] < par[i])
                par[i] = h[1];
        }
        free(rb), free(rcnt);
        /* 2. pointer jumping until every node points at its root */
        while (!st) {
            nq = 0;
            for (uint64_t i = 0; i < nn; i++)
                if (par[i] != names[i]) q[nq++] = par[i];
            nq = uniq(q, nq);
            st = ask(&j, st, q, nq, names, par, nn, qa, err);
            j.rep->jumps++;
            uint64_t changed = 0;
            for (uint64_t i = 0; !st && i < nn; i++)
                if (par[i] != names[i]) {
                    const uint64_t p2 = qa[find_name(q, nq, 1, par[i])];
                    if (p2 != par[i]) par[i] = p2, changed++;
                }
            if ((st = sum_all(st, &changed, err)) || !changed) break;
        }
    }
    /* Each component's lowest ID: (root, lowest ID) to the root's rank, the
     * least of each root's answered to every rank that sent it. */
    uint64_t ns = 0, nr = 0, nb = 0, *rcnt = NULL, *t = NULL, *ans = NULL;
    void *rb = NULL, *back = NULL;
    free(hk);
    hk = NULL;
    if (!st && !(hk = malloc((nn + 1) * 16))) st = fk_fail(err, FK_ENOMEM, "out of memory joining groups across ranks");
    if (!st) {
        for (uint64_t i = 0; i < nn; i++) hk[2 * i] = par[i], hk[2 * i + 1] = mid[i];
        qsort(hk, nn, 16, cmp_pair);
        for (uint64_t i = 0; i < nn; i++)
            if (!ns || hk[2 * i] != hk[2 * ns - 2]) hk[2 * ns] = hk[2 * i], hk[2 * ns + 1] = hk[2 * i + 1], ns++;
        if (!(rcnt = malloc((size_t)j.size * 8))) st = fk_fail(err, FK_ENOMEM, "out of memory joining groups across ranks");
    }
    st = send_sorted(&j, st, hk, ns, 16, &rb, rcnt, &nr, err);
    held(&j, nn + nr);
    if (!st && (!(t = malloc((nr + 1) * 16)) || !(ans = malloc((nr + 1) * 8))))
        st = fk_fail(err, FK_ENOMEM, "out of memory joining groups across ranks");
    if (!st) {
        uint64_t u = 0;
        memcpy(t, rb, nr * 16);
        qsort(t, nr, 16, cmp_pair); /* each root's least first */
        for (uint64_t k = 0; k < nr; k++)
            if (!u || t[2 * k] != t[2 * u - 2]) t[2 * u] = t[2 * k], t[2 * u + 1] = t[2 * k + 1], u++;
        for (uint64_t k = 0; k < nr; k++) ans[k] = t[2 * find_name(t, u, 2, ((const uint64_t *)rb)[2 * k]) + 1];
    }
    st = answer(&j, st, ans, rcnt, 8, &back, &nb, err);
    if (!st && nb != ns) st = fk_fail(err, FK_EINVAL, "the join got %" PRIu64 " answers for %" PRIu64 " (internal error)", nb, ns);
    for (uint64_t i = 0; !st && i < nn; i++) {
        root[i] = par[i];
        low[i] = ((const uint64_t *)back)[find_name(hk, ns, 2, par[i])];
    }
    free(par), free(e), free(q), free(qa), free(hk), free(rcnt), free(t), free(ans), free(rb), free(back);
    return fk_dist_agree(st, err, NULL);
}

#endif
