/* so.c - spherical-overdensity radii and masses: reference densities, a cell grid over every particle, profile crossings. */
#include "so.h"
#include "shells.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SO_PER_CELL 8      /* particles per grid cell on average */
#define SO_MAX_SIDE 1024   /* cells per side, at most (2^30 cells) */

int fk_so_thresholds(const fk_cosmo *c, double rho[FK_SO_N], double *delta_vir, fk_error *err)
{
    if (!(c->omega_m > 0) || !isfinite(c->omega_m))
        return fk_fail(err, FK_EINVAL, "Omega_m must be positive, not %g", c->omega_m);
    if (!(c->omega_l >= 0) || !isfinite(c->omega_l))
        return fk_fail(err, FK_EINVAL, "Omega_Lambda must be >= 0, not %g", c->omega_l);
    if (!(c->a > 0) || !isfinite(c->a)) return fk_fail(err, FK_EINVAL, "the expansion factor must be positive, not %g", c->a);
    if (!(c->rho_c0 > 0) || !isfinite(c->rho_c0))
        return fk_fail(err, FK_EINVAL, "the critical density must be positive, not %g", c->rho_c0);
    double a = c->a, ok = 1 - c->omega_m - c->omega_l;
    double E2 = c->omega_m / (a * a * a) + ok / (a * a) + c->omega_l;
    if (!(E2 > 0)) return fk_fail(err, FK_EINVAL, "E^2(a) = %g at a = %g: no such universe", E2, a);
    double crit = c->rho_c0 * E2 * a * a * a;
    double x = c->omega_m / (a * a * a) / E2 - 1;
    double pi2 = M_PI * M_PI;
    double dv = c->omega_l > 0 ? 18 * pi2 + 82 * x - 39 * x * x : 18 * pi2 + 60 * x - 32 * x * x;
    rho[FK_SO_200C] = 200 * crit;
    rho[FK_SO_500C] = 500 * crit;
    rho[FK_SO_200M] = 200 * c->omega_m * c->rho_c0;
    rho[FK_SO_VIR] = dv * crit;
    if (delta_vir) *delta_vir = dv;
    return FK_OK;
}

int fk_so_crossing(const double *r, const double *cm, size_t n, size_t first, double rho_t, double *R, double *M)
{
    *R = *M = NAN;
    size_t k = first;
    while (k < n && r[k] == 0) k++;
    const double v = 4.0 / 3.0 * M_PI;
    double lr0 = 0, lrho0 = 0;
    for (size_t start = k; k < n; k++) {
        if (k > start && r[k] == r[k - 1]) continue; /* the same sphere: cm holds all of them */
        double rho = cm[k] / (v * r[k] * r[k] * r[k]);
        if (rho < rho_t) {
            if (k == start) return 0; /* the first sphere is not dense enough */
            double lr1 = log(r[k]), lrho1 = log(rho);
            double lR = lr0 + (log(rho_t) - lrho0) * (lr1 - lr0) / (lrho1 - lrho0);
            *R = exp(lR);
            *M = v * *R * *R * *R * rho_t;
            return 1;
        }
        lr0 = log(r[k]), lrho0 = log(rho);
    }
    return -1;
}

/* ---- the grid -------------------------------------------------------------- */

struct fk_so_grid {
    const fk_so_particles *p;
    int side;            /* cells per axis                                 */
    double lo[3], cell;  /* the grid's lower corner and cell side           */
    double hi[3];        /* the particles' upper corner (isolated boxes)    */
    uint64_t *start;     /* side^3 + 1 offsets into the arrays below         */
    float *x;            /* 4 per particle, cell by cell: x, y, z, mass      */
};

static int cell_of(const fk_so_grid *g, double q, int k)
{
    long c = (long)floor((q - g->lo[k]) / g->cell);
    if (c < 0) c = 0;
    if (c >= g->side) c = g->side - 1;
    return (int)c;
}

int fk_so_grid_build(const fk_so_particles *p, fk_so_grid **grid, fk_error *err)
{
    *grid = NULL;
    if (p->periodic && !(p->box > 0)) return fk_fail(err, FK_EINVAL, "a periodic box needs a positive side");
    if (p->n >= UINT32_MAX) return fk_fail(err, FK_EINVAL, "%" PRIu64 " particles are too many for the SO grid", p->n);
    fk_so_grid *g = calloc(1, sizeof *g);
    if (!g) return fk_fail(err, FK_ENOMEM, "out of memory for the SO grid");
    g->p = p;
    double ext = 0;
    if (p->periodic) {
        for (int k = 0; k < 3; k++) g->lo[k] = p->origin, g->hi[k] = p->origin + p->box;
        ext = p->box;
    } else {
        for (int k = 0; k < 3; k++) g->lo[k] = INFINITY, g->hi[k] = -INFINITY;
        for (uint64_t i = 0; i < p->n; i++)
            for (int k = 0; k < 3; k++) {
                double q = p->pos[3 * i + k];
                if (q < g->lo[k]) g->lo[k] = q;
                if (q > g->hi[k]) g->hi[k] = q;
            }
        if (p->n == 0)
            for (int k = 0; k < 3; k++) g->lo[k] = g->hi[k] = 0;
        for (int k = 0; k < 3; k++)
            if (g->hi[k] - g->lo[k] > ext) ext = g->hi[k] - g->lo[k];
    }
    double s = cbrt((double)p->n / SO_PER_CELL);
    g->side = s < 1 ? 1 : s > SO_MAX_SIDE ? SO_MAX_SIDE : (int)s;
    g->cell = ext > 0 ? ext / g->side : 1;
    if (!p->periodic) g->cell *= 1 + 1e-9; /* the top particles fall inside the last cell */
    uint64_t ncell = (uint64_t)g->side * g->side * g->side;
    uint32_t *cid = malloc((p->n ? p->n : 1) * sizeof *cid);
    g->start = calloc(ncell + 1, sizeof *g->start);
    g->x = malloc((p->n ? p->n : 1) * 4 * sizeof *g->x);
    if (!cid || !g->start || !g->x) {
        free(cid);
        fk_so_grid_free(g);
        return fk_fail(err, FK_ENOMEM, "out of memory for the SO grid of %" PRIu64 " particles", p->n);
    }
    for (uint64_t i = 0; i < p->n; i++) {
        const float *q = p->pos + 3 * i;
        uint64_t c = ((uint64_t)cell_of(g, q[0], 0) * g->side + cell_of(g, q[1], 1)) * g->side + cell_of(g, q[2], 2);
        cid[i] = (uint32_t)c;
        g->start[c + 1]++;
    }
    for (uint64_t c = 0; c < ncell; c++) g->start[c + 1] += g->start[c];
    /* fill in stream order, so the layout (and every sum) is fixed */
    uint64_t *cursor = malloc(ncell * sizeof *cursor);
    if (!cursor) {
        free(cid);
        fk_so_grid_free(g);
        return fk_fail(err, FK_ENOMEM, "out of memory for the SO grid of %" PRIu64 " particles", p->n);
    }
    memcpy(cursor, g->start, ncell * sizeof *cursor);
    for (uint64_t i = 0; i < p->n; i++) {
        float *d = g->x + 4 * cursor[cid[i]]++;
        d[0] = p->pos[3 * i], d[1] = p->pos[3 * i + 1], d[2] = p->pos[3 * i + 2], d[3] = p->mass[i];
    }
    free(cursor);
    free(cid);
    *grid = g;
    return FK_OK;
}

void fk_so_grid_free(fk_so_grid *g)
{
    if (!g) return;
    free(g->start);
    free(g->x);
    free(g);
}

/* A particle's squared distance from the centre and its mass. */
typedef fk_shell shell;

static int shell_cmp(const void *a, const void *b)
{
    const shell *p = a, *q = b;
    if (p->r2 != q->r2) return (p->r2 > q->r2) - (p->r2 < q->r2);
    return (p->m > q->m) - (p->m < q->m);
}


/* A thread's growing buffers. */
typedef struct work {
    shell *sh, *tmp;
    double *r, *cm;
    size_t cap;
} work;

static int work_reserve(work *w, size_t n)
{
    if (n <= w->cap) return 0;
    size_t cap = w->cap ? w->cap : 1024;
    while (cap < n) cap *= 2;
    shell *a = realloc(w->sh, cap * sizeof *a);
    if (a) w->sh = a;
    shell *b = realloc(w->tmp, cap * sizeof *b);
    if (b) w->tmp = b;
    double *c = realloc(w->r, cap * sizeof *c);
    if (c) w->r = c;
    double *d = realloc(w->cm, cap * sizeof *d);
    if (d) w->cm = d;
    if (!a || !b || !c || !d) return -1;
    w->cap = cap;
    return 0;
}

/* Cell index range on one axis for [c - r, c + r]: *n cells from *first
 * (wrapped modulo side when periodic). */
static void axis_range(const fk_so_grid *g, double c, double r, int k, long *first, long *n)
{
    long a = (long)floor((c - r - g->lo[k]) / g->cell), b = (long)floor((c + r - g->lo[k]) / g->cell);
    if (g->p->periodic) {
        if (b - a + 1 >= g->side) a = 0, b = g->side - 1;
    } else {
        if (a < 0) a = 0;
        if (b >= g->side) b = g->side - 1;
    }
    *first = a;
    *n = b >= a ? b - a + 1 : 0;
}

/* The particles within r of c into w->sh; their number, or (size_t)-1 when
 * out of memory. */
static size_t gather(const fk_so_grid *g, const double c[3], double r, work *w)
{
    const fk_so_particles *p = g->p;
    long f[3], m[3];
    for (int k = 0; k < 3; k++) axis_range(g, c[k], r, k, &f[k], &m[k]);
    const double r2max = r * r, box = p->box;
    size_t n = 0;
    for (long i = 0; i < m[0]; i++)
        for (long j = 0; j < m[1]; j++)
            for (long l = 0; l < m[2]; l++) {
                long ci = f[0] + i, cj = f[1] + j, cl = f[2] + l;
                if (p->periodic) {
                    ci = ((ci % g->side) + g->side) % g->side;
                    cj = ((cj % g->side) + g->side) % g->side;
                    cl = ((cl % g->side) + g->side) % g->side;
                }
                uint64_t cell = ((uint64_t)ci * g->side + (uint64_t)cj) * g->side + (uint64_t)cl;
                uint64_t a = g->start[cell], b = g->start[cell + 1];
                if (work_reserve(w, n + (b - a))) return (size_t)-1;
                for (uint64_t q = a; q < b; q++) {
                    const float *x = g->x + 4 * q;
                    double d2 = 0;
                    for (int k = 0; k < 3; k++) {
                        double d = (double)x[k] - c[k];
                        if (p->periodic) d -= box * nearbyint(d / box);
                        d2 += d * d;
                    }
                    if (d2 <= r2max) w->sh[n++] = (shell){d2, x[3]};
                }
            }
    return n;
}

/* The largest radius worth searching about c. */
static double search_limit(const fk_so_grid *g, const double c[3])
{
    if (g->p->periodic) return g->p->box / 2;
    double s = 0;
    for (int k = 0; k < 3; k++) {
        double d = fmax(fabs(c[k] - g->lo[k]), fabs(g->hi[k] - c[k]));
        s += d * d;
    }
    return sqrt(s) * (1 + 1e-9) + g->cell;
}

int fk_so_measure(const fk_so_grid *grid, uint64_t nh, const double *centre, const double *r0, size_t nt,
                  const double *rho, size_t minpart, double *R, double *M, fk_error *err)
{
    const size_t first = minpart ? minpart - 1 : 0;
    size_t low = 0;
    for (size_t t = 0; t < nt; t++) {
        if (!(rho[t] > 0) || !isfinite(rho[t]))
            return fk_fail(err, FK_EINVAL, "SO threshold %zu is %g: thresholds must be positive", t, rho[t]);
        if (rho[t] < rho[low]) low = t;
    }
    int failed = 0;
#pragma omp parallel
    {
        work w = {0};
#pragma omp for schedule(dynamic, 1)
        for (uint64_t h = 0; h < nh; h++) {
            if (failed) continue;
            const double *c = centre + 3 * h;
            double limit = search_limit(grid, c);
            double r = r0[h] > 0 && isfinite(r0[h]) ? r0[h] : grid->cell;
            for (;;) {
                if (r > limit) r = limit;
                size_t n = gather(grid, c, r, &w);
                if (n == (size_t)-1) {
#pragma omp atomic write
                    failed = 1;
                    break;
                }
                fk_shells_sort(w.sh, n, w.tmp, shell_cmp); /* equal r2: by mass when short, else in the grid's order */
                double sum = 0;
                for (size_t k = 0; k < n; k++) {
                    sum += w.sh[k].m;
                    w.r[k] = sqrt(w.sh[k].r2);
                    w.cm[k] = sum;
                }
                for (size_t k = n; k-- > 1;) /* M(<= r): equal radii share their total */
                    if (w.r[k - 1] == w.r[k]) w.cm[k - 1] = w.cm[k];
                double Rl, Ml;
                int st = fk_so_crossing(w.r, w.cm, n, first, rho[low], &Rl, &Ml);
                if (st == -1 && r < limit) {
                    r *= 2;
                    continue;
                }
                for (size_t t = 0; t < nt; t++)
                    fk_so_crossing(w.r, w.cm, n, first, rho[t], &R[nt * h + t], &M[nt * h + t]);
                break;
            }
        }
        free(w.sh), free(w.tmp), free(w.r), free(w.cm);
    }
    if (failed) return fk_fail(err, FK_ENOMEM, "out of memory for the SO profiles");
    return FK_OK;
}

int fk_halostats_so(const fk_so_grid *grid, uint64_t ng, fk_halo *halos, const double rho[FK_SO_N], size_t minpart,
                    fk_error *err)
{
    size_t n = ng ? ng : 1;
    double *c = malloc(3 * n * sizeof *c), *r0 = malloc(n * sizeof *r0);
    double *R = malloc(FK_SO_N * n * sizeof *R), *M = malloc(FK_SO_N * n * sizeof *M);
    int st = FK_ENOMEM;
    if (!c || !r0 || !R || !M) {
        fk_fail(err, st, "out of memory for the SO masses of %" PRIu64 " groups", ng);
        goto done;
    }
    for (uint64_t g = 0; g < ng; g++) {
        for (int k = 0; k < 3; k++) c[3 * g + k] = halos[g].xc[k];
        r0[g] = halos[g].rc_max;
    }
    if ((st = fk_so_measure(grid, ng, c, r0, FK_SO_N, rho, minpart, R, M, err)) != FK_OK) goto done;
    for (uint64_t g = 0; g < ng; g++) {
        fk_halo *h = &halos[g];
        const double *r = R + FK_SO_N * g, *m = M + FK_SO_N * g;
        h->r200c = r[FK_SO_200C], h->m200c = m[FK_SO_200C];
        h->r500c = r[FK_SO_500C], h->m500c = m[FK_SO_500C];
        h->r200m = r[FK_SO_200M], h->m200m = m[FK_SO_200M];
        h->rvir = r[FK_SO_VIR], h->mvir = m[FK_SO_VIR];
    }
done:
    free(c), free(r0), free(R), free(M);
    return st;
}
