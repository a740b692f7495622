/* attach.c - hydro runs: the primaries split off with a tree of their own, each secondary's nearest primary on the CPU, the attached sinks. */
#include "attach.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "snap.h"

static const char *type_name[3] = {"gas", "dark", "star"};

int fk_types_list(const char *arg, unsigned *types)
{
    *types = 0;
    const char *p = arg;
    for (;;) {
        size_t len = strcspn(p, ",");
        int t = -1;
        for (int k = 0; k < 3; k++)
            if (len == strlen(type_name[k]) && !strncmp(p, type_name[k], len)) t = k;
        if (t < 0) {
            *types = 0;
            return -1;
        }
        *types |= 1u << t;
        p += len;
        if (!*p) return 0;
        p++; /* the comma: an item must follow */
    }
}

int fk_types_parse(const char *opt, const char *arg, int allow_none, unsigned *types, fk_error *err)
{
    *types = 0;
    if (!strcmp(arg, "all")) {
        *types = FK_TYPES_ALL;
        return FK_OK;
    }
    if (allow_none && !strcmp(arg, "none")) return FK_OK;
    if (fk_types_list(arg, types))
        return fk_fail(err, FK_EINVAL, "option %s takes a list of gas, dark, star, or all%s, not '%s'", opt,
                       allow_none ? " or none" : "", arg);
    return FK_OK;
}

const char *fk_types_name(unsigned types, char *buf, size_t size)
{
    if (types == FK_TYPES_ALL) {
        snprintf(buf, size, "all");
        return buf;
    }
    if (!types) {
        snprintf(buf, size, "none");
        return buf;
    }
    size_t at = 0;
    buf[0] = 0;
    for (int t = 0; t < 3; t++)
        if (types & (1u << t) && at < size) at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? "," : "", type_name[t]);
    return buf;
}

float fk_attach_r2(double l)
{
    float r = (float)(FK_ATTACH_REACH * l);
    return fk_fmul(r, r);
}

void fk_attach_free(fk_attach_set *s)
{
    free(s->idx);
    free(s->pos);
    free(s->vel);
    free(s->key);
    free(s->sec);
    free(s->secpos);
    fk_tree_free(&s->tree);
    memset(s, 0, sizeof *s);
}

int fk_attach_split(uint64_t n, const uint8_t *type, const float *pos, const float *vel, const void *ids, int idw,
                    unsigned link_types, unsigned attach_types, uint32_t leafsize, fk_attach_set *s, const char *name,
                    fk_error *err)
{
    memset(s, 0, sizeof *s);
    /* blocks of the stream counted on every core, then copied at their offsets: the order kept */
    const uint64_t B = 65536, nb = (n + B - 1) / B;
    uint64_t *cp = calloc(nb + 1, sizeof *cp), *cs = calloc(nb + 1, sizeof *cs), bad = n;
    if (!cp || !cs) {
        free(cp), free(cs);
        return fk_fail(err, FK_ENOMEM, "out of memory splitting %" PRIu64 " particles by type", n);
    }
    #pragma omp parallel for schedule(static) reduction(min : bad)
    for (uint64_t k = 0; k < nb; k++)
        for (uint64_t i = k * B; i < n && i < (k + 1) * B; i++) {
            if (type[i] > 2) {
                bad = i < bad ? i : bad;
                continue;
            }
            cp[k + 1] += link_types >> type[i] & 1u;
            cs[k + 1] += !(link_types >> type[i] & 1u) && (attach_types >> type[i] & 1u);
        }
    if (bad < n) {
        free(cp), free(cs);
        return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has type %d", name, bad, type[bad]);
    }
    for (uint64_t k = 0; k < nb; k++) cp[k + 1] += cp[k], cs[k + 1] += cs[k];
    const uint64_t np = cp[nb], ns = cs[nb];
    s->n = np, s->nsec = ns;
    s->idx = fk_big_alloc((np ? np : 1) * sizeof *s->idx);
    s->pos = fk_big_alloc((np ? np : 1) * 3 * sizeof *s->pos);
    s->key = fk_big_alloc((np ? np : 1) * sizeof *s->key);
    s->sec = fk_big_alloc((ns ? ns : 1) * sizeof *s->sec);
    s->secpos = fk_big_alloc((ns ? ns : 1) * 3 * sizeof *s->secpos);
    if (vel) s->vel = fk_big_alloc((np ? np : 1) * 3 * sizeof *s->vel);
    if (!s->idx || !s->pos || !s->key || !s->sec || !s->secpos || (vel && !s->vel)) {
        free(cp), free(cs);
        fk_attach_free(s);
        return fk_fail(err, FK_ENOMEM, "out of memory splitting %" PRIu64 " particles by type", n);
    }
    #pragma omp parallel for schedule(static)
    for (uint64_t k = 0; k < nb; k++) {
        uint64_t a = cp[k], b = cs[k];
        for (uint64_t i = k * B; i < n && i < (k + 1) * B; i++) {
            if (link_types >> type[i] & 1u) {
                s->idx[a] = (uint32_t)i;
                memcpy(s->pos + 3 * a, pos + 3 * i, 3 * sizeof *pos);
                if (vel) memcpy(s->vel + 3 * a, vel + 3 * i, 3 * sizeof *vel);
                s->key[a] = !ids ? i : idw == 8 ? ((const uint64_t *)ids)[i] : ((const uint32_t *)ids)[i];
                a++;
            } else if (attach_types >> type[i] & 1u) {
                s->sec[b] = (uint32_t)i;
                memcpy(s->secpos + 3 * b, pos + 3 * i, 3 * sizeof *pos);
                b++;
            }
        }
    }
    free(cp), free(cs);
    int st = fk_tree_alloc(&s->tree, np, leafsize < 2 ? 2 : leafsize, "subset", err);
    if (st) {
        fk_attach_free(s);
        return st;
    }
    fk_tree_bounds(&s->tree, s->pos);
    return FK_OK;
}

int fk_attach_nearest_cpu(const fk_tree *t, const float *ppos, const uint64_t *pkey, uint64_t nq, const float *qpos,
                          fk_geom g, float r2max, int brute, uint32_t *near, float *nr2, fk_error *err)
{
    (void)err;
    const fk_layout lay = fk_tree_layout(t);
    const uint64_t np = t->n;
    #pragma omp parallel for schedule(dynamic, 256)
    for (uint64_t q = 0; q < nq; q++) {
        if (!brute) {
            fk_attach_walk(lay, t->depth, t->box, ppos, pkey, qpos + 3 * q, g, r2max, &near[q], &nr2[q]);
            continue;
        }
        uint32_t b = FK_ATTACH_NONE;
        float br2 = r2max;
        for (uint64_t j = 0; j < np; j++) {
            const float r2 = fk_sep2(qpos + 3 * q, ppos + 3 * j, g);
            if (r2 < br2 || (r2 == br2 && b != FK_ATTACH_NONE && pkey[j] < pkey[b])) b = (uint32_t)j, br2 = r2;
        }
        near[q] = b, nr2[q] = br2;
    }
    return FK_OK;
}

/* An atomic minimum on a 4-byte label. */
static void atomic_min_u32(uint32_t *p, uint32_t v)
{
    uint32_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

int fk_attach_sinks(const fk_attach_set *s, uint64_t n, const uint32_t *psink, const uint32_t *near, const float *nr2,
                    float r2, uint32_t *sink, uint64_t *attached, fk_error *err)
{
    /* low[j] for a primary root j: the lowest stream index of its group, the
     * attached particles' included (they may come before every primary) */
    uint32_t *low = fk_big_alloc((s->n ? s->n : 1) * sizeof *low);
    if (!low) return fk_fail(err, FK_ENOMEM, "out of memory attaching %" PRIu64 " particles", s->nsec);
    #pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) sink[i] = (uint32_t)i;
    #pragma omp parallel for schedule(static)
    for (uint64_t j = 0; j < s->n; j++) low[j] = s->idx[j];
    uint64_t na = 0;
    #pragma omp parallel for schedule(static) reduction(+ : na)
    for (uint64_t q = 0; q < s->nsec; q++)
        if (near[q] != FK_ATTACH_NONE && nr2[q] < r2) {
            atomic_min_u32(&low[psink[near[q]]], s->sec[q]);
            na++;
        }
    #pragma omp parallel for schedule(static)
    for (uint64_t j = 0; j < s->n; j++) sink[s->idx[j]] = low[psink[j]];
    #pragma omp parallel for schedule(static)
    for (uint64_t q = 0; q < s->nsec; q++)
        if (near[q] != FK_ATTACH_NONE && nr2[q] < r2) sink[s->sec[q]] = low[psink[near[q]]];
    free(low);
    *attached = na;
    return FK_OK;
}

#ifndef FK_HAVE_CUDA
int fk_gpu_attach_nearest(const fk_tree *t, const float *ppos, const uint64_t *pkey, uint64_t nq, const float *qpos,
                          fk_geom g, float r2max, uint32_t *near, float *nr2, double *seconds, fk_error *err)
{
    (void)t, (void)ppos, (void)pkey, (void)nq, (void)qpos, (void)g, (void)r2max, (void)near, (void)nr2, (void)seconds;
    return fk_fail(err, FK_EUNSUP, "this fofkit was built without CUDA (--device=cpu runs without a GPU)");
}
#endif
