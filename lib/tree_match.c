/* tree_match.c - halos of two snapshots linked by shared particle IDs: a table indexed by ID, a partitioned hash join (or radix sorts and a merge), then a segmented sort and reduce, on every core. */
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
 * catalogue is FK_EFORMAT (naming the lower halos of the first found).
 * This one checks every ID as it goes, with atomic exchanges: on the CPU
 * it runs only when match_dense's counts say that an ID came twice. */
static int join_dense_checked(const fk_treecat *a, const uint8_t *only, const uint64_t *at_a, const fk_treecat *b,
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

/* A table entry that an A member has gathered from (no halo: there are at most 2^32 - 2). */
#define MARK (UINT32_MAX - 1)

/* The table's entries NONE (*none) and MARK (*mark), on every core. */
static void entries(const uint32_t *table, uint64_t span, uint64_t *none, uint64_t *mark)
{
    uint64_t n = 0, m = 0;
#pragma omp parallel for schedule(static) reduction(+ : n, m) if (span >= PARALLEL_MIN)
    for (uint64_t i = 0; i < span; i++) n += table[i] == NONE, m += table[i] == MARK;
    *none = n, *mark = m;
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

/* The most descendants sort_shares distributes a halo's shares among (more: qsort). */
#define FEW 16

/* Sorts one halo's shares by (desc, rank); they come in rank order, and
 * mostly to one or a few descendants: nothing to do when already in order,
 * an insertion sort when short, else a stable distribution by descendant
 * when there are at most FEW of them (tmp: k entries), else qsort. */
static void sort_shares(share *x, uint64_t k, share *tmp)
{
    uint64_t i = 1;
    while (i < k && x[i].desc >= x[i - 1].desc) i++;
    if (i >= k) return;
    if (k <= FEW) {
        for (; i < k; i++) {
            share v = x[i];
            uint64_t j = i;
            for (; j > 0 && by_desc(&x[j - 1], &v) > 0; j--) x[j] = x[j - 1];
            x[j] = v;
        }
        return;
    }
    uint32_t d[FEW];
    int nd = 0;
    for (uint64_t j = 0; j < k; j++) {
        int q = 0;
        while (q < nd && d[q] != x[j].desc) q++;
        if (q < nd) continue;
        if (nd == FEW) {
            qsort(x, k, sizeof *x, by_desc);
            return;
        }
        d[nd++] = x[j].desc;
    }
    for (int q = 1; q < nd; q++) { /* the descendants in order */
        uint32_t v = d[q];
        int r = q;
        for (; r > 0 && d[r - 1] > v; r--) d[r] = d[r - 1];
        d[r] = v;
    }
    uint64_t at = 0;
    for (int q = 0; q < nd; q++)
        for (uint64_t j = 0; j < k; j++)
            if (x[j].desc == d[q]) tmp[at++] = x[j];
    memcpy(x, tmp, k * sizeof *x);
}

/* Where step 3 finds each A member's B halo: dest at its place (at_a), or
 * table indexed by ID - lo (the CPU's dense join, gathered as it goes, each
 * entry marked MARK once gathered). */
typedef struct source {
    const uint32_t *dest;
    uint32_t *table;
    uint64_t lo;
} source;

/* One thread's links, in halo order. */
typedef struct part {
    fk_treelink *l;
    uint64_t n, cap, found;
    int failed;
} part;

/* Step 3: each A halo's shared members by B halo (then rank), reduced: a
 * segmented sort and reduce, the segments the A halos, each thread a run of
 * halos of about equal members (its links in halo order, so that the
 * threads' runs, one after the other, come sorted by prog then desc). Each
 * thread's shares of one halo in a buffer of its own (8 bytes a member of
 * its longest halo, twice). *found: the members found in B. */
static int reduce(const fk_treecat *a, const uint64_t *at_a, source src, int weight,
                  fk_treelink **links, uint64_t *nlinks, uint64_t *found, fk_error *err)
{
    const uint64_t na = at_a[a->nhalo];
    const int nt = na < PARALLEL_MIN ? 1 : omp_get_max_threads();
    part *pt = calloc((size_t)nt, sizeof *pt);
    if (!pt) return fk_fail(err, FK_ENOMEM, "out of memory for the links");
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num();
        part *me = &pt[t];
        /* this thread's halos: from the one holding its first place to the one holding the next thread's */
        const uint64_t h0 = t == 0 ? 0 : halo_of(at_a, a->nhalo, na * (uint64_t)t / (uint64_t)nt) + 1,
                       h1 = t == nt - 1 ? a->nhalo : halo_of(at_a, a->nhalo, na * (uint64_t)(t + 1) / (uint64_t)nt) + 1;
        uint64_t longest = 0;
        for (uint64_t h = h0; h < h1; h++)
            if (at_a[h + 1] - at_a[h] > longest) longest = at_a[h + 1] - at_a[h];
        share *sh = malloc((longest + 1) * 2 * sizeof *sh);
        /* 1/rank looked up, not divided each time (the same doubles): up to 2^24 ranks */
        double *inv = weight == FK_TREE_WEIGHT_RANK && longest < (1u << 24) ? malloc((longest + 1) * sizeof *inv) : NULL;
        for (uint64_t r = 1; inv && r <= longest; r++) inv[r] = 1.0 / (double)r;
        if (!sh || (weight == FK_TREE_WEIGHT_RANK && longest < (1u << 24) && !inv)) me->failed = 1;
        for (uint64_t h = h0; h < h1 && !me->failed; h++) {
            const uint64_t f = at_a[h], len = at_a[h + 1] - f;
            uint64_t k = 0;
            if (src.dest) {
                for (uint64_t j = 0; j < len; j++)
                    if (src.dest[f + j] != NONE) sh[k++] = (share){src.dest[f + j], (uint32_t)(j + 1 > UINT32_MAX ? UINT32_MAX : j + 1)};
            } else if (len) {
                const int64_t *id = a->ids + a->first[h];
                for (uint64_t j = 0; j < len; j++) {
                    /* relaxed: plain loads and stores, each entry only this member's unless an ID came twice */
                    uint32_t *e = &src.table[(uint64_t)id[j] - src.lo];
                    const uint32_t d = __atomic_load_n(e, __ATOMIC_RELAXED);
                    __atomic_store_n(e, MARK, __ATOMIC_RELAXED);
                    if (d != NONE) sh[k++] = (share){d, (uint32_t)(j + 1 > UINT32_MAX ? UINT32_MAX : j + 1)};
                }
            }
            me->found += k;
            sort_shares(sh, k, sh + longest + 1);
            for (uint64_t i = 0; i < k;) {
                uint64_t j = i;
                double s = 0; /* summed by rank, most bound first: the same sum on every path */
                if (weight == FK_TREE_WEIGHT_COUNT)
                    for (; j < k && sh[j].desc == sh[i].desc; j++) s += 1.0;
                else if (inv)
                    for (; j < k && sh[j].desc == sh[i].desc; j++) s += inv[sh[j].rank];
                else
                    for (; j < k && sh[j].desc == sh[i].desc; j++) s += 1.0 / sh[j].rank;
                if (me->n == me->cap) {
                    uint64_t cap = me->cap ? 2 * me->cap : 1024;
                    fk_treelink *l = realloc(me->l, cap * sizeof *l);
                    if (!l) {
                        me->failed = 1;
                        break;
                    }
                    me->l = l, me->cap = cap;
                }
                me->l[me->n++] = (fk_treelink){(uint32_t)h, sh[i].desc, j - i, s};
                i = j;
            }
        }
        free(sh), free(inv);
    }
    uint64_t nl = 0, fd = 0;
    int failed = 0;
    for (int t = 0; t < nt; t++) nl += pt[t].n, fd += pt[t].found, failed |= pt[t].failed;
    fk_treelink *out = failed ? NULL : malloc((nl ? nl : 1) * sizeof *out);
    if (out) {
        uint64_t at = 0;
        for (int t = 0; t < nt; t++)
            if (pt[t].n) memcpy(out + at, pt[t].l, pt[t].n * sizeof *out), at += pt[t].n;
    }
    for (int t = 0; t < nt; t++) free(pt[t].l);
    free(pt);
    if (!out) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " links", nl);
    *links = out, *nlinks = nl, *found = fd;
    return FK_OK;
}

/* The CPU's dense join with steps 2 and 3, with plain loads and stores (no
 * atomic read-modify-write a member: on two cores those cost more than the
 * rest of the match), no list of the members' B halos made: B's halos
 * scattered into a table indexed by ID - lo, which A's members gather from
 * in step 3, each marking its entry MARK. Then one count: with no ID twice
 * in A, its members marked as many entries as they are; with none twice in
 * B, the entries B set are its members (those still holding a B halo, and
 * the marked ones that found a B halo). 4 bytes an ID of the span. *dup set
 * (nothing made) when the counts disagree: join_dense_checked then finds and
 * names the duplicate. */
static int match_dense(const fk_treecat *a, const uint64_t *at_a, const fk_treecat *b,
                       const uint64_t *at_b, uint64_t lo, uint64_t hi, int weight, fk_treelink **links,
                       uint64_t *nlinks, uint64_t *shared, int *dup, fk_error *err)
{
    const uint64_t span = hi - lo + 1, na = at_a[a->nhalo], nb = at_b[b->nhalo];
    *dup = 0;
    uint32_t *table = fk_big_reserve(span * sizeof *table); /* faulted in by the fill below, on every core */
    if (!table) return fk_fail(err, FK_ENOMEM, "out of memory for a table of %" PRIu64 " IDs", span);
    const int many = span >= PARALLEL_MIN;
#pragma omp parallel for schedule(static) if (many)
    for (uint64_t i = 0; i < span; i++) table[i] = NONE;
#pragma omp parallel for schedule(dynamic, 64) if (many)
    for (uint64_t k = 0; k < b->nhalo; k++) {
        const int64_t *id = b->ids + b->first[k];
        for (uint64_t j = 0; j < b->len[k]; j++) __atomic_store_n(&table[(uint64_t)id[j] - lo], (uint32_t)k, __ATOMIC_RELAXED);
    }
    int st = reduce(a, at_a, (source){NULL, table, lo}, weight, links, nlinks, shared, err);
    if (!st) {
        uint64_t none, mark;
        entries(table, span, &none, &mark);
        if (mark != na || span - none - mark + *shared != nb) {
            *dup = 1;
            free(*links);
            *links = NULL, *nlinks = 0, *shared = 0;
        }
    }
    free(table);
    return st;
}

/* Sparse IDs: a radix-partitioned hash join. Both catalogues' members are
 * scattered once, by the top bits of a hash of their ID, into partitions of
 * about PART_SIZE members (A's as (ID, place), B's as (ID, halo)); each
 * partition is then joined in a hash table of its own, small enough for the
 * caches (16 bytes a slot, twice its members): B's IDs inserted, then A's
 * looked up (and inserted), each A member's B halo written at its place.
 * An ID met twice in one catalogue sets *dup (the sorts then name it).
 * 32 bytes a member of both (the partitions, their scratch freed) and 4 a
 * member of A. */
#define PART_SIZE 16384


/* c's members (only's halos) scattered into np = 2^bits partitions by the top bits of
 * fk_mtree_mix64(ID): out (their records, partition after partition; by_place as member_recs) and
 * start (np + 1 entries). Each thread a run of halos of about equal members. */
static int partition(const fk_treecat *c, const uint8_t *only, const uint64_t *at, int by_place, int bits,
                     fk_treerec *out, uint64_t *start)
{
    const uint64_t n = at[c->nhalo], np = (uint64_t)1 << bits;
    const int nt = n < PARALLEL_MIN ? 1 : omp_get_max_threads();
    uint64_t *cnt = calloc((size_t)nt * np, sizeof *cnt);
    if (!cnt) return 1;
#define PART_OF(id) (bits ? fk_mtree_mix64(id) >> (64 - bits) : 0)
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num();
        const uint64_t h0 = t == 0 ? 0 : halo_of(at, c->nhalo, n * (uint64_t)t / (uint64_t)nt) + 1,
                       h1 = t == nt - 1 ? c->nhalo : halo_of(at, c->nhalo, n * (uint64_t)(t + 1) / (uint64_t)nt) + 1;
        uint64_t *my = cnt + (size_t)t * np;
        for (uint64_t h = h0; h < h1; h++) {
            if (only && !only[h]) continue;
            const int64_t *id = c->ids + c->first[h];
            for (uint64_t j = 0; j < c->len[h]; j++) my[PART_OF((uint64_t)id[j])]++;
        }
#pragma omp barrier
#pragma omp single
        {
            uint64_t o = 0;
            for (uint64_t q = 0; q < np; q++) {
                start[q] = o;
                for (int u = 0; u < nt; u++) {
                    const uint64_t k = cnt[(size_t)u * np + q];
                    cnt[(size_t)u * np + q] = o;
                    o += k;
                }
            }
            start[np] = o;
        }
        for (uint64_t h = h0; h < h1; h++) {
            if (only && !only[h]) continue;
            const int64_t *id = c->ids + c->first[h];
            for (uint64_t j = 0; j < c->len[h]; j++) {
                const uint64_t v = (uint64_t)id[j], p = at[h] + j;
                out[my[PART_OF(v)]++] = by_place ? (fk_treerec){v, (uint32_t)(p >> 32), (uint32_t)p}
                                                 : (fk_treerec){v, (uint32_t)h, 0};
            }
        }
    }
#undef PART_OF
    free(cnt);
    return 0;
}

/* A slot of a partition's table: an ID, its B halo (NONE: only A's), whether A has it. */
typedef struct slot {
    uint64_t id;
    uint32_t halo, used; /* used: 0 empty, 1 B's, 2 A's too */
} slot;

static int join_hash(const fk_treecat *a, const uint8_t *only, const uint64_t *at_a, const fk_treecat *b,
                     const uint64_t *at_b, uint32_t *dest, uint64_t *shared, int *dup, fk_error *err)
{
    const uint64_t na = at_a[a->nhalo], nb = at_b[b->nhalo];
    int bits = 0;
    while (bits < 20 && ((na + nb) >> bits) > PART_SIZE) bits++;
    const uint64_t np = (uint64_t)1 << bits;
    /* faulted in as they are filled (not first zeroed on every core: written once) */
    fk_treerec *pa = fk_big_reserve((na + 1) * sizeof *pa), *pb = fk_big_reserve((nb + 1) * sizeof *pb);
    uint64_t *sa = malloc((np + 1) * sizeof *sa), *sb = malloc((np + 1) * sizeof *sb);
    int st = FK_OK;
    *dup = 0;
    if (!pa || !pb || !sa || !sb || partition(a, only, at_a, 1, bits, pa, sa) || partition(b, NULL, at_b, 0, bits, pb, sb)) {
        st = fk_fail(err, FK_ENOMEM, "out of memory to match %" PRIu64 " and %" PRIu64 " members", na, nb);
        goto done;
    }
    uint64_t most = 0; /* the largest partition: every thread's table holds it */
    for (uint64_t q = 0; q < np; q++)
        if (sa[q + 1] - sa[q] + sb[q + 1] - sb[q] > most) most = sa[q + 1] - sa[q] + sb[q + 1] - sb[q];
    uint64_t cap = 16;
    while (cap < 2 * most) cap *= 2;
    uint64_t found = 0;
    int twice = 0, nomem = 0;
#pragma omp parallel reduction(+ : found) reduction(| : twice, nomem) if (na + nb >= PARALLEL_MIN)
    {
        slot *tb = malloc(cap * sizeof *tb);
        if (!tb) nomem = 1;
#pragma omp for schedule(dynamic, 1)
        for (uint64_t q = 0; q < np; q++) {
            if (!tb || twice) continue;
            const uint64_t m = sa[q + 1] - sa[q] + sb[q + 1] - sb[q];
            uint64_t c = 16;
            while (c < 2 * m) c *= 2;
            memset(tb, 0, c * sizeof *tb);
            for (uint64_t i = sb[q]; i < sb[q + 1] && !twice; i++) {
                uint64_t k = fk_mtree_mix64(pb[i].key) & (c - 1);
                while (tb[k].used && tb[k].id != pb[i].key) k = (k + 1) & (c - 1);
                if (tb[k].used) twice = 1;
                tb[k] = (slot){pb[i].key, pb[i].a, 1};
            }
            for (uint64_t i = sa[q]; i < sa[q + 1] && !twice; i++) {
                uint64_t k = fk_mtree_mix64(pa[i].key) & (c - 1);
                while (tb[k].used && tb[k].id != pa[i].key) k = (k + 1) & (c - 1);
                if (tb[k].used == 2) twice = 1;
                if (!tb[k].used) tb[k] = (slot){pa[i].key, NONE, 2};
                tb[k].used = 2;
                dest[(uint64_t)pa[i].a << 32 | pa[i].b] = tb[k].halo;
                found += tb[k].halo != NONE;
            }
        }
        free(tb);
    }
    if (nomem) st = fk_fail(err, FK_ENOMEM, "out of memory to match %" PRIu64 " and %" PRIu64 " members", na, nb);
    *dup = twice;
    *shared = found;
done:
    free(pa), free(pb), free(sa), free(sb);
    return st;
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
    fk_treerec *ra = NULL, *rb = NULL, *tmp = NULL;
    uint32_t *dest = NULL;
    int st = FK_OK;
    if (!at_a || !at_b) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " halos", a->nhalo + b->nhalo);
        goto done;
    }
    places(a, only, at_a);
    places(b, NULL, at_b);
    if (gpu) { /* the whole match on the device; an ID twice (or no members): on here */
        int cpu = 0;
        st = fk_gpu_mtree_match(a, at_a, b, at_b, weight, links, nlinks, &cpu, err);
        if (st) goto done;
        if (!cpu) {
            uint64_t s = 0;
            for (uint64_t k = 0; k < *nlinks; k++) s += (*links)[k].count;
            *shared = s;
            goto done;
        }
    }
    const uint64_t na = at_a[a->nhalo], nb = at_b[b->nhalo], most = (na > nb ? na : nb) + 1;
    uint64_t lo, hi;
    id_range(a, only, b, &lo, &hi);
    const int dense = na + nb > 0 && hi - lo < DENSE * (na + nb);
    if (dense) { /* the join gathered by step 3 itself */
        int dup = 0;
        st = match_dense(a, at_a, b, at_b, lo, hi, weight, links, nlinks, shared, &dup, err);
        if (st || !dup) goto done;
    }
    dest = fk_big_alloc((na + 1) * sizeof *dest);
    if (!dest) {
        st = fk_fail(err, FK_ENOMEM, "out of memory to match %" PRIu64 " and %" PRIu64 " members", na, nb);
        goto done;
    }
    if (dense) {
        st = join_dense_checked(a, only, at_a, b, at_b, lo, hi, dest, shared, aname, bname, err);
        if (st) goto done;
        goto reduce;
    }
    { /* the hash join; on a duplicate the sorts below name it */
        int dup = 0;
        st = join_hash(a, only, at_a, b, at_b, dest, shared, &dup, err);
        if (st) goto done;
        if (!dup) goto reduce;
    }
    ra = fk_big_alloc((na + 1) * sizeof *ra), rb = fk_big_alloc((nb + 1) * sizeof *rb);
    tmp = fk_big_alloc(most * sizeof *tmp); /* the sorts' scratch */
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
    free(ra), free(rb), free(tmp);
    ra = rb = tmp = NULL;
reduce:;
    /* 3. each A halo's shared members by B halo (then rank), reduced */
    {
        uint64_t found;
        st = reduce(a, at_a, (source){dest, NULL, 0}, weight, links, nlinks, &found, err);
    }
done:
    free(at_a), free(at_b), free(ra), free(rb), free(tmp), free(dest);
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
