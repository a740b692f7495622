/* distrun.h - foflink's distributed run under MPI: the options it shares with the single-process run. */
#ifndef FOFLINK_DISTRUN_H
#define FOFLINK_DISTRUN_H

#include "prog.h"
#include "spacing.h"

typedef struct foflink_opts {
    const double *b, *l, *psi; /* per level; l used when have_l, psi when npsi */
    int nlevels, have_l, npsi, psi_rel, no_periodic, brute, devchoice;
    long long threads, piece; /* piece: --piece-size, 0 when not given */
    fk_spacing_spec spacing;  /* --spacing: what -b is a fraction of */
    int have_spacing;         /* --spacing was given */
    unsigned link_types, attach_types; /* --link-types, --attach-types (attach.h bits) */
    int have_link_types, have_attach_types;
    int decomp; /* --decomp: FK_DECOMP_RCB (0, the default) or FK_DECOMP_SLABS (dist_link.h) */
    int overlay; /* --overlay: the output an overlay of the input (overlay.h) */
} foflink_opts;

/* Links the streams named input and std->output, "%r" expanded to each
 * rank, across the ranks of an MPI run; writes each rank's input on with
 * LINK and one GMIN chunk per level (with overlay, those alone after BASE).
 * An input that is an overlay is read with its base. Exits as the program
 * does. */
_Noreturn void foflink_dist(const char *input, const prog_std *std, const foflink_opts *o);

#endif
