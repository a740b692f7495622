/* boxes.cu - node bounding boxes of the implicit tree on the GPU (leaves from points, then level by level). */
#include "boxes.cuh"

/* One thread a leaf: the box of its (at most a few dozen) points; an empty
 * leaf's is +inf, -inf. */
__global__ void k_leaf_boxes(const float *__restrict__ pts, fk_layout l, uint64_t first, uint64_t nleaves,
                             float *__restrict__ box)
{
    for (uint64_t L = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; L < nleaves;
         L += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t s, e;
        fk_tree_range(l, first + L, &s, &e);
        float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (uint64_t i = s; i < e; i++)
            for (int k = 0; k < 3; k++) {
                float x = pts[3 * i + k];
                lo[k] = fminf(lo[k], x);
                hi[k] = fmaxf(hi[k], x);
            }
        float *b = box + 6 * (first + L);
        for (int k = 0; k < 3; k++) {
            b[k] = lo[k];
            b[k + 3] = hi[k];
        }
    }
}

/* One warp a leaf (for leaves of 16 points or more): the lanes read the
 * points side by side, then the warp takes the minima and maxima. */
__global__ void k_leaf_boxes_warp(const float *__restrict__ pts, fk_layout l, uint64_t first, uint64_t nleaves,
                                  float *__restrict__ box)
{
    const int lane = threadIdx.x & 31;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t nwarps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    for (uint64_t L = warp; L < nleaves; L += nwarps) {
        uint64_t s, e;
        fk_tree_range(l, first + L, &s, &e);
        float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (uint64_t i = s + lane; i < e; i += 32)
            for (int k = 0; k < 3; k++) {
                float x = pts[3 * i + k];
                lo[k] = fminf(lo[k], x);
                hi[k] = fmaxf(hi[k], x);
            }
        for (int o = 16; o > 0; o >>= 1)
            for (int k = 0; k < 3; k++) {
                lo[k] = fminf(lo[k], __shfl_xor_sync(0xffffffffu, lo[k], o));
                hi[k] = fmaxf(hi[k], __shfl_xor_sync(0xffffffffu, hi[k], o));
            }
        const float v = lane == 0 ? lo[0] : lane == 1 ? lo[1] : lane == 2 ? lo[2] : lane == 3 ? hi[0] : lane == 4 ? hi[1] : hi[2];
        if (lane < 6) box[6 * (first + L) + lane] = v;
    }
}

/* One thread a node of one level: the union of its children's boxes. */
__global__ void k_level_boxes(float *__restrict__ box, uint64_t lo, uint64_t hi)
{
    for (uint64_t i = lo + blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < hi;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const float *l = box + 6 * (2 * i + 1), *r = box + 6 * (2 * i + 2);
        float *b = box + 6 * i;
        for (int k = 0; k < 3; k++) {
            b[k] = fminf(l[k], r[k]);
            b[k + 3] = fmaxf(l[k + 3], r[k + 3]);
        }
    }
}

int fk_gpu_boxes(const float *d_pts, const fk_tree *t, float *d_box, fk_error *err)
{
    if (t->nnodes == 0) return FK_OK;
    const uint64_t first = (UINT64_C(1) << t->depth) - 1, nleaves = t->nnodes - first;
    if (t->n >= 16 * nleaves)
        k_leaf_boxes_warp<<<fk_grid(nleaves, 8), 256>>>(d_pts, fk_tree_layout(t), first, nleaves, d_box);
    else
        k_leaf_boxes<<<fk_grid(nleaves, 256), 256>>>(d_pts, fk_tree_layout(t), first, nleaves, d_box);
    FK_LAUNCHED("k_leaf_boxes", err);
    for (int d = (int)t->depth - 1; d >= 0; d--) {
        uint64_t lo = (UINT64_C(1) << d) - 1, hi = (UINT64_C(2) << d) - 1;
        k_level_boxes<<<fk_grid(hi - lo, 256), 256>>>(d_box, lo, hi);
        FK_LAUNCHED("k_level_boxes", err);
    }
    return FK_OK;
}
