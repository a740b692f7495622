/* halomembers.c - the members of every group, group by group in stream order, by a parallel counting sort. */
#include "halomembers.h"

#include <inttypes.h>
#include <stdlib.h>

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
#pragma omp for schedule(static)
        for (uint64_t g = 0; g < ng; g++) {
            uint64_t at = 0;
            for (uint64_t b = 0; b < nb; b++) {
                uint32_t c = count[b * ng + g];
                count[b * ng + g] = (uint32_t)at;
                at += c;
            }
            if (first) first[g + 1] = at;
        }
    }
    if (first) {
        first[0] = 0;
        for (uint64_t g = 0; g < ng; g++) first[g + 1] += first[g];
    }
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

int fk_halo_order_build(uint64_t n, const uint32_t *grp, uint64_t ng, fk_halo_order *o, fk_error *err)
{
    *o = (fk_halo_order){.n = n, .ng = ng, .bad = n};
    sorting t = {0};
    if (!(o->first = malloc((ng + 1) * sizeof *o->first)) || count_members(&t, grp, n, ng, o->first) != FK_OK)
        goto nomem;
    const uint64_t total = o->first[ng];
    if (n <= UINT32_MAX ? !(o->index = fk_big_alloc((total ? total : 1) * sizeof *o->index))
                        : !(o->index64 = fk_big_alloc(total * sizeof *o->index64)))
        goto nomem;
    place_members(&t, o->first, o->index, o->index64);
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

int fk_halo_order_fill(uint64_t n, const uint32_t *grp, uint64_t ng, const uint64_t *first, uint64_t *index)
{
    sorting t;
    if (count_members(&t, grp, n, ng, NULL) != FK_OK) return FK_ENOMEM;
    place_members(&t, first, NULL, index);
    sorting_free(&t);
    return FK_OK;
}
