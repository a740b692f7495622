/* halostats.c - per-group mass, centres across the periodic boundary, velocity, dispersion, extent, profile and spin. */
#include "halostats.h"
#include "shells.h"

#include <inttypes.h>
#include <math.h>
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

/* Per-group scratch: the reference member and the centre relative to it. */
typedef struct scratch {
    uint64_t ref;
    double rel[3];
} scratch;

/* x_i - x_ref on one axis, as the minimum image in a periodic box. */
static inline double offset(const fk_halo_input *in, uint64_t i, uint64_t ref, int k)
{
    double d = (double)in->pos[3 * i + k] - (double)in->pos[3 * ref + k];
    if (in->periodic) d -= in->box * nearbyint(d / in->box);
    return d;
}

/* Pass 1: checks every particle, counts and weighs the groups, finds their
 * reference members. */
static int count_pass(const fk_halo_input *in, uint64_t ng, fk_halo *h, scratch *s, const char *name,
                      fk_error *err)
{
    for (uint64_t i = 0; i < in->n; i++) {
        uint32_t g = in->grp[i];
        if (g == 0) continue;
        if (g > ng)
            return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " is in group %" PRIu32 ", beyond the %" PRIu64
                           " groups", name, i, g, ng);
        float m = in->mass[i];
        if (!(m >= 0) || !isfinite(m))
            return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has mass %g (masses must be finite and >= 0)",
                           name, i, m);
        for (int k = 0; k < 6; k++) {
            float q = k < 3 ? in->pos[3 * i + k] : in->vel[3 * i + k - 3];
            if (!isfinite(q))
                return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has a non-finite %s", name, i,
                               k < 3 ? "position" : "velocity");
        }
        fk_halo *a = &h[g - 1];
        uint64_t id = in->ids ? in->ids[i] : i;
        a->n++;
        a->mass += m;
        if (id < a->minid) {
            a->minid = id;
            a->ref = s[g - 1].ref = i;
        }
    }
    for (uint64_t g = 0; g < ng; g++)
        if (h[g].n == 0) return fk_fail(err, FK_EFORMAT, "%s: group %" PRIu64 " has no member", name, g + 1);
    return FK_OK;
}

static double weight(const fk_halo_input *in, const fk_halo *a, uint64_t i)
{
    return a->mass > 0 ? (double)in->mass[i] : 1.0;
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

/* Pass 2: centre of mass (relative to the reference, then wrapped) and mean velocity. */
static void mean_pass(const fk_halo_input *in, uint64_t ng, fk_halo *h, scratch *s)
{
    for (uint64_t i = 0; i < in->n; i++) {
        uint32_t g = in->grp[i];
        if (g == 0) continue;
        fk_halo *a = &h[g - 1];
        double w = weight(in, a, i);
        for (int k = 0; k < 3; k++) {
            s[g - 1].rel[k] += w * offset(in, i, s[g - 1].ref, k);
            a->v[k] += w * (double)in->vel[3 * i + k];
        }
    }
    for (uint64_t g = 0; g < ng; g++) {
        fk_halo *a = &h[g];
        double W = total_weight(a);
        for (int k = 0; k < 3; k++) {
            s[g].rel[k] /= W;
            a->v[k] /= W;
            a->x[k] = wrap(in, (double)in->pos[3 * s[g].ref + k] + s[g].rel[k]);
        }
    }
}

/* Pass 3: dispersion about the mean velocity and the largest distance from the centre. */
static void spread_pass(const fk_halo_input *in, uint64_t ng, fk_halo *h, const scratch *s)
{
    for (uint64_t i = 0; i < in->n; i++) {
        uint32_t g = in->grp[i];
        if (g == 0) continue;
        fk_halo *a = &h[g - 1];
        double r2 = 0, v2 = 0;
        for (int k = 0; k < 3; k++) {
            double d = offset(in, i, s[g - 1].ref, k) - s[g - 1].rel[k];
            double u = (double)in->vel[3 * i + k] - a->v[k];
            r2 += d * d;
            v2 += u * u;
        }
        a->sigma_v += weight(in, a, i) * v2;
        if (r2 > a->rmax) a->rmax = r2;
    }
    for (uint64_t g = 0; g < ng; g++) {
        h[g].sigma_v = sqrt(h[g].sigma_v / total_weight(&h[g]));
        h[g].rmax = sqrt(h[g].rmax);
    }
}

int fk_halostats_compute(const fk_halo_input *in, uint64_t ng, fk_halo *halos, const char *name, fk_error *err)
{
    if (ng > UINT32_MAX) return fk_fail(err, FK_EINVAL, "%" PRIu64 " groups do not fit 32-bit group ids", ng);
    if (in->periodic && !(in->box > 0)) return fk_fail(err, FK_EINVAL, "a periodic box needs a positive side");
    scratch *s = calloc(ng ? ng : 1, sizeof *s);
    if (!s) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", ng);
    for (uint64_t g = 0; g < ng; g++) halos[g] = (fk_halo){.id = g + 1, .minid = UINT64_MAX};
    int st = count_pass(in, ng, halos, s, name, err);
    if (st == FK_OK) {
        mean_pass(in, ng, halos, s);
        spread_pass(in, ng, halos, s);
    }
    free(s);
    return st;
}

/* ---- centres and the properties about them -------------------------------- */

/* A member's squared radius about the centre and its mass. */
typedef fk_shell shell;

static int shell_cmp(const void *a, const void *b)
{
    double p = ((const shell *)a)->r2, q = ((const shell *)b)->r2;
    return (p > q) - (p < q);
}

/* Members of every group, group by group (stream order within one), and
 * their offsets from the group's reference member, structure of arrays. */
typedef struct members {
    uint64_t *first;  /* ng + 1 offsets */
    uint64_t *index;  /* stream index of each */
    double *x, *y, *z, *m;
} members;

static void members_free(members *s)
{
    free(s->first), free(s->index), free(s->x), free(s->y), free(s->z), free(s->m);
}

/* The members of each group in stream order (halostats.h), a parallel counting
 * sort. The stream is cut into blocks, one a thread; block b's members of
 * group g go after those of blocks 0..b-1, so the order is the serial one
 * for every number of threads. The counts take blocks x ng x 4 bytes:
 * fewer blocks when there are many groups keeps them within n / 2 x 4
 * bytes (one block: the serial sort, no counts). */
int fk_halo_members(const fk_halo_input *in, uint64_t ng, const uint64_t *first, uint64_t *index)
{
    const uint64_t n = in->n;
#ifdef _OPENMP
    uint64_t nb = (uint64_t)omp_get_max_threads();
#else
    uint64_t nb = 1;
#endif
    if (nb > n / (2 * (ng ? ng : 1))) nb = n / (2 * (ng ? ng : 1));
    if (nb < 2 || n > UINT32_MAX) {
        uint64_t *cursor = malloc((ng ? ng : 1) * sizeof *cursor);
        if (!cursor) return FK_ENOMEM;
        memcpy(cursor, first, ng * sizeof *cursor);
        for (uint64_t i = 0; i < n; i++)
            if (in->grp[i]) index[cursor[in->grp[i] - 1]++] = i;
        free(cursor);
        return FK_OK;
    }
    uint32_t *count = calloc(nb * ng, sizeof *count); /* count[b * ng + g] */
    if (!count) return FK_ENOMEM;
#pragma omp parallel for schedule(static, 1) num_threads((int)nb)
    for (uint64_t b = 0; b < nb; b++) {
        uint32_t *c = count + b * ng;
        for (uint64_t i = n * b / nb; i < n * (b + 1) / nb; i++)
            if (in->grp[i]) c[in->grp[i] - 1]++;
    }
    /* each block's cursor: the group's start plus the earlier blocks' members, kept as offsets from first[g] */
#pragma omp parallel for schedule(static)
    for (uint64_t g = 0; g < ng; g++) {
        uint32_t at = 0;
        for (uint64_t b = 0; b < nb; b++) {
            uint32_t c = count[b * ng + g];
            count[b * ng + g] = at;
            at += c;
        }
    }
#pragma omp parallel for schedule(static, 1) num_threads((int)nb)
    for (uint64_t b = 0; b < nb; b++) {
        uint32_t *c = count + b * ng;
        for (uint64_t i = n * b / nb; i < n * (b + 1) / nb; i++) {
            uint32_t g = in->grp[i];
            if (g) index[first[g - 1] + c[g - 1]++] = i;
        }
    }
    free(count);
    return FK_OK;
}

static int gather(const fk_halo_input *in, uint64_t ng, const fk_halo *h, members *s, fk_error *err)
{
    uint64_t total = 0;
    for (uint64_t g = 0; g < ng; g++) total += h[g].n;
    size_t t = total ? total : 1;
    s->first = malloc((ng + 1) * sizeof *s->first);
    s->index = malloc(t * sizeof *s->index);
    s->x = malloc(t * sizeof *s->x), s->y = malloc(t * sizeof *s->y);
    s->z = malloc(t * sizeof *s->z), s->m = malloc(t * sizeof *s->m);
    if (!s->first || !s->index || !s->x || !s->y || !s->z || !s->m)
        return fk_fail(err, FK_ENOMEM, "out of memory for the %" PRIu64 " members of %" PRIu64 " groups", total, ng);
    s->first[0] = 0;
    for (uint64_t g = 0; g < ng; g++) s->first[g + 1] = s->first[g] + h[g].n;
    if (fk_halo_members(in, ng, s->first, s->index) != FK_OK)
        return fk_fail(err, FK_ENOMEM, "out of memory for the %" PRIu64 " members of %" PRIu64 " groups", total, ng);
#pragma omp parallel for schedule(dynamic, 16)
    for (uint64_t g = 0; g < ng; g++)
        for (uint64_t k = s->first[g]; k < s->first[g + 1]; k++) {
            uint64_t i = s->index[k];
            s->x[k] = offset(in, i, h[g].ref, 0);
            s->y[k] = offset(in, i, h[g].ref, 1);
            s->z[k] = offset(in, i, h[g].ref, 2);
            s->m[k] = in->mass[i];
        }
    return FK_OK;
}

/* The radial properties and the spin of group g about c (relative to the
 * reference member), with sh and tmp as scratch (n entries each). */
static void profile(const fk_halo_input *in, const members *s, uint64_t g, const double c[3], double G, fk_halo *a,
                    shell *sh, shell *tmp)
{
    const uint64_t f = s->first[g], n = a->n;
    double J[3] = {0, 0, 0};
    for (uint64_t k = 0; k < n; k++) {
        double d[3] = {s->x[f + k] - c[0], s->y[f + k] - c[1], s->z[f + k] - c[2]}, u[3], m = s->m[f + k];
        const float *v = in->vel + 3 * s->index[f + k];
        for (int e = 0; e < 3; e++) u[e] = (double)v[e] - a->v[e];
        J[0] += m * (d[1] * u[2] - d[2] * u[1]);
        J[1] += m * (d[2] * u[0] - d[0] * u[2]);
        J[2] += m * (d[0] * u[1] - d[1] * u[0]);
        sh[k] = (shell){d[0] * d[0] + d[1] * d[1] + d[2] * d[2], m};
    }
    fk_shells_sort(sh, n, tmp, shell_cmp);
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

static double seconds(void)
{
#ifdef _OPENMP
    return omp_get_wtime();
#else
    return 0;
#endif
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
    members s = {0};
    fk_pot_min *min = NULL;
    double *s_phi = NULL;
    if ((st = gather(in, ng, halos, &s, err)) != FK_OK) goto done;
    double t1 = seconds();
    if (centre == FK_CENTRE_MBP) {
        st = FK_ENOMEM;
        if (!(min = malloc((ng ? ng : 1) * sizeof *min))) {
            fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", ng);
            goto done;
        }
        const uint64_t total = s.first[ng];
        if (phi && !(s_phi = malloc((total ? total : 1) * sizeof *s_phi))) {
            fk_fail(err, FK_ENOMEM, "out of memory for the potentials of %" PRIu64 " members", total);
            goto done;
        }
        fk_pot_groups pg = {ng, s.first, s.x, s.y, s.z, s.m, s_phi};
        if ((st = (minima ? minima : fk_pot_minima)(&pg, pot, min, err)) != FK_OK) goto done;
        if (phi) {
#pragma omp parallel for schedule(static)
            for (uint64_t k = 0; k < total; k++) phi[s.index[k]] = s_phi[k];
            free(s_phi), s_phi = NULL;
        }
    }
    double t2 = seconds();
    uint64_t largest = 0;
    for (uint64_t g = 0; g < ng; g++)
        if (halos[g].n > largest) largest = halos[g].n;
    int failed = 0;
#pragma omp parallel
    {
        /* Each thread's radii grow to the largest group it meets, not to the
         * largest group: with many threads, 32 bytes x largest a thread was
         * the most memory halostats held. */
        shell *sh = NULL, *tmp = NULL;
        uint64_t cap = 0;
        {
#pragma omp for schedule(dynamic, 1)
            for (uint64_t g = 0; g < ng; g++) {
                fk_halo *a = &halos[g];
                if (a->n > cap) {
                    free(sh), free(tmp);
                    sh = malloc(a->n * sizeof *sh), tmp = malloc(a->n * sizeof *tmp);
                    cap = sh && tmp ? a->n : 0;
                    if (!cap) {
#pragma omp atomic write
                        failed = 1;
                    }
                }
                if (!cap) continue;
                double c[3];
                if (centre == FK_CENTRE_MBP) {
                    uint64_t k = s.first[g] + min[g].index, i = s.index[k];
                    c[0] = s.x[k], c[1] = s.y[k], c[2] = s.z[k];
                    a->mbp_id = in->ids ? in->ids[i] : i;
                    a->phi_mbp = min[g].phi;
                    a->method = min[g].method;
                    a->candidates = min[g].candidates;
                } else {
                    a->mbp_id = FK_HALO_NONE, a->phi_mbp = NAN; /* no potentials: the columns say so */
                    for (int e = 0; e < 3; e++) {
                        c[e] = a->x[e] - (double)in->pos[3 * a->ref + e];
                        if (in->periodic) c[e] -= in->box * nearbyint(c[e] / in->box);
                    }
                }
                for (int e = 0; e < 3; e++) a->xc[e] = wrap(in, (double)in->pos[3 * a->ref + e] + c[e]);
                profile(in, &s, g, c, pot->G, a, sh, tmp);
            }
        }
        free(sh), free(tmp);
    }
    if (failed) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the radii of %" PRIu64 " members", largest);
        goto done;
    }
    if (timing) *timing = (fk_halo_timing){t1 - t0, t2 - t1, seconds() - t2};
    st = FK_OK;
done:
    members_free(&s);
    free(min), free(s_phi);
    return st;
}
