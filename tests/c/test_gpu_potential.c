/* test_gpu_potential.c - potential minima on the GPU against the CPU's (exact and tree paths; the tree's minimum of a 600000-member group checked against every member's exact sum); skips without a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "needgpu.h"
#include "gpu.h"
#include "potential.h"
#include "testdata.h"

/* A group of n members: an NFW-like cusp (r = s u^2 / (1 - u)) around a
 * random centre, masses 1 or mixed. */
static void make_group(double *x, double *y, double *z, double *m, uint64_t n, int mixed)
{
    double c[3] = {td_urand(), td_urand(), td_urand()};
    for (uint64_t i = 0; i < n; i++) {
        double u = 0.02 + 0.97 * td_urand(), r = 0.01 * u * u / (1 - u);
        double ct = 2 * td_urand() - 1, ph = 6.283185307179586 * td_urand(), st = sqrt(1 - ct * ct);
        x[i] = c[0] + r * st * cos(ph), y[i] = c[1] + r * st * sin(ph), z[i] = c[2] + r * ct;
        m[i] = mixed ? (i % 5 == 0 ? 8.0 : 1.0) : 1.0;
    }
}

int main(void)
{
    fk_error err = {0};
    int skip;
    if (!need_gpu(__FILE__, &skip)) return skip;
    /* groups from 1 member to past the GPU's exact limit (32768), which takes the tree */
    static const uint64_t sizes[] = {1, 2, 3, 31, 32, 33, 257, 1000, 2001, 5000, 40000, 150000, 600000};
    const uint64_t ng = sizeof sizes / sizeof sizes[0];
    uint64_t *first = malloc((ng + 1) * sizeof *first), total = 0;
    first[0] = 0;
    for (uint64_t k = 0; k < ng; k++) first[k + 1] = (total += sizes[k]);
    double *x = malloc(total * 8), *y = malloc(total * 8), *z = malloc(total * 8), *m = malloc(total * 8);
    for (uint64_t k = 0; k < ng; k++)
        make_group(x + first[k], y + first[k], z + first[k], m + first[k], sizes[k], k % 2);
    fk_pot_groups g = {ng, first, x, y, z, m, NULL};
    fk_pot_params p;
    fk_pot_defaults(&p);
    p.eps = 1e-4;
    fk_pot_min *cpu = calloc(ng, sizeof *cpu), *gpu = calloc(ng, sizeof *gpu);
    CHECK_MSG(fk_pot_minima(&g, &p, cpu, &err) == FK_OK, "%s", err.msg);
    CHECK_MSG(fk_gpu_pot_minima(&g, &p, gpu, NULL, &err) == FK_OK, "%s", err.msg);
    for (uint64_t k = 0; k < ng; k++) {
        fk_pot_members v = {sizes[k], x + first[k], y + first[k], z + first[k], m + first[k]};
        /* the same member, or one whose exact potential is the same to rounding */
        double at_gpu = fk_pot_exact_at(&v, p.G, p.eps, gpu[k].index);
        CHECK_MSG(gpu[k].index == cpu[k].index || fabs(at_gpu - cpu[k].phi) <= 1e-12 * fabs(cpu[k].phi),
                  "group of %llu: GPU member %llu (phi %.17g), CPU member %llu (phi %.17g)",
                  (unsigned long long)sizes[k], (unsigned long long)gpu[k].index, gpu[k].phi,
                  (unsigned long long)cpu[k].index, cpu[k].phi);
        /* the potential reported is the exact sum at that member */
        CHECK_MSG(fabs(gpu[k].phi - at_gpu) <= 1e-12 * fabs(at_gpu) || sizes[k] == 1,
                  "group of %llu: reported %.17g, exact %.17g", (unsigned long long)sizes[k], gpu[k].phi, at_gpu);
        CHECK(gpu[k].method == (sizes[k] > 32768 ? FK_POT_BY_TREE : FK_POT_BY_EXACT));
    }
    /* exhaustive check of the GPU's exact path on a mid-size group: the true minimum by all pairs */
    {
        uint64_t k = 7; /* 1000 members */
        fk_pot_members v = {sizes[k], x + first[k], y + first[k], z + first[k], m + first[k]};
        double *phi = malloc(sizes[k] * 8);
        fk_pot_exact(&v, p.G, p.eps, phi);
        uint64_t best = 0;
        for (uint64_t i = 1; i < sizes[k]; i++)
            if (phi[i] < phi[best]) best = i;
        CHECK(gpu[k].index == best);
        free(phi);
    }
    /* the tree's minimum of the largest group is the true one: every member's exact sum */
    {
        uint64_t k = ng - 1;
        fk_pot_members v = {sizes[k], x + first[k], y + first[k], z + first[k], m + first[k]};
        double *phi = malloc(sizes[k] * 8);
        CHECK_MSG(fk_gpu_pot_exact(&v, p.G, p.eps, phi, NULL, &err) == FK_OK, "%s", err.msg);
        uint64_t best = 0;
        for (uint64_t i = 1; i < sizes[k]; i++)
            if (phi[i] < phi[best]) best = i;
        CHECK_MSG(gpu[k].index == best, "group of %llu: tree member %llu, exact %llu", (unsigned long long)sizes[k],
                  (unsigned long long)gpu[k].index, (unsigned long long)best);
        free(phi);
    }
    /* bad parameters are refused */
    fk_pot_params bad = p;
    bad.eps = 0;
    fk_error e2 = {0};
    CHECK(fk_gpu_pot_minima(&g, &bad, gpu, NULL, &e2) == FK_EINVAL);
    free(first), free(x), free(y), free(z), free(m), free(cpu), free(gpu);
    CHECK_DONE();
}
