/* test_subhalos.c - the subhalos after unbinding: main subhalos less their satellites, the central level 1 group kept in the main one, rows host by host; a bound member outside its group. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "subhalos.h"

/*
 * Ten particles. Level 0: group 1 = {0..6}, group 2 = {7, 8}; 9 in none.
 * Level 1: group 1 = {0, 1, 2} and group 2 = {4, 5} in host 1, group 3 =
 * {7, 8} in host 2. Bound: group 1's {0..5} (6 is not), group 2's {7, 8};
 * level 1 group 1's {0, 1, 2}, group 2's {4, 5}, group 3 none.
 */
static const uint32_t GID0[10] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 0};
static const uint32_t BGID0[10] = {1, 1, 1, 1, 1, 1, 0, 2, 2, 0};
static const uint32_t GID1[10] = {1, 1, 1, 0, 2, 2, 0, 3, 3, 0};
static const uint32_t BGID1[10] = {1, 1, 1, 0, 2, 2, 0, 0, 0, 0};

static void run(int mbp, uint64_t mbp_id, const uint32_t *gid1, const uint32_t *bgid1, const uint32_t *want_gsub,
                const fk_halo *want, uint64_t nwant)
{
    fk_halo h0[2] = {{.id = 1, .mbp_id = mbp_id}, {.id = 2, .mbp_id = 7}};
    fk_halo h1[3] = {{.level = 1, .id = 1, .host = 1}, {.level = 1, .id = 2, .host = 1}, {.level = 1, .id = 3, .host = 2}};
    fk_subhalo_in in = {10, GID0, BGID0, gid1, bgid1, h0, h1, 2, 3, mbp};
    uint32_t gsub[10];
    fk_halo *rows;
    uint64_t n;
    fk_error err = {0};
    int st = fk_subhalos_bound(&in, gsub, &rows, &n, &err);
    CHECK_MSG(st == FK_OK, "%s", err.msg);
    if (st) return;
    CHECK_MSG(n == nwant, "%llu rows", (unsigned long long)n);
    CHECK(memcmp(gsub, want_gsub, sizeof gsub) == 0);
    for (uint64_t k = 0; k < n && k < nwant; k++)
        CHECK_MSG(rows[k].level == want[k].level && rows[k].id == want[k].id && rows[k].host == want[k].host &&
                  rows[k].n == want[k].n, "row %llu: level %llu id %llu host %llu n %llu", (unsigned long long)k,
                  (unsigned long long)rows[k].level, (unsigned long long)rows[k].id, (unsigned long long)rows[k].host,
                  (unsigned long long)rows[k].n);
    free(rows);
}

int main(void)
{
    /* the host's most bound member 1 lies in level 1 group 1: that is the core of the main
     * subhalo {0, 1, 2, 3}; level 1 group 2 {4, 5} is a satellite; group 3 has no bound part */
    const uint32_t g1[10] = {1, 1, 1, 1, 2, 2, 0, 3, 3, 0};
    const fk_halo r1[3] = {{.level = 0, .id = 1, .host = 1, .n = 4}, {.level = 1, .id = 2, .host = 1, .n = 2},
                           {.level = 0, .id = 2, .host = 2, .n = 2}};
    run(1, 1, GID1, BGID1, g1, r1, 3);
    /* without potential centres the largest (lowest id) level 1 group is the central one: the same */
    run(0, 0, GID1, BGID1, g1, r1, 3);
    /* the most bound member 4 in level 1 group 2: group 1 {0, 1, 2} is the satellite now */
    const uint32_t g2[10] = {2, 2, 2, 1, 1, 1, 0, 3, 3, 0};
    const fk_halo r2[3] = {{.level = 0, .id = 1, .host = 1, .n = 3}, {.level = 1, .id = 1, .host = 1, .n = 3},
                           {.level = 0, .id = 2, .host = 2, .n = 2}};
    run(1, 4, GID1, BGID1, g2, r2, 3);
    /* one level: the main subhalos are the bound parts */
    const uint32_t g3[10] = {1, 1, 1, 1, 1, 1, 0, 2, 2, 0};
    const fk_halo r3[2] = {{.level = 0, .id = 1, .host = 1, .n = 6}, {.level = 0, .id = 2, .host = 2, .n = 2}};
    run(1, 1, NULL, NULL, g3, r3, 2);

    /* a bound member outside its group */
    uint32_t bad[10];
    memcpy(bad, BGID0, sizeof bad);
    bad[6] = 2;
    fk_halo h0[2] = {{.id = 1}, {.id = 2}};
    fk_subhalo_in in = {10, GID0, bad, NULL, NULL, h0, NULL, 2, 0, 0};
    uint32_t gsub[10];
    fk_halo *rows = NULL;
    uint64_t n = 9;
    fk_error err = {0};
    CHECK(fk_subhalos_bound(&in, gsub, &rows, &n, &err) == FK_EFORMAT);
    CHECK_MSG(strstr(err.msg, "particle 6 is bound to a group it is not in") != NULL, "%s", err.msg);
    CHECK(rows == NULL && n == 0);
    CHECK_DONE();
}
