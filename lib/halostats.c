/* halostats.c - per-group mass, centres across the periodic boundary, velocity, dispersion, extent, profile and spin. */
#define _GNU_SOURCE /* qsort_r */
#include "halostats.h"
#include "shells.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define COL(name, dim, desc, type, field, format, flags) \
    {name, dim, desc, type, offsetof(fk_halo, field), format, flags}
#define U64(name, desc, field, flags) COL(name, FK_DIM_1, desc, FK_HCOL_U64, field, "%" PRIu64, flags)
#define F64(name, dim, desc, field, flags) COL(name, dim, desc, FK_HCOL_F64, field, "%.9g", flags)

/* %.9g prints a binary32 input exactly and is ample for the double results,
 * whose accuracy is that of the binary32 positions and velocities. */
const fk_halo_column fk_halo_columns[] = {
    U64("level", "level of the hierarchy: 0 for the longest linking length", level, 0),
    U64("host", "id of the group of level - 1 that holds this one; 0 at level 0", host, 0),
    U64("id", "group id within its level: 1 is the largest group, ties by lowest member ID", id, 0),
    U64("n", "member particles", n, 0),
    F64("mass", FK_DIM_MASS, "sum of member masses", mass, 0),
    F64("x", FK_DIM_LENGTH, "centre of mass x, in [origin, origin+box) when periodic", x[0], 0),
    F64("y", FK_DIM_LENGTH, "centre of mass y", x[1], 0),
    F64("z", FK_DIM_LENGTH, "centre of mass z", x[2], 0),
    F64("vx", FK_DIM_VELOCITY, "mass-weighted mean velocity x", v[0], 0),
    F64("vy", FK_DIM_VELOCITY, "mass-weighted mean velocity y", v[1], 0),
    F64("vz", FK_DIM_VELOCITY, "mass-weighted mean velocity z", v[2], 0),
    F64("sigma_v", FK_DIM_VELOCITY, "3D velocity dispersion: sqrt(sum m |v - <v>|^2 / sum m)", sigma_v, 0),
    F64("rmax", FK_DIM_LENGTH, "largest distance of a member from the centre of mass (minimum image)", rmax, 0),
    F64("xc", FK_DIM_LENGTH, "centre x: the most bound member (--centre=mbp) or the centre of mass", xc[0], 0),
    F64("yc", FK_DIM_LENGTH, "centre y", xc[1], 0),
    F64("zc", FK_DIM_LENGTH, "centre z", xc[2], 0),
    U64("mbp_id", "original index (ID) of the most bound member: least phi; -1 with --centre=com", mbp_id,
        FK_HCOL_MBP),
    F64("phi_mbp", FK_DIM_VELOCITY2,
        "its potential: -G sum_(j != mbp) m_j / sqrt(r_j^2 + eps^2), exact sum; nan with --centre=com", phi_mbp,
        FK_HCOL_MBP),
    F64("rc_max", FK_DIM_LENGTH, "largest distance r of a member from the centre", rc_max, 0),
    F64("r_half", FK_DIM_LENGTH, "least member r with M(<=r) >= mass / 2", r_half, 0),
    F64("vmax", FK_DIM_VELOCITY, "maximum circular velocity: max over member r > 0 of sqrt(G M(<=r) / r)", vmax, 0),
    F64("r_vmax", FK_DIM_LENGTH, "the least member r where vmax is reached", r_vmax, 0),
    F64("lambda", FK_DIM_1,
        "spin (Bullock et al. 2001): |J| / (sqrt(2) M V R), R = rc_max, V = sqrt(G M / R), J about the centre",
        lambda, 0),
    U64("n_gas", "gas members (TYPE 0; Gadget's type 0)", n_type[0], 0),
    U64("n_dark", "dark-matter members (TYPE 1: Gadget's types 1, 2, 3 and 5, which the stream does not tell apart)",
        n_type[1], 0),
    U64("n_star", "star members (TYPE 2; Gadget's type 4)", n_type[2], 0),
    F64("m_gas", FK_DIM_MASS, "mass of the gas members", m_type[0], 0),
    F64("m_dark", FK_DIM_MASS, "mass of the dark-matter members", m_type[1], 0),
    F64("m_star", FK_DIM_MASS, "mass of the star members", m_type[2], 0),
    U64("n_contam",
        "contaminants: dark members heavier than m_hires (1 + 1e-6), m_hires the least dark mass of the stream",
        n_contam, 0),
    F64("m_contam", FK_DIM_MASS, "their mass (m_contam / mass: the contaminating fraction)", m_contam, 0),
    F64("r200c", FK_DIM_LENGTH, "radius of mean density 200 rho_crit(a) about the centre, all particles; nan: not reached",
        r200c, FK_HCOL_SO),
    F64("m200c", FK_DIM_MASS, "4/3 pi r200c^3 200 rho_crit(a): the mass within r200c", m200c, FK_HCOL_SO),
    F64("r500c", FK_DIM_LENGTH, "radius of mean density 500 rho_crit(a)", r500c, FK_HCOL_SO),
    F64("m500c", FK_DIM_MASS, "the mass within r500c", m500c, FK_HCOL_SO),
    F64("r200m", FK_DIM_LENGTH, "radius of mean density 200 rho_mean", r200m, FK_HCOL_SO),
    F64("m200m", FK_DIM_MASS, "the mass within r200m", m200m, FK_HCOL_SO),
    F64("rvir", FK_DIM_LENGTH, "radius of mean density Delta_vir rho_crit(a) (Bryan & Norman 1998)", rvir, FK_HCOL_SO),
    F64("mvir", FK_DIM_MASS, "the mass within rvir", mvir, FK_HCOL_SO),
    U64("n_bound", "members of the self-bound part (iterative unbinding); 0: the group is not bound", n_bound,
        FK_HCOL_UNBIND),
    F64("mass_bound", FK_DIM_MASS, "their mass", mass_bound, FK_HCOL_UNBIND),
};
const size_t fk_halo_ncolumns = sizeof fk_halo_columns / sizeof fk_halo_columns[0];

void fk_halo_units_default(fk_halo_units *u)
{
    *u = (fk_halo_units){1, 1, 1, "length", "mass", "velocity"};
}

double fk_halo_units_factor(const fk_halo_units *u, fk_dim d)
{
    switch (d) {
    case FK_DIM_LENGTH: return u->length;
    case FK_DIM_MASS: return u->mass;
    case FK_DIM_VELOCITY: return u->velocity;
    case FK_DIM_VELOCITY2: return u->velocity * u->velocity;
    default: return 1;
    }
}

const char *fk_unit_power(const char *name, int power, char *buf, size_t size)
{
    /* a plain word takes the power as it is, anything else in brackets */
    int plain = strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") == strlen(name);
    if (power == 1)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, plain ? "%s^%d" : "(%s)^%d", name, power);
    return buf;
}

const char *fk_halo_units_name(const fk_halo_units *u, fk_dim d, char *buf, size_t size)
{
    switch (d) {
    case FK_DIM_LENGTH: snprintf(buf, size, "%s", u->length_name); break;
    case FK_DIM_MASS: snprintf(buf, size, "%s", u->mass_name); break;
    case FK_DIM_VELOCITY: snprintf(buf, size, "%s", u->velocity_name); break;
    case FK_DIM_VELOCITY2: fk_unit_power(u->velocity_name, 2, buf, size); break;
    default: snprintf(buf, size, "1");
    }
    return buf;
}

double fk_halo_value(const fk_halo *h, const fk_halo_column *c, const fk_halo_units *u)
{
    const char *field = (const char *)h + c->offset;
    if (c->type == FK_HCOL_U64) {
        uint64_t v = *(const uint64_t *)field;
        return v == FK_HALO_NONE ? -1.0 : (double)v;
    }
    return *(const double *)field * (u ? fk_halo_units_factor(u, c->dim) : 1.0);
}

int fk_halo_format(const fk_halo *h, const fk_halo_column *c, const fk_halo_units *u, char *buf, size_t size)
{
    const char *field = (const char *)h + c->offset;
    if (c->type == FK_HCOL_U64) {
        uint64_t v = *(const uint64_t *)field;
        return v == FK_HALO_NONE ? snprintf(buf, size, "-1") : snprintf(buf, size, c->format, v);
    }
    /* + 0.0: a negative zero (the potential of a group of one, -G times an empty sum) prints as 0 */
    return snprintf(buf, size, c->format, fk_halo_value(h, c, u) + 0.0);
}

/* ---- the groups' members and the passes over them ------------------------- */

/* The positions and the box, as the offsets take them (by value: held in
 * registers by the loops, whatever they store). half: half the box side,
 * below which an offset needs no wrapping; 0.5 * box is exact for every
 * normal box (a subnormal one gets -1: every offset takes the division). */
typedef struct frame {
    const float *pos;
    double box, half;
    int periodic;
} frame;

static frame frame_of(const fk_halo_input *in)
{
    return (frame){in->pos, in->box, in->periodic && in->box >= DBL_MIN ? 0.5 * in->box : -1, in->periodic};
}

/* x_i - x_ref on one axis, as the minimum image in a periodic box:
 * d - box * nearbyint(d / box). With |d| <= box / 2, d / box rounds to at
 * most 1/2 in magnitude, which nearbyint (ties to even) takes to +-0, and
 * d - box * (+-0) is d + 0 (a -0 becomes +0, every other d stays): the
 * division is made only for the members that cross the boundary. */
static inline double offset(frame f, uint64_t i, uint64_t ref, int k)
{
    double d = (double)f.pos[3 * i + k] - (double)f.pos[3 * ref + k];
    if (!f.periodic) return d;
    return fabs(d) <= f.half ? d + 0.0 : d - f.box * nearbyint(d / f.box);
}

static double total_weight(const fk_halo *a)
{
    return a->mass > 0 ? a->mass : (double)a->n;
}

/* x wrapped into [origin, origin + box) in a periodic box. */
static double wrap(const fk_halo_input *in, double x)
{
    if (in->periodic) {
        x -= in->box * floor((x - in->origin) / in->box);
        if (x >= in->origin + in->box) x = in->origin; /* rounding at the top edge */
    }
    return x;
}

static int by_size(const void *a, const void *b, void *ctx)
{
    const uint64_t *first = ctx, x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    const uint64_t nx = first[x + 1] - first[x], ny = first[y + 1] - first[y];
    if (nx != ny) return nx > ny ? -1 : 1;
    return (x > y) - (x < y);
}

/* Groups [g0, g1) as threads take them: largest first (ties by number),
 * so that the last ones to finish are short (groups numbers them so
 * already: then nothing is sorted). NULL when out of memory. */
static uint64_t *largest_first(const uint64_t *first, uint64_t g0, uint64_t g1)
{
    uint64_t *ord = malloc((g1 > g0 ? g1 - g0 : 1) * sizeof *ord);
    if (!ord) return NULL;
    int sorted = 1;
    for (uint64_t g = g0; g < g1; g++) {
        ord[g - g0] = g;
        if (g > g0 && first[g + 1] - first[g] > first[g] - first[g - 1]) sorted = 0;
    }
    if (!sorted) qsort_r(ord, g1 - g0, sizeof *ord, by_size, (void *)first);
    return ord;
}

/* Groups of at most SMALL members are handed to threads CHUNK at a time:
 * one at a time, a hundred thousand of them cost more in hand-outs than in
 * work. */
#define SMALL 256
#define CHUNK 64

/* Groups of more members than this take every thread, one group at a time:
 * an eighth of a thread's share of the members, and more than FK_POT_ALONE,
 * so that neither a thread's scratch nor the last thread to finish holds
 * more than such a share. */
static uint64_t alone_above(const fk_halo_order *o)
{
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    const uint64_t share = o->first[o->ng] / (8 * (uint64_t)nt);
    return share > FK_POT_ALONE ? share : FK_POT_ALONE;
}

/* How many of the count groups in ord (largest first) have more than
 * SMALL members. */
static uint64_t count_large(const fk_halo_order *o, const uint64_t *ord, uint64_t count)
{
    uint64_t j = 0;
    while (j < count && o->first[ord[j] + 1] - o->first[ord[j]] > SMALL) j++;
    return j;
}

/* A group's members by type and its contaminants, added up member by
 * member in member (ID) order. */
typedef struct tally {
    uint64_t n[3], nc;
    double m[3], mc;
} tally;

/* Member i of mass m into t: its type (type NULL or a value above FK_STAR:
 * dark), and a contaminant when dark and heavier than m_hires (1 + tol). */
static inline void tally_add(const fk_halo_input *in, uint64_t i, float m, tally *t)
{
    const unsigned k = in->type && in->type[i] < 3 ? in->type[i] : 1; /* 1: snap.h's FK_DARK */
    t->n[k]++, t->m[k] += m;
    if (k == 1 && fk_halo_contaminant(in->m_hires, m)) t->nc++, t->mc += m;
}

static void tally_set(const tally *t, fk_halo *a)
{
    for (int k = 0; k < 3; k++) a->n_type[k] = t->n[k], a->m_type[k] = t->m[k];
    a->n_contam = t->nc, a->m_contam = t->mc;
}

double fk_halo_hires_mass(uint64_t n, const float *mass, const uint8_t *type)
{
    float least = INFINITY;
#pragma omp parallel for schedule(static) reduction(min : least)
    for (uint64_t i = 0; i < n; i++)
        if ((!type || type[i] == 1 || type[i] > 2) && mass[i] >= 0 && mass[i] < least) least = mass[i];
    return least;
}

/* Pass 1 over group g's members, in member (ID) order: each checked, then n,
 * the mass, the members by type and the contaminants, and the reference
 * member (lowest ID). Returns the first bad member's stream index (the
 * group's lowest), or UINT64_MAX. */
static uint64_t weigh(const fk_halo_input *in, const fk_halo_order *o, uint64_t g, fk_halo *a)
{
    const float *pos = in->pos, *vel = in->vel, *mass = in->mass;
    const uint64_t *ids = in->ids;
    uint64_t n = 0, minid = UINT64_MAX, ref = 0, bad = UINT64_MAX;
    double sum = 0;
    tally t = {{0, 0, 0}, 0, {0, 0, 0}, 0};
    for (uint64_t k = o->first[g]; k < o->first[g + 1]; k++) {
        const uint64_t i = fk_halo_order_at(o, k);
        const float m = mass[i];
        if (!(m >= 0) || !isfinite(m) || !isfinite(pos[3 * i]) || !isfinite(pos[3 * i + 1]) ||
            !isfinite(pos[3 * i + 2]) || !isfinite(vel[3 * i]) || !isfinite(vel[3 * i + 1]) ||
            !isfinite(vel[3 * i + 2])) {
            bad = i;
            break;
        }
        const uint64_t id = ids ? ids[i] : i;
        n++;
        sum += m;
        tally_add(in, i, m, &t);
        if (id < minid) minid = id, ref = i;
    }
    a->n = n, a->mass = sum, a->minid = minid, a->ref = ref;
    tally_set(&t, a);
    return bad;
}

/* The centre of mass and the mean velocity from their weighted sums rel
 * (about the reference member) and v, divided by W there. */
static void set_means(const fk_halo_input *in, uint64_t ref, double W, double rel[3], double v[3], fk_halo *a)
{
    for (int q = 0; q < 3; q++) {
        rel[q] /= W;
        v[q] /= W;
        a->v[q] = v[q];
        a->x[q] = wrap(in, (double)in->pos[3 * ref + q] + rel[q]);
    }
}

/* Member i's squared distance from the centre of mass (rel, about ref) into
 * *r2; its squared speed about the mean velocity v returned (in a comoving
 * stream the peculiar velocity's, plus the Hubble flow hflow d about the
 * centre of mass). */
static inline double spread_of(const fk_halo_input *in, frame fr, uint64_t i, uint64_t ref, const double rel[3],
                               const double v[3], double *r2)
{
    double d2 = 0, v2 = 0;
    for (int q = 0; q < 3; q++) {
        double d = offset(fr, i, ref, q) - rel[q];
        double u = fk_halo_vel(in, i, q) - v[q];
        if (in->comoving) u += in->hflow * d;
        d2 += d * d;
        v2 += u * u;
    }
    *r2 = d2;
    return v2;
}

/* Passes 2 and 3 over group g's members, in member (ID) order: the centre of mass
 * and the mean velocity, then the dispersion about the latter and the
 * largest distance from the former. Weights: the masses, or 1 each for a
 * group of mass 0. */
static void moments(const fk_halo_input *in, const fk_halo_order *o, uint64_t g, fk_halo *a)
{
    const frame fr = frame_of(in);
    const float *mass = in->mass;
    const uint64_t f = o->first[g], e = o->first[g + 1], ref = a->ref;
    const int unit = !(a->mass > 0);
    double rel[3] = {0, 0, 0}, v[3] = {0, 0, 0};
    for (uint64_t k = f; k < e; k++) {
        const uint64_t i = fk_halo_order_at(o, k);
        const double w = unit ? 1.0 : (double)mass[i];
        for (int q = 0; q < 3; q++) {
            rel[q] += w * offset(fr, i, ref, q);
            v[q] += w * fk_halo_vel(in, i, q);
        }
    }
    const double W = total_weight(a);
    set_means(in, ref, W, rel, v, a);
    double s2 = 0, r2max = 0;
    for (uint64_t k = f; k < e; k++) {
        const uint64_t i = fk_halo_order_at(o, k);
        double r2, v2 = spread_of(in, fr, i, ref, rel, v, &r2);
        s2 += (unit ? 1.0 : (double)mass[i]) * v2;
        if (r2 > r2max) r2max = r2;
    }
    a->sigma_v = sqrt(s2 / W);
    a->rmax = sqrt(r2max);
}

/* The most members of a slab of a large group, whose terms (48 bytes a
 * member) its threads make and one thread then adds up: few slabs, so few
 * barriers (a thread that waits its turn for a core, on a loaded machine,
 * holds up every barrier), in 48 MiB. */
#define SLAB (UINT64_C(1) << 20)

/* weigh on every thread, for a group too large for one: the checks and the
 * reference member (the lowest ID, the first in member order among equals)
 * on all threads while one adds the masses in member order. */
static uint64_t weigh_all(const fk_halo_input *in, const fk_halo_order *o, uint64_t g, fk_halo *a)
{
    const float *pos = in->pos, *vel = in->vel, *mass = in->mass;
    const uint64_t *ids = in->ids, f = o->first[g], e = o->first[g + 1];
    uint64_t bad = UINT64_MAX, minid = UINT64_MAX, at = UINT64_MAX;
    double sum = 0;
    tally t = {{0, 0, 0}, 0, {0, 0, 0}, 0};
#pragma omp parallel
    {
#pragma omp single nowait
        for (uint64_t k = f; k < e; k++) {
            const uint64_t i = fk_halo_order_at(o, k);
            sum += mass[i];
            tally_add(in, i, mass[i], &t);
        }
        uint64_t my_bad = UINT64_MAX, my_id = UINT64_MAX, my_at = UINT64_MAX;
#pragma omp for schedule(dynamic, 65536) nowait
        for (uint64_t k = f; k < e; k++) {
            const uint64_t i = fk_halo_order_at(o, k);
            const float m = mass[i];
            if (!(m >= 0) || !isfinite(m) || !isfinite(pos[3 * i]) || !isfinite(pos[3 * i + 1]) ||
                !isfinite(pos[3 * i + 2]) || !isfinite(vel[3 * i]) || !isfinite(vel[3 * i + 1]) ||
                !isfinite(vel[3 * i + 2])) {
                if (i < my_bad) my_bad = i;
                continue;
            }
            const uint64_t id = ids ? ids[i] : i;
            if (id < my_id || (id == my_id && k < my_at)) my_id = id, my_at = k;
        }
#pragma omp critical(fk_halo_weigh_all)
        {
            if (my_bad < bad) bad = my_bad;
            if (my_id < minid || (my_id == minid && my_at < at)) minid = my_id, at = my_at;
        }
    }
    if (bad != UINT64_MAX) return bad;
    a->n = e - f, a->mass = sum, a->minid = minid, a->ref = fk_halo_order_at(o, at);
    tally_set(&t, a);
    return UINT64_MAX;
}

/* moments on every thread, for a group too large for one: slab by slab,
 * the threads make each member's terms (w d and w v; then w |v - <v>|^2 and
 * |d - <d>|^2) and one thread adds them in member order, the same sums;
 * the largest distance is a maximum, taken on every thread. buf: 6 x slab
 * doubles. */
static void moments_all(const fk_halo_input *in, const fk_halo_order *o, uint64_t g, fk_halo *a, double *buf,
                        uint64_t slab)
{
    const frame fr = frame_of(in);
    const float *mass = in->mass;
    const uint64_t f = o->first[g], e = o->first[g + 1], ref = a->ref;
    const int unit = !(a->mass > 0);
    const double W = total_weight(a);
    double rel[3] = {0, 0, 0}, v[3] = {0, 0, 0}, s2 = 0, r2max = 0;
#pragma omp parallel
    {
        for (uint64_t c0 = f; c0 < e; c0 += slab) {
            const uint64_t c1 = c0 + slab < e ? c0 + slab : e;
#pragma omp for schedule(static)
            for (uint64_t k = c0; k < c1; k++) {
                const uint64_t i = fk_halo_order_at(o, k);
                const double w = unit ? 1.0 : (double)mass[i];
                double *t = buf + 6 * (k - c0);
                for (int q = 0; q < 3; q++) {
                    t[q] = w * offset(fr, i, ref, q);
                    t[3 + q] = w * fk_halo_vel(in, i, q);
                }
            }
#pragma omp single
            for (uint64_t k = c0; k < c1; k++)
                for (int q = 0; q < 3; q++) rel[q] += buf[6 * (k - c0) + q], v[q] += buf[6 * (k - c0) + 3 + q];
        }
#pragma omp single
        set_means(in, ref, W, rel, v, a);
        for (uint64_t c0 = f; c0 < e; c0 += slab) {
            const uint64_t c1 = c0 + slab < e ? c0 + slab : e;
#pragma omp for schedule(static) reduction(max : r2max)
            for (uint64_t k = c0; k < c1; k++) {
                const uint64_t i = fk_halo_order_at(o, k);
                double r2, v2 = spread_of(in, fr, i, ref, rel, v, &r2);
                buf[k - c0] = (unit ? 1.0 : (double)mass[i]) * v2;
                if (r2 > r2max) r2max = r2;
            }
#pragma omp single
            for (uint64_t k = c0; k < c1; k++) s2 += buf[k - c0];
        }
    }
    a->sigma_v = sqrt(s2 / W);
    a->rmax = sqrt(r2max);
}

/* The message for particle i, the first to fail a check. */
static int particle_fails(const fk_halo_input *in, const fk_halo_order *o, uint64_t ng, uint64_t i, const char *name,
                          fk_error *err)
{
    if (i == o->bad)
        return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " is in group %" PRIu32 ", beyond the %" PRIu64 " groups",
                       name, i, o->bad_group, ng);
    float m = in->mass[i];
    if (!(m >= 0) || !isfinite(m))
        return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has mass %g (masses must be finite and >= 0)", name, i,
                       m);
    int k = 0;
    while (k < 6 && isfinite(k < 3 ? in->pos[3 * i + k] : in->vel[3 * i + k - 3])) k++;
    return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has a non-finite %s", name, i,
                   k < 3 ? "position" : "velocity");
}

int fk_halostats_compute(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const char *name, fk_error *err)
{
    if (ng > UINT32_MAX) return fk_fail(err, FK_EINVAL, "%" PRIu64 " groups do not fit 32-bit group ids", ng);
    if (in->periodic && !(in->box > 0)) return fk_fail(err, FK_EINVAL, "a periodic box needs a positive side");
    fk_halo_order o;
    int st = fk_halo_order_build(in->n, in->grp, in->ids, ng, &o, err);
    if (st == FK_OK) st = fk_halostats_compute_members(in, &o, halos, name, err);
    fk_halo_order_free(&o);
    return st;
}

int fk_halostats_compute_members(const fk_halo_input *in, const fk_halo_order *o, fk_halo *halos, const char *name,
                                 fk_error *err)
{
    const uint64_t ng = o->ng;
    if (ng > UINT32_MAX) return fk_fail(err, FK_EINVAL, "%" PRIu64 " groups do not fit 32-bit group ids", ng);
    if (in->periodic && !(in->box > 0)) return fk_fail(err, FK_EINVAL, "a periodic box needs a positive side");
    if (o->n != in->n)
        return fk_fail(err, FK_EINVAL, "members gathered from %" PRIu64 " particles, not %" PRIu64, o->n, in->n);
    uint64_t *ord = largest_first(o->first, 0, ng);
    if (!ord) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", ng);
    const uint64_t nlarge = count_large(o, ord, ng), alone = 4 * alone_above(o);
    uint64_t bad = UINT64_MAX; /* the lowest member that fails a check */
    /* the groups of more than half a thread's share of the members one after
     * another, each on every thread (no scratch here: only a group that
     * would hold up the others is worth the slabs' hand-overs) */
    uint64_t nbig = 0;
    const uint64_t slab = ng && o->first[ord[0] + 1] - o->first[ord[0]] < SLAB ? o->first[ord[0] + 1] - o->first[ord[0]]
                                                                               : SLAB;
    double *buf = malloc(6 * (slab ? slab : 1) * sizeof *buf);
    while (buf && nbig < ng && o->first[ord[nbig] + 1] - o->first[ord[nbig]] > alone) {
        fk_halo *a = &halos[ord[nbig]];
        *a = (fk_halo){.id = ord[nbig] + 1, .minid = UINT64_MAX};
        const uint64_t b = weigh_all(in, o, ord[nbig], a);
        if (b < bad) bad = b;
        if (b == UINT64_MAX) moments_all(in, o, ord[nbig], a, buf, slab);
        nbig++;
    }
    free(buf);
#pragma omp parallel reduction(min : bad)
    {
#pragma omp for schedule(dynamic, 1) nowait
        for (uint64_t j = nbig; j < nlarge; j++) {
            fk_halo *a = &halos[ord[j]];
            *a = (fk_halo){.id = ord[j] + 1, .minid = UINT64_MAX};
            const uint64_t b = weigh(in, o, ord[j], a);
            if (b < bad) bad = b;
            if (b == UINT64_MAX && a->n) moments(in, o, ord[j], a);
        }
#pragma omp for schedule(dynamic, CHUNK)
        for (uint64_t j = nlarge; j < ng; j++) {
            fk_halo *a = &halos[ord[j]];
            *a = (fk_halo){.id = ord[j] + 1, .minid = UINT64_MAX};
            const uint64_t b = weigh(in, o, ord[j], a);
            if (b < bad) bad = b;
            if (b == UINT64_MAX && a->n) moments(in, o, ord[j], a);
        }
    }
    free(ord);
    if (o->bad < in->n && o->bad < bad) bad = o->bad;
    if (bad != UINT64_MAX) return particle_fails(in, o, ng, bad, name, err);
    for (uint64_t g = 0; g < ng; g++)
        if (halos[g].n == 0) return fk_fail(err, FK_EFORMAT, "%s: group %" PRIu64 " has no member", name, g + 1);
    return FK_OK;
}

int fk_halo_members(const fk_halo_input *in, uint64_t ng, const uint64_t *first, uint64_t *index)
{
    return fk_halo_order_fill(in->n, in->grp, in->ids, ng, first, index);
}

/* ---- centres and the properties about them -------------------------------- */

/* A member's squared radius about the centre and its mass. */
typedef fk_shell shell;

static double seconds(void)
{
#ifdef _OPENMP
    return omp_get_wtime();
#else
    return 0;
#endif
}

/* A batch of groups for the potentials, [g0, g1): its members as
 * potential.h takes them (32 bytes each, 40 with phi; x, y, z, m one block
 * of room for cap members, the radii's scratch while the batch is idle),
 * first[0..g1-g0] their groups' offsets. */
typedef struct batch {
    uint64_t g0, g1, cap;
    uint64_t *first;
    double *x, *y, *z, *m, *phi;
} batch;

static void batch_free(batch *b)
{
    free(b->first), free(b->x), free(b->phi);
}

/* Room for cap members of up to ng groups; FK_ENOMEM. */
static int batch_alloc(batch *b, uint64_t cap, uint64_t ng, int phi, fk_error *err)
{
    const size_t c = cap ? cap : 1;
    *b = (batch){.cap = cap};
    b->first = malloc((ng + 1) * sizeof *b->first);
    b->x = malloc(4 * c * sizeof *b->x);
    b->phi = phi ? malloc(c * sizeof *b->phi) : NULL;
    b->y = b->x + c, b->z = b->y + c, b->m = b->z + c;
    if (b->first && b->x && (!phi || b->phi)) return FK_OK;
    batch_free(b);
    return fk_fail(err, FK_ENOMEM, "out of memory for the potentials of %" PRIu64 " members", cap);
}

/* The most members of a batch: the largest group's, an eighth of all or
 * 2^20, whichever is most (an eighth: the doubles of one batch cost 4
 * bytes a member of the whole level, held beside 4-byte indices). The
 * groups' sizes from the members (fk_halostats_compute_members' n). */
static uint64_t batch_cap(const fk_halo_order *o)
{
    const uint64_t total = o->first[o->ng];
    uint64_t cap = total / 8 > (UINT64_C(1) << 20) ? total / 8 : UINT64_C(1) << 20;
    for (uint64_t g = 0; g < o->ng; g++)
        if (o->first[g + 1] - o->first[g] > cap) cap = o->first[g + 1] - o->first[g];
    return cap < total ? cap : total;
}

/* The batch that starts at group g0: the groups after it while their
 * members fit cap. */
static uint64_t batch_end(const fk_halo_order *o, uint64_t g0, uint64_t cap)
{
    uint64_t g1 = g0 + 1;
    while (g1 < o->ng && o->first[g1 + 1] - o->first[g0] <= cap) g1++;
    return g1;
}

/* Batch b's members: groups [g0, g1), a slice of the members a thread,
 * about each group's reference member (h NULL: its first member, the one
 * fk_halostats_compute_members takes: the lowest ID, the first in member
 * order among equals). Adds the seconds taken to *secs. */
static void batch_make(const fk_halo_input *in, const fk_halo_order *o, const fk_halo *h, uint64_t g0, uint64_t g1,
                       batch *b, double *secs)
{
    const double t0 = seconds();
    const frame fr = frame_of(in);
    const uint64_t base = o->first[g0], cnt = o->first[g1] - base;
    b->g0 = g0, b->g1 = g1;
    for (uint64_t g = g0; g <= g1; g++) b->first[g - g0] = o->first[g] - base;
#pragma omp parallel
    {
        int t = 0, nt = 1;
#ifdef _OPENMP
        t = omp_get_thread_num(), nt = omp_get_num_threads();
#endif
        const uint64_t lo = base + cnt * (uint64_t)t / (uint64_t)nt, hi = base + cnt * (uint64_t)(t + 1) / (uint64_t)nt;
        uint64_t g = g0, step = g1 - g0; /* the group holding lo: the last whose first is <= lo */
        while (step > 0) {
            uint64_t half_step = step / 2;
            if (o->first[g + half_step + 1] <= lo) {
                g += half_step + 1;
                step -= half_step + 1;
            } else {
                step = half_step;
            }
        }
        for (uint64_t k = lo; k < hi; k++) {
            while (k >= o->first[g + 1]) g++;
            const uint64_t i = fk_halo_order_at(o, k), ref = h ? h[g].ref : fk_halo_order_at(o, o->first[g]);
            b->x[k - base] = offset(fr, i, ref, 0);
            b->y[k - base] = offset(fr, i, ref, 1);
            b->z[k - base] = offset(fr, i, ref, 2);
            b->m[k - base] = in->mass[i];
        }
    }
    *secs += seconds() - t0;
}

/* minima on one batch, on a thread of its own when the work overlaps. */
typedef struct minima_call {
    fk_pot_minima_fn fn;
    const fk_pot_params *pot;
    fk_pot_min *min; /* every group's */
    batch *b;
    int keep_phi;
    int st;
    double secs;
    fk_error err;
} minima_call;

static void *call_minima(void *arg)
{
    minima_call *c = arg;
    const double t0 = seconds();
    const batch *b = c->b;
    fk_pot_groups pg = {b->g1 - b->g0, b->first, b->x, b->y, b->z, b->m, c->keep_phi ? b->phi : NULL};
    c->st = c->fn(&pg, c->pot, c->min + b->g0, &c->err);
    c->secs = seconds() - t0;
    return NULL;
}

/* The potentials of batch b as the search computed them, into phi by
 * stream index. */
static void batch_phi(const fk_halo_order *o, const batch *b, double *phi)
{
    const uint64_t base = o->first[b->g0], cnt = o->first[b->g1] - base;
#pragma omp parallel for schedule(static)
    for (uint64_t k = 0; k < cnt; k++) phi[fk_halo_order_at(o, base + k)] = b->phi[k];
}

/* Group g's centre c relative to its reference member, and the fields that
 * come with it (xc; with FK_CENTRE_MBP mbp_id, phi_mbp and how it was
 * found). */
static void centre_of(const fk_halo_input *in, frame fr, const fk_halo_order *o, uint64_t g, fk_centre centre,
                      const fk_pot_min *min, fk_halo *a, double c[3])
{
    if (centre == FK_CENTRE_MBP) {
        const uint64_t i = fk_halo_order_at(o, o->first[g] + min->index);
        for (int e = 0; e < 3; e++) c[e] = offset(fr, i, a->ref, e);
        a->mbp_id = in->ids ? in->ids[i] : i;
        a->phi_mbp = min->phi;
        a->method = min->method;
        a->candidates = min->candidates;
    } else {
        a->mbp_id = FK_HALO_NONE, a->phi_mbp = NAN; /* no potentials: the columns say so */
        for (int e = 0; e < 3; e++) {
            c[e] = a->x[e] - (double)in->pos[3 * a->ref + e];
            if (in->periodic) c[e] -= in->box * nearbyint(c[e] / in->box);
        }
    }
    for (int e = 0; e < 3; e++) a->xc[e] = wrap(in, (double)in->pos[3 * a->ref + e] + c[e]);
}

/* Member i's offset from the centre c and its velocity in the group's frame
 * (peculiar in a comoving stream). The spin needs no Hubble flow: about c it
 * adds H a sum m (d - c) x (d - c) = 0 to J, and moving the frame to the
 * mean physical velocity, by H a (x - c), adds sum m (d - c) x H a (x - c) =
 * H a M (x - c) x (x - c) = 0. J and R are then a times the physical ones
 * and V physical (G / a): lambda is the physical spin. */
static inline void about(const fk_halo_input *in, frame fr, uint64_t i, const fk_halo *a, const double c[3],
                         double d[3], double u[3])
{
    for (int e = 0; e < 3; e++) {
        d[e] = offset(fr, i, a->ref, e) - c[e];
        u[e] = fk_halo_vel(in, i, e) - a->v[e];
    }
}

/* The radial properties from the shells sorted outward, and the spin from
 * J. */
static void radial(const shell *sh, uint64_t n, const double J[3], double G, fk_halo *a)
{
    /* weights as in the other passes: the masses, or 1 each for a group of mass 0 */
    const int unit = !(a->mass > 0);
    const double half = (unit ? (double)n : a->mass) / 2;
    double cw = 0, cm = 0, v2max = 0;
    a->r_half = -1;
    a->r_vmax = 0;
    for (uint64_t k = 0; k < n; k++) {
        cw += unit ? 1.0 : sh[k].m;
        cm += sh[k].m;
        if (k + 1 < n && sh[k + 1].r2 == sh[k].r2) continue; /* M(<=r) holds every member at r */
        double r = sqrt(sh[k].r2);
        if (a->r_half < 0 && cw >= half) a->r_half = r;
        if (r > 0 && G * cm / r > v2max) {
            v2max = G * cm / r;
            a->r_vmax = r;
        }
    }
    a->rc_max = sqrt(sh[n - 1].r2);
    if (a->r_half < 0) a->r_half = a->rc_max; /* rounding: the sum in this order fell short of the mass */
    a->vmax = sqrt(v2max);
    double R = a->rc_max, M = a->mass;
    a->lambda = M > 0 && R > 0 ? sqrt(J[0] * J[0] + J[1] * J[1] + J[2] * J[2]) / (sqrt(2.0) * M * sqrt(G * M * R)) : 0;
}

/* The radial properties and the spin of group g about c (relative to the
 * reference member), on one thread, with sh and tmp as scratch (n entries
 * each). */
static void profile(const fk_halo_input *in, frame fr, const fk_halo_order *o, uint64_t g, const double c[3],
                    double G, fk_halo *a, shell *sh, shell *tmp)
{
    const uint64_t f = o->first[g], n = a->n;
    double J[3] = {0, 0, 0};
    for (uint64_t k = 0; k < n; k++) {
        const uint64_t i = fk_halo_order_at(o, f + k);
        double d[3], u[3], m = in->mass[i];
        about(in, fr, i, a, c, d, u);
        J[0] += m * (d[1] * u[2] - d[2] * u[1]);
        J[1] += m * (d[2] * u[0] - d[0] * u[2]);
        J[2] += m * (d[0] * u[1] - d[1] * u[0]);
        sh[k] = (shell){d[0] * d[0] + d[1] * d[1] + d[2] * d[2], m};
    }
    fk_shells_sort_stable(sh, n, tmp);
    radial(sh, n, J, G, a);
}

/* profile on every thread, for a group too large for one: in two slabs,
 * the radii and the terms of J on all threads, the terms added in member
 * order by one (the same sums); the sort on all threads. */
static void profile_all(const fk_halo_input *in, frame fr, const fk_halo_order *o, uint64_t g, const double c[3],
                        double G, fk_halo *a, shell *sh, shell *tmp)
{
    const uint64_t f = o->first[g], n = a->n, slab = 2 * n / 3; /* 3 doubles a member in the 2 of tmp */
    double J[3] = {0, 0, 0}, *terms = (double *)tmp; /* a slab's terms of J: tmp is free until the sort */
#pragma omp parallel
    for (uint64_t c0 = 0; c0 < n; c0 += slab) {
        const uint64_t c1 = c0 + slab < n ? c0 + slab : n;
#pragma omp for schedule(static)
        for (uint64_t k = c0; k < c1; k++) {
            const uint64_t i = fk_halo_order_at(o, f + k);
            double d[3], u[3], m = in->mass[i], *t = terms + 3 * (k - c0);
            about(in, fr, i, a, c, d, u);
            t[0] = m * (d[1] * u[2] - d[2] * u[1]);
            t[1] = m * (d[2] * u[0] - d[0] * u[2]);
            t[2] = m * (d[0] * u[1] - d[1] * u[0]);
            sh[k] = (shell){d[0] * d[0] + d[1] * d[1] + d[2] * d[2], m};
        }
#pragma omp single
        for (uint64_t k = c0; k < c1; k++)
            for (int e = 0; e < 3; e++) J[e] += terms[3 * (k - c0) + e];
    }
    fk_shells_sort_stable_par(sh, n, tmp);
    radial(sh, n, J, G, a);
}

/* The centres and the properties about them of the count groups in ord
 * (largest first): those of more than alone_above members one after
 * another, each on every thread, then the others in parallel. */
static int profiles(const fk_halo_input *in, const fk_halo_order *o, const uint64_t *ord, uint64_t count,
                    fk_centre centre, const fk_pot_min *min, double G, fk_halo *halos, const batch *idle,
                    fk_error *err)
{
    const uint64_t alone = alone_above(o);
    const frame fr = frame_of(in);
    uint64_t nbig = 0, nlarge = count_large(o, ord, count);
    while (nbig < count && halos[ord[nbig]].n > alone) nbig++;
    if (nbig) {
        /* the radii of the largest in an idle batch's room when it holds them */
        const uint64_t n = halos[ord[0]].n;
        const int own = !idle || idle->cap < n;
        shell *sh = own ? malloc(n * sizeof *sh) : (shell *)idle->x, *tmp = own ? malloc(n * sizeof *tmp) : sh + n;
        if (!sh || !tmp) {
            if (own) free(sh), free(tmp);
            return fk_fail(err, FK_ENOMEM, "out of memory for the radii of %" PRIu64 " members", n);
        }
        for (uint64_t j = 0; j < nbig; j++) {
            double c[3];
            centre_of(in, fr, o, ord[j], centre, min ? &min[ord[j]] : NULL, &halos[ord[j]], c);
            profile_all(in, fr, o, ord[j], c, G, &halos[ord[j]], sh, tmp);
        }
        if (own) free(sh), free(tmp);
    }
    uint64_t failed = 0; /* the most members a thread found no memory for */
#pragma omp parallel reduction(max : failed)
    {
        /* Each thread's radii in its slice of the idle batch's room, or
         * grown to the largest group it meets. */
        int t = 0, nt = 1;
#ifdef _OPENMP
        t = omp_get_thread_num(), nt = omp_get_num_threads();
#endif
        const uint64_t slice = idle && idle->x ? idle->cap / (uint64_t)nt : 0;
        shell *room = slice ? (shell *)idle->x + 2 * slice * (uint64_t)t : NULL;
        shell *sh = room, *tmp = room ? room + slice : NULL;
        uint64_t cap = slice;
        int owned = 0;
#pragma omp for schedule(dynamic, 1) nowait
        for (uint64_t j = nbig; j < nlarge; j++) {
            fk_halo *a = &halos[ord[j]];
            if (a->n > cap) {
                if (owned) free(sh), free(tmp);
                sh = malloc(a->n * sizeof *sh), tmp = malloc(a->n * sizeof *tmp), owned = 1;
                cap = sh && tmp ? a->n : 0;
            }
            if (!cap) {
                if (a->n > failed) failed = a->n;
                continue;
            }
            double c[3];
            centre_of(in, fr, o, ord[j], centre, min ? &min[ord[j]] : NULL, a, c);
            profile(in, fr, o, ord[j], c, G, a, sh, tmp);
        }
        shell small_sh[SMALL], small_tmp[SMALL];
#pragma omp for schedule(dynamic, CHUNK)
        for (uint64_t j = nlarge; j < count; j++) {
            double c[3];
            fk_halo *a = &halos[ord[j]];
            centre_of(in, fr, o, ord[j], centre, min ? &min[ord[j]] : NULL, a, c);
            profile(in, fr, o, ord[j], c, G, a, small_sh, small_tmp);
        }
        if (owned) free(sh), free(tmp);
    }
    if (failed) return fk_fail(err, FK_ENOMEM, "out of memory for the radii of %" PRIu64 " members", failed);
    return FK_OK;
}

/* profiles of the groups of batch b, largest first, in idle's room (when
 * not NULL: a batch whose doubles are no longer needed). */
static int batch_profiles(const fk_halo_input *in, const fk_halo_order *o, const batch *b, fk_centre centre,
                          const fk_pot_min *min, double G, fk_halo *halos, const batch *idle, fk_error *err)
{
    uint64_t *ord = largest_first(o->first, b->g0, b->g1);
    if (!ord) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", b->g1 - b->g0);
    int st = profiles(in, o, ord, b->g1 - b->g0, centre, min, G, halos, idle, err);
    free(ord);
    return st;
}

/* The potential minima with the CPU's fk_pot_minima, every thread on one
 * batch after another, then the profiles of every group. */
static int centres_cpu(const fk_halo_input *in, const fk_halo_order *o, const fk_pot_params *pot, fk_halo *halos,
                       double *phi, fk_pot_min *min, uint64_t g_start, fk_halo_timing *tm, fk_error *err)
{
    batch b;
    int st = batch_alloc(&b, batch_cap(o), o->ng, phi != NULL, err);
    for (uint64_t g0 = g_start; g0 < o->ng && st == FK_OK; g0 = b.g1) {
        batch_make(in, o, halos, g0, batch_end(o, g0, batch_cap(o)), &b, &tm->gather);
        minima_call c = {fk_pot_minima, pot, min, &b, phi != NULL, 0, 0, {0}};
        call_minima(&c);
        tm->potential += c.secs;
        if ((st = c.st) != FK_OK) *err = c.err;
        else if (phi) batch_phi(o, &b, phi);
    }
    if (st == FK_OK) {
        const double t0 = seconds();
        const batch all = {.g0 = 0, .g1 = o->ng};
        st = batch_profiles(in, o, &all, FK_CENTRE_MBP, min, pot->G, halos, &b, err);
        tm->profile += seconds() - t0;
    }
    batch_free(&b);
    return st;
}

/* The potential minima through a device's minima, on a thread of its own,
 * one batch after another: while it works on batch k, the other threads
 * make the profiles of batch k - 1 (their radii in its idle room), then
 * batch k + 1's doubles there. The minima of groups [0, g_start) are in
 * min already: their profiles go beside the first batch's minima. */
static int centres_device(const fk_halo_input *in, const fk_halo_order *o, const fk_pot_params *pot,
                          fk_pot_minima_fn minima, fk_halo *halos, double *phi, fk_pot_min *min, uint64_t g_start,
                          fk_halo_timing *tm, fk_error *err)
{
    const uint64_t cap = batch_cap(o);
    batch buf[2] = {{0}, {0}};
    int st = batch_alloc(&buf[0], cap, o->ng, phi != NULL, err);
    if (st == FK_OK && g_start < o->ng && (g_start > 0 || batch_end(o, g_start, cap) < o->ng))
        st = batch_alloc(&buf[1], cap, o->ng, phi != NULL, err);
    if (st == FK_OK && g_start < o->ng)
        batch_make(in, o, halos, g_start, batch_end(o, g_start, cap), &buf[0], &tm->gather);
    batch done = {.g0 = 0, .g1 = g_start}; /* the groups whose profiles are due (g0 = g1: none) */
    for (int k = 0; st == FK_OK && g_start < o->ng; k++) {
        batch *b = &buf[k % 2], *next = &buf[(k + 1) % 2];
        minima_call c = {minima, pot, min, b, phi != NULL, 0, 0, {0}};
        pthread_t th;
        const int apart = pthread_create(&th, NULL, call_minima, &c) == 0;
        if (!apart) call_minima(&c);
        const int more = b->g1 < o->ng;
        int pst = FK_OK;
        fk_error perr = {0};
        if (done.g1 > done.g0) { /* done's doubles, in next, are no longer needed: its room holds the radii */
            const double t0 = seconds();
            pst = batch_profiles(in, o, &done, FK_CENTRE_MBP, min, pot->G, halos, next->x ? next : NULL, &perr);
            tm->profile += seconds() - t0;
        }
        if (more) batch_make(in, o, halos, b->g1, batch_end(o, b->g1, cap), next, &tm->gather);
        if (apart) pthread_join(th, NULL);
        tm->potential += c.secs;
        if (c.st != FK_OK) st = c.st, *err = c.err;
        else if (pst != FK_OK) st = pst, *err = perr;
        else if (phi) batch_phi(o, b, phi);
        done = (batch){.g0 = b->g0, .g1 = b->g1};
        if (!more) break;
    }
    if (st == FK_OK && done.g1 > done.g0) {
        const double t0 = seconds();
        st = batch_profiles(in, o, &done, FK_CENTRE_MBP, min, pot->G, halos, &buf[0], err); /* both idle now */
        tm->profile += seconds() - t0;
    }
    batch_free(&buf[0]), batch_free(&buf[1]);
    return st;
}

int fk_halostats_centres(const fk_halo_input *in, uint64_t ng, fk_centre centre, const fk_pot_params *pot,
                         fk_pot_minima_fn minima, fk_halo *halos, fk_halo_timing *timing, fk_error *err)
{
    return fk_halostats_centres_phi(in, ng, centre, pot, minima, halos, timing, NULL, err);
}

int fk_halostats_centres_phi(const fk_halo_input *in, uint64_t ng, fk_centre centre, const fk_pot_params *pot,
                             fk_pot_minima_fn minima, fk_halo *halos, fk_halo_timing *timing, double *phi,
                             fk_error *err)
{
    int st = fk_pot_check(pot, err);
    if (st) return st;
    double t0 = seconds();
    fk_halo_order o;
    if ((st = fk_halo_order_build(in->n, in->grp, in->ids, ng, &o, err)) != FK_OK) return st;
    double t = seconds() - t0;
    st = fk_halostats_centres_members(in, &o, centre, pot, minima, halos, timing, phi, err);
    if (st == FK_OK && timing) timing->gather += t;
    fk_halo_order_free(&o);
    return st;
}

/* The potentials' parameters, and members gathered from in's particles. */
static int members_check(const fk_halo_input *in, const fk_halo_order *o, const fk_pot_params *pot, fk_error *err)
{
    int st = fk_pot_check(pot, err);
    if (st) return st;
    if (o->n != in->n)
        return fk_fail(err, FK_EINVAL, "members gathered from %" PRIu64 " particles, not %" PRIu64, o->n, in->n);
    return FK_OK;
}

int fk_halostats_centres_members(const fk_halo_input *in, const fk_halo_order *o, fk_centre centre,
                                 const fk_pot_params *pot, fk_pot_minima_fn minima, fk_halo *halos,
                                 fk_halo_timing *timing, double *phi, fk_error *err)
{
    int st = members_check(in, o, pot, err);
    if (st) return st;
    const uint64_t ng = o->ng;
    fk_halo_timing tm = {0, 0, 0};
    if (centre == FK_CENTRE_COM) {
        const double t0 = seconds();
        batch all = {.g0 = 0, .g1 = ng};
        st = batch_profiles(in, o, &all, centre, NULL, pot->G, halos, NULL, err);
        tm.profile = seconds() - t0;
    } else {
        fk_pot_min *min = malloc((ng ? ng : 1) * sizeof *min);
        if (!min) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", ng);
        st = minima ? centres_device(in, o, pot, minima, halos, phi, min, 0, &tm, err)
                    : centres_cpu(in, o, pot, halos, phi, min, 0, &tm, err);
        free(min);
    }
    if (st == FK_OK && timing) *timing = tm;
    return st;
}

/* Whether every member of o's groups has a finite position and a finite
 * mass of at least 0 (what the potentials take; fk_halostats_compute_members
 * names a member that has not). */
static int members_sound(const fk_halo_input *in, const fk_halo_order *o)
{
    if (o->bad < o->n) return 0;
    const uint64_t total = o->first[o->ng];
    int sound = 1;
#pragma omp parallel for schedule(static) reduction(&& : sound)
    for (uint64_t k = 0; k < total; k++) {
        const uint64_t i = fk_halo_order_at(o, k);
        const float m = in->mass[i];
        sound = sound && m >= 0 && isfinite(m) && isfinite(in->pos[3 * i]) && isfinite(in->pos[3 * i + 1]) &&
                isfinite(in->pos[3 * i + 2]);
    }
    return sound;
}

int fk_halostats_minima(const fk_halo_input *in, const fk_halo_order *o, const fk_pot_params *pot,
                        fk_pot_minima_fn minima, int (*stop)(void *), void *stop_ctx, fk_pot_min *min, double *phi,
                        uint64_t *found, fk_halo_timing *timing, fk_error *err)
{
    *found = 0;
    int st = fk_pot_check(pot, err);
    if (st) return st;
    if (o->n != in->n)
        return fk_fail(err, FK_EINVAL, "members gathered from %" PRIu64 " particles, not %" PRIu64, o->n, in->n);
    if (in->periodic && !(in->box > 0)) return fk_fail(err, FK_EINVAL, "a periodic box needs a positive side");
    if (o->ng > UINT32_MAX) return fk_fail(err, FK_EINVAL, "%" PRIu64 " groups do not fit 32-bit group ids", o->ng);
    fk_halo_timing tm = {0, 0, 0};
    double t0 = seconds();
    const int sound = members_sound(in, o);
    tm.gather += seconds() - t0;
    if (!sound)
        return fk_fail(err, FK_EFORMAT, "a member's position or mass is not finite, or its mass below 0, or its "
                       "group beyond the groups");
    /* as centres_device, without the profiles: another minima than the CPU's
     * on a thread of its own while the next batch's doubles are made */
    const int apart = minima != NULL && minima != fk_pot_minima;
    if (!minima) minima = fk_pot_minima;
    const uint64_t cap = batch_cap(o);
    batch buf[2] = {{0}, {0}};
    uint64_t g0 = 0; /* the next batch's first group */
    st = batch_alloc(&buf[0], cap, o->ng, phi != NULL, err);
    if (st == FK_OK && apart && batch_end(o, 0, cap) < o->ng) st = batch_alloc(&buf[1], cap, o->ng, phi != NULL, err);
    for (int k = 0; st == FK_OK && g0 < o->ng && !(stop && stop(stop_ctx)); k++) {
        batch *b = &buf[apart ? k % 2 : 0], *next = &buf[apart ? (k + 1) % 2 : 0];
        if (b->g1 != batch_end(o, g0, cap) || b->g0 != g0 || k == 0)
            batch_make(in, o, NULL, g0, batch_end(o, g0, cap), b, &tm.gather);
        minima_call c = {minima, pot, min, b, phi != NULL, 0, 0, {0}};
        pthread_t th;
        const int own = apart && pthread_create(&th, NULL, call_minima, &c) == 0;
        if (!own) call_minima(&c);
        const int more = b->g1 < o->ng;
        /* the next batch's doubles beside the minima (made for nothing if told to stop) */
        if (own && more) batch_make(in, o, NULL, b->g1, batch_end(o, b->g1, cap), next, &tm.gather);
        if (own) pthread_join(th, NULL);
        tm.potential += c.secs;
        if (c.st != FK_OK) st = c.st, *err = c.err;
        else if (phi) batch_phi(o, b, phi);
        if (st == FK_OK) *found = g0 = b->g1;
    }
    batch_free(&buf[0]), batch_free(&buf[1]);
    if (st == FK_OK && timing) *timing = tm;
    return st;
}

int fk_halostats_centres_found(const fk_halo_input *in, const fk_halo_order *o, const fk_pot_params *pot,
                               fk_pot_minima_fn minima, const fk_pot_min *found_min, uint64_t found, fk_halo *halos,
                               fk_halo_timing *timing, double *phi, fk_error *err)
{
    int st = members_check(in, o, pot, err);
    if (st) return st;
    const uint64_t ng = o->ng;
    if (found > ng) return fk_fail(err, FK_EINVAL, "minima of %" PRIu64 " groups found, of %" PRIu64, found, ng);
    for (uint64_t g = 0; g < found; g++)
        if (halos[g].ref != fk_halo_order_at(o, o->first[g]) || halos[g].n != o->first[g + 1] - o->first[g])
            return fk_fail(err, FK_EINVAL, "group %" PRIu64 "'s potentials were found about another member", g + 1);
    fk_pot_min *min = malloc((ng ? ng : 1) * sizeof *min);
    if (!min) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", ng);
    if (found) memcpy(min, found_min, found * sizeof *min);
    fk_halo_timing tm = {0, 0, 0};
    st = minima ? centres_device(in, o, pot, minima, halos, phi, min, found, &tm, err)
                : centres_cpu(in, o, pot, halos, phi, min, found, &tm, err);
    free(min);
    if (st == FK_OK && timing) *timing = tm;
    return st;
}

int fk_halostats_centres_await(const fk_halo_input *in, const fk_halo_order *o, const fk_pot_params *pot,
                               fk_pot_minima_fn minima, const fk_pot_min *min, fk_halo_found_fn wait, void *wait_ctx,
                               fk_halo *halos, fk_halo_timing *timing, double *phi, fk_error *err)
{
    int st = fk_pot_check(pot, err);
    if (st) return st;
    if (o->n != in->n)
        return fk_fail(err, FK_EINVAL, "members gathered from %" PRIu64 " particles, not %" PRIu64, o->n, in->n);
    for (uint64_t g = 0; g < o->ng; g++)
        if (halos[g].ref != fk_halo_order_at(o, o->first[g]) || halos[g].n != o->first[g + 1] - o->first[g])
            return fk_fail(err, FK_EINVAL, "group %" PRIu64 "'s potentials were found about another member", g + 1);
    fk_halo_timing tm = {0, 0, 0};
    uint64_t have = 0;
    int over = 0;
    /* the profiles of each run of groups as its minima come (their radii in
     * memory of their own: the batches' rooms are the finder's) */
    while (st == FK_OK && !over) {
        const double tw = seconds();
        const uint64_t found = wait(wait_ctx, have, &over);
        tm.potential += seconds() - tw; /* waited for */
        if (found > have && found <= o->ng) {
            const double t0 = seconds();
            const batch b = {.g0 = have, .g1 = found};
            st = batch_profiles(in, o, &b, FK_CENTRE_MBP, min, pot->G, halos, NULL, err);
            tm.profile += seconds() - t0;
            have = found;
        }
    }
    if (st == FK_OK && have < o->ng) { /* the finder stopped short: the rest as fk_halostats_centres_found does */
        fk_halo_timing rest = {0, 0, 0};
        st = fk_halostats_centres_found(in, o, pot, minima, min, have, halos, &rest, phi, err);
        tm.gather += rest.gather, tm.potential += rest.potential, tm.profile += rest.profile;
    }
    if (st == FK_OK && timing) *timing = tm;
    return st;
}
