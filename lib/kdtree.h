/* kdtree.h - the balanced kd-tree: its stream layout (TREE, TBOX), node ranges, CPU build and checks. */
#ifndef FK_KDTREE_H
#define FK_KDTREE_H

#include <stdint.h>

#include "error.h"
#include "hd.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The tree is a complete binary tree over the particles in stream order,
 * which the builder rearranges so that every node's particles are
 * contiguous. It is implicit: only the bounding boxes are stored.
 *
 *   n         particles, 0 <= n < 2^32
 *   S         leaf size, >= 2: no leaf holds more than S particles
 *   D         depth: 0 if n <= S, else the least D with ceil(n / 2^D) <= S
 *   nodes     2^(D+1) - 1 (none when n = 0); node 0 is the root, the
 *             children of node i are 2i+1 and 2i+2, the leaves are nodes
 *             2^D - 1 .. 2^(D+1) - 2
 *   u         unit: 1, or S (every tree built now; the TREE chunk's "unit")
 *   U         units: ceil(n / u)
 *   ranges    node i, at level d = floor(log2(i+1)) and position
 *             k = i + 1 - 2^d in that level, holds the units
 *             [floor(k U / 2^d), floor((k+1) U / 2^d)), that is the particles
 *             [min(n, u floor(k U / 2^d)), min(n, u floor((k+1) U / 2^d)));
 *             so the two children split their parent's units in halves (to
 *             within one). With u = S (packed) every leaf holds S particles,
 *             but the one holding the last (fewer) and those holding none:
 *             U > 2^(D-1), so every node above the leaves holds a unit and
 *             only leaves are empty, each beside a sibling that is not. An
 *             empty leaf's box is +inf, +inf, +inf, -inf, -inf, -inf. With
 *             u = 1 (streams written before "unit") every leaf holds
 *             floor(n/2^D) or ceil(n/2^D) >= 1 particles: just past a power
 *             of two, half of S, which doubles the leaves and leaf pairs a
 *             linker tests; packed leaves stay full for any n.
 *
 * TREE chunk (text, see kv.h):  n, leafsize, unit (absent: 1), depth, nodes,
 *             builder. A reader that predates "unit" reads a packed tree as
 *             halves and checks it: it refuses the tree (an empty leaf's
 *             box is not finite, a leaf's box misses particles), or every
 *             box holds its node of the halves layout too and its links are
 *             right (the layouts agree at n = S 2^D).
 * TBOX chunk: <f4, one row per node: lo_x lo_y lo_z hi_x hi_y hi_z, a box
 *             containing every particle of the node (builders write the
 *             tight box; readers require only containment).
 *
 * A builder chooses how to split (median along the widest axis here, Hilbert
 * order on the GPU); the linkers need only the layout above.
 */

#define FK_TREE_MAX_DEPTH 31

typedef struct fk_tree {
    uint64_t n;
    uint32_t leafsize, depth, unit;
    uint64_t nnodes;
    float *box; /* nnodes x 6 */
    char builder[32];
} fk_tree;

/* Depth for n particles and leaf size S (S >= 2). */
uint32_t fk_tree_depth(uint64_t n, uint32_t leafsize);

/* Where the particles of a tree's nodes lie: n, the unit u and units U
 * (above), what fk_tree_range needs (U precomputed: no division there). */
typedef struct fk_layout {
    uint64_t n, unit, units;
} fk_layout;

FK_HD fk_layout fk_layout_of(uint64_t n, uint64_t unit)
{
    fk_layout l = {n, unit, (n + unit - 1) / unit};
    return l;
}

FK_HD fk_layout fk_tree_layout(const fk_tree *t)
{
    return fk_layout_of(t->n, t->unit ? t->unit : 1);
}

/* Particle range [*start, *end) of node i of a tree of layout l. */
FK_HD void fk_tree_range(fk_layout l, uint64_t i, uint64_t *start, uint64_t *end)
{
    uint64_t i1 = i + 1;
    int d = fk_log2_u64(i1);
    uint64_t k = i1 - (UINT64_C(1) << d);
    const uint64_t s = l.unit * ((k * l.units) >> d), e = l.unit * (((k + 1) * l.units) >> d);
    *start = s < l.n ? s : l.n;
    *end = e < l.n ? e : l.n;
}

/* The node after i's subtree in depth-first order (left before right), or
 * 0 when i's subtree ends the walk. Walking from fk_tree_next(i) visits the
 * subtrees whose particles all come after i's, in stream order. */
FK_HD uint64_t fk_tree_next(uint64_t i)
{
    /* Numbered from 1 (h = i + 1), a left child is even and a node's parent
     * is h / 2: climb past the trailing 1 bits (right children) to the first
     * left child, whose right sibling h' + 1 is node h' (0: the root passed). */
    const uint64_t h = i + 1;
#ifdef __CUDA_ARCH__
    return h >> (__ffsll((long long)~h) - 1);
#else
    return h >> __builtin_ctzll(~h);
#endif
}

/* Builds the tree over pos (n x 3) on the CPU with OpenMP: sets t (t->box
 * allocated) and rearranges pos into tree order; perm[new] = old position
 * (allocated, n entries). Median split along the widest axis of each node's
 * bounding box, by selection: O(n log n). */
int fk_tree_build_cpu(float *pos, uint64_t n, uint32_t leafsize, fk_tree *t, uint32_t **perm, fk_error *err);

/* Sets t's layout for n particles and leaf size S, packed (unit S), and
 * allocates t->box (uninitialised); builder names the builder. */
int fk_tree_alloc(fk_tree *t, uint64_t n, uint32_t leafsize, const char *builder, fk_error *err);

/* Computes every node's tight bounding box from pos in tree order. */
void fk_tree_bounds(fk_tree *t, const float *pos);

/* Checks that t is a consistent tree over pos (n x 3 in tree order): the
 * layout fields agree, every particle lies in its leaf's box and every box
 * contains its children's. */
int fk_tree_check(const fk_tree *t, const float *pos, const char *name, fk_error *err);

/* TREE text for t (caller frees *text). */
int fk_tree_format(const fk_tree *t, char **text, fk_error *err);

/* Parses TREE text into t's layout fields (box left NULL). */
int fk_tree_parse(const char *text, fk_tree *t, const char *name, fk_error *err);

/* Gives TREE and TBOX to w (fk_writer_give: written by the writer's thread,
 * in order); t's boxes go with TBOX (t->box is NULL after). */
int fk_tree_give(fk_writer *w, fk_tree *t, fk_error *err);

void fk_tree_free(fk_tree *t);

#ifdef __cplusplus
}
#endif

#endif
