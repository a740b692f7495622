/* dist_rcb.c - recursive coordinate bisection over MPI ranks (see dist_rcb.h): the tree built from histograms summed over the ranks; a stub without MPI. */
#include "dist_rcb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"

#ifndef FK_HAVE_MPI

int fk_rcb_build(const float *pos, uint64_t n, const double gmn[3], const double gmx[3], double margin,
                 double period, fk_rcb *t, fk_error *err)
{
    (void)pos, (void)n, (void)gmn, (void)gmx, (void)margin, (void)period;
    memset(t, 0, sizeof *t);
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
}

#else

#include <mpi.h>

/* A box being cut: the particles of [A, B) along its axis are still to
 * place (those below A, below of them, are below the cut), the bins' edges
 * spread over [flo, fhi]; target particles go below the cut. */
typedef struct cutting {
    int node, axis;
    double A, B, flo, fhi;
    uint64_t below, inbin, target;
} cutting;

/* The bin of x among the edges e[1 .. NB-1] (e[k] <= x for the k below it). */
static int bin_of(const double *e, float x)
{
    int lo = 0, hi = FK_RCB_BINS - 1; /* the last k with e[k] <= x, or 0 */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (e[mid] <= (double)x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static void edges(const cutting *c, double *e)
{
    for (int k = 0; k <= FK_RCB_BINS; k++) e[k] = c->flo + (c->fhi - c->flo) * k / FK_RCB_BINS;
}

int fk_rcb_build(const float *pos, uint64_t n, const double gmn[3], const double gmx[3], double margin,
                 double period, fk_rcb *t, fk_error *err)
{
    int R;
    MPI_Comm_size(fk_dist_comm(), &R);
    memset(t, 0, sizeof *t);
    t->nranks = R, t->period = period, t->margin = margin;
    t->deep = 1;
    for (int k = 0; k < 3; k++)
        if (period > 0 && !(gmx[k] - gmn[k] <= period)) t->deep = 0;
    const int maxn = 2 * R - 1, maxa = R / 2 + 1, NB = FK_RCB_BINS;
    t->node = calloc((size_t)maxn, sizeof *t->node);
    t->leaf = malloc((size_t)R * sizeof *t->leaf);
    uint32_t *cell = malloc((n ? n : 1) * 4);
    int *aidx = malloc((size_t)maxn * sizeof *aidx), *front = malloc((size_t)maxn * sizeof *front);
    uint64_t *cnt = calloc((size_t)maxn, 8), *h = malloc((size_t)maxa * NB * 8);
    cutting *c = malloc((size_t)maxa * sizeof *c);
    double *e = malloc((size_t)maxa * (NB + 1) * sizeof *e);
    int st = (!t->node || !t->leaf || !cell || !aidx || !front || !cnt || !h || !c || !e)
                 ? fk_fail(err, FK_ENOMEM, "out of memory for the ranks' domains")
                 : FK_OK;
    st = fk_dist_agree(st, err, NULL);
    if (st) {
        free(cell), free(aidx), free(front), free(cnt), free(h), free(c), free(e);
        fk_rcb_free(t);
        return st;
    }
    fk_rcb_node *nd = t->node;
    for (int k = 0; k < 3; k++) nd[0].lo[k] = gmn[k], nd[0].hi[k] = gmx[k];
    nd[0].r0 = 0, nd[0].r1 = R, nd[0].kid[0] = nd[0].kid[1] = -1;
    t->nnodes = 1;
    cnt[0] = n;
    MPI_Allreduce(MPI_IN_PLACE, cnt, 1, MPI_UINT64_T, MPI_SUM, fk_dist_comm());
    #pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) cell[i] = 0;
    int nf = 1;
    front[0] = 0;
    for (int i = 0; i < maxn; i++) aidx[i] = -1;
    for (;;) {
        /* this level's boxes of more than one rank */
        int na = 0;
        for (int f = 0; f < nf; f++) {
            fk_rcb_node *b = &nd[front[f]];
            if (b->r1 - b->r0 < 2) continue;
            int ax = 0;
            for (int k = 1; k < 3; k++)
                if (b->hi[k] - b->lo[k] > b->hi[ax] - b->lo[ax]) ax = k;
            const int nr = b->r1 - b->r0, nlo = nr / 2;
            c[na] = (cutting){front[f], ax, -HUGE_VAL, HUGE_VAL, b->lo[ax], b->hi[ax], 0, 0,
                              (uint64_t)((unsigned __int128)cnt[front[f]] * (unsigned)nlo / (unsigned)nr)};
            aidx[front[f]] = na++;
        }
        if (!na) break;
        for (int pass = 0; pass < FK_RCB_PASSES; pass++) {
            for (int a = 0; a < na; a++) edges(&c[a], e + (size_t)a * (NB + 1));
            const size_t nh = (size_t)(unsigned)na * NB;
            memset(h, 0, nh * 8);
            #pragma omp parallel for schedule(static) reduction(+ : h[:nh])
            for (uint64_t i = 0; i < n; i++) {
                const int a = aidx[cell[i]];
                if (a < 0) continue;
                const float x = pos[3 * i + c[a].axis];
                if (!((double)x >= c[a].A && (double)x < c[a].B)) continue;
                h[(size_t)a * NB + bin_of(e + (size_t)a * (NB + 1), x)]++;
            }
            MPI_Allreduce(MPI_IN_PLACE, h, (int)nh, MPI_UINT64_T, MPI_SUM, fk_dist_comm());
            for (int a = 0; a < na; a++) {
                const uint64_t *ha = h + (size_t)a * NB;
                const double *ea = e + (size_t)a * (NB + 1);
                uint64_t cum = c[a].below;
                int j = 0;
                while (j < NB - 1 && cum + ha[j] <= c[a].target) cum += ha[j++];
                /* bin j holds the target: [A, B) narrowed to it */
                const double A = j == 0 ? c[a].A : ea[j], B = j == NB - 1 ? c[a].B : ea[j + 1];
                c[a].flo = ea[j], c[a].fhi = ea[j + 1];
                c[a].A = A, c[a].B = B, c[a].below = cum, c[a].inbin = ha[j];
            }
        }
        /* each box's cut: the end of its last bin nearer the target, within the box */
        for (int a = 0; a < na; a++) {
            fk_rcb_node *b = &nd[c[a].node];
            const int ax = c[a].axis, nlo = (b->r1 - b->r0) / 2;
            double cut = c[a].target - c[a].below <= c[a].below + c[a].inbin - c[a].target ? c[a].A : c[a].B;
            if (!(cut >= b->lo[ax])) cut = b->lo[ax];
            if (!(cut <= b->hi[ax])) cut = b->hi[ax];
            b->axis = ax, b->cut = cut;
            const int k0 = t->nnodes++, k1 = t->nnodes++;
            nd[k0] = *b, nd[k1] = *b;
            nd[k0].hi[ax] = cut, nd[k0].r1 = b->r0 + nlo;
            nd[k1].lo[ax] = cut, nd[k1].r0 = b->r0 + nlo;
            nd[k0].kid[0] = nd[k0].kid[1] = nd[k1].kid[0] = nd[k1].kid[1] = -1;
            b->kid[0] = k0, b->kid[1] = k1;
        }
        /* the particles of the cut boxes to their halves, the halves counted */
        const int nn = t->nnodes;
        #pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < n; i++) {
            const fk_rcb_node *b = &nd[cell[i]];
            if (aidx[cell[i]] < 0) continue;
            cell[i] = (uint32_t)((double)pos[3 * i + b->axis] < b->cut ? b->kid[0] : b->kid[1]);
        }
        memset(cnt, 0, (size_t)nn * 8);
        #pragma omp parallel for schedule(static) reduction(+ : cnt[:nn])
        for (uint64_t i = 0; i < n; i++) cnt[cell[i]]++;
        MPI_Allreduce(MPI_IN_PLACE, cnt, nn, MPI_UINT64_T, MPI_SUM, fk_dist_comm());
        nf = 0;
        for (int a = 0; a < na; a++) {
            aidx[c[a].node] = -1;
            front[nf++] = nd[c[a].node].kid[0];
            front[nf++] = nd[c[a].node].kid[1];
        }
    }
    for (int i = 0; i < t->nnodes; i++)
        if (nd[i].kid[0] < 0) t->leaf[nd[i].r0] = i;
    free(cell), free(aidx), free(front), free(cnt), free(h), free(c), free(e);
    return FK_OK;
}

#endif
