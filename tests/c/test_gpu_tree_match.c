/* test_gpu_tree_match.c - the merger trees' ID matching on the GPU (fk_mtree_match_gpu) gives the CPU's links byte for byte: the table and the sorts, halos restricted, members between halos, duplicate IDs. */
#include <inttypes.h>
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

static void check_pair(uint64_t na, uint64_t nb, uint64_t maxlen, uint64_t npool, int dense, int weight, int restrict_a)
{
    fk_treecat a, b;
    uint8_t *only = tree_fixture_pair(&a, &b, na, nb, maxlen, npool, dense, restrict_a);
    fk_treelink *lc = NULL, *lg = NULL;
    uint64_t nc = 0, ng = 0, sc = 0, sg = 0;
    fk_error err = {0};
    CHECK(fk_mtree_match(&a, only, &b, weight, "a", "b", &lc, &nc, &sc, &err) == FK_OK);
    int st = fk_mtree_match_gpu(&a, only, &b, weight, "a", "b", &lg, &ng, &sg, &err);
    CHECK_MSG(st == FK_OK, "%s", err.msg);
    CHECK_MSG(st || (nc == ng && sc == sg && same(lc, lg, nc)),
              "GPU: %" PRIu64 " links, %" PRIu64 " shared; CPU: %" PRIu64 ", %" PRIu64 " (dense %d, weight %d, only %d)",
              ng, sg, nc, sc, dense, weight, restrict_a);
    CHECK(nc > 0 || na == 0);
    free(lc), free(lg), free(only);
    fk_treecat_free(&a), fk_treecat_free(&b);
}

/* An ID in two halos of one catalogue: the CPU's message, word for word. */
static void check_duplicate(int64_t scale)
{
    int64_t ok[4] = {5, 6, 7, 8}, dup[4] = {5, 6, 6, 9};
    for (int k = 0; k < 4; k++) ok[k] *= scale, dup[k] *= scale;
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
    CHECK_DONE();
}
