/* tree_ctrees.h - merger trees written as Consistent-Trees ASCII (tree_*.dat), and the progenitor links as a table. */
#ifndef FK_TREE_CTREES_H
#define FK_TREE_CTREES_H

#include <stdio.h>

#include "error.h"
#include "tree_build.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The Consistent-Trees ASCII layout (Behroozi et al. 2013, ApJ 763, 18;
 * the tree_0_0_0.dat files that ytree's ConsistentTreesArbor, SAGE's
 * consistent_trees_ascii reader and UniverseMachine read):
 *   line 1     "#scale(0) id(1) desc_scale(2) ..." the column names, numbered
 *   '#' lines  "Omega_M = ..; Omega_L = ..; h0 = ..", "Full box size = B Mpc/h",
 *              then "Name: description (unit)." for every column (ytree takes
 *              each unit from the parentheses), and "Consistent Trees" named
 *   a line     the number of trees
 *   per tree   "#tree ROOT_ID", then its halos, one line each, depth-first
 *              from the root (the main branch first)
 * Columns 0-34 are Consistent-Trees' own, in its order; 35 on are the
 * catalogue's: Len (members), M_fof (the catalogue's mass), M200c, M200b,
 * M500c (0 without SO masses), Desc_count and Desc_score (the members
 * shared with the descendant and its score), Mainprog_id (the main
 * progenitor's id, -1 none). Values: tree_cat.h's units.
 */

/* Writes t (fk_mtree_finish done) to f; kind names what the halos are in
 * the header. offsets (NULL: not wanted; else t->ntrees entries) get the
 * byte offset in f of each tree's first halo line (f must then be a
 * regular file written from its start). Returns FK_OK, or FK_EINVAL when
 * offsets are asked of a stream without positions; a failed write is the
 * caller's to find, on f (ferror, or at its flush and close, as
 * prog_commit does). */
int fk_mtree_write_ctrees(const fk_mtree *t, FILE *f, const char *generator, const char *kind, int64_t *offsets,
                          fk_error *err);

/* Consistent-Trees' index files of a tree file named treefile (its name
 * as locations.dat gives it, relative to the directory of both): into loc
 * "#TreeRootID FileID Offset Filename" and a line a tree (root id, file 0,
 * the offset of fk_mtree_write_ctrees, treefile); into forests
 * "#TreeRootID ForestID" and a line a tree (each tree its own forest: the
 * trees of halos and of subhalos are not joined here). SAGE reads its trees
 * through both; ytree's loader of locations.dat through the first. Returns
 * FK_OK (failed writes as above). */
int fk_mtree_write_locations(const fk_mtree *t, FILE *loc, FILE *forests, const char *treefile, const int64_t *offsets,
                             fk_error *err);

/* Every link of every step made, one line each: from_snap prog to_snap
 * desc count score is_desc is_main (is_desc: desc is prog's descendant;
 * is_main: prog is desc's main progenitor), '#' header lines first. */
int fk_mtree_write_links(const fk_mtree *t, FILE *f, const char *generator, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
