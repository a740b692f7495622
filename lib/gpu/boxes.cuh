/* boxes.cuh - node bounding boxes of the implicit tree on the GPU (leaves from points, then level by level). */
#ifndef FK_GPU_BOXES_CUH
#define FK_GPU_BOXES_CUH

#include "common.cuh"
#include "kdtree.h"

/* Fills d_box (t->nnodes x 6) with the tight box of each node's points
 * d_pts (n x 3, tree order). */
int fk_gpu_boxes(const float *d_pts, const fk_tree *t, float *d_box, fk_error *err);

#endif
