/* device.cu - finding the GPU, checking its free memory, and the sink flattening shared by the linkers. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>

#include "common.cuh"
#include "gpu.h"

extern "C" int fk_gpu_compiled(void)
{
    return 1;
}

/* Why there is no GPU to use, in words for people: CUDA says "driver
 * version is insufficient" also when there is no driver at all. */
static void no_gpu(cudaError_t e, char *why, size_t size)
{
    int driver = 0, runtime = 0;
    if (e == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0)
        snprintf(why, size, "no NVIDIA driver found (the GPU needs one; --device=cpu runs without it)");
    else if (e == cudaErrorInsufficientDriver && cudaRuntimeGetVersion(&runtime) == cudaSuccess)
        snprintf(why, size, "no usable NVIDIA driver: it runs CUDA %d.%d, this build needs %d.%d (update the driver)",
                 driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    else if (e == cudaSuccess || e == cudaErrorNoDevice)
        snprintf(why, size, "no NVIDIA GPU found");
    else
        snprintf(why, size, "no usable NVIDIA GPU (CUDA says '%s')", cudaGetErrorString(e));
    cudaGetLastError();
}

extern "C" int fk_gpu_probe(fk_gpuinfo *info, fk_error *err)
{
    (void)err;
    memset(info, 0, sizeof *info);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        no_gpu(e, info->reason, sizeof info->reason);
        return FK_OK;
    }
    cudaDeviceProp p;
    size_t fr = 0, tot = 0;
    if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess || (e = cudaSetDevice(0)) != cudaSuccess ||
        (e = cudaMemGetInfo(&fr, &tot)) != cudaSuccess) {
        cudaGetLastError();
        snprintf(info->reason, sizeof info->reason, "no usable NVIDIA GPU: device 0 refused (CUDA says '%s')",
                 cudaGetErrorString(e));
        return FK_OK;
    }
    info->present = 1;
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    info->multiprocessors = p.multiProcessorCount;
    info->mem_free = fr;
    info->mem_total = tot;
    return FK_OK;
}

static cudaMemPool_t pool_of_device(void)
{
    int dev = 0;
    cudaMemPool_t pool = nullptr;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetDefaultMemPool(&pool, dev) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return pool;
}

void fk_gpu_pool_init(void)
{
    static const bool done = [] {
        cudaMemPool_t pool = pool_of_device();
        uint64_t keep = UINT64_MAX;
        if (pool && cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess)
            cudaGetLastError();
        return true;
    }();
    (void)done;
}

void fk_gpu_pool_trim(void)
{
    cudaMemPool_t pool = pool_of_device();
    cudaStreamSynchronize(cudaStreamPerThread); /* this thread's frees done */
    if (pool) cudaMemPoolTrimTo(pool, 0);
    cudaGetLastError();
}

/* Bytes the default pool holds and no allocation uses (free for dbuf). */
static size_t pool_unused(void)
{
    cudaMemPool_t pool = pool_of_device();
    uint64_t held = 0, used = 0;
    if (!pool || cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &held) != cudaSuccess ||
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return held > used ? (size_t)(held - used) : 0;
}

int fk_gpu_free_bytes(size_t *fr, size_t *tot, fk_error *err)
{
    FK_CU(cudaMemGetInfo(fr, tot), err);
    *fr += pool_unused();
    const char *e = getenv("FOFKIT_GPU_MEMORY"); /* a smaller GPU, for tests: bytes */
    if (e && *e) {
        char *end;
        unsigned long long cap = strtoull(e, &end, 10);
        if (*end == '\0' && cap < *fr) *fr = (size_t)cap;
    }
    return FK_OK;
}

int fk_gpu_reserve(uint64_t need, fk_error *err)
{
    size_t fr = 0, tot = 0;
    int st = fk_gpu_free_bytes(&fr, &tot, err);
    if (st) return st;
    if (need > fr)
        return fk_fail(err, FK_EDEVICE, "needs %.2f GiB of GPU memory, %.2f GiB available (of %.2f GiB)",
                       (double)need / (1 << 30), (double)fr / (1 << 30), (double)tot / (1 << 30));
    return FK_OK;
}

/* Points every particle at its sink and counts the sinks. Launched after
 * linking has finished. Each thread writes only its own entry, and only the
 * sink: the walk must not halve paths, or a late halving write could
 * replace another thread's final sink with a mere ancestor. Concurrent
 * reads see an ancestor or the sink, both on the reader's path. */
__global__ void k_sink_flatten(uint32_t *s, uint64_t n, unsigned long long *groups)
{
    unsigned long long mine = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t r = (uint32_t)i, p;
        while ((p = sink_ld(s + r)) != r) r = p;
        __stcg(s + i, r);
        mine += r == i;
    }
    for (int o = 16; o > 0; o >>= 1) mine += __shfl_down_sync(0xffffffffu, mine, o);
    if ((threadIdx.x & 31) == 0 && mine) atomicAdd(groups, mine);
}

int fk_gpu_flatten(uint32_t *d_sink, uint64_t n, uint64_t *groups, fk_error *err)
{
    dbuf<unsigned long long> d_groups;
    if (d_groups.alloc(1, err)) return err->code;
    FK_CU(cudaMemset(d_groups.p, 0, sizeof(unsigned long long)), err);
    unsigned blocks = (unsigned)((n + 255) / 256);
    if (blocks > 8192) blocks = 8192; /* each warp adds its roots with one atomic: few warps, few atomics */
    if (blocks == 0) blocks = 1;
    k_sink_flatten<<<blocks, 256>>>(d_sink, n, d_groups.p);
    FK_LAUNCHED("k_sink_flatten", err);
    unsigned long long g = 0;
    FK_CU(cudaMemcpy(&g, d_groups.p, sizeof g, cudaMemcpyDeviceToHost), err);
    *groups = g;
    return FK_OK;
}
