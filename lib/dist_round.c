/* dist_round.c - the rounds of an all-to-all exchange (dist_alltoall.h): records per round and each round's share; no MPI. */
#include "dist_alltoall.h"

#include <limits.h>

/* Bytes one round moves between two ranks at most. */
#define ROUND_PAIR_BYTES (UINT64_C(1) << 28)

uint64_t fk_dist_round_cap(int R, size_t size, uint64_t env_cap)
{
    uint64_t cap = (uint64_t)INT_MAX / (uint64_t)(R > 0 ? R : 1);
    if (size && cap > ROUND_PAIR_BYTES / size) cap = ROUND_PAIR_BYTES / size;
    if (env_cap && cap > env_cap) cap = env_cap;
    return cap ? cap : 1;
}

uint64_t fk_dist_round_share(uint64_t count, uint64_t cap, uint64_t round)
{
    const uint64_t rounds = count / cap + (count % cap != 0);
    if (round >= rounds) return 0;
    const uint64_t done = round * cap;
    return count - done < cap ? count - done : cap;
}
