/* number.cu - groups numbered on the GPU as groups.c numbers them: sizes and lowest indices by atomics, the kept groups sorted by CUB, the numbers scattered into the original order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "common.cuh"
#include "gpu.h"
#include "gpuarrays.h"
#include "internal.cuh"

/*
 * fk_groups_number (groups.c) with ids = perm, on device-resident arrays:
 *   k_num_members  size[r] and minid[r] of the group whose sink is r: the
 *                  lanes of a warp sharing a sink (tree order keeps a
 *                  group's members together) count and take their least
 *                  index first, one lane adds them with atomics
 *   k_num_counts   over the sinks (root[r] == r): groups found, kept (size
 *                  >= minsize), their members and the largest, by block
 *                  reductions
 *   DeviceSelect   the kept sinks, in increasing order
 *   k_num_keys     each kept group's key (~size << 32 | minid): ascending
 *                  keys are decreasing sizes, ties by lowest original index
 *                  (distinct between groups, so the order is total)
 *   DeviceRadixSort the keys with their sinks
 *   k_num_number   number[sink] = position + 1 (0 for every other sink),
 *                  and the sizes in that order
 *   k_num_gid      gid[perm[t]] = number[root[t]]
 * Then only the group ids (4 bytes a particle) and the sizes of the kept
 * groups come back.
 */

#define NUM_BLOCK 256

/* The larger of two counts (for cub::BlockReduce). */
struct num_max {
    __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a > b ? a : b; }
};

/* What k_num_counts reduces: groups found, kept, members of the kept, the largest. */
struct num_counts {
    unsigned long long found, kept, grouped, largest;
};

__global__ void k_num_members(const uint32_t *__restrict__ root, const uint32_t *__restrict__ perm, uint64_t n,
                              uint32_t *size, uint32_t *minid)
{
    const unsigned lane = threadIdx.x & 31;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t base = blockIdx.x * (uint64_t)blockDim.x + (threadIdx.x & ~31u); base < n; base += stride) {
        const uint64_t t = base + lane;
        const bool in = t < n;
        const unsigned act = __ballot_sync(0xffffffffu, in);
        if (!in) continue;
        const uint32_t r = root[t], j = perm[t];
        bool lead;
        const unsigned peers = peers_of(act, r, &lead);
        const uint32_t jm = peers_min(peers, j);
        if (lead) {
            atomicAdd(size + r, (uint32_t)__popc(peers));
            atomicMin(minid + r, jm);
        }
    }
}

__global__ void k_num_counts(const uint32_t *__restrict__ root, const uint32_t *__restrict__ size, uint64_t n,
                             uint64_t minsize, num_counts *c)
{
    typedef cub::BlockReduce<unsigned long long, NUM_BLOCK> reduce;
    __shared__ typename reduce::TempStorage tmp;
    unsigned long long found = 0, kept = 0, grouped = 0, largest = 0;
    for (uint64_t r = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; r < n; r += (uint64_t)gridDim.x * blockDim.x) {
        if (root[r] != r) continue;
        found++;
        const uint32_t s = size[r];
        if (s < minsize) continue;
        kept++;
        grouped += s;
        if (s > largest) largest = s;
    }
    found = reduce(tmp).Sum(found);
    __syncthreads();
    kept = reduce(tmp).Sum(kept);
    __syncthreads();
    grouped = reduce(tmp).Sum(grouped);
    __syncthreads();
    largest = reduce(tmp).Reduce(largest, num_max());
    if (threadIdx.x == 0) {
        if (found) atomicAdd(&c->found, found);
        if (kept) atomicAdd(&c->kept, kept);
        if (grouped) atomicAdd(&c->grouped, grouped);
        if (largest) atomicMax(&c->largest, largest);
    }
}

/* The selection of DeviceSelect: r is a sink of a group of at least minsize. */
struct num_is_kept {
    const uint32_t *root, *size;
    uint64_t minsize;
    __device__ bool operator()(uint32_t r) const { return root[r] == r && size[r] >= minsize; }
};

__global__ void k_num_keys(const uint32_t *__restrict__ sinks, uint64_t m, const uint32_t *__restrict__ size,
                           const uint32_t *__restrict__ minid, unsigned long long *__restrict__ key)
{
    for (uint64_t q = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; q < m; q += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t r = sinks[q];
        key[q] = (unsigned long long)(uint32_t)~size[r] << 32 | minid[r];
    }
}

/* number[sinks[q]] = q + 1 and sizes[q] the size of group q + 1 (when sizes is not NULL). */
__global__ void k_num_number(const uint32_t *__restrict__ sinks, const unsigned long long *__restrict__ key,
                             uint64_t m, uint32_t *number, unsigned long long *sizes)
{
    for (uint64_t q = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; q < m; q += (uint64_t)gridDim.x * blockDim.x) {
        number[sinks[q]] = (uint32_t)(q + 1);
        if (sizes) sizes[q] = (uint32_t)~(uint32_t)(key[q] >> 32);
    }
}

__global__ void k_num_gid(const uint32_t *__restrict__ root, const uint32_t *__restrict__ perm, uint64_t n,
                          const uint32_t *__restrict__ number, uint32_t *__restrict__ gid)
{
    for (uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; t < n; t += (uint64_t)gridDim.x * blockDim.x)
        gid[perm[t]] = number[root[t]];
}

/* CUB's scratch for the selection over n and the sort of m keys. */
static size_t cub_bytes(uint64_t n, uint64_t m, fk_error *err, int *st)
{
    size_t sel = 0, sort = 0;
    *st = FK_OK;
    cudaError_t e = cub::DeviceSelect::If(nullptr, sel, thrust::counting_iterator<uint32_t>(0), (uint32_t *)nullptr,
                                          (int *)nullptr, (int)n, num_is_kept{nullptr, nullptr, 1},
                                          cudaStreamPerThread);
    if (e == cudaSuccess) {
        cub::DoubleBuffer<unsigned long long> k(nullptr, nullptr);
        cub::DoubleBuffer<uint32_t> v(nullptr, nullptr);
        e = cub::DeviceRadixSort::SortPairs(nullptr, sort, k, v, (int)m, 0, 64, cudaStreamPerThread);
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        *st = fk_fail(err, FK_EDEVICE, "no usable NVIDIA GPU: CUB's scratch size, CUDA says '%s'",
                      cudaGetErrorString(e));
        return 0;
    }
    return sel > sort ? sel : sort;
}

uint64_t fk_gpu_number_scratch(uint64_t n, uint64_t minsize)
{
    /* size and minid (then the group ids); at most n / minsize kept groups:
     * their sinks and keys twice (the sort's double buffers), the
     * selection's count, and CUB's scratch (its tiles' states and the
     * sort's histograms, a few MiB: bounded here) */
    return 8 * n + 24 * (n / (minsize ? minsize : 1)) + 64 + (UINT64_C(32) << 20);
}

int fk_gpu_number_dev(const uint32_t *d_root, const uint32_t *d_perm, uint64_t n, uint64_t minsize, uint32_t *gid,
                      uint64_t **sizes, fk_groups *info, fk_error *err)
{
    memset(info, 0, sizeof *info);
    if (sizes) *sizes = NULL;
    if (minsize < 1) return fk_fail(err, FK_EINVAL, "minimum group size must be at least 1");
    if (n >= (UINT64_C(1) << 31))
        return fk_fail(err, FK_EUNSUP, "the GPU numbering handles fewer than 2^31 particles");
    int st;
    dbuf<uint32_t> d_size, d_minid;
    dbuf<num_counts> d_counts;
    if ((st = d_size.alloc(n, err)) || (st = d_minid.alloc(n, err)) || (st = d_counts.alloc(1, err))) return st;
    FK_CU(cudaMemsetAsync(d_size.p, 0, 4 * n, cudaStreamPerThread), err);
    FK_CU(cudaMemsetAsync(d_minid.p, 0xff, 4 * n, cudaStreamPerThread), err);
    FK_CU(cudaMemsetAsync(d_counts.p, 0, sizeof(num_counts), cudaStreamPerThread), err);
    if (n) {
        k_num_members<<<fk_grid(n, NUM_BLOCK), NUM_BLOCK, 0, cudaStreamPerThread>>>(d_root, d_perm, n, d_size.p,
                                                                                    d_minid.p);
        FK_LAUNCHED("k_num_members", err);
        k_num_counts<<<fk_grid(n, NUM_BLOCK), NUM_BLOCK, 0, cudaStreamPerThread>>>(d_root, d_size.p, n, minsize,
                                                                                   d_counts.p);
        FK_LAUNCHED("k_num_counts", err);
    }
    num_counts c;
    FK_CU(cudaMemcpyAsync(&c, d_counts.p, sizeof c, cudaMemcpyDeviceToHost, cudaStreamPerThread), err);
    FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
    const uint64_t m = c.kept;
    if (m > n || c.grouped > n || c.found > n)
        return fk_fail(err, FK_EDEVICE, "the GPU numbering counted %llu groups kept of %llu found, %llu members, "
                       "of %llu particles", c.kept, c.found, c.grouped, (unsigned long long)n);
    uint64_t *sz = NULL;
    if (sizes && !(sz = (uint64_t *)malloc((m + 1) * sizeof *sz)))
        return fk_fail(err, FK_ENOMEM, "out of memory for the sizes of %llu groups", (unsigned long long)m);
    /* every exit below frees sz unless it is handed out */
    struct owner {
        uint64_t *p;
        ~owner() { free(p); }
    } own{sz};
    if (m) {
        size_t temp = cub_bytes(n, m, err, &st);
        if (st) return st;
        dbuf<unsigned char> d_temp;
        dbuf<uint32_t> d_s1, d_s2;
        dbuf<unsigned long long> d_k1, d_k2;
        dbuf<int> d_nsel;
        if ((st = d_temp.alloc(temp, err)) || (st = d_s1.alloc(m, err)) || (st = d_s2.alloc(m, err)) ||
            (st = d_k1.alloc(m, err)) || (st = d_k2.alloc(m, err)) || (st = d_nsel.alloc(1, err)))
            return st;
        size_t tb = temp;
        FK_CU(cub::DeviceSelect::If(d_temp.p, tb, thrust::counting_iterator<uint32_t>(0), d_s1.p, d_nsel.p, (int)n,
                                    num_is_kept{d_root, d_size.p, minsize}, cudaStreamPerThread),
              err);
        k_num_keys<<<fk_grid(m, NUM_BLOCK), NUM_BLOCK, 0, cudaStreamPerThread>>>(d_s1.p, m, d_size.p, d_minid.p,
                                                                                 d_k1.p);
        FK_LAUNCHED("k_num_keys", err);
        cub::DoubleBuffer<unsigned long long> keys(d_k1.p, d_k2.p);
        cub::DoubleBuffer<uint32_t> vals(d_s1.p, d_s2.p);
        tb = temp;
        FK_CU(cub::DeviceRadixSort::SortPairs(d_temp.p, tb, keys, vals, (int)m, 0, 64, cudaStreamPerThread), err);
        /* the sizes no longer needed: the same array holds each sink's number */
        FK_CU(cudaMemsetAsync(d_size.p, 0, 4 * n, cudaStreamPerThread), err);
        unsigned long long *d_sz = sz ? keys.Alternate() : nullptr;
        k_num_number<<<fk_grid(m, NUM_BLOCK), NUM_BLOCK, 0, cudaStreamPerThread>>>(vals.Current(), keys.Current(), m,
                                                                                   d_size.p, d_sz);
        FK_LAUNCHED("k_num_number", err);
        int nsel = 0;
        FK_CU(cudaMemcpyAsync(&nsel, d_nsel.p, sizeof nsel, cudaMemcpyDeviceToHost, cudaStreamPerThread), err);
        if (sz)
            FK_CU(cudaMemcpyAsync(sz + 1, d_sz, 8 * m, cudaMemcpyDeviceToHost, cudaStreamPerThread), err);
        FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
        if ((uint64_t)nsel != m)
            return fk_fail(err, FK_EDEVICE, "the GPU numbering selected %d groups of %llu kept", nsel,
                           (unsigned long long)m);
    } else {
        FK_CU(cudaMemsetAsync(d_size.p, 0, 4 * n, cudaStreamPerThread), err);
    }
    if (gid && n) {
        /* the caller's array on this GPU takes the ids where they are made; else d_minid (read by
         * k_num_keys before it, on this stream) holds them on their way down */
        int gdev = -1, cur = -1;
        const bool there = fk_gpu_is_device_ptr(gid, &gdev) && cudaGetDevice(&cur) == cudaSuccess && gdev == cur;
        k_num_gid<<<fk_grid(n, NUM_BLOCK), NUM_BLOCK, 0, cudaStreamPerThread>>>(d_root, d_perm, n, d_size.p,
                                                                       there ? gid : d_minid.p);
        FK_LAUNCHED("k_num_gid", err);
        if (!there && (st = fk_gpu_get(gid, d_minid.p, 4 * n, err))) return st;
    }
    FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
    if (sz) {
        sz[0] = n - c.grouped;
        *sizes = sz;
        own.p = NULL;
    }
    info->n = n;
    info->nsource = n;
    info->minsize = minsize;
    info->nfound = c.found;
    info->ngroups = m;
    info->ngrouped = c.grouped;
    info->largest = c.largest;
    return FK_OK;
}

extern "C" int fk_gpu_groups_number(const uint32_t *root, const uint32_t *perm, uint64_t n, uint64_t minsize,
                                    uint32_t *gid, uint64_t **sizes, fk_groups *info, fk_error *err)
{
    memset(info, 0, sizeof *info);
    if (sizes) *sizes = NULL;
    FK_GPU_ENTER(err);
    if (minsize < 1) return fk_fail(err, FK_EINVAL, "minimum group size must be at least 1");
    if (n >= (UINT64_C(1) << 31))
        return fk_fail(err, FK_EUNSUP, "the GPU numbering handles fewer than 2^31 particles");
    int st;
    if ((st = fk_gpu_reserve_for(n, [&](uint64_t m) { return 8 * m + fk_gpu_number_scratch(m, minsize); }, err))) return st;
    dbuf<uint32_t> d_root, d_perm;
    if ((st = d_root.alloc(n, err)) || (st = d_perm.alloc(n, err)) || (st = fk_gpu_put(d_root.p, root, 4 * n, err)) ||
        (st = fk_gpu_put(d_perm.p, perm, 4 * n, err)))
        return st;
    return fk_gpu_number_dev(d_root.p, d_perm.p, n, minsize, gid, sizes, info, err);
}
