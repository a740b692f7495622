/* test_spacing.c - the mean spacing of -b by hand: uniform, zoom-in, gas and dark, zero masses; sums split and added equal the whole; the spec parser. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <omp.h>

#include "check.h"
#include "snap.h"
#include "spacing.h"

#define TESTRAND_SEED 0x5ba1c1a9d0e77ull
#include "testrand.h"

static double neff_of(const char *spec, const float *mass, const uint8_t *type, uint64_t n)
{
    fk_spacing_spec sp;
    fk_spacing_sums s;
    fk_error err = {0};
    double v = -1;
    if (fk_spacing_parse(spec, &sp, &err) || fk_spacing_sum(mass, type, n, &s, "t", &err) ||
        fk_spacing_neff(&sp, &s, &v, &err))
        return -1;
    return v;
}

int main(void)
{
    /* a uniform box: n exactly, whatever the spec but a mass */
    const float two[8] = {2, 2, 2, 2, 2, 2, 2, 2};
    CHECK(neff_of("lightest", two, NULL, 8) == 8 && neff_of("all", two, NULL, 8) == 8);
    CHECK(neff_of("dark", two, NULL, 8) == 8 && neff_of("4", two, NULL, 8) == 4);
    CHECK(neff_of("all", NULL, NULL, 5) == 5 && neff_of("lightest", NULL, NULL, 5) == 5); /* no MASS: counts */

    /* a zoom-in: eight particles of mass 1 and one of 64: the box would hold 72 of the lightest */
    const float zoom[9] = {1, 1, 1, 1, 64, 1, 1, 1, 1};
    CHECK(neff_of("lightest", zoom, NULL, 9) == 72);
    CHECK(neff_of("all", zoom, NULL, 9) == 9);
    CHECK(neff_of("dark", zoom, NULL, 9) == 72);
    CHECK(neff_of("gas", zoom, NULL, 9) == -1); /* no gas to take the spacing of */
    fk_spacing_sums s;
    fk_error err = {0};
    int t = -1;
    CHECK(fk_spacing_sum(zoom, NULL, 9, &s, "t", &err) == FK_OK && fk_spacing_spread(&s, &t) == 64 && t == FK_DARK);
    fk_spacing_spec all = {FK_SPACING_ALL, 0, 0}, gas;
    CHECK(fk_spacing_parse("gas", &gas, &err) == FK_OK);
    double v;
    fk_error_clear(&err);
    CHECK(fk_spacing_neff(&gas, &s, &v, &err) == FK_EINVAL);
    CHECK_MSG(!strcmp(err.msg, "-b: the stream has no particles to take the mean spacing of (--spacing=types gas)"), "%s",
              err.msg);
    CHECK(fk_spacing_neff(&all, &s, &v, &err) == FK_OK && v == 9);

    /* gas and dark, each of one mass: each type's count, n (not the gas's spacing over all the mass) */
    const float hydro[8] = {1, 6.5f, 1, 6.5f, 1, 6.5f, 1, 6.5f};
    const uint8_t types[8] = {FK_GAS, FK_DARK, FK_GAS, FK_DARK, FK_GAS, FK_DARK, FK_GAS, FK_DARK};
    CHECK(neff_of("lightest", hydro, types, 8) == 8);
    CHECK(neff_of("dark", hydro, types, 8) == 4);
    CHECK(neff_of("gas,dark", hydro, types, 8) == 8);
    CHECK(neff_of("1", hydro, types, 8) == 30); /* 4 + 26 of mass 1 */
    CHECK(fk_spacing_sum(hydro, types, 8, &s, "t", &err) == FK_OK && fk_spacing_spread(&s, &t) == 1);

    /* masses 0: counted */
    const float zero[3] = {0, 0, 0};
    CHECK(neff_of("lightest", zero, NULL, 3) == 3);
    /* one type's masses vary: M / m_min */
    const float vary[4] = {1, 2, 3, 4};
    CHECK(neff_of("lightest", vary, NULL, 4) == 10);

    /* sums are exact and order-free: two halves added equal the whole, bit for bit */
    enum { N = 10000 };
    static float m[N];
    static uint8_t ty[N];
    for (int i = 0; i < N; i++) m[i] = (float)(pow(10, 6 * urand() - 9)), ty[i] = (uint8_t)(i % 3);
    fk_spacing_sums whole, a, b;
    CHECK(fk_spacing_sum(m, ty, N, &whole, "t", &err) == FK_OK);
    CHECK(fk_spacing_sum(m, ty, 3333, &a, "t", &err) == FK_OK && fk_spacing_sum(m + 3333, ty + 3333, N - 3333, &b, "t", &err) == FK_OK);
    fk_spacing_add(&b, &a);
    CHECK(memcmp(&whole, &b, sizeof whole) == 0);
    /* and the same for any number of threads (blocks of 65536 summed apart, then added) */
    static float big[200000];
    static uint8_t bigty[200000];
    for (int i = 0; i < 200000; i++) big[i] = m[i % N] * (float)(1 + i % 7), bigty[i] = ty[i % N];
    fk_spacing_sums one, three;
    omp_set_num_threads(1);
    CHECK(fk_spacing_sum(big, bigty, 200000, &one, "t", &err) == FK_OK);
    omp_set_num_threads(3);
    CHECK(fk_spacing_sum(big, bigty, 200000, &three, "t", &err) == FK_OK);
    CHECK(memcmp(&one, &three, sizeof one) == 0);
    for (int k = 0; k < 3; k++) {
        double sum = 0;
        for (int i = k; i < N; i += 3) sum += m[i];
        CHECK(fabs(fk_spacing_mass(&whole, k) - sum) <= 1e-12 * sum);
    }

    /* bad masses name the particle */
    const float bad[3] = {1, -1, 1};
    fk_error_clear(&err);
    CHECK(fk_spacing_sum(bad, NULL, 3, &s, "in.fof", &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "in.fof: particle 1 has mass -1 (masses must be finite and >= 0)"), "%s", err.msg);

    /* the spec: keywords, types, a mass; errors name the operand */
    fk_spacing_spec sp;
    char name[64];
    CHECK(fk_spacing_parse("gas,star", &sp, &err) == FK_OK && sp.kind == FK_SPACING_TYPES && sp.types == 5u);
    CHECK(!strcmp(fk_spacing_name(&sp, name, sizeof name), "types gas,star"));
    CHECK(fk_spacing_parse("3.5e-7", &sp, &err) == FK_OK && sp.kind == FK_SPACING_MASS && sp.mass == 3.5e-7);
    CHECK(!strcmp(fk_spacing_name(&sp, name, sizeof name), "mass 3.5e-07"));
    const char *wrong[] = {"heavy", "dark,", "dark,,gas", "", "-1", "0", "nan"};
    for (size_t k = 0; k < sizeof wrong / sizeof *wrong; k++) CHECK_MSG(fk_spacing_parse(wrong[k], &sp, &err) == FK_EINVAL, "%s", wrong[k]);
    fk_error_clear(&err);
    CHECK(fk_spacing_parse("heavy", &sp, &err) == FK_EINVAL);
    CHECK_MSG(!strcmp(err.msg, "option --spacing needs lightest, all, types (gas, dark, star) or a mass, not 'heavy'"), "%s",
              err.msg);
    CHECK_DONE();
}
