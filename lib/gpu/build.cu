/* build.cu - the tree built on the GPU: Hilbert keys, one CUB radix sort, a gather, then node boxes. */
#include <string.h>

#include <cub/device/device_radix_sort.cuh>

#include "boxes.cuh"
#include "bigmem.h"
#include "common.cuh"
#include "gpu.h"
#include "internal.cuh"

/* Bits per axis: 48-bit keys, six passes of the radix sort instead of the
 * eight of 63-bit keys. A cell is 2^-16 of the box: at 2^31 particles,
 * 1/50 of the mean spacing (ties keep their input order: the sort is stable). */
#define KEY_BITS 16

/* The Hilbert index of the cell (x, y, z) of a 2^KEY_BITS grid (J. Skilling, "Programming the Hilbert curve",
 * AIP Conf. Proc. 707, 2004: axes to transposed index, then the bits interleaved). Consecutive indices
 * are face-adjacent cells, so a run of particles in this order, cut anywhere, stays compact: leaves of
 * the count-balanced tree get small boxes. (Morton order jumps across the box at cell boundaries;
 * measured on a 1M mock at leaf 16, the CPU linker did 2.2x the pair tests of a median-split tree on
 * Morton order and 1.2x on Hilbert order.) */
__device__ __forceinline__ uint64_t hilbert3(uint32_t x0, uint32_t x1, uint32_t x2)
{
    uint32_t X[3] = {x0, x1, x2};
    const uint32_t M = 1u << (KEY_BITS - 1);
    for (uint32_t Q = M; Q > 1; Q >>= 1) {
        uint32_t P = Q - 1;
#pragma unroll
        for (int i = 0; i < 3; i++) {
            if (X[i] & Q) {
                X[0] ^= P;
            } else {
                uint32_t t = (X[0] ^ X[i]) & P;
                X[0] ^= t;
                X[i] ^= t;
            }
        }
    }
    X[1] ^= X[0];
    X[2] ^= X[1];
    uint32_t t = 0;
    for (uint32_t Q = M; Q > 1; Q >>= 1)
        if (X[2] & Q) t ^= Q - 1;
    uint64_t key = 0;
#pragma unroll
    for (int i = 0; i < 3; i++) X[i] ^= t;
    for (int bit = KEY_BITS - 1; bit >= 0; bit--)
        key = (key << 3) | ((X[0] >> bit & 1) << 2) | ((X[1] >> bit & 1) << 1) | (X[2] >> bit & 1);
    return key;
}

/* Bounds of the points, as order-preserving integers for atomicMin/Max. */
__device__ __forceinline__ int f2o(float f)
{
    int i = __float_as_int(f);
    return i >= 0 ? i : i ^ 0x7fffffff;
}
__host__ __device__ inline float o2f(int i)
{
#ifdef __CUDA_ARCH__
    return __int_as_float(i >= 0 ? i : i ^ 0x7fffffff);
#else
    int j = i >= 0 ? i : i ^ 0x7fffffff;
    float f;
    memcpy(&f, &j, 4);
    return f;
#endif
}

__global__ void k_bounds(const float *__restrict__ pos, uint64_t n, int *out /* lo[3], hi[3] */)
{
    int lo[3] = {INT_MAX, INT_MAX, INT_MAX}, hi[3] = {INT_MIN, INT_MIN, INT_MIN};
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        for (int k = 0; k < 3; k++) {
            int v = f2o(pos[3 * i + k]);
            lo[k] = min(lo[k], v);
            hi[k] = max(hi[k], v);
        }
    for (int k = 0; k < 3; k++) {
        for (int o = 16; o > 0; o >>= 1) {
            lo[k] = min(lo[k], __shfl_down_sync(0xffffffffu, lo[k], o));
            hi[k] = max(hi[k], __shfl_down_sync(0xffffffffu, hi[k], o));
        }
        if ((threadIdx.x & 31) == 0) {
            atomicMin(out + k, lo[k]);
            atomicMax(out + 3 + k, hi[k]);
        }
    }
}

/* One thread a particle: its Hilbert key in the quantisation cube. */
__global__ void k_keys(const float *__restrict__ pos, uint64_t n, float lo0, float lo1, float lo2, float scale,
                       uint64_t *__restrict__ keys, uint32_t *__restrict__ idx)
{
    const float lo[3] = {lo0, lo1, lo2};
    const float top = (float)((1 << KEY_BITS) - 1);
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t q[3];
        for (int k = 0; k < 3; k++) q[k] = (uint32_t)fminf(fmaxf((pos[3 * i + k] - lo[k]) * scale, 0.0f), top);
        keys[i] = hilbert3(q[0], q[1], q[2]);
        idx[i] = (uint32_t)i;
    }
}

__global__ void k_gather(const float *__restrict__ pos, const uint32_t *__restrict__ idx, uint64_t n,
                         float *__restrict__ out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t j = idx[i];
        out[3 * i] = pos[3 * j];
        out[3 * i + 1] = pos[3 * j + 1];
        out[3 * i + 2] = pos[3 * j + 2];
    }
}

static size_t sort_temp_bytes(uint64_t n)
{
    size_t bytes = 0;
    cub::DoubleBuffer<uint64_t> k(nullptr, nullptr);
    cub::DoubleBuffer<uint32_t> v(nullptr, nullptr);
    cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, (int)n, 0, 3 * KEY_BITS);
    return bytes;
}

uint64_t fk_gpu_build_scratch(uint64_t n)
{
    return n * (8 + 8 + 4) + sort_temp_bytes(n) + 64; /* two key buffers, one spare index buffer */
}

uint64_t fk_gpu_build_peak(uint64_t n)
{
    const uint64_t sort = fk_gpu_build_scratch(n), gather = 12 * n;
    return sort > gather ? sort : gather;
}

/* The Hilbert keys of d_pos sorted: d_perm[new] = old. Its buffers are
 * freed when it returns, before the caller gathers the positions. */
static int sort_keys(const float *d_pos, uint64_t n, double lo, double span, uint32_t *d_perm, fk_error *err)
{
    dbuf<uint64_t> d_k1, d_k2;
    dbuf<uint32_t> d_v1;
    dbuf<int> d_bounds;
    dbuf<unsigned char> d_temp;
    size_t temp = sort_temp_bytes(n);
    int s;
    if ((s = d_k1.alloc(n, err)) || (s = d_k2.alloc(n, err)) || (s = d_v1.alloc(n, err)) ||
        (s = d_bounds.alloc(6, err)) || (s = d_temp.alloc(temp, err)))
        return s;
    float qlo[3] = {(float)lo, (float)lo, (float)lo}, qspan = (float)span;
    if (!(span > 0)) { /* quantise in the cube around the particles' bounds */
        int init[6] = {INT_MAX, INT_MAX, INT_MAX, INT_MIN, INT_MIN, INT_MIN}, b[6];
        FK_CU(cudaMemcpy(d_bounds.p, init, sizeof init, cudaMemcpyHostToDevice), err);
        k_bounds<<<fk_grid(n, 256), 256>>>(d_pos, n, d_bounds.p);
        FK_LAUNCHED("k_bounds", err);
        FK_CU(cudaMemcpy(b, d_bounds.p, sizeof b, cudaMemcpyDeviceToHost), err);
        qspan = 0;
        for (int k = 0; k < 3; k++) {
            qlo[k] = o2f(b[k]);
            qspan = fmaxf(qspan, o2f(b[3 + k]) - qlo[k]);
        }
    }
    float scale = qspan > 0 ? (float)(1 << KEY_BITS) / qspan : 0.0f;
    k_keys<<<fk_grid(n, 256), 256>>>(d_pos, n, qlo[0], qlo[1], qlo[2], scale, d_k1.p, d_perm);
    FK_LAUNCHED("k_keys", err);
    /* Sorted indices end in d_perm: it is one half of the index double buffer
     * (the first: an even number of passes, six for 48-bit keys, ends there). */
    cub::DoubleBuffer<uint64_t> keys(d_k1.p, d_k2.p);
    cub::DoubleBuffer<uint32_t> vals(d_perm, d_v1.p);
    FK_CU(cub::DeviceRadixSort::SortPairs(d_temp.p, temp, keys, vals, (int)n, 0, 3 * KEY_BITS), err);
    if (vals.Current() != d_perm) FK_CU(cudaMemcpy(d_perm, vals.Current(), 4 * n, cudaMemcpyDeviceToDevice), err);
    return FK_OK;
}

int fk_gpu_build_dev(const float *d_pos, const fk_tree *t, double lo, double span, float *d_sorted,
                     uint32_t *d_perm, float *d_box, fk_error *err)
{
    const uint64_t n = t->n;
    if (n == 0) return FK_OK;
    if (n >= (UINT64_C(1) << 31)) return fk_fail(err, FK_EUNSUP, "the GPU tree builder handles fewer than 2^31 particles");
    int s = sort_keys(d_pos, n, lo, span, d_perm, err);
    if (s) return s;
    k_gather<<<fk_grid(n, 256), 256>>>(d_pos, d_perm, n, d_sorted);
    FK_LAUNCHED("k_gather", err);
    return fk_gpu_boxes(d_sorted, t, d_box, err);
}

int fk_gpu_build_dev(const float *d_pos, const fk_tree *t, double lo, double span, dbuf<float> &d_sorted,
                     uint32_t *d_perm, float *d_box, fk_error *err)
{
    const uint64_t n = t->n;
    if (n >= (UINT64_C(1) << 31)) return fk_fail(err, FK_EUNSUP, "the GPU tree builder handles fewer than 2^31 particles");
    int s = n ? sort_keys(d_pos, n, lo, span, d_perm, err) : FK_OK;
    if (s || (!d_sorted.p && (s = d_sorted.alloc(3 * n, err))) || n == 0) return s;
    k_gather<<<fk_grid(n, 256), 256>>>(d_pos, d_perm, n, d_sorted.p);
    FK_LAUNCHED("k_gather", err);
    return fk_gpu_boxes(d_sorted.p, t, d_box, err);
}

extern "C" uint64_t fk_gpu_build_bytes(uint64_t n, uint32_t leafsize)
{
    uint64_t nnodes = n ? (UINT64_C(2) << fk_tree_depth(n, leafsize)) - 1 : 0;
    return n * (12 + 4) + nnodes * 24 + fk_gpu_build_peak(n); /* d_pos, d_perm, boxes; keys, then d_sorted */
}

extern "C" int fk_gpu_build(float *pos, uint64_t n, uint32_t leafsize, double lo, double span, fk_tree *t,
                            uint32_t **perm, fk_gputimes *times, fk_error *err)
{
    FK_GPU_ENTER(err);
    *perm = NULL;
    if (n >= (UINT64_C(1) << 31)) return fk_fail(err, FK_EUNSUP, "the GPU tree builder handles fewer than 2^31 particles");
    fk_gputimes tz;
    memset(&tz, 0, sizeof tz);
    tz.bytes_needed = fk_gpu_build_bytes(n, leafsize);
    int st = fk_gpu_reserve_for(n, [&](uint64_t m) { return fk_gpu_build_bytes(m, leafsize); }, err);
    if (st || (st = fk_tree_alloc(t, n, leafsize, "gpu-hilbert", err))) return st;
    uint32_t *h_perm = (uint32_t *)fk_big_alloc(n * sizeof *h_perm);
    if (!h_perm) {
        fk_tree_free(t);
        return fk_fail(err, FK_ENOMEM, "out of memory for the permutation");
    }
    st = [&]() -> int { /* device buffers live in this scope: freed on every path */
        dbuf<float> d_pos, d_sorted, d_box; /* d_sorted allocated once the keys are freed */
        dbuf<uint32_t> d_perm;
        int s;
        if ((s = d_pos.alloc(3 * n, err)) || (s = d_perm.alloc(n, err)) || (s = d_box.alloc(6 * t->nnodes, err)))
            return s;
        timer tm;
        if ((s = tm.mark(err))) return s;
        /* pinning counts as upload time */
        pinned pin_pos(pos, 12 * n), pin_perm(h_perm, 4 * n), pin_box(t->box, 24 * t->nnodes);
        FK_CU(cudaMemcpy(d_pos.p, pos, 12 * n, cudaMemcpyHostToDevice), err);
        if ((s = tm.mark(err)) || (s = fk_gpu_build_dev(d_pos.p, t, lo, span, d_sorted, d_perm.p, d_box.p, err)) ||
            (s = tm.mark(err)))
            return s;
        FK_CU(cudaMemcpy(pos, d_sorted.p, 12 * n, cudaMemcpyDeviceToHost), err);
        FK_CU(cudaMemcpy(h_perm, d_perm.p, 4 * n, cudaMemcpyDeviceToHost), err);
        FK_CU(cudaMemcpy(t->box, d_box.p, 24 * t->nnodes, cudaMemcpyDeviceToHost), err);
        if ((s = tm.mark(err))) return s;
        FK_CU(cudaDeviceSynchronize(), err);
        tz.upload = tm.secs(0, 1);
        tz.build = tm.secs(1, 2);
        tz.download = tm.secs(2, 3);
        return FK_OK;
    }();
    if (st) {
        free(h_perm);
        fk_tree_free(t);
        return st;
    }
    if (times) *times = tz;
    *perm = h_perm;
    return FK_OK;
}
