/* tree_match_none.c - tree_match.h's GPU calls in a build without CUDA: refused. */
#include "tree_match.h"

#include <string.h>

int fk_gpu_mtree_match(const fk_treecat *a, const uint64_t *at_a, const fk_treecat *b, const uint64_t *at_b,
                       int weight, fk_treelink **links, uint64_t *nlinks, int *cpu, fk_error *err)
{
    (void)a, (void)at_a, (void)b, (void)at_b, (void)weight, (void)links, (void)nlinks, (void)cpu;
    return fk_fail(err, FK_EDEVICE, "this build of fofkit has no GPU support (built without CUDA)");
}

void fk_gpu_mtree_stats(fk_mtree_gpu_stats *s)
{
    memset(s, 0, sizeof *s);
}

int fk_gpu_mtree_floors(const fk_treecat *a, const fk_treecat *b, uint64_t moved, double *put_s, double *copy_s,
                        fk_error *err)
{
    (void)a, (void)b, (void)moved, (void)put_s, (void)copy_s;
    return fk_fail(err, FK_EDEVICE, "this build of fofkit has no GPU support (built without CUDA)");
}
