/* groups.c - resolving sink chains, checking original indices, numbering groups, GRPS records. */
#include "groups.h"

#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "kv.h"

enum { UNSEEN = 0, ON_PATH = 1, RESOLVED = 2 };

/* The serial walk: each particle is walked at most twice; names the first
 * particle met again on the path from the lowest particle whose chain
 * enters a cycle. Values are known to be < n. */
static int resolve_walk(uint32_t *sink, uint64_t n, const char *name, fk_error *err)
{
    unsigned char *state = calloc(n ? n : 1, 1);
    if (!state) return fk_fail(err, FK_ENOMEM, "out of memory resolving %" PRIu64 " sink chains", n);
    for (uint64_t i = 0; i < n; i++) {
        if (state[i] == RESOLVED) continue;
        /* Walk to the first particle that is a sink or already resolved,
         * marking the path; meeting the path again is a cycle. */
        uint64_t j = i;
        uint32_t root;
        for (;;) {
            if (state[j] == RESOLVED) {
                root = sink[j];
                break;
            }
            if (state[j] == ON_PATH) {
                free(state);
                return fk_fail(err, FK_EFORMAT,
                               "%s: SINK chunk: particle %" PRIu64 " lies on a cycle of links (no sink ends its chain)",
                               name, j);
            }
            if (sink[j] == j) {
                state[j] = RESOLVED;
                root = (uint32_t)j;
                break;
            }
            state[j] = ON_PATH;
            j = sink[j];
        }
        /* Point the path at its sink. */
        for (j = i; state[j] == ON_PATH;) {
            uint64_t next = sink[j];
            sink[j] = root;
            state[j] = RESOLVED;
            j = next;
        }
    }
    free(state);
    return FK_OK;
}

/* Pointer jumping on all cores: p[i] = p[p[i]] until no value changes.
 * Every value stays on i's chain and only moves towards its end, so the
 * result is the walk's whatever the threads' interleaving (the loads and
 * stores are relaxed atomics: a racing read sees an older or newer point of
 * the same chain). A chain's remaining length at least halves each round,
 * so a valid array settles within log2(n) + 2 rounds; an array still
 * changing then holds a cycle. Returns 1 when settled, 0 when not (a
 * cycle; one may also settle, see the caller). */
static int resolve_jump(uint32_t *p, uint64_t n)
{
    int rounds = 2;
    for (uint64_t m = n; m > 1; m >>= 1) rounds++;
    for (int round = 0; round < rounds; round++) {
        int changed = 0;
#pragma omp parallel for schedule(static) reduction(| : changed)
        for (uint64_t i = 0; i < n; i++) {
            uint32_t s = __atomic_load_n(&p[i], __ATOMIC_RELAXED);
            uint32_t ss = __atomic_load_n(&p[s], __ATOMIC_RELAXED);
            if (ss != s) {
                __atomic_store_n(&p[i], ss, __ATOMIC_RELAXED);
                changed = 1;
            }
        }
        if (!changed) return 1;
    }
    return 0;
}

int fk_groups_resolve(uint32_t *sink, uint64_t n, const char *name, fk_error *err)
{
    if (n > UINT32_MAX)
        return fk_fail(err, FK_EUNSUP, "%s: SINK chunk: %" PRIu64 " particles do not fit 32-bit indices", name, n);
    /* Values out of range first, so that the message names the lowest bad
     * particle whatever the chains look like; in the same parallel read,
     * whether the array is resolved already (every value a sink), as
     * foflink's canonical arrays are. */
    uint64_t bad = n;
    int deep = 0;
#pragma omp parallel for schedule(static) reduction(min : bad) reduction(| : deep)
    for (uint64_t i = 0; i < n; i++) {
        uint32_t s = sink[i];
        if (s >= n) {
            if (i < bad) bad = i;
        } else {
            deep |= sink[s] != s;
        }
    }
    if (bad < n)
        return fk_fail(err, FK_EFORMAT,
                       "%s: SINK chunk: particle %" PRIu64 " links to %" PRIu32 ", beyond the last particle (%" PRIu64
                       ")",
                       name, bad, sink[bad], n - 1);
    if (!deep) return FK_OK;
    /* Other arrays jump on a copy, so that a cycle is reported by the walk
     * on the untouched chains, naming the same particle whatever the
     * number of threads; without memory for the copy, the walk does it all. */
    uint32_t *p = malloc(n * sizeof *p);
    if (!p) return resolve_walk(sink, n, name, err);
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) p[i] = sink[i];
    int settled = resolve_jump(p, n);
    /* Jumping round a cycle of even length makes particles their own
     * sinks: every end found must be a sink of the chains as given. */
    if (settled) {
        int fake = 0;
#pragma omp parallel for schedule(static) reduction(| : fake)
        for (uint64_t i = 0; i < n; i++) fake |= sink[p[i]] != p[i];
        settled = !fake;
    }
    if (settled) {
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < n; i++) sink[i] = p[i];
    }
    free(p);
    return settled ? FK_OK : resolve_walk(sink, n, name, err);
}

int fk_groups_check_ids(const uint64_t *ids, uint64_t n, uint64_t nsource, const char *name, fk_error *err)
{
    uint64_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (uint64_t i = 0; i < n; i++)
        if (ids[i] >= nsource && i < bad) bad = i;
    if (bad < n)
        return fk_fail(err, FK_EFORMAT,
                       "%s: ID chunk: particle %" PRIu64 " has original index %" PRIu64
                       ", beyond the %" PRIu64 " particles of the source",
                       name, bad, ids[bad], nsource);
    /* Every index's bit set on all cores (atomically: two threads may hold
     * the same index); only when some bit was set twice is the first repeat
     * searched for in order, so that the message names the same particle
     * for every number of threads. */
    const uint64_t words = nsource / 64 + 1;
    uint64_t *bits = fk_big_alloc(words * sizeof *bits);
    if (!bits) return fk_fail(err, FK_ENOMEM, "out of memory checking %" PRIu64 " particle IDs", n);
    int twice = 0;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (uint64_t w = 0; w < words; w++) bits[w] = 0;
#pragma omp for schedule(static) reduction(| : twice)
        for (uint64_t i = 0; i < n; i++) {
            uint64_t bit = UINT64_C(1) << (ids[i] % 64);
            twice |= (__atomic_fetch_or(&bits[ids[i] / 64], bit, __ATOMIC_RELAXED) & bit) != 0;
        }
    }
    free(bits);
    if (!twice) return FK_OK;
    unsigned char *seen = calloc(nsource / 8 + 1, 1);
    if (!seen) return fk_fail(err, FK_ENOMEM, "out of memory checking %" PRIu64 " particle IDs", n);
    int st = FK_OK;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = ids[i];
        unsigned char bit = (unsigned char)(1u << (id % 8));
        if (seen[id / 8] & bit) {
            st = fk_fail(err, FK_EFORMAT,
                         "%s: ID chunk: particle %" PRIu64 " repeats original index %" PRIu64 " (IDs must be distinct)",
                         name, i, id);
            break;
        }
        seen[id / 8] |= bit;
    }
    free(seen);
    return st;
}

typedef struct kept {
    uint32_t root, size;
    uint64_t minid;
} kept;

static int by_size_then_minid(const void *pa, const void *pb)
{
    const kept *a = pa, *b = pb;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    return (a->minid > b->minid) - (a->minid < b->minid);
}

/* Pieces below this many groups are sorted by qsort in one task. */
#define SORT_LEAF 16384

/* Sorts g[0..m) by size then minid on all cores: a merge sort of OpenMP
 * tasks, tmp (m entries) its scratch. minid is distinct between groups (the
 * IDs are), so the order is total and the result independent of the
 * threads. Call inside a parallel region's single. */
static void sort_kept(kept *g, kept *tmp, uint64_t m)
{
    if (m <= SORT_LEAF) {
        qsort(g, m, sizeof *g, by_size_then_minid);
        return;
    }
    uint64_t h = m / 2;
#pragma omp task
    sort_kept(g, tmp, h);
#pragma omp task
    sort_kept(g + h, tmp + h, m - h);
#pragma omp taskwait
    uint64_t a = 0, b = h, o = 0;
    while (a < h && b < m) tmp[o++] = by_size_then_minid(&g[b], &g[a]) < 0 ? g[b++] : g[a++];
    while (a < h) tmp[o++] = g[a++];
    while (b < m) tmp[o++] = g[b++];
    memcpy(g, tmp, m * sizeof *g);
}

static void atomic_min_u64(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

#define NOT_KEPT UINT32_MAX

int fk_groups_number(const uint32_t *root, const uint64_t *ids, uint64_t n, uint64_t nsource, uint64_t minsize,
                     uint32_t *gid, fk_groups *info, fk_error *err)
{
    memset(info, 0, sizeof *info);
    if (minsize < 1) return fk_fail(err, FK_EINVAL, "minimum group size must be at least 1");
    if (n > UINT32_MAX) return fk_fail(err, FK_EUNSUP, "%" PRIu64 " particles do not fit 32-bit group indices", n);
    if (!ids && nsource != n)
        return fk_fail(err, FK_EINVAL, "without IDs the source must be the stream (%" PRIu64 " != %" PRIu64 ")",
                       nsource, n);
    /* slot[r]: first the size of the group whose sink is r, then its index
     * among the kept groups (NOT_KEPT for dropped ones); number[k] the
     * number of kept group k once they are sorted. Huge pages: the scatter
     * into gid and the look-ups in slot go anywhere. */
    uint32_t *slot = fk_big_alloc((n ? n : 1) * sizeof *slot), *number = NULL;
    int nt = omp_get_max_threads();
    uint64_t *start = calloc((size_t)nt + 1, sizeof *start);
    if (!slot || !start) {
        free(slot);
        free(start);
        return fk_fail(err, FK_ENOMEM, "out of memory numbering the groups of %" PRIu64 " particles", n);
    }
    kept *g = NULL, *tmp = NULL;
    uint64_t nkept = 0, nfound = 0, ngrouped = 0;
    int nomem = 0;
#pragma omp parallel num_threads(nt) reduction(+ : nfound, ngrouped)
    {
        /* Sizes: members of a group mostly come in runs (tree order), so a
         * thread adds a run's length at once, not one atomic per particle. */
        uint32_t prev = 0, run = 0;
#pragma omp for schedule(static)
        for (uint64_t i = 0; i < n; i++) slot[i] = 0;
#pragma omp for schedule(static)
        for (uint64_t i = 0; i < n; i++) {
            if (root[i] != prev || !run) {
                if (run) __atomic_fetch_add(&slot[prev], run, __ATOMIC_RELAXED);
                prev = root[i];
                run = 0;
            }
            run++;
        }
        if (run) __atomic_fetch_add(&slot[prev], run, __ATOMIC_RELAXED);
#pragma omp barrier
        /* Kept groups in increasing sink order: each thread counts its own
         * range of sinks, a prefix sum gives it its first index. */
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        uint64_t lo = n * (uint64_t)t / (uint64_t)nth, hi = n * (uint64_t)(t + 1) / (uint64_t)nth, mine = 0;
        for (uint64_t r = lo; r < hi; r++) {
            if (root[r] != r) continue;
            nfound++;
            if (slot[r] >= minsize) mine++;
        }
        start[t + 1] = mine;
#pragma omp barrier
#pragma omp single
        {
            for (int u = 0; u < nth; u++) start[u + 1] += start[u];
            nkept = start[nth];
            g = malloc(nkept ? nkept * sizeof *g : 1);
            tmp = malloc(nkept ? nkept * sizeof *tmp : 1);
            number = malloc(nkept ? nkept * sizeof *number : 1);
            nomem = !g || !tmp || !number;
        }
        if (!nomem) {
            uint64_t k = start[t];
            for (uint64_t r = lo; r < hi; r++) {
                if (root[r] != r) continue;
                if (slot[r] >= minsize) {
                    g[k] = (kept){(uint32_t)r, slot[r], UINT64_MAX};
                    ngrouped += slot[r];
                    slot[r] = (uint32_t)k++;
                } else {
                    slot[r] = NOT_KEPT;
                }
            }
#pragma omp barrier
            /* The lowest original index of each kept group, a run at a time. */
            uint32_t s = NOT_KEPT;
            uint64_t lowest = UINT64_MAX;
#pragma omp for schedule(static)
            for (uint64_t i = 0; i < n; i++) {
                uint32_t si = slot[root[i]];
                uint64_t id = ids ? ids[i] : i;
                if (si != s) {
                    if (s != NOT_KEPT) atomic_min_u64(&g[s].minid, lowest);
                    s = si;
                    lowest = UINT64_MAX;
                }
                if (id < lowest) lowest = id;
            }
            if (s != NOT_KEPT) atomic_min_u64(&g[s].minid, lowest);
#pragma omp barrier
#pragma omp single
            sort_kept(g, tmp, nkept);
#pragma omp for schedule(static)
            for (uint64_t q = 0; q < nkept; q++) number[slot[g[q].root]] = (uint32_t)(q + 1);
            /* distinct IDs, as many as the source's rows, write every row */
            if (ids && n < nsource) {
#pragma omp for schedule(static)
                for (uint64_t r = 0; r < nsource; r++) gid[r] = 0;
            }
#pragma omp for schedule(static)
            for (uint64_t i = 0; i < n; i++) {
                uint32_t k = slot[root[i]];
                gid[ids ? ids[i] : i] = k == NOT_KEPT ? 0 : number[k];
            }
        }
    }
    free(start);
    free(tmp);
    free(number);
    if (nomem) {
        free(g);
        free(slot);
        return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " groups", nkept);
    }
    info->n = n;
    info->nsource = nsource;
    info->minsize = minsize;
    info->nfound = nfound;
    info->ngroups = nkept;
    info->ngrouped = ngrouped;
    info->largest = nkept ? g[0].size : 0;
    free(g);
    free(slot);
    return FK_OK;
}

int fk_groups_parents(const uint32_t *gid_up, const uint32_t *gid, uint64_t nsource, uint64_t ngroups,
                      uint32_t *parent, uint32_t level, const char *name, fk_error *err)
{
    if (level < 1) return fk_fail(err, FK_EINVAL, "level 0 has no parent groups");
    memset(parent, 0, (ngroups + 1) * sizeof *parent);
    /* parent[g] is 0 until a member of g is seen (valid parents are >= 1);
     * an earlier member to name in a message is searched for only on error. */
    for (uint64_t r = 0; r < nsource; r++) {
        uint32_t g = gid[r], p = gid_up[r];
        if (g == 0) continue;
        if (g > ngroups)
            return fk_fail(err, FK_EFORMAT, "%s: level %" PRIu32 ": particle %" PRIu64 " is in group %" PRIu32
                           " of %" PRIu64, name, level, r, g, ngroups);
        if (p == 0)
            return fk_fail(err, FK_EFORMAT,
                           "%s: group %" PRIu32 " of level %" PRIu32 " has particle %" PRIu64
                           ", which is in no kept group of level %" PRIu32 " (the levels do not nest)",
                           name, g, level, r, level - 1);
        if (parent[g] == 0) {
            parent[g] = p;
        } else if (parent[g] != p) {
            uint64_t q = 0;
            while (!(gid[q] == g && gid_up[q] == parent[g])) q++;
            return fk_fail(err, FK_EFORMAT,
                           "%s: group %" PRIu32 " of level %" PRIu32 " has particles %" PRIu64 " and %" PRIu64
                           " in groups %" PRIu32 " and %" PRIu32 " of level %" PRIu32 " (the levels do not nest)",
                           name, g, level, q, r, parent[g], p, level - 1);
        }
    }
    for (uint64_t g = 1; g <= ngroups; g++)
        if (parent[g] == 0)
            return fk_fail(err, FK_EFORMAT, "%s: group %" PRIu64 " of level %" PRIu32 " has no member", name, g,
                           level);
    return FK_OK;
}

int fk_groups_format(const fk_groups *info, char **text, fk_error *err)
{
    fk_kvbuf b;
    fk_kv_init(&b);
    fk_kv_u64(&b, "level", info->level);
    fk_kv_u64(&b, "ngroups", info->ngroups);
    fk_kv_u64(&b, "minsize", info->minsize);
    fk_kv_u64(&b, "ngrouped", info->ngrouped);
    fk_kv_u64(&b, "nfound", info->nfound);
    fk_kv_u64(&b, "largest", info->largest);
    fk_kv_u64(&b, "n", info->n);
    fk_kv_u64(&b, "nsource", info->nsource);
    fk_kv_str(&b, "order", FK_GROUPS_ORDER);
    return fk_kv_finish(&b, text, err);
}

int fk_groups_parse(const char *text, fk_groups *info, const char *name, fk_error *err)
{
    char what[300];
    snprintf(what, sizeof what, "%s: GRPS chunk", name);
    memset(info, 0, sizeof *info);
    int st = fk_kv_get_u64(text, "ngroups", &info->ngroups, what, err);
    if (!st) st = fk_kv_get_u64(text, "minsize", &info->minsize, what, err);
    static const char *opt_key[] = {"ngrouped", "nfound", "largest", "n", "nsource"};
    uint64_t *opt_val[] = {&info->ngrouped, &info->nfound, &info->largest, &info->n, &info->nsource};
    for (int i = 0; i < 5 && !st; i++)
        if (fk_kv_has(text, opt_key[i])) st = fk_kv_get_u64(text, opt_key[i], opt_val[i], what, err);
    if (!st && info->ngroups > UINT32_MAX)
        st = fk_fail(err, FK_EFORMAT, "%s: %" PRIu64 " groups do not fit the 32-bit group ids", what, info->ngroups);
    return st;
}
