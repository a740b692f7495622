/* link.cu - FoF linking on the GPU: one warp per leaf walks the implicit tree stacklessly and links on the sink array. */
#include <string.h>

#include "boxes.cuh"
#include "common.cuh"
#include "gpu.h"
#include "internal.cuh"
#include "predicate.h"

#define FULL 0xffffffffu
#define NO_TOP 0xffffffffu
#define WARPS_PER_BLOCK 4

/* Everything a linking kernel needs, by value. */
struct lctx {
    const float *pos, *vel, *box, *vbox;
    const uint8_t *clique;
    const uint32_t *top;
    uint32_t *sink;
    fk_linkparams p;
    uint64_t n, first_leaf, nleaves, nnodes;
};

/* One thread a node: is every pair of its particles linked? */
__global__ void k_cliques(lctx c, uint8_t *clique)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < c.nnodes;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const float *vb = c.p.sixd ? c.vbox + 6 * i : nullptr;
        clique[i] = fk_node_pair(c.box + 6 * i, c.box + 6 * i, vb, vb, &c.p) == FK_NODES_LINKED;
    }
}

/* One thread a leaf: its topmost clique ancestor, and the sinks it starts
 * with (a clique's particles start as one group under its first). */
__global__ void k_tops(lctx c, uint32_t *top, uint32_t *sink)
{
    for (uint64_t L = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; L < c.nleaves;
         L += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t A = c.first_leaf + L, best = NO_TOP;
        for (uint64_t x = A;; x = (x - 1) / 2) {
            if (c.clique[x]) best = x;
            if (x == 0) break;
        }
        top[L] = (uint32_t)best;
        uint64_t as, ae, ts = 0, te;
        fk_tree_range(c.n, A, &as, &ae);
        if (best != NO_TOP) fk_tree_range(c.n, best, &ts, &te);
        for (uint64_t i = as; i < ae; i++) sink[i] = (uint32_t)(best != NO_TOP ? ts : i);
    }
}

/* The predicate and the node bounds, with the 3D case free of 6D code. */
template <bool SIXD>
__device__ __forceinline__ bool friends(const float *pa, const float *pb, const float *va, const float *vb,
                                        const fk_linkparams &p)
{
    if (SIXD) return fk_friends(pa, pb, va, vb, &p);
    return fk_sep2(pa, pb, p.g) < p.l2;
}

template <bool SIXD>
__device__ __forceinline__ int node_pair(const float *A, const float *B, const float *vA, const float *vB,
                                         const fk_linkparams &p)
{
    if (SIXD) return fk_node_pair(A, B, vA, vB, &p);
    double lo2, hi2;
    fk_box_bounds(A, B, p.g, &lo2, &hi2);
    return lo2 >= p.l2 ? FK_NODES_APART : hi2 < p.l2 ? FK_NODES_LINKED : FK_NODES_MAYBE;
}

__device__ __forceinline__ void shfl3(const float *a, float *out, int j)
{
    out[0] = __shfl_sync(FULL, a[0], j);
    out[1] = __shfl_sync(FULL, a[1], j);
    out[2] = __shfl_sync(FULL, a[2], j);
}

/* Links one leaf against the leaf X (after it); lane i holds A's particle
 * i (pa, va) and X's particle i (px, vx). Mirrors leaf_pairs() in
 * link_cpu.c: clique leaves need only one link, found with a ballot. */
template <bool SIXD>
__device__ __forceinline__ void leaf_pairs(const lctx &c, int lane, bool has, uint32_t me, uint64_t as, int cnt, const float *pa,
                           const float *va, uint64_t xs, int cx, bool connA, bool cX)
{
    float px[3] = {0, 0, 0}, vx[3] = {0, 0, 0}, pj[3], vj[3];
    if (lane < cx) {
        for (int k = 0; k < 3; k++) px[k] = c.pos[3 * (xs + lane) + k];
        if (SIXD)
            for (int k = 0; k < 3; k++) vx[k] = c.vel[3 * (xs + lane) + k];
    }
    if (connA && cX) { /* two cliques: one link joins them */
        for (int j = 0; j < cx; j++) {
            shfl3(px, pj, j);
            if (SIXD) shfl3(vx, vj, j);
            unsigned m = __ballot_sync(FULL, has && friends<SIXD>(pa, pj, va, vj, c.p));
            if (m) {
                if (lane == __ffs(m) - 1) sink_unite(c.sink, me, (uint32_t)(xs + j));
                return;
            }
        }
    } else if (cX) { /* each particle of A needs one link into the clique X */
        bool act = has && sink_find(c.sink, me) != sink_find(c.sink, (uint32_t)xs);
        for (int j = 0; j < cx && __any_sync(FULL, act); j++) {
            shfl3(px, pj, j);
            if (SIXD) shfl3(vx, vj, j);
            if (act && friends<SIXD>(pa, pj, va, vj, c.p)) {
                sink_unite(c.sink, me, (uint32_t)(xs + j));
                act = false;
            }
        }
    } else if (connA) { /* each particle of X needs one link into the clique A */
        bool need = lane < cx && sink_find(c.sink, (uint32_t)(xs + lane)) != sink_find(c.sink, (uint32_t)as);
        unsigned todo = __ballot_sync(FULL, need);
        while (todo) {
            int j = __ffs(todo) - 1;
            todo &= todo - 1;
            shfl3(px, pj, j);
            if (SIXD) shfl3(vx, vj, j);
            unsigned m = __ballot_sync(FULL, has && friends<SIXD>(pa, pj, va, vj, c.p));
            if (m && lane == __ffs(m) - 1) sink_unite(c.sink, me, (uint32_t)(xs + j));
        }
    } else {
        for (int j = 0; j < cx; j++) {
            shfl3(px, pj, j);
            if (SIXD) shfl3(vx, vj, j);
            if (has && friends<SIXD>(pa, pj, va, vj, c.p)) sink_unite(c.sink, me, (uint32_t)(xs + j));
        }
    }
}

/* One warp a leaf A: links A's own pairs, then walks the subtrees after A
 * (after its topmost clique, if it has one) in depth-first order without a
 * stack, pruning and merging whole nodes by their boxes. Mirrors
 * link_leaf() in link_cpu.c; every decision is warp-uniform. */
template <bool SIXD>
__global__ void __launch_bounds__(32 * WARPS_PER_BLOCK) k_link(lctx c, unsigned long long *counters)
{
    const int lane = threadIdx.x & 31;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t nwarps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    unsigned long long pairs = 0, nodes = 0;
    for (uint64_t L = warp; L < c.nleaves; L += nwarps) {
        const uint64_t A = c.first_leaf + L;
        uint64_t as, ae;
        fk_tree_range(c.n, A, &as, &ae);
        const int cnt = (int)(ae - as);
        const bool has = lane < cnt;
        const uint32_t me = (uint32_t)(as + lane);
        float pa[3] = {0, 0, 0}, va[3] = {0, 0, 0}, pj[3], vj[3];
        if (has) {
            for (int k = 0; k < 3; k++) pa[k] = c.pos[3 * (uint64_t)me + k];
            if (SIXD)
                for (int k = 0; k < 3; k++) va[k] = c.vel[3 * (uint64_t)me + k];
        }
        const uint32_t T = c.top[L];
        const bool connA = T != NO_TOP;
        if (!connA) {
            for (int j = 1; j < cnt; j++) {
                shfl3(pa, pj, j);
                if (SIXD) shfl3(va, vj, j);
                if (has && lane < j && friends<SIXD>(pa, pj, va, vj, c.p)) sink_unite(c.sink, me, (uint32_t)(as + j));
            }
            pairs += (unsigned long long)cnt * (cnt - 1) / 2;
        }
        float abox[6], avbox[6];
        for (int k = 0; k < 6; k++) abox[k] = c.box[6 * A + k];
        if (SIXD)
            for (int k = 0; k < 6; k++) avbox[k] = c.vbox[6 * A + k];
        for (uint64_t X = fk_tree_next(connA ? T : A); X != 0;) {
            nodes++;
            uint64_t xs, xe;
            fk_tree_range(c.n, X, &xs, &xe);
            const int b = node_pair<SIXD>(abox, c.box + 6 * X, avbox, SIXD ? c.vbox + 6 * X : nullptr, c.p);
            if (b == FK_NODES_APART) {
                X = fk_tree_next(X);
                continue;
            }
            const bool cX = c.clique[X];
            if (b == FK_NODES_LINKED) { /* A and X become one group */
                if (!connA && has) sink_unite(c.sink, me, (uint32_t)xs);
                if (!cX)
                    for (uint64_t x = xs + lane; x < xe; x += 32) sink_unite(c.sink, (uint32_t)as, (uint32_t)x);
                else if (lane == 0)
                    sink_unite(c.sink, (uint32_t)as, (uint32_t)xs);
                X = fk_tree_next(X);
                continue;
            }
            if (connA && cX) {
                int same = 0;
                if (lane == 0) same = sink_find(c.sink, (uint32_t)as) == sink_find(c.sink, (uint32_t)xs);
                if (__shfl_sync(FULL, same, 0)) {
                    X = fk_tree_next(X);
                    continue;
                }
            }
            if (X < c.first_leaf) {
                X = 2 * X + 1;
                continue;
            }
            leaf_pairs<SIXD>(c, lane, has, me, as, cnt, pa, va, xs, (int)(xe - xs), connA, cX);
            pairs += (unsigned long long)cnt * (xe - xs);
            X = fk_tree_next(X);
        }
    }
    if (lane == 0) {
        atomicAdd(counters, pairs);
        atomicAdd(counters + 1, nodes);
    }
}

static unsigned grid_for(uint64_t items, unsigned block)
{
    uint64_t g = (items + block - 1) / block;
    if (g > 0x7fffffffu) g = 0x7fffffffu;
    return g ? (unsigned)g : 1u;
}

uint64_t fk_gpu_link_scratch(uint64_t n, uint64_t nnodes, int sixd)
{
    (void)n;
    uint64_t leaves = (nnodes + 1) / 2;
    return nnodes + leaves * 4 + (sixd ? nnodes * 24 : 0) + 64;
}

int fk_gpu_link_dev(const fk_tree *t, const float *d_pos, const float *d_vel, const float *d_box,
                    const fk_linkopts *o, uint32_t *d_sink, unsigned long long counts[2], uint64_t *groups,
                    double phase[4], fk_error *err)
{
    const uint64_t n = t->n;
    const int sixd = o->psi > 0;
    counts[0] = counts[1] = 0;
    *groups = 0;
    for (int i = 0; i < 4; i++) phase[i] = 0;
    if (n == 0) return FK_OK;
    dbuf<float> d_vbox;
    dbuf<uint32_t> d_top;
    dbuf<uint8_t> d_clique;
    dbuf<unsigned long long> d_count;
    const uint64_t first = (UINT64_C(1) << t->depth) - 1, nleaves = t->nnodes - first;
    int st;
    if ((st = d_clique.alloc(t->nnodes, err)) || (st = d_top.alloc(nleaves, err)) || (st = d_count.alloc(2, err)) ||
        (sixd && (st = d_vbox.alloc(6 * t->nnodes, err))))
        return st;
    lctx c;
    memset(&c, 0, sizeof c);
    c.pos = d_pos;
    c.vel = d_vel;
    c.box = d_box;
    c.vbox = d_vbox.p;
    c.clique = d_clique.p;
    c.top = d_top.p;
    c.sink = d_sink;
    c.p = fk_link_params(o);
    c.n = n;
    c.first_leaf = first;
    c.nleaves = nleaves;
    c.nnodes = t->nnodes;
    FK_CU(cudaMemset(d_count.p, 0, 2 * sizeof(unsigned long long)), err);
    if (sixd && (st = fk_gpu_boxes(d_vel, t, d_vbox.p, err))) return st;
    timer tm;
    if ((st = tm.mark(err))) return st;
    k_cliques<<<grid_for(t->nnodes, 256), 256>>>(c, d_clique.p);
    FK_LAUNCHED("k_cliques", err);
    if ((st = tm.mark(err))) return st;
    k_tops<<<grid_for(nleaves, 256), 256>>>(c, d_top.p, d_sink);
    FK_LAUNCHED("k_tops", err);
    if ((st = tm.mark(err))) return st;
    if (sixd)
        k_link<true><<<grid_for(nleaves, WARPS_PER_BLOCK), 32 * WARPS_PER_BLOCK>>>(c, d_count.p);
    else
        k_link<false><<<grid_for(nleaves, WARPS_PER_BLOCK), 32 * WARPS_PER_BLOCK>>>(c, d_count.p);
    FK_LAUNCHED("k_link", err);
    if ((st = tm.mark(err)) || (st = fk_gpu_flatten(d_sink, n, groups, err)) || (st = tm.mark(err))) return st;
    FK_CU(cudaMemcpy(counts, d_count.p, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost), err);
    for (int i = 0; i < 4; i++) phase[i] = tm.secs(i, i + 1);
    return FK_OK;
}

static int link_preconditions(const fk_tree *t, const fk_linkopts *o, fk_error *err)
{
    int st = fk_link_check(o, err);
    if (st) return st;
    if (t->leafsize > 32)
        return fk_fail(err, FK_EUNSUP, "the GPU linker needs leaves of at most 32 particles, this tree has %u "
                                       "(rebuild it with kdbuild -s 32 or less)", t->leafsize);
    if (t->n >= (UINT64_C(1) << 31)) return fk_fail(err, FK_EUNSUP, "the GPU linker handles fewer than 2^31 particles");
    return FK_OK;
}

static void set_stats(fk_linkstats *stats, const unsigned long long counts[2], uint64_t groups)
{
    if (!stats) return;
    stats->pair_tests = counts[0];
    stats->node_tests = counts[1];
    stats->dense_nodes = 0;
    stats->groups = groups;
}

extern "C" uint64_t fk_gpu_link_bytes(uint64_t n, uint64_t nnodes, int sixd)
{
    return n * (12 + 4) + nnodes * 24 + (sixd ? n * 12 : 0) + fk_gpu_link_scratch(n, nnodes, sixd);
}

extern "C" int fk_gpu_link(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o,
                           uint32_t *sink, fk_linkstats *stats, fk_gputimes *times, fk_error *err)
{
    int st = link_preconditions(t, o, err);
    if (st) return st;
    const uint64_t n = t->n;
    const int sixd = o->psi > 0;
    fk_gputimes tz;
    memset(&tz, 0, sizeof tz);
    tz.bytes_needed = fk_gpu_link_bytes(n, t->nnodes, sixd);
    if ((st = fk_gpu_reserve(tz.bytes_needed, err))) return st;
    dbuf<float> d_pos, d_vel, d_box;
    dbuf<uint32_t> d_sink;
    if ((st = d_pos.alloc(3 * n, err)) || (st = d_sink.alloc(n, err)) || (st = d_box.alloc(6 * t->nnodes, err)) ||
        (sixd && (st = d_vel.alloc(3 * n, err))))
        return st;
    unsigned long long counts[2];
    uint64_t groups;
    timer tm;
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaMemcpy(d_pos.p, pos, 12 * n, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(d_box.p, t->box, 24 * t->nnodes, cudaMemcpyHostToDevice), err);
    if (sixd) FK_CU(cudaMemcpy(d_vel.p, vel, 12 * n, cudaMemcpyHostToDevice), err);
    if ((st = tm.mark(err)) || (st = fk_gpu_link_dev(t, d_pos.p, d_vel.p, d_box.p, o, d_sink.p, counts, &groups, tz.link_phase, err)) ||
        (st = tm.mark(err)))
        return st;
    FK_CU(cudaMemcpy(sink, d_sink.p, 4 * n, cudaMemcpyDeviceToHost), err);
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaDeviceSynchronize(), err);
    tz.upload = tm.secs(0, 1);
    tz.link = tm.secs(1, 2);
    tz.download = tm.secs(2, 3);
    if (times) *times = tz;
    set_stats(stats, counts, groups);
    return FK_OK;
}

extern "C" uint64_t fk_gpu_build_link_bytes(uint64_t n, uint32_t leafsize, int sixd)
{
    uint64_t nnodes = n ? (UINT64_C(2) << fk_tree_depth(n, leafsize)) - 1 : 0;
    uint64_t build = fk_gpu_build_scratch(n), link = fk_gpu_link_scratch(n, nnodes, sixd);
    return n * (12 + 12 + 4 + 4) + nnodes * 24 + (sixd ? 24 * n : 0) + (build > link ? build : link);
}

/* Velocities into tree order for 6D: out[i] = in[perm[i]]. */
__global__ void k_permute3(const float *__restrict__ in, const uint32_t *__restrict__ perm, uint64_t n,
                           float *__restrict__ out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t j = perm[i];
        for (int k = 0; k < 3; k++) out[3 * i + k] = in[3 * j + k];
    }
}

extern "C" int fk_gpu_build_link(const float *pos, const float *vel, uint64_t n, uint32_t leafsize, double lo,
                                 double span, const fk_linkopts *o, uint32_t *sink, uint32_t *perm,
                                 fk_linkstats *stats, fk_gputimes *times, fk_error *err)
{
    fk_tree t;
    int st = fk_tree_alloc(&t, n, leafsize, "gpu-hilbert", err);
    if (st) return st;
    free(t.box); /* the boxes stay on the device */
    t.box = NULL;
    if ((st = link_preconditions(&t, o, err))) return st;
    const int sixd = o->psi > 0;
    fk_gputimes tz;
    memset(&tz, 0, sizeof tz);
    tz.bytes_needed = fk_gpu_build_link_bytes(n, leafsize, sixd);
    if ((st = fk_gpu_reserve(tz.bytes_needed, err))) return st;
    dbuf<float> d_pos, d_sorted, d_box, d_vel, d_svel;
    dbuf<uint32_t> d_perm, d_sink;
    if ((st = d_pos.alloc(3 * n, err)) || (st = d_sorted.alloc(3 * n, err)) || (st = d_perm.alloc(n, err)) ||
        (st = d_sink.alloc(n, err)) || (st = d_box.alloc(6 * t.nnodes, err)) ||
        (sixd && ((st = d_vel.alloc(3 * n, err)) || (st = d_svel.alloc(3 * n, err)))))
        return st;
    unsigned long long counts[2];
    uint64_t groups;
    timer tm;
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaMemcpy(d_pos.p, pos, 12 * n, cudaMemcpyHostToDevice), err);
    if (sixd) FK_CU(cudaMemcpy(d_vel.p, vel, 12 * n, cudaMemcpyHostToDevice), err);
    if ((st = tm.mark(err)) || (st = fk_gpu_build_dev(d_pos.p, &t, lo, span, d_sorted.p, d_perm.p, d_box.p, err)))
        return st;
    if (sixd && n) {
        k_permute3<<<grid_for(n, 256), 256>>>(d_vel.p, d_perm.p, n, d_svel.p);
        FK_LAUNCHED("k_permute3", err);
    }
    if ((st = tm.mark(err)) ||
        (st = fk_gpu_link_dev(&t, d_sorted.p, d_svel.p, d_box.p, o, d_sink.p, counts, &groups, tz.link_phase, err)) ||
        (st = tm.mark(err)))
        return st;
    FK_CU(cudaMemcpy(sink, d_sink.p, 4 * n, cudaMemcpyDeviceToHost), err);
    FK_CU(cudaMemcpy(perm, d_perm.p, 4 * n, cudaMemcpyDeviceToHost), err);
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaDeviceSynchronize(), err);
    tz.upload = tm.secs(0, 1);
    tz.build = tm.secs(1, 2);
    tz.link = tm.secs(2, 3);
    tz.download = tm.secs(3, 4);
    if (times) *times = tz;
    set_stats(stats, counts, groups);
    return FK_OK;
}
