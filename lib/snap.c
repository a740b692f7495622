/* snap.c - the SNAP metadata chunk and checks on particle chunks. */
#include "snap.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "kv.h"

static const char *type_key[3] = {"ngas", "ndark", "nstar"};
static const char *src_key[3] = {"nsource_gas", "nsource_dark", "nsource_star"};

int fk_snap_format(const fk_snap *s, char **text, fk_error *err)
{
    fk_kvbuf b;
    fk_kv_init(&b);
    fk_kv_u64(&b, "n", s->n);
    for (int t = 0; t < 3; t++) fk_kv_u64(&b, type_key[t], s->ntype[t]);
    fk_kv_u64(&b, "nsource", s->nsource);
    for (int t = 0; t < 3; t++) fk_kv_u64(&b, src_key[t], s->nsource_type[t]);
    fk_kv_dbl(&b, "time", s->time);
    fk_kv_dbl(&b, "box", s->box);
    fk_kv_dbl(&b, "origin", s->origin);
    fk_kv_u64(&b, "periodic", s->periodic ? 1 : 0);
    fk_kv_str(&b, "source", s->source);
    if (s->have_units) {
        fk_kv_dbl(&b, "unit_length_cm", s->unit_length_cm);
        fk_kv_dbl(&b, "unit_mass_g", s->unit_mass_g);
        fk_kv_dbl(&b, "unit_velocity_cm_s", s->unit_velocity_cm_s);
        fk_kv_u64(&b, "units_per_h", s->units_per_h ? 1 : 0);
    }
    /* All four, or each one a record gave on its own (a key that was absent
     * reads as +0, so a value other than +0 was there). */
    static const char *ckey[4] = {"hubble", "omega0", "omega_lambda", "redshift"};
    const double cval[4] = {s->hubble, s->omega0, s->omega_lambda, s->redshift};
    for (int k = 0; k < 4; k++)
        if (s->have_cosmology || cval[k] != 0 || signbit(cval[k])) fk_kv_dbl(&b, ckey[k], cval[k]);
    if (s->have_omega_baryon) fk_kv_dbl(&b, "omega_baryon", s->omega_baryon);
    if (s->comoving) {
        fk_kv_u64(&b, "comoving", 1);
        fk_kv_dbl(&b, "vel_a_scaling", s->vel_a_scaling);
    }
    return fk_kv_finish(&b, text, err);
}

/* The optional unit keys (all three or none) and cosmology keys (each on
 * its own; have_cosmology when all four are there). */
static int snap_parse_optional(const char *text, fk_snap *s, const char *what, fk_error *err)
{
    static const char *ukey[3] = {"unit_length_cm", "unit_mass_g", "unit_velocity_cm_s"};
    static const char *ckey[4] = {"hubble", "omega0", "omega_lambda", "redshift"};
    double *uval[3] = {&s->unit_length_cm, &s->unit_mass_g, &s->unit_velocity_cm_s};
    double *cval[4] = {&s->hubble, &s->omega0, &s->omega_lambda, &s->redshift};
    int nu = 0, nc = 0, st = FK_OK;
    for (int k = 0; k < 3; k++) nu += fk_kv_has(text, ukey[k]) != 0;
    for (int k = 0; k < 4; k++) nc += fk_kv_has(text, ckey[k]) != 0;
    if (nu && nu < 3) return fk_fail(err, FK_EFORMAT, "%s: has only some of the unit keys", what);
    if (nu) {
        uint64_t perh = 0;
        for (int k = 0; k < 3 && !st; k++) st = fk_kv_get_dbl(text, ukey[k], uval[k], what, err);
        if (!st && fk_kv_has(text, "units_per_h")) st = fk_kv_get_u64(text, "units_per_h", &perh, what, err);
        if (st) return st;
        for (int k = 0; k < 3; k++)
            if (!(*uval[k] > 0) || !isfinite(*uval[k]))
                return fk_fail(err, FK_EFORMAT, "%s: %s %g is not a positive unit", what, ukey[k], *uval[k]);
        s->have_units = 1;
        s->units_per_h = perh != 0;
    }
    for (int k = 0; k < 4 && !st; k++)
        if (fk_kv_has(text, ckey[k])) st = fk_kv_get_dbl(text, ckey[k], cval[k], what, err);
    if (st) return st;
    s->have_cosmology = nc == 4;
    if (fk_kv_has(text, "omega_baryon")) {
        if ((st = fk_kv_get_dbl(text, "omega_baryon", &s->omega_baryon, what, err))) return st;
        if (!(s->omega_baryon >= 0) || !isfinite(s->omega_baryon))
            return fk_fail(err, FK_EFORMAT, "%s: omega_baryon %g is not a density parameter", what, s->omega_baryon);
        s->have_omega_baryon = 1;
    }
    uint64_t com = 0;
    if (fk_kv_has(text, "comoving") && (st = fk_kv_get_u64(text, "comoving", &com, what, err))) return st;
    if (com > 1) return fk_fail(err, FK_EFORMAT, "%s: comoving must be 0 or 1", what);
    s->comoving = com == 1;
    if (fk_kv_has(text, "vel_a_scaling") && (st = fk_kv_get_dbl(text, "vel_a_scaling", &s->vel_a_scaling, what, err)))
        return st;
    if (!isfinite(s->vel_a_scaling) || fabs(s->vel_a_scaling) > 4)
        return fk_fail(err, FK_EFORMAT, "%s: vel_a_scaling %g is not an exponent in [-4, 4]", what, s->vel_a_scaling);
    if (s->comoving && !(s->time > 0 && s->time <= 64))
        return fk_fail(err, FK_EFORMAT, "%s: comoving, but time %g is not an expansion factor", what, s->time);
    return FK_OK;
}

int fk_snap_box_ok(double origin, double box, int periodic)
{
    return box > 0 && isfinite((float)box) && isfinite(origin) && isfinite((float)(origin + box)) &&
           (!periodic || (float)(origin + box) > (float)origin);
}

int fk_snap_parse(const char *text, fk_snap *s, const char *name, fk_error *err)
{
    char what[300];
    snprintf(what, sizeof what, "%s: SNAP chunk", name);
    memset(s, 0, sizeof *s);
    uint64_t per = 0;
    int st = fk_kv_get_u64(text, "n", &s->n, what, err);
    for (int t = 0; t < 3 && !st; t++) st = fk_kv_get_u64(text, type_key[t], &s->ntype[t], what, err);
    if (!st) st = fk_kv_get_u64(text, "nsource", &s->nsource, what, err);
    for (int t = 0; t < 3 && !st; t++) st = fk_kv_get_u64(text, src_key[t], &s->nsource_type[t], what, err);
    if (!st) st = fk_kv_get_dbl(text, "time", &s->time, what, err);
    if (!st) st = fk_kv_get_dbl(text, "box", &s->box, what, err);
    if (!st) st = fk_kv_get_dbl(text, "origin", &s->origin, what, err);
    if (!st) st = fk_kv_get_u64(text, "periodic", &per, what, err);
    if (st) return st;
    if (fk_kv_has(text, "source") && fk_kv_get_str(text, "source", s->source, sizeof s->source, what, NULL))
        s->source[0] = '\0';
    s->periodic = per != 0;
    /* Compared without a sum that could wrap modulo 2^64. */
    if (s->ntype[0] > s->n || s->ntype[1] > s->n - s->ntype[0] || s->ntype[2] != s->n - s->ntype[0] - s->ntype[1])
        return fk_fail(err, FK_EFORMAT, "%s: gas + dark + star (%" PRIu64 ") differs from n (%" PRIu64 ")", what,
                       s->ntype[0] + s->ntype[1] + s->ntype[2], s->n);
    if (s->nsource_type[0] > s->nsource || s->nsource_type[1] > s->nsource - s->nsource_type[0] ||
        s->nsource_type[2] != s->nsource - s->nsource_type[0] - s->nsource_type[1])
        return fk_fail(err, FK_EFORMAT, "%s: source counts by type do not add up to nsource", what);
    for (int t = 0; t < 3; t++)
        if (s->ntype[t] > s->nsource_type[t])
            return fk_fail(err, FK_EFORMAT, "%s: more particles of a type than the source holds", what);
    if (!fk_snap_box_ok(s->origin, s->box, per == 1))
        return fk_fail(err, FK_EFORMAT, "%s: box %g with origin %g is not a valid box", what, s->box, s->origin);
    if (per > 1) return fk_fail(err, FK_EFORMAT, "%s: periodic must be 0 or 1", what);
    return snap_parse_optional(text, s, what, err);
}

const char *fk_id_dtype(uint64_t nsource)
{
    return nsource > (UINT64_C(1) << 31) ? "<u8" : "<u4";
}

int fk_snap_check_chunk(const fk_snap *s, const fk_chunk *c, const char *dtype, uint32_t ncols, const char *name,
                        fk_error *err)
{
    int dt_ok = dtype ? strcmp(c->dtype, dtype) == 0 : (strcmp(c->dtype, "<u4") == 0 || strcmp(c->dtype, "<u8") == 0);
    if (!dt_ok || c->ncols != ncols)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s holds %s x %u, expected %s x %u", name, c->tag, c->dtype, c->ncols,
                       dtype ? dtype : "<u4 or <u8", ncols);
    if (c->nrows != s->n)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s has %" PRIu64 " rows for %" PRIu64 " particles", name, c->tag,
                       c->nrows, s->n);
    if (!(c->flags & FK_CF_PARTICLE))
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s is not marked as per-particle", name, c->tag);
    return FK_OK;
}

int fk_snap_check_positions(const fk_snap *s, const float *pos, const char *name, fk_error *err)
{
    const float lo = (float)s->origin, hi = (float)(s->origin + s->box);
    uint64_t bad = UINT64_MAX;
    int nonfinite = 0;
    #pragma omp parallel for reduction(min : bad) schedule(static)
    for (uint64_t i = 0; i < s->n; i++) {
        for (int k = 0; k < 3; k++) {
            float x = pos[3 * i + k];
            if (!isfinite(x) || (s->periodic && (x < lo || x >= hi))) {
                if (i < bad) bad = i;
            }
        }
    }
    if (bad == UINT64_MAX) return FK_OK;
    for (int k = 0; k < 3; k++)
        if (!isfinite(pos[3 * bad + k])) nonfinite = 1;
    if (nonfinite)
        return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has a non-finite coordinate (%g %g %g)", name, bad,
                       pos[3 * bad], pos[3 * bad + 1], pos[3 * bad + 2]);
    return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " at (%g %g %g) lies outside the periodic box [%g, %g)", name,
                   bad, pos[3 * bad], pos[3 * bad + 1], pos[3 * bad + 2], lo, hi);
}

int fk_snap_widen_keep(void *raw, const fk_chunk *c, uint64_t **ids, fk_error *err)
{
    *ids = NULL;
    if (strcmp(c->dtype, "<u8") == 0) {
        *ids = raw;
        return FK_OK;
    }
    uint64_t *out = fk_big_alloc(c->nrows ? c->nrows * sizeof *out : 1);
    if (!out) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " particle IDs", c->nrows);
    const uint32_t *in = raw;
    #pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < c->nrows; i++) out[i] = in[i];
    *ids = out;
    return FK_OK;
}

int fk_snap_widen_ids(void *raw, const fk_chunk *c, uint64_t **ids, fk_error *err)
{
    int st = fk_snap_widen_keep(raw, c, ids, err);
    if (st || *ids != raw) free(raw);
    return st;
}

int fk_snap_load_ids(fk_reader *r, const fk_chunk *c, uint64_t **ids, fk_error *err)
{
    *ids = NULL;
    void *raw;
    int st = fk_reader_load(r, &raw, err);
    if (st) return st;
    return fk_snap_widen_ids(raw, c, ids, err);
}

int fk_snap_read(fk_reader *r, fk_chunk *c, fk_snap *s, char **text, const char *name, fk_error *err)
{
    *text = NULL;
    int st = fk_reader_next(r, c, err);
    if (st < 0) return st;
    if (st == 1 && strcmp(c->tag, "BASE") == 0) /* a reader that does not follow overlays (fk_reader_follow) */
        return fk_fail(err, FK_EFORMAT, "%s: an overlay, the chunks a distributed stage added to another stream "
                       "(its BASE): the stages under mpirun read it with its base", name);
    if (st == 0 || strcmp(c->tag, "SNAP") != 0)
        return fk_fail(err, FK_EMISSING, "%s: stream does not start with a SNAP chunk", name);
    st = fk_reader_load_text(r, text, err);
    if (!st) st = fk_snap_parse(*text, s, name, err);
    if (st) {
        free(*text);
        *text = NULL;
    }
    return st;
}
