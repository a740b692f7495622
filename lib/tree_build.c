/* tree_build.c - merger trees from the links of consecutive snapshots: descendants, main progenitors by most massive history, roots, depth-first order. */
#define _GNU_SOURCE /* qsort_r: the comparisons take the tree, no global */
#include "tree_build.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Consistent-Trees' major merger: a progenitor of at least 0.3 of the main one's mass. */
#define MAJOR_RATIO 0.3

int fk_mtree_init(fk_mtree *t, int nsnap, fk_error *err)
{
    memset(t, 0, sizeof *t);
    t->nsnap = nsnap;
    t->cat = calloc((size_t)nsnap, sizeof *t->cat);
    t->snapnum = calloc((size_t)nsnap, sizeof *t->snapnum);
    t->base = calloc((size_t)nsnap + 1, sizeof *t->base);
    if (!t->cat || !t->snapnum || !t->base) return fk_fail(err, FK_ENOMEM, "out of memory for %d snapshots", nsnap);
    return FK_OK;
}

void fk_mtree_free(fk_mtree *t)
{
    for (int s = 0; s < t->nsnap && t->cat; s++) fk_treecat_free(&t->cat[s]);
    for (int k = 0; k < t->nsteps; k++) free(t->steps[k].links);
    free(t->cat), free(t->snapnum), free(t->base), free(t->node), free(t->order), free(t->tree_start), free(t->steps);
    memset(t, 0, sizeof *t);
}

int fk_mtree_snap_of(const fk_mtree *t, int64_t g)
{
    int lo = 0, hi = t->nsnap - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (t->base[mid] <= (uint64_t)g)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int fk_mtree_add(fk_mtree *t, int s, int snapnum, fk_treecat *c, const char *name, const char *prev_name, fk_error *err)
{
    if (s > 0 && !(c->time > t->cat[s - 1].time))
        return fk_fail(err, FK_EFORMAT, "%s: its time a = %g is not later than %s's, a = %g (give the catalogues in "
                       "time order, earliest first)", name, c->time, prev_name, t->cat[s - 1].time);
    t->cat[s] = *c;
    memset(c, 0, sizeof *c);
    t->snapnum[s] = snapnum;
    t->base[s + 1] = t->base[s] + t->cat[s].nhalo;
    fk_treenode *n = realloc(t->node, (t->base[s + 1] ? t->base[s + 1] : 1) * sizeof *n);
    if (!n) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " halos", t->base[s + 1]);
    t->node = n;
    for (uint64_t g = t->base[s]; g < t->base[s + 1]; g++)
        t->node[g] = (fk_treenode){.desc = -1, .mainprog = -1, .root = -1, .df = -1, .bf = -1, .next_coprog = -1,
                                   .last_prog = -1, .last_mainleaf = -1};
    return FK_OK;
}

/* Whether link l beats the best so far (score, then count, then the lower row). */
static int better(const fk_treelink *l, const fk_treelink *best)
{
    if (!best) return 1;
    if (l->score != best->score) return l->score > best->score;
    if (l->count != best->count) return l->count > best->count;
    return l->desc < best->desc;
}

int fk_mtree_link(fk_mtree *t, int s, int g, int weight, const char *name_s, const char *name_g, uint64_t *shared,
                 fk_error *err)
{
    const fk_treecat *a = &t->cat[s], *b = &t->cat[s + g];
    uint8_t *only = NULL;
    if (g > 1) {
        if (!(only = malloc(a->nhalo ? a->nhalo : 1))) return fk_fail(err, FK_ENOMEM, "out of memory");
        uint64_t left = 0;
        for (uint64_t h = 0; h < a->nhalo; h++) left += only[h] = t->node[t->base[s] + h].desc < 0;
        if (!left) {
            free(only);
            *shared = 0;
            return FK_OK;
        }
    }
    fk_treelink *l;
    uint64_t nl;
    const fk_mtree_matcher m = t->match ? t->match : t->gpu ? fk_mtree_match_gpu : fk_mtree_match;
    int st = m(a, only, b, weight, name_s, name_g, &l, &nl, shared, err);
    free(only);
    if (st) return st;
    fk_treestep *steps = realloc(t->steps, (size_t)(t->nsteps + 1) * sizeof *steps);
    if (!steps) {
        free(l);
        return fk_fail(err, FK_ENOMEM, "out of memory for the links");
    }
    t->steps = steps;
    t->steps[t->nsteps++] = (fk_treestep){s, s + g, l, nl};
    /* the links come by prog: each prog's best among its run */
    for (uint64_t i = 0; i < nl;) {
        const fk_treelink *best = NULL;
        uint64_t j = i;
        for (; j < nl && l[j].prog == l[i].prog; j++)
            if (better(&l[j], best)) best = &l[j];
        fk_treenode *n = &t->node[t->base[s] + l[i].prog];
        if (n->desc < 0) {
            n->desc = (int64_t)(t->base[s + g] + best->desc);
            n->desc_count = best->count;
            n->desc_score = best->score;
        }
        i = j;
    }
    return FK_OK;
}

void fk_mtree_drop_ids(fk_mtree *t, int s)
{
    free(t->cat[s].ids);
    t->cat[s].ids = NULL;
}

static double mass_of(const fk_mtree *t, int64_t g)
{
    int s = fk_mtree_snap_of(t, g);
    return t->cat[s].mass[(uint64_t)g - t->base[s]];
}

/* Progenitors in the order of the depth-first walk: the main one, then by history, largest first. */
static int by_history(const void *x, const void *y, void *ctx)
{
    const fk_mtree *sort_tree = ctx;
    const fk_treenode *n = sort_tree->node;
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    int64_t da = n[a].desc;
    int am = n[da].mainprog == a, bm = n[da].mainprog == b;
    if (am != bm) return bm - am;
    if (n[a].hist != n[b].hist) return n[a].hist < n[b].hist ? 1 : -1;
    return a < b ? -1 : a > b;
}

/* Roots: the last snapshot first, then by snapshot (later first), then by node. */
static int by_root(const void *x, const void *y, void *ctx)
{
    const fk_mtree *sort_tree = ctx;
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    int sa = fk_mtree_snap_of(sort_tree, a), sb = fk_mtree_snap_of(sort_tree, b);
    if (sa != sb) return sb - sa;
    return a < b ? -1 : a > b;
}

/* Breadth-first within a tree: by snapshot, later first, then depth-first. */
static int by_level(const void *x, const void *y, void *ctx)
{
    const fk_mtree *sort_tree = ctx;
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    int sa = fk_mtree_snap_of(sort_tree, a), sb = fk_mtree_snap_of(sort_tree, b);
    if (sa != sb) return sb - sa;
    return sort_tree->node[a].df < sort_tree->node[b].df ? -1 : 1;
}

int fk_mtree_finish(fk_mtree *t, fk_error *err)
{
    const uint64_t n = t->base[t->nsnap];
    fk_treenode *nd = t->node;
    int64_t *pstart = calloc(n + 1, sizeof *pstart), *plist = malloc((n ? n : 1) * sizeof *plist);
    int64_t *roots = malloc((n ? n : 1) * sizeof *roots), *stack = malloc((n ? n : 1) * sizeof *stack);
    uint8_t *major = calloc(n ? n : 1, 1);
    free(t->order), free(t->tree_start);
    t->order = malloc((n ? n : 1) * sizeof *t->order);
    t->tree_start = malloc((n + 1) * sizeof *t->tree_start);
    int st = FK_OK;
    if (!pstart || !plist || !roots || !stack || !major || !t->order || !t->tree_start) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the trees of %" PRIu64 " halos", n);
        goto done;
    }
    /* Main progenitors by history: nodes come in time order, so a node's
     * progenitors are all done when it is reached. */
    for (uint64_t g = 0; g < n; g++) {
        fk_treenode *x = &nd[g];
        x->hist = mass_of(t, (int64_t)g) + (x->mainprog >= 0 ? nd[x->mainprog].hist : 0);
        if (x->desc < 0) continue;
        fk_treenode *d = &nd[x->desc];
        d->nprog++;
        int64_t m = d->mainprog;
        if (m < 0 || x->hist > nd[m].hist ||
            (x->hist == nd[m].hist && mass_of(t, (int64_t)g) > mass_of(t, m)))
            d->mainprog = (int64_t)g;
    }
    for (uint64_t g = 0; g < n; g++) {
        int64_t d = nd[g].desc;
        if (d < 0 || nd[d].mainprog == (int64_t)g) continue;
        double mm = mass_of(t, nd[d].mainprog), mg = mass_of(t, (int64_t)g);
        double lo = mm < mg ? mm : mg, hi = mm < mg ? mg : mm;
        if (hi > 0 && lo >= MAJOR_RATIO * hi) major[d] = 1;
    }
    for (uint64_t g = 0; g < n; g++) {
        int64_t m = nd[g].mainprog;
        nd[g].last_mm = major[g] ? t->cat[fk_mtree_snap_of(t, (int64_t)g)].time : m >= 0 ? nd[m].last_mm : 0;
    }
    for (uint64_t g = n; g-- > 0;) nd[g].root = nd[g].desc < 0 ? (int64_t)g : nd[nd[g].desc].root;
    /* progenitor lists (CSR), each in walking order */
    for (uint64_t g = 0; g < n; g++)
        if (nd[g].desc >= 0) pstart[nd[g].desc + 1]++;
    for (uint64_t g = 0; g < n; g++) pstart[g + 1] += pstart[g];
    {
        int64_t *at = stack;
        for (uint64_t g = 0; g < n; g++) at[g] = pstart[g];
        for (uint64_t g = 0; g < n; g++)
            if (nd[g].desc >= 0) plist[at[nd[g].desc]++] = (int64_t)g;
    }
    for (uint64_t g = 0; g < n; g++)
        if (pstart[g + 1] - pstart[g] > 1) qsort_r(plist + pstart[g], (size_t)(pstart[g + 1] - pstart[g]), sizeof *plist, by_history, t);
    uint64_t nr = 0;
    for (uint64_t g = 0; g < n; g++)
        if (nd[g].desc < 0) roots[nr++] = (int64_t)g;
    qsort_r(roots, nr, sizeof *roots, by_root, t);
    /* depth-first walk of each tree */
    int64_t df = 0;
    for (uint64_t r = 0; r < nr; r++) {
        t->tree_start[r] = df;
        int64_t sp = 0;
        stack[sp++] = roots[r];
        while (sp) {
            int64_t g = stack[--sp];
            nd[g].df = df;
            t->order[df++] = g;
            for (int64_t k = pstart[g + 1]; k-- > pstart[g];) stack[sp++] = plist[k];
        }
    }
    t->tree_start[nr] = df;
    t->ntrees = nr;
    /* subtree ends (children have higher depth-first ids: reverse order), siblings, main leaves */
    for (int64_t k = df; k-- > 0;) {
        int64_t g = t->order[k];
        int64_t last = nd[g].df;
        for (int64_t p = pstart[g]; p < pstart[g + 1]; p++)
            if (nd[plist[p]].last_prog > last) last = nd[plist[p]].last_prog;
        nd[g].last_prog = last;
        nd[g].last_mainleaf = nd[g].mainprog >= 0 ? nd[nd[g].mainprog].last_mainleaf : nd[g].df;
        for (int64_t p = pstart[g]; p < pstart[g + 1]; p++)
            nd[plist[p]].next_coprog = p + 1 < pstart[g + 1] ? nd[plist[p + 1]].df : -1;
    }
    /* breadth-first: within each tree by snapshot, later first */
    for (uint64_t r = 0; r < nr; r++) {
        int64_t a = t->tree_start[r], b = t->tree_start[r + 1];
        memcpy(stack, t->order + a, (size_t)(b - a) * sizeof *stack);
        qsort_r(stack, (size_t)(b - a), sizeof *stack, by_level, t);
        for (int64_t k = 0; k < b - a; k++) nd[stack[k]].bf = a + k;
    }
done:
    free(pstart), free(plist), free(roots), free(stack), free(major);
    return st;
}
