/* linkrun.c - one foflink run: every level linked on the CPU or the GPU, by the tree or all pairs, and the LINK record it leaves. */
#include "linkrun.h"
#include "clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "bigmem.h"
#include "kv.h"

uint64_t fk_link_gpu_bytes(const fk_link_job *job)
{
    int sixd = job->lo[0].psi > 0;
    if (job->brute) return job->n * (sixd ? 28 : 16);
    return fk_gpu_link_bytes(job->n, job->tree->nnodes, sixd);
}

static int link_all(const fk_link_job *job, uint32_t *const *sinks, fk_link_report *rep, fk_error *err);

/* A hydro job: the primaries linked on their own tree, every secondary's
 * nearest primary found once (at level 0's reach, the longest), then each
 * level's sinks over the whole stream. */
static int link_attach(const fk_link_job *job, uint32_t *const *sinks, fk_link_report *rep, fk_error *err)
{
    fk_attach_set s;
    const uint32_t leafsize = job->tree && job->tree->leafsize ? job->tree->leafsize : 16;
    int st = fk_attach_split(job->n, job->type, job->pos, job->lo[0].psi > 0 ? job->vel : NULL, job->ids, job->idw,
                             job->link_types, job->attach_types, leafsize, &s, "stream", err);
    if (st) return st;
    uint32_t *psink[FK_LEVELS_MAX] = {0}, *near = NULL;
    float *nr2 = NULL;
    for (int k = 0; k < job->nlevels && !st; k++)
        if (!(psink[k] = fk_big_alloc((s.n ? s.n : 1) * sizeof *psink[k])))
            st = fk_fail(err, FK_ENOMEM, "out of memory for the sinks of %" PRIu64 " particles", s.n);
    if (!st && (!(near = fk_big_alloc((s.nsec ? s.nsec : 1) * sizeof *near)) ||
                !(nr2 = fk_big_alloc((s.nsec ? s.nsec : 1) * sizeof *nr2))))
        st = fk_fail(err, FK_ENOMEM, "out of memory attaching %" PRIu64 " particles", s.nsec);
    if (!st) {
        fk_link_job sub = {s.n, s.pos, s.vel, &s.tree, job->lo, job->nlevels, job->brute, job->gpu,
                           NULL, 0, 0, NULL, 0};
        st = link_all(&sub, psink, rep, err);
    }
    if (!st) {
        double t0 = fk_now();
        const fk_geom g = fk_link_params(&job->lo[0]).g;
        const float r2max = fk_attach_r2(job->lo[0].l);
        if (job->gpu && !job->brute)
            st = fk_gpu_attach_nearest(&s.tree, s.pos, s.key, s.nsec, s.secpos, g, r2max, near, nr2, NULL, err);
        else
            st = fk_attach_nearest_cpu(&s.tree, s.pos, s.key, s.nsec, s.secpos, g, r2max, job->brute, near, nr2, err);
        for (int k = 0; k < job->nlevels && !st; k++) {
            st = fk_attach_sinks(&s, job->n, psink[k], near, nr2, fk_attach_r2(job->lo[k].l), sinks[k],
                                 &rep->attached[k], err);
            uint64_t groups = 0;
            const uint32_t *sk = sinks[k];
            #pragma omp parallel for schedule(static) reduction(+ : groups)
            for (uint64_t i = 0; i < job->n; i++) groups += sk[i] == i;
            rep->stats[k].groups = groups;
        }
        rep->attach_seconds = fk_now() - t0;
    }
    rep->attach = 1;
    rep->primaries = s.n;
    rep->secondaries = s.nsec;
    for (int k = 0; k < job->nlevels; k++) free(psink[k]);
    free(near);
    free(nr2);
    fk_attach_free(&s);
    return st;
}

int fk_link_run(const fk_link_job *job, uint32_t *const *sinks, fk_link_report *rep, fk_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (job->type && job->link_types != FK_TYPES_ALL) {
        int st = fk_levels_check(job->lo, job->nlevels, err);
        if (st) return st;
        double t0 = fk_now();
        st = link_attach(job, sinks, rep, err);
        rep->total = fk_now() - t0;
        return st;
    }
    return link_all(job, sinks, rep, err);
}

static int link_all(const fk_link_job *job, uint32_t *const *sinks, fk_link_report *rep, fk_error *err)
{
    int st = fk_levels_check(job->lo, job->nlevels, err);
    if (st) return st;
    double t0 = fk_now();
    if (!job->gpu && !job->brute) {
        st = fk_levels_link_cpu(job->tree, job->pos, job->vel, job->lo, job->nlevels, sinks, rep->stats,
                                rep->seconds, err);
    } else if (job->gpu && !job->brute) {
        /* One upload for every level; each level linked whole on the device. */
        fk_gputimes g[FK_LEVELS_MAX];
        memset(g, 0, sizeof g);
        st = fk_gpu_link_levels(job->tree, job->pos, job->vel, job->lo, job->nlevels, sinks, rep->stats, g, err);
        for (int k = 0; k < job->nlevels; k++) rep->seconds[k] = g[k].upload + g[k].link + g[k].download;
        rep->gpu = g[0];
    } else {
        /* All pairs, every level whole. */
        for (int k = 0; k < job->nlevels && !st; k++) {
            double tk = fk_now();
            fk_gputimes g;
            memset(&g, 0, sizeof g);
            if (job->gpu)
                st = fk_gpu_link_brute(job->n, job->pos, job->vel, &job->lo[k], sinks[k], &rep->stats[k], &g, err);
            else
                st = fk_link_brute_cpu(job->n, job->pos, job->vel, &job->lo[k], sinks[k], &rep->stats[k], err);
            rep->seconds[k] = fk_now() - tk;
            if (k == 0) rep->gpu = g;
        }
    }
    rep->total = fk_now() - t0;
    return st;
}

int fk_link_record(const fk_link_job *job, const fk_link_meta *p, const fk_link_report *rep, char **text,
                   fk_error *err)
{
    const fk_linkopts *o = &job->lo[0];
    fk_kvbuf kv;
    fk_kv_init(&kv);
    fk_kv_dbl(&kv, "l", (double)(float)o->l);
    if (p->b) {
        fk_kv_dbl(&kv, "b", p->b[0]);
        if (p->spacing_of) {
            fk_kv_dbl(&kv, "spacing", p->spacing);
            fk_kv_str(&kv, "spacing_of", p->spacing_of);
            fk_kv_dbl(&kv, "neff", p->neff);
        }
    }
    fk_kv_dbl(&kv, "psi", (double)(float)o->psi);
    if (p->psi_rel) {
        fk_kv_dbl(&kv, "psi_rel", p->psi_rel[0]);
        fk_kv_dbl(&kv, "vscale", p->vscale);
    }
    fk_kv_u64(&kv, "periodic", (uint64_t)o->periodic);
    fk_kv_dbl(&kv, "box", o->box);
    fk_kv_str(&kv, "method", job->brute ? "brute" : "tree");
    fk_kv_str(&kv, "device", job->gpu ? "gpu" : "cpu");
    fk_kv_u64(&kv, "levels", (uint64_t)job->nlevels);
    fk_kv_u64(&kv, "groups", rep->stats[0].groups);
    if (rep->attach) {
        char buf[32];
        fk_kv_str(&kv, "link_types", fk_types_name(job->link_types, buf, sizeof buf));
        fk_kv_str(&kv, "attach_types", fk_types_name(job->attach_types, buf, sizeof buf));
        fk_kv_dbl(&kv, "attach_reach", FK_ATTACH_REACH);
        fk_kv_u64(&kv, "primaries", rep->primaries);
        fk_kv_u64(&kv, "secondaries", rep->secondaries);
    }
    for (int k = 0; k < job->nlevels; k++) {
        char key[32];
        snprintf(key, sizeof key, "l_%d", k);
        fk_kv_dbl(&kv, key, (double)(float)job->lo[k].l);
        if (p->b) {
            snprintf(key, sizeof key, "b_%d", k);
            fk_kv_dbl(&kv, key, p->b[k]);
        }
        snprintf(key, sizeof key, "psi_%d", k);
        fk_kv_dbl(&kv, key, (double)(float)job->lo[k].psi);
        if (p->psi_rel) {
            snprintf(key, sizeof key, "psi_rel_%d", k);
            fk_kv_dbl(&kv, key, p->psi_rel[k]);
        }
        snprintf(key, sizeof key, "groups_%d", k);
        fk_kv_u64(&kv, key, rep->stats[k].groups);
        if (rep->attach) {
            snprintf(key, sizeof key, "attached_%d", k);
            fk_kv_u64(&kv, key, rep->attached[k]);
        }
    }
    return fk_kv_finish(&kv, text, err);
}

int fk_link_write(fk_writer *w, const fk_link_job *job, const fk_link_meta *p, const fk_link_report *rep,
                  uint32_t **sinks, fk_error *err)
{
    char *text;
    int st = fk_link_record(job, p, rep, &text, err);
    if (st) return st;
    st = fk_writer_text(w, "LINK", 0, text, err);
    free(text);
    for (int k = 0; k < job->nlevels && !st; k++) {
        fk_chunk ch;
        fk_chunk_init(&ch, "SINK", "<u4", FK_CF_PARTICLE, job->n, 1);
        ch.level = (uint32_t)k;
        uint32_t *s = sinks[k];
        sinks[k] = NULL;
        st = fk_writer_give(w, &ch, s, err);
    }
    return st;
}
