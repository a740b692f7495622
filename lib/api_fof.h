/* api_fof.h - the linking options of fofkit_fof's options, shared with its MPI variant. */
#ifndef FK_API_FOF_H
#define FK_API_FOF_H

#include <stdint.h>

#include "error.h"
#include "fofkit.h"
#include "link.h"

/* Each level's linking options lo[0..nlevels) from o for ntotal particles (all
 * ranks') in p's box, as foflink's -b/-l/--psi/--psi-rel give them (vel: the
 * n velocities of p on the host, for psi_relative; else may be NULL).
 * FK_EINVAL naming the level and the problem. */
int fk_api_fof_levels(const fofkit_fof_options *o, const fofkit_particles *p, uint64_t ntotal, const float *vel,
                      fk_linkopts *lo, fk_error *err);

#endif
