/* shells.c - members as (squared radius, mass) pairs about a centre, sorted outward for cumulative profiles. */
#include "shells.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

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

/* The stable sorts order by the top 33 bits of the key first (three radix
 * passes of 11 bits: sign, exponent and 21 bits of mantissa, against six
 * passes for all 64), then each run of entries whose top bits agree (r2
 * within about 2^-21 of each other: a few entries) by r2 itself. */
enum { DIGIT = 11, LOW = 31, NPASS = 3, BUCKETS = 1 << DIGIT };

static inline uint64_t key_of(const fk_shell *s)
{
    uint64_t k;
    memcpy(&k, &s->r2, sizeof k);
    return k;
}

static inline unsigned digit_of(uint64_t k, int d)
{
    return (unsigned)(k >> (LOW + DIGIT * d)) & (BUCKETS - 1);
}

static void insertion(fk_shell *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        fk_shell v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1].r2 > v.r2; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Runs of 16 by insertion, then merges of neighbouring runs (the left one
 * first among equals) between a and tmp. */
static void merge_sort(fk_shell *a, size_t n, fk_shell *tmp)
{
    enum { RUN = 16 };
    for (size_t s = 0; s < n; s += RUN) insertion(a + s, n - s < RUN ? n - s : RUN);
    fk_shell *src = a, *dst = tmp;
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t s = 0; s < n; s += 2 * w) {
            size_t m = s + w < n ? s + w : n, e = s + 2 * w < n ? s + 2 * w : n, i = s, j = m, k = s;
            while (i < m && j < e) dst[k++] = src[j].r2 < src[i].r2 ? src[j++] : src[i++];
            while (i < m) dst[k++] = src[i++];
            while (j < e) dst[k++] = src[j++];
        }
        fk_shell *t = src;
        src = dst, dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
}

/* a[lo..hi), in order of the top bits: each run of equal top bits sorted
 * by r2, stably (tmp: scratch at the same places). */
static void sort_runs(fk_shell *a, size_t lo, size_t hi, fk_shell *tmp)
{
    uint64_t prev = lo < hi ? key_of(&a[lo]) >> LOW : 0;
    for (size_t s = lo, e = lo + 1; e <= hi; e++) {
        const uint64_t top = e < hi ? key_of(&a[e]) >> LOW : ~prev;
        if (top == prev) continue;
        if (e - s >= 24)
            merge_sort(a + s, e - s, tmp + s);
        else if (e - s > 1)
            insertion(a + s, e - s);
        s = e, prev = top;
    }
}

void fk_shells_sort_stable(fk_shell *a, size_t n, fk_shell *tmp)
{
    if (n < 24) {
        insertion(a, n);
        return;
    }
    if (n < 1024) {
        merge_sort(a, n, tmp);
        return;
    }
    size_t count[NPASS][BUCKETS] = {{0}}; /* 48 KiB of stack */
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_of(&a[i]);
        for (int d = 0; d < NPASS; d++) count[d][digit_of(k, d)]++;
    }
    fk_shell *src = a, *dst = tmp;
    for (int d = 0; d < NPASS; d++) {
        size_t *c = count[d];
        if (c[digit_of(key_of(&a[0]), d)] == n) continue; /* one digit for all: nothing to do */
        size_t sum = 0;
        for (size_t b = 0; b < BUCKETS; b++) {
            size_t x = c[b];
            c[b] = sum;
            sum += x;
        }
        for (size_t i = 0; i < n; i++) dst[c[digit_of(key_of(&src[i]), d)]++] = src[i];
        fk_shell *t = src;
        src = dst, dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
    sort_runs(a, 0, n, tmp);
}

/* The first place at or after p where a run of equal top bits starts. */
static size_t run_start(const fk_shell *a, size_t n, size_t p)
{
    while (p > 0 && p < n && key_of(&a[p - 1]) >> LOW == key_of(&a[p]) >> LOW) p++;
    return p;
}

void fk_shells_sort_stable_par(fk_shell *a, size_t n, fk_shell *tmp)
{
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    size_t(*cnt)[BUCKETS] = nt > 1 && n >= 65536 ? malloc((size_t)nt * sizeof *cnt) : NULL;
    if (!cnt) {
        fk_shells_sort_stable(a, n, tmp);
        return;
    }
    /* the key bits where some entry differs from the first: a digit without
     * any is the same for all, and its pass is skipped */
    const uint64_t k0 = key_of(&a[0]);
    uint64_t differ = 0;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(| : differ)
    for (size_t i = 0; i < n; i++) differ |= key_of(&a[i]) ^ k0;
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num(), nth = omp_get_num_threads();
        const size_t lo = n * (size_t)t / (size_t)nth, hi = n * (size_t)(t + 1) / (size_t)nth;
        size_t *c = cnt[t]; /* this slice's entries of each digit value, then where the first goes */
        fk_shell *src = a, *dst = tmp;
        for (int d = 0; d < NPASS; d++) {
            if (!digit_of(differ, d)) continue;
            memset(c, 0, sizeof *cnt);
            for (size_t i = lo; i < hi; i++) c[digit_of(key_of(&src[i]), d)]++;
#pragma omp barrier
#pragma omp single
            {
                size_t sum = 0;
                for (size_t b = 0; b < BUCKETS; b++)
                    for (int u = 0; u < nth; u++) {
                        size_t x = cnt[u][b];
                        cnt[u][b] = sum;
                        sum += x;
                    }
            }
            for (size_t i = lo; i < hi; i++) dst[c[digit_of(key_of(&src[i]), d)]++] = src[i];
#pragma omp barrier
            fk_shell *sw = src;
            src = dst, dst = sw;
        }
        if (src != a) memcpy(a + lo, src + lo, (hi - lo) * sizeof *a);
#pragma omp barrier
        /* the runs a thread sorts: those starting in its slice */
        sort_runs(a, run_start(a, n, lo), run_start(a, n, hi), tmp);
    }
    free(cnt);
}
