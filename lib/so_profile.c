/* so_profile.c - the first threshold crossings of a sphere's cumulative profile: every particle sorted, or radial bins of which only those that can hold a crossing are sorted. */
#include "so_profile.h"
#include "so.h"
#include "error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double vol = 4.0 / 3.0 * M_PI;

/* ---- one threshold's crossing, fed outward in stretches ------------------- */

/* The state of fk_so_crossing's walk, so that the profile can come in
 * sorted stretches and summaries of stretches without a crossing. */
typedef struct cross {
    double rho_t;
    size_t first, start; /* the profile's first index; its first sphere  */
    int started, st;     /* st: 1 crossed, 0 not reached, -1 not yet      */
    double rp, rhop;     /* the last distinct radius and its mean density */
    double R, M;
} cross;

static void cross_init(cross *s, size_t first, double rho_t)
{
    *s = (cross){.rho_t = rho_t, .first = first, .st = -1, .R = NAN, .M = NAN};
}

/* Particles k0 .. k0 + n of the profile: radii r ascending, cm the mass at
 * r <= r[i] (equal radii all counted). */
static void cross_run(cross *s, const double *r, const double *cm, size_t k0, size_t n)
{
    for (size_t i = 0; i < n && s->st == -1; i++) {
        size_t k = k0 + i;
        if (k < s->first) continue;
        if (!s->started) {
            if (r[i] == 0) continue;
            s->started = 1, s->start = k;
        } else if (r[i] == s->rp) {
            continue; /* the same sphere as the last: cm holds all of them */
        }
        double rho = cm[i] / (vol * r[i] * r[i] * r[i]);
        if (rho < s->rho_t) {
            if (k == s->start) {
                s->st = 0; /* the first sphere is not dense enough */
                return;
            }
            double lr0 = log(s->rp), lrho0 = log(s->rhop), lr1 = log(r[i]), lrho1 = log(rho);
            double lR = lr0 + (log(s->rho_t) - lrho0) * (lr1 - lr0) / (lrho1 - lrho0);
            s->R = exp(lR);
            s->M = vol * s->R * s->R * s->R * s->rho_t;
            s->st = 1;
            return;
        }
        s->rp = r[i], s->rhop = rho;
    }
}

/* A stretch after the start where no sphere is below the threshold: its
 * largest radius and the mass within it. */
static void cross_skip(cross *s, double rmax, double m)
{
    s->rp = rmax, s->rhop = m / (vol * rmax * rmax * rmax);
}

int fk_so_crossing(const double *r, const double *cm, size_t n, size_t first, double rho_t, double *R, double *M)
{
    cross s;
    cross_init(&s, first, rho_t);
    cross_run(&s, r, cm, 0, n);
    *R = s.R, *M = s.M;
    return s.st;
}

/* ---- buffers ------------------------------------------------------------- */

int fk_so_prof_reserve(fk_so_prof *w, size_t n)
{
    if (n <= w->cap) return 0;
    size_t cap = w->cap ? w->cap : 1024;
    while (cap < n) cap *= 2;
    fk_shell *a = realloc(w->sh, cap * sizeof *a);
    if (a) w->sh = a;
    fk_shell *b = realloc(w->tmp, cap * sizeof *b);
    if (b) w->tmp = b;
    double *c = realloc(w->r, cap * sizeof *c);
    if (c) w->r = c;
    double *d = realloc(w->cm, cap * sizeof *d);
    if (d) w->cm = d;
    uint32_t *e = realloc(w->bin, cap * sizeof *e);
    if (e) w->bin = e;
    if (!a || !b || !c || !d || !e) return -1;
    w->cap = cap;
    return 0;
}

void fk_so_prof_free(fk_so_prof *w)
{
    free(w->sh), free(w->tmp), free(w->r), free(w->cm), free(w->bin);
    w->sh = w->tmp = NULL, w->r = w->cm = NULL, w->bin = NULL, w->cap = 0;
}

static int shell_cmp(const void *a, const void *b)
{
    const fk_shell *p = a, *q = b;
    if (p->r2 != q->r2) return (p->r2 > q->r2) - (p->r2 < q->r2);
    return (p->m > q->m) - (p->m < q->m);
}

/* Sorts a[0..n) as fk_shells_sort with shell_cmp (scratch: n shells), a
 * few by insertion: shell_cmp is a total order on the values, so every
 * sort gives the same array. */
static void sort_shells(fk_shell *a, size_t n, fk_shell *scratch)
{
    if (n > 24) {
        fk_shells_sort(a, n, scratch, shell_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        fk_shell v = a[i];
        size_t j = i;
        for (; j > 0 && shell_cmp(&a[j - 1], &v) > 0; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Sorts sh[0..n) (scratch: n shells) and fills r and cm: the radii and the
 * mass within each, from m0 on, summed outward; equal radii share their
 * total. */
static void sorted_profile(fk_shell *sh, size_t n, fk_shell *scratch, double m0, double *r, double *cm)
{
    fk_shells_sort(sh, n, scratch, shell_cmp); /* equal r2: by mass when short, else in sh's order */
    double sum = m0;
    for (size_t k = 0; k < n; k++) {
        sum += sh[k].m;
        r[k] = sqrt(sh[k].r2);
        cm[k] = sum;
    }
    for (size_t k = n; k-- > 1;) /* M(<= r): equal radii share their total */
        if (r[k - 1] == r[k]) cm[k - 1] = cm[k];
}

/* ---- the full sort ------------------------------------------------------- */

static int profile_sorted(fk_so_prof *w, size_t n, size_t first, size_t nt, const double *rho, size_t low, int final,
                          double *R, double *M)
{
    sorted_profile(w->sh, n, w->tmp, 0, w->r, w->cm);
    double Rl, Ml;
    if (fk_so_crossing(w->r, w->cm, n, first, rho[low], &Rl, &Ml) == -1 && !final) return -1;
    for (size_t t = 0; t < nt; t++) fk_so_crossing(w->r, w->cm, n, first, rho[t], &R[t], &M[t]);
    return 0;
}

/* ---- radial bins --------------------------------------------------------- */

static uint64_t key_of(double r, int bits)
{
    uint64_t u;
    memcpy(&u, &r, sizeof u);
    return u >> (52 - bits);
}

/* Bins w->sh[0..n) (within rmax) into w->tmp, bin by bin in w->sh's order,
 * with each bin's count, mass (summed in that order) and largest radius.
 * 2^bits bins a factor 2 in radius, fewer for fewer particles: from
 * FK_SO_BIN_BITS at 2^17 particles on down to 2 below 2^13, so that the
 * bins stay cheap to walk beside the particles. */
static int bin_bits(size_t n)
{
    int bits = FK_SO_BIN_BITS;
    while (bits > 2 && n < ((size_t)1 << (bits + 10))) bits--;
    return bits;
}

static size_t bin_count(double rmax, int bits, uint64_t *k0)
{
    *k0 = key_of(ldexp(rmax, -FK_SO_BIN_SPAN), bits);
    size_t nb = (size_t)(key_of(rmax, bits) - *k0) + 2; /* + 1: a rounded sqrt(r^2) may pass rmax */
    return nb > FK_SO_NBIN ? FK_SO_NBIN : nb;
}

static size_t bin_of(double r, int bits, uint64_t k0, size_t nb)
{
    uint64_t k = key_of(r, bits);
    return k <= k0 ? 0 : k - k0 >= nb ? nb - 1 : (size_t)(k - k0);
}

static void make_bins(fk_so_prof *w, size_t n, double rmax)
{
    int bits = bin_bits(n);
    uint64_t k0;
    size_t nb = w->nb = bin_count(rmax, bits, &k0);
    memset(w->cnt, 0, nb * sizeof *w->cnt);
    memset(w->sorted, 0, nb * sizeof *w->sorted);
    for (size_t b = 0; b < nb; b++) w->msum[b] = 0, w->rmax[b] = 0;
    for (size_t i = 0; i < n; i++) {
        double r = sqrt(w->sh[i].r2);
        size_t b = bin_of(r, bits, k0, nb);
        w->bin[i] = (uint32_t)b;
        w->cnt[b]++;
        w->msum[b] += w->sh[i].m;
        if (r > w->rmax[b]) w->rmax[b] = r;
    }
    w->off[0] = 0;
    for (size_t b = 0; b < nb; b++) w->off[b + 1] = w->off[b] + w->cnt[b];
    /* scatter, stable, the starts serving as cursors (shifted back after) */
    for (size_t i = 0; i < n; i++) w->tmp[w->off[w->bin[i]]++] = w->sh[i];
    for (size_t b = nb; b-- > 0;) w->off[b + 1] = w->off[b];
    w->off[0] = 0;
}

/* make_bins by every thread: each piece of FK_SO_PIECE particles counted,
 * summed and placed on its own, the pieces' sums added in order. 0 or -1
 * when out of memory. */
static int make_bins_team(fk_so_prof *w, size_t n, double rmax)
{
    int bits = bin_bits(n);
    uint64_t k0;
    size_t nb = w->nb = bin_count(rmax, bits, &k0), np = (n + FK_SO_PIECE - 1) / FK_SO_PIECE;
    uint32_t *pc = calloc(np * nb, sizeof *pc); /* per piece: counts, then where each bin goes */
    double *pm = calloc(np * nb, sizeof *pm), *pr = calloc(np * nb, sizeof *pr);
    if (!pc || !pm || !pr) {
        free(pc), free(pm), free(pr);
        return -1;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t q = 0; q < np; q++) {
        uint32_t *c = pc + q * nb;
        double *m = pm + q * nb, *rm = pr + q * nb;
        for (size_t i = q * FK_SO_PIECE; i < n && i < (q + 1) * FK_SO_PIECE; i++) {
            double r = sqrt(w->sh[i].r2);
            size_t b = bin_of(r, bits, k0, nb);
            w->bin[i] = (uint32_t)b;
            c[b]++;
            m[b] += w->sh[i].m;
            if (r > rm[b]) rm[b] = r;
        }
    }
    memset(w->sorted, 0, nb * sizeof *w->sorted);
    size_t off = 0;
    for (size_t b = 0; b < nb; b++) {
        w->off[b] = off;
        w->cnt[b] = 0, w->msum[b] = 0, w->rmax[b] = 0;
        for (size_t q = 0; q < np; q++) {
            uint32_t c = pc[q * nb + b];
            pc[q * nb + b] = (uint32_t)off;
            off += c;
            w->cnt[b] += c;
            w->msum[b] += pm[q * nb + b];
            if (pr[q * nb + b] > w->rmax[b]) w->rmax[b] = pr[q * nb + b];
        }
    }
    w->off[nb] = off;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t q = 0; q < np; q++) {
        uint32_t *c = pc + q * nb;
        for (size_t i = q * FK_SO_PIECE; i < n && i < (q + 1) * FK_SO_PIECE; i++) w->tmp[c[w->bin[i]]++] = w->sh[i];
    }
    free(pc), free(pm), free(pr);
    return 0;
}

/* One threshold's crossing from the bins: a bin after the profile's start
 * whose smallest possible mean density (the mass of the bins inside it
 * over the sphere of its largest radius) is not below rho_t holds no
 * crossing and is passed by its summary; every other bin from the one
 * holding index first on is sorted (once: w->sorted) and walked particle
 * by particle. */
static int walk_bins(fk_so_prof *w, size_t first, double rho_t, double *R, double *M)
{
    cross s;
    cross_init(&s, first, rho_t);
    double ma = 0;
    for (size_t b = 0; b < w->nb && s.st == -1; b++) {
        size_t c = w->cnt[b], k0 = w->off[b];
        if (!c) continue;
        double mb = ma + w->msum[b], rb = w->rmax[b];
        if (k0 + c <= first) {
            /* wholly before the profile's start */
        } else if (s.started && ma / (vol * rb * rb * rb) >= rho_t) {
            /* every sphere in it holds at least ma within at most rb: rho >= rho_t exactly as
             * cross_run computes it (sums of non-negative masses, products and a quotient that
             * rounding keeps monotone) */
            cross_skip(&s, rb, mb);
        } else {
            fk_shell *a = w->tmp + k0;
            /* sorted_profile needs scratch of c shells: w->sh is free once binned */
            if (!w->sorted[b]) sort_shells(a, c, w->sh), w->sorted[b] = 1;
            double sum = ma;
            for (size_t k = 0; k < c; k++) {
                sum += a[k].m;
                w->r[k] = sqrt(a[k].r2);
                w->cm[k] = sum;
            }
            for (size_t k = c; k-- > 1;)
                if (w->r[k - 1] == w->r[k]) w->cm[k - 1] = w->cm[k];
            cross_run(&s, w->r, w->cm, k0, c);
        }
        ma = mb;
    }
    *R = s.R, *M = s.M;
    return s.st;
}

static int profile_bins(fk_so_prof *w, size_t n, double rmax, size_t first, size_t nt, const double *rho, size_t low,
                        int final, int team, double *R, double *M)
{
    if (!team)
        make_bins(w, n, rmax);
    else if (make_bins_team(w, n, rmax))
        return FK_ENOMEM;
    double Rl, Ml;
    if (walk_bins(w, first, rho[low], &Rl, &Ml) == -1 && !final) {
        fk_shell *t = w->sh; /* the particles back in w->sh, for the caller to add to */
        w->sh = w->tmp, w->tmp = t;
        return -1;
    }
    for (size_t t = 0; t < nt; t++) walk_bins(w, first, rho[t], &R[t], &M[t]);
    return 0;
}

int fk_so_profile(fk_so_prof *w, size_t n, double rmax, int method, size_t first, size_t nt, const double *rho,
                  size_t low, int final, int team, double *R, double *M)
{
    int bins = method == FK_SO_BINS || (method == FK_SO_AUTO && n >= FK_SO_BINS_MIN);
    if (bins && rmax > 0 && isfinite(rmax)) return profile_bins(w, n, rmax, first, nt, rho, low, final, team, R, M);
    return profile_sorted(w, n, first, nt, rho, low, final, R, M);
}
