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

/* A guess at the range of both catalogues' IDs without reading them all: the least and largest
 * of about 2^16 IDs of each, spread evenly over its list; lo > hi when none. */
static void sample_range(const fk_treecat *a, const fk_treecat *b, uint64_t *lo, uint64_t *hi)
{
    uint64_t l = UINT64_MAX, h = 0;
    for (int side = 0; side < 2; side++) {
        const fk_treecat *c = side ? b : a;
        const uint64_t step = c->nids >> 16 ? c->nids >> 16 : 1;
        for (uint64_t k = 0; k < c->nids; k += step) {
            const uint64_t v = (uint64_t)c->ids[k];
            if (v < l) l = v;
            if (v > h) h = v;
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

/* A table entry that an A member has gathered from (no halo + 1: there are at most 2^32 - 2). */
#define MARK UINT32_MAX

/* The table's entries 0 (none: *none) and MARK (*mark), on every core. */
static void entries(const uint32_t *table, uint64_t span, uint64_t *none, uint64_t *mark)
{
    uint64_t n = 0, m = 0;
#pragma omp parallel for schedule(static) reduction(+ : n, m) if (span >= PARALLEL_MIN)
    for (uint64_t i = 0; i < span; i++) n += table[i] == 0, m += table[i] == MARK;
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

/* Where step 3 finds each A member's B halo: dest at its place (at_a); or
 * table indexed by ID - lo (the CPU's dense join, gathered as it goes: an
 * entry holds its B halo + 1, 0 none, and is marked MARK once gathered); or
 * res, the hash join's answers in the order of A's partitions (their IDs
 * hashed again to find the partition, cur: each unit's first place in each
 * of the 2^bits partitions, as partition() left them). */
typedef struct source {
    const uint32_t *dest;
    uint32_t *table;
    uint64_t lo, span; /* span: the table's; an ID beyond it sets *outside */
    int *outside;
    const uint32_t *res;
    const uint64_t *cur;
    int bits, units; /* units: partition()'s */
} source;

/* One unit's links, in halo order. */
typedef struct part {
    fk_treelink *l;
    uint64_t n, cap, found;
    int failed;
} part;

/* The run of halos of unit t of nt, of about equal members (n of them): from
 * the halo holding its first place to the one holding the next unit's. */
static void unit_halos(const uint64_t *at, uint64_t nhalo, uint64_t n, int t, int nt, uint64_t *h0, uint64_t *h1)
{
    *h0 = t == 0 ? 0 : halo_of(at, nhalo, n * (uint64_t)t / (uint64_t)nt) + 1;
    *h1 = t == nt - 1 ? nhalo : halo_of(at, nhalo, n * (uint64_t)(t + 1) / (uint64_t)nt) + 1;
}

/* A unit's next link; 0 when out of memory. */
static int add_link(part *me, uint32_t prog, uint32_t desc, uint64_t count, double score)
{
    if (me->n == me->cap) {
        uint64_t cap = me->cap ? 2 * me->cap : 1024;
        fk_treelink *l = realloc(me->l, cap * sizeof *l);
        if (!l) return 0;
        me->l = l, me->cap = cap;
    }
    me->l[me->n++] = (fk_treelink){prog, desc, count, score};
    return 1;
}

/* Steps 2 and 3 of one halo in one pass, without a sort, for a halo whose
 * members go to at most two descendants (most do, one main and a few lost
 * or taken): its members' B halos d (NONE: none) in rank order, each
 * descendant a count and a running sum in a register of its own, every
 * member added to both sums: wt[rank] times 1 where its descendant is that
 * sum's, times 0 elsewhere (a product exact either way, and + 0.0 leaves a
 * sum of positive terms unchanged to the bit: the same sum as the sort's,
 * term by term in rank order), with no branch a member that mispredicts.
 * Returns the descendants (ds, cs, ss, by ascending ds), or -1 when there
 * are more than two (or no wt: ranks beyond its table). */
static int slots(const uint32_t *d, uint64_t len, const double *wt, uint32_t *ds, uint64_t *cs, double *ss)
{
    static const double unit[2] = {0.0, 1.0};
    if (!wt) return -1;
    uint64_t d0 = UINT64_MAX, d1 = UINT64_MAX, c0 = 0, c1 = 0; /* UINT64_MAX: no descendant yet */
    double s0 = 0, s1 = 0;
    int nd = 0;
    for (uint64_t j = 0; j < len; j++) {
        const uint64_t v = d[j];
        int e0 = v == d0, e1 = v == d1;
        if (__builtin_expect(!(e0 | e1) && v != NONE, 0)) { /* a new descendant */
            if (nd == 2) return -1;
            if (nd++ == 0) d0 = v, e0 = 1;
            else d1 = v, e1 = 1;
        }
        const double w = wt[j + 1];
        s0 += w * unit[e0], s1 += w * unit[e1];
        c0 += (uint64_t)e0, c1 += (uint64_t)e1;
    }
    const int swap = nd == 2 && d1 < d0;
    ds[swap] = (uint32_t)d0, cs[swap] = c0, ss[swap] = s0;
    ds[!swap] = (uint32_t)d1, cs[!swap] = c1, ss[!swap] = s1;
    return nd;
}

/* Step 3: each A halo's shared members by B halo (then rank), reduced: a
 * segmented reduce, the segments the A halos, each unit (one a thread) a run
 * of halos of about equal members (its links in halo order, so that the
 * units' runs, one after the other, come sorted by prog then desc). A halo's
 * B halos gathered into a buffer of the unit's (4 bytes a member of its
 * longest halo), summed by slots(); a halo with more than two descendants sorted
 * (sort_shares: 16 bytes a member, twice). *found: the members found in B. */
static int reduce(const fk_treecat *a, const uint64_t *at_a, source src, int weight,
                  fk_treelink **links, uint64_t *nlinks, uint64_t *found, fk_error *err)
{
    const uint64_t na = at_a[a->nhalo], np = (uint64_t)1 << src.bits;
    const int nt = src.units ? src.units : na < PARALLEL_MIN ? 1 : omp_get_max_threads();
    part *pt = calloc((size_t)nt, sizeof *pt);
    if (!pt) return fk_fail(err, FK_ENOMEM, "out of memory for the links");
#pragma omp parallel for schedule(static, 1) num_threads(nt)
    for (int t = 0; t < nt; t++) { /* units, not threads: the same halos as partition()'s unit t */
        part *me = &pt[t];
        uint64_t h0, h1;
        unit_halos(at_a, a->nhalo, na, t, nt, &h0, &h1);
        uint64_t longest = 0;
        for (uint64_t h = h0; h < h1; h++)
            if (at_a[h + 1] - at_a[h] > longest) longest = at_a[h + 1] - at_a[h];
        share *sh = NULL; /* made when a halo has more than two descendants */
        uint32_t *buf = malloc((longest + 1) * sizeof *buf);
        uint64_t *cur = src.res ? malloc(np * sizeof *cur) : NULL;
        if (cur) memcpy(cur, src.cur + (size_t)t * np, np * sizeof *cur);
        /* 1/rank looked up, not divided each time (the same doubles): up to 2^24 ranks; wt: the
         * weight by rank (1/rank or 1), NULL beyond */
        double *inv = weight == FK_TREE_WEIGHT_RANK && longest < (1u << 24) ? malloc((longest + 1) * sizeof *inv) : NULL;
        for (uint64_t r = 1; inv && r <= longest; r++) inv[r] = 1.0 / (double)r;
        double *ones = weight == FK_TREE_WEIGHT_COUNT && longest < (1u << 24) ? malloc((longest + 1) * sizeof *ones) : NULL;
        for (uint64_t r = 1; ones && r <= longest; r++) ones[r] = 1.0;
        const double *wt = inv ? inv : ones;
        if (!buf || (src.res && !cur) || (longest < (1u << 24) && !wt)) me->failed = 1;
        for (uint64_t h = h0; h < h1 && !me->failed; h++) {
            const uint64_t f = at_a[h], len = at_a[h + 1] - f;
            const int64_t *id = a->ids + a->first[h];
            const uint32_t *d = buf;
            if (src.dest)
                d = src.dest + f;
            else if (src.table)
                for (uint64_t j = 0; j < len; j++) {
                    /* plain loads and stores, each entry only this member's unless an ID came twice */
                    const uint64_t at = (uint64_t)id[j] - src.lo;
                    if (__builtin_expect(at >= src.span, 0)) {
                        __atomic_store_n(src.outside, 1, __ATOMIC_RELAXED);
                        buf[j] = NONE;
                        continue;
                    }
                    uint32_t *e = &src.table[at];
                    const uint32_t v = __atomic_load_n(e, __ATOMIC_RELAXED);
                    __atomic_store_n(e, MARK, __ATOMIC_RELAXED);
                    buf[j] = v - 1; /* 0 (none): NONE */
                }
            else
                for (uint64_t j = 0; j < len; j++) {
                    const uint64_t q = src.bits ? fk_mtree_mix64((uint64_t)id[j]) >> (64 - src.bits) : 0;
                    buf[j] = src.res[cur[q]++];
                }
            uint32_t ds[2];
            uint64_t cs[2];
            double ss[2];
            const int nd = slots(d, len, wt, ds, cs, ss);
            for (int q = 0; q < nd; q++) {
                me->found += cs[q];
                if (!add_link(me, (uint32_t)h, ds[q], cs[q], ss[q])) me->failed = 1;
            }
            if (nd >= 0) continue;
            if (!sh && !(sh = malloc((longest + 1) * 2 * sizeof *sh))) {
                me->failed = 1;
                break;
            }
            uint64_t k = 0;
            for (uint64_t j = 0; j < len; j++)
                if (d[j] != NONE) sh[k++] = (share){d[j], (uint32_t)(j + 1 > UINT32_MAX ? UINT32_MAX : j + 1)};
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
                if (!add_link(me, (uint32_t)h, sh[i].desc, j - i, s)) {
                    me->failed = 1;
                    break;
                }
                i = j;
            }
        }
        free(sh), free(buf), free(cur), free(inv), free(ones);
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
 * rest of the match), no list of the members' B halos made: B's halos (+ 1)
 * scattered into a table indexed by ID - lo (zero as the kernel maps it, no
 * pass to fill it), which A's members gather from
 * in step 3, each marking its entry MARK. Then one count: with no ID twice
 * in A, its members marked as many entries as they are; with none twice in
 * B, the entries B set are its members (those still holding a B halo, and
 * the marked ones that found a B halo). 4 bytes an ID of the span. *dup set
 * (nothing made) when the counts disagree: join_dense_checked then finds and
 * names the duplicate. [lo, hi] may be a guess (sample_range): *outside set
 * (nothing made) when an ID lies beyond it. */
static int match_dense(const fk_treecat *a, const uint64_t *at_a, const fk_treecat *b,
                       const uint64_t *at_b, uint64_t lo, uint64_t hi, int weight, fk_treelink **links,
                       uint64_t *nlinks, uint64_t *shared, int *dup, int *outside, fk_error *err)
{
    const uint64_t span = hi - lo + 1, na = at_a[a->nhalo], nb = at_b[b->nhalo];
    *dup = 0, *outside = 0;
    uint32_t *table = fk_big_zalloc(span * sizeof *table); /* faulted in on every core, zero */
    if (!table) return fk_fail(err, FK_ENOMEM, "out of memory for a table of %" PRIu64 " IDs", span);
    const int many = span >= PARALLEL_MIN;
    int out = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(| : out) if (many)
    for (uint64_t k = 0; k < b->nhalo; k++) {
        const int64_t *id = b->ids + b->first[k];
        for (uint64_t j = 0; j < b->len[k]; j++) {
            const uint64_t at = (uint64_t)id[j] - lo;
            if (__builtin_expect(at < span, 1)) __atomic_store_n(&table[at], (uint32_t)k + 1, __ATOMIC_RELAXED);
            else out = 1;
        }
    }
    int st = out ? FK_OK
                 : reduce(a, at_a, (source){.table = table, .lo = lo, .span = span, .outside = &out}, weight, links,
                          nlinks, shared, err);
    if (!st && out) {
        *outside = 1;
        free(*links);
        *links = NULL, *nlinks = 0, *shared = 0;
    } else if (!st) {
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
 * about PART_SIZE members (A's as their IDs alone, B's as (ID, halo)); each
 * partition is then joined in a hash table of its own, small enough for the
 * caches (16 bytes a slot, 1.5 to 3 slots a member): B's IDs inserted, then A's
 * looked up (and inserted), each A member's B halo written beside its ID, in
 * partition order (res: written in sequence, not scattered over A's places).
 * Step 3 then takes each A halo's answers back in rank order: a member's
 * partition is its ID hashed again, and each unit of the partition pass
 * reads its own run of each partition from its start, in the order it wrote
 * it (2^bits cursors a unit, each walking forward: the pass run backwards,
 * as cache-friendly as itself). An ID met twice in one catalogue sets *dup
 * (the sorts then name it). 8 bytes a member of A and 16 of B (the
 * partitions), 4 a member of A (the answers), 8 a partition a unit. */
#define PART_SIZE 16384

/* The work units of a pass over n members (one a thread). */
static int units_of(uint64_t n)
{
    return n < PARALLEL_MIN ? 1 : omp_get_max_threads();
}

/* c's members (only's halos) scattered into np = 2^bits partitions by the top bits of
 * fk_mtree_mix64(ID): into ids (their IDs) or out ((ID, halo, 0)), partition after partition, and
 * start (np + 1 entries); keep (nt x np, unless NULL): where each unit's run of each partition
 * begins. nt units of halos of about equal members (unit_halos), each its members in order. */
static int partition(const fk_treecat *c, const uint8_t *only, const uint64_t *at, int bits, int nt,
                     uint64_t *ids, fk_treerec *out, uint64_t *start, uint64_t *keep)
{
    const uint64_t n = at[c->nhalo], np = (uint64_t)1 << bits;
    uint64_t *cnt = calloc((size_t)nt * np, sizeof *cnt);
    if (!cnt) return 1;
#define PART_OF(id) (bits ? fk_mtree_mix64(id) >> (64 - bits) : 0)
#pragma omp parallel num_threads(nt)
    {
#pragma omp for schedule(static, 1)
        for (int t = 0; t < nt; t++) {
            uint64_t h0, h1, *my = cnt + (size_t)t * np;
            unit_halos(at, c->nhalo, n, t, nt, &h0, &h1);
            for (uint64_t h = h0; h < h1; h++) {
                if (only && !only[h]) continue;
                const int64_t *id = c->ids + c->first[h];
                for (uint64_t j = 0; j < c->len[h]; j++) my[PART_OF((uint64_t)id[j])]++;
            }
        }
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
            if (keep) memcpy(keep, cnt, (size_t)nt * np * sizeof *keep);
        }
#pragma omp for schedule(static, 1)
        for (int t = 0; t < nt; t++) {
            uint64_t h0, h1, *my = cnt + (size_t)t * np;
            unit_halos(at, c->nhalo, n, t, nt, &h0, &h1);
            for (uint64_t h = h0; h < h1; h++) {
                if (only && !only[h]) continue;
                const int64_t *id = c->ids + c->first[h];
                if (ids)
                    for (uint64_t j = 0; j < c->len[h]; j++) ids[my[PART_OF((uint64_t)id[j])]++] = (uint64_t)id[j];
                else
                    for (uint64_t j = 0; j < c->len[h]; j++)
                        out[my[PART_OF((uint64_t)id[j])]++] = (fk_treerec){(uint64_t)id[j], (uint32_t)h, 0};
            }
        }
    }
#undef PART_OF
    free(cnt);
    return 0;
}

/* A slot of a partition's table: an ID, its B halo (NONE: only A's), and tag: 2 (q + 1) when
 * partition q's B put it there, + 1 when A has it too; any other (an earlier partition's): empty.
 * So a thread's table is cleared once, not before each partition. */
typedef struct slot {
    uint64_t id;
    uint32_t halo, tag;
} slot;

/* The hash join and steps 2 and 3 (reduce from the answers in partition order); *dup (nothing
 * made) on an ID twice in one catalogue. */
static int join_hash(const fk_treecat *a, const uint8_t *only, const uint64_t *at_a, const fk_treecat *b,
                     const uint64_t *at_b, int weight, fk_treelink **links, uint64_t *nlinks, uint64_t *shared,
                     int *dup, fk_error *err)
{
    const uint64_t na = at_a[a->nhalo], nb = at_b[b->nhalo];
    int bits = 0;
    while (bits < 20 && ((na + nb) >> bits) > PART_SIZE) bits++;
    const uint64_t np = (uint64_t)1 << bits;
    const int nta = units_of(na);
    /* faulted in as they are filled (not first zeroed on every core: written once) */
    uint64_t *pa = fk_big_reserve((na + 1) * sizeof *pa);
    fk_treerec *pb = fk_big_reserve((nb + 1) * sizeof *pb);
    uint32_t *res = fk_big_reserve((na + 1) * sizeof *res);
    uint64_t *sa = malloc((np + 1) * sizeof *sa), *sb = malloc((np + 1) * sizeof *sb);
    uint64_t *cur = malloc((size_t)nta * np * sizeof *cur);
    int st = FK_OK;
    *dup = 0;
    if (!pa || !pb || !res || !sa || !sb || !cur || partition(a, only, at_a, bits, nta, pa, NULL, sa, cur) ||
        partition(b, NULL, at_b, bits, units_of(nb), NULL, pb, sb, NULL)) {
        st = fk_fail(err, FK_ENOMEM, "out of memory to match %" PRIu64 " and %" PRIu64 " members", na, nb);
        goto done;
    }
    uint64_t most = 0; /* the largest partition: every thread's table holds it */
    for (uint64_t q = 0; q < np; q++)
        if (sa[q + 1] - sa[q] + sb[q + 1] - sb[q] > most) most = sa[q + 1] - sa[q] + sb[q + 1] - sb[q];
    /* a table a thread, at least 1.5 slots a member of the largest partition (a power of 2; the
     * partitions about 2^14 members: 2^15 slots, 512 KiB, in a core's L2) */
    uint64_t cap = 16;
    while (cap < most + most / 2) cap *= 2;
    int twice = 0, nomem = 0;
#pragma omp parallel reduction(| : twice, nomem) if (na + nb >= PARALLEL_MIN)
    {
        slot *tb = calloc(cap, sizeof *tb);
        if (!tb) nomem = 1;
#pragma omp for schedule(dynamic, 1)
        for (uint64_t q = 0; q < np; q++) {
            if (!tb || twice) continue;
            const uint64_t m = sa[q + 1] - sa[q] + sb[q + 1] - sb[q];
            const uint32_t e = (uint32_t)(q + 1); /* this partition's tag / 2 */
            uint64_t c = 16;
            while (c < m + m / 2) c *= 2;
            for (uint64_t i = sb[q]; i < sb[q + 1] && !twice; i++) {
                uint64_t k = fk_mtree_mix64(pb[i].key) & (c - 1);
                while (tb[k].tag >> 1 == e && tb[k].id != pb[i].key) k = (k + 1) & (c - 1);
                if (tb[k].tag >> 1 == e) twice = 1;
                tb[k] = (slot){pb[i].key, pb[i].a, 2 * e};
            }
            for (uint64_t i = sa[q]; i < sa[q + 1] && !twice; i++) {
                uint64_t k = fk_mtree_mix64(pa[i]) & (c - 1);
                while (tb[k].tag >> 1 == e && tb[k].id != pa[i]) k = (k + 1) & (c - 1);
                if (tb[k].tag == 2 * e + 1) twice = 1;
                if (tb[k].tag >> 1 != e) tb[k] = (slot){pa[i], NONE, 2 * e};
                tb[k].tag = 2 * e + 1;
                res[i] = tb[k].halo;
            }
        }
        free(tb);
    }
    if (nomem) {
        st = fk_fail(err, FK_ENOMEM, "out of memory to match %" PRIu64 " and %" PRIu64 " members", na, nb);
        goto done;
    }
    *dup = twice;
    free(pa), free(pb), free(sb); /* step 3 needs only the answers and the cursors */
    pa = NULL, pb = NULL, sb = NULL;
    if (!twice)
        st = reduce(a, at_a, (source){.res = res, .cur = cur, .bits = bits, .units = nta}, weight, links, nlinks,
                    shared, err);
done:
    free(pa), free(pb), free(res), free(sa), free(sb), free(cur);
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
    /* The range of the IDs guessed from a sample (not a pass over them all): sparse in the
     * sample, sparse in all; dense, the table spans the sample's range and a 32nd of it more
     * each way, and an ID beyond it (the table's join gives up as it meets it) sends the
     * match to the exact range, read from every ID, and the choice it makes. */
    uint64_t lo, hi;
    sample_range(a, b, &lo, &hi);
    int dense = na + nb > 0 && lo <= hi && hi - lo < DENSE * (na + nb), dup = 0, exact = 0;
    if (dense) { /* the join gathered by step 3 itself */
        const uint64_t m = (hi - lo) / 32 + 1024;
        int outside = 0;
        lo = lo > m ? lo - m : 0, hi = hi < UINT64_MAX - m ? hi + m : UINT64_MAX;
        st = match_dense(a, at_a, b, at_b, lo, hi, weight, links, nlinks, shared, &dup, &outside, err);
        if (st || (!dup && !outside)) goto done;
        if (outside) {
            id_range(a, only, b, &lo, &hi);
            exact = 1, dup = 0;
            dense = na + nb > 0 && hi - lo < DENSE * (na + nb);
            if (dense) st = match_dense(a, at_a, b, at_b, lo, hi, weight, links, nlinks, shared, &dup, &outside, err);
            if (st || (dense && !dup)) goto done;
        }
    }
    if (!dense) /* the hash join, step 3 reading its answers; on a duplicate the sorts below name it */
        st = join_hash(a, only, at_a, b, at_b, weight, links, nlinks, shared, &dup, err);
    if (st || !dup) goto done;
    dest = fk_big_alloc((na + 1) * sizeof *dest);
    if (!dest) {
        st = fk_fail(err, FK_ENOMEM, "out of memory to match %" PRIu64 " and %" PRIu64 " members", na, nb);
        goto done;
    }
    if (dense) {
        if (!exact) id_range(a, only, b, &lo, &hi); /* the duplicate named over every ID */
        st = join_dense_checked(a, only, at_a, b, at_b, lo, hi, dest, shared, aname, bname, err);
        if (st) goto done;
        goto reduce;
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
        st = reduce(a, at_a, (source){.dest = dest}, weight, links, nlinks, &found, err);
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
