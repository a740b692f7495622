/* snapunits.c - a stream's own units (SNAP's optional unit keys) as halostats' default output units and G. */
#include "snapunits.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int fk_snap_default_units(const fk_snap *s, fk_halo_units *u)
{
    if (!s->have_units) return 0;
    int set = 0;
    if (u->length == 1 && !strcmp(u->length_name, "length")) {
        u->length = s->unit_length_cm / FK_KPC_CM;
        u->length_name = s->units_per_h ? "kpc/h" : "kpc";
        set++;
    }
    if (u->mass == 1 && !strcmp(u->mass_name, "mass")) {
        u->mass = s->unit_mass_g / FK_MSUN_G;
        u->mass_name = s->units_per_h ? "Msun/h" : "Msun";
        set++;
    }
    if (u->velocity == 1 && !strcmp(u->velocity_name, "velocity")) {
        u->velocity = s->unit_velocity_cm_s / 1e5;
        u->velocity_name = "km/s";
        set++;
    }
    return set;
}

const char *fk_snap_length_name(const fk_snap *s, char *buf, size_t size)
{
    const char *h = s->have_units && s->units_per_h ? "/h" : "";
    double kpc = s->unit_length_cm / FK_KPC_CM;
    if (!s->have_units)
        snprintf(buf, size, "%s", "");
    else if (fabs(kpc - 1) < 1e-6)
        snprintf(buf, size, "kpc%s", h);
    else if (fabs(kpc / 1000 - 1) < 1e-6)
        snprintf(buf, size, "Mpc%s", h);
    else
        snprintf(buf, size, "(%g cm)%s", s->unit_length_cm, h);
    return buf;
}

double fk_snap_G(const fk_snap *s)
{
    if (!s->have_units) return 0;
    return FK_G_CGS * s->unit_mass_g / (s->unit_length_cm * s->unit_velocity_cm_s * s->unit_velocity_cm_s);
}

double fk_snap_H0(const fk_snap *s)
{
    if (!s->have_units || !(s->hubble > 0)) return 0;
    /* 100 h km/s/Mpc = 1e7 h cm/s per 1000 kpc; a length unit per h carries the h itself */
    return 1e7 / (1000 * FK_KPC_CM) * (s->units_per_h ? 1 : s->hubble) * s->unit_length_cm / s->unit_velocity_cm_s;
}

int fk_snap_frame(const fk_snap *s, double *a, double *vscale, double *hflow)
{
    if (!s->comoving) return 0;
    const double H0 = fk_snap_H0(s), t = s->time;
    if (!(H0 > 0) || !s->have_cosmology || !(t > 0) || !isfinite(t)) return -1;
    const double om = s->omega0, ol = s->omega_lambda;
    const double E2 = om / (t * t * t) + (1 - om - ol) / (t * t) + ol;
    if (!(E2 > 0) || !isfinite(E2)) return -1;
    *a = t;
    *vscale = pow(t, s->vel_a_scaling);
    *hflow = H0 * sqrt(E2) * t;
    return 1;
}
