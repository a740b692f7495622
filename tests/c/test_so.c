/* test_so.c - spherical-overdensity radii and masses: thresholds by hand, NFW and Plummer spheres against their closed forms, the grid against brute force, a part of the particles in the whole set's frame. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "check.h"
#include "so.h"

#define TESTRAND_SEED 0x2545f4914f6cdd1dull
#include "testrand.h"

/* A random isotropic direction times r, added to c, into p[0..3). */
static void place(float *p, const double c[3], double r)
{
    double z = 2 * urand() - 1, t = 2 * M_PI * urand(), s = sqrt(1 - z * z);
    double d[3] = {s * cos(t), s * sin(t), z};
    for (int k = 0; k < 3; k++) p[k] = (float)(c[k] + r * d[k]);
}

/* Wraps every coordinate into [origin, origin + box). */
static void wrap(float *pos, uint64_t n, double origin, double box)
{
    for (uint64_t i = 0; i < 3 * n; i++) {
        double q = pos[i];
        q -= box * floor((q - origin) / box);
        pos[i] = (float)q;
        if (pos[i] >= origin + box) pos[i] = (float)origin;
    }
}

/* NFW enclosed-mass shape m(x) = ln(1 + x) - x / (1 + x). */
static double nfw_m(double x)
{
    return log1p(x) - x / (1 + x);
}

/* The root of f(r) = mass(r) - rho 4/3 pi r^3 in (lo, hi) by bisection:
 * the closed-form SO radius of a profile. */
static double so_root(double (*mass)(double, const double *), const double *par, double rho, double lo, double hi)
{
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (mass(mid, par) - rho * 4.0 / 3.0 * M_PI * mid * mid * mid > 0)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* par: rs, c (truncation radius c rs), total mass within it. */
static double nfw_mass(double r, const double *par)
{
    return par[2] * nfw_m(r / par[0]) / nfw_m(par[1]);
}

/* par: a, M (the untruncated total). */
static double plummer_mass(double r, const double *par)
{
    return par[1] * r * r * r / pow(r * r + par[0] * par[0], 1.5);
}

static void test_thresholds(void)
{
    fk_error err = {0};
    double rho[FK_SO_N], dv;
    /* Einstein-de Sitter at a = 1: E = 1, x = 0, Delta_vir = 18 pi^2 */
    fk_cosmo eds = {1, 0, 1, 2.5};
    CHECK(fk_so_thresholds(&eds, rho, &dv, &err) == FK_OK);
    CHECK(fabs(dv - 18 * M_PI * M_PI) < 1e-12);
    CHECK(fabs(rho[FK_SO_200C] - 500) < 1e-12 && fabs(rho[FK_SO_200M] - 500) < 1e-12);
    CHECK(fabs(rho[FK_SO_500C] - 1250) < 1e-12);
    /* flat LCDM 0.3/0.7 at a = 0.5: E^2 = 0.3 * 8 + 0.7 = 3.1, comoving crit = 3.1 / 8,
     * Omega_m(a) = 2.4 / 3.1, x = -0.7 / 3.1 */
    fk_cosmo lcdm = {0.3, 0.7, 0.5, 1};
    CHECK(fk_so_thresholds(&lcdm, rho, &dv, &err) == FK_OK);
    double x = 2.4 / 3.1 - 1, want = 18 * M_PI * M_PI + 82 * x - 39 * x * x;
    CHECK(fabs(dv - want) < 1e-12);
    CHECK(fabs(rho[FK_SO_200C] - 200 * 3.1 / 8) < 1e-12);
    CHECK(fabs(rho[FK_SO_200M] - 200 * 0.3) < 1e-12);
    CHECK(fabs(rho[FK_SO_VIR] - want * 3.1 / 8) < 1e-12);
    /* at a = 1, Delta_vir ~ 102 for Omega_m = 0.3 (Bryan & Norman's figure) */
    lcdm.a = 1;
    CHECK(fk_so_thresholds(&lcdm, rho, &dv, &err) == FK_OK);
    CHECK_MSG(fabs(dv - 101.1) < 0.1, "Delta_vir %g", dv);
    /* open, no Lambda: the other fit */
    fk_cosmo open = {0.3, 0, 1, 1};
    CHECK(fk_so_thresholds(&open, rho, &dv, &err) == FK_OK);
    CHECK(fabs(dv - (18 * M_PI * M_PI - 0.7 * 60 - 32 * 0.49)) < 1e-12);
    fk_cosmo bad = {0, 0.7, 1, 1};
    CHECK(fk_so_thresholds(&bad, rho, &dv, &err) == FK_EINVAL && strstr(err.msg, "Omega_m"));
    bad = (fk_cosmo){0.3, 0.7, 1, -1};
    err = (fk_error){0};
    CHECK(fk_so_thresholds(&bad, rho, &dv, &err) == FK_EINVAL && strstr(err.msg, "critical density"));
}

static void test_crossing(void)
{
    /* by hand: unit masses at r = 0, 1, 2, 3; rho_k = k+1 / (4/3 pi r^3) */
    double r[4] = {0, 1, 2, 3}, cm[4] = {1, 2, 3, 4}, R, M;
    double v = 4.0 / 3.0 * M_PI, rho1 = 2 / v, rho2 = 3 / (8 * v);
    double t = 0.5 / v; /* between rho_1 and rho_2 (0.375 / v) */
    CHECK(fk_so_crossing(r, cm, 4, 0, t, &R, &M) == 1);
    double lR = log(1) + (log(t) - log(rho1)) * (log(2) - log(1)) / (log(rho2) - log(rho1));
    CHECK(fabs(R - exp(lR)) < 1e-12 && fabs(M - v * R * R * R * t) < 1e-12);
    CHECK(R > 1 && R < 2);
    /* the profile from the sphere through particle 2 (r = 2): already below 0.5 / v */
    CHECK(fk_so_crossing(r, cm, 4, 2, t, &R, &M) == 0 && isnan(R));
    CHECK(fk_so_crossing(r, cm, 4, 2, 0.3 / v, &R, &M) == 1 && R > 2 && R < 3);
    CHECK(fk_so_crossing(r, cm, 4, 0, 3 / v, &R, &M) == 0 && isnan(R) && isnan(M)); /* r = 1 is too thin */
    CHECK(fk_so_crossing(r, cm, 4, 0, 0.01 / v, &R, &M) == -1 && isnan(R));     /* never below */
    /* equal radii count together: two at r = 1 */
    double r2[3] = {1, 1, 2}, cm2[3] = {2, 2, 3};
    CHECK(fk_so_crossing(r2, cm2, 3, 0, 1 / v, &R, &M) == 1 && R > 1 && R < 2);
}

/* n particles of a truncated NFW sphere (rs, c, mass Mt) about cen. */
static void nfw_sample(float *pos, float *mass, uint64_t n, const double cen[3], const double *par)
{
    for (uint64_t i = 0; i < n; i++) {
        double u = urand() * nfw_m(par[1]), lo = 0, hi = par[1];
        for (int it = 0; it < 60; it++) {
            double mid = 0.5 * (lo + hi);
            if (nfw_m(mid) < u) lo = mid; else hi = mid;
        }
        place(pos + 3 * i, cen, 0.5 * (lo + hi) * par[0]);
        mass[i] = (float)(par[2] / n);
    }
}

/*
 * Tolerances for a sampled sphere: the mass within a radius holding N of
 * the n particles has a binomial scatter of sqrt(N (1 - N/n)) particles,
 * and the crossing moves the mass by less than that fraction (the sphere's
 * M(r) is steeper than a constant density's), the radius by a third of it.
 * The checks allow 5 such standard deviations, plus 1e-3 for binary32
 * positions and the log interpolation between particles.
 */
static void check_sphere(const char *what, double Rm, double Mm, double Rt, double Mt, double n_in, double n)
{
    double sig = sqrt(n_in * (1 - n_in / n)) / n_in;
    CHECK_MSG(fabs(Mm / Mt - 1) < 5 * sig + 1e-3, "%s: M %.6g, closed form %.6g (sigma %.2g)", what, Mm, Mt, sig);
    CHECK_MSG(fabs(Rm / Rt - 1) < 5 * sig / 3 + 1e-3, "%s: R %.6g, closed form %.6g", what, Rm, Rt);
}

static void test_nfw(void)
{
    fk_error err = {0};
    const uint64_t n = 200000;
    const double cen[3] = {0.1, -0.2, 0.05}, par[3] = {0.02, 10, 1}; /* rs, c: truncated at 0.2 */
    float *pos = malloc(n * 3 * sizeof *pos), *mass = malloc(n * sizeof *mass);
    nfw_sample(pos, mass, n, cen, par);
    fk_so_particles p = {n, pos, mass, 0, 0, 0, NULL};
    fk_so_grid *g;
    CHECK(fk_so_grid_build(&p, &g, &err) == FK_OK);
    /* thresholds putting R between 0.3 rs and the truncation */
    double rho[3] = {3000, 300, 100}, R[3], M[3], r0 = 0.01;
    CHECK(fk_so_measure(g, 1, cen, &r0, 3, rho, FK_SO_MINPART, R, M, &err) == FK_OK);
    for (int t = 0; t < 3; t++) {
        double Rt = so_root(nfw_mass, par, rho[t], 1e-6, par[0] * par[1]), Mt = nfw_mass(Rt, par);
        CHECK_MSG(Rt > 0.3 * par[0] && Rt < 0.95 * par[0] * par[1], "NFW radius %g out of the tested range", Rt);
        check_sphere("NFW", R[t], M[t], Rt, Mt, Mt / par[2] * n, n);
    }
    /* half the sphere's mean density: no particle lies where the mean density falls below it
     * (the sphere is isolated, nothing beyond its edge): not reached */
    double low = 0.5 * par[2] / (4.0 / 3.0 * M_PI * pow(par[0] * par[1], 3));
    CHECK(fk_so_measure(g, 1, cen, &r0, 1, &low, FK_SO_MINPART, R, M, &err) == FK_OK);
    CHECK(isnan(R[0]) && isnan(M[0]));
    fk_so_grid_free(g);
    free(pos), free(mass);
}

/* A Plummer sphere across the corner of a periodic box, in a thin uniform background. */
static void test_plummer_periodic(void)
{
    fk_error err = {0};
    const uint64_t n = 150000, nb = 20000;
    const double a = 0.02, cut = 0.3, cen[3] = {0.49, -0.495, 0.0};
    const double Mc = pow(cut, 3) / pow(cut * cut + a * a, 1.5); /* of M = 1 within the cut */
    float *pos = malloc((n + nb) * 3 * sizeof *pos), *mass = malloc((n + nb) * sizeof *mass);
    for (uint64_t i = 0; i < n; i++) {
        double u = urand() * Mc, q = pow(u, -2.0 / 3.0) - 1;
        place(pos + 3 * i, cen, a / sqrt(q));
        mass[i] = (float)(Mc / n);
    }
    /* background: mean density 0.05, far below every threshold, within the cut added to the
     * closed form as 0.05 4/3 pi r^3 */
    for (uint64_t i = n; i < n + nb; i++) {
        for (int k = 0; k < 3; k++) pos[3 * i + k] = (float)(urand() - 0.5);
        mass[i] = (float)(0.05 / nb);
    }
    wrap(pos, n + nb, -0.5, 1);
    fk_so_particles p = {n + nb, pos, mass, 1, 1, -0.5, NULL};
    fk_so_grid *g;
    CHECK(fk_so_grid_build(&p, &g, &err) == FK_OK);
    double rho[3] = {1e4, 1e3, 100}, R[3], M[3], r0 = 0.001; /* r0: several doublings */
    CHECK(fk_so_measure(g, 1, cen, &r0, 3, rho, FK_SO_MINPART, R, M, &err) == FK_OK);
    for (int t = 0; t < 3; t++) {
        /* closed form without the background: R = sqrt((3 M / (4 pi rho))^(2/3) - a^2); the
         * root with it, from the bisection */
        double Rc = sqrt(pow(3.0 / (4 * M_PI * rho[t]), 2.0 / 3.0) - a * a);
        double par[2] = {a, 1};
        double Rt = so_root(plummer_mass, par, rho[t] - 0.05, 1e-6, cut);
        CHECK_MSG(fabs(Rt / Rc - 1) < 0.01, "background shifts R by %g", Rt / Rc - 1);
        double Mt = rho[t] * 4.0 / 3.0 * M_PI * Rt * Rt * Rt;
        check_sphere("Plummer", R[t], M[t], Rt, Mt, plummer_mass(Rt, par) / Mc * n, n);
    }
    /* the grid's search against every particle by brute force, many centres, 1 and 2 threads */
    enum { NC = 16 };
    double c[3 * NC], r0s[NC], Rg[2][3 * NC], Mg[2][3 * NC];
    for (int h = 0; h < NC; h++) {
        uint64_t i = (uint64_t)(urand() * (n + nb));
        for (int k = 0; k < 3; k++) c[3 * h + k] = pos[3 * i + k];
        r0s[h] = h % 3 ? 0.004 : 0;
    }
    for (int th = 0; th < 2; th++) {
#ifdef _OPENMP
        omp_set_num_threads(th + 1);
#endif
        CHECK(fk_so_measure(g, NC, c, r0s, 3, rho, FK_SO_MINPART, Rg[th], Mg[th], &err) == FK_OK);
    }
    CHECK(memcmp(Rg[0], Rg[1], sizeof Rg[0]) == 0 && memcmp(Mg[0], Mg[1], sizeof Mg[0]) == 0);
    double *r = malloc((n + nb) * sizeof *r), *cm = malloc((n + nb) * sizeof *cm);
    int agree = 0, reached = 0;
    for (int h = 0; h < NC; h++) {
        for (uint64_t i = 0; i < n + nb; i++) {
            double d2 = 0;
            for (int k = 0; k < 3; k++) {
                double d = (double)pos[3 * i + k] - c[3 * h + k];
                d -= round(d);
                d2 += d * d;
            }
            r[i] = d2; /* sorted below with the masses */
            cm[i] = mass[i];
        }
        /* insertion-free: sort pairs by an index sort */
        uint64_t m = n + nb;
        uint64_t *ix = malloc(m * sizeof *ix);
        for (uint64_t i = 0; i < m; i++) ix[i] = i;
        /* simple merge sort by r, masses as the tie-break the library uses */
        uint64_t *tmp = malloc(m * sizeof *tmp);
        for (uint64_t w = 1; w < m; w *= 2)
            for (uint64_t lo = 0; lo < m; lo += 2 * w) {
                uint64_t mid = lo + w < m ? lo + w : m, hi = lo + 2 * w < m ? lo + 2 * w : m, a1 = lo, b1 = mid, o = lo;
                while (a1 < mid || b1 < hi) {
                    int left = b1 >= hi || (a1 < mid && (r[ix[a1]] < r[ix[b1]] ||
                                                        (r[ix[a1]] == r[ix[b1]] && cm[ix[a1]] <= cm[ix[b1]])));
                    tmp[o++] = left ? ix[a1++] : ix[b1++];
                }
                memcpy(ix + lo, tmp + lo, (hi - lo) * sizeof *ix);
            }
        double *rs = malloc(m * sizeof *rs), *cs = malloc(m * sizeof *cs), sum = 0;
        for (uint64_t k = 0; k < m; k++) {
            sum += cm[ix[k]];
            rs[k] = sqrt(r[ix[k]]);
            cs[k] = sum;
        }
        for (uint64_t k = m; k-- > 1;)
            if (rs[k - 1] == rs[k]) cs[k - 1] = cs[k];
        int ok = 1;
        for (int t = 0; t < 3; t++) {
            double Rb, Mb;
            fk_so_crossing(rs, cs, m, FK_SO_MINPART - 1, rho[t], &Rb, &Mb);
            double Rl = Rg[0][3 * h + t];
            reached += !isnan(Rb);
            /* the grid sums only the particles within its search radius: the same
             * profile, the same order, the same sums up to the crossing */
            if (!(isnan(Rb) ? isnan(Rl) : fabs(Rl - Rb) <= 1e-12 * Rb)) ok = 0;
        }
        agree += ok;
        free(ix), free(tmp), free(rs), free(cs);
    }
    CHECK_MSG(agree == NC, "%d of %d centres agree with brute force", agree, NC);
    CHECK_MSG(reached > 4 && reached < 3 * NC, "%d of %d radii reached: both cases tested", reached, 3 * NC);
    free(r), free(cm);
    fk_so_grid_free(g);
    free(pos), free(mass);
}

/* Not reached: a lattice, the centre between its points. */
static void test_not_reached(void)
{
    fk_error err = {0};
    const int s = 10;
    const uint64_t n = (uint64_t)s * s * s;
    float *pos = malloc(n * 3 * sizeof *pos), *mass = malloc(n * sizeof *mass);
    for (uint64_t i = 0; i < n; i++) {
        pos[3 * i] = (float)((double)(i / (s * s)) / s - 0.5);
        pos[3 * i + 1] = (float)((double)(i / s % s) / s - 0.5);
        pos[3 * i + 2] = (float)((double)(i % s) / s - 0.5);
        mass[i] = (float)(1.0 / n);
    }
    fk_so_particles p = {n, pos, mass, 1, 1, -0.5, NULL};
    fk_so_grid *g;
    CHECK(fk_so_grid_build(&p, &g, &err) == FK_OK);
    double c[3] = {0.05, 0.05, 0.05}, r0 = 0.1, R[2], M[2];
    /* nearest 8 points at 0.0866: mean density 2.9 there; a threshold of 200 is never met,
     * one of 0.5 never crossed (the box's mean is 1) */
    double rho[2] = {200, 0.5};
    CHECK(fk_so_measure(g, 1, c, &r0, 2, rho, FK_SO_MINPART, R, M, &err) == FK_OK);
    CHECK(isnan(R[0]) && isnan(M[0]) && isnan(R[1]) && isnan(M[1]));
    double badrho = 0;
    CHECK(fk_so_measure(g, 1, c, &r0, 1, &badrho, FK_SO_MINPART, R, M, &err) == FK_EINVAL);
    fk_so_grid_free(g);
    free(pos), free(mass);
}

/* A part of the particles in the whole set's frame (a rank's view under
 * mpirun): every particle within a centre's reach, and within sqrt(3) (r0 +
 * cell) of it, in the whole set's order, gives the whole set's radii,
 * masses and reach bit for bit, periodic or not, with masses of every
 * size (sums that rounding makes depend on the order). */
static void test_frame(int periodic)
{
    fk_error err = {0};
    const uint64_t n = 60000;
    const double cen[2][3] = {{0.45, -0.47, 0.1}, {-0.2, 0.3, -0.3}};
    float *pos = malloc(n * 3 * sizeof *pos), *mass = malloc(n * sizeof *mass);
    float *sp = malloc(n * 3 * sizeof *sp), *sm = malloc(n * sizeof *sm);
    for (uint64_t i = 0; i < n; i++) {
        if (i % 3 == 2)
            for (int k = 0; k < 3; k++) pos[3 * i + k] = (float)(urand() - 0.5);
        else
            place(pos + 3 * i, cen[i % 3], 0.05 * pow(urand(), 2));
        mass[i] = (float)(exp(30 * urand()) * 1e-15);
    }
    if (periodic) wrap(pos, n, -0.5, 1);
    fk_so_particles p = {n, pos, mass, periodic, 1, -0.5, NULL};
    fk_so_grid *g, *gs;
    double lo[3], hi[3];
    fk_so_frame f;
    fk_so_bounds(&p, lo, hi);
    fk_so_frame_make(n, periodic, 1, -0.5, lo, hi, &f);
    CHECK(fk_so_grid_build(&p, &g, &err) == FK_OK);
    double rho[3] = {1e3, 300, 30}, c[3 * 4], r0[4], R[12], M[12], reach[4];
    for (int h = 0; h < 4; h++) {
        uint64_t i = (uint64_t)(h * 7919 + 11);
        for (int k = 0; k < 3; k++) c[3 * h + k] = pos[3 * i + k];
        r0[h] = h == 3 ? 0 : 0.002 * (h + 1);
    }
    CHECK(fk_so_measure_reach(g, 4, c, r0, 3, rho, FK_SO_MINPART, R, M, reach, &err) == FK_OK);
    int doubled = 0;
    for (int h = 0; h < 4; h++) {
        double r = r0[h] > 0 ? r0[h] : f.cell, cube = sqrt(3.0) * (r + f.cell) * (1 + 1e-6), far = reach[h];
        doubled += reach[h] > 2 * r;
        if (cube > far) far = cube;
        uint64_t m = 0;
        for (uint64_t i = 0; i < n; i++) {
            double d2 = 0;
            for (int k = 0; k < 3; k++) {
                double d = (double)pos[3 * i + k] - c[3 * h + k];
                if (periodic) d -= nearbyint(d);
                d2 += d * d;
            }
            if (d2 > far * far * (1 + 1e-6)) continue;
            memcpy(sp + 3 * m, pos + 3 * i, 3 * sizeof *sp);
            sm[m++] = mass[i];
        }
        fk_so_particles ps = {m, sp, sm, periodic, 1, -0.5, NULL};
        double Rs[3], Ms[3], rs;
        CHECK(m < n && fk_so_grid_build_frame(&ps, &f, &gs, &err) == FK_OK);
        CHECK(fk_so_measure_reach(gs, 1, c + 3 * h, r0 + h, 3, rho, FK_SO_MINPART, Rs, Ms, &rs, &err) == FK_OK);
        CHECK_MSG(memcmp(Rs, R + 3 * h, sizeof Rs) == 0 && memcmp(Ms, M + 3 * h, sizeof Ms) == 0 && rs == reach[h],
                  "centre %d (%s): the part's radii, masses and reach are the whole set's", h,
                  periodic ? "periodic" : "isolated");
        fk_so_grid_free(gs);
    }
    CHECK_MSG(doubled > 0, "a search went beyond twice its first radius: the reach is tested");
    fk_so_frame bad = f;
    bad.side = 0;
    CHECK(fk_so_grid_build_frame(&p, &bad, &gs, &err) == FK_EINVAL);
    fk_so_grid_free(g);
    free(pos), free(mass), free(sp), free(sm);
}

int main(void)
{
    test_thresholds();
    test_crossing();
    test_nfw();
    test_plummer_periodic();
    test_not_reached();
    test_frame(1);
    test_frame(0);
    CHECK_DONE();
}
