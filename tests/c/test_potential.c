/* test_potential.c - softened potentials: exact sums against an independent loop and hand values, the tree against them, minima. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "check.h"
#include "potential.h"

#define TESTRAND_SEED 0x9e3779b97f4a7c15ull
#include "testrand.h"

/* A sample: n members, structure of arrays. */
typedef struct sample {
    size_t n;
    double *x, *y, *z, *m;
} sample;

static sample alloc_sample(size_t n)
{
    sample s = {n, malloc(n * 8), malloc(n * 8), malloc(n * 8), malloc(n * 8)};
    if (!s.x || !s.y || !s.z || !s.m) abort();
    return s;
}

static void free_sample(sample *s)
{
    free(s->x), free(s->y), free(s->z), free(s->m);
}

static fk_pot_members view(const sample *s)
{
    return (fk_pot_members){s->n, s->x, s->y, s->z, s->m};
}

/* A Plummer sphere of scale radius a about c, total mass M, masses varying
 * by a factor 3 (radius from the inverse of M(<r) = M r^3 / (r^2 + a^2)^1.5,
 * capped at 20 a). */
static sample plummer(size_t n, double a, double M, double cx)
{
    sample s = alloc_sample(n);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double u;
        do u = urand();
        while (u <= 0 || u > 0.999);
        double r = a / sqrt(pow(u, -2.0 / 3.0) - 1);
        double ct = 2 * urand() - 1, ph = 6.283185307179586 * urand(), st = sqrt(1 - ct * ct);
        s.x[i] = cx + r * st * cos(ph), s.y[i] = r * st * sin(ph), s.z[i] = r * ct;
        s.m[i] = 1 + 2 * urand();
        sum += s.m[i];
    }
    for (size_t i = 0; i < n; i++) s.m[i] *= M / sum;
    return s;
}

/* The reference: phi_i = -G sum_{j != i} m_j / sqrt(r^2 + eps^2), written
 * plainly (every j for every i, 1.0 / sqrt), in long double. */
static void reference(const sample *s, double G, double eps, double *phi)
{
    for (size_t i = 0; i < s->n; i++) {
        long double acc = 0;
        for (size_t j = 0; j < s->n; j++) {
            if (j == i) continue;
            long double dx = (long double)s->x[i] - s->x[j], dy = (long double)s->y[i] - s->y[j],
                        dz = (long double)s->z[i] - s->z[j];
            acc += s->m[j] / sqrtl(dx * dx + dy * dy + dz * dz + (long double)eps * eps);
        }
        phi[i] = (double)(-G * acc);
    }
}

static double maxrel(const double *a, const double *b, size_t n)
{
    double w = 0;
    for (size_t i = 0; i < n; i++) {
        double r = fabs(a[i] - b[i]) / fabs(b[i]);
        if (r > w) w = r;
    }
    return w;
}

static size_t argmin(const double *phi, size_t n)
{
    size_t b = 0;
    for (size_t i = 1; i < n; i++)
        if (phi[i] < phi[b]) b = i;
    return b;
}

static fk_pot_params params(double G, double eps, double theta)
{
    fk_pot_params p;
    fk_pot_defaults(&p);
    p.G = G, p.eps = eps, p.theta = theta;
    return p;
}

static void test_hand_values(void)
{
    /* two members 3 apart, eps 4: phi = -G m_other / 5 */
    double x[3] = {0, 3, 0}, y[3] = {0, 0, 0}, z[3] = {0, 0, 4}, m[3] = {2, 5, 0};
    fk_pot_members g = {2, x, y, z, m};
    double phi[3];
    fk_pot_exact(&g, 0.5, 4, phi);
    CHECK(fabs(phi[0] - (-0.5 * 5 / 5)) < 1e-15 && fabs(phi[1] - (-0.5 * 2 / 5)) < 1e-15);
    /* a third member of mass 0 at (0, 0, 4) feels both, and adds nothing */
    g.n = 3;
    fk_pot_exact(&g, 1, 3, phi);
    CHECK(fabs(phi[0] - (-5 / sqrt(18.0))) < 1e-15);
    CHECK(fabs(phi[2] - (-2 / sqrt(25.0) - 5 / sqrt(34.0))) < 1e-15);
    CHECK(fabs(fk_pot_exact_at(&g, 1, 3, 2) - phi[2]) < 1e-15);
    /* one member: nothing else, phi 0; its minimum is itself */
    g.n = 1;
    fk_pot_exact(&g, 1, 3, phi);
    CHECK(phi[0] == 0);
    fk_pot_min mn;
    fk_pot_params p = params(1, 3, 0.5);
    fk_error err = {0};
    CHECK(fk_pot_minimum(&g, &p, &mn, &err) == FK_OK && mn.index == 0 && mn.phi == 0);
    p.nexact = 0; /* the tree, for one member */
    CHECK(fk_pot_minimum(&g, &p, &mn, &err) == FK_OK && mn.index == 0 && mn.phi == 0 && mn.method == FK_POT_BY_TREE);
}

static void test_exact_against_reference(void)
{
    sample s = plummer(700, 0.1, 3, 0.25);
    double *a = malloc(s.n * 8), *b = malloc(s.n * 8);
    fk_pot_members g = view(&s);
    fk_pot_exact(&g, 2.5, 0.01, a);
    reference(&s, 2.5, 0.01, b);
    double w = maxrel(a, b, s.n);
    CHECK_MSG(w < 1e-13, "exact against the reference: %g", w);
    for (size_t i = 0; i < s.n; i += 37) {
        double r = fabs(fk_pot_exact_at(&g, 2.5, 0.01, i) - b[i]) / fabs(b[i]);
        CHECK_MSG(r < 1e-13, "member %zu: %g", i, r);
    }
    free(a), free(b), free_sample(&s);
}

/* The tree's largest relative error at theta; checks it is below limit and
 * that the tree does not depend on the number of threads. */
static void tree_case(const sample *s, double theta, double limit, const double *ref)
{
    fk_pot_params p = params(1, 0.005, theta);
    fk_pot_members g = view(s);
    double *a = malloc(s->n * 8), *b = malloc(s->n * 8);
    fk_error err = {0};
    fk_pot_tree_stats st;
    CHECK(fk_pot_tree(&g, &p, a, &st, &err) == FK_OK);
    double w = maxrel(a, ref, s->n);
    CHECK_MSG(w < limit, "theta %g: largest relative error %g (limit %g)", theta, w, limit);
    CHECK(st.nodes > 1 && st.groups >= s->n / FK_POT_GROUP && st.node_terms > 0 && st.particle_terms > 0);
#ifdef _OPENMP
    int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    CHECK(fk_pot_tree(&g, &p, b, NULL, &err) == FK_OK);
    omp_set_num_threads(nt);
    CHECK_MSG(memcmp(a, b, s->n * 8) == 0, "theta %g: one thread gives other potentials", theta);
#endif
    free(a), free(b);
}

static void test_tree(void)
{
    /* Measured maxima on this sample: 1.2e-4 (theta 0.5), 7.1e-4 (theta 1);
     * the limits leave headroom and stay below the automatic window
     * FK_POT_TOL_COEF theta^4 / 2 that the minimum relies on. */
    sample s = plummer(6000, 0.05, 1, 0);
    double *ref = malloc(s.n * 8);
    fk_pot_members g = view(&s);
    fk_pot_exact(&g, 1, 0.005, ref);
    tree_case(&s, 0.5, 2.5e-4, ref);
    tree_case(&s, 1.0, 2e-3, ref);
    /* smaller angles are more accurate */
    fk_pot_params p = params(1, 0.005, 0.3);
    double *a = malloc(s.n * 8);
    fk_error err = {0};
    CHECK(fk_pot_tree(&g, &p, a, NULL, &err) == FK_OK);
    CHECK_MSG(maxrel(a, ref, s.n) < 5e-5, "theta 0.3: %g", maxrel(a, ref, s.n));

    /* the minimum by the tree (nexact 0) is the exact one, potential exact */
    size_t best = argmin(ref, s.n);
    for (double th = 0.5; th <= 1.0; th += 0.25) {
        p = params(1, 0.005, th);
        p.nexact = 0;
        fk_pot_min mn;
        CHECK(fk_pot_minimum(&g, &p, &mn, &err) == FK_OK);
        CHECK_MSG(mn.index == best && mn.method == FK_POT_BY_TREE && mn.candidates >= 1,
                  "theta %g: member %zu, exact %zu", th, (size_t)mn.index, best);
        CHECK(fabs(mn.phi - ref[best]) <= 1e-13 * fabs(ref[best]));
    }
    /* by exact sums */
    p.nexact = s.n;
    fk_pot_min mn;
    CHECK(fk_pot_minimum(&g, &p, &mn, &err) == FK_OK && mn.index == best && mn.method == FK_POT_BY_EXACT);
    CHECK(mn.phi == ref[best]);
    free(a), free(ref), free_sample(&s);
}

static void test_degenerate(void)
{
    /* every member at one point: the tree must still split and end; exact
     * and tree agree (each member sees n-1 others at distance 0) */
    sample s = alloc_sample(300);
    for (size_t i = 0; i < s.n; i++) s.x[i] = s.y[i] = s.z[i] = 0.5, s.m[i] = 1;
    double *a = malloc(s.n * 8), *b = malloc(s.n * 8);
    fk_pot_params p = params(1, 0.1, 0.5);
    fk_pot_members g = view(&s);
    fk_error err = {0};
    CHECK(fk_pot_tree(&g, &p, a, NULL, &err) == FK_OK);
    fk_pot_exact(&g, 1, 0.1, b);
    CHECK(fabs(b[0] - (-299 / 0.1)) < 1e-9);
    CHECK_MSG(maxrel(a, b, s.n) < 1e-6, "coincident members: %g", maxrel(a, b, s.n));
    /* all masses 0: all potentials 0, the first member is the minimum */
    for (size_t i = 0; i < s.n; i++) s.m[i] = 0, s.x[i] = (double)i;
    CHECK(fk_pot_tree(&g, &p, a, NULL, &err) == FK_OK);
    int zero = 1;
    for (size_t i = 0; i < s.n; i++) zero &= a[i] == 0;
    CHECK(zero);
    p.nexact = 0;
    fk_pot_min mn;
    CHECK(fk_pot_minimum(&g, &p, &mn, &err) == FK_OK && mn.index == 0 && mn.phi == 0);
    free(a), free(b), free_sample(&s);
}

static void test_minima(void)
{
    /* nine groups, sizes on both sides of nexact = 500, concatenated */
    size_t sizes[9] = {1, 2, 3, 499, 500, 501, 1500, 20, 2600};
    size_t total = 0;
    for (int k = 0; k < 9; k++) total += sizes[k];
    sample all = alloc_sample(total);
    uint64_t first[10] = {0};
    for (int k = 0; k < 9; k++) {
        sample s = plummer(sizes[k], 0.02 * (k + 1), 1 + k, 0.1 * k);
        memcpy(all.x + first[k], s.x, sizes[k] * 8), memcpy(all.y + first[k], s.y, sizes[k] * 8);
        memcpy(all.z + first[k], s.z, sizes[k] * 8), memcpy(all.m + first[k], s.m, sizes[k] * 8);
        first[k + 1] = first[k] + sizes[k];
        free_sample(&s);
    }
    fk_pot_params p = params(2, 0.004, 0.7);
    p.nexact = 500;
    fk_pot_groups pg = {9, first, all.x, all.y, all.z, all.m, NULL};
    fk_pot_min mins[9];
    fk_error err = {0};
    CHECK_MSG(fk_pot_minima(&pg, &p, mins, &err) == FK_OK, "%s", err.msg);
    for (int k = 0; k < 9; k++) {
        sample s = {sizes[k], all.x + first[k], all.y + first[k], all.z + first[k], all.m + first[k]};
        double *ref = malloc(s.n * 8);
        reference(&s, 2, 0.004, ref);
        size_t best = argmin(ref, s.n);
        CHECK_MSG(mins[k].index == best, "group %d: member %zu, exact %zu", k, (size_t)mins[k].index, best);
        CHECK(fabs(mins[k].phi - ref[best]) <= 1e-13 * fabs(ref[best]) || (s.n == 1 && mins[k].phi == 0));
        CHECK(mins[k].method == (s.n > 500 ? FK_POT_BY_TREE : FK_POT_BY_EXACT));
        free(ref);
    }
    /* bad offsets: a group with no member */
    first[2] = first[1];
    CHECK(fk_pot_minima(&pg, &p, mins, &err) == FK_EINVAL);
    free_sample(&all);
}

static void test_params(void)
{
    fk_pot_params p;
    fk_pot_defaults(&p);
    CHECK(p.theta == FK_POT_THETA && p.nexact == FK_POT_NEXACT && p.G == 1 && p.ncand == FK_POT_NCAND);
    fk_error err = {0};
    CHECK(fk_pot_check(&p, &err) == FK_EINVAL && strstr(err.msg, "softening")); /* eps has no default */
    p.eps = 0.1;
    fk_error_clear(&err);
    CHECK(fk_pot_check(&p, &err) == FK_OK);
    CHECK(fabs(fk_pot_tolerance(&p) - FK_POT_TOL_COEF * pow(FK_POT_THETA, 4)) < 1e-15);
    p.tol = 0.01;
    CHECK(fk_pot_tolerance(&p) == 0.01);
    struct {
        double G, eps, theta, tol;
        const char *word;
    } bad[] = {{0, 1, 0.5, 0, "G"},          {1, -1, 0.5, 0, "softening"}, {1, NAN, 0.5, 0, "softening"},
               {1, 1, 0, 0, "opening"},      {1, 1, 1.01, 0, "opening"},   {1, 1, 0.5, -1, "tolerance"},
               {INFINITY, 1, 0.5, 0, "G"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        fk_pot_defaults(&p);
        p.G = bad[k].G, p.eps = bad[k].eps, p.theta = bad[k].theta, p.tol = bad[k].tol;
        fk_error_clear(&err);
        CHECK_MSG(fk_pot_check(&p, &err) == FK_EINVAL && strstr(err.msg, bad[k].word), "case %zu: %s", k, err.msg);
    }
}

int main(void)
{
    test_hand_values();
    test_exact_against_reference();
    test_tree();
    test_degenerate();
    test_minima();
    test_params();
    CHECK_DONE();
}
