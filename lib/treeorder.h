/* treeorder.h - a stream put into tree order: the tree built over its positions, every per-particle chunk permuted, the rest passed on. */
#ifndef FK_TREEORDER_H
#define FK_TREEORDER_H

#include <stdint.h>

#include "error.h"
#include "kdtree.h"
#include "snap.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds the tree over the n positions at pos (checked already), putting
 * them in tree order in place: *t and the permutation *perm (tree position
 * -> stream index, malloc'd). kdbuild's builders on the CPU and the GPU take
 * this shape through a ctx. */
typedef int (*fk_treeorder_build_fn)(void *ctx, float *pos, uint64_t n, fk_tree *t, uint32_t **perm, fk_error *err);

/* Reads the rest of r (after SNAP, for snap's particles) and writes it to w
 * in tree order: POS checked, the tree built over it by build, POS written
 * with TREE and TBOX right after it (so that the next stage can link while
 * the rest comes), and every particle chunk permuted (those before POS held
 * until the order is known); other chunks pass on as they come.
 * *reorder_s gets the seconds spent permuting. FK_EFORMAT (naming name) for
 * a stream in tree order already (TREE or SINK), without POS or with two,
 * or with a chunk of the wrong row count; FK_ENOMEM; and the builder's
 * failures. */
int fk_treeorder(fk_reader *r, fk_writer *w, const fk_snap *snap, const char *name, fk_treeorder_build_fn build,
                 void *ctx, double *reorder_s, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
