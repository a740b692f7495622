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

/* phi of the members k of S that stay (idx[k] != SIZE_MAX) without the nu
 * leavers whose positions and masses are l[0..4) (nu each): phi_k += G
 * sum_q m_q / sqrt(|x_k - x_q|^2 + eps^2); in parallel when it is large
 * (each phi_k by one thread: the result does not depend on their number). */
static void update(const double *x, const double *y, const double *z, double *phi, const size_t *idx, size_t ns,
                   double *const l[4], size_t nu, double G, double e2)
{
    const double *restrict lx = l[0], *restrict ly = l[1], *restrict lz = l[2], *restrict lm = l[3];
#pragma omp parallel for schedule(static) if (ns * nu > 4000000)
    for (size_t k = 0; k < ns; k++) {
        if (idx[k] == SIZE_MAX) continue;
        double s = 0, px = x[k], py = y[k], pz = z[k];
#pragma omp simd reduction(+ : s)
        for (size_t q = 0; q < nu; q++) {
            double dx = lx[q] - px, dy = ly[q] - py, dz = lz[q] - pz;
            s += lm[q] * fk_pot_rsqrt((dx * dx + dy * dy) + (dz * dz + e2));
        }
        phi[k] += G * s;
    }
}

int fk_unbind(const fk_unbind_group *g, const fk_unbind_params *p, unsigned char *bound, fk_unbind_result *res,
              fk_error *err)
{
    int st = fk_pot_check(&p->pot, err);
    if (st) return st;
    if (p->minbound < 1) return fk_fail(err, FK_EINVAL, "the least bound group size must be at least 1");
    *res = (fk_unbind_result){0, 0, 0};
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
    int full = 1; /* phi must be summed afresh */
    const double e2 = p->pot.eps * p->pot.eps;
    while (ns >= p->minbound) {
        if (full) {
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
        /* the leavers' share of phi taken off the others' (O(nu ns)) when that costs less
         * than summing phi again: O(ns^2) exact, about FK_UNBIND_TREE_PAIRS pairs a
         * member by the tree */
        full = !(ns <= p->pot.nexact ? nu <= ns / 4 : nu <= FK_UNBIND_TREE_PAIRS);
        for (size_t q = 0; q < nu; q++) idx[unb[q].k] = SIZE_MAX;
        if (!full) {
            double *l[4] = {buf + 5 * n, buf + 6 * n, buf + 7 * n, buf + 8 * n};
            for (size_t q = 0; q < nu; q++) {
                size_t k = unb[q].k;
                l[0][q] = x[k], l[1][q] = y[k], l[2][q] = z[k], l[3][q] = m[k];
            }
            update(x, y, z, phi, idx, ns, l, nu, p->pot.G, e2);
        }
        /* drop the leavers from S, keeping S in member order */
        size_t w = 0;
        for (size_t k = 0; k < ns; k++)
            if (idx[k] != SIZE_MAX) {
                idx[w] = idx[k], x[w] = x[k], y[w] = y[k], z[w] = z[k], m[w] = m[k], phi[w] = phi[k];
                w++;
            }
        ns = w;
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
 * flags) with scratch arrays of 7 n doubles. */
static int unbind_one(const fk_halo_input *in, fk_halo *h, const uint64_t *index, size_t n,
                      const fk_unbind_params *p, double *s, unsigned char *flags, fk_error *err)
{
    double *c[7];
    for (int k = 0; k < 7; k++) c[k] = s + (size_t)k * n;
    for (size_t k = 0; k < n; k++) {
        uint64_t i = index[k];
        for (int e = 0; e < 3; e++) {
            c[e][k] = offset(in, i, h->ref, e);
            c[3 + e][k] = in->vel[3 * i + e];
        }
        c[6][k] = in->mass[i];
    }
    fk_unbind_group grp = {n, c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
    fk_unbind_result res;
    int st = fk_unbind(&grp, p, flags, &res, err);
    h->n_bound = res.nbound;
    h->mass_bound = res.mbound;
    return st;
}

int fk_unbind_halos(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                    unsigned char *bound, fk_error *err)
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
    {
        uint64_t *cursor = malloc((ng ? ng : 1) * sizeof *cursor);
        if (!cursor) {
            st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", ng);
            goto done;
        }
        memcpy(cursor, first, ng * sizeof *cursor);
        for (uint64_t i = 0; i < in->n; i++)
            if (in->grp[i]) index[cursor[in->grp[i] - 1]++] = i;
        free(cursor);
    }
    /* the largest groups one at a time, every thread in their trees */
    double *big = NULL;
    for (uint64_t g = 0; g < ng && st == FK_OK; g++) {
        if (halos[g].n <= FK_POT_ALONE) continue;
        if (!big && !(big = malloc(7 * largest * sizeof *big))) {
            st = fk_fail(err, FK_ENOMEM, "out of memory to unbind a group of %" PRIu64 " members", largest);
            break;
        }
        st = unbind_one(in, &halos[g], index + first[g], halos[g].n, p, big, flags + first[g], err);
    }
    free(big);
    if (st) goto done;
    int failed = 0;
    fk_error first_err = {0};
    fk_unbind_params cpu = *p; /* the threads' groups: the CPU's tree */
    cpu.tree = NULL;
#pragma omp parallel
    {
        size_t cap = largest < FK_POT_ALONE ? largest : FK_POT_ALONE;
        double *s = malloc(7 * (cap ? cap : 1) * sizeof *s);
        fk_error e = {0};
#pragma omp for schedule(dynamic, 1)
        for (uint64_t g = 0; g < ng; g++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (halos[g].n > FK_POT_ALONE || stop) continue;
            int r = s ? unbind_one(in, &halos[g], index + first[g], halos[g].n, &cpu, s, flags + first[g], &e)
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
        for (uint64_t k = 0; k < total; k++) bound[index[k]] = flags[k];
    }
    st = FK_OK;
done:
    free(first), free(index), free(flags);
    return st;
}
