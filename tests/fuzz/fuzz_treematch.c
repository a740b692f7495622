/* fuzz_treematch.c - fuzz harness: merger trees' ID matching and tree building (lib/tree_match, tree_build) on catalogues the input describes, against a direct count. */
#include "fuzz.h"
#include "tree_build.h"
#include "tree_ctrees.h"
#include "tree_match.h"

/*
 * The input describes three catalogues of a series, byte by byte (a byte
 * past the input's end reads as 0):
 *   per catalogue: halos (0..15), then per halo its length (0..31), then
 *   per member an ID: one byte, spread (the byte's high bit) or not over 64
 *   bits, so that both the table indexed by ID and the radix sorts are
 *   taken, and IDs repeat (within a catalogue: a particle in two halos,
 *   refused in one line; across: the members the halos share).
 * Every link matched must hold the count of a direct count over both lists
 * (each ID of the earlier in at most one halo of the later, and there once);
 * the counts add up to the shared particles; the links come sorted. The
 * series then builds a tree (skip 1): descendants later than their
 * progenitors, main progenitors among those, every halo once in the
 * depth-first order, the Consistent-Trees writer writing.
 */

typedef struct bytes {
    const uint8_t *p;
    size_t n;
} bytes;

static unsigned u8(bytes *b)
{
    if (!b->n) return 0;
    b->n--;
    return *b->p++;
}

static void describe(bytes *b, fk_treecat *c, int s)
{
    memset(c, 0, sizeof *c);
    c->time = 0.25 * (s + 1), c->hubble = 0.7, c->box = 1;
    uint64_t n = u8(b) % 16;
    c->nhalo = n;
    c->len = calloc(n + 1, sizeof *c->len), c->first = calloc(n + 1, sizeof *c->first);
    c->pid = malloc((n + 1) * sizeof *c->pid), c->mass = calloc(n + 1, sizeof *c->mass);
    c->mvir = calloc(n + 1, sizeof *c->mvir), c->vmax = calloc(n + 1, sizeof *c->vmax);
    c->pos = calloc(3 * n + 3, sizeof *c->pos), c->vel = calloc(3 * n + 3, sizeof *c->vel);
    c->ids = malloc(16 * 32 * sizeof *c->ids);
    if (!c->len || !c->first || !c->pid || !c->mass || !c->mvir || !c->vmax || !c->pos || !c->vel || !c->ids) abort();
    for (uint64_t h = 0; h < n; h++) {
        c->first[h] = c->nids;
        c->len[h] = u8(b) % 32;
        c->pid[h] = -1;
        for (uint64_t j = 0; j < c->len[h]; j++) {
            unsigned v = u8(b);
            c->ids[c->nids++] = (int64_t)((v & 0x80) ? (uint64_t)(v & 0x7f) * 0x9E3779B97F4A7C15ull : (uint64_t)v);
        }
        c->mass[h] = c->mvir[h] = (double)c->len[h];
    }
}

/* How many members of halo h of a lie in halo k of b (brute force). */
static uint64_t count_shared(const fk_treecat *a, uint64_t h, const fk_treecat *b, uint64_t k)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < a->len[h]; i++)
        for (uint64_t j = 0; j < b->len[k]; j++) n += a->ids[a->first[h] + i] == b->ids[b->first[k] + j];
    return n;
}

/* Whether an ID lies twice in c. */
static int repeats(const fk_treecat *c)
{
    for (uint64_t i = 0; i < c->nids; i++)
        for (uint64_t j = i + 1; j < c->nids; j++)
            if (c->ids[i] == c->ids[j]) return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bytes b = {data, size};
    fk_treecat c[3];
    for (int s = 0; s < 3; s++) describe(&b, &c[s], s);
    int ok = 1;
    for (int s = 0; s + 1 < 3; s++) {
        fk_treelink *l = NULL;
        uint64_t nl = 0, shared = 0;
        fk_error err = {0};
        int st = fk_mtree_match(&c[s], NULL, &c[s + 1], FK_TREE_WEIGHT_RANK, "a", "b", &l, &nl, &shared, &err);
        FUZZ_ASSERT_ERR(st, err);
        const int dup = repeats(&c[s]) || repeats(&c[s + 1]);
        FUZZ_ASSERT(dup ? st == FK_EFORMAT : st == FK_OK);
        if (st) {
            ok = 0;
            continue;
        }
        uint64_t sum = 0;
        for (uint64_t i = 0; i < nl; i++) {
            FUZZ_ASSERT(l[i].prog < c[s].nhalo && l[i].desc < c[s + 1].nhalo);
            FUZZ_ASSERT(l[i].count == count_shared(&c[s], l[i].prog, &c[s + 1], l[i].desc) && l[i].count > 0);
            FUZZ_ASSERT(l[i].score > 0 && l[i].score <= (double)l[i].count);
            if (i) FUZZ_ASSERT(l[i - 1].prog < l[i].prog || (l[i - 1].prog == l[i].prog && l[i - 1].desc < l[i].desc));
            sum += l[i].count;
        }
        FUZZ_ASSERT(sum == shared);
        free(l);
    }
    if (ok) {
        fk_mtree t;
        fk_error err = {0};
        FUZZ_ASSERT(fk_mtree_init(&t, 3, &err) == FK_OK);
        for (int s = 0; s < 3; s++) {
            FUZZ_ASSERT(fk_mtree_add(&t, s, s, &c[s], "now", "before", &err) == FK_OK);
            for (int g = 1; g <= 2 && s - g >= 0; g++) {
                uint64_t shared;
                FUZZ_ASSERT(fk_mtree_link(&t, s - g, g, FK_TREE_WEIGHT_COUNT, "a", "b", &shared, &err) == FK_OK);
            }
        }
        FUZZ_ASSERT(fk_mtree_finish(&t, &err) == FK_OK);
        const uint64_t n = t.base[3];
        uint8_t *seen = calloc(n + 1, 1);
        if (!seen) abort();
        for (uint64_t k = 0; k < n; k++) {
            const fk_treenode *x = &t.node[k];
            if (x->desc >= 0) FUZZ_ASSERT(fk_mtree_snap_of(&t, x->desc) > fk_mtree_snap_of(&t, (int64_t)k));
            if (x->mainprog >= 0) FUZZ_ASSERT(t.node[x->mainprog].desc == (int64_t)k);
            FUZZ_ASSERT(x->df >= 0 && (uint64_t)x->df < n && x->last_prog >= x->df);
            seen[t.order[k]]++;
        }
        for (uint64_t k = 0; k < n; k++) FUZZ_ASSERT(seen[k] == 1);
        free(seen);
        FILE *f = fopen("/dev/null", "w");
        if (f) {
            FUZZ_ASSERT(fk_mtree_write_ctrees(&t, f, "fuzz", "FoF groups", NULL, &err) == FK_OK);
            fclose(f);
        }
        fk_mtree_free(&t);
    } else {
        for (int s = 0; s < 3; s++) fk_treecat_free(&c[s]);
    }
    return 0;
}
