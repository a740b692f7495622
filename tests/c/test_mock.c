/* test_mock.c - the mock universe: NFW inversion, the halo catalogue, reproducibility across ranges and threads. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mock.h"

static double nfw_m(double x)
{
    return log(1 + x) - x / (1 + x);
}

static void test_nfw_radius(void)
{
    static const double cs[] = {3, 4.4, 7, 15, 20};
    for (int k = 0; k < 5; k++) {
        double c = cs[k], prev = 0, worst = 0;
        for (int i = 1; i < 1000; i++) {
            double u = i / 1000.0, x = fk_mock_nfw_radius(u, c);
            double e = fabs(nfw_m(x) / nfw_m(c) - u) / u;
            if (e > worst) worst = e;
            CHECK(x > prev && x < c);
            prev = x;
        }
        CHECK_MSG(worst < 1e-9, "c %g: relative error %g", c, worst);
        CHECK(fk_mock_nfw_radius(0, c) == 0);
        CHECK(fabs(fk_mock_nfw_radius(1, c) - c) < 1e-9 * c);
        /* deep in the cusp, m(x) ~ x^2 / 2 */
        double u = 1e-12, x = fk_mock_nfw_radius(u, c);
        CHECK_MSG(fabs(x * x / 2 / (u * nfw_m(c)) - 1) < 1e-3, "c %g: x %g", c, x);
    }
    CHECK(fk_mock_concentration(1e-3) == 7.0);
    CHECK(fk_mock_concentration(1e-9) == 20.0 && fk_mock_concentration(100) == 3.0);
    CHECK(fk_mock_concentration(1e-2) < fk_mock_concentration(1e-4));
}

static void test_plan(void)
{
    fk_mock_params p;
    fk_mock m;
    fk_error err = {0};
    fk_mock_defaults(&p, UINT64_C(1) << 20);
    CHECK_MSG(fk_mock_plan(&m, &p, &err) == FK_OK, "%s", err.msg);
    /* the numbers documented in mock.h and mkuniverse(1) */
    CHECK(m.nhalo == 1411 && m.halo[0].npart == 110354);
    uint64_t sum = 0, above1e3 = 0, above1e4 = 0;
    for (uint64_t i = 0; i < m.nhalo; i++) {
        const fk_mock_halo *h = &m.halo[i];
        CHECK(h->first == sum && h->npart >= 32 && h->npart <= p.n / 4);
        if (i) CHECK(h->npart <= m.halo[i - 1].npart);
        CHECK(h->r200 > 0 && fabs(h->mass - 200 * 4.0 / 3 * M_PI * pow(h->r200, 3)) < 1e-12);
        CHECK(h->c == fk_mock_concentration(h->mass));
        for (int d = 0; d < 3; d++) CHECK(h->centre[d] >= -0.5 && h->centre[d] < 0.5);
        above1e3 += h->npart >= 1000;
        above1e4 += h->npart >= 10000;
        sum += h->npart;
    }
    /* dN/dM ~ M^-1.9: ten times the mass, 10^0.9 (about 7.9) times fewer halos */
    CHECK_MSG(above1e3 > 6 * above1e4 && above1e3 < 10 * above1e4, "%llu %llu", (unsigned long long)above1e3,
              (unsigned long long)above1e4);
    CHECK(sum == m.nhalo_particles && sum + m.nbackground == p.n);
    CHECK(sum <= (uint64_t)(0.55 * p.n) && sum > (uint64_t)(0.55 * p.n) - 1000);
    fk_mock_free(&m);

    /* the big halo comes first, dense */
    fk_mock_defaults(&p, 100000);
    p.big_halo = 20000;
    CHECK_MSG(fk_mock_plan(&m, &p, &err) == FK_OK, "%s", err.msg);
    CHECK(m.halo[0].npart == 20000 && m.halo[0].first == 0 && m.halo[0].c == 15 && m.halo[1].first == 20000);
    CHECK(m.nhalo_particles - 20000 <= (uint64_t)(0.55 * 80000));
    fk_mock_free(&m);
    /* its shape and place as asked; the other halos unchanged */
    fk_mock m2;
    p.big_c = 10, p.big_r200 = 0.04, p.big_placed = 1, p.big_centre[0] = -0.5, p.big_centre[2] = 0.25;
    CHECK_MSG(fk_mock_plan(&m2, &p, &err) == FK_OK, "%s", err.msg);
    CHECK(m2.halo[0].c == 10 && m2.halo[0].r200 == 0.04 && m2.halo[0].centre[0] == -0.5 && m2.halo[0].centre[1] == 0 &&
          m2.halo[0].centre[2] == 0.25);
    p.big_c = 0, p.big_r200 = 0, p.big_placed = 0;
    CHECK(fk_mock_plan(&m, &p, &err) == FK_OK && m.nhalo == m2.nhalo && m.halo[0].c == 15);
    for (uint64_t i = 1; i < m.nhalo; i++)
        CHECK(m.halo[i].npart == m2.halo[i].npart && m.halo[i].centre[0] == m2.halo[i].centre[0]);
    fk_mock_free(&m);
    fk_mock_free(&m2);
    p.big_r200 = 0.6; /* out of range */
    CHECK(fk_mock_plan(&m, &p, &err) == FK_EINVAL && strstr(err.msg, "radius"));
    fk_mock_free(&m);
    fk_error_clear(&err);
    p.big_r200 = 0, p.big_placed = 1, p.big_centre[1] = 0.5;
    CHECK(fk_mock_plan(&m, &p, &err) == FK_EINVAL && strstr(err.msg, "centre"));
    fk_mock_free(&m);
    p.big_placed = 0, p.big_centre[1] = 0;

    /* few particles: no halo fits, all background */
    fk_mock_defaults(&p, 100);
    CHECK(fk_mock_plan(&m, &p, &err) == FK_OK && m.nhalo == 0 && m.nbackground == 100);
    fk_mock_free(&m);

    /* bad parameters */
    static const struct {
        uint64_t n, big, minh, maxh;
        double frac;
        const char *msg;
    } bad[] = {
        {0, 0, 32, 0, 0.5, "the number of particles must be 1 to 2147483647, not 0"},
        {10, 0, 32, 0, 1.5, "the halo fraction must be within [0, 1], not 1.5"},
        {10, 11, 32, 0, 0.5, "the big halo (11 particles) does not fit in 10"},
        {10, 0, 32, 31, 0.5, "the largest halo (31) is smaller than the smallest (32)"},
        {10, 0, 0, 0, 0.5, "the smallest halo must have at least 1 particle"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fk_mock_defaults(&p, bad[i].n);
        p.big_halo = bad[i].big;
        p.min_halo = bad[i].minh;
        p.max_halo = bad[i].maxh;
        p.halo_fraction = bad[i].frac;
        fk_error_clear(&err);
        CHECK(fk_mock_plan(&m, &p, &err) == FK_EINVAL);
        CHECK_MSG(!strcmp(err.msg, bad[i].msg), "%s", err.msg);
        fk_mock_free(&m);
    }
}

static double periodic(double d)
{
    return d - floor(d + 0.5);
}

static void test_generate(void)
{
    const uint64_t n = 200000;
    fk_mock_params p;
    fk_mock m;
    fk_error err = {0};
    fk_mock_defaults(&p, n);
    CHECK_MSG(fk_mock_plan(&m, &p, &err) == FK_OK, "%s", err.msg);
    float *pos = malloc(n * 12), *vel = malloc(n * 12), *pos2 = malloc(n * 12), *vel2 = malloc(n * 12);
    fk_mock_generate(&m, 0, n, pos, vel);

    /* in ranges of odd sizes, and on one thread: the same bytes */
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    static const uint64_t steps[] = {1, 777, 4096, 12345, 100001};
    uint64_t at = 0;
    for (int k = 0; at < n; k = (k + 1) % 5) {
        uint64_t count = n - at < steps[k] ? n - at : steps[k];
        fk_mock_generate(&m, at, count, pos2 + 3 * at, vel2 + 3 * at);
        at += count;
    }
    omp_set_num_threads(threads);
    CHECK(memcmp(pos, pos2, n * 12) == 0 && memcmp(vel, vel2, n * 12) == 0);

    /* inside the box; every halo particle within r200 of its centre */
    uint64_t outside = 0, far = 0;
    for (uint64_t i = 0; i < 3 * n; i++) outside += !(pos[i] >= -0.5f && pos[i] < 0.5f);
    for (uint64_t h = 0; h < m.nhalo; h++)
        for (uint64_t i = m.halo[h].first; i < m.halo[h].first + m.halo[h].npart; i++) {
            double r2 = 0;
            for (int d = 0; d < 3; d++) r2 += pow(periodic(pos[3 * i + d] - m.halo[h].centre[d]), 2);
            far += sqrt(r2) > m.halo[h].r200 * (1 + 1e-6) + 1e-7;
        }
    CHECK(outside == 0 && far == 0);

    /* the largest halo: NFW mass inside rs, velocity dispersion */
    const fk_mock_halo *h = &m.halo[0];
    double rs = h->r200 / h->c, inner = 0, vsum[3] = {0, 0, 0}, v2 = 0;
    for (uint64_t i = h->first; i < h->first + h->npart; i++) {
        double r2 = 0;
        for (int d = 0; d < 3; d++) {
            r2 += pow(periodic(pos[3 * i + d] - h->centre[d]), 2);
            vsum[d] += vel[3 * i + d];
            v2 += pow(vel[3 * i + d] - h->vbulk[d], 2);
        }
        inner += r2 < rs * rs;
    }
    double expect = nfw_m(1) / nfw_m(h->c) * (double)h->npart;
    CHECK_MSG(fabs(inner - expect) < 4 * sqrt(expect), "%g particles inside rs, expected %g", inner, expect);
    double sigma = sqrt(v2 / (3.0 * (double)h->npart));
    CHECK_MSG(fabs(sigma / h->sigma - 1) < 0.02, "dispersion %g, expected %g", sigma, h->sigma);
    for (int d = 0; d < 3; d++) CHECK(fabs(vsum[d] / (double)h->npart - h->vbulk[d]) < 0.02 * h->sigma);

    /* the background: uniform, mean position near 0 */
    double mean[3] = {0, 0, 0};
    for (uint64_t i = m.nhalo_particles; i < n; i++)
        for (int d = 0; d < 3; d++) mean[d] += pos[3 * i + d];
    for (int d = 0; d < 3; d++) CHECK(fabs(mean[d] / (double)m.nbackground) < 0.01);

    /* another seed: another universe */
    fk_mock m2;
    p.seed = 7;
    CHECK(fk_mock_plan(&m2, &p, &err) == FK_OK && m2.nhalo == m.nhalo);
    fk_mock_generate(&m2, 0, n, pos2, vel2);
    uint64_t same = 0;
    for (uint64_t i = 0; i < 3 * n; i++) same += pos[i] == pos2[i];
    CHECK(same < n / 100);
    fk_mock_free(&m2);
    fk_mock_free(&m);
    free(pos);
    free(vel);
    free(pos2);
    free(vel2);
}

int main(void)
{
    test_nfw_radius();
    test_plan();
    test_generate();
    CHECK_DONE();
}
