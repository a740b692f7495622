/* tree_cat.c - a Gadget-4 style HDF5 halo catalogue read for the merger trees: halos, properties in Consistent-Trees' units, members' IDs. */
#include "tree_cat.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sniff.h"
#include "snapunits.h"

void fk_treecat_free(fk_treecat *c)
{
    free(c->len), free(c->first), free(c->pid), free(c->mass), free(c->pos), free(c->vel), free(c->vmax);
    free(c->mvir), free(c->rvir), free(c->m200c), free(c->m200m), free(c->m500c), free(c->ids);
    memset(c, 0, sizeof *c);
}

/* The first place of share part of n places in nparts shares. */
static uint64_t share_at(uint64_t n, int part, int nparts)
{
    return (uint64_t)((unsigned __int128)n * (unsigned)part / (unsigned)nparts);
}

void fk_treecat_keep_part(fk_treecat *c, int part, int nparts)
{
    const uint64_t lo = share_at(c->nids, part, nparts), hi = share_at(c->nids, part + 1, nparts);
    if (c->ids && lo) memmove(c->ids, c->ids + lo, (hi - lo) * sizeof *c->ids);
    if (c->ids && hi > lo) {
        int64_t *k = realloc(c->ids, (hi - lo) * sizeof *c->ids);
        if (k) c->ids = k;
    }
    c->ids_at += lo;
    c->nids = hi - lo;
}

#ifndef FK_HAVE_HDF5

int fk_treecat_available(void)
{
    return 0;
}

int fk_treecat_read_part(fk_treecat *c, const char *name, int kind, int part, int nparts, fk_error *err)
{
    (void)part, (void)nparts;
    return fk_treecat_read(c, name, kind, err);
}

int fk_treecat_read(fk_treecat *c, const char *name, int kind, fk_error *err)
{
    (void)kind;
    memset(c, 0, sizeof *c);
    return fk_fail(err, FK_EUNSUP, "%s: this build has no HDF5 to read catalogues with (install libhdf5-dev, then make "
                   "config and rebuild)", name);
}

#else

#include <hdf5.h>

int fk_treecat_available(void)
{
    return 1;
}

#define MPC_CM (1e3 * FK_KPC_CM)

/* How a quantity converts: one file unit in cgs, times a^a_scaling h^h_scaling. */
typedef struct scaling {
    double to_cgs, a, h;
} scaling;

/* The default unit of a dataset without unit attributes: Gadget-4's
 * internal units from Parameters (or kpc/h, 1e10 Msun/h, km/s). */
typedef struct units {
    double length_cm, mass_g, velocity_cm_s;
    int comoving;
} units;

enum { Q_LENGTH, Q_MASS, Q_VELOCITY };

/* The files of a catalogue: one, or Gadget-4's NAME.0.hdf5 .. NAME.(n-1).hdf5,
 * each holding rows[k][t] rows of table t (0 Group, 1 Subhalo, 2 IDs), read
 * one after the other. */
typedef struct src {
    int n;
    hid_t *f;
    uint64_t (*rows)[3];
} src;

static int table_of(const char *path)
{
    return !strncmp(path, "/Group/", 7) ? 0 : !strncmp(path, "/Subhalo/", 9) ? 1 : 2;
}

static int link_exists(hid_t f, const char *path)
{
    /* every component must exist before H5Lexists may be asked about the next */
    char buf[128];
    for (const char *p = strchr(path + 1, '/');; p = strchr(p + 1, '/')) {
        size_t n = p ? (size_t)(p - path) : strlen(path);
        if (n >= sizeof buf) return 0;
        memcpy(buf, path, n);
        buf[n] = 0;
        if (H5Lexists(f, buf, H5P_DEFAULT) <= 0) return 0;
        if (!p) return 1;
    }
}

/* Whether path exists in one of the files. */
static int src_exists(const src *S, const char *path)
{
    for (int k = 0; k < S->n; k++)
        if (link_exists(S->f[k], path)) return 1;
    return 0;
}

/* An optional scalar attribute of obj; returns 1 when read into *v. */
static int attr_dbl(hid_t obj, const char *attr, double *v)
{
    if (H5Aexists(obj, attr) <= 0) return 0;
    hid_t a = H5Aopen(obj, attr, H5P_DEFAULT);
    if (a < 0) return 0;
    hid_t sp = H5Aget_space(a);
    int ok = sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1 && H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0;
    if (sp >= 0) H5Sclose(sp);
    H5Aclose(a);
    return ok;
}

/* An optional string attribute of the object at path into buf (size
 * bytes, NUL-terminated); returns 1 when read. */
static int attr_str(hid_t f, const char *path, const char *attr, char *buf, size_t size)
{
    buf[0] = 0;
    if (!link_exists(f, path)) return 0;
    hid_t o = H5Oopen(f, path, H5P_DEFAULT);
    if (o < 0) return 0;
    int ok = 0;
    if (H5Aexists(o, attr) > 0) {
        hid_t a = H5Aopen(o, attr, H5P_DEFAULT), t = a < 0 ? -1 : H5Aget_type(a);
        if (t >= 0 && H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t) && H5Tget_size(t) < size) {
            hid_t m = H5Tcopy(t);
            ok = m >= 0 && H5Tset_size(m, size) >= 0 && H5Tset_strpad(m, H5T_STR_NULLTERM) >= 0 &&
                 H5Aread(a, m, buf) >= 0;
            if (m >= 0) H5Tclose(m);
        }
        if (t >= 0) H5Tclose(t);
        if (a >= 0) H5Aclose(a);
    }
    H5Oclose(o);
    buf[size - 1] = 0;
    return ok;
}

static int attr_of(hid_t f, const char *grp, const char *attr, double *v)
{
    if (!link_exists(f, grp)) return 0;
    hid_t g = H5Oopen(f, grp, H5P_DEFAULT);
    if (g < 0) return 0;
    int ok = attr_dbl(g, attr, v);
    H5Oclose(g);
    return ok;
}

/* Reads dataset path (rows x cols, converted to double or int64 by mem)
 * into a new array *out, file after file (each file's part its rows of the
 * path's table; a file without rows may lack it); rows must be as given.
 * absent_ok: a missing dataset leaves *out NULL. The unit attributes (the
 * first file's) go into *sc when asked. */
static int read_data(const src *S, const char *name, const char *path, hid_t mem, uint64_t rows, int cols,
                     int absent_ok, void **out, scaling *sc, fk_error *err)
{
    *out = NULL;
    if (!src_exists(S, path)) {
        if (absent_ok || rows == 0) return FK_OK; /* a table without rows holds no datasets */
        return fk_fail(err, FK_EFORMAT, "%s: no dataset %s (not a halo catalogue with members: halostats --format=hdf5 "
                       "writes one)", name, path);
    }
    const int t = table_of(path);
    size_t bytes = (size_t)(rows ? rows : 1) * (size_t)cols * 8;
    if (!(*out = malloc(bytes))) return fk_fail(err, FK_ENOMEM, "out of memory for %s of %s", path, name);
    uint64_t at = 0;
    int st = FK_OK, scaled = 0;
    for (int k = 0; k < S->n && !st; k++) {
        const uint64_t rk = S->n == 1 ? rows : S->rows[k][t];
        if (rk == 0 && (S->n > 1 || !link_exists(S->f[k], path))) continue;
        if (!link_exists(S->f[k], path)) {
            st = fk_fail(err, FK_EFORMAT, "%s: no dataset %s in file %d, which holds %" PRIu64 " of its rows", name, path, k,
                         rk);
            break;
        }
        hid_t d = H5Dopen2(S->f[k], path, H5P_DEFAULT);
        hid_t sp = d < 0 ? -1 : H5Dget_space(d);
        hsize_t dims[2] = {0, 0};
        int nd = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
        if (nd >= 1 && nd <= 2) H5Sget_simple_extent_dims(sp, dims, NULL);
        if (nd < 1 || nd > 2 || dims[0] != rk || (nd == 1 ? 1 : (int)dims[1]) != cols || at + rk > rows)
            st = fk_fail(err, FK_EFORMAT, "%s: dataset %s has the wrong shape (%" PRIu64 " x %d expected%s)", name, path,
                         rk, cols, S->n > 1 ? " in that file" : "");
        if (!st && rk && H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, (char *)*out + at * (uint64_t)cols * 8) < 0)
            st = fk_fail(err, FK_EFORMAT, "%s: dataset %s cannot be read as numbers", name, path);
        if (!st && sc && !scaled) {
            double v;
            if (attr_dbl(d, "to_cgs", &v) && v > 0) sc->to_cgs = v;
            if (attr_dbl(d, "a_scaling", &v)) sc->a = v;
            if (attr_dbl(d, "h_scaling", &v)) sc->h = v;
            scaled = 1;
        }
        at += rk;
        if (sp >= 0) H5Sclose(sp);
        if (d >= 0) H5Dclose(d);
    }
    if (!st && at != rows)
        st = fk_fail(err, FK_EFORMAT, "%s: the files hold %" PRIu64 " rows of %s, the header says %" PRIu64, name, at, path,
                     rows);
    if (st) free(*out), *out = NULL;
    return st;
}

/* A dataset of a quantity read and converted: lengths to Mpc/h (radii:
 * kpc/h) comoving, masses to Msun/h, velocities to km/s physical. */
static int read_quantity(const src *f, const char *name, const char *path, int q, int kpc, const units *u, fk_treecat *c,
                         uint64_t rows, int cols, int absent_ok, double **out, fk_error *err)
{
    scaling sc;
    if (q == Q_LENGTH) sc = (scaling){u->length_cm, u->comoving ? 1 : 0, -1};
    else if (q == Q_MASS) sc = (scaling){u->mass_g, 0, -1};
    else sc = (scaling){u->velocity_cm_s, u->comoving ? 0.5 : 0, 0};
    int st = read_data(f, name, path, H5T_NATIVE_DOUBLE, rows, cols, absent_ok, (void **)out, &sc, err);
    if (st || !*out) return st;
    const double a = c->time > 0 ? c->time : 1, h = c->hubble > 0 ? c->hubble : 1;
    double k;
    if (q == Q_LENGTH) /* comoving: the a of a_scaling left out; per h: times h */
        k = sc.to_cgs * pow(h, sc.h) * h / (kpc ? FK_KPC_CM : MPC_CM);
    else if (q == Q_MASS)
        k = sc.to_cgs * pow(h, sc.h) * h / FK_MSUN_G;
    else
        k = sc.to_cgs * pow(a, sc.a) * pow(h, sc.h) / 1e5;
    for (uint64_t i = 0; i < rows * (uint64_t)cols; i++) (*out)[i] *= k;
    if (q == Q_LENGTH && !kpc) c->pos_unit = k;
    return FK_OK;
}

static int read_header(hid_t f, const char *name, fk_treecat *c, units *u, uint64_t *ng, uint64_t *ns, fk_error *err)
{
    double v;
    if (!link_exists(f, "/Header") || !attr_of(f, "/Header", "Ngroups_Total", &v))
        return fk_fail(err, FK_EFORMAT, "%s: not a halo catalogue (no Header/Ngroups_Total: halostats --format=hdf5 "
                       "writes one)", name);
    *ng = (uint64_t)v;
    double nsd = 0;
    if (!attr_of(f, "/Header", "Nsubhalos_Total", &nsd)) attr_of(f, "/Header", "Nsubgroups_Total", &nsd);
    *ns = (uint64_t)nsd;
    if (!attr_of(f, "/Header", "Time", &c->time))
        return fk_fail(err, FK_EFORMAT, "%s: no Header/Time (the expansion factor orders the snapshots)", name);
    if (!attr_of(f, "/Header", "Redshift", &c->redshift)) c->redshift = c->time > 0 ? 1 / c->time - 1 : 0;
    c->hubble = 1;
    if (!attr_of(f, "/Header", "HubbleParam", &c->hubble)) attr_of(f, "/Parameters", "HubbleParam", &c->hubble);
    if (!attr_of(f, "/Header", "Omega0", &c->omega0)) attr_of(f, "/Parameters", "Omega0", &c->omega0);
    if (!attr_of(f, "/Header", "OmegaLambda", &c->omega_lambda)) attr_of(f, "/Parameters", "OmegaLambda", &c->omega_lambda);
    *u = (units){FK_KPC_CM, 1e10 * FK_MSUN_G, 1e5, 1};
    attr_of(f, "/Parameters", "UnitLength_in_cm", &u->length_cm);
    attr_of(f, "/Parameters", "UnitMass_in_g", &u->mass_g);
    attr_of(f, "/Parameters", "UnitVelocity_in_cm_per_s", &u->velocity_cm_s);
    if (attr_of(f, "/Parameters", "ComovingIntegrationOn", &v)) u->comoving = v != 0;
    double box = 0;
    attr_of(f, "/Header", "BoxSize", &box);
    c->box = box * u->length_cm / MPC_CM; /* Gadget's BoxSize is in the length unit, per h */
    c->pos_unit = u->length_cm / MPC_CM;  /* the positions' the same (their attributes may say otherwise) */
    return FK_OK;
}

static int alloc_halos(fk_treecat *c, const char *name, fk_error *err)
{
    size_t n = c->nhalo ? c->nhalo : 1;
    c->len = calloc(n, sizeof *c->len);
    c->first = calloc(n, sizeof *c->first);
    c->pid = malloc(n * sizeof *c->pid);
    c->vmax = calloc(n, sizeof *c->vmax);
    if (!c->len || !c->first || !c->pid || !c->vmax) return fk_fail(err, FK_ENOMEM, "out of memory for the halos of %s", name);
    for (uint64_t h = 0; h < c->nhalo; h++) c->pid[h] = -1;
    return FK_OK;
}

/* The groups' member counts, first subhalos and offsets (the IDs run
 * group by group) into gfirst (ng + 1 entries: the last is the total). */
static int group_offsets(const int64_t *glen, uint64_t ng, uint64_t nids, uint64_t *gfirst, const char *name,
                         fk_error *err)
{
    uint64_t at = 0;
    for (uint64_t g = 0; g < ng; g++) {
        if (glen[g] < 0) return fk_fail(err, FK_EFORMAT, "%s: group %" PRIu64 " has %" PRId64 " members", name, g, glen[g]);
        gfirst[g] = at;
        at += (uint64_t)glen[g];
    }
    gfirst[ng] = at;
    if (at != nids)
        return fk_fail(err, FK_EFORMAT, "%s: the groups hold %" PRIu64 " members but IDs/ID has %" PRIu64, name, at, nids);
    return FK_OK;
}

/* IDs/ID's places [lo, hi) of its n, file after file, into a new *out. */
static int read_ids_share(const src *S, const char *name, uint64_t n, uint64_t lo, uint64_t hi, int64_t **out,
                          fk_error *err)
{
    if (!(*out = malloc((hi > lo ? hi - lo : 1) * sizeof **out)))
        return fk_fail(err, FK_ENOMEM, "out of memory for the IDs of %s", name);
    uint64_t off = 0;
    int st = FK_OK;
    for (int k = 0; k < S->n && !st && off < hi; k++) {
        const uint64_t rk = S->n == 1 ? n : S->rows[k][2], a = off > lo ? off : lo, b = off + rk < hi ? off + rk : hi;
        if (a < b) {
            hid_t d = H5Dopen2(S->f[k], "/IDs/ID", H5P_DEFAULT);
            hid_t fs = d < 0 ? -1 : H5Dget_space(d);
            hsize_t start = a - off, count = b - a, dim = 0;
            int ok = fs >= 0 && H5Sget_simple_extent_ndims(fs) == 1 && H5Sget_simple_extent_dims(fs, &dim, NULL) == 1 &&
                     dim == rk;
            hid_t ms = ok ? H5Screate_simple(1, &count, NULL) : -1;
            ok = ok && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) >= 0 &&
                 H5Dread(d, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, *out + (a - lo)) >= 0;
            if (!ok) /* read_data's words */
                st = fk_fail(err, FK_EFORMAT, "%s: dataset /IDs/ID cannot be read as numbers", name);
            if (ms >= 0) H5Sclose(ms);
            if (fs >= 0) H5Sclose(fs);
            if (d >= 0) H5Dclose(d);
        }
        off += rk;
    }
    if (st) free(*out), *out = NULL;
    return st;
}

/* The members' IDs (the share part of nparts of them) into c; *total: the
 * members of IDs/ID. */
static int read_members(const src *S, const char *name, fk_treecat *c, uint64_t need, int part, int nparts,
                        uint64_t *total, fk_error *err)
{
    c->nids = 0;
    *total = 0;
    if (!src_exists(S, "/IDs/ID")) {
        if (need == 0) return FK_OK;
        return fk_fail(err, FK_EFORMAT, "%s: the catalogue has no members' IDs (IDs/ID; halostats --format=hdf5 writes "
                       "them)", name);
    }
    uint64_t n = 0;
    if (S->n == 1) { /* a single file: the dataset's length */
        hid_t d = H5Dopen2(S->f[0], "/IDs/ID", H5P_DEFAULT);
        hid_t sp = d < 0 ? -1 : H5Dget_space(d);
        hsize_t dim = 0;
        int ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1;
        if (ok) H5Sget_simple_extent_dims(sp, &dim, NULL);
        if (sp >= 0) H5Sclose(sp);
        if (d >= 0) H5Dclose(d);
        if (!ok) return fk_fail(err, FK_EFORMAT, "%s: IDs/ID is not a list", name);
        n = dim;
    } else {
        for (int k = 0; k < S->n; k++) n += S->rows[k][2];
    }
    *total = n;
    if (nparts > 1) {
        const uint64_t lo = share_at(n, part, nparts), hi = share_at(n, part + 1, nparts);
        int st = read_ids_share(S, name, n, lo, hi, &c->ids, err);
        if (!st) c->nids = hi - lo, c->ids_at = lo;
        return st;
    }
    int st = read_data(S, name, "/IDs/ID", H5T_NATIVE_INT64, n, 1, 0, (void **)&c->ids, NULL, err);
    if (!st) c->nids = n;
    return st;
}

/* The groups as the halos. */
static int read_groups(const src *f, const char *name, fk_treecat *c, const units *u, uint64_t ng, uint64_t ns,
                       const int64_t *glen, const uint64_t *gfirst, fk_error *err)
{
    c->nhalo = ng;
    int st = alloc_halos(c, name, err);
    for (uint64_t g = 0; g < ng && !st; g++) c->len[g] = (uint64_t)glen[g], c->first[g] = gfirst[g];
    if (!st) st = read_quantity(f, name, "/Group/GroupMass", Q_MASS, 0, u, c, ng, 1, 0, &c->mass, err);
    if (!st) st = read_quantity(f, name, "/Group/GroupPos", Q_LENGTH, 0, u, c, ng, 3, 0, &c->pos, err);
    if (!st) st = read_quantity(f, name, "/Group/GroupVel", Q_VELOCITY, 0, u, c, ng, 3, 0, &c->vel, err);
    if (!st) st = read_quantity(f, name, "/Group/Group_M_TopHat200", Q_MASS, 0, u, c, ng, 1, 1, &c->mvir, err);
    if (!st) st = read_quantity(f, name, "/Group/Group_R_TopHat200", Q_LENGTH, 1, u, c, ng, 1, 1, &c->rvir, err);
    if (!st) st = read_quantity(f, name, "/Group/Group_M_Crit200", Q_MASS, 0, u, c, ng, 1, 1, &c->m200c, err);
    if (!st) st = read_quantity(f, name, "/Group/Group_M_Mean200", Q_MASS, 0, u, c, ng, 1, 1, &c->m200m, err);
    if (!st) st = read_quantity(f, name, "/Group/Group_M_Crit500", Q_MASS, 0, u, c, ng, 1, 1, &c->m500c, err);
    if (st) return st;
    c->have_so = c->mvir != NULL;
    /* a group's vmax: its first subhalo's (the main one), when there are subhalos */
    if (ns && ng && src_exists(f, "/Group/GroupFirstSub") && src_exists(f, "/Subhalo/SubhaloVmax")) {
        int64_t *fs;
        double *vm;
        if ((st = read_data(f, name, "/Group/GroupFirstSub", H5T_NATIVE_INT64, ng, 1, 0, (void **)&fs, NULL, err)))
            return st;
        st = read_quantity(f, name, "/Subhalo/SubhaloVmax", Q_VELOCITY, 0, u, c, ns, 1, 0, &vm, err);
        for (uint64_t g = 0; g < ng && !st; g++)
            if (fs[g] >= 0 && (uint64_t)fs[g] < ns) c->vmax[g] = vm[fs[g]];
        free(fs);
        if (!st) free(vm);
    }
    return st;
}

/* The subhalos as the halos: their members lie at the start of their
 * group's, subhalo after subhalo. */
static int read_subhalos(const src *f, const char *name, fk_treecat *c, const units *u, uint64_t ng, uint64_t ns,
                         const int64_t *glen, const uint64_t *gfirst, fk_error *err)
{
    c->nhalo = ns;
    int64_t *slen = NULL, *sgr = NULL;
    int st = alloc_halos(c, name, err);
    if (!st) st = read_data(f, name, "/Subhalo/SubhaloLen", H5T_NATIVE_INT64, ns, 1, 0, (void **)&slen, NULL, err);
    if (!st) {
        const char *gn = src_exists(f, "/Subhalo/SubhaloGroupNr") ? "/Subhalo/SubhaloGroupNr" : "/Subhalo/SubhaloGrNr";
        st = read_data(f, name, gn, H5T_NATIVE_INT64, ns, 1, 0, (void **)&sgr, NULL, err);
    }
    uint64_t *at = st ? NULL : malloc((ng ? ng : 1) * sizeof *at);
    if (!st && !at) st = fk_fail(err, FK_ENOMEM, "out of memory for the subhalos of %s", name);
    for (uint64_t g = 0; g < ng && !st; g++) at[g] = gfirst[g];
    int64_t main_of = -1, last = -1;
    for (uint64_t k = 0; k < ns && !st; k++) {
        int64_t g = sgr[k];
        if (g < 0 || (uint64_t)g >= ng || g < last || slen[k] < 0)
            st = fk_fail(err, FK_EFORMAT, "%s: subhalo %" PRIu64 " lies in group %" PRId64 " of %" PRIu64
                         " (the subhalos must come group by group)", name, k, g, ng);
        else if (at[g] + (uint64_t)slen[k] > gfirst[g] + (uint64_t)glen[g])
            st = fk_fail(err, FK_EFORMAT, "%s: the subhalos of group %" PRId64 " hold more members than it", name, g);
        if (st) break;
        if (g != last) main_of = (int64_t)k, last = g;
        c->len[k] = (uint64_t)slen[k];
        c->first[k] = at[g];
        at[g] += (uint64_t)slen[k];
        c->pid[k] = main_of == (int64_t)k ? -1 : main_of;
    }
    free(at), free(slen), free(sgr);
    if (!st) st = read_quantity(f, name, "/Subhalo/SubhaloMass", Q_MASS, 0, u, c, ns, 1, 0, &c->mass, err);
    if (!st) st = read_quantity(f, name, "/Subhalo/SubhaloPos", Q_LENGTH, 0, u, c, ns, 3, 0, &c->pos, err);
    if (!st) st = read_quantity(f, name, "/Subhalo/SubhaloVel", Q_VELOCITY, 0, u, c, ns, 3, 0, &c->vel, err);
    double *vm = NULL;
    if (!st) st = read_quantity(f, name, "/Subhalo/SubhaloVmax", Q_VELOCITY, 0, u, c, ns, 1, 1, &vm, err);
    if (vm) free(c->vmax), c->vmax = vm;
    return st;
}

/* A file that HDF5 cannot open: cut short when it holds fewer bytes than its
 * superblock says it has ("FILE: truncated: ..."), else what (the message). */
static int open_failed(const char *file, const char *what, int code, fk_error *err)
{
    unsigned char head[64];
    size_t got = 0;
    uint64_t size = 0;
    FILE *fp = fopen(file, "rb");
    if (fp) {
        got = fread(head, 1, sizeof head, fp);
        if (!fseek(fp, 0, SEEK_END)) {
            long at = ftell(fp);
            size = at > 0 ? (uint64_t)at : 0;
        }
        fclose(fp);
    }
    const uint64_t eof = fk_hdf5_superblock_eof(head, got);
    if (eof > size)
        return fk_fail(err, FK_EFORMAT, "%s: truncated: the file holds %" PRIu64 " of the %" PRIu64
                       " bytes its HDF5 superblock gives", file, size, eof);
    return fk_fail(err, code, "%s", what);
}

/* The name of file k of a catalogue whose first file is name (NAME.0.hdf5
 * or NAME.0.h5), into buf; 0 when name is not so named. */
static int file_name(const char *name, int k, char *buf, size_t size)
{
    size_t n = strlen(name);
    const char *ext = n > 7 && !strcmp(name + n - 7, ".0.hdf5") ? ".hdf5" : n > 5 && !strcmp(name + n - 5, ".0.h5") ? ".h5" : NULL;
    if (!ext) return 0;
    size_t stem = n - strlen(ext) - 2;
    return snprintf(buf, size, "%.*s.%d%s", (int)stem, name, k, ext) < (int)size;
}

/* Opens the files of the catalogue name (file 0 already open as f0) into S:
 * Header/NumFiles of them, NAME.0.hdf5 .. NAME.(n-1).hdf5, each with its
 * rows (Ngroups_ThisFile, Nsubhalos_ThisFile, Nids_ThisFile). */
static int open_files(const char *name, hid_t f0, src *S, fk_error *err)
{
    double v = 1;
    attr_of(f0, "/Header", "NumFiles", &v);
    if (!(v >= 1 && v <= 1e6)) return fk_fail(err, FK_EFORMAT, "%s: Header/NumFiles is %g", name, v);
    const int n = (int)v;
    hid_t *f = malloc((size_t)n * sizeof *f);
    uint64_t(*rows)[3] = calloc((size_t)n, sizeof *rows);
    if (!f || !rows) {
        free(f), free(rows);
        return fk_fail(err, FK_ENOMEM, "out of memory");
    }
    f[0] = f0;
    *S = (src){1, f, rows};
    if (n == 1) return FK_OK;
    char buf[4096];
    if (!file_name(name, 0, buf, sizeof buf))
        return fk_fail(err, FK_EFORMAT, "%s: a catalogue split over %d files (NumFiles): name its first file, "
                       "NAME.0.hdf5", name, n);
    for (int k = 0; k < n; k++) {
        if (k > 0) {
            file_name(name, k, buf, sizeof buf);
            if (H5Fis_hdf5(buf) <= 0 || (f[k] = H5Fopen(buf, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
                char what[9000];
                snprintf(what, sizeof what, "%s: cannot open file %d of the %d of %s", buf, k, n, name);
                return open_failed(buf, what, FK_EIO, err);
            }
            S->n = k + 1;
        }
        double g = 0, sh = 0, ids = 0;
        attr_of(f[k], "/Header", "Ngroups_ThisFile", &g);
        if (!attr_of(f[k], "/Header", "Nsubhalos_ThisFile", &sh)) attr_of(f[k], "/Header", "Nsubgroups_ThisFile", &sh);
        attr_of(f[k], "/Header", "Nids_ThisFile", &ids);
        rows[k][0] = (uint64_t)g, rows[k][1] = (uint64_t)sh, rows[k][2] = (uint64_t)ids;
    }
    return FK_OK;
}

int fk_treecat_read(fk_treecat *c, const char *name, int kind, fk_error *err)
{
    return fk_treecat_read_part(c, name, kind, 0, 1, err);
}

int fk_treecat_read_part(fk_treecat *c, const char *name, int kind, int part, int nparts, fk_error *err)
{
    memset(c, 0, sizeof *c);
    /* the library reports through fk_error only: HDF5's own error printing off */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    FILE *probe = fopen(name, "rb");
    if (!probe) return fk_fail(err, FK_EIO, "%s: cannot open: %s", name, strerror(errno));
    fclose(probe);
    if (H5Fis_hdf5(name) <= 0) return fk_fail(err, FK_EFORMAT, "%s: not an HDF5 file (halostats --format=hdf5 writes the catalogues)", name);
    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        char what[4200];
        snprintf(what, sizeof what, "%s: HDF5 file cannot be opened", name);
        return open_failed(name, what, FK_EFORMAT, err);
    }
    src S = {1, &f, NULL};
    units u;
    uint64_t ng = 0, ns = 0, *gfirst = NULL;
    int64_t *glen = NULL;
    int st = read_header(f, name, c, &u, &ng, &ns, err);
    if (!st) st = open_files(name, f, &S, err);
    /* SUBFIND's subhalos, not halostats' (which writes SubhaloFofLevel): only subhalos tell */
    if (!st) c->subfind = ns > 0 && !src_exists(&S, "/Subhalo/SubhaloFofLevel");
    /* halostats' members most bound first (IDs/MemberOrder, memberorder.h) */
    char order[32];
    if (!st && attr_str(f, "/IDs", "MemberOrder", order, sizeof order))
        c->ordered = !strcmp(order, "binding_energy") || !strcmp(order, "radius");
    uint64_t nids = 0;
    if (!st) st = read_members(&S, name, c, ng, part, nparts, &nids, err);
    if (!st) st = read_data(&S, name, "/Group/GroupLen", H5T_NATIVE_INT64, ng, 1, ng == 0, (void **)&glen, NULL, err);
    if (!st && !(gfirst = malloc((ng + 1) * sizeof *gfirst)))
        st = fk_fail(err, FK_ENOMEM, "out of memory for the groups of %s", name);
    if (!st) st = group_offsets(glen, ng, nids, gfirst, name, err);
    if (!st && kind == FK_TREE_SUBHALOS && ns == 0 && ng > 0 && !src_exists(&S, "/Subhalo"))
        st = fk_fail(err, FK_EFORMAT, "%s: the catalogue has no subhalos (halostats --unbind or a second level writes "
                     "them)", name);
    if (!st)
        st = kind == FK_TREE_SUBHALOS ? read_subhalos(&S, name, c, &u, ng, ns, glen, gfirst, err)
                                      : read_groups(&S, name, c, &u, ng, ns, glen, gfirst, err);
    /* Without SO masses, mvir is the halo's own mass (FoF or bound). */
    if (!st && !c->mvir) {
        if (!(c->mvir = malloc((c->nhalo ? c->nhalo : 1) * sizeof *c->mvir)))
            st = fk_fail(err, FK_ENOMEM, "out of memory for the halos of %s", name);
        for (uint64_t h = 0; h < c->nhalo && !st; h++) c->mvir[h] = c->mass[h];
    }
    free(glen), free(gfirst);
    for (int k = 0; k < S.n; k++) H5Fclose(S.f[k]);
    if (S.f != &f) free(S.f), free(S.rows);
    return st;
}

#endif
