/* attach.cu - hydro runs on the GPU: each secondary particle's nearest primary by the attaching rule, one thread a particle walking the primaries' tree. */
#include <string.h>

#include "attach.h"
#include "common.cuh"

#define ATTACH_BLOCK 128

/* Thread q: query q's nearest primary, by fk_attach_walk (the CPU's code). */
__global__ void __launch_bounds__(ATTACH_BLOCK)
    k_attach(fk_layout lay, uint32_t depth, const float *__restrict__ box, const float *__restrict__ ppos,
             const uint64_t *__restrict__ pkey, const float *__restrict__ qpos, uint64_t nq, fk_geom g, float r2max,
             uint32_t *__restrict__ near, float *__restrict__ nr2)
{
    for (uint64_t q = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; q < nq; q += (uint64_t)gridDim.x * blockDim.x) {
        const float p[3] = {qpos[3 * q], qpos[3 * q + 1], qpos[3 * q + 2]};
        fk_attach_walk(lay, depth, box, ppos, pkey, p, g, r2max, &near[q], &nr2[q]);
    }
}

extern "C" int fk_gpu_attach_nearest(const fk_tree *t, const float *ppos, const uint64_t *pkey, uint64_t nq,
                                     const float *qpos, fk_geom g, float r2max, uint32_t *near, float *nr2,
                                     double *seconds, fk_error *err)
{
    FK_GPU_ENTER(err);
    const uint64_t np = t->n;
    int st = fk_gpu_reserve(np * 20 + t->nnodes * 24 + nq * 20 + 64, err);
    if (st) return st;
    dbuf<float> d_box, d_ppos, d_qpos, d_nr2;
    dbuf<uint64_t> d_key;
    dbuf<uint32_t> d_near;
    if ((st = d_box.alloc(6 * t->nnodes, err)) || (st = d_ppos.alloc(3 * np, err)) || (st = d_key.alloc(np, err)) ||
        (st = d_qpos.alloc(3 * nq, err)) || (st = d_near.alloc(nq, err)) || (st = d_nr2.alloc(nq, err)))
        return st;
    timer tm;
    if ((st = tm.mark(err))) return st;
    if ((st = fk_gpu_put(d_box.p, t->box, 24 * t->nnodes, err)) || (st = fk_gpu_put(d_ppos.p, ppos, 12 * np, err)) ||
        (st = fk_gpu_put(d_key.p, pkey, 8 * np, err)) || (st = fk_gpu_put(d_qpos.p, qpos, 12 * nq, err)))
        return st;
    if (nq > 0) {
        k_attach<<<fk_grid(nq, ATTACH_BLOCK), ATTACH_BLOCK>>>(fk_tree_layout(t), t->depth, d_box.p, d_ppos.p, d_key.p,
                                                              d_qpos.p, nq, g, r2max, d_near.p, d_nr2.p);
        FK_LAUNCHED("k_attach", err);
    }
    if ((st = fk_gpu_get(near, d_near.p, 4 * nq, err)) || (st = fk_gpu_get(nr2, d_nr2.p, 4 * nq, err))) return st;
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
    if (seconds) *seconds = tm.secs(0, 1);
    return FK_OK;
}
