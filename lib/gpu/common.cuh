/* common.cuh - what the CUDA sources share: checked calls, device buffers, the device sink array. */
#ifndef FK_GPU_COMMON_CUH
#define FK_GPU_COMMON_CUH

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include "error.h"

/* Returns FK_EDEVICE from the enclosing function when call fails, saying
 * plainly that the GPU cannot be used before CUDA's own words. Every CUDA
 * call and kernel launch goes through one of these. */
#define FK_CU(call, err)                                                                                   \
    do {                                                                                                   \
        cudaError_t e_ = (call);                                                                           \
        if (e_ != cudaSuccess)                                                                             \
            return fk_fail((err), FK_EDEVICE,                                                              \
                           "no usable NVIDIA GPU: %s failed (%s:%d), CUDA says '%s' "         \
                           "(--device=cpu runs without it)",                                               \
                           #call, __FILE__, __LINE__, cudaGetErrorString(e_));                             \
    } while (0)

/* After a launch: a bad configuration shows at once, a fault at the next sync. */
#define FK_LAUNCHED(what, err) FK_CU(cudaPeekAtLastError(), err)

/* Makes the selected device (fk_gpu_select) current on the calling thread:
 * every entry point of gpu.h that touches the device starts with
 * FK_GPU_ENTER, since each host thread has its own current device. */
int fk_gpu_use(fk_error *err);
#define FK_GPU_ENTER(err)                                                                                  \
    do {                                                                                                   \
        int st_ = fk_gpu_use(err);                                                                         \
        if (st_) return st_;                                                                               \
    } while (0)

/* The device's default memory pool keeps what is freed (no release to the
 * driver), so that allocating and freeing on a thread's stream never waits
 * for the other threads' work as cudaMalloc and cudaFree do; when the pool
 * cannot grow, fk_gpu_pool_trim gives its unused memory back. Called by dbuf. */
void fk_gpu_pool_init(void);
void fk_gpu_pool_trim(void);

/* A device allocation freed when it goes out of scope: stream-ordered, on
 * the calling thread's default stream (the project builds with
 * --default-stream per-thread, and a buffer lives on one thread). */
template <typename T> struct dbuf {
    T *p = nullptr;
    size_t count = 0;
    dbuf() = default;
    dbuf(const dbuf &) = delete;
    dbuf &operator=(const dbuf &) = delete;
    ~dbuf() { release(); }
    void release()
    {
        if (p) cudaFreeAsync(p, cudaStreamPerThread);
        p = nullptr;
    }
    /* FK_EDEVICE with the size when the allocation fails. */
    int alloc(size_t n, fk_error *err)
    {
        count = n;
        fk_gpu_pool_init();
        const size_t bytes = (n ? n : 1) * sizeof(T);
        cudaError_t e = cudaMallocAsync((void **)&p, bytes, cudaStreamPerThread);
        if (e == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            fk_gpu_pool_trim();
            e = cudaMallocAsync((void **)&p, bytes, cudaStreamPerThread);
        }
        if (e != cudaSuccess) {
            p = nullptr;
            cudaGetLastError();
            return fk_fail(err, FK_EDEVICE, "cannot allocate %.3f GiB of GPU memory (--device=cpu "
                           "runs without it)", (double)n * sizeof(T) / (1 << 30));
        }
        return FK_OK;
    }
};

/* Host memory pinned (page-locked) for the life of the object, so that
 * copies to and from it run at the bus's rate instead of through the
 * driver's pageable staging; unpinned when it goes. Arrays under 1 MiB are
 * left alone. A refusal to pin is no error: the copy then goes pageable.
 * FOFKIT_GPU_PIN=0 in the environment turns pinning off, to measure what it
 * gains. */
struct pinned {
    void *p = nullptr;
    pinned(const void *q, size_t n)
    {
        const char *e = getenv("FOFKIT_GPU_PIN");
        if (!q || n < (1u << 20) || (e && !strcmp(e, "0"))) return;
        if (cudaHostRegister(const_cast<void *>(q), n, cudaHostRegisterDefault) == cudaSuccess)
            p = const_cast<void *>(q);
        else
            cudaGetLastError();
    }
    pinned(const pinned &) = delete;
    pinned &operator=(const pinned &) = delete;
    ~pinned()
    {
        if (p) cudaHostUnregister(p);
    }
};

/* Blocks of `block` threads to launch over `items` (at least one). fk_grid
 * is for grid-stride kernels: at most 2^20 blocks, which stride over the
 * rest; fk_grid_all for kernels of one thread (or warp, or block) an item:
 * every item its own, up to CUDA's limit. */
static inline unsigned fk_grid(uint64_t items, unsigned block)
{
    uint64_t g = (items + block - 1) / block;
    if (g > (UINT64_C(1) << 20)) g = UINT64_C(1) << 20;
    return g ? (unsigned)g : 1u;
}

static inline unsigned fk_grid_all(uint64_t items, unsigned block)
{
    uint64_t g = (items + block - 1) / block;
    if (g > 0x7fffffffu) g = 0x7fffffffu;
    return g ? (unsigned)g : 1u;
}

/* Copies bytes from pageable host memory to the device, and back, through
 * two pinned chunks: every core of the calling thread's OpenMP team copies
 * into one while the DMA engine moves the other, so that neither pinning
 * the whole array (cudaHostRegister, slow for gigabytes) nor the driver's
 * own one-thread staging bounds the rate. On the calling thread's stream;
 * synchronous (done when they return). */
int fk_gpu_put(void *d_dst, const void *src, size_t bytes, fk_error *err);
int fk_gpu_get(void *dst, const void *d_src, size_t bytes, fk_error *err);

/* CUDA events around phases; destroyed with the object. */
struct timer {
    cudaEvent_t ev[8];
    int n = 0;
    ~timer() { for (int i = 0; i < n; i++) cudaEventDestroy(ev[i]); }
    int mark(fk_error *err)
    {
        FK_CU(cudaEventCreate(&ev[n]), err);
        FK_CU(cudaEventRecord(ev[n]), err);
        n++;
        return FK_OK;
    }
    /* Seconds between marks a and b (waits for b). */
    double secs(int a, int b)
    {
        float ms = 0;
        cudaEventSynchronize(ev[b]);
        cudaEventElapsedTime(&ms, ev[a], ev[b]);
        return ms * 1e-3;
    }
};

/* Staged copies between pageable host memory and the device go through
 * two pinned chunks of FK_GPU_STAGE bytes (large enough that a DMA runs at
 * the bus's rate, small enough that pinning them costs nothing against the
 * copy) and their events: each thread's, made at its first staged copy and
 * kept for the next ones (pinning 64 MiB costs about as much as copying
 * it), made again when the thread's device changed, freed when the thread
 * ends. A user fills chunk k only after cudaEventSynchronize(ev[k]) and
 * records ev[k] after queueing its DMA (on cudaStreamPerThread), so one
 * thread's copies (fk_gpu_put, fk_gpu_get, the tree match's uploads) share
 * them in turn. */
#define FK_GPU_STAGE ((size_t)32 << 20)
struct fk_stages {
    void *buf = nullptr;
    cudaEvent_t ev[2] = {nullptr, nullptr};
    int dev = -1;
    ~fk_stages() { release(); }
    void release()
    {
        if (buf) cudaFreeHost(buf);
        for (int k = 0; k < 2; k++)
            if (ev[k]) cudaEventDestroy(ev[k]);
        buf = nullptr, ev[0] = ev[1] = nullptr, dev = -1;
        cudaGetLastError();
    }
    int init(fk_error *err)
    {
        int d = -1;
        FK_CU(cudaGetDevice(&d), err);
        if (buf && d == dev) return FK_OK;
        release();
        FK_CU(cudaMallocHost(&buf, 2 * FK_GPU_STAGE), err);
        for (int k = 0; k < 2; k++) FK_CU(cudaEventCreateWithFlags(&ev[k], cudaEventDisableTiming), err);
        dev = d;
        return FK_OK;
    }
    char *at(int k) { return (char *)buf + (size_t)k * FK_GPU_STAGE; }
};

/* The calling thread's chunks (device.cu). */
fk_stages &fk_gpu_stages();

/* Checks that the device has need bytes free before a run. */
int fk_gpu_reserve(uint64_t need, fk_error *err);

/* The device's free and total memory; FOFKIT_GPU_MEMORY (bytes) lowers the
 * free memory seen, to try out a smaller GPU. */
int fk_gpu_free_bytes(size_t *fr, size_t *tot, fk_error *err);

/* fk_gpu_reserve for n particles, where bytes(m) is what m particles need
 * (growing with m): when they do not fit, the message also gives the bytes
 * a particle and the largest count that fits (found by bisection). */
template <class F> int fk_gpu_reserve_for(uint64_t n, F bytes, fk_error *err)
{
    size_t fr = 0, tot = 0;
    int st = fk_gpu_free_bytes(&fr, &tot, err);
    if (st) return st;
    const uint64_t need = bytes(n);
    if (need <= fr) return FK_OK;
    uint64_t lo = 0, hi = n;
    while (hi - lo > 1) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (bytes(mid) <= fr)
            lo = mid;
        else
            hi = mid;
    }
    return fk_fail(err, FK_EDEVICE,
                   "needs %.2f GiB of GPU memory for %llu particles (%.1f bytes a particle), %.2f GiB available "
                   "(of %.2f GiB): at most %llu particles fit",
                   (double)need / (1 << 30), (unsigned long long)n, n ? (double)need / (double)n : 0.0,
                   (double)fr / (1 << 30), (double)tot / (1 << 30), (unsigned long long)lo);
}

/* ---- warp reductions ---- */

/* The lanes of act (the active lanes of one warp) whose r equals this
 * lane's, and in *lead whether this lane is the lowest of them; on older
 * GPUs each lane alone. */
__device__ __forceinline__ unsigned peers_of(unsigned act, uint32_t r, bool *lead)
{
#if __CUDA_ARCH__ >= 800
    const unsigned peers = __match_any_sync(act, r);
    *lead = (threadIdx.x & 31) == (unsigned)__ffs(peers) - 1;
    return peers;
#else
    (void)act, (void)r;
    *lead = true;
    return 1u << (threadIdx.x & 31);
#endif
}

/* The least of v over the lanes in peers (one warp), for 32- and 64-bit
 * values; v as it is on older GPUs (each lane then takes part alone). */
__device__ __forceinline__ uint32_t peers_min(unsigned peers, uint32_t v)
{
#if __CUDA_ARCH__ >= 800
    return __reduce_min_sync(peers, v);
#else
    (void)peers;
    return v;
#endif
}

__device__ __forceinline__ unsigned long long peers_min(unsigned peers, unsigned long long v)
{
#if __CUDA_ARCH__ >= 800
    const uint32_t hi = __reduce_min_sync(peers, (uint32_t)(v >> 32));
    const uint32_t lo = __reduce_min_sync(peers, (uint32_t)(v >> 32) == hi ? (uint32_t)v : UINT32_MAX);
    return ((unsigned long long)hi << 32) | lo;
#else
    (void)peers;
    return v;
#endif
}

/* ---- the sink array on the device (see link.h for the contract) ---- */

/* Reads through L2 (coherent across SMs): a stale read can only show an
 * older ancestor, which is still an ancestor, so it costs retries, never
 * correctness. */
__device__ __forceinline__ uint32_t sink_ld(const uint32_t *p)
{
    return __ldcg(p);
}

__device__ __forceinline__ uint32_t sink_find(uint32_t *s, uint32_t x)
{
    uint32_t p = sink_ld(s + x);
    while (p != x) {
        uint32_t g = sink_ld(s + p);
        if (g != p) __stcg(s + x, g); /* path halving: point x at an ancestor */
        x = p;
        p = g;
    }
    return x;
}

/* Links the groups of a and b: the higher sink under the lower, by CAS. */
__device__ __forceinline__ void sink_unite(uint32_t *s, uint32_t a, uint32_t b)
{
    a = sink_find(s, a);
    b = sink_find(s, b);
    while (a != b) {
        if (a < b) {
            uint32_t t = a;
            a = b;
            b = t;
        }
        uint32_t old = atomicCAS(s + a, a, b);
        if (old == a) return;
        a = sink_find(s, old);
        b = sink_find(s, b);
    }
}

/* Kernels shared by the linkers. */
__global__ void k_sink_flatten(uint32_t *s, uint64_t n, unsigned long long *groups);
int fk_gpu_flatten(uint32_t *d_sink, uint64_t n, uint64_t *groups, fk_error *err);

#endif
