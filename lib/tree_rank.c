/* tree_rank.c - members of each halo reordered by distance from its centre, positions joined from the snapshot by particle ID. */
#include "tree_rank.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gsnap.h"
#include "hdf5snap.h"
#include "tree_match.h"

/* A member's squared distance and its place in the file's list (the tie break). */
typedef struct dist {
    double r2;
    uint64_t k;
} dist;

static int by_distance(const void *x, const void *y)
{
    const dist *a = x, *b = y;
    if (a->r2 != b->r2) return a->r2 < b->r2 ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

/* The nearest periodic image of d (box > 0). */
static double wrap(double d, double box)
{
    if (box > 0) {
        if (d > box / 2) d -= box;
        else if (d < -box / 2) d += box;
    }
    return d;
}

int fk_treecat_rank_distance(fk_treecat *c, const char *catname, const char *snapname, fk_error *err)
{
    fk_gsnap s;
    fk_gsnap_opts o;
    fk_gsnap_opts_default(&o);
    int st = fk_hdf5_read(snapname, &o, &s, NULL, err);
    if (st) {
        fk_gsnap_free(&s);
        return st;
    }
    fk_treerec *sr = NULL, *mr = NULL, *tmp = NULL;
    float *mpos = NULL;
    if (!s.pid) {
        st = fk_fail(err, FK_EFORMAT, "%s: the snapshot has no ParticleIDs to find %s's members by", snapname, catname);
        goto done;
    }
    const uint64_t n = s.n, m = c->nids;
    sr = malloc((n + 1) * sizeof *sr), mr = malloc((m + 1) * sizeof *mr);
    tmp = malloc(((n > m ? n : m) + 1) * sizeof *tmp);
    mpos = malloc((m ? m : 1) * 3 * sizeof *mpos);
    if (!sr || !mr || !tmp || !mpos) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the positions of %" PRIu64 " particles", n);
        goto done;
    }
    /* the snapshot's (ID, row) and the members' (ID, place), each by ID, joined */
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) sr[i] = (fk_treerec){s.pid[i], (uint32_t)(i >> 32), (uint32_t)i};
#pragma omp parallel for schedule(static)
    for (uint64_t k = 0; k < m; k++) mr[k] = (fk_treerec){(uint64_t)c->ids[k], (uint32_t)(k >> 32), (uint32_t)k};
    fk_mtree_sort(sr, tmp, n);
    fk_mtree_sort(mr, tmp, m);
    for (uint64_t i = 0, k = 0; k < m; k++) {
        while (i < n && sr[i].key < mr[k].key) i++;
        if (i == n || sr[i].key != mr[k].key) {
            st = fk_fail(err, FK_EFORMAT, "%s: no particle of ID %" PRIu64 " (a member in %s): not that catalogue's snapshot?",
                         snapname, mr[k].key, catname);
            goto done;
        }
        const uint64_t row = (uint64_t)sr[i].a << 32 | sr[i].b, place = (uint64_t)mr[k].a << 32 | mr[k].b;
        memcpy(mpos + 3 * place, s.pos + 3 * row, 3 * sizeof *mpos);
    }
    /* each halo's members by distance from its centre, in the snapshot's unit */
    const double unit = c->pos_unit > 0 ? c->pos_unit : 1, box = s.periodic ? s.box : 0;
    int fail = 0;
#pragma omp parallel
    {
        dist *d = NULL;
        int64_t *ids = NULL;
        uint64_t cap = 0;
#pragma omp for schedule(dynamic, 16)
        for (uint64_t h = 0; h < c->nhalo; h++) {
            const uint64_t len = c->len[h], f = c->first[h];
            if (len < 2) continue;
            if (len > cap) {
                free(d), free(ids);
                d = malloc(len * sizeof *d), ids = malloc(len * sizeof *ids);
                cap = d && ids ? len : 0;
                if (!cap) {
#pragma omp atomic write
                    fail = 1;
                    continue;
                }
            }
            const double cx = c->pos[3 * h] / unit + s.origin, cy = c->pos[3 * h + 1] / unit + s.origin;
            const double cz = c->pos[3 * h + 2] / unit + s.origin;
            for (uint64_t j = 0; j < len; j++) {
                const float *p = mpos + 3 * (f + j);
                const double dx = wrap(p[0] - cx, box), dy = wrap(p[1] - cy, box), dz = wrap(p[2] - cz, box);
                d[j] = (dist){dx * dx + dy * dy + dz * dz, j};
            }
            qsort(d, len, sizeof *d, by_distance);
            for (uint64_t j = 0; j < len; j++) ids[j] = c->ids[f + d[j].k];
            memcpy(c->ids + f, ids, len * sizeof *ids);
        }
        free(d), free(ids);
    }
    if (fail) st = fk_fail(err, FK_ENOMEM, "out of memory to rank the members of %s", catname);
    else c->ranked = 1;
done:
    free(sr), free(mr), free(tmp), free(mpos);
    fk_gsnap_free(&s);
    return st;
}
