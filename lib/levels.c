/* levels.c - hierarchical friends-of-friends: checks of a level series and the CPU linking of every level on one tree. */
#include "levels.h"

#include <inttypes.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int fk_levels_check(const fk_linkopts *o, int nlevels, fk_error *err)
{
    if (nlevels < 1 || nlevels > FK_LEVELS_MAX)
        return fk_fail(err, FK_EINVAL, "%d levels: a hierarchy has 1 to %d", nlevels, FK_LEVELS_MAX);
    for (int k = 0; k < nlevels; k++) {
        int st = fk_link_check(&o[k], err);
        if (st) return st;
        if (k == 0) continue;
        if (o[k].periodic != o[0].periodic || (o[0].periodic && o[k].box != o[0].box))
            return fk_fail(err, FK_EINVAL, "level %d has another box than level 0", k);
        if (!(o[k].l < o[k - 1].l))
            return fk_fail(err, FK_EINVAL, "level %d: linking length %g is not shorter than level %d's (%g)", k,
                           o[k].l, k - 1, o[k - 1].l);
        if ((o[k].psi > 0) != (o[0].psi > 0))
            return fk_fail(err, FK_EINVAL, "level %d is %s, level 0 %s: the levels must all be 3D or all 6D", k,
                           o[k].psi > 0 ? "6D" : "3D", o[0].psi > 0 ? "6D" : "3D");
        if (o[k].psi > o[k - 1].psi)
            return fk_fail(err, FK_EINVAL,
                           "level %d: velocity linking length %g is longer than level %d's (%g), so the levels "
                           "would not nest",
                           k, o[k].psi, k - 1, o[k - 1].psi);
    }
    return FK_OK;
}

static double now(void)
{
#ifdef _OPENMP
    return omp_get_wtime();
#else
    return 0;
#endif
}

int fk_levels_link_cpu(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o, int nlevels,
                       uint32_t *const *sink, fk_linkstats *stats, double *seconds, fk_error *err)
{
    int st = fk_levels_check(o, nlevels, err);
    if (st) return st;
    uint32_t *lab = NULL;
    if (nlevels > 1 && !(lab = malloc(t->n ? t->n * sizeof *lab : 1)))
        return fk_fail(err, FK_ENOMEM, "out of memory for the labels of %" PRIu64 " particles", t->n);
    for (int k = 0; k < nlevels && !st; k++) {
        double t0 = now();
        if (k == 0) {
            st = fk_link_cpu(t, pos, vel, &o[0], sink[0], stats ? &stats[0] : NULL, err);
        } else {
            fk_link_labels(sink[k - 1], t->n, lab);
            st = fk_link_cpu_within(t, pos, vel, &o[k], lab, sink[k], stats ? &stats[k] : NULL, err);
        }
        if (seconds) seconds[k] = now() - t0;
    }
    free(lab);
    return st;
}
