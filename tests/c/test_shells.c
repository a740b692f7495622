/* test_shells.c - the stable sorts of shells by r2 (serial and on every core) against a reference stable sort, on ties, near ties and long runs. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "check.h"
#include "shells.h"

#define TESTRAND_SEED 0x6a09e667f3bcc909ull
#include "testrand.h"

/* The reference: by r2, then by input position (m holds it), a total
 * order, so qsort gives the one stable order. */
static int by_r2_then_place(const void *a, const void *b)
{
    const fk_shell *p = a, *q = b;
    if (p->r2 != q->r2) return p->r2 < q->r2 ? -1 : 1;
    return (p->m > q->m) - (p->m < q->m);
}

/* Kinds of radii: spread over decades, few distinct values (ties), values
 * that agree in their top 33 bits (one long run), zeros among others, and
 * one value for all. */
enum { SPREAD, TIES, NEAR, ZEROS, SAME, KINDS };

static double radius2(int kind, size_t i)
{
    switch (kind) {
    case SPREAD: return pow(10, -8 + 8 * urand());
    case TIES: return (double)(rng % 7) * 0.25;
    case NEAR: return 1 + ldexp((double)(rng % 100000), -52);
    case ZEROS: return i % 3 ? 0 : urand();
    default: return 0.5;
    }
}

static int same(const fk_shell *a, const fk_shell *b, size_t n)
{
    return n == 0 || memcmp(a, b, n * sizeof *a) == 0;
}

static void test_sorts(void)
{
    static const size_t sizes[] = {0, 1, 2, 23, 24, 100, 1023, 1024, 5000, 65536, 200000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s];
        for (int kind = 0; kind < KINDS; kind++) {
            fk_shell *in = malloc((n + 1) * sizeof *in), *want = malloc((n + 1) * sizeof *want);
            fk_shell *got = malloc((n + 1) * sizeof *got), *tmp = malloc((n + 1) * sizeof *tmp);
            for (size_t i = 0; i < n; i++) in[i] = (fk_shell){radius2(kind, i), (double)i};
            memcpy(want, in, n * sizeof *in);
            qsort(want, n, sizeof *want, by_r2_then_place);
            memcpy(got, in, n * sizeof *in);
            fk_shells_sort_stable(got, n, tmp);
            CHECK_MSG(same(got, want, n), "serial sort, %zu entries, kind %d", n, kind);
#ifdef _OPENMP
            const int nt = omp_get_max_threads();
            for (int t = 1; t <= 5; t += 2) {
                omp_set_num_threads(t);
                memcpy(got, in, n * sizeof *in);
                fk_shells_sort_stable_par(got, n, tmp);
                CHECK_MSG(same(got, want, n), "parallel sort, %zu entries, kind %d, %d threads", n, kind, t);
            }
            omp_set_num_threads(nt);
#endif
            free(in), free(want), free(got), free(tmp);
        }
    }
}

int main(void)
{
    test_sorts();
    CHECK_DONE();
}
