/* test_tree_match.c - the merger trees' ID matching (lib/tree_match) against a brute-force reference: the radix sort, every pair's shared count and score, the restriction to some halos, the duplicate-ID error. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tree_match.h"

#define TESTRAND_SEED 0x7265655472656554ull
#include "testrand.h"
#include "tree_fixture.h"

static int by_key(const void *x, const void *y)
{
    const fk_treerec *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->a < b->a ? -1 : a->a > b->a; /* a holds the input position: stability */
}

/* fk_mtree_sort against qsort on n records of keys below range (duplicates when small). */
static void check_sort(uint64_t n, uint64_t range)
{
    fk_treerec *r = malloc(n * sizeof *r), *ref = malloc(n * sizeof *ref), *tmp = malloc(n * sizeof *tmp);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)(urand() * 18446744073709551616.0);
        r[i] = (fk_treerec){range ? k % range : k, (uint32_t)i, 7};
    }
    memcpy(ref, r, n * sizeof *r);
    qsort(ref, n, sizeof *ref, by_key);
    fk_mtree_sort(r, tmp, n);
    CHECK_MSG(!memcmp(r, ref, n * sizeof *r), "sort of %" PRIu64 " keys below %" PRIu64, n, range);
    free(r), free(ref), free(tmp);
}

/* The reference: a dense matrix of counts and scores by the definition. */
static void check_match(uint64_t na, uint64_t nb, uint64_t maxlen, uint64_t npool, int weight, int restrict_a, int dense)
{
    /* sparse IDs take the radix sorts, dense ones (a span within 4 times the members) the table */
    fk_treecat a, b;
    uint8_t *only = tree_fixture_pair(&a, &b, na, nb, maxlen, npool, dense, restrict_a);
    uint64_t *cnt = calloc(na * nb, sizeof *cnt);
    double *score = calloc(na * nb, sizeof *score);
    uint64_t shared_ref = 0;
    /* brute force through an ID -> (halo, rank) table of a, sorted, searched */
    fk_treerec *ta = malloc((a.nids + 1) * sizeof *ta);
    uint64_t k = 0;
    for (uint64_t h = 0; h < na; h++)
        for (uint64_t j = 0; j < a.len[h]; j++) ta[k++] = (fk_treerec){(uint64_t)a.ids[a.first[h] + j], (uint32_t)h, (uint32_t)(j + 1)};
    qsort(ta, k, sizeof *ta, by_key);
    for (uint64_t h = 0; h < nb; h++)
        for (uint64_t j = 0; j < b.len[h]; j++) {
            const fk_treerec key = {(uint64_t)b.ids[b.first[h] + j], 0, 0};
            uint64_t lo = 0, hi = k;
            while (lo < hi) {
                uint64_t m = (lo + hi) / 2;
                if (ta[m].key < key.key) lo = m + 1; else hi = m;
            }
            const fk_treerec *f = lo < k && ta[lo].key == key.key ? &ta[lo] : NULL;
            if (!f || (only && !only[f->a])) continue;
            cnt[f->a * nb + h]++;
            score[f->a * nb + h] += weight == FK_TREE_WEIGHT_COUNT ? 1.0 : 1.0 / f->b;
            shared_ref++;
        }
    fk_treelink *l;
    uint64_t nl, shared;
    fk_error err = {0};
    CHECK(fk_mtree_match(&a, only, &b, weight, "a", "b", &l, &nl, &shared, &err) == FK_OK);
    CHECK_MSG(shared == shared_ref, "%" PRIu64 " shared, reference %" PRIu64, shared, shared_ref);
    uint64_t nref = 0, bad = 0;
    for (uint64_t i = 0; i < na * nb; i++) nref += cnt[i] > 0;
    CHECK_MSG(nl == nref, "%" PRIu64 " links, reference %" PRIu64, nl, nref);
    for (uint64_t i = 0; i < nl; i++) {
        uint64_t c = (uint64_t)l[i].prog * nb + l[i].desc;
        if (i && !(l[i - 1].prog < l[i].prog || (l[i - 1].prog == l[i].prog && l[i - 1].desc < l[i].desc))) bad++;
        if (l[i].count != cnt[c] || fabs(l[i].score - score[c]) > 1e-9 * score[c]) bad++;
    }
    CHECK_MSG(bad == 0, "%" PRIu64 " links differ from the reference or come out of order (%" PRIu64 " halos, weight %d, only %d)",
              bad, na, weight, restrict_a);
    free(l), free(ta), free(cnt), free(score), free(only);
    fk_treecat_free(&a), fk_treecat_free(&b);
}

/* A particle in two halos of one catalogue, A's or B's, with IDs near each other (the table)
 * and far apart (the sorts): the same message. */
static void check_duplicate(int64_t scale)
{
    int64_t ok[4] = {5, 6, 7, 8}, dup[4] = {5, 6, 6, 9}, far[4] = {50, 60, 70, 80};
    for (int k = 0; k < 4; k++) ok[k] *= scale, dup[k] *= scale, far[k] *= scale;
    uint64_t len[2] = {2, 2}, first[2] = {0, 2};
    fk_treecat a = {.nhalo = 2, .len = len, .first = first, .nids = 4, .ids = ok};
    fk_treecat b = {.nhalo = 2, .len = len, .first = first, .nids = 4, .ids = dup};
    fk_treelink *l;
    uint64_t nl, shared;
    fk_error err = {0};
    char want[128];
    snprintf(want, sizeof want, "late.hdf5: particle ID %" PRId64 " lies in halos 0 and 1 (the halos must not overlap)", 6 * scale);
    CHECK(fk_mtree_match(&a, NULL, &b, FK_TREE_WEIGHT_RANK, "early.hdf5", "late.hdf5", &l, &nl, &shared, &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, want), "%s", err.msg);
    fk_error_clear(&err);
    snprintf(want, sizeof want, "early.hdf5: particle ID %" PRId64 " lies in halos 0 and 1 (the halos must not overlap)", 6 * scale);
    CHECK(fk_mtree_match(&b, NULL, &a, FK_TREE_WEIGHT_RANK, "early.hdf5", "late.hdf5", &l, &nl, &shared, &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, want), "%s", err.msg);
    /* no shared ID: no link, nothing shared */
    fk_treecat c = {.nhalo = 2, .len = len, .first = first, .nids = 4, .ids = far};
    CHECK(fk_mtree_match(&a, NULL, &c, FK_TREE_WEIGHT_RANK, "a", "c", &l, &nl, &shared, &err) == FK_OK);
    CHECK(nl == 0 && shared == 0);
    free(l);
}

/* IDs 1..n in halos of 100, the same in both, but for one ID far beyond the others (n + n / 2,
 * where the range guessed from a sample of the IDs does not reach) in A, in B or in both: the
 * table's join meets it, gives up, and the match starts again from the exact range. Every
 * halo its own descendant, sharing all its members but that one where only one catalogue
 * has it, its score summed in rank order. */
static void check_outlier(int where)
{
    const uint64_t n = 200000, size = 100, nh = n / size, far = n + n / 2;
    uint64_t *len = malloc(nh * sizeof *len), *first = malloc(nh * sizeof *first);
    int64_t *ia = malloc(n * sizeof *ia), *ib = malloc(n * sizeof *ib);
    for (uint64_t h = 0; h < nh; h++) len[h] = size, first[h] = h * size;
    for (uint64_t k = 0; k < n; k++) ia[k] = ib[k] = (int64_t)k + 1;
    /* place 1 of halo 0 (rank 2): the sample takes every 3rd ID of 200000 */
    if (where & 1) ia[1] = (int64_t)far;
    if (where & 2) ib[1] = (int64_t)far;
    fk_treecat a = {.nhalo = nh, .len = len, .first = first, .nids = n, .ids = ia};
    fk_treecat b = {.nhalo = nh, .len = len, .first = first, .nids = n, .ids = ib};
    fk_treelink *l;
    uint64_t nl, shared;
    fk_error err = {0};
    CHECK(fk_mtree_match(&a, NULL, &b, FK_TREE_WEIGHT_RANK, "a", "b", &l, &nl, &shared, &err) == FK_OK);
    const int lost = where != 3; /* the one ID in one catalogue only */
    CHECK_MSG(nl == nh && shared == n - (uint64_t)lost, "%" PRIu64 " links, %" PRIu64 " shared", nl, shared);
    uint64_t bad = 0;
    for (uint64_t h = 0; h < nh && nl == nh; h++) {
        double s = 0;
        for (uint64_t r = 1; r <= size; r++)
            if (!(h == 0 && r == 2 && lost)) s += 1.0 / (double)r;
        const uint64_t c = size - (h == 0 && lost);
        if (l[h].prog != h || l[h].desc != h || l[h].count != c || memcmp(&l[h].score, &s, sizeof s)) bad++;
    }
    CHECK_MSG(bad == 0, "%" PRIu64 " links differ (outlier in %d)", bad, where);
    free(l), free(len), free(first), free(ia), free(ib);
}

int main(void)
{
    check_sort(1, 0);
    check_sort(1000, 0);
    check_sort(1000, 7);
    check_sort(300000, 0);      /* the parallel path */
    check_sort(300000, 1000);   /* stable among equal keys */
    check_sort(300000, 1u << 20);
    for (int dense = 0; dense < 2; dense++) {
        check_match(30, 40, 20, 2000, FK_TREE_WEIGHT_RANK, 0, dense);
        check_match(30, 40, 20, 2000, FK_TREE_WEIGHT_COUNT, 0, dense);
        check_match(30, 40, 20, 2000, FK_TREE_WEIGHT_RANK, 1, dense);
        check_match(400, 300, 600, 200000, FK_TREE_WEIGHT_RANK, 0, dense); /* > 65536 members: every core */
        check_match(400, 300, 600, 200000, FK_TREE_WEIGHT_COUNT, 1, dense);
        check_match(100, 5, 3000, 400000, FK_TREE_WEIGHT_RANK, 0, dense); /* long halos, a few descendants each */
        check_match(100, 12, 3000, 400000, FK_TREE_WEIGHT_RANK, 1, dense);
        check_match(60, 40, 3000, 100000, FK_TREE_WEIGHT_RANK, 0, dense); /* more descendants than sort_shares distributes */
    }
    check_duplicate(1);
    check_duplicate(1000000000000);
    for (int where = 1; where <= 3; where++) check_outlier(where);
    CHECK_DONE();
}
