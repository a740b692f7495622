/* gsnap.c - Gadget-family snapshots into the stream's arrays: type mapping, order, box, wrapping, SNAP. */
#include "gsnap.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tipsy.h"

int fk_gsnap_stream_type(int t)
{
    return t == 0 ? FK_GAS : t == 4 ? FK_STAR : FK_DARK;
}

void fk_gsnap_opts_default(fk_gsnap_opts *o)
{
    *o = (fk_gsnap_opts){.types = 0, .box = 0, .periodic = -1, .origin = 0, .slice = 0, .nslices = 0,
                         .units = -1, .comoving = -1};
}

/* o's units, comoving flag and Omega_b over the reader's in h. */
static int apply_physics(fk_gsnap_header *h, const fk_gsnap_opts *o, const char *name, fk_error *err)
{
    if (o->units == 0) {
        h->have_units = 0;
        h->unit_length_cm = h->unit_mass_g = h->unit_velocity_cm_s = 0;
        h->units_per_h = 0;
    } else if (o->units == 1) {
        if (!(o->unit_length_cm > 0 && o->unit_mass_g > 0 && o->unit_velocity_cm_s > 0) ||
            !isfinite(o->unit_length_cm) || !isfinite(o->unit_mass_g) || !isfinite(o->unit_velocity_cm_s))
            return fk_fail(err, FK_EINVAL, "%s: units %g cm, %g g, %g cm/s: every unit must be a positive number", name,
                           o->unit_length_cm, o->unit_mass_g, o->unit_velocity_cm_s);
        h->have_units = 1;
        h->unit_length_cm = o->unit_length_cm;
        h->unit_mass_g = o->unit_mass_g;
        h->unit_velocity_cm_s = o->unit_velocity_cm_s;
        h->units_per_h = o->units_per_h != 0;
    }
    if (o->have_omega_baryon) {
        if (!(o->omega_baryon >= 0) || !isfinite(o->omega_baryon) ||
            (h->have_cosmology && o->omega_baryon > h->omega0))
            return fk_fail(err, FK_EINVAL, "%s: --omega-baryon=%g is not a baryon density in [0, Omega0 = %g]", name,
                           o->omega_baryon, h->omega0);
        h->have_omega_baryon = 1;
        h->omega_baryon = o->omega_baryon;
    }
    if (o->comoving == 0) h->comoving = 0;
    if (o->comoving == 1) {
        if (!h->have_cosmology)
            return fk_fail(err, FK_EINVAL,
                           "%s: --comoving, but the header gives no cosmology (HubbleParam %g): a comoving stream "
                           "needs h, Omega0 and OmegaLambda",
                           name, h->hubble);
        if (!(h->time > 0 && h->time <= 1))
            return fk_fail(err, FK_EINVAL, "%s: --comoving, but the header's Time %g is not an expansion factor in (0, 1]",
                           name, h->time);
        if (!h->have_units)
            return fk_fail(err, FK_EINVAL,
                           "%s: --comoving, but the snapshot has no units for the physical frame (give "
                           "--unit-length-cm, --unit-mass-g and --unit-velocity-cm-s)",
                           name);
        h->comoving = 1;
    }
    return FK_OK;
}

int fk_gsnap_keeps(const fk_gsnap *s, int t)
{
    return t >= 0 && t < s->hdr.ntypes && (s->types >> t & 1u);
}

/* First slot of type t: the held particles of the types before it. */
static uint64_t first_slot(const fk_gsnap *s, int t)
{
    uint64_t k = 0;
    for (int u = 0; u < t; u++) k += s->slice.count[u];
    return k;
}

uint64_t fk_gsnap_slot(const fk_gsnap *s, int t, uint64_t k)
{
    return first_slot(s, t) + (k - s->slice.first[t]);
}

uint64_t fk_gsnap_part(const fk_gsnap *s, int t, uint64_t seen, uint64_t n, uint64_t *skip)
{
    return fk_gslice_part(&s->slice, t, seen, n, skip);
}

int fk_gsnap_begin(fk_gsnap *s, const fk_gsnap_header *h, const fk_gsnap_opts *o, const char *name, fk_error *err)
{
    memset(s, 0, sizeof *s);
    s->hdr = *h;
    s->types = o->types ? o->types : ~0u;
    if (h->ntypes < 1 || h->ntypes > FK_GSNAP_NTYPES)
        return fk_fail(err, FK_EFORMAT, "%s: header describes %d particle types (1 to %d expected)", name, h->ntypes,
                       FK_GSNAP_NTYPES);
    int st = apply_physics(&s->hdr, o, name, err);
    if (st) return st;
    s->periodic = o->periodic >= 0 ? o->periodic : h->periodic != 0;
    s->box = o->box > 0 ? o->box : h->box;
    s->origin = o->origin;
    if (s->periodic && !(s->box > 0))
        return fk_fail(err, FK_EINVAL, "%s: header gives no box size (BoxSize %g): give --box, or --no-periodic", name,
                       h->box);
    /* an isolated run without a box still needs one for the SNAP record: any positive value does */
    if (!(s->box > 0)) s->box = 1;
    if (!fk_snap_box_ok(s->origin, s->box, s->periodic) || (float)s->box > FLT_MAX / 4)
        return fk_fail(err, o->box > 0 ? FK_EINVAL : FK_EFORMAT,
                       "%s: box size %g at origin %g is not a usable float box (it must be a float above 0 and "
                       "wider than a float's step at the origin)",
                       name, s->box, s->origin);
    if (o->nslices && o->slice >= o->nslices)
        return fk_fail(err, FK_EINVAL, "%s: slice %" PRIu32 " of %" PRIu32 " does not exist (K/R needs K below R)", name,
                       o->slice, o->nslices);
    unsigned keep = 0;
    for (int t = 0; t < h->ntypes; t++) {
        if (h->ntotal[t] > (UINT64_C(1) << 40))
            return fk_fail(err, FK_EFORMAT, "%s: type %d claims %" PRIu64 " particles", name, t, h->ntotal[t]);
        s->nsource += h->ntotal[t];
        if (fk_gsnap_keeps(s, t)) keep |= 1u << t;
    }
    if (o->file_hi > 0) {
        /* whole files: the kept particles of those files */
        for (int t = 0; t < h->ntypes; t++) {
            if (o->file_first[t] > h->ntotal[t] || o->file_count[t] > h->ntotal[t] - o->file_first[t])
                return fk_fail(err, FK_EFORMAT,
                               "%s: inconsistent counts: files %d to %d hold particles %" PRIu64 " to %" PRIu64
                               " of type %d, past the header's total %" PRIu64,
                               name, o->file_lo, o->file_hi - 1, o->file_first[t], o->file_first[t] + o->file_count[t], t,
                               h->ntotal[t]);
            if (keep >> t & 1u) {
                s->slice.first[t] = o->file_first[t];
                s->slice.count[t] = o->file_count[t];
                s->slice.n += o->file_count[t];
            }
        }
    } else {
        fk_gslice_make(&s->slice, h->ntotal, h->ntypes, keep, o->slice, o->nslices);
    }
    for (int t = 0; t < h->ntypes; t++) s->nkept[t] = s->slice.count[t];
    s->n = s->slice.n;
    return FK_OK;
}

/* Grows one array to cap elements of size bytes (zeroed when zero is set). */
static int grow(void *pp, uint64_t old, uint64_t cap, size_t size, int zero)
{
    void **p = pp;
    if (cap > SIZE_MAX / size) return 0;
    void *q = realloc(*p, (size_t)(cap * size));
    if (!q) return 0;
    if (zero) memset((char *)q + old * size, 0, (size_t)((cap - old) * size));
    *p = q;
    return 1;
}

int fk_gsnap_reserve(fk_gsnap *s, uint64_t n, const char *name, fk_error *err)
{
    if (n > s->n) n = s->n;
    if (s->pos && n <= s->cap) return FK_OK;
    uint64_t cap = s->pos ? 2 * s->cap : 0;
    if (cap < n) cap = n;
    if (cap > s->n) cap = s->n;
    if (cap == 0) cap = 1;
    const uint64_t old = s->pos ? s->cap : 0;
    if (!grow(&s->pos, old, cap, 3 * sizeof *s->pos, 0) || !grow(&s->vel, old, cap, 3 * sizeof *s->vel, 0) ||
        !grow(&s->mass, old, cap, sizeof *s->mass, 0) || !grow(&s->type, old, cap, 1, 0) ||
        !grow(&s->gtype, old, cap, 1, 0) || !grow(&s->id, old, cap, sizeof *s->id, 0) ||
        !grow(&s->pid, old, cap, sizeof *s->pid, 1))
        return fk_fail(err, FK_ENOMEM, "%s: out of memory for %" PRIu64 " particles", name, cap);
    s->cap = cap;
    return FK_OK;
}

/* What is wrong with held particle i (src: its index in the snapshot)
 * before wrapping: NULL when nothing. */
static const char *nonfinite(const fk_gsnap *s, uint64_t i)
{
    const float *p = s->pos + 3 * i, *v = s->vel + 3 * i;
    if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) return "a non-finite position";
    if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2])) return "a non-finite velocity";
    if (!isfinite(s->mass[i])) return "a non-finite mass";
    return NULL;
}

int fk_gsnap_finish(fk_gsnap *s, const char *name, fk_error *err)
{
    uint64_t i0 = 0, base = 0;
    const float lo = (float)s->origin, hi = (float)(s->origin + s->box);
    for (int t = 0; t < s->hdr.ntypes; t++) {
        /* the held particles of type t, at i0 on; their index in the snapshot src0 on */
        const uint64_t k0 = s->slice.first[t], cnt = s->slice.count[t], src0 = base + k0;
        base += s->hdr.ntotal[t];
        /* On all cores: the first bad particle (a non-finite value, or a
         * position more than a box length out) is left as it was and named;
         * those after it are done as well, to no use. */
        uint64_t bad = UINT64_MAX, wrapped = 0;
#pragma omp parallel for schedule(static) reduction(min : bad) reduction(+ : wrapped)
        for (uint64_t j = 0; j < cnt; j++) {
            const uint64_t i = i0 + j;
            s->type[i] = (uint8_t)fk_gsnap_stream_type(t);
            s->gtype[i] = (uint8_t)t;
            s->id[i] = src0 + j;
            if (nonfinite(s, i)) {
                if (j < bad) bad = j;
                continue;
            }
            if (!s->periodic) continue;
            float p[3] = {s->pos[3 * i], s->pos[3 * i + 1], s->pos[3 * i + 2]};
            int moved = 0, out = 0;
            for (int d = 0; d < 3; d++) {
                int w = fk_tipsy_wrap(&p[d], s->origin, s->box, lo, hi);
                out |= w < 0;
                moved |= w > 0;
            }
            if (out) {
                if (j < bad) bad = j;
                continue;
            }
            for (int d = 0; d < 3; d++) s->pos[3 * i + d] = p[d];
            wrapped += (uint64_t)moved;
        }
        s->nwrapped += wrapped;
        if (bad != UINT64_MAX) {
            const uint64_t i = i0 + bad, src = src0 + bad;
            const char *what = nonfinite(s, i);
            const float *p = s->pos + 3 * i;
            if (what)
                return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " (type %d, number %" PRIu64 " of its type) has %s",
                               name, src, t, k0 + bad, what);
            return fk_fail(err, FK_EFORMAT,
                           "%s: particle %" PRIu64 " (type %d) at (%g %g %g) lies more than one box length outside "
                           "[%g, %g) (wrong --box or --origin? or --no-periodic for an isolated snapshot)",
                           name, src, t, p[0], p[1], p[2], s->origin, s->origin + s->box);
        }
        i0 += cnt;
    }
    return FK_OK;
}

void fk_gsnap_to_snap(const fk_gsnap *s, const char *source, fk_snap *snap)
{
    memset(snap, 0, sizeof *snap);
    snap->n = s->n;
    snap->nsource = s->nsource;
    for (int t = 0; t < s->hdr.ntypes; t++) {
        int st = fk_gsnap_stream_type(t);
        snap->nsource_type[st] += s->hdr.ntotal[t];
        snap->ntype[st] += s->nkept[t];
    }
    snap->time = s->hdr.time;
    snap->box = s->box;
    snap->origin = s->origin;
    snap->periodic = s->periodic;
    const char *base = strrchr(source, '/');
    snprintf(snap->source, sizeof snap->source, "%s", base ? base + 1 : source);
    const fk_gsnap_header *h = &s->hdr;
    if (h->have_units) {
        snap->have_units = 1;
        snap->units_per_h = h->units_per_h;
        snap->unit_length_cm = h->unit_length_cm;
        snap->unit_mass_g = h->unit_mass_g;
        snap->unit_velocity_cm_s = h->unit_velocity_cm_s;
    }
    if (h->have_cosmology) {
        snap->have_cosmology = 1;
        snap->hubble = h->hubble;
        snap->omega0 = h->omega0;
        snap->omega_lambda = h->omega_lambda;
        snap->redshift = h->redshift;
    }
    snap->have_omega_baryon = h->have_omega_baryon;
    snap->omega_baryon = h->omega_baryon;
    snap->comoving = h->comoving;
    snap->vel_a_scaling = h->comoving ? h->vel_a_scaling : 0;
}

void fk_gsnap_free(fk_gsnap *s)
{
    free(s->pos), free(s->vel), free(s->mass), free(s->type), free(s->gtype), free(s->id), free(s->pid);
    memset(s, 0, sizeof *s);
}
