/* unbind.cu - the unbinding's incremental update on the GPU: the leavers' terms taken off the stayers' potentials, in double. */
#include <stdint.h>

#include <memory>
#include <new>

#include "common.cuh"
#include "gpu.h"
#include "internal.cuh"
#include "potential.h"

/*
 * fk_gpu_unbind_update: for every stayer k, phi[k] += G sum_q m_q /
 * sqrt(|x_k - x_q|^2 + eps^2) over the leavers q, the CPU's update of
 * unbind.c. One thread a stayer; the leavers pass through shared memory in
 * tiles of UTPB. Each sum runs over the leavers in their order, in double,
 * so it differs from the CPU's (whose lanes split the sum) by rounding
 * only. The call is synchronous: phi comes back before it returns.
 */

#define UTPB 256 /* threads a block, leavers a tile */

__global__ void __launch_bounds__(UTPB) k_unbind_update(const double *__restrict__ x, const double *__restrict__ y,
                                                       const double *__restrict__ z, uint64_t ns,
                                                       const double *__restrict__ lx, const double *__restrict__ ly,
                                                       const double *__restrict__ lz, const double *__restrict__ lm,
                                                       uint64_t nu, double G, double e2, double *phi)
{
    __shared__ double sx[UTPB], sy[UTPB], sz[UTPB], sm[UTPB];
    const uint64_t k = (uint64_t)blockIdx.x * UTPB + threadIdx.x;
    const bool has = k < ns;
    const double px = has ? x[k] : 0, py = has ? y[k] : 0, pz = has ? z[k] : 0;
    double s = 0;
    for (uint64_t t = 0; t < nu; t += UTPB) {
        __syncthreads();
        const uint64_t q = t + threadIdx.x;
        if (q < nu) sx[threadIdx.x] = lx[q], sy[threadIdx.x] = ly[q], sz[threadIdx.x] = lz[q], sm[threadIdx.x] = lm[q];
        __syncthreads();
        const int cnt = (int)(nu - t < UTPB ? nu - t : UTPB);
        for (int j = 0; j < cnt; j++) {
            const double dx = sx[j] - px, dy = sy[j] - py, dz = sz[j] - pz;
            s += sm[j] * rsqrt((dx * dx + dy * dy) + (dz * dz + e2));
        }
    }
    if (has) phi[k] += G * s;
}

extern "C" int fk_gpu_unbind_update(const fk_pot_members *stay, double *phi, const fk_pot_members *leave, double G,
                                    double eps, fk_error *err)
{
    const uint64_t ns = stay->n, nu = leave->n;
    if (ns == 0 || nu == 0) return FK_OK;
    if ((ns + UTPB - 1) / UTPB > 0x7fffffffu) return fk_fail(err, FK_EUNSUP, "a group of more than 2^39 members");
    int st = fk_gpu_reserve((ns * 4 + nu * 4) * sizeof(double), err);
    if (st) return st;
    dbuf<double> d_s, d_l;
    if ((st = d_s.alloc(4 * ns, err)) || (st = d_l.alloc(4 * nu, err))) return st;
    double *dx = d_s.p, *dy = dx + ns, *dz = dy + ns, *dphi = dz + ns;
    double *lx = d_l.p, *ly = lx + nu, *lz = ly + nu, *lm = lz + nu;
    FK_CU(cudaMemcpy(dx, stay->x, ns * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(dy, stay->y, ns * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(dz, stay->z, ns * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(dphi, phi, ns * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(lx, leave->x, nu * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(ly, leave->y, nu * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(lz, leave->z, nu * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(lm, leave->m, nu * 8, cudaMemcpyHostToDevice), err);
    k_unbind_update<<<(unsigned)((ns + UTPB - 1) / UTPB), UTPB>>>(dx, dy, dz, ns, lx, ly, lz, lm, nu, G, eps * eps,
                                                                   dphi);
    FK_LAUNCHED("k_unbind_update", err);
    FK_CU(cudaMemcpy(phi, dphi, ns * 8, cudaMemcpyDeviceToHost), err);
    return FK_OK;
}

extern "C" uint64_t fk_gpu_unbind_bytes(uint64_t n)
{
    /* S twice (x y z m phi), the leavers' places and, for an update, at
     * most FK_UNBIND_GPU_PAIRS leavers (unbind.h) of 4 doubles; then a sum:
     * fk_gpu_pot_tree's reservation (its exact sums' jobs: 24 bytes a block
     * of 256), which also counts S once more: a margin */
    return 80 * n + 8 * n + 32 * 8192 + fk_gpu_pot_bytes(n, 1, n) + (n / 256 + 1) * 24;
}

extern "C" uint64_t fk_gpu_unbind_budget(void)
{
    size_t fr = 0, tot = 0;
    fk_error err;
    memset(&err, 0, sizeof err);
    if (fk_gpu_free_bytes(&fr, &tot, &err)) return 0;
    return fr / 10 * 9; /* a margin for the allocator and the driver */
}

/* ---- a group's S held on the device between passes (fk_unbind_device) ---- */

/* S on the device: x y z m phi, n doubles each, in two copies (a drop
 * compacts one into the other); the leavers' places and, for an update,
 * their x y z m. */
struct udev {
    uint64_t n = 0, ns = 0;
    int side = 0;
    dbuf<double> s[2];
    dbuf<uint64_t> k;
    dbuf<double> l;
    double *a(int f) { return s[side].p + (uint64_t)f * n; } /* field f of S: 0 x, 1 y, 2 z, 3 m, 4 phi */
};

/* The place of k in the ascending leavers' places L[0..nu): the number of
 * those below it, and whether it is one of them. */
__device__ __forceinline__ uint64_t rank_of(const uint64_t *__restrict__ L, uint64_t nu, uint64_t k, bool *is)
{
    uint64_t lo = 0, hi = nu;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (L[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    *is = lo < nu && L[lo] == k;
    return lo;
}

/* Every stayer k < ns of src (5 fields of stride n) to place k - rank in dst. */
__global__ void k_udrop(const double *__restrict__ src, uint64_t n, uint64_t ns, const uint64_t *__restrict__ L,
                        uint64_t nu, double *__restrict__ dst)
{
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < ns; k += (uint64_t)gridDim.x * blockDim.x) {
        bool is;
        const uint64_t r = rank_of(L, nu, k, &is);
        if (is) continue;
        for (int f = 0; f < 5; f++) dst[(uint64_t)f * n + k - r] = src[(uint64_t)f * n + k];
    }
}

/* The leavers' x y z m (4 arrays of nu) from S (stride n). */
__global__ void k_ugather(const double *__restrict__ src, uint64_t n, const uint64_t *__restrict__ L, uint64_t nu,
                          double *__restrict__ l)
{
    for (uint64_t q = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; q < nu; q += (uint64_t)gridDim.x * blockDim.x)
        for (int f = 0; f < 4; f++) l[(uint64_t)f * nu + q] = src[(uint64_t)f * n + L[q]];
}

static unsigned ublocks(uint64_t items)
{
    uint64_t b = (items + UTPB - 1) / UTPB;
    return b == 0 ? 1u : b > 0x7fffffffu ? 0x7fffffffu : (unsigned)b;
}

extern "C" int fk_gpu_unbind_open(void **ctx, const fk_pot_members *s, const double *phi, fk_error *err)
{
    *ctx = NULL;
    const uint64_t n = s->n;
    if (n > (UINT64_C(1) << 31)) return fk_fail(err, FK_EUNSUP, "a group of more than 2^31 members");
    int st = fk_gpu_reserve(fk_gpu_unbind_bytes(n), err);
    if (st) return st;
    std::unique_ptr<udev> d(new (std::nothrow) udev);
    if (!d) return fk_fail(err, FK_ENOMEM, "out of memory for a group's device state");
    d->n = d->ns = n;
    if ((st = d->s[0].alloc(5 * n, err)) || (st = d->s[1].alloc(5 * n, err))) return st;
    const double *h[5] = {s->x, s->y, s->z, s->m, phi};
    for (int f = 0; f < 5; f++)
        if (n && h[f]) FK_CU(cudaMemcpy(d->a(f), h[f], n * 8, cudaMemcpyHostToDevice), err);
    *ctx = d.release();
    return FK_OK;
}

extern "C" int fk_gpu_unbind_sum(void *ctx, const fk_pot_params *p, double *phi, fk_error *err)
{
    udev *d = (udev *)ctx;
    int st = fk_pot_check(p, err);
    if (st) return st;
    if ((st = fk_gpu_pot_phi_dev(d->ns, d->a(0), d->a(1), d->a(2), d->a(3), p, d->a(4), err))) return st;
    if (d->ns) FK_CU(cudaMemcpy(phi, d->a(4), d->ns * 8, cudaMemcpyDeviceToHost), err);
    return FK_OK;
}

extern "C" int fk_gpu_unbind_load(void *ctx, const double *phi, fk_error *err)
{
    udev *d = (udev *)ctx;
    if (d->ns) FK_CU(cudaMemcpy(d->a(4), phi, d->ns * 8, cudaMemcpyHostToDevice), err);
    return FK_OK;
}

extern "C" int fk_gpu_unbind_drop(void *ctx, const uint64_t *k, size_t nu, int update, double G, double eps,
                                  double *phi, fk_error *err)
{
    udev *d = (udev *)ctx;
    if (nu > d->ns) return fk_fail(err, FK_EINVAL, "%zu leavers of %llu members", nu, (unsigned long long)d->ns);
    int st;
    if (nu > d->k.count) {
        d->k.release();
        if ((st = d->k.alloc(nu, err))) return st;
    }
    if (nu) FK_CU(cudaMemcpy(d->k.p, k, nu * sizeof(uint64_t), cudaMemcpyHostToDevice), err);
    if (update && nu) {
        if (4 * nu > d->l.count) {
            d->l.release();
            if ((st = d->l.alloc(4 * nu, err))) return st;
        }
        k_ugather<<<ublocks(nu), UTPB>>>(d->s[d->side].p, d->n, d->k.p, nu, d->l.p);
        FK_LAUNCHED("k_ugather", err);
    }
    k_udrop<<<ublocks(d->ns), UTPB>>>(d->s[d->side].p, d->n, d->ns, d->k.p, nu, d->s[1 - d->side].p);
    FK_LAUNCHED("k_udrop", err);
    d->side = 1 - d->side;
    d->ns -= nu;
    if (update && nu && d->ns) {
        const double *lx = d->l.p, *ly = lx + nu, *lz = ly + nu, *lm = lz + nu;
        k_unbind_update<<<ublocks(d->ns), UTPB>>>(d->a(0), d->a(1), d->a(2), d->ns, lx, ly, lz, lm, nu, G, eps * eps,
                                                  d->a(4));
        FK_LAUNCHED("k_unbind_update", err);
    }
    if (update && d->ns) FK_CU(cudaMemcpy(phi, d->a(4), d->ns * 8, cudaMemcpyDeviceToHost), err);
    return FK_OK;
}

extern "C" void fk_gpu_unbind_close(void *ctx)
{
    delete (udev *)ctx;
}
