/* gsnap_slice.c - slices of a Gadget-family snapshot: which particles of each type slice K of R holds. */
#include "gsnap_slice.h"

#include <string.h>

uint64_t fk_slice_bound(uint64_t n, uint64_t k, uint64_t r)
{
    /* n = q r + m: n k / r = q k + m k / r, and m k < r^2 < 2^64 */
    uint64_t q = n / r, m = n % r;
    return q * k + m * k / r;
}

void fk_gslice_make(fk_gslice *sl, const uint64_t *ntotal, int ntypes, unsigned keep, uint32_t k, uint32_t r)
{
    memset(sl, 0, sizeof *sl);
    uint64_t n = 0;
    for (int t = 0; t < ntypes && t < FK_GSLICE_NTYPES; t++)
        if (keep >> t & 1u) n += ntotal[t];
    const uint64_t a = r ? fk_slice_bound(n, k, r) : 0, b = r ? fk_slice_bound(n, (uint64_t)k + 1, r) : n;
    /* [a, b) met with each kept type's place [at, at + ntotal[t]) in the order of the kept */
    uint64_t at = 0;
    for (int t = 0; t < ntypes && t < FK_GSLICE_NTYPES; t++) {
        if (!(keep >> t & 1u)) continue;
        const uint64_t end = at + ntotal[t], lo = a > at ? a : at, hi = b < end ? b : end;
        if (lo < hi) {
            sl->first[t] = lo - at;
            sl->count[t] = hi - lo;
            sl->n += hi - lo;
        }
        at = end;
    }
}

uint64_t fk_gslice_part(const fk_gslice *sl, int t, uint64_t seen, uint64_t n, uint64_t *skip)
{
    *skip = 0;
    if (t < 0 || t >= FK_GSLICE_NTYPES || !sl->count[t]) return 0;
    const uint64_t a = sl->first[t], b = a + sl->count[t];
    const uint64_t lo = a > seen ? a : seen, hi = b < seen + n ? b : seen + n;
    if (lo >= hi) return 0;
    *skip = lo - seen;
    return hi - lo;
}
