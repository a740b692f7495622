/* distdeal.c - items dealt to ranks largest first, each to the rank with the least load so far (dist_halos.h); no MPI. */
#include "dist_halos.h"

/* A binary heap of the ranks by (load, rank): the least loaded on top. */
static int lighter(const uint64_t *load, uint32_t a, uint32_t b)
{
    return load[a] < load[b] || (load[a] == load[b] && a < b);
}

static void sift_down(const uint64_t *load, uint32_t *heap, int R, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < R && lighter(load, heap[l], heap[m])) m = l;
        if (r < R && lighter(load, heap[r], heap[m])) m = r;
        if (m == i) return;
        uint32_t t = heap[i];
        heap[i] = heap[m], heap[m] = t;
        i = m;
    }
}

void fk_dist_deal(const uint64_t *size, uint64_t n, int R, uint32_t *heap, uint32_t *owner, uint64_t *load)
{
    for (int d = 0; d < R; d++) heap[d] = (uint32_t)d, load[d] = 0; /* all loads 0: ordered already */
    for (uint64_t g = 0; g < n; g++) {
        uint32_t d = heap[0];
        owner[g] = d;
        load[d] += size[g];
        sift_down(load, heap, R, 0);
    }
}
