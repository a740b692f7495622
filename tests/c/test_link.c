/* test_link.c - the tree linker against the all-pairs reference on hard inputs: same partition, canonical sinks. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kdtree.h"
#include "link.h"
#include "testdata.h"

/* Links pos (original order) with the tree at leaf size S and by brute
 * force; checks they agree and that the tree's sinks are canonical. */
static void compare(const char *what, const float *pos0, uint64_t n, double l, int periodic, uint32_t S, int threads)
{
    fk_error err = {0};
    fk_linkopts o = {0};
    o.l = l;
    o.periodic = periodic;
    o.box = 1.0;
    o.nthreads = threads;
    uint32_t *ref = calloc(n + 1, 4), *sink = calloc(n + 1, 4), *mapped = calloc(n + 1, 4);
    float *pos = malloc(n * 12 + 12);
    memcpy(pos, pos0, n * 12);
    CHECK(fk_link_brute_cpu(n, pos0, NULL, &o, ref, NULL, &err) == FK_OK);
    fk_tree t;
    uint32_t *perm;
    CHECK_MSG(fk_tree_build_cpu(pos, n, S, &t, &perm, &err) == FK_OK, "%s", err.msg);
    CHECK_MSG(fk_tree_check(&t, pos, what, &err) == FK_OK, "%s", err.msg);
    fk_linkstats st;
    CHECK_MSG(fk_link_cpu(&t, pos, NULL, &o, sink, &st, &err) == FK_OK, "%s", err.msg);
    int canon = 1;
    for (uint64_t i = 0; i < n; i++) canon &= sink[i] <= i && sink[sink[i]] == sink[i];
    CHECK_MSG(canon, "%s: sinks not canonical", what);
    for (uint64_t i = 0; i < n; i++) mapped[perm[i]] = perm[sink[i]];
    CHECK_MSG(td_same_partition(ref, mapped, n), "%s (n %llu, l %g, periodic %d, leaf %u): partitions differ", what,
              (unsigned long long)n, l, periodic, S);
    /* the reference's group count equals the linker's */
    uint64_t g = 0;
    for (uint64_t i = 0; i < n; i++) g += ref[i] == i;
    CHECK_MSG(g == st.groups, "%s: %llu groups vs %llu", what, (unsigned long long)g, (unsigned long long)st.groups);
    fk_tree_free(&t);
    free(perm);
    free(ref);
    free(sink);
    free(mapped);
    free(pos);
}

static void all_ways(const char *what, const float *pos, uint64_t n, double l)
{
    static const uint32_t leaves[] = {2, 3, 8, 33};
    for (int p = 0; p <= 1; p++)
        for (int k = 0; k < 4; k++) compare(what, pos, n, l, p, leaves[k], k % 2 + 1);
}

/* fk_tree_next's bit arithmetic against the climb it replaces: up while a
 * right child, then the right sibling; 0 past the root. */
static void check_tree_next(void)
{
    for (uint64_t i = 0; i < (UINT64_C(1) << 20) + 100; i++) {
        uint64_t x = i, want;
        for (;;) {
            if ((x & 1) == 0) {
                if (x == 0) {
                    want = 0;
                    break;
                }
                x = (x - 1) / 2;
                continue;
            }
            want = x + 1;
            break;
        }
        CHECK_MSG(fk_tree_next(i) == want, "fk_tree_next(%llu) = %llu, want %llu", (unsigned long long)i,
                  (unsigned long long)fk_tree_next(i), (unsigned long long)want);
    }
    CHECK(fk_tree_next((UINT64_C(1) << 40) - 2) == 0); /* the last node of a level: nothing after it */
    CHECK(fk_tree_next((UINT64_C(1) << 40) - 1) == (UINT64_C(1) << 40)); /* a level's first: its sibling */
}

/* The layouts of kdtree.h, node by node, for counts at, near and past powers of two: unit 1 is the
 * halves formula; a packed tree's leaves hold S or none (but the one holding the last particle), only
 * leaves are empty, each beside a sibling that is not, and every node is its children's union. */
static void check_layouts(void)
{
    const uint64_t counts[] = {1, 2, 31, 32, 33, 63, 64, 65, 100, 257, 1000, 4096, 4097, 6000, 8191, 12345, 70001};
    const uint32_t sizes[] = {2, 8, 16, 32, 33};
    for (size_t a = 0; a < sizeof counts / sizeof *counts; a++)
        for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++) {
            const uint64_t n = counts[a];
            const uint32_t S = sizes[b], D = fk_tree_depth(n, S);
            const uint64_t first = (UINT64_C(1) << D) - 1, nodes = (UINT64_C(2) << D) - 1;
            const fk_layout h = fk_layout_of(n, 1), p = fk_layout_of(n, S);
            int ok = 1;
            uint64_t partial = 0, filled = 0, at = 0;
            for (uint64_t i = 0; i < nodes; i++) {
                uint64_t s, e, ls, le, rs, re;
                const int d = fk_log2_u64(i + 1);
                const uint64_t k = i + 1 - (UINT64_C(1) << d);
                fk_tree_range(h, i, &s, &e);
                ok &= s == (k * n) >> d && e == ((k + 1) * n) >> d && (i < first || e > s);
                fk_tree_range(p, i, &s, &e);
                if (i < first) {
                    fk_tree_range(p, 2 * i + 1, &ls, &le);
                    fk_tree_range(p, 2 * i + 2, &rs, &re);
                    ok &= e > s && ls == s && le == rs && re == e && (le > ls || re > rs);
                } else {
                    ok &= s == at && e - s <= S; /* leaves in order, covering [0, n) */
                    at = e;
                    partial += e > s && e - s < S;
                    filled += e - s == S;
                    ok &= e - s == S || e - s == 0 || e == n;
                }
            }
            CHECK_MSG(ok && at == n && partial <= 1 && filled == n / S, "n %llu, leaf size %u: layout",
                      (unsigned long long)n, S);
        }
    CHECK(fk_layout_of(0, 32).units == 0 && fk_layout_of((1u << 27) + 8000000, 32).units == 4444304);
    /* the largest trees: fk_tree_range's 32-bit products against 128-bit arithmetic, at every level */
    const uint64_t big[] = {(UINT64_C(1) << 31) + 12345, (UINT64_C(1) << 32) - 1};
    const uint32_t units[] = {1, 2, 32, 33, 1048576};
    int same = 1;
    for (size_t a = 0; a < 2; a++)
        for (size_t b = 0; b < sizeof units / sizeof *units; b++) {
            const uint64_t n = big[a];
            const uint32_t S = units[b] > 1 ? units[b] : 32, D = fk_tree_depth(n, S);
            const fk_layout l = fk_layout_of(n, units[b]);
            for (uint32_t d = 0; d <= D; d++) {
                const uint64_t K = UINT64_C(1) << d, ks[] = {0, 1, K / 3, K - 2, K - 1};
                for (int j = 0; j < 5; j++) {
                    if (ks[j] >= K) continue;
                    uint64_t s, e;
                    fk_tree_range(l, K - 1 + ks[j], &s, &e);
                    unsigned __int128 rs = (unsigned __int128)l.unit * (((unsigned __int128)ks[j] * l.units) >> d),
                                      re = (unsigned __int128)l.unit * (((unsigned __int128)(ks[j] + 1) * l.units) >> d);
                    same &= s == (uint64_t)(rs < n ? rs : n) && e == (uint64_t)(re < n ? re : n);
                }
            }
        }
    CHECK_MSG(same, "fk_tree_range differs from 128-bit arithmetic on the largest trees");
}

/* The CPU build's selection on large inputs of many equal coordinates (its
 * pivots, its split of a pivot's equals): every internal node's children
 * lie on either side of a cut along the node's widest axis, the tree
 * checks, and perm is a permutation. Past TASK_MIN particles, on 2 threads. */
static void check_median_splits(void)
{
    const uint64_t n = 300007;
    float *pos = malloc(n * 12), *orig = malloc(n * 12);
    for (int kind = 0; kind < 4; kind++) {
        for (uint64_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++) {
                float u = (float)((i * 2654435761u + 97u * (uint64_t)k) % 1000003u) / 1000003.0f - 0.5f;
                pos[3 * i + k] = kind == 0   ? 0.25f                              /* one point */
                                 : kind == 1 ? (i % 10 ? 0.125f : u)                /* 90% on one point */
                                 : kind == 2 ? (float)(i % 3) * 0.25f - 0.25f     /* three planes */
                                             : u;                                 /* spread */
            }
        memcpy(orig, pos, n * 12);
        fk_error err = {0};
        fk_tree t;
        uint32_t *perm;
        CHECK_MSG(fk_tree_build_cpu(pos, n, 16, &t, &perm, &err) == FK_OK, "%s", err.msg);
        CHECK_MSG(fk_tree_check(&t, pos, "median", &err) == FK_OK, "kind %d: %s", kind, err.msg);
        int split = 1, permuted = 1;
        const uint64_t inner = (UINT64_C(1) << t.depth) - 1;
        for (uint64_t i = 0; i < inner; i++) {
            const float *b = t.box + 6 * i, *l = t.box + 6 * (2 * i + 1), *r = t.box + 6 * (2 * i + 2);
            int axis = 0;
            for (int k = 1; k < 3; k++)
                if (b[k + 3] - b[k] > b[axis + 3] - b[axis]) axis = k;
            if (l[axis + 3] >= l[axis] && r[axis + 3] >= r[axis]) split &= l[axis + 3] <= r[axis]; /* both not empty */
        }
        char *seen = calloc(n, 1);
        for (uint64_t i = 0; i < n; i++) {
            permuted &= perm[i] < n && !seen[perm[i]];
            if (perm[i] < n) seen[perm[i]] = 1;
            permuted &= perm[i] < n && !memcmp(pos + 3 * i, orig + 3 * (uint64_t)perm[i], 12);
        }
        CHECK_MSG(split, "kind %d: a node's children overlap along its widest axis", kind);
        CHECK_MSG(permuted, "kind %d: perm is not the permutation applied to the positions", kind);
        free(seen);
        free(perm);
        fk_tree_free(&t);
    }
    free(pos);
    free(orig);
}

int main(void)
{
    check_tree_next();
    check_median_splits();
    check_layouts();
    const uint64_t N = 4096;
    float *pos = malloc(N * 12);

    /* uniform, across linking lengths from sparse to percolating */
    td_uniform(pos, N);
    for (double b = 0.1; b < 1.3; b += 0.3) all_ways("uniform", pos, N, b / cbrt((double)N));

    /* clustered: dense blobs (cliques) of many sizes, some straddling the box edge */
    td_clustered(pos, N, 400);
    all_ways("clustered", pos, N, 0.2 / cbrt((double)N));
    all_ways("clustered-long", pos, N, 0.01);
    /* a count past a power of two: packed trees with many empty leaves (2500 at leaf 8: 313 units on
     * 512 leaves), among cliques */
    all_ways("clustered-2500", pos, 2500, 0.2 / cbrt(2500.0));

    td_duplicates(pos, N);
    all_ways("duplicates", pos, N, 0.01);

    td_ball(pos, N);
    all_ways("one-group", pos, N, 0.01);

    /* a lattice with spacing exactly l: no pairs, since the comparison is strict */
    const int side = 16;
    const float sp = 1.0f / side;
    uint64_t nl = td_lattice(pos, side);
    {
        fk_error err = {0};
        fk_linkopts o = {0};
        o.l = sp;
        o.periodic = 1;
        o.box = 1;
        uint32_t *s = malloc(nl * 4);
        CHECK(fk_link_brute_cpu(nl, pos, NULL, &o, s, NULL, &err) == FK_OK);
        uint64_t g = 0;
        for (uint64_t k = 0; k < nl; k++) g += s[k] == k;
        CHECK_MSG(g == nl, "lattice at exactly l: %llu groups", (unsigned long long)g);
        o.l = nextafterf(sp, 1.0f);
        CHECK(fk_link_brute_cpu(nl, pos, NULL, &o, s, NULL, &err) == FK_OK);
        g = 0;
        for (uint64_t k = 0; k < nl; k++) g += s[k] == k;
        CHECK_MSG(g == 1, "lattice just above l, periodic: %llu groups", (unsigned long long)g);
        free(s);
    }
    all_ways("lattice-exact", pos, nl, sp);
    all_ways("lattice-above", pos, nl, nextafterf(sp, 1.0f));
    all_ways("lattice-below", pos, nl, nextafterf(sp, 0.0f));

    /* tiny inputs */
    pos[0] = 0.1f, pos[1] = 0.2f, pos[2] = 0.3f;
    pos[3] = 0.1f, pos[4] = 0.2f, pos[5] = 0.3f;
    for (uint64_t n = 0; n <= 2; n++) all_ways("tiny", pos, n, 0.01);

    /* two particles on opposite faces of the periodic box, exactly l apart through the boundary */
    {
        float two[6] = {-0.5f, 0.0f, 0.0f, 0.4375f, 0.0f, 0.0f}; /* separation 0.0625 through the wrap */
        fk_error err = {0};
        fk_linkopts o = {0};
        o.periodic = 1;
        o.box = 1;
        uint32_t s[2];
        o.l = 0.0625;
        CHECK(fk_link_brute_cpu(2, two, NULL, &o, s, NULL, &err) == FK_OK && s[1] == 1);
        o.l = nextafter(0.0625, 1);
        o.l = (double)nextafterf(0.0625f, 1.0f);
        CHECK(fk_link_brute_cpu(2, two, NULL, &o, s, NULL, &err) == FK_OK && s[1] == 0);
        o.periodic = 0;
        CHECK(fk_link_brute_cpu(2, two, NULL, &o, s, NULL, &err) == FK_OK && s[1] == 1);
        all_ways("edge-pair", two, 2, 0.0625);
        all_ways("edge-pair-above", two, 2, (double)nextafterf(0.0625f, 1.0f));
    }

    /* bad linking lengths are refused */
    {
        fk_error err = {0};
        fk_linkopts o = {0};
        o.periodic = 1;
        o.box = 1;
        o.l = 0;
        CHECK(fk_link_check(&o, &err) == FK_EINVAL);
        fk_error_clear(&err);
        o.l = -1;
        CHECK(fk_link_check(&o, &err) == FK_EINVAL);
        fk_error_clear(&err);
        o.l = 0.6;
        CHECK(fk_link_check(&o, &err) == FK_EINVAL && strstr(err.msg, "half the box"));
        fk_error_clear(&err);
        o.l = NAN;
        CHECK(fk_link_check(&o, &err) == FK_EINVAL);
        fk_error_clear(&err);
        o.l = 0.5;
        CHECK(fk_link_check(&o, &err) == FK_OK);
    }
    free(pos);
    CHECK_DONE();
}
