/* dist_link.c - friends-of-friends linking distributed over MPI ranks (see dist_link.h); a stub without MPI. */
#include "dist_link.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "clock.h"
#include "dist.h"
#include "dist_alltoall.h"
#include "dist_join.h"
#include "dist_rcb.h"
#include "gpu.h"
#include "attach.h"
#include "kdtree.h"

#ifndef FK_HAVE_MPI

static int nompi(fk_error *err)
{
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
}

int fk_distlink_run(const fk_distlink_in *in, uint64_t *const *gmin, fk_distlink_report *rep, fk_error *err)
{
    (void)in;
    (void)gmin;
    (void)rep;
    return nompi(err);
}

int fk_distlink_gather(const fk_distlink_report *mine, fk_distlink_report *all, fk_error *err)
{
    (void)mine;
    (void)all;
    return nompi(err);
}

int fk_distlink_attach(const fk_distlink_in *in, const uint8_t *type, unsigned link_types, unsigned attach_types,
                       uint64_t *const *gmin, fk_distlink_report *rep, uint64_t *attached, uint64_t *nprim,
                       uint64_t *nsec, fk_error *err)
{
    (void)in, (void)type, (void)link_types, (void)attach_types, (void)gmin, (void)rep, (void)attached;
    (void)nprim, (void)nsec;
    return nompi(err);
}

#else

#include <mpi.h>
#include <omp.h>

int fk_distlink_gather(const fk_distlink_report *mine, fk_distlink_report *all, fk_error *err)
{
    (void)err;
    MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, 0, fk_dist_comm());
    return FK_OK;
}

/* A node of the merge: a component's key and lowest ID. */
typedef struct node {
    uint64_t key, mid;
} node;

/* The state of one run on one rank. */
typedef struct run {
    int rank, size, sixd, nlev;
    const fk_distlink_in *in;
    fk_distlink_report *rep;
    uint64_t *off; /* size + 1: the global stream index of each rank's first particle */
    /* the slabs */
    int axis;
    double amin, amax, period, margin;
    double scale; /* bins per unit length along the axis (0: every particle in bin 0) */
    uint32_t *cut; /* size + 1 bin indices: rank d owns bins [cut[d], cut[d+1]) */
    /* or boxes (rcb_on): the bisection's tree, and the bounds of every particle */
    int rcb_on;
    fk_rcb rcb;
    double gmn[3], gmx[3];
    /* owned particles (no) and ghosts (ng), in the rank's own order: owned by
     * source rank and, within one, in the source's order, then the ghosts */
    uint64_t no, ng;
    float *pos, *vel;     /* (no + ng) x 3 (the CPU tree build reorders them) */
    int idw;              /* bytes of an ID here: 4 when every rank's fit, else 8 */
    void *oid;            /* no IDs of idw bytes: each owned particle's          */
    uint64_t *ostart;     /* size + 1: where each source rank's owned particles
                             start, sources in rank order, this rank's own too */
    /* where the rank's own input particles went (send_owned), for the labels'
     * way back: each one's owner and slot among the particles sent, the
     * count from each source rank, and of this rank's own those that stayed
     * (own) and the slots before them (below) */
    int *dest;
    uint32_t *slot; /* in the buffer grouped by destination (n < 2^32) */
    uint64_t *rcnt, own, below;
    uint32_t *gsrc;       /* ng: the owner rank of each ghost                      */
    uint32_t *gidx;       /* ng: its index among the owner's owned particles        */
    /* the local link's answers for each level: key[k][i] (no + ng) the lowest
     * owned index in i's local group (UINT32_MAX: a group of ghosts only),
     * low[k][j] (no) the lowest ID of an owned particle in j's local group */
    uint32_t *key[FK_LEVELS_MAX];
    void *low[FK_LEVELS_MAX]; /* of idw bytes */
    /* each level's groups that crossed ranks, after the merge: their keys
     * (sorted), each one's answer (the global group's root and lowest ID),
     * and bit kk set when group kk is one */
    uint32_t *bkeys[FK_LEVELS_MAX];
    uint64_t nb[FK_LEVELS_MAX];
    node *ans[FK_LEVELS_MAX];
    uint8_t *bound[FK_LEVELS_MAX];
} run;

static void *xmalloc(size_t n)
{
    return malloc(n ? n : 1);
}

/* An array of the rank's particles: huge pages, faulted in on every core. */
static void *big(size_t n)
{
    return fk_big_alloc(n ? n : 1);
}

static inline uint64_t get_id(const void *a, uint64_t i, int w)
{
    return w == 4 ? ((const uint32_t *)a)[i] : ((const uint64_t *)a)[i];
}

static inline void put_id(void *a, uint64_t i, int w, uint64_t v)
{
    if (w == 4)
        ((uint32_t *)a)[i] = (uint32_t)v;
    else
        ((uint64_t *)a)[i] = v;
}

/* The coordinate's bin, the same arithmetic on every rank. */
static uint32_t bin_of(const run *r, float x)
{
    if (!(r->scale > 0)) return 0;
    double b = floor(((double)x - r->amin) * r->scale); /* a multiply: a division costs as much as the rest */
    if (b < 0) return 0;
    if (b > FK_DIST_BINS - 1) return FK_DIST_BINS - 1;
    return (uint32_t)b;
}

static int owner_of(const run *r, float x)
{
    uint32_t b = bin_of(r, x);
    int lo = 0, hi = r->size - 1; /* the last d with cut[d] <= b */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (r->cut[mid] <= b)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Rank d's slab [lo, hi] along the axis, in coordinates (its bins' edges). */
static void slab(const run *r, int d, double *lo, double *hi)
{
    double w = r->amax - r->amin;
    *lo = r->amin + w * r->cut[d] / FK_DIST_BINS;
    *hi = r->amin + w * r->cut[d + 1] / FK_DIST_BINS;
}

/* Whether x lies within the margin of [lo, hi] along the axis, periodically. */
static int near(const run *r, double lo, double hi, float x)
{
    for (int s = -1; s <= 1; s++) {
        if (s && !(r->period > 0)) continue;
        double xs = (double)x + s * r->period;
        double gap = xs < lo ? lo - xs : xs > hi ? xs - hi : 0;
        if (gap <= r->margin) return 1;
    }
    return 0;
}

/* Whether a particle at x may have a friend in rank d's slab: within the
 * margin of it, across the period in a periodic box. An empty slab (no
 * bins) needs no ghosts. */
static int reaches(const run *r, int d, float x)
{
    if (r->cut[d] == r->cut[d + 1]) return 0;
    double lo, hi;
    slab(r, d, &lo, &hi);
    return near(r, lo, hi, x);
}

/* After every rank agreed on st (this rank's status so far): sends
 * counts[d] records of stride bytes from sbuf (grouped by destination) to
 * every rank d; *rbuf (malloc'd, else NULL) gets what came, grouped by
 * source, *nrecv records of which rcounts[s] from rank s (dist_alltoall.h:
 * any number, in rounds where MPI's int counts need them). Frees sbuf and
 * counts in every case. Collective; failures agreed on. */
static int exchange(run *r, int st, void *sbuf, uint64_t *counts, size_t stride, void **rbuf, uint64_t *rcounts,
                    uint64_t *nrecv, fk_error *err)
{
    *rbuf = NULL;
    *nrecv = 0;
    st = fk_dist_agree(st, err, NULL);
    double t0 = fk_now();
    if (!st) st = fk_dist_alltoall(sbuf, counts, stride, rbuf, rcounts, nrecv, err);
    r->rep->t_moved += fk_now() - t0;
    if (!st) {
        uint64_t ns = 0;
        for (int d = 0; d < r->size; d++) ns += counts[d];
        r->rep->bytes_sent += (ns - counts[r->rank]) * stride;
        r->rep->bytes_recv += (*nrecv - rcounts[r->rank]) * stride;
    }
    free(sbuf);
    free(counts);
    return st;
}

/* The counts c[u R + d] of thread u for rank d (T threads, R ranks) become
 * each thread's first slot in rank order, threads in order within a rank;
 * cnt[d] gets the rank's total. Returns the sum of all. */
static uint64_t offsets(uint64_t *c, int T, int R, uint64_t *cnt)
{
    uint64_t run = 0;
    for (int d = 0; d < R; d++) {
        uint64_t start = run;
        for (int u = 0; u < T; u++) {
            uint64_t k = c[(size_t)u * (size_t)R + d];
            c[(size_t)u * (size_t)R + d] = run;
            run += k;
        }
        cnt[d] = run - start;
    }
    return run;
}

/* A counting sort of n items by dest (0 .. R-1, or -1: none) on every
 * thread: slot[i] gets item i's place in a buffer grouped by destination,
 * cnt[d] the items of d. The same places for every thread count: the items
 * of a destination keep their order. */
static int bucket(const int *dest, uint64_t n, int R, uint64_t *cnt, uint32_t *slot, fk_error *err)
{
    int T = omp_get_max_threads();
    uint64_t *c = calloc((size_t)T * (size_t)R, sizeof *c);
    if (!c) return fk_fail(err, FK_ENOMEM, "out of memory sorting by rank");
    #pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        uint64_t a = n * (uint64_t)t / (uint64_t)T, b = n * (uint64_t)(t + 1) / (uint64_t)T;
        uint64_t *my = c + (size_t)t * (size_t)R;
        for (uint64_t i = a; i < b; i++)
            if (dest[i] >= 0) my[dest[i]]++;
        #pragma omp barrier
        #pragma omp single
        offsets(c, T, R, cnt);
        for (uint64_t i = a; i < b; i++)
            if (dest[i] >= 0) slot[i] = (uint32_t)my[dest[i]]++; /* n < 2^32 (fk_distlink_run) */
    }
    free(c);
    return FK_OK;
}

/* The domains: slabs along the axis of widest extent, cut at the global
 * quantiles, or with rcb_on the boxes of fk_rcb_build; the ghosts' margin
 * is reach (the longest linking length, or the attaching reach) widened for
 * rounding. */
static int decompose(run *r, double reach, fk_error *err)
{
    const fk_distlink_in *in = r->in;
    /* the bounds in floats (exact: the coordinates are floats), then doubles for MPI */
    float fmn[3] = {HUGE_VALF, HUGE_VALF, HUGE_VALF}, fmx[3] = {-HUGE_VALF, -HUGE_VALF, -HUGE_VALF};
    #pragma omp parallel for schedule(static) reduction(min : fmn[:3]) reduction(max : fmx[:3])
    for (uint64_t i = 0; i < in->n; i++)
        for (int k = 0; k < 3; k++) {
            const float x = in->pos[3 * i + k];
            fmn[k] = x < fmn[k] ? x : fmn[k];
            fmx[k] = x > fmx[k] ? x : fmx[k];
        }
    double mn[3], mx[3], gmn[3], gmx[3];
    for (int k = 0; k < 3; k++) mn[k] = fmn[k], mx[k] = fmx[k];
    MPI_Allreduce(mn, gmn, 3, MPI_DOUBLE, MPI_MIN, fk_dist_comm());
    MPI_Allreduce(mx, gmx, 3, MPI_DOUBLE, MPI_MAX, fk_dist_comm());
    r->axis = 0;
    for (int k = 1; k < 3; k++)
        if (gmx[k] - gmn[k] > gmx[r->axis] - gmn[r->axis]) r->axis = k;
    r->amin = gmn[r->axis];
    r->amax = gmx[r->axis];
    if (!(r->amax >= r->amin)) r->amin = r->amax = 0; /* no particles anywhere */
    r->scale = r->amax > r->amin ? FK_DIST_BINS / (r->amax - r->amin) : 0;
    for (int k = 0; k < 3; k++) {
        r->gmn[k] = gmx[k] >= gmn[k] ? gmn[k] : 0; /* no particles anywhere: 0 */
        r->gmx[k] = gmx[k] >= gmn[k] ? gmx[k] : 0;
    }
    /* The margin: the reach, widened for the rounding of a binary32
     * separation and its wrap (a few units in the last place of the largest
     * coordinate); a wider margin only adds ghosts. */
    double big = fabs(r->amin) > fabs(r->amax) ? fabs(r->amin) : fabs(r->amax);
    for (int k = 0; r->rcb_on && k < 3; k++) { /* boxes: every axis's */
        if (fabs(r->gmn[k]) > big) big = fabs(r->gmn[k]);
        if (fabs(r->gmx[k]) > big) big = fabs(r->gmx[k]);
    }
    if (r->period > big) big = r->period;
    r->margin = reach * (1 + 1e-5) + big * 0x1p-20;
    if (r->rcb_on) /* boxes (dist_rcb.h) */
        return fk_rcb_build(in->pos, in->n, r->gmn, r->gmx, r->margin, r->period, &r->rcb, err);

    uint64_t *h = xmalloc(FK_DIST_BINS * sizeof *h), *gh = xmalloc(FK_DIST_BINS * sizeof *gh);
    int st = (!h || !gh) ? fk_fail(err, FK_ENOMEM, "out of memory for the slabs' histogram") : FK_OK;
    st = fk_dist_agree(st, err, NULL);
    if (st) {
        free(h);
        free(gh);
        return st;
    }
    memset(h, 0, FK_DIST_BINS * sizeof *h);
    #pragma omp parallel for schedule(static) reduction(+ : h[:FK_DIST_BINS])
    for (uint64_t i = 0; i < in->n; i++) h[bin_of(r, in->pos[3 * i + r->axis])]++;
    MPI_Allreduce(h, gh, FK_DIST_BINS, MPI_UINT64_T, MPI_SUM, fk_dist_comm());
    /* cut[d]: the first bin b whose particles before it reach d/R of all */
    uint64_t N = r->off[r->size], cum = 0;
    uint32_t b = 0;
    r->cut[0] = 0;
    for (int d = 1; d < r->size; d++) {
        uint64_t target = (uint64_t)((long double)N * d / r->size);
        while (b < FK_DIST_BINS && cum < target) cum += gh[b++];
        r->cut[d] = b;
    }
    r->cut[r->size] = FK_DIST_BINS;
    free(h);
    free(gh);
    return FK_OK;
}

/* The parts of an owned particle that travel, each exchanged as an array of its own. */
enum { F_POS, F_VEL, F_ID };

/* Part f (size bytes) of every input particle: of those staying on this
 * rank straight into dst at their owned place (the gap at rbelow, the
 * rank's own in its order), of the others into sb, grouped by destination
 * (the slots of bucket, this rank's own taken out). */
static void pack(const run *r, int f, size_t size, unsigned char *sb, void *dst)
{
    const fk_distlink_in *in = r->in;
    const int me = r->rank;
    const uint64_t own = r->own, below = r->below, rbelow = r->ostart[me];
    #pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < in->n; i++) {
        const uint64_t at = r->slot[i];
        unsigned char *p = r->dest[i] == me ? (unsigned char *)dst + size * (rbelow + (at - below))
                                            : sb + size * (at < below ? at : at - own);
        if (f == F_POS) {
            memcpy(p, in->pos + 3 * i, 12);
        } else if (f == F_VEL) {
            memcpy(p, in->vel + 3 * i, 12);
        } else if (size == 4) { /* F_ID */
            uint32_t id = (uint32_t)in->id[i];
            memcpy(p, &id, 4);
        } else {
            memcpy(p, &in->id[i], 8);
        }
    }
}

/* Owned particles to the ranks of their domains: each one's position (and
 * velocity) and ID (idw bytes), an array at a time,
 * every one exchanged straight into its final array (fk_dist_alltoall_at:
 * no received copy to unpack), through one send buffer of the largest part
 * (12 bytes a particle) packed again for each; those that stay on this rank
 * are copied straight from the input into the gap the others leave. The
 * owners receive them grouped by source rank in the source's order, which
 * is the owned order; the slots (r->dest, r->slot) are kept, since the
 * labels come back in the order the particles went. */
static int send_owned(run *r, fk_error *err)
{
    const fk_distlink_in *in = r->in;
    const int R = r->size, me = r->rank, w = r->idw;
    uint64_t *cnt = xmalloc(R * sizeof *cnt);
    r->rcnt = xmalloc(R * sizeof *r->rcnt);
    r->ostart = xmalloc((R + 1) * sizeof *r->ostart);
    r->slot = big(in->n * sizeof *r->slot);
    r->dest = big(in->n * sizeof *r->dest);
    int *dest = r->dest;
    unsigned char *sb = NULL;
    int st = (!cnt || !r->rcnt || !r->ostart || !r->slot || !dest)
                 ? fk_fail(err, FK_ENOMEM, "out of memory sending particles")
                 : FK_OK;
    if (!st) {
        #pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < in->n; i++)
            dest[i] = r->rcb_on ? fk_rcb_owner(&r->rcb, in->pos + 3 * i) : owner_of(r, in->pos[3 * i + r->axis]);
        st = bucket(dest, in->n, R, cnt, r->slot, err);
    }
    if (!st) {
        r->own = cnt[me]; /* staying here */
        r->below = 0;     /* in the buffer for lower ranks */
        for (int d = 0; d < me; d++) r->below += cnt[d];
        cnt[me] = 0;
    }
    if ((st = fk_dist_agree(st, err, NULL))) {
        free(cnt);
        return st;
    }
    double t0 = fk_now();
    st = fk_dist_counts(cnt, r->rcnt, err);
    r->rep->t_moved += fk_now() - t0;
    /* The owned particles by source rank, this rank's own in its place. */
    r->ostart[0] = 0;
    for (int s = 0; s < R; s++) r->ostart[s + 1] = r->ostart[s] + (s == me ? r->own : r->rcnt[s]);
    const uint64_t no = r->no = r->ostart[R];
    if (!st && no >= UINT32_MAX)
        st = fk_fail(err, FK_EUNSUP, "rank %d owns %" PRIu64 " particles: at most %" PRIu32 " per rank (run more ranks)",
                     me, no, UINT32_MAX - 1);
    else if (!st && (!(r->oid = big(no * (size_t)w)) || !(r->pos = big(no * 12)) ||
                     (r->sixd && !(r->vel = big(no * 12)))))
        st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " particles", me, no);
    else if (!st && !(sb = big((in->n - r->own) * 12)))
        st = fk_fail(err, FK_ENOMEM, "out of memory sending particles");
    st = fk_dist_agree(st, err, NULL);
    const struct {
        int f;
        size_t size;
        void *dst;
    } part[] = {{F_POS, 12, r->pos}, {F_VEL, 12, r->vel}, {F_ID, (size_t)w, r->oid}};
    for (size_t p = 0; !st && p < sizeof part / sizeof *part; p++) {
        if (part[p].f == F_VEL && !r->sixd) continue;
        pack(r, part[p].f, part[p].size, sb, part[p].dst);
        t0 = fk_now();
        st = fk_dist_alltoall_at(sb, cnt, part[p].size, part[p].dst, r->rcnt, r->ostart, err);
        r->rep->t_moved += fk_now() - t0;
        for (int d = 0; !st && d < R; d++) /* cnt[me] and rcnt[me] are 0: the moved records only */
            r->rep->bytes_sent += cnt[d] * part[p].size, r->rep->bytes_recv += r->rcnt[d] * part[p].size;
    }
    free(sb);
    free(cnt);
    return st;
}

/* The ranks other than this one that owned particle i is a ghost of (out:
 * room for R): their number. Slabs: owned particles deeper in this slab
 * than twice the margin (between in_lo and in_hi) reach no other; boxes
 * likewise (fk_rcb's deep), the others found down the bisection's tree. */
static int ghost_ranks(const run *r, uint64_t i, double in_lo, double in_hi, int *out)
{
    const float *p = r->pos + 3 * i;
    int n = 0;
    if (r->rcb_on) {
        const fk_rcb_node *b = &r->rcb.node[r->rcb.leaf[r->rank]];
        const double m2 = 2 * r->margin;
        if (r->rcb.deep && p[0] - b->lo[0] > m2 && b->hi[0] - p[0] > m2 && p[1] - b->lo[1] > m2 &&
            b->hi[1] - p[1] > m2 && p[2] - b->lo[2] > m2 && b->hi[2] - p[2] > m2)
            return 0;
        return fk_rcb_reaches(&r->rcb, p, r->rank, out);
    }
    const float x = p[r->axis];
    if (x > in_lo && x < in_hi) return 0;
    for (int d = 0; d < r->size; d++)
        if (d != r->rank && reaches(r, d, x)) out[n++] = d;
    return n;
}

/* Copies of the owned particles near other domains to their ranks. */
static int send_ghosts(run *r, fk_error *err)
{
    int R = r->size;
    size_t stride = 12 + (r->sixd ? 12 : 0) + 4;
    uint64_t *cnt = xmalloc(R * sizeof *cnt);
    uint64_t *rcnt = xmalloc(R * sizeof *rcnt);
    int T = omp_get_max_threads();
    uint64_t *at = calloc((size_t)T * (size_t)R, sizeof *at); /* each thread's place in each rank's part */
    int st = (!cnt || !rcnt || !at) ? fk_fail(err, FK_ENOMEM, "out of memory for the ghosts") : FK_OK;
    unsigned char *sb = NULL;
    /* Owned particles deeper in this slab than twice the margin reach no
     * other slab, in the box or across its period (the slabs lie within one
     * period): the exact test is for the others only. */
    double in_lo = HUGE_VAL, in_hi = -HUGE_VAL;
    if (!r->rcb_on && (!(r->period > 0) || r->amax - r->amin <= r->period)) {
        slab(r, r->rank, &in_lo, &in_hi);
        in_lo += 2 * r->margin;
        in_hi -= 2 * r->margin;
    }
    if (!st) {
        /* Two passes over each thread's share of the particles: count, then fill. */
        #pragma omp parallel num_threads(T)
        {
            int t = omp_get_thread_num();
            uint64_t a = r->no * (uint64_t)t / (uint64_t)T, b = r->no * (uint64_t)(t + 1) / (uint64_t)T;
            uint64_t *my = at + (size_t)t * (size_t)R;
            int *to = malloc((size_t)R * sizeof *to);
            if (!to) {
                #pragma omp atomic write
                st = FK_ENOMEM;
            }
            #pragma omp barrier
            for (uint64_t i = a; !st && i < b; i++) {
                const int nd = ghost_ranks(r, i, in_lo, in_hi, to);
                for (int q = 0; q < nd; q++) my[to[q]]++;
            }
            #pragma omp barrier
            #pragma omp single
            {
                uint64_t run = offsets(at, T, R, cnt);
                if (st)
                    st = fk_fail(err, FK_ENOMEM, "out of memory for the ghosts");
                else if (!(sb = xmalloc(run * stride)))
                    st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " ghosts", run);
            }
            for (uint64_t i = a; !st && i < b; i++) {
                const int nd = ghost_ranks(r, i, in_lo, in_hi, to);
                for (int q = 0; q < nd; q++) {
                    unsigned char *p = sb + stride * my[to[q]]++;
                    uint32_t j = (uint32_t)i;
                    memcpy(p, r->pos + 3 * i, 12);
                    if (r->sixd) memcpy(p + 12, r->vel + 3 * i, 12);
                    memcpy(p + stride - 4, &j, 4);
                }
            }
            free(to);
        }
    }
    free(at);
    void *rb;
    uint64_t nr;
    st = exchange(r, st, sb, cnt, stride, &rb, rcnt, &nr, err);
    if (st) {
        free(rcnt);
        return st;
    }
    uint64_t nl = r->no + nr;
    r->ng = nr;
    float *pos = NULL, *vel = NULL;
    if (nl >= UINT32_MAX)
        st = fk_fail(err, FK_EUNSUP, "rank %d holds %" PRIu64 " particles with its ghosts: at most %" PRIu32 " per rank (run more ranks)",
                     r->rank, nl, UINT32_MAX - 1);
    else {
        if ((pos = realloc(r->pos, nl * 12 + 1))) r->pos = pos;
        if (r->sixd && (vel = realloc(r->vel, nl * 12 + 1))) r->vel = vel;
        r->gsrc = xmalloc(nr * 4);
        r->gidx = xmalloc(nr * 4);
        if (!pos || (r->sixd && !vel) || !r->gsrc || !r->gidx)
            st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " ghosts", r->rank, nr);
    }
    if (!st) {
        const unsigned char *p = rb;
        uint64_t g = 0;
        for (int s = 0; s < R; s++)
            for (uint64_t k = 0; k < rcnt[s]; k++, g++, p += stride) {
                memcpy(r->pos + 3 * (r->no + g), p, 12);
                if (r->sixd) memcpy(r->vel + 3 * (r->no + g), p + 12, 12);
                r->gsrc[g] = (uint32_t)s;
                memcpy(&r->gidx[g], p + stride - 4, 4);
            }
    }
    free(rb);
    free(rcnt);
    return fk_dist_agree(st, err, NULL);
}

static int link_pieces(run *r, uint64_t npieces, fk_error *err);

/* *p = min(*p, v), safe against other threads doing the same (the
 * minimum does not depend on their order). */
static void min_u64(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static void min_u32(uint32_t *p, uint32_t v)
{
    uint32_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* The answers of level k (run's key and low) from sinks over the rank's
 * particles: sink[t] names t's group (any one member), perm[t] is t's
 * index in the rank's own order (NULL: t itself). What fk_gpu_link_owned
 * computes on the GPU. */
static int answers(run *r, int k, const uint32_t *sink, const uint32_t *perm, fk_error *err)
{
    uint64_t nl = r->no + r->ng, no = r->no;
    const int w = r->idw;
    uint32_t *kmin = big(nl * 4);
    uint64_t *idmin = big(nl * 8);
    r->key[k] = big(nl * 4);
    r->low[k] = big(no * (size_t)w);
    if (!kmin || !idmin || !r->key[k] || !r->low[k]) {
        free(kmin), free(idmin);
        return fk_fail(err, FK_ENOMEM, "out of memory for the groups' keys");
    }
    uint32_t *key = r->key[k];
    void *low = r->low[k];
    #pragma omp parallel
    {
        #pragma omp for schedule(static)
        for (uint64_t t = 0; t < nl; t++) kmin[t] = UINT32_MAX, idmin[t] = UINT64_MAX;
        #pragma omp for schedule(static)
        for (uint64_t t = 0; t < nl; t++) {
            uint32_t j = perm ? perm[t] : (uint32_t)t;
            if (j >= no) continue;
            min_u32(&kmin[sink[t]], j);
            min_u64(&idmin[sink[t]], get_id(r->oid, j, w));
        }
        #pragma omp for schedule(static)
        for (uint64_t t = 0; t < nl; t++) {
            uint32_t j = perm ? perm[t] : (uint32_t)t;
            key[j] = kmin[sink[t]];
            if (j < no) put_id(low, j, w, idmin[sink[t]]);
        }
    }
    free(kmin);
    free(idmin);
    return FK_OK;
}

/* The local link over owned particles and ghosts, every level: on the GPU
 * the whole of it there (fk_gpu_link_owned: one upload, one download of
 * the answers); on the CPU the tree, the linker and the answers here; in
 * pieces when the whole does not fit the GPU or a piece size is given. */
static int link_local(run *r, fk_error *err)
{
    uint64_t nl = r->no + r->ng, piece = r->in->piece;
    const int gpu = r->in->gpu && !r->in->brute;
    const uint32_t S = r->in->leafsize;
    if (!piece && gpu && r->in->gpu_mem) {
        /* Pieces that fit the GPU: the memory of the whole, over 80% of what
         * is free, pieces enough; a piece's ghosts make it a little larger. */
        double need = (double)fk_gpu_link_owned_bytes(nl, r->no, S, r->sixd, r->idw),
               have = 0.8 * (double)r->in->gpu_mem;
        if (need > have) piece = (uint64_t)((double)r->no / ceil(1.25 * need / have)) + 1;
    }
    if (piece && r->no > piece) return link_pieces(r, (r->no + piece - 1) / piece, err);
    r->rep->pieces = 1;
    int st = FK_OK;
    if (gpu) {
        for (int k = 0; !st && k < r->nlev; k++)
            if (!(r->key[k] = big(nl * 4)) || !(r->low[k] = big(r->no * (size_t)r->idw)))
                st = fk_fail(err, FK_ENOMEM, "out of memory for the groups' keys");
        double t0 = fk_now();
        if (!st)
            st = fk_gpu_link_owned(r->pos, r->vel, nl, r->no, r->oid, r->idw, S, 0, 0, r->in->lo, r->nlev, r->key,
                                   r->low, r->rep->link.stats, &r->rep->link.gpu, err);
        r->rep->link.total = fk_now() - t0;
        return fk_dist_agree(st, err, NULL);
    }
    fk_tree tree;
    uint32_t *perm = NULL, *sink[FK_LEVELS_MAX] = {0};
    memset(&tree, 0, sizeof tree);
    st = fk_tree_build_cpu(r->pos, nl, S, &tree, &perm, err);
    if (!st && r->sixd) {
        float *v = xmalloc(nl * 12);
        if (!v)
            st = fk_fail(err, FK_ENOMEM, "out of memory for velocities");
        else {
            #pragma omp parallel for schedule(static)
            for (uint64_t t = 0; t < nl; t++) memcpy(v + 3 * t, r->vel + 3 * (uint64_t)perm[t], 12);
            free(r->vel);
            r->vel = v;
        }
    }
    for (int k = 0; !st && k < r->nlev; k++)
        if (!(sink[k] = xmalloc(nl * 4))) st = fk_fail(err, FK_ENOMEM, "out of memory for sinks");
    if (!st) {
        fk_link_job job = {nl, r->pos, r->vel, &tree, r->in->lo, r->nlev, r->in->brute, r->in->gpu, NULL, 0, 0, NULL, 0};
        st = fk_link_run(&job, sink, &r->rep->link, err);
    }
    for (int k = 0; !st && k < r->nlev; k++) st = answers(r, k, sink[k], perm, err);
    for (int k = 0; k < FK_LEVELS_MAX; k++) free(sink[k]);
    free(perm);
    fk_tree_free(&tree);
    return fk_dist_agree(st, err, NULL);
}

/* Union-find over a rank's particles, the lower index the root (links only point down). */
static uint32_t uf_find(uint32_t *up, uint32_t i)
{
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
}

static void uf_join(uint32_t *up, uint32_t a, uint32_t b)
{
    a = uf_find(up, a);
    b = uf_find(up, b);
    if (a < b)
        up[b] = a;
    else if (b < a)
        up[a] = b;
}

typedef struct keyed {
    float x;
    uint32_t i;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return (p->i > q->i) - (p->i < q->i);
}

/* link_local in pieces of at most r->piece owned particles: each piece is a
 * run of the owned particles in axis order with every particle of the rank
 * within the margin of it, built and linked alone; every piece's components
 * are joined in one union-find per level over the rank's particles. A link
 * with an owned end is found in the piece whose run holds that end, so the
 * components that hold owned particles are those link_local finds (their
 * lowest members may differ: merge needs only one label per component).
 * The sinks are then in the rank's own order (perm the identity). */
static int link_pieces(run *r, uint64_t npieces, fk_error *err)
{
    uint64_t nl = r->no + r->ng;
    int st = FK_OK;
    keyed *ord = xmalloc(r->no * sizeof *ord);
    uint32_t *member = xmalloc(nl * 4);
    float *ppos = xmalloc(nl * 12), *pvel = r->sixd ? xmalloc(nl * 12) : NULL;
    uint32_t *psink[FK_LEVELS_MAX] = {0}, *sink[FK_LEVELS_MAX] = {0};
    if (!ord || !member || !ppos || (r->sixd && !pvel)) st = fk_fail(err, FK_ENOMEM, "out of memory for the pieces");
    for (int k = 0; !st && k < r->nlev; k++)
        if (!(sink[k] = xmalloc(nl * 4)) || !(psink[k] = xmalloc(nl * 4)))
            st = fk_fail(err, FK_ENOMEM, "out of memory for sinks");
    if (!st) {
        for (int k = 0; k < r->nlev; k++)
            for (uint64_t i = 0; i < nl; i++) sink[k][i] = (uint32_t)i;
        for (uint64_t i = 0; i < r->no; i++) ord[i] = (keyed){r->pos[3 * i + r->axis], (uint32_t)i};
        qsort(ord, r->no, sizeof *ord, cmp_keyed);
    }
    fk_link_report *lr = &r->rep->link;
    memset(lr, 0, sizeof *lr);
    for (uint64_t p = 0; !st && p < npieces; p++) {
        uint64_t a = r->no * p / npieces, b = r->no * (p + 1) / npieces, m = 0;
        if (a == b) continue;
        double lo = ord[a].x, hi = ord[b - 1].x;
        for (uint64_t q = a; q < b; q++) member[m++] = ord[q].i;
        for (uint64_t i = 0; i < nl; i++) {
            if (i < r->no) {
                float x = r->pos[3 * i + r->axis];
                keyed k = {x, (uint32_t)i};
                if (cmp_keyed(&k, &ord[a]) >= 0 && cmp_keyed(&k, &ord[b - 1]) <= 0) continue; /* in the run */
            }
            if (near(r, lo, hi, r->pos[3 * i + r->axis])) member[m++] = (uint32_t)i;
        }
        for (uint64_t q = 0; q < m; q++) {
            memcpy(ppos + 3 * q, r->pos + 3 * (uint64_t)member[q], 12);
            if (r->sixd) memcpy(pvel + 3 * q, r->vel + 3 * (uint64_t)member[q], 12);
        }
        fk_tree tree;
        uint32_t *perm = NULL;
        memset(&tree, 0, sizeof tree);
        st = fk_tree_build_cpu(ppos, m, r->in->leafsize, &tree, &perm, err);
        float *tvel = NULL;
        if (!st && r->sixd) {
            if (!(tvel = xmalloc(m * 12)))
                st = fk_fail(err, FK_ENOMEM, "out of memory for a piece's velocities");
            else
                for (uint64_t t = 0; t < m; t++) memcpy(tvel + 3 * t, pvel + 3 * (uint64_t)perm[t], 12);
        }
        fk_link_report rep;
        if (!st) {
            fk_link_job job = {m, ppos, tvel, &tree, r->in->lo, r->nlev, r->in->brute, r->in->gpu, NULL, 0, 0, NULL, 0};
            st = fk_link_run(&job, psink, &rep, err);
        }
        for (int k = 0; !st && k < r->nlev; k++) {
            for (uint64_t t = 0; t < m; t++) uf_join(sink[k], member[perm[t]], member[perm[psink[k][t]]]);
            lr->seconds[k] += rep.seconds[k];
            lr->stats[k].pair_tests += rep.stats[k].pair_tests;
            lr->stats[k].node_tests += rep.stats[k].node_tests;
        }
        if (!st) lr->total += rep.total;
        free(tvel);
        free(perm);
        fk_tree_free(&tree);
    }
    for (int k = 0; !st && k < r->nlev; k++) {
        for (uint64_t i = 0; i < nl; i++) sink[k][i] = uf_find(sink[k], (uint32_t)i);
        st = answers(r, k, sink[k], NULL, err);
    }
    r->rep->pieces = st ? 0 : npieces;
    free(ord), free(member), free(ppos), free(pvel);
    for (int k = 0; k < FK_LEVELS_MAX; k++) free(psink[k]), free(sink[k]);
    return fk_dist_agree(st, err, NULL);
}


static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_edge(const void *a, const void *b)
{
    const uint64_t *p = a, *q = b;
    if (p[0] != q[0]) return p[0] < q[0] ? -1 : 1;
    return (p[1] > q[1]) - (p[1] < q[1]);
}

/* The slot of key kk among the sorted bkeys (nb of them), or -1. */
static int64_t slot_of(const uint32_t *bkeys, uint64_t nb, uint32_t kk)
{
    uint64_t lo = 0, hi = nb;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (bkeys[mid] < kk)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nb && bkeys[lo] == kk ? (int64_t)lo : -1;
}

/* The name across ranks of owned particle j's group, j its lowest owned
 * index: the rank above j's 32 bits, unique over the ranks. The merge
 * needs only unique names (a component's answer is its lowest ID, found
 * over all its parts), so no particle's index on its source travels. */
static uint64_t gkey(const run *r, uint32_t j)
{
    return (uint64_t)r->rank << 32 | j;
}

/* Level k's merge: the answers for the rank's groups that crossed ranks
 * (run's bkeys, nb, ans, bound), and the global groups counted. A local group is named
 * by its lowest owned index kk; across ranks by this rank's number and kk
 * (gkey). Only boundary groups travel: those holding ghosts
 * (each ghost's group tells the ghost's owner which group its particle
 * meets here) and those such a message names. */
static int merge(run *r, int k, fk_error *err)
{
    int R = r->size;
    const uint64_t no = r->no, ng = r->ng;
    const uint32_t *key = r->key[k];
    const void *low = r->low[k];
    const int w = r->idw;
    uint64_t *cnt = xmalloc(R * sizeof *cnt);
    uint64_t *rcnt = xmalloc(R * sizeof *rcnt);
    uint64_t *at = xmalloc(R * sizeof *at);
    const size_t stride = 24;
    unsigned char *sb = NULL;
    int st = (!cnt || !rcnt || !at) ? fk_fail(err, FK_ENOMEM, "out of memory for the merge") : FK_OK;
    uint64_t nsent = 0;
    if (!st) {
        /* to each ghost's owner: (its index there, our group's key and lowest ID) */
        memset(cnt, 0, R * sizeof *cnt);
        for (uint64_t g = 0; g < ng; g++)
            if (key[no + g] != UINT32_MAX) cnt[r->gsrc[g]]++;
        for (int d = 0; d < R; d++) at[d] = nsent, nsent += cnt[d];
        if (!(sb = xmalloc(nsent * stride))) st = fk_fail(err, FK_ENOMEM, "out of memory for the merge");
        for (uint64_t g = 0; !st && g < ng; g++) {
            uint32_t kk = key[no + g];
            if (kk == UINT32_MAX) continue;
            unsigned char *p = sb + stride * at[r->gsrc[g]]++;
            uint64_t j = r->gidx[g];
            memcpy(p, &j, 8);
            uint64_t mid = get_id(low, kk, w), name = gkey(r, kk);
            memcpy(p + 8, &name, 8);
            memcpy(p + 16, &mid, 8);
        }
    }
    free(at);
    double tc = fk_now(); /* the part across ranks starts */
    void *rb;
    uint64_t nr;
    st = exchange(r, st, sb, cnt, stride, &rb, rcnt, &nr, err);
    sb = NULL;
    cnt = NULL;
    /* This rank's boundary groups (sorted keys kk) and its edges (own
     * group's key, the other's), each edge once. */
    uint32_t *bkeys = NULL;
    uint64_t *edges = NULL, nb = 0, ne = 0;
    if (!st) {
        bkeys = xmalloc((nsent + nr) * 4);
        edges = xmalloc(nr * 16);
        if (!bkeys || !edges) st = fk_fail(err, FK_ENOMEM, "out of memory for the merge");
        for (uint64_t g = 0; !st && g < ng; g++)
            if (key[no + g] != UINT32_MAX) bkeys[nb++] = key[no + g];
        const unsigned char *p = rb;
        for (uint64_t e = 0; !st && e < nr; e++, p += stride) {
            uint64_t j;
            memcpy(&j, p, 8);
            if (j >= no) {
                st = fk_fail(err, FK_EINVAL, "a ghost names particle %" PRIu64 " of %" PRIu64 " (internal error)", j, no);
                break;
            }
            bkeys[nb++] = key[j];
            edges[2 * ne] = gkey(r, key[j]);
            memcpy(&edges[2 * ne + 1], p + 8, 8);
            ne++;
        }
    }
    free(rb);
    if (!st) {
        qsort(bkeys, nb, 4, cmp_u32);
        uint64_t u = 0;
        for (uint64_t i = 0; i < nb; i++)
            if (u == 0 || bkeys[i] != bkeys[u - 1]) bkeys[u++] = bkeys[i];
        nb = u;
        qsort(edges, ne, 16, cmp_edge);
        u = 0;
        for (uint64_t i = 0; i < ne; i++)
            if (u == 0 || edges[2 * i] != edges[2 * u - 2] || edges[2 * i + 1] != edges[2 * u - 1]) {
                edges[2 * u] = edges[2 * i];
                edges[2 * u + 1] = edges[2 * i + 1];
                u++;
            }
        ne = u;
        r->rep->edges[k] = ne;
    }
    node *nodes = NULL;
    if (!st && !(nodes = xmalloc(nb * sizeof *nodes))) st = fk_fail(err, FK_ENOMEM, "out of memory for the merge");
    for (uint64_t i = 0; !st && i < nb; i++) nodes[i] = (node){gkey(r, bkeys[i]), get_id(low, bkeys[i], w)};
    st = fk_dist_agree(st, err, NULL);
    /* The join over the ranks (dist_join.h): each name's root and lowest ID. */
    node *myans = NULL;
    uint64_t *names = NULL, *mids = NULL, *jroot = NULL, *jlow = NULL;
    if (!st && (!(myans = xmalloc(nb * sizeof *myans)) || !(names = xmalloc(nb * 8)) || !(mids = xmalloc(nb * 8)) ||
                !(jroot = xmalloc(nb * 8)) || !(jlow = xmalloc(nb * 8))))
        st = fk_fail(err, FK_ENOMEM, "out of memory for the merge");
    for (uint64_t i = 0; !st && i < nb; i++) names[i] = nodes[i].key, mids[i] = nodes[i].mid;
    st = fk_dist_agree(st, err, NULL);
    if (!st) {
        fk_dist_join_report jr;
        st = fk_dist_join(nb, names, mids, ne, edges, jroot, jlow, &jr, err);
        r->rep->join_rounds += jr.rounds, r->rep->join_jumps += jr.jumps;
        r->rep->join_sent += jr.bytes_sent, r->rep->join_recv += jr.bytes_recv;
        r->rep->bytes_sent += jr.bytes_sent, r->rep->bytes_recv += jr.bytes_recv;
        if (jr.held > r->rep->join_held) r->rep->join_held = jr.held;
    }
    for (uint64_t i = 0; !st && i < nb; i++) myans[i] = (node){jroot[i], jlow[i]};
    free(names), free(mids), free(jroot), free(jlow);
    r->rep->t_cross += fk_now() - tc;
    uint8_t *bound = NULL; /* bit kk: owned group kk is a boundary group */
    if (!st && !(bound = calloc(no / 8 + 1, 1))) st = fk_fail(err, FK_ENOMEM, "out of memory for the merge");
    st = fk_dist_agree(st, err, NULL);
    if (!st) {
        for (uint64_t i = 0; i < nb; i++) bound[bkeys[i] >> 3] |= (uint8_t)(1u << (bkeys[i] & 7));
        /* The global groups: this rank's own groups (each named by its lowest
         * owned index) less those that crossed ranks, and of those the ones
         * whose root is here. */
        uint64_t local = 0, roots = 0;
        #pragma omp parallel for schedule(static) reduction(+ : local)
        for (uint64_t i = 0; i < no; i++) local += key[i] == i;
        for (uint64_t i = 0; i < nb; i++) roots += myans[i].key == nodes[i].key;
        uint64_t mine = local - nb + roots;
        MPI_Allreduce(&mine, &r->rep->groups[k], 1, MPI_UINT64_T, MPI_SUM, fk_dist_comm());
        r->bkeys[k] = bkeys, r->nb[k] = nb, r->ans[k] = myans, r->bound[k] = bound;
        bkeys = NULL, myans = NULL, bound = NULL;
    }
    free(bound);
    free(myans);
    free(nodes), free(edges), free(bkeys);
    free(cnt), free(rcnt);
    return st;
}

/* Owned particle j's label at level k: its global group's lowest ID, from
 * the merge's answer when its group crossed ranks, else its own group's. */
static inline uint64_t label_of(const run *r, int k, uint64_t j)
{
    const uint32_t kk = r->key[k][j];
    if (r->bound[k][kk >> 3] >> (kk & 7) & 1) return r->ans[k][slot_of(r->bkeys[k], r->nb[k], kk)].mid;
    return get_id(r->low[k], j, r->idw);
}

/* The labels back to the ranks the particles came from: to each source
 * rank, its particles' labels (label_of; idw bytes a level) in the order it
 * sent them, which is their owned order here; the source puts them in place
 * by the slots send_owned kept. */
static int send_back(run *r, uint64_t *const *gmin, fk_error *err)
{
    const int R = r->size, L = r->nlev, me = r->rank, w = r->idw;
    const size_t stride = (size_t)L * (size_t)w;
    const uint64_t no = r->no, own = r->own, below = r->below, n = r->in->n;
    uint64_t *cnt = xmalloc(R * sizeof *cnt), *rcnt = xmalloc(R * sizeof *rcnt);
    const uint64_t rbelow = r->ostart[me]; /* where this rank's own lie among the owned */
    unsigned char *sb = big((no - own) * stride);
    int st = (!cnt || !rcnt || !sb) ? fk_fail(err, FK_ENOMEM, "out of memory returning labels") : FK_OK;
    if (!st) {
        for (int d = 0; d < R; d++) cnt[d] = d == me ? 0 : r->rcnt[d];
        #pragma omp parallel for schedule(static)
        for (uint64_t j = 0; j < no; j++) {
            if (j >= rbelow && j < rbelow + own) continue; /* this rank's own */
            unsigned char *p = sb + stride * (j < rbelow ? j : j - own);
            for (int k = 0; k < L; k++) {
                uint64_t v = label_of(r, k, j);
                if (w == 4) {
                    uint32_t v4 = (uint32_t)v;
                    memcpy(p + 4 * k, &v4, 4);
                } else {
                    memcpy(p + 8 * k, &v, 8);
                }
            }
        }
    }
    void *rb;
    uint64_t nr;
    st = exchange(r, st, sb, cnt, stride, &rb, rcnt, &nr, err);
    if (!st && nr + own != n)
        st = fk_fail(err, FK_EINVAL, "rank %d got %" PRIu64 " labels for %" PRIu64 " particles (internal error)", me,
                     nr + own, n);
    if (!st) {
        const int *dest = r->dest;
        const uint32_t *at = r->slot;
        #pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < n; i++) {
            if (dest[i] == me) {
                uint64_t j = rbelow + (at[i] - below);
                for (int k = 0; k < L; k++) gmin[k][i] = label_of(r, k, j);
                continue;
            }
            const unsigned char *p = (const unsigned char *)rb + stride * (at[i] < below ? at[i] : at[i] - own);
            for (int k = 0; k < L; k++) {
                if (w == 4) {
                    uint32_t v;
                    memcpy(&v, p + 4 * k, 4);
                    gmin[k][i] = v;
                } else {
                    memcpy(&gmin[k][i], p + 8 * k, 8);
                }
            }
        }
    }
    free(rb);
    free(rcnt);
    return fk_dist_agree(st, err, NULL);
}

static void run_free(run *r)
{
    fk_rcb_free(&r->rcb);
    free(r->off), free(r->cut), free(r->pos), free(r->vel), free(r->oid), free(r->ostart);
    free(r->gsrc), free(r->gidx), free(r->dest), free(r->slot), free(r->rcnt);
    for (int k = 0; k < FK_LEVELS_MAX; k++) {
        free(r->key[k]), free(r->low[k]);
        free(r->bkeys[k]), free(r->ans[k]), free(r->bound[k]);
    }
}

int fk_distlink_run(const fk_distlink_in *in, uint64_t *const *gmin, fk_distlink_report *rep_, fk_error *err)
{
    fk_distlink_report rep0;
    fk_distlink_report *rep = rep_ ? rep_ : &rep0;
    memset(rep, 0, sizeof *rep);
    run r;
    memset(&r, 0, sizeof r);
    r.in = in;
    r.rep = rep;
    r.nlev = in->nlevels;
    r.sixd = in->lo[0].psi > 0;
    r.period = in->lo[0].periodic ? in->lo[0].box : 0;
    r.rcb_on = in->decomp != FK_DECOMP_SLABS;
    rep->decomp = r.rcb_on ? FK_DECOMP_RCB : FK_DECOMP_SLABS;
    MPI_Comm_rank(fk_dist_comm(), &r.rank);
    MPI_Comm_size(fk_dist_comm(), &r.size);
    int st = fk_levels_check(in->lo, in->nlevels, err);
    if (!st && in->n >= UINT32_MAX)
        st = fk_fail(err, FK_EUNSUP, "rank %d reads %" PRIu64 " particles: at most %" PRIu32 " per rank", r.rank, in->n,
                     UINT32_MAX - 1);
    if (!st && (!(r.off = xmalloc((r.size + 1) * sizeof *r.off)) || !(r.cut = xmalloc((r.size + 1) * sizeof *r.cut))))
        st = fk_fail(err, FK_ENOMEM, "out of memory");
    st = fk_dist_agree(st, err, NULL);
    double t0 = fk_now();
    if (!st) {
        MPI_Allgather(&in->n, 1, MPI_UINT64_T, r.off + 1, 1, MPI_UINT64_T, fk_dist_comm());
        r.off[0] = 0;
        for (int d = 0; d < r.size; d++) r.off[d + 1] += r.off[d];
        rep->ntotal = r.off[r.size];
        /* IDs travel and are kept in 4 bytes when every rank's fit */
        uint64_t idmax = 0;
        #pragma omp parallel for schedule(static) reduction(max : idmax)
        for (uint64_t i = 0; i < in->n; i++)
            if (in->id[i] > idmax) idmax = in->id[i];
        MPI_Allreduce(MPI_IN_PLACE, &idmax, 1, MPI_UINT64_T, MPI_MAX, fk_dist_comm());
        const char *wide = getenv("FOFKIT_DIST_WIDE_IDS"); /* for tests: 8 bytes whatever the IDs */
        r.idw = idmax < UINT32_MAX && !(wide && !strcmp(wide, "1")) ? 4 : 8;
        st = decompose(&r, in->lo[0].l, err);
    }
    double t1 = fk_now();
    rep->t_slabs = t1 - t0;
    if (!st) st = send_owned(&r, err);
    double t2 = fk_now();
    rep->t_owned = t2 - t1;
    if (!st) st = send_ghosts(&r, err);
    rep->t_ghosts = fk_now() - t2;
    rep->t_decomp = fk_now() - t0;
    if (!st) {
        rep->owned = r.no;
        rep->ghosts = r.ng;
        rep->axis = r.axis;
        if (r.rcb_on) {
            const fk_rcb_node *b = &r.rcb.node[r.rcb.leaf[r.rank]];
            for (int k = 0; k < 3; k++) rep->box_lo[k] = b->lo[k], rep->box_hi[k] = b->hi[k];
            rep->slab_lo = b->lo[r.axis], rep->slab_hi = b->hi[r.axis];
        } else {
            slab(&r, r.rank, &rep->slab_lo, &rep->slab_hi);
            for (int k = 0; k < 3; k++) rep->box_lo[k] = r.gmn[k], rep->box_hi[k] = r.gmx[k];
            rep->box_lo[r.axis] = rep->slab_lo, rep->box_hi[r.axis] = rep->slab_hi;
        }
        t0 = fk_now();
        st = link_local(&r, err);
        rep->t_link = fk_now() - t0;
    }
    t0 = fk_now();
    for (int k = 0; !st && k < r.nlev; k++) st = merge(&r, k, err);
    rep->t_merge = fk_now() - t0;
    t0 = fk_now();
    if (!st) st = send_back(&r, gmin, err);
    rep->t_return = fk_now() - t0;
    run_free(&r);
    return st;
}

/* The ranks whose domain lies within the margin of x, this rank's too
 * (out: room for R): their number. */
static int near_ranks(const run *r, const float *x, int *out)
{
    if (r->rcb_on) return fk_rcb_reaches(&r->rcb, x, -1, out);
    int n = 0;
    for (int d = 0; d < r->size; d++)
        if (reaches(r, d, x[r->axis])) out[n++] = d;
    return n;
}

/* The rank whose domain holds x. */
static int owner_at(const run *r, const float *x)
{
    return r->rcb_on ? fk_rcb_owner(&r->rcb, x) : owner_of(r, x[r->axis]);
}

/* A group's label and the least ID attached to it. */
typedef struct lowpair {
    uint64_t label, low;
} lowpair;

static int lowpair_cmp(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b; /* the label comes first */
    return x < y ? -1 : x > y;
}

/* A label and its home rank, ordered by home, then label. */
typedef struct homed {
    uint64_t home, label;
} homed;

static int homed_cmp(const void *a, const void *b)
{
    const homed *x = a, *y = b;
    if (x->home != y->home) return x->home < y->home ? -1 : 1;
    return x->label < y->label ? -1 : x->label > y->label;
}

/* The rank that reduces a label's lowest ID: a hash, so that each holds a
 * share of the groups. */
static uint64_t home_of(uint64_t label, int R)
{
    return ((label * UINT64_C(0x9E3779B97F4A7C15)) >> 32) % (uint64_t)R;
}

/* One level's GMIN: label[i] (n entries, UINT64_MAX: none) becomes the
 * lowest of its group's label (the lowest linked ID) and the IDs of the
 * group's attached particles on every rank (att[i]: i is attached). The
 * attached IDs go to their label's home rank, which keeps each label's
 * least; each rank then asks the homes of its distinct labels. Collective;
 * failures agreed on. */
static int group_low(run *r, uint64_t n, const uint64_t *id, const uint8_t *att, uint64_t *label, fk_error *err)
{
    const int R = r->size;
    uint64_t na = 0, nl = 0, nred = 0, nq = 0, nu = 0, nback = 0;
    uint64_t *cnt = calloc((size_t)R, 8), *rcnt = malloc((size_t)R * 8), *at = calloc((size_t)R, 8);
    homed *q = malloc((n ? n : 1) * sizeof *q);
    lowpair *sb = NULL, *red = NULL;
    int st = (!cnt || !rcnt || !at || !q) ? fk_fail(err, FK_ENOMEM, "out of memory for the groups' lowest IDs") : FK_OK;
    for (uint64_t i = 0; !st && i < n; i++)
        if (label[i] != UINT64_MAX) {
            q[nl++] = (homed){home_of(label[i], R), label[i]};
            if (att[i]) cnt[q[nl - 1].home]++, na++;
        }
    if (!st && !(sb = malloc((na ? na : 1) * sizeof *sb))) st = fk_fail(err, FK_ENOMEM, "out of memory");
    for (int d = 1; !st && d < R; d++) at[d] = at[d - 1] + cnt[d - 1];
    for (uint64_t i = 0, j = 0; !st && i < n; i++)
        if (label[i] != UINT64_MAX) {
            if (att[i]) sb[at[q[j].home]++] = (lowpair){label[i], id[i]};
            j++;
        }
    void *rb = NULL;
    st = exchange(r, st, sb, cnt, sizeof *sb, &rb, rcnt, &nred, err); /* frees sb, cnt */
    cnt = NULL;
    if (!st) { /* runs of one label: its least, at the run's first entry */
        red = rb;
        qsort(red, nred, sizeof *red, lowpair_cmp);
        uint64_t m = 0;
        for (uint64_t j = 0; j < nred; j++)
            if (!m || red[j].label != red[m - 1].label)
                red[m++] = red[j];
            else if (red[j].low < red[m - 1].low)
                red[m - 1].low = red[j].low;
        nred = m;
        qsort(q, nl, sizeof *q, homed_cmp);
        for (uint64_t j = 0; j < nl; j++)
            if (!nu || q[j].label != q[nu - 1].label) q[nu++] = q[j];
    }
    uint64_t *ask = NULL, *got = NULL, *ans = NULL;
    if (!st) {
        cnt = calloc((size_t)R, 8);
        if (!cnt || !(ask = malloc((nu ? nu : 1) * 8))) st = fk_fail(err, FK_ENOMEM, "out of memory");
        for (uint64_t j = 0; !st && j < nu; j++) ask[j] = q[j].label, cnt[q[j].home]++;
        void *rq = NULL;
        st = exchange(r, st, ask, cnt, 8, &rq, rcnt, &nq, err); /* frees ask, cnt */
        ans = rq;
        for (uint64_t j = 0; !st && j < nq; j++) { /* each label asked: its least */
            const lowpair *g = bsearch(&ans[j], red, nred, sizeof *red, lowpair_cmp);
            if (g && g->low < ans[j]) ans[j] = g->low;
        }
        if (!st) {
            uint64_t *back = malloc((size_t)R * 8);
            if (!back) st = fk_fail(err, FK_ENOMEM, "out of memory");
            else memcpy(back, rcnt, (size_t)R * 8); /* the answers, to the ranks that asked */
            void *ra = NULL;
            st = exchange(r, st, ans, back, 8, &ra, rcnt, &nback, err); /* frees ans, back */
            ans = NULL;
            got = ra; /* in the order asked: q's */
        }
    }
    for (uint64_t i = 0; !st && i < n; i++)
        if (label[i] != UINT64_MAX) {
            const homed k = {home_of(label[i], R), label[i]};
            const homed *g = bsearch(&k, q, nu, sizeof *q, homed_cmp);
            label[i] = got[g - q];
        }
    free(rcnt), free(at), free(q), free(red), free(got), free(ans);
    return fk_dist_agree(st, err, NULL);
}

int fk_distlink_attach(const fk_distlink_in *in, const uint8_t *type, unsigned link_types, unsigned attach_types,
                       uint64_t *const *gmin, fk_distlink_report *rep_, uint64_t *attached, uint64_t *nprim,
                       uint64_t *nsec, fk_error *err)
{
    fk_distlink_report rep0;
    fk_distlink_report *rep = rep_ ? rep_ : &rep0;
    const int nlev = in->nlevels, sixd = in->lo[0].psi > 0;
    int st = FK_OK;
    /* this rank's primaries, linked across the ranks */
    uint64_t np = 0, ns = 0;
    for (uint64_t i = 0; i < in->n; i++) np += link_types >> type[i] & 1u, ns += attach_types >> type[i] & 1u;
    float *ppos = malloc((np ? np : 1) * 12), *pvel = sixd ? malloc((np ? np : 1) * 12) : NULL;
    uint64_t *pid = malloc((np ? np : 1) * 8), *pg[FK_LEVELS_MAX] = {0};
    if (!ppos || (sixd && !pvel) || !pid) st = fk_fail(err, FK_ENOMEM, "out of memory");
    for (int k = 0; k < nlev && !st; k++)
        if (!(pg[k] = malloc((np ? np : 1) * 8))) st = fk_fail(err, FK_ENOMEM, "out of memory");
    run r;
    memset(&r, 0, sizeof r);
    MPI_Comm_rank(fk_dist_comm(), &r.rank);
    MPI_Comm_size(fk_dist_comm(), &r.size);
    if (!st && in->n >= UINT32_MAX)
        st = fk_fail(err, FK_EUNSUP, "rank %d reads %" PRIu64 " particles: at most %" PRIu32 " per rank", r.rank, in->n,
                     UINT32_MAX - 1);
    st = fk_dist_agree(st, err, NULL);
    uint64_t a = 0;
    for (uint64_t i = 0; !st && i < in->n; i++)
        if (link_types >> type[i] & 1u) {
            memcpy(ppos + 3 * a, in->pos + 3 * i, 12);
            if (sixd) memcpy(pvel + 3 * a, in->vel + 3 * i, 12);
            pid[a++] = in->id[i];
        }
    if (!st) {
        fk_distlink_in sub = *in;
        sub.n = np, sub.pos = ppos, sub.vel = pvel, sub.id = pid;
        st = fk_distlink_run(&sub, pg, rep, err); /* agreed inside */
    }
    free(pvel);
    pvel = NULL;
    /* Domains (boxes or slabs, as the link's) over every particle with a
     * margin of the attaching reach (6.4 l at level 0, the longest): each
     * rank attaches the secondaries of its domain to a tree of the primaries
     * within the reach of it, its own and ghosts (every rank's whose domain
     * the reach touches, across the period too), so every candidate nearer
     * than the reach is there. */
    r.in = in, r.rep = rep, r.nlev = nlev;
    r.period = in->lo[0].periodic ? in->lo[0].box : 0;
    r.rcb_on = in->decomp != FK_DECOMP_SLABS;
    const int R = r.size;
    if (!st) {
        if (!(r.off = xmalloc((R + 1) * sizeof *r.off)) || !(r.cut = xmalloc((R + 1) * sizeof *r.cut)))
            st = fk_fail(err, FK_ENOMEM, "out of memory");
        st = fk_dist_agree(st, err, NULL);
        if (!st) {
            MPI_Allgather(&in->n, 1, MPI_UINT64_T, r.off + 1, 1, MPI_UINT64_T, fk_dist_comm());
            r.off[0] = 0;
            for (int d = 0; d < R; d++) r.off[d + 1] += r.off[d];
            st = decompose(&r, FK_ATTACH_REACH * in->lo[0].l, err);
        }
    }
    /* the primaries (position, ID, each level's label) to every domain within the reach */
    const size_t ps = 20 + 8 * (size_t)nlev;
    uint64_t *rcnt = malloc((size_t)R * 8), *scnt = malloc((size_t)R * 8), M = 0, S = 0;
    void *rbp = NULL, *rbs = NULL;
    if (!st) {
        uint64_t *cnt = calloc((size_t)R, 8), *at = calloc((size_t)R, 8), tot = 0;
        int *to = malloc((size_t)R * sizeof *to);
        unsigned char *sb = NULL;
        if (!cnt || !at || !rcnt || !scnt || !to) st = fk_fail(err, FK_ENOMEM, "out of memory");
        for (uint64_t j = 0; !st && j < np; j++)
            for (int q = 0, nd = near_ranks(&r, ppos + 3 * j, to); q < nd; q++) cnt[to[q]]++;
        for (int d = 0; !st && d < R; d++) at[d] = tot, tot += cnt[d];
        if (!st && !(sb = malloc((tot ? tot : 1) * ps)))
            st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " linked particles to attach to", tot);
        for (uint64_t j = 0; !st && j < np; j++)
            for (int q = 0, nd = near_ranks(&r, ppos + 3 * j, to); q < nd; q++) {
                unsigned char *p = sb + ps * at[to[q]]++;
                memcpy(p, ppos + 3 * j, 12);
                memcpy(p + 12, pid + j, 8);
                for (int k = 0; k < nlev; k++) memcpy(p + 20 + 8 * k, pg[k] + j, 8);
            }
        free(at), free(to);
        st = exchange(&r, st, sb, cnt, ps, &rbp, rcnt, &M, err); /* frees sb, cnt */
    }
    free(ppos);
    ppos = NULL;
    /* the secondaries (position, index) to their domain */
    if (!st) {
        uint64_t *cnt = calloc((size_t)R, 8), *at = calloc((size_t)R, 8), tot = 0;
        unsigned char *sb = NULL;
        if (!cnt || !at || !(sb = malloc((ns ? ns : 1) * 16))) st = fk_fail(err, FK_ENOMEM, "out of memory");
        for (uint64_t i = 0; !st && i < in->n; i++)
            if (attach_types >> type[i] & 1u) cnt[owner_at(&r, in->pos + 3 * i)]++;
        for (int d = 0; !st && d < R; d++) at[d] = tot, tot += cnt[d];
        for (uint64_t i = 0; !st && i < in->n; i++)
            if (attach_types >> type[i] & 1u) {
                unsigned char *p = sb + 16 * at[owner_at(&r, in->pos + 3 * i)]++;
                const uint32_t ix = (uint32_t)i;
                memcpy(p, in->pos + 3 * i, 12);
                memcpy(p + 12, &ix, 4);
            }
        free(at);
        st = exchange(&r, st, sb, cnt, 16, &rbs, scnt, &S, err); /* frees sb, cnt */
    }
    /* the tree of the primaries held, each secondary's nearest by the rule */
    float *mpos = NULL, *spos = NULL, *nr2 = NULL;
    uint64_t *mid = NULL, *akey = NULL, *mlab[FK_LEVELS_MAX] = {0};
    uint32_t *perm = NULL, *near = NULL;
    fk_tree t;
    memset(&t, 0, sizeof t);
    if (!st) {
        if (M >= INT_MAX)
            st = fk_fail(err, FK_EUNSUP, "rank %d holds %" PRIu64 " linked particles to attach to: at most 2^31 - 2 (run more ranks)",
                         r.rank, M);
        if (!st && (!(mpos = fk_big_alloc((M ? M : 1) * 12)) || !(mid = fk_big_alloc((M ? M : 1) * 8)) ||
                    !(akey = fk_big_alloc((M ? M : 1) * 8)) || !(spos = malloc((S ? S : 1) * 12)) ||
                    !(near = malloc((S ? S : 1) * 4)) || !(nr2 = malloc((S ? S : 1) * 4))))
            st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " linked particles to attach to", r.rank, M);
        for (int k = 0; k < nlev && !st; k++)
            if (!(mlab[k] = fk_big_alloc((M ? M : 1) * 8))) st = fk_fail(err, FK_ENOMEM, "out of memory");
        uint64_t ghosts = 0;
        const unsigned char *p = rbp;
        for (uint64_t j = 0; !st && j < M; j++, p += ps) {
            memcpy(mpos + 3 * j, p, 12);
            memcpy(mid + j, p + 12, 8);
            for (int k = 0; k < nlev; k++) memcpy(mlab[k] + j, p + 20 + 8 * k, 8);
            ghosts += owner_at(&r, mpos + 3 * j) != r.rank;
        }
        p = rbs;
        for (uint64_t q = 0; !st && q < S; q++, p += 16) memcpy(spos + 3 * q, p, 12);
        rep->att_held = M, rep->att_ghosts = ghosts, rep->att_sec = S;
        rep->att_bytes = M * (12 + 8 + 8 + 4 + 8 * (uint64_t)nlev) + S * (16 + 12 + 4 + 4);
        if (!st) st = fk_tree_build_cpu(mpos, M, in->gpu ? 32 : 16, &t, &perm, err);
        if (!st) {
            #pragma omp parallel for schedule(static)
            for (uint64_t j = 0; j < M; j++) akey[j] = mid[perm[j]];
        }
        st = fk_dist_agree(st, err, NULL);
    }
    free(rbp);
    if (!st) {
        const fk_geom g = fk_link_params(&in->lo[0]).g;
        const float r2max = fk_attach_r2(in->lo[0].l);
        if (in->gpu && !in->brute)
            st = fk_gpu_attach_nearest(&t, mpos, akey, S, spos, g, r2max, near, nr2, NULL, err);
        else
            st = fk_attach_nearest_cpu(&t, mpos, akey, S, spos, g, r2max, in->brute, near, nr2, err);
        st = fk_dist_agree(st, err, NULL);
    }
    /* each secondary's label at every level (UINT64_MAX: none within the
     * level's reach) back to its rank, into gmin */
    if (!st) {
        const size_t bs = 4 + 8 * (size_t)nlev;
        unsigned char *sb = malloc((S ? S : 1) * bs);
        uint64_t *cnt = malloc((size_t)R * 8), nb = 0;
        if (!sb || !cnt) st = fk_fail(err, FK_ENOMEM, "out of memory");
        else memcpy(cnt, scnt, (size_t)R * 8); /* the answers, to the ranks that sent */
        const unsigned char *p = rbs;
        for (uint64_t q = 0; !st && q < S; q++, p += 16) {
            unsigned char *o = sb + bs * q;
            memcpy(o, p + 12, 4);
            for (int k = 0; k < nlev; k++) {
                const uint64_t l = near[q] != FK_ATTACH_NONE && nr2[q] < fk_attach_r2(in->lo[k].l)
                                       ? mlab[k][perm[near[q]]] : UINT64_MAX;
                memcpy(o + 4 + 8 * k, &l, 8);
            }
        }
        void *rb = NULL;
        st = exchange(&r, st, sb, cnt, bs, &rb, scnt, &nb, err); /* frees sb, cnt */
        for (int k = 0; !st && k < nlev; k++) {
            uint64_t j = 0;
            for (uint64_t i = 0; i < in->n; i++) gmin[k][i] = link_types >> type[i] & 1u ? pg[k][j++] : UINT64_MAX;
        }
        p = rb;
        for (uint64_t q = 0; !st && q < nb; q++, p += bs) {
            uint32_t ix;
            memcpy(&ix, p, 4);
            for (int k = 0; k < nlev; k++) memcpy(gmin[k] + ix, p + 4 + 8 * k, 8);
        }
        free(rb);
    }
    free(rbs);
    free(mpos), free(mid), free(akey), free(spos), free(near), free(nr2), free(perm);
    for (int k = 0; k < nlev; k++) free(mlab[k]), free(pg[k]);
    fk_tree_free(&t);
    /* a group's lowest ID counts its attached particles (group_low); a particle alone keeps its own */
    uint8_t *att = NULL;
    if (!st && !(att = malloc(in->n ? in->n : 1))) st = fk_fail(err, FK_ENOMEM, "out of memory");
    st = fk_dist_agree(st, err, NULL);
    for (uint64_t i = 0; !st && i < in->n; i++) att[i] = attach_types >> type[i] & 1u;
    for (int k = 0; k < nlev && !st; k++) {
        uint64_t na = 0, alone = 0;
        for (uint64_t i = 0; i < in->n; i++) na += att[i] && gmin[k][i] != UINT64_MAX, alone += gmin[k][i] == UINT64_MAX;
        st = group_low(&r, in->n, in->id, att, gmin[k], err);
        for (uint64_t i = 0; !st && i < in->n; i++)
            if (gmin[k][i] == UINT64_MAX) gmin[k][i] = in->id[i];
        uint64_t sums[2] = {na, alone};
        if (!st) fk_dist_sum(sums, 2);
        if (attached) attached[k] = sums[0];
        rep->groups[k] += sums[1];
    }
    if (!st) {
        uint64_t tot[2] = {np, ns};
        fk_dist_sum(tot, 2);
        if (nprim) *nprim = tot[0];
        if (nsec) *nsec = tot[1];
    }
    free(att), free(ppos), free(pid), free(rcnt), free(scnt);
    run_free(&r);
    return st;
}

#endif
