/* unbind.c - the self-bound part of each group: passes of softened potentials and energies that remove unbound members. */
#define _GNU_SOURCE /* qsort_r */
#include "unbind.h"
#include "clock.h"

#include "potential_kernel.h"

#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stddef.h>
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

/* f(ctx, c) for every chunk c < nc: in parallel, outside a parallel region
 * by a team of every thread, inside one as tasks that the team's idle
 * threads take (those waiting at its barrier); one chunk runs here. */
static void each_chunk(size_t nc, void (*f)(void *, size_t), void *ctx)
{
    if (nc <= 1) {
        if (nc) f(ctx, 0);
        return;
    }
    if (omp_in_parallel()) {
#pragma omp taskloop grainsize(1)
        for (size_t c = 0; c < nc; c++) f(ctx, c);
        return;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t c = 0; c < nc; c++) f(ctx, c);
}

/* One pass's view of S for the chunked loops: members [c FK_UNBIND_CHUNK,
 * (c + 1) FK_UNBIND_CHUNK) of S are chunk c. */
typedef struct pass {
    const fk_unbind_group *g;
    size_t ns;
    const size_t *idx;
    const double *m, *phi;
    double v[3]; /* the bulk velocity of S */
    int massive; /* S has mass: weights m, else 1 */
    double (*part)[7]; /* per chunk: the lanes' sums (unbind.h) */
    double *e;         /* the energies of S */
    size_t *cnt;       /* per chunk: unbound members, then the first stayer's place */
    energy *unb;       /* chunk c's unbound from unb + c FK_UNBIND_CHUNK */
    /* the compaction: S's arrays, from src to dst */
    size_t *didx;
    const double *src[5];
    double *dst[5];
} pass;

static void chunk_range(const pass *ps, size_t c, size_t *lo, size_t *hi)
{
    *lo = c * FK_UNBIND_CHUNK;
    *hi = ps->ns - *lo < FK_UNBIND_CHUNK ? ps->ns : *lo + FK_UNBIND_CHUNK;
}

/* The lanes combined pairwise into lane 0 (unbind.h). */
static void lanes_add(double *a)
{
    for (int h = FK_UNBIND_LANES / 2; h > 0; h /= 2)
        for (int j = 0; j < h; j++) a[j] += a[j + h];
}

static void lanes_max(double *a)
{
    for (int h = FK_UNBIND_LANES / 2; h > 0; h /= 2)
        for (int j = 0; j < h; j++)
            if (a[j + h] > a[j]) a[j] = a[j + h];
}

void fk_unbind_lane_sums(size_t n, const size_t *idx, const double *m, const double *vx, const double *vy,
                         const double *vz, double out[7])
{
    enum { L = FK_UNBIND_LANES };
    double a[7][L];
    memset(a, 0, sizeof a);
    for (size_t b = 0; b < n; b += L) {
        const int nl = n - b < L ? (int)(n - b) : L;
        for (int j = 0; j < nl; j++) {
            const size_t k = b + j, i = idx[k];
            const double w = m[k], u0 = vx[i], u1 = vy[i], u2 = vz[i];
            a[0][j] += w;
            a[1][j] += w * u0, a[2][j] += w * u1, a[3][j] += w * u2;
            a[4][j] += u0, a[5][j] += u1, a[6][j] += u2;
        }
    }
    for (int q = 0; q < 7; q++) lanes_add(a[q]), out[q] = a[q][0];
}

void fk_unbind_lane_energies(size_t n, const size_t *idx, const double *m, const double *phi, const double *vx,
                             const double *vy, const double *vz, const double v[3], int massive, double *e,
                             double out[7])
{
    enum { L = FK_UNBIND_LANES };
    double a[7][L];
    memset(a, 0, sizeof a);
    for (size_t b = 0; b < n; b += L) {
        const int nl = n - b < L ? (int)(n - b) : L;
        for (int j = 0; j < nl; j++) {
            const size_t k = b + j, i = idx[k];
            const double u0 = vx[i] - v[0], u1 = vy[i] - v[1], u2 = vz[i] - v[2];
            const double w = massive ? m[k] : 1.0, u2s = u0 * u0 + u1 * u1 + u2 * u2, ek = 0.5 * u2s + phi[k];
            e[k] = ek;
            a[0][j] += w * u2s;
            if (ek >= 0) {
                a[1][j] += w;
                a[2][j] += w * u0, a[3][j] += w * u1, a[4][j] += w * u2;
                if (ek > a[5][j]) a[5][j] = ek;
                a[6][j] += 1;
            }
        }
    }
    for (int q = 0; q < 7; q++) q == 5 ? lanes_max(a[q]) : lanes_add(a[q]), out[q] = a[q][0];
}

/* part[c]: fk_unbind_lane_sums of chunk c. */
static void chunk_sums(void *ctx, size_t c)
{
    const pass *ps = ctx;
    size_t lo, hi;
    chunk_range(ps, c, &lo, &hi);
    const fk_unbind_group *g = ps->g;
    fk_unbind_lane_sums(hi - lo, ps->idx + lo, ps->m + lo, g->vx, g->vy, g->vz, ps->part[c]);
}

/* Chunk c's energies (fk_unbind_lane_energies into part[c], e in ps->e):
 * its unbound members to unb + lo, cnt[c] of them. */
static void chunk_energies(void *ctx, size_t c)
{
    const pass *ps = ctx;
    size_t lo, hi, nu = 0;
    chunk_range(ps, c, &lo, &hi);
    const fk_unbind_group *g = ps->g;
    fk_unbind_lane_energies(hi - lo, ps->idx + lo, ps->m + lo, ps->phi + lo, g->vx, g->vy, g->vz, ps->v, ps->massive,
                            ps->e + lo, ps->part[c]);
    energy *unb = ps->unb + lo;
    for (size_t k = lo; k < hi; k++)
        if (ps->e[k] >= 0) unb[nu++] = (energy){ps->e[k], k};
    ps->cnt[c] = nu;
}

/* Chunk c's stayers (idx != SIZE_MAX) from src to dst from place cnt[c] on. */
static void chunk_compact(void *ctx, size_t c)
{
    const pass *ps = ctx;
    size_t lo, hi, w = ps->cnt[c];
    chunk_range(ps, c, &lo, &hi);
    for (size_t k = lo; k < hi; k++)
        if (ps->idx[k] != SIZE_MAX) {
            ps->didx[w] = ps->idx[k];
            for (int a = 0; a < 5; a++) ps->dst[a][w] = ps->src[a][k];
            w++;
        }
}

/* Chunk c of the group into S's first copy: idx, x y z m, phi when given. */
static void chunk_start(void *ctx, size_t c)
{
    const pass *ps = ctx;
    const fk_unbind_group *g = ps->g;
    size_t lo, hi;
    chunk_range(ps, c, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        ps->didx[i] = i;
        ps->dst[0][i] = g->x[i], ps->dst[1][i] = g->y[i], ps->dst[2][i] = g->z[i], ps->dst[3][i] = g->m[i];
        if (g->phi) ps->dst[4][i] = g->phi[i];
    }
}

/* The bulk velocity v of S from its chunks' sums (part[0..nc), in chunk
 * order); the weight W (its mass, or its number when it has no mass). */
static int frame(double (*part)[7], size_t nc, size_t ns, double v[3], double *W)
{
    double M = 0, mv[3] = {0, 0, 0}, uv[3] = {0, 0, 0};
    for (size_t c = 0; c < nc; c++) {
        M += part[c][0];
        for (int e = 0; e < 3; e++) mv[e] += part[c][1 + e], uv[e] += part[c][4 + e];
    }
    *W = M > 0 ? M : (double)ns;
    for (int e = 0; e < 3; e++) v[e] = (M > 0 ? mv[e] : uv[e]) / *W;
    return M > 0;
}

/* The least energy that leaves this pass, from the chunks' energies (part,
 * in chunk order) and S's weight W: 0 (every unbound member), or e_max / 2
 * when their leaving would drag the frame (unbind.h); *nu: the unbound. */
static double leave_above(double (*part)[7], size_t nc, double W, uint32_t passes, size_t *nu)
{
    double emax = 0, mu = 0, pu[3] = {0, 0, 0}, s2 = 0, cnt = 0;
    for (size_t c = 0; c < nc; c++) {
        s2 += part[c][0], mu += part[c][1], cnt += part[c][6];
        for (int e = 0; e < 3; e++) pu[e] += part[c][2 + e];
        if (part[c][5] > emax) emax = part[c][5];
    }
    *nu = (size_t)cnt;
    /* the frame change if every unbound member left: their momentum over what stays */
    double dv2 = W > mu ? (pu[0] * pu[0] + pu[1] * pu[1] + pu[2] * pu[2]) / ((W - mu) * (W - mu)) : INFINITY;
    return dv2 > FK_UNBIND_DRAG * FK_UNBIND_DRAG * s2 / W && passes <= FK_UNBIND_HALVINGS ? emax / 2 : 0;
}

/* fk_unbind_dev's passes with S held by dev: the CPU loop's decisions on
 * the device's chunk sums. */
static int unbind_held(const fk_unbind_group *g, const fk_unbind_params *p, const fk_unbind_device *dev,
                       unsigned char *bound, fk_unbind_result *res, fk_error *err)
{
    const size_t n = g->n, nchunks = (n + FK_UNBIND_CHUNK - 1) / FK_UNBIND_CHUNK;
    const double t_start = fk_now();
    void *ctx = NULL;
    double *ex = NULL; /* an exact sum's members and potentials */
    size_t *idx = NULL;
    double(*part)[7] = malloc(nchunks * sizeof *part);
    int st = FK_OK;
    if (!part) {
        st = fk_fail(err, FK_ENOMEM, "out of memory to unbind a group of %zu members", n);
        goto done;
    }
    double t = fk_now();
    if ((st = dev->open(&ctx, g, err)) != FK_OK) goto done;
    res->t_updates += fk_now() - t;
    size_t ns = n;
    int full = !g->phi; /* phi must be summed afresh */
    while (ns >= p->minbound) {
        if (full) {
            t = fk_now();
            res->sums++;
            if (ns <= p->pot.nexact) {
                if (!ex && !(ex = malloc(5 * ns * sizeof *ex))) {
                    st = fk_fail(err, FK_ENOMEM, "out of memory to unbind a group of %zu members", n);
                    goto done;
                }
                fk_pot_members pm = {ns, ex, ex + ns, ex + 2 * ns, ex + 3 * ns};
                if ((st = dev->get(ctx, ex, ex + ns, ex + 2 * ns, ex + 3 * ns, NULL, err)) != FK_OK) goto done;
                fk_pot_exact(&pm, p->pot.G, p->pot.eps, ex + 4 * ns);
                if ((st = dev->load(ctx, ex + 4 * ns, err)) != FK_OK) goto done;
            } else if ((st = dev->sum(ctx, &p->pot, err)) != FK_OK) {
                goto done;
            }
            res->t_sums += fk_now() - t;
        }
        res->passes++;
        const size_t nc = (ns + FK_UNBIND_CHUNK - 1) / FK_UNBIND_CHUNK;
        double v[3], W;
        if ((st = dev->sums(ctx, part, err)) != FK_OK) goto done;
        int massive = frame(part, nc, ns, v, &W);
        if ((st = dev->energies(ctx, v, massive, part, err)) != FK_OK) goto done;
        size_t nu;
        const double emin = leave_above(part, nc, W, res->passes, &nu);
        if (nu == 0) break;
        /* as the CPU's loop with hooks: an exact sum again when more than a
         * quarter leave, a tree sum when more than FK_UNBIND_GPU_PAIRS */
        size_t maxupd = ns <= p->pot.nexact ? ns / 4 : FK_UNBIND_GPU_PAIRS;
        t = fk_now();
        if ((st = dev->drop(ctx, emin, maxupd, p->pot.G, p->pot.eps, &nu, err)) != FK_OK) goto done;
        res->t_updates += fk_now() - t;
        full = nu > maxupd;
        ns -= nu;
    }
    if (ns >= p->minbound) {
        if (!(idx = malloc(ns * sizeof *idx))) {
            st = fk_fail(err, FK_ENOMEM, "out of memory to unbind a group of %zu members", n);
            goto done;
        }
        if ((st = dev->members(ctx, idx, err)) != FK_OK) goto done;
        res->nbound = ns;
        for (size_t k = 0; k < ns; k++) {
            bound[idx[k]] = 1;
            res->mbound += g->m[idx[k]];
        }
    }
done:
    if (ctx) dev->close(ctx);
    res->t_rest = fk_now() - t_start - res->t_sums - res->t_updates;
    free(part), free(ex), free(idx);
    return st;
}

int fk_unbind(const fk_unbind_group *g, const fk_unbind_params *p, unsigned char *bound, fk_unbind_result *res,
              fk_error *err)
{
    return fk_unbind_dev(g, p, NULL, bound, res, err);
}

int fk_unbind_dev(const fk_unbind_group *g, const fk_unbind_params *p, const fk_unbind_device *dev,
                  unsigned char *bound, fk_unbind_result *res, fk_error *err)
{
    int st = fk_pot_check(&p->pot, err);
    if (st) return st;
    if (p->minbound < 1) return fk_fail(err, FK_EINVAL, "the least bound group size must be at least 1");
    *res = (fk_unbind_result){0, 0, 0, 0, 0, 0, 0, 0};
    const size_t n = g->n;
    memset(bound, 0, n);
    if (n == 0) return FK_OK;
    if (dev) return unbind_held(g, p, dev, bound, res, err);
    const double t_start = fk_now();
    int side = 0; /* which copy of S's arrays holds S */
    const size_t nchunks = (n + FK_UNBIND_CHUNK - 1) / FK_UNBIND_CHUNK;
    /* S's arrays twice (idx, x y z m phi: the compaction writes the other
     * copy), 4 n scratch doubles, the energies, per-chunk partial sums */
    size_t *idx = malloc(2 * n * sizeof *idx);
    double *buf = malloc(14 * n * sizeof *buf);
    energy *unb = malloc(n * sizeof *unb);
    double(*part)[7] = malloc(nchunks * sizeof *part);
    size_t *cnt = malloc(nchunks * sizeof *cnt);
    if (!idx || !buf || !unb || !part || !cnt) {
        st = fk_fail(err, FK_ENOMEM, "out of memory to unbind a group of %zu members", n);
        goto done;
    }
    double *x = buf, *y = buf + n, *z = buf + 2 * n, *m = buf + 3 * n, *phi = buf + 4 * n;
    double *scratch = buf + 10 * n;
    size_t ns = n;
    pass ps = {.g = g, .ns = n, .part = part, .cnt = cnt, .unb = unb, .didx = idx, .dst = {x, y, z, m, phi}};
    each_chunk(nchunks, chunk_start, &ps);
    int full = !g->phi; /* phi must be summed afresh */
    ps.e = scratch;
    fk_unbind_update_fn upd = p->update ? p->update : update_cpu;
    while (ns >= p->minbound) {
        if (full) {
            double t = fk_now();
            res->sums++;
            fk_pot_members pm = {ns, x, y, z, m};
            if (ns <= p->pot.nexact) {
                fk_pot_exact(&pm, p->pot.G, p->pot.eps, phi);
            } else if ((st = p->tree ? p->tree(&pm, &p->pot, phi, err) : fk_pot_tree(&pm, &p->pot, phi, NULL, err)) !=
                       FK_OK) {
                goto done;
            }
            res->t_sums += fk_now() - t;
        }
        res->passes++;
        /* chunk sums combined in chunk order: one chunk sums in member order */
        const size_t nc = (ns + FK_UNBIND_CHUNK - 1) / FK_UNBIND_CHUNK;
        ps.ns = ns, ps.idx = idx, ps.m = m, ps.phi = phi;
        each_chunk(nc, chunk_sums, &ps);
        double W;
        ps.massive = frame(part, nc, ns, ps.v, &W);
        each_chunk(nc, chunk_energies, &ps);
        size_t nu = 0;
        const double emin = leave_above(part, nc, W, res->passes, &nu);
        if (nu == 0) break;
        nu = 0; /* the unbound in member order, those with e >= emin */
        for (size_t c = 0; c < nc; c++)
            for (size_t q = 0; q < cnt[c]; q++) {
                const energy u = unb[c * FK_UNBIND_CHUNK + q];
                if (u.e >= emin) unb[nu++] = u;
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
            double t = fk_now();
            res->ltrees++;
            double *mm = scratch, *out = scratch + n;
            for (size_t k = 0; k < ns; k++) mm[k] = idx[k] == SIZE_MAX ? m[k] : 0;
            if ((st = leavers_tree(x, y, z, mm, phi, idx, ns, &p->pot, out, err)) != FK_OK) goto done;
            res->t_updates += fk_now() - t;
        }
        const int one_by_one = needed && !full && !ltree;
        double *l[4] = {scratch, scratch + n, scratch + 2 * n, scratch + 3 * n};
        if (one_by_one)
            for (size_t q = 0; q < nu; q++) {
                size_t k = unb[q].k;
                l[0][q] = x[k], l[1][q] = y[k], l[2][q] = z[k], l[3][q] = m[k];
            }
        /* drop the leavers from S, keeping S in member order: each chunk's
         * stayers to the other copy from the place its first one takes */
        size_t w = 0, q = 0;
        for (size_t c = 0; c < nc; c++) {
            size_t lo = c * FK_UNBIND_CHUNK, hi = ns - lo < FK_UNBIND_CHUNK ? ns : lo + FK_UNBIND_CHUNK, left = 0;
            while (q < nu && unb[q].k < hi) left++, q++;
            cnt[c] = w;
            w += hi - lo - left;
        }
        side ^= 1;
        double *to = buf + (side ? 5 * n : 0);
        ps.didx = side ? idx + n : idx - n;
        ps.src[0] = x, ps.src[1] = y, ps.src[2] = z, ps.src[3] = m, ps.src[4] = phi;
        for (int a = 0; a < 5; a++) ps.dst[a] = to + (size_t)a * n;
        each_chunk(nc, chunk_compact, &ps);
        idx = ps.didx;
        x = to, y = to + n, z = to + 2 * n, m = to + 3 * n, phi = to + 4 * n;
        ns = w;
        if (one_by_one) {
            double t = fk_now();
            fk_pot_members stay = {ns, x, y, z, m}, leave = {nu, l[0], l[1], l[2], l[3]};
            if ((st = upd(&stay, phi, &leave, p->pot.G, p->pot.eps, err)) != FK_OK) goto done;
            res->t_updates += fk_now() - t;
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
    if (side) idx -= n; /* the allocation's start */
    res->t_rest = fk_now() - t_start - res->t_sums - res->t_updates;
    free(idx), free(buf), free(unb), free(part), free(cnt);
    return st;
}

/* x_i - x_ref on one axis, the minimum image in a periodic box (as halostats.c). */
static inline double offset(const fk_halo_input *in, uint64_t i, uint64_t ref, int k)
{
    double d = (double)in->pos[3 * i + k] - (double)in->pos[3 * ref + k];
    if (in->periodic) d -= in->box * nearbyint(d / in->box);
    return d;
}

/* A group's members from the stream: c[0..8) (x y z from ref, v, m, phi0). */
typedef struct gather {
    const fk_halo_input *in;
    uint64_t ref;
    const uint64_t *index;
    size_t n;
    const double *phi0;
    double **c;
} gather;

static void chunk_gather(void *ctx, size_t ch)
{
    const gather *gt = ctx;
    const size_t lo = ch * FK_UNBIND_CHUNK, hi = gt->n - lo < FK_UNBIND_CHUNK ? gt->n : lo + FK_UNBIND_CHUNK;
    double **c = gt->c;
    for (size_t k = lo; k < hi; k++) {
        uint64_t i = gt->index[k];
        for (int e = 0; e < 3; e++) {
            c[e][k] = offset(gt->in, i, gt->ref, e);
            /* comoving: the peculiar velocity and the Hubble flow about the
             * reference member; S's bulk velocity then takes the flow about
             * S's centre of mass, as Gadget-4's subfind_unbind.cc measures it */
            c[3 + e][k] = gt->in->comoving ? fk_halo_vel(gt->in, i, e) + gt->in->hflow * c[e][k]
                                           : gt->in->vel[3 * i + e];
        }
        c[6][k] = gt->in->mass[i];
        if (gt->phi0) c[7][k] = gt->phi0[i];
    }
}

/* Group h's members, whose stream indices are index[0..n), into s (8 n
 * doubles: x y z from the reference member, v, m, phi0 when given). */
static void gather_one(const fk_halo_input *in, const fk_halo *h, const uint64_t *index, size_t n,
                       const double *phi0, double *s)
{
    double *c[8];
    for (int k = 0; k < 8; k++) c[k] = s + (size_t)k * n;
    gather gt = {in, h->ref, index, n, phi0, c};
    each_chunk((n + FK_UNBIND_CHUNK - 1) / FK_UNBIND_CHUNK, chunk_gather, &gt);
}

/* Unbinds group g, whose stream indices are index[0..n), into bound (n
 * flags) with scratch arrays of 8 n doubles (gathered: s already holds its
 * members); phi0: NULL, or the first pass's potentials by stream index;
 * *res. */
static int unbind_one(const fk_halo_input *in, fk_halo *h, const uint64_t *index, size_t n,
                      const fk_unbind_params *p, const fk_unbind_device *dev, const double *phi0, double *s,
                      int gathered, unsigned char *flags, fk_unbind_result *res, fk_error *err)
{
    double *c[8];
    for (int k = 0; k < 8; k++) c[k] = s + (size_t)k * n;
    if (!gathered) gather_one(in, h, index, n, phi0, s);
    fk_unbind_group grp = {n, c[0], c[1], c[2], c[3], c[4], c[5], c[6], phi0 ? c[7] : NULL};
    int st = fk_unbind_dev(&grp, p, dev, flags, res, err);
    h->n_bound = res->nbound;
    h->mass_bound = res->mbound;
    return st;
}

/* One big group's result added to the statistics (t: its seconds). */
static void count_big(fk_unbind_stats *s, const fk_unbind_result *r, double t, int largest)
{
    s->nbig++;
    s->passes += r->passes, s->sums += r->sums;
    s->t_sums += r->t_sums, s->t_updates += r->t_updates, s->t_rest += t - r->t_sums - r->t_updates;
    if (largest) s->t_largest = t, s->largest = *r;
}

/* The groups of more than FK_POT_ALONE members, one after another, with p. */
static int unbind_big(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                      const double *phi, const uint64_t *index, const uint64_t *first, unsigned char *flags,
                      uint64_t largest, fk_unbind_stats *stats, fk_error *err)
{
    int st = FK_OK, seen = 0;
    double *big = NULL;
    for (uint64_t g = 0; g < ng && st == FK_OK; g++) {
        if (halos[g].n <= FK_POT_ALONE) continue;
        if (!big && !(big = malloc(8 * largest * sizeof *big)))
            return fk_fail(err, FK_ENOMEM, "out of memory to unbind a group of %" PRIu64 " members", largest);
        fk_unbind_result r;
        double t = fk_now();
        st = unbind_one(in, &halos[g], index + first[g], halos[g].n, p, NULL, phi, big, 0, flags + first[g], &r, err);
        int first_largest = halos[g].n == largest && !seen;
        seen |= first_largest;
        count_big(stats, &r, fk_now() - t, first_largest);
    }
    free(big);
    return st;
}

/* The device memory the hooks' groups hold at once: a thread takes a
 * group's bytes before it starts it and waits while they do not fit beside
 * the others' (a group alone always starts: the hooks then say whether it
 * fits). */
typedef struct budget {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t cap, held;
    unsigned users;
} budget;

static void budget_take(budget *b, uint64_t need)
{
    pthread_mutex_lock(&b->mu);
    while (b->users > 0 && b->held + need > b->cap) pthread_cond_wait(&b->cv, &b->mu);
    b->held += need, b->users++;
    pthread_mutex_unlock(&b->mu);
}

static void budget_give(budget *b, uint64_t need)
{
    pthread_mutex_lock(&b->mu);
    b->held -= need, b->users--;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* Big groups by size, largest first (then by number). */
static int by_size(const void *a, const void *b, void *ctx)
{
    const fk_halo *h = ctx;
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    if (h[x].n != h[y].n) return h[x].n > h[y].n ? -1 : 1;
    return (x > y) - (x < y);
}

int fk_unbind_halos(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                    unsigned char *bound, fk_error *err)
{
    fk_unbind_run run = {0};
    return fk_unbind_halos_run(in, ng, halos, p, &run, bound, err);
}

int fk_unbind_halos_phi(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                        const double *phi, unsigned char *bound, fk_error *err)
{
    fk_unbind_run run = {phi, NULL, 0, NULL, NULL, 0, 0};
    return fk_unbind_halos_run(in, ng, halos, p, &run, bound, err);
}

int fk_unbind_halos_run(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const fk_unbind_params *p,
                        const fk_unbind_run *run, unsigned char *bound, fk_error *err)
{
    const double *phi = run->phi;
    const double t0 = fk_now();
    fk_unbind_stats sum = {0};
    int st = fk_pot_check(&p->pot, err);
    if (st) return st;
    if (p->minbound < 1) return fk_fail(err, FK_EINVAL, "the least bound group size must be at least 1");
    /* the big groups: more than FK_POT_ALONE members, or with a device than its threshold */
    const uint64_t above = run->device && run->big_above ? run->big_above : FK_POT_ALONE;
    uint64_t total = 0, largest = 0, nbig = 0;
    for (uint64_t g = 0; g < ng; g++) {
        total += halos[g].n;
        if (halos[g].n > largest) largest = halos[g].n;
        nbig += halos[g].n > above;
    }
    double *pre = NULL; /* the largest big group's members */
    uint64_t *first = malloc((ng + 1) * sizeof *first), *index = malloc((total ? total : 1) * sizeof *index);
    uint64_t *order = malloc((nbig ? nbig : 1) * sizeof *order);
    unsigned char *flags = malloc(total ? total : 1);
    if (!first || !index || !flags || !order) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the members of %" PRIu64 " groups", ng);
        goto done;
    }
    first[0] = 0;
    for (uint64_t g = 0; g < ng; g++) first[g + 1] = first[g] + halos[g].n;
    if (fk_halo_members(in, ng, first, index) != FK_OK) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the members of %" PRIu64 " groups", ng);
        goto done;
    }
    /* The big groups: on the CPU one at a time before the others, every
     * thread in their trees and passes; with a device's hooks, by every
     * thread, largest first, each feeding the device (the largest is the
     * critical path: it starts first, and its passes' chunks go to the
     * threads that have run out of groups), then the threads take the rest */
    const int device = p->tree || p->update || run->device;
    for (uint64_t g = 0, j = 0; g < ng; g++)
        if (halos[g].n > above) order[j++] = g;
    qsort_r(order, nbig, sizeof *order, by_size, halos);
    budget bud = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, run->budget, 0, 0};
    int failed = 0;
    uint64_t next = 0;
    double end_big = 0, end_small = 0;
    fk_error first_err = {0};
    fk_unbind_params cpu = *p; /* the threads' groups: the CPU's tree and updates */
    cpu.tree = NULL, cpu.update = NULL;
    /* The largest group, the critical path, gathered by every thread before
     * the threads part (inside, its gather would be one thread's) */
    if (device && nbig && (pre = malloc(8 * halos[order[0]].n * sizeof *pre)))
        gather_one(in, &halos[order[0]], index + first[order[0]], halos[order[0]].n, phi, pre);
    if (!device) {
        if ((st = unbind_big(in, ng, halos, p, phi, index, first, flags, largest, &sum, err)) != FK_OK) goto done;
        end_big = fk_now() - t0;
    }
#pragma omp parallel
    {
        fk_unbind_stats mine = {0};
        double my_big = 0, my_small = 0;
        fk_error e = {0};
        const int feeder = !run->feeders || omp_get_thread_num() < run->feeders;
        while (device && feeder) {
            uint64_t j;
#pragma omp atomic capture
            j = next++;
            int stop;
#pragma omp atomic read
            stop = failed;
            if (j >= nbig || stop) break;
            const uint64_t g = order[j], n = halos[g].n, need = run->bytes ? run->bytes(n) : 0;
            double *s = j == 0 && pre ? pre : malloc(8 * n * sizeof *s), t = fk_now();
            fk_unbind_result r;
            int rc;
            if (!s) {
                rc = fk_fail(&e, FK_ENOMEM, "out of memory to unbind a group of %" PRIu64 " members", n);
            } else {
                if (need) budget_take(&bud, need);
                rc = unbind_one(in, &halos[g], index + first[g], n, p, run->device, phi, s, s == pre, flags + first[g],
                                &r, &e);
                if (need) budget_give(&bud, need);
                count_big(&mine, &r, fk_now() - t, j == 0);
            }
            if (s != pre) free(s);
            my_big = fk_now() - t0;
            if (rc) {
#pragma omp critical(fk_unbind_fail)
                if (!failed) failed = rc, first_err = e;
            }
        }
        size_t cap = largest < above ? largest : above;
        double *s = malloc(8 * (cap ? cap : 1) * sizeof *s);
#pragma omp for schedule(dynamic, 1) nowait
        for (uint64_t g = 0; g < ng; g++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (halos[g].n > above || stop) continue;
            fk_unbind_result r;
            int rc = s ? unbind_one(in, &halos[g], index + first[g], halos[g].n, &cpu, NULL, phi, s, 0, flags + first[g], &r,
                                    &e)
                       : fk_fail(&e, FK_ENOMEM, "out of memory to unbind groups of %zu members", cap);
            if (rc == FK_OK) {
                mine.nsmall++, mine.small_passes += r.passes, mine.small_sums += r.sums;
                mine.small_t_sums += r.t_sums, mine.small_t_updates += r.t_updates, mine.small_t_rest += r.t_rest;
            }
            my_small = fk_now() - t0;
            if (rc) {
#pragma omp critical(fk_unbind_fail)
                if (!failed) failed = rc, first_err = e;
            }
        }
        free(s);
#pragma omp critical(fk_unbind_stats)
        {
            sum.nbig += mine.nbig, sum.passes += mine.passes, sum.sums += mine.sums;
            sum.t_sums += mine.t_sums, sum.t_updates += mine.t_updates, sum.t_rest += mine.t_rest;
            if (mine.t_largest > 0) sum.t_largest = mine.t_largest, sum.largest = mine.largest;
            sum.nsmall += mine.nsmall, sum.small_passes += mine.small_passes, sum.small_sums += mine.small_sums;
            sum.small_t_sums += mine.small_t_sums, sum.small_t_updates += mine.small_t_updates;
            sum.small_t_rest += mine.small_t_rest;
            if (my_big > end_big) end_big = my_big;
            if (my_small > end_small) end_small = my_small;
        }
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
    sum.wall_big = end_big, sum.wall_small = end_small, sum.big_above = above;
    sum.wall = fk_now() - t0;
    if (run->stats) *run->stats = sum;
    st = FK_OK;
done:
    free(pre);
    free(first), free(index), free(flags), free(order);
    return st;
}
