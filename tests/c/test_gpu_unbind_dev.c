/* test_gpu_unbind_dev.c - a group's S held on the GPU between passes (fk_gpu_unbind_open..close) against the GPU hooks on the same members and against the CPU's drop and update; several groups at once; skips without a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "check.h"
#include "gpu.h"
#include "halostats.h"
#include "needgpu.h"
#include "unbind.h"

#define TESTRAND_SEED 0x6a09e667f3bcc909ull
#include "testrand.h"

/* Members [from, from + n) of c (x y z vx vy vz m): a Plummer sphere (G = 1,
 * a = 0.05, mass M) about ctr, at 0.3 times the escape speed, a fraction hot
 * at 0.9 times the central escape speed: unbound in the outskirts, bound
 * deeper in, so that they leave over several passes. */
static void cluster(double *c[7], size_t from, size_t n, const double ctr[3], double M, double hot)
{
    const double a = 0.05;
    for (size_t i = from; i < from + n; i++) {
        double u = urand() * 0.97, r = a / sqrt(pow(u, -2.0 / 3.0) - 1), d[3], e[3];
        direction(d), direction(e);
        double sp = urand() < hot ? 0.9 * sqrt(2 * M / a) : 0.3 * sqrt(2 * M / sqrt(r * r + a * a));
        for (int k = 0; k < 3; k++) c[k][i] = ctr[k] + r * d[k], c[3 + k][i] = sp * e[k];
        c[6][i] = M / n;
    }
}

static int gpu_tree(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_error *err)
{
    return fk_gpu_pot_tree(g, p, phi, NULL, err);
}

static const fk_unbind_device gdev = {fk_gpu_unbind_open,     fk_gpu_unbind_sum,     fk_gpu_unbind_get,
                                      fk_gpu_unbind_load,     fk_gpu_unbind_sums,    fk_gpu_unbind_energies,
                                      fk_gpu_unbind_drop,     fk_gpu_unbind_members, fk_gpu_unbind_close};

/* sum: fk_gpu_pot_tree's; the chunk sums and energies: the CPU's lanes'
 * bits; drop: the leavers (e >= emin) out, the stayers in order and, with an
 * update, their potentials as the CPU's double loop gives them (to
 * rounding); members: the stayers' places; a drop of more than maxupd
 * updates nothing. Three chunks and a bit. */
static void test_ops(void)
{
    fk_error err = {0};
    const size_t n = 3 * FK_UNBIND_CHUNK + 5000, nc = 4;
    double *c[7];
    for (int k = 0; k < 7; k++) c[k] = malloc(n * sizeof(double));
    const double o[3] = {0, 0, 0};
    cluster(c, 0, n, o, 1, 0.01);
    fk_pot_params pp;
    fk_pot_defaults(&pp);
    pp.eps = 0.002;
    fk_unbind_group g = {n, c[0], c[1], c[2], c[3], c[4], c[5], c[6], NULL};
    fk_pot_members s = {n, c[0], c[1], c[2], c[6]};
    double *phi = malloc(n * 8), *want = malloc(n * 8), *e = malloc(n * 8), part[4][7], ref[4][7];
    size_t *idx = malloc(n * sizeof *idx), *got = malloc(n * sizeof *got);
    void *ctx = NULL;
    CHECK(fk_gpu_unbind_open(&ctx, &g, &err) == FK_OK);
    CHECK(fk_gpu_unbind_sum(ctx, &pp, &err) == FK_OK);
    CHECK(fk_gpu_unbind_get(ctx, NULL, NULL, NULL, NULL, phi, &err) == FK_OK);
    CHECK(fk_gpu_pot_tree(&s, &pp, want, NULL, &err) == FK_OK);
    CHECK(memcmp(phi, want, n * 8) == 0);
    for (size_t k = 0; k < n; k++) idx[k] = k;
    CHECK(fk_gpu_unbind_sums(ctx, part, &err) == FK_OK);
    for (size_t q = 0; q < nc; q++) {
        size_t lo = q * FK_UNBIND_CHUNK, hi = lo + FK_UNBIND_CHUNK < n ? lo + FK_UNBIND_CHUNK : n;
        fk_unbind_lane_sums(hi - lo, idx + lo, c[6] + lo, c[3], c[4], c[5], ref[q]);
    }
    CHECK(memcmp(part, ref, sizeof ref) == 0);
    const double v[3] = {ref[0][1] / ref[0][0], ref[1][2] / ref[1][0], 0.01};
    CHECK(fk_gpu_unbind_energies(ctx, v, 1, part, &err) == FK_OK);
    for (size_t q = 0; q < nc; q++) {
        size_t lo = q * FK_UNBIND_CHUNK, hi = lo + FK_UNBIND_CHUNK < n ? lo + FK_UNBIND_CHUNK : n;
        fk_unbind_lane_energies(hi - lo, idx + lo, c[6] + lo, phi + lo, c[3], c[4], c[5], v, 1, e + lo, ref[q]);
    }
    CHECK(memcmp(part, ref, sizeof ref) == 0);
    double nun = 0, emin = 0;
    for (size_t q = 0; q < nc; q++) nun += ref[q][6], emin = fmax(emin, ref[q][5] / 4);
    CHECK_MSG(nun > 100, "%g unbound: the cluster does not test the drop", nun);
    /* the most unbound leave, their terms taken off */
    size_t nu = 0, w = 0, bad = 0, left = 0;
    CHECK(fk_gpu_unbind_drop(ctx, emin, SIZE_MAX, pp.G, pp.eps, &nu, &err) == FK_OK);
    CHECK(fk_gpu_unbind_get(ctx, NULL, NULL, NULL, NULL, phi, &err) == FK_OK);
    CHECK(fk_gpu_unbind_members(ctx, got, &err) == FK_OK);
    double worst = 0;
    for (size_t i = 0; i < n; i++)
        if (e[i] >= emin) idx[left++] = i; /* the leavers, in order */
    for (size_t i = 0; i < n; i++) {
        if (e[i] >= emin) continue;
        double sum = 0;
        for (size_t q = 0; q < left; q++) {
            const size_t j = idx[q];
            double dx = c[0][i] - c[0][j], dy = c[1][i] - c[1][j], dz = c[2][i] - c[2][j];
            sum += c[6][j] / sqrt(dx * dx + dy * dy + dz * dz + pp.eps * pp.eps);
        }
        worst = fmax(worst, fabs(phi[w] - (want[i] + pp.G * sum)) / fabs(want[i]));
        bad += got[w] != i;
        w++;
    }
    CHECK_MSG(nu == left && left > 10 && bad == 0, "%zu left (want %zu), %zu stayers out of place", nu, left, bad);
    CHECK_MSG(worst < 1e-12, "updated potentials differ by %g relative", worst);
    /* every e >= -inf leaves (the energies of the last call, before the drop's compaction: w of them) */
    CHECK(fk_gpu_unbind_energies(ctx, v, 1, part, &err) == FK_OK);
    CHECK(fk_gpu_unbind_drop(ctx, -INFINITY, 0, pp.G, pp.eps, &nu, &err) == FK_OK && nu == w);
    fk_gpu_unbind_close(ctx);
    free(idx), free(got), free(e), free(phi), free(want);
    for (int j = 0; j < 7; j++) free(c[j]);
}

/* fk_unbind with S on the GPU gives the members fk_unbind with the GPU
 * hooks gives (the same sums and updates on the same members), one group
 * and, through fk_unbind_halos_run, three at once. */
static void test_unbind(void)
{
    fk_error err = {0};
    const size_t na = 150000, nb = 80000, nc = 70000, n = na + nb + nc;
    double *c[7];
    for (int k = 0; k < 7; k++) c[k] = malloc(n * sizeof(double));
    const double ca[3] = {0, 0, 0}, cb[3] = {1, 0, 0}, cc[3] = {0, 1, 0};
    cluster(c, 0, na, ca, 1, 0.15); /* 10 passes, 2 sums with the CPU's tree */
    cluster(c, na, nb, cb, 1, 0.01);
    cluster(c, na + nb, nc, cc, 1, 0.02);
    fk_unbind_params p;
    fk_pot_defaults(&p.pot);
    p.pot.eps = 0.002;
    p.minbound = FK_UNBIND_MINBOUND;
    p.tree = gpu_tree, p.update = fk_gpu_unbind_update;
    fk_unbind_group g = {na, c[0], c[1], c[2], c[3], c[4], c[5], c[6], NULL};
    unsigned char *bh = malloc(n), *bd = malloc(n);
    fk_unbind_result rh, rd;
    CHECK(fk_unbind(&g, &p, bh, &rh, &err) == FK_OK);
    CHECK(fk_unbind_dev(&g, &p, &gdev, bd, &rd, &err) == FK_OK);
    CHECK_MSG(memcmp(bh, bd, na) == 0 && rh.nbound == rd.nbound && rh.passes == rd.passes,
              "hooks %llu bound in %u passes, device %llu in %u", (unsigned long long)rh.nbound, rh.passes,
              (unsigned long long)rd.nbound, rd.passes);
    CHECK_MSG(rd.sums >= 2 && rd.passes >= 3, "%u sums in %u passes: the group does not test the passes", rd.sums,
              rd.passes);

    /* three groups of a stream at once */
    float *pos = malloc(n * 12), *vel = malloc(n * 12), *mass = malloc(n * 4);
    uint32_t *grp = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) pos[3 * i + k] = (float)c[k][i], vel[3 * i + k] = (float)c[3 + k][i];
        mass[i] = (float)c[6][i];
        grp[i] = i < na ? 1 : i < na + nb ? 2 : 3;
    }
    fk_halo_input in = {n, pos, vel, mass, NULL, grp, 0, 0, 0, 0, 0, 0, NULL, 0};
    fk_halo h[3], hh[3], hd[3];
    CHECK(fk_halostats_compute(&in, 3, h, "test", &err) == FK_OK);
    memcpy(hh, h, sizeof h), memcpy(hd, h, sizeof h);
    fk_unbind_stats st;
    fk_unbind_run hooks = {NULL, NULL, 0, NULL, NULL, 0, 0}, dev = {NULL, fk_gpu_unbind_bytes, UINT64_MAX, &st, &gdev, 2, 0};
    omp_set_num_threads(4);
    CHECK(fk_unbind_halos_run(&in, 3, hh, &p, &hooks, bh, &err) == FK_OK);
    CHECK(fk_unbind_halos_run(&in, 3, hd, &p, &dev, bd, &err) == FK_OK);
    CHECK(memcmp(bh, bd, n) == 0);
    for (int k = 0; k < 3; k++) CHECK(hh[k].n_bound == hd[k].n_bound && hh[k].n_bound > 0);
    CHECK(st.nbig == 3);
    free(pos), free(vel), free(mass), free(grp), free(bh), free(bd);
    for (int k = 0; k < 7; k++) free(c[k]);
}

int main(void)
{
    int skip;
    if (!need_gpu(__FILE__, &skip)) return skip;
    test_ops();
    test_unbind();
    CHECK_DONE();
}
