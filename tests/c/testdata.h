/* testdata.h - hard particle configurations (positions, and velocities for 6D) shared by the linker tests (CPU and GPU). */
#ifndef FK_TESTDATA_H
#define FK_TESTDATA_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t td_rng = 88172645463325252ull;

static inline double td_urand(void)
{
    td_rng ^= td_rng << 13;
    td_rng ^= td_rng >> 7;
    td_rng ^= td_rng << 17;
    return (double)(td_rng >> 11) / 9007199254740992.0;
}

/* Wraps x into [-0.5, 0.5). */
static inline float td_wrap(double x)
{
    x -= floor(x + 0.5);
    float f = (float)x;
    if (f >= 0.5f) f = -0.5f;
    return f;
}

static inline void td_uniform(float *pos, uint64_t n)
{
    for (uint64_t i = 0; i < 3 * n; i++) pos[i] = td_wrap(td_urand());
}

/* Dense blobs (cliques) of many sizes, some on the periodic boundary. */
static inline void td_clustered(float *pos, uint64_t n, int maxblob)
{
    uint64_t i = 0;
    while (i < n) {
        double c[3] = {td_urand() - 0.5, td_urand() - 0.5, td_urand() - 0.5};
        if (td_urand() < 0.2) c[0] = 0.4999;
        double r = 0.002 + 0.05 * td_urand() * td_urand();
        uint64_t m = 1 + (uint64_t)(maxblob * td_urand() * td_urand() * td_urand());
        for (uint64_t j = 0; j < m && i < n; j++, i++) {
            double rr = r * pow(td_urand(), 2.0);
            for (int k = 0; k < 3; k++) pos[3 * i + k] = td_wrap(c[k] + rr * (2 * td_urand() - 1));
        }
    }
}

/* A handful of distinct points, each many times, on the box face z = -0.5. */
static inline void td_duplicates(float *pos, uint64_t n)
{
    for (uint64_t k = 0; k < n; k++) {
        uint64_t s = k % 7;
        pos[3 * k] = td_wrap(0.13 * s);
        pos[3 * k + 1] = td_wrap(0.29 * s);
        pos[3 * k + 2] = -0.5f;
    }
}

/* Everything inside a ball of diameter 0.001. */
static inline void td_ball(float *pos, uint64_t n)
{
    for (uint64_t k = 0; k < 3 * n; k++) pos[k] = (float)(0.001 * (td_urand() - 0.5));
}

/* side^3 points on a lattice of spacing 1/side from -0.5; returns the count. */
static inline uint64_t td_lattice(float *pos, int side)
{
    const float sp = 1.0f / side;
    uint64_t k = 0;
    for (int a = 0; a < side; a++)
        for (int b = 0; b < side; b++)
            for (int c = 0; c < side; c++, k++) {
                pos[3 * k] = -0.5f + a * sp;
                pos[3 * k + 1] = -0.5f + b * sp;
                pos[3 * k + 2] = -0.5f + c * sp;
            }
    return k;
}

/* ---- velocities, for 6D linking ---- */

/* A standard normal deviate (Box-Muller). */
static inline double td_gauss(void)
{
    double u = td_urand(), v = td_urand();
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

/* Velocities for td_clustered-like positions (call right after it, with the
 * same n): runs of particles share a bulk velocity, and every other particle
 * of a run moves the opposite way, so that streams interpenetrate in space
 * but not in velocity; dispersion sigma about each bulk (bulk speeds about
 * 1). Some runs have identical velocities (w2 = 0). */
static inline void td_streams(float *vel, uint64_t n, double sigma)
{
    uint64_t i = 0;
    while (i < n) {
        double bulk[3] = {td_gauss(), td_gauss(), td_gauss()};
        uint64_t m = 1 + (uint64_t)(200 * td_urand() * td_urand());
        int cold = td_urand() < 0.2;
        for (uint64_t j = 0; j < m && i < n; j++, i++)
            for (int k = 0; k < 3; k++)
                vel[3 * i + k] = (float)((j % 2 ? -bulk[k] : bulk[k]) + (cold ? 0 : sigma * td_gauss()));
    }
}

/* Independent Gaussian velocities of dispersion sigma per axis. */
static inline void td_thermal(float *vel, uint64_t n, double sigma)
{
    for (uint64_t i = 0; i < 3 * n; i++) vel[i] = (float)(sigma * td_gauss());
}

/* Chains along x in the periodic box [-0.5, 0.5)^3: points at x spacing
 * 1/16, chains 1/8 apart in y and z (64 chains of 16), and velocity (1,1,1)
 * on every other point, 0 on the rest. With l = 1/8 neighbours along a chain
 * have r2/l2 = 1/4 and w2 = 3, all else is at least l apart: at psi = 2 every
 * neighbour pair sums to exactly 1 (no friends: the test is strict), just
 * above 2 the chains link. Every value is exact in binary32. Returns n. */
static inline uint64_t td_chains(float *pos, float *vel)
{
    uint64_t k = 0;
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 8; b++)
            for (int c = 0; c < 8; c++, k++) {
                pos[3 * k] = -0.5f + a / 16.0f;
                pos[3 * k + 1] = -0.5f + b / 8.0f;
                pos[3 * k + 2] = -0.5f + c / 8.0f;
                for (int d = 0; d < 3; d++) vel[3 * k + d] = (float)(a % 2);
            }
    return k;
}

/* 1 if the partitions given by labels a and b (one per particle, each < n)
 * are the same. */
static inline int td_same_partition(const uint32_t *a, const uint32_t *b, uint64_t n)
{
    uint32_t *ab = malloc(n * 4 + 4), *ba = malloc(n * 4 + 4);
    memset(ab, 0xff, n * 4 + 4);
    memset(ba, 0xff, n * 4 + 4);
    int ok = 1;
    for (uint64_t i = 0; i < n && ok; i++) {
        if (ab[a[i]] == UINT32_MAX) ab[a[i]] = b[i];
        if (ba[b[i]] == UINT32_MAX) ba[b[i]] = a[i];
        ok = ab[a[i]] == b[i] && ba[b[i]] == a[i];
    }
    free(ab);
    free(ba);
    return ok;
}

/* 1 if the partition given by labels fine refines the one given by coarse:
 * particles with one fine label have one coarse label. */
static inline int td_refines(const uint32_t *fine, const uint32_t *coarse, uint64_t n)
{
    uint32_t *c = malloc(n * 4 + 4);
    memset(c, 0xff, n * 4 + 4);
    int ok = 1;
    for (uint64_t i = 0; i < n && ok; i++) {
        if (c[fine[i]] == UINT32_MAX) c[fine[i]] = coarse[i];
        ok = c[fine[i]] == coarse[i];
    }
    free(c);
    return ok;
}

#endif
