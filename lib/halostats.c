/* halostats.c - per-group mass, centre of mass across the periodic boundary, mean velocity, dispersion and extent. */
#include "halostats.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define COL(name, unit, desc, type, field, format) {name, unit, desc, type, offsetof(fk_halo, field), format}

/* %.9g prints a binary32 input exactly and is ample for the double results,
 * whose accuracy is that of the binary32 positions and velocities. */
const fk_halo_column fk_halo_columns[] = {
    COL("id", "1", "group id: 1 is the largest group, ties by lowest member ID", FK_HCOL_U64, id, "%" PRIu64),
    COL("n", "1", "member particles", FK_HCOL_U64, n, "%" PRIu64),
    COL("mass", "mass", "sum of member masses", FK_HCOL_F64, mass, "%.9g"),
    COL("x", "length", "centre of mass x, in [origin, origin+box) when periodic", FK_HCOL_F64, x[0], "%.9g"),
    COL("y", "length", "centre of mass y", FK_HCOL_F64, x[1], "%.9g"),
    COL("z", "length", "centre of mass z", FK_HCOL_F64, x[2], "%.9g"),
    COL("vx", "velocity", "mass-weighted mean velocity x", FK_HCOL_F64, v[0], "%.9g"),
    COL("vy", "velocity", "mass-weighted mean velocity y", FK_HCOL_F64, v[1], "%.9g"),
    COL("vz", "velocity", "mass-weighted mean velocity z", FK_HCOL_F64, v[2], "%.9g"),
    COL("sigma_v", "velocity", "3D velocity dispersion: sqrt(sum m |v - <v>|^2 / sum m)", FK_HCOL_F64, sigma_v,
        "%.9g"),
    COL("rmax", "length", "largest distance of a member from the centre of mass (minimum image)", FK_HCOL_F64, rmax,
        "%.9g"),
};
const size_t fk_halo_ncolumns = sizeof fk_halo_columns / sizeof fk_halo_columns[0];

int fk_halo_format(const fk_halo *h, const fk_halo_column *c, char *buf, size_t size)
{
    const char *field = (const char *)h + c->offset;
    if (c->type == FK_HCOL_U64) return snprintf(buf, size, c->format, *(const uint64_t *)field);
    return snprintf(buf, size, c->format, *(const double *)field);
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
            s[g - 1].ref = i;
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
            double x = (double)in->pos[3 * s[g].ref + k] + s[g].rel[k];
            if (in->periodic) {
                x -= in->box * floor((x - in->origin) / in->box);
                if (x >= in->origin + in->box) x = in->origin; /* rounding at the top edge */
            }
            a->x[k] = x;
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
