/* tree_match.c - halos of two snapshots linked by shared particle IDs: radix sorts and a merge (or a table indexed by ID), then a segmented sort and reduce, on every core. */
#include "tree_match.h"

#include "bigmem.h"

#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define DIGITS 256
/* Below this many records one thread sorts: the threads' start and the
 * per-thread histograms cost more than they save. */
#define PARALLEL_MIN 65536

void fk_mtree_sort(fk_treerec *r, fk_treerec *tmp, uint64_t n)
{
    if (n < 2) return;
    uint64_t all_or = 0, all_and = ~(uint64_t)0;
#pragma omp parallel for schedule(static) reduction(| : all_or) reduction(& : all_and) if (n >= PARALLEL_MIN)
    for (uint64_t i = 0; i < n; i++) all_or |= r[i].key, all_and &= r[i].key;
    const uint64_t differ = all_or ^ all_and; /* the bits some keys do not share */
    int nt = n < PARALLEL_MIN ? 1 : omp_get_max_threads();
    uint64_t *count = malloc((size_t)nt * DIGITS * sizeof *count);
    if (!count) nt = 1, count = NULL;
    uint64_t one[DIGITS];
    fk_treerec *src = r, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        if (!((differ >> shift) & 0xff)) continue;
        uint64_t *cnt = count ? count : one;
        memset(cnt, 0, (size_t)nt * DIGITS * sizeof *cnt);
#pragma omp parallel num_threads(nt)
        {
            const int t = omp_get_thread_num();
            const uint64_t lo = n * (uint64_t)t / (uint64_t)nt, hi = n * (uint64_t)(t + 1) / (uint64_t)nt;
            uint64_t *c = cnt + (size_t)t * DIGITS;
            for (uint64_t i = lo; i < hi; i++) c[(src[i].key >> shift) & 0xff]++;
#pragma omp barrier
#pragma omp single
            {
                uint64_t at = 0;
                for (int d = 0; d < DIGITS; d++)
                    for (int u = 0; u < nt; u++) {
                        uint64_t k = cnt[(size_t)u * DIGITS + d];
                        cnt[(size_t)u * DIGITS + d] = at;
                        at += k;
                    }
            }
            for (uint64_t i = lo; i < hi; i++) dst[c[(src[i].key >> shift) & 0xff]++] = src[i];
        }
        fk_treerec *s = src;
        src = dst, dst = s;
    }
    if (src != r) memcpy(r, src, n * sizeof *r);
    free(count);
}

/* Each halo's first place in the list of c's members (only's halos, in
 * halo order) into at (nhalo + 1 entries). */
static void places(const fk_treecat *c, const uint8_t *only, uint64_t *at)
{
    at[0] = 0;
    for (uint64_t h = 0; h < c->nhalo; h++) at[h + 1] = at[h] + (only && !only[h] ? 0 : c->len[h]);
}

/* A catalogue's members as records in halo order: (ID, halo, 0), or with
 * by_place (ID, place >> 32, place & 0xffffffff), place the member's index
 * in that order. */
static void member_recs(const fk_treecat *c, const uint8_t *only, const uint64_t *at, int by_place, fk_treerec *r)
{
#pragma omp parallel for schedule(dynamic, 64) if (at[c->nhalo] >= PARALLEL_MIN)
    for (uint64_t h = 0; h < c->nhalo; h++) {
        if (only && !only[h]) continue;
        fk_treerec *o = r + at[h];
        const int64_t *id = c->ids + c->first[h];
        for (uint64_t j = 0; j < c->len[h]; j++) {
            const uint64_t p = at[h] + j;
            o[j] = by_place ? (fk_treerec){(uint64_t)id[j], (uint32_t)(p >> 32), (uint32_t)p}
                            : (fk_treerec){(uint64_t)id[j], (uint32_t)h, 0};
        }
    }
}

/* The halo holding place p (at: places()). */
static uint64_t halo_of(const uint64_t *at, uint64_t nhalo, uint64_t p)
{
    uint64_t lo = 0, hi = nhalo;
    while (hi - lo > 1) {
        uint64_t m = lo + (hi - lo) / 2;
        if (at[m] <= p) lo = m; else hi = m;
    }
    return lo;
}

/* The first place in a sorted list whose ID is also the one before, or -1. */
static int64_t duplicate(const fk_treerec *r, uint64_t n)
{
    uint64_t first = UINT64_MAX;
#pragma omp parallel for schedule(static) reduction(min : first) if (n >= PARALLEL_MIN)
    for (uint64_t i = 1; i < n; i++)
        if (r[i].key == r[i - 1].key && i < first) first = i;
    return first == UINT64_MAX ? -1 : (int64_t)first;
}

#define NONE UINT32_MAX

/* The merge join of the sorted lists a (places) and b (halos): dest[place]
 * gets the B halo of every member of A whose ID B holds (dest is NONE
 * elsewhere). Every thread joins a slice of a with the part of b its keys
 * span. Returns how many were found. */
static uint64_t join(const fk_treerec *a, uint64_t na, const fk_treerec *b, uint64_t nb, uint32_t *dest)
{
    uint64_t found = 0;
    const int nt = na + nb < PARALLEL_MIN ? 1 : omp_get_max_threads();
#pragma omp parallel num_threads(nt) reduction(+ : found)
    {
        const int t = omp_get_thread_num();
        const uint64_t lo = na * (uint64_t)t / (uint64_t)nt, hi = na * (uint64_t)(t + 1) / (uint64_t)nt;
        uint64_t j = 0;
        if (lo < hi) { /* b's part: from the first key >= a[lo] */
            uint64_t l = 0, h = nb;
            while (l < h) {
                uint64_t m = l + (h - l) / 2;
                if (b[m].key < a[lo].key) l = m + 1; else h = m;
            }
            j = l;
        }
        for (uint64_t i = lo; i < hi && j < nb;) {
            if (a[i].key < b[j].key)
                i++;
            else if (a[i].key > b[j].key)
                j++;
            else {
                dest[(uint64_t)a[i].a << 32 | a[i].b] = b[j].a;
                found++, i++, j++;
            }
        }
    }
    return found;
}

/* IDs spanning at most DENSE times the members of both catalogues are
 * joined through a table indexed by ID (4 bytes and a bit an ID in the
 * span): a counting sort with one-ID buckets, which needs no radix passes.
 * Gadget's IDs 1..N of both snapshots span N for up to 2N members. */
#define DENSE 4

/* The least and largest ID of A's halos (only) and B's; lo > hi when none. */
static void id_range(const fk_treecat *a, const uint8_t *only, const fk_treecat *b, uint64_t *lo, uint64_t *hi)
{
    uint64_t l = UINT64_MAX, h = 0;
    for (int side = 0; side < 2; side++) {
        const fk_treecat *c = side ? b : a;
        const uint8_t *o = side ? NULL : only;
#pragma omp parallel for schedule(dynamic, 64) reduction(min : l) reduction(max : h) if (c->nids >= PARALLEL_MIN)
        for (uint64_t k = 0; k < c->nhalo; k++) {
            if (o && !o[k]) continue;
            const int64_t *id = c->ids + c->first[k];
            for (uint64_t j = 0; j < c->len[k]; j++) {
                const uint64_t v = (uint64_t)id[j];
                if (v < l) l = v;
                if (v > h) h = v;
            }
        }
    }
    *lo = l, *hi = h;
}

/* The join by a table indexed by ID - lo: B's halos scattered into it, A's
 * members gathering theirs into dest (at their places). An ID twice in one
 * catalogue is FK_EFORMAT (naming the lower halos of the first found). */
static int join_dense(const fk_treecat *a, const uint8_t *only, const uint64_t *at_a, const fk_treecat *b,
                      const uint64_t *at_b, uint64_t lo, uint64_t hi, uint32_t *dest, uint64_t *shared,
                      const char *aname, const char *bname, fk_error *err)
{
    (void)at_b;
    const uint64_t span = hi - lo + 1;
    uint32_t *table = fk_big_alloc(span * sizeof *table);
    uint8_t *seen = fk_big_alloc((span + 7) / 8);
    if (!table || !seen) {
        free(table), free(seen);
        return fk_fail(err, FK_ENOMEM, "out of memory for a table of %" PRIu64 " IDs", span);
    }
    const int many = span >= PARALLEL_MIN;
#pragma omp parallel for schedule(static) if (many)
    for (uint64_t i = 0; i < span; i++) table[i] = NONE;
    memset(seen, 0, (span + 7) / 8);
    uint64_t dup_id = UINT64_MAX, found = 0;
    uint32_t dup_h0 = 0, dup_h1 = 0;
    int dup_in_a = 0;
#pragma omp parallel for schedule(dynamic, 64) if (many)
    for (uint64_t k = 0; k < b->nhalo; k++) {
        const int64_t *id = b->ids + b->first[k];
        for (uint64_t j = 0; j < b->len[k]; j++) {
            const uint64_t v = (uint64_t)id[j] - lo;
            const uint32_t old = __atomic_exchange_n(&table[v], (uint32_t)k, __ATOMIC_RELAXED);
            if (old != NONE) {
#pragma omp critical(tree_dup)
                if (v + lo < dup_id) dup_id = v + lo, dup_h0 = old < k ? old : (uint32_t)k, dup_h1 = old < k ? (uint32_t)k : old;
            }
        }
    }
    if (dup_id == UINT64_MAX) {
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : found) if (many)
        for (uint64_t k = 0; k < a->nhalo; k++) {
            if (only && !only[k]) continue;
            const int64_t *id = a->ids + a->first[k];
            uint32_t *d = dest + at_a[k];
            for (uint64_t j = 0; j < a->len[k]; j++) {
                const uint64_t v = (uint64_t)id[j] - lo;
                const uint8_t bit = (uint8_t)(1u << (v & 7));
                if (__atomic_fetch_or(&seen[v >> 3], bit, __ATOMIC_RELAXED) & bit) {
#pragma omp critical(tree_dup)
                    if (v + lo < dup_id) dup_id = v + lo, dup_in_a = 1, dup_h1 = (uint32_t)k;
                }
                d[j] = table[v];
                found += table[v] != NONE;
            }
        }
        if (dup_in_a) { /* the other halo holding it: the first of A's that does */
            for (uint64_t k = 0; k < a->nhalo; k++) {
                if (only && !only[k]) continue;
                uint64_t j = 0;
                while (j < a->len[k] && (uint64_t)a->ids[a->first[k] + j] != dup_id) j++;
                if (j < a->len[k] && k != dup_h1) {
                    dup_h0 = (uint32_t)(k < dup_h1 ? k : dup_h1), dup_h1 = (uint32_t)(k < dup_h1 ? dup_h1 : k);
                    break;
                }
            }
        }
    }
    free(table), free(seen);
    if (dup_id != UINT64_MAX)
        return fk_fail(err, FK_EFORMAT, "%s: particle ID %" PRIu64 " lies in halos %" PRIu32 " and %" PRIu32
                       " (the halos must not overlap)", dup_in_a ? aname : bname, dup_id, dup_h0, dup_h1);
    *shared = found;
    return FK_OK;
}

/* One shared member of an A halo: its B halo and its rank in A (1 first). */
typedef struct share {
    uint32_t desc, rank;
} share;

static int by_desc(const void *x, const void *y)
{
    const share *a = x, *b = y;
    if (a->desc != b->desc) return a->desc < b->desc ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* Sorts one halo's shares by (desc, rank); they come in rank order, and
 * mostly to one or a few descendants: nothing to do when already in order,
 * an insertion sort when short, qsort else. */
static void sort_shares(share *x, uint64_t k)
{
    uint64_t i = 1;
    while (i < k && x[i].desc >= x[i - 1].desc) i++;
    if (i >= k) return;
    if (k > 64) {
        qsort(x, k, sizeof *x, by_desc);
        return;
    }
    for (; i < k; i++) {
        share v = x[i];
        uint64_t j = i;
        for (; j > 0 && by_desc(&x[j - 1], &v) > 0; j--) x[j] = x[j - 1];
        x[j] = v;
    }
}

static int match(const fk_treecat *a, const uint8_t *only, const fk_treecat *b, int weight, const char *aname,
                 const char *bname, fk_treelink **links, uint64_t *nlinks, uint64_t *shared, int gpu, fk_error *err)
{
    *links = NULL;
    *nlinks = 0;
    *shared = 0;
    if (a->nhalo > UINT32_MAX - 1 || b->nhalo > UINT32_MAX - 1)
        return fk_fail(err, FK_EINVAL, "more than 2^32 - 2 halos in one catalogue");
    uint64_t *at_a = malloc((a->nhalo + 1) * sizeof *at_a), *at_b = malloc((b->nhalo + 1) * sizeof *at_b);
    uint64_t *nl_h = calloc(a->nhalo + 1, sizeof *nl_h), *ns_h = calloc(a->nhalo + 1, sizeof *ns_h);
    fk_treerec *ra = NULL, *rb = NULL, *tmp = NULL;
    uint32_t *dest = NULL;
    fk_treelink *out = NULL;
    int st = FK_OK;
    if (!at_a || !at_b || !nl_h || !ns_h) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " halos", a->nhalo + b->nhalo);
        goto done;
    }
    places(a, only, at_a);
    places(b, NULL, at_b);
    const uint64_t na = at_a[a->nhalo], nb = at_b[b->nhalo], most = (na > nb ? na : nb) + 1;
    dest = fk_big_alloc((na + 1) * sizeof *dest);
    if (!dest) {
        st = fk_fail(err, FK_ENOMEM, "out of memory to match %" PRIu64 " and %" PRIu64 " members", na, nb);
        goto done;
    }
    uint64_t lo, hi;
    id_range(a, only, b, &lo, &hi);
    if (gpu && na + nb > 0) { /* a duplicate ID: the CPU's join below finds and names it */
        int dup = 0;
        st = fk_gpu_mtree_join(a, only, at_a, b, at_b, lo, hi, hi - lo < DENSE * (na + nb), dest, shared, &dup, err);
        if (st) goto done;
        if (!dup) goto reduce;
    }
    if (na + nb > 0 && hi - lo < DENSE * (na + nb)) {
        st = join_dense(a, only, at_a, b, at_b, lo, hi, dest, shared, aname, bname, err);
        if (st) goto done;
        goto reduce;
    }
    ra = fk_big_alloc((na + 1) * sizeof *ra), rb = fk_big_alloc((nb + 1) * sizeof *rb);
    tmp = fk_big_alloc(most * sizeof *tmp); /* the sorts' scratch, then the shares */
    if (!ra || !rb || !tmp) {
        st = fk_fail(err, FK_ENOMEM, "out of memory to match %" PRIu64 " and %" PRIu64 " members", na, nb);
        goto done;
    }
    /* 1. both lists by ID */
    member_recs(a, only, at_a, 1, ra);
    member_recs(b, NULL, at_b, 0, rb);
    fk_mtree_sort(ra, tmp, na);
    fk_mtree_sort(rb, tmp, nb);
    int64_t d = duplicate(ra, na);
    if (d >= 0) {
        const uint64_t p0 = (uint64_t)ra[d - 1].a << 32 | ra[d - 1].b, p1 = (uint64_t)ra[d].a << 32 | ra[d].b;
        uint64_t h0 = halo_of(at_a, a->nhalo, p0), h1 = halo_of(at_a, a->nhalo, p1);
        st = fk_fail(err, FK_EFORMAT, "%s: particle ID %" PRIu64 " lies in halos %" PRIu64 " and %" PRIu64
                     " (the halos must not overlap)", aname, ra[d].key, h0 < h1 ? h0 : h1, h0 < h1 ? h1 : h0);
        goto done;
    }
    if ((d = duplicate(rb, nb)) >= 0) {
        st = fk_fail(err, FK_EFORMAT, "%s: particle ID %" PRIu64 " lies in halos %" PRIu32 " and %" PRIu32
                     " (the halos must not overlap)", bname, rb[d].key, rb[d - 1].a, rb[d].a);
        goto done;
    }
    /* 2. the join: each member of A its B halo, at its place in A's halo-ordered list */
#pragma omp parallel for schedule(static) if (na >= PARALLEL_MIN)
    for (uint64_t p = 0; p < na; p++) dest[p] = NONE;
    *shared = join(ra, na, rb, nb, dest);
reduce:;
    /* 3. each A halo's shared members by B halo (then rank), reduced: a segmented sort and
     * reduce, the segments the A halos (8 bytes a member: in the sorts' scratch, free now) */
    if (!tmp && !(tmp = fk_big_alloc((na / 2 + 1) * sizeof *tmp))) {
        st = fk_fail(err, FK_ENOMEM, "out of memory to match %" PRIu64 " members", na);
        goto done;
    }
    share *sh = (share *)tmp;
#pragma omp parallel for schedule(dynamic, 16) if (na >= PARALLEL_MIN)
    for (uint64_t h = 0; h < a->nhalo; h++) {
        const uint64_t f = at_a[h], len = at_a[h + 1] - f;
        uint64_t k = 0;
        for (uint64_t j = 0; j < len; j++)
            if (dest[f + j] != NONE) sh[f + k++] = (share){dest[f + j], (uint32_t)(j + 1 > UINT32_MAX ? UINT32_MAX : j + 1)};
        sort_shares(sh + f, k);
        uint64_t n = 0;
        for (uint64_t i = 0; i < k; i++) n += i == 0 || sh[f + i].desc != sh[f + i - 1].desc;
        ns_h[h] = k, nl_h[h] = n;
    }
    uint64_t nl = 0;
    for (uint64_t h = 0; h < a->nhalo; h++) {
        uint64_t n = nl_h[h];
        nl_h[h] = nl;
        nl += n;
    }
    if (!(out = malloc((nl ? nl : 1) * sizeof *out))) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " links", nl);
        goto done;
    }
#pragma omp parallel for schedule(dynamic, 16) if (na >= PARALLEL_MIN)
    for (uint64_t h = 0; h < a->nhalo; h++) {
        const share *x = sh + at_a[h];
        fk_treelink *o = out + nl_h[h];
        for (uint64_t i = 0; i < ns_h[h];) {
            uint64_t j = i;
            double s = 0; /* summed by rank, most bound first: the same sum on every path */
            for (; j < ns_h[h] && x[j].desc == x[i].desc; j++) s += weight == FK_TREE_WEIGHT_COUNT ? 1.0 : 1.0 / x[j].rank;
            *o++ = (fk_treelink){(uint32_t)h, x[i].desc, j - i, s};
            i = j;
        }
    }
    *links = out, *nlinks = nl;
    out = NULL;
done:
    free(at_a), free(at_b), free(nl_h), free(ns_h), free(ra), free(rb), free(tmp), free(dest), free(out);
    return st;
}

int fk_mtree_match(const fk_treecat *a, const uint8_t *only, const fk_treecat *b, int weight, const char *aname,
                  const char *bname, fk_treelink **links, uint64_t *nlinks, uint64_t *shared, fk_error *err)
{
    return match(a, only, b, weight, aname, bname, links, nlinks, shared, 0, err);
}

int fk_mtree_match_gpu(const fk_treecat *a, const uint8_t *only, const fk_treecat *b, int weight, const char *aname,
                      const char *bname, fk_treelink **links, uint64_t *nlinks, uint64_t *shared, fk_error *err)
{
    return match(a, only, b, weight, aname, bname, links, nlinks, shared, 1, err);
}
