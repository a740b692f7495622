/* link_brute.c - the all-pairs O(n^2) linker on the CPU: an independent check for small inputs. */
#include "link.h"

#include <stdlib.h>

static uint32_t root(const uint32_t *s, uint32_t x)
{
    while (s[x] != x) x = s[x];
    return x;
}

int fk_link_brute_cpu(uint64_t n, const float *pos, const float *vel, const fk_linkopts *o, uint32_t *sink,
                      fk_linkstats *stats, fk_error *err)
{
    int st = fk_link_check(o, err);
    if (st) return st;
    const fk_linkparams p = fk_link_params(o);
    for (uint64_t i = 0; i < n; i++) sink[i] = (uint32_t)i;
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = i + 1; j < n; j++) {
            if (!fk_friends(pos + 3 * i, pos + 3 * j, vel ? vel + 3 * i : NULL, vel ? vel + 3 * j : NULL, &p)) continue;
            uint32_t a = root(sink, (uint32_t)i), b = root(sink, (uint32_t)j);
            if (a < b)
                sink[b] = a;
            else if (b < a)
                sink[a] = b;
        }
    uint64_t groups = fk_sink_flatten(sink, n);
    if (stats) {
        stats->pair_tests = n * (n ? n - 1 : 0) / 2;
        stats->node_tests = 0;
        stats->dense_nodes = 0;
        stats->groups = groups;
    }
    return FK_OK;
}
