/* test_groups.c - sink chains of every shape resolved or rejected, ID checks, numbering by size and ties, GRPS records. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "groups.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t urand(uint64_t below)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng % below;
}

/* The sink of i by walking, for chains known to be valid. */
static uint32_t walk(const uint32_t *sink, uint32_t i)
{
    while (sink[i] != i) i = sink[i];
    return i;
}

/* Resolves a copy of sink and compares with walking every chain. */
static void resolves(const char *what, const uint32_t *sink, uint64_t n)
{
    uint32_t *s = malloc(n * 4 + 4);
    memcpy(s, sink, n * 4);
    fk_error err = {0};
    int st = fk_groups_resolve(s, n, "t", &err);
    CHECK_MSG(st == FK_OK, "%s: %s", what, err.msg);
    int same = 1;
    for (uint64_t i = 0; i < n && st == FK_OK; i++) same &= s[i] == walk(sink, (uint32_t)i);
    CHECK_MSG(same, "%s: resolved sinks differ from walking the chains", what);
    free(s);
}

/* Expects fk_groups_resolve to fail with a message containing want. */
static void rejects(const char *what, const uint32_t *sink, uint64_t n, const char *want)
{
    uint32_t *s = malloc(n * 4 + 4);
    memcpy(s, sink, n * 4);
    fk_error err = {0};
    int st = fk_groups_resolve(s, n, "t", &err);
    CHECK_MSG(st == FK_EFORMAT && strstr(err.msg, want), "%s: status %d, message '%s', wanted '%s'", what, st, err.msg,
              want);
    free(s);
}

static void test_chain_shapes(void)
{
    enum { N = 1000 };
    uint32_t s[N];
    for (uint32_t i = 0; i < N; i++) s[i] = i;
    resolves("all sinks", s, N);
    for (uint32_t i = 0; i < N; i++) s[i] = i ? i - 1 : 0;
    resolves("one chain downwards", s, N);
    for (uint32_t i = 0; i < N; i++) s[i] = i + 1 < N ? i + 1 : i;
    resolves("one chain upwards", s, N);
    for (uint32_t i = 0; i < N; i++) s[i] = N / 2;
    resolves("star on a middle sink", s, N);
    for (uint32_t i = 0; i < N; i++) s[i] = i ? (i - 1) / 2 : 0;
    resolves("binary heap", s, N);
    for (uint32_t i = 0; i < N; i++) s[i] = (uint32_t)(N - 1 - i / 2);
    s[N - 1] = N - 1;
    resolves("chains zig-zagging to the last particle", s, N);
    static const uint32_t block[10] = {0, 3, 0, 2, 9, 0, 1, 8, 8, 5}; /* two sinks, links up and down */
    for (uint32_t i = 0; i < N; i++) s[i] = i / 10 * 10 + block[i % 10];
    resolves("many short mixed chains", s, N);
    resolves("no particles", s, 0);

    /* Random forests: random sinks, every other particle pointing at an
     * earlier-placed particle of a random permutation, so that links go both
     * up and down in index. */
    for (int trial = 0; trial < 20; trial++) {
        uint32_t perm[N];
        for (uint32_t i = 0; i < N; i++) perm[i] = i;
        for (uint32_t i = N - 1; i > 0; i--) {
            uint32_t j = (uint32_t)urand(i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        uint64_t nroots = 1 + urand(trial < 10 ? 5 : N);
        for (uint32_t k = 0; k < N; k++) s[perm[k]] = k < nroots ? perm[k] : perm[urand(k)];
        resolves("random forest", s, N);
    }
}

static void test_bad_chains(void)
{
    uint32_t two[] = {1, 0};
    rejects("two-cycle", two, 2, "particle 0 lies on a cycle");
    uint32_t lead_in[] = {0, 2, 3, 4, 2};
    rejects("chain into a cycle", lead_in, 5, "particle 2 lies on a cycle");
    uint32_t late[] = {0, 1, 2, 3, 5, 6, 4};
    rejects("cycle at the end", late, 7, "particle 4 lies on a cycle");
    enum { N = 500 };
    uint32_t big[N];
    for (uint32_t i = 0; i < N; i++) big[i] = (i + 1) % N;
    rejects("one cycle through everything", big, N, "lies on a cycle");
    uint32_t high[] = {0, 5, 1, 7};
    rejects("value = n", high, 4, "particle 1 links to 5, beyond the last particle (3)");
    uint32_t huge[] = {0, 1, UINT32_MAX};
    rejects("value UINT32_MAX", huge, 3, "particle 2 links to 4294967295");
    uint32_t both[] = {1, 0, 9};
    rejects("a cycle and a bad value: the value is named", both, 3, "particle 2 links to 9");
}

static void test_check_ids(void)
{
    fk_error err = {0};
    uint64_t ok[] = {4, 0, 9, 2};
    CHECK(fk_groups_check_ids(ok, 4, 10, "t", &err) == FK_OK);
    uint64_t out[] = {4, 0, 10, 2};
    CHECK(fk_groups_check_ids(out, 4, 10, "t", &err) == FK_EFORMAT);
    CHECK_MSG(strstr(err.msg, "particle 2 has original index 10, beyond the 10 particles"), "%s", err.msg);
    fk_error_clear(&err);
    uint64_t dup[] = {4, 0, 9, 0};
    CHECK(fk_groups_check_ids(dup, 4, 10, "t", &err) == FK_EFORMAT);
    CHECK_MSG(strstr(err.msg, "particle 3 repeats original index 0"), "%s", err.msg);
    fk_error_clear(&err);
    CHECK(fk_groups_check_ids(NULL, 0, 0, "t", &err) == FK_OK);
}

static void test_numbering(void)
{
    fk_error err = {0};
    fk_groups info;
    /* Stream of 9; sizes: {0,3,4} 3, {1,5} 2, {2,7} 2, {6} 1, {8} 1.
     * IDs put the pair {2,7} (IDs 1 and 11) before {1,5} (IDs 3, 5). */
    uint32_t root[] = {0, 1, 2, 0, 0, 1, 6, 2, 8};
    uint64_t ids[] = {7, 3, 11, 2, 8, 5, 0, 1, 12};
    uint32_t gid[13];
    CHECK(fk_groups_number(root, ids, 9, 13, 2, gid, &info, &err) == FK_OK);
    uint32_t want[13] = {0, 2, 1, 3, 0, 3, 0, 1, 1, 0, 0, 2, 0};
    CHECK(memcmp(gid, want, sizeof want) == 0);
    CHECK(info.nfound == 5 && info.ngroups == 3 && info.ngrouped == 7 && info.largest == 3);
    CHECK(info.n == 9 && info.nsource == 13 && info.minsize == 2);

    /* minsize 1: the singletons are numbered after, by lowest ID: {6} (ID 0) before {8} (ID 12). */
    CHECK(fk_groups_number(root, ids, 9, 13, 1, gid, &info, &err) == FK_OK);
    CHECK(gid[0] == 4 && gid[12] == 5 && info.ngroups == 5 && info.ngrouped == 9);
    CHECK(gid[4] == 0 && gid[6] == 0 && gid[9] == 0 && gid[10] == 0); /* absent from the stream */

    /* minsize above every group: nothing kept, every row 0. */
    CHECK(fk_groups_number(root, ids, 9, 13, 4, gid, &info, &err) == FK_OK);
    uint32_t zero[13] = {0};
    CHECK(memcmp(gid, zero, sizeof zero) == 0 && info.ngroups == 0 && info.largest == 0 && info.nfound == 5);

    /* Without IDs the stream index decides ties: {1,5} before {2,7}. */
    CHECK(fk_groups_number(root, NULL, 9, 9, 2, gid, &info, &err) == FK_OK);
    uint32_t want_noid[9] = {1, 2, 3, 1, 1, 2, 0, 3, 0};
    CHECK(memcmp(gid, want_noid, sizeof want_noid) == 0);

    CHECK(fk_groups_number(root, NULL, 9, 13, 2, gid, &info, &err) == FK_EINVAL);
    fk_error_clear(&err);
    CHECK(fk_groups_number(root, NULL, 9, 9, 0, gid, &info, &err) == FK_EINVAL);
    fk_error_clear(&err);
    CHECK(fk_groups_number(root, NULL, 0, 0, 8, gid, &info, &err) == FK_OK && info.ngroups == 0 && info.nfound == 0);
}

/* Numbering does not depend on stream order: shuffle the stream, keep the
 * IDs with their particles, expect the same GID array. */
static void test_numbering_order_free(void)
{
    enum { N = 2000 };
    uint32_t sink[N], root2[N], gid1[N], gid2[N], perm[N], inv[N];
    uint64_t ids[N], ids2[N];
    fk_error err = {0};
    fk_groups a, b;
    for (uint32_t i = 0; i < N; i++) {
        sink[i] = i % 7 == 0 ? i : (uint32_t)urand(i + 1) / 7 * 7; /* groups of many equal sizes */
        ids[i] = (uint64_t)N - 1 - i;
        perm[i] = i;
    }
    CHECK(fk_groups_resolve(sink, N, "t", &err) == FK_OK);
    CHECK(fk_groups_number(sink, ids, N, N, 2, gid1, &a, &err) == FK_OK);
    for (uint32_t i = N - 1; i > 0; i--) {
        uint32_t j = (uint32_t)urand(i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (uint32_t i = 0; i < N; i++) inv[perm[i]] = i;
    for (uint32_t i = 0; i < N; i++) {
        root2[i] = inv[sink[perm[i]]];
        ids2[i] = ids[perm[i]];
    }
    CHECK(fk_groups_number(root2, ids2, N, N, 2, gid2, &b, &err) == FK_OK);
    CHECK(memcmp(gid1, gid2, sizeof gid1) == 0);
    CHECK(a.ngroups == b.ngroups && a.ngroups > 10 && a.largest == b.largest);
    /* sizes do not increase with the group number */
    uint64_t size[N + 1] = {0};
    for (uint32_t r = 0; r < N; r++) size[gid1[r]]++;
    int sorted = 1;
    for (uint64_t g = 2; g <= a.ngroups; g++) sorted &= size[g] <= size[g - 1];
    CHECK(sorted && size[1] == a.largest);
}

static void test_grps_text(void)
{
    fk_error err = {0};
    fk_groups a = {.level = 0, .n = 9, .nsource = 13, .minsize = 2, .nfound = 5, .ngroups = 3, .ngrouped = 7,
                   .largest = 3};
    fk_groups b;
    char *text;
    CHECK(fk_groups_format(&a, &text, &err) == FK_OK);
    CHECK(strstr(text, "ngroups 3\n") && strstr(text, "order " FK_GROUPS_ORDER "\n"));
    CHECK(fk_groups_parse(text, &b, "t", &err) == FK_OK);
    CHECK(b.n == a.n && b.nsource == a.nsource && b.minsize == a.minsize && b.nfound == a.nfound);
    CHECK(b.ngroups == a.ngroups && b.ngrouped == a.ngrouped && b.largest == a.largest && b.level == 0);
    free(text);
    CHECK(fk_groups_parse("minsize 3\n", &b, "t", &err) == FK_EFORMAT);
    CHECK_MSG(strstr(err.msg, "t: GRPS chunk lacks the key 'ngroups'"), "%s", err.msg);
    fk_error_clear(&err);
    CHECK(fk_groups_parse("ngroups 2\nminsize 3\n", &b, "t", &err) == FK_OK && b.ngroups == 2 && b.ngrouped == 0);
}

int main(void)
{
    test_chain_shapes();
    test_bad_chains();
    test_check_ids();
    test_numbering();
    test_numbering_order_free();
    test_grps_text();
    CHECK_DONE();
}
