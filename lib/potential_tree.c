/* potential_tree.c - Barnes-Hut potentials of a group's members: a median-split binary tree of quadrupoles, walked a leaf of targets at a time. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "potential.h"

/* Tree nodes in depth-first order: a node's first child follows it, and
 * next is the node after its subtree, so a walk needs no stack. */
typedef struct node {
    double c[3];     /* centre of mass (of the members' mean position when the mass is 0) */
    double mass;
    double q[6];     /* second moments about c: xx yy zz xy xz yz                        */
    double b;        /* radius about c of a sphere holding every member                 */
    uint32_t start;  /* members [start, start + count), tree order                      */
    uint32_t count;
    uint32_t next;   /* the node after this subtree                                     */
    uint32_t leaf;   /* 1 for a leaf                                                    */
} node;

/* A member while the tree is built. */
typedef struct body {
    double p[3], m;
    uint32_t index;
} body;

/* What the walk reads of a node: binary32, positions relative to the root's
 * centre of mass, 32 bytes (the walk over the 104-byte nodes spent a fifth
 * of the time on memory). */
typedef struct wnode {
    float c[3], b;
    uint32_t next, start, count, leaf; /* leaf: 1 for a leaf, | 2 for a node of mass 0 */
} wnode;

/* A node's multipole as the lists take it: mass, then the second moments
 * pre-scaled (1.5 q_xx, 1.5 q_yy, 1.5 q_zz, 3 q_xy, 3 q_xz, 3 q_yz) and half
 * the trace. */
typedef struct mpole {
    float m, q[6], tr;
} mpole;

typedef struct tree {
    uint32_t nnodes, ngroups;
    int massless; /* some member has mass 0 */
    node *nodes;
    wnode *w;
    mpole *mp;
    uint32_t *groups; /* the target groups: nodes of at most FK_POT_GROUP members whose parent has more */
    body *b;          /* the members in tree order */
    double *x, *y, *z, *m;
    float *fx, *fy, *fz, *fm; /* the same in binary32, relative to the root's centre of mass */
} tree;

/* Nodes of a subtree of count members: leaves of at most FK_POT_LEAF, the
 * others split in halves (the smaller half first). */
static uint32_t subtree_nodes(uint32_t count)
{
    return count <= FK_POT_LEAF ? 1 : 1 + subtree_nodes(count / 2) + subtree_nodes(count - count / 2);
}

/* Puts the k-th smallest of b[0..n) on axis a at b[k], the smaller ones
 * before it, the others after: Hoare partitions about a median of three,
 * deterministic, O(n) expected. */
static void select_kth(body *b, uint32_t n, uint32_t k, int a)
{
    int64_t lo = 0, hi = (int64_t)n - 1, kk = k;
    while (hi > lo) {
        double x = b[lo].p[a], y = b[lo + (hi - lo) / 2].p[a], z = b[hi].p[a];
        double pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (b[i].p[a] < pivot) i++;
            while (b[j].p[a] > pivot) j--;
            if (i <= j) {
                body t = b[i];
                b[i++] = b[j];
                b[j--] = t;
            }
        }
        /* now b[lo..j] <= pivot, b[i..hi] >= pivot, and between them pivots */
        if (kk <= j)
            hi = j;
        else if (kk >= i)
            lo = i;
        else
            return;
    }
}

/* Plain comparisons: fmin and fmax are library calls here (no NaN can
 * reach them: the members' coordinates are finite). */
static inline double lesser(double a, double b)
{
    return b < a ? b : a;
}

static inline double greater(double a, double b)
{
    return b > a ? b : a;
}

typedef struct box {
    double lo[3], hi[3];
} box;

/* Largest distance from c to a corner of the box. */
static double corner_distance(const double c[3], const box *bx)
{
    double s = 0;
    for (int k = 0; k < 3; k++) {
        double d = greater(fabs(c[k] - bx->lo[k]), fabs(bx->hi[k] - c[k]));
        s += d * d;
    }
    return sqrt(s);
}

/* A leaf's moments from its members. */
static void leaf_moments(node *nd, const body *b, box *bx)
{
    double M = 0, s[3] = {0, 0, 0}, u[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) bx->lo[k] = bx->hi[k] = b[0].p[k];
    for (uint32_t i = 0; i < nd->count; i++) {
        M += b[i].m;
        for (int k = 0; k < 3; k++) {
            s[k] += b[i].m * b[i].p[k];
            u[k] += b[i].p[k];
            bx->lo[k] = lesser(bx->lo[k], b[i].p[k]);
            bx->hi[k] = greater(bx->hi[k], b[i].p[k]);
        }
    }
    for (int k = 0; k < 3; k++) nd->c[k] = M > 0 ? s[k] / M : u[k] / nd->count;
    nd->mass = M;
    memset(nd->q, 0, sizeof nd->q);
    double r2max = 0;
    for (uint32_t i = 0; i < nd->count; i++) {
        double d[3] = {b[i].p[0] - nd->c[0], b[i].p[1] - nd->c[1], b[i].p[2] - nd->c[2]};
        double m = b[i].m;
        nd->q[0] += m * d[0] * d[0], nd->q[1] += m * d[1] * d[1], nd->q[2] += m * d[2] * d[2];
        nd->q[3] += m * d[0] * d[1], nd->q[4] += m * d[0] * d[2], nd->q[5] += m * d[1] * d[2];
        r2max = greater(r2max, d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    }
    nd->b = sqrt(r2max);
}

/* An internal node's moments from its children's (parallel-axis theorem). */
static void merge_moments(node *nd, const node *l, const node *r, const box *bl, const box *br, box *bx)
{
    double M = l->mass + r->mass;
    for (int k = 0; k < 3; k++) {
        nd->c[k] = M > 0 ? (l->mass * l->c[k] + r->mass * r->c[k]) / M
                         : (l->count * l->c[k] + r->count * r->c[k]) / (l->count + r->count);
        bx->lo[k] = lesser(bl->lo[k], br->lo[k]);
        bx->hi[k] = greater(bl->hi[k], br->hi[k]);
    }
    nd->mass = M;
    double reach = 0;
    for (int h = 0; h < 6; h++) nd->q[h] = l->q[h] + r->q[h];
    for (int s = 0; s < 2; s++) {
        const node *ch = s ? r : l;
        double d[3] = {ch->c[0] - nd->c[0], ch->c[1] - nd->c[1], ch->c[2] - nd->c[2]}, m = ch->mass;
        nd->q[0] += m * d[0] * d[0], nd->q[1] += m * d[1] * d[1], nd->q[2] += m * d[2] * d[2];
        nd->q[3] += m * d[0] * d[1], nd->q[4] += m * d[0] * d[2], nd->q[5] += m * d[1] * d[2];
        reach = greater(reach, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + ch->b);
    }
    nd->b = lesser(reach, corner_distance(nd->c, bx));
}

/* Builds the subtree of members b[start, start + count) as node at (and
 * the nodes after it); fills its bounding box. Subtrees of many members are
 * built as OpenMP tasks: node numbers come from subtree_nodes, so the tree
 * is the same for any number of threads. */
static void build(tree *t, uint32_t at, uint32_t start, uint32_t count, box *bx)
{
    node *nd = &t->nodes[at];
    nd->start = start;
    nd->count = count;
    nd->next = at + subtree_nodes(count);
    body *b = t->b + start;
    if (count <= FK_POT_LEAF) {
        nd->leaf = 1;
        leaf_moments(nd, b, bx);
        return;
    }
    nd->leaf = 0;
    box all;
    for (int k = 0; k < 3; k++) all.lo[k] = all.hi[k] = b[0].p[k];
    for (uint32_t i = 1; i < count; i++)
        for (int k = 0; k < 3; k++) {
            all.lo[k] = lesser(all.lo[k], b[i].p[k]);
            all.hi[k] = greater(all.hi[k], b[i].p[k]);
        }
    int a = 0;
    for (int k = 1; k < 3; k++)
        if (all.hi[k] - all.lo[k] > all.hi[a] - all.lo[a]) a = k;
    uint32_t half = count / 2;
    select_kth(b, count, half, a);
    uint32_t left = at + 1, right = at + 1 + subtree_nodes(half);
    box bl, br;
#pragma omp task shared(bl) if (count > 65536)
    build(t, left, start, half, &bl);
#pragma omp task shared(br) if (count > 65536)
    build(t, right, start + half, count - half, &br);
#pragma omp taskwait
    merge_moments(nd, &t->nodes[left], &t->nodes[right], &bl, &br, bx);
}

static void tree_free(tree *t)
{
    free(t->nodes), free(t->w), free(t->mp), free(t->groups), free(t->b);
    free(t->x), free(t->y), free(t->z), free(t->m);
    free(t->fx), free(t->fy), free(t->fz), free(t->fm);
}

static int tree_build(tree *t, const fk_pot_members *g, fk_error *err)
{
    memset(t, 0, sizeof *t);
    const uint32_t n = (uint32_t)g->n;
    t->nnodes = subtree_nodes(n);
    t->nodes = malloc(t->nnodes * sizeof *t->nodes);
    t->groups = malloc(t->nnodes * sizeof *t->groups);
    t->b = malloc(n * sizeof *t->b);
    t->x = malloc(n * sizeof *t->x), t->y = malloc(n * sizeof *t->y);
    t->z = malloc(n * sizeof *t->z), t->m = malloc(n * sizeof *t->m);
    t->fx = malloc(n * sizeof *t->fx), t->fy = malloc(n * sizeof *t->fy);
    t->fz = malloc(n * sizeof *t->fz), t->fm = malloc(n * sizeof *t->fm);
    t->w = malloc(t->nnodes * sizeof *t->w), t->mp = malloc(t->nnodes * sizeof *t->mp);
    if (!t->nodes || !t->groups || !t->b || !t->x || !t->y || !t->z || !t->m || !t->fx || !t->fy || !t->fz || !t->fm ||
        !t->w || !t->mp) {
        tree_free(t);
        return fk_fail(err, FK_ENOMEM, "out of memory for the potential tree of %" PRIu32 " members", n);
    }
    for (uint32_t i = 0; i < n; i++) t->b[i] = (body){{g->x[i], g->y[i], g->z[i]}, g->m[i], i};
    box bx;
#pragma omp parallel if (n > 65536)
#pragma omp single
    build(t, 0, 0, n, &bx);
    const double *o = t->nodes[0].c;
    for (uint32_t i = 0; i < n; i++) {
        t->x[i] = t->b[i].p[0], t->y[i] = t->b[i].p[1], t->z[i] = t->b[i].p[2], t->m[i] = t->b[i].m;
        t->fx[i] = (float)(t->x[i] - o[0]), t->fy[i] = (float)(t->y[i] - o[1]);
        t->fz[i] = (float)(t->z[i] - o[2]), t->fm[i] = (float)t->m[i];
        t->massless |= t->m[i] == 0;
    }
    for (uint32_t k = 0; k < t->nnodes; k++) {
        const node *nd = &t->nodes[k];
        t->w[k] = (wnode){{(float)(nd->c[0] - o[0]), (float)(nd->c[1] - o[1]), (float)(nd->c[2] - o[2])},
                          (float)nd->b * (1 + 1e-6f), /* rounded up: still holds every member */
                          nd->next, nd->start, nd->count, nd->leaf | (nd->mass == 0 ? 2u : 0u)};
        t->mp[k] = (mpole){(float)nd->mass,
                           {(float)(1.5 * nd->q[0]), (float)(1.5 * nd->q[1]), (float)(1.5 * nd->q[2]),
                            (float)(3 * nd->q[3]), (float)(3 * nd->q[4]), (float)(3 * nd->q[5])},
                           (float)(0.5 * (nd->q[0] + nd->q[1] + nd->q[2]))};
    }
    for (uint32_t k = 0; k < t->nnodes; k = t->nodes[k].count <= FK_POT_GROUP ? t->nodes[k].next : k + 1)
        if (t->nodes[k].count <= FK_POT_GROUP) t->groups[t->ngroups++] = k;
    return FK_OK;
}

/* What a group of targets interacts with: nodes (multipoles) and members
 * (exact terms), structure of arrays in binary32, positions relative to
 * the root's centre of mass. Single precision is ample here: the terms are
 * good to 1e-7 and their sums (a few thousand) to about 1e-6 relative,
 * against tree errors of 1e-4; it halves the cost of a term, and every
 * potential the program reports is an exact double sum anyway. The node
 * moments are stored pre-scaled: 1.5 q_xx.., 3 q_xy.., tr / 2. */
typedef struct list {
    size_t nn, np, capn, capp;
    float *cx, *cy, *cz, *cm, *qxx, *qyy, *qzz, *qxy, *qxz, *qyz, *tr; /* nodes   */
    float *px, *py, *pz, *pm;                                        /* members */
} list;

#define LIST_ARRAYS(l)                                                                                       \
    {&(l)->cx, &(l)->cy, &(l)->cz, &(l)->cm, &(l)->qxx, &(l)->qyy, &(l)->qzz, &(l)->qxy, &(l)->qxz, &(l)->qyz, \
     &(l)->tr, &(l)->px, &(l)->py, &(l)->pz, &(l)->pm}

static void list_free(list *l)
{
    float **a[] = LIST_ARRAYS(l);
    for (size_t k = 0; k < sizeof a / sizeof a[0]; k++) free(*a[k]), *a[k] = NULL;
}

/* Grows the arrays (the 11 node ones, or the 4 member ones) to hold need
 * entries; FK_OK or FK_ENOMEM. */
static int list_grow(list *l, int members, size_t need)
{
    size_t *cap = members ? &l->capp : &l->capn;
    if (need <= *cap) return FK_OK;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    float **a[] = LIST_ARRAYS(l);
    for (size_t k = members ? 11 : 0; k < (members ? 15u : 11u); k++) {
        float *p = realloc(*a[k], c * sizeof *p);
        if (!p) return FK_ENOMEM;
        *a[k] = p;
    }
    *cap = c;
    return FK_OK;
}

/* Appends members [start, start + count) to the member list; FK_OK or
 * FK_ENOMEM. */
static int add_members(list *l, const tree *t, uint32_t start, uint32_t count)
{
    if (list_grow(l, 1, l->np + count)) return FK_ENOMEM;
    memcpy(l->px + l->np, t->fx + start, count * sizeof(float));
    memcpy(l->py + l->np, t->fy + start, count * sizeof(float));
    memcpy(l->pz + l->np, t->fz + start, count * sizeof(float));
    memcpy(l->pm + l->np, t->fm + start, count * sizeof(float));
    l->np += count;
    return FK_OK;
}

/* add_members for an opened leaf: only its members of mass, whose terms
 * are not 0, when the tree has members of none. */
static int add_leaf(list *l, const tree *t, uint32_t start, uint32_t count)
{
    if (!t->massless) return add_members(l, t, start, count);
    if (list_grow(l, 1, l->np + count)) return FK_ENOMEM;
    size_t k = l->np;
    for (uint32_t i = start; i < start + count; i++)
        if (t->m[i] != 0) l->px[k] = t->fx[i], l->py[k] = t->fy[i], l->pz[k] = t->fz[i], l->pm[k] = t->fm[i], k++;
    l->np = k;
    return FK_OK;
}

/* Walks the tree for target group T: lists what its members interact with,
 * its own members first (each target leaves itself out by its place there).
 * FK_OK, or FK_ENOMEM when the lists could not grow. */
static int walk(const tree *t, uint32_t T, float inv_theta, list *l)
{
    const wnode *tg = &t->w[T];
    l->nn = l->np = 0;
    if (add_members(l, t, tg->start, tg->count)) return FK_ENOMEM;
    for (uint32_t k = 0; k < t->nnodes;) {
        const wnode *nd = &t->w[k];
        if (k == T || (nd->leaf & 2)) { /* itself (listed above), or no mass: no term */
            k = nd->next;
            continue;
        }
        if (k < T && T < nd->next) { /* an ancestor: never accepted (theta <= 1 ensures it too) */
            k++;
            continue;
        }
        float dx = nd->c[0] - tg->c[0], dy = nd->c[1] - tg->c[1], dz = nd->c[2] - tg->c[2];
        float d2 = dx * dx + dy * dy + dz * dz, reach = tg->b + nd->b * inv_theta;
        if (d2 > reach * reach) {
            if (l->nn == l->capn && list_grow(l, 0, l->nn + 1)) return FK_ENOMEM;
            size_t i = l->nn++;
            const mpole *mp = &t->mp[k];
            l->cx[i] = nd->c[0], l->cy[i] = nd->c[1], l->cz[i] = nd->c[2], l->cm[i] = mp->m;
            l->qxx[i] = mp->q[0], l->qyy[i] = mp->q[1], l->qzz[i] = mp->q[2];
            l->qxy[i] = mp->q[3], l->qxz[i] = mp->q[4], l->qyz[i] = mp->q[5], l->tr[i] = mp->tr;
            k = nd->next;
        } else if (nd->leaf & 1) {
            if (add_leaf(l, t, nd->start, nd->count)) return FK_ENOMEM;
            k = nd->next;
        } else {
            k++;
        }
    }
    return FK_OK;
}

/* 1 / sqrt(q), q > 0, to binary32 precision: the guess from the exponent
 * bits, then three Newton steps (3.4e-2, 1.8e-3, 4.7e-6, rounding). */
static inline float rsqrtf_(float q)
{
    uint32_t b;
    memcpy(&b, &q, sizeof b);
    b = UINT32_C(0x5f375a86) - (b >> 1);
    float y, h = 0.5f * q;
    memcpy(&y, &b, sizeof y);
    y = y * (1.5f - h * y * y);
    y = y * (1.5f - h * y * y);
    y = y * (1.5f - h * y * y);
    return y;
}

/* The sum over the list of the softened monopole and quadrupole terms and
 * of the exact member terms at member self of the list, positive (phi = -G
 * times it); the caller zeroes self's mass in the list, which leaves it out
 * (a select in the loop would cost a third of its speed). g(r) = 1/sqrt(r^2 + e2) about a node's
 * centre: M g + 1/2 Q_ij d_i d_j g, with d_i d_j g = 3 d_i d_j / D^5 -
 * delta_ij / D^3 (Q the second moments, so the dipole term vanishes). */
__attribute__((target_clones("avx512f", "avx2", "default"))) static double
list_sum(const list *restrict l, size_t self, float e2)
{
    const float px = l->px[self], py = l->py[self], pz = l->pz[self];
    const float *restrict cx = l->cx, *restrict cy = l->cy, *restrict cz = l->cz, *restrict cm = l->cm;
    const float *restrict qxx = l->qxx, *restrict qyy = l->qyy, *restrict qzz = l->qzz;
    const float *restrict qxy = l->qxy, *restrict qxz = l->qxz, *restrict qyz = l->qyz, *restrict tr = l->tr;
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (size_t i = 0; i < l->nn; i++) {
        float dx = px - cx[i], dy = py - cy[i], dz = pz - cz[i];
        float w = rsqrtf_((dx * dx + dy * dy) + (dz * dz + e2));
        float w2 = w * w, w3 = w * w2;
        float dqd = (qxx[i] * dx * dx + qyy[i] * dy * dy + qzz[i] * dz * dz) +
                    (qxy[i] * dx * dy + qxz[i] * dx * dz + qyz[i] * dy * dz);
        s += cm[i] * w + (dqd * w2 - tr[i]) * w3;
    }
    const float *restrict x = l->px, *restrict y = l->py, *restrict z = l->pz, *restrict m = l->pm;
    float u = 0;
#pragma omp simd reduction(+ : u)
    for (size_t j = 0; j < l->np; j++) {
        float dx = x[j] - px, dy = y[j] - py, dz = z[j] - pz;
        u += m[j] * rsqrtf_((dx * dx + dy * dy) + (dz * dz + e2)); /* e2 > 0: finite for self too */
    }
    return (double)s + (double)u;
}

int fk_pot_tree(const fk_pot_members *g, const fk_pot_params *p, double *phi, fk_pot_tree_stats *stats, fk_error *err)
{
    int st = fk_pot_check(p, err);
    if (st) return st;
    if (g->n >= UINT32_MAX) return fk_fail(err, FK_EINVAL, "%zu members: the tree takes fewer than 2^32", g->n);
    if (g->n == 0) return FK_OK;
    tree t;
    if ((st = tree_build(&t, g, err)) != FK_OK) return st;
    const double e2 = p->eps * p->eps, theta = p->theta, G = p->G;
    uint64_t node_terms = 0, particle_terms = 0;
    int failed = 0;
#pragma omp parallel reduction(+ : node_terms, particle_terms)
    {
        list l = {0};
#pragma omp for schedule(dynamic, 1)
        for (uint32_t k = 0; k < t.ngroups; k++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (stop) continue;
            const node *tg = &t.nodes[t.groups[k]];
            if (walk(&t, t.groups[k], (float)(1 / theta), &l)) {
#pragma omp atomic write
                failed = 1;
                continue;
            }
            for (uint32_t i = 0; i < tg->count; i++) {
                float mi = l.pm[i];
                l.pm[i] = 0;
                phi[t.b[tg->start + i].index] = -G * list_sum(&l, i, (float)e2);
                l.pm[i] = mi;
            }
            node_terms += (uint64_t)l.nn * tg->count;
            particle_terms += ((uint64_t)l.np - 1) * tg->count;
        }
        list_free(&l);
    }
    if (stats) *stats = (fk_pot_tree_stats){t.nnodes, t.ngroups, node_terms, particle_terms};
    tree_free(&t);
    if (failed) return fk_fail(err, FK_ENOMEM, "out of memory for the interaction lists of %zu members", g->n);
    return FK_OK;
}
