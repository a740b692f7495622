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
    if (!(o->l > 0) || !isfinite((float)o->l) || (float)o->l <= 0)
        return fk_fail(err, FK_EINVAL, "linking length %g is not a positive number", o->l);
    if (!isfinite((float)o->l * (float)o->l) || (float)o->l * (float)o->l == 0)
        return fk_fail(err, FK_EINVAL, "linking length %g is out of binary32 range", o->l);
    if (o->periodic && o->l > 0.5 * o->box)
        return fk_fail(err, FK_EINVAL, "linking length %g is larger than half the box (%g)", o->l, 0.5 * o->box);
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
    uint64_t first_leaf;
} ctx;

static inline int friends(const ctx *c, uint64_t i, uint64_t j)
{
    const float *vi = c->p.sixd ? c->vel + 3 * i : NULL, *vj = c->p.sixd ? c->vel + 3 * j : NULL;
    return fk_friends(c->pos + 3 * i, c->pos + 3 * j, vi, vj, &c->p);
}

static inline int pair_bounds(const ctx *c, uint64_t a, uint64_t b)
{
    const float *va = c->p.sixd ? c->vbox + 6 * a : NULL, *vb = c->p.sixd ? c->vbox + 6 * b : NULL;
    return fk_node_pair(c->t->box + 6 * a, c->t->box + 6 * b, va, vb, &c->p);
}

typedef struct counters {
    uint64_t pairs, nodes;
} counters;

/* Links the particles of leaves A and X (A before X in stream order). */
static void leaf_pairs(const ctx *c, uint64_t as, uint64_t ae, uint64_t xs, uint64_t xe, int connA, int connX,
                       counters *k)
{
    uint32_t *s = c->sink;
    if (connA && connX) { /* one link joins the two cliques */
        for (uint64_t a = as; a < ae; a++)
            for (uint64_t x = xs; x < xe; x++) {
                k->pairs++;
                if (friends(c, a, x)) {
                    unite(s, (uint32_t)a, (uint32_t)x);
                    return;
                }
            }
        return;
    }
    if (connX) {
        for (uint64_t a = as; a < ae; a++) {
            if (find(s, (uint32_t)a) == find(s, (uint32_t)xs)) continue;
            for (uint64_t x = xs; x < xe; x++) {
                k->pairs++;
                if (friends(c, a, x)) {
                    unite(s, (uint32_t)a, (uint32_t)x);
                    break;
                }
            }
        }
        return;
    }
    if (connA) {
        for (uint64_t x = xs; x < xe; x++) {
            if (find(s, (uint32_t)x) == find(s, (uint32_t)as)) continue;
            for (uint64_t a = as; a < ae; a++) {
                k->pairs++;
                if (friends(c, a, x)) {
                    unite(s, (uint32_t)a, (uint32_t)x);
                    break;
                }
            }
        }
        return;
    }
    for (uint64_t a = as; a < ae; a++)
        for (uint64_t x = xs; x < xe; x++) {
            k->pairs++;
            if (friends(c, a, x)) unite(s, (uint32_t)a, (uint32_t)x);
        }
}

/* Finds every link between leaf A and the particles after it. top is A's
 * topmost clique ancestor (or UINT64_MAX): its particles are one group
 * already. The walk starts after A's subtree (or top's) in depth-first
 * order, so it meets exactly the subtrees whose particles all come later in
 * stream order: each pair is considered once, from its lower leaf. */
static void link_leaf(const ctx *c, uint64_t A, uint64_t top, counters *k)
{
    const uint64_t n = c->t->n;
    uint32_t *s = c->sink;
    uint64_t as, ae;
    fk_tree_range(n, A, &as, &ae);
    const int connA = top != UINT64_MAX;

    if (!connA)
        for (uint64_t i = as; i < ae; i++)
            for (uint64_t j = i + 1; j < ae; j++) {
                k->pairs++;
                if (friends(c, i, j)) unite(s, (uint32_t)i, (uint32_t)j);
            }

    for (uint64_t X = fk_tree_next(connA ? top : A); X != 0;) {
        uint64_t xs, xe;
        fk_tree_range(n, X, &xs, &xe);
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
            leaf_pairs(c, as, ae, xs, xe, connA, c->clique[X], k);
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

int fk_link_cpu(const fk_tree *t, const float *pos, const float *vel, const fk_linkopts *o, uint32_t *sink,
                fk_linkstats *stats, fk_error *err)
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
    const int nt = o->nthreads > 0 ? o->nthreads : 0;

    /* Cliques: a node is one when its own bounds prove every pair linked. */
    #pragma omp parallel for schedule(static) num_threads(nt ? nt : omp_get_max_threads())
    for (uint64_t i = 0; i < t->nnodes; i++) c.clique[i] = pair_bounds(&c, i, i) == FK_NODES_LINKED;

    /* Each topmost clique starts as one group, its sink its first particle. */
    const uint64_t nleaves = t->nnodes - c.first_leaf;
    uint64_t *top = malloc(nleaves * sizeof *top);
    if (!top) {
        free(c.clique);
        free(vbox);
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
            fk_tree_range(n, best, &ts, &te);
            fk_tree_range(n, A, &as, &ae);
            for (uint64_t i = as; i < ae; i++) sink[i] = (uint32_t)ts;
            if (as == ts) dense++;
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
    z.pair_tests = pairs;
    z.node_tests = nodes;
    z.dense_nodes = dense;
    z.groups = fk_sink_flatten(sink, n);
    if (stats) *stats = z;
    return FK_OK;
}
