/* test_halocat.c - the HDF5 catalogue of a hand-made snapshot read back with libhdf5: counts, offsets, subhalo order, IDs; bad inputs; the build without HDF5. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "halocat_hdf5.h"

/*
 * Six particles of the source: original indices 0, 1 gas, 2, 3, 4 dark,
 * 5 star, in a shuffled stream order. Level 0: group 1 = {0, 2, 3, 5},
 * group 2 = {1, 4}. Level 1: group 1 = {1, 4} (host 2), group 2 = {2, 3}
 * (host 1), so the Subhalo rows, host by host, are level 1 groups 2, 1.
 */
static const uint64_t IDS[6] = {3, 0, 5, 1, 4, 2};     /* stream order */
static const float MASS[6] = {1, 10, 100, 20, 2, 4}; /* stream order: masses of IDs 3 0 5 1 4 2 */
static const uint32_t GID0[6] = {1, 2, 1, 1, 2, 1}; /* by original index */
static const uint32_t GID1[6] = {0, 1, 2, 2, 1, 0};
static const uint64_t PIDS[6] = {103, 100, 105, 101, 104, 102}; /* stream order: 100 + the original index */

static fk_snap snap(void)
{
    fk_snap s = {.n = 6, .nsource = 6, .ntype = {2, 3, 1}, .nsource_type = {2, 3, 1}, .time = 0.5, .box = 1,
                 .origin = -0.5, .periodic = 1};
    return s;
}

static void halos(fk_halo g[2], fk_halo sub[2])
{
    memset(g, 0, 2 * sizeof *g);
    memset(sub, 0, 2 * sizeof *sub);
    g[0] = (fk_halo){.id = 1, .n = 4, .mass = 115, .xc = {-0.25, 0, 0.25}, .x = {-0.5, 0.125, 0}, .v = {1, 2, 3},
                     .m200c = 5, .r200c = 0.1, .m500c = NAN, .r500c = NAN, .m200m = 6, .r200m = 0.2, .mvir = 7,
                     .rvir = 0.3, .n_bound = 3, .mass_bound = 105};
    g[1] = (fk_halo){.id = 2, .n = 2, .mass = 22, .xc = {0.25, 0.25, 0.25}, .v = {-1, 0, 0}, .m200c = NAN,
                     .r200c = NAN, .m500c = NAN, .r500c = NAN, .m200m = NAN, .r200m = NAN, .mvir = NAN, .rvir = NAN};
    sub[0] = (fk_halo){.level = 1, .host = 2, .id = 1, .n = 2, .mass = 22, .sigma_v = 3, .mbp_id = 4};
    sub[1] = (fk_halo){.level = 1, .host = 1, .id = 2, .n = 2, .mass = 3, .sigma_v = 6, .mbp_id = 2};
    /* the per-type masses halostats sums (gas, dark, star): the writer takes them as they are */
    const double mt[4][3] = {{10, 5, 100}, {20, 2, 0}, {20, 2, 0}, {0, 5, 0}};
    for (int q = 0; q < 3; q++)
        g[0].m_type[q] = mt[0][q], g[1].m_type[q] = mt[1][q], sub[0].m_type[q] = mt[2][q], sub[1].m_type[q] = mt[3][q];
}

#ifdef FK_HAVE_HDF5
#include <hdf5.h>

/* Reads a whole dataset of n elements of type into out; 0 on success. */
static int get(hid_t f, const char *path, hid_t type, void *out, size_t n)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0) return -1;
    hid_t sp = H5Dget_space(d);
    hssize_t have = H5Sget_simple_extent_npoints(sp);
    herr_t r = have == (hssize_t)n ? H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) : -1;
    H5Sclose(sp);
    H5Dclose(d);
    return r < 0 ? -1 : 0;
}

static int64_t attr_i64(hid_t f, const char *name)
{
    int64_t v = -99;
    hid_t g = H5Gopen2(f, "Header", H5P_DEFAULT);
    hid_t a = H5Aopen(g, name, H5P_DEFAULT);
    if (a >= 0) H5Aread(a, H5T_NATIVE_INT64, &v), H5Aclose(a);
    H5Gclose(g);
    return v;
}

/* A double attribute of the object at path (a group or a dataset); -99 when absent. */
static double attr_f64(hid_t f, const char *path, const char *name)
{
    double v = -99;
    hid_t o = H5Oopen(f, path, H5P_DEFAULT);
    hid_t a = o < 0 ? -1 : H5Aopen(o, name, H5P_DEFAULT);
    if (a >= 0) H5Aread(a, H5T_NATIVE_DOUBLE, &v), H5Aclose(a);
    if (o >= 0) H5Oclose(o);
    return v;
}

/* The catalogue of the hand-made snapshot, in length units of 10 and mass units of 2. */
static fk_halocat catalogue(const fk_snap *s, fk_halo *g, fk_halo *sub, const fk_halo_units *u, fk_gadget_meta *meta)
{
    fk_gadget_meta_init(meta, s, u, NULL);
    return (fk_halocat){.snap = s, .n = 6, .mass = MASS, .ids = IDS, .gid0 = GID0, .gsub = GID1, .groups = g,
                        .ngroups = 2, .subs = sub, .nsubs = 2, .have_mbp = 1, .units = u, .meta = meta};
}

/* The order of the group-ordered snapshot: group 1's subhalo (IDs 2, 3), its rest (0, 5), group 2's
 * subhalo (1, 4), as stream rows. */
static void order(void)
{
    fk_snap s = snap();
    fk_halo g[2], sub[2];
    halos(g, sub);
    fk_gadget_meta meta;
    fk_halocat cat = catalogue(&s, g, sub, NULL, &meta);
    uint64_t *rows, nids;
    fk_error err = {0};
    CHECK(fk_halocat_order(&cat, &rows, &nids, &err) == FK_OK);
    CHECK(nids == 6);
    const uint64_t want[6] = {5, 0, 1, 2, 3, 4};
    CHECK(memcmp(rows, want, sizeof want) == 0);
    free(rows);
}

static void read_back(void)
{
    fk_snap s = snap();
    fk_halo g[2], sub[2];
    halos(g, sub);
    fk_halo_units u = {10, 2, 1, "kpc", "m", "v"};
    fk_gadget_meta meta;
    fk_halocat cat = catalogue(&s, g, sub, &u, &meta);
    cat.pids = PIDS;
    cat.have_so = cat.have_bound = 1;
    fk_error err = {0};
    void *image;
    size_t size;
    int st = fk_halocat_hdf5(&cat, &image, &size, &err);
    CHECK_MSG(st == FK_OK, "%s", err.msg);
    if (st) return;
    CHECK(size > 8 && memcmp(image, "\x89HDF\r\n\x1a\n", 8) == 0);

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 1 << 16, 0);
    H5Pset_file_image(fapl, image, size);
    hid_t f = H5Fopen("image.hdf5", H5F_ACC_RDONLY, fapl);
    CHECK(f >= 0);
    if (f < 0) return;
    CHECK(attr_i64(f, "Ngroups_Total") == 2 && attr_i64(f, "Nsubhalos_Total") == 2);
    CHECK(attr_i64(f, "Nsubgroups_ThisFile") == 2 && attr_i64(f, "Nids_Total") == 6);
    int64_t len[2], lt[12], off[12], first[2], nsubs[2], snr[2], fid[2], rank[2], idl[6], mb[2];
    double mt[12], pos[6], vd[2];
    CHECK(get(f, "Group/GroupLen", H5T_NATIVE_INT64, len, 2) == 0 && len[0] == 4 && len[1] == 2);
    CHECK(get(f, "Group/GroupLenType", H5T_NATIVE_INT64, lt, 12) == 0);
    /* group 1: one gas (0), two dark (2, 3), one star (5) as Gadget's type 4 */
    CHECK(lt[0] == 1 && lt[1] == 2 && lt[2] == 0 && lt[4] == 1 && lt[6] == 1 && lt[7] == 1 && lt[10] == 0);
    CHECK(get(f, "Group/GroupMassType", H5T_NATIVE_DOUBLE, mt, 12) == 0);
    /* masses in mass units of 2: ID 0 has 10, 2 has 4, 3 has 1, 5 has 100 */
    CHECK(mt[0] == 20 && mt[1] == 10 && mt[4] == 200 && mt[6] == 40 && mt[7] == 4);
    CHECK(get(f, "Group/GroupOffsetType", H5T_NATIVE_INT64, off, 12) == 0);
    CHECK(off[0] == 0 && off[6] == 1 && off[1] == 0 && off[7] == 2 && off[4] == 0 && off[10] == 1);
    CHECK(get(f, "Group/GroupPos", H5T_NATIVE_DOUBLE, pos, 6) == 0);
    CHECK(pos[0] == 2.5 && pos[1] == 5 && pos[2] == 7.5 && pos[3] == 7.5); /* (xc + 0.5) * 10 */
    CHECK(get(f, "Group/GroupFirstSub", H5T_NATIVE_INT64, first, 2) == 0 && first[0] == 0 && first[1] == 1);
    CHECK(get(f, "Group/GroupNsubs", H5T_NATIVE_INT64, nsubs, 2) == 0 && nsubs[0] == 1 && nsubs[1] == 1);
    /* Subhalo rows host by host: level 1 group 2 (host 1) first */
    CHECK(get(f, "Subhalo/SubhaloGroupNr", H5T_NATIVE_INT64, snr, 2) == 0 && snr[0] == 0 && snr[1] == 1);
    CHECK(get(f, "Subhalo/SubhaloFofID", H5T_NATIVE_INT64, fid, 2) == 0 && fid[0] == 2 && fid[1] == 1);
    CHECK(get(f, "Subhalo/SubhaloRankInGr", H5T_NATIVE_INT64, rank, 2) == 0 && rank[0] == 0 && rank[1] == 0);
    /* the snapshot's own IDs: 100 + the original index */
    CHECK(get(f, "Subhalo/SubhaloIDMostbound", H5T_NATIVE_INT64, mb, 2) == 0 && mb[0] == 102 && mb[1] == 104);
    CHECK(get(f, "Subhalo/SubhaloVelDisp", H5T_NATIVE_DOUBLE, vd, 2) == 0 && vd[0] > 3.4641 && vd[0] < 3.4642);
    CHECK(get(f, "Subhalo/SubhaloOffsetType", H5T_NATIVE_INT64, off, 12) == 0);
    /* the dark members: group 1's subhalo at 0, group 2's at group 2's start, 2 */
    CHECK(off[1] == 0 && off[7] == 2 && off[6] == 1);
    /* IDs: group 1's subhalo {2, 3}, its rest {0, 5}; group 2's subhalo {1, 4}; as the snapshot's IDs */
    CHECK(get(f, "IDs/ID", H5T_NATIVE_INT64, idl, 6) == 0);
    CHECK(idl[0] == 102 && idl[1] == 103 && idl[2] == 100 && idl[3] == 105 && idl[4] == 101 && idl[5] == 104);
    /* SO masses and radii under Gadget-4's names, in the file's units; 0 where not reached */
    double so[2];
    CHECK(get(f, "Group/Group_M_Crit200", H5T_NATIVE_DOUBLE, so, 2) == 0 && so[0] == 10 && so[1] == 0);
    CHECK(get(f, "Group/Group_R_Crit200", H5T_NATIVE_DOUBLE, so, 2) == 0 && so[0] == 1 && so[1] == 0);
    CHECK(get(f, "Group/Group_M_Crit500", H5T_NATIVE_DOUBLE, so, 2) == 0 && so[0] == 0);
    CHECK(get(f, "Group/Group_M_TopHat200", H5T_NATIVE_DOUBLE, so, 2) == 0 && so[0] == 14);
    CHECK(get(f, "Group/Group_R_Mean200", H5T_NATIVE_DOUBLE, so, 2) == 0 && so[0] == 2);
    CHECK(get(f, "Group/GroupMassBound", H5T_NATIVE_DOUBLE, so, 2) == 0 && so[0] == 210 && so[1] == 0);
    /* units: Gadget's kpc/h, 1e10 Msun/h and km/s divided by the factors, where Gadget-4 writes them */
    CHECK(attr_f64(f, "Parameters", "UnitLength_in_cm") == 3.085678e21 / 10);
    CHECK(attr_f64(f, "Parameters", "UnitMass_in_g") == 1.989e43 / 2);
    CHECK(attr_f64(f, "Parameters", "UnitVelocity_in_cm_per_s") == 1e5);
    CHECK(attr_f64(f, "Group/GroupPos", "to_cgs") == 3.085678e21 / 10);
    CHECK(attr_f64(f, "Group/GroupPos", "a_scaling") == 1 && attr_f64(f, "Group/GroupPos", "h_scaling") == -1);
    CHECK(attr_f64(f, "Group/GroupVel", "a_scaling") == 0.5 && attr_f64(f, "Group/GroupVel", "h_scaling") == 0);
    CHECK(attr_f64(f, "Group/GroupMass", "mass_scaling") == 1 && attr_f64(f, "Group/GroupLen", "to_cgs") == -99);
    /* no cosmology in SNAP: h 1, Omega 0; the periodic box's time 0.5 is an expansion factor: z 1 */
    CHECK(attr_f64(f, "Header", "Redshift") == 1 && attr_f64(f, "Header", "HubbleParam") == 1);
    CHECK(attr_f64(f, "Header", "Omega0") == 0 && attr_f64(f, "Parameters", "ComovingIntegrationOn") == 1);
    H5Fclose(f);
    H5Pclose(fapl);
    free(image);
}

/* Expects the catalogue of cat to fail with FK_EFORMAT and want in the message. */
static void rejects(const fk_halocat *cat, const char *want)
{
    fk_error err = {0};
    void *image = (void *)1;
    size_t size = 1;
    int st = fk_halocat_hdf5(cat, &image, &size, &err);
    CHECK_MSG(st == FK_EFORMAT && strstr(err.msg, want), "wanted '%s', got %d '%s'", want, st, err.msg);
    CHECK(image == NULL && size == 0);
}

static void bad_inputs(void)
{
    fk_snap s = snap();
    fk_halo g[2], sub[2];
    halos(g, sub);
    fk_gadget_meta meta;
    fk_halocat cat = catalogue(&s, g, sub, NULL, &meta);
    g[0].n = 5;
    rejects(&cat, "group 1 has 4 members in the stream, not 5");
    g[0].n = 4;
    sub[1].host = 2; /* its members {2, 3} lie in group 1 */
    rejects(&cat, "particle 2 of the subhalo of level 1 group 2 lies in group 1, not in its host 2");
    sub[1].host = 3;
    rejects(&cat, "the subhalo of level 1 group 2 has host 3 of 2");
    sub[1].host = 1;
    uint32_t gid0[6];
    memcpy(gid0, GID0, sizeof gid0);
    gid0[4] = 3;
    cat.gid0 = gid0;
    rejects(&cat, "particle 4 is in group 3 of 2");
}

int main(void)
{
    CHECK(fk_halocat_hdf5_available() == 1);
    order();
    read_back();
    bad_inputs();
    CHECK_DONE();
}

#else

int main(void)
{
    fk_snap s = snap();
    fk_halo g[2], sub[2];
    halos(g, sub);
    fk_gadget_meta meta;
    fk_gadget_meta_init(&meta, &s, NULL, NULL);
    fk_halocat cat = {.snap = &s, .n = 6, .mass = MASS, .ids = IDS, .gid0 = GID0, .gsub = GID1, .groups = g,
                      .ngroups = 2, .subs = sub, .nsubs = 2, .have_mbp = 1, .meta = &meta};
    fk_error err = {0};
    void *image = (void *)1;
    size_t size = 1;
    CHECK(fk_halocat_hdf5_available() == 0);
    CHECK(fk_halocat_hdf5(&cat, &image, &size, &err) == FK_EUNSUP && image == NULL && size == 0);
    CHECK(strstr(err.msg, "this build has no HDF5") != NULL);
    CHECK_DONE();
}

#endif
