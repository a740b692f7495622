/* predicate.h - the exact FoF linking predicate and conservative box bounds, shared by C and CUDA. */
#ifndef FK_PREDICATE_H
#define FK_PREDICATE_H

/*
 * THE LINKING PREDICATE (documented in foflink(1); every path uses this code).
 *
 * Positions are IEEE-754 binary32. For particles i and j, on each axis k:
 *     d_k = x_j,k - x_i,k                                (binary32, rounded to nearest)
 * and in a periodic box of period L (h = L/2, both binary32):
 *     if d_k > h: d_k = d_k - L;  else if d_k < -h: d_k = d_k + L
 * then, each operation rounded to binary32, in this order, with no fused
 * multiply-add:
 *     r2 = (d_0*d_0 + d_1*d_1) + d_2*d_2
 * and i, j are friends when r2 < l2, where l2 = l*l rounded to binary32 and l
 * is the linking length rounded to binary32. The comparison is strict: two
 * particles exactly one linking length apart are not friends.
 *
 * With a velocity linking length psi (6D phase-space FoF), with the velocity
 * differences w_k = v_j,k - v_i,k (binary32, never wrapped), w2 formed like r2,
 * and p2 = psi*psi (binary32), they are friends when
 *     r2 < l2  and  r2/l2 + w2/p2 < 1
 * (each division and the sum rounded to binary32). The first clause is
 * implied by the second; it is the 3D test that lets a position tree prune.
 *
 * The predicate is symmetric: rounding to nearest is symmetric under
 * negation, so (i, j) and (j, i) give bit-identical r2.
 *
 * Host code is compiled with -ffp-contract=off and device code with
 * --fmad=false and explicit __f*_rn intrinsics, so no compiler can fuse.
 */

#include <math.h>

#include "hd.h"

FK_HD float fk_fsub(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}

FK_HD float fk_fadd(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

FK_HD float fk_fmul(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

FK_HD float fk_fdiv(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}

/* Geometry of a link pass: the period (0 when not periodic) and its half. */
typedef struct fk_geom {
    float L, h;
    int periodic;
} fk_geom;

/* One axis of the separation, wrapped to the minimum image. */
FK_HD float fk_axis_sep(float xi, float xj, fk_geom g)
{
    float d = fk_fsub(xj, xi);
    if (g.periodic) {
        if (d > g.h)
            d = fk_fsub(d, g.L);
        else if (d < -g.h)
            d = fk_fadd(d, g.L);
    }
    return d;
}

/* r2 of the predicate for particles at a and b (3 floats each). */
FK_HD float fk_sep2(const float *a, const float *b, fk_geom g)
{
    float d0 = fk_axis_sep(a[0], b[0], g), d1 = fk_axis_sep(a[1], b[1], g), d2 = fk_axis_sep(a[2], b[2], g);
    return fk_fadd(fk_fadd(fk_fmul(d0, d0), fk_fmul(d1, d1)), fk_fmul(d2, d2));
}

/* w2 of the predicate for velocities a and b. */
FK_HD float fk_vsep2(const float *a, const float *b)
{
    float d0 = fk_fsub(b[0], a[0]), d1 = fk_fsub(b[1], a[1]), d2 = fk_fsub(b[2], a[2]);
    return fk_fadd(fk_fadd(fk_fmul(d0, d0), fk_fmul(d1, d1)), fk_fmul(d2, d2));
}

/* The 6D clause, given r2 < l2 already holds. */
FK_HD int fk_phase_friends(float r2, float w2, float l2, float p2)
{
    return fk_fadd(fk_fdiv(r2, l2), fk_fdiv(w2, p2)) < 1.0f;
}

/* One axis of fk_box_bounds: the least and greatest |wrapped separation|
 * between [Alo, Ahi] and [Blo, Bhi], with a margin for the rounding of a
 * binary32 separation (relative to the largest difference, which also
 * covers the absolute error of a separation that wraps). */
FK_HD void fk_axis_bounds(float Alo, float Ahi, float Blo, float Bhi, fk_geom g, double *gmin, double *gmax)
{
    double a = (double)Blo - (double)Ahi, b = (double)Bhi - (double)Alo;
    double m = -a > b ? -a : b;
    double e = m * (4.0 / (1 << 24));
    double lo, hi;
    if (!g.periodic || (a - e >= -g.h && b + e <= g.h)) {
        lo = a > 0 ? a : (b < 0 ? -b : 0);
        hi = m;
    } else {
        double L = g.L, hh = 0.5 * L + e;
        lo = INFINITY;
        hi = 0;
        for (int s = -1; s <= 1; s++) {
            double x = a + s * L, y = b + s * L;
            double gap = x > 0 ? x : (y < 0 ? -y : 0);
            lo = gap < lo ? gap : lo;
            double cx = x > -hh ? x : -hh, cy = y < hh ? y : hh;
            if (cx <= cy) {
                double mm = -cx > cy ? -cx : cy;
                hi = mm > hi ? mm : hi;
            }
        }
    }
    *gmin = lo > e ? lo - e : 0.0;
    *gmax = hi + e;
}

/*
 * Conservative bounds on r2 over every pair (p in box A, q in box B); a box is
 * 6 floats: lo x y z, hi x y z. *lo2 <= r2 <= *hi2 for every such pair, with
 * margins that cover binary32 rounding (including the absolute rounding of a
 * separation that wraps), so that
 *     lo2 >= l2  proves no pair is linked (prune), and
 *     hi2 <  l2  proves every pair is linked (merge wholesale).
 * Computed in binary64. For a periodic box every coordinate lies in
 * [origin, origin + L), so each difference lies in (-L, L).
 */
FK_HD void fk_box_bounds(const float *A, const float *B, fk_geom g, double *lo2, double *hi2)
{
    const double slack = 1.0 / (1 << 20); /* relative, >> the few ulps of r2's rounding */
    double lo = 0, hi = 0;
    for (int k = 0; k < 3; k++) {
        double gmin, gmax;
        fk_axis_bounds(A[k], A[k + 3], B[k], B[k + 3], g, &gmin, &gmax);
        lo += gmin * gmin;
        hi += gmax * gmax;
    }
    *lo2 = lo * (1.0 - slack);
    *hi2 = hi * (1.0 + slack);
}

/* The constants of one linking pass. */
typedef struct fk_linkparams {
    fk_geom g;
    float l2; /* l*l, binary32            */
    float p2; /* psi*psi, binary32 (6D)   */
    int sixd;
    double il2, ip2; /* 1/l2, 1/p2 for the bounds (rounding covered by their slack) */
} fk_linkparams;

/* The predicate for particles i and j (vi, vj used only in 6D). */
FK_HD int fk_friends(const float *pi, const float *pj, const float *vi, const float *vj, const fk_linkparams *p)
{
    float r2 = fk_sep2(pi, pj, p->g);
    if (!(r2 < p->l2)) return 0;
    return !p->sixd || fk_phase_friends(r2, fk_vsep2(vi, vj), p->l2, p->p2);
}

enum { FK_NODES_MAYBE = 0, FK_NODES_APART = 1, FK_NODES_LINKED = 2 };

/* fk_node_pair for 3D linking, deciding "apart" from the lower bound alone
 * when it can (the common case in a tree walk). Same answers as
 * fk_node_pair with sixd = 0. */
FK_HD int fk_node_pair3(const float *A, const float *B, const fk_linkparams *p)
{
    const double slack = 1.0 / (1 << 20);
    double lo[3], hi[3];
    for (int k = 0; k < 3; k++) fk_axis_bounds(A[k], A[k + 3], B[k], B[k + 3], p->g, &lo[k], &hi[k]);
    if ((lo[0] * lo[0] + lo[1] * lo[1] + lo[2] * lo[2]) * (1.0 - slack) >= p->l2) return FK_NODES_APART;
    return (hi[0] * hi[0] + hi[1] * hi[1] + hi[2] * hi[2]) * (1.0 + slack) < p->l2 ? FK_NODES_LINKED
                                                                                     : FK_NODES_MAYBE;
}

/* What the boxes of two nodes prove about their pairs: FK_NODES_APART (no
 * pair is linked), FK_NODES_LINKED (every pair is), or FK_NODES_MAYBE. In
 * 6D the velocity boxes (vA, vB) enter too; with a = r2/l2 and b = w2/p2
 * each bounded as above, the rounded sum is within 2^-20 of the exact one. */
FK_HD int fk_node_pair(const float *A, const float *B, const float *vA, const float *vB, const fk_linkparams *p)
{
    double lo2, hi2;
    fk_box_bounds(A, B, p->g, &lo2, &hi2);
    if (lo2 >= p->l2) return FK_NODES_APART;
    if (!p->sixd) return hi2 < p->l2 ? FK_NODES_LINKED : FK_NODES_MAYBE;
    const fk_geom flat = {0.0f, 0.0f, 0};
    const double slack = 1.0 / (1 << 20);
    double vlo2, vhi2;
    fk_box_bounds(vA, vB, flat, &vlo2, &vhi2);
    if (lo2 * p->il2 + vlo2 * p->ip2 >= 1 + slack) return FK_NODES_APART;
    return hi2 * p->il2 + vhi2 * p->ip2 < 1 - slack ? FK_NODES_LINKED : FK_NODES_MAYBE;
}

#endif
