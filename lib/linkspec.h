/* linkspec.h - foflink's options as each level's linking options: lengths from -b or -l, 6D from --psi or --psi-rel. */
#ifndef FK_LINKSPEC_H
#define FK_LINKSPEC_H

#include <stdint.h>

#include "error.h"
#include "levels.h"
#include "link.h"
#include "snap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the user asked for, level by level. */
typedef struct fk_linkspec {
    const double *b, *l; /* per level: b (a fraction of the mean spacing), or l when have_l     */
    const double *psi;   /* npsi values (one for every level, or one per level); npsi 0: 3D    */
    int nlevels, have_l, npsi;
    int psi_rel;     /* psi is a multiple of the rms velocity about the mean              */
    int no_periodic; /* isolated even when the snapshot's box is periodic                 */
    int nthreads;    /* CPU threads (0: all)                                              */
} fk_linkspec;

/* Each level's options lo[0..nlevels) in snap's box: l = b box / neff^(1/3)
 * (neff from spacing.h: all ranks' particles) or as given; psi as given or, with
 * psi_rel, times the rms velocity of the n = snap->n velocities at vel
 * (*vscale, else 0). rel (nlevels entries, may be NULL) gets each level's
 * psi as given. FK_EFORMAT (naming name) when psi_rel finds velocities that
 * do not vary; FK_EINVAL when the levels fail fk_levels_check. */
int fk_linkspec_levels(const fk_linkspec *s, const fk_snap *snap, double neff, const float *vel,
                       const char *name, fk_linkopts *lo, double *vscale, double *rel, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
