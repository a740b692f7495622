/* test_gpu_unbind_update.c - the GPU's unbinding update against a double loop, the GPU centres' kept potentials, and unbinding with both against the CPU's; skips without a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu.h"
#include "halostats.h"
#include "needgpu.h"
#include "unbind.h"

#define TESTRAND_SEED 0x7a3c5e1f2b4d6987ull
#include "testrand.h"

/* A Plummer cluster of nc members (G = 1, a = 0.05, mass 1) at up to 1.1
 * times the escape speed, in a box of side 1 of nb background members (mass
 * 0.5) at 3 times the central escape speed. c: x y z vx vy vz m. */
static void cluster(double *c[7], size_t nc, size_t nb)
{
    for (size_t i = 0; i < nc; i++) {
        double u = urand() * 0.97, r = 0.05 / sqrt(pow(u, -2.0 / 3.0) - 1), d[3], e[3];
        direction(d), direction(e);
        double sp = 1.1 * urand() * sqrt(2 / sqrt(r * r + 0.0025));
        for (int k = 0; k < 3; k++) c[k][i] = r * d[k], c[3 + k][i] = sp * e[k];
        c[6][i] = 1.0 / nc;
    }
    for (size_t i = nc; i < nc + nb; i++) {
        double d[3];
        direction(d);
        for (int k = 0; k < 3; k++) c[k][i] = urand() - 0.5, c[3 + k][i] = 3 * sqrt(2 / 0.05) * d[k];
        c[6][i] = 0.5 / nb;
    }
}

static int gpu_tree(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_error *err)
{
    return fk_gpu_pot_tree(g, p, phi, NULL, err);
}

static int gpu_minima(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err)
{
    return fk_gpu_pot_minima(g, p, min, NULL, err);
}

static int updates = 0;

static int gpu_update(const fk_pot_members *stay, double *phi, const fk_pot_members *leave, double G, double eps,
                      fk_error *err)
{
    updates++;
    return fk_gpu_unbind_update(stay, phi, leave, G, eps, err);
}

/* fk_gpu_unbind_update against a plain double loop with 1 / sqrt. */
static void test_update(void)
{
    fk_error err = {0};
    const size_t ns = 70000, nu = 3000;
    double *s[4], *l[4], *phi = malloc(ns * 8), *ref = malloc(ns * 8);
    for (int k = 0; k < 4; k++) s[k] = malloc(ns * 8), l[k] = malloc(nu * 8);
    for (size_t i = 0; i < ns; i++) {
        for (int k = 0; k < 3; k++) s[k][i] = urand() - 0.5;
        s[3][i] = urand();
        phi[i] = ref[i] = -urand();
    }
    for (size_t q = 0; q < nu; q++)
        for (int k = 0; k < 4; k++) l[k][q] = k < 3 ? urand() - 0.5 : urand();
    const double G = 2.5, eps = 0.01;
    fk_pot_members stay = {ns, s[0], s[1], s[2], s[3]}, leave = {nu, l[0], l[1], l[2], l[3]};
    CHECK(fk_gpu_unbind_update(&stay, phi, &leave, G, eps, &err) == FK_OK);
    double worst = 0;
    for (size_t i = 0; i < ns; i++) {
        double t = 0;
        for (size_t q = 0; q < nu; q++) {
            double dx = s[0][i] - l[0][q], dy = s[1][i] - l[1][q], dz = s[2][i] - l[2][q];
            t += l[3][q] / sqrt(dx * dx + dy * dy + dz * dz + eps * eps);
        }
        ref[i] += G * t;
        worst = fmax(worst, fabs(phi[i] - ref[i]) / fabs(G * t));
    }
    CHECK_MSG(worst < 1e-12, "update: largest relative difference %g", worst);
    /* nothing to take off: phi unchanged */
    memcpy(ref, phi, ns * 8);
    leave.n = 0;
    CHECK(fk_gpu_unbind_update(&stay, phi, &leave, G, eps, &err) == FK_OK && memcmp(ref, phi, ns * 8) == 0);
    for (int k = 0; k < 4; k++) free(s[k]), free(l[k]);
    free(phi), free(ref);
}

/* halostats --unbind --device=gpu's path: the GPU centres keep their
 * potentials (exact sums for a group within the CPU's exact size: as the
 * CPU's to rounding), the unbinding starts from them with the GPU's tree and updates
 * for the group of more than FK_POT_ALONE members; the memberships agree
 * with the CPU's but for members within the potentials' errors of 0. */
static void test_halos(void)
{
    fk_error err = {0};
    const size_t n1 = 150000, n2 = 1500, n = n1 + n2;
    double *c[7];
    for (int k = 0; k < 7; k++) c[k] = malloc(n * 8);
    cluster(c, n1 - 10000, 10000);
    for (size_t i = n1; i < n; i++) {
        double d[3];
        direction(d);
        double r = 0.02 * urand();
        for (int k = 0; k < 3; k++) c[k][i] = 3 + r * d[k], c[3 + k][i] = 0.01 * urand(), c[6][i] = 1e-4;
    }
    float *pos = malloc(n * 12), *vel = malloc(n * 12), *mass = malloc(n * 4);
    uint32_t *grp = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) pos[3 * i + k] = (float)c[k][i], vel[3 * i + k] = (float)c[3 + k][i];
        mass[i] = (float)c[6][i];
        grp[i] = i < n1 ? 1 : 2;
    }
    fk_halo_input in = {n, pos, vel, mass, NULL, grp, 0, 0, 0, 0, 0, 0, NULL, 0};
    fk_pot_params pot;
    fk_pot_defaults(&pot);
    pot.eps = 0.001;
    fk_halo hc[2], hg[2];
    double *pc = malloc(n * 8), *pg = malloc(n * 8);
    CHECK(fk_halostats_compute(&in, 2, hc, "test", &err) == FK_OK);
    memcpy(hg, hc, sizeof hc);
    CHECK(fk_halostats_centres_phi(&in, 2, FK_CENTRE_MBP, &pot, NULL, hc, NULL, pc, &err) == FK_OK);
    CHECK(fk_halostats_centres_phi(&in, 2, FK_CENTRE_MBP, &pot, gpu_minima, hg, NULL, pg, &err) == FK_OK);
    /* group 2 (exact on both): to rounding; group 1 (trees): within the trees' bound */
    double least = 0, d1 = 0, d2 = 0;
    for (size_t i = 0; i < n1; i++) least = fmin(least, pc[i]);
    for (size_t i = 0; i < n1; i++) d1 = fmax(d1, fabs(pg[i] - pc[i]));
    for (size_t i = n1; i < n; i++) d2 = fmax(d2, fabs(pg[i] - pc[i]) / fabs(pc[i]));
    CHECK_MSG(d1 <= fk_pot_tolerance(&pot) * fabs(least), "kept tree potentials differ by %g", d1);
    CHECK_MSG(d2 < 1e-12, "kept exact potentials differ by %g relative", d2);
    fk_unbind_params p = {pot, FK_UNBIND_MINBOUND, NULL, NULL};
    unsigned char *bc = malloc(n), *bg = malloc(n);
    CHECK(fk_unbind_halos_phi(&in, 2, hc, &p, pc, bc, &err) == FK_OK);
    p.tree = gpu_tree, p.update = gpu_update;
    CHECK(fk_unbind_halos_phi(&in, 2, hg, &p, pg, bg, &err) == FK_OK);
    CHECK_MSG(updates >= 1, "%d GPU updates", updates);
    size_t diff = 0, back = 0;
    for (size_t i = 0; i < n; i++) diff += bc[i] != bg[i];
    for (size_t i = n1 - 10000; i < n1; i++) back += bc[i] + bg[i];
    CHECK_MSG(back == 0, "%zu background members kept", back);
    CHECK_MSG(hc[0].n_bound > n1 / 2 && hc[1].n_bound == n2, "bound: %lu, %lu", (unsigned long)hc[0].n_bound,
              (unsigned long)hc[1].n_bound);
    CHECK_MSG(diff <= n / 10000, "%zu members bound on one device only", diff);
    for (int k = 0; k < 7; k++) free(c[k]);
    free(pos), free(vel), free(mass), free(grp), free(pc), free(pg), free(bc), free(bg);
}

int main(void)
{
    int skip;
    if (!need_gpu(__FILE__, &skip)) return skip;
    test_update();
    test_halos();
    CHECK_DONE();
}
