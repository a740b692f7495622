/* unbind.c - the self-bound part of each group: passes of softened potentials and energies that remove unbound members. */
#include "unbind.h"

#include "potential_kernel.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An unbound member's energy and its index in S. */
typedef struct energy {
    double e;
    size_t k;
} energy;

/* sum_q m_q / sqrt(|l_q - p|^2 + e2) over the nu leavers l (a clone per
 * instruction set, as potential.c's sums: the lanes fix the order). */
__attribute__((target_clones("avx512f", "avx2", "default"))) static double
row(const double *restrict lx, const double *restrict ly, const double *restrict lz, const double *restrict lm,
    size_t nu, double px, double py, double pz, double e2)
{
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (size_t q = 0; q < nu; q++) {
        double dx = lx[q] - px, dy = ly[q] - py, dz = lz[q] - pz;
        s += lm[q] * fk_pot_rsqrt((dx * dx + dy * dy) + (dz * dz + e2));
    }
    return s;
}

/* The CPU's fk_unbind_update_fn: in parallel when it is large (each phi_k
 * by one thread: the result does not depend on their number). */
static int update_cpu(const fk_pot_members *stay, double *phi, const fk_pot_members *leave, double G, double eps,
                      fk_error *err)
{
    (void)err;
    const size_t ns = stay->n, nu = leave->n;
    const double e2 = eps * eps;
#pragma omp parallel for schedule(static) if (ns * nu > 4000000)
    for (size_t k = 0; k < ns; k++)
        phi[k] += G * row(leave->x, leave->y, leave->z, leave->m, nu, stay->x[k], stay->y[k], stay->z[k], e2);
    return FK_OK;
}

/* The leavers' share of phi by the CPU's tree, taken off the stayers': the
 * tree over all of S (ns members, x y z) with the stayers' masses set to 0
 * in mm, so that its walks skip them (potential_tree.c leaves out nodes of
 * mass 0) and what it sums is the leavers' potential at every member;
 * keep[k] != SIZE_MAX marks a stayer. out: ns scratch doubles. */
static int leavers_tree(const double *x, const double *y, const double *z, const double *mm, double *phi,
                        const size_t *keep, size_t ns, const fk_pot_params *p, double *out, fk_error *err)
{
    fk_pot_members all = {ns, x, y, z, mm};
    int st = fk_pot_tree(&all, p, out, NULL, err);
    if (st) return st;
    for (size_t k = 0; k < ns; k++)
        if (keep[k] != SIZE_MAX) phi[k] -= out[k];
    return FK_OK;
}

int fk_unbind(const fk_unbind_group *g, const fk_unbind_params *p, unsigned char *bound, fk_unbind_result *res,
              fk_error *err)
{
    int st = fk_pot_check(&p->pot, err);
    if (st) return st;
    if (p->minbound < 1) return fk_fail(err, FK_EINVAL, "the least bound group size must be at least 1");
    *res = (fk_unbind_result){0, 0, 0, 0, 0};
    const size_t n = g->n;
    memset(bound, 0, n);
    if (n == 0) return FK_OK;
    size_t *idx = malloc(n * sizeof *idx);
    double *buf = malloc(9 * n * sizeof *buf);
    energy *unb = malloc(n * sizeof *unb);
    if (!idx || !buf || !unb) {
        st = fk_fail(err, FK_ENOMEM, "out of memory to unbind a group of %zu members", n);
        goto done;
    }
    double *x = buf, *y = buf + n, *z = buf + 2 * n, *m = buf + 3 * n, *phi = buf + 4 * n;
    for (size_t i = 0; i < n; i++) {
        idx[i] = i;
        x[i] = g->x[i], y[i] = g->y[i], z[i] = g->z[i], m[i] = g->m[i];
    }
    size_t ns = n;
    int full = !g->phi; /* phi must be summed afresh */
    if (g->phi) memcpy(phi, g->phi, n * sizeof *phi);
    fk_unbind_update_fn upd = p->update ? p->update : update_cpu;
    while (ns >= p->minbound) {
        if (full) {
            res->sums++;
            fk_pot_members pm = {ns, x, y, z, m};
            if (ns <= p->pot.nexact) {
                fk_pot_exact(&pm, p->pot.G, p->pot.eps, phi);
            } else if ((st = p->tree ? p->tree(&pm, &p->pot, phi, err) : fk_pot_tree(&pm, &p->pot, phi, NULL, err)) !=
                       FK_OK) {
                goto done;
            }
        }
        res->passes++;
        double M = 0, v[3] = {0, 0, 0};
        for (size_t k = 0; k < ns; k++) M += m[k];
        for (size_t k = 0; k < ns; k++) {
            size_t i = idx[k];
            double w = M > 0 ? m[k] : 1.0;
            v[0] += w * g->vx[i], v[1] += w * g->vy[i], v[2] += w * g->vz[i];
        }
        double W = M > 0 ? M : (double)ns;
        for (int e = 0; e < 3; e++) v[e] /= W;
        size_t nu = 0;
        double emax = 0, mu = 0, pu[3] = {0, 0, 0}, s2 = 0;
        for (size_t k = 0; k < ns; k++) {
            size_t i = idx[k];
            double u0 = g->vx[i] - v[0], u1 = g->vy[i] - v[1], u2 = g->vz[i] - v[2], w = M > 0 ? m[k] : 1.0;
            double e = 0.5 * (u0 * u0 + u1 * u1 + u2 * u2) + phi[k];
            s2 += w * (u0 * u0 + u1 * u1 + u2 * u2);
            if (e >= 0) {
                unb[nu++] = (energy){e, k};
                if (e > emax) emax = e;
                mu += w, pu[0] += w * u0, pu[1] += w * u1, pu[2] += w * u2;
            }
        }
        if (nu == 0) break;
        /* the frame change if every unbound member left: their momentum over what stays */
        double dv2 = W > mu ? (pu[0] * pu[0] + pu[1] * pu[1] + pu[2] * pu[2]) / ((W - mu) * (W - mu)) : INFINITY;
        if (dv2 > FK_UNBIND_DRAG * FK_UNBIND_DRAG * s2 / W && res->passes <= FK_UNBIND_HALVINGS) {
            size_t w = 0; /* only the most unbound: e >= emax / 2 */
            for (size_t q = 0; q < nu; q++)
                if (unb[q].e >= emax / 2) unb[w++] = unb[q];
            nu = w;
        }
        /* How phi loses the leavers' share: summed again (full), their terms taken off one
         * by one (O(nu ns): exact), or their potential by a tree over S in which only they
         * have mass (ltree), whichever costs least (unbind.h) */
        int ltree = 0;
        const int needed = ns - nu >= p->minbound; /* else the loop ends: phi is not needed */
        if (!needed) {
            full = 0;
        } else if (ns <= p->pot.nexact) {
            full = nu > ns / 4;
        } else if (p->update) {
            full = nu > FK_UNBIND_GPU_PAIRS;
        } else {
            full = 0;
            ltree = nu > FK_UNBIND_TREE_PAIRS;
            if (ltree && (p->tree || nu > ns * FK_UNBIND_LTREE_FRACTION)) full = 1, ltree = 0;
        }
        for (size_t q = 0; q < nu; q++) idx[unb[q].k] = SIZE_MAX;
        if (ltree) {
            res->ltrees++;
            double *mm = buf + 5 * n, *out = buf + 6 * n;
            for (size_t k = 0; k < ns; k++) mm[k] = idx[k] == SIZE_MAX ? m[k] : 0;
            if ((st = leavers_tree(x, y, z, mm, phi, idx, ns, &p->pot, out, err)) != FK_OK) goto done;
        }
        const int one_by_one = needed && !full && !ltree;
        double *l[4] = {buf + 5 * n, buf + 6 * n, buf + 7 * n, buf + 8 * n};
        if (one_by_one)
            for (size_t q = 0; q < nu; q++) {
                size_t k = unb[q].k;
                l[0][q] = x[k], l[1][q] = y[k], l[2][q] = z[k], l[3][q] = m[k];
            }
        /* drop the leavers from S, keeping S in member order */
        size_t w = 0;
        for (size_t k = 0; k < ns; k++)
            if (idx[k] != SIZE_MAX) {
                idx[w] = idx[k], x[w] = x[k], y[w] = y[k], z[w] = z[k], m[w] = m[k], phi[w] = phi[k];
                w++;
            }
        ns = w;
        if (one_by_one) {
            fk_pot_members stay = {ns, x, y, z, m}, leave = {nu, l[0], l[1], l[2], l[3]};
            if ((st = upd(&stay, phi, &leave, p->pot.G, p->pot.eps, err)) != FK_OK) goto done;
        }
    }
    if (ns >= p->minbound) {
        res->nbound = ns;
        for (size_t k = 0; k < ns; k++) {
            bound[idx[k]] = 1;
            res->mbound += g->m[idx[k]];
        }
    }
    st = FK_OK;
done:
    free(idx), free(buf), free(unb);
    return st;
}

/* x_i - x_ref on one axis, the minimum image in a periodic box (as halostats.c). */
static inline double offset(const fk_halo_input *in, uint64_t i, uint64_t ref, int k)
{
    double d = (double)in->pos[3 * i + k] - (double)in->pos[3 * ref + k];
    if (in->periodic) d -= in->box * nearbyint(d / in->box);
    return d;
}

/* Unbinds group g, whose stream indices are index[0..n), into bound (n
 * flags) with scratch arrays of 8 n doubles; phi0: NULL, or the first
 * pass's potentials by stream index. */
static int unbind_one(const fk_halo_input *in, fk_halo *h, const uint64_t *index, size_t n,
                      const fk_unbind_params *p, const double *phi0, double *s, unsigned char *flags, fk_error *err)
{
    double *c[8];
    for (int k = 0; k < 8; k++) c[k] = s + (size_t)k * n;
    for (size_t k = 0; k < n; k++) {
        uint64_t i = index[k];
        for (int e = 0; e < 3; e++) {
            c[e][k] = offset(in, i, h->ref, e);
            c[3 + e][k] = in->vel[3 * i + e];
        }
        c[6][k] = in->mass[i];
        if (phi0) c[7][k] = phi0[i];
    }
    fk_unbind_group grp = {n, c[0], c[1], c[2], c[3], c[4], c[5], c[6], phi0 ? c[7] : NULL};
    fk_unbind_result res;
    int st = fk_unbind(&grp, p, flags, &res, err);
    h->n_bound = res.nbound;
    h->mass_bound = res.mbound;
    return st;
}

/* The groups of more than FK_POT_ALONE members, one after another, with p. */
static int unbind_big(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                      const double *phi, const uint64_t *index, const uint64_t *first, unsigned char *flags,
                      uint64_t largest, fk_error *err)
{
    int st = FK_OK;
    double *big = NULL;
    for (uint64_t g = 0; g < ng && st == FK_OK; g++) {
        if (halos[g].n <= FK_POT_ALONE) continue;
        if (!big && !(big = malloc(8 * largest * sizeof *big)))
            return fk_fail(err, FK_ENOMEM, "out of memory to unbind a group of %" PRIu64 " members", largest);
        st = unbind_one(in, &halos[g], index + first[g], halos[g].n, p, phi, big, flags + first[g], err);
    }
    free(big);
    return st;
}

int fk_unbind_halos(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                    unsigned char *bound, fk_error *err)
{
    return fk_unbind_halos_phi(in, ng, halos, p, NULL, bound, err);
}

int fk_unbind_halos_phi(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                        const double *phi, unsigned char *bound, fk_error *err)
{
    int st = fk_pot_check(&p->pot, err);
    if (st) return st;
    if (p->minbound < 1) return fk_fail(err, FK_EINVAL, "the least bound group size must be at least 1");
    uint64_t total = 0, largest = 0;
    for (uint64_t g = 0; g < ng; g++) {
        total += halos[g].n;
        if (halos[g].n > largest) largest = halos[g].n;
    }
    uint64_t *first = malloc((ng + 1) * sizeof *first), *index = malloc((total ? total : 1) * sizeof *index);
    unsigned char *flags = malloc(total ? total : 1);
    if (!first || !index || !flags) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the %" PRIu64 " members of %" PRIu64 " groups", total, ng);
        goto done;
    }
    first[0] = 0;
    for (uint64_t g = 0; g < ng; g++) first[g + 1] = first[g] + halos[g].n;
    if (fk_halo_members(in, ng, first, index) != FK_OK) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the members of %" PRIu64 " groups", ng);
        goto done;
    }
    /* The largest groups one at a time: on the CPU before the others, every
     * thread in their trees; with a device's hooks, by one thread that feeds
     * the device while the others take the rest */
    const int device = p->tree || p->update;
    int failed = 0;
    fk_error first_err = {0};
    fk_unbind_params cpu = *p; /* the threads' groups: the CPU's tree and updates */
    cpu.tree = NULL, cpu.update = NULL;
    if (!device && (st = unbind_big(in, ng, halos, p, phi, index, first, flags, largest, err)) != FK_OK) goto done;
#pragma omp parallel
    {
        if (device) {
#pragma omp single nowait
            {
                fk_error e = {0};
                int r = unbind_big(in, ng, halos, p, phi, index, first, flags, largest, &e);
                if (r) {
#pragma omp critical(fk_unbind_fail)
                    if (!failed) failed = r, first_err = e;
                }
            }
        }
        size_t cap = largest < FK_POT_ALONE ? largest : FK_POT_ALONE;
        double *s = malloc(8 * (cap ? cap : 1) * sizeof *s);
        fk_error e = {0};
#pragma omp for schedule(dynamic, 1) nowait
        for (uint64_t g = 0; g < ng; g++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (halos[g].n > FK_POT_ALONE || stop) continue;
            int r = s ? unbind_one(in, &halos[g], index + first[g], halos[g].n, &cpu, phi, s, flags + first[g], &e)
                      : fk_fail(&e, FK_ENOMEM, "out of memory to unbind groups of %zu members", cap);
            if (r) {
#pragma omp critical(fk_unbind_fail)
                if (!failed) failed = r, first_err = e;
            }
        }
        free(s);
    }
    if (failed) {
        *err = first_err;
        st = failed;
        goto done;
    }
    if (bound) {
        memset(bound, 0, in->n);
#pragma omp parallel for schedule(static)
        for (uint64_t k = 0; k < total; k++) bound[index[k]] = flags[k];
    }
    st = FK_OK;
done:
    free(first), free(index), free(flags);
    return st;
}
