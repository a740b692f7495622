/* unbind.cu - the unbinding on the GPU: the leavers' terms taken off the stayers' potentials, in double, and a group's passes with its S held there. */
#include <stdint.h>

#include <memory>
#include <new>
#include <vector>

#include <cub/cub.cuh>

#include "common.cuh"
#include "gpu.h"
#include "internal.cuh"
#include "potential.h"
#include "unbind.h"

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
    FK_GPU_ENTER(err);
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

/* ---- a group's S held on the device, its passes run there (fk_unbind_device) ---- */

#define LANES FK_UNBIND_LANES

/* S on the device: x y z m phi (n doubles each, stride n) and the members'
 * places in the group, in two copies (a drop compacts one into the other);
 * the group's velocities by member; the energies of S; a drop's flags, their
 * scan, the leavers' places and, for an update, their x y z m; the chunks'
 * sums; CUB's scratch. */
struct udev {
    uint64_t n = 0, ns = 0;
    int side = 0;
    dbuf<double> s[2], v, e, l, part;
    dbuf<uint32_t> idx[2], f, pos, L;
    dbuf<unsigned char> temp;
    size_t temp_bytes = 0;
    double *a(int f) { return s[side].p + (uint64_t)f * n; } /* field f of S: 0 x, 1 y, 2 z, 3 m, 4 phi */
};

static unsigned uchunks(uint64_t ns)
{
    return (unsigned)((ns + FK_UNBIND_CHUNK - 1) / FK_UNBIND_CHUNK);
}

/* The lanes of a[0..LANES) combined pairwise into a[0] as unbind.c's
 * lanes_add (max: lanes_max); every thread of the block calls it. */
template <bool MAX> __device__ void lanes_tree(double *a)
{
    for (int h = LANES / 2; h > 0; h /= 2) {
        __syncthreads();
        const int j = threadIdx.x;
        if (j < h) {
            if (MAX)
                a[j] = a[j + h] > a[j] ? a[j + h] : a[j];
            else
                a[j] += a[j + h];
        }
    }
    __syncthreads();
}

static __global__ void k_iota(uint32_t *idx, uint64_t n)
{
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < n; k += (uint64_t)gridDim.x * blockDim.x)
        idx[k] = (uint32_t)k;
}

/* Block c: fk_unbind_lane_sums of chunk c of S (m: S's masses, v: the
 * velocities by member, stride n) into part[7 c ..). */
__global__ void __launch_bounds__(LANES) k_usums(const double *__restrict__ m, const uint32_t *__restrict__ idx,
                                                 const double *__restrict__ v, uint64_t n, uint64_t ns,
                                                 double *__restrict__ part)
{
    __shared__ double a[7][LANES];
    const uint64_t lo = blockIdx.x * (uint64_t)FK_UNBIND_CHUNK, hi = ns - lo < FK_UNBIND_CHUNK ? ns : lo + FK_UNBIND_CHUNK;
    const int j = threadIdx.x;
    double c[7] = {0, 0, 0, 0, 0, 0, 0};
    for (uint64_t k = lo + j; k < hi; k += LANES) {
        const uint32_t i = idx[k];
        const double w = m[k], u0 = v[i], u1 = v[n + i], u2 = v[2 * n + i];
        c[0] += w;
        c[1] += w * u0, c[2] += w * u1, c[3] += w * u2;
        c[4] += u0, c[5] += u1, c[6] += u2;
    }
    for (int q = 0; q < 7; q++) {
        a[q][j] = c[q];
        lanes_tree<false>(a[q]);
    }
    if (j < 7) part[7 * (uint64_t)blockIdx.x + j] = a[j][0];
}

/* Block c: fk_unbind_lane_energies of chunk c of S in the frame (f0, f1,
 * f2) into part[7 c ..), the energies into e. */
__global__ void __launch_bounds__(LANES) k_uenergies(const double *__restrict__ m, const double *__restrict__ phi,
                                                     const uint32_t *__restrict__ idx, const double *__restrict__ v,
                                                     uint64_t n, uint64_t ns, double f0, double f1, double f2,
                                                     int massive, double *__restrict__ e, double *__restrict__ part)
{
    __shared__ double a[7][LANES];
    const uint64_t lo = blockIdx.x * (uint64_t)FK_UNBIND_CHUNK, hi = ns - lo < FK_UNBIND_CHUNK ? ns : lo + FK_UNBIND_CHUNK;
    const int j = threadIdx.x;
    double c[7] = {0, 0, 0, 0, 0, 0, 0};
    for (uint64_t k = lo + j; k < hi; k += LANES) {
        const uint32_t i = idx[k];
        const double u0 = v[i] - f0, u1 = v[n + i] - f1, u2 = v[2 * n + i] - f2;
        const double w = massive ? m[k] : 1.0, u2s = u0 * u0 + u1 * u1 + u2 * u2, ek = 0.5 * u2s + phi[k];
        e[k] = ek;
        c[0] += w * u2s;
        if (ek >= 0) {
            c[1] += w;
            c[2] += w * u0, c[3] += w * u1, c[4] += w * u2;
            if (ek > c[5]) c[5] = ek;
            c[6] += 1;
        }
    }
    for (int q = 0; q < 7; q++) {
        a[q][j] = c[q];
        if (q == 5)
            lanes_tree<true>(a[q]);
        else
            lanes_tree<false>(a[q]);
    }
    if (j < 7) part[7 * (uint64_t)blockIdx.x + j] = a[j][0];
}

/* f[k] = 1 for the leavers of S (e >= emin), k < ns; f[ns] = 0. */
__global__ void k_uflag(const double *__restrict__ e, uint64_t ns, double emin, uint32_t *__restrict__ f)
{
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k <= ns; k += (uint64_t)gridDim.x * blockDim.x)
        f[k] = k < ns && e[k] >= emin;
}

/* With pos the exclusive scan of f: leaver k to L[pos[k]], stayer k (5
 * fields of stride n and its place) to k - pos[k] in dst. */
__global__ void k_usplit(const double *__restrict__ src, const uint32_t *__restrict__ sidx, uint64_t n, uint64_t ns,
                         const uint32_t *__restrict__ f, const uint32_t *__restrict__ pos, uint32_t *__restrict__ L,
                         double *__restrict__ dst, uint32_t *__restrict__ didx)
{
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < ns; k += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t r = pos[k];
        if (f[k]) {
            L[r] = (uint32_t)k;
            continue;
        }
        const uint64_t d = k - r;
        for (int q = 0; q < 5; q++) dst[(uint64_t)q * n + d] = src[(uint64_t)q * n + k];
        didx[d] = sidx[k];
    }
}

/* The leavers' x y z m (4 arrays of nu) from S (stride n). */
__global__ void k_ugather(const double *__restrict__ src, uint64_t n, const uint32_t *__restrict__ L, uint64_t nu,
                          double *__restrict__ l)
{
    for (uint64_t q = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; q < nu; q += (uint64_t)gridDim.x * blockDim.x)
        for (int f = 0; f < 4; f++) l[(uint64_t)f * nu + q] = src[(uint64_t)f * n + L[q]];
}

extern "C" uint64_t fk_gpu_unbind_bytes(uint64_t n)
{
    /* S twice (x y z m phi, places), the velocities, the energies, the flags
     * and their scan, the leavers' places and, for an update, at most
     * FK_UNBIND_GPU_PAIRS leavers (unbind.h) of 4 doubles, the chunks' sums,
     * CUB's scratch (a margin); then a sum: fk_gpu_pot_tree's reservation
     * (its exact sums' jobs: 24 bytes a block of 256), which also counts S
     * once more: a margin */
    return 88 * n + 24 * n + 8 * n + 8 * (n + 1) + 4 * n + 32 * 8192 + 56 * (n / FK_UNBIND_CHUNK + 1) + n / 16 +
           (1 << 20) + fk_gpu_pot_bytes(n, 1, n) + (n / 256 + 1) * 24;
}

extern "C" uint64_t fk_gpu_unbind_budget(void)
{
    size_t fr = 0, tot = 0;
    fk_error err;
    memset(&err, 0, sizeof err);
    if (fk_gpu_use(&err) || fk_gpu_free_bytes(&fr, &tot, &err)) return 0;
    return fr / 10 * 9; /* a margin for the allocator and the driver */
}

extern "C" int fk_gpu_unbind_open(void **ctx, const fk_unbind_group *g, fk_error *err)
{
    FK_GPU_ENTER(err);
    *ctx = NULL;
    const uint64_t n = g->n;
    if (n >= (UINT64_C(1) << 31) - 1) return fk_fail(err, FK_EUNSUP, "a group of 2^31 - 1 members or more");
    int st = fk_gpu_reserve(fk_gpu_unbind_bytes(n), err);
    if (st) return st;
    std::unique_ptr<udev> d(new (std::nothrow) udev);
    if (!d) return fk_fail(err, FK_ENOMEM, "out of memory for a group's device state");
    d->n = d->ns = n;
    if ((st = d->s[0].alloc(5 * n, err)) || (st = d->s[1].alloc(5 * n, err)) || (st = d->idx[0].alloc(n, err)) ||
        (st = d->idx[1].alloc(n, err)) || (st = d->v.alloc(3 * n, err)) || (st = d->e.alloc(n, err)) ||
        (st = d->f.alloc(n + 1, err)) || (st = d->pos.alloc(n + 1, err)) || (st = d->L.alloc(n, err)) ||
        (st = d->part.alloc(7 * (n / FK_UNBIND_CHUNK + 1), err)))
        return st;
    FK_CU(cub::DeviceScan::ExclusiveSum(nullptr, d->temp_bytes, d->f.p, d->pos.p, (int)(n + 1)), err);
    if ((st = d->temp.alloc(d->temp_bytes, err))) return st;
    const double *h[5] = {g->x, g->y, g->z, g->m, g->phi}, *hv[3] = {g->vx, g->vy, g->vz};
    for (int f = 0; f < 5; f++)
        if (n && h[f]) FK_CU(cudaMemcpy(d->a(f), h[f], n * 8, cudaMemcpyHostToDevice), err);
    for (int f = 0; f < 3; f++)
        if (n) FK_CU(cudaMemcpy(d->v.p + (uint64_t)f * n, hv[f], n * 8, cudaMemcpyHostToDevice), err);
    k_iota<<<fk_grid_all(n, UTPB), UTPB>>>(d->idx[0].p, n);
    FK_LAUNCHED("k_iota", err);
    *ctx = d.release();
    return FK_OK;
}

extern "C" int fk_gpu_unbind_sum(void *ctx, const fk_pot_params *p, fk_error *err)
{
    FK_GPU_ENTER(err);
    udev *d = (udev *)ctx;
    int st = fk_pot_check(p, err);
    if (st) return st;
    return fk_gpu_pot_phi_dev(d->ns, d->a(0), d->a(1), d->a(2), d->a(3), p, d->a(4), err);
}

extern "C" int fk_gpu_unbind_get(void *ctx, double *x, double *y, double *z, double *m, double *phi, fk_error *err)
{
    FK_GPU_ENTER(err);
    udev *d = (udev *)ctx;
    double *h[5] = {x, y, z, m, phi};
    for (int f = 0; f < 5; f++)
        if (d->ns && h[f]) FK_CU(cudaMemcpy(h[f], d->a(f), d->ns * 8, cudaMemcpyDeviceToHost), err);
    return FK_OK;
}

extern "C" int fk_gpu_unbind_load(void *ctx, const double *phi, fk_error *err)
{
    FK_GPU_ENTER(err);
    udev *d = (udev *)ctx;
    if (d->ns) FK_CU(cudaMemcpy(d->a(4), phi, d->ns * 8, cudaMemcpyHostToDevice), err);
    return FK_OK;
}

extern "C" int fk_gpu_unbind_sums(void *ctx, double (*part)[7], fk_error *err)
{
    FK_GPU_ENTER(err);
    udev *d = (udev *)ctx;
    if (d->ns == 0) return FK_OK;
    const unsigned nc = uchunks(d->ns);
    k_usums<<<nc, LANES>>>(d->a(3), d->idx[d->side].p, d->v.p, d->n, d->ns, d->part.p);
    FK_LAUNCHED("k_usums", err);
    FK_CU(cudaMemcpy(part, d->part.p, nc * 7 * sizeof(double), cudaMemcpyDeviceToHost), err);
    return FK_OK;
}

extern "C" int fk_gpu_unbind_energies(void *ctx, const double v[3], int massive, double (*part)[7], fk_error *err)
{
    FK_GPU_ENTER(err);
    udev *d = (udev *)ctx;
    if (d->ns == 0) return FK_OK;
    const unsigned nc = uchunks(d->ns);
    k_uenergies<<<nc, LANES>>>(d->a(3), d->a(4), d->idx[d->side].p, d->v.p, d->n, d->ns, v[0], v[1], v[2], massive,
                               d->e.p, d->part.p);
    FK_LAUNCHED("k_uenergies", err);
    FK_CU(cudaMemcpy(part, d->part.p, nc * 7 * sizeof(double), cudaMemcpyDeviceToHost), err);
    return FK_OK;
}

extern "C" int fk_gpu_unbind_drop(void *ctx, double emin, size_t maxupd, double G, double eps, size_t *nu,
                                  fk_error *err)
{
    FK_GPU_ENTER(err);
    udev *d = (udev *)ctx;
    *nu = 0;
    const uint64_t ns = d->ns;
    if (ns == 0) return FK_OK;
    k_uflag<<<fk_grid_all(ns + 1, UTPB), UTPB>>>(d->e.p, ns, emin, d->f.p);
    FK_LAUNCHED("k_uflag", err);
    size_t tb = d->temp_bytes;
    FK_CU(cub::DeviceScan::ExclusiveSum(d->temp.p, tb, d->f.p, d->pos.p, (int)(ns + 1)), err);
    const int from = d->side, to = 1 - from;
    k_usplit<<<fk_grid_all(ns, UTPB), UTPB>>>(d->s[from].p, d->idx[from].p, d->n, ns, d->f.p, d->pos.p, d->L.p,
                                              d->s[to].p, d->idx[to].p);
    FK_LAUNCHED("k_usplit", err);
    uint32_t left = 0;
    FK_CU(cudaMemcpy(&left, d->pos.p + ns, sizeof left, cudaMemcpyDeviceToHost), err);
    *nu = left;
    d->side = to;
    d->ns = ns - left;
    if (left == 0 || left > maxupd || d->ns == 0) return FK_OK;
    int st;
    if (4 * (uint64_t)left > d->l.count) {
        d->l.release();
        if ((st = d->l.alloc(4 * (uint64_t)left, err))) return st;
    }
    k_ugather<<<fk_grid_all(left, UTPB), UTPB>>>(d->s[from].p, d->n, d->L.p, left, d->l.p);
    FK_LAUNCHED("k_ugather", err);
    const double *lx = d->l.p, *ly = lx + left, *lz = ly + left, *lm = lz + left;
    k_unbind_update<<<fk_grid_all(d->ns, UTPB), UTPB>>>(d->a(0), d->a(1), d->a(2), d->ns, lx, ly, lz, lm, left, G,
                                                        eps * eps, d->a(4));
    FK_LAUNCHED("k_unbind_update", err);
    return FK_OK;
}

extern "C" int fk_gpu_unbind_members(void *ctx, size_t *idx, fk_error *err)
{
    FK_GPU_ENTER(err);
    udev *d = (udev *)ctx;
    if (d->ns == 0) return FK_OK;
    std::vector<uint32_t> h(d->ns);
    FK_CU(cudaMemcpy(h.data(), d->idx[d->side].p, d->ns * sizeof(uint32_t), cudaMemcpyDeviceToHost), err);
    for (uint64_t k = 0; k < d->ns; k++) idx[k] = h[k];
    return FK_OK;
}

extern "C" void fk_gpu_unbind_close(void *ctx)
{
    fk_error err;
    fk_gpu_use(&err); /* its buffers are freed on the device that holds them */
    delete (udev *)ctx;
}
