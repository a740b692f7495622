/* halostats_level.h - one level of halostats' catalogue measured: each particle's group, the members (the early work's when -m gathered them), the sums and centres, the hosts. */
#ifndef FK_HALOSTATS_LEVEL_H
#define FK_HALOSTATS_LEVEL_H

#include <stdint.h>

#include "error.h"
#include "haloearly.h"
#include "halostats.h"
#include "halostats_input.h"
#include "potential.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the levels are measured (halostats' options after its setup). */
typedef struct fk_hslevel_how {
    fk_centre centre;
    const fk_pot_params *pot;
    fk_pot_minima_fn minima; /* a device's (or its hook's), NULL: the CPU's */
    double *phi;             /* where the centres' potentials are kept (--unbind), or NULL */
    int comoving;            /* a comoving stream's frame (fk_halo_input's) */
    double vscale, hflow;
    int keep_grp;            /* each particle's group kept for the passes after (--so, --unbind) */
} fk_hslevel_how;

/* What -m did for a level before the input ended, as the level takes it. */
typedef struct fk_hslevel_early {
    fk_halo_early_level *E;       /* NULL: nothing */
    int gathered;                 /* its members gathered there */
    int found;                    /* and minima found there (or on the finder's thread: await) */
    int await;
} fk_hslevel_early;

/* Level k's share of ea (NULL when the early groups do not hold or -m did
 * not reach it). Can't fail. */
fk_hslevel_early fk_hslevel_early_of(fk_hsin_early *ea, const fk_hsin *in, int k, int early_minima);

/* Level k of in measured into *h (malloc'd, *ng rows): each particle's
 * group (in *grp, allocated at the first level that needs it and kept when
 * how->keep_grp, else freed and NULL), the members gathered (or the early
 * work's, el: fk_hslevel_early_of), fk_halostats_compute_members, the
 * centres (found early, awaited from the finder, or found here). *hin the
 * particles as the level's passes after read them; *tm the timings (gather
 * with the groups'). The failures of those calls (*h freed and NULL then);
 * FK_ENOMEM. */
int fk_hslevel_measure(const fk_hsin *in, int k, fk_hsin_early *ea, const fk_hslevel_early *el,
                       const fk_hslevel_how *how, uint32_t **grp, fk_halo **h, uint64_t *ng, fk_halo_input *hin,
                       fk_halo_timing *tm, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
