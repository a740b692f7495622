/* linkspec.c - foflink's options as each level's linking options: lengths from -b or -l, 6D from --psi or --psi-rel. */
#include "linkspec.h"

#include <math.h>
#include <string.h>

#include "phase.h"

int fk_linkspec_levels(const fk_linkspec *s, const fk_snap *snap, double neff, const float *vel,
                       const char *name, fk_linkopts *lo, double *vscale, double *rel, fk_error *err)
{
    const int sixd = s->npsi > 0;
    double vs = 0;
    if (sixd && s->psi_rel) {
        vs = fk_phase_vscale(vel, snap->n);
        if (!(vs > 0))
            return fk_fail(err, FK_EFORMAT,
                           "%s: the particles' velocities do not vary (rms about the mean 0), so --psi-rel gives no "
                           "velocity linking length: use --psi",
                           name);
    }
    for (int k = 0; k < s->nlevels; k++) {
        fk_linkopts *o = &lo[k];
        memset(o, 0, sizeof *o);
        o->periodic = snap->periodic && !s->no_periodic;
        o->box = snap->box;
        o->l = s->have_l ? s->l[k] : s->b[k] * snap->box / cbrt(neff > 0 ? neff : 1);
        const double given = sixd ? s->psi[s->npsi > 1 ? k : 0] : 0;
        if (rel) rel[k] = given;
        o->psi = given * (s->psi_rel ? vs : 1);
        o->nthreads = s->nthreads;
    }
    if (vscale) *vscale = vs;
    return fk_levels_check(lo, s->nlevels, err);
}
