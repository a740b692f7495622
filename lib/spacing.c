/* spacing.c - the mean interparticle spacing of -b: exact, order-free per-type mass sums and n_eff for the lightest particles, named types, a mass or every particle. */
#include "spacing.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "snap.h"

static const char *type_name[3] = {"gas", "dark", "star"};

int fk_spacing_parse(const char *arg, fk_spacing_spec *spec, fk_error *err)
{
    memset(spec, 0, sizeof *spec);
    if (!strcmp(arg, "lightest")) return FK_OK;
    if (!strcmp(arg, "all")) {
        spec->kind = FK_SPACING_ALL;
        return FK_OK;
    }
    char *end;
    double m = strtod(arg, &end);
    if (end != arg && !*end) {
        if (!(m > 0) || !isfinite(m))
            return fk_fail(err, FK_EINVAL, "option --spacing: the mass must be positive, not %s", arg);
        spec->kind = FK_SPACING_MASS, spec->mass = m;
        return FK_OK;
    }
    spec->kind = FK_SPACING_TYPES;
    if (fk_types_list(arg, &spec->types))
        return fk_fail(err, FK_EINVAL, "option --spacing needs lightest, all, types (gas, dark, star) or a mass, not '%s'",
                       arg);
    return FK_OK;
}

/* Adds particles [lo, hi) into s (not zeroed); returns the first bad one, or hi. */
static uint64_t sum_range(const float *mass, const uint8_t *type, uint64_t lo, uint64_t hi, fk_spacing_sums *s)
{
    for (uint64_t i = lo; i < hi; i++) {
        int t = type ? type[i] : FK_DARK;
        if (t > 2) return i;
        s->n[t]++;
        if (!mass) continue;
        float m = mass[i];
        if (!(m >= 0) || !isfinite(m)) return i;
        if (m == 0) continue;
        uint32_t bits;
        memcpy(&bits, &m, sizeof bits);
        if (bits < s->min_bits[t]) s->min_bits[t] = bits;
        if (bits > s->max_bits[t]) s->max_bits[t] = bits;
        /* m = significand x 2^(e - 150), e the biased exponent (subnormals: e 0 taken as 1) */
        uint32_t e = bits >> 23, frac = bits & 0x7fffffu;
        s->sig[t][e ? e : 1] += e ? frac | 0x800000u : frac;
    }
    return hi;
}

static void sums_zero(fk_spacing_sums *s)
{
    memset(s, 0, sizeof *s);
    for (int t = 0; t < 3; t++) s->min_bits[t] = UINT64_MAX;
}

int fk_spacing_sum(const float *mass, const uint8_t *type, uint64_t n, fk_spacing_sums *s, const char *name,
                   fk_error *err)
{
    sums_zero(s);
    uint64_t bad = n;
    /* each thread its own sums over a block, added at the end: integers, so the result is the
     * same for any number of threads */
#pragma omp parallel
    {
        fk_spacing_sums mine;
        sums_zero(&mine);
        uint64_t first_bad = n;
#pragma omp for schedule(static)
        for (uint64_t b = 0; b < (n + 65535) / 65536; b++) {
            uint64_t lo = b * 65536, hi = lo + 65536 < n ? lo + 65536 : n;
            uint64_t at = sum_range(mass, type, lo, hi, &mine);
            if (at < hi && at < first_bad) first_bad = at;
        }
#pragma omp critical(fk_spacing_sum)
        {
            fk_spacing_add(s, &mine);
            if (first_bad < bad) bad = first_bad;
        }
    }
    if (bad < n) {
        if (type && type[bad] > 2)
            return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has type %d", name, bad, type[bad]);
        return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has mass %g (masses must be finite and >= 0)", name,
                       bad, mass[bad]);
    }
    return FK_OK;
}

void fk_spacing_add(fk_spacing_sums *a, const fk_spacing_sums *b)
{
    for (int t = 0; t < 3; t++) {
        a->n[t] += b->n[t];
        if (b->min_bits[t] < a->min_bits[t]) a->min_bits[t] = b->min_bits[t];
        if (b->max_bits[t] > a->max_bits[t]) a->max_bits[t] = b->max_bits[t];
        for (int e = 0; e < FK_SPACING_NEXP; e++) a->sig[t][e] += b->sig[t][e];
    }
}

double fk_spacing_mass(const fk_spacing_sums *s, int t)
{
    /* the exact sum, added from the smallest exponent up in long double (64-bit significands:
     * exact while the terms' range allows), rounded to double once at the end; the same
     * operations in the same order for the same sums, so every rank gets the same bits */
    long double m = 0;
    for (int e = 0; e < FK_SPACING_NEXP; e++)
        if (s->sig[t][e]) m += ldexpl((long double)s->sig[t][e], e - 150);
    return (double)m;
}

static float bits_value(uint64_t bits)
{
    uint32_t b = (uint32_t)bits;
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* Type t's n_eff at its lightest: n_t when its masses are equal or all 0, else M_t / m_t. */
static double type_neff(const fk_spacing_sums *s, int t)
{
    if (!s->n[t]) return 0;
    if (s->min_bits[t] == UINT64_MAX || s->min_bits[t] == s->max_bits[t]) return (double)s->n[t];
    return fk_spacing_mass(s, t) / (double)bits_value(s->min_bits[t]);
}

int fk_spacing_neff(const fk_spacing_spec *spec, const fk_spacing_sums *s, double *neff, fk_error *err)
{
    double v = 0;
    switch (spec->kind) {
    case FK_SPACING_ALL: v = (double)(s->n[0] + s->n[1] + s->n[2]); break;
    case FK_SPACING_MASS:
        for (int t = 0; t < 3; t++) v += fk_spacing_mass(s, t);
        v /= spec->mass;
        break;
    case FK_SPACING_TYPES:
    case FK_SPACING_LIGHTEST:
        for (int t = 0; t < 3; t++)
            if (spec->kind == FK_SPACING_LIGHTEST || (spec->types & (1u << t))) v += type_neff(s, t);
        break;
    }
    if (s->n[0] + s->n[1] + s->n[2] == 0) v = 1; /* nothing to link: any length will do */
    *neff = v;
    if (!(v > 0) || !isfinite(v)) {
        char buf[64];
        return fk_fail(err, FK_EINVAL, "-b: the stream has no particles to take the mean spacing of (--spacing=%s)",
                       fk_spacing_name(spec, buf, sizeof buf));
    }
    return FK_OK;
}

double fk_spacing_spread(const fk_spacing_sums *s, int *type)
{
    double most = 1;
    *type = FK_DARK;
    for (int t = 0; t < 3; t++) {
        if (s->min_bits[t] == UINT64_MAX) continue;
        double r = (double)bits_value(s->max_bits[t]) / (double)bits_value(s->min_bits[t]);
        if (r > most) most = r, *type = t;
    }
    return most;
}

const char *fk_spacing_name(const fk_spacing_spec *spec, char *buf, size_t size)
{
    switch (spec->kind) {
    case FK_SPACING_LIGHTEST: snprintf(buf, size, "lightest"); break;
    case FK_SPACING_ALL: snprintf(buf, size, "all"); break;
    case FK_SPACING_MASS: snprintf(buf, size, "mass %.9g", spec->mass); break;
    case FK_SPACING_TYPES: {
        size_t at = (size_t)snprintf(buf, size, "types ");
        for (int t = 0; t < 3; t++)
            if (spec->types & (1u << t) && at < size)
                at += (size_t)snprintf(buf + at, size - at, "%s%s", at > 6 ? "," : "", type_name[t]);
        break;
    }
    }
    return buf;
}

int fk_spacing_density_known(const fk_snap *snap, int baryons)
{
    if (!snap->have_units || !(snap->omega0 > 0) || !(snap->unit_length_cm > 0) || !(snap->unit_mass_g > 0) ||
        !(snap->unit_velocity_cm_s > 0))
        return 0;
    if (baryons && (!snap->have_omega_baryon || !(snap->omega0 > snap->omega_baryon))) return 0;
    return snap->units_per_h || snap->hubble > 0;
}

int fk_spacing_density(const fk_snap *snap, const fk_spacing_sums *s, unsigned types, int baryons, double *neff,
                       double *spacing, fk_error *err)
{
    if (!fk_spacing_density_known(snap, baryons))
        return fk_fail(err, FK_EINVAL, "the stream lacks the units or the cosmology (omega0%s, hubble) of the density rule",
                       baryons ? ", omega_baryon" : "");
    double mass = 0;
    uint64_t n = 0;
    for (int t = 0; t < 3; t++)
        if (types & (1u << t)) mass += fk_spacing_mass(s, t), n += s->n[t];
    if (!(mass > 0) || !n) return fk_fail(err, FK_EINVAL, "the linked particles have no masses for the density rule");
    /* Gadget's code units: time L / V; H0 = HUBBLE h in them (h taken into the units when they are per h) */
    const double L = snap->unit_length_cm, M = snap->unit_mass_g, V = snap->unit_velocity_cm_s, T = L / V;
    const double G = FK_GADGET4_GRAVITY * M * T * T / (L * L * L);
    const double H0 = FK_GADGET4_HUBBLE * (snap->units_per_h ? 1.0 : snap->hubble) * T;
    const double rho = (baryons ? snap->omega0 - snap->omega_baryon : snap->omega0) * 3 * H0 * H0 / (8 * M_PI * G);
    const double sp = cbrt(mass / (double)n / rho);
    *spacing = sp;
    *neff = pow(snap->box / sp, 3);
    return FK_OK;
}
