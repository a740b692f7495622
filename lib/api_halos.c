/* api_halos.c - fofkit_halos (fofkit.h): halostats' catalogue of groups of particle arrays: properties, centres, SO masses and unbinding. */
#include "api.h"

#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "gpuarrays.h"
#include "halostats.h"
#include "potential.h"
#include "so.h"
#include "unbind.h"
#include "unbind_gpu.h"

#define SOFTENING_FRACTION 0.05 /* halostats' default: this times the mean interparticle spacing */

/* The options of a caller built before the comoving fields: its size is
 * taken, the fields after it keep their defaults (comoving 0). */
#define HALO_OPTIONS_MIN offsetof(fofkit_halo_options, comoving)

void fofkit_halo_options_init(fofkit_halo_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->centre = FOFKIT_CENTRE_MBP;
    o->G = 1;
    o->theta = FK_POT_THETA;
    o->exact_max = -1;
    o->omega_l = -1;
    o->device = FOFKIT_DEVICE_AUTO;
}

/* Whether column c is in the catalogue for o (halostats' rule: the mbp
 * columns stay with COM centres, -1 and NaN, so that columns keep their
 * numbers). */
static int shown(const fofkit_halo_options *o, const fk_halo_column *c)
{
    if ((c->flags & FK_HCOL_SO) && !o->so) return 0;
    if ((c->flags & FK_HCOL_UNBIND) && !o->unbind) return 0;
    return 1;
}

/* The column table's entry of the catalogue's column k, or NULL. */
static const fk_halo_column *column(const fofkit_halo_options *o, int k)
{
    fofkit_halo_options d;
    fofkit_halo_options_init(&d);
    if (o && fk_api_take(&d, sizeof d, o, HALO_OPTIONS_MIN, "fofkit_halo_options", NULL)) return NULL;
    int j = 0;
    for (size_t c = 0; c < fk_halo_ncolumns; c++)
        if (shown(&d, &fk_halo_columns[c]) && j++ == k) return &fk_halo_columns[c];
    return NULL;
}

int fofkit_halo_ncolumns(const fofkit_halo_options *o)
{
    int k = 0;
    while (column(o, k)) k++;
    return k;
}

const char *fofkit_halo_column_name(const fofkit_halo_options *o, int k)
{
    const fk_halo_column *c = k >= 0 ? column(o, k) : NULL;
    return c ? c->name : NULL;
}

const char *fofkit_halo_column_description(const fofkit_halo_options *o, int k)
{
    const fk_halo_column *c = k >= 0 ? column(o, k) : NULL;
    return c ? c->desc : NULL;
}

int fofkit_halo_column_index(const fofkit_halo_options *o, const char *name)
{
    const fk_halo_column *c;
    for (int k = 0; name && (c = column(o, k)); k++)
        if (strcmp(c->name, name) == 0) return k;
    return -1;
}

/* fk_gpu_pot_minima in the shape of fk_pot_minima (its times dropped). */
static int gpu_minima(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min, fk_error *err)
{
    return fk_gpu_pot_minima(g, p, min, NULL, err);
}

/* The cosmology and thresholds of o's SO masses, as halostats sets them up. */
static int so_thresholds(const fofkit_halo_options *o, const fofkit_particles *p, const float *mass,
                         double rho[FK_SO_N], fk_error *err)
{
    if (!(o->omega_m > 0) || !isfinite(o->omega_m))
        return fk_fail(err, FK_EINVAL, "so needs omega_m > 0, not %g", o->omega_m);
    const double a = o->scale_factor > 0 ? o->scale_factor : 1, ol = o->omega_l >= 0 ? o->omega_l : 1 - o->omega_m;
    double rho_c0 = o->rho_crit;
    if (!(rho_c0 > 0)) {
        if (!p->periodic) return fk_fail(err, FK_EINVAL, "so needs rho_crit for a box that is not periodic");
        double total = 0;
        for (uint64_t i = 0; i < p->n; i++) total += mass ? mass[i] : 1.0;
        if (!(total > 0)) return fk_fail(err, FK_EINVAL, "the particles have no mass, so no mean density: give rho_crit");
        rho_c0 = total / (p->box * p->box * p->box) / o->omega_m;
    }
    fk_cosmo c = {o->omega_m, ol, a, rho_c0};
    return fk_so_thresholds(&c, rho, NULL, err);
}

static int halos(const fofkit_particles *pin, const uint32_t *group_in, uint64_t ng, const uint32_t *group_up,
                 const fofkit_halo_options *oin, double *table, unsigned char *bound, fk_error *err)
{
    fofkit_particles p;
    fofkit_halo_options o;
    fofkit_particles_init(&p);
    fofkit_halo_options_init(&o);
    int st;
    if ((st = fk_api_take(&p, sizeof p, pin, sizeof p, "fofkit_particles", err)) ||
        (st = fk_api_take(&o, sizeof o, oin, HALO_OPTIONS_MIN, "fofkit_halo_options", err)))
        return st;
    if (!group_in && p.n) return fk_fail(err, FK_EINVAL, "no group array (group is NULL)");
    if (ng && !table) return fk_fail(err, FK_EINVAL, "no table to write (table is NULL)");
    if (ng > UINT32_MAX) return fk_fail(err, FK_EINVAL, "%" PRIu64 " groups: group ids are 32-bit", ng);
    if (o.centre != FOFKIT_CENTRE_MBP && o.centre != FOFKIT_CENTRE_COM)
        return fk_fail(err, FK_EINVAL, "centre %d: FOFKIT_CENTRE_MBP or FOFKIT_CENTRE_COM", o.centre);
    if (o.device != FOFKIT_DEVICE_AUTO && o.device != FOFKIT_DEVICE_CPU && o.device != FOFKIT_DEVICE_GPU)
        return fk_fail(err, FK_EINVAL, "device %d: FOFKIT_DEVICE_AUTO, _CPU or _GPU", o.device);
    fk_pot_params pot;
    fk_pot_defaults(&pot);
    pot.G = o.G;
    pot.theta = o.theta;
    if (o.exact_max >= 0) pot.nexact = (uint64_t)o.exact_max;
    pot.eps = o.softening;
    const int potentials = o.centre == FOFKIT_CENTRE_MBP || o.unbind;
    if (!(pot.eps > 0) && p.box > 0) pot.eps = SOFTENING_FRACTION * p.box / cbrt((double)(p.n ? p.n : 1));
    if (!potentials && !(pot.eps > 0)) pot.eps = 1; /* unused: no potential is computed */
    if (potentials && !(pot.eps > 0)) {
        if (!(p.box > 0))
            return fk_fail(err, FK_EINVAL, "the softening's default (0.05 box / n^(1/3)) needs the box: give one, or "
                                           "the softening");
        pot.eps = SOFTENING_FRACTION * p.box / cbrt((double)(p.n ? p.n : 1));
    }
    if (o.comoving && !(o.scale_factor > 0 && isfinite(o.scale_factor)))
        return fk_fail(err, FK_EINVAL, "comoving needs the scale factor (above 0), not %g", o.scale_factor);
    if (o.comoving && (!(o.vel_scale >= 0) || !isfinite(o.vel_scale) || !isfinite(o.hubble_flow)))
        return fk_fail(err, FK_EINVAL, "comoving: vel_scale %g and hubble_flow %g must be finite (vel_scale >= 0)",
                       o.vel_scale, o.hubble_flow);
    if (o.comoving) pot.G /= o.scale_factor; /* phi and vmax with physical r = a d (halostats.c) */
    if (potentials && (st = fk_pot_check(&pot, err))) return st;

    fk_api_arrays a;
    if ((st = fk_api_arrays_get(&p, 1, 1, 1, &a, err))) return st;
    fk_api_threads th;
    fk_api_threads_set(&th, o.nthreads);
    const uint64_t n = p.n;
    uint32_t *gcopy = NULL, *upcopy = NULL;
    float *ones = NULL;
    double *phi = NULL, rho[FK_SO_N];
    fk_halo *h = NULL;
    fk_so_grid *grid = NULL;
    int dev;
    const uint32_t *group = group_in;
    /* group arrays on a GPU come down */
    if (fk_gpu_is_device_ptr(group_in, &dev)) {
        if (!(gcopy = malloc(n ? 4 * n : 1))) st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", n);
        if (!st) st = fk_gpu_copy_to_host(gcopy, group_in, 4 * n, dev, err);
        group = gcopy;
    }
    if (!st && fk_gpu_is_device_ptr(group_up, &dev)) {
        if (!(upcopy = malloc(n ? 4 * n : 1))) st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", n);
        if (!st) st = fk_gpu_copy_to_host(upcopy, group_up, 4 * n, dev, err);
        group_up = upcopy;
    }
    if (!st && !a.mass) {
        if (!(ones = malloc(n ? 4 * n : 4))) st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " masses", n);
        for (uint64_t i = 0; !st && i < n; i++) ones[i] = 1;
    }
    const float *mass = a.mass ? a.mass : ones;
    int gpu = 0;
    if (!st && potentials && o.device != FOFKIT_DEVICE_CPU) {
        fk_gpuinfo gi;
        st = fk_gpu_probe(&gi, err);
        gpu = !st && gi.present;
        if (!st && !gpu && o.device == FOFKIT_DEVICE_GPU) st = fk_fail(err, FK_EDEVICE, "device GPU asked: %s", gi.reason);
    }
    if (!st && o.so) st = so_thresholds(&o, &p, mass, rho, err);
    if (!st && !(h = calloc(ng ? ng : 1, sizeof *h)))
        st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", ng);
    if (!st && o.unbind && o.centre == FOFKIT_CENTRE_MBP && !(phi = malloc(n ? n * sizeof *phi : 1)))
        st = fk_fail(err, FK_ENOMEM, "out of memory for the potentials of %" PRIu64 " particles", n);
    fk_halo_input hin = {n,        a.pos,      a.vel,      mass, p.ids, group, p.periodic, p.box, p.origin, o.comoving != 0,
                         o.vel_scale > 0 ? o.vel_scale : 1, o.hubble_flow, NULL, fk_halo_hires_mass(n, mass, NULL)};
    /* as halostats: the properties, the centres (keeping the potentials for the unbinding) */
    if (!st) st = fk_halostats_compute(&hin, ng, h, "group", err);
    if (!st)
        st = fk_halostats_centres_phi(&hin, ng, o.centre == FOFKIT_CENTRE_MBP ? FK_CENTRE_MBP : FK_CENTRE_COM, &pot,
                                      gpu ? gpu_minima : NULL, h, NULL, phi, err);
    for (uint64_t g = 0; !st && group_up && g < ng; g++) h[g].host = group_up[h[g].ref];
    if (!st && o.so) {
        fk_so_particles sp = {n, a.pos, mass, p.periodic, p.box, p.origin, p.ids};
        st = fk_so_grid_build(&sp, &grid, err);
        if (!st) st = fk_halostats_so(grid, ng, h, rho, o.so_min ? o.so_min : FK_SO_MINPART, err);
    }
    if (!st && o.unbind) {
        fk_unbind_params up = {pot, o.bound_min ? o.bound_min : FK_UNBIND_MINBOUND, NULL, NULL};
        fk_unbind_run run = {phi, NULL, 0, NULL, NULL, 0, 0};
        if (gpu) fk_unbind_use_gpu(&up, &run, omp_get_max_threads());
        st = fk_unbind_halos_run(&hin, ng, h, &up, &run, bound, err);
    } else if (!st && bound) {
        memset(bound, 0, n);
    }
    if (!st) {
        const fk_halo_column *cols[64];
        int nc = 0;
        for (size_t c = 0; c < fk_halo_ncolumns && nc < 64; c++)
            if (shown(&o, &fk_halo_columns[c])) cols[nc++] = &fk_halo_columns[c];
        for (uint64_t g = 0; g < ng; g++)
            for (int k = 0; k < nc; k++) table[g * (uint64_t)nc + (uint64_t)k] = fk_halo_value(&h[g], cols[k], NULL);
    }
    fk_so_grid_free(grid);
    free(h), free(phi), free(ones), free(gcopy), free(upcopy);
    fk_api_arrays_free(&a);
    fk_api_threads_restore(&th);
    return st;
}

int fofkit_halos(const fofkit_particles *p, const uint32_t *group, uint64_t ngroups, const uint32_t *group_up,
                 const fofkit_halo_options *o, double *table, unsigned char *bound, fofkit_error *e)
{
    fk_error err = {0};
    halos(p, group, ngroups, group_up, o, table, bound, &err);
    return fk_api_give(&err, "fofkit_halos", e);
}
