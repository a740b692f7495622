/* halocat_hdf5.h - the halo catalogue as an HDF5 file in the layout of Gadget-4's fof_subhalo_tab files. */
#ifndef FK_HALOCAT_HDF5_H
#define FK_HALOCAT_HDF5_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "halostats.h"
#include "snap.h"
#include "so.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Layout, so that readers of Gadget-4 group catalogues (yt's gadget_fof
 * frontend, pynbody's Gadget4SubfindHDFCatalogue) open it and read the
 * true values: Gadget-4's names, units and conventions. Level 0 groups are
 * the Groups. The Subhalos are what the caller gives (halostats: the level
 * 1 groups; with --unbind each bound group's main subhalo and the bound
 * parts of its level 1 groups, see subhalos.h); a particle lies in one
 * Subhalo at most, inside that Subhalo's Group, and a Group's Subhalos are
 * rows FirstSub .. FirstSub + Nsubs - 1, as the readers assume. Rows are
 * 0-based: Group row g-1 is fofkit group g of level 0. Subhalo rows come
 * host by host, in the order given within a host. Particle types are
 * Gadget's: 0 gas, 1 dark, 4 star.
 *
 *   PATH                         TYPE        SHAPE    CONTENT
 *   Header (attributes)
 *     Ngroups_ThisFile/_Total    int64                level 0 groups
 *     Nsubhalos_ThisFile/_Total  int64                Subhalo rows (Gadget-4's name)
 *     Nsubgroups_ThisFile/_Total int64                the same (Gadget-3's and Arepo's name, yt's)
 *     Nids_ThisFile/_Total       int64                rows of IDs/ID: the level 0 members
 *     NumFiles                   int32                1
 *     BoxSize, Time, Redshift    float64              the box side; SNAP's time; the redshift (meta)
 *     HubbleParam, Omega0, OmegaLambda  float64       the cosmology (meta; yt reads them here)
 *   Parameters (attributes)      where Gadget-4 keeps them (h5write.h): UnitLength_in_cm,
 *                                UnitMass_in_g, UnitVelocity_in_cm_per_s, HubbleParam, Omega0,
 *                                OmegaLambda, Hubble, ComovingIntegrationOn, BoxSize
 *   Group/GroupLen               int64       ng       members
 *   Group/GroupLenType           int64       ng x 6   members by particle type
 *   Group/GroupMass              float64     ng       mass
 *   Group/GroupMassType          float64     ng x 6   mass by type: halostats' m_gas, m_dark, m_star
 *                                                     (summed in stream order) as types 0, 1, 4
 *   Group/GroupLenContam         int64       ng       fofkit's: n_contam, the zoom-in contaminants
 *   Group/GroupMassContam        float64     ng       fofkit's: m_contam, their mass
 *   Group/GroupOffsetType        int64       ng x 6   first member in the group-ordered snapshot (below)
 *   Group/GroupPos               float64     ng x 3   the centre (halostats' xc: most bound member or
 *                                                     centre of mass), from the box's lower corner
 *   Group/GroupCM                float64     ng x 3   the centre of mass, from the box's lower corner
 *   Group/GroupVel               float64     ng x 3   the mass-weighted mean velocity
 *   Group/GroupAscale            float64     ng       Time
 *   Group/GroupFirstSub          int64       ng       first Subhalo row of the group, -1 for none
 *   Group/GroupNsubs             int64       ng       its Subhalos
 *   Group/Group_M_Crit200, _R_Crit200, _M_Crit500, _R_Crit500, _M_Mean200, _R_Mean200,
 *         _M_TopHat200, _R_TopHat200   float64   ng   with have_so: m200c r200c m500c r500c m200m
 *                                                     r200m mvir rvir (TopHat: Bryan & Norman's
 *                                                     Delta_vir, as Gadget-4's); 0: not reached
 *   Group/GroupLenBound, GroupMassBound  int64, float64  ng   with have_bound: n_bound, mass_bound
 *                                                     (fofkit's; the group's self-bound part)
 *   Subhalo/SubhaloLen, LenType, Mass, MassType, OffsetType, Pos, CM, Vel, LenContam,
 *         MassContam             as for Group
 *   Subhalo/SubhaloGroupNr       int64       ns       Group row of the host (Gadget-4's name)
 *   Subhalo/SubhaloGrNr          int64       ns       the same (Gadget-3's and Arepo's name, yt's)
 *   Subhalo/SubhaloRankInGr      int64       ns       rank among its host's Subhalos
 *   Subhalo/SubhaloFofLevel      int64       ns       fofkit's level of what it is: 0 a main subhalo
 *                                                     (the bound part of its Group), 1 a level 1 group
 *   Subhalo/SubhaloFofID         int64       ns       that group's fofkit id at that level
 *   Subhalo/SubhaloVelDisp       float64     ns       sigma_v / sqrt(3): the 1D dispersion
 *   Subhalo/SubhaloVmax, SubhaloVmaxRad, SubhaloHalfmassRad   float64   ns   vmax, r_vmax, r_half
 *   Subhalo/SubhaloIDMostbound   int64       ns       the most bound member's ID (with potential
 *                                                     centres only)
 *   IDs/ID                       int64       Nids     the members' IDs, group by group; in a group,
 *                                                     Subhalo by Subhalo, then the rest; each run
 *                                                     most bound first by key (memberorder.h), ties
 *                                                     by original index, or by original index
 *   IDs/MemberOrder (attribute)  string               how each run is ordered: "binding_energy",
 *                                                     "radius" or "id" (fk_morder_name)
 * IDs are the snapshot's own particle IDs (the PID chunk: Gadget's
 * ParticleIDs) when the stream has them, else the original indices (the ID
 * chunk). The group-ordered snapshot is the stream's particles of each type
 * in the order of IDs/ID, then its ungrouped ones by original index: the
 * order Gadget-4 writes a snapshot with its group catalogue in, which
 * GroupOffsetType and SubhaloOffsetType index (pynbody reads memberships
 * through them; halosnap_hdf5.h writes that snapshot).
 * Values are in the catalogue's units (meta): lengths (comoving in a
 * cosmological run: a_scaling 1, h_scaling -1) measured from the box's
 * lower corner (SNAP's origin), masses; velocities (Vel, SubhaloVelDisp,
 * SubhaloVmax) physical, the peculiar velocity, a_scaling 0, when the
 * stream is comoving (SNAP's comoving key: halostats made them so), else as
 * the stream holds them (0.5 in a cosmological run: a Gadget snapshot's
 * sqrt(a) convention); SubhaloVmaxRad and SubhaloHalfmassRad physical
 * (a_scaling 0) in a comoving stream, as Gadget-4's SUBFIND computes them
 * (subfind_properties.cc). Gadget-4 itself registers its catalogue's
 * fields without unit attributes (fof_io.cc: flagunit 0); these state what
 * each value is, as its snapshots' do. A Group or Subhalo group without
 * rows holds no datasets.
 */

/* The units and cosmology a Gadget-4 style file states (Header, Parameters,
 * the datasets' unit attributes). */
typedef struct fk_gadget_meta {
    double unit_length_cm, unit_mass_g, unit_velocity_cm_s; /* one unit of the file's values, in cgs */
    int units_per_h;  /* the units carry 1/h (kpc/h, 1e10 Msun/h): h_scaling -1 */
    int stream_units; /* the units are the stream's (SNAP's keys), not Gadget's defaults */
    int comoving;     /* a cosmological run: comoving lengths, velocities with sqrt(a) */
    double time, hubble, omega0, omega_lambda, redshift;
} fk_gadget_meta;

/* The meta of a file of values in units u (factors: one stream unit is
 * u->length file units, ...; NULL: 1) from the stream s:
 *   units       SNAP's unit keys, else Gadget's usual kpc/h, 1e10 Msun/h and
 *               km/s (3.085678e21 cm, 1.989e43 g, 1e5 cm/s; per h), each
 *               divided by u's factor
 *   cosmology   SNAP's hubble, omega0 and omega_lambda, else so's omega_m and
 *               omega_l (the cosmology of --so; so NULL: none), else h 1 and
 *               Omega 0 (no cosmology)
 *   redshift    SNAP's, else 1/so->a - 1, else 1/time - 1 in a periodic box
 *               with 0 < time <= 1 (an expansion factor), else 0
 *   comoving    SNAP has a cosmology key, so is given, or the box is
 *               periodic with 0 < time <= 1
 * Can't fail. */
void fk_gadget_meta_init(fk_gadget_meta *m, const fk_snap *s, const fk_halo_units *u, const fk_cosmo *so);

/* Gadget's particle type of original index r of s: the source holds gas,
 * dark, star in that order (snap.h); gas is 0, dark 1, star 4. */
int fk_gadget_type(const fk_snap *s, uint64_t r);

/* What the catalogue is made from. */
typedef struct fk_halocat {
    const fk_snap *snap;
    uint64_t n;             /* particles in the stream                              */
    const float *mass;      /* n, stream order                                      */
    const uint64_t *ids;    /* n original indices, stream order                     */
    const uint64_t *pids;   /* n snapshot IDs (PID), stream order; NULL: ids stand for them */
    const uint32_t *gid0;   /* nsource: level 0 group of each original index, 0 none */
    const uint32_t *gsub;   /* nsource: Subhalo (1 + index into subs), 0 none; NULL: no Subhalos */
    const fk_halo *groups;  /* level 0: ngroups, by id, from halostats               */
    uint64_t ngroups;
    const fk_halo *subs;    /* nsubs, host set; level and id say what each is        */
    uint64_t nsubs;
    int have_mbp;           /* mbp_id is meaningful (potential centres)              */
    int have_so;            /* the SO fields of groups are filled (--so)             */
    int have_bound;         /* n_bound and mass_bound of groups are filled (--unbind) */
    const fk_halo_units *units; /* factors into the file's units (NULL: 1)          */
    const fk_gadget_meta *meta; /* what the file states (fk_gadget_meta_init)       */
    const double *key;      /* n, stream order: each member's key in its Subhalo or group
                               (memberorder.h: fk_morder_keys); NULL: by original index */
    int order;              /* what key holds: FK_MORDER_ENERGY, _RADIUS (FK_MORDER_ID
                               with key NULL), recorded as IDs/MemberOrder */
} fk_halocat;

/* The original indices of the stream's particles in the group-ordered
 * snapshot's order (all types together: IDs/ID's order, then the ungrouped
 * by original index) into *order (n entries, malloc'd, caller frees) and
 * how many are grouped into *nids. Checks the memberships as
 * fk_halocat_hdf5 does. FK_EFORMAT, FK_ENOMEM. Needs no HDF5. */
int fk_halocat_order(const fk_halocat *cat, uint64_t **order, uint64_t *nids, fk_error *err);

/* Whether this build can write HDF5 (it was built with libhdf5). Can't
 * fail. */
int fk_halocat_hdf5_available(void);

/* Builds the catalogue as an HDF5 file image in memory: *image (malloc'd,
 * free() it) of *size bytes, to be written to a file or a pipe as it is.
 * Checks that the particles agree with the groups: FK_EFORMAT naming the
 * group when a member count differs from its fk_halo's n, or when a
 * Subhalo's member lies outside its host. FK_EUNSUP in a build without
 * HDF5, FK_ENOMEM, FK_EIO when libhdf5 fails. */
int fk_halocat_hdf5(const fk_halocat *cat, void **image, size_t *size, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
