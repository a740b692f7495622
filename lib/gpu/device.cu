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
        snprintf(why, size, "no NVIDIA driver found");
    else if (e == cudaErrorInsufficientDriver && cudaRuntimeGetVersion(&runtime) == cudaSuccess)
        snprintf(why, size, "no usable NVIDIA driver: it runs CUDA %d.%d, this build needs %d.%d (update the driver)",
                 driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    else if (e == cudaSuccess || e == cudaErrorNoDevice)
        snprintf(why, size, "no NVIDIA GPU found");
    else
        snprintf(why, size, "no usable NVIDIA GPU (CUDA says '%s')", cudaGetErrorString(e));
    cudaGetLastError();
}

/* The device every call uses (fk_gpu_select). */
static int g_ordinal = 0;

extern "C" int fk_gpu_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

extern "C" int fk_gpu_select(int ordinal, fk_error *err)
{
    int count = fk_gpu_count();
    if (ordinal < 0 || ordinal >= count)
        return fk_fail(err, FK_EINVAL, "there is no GPU %d: %d %s visible", ordinal, count,
                       count == 1 ? "is" : "are");
    g_ordinal = ordinal;
    return fk_gpu_use(err);
}

extern "C" int fk_gpu_selected(void)
{
    return g_ordinal;
}

int fk_gpu_use(fk_error *err)
{
    FK_CU(cudaSetDevice(g_ordinal), err);
    return FK_OK;
}

extern "C" int fk_gpu_probe(fk_gpuinfo *info, fk_error *err)
{
    (void)err;
    memset(info, 0, sizeof *info);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    info->ordinal = g_ordinal;
    info->count = e == cudaSuccess ? count : 0;
    if (e != cudaSuccess || count == 0) {
        no_gpu(e, info->reason, sizeof info->reason);
        return FK_OK;
    }
    cudaDeviceProp p;
    size_t fr = 0, tot = 0;
    if ((e = cudaGetDeviceProperties(&p, g_ordinal)) != cudaSuccess || (e = cudaSetDevice(g_ordinal)) != cudaSuccess ||
        (e = cudaMemGetInfo(&fr, &tot)) != cudaSuccess) {
        cudaGetLastError();
        snprintf(info->reason, sizeof info->reason, "no usable NVIDIA GPU: device %d refused (CUDA says '%s')", g_ordinal,
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

/* ---- staged copies between pageable host memory and the device ---- */

static const size_t STAGE = FK_GPU_STAGE;

/* memcpy on every core of the team, in 1 MiB pieces. */
static void team_copy(void *dst, const void *src, size_t n)
{
    const size_t piece = (size_t)1 << 20;
    const int64_t pieces = (int64_t)((n + piece - 1) / piece);
    #pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < pieces; b++) {
        const size_t at = (size_t)b * piece, len = n - at < piece ? n - at : piece;
        memcpy((char *)dst + at, (const char *)src + at, len);
    }
}

static thread_local fk_stages thread_stages;

fk_stages &fk_gpu_stages()
{
    return thread_stages;
}

int fk_gpu_put(void *d_dst, const void *src, size_t bytes, fk_error *err)
{
    if (bytes == 0) return FK_OK;
    fk_stages &s = thread_stages;
    int st = s.init(err);
    if (st) return st;
    for (size_t off = 0, c = 0; off < bytes; off += STAGE, c++) {
        const int k = (int)(c & 1);
        const size_t len = bytes - off < STAGE ? bytes - off : STAGE;
        FK_CU(cudaEventSynchronize(s.ev[k]), err); /* its last chunk has left (this call's or another's) */
        team_copy(s.at(k), (const char *)src + off, len);
        FK_CU(cudaMemcpyAsync((char *)d_dst + off, s.at(k), len, cudaMemcpyHostToDevice, cudaStreamPerThread), err);
        FK_CU(cudaEventRecord(s.ev[k], cudaStreamPerThread), err);
    }
    FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
    return FK_OK;
}

int fk_gpu_get(void *dst, const void *d_src, size_t bytes, fk_error *err)
{
    if (bytes == 0) return FK_OK;
    fk_stages &s = thread_stages;
    int st = s.init(err);
    if (st) return st;
    const size_t chunks = (bytes + STAGE - 1) / STAGE;
    auto start = [&](size_t c) -> int { /* the DMA of chunk c into its stage */
        const size_t off = c * STAGE, len = bytes - off < STAGE ? bytes - off : STAGE;
        FK_CU(cudaMemcpyAsync(s.at((int)(c & 1)), (const char *)d_src + off, len, cudaMemcpyDeviceToHost,
                              cudaStreamPerThread), err);
        FK_CU(cudaEventRecord(s.ev[c & 1], cudaStreamPerThread), err);
        return FK_OK;
    };
    if ((st = start(0))) return st;
    for (size_t c = 0; c < chunks; c++) {
        if (c + 1 < chunks && (st = start(c + 1))) return st; /* the other stage is free: emptied last round */
        FK_CU(cudaEventSynchronize(s.ev[c & 1]), err);
        const size_t off = c * STAGE, len = bytes - off < STAGE ? bytes - off : STAGE;
        team_copy((char *)dst + off, s.at((int)(c & 1)), len);
    }
    return FK_OK;
}
