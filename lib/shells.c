/* shells.c - members as (squared radius, mass) pairs about a centre, sorted outward for cumulative profiles. */
#include "shells.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void fk_shells_sort(fk_shell *a, size_t n, fk_shell *tmp, int (*cmp)(const void *, const void *))
{
    if (n < 4096) {
        qsort(a, n, sizeof *a, cmp);
        return;
    }
    enum { BITS = 11, BUCKETS = 1 << BITS };
    size_t count[BUCKETS];
    for (int shift = 0; shift < 64; shift += BITS) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++) {
            uint64_t k;
            memcpy(&k, &a[i].r2, sizeof k);
            count[(k >> shift) & (BUCKETS - 1)]++;
        }
        uint64_t k0;
        memcpy(&k0, &a[0].r2, sizeof k0);
        if (count[(k0 >> shift) & (BUCKETS - 1)] == n) continue; /* one digit for all: nothing to do */
        size_t sum = 0;
        for (size_t d = 0; d < BUCKETS; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t k;
            memcpy(&k, &a[i].r2, sizeof k);
            tmp[count[(k >> shift) & (BUCKETS - 1)]++] = a[i];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
}
