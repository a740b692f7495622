/* link_cpu.c - FoF linking on the CPU: per-leaf tree walks with OpenMP, lock-free sink linking, clique shortcuts. */
#include "link.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int fk_link_check(const fk_linkopts *o, fk_error *err)
{
    if (!(o->l > 0) || !isfinite(o->l))
        return fk_fail(err, FK_EINVAL, "linking length %.9g is not a positive number", o->l);
    if (!isfinite((float)o->l * (float)o->l) || (float)o->l * (float)o->l == 0)
        return fk_fail(err, FK_EINVAL, "linking length %.9g is out of binary32 range", o->l);
    if (o->periodic && o->l > 0.5 * o->box)
        return fk_fail(err, FK_EINVAL, "linking length %.9g is larger than half the box (%.9g)", o->l, 0.5 * o->box);
    if (!(o->psi >= 0) || !isfinite((float)(o->psi * o->psi)) || (o->psi > 0 && (float)o->psi * (float)o->psi == 0))
        return fk_fail(err, FK_EINVAL, "velocity linking length %g is not a usable positive number", o->psi);
    return FK_OK;
}

fk_linkparams fk_link_params(const fk_linkopts *o)
{
    fk_linkparams p;
    p.g.periodic = o->periodic;
    p.g.L = o->periodic ? (float)o->box : 0.0f;
    p.g.h = 0.5f * p.g.L;
    float l = (float)o->l, psi = (float)o->psi;
    p.l2 = l * l;
    p.sixd = o->psi > 0;
    p.p2 = p.sixd ? psi * psi : 1.0f;
    p.il2 = 1.0 / p.l2;
    p.ip2 = 1.0 / p.p2;
    return p;
}

/* ---- the lock-free sink array ---- */

static inline uint32_t ld(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* The sink of x, halving the path on the way: each write points a non-sink
 * at one of its ancestors, which stays an ancestor forever. */
static inline uint32_t find(uint32_t *s, uint32_t x)
{
    uint32_t p = ld(&s[x]);
    while (p != x) {
        uint32_t g = ld(&s[p]);
        if (g != p) __atomic_store_n(&s[x], g, __ATOMIC_RELAXED);
        x = p;
        p = g;
    }
    return x;
}

/* Merges the groups of a and b: the higher sink is linked under the lower. */
static void unite(uint32_t *s, uint32_t a, uint32_t b)
{
    a = find(s, a);
    b = find(s, b);
    while (a != b) {
        if (a < b) {
            uint32_t t = a;
            a = b;
            b = t;
        }
        uint32_t expect = a;
        if (__atomic_compare_exchange_n(&s[a], &expect, b, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return;
        a = find(s, expect);
        b = find(s, b);
    }
}

uint64_t fk_sink_flatten(uint32_t *sink, uint64_t n)
{
    /* sink[i] <= i, so in increasing order sink[sink[i]] is already final. */
    uint64_t groups = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t p = sink[i];
        if (p == i)
            groups++;
        else
            sink[i] = sink[p];
    }
    return groups;
}

/* ---- linking ---- */

typedef struct ctx {
    const fk_tree *t;
    const float *pos, *vel;
    const float *vbox; /* velocity boxes per node (6D only) */
    uint32_t *sink;
    uint8_t *clique; /* every pair of the node's particles is linked */
    fk_linkparams p;
    fk_layout l;
    uint64_t first_leaf;
    /* fk_link_cpu_within only (else lab is NULL): the labels, and per node
     * the least and greatest label of its labelled particles (lo > hi when
     * it has none) */
    const uint32_t *lab, *nlo, *nhi;
} ctx;

/* Whether the label of particle i is outside [lo, hi]: then it has no
 * friend among the particles whose labels lie in that range (FK_NOLABEL is
 * outside every range: no label is that large). */
static inline int label_out(const ctx *c, uint64_t i, uint32_t lo, uint32_t hi)
{
    return c->lab[i] < lo || c->lab[i] > hi;
}

static inline int friends(const ctx *c, uint64_t i, uint64_t j)
{
    const float *vi = c->p.sixd ? c->vel + 3 * i : NULL, *vj = c->p.sixd ? c->vel + 3 * j : NULL;
    return fk_friends(c->pos + 3 * i, c->pos + 3 * j, vi, vj, &c->p);
}

static inline int pair_bounds(const ctx *c, uint64_t a, uint64_t b)
{
    if (!c->p.sixd) return fk_node_pair3(c->t->box + 6 * a, c->t->box + 6 * b, &c->p);
    const float *va = c->p.sixd ? c->vbox + 6 * a : NULL, *vb = c->p.sixd ? c->vbox + 6 * b : NULL;
    return fk_node_pair(c->t->box + 6 * a, c->t->box + 6 * b, va, vb, &c->p);
}

typedef struct counters {
    uint64_t pairs, nodes;
} counters;

/* Leaves up to this size take the vectorised path (a row of separations at a time). */
#define ROW_MAX 64

/* A leaf's positions as structure of arrays, for row_r2, padded with
 * particles at infinity to a whole number of ROW_LANES (their r2 is
 * infinite: never a friend). */
#define ROW_LANES 16
typedef struct leafsoa {
    float x[ROW_MAX], y[ROW_MAX], z[ROW_MAX];
    int n, padded;
} leafsoa;

static void to_soa(const float *pos, uint64_t s, int cnt, leafsoa *o)
{
    o->n = cnt;
    o->padded = (cnt + ROW_LANES - 1) / ROW_LANES * ROW_LANES;
    for (int j = 0; j < cnt; j++) {
        o->x[j] = pos[3 * (s + j)];
        o->y[j] = pos[3 * (s + j) + 1];
        o->z[j] = pos[3 * (s + j) + 2];
    }
    for (int j = cnt; j < o->padded; j++) o->x[j] = o->y[j] = o->z[j] = INFINITY;
}

/* r2 of the predicate between particle p and each of cnt particles, into
 * out; exactly fk_sep2(p, q) for each q (the same binary32 operations in the
 * same order, lane by lane; with h = infinity nothing wraps), written so the
 * compiler vectorises it, with a clone per instruction set. (This file is
 * compiled with -fno-trapping-math, which only lets the selects be
 * evaluated unconditionally: FP exception flags are not used; every value
 * is the same IEEE result.) */
__attribute__((target_clones("avx512f", "avx2", "default"))) static int
row_r2(const leafsoa *restrict q, float px, float py, float pz, float L, float h, float l2, float *restrict out)
{
    int within = 0;
    for (int j0 = 0; j0 < q->padded; j0 += ROW_LANES)
        for (int j = j0; j < j0 + ROW_LANES; j++) {
            float dx = q->x[j] - px, dy = q->y[j] - py, dz = q->z[j] - pz;
            /* the wrap as selects of constants, so that every instruction set
             * vectorises it: (d - L) + 0, (d - 0) + L and (d - 0) + 0 are the
             * exact results d - L, d + L and d of fk_axis_sep */
            dx = (dx - (dx > h ? L : 0.0f)) + (dx < -h ? L : 0.0f);
            dy = (dy - (dy > h ? L : 0.0f)) + (dy < -h ? L : 0.0f);
            dz = (dz - (dz > h ? L : 0.0f)) + (dz < -h ? L : 0.0f);
            float r2 = (dx * dx + dy * dy) + dz * dz;
            out[j] = r2;
            within += r2 < l2;
        }
    return within; /* how many are within l: most rows have none */
}

/* The friends of particle i among the particles from .. q->n-1 of q
 * (stream indices from qs), as indices in q, ascending; returns how many. */
static int row_friends(const ctx *c, const leafsoa *q, uint64_t qs, int from, uint64_t i, int *out)
{
    float r2[ROW_MAX];
    const float h = c->p.g.periodic ? c->p.g.h : INFINITY;
    const float *p = c->pos + 3 * i;
    int within = row_r2(q, p[0], p[1], p[2], c->p.g.L, h, c->p.l2, r2);
    if (within == 0) return 0;
    int k = 0;
    for (int j = from; j < q->n && within > 0; j++)
        if (r2[j] < c->p.l2) {
            within--;
            if (!c->p.sixd ||
                fk_phase_friends(r2[j], fk_vsep2(c->vel + 3 * i, c->vel + 3 * (qs + j)), c->p.l2, c->p.p2))
                out[k++] = j;
        }
    return k;
}

/* Links the particles of leaves A and X (A before X in stream order):
 * every friend pair, or for a clique side just one link per particle of
 * the other side (or one link in all when both are cliques). With labels,
 * [alo, ahi] and [xlo, xhi] are the label ranges of A and X: a particle
 * outside the other leaf's range is left out. */
static void leaf_pairs(const ctx *c, uint64_t as, uint64_t ae, uint64_t xs, uint64_t xe, int connA, int connX,
                       uint32_t alo, uint32_t ahi, uint32_t xlo, uint32_t xhi, counters *k)
{
    uint32_t *s = c->sink;
    const int cx = (int)(xe - xs), ca = (int)(ae - as);
    if (ca > ROW_MAX || cx > ROW_MAX) { /* large leaves: plain loops */
        for (uint64_t a = as; a < ae; a++) {
            if (c->lab && label_out(c, a, xlo, xhi)) continue;
            for (uint64_t x = xs; x < xe; x++) {
                k->pairs++;
                if (friends(c, a, x)) unite(s, (uint32_t)a, (uint32_t)x);
            }
        }
        return;
    }
    leafsoa X;
    int hit[ROW_MAX];
    if (connA && !connX) { /* each particle of X needs one link into A's group */
        to_soa(c->pos, as, ca, &X);
        const uint32_t ra = find(s, (uint32_t)as);
        for (uint64_t x = xs; x < xe; x++) {
            if (c->lab && label_out(c, x, alo, ahi)) continue;
            if (find(s, (uint32_t)x) == ra) continue;
            k->pairs += (uint64_t)ca;
            if (row_friends(c, &X, as, 0, x, hit)) unite(s, (uint32_t)x, (uint32_t)(as + hit[0]));
        }
        return;
    }
    to_soa(c->pos, xs, cx, &X);
    for (uint64_t a = as; a < ae; a++) {
        if (c->lab && label_out(c, a, xlo, xhi)) continue;
        if (connX && !connA && find(s, (uint32_t)a) == find(s, (uint32_t)xs)) continue;
        k->pairs += (uint64_t)cx;
        int m = row_friends(c, &X, xs, 0, a, hit);
        if (m == 0) continue;
        if (connX) { /* one link joins a to the clique X */
            unite(s, (uint32_t)a, (uint32_t)(xs + hit[0]));
            if (connA) return; /* and the clique A with it */
            continue;
        }
        for (int j = 0; j < m; j++) unite(s, (uint32_t)a, (uint32_t)(xs + hit[j]));
    }
}

/* Links the pairs inside leaf A (not a clique); with labels, a particle
 * labelled FK_NOLABEL is left out. */
static void self_pairs(const ctx *c, uint64_t as, uint64_t ae, counters *k)
{
    const int ca = (int)(ae - as);
    if (ca > ROW_MAX) {
        for (uint64_t i = as; i < ae; i++) {
            if (c->lab && c->lab[i] == FK_NOLABEL) continue;
            for (uint64_t j = i + 1; j < ae; j++) {
                k->pairs++;
                if (friends(c, i, j)) unite(c->sink, (uint32_t)i, (uint32_t)j);
            }
        }
        return;
    }
    leafsoa A;
    int hit[ROW_MAX];
    to_soa(c->pos, as, ca, &A);
    for (int i = 0; i + 1 < ca; i++) {
        if (c->lab && c->lab[as + i] == FK_NOLABEL) continue;
        k->pairs += (uint64_t)(ca - i - 1);
        int m = row_friends(c, &A, as, i + 1, as + i, hit);
        for (int j = 0; j < m; j++) unite(c->sink, (uint32_t)(as + i), (uint32_t)(as + hit[j]));
    }
}

/* Finds every link between leaf A and the particles after it. top is A's
 * topmost clique ancestor (or UINT64_MAX): its particles are one group
 * already. The walk starts after A's subtree (or top's) in depth-first
 * order, so it meets exactly the subtrees whose particles all come later in
 * stream order: each pair is considered once, from its lower leaf. With
 * labels, a leaf without labelled particles has nothing to link, and a
 * subtree whose label range misses A's is skipped like a distant one. */
static void link_leaf(const ctx *c, uint64_t A, uint64_t top, counters *k)
{
    uint32_t *s = c->sink;
    uint64_t as, ae;
    fk_tree_range(c->l, A, &as, &ae);
    if (as == ae) return; /* an empty leaf */
    int connA = top != UINT64_MAX;
    uint32_t alo = 0, ahi = 0;
    if (c->lab) {
        alo = c->nlo[A];
        ahi = c->nhi[A];
        if (alo > ahi) return;
    }

    if (!connA) {
        self_pairs(c, as, ae, k);
        /* If A's own links joined it into one group, it is as good as a
         * clique from here on: one link per particle of X is enough. */
        uint32_t r = find(s, (uint32_t)as);
        connA = 1;
        for (uint64_t i = as + 1; i < ae && connA; i++) connA = find(s, (uint32_t)i) == r;
    }

    for (uint64_t X = fk_tree_next(top != UINT64_MAX ? top : A); X != 0;) {
        if (c->lab && (c->nhi[X] < alo || c->nlo[X] > ahi)) {
            X = fk_tree_next(X);
            continue;
        }
        uint64_t xs, xe;
        fk_tree_range(c->l, X, &xs, &xe);
        if (xs == xe) { /* an empty leaf */
            X = fk_tree_next(X);
            continue;
        }
        k->nodes++;
        int b = pair_bounds(c, A, X);
        if (b == FK_NODES_APART) {
            X = fk_tree_next(X);
            continue;
        }
        if (b == FK_NODES_LINKED) { /* A and X become one group */
            if (!connA)
                for (uint64_t a = as; a < ae; a++) unite(s, (uint32_t)a, (uint32_t)xs);
            if (!c->clique[X])
                for (uint64_t x = xs; x < xe; x++) unite(s, (uint32_t)as, (uint32_t)x);
            else
                unite(s, (uint32_t)as, (uint32_t)xs);
            X = fk_tree_next(X);
            continue;
        }
        if (connA && c->clique[X] && find(s, (uint32_t)as) == find(s, (uint32_t)xs)) {
            X = fk_tree_next(X);
            continue;
        }
        if (X >= c->first_leaf) {
            leaf_pairs(c, as, ae, xs, xe, connA, c->clique[X], alo, ahi, c->lab ? c->nlo[X] : 0,
                       c->lab ? c->nhi[X] : 0, k);
            X = fk_tree_next(X);
        } else {
            X = 2 * X + 1;
        }
    }
}

/* Velocity boxes of every node, for 6D bounds. */
static float *velocity_boxes(const fk_tree *t, const float *vel)
{
    float *vb = malloc(t->nnodes * 6 * sizeof(float));
    if (!vb) return NULL;
    fk_tree tv = *t;
    tv.box = vb;
    fk_tree_bounds(&tv, vel);
    return vb;
}

/* Per node, the least and greatest label of its labelled particles (lo >
 * hi when it has none), leaves first, then level by level upwards. */
static void label_ranges(const fk_tree *t, const uint32_t *lab, uint32_t *lo, uint32_t *hi)
{
    const uint64_t first = (UINT64_C(1) << t->depth) - 1;
    const fk_layout l = fk_tree_layout(t);
    #pragma omp parallel for schedule(static)
    for (uint64_t i = first; i < t->nnodes; i++) {
        uint64_t s, e;
        fk_tree_range(l, i, &s, &e);
        uint32_t a = UINT32_MAX, b = 0;
        for (uint64_t j = s; j < e; j++)
            if (lab[j] != FK_NOLABEL) {
                a = lab[j] < a ? lab[j] : a;
                b = lab[j] > b ? lab[j] : b;
            }
        lo[i] = a;
        hi[i] = b;
    }
    for (int d = (int)t->depth - 1; d >= 0; d--) {
        const uint64_t s = (UINT64_C(1) << d) - 1, e = (UINT64_C(2) << d) - 1;
        #pragma omp parallel for schedule(static) if (e - s > 4096)
        for (uint64_t i = s; i < e; i++) {
            uint64_t l = 2 * i + 1, r = 2 * i + 2;
            lo[i] = lo[l] < lo[r] ? lo[l] : lo[r];
            hi[i] = hi[l] > hi[r] ? hi[l] : hi[r];
        }
    }
}

void fk_link_labels(const uint32_t *sink, uint64_t n, uint32_t *lab)
{
    /* Every member but the sink labels itself, then marks its sink (many
     * members may store the same value at once: relaxed atomic stores).
     * In parallel: for 2^20 particles serial passes took 1.5 ms, 7% of the
     * level at b = 0.1 on 16 threads, these 0.15 ms. */
    #pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) lab[i] = sink[i] != i ? sink[i] : FK_NOLABEL;
    #pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) {
        uint32_t s = sink[i];
        if (s != i) __atomic_store_n(&lab[s], s, __ATOMIC_RELAXED);
    }
}

static int link_run(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o, const uint32_t *lab,
                    uint32_t *sink, fk_linkstats *stats, fk_error *err);

int fk_link_cpu(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o, uint32_t *sink,
                fk_linkstats *stats, fk_error *err)
{
    return link_run(t, pos, vel, o, NULL, sink, stats, err);
}

int fk_link_cpu_within(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o,
                       const uint32_t *lab, uint32_t *sink, fk_linkstats *stats, fk_error *err)
{
    return link_run(t, pos, vel, o, lab, sink, stats, err);
}

/* fk_link_cpu, with labels when lab is not NULL (fk_link_cpu_within). */
static int link_run(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o, const uint32_t *lab,
                    uint32_t *sink, fk_linkstats *stats, fk_error *err)
{
    int st = fk_link_check(o, err);
    if (st) return st;
    const uint64_t n = t->n;
    fk_linkstats z = {0};
    for (uint64_t i = 0; i < n; i++) sink[i] = (uint32_t)i;
    if (n == 0) {
        if (stats) *stats = z;
        return FK_OK;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.pos = pos;
    c.vel = vel;
    c.sink = sink;
    c.p = fk_link_params(o);
    c.l = fk_tree_layout(t);
    c.first_leaf = (UINT64_C(1) << t->depth) - 1;
    c.clique = malloc(t->nnodes);
    float *vbox = NULL;
    if (c.p.sixd && !(vbox = velocity_boxes(t, vel))) {
        free(c.clique);
        return fk_fail(err, FK_ENOMEM, "out of memory for velocity boxes");
    }
    c.vbox = vbox;
    if (!c.clique) {
        free(vbox);
        return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " node flags", t->nnodes);
    }
    uint32_t *ranges = NULL;
    if (lab) {
        if (!(ranges = malloc(2 * t->nnodes * sizeof *ranges))) {
            free(c.clique);
            free(vbox);
            return fk_fail(err, FK_ENOMEM, "out of memory for the label ranges of %" PRIu64 " nodes", t->nnodes);
        }
        label_ranges(t, lab, ranges, ranges + t->nnodes);
        c.lab = lab;
        c.nlo = ranges;
        c.nhi = ranges + t->nnodes;
    }
    const int nt = o->nthreads > 0 ? o->nthreads : 0;

    /* Cliques: a node is one when its own bounds prove every pair linked. */
    #pragma omp parallel for schedule(static) num_threads(nt ? nt : omp_get_max_threads())
    for (uint64_t i = 0; i < t->nnodes; i++) {
        uint64_t s = 0, e = 1;
        if (i >= c.first_leaf) fk_tree_range(c.l, i, &s, &e);
        c.clique[i] = s < e && pair_bounds(&c, i, i) == FK_NODES_LINKED; /* an empty leaf's box is empty */
    }

    /* Each topmost clique starts as one group, its sink its first particle. */
    const uint64_t nleaves = t->nnodes - c.first_leaf;
    uint64_t *top = malloc(nleaves * sizeof *top);
    if (!top) {
        free(c.clique);
        free(vbox);
        free(ranges);
        return fk_fail(err, FK_ENOMEM, "out of memory");
    }
    uint64_t dense = 0;
    #pragma omp parallel for schedule(static) reduction(+ : dense) num_threads(nt ? nt : omp_get_max_threads())
    for (uint64_t L = 0; L < nleaves; L++) {
        uint64_t A = c.first_leaf + L, best = UINT64_MAX;
        for (uint64_t x = A;; x = (x - 1) / 2) {
            if (c.clique[x]) best = x;
            if (x == 0) break;
        }
        top[L] = best;
        if (best != UINT64_MAX) {
            uint64_t ts, te, as, ae;
            fk_tree_range(c.l, best, &ts, &te);
            fk_tree_range(c.l, A, &as, &ae);
            for (uint64_t i = as; i < ae; i++) sink[i] = (uint32_t)ts;
            if (as == ts && as < ae) dense++;
        }
    }

    uint64_t pairs = 0, nodes = 0;
    #pragma omp parallel for schedule(dynamic, 16) reduction(+ : pairs, nodes) num_threads(nt ? nt : omp_get_max_threads())
    for (uint64_t L = 0; L < nleaves; L++) {
        counters k = {0, 0};
        link_leaf(&c, c.first_leaf + L, top[L], &k);
        pairs += k.pairs;
        nodes += k.nodes;
    }
    free(top);
    free(c.clique);
    free(vbox);
    free(ranges);
    z.pair_tests = pairs;
    z.node_tests = nodes;
    z.dense_nodes = dense;
    z.groups = fk_sink_flatten(sink, n);
    if (stats) *stats = z;
    return FK_OK;
}
