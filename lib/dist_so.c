/* dist_so.c - halostats --so under mpirun: every rank's particles within each halo's sphere sent to the rank measuring it, the single process's search there, the results to rank 0 (see dist_so.h). */
#include "dist_so.h"
#include "clock.h"

#include <string.h>

#ifdef FK_HAVE_MPI

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>

#include "dist.h"
#include "dist_alltoall.h"
#include "spacing.h"

#define COMM fk_dist_comm() /* this thread's communicator (dist.h) */
#define PER_CELL 8    /* particles a cell of a rank's index, on average */
#define MAX_SIDE 1024 /* its cells per side, at most                    */
#define MARGIN 1e-6   /* radii asked for are widened by this (relative): far beyond a distance's rounding */
#define SAFETY 2.0    /* the first radius asked for covers this times the radius the halo's mass gives */

/* A halo's sphere as rank 0 sends it: centre, rc_max, mass, measuring rank. */
typedef struct sphere {
    double c[3], r0, m;
    uint32_t owner, pad;
} sphere;

/* A particle on its way to a measurer: position, mass, index in its rank's
 * stream, original index (ID: the order of the sums over its cell). */
typedef struct ghost {
    float x[3], m;
    uint64_t i, id;
} ghost;

/* A measurer's request: every particle within r of sphere h. */
typedef struct ask {
    uint64_t h;
    double r;
} ask;

/* One sphere's radii and masses. */
typedef struct result {
    double R[FK_SO_N], M[FK_SO_N];
} result;

/* FOFKIT_DIST_SO_START and FOFKIT_DIST_SO_TEAM: a number from the
 * environment at least lo, else def. */
static double env_number(const char *name, double lo, double def)
{
    const char *e = getenv(name);
    char *end;
    double v = e ? strtod(e, &end) : 0;
    return e && *e && !*end && v >= lo && isfinite(v) ? v : def;
}

/* ---- a rank's index: its particles cell by cell ---------------------------- */

typedef struct lindex {
    int side, periodic;
    double lo[3], cell, box;
    uint64_t *start; /* side^3 + 1 offsets into idx       */
    uint64_t *idx;   /* the particles, cell by cell, each cell's in stream order */
} lindex;

static void index_free(lindex *x)
{
    free(x->start), free(x->idx);
    x->start = x->idx = NULL;
}

static uint64_t index_cell(const lindex *x, const float *q)
{
    uint64_t c = 0;
    for (int k = 0; k < 3; k++) {
        double t = (q[k] - x->lo[k]) / x->cell;
        uint64_t u = t >= 0 && t < x->side ? (uint64_t)t : t >= x->side ? (uint64_t)x->side - 1 : 0;
        c = c * (uint64_t)x->side + u;
    }
    return c;
}

/* The index over in's particles: the periodic box, or their bounds lo, hi. */
static int index_build(const fk_dso_in *in, const double lo[3], const double hi[3], lindex *x, fk_error *err)
{
    memset(x, 0, sizeof *x);
    x->periodic = in->periodic, x->box = in->box;
    double ext = 0;
    for (int k = 0; k < 3; k++) {
        x->lo[k] = in->periodic ? in->origin : in->n ? lo[k] : 0;
        double e = in->periodic ? in->box : in->n ? hi[k] - lo[k] : 0;
        if (e > ext) ext = e;
    }
    double s = cbrt((double)in->n / PER_CELL);
    x->side = s < 1 ? 1 : s > MAX_SIDE ? MAX_SIDE : (int)s;
    x->cell = ext > 0 ? ext / x->side : 1;
    const uint64_t ncell = (uint64_t)x->side * (uint64_t)x->side * (uint64_t)x->side, n = in->n;
    x->start = calloc(ncell + 1, sizeof *x->start);
    x->idx = malloc((n ? n : 1) * sizeof *x->idx);
    uint32_t *cell = malloc((n ? n : 1) * sizeof *cell); /* side <= 1024: 2^30 cells */
    if (!x->start || !x->idx || !cell) {
        index_free(x), free(cell);
        return fk_fail(err, FK_ENOMEM, "out of memory for the SO index of %" PRIu64 " particles", n);
    }
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) cell[i] = (uint32_t)index_cell(x, in->pos + 3 * i);
    /* a stable counting sort: each cell's end, then placed from the back */
    for (uint64_t i = 0; i < n; i++) x->start[cell[i]]++;
    for (uint64_t c = 1; c <= ncell; c++) x->start[c] += x->start[c - 1];
    for (uint64_t i = n; i-- > 0;) x->idx[--x->start[cell[i]]] = i;
    free(cell);
    return FK_OK;
}

/* The cells on axis k that can hold a particle within r of q: *n of them
 * from *first (to be wrapped when periodic). r is widened far beyond the
 * rounding that can put a particle into the next cell. */
static void index_span(const lindex *x, double q, double r, int k, long *first, long *n)
{
    r = r * (1 + 2 * MARGIN) + MARGIN * x->cell;
    double a = floor((q - r - x->lo[k]) / x->cell), b = floor((q + r - x->lo[k]) / x->cell);
    *first = 0, *n = x->side;
    if (x->periodic) {
        if (b - a + 1 < x->side) *first = (long)a, *n = (long)(b - a + 1);
        return;
    }
    if (a < 0) a = 0;
    if (b > x->side - 1) b = x->side - 1;
    if (!(a <= b)) *n = 0;
    else *first = (long)a, *n = (long)(b - a + 1);
}

static uint64_t wrap(const lindex *x, long u)
{
    return (uint64_t)(((u % x->side) + x->side) % x->side);
}

/* This rank's particles in the cells about c out to h on every axis: a
 * bound on those within h on every axis. */
static uint64_t index_box_count(const lindex *x, const double c[3], double h)
{
    long f[3], n[3];
    for (int k = 0; k < 3; k++) index_span(x, c[k], h, k, &f[k], &n[k]);
    uint64_t sum = 0, side = (uint64_t)x->side;
    for (long i = 0; i < n[0]; i++)
        for (long j = 0; j < n[1]; j++)
            for (long l = 0; l < n[2]; l++) {
                uint64_t cell = (wrap(x, f[0] + i) * side + wrap(x, f[1] + j)) * side + wrap(x, f[2] + l);
                sum += x->start[cell + 1] - x->start[cell];
            }
    return sum;
}

/* The distance from q to the nearest point of the unwrapped cell u on
 * axis k (0 inside it). */
static double cell_gap(const lindex *x, double q, long u, int k)
{
    double e0 = x->lo[k] + (double)u * x->cell - q, e1 = e0 + x->cell;
    return e0 > 0 ? e0 : e1 < 0 ? -e1 : 0;
}

/* What a particle of the unwrapped cell u of a span of n cells on an axis
 * is shifted by to its image near the centre: a whole number of boxes (0
 * when not periodic); NaN where the span is the whole axis (each
 * particle's own minimum image then). */
static double cell_shift(const lindex *x, long u, long n)
{
    if (!x->periodic) return 0;
    if (n == x->side) return NAN;
    return x->box * (double)((u - (long)wrap(x, u)) / x->side);
}

/* Sets the bit of every particle of this rank within r of c (the minimum
 * image in a periodic box, with the margin); cells wholly beyond r (with a
 * cell's margin: a wrapped span may place a cell off by the rounding of its
 * unwrapped index) are passed over. */
static void index_mark(const fk_dso_in *in, const lindex *x, const double c[3], double r, uint64_t *bits)
{
    long f[3], n[3];
    for (int k = 0; k < 3; k++) index_span(x, c[k], r, k, &f[k], &n[k]);
    const double rm = r * (1 + MARGIN), r2 = rm * rm, box = in->box, far = rm + MARGIN * x->cell;
    const uint64_t side = (uint64_t)x->side;
    for (long i = 0; i < n[0]; i++) {
        double g0 = n[0] == x->side ? 0 : cell_gap(x, c[0], f[0] + i, 0);
        for (long j = 0; j < n[1]; j++) {
            double g1 = n[1] == x->side ? 0 : cell_gap(x, c[1], f[1] + j, 1);
            if (g0 * g0 + g1 * g1 > far * far) continue;
            for (long l = 0; l < n[2]; l++) {
                double g2 = n[2] == x->side ? 0 : cell_gap(x, c[2], f[2] + l, 2);
                if (g0 * g0 + g1 * g1 + g2 * g2 > far * far) continue;
                uint64_t cell = (wrap(x, f[0] + i) * side + wrap(x, f[1] + j)) * side + wrap(x, f[2] + l);
                const double s[3] = {cell_shift(x, f[0] + i, n[0]), cell_shift(x, f[1] + j, n[1]),
                                     cell_shift(x, f[2] + l, n[2])};
                for (uint64_t q = x->start[cell]; q < x->start[cell + 1]; q++) {
                    uint64_t p = x->idx[q];
                    double rr = 0;
                    for (int k = 0; k < 3; k++) {
                        double d = (double)in->pos[3 * p + k] - c[k];
                        d += isnan(s[k]) ? -box * nearbyint(d / box) : s[k];
                        rr += d * d;
                    }
                    if (rr <= r2) {
                        uint64_t b = UINT64_C(1) << (p & 63);
#pragma omp atomic
                        bits[p >> 6] |= b;
                    }
                }
            }
        }
    }
}

/* ---- collectives ------------------------------------------------------------ */

/* MPI_Bcast of count records of size bytes from rank 0, in pieces whose
 * counts fit an int. */
static void bcast_records(void *buf, uint64_t count, size_t size)
{
    MPI_Datatype t;
    MPI_Type_contiguous((int)size, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    for (uint64_t at = 0; at < count; at += INT_MAX / 2) {
        uint64_t c = count - at < INT_MAX / 2 ? count - at : INT_MAX / 2;
        MPI_Bcast((unsigned char *)buf + at * size, (int)c, t, 0, COMM);
    }
    MPI_Type_free(&t);
}

/* Every rank's count records of size bytes, in rank order, into *all
 * (malloc'd) and *nall. Collective; failures agreed on. */
static int allgather_records(const void *mine, uint64_t count, size_t size, void **all, uint64_t *nall, int R,
                             fk_error *err)
{
    uint64_t *cnt = malloc((size_t)R * sizeof *cnt);
    int *rc = malloc((size_t)R * sizeof *rc), *rd = malloc((size_t)R * sizeof *rd);
    int st = cnt && rc && rd ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory for %d ranks", R);
    *all = NULL, *nall = 0;
    st = fk_dist_agree(st, err, NULL);
    if (!st) {
        MPI_Allgather(&count, 1, MPI_UINT64_T, cnt, 1, MPI_UINT64_T, COMM);
        for (int d = 0; d < R; d++) *nall += cnt[d];
        if (*nall > INT_MAX)
            st = fk_fail(err, FK_EUNSUP, "%" PRIu64 " SO requests in one round: at most %d", *nall, INT_MAX);
        else if (!(*all = malloc((*nall ? *nall : 1) * size)))
            st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " SO requests", *nall);
        st = fk_dist_agree(st, err, NULL);
    }
    if (!st) {
        for (int d = 0, o = 0; d < R; d++) rc[d] = (int)cnt[d], rd[d] = o, o += rc[d];
        MPI_Datatype t;
        MPI_Type_contiguous((int)size, MPI_BYTE, &t);
        MPI_Type_commit(&t);
        MPI_Allgatherv(mine, (int)count, t, *all, rc, rd, t, COMM);
        MPI_Type_free(&t);
    } else {
        free(*all), *all = NULL;
    }
    free(cnt), free(rc), free(rd);
    return st;
}

int fk_dso_mass_total(uint64_t n, const float *mass, double *total, const char *name, fk_error *err)
{
    /* each rank's exact sums (spacing.h: the significands by binary exponent, integers), added
     * over the ranks and made a double as one process makes its own: the same bits for any
     * split of the particles, in any order */
    fk_spacing_sums s;
    int st = fk_spacing_sum(mass, NULL, n, &s, name, err);
    if ((st = fk_dist_agree(st, err, NULL)) != FK_OK) return st;
    fk_dist_sum(&s.sig[1][0], FK_SPACING_NEXP); /* type NULL: every mass is counted as dark (1) */
    *total = fk_spacing_mass(&s, 1);
    return FK_OK;
}

/* ---- the run ---------------------------------------------------------------- */

/* What every rank keeps across the rounds. */
typedef struct run {
    int rank, R;
    const fk_dso_in *in;
    fk_so_frame frame;
    lindex x;
    uint64_t H;            /* spheres                                          */
    sphere *sph;           /* H                                                */
    uint64_t nmine;        /* the spheres this rank measures                   */
    uint64_t *slot;        /* H: a sphere's place among its measurer's spheres  */
    result *res;           /* nmine                                            */
    uint64_t **sent;       /* R: the indices sent to each rank, ascending      */
    uint64_t *nsent;       /* R                                                */
    uint64_t *bits;        /* n bits: marks                                    */
    float *hpos, *hmass;   /* the particles this rank measures over, by (rank, index) */
    uint64_t *hidx;        /* their indices on their ranks                     */
    uint64_t *hid;         /* their IDs                                        */
    uint32_t *hfrom;       /* their ranks                                      */
    uint64_t nheld;
    fk_dso_rank me;
} run;

static void run_free(run *u)
{
    index_free(&u->x);
    for (int d = 0; u->sent && d < u->R; d++) free(u->sent[d]);
    free(u->sph), free(u->slot), free(u->res), free(u->sent), free(u->nsent), free(u->bits);
    free(u->hpos), free(u->hmass), free(u->hidx), free(u->hid), free(u->hfrom);
}

/* A point's place on a Morton curve through the frame (21 bits an axis). */
static uint64_t morton(const fk_so_frame *f, const double c[3])
{
    uint64_t key = 0;
    for (int k = 0; k < 3; k++) {
        double t = (c[k] - f->lo[k]) / (f->cell * f->side) * (double)(1 << 21);
        uint64_t q = t > 0 ? (t < (1 << 21) ? (uint64_t)t : (1 << 21) - 1) : 0;
        for (int b = 0; b < 21; b++) key |= ((q >> b) & 1) << (3 * b + k);
    }
    return key;
}

static int by_key(const void *a, const void *b)
{
    const uint64_t *p = a, *q = b; /* key, index */
    return p[0] != q[0] ? (p[0] > q[0]) - (p[0] < q[0]) : (p[1] > q[1]) - (p[1] < q[1]);
}

/* Rank 0: the spheres of every level's rows, level by level. The halos of
 * level 0 in the order of their centres along a Morton curve, cut into R
 * runs of about equal members, a run a rank (neighbours' spheres overlap:
 * a particle in several goes to one rank the fewer times); a deeper level's
 * halo to its host's rank. key: 2 ng[0] entries of scratch. */
static void make_spheres(run *u, fk_halo *const *rows, const uint64_t *ng, int nlevels, uint64_t *key)
{
    uint64_t total = 0, acc = 0;
    for (uint64_t g = 0; g < ng[0]; g++) {
        key[2 * g] = morton(&u->frame, rows[0][g].xc), key[2 * g + 1] = g;
        total += rows[0][g].n;
    }
    qsort(key, ng[0], 2 * sizeof *key, by_key);
    for (uint64_t k = 0; k < ng[0]; k++) {
        const uint64_t g = key[2 * k + 1], n = rows[0][g].n;
        /* the rank whose share of the members holds this halo's middle */
        uint64_t d = (uint64_t)((2 * (double)acc + (double)n) / (2 * (double)total) * u->R);
        u->sph[g].owner = (uint32_t)(d < (uint64_t)u->R ? d : (uint64_t)u->R - 1);
        acc += n;
    }
    uint64_t h = 0, base = 0;
    for (int k = 0; k < nlevels; k++) {
        for (uint64_t g = 0; g < ng[k]; g++, h++) {
            const fk_halo *r = &rows[k][g];
            sphere *s = &u->sph[h];
            memcpy(s->c, r->xc, sizeof s->c);
            s->r0 = r->rc_max, s->m = r->mass;
            s->pad = 0;
            if (k == 0)
                continue; /* owner set above */
            else if (r->host >= 1 && r->host <= ng[k - 1])
                s->owner = u->sph[base + r->host - 1].owner;
            else
                s->owner = (uint32_t)(h % (uint64_t)u->R);
        }
        if (k > 0) base += ng[k - 1];
    }
}

/* The first search's radius of sphere s (fk_so_measure's: rc_max, or one
 * cell when that is not > 0). */
static double first_radius(const run *u, const sphere *s)
{
    return s->r0 > 0 && isfinite(s->r0) ? s->r0 : u->frame.cell;
}

/* The first round's requests: for every sphere the radius its search
 * reaches if its mass within SAFETY times the radius of the lowest
 * threshold is its FoF mass, times FOFKIT_DIST_SO_START (default 1); where
 * its first search's cells may hold team particles or more (a bound over
 * the ranks), all of those cells. Collective. */
static int first_asks(run *u, const double *rho, ask **asks, uint64_t *nasks, fk_error *err)
{
    const double start = env_number("FOFKIT_DIST_SO_START", 1e-3, 1);
    double low = rho[0];
    for (int t = 1; t < FK_SO_N; t++)
        if (rho[t] < low) low = rho[t];
    const double team = env_number("FOFKIT_DIST_SO_TEAM", 1, FK_SO_TEAM_MIN);
    const double cell = u->frame.cell;
    uint64_t *bound = NULL;
    int st = FK_OK;
    *asks = malloc((u->H ? u->H : 1) * sizeof **asks);
    if (!*asks) st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " SO spheres", u->rank, u->H);
    int counted = (double)u->in->ntotal >= team; /* else no sphere can hold so many */
    if (!st && counted && !(bound = malloc((u->H ? u->H : 1) * sizeof *bound)))
        st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " SO spheres", u->rank, u->H);
    st = fk_dist_agree(st, err, NULL);
    if (st) {
        free(*asks), *asks = NULL;
        return st;
    }
    if (counted) {
#pragma omp parallel for schedule(dynamic, 64)
        for (uint64_t h = 0; h < u->H; h++)
            bound[h] = index_box_count(&u->x, u->sph[h].c, (first_radius(u, &u->sph[h]) + cell) * (1 + MARGIN));
        for (uint64_t at = 0; at < u->H; at += INT_MAX / 2) {
            int c = (int)(u->H - at < INT_MAX / 2 ? u->H - at : INT_MAX / 2);
            MPI_Allreduce(MPI_IN_PLACE, bound + at, c, MPI_UINT64_T, MPI_SUM, COMM);
        }
    }
    const double limit = u->in->periodic ? u->in->box / 2 : INFINITY;
    for (uint64_t h = 0; h < u->H; h++) {
        const sphere *s = &u->sph[h];
        double r = first_radius(u, s), rg = r, want = SAFETY * cbrt(3 * s->m / (4 * M_PI * low));
        while (rg < want && rg < limit) rg *= 2;
        rg *= start;
        /* the cube of the first search's cells lies within sqrt(3) (r + cell) of the centre */
        double cube = sqrt(3.0) * (r + cell) * (1 + MARGIN);
        if (counted && (double)bound[h] >= team && cube > rg) rg = cube;
        (*asks)[h] = (ask){h, rg};
    }
    *nasks = u->H;
    free(bound);
    return FK_OK;
}

/* Merges two ascending lists of indices into a new one (*out, malloc'd). */
static int merge_indices(const uint64_t *a, uint64_t na, const uint64_t *b, uint64_t nb, uint64_t **out)
{
    uint64_t *m = malloc((na + nb ? na + nb : 1) * sizeof *m), i = 0, j = 0, k = 0;
    if (!m) return FK_ENOMEM;
    while (i < na || j < nb) m[k++] = j >= nb || (i < na && a[i] < b[j]) ? a[i++] : b[j++];
    *out = m;
    return FK_OK;
}

/* This rank's particles within the radii asked of each rank's spheres and
 * not sent to it before, grouped by rank (each ascending): *send, count[d].
 * asks: every rank's, grouped by measuring rank. */
static int collect(run *u, const ask *asks, uint64_t nasks, ghost **send, uint64_t *count, fk_error *err)
{
    const fk_dso_in *in = u->in;
    const uint64_t words = (in->n + 63) / 64;
    uint64_t **fresh = calloc((size_t)u->R, sizeof *fresh), total = 0, a0 = 0;
    int st = fresh ? FK_OK : FK_ENOMEM;
    *send = NULL;
    for (int d = 0; d < u->R && !st; d++) {
        uint64_t a1 = a0;
        while (a1 < nasks && u->sph[asks[a1].h].owner == (uint32_t)d) a1++;
        memset(u->bits, 0, (words ? words : 1) * sizeof *u->bits);
#pragma omp parallel for schedule(dynamic, 4)
        for (uint64_t a = a0; a < a1; a++) index_mark(in, &u->x, u->sph[asks[a].h].c, asks[a].r, u->bits);
        a0 = a1;
        for (uint64_t k = 0; k < u->nsent[d]; k++) {
            uint64_t i = u->sent[d][k];
            u->bits[i >> 6] &= ~(UINT64_C(1) << (i & 63));
        }
        uint64_t c = 0;
        for (uint64_t w = 0; w < words; w++) c += (uint64_t)__builtin_popcountll(u->bits[w]);
        count[d] = c, total += c;
        if (!(fresh[d] = malloc((c ? c : 1) * sizeof *fresh[d]))) {
            st = FK_ENOMEM;
            break;
        }
        c = 0;
        for (uint64_t w = 0; w < words; w++)
            for (uint64_t b = u->bits[w]; b; b &= b - 1) fresh[d][c++] = w * 64 + (uint64_t)__builtin_ctzll(b);
        uint64_t *m;
        if ((st = merge_indices(u->sent[d], u->nsent[d], fresh[d], count[d], &m))) break;
        free(u->sent[d]);
        u->sent[d] = m, u->nsent[d] += count[d];
    }
    if (!st && !(*send = malloc((total ? total : 1) * sizeof **send))) st = FK_ENOMEM;
    for (int d = 0, at = 0; d < u->R && !st; d++)
        for (uint64_t k = 0; k < count[d]; k++, at++) {
            uint64_t i = fresh[d][k];
            ghost *g = &(*send)[at];
            memcpy(g->x, in->pos + 3 * i, sizeof g->x);
            g->m = in->mass[i], g->i = i, g->id = in->ids ? in->ids[i] : i;
            if (d != u->rank) u->me.sent++, u->me.bytes += sizeof *g;
        }
    for (int d = 0; fresh && d < u->R; d++) free(fresh[d]);
    free(fresh);
    if (st) {
        free(*send), *send = NULL;
        return fk_fail(err, FK_ENOMEM, "rank %d: out of memory for the particles of the SO spheres", u->rank);
    }
    return FK_OK;
}

/* Adds what came (grouped by rank, each ascending) to the particles held,
 * kept in (rank, index) order. */
static int hold(run *u, const ghost *got, const uint64_t *rcount, uint64_t ngot, fk_error *err)
{
    const uint64_t n = u->nheld + ngot, m = n ? n : 1;
    float *pos = malloc(m * 3 * sizeof *pos), *mass = malloc(m * sizeof *mass);
    uint64_t *idx = malloc(m * sizeof *idx), *id = malloc(m * sizeof *id);
    uint32_t *from = malloc(m * sizeof *from);
    if (!pos || !mass || !idx || !id || !from) {
        free(pos), free(mass), free(idx), free(id), free(from);
        return fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " particles of its SO spheres", u->rank,
                       n);
    }
    uint64_t i = 0, j = 0, k = 0;
    for (int s = 0; s < u->R; s++) {
        const uint64_t j1 = j + rcount[s];
        for (;; k++) {
            int old = i < u->nheld && u->hfrom[i] == (uint32_t)s, neu = j < j1;
            if (!old && !neu) break;
            if (old && (!neu || u->hidx[i] < got[j].i)) {
                memcpy(pos + 3 * k, u->hpos + 3 * i, 3 * sizeof *pos);
                mass[k] = u->hmass[i], idx[k] = u->hidx[i], id[k] = u->hid[i], from[k] = s, i++;
            } else {
                memcpy(pos + 3 * k, got[j].x, 3 * sizeof *pos);
                mass[k] = got[j].m, idx[k] = got[j].i, id[k] = got[j].id, from[k] = s, j++;
            }
        }
    }
    free(u->hpos), free(u->hmass), free(u->hidx), free(u->hid), free(u->hfrom);
    u->hpos = pos, u->hmass = mass, u->hidx = idx, u->hid = id, u->hfrom = from, u->nheld = n;
    return FK_OK;
}

/* Measures this rank's spheres asked for this round (asks[a0..a1)) over
 * the particles held; those whose last search went beyond the radius asked
 * go into *again (malloc'd) with that search's radius. */
static int measure(run *u, const ask *asks, uint64_t a0, uint64_t a1, const double *rho, size_t minpart, ask **again,
                   uint64_t *nagain, fk_error *err)
{
    const uint64_t na = a1 - a0, n = u->nheld;
    *again = NULL, *nagain = 0;
    if (!na) return FK_OK;
    double *c = malloc((na ? na : 1) * 3 * sizeof *c), *r0 = malloc((na ? na : 1) * sizeof *r0);
    double *R = malloc((na ? na : 1) * FK_SO_N * sizeof *R), *M = malloc((na ? na : 1) * FK_SO_N * sizeof *M);
    double *reach = malloc((na ? na : 1) * sizeof *reach);
    *again = malloc(na * sizeof **again);
    fk_so_grid *grid = NULL;
    int st = FK_OK;
    if (!c || !r0 || !R || !M || !reach || !*again)
        st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for its SO spheres", u->rank);
    if (!st) {
        for (uint64_t a = 0; a < na; a++) {
            const sphere *s = &u->sph[asks[a0 + a].h];
            memcpy(c + 3 * a, s->c, sizeof s->c);
            r0[a] = s->r0;
        }
        /* each cell's particles by ID: the sums of one process's grid, whatever the split */
        const fk_so_particles p = {n, u->hpos, u->hmass, u->in->periodic, u->in->box, u->in->origin,
                                   u->in->ids ? u->hid : NULL};
        st = fk_so_grid_build_frame(&p, &u->frame, &grid, err);
        if (!st) st = fk_so_measure_reach(grid, na, c, r0, FK_SO_N, rho, minpart, R, M, reach, err);
    }
    for (uint64_t a = 0; a < na && !st; a++) {
        const ask *q = &asks[a0 + a];
        result *out = &u->res[u->slot[q->h]];
        memcpy(out->R, R + FK_SO_N * a, sizeof out->R);
        memcpy(out->M, M + FK_SO_N * a, sizeof out->M);
        if (!(reach[a] <= q->r)) (*again)[(*nagain)++] = (ask){q->h, reach[a]};
    }
    fk_so_grid_free(grid);
    free(c), free(r0), free(R), free(M), free(reach);
    if (st) free(*again), *again = NULL, *nagain = 0;
    return st;
}

/* The rounds: requests, ghosts, measures, until every sphere is done.
 * Collective; failures agreed on. */
static int rounds(run *u, const double *rho, size_t minpart, fk_dso_info *info, fk_error *err)
{
    ask *asks = NULL;
    uint64_t nasks = 0;
    int st = first_asks(u, rho, &asks, &nasks, err);
    if (!st) {
        /* group the first round's requests by measuring rank, ascending within */
        ask *by = malloc((nasks ? nasks : 1) * sizeof *by);
        uint64_t *at = calloc((size_t)u->R + 1, sizeof *at);
        if (!by || !at) st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for the SO requests", u->rank);
        st = fk_dist_agree(st, err, NULL);
        if (!st) {
            for (uint64_t a = 0; a < nasks; a++) at[u->sph[asks[a].h].owner + 1]++;
            for (int d = 0; d < u->R; d++) at[d + 1] += at[d];
            for (uint64_t a = 0; a < nasks; a++) by[at[u->sph[asks[a].h].owner]++] = asks[a];
            free(asks);
            asks = by, by = NULL;
        }
        free(by), free(at);
    }
    for (int round = 0; !st && nasks; round++) {
        if (round < 64) info->asked[round] = nasks;
        info->rounds = round + 1;
        double t0 = fk_now();
        ghost *send = NULL, *got = NULL;
        uint64_t *count = calloc((size_t)u->R, sizeof *count), *rcount = calloc((size_t)u->R, sizeof *rcount), ngot = 0;
        st = count && rcount ? collect(u, asks, nasks, &send, count, err)
                             : fk_fail(err, FK_ENOMEM, "rank %d: out of memory", u->rank);
        st = fk_dist_agree(st, err, NULL);
        if (!st) st = fk_dist_alltoall(send, count, sizeof *send, (void **)&got, rcount, &ngot, err);
        free(send);
        if (!st) st = hold(u, got, rcount, ngot, err);
        free(got), free(count), free(rcount);
        st = fk_dist_agree(st, err, NULL);
        double t1 = fk_now();
        info->t_ghosts += t1 - t0;
        if (st) break;
        /* this rank's requests: a contiguous run of asks */
        uint64_t a0 = 0, a1;
        while (a0 < nasks && u->sph[asks[a0].h].owner < (uint32_t)u->rank) a0++;
        for (a1 = a0; a1 < nasks && u->sph[asks[a1].h].owner == (uint32_t)u->rank;) a1++;
        ask *again = NULL;
        uint64_t nagain = 0;
        st = measure(u, asks, a0, a1, rho, minpart, &again, &nagain, err);
        st = fk_dist_agree(st, err, NULL);
        info->t_measure += fk_now() - t1;
        free(asks), asks = NULL, nasks = 0;
        if (!st) {
            st = allgather_records(again, nagain, sizeof *again, (void **)&asks, &nasks, u->R, err);
            if (u->R > 1) u->me.bytes += nagain * sizeof *again * (uint64_t)(u->R - 1);
        }
        free(again);
    }
    free(asks);
    return st;
}

/* Rank 0 puts every rank's results into the rows. Collective. */
static int gather_results(run *u, fk_halo *const *rows, const uint64_t *ng, int nlevels, fk_error *err)
{
    int *rc = NULL, *rd = NULL;
    result *all = NULL;
    uint64_t *nown = NULL;
    int st = u->nmine > INT_MAX ? fk_fail(err, FK_EUNSUP, "rank %d: %" PRIu64 " SO spheres: at most %d", u->rank,
                                          u->nmine, INT_MAX)
                                : FK_OK;
    if (!st && u->rank == 0 &&
        (!(rc = calloc((size_t)u->R, sizeof *rc)) || !(rd = calloc((size_t)u->R, sizeof *rd)) ||
         !(nown = calloc((size_t)u->R, sizeof *nown)) || !(all = malloc((u->H ? u->H : 1) * sizeof *all))))
        st = fk_fail(err, FK_ENOMEM, "out of memory for the SO results of %" PRIu64 " halos", u->H);
    st = fk_dist_agree(st, err, NULL);
    if (!st) {
        if (u->rank == 0) {
            for (uint64_t h = 0; h < u->H; h++) nown[u->sph[h].owner]++;
            for (int d = 0, o = 0; d < u->R; d++) rc[d] = (int)nown[d], rd[d] = o, o += rc[d];
        }
        MPI_Datatype t;
        MPI_Type_contiguous((int)sizeof(result), MPI_BYTE, &t);
        MPI_Type_commit(&t);
        MPI_Gatherv(u->res, (int)u->nmine, t, all, rc, rd, t, 0, COMM);
        MPI_Type_free(&t);
        if (u->rank) u->me.bytes += u->nmine * sizeof(result);
        if (u->rank == 0) {
            uint64_t h = 0;
            for (int k = 0; k < nlevels; k++)
                for (uint64_t g = 0; g < ng[k]; g++, h++) {
                    const result *r = &all[(uint64_t)rd[u->sph[h].owner] + u->slot[h]];
                    fk_halo *o = &rows[k][g];
                    o->r200c = r->R[FK_SO_200C], o->m200c = r->M[FK_SO_200C];
                    o->r500c = r->R[FK_SO_500C], o->m500c = r->M[FK_SO_500C];
                    o->r200m = r->R[FK_SO_200M], o->m200m = r->M[FK_SO_200M];
                    o->rvir = r->R[FK_SO_VIR], o->mvir = r->M[FK_SO_VIR];
                }
        }
    }
    free(rc), free(rd), free(all), free(nown);
    return st;
}

/* The frame of the whole run's grid: the particle count and (isolated) the
 * bounds over every rank; this rank's own bounds into lo, hi. */
static void whole_frame(const fk_dso_in *in, fk_so_frame *f, double lo[3], double hi[3])
{
    double glo[3] = {0, 0, 0}, ghi[3] = {0, 0, 0};
    const fk_so_particles p = {in->n, in->pos, in->mass, in->periodic, in->box, in->origin, NULL};
    for (int k = 0; k < 3; k++) lo[k] = hi[k] = 0;
    if (!in->periodic) {
        fk_so_bounds(&p, lo, hi);
        MPI_Allreduce(lo, glo, 3, MPI_DOUBLE, MPI_MIN, COMM);
        MPI_Allreduce(hi, ghi, 3, MPI_DOUBLE, MPI_MAX, COMM);
    }
    fk_so_frame_make(in->ntotal, in->periodic, in->box, in->origin, glo, ghi, f);
}

int fk_dso_run(const fk_dso_in *in, fk_halo *const *rows, const uint64_t *ng, int nlevels, const double rho[FK_SO_N],
               size_t minpart, fk_dso_info *info, fk_error *err)
{
    const double t0 = fk_now();
    run u;
    memset(&u, 0, sizeof u);
    memset(info, 0, sizeof *info);
    MPI_Comm_rank(COMM, &u.rank);
    MPI_Comm_size(COMM, &u.R);
    u.in = in;
    info->ranks = u.R;
    for (int k = 0; k < nlevels; k++) u.H += ng[k];
    info->spheres = u.H;
    double lo[3], hi[3];
    whole_frame(in, &u.frame, lo, hi);

    /* the spheres, from rank 0; the slots of each rank's; the index */
    const uint64_t H = u.H, words = (in->n + 63) / 64;
    uint64_t *key = NULL, *nown = NULL;
    u.sph = malloc((H ? H : 1) * sizeof *u.sph);
    u.slot = malloc((H ? H : 1) * sizeof *u.slot);
    u.sent = calloc((size_t)u.R, sizeof *u.sent);
    u.nsent = calloc((size_t)u.R, sizeof *u.nsent);
    u.bits = malloc((words ? words : 1) * sizeof *u.bits);
    nown = calloc((size_t)u.R, sizeof *nown);
    if (u.rank == 0) key = malloc((ng[0] ? ng[0] : 1) * 2 * sizeof *key);
    int st = !u.sph || !u.slot || !u.sent || !u.nsent || !u.bits || !nown || (u.rank == 0 && !key)
                 ? fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " SO spheres", u.rank, H)
                 : FK_OK;
    if (!st) st = index_build(in, lo, hi, &u.x, err);
    st = fk_dist_agree(st, err, NULL);
    if (!st) {
        if (u.rank == 0) make_spheres(&u, rows, ng, nlevels, key);
        bcast_records(u.sph, H, sizeof *u.sph);
        if (u.rank == 0 && u.R > 1) u.me.bytes += H * sizeof *u.sph * (uint64_t)(u.R - 1);
        for (uint64_t h = 0; h < H; h++) u.slot[h] = nown[u.sph[h].owner]++;
        u.nmine = nown[u.rank];
        if (!(u.res = calloc(u.nmine ? u.nmine : 1, sizeof *u.res)))
            st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " SO spheres", u.rank, u.nmine);
        u.me.spheres = u.nmine;
    }
    free(key), free(nown);
    st = fk_dist_agree(st, err, NULL);
    info->t_index = fk_now() - t0;
    if (!st) st = rounds(&u, rho, minpart, info, err);
    double t1 = fk_now();
    if (!st) st = gather_results(&u, rows, ng, nlevels, err);
    info->t_gather = fk_now() - t1;
    u.me.particles = u.nheld;
    u.me.seconds = fk_now() - t0;
    if (!st && u.rank == 0 && !(info->rank = malloc((size_t)u.R * sizeof *info->rank)))
        st = fk_fail(err, FK_ENOMEM, "out of memory for %d ranks", u.R);
    st = fk_dist_agree(st, err, NULL);
    if (!st) {
        MPI_Datatype t;
        MPI_Type_contiguous((int)sizeof(fk_dso_rank), MPI_BYTE, &t);
        MPI_Type_commit(&t);
        MPI_Gather(&u.me, 1, t, info->rank, 1, t, 0, COMM);
        MPI_Type_free(&t);
    } else {
        free(info->rank), info->rank = NULL;
    }
    run_free(&u);
    return st;
}

#else /* a build without MPI */

int fk_dso_run(const fk_dso_in *in, fk_halo *const *rows, const uint64_t *ng, int nlevels, const double rho[FK_SO_N],
               size_t minpart, fk_dso_info *info, fk_error *err)
{
    (void)in, (void)rows, (void)ng, (void)nlevels, (void)rho, (void)minpart;
    memset(info, 0, sizeof *info);
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
}

int fk_dso_mass_total(uint64_t n, const float *mass, double *total, const char *name, fk_error *err)
{
    (void)n, (void)mass, (void)name;
    *total = 0;
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
}

#endif
