/* test_levels.c - hierarchical FoF: every level equals a separate linking (and brute force), levels nest, labels, level checks, GPAR. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu.h"
#include "groups.h"
#include "kdtree.h"
#include "levels.h"
#include "link.h"
#include "testdata.h"

static int have_gpu;

/* nlev levels at l0 * f^k (psi0 * g^k, or 3D when psi0 is 0). */
static void series(fk_linkopts *o, int nlev, double l0, double f, double psi0, double g, int periodic, int threads)
{
    for (int k = 0; k < nlev; k++) {
        memset(&o[k], 0, sizeof o[k]);
        o[k].l = l0 * pow(f, k);
        o[k].psi = psi0 * pow(g, k);
        o[k].periodic = periodic;
        o[k].box = 1;
        o[k].nthreads = threads;
    }
}

/* Level k's groups lie inside level j's (j < k): the sink at level j of
 * each particle's level-k sink is the particle's own level-j sink. */
static int nests(const uint32_t *sj, const uint32_t *sk, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (sj[sk[i]] != sj[i]) return 0;
    return 1;
}

/* Links the levels o[0..nlev-1] of pos0/vel0 (original order) on a tree of
 * leaf size S: each level's sinks equal a separate fk_link_cpu's byte for
 * byte (and the GPU's when there is one), the partition of brute force's
 * sinks ref[k] when ref is not NULL, and every level nests in every level
 * before it. */
static void check_levels(const char *what, const float *pos0, const float *vel0, uint64_t n, const fk_linkopts *o,
                         int nlev, uint32_t S, uint32_t *const *ref)
{
    fk_error err = {0};
    float *pos = malloc(n * 12 + 12), *vel = malloc(n * 12 + 12);
    memcpy(pos, pos0, n * 12);
    fk_tree t;
    uint32_t *perm;
    CHECK_MSG(fk_tree_build_cpu(pos, n, S, &t, &perm, &err) == FK_OK, "%s", err.msg);
    for (uint64_t i = 0; i < n; i++) memcpy(vel + 3 * i, vel0 + 3 * perm[i], 12);
    const float *v = o[0].psi > 0 ? vel : NULL;
    uint32_t *sinks[FK_LEVELS_MAX], *one = malloc(n * 4 + 4), *mapped = malloc(n * 4 + 4);
    for (int k = 0; k < nlev; k++) sinks[k] = malloc(n * 4 + 4);
    fk_linkstats st[FK_LEVELS_MAX], st1;
    CHECK_MSG(fk_levels_link_cpu(&t, pos, v, o, nlev, sinks, st, NULL, &err) == FK_OK, "%s: %s", what, err.msg);
    for (int k = 0; k < nlev; k++) {
        CHECK(fk_link_cpu(&t, pos, v, &o[k], one, &st1, &err) == FK_OK);
        CHECK_MSG(memcmp(one, sinks[k], n * 4) == 0, "%s (leaf %u, periodic %d): level %d differs from a separate run",
                  what, S, o[0].periodic, k);
        CHECK_MSG(st[k].groups == st1.groups, "%s: level %d: %llu groups, a separate run %llu", what, k,
                  (unsigned long long)st[k].groups, (unsigned long long)st1.groups);
        /* on one thread the unions come in the same order with and without
         * labels (no link joins two labels), so the labelled walk does a
         * subset of the tests; on two the shortcuts depend on timing */
        if (k > 0 && o[k].nthreads == 1)
            CHECK_MSG(st[k].pair_tests <= st1.pair_tests, "%s: level %d: %llu pair tests, a separate run only %llu",
                      what, k, (unsigned long long)st[k].pair_tests, (unsigned long long)st1.pair_tests);
        if (have_gpu && S <= 32) {
            CHECK_MSG(fk_gpu_link(&t, pos, v, &o[k], one, NULL, NULL, &err) == FK_OK, "%s", err.msg);
            CHECK_MSG(memcmp(one, sinks[k], n * 4) == 0, "%s (leaf %u): level %d: GPU differs", what, S, k);
        }
        if (ref) {
            for (uint64_t i = 0; i < n; i++) mapped[perm[i]] = perm[sinks[k][i]];
            CHECK_MSG(td_same_partition(ref[k], mapped, n), "%s (leaf %u): level %d differs from brute force", what, S,
                      k);
        }
        for (int j = 0; j < k; j++)
            CHECK_MSG(nests(sinks[j], sinks[k], n), "%s (leaf %u): level %d does not nest in level %d", what, S, k, j);
    }
    if (have_gpu) { /* every level at once, the particles resident */
        uint32_t *gs[FK_LEVELS_MAX];
        for (int k = 0; k < nlev; k++) gs[k] = malloc(n * 4 + 4);
        CHECK_MSG(fk_gpu_link_levels(&t, pos, v, o, nlev, gs, NULL, NULL, &err) == FK_OK, "%s", err.msg);
        for (int k = 0; k < nlev; k++) {
            CHECK_MSG(memcmp(gs[k], sinks[k], n * 4) == 0, "%s (leaf %u): level %d: resident GPU levels differ", what,
                      S, k);
            free(gs[k]);
        }
    }
    for (int k = 0; k < nlev; k++) free(sinks[k]);
    fk_tree_free(&t);
    free(perm);
    free(pos);
    free(vel);
    free(one);
    free(mapped);
}

static void all_ways(const char *what, const float *pos, const float *vel, uint64_t n, double l0, double f,
                     double psi0, double g, int nlev, int brute)
{
    static const uint32_t leaves[] = {2, 8, 33};
    uint32_t *ref[FK_LEVELS_MAX];
    for (int k = 0; k < nlev; k++) ref[k] = malloc(n * 4 + 4);
    for (int p = 0; p <= 1; p++) {
        fk_linkopts o[FK_LEVELS_MAX];
        series(o, nlev, l0, f, psi0, g, p, 1);
        fk_error err = {0};
        for (int k = 0; k < nlev && brute; k++)
            CHECK(fk_link_brute_cpu(n, pos, vel, &o[k], ref[k], NULL, &err) == FK_OK);
        for (int s = 0; s < 3; s++) {
            series(o, nlev, l0, f, psi0, g, p, s == 1 ? 2 : 1);
            check_levels(what, pos, vel, n, o, nlev, leaves[s], brute ? ref : NULL);
        }
    }
    for (int k = 0; k < nlev; k++) free(ref[k]);
}

/* Group ids (original order) of each level at minimum size m, then GPAR:
 * every kept group's parent is kept, and a particle's parent group is its
 * group one level up. */
static void check_parents(const char *what, const float *pos0, uint64_t n, const fk_linkopts *o, int nlev)
{
    fk_error err = {0};
    float *pos = malloc(n * 12 + 12);
    memcpy(pos, pos0, n * 12);
    fk_tree t;
    uint32_t *perm;
    CHECK(fk_tree_build_cpu(pos, n, 8, &t, &perm, &err) == FK_OK);
    uint64_t *ids = malloc(n * 8 + 8);
    for (uint64_t i = 0; i < n; i++) ids[i] = perm[i];
    uint32_t *sinks[FK_LEVELS_MAX], *gid[FK_LEVELS_MAX];
    for (int k = 0; k < nlev; k++) {
        sinks[k] = malloc(n * 4 + 4);
        gid[k] = malloc(n * 4 + 4);
    }
    CHECK(fk_levels_link_cpu(&t, pos, NULL, o, nlev, sinks, NULL, NULL, &err) == FK_OK);
    static const uint64_t sizes[] = {1, 2, 8, 20};
    for (int m = 0; m < 4; m++) {
        fk_groups info[FK_LEVELS_MAX];
        for (int k = 0; k < nlev; k++)
            CHECK(fk_groups_number(sinks[k], ids, n, n, sizes[m], gid[k], &info[k], &err) == FK_OK);
        for (int k = 1; k < nlev; k++) {
            uint32_t *par = malloc((info[k].ngroups + 1) * 4);
            int st = fk_groups_parents(gid[k - 1], gid[k], n, info[k].ngroups, par, (uint32_t)k, what, &err);
            CHECK_MSG(st == FK_OK, "%s, -m %llu, level %d: %s", what, (unsigned long long)sizes[m], k, err.msg);
            if (st) continue;
            int ok = par[0] == 0;
            for (uint64_t g = 1; g <= info[k].ngroups; g++) ok &= par[g] >= 1 && par[g] <= info[k - 1].ngroups;
            for (uint64_t r = 0; r < n; r++) ok &= gid[k][r] == 0 || par[gid[k][r]] == gid[k - 1][r];
            CHECK_MSG(ok, "%s, -m %llu: level %d: GPAR is not the groups' parents", what, (unsigned long long)sizes[m], k);
            free(par);
        }
    }
    for (int k = 0; k < nlev; k++) {
        free(sinks[k]);
        free(gid[k]);
    }
    fk_tree_free(&t);
    free(perm);
    free(pos);
    free(ids);
}

int main(void)
{
    fk_gpuinfo gi;
    fk_error err = {0};
    have_gpu = fk_gpu_probe(&gi, &err) == FK_OK && gi.present;
    if (have_gpu) printf("%s: levels on the GPU too, %s\n", __FILE__, gi.name);

    const uint64_t N = 2048; /* brute force is O(N^2) */
    float *pos = malloc(4096 * 12), *vel = malloc(4096 * 12);
    const double sp = 1 / cbrt((double)N);

    /* random and clustered, 3D and 6D, halving and nearly equal lengths */
    td_uniform(pos, N);
    td_thermal(vel, N, 1.0);
    all_ways("uniform-3d", pos, vel, N, 0.8 * sp, 0.5, 0, 1, 3, 1);
    all_ways("uniform-6d", pos, vel, N, 0.8 * sp, 0.5, 2.0, 0.7, 3, 1);
    td_clustered(pos, N, 400);
    td_streams(vel, N, 0.1);
    all_ways("clustered-3d", pos, vel, N, 0.2 * sp, 0.5, 0, 1, 3, 1);
    all_ways("clustered-3d-8", pos, vel, N, 0.01, 0.8, 0, 1, 8, 0);
    all_ways("clustered-3d-close", pos, vel, N, 0.2 * sp, 0.99, 0, 1, 4, 0);
    all_ways("clustered-6d", pos, vel, N, 0.01, 0.6, 1.0, 1, 3, 1);
    all_ways("clustered-6d-psi", pos, vel, N, 0.01, 0.7, 1.0, 0.5, 4, 0);
    td_duplicates(pos, N);
    all_ways("duplicates", pos, vel, N, 0.02, 0.5, 0, 1, 3, 0);
    /* one ball of diameter 0.001: a clique at level 0, pieces further down */
    td_ball(pos, N);
    all_ways("ball", pos, vel, N, 0.002, 0.3, 0, 1, 3, 1);
    for (uint64_t n = 0; n <= 2; n++) all_ways("tiny", pos, vel, n, 0.01, 0.5, 0, 1, 2, 1);
    /* a lattice at exactly level 1's length: level 0 one group, level 1 none */
    {
        uint64_t nl = td_lattice(pos, 16);
        all_ways("lattice", pos, vel, nl, 1.5 / 16, 1 / 1.5, 0, 1, 2, 0);
    }

    /* bigger, with the nesting checked by the labels' promise: within
     * links only inside level 0's groups and skips the rest */
    {
        const uint64_t M = 100000;
        float *p = malloc(M * 12);
        td_clustered(p, M, 5000);
        fk_tree t;
        uint32_t *perm;
        CHECK(fk_tree_build_cpu(p, M, 16, &t, &perm, &err) == FK_OK);
        fk_linkopts o[2];
        series(o, 2, 0.2 / cbrt((double)M), 0.5, 0, 1, 1, 1); /* one thread: the counts are deterministic */
        uint32_t *s0 = malloc(M * 4), *s1 = malloc(M * 4), *w = malloc(M * 4), *lab = malloc(M * 4);
        fk_linkstats a, b;
        CHECK(fk_link_cpu(&t, p, NULL, &o[0], s0, NULL, &err) == FK_OK);
        CHECK(fk_link_cpu(&t, p, NULL, &o[1], s1, &a, &err) == FK_OK);
        fk_link_labels(s0, M, lab);
        CHECK(fk_link_cpu_within(&t, p, NULL, &o[1], lab, w, &b, &err) == FK_OK);
        CHECK_MSG(memcmp(s1, w, M * 4) == 0, "100k clustered: within differs from a full linking");
        CHECK_MSG(b.pair_tests < a.pair_tests && b.node_tests < a.node_tests,
                  "100k clustered: within did not skip work (%llu vs %llu pair tests, %llu vs %llu box tests)",
                  (unsigned long long)b.pair_tests, (unsigned long long)a.pair_tests,
                  (unsigned long long)b.node_tests, (unsigned long long)a.node_tests);
        /* labels saying "no friends anywhere" are obeyed: no leaf is walked
         * (only the cliques, found from their own boxes, are groups) */
        for (uint64_t i = 0; i < M; i++) lab[i] = FK_NOLABEL;
        CHECK(fk_link_cpu_within(&t, p, NULL, &o[1], lab, w, &b, &err) == FK_OK);
        CHECK_MSG(b.pair_tests == 0 && b.node_tests == 0, "all FK_NOLABEL: %llu pair tests, %llu box tests",
                  (unsigned long long)b.pair_tests, (unsigned long long)b.node_tests);
        fk_tree_free(&t);
        free(perm);
        free(p);
        free(s0);
        free(s1);
        free(w);
        free(lab);
    }

    /* labels from sinks: groups of one get none */
    {
        const uint32_t sink[8] = {0, 1, 1, 3, 0, 5, 3, 7};
        const uint32_t want[8] = {0, 1, 1, 3, 0, FK_NOLABEL, 3, FK_NOLABEL};
        uint32_t lab[8];
        fk_link_labels(sink, 8, lab);
        CHECK(memcmp(lab, want, sizeof lab) == 0);
    }

    /* GPAR of real levels, at several minimum sizes */
    td_clustered(pos, N, 400);
    {
        fk_linkopts o[3];
        series(o, 3, 0.01, 0.5, 0, 1, 1, 1);
        check_parents("clustered", pos, N, o, 3);
        td_uniform(pos, N);
        series(o, 3, 1.0 * sp, 0.7, 0, 1, 0, 1);
        check_parents("uniform", pos, N, o, 3);
    }

    /* GPAR by hand: parents found; levels that do not nest are refused */
    {
        const uint32_t up[10] = {1, 1, 1, 2, 2, 0, 3, 3, 1, 2}, lo[10] = {2, 2, 0, 1, 1, 0, 0, 0, 3, 1};
        uint32_t par[5];
        CHECK(fk_groups_parents(up, lo, 10, 3, par, 1, "s", &err) == FK_OK);
        CHECK(par[0] == 0 && par[1] == 2 && par[2] == 1 && par[3] == 1);
        const uint32_t split[10] = {2, 2, 0, 1, 1, 0, 0, 0, 3, 2}; /* group 2 in parents 1 and 2 */
        CHECK(fk_groups_parents(up, split, 10, 3, par, 1, "s", &err) == FK_EFORMAT &&
              strstr(err.msg, "s: group 2 of level 1 has particles 0 and 9 in groups 1 and 2 of level 0"));
        fk_error_clear(&err);
        const uint32_t orphan[10] = {2, 2, 0, 1, 1, 1, 0, 0, 3, 1}; /* particle 5: no group at level 0 */
        CHECK(fk_groups_parents(up, orphan, 10, 3, par, 2, "s", &err) == FK_EFORMAT &&
              strstr(err.msg, "group 1 of level 2 has particle 5, which is in no kept group of level 1"));
        fk_error_clear(&err);
        CHECK(fk_groups_parents(up, lo, 10, 4, par, 1, "s", &err) == FK_EFORMAT && strstr(err.msg, "group 4"));
        fk_error_clear(&err);
    }

    /* what a hierarchy must be */
    {
        fk_linkopts o[FK_LEVELS_MAX + 1];
        series(o, 3, 0.01, 0.5, 0, 1, 1, 0);
        CHECK(fk_levels_check(o, 3, &err) == FK_OK);
        CHECK(fk_levels_check(o, 0, &err) == FK_EINVAL);
        fk_error_clear(&err);
        series(o, FK_LEVELS_MAX + 1, 0.01, 0.9, 0, 1, 1, 0);
        CHECK(fk_levels_check(o, FK_LEVELS_MAX, &err) == FK_OK);
        CHECK(fk_levels_check(o, FK_LEVELS_MAX + 1, &err) == FK_EINVAL && strstr(err.msg, "1 to 8"));
        fk_error_clear(&err);
        series(o, 3, 0.01, 0.5, 0, 1, 1, 0);
        o[2].l = o[1].l;
        CHECK(fk_levels_check(o, 3, &err) == FK_EINVAL && strstr(err.msg, "level 2: linking length"));
        fk_error_clear(&err);
        series(o, 3, 0.01, 0.5, 1.0, 1.5, 1, 0); /* psi grows */
        CHECK(fk_levels_check(o, 3, &err) == FK_EINVAL && strstr(err.msg, "would not nest"));
        fk_error_clear(&err);
        series(o, 3, 0.01, 0.5, 1.0, 1, 1, 0);
        CHECK(fk_levels_check(o, 3, &err) == FK_OK);
        o[1].psi = 0; /* 3D among 6D */
        CHECK_MSG(fk_levels_check(o, 3, &err) == FK_EINVAL && strstr(err.msg, "must all be 3D or all 6D"), "%s", err.msg);
        fk_error_clear(&err);
        series(o, 2, 0.01, 0.5, 0, 1, 1, 0);
        o[1].box = 2;
        CHECK(fk_levels_check(o, 2, &err) == FK_EINVAL && strstr(err.msg, "another box"));
        fk_error_clear(&err);
        series(o, 2, 0.6, 0.5, 0, 1, 1, 0); /* level 0 longer than half the box */
        CHECK(fk_levels_check(o, 2, &err) == FK_EINVAL && strstr(err.msg, "half the box"));
        fk_error_clear(&err);
    }
    free(pos);
    free(vel);
    CHECK_DONE();
}
