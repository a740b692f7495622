/* potential.cu - potential minima of groups on the GPU: exact double sums where they are cheap, a Barnes-Hut tree walk then exact candidates above. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "common.cuh"
#include "gpu.h"
#include "internal.cuh"
#include "potential.h"

/*
 * The same answer as fk_pot_minima (potential.c), found differently:
 *   - groups of at most FK_GPU_POT_EXACT members (or nexact, if larger) are
 *     summed exactly, all pairs, in double: a block of 256 targets at a time,
 *     the sources staged through shared memory. On a GPU that is cheaper
 *     than a tree up to tens of thousands of members, and it is exact.
 *   - larger groups: the tree of kdbuild --device=gpu over the members
 *     (Hilbert order, leaves of 32), each node a monopole plus quadrupole
 *     about its centre of mass with the softened kernel's Taylor terms as in
 *     potential_tree.c; one warp per leaf of 32 targets walks the tree
 *     (a node serves as a multipole when |c_T - c_B| > b_T + b_B / theta,
 *     else it is opened; opened leaves are summed exactly); then the
 *     candidates, members whose tree potential is within tol |least| of the
 *     least (at most ncand, lowest first), are summed again exactly in
 *     batches with the stopping rule of potential.c. Up to TREE_THREADS
 *     large groups at once, each on a host thread and stream of its own
 *     (a group's round trips and candidates beside another's walk).
 * Every potential reported is an exact double sum. The member can differ
 * from the CPU's only where two members' exact potentials agree to within
 * the rounding of their sums, or where a tree error exceeds the documented
 * tolerance on one side.
 */

#ifndef FK_GPU_POT_EXACT
#define FK_GPU_POT_EXACT 32768 /* groups up to this size are summed exactly (NVFLAGS=-DFK_GPU_POT_EXACT=N to try others) */
#endif
#define TPB 256                /* threads a block in the exact kernels */
#define PLEAF 32               /* tree leaf: one warp of targets */
#define CBATCH 32              /* candidates summed exactly per launch */
#define TREE_THREADS 8         /* large groups of one call at once, a host thread and stream each */

/* ---- exact sums ---- */

/* A job of the exact kernel: TPB targets [t0, t0 + TPB) of a group whose
 * members are [a, a + n). */
struct xjob {
    uint64_t a, n, t0;
};

/* phi[a + i] = -G sum_{j != i} m_j / sqrt(|x_j - x_i|^2 + e2) for the job's
 * targets i, in double; sources through shared memory in tiles. */
__global__ void __launch_bounds__(TPB) k_exact(const xjob *__restrict__ jobs, const double *__restrict__ x,
                                                const double *__restrict__ y, const double *__restrict__ z,
                                                const double *__restrict__ m, double G, double e2, double *phi)
{
    __shared__ double sx[TPB], sy[TPB], sz[TPB], sm[TPB];
    const xjob jb = jobs[blockIdx.x];
    const uint64_t i = jb.t0 + threadIdx.x;
    const bool has = i < jb.n;
    const double px = has ? x[jb.a + i] : 0, py = has ? y[jb.a + i] : 0, pz = has ? z[jb.a + i] : 0;
    double s = 0;
    for (uint64_t t = 0; t < jb.n; t += TPB) {
        __syncthreads();
        const uint64_t j = t + threadIdx.x;
        if (j < jb.n) {
            sx[threadIdx.x] = x[jb.a + j];
            sy[threadIdx.x] = y[jb.a + j];
            sz[threadIdx.x] = z[jb.a + j];
            sm[threadIdx.x] = m[jb.a + j];
        }
        __syncthreads();
        const int cnt = (int)(jb.n - t < TPB ? jb.n - t : TPB);
        for (int k = 0; k < cnt; k++) {
            const double dx = sx[k] - px, dy = sy[k] - py, dz = sz[k] - pz;
            const double w = rsqrt((dx * dx + dy * dy) + (dz * dz + e2));
            s += (t + k == i ? 0.0 : sm[k]) * w; /* never itself */
        }
    }
    if (has) phi[jb.a + i] = -G * s;
}

/* One block a group: the first member of least phi. */
__global__ void __launch_bounds__(TPB) k_argmin(const uint64_t *__restrict__ groups, const uint64_t *__restrict__ first,
                                                 const double *__restrict__ phi, fk_pot_min *out)
{
    __shared__ double bp[TPB];
    __shared__ uint64_t bi[TPB];
    const uint64_t k = groups[blockIdx.x], a = first[k], n = first[k + 1] - a;
    double best = INFINITY;
    uint64_t at = UINT64_MAX;
    for (uint64_t i = threadIdx.x; i < n; i += TPB)
        if (phi[a + i] < best) { /* ascending i per thread: the first of equals */
            best = phi[a + i];
            at = i;
        }
    bp[threadIdx.x] = best;
    bi[threadIdx.x] = at;
    __syncthreads();
    for (int h = TPB / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) {
            const double q = bp[threadIdx.x + h];
            const uint64_t qi = bi[threadIdx.x + h];
            if (q < bp[threadIdx.x] || (q == bp[threadIdx.x] && qi < bi[threadIdx.x])) {
                bp[threadIdx.x] = q;
                bi[threadIdx.x] = qi;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        fk_pot_min r;
        r.index = bi[0];
        r.phi = bp[0];
        r.method = FK_POT_BY_EXACT;
        r.candidates = 0;
        out[k] = r;
    }
}

/* The exact potentials of candidates, each over chunks of its group at
 * once: block (c, k) sums chunk c of nchunk (members [c n / nchunk,
 * (c + 1) n / nchunk)) at candidate cand[k], a block reduction, into
 * part[k nchunk + c], the positive sum; the caller adds the chunks in order
 * (the same sum for a given nchunk, which depends on n alone). A block a
 * candidate left the GPU idle: 32 blocks over a group of 10.4M members took
 * 55 ms a batch, 0.44 s for the 256 candidates of the 134M mock's largest
 * halo, against 0.07 s for its tree walk. */
__global__ void __launch_bounds__(TPB) k_exact_at(const uint64_t *__restrict__ cand, uint64_t a, uint64_t n,
                                                   uint32_t nchunk, const double *__restrict__ x,
                                                   const double *__restrict__ y, const double *__restrict__ z,
                                                   const double *__restrict__ m, double e2, double *part)
{
    __shared__ double red[TPB];
    const uint64_t i = cand[blockIdx.y], c = blockIdx.x;
    const uint64_t lo = n * c / nchunk, hi = n * (c + 1) / nchunk;
    const double px = x[a + i], py = y[a + i], pz = z[a + i];
    double s = 0;
    for (uint64_t j = lo + threadIdx.x; j < hi; j += TPB) {
        if (j == i) continue;
        const double dx = x[a + j] - px, dy = y[a + j] - py, dz = z[a + j] - pz;
        s += m[a + j] * rsqrt((dx * dx + dy * dy) + (dz * dz + e2));
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int h = TPB / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[(uint64_t)blockIdx.y * nchunk + c] = red[0];
}

/* Chunks of a group for k_exact_at: one a 32768 members, at most 256. */
static uint32_t exact_chunks(uint64_t n)
{
    const uint64_t c = n / 32768;
    return c < 1 ? 1 : c > 256 ? 256 : (uint32_t)c;
}

/* ---- the tree ---- */

/* A node's multipole for the walk, binary32, positions relative to the
 * group's first member: centre, mass, moments pre-scaled as in
 * potential_tree.c (1.5 q_xx.., 3 q_xy.., tr / 2), radius. */
struct pnode {
    float cx, cy, cz, M, qxx, qyy, qzz, qxy, qxz, qyz, tr, b;
};

/* Members relative to member 0, binary32, for the tree build and walk. */
__global__ void k_relative(const double *__restrict__ x, const double *__restrict__ y, const double *__restrict__ z,
                           uint64_t a, uint64_t n, float *__restrict__ out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        out[3 * i] = (float)(x[a + i] - x[a]);
        out[3 * i + 1] = (float)(y[a + i] - y[a]);
        out[3 * i + 2] = (float)(z[a + i] - z[a]);
    }
}

/* The masses in tree order, binary32 for the walk: mt[i] = m[a + perm[i]]. */
__global__ void k_tree_masses(const double *__restrict__ m, uint64_t a, const uint32_t *__restrict__ perm, uint64_t n,
                              float *__restrict__ mt)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        mt[i] = (float)m[a + perm[i]];
}

/* The range of node i of this file's trees: halves (unit 1), every leaf
 * holding a member. */
__device__ __forceinline__ void tree_range(uint64_t n, uint64_t i, uint64_t *start, uint64_t *end)
{
    fk_tree_range(fk_layout_of(n, 1), i, start, end);
}

/* Moments of a node in double, kept for the merge: centre, mass, second moments, radius. */
struct dmom {
    double c[3], M, q[6], b;
};

/* One thread a leaf: moments from its members (tree order). */
__global__ void k_leaf_moments(const float *__restrict__ p, const float *__restrict__ mt, uint64_t n, uint32_t depth,
                               dmom *mom)
{
    const uint64_t first = (UINT64_C(1) << depth) - 1, nleaves = UINT64_C(1) << depth;
    for (uint64_t L = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; L < nleaves;
         L += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t s, e;
        tree_range(n, first + L, &s, &e);
        double M = 0, c[3] = {0, 0, 0}, u[3] = {0, 0, 0};
        for (uint64_t i = s; i < e; i++) {
            M += mt[i];
            for (int k = 0; k < 3; k++) {
                c[k] += mt[i] * (double)p[3 * i + k];
                u[k] += p[3 * i + k];
            }
        }
        dmom d;
        for (int k = 0; k < 3; k++) d.c[k] = M > 0 ? c[k] / M : u[k] / (double)(e - s);
        d.M = M;
        for (int h = 0; h < 6; h++) d.q[h] = 0;
        double r2 = 0;
        for (uint64_t i = s; i < e; i++) {
            const double dx = p[3 * i] - d.c[0], dy = p[3 * i + 1] - d.c[1], dz = p[3 * i + 2] - d.c[2], w = mt[i];
            d.q[0] += w * dx * dx, d.q[1] += w * dy * dy, d.q[2] += w * dz * dz;
            d.q[3] += w * dx * dy, d.q[4] += w * dx * dz, d.q[5] += w * dy * dz;
            r2 = fmax(r2, dx * dx + dy * dy + dz * dz);
        }
        d.b = sqrt(r2) * (1 + 1e-6); /* the float positions' rounding: a sphere that still holds them */
        mom[first + L] = d;
    }
}

/* One thread a node of one level: moments from its children (parallel
 * axes), radius the lesser of the children's reach and the box's corner. */
__global__ void k_level_moments(const float *__restrict__ box, uint64_t lo, uint64_t hi, dmom *mom)
{
    for (uint64_t i = lo + blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < hi;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const dmom l = mom[2 * i + 1], r = mom[2 * i + 2];
        dmom d;
        d.M = l.M + r.M;
        for (int k = 0; k < 3; k++) d.c[k] = d.M > 0 ? (l.M * l.c[k] + r.M * r.c[k]) / d.M : 0.5 * (l.c[k] + r.c[k]);
        double reach = 0;
        for (int h = 0; h < 6; h++) d.q[h] = l.q[h] + r.q[h];
        for (int s = 0; s < 2; s++) {
            const dmom &ch = s ? r : l;
            const double dx = ch.c[0] - d.c[0], dy = ch.c[1] - d.c[1], dz = ch.c[2] - d.c[2], w = ch.M;
            d.q[0] += w * dx * dx, d.q[1] += w * dy * dy, d.q[2] += w * dz * dz;
            d.q[3] += w * dx * dy, d.q[4] += w * dx * dz, d.q[5] += w * dy * dz;
            reach = fmax(reach, sqrt(dx * dx + dy * dy + dz * dz) + ch.b);
        }
        double corner = 0;
        for (int k = 0; k < 3; k++) {
            const double e = fmax(fabs(d.c[k] - box[6 * i + k]), fabs(box[6 * i + 3 + k] - d.c[k]));
            corner += e * e;
        }
        d.b = fmin(reach, sqrt(corner) * (1 + 1e-6));
        mom[i] = d;
    }
}

/* The walk's binary32 copy of every node. */
__global__ void k_pnodes(const dmom *__restrict__ mom, uint64_t nnodes, pnode *out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < nnodes;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const dmom d = mom[i];
        pnode p;
        p.cx = (float)d.c[0], p.cy = (float)d.c[1], p.cz = (float)d.c[2], p.M = (float)d.M;
        p.qxx = (float)(1.5 * d.q[0]), p.qyy = (float)(1.5 * d.q[1]), p.qzz = (float)(1.5 * d.q[2]);
        p.qxy = (float)(3 * d.q[3]), p.qxz = (float)(3 * d.q[4]), p.qyz = (float)(3 * d.q[5]);
        p.tr = (float)(0.5 * (d.q[0] + d.q[1] + d.q[2]));
        p.b = (float)d.b;
        out[i] = p;
    }
}

/* A node's multipole term at (dx, dy, dz) from its centre. */
__device__ __forceinline__ float multipole(const pnode &b, float dx, float dy, float dz, float e2)
{
    const float w = rsqrtf((dx * dx + dy * dy) + (dz * dz + e2)), w2 = w * w, w3 = w * w2;
    const float dqd = (b.qxx * dx * dx + b.qyy * dy * dy + b.qzz * dz * dz) +
                      (b.qxy * dx * dy + b.qxz * dx * dz + b.qyz * dy * dz);
    return b.M * w + (dqd * w2 - b.tr) * w3;
}

/* Leaf X's members [xs, xe) summed exactly at this lane's target (me), a
 * member a lane, shuffled: u += m_j / sqrt(r^2 + e2), j != me. */
__device__ __forceinline__ float leaf_sum(const float *__restrict__ p, const float *__restrict__ mt, uint64_t xs,
                                          uint64_t xe, uint64_t me, float px, float py, float pz, float e2, int lane)
{
    const int cx = (int)(xe - xs);
    const float qx = lane < cx ? p[3 * (xs + lane)] : 0.f, qy = lane < cx ? p[3 * (xs + lane) + 1] : 0.f;
    const float qz = lane < cx ? p[3 * (xs + lane) + 2] : 0.f, qm = lane < cx ? mt[xs + lane] : 0.f;
    float u = 0;
    for (int j = 0; j < cx; j++) {
        const float jx = __shfl_sync(0xffffffffu, qx, j), jy = __shfl_sync(0xffffffffu, qy, j);
        const float jz = __shfl_sync(0xffffffffu, qz, j), jm = __shfl_sync(0xffffffffu, qm, j);
        const float dx = jx - px, dy = jy - py, dz = jz - pz;
        if (xs + j != me) u += jm * rsqrtf((dx * dx + dy * dy) + (dz * dz + e2));
    }
    return u;
}

/* Leaf T's walk one node at a time (the whole warp on each node): the
 * multipole sum into *s, the exact leaf sums into *u. */
__device__ void walk_one_by_one(const float *__restrict__ p, const float *__restrict__ mt, const pnode *__restrict__ nd,
                                uint64_t n, uint64_t first, uint64_t T, uint64_t ts, uint64_t te, const pnode &tn,
                                uint64_t me, float px, float py, float pz, float theta, float e2, int lane, float *s,
                                float *u)
{
    for (uint64_t X = 0;;) {
        uint64_t xs, xe;
        tree_range(n, X, &xs, &xe);
        bool next = true;
        if (xs <= ts && te <= xe && X != T) { /* an ancestor: open it */
            X = 2 * X + 1;
            continue;
        }
        const pnode b = nd[X];
        const float dx0 = b.cx - tn.cx, dy0 = b.cy - tn.cy, dz0 = b.cz - tn.cz;
        const float reach = tn.b + b.b / theta;
        if (X != T && (dx0 * dx0 + dy0 * dy0) + dz0 * dz0 > reach * reach) {
            *s += multipole(b, px - b.cx, py - b.cy, pz - b.cz, e2);
        } else if (X >= first) { /* a leaf (T itself included): its members exactly */
            *u += leaf_sum(p, mt, xs, xe, me, px, py, pz, e2, lane);
        } else {
            X = 2 * X + 1;
            next = false;
        }
        if (next) {
            X = fk_tree_next(X);
            if (X == 0) break;
        }
    }
}

#define WSTACK 1024 /* a warp's stack of nodes to test: it grows by at most a warp a step, and a step deeper */
#define WALK_WARPS 4

/* One warp a leaf T of targets: the tree potential of each, written to phi[a + perm[i]] (member order).
 * The warp tests 32 nodes at once, a node a lane, from a stack in shared
 * memory: the nodes taken whole (beyond b_T + b_B / theta from T's centre)
 * are staged in shared memory and summed by every lane at its target, the
 * near leaves' members summed exactly, the other nodes' children pushed.
 * The same terms as a walk node by node (walk_one_by_one, which a stack
 * that would overflow falls back on), in another order: the minimum search
 * of the 134M mock's largest halo (10.4M members, H100) took 0.53 s against
 * 0.62 s node by node, with the same minimum; of it the walk 0.069 s. */
__global__ void __launch_bounds__(32 * WALK_WARPS) k_walk_pot(const float *__restrict__ p, const float *__restrict__ mt,
                                                  const uint32_t *__restrict__ perm, const pnode *__restrict__ nd,
                                                  uint64_t n, uint32_t depth, float theta, float e2, double G,
                                                  uint64_t a, double *phi)
{
    __shared__ uint32_t stack_all[WALK_WARPS][WSTACK];
    __shared__ pnode far_all[WALK_WARPS][32];
    __shared__ uint32_t near_all[WALK_WARPS][32];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    uint32_t *stack = stack_all[wib], *nearl = near_all[wib];
    pnode *farl = far_all[wib];
    const uint64_t first = (UINT64_C(1) << depth) - 1;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t nwarps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    for (uint64_t L = warp; L < (UINT64_C(1) << depth); L += nwarps) {
        const uint64_t T = first + L;
        uint64_t ts, te;
        tree_range(n, T, &ts, &te);
        const bool has = lane < (int)(te - ts);
        const uint64_t me = ts + lane;
        const float px = has ? p[3 * me] : 0.f, py = has ? p[3 * me + 1] : 0.f, pz = has ? p[3 * me + 2] : 0.f;
        const pnode tn = nd[T];
        float s = 0, u = 0;
        int top = 1;
        bool overflow = false;
        if (lane == 0) stack[0] = 0;
        __syncwarp();
        while (top > 0) {
            const int cnt = top < 32 ? top : 32;
            top -= cnt;
            const bool mine = lane < cnt;
            const uint32_t X = mine ? stack[top + lane] : 0;
            __syncwarp();
            bool open = false, far = false, leaf = false;
            pnode b;
            if (mine) {
                uint64_t xs, xe;
                tree_range(n, X, &xs, &xe);
                if (xs <= ts && te <= xe && X != T) {
                    open = true; /* an ancestor */
                } else {
                    b = nd[X];
                    const float dx0 = b.cx - tn.cx, dy0 = b.cy - tn.cy, dz0 = b.cz - tn.cz;
                    const float reach = tn.b + b.b / theta;
                    if (X != T && (dx0 * dx0 + dy0 * dy0) + dz0 * dz0 > reach * reach) far = true;
                    else if (X >= first) leaf = true;
                    else open = true;
                }
            }
            const unsigned below = (1u << lane) - 1;
            const unsigned mopen = __ballot_sync(0xffffffffu, open), mfar = __ballot_sync(0xffffffffu, far);
            const unsigned mleaf = __ballot_sync(0xffffffffu, leaf);
            const int nopen = __popc(mopen), nfar = __popc(mfar), nleaf = __popc(mleaf);
            if (top + 2 * nopen > WSTACK) { /* never expected: this leaf walks node by node instead */
                overflow = true;
                break;
            }
            if (open) {
                const int k = top + 2 * __popc(mopen & below);
                stack[k] = 2 * X + 1;
                stack[k + 1] = 2 * X + 2;
            }
            if (far) farl[__popc(mfar & below)] = b;
            if (leaf) nearl[__popc(mleaf & below)] = X;
            __syncwarp();
            top += 2 * nopen;
            for (int k = 0; k < nfar; k++) {
                const pnode f = farl[k];
                s += multipole(f, px - f.cx, py - f.cy, pz - f.cz, e2);
            }
            for (int k = 0; k < nleaf; k++) {
                uint64_t xs, xe;
                tree_range(n, nearl[k], &xs, &xe);
                u += leaf_sum(p, mt, xs, xe, me, px, py, pz, e2, lane);
            }
            __syncwarp();
        }
        if (overflow) { /* warp-uniform */
            s = 0, u = 0;
            walk_one_by_one(p, mt, nd, n, first, T, ts, te, tn, me, px, py, pz, theta, e2, lane, &s, &u);
        }
        if (has) phi[a + perm[me]] = -G * ((double)s + (double)u);
        __syncwarp();
    }
}

/* ---- host side ---- */

struct cand {
    double phi;
    uint64_t i;
};

/* The tree potential of every member of the group [a, a + n) into
 * d_phi[a..a+n), everything on the device (d_x.. hold all members). */
static int tree_phi(uint64_t a, uint64_t n, const double *d_x, const double *d_y, const double *d_z,
                    const double *d_m, const fk_pot_params *p, double *d_phi, fk_error *err)
{
    fk_tree t;
    int st = fk_tree_alloc(&t, n, PLEAF, "gpu-hilbert", err);
    if (st) return st;
    t.unit = 1; /* halves: no leaf empty, which the walks below assume */
    free(t.box);
    t.box = NULL;
    dbuf<float> d_rel, d_sorted, d_box, d_mt;
    dbuf<uint32_t> d_perm;
    dbuf<dmom> d_mom;
    dbuf<pnode> d_nodes;
    if ((st = d_rel.alloc(3 * n, err)) || (st = d_sorted.alloc(3 * n, err)) || (st = d_box.alloc(6 * t.nnodes, err)) ||
        (st = d_mt.alloc(n, err)) || (st = d_perm.alloc(n, err)) || (st = d_mom.alloc(t.nnodes, err)) ||
        (st = d_nodes.alloc(t.nnodes, err)))
        return st;
    k_relative<<<fk_grid_all(n, 256), 256>>>(d_x, d_y, d_z, a, n, d_rel.p);
    FK_LAUNCHED("k_relative", err);
    if ((st = fk_gpu_build_dev(d_rel.p, &t, 0, 0, d_sorted.p, d_perm.p, d_box.p, err))) return st;
    k_tree_masses<<<fk_grid_all(n, 256), 256>>>(d_m, a, d_perm.p, n, d_mt.p);
    FK_LAUNCHED("k_tree_masses", err);
    k_leaf_moments<<<fk_grid_all(UINT64_C(1) << t.depth, 128), 128>>>(d_sorted.p, d_mt.p, n, t.depth, d_mom.p);
    FK_LAUNCHED("k_leaf_moments", err);
    for (int d = (int)t.depth - 1; d >= 0; d--) {
        uint64_t lo = (UINT64_C(1) << d) - 1, hi = (UINT64_C(2) << d) - 1;
        k_level_moments<<<fk_grid_all(hi - lo, 128), 128>>>(d_box.p, lo, hi, d_mom.p);
        FK_LAUNCHED("k_level_moments", err);
    }
    k_pnodes<<<fk_grid_all(t.nnodes, 256), 256>>>(d_mom.p, t.nnodes, d_nodes.p);
    FK_LAUNCHED("k_pnodes", err);
    const uint64_t nleaves = UINT64_C(1) << t.depth;
    k_walk_pot<<<fk_grid_all(nleaves * 32, 32 * WALK_WARPS), 32 * WALK_WARPS>>>(
        d_sorted.p, d_mt.p, d_perm.p, d_nodes.p, n, t.depth, (float)p->theta, (float)(p->eps * p->eps), p->G, a, d_phi);
    FK_LAUNCHED("k_walk_pot", err);
    return FK_OK;
}

/* The minimum of the large group [a, a + n) by the tree and exact
 * candidates, everything on the device (d_x.. hold all members). */
static int tree_group(uint64_t a, uint64_t n, const double *d_x, const double *d_y, const double *d_z,
                      const double *d_m, const fk_pot_params *p, double *d_phi, fk_pot_min *out, fk_error *err)
{
    int st = tree_phi(a, n, d_x, d_y, d_z, d_m, p, d_phi, err);
    if (st) return st;
    /* candidates: within tol |least| of the least tree potential, lowest first */
    std::vector<double> tp(n);
    FK_CU(cudaMemcpy(tp.data(), d_phi + a, n * sizeof(double), cudaMemcpyDeviceToHost), err);
    double lo = tp[0];
    for (uint64_t i = 1; i < n; i++) lo = tp[i] < lo ? tp[i] : lo;
    const double slack = fk_pot_tolerance(p) * fabs(lo), hi = lo + slack;
    std::vector<cand> c;
    for (uint64_t i = 0; i < n; i++)
        if (tp[i] <= hi) c.push_back(cand{tp[i], i});
    std::sort(c.begin(), c.end(), [](const cand &x, const cand &y) { return x.phi != y.phi ? x.phi < y.phi : x.i < y.i; });
    if (c.size() > p->ncand) c.resize(p->ncand);
    const uint32_t nchunk = exact_chunks(n);
    dbuf<uint64_t> d_cand;
    dbuf<double> d_part;
    if ((st = d_cand.alloc(CBATCH, err)) || (st = d_part.alloc((uint64_t)CBATCH * nchunk, err))) return st;
    std::vector<double> part((size_t)CBATCH * nchunk);
    size_t done = 0, best = 0;
    double best_phi = INFINITY;
    while (done < c.size() && c[done].phi <= best_phi + slack / 2) {
        const size_t batch = std::min(c.size() - done, (size_t)CBATCH);
        uint64_t idx[CBATCH];
        double ex[CBATCH];
        for (size_t k = 0; k < batch; k++) idx[k] = c[done + k].i;
        FK_CU(cudaMemcpy(d_cand.p, idx, batch * sizeof(uint64_t), cudaMemcpyHostToDevice), err);
        k_exact_at<<<dim3(nchunk, (unsigned)batch), TPB>>>(d_cand.p, a, n, nchunk, d_x, d_y, d_z, d_m,
                                                            p->eps * p->eps, d_part.p);
        FK_LAUNCHED("k_exact_at", err);
        FK_CU(cudaMemcpy(part.data(), d_part.p, batch * nchunk * sizeof(double), cudaMemcpyDeviceToHost), err);
        for (size_t k = 0; k < batch; k++) { /* the chunks in order */
            double sum = 0;
            for (uint32_t q = 0; q < nchunk; q++) sum += part[k * nchunk + q];
            ex[k] = -p->G * sum;
        }
        for (size_t k = 0; k < batch; k++)
            if (ex[k] < best_phi || (ex[k] == best_phi && c[done + k].i < c[best].i)) {
                best_phi = ex[k];
                best = done + k;
            }
        done += batch;
    }
    out->index = c[best].i;
    out->phi = best_phi;
    out->method = FK_POT_BY_TREE;
    out->candidates = (uint32_t)done;
    return FK_OK;
}

extern "C" int fk_gpu_pot_exact(const fk_pot_members *g, double G, double eps, double *phi, fk_gputimes *times,
                                fk_error *err)
{
    FK_GPU_ENTER(err);
    const uint64_t n = g->n;
    fk_gputimes tz;
    memset(&tz, 0, sizeof tz);
    tz.bytes_needed = n * 40 + (n / TPB + 1) * sizeof(xjob);
    int st = fk_gpu_reserve(tz.bytes_needed, err);
    if (st) return st;
    std::vector<xjob> jobs;
    for (uint64_t t0 = 0; t0 < n; t0 += TPB) jobs.push_back(xjob{0, n, t0});
    dbuf<double> d_x, d_y, d_z, d_m, d_phi;
    dbuf<xjob> d_jobs;
    if ((st = d_x.alloc(n, err)) || (st = d_y.alloc(n, err)) || (st = d_z.alloc(n, err)) || (st = d_m.alloc(n, err)) ||
        (st = d_phi.alloc(n, err)) || (st = d_jobs.alloc(jobs.size(), err)))
        return st;
    timer tm;
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaMemcpy(d_x.p, g->x, n * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(d_y.p, g->y, n * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(d_z.p, g->z, n * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(d_m.p, g->m, n * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(d_jobs.p, jobs.data(), jobs.size() * sizeof(xjob), cudaMemcpyHostToDevice), err);
    if ((st = tm.mark(err))) return st;
    if (n) {
        k_exact<<<(unsigned)jobs.size(), TPB>>>(d_jobs.p, d_x.p, d_y.p, d_z.p, d_m.p, G, eps * eps, d_phi.p);
        FK_LAUNCHED("k_exact", err);
    }
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaMemcpy(phi, d_phi.p, n * 8, cudaMemcpyDeviceToHost), err);
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaDeviceSynchronize(), err);
    tz.upload = tm.secs(0, 1);
    tz.link = tm.secs(1, 2);
    tz.download = tm.secs(2, 3);
    if (times) *times = tz;
    return FK_OK;
}

int fk_gpu_pot_phi_dev(uint64_t n, const double *d_x, const double *d_y, const double *d_z, const double *d_m,
                       const fk_pot_params *p, double *d_phi, fk_error *err)
{
    if (n == 0) return FK_OK;
    if (n > FK_GPU_POT_EXACT) return tree_phi(0, n, d_x, d_y, d_z, d_m, p, d_phi, err);
    std::vector<xjob> jobs;
    for (uint64_t t0 = 0; t0 < n; t0 += TPB) jobs.push_back(xjob{0, n, t0});
    dbuf<xjob> d_jobs;
    int st = d_jobs.alloc(jobs.size(), err);
    if (st) return st;
    FK_CU(cudaMemcpy(d_jobs.p, jobs.data(), jobs.size() * sizeof(xjob), cudaMemcpyHostToDevice), err);
    k_exact<<<(unsigned)jobs.size(), TPB>>>(d_jobs.p, d_x, d_y, d_z, d_m, p->G, p->eps * p->eps, d_phi);
    FK_LAUNCHED("k_exact", err);
    FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err); /* d_jobs is freed on return */
    return FK_OK;
}

extern "C" int fk_gpu_pot_tree(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_gputimes *times,
                               fk_error *err)
{
    FK_GPU_ENTER(err);
    int st = fk_pot_check(p, err);
    if (st) return st;
    const uint64_t n = g->n;
    if (n > (UINT64_C(1) << 31)) return fk_fail(err, FK_EUNSUP, "a group of more than 2^31 members");
    const bool exact = n <= FK_GPU_POT_EXACT;
    fk_gputimes tz;
    memset(&tz, 0, sizeof tz);
    tz.bytes_needed = fk_gpu_pot_bytes(n, 1, exact ? 0 : n) + (n / TPB + 1) * sizeof(xjob);
    if ((st = fk_gpu_reserve(tz.bytes_needed, err))) return st;
    dbuf<double> d_x, d_y, d_z, d_m, d_phi;
    if ((st = d_x.alloc(n, err)) || (st = d_y.alloc(n, err)) || (st = d_z.alloc(n, err)) || (st = d_m.alloc(n, err)) ||
        (st = d_phi.alloc(n, err)))
        return st;
    timer tm;
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaMemcpy(d_x.p, g->x, n * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(d_y.p, g->y, n * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(d_z.p, g->z, n * 8, cudaMemcpyHostToDevice), err);
    FK_CU(cudaMemcpy(d_m.p, g->m, n * 8, cudaMemcpyHostToDevice), err);
    if ((st = tm.mark(err))) return st;
    if ((st = fk_gpu_pot_phi_dev(n, d_x.p, d_y.p, d_z.p, d_m.p, p, d_phi.p, err))) return st;
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaMemcpy(phi, d_phi.p, n * 8, cudaMemcpyDeviceToHost), err);
    if ((st = tm.mark(err))) return st;
    /* this thread's work only: the unbinding calls from several threads at once */
    FK_CU(cudaStreamSynchronize(cudaStreamPerThread), err);
    tz.upload = tm.secs(0, 1);
    tz.link = tm.secs(1, 2);
    tz.download = tm.secs(2, 3);
    if (times) *times = tz;
    return FK_OK;
}

extern "C" uint64_t fk_gpu_pot_bytes(uint64_t nmembers, uint64_t ngroups, uint64_t largest)
{
    /* members (x y z m phi), offsets, results, the scratch of the tree groups
     * at once (largest: their members) */
    return nmembers * 40 + ngroups * (8 + sizeof(fk_pot_min) + 8) + largest * 64 + (largest / 16 + 1) * 150 + 64;
}

extern "C" int fk_gpu_pot_minima(const fk_pot_groups *g, const fk_pot_params *p, fk_pot_min *min,
                                 fk_gputimes *times, fk_error *err)
{
    FK_GPU_ENTER(err);
    int st = fk_pot_check(p, err);
    if (st) return st;
    const uint64_t ng = g->ngroups;
    if (ng && g->first[0] != 0) return fk_fail(err, FK_EINVAL, "the first group must start at member 0");
    const uint64_t exact_max = p->nexact > FK_GPU_POT_EXACT ? p->nexact : FK_GPU_POT_EXACT;
    std::vector<xjob> jobs;
    std::vector<uint64_t> exact_groups, tree_groups;
    for (uint64_t k = 0; k < ng; k++) {
        const uint64_t a = g->first[k], n = g->first[k + 1] - a;
        if (g->first[k + 1] < a || n == 0)
            return fk_fail(err, FK_EINVAL, "group %llu has no member (offsets must ascend)", (unsigned long long)k);
        if (n > (UINT64_C(1) << 31)) return fk_fail(err, FK_EUNSUP, "a group of more than 2^31 members");
        if (n <= exact_max) {
            exact_groups.push_back(k);
            for (uint64_t t0 = 0; t0 < n; t0 += TPB) jobs.push_back(xjob{a, n, t0});
        } else {
            tree_groups.push_back(k);
        }
    }
    const uint64_t nm = ng ? g->first[ng] : 0;
    /* the large groups' trees, up to TREE_THREADS of them at once: at most
     * that many of the largest, and no more than all of them */
    const int nt = (int)std::min<size_t>(tree_groups.size(), TREE_THREADS);
    uint64_t tree_members = 0;
    for (int q = 0; q < nt; q++) tree_members += g->first[tree_groups[q] + 1] - g->first[tree_groups[q]];
    fk_gputimes tz;
    memset(&tz, 0, sizeof tz);
    tz.bytes_needed = fk_gpu_pot_bytes(nm, ng, tree_members);
    if ((st = fk_gpu_reserve(tz.bytes_needed, err))) return st;
    dbuf<double> d_x, d_y, d_z, d_m, d_phi;
    dbuf<uint64_t> d_first, d_groups;
    dbuf<xjob> d_jobs;
    dbuf<fk_pot_min> d_min;
    if ((st = d_x.alloc(nm, err)) || (st = d_y.alloc(nm, err)) || (st = d_z.alloc(nm, err)) ||
        (st = d_m.alloc(nm, err)) || (st = d_phi.alloc(nm, err)) || (st = d_first.alloc(ng + 1, err)) ||
        (st = d_groups.alloc(exact_groups.size(), err)) || (st = d_jobs.alloc(jobs.size(), err)) ||
        (st = d_min.alloc(ng, err)))
        return st;
    timer tm;
    if ((st = tm.mark(err))) return st;
    /* through pinned staging on every core: the batch's doubles are pageable */
    if ((st = fk_gpu_put(d_x.p, g->x, nm * 8, err)) || (st = fk_gpu_put(d_y.p, g->y, nm * 8, err)) ||
        (st = fk_gpu_put(d_z.p, g->z, nm * 8, err)) || (st = fk_gpu_put(d_m.p, g->m, nm * 8, err)))
        return st;
    FK_CU(cudaMemcpy(d_first.p, g->first, (ng + 1) * 8, cudaMemcpyHostToDevice), err);
    if (!exact_groups.empty())
        FK_CU(cudaMemcpy(d_groups.p, exact_groups.data(), exact_groups.size() * 8, cudaMemcpyHostToDevice), err);
    if (!jobs.empty()) FK_CU(cudaMemcpy(d_jobs.p, jobs.data(), jobs.size() * sizeof(xjob), cudaMemcpyHostToDevice), err);
    if ((st = tm.mark(err))) return st;
    const double e2 = p->eps * p->eps;
    for (uint64_t j0 = 0; j0 < jobs.size(); j0 += 0x7fffffffu) { /* grid size limit */
        const uint64_t nj = std::min<uint64_t>(jobs.size() - j0, 0x7fffffffu);
        k_exact<<<(unsigned)nj, TPB>>>(d_jobs.p + j0, d_x.p, d_y.p, d_z.p, d_m.p, p->G, e2, d_phi.p);
        FK_LAUNCHED("k_exact", err);
    }
    if (!exact_groups.empty()) {
        k_argmin<<<(unsigned)exact_groups.size(), TPB>>>(d_groups.p, d_first.p, d_phi.p, d_min.p);
        FK_LAUNCHED("k_argmin", err);
    }
    std::vector<fk_pot_min> h(ng);
    /* the large groups on host threads of their own, largest first: each
     * thread's kernels on its own default stream, so that one group's walk
     * runs beside another's round trips and candidates; each writes only its
     * own members' phi and its h[k] (the exact kernels above, on this
     * thread's stream, write other members'). The lowest group's failure is
     * the one told. */
    if (!tree_groups.empty()) {
        const size_t nq = tree_groups.size();
        std::vector<int> sts(nq, FK_OK);
        std::vector<fk_error> errs(nq);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (nt > 1)
        for (size_t q = 0; q < nq; q++) {
            const uint64_t k = tree_groups[q];
            sts[q] = fk_gpu_use(&errs[q]);
            if (sts[q] == FK_OK)
                sts[q] = tree_group(g->first[k], g->first[k + 1] - g->first[k], d_x.p, d_y.p, d_z.p, d_m.p, p,
                                    d_phi.p, &h[k], &errs[q]);
        }
        for (size_t q = 0; q < nq; q++)
            if (sts[q]) {
                *err = errs[q];
                return sts[q];
            }
    }
    if ((st = tm.mark(err))) return st;
    if (ng) {
        std::vector<fk_pot_min> e(ng);
        FK_CU(cudaMemcpy(e.data(), d_min.p, ng * sizeof(fk_pot_min), cudaMemcpyDeviceToHost), err);
        for (uint64_t k : exact_groups) h[k] = e[k];
        memcpy(min, h.data(), ng * sizeof(fk_pot_min));
        if (g->phi && (st = fk_gpu_get(g->phi, d_phi.p, nm * 8, err))) return st;
    }
    if ((st = tm.mark(err))) return st;
    FK_CU(cudaDeviceSynchronize(), err);
    tz.upload = tm.secs(0, 1);
    tz.link = tm.secs(1, 2); /* the potential work */
    tz.download = tm.secs(2, 3);
    if (times) *times = tz;
    return FK_OK;
}
