/* treechunk.c - the kd-tree a stream carries: its TREE and TBOX chunks taken, parsed and checked against the particles. */
#include "treechunk.h"

#include <inttypes.h>
#include <string.h>

int fk_tree_from_chunks(fk_want *tree, fk_want *tbox, const fk_snap *snap, const float *pos, const char *name,
                        fk_tree *t, fk_error *err)
{
    memset(t, 0, sizeof *t);
    if (!tree->nlevels) return fk_fail(err, FK_EMISSING, "%s: stream has no kd-tree (run kdbuild first)", name);
    if (tree->found > 1) return fk_fail(err, FK_EFORMAT, "%s: stream has two TREE chunks", name);
    int st = fk_tree_parse(tree->data[0], t, name, err);
    if (st) return st;
    if (tbox->nlevels && tbox->seq[0] < tree->seq[0])
        return fk_fail(err, FK_EFORMAT, "%s: TBOX chunk without a TREE chunk before it", name);
    if (!tbox->nlevels) return fk_fail(err, FK_EMISSING, "%s: stream has a TREE chunk but no TBOX chunk", name);
    if (tbox->chunk[0].nrows != t->nnodes)
        return fk_fail(err, FK_EFORMAT, "%s: TBOX chunk does not hold %" PRIu64 " boxes of 6 <f4", name, t->nnodes);
    t->box = tbox->data[0];
    tbox->data[0] = NULL; /* the tree owns it now */
    if (t->n != snap->n)
        return fk_fail(err, FK_EFORMAT, "%s: the tree holds %" PRIu64 " particles, the stream %" PRIu64, name, t->n,
                       snap->n);
    if ((st = fk_snap_check_positions(snap, pos, name, err))) return st;
    return fk_tree_check(t, pos, name, err);
}
