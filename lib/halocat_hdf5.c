/* halocat_hdf5.c - the halo catalogue as an in-memory HDF5 file in Gadget-4's fof_subhalo_tab layout, units and conventions. */
#include "halocat_hdf5.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "memberorder.h"
#include "snapunits.h"

#define NTYPES 6 /* Gadget's particle types */

/* Gadget's usual internal units, which a stream without units is taken to
 * be in (Gadget-4's defaults: kpc/h, 1e10 Msun/h, km/s). */
#define GADGET_LENGTH_CM FK_KPC_CM
#define GADGET_MASS_G (1e10 * FK_MSUN_G)
#define GADGET_VELOCITY_CM_S 1e5

void fk_gadget_meta_init(fk_gadget_meta *m, const fk_snap *s, const fk_halo_units *u, const fk_cosmo *so)
{
    memset(m, 0, sizeof *m);
    double lu = u ? u->length : 1, mu = u ? u->mass : 1, vu = u ? u->velocity : 1;
    m->stream_units = s->have_units;
    m->unit_length_cm = (s->have_units ? s->unit_length_cm : GADGET_LENGTH_CM) / lu;
    m->unit_mass_g = (s->have_units ? s->unit_mass_g : GADGET_MASS_G) / mu;
    m->unit_velocity_cm_s = (s->have_units ? s->unit_velocity_cm_s : GADGET_VELOCITY_CM_S) / vu;
    m->units_per_h = s->have_units ? s->units_per_h : 1;
    m->time = s->time;
    /* a key that was absent reads as +0 (snap.h) */
    const int snap_cosmo = s->have_cosmology || s->hubble != 0 || s->omega0 != 0 || s->omega_lambda != 0;
    const int expansion = s->periodic && s->time > 0 && s->time <= 1;
    m->hubble = s->hubble > 0 ? s->hubble : 1;
    if (snap_cosmo) {
        m->omega0 = s->omega0, m->omega_lambda = s->omega_lambda;
    } else if (so) {
        m->omega0 = so->omega_m, m->omega_lambda = so->omega_l;
    }
    if (s->have_cosmology || s->redshift != 0)
        m->redshift = s->redshift;
    else if (so && so->a > 0)
        m->redshift = 1 / so->a - 1;
    else if (expansion)
        m->redshift = 1 / s->time - 1;
    m->comoving = snap_cosmo || so != NULL || expansion;
}

int fk_gadget_type(const fk_snap *s, uint64_t r)
{
    if (r < s->nsource_type[FK_GAS]) return 0;
    if (r < s->nsource_type[FK_GAS] + s->nsource_type[FK_DARK]) return 1;
    return 4;
}

/* One table (Group or Subhalo) before it is written. */
typedef struct table {
    uint64_t rows;
    int64_t *len, *lentype, *offtype; /* rows, rows x 6, rows x 6 */
} table;

static int table_alloc(table *t, uint64_t rows)
{
    size_t r = rows ? rows : 1;
    t->rows = rows;
    t->len = calloc(r, sizeof *t->len);
    t->lentype = calloc(r * NTYPES, sizeof *t->lentype);
    t->offtype = calloc(r * NTYPES, sizeof *t->offtype);
    return t->len && t->lentype && t->offtype ? FK_OK : FK_ENOMEM;
}

static void table_free(table *t)
{
    free(t->len), free(t->lentype), free(t->offtype);
}

/* Where everything goes: the Subhalo rows host by host, both tables, and
 * the stream row of each original index. */
typedef struct layout {
    uint64_t ng, ns;
    uint64_t *sorder;   /* ns: Subhalo row k is subs[sorder[k]]      */
    uint64_t *subrow;   /* ns: the row of subs[j]                    */
    int64_t *firstsub;  /* ng: first row of the group's Subhalos, -1 */
    int64_t *nsubs;     /* ng                                        */
    uint64_t *row_of;   /* nsource: stream row, UINT64_MAX if absent */
    table gt, st;
    uint64_t nids;
} layout;

static void layout_free(layout *l)
{
    free(l->sorder), free(l->subrow), free(l->firstsub), free(l->nsubs), free(l->row_of);
    table_free(&l->gt), table_free(&l->st);
}

/* Counts members by type into the tables and checks them against the halos. */
static int count_members(const fk_halocat *cat, layout *l, fk_error *err)
{
    const fk_snap *s = cat->snap;
    for (uint64_t r = 0; r < s->nsource; r++) {
        uint64_t i = l->row_of[r];
        uint32_t g = cat->gid0[r], sg = cat->gsub ? cat->gsub[r] : 0;
        if (i == UINT64_MAX) {
            if (g || sg)
                return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: particle %" PRIu64 " is in a group but not in the stream",
                               r);
            continue;
        }
        int t = fk_gadget_type(s, r);
        if (g > l->ng)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: particle %" PRIu64 " is in group %" PRIu32 " of %" PRIu64, r,
                           g, l->ng);
        if (sg > l->ns)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: particle %" PRIu64 " is in subhalo %" PRIu32 " of %" PRIu64,
                           r, sg, l->ns);
        if (g) {
            l->gt.len[g - 1]++;
            l->gt.lentype[(g - 1) * NTYPES + t]++;
        }
        if (sg) {
            const fk_halo *h = &cat->subs[sg - 1];
            if (h->host != g)
                return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: particle %" PRIu64 " of the subhalo of level %" PRIu64
                               " group %" PRIu64 " lies in group %" PRIu32 ", not in its host %" PRIu64, r, h->level,
                               h->id, g, h->host);
            uint64_t k = l->subrow[sg - 1];
            l->st.len[k]++;
            l->st.lentype[k * NTYPES + t]++;
        }
    }
    for (uint64_t g = 0; g < l->ng; g++)
        if ((uint64_t)l->gt.len[g] != cat->groups[g].n)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: group %" PRIu64 " has %" PRId64 " members in the stream, not %"
                           PRIu64, g + 1, l->gt.len[g], cat->groups[g].n);
    for (uint64_t j = 0; j < l->ns; j++)
        if ((uint64_t)l->st.len[l->subrow[j]] != cat->subs[j].n)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: the subhalo of level %" PRIu64 " group %" PRIu64 " has %" PRId64
                           " members in the stream, not %" PRIu64, cat->subs[j].level, cat->subs[j].id,
                           l->st.len[l->subrow[j]], cat->subs[j].n);
    return FK_OK;
}

/* Offsets in the group-ordered snapshot, type by type: groups one after
 * the other; in a group its subhalos (in row order), then the rest. */
static void set_offsets(layout *l)
{
    for (int t = 0; t < NTYPES; t++) {
        int64_t at = 0;
        for (uint64_t g = 0; g < l->ng; g++) {
            l->gt.offtype[g * NTYPES + t] = at;
            int64_t sub_at = at;
            for (int64_t k = l->firstsub[g]; k >= 0 && k < l->firstsub[g] + l->nsubs[g]; k++) {
                l->st.offtype[k * NTYPES + t] = sub_at;
                sub_at += l->st.lentype[k * NTYPES + t];
            }
            at += l->gt.lentype[g * NTYPES + t];
        }
    }
}

static int layout_build(const fk_halocat *cat, layout *l, fk_error *err)
{
    memset(l, 0, sizeof *l);
    const fk_snap *s = cat->snap;
    uint64_t ng = cat->ngroups, ns = cat->gsub ? cat->nsubs : 0;
    l->ng = ng, l->ns = ns;
    l->sorder = malloc((ns ? ns : 1) * sizeof *l->sorder);
    l->subrow = malloc((ns ? ns : 1) * sizeof *l->subrow);
    l->firstsub = malloc((ng ? ng : 1) * sizeof *l->firstsub);
    l->nsubs = calloc(ng ? ng : 1, sizeof *l->nsubs);
    l->row_of = malloc((s->nsource ? s->nsource : 1) * sizeof *l->row_of);
    if (!l->sorder || !l->subrow || !l->firstsub || !l->nsubs || !l->row_of || table_alloc(&l->gt, ng) ||
        table_alloc(&l->st, ns))
        return fk_fail(err, FK_ENOMEM, "out of memory for the HDF5 catalogue of %" PRIu64 " groups", ng + ns);
    for (uint64_t r = 0; r < s->nsource; r++) l->row_of[r] = UINT64_MAX;
    for (uint64_t i = 0; i < cat->n; i++) {
        uint64_t r = cat->ids[i];
        if (r >= s->nsource)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: particle %" PRIu64 " has ID %" PRIu64 ", beyond the %" PRIu64
                           " of the source", i, r, s->nsource);
        if (l->row_of[r] != UINT64_MAX)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: ID %" PRIu64 " appears twice in the stream", r);
        l->row_of[r] = i;
    }
    /* Subhalo rows host by host (a counting sort by host), in the given order within. */
    for (uint64_t k = 0; k < ns; k++) {
        uint64_t h = cat->subs[k].host;
        if (h < 1 || h > ng)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: the subhalo of level %" PRIu64 " group %" PRIu64
                           " has host %" PRIu64 " of %" PRIu64, cat->subs[k].level, cat->subs[k].id, h, ng);
        l->nsubs[h - 1]++;
    }
    int64_t at = 0;
    for (uint64_t g = 0; g < ng; g++) {
        l->firstsub[g] = l->nsubs[g] ? at : -1;
        at += l->nsubs[g];
    }
    int64_t *next = malloc((ng ? ng : 1) * sizeof *next);
    if (!next) return fk_fail(err, FK_ENOMEM, "out of memory for the HDF5 catalogue of %" PRIu64 " groups", ng + ns);
    for (uint64_t g = 0; g < ng; g++) next[g] = l->firstsub[g];
    for (uint64_t k = 0; k < ns; k++) {
        uint64_t row = (uint64_t)next[cat->subs[k].host - 1]++;
        l->subrow[k] = row;
        l->sorder[row] = k;
    }
    free(next);
    int st = count_members(cat, l, err);
    if (st) return st;
    set_offsets(l);
    for (uint64_t g = 0; g < ng; g++) l->nids += (uint64_t)l->gt.len[g];
    return FK_OK;
}

/* Each run of rows (a Subhalo's members, a group's rest) sorted by the
 * members' keys, ties by ID (memberorder.h), the runs on every core. */
static int order_runs(const fk_halocat *cat, const layout *l, uint64_t *rows)
{
    const uint64_t nruns = l->ng + l->ns;
    uint64_t(*run)[2] = malloc((nruns ? nruns : 1) * sizeof *run);
    if (!run) return FK_ENOMEM;
    uint64_t at = 0, r = 0;
    for (uint64_t g = 0; g < l->ng; g++) {
        const uint64_t end = at + (uint64_t)l->gt.len[g];
        for (int64_t k = l->firstsub[g]; k >= 0 && k < l->firstsub[g] + l->nsubs[g]; k++) {
            run[r][0] = at, run[r++][1] = (uint64_t)l->st.len[k];
            at += (uint64_t)l->st.len[k];
        }
        run[r][0] = at, run[r++][1] = end - at;
        at = end;
    }
    int failed = 0;
#pragma omp parallel
    {
        void *scratch = NULL;
        uint64_t cap = 0;
#pragma omp for schedule(dynamic, 64)
        for (uint64_t q = 0; q < r; q++)
            if (fk_morder_sort(rows + run[q][0], run[q][1], cat->key, cat->ids, &scratch, &cap) != FK_OK) {
#pragma omp atomic write
                failed = 1;
            }
        free(scratch);
    }
    free(run);
    return failed ? FK_ENOMEM : FK_OK;
}

/* The stream rows in the group-ordered snapshot's order (layout's). */
static uint64_t *member_rows(const fk_halocat *cat, const layout *l)
{
    uint64_t ng = l->ng, ns = l->ns;
    uint64_t *rows = malloc((cat->n ? cat->n : 1) * sizeof *rows);
    uint64_t *gat = malloc((ng ? ng : 1) * sizeof *gat); /* next slot of each group's rest */
    uint64_t *sat = malloc((ns ? ns : 1) * sizeof *sat); /* next slot of each subhalo row  */
    if (!rows || !gat || !sat) {
        free(rows), free(gat), free(sat);
        return NULL;
    }
    uint64_t at = 0;
    for (uint64_t g = 0; g < ng; g++) {
        uint64_t start = at;
        for (int64_t k = l->firstsub[g]; k >= 0 && k < l->firstsub[g] + l->nsubs[g]; k++) {
            sat[k] = at;
            at += (uint64_t)l->st.len[k];
        }
        gat[g] = at;
        at = start + (uint64_t)l->gt.len[g];
    }
    uint64_t rest = at;
    for (uint64_t r = 0; r < cat->snap->nsource; r++) {
        uint64_t i = l->row_of[r];
        if (i == UINT64_MAX) continue;
        uint32_t g = cat->gid0[r], sg = cat->gsub ? cat->gsub[r] : 0;
        if (sg)
            rows[sat[l->subrow[sg - 1]]++] = i;
        else if (g)
            rows[gat[g - 1]++] = i;
        else
            rows[rest++] = i;
    }
    free(gat), free(sat);
    if (cat->key && order_runs(cat, l, rows) != FK_OK) free(rows), rows = NULL;
    return rows;
}

int fk_halocat_order(const fk_halocat *cat, uint64_t **order, uint64_t *nids, fk_error *err)
{
    *order = NULL;
    *nids = 0;
    layout l;
    int st = layout_build(cat, &l, err);
    if (!st && !(*order = member_rows(cat, &l)))
        st = fk_fail(err, FK_ENOMEM, "out of memory for the order of %" PRIu64 " particles", cat->n);
    if (!st) *nids = l.nids;
    layout_free(&l);
    return st;
}

#ifndef FK_HAVE_HDF5

int fk_halocat_hdf5_available(void)
{
    return 0;
}

int fk_halocat_hdf5(const fk_halocat *cat, void **image, size_t *size, fk_error *err)
{
    (void)cat;
    *image = NULL;
    *size = 0;
    return fk_fail(err, FK_EUNSUP, "this build has no HDF5 (install libhdf5-dev, then make config and rebuild)");
}

#else

#include "h5write.h"

int fk_halocat_hdf5_available(void)
{
    return 1;
}

/* The a_scaling of the catalogue's velocities: 0 (physical: the peculiar
 * velocity, and vmax, the dispersion) when the stream says it is comoving
 * and halostats made them physical, as Gadget-4's SUBFIND does
 * (subfind_properties.cc: Vel = fac_vel_to_phys v); else as the stream
 * holds them (a Gadget snapshot's sqrt(a) convention in a cosmological
 * run: 0.5). */
static double vel_a_scaling(const fk_halocat *cat)
{
    return cat->snap->comoving ? 0 : cat->meta->comoving ? 0.5 : 0;
}

/* The per-halo columns both tables share: Len, LenType, Mass, MassType,
 * OffsetType, Pos, CM, Vel; prefix "Group" or "Subhalo". halos[order[k]]
 * (order NULL: k) is row k. */
static void write_common(fk_h5w *w, hid_t loc, const char *prefix, const table *t, const fk_halo *halos,
                         const uint64_t *order, const fk_halocat *cat, double *scratch)
{
    const fk_snap *s = cat->snap;
    double lu = cat->units ? cat->units->length : 1, mu = cat->units ? cat->units->mass : 1;
    double vu = cat->units ? cat->units->velocity : 1;
    char name[64];
#define NAME(x) (snprintf(name, sizeof name, "%s%s", prefix, x), name)
#define ROW(k) (&halos[order ? order[k] : (k)])
    fk_h5_data(w, loc, NAME("Len"), H5T_NATIVE_INT64, t->rows, 1, t->len, FK_DIM_1);
    fk_h5_data(w, loc, NAME("LenType"), H5T_NATIVE_INT64, t->rows, NTYPES, t->lentype, FK_DIM_1);
    fk_h5_data(w, loc, NAME("OffsetType"), H5T_NATIVE_INT64, t->rows, NTYPES, t->offtype, FK_DIM_1);
    /* MassType: halostats' m_gas, m_dark, m_star (summed in ID order, as the text's) in Gadget's
     * types 0, 1 and 4 (halostats.h); LenType above: the members counted by type, which the offsets
     * index */
    for (uint64_t k = 0; k < t->rows; k++) {
        static const int gtype[3] = {0, 1, 4}; /* snap.h's gas, dark, star */
        for (int q = 0; q < NTYPES; q++) scratch[k * NTYPES + q] = 0;
        for (int q = 0; q < 3; q++) scratch[k * NTYPES + gtype[q]] = ROW(k)->m_type[q] * mu;
    }
    fk_h5_data(w, loc, NAME("MassType"), H5T_NATIVE_DOUBLE, t->rows, NTYPES, scratch, FK_DIM_MASS);
    /* fofkit's own: zoom-in contamination (halostats' n_contam, m_contam) */
    int64_t *iv = (int64_t *)(void *)scratch; /* malloc'd: of no declared type */
    for (uint64_t k = 0; k < t->rows; k++) iv[k] = (int64_t)ROW(k)->n_contam;
    fk_h5_data(w, loc, NAME("LenContam"), H5T_NATIVE_INT64, t->rows, 1, iv, FK_DIM_1);
    for (uint64_t k = 0; k < t->rows; k++) scratch[k] = ROW(k)->m_contam * mu;
    fk_h5_data(w, loc, NAME("MassContam"), H5T_NATIVE_DOUBLE, t->rows, 1, scratch, FK_DIM_MASS);
    for (uint64_t k = 0; k < t->rows; k++) scratch[k] = ROW(k)->mass * mu;
    fk_h5_data(w, loc, NAME("Mass"), H5T_NATIVE_DOUBLE, t->rows, 1, scratch, FK_DIM_MASS);
    for (uint64_t k = 0; k < t->rows; k++)
        for (int a = 0; a < 3; a++) scratch[3 * k + a] = (ROW(k)->xc[a] - s->origin) * lu;
    fk_h5_data(w, loc, NAME("Pos"), H5T_NATIVE_DOUBLE, t->rows, 3, scratch, FK_DIM_LENGTH);
    for (uint64_t k = 0; k < t->rows; k++)
        for (int a = 0; a < 3; a++) scratch[3 * k + a] = (ROW(k)->x[a] - s->origin) * lu;
    fk_h5_data(w, loc, NAME("CM"), H5T_NATIVE_DOUBLE, t->rows, 3, scratch, FK_DIM_LENGTH);
    for (uint64_t k = 0; k < t->rows; k++)
        for (int a = 0; a < 3; a++) scratch[3 * k + a] = ROW(k)->v[a] * vu;
    fk_h5_data_a(w, loc, NAME("Vel"), H5T_NATIVE_DOUBLE, t->rows, 3, scratch, FK_DIM_VELOCITY, vel_a_scaling(cat));
#undef ROW
#undef NAME
}

/* A NaN (not reached) as Gadget-4 writes it: 0. */
static double so_value(double v, double unit)
{
    return isnan(v) ? 0 : v * unit;
}

/* The Group-only columns: subhalo links, Ascale, SO masses and radii, bound parts. */
static void write_groups(fk_h5w *w, hid_t loc, const fk_halocat *cat, const layout *l, double *dscr, int64_t *iscr)
{
    const fk_halo *h = cat->groups;
    uint64_t ng = cat->ngroups;
    double lu = cat->units ? cat->units->length : 1, mu = cat->units ? cat->units->mass : 1;
    fk_h5_data(w, loc, "GroupFirstSub", H5T_NATIVE_INT64, ng, 1, l->firstsub, FK_DIM_1);
    fk_h5_data(w, loc, "GroupNsubs", H5T_NATIVE_INT64, ng, 1, l->nsubs, FK_DIM_1);
    for (uint64_t k = 0; k < ng; k++) dscr[k] = cat->snap->time;
    fk_h5_data(w, loc, "GroupAscale", H5T_NATIVE_DOUBLE, ng, 1, dscr, FK_DIM_1);
    if (cat->have_so) {
        static const char *names[8] = {"Group_M_Crit200", "Group_R_Crit200", "Group_M_Crit500", "Group_R_Crit500",
                                       "Group_M_Mean200", "Group_R_Mean200", "Group_M_TopHat200", "Group_R_TopHat200"};
        for (int q = 0; q < 8; q++) {
            int radius = q % 2;
            for (uint64_t k = 0; k < ng; k++) {
                const double v[8] = {h[k].m200c, h[k].r200c, h[k].m500c, h[k].r500c,
                                     h[k].m200m, h[k].r200m, h[k].mvir,  h[k].rvir};
                dscr[k] = so_value(v[q], radius ? lu : mu);
            }
            fk_h5_data(w, loc, names[q], H5T_NATIVE_DOUBLE, ng, 1, dscr, radius ? FK_DIM_LENGTH : FK_DIM_MASS);
        }
    }
    if (cat->have_bound) {
        for (uint64_t k = 0; k < ng; k++) iscr[k] = (int64_t)h[k].n_bound;
        fk_h5_data(w, loc, "GroupLenBound", H5T_NATIVE_INT64, ng, 1, iscr, FK_DIM_1);
        for (uint64_t k = 0; k < ng; k++) dscr[k] = h[k].mass_bound * mu;
        fk_h5_data(w, loc, "GroupMassBound", H5T_NATIVE_DOUBLE, ng, 1, dscr, FK_DIM_MASS);
    }
}

/* A particle's ID as the file gives it: its PID, else its original index. */
static int64_t file_id(const fk_halocat *cat, const layout *l, uint64_t r)
{
    uint64_t i = l->row_of[r];
    return (int64_t)(cat->pids && i != UINT64_MAX ? cat->pids[i] : r);
}

/* The Subhalo-only columns. */
static void write_subs(fk_h5w *w, hid_t loc, const fk_halocat *cat, const layout *l, double *dscr, int64_t *iscr)
{
    const fk_halo *h = cat->subs;
    const uint64_t *order = l->sorder;
    uint64_t ns = l->ns;
    double lu = cat->units ? cat->units->length : 1, vu = cat->units ? cat->units->velocity : 1;
    for (uint64_t k = 0; k < ns; k++) iscr[k] = (int64_t)h[order[k]].host - 1;
    fk_h5_data(w, loc, "SubhaloGroupNr", H5T_NATIVE_INT64, ns, 1, iscr, FK_DIM_1);
    fk_h5_data(w, loc, "SubhaloGrNr", H5T_NATIVE_INT64, ns, 1, iscr, FK_DIM_1);
    for (uint64_t k = 0; k < ns; k++) iscr[k] = (int64_t)h[order[k]].level;
    fk_h5_data(w, loc, "SubhaloFofLevel", H5T_NATIVE_INT64, ns, 1, iscr, FK_DIM_1);
    for (uint64_t k = 0; k < ns; k++) iscr[k] = (int64_t)h[order[k]].id;
    fk_h5_data(w, loc, "SubhaloFofID", H5T_NATIVE_INT64, ns, 1, iscr, FK_DIM_1);
    for (uint64_t k = 0; k < ns; k++)
        iscr[k] = (k && h[order[k]].host == h[order[k - 1]].host) ? iscr[k - 1] + 1 : 0;
    fk_h5_data(w, loc, "SubhaloRankInGr", H5T_NATIVE_INT64, ns, 1, iscr, FK_DIM_1);
    if (cat->have_mbp) {
        for (uint64_t k = 0; k < ns; k++) iscr[k] = file_id(cat, l, h[order[k]].mbp_id);
        fk_h5_data(w, loc, "SubhaloIDMostbound", H5T_NATIVE_INT64, ns, 1, iscr, FK_DIM_1);
    }
    for (uint64_t k = 0; k < ns; k++) dscr[k] = h[order[k]].sigma_v / sqrt(3.0) * vu;
    const double va = vel_a_scaling(cat);
    fk_h5_data_a(w, loc, "SubhaloVelDisp", H5T_NATIVE_DOUBLE, ns, 1, dscr, FK_DIM_VELOCITY, va);
    for (uint64_t k = 0; k < ns; k++) dscr[k] = h[order[k]].vmax * vu;
    fk_h5_data_a(w, loc, "SubhaloVmax", H5T_NATIVE_DOUBLE, ns, 1, dscr, FK_DIM_VELOCITY, va);
    /* Gadget-4's SubhaloVmaxRad and SubhaloHalfmassRad are physical radii
     * (subfind_properties.cc: rr_list[i].r from dx * fac_comov_to_phys): in
     * a comoving stream halostats' comoving radii times a, a_scaling 0 */
    const int comoving = cat->snap->comoving && cat->snap->time > 0;
    const double ra = comoving ? cat->snap->time : 1;
    for (uint64_t k = 0; k < ns; k++) dscr[k] = h[order[k]].r_vmax * ra * lu;
    if (comoving)
        fk_h5_data_a(w, loc, "SubhaloVmaxRad", H5T_NATIVE_DOUBLE, ns, 1, dscr, FK_DIM_LENGTH, 0);
    else
        fk_h5_data(w, loc, "SubhaloVmaxRad", H5T_NATIVE_DOUBLE, ns, 1, dscr, FK_DIM_LENGTH);
    for (uint64_t k = 0; k < ns; k++) dscr[k] = h[order[k]].r_half * ra * lu;
    if (comoving)
        fk_h5_data_a(w, loc, "SubhaloHalfmassRad", H5T_NATIVE_DOUBLE, ns, 1, dscr, FK_DIM_LENGTH, 0);
    else
        fk_h5_data(w, loc, "SubhaloHalfmassRad", H5T_NATIVE_DOUBLE, ns, 1, dscr, FK_DIM_LENGTH);
}

/* The Header group's attributes. */
static void write_header(fk_h5w *w, hid_t file, const fk_halocat *cat, const layout *l)
{
    const fk_snap *s = cat->snap;
    double lu = cat->units ? cat->units->length : 1;
    hid_t g = fk_h5_group(w, file, "Header");
    if (g < 0) return;
    fk_h5_attr_i64(w, g, "Ngroups_ThisFile", (int64_t)l->ng);
    fk_h5_attr_i64(w, g, "Ngroups_Total", (int64_t)l->ng);
    fk_h5_attr_i64(w, g, "Nsubhalos_ThisFile", (int64_t)l->ns);
    fk_h5_attr_i64(w, g, "Nsubhalos_Total", (int64_t)l->ns);
    fk_h5_attr_i64(w, g, "Nsubgroups_ThisFile", (int64_t)l->ns);
    fk_h5_attr_i64(w, g, "Nsubgroups_Total", (int64_t)l->ns);
    fk_h5_attr_i64(w, g, "Nids_ThisFile", (int64_t)l->nids);
    fk_h5_attr_i64(w, g, "Nids_Total", (int64_t)l->nids);
    fk_h5_attr_i32(w, g, "NumFiles", 1);
    fk_h5_attr_f64(w, g, "BoxSize", s->box * lu);
    fk_h5_attr_f64(w, g, "Time", s->time);
    fk_h5_attr_f64(w, g, "Redshift", cat->meta->redshift);
    fk_h5_header_cosmology(w, g);
    H5Gclose(g);
}

int fk_halocat_hdf5(const fk_halocat *cat, void **image, size_t *size, fk_error *err)
{
    *image = NULL;
    *size = 0;
    layout l;
    uint64_t *rows = NULL;
    double *dscr = NULL;
    int64_t *iscr = NULL;
    hid_t file = -1;
    int st = layout_build(cat, &l, err);
    if (st) goto done;
    uint64_t ng = l.ng, ns = l.ns, most = ng > ns ? ng : ns ? ns : 1;
    dscr = malloc(most * NTYPES * sizeof *dscr);
    iscr = malloc((most > l.nids ? most : l.nids) * sizeof *iscr);
    if (!dscr || !iscr || !(rows = member_rows(cat, &l))) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the HDF5 catalogue of %" PRIu64 " groups", ng + ns);
        goto done;
    }

    /* An HDF5 file in memory, so that the program writes it like any
     * output: atomically, or to a pipe. */
    fk_h5w w = {FK_OK, err, cat->meta};
    file = fk_h5_create(&w, NULL);
    if (!w.st) {
        write_header(&w, file, cat, &l);
        fk_h5_parameters(&w, file, cat->snap->box * (cat->units ? cat->units->length : 1));
        hid_t g = fk_h5_group(&w, file, "Group");
        if (g >= 0 && ng) {
            write_common(&w, g, "Group", &l.gt, cat->groups, NULL, cat, dscr);
            write_groups(&w, g, cat, &l, dscr, iscr);
        }
        if (g >= 0) H5Gclose(g);
        hid_t sg = fk_h5_group(&w, file, "Subhalo");
        if (sg >= 0 && ns) {
            write_common(&w, sg, "Subhalo", &l.st, cat->subs, l.sorder, cat, dscr);
            write_subs(&w, sg, cat, &l, dscr, iscr);
        }
        if (sg >= 0) H5Gclose(sg);
        hid_t ig = fk_h5_group(&w, file, "IDs");
        for (uint64_t k = 0; k < l.nids; k++) iscr[k] = file_id(cat, &l, cat->ids[rows[k]]);
        if (ig >= 0 && l.nids) fk_h5_data(&w, ig, "ID", H5T_NATIVE_INT64, l.nids, 1, iscr, FK_DIM_1);
        /* fofkit's: how each Subhalo's and group's run of IDs is ordered (halotree weighs by rank) */
        if (ig >= 0) fk_h5_attr_str(&w, ig, "MemberOrder", fk_morder_name(cat->key ? cat->order : FK_MORDER_ID));
        if (ig >= 0) H5Gclose(ig);
        fk_h5_image(&w, file, image, size);
    }
    st = w.st;
done:
    if (file >= 0) H5Fclose(file);
    layout_free(&l);
    free(rows), free(dscr), free(iscr);
    return st;
}

#endif
