/* kdtree.c - balanced kd-tree over particles: CPU build by median selection, bounds, checks, stream I/O. */
#include "kdtree.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "kv.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* min and max without libm's NaN handling (coordinates are finite here): inlined. */
#define MINF(a, b) ((a) < (b) ? (a) : (b))
#define MAXF(a, b) ((a) > (b) ? (a) : (b))

/* Below this many particles a subtree is built by the thread that reached it. */
#define TASK_MIN 65536

uint32_t fk_tree_depth(uint64_t n, uint32_t leafsize)
{
    uint32_t d = 0;
    while (((n + (UINT64_C(1) << d) - 1) >> d) > leafsize) d++;
    return d;
}

typedef struct item {
    float x[3];
    uint32_t i;
} item;
_Static_assert(sizeof(item) == 16, "an item is one 16-byte vector (extent)");

static inline void swap_items(item *a, item *b)
{
    item t = *a;
    *a = *b;
    *b = t;
}

/* a[lo..hi) partitioned: those whose coordinate is below p first (when
 * le, not above p), in place, without a branch on the data (a compare of
 * random coordinates is mispredicted half the time): each element is moved
 * to the boundary and the boundary advances by the comparison's value
 * (Lomuto's partition as A. Alexandrescu wrote it branch-free). Returns the
 * boundary. */
static uint64_t partition(item *a, uint64_t lo, uint64_t hi, int axis, float p, int le)
{
    uint64_t first = lo;
    for (uint64_t r = lo; r < hi; r++) {
        const item x = a[r];
        const float c = x.x[axis];
        const uint64_t below = le ? c <= p : c < p;
        a[r] = a[first];
        a[first] = x;
        first += below;
    }
    return first;
}

/* A pivot for selecting rank kth of a[lo..hi): the coordinate of a sorted
 * sample's element a little past kth's share, towards the nearer end, so
 * that kth most likely falls in the smaller part (the sample's rank error
 * is about sqrt(f (1 - f) m) of m; two of those past). */
static float pivot(const item *a, uint64_t lo, uint64_t hi, uint64_t kth, int axis)
{
    enum { M = 63 };
    float s[M];
    const uint64_t n = hi - lo;
    const int m = n >= 65536 ? M : n >= 1024 ? 15 : 3;
    for (int j = 0; j < m; j++) s[j] = a[lo + (uint64_t)j * n / (uint64_t)m + n / (2 * (uint64_t)m)].x[axis];
    for (int i = 1; i < m; i++) {
        const float v = s[i];
        int j = i;
        for (; j > 0 && s[j - 1] > v; j--) s[j] = s[j - 1];
        s[j] = v;
    }
    const double f = (double)(kth - lo) / (double)n, off = m > 3 ? 2 * sqrt(f * (1 - f) * m) + 1 : 0;
    double r = f * (m - 1) + (f <= 0.5 ? off : -off);
    r = r < 0 ? 0 : r > m - 1 ? m - 1 : r;
    return s[(int)(r + 0.5)];
}

/* Rearranges a[0..n) so that a[kth] is the element that a sort along axis
 * would put there, with no greater element before it and no smaller after.
 * Quickselect on sampled pivots and branch-free partitions: about 1.6 n
 * element moves for a median. A pivot that is the least of its range
 * (runs of equal keys) splits off its equals instead: every pass shrinks
 * the range, so duplicated positions stay O(n) a pass. */
static void select_nth(item *a, uint64_t n, uint64_t kth, int axis)
{
    uint64_t lo = 0, hi = n;
    while (hi - lo > 16) {
        const float p = pivot(a, lo, hi, kth, axis);
        uint64_t m = partition(a, lo, hi, axis, p, 0);
        if (m == lo) { /* nothing below p: p is the least; its equals go first */
            m = partition(a, lo, hi, axis, p, 1);
            if (kth < m || m == lo) return; /* a[lo..m) all equal p (none: p is NaN, no order to make) */
        }
        if (kth < m)
            hi = m;
        else
            lo = m;
    }
    for (uint64_t i = lo + 1; i < hi; i++)
        for (uint64_t j = i; j > lo && a[j - 1].x[axis] > a[j].x[axis]; j--) swap_items(&a[j - 1], &a[j]);
}

/* The bounds of a[s..e) (empty: +inf, -inf): an item's 16 bytes are one SSE
 * vector (its index the fourth lane, ignored), two at a time. */
static void extent(const item *a, uint64_t s, uint64_t e, float lo[3], float hi[3])
{
    if (e <= s) {
        for (int k = 0; k < 3; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
        return;
    }
#ifdef __SSE2__
    __m128 l0 = _mm_loadu_ps((const float *)(a + s)), h0 = l0, l1 = l0, h1 = l0;
    uint64_t i = s + 1;
    for (; i + 1 < e; i += 2) {
        const __m128 u = _mm_loadu_ps((const float *)(a + i)), v = _mm_loadu_ps((const float *)(a + i + 1));
        l0 = _mm_min_ps(l0, u), h0 = _mm_max_ps(h0, u);
        l1 = _mm_min_ps(l1, v), h1 = _mm_max_ps(h1, v);
    }
    if (i < e) {
        const __m128 u = _mm_loadu_ps((const float *)(a + i));
        l0 = _mm_min_ps(l0, u), h0 = _mm_max_ps(h0, u);
    }
    float bl[4], bh[4];
    _mm_storeu_ps(bl, _mm_min_ps(l0, l1));
    _mm_storeu_ps(bh, _mm_max_ps(h0, h1));
    for (int k = 0; k < 3; k++) lo[k] = bl[k], hi[k] = bh[k];
#else
    for (int k = 0; k < 3; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
    for (uint64_t i = s; i < e; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = MINF(lo[k], a[i].x[k]);
            hi[k] = MAXF(hi[k], a[i].x[k]);
        }
#endif
}

static void build(item *a, fk_layout l, uint64_t node, uint32_t level, uint32_t depth)
{
    if (level == depth) return;
    uint64_t s, e, m, tmp;
    fk_tree_range(l, node, &s, &e);
    fk_tree_range(l, 2 * node + 1, &tmp, &m);
    float lo[3], hi[3];
    extent(a, s, e, lo, hi);
    int axis = 0;
    for (int k = 1; k < 3; k++)
        if (hi[k] - lo[k] > hi[axis] - lo[axis]) axis = k;
    if (m > s && m < e) select_nth(a + s, e - s, m - s, axis); /* else one child is an empty leaf */
    if (e - s >= TASK_MIN) {
        #pragma omp task
        build(a, l, 2 * node + 1, level + 1, depth);
        #pragma omp task
        build(a, l, 2 * node + 2, level + 1, depth);
        #pragma omp taskwait
    } else {
        build(a, l, 2 * node + 1, level + 1, depth);
        build(a, l, 2 * node + 2, level + 1, depth);
    }
}

int fk_tree_alloc(fk_tree *t, uint64_t n, uint32_t leafsize, const char *builder, fk_error *err)
{
    memset(t, 0, sizeof *t);
    if (leafsize < 2) return fk_fail(err, FK_EINVAL, "leaf size %u is below 2", leafsize);
    if (n >= (UINT64_C(1) << 32))
        return fk_fail(err, FK_EUNSUP, "%" PRIu64 " particles: trees hold fewer than 2^32", n);
    t->n = n;
    t->leafsize = leafsize;
    t->unit = leafsize;
    t->depth = n ? fk_tree_depth(n, leafsize) : 0;
    t->nnodes = n ? (UINT64_C(2) << t->depth) - 1 : 0;
    snprintf(t->builder, sizeof t->builder, "%s", builder);
    t->box = fk_big_alloc(t->nnodes * 6 * sizeof(float));
    if (!t->box) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " tree nodes", t->nnodes);
    return FK_OK;
}

int fk_tree_build_cpu(float *pos, uint64_t n, uint32_t leafsize, fk_tree *t, uint32_t **perm, fk_error *err)
{
    *perm = NULL;
    int st = fk_tree_alloc(t, n, leafsize, "cpu-median", err);
    if (st) return st;
    item *a = malloc(n ? n * sizeof *a : 1);
    uint32_t *p = malloc(n ? n * sizeof *p : 1);
    if (!a || !p) {
        free(a);
        free(p);
        fk_tree_free(t);
        return fk_fail(err, FK_ENOMEM, "out of memory building a tree of %" PRIu64 " particles", n);
    }
    #pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) {
        memcpy(a[i].x, pos + 3 * i, sizeof a[i].x);
        a[i].i = (uint32_t)i;
    }
    if (n) {
        #pragma omp parallel
        #pragma omp single
        build(a, fk_tree_layout(t), 0, 0, t->depth);
    }
    #pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) {
        memcpy(pos + 3 * i, a[i].x, sizeof a[i].x);
        p[i] = a[i].i;
    }
    free(a);
    fk_tree_bounds(t, pos);
    *perm = p;
    return FK_OK;
}

void fk_tree_bounds(fk_tree *t, const float *pos)
{
    if (t->nnodes == 0) return;
    const uint64_t first = (UINT64_C(1) << t->depth) - 1;
    const fk_layout l = fk_tree_layout(t);
    #pragma omp parallel for schedule(static)
    for (uint64_t i = first; i < t->nnodes; i++) {
        uint64_t s, e;
        fk_tree_range(l, i, &s, &e);
        float *b = t->box + 6 * i; /* an empty leaf's stays +inf, -inf */
        for (int k = 0; k < 3; k++) {
            b[k] = INFINITY;
            b[k + 3] = -INFINITY;
        }
        for (uint64_t j = s; j < e; j++)
            for (int k = 0; k < 3; k++) {
                b[k] = MINF(b[k], pos[3 * j + k]);
                b[k + 3] = MAXF(b[k + 3], pos[3 * j + k]);
            }
    }
    for (int d = (int)t->depth - 1; d >= 0; d--) {
        const uint64_t lo = (UINT64_C(1) << d) - 1, hi = (UINT64_C(2) << d) - 1;
        #pragma omp parallel for schedule(static)
        for (uint64_t i = lo; i < hi; i++) {
            const float *l = t->box + 6 * (2 * i + 1), *r = t->box + 6 * (2 * i + 2);
            float *b = t->box + 6 * i;
            for (int k = 0; k < 3; k++) {
                b[k] = MINF(l[k], r[k]);
                b[k + 3] = MAXF(l[k + 3], r[k + 3]);
            }
        }
    }
}

int fk_tree_check(const fk_tree *t, const float *pos, const char *name, fk_error *err)
{
    if (t->leafsize < 2 || t->n >= (UINT64_C(1) << 32) ||
        (t->n && (t->depth > FK_TREE_MAX_DEPTH || t->depth != fk_tree_depth(t->n, t->leafsize))) ||
        t->nnodes != (t->n ? (UINT64_C(2) << t->depth) - 1 : 0) || (t->unit != 1 && t->unit != t->leafsize))
        return fk_fail(err, FK_EFORMAT,
                       "%s: TREE chunk is inconsistent (n %" PRIu64 ", leaf size %u, unit %u, depth %u, %" PRIu64
                       " nodes)",
                       name, t->n, t->leafsize, t->unit, t->depth, t->nnodes);
    if (t->nnodes == 0) return FK_OK;
    const uint64_t first = (UINT64_C(1) << t->depth) - 1;
    const fk_layout l = fk_tree_layout(t);
    uint64_t bad = UINT64_MAX;
    #pragma omp parallel for schedule(static) reduction(min : bad)
    for (uint64_t i = 0; i < t->nnodes; i++) {
        const float *b = t->box + 6 * i;
        int ok = 1;
        uint64_t s = 0, e = 1;
        if (i >= first) fk_tree_range(l, i, &s, &e);
        if (s == e) /* an empty leaf: the empty box */
            for (int k = 0; k < 3; k++) ok &= b[k] == INFINITY && b[k + 3] == -INFINITY;
        else
            for (int k = 0; k < 3; k++) ok &= isfinite(b[k]) && isfinite(b[k + 3]) && b[k] <= b[k + 3];
        if (ok && i < first) {
            for (int c = 1; c <= 2; c++) {
                const float *cb = t->box + 6 * (2 * i + c);
                for (int k = 0; k < 3; k++) ok &= cb[k] >= b[k] && cb[k + 3] <= b[k + 3];
            }
        } else if (ok) {
            for (uint64_t j = s; j < e; j++)
                for (int k = 0; k < 3; k++) ok &= pos[3 * j + k] >= b[k] && pos[3 * j + k] <= b[k + 3];
        }
        if (!ok && i < bad) bad = i;
    }
    uint64_t bs = 0, be = 1;
    if (bad != UINT64_MAX && bad >= first) fk_tree_range(l, bad, &bs, &be);
    if (bs == be)
        return fk_fail(err, FK_EFORMAT, "%s: tree node %" PRIu64 " is an empty leaf without the empty box", name, bad);
    if (bad != UINT64_MAX)
        return fk_fail(err, FK_EFORMAT, "%s: tree node %" PRIu64 " does not contain its %s", name, bad,
                       bad < first ? "children" : "particles (the stream is not in this tree's order)");
    return FK_OK;
}

int fk_tree_format(const fk_tree *t, char **text, fk_error *err)
{
    fk_kvbuf b;
    fk_kv_init(&b);
    fk_kv_u64(&b, "n", t->n);
    fk_kv_u64(&b, "leafsize", t->leafsize);
    if (t->unit > 1) fk_kv_u64(&b, "unit", t->unit);
    fk_kv_u64(&b, "depth", t->depth);
    fk_kv_u64(&b, "nodes", t->nnodes);
    fk_kv_str(&b, "builder", t->builder);
    return fk_kv_finish(&b, text, err);
}

int fk_tree_parse(const char *text, fk_tree *t, const char *name, fk_error *err)
{
    char what[300];
    snprintf(what, sizeof what, "%s: TREE chunk", name);
    memset(t, 0, sizeof *t);
    uint64_t ls = 0, depth = 0;
    int st = fk_kv_get_u64(text, "n", &t->n, what, err);
    if (!st) st = fk_kv_get_u64(text, "leafsize", &ls, what, err);
    if (!st) st = fk_kv_get_u64(text, "depth", &depth, what, err);
    if (!st) st = fk_kv_get_u64(text, "nodes", &t->nnodes, what, err);
    if (st) return st;
    if (ls < 2 || ls > UINT32_MAX || depth > FK_TREE_MAX_DEPTH)
        return fk_fail(err, FK_EFORMAT, "%s: leaf size %" PRIu64 " or depth %" PRIu64 " out of range", what, ls, depth);
    t->leafsize = (uint32_t)ls;
    t->depth = (uint32_t)depth;
    uint64_t unit = 1;
    if (fk_kv_has(text, "unit") && (st = fk_kv_get_u64(text, "unit", &unit, what, err))) return st;
    if (unit != 1 && unit != ls)
        return fk_fail(err, FK_EFORMAT, "%s: unit %" PRIu64 " is neither 1 nor the leaf size %" PRIu64, what, unit, ls);
    t->unit = (uint32_t)unit;
    if (fk_kv_has(text, "builder")) fk_kv_get_str(text, "builder", t->builder, sizeof t->builder, what, NULL);
    return FK_OK;
}

int fk_tree_give(fk_writer *w, fk_tree *t, fk_error *err)
{
    char *text;
    int st = fk_tree_format(t, &text, err);
    if (st) return st;
    fk_chunk c;
    fk_chunk_init(&c, "TREE", "|u1", FK_CF_TEXT, strlen(text), 1);
    if ((st = fk_writer_give(w, &c, text, err))) return st;
    fk_chunk_init(&c, "TBOX", "<f4", 0, t->nnodes, 6);
    void *box = t->box;
    t->box = NULL;
    return fk_writer_give(w, &c, box, err);
}

void fk_tree_free(fk_tree *t)
{
    free(t->box);
    t->box = NULL;
}
