/* attach.h - hydro runs linked as simulation codes link them: the primary types linked, every particle of a secondary type attached to the group of its nearest primary particle. */
#ifndef FK_ATTACH_H
#define FK_ATTACH_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "hd.h"
#include "kdtree.h"
#include "predicate.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Gadget-2/3/4 and Arepo (FOF_PRIMARY_LINK_TYPES, FOF_SECONDARY_LINK_TYPES)
 * and SWIFT (linking and attaching types) link only the primary types (the
 * dark matter) and attach every particle of a secondary type (gas, stars,
 * black holes) to the group of its nearest primary particle.
 *
 * THE ATTACHING RULE (foflink(1), HYDRO RUNS). For a secondary particle q
 * the candidates are the primary particles p; r2(q, p) is the linking
 * predicate's binary32 separation squared (predicate.h: fk_sep2, minimum
 * image in a periodic box). q's nearest primary is the p of least r2, ties
 * going to the least key (the ID chunk's value, else the stream index):
 * one answer whatever the order of the search, on the CPU, the GPU or any
 * number of MPI ranks. q is attached at a level of linking length l when
 * r2 < R2, R = FK_ATTACH_REACH l rounded to binary32 and R2 = R*R rounded
 * to binary32; else it stays a group of its own at that level.
 *
 * The reach is Gadget-4's (src/fof/fof_nearest.cc,
 * fof_find_nearest_dmparticle): the search starts at a radius of 0.1 l
 * (a gas particle's SPH smoothing length when it has one; streams carry
 * none) and doubles while nothing is found and the radius is below 4 l,
 * so the last radius searched is 0.1 l 2^6 = 6.4 l; a particle with no
 * primary within it keeps no group. Within the radius Gadget takes the
 * nearest, as here.
 *
 * Levels: the nearest primary does not depend on l, and R shrinks with l,
 * so a particle attached at level k is attached at level k-1 to the same
 * primary particle, whose level-k group lies inside its level-(k-1) group:
 * the levels still nest.
 */

#define FK_ATTACH_REACH 6.4
#define FK_TYPES_ALL 7u /* bits 1 << FK_GAS, FK_DARK, FK_STAR */
#define FK_ATTACH_NONE UINT32_MAX

/* A comma-separated list of type names ("dark", "gas,star": gas, dark,
 * star, no empty item) into bits 1u << FK_GAS, FK_DARK, FK_STAR. Returns 0,
 * or -1 (*types 0) for anything else. */
int fk_types_list(const char *arg, unsigned *types);

/* Parses a list of types ("dark", "gas,star", "all", and with allow_none
 * "none") into bits 1u << FK_GAS, FK_DARK, FK_STAR. FK_EINVAL naming opt. */
int fk_types_parse(const char *opt, const char *arg, int allow_none, unsigned *types, fk_error *err);

/* types in words ("dark", "gas,star", "all", "none") into buf; returns buf. */
const char *fk_types_name(unsigned types, char *buf, size_t size);

/* R2 of the rule for linking length l. */
float fk_attach_r2(double l);

/* The nearest primary of the point q (3 floats) among the n = t->n
 * primaries at ppos (n x 3, in t's order) with keys pkey: *best its index
 * (FK_ATTACH_NONE when no r2 < r2max), *best_r2 its r2. The boxes prune
 * only where their bound proves every r2 in them above the best so far, so
 * the answer is the rule's for any walk order. */
FK_HD void fk_attach_walk(fk_layout lay, uint32_t depth, const float *box, const float *ppos, const uint64_t *pkey,
                          const float *q, fk_geom g, float r2max, uint32_t *best, float *best_r2)
{
    uint32_t b = FK_ATTACH_NONE;
    float br2 = r2max;
    uint64_t bkey = 0;
    *best = b;
    *best_r2 = br2;
    if (lay.n == 0) return;
    const float qb[6] = {q[0], q[1], q[2], q[0], q[1], q[2]};
    const uint64_t first_leaf = (UINT64_C(1) << depth) - 1;
    uint64_t stack[2 * FK_TREE_MAX_DEPTH + 4];
    int sp = 0;
    stack[sp++] = 0;
    while (sp) {
        const uint64_t node = stack[--sp];
        double lo2, hi2;
        fk_box_bounds(qb, box + 6 * node, g, &lo2, &hi2);
        if (lo2 > (double)br2) continue;
        if (node >= first_leaf) {
            uint64_t s, e;
            fk_tree_range(lay, node, &s, &e);
            for (uint64_t j = s; j < e; j++) {
                const float r2 = fk_sep2(q, ppos + 3 * j, g);
                if (r2 < br2 || (r2 == br2 && b != FK_ATTACH_NONE && pkey[j] < bkey)) {
                    b = (uint32_t)j;
                    br2 = r2;
                    bkey = pkey[j];
                }
            }
            continue;
        }
        /* the nearer child popped first: the best shrinks sooner */
        const uint64_t c1 = 2 * node + 1, c2 = c1 + 1;
        double l1, l2, h;
        fk_box_bounds(qb, box + 6 * c1, g, &l1, &h);
        fk_box_bounds(qb, box + 6 * c2, g, &l2, &h);
        if (l1 <= l2) {
            stack[sp++] = c2;
            stack[sp++] = c1;
        } else {
            stack[sp++] = c1;
            stack[sp++] = c2;
        }
    }
    *best = b;
    *best_r2 = br2;
}

/* The primaries of a stream: those of the linked types, in stream order. */
typedef struct fk_attach_set {
    uint64_t n;      /* primaries                                        */
    uint32_t *idx;   /* n: their stream indices, increasing              */
    float *pos;      /* n x 3                                            */
    float *vel;      /* n x 3 for 6D, else NULL                          */
    uint64_t *key;   /* n: the tie keys (IDs, else stream indices)       */
    fk_tree tree;    /* over pos in this order: boxes only (kdtree.h)    */
    uint64_t nsec;   /* particles of the attached types                   */
    uint32_t *sec;   /* nsec: their stream indices, increasing            */
    float *secpos;   /* nsec x 3                                          */
} fk_attach_set;

/* Splits the n particles (type[], pos, vel or NULL, ids as <u4 (idw 4) or
 * <u8 (idw 8), or NULL) into the primaries (link_types) with a tree of leaf
 * size leafsize over them in stream order (a tree-ordered stream's order
 * keeps them together), and the particles to attach (attach_types).
 * FK_ENOMEM, FK_EFORMAT for a type above 2. Free with fk_attach_free. */
int fk_attach_split(uint64_t n, const uint8_t *type, const float *pos, const float *vel, const void *ids, int idw,
                    unsigned link_types, unsigned attach_types, uint32_t leafsize, fk_attach_set *s, const char *name,
                    fk_error *err);

void fk_attach_free(fk_attach_set *s);

/* Every query's nearest primary by the rule (near[q], FK_ATTACH_NONE when
 * none has r2 < r2max; nr2[q] its r2) on the CPU with OpenMP (brute: all
 * pairs, the reference; else the tree). */
int fk_attach_nearest_cpu(const fk_tree *t, const float *ppos, const uint64_t *pkey, uint64_t nq, const float *qpos,
                          fk_geom g, float r2max, int brute, uint32_t *near, float *nr2, fk_error *err);

/* The same on the GPU (lib/gpu/attach.cu): the same answers, bit for bit.
 * FK_EDEVICE; FK_EUNSUP in a build without CUDA. */
int fk_gpu_attach_nearest(const fk_tree *t, const float *ppos, const uint64_t *pkey, uint64_t nq, const float *qpos,
                          fk_geom g, float r2max, uint32_t *near, float *nr2, double *seconds, fk_error *err);

/* One level's sinks over the whole stream (n entries, canonical: the
 * lowest stream index of each group) from the primaries' canonical sinks
 * psink (subset indices) and the attachments: secondary q joins
 * near[q]'s group when nr2[q] < r2 (r2 from fk_attach_r2 of the level's
 * l); every other particle is alone. *attached counts the joined.
 * Scratch: 4 bytes per primary. */
int fk_attach_sinks(const fk_attach_set *s, uint64_t n, const uint32_t *psink, const uint32_t *near, const float *nr2,
                    float r2, uint32_t *sink, uint64_t *attached, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
