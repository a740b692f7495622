/* unbind.cu - the unbinding's incremental update on the GPU: the leavers' terms taken off the stayers' potentials, in double. */
#include <stdint.h>

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
    /* fk_gpu_pot_tree's reservation (its exact sums' jobs: 24 bytes a block
     * of 256), or the update's stayers and at most FK_UNBIND_GPU_PAIRS
     * leavers (unbind.h), 4 doubles each */
    const uint64_t tree = fk_gpu_pot_bytes(n, 1, n) + (n / 256 + 1) * 24, update = 32 * n + 32 * 8192;
    return tree > update ? tree : update;
}
