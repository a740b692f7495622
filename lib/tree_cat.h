/* tree_cat.h - one snapshot's halo catalogue as the merger trees need it: halos, their properties and their members' IDs. */
#ifndef FK_TREE_CAT_H
#define FK_TREE_CAT_H

#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What is read from a Gadget-4 style fof_subhalo_tab HDF5 file (the
 * layout halostats --format=hdf5 writes, halocat_hdf5.h; Gadget-4's own
 * SUBFIND files), or from the NumFiles files NAME.0.hdf5 .. NAME.(n-1).hdf5
 * of one catalogue (named by the first), their tables read one file after
 * the other (Ngroups_ThisFile, Nsubhalos_ThisFile, Nids_ThisFile rows each):
 *
 *   Header: Time, Redshift, BoxSize, HubbleParam, Omega0, OmegaLambda,
 *           Ngroups_Total, Nsubhalos_Total (or Nsubgroups_Total), NumFiles
 *   Group/GroupLen, GroupMass, GroupPos, GroupVel, GroupFirstSub, GroupNsubs,
 *           Group_M_TopHat200, _R_TopHat200, _M_Crit200, _M_Mean200,
 *           _M_Crit500 (optional: halostats --so)
 *   Subhalo/SubhaloLen, SubhaloMass, SubhaloPos, SubhaloVel, SubhaloGrNr
 *           (or SubhaloGroupNr), SubhaloVmax, SubhaloRankInGr
 *   IDs/ID  the members, group by group; in a group its subhalos' members
 *           first, subhalo after subhalo in row order
 *
 * The halos are the Groups, or with FK_TREE_SUBHALOS the Subhalos. Halo h's
 * members are ids[first[h] .. first[h] + len[h] - 1], in the file's order:
 * in a SUBFIND catalogue most bound first (the binding rank the descendant
 * score weights), in halostats' as its attribute IDs/MemberOrder says
 * ("binding_energy", "radius": most bound first, memberorder.h; "id" or
 * none, older files: by snapshot index). Values are converted with
 * each dataset's unit attributes (to_cgs, a_scaling, h_scaling; Gadget-4's
 * defaults when absent) into Consistent-Trees' units: masses Msun/h,
 * positions Mpc/h comoving, radii kpc/h comoving, velocities km/s physical
 * (peculiar).
 */

enum { FK_TREE_GROUPS = 0, FK_TREE_SUBHALOS = 1 };

typedef struct fk_treecat {
    double time, redshift;                /* expansion factor a, z                    */
    double box;                           /* Mpc/h comoving                           */
    double hubble, omega0, omega_lambda;  /* h, Omega_m, Omega_Lambda                 */
    int subfind;                          /* SUBFIND's: subhalos without SubhaloFofLevel (members
                                             most bound first); 0 also when it has no subhalos */
    int have_so;                          /* Group_M_TopHat200 etc. were there        */
    uint64_t nhalo;
    uint64_t *len, *first;                /* nhalo: members, first member in ids      */
    int64_t *pid;                         /* nhalo: row of the halo this one lies in (subhalos:
                                             the main subhalo of its group), -1 none  */
    double *mass;                         /* nhalo: GroupMass / SubhaloMass           */
    double *pos, *vel;                    /* nhalo x 3                                */
    double pos_unit;                      /* Mpc/h (pos's unit) per unit of the file's positions */
    int ranked;                           /* members reordered by distance (tree_rank.h) */
    int ordered;                          /* halostats listed each halo's members most bound first:
                                             IDs/MemberOrder "binding_energy" or "radius"
                                             (memberorder.h); 0 "id" or absent */
    double *vmax;                         /* nhalo (groups: their main subhalo's, else 0) */
    double *mvir, *rvir, *m200c, *m200m, *m500c; /* nhalo; mvir = mass without SO     */
    uint64_t nids;
    int64_t *ids;                         /* the members' particle IDs                */
    uint64_t ids_at;                      /* ids[0]'s place in IDs/ID: 0, or the first of a share
                                             (fk_treecat_read_part): ids holds IDs/ID[ids_at ..
                                             ids_at + nids - 1], halo h's members those of its
                                             places first[h] .. first[h] + len[h] - 1 in there */
} fk_treecat;

/* Whether this build reads HDF5 catalogues (it was built with libhdf5). */
int fk_treecat_available(void);

/* Reads the catalogue in file name (and the files after it when it is the
 * first of several; kind: FK_TREE_GROUPS or FK_TREE_SUBHALOS) into *c;
 * fk_treecat_free frees it, also after a failure. FK_EIO when a file cannot
 * be opened; FK_EFORMAT naming the file and what is wrong with it (not a
 * catalogue, several files named otherwise than by the first, members
 * without IDs/ID, lengths that do not add up); FK_ENOMEM; FK_EUNSUP in a
 * build without HDF5. */
int fk_treecat_read(fk_treecat *c, const char *name, int kind, fk_error *err);

/* fk_treecat_read with only a share of the members' IDs read: the IDs/ID
 * places [N part / nparts, N (part + 1) / nparts) of its N (c->ids_at the
 * first; every halo and property read whole): an MPI rank's share. */
int fk_treecat_read_part(fk_treecat *c, const char *name, int kind, int part, int nparts, fk_error *err);

/* Keeps only that share of a catalogue read whole (its halos' members in
 * their order, as tree_rank left them): the share moved to the front, the
 * rest given back; c->ids_at set. Can't fail. */
void fk_treecat_keep_part(fk_treecat *c, int part, int nparts);

/* Frees what fk_treecat_read allocated (c zeroed). Can't fail. */
void fk_treecat_free(fk_treecat *c);

#ifdef __cplusplus
}
#endif

#endif
