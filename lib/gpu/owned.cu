/* owned.cu - a rank's whole link on its GPU (dist_link.c): the tree built, every level linked, each group's lowest owned index and ID. */
#include <stdint.h>
#include <string.h>

#include "common.cuh"
#include "gpu.h"
#include "internal.cuh"

/* kmin[r] = the lowest owned index (perm[t] < no) of the group whose sink is
 * r, idmin[r] the lowest ID among them. Particles of one group lie together
 * in tree order, so the lanes of a warp mostly share a sink: each set of
 * lanes with one sink takes its minimum first and one lane writes it. */
template <typename I>
__global__ void k_owned_min(const uint32_t *__restrict__ sink, const uint32_t *__restrict__ perm, uint64_t n,
                            uint64_t no, const I *__restrict__ id, uint32_t *kmin, I *idmin)
{
    const unsigned lane = threadIdx.x & 31;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t base = blockIdx.x * (uint64_t)blockDim.x + (threadIdx.x & ~31u); base < n; base += stride) {
        const uint64_t t = base + lane;
        const uint32_t j = t < n ? perm[t] : UINT32_MAX;
        const bool own = j < no;
        const unsigned act = __ballot_sync(0xffffffffu, own);
        if (!own) continue;
        const uint32_t r = sink[t];
        bool lead;
        const unsigned peers = peers_of(act, r, &lead);
        const uint32_t jm = peers_min(peers, j);
        const I im = peers_min(peers, id[j]);
        if (lead) {
            atomicMin(kmin + r, jm);
            atomicMin(idmin + r, im);
        }
    }
}

/* Each particle's answers in its own order: key[j] = kmin of its group,
 * low[j] = idmin of its group for the owned ones. */
template <typename I>
__global__ void k_owned_scatter(const uint32_t *__restrict__ sink, const uint32_t *__restrict__ perm, uint64_t n,
                                uint64_t no, const uint32_t *__restrict__ kmin, const I *__restrict__ idmin,
                                uint32_t *__restrict__ key, I *__restrict__ low)
{
    for (uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; t < n; t += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t j = perm[t], r = sink[t];
        key[j] = kmin[r];
        if (j < no) low[j] = idmin[r];
    }
}

/* Velocities into tree order for 6D: out[i] = in[perm[i]]. */
__global__ void k_owned_permute3(const float *__restrict__ in, const uint32_t *__restrict__ perm, uint64_t n,
                                 float *__restrict__ out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t j = perm[i];
        for (int k = 0; k < 3; k++) out[3 * i + k] = in[3 * j + k];
    }
}

extern "C" uint64_t fk_gpu_link_owned_bytes(uint64_t n, uint64_t no, uint32_t leafsize, int sixd, int idw)
{
    const uint64_t nnodes = n ? (UINT64_C(2) << fk_tree_depth(n, leafsize)) - 1 : 0, w = idw == 4 ? 4 : 8;
    /* d_perm and the boxes throughout, velocities in 6D; then the largest of
     * the build (d_pos and its peak), the link (d_sorted, IDs, d_sink,
     * scratch), and the answers (d_sorted, IDs, d_sink, kmin, idmin, key,
     * low) */
    const uint64_t build = 12 * n + fk_gpu_build_peak(n), link = 16 * n + w * no + fk_gpu_link_scratch(n, nnodes, sixd),
                   answer = 16 * n + w * no + 4 * n + w * n + 4 * n + w * no;
    uint64_t peak = build > link ? build : link;
    if (answer > peak) peak = answer;
    return n * 4 + nnodes * 24 + (sixd ? 24 * n : 0) + peak;
}

/* fk_gpu_link_owned with IDs of type I. */
template <typename I>
static int link_owned(const float *pos, const float *vel, uint64_t n, uint64_t no, const I *id, uint32_t leafsize,
                      double lo, double span, const fk_linkopts *o, int nlevels, uint32_t *const *key,
                      void *const *low, fk_linkstats *stats, fk_gputimes *times, fk_error *err)
{
    fk_tree t;
    int st = fk_tree_alloc(&t, n, leafsize, "gpu-hilbert", err);
    if (st) return st;
    free(t.box); /* the boxes stay on the device */
    t.box = NULL;
    int sixd = 0;
    for (int k = 0; k < nlevels; k++) {
        if ((st = fk_link_check(&o[k], err))) return st;
        sixd |= o[k].psi > 0;
    }
    if (n >= (UINT64_C(1) << 31)) return fk_fail(err, FK_EUNSUP, "the GPU linker handles fewer than 2^31 particles");
    const int idw = (int)sizeof(I);
    fk_gputimes tz;
    memset(&tz, 0, sizeof tz);
    tz.bytes_needed = fk_gpu_link_owned_bytes(n, no, leafsize, sixd, idw);
    if ((st = fk_gpu_reserve_for(
             n, [&](uint64_t m) { return fk_gpu_link_owned_bytes(m, m < no ? m : no, leafsize, sixd, idw); }, err)))
        return st;
    dbuf<float> d_pos, d_sorted, d_box, d_vel, d_svel;
    dbuf<uint32_t> d_perm, d_sink;
    dbuf<I> d_id;
    if ((st = d_pos.alloc(3 * n, err)) || (st = d_perm.alloc(n, err)) || (st = d_box.alloc(6 * t.nnodes, err)) ||
        (sixd && ((st = d_vel.alloc(3 * n, err)) || (st = d_svel.alloc(3 * n, err)))))
        return st;
    timer tm;
    if ((st = tm.mark(err)) || (st = fk_gpu_put(d_pos.p, pos, 12 * n, err)) ||
        (sixd && (st = fk_gpu_put(d_vel.p, vel, 12 * n, err))) || (st = tm.mark(err)) ||
        (st = fk_gpu_build_dev(d_pos.p, &t, lo, span, d_sorted, d_perm.p, d_box.p, err)))
        return st;
    if (sixd && n) {
        k_owned_permute3<<<fk_grid(n, 256), 256>>>(d_vel.p, d_perm.p, n, d_svel.p);
        FK_LAUNCHED("k_owned_permute3", err);
    }
    d_pos.release(); /* the link needs the sorted copy only */
    d_vel.release();
    if ((st = tm.mark(err)) || (st = d_id.alloc(no, err)) || (st = fk_gpu_put(d_id.p, id, sizeof(I) * no, err)) ||
        (st = tm.mark(err)))
        return st;
    double t_link = 0, t_down = 0;
    for (int k = 0; k < nlevels; k++) {
        unsigned long long counts[2];
        uint64_t groups, listed;
        double phase[4];
        timer lk;
        if ((st = d_sink.alloc(n, err)) || (st = lk.mark(err)) ||
            (st = fk_gpu_link_dev(&t, d_sorted.p, o[k].psi > 0 ? d_svel.p : nullptr, d_box.p, &o[k], d_sink.p, counts,
                                  &groups, phase, &listed, err)))
            return st;
        if (k == 0) { /* level 0's phases, as fk_gpu_link_levels reports them */
            memcpy(tz.link_phase, phase, sizeof phase);
            tz.leaf_pairs = listed;
        }
        if (stats) {
            stats[k].pair_tests = counts[0];
            stats[k].node_tests = counts[1];
            stats[k].dense_nodes = 0;
            stats[k].groups = groups;
        }
        /* the answers: each group's lowest owned index and ID, back in the particles' order */
        dbuf<I> d_idmin, d_low;
        dbuf<uint32_t> d_kmin, d_key;
        if ((st = d_kmin.alloc(n, err)) || (st = d_idmin.alloc(n, err))) return st;
        FK_CU(cudaMemsetAsync(d_kmin.p, 0xff, 4 * n, cudaStreamPerThread), err);
        FK_CU(cudaMemsetAsync(d_idmin.p, 0xff, sizeof(I) * n, cudaStreamPerThread), err);
        if (n) {
            k_owned_min<I><<<fk_grid(n, 256), 256>>>(d_sink.p, d_perm.p, n, no, d_id.p, d_kmin.p, d_idmin.p);
            FK_LAUNCHED("k_owned_min", err);
        }
        if ((st = d_key.alloc(n, err)) || (st = d_low.alloc(no, err))) return st;
        if (n) {
            k_owned_scatter<I>
                <<<fk_grid(n, 256), 256>>>(d_sink.p, d_perm.p, n, no, d_kmin.p, d_idmin.p, d_key.p, d_low.p);
            FK_LAUNCHED("k_owned_scatter", err);
        }
        d_kmin.release();
        d_idmin.release();
        d_sink.release();
        if ((st = lk.mark(err)) || (st = fk_gpu_get(key[k], d_key.p, 4 * n, err)) ||
            (st = fk_gpu_get(low[k], d_low.p, sizeof(I) * no, err)) || (st = lk.mark(err)))
            return st;
        t_link += lk.secs(0, 1);
        t_down += lk.secs(1, 2);
    }
    FK_CU(cudaDeviceSynchronize(), err);
    tz.upload = tm.secs(0, 1) + tm.secs(2, 3);
    tz.build = tm.secs(1, 2);
    tz.link = t_link;
    tz.download = t_down;
    if (times) *times = tz;
    return FK_OK;
}

extern "C" int fk_gpu_link_owned(const float *pos, const float *vel, uint64_t n, uint64_t no, const void *id, int idw,
                                 uint32_t leafsize, double lo, double span, const fk_linkopts *o, int nlevels,
                                 uint32_t *const *key, void *const *low, fk_linkstats *stats, fk_gputimes *times,
                                 fk_error *err)
{
    FK_GPU_ENTER(err);
    if (no > n || (idw != 4 && idw != 8))
        return fk_fail(err, FK_EINVAL, "%llu owned particles of %llu, IDs of %d bytes", (unsigned long long)no,
                       (unsigned long long)n, idw);
    if (idw == 4)
        return link_owned(pos, vel, n, no, (const uint32_t *)id, leafsize, lo, span, o, nlevels, key, low, stats,
                          times, err);
    return link_owned(pos, vel, n, no, (const unsigned long long *)id, leafsize, lo, span, o, nlevels, key, low, stats,
                      times, err);
}
