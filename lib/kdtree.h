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
 *   ranges    node i, at level d = floor(log2(i+1)) and position
 *             k = i + 1 - 2^d in that level, holds the particles
 *             [floor(k n / 2^d), floor((k+1) n / 2^d)); so the two children
 *             split their parent's range in halves (to within one) and
 *             every leaf holds floor(n/2^D) or ceil(n/2^D) >= 1 particles
 *
 * TREE chunk (text, see kv.h):  n, leafsize, depth, nodes, builder
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
    uint32_t leafsize, depth;
    uint64_t nnodes;
    float *box; /* nnodes x 6 */
    char builder[32];
} fk_tree;

/* Depth for n particles and leaf size S (S >= 2). */
uint32_t fk_tree_depth(uint64_t n, uint32_t leafsize);

/* A leaf size near S that fills the leaves of a tree over n particles: S,
 * unless one level less would give at most an eighth of its leaves S + 1
 * and the others S, then S + 1. The 2^D leaves of S hold n / 2^D, which
 * falls to half of S just past a power of two (2^28 particles and a few
 * ghosts: leaves of 16 at S = 32, twice the leaves and leaf pairs of full
 * ones). Only just past: the GPU links a leaf of more than 32 by pieces of
 * 32, so a tree whose leaves all hold 34 linked slower than one of half-full
 * leaves (0.128 s against 0.080 s at 2^27 + 8M on an H100), while 5% of the
 * leaves at 33 linked 2.7x faster than leaves of 16. */
uint32_t fk_tree_leaf_fill(uint64_t n, uint32_t leafsize);

/* Particle range [*start, *end) of node i of a tree over n particles. */
FK_HD void fk_tree_range(uint64_t n, uint64_t i, uint64_t *start, uint64_t *end)
{
    uint64_t i1 = i + 1;
    int d = fk_log2_u64(i1);
    uint64_t k = i1 - (UINT64_C(1) << d);
    *start = (k * n) >> d;
    *end = ((k + 1) * n) >> d;
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

/* Sets t's layout for n particles and leaf size S and allocates t->box
 * (uninitialised); builder names the builder. */
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

/* Writes TREE and TBOX. */
int fk_tree_write(fk_writer *w, const fk_tree *t, fk_error *err);

void fk_tree_free(fk_tree *t);

#ifdef __cplusplus
}
#endif

#endif
