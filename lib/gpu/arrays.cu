/* arrays.cu - the library's calls on arrays (fofkit.h) on the GPU: where an array lives, checks of GPU arrays, tree build and every level linked with the particles resident. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "clock.h"
#include "gpuarrays.h"
#include "internal.cuh"

/* The calling thread's current device set to dev for the object's life,
 * then put back: the caller's choice of device is left as it was. */
struct device_scope {
    int prev = -1;
    cudaError_t e = cudaSuccess;
    explicit device_scope(int dev)
    {
        if (cudaGetDevice(&prev) != cudaSuccess) {
            cudaGetLastError();
            prev = -1;
        }
        if (prev != dev) e = cudaSetDevice(dev);
    }
    device_scope(const device_scope &) = delete;
    device_scope &operator=(const device_scope &) = delete;
    ~device_scope()
    {
        int cur = -1;
        if (prev >= 0 && cudaGetDevice(&cur) == cudaSuccess && cur != prev) cudaSetDevice(prev);
        cudaGetLastError();
    }
};

extern "C" int fk_gpu_is_device_ptr(const void *p, int *dev)
{
    if (dev) *dev = 0;
    if (!p) return 0;
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) { /* no driver, or memory CUDA does not know */
        cudaGetLastError();
        return 0;
    }
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged) return 0;
    if (dev) *dev = a.device;
    return 1;
}

extern "C" int fk_gpu_copy_to_host(void *dst, const void *src, uint64_t bytes, int dev, fk_error *err)
{
    device_scope d(dev);
    FK_CU(d.e, err);
    FK_CU(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), err);
    return FK_OK;
}

/* *bad = the least row with a value that is not finite or (periodic) outside [lo, hi). */
__global__ void k_first_bad(const float *__restrict__ a, uint64_t n, int ncols, int periodic, float lo, float hi,
                            unsigned long long *bad)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        int ok = 1;
        for (int k = 0; k < ncols; k++) {
            float x = a[(uint64_t)ncols * i + k];
            ok &= isfinite(x) && (!periodic || (x >= lo && x < hi));
        }
        if (!ok) atomicMin(bad, (unsigned long long)i);
    }
}

extern "C" int fk_gpu_first_bad(const float *a, uint64_t n, int ncols, int periodic, float lo, float hi, int dev,
                                uint64_t *bad, fk_error *err)
{
    *bad = n;
    if (n == 0) return FK_OK;
    device_scope d(dev);
    FK_CU(d.e, err);
    dbuf<unsigned long long> d_bad;
    int st = d_bad.alloc(1, err);
    if (st) return st;
    unsigned long long h = n;
    FK_CU(cudaMemcpy(d_bad.p, &h, sizeof h, cudaMemcpyHostToDevice), err);
    k_first_bad<<<fk_grid(n, 256), 256>>>(a, n, ncols, periodic, lo, hi, d_bad.p);
    FK_LAUNCHED("k_first_bad", err);
    FK_CU(cudaMemcpy(&h, d_bad.p, sizeof h, cudaMemcpyDeviceToHost), err);
    *bad = h;
    return FK_OK;
}

/* Velocities into tree order for 6D: out[i] = in[perm[i]]. */
__global__ void k_gather3(const float *__restrict__ in, const uint32_t *__restrict__ perm, uint64_t n,
                          float *__restrict__ out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t j = perm[i];
        for (int k = 0; k < 3; k++) out[3 * i + k] = in[3 * j + k];
    }
}

/* Device bytes for m particles: the positions (and velocities) when they are
 * uploaded, the permutation, the boxes, the velocities in tree order, and the
 * largest of the build's peak, the link's (the sorted positions, the sinks
 * and the linker's scratch) and the numbering's (the same, its scratch for
 * the linker's). */
static uint64_t fof_bytes(uint64_t m, uint32_t leafsize, int sixd, int on_device, uint64_t minsize)
{
    const uint64_t nnodes = m ? (UINT64_C(2) << fk_tree_depth(m, leafsize)) - 1 : 0;
    const uint64_t build = fk_gpu_build_peak(m), link = 16 * m + fk_gpu_link_scratch(m, nnodes, sixd),
                   number = 16 * m + fk_gpu_number_scratch(m, minsize);
    uint64_t peak = build > link ? build : link;
    if (number > peak) peak = number;
    return (on_device ? 0 : (sixd ? 24 : 12) * m) + 4 * m + 24 * nnodes + (sixd ? 12 * m : 0) + peak;
}

extern "C" int fk_gpu_fof_arrays(const float *pos, const float *vel, int on_device, int dev, uint64_t n,
                                 uint32_t leafsize, double lo, double span, const fk_linkopts *o, int nlevels,
                                 uint64_t minsize, fk_gpu_fof_level *out, uint32_t *perm, fk_error *err)
{
    int st, sixd = 0;
    for (int k = 0; k < nlevels; k++) {
        out[k].sizes = NULL;
        memset(&out[k].info, 0, sizeof out[k].info);
        out[k].seconds = 0;
    }
    for (int k = 0; k < nlevels; k++) {
        if ((st = fk_link_check(&o[k], err))) return st;
        sixd |= o[k].psi > 0;
    }
    if (minsize < 1) return fk_fail(err, FK_EINVAL, "minimum group size must be at least 1");
    if (n >= (UINT64_C(1) << 31)) return fk_fail(err, FK_EUNSUP, "the GPU tree builder and linker handle fewer than 2^31 particles");
    device_scope d(dev);
    FK_CU(d.e, err);
    fk_tree t;
    if ((st = fk_tree_alloc(&t, n, leafsize, "gpu-hilbert", err))) return st;
    free(t.box); /* the boxes stay on the device */
    t.box = NULL;
    if ((st = fk_gpu_reserve_for(
             n, [&](uint64_t m) { return fof_bytes(m, leafsize, sixd, on_device, minsize); }, err)))
        return st;
    dbuf<float> d_pos, d_vel, d_sorted, d_box, d_svel;
    dbuf<uint32_t> d_perm, d_sink;
    const float *pp = pos, *vp = vel;
    if (!on_device) {
        if ((st = d_pos.alloc(3 * n, err)) || (sixd && (st = d_vel.alloc(3 * n, err)))) return st;
        /* staged through the thread's pinned chunks: pinning the caller's arrays cost more than the copy */
        if ((st = fk_gpu_put(d_pos.p, pos, 12 * n, err)) || (sixd && (st = fk_gpu_put(d_vel.p, vel, 12 * n, err))))
            return st;
        pp = d_pos.p, vp = d_vel.p;
    }
    if ((st = d_perm.alloc(n, err)) || (st = d_box.alloc(6 * t.nnodes, err)) || (sixd && (st = d_svel.alloc(3 * n, err))))
        return st;
    if ((st = fk_gpu_build_dev(pp, &t, lo, span, d_sorted, d_perm.p, d_box.p, err))) return st;
    if (sixd && n) {
        k_gather3<<<fk_grid(n, 256), 256>>>(vp, d_perm.p, n, d_svel.p);
        FK_LAUNCHED("k_gather3", err);
    }
    d_pos.release(); /* the link needs the sorted copies only */
    d_vel.release();
    if ((st = d_sink.alloc(n, err))) return st;
    if (perm && (st = fk_gpu_get(perm, d_perm.p, 4 * n, err))) return st;
    for (int k = 0; k < nlevels; k++) {
        unsigned long long counts[2];
        uint64_t ng = 0, listed = 0;
        double phase[4];
        if ((st = fk_gpu_link_dev(&t, d_sorted.p, o[k].psi > 0 ? d_svel.p : nullptr, d_box.p, &o[k], d_sink.p, counts,
                                  &ng, phase, &listed, err)))
            return st;
        if (out[k].sink && (st = fk_gpu_get(out[k].sink, d_sink.p, 4 * n, err))) return st;
        /* the sinks and the order stay here: only the numbers come down */
        const double t0 = fk_now();
        if ((st = fk_gpu_number_dev(d_sink.p, d_perm.p, n, minsize, out[k].group,
                                    out[k].want_sizes ? &out[k].sizes : nullptr, &out[k].info, err)))
            return st;
        out[k].seconds = fk_now() - t0;
        if (out[k].info.nfound != ng)
            return fk_fail(err, FK_EDEVICE, "level %d: the GPU numbering found %llu groups, the linker %llu", k,
                           (unsigned long long)out[k].info.nfound, (unsigned long long)ng);
    }
    FK_CU(cudaDeviceSynchronize(), err);
    return FK_OK;
}
