/* test_gpu_unbind.c - every member's potential on the GPU (fk_gpu_pot_tree) against exact sums, and unbinding with it against the CPU's; skips without a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu.h"
#include "needgpu.h"
#include "unbind.h"

#define TESTRAND_SEED 0x5deece66dull
#include "testrand.h"

/* A Plummer cluster (G = 1, a = 0.05, mass 1) of nc members at 0.3 times the
 * escape speed, and a stream of ns members (mass 0.2) through its centre at
 * 10 times the central escape speed; masses of the cluster mixed (1 or 4). */
static void make(size_t nc, size_t ns, double *c[7])
{
    const double a = 0.05;
    double mc = 0;
    for (size_t i = 0; i < nc; i++) mc += i % 7 ? 1 : 4;
    for (size_t i = 0; i < nc; i++) {
        double u = urand() * 0.97, r = a / sqrt(pow(u, -2.0 / 3.0) - 1), d[3], e[3];
        direction(d), direction(e);
        double sp = 0.3 * sqrt(2 / sqrt(r * r + a * a));
        for (int k = 0; k < 3; k++) c[k][i] = r * d[k], c[3 + k][i] = sp * e[k];
        c[6][i] = (i % 7 ? 1 : 4) / mc;
    }
    for (size_t i = nc; i < nc + ns; i++) {
        double t = (double)(i - nc) / ns - 0.5;
        c[0][i] = 0.002 * (urand() - 0.5), c[1][i] = 2 * t, c[2][i] = 0.002 * (urand() - 0.5);
        c[3][i] = 0, c[4][i] = 10 * sqrt(2 / a), c[5][i] = 0;
        c[6][i] = 0.2 / ns;
    }
}

static int calls = 0;

/* fk_gpu_pot_tree in the shape of fk_pot_tree, counting its calls. */
static int gpu_tree(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_error *err)
{
    calls++;
    return fk_gpu_pot_tree(g, p, phi, NULL, err);
}

int main(void)
{
    int skip;
    if (!need_gpu(__FILE__, &skip)) return skip;
    fk_error err = {0};
    const size_t nc = 140000, ns = 10000, n = nc + ns;
    double *c[7];
    for (int k = 0; k < 7; k++) c[k] = malloc(n * sizeof *c[k]);
    make(nc, ns, c);
    fk_unbind_params p;
    fk_pot_defaults(&p.pot);
    p.pot.eps = 0.001;
    p.minbound = FK_UNBIND_MINBOUND;
    p.tree = NULL;

    /* potentials: the GPU's tree and the CPU's against exact sums (on the GPU, double): every
     * member within half the candidate window of the least potential (potential.h's bound) */
    fk_pot_members pm = {n, c[0], c[1], c[2], c[6]};
    double *ex = malloc(n * 8), *gt = malloc(n * 8), *ct = malloc(n * 8);
    CHECK(fk_gpu_pot_exact(&pm, p.pot.G, p.pot.eps, ex, NULL, &err) == FK_OK);
    CHECK(fk_gpu_pot_tree(&pm, &p.pot, gt, NULL, &err) == FK_OK);
    CHECK(fk_pot_tree(&pm, &p.pot, ct, NULL, &err) == FK_OK);
    double least = 0, dg = 0, dc = 0;
    for (size_t i = 0; i < n; i++) least = ex[i] < least ? ex[i] : least;
    for (size_t i = 0; i < n; i++) {
        dg = fmax(dg, fabs(gt[i] - ex[i]));
        dc = fmax(dc, fabs(ct[i] - ex[i]));
    }
    double bound = fk_pot_tolerance(&p.pot) / 2 * fabs(least);
    CHECK_MSG(dg <= bound, "GPU tree: largest error %g, bound %g", dg, bound);
    CHECK_MSG(dc <= bound, "CPU tree: largest error %g, bound %g", dc, bound);
    /* a group within the GPU's exact size: exact sums, as the CPU's to rounding */
    fk_pot_members small = {3000, c[0], c[1], c[2], c[6]};
    fk_pot_exact(&small, p.pot.G, p.pot.eps, ct);
    CHECK(fk_gpu_pot_tree(&small, &p.pot, gt, NULL, &err) == FK_OK);
    double ds = 0;
    for (size_t i = 0; i < 3000; i++) ds = fmax(ds, fabs(gt[i] - ct[i]) / fabs(ct[i]));
    CHECK_MSG(ds < 1e-12, "exact sums differ by %g relative", ds);

    /* unbinding with the GPU's tree and with the CPU's: the stream removed, the cluster
     * kept, the memberships the same but for members whose energy is within the
     * potentials' errors of 0 */
    fk_unbind_group g = {n, c[0], c[1], c[2], c[3], c[4], c[5], c[6], NULL};
    unsigned char *bc = malloc(n), *bg = malloc(n);
    fk_unbind_result rc, rg;
    CHECK(fk_unbind(&g, &p, bc, &rc, &err) == FK_OK);
    p.tree = gpu_tree;
    CHECK(fk_unbind(&g, &p, bg, &rg, &err) == FK_OK);
    CHECK(calls >= 1);
    size_t kc = 0, kg = 0, sc = 0, sg = 0, diff = 0;
    for (size_t i = 0; i < n; i++) {
        if (i < nc) kc += bc[i], kg += bg[i];
        else sc += bc[i], sg += bg[i];
        diff += bc[i] != bg[i];
    }
    CHECK_MSG(sc == 0 && sg == 0, "stream members kept: CPU %zu, GPU %zu", sc, sg);
    CHECK_MSG(kc >= nc - nc / 1000 && kg >= nc - nc / 1000, "cluster members kept: CPU %zu, GPU %zu of %zu", kc, kg, nc);
    CHECK_MSG(diff <= n / 10000, "%zu members bound on one device only", diff);

    /* fk_unbind_halos hands only its groups of more than FK_POT_ALONE members to the hook */
    float *pos = malloc(n * 12), *vel = malloc(n * 12), *mass = malloc(n * 4);
    uint32_t *grp = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) pos[3 * i + k] = (float)c[k][i], vel[3 * i + k] = (float)c[3 + k][i];
        mass[i] = (float)c[6][i];
        grp[i] = i < 100000 ? 1 : 2; /* 100000 members, then 50000 */
    }
    fk_halo_input in = {n, pos, vel, mass, NULL, grp, 0, 0, 0, 0, 0, 0, NULL, 0};
    fk_halo h[2];
    CHECK(fk_halostats_compute(&in, 2, h, "test", &err) == FK_OK);
    calls = 0;
    unsigned char *b = malloc(n);
    CHECK(fk_unbind_halos(&in, 2, h, &p, b, &err) == FK_OK);
    CHECK_MSG(calls >= 1 && calls <= 64, "%d calls", calls);
    fk_halo hc[2];
    memcpy(hc, h, sizeof h);
    unsigned char *b2 = malloc(n);
    p.tree = NULL;
    CHECK(fk_unbind_halos(&in, 2, hc, &p, b2, &err) == FK_OK);
    size_t d2 = 0;
    for (size_t i = 0; i < n; i++) d2 += b[i] != b2[i];
    CHECK_MSG(d2 <= n / 10000, "%zu members bound on one device only", d2);
    CHECK(h[1].n_bound == hc[1].n_bound); /* the smaller group: the CPU's tree both times */

    for (int k = 0; k < 7; k++) free(c[k]);
    free(ex), free(gt), free(ct), free(bc), free(bg), free(pos), free(vel), free(mass), free(grp), free(b), free(b2);
    CHECK_DONE();
}
