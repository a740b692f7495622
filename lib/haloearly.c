/* haloearly.c - halostats -m's work before its input has ended: the levels numbered, their members gathered, their potentials' minima found. */
#include "haloearly.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "clock.h"
#include "groupsrun.h"

int fk_halo_early_groups(fk_halo_early *e, const fk_snap *snap, uint64_t *ids, uint32_t *const *sinks, int nlevels,
                         uint64_t minsize, const char *name, fk_error *err)
{
    const double t0 = fk_now();
    e->nlevels = 0;
    if (nlevels < 1 || nlevels > FK_LEVELS_MAX)
        return fk_fail(err, FK_EINVAL, "%s: %d SINK levels: 1 to %d are numbered", name, nlevels, FK_LEVELS_MAX);
    int st = fk_groups_check_ids(ids, snap->n, snap->nsource, name, err);
    /* as halostats' own resolve_levels does after its input: fk_groups_grp_ids a level */
    fk_groups_in gin = {.ids = ids, .nlevels = nlevels};
    for (int k = 0; k < nlevels; k++) gin.sinks[k] = sinks[k];
    for (int k = 0; st == FK_OK && k < nlevels; k++) {
        fk_halo_early_level *L = &e->lv[k];
        if ((st = fk_groups_grp_ids(&gin, snap, k, minsize, name, &L->gid, &L->grps, err))) break;
        e->nlevels = k + 1;
        if (k == 0) continue;
        if (!(L->gpar = malloc((L->grps.ngroups + 1) * sizeof *L->gpar))) {
            st = fk_fail(err, FK_ENOMEM, "out of memory for the parents of %" PRIu64 " groups", L->grps.ngroups);
            break;
        }
        st = fk_groups_parents(e->lv[k - 1].gid, L->gid, snap->nsource, L->grps.ngroups, L->gpar, (uint32_t)k, name,
                               err);
    }
    e->secs_groups = fk_now() - t0;
    return st;
}

int fk_halo_early_level_work(fk_halo_early *e, int k, const fk_halo_input *in, const fk_pot_params *pot,
                             fk_pot_minima_fn minima, int (*stop)(void *), void *stop_ctx, double *phi,
                             fk_error *err)
{
    fk_halo_early_level *L = &e->lv[k];
    const double t0 = fk_now();
    const uint64_t n = in->n, ng = L->grps.ngroups;
    uint32_t *grp = fk_big_alloc(n ? n * sizeof *grp : 1);
    if (!grp) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " particles", n);
    const uint32_t *gid = L->gid;
    const uint64_t *ids = in->ids;
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) grp[i] = gid[ids[i]];
    int st = fk_halo_order_build(n, grp, ids, ng, &L->members, err);
    free(grp);
    L->secs_gather = fk_now() - t0;
    if (st || !pot) return st;
    fk_error perr = {0};
    fk_halo_timing tm = {0, 0, 0};
    if (!(L->min = malloc((ng ? ng : 1) * sizeof *L->min)) ||
        fk_halostats_minima(in, &L->members, pot, minima, stop, stop_ctx, L->min, phi, &L->found, &tm, &perr) !=
            FK_OK) {
        free(L->min);
        L->min = NULL;
        L->found = 0;
        e->minima_failed = 1;
    }
    L->secs_potential = tm.gather + tm.potential, L->secs_minima = tm.potential;
    return FK_OK;
}

/* The minima's thread and what it shares: found, over and stop under mu. */
struct fk_halo_finder {
    fk_halo_early *e;
    int nlevels, k;
    fk_halo_input in;
    fk_pot_params pot;
    fk_pot_minima_fn minima;
    double *phi;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    uint64_t found; /* level k's groups done, as fk_halostats_minima counts them */
};

/* fk_halostats_minima's stop, asked before each batch: the batches done
 * published, and whether to stop. */
static int finder_next(void *ctx)
{
    struct fk_halo_finder *f = ctx;
    pthread_mutex_lock(&f->mu);
    f->e->lv[f->k].found = f->found;
    pthread_cond_broadcast(&f->cv);
    const int stop = f->stop;
    pthread_mutex_unlock(&f->mu);
    return stop;
}

static void *finder_loop(void *arg)
{
    struct fk_halo_finder *f = arg;
    fk_halo_early *e = f->e;
    int k = 0;
    for (; k < f->nlevels; k++) {
        fk_halo_early_level *L = &e->lv[k];
        fk_halo_timing tm = {0, 0, 0};
        fk_error err = {0};
        f->k = k, f->found = 0;
        const int st = fk_halostats_minima(&f->in, &L->members, &f->pot, f->minima, finder_next, f, L->min,
                                           k == 0 ? f->phi : NULL, &f->found, &tm, &err);
        pthread_mutex_lock(&f->mu);
        L->found = f->found, L->over = 1;
        L->secs_potential = tm.gather + tm.potential, L->secs_minima = tm.potential;
        if (st) e->minima_failed = 1;
        const int stop = f->stop || st;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        if (stop) break;
    }
    pthread_mutex_lock(&f->mu);
    for (; k < f->nlevels; k++) e->lv[k].over = 1; /* what was not reached: found after the input, as before */
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

int fk_halo_early_finder_start(fk_halo_early *e, int nlevels, const fk_halo_input *in, const fk_pot_params *pot,
                               fk_pot_minima_fn minima, double *phi, fk_error *err)
{
    struct fk_halo_finder *f = calloc(1, sizeof *f);
    int st = f ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory for the potentials' thread");
    /* every level's minima allocated here, so that the stage finds them whatever the thread has reached */
    for (int k = 0; st == FK_OK && k < nlevels; k++) {
        const uint64_t ng = e->lv[k].grps.ngroups;
        if (!e->lv[k].members.first)
            st = fk_fail(err, FK_EINVAL, "level %d's members are not gathered", k);
        else if (!(e->lv[k].min = malloc((ng ? ng : 1) * sizeof *e->lv[k].min)))
            st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", ng);
        e->lv[k].found = 0, e->lv[k].over = 0, e->lv[k].bg = 1;
    }
    if (st == FK_OK) {
        *f = (struct fk_halo_finder){.e = e, .nlevels = nlevels, .in = *in, .pot = *pot, .minima = minima, .phi = phi};
        pthread_mutex_init(&f->mu, NULL);
        pthread_cond_init(&f->cv, NULL);
        if (pthread_create(&f->th, NULL, finder_loop, f) != 0) {
            pthread_mutex_destroy(&f->mu);
            pthread_cond_destroy(&f->cv);
            st = fk_fail(err, FK_ENOMEM, "cannot start the potentials' thread");
        }
    }
    if (st) {
        for (int k = 0; k < nlevels; k++) {
            free(e->lv[k].min);
            e->lv[k].min = NULL, e->lv[k].bg = 0;
        }
        free(f);
        return st;
    }
    e->finder = f;
    return FK_OK;
}

uint64_t fk_halo_early_found(void *ctx, uint64_t have, int *over)
{
    fk_halo_early_wait *w = ctx;
    struct fk_halo_finder *f = w->e->finder;
    fk_halo_early_level *L = &w->e->lv[w->k];
    if (!f) { /* stopped and joined: what it published is final */
        *over = 1;
        return L->found;
    }
    pthread_mutex_lock(&f->mu);
    while (L->found <= have && !L->over) pthread_cond_wait(&f->cv, &f->mu);
    const uint64_t found = L->found;
    *over = L->over;
    pthread_mutex_unlock(&f->mu);
    return found;
}

void fk_halo_early_finder_stop(fk_halo_early *e)
{
    struct fk_halo_finder *f = e->finder;
    if (!f) return;
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->th, NULL);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f);
    e->finder = NULL;
}

void fk_halo_early_free(fk_halo_early *e)
{
    fk_halo_early_finder_stop(e);
    for (int k = 0; k < FK_LEVELS_MAX; k++) {
        fk_halo_early_level *L = &e->lv[k];
        free(L->gid), free(L->gpar), free(L->min);
        fk_halo_order_free(&L->members);
    }
    memset(e, 0, sizeof *e);
}
