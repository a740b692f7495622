/* tree_build.h - merger trees over a snapshot series: descendants, progenitors, main branches and tree roots from the links of tree_match. */
#ifndef FK_TREE_BUILD_H
#define FK_TREE_BUILD_H

#include <stdint.h>

#include "error.h"
#include "tree_cat.h"
#include "tree_match.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Halos are numbered across the series: halo h of snapshot s is node
 * base[s] + h (its Consistent-Trees id). The rules:
 *   descendant  the halo of the next snapshot with the highest score
 *               (tree_match.h; ties: more shared members, then the lower
 *               row); a halo that shares nothing with the next snapshot is
 *               linked to its best in the snapshots after, up to skip
 *               snapshots later (SubLink skips one)
 *   main progenitor  of the progenitors (the halos whose descendant it is),
 *               the one with the most massive history behind it (De Lucia
 *               & Blaizot 2007, as SubLink): the largest sum of masses
 *               along its own main branch; ties: the higher mass, then the
 *               lower node
 *   merger      a halo with two or more progenitors; major when a
 *               progenitor has at least 0.3 of the main one's mass
 *               (Consistent-Trees' scale_of_last_MM)
 *   root        the end of the descendant chain (a halo of the last
 *               snapshot, or one that leaves no descendant)
 * Nothing is corrected: a fly-by, whose halo leaves members in another
 * without merging, stays as its links say (its own descendant, and its
 * link to the other among the progenitor links).
 */

typedef struct fk_treenode {
    int64_t desc;          /* descendant node, -1 none                     */
    uint64_t desc_count;   /* members shared with it                       */
    double desc_score;     /* the score that chose it                      */
    int64_t mainprog;      /* main progenitor node, -1 none                */
    int64_t root;          /* the tree's root node                         */
    uint32_t nprog;        /* progenitors                                  */
    double hist;           /* mass summed along its main branch            */
    double last_mm;        /* expansion factor of its branch's last major merger, 0 none */
    int64_t df, bf;        /* depth-first and breadth-first order, over every tree */
    int64_t next_coprog;   /* depth-first id of the next progenitor of its descendant, -1 */
    int64_t last_prog;     /* last depth-first id of its subtree           */
    int64_t last_mainleaf; /* depth-first id of its main branch's first halo */
} fk_treenode;

/* One table of links, from snapshot from to snapshot to. */
typedef struct fk_treestep {
    int from, to;
    fk_treelink *links;
    uint64_t n;
} fk_treestep;

typedef struct fk_mtree {
    int nsnap;
    fk_treecat *cat;      /* nsnap catalogues, their IDs freed once linked */
    int *snapnum;         /* nsnap: the snapshot numbers                 */
    uint64_t *base;       /* nsnap + 1: first node of each snapshot      */
    fk_treenode *node;    /* base[nsnap], after fk_mtree_finish           */
    int64_t *order;       /* base[nsnap]: nodes tree by tree, depth-first */
    int64_t *tree_start;  /* ntrees + 1: each tree's first place in order */
    uint64_t ntrees;
    fk_treestep *steps;   /* every link table made                       */
    int nsteps;
    int gpu;              /* match on the GPU (fk_mtree_match_gpu); set after fk_mtree_init */
    fk_mtree_matcher match; /* else this matcher when set (under mpirun fk_dist_mtree_match) */
} fk_mtree;

/* An empty tree of nsnap snapshots. FK_ENOMEM. */
int fk_mtree_init(fk_mtree *t, int nsnap, fk_error *err);

/* Takes catalogue c (moved into t: c is zeroed) as snapshot s (numbered
 * snapnum), after snapshot s - 1 was added. FK_EFORMAT when its
 * expansion factor is not above the one before (out of time order: the
 * message names both files). */
int fk_mtree_add(fk_mtree *t, int s, int snapnum, fk_treecat *c, const char *name, const char *prev_name, fk_error *err);

/* Links snapshot s to snapshot s + g (both added, their IDs still held):
 * g = 1 every halo of s, g > 1 the halos of s still without a descendant.
 * The links are kept (t->steps) and the descendants chosen. *shared: the
 * particles found in both. FK_ENOMEM, FK_EFORMAT (tree_match). */
int fk_mtree_link(fk_mtree *t, int s, int g, int weight, const char *name_s, const char *name_g, uint64_t *shared,
                 fk_error *err);

/* Frees snapshot s's member IDs (once it is linked to every later
 * snapshot it may be). Can't fail. */
void fk_mtree_drop_ids(fk_mtree *t, int s);

/* Progenitors, main progenitors, roots, last major mergers and the
 * depth-first order of every tree (main branch first, then the other
 * progenitors by their history, largest first; trees by root: the last
 * snapshot first, then by row). FK_ENOMEM. */
int fk_mtree_finish(fk_mtree *t, fk_error *err);

/* The snapshot of node g. Can't fail. */
int fk_mtree_snap_of(const fk_mtree *t, int64_t g);

void fk_mtree_free(fk_mtree *t);

#ifdef __cplusplus
}
#endif

#endif
