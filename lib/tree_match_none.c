/* tree_match_none.c - tree_match.h's GPU calls in a build without CUDA: refused. */
#include "tree_match.h"

int fk_gpu_mtree_join(const fk_treecat *a, const uint8_t *only, const uint64_t *at_a, const fk_treecat *b,
                      const uint64_t *at_b, uint64_t lo, uint64_t hi, int dense, uint32_t *dest, uint64_t *shared,
                      int *dup, fk_error *err)
{
    (void)a, (void)only, (void)at_a, (void)b, (void)at_b, (void)lo, (void)hi, (void)dense, (void)dest, (void)shared;
    (void)dup;
    return fk_fail(err, FK_EDEVICE, "this build of fofkit has no GPU support (built without CUDA)");
}

int fk_gpu_mtree_floors(const fk_treecat *a, const fk_treecat *b, double *put_s, double *copy_s, fk_error *err)
{
    (void)a, (void)b, (void)put_s, (void)copy_s;
    return fk_fail(err, FK_EDEVICE, "this build of fofkit has no GPU support (built without CUDA)");
}
