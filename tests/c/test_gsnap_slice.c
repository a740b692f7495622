/* test_gsnap_slice.c - slices of a Gadget-family snapshot: exact bounds past 2^32 (and 2^64 products), types and files covered once, in order. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "gsnap_slice.h"

static uint64_t state = 88172645463325252u;

static uint64_t rnd(void)
{
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
}

/* floor(n k / r) through a 128-bit product, the reference */
static uint64_t bound_ref(uint64_t n, uint64_t k, uint64_t r)
{
    return (uint64_t)((unsigned __int128)n * k / r);
}

static void test_bound(void)
{
    /* products far past 2^64: n near 2^64, r near 2^32 */
    const uint64_t ns[] = {0, 1, 7, UINT32_MAX, (uint64_t)UINT32_MAX + 2, UINT64_C(1) << 40, UINT64_C(7) << 40,
                           UINT64_MAX - 1, UINT64_MAX};
    const uint64_t rs[] = {1, 2, 3, 7, 1000, UINT32_MAX - 1, UINT32_MAX};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
        for (size_t j = 0; j < sizeof rs / sizeof *rs; j++) {
            const uint64_t r = rs[j], ks[] = {0, 1, r / 2, r - 1, r};
            for (int m = 0; m < 5; m++)
                CHECK_MSG(fk_slice_bound(ns[i], ks[m], r) == bound_ref(ns[i], ks[m], r), "n %llu k %llu r %llu",
                          (unsigned long long)ns[i], (unsigned long long)ks[m], (unsigned long long)r);
        }
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t n = rnd() >> (rnd() % 64), r = 1 + (rnd() & UINT32_MAX) % UINT32_MAX, k = rnd() % (r + 1);
        bad += fk_slice_bound(n, k, r) != bound_ref(n, k, r);
    }
    CHECK_MSG(bad == 0, "%d random bounds differ from the 128-bit reference", bad);
}

/* Slices of random snapshots: one after the other they cover each kept type's particles
 * exactly once and in order, sizes within one of each other; files split any way give
 * each slice its particles once (fk_gslice_part). */
static void test_cover(void)
{
    for (int trial = 0; trial < 3000; trial++) {
        uint64_t ntotal[FK_GSLICE_NTYPES] = {0}, nkept = 0;
        const int ntypes = 1 + (int)(rnd() % FK_GSLICE_NTYPES);
        const unsigned keep = (unsigned)(rnd() & 0x7f);
        for (int t = 0; t < ntypes; t++) {
            ntotal[t] = rnd() % 4 ? rnd() % 50 : 0;
            if (keep >> t & 1u) nkept += ntotal[t];
        }
        const uint32_t r = 1 + (uint32_t)(rnd() % 12);
        /* files: cut each type at random places */
        int nfiles = 1 + (int)(rnd() % 5);
        uint64_t per[5][FK_GSLICE_NTYPES] = {{0}};
        for (int t = 0; t < ntypes; t++) {
            uint64_t left = ntotal[t];
            for (int f = 0; f < nfiles; f++) {
                per[f][t] = f == nfiles - 1 ? left : rnd() % (left + 1);
                left -= per[f][t];
            }
        }
        uint64_t next[FK_GSLICE_NTYPES] = {0}, lo = UINT64_MAX, hi = 0, sum = 0;
        int ok = 1;
        for (uint32_t k = 0; k < r; k++) {
            fk_gslice sl;
            fk_gslice_make(&sl, ntotal, ntypes, keep, k, r);
            lo = sl.n < lo ? sl.n : lo;
            hi = sl.n > hi ? sl.n : hi;
            sum += sl.n;
            uint64_t within = 0;
            for (int t = 0; t < ntypes; t++) {
                if (!(keep >> t & 1u)) {
                    ok &= sl.count[t] == 0;
                    continue;
                }
                if (sl.count[t]) ok &= sl.first[t] == next[t];
                next[t] += sl.count[t];
                within += sl.count[t];
                /* the files' parts: consecutive, adding up to count */
                uint64_t seen = 0, got = 0, skip;
                for (int f = 0; f < nfiles; f++) {
                    uint64_t m = fk_gslice_part(&sl, t, seen, per[f][t], &skip);
                    if (m) ok &= seen + skip == sl.first[t] + got && skip + m <= per[f][t];
                    got += m;
                    seen += per[f][t];
                }
                ok &= got == sl.count[t];
            }
            ok &= within == sl.n;
        }
        for (int t = 0; t < ntypes; t++) ok &= next[t] == ((keep >> t & 1u) ? ntotal[t] : 0);
        ok &= sum == nkept && hi - lo <= 1;
        CHECK_MSG(ok, "trial %d: %d types, keep %#x, %u slices, %d files", trial, ntypes, keep, r, nfiles);
        if (!ok) break;
    }
}

/* Past 2^32: 2^40 particles of each of 7 types, 2^31 + 11 slices; the last slice ends at
 * the end of the last type, the boundaries exact. */
static void test_large(void)
{
    uint64_t ntotal[FK_GSLICE_NTYPES];
    for (int t = 0; t < FK_GSLICE_NTYPES; t++) ntotal[t] = (UINT64_C(1) << 40) + (uint64_t)t;
    const uint64_t n = 7 * (UINT64_C(1) << 40) + 21;
    const uint32_t r = (UINT32_C(1) << 31) + 11;
    fk_gslice sl;
    fk_gslice_make(&sl, ntotal, 7, 0x7f, r - 1, r);
    CHECK(sl.n == n - bound_ref(n, r - 1, r));
    CHECK(sl.first[6] + sl.count[6] == ntotal[6] && sl.count[5] == 0);
    /* a slice straddling the boundary between types 2 and 3 */
    const uint64_t at3 = ntotal[0] + ntotal[1] + ntotal[2];
    uint64_t k = bound_ref(at3, r, n); /* some slice starts at or before at3 ... */
    while (bound_ref(n, k + 1, r) <= at3) k++; /* ... the one holding particle at3 */
    fk_gslice_make(&sl, ntotal, 7, 0x7f, (uint32_t)k, r);
    const uint64_t a = bound_ref(n, k, r), b = bound_ref(n, k + 1, r);
    CHECK(sl.n == b - a);
    CHECK(sl.count[2] + sl.count[3] == b - a);
    CHECK(sl.count[3] >= 1 && sl.first[3] == 0);
    CHECK(sl.count[2] == 0 || sl.first[2] + sl.count[2] == ntotal[2]);
    /* a file holding type 3's particles [2^39, 2^40): no part of a slice at the start of type 3 */
    uint64_t skip;
    CHECK(fk_gslice_part(&sl, 3, UINT64_C(1) << 39, UINT64_C(1) << 39, &skip) == 0);
    CHECK(fk_gslice_part(&sl, 3, 0, UINT64_C(1) << 39, &skip) == sl.count[3] && skip == 0);
    /* without a slice: everything kept */
    fk_gslice_make(&sl, ntotal, 7, 0x05, 0, 0);
    CHECK(sl.n == ntotal[0] + ntotal[2] && sl.count[1] == 0 && sl.count[2] == ntotal[2] && sl.first[2] == 0);
}

int main(void)
{
    test_bound();
    test_cover();
    test_large();
    CHECK_DONE();
}
