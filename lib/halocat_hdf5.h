/* halocat_hdf5.h - the halo catalogue as an HDF5 file in the layout of Gadget-4's fof_subhalo_tab files. */
#ifndef FK_HALOCAT_HDF5_H
#define FK_HALOCAT_HDF5_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "halostats.h"
#include "snap.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Layout, so that readers of Gadget-4 group catalogues (yt's gadget_fof
 * frontend, pynbody's Gadget4SubfindHDFCatalogue) open it. Level 0 groups
 * are the Groups; level 1 groups (those of the second linking length) are
 * the Subhalos of their level 0 host; deeper levels are not written (the
 * layout has one level of subhalos). Rows are 0-based: Group row g-1 is
 * fofkit group g of level 0. Subhalos come host by host (a host's by
 * fofkit id), so that each host's subhalos are contiguous, as the readers
 * assume. Particle types are Gadget's: 0 gas, 1 dark, 4 star.
 *
 *   PATH                         TYPE        SHAPE    CONTENT
 *   Header (attributes)
 *     Ngroups_ThisFile/_Total    int64                level 0 groups
 *     Nsubhalos_ThisFile/_Total  int64                level 1 groups (Gadget-4's name)
 *     Nsubgroups_ThisFile/_Total int64                the same (Gadget-3's and Arepo's name, yt's)
 *     Nids_ThisFile/_Total       int64                rows of IDs/ID: the level 0 members
 *     NumFiles                   int32                1
 *     BoxSize                    float64              the box side
 *     Time, Redshift             float64              SNAP's time; 1/time - 1 when the box is periodic
 *                                                     and 0 < time <= 1 (an expansion factor), else 0
 *     Omega0, OmegaLambda        float64              0: a fofkit stream does not hold them
 *     HubbleParam                float64              1: lengths and masses are as in the stream
 *   Group/GroupLen               int64       ng       members
 *   Group/GroupLenType           int64       ng x 6   members by particle type
 *   Group/GroupMass              float64     ng       mass
 *   Group/GroupMassType          float64     ng x 6   mass by type
 *   Group/GroupOffsetType        int64       ng x 6   first member in the group-ordered snapshot (below)
 *   Group/GroupPos               float64     ng x 3   the centre (halostats' xc: most bound member or
 *                                                     centre of mass), from the box's lower corner
 *   Group/GroupCM                float64     ng x 3   the centre of mass, from the box's lower corner
 *   Group/GroupVel               float64     ng x 3   the mass-weighted mean velocity
 *   Group/GroupAscale            float64     ng       Time
 *   Group/GroupFirstSub          int64       ng       first Subhalo row of the group, -1 for none
 *   Group/GroupNsubs             int64       ng       its Subhalos
 *   Subhalo/SubhaloLen, LenType, Mass, MassType, OffsetType, Pos, CM, Vel   as for Group
 *   Subhalo/SubhaloGroupNr       int64       ns       Group row of the host (Gadget-4's name)
 *   Subhalo/SubhaloGrNr          int64       ns       the same (Gadget-3's and Arepo's name, yt's)
 *   Subhalo/SubhaloRankInGr      int64       ns       rank among its host's Subhalos
 *   Subhalo/SubhaloFofID         int64       ns       its fofkit id at level 1
 *   Subhalo/SubhaloVelDisp       float64     ns       sigma_v / sqrt(3): the 1D dispersion
 *   Subhalo/SubhaloVmax, SubhaloVmaxRad, SubhaloHalfmassRad   float64   ns   vmax, r_vmax, r_half
 *   Subhalo/SubhaloIDMostbound   int64       ns       mbp_id (only with potential centres)
 *   IDs/ID                       int64       Nids     the members' original indices (fofkit's ID,
 *                                                     not a snapshot's ParticleIDs), group by group;
 *                                                     in a group, Subhalo by Subhalo, then the rest;
 *                                                     each run by original index
 * The group-ordered snapshot is the source snapshot's particles of each type
 * in the order of IDs/ID, then its ungrouped ones: the order Gadget-4 writes
 * a snapshot with its group catalogue in, which GroupOffsetType and
 * SubhaloOffsetType index (pynbody reads memberships through them).
 * Lengths are in the output length unit, measured from the box's lower
 * corner (SNAP's origin); masses and velocities in the output units.
 * A Group or Subhalo group without rows holds no datasets.
 */

/* What the catalogue is made from. */
typedef struct fk_halocat {
    const fk_snap *snap;
    uint64_t n;             /* particles in the stream                              */
    const float *mass;      /* n, stream order                                      */
    const uint64_t *ids;    /* n original indices, stream order                     */
    const uint32_t *gid0;   /* nsource: level 0 group of each original index, 0 none */
    const uint32_t *gid1;   /* nsource: level 1 group, or NULL when there is no level 1 */
    const fk_halo *groups;  /* level 0: ngroups, by id, from halostats               */
    uint64_t ngroups;
    const fk_halo *subs;    /* level 1: nsubs, by id, host set                       */
    uint64_t nsubs;
    int have_mbp;           /* mbp_id is meaningful (potential centres)              */
    const fk_halo_units *units; /* output units (NULL: the stream's)                 */
} fk_halocat;

/* Whether this build can write HDF5 (it was built with libhdf5). Can't
 * fail. */
int fk_halocat_hdf5_available(void);

/* Builds the catalogue as an HDF5 file image in memory: *image (malloc'd,
 * free() it) of *size bytes, to be written to a file or a pipe as it is.
 * Checks that the particles agree with the groups: FK_EFORMAT naming the
 * group when a member count differs from its fk_halo's n, or when a level 1
 * member lies outside its host. FK_EUNSUP in a build without HDF5,
 * FK_ENOMEM, FK_EIO when libhdf5 fails. */
int fk_halocat_hdf5(const fk_halocat *cat, void **image, size_t *size, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
