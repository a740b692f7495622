/* test_gpu_number.c - groups numbered on the GPU (fk_gpu_groups_number) against groups.c's fk_groups_number: the same group ids, counts and sizes, bit for bit (skips without a GPU). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu.h"
#include "groups.h"
#include "needgpu.h"
#include "testdata.h"

#define TESTRAND_SEED 0x6e756d6265726764ull
#include "testrand.h"

static uint64_t below(uint64_t m)
{
    return (uint64_t)(urand() * (double)m);
}

/* perm: a random permutation of 0 .. n-1 (kind 0), the identity (1) or reversed (2). */
static void make_perm(uint32_t *perm, uint64_t n, int kind)
{
    for (uint64_t i = 0; i < n; i++) perm[i] = (uint32_t)(kind == 2 ? n - 1 - i : i);
    if (kind == 0)
        for (uint64_t i = n; i > 1; i--) {
            uint64_t j = below(i);
            uint32_t t = perm[i - 1];
            perm[i - 1] = perm[j];
            perm[j] = t;
        }
}

/* Groups as runs of consecutive entries (as tree order keeps them), of 1 to
 * maxsize members (most small); the sink of each is its first entry
 * (canonical) or, with anywhere, any of its members. */
static void make_runs(uint32_t *root, uint64_t n, uint64_t maxsize, int anywhere)
{
    for (uint64_t t = 0; t < n;) {
        double u = urand();
        uint64_t s = 1 + (uint64_t)((double)maxsize * u * u * u);
        if (s > n - t) s = n - t;
        uint64_t r = anywhere ? t + below(s) : t;
        for (uint64_t i = 0; i < s; i++) root[t + i] = (uint32_t)r;
        t += s;
    }
}

/* Groups of exactly size members each (the last one shorter), so that
 * sizes tie and the lowest original index decides. */
static void make_ties(uint32_t *root, uint64_t n, uint64_t size)
{
    for (uint64_t t = 0; t < n; t++) root[t] = (uint32_t)(t - t % size);
}

/* Each entry in one of m groups at random, members scattered; the sink of
 * each group its first member. */
static void make_scattered(uint32_t *root, uint64_t n, uint64_t m)
{
    uint32_t *first = malloc((m ? m : 1) * sizeof *first);
    for (uint64_t g = 0; g < m; g++) first[g] = UINT32_MAX;
    for (uint64_t t = 0; t < n; t++) {
        uint64_t g = below(m);
        if (first[g] == UINT32_MAX) first[g] = (uint32_t)t;
        root[t] = first[g];
    }
    free(first);
}

/* The GPU's numbering of root and perm against fk_groups_number's (ids =
 * perm): group ids, every count, the sizes; also with the counts alone. */
static void compare(const char *what, const uint32_t *root, const uint32_t *perm, uint64_t n, uint64_t minsize)
{
    fk_error err = {0};
    uint64_t *ids = malloc((n ? n : 1) * sizeof *ids);
    uint32_t *ref = malloc((n ? n : 1) * 4), *got = malloc((n ? n : 1) * 4);
    for (uint64_t i = 0; i < n; i++) ids[i] = perm[i];
    fk_groups ri, gi, ci;
    CHECK_MSG(fk_groups_number(root, ids, n, n, minsize, ref, &ri, &err) == FK_OK, "%s", err.msg);
    memset(got, 0xa5, (n ? n : 1) * 4); /* every row must be written */
    uint64_t *sizes = NULL;
    int st = fk_gpu_groups_number(root, perm, n, minsize, got, &sizes, &gi, &err);
    CHECK_MSG(st == FK_OK, "%s: %s", what, err.msg);
    if (st) goto out;
    CHECK_MSG(memcmp(ref, got, n * 4) == 0, "%s (n %llu, minsize %llu): the GPU's group ids differ", what,
              (unsigned long long)n, (unsigned long long)minsize);
    CHECK_MSG(gi.n == ri.n && gi.nsource == ri.nsource && gi.minsize == ri.minsize && gi.nfound == ri.nfound &&
                  gi.ngroups == ri.ngroups && gi.ngrouped == ri.ngrouped && gi.largest == ri.largest,
              "%s (n %llu, minsize %llu): GPU counts found %llu kept %llu grouped %llu largest %llu, CPU %llu %llu "
              "%llu %llu",
              what, (unsigned long long)n, (unsigned long long)minsize, (unsigned long long)gi.nfound,
              (unsigned long long)gi.ngroups, (unsigned long long)gi.ngrouped, (unsigned long long)gi.largest,
              (unsigned long long)ri.nfound, (unsigned long long)ri.ngroups, (unsigned long long)ri.ngrouped,
              (unsigned long long)ri.largest);
    { /* the sizes: the CPU's ids counted */
        uint64_t *count = calloc(ri.ngroups + 1, sizeof *count);
        for (uint64_t i = 0; i < n; i++) count[ref[i]]++;
        CHECK_MSG(sizes && memcmp(count, sizes, (ri.ngroups + 1) * sizeof *count) == 0,
                  "%s (n %llu, minsize %llu): the GPU's sizes differ", what, (unsigned long long)n,
                  (unsigned long long)minsize);
        free(count);
    }
    /* the counts alone: no ids, no sizes */
    CHECK_MSG(fk_gpu_groups_number(root, perm, n, minsize, NULL, NULL, &ci, &err) == FK_OK, "%s", err.msg);
    CHECK(ci.nfound == ri.nfound && ci.ngroups == ri.ngroups && ci.ngrouped == ri.ngrouped && ci.largest == ri.largest);
out:
    free(sizes);
    free(ids), free(ref), free(got);
}

/* Every generator at size n, with minsize 1, 2 and 20. */
static void sweep(uint64_t n)
{
    uint32_t *root = malloc((n ? n : 1) * 4), *perm = malloc((n ? n : 1) * 4);
    static const uint64_t minsizes[] = {1, 2, 20};
    char what[96];
    for (int m = 0; m < 3; m++) {
        const uint64_t ms = minsizes[m];
        for (int pk = 0; pk < 3; pk++) {
            make_perm(perm, n, pk);
            for (uint64_t t = 0; t < n; t++) root[t] = (uint32_t)t;
            snprintf(what, sizeof what, "singletons, perm %d", pk);
            compare(what, root, perm, n, ms);
            for (uint64_t t = 0; t < n; t++) root[t] = 0;
            snprintf(what, sizeof what, "one group, perm %d", pk);
            compare(what, root, perm, n, ms);
            if (n) {
                const uint32_t r = (uint32_t)below(n);
                for (uint64_t t = 0; t < n; t++) root[t] = r;
                snprintf(what, sizeof what, "one group sunk at %u, perm %d", r, pk);
                compare(what, root, perm, n, ms);
            }
            make_ties(root, n, 20);
            snprintf(what, sizeof what, "ties of 20, perm %d", pk);
            compare(what, root, perm, n, ms);
            make_ties(root, n, 3);
            snprintf(what, sizeof what, "ties of 3, perm %d", pk);
            compare(what, root, perm, n, ms);
            make_runs(root, n, 200, 0);
            snprintf(what, sizeof what, "runs, perm %d", pk);
            compare(what, root, perm, n, ms);
            make_runs(root, n, 5000, 1);
            snprintf(what, sizeof what, "runs sunk anywhere, perm %d", pk);
            compare(what, root, perm, n, ms);
            make_scattered(root, n, n / 30 + 1);
            snprintf(what, sizeof what, "scattered, perm %d", pk);
            compare(what, root, perm, n, ms);
        }
    }
    free(root), free(perm);
}

/* The sinks and order of the GPU's own build and link on a clustered set. */
static void from_linker(uint64_t n)
{
    fk_error err = {0};
    float *pos = malloc(12 * n);
    td_clustered(pos, n, 300);
    uint32_t *sink = malloc(4 * n), *perm = malloc(4 * n);
    fk_linkopts o;
    memset(&o, 0, sizeof o);
    o.l = 0.2 / cbrt((double)n), o.periodic = 1, o.box = 1.0;
    int st = fk_gpu_build_link(pos, NULL, n, 32, -0.5, 1.0, &o, sink, perm, NULL, NULL, &err);
    CHECK_MSG(st == FK_OK, "%s", err.msg);
    if (!st) {
        compare("the GPU linker's sinks", sink, perm, n, 1);
        compare("the GPU linker's sinks", sink, perm, n, 8);
        compare("the GPU linker's sinks", sink, perm, n, 20);
    }
    free(pos), free(sink), free(perm);
}

static void test_refused(void)
{
    fk_error err = {0};
    uint32_t root[2] = {0, 0}, perm[2] = {1, 0}, gid[2];
    fk_groups info;
    uint64_t *sizes = (uint64_t *)1;
    CHECK(fk_gpu_groups_number(root, perm, 2, 0, gid, &sizes, &info, &err) == FK_EINVAL);
    CHECK(sizes == NULL);
}

int main(void)
{
    int status;
    if (!need_gpu(__FILE__, &status)) return status;
    static const uint64_t sizes[] = {0, 1, 2, 31, 32, 33, 1000, 70000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) sweep(sizes[i]);
    test_refused();
    /* several blocks of every kernel, and a sort of many keys */
    {
        const uint64_t n = 3000000;
        uint32_t *root = malloc(4 * n), *perm = malloc(4 * n);
        make_perm(perm, n, 0);
        make_runs(root, n, 400, 1);
        compare("3M runs", root, perm, n, 1);
        compare("3M runs", root, perm, n, 20);
        for (uint64_t t = 0; t < n; t++) root[t] = (uint32_t)t;
        compare("3M singletons", root, perm, n, 1);
        free(root), free(perm);
    }
    from_linker(400000);
    CHECK_DONE();
}
