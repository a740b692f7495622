/* test_gpu_tree_match.c - the merger trees' ID matching on the GPU (fk_mtree_match_gpu) gives the CPU's links byte for byte: the table and the hash join (in passes, forced many), halos restricted, members between halos, halos out of order or in order, long runs, IDs past 2^40 and scrambled over 64 bits, small windows, duplicate IDs. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "needgpu.h"
#include "tree_match.h"

#define TESTRAND_SEED 0x6770755472656554ull
#include "testrand.h"
#include "tree_fixture.h"

static int same(const fk_treelink *x, const fk_treelink *y, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (x[i].prog != y[i].prog || x[i].desc != y[i].desc || x[i].count != y[i].count ||
            memcmp(&x[i].score, &y[i].score, sizeof x[i].score))
            return 0;
    return 1;
}

/* What the GPU did in the last compare. */
static fk_mtree_gpu_stats gs;

/* The GPU's links for a and b (only: NULL or A's halos to match) against the CPU's, byte for
 * byte; returns the path the GPU took (fk_mtree_gpu_stats: 1 the table, 2 the hash join), and
 * in *segsort whether its segmented sort ran. */
static int compare(const fk_treecat *a, const uint8_t *only, const fk_treecat *b, int weight, const char *what,
                   int *segsort)
{
    fk_treelink *lc = NULL, *lg = NULL;
    uint64_t nc = 0, ng = 0, sc = 0, sg = 0;
    fk_error err = {0};
    CHECK(fk_mtree_match(a, only, b, weight, "a", "b", &lc, &nc, &sc, &err) == FK_OK);
    int st = fk_mtree_match_gpu(a, only, b, weight, "a", "b", &lg, &ng, &sg, &err);
    CHECK_MSG(st == FK_OK, "%s: %s", what, err.msg);
    CHECK_MSG(st || (nc == ng && sc == sg && same(lc, lg, nc)),
              "%s: GPU %" PRIu64 " links, %" PRIu64 " shared; CPU %" PRIu64 ", %" PRIu64 " (weight %d, only %d)", what,
              ng, sg, nc, sc, weight, only != NULL);
    fk_gpu_mtree_stats(&gs);
    free(lc), free(lg);
    if (segsort) *segsort = gs.segsort;
    return gs.path;
}

static void check_pair(uint64_t na, uint64_t nb, uint64_t maxlen, uint64_t npool, int dense, int weight, int restrict_a)
{
    fk_treecat a, b;
    uint8_t *only = tree_fixture_pair(&a, &b, na, nb, maxlen, npool, dense, restrict_a);
    int path = compare(&a, only, &b, weight, dense ? "dense IDs" : "sparse IDs", NULL);
    /* the hash join whenever A's IDs span more than twice the members, in passes (here its table
     * and B's misses never fit in 16 bytes a member beside A's IDs and claims); nothing matched:
     * the CPU */
    CHECK_MSG(na == 0 ? path == 0 : dense || path == 2, "%s IDs, %" PRIu64 " halos: path %d", dense ? "dense" : "sparse",
              na, path);
    CHECK_MSG(path != 2 || gs.passes >= 2, "sparse IDs, %" PRIu64 " halos: %d passes", na, gs.passes);
    free(only);
    fk_treecat_free(&a), fk_treecat_free(&b);
}

/* A catalogue of nh halos, halo 0 of giant members and the others of 1..200 (a few empty),
 * over IDs offset + 1.. in order: Gadget's, a table's join. */
static void moved_cat(fk_treecat *c, uint64_t nh, uint64_t giant, int64_t offset)
{
    memset(c, 0, sizeof *c);
    c->nhalo = nh;
    c->len = malloc(nh * sizeof *c->len), c->first = malloc(nh * sizeof *c->first);
    uint64_t at = 0;
    for (uint64_t h = 0; h < nh; h++) {
        c->len[h] = h == 0 ? giant : urand() < 0.03 ? 0 : 1 + (uint64_t)(urand() * 200);
        c->first[h] = at, at += c->len[h];
    }
    c->nids = at;
    c->ids = malloc((at ? at : 1) * sizeof *c->ids);
    for (uint64_t k = 0; k < at; k++) c->ids[k] = offset + (int64_t)k + 1;
}

/* The later snapshot of a moved_cat: the same halos, a fraction swap of each halo's members
 * traded with the same member of the next halo (its shares then out of order), a fraction
 * gone of them replaced by new IDs beyond the earlier ones (members that joined). */
static void moved_later(const fk_treecat *a, fk_treecat *b, double swap, double gone)
{
    memset(b, 0, sizeof *b);
    b->nhalo = a->nhalo, b->nids = a->nids;
    b->len = malloc(a->nhalo * sizeof *b->len), b->first = malloc(a->nhalo * sizeof *b->first);
    b->ids = malloc((a->nids ? a->nids : 1) * sizeof *b->ids);
    memcpy(b->len, a->len, a->nhalo * sizeof *b->len), memcpy(b->first, a->first, a->nhalo * sizeof *b->first);
    memcpy(b->ids, a->ids, a->nids * sizeof *b->ids);
    for (uint64_t h = 0; h + 1 < b->nhalo; h++)
        for (uint64_t j = 0; j < b->len[h] && j < b->len[h + 1]; j++)
            if (urand() < swap) {
                int64_t *x = &b->ids[b->first[h] + j], *y = &b->ids[b->first[h + 1] + j], t = *x;
                *x = *y, *y = t;
            }
    int64_t next = a->nids ? a->ids[a->nids - 1] : 0;
    for (uint64_t k = 0; k < b->nids; k++)
        if (urand() < gone) b->ids[k] = ++next;
}

/* Halos of 1..200 members and a giant, IDs in order from offset: the table's path; the
 * segmented sort skipped when nothing moved, long runs in the giant, shares out of order. */
static void check_moved(uint64_t nh, uint64_t giant, int64_t offset, double swap, double gone, int weight,
                        int restrict_a)
{
    fk_treecat a, b;
    moved_cat(&a, nh, giant, offset);
    moved_later(&a, &b, swap, gone);
    uint8_t *only = NULL;
    if (restrict_a) {
        only = malloc(nh);
        for (uint64_t h = 0; h < nh; h++) only[h] = h == 0 || urand() < 0.7;
    }
    int segsort = -1;
    int path = compare(&a, only, &b, weight, "IDs in order", &segsort);
    CHECK_MSG(path == 1, "IDs in order from %" PRId64 ": path %d, not the table", offset, path);
    CHECK_MSG(segsort == (swap > 0), "swap %g: the segmented sort %s", swap, segsort ? "ran" : "skipped");
    free(only);
    fk_treecat_free(&a), fk_treecat_free(&b);
}

/* A's IDs a narrow part of B's (B's beyond A's range more than the table's check holds): the
 * table given up for the hash join, the same links. */
static void check_narrow(void)
{
    int64_t *pa = tree_fixture_pool(2000, 1), *pb = tree_fixture_pool(200000, 1);
    fk_treecat a, b;
    tree_fixture_cat(&a, 100, 40, pa, 2000);
    tree_fixture_cat(&b, 2000, 150, pb, 200000);
    int path = compare(&a, NULL, &b, FK_TREE_WEIGHT_RANK, "A's IDs narrow", NULL);
    CHECK_MSG(path == 2, "A's IDs narrow: path %d, not the hash join", path);
    free(pa), free(pb);
    fk_treecat_free(&a), fk_treecat_free(&b);
}

/* An ID in two halos of one catalogue: the CPU's message, word for word; each way round. */
static void check_dup_ids(const int64_t *early, const int64_t *late)
{
    int64_t ok[4], dup[4];
    memcpy(ok, early, sizeof ok), memcpy(dup, late, sizeof dup);
    uint64_t len[2] = {2, 2}, first[2] = {0, 2};
    fk_treecat a = {.nhalo = 2, .len = len, .first = first, .nids = 4, .ids = ok};
    fk_treecat b = {.nhalo = 2, .len = len, .first = first, .nids = 4, .ids = dup};
    for (int side = 0; side < 2; side++) {
        fk_treelink *l = NULL;
        uint64_t nl, shared;
        fk_error ec = {0}, eg = {0};
        const fk_treecat *x = side ? &b : &a, *y = side ? &a : &b;
        CHECK(fk_mtree_match(x, NULL, y, FK_TREE_WEIGHT_RANK, "early", "late", &l, &nl, &shared, &ec) == FK_EFORMAT);
        CHECK(fk_mtree_match_gpu(x, NULL, y, FK_TREE_WEIGHT_RANK, "early", "late", &l, &nl, &shared, &eg) == FK_EFORMAT);
        CHECK_MSG(!strcmp(ec.msg, eg.msg), "GPU: %s; CPU: %s", eg.msg, ec.msg);
    }
}

static void check_duplicate(int64_t scale)
{
    int64_t ok[4] = {5, 6, 7, 8}, dup[4] = {5, 6, 6, 9};
    for (int k = 0; k < 4; k++) ok[k] *= scale, dup[k] *= scale;
    check_dup_ids(ok, dup);
}

/* npool distinct IDs scrambled over all 64 bits (splitmix64 of 1..npool), the first four 0,
 * -1, INT64_MIN and INT64_MAX: the hash join's. malloc'd. */
static int64_t *scrambled_pool(uint64_t npool)
{
    static const int64_t edge[4] = {0, -1, INT64_MIN, INT64_MAX};
    int64_t *p = malloc((npool ? npool : 1) * sizeof *p);
    for (uint64_t i = 0; i < npool; i++) {
        uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        p[i] = i < 4 ? edge[i] : (int64_t)(z ^ (z >> 31));
    }
    return p;
}

/* The hash join's passes: FOFKIT_GPU_TREE_PASSES=passes (0: as the memory allows). */
static void set_passes(int passes)
{
    char v[16];
    snprintf(v, sizeof v, "%d", passes);
    if (passes)
        setenv("FOFKIT_GPU_TREE_PASSES", v, 1);
    else
        unsetenv("FOFKIT_GPU_TREE_PASSES");
}

/* Scrambled IDs in passes (0: as the memory allows, at least 2; 4096: one bucket a pass, most
 * of them empty, many with members of only A or only B): the CPU's links, byte for byte. */
static void check_hash(uint64_t na, uint64_t nb, uint64_t maxlen, uint64_t npool, int passes, int weight,
                       int restrict_a)
{
    int64_t *pool = scrambled_pool(npool);
    fk_treecat a, b;
    tree_fixture_cat(&a, na, maxlen, pool, npool);
    tree_fixture_cat(&b, nb, maxlen, pool, npool);
    uint8_t *only = NULL;
    if (restrict_a) {
        only = calloc(na, 1);
        for (uint64_t h = 0; h < na; h++) only[h] = urand() < 0.5;
    }
    /* as the memory allows: at least 2 when A has at least half B's members (16 bytes a
     * member of the larger catalogue less 12 a member of A leave less than a single pass's
     * 5.3 a member of the larger and 8 a member of B) */
    uint64_t ma = 0, mb = 0;
    for (uint64_t h = 0; h < na; h++) ma += !only || only[h] ? a.len[h] : 0;
    for (uint64_t h = 0; h < nb; h++) mb += b.len[h];
    const int least = passes ? passes : 2 * ma >= mb ? 2 : 1;
    set_passes(passes);
    int path = compare(&a, only, &b, weight, "scrambled IDs", NULL);
    set_passes(0);
    CHECK_MSG(path == 2 && (passes ? gs.passes == passes : gs.passes >= least),
              "scrambled IDs, %" PRIu64 " and %" PRIu64 " halos, %d passes asked: path %d, %d passes", na, nb, passes,
              path, gs.passes);
    free(only), free(pool);
    fk_treecat_free(&a), fk_treecat_free(&b);
}

/* One halo each, scrambled IDs: A's of pool[0..4000), B's of pool[2500..9000) (3000 shared,
 * 3500 of B's outside A), in passes. */
static void check_one_halo(int passes)
{
    int64_t *pool = scrambled_pool(9000);
    uint64_t la = 4000, lb = 6500, f = 0;
    fk_treecat a = {.nhalo = 1, .len = &la, .first = &f, .nids = 4000, .ids = pool};
    fk_treecat b = {.nhalo = 1, .len = &lb, .first = &f, .nids = 6500, .ids = pool + 2500};
    set_passes(passes);
    int path = compare(&a, NULL, &b, FK_TREE_WEIGHT_RANK, "one halo", NULL);
    set_passes(0);
    CHECK_MSG(path == 2 && (passes ? gs.passes == passes : gs.passes >= 2), "one halo: path %d, %d passes", path,
              gs.passes);
    free(pool);
}

/* Whether id is a member of one of c's halos. */
static int member_of(const fk_treecat *c, int64_t id)
{
    for (uint64_t h = 0; h < c->nhalo; h++)
        for (uint64_t k = 0; k < c->len[h]; k++)
            if (c->ids[c->first[h] + k] == id) return 1;
    return 0;
}

/* The place in c->ids of the first member (last: the last) of c's halos whose ID is (in_a 1)
 * or is not (in_a 0) a member of a (in_a -1: any). */
static uint64_t pick(const fk_treecat *c, const fk_treecat *a, int in_a, int last)
{
    for (uint64_t i = 0; i < c->nhalo; i++) {
        const uint64_t h = last ? c->nhalo - 1 - i : i;
        for (uint64_t j = 0; j < c->len[h]; j++) {
            const uint64_t q = c->first[h] + (last ? c->len[h] - 1 - j : j);
            if (in_a < 0 || member_of(a, c->ids[q]) == in_a) return q;
        }
    }
    CHECK_MSG(0, "no member to pick");
    return 0;
}

/* Scrambled IDs with one ID twice, in passes: where 0 in A, 1 in B (an ID of A's), 2 in B (an
 * ID outside A's): the GPU's hash join finds it and the CPU names it, its message word for word. */
static void check_dup_hash(int where, int passes)
{
    int64_t *pool = scrambled_pool(30000);
    fk_treecat a, b;
    tree_fixture_cat(&a, 300, 60, pool, 30000);
    tree_fixture_cat(&b, 300, 60, pool, 30000);
    if (where == 0) {
        const uint64_t q1 = pick(&a, &a, -1, 0), q2 = pick(&a, &a, -1, 1);
        a.ids[q2] = a.ids[q1];
    } else {
        const uint64_t q1 = pick(&b, &a, where == 1, 0), q2 = pick(&b, &a, -1, 1);
        CHECK(q1 != q2);
        b.ids[q2] = b.ids[q1];
    }
    fk_treelink *l = NULL;
    uint64_t nl, shared;
    fk_error ec = {0}, eg = {0};
    CHECK(fk_mtree_match(&a, NULL, &b, FK_TREE_WEIGHT_RANK, "early", "late", &l, &nl, &shared, &ec) == FK_EFORMAT);
    set_passes(passes);
    const int st = fk_mtree_match_gpu(&a, NULL, &b, FK_TREE_WEIGHT_RANK, "early", "late", &l, &nl, &shared, &eg);
    set_passes(0);
    fk_gpu_mtree_stats(&gs);
    CHECK_MSG(st == FK_EFORMAT && !strcmp(ec.msg, eg.msg), "an ID twice (%d), %d passes: GPU %d %s; CPU: %s", where,
              passes, st, eg.msg, ec.msg);
    CHECK_MSG(gs.path == 2 && (passes ? gs.passes == passes : gs.passes >= 2), "an ID twice (%d): path %d, %d passes",
              where, gs.path, gs.passes);
    free(pool);
    fk_treecat_free(&a), fk_treecat_free(&b);
}

int main(void)
{
    int status;
    if (!need_gpu(__FILE__, &status)) {
        /* without one: a clear refusal, no links */
        fk_treecat a = {0};
        fk_treelink *l = NULL;
        uint64_t nl = 0, shared = 0;
        fk_error err = {0};
        int64_t id[1] = {1};
        uint64_t len[1] = {1}, first[1] = {0};
        a = (fk_treecat){.nhalo = 1, .len = len, .first = first, .nids = 1, .ids = id};
        if (!fk_gpu_compiled() && status == 0) {
            CHECK(fk_mtree_match_gpu(&a, NULL, &a, FK_TREE_WEIGHT_RANK, "a", "b", &l, &nl, &shared, &err) == FK_EDEVICE);
            CHECK(l == NULL && nl == 0);
            CHECK_DONE();
        }
        return status;
    }
    for (int dense = 0; dense < 2; dense++) {
        check_pair(30, 40, 20, 2000, dense, FK_TREE_WEIGHT_RANK, 0);
        check_pair(30, 40, 20, 2000, dense, FK_TREE_WEIGHT_COUNT, 1);
        check_pair(3000, 2000, 400, 1000000, dense, FK_TREE_WEIGHT_RANK, 0);
        check_pair(3000, 2000, 400, 1000000, dense, FK_TREE_WEIGHT_RANK, 1);
        check_pair(100, 5, 3000, 400000, dense, FK_TREE_WEIGHT_COUNT, 0); /* long halos, several descendants */
    }
    check_pair(0, 10, 20, 100, 1, FK_TREE_WEIGHT_RANK, 0); /* nothing to match */
    check_duplicate(1);
    check_duplicate(1000000000000);
    /* twice in the later catalogue beyond the earlier's range (the table's gathered check) */
    check_dup_ids((const int64_t[]){5, 6, 7, 8}, (const int64_t[]){5, 20, 20, 9});
    check_dup_ids((const int64_t[]){5, 6, 7, 8}, (const int64_t[]){2, 6, 2, 9});
    /* IDs in order: nothing moved (no sort), shares out of order, members gone, IDs past 2^40,
     * a giant halo's long runs (rank weights summed over thousands of terms), A restricted */
    check_moved(3000, 20000, 0, 0, 0, FK_TREE_WEIGHT_RANK, 0);
    check_moved(3000, 20000, 0, 0.1, 0.05, FK_TREE_WEIGHT_RANK, 0);
    check_moved(3000, 100000, (int64_t)1 << 40, 0.3, 0.01, FK_TREE_WEIGHT_RANK, 1);
    check_moved(2000, 5000, 0, 0.1, 0.04, FK_TREE_WEIGHT_COUNT, 0);
    check_narrow();
    /* B through the bus in windows of 777 places, the pinned chunks as small */
    setenv("FOFKIT_GPU_TREE_CHUNK", "777", 1);
    check_moved(3000, 20000, 5, 0.1, 0.05, FK_TREE_WEIGHT_RANK, 1);
    check_pair(3000, 2000, 400, 1000000, 1, FK_TREE_WEIGHT_RANK, 1);
    check_pair(3000, 2000, 400, 1000000, 0, FK_TREE_WEIGHT_RANK, 0);
    unsetenv("FOFKIT_GPU_TREE_CHUNK");
    /* the hash join on IDs scrambled over 64 bits (0, -1 and the extremes among them): the passes
     * the memory allows, 2, 7, and one bucket a pass (4096, most empty); A larger, B larger, A
     * restricted, one halo, B's windows small */
    for (int k = 0; k < 4; k++) {
        const int passes = (int[]){0, 2, 7, 4096}[k];
        if (passes < 4096) /* each pass streams all of B: one bucket a pass on fewer */
            check_hash(3000, 2000, 400, 1000000, passes, FK_TREE_WEIGHT_RANK, 0);
        else
            check_hash(300, 200, 400, 100000, passes, FK_TREE_WEIGHT_RANK, 0);
        check_hash(300, 3000, 200, 100000, passes, FK_TREE_WEIGHT_COUNT, 1);
        check_hash(30, 40, 20, 2000, passes, FK_TREE_WEIGHT_RANK, 1);
        check_one_halo(passes);
        for (int where = 0; where < 3; where++) check_dup_hash(where, passes);
    }
    setenv("FOFKIT_GPU_TREE_CHUNK", "777", 1);
    check_hash(3000, 3000, 400, 400000, 0, FK_TREE_WEIGHT_RANK, 0);
    check_hash(3000, 3000, 400, 400000, 3, FK_TREE_WEIGHT_RANK, 1);
    unsetenv("FOFKIT_GPU_TREE_CHUNK");
    /* an ID twice beyond the table's range, scrambled: each way round (A's, B's within A's) */
    check_dup_ids((const int64_t[]){-1, INT64_MIN, 7, 0}, (const int64_t[]){-1, 7, 7, INT64_MAX});
    check_dup_ids((const int64_t[]){-1, INT64_MIN, 7, 0}, (const int64_t[]){INT64_MAX, 9, 9, -1});
    CHECK_DONE();
}
