/* dist_rcbwalk.c - the bisection's tree (dist_rcb.h) walked: a point's owner, the ranks whose boxes lie within the margin of it; no MPI. */
#include "dist_rcb.h"

#include <stdlib.h>

int fk_rcb_owner(const fk_rcb *t, const float *x)
{
    int i = 0;
    while (t->node[i].kid[0] >= 0) {
        const fk_rcb_node *b = &t->node[i];
        i = (double)x[b->axis] < b->cut ? b->kid[0] : b->kid[1];
    }
    return t->node[i].r0;
}

/* The gap from x to [lo, hi]: 0 within. */
static double gap(double x, double lo, double hi)
{
    return x < lo ? lo - x : x > hi ? x - hi : 0;
}

double fk_rcb_gap2(const fk_rcb *t, int i, const float *x)
{
    const fk_rcb_node *b = &t->node[i];
    double s = 0;
    for (int k = 0; k < 3; k++) {
        double g = gap(x[k], b->lo[k], b->hi[k]);
        if (t->period > 0) {
            double g1 = gap((double)x[k] - t->period, b->lo[k], b->hi[k]),
                   g2 = gap((double)x[k] + t->period, b->lo[k], b->hi[k]);
            g = g1 < g ? g1 : g;
            g = g2 < g ? g2 : g;
        }
        s += g * g;
    }
    return s;
}

int fk_rcb_reaches(const fk_rcb *t, const float *x, int self, int *out)
{
    const double m2 = t->margin * t->margin;
    int stack[130], ns = 0, n = 0; /* depth-first, the lower half first: ranks ascend; the depth is at most 64 */
    stack[ns++] = 0;
    while (ns) {
        const int i = stack[--ns];
        if (fk_rcb_gap2(t, i, x) > m2) continue;
        const fk_rcb_node *b = &t->node[i];
        if (b->kid[0] < 0) {
            if (b->r0 != self) out[n++] = b->r0;
            continue;
        }
        stack[ns++] = b->kid[1];
        stack[ns++] = b->kid[0];
    }
    return n;
}

void fk_rcb_free(fk_rcb *t)
{
    free(t->node);
    free(t->leaf);
    t->node = NULL;
    t->leaf = NULL;
}
