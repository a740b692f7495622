/* halomembers.c - the members of every group, group by group in ID order, by a parallel counting sort in ID order (dense IDs) or followed by a sort by ID. */
#include "halomembers.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Blocks of the sort: one a thread, fewer when there are many groups (the
 * counts, blocks x ng x 4 bytes, stay within n / 2 x 4 bytes), each below
 * 2^32 particles (4-byte counts). */
static uint64_t blocks(uint64_t n, uint64_t ng)
{
#ifdef _OPENMP
    uint64_t nb = (uint64_t)omp_get_max_threads();
#else
    uint64_t nb = 1;
#endif
    if (nb > n / (2 * (ng ? ng : 1))) nb = n / (2 * (ng ? ng : 1));
    if (nb < n / UINT32_MAX + 1) nb = n / UINT32_MAX + 1;
    return nb ? nb : 1;
}

/* A counting sort under way: block b's counts of each group, then their
 * offsets from the group's start (the earlier blocks' members). A group's
 * members mostly come in runs (the stream is in tree order): a run is
 * counted and placed at once. */
typedef struct sorting {
    const uint32_t *grp;
    uint64_t n, ng, nb;
    uint32_t *count; /* count[b * ng + g] */
    uint64_t *low;   /* each block's lowest particle of a group beyond ng, or n */
} sorting;

static void sorting_free(sorting *t)
{
    free(t->count), free(t->low);
}

/* The blocks' counts of each group (count[b * ng + g]) turned into their
 * offsets from the group's start (the earlier blocks' members), and, with
 * first (ng + 1 entries), the groups' offsets: first[g] the members of the
 * groups before g. */
static void block_offsets(uint32_t *count, uint64_t nb, uint64_t ng, uint64_t *first)
{
#pragma omp parallel for schedule(static)
    for (uint64_t g = 0; g < ng; g++) {
        uint64_t at = 0;
        for (uint64_t b = 0; b < nb; b++) {
            const uint32_t c = count[b * ng + g];
            count[b * ng + g] = (uint32_t)at;
            at += c;
        }
        if (first) first[g + 1] = at;
    }
    if (first) {
        first[0] = 0;
        for (uint64_t g = 0; g < ng; g++) first[g + 1] += first[g];
    }
}

/* The counts, the blocks' offsets and, with first, the groups' offsets
 * from the counts (ng + 1). */
static int count_members(sorting *t, const uint32_t *grp, uint64_t n, uint64_t ng, uint64_t *first)
{
    const uint64_t nb = blocks(n, ng);
    *t = (sorting){grp, n, ng, nb, fk_big_reserve((nb * ng > 0 ? nb * ng : 1) * sizeof *t->count),
                   malloc(nb * sizeof *t->low)};
    if (!t->count || !t->low) {
        sorting_free(t);
        return FK_ENOMEM;
    }
    uint32_t *count = t->count;
    uint64_t *low = t->low;
#pragma omp parallel
    {
#pragma omp for schedule(static, 1)
        for (uint64_t b = 0; b < nb; b++) {
            uint32_t *c = count + b * ng;
            for (uint64_t g = 0; g < ng; g++) c[g] = 0;
            low[b] = n;
            const uint64_t end = n * (b + 1) / nb;
            for (uint64_t i = n * b / nb, j; i < end; i = j) {
                const uint32_t g = grp[i];
                for (j = i + 1; j < end && grp[j] == g; j++) {}
                if (g > ng) {
                    if (low[b] == n) low[b] = i;
                } else if (g) {
                    c[g - 1] += (uint32_t)(j - i);
                }
            }
        }
    }
    block_offsets(count, nb, ng, first);
    return FK_OK;
}

/* Block b's members after those of blocks 0..b-1, into idx32 or idx64. */
static void place_members(sorting *t, const uint64_t *first, uint32_t *idx32, uint64_t *idx64)
{
    const uint32_t *grp = t->grp;
    const uint64_t n = t->n, ng = t->ng, nb = t->nb;
#pragma omp parallel for schedule(static, 1)
    for (uint64_t b = 0; b < nb; b++) {
        uint32_t *c = t->count + b * ng;
        const uint64_t end = n * (b + 1) / nb;
        for (uint64_t i = n * b / nb, j; i < end; i = j) {
            const uint32_t g = grp[i];
            for (j = i + 1; j < end && grp[j] == g; j++) {}
            if (g == 0 || g > ng) continue;
            const uint64_t at = first[g - 1] + c[g - 1];
            c[g - 1] += (uint32_t)(j - i);
            if (idx32)
                for (uint64_t k = i; k < j; k++) idx32[at + k - i] = (uint32_t)k;
            else
                for (uint64_t k = i; k < j; k++) idx64[at + k - i] = k;
        }
    }
}

typedef fk_id_keyed keyed;

#define RADIX_BITS 11
#define RADIX (1u << RADIX_BITS)
#define INSERTION_MAX 32 /* groups of at most this many members: an insertion sort */

/* a[0..n) by ascending id (ties, which a stream's unique IDs do not have,
 * kept in their order): an insertion sort for a few, else a least
 * significant digit radix sort of the IDs less the least, RADIX_BITS a
 * pass, through tmp (n entries); stable either way. */
static void sort_keyed(keyed *a, keyed *tmp, uint64_t n, uint64_t lo, uint64_t hi, uint64_t *count)
{
    if (n <= INSERTION_MAX) {
        for (uint64_t k = 1; k < n; k++) {
            const keyed x = a[k];
            uint64_t j = k;
            while (j > 0 && a[j - 1].id > x.id) a[j] = a[j - 1], j--;
            a[j] = x;
        }
        return;
    }
    const uint64_t span = hi - lo;
    int bits = 0;
    while (bits < 64 && (span >> bits) != 0) bits++;
    keyed *from = a, *to = tmp;
    for (int shift = 0; shift < bits; shift += RADIX_BITS) {
        for (uint32_t d = 0; d < RADIX; d++) count[d] = 0;
        for (uint64_t k = 0; k < n; k++) count[((from[k].id - lo) >> shift) & (RADIX - 1)]++;
        uint64_t at = 0;
        for (uint32_t d = 0; d < RADIX; d++) {
            const uint64_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (uint64_t k = 0; k < n; k++) to[count[((from[k].id - lo) >> shift) & (RADIX - 1)]++] = from[k];
        keyed *t = from;
        from = to, to = t;
    }
    if (from != a) memcpy(a, from, n * sizeof *a);
}

void fk_id_sort_free(fk_id_sorter *s)
{
    free(s->buf), free(s->count);
    *s = (fk_id_sorter){0};
}

int fk_id_sort(fk_id_sorter *s, uint32_t *idx32, uint64_t *idx64, uint64_t n, const uint64_t *ids)
{
    uint64_t lo = UINT64_MAX, hi = 0, prev = 0;
    int sorted = 1;
    for (uint64_t k = 0; k < n; k++) {
        const uint64_t id = ids[idx32 ? idx32[k] : idx64[k]];
        if (k && id < prev) sorted = 0;
        if (id < lo) lo = id;
        if (id > hi) hi = id;
        prev = id;
    }
    if (sorted) return FK_OK;
    if (n > s->cap || !s->count) {
        const uint64_t cap = n > 4096 ? n : 4096;
        keyed *buf = malloc(2 * cap * sizeof *buf);
        uint64_t *count = s->count ? s->count : malloc(RADIX * sizeof *count);
        if (!buf || !count) {
            free(buf);
            if (count != s->count) free(count);
            return FK_ENOMEM;
        }
        free(s->buf);
        s->buf = buf, s->count = count, s->cap = cap;
    }
    keyed *buf = s->buf;
    for (uint64_t k = 0; k < n; k++) {
        const uint64_t i = idx32 ? idx32[k] : idx64[k];
        buf[k] = (keyed){ids[i], i};
    }
    sort_keyed(buf, buf + n, n, lo, hi, s->count);
    if (idx32)
        for (uint64_t k = 0; k < n; k++) idx32[k] = (uint32_t)buf[k].i;
    else
        for (uint64_t k = 0; k < n; k++) idx64[k] = buf[k].i;
    return FK_OK;
}

#define SORT_SMALL 256 /* groups of at most this many members go to the threads 256 at a time */

/* Every group's members, index[first[g] .. first[g + 1]) (idx32 or idx64),
 * put in ascending order of their IDs (fk_id_sort): the order every sum over
 * a group's members follows, which no stream order, split into ranks or
 * number of threads changes. The groups in parallel, each sorted by one
 * thread: those above SORT_SMALL members one at a time, the largest (the
 * lowest numbers: groups numbers them by size) first, then the others in
 * runs. FK_ENOMEM. */
static int sort_by_id(const uint64_t *first, uint64_t ng, const uint64_t *ids, uint32_t *idx32, uint64_t *idx64)
{
    int failed = 0;
#pragma omp parallel reduction(| : failed)
    {
        fk_id_sorter s = {0};
#pragma omp for schedule(dynamic, 1) nowait
        for (uint64_t g = 0; g < ng; g++) {
            const uint64_t f = first[g], n = first[g + 1] - f;
            if (n > SORT_SMALL && !failed &&
                fk_id_sort(&s, idx32 ? idx32 + f : NULL, idx32 ? NULL : idx64 + f, n, ids) != FK_OK)
                failed = 1;
        }
#pragma omp for schedule(dynamic, SORT_SMALL)
        for (uint64_t g = 0; g < ng; g++) {
            const uint64_t f = first[g], n = first[g + 1] - f;
            if (n <= SORT_SMALL && !failed &&
                fk_id_sort(&s, idx32 ? idx32 + f : NULL, idx32 ? NULL : idx64 + f, n, ids) != FK_OK)
                failed = 1;
        }
        fk_id_sort_free(&s);
    }
    return failed ? FK_ENOMEM : FK_OK;
}

/* The members in ID order without a sort, when the IDs are dense (those
 * of a stream: the source's indices; Gadget's 1..N): each member's group
 * and index are scattered into a table indexed by ID - lo (8 bytes an ID,
 * span at most 1.5 n + 2^16, freed before returning), and the counting
 * sort runs over the table, its blocks in ascending ID, so that each
 * group's members come in ascending ID, the order the sort by ID gives,
 * whatever the number of threads; no group waits on one thread's sort.
 * *done = 0 when it does not apply (IDs sparse, 2^32 - 1 particles or
 * more, an ID twice among the members: the sort's way then keeps them in
 * stream order). FK_ENOMEM. */
static int build_by_id(uint64_t n, const uint32_t *grp, const uint64_t *ids, uint64_t ng, fk_halo_order *o, int *done)
{
    *done = 0;
    if (n == 0 || n >= UINT32_MAX || ng >= UINT32_MAX) return FK_OK;
    uint64_t lo = UINT64_MAX, hi = 0;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi)
    for (uint64_t i = 0; i < n; i++) {
        if (ids[i] < lo) lo = ids[i];
        if (ids[i] > hi) hi = ids[i];
    }
    const uint64_t span = hi - lo + 1;
    if (hi - lo >= n + n / 2 + 65536) return FK_OK;
    uint64_t *tab = fk_big_zalloc(span * sizeof *tab);
    if (!tab) return FK_ENOMEM;
    uint64_t members = 0, bad = n;
#pragma omp parallel for schedule(static) reduction(+ : members) reduction(min : bad)
    for (uint64_t i = 0; i < n; i++) {
        const uint32_t g = grp[i];
        if (g > ng) {
            if (i < bad) bad = i;
        } else if (g) {
            tab[ids[i] - lo] = (uint64_t)g << 32 | i;
            members++;
        }
    }
    const uint64_t nb = blocks(span, ng);
    uint32_t *count = fk_big_reserve((nb * ng > 0 ? nb * ng : 1) * sizeof *count);
    if (!(o->first = malloc((ng + 1) * sizeof *o->first)) || !count ||
        !(o->index = fk_big_alloc((members ? members : 1) * sizeof *o->index))) {
        free(tab), free(count);
        fk_halo_order_free(o);
        return FK_ENOMEM;
    }
    uint64_t *first = o->first;
    uint32_t *index = o->index;
#pragma omp parallel for schedule(static, 1)
    for (uint64_t b = 0; b < nb; b++) {
        uint32_t *c = count + b * ng;
        for (uint64_t g = 0; g < ng; g++) c[g] = 0;
        const uint64_t end = span * (b + 1) / nb;
        for (uint64_t j = span * b / nb; j < end; j++)
            if (tab[j]) c[(tab[j] >> 32) - 1]++;
    }
    block_offsets(count, nb, ng, first);
#pragma omp parallel for schedule(static, 1)
    for (uint64_t b = 0; b < nb; b++) {
        uint32_t *c = count + b * ng;
        const uint64_t end = span * (b + 1) / nb;
        for (uint64_t j = span * b / nb; j < end; j++)
            if (tab[j]) {
                const uint32_t g = (uint32_t)(tab[j] >> 32) - 1;
                index[first[g] + c[g]++] = (uint32_t)tab[j];
            }
    }
    free(tab), free(count);
    if (first[ng] != members) { /* an ID twice: one member hid another */
        fk_halo_order_free(o);
        return FK_OK;
    }
    o->bad = bad;
    o->bad_group = bad < n ? grp[bad] : 0;
    *done = 1;
    return FK_OK;
}

int fk_halo_order_build(uint64_t n, const uint32_t *grp, const uint64_t *ids, uint64_t ng, fk_halo_order *o,
                        fk_error *err)
{
    *o = (fk_halo_order){.n = n, .ng = ng, .bad = n};
    int done = 0;
    if (ids && build_by_id(n, grp, ids, ng, o, &done) != FK_OK)
        return fk_fail(err, FK_ENOMEM, "out of memory for the members of %" PRIu64 " groups", ng);
    if (done) return FK_OK;
    sorting t = {0};
    if (!(o->first = malloc((ng + 1) * sizeof *o->first)) || count_members(&t, grp, n, ng, o->first) != FK_OK)
        goto nomem;
    const uint64_t total = o->first[ng];
    if (n <= UINT32_MAX ? !(o->index = fk_big_alloc((total ? total : 1) * sizeof *o->index))
                        : !(o->index64 = fk_big_alloc(total * sizeof *o->index64)))
        goto nomem;
    place_members(&t, o->first, o->index, o->index64);
    if (ids && sort_by_id(o->first, ng, ids, o->index, o->index64) != FK_OK) goto nomem;
    for (uint64_t b = 0; b < t.nb; b++)
        if (t.low[b] < o->bad) o->bad = t.low[b];
    o->bad_group = o->bad < n ? grp[o->bad] : 0;
    sorting_free(&t);
    return FK_OK;
nomem:
    sorting_free(&t);
    fk_halo_order_free(o);
    return fk_fail(err, FK_ENOMEM, "out of memory for the members of %" PRIu64 " groups", ng);
}

void fk_halo_order_free(fk_halo_order *o)
{
    free(o->first), free(o->index), free(o->index64);
    o->first = NULL, o->index = NULL, o->index64 = NULL;
}

int fk_halo_order_fill(uint64_t n, const uint32_t *grp, const uint64_t *ids, uint64_t ng, const uint64_t *first,
                       uint64_t *index)
{
    sorting t;
    if (count_members(&t, grp, n, ng, NULL) != FK_OK) return FK_ENOMEM;
    place_members(&t, first, NULL, index);
    sorting_free(&t);
    return ids ? sort_by_id(first, ng, ids, NULL, index) : FK_OK;
}
