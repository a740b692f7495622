/* treechunk.h - the kd-tree a stream carries: its TREE and TBOX chunks taken, parsed and checked against the particles. */
#ifndef FK_TREECHUNK_H
#define FK_TREECHUNK_H

#include <stdint.h>

#include "error.h"
#include "filter.h"
#include "kdtree.h"
#include "snap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tree of a stream whose chunks fk_filter_read loaded into tree (TREE,
 * text) and tbox (TBOX, <f4 x 6), for the snap->n particles at pos (stream
 * order, which is the tree's): parsed into *t, which takes tbox's payload
 * (freed with fk_tree_free, also after a failure), and checked, with the
 * positions (fk_snap_check_positions), against the particles. FK_EMISSING
 * for a stream without a tree or boxes, FK_EFORMAT for a damaged one, every
 * message naming name. */
int fk_tree_from_chunks(fk_want *tree, fk_want *tbox, const fk_snap *snap, const float *pos, const char *name,
                        fk_tree *t, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
