/* test_so_bins.c - SO radii from radial bins against the full sort and brute force: mock universes, periodic and isolated, halos across the edge, radii not reached, unequal masses, 1 and 2 threads. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "check.h"
#include "mock.h"
#include "so.h"
#include "so_profile.h"

#define TESTRAND_SEED 0x9e3779b97f4a7c15ull
#include "testrand.h"

static void threads(int n)
{
#ifdef _OPENMP
    omp_set_num_threads(n);
#else
    (void)n;
#endif
}

static int cmp_r2m(const void *a, const void *b)
{
    const double *p = a, *q = b;
    if (p[0] != q[0]) return (p[0] > q[0]) - (p[0] < q[0]);
    return (p[1] > q[1]) - (p[1] < q[1]);
}

/* The radii about c from every particle (minimum image when periodic),
 * sorted with qsort, summed outward: the definition in so.h, by brute force. */
static void brute(const fk_so_particles *p, const double c[3], size_t nt, const double *rho, double *R, double *M)
{
    double *a = malloc(2 * p->n * sizeof *a), *r = malloc(p->n * sizeof *r), *cm = malloc(p->n * sizeof *cm);
    for (uint64_t i = 0; i < p->n; i++) {
        double d2 = 0;
        for (int k = 0; k < 3; k++) {
            double d = (double)p->pos[3 * i + k] - c[k];
            if (p->periodic) d -= p->box * nearbyint(d / p->box);
            d2 += d * d;
        }
        a[2 * i] = d2, a[2 * i + 1] = p->mass[i];
    }
    qsort(a, p->n, 2 * sizeof *a, cmp_r2m);
    double sum = 0;
    for (uint64_t k = 0; k < p->n; k++) sum += a[2 * k + 1], r[k] = sqrt(a[2 * k]), cm[k] = sum;
    for (uint64_t k = p->n; k-- > 1;)
        if (r[k - 1] == r[k]) cm[k - 1] = cm[k];
    for (size_t t = 0; t < nt; t++) fk_so_crossing(r, cm, p->n, FK_SO_MINPART - 1, rho[t], &R[t], &M[t]);
    free(a), free(r), free(cm);
}

/* Equal as bytes, NaN included. */
static int same(const double *a, const double *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

/* Equal to 1e-12 relative, NaN where the other is NaN. */
static int close(const double *a, const double *b, size_t n, double *worst)
{
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            ok &= isnan(a[i]) && isnan(b[i]);
            continue;
        }
        double e = fabs(a[i] / b[i] - 1);
        if (e > *worst) *worst = e;
        ok &= e <= 1e-12;
    }
    return ok;
}

enum { NT = 5 };
/* 200c, 500c and vir of an Omega_m = 1 universe whose mean density is 1; then a threshold
 * so high that the first sphere of small halos is too thin (not reached), and one that the
 * spheres about centres in the thin background cross only far out */
static const double rho[NT] = {200, 500, 177.65, 3e5, 8};

typedef struct setup {
    uint64_t n, nc;
    float *pos, *mass;
    double *c, *r0;
} setup;

/* A mock of n particles with one extra halo of big, moved so that the big halo's centre
 * sits on the box's corner (it and its neighbours straddle every face); centres: the
 * halos' (their r200 halved, r200 itself, a tiny radius: several doublings, or 0: one
 * cell), then random particles'. */
static void make(setup *s, uint64_t n, uint64_t big, uint64_t nh, uint64_t nrand)
{
    fk_error err = {0};
    fk_mock_params mp;
    fk_mock m;
    fk_mock_defaults(&mp, n);
    mp.big_halo = big;
    CHECK(fk_mock_plan(&m, &mp, &err) == FK_OK);
    s->n = n;
    s->pos = malloc(3 * n * sizeof *s->pos), s->mass = malloc(n * sizeof *s->mass);
    float *vel = malloc(3 * n * sizeof *vel);
    fk_mock_generate(&m, 0, n, s->pos, vel);
    free(vel);
    double shift[3];
    for (int k = 0; k < 3; k++) shift[k] = -0.5 - m.halo[0].centre[k];
    for (uint64_t i = 0; i < 3 * n; i++) {
        double q = s->pos[i] + shift[i % 3];
        q -= floor(q + 0.5);
        s->pos[i] = (float)q;
        if (s->pos[i] >= 0.5f) s->pos[i] = -0.5f;
    }
    for (uint64_t i = 0; i < n; i++) s->mass[i] = (float)(1.0 / n);
    if (nh > m.nhalo) nh = m.nhalo;
    s->nc = nh + nrand;
    s->c = malloc(3 * s->nc * sizeof *s->c), s->r0 = malloc(s->nc * sizeof *s->r0);
    for (uint64_t h = 0; h < s->nc; h++) {
        if (h < nh) {
            for (int k = 0; k < 3; k++) {
                double q = m.halo[h].centre[k] + shift[k];
                s->c[3 * h + k] = q - floor(q + 0.5);
            }
            double f[4] = {0.5, 1, 1e-3, 0};
            s->r0[h] = f[h % 4] * m.halo[h].r200;
        } else {
            uint64_t i = (uint64_t)(urand() * n);
            for (int k = 0; k < 3; k++) s->c[3 * h + k] = s->pos[3 * i + k];
            s->r0[h] = 0.01 * urand();
        }
    }
    fk_mock_free(&m);
}

static void drop(setup *s)
{
    free(s->pos), free(s->mass), free(s->c), free(s->r0);
}

/* Every method and 1 and 2 threads on p about s's centres (the team's bins in pieces of
 * FK_SO_PIECE, several for the big halo): with equal masses the bins
 * give the full sort's radii and masses to the bit; with unequal ones to 1e-12 (the
 * cumulative masses summed in another order). Then brute force on the first nb centres.
 * Returns the radii reached. */
static int compare(const char *what, const fk_so_particles *p, const setup *s, int equal, uint64_t nb)
{
    fk_error err = {0};
    fk_so_grid *g;
    CHECK(fk_so_grid_build(p, &g, &err) == FK_OK);
    size_t k = NT * s->nc;
    double *R[6], *M[6];
    for (int i = 0; i < 6; i++) R[i] = malloc(k * sizeof **R), M[i] = malloc(k * sizeof **M);
    threads(2);
    CHECK(fk_so_measure_method(g, s->nc, s->c, s->r0, NT, rho, FK_SO_MINPART, FK_SO_SORT, R[0], M[0], &err) == FK_OK);
    CHECK(fk_so_measure_method(g, s->nc, s->c, s->r0, NT, rho, FK_SO_MINPART, FK_SO_BINS, R[1], M[1], &err) == FK_OK);
    CHECK(fk_so_measure(g, s->nc, s->c, s->r0, NT, rho, FK_SO_MINPART, R[2], M[2], &err) == FK_OK);
    /* the first centres (the largest halos) by both threads together: the bins made in pieces */
    uint64_t nteam = s->nc < 16 ? s->nc : 16;
    for (int i = 4; i < 6; i++) memcpy(R[i], R[0], k * sizeof **R), memcpy(M[i], M[0], k * sizeof **M);
    CHECK(fk_so_measure_method(g, nteam, s->c, s->r0, NT, rho, FK_SO_MINPART, FK_SO_TEAM, R[4], M[4], &err) == FK_OK);
    threads(1);
    CHECK(fk_so_measure_method(g, s->nc, s->c, s->r0, NT, rho, FK_SO_MINPART, FK_SO_BINS, R[3], M[3], &err) == FK_OK);
    CHECK(fk_so_measure_method(g, nteam, s->c, s->r0, NT, rho, FK_SO_MINPART, FK_SO_TEAM, R[5], M[5], &err) == FK_OK);
    threads(2);
    CHECK_MSG(same(R[1], R[3], k) && same(M[1], M[3], k), "%s: bins on 1 and 2 threads differ", what);
    CHECK_MSG(same(R[4], R[5], k) && same(M[4], M[5], k), "%s: a team of 1 and 2 threads differ", what);
    double worst = 0;
    for (int i = 1; i < 5; i++) {
        if (i == 3) continue;
        if (equal)
            CHECK_MSG(same(R[0], R[i], k) && same(M[0], M[i], k), "%s: method %d differs from the full sort", what, i);
        else
            CHECK_MSG(close(R[0], R[i], k, &worst) && close(M[0], M[i], k, &worst),
                      "%s: method %d differs from the full sort by %g", what, i, worst);
    }
    int reached = 0, lost[NT] = {0};
    for (size_t i = 0; i < k; i++) reached += !isnan(R[1][i]), lost[i % NT] += isnan(R[1][i]);
    CHECK_MSG(lost[3] > 0 && lost[3] < (int)s->nc, "%s: the high threshold is reached about %d of %d centres", what,
              (int)s->nc - lost[3], (int)s->nc);
    for (uint64_t h = 0; h < nb && h < s->nc; h++) {
        double Rb[NT], Mb[NT];
        brute(p, s->c + 3 * h, NT, rho, Rb, Mb);
        double w = 0;
        CHECK_MSG(close(Rb, R[1] + NT * h, NT, &w) && close(Mb, M[1] + NT * h, NT, &w),
                  "%s: centre %d differs from brute force by %g", what, (int)h, w);
    }
    for (int i = 0; i < 6; i++) free(R[i]), free(M[i]);
    fk_so_grid_free(g);
    return reached;
}

static void test_mock(void)
{
    setup s;
    /* the big halo: more than 2^17 particles in its sphere, the finest bins */
    make(&s, UINT64_C(1) << 18, 140000, 40, 10);
    fk_so_particles per = {s.n, s.pos, s.mass, 1, 1, -0.5, NULL};
    int reached = compare("periodic", &per, &s, 1, 2);
    CHECK_MSG(reached > (int)s.nc, "periodic: %d radii reached", reached);
    drop(&s);
    make(&s, UINT64_C(1) << 16, 20000, 80, 20);
    fk_so_particles iso = {s.n, s.pos, s.mass, 0, 0, 0, NULL};
    reached = compare("isolated", &iso, &s, 1, 4);
    CHECK_MSG(reached > (int)s.nc, "isolated: %d radii reached", reached);
    /* unequal masses, within a factor 2 of each other */
    for (uint64_t i = 0; i < s.n; i++) s.mass[i] = (float)((0.5 + urand()) / s.n);
    per = (fk_so_particles){s.n, s.pos, s.mass, 1, 1, -0.5, NULL};
    compare("unequal masses", &per, &s, 0, 4);
    drop(&s);
}

/* Particles off the periodic box: refused, naming the first. */
static void test_off_box(void)
{
    float pos[6] = {0.1f, 0.2f, 0.3f, 0.1f, 0.5f, 0.3f}, mass[2] = {1, 1};
    fk_so_particles p = {2, pos, mass, 1, 1, -0.5, NULL};
    fk_so_grid *g = (fk_so_grid *)&p;
    fk_error err = {0};
    CHECK(fk_so_grid_build(&p, &g, &err) == FK_EINVAL && g == NULL);
    CHECK_MSG(strstr(err.msg, "particle 1 ") != NULL, "%s", err.msg);
    pos[4] = NAN;
    p.periodic = 0;
    err = (fk_error){0};
    CHECK(fk_so_grid_build(&p, &g, &err) == FK_EINVAL && strstr(err.msg, "particle 1 ") != NULL);
    pos[4] = 0.2f;
    CHECK(fk_so_grid_build(&p, &g, &err) == FK_OK);
    fk_so_grid_free(g);
}

int main(void)
{
    test_mock();
    test_off_box();
    CHECK_DONE();
}
