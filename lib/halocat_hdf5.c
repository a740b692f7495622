/* halocat_hdf5.c - writes the halo catalogue as an in-memory HDF5 file in Gadget-4's fof_subhalo_tab layout. */
#include "halocat_hdf5.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

#include <hdf5.h>

#define NTYPES 6 /* Gadget's particle types */

int fk_halocat_hdf5_available(void)
{
    return 1;
}

/* Gadget's type of original index r: the source holds gas, dark, star in
 * that order (snap.h); Gadget's stars are type 4. */
static int gadget_type(const fk_snap *s, uint64_t r)
{
    if (r < s->nsource_type[FK_GAS]) return 0;
    if (r < s->nsource_type[FK_GAS] + s->nsource_type[FK_DARK]) return 1;
    return 4;
}

/* One table (Group or Subhalo) before it is written. */
typedef struct table {
    uint64_t rows;
    int64_t *len, *lentype, *offtype; /* rows, rows x 6, rows x 6 */
    double *masstype;                 /* rows x 6                 */
} table;

static int table_alloc(table *t, uint64_t rows)
{
    size_t r = rows ? rows : 1;
    t->rows = rows;
    t->len = calloc(r, sizeof *t->len);
    t->lentype = calloc(r * NTYPES, sizeof *t->lentype);
    t->offtype = calloc(r * NTYPES, sizeof *t->offtype);
    t->masstype = calloc(r * NTYPES, sizeof *t->masstype);
    return t->len && t->lentype && t->offtype && t->masstype ? FK_OK : FK_ENOMEM;
}

static void table_free(table *t)
{
    free(t->len), free(t->lentype), free(t->offtype), free(t->masstype);
}

/* HDF5 writing: every call checked, the first failure kept in st. */
typedef struct h5w {
    int st;
    fk_error *err;
} h5w;

static void h5_check(h5w *w, herr_t r, const char *what)
{
    if (r < 0 && w->st == FK_OK) w->st = fk_fail(w->err, FK_EIO, "HDF5 catalogue: libhdf5 failed to write %s", what);
}

/* Objects carry no modification times, so that the same catalogue gives the
 * same bytes whenever it is written. */
static hid_t untimed(hid_t cls)
{
    hid_t p = H5Pcreate(cls);
    if (p >= 0) H5Pset_obj_track_times(p, 0);
    return p;
}

static hid_t new_group(hid_t loc, const char *name)
{
    hid_t gcpl = untimed(H5P_GROUP_CREATE);
    hid_t g = gcpl < 0 ? -1 : H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    if (gcpl >= 0) H5Pclose(gcpl);
    return g;
}

/* A dataset of rows x cols (cols 1: one dimension) under loc. */
static void h5_data(h5w *w, hid_t loc, const char *name, hid_t type, uint64_t rows, int cols, const void *data)
{
    if (w->st) return;
    hsize_t dims[2] = {rows, (hsize_t)cols};
    hid_t sp = H5Screate_simple(cols > 1 ? 2 : 1, dims, NULL);
    hid_t dcpl = untimed(H5P_DATASET_CREATE);
    hid_t d = sp < 0 || dcpl < 0 ? -1 : H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dcpl >= 0) H5Pclose(dcpl);
    h5_check(w, d < 0 ? -1 : H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), name);
    if (d >= 0) H5Dclose(d);
    if (sp >= 0) H5Sclose(sp);
}

/* A scalar attribute of loc. */
static void h5_attr(h5w *w, hid_t loc, const char *name, hid_t type, const void *value)
{
    if (w->st) return;
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = sp < 0 ? -1 : H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    h5_check(w, a < 0 ? -1 : H5Awrite(a, type, value), name);
    if (a >= 0) H5Aclose(a);
    if (sp >= 0) H5Sclose(sp);
}

static void attr_i64(h5w *w, hid_t loc, const char *name, int64_t v)
{
    h5_attr(w, loc, name, H5T_NATIVE_INT64, &v);
}

static void attr_f64(h5w *w, hid_t loc, const char *name, double v)
{
    h5_attr(w, loc, name, H5T_NATIVE_DOUBLE, &v);
}

/* The per-halo columns both tables share: Len, LenType, Mass, MassType,
 * OffsetType, Pos, CM, Vel; prefix "Group" or "Subhalo". halos[order[k]]
 * is row k. */
static void write_common(h5w *w, hid_t loc, const char *prefix, const table *t, const fk_halo *halos,
                         const uint64_t *order, const fk_halocat *cat, double *scratch)
{
    const fk_snap *s = cat->snap;
    double lu = cat->units ? cat->units->length : 1, mu = cat->units ? cat->units->mass : 1;
    double vu = cat->units ? cat->units->velocity : 1;
    char name[64];
#define NAME(x) (snprintf(name, sizeof name, "%s%s", prefix, x), name)
    h5_data(w, loc, NAME("Len"), H5T_NATIVE_INT64, t->rows, 1, t->len);
    h5_data(w, loc, NAME("LenType"), H5T_NATIVE_INT64, t->rows, NTYPES, t->lentype);
    h5_data(w, loc, NAME("OffsetType"), H5T_NATIVE_INT64, t->rows, NTYPES, t->offtype);
    h5_data(w, loc, NAME("MassType"), H5T_NATIVE_DOUBLE, t->rows, NTYPES, t->masstype);
    for (uint64_t k = 0; k < t->rows; k++) scratch[k] = halos[order[k]].mass * mu;
    h5_data(w, loc, NAME("Mass"), H5T_NATIVE_DOUBLE, t->rows, 1, scratch);
    for (uint64_t k = 0; k < t->rows; k++)
        for (int a = 0; a < 3; a++) scratch[3 * k + a] = (halos[order[k]].xc[a] - s->origin) * lu;
    h5_data(w, loc, NAME("Pos"), H5T_NATIVE_DOUBLE, t->rows, 3, scratch);
    for (uint64_t k = 0; k < t->rows; k++)
        for (int a = 0; a < 3; a++) scratch[3 * k + a] = (halos[order[k]].x[a] - s->origin) * lu;
    h5_data(w, loc, NAME("CM"), H5T_NATIVE_DOUBLE, t->rows, 3, scratch);
    for (uint64_t k = 0; k < t->rows; k++)
        for (int a = 0; a < 3; a++) scratch[3 * k + a] = halos[order[k]].v[a] * vu;
    h5_data(w, loc, NAME("Vel"), H5T_NATIVE_DOUBLE, t->rows, 3, scratch);
#undef NAME
}

/* The Subhalo-only columns. */
static void write_subs(h5w *w, hid_t loc, const fk_halocat *cat, const uint64_t *order, double *dscr, int64_t *iscr)
{
    const fk_halo *h = cat->subs;
    uint64_t ns = cat->nsubs;
    double lu = cat->units ? cat->units->length : 1, vu = cat->units ? cat->units->velocity : 1;
    for (uint64_t k = 0; k < ns; k++) iscr[k] = (int64_t)h[order[k]].host - 1;
    h5_data(w, loc, "SubhaloGroupNr", H5T_NATIVE_INT64, ns, 1, iscr);
    h5_data(w, loc, "SubhaloGrNr", H5T_NATIVE_INT64, ns, 1, iscr);
    for (uint64_t k = 0; k < ns; k++) iscr[k] = (int64_t)h[order[k]].id;
    h5_data(w, loc, "SubhaloFofID", H5T_NATIVE_INT64, ns, 1, iscr);
    for (uint64_t k = 0; k < ns; k++)
        iscr[k] = (k && h[order[k]].host == h[order[k - 1]].host) ? iscr[k - 1] + 1 : 0;
    h5_data(w, loc, "SubhaloRankInGr", H5T_NATIVE_INT64, ns, 1, iscr);
    if (cat->have_mbp) {
        for (uint64_t k = 0; k < ns; k++) iscr[k] = (int64_t)h[order[k]].mbp_id;
        h5_data(w, loc, "SubhaloIDMostbound", H5T_NATIVE_INT64, ns, 1, iscr);
    }
    for (uint64_t k = 0; k < ns; k++) dscr[k] = h[order[k]].sigma_v / sqrt(3.0) * vu;
    h5_data(w, loc, "SubhaloVelDisp", H5T_NATIVE_DOUBLE, ns, 1, dscr);
    for (uint64_t k = 0; k < ns; k++) dscr[k] = h[order[k]].vmax * vu;
    h5_data(w, loc, "SubhaloVmax", H5T_NATIVE_DOUBLE, ns, 1, dscr);
    for (uint64_t k = 0; k < ns; k++) dscr[k] = h[order[k]].r_vmax * lu;
    h5_data(w, loc, "SubhaloVmaxRad", H5T_NATIVE_DOUBLE, ns, 1, dscr);
    for (uint64_t k = 0; k < ns; k++) dscr[k] = h[order[k]].r_half * lu;
    h5_data(w, loc, "SubhaloHalfmassRad", H5T_NATIVE_DOUBLE, ns, 1, dscr);
}

/* The Header group's attributes. */
static void write_header(h5w *w, hid_t file, const fk_halocat *cat, int64_t nids)
{
    const fk_snap *s = cat->snap;
    double lu = cat->units ? cat->units->length : 1;
    hid_t g = new_group(file, "Header");
    h5_check(w, g, "the Header group");
    if (g < 0) return;
    attr_i64(w, g, "Ngroups_ThisFile", (int64_t)cat->ngroups);
    attr_i64(w, g, "Ngroups_Total", (int64_t)cat->ngroups);
    attr_i64(w, g, "Nsubhalos_ThisFile", (int64_t)cat->nsubs);
    attr_i64(w, g, "Nsubhalos_Total", (int64_t)cat->nsubs);
    attr_i64(w, g, "Nsubgroups_ThisFile", (int64_t)cat->nsubs);
    attr_i64(w, g, "Nsubgroups_Total", (int64_t)cat->nsubs);
    attr_i64(w, g, "Nids_ThisFile", nids);
    attr_i64(w, g, "Nids_Total", nids);
    int32_t one = 1;
    h5_attr(w, g, "NumFiles", H5T_NATIVE_INT32, &one);
    attr_f64(w, g, "BoxSize", s->box * lu);
    attr_f64(w, g, "Time", s->time);
    /* a periodic box's time in (0, 1] is an expansion factor; anything else has no redshift */
    attr_f64(w, g, "Redshift", s->periodic && s->time > 0 && s->time <= 1 ? 1 / s->time - 1 : 0);
    attr_f64(w, g, "Omega0", 0);
    attr_f64(w, g, "OmegaLambda", 0);
    attr_f64(w, g, "HubbleParam", 1);
    H5Gclose(g);
}

/* Counts members by type into the tables (subhalo rows through subrow) and
 * checks them against the halos. */
static int count_members(const fk_halocat *cat, const uint64_t *subrow, table *gt, table *st, fk_error *err)
{
    const fk_snap *s = cat->snap;
    for (uint64_t i = 0; i < cat->n; i++) {
        uint64_t r = cat->ids[i];
        if (r >= s->nsource)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: particle %" PRIu64 " has ID %" PRIu64 ", beyond the %" PRIu64
                           " of the source", i, r, s->nsource);
        uint32_t g = cat->gid0[r], sg = cat->gid1 ? cat->gid1[r] : 0;
        int t = gadget_type(s, r);
        if (g > cat->ngroups)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: particle %" PRIu64 " is in group %" PRIu32 " of %" PRIu64, r,
                           g, cat->ngroups);
        if (sg > cat->nsubs)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: particle %" PRIu64 " is in level 1 group %" PRIu32
                           " of %" PRIu64, r, sg, cat->nsubs);
        if (g) {
            gt->len[g - 1]++;
            gt->lentype[(g - 1) * NTYPES + t]++;
            gt->masstype[(g - 1) * NTYPES + t] += cat->mass[i];
        }
        if (sg) {
            if (cat->subs[sg - 1].host != g)
                return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: particle %" PRIu64 " of level 1 group %" PRIu32
                               " lies in group %" PRIu32 ", not in its host %" PRIu64, r, sg, g, cat->subs[sg - 1].host);
            uint64_t k = subrow[sg - 1];
            st->len[k]++;
            st->lentype[k * NTYPES + t]++;
            st->masstype[k * NTYPES + t] += cat->mass[i];
        }
    }
    for (uint64_t g = 0; g < cat->ngroups; g++)
        if ((uint64_t)gt->len[g] != cat->groups[g].n)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: group %" PRIu64 " has %" PRId64 " members in the stream, not %"
                           PRIu64, g + 1, gt->len[g], cat->groups[g].n);
    for (uint64_t g = 0; g < cat->nsubs; g++)
        if ((uint64_t)st->len[subrow[g]] != cat->subs[g].n)
            return fk_fail(err, FK_EFORMAT, "HDF5 catalogue: level 1 group %" PRIu64 " has %" PRId64
                           " members in the stream, not %" PRIu64, g + 1, st->len[subrow[g]], cat->subs[g].n);
    return FK_OK;
}

/* Offsets in the group-ordered snapshot, type by type: groups one after
 * the other; in a group its subhalos (in row order), then the rest. */
static void set_offsets(const int64_t *firstsub, const int64_t *nsubs, table *gt, table *st)
{
    for (int t = 0; t < NTYPES; t++) {
        int64_t at = 0;
        for (uint64_t g = 0; g < gt->rows; g++) {
            gt->offtype[g * NTYPES + t] = at;
            int64_t sub_at = at;
            for (int64_t k = firstsub[g]; k >= 0 && k < firstsub[g] + nsubs[g]; k++) {
                st->offtype[k * NTYPES + t] = sub_at;
                sub_at += st->lentype[k * NTYPES + t];
            }
            at += gt->lentype[g * NTYPES + t];
        }
    }
}

/* IDs/ID: the members' original indices in the order of the offsets. */
static int64_t *member_ids(const fk_halocat *cat, const table *gt, const table *st, const int64_t *firstsub,
                           const int64_t *nsubs, const uint64_t *subrow, int64_t nids)
{
    uint64_t ng = cat->ngroups, ns = cat->nsubs;
    int64_t *ids = malloc(nids ? (size_t)nids * sizeof *ids : 1);
    int64_t *gat = malloc((ng ? ng : 1) * sizeof *gat); /* next slot of each group's rest */
    int64_t *sat = malloc((ns ? ns : 1) * sizeof *sat); /* next slot of each subhalo      */
    if (!ids || !gat || !sat) {
        free(ids), free(gat), free(sat);
        return NULL;
    }
    int64_t at = 0;
    for (uint64_t g = 0; g < ng; g++) {
        int64_t start = at;
        for (int64_t k = firstsub[g]; k >= 0 && k < firstsub[g] + nsubs[g]; k++) {
            sat[k] = at;
            at += st->len[k];
        }
        gat[g] = at;
        at = start + gt->len[g];
    }
    for (uint64_t r = 0; r < cat->snap->nsource; r++) {
        uint32_t g = cat->gid0[r], sg = cat->gid1 ? cat->gid1[r] : 0;
        if (sg)
            ids[sat[subrow[sg - 1]]++] = (int64_t)r;
        else if (g)
            ids[gat[g - 1]++] = (int64_t)r;
    }
    free(gat), free(sat);
    return ids;
}

int fk_halocat_hdf5(const fk_halocat *cat, void **image, size_t *size, fk_error *err)
{
    *image = NULL;
    *size = 0;
    uint64_t ng = cat->ngroups, ns = cat->gid1 ? cat->nsubs : 0;
    fk_halocat c = *cat;
    c.nsubs = ns;
    int st = FK_OK;
    table gt = {0}, stab = {0};
    uint64_t *gorder = malloc((ng ? ng : 1) * sizeof *gorder), *sorder = malloc((ns ? ns : 1) * sizeof *sorder);
    uint64_t *subrow = malloc((ns ? ns : 1) * sizeof *subrow);
    int64_t *firstsub = malloc((ng ? ng : 1) * sizeof *firstsub), *nsubs = calloc(ng ? ng : 1, sizeof *nsubs);
    double *dscr = malloc((ng > ns ? ng : ns ? ns : 1) * 3 * sizeof *dscr);
    int64_t *iscr = malloc((ng > ns ? ng : ns ? ns : 1) * sizeof *iscr);
    int64_t *ids = NULL;
    hid_t fapl = -1, file = -1;
    if (!gorder || !sorder || !subrow || !firstsub || !nsubs || !dscr || !iscr || table_alloc(&gt, ng) ||
        table_alloc(&stab, ns)) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the HDF5 catalogue of %" PRIu64 " groups", ng + ns);
        goto done;
    }
    /* Subhalo rows host by host (a counting sort by host), by id within. */
    for (uint64_t g = 0; g < ng; g++) gorder[g] = g;
    for (uint64_t k = 0; k < ns; k++) {
        uint64_t h = cat->subs[k].host;
        if (h < 1 || h > ng) {
            st = fk_fail(err, FK_EFORMAT, "HDF5 catalogue: level 1 group %" PRIu64 " has host %" PRIu64 " of %" PRIu64,
                         k + 1, h, ng);
            goto done;
        }
        nsubs[h - 1]++;
    }
    int64_t at = 0;
    for (uint64_t g = 0; g < ng; g++) {
        firstsub[g] = nsubs[g] ? at : -1;
        at += nsubs[g];
    }
    {
        int64_t *next = iscr; /* scratch: the next row of each host */
        for (uint64_t g = 0; g < ng; g++) next[g] = firstsub[g];
        for (uint64_t k = 0; k < ns; k++) {
            uint64_t row = (uint64_t)next[cat->subs[k].host - 1]++;
            subrow[k] = row;
            sorder[row] = k;
        }
    }
    if ((st = count_members(&c, subrow, &gt, &stab, err))) goto done;
    set_offsets(firstsub, nsubs, &gt, &stab);
    double mu = cat->units ? cat->units->mass : 1; /* the sums are in the stream's mass unit */
    for (uint64_t k = 0; k < ng * NTYPES; k++) gt.masstype[k] *= mu;
    for (uint64_t k = 0; k < ns * NTYPES; k++) stab.masstype[k] *= mu;
    int64_t nids = 0;
    for (uint64_t g = 0; g < ng; g++) nids += gt.len[g];
    if (!(ids = member_ids(&c, &gt, &stab, firstsub, nsubs, subrow, nids))) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the HDF5 catalogue's %" PRId64 " member IDs", nids);
        goto done;
    }

    /* An HDF5 file in memory (the core driver without a backing store),
     * so that the program writes it like any output: atomically, or to a
     * pipe. Error printing is off: failures come back as statuses. */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    h5w w = {FK_OK, err};
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    h5_check(&w, fapl < 0 ? -1 : H5Pset_fapl_core(fapl, 1 << 20, 0), "the file access list");
    if (!w.st) file = H5Fcreate("fofkit-halocat.hdf5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    h5_check(&w, file, "the file");
    if (!w.st) {
        write_header(&w, file, &c, nids);
        hid_t g = new_group(file, "Group");
        h5_check(&w, g, "the Group group");
        if (g >= 0 && ng) {
            write_common(&w, g, "Group", &gt, cat->groups, gorder, &c, dscr);
            h5_data(&w, g, "GroupFirstSub", H5T_NATIVE_INT64, ng, 1, firstsub);
            h5_data(&w, g, "GroupNsubs", H5T_NATIVE_INT64, ng, 1, nsubs);
            for (uint64_t k = 0; k < ng; k++) dscr[k] = cat->snap->time;
            h5_data(&w, g, "GroupAscale", H5T_NATIVE_DOUBLE, ng, 1, dscr);
        }
        if (g >= 0) H5Gclose(g);
        hid_t sg = new_group(file, "Subhalo");
        h5_check(&w, sg, "the Subhalo group");
        if (sg >= 0 && ns) {
            write_common(&w, sg, "Subhalo", &stab, cat->subs, sorder, &c, dscr);
            write_subs(&w, sg, &c, sorder, dscr, iscr);
        }
        if (sg >= 0) H5Gclose(sg);
        hid_t ig = new_group(file, "IDs");
        h5_check(&w, ig, "the IDs group");
        if (ig >= 0 && nids) h5_data(&w, ig, "ID", H5T_NATIVE_INT64, (uint64_t)nids, 1, ids);
        if (ig >= 0) H5Gclose(ig);
        h5_check(&w, H5Fflush(file, H5F_SCOPE_GLOBAL), "the file");
    }
    if (!w.st) {
        ssize_t len = H5Fget_file_image(file, NULL, 0);
        void *buf = len > 0 ? malloc((size_t)len) : NULL;
        if (len > 0 && !buf) {
            w.st = fk_fail(err, FK_ENOMEM, "out of memory for the HDF5 catalogue's %zd bytes", len);
        } else if (len <= 0 || H5Fget_file_image(file, buf, (size_t)len) != len) {
            free(buf);
            h5_check(&w, -1, "the file image");
        } else {
            *image = buf;
            *size = (size_t)len;
        }
    }
    st = w.st;
done:
    if (file >= 0) H5Fclose(file);
    if (fapl >= 0) H5Pclose(fapl);
    table_free(&gt), table_free(&stab);
    free(gorder), free(sorder), free(subrow), free(firstsub), free(nsubs), free(dscr), free(iscr), free(ids);
    return st;
}

#endif
