/* test_threads.c - the parallel per-particle passes (chains, numbering, .grp text) give the same bytes for 1, 2 and 7 threads. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "groups.h"
#include "grpfile.h"

static const int threads[] = {1, 2, 7};
enum { NT = 3 };

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t urand(uint64_t below)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng % below;
}

/* Deep random forests: each particle links to a lower one of its group (or
 * is the group's sink), so chains are long and every group's members are
 * scattered; ids a random permutation of a larger source. */
static void forest(uint32_t *sink, uint64_t *ids, uint64_t n, uint64_t nsource)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t g = urand(n / 50 + 1); /* group of i: sizes from 1 to a few hundred */
        sink[i] = (uint32_t)(g < i && urand(4) ? urand(i) / (i / (g + 1) + 1) * (i / (g + 1) + 1) % i : i);
    }
    uint64_t *perm = malloc(nsource * sizeof *perm);
    for (uint64_t r = 0; r < nsource; r++) perm[r] = r;
    for (uint64_t r = nsource - 1; r > 0; r--) {
        uint64_t j = urand(r + 1), t = perm[r];
        perm[r] = perm[j];
        perm[j] = t;
    }
    memcpy(ids, perm, n * sizeof *ids);
    free(perm);
}

/* Resolves, numbers and writes the .grp of the same input with each thread
 * count; everything must match the one-thread result byte for byte. */
static void test_same_for_every_thread_count(uint64_t n, uint64_t nsource, uint64_t minsize)
{
    uint32_t *sink0 = malloc(n * sizeof *sink0);
    uint64_t *ids = malloc(n * sizeof *ids);
    forest(sink0, ids, n, nsource);
    uint32_t *root[NT], *gid[NT];
    char *text[NT];
    size_t size[NT];
    fk_groups info[NT];
    for (int k = 0; k < NT; k++) {
        omp_set_num_threads(threads[k]);
        fk_error err = {0};
        root[k] = malloc(n * sizeof *root[k]);
        gid[k] = malloc(nsource * sizeof *gid[k]);
        memcpy(root[k], sink0, n * sizeof *root[k]);
        CHECK_MSG(fk_groups_resolve(root[k], n, "t", &err) == FK_OK, "%s", err.msg);
        CHECK_MSG(fk_groups_number(root[k], ids, n, nsource, minsize, gid[k], &info[k], &err) == FK_OK, "%s", err.msg);
        FILE *f = open_memstream(&text[k], &size[k]);
        CHECK_MSG(fk_grp_write(f, gid[k], nsource, "t", &err) == FK_OK, "%s", err.msg);
        fclose(f);
    }
    /* the one-thread result is right: every resolved value ends its chain */
    int ends = 1;
    for (uint64_t i = 0; i < n; i++) ends &= root[0][i] < n && sink0[root[0][i]] == root[0][i];
    CHECK(ends && info[0].ngroups > 100 && info[0].ngroups < n);
    /* and the .grp text is what printf writes */
    char line[32];
    size_t at = (size_t)snprintf(line, sizeof line, "%llu\n", (unsigned long long)nsource);
    int same_text = size[0] > at && memcmp(text[0], line, at) == 0;
    for (uint64_t r = 0; r < nsource && same_text; r++) {
        size_t l = (size_t)snprintf(line, sizeof line, "%u\n", gid[0][r]);
        same_text = at + l <= size[0] && memcmp(text[0] + at, line, l) == 0;
        at += l;
    }
    CHECK(same_text && at == size[0]);
    for (int k = 1; k < NT; k++) {
        CHECK_MSG(memcmp(root[k], root[0], n * sizeof *root[0]) == 0, "%d threads: resolved sinks differ", threads[k]);
        CHECK_MSG(memcmp(gid[k], gid[0], nsource * sizeof *gid[0]) == 0, "%d threads: GID differs", threads[k]);
        CHECK_MSG(memcmp(&info[k], &info[0], sizeof info[0]) == 0, "%d threads: GRPS differs", threads[k]);
        CHECK_MSG(size[k] == size[0] && memcmp(text[k], text[0], size[0]) == 0, "%d threads: .grp differs",
                  threads[k]);
    }
    for (int k = 0; k < NT; k++) {
        free(root[k]);
        free(gid[k]);
        free(text[k]);
    }
    free(sink0);
    free(ids);
}

/* A cycle is reported naming the same particle for every thread count,
 * even when jumping round an even cycle would make a particle its own sink. */
static void test_cycles_named_alike(void)
{
    enum { N = 100000 };
    uint32_t *s = malloc(N * sizeof *s), *c = malloc(N * sizeof *c);
    for (uint32_t i = 0; i < N; i++) s[i] = i ? i - 1 : 0; /* one long chain */
    s[70000] = 70003; /* 70000 -> 70003 -> 70002 -> 70001 -> 70000: a 4-cycle */
    s[50] = 99999;    /* a lead-in from far away, through the chain into the cycle */
    for (int k = 0; k < NT; k++) {
        omp_set_num_threads(threads[k]);
        memcpy(c, s, N * sizeof *s);
        fk_error err = {0};
        int st = fk_groups_resolve(c, N, "t", &err);
        CHECK_MSG(st == FK_EFORMAT && strstr(err.msg, "particle 70003 lies on a cycle"), "%d threads: %d '%s'",
                  threads[k], st, err.msg);
    }
    free(s);
    free(c);
}

int main(void)
{
    test_same_for_every_thread_count(300000, 400000, 8);
    /* more rows than 7 threads format at a time (7 << 18): several blocks */
    test_same_for_every_thread_count(1100000, 2000000, 2);
    test_cycles_named_alike();
    CHECK_DONE();
}
