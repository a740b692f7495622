/* test_dist_round.c - the rounds of all-to-all exchanges: int counts kept for any rank count, shares that add up past 2^32. */
#include <limits.h>
#include <stdint.h>

#include "check.h"
#include "dist_alltoall.h"

int main(void)
{
    /* a round's counts and displacements fit MPI's ints: R ranks times cap records, and a
     * pair's buffer at most 2^28 bytes */
    const int ranks[] = {1, 2, 3, 8, 1000, 65536, INT_MAX};
    const size_t sizes[] = {1, 4, 8, 16, 40, 4096};
    for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
            uint64_t cap = fk_dist_round_cap(ranks[i], sizes[j], 0);
            CHECK_MSG(cap >= 1 && (uint64_t)ranks[i] * cap <= INT_MAX && cap * sizes[j] <= (UINT64_C(1) << 28),
                      "R %d size %zu: cap %llu", ranks[i], sizes[j], (unsigned long long)cap);
        }
    CHECK(fk_dist_round_cap(4, 40, 0) == (UINT64_C(1) << 28) / 40);
    CHECK(fk_dist_round_cap(16, 1, 0) == INT_MAX / 16);
    CHECK(fk_dist_round_cap(4, 40, 37) == 37); /* FOFKIT_DIST_ROUND lowers it */
    CHECK(fk_dist_round_cap(4, 40, UINT64_C(1) << 40) == (UINT64_C(1) << 28) / 40); /* never raises it */

    /* shares: in order, cap at a time, adding up to the count, for counts past 2^32 */
    const uint64_t counts[] = {0, 1, 36, 37, 38, 1000, (UINT64_C(1) << 32) + 5, (UINT64_C(5) << 33) + 123456789};
    const uint64_t caps[] = {1, 37, 1000, INT_MAX / 3, (UINT64_C(1) << 28) / 16};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        for (size_t j = 0; j < sizeof caps / sizeof *caps; j++) {
            const uint64_t n = counts[i], cap = caps[j];
            if (n / cap > 100000) continue; /* too many rounds to walk here */
            uint64_t sum = 0, k = 0, last = 0;
            int ok = 1;
            for (;; k++) {
                uint64_t m = fk_dist_round_share(n, cap, k);
                if (!m) break;
                ok &= m <= cap && (last == 0 || last == cap); /* only the last round is short */
                last = m;
                sum += m;
            }
            ok &= sum == n && k == (n + cap - 1) / cap && fk_dist_round_share(n, cap, k + 1) == 0;
            CHECK_MSG(ok, "count %llu cap %llu: %llu rounds move %llu", (unsigned long long)n, (unsigned long long)cap,
                      (unsigned long long)k, (unsigned long long)sum);
        }
    /* a round far beyond the last moves nothing (no overflow in round * cap) */
    CHECK(fk_dist_round_share(100, 37, UINT64_MAX / 2) == 0);
    CHECK(fk_dist_round_share(UINT64_MAX, UINT64_MAX / 2, 2) == 1);
    CHECK_DONE();
}
