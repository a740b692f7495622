/* mock.c - generating a clustered mock universe (NFW halos in a uniform background), reproducibly and in parallel. */
#include "mock.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tipsy.h"

#define PI 3.14159265358979323846
#define SLOPE 1.9            /* dN/dM ~ M^-SLOPE */
#define BIG_C 15.0           /* concentration of the extra big halo */
#define BULK_SIGMA 0.1       /* halo bulk velocity, per component */
#define BACKGROUND_SIGMA 0.05 /* background velocity, per component */
#define NO_HALO UINT64_MAX   /* piece of the background */
#define GAS_STREAM (UINT64_C(1) << 62) /* added to a piece's number: its gas offsets' stream */

struct fk_mock_piece {
    uint64_t first; /* output index of its first particle */
    uint64_t halo;  /* its halo, or NO_HALO */
    uint32_t index; /* piece number within the halo (or the background) */
    uint32_t count;
};

/* ---- random numbers: splitmix64 to seed, xoshiro256** to draw ------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

typedef struct rng {
    uint64_t s[4];
    double spare; /* the second normal of a Box-Muller pair */
    int has_spare;
} rng;

/* A stream for (seed, a, b): each key is mixed in through splitmix64 so
 * that nearby keys give unrelated streams. */
static void rng_init(rng *r, uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t x = seed;
    x = splitmix64(&x) ^ a;
    x = splitmix64(&x) ^ b;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
    r->has_spare = 0;
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1). */
static inline double rng_uniform(rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Standard normal (Box-Muller). */
static inline double rng_normal(rng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u1 = 1.0 - rng_uniform(r), u2 = rng_uniform(r); /* u1 in (0, 1] */
    double rad = sqrt(-2.0 * log(u1));
    r->spare = rad * sin(2 * PI * u2);
    r->has_spare = 1;
    return rad * cos(2 * PI * u2);
}

/* ---- the NFW profile -------------------------------------------------------- */

/* Enclosed mass m(x) = ln(1 + x) - x / (1 + x); the series near 0 avoids
 * the cancellation between the two terms. */
static double nfw_m(double x)
{
    if (x < 1e-3) return x * x * (0.5 - x * (2.0 / 3.0 - x * 0.75));
    return log1p(x) - x / (1.0 + x);
}

double fk_mock_nfw_radius(double u, double c)
{
    double t = u * nfw_m(c), a = 0, b = c;
    if (!(t > 0)) return 0;
    /* start from the small-x inverse (m ~ x^2 / 2), or the large-x one (m ~ ln(1 + x) - 1) */
    double x = t < 0.2 ? sqrt(2 * t) * (1 + sqrt(2 * t)) : expm1(t + 1) * 0.8;
    if (!(x > 0 && x < c)) x = 0.5 * c;
    for (int it = 0; it < 100; it++) {
        double f = nfw_m(x) - t;
        if (f < 0)
            a = x;
        else
            b = x;
        double slope = x / ((1 + x) * (1 + x)); /* m'(x) */
        double next = x - f / slope;
        if (!(next > a && next < b)) next = 0.5 * (a + b);
        if (fabs(next - x) <= 1e-11 * x || b - a <= 1e-15 * b) return next;
        x = next;
    }
    return x;
}

double fk_mock_concentration(double mass)
{
    double c = 7.0 * pow(mass / 1e-3, -0.1);
    return c < 3 ? 3 : c > 20 ? 20 : c;
}

/* ---- planning --------------------------------------------------------------- */

void fk_mock_defaults(fk_mock_params *p, uint64_t n)
{
    p->n = n;
    p->seed = FK_MOCK_SEED;
    p->halo_fraction = 0.55;
    p->min_halo = 32;
    p->max_halo = 0;
    p->big_halo = 0;
    p->big_c = 0;
    p->big_r200 = 0;
    p->big_placed = 0;
    for (int d = 0; d < 3; d++) p->big_centre[d] = 0;
}

/* The size of halo i of h (largest first): the size whose expected count
 * above it is i + 1/2 under dN/dM ~ M^-SLOPE on [lo, hi]. */
static uint64_t quantile_size(uint64_t i, uint64_t h, double lo, double hi)
{
    const double g = SLOPE - 1;
    double a = pow(hi, -g), b = pow(lo, -g);
    double m = pow(a + ((double)i + 0.5) / (double)h * (b - a), -1 / g);
    uint64_t k = (uint64_t)llround(m);
    return k < (uint64_t)lo ? (uint64_t)lo : k > (uint64_t)hi ? (uint64_t)hi : k;
}

static uint64_t total_size(uint64_t h, double lo, double hi)
{
    uint64_t sum = 0;
    for (uint64_t i = 0; i < h; i++) sum += quantile_size(i, h, lo, hi);
    return sum;
}

/* Fills in a halo of npart particles from its own random stream. */
static void make_halo(fk_mock_halo *h, const fk_mock_params *p, uint64_t index, uint64_t first, uint64_t npart,
                      int big)
{
    rng r;
    rng_init(&r, p->seed, index, UINT64_MAX);
    h->first = first;
    h->npart = npart;
    h->mass = (double)npart / (double)p->n;
    h->r200 = big && p->big_r200 > 0 ? p->big_r200 : cbrt(3 * h->mass / (4 * PI * 200));
    h->c = !big ? fk_mock_concentration(h->mass) : p->big_c > 0 ? p->big_c : BIG_C;
    h->sigma = sqrt(h->mass / h->r200) / sqrt(2.0);
    for (int d = 0; d < 3; d++) h->centre[d] = rng_uniform(&r) - 0.5;
    if (big && p->big_placed)
        for (int d = 0; d < 3; d++) h->centre[d] = p->big_centre[d];
    for (int d = 0; d < 3; d++) h->vbulk[d] = BULK_SIGMA * rng_normal(&r);
}

int fk_mock_plan(fk_mock *m, const fk_mock_params *p, fk_error *err)
{
    memset(m, 0, sizeof *m);
    m->p = *p;
    if (p->n < 1 || p->n > INT32_MAX)
        return fk_fail(err, FK_EINVAL, "the number of particles must be 1 to %" PRId32 ", not %" PRIu64, INT32_MAX,
                       p->n);
    if (!(p->halo_fraction >= 0 && p->halo_fraction <= 1))
        return fk_fail(err, FK_EINVAL, "the halo fraction must be within [0, 1], not %g", p->halo_fraction);
    if (p->min_halo < 1) return fk_fail(err, FK_EINVAL, "the smallest halo must have at least 1 particle");
    if (p->big_halo > p->n)
        return fk_fail(err, FK_EINVAL, "the big halo (%" PRIu64 " particles) does not fit in %" PRIu64, p->big_halo,
                       p->n);
    if (!(p->big_c >= 0 && p->big_c <= 1000))
        return fk_fail(err, FK_EINVAL, "the big halo's concentration must be within (0, 1000], not %g", p->big_c);
    if (!(p->big_r200 >= 0 && p->big_r200 <= 0.5))
        return fk_fail(err, FK_EINVAL, "the big halo's radius must be within (0, 0.5], not %g", p->big_r200);
    for (int d = 0; p->big_placed && d < 3; d++)
        if (!(p->big_centre[d] >= -0.5 && p->big_centre[d] < 0.5))
            return fk_fail(err, FK_EINVAL, "the big halo's centre must lie in [-0.5, 0.5)^3, not %g on axis %d",
                           p->big_centre[d], d);
    uint64_t maxh = p->max_halo ? p->max_halo : p->n / 4;
    if (p->max_halo && p->max_halo < p->min_halo)
        return fk_fail(err, FK_EINVAL, "the largest halo (%" PRIu64 ") is smaller than the smallest (%" PRIu64 ")",
                       p->max_halo, p->min_halo);

    /* how many halos fit in the budget (the largest count whose sizes do) */
    uint64_t rest = p->n - p->big_halo;
    uint64_t budget = (uint64_t)floor(p->halo_fraction * (double)rest);
    if (budget > rest) budget = rest;
    uint64_t h = 0;
    if (maxh >= p->min_halo && budget >= p->min_halo) {
        uint64_t lo = 0, hi = budget / p->min_halo;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo + 1) / 2;
            if (total_size(mid, (double)p->min_halo, (double)maxh) <= budget)
                lo = mid;
            else
                hi = mid - 1;
        }
        h = lo;
    }
    m->nhalo = h + (p->big_halo ? 1 : 0);
    m->halo = calloc(m->nhalo ? m->nhalo : 1, sizeof *m->halo);
    if (!m->halo) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " halos", m->nhalo);
    uint64_t at = 0, k = 0;
    if (p->big_halo) {
        make_halo(&m->halo[k++], p, 0, at, p->big_halo, 1);
        at += p->big_halo;
    }
    for (uint64_t i = 0; i < h; i++, k++) {
        uint64_t size = quantile_size(i, h, (double)p->min_halo, (double)maxh);
        make_halo(&m->halo[k], p, k, at, size, 0);
        at += size;
    }
    m->nhalo_particles = at;
    m->nbackground = p->n - at;

    /* units of work: every halo in pieces of FK_MOCK_PIECE, then the background */
    uint64_t np = (m->nbackground + FK_MOCK_PIECE - 1) / FK_MOCK_PIECE;
    for (uint64_t i = 0; i < m->nhalo; i++) np += (m->halo[i].npart + FK_MOCK_PIECE - 1) / FK_MOCK_PIECE;
    m->piece = malloc((np ? np : 1) * sizeof *m->piece);
    if (!m->piece) return fk_fail(err, FK_ENOMEM, "out of memory planning %" PRIu64 " particles", p->n);
    for (uint64_t i = 0; i <= m->nhalo; i++) {
        uint64_t first = i < m->nhalo ? m->halo[i].first : m->nhalo_particles;
        uint64_t count = i < m->nhalo ? m->halo[i].npart : m->nbackground;
        for (uint64_t j = 0; j * FK_MOCK_PIECE < count; j++) {
            struct fk_mock_piece *pc = &m->piece[m->npiece++];
            pc->first = first + j * FK_MOCK_PIECE;
            pc->halo = i < m->nhalo ? i : NO_HALO;
            pc->index = (uint32_t)j;
            pc->count = (uint32_t)(count - j * FK_MOCK_PIECE < FK_MOCK_PIECE ? count - j * FK_MOCK_PIECE : FK_MOCK_PIECE);
        }
    }
    return FK_OK;
}

void fk_mock_free(fk_mock *m)
{
    free(m->halo);
    free(m->piece);
    memset(m, 0, sizeof *m);
}

/* ---- generating -------------------------------------------------------------- */

static inline float wrap(double x)
{
    float f = (float)x;
    fk_tipsy_wrap(&f, -0.5, 1.0, -0.5f, 0.5f);
    return f;
}

/* Generates every particle of piece pc, keeping those in [start, end); with
 * gas, each moved by a Gaussian offset of sigma gas per component from a
 * stream of the piece's own (GAS_STREAM apart from its dark matter's). */
static void gen_piece(const fk_mock *m, const struct fk_mock_piece *pc, uint64_t start, uint64_t end, float *pos,
                      float *vel, double gas)
{
    rng r, g;
    rng_init(&r, m->p.seed, pc->halo, pc->index);
    rng_init(&g, m->p.seed, pc->halo, GAS_STREAM | pc->index);
    const fk_mock_halo *h = pc->halo == NO_HALO ? NULL : &m->halo[pc->halo];
    for (uint32_t k = 0; k < pc->count; k++) {
        double x[3], v[3];
        if (h) {
            double rad = fk_mock_nfw_radius(rng_uniform(&r), h->c) * h->r200 / h->c;
            double cz = 2 * rng_uniform(&r) - 1, phi = 2 * PI * rng_uniform(&r);
            double sz = sqrt(1 - cz * cz);
            x[0] = h->centre[0] + rad * sz * cos(phi);
            x[1] = h->centre[1] + rad * sz * sin(phi);
            x[2] = h->centre[2] + rad * cz;
            for (int d = 0; d < 3; d++) v[d] = h->vbulk[d] + h->sigma * rng_normal(&r);
        } else {
            for (int d = 0; d < 3; d++) x[d] = rng_uniform(&r) - 0.5;
            for (int d = 0; d < 3; d++) v[d] = BACKGROUND_SIGMA * rng_normal(&r);
        }
        if (gas > 0)
            for (int d = 0; d < 3; d++) x[d] += gas * rng_normal(&g);
        uint64_t i = pc->first + k;
        if (i < start || i >= end) continue;
        for (int d = 0; d < 3; d++) {
            pos[3 * (i - start) + d] = wrap(x[d]);
            vel[3 * (i - start) + d] = (float)v[d];
        }
    }
}

static void generate(const fk_mock *m, uint64_t start, uint64_t count, float *pos, float *vel, double gas)
{
    uint64_t end = start + count;
    /* the first piece that holds start: the last with first <= start */
    uint64_t lo = 0, hi = m->npiece;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (m->piece[mid].first <= start)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t last = lo;
    while (last < m->npiece && m->piece[last].first < end) last++;
    #pragma omp parallel for schedule(dynamic, 1)
    for (uint64_t i = lo; i < last; i++) gen_piece(m, &m->piece[i], start, end, pos, vel, gas);
}

void fk_mock_generate(const fk_mock *m, uint64_t start, uint64_t count, float *pos, float *vel)
{
    generate(m, start, count, pos, vel, 0);
}

void fk_mock_generate_gas(const fk_mock *m, uint64_t start, uint64_t count, float *pos, float *vel)
{
    generate(m, start, count, pos, vel, FK_MOCK_GAS_OFFSET / cbrt((double)m->p.n));
}
