/* potential.c - exact all-pairs potentials, and the potential minimum of one group or many (exact, or tree then exact). */
#include "potential.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "potential_kernel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void fk_pot_defaults(fk_pot_params *p)
{
    *p = (fk_pot_params){
        .G = 1, .eps = 0, .theta = FK_POT_THETA, .nexact = FK_POT_NEXACT, .tol = 0, .ncand = FK_POT_NCAND};
}

double fk_pot_tolerance(const fk_pot_params *p)
{
    return p->tol > 0 ? p->tol : FK_POT_TOL_COEF * (p->theta * p->theta) * (p->theta * p->theta);
}

int fk_pot_check(const fk_pot_params *p, fk_error *err)
{
    if (!(p->G > 0) || !isfinite(p->G)) return fk_fail(err, FK_EINVAL, "G must be positive and finite, not %g", p->G);
    if (!(p->eps > 0) || !isfinite(p->eps))
        return fk_fail(err, FK_EINVAL, "the softening length must be positive and finite, not %g", p->eps);
    if (!(p->theta > 0 && p->theta <= 1))
        return fk_fail(err, FK_EINVAL, "the opening angle must be in (0, 1], not %g", p->theta);
    if (!(p->tol >= 0) || !isfinite(p->tol))
        return fk_fail(err, FK_EINVAL, "the candidate tolerance must be >= 0 and finite, not %g", p->tol);
    if (p->ncand < 1) return fk_fail(err, FK_EINVAL, "at least one candidate must be re-evaluated");
    return FK_OK;
}

/* The all-pairs loop: every pair once, i < j, its term added to both ends;
 * the row sum for i in lanes (omp simd), so the order is fixed for a given
 * build and instruction set. A clone per instruction set. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void
exact_pairs(size_t n, const double *restrict x, const double *restrict y, const double *restrict z,
            const double *restrict m, double e2, double *restrict phi)
{
    for (size_t i = 0; i < n; i++) phi[i] = 0;
    for (size_t i = 0; i < n; i++) {
        const double xi = x[i], yi = y[i], zi = z[i], mi = m[i];
        double s = 0;
#pragma omp simd reduction(+ : s)
        for (size_t j = i + 1; j < n; j++) {
            double dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
            double w = fk_pot_rsqrt((dx * dx + dy * dy) + (dz * dz + e2));
            s += m[j] * w;
            phi[j] += mi * w;
        }
        phi[i] += s;
    }
}

void fk_pot_exact(const fk_pot_members *g, double G, double eps, double *phi)
{
    exact_pairs(g->n, g->x, g->y, g->z, g->m, eps * eps, phi);
    for (size_t i = 0; i < g->n; i++) phi[i] *= -G;
}

/* sum over j in [lo, hi) of m_j / sqrt(|x_j - p|^2 + e2). */
__attribute__((target_clones("avx512f", "avx2", "default"))) static double
row_sum(size_t lo, size_t hi, const double *restrict x, const double *restrict y, const double *restrict z,
        const double *restrict m, double px, double py, double pz, double e2)
{
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (size_t j = lo; j < hi; j++) {
        double dx = x[j] - px, dy = y[j] - py, dz = z[j] - pz;
        s += m[j] * fk_pot_rsqrt((dx * dx + dy * dy) + (dz * dz + e2));
    }
    return s;
}

double fk_pot_exact_at(const fk_pot_members *g, double G, double eps, size_t i)
{
    const double e2 = eps * eps, px = g->x[i], py = g->y[i], pz = g->z[i];
    double s = row_sum(0, i, g->x, g->y, g->z, g->m, px, py, pz, e2);
    s += row_sum(i + 1, g->n, g->x, g->y, g->z, g->m, px, py, pz, e2);
    return -G * s;
}

/* The first member of least phi. */
static size_t argmin(const double *phi, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (phi[i] < phi[best]) best = i;
    return best;
}

/* A candidate after the tree: its member and its potential (tree, then exact). */
typedef struct cand {
    double phi;
    size_t i;
} cand;

static int cand_cmp(const void *a, const void *b)
{
    const cand *p = a, *q = b;
    if (p->phi != q->phi) return p->phi < q->phi ? -1 : 1;
    return (p->i > q->i) - (p->i < q->i);
}

/* Candidates summed exactly at a time: a fixed number, so that which ones
 * are summed does not depend on the number of threads. */
#define CAND_BATCH 4

/* The tree, then the candidates again exactly, lowest tree potential first,
 * CAND_BATCH at a time (in parallel, each sum by one thread), until the
 * next one's tree potential exceeds the best exact one by half the window:
 * with errors below that, it cannot be lower. */
static int tree_minimum(const fk_pot_members *g, const fk_pot_params *p, fk_pot_min *min, double *keep,
                        fk_error *err)
{
    const size_t n = g->n;
    double *phi = keep ? keep : malloc(n * sizeof *phi);
    cand *c = NULL;
    int st = FK_ENOMEM;
    if (!phi) goto done;
    if ((st = fk_pot_tree(g, p, phi, NULL, err)) != FK_OK) goto done;
    const double lo = phi[argmin(phi, n)], slack = fk_pot_tolerance(p) * fabs(lo), hi = lo + slack;
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) nc += phi[i] <= hi;
    st = FK_ENOMEM;
    if (!(c = malloc(nc * sizeof *c))) goto done;
    nc = 0;
    for (size_t i = 0; i < n; i++)
        if (phi[i] <= hi) c[nc++] = (cand){phi[i], i};
    qsort(c, nc, sizeof *c, cand_cmp);
    if (nc > p->ncand) nc = p->ncand;
    double exact[CAND_BATCH];
    size_t done = 0, best = 0;
    double best_phi = INFINITY;
    while (done < nc && c[done].phi <= best_phi + slack / 2) {
        size_t batch = nc - done < CAND_BATCH ? nc - done : CAND_BATCH;
#pragma omp parallel for schedule(dynamic, 1) if (n > 4096)
        for (size_t k = 0; k < batch; k++) exact[k] = fk_pot_exact_at(g, p->G, p->eps, c[done + k].i);
        for (size_t k = 0; k < batch; k++)
            if (exact[k] < best_phi || (exact[k] == best_phi && c[done + k].i < c[best].i)) {
                best_phi = exact[k];
                best = done + k;
            }
        done += batch;
    }
    *min = (fk_pot_min){.index = c[best].i, .phi = best_phi, .method = FK_POT_BY_TREE, .candidates = (uint32_t)done};
    st = FK_OK;
done:
    if (st == FK_ENOMEM) fk_fail(err, FK_ENOMEM, "out of memory for the potentials of %zu members", n);
    if (phi != keep) free(phi);
    free(c);
    return st;
}

/* An exact minimum with phi as scratch (n entries). */
static void exact_minimum(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_pot_min *min)
{
    fk_pot_exact(g, p->G, p->eps, phi);
    size_t best = argmin(phi, g->n);
    *min = (fk_pot_min){.index = best, .phi = phi[best], .method = FK_POT_BY_EXACT};
}

int fk_pot_minimum(const fk_pot_members *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err)
{
    int st = fk_pot_check(p, err);
    if (st) return st;
    if (g->n == 0) return fk_fail(err, FK_EINVAL, "a group with no member has no potential minimum");
    if (g->n > p->nexact) return tree_minimum(g, p, min, NULL, err);
    double *phi = malloc(g->n * sizeof *phi);
    if (!phi) return fk_fail(err, FK_ENOMEM, "out of memory for the potentials of %zu members", g->n);
    exact_minimum(g, p, phi, min);
    free(phi);
    return FK_OK;
}

/* Group k's share of g->phi, or NULL. */
static double *kept(const fk_pot_groups *g, uint64_t k)
{
    return g->phi ? g->phi + g->first[k] : NULL;
}

/* Group k as a member view. */
static fk_pot_members view(const fk_pot_groups *g, uint64_t k)
{
    uint64_t a = g->first[k];
    return (fk_pot_members){g->first[k + 1] - a, g->x + a, g->y + a, g->z + a, g->m + a};
}

/* A group to hand out: the small ones go largest first (ties by index), so
 * that the last ones to finish are short. */
typedef struct job {
    uint64_t n, k;
} job;

static int job_cmp(const void *a, const void *b)
{
    const job *p = a, *q = b;
    if (p->n != q->n) return p->n > q->n ? -1 : 1;
    return (p->k > q->k) - (p->k < q->k);
}

int fk_pot_minima(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err)
{
    int st = fk_pot_check(p, err);
    if (st) return st;
    if (g->ngroups && g->first[0] != 0) return fk_fail(err, FK_EINVAL, "the first group must start at member 0");
    uint64_t nrest = 0, largest_exact = 0;
    for (uint64_t k = 0; k < g->ngroups; k++) {
        uint64_t n = g->first[k + 1] - g->first[k];
        if (g->first[k + 1] < g->first[k] || n == 0)
            return fk_fail(err, FK_EINVAL, "group %" PRIu64 " has no member (offsets must ascend)", k);
        if (n <= p->nexact && n > largest_exact) largest_exact = n;
        nrest += n <= p->nexact || n <= FK_POT_ALONE;
    }
    /* the largest groups one after another, all threads on each */
    for (uint64_t k = 0; k < g->ngroups; k++) {
        fk_pot_members v = view(g, k);
        if (v.n > p->nexact && v.n > FK_POT_ALONE && (st = tree_minimum(&v, p, &min[k], kept(g, k), err)) != FK_OK)
            return st;
    }
    if (nrest == 0) return FK_OK;
    /* the others a thread each (the tree's own parallel regions, nested,
     * get one thread), largest first */
    job *order = malloc(nrest * sizeof *order);
    if (!order) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", nrest);
    nrest = 0;
    for (uint64_t k = 0; k < g->ngroups; k++) {
        uint64_t n = g->first[k + 1] - g->first[k];
        if (n <= p->nexact || n <= FK_POT_ALONE) order[nrest++] = (job){n, k};
    }
    qsort(order, nrest, sizeof *order, job_cmp);
    int failed = 0;
    fk_error first = {0};
#pragma omp parallel
    {
        double *phi = largest_exact && !g->phi ? malloc(largest_exact * sizeof *phi) : NULL;
        fk_error e = {0};
#pragma omp for schedule(dynamic, 1)
        for (uint64_t s = 0; s < nrest; s++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (stop) continue;
            fk_pot_members v = view(g, order[s].k);
            int r = FK_OK;
            double *keep = kept(g, order[s].k);
            if (v.n > p->nexact)
                r = tree_minimum(&v, p, &min[order[s].k], keep, &e);
            else if (keep || phi)
                exact_minimum(&v, p, keep ? keep : phi, &min[order[s].k]);
            else
                r = fk_fail(&e, FK_ENOMEM, "out of memory for the potentials of %" PRIu64 " members", largest_exact);
            if (r != FK_OK) {
#pragma omp critical(fk_pot_minima_error)
                if (!failed) {
                    first = e;
                    failed = 1;
                }
            }
        }
        free(phi);
    }
    free(order);
    if (failed) return fk_fail(err, first.code, "%s", first.msg);
    return FK_OK;
}
