/* tree_fixture.h - the merger-tree tests' catalogues: halos of random sizes over a shuffled pool of particle IDs, dense (1..N) or sparse. */
#ifndef TREE_FIXTURE_H
#define TREE_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tree_cat.h"

/* Include after testrand.h (urand). */

/* npool particle IDs: 1..npool when dense (Gadget's, the matching's table),
 * else spread over 64 bits (the matching's radix sorts). malloc'd. */
static inline int64_t *tree_fixture_pool(uint64_t npool, int dense)
{
    int64_t *pool = malloc((npool ? npool : 1) * sizeof *pool);
    for (uint64_t i = 0; i < npool; i++) pool[i] = dense ? (int64_t)(i + 1) : (int64_t)(i * 2654435761ull + 12345);
    return pool;
}

/* A catalogue of nh halos of 1..maxlen members (a few empty), with unlisted
 * IDs between some of them (the subhalos' layout), taken from a shuffled
 * copy of the pool: halos that run past the pool are cut short. */
static inline void tree_fixture_cat(fk_treecat *c, uint64_t nh, uint64_t maxlen, const int64_t *pool, uint64_t npool)
{
    memset(c, 0, sizeof *c);
    c->nhalo = nh;
    c->len = malloc((nh ? nh : 1) * sizeof *c->len), c->first = malloc((nh ? nh : 1) * sizeof *c->first);
    int64_t *sh = malloc((npool ? npool : 1) * sizeof *sh);
    memcpy(sh, pool, npool * sizeof *sh);
    for (uint64_t i = npool; i > 1; i--) {
        uint64_t j = (uint64_t)(urand() * (double)i);
        int64_t t = sh[i - 1];
        sh[i - 1] = sh[j], sh[j] = t;
    }
    uint64_t at = 0;
    for (uint64_t h = 0; h < nh; h++) {
        uint64_t l = urand() < 0.05 ? 0 : 1 + (uint64_t)(urand() * (double)maxlen);
        if (urand() < 0.3) at += 1 + (uint64_t)(urand() * 5); /* a gap: IDs in no halo */
        if (at > npool) at = npool;
        if (at + l > npool) l = npool - at;
        c->first[h] = at, c->len[h] = l;
        at += l;
    }
    c->nids = at;
    c->ids = sh;
}

/* Two catalogues of na and nb halos over one pool of npool IDs (dense or
 * not); with restrict_a, the A halos to match (about half: malloc'd),
 * else NULL. */
static inline uint8_t *tree_fixture_pair(fk_treecat *a, fk_treecat *b, uint64_t na, uint64_t nb, uint64_t maxlen,
                                         uint64_t npool, int dense, int restrict_a)
{
    int64_t *pool = tree_fixture_pool(npool, dense);
    tree_fixture_cat(a, na, maxlen, pool, npool);
    tree_fixture_cat(b, nb, maxlen, pool, npool);
    free(pool);
    uint8_t *only = NULL;
    if (restrict_a) {
        only = calloc(na ? na : 1, 1);
        for (uint64_t h = 0; h < na; h++) only[h] = urand() < 0.5;
    }
    return only;
}

#endif
