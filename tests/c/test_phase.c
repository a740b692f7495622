/* test_phase.c - 6D phase-space linking: the tree linker against the all-pairs reference, the 3D limit, 6D groups inside 3D ones, the velocity scale. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kdtree.h"
#include "link.h"
#include "phase.h"
#include "testdata.h"

/* Most calls run on one thread: on a loaded machine OpenMP's spinning
 * threads cost more than these small inputs; one leaf size in four runs on
 * two, which is where races would show. */
static fk_linkopts opts(double l, double psi, int periodic, int threads)
{
    fk_linkopts o;
    memset(&o, 0, sizeof o);
    o.l = l;
    o.psi = psi;
    o.periodic = periodic;
    o.box = 1.0;
    o.nthreads = threads;
    return o;
}

/* A tree over pos0 (original order) at leaf size S: positions and
 * velocities in tree order, and perm. */
typedef struct treed {
    fk_tree t;
    float *pos, *vel;
    uint32_t *perm;
} treed;

static void build(treed *d, const float *pos0, const float *vel0, uint64_t n, uint32_t S)
{
    fk_error err = {0};
    d->pos = malloc(n * 12 + 12);
    d->vel = malloc(n * 12 + 12);
    memcpy(d->pos, pos0, n * 12);
    CHECK_MSG(fk_tree_build_cpu(d->pos, n, S, &d->t, &d->perm, &err) == FK_OK, "%s", err.msg);
    for (uint64_t i = 0; i < n; i++) memcpy(d->vel + 3 * i, vel0 + 3 * d->perm[i], 12);
}

static void drop(treed *d)
{
    fk_tree_free(&d->t);
    free(d->pos);
    free(d->vel);
    free(d->perm);
}

static uint64_t ngroups(const uint32_t *sink, uint64_t n)
{
    uint64_t g = 0;
    for (uint64_t i = 0; i < n; i++) g += sink[i] == i;
    return g;
}

/* The 6D tree linker on the tree d against the brute-force sinks ref at
 * (l, psi): the same partition, canonical sinks; and the 6D groups lie
 * inside the 3D ones. */
static void compare(const char *what, const treed *dt, uint64_t n, const uint32_t *ref, double l, double psi,
                    int periodic, int threads)
{
    fk_error err = {0};
    fk_linkopts o = opts(l, psi, periodic, threads), o3 = opts(l, 0, periodic, threads);
    uint32_t *sink = calloc(n + 1, 4), *s3 = calloc(n + 1, 4), *mapped = calloc(n + 1, 4);
    const treed d = *dt;
    const uint32_t S = d.t.leafsize;
    fk_linkstats st;
    CHECK_MSG(fk_link_cpu(&d.t, d.pos, d.vel, &o, sink, &st, &err) == FK_OK, "%s", err.msg);
    int canon = 1;
    for (uint64_t i = 0; i < n; i++) canon &= sink[i] <= i && sink[sink[i]] == sink[i];
    CHECK_MSG(canon, "%s: 6D sinks not canonical", what);
    for (uint64_t i = 0; i < n; i++) mapped[d.perm[i]] = d.perm[sink[i]];
    CHECK_MSG(td_same_partition(ref, mapped, n), "%s (n %llu, l %g, psi %g, periodic %d, leaf %u): 6D partitions differ",
              what, (unsigned long long)n, l, psi, periodic, S);
    CHECK_MSG(ngroups(ref, n) == st.groups, "%s: %llu groups vs %llu", what, (unsigned long long)ngroups(ref, n),
              (unsigned long long)st.groups);
    CHECK(fk_link_cpu(&d.t, d.pos, NULL, &o3, s3, NULL, &err) == FK_OK);
    CHECK_MSG(td_refines(sink, s3, n), "%s (psi %g, leaf %u): a 6D group is not inside one 3D group", what, psi, S);
    free(sink);
    free(s3);
    free(mapped);
}

static void all_ways(const char *what, const float *pos, const float *vel, uint64_t n, double l, double psi)
{
    static const uint32_t leaves[] = {2, 3, 8, 33};
    uint32_t *ref[2] = {calloc(n + 1, 4), calloc(n + 1, 4)};
    for (int p = 0; p <= 1; p++) {
        fk_error err = {0};
        fk_linkopts o = opts(l, psi, p, 0);
        CHECK(fk_link_brute_cpu(n, pos, vel, &o, ref[p], NULL, &err) == FK_OK);
    }
    for (int k = 0; k < 4; k++) { /* one tree a leaf size, periodic or not */
        treed d;
        build(&d, pos, vel, n, leaves[k]);
        for (int p = 0; p <= 1; p++) compare(what, &d, n, ref[p], l, psi, p, k == 2 ? 2 : 1);
        drop(&d);
    }
    free(ref[0]);
    free(ref[1]);
}

/* The largest |v_i - v_j| is at most the diagonal of the velocities'
 * bounding box (computed in binary64, rounded up a little). */
static double max_dv(const float *vel, uint64_t n)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, s = 0;
    for (uint64_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], vel[3 * i + k]);
            hi[k] = fmax(hi[k], vel[3 * i + k]);
        }
    for (int k = 0; k < 3; k++) s += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    return sqrt(s) * (1 + 1e-9);
}

/* As psi grows the 6D partition coarsens, always inside the 3D one, and
 * becomes it exactly, sinks byte for byte, once w2/p2 < 2^-25 for every
 * pair: then r2/l2 (at most 1 - 2^-24 when r2 < l2) plus w2/p2 still rounds
 * below 1. psi = 2^13 max|dv| is enough. Just above max|dv| is not: a pair
 * nearly l apart with a velocity difference near psi is a 3D pair only. */
static void toward_3d(const char *what, const float *pos0, const float *vel0, uint64_t n, double l)
{
    fk_error err = {0};
    treed d;
    build(&d, pos0, vel0, n, 8);
    uint32_t *s3 = malloc(n * 4 + 4), *prev = malloc(n * 4 + 4), *sink = malloc(n * 4 + 4);
    fk_linkopts o3 = opts(l, 0, 1, 1);
    CHECK(fk_link_cpu(&d.t, d.pos, NULL, &o3, s3, NULL, &err) == FK_OK);
    const double dv = max_dv(vel0, n);
    uint64_t last = UINT64_MAX;
    int first = 1, coarsen = 1, inside = 1;
    for (double psi = dv / 64; psi <= dv * 8192; psi *= 2) {
        fk_linkopts o = opts(l, psi, 1, 1);
        CHECK(fk_link_cpu(&d.t, d.pos, d.vel, &o, sink, NULL, &err) == FK_OK);
        uint64_t g = ngroups(sink, n);
        if (!first) coarsen &= g <= last && td_refines(prev, sink, n);
        inside &= td_refines(sink, s3, n);
        memcpy(prev, sink, n * 4);
        last = g;
        first = 0;
    }
    CHECK_MSG(coarsen, "%s: a longer psi split a group", what);
    CHECK_MSG(inside, "%s: a 6D group outside the 3D groups", what);
    CHECK_MSG(memcmp(prev, s3, n * 4) == 0, "%s: psi = 2^13 max|dv| does not give the 3D sinks", what);
    fk_linkopts o = opts(l, dv * 1.01, 1, 1);
    CHECK(fk_link_cpu(&d.t, d.pos, d.vel, &o, sink, NULL, &err) == FK_OK);
    CHECK_MSG(ngroups(sink, n) > ngroups(s3, n), "%s: psi just above max|dv| already gives the 3D groups", what);
    drop(&d);
    free(s3);
    free(prev);
    free(sink);
}

int main(void)
{
    const uint64_t N = 2048; /* brute force is O(N^2) */
    float *pos = malloc(4096 * 12), *vel = malloc(4096 * 12);
    const double l02 = 0.2 / cbrt((double)N);

    /* clustered positions, streams that pass through each other: psi from
     * "velocity decides" to "position decides" */
    td_clustered(pos, N, 400);
    td_streams(vel, N, 0.1);
    for (double psi = 0.05; psi < 10; psi *= 4) all_ways("streams", pos, vel, N, l02, psi);
    all_ways("streams-long", pos, vel, N, 0.01, 0.3);
    toward_3d("streams", pos, vel, N, l02);

    /* uniform, thermal velocities, linking lengths up to percolation */
    td_uniform(pos, N);
    td_thermal(vel, N, 1.0);
    for (double b = 0.1; b < 1.3; b += 0.4) all_ways("uniform", pos, vel, N, b / cbrt((double)N), 1.0);
    toward_3d("uniform", pos, vel, N, 0.6 / cbrt((double)N));

    /* one ball in space, two in velocity: 3D one group, 6D two (cliques in
     * position, split by velocity boxes) */
    const uint64_t NB = 1024; /* every pair is a candidate: keep it small */
    td_ball(pos, NB);
    for (uint64_t i = 0; i < NB; i++)
        for (int k = 0; k < 3; k++) vel[3 * i + k] = (float)((i % 2 ? 5.0 : -5.0) + 0.01 * td_gauss());
    all_ways("two-streams-one-ball", pos, vel, NB, 0.01, 1.0);
    {
        fk_error err = {0};
        fk_linkopts o = opts(0.01, 1.0, 1, 0);
        uint32_t *s = malloc(NB * 4);
        CHECK(fk_link_brute_cpu(NB, pos, vel, &o, s, NULL, &err) == FK_OK);
        CHECK_MSG(ngroups(s, NB) == 2 && s[1] == 1 && s[2] == 0, "two streams in one ball: %llu groups",
                  (unsigned long long)ngroups(s, NB));
        free(s);
    }

    /* duplicated points: equal velocities (w2 = 0) and not */
    td_duplicates(pos, N);
    for (uint64_t i = 0; i < N; i++)
        for (int k = 0; k < 3; k++) vel[3 * i + k] = (float)(i % 3 == 2 ? i % 5 : 0);
    all_ways("duplicates", pos, vel, N, 0.01, 0.5);

    /* exactly on the 6D boundary: r2/l2 + w2/p2 = 1 is not linked, just above is */
    {
        uint64_t n = td_chains(pos, vel);
        fk_error err = {0};
        uint32_t *s = malloc(n * 4);
        for (int p = 0; p <= 1; p++) {
            fk_linkopts o = opts(0.125, 2.0, p, 0);
            CHECK(fk_link_brute_cpu(n, pos, vel, &o, s, NULL, &err) == FK_OK);
            CHECK_MSG(ngroups(s, n) == n, "chains at psi = 2 (periodic %d): %llu groups", p,
                      (unsigned long long)ngroups(s, n));
            o.psi = nextafterf(2.0f, 3.0f);
            CHECK(fk_link_brute_cpu(n, pos, vel, &o, s, NULL, &err) == FK_OK);
            CHECK_MSG(ngroups(s, n) == 64, "chains just above psi = 2 (periodic %d): %llu groups", p,
                      (unsigned long long)ngroups(s, n));
        }
        free(s);
        all_ways("chains-at-boundary", pos, vel, n, 0.125, 2.0);
        all_ways("chains-above-boundary", pos, vel, n, 0.125, nextafterf(2.0f, 3.0f));
        all_ways("chains-below-boundary", pos, vel, n, 0.125, nextafterf(2.0f, 1.0f));
    }

    /* a lattice at exactly l apart, velocities in thermal noise: no pair at all */
    {
        uint64_t n = td_lattice(pos, 12);
        td_thermal(vel, n, 0.001);
        all_ways("lattice-exact", pos, vel, n, 1.0 / 12, 1.0);
        all_ways("lattice-above", pos, vel, n, nextafterf(1.0f / 12, 1.0f), 0.01);
    }

    /* tiny inputs */
    for (uint64_t n = 0; n <= 2; n++) all_ways("tiny", pos, vel, n, 0.01, 1.0);

    /* a bad psi is refused */
    {
        fk_error err = {0};
        fk_linkopts o = opts(0.01, -1, 1, 0);
        CHECK(fk_link_check(&o, &err) == FK_EINVAL && strstr(err.msg, "velocity linking length"));
        fk_error_clear(&err);
        o.psi = NAN;
        CHECK(fk_link_check(&o, &err) == FK_EINVAL);
        fk_error_clear(&err);
        o.psi = 1e30; /* psi*psi overflows binary32 */
        CHECK(fk_link_check(&o, &err) == FK_EINVAL);
        fk_error_clear(&err);
        o.psi = 1e-30; /* psi*psi underflows to 0 */
        CHECK(fk_link_check(&o, &err) == FK_EINVAL);
    }

    /* the velocity scale of --psi-rel: the rms of |v - mean| */
    {
        const float v1[6] = {1, 0, 0, -1, 0, 0}, v2[6] = {1, 2, 3, 1, 2, 3}, v3[6] = {0, 0, 0, 3, 4, 0};
        CHECK(fk_phase_vscale(v1, 2) == 1.0);
        CHECK(fk_phase_vscale(v2, 2) == 0.0);
        CHECK(fk_phase_vscale(v3, 2) == 2.5);
        CHECK(fk_phase_vscale(v3, 1) == 0.0);
        CHECK(fk_phase_vscale(NULL, 0) == 0.0);
        /* large offsets: the mean is taken out first, no cancellation */
        const float v4[6] = {1e6f + 1, 0, 0, 1e6f - 1, 0, 0};
        CHECK(fk_phase_vscale(v4, 2) == 1.0);
        td_thermal(vel, N, 2.0);
        double s = fk_phase_vscale(vel, N);
        CHECK_MSG(fabs(s - 2.0 * sqrt(3.0)) < 0.15, "thermal sigma 2 per axis: scale %g, not near %g", s,
                  2.0 * sqrt(3.0));
        fk_error err = {0};
        CHECK(fk_phase_check(vel, N, "v", &err) == FK_OK);
        vel[3 * 17 + 1] = NAN;
        CHECK(fk_phase_check(vel, N, "v", &err) == FK_EFORMAT && strstr(err.msg, "v: particle 17 has a non-finite velocity"));
        fk_error_clear(&err);
        vel[3 * 17 + 1] = 0;
        vel[3 * 5] = INFINITY;
        CHECK(fk_phase_check(vel, N, "v", &err) == FK_EFORMAT && strstr(err.msg, "particle 5 "));
    }
    free(pos);
    free(vel);
    CHECK_DONE();
}
