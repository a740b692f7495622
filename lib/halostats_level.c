/* halostats_level.c - one level of halostats' catalogue measured: each particle's group, the members (the early work's when -m gathered them), the sums and centres, the hosts. */
#include "halostats_level.h"

#include <inttypes.h>
#include <stdlib.h>

#include "bigmem.h"
#include "clock.h"
#include "halomembers.h"

fk_hslevel_early fk_hslevel_early_of(fk_hsin_early *ea, const fk_hsin *in, int k, int early_minima)
{
    fk_hslevel_early el = {0};
    /* -m: the members gathered and the minima found before the input ended, when they were */
    el.E = k < ea->e.nlevels && fk_hsin_early_holds(ea, in) ? &ea->e.lv[k] : NULL;
    el.gathered = el.E && el.E->members.first;
    el.found = el.gathered && early_minima && el.E->min;
    el.await = el.found && el.E->bg;
    return el;
}

int fk_hslevel_measure(const fk_hsin *in, int k, fk_hsin_early *ea, const fk_hslevel_early *el,
                       const fk_hslevel_how *how, uint32_t **grp, fk_halo **h, uint64_t *ng, fk_halo_input *hin,
                       fk_halo_timing *tm, fk_error *err)
{
    const uint64_t n = in->snap.n;
    double tg = fk_now();
    fk_halo_early_level *E = el->E;
    const int gathered = el->gathered, found = el->found, await = el->await;
    if (gathered && !how->keep_grp) {
        *ng = in->lv[k].grps.ngroups;
    } else {
        if (!*grp && !(*grp = fk_big_alloc(n ? n * sizeof **grp : 1)))
            return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " particles", n);
        *ng = fk_hsin_level_groups(in, &in->lv[k], *grp);
    }
    if (!(*h = malloc(*ng ? *ng * sizeof **h : 1)))
        return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", *ng);
    int st;
    *hin = (fk_halo_input){n, in->pos, in->vel, in->mass, in->ids, *grp, in->snap.periodic, in->snap.box,
                           in->snap.origin, how->comoving, how->vscale, how->hflow, in->type, in->m_hires};
    fk_halo_order own = {0}, *mo = &own; /* the members: the early work's stay its own (the finder reads them) */
    if (gathered)
        mo = &E->members;
    else if ((st = fk_halo_order_build(n, *grp, in->ids, *ng, &own, err)))
        goto fail;
    fk_halo_early_wait waiter = {&ea->e, k};
    if (!how->keep_grp) free(*grp), *grp = NULL, hin->grp = NULL; /* the rest reads the members */
    tg = fk_now() - tg;
    st = fk_halostats_compute_members(hin, mo, *h, in->name, err);
    if (!st)
        st = await ? fk_halostats_centres_await(hin, mo, how->pot, how->minima, E->min, fk_halo_early_found, &waiter, *h,
                                                tm, how->phi, err)
             : found ? fk_halostats_centres_found(hin, mo, how->pot, how->minima, E->min, E->found, *h, tm, how->phi,
                                                  err)
                     : fk_halostats_centres_members(hin, mo, how->centre, how->pot, how->minima, *h, tm, how->phi, err);
    if (st) goto fail;
    fk_halo_order_free(mo); /* the finder is done with this level */
    tm->gather += tg;
    return FK_OK;
fail:
    if (mo == &own) fk_halo_order_free(&own);
    free(*h);
    *h = NULL;
    return st;
}
