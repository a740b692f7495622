/* test_unbind_reuse.c - unbinding from the centres' kept potentials (the same answer as summing them again), the leavers' tree against exact sums, trees with massless members. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "halostats.h"
#include "unbind.h"

#define TESTRAND_SEED 0x2545f4914f6cdd1dull
#include "testrand.h"

/* Member i of c[7] (x y z vx vy vz m): a Plummer sphere (G = 1) of scale a and
 * mass M about ctr, at f times the local escape speed in a random direction. */
static void plummer(double *c[7], size_t i, double a, double M, size_t n, const double ctr[3], double f)
{
    double u = urand() * 0.97, r = a / sqrt(pow(u, -2.0 / 3.0) - 1), d[3], e[3];
    direction(d), direction(e);
    double sp = f * sqrt(2 * M / sqrt(r * r + a * a));
    for (int k = 0; k < 3; k++) c[k][i] = ctr[k] + r * d[k], c[3 + k][i] = sp * e[k];
    c[6][i] = M / n;
}

/* A cluster of nc members (mass 1, a = 0.05) in a box of side 1 of nb
 * background members (mass mb in all) moving at 3 times the central escape
 * speed: they leave, most in the first pass. The cluster's members at f
 * times their escape speed, f from 0 to fmax. */
static void cluster(double *c[7], size_t nc, size_t nb, double mb, double fmax)
{
    const double o[3] = {0, 0, 0};
    for (size_t i = 0; i < nc; i++) plummer(c, i, 0.05, 1, nc, o, fmax * urand());
    for (size_t i = nc; i < nc + nb; i++) {
        double d[3];
        direction(d);
        for (int k = 0; k < 3; k++) c[k][i] = urand() - 0.5, c[3 + k][i] = 3 * sqrt(2 / 0.05) * d[k];
        c[6][i] = mb / nb;
    }
}

/* The tree with massless members: what the leavers' tree relies on. phi of
 * every member from the members of mass (half of them, at random) against
 * exact sums, within half the candidate window (potential.h's bound). */
static void test_massless(void)
{
    fk_error err = {0};
    const size_t n = 30000;
    double *c[7], *tree = malloc(n * 8), *ex = malloc(n * 8);
    for (int k = 0; k < 7; k++) c[k] = malloc(n * 8);
    cluster(c, 20000, 10000, 0.1, 0.6);
    for (size_t i = 0; i < n; i++)
        if (urand() < 0.5) c[6][i] = 0;
    fk_pot_params p;
    fk_pot_defaults(&p);
    p.eps = 0.001;
    fk_pot_members g = {n, c[0], c[1], c[2], c[6]};
    CHECK(fk_pot_tree(&g, &p, tree, NULL, &err) == FK_OK);
    fk_pot_exact(&g, p.G, p.eps, ex);
    double least = 0, d = 0;
    for (size_t i = 0; i < n; i++) least = fmin(least, ex[i]);
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs(tree[i] - ex[i]));
    double bound = fk_pot_tolerance(&p) / 2 * fabs(least);
    CHECK_MSG(d <= bound, "tree with massless members: largest error %g, bound %g", d, bound);
    /* no mass at all: every potential 0 */
    for (size_t i = 0; i < n; i++) c[6][i] = 0;
    CHECK(fk_pot_tree(&g, &p, tree, NULL, &err) == FK_OK);
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i++) nonzero += tree[i] != 0;
    CHECK(nonzero == 0);
    for (int k = 0; k < 7; k++) free(c[k]);
    free(tree), free(ex);
}

/* A pass that removes more than FK_UNBIND_TREE_PAIRS members, but under
 * FK_UNBIND_LTREE_FRACTION of the group, takes their share off by their tree;
 * the membership is the one of exact sums but for members within the trees'
 * errors of 0 (at most one in 10000). The cluster's members have speeds up to
 * 1.1 times their escape speed, so that many are near e = 0, where the
 * background's share (a tenth of the potential) decides. */
static void test_leavers_tree(void)
{
    fk_error err = {0};
    const size_t nc = 20000, nb = 1500, n = nc + nb;
    double *c[7];
    for (int k = 0; k < 7; k++) c[k] = malloc(n * 8);
    cluster(c, nc, nb, 0.5, 1.1);
    fk_unbind_params p = {0};
    fk_pot_defaults(&p.pot);
    p.pot.eps = 0.001;
    p.minbound = FK_UNBIND_MINBOUND;
    fk_unbind_group g = {n, c[0], c[1], c[2], c[3], c[4], c[5], c[6], NULL};
    unsigned char *bt = malloc(n), *be = malloc(n);
    fk_unbind_result rt, re;
    CHECK(fk_unbind(&g, &p, bt, &rt, &err) == FK_OK);
    CHECK_MSG(rt.ltrees >= 1 && rt.sums >= 1, "%u leavers' trees, %u sums", rt.ltrees, rt.sums);
    p.pot.nexact = n; /* exact sums every pass */
    CHECK(fk_unbind(&g, &p, be, &re, &err) == FK_OK);
    CHECK(re.ltrees == 0);
    size_t kept = 0, back = 0, diff = 0;
    for (size_t i = 0; i < n; i++) {
        if (i < nc) kept += bt[i];
        else back += bt[i];
        diff += bt[i] != be[i];
    }
    CHECK_MSG(back == 0 && kept > nc / 2 && kept < nc - nc / 20, "kept %zu of the cluster's %zu, %zu of the background", kept, nc,
              back);
    CHECK_MSG(diff <= n / 10000, "%zu members bound by one method only", diff);
    for (int k = 0; k < 7; k++) free(c[k]);
    free(bt), free(be);
}

/* The centres' potentials kept (fk_halostats_centres_phi) are those of the
 * exact sums and of the tree over the same members, and unbinding from them
 * gives what unbinding from scratch gives, bit for bit: a group of more than
 * FK_POT_ALONE members (every thread, the tree), one of 3000 (a thread, the
 * tree) and one of 800 (exact sums), and loose particles. */
static void test_reuse(void)
{
    fk_error err = {0};
    const size_t n1 = FK_POT_ALONE + 4000, n2 = 3000, n3 = 800, nl = 500, n = n1 + n2 + n3 + nl;
    double *c[7];
    for (int k = 0; k < 7; k++) c[k] = malloc(n * 8);
    cluster(c, n1 - 3000, 3000, 0.1, 0.6);
    const double c2[3] = {3, 0, 0}, c3[3] = {0, 3, 0};
    for (size_t i = n1; i < n1 + n2; i++) plummer(c, i, 0.03, 0.1, n2, c2, i % 5 ? 0.3 : 1.5);
    for (size_t i = n1 + n2; i < n1 + n2 + n3; i++) plummer(c, i, 0.03, 0.05, n3, c3, i % 5 ? 0.3 : 1.5);
    for (size_t i = n1 + n2 + n3; i < n; i++)
        for (int k = 0; k < 3; k++) c[k][i] = 4 * urand() + 2, c[3 + k][i] = 0, c[6][i] = 1e-5;
    float *pos = malloc(n * 12), *vel = malloc(n * 12), *mass = malloc(n * 4);
    uint32_t *grp = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        size_t j = (i * 7919) % n; /* the groups' members interleaved in the stream */
        for (int k = 0; k < 3; k++) pos[3 * j + k] = (float)c[k][i], vel[3 * j + k] = (float)c[3 + k][i];
        mass[j] = (float)c[6][i];
        grp[j] = i < n1 ? 1 : i < n1 + n2 ? 2 : i < n1 + n2 + n3 ? 3 : 0;
    }
    fk_halo_input in = {n, pos, vel, mass, NULL, grp, 0, 0, 0, 0, 0, 0, NULL, 0};
    fk_halo h[3], hk[3];
    fk_pot_params pot;
    fk_pot_defaults(&pot);
    pot.eps = 0.001;
    double *phi = malloc(n * 8);
    for (size_t i = 0; i < n; i++) phi[i] = NAN;
    CHECK(fk_halostats_compute(&in, 3, h, "test", &err) == FK_OK);
    CHECK(fk_halostats_centres_phi(&in, 3, FK_CENTRE_MBP, &pot, NULL, h, NULL, phi, &err) == FK_OK);
    /* each group's kept potentials against its own sums over its members in stream order */
    for (uint32_t gi = 1; gi <= 3; gi++) {
        size_t m = 0;
        double *x = malloc(n * 8), *y = malloc(n * 8), *z = malloc(n * 8), *w = malloc(n * 8), *ref = malloc(n * 8);
        for (size_t i = 0; i < n; i++)
            if (grp[i] == gi) {
                const uint64_t r = h[gi - 1].ref;
                x[m] = (double)pos[3 * i] - (double)pos[3 * r], y[m] = (double)pos[3 * i + 1] - (double)pos[3 * r + 1];
                z[m] = (double)pos[3 * i + 2] - (double)pos[3 * r + 2], w[m] = mass[i];
                m++;
            }
        fk_pot_members pm = {m, x, y, z, w};
        if (m <= pot.nexact) fk_pot_exact(&pm, pot.G, pot.eps, ref);
        else CHECK(fk_pot_tree(&pm, &pot, ref, NULL, &err) == FK_OK);
        size_t k = 0, same = 0;
        for (size_t i = 0; i < n; i++)
            if (grp[i] == gi) same += phi[i] == ref[k++];
        CHECK_MSG(same == m, "group %u: %zu of %zu kept potentials as summed again", gi, same, m);
        free(x), free(y), free(z), free(w), free(ref);
    }
    size_t untouched = 0;
    for (size_t i = 0; i < n; i++) untouched += !grp[i] && isnan(phi[i]);
    CHECK(untouched == nl);
    /* unbinding from them: the same as from scratch */
    fk_unbind_params p = {0};
    p.pot = pot;
    p.minbound = FK_UNBIND_MINBOUND;
    memcpy(hk, h, sizeof h);
    unsigned char *b = malloc(n), *bk = malloc(n);
    CHECK(fk_unbind_halos(&in, 3, h, &p, b, &err) == FK_OK);
    CHECK(fk_unbind_halos_phi(&in, 3, hk, &p, phi, bk, &err) == FK_OK);
    CHECK(memcmp(b, bk, n) == 0);
    for (int g = 0; g < 3; g++)
        CHECK_MSG(h[g].n_bound == hk[g].n_bound && h[g].mass_bound == hk[g].mass_bound, "group %d: %lu, %lu bound", g + 1,
                  (unsigned long)h[g].n_bound, (unsigned long)hk[g].n_bound);
    /* and they did unbind: the background and the hot fifth of groups 2 and 3 left */
    CHECK_MSG(h[0].n_bound > 0 && h[0].n_bound < n1 - 2900, "group 1: %lu bound", (unsigned long)h[0].n_bound);
    CHECK_MSG(h[1].n_bound > 0 && h[1].n_bound < n2, "group 2: %lu bound", (unsigned long)h[1].n_bound);
    CHECK_MSG(h[2].n_bound > 0 && h[2].n_bound < n3, "group 3: %lu bound", (unsigned long)h[2].n_bound);
    for (int k = 0; k < 7; k++) free(c[k]);
    free(pos), free(vel), free(mass), free(grp), free(phi), free(b), free(bk);
}

int main(void)
{
    test_massless();
    test_leavers_tree();
    test_reuse();
    CHECK_DONE();
}
