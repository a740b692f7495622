/* link.cu - FoF linking on the GPU: per-leaf tree walks list the leaf pairs to test, then one warp a pair links on the sink array. */
#include <stdlib.h>
#include <string.h>

#include "boxes.cuh"
#include "common.cuh"
#include "gpu.h"
#include "internal.cuh"
#include "predicate.h"

#define FULL 0xffffffffu
#define NO_TOP 0xffffffffu
#define WARPS_PER_BLOCK 4
/* The leaf-pair list's least size (8 bytes a pair), which the linker's
 * byte count reserves; it grows into free memory when there is room. */
#define LIST_CAP (UINT64_C(1) << 27)
/* Leaf pairs a leaf lists on average, a guess for sizing the list and the
 * first batch (13 to 15 at b = 0.2 on clustered boxes); the batches after
 * the first take their leaves from the rate the ones before listed. */
#define GUESS_PER_LEAF 24

/*
 * The GPU linker does the CPU linker's work (link_cpu.c) in these kernels:
 *   k_cliques, k_tops  which nodes are cliques; each leaf's topmost clique
 *                      ancestor; the sinks a clique starts with (k_tops: one
 *                      warp a leaf, its sinks written side by side)
 *   k_self             one warp a leaf: its own links, found with bit masks
 *                      (each pair tested once, the masks closed through
 *                      shared memory); a leaf left one group is marked whole
 *   k_walk             one thread a leaf A: the CPU's walk over the subtrees
 *                      after A (or after its clique), merging wholesale the
 *                      nodes whose boxes prove every pair linked and listing
 *                      the leaves that need particle tests, appended to the
 *                      list (the threads of a warp that list together take
 *                      their slots with one atomic); a clique of several
 *                      leaves walks once, with its own box, from its first
 *                      leaf, and appends from the list's end. The walks go in
 *                      batches of consecutive leaves whose pairs fit the
 *                      list (one batch when memory allows), each batch's
 *                      pairs tested before the next walks; a batch that
 *                      overflows walks again in smaller pieces.
 *   k_cliquepairs      one warp a listed pair (clique T, leaf X): the leaves
 *                      of T near X tested as leaf pairs whose T side is one
 *                      group, until a whole X has joined T's group. Dense
 *                      halo cores are cliques of many leaves: this lists and
 *                      walks each once instead of once a leaf.
 *   k_leafpairs        one warp 32 listed pairs (A, X): each lane reads one
 *                      and drops it when both leaves are whole and one group
 *                      already (32 finds in flight at once: in halos most
 *                      listed pairs end so); then, pair by pair, lane i holds
 *                      particle i of A and of X; sides found already
 *                      connected need one link (a whole side costs one find,
 *                      not one a particle); particles farther than l from the
 *                      other leaf's box are left out before any pair test;
 *                      two leaves within half a period of each other are
 *                      tested without the periodic wrap. (Leaves of more than
 *                      32 particles go by pieces of 32: any leaf size works,
 *                      32 fills the warp.)
 * A thread a walk avoids the 32-fold redundancy of a warp walking one leaf's
 * path, and a warp a leaf pair keeps the pair tests converged.
 */

/* Work counters for tuning: build with NVFLAGS+=-DFK_GPU_STATS to have
 * fk_gpu_link_dev print them on stderr (a diagnostic build only). */
#ifdef FK_GPU_STATS
#include <stdio.h>
__device__ unsigned long long g_stats[16];
#define STAT(i, v) atomicAdd(&g_stats[i], (unsigned long long)(v))
static const char *stat_names[16] = {"leaf pairs", "skip: same group", "skip: nothing near", "both connected",
                                     "A connected", "X connected", "neither connected", "loop iterations",
                                     "unites (pairs)", "self leaves", "self unites", "walk: linked nodes",
                                     "walk: linked unites", "near A lanes", "near X lanes", ""};
#else
#define STAT(i, v) ((void)0)
#endif

/* Everything a linking kernel needs, by value. */
struct lctx {
    const float *pos, *vel, *box, *vbox;
    const uint8_t *clique;
    const uint32_t *top;
    uint8_t *whole; /* per leaf: 1 when its particles are one group already (after k_self) */
    uint32_t *sink;
    fk_linkparams p;
    fk_layout l; /* where the nodes' particles lie (fk_tree_range) */
    uint64_t n, first_leaf, nleaves, nnodes;
    uint64_t nfull; /* the leaves that hold particles (work_leaf) */
};

/* Leaf number (from 0) of the w-th leaf that holds particles, w < c.nfull:
 * the kernels of one thread or warp a leaf run over these, not over the
 * empty leaves of a packed tree (up to half of them just past a power of
 * two), so that their warps stay full. Packed, leaf k holds unit j exactly
 * when k = ceil((j + 1) 2^D / U) - 1; halved, every leaf holds some. */
__device__ __forceinline__ uint64_t work_leaf(const lctx &c, uint64_t w)
{
    return c.nfull == c.nleaves ? w : ((w + 1) * c.nleaves + c.l.units - 1) / c.l.units - 1;
}

/* Whether leaf A (a node number) holds no particle: a packed tree's leaves
 * past the last unit of their parent (kdtree.h), none when every leaf holds
 * some. Their boxes are empty; every kernel passes them by. */
__device__ __forceinline__ bool leaf_empty(const lctx &c, uint64_t A)
{
    if (c.nfull == c.nleaves) return false;
    uint64_t s, e;
    fk_tree_range(c.l, A, &s, &e);
    return s == e;
}

/* One thread a node: is every pair of its particles linked? */
__global__ void k_cliques(lctx c, uint8_t *clique)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < c.nnodes;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const float *vb = c.p.sixd ? c.vbox + 6 * i : nullptr;
        clique[i] = (i < c.first_leaf || !leaf_empty(c, i)) &&
                    fk_node_pair(c.box + 6 * i, c.box + 6 * i, vb, vb, &c.p) == FK_NODES_LINKED;
    }
}

/* One warp a leaf: its topmost clique ancestor (lane k looks k levels up),
 * and the sinks it starts with, written by the lanes side by side (a
 * clique's particles start as one group under its first). */
__global__ void k_tops(lctx c, uint32_t *top, uint32_t *sink)
{
    const int lane = threadIdx.x & 31;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t nwarps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    for (uint64_t L = warp; L < c.nleaves; L += nwarps) {
        const uint64_t A = c.first_leaf + L, up = (A + 1) >> lane; /* heap numbers from 1 */
        const unsigned m = __ballot_sync(FULL, up != 0 && c.clique[up - 1]);
        const uint64_t best = m ? ((A + 1) >> (31 - __clz(m))) - 1 : NO_TOP;
        uint64_t as, ae, ts = 0, te;
        fk_tree_range(c.l, A, &as, &ae);
        if (best != NO_TOP) fk_tree_range(c.l, best, &ts, &te);
        for (uint64_t i = as + lane; i < ae; i += 32) sink[i] = (uint32_t)(best != NO_TOP ? ts : i);
        if (lane == 0) {
            top[L] = (uint32_t)best;
            c.whole[L] = best != NO_TOP || ae - as <= 1;
        }
    }
}

/* The predicate and the node bounds, with the 3D case free of 6D code.
 * WRAP false: the caller knows that no axis difference can exceed half the
 * period (both points in one box less than half a period wide), so the
 * wrap would change nothing and is left out. */
template <bool SIXD, bool WRAP = true>
__device__ __forceinline__ bool friends(const float *pa, const float *pb, const float *va, const float *vb,
                                        const fk_linkparams &p)
{
    fk_linkparams q = p;
    if (!WRAP) q.g.periodic = 0;
    if (SIXD) return fk_friends(pa, pb, va, vb, &q);
    return fk_sep2(pa, pb, q.g) < q.l2;
}

template <bool SIXD>
__device__ __forceinline__ int node_pair(const float *A, const float *B, const float *vA, const float *vB,
                                         const fk_linkparams &p)
{
    if (SIXD) return fk_node_pair(A, B, vA, vB, &p);
    return fk_node_pair3(A, B, &p);
}

/* Merges leaf [as, ae) and node X, every pair of which is linked (rare:
 * kept out of line, away from the walk's registers). */
__device__ __noinline__ void merge_nodes(uint32_t *sink, const uint8_t *clique, fk_layout l, uint64_t as,
                                         uint64_t ae, bool connA, uint64_t X)
{
    uint64_t xs, xe;
    fk_tree_range(l, X, &xs, &xe);
    STAT(11, 1);
    if (!connA)
        for (uint64_t a = as; a < ae; a++) sink_unite(sink, (uint32_t)a, (uint32_t)xs);
    if (!clique[X])
        for (uint64_t x = xs; x < xe; x++) sink_unite(sink, (uint32_t)as, (uint32_t)x);
    else
        sink_unite(sink, (uint32_t)as, (uint32_t)xs);
    STAT(12, (connA ? 0 : ae - as) + (clique[X] ? 1 : xe - xs));
}

/* One thread a leaf that holds particles (work_leaf(w), w in [W0, W1)): the
 * walk of link_leaf() in link_cpu.c. It merges the wholesale-linked nodes
 * and appends its leaf pairs, (leaf number, node), at list[*fill ...] (the
 * threads that reach an append together take their slots with one atomic),
 * writing only those below cap; the caller checks *fill against cap. A
 * clique of several leaves walks once, from its first leaf, and appends its
 * pairs (first leaf, X) from the list's end, counted in fill[1]: the list
 * overflowed when fill[0] + fill[1] > cap. */
template <bool SIXD>
__global__ void k_walk(lctx c, uint64_t W0, uint64_t W1, uint2 *list, unsigned long long *nodes,
                       unsigned long long *fill, uint64_t cap)
{
    unsigned long long visited = 0;
    for (uint64_t w = W0 + blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; w < W1;
         w += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t L = work_leaf(c, w), A = c.first_leaf + L;
        const uint32_t T = c.top[L];
        const bool connA = T != NO_TOP;
        uint64_t as, ae, W = A;
        fk_tree_range(c.l, A, &as, &ae);
        /* a clique of several leaves walks once, from its first leaf, and
         * lists its pairs from the list's end */
        const bool cw = connA && T < c.first_leaf;
        if (cw) {
            uint64_t ts, te;
            fk_tree_range(c.l, T, &ts, &te);
            if (as != ts) continue;
            W = T, ae = te;
        }
        float abox[6], avbox[6];
        for (int i = 0; i < 6; i++) abox[i] = c.box[6 * W + i];
        if (SIXD)
            for (int i = 0; i < 6; i++) avbox[i] = c.vbox[6 * W + i];
        for (uint64_t X = fk_tree_next(connA ? T : A); X != 0;) {
            visited++;
            if (X >= c.first_leaf && leaf_empty(c, X)) {
                X = fk_tree_next(X);
                continue;
            }
            float xbox[6];
            for (int i = 0; i < 6; i++) xbox[i] = __ldg(c.box + 6 * X + i);
            const int b = node_pair<SIXD>(abox, xbox, avbox, SIXD ? c.vbox + 6 * X : nullptr, c.p);
            if (b == FK_NODES_APART) {
                X = fk_tree_next(X);
                continue;
            }
            if (b == FK_NODES_LINKED) { /* A and X become one group */
                merge_nodes(c.sink, c.clique, c.l, as, ae, connA, X);
                X = fk_tree_next(X);
                continue;
            }
            if (X < c.first_leaf) {
                X = 2 * X + 1;
                continue;
            }
            {
                const unsigned m = __activemask(), mc = __ballot_sync(m, cw), grp = cw ? mc : m & ~mc;
                const int lane = threadIdx.x & 31, lead = __ffs(grp) - 1;
                unsigned long long b0 = 0;
                if (lane == lead) b0 = atomicAdd(fill + cw, (unsigned long long)__popc(grp));
                b0 = __shfl_sync(m, b0, lead) + __popc(grp & ((1u << lane) - 1));
                if (b0 < cap) __stcs(list + (cw ? cap - 1 - b0 : b0), make_uint2((uint32_t)L, (uint32_t)X));
            }
            X = fk_tree_next(X);
        }
    }
    for (int o = 16; o > 0; o >>= 1) visited += __shfl_down_sync(FULL, visited, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(nodes, visited);
}

__device__ __forceinline__ void shfl3(const float *a, float *out, int j)
{
    out[0] = __shfl_sync(FULL, a[0], j);
    out[1] = __shfl_sync(FULL, a[1], j);
    out[2] = __shfl_sync(FULL, a[2], j);
}

/* Whether a pair of particles of nodes A and X may need the periodic wrap:
 * not when the box around both is at most half a period wide on each axis
 * (the rounded difference of two coordinates is then at most that width). */
__device__ __forceinline__ bool pair_wraps(const lctx &c, uint64_t A, uint64_t X)
{
    if (!c.p.g.periodic) return false;
    const float *a = c.box + 6 * A, *x = c.box + 6 * X;
    for (int k = 0; k < 3; k++)
        if (!(fk_fsub(fmaxf(a[k + 3], x[k + 3]), fminf(a[k], x[k])) <= c.p.g.h)) return true;
    return false;
}

/* Whether point p may be within l of some point of leaf box B: a cheap
 * binary32 filter with a margin far above its rounding (a few ulps of the
 * coordinates), so it never drops a friend; boxes too wide for the
 * centre-based minimum image are never filtered. */
template <bool WRAP>
__device__ __forceinline__ bool near_box(const float *p, const float *B, const fk_linkparams &lp)
{
    fk_geom g = lp.g;
    if (!WRAP) g.periodic = 0;
    float g2 = 0.0f;
    for (int k = 0; k < 3; k++) {
        const float c = 0.5f * (B[k] + B[k + 3]), hw = 0.5f * (B[k + 3] - B[k]);
        if (g.periodic && hw >= 0.25f * g.L) return true;
        const float d = fabsf(fk_axis_sep(p[k], c, g));
        const float e = (fabsf(p[k]) + fabsf(c) + hw) * (1.0f / (1 << 20));
        const float gap = d - hw - e;
        if (gap > 0.0f) g2 += gap * gap;
    }
    return g2 < lp.l2 * (1.0f + 1.0f / (1 << 16));
}

/* Loads particle i's position (and velocity in 6D), or zeros past the end. */
template <bool SIXD>
__device__ __forceinline__ void load_particle(const lctx &c, bool has, uint64_t i, float *p, float *v)
{
    for (int k = 0; k < 3; k++) {
        p[k] = has ? c.pos[3 * i + k] : 0.0f;
        if (SIXD) v[k] = has ? c.vel[3 * i + k] : 0.0f;
    }
}

/* The links inside one 32-particle piece [s, s + cnt) of a leaf that no
 * other warp touches yet: lane i builds the bit mask of its friends in the
 * piece (each pair tested once: in round k, lane i tests lane i + k mod 32
 * and hands the answer back to it, so 16 rounds cover the 496 pairs), the
 * warp closes the masks under reachability (each round joins the masks of
 * every member, read from the warp's row of shared memory: path lengths
 * double), and every particle is pointed straight at the lowest particle of
 * its component: the lowest index is what sink linking would choose, and no
 * atomics are needed. Returns the pair tests made. */
template <bool SIXD, bool WRAP>
__device__ __forceinline__ unsigned long long self_piece(const lctx &c, int lane, uint64_t s, int cnt, bool &one,
                                                         unsigned *row)
{
    const bool has = lane < cnt;
    float pa[3], va[3], pj[3], vj[3];
    load_particle<SIXD>(c, has, s + lane, pa, va);
    unsigned comp = 1u << lane;
    for (int k = 1; k <= 16; k++) {
        const int j = (lane + k) & 31, i = (lane - k) & 31;
        for (int a = 0; a < 3; a++) pj[a] = __shfl_sync(FULL, pa[a], j);
        if (SIXD)
            for (int a = 0; a < 3; a++) vj[a] = __shfl_sync(FULL, va[a], j);
        const bool f = has && j < cnt && friends<SIXD, WRAP>(pa, pj, va, vj, c.p);
        const bool back = __shfl_sync(FULL, f, i); /* lane i tested (i, lane) */
        comp |= (unsigned)f << j | (unsigned)back << i;
    }
    while (__any_sync(FULL, comp != 1u << lane)) {
        row[lane] = comp;
        __syncwarp();
        unsigned grown = comp;
        for (unsigned m = comp & ~(1u << lane); m; m &= m - 1) grown |= row[__ffs(m) - 1];
        __syncwarp();
        const bool more = __any_sync(FULL, grown != comp);
        comp = grown;
        if (!more) break;
    }
    const int low = __ffs(comp) - 1;
    one = __all_sync(FULL, !has || low == 0);
    if (has && low != lane) __stcg(c.sink + s + lane, (uint32_t)(s + low));
    STAT(10, has && low != lane);
    return (unsigned long long)cnt * (cnt - 1) / 2;
}

/* Every friend pair between the pieces [s, s + cnt) and [t, t + ct) of one
 * leaf, linked on the sink array (leaves of more than 32 particles only). */
template <bool SIXD>
__device__ __forceinline__ unsigned long long cross_pieces(const lctx &c, int lane, uint64_t s, int cnt, uint64_t t,
                                                           int ct)
{
    const bool has = lane < cnt, hast = lane < ct;
    float pa[3], va[3], pt[3], vt[3], pj[3], vj[3];
    load_particle<SIXD>(c, has, s + lane, pa, va);
    load_particle<SIXD>(c, hast, t + lane, pt, vt);
    for (int j = 0; j < ct; j++) {
        shfl3(pt, pj, j);
        if (SIXD) shfl3(vt, vj, j);
        if (has && friends<SIXD>(pa, pj, va, vj, c.p)) sink_unite(c.sink, (uint32_t)(s + lane), (uint32_t)(t + j));
    }
    return (unsigned long long)cnt * ct;
}

/* One warp a leaf that is not a clique: its own pairs, by pieces of 32
 * particles (one piece for leaves of at most 32). This runs before anything
 * else links these particles (k_tops gave them sink[i] = i). */
template <bool SIXD>
__global__ void __launch_bounds__(32 * WARPS_PER_BLOCK, 8) k_self(lctx c, unsigned long long *tests)
{
    __shared__ unsigned rows[WARPS_PER_BLOCK][32];
    const int lane = threadIdx.x & 31;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t nwarps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    unsigned long long done = 0;
    unsigned *row = rows[threadIdx.x >> 5];
    for (uint64_t w = warp; w < c.nfull; w += nwarps) {
        const uint64_t L = work_leaf(c, w);
        if (c.top[L] != NO_TOP) continue;
        uint64_t as, ae;
        fk_tree_range(c.l, c.first_leaf + L, &as, &ae);
        const int cnt = (int)(ae - as);
        bool one = false;
        /* a leaf less than half a period wide needs no wrap (nor one that is not periodic) */
        const bool wrap = pair_wraps(c, c.first_leaf + L, c.first_leaf + L);
        for (int p = 0; p < cnt; p += 32)
            done += wrap ? self_piece<SIXD, true>(c, lane, as + p, min(32, cnt - p), one, row)
                         : self_piece<SIXD, false>(c, lane, as + p, min(32, cnt - p), one, row);
        if (cnt <= 32 && one && lane == 0) c.whole[L] = 1; /* one piece, one group */
        for (int p = 0; p < cnt; p += 32)
            for (int q = p + 32; q < cnt; q += 32)
                done += cross_pieces<SIXD>(c, lane, as + p, min(32, cnt - p), as + q, min(32, cnt - q));
        if (lane == 0) STAT(9, 1);
    }
    if (lane == 0) atomicAdd(tests, done);
}

/* Links a 32-particle piece [as, as + cnt) of leaf A with a piece
 * [xs, xs + cx) of leaf X (after A). Mirrors leaf_pairs() of link_cpu.c,
 * with the connectedness of each side read from the sink array itself
 * (k_self has run: leaves that their own links connect count as connected
 * here). Returns the pair tests made. */
template <bool SIXD, bool WRAP>
__device__ __forceinline__ unsigned long long piece_pairs(const lctx &c, int lane, uint64_t A, uint64_t X,
                                                          uint64_t as, int cnt, uint64_t xs, int cx, bool wa, bool wx,
                                                          const float *pa, const float *px)
{
    const bool has = lane < cnt, hasx = lane < cx;
    const uint32_t me = (uint32_t)(as + lane), mx = (uint32_t)(xs + lane);
    float va[3], vx[3], pj[3], vj[3];
    if (SIXD)
        for (int k = 0; k < 3; k++) {
            va[k] = has ? c.vel[3 * (uint64_t)me + k] : 0.0f;
            vx[k] = hasx ? c.vel[3 * (uint64_t)mx + k] : 0.0f;
        }
    /* Particles that no particle of the other leaf can reach take no part. */
    const bool nearA = has && near_box<WRAP>(pa, c.box + 6 * X, c.p);
    const bool nearX = hasx && near_box<WRAP>(px, c.box + 6 * A, c.p);
    const unsigned mA = __ballot_sync(FULL, nearA), mX = __ballot_sync(FULL, nearX);
    if (lane == 0) {
        STAT(0, 1);
        STAT(13, __popc(mA));
        STAT(14, __popc(mX));
    }
    if (!mA || !mX) {
        if (lane == 0) STAT(2, 1);
        return 0;
    }
    /* Are the near particles of each side one group already? Then one link
     * per near particle of the other side (or one in all) is all that is
     * left to find: only near particles can have friends here. */
    const int la = __ffs(mA) - 1, lx = __ffs(mX) - 1;
    uint32_t ra, rx;
    if (wa || wx) { /* a side that is one group needs one find, not one a particle */
        uint32_t r = 0;
        if (lane == 0 && wa) r = sink_find(c.sink, (uint32_t)as);
        if (lane == 1 && wx) r = sink_find(c.sink, (uint32_t)xs);
        const uint32_t r0 = __shfl_sync(FULL, r, 0), r1 = __shfl_sync(FULL, r, 1);
        ra = !nearA ? 0 : wa ? r0 : sink_find(c.sink, me);
        rx = !nearX ? 0 : wx ? r1 : sink_find(c.sink, mx);
    } else {
        ra = nearA ? sink_find(c.sink, me) : 0;
        rx = nearX ? sink_find(c.sink, mx) : 0;
    }
    const uint32_t ra0 = __shfl_sync(FULL, ra, la), rx0 = __shfl_sync(FULL, rx, lx);
    const bool connA = __all_sync(FULL, !nearA || ra == ra0), connX = __all_sync(FULL, !nearX || rx == rx0);
    if (connA && connX && ra0 == rx0) {
        if (lane == 0) STAT(1, 1);
        return 0;
    }
    unsigned todo = connA ? __ballot_sync(FULL, nearX && rx != ra0) : mX;
    if (lane == 0) STAT(connA && connX ? 3 : connA ? 4 : connX ? 5 : 6, 1);
    bool act = nearA && !(connX && ra == rx0);
    const unsigned long long done = (unsigned long long)__popc(todo) * __popc(__ballot_sync(FULL, act));
    while (todo) {
        const int j = __ffs(todo) - 1;
        todo &= todo - 1;
        if (lane == 0) STAT(7, 1);
        shfl3(px, pj, j);
        if (SIXD) shfl3(vx, vj, j);
        const bool f = act && friends<SIXD, WRAP>(pa, pj, va, vj, c.p);
        const unsigned m = __ballot_sync(FULL, f);
        if (!m) continue;
        if (connA) { /* x joins A's group through one friend */
            if (lane == __ffs(m) - 1) {
                sink_unite(c.sink, me, (uint32_t)(xs + j));
                STAT(8, 1);
            }
            if (connX) break; /* and that joins the two groups */
        } else {
            if (f) {
                sink_unite(c.sink, me, (uint32_t)(xs + j));
                STAT(8, 1);
            }
            if (connX) { /* each a needs one link into X's group */
                act = act && !f;
                if (!__any_sync(FULL, act)) break;
            }
        }
    }
    return done;
}

/* piece_pairs with the pieces' positions loaded here. */
template <bool SIXD>
__device__ __forceinline__ unsigned long long piece_pairs(const lctx &c, int lane, uint64_t A, uint64_t X,
                                                          uint64_t as, int cnt, uint64_t xs, int cx, bool wa, bool wx)
{
    float pa[3], px[3], v[3];
    load_particle<false>(c, lane < cnt, as + lane, pa, v);
    load_particle<false>(c, lane < cx, xs + lane, px, v);
    return piece_pairs<SIXD, true>(c, lane, A, X, as, cnt, xs, cx, wa, wx, pa, px);
}

/* A listed pair (T, X) of a clique of several leaves T (one group) and a
 * leaf X after it: the leaves of T whose boxes are not apart from X's, each
 * as a leaf pair whose A side is one group; done as soon as a whole X is in
 * T's group. Returns the pair tests made. */
template <bool SIXD>
__device__ __forceinline__ unsigned long long clique_pairs(const lctx &c, int lane, uint64_t T, uint64_t X)
{
    uint64_t xs, xe;
    fk_tree_range(c.l, X, &xs, &xe);
    const int cx = (int)(xe - xs);
    const bool wx = cx <= 32 && c.whole[X - c.first_leaf];
    const int D = fk_log2_u64(c.first_leaf + 1), d = fk_log2_u64(T + 1);
    /* T's leaves [l0, l1) and particles [ts, te) */
    const uint64_t l0 = (T + 1 - (UINT64_C(1) << d)) << (D - d), l1 = l0 + (UINT64_C(1) << (D - d));
    uint64_t ts, te;
    fk_tree_range(c.l, T, &ts, &te);
    unsigned long long done = 0;
    for (uint64_t b = l0; b < l1; b += 32) {
        const uint64_t l = b + lane;
        const bool near = l < l1 && !leaf_empty(c, c.first_leaf + l) && node_pair<SIXD>(c.box + 6 * (c.first_leaf + l), c.box + 6 * X,
                                                    SIXD ? c.vbox + 6 * (c.first_leaf + l) : nullptr,
                                                    SIXD ? c.vbox + 6 * X : nullptr, c.p) != FK_NODES_APART;
        unsigned m = __ballot_sync(FULL, near);
        while (m) {
            const int j = __ffs(m) - 1;
            m &= m - 1;
            if (wx) {
                uint32_t same = 0;
                if (lane == 0) same = sink_find(c.sink, (uint32_t)ts) == sink_find(c.sink, (uint32_t)xs);
                if (__shfl_sync(FULL, same, 0)) {
                    if (lane == 0) STAT(1, 1);
                    return done;
                }
            }
            const uint64_t A = c.first_leaf + b + j;
            uint64_t as, ae;
            fk_tree_range(c.l, A, &as, &ae);
            const int cnt = (int)(ae - as);
            for (int p = 0; p < cnt; p += 32)
                for (int q = 0; q < cx; q += 32)
                    done += piece_pairs<SIXD>(c, lane, A, X, as + p, min(32, cnt - p), xs + q, min(32, cx - q), true,
                                              wx);
        }
    }
    return done;
}

/* One warp a listed pair (first leaf of clique T, X): clique_pairs. */
template <bool SIXD>
__global__ void __launch_bounds__(32 * WARPS_PER_BLOCK, 8)
    k_cliquepairs(lctx c, const uint2 *__restrict__ list, uint64_t count, unsigned long long *tests)
{
    const int lane = threadIdx.x & 31;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t nwarps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    unsigned long long done = 0;
    for (uint64_t e = warp; e < count; e += nwarps) {
        const uint2 job = list[count - 1 - e]; /* appended from the end: in the order listed */
        done += clique_pairs<SIXD>(c, lane, c.top[job.x], job.y);
    }
    for (int o = 16; o > 0; o >>= 1) done += __shfl_down_sync(FULL, done, o);
    if (lane == 0) atomicAdd(tests, done);
}

/* Whether a listed pair (A, X) of leaves is left to test: not when both
 * are one group each and the same group already. */
__device__ __forceinline__ bool pair_open(const lctx &c, uint2 job)
{
    if (!c.whole[job.x] || !c.whole[job.y - c.first_leaf]) return true;
    uint64_t as, ae, xs, xe;
    fk_tree_range(c.l, c.first_leaf + job.x, &as, &ae);
    fk_tree_range(c.l, job.y, &xs, &xe);
    return sink_find(c.sink, (uint32_t)as) != sink_find(c.sink, (uint32_t)xs);
}

/* The first piece's positions of each leaf of a listed pair (A, X). */
__device__ __forceinline__ void load_pair(const lctx &c, int lane, uint2 job, float *pa, float *px, float *v)
{
    uint64_t as, ae, xs, xe;
    fk_tree_range(c.l, c.first_leaf + job.x, &as, &ae);
    fk_tree_range(c.l, job.y, &xs, &xe);
    load_particle<false>(c, lane < (int)(ae - as), as + lane, pa, v);
    load_particle<false>(c, lane < (int)(xe - xs), xs + lane, px, v);
}

/* One listed pair (A, X) whose first pieces' positions are in pa, px: by
 * pieces of 32 particles (one piece each for leaves of at most 32). */
template <bool SIXD>
__device__ __forceinline__ unsigned long long leaf_pair(const lctx &c, int lane, uint2 job, const float *pa,
                                                        const float *px)
{
    const uint64_t A = c.first_leaf + job.x, X = job.y;
    uint64_t as, ae, xs, xe;
    fk_tree_range(c.l, A, &as, &ae);
    fk_tree_range(c.l, X, &xs, &xe);
    const int cnt = (int)(ae - as), cx = (int)(xe - xs);
    const bool wa = cnt <= 32 && c.whole[job.x], wx = cx <= 32 && c.whole[X - c.first_leaf];
    if (c.whole[job.x] && c.whole[X - c.first_leaf]) { /* the pairs before may have joined them */
        uint32_t same = 0;
        if (lane == 0) same = sink_find(c.sink, (uint32_t)as) == sink_find(c.sink, (uint32_t)xs);
        if (__shfl_sync(FULL, same, 0)) {
            if (lane == 0) STAT(1, 1);
            return 0;
        }
    }
    if (cnt <= 32 && cx <= 32) /* two leaves within half a period of each other need no wrap */
        return pair_wraps(c, A, X) ? piece_pairs<SIXD, true>(c, lane, A, X, as, cnt, xs, cx, wa, wx, pa, px)
                                   : piece_pairs<SIXD, false>(c, lane, A, X, as, cnt, xs, cx, wa, wx, pa, px);
    unsigned long long done = 0;
    for (int p = 0; p < cnt; p += 32)
        for (int q = 0; q < cx; q += 32)
            done += piece_pairs<SIXD>(c, lane, A, X, as + p, min(32, cnt - p), xs + q, min(32, cx - q), wa, wx);
    return done;
}

/* One warp 32 listed pairs of leaves (A, X), X after A: each lane reads
 * one pair and drops it if its two leaves are one group already (the
 * lanes' finds in flight together: in a halo most listed pairs end so),
 * then the warp tests the pairs left, one at a time, by pieces of 32
 * particles (one piece each for leaves of at most 32). Groups only grow,
 * so a pair dropped early would have been dropped later too. */
template <bool SIXD>
__global__ void __launch_bounds__(32 * WARPS_PER_BLOCK, 8)
    k_leafpairs(lctx c, const uint2 *__restrict__ list, uint64_t count, unsigned long long *tests)
{
    const int lane = threadIdx.x & 31;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t nwarps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    unsigned long long done = 0;
    for (uint64_t e0 = 32 * warp; e0 < count; e0 += 32 * nwarps) {
        uint2 mine = make_uint2(0, 0);
        const bool open = e0 + lane < count && pair_open(c, mine = list[e0 + lane]);
        const unsigned todo = __ballot_sync(FULL, open), listed = __ballot_sync(FULL, e0 + lane < count);
        if (lane == 0) STAT(1, __popc(listed) - __popc(todo));
        for (unsigned m = todo; m; m &= m - 1) {
            const int j = __ffs(m) - 1;
            const uint2 job = make_uint2(__shfl_sync(FULL, mine.x, j), __shfl_sync(FULL, mine.y, j));
            float pa[3], px[3], v[3];
            load_pair(c, lane, job, pa, px, v);
            done += leaf_pair<SIXD>(c, lane, job, pa, px);
        }
    }
    for (int o = 16; o > 0; o >>= 1) done += __shfl_down_sync(FULL, done, o);
    if (lane == 0) atomicAdd(tests, done);
}

uint64_t fk_gpu_link_scratch(uint64_t n, uint64_t nnodes, int sixd)
{
    (void)n;
    uint64_t leaves = (nnodes + 1) / 2;
    return nnodes + leaves * (4 + 1) + 8 * LIST_CAP + (sixd ? nnodes * 24 : 0) + 64;
}

/* The leaf pairs the list holds: room for twice GUESS_PER_LEAF a leaf, within
 * a quarter of the device's free memory, at least LIST_CAP (which the
 * linker's byte count reserves); FOFKIT_GPU_LIST_CAP (pairs) lowers it, to
 * try the batches out on small inputs. */
static int list_cap(uint64_t nw, uint64_t *cap, fk_error *err)
{
    size_t fr = 0, tot = 0;
    int st = fk_gpu_free_bytes(&fr, &tot, err);
    if (st) return st;
    const uint64_t want = nw * 2 * GUESS_PER_LEAF + 4096, room = fr / 4 / sizeof(uint2);
    *cap = want < LIST_CAP ? want : want < room ? want : room > LIST_CAP ? room : LIST_CAP;
    const char *e = getenv("FOFKIT_GPU_LIST_CAP");
    if (e && *e) {
        char *end;
        const unsigned long long v = strtoull(e, &end, 10);
        if (*end == '\0' && v >= 1 && v < *cap) *cap = v;
    }
    return FK_OK;
}

template <bool SIXD>
static int link_dev(const fk_tree *t, lctx &c, uint64_t nleaves, uint32_t *d_top, unsigned long long *d_count,
                    double phase[4], uint64_t *listed, fk_error *err)
{
    int st;
    timer tm;
    if ((st = tm.mark(err))) return st;
    k_cliques<<<fk_grid_all(t->nnodes, 256), 256>>>(c, (uint8_t *)c.clique);
    FK_LAUNCHED("k_cliques", err);
    k_tops<<<fk_grid_all(nleaves, WARPS_PER_BLOCK), 32 * WARPS_PER_BLOCK>>>(c, d_top, c.sink);
    FK_LAUNCHED("k_tops", err);
    if ((st = tm.mark(err))) return st;
    /* Every leaf's own pairs first, so that leaves they connect count as
     * connected below; then walks that append their leaf pairs (in the
     * order the walks reach them: near pairs of every leaf before far ones,
     * which links much of each group before the far pairs are tested), and
     * the pairs, in batches of consecutive leaves (neighbours in the tree's
     * Hilbert order) whose pairs fit the list. */
    const uint64_t nw = c.nfull; /* the leaves that hold particles */
    k_self<SIXD><<<min(fk_grid_all(nw, WARPS_PER_BLOCK), 32768u), 32 * WARPS_PER_BLOCK>>>(c, d_count);
    FK_LAUNCHED("k_self", err);
    if ((st = tm.mark(err))) return st;
    uint64_t cap;
    if ((st = list_cap(nw, &cap, err))) return st;
    dbuf<uint2> d_list;
    dbuf<unsigned long long> d_fill;
    if ((st = d_list.alloc(cap, err)) || (st = d_fill.alloc(2, err))) return st;
    double walks = 0, pairs = 0;
    uint64_t total = 0, span = (uint64_t)((double)nw * cap / (nw * GUESS_PER_LEAF + 4096.0));
    for (uint64_t W0 = 0; W0 < nw;) {
        const uint64_t W1 = nw - W0 < span ? nw : W0 + (span ? span : 1);
        timer bt; /* the batch's walk, then its pairs */
        FK_CU(cudaMemset(d_fill.p, 0, 2 * sizeof(unsigned long long)), err);
        if ((st = bt.mark(err))) return st;
        k_walk<SIXD><<<fk_grid_all(W1 - W0, 128), 128>>>(c, W0, W1, d_list.p, d_count + 1, d_fill.p, cap);
        FK_LAUNCHED("k_walk", err);
        if ((st = bt.mark(err))) return st;
        unsigned long long fill[2] = {0, 0};
        FK_CU(cudaMemcpy(fill, d_fill.p, sizeof fill, cudaMemcpyDeviceToHost), err);
        walks += bt.secs(0, 1);
        const uint64_t listed = fill[0] + fill[1];
        /* the next batch's leaves: three quarters of the list at this one's rate */
        const uint64_t fit = listed ? (uint64_t)((double)(W1 - W0) * 0.75 * cap / listed) : 4 * (W1 - W0);
        if (listed > cap) { /* overflowed: the merges made stand (uniting is idempotent; the node tests are counted again), the walk goes again in pieces */
            if (W1 - W0 == 1)
                return fk_fail(err, FK_EUNSUP, "one leaf lists %llu leaf pairs, more than the %llu the list holds",
                               (unsigned long long)listed, (unsigned long long)cap);
            span = fit ? fit : 1;
            continue;
        }
        if ((st = bt.mark(err))) return st;
        if (fill[1]) {
            k_cliquepairs<SIXD><<<fk_grid_all(fill[1], WARPS_PER_BLOCK), 32 * WARPS_PER_BLOCK>>>(
                c, d_list.p + cap - fill[1], fill[1], d_count);
            FK_LAUNCHED("k_cliquepairs", err);
        }
        if (fill[0]) {
            k_leafpairs<SIXD><<<fk_grid_all((fill[0] + 31) / 32, WARPS_PER_BLOCK), 32 * WARPS_PER_BLOCK>>>(
                c, d_list.p, fill[0], d_count);
            FK_LAUNCHED("k_leafpairs", err);
        }
        if ((st = bt.mark(err))) return st;
        pairs += bt.secs(2, 3);
        total += listed;
        span = fit > 4 * (W1 - W0) ? 4 * (W1 - W0) : fit ? fit : 1;
        W0 = W1;
    }
    phase[0] = tm.secs(0, 1);
    phase[1] = tm.secs(1, 2) + walks;
    phase[2] = pairs;
    *listed = total;
    return FK_OK;
}

int fk_gpu_link_dev(const fk_tree *t, const float *d_pos, const float *d_vel, const float *d_box,
                    const fk_linkopts *o, uint32_t *d_sink, unsigned long long counts[2], uint64_t *groups,
                    double phase[4], uint64_t *listed, fk_error *err)
{
    const uint64_t n = t->n;
    *listed = 0;
    const int sixd = o->psi > 0;
    counts[0] = counts[1] = 0;
    *groups = 0;
    for (int i = 0; i < 4; i++) phase[i] = 0;
    if (n == 0) return FK_OK;
    dbuf<float> d_vbox;
    dbuf<uint32_t> d_top;
    dbuf<uint8_t> d_clique, d_whole;
    dbuf<unsigned long long> d_count;
    const uint64_t first = (UINT64_C(1) << t->depth) - 1, nleaves = t->nnodes - first;
    int st;
    if ((st = d_clique.alloc(t->nnodes, err)) || (st = d_top.alloc(nleaves, err)) || (st = d_count.alloc(2, err)) ||
        (st = d_whole.alloc(nleaves, err)) ||
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
    c.whole = d_whole.p;
    c.sink = d_sink;
    c.p = fk_link_params(o);
    c.n = n;
    c.l = fk_tree_layout(t);
    c.first_leaf = first;
    c.nleaves = nleaves;
    c.nfull = t->unit > 1 ? c.l.units : nleaves;
    c.nnodes = t->nnodes;
    FK_CU(cudaMemset(d_count.p, 0, 2 * sizeof(unsigned long long)), err);
    if (sixd && (st = fk_gpu_boxes(d_vel, t, d_vbox.p, err))) return st;
    st = sixd ? link_dev<true>(t, c, nleaves, d_top.p, d_count.p, phase, listed, err)
              : link_dev<false>(t, c, nleaves, d_top.p, d_count.p, phase, listed, err);
    if (st) return st;
    timer tm;
    if ((st = tm.mark(err)) || (st = fk_gpu_flatten(d_sink, n, groups, err)) || (st = tm.mark(err))) return st;
    FK_CU(cudaMemcpy(counts, d_count.p, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost), err);
    phase[3] = tm.secs(0, 1);
#ifdef FK_GPU_STATS
    unsigned long long h[16];
    FK_CU(cudaMemcpyFromSymbol(h, g_stats, sizeof h), err);
    for (int i = 0; i < 15; i++) fprintf(stderr, "gpu-stats %-22s %llu\n", stat_names[i], h[i]);
    memset(h, 0, sizeof h);
    FK_CU(cudaMemcpyToSymbol(g_stats, h, sizeof h), err);
#endif
    return FK_OK;
}

static int link_preconditions(const fk_tree *t, const fk_linkopts *o, fk_error *err)
{
    int st = fk_link_check(o, err);
    if (st) return st;
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
    uint32_t *const sinks[1] = {sink};
    return fk_gpu_link_levels(t, pos, vel, o, 1, sinks, stats, times, err);
}

extern "C" int fk_gpu_link_levels(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o,
                                  int nlevels, uint32_t *const *sinks, fk_linkstats *stats, fk_gputimes *times,
                                  fk_error *err)
{
    FK_GPU_ENTER(err);
    int st, sixd = 0;
    for (int k = 0; k < nlevels; k++) {
        if ((st = link_preconditions(t, &o[k], err))) return st;
        sixd |= o[k].psi > 0;
    }
    const uint64_t n = t->n;
    const uint64_t need = fk_gpu_link_bytes(n, t->nnodes, sixd);
    const uint32_t S = t->leafsize >= 2 ? t->leafsize : 2;
    auto bytes = [&](uint64_t m) {
        return m == n ? need : fk_gpu_link_bytes(m, m ? (UINT64_C(2) << fk_tree_depth(m, S)) - 1 : 0, sixd);
    };
    if ((st = fk_gpu_reserve_for(n, bytes, err))) return st;
    dbuf<float> d_pos, d_vel, d_box;
    dbuf<uint32_t> d_sink;
    if ((st = d_pos.alloc(3 * n, err)) || (st = d_sink.alloc(n, err)) || (st = d_box.alloc(6 * t->nnodes, err)) ||
        (sixd && (st = d_vel.alloc(3 * n, err))))
        return st;
    timer up;
    if ((st = up.mark(err))) return st;
    { /* one upload for every level; pinning counts as upload time */
        pinned pin_pos(pos, 12 * n), pin_box(t->box, 24 * t->nnodes), pin_vel(sixd ? vel : nullptr, 12 * n);
        FK_CU(cudaMemcpy(d_pos.p, pos, 12 * n, cudaMemcpyHostToDevice), err);
        FK_CU(cudaMemcpy(d_box.p, t->box, 24 * t->nnodes, cudaMemcpyHostToDevice), err);
        if (sixd) FK_CU(cudaMemcpy(d_vel.p, vel, 12 * n, cudaMemcpyHostToDevice), err);
    }
    if ((st = up.mark(err))) return st;
    for (int k = 0; k < nlevels; k++) {
        fk_gputimes tz;
        memset(&tz, 0, sizeof tz);
        tz.bytes_needed = need;
        tz.upload = k == 0 ? up.secs(0, 1) : 0.0;
        unsigned long long counts[2];
        uint64_t groups;
        timer tm;
        if ((st = tm.mark(err)) ||
            (st = fk_gpu_link_dev(t, d_pos.p, o[k].psi > 0 ? d_vel.p : nullptr, d_box.p, &o[k], d_sink.p, counts,
                                  &groups, tz.link_phase, &tz.leaf_pairs, err)) ||
            (st = tm.mark(err)))
            return st;
        {
            pinned pin_sink(sinks[k], 4 * n);
            FK_CU(cudaMemcpy(sinks[k], d_sink.p, 4 * n, cudaMemcpyDeviceToHost), err);
        }
        if ((st = tm.mark(err))) return st;
        FK_CU(cudaDeviceSynchronize(), err);
        tz.link = tm.secs(0, 1);
        tz.download = tm.secs(1, 2);
        if (times) times[k] = tz;
        set_stats(stats ? &stats[k] : nullptr, counts, groups);
    }
    return FK_OK;
}

extern "C" uint64_t fk_gpu_build_link_bytes(uint64_t n, uint32_t leafsize, int sixd)
{
    uint64_t nnodes = n ? (UINT64_C(2) << fk_tree_depth(n, leafsize)) - 1 : 0;
    /* d_perm, boxes, velocities; then d_pos with the build's peak (its sort,
     * then d_sorted), or d_sorted and d_sink with the link's scratch */
    uint64_t build = 12 * n + fk_gpu_build_peak(n), link = 16 * n + fk_gpu_link_scratch(n, nnodes, sixd);
    return n * 4 + nnodes * 24 + (sixd ? 24 * n : 0) + (build > link ? build : link);
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
    FK_GPU_ENTER(err);
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
    if ((st = fk_gpu_reserve_for(n, [&](uint64_t m) { return fk_gpu_build_link_bytes(m, leafsize, sixd); }, err)))
        return st;
    dbuf<float> d_pos, d_sorted, d_box, d_vel, d_svel;
    dbuf<uint32_t> d_perm, d_sink;
    if ((st = d_pos.alloc(3 * n, err)) || (st = d_perm.alloc(n, err)) || (st = d_box.alloc(6 * t.nnodes, err)) ||
        (sixd && ((st = d_vel.alloc(3 * n, err)) || (st = d_svel.alloc(3 * n, err)))))
        return st;
    unsigned long long counts[2];
    uint64_t groups;
    timer tm;
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaMemcpy(d_pos.p, pos, 12 * n, cudaMemcpyHostToDevice), err);
    if (sixd) FK_CU(cudaMemcpy(d_vel.p, vel, 12 * n, cudaMemcpyHostToDevice), err);
    if ((st = tm.mark(err)) || (st = fk_gpu_build_dev(d_pos.p, &t, lo, span, d_sorted, d_perm.p, d_box.p, err)))
        return st;
    if (sixd && n) {
        k_permute3<<<fk_grid_all(n, 256), 256>>>(d_vel.p, d_perm.p, n, d_svel.p);
        FK_LAUNCHED("k_permute3", err);
    }
    d_pos.release(); /* the link needs the sorted copy only */
    if ((st = d_sink.alloc(n, err))) return st;
    if ((st = tm.mark(err)) ||
        (st = fk_gpu_link_dev(&t, d_sorted.p, d_svel.p, d_box.p, o, d_sink.p, counts, &groups, tz.link_phase, &tz.leaf_pairs, err)) ||
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
