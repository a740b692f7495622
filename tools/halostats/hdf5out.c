/* hdf5out.c - halostats --format=hdf5: the subhalos, the Gadget-4 style catalogue (lib/halocat_hdf5) and the group-ordered snapshot (lib/halosnap_hdf5). */
#include "hdf5out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "halocat_hdf5.h"
#include "halosnap_hdf5.h"
#include "memberorder.h"
#include "subhalos.h"

int hdf5_check(void)
{
    if (!fk_halocat_hdf5_available())
        prog_die(EXIT_DATA, "--format=hdf5: this build has no HDF5 (install libhdf5-dev, then make config and rebuild)");
    return 1;
}

/* The units and cosmology the file states (halocat_hdf5.h): the stream's,
 * and --so's cosmology when it ran. */
static void meta_of(const fk_snap *snap, const options *o, fk_gadget_meta *meta)
{
    const hs_masses *m = &o->m;
    const fk_cosmo so = {m->omega_m, m->omega_l, m->a, 0};
    fk_gadget_meta_init(meta, snap, &o->units, m->so ? &so : NULL);
}

/* The members' keys (memberorder.h) of the catalogue's runs into a new
 * *key (NULL with centres of mass: by ID): in their subhalos (energies when
 * phi gives the subhalos' potentials, else radii) or their groups (radii).
 * Returns the order. Exits when out of memory. */
static int member_keys(const options *o, uint64_t n, const float *pos, const float *vel, const float *mass,
                       const uint64_t *ids, const fk_snap *snap, const uint32_t *gid0, const uint32_t *gsub,
                       const fk_halo *groups, const fk_halo *subs, const double *phi, double **key)
{
    *key = NULL;
    if (o->centre != FK_CENTRE_MBP || !pos) return FK_MORDER_ID;
    if (!(*key = malloc((n ? n : 1) * sizeof **key)))
        prog_die(EXIT_RESOURCE, "out of memory for the order of %" PRIu64 " particles", n);
    fk_halo_input hin = {n, pos, vel, mass, ids, NULL, snap->periodic, snap->box, snap->origin,
                         o->comoving, o->vscale, o->hflow, NULL, 0};
    fk_morder_keys(&hin, gid0, gsub, groups, subs, phi, *key);
    return phi ? FK_MORDER_ENERGY : FK_MORDER_RADIUS;
}

int hdf5_image(const fk_snap *snap, const float *pos, const float *mass, const uint64_t *ids, const uint64_t *pids,
               const uint32_t *gid0, const uint32_t *gid1, fk_halo *const *halos, const uint64_t *ng, const options *o,
               void **image, size_t *size, fk_error *err)
{
    fk_gadget_meta meta;
    meta_of(snap, o, &meta);
    double *key;
    const int order = member_keys(o, snap->n, pos, NULL, mass, ids, snap, gid0, gid1, halos[0], gid1 ? halos[1] : NULL,
                                  NULL, &key);
    fk_halocat cat = {.snap = snap, .n = snap->n, .mass = mass, .ids = ids, .pids = pids, .gid0 = gid0, .gsub = gid1,
                      .groups = halos[0], .ngroups = ng[0], .subs = gid1 ? halos[1] : NULL, .nsubs = gid1 ? ng[1] : 0,
                      .have_mbp = o->centre == FK_CENTRE_MBP, .have_so = o->m.so, .have_bound = o->m.unbind,
                      .units = &o->units, .meta = &meta, .key = key, .order = order};
    int st = fk_halocat_hdf5(&cat, image, size, err);
    free(key);
    return st;
}

/* The subhalos of --unbind (subhalos.h) into *gsub and *subs, their
 * properties measured as halostats measures a level's groups (on the CPU,
 * whatever the device: so the members' potentials, kept in phi when
 * given, n by stream index, are the same from every device). */
static uint64_t bound_subhalos(const input *in, const options *o, fk_halo *const *halos, const uint64_t *ng,
                               uint32_t **gsub, fk_halo **subs, double *phi)
{
    fk_error err = {0};
    const int two = in->nlevels > 1;
    fk_subhalo_in sin = {in->snap.nsource, in->lv[0].gid, o->m.bgid[0], two ? in->lv[1].gid : NULL,
                         two ? o->m.bgid[1] : NULL, halos[0], two ? halos[1] : NULL, ng[0], two ? ng[1] : 0,
                         o->centre == FK_CENTRE_MBP};
    uint64_t ns, n = in->snap.n;
    fk_halo *rows;
    if (!(*gsub = malloc((in->snap.nsource ? in->snap.nsource : 1) * sizeof **gsub)))
        prog_die(EXIT_RESOURCE, "out of memory for %" PRIu64 " particles", in->snap.nsource);
    if (fk_subhalos_bound(&sin, *gsub, &rows, &ns, &err)) prog_fail(&err);
    uint32_t *grp = malloc((n ? n : 1) * sizeof *grp);
    fk_halo *h = malloc((ns ? ns : 1) * sizeof *h);
    if (!grp || !h) prog_die(EXIT_RESOURCE, "out of memory for %" PRIu64 " subhalos", ns);
    for (uint64_t i = 0; i < n; i++) grp[i] = (*gsub)[in->ids[i]];
    fk_halo_input hin = {n,            in->pos,         in->vel,     in->mass,  in->ids,  grp, in->snap.periodic,
                         in->snap.box, in->snap.origin, o->comoving, o->vscale, o->hflow, in->type, in->m_hires};
    if (fk_halostats_compute(&hin, ns, h, in->name, &err) ||
        fk_halostats_centres_phi(&hin, ns, o->centre, &o->pot, NULL, h, NULL, phi, &err))
        prog_fail(&err);
    for (uint64_t k = 0; k < ns; k++) h[k].level = rows[k].level, h[k].id = rows[k].id, h[k].host = rows[k].host;
    free(rows), free(grp);
    *subs = h;
    return ns;
}

void hdf5_write(fk_output *out, fk_output *snap, const input *in, const options *o, fk_halo *const *halos,
                const uint64_t *ng)
{
    uint32_t *gsub = NULL;
    fk_halo *subs = NULL;
    double *phi = NULL; /* the bound subhalos' potentials: their members by binding energy */
    uint64_t ns = 0;
    if (bound_subhalos_asked(o)) {
        if (o->centre == FK_CENTRE_MBP && !(phi = malloc((in->snap.n ? in->snap.n : 1) * sizeof *phi)))
            prog_die(EXIT_RESOURCE, "out of memory for the potentials of %" PRIu64 " particles", in->snap.n);
        ns = bound_subhalos(in, o, halos, ng, &gsub, &subs, phi);
        prog_info("HDF5: %" PRIu64 " subhalos: the bound groups' main subhalos and their level 1 groups' bound parts", ns);
    } else if (in->nlevels > 1) {
        ns = ng[1];
    }
    const hs_masses *m = &o->m;
    fk_gadget_meta meta;
    meta_of(&in->snap, o, &meta);
    const uint32_t *gs = gsub ? gsub : in->nlevels > 1 ? in->lv[1].gid : NULL;
    const fk_halo *sh = subs ? subs : in->nlevels > 1 ? halos[1] : NULL;
    double *key;
    double t_key = prog_now();
    const int order = member_keys(o, in->snap.n, in->pos, in->vel, in->mass, in->ids, &in->snap, in->lv[0].gid, gs,
                                  halos[0], sh, phi, &key);
    t_key = prog_now() - t_key;
    fk_halocat cat = {.snap = &in->snap, .n = in->snap.n, .mass = in->mass, .ids = in->ids, .pids = in->pids,
                      .gid0 = in->lv[0].gid, .gsub = gs, .groups = halos[0], .ngroups = ng[0], .subs = sh,
                      .nsubs = ns, .have_mbp = o->centre == FK_CENTRE_MBP, .have_so = m->so, .have_bound = m->unbind,
                      .units = &o->units, .meta = &meta, .key = key, .order = order};
    prog_info("HDF5: each subhalo's and group's members %s first (IDs/MemberOrder %s)",
              order == FK_MORDER_ENERGY ? "most bound" : order == FK_MORDER_RADIUS ? "nearest the most bound member"
                                                                                    : "lowest ID",
              fk_morder_name(order));
    fk_error err = {0};
    if (snap && (fk_halosnap_hdf5(&cat, in->pos, in->vel, fk_output_target(snap), &err) ||
                 fk_output_commit(snap, &err)))
        prog_fail(&err);
    void *image;
    size_t size;
    const double t = prog_now();
    if (fk_halocat_hdf5(&cat, &image, &size, &err)) prog_fail(&err);
    prog_info("HDF5: the catalogue made in %.3f s (the members' keys before it %.3f s)", prog_now() - t, t_key);
    if (fwrite(image, 1, size, fk_output_file(out)) != size) {
        fk_write_failed(&err, fk_output_name(out), NULL, errno);
        prog_fail(&err);
    }
    free(image), free(gsub), free(subs), free(phi), free(key);
}
