/* so.c - spherical-overdensity radii and masses: reference densities, a cell grid over every particle, profile crossings. */
#include "so.h"
#include "bigmem.h"
#include "halomembers.h"
#include "so_profile.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

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
    double t = (q - g->lo[k]) / g->cell;
    if (t >= 0 && t < g->side) return (int)t; /* floor(t): t >= 0 (a cast, not a call to floor) */
    return t >= g->side ? g->side - 1 : 0;    /* clamped; NaN to 0 */
}

/* cell_of, and *out set when q lies off the grid (clamped into it): a
 * position outside the periodic box, or not finite. */
static int cell_chk(const fk_so_grid *g, double q, int k, int *out)
{
    double t = (q - g->lo[k]) / g->cell;
    if (t >= 0 && t < g->side) return (int)t;
    *out = 1;
    return t >= g->side ? g->side - 1 : 0;
}

void fk_so_bounds(const fk_so_particles *p, double lo[3], double hi[3])
{
    double a[3] = {INFINITY, INFINITY, INFINITY}, b[3] = {-INFINITY, -INFINITY, -INFINITY};
    const uint64_t n = p->n;
#pragma omp parallel for schedule(static) reduction(min : a[:3]) reduction(max : b[:3])
    for (uint64_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double q = p->pos[3 * i + k];
            if (q < a[k]) a[k] = q;
            if (q > b[k]) b[k] = q;
        }
    for (int k = 0; k < 3; k++) lo[k] = a[k], hi[k] = b[k];
}

void fk_so_frame_make(uint64_t n, int periodic, double box, double origin, const double lo[3], const double hi[3],
                      fk_so_frame *f)
{
    double ext = 0;
    if (periodic) {
        for (int k = 0; k < 3; k++) f->lo[k] = origin, f->hi[k] = origin + box;
        ext = box;
    } else {
        for (int k = 0; k < 3; k++) f->lo[k] = n ? lo[k] : 0, f->hi[k] = n ? hi[k] : 0;
        for (int k = 0; k < 3; k++)
            if (f->hi[k] - f->lo[k] > ext) ext = f->hi[k] - f->lo[k];
    }
    double s = cbrt((double)n / SO_PER_CELL);
    f->side = s < 1 ? 1 : s > SO_MAX_SIDE ? SO_MAX_SIDE : (int)s;
    f->cell = ext > 0 ? ext / f->side : 1;
    if (!periodic) f->cell *= 1 + 1e-9; /* the top particles fall inside the last cell */
}

int fk_so_grid_build(const fk_so_particles *p, fk_so_grid **grid, fk_error *err)
{
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    fk_so_frame f;
    if (!p->periodic) fk_so_bounds(p, lo, hi);
    fk_so_frame_make(p->n, p->periodic, p->box, p->origin, lo, hi, &f);
    return fk_so_grid_build_frame(p, &f, grid, err);
}

int fk_so_grid_build_frame(const fk_so_particles *p, const fk_so_frame *f, fk_so_grid **grid, fk_error *err)
{
    *grid = NULL;
    if (p->periodic && !(p->box > 0)) return fk_fail(err, FK_EINVAL, "a periodic box needs a positive side");
    if (p->n >= UINT32_MAX) return fk_fail(err, FK_EINVAL, "%" PRIu64 " particles are too many for the SO grid", p->n);
    if (f->side < 1 || f->side > SO_MAX_SIDE || !(f->cell > 0))
        return fk_fail(err, FK_EINVAL, "an SO grid of %d cells a side of %g: not a grid", f->side, f->cell);
    fk_so_grid *g = calloc(1, sizeof *g);
    if (!g) return fk_fail(err, FK_ENOMEM, "out of memory for the SO grid");
    g->p = p;
    const uint64_t n = p->n;
    g->side = f->side, g->cell = f->cell;
    for (int k = 0; k < 3; k++) g->lo[k] = f->lo[k], g->hi[k] = f->hi[k];
    uint64_t ncell = (uint64_t)g->side * g->side * g->side;
    /* A stable counting sort by cell, in two passes so that the counters stay few: by x slab
     * (each thread counting and placing a contiguous run of the stream), then each slab by
     * cell. The cells' particles come in stream order (by ID with p->ids): the layout, and
     * every sum over it, is the same on any number of threads. */
    const uint64_t side = (uint64_t)g->side, plane = side * side;
    int nthr = omp_get_max_threads(), out = 0, failed = 0;
    uint64_t *count = calloc((size_t)nthr * side + side + 1, sizeof *count), *slab = count + (size_t)nthr * side;
    /* large arrays on huge pages, faulted in on every core (bigmem.h) */
    uint64_t *pair = fk_big_alloc((n ? n : 1) * sizeof *pair); /* cell << 32 | stream index */
    g->start = fk_big_alloc((ncell + 1) * sizeof *g->start);
    g->x = fk_big_alloc((n ? n : 1) * 4 * sizeof *g->x);
    if (!count || !pair || !g->start || !g->x) {
        free(count), free(pair);
        fk_so_grid_free(g);
        return fk_fail(err, FK_ENOMEM, "out of memory for the SO grid of %" PRIu64 " particles", n);
    }
#pragma omp parallel num_threads(nthr) reduction(| : out)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        uint64_t i0 = n * (uint64_t)t / (uint64_t)nt, i1 = n * (uint64_t)(t + 1) / (uint64_t)nt;
        uint64_t *cnt = count + (size_t)t * side;
        for (uint64_t i = i0; i < i1; i++) {
            cnt[cell_chk(g, p->pos[3 * i], 0, &out)]++;
        }
#pragma omp barrier
#pragma omp single
        {
            uint64_t off = 0;
            for (uint64_t x = 0; x < side; x++) {
                slab[x] = off;
                for (int u = 0; u < nt; u++) {
                    uint64_t v = count[(size_t)u * side + x];
                    count[(size_t)u * side + x] = off;
                    off += v;
                }
            }
            slab[side] = off;
        }
        for (uint64_t i = i0; i < i1; i++) {
            const float *q = p->pos + 3 * i;
            int x = cell_of(g, q[0], 0);
            uint64_t c = ((uint64_t)x * side + (uint64_t)cell_chk(g, q[1], 1, &out)) * side + (uint64_t)cell_chk(g, q[2], 2, &out);
            pair[cnt[x]++] = c << 32 | i;
        }
    }
    if (out) { /* rare: find the first, to name it */
        for (uint64_t i = 0; i < n; i++) {
            const float *q = p->pos + 3 * i;
            int o = 0;
            for (int k = 0; k < 3; k++) cell_chk(g, q[k], k, &o);
            if (!o) continue;
            free(count), free(pair);
            fk_so_grid_free(g);
            if (!isfinite(q[0]) || !isfinite(q[1]) || !isfinite(q[2]))
                return fk_fail(err, FK_EINVAL, "particle %" PRIu64 " has no finite position", i);
            return fk_fail(err, FK_EINVAL, "particle %" PRIu64 " at (%g, %g, %g) lies outside the periodic box [%g, %g)", i,
                           q[0], q[1], q[2], p->origin, p->origin + p->box);
        }
    }
#pragma omp parallel
    {
        uint64_t *fc = malloc(plane * sizeof *fc);
        uint32_t *ord = NULL; /* with IDs: a slab's stream indices, cell by cell */
        uint64_t ocap = 0;
        fk_id_sorter sorter = {0};
        if (!fc) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (uint64_t x = 0; x < side; x++) {
            if (!fc) continue;
            uint64_t a = slab[x], b = slab[x + 1], base = x * plane;
            memset(fc, 0, plane * sizeof *fc);
            for (uint64_t q = a; q < b; q++) fc[(pair[q] >> 32) - base]++;
            uint64_t off = a;
            for (uint64_t c = 0; c < plane; c++) {
                uint64_t v = fc[c];
                g->start[base + c] = fc[c] = off;
                off += v;
            }
            if (!p->ids) {
                for (uint64_t q = a; q < b; q++) {
                    uint64_t i = pair[q] & 0xffffffffu;
                    float *d = g->x + 4 * fc[(pair[q] >> 32) - base]++;
                    d[0] = p->pos[3 * i], d[1] = p->pos[3 * i + 1], d[2] = p->pos[3 * i + 2], d[3] = p->mass[i];
                }
                continue;
            }
            /* each cell's particles by ID: the order of every sum over them, whatever the
             * stream's order (halomembers.h's canonical order) */
            if (b - a > ocap) {
                free(ord);
                ocap = b - a;
                if (!(ord = malloc(ocap * sizeof *ord))) {
                    ocap = 0;
#pragma omp atomic write
                    failed = 1;
                    continue;
                }
            }
            for (uint64_t q = a; q < b; q++) ord[fc[(pair[q] >> 32) - base]++ - a] = (uint32_t)(pair[q] & 0xffffffffu);
            for (uint64_t c = 0; c < plane; c++) {
                const uint64_t c0 = g->start[base + c], c1 = fc[c];
                if (c1 - c0 > 1 && fk_id_sort(&sorter, ord + (c0 - a), NULL, c1 - c0, p->ids) != FK_OK) {
#pragma omp atomic write
                    failed = 1;
                    break;
                }
            }
            for (uint64_t q = a; q < b; q++) {
                const uint64_t i = ord[q - a];
                float *d = g->x + 4 * q;
                d[0] = p->pos[3 * i], d[1] = p->pos[3 * i + 1], d[2] = p->pos[3 * i + 2], d[3] = p->mass[i];
            }
        }
        free(fc), free(ord);
        fk_id_sort_free(&sorter);
    }
    g->start[ncell] = n;
    free(count), free(pair);
    if (failed) {
        fk_so_grid_free(g);
        return fk_fail(err, FK_ENOMEM, "out of memory for the SO grid of %" PRIu64 " particles", n);
    }
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

/* One axis of a search box: for each of its cells (unwrapped index first
 * + i), the wrapped index and, where every particle of the cell lies
 * within box/2 (less a margin) of the centre on this axis, the periodic
 * shift that the minimum image subtracts (box * nearbyint(d / box), the
 * same for all of them) and the cell's nearest and farthest offsets from
 * the centre; NaN shift elsewhere (each particle's own image then). */
typedef struct axis {
    long first, n;
    long ci[SO_MAX_SIDE];
    double shift[SO_MAX_SIDE], near[SO_MAX_SIDE], far[SO_MAX_SIDE];
} axis;

static void axis_cells(const fk_so_grid *g, double c, double r, int k, axis *ax)
{
    axis_range(g, c, r, k, &ax->first, &ax->n);
    const double box = g->p->box;
    /* particles lie in their cells up to the rounding of cell_of's division: far below 1e-6 box */
    const double half = g->p->periodic ? 0.5 * box - 1e-6 * box : INFINITY;
    for (long i = 0; i < ax->n; i++) {
        long u = ax->first + i, ci = u;
        if (g->p->periodic) ci = ((u % g->side) + g->side) % g->side;
        double e0 = g->lo[k] + (double)u * g->cell - c, e1 = e0 + g->cell;
        ax->ci[i] = ci;
        if (fmax(fabs(e0), fabs(e1)) < half) {
            /* |d + s box| < box/2 for every particle: nearbyint(d / box) is -s */
            ax->shift[i] = g->p->periodic ? box * (double)(-((u - ci) / g->side)) : 0;
            ax->near[i] = e0 > 0 ? e0 : e1 < 0 ? -e1 : 0;
            ax->far[i] = fmax(fabs(e0), fabs(e1));
        } else {
            ax->shift[i] = NAN, ax->near[i] = 0, ax->far[i] = INFINITY;
        }
    }
}

/* A search: the centre, the sphere (rin2 < d^2 <= r2max) and its cells. */
typedef struct search {
    const double *c;
    double r2max, rin2, out2, in2;
    axis ax[3];
} search;

/* Sets up the search of the particles at rin2 < d^2 <= r^2 from c (rin2 < 0:
 * all within r). Cells that lie wholly beyond r, or wholly within the sphere
 * of rin2, are passed over (with margins far above rounding). */
static void search_init(const fk_so_grid *g, const double c[3], double r, double rin2, search *s)
{
    for (int k = 0; k < 3; k++) axis_cells(g, c[k], r, k, &s->ax[k]);
    s->c = c, s->r2max = r * r, s->rin2 = rin2;
    s->out2 = r * (1 + 1e-6) * r * (1 + 1e-6) + 1e-6 * g->cell * g->cell;
    s->in2 = rin2 > 0 ? rin2 * (1 - 1e-6) - 1e-6 * g->cell * g->cell : -1;
}

/* Appends to w->sh[n..) the particles of the search in the cells of slice i
 * of its first axis, in the grid's order, and returns the new count, or
 * (size_t)-1 when out of memory. d^2 is the same sum, operation for
 * operation, whichever cell a particle is reached from, so that successive
 * shells partition the sphere exactly. */
static size_t gather_slice(const fk_so_grid *g, const search *sr, long i, fk_so_prof *w, size_t n)
{
    const fk_so_particles *p = g->p;
    const axis *ax = sr->ax;
    const double *c = sr->c, r2max = sr->r2max, rin2 = sr->rin2, box = p->box;
    for (long j = 0; j < ax[1].n; j++)
        for (long l = 0; l < ax[2].n; l++) {
            double nr = ax[0].near[i] * ax[0].near[i] + ax[1].near[j] * ax[1].near[j] + ax[2].near[l] * ax[2].near[l];
            double fr = ax[0].far[i] * ax[0].far[i] + ax[1].far[j] * ax[1].far[j] + ax[2].far[l] * ax[2].far[l];
            if (nr > sr->out2 || fr < sr->in2) continue;
            uint64_t cell = ((uint64_t)ax[0].ci[i] * g->side + (uint64_t)ax[1].ci[j]) * g->side + (uint64_t)ax[2].ci[l];
            uint64_t a = g->start[cell], b = g->start[cell + 1];
            if (fk_so_prof_reserve(w, n + (b - a))) return (size_t)-1;
            const double s[3] = {ax[0].shift[i], ax[1].shift[j], ax[2].shift[l]};
            if (!isnan(s[0]) && !isnan(s[1]) && !isnan(s[2])) {
                for (uint64_t q = a; q < b; q++) {
                    const float *x = g->x + 4 * q;
                    double d0 = (double)x[0] - c[0], d1 = (double)x[1] - c[1], d2 = (double)x[2] - c[2];
                    d0 -= s[0], d1 -= s[1], d2 -= s[2];
                    double rr = 0;
                    rr += d0 * d0, rr += d1 * d1, rr += d2 * d2;
                    if (rr <= r2max && rr > rin2) w->sh[n++] = (fk_shell){rr, x[3]};
                }
                continue;
            }
            for (uint64_t q = a; q < b; q++) {
                const float *x = g->x + 4 * q;
                double rr = 0;
                for (int k = 0; k < 3; k++) {
                    double d = (double)x[k] - c[k];
                    if (p->periodic) d -= isnan(s[k]) ? box * nearbyint(d / box) : s[k];
                    rr += d * d;
                }
                if (rr <= r2max && rr > rin2) w->sh[n++] = (fk_shell){rr, x[3]};
            }
        }
    return n;
}

/* The search's particles appended to w->sh[n..): the new count, or
 * (size_t)-1 when out of memory. */
static size_t gather(const fk_so_grid *g, const search *sr, fk_so_prof *w, size_t n)
{
    for (long i = 0; i < sr->ax[0].n && n != (size_t)-1; i++) n = gather_slice(g, sr, i, w, n);
    return n;
}

/* gather with every thread (called outside a parallel region): each slice
 * into its thread's buffer, then the slices put together in order, so that
 * w->sh is the same as gather's. */
static size_t gather_team(const fk_so_grid *g, const search *sr, fk_so_prof *w, size_t n)
{
    const long ns = sr->ax[0].n;
    /* per slice: where in its thread's buffer, how many, which thread */
    size_t *at = malloc((3 * (size_t)ns + 1) * sizeof *at), *len = at + ns, *off = len + ns;
    int nthr = omp_get_max_threads(), failed = !at;
    fk_so_prof **tw = calloc((size_t)nthr, sizeof *tw);
    if (!tw || failed) {
        free(at), free(tw);
        return (size_t)-1;
    }
#pragma omp parallel num_threads(nthr)
    {
        int t = omp_get_thread_num();
        fk_so_prof *mine = tw[t] = calloc(1, sizeof *mine);
        size_t m = 0;
        if (!mine) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (long i = 0; i < ns; i++) {
            if (!mine || failed) continue;
            size_t e = gather_slice(g, sr, i, mine, m);
            if (e == (size_t)-1) {
#pragma omp atomic write
                failed = 1;
                continue;
            }
            at[i] = m, len[i] = e - m, off[i] = (size_t)t;
            m = e;
        }
    }
    size_t total = n;
    for (long i = 0; i < ns && !failed; i++) total += len[i];
    if (!failed && fk_so_prof_reserve(w, total)) failed = 1;
    if (!failed) {
        size_t *dst = malloc(((size_t)ns + 1) * sizeof *dst);
        if (!dst) failed = 1;
        for (long i = 0; dst && i < ns; i++) dst[i] = (i ? dst[i - 1] + len[i - 1] : n); /* its place in w->sh */
#pragma omp parallel for schedule(dynamic, 1)
        for (long i = 0; i < (dst ? ns : 0); i++) memcpy(w->sh + dst[i], tw[off[i]]->sh + at[i], len[i] * sizeof *w->sh);
        free(dst);
    }
    for (int t = 0; t < nthr; t++)
        if (tw[t]) fk_so_prof_free(tw[t]), free(tw[t]);
    free(tw), free(at);
    return failed ? (size_t)-1 : total;
}

/* One centre's radii into R, M (nt each): gather from r (rin2 < 0), doubling
 * until the lowest threshold is crossed or the limit reached; *reach the
 * radius of the last search. team: every thread on it (outside a parallel
 * region). 0, or -1 when out of memory. */
static int one_centre(const fk_so_grid *g, const double c[3], double r, double limit, int method, size_t first,
                      size_t nt, const double *rho, size_t low, int team, fk_so_prof *w, search *sr, double *R,
                      double *M, double *reach)
{
    double rin2 = -1;
    size_t n = 0;
    for (;;) {
        if (r > limit) r = limit;
        /* the full sort gathers the whole sphere again (the reference); otherwise what w->sh
         * has is kept and the shell beyond added */
        int keep = rin2 >= 0 && method != FK_SO_SORT;
        search_init(g, c, r, keep ? rin2 : -1, sr);
        n = team ? gather_team(g, sr, w, keep ? n : 0) : gather(g, sr, w, keep ? n : 0);
        if (n == (size_t)-1) return -1;
        int st = fk_so_profile(w, n, r, method, first, nt, rho, low, !(r < limit), team, R, M);
        *reach = r;
        if (st == 0) return 0;
        if (st != -1) return -1;
        rin2 = r * r;
        r *= 2;
    }
}

/* The particles in the cells of c's first search: what the search will
 * gather, about. */
static uint64_t cube_count(const fk_so_grid *g, const double c[3], double r, axis *ax)
{
    for (int k = 0; k < 3; k++) axis_range(g, c[k], r, k, &ax[k].first, &ax[k].n);
    uint64_t sum = 0;
    for (long i = 0; i < ax[0].n; i++)
        for (long j = 0; j < ax[1].n; j++) {
            long ci = ax[0].first + i, cj = ax[1].first + j, l0 = ax[2].first, l1 = l0 + ax[2].n - 1;
            ci = ((ci % g->side) + g->side) % g->side, cj = ((cj % g->side) + g->side) % g->side;
            l0 = ((l0 % g->side) + g->side) % g->side, l1 = ((l1 % g->side) + g->side) % g->side;
            uint64_t row = ((uint64_t)ci * g->side + (uint64_t)cj) * g->side;
            if (l0 <= l1)
                sum += g->start[row + l1 + 1] - g->start[row + l0];
            else /* wrapped */
                sum += g->start[row + g->side] - g->start[row + l0] + g->start[row + l1 + 1] - g->start[row];
        }
    return sum;
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

/* fk_so_measure_method, and each centre's reach into reach (nh, or NULL). */
static int measure(const fk_so_grid *grid, uint64_t nh, const double *centre, const double *r0, size_t nt,
                   const double *rho, size_t minpart, int method, double *R, double *M, double *reach, fk_error *err)
{
    const size_t first = minpart ? minpart - 1 : 0;
    const int how = method == FK_SO_TEAM ? FK_SO_BINS : method; /* the profiles' method */
    size_t low = 0;
    for (size_t t = 0; t < nt; t++) {
        if (!(rho[t] > 0) || !isfinite(rho[t]))
            return fk_fail(err, FK_EINVAL, "SO threshold %zu is %g: thresholds must be positive", t, rho[t]);
        if (rho[t] < rho[low]) low = t;
    }
    /* Spheres that start with FK_SO_TEAM_MIN particles or more in their cells (a rough
     * count, the same on any number of threads) are searched one at a time by every thread,
     * the largest halos of a big snapshot, which alone would outlast the rest; then the
     * others, a thread each. */
    unsigned char *team = malloc(nh ? nh : 1);
    int failed = !team;
    uint64_t nteam = 0;
#pragma omp parallel reduction(+ : nteam)
    {
        axis *ax = malloc(sizeof *ax * 3);
        if (!ax) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 64)
        for (uint64_t h = 0; h < nh; h++) {
            if (!ax) continue;
            double r = r0[h] > 0 && isfinite(r0[h]) ? r0[h] : grid->cell, limit = search_limit(grid, centre + 3 * h);
            team[h] = method == FK_SO_TEAM ||
                      cube_count(grid, centre + 3 * h, r < limit ? r : limit, ax) >= FK_SO_TEAM_MIN;
            nteam += team[h];
        }
        free(ax);
    }
    if (nteam && !failed) {
        fk_so_prof *w = calloc(1, sizeof *w);
        search *sr = malloc(sizeof *sr);
        failed = !w || !sr;
        for (uint64_t h = 0; h < nh && !failed; h++) {
            if (!team[h]) continue;
            const double *c = centre + 3 * h;
            double limit = search_limit(grid, c), r = r0[h] > 0 && isfinite(r0[h]) ? r0[h] : grid->cell;
            double rh = NAN;
            if (one_centre(grid, c, r, limit, how, first, nt, rho, low, 1, w, sr, R + nt * h, M + nt * h, &rh))
                failed = 1;
            if (reach) reach[h] = rh;
        }
        if (w) fk_so_prof_free(w);
        free(w), free(sr);
    }
#pragma omp parallel
    {
        fk_so_prof *w = calloc(1, sizeof *w);
        search *sr = malloc(sizeof *sr);
        if (!w || !sr) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (uint64_t h = 0; h < nh; h++) {
            if (failed || team[h]) continue;
            const double *c = centre + 3 * h;
            double limit = search_limit(grid, c), r = r0[h] > 0 && isfinite(r0[h]) ? r0[h] : grid->cell;
            double rh = NAN;
            if (one_centre(grid, c, r, limit, how, first, nt, rho, low, 0, w, sr, R + nt * h, M + nt * h, &rh)) {
#pragma omp atomic write
                failed = 1;
            }
            if (reach) reach[h] = rh;
        }
        if (w) fk_so_prof_free(w);
        free(w), free(sr);
    }
    free(team);
    if (failed) return fk_fail(err, FK_ENOMEM, "out of memory for the SO profiles");
    return FK_OK;
}

int fk_so_measure_method(const fk_so_grid *grid, uint64_t nh, const double *centre, const double *r0, size_t nt,
                         const double *rho, size_t minpart, int method, double *R, double *M, fk_error *err)
{
    return measure(grid, nh, centre, r0, nt, rho, minpart, method, R, M, NULL, err);
}

int fk_so_measure_reach(const fk_so_grid *grid, uint64_t nh, const double *centre, const double *r0, size_t nt,
                        const double *rho, size_t minpart, double *R, double *M, double *reach, fk_error *err)
{
    return measure(grid, nh, centre, r0, nt, rho, minpart, FK_SO_AUTO, R, M, reach, err);
}

int fk_so_measure(const fk_so_grid *grid, uint64_t nh, const double *centre, const double *r0, size_t nt,
                  const double *rho, size_t minpart, double *R, double *M, fk_error *err)
{
    return fk_so_measure_method(grid, nh, centre, r0, nt, rho, minpart, FK_SO_AUTO, R, M, err);
}

int fk_halostats_so(const fk_so_grid *grid, uint64_t ng, fk_halo *halos, const double rho[FK_SO_N], size_t minpart,
                    fk_error *err)
{
    size_t n = ng ? ng : 1;
    double *c = calloc(3 * n, sizeof *c), *r0 = calloc(n, sizeof *r0); /* calloc: gcc does not see that none is read unset */
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
