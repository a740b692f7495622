/* test_gpu.c - the GPU builder and linkers against the CPU ones: identical sinks, same partitions (skips without a GPU). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "needgpu.h"
#include "gpu.h"
#include "kdtree.h"
#include "link.h"
#include "testdata.h"

static fk_linkopts opts(double l, int periodic)
{
    fk_linkopts o;
    memset(&o, 0, sizeof o);
    o.l = l;
    o.periodic = periodic;
    o.box = 1.0;
    return o;
}

/* All paths on one configuration: CPU and GPU linkers on the CPU tree give
 * byte-identical sinks; the GPU-built tree is valid and gives the same
 * partition; the brute-force linkers agree with each other and with it. */
static void compare(const char *what, const float *pos0, uint64_t n, double l, int periodic, uint32_t S)
{
    fk_error err = {0};
    fk_linkopts o = opts(l, periodic);
    uint32_t *ref = calloc(n + 1, 4), *gref = calloc(n + 1, 4), *cs = calloc(n + 1, 4), *gs = calloc(n + 1, 4),
             *mapped = calloc(n + 1, 4);
    float *pos = malloc(n * 12 + 12), *gpos = malloc(n * 12 + 12);
    memcpy(pos, pos0, n * 12);
    memcpy(gpos, pos0, n * 12);

    CHECK(fk_link_brute_cpu(n, pos0, NULL, &o, ref, NULL, &err) == FK_OK);
    CHECK_MSG(fk_gpu_link_brute(n, pos0, NULL, &o, gref, NULL, NULL, &err) == FK_OK, "%s", err.msg);
    CHECK_MSG(memcmp(ref, gref, n * 4) == 0, "%s: GPU brute force differs from CPU brute force", what);

    fk_tree t, gt;
    uint32_t *perm, *gperm;
    CHECK(fk_tree_build_cpu(pos, n, S, &t, &perm, &err) == FK_OK);
    CHECK(fk_link_cpu(&t, pos, NULL, &o, cs, NULL, &err) == FK_OK);
    CHECK_MSG(fk_gpu_link(&t, pos, NULL, &o, gs, NULL, NULL, &err) == FK_OK, "%s", err.msg);
    CHECK_MSG(memcmp(cs, gs, n * 4) == 0, "%s (n %llu, l %g, periodic %d, leaf %u): GPU sinks differ from CPU", what,
              (unsigned long long)n, l, periodic, S);

    CHECK_MSG(fk_gpu_build(gpos, n, S, -0.5, periodic ? 1.0 : 0.0, &gt, &gperm, NULL, &err) == FK_OK, "%s", err.msg);
    fk_error e2 = {0};
    CHECK_MSG(fk_tree_check(&gt, gpos, what, &e2) == FK_OK, "%s", e2.msg);
    CHECK_MSG(fk_gpu_link(&gt, gpos, NULL, &o, gs, NULL, NULL, &err) == FK_OK, "%s", err.msg);
    CHECK(fk_link_cpu(&gt, gpos, NULL, &o, cs, NULL, &err) == FK_OK);
    CHECK_MSG(memcmp(cs, gs, n * 4) == 0, "%s: on the GPU-built tree, GPU sinks differ from CPU", what);
    for (uint64_t i = 0; i < n; i++) mapped[gperm[i]] = gperm[gs[i]];
    CHECK_MSG(td_same_partition(ref, mapped, n), "%s (n %llu, leaf %u): GPU-built tree gives another partition", what,
              (unsigned long long)n, S);
    /* build and link with the data resident */
    CHECK_MSG(fk_gpu_build_link(pos0, NULL, n, S, -0.5, periodic ? 1.0 : 0.0, &o, gs, gperm, NULL, NULL, &err) ==
                  FK_OK, "%s", err.msg);
    for (uint64_t i = 0; i < n; i++) mapped[gperm[i]] = gperm[gs[i]];
    CHECK_MSG(td_same_partition(ref, mapped, n), "%s (n %llu, leaf %u): fused GPU build+link gives another partition",
              what, (unsigned long long)n, S);
    int isperm = 1;
    memset(mapped, 0, n * 4);
    for (uint64_t i = 0; i < n; i++) isperm &= gperm[i] < n && mapped[gperm[i]]++ == 0;
    CHECK_MSG(isperm, "%s: GPU permutation is not a permutation", what);

    fk_tree_free(&t);
    fk_tree_free(&gt);
    free(perm);
    free(gperm);
    free(ref);
    free(gref);
    free(cs);
    free(gs);
    free(mapped);
    free(pos);
    free(gpos);
}

static void all_ways(const char *what, const float *pos, uint64_t n, double l)
{
    static const uint32_t leaves[] = {2, 7, 32, 33, 100};
    for (int p = 0; p <= 1; p++)
        for (int k = 0; k < 5; k++) compare(what, pos, n, l, p, leaves[k]);
}

int main(void)
{
    fk_error err = {0};
    int skip;
    if (!need_gpu(__FILE__, &skip)) return skip;

    const uint64_t N = 4096;
    float *pos = malloc(200000 * 12);
    td_uniform(pos, N);
    for (double b = 0.1; b < 1.3; b += 0.3) all_ways("uniform", pos, N, b / cbrt((double)N));
    td_clustered(pos, N, 400);
    all_ways("clustered", pos, N, 0.2 / cbrt((double)N));
    all_ways("clustered-long", pos, N, 0.01);
    td_duplicates(pos, N);
    all_ways("duplicates", pos, N, 0.01);
    td_ball(pos, N);
    all_ways("one-group", pos, N, 0.01);
    uint64_t nl = td_lattice(pos, 16);
    all_ways("lattice-exact", pos, nl, 1.0 / 16);
    all_ways("lattice-above", pos, nl, nextafterf(1.0f / 16, 1.0f));
    all_ways("lattice-below", pos, nl, nextafterf(1.0f / 16, 0.0f));
    for (uint64_t n = 0; n <= 2; n++) all_ways("tiny", pos, n, 0.01);

    /* a larger clustered set with big cliques, twice: races would show as differences (at
     * leaf 32 such a set has hundreds of topmost cliques of several leaves: link.cu's clique walks) */
    td_clustered(pos, 200000, 40000);
    fk_linkopts o = opts(0.2 / cbrt(200000.0), 1);
    fk_tree t;
    uint32_t *perm, *a = malloc(200000 * 4), *b = malloc(200000 * 4), *c = malloc(200000 * 4);
    CHECK(fk_tree_build_cpu(pos, 200000, 32, &t, &perm, &err) == FK_OK);
    CHECK(fk_link_cpu(&t, pos, NULL, &o, a, NULL, &err) == FK_OK);
    for (int rep = 0; rep < 3; rep++) {
        CHECK_MSG(fk_gpu_link(&t, pos, NULL, &o, b, NULL, NULL, &err) == FK_OK, "%s", err.msg);
        CHECK_MSG(memcmp(a, b, 200000 * 4) == 0, "200k clustered, run %d: GPU differs from CPU", rep);
    }
    /* a list too small for the walks' pairs (FOFKIT_GPU_LIST_CAP): the walks go in
     * batches of leaves, an overflowing batch again in pieces: the same sinks */
    const char *caps[] = {"20000", "3000", "1000"};
    for (int k = 0; k < 3; k++) {
        fk_gputimes gl;
        setenv("FOFKIT_GPU_LIST_CAP", caps[k], 1);
        CHECK_MSG(fk_gpu_link(&t, pos, NULL, &o, b, NULL, &gl, &err) == FK_OK, "list of %s: %s", caps[k], err.msg);
        CHECK_MSG(memcmp(a, b, 200000 * 4) == 0, "200k clustered, a list of %s pairs: GPU differs from CPU", caps[k]);
        CHECK_MSG(gl.leaf_pairs > strtoull(caps[k], NULL, 10), "a list of %s pairs: only %llu listed (one batch)", caps[k],
                  (unsigned long long)gl.leaf_pairs);
    }
    /* one leaf with more pairs than the list holds (the most a leaf lists here is 485): refused, with the counts */
    {
        fk_error e = {0};
        setenv("FOFKIT_GPU_LIST_CAP", "1", 1);
        CHECK(fk_gpu_link(&t, pos, NULL, &o, b, NULL, NULL, &e) == FK_EUNSUP);
        CHECK_MSG(strstr(e.msg, "one leaf lists") && strstr(e.msg, "more than the 1 the list holds"), "%s", e.msg);
        unsetenv("FOFKIT_GPU_LIST_CAP");
    }
    /* leaves of more than 32 particles go by pieces of 32: the same sinks */
    fk_tree big;
    uint32_t *bperm;
    CHECK(fk_tree_build_cpu(pos, 200000, 80, &big, &bperm, &err) == FK_OK);
    CHECK(fk_link_cpu(&big, pos, NULL, &o, a, NULL, &err) == FK_OK);
    CHECK_MSG(fk_gpu_link(&big, pos, NULL, &o, c, NULL, NULL, &err) == FK_OK, "%s", err.msg);
    CHECK_MSG(memcmp(a, c, 200000 * 4) == 0, "200k clustered, leaf 80: GPU differs from CPU");
    fk_tree_free(&big);
    free(bperm);
    /* more leaf pairs than the list's first guess (6D with a long l on leaves
     * of 2: the boxes prove few pairs linked): batches, the same sinks */
    {
        const uint64_t m = 4096;
        float *p6 = malloc(m * 12), *v6 = malloc(m * 12);
        td_uniform(p6, m);
        td_uniform(v6, m);
        fk_linkopts o6 = opts(0.25, 1);
        o6.psi = 0.3;
        fk_tree t6;
        uint32_t *perm6;
        fk_gputimes gt6;
        CHECK(fk_tree_build_cpu(p6, m, 2, &t6, &perm6, &err) == FK_OK);
        float *sv = malloc(m * 12);
        for (uint64_t i = 0; i < m; i++) memcpy(sv + 3 * i, v6 + 3 * perm6[i], 12);
        CHECK(fk_link_cpu(&t6, p6, sv, &o6, a, NULL, &err) == FK_OK);
        CHECK_MSG(fk_gpu_link(&t6, p6, sv, &o6, b, NULL, &gt6, &err) == FK_OK, "%s", err.msg);
        CHECK_MSG(memcmp(a, b, m * 4) == 0, "6D, l 0.25, leaf 2: GPU differs from CPU");
        CHECK_MSG(gt6.leaf_pairs > 48 * ((t6.nnodes + 1) / 2), "6D, l 0.25, leaf 2: only %llu leaf pairs listed",
                  (unsigned long long)gt6.leaf_pairs);
        fk_tree_free(&t6);
        free(perm6);
        free(p6);
        free(v6);
        free(sv);
    }
    /* a GPU too small (FOFKIT_GPU_MEMORY): refused before allocating, naming
     * the largest count that fits, and that count links within the limit */
    {
        const uint64_t need = fk_gpu_link_bytes(200000, t.nnodes, 0);
        char lim[32];
        snprintf(lim, sizeof lim, "%llu", (unsigned long long)(need - 1));
        setenv("FOFKIT_GPU_MEMORY", lim, 1);
        fk_error e = {0};
        CHECK(fk_gpu_link(&t, pos, NULL, &o, b, NULL, NULL, &e) == FK_EDEVICE);
        const char *at = strstr(e.msg, "at most ");
        unsigned long long fit = 0;
        CHECK_MSG(at && sscanf(at, "at most %llu particles fit", &fit) == 1 && fit > 0 && fit < 200000, "%s", e.msg);
        fk_tree small;
        uint32_t *sperm;
        float *spos = malloc(fit * 12 + 12);
        memcpy(spos, pos, fit * 12);
        CHECK(fk_tree_build_cpu(spos, fit, 32, &small, &sperm, &err) == FK_OK);
        CHECK_MSG(fk_gpu_link(&small, spos, NULL, &o, b, NULL, NULL, &e) == FK_OK, "%llu particles: %s", fit, e.msg);
        unsetenv("FOFKIT_GPU_MEMORY");
        fk_tree_free(&small);
        free(sperm);
        free(spos);
    }
    fk_tree_free(&t);
    free(perm);
    free(a);
    free(b);
    free(c);
    free(pos);
    CHECK_DONE();
}
