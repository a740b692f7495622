/* test_dist_rcb.c - the bisection's boxes walked: every point's owner holds it, and every rank owning a point within the margin (periodically) is among its ghosts' ranks. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "dist_rcb.h"

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1p-53;
}

/* A tree as fk_rcb_build makes one, without MPI: node i's ranks halved at a
 * cut anywhere in the middle 90% of its widest side (any cut is valid). */
static void split(fk_rcb *t, int i)
{
    fk_rcb_node *b = &t->node[i];
    b->kid[0] = b->kid[1] = -1;
    if (b->r1 - b->r0 < 2) {
        t->leaf[b->r0] = i;
        return;
    }
    int ax = 0;
    for (int k = 1; k < 3; k++)
        if (b->hi[k] - b->lo[k] > b->hi[ax] - b->lo[ax]) ax = k;
    const double cut = b->lo[ax] + (0.05 + 0.9 * uniform()) * (b->hi[ax] - b->lo[ax]);
    const int k0 = t->nnodes++, k1 = t->nnodes++, mid = b->r0 + (b->r1 - b->r0) / 2;
    b->axis = ax, b->cut = cut, b->kid[0] = k0, b->kid[1] = k1;
    t->node[k0] = *b, t->node[k1] = *b;
    t->node[k0].hi[ax] = cut, t->node[k0].r1 = mid;
    t->node[k1].lo[ax] = cut, t->node[k1].r0 = mid;
    split(t, k0);
    split(t, k1);
}

/* The squared distance of a and b, each axis's nearest image when periodic. */
static double dist2(const float *a, const float *b, double period)
{
    double s = 0;
    for (int k = 0; k < 3; k++) {
        double d = fabs((double)a[k] - b[k]);
        if (period > 0 && d > period / 2) d = period - d;
        s += d * d;
    }
    return s;
}

static float wrap(double x, double period)
{
    if (period > 0) {
        if (x < -0.5) x += period;
        if (x >= 0.5) x -= period;
    }
    return (float)x;
}

int main(void)
{
    const int ranks[] = {1, 2, 3, 5, 7, 8, 27, 64};
    const double margin = 0.04;
    for (int per = 0; per < 2; per++)
        for (size_t ri = 0; ri < sizeof ranks / sizeof *ranks; ri++) {
            const int R = ranks[ri];
            fk_rcb t = {0};
            t.nranks = R, t.margin = margin, t.period = per ? 1.0 : 0, t.deep = 1;
            t.node = calloc((size_t)(2 * R - 1), sizeof *t.node);
            t.leaf = malloc((size_t)R * sizeof *t.leaf);
            for (int k = 0; k < 3; k++) t.node[0].lo[k] = -0.5, t.node[0].hi[k] = 0.5;
            t.node[0].r0 = 0, t.node[0].r1 = R;
            t.nnodes = 1;
            split(&t, 0);
            CHECK(t.nnodes == 2 * R - 1);
            int *to = malloc((size_t)R * sizeof *to), bad_owner = 0, missed = 0, order = 0, self = 0, far = 0;
            for (int s = 0; s < 20000; s++) {
                float x[3], y[3];
                for (int k = 0; k < 3; k++) x[k] = (float)(uniform() - 0.5);
                const int o = fk_rcb_owner(&t, x);
                const fk_rcb_node *b = &t.node[t.leaf[o]];
                for (int k = 0; k < 3; k++) bad_owner += x[k] < b->lo[k] || x[k] > b->hi[k];
                const int n = fk_rcb_reaches(&t, x, o, to);
                for (int q = 0; q < n; q++) {
                    order += q && to[q] <= to[q - 1];
                    self += to[q] == o;
                    far += fk_rcb_gap2(&t, t.leaf[to[q]], x) > margin * margin;
                }
                /* a friend's owner, within the margin, is among x's ranks */
                for (int f = 0; f < 8; f++) {
                    for (int k = 0; k < 3; k++) y[k] = wrap(x[k] + (2 * uniform() - 1) * margin, t.period);
                    if (dist2(x, y, t.period) > margin * margin * 0.999) continue;
                    const int oy = fk_rcb_owner(&t, y);
                    int found = oy == o;
                    for (int q = 0; q < n && !found; q++) found = to[q] == oy;
                    missed += !found;
                }
            }
            CHECK_MSG(!bad_owner, "R %d periodic %d: %d points outside their owner's box", R, per, bad_owner);
            CHECK_MSG(!missed, "R %d periodic %d: %d friends' ranks missed", R, per, missed);
            CHECK_MSG(!order && !self && !far, "R %d periodic %d: ranks out of order %d, self %d, too far %d", R, per,
                      order, self, far);
            free(to);
            fk_rcb_free(&t);
        }
    CHECK_DONE();
}
