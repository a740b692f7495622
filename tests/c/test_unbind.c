/* test_unbind.c - unbinding: a cluster with a stream through it, a pair of halos, exact O(n^2) energies of the result, the tree, groups of a stream. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "check.h"
#include "unbind.h"

#define TESTRAND_SEED 0x9e3779b97f4a7c15ull
#include "testrand.h"

typedef struct sample {
    size_t n;
    double *x, *y, *z, *vx, *vy, *vz, *m;
} sample;

static sample alloc_sample(size_t n)
{
    sample s = {n, malloc(n * 8), malloc(n * 8), malloc(n * 8), malloc(n * 8), malloc(n * 8), malloc(n * 8), malloc(n * 8)};
    if (!s.x || !s.y || !s.z || !s.vx || !s.vy || !s.vz || !s.m) abort();
    return s;
}

static void free_sample(sample *s)
{
    free(s->x), free(s->y), free(s->z), free(s->vx), free(s->vy), free(s->vz), free(s->m);
}

static fk_unbind_group view(const sample *s)
{
    return (fk_unbind_group){s->n, s->x, s->y, s->z, s->vx, s->vy, s->vz, s->m, NULL};
}

/* Members [from, from + n) of s: a Plummer sphere (G = 1) of scale a and mass M
 * about c moving at v, each member at speed f times the escape speed of the
 * analytic potential at its radius, in a random direction (bound for f < 1 up to
 * the softening and the sampling, with margin for f = 0.3). */
static void plummer(sample *s, size_t from, size_t n, double a, double M, const double c[3], const double v[3],
                    double f)
{
    for (size_t i = from; i < from + n; i++) {
        double u = urand() * 0.97, r = a / sqrt(pow(u, -2.0 / 3.0) - 1), d[3], e[3];
        direction(d);
        direction(e);
        double vesc = sqrt(2 * M / sqrt(r * r + a * a)), sp = f * vesc;
        s->x[i] = c[0] + r * d[0], s->y[i] = c[1] + r * d[1], s->z[i] = c[2] + r * d[2];
        s->vx[i] = v[0] + sp * e[0], s->vy[i] = v[1] + sp * e[1], s->vz[i] = v[2] + sp * e[2];
        s->m[i] = M / n;
    }
}

/* The exact energies of the members of S (flags) in S's frame, by an independent
 * double loop with 1 / sqrt; the largest, or -inf when S is empty. */
static double max_energy(const sample *s, const unsigned char *in, double G, double eps)
{
    double M = 0, v[3] = {0, 0, 0}, emax = -INFINITY;
    for (size_t i = 0; i < s->n; i++)
        if (in[i]) M += s->m[i], v[0] += s->m[i] * s->vx[i], v[1] += s->m[i] * s->vy[i], v[2] += s->m[i] * s->vz[i];
    for (int k = 0; k < 3; k++) v[k] /= M;
    for (size_t i = 0; i < s->n; i++) {
        if (!in[i]) continue;
        double phi = 0;
        for (size_t j = 0; j < s->n; j++) {
            if (j == i || !in[j]) continue;
            double dx = s->x[i] - s->x[j], dy = s->y[i] - s->y[j], dz = s->z[i] - s->z[j];
            phi -= G * s->m[j] / sqrt(dx * dx + dy * dy + dz * dz + eps * eps);
        }
        double u[3] = {s->vx[i] - v[0], s->vy[i] - v[1], s->vz[i] - v[2]};
        double e = 0.5 * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) + phi;
        if (e > emax) emax = e;
    }
    return emax;
}

static fk_unbind_params params(double eps)
{
    fk_unbind_params p = {0};
    fk_pot_defaults(&p.pot);
    p.pot.eps = eps;
    p.minbound = FK_UNBIND_MINBOUND;
    return p;
}

/* A bound cluster (1500 members, mass 1) and a stream of 300 members (mass 0.2)
 * flying through its centre at 10 times the central escape speed. */
static void test_stream(uint64_t nexact)
{
    fk_error err = {0};
    const size_t nc = 1500, ns = 300;
    sample s = alloc_sample(nc + ns);
    const double c[3] = {0, 0, 0}, v0[3] = {0.5, 0, 0}, a = 0.05;
    plummer(&s, 0, nc, a, 1, c, v0, 0.3);
    double vs = 10 * sqrt(2 / a);
    for (size_t i = nc; i < nc + ns; i++) {
        double t = (double)(i - nc) / ns - 0.5; /* a line through the centre, along y */
        s.x[i] = 0.002 * (urand() - 0.5), s.y[i] = 2 * t, s.z[i] = 0.002 * (urand() - 0.5);
        s.vx[i] = 0, s.vy[i] = vs, s.vz[i] = 0;
        s.m[i] = 0.2 / ns;
    }
    fk_unbind_params p = params(0.005);
    p.pot.nexact = nexact;
    unsigned char *b = malloc(s.n);
    fk_unbind_result r;
    fk_unbind_group g = view(&s);
    CHECK(fk_unbind(&g, &p, b, &r, &err) == FK_OK);
    size_t kept = 0, stream = 0;
    for (size_t i = 0; i < nc; i++) kept += b[i];
    for (size_t i = nc; i < s.n; i++) stream += b[i];
    CHECK_MSG(stream == 0, "%zu stream members kept (nexact %lu)", stream, (unsigned long)nexact);
    CHECK_MSG(kept == nc, "%zu of %zu cluster members kept (nexact %lu)", kept, nc, (unsigned long)nexact);
    CHECK(r.nbound == kept && r.passes >= 2);
    CHECK(fabs(r.mbound - 1) < 1e-9);
    /* exact energies of the result, independently: every member bound */
    CHECK(max_energy(&s, b, 1, 0.005) < 0);
    /* (removing every e >= 0 at once instead loses the whole cluster here: in the first
     * pass's frame, dragged by the stream by 0.2 / 1.2 vs, the cluster looks unbound) */
    free(b);
    free_sample(&s);
}

/* Two halos 1 apart (masses 1 and 0.5, a = 0.03) receding at 5 times the
 * escape speed of the pair: unbinding keeps the larger and drops the smaller;
 * each alone is bound. */
static void test_pair(void)
{
    fk_error err = {0};
    const size_t na = 800, nb = 400;
    sample s = alloc_sample(na + nb);
    const double ca[3] = {0, 0, 0}, cb[3] = {1, 0, 0}, a = 0.03;
    double vrel = 5 * sqrt(2 * 1.5 / 1.0);
    const double va[3] = {-vrel / 3, 0, 0}, vb[3] = {2 * vrel / 3, 0, 0};
    plummer(&s, 0, na, a, 1, ca, va, 0.3);
    plummer(&s, na, nb, a, 0.5, cb, vb, 0.3);
    for (size_t i = na; i < na + nb; i++) s.m[i] = 0.5 / nb;
    fk_unbind_params p = params(0.003);
    unsigned char *b = malloc(s.n);
    fk_unbind_result r;
    fk_unbind_group g = view(&s);
    CHECK(fk_unbind(&g, &p, b, &r, &err) == FK_OK);
    size_t ka = 0, kb = 0;
    for (size_t i = 0; i < na; i++) ka += b[i];
    for (size_t i = na; i < s.n; i++) kb += b[i];
    CHECK_MSG(ka == na && kb == 0, "kept %zu of A, %zu of B", ka, kb);
    CHECK(max_energy(&s, b, 1, 0.003) < 0);
    /* B alone (a subgroup of its own) is bound */
    sample sb = {nb, s.x + na, s.y + na, s.z + na, s.vx + na, s.vy + na, s.vz + na, s.m + na};
    fk_unbind_group gb = view(&sb);
    CHECK(fk_unbind(&gb, &p, b, &r, &err) == FK_OK);
    CHECK_MSG(r.nbound == nb, "B alone: %lu bound", (unsigned long)r.nbound);
    free(b);
    free_sample(&s);
}

/* A hot group (every member faster than escape): not bound, reported empty;
 * a small bound one below minbound is not bound either. */
static void test_unbound(void)
{
    fk_error err = {0};
    sample s = alloc_sample(200);
    const double c[3] = {0, 0, 0}, v[3] = {0, 0, 0};
    plummer(&s, 0, 200, 0.05, 1, c, v, 3.0);
    fk_unbind_params p = params(0.005);
    unsigned char *b = malloc(s.n);
    fk_unbind_result r;
    fk_unbind_group g = view(&s);
    CHECK(fk_unbind(&g, &p, b, &r, &err) == FK_OK);
    size_t kept = 0;
    for (size_t i = 0; i < s.n; i++) kept += b[i];
    CHECK_MSG(r.nbound == 0 && r.mbound == 0 && kept == 0, "hot group: %lu bound", (unsigned long)r.nbound);
    plummer(&s, 0, 200, 0.05, 1, c, v, 0.3);
    g.n = 8;
    CHECK(fk_unbind(&g, &p, b, &r, &err) == FK_OK && r.nbound == 0);
    p.minbound = 0;
    CHECK(fk_unbind(&g, &p, b, &r, &err) == FK_EINVAL);
    free(b);
    free_sample(&s);
}

/* Small random groups: the bound part by the library, then every member's exact
 * energy in it by the independent loop is negative, and for each removed member
 * the energy it had when removed was >= 0 (checked by redoing the passes from the
 * result: the result is a fixed point). */
static void test_random_groups(void)
{
    fk_error err = {0};
    int nonempty = 0, partial = 0;
    for (int t = 0; t < 30; t++) {
        size_t n = 20 + (size_t)(urand() * 200);
        sample s = alloc_sample(n);
        const double c[3] = {0, 0, 0}, v[3] = {0, 0, 0};
        plummer(&s, 0, n, 0.05, 1, c, v, 0.3 + 0.9 * urand());
        double hot = 0.6 * urand(); /* this share of the members 4 times faster */
        for (size_t i = 0; i < n; i++)
            if (urand() < hot) s.vx[i] *= 4, s.vy[i] *= 4, s.vz[i] *= 4;
        fk_unbind_params p = params(0.002 + 0.01 * urand());
        unsigned char *b = malloc(n), *b2 = malloc(n);
        fk_unbind_result r, r2;
        fk_unbind_group g = view(&s);
        CHECK(fk_unbind(&g, &p, b, &r, &err) == FK_OK);
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) kept += b[i];
        CHECK(kept == r.nbound);
        if (kept) {
            nonempty++;
            partial += kept < n;
            CHECK_MSG(max_energy(&s, b, 1, p.pot.eps) < 0, "group %d: a member of the bound part is unbound", t);
            /* the bound part, unbound again, is itself */
            sample k = alloc_sample(kept);
            size_t w = 0;
            for (size_t i = 0; i < n; i++)
                if (b[i])
                    k.x[w] = s.x[i], k.y[w] = s.y[i], k.z[w] = s.z[i], k.vx[w] = s.vx[i], k.vy[w] = s.vy[i],
                    k.vz[w] = s.vz[i], k.m[w] = s.m[i], w++;
            fk_unbind_group gk = view(&k);
            CHECK(fk_unbind(&gk, &p, b2, &r2, &err) == FK_OK && r2.nbound == kept && r2.passes == 1);
            free_sample(&k);
        }
        free(b), free(b2);
        free_sample(&s);
    }
    CHECK_MSG(nonempty >= 10 && partial >= 5, "%d bound, %d partly", nonempty, partial);
}

/* fk_unbind_halos over a stream of two groups (one straddling a periodic
 * boundary) and loose particles: the same as fk_unbind on each, any thread count. */
static void test_halos(void)
{
    fk_error err = {0};
    const size_t n1 = 600, n2 = 300, nl = 100, n = n1 + n2 + nl;
    sample s = alloc_sample(n);
    const double c1[3] = {0.49, 0, 0}, c2[3] = {-0.2, 0.2, 0.1}, v[3] = {0, 0, 0};
    plummer(&s, 0, n1, 0.02, 1, c1, v, 0.3);
    plummer(&s, n1, n2, 0.02, 0.5, c2, v, 2.0); /* hot: not bound */
    plummer(&s, n1 + n2, nl, 0.3, 1, v, v, 0.1);
    float *pos = malloc(n * 3 * sizeof *pos), *vel = malloc(n * 3 * sizeof *vel), *mass = malloc(n * sizeof *mass);
    uint32_t *grp = malloc(n * sizeof *grp);
    for (size_t i = 0; i < n; i++) {
        double q[3] = {s.x[i], s.y[i], s.z[i]};
        for (int k = 0; k < 3; k++) {
            q[k] -= floor(q[k] + 0.5);
            pos[3 * i + k] = (float)q[k];
        }
        vel[3 * i] = (float)s.vx[i], vel[3 * i + 1] = (float)s.vy[i], vel[3 * i + 2] = (float)s.vz[i];
        mass[i] = (float)s.m[i];
        grp[i] = i < n1 ? 1 : i < n1 + n2 ? 2 : 0;
    }
    fk_halo_input in = {n, pos, vel, mass, NULL, grp, 1, 1, -0.5, 0, 0, 0, NULL, 0};
    fk_halo h[2];
    CHECK(fk_halostats_compute(&in, 2, h, "test", &err) == FK_OK);
    fk_unbind_params p = params(0.002);
    unsigned char *b[2] = {malloc(n), malloc(n)};
    fk_halo hh[2][2];
    for (int th = 0; th < 2; th++) {
#ifdef _OPENMP
        omp_set_num_threads(th + 1);
#endif
        memcpy(hh[th], h, sizeof h);
        CHECK(fk_unbind_halos(&in, 2, hh[th], &p, b[th], &err) == FK_OK);
    }
    CHECK(memcmp(b[0], b[1], n) == 0 && memcmp(hh[0], hh[1], sizeof hh[0]) == 0);
    /* group 1 by fk_unbind on its unwrapped members, in stream order */
    sample g1 = alloc_sample(n1);
    for (size_t i = 0; i < n1; i++) {
        double q[3];
        for (int k = 0; k < 3; k++) {
            q[k] = (double)pos[3 * i + k] - (double)pos[3 * h[0].ref + k];
            q[k] -= nearbyint(q[k]);
        }
        g1.x[i] = q[0], g1.y[i] = q[1], g1.z[i] = q[2];
        g1.vx[i] = vel[3 * i], g1.vy[i] = vel[3 * i + 1], g1.vz[i] = vel[3 * i + 2], g1.m[i] = mass[i];
    }
    unsigned char *b1 = malloc(n1);
    fk_unbind_result r;
    fk_unbind_group gg = view(&g1);
    CHECK(fk_unbind(&gg, &p, b1, &r, &err) == FK_OK);
    CHECK(memcmp(b1, b[0], n1) == 0 && r.nbound == hh[0][0].n_bound && r.mbound == hh[0][0].mass_bound);
    CHECK_MSG(r.nbound == n1, "straddling group: %lu of %zu bound", (unsigned long)r.nbound, n1);
    CHECK(hh[0][1].n_bound == 0 && hh[0][1].mass_bound == 0);
    size_t loose = 0;
    for (size_t i = n1; i < n; i++) loose += b[0][i];
    CHECK(loose == 0);
    free(b1), free_sample(&g1);
    free(b[0]), free(b[1]), free(pos), free(vel), free(mass), free(grp);
    free_sample(&s);
}

int main(void)
{
    test_stream(FK_POT_NEXACT); /* exact sums */
    test_stream(100);           /* the tree from the first pass */
    test_pair();
    test_unbound();
    test_random_groups();
    test_halos();
    CHECK_DONE();
}
