/* brute.cu - the all-pairs GPU linker (shared-memory tiles, one thread a particle): an oracle for small inputs. */
#include <string.h>

#include "common.cuh"
#include "gpu.h"
#include "predicate.h"

#define TILE 256

/* Thread i tests every j > i, a tile of TILE particles at a time staged in
 * shared memory, and links friends on the sink array. */
__global__ void __launch_bounds__(TILE) k_brute(const float *__restrict__ pos, const float *__restrict__ vel, uint64_t n,
                                                fk_linkparams p, uint32_t *sink)
{
    __shared__ float sp[3 * TILE], sv[3 * TILE];
    const uint64_t i = blockIdx.x * (uint64_t)TILE + threadIdx.x;
    float pi[3] = {0, 0, 0}, vi[3] = {0, 0, 0};
    if (i < n)
        for (int k = 0; k < 3; k++) {
            pi[k] = pos[3 * i + k];
            if (p.sixd) vi[k] = vel[3 * i + k];
        }
    for (uint64_t t0 = blockIdx.x * (uint64_t)TILE; t0 < n; t0 += TILE) {
        __syncthreads();
        uint64_t j = t0 + threadIdx.x;
        if (j < n)
            for (int k = 0; k < 3; k++) {
                sp[3 * threadIdx.x + k] = pos[3 * j + k];
                if (p.sixd) sv[3 * threadIdx.x + k] = vel[3 * j + k];
            }
        __syncthreads();
        if (i >= n) continue;
        const int m = (int)(n - t0 < TILE ? n - t0 : TILE);
        for (int jj = 0; jj < m; jj++) {
            uint64_t jg = t0 + jj;
            if (jg <= i) continue;
            if (fk_friends(pi, sp + 3 * jj, vi, sv + 3 * jj, &p)) sink_unite(sink, (uint32_t)i, (uint32_t)jg);
        }
    }
}

static __global__ void k_iota(uint32_t *s, uint64_t n)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        s[i] = (uint32_t)i;
}

extern "C" int fk_gpu_link_brute(uint64_t n, const float *pos, const float *vel, const fk_linkopts *o, uint32_t *sink,
                                 fk_linkstats *stats, fk_gputimes *times, fk_error *err)
{
    FK_GPU_ENTER(err);
    int st = fk_link_check(o, err);
    if (st) return st;
    if (n >= (UINT64_C(1) << 31)) return fk_fail(err, FK_EUNSUP, "the GPU linker handles fewer than 2^31 particles");
    const int sixd = o->psi > 0;
    fk_gputimes tz;
    memset(&tz, 0, sizeof tz);
    tz.bytes_needed = n * (sixd ? 28 : 16) + 64;
    if ((st = fk_gpu_reserve(tz.bytes_needed, err))) return st;
    dbuf<float> d_pos, d_vel;
    dbuf<uint32_t> d_sink;
    if ((st = d_pos.alloc(3 * n, err)) || (st = d_sink.alloc(n, err)) || (sixd && (st = d_vel.alloc(3 * n, err))))
        return st;
    timer tm;
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaMemcpy(d_pos.p, pos, 12 * n, cudaMemcpyHostToDevice), err);
    if (sixd) FK_CU(cudaMemcpy(d_vel.p, vel, 12 * n, cudaMemcpyHostToDevice), err);
    if ((st = tm.mark(err))) return st;
    uint64_t groups = 0;
    if (n > 0) {
        unsigned blocks = (unsigned)((n + TILE - 1) / TILE);
        k_iota<<<blocks, TILE>>>(d_sink.p, n);
        FK_LAUNCHED("k_iota", err);
        k_brute<<<blocks, TILE>>>(d_pos.p, d_vel.p, n, fk_link_params(o), d_sink.p);
        FK_LAUNCHED("k_brute", err);
        if ((st = fk_gpu_flatten(d_sink.p, n, &groups, err))) return st;
    }
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaMemcpy(sink, d_sink.p, 4 * n, cudaMemcpyDeviceToHost), err);
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaDeviceSynchronize(), err);
    tz.upload = tm.secs(0, 1);
    tz.link = tm.secs(1, 2);
    tz.download = tm.secs(2, 3);
    if (times) *times = tz;
    if (stats) {
        stats->pair_tests = n * (n ? n - 1 : 0) / 2;
        stats->node_tests = 0;
        stats->dense_nodes = 0;
        stats->groups = groups;
    }
    return FK_OK;
}
