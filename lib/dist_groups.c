/* dist_groups.c - groups under mpirun: per-rank GMIN chunks numbered globally, one .grp file or per-rank streams. */
#include "dist_groups.h"
#include "clock.h"

#ifdef FK_HAVE_MPI

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist.h"
#include "bigmem.h"
#include "dist_alltoall.h"
#include "fileio.h"
#include "grpfile.h"
#include "kv.h"
#include "overlay.h"
#include "snap.h"
#include "stream.h"

#define COMM fk_dist_comm() /* this thread's communicator (dist.h) */

/* What every step of a run shares. */
typedef struct ctx {
    int rank, R;
    uint64_t nsource;
    uint64_t lo, hi; /* the original indices this rank owns */
    uint64_t sent;   /* bytes sent to other ranks */
    uint64_t *rc;           /* elements received from each rank by the last exchange, R */
    uint64_t *start;        /* R + 1: range_lo of every rank, and nsource */
} ctx;

/* This rank's stream as read. */
typedef struct input {
    char *name; /* the rank's input and output names (%r expanded) */
    FILE *in;
    fk_reader *r;
    fk_snap snap;
    uint64_t *ids;
    uint64_t *gmin[FK_LEVELS_MAX];
    int nlev, has_sink;
    char *oname;
    fk_output *out; /* stream format */
    fk_writer *w;
} input;

static uint64_t range_lo(uint64_t nsource, int R, int q)
{
    return (uint64_t)(((unsigned __int128)nsource * (unsigned)q) / (unsigned)R);
}

/* The rank q whose range [start[q], start[q + 1]) holds k < nsource: a
 * guess in floating point, made exact against the table (a division in
 * 128 bits per particle cost more than the rest of the routing). */
static inline int owner(const ctx *c, uint64_t k)
{
    if (c->R == 1) return 0;
    int q = (int)((double)k / (double)c->nsource * c->R);
    if (q >= c->R) q = c->R - 1;
    if (q < 0) q = 0;
    while (q > 0 && c->start[q] > k) q--;
    while (q + 1 < c->R && c->start[q + 1] <= k) q++;
    return q;
}

/* ---- exchanges ----------------------------------------------------------- */

/* Collective: sends count[q] elements of esize bytes from send (grouped by
 * destination rank, in rank order) to every rank q; *recv gets what every
 * rank sent here, grouped by source rank (c->rc gives the groups), *nrecv
 * elements (dist_alltoall.h: any number, in rounds where MPI's int counts
 * need them). No memory on any rank fails on every rank before anything
 * moves. */
static int exchange(ctx *c, const void *send, const uint64_t *count, size_t esize, void **recv, uint64_t *nrecv,
                    fk_error *err)
{
    int st = fk_dist_alltoall(send, count, esize, recv, c->rc, nrecv, err);
    if (st) return st;
    uint64_t off = 0;
    for (int q = 0; q < c->R; q++) off += count[q];
    c->sent += (off - count[c->rank]) * esize;
    return FK_OK;
}

/* ---- reading this rank's stream ----------------------------------------- */

static int load_u64(fk_reader *r, const fk_chunk *ch, fk_writer *w, uint64_t **out, fk_error *err)
{
    void *raw;
    *out = NULL;
    int st = fk_reader_load(r, &raw, err);
    if (st) return st;
    if (!w) return fk_snap_widen_ids(raw, ch, out, err);
    if (!strcmp(ch->dtype, "<u8")) { /* kept as read: written on from it (under fk_writer_later, later) */
        if ((st = fk_writer_put_read(w, ch, raw, err))) free(raw);
        else *out = raw;
        return st;
    }
    /* widened into an array of its own; the 4-byte payload handed to the writer */
    uint64_t *wide;
    if ((st = fk_snap_widen_keep(raw, ch, &wide, err))) {
        free(raw);
        return st;
    }
    if ((st = fk_writer_give_read(w, ch, raw, err))) {
        free(wide);
        return st;
    }
    *out = wide;
    return FK_OK;
}

/* LINK may say which run wrote it: `ranks` and `rank` must be this run's. */
static int check_link(const ctx *c, const char *text, const char *name, fk_error *err)
{
    char what[4200];
    snprintf(what, sizeof what, "%s: LINK chunk", name);
    uint64_t v;
    if (fk_kv_has(text, "ranks")) {
        if (fk_kv_get_u64(text, "ranks", &v, what, err)) return err->code;
        if (v != (uint64_t)c->R)
            return fk_fail(err, FK_EFORMAT, "%s: linked by %" PRIu64 " ranks, this run has %d", name, v, c->R);
    }
    if (fk_kv_has(text, "rank")) {
        if (fk_kv_get_u64(text, "rank", &v, what, err)) return err->code;
        if (v != (uint64_t)c->rank)
            return fk_fail(err, FK_EFORMAT, "%s: holds the particles of rank %" PRIu64 ", read by rank %d", name, v,
                           c->rank);
    }
    return FK_OK;
}

/* Opens and reads this rank's stream, an overlay with its base (writing it
 * on for the stream format, or with overlay starting an overlay of it):
 * SNAP, ID and every GMIN level; checks what one rank can check. */
static int read_input(const ctx *c, const fk_dgroups_opts *o, input *d, fk_error *err)
{
    int st = fk_dist_expand(o->input, c->rank, &d->name, err);
    if (!st) st = fk_input_open(&d->in, d->name, 1, o->force, err);
    if (!st) st = fk_reader_open(&d->r, d->in, d->name, err);
    if (!st) st = fk_reader_follow(d->r, strcmp(d->name, "-") ? d->name : NULL, err);
    fk_chunk ch;
    char *text = NULL;
    if (!st) st = fk_snap_read(d->r, &ch, &d->snap, &text, d->name, err);
    if (!st && o->format == FK_DGROUPS_STREAM) {
        st = fk_dist_expand(o->output ? o->output : "-", c->rank, &d->oname, err);
        if (!st) st = fk_output_open(&d->out, d->oname, 1, o->force, err);
        if (!st && o->overlay) {
            st = fk_overlay_start(&d->w, fk_output_file(d->out), d->name, d->oname, "groups", o->zlevel, err);
        } else if (!st) {
            st = fk_writer_open(&d->w, fk_output_file(d->out), o->zlevel, err);
            /* what passes on is written while the ranks number the groups */
            if (!st) fk_writer_later(d->w, d->r);
            if (!st) st = fk_writer_text(d->w, "SNAP", ch.level, text, err);
        }
    }
    free(text);
    if (st) return st;
    fk_writer *pass = o->overlay ? NULL : d->w; /* an overlay passes nothing on */
    const char *name = d->name;
    if (d->snap.n > UINT32_MAX)
        return fk_fail(err, FK_EUNSUP, "%s: %" PRIu64 " particles on one rank do not fit 32-bit indices", name,
                       d->snap.n);
    while ((st = fk_reader_next(d->r, &ch, err)) == 1) {
        if (strcmp(ch.tag, "ID") == 0) {
            if (d->ids) return fk_fail(err, FK_EFORMAT, "%s: stream has two ID chunks", name);
            if ((st = fk_snap_check_chunk(&d->snap, &ch, NULL, 1, name, err)) ||
                (st = load_u64(d->r, &ch, pass, &d->ids, err)))
                return st;
        } else if (strcmp(ch.tag, "GMIN") == 0) {
            if (ch.level >= FK_LEVELS_MAX)
                return fk_fail(err, FK_EFORMAT, "%s: GMIN level %" PRIu32 " found: at most %d levels (0 to %d)", name,
                               ch.level, FK_LEVELS_MAX, FK_LEVELS_MAX - 1);
            if (d->gmin[ch.level])
                return fk_fail(err, FK_EFORMAT, "%s: stream has two GMIN chunks of level %" PRIu32, name, ch.level);
            if ((st = fk_snap_check_chunk(&d->snap, &ch, "<u8", 1, name, err)) ||
                (st = load_u64(d->r, &ch, pass, &d->gmin[ch.level], err)))
                return st;
            if ((int)ch.level >= d->nlev) d->nlev = (int)ch.level + 1;
        } else if (strcmp(ch.tag, "LINK") == 0) {
            char *lt;
            if ((st = fk_reader_load_text(d->r, &lt, err))) return st;
            st = check_link(c, lt, name, err);
            if (!st && pass) st = fk_writer_text(pass, "LINK", ch.level, lt, err);
            free(lt);
            if (st) return st;
        } else if (strcmp(ch.tag, "GID") == 0 || strcmp(ch.tag, "GRPS") == 0 || strcmp(ch.tag, "GPAR") == 0 ||
                   strcmp(ch.tag, "GIDL") == 0) {
            if (o->overlay && d->w) /* an overlay adds chunks: it cannot replace its base's */
                return fk_fail(err, FK_EFORMAT, "%s: stream has a %s chunk already (an overlay adds chunks: give "
                               "--overlay the stream foflink wrote)", name, ch.tag);
            continue; /* replaced by this run's */
        } else {
            if (strcmp(ch.tag, "SINK") == 0) d->has_sink = 1;
            if (pass && (st = fk_writer_copy(pass, d->r, &ch, err))) return st;
        }
    }
    if (st < 0) return st;
    if (d->nlev == 0) {
        if (d->has_sink)
            return fk_fail(err, FK_EMISSING,
                           "%s: stream has SINK but no GMIN chunk (link it with foflink under mpirun)", name);
        return fk_fail(err, FK_EMISSING, "%s: stream has no GMIN chunk (link it with foflink under mpirun)", name);
    }
    for (int k = 0; k < d->nlev; k++)
        if (!d->gmin[k])
            return fk_fail(err, FK_EFORMAT,
                           "%s: stream has GMIN level %d but no GMIN level %d (the levels run 0, 1, 2, ...)", name,
                           d->nlev - 1, k);
    if (!d->ids) return fk_fail(err, FK_EMISSING, "%s: stream has no ID chunk (run tipsy2bin first)", name);
    uint64_t n = d->snap.n, ns = d->snap.nsource, bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (uint64_t i = 0; i < n; i++)
        if (d->ids[i] >= ns && i < bad) bad = i;
    if (bad < n)
        return fk_fail(err, FK_EFORMAT,
                       "%s: ID chunk: particle %" PRIu64 " has original index %" PRIu64
                       ", beyond the %" PRIu64 " particles of the source",
                       name, bad, d->ids[bad], ns);
    for (int k = 0; k < d->nlev; k++) {
        const uint64_t *gm = d->gmin[k];
#pragma omp parallel for schedule(static) reduction(min : bad)
        for (uint64_t i = 0; i < n; i++)
            if (gm[i] > d->ids[i] && i < bad) bad = i;
        if (bad < n)
            return fk_fail(err, FK_EFORMAT,
                           "%s: GMIN level %d: particle %" PRIu64 " (original index %" PRIu64
                           ") has group minimum %" PRIu64 ", above its own index",
                           name, k, bad, d->ids[bad], gm[bad]);
    }
    return FK_OK;
}

/* ---- the particles' IDs at their owners ---------------------------------- */

/* Where each particle's (ID, ...) goes: to the ID's owner. When every rank
 * holds only IDs it owns (one rank, or tipsy2bin's slices under mpirun),
 * nothing moves: pos is NULL and rid is the stream's own ids. */
typedef struct route {
    uint64_t *pos;   /* n: the particle's place in the send order, or NULL */
    uint64_t *count; /* R: particles sent to each rank */
    uint64_t nrecv;  /* IDs received (owned here) */
    uint64_t *rid;   /* nrecv: those IDs (the stream's ids when pos is NULL) */
} route;

static void route_free(route *rt)
{
    if (rt->pos) free(rt->rid);
    free(rt->pos);
    free(rt->count);
}

/* at[b R + q] counts block b's elements for rank q: each becomes the
 * block's first place for rank q in an order grouped by rank, then block;
 * count[q] gets rank q's elements. Returns them all. */
static uint64_t places_by_rank(uint64_t *at, int nb, int R, uint64_t *count)
{
    uint64_t next = 0;
    for (int q = 0; q < R; q++) {
        count[q] = 0;
        for (int b = 0; b < nb; b++) {
            uint64_t k = at[(size_t)b * (size_t)R + (size_t)q];
            at[(size_t)b * (size_t)R + (size_t)q] = next;
            next += k;
            count[q] += k;
        }
    }
    return next;
}

/* Each particle's place in the send order, grouped by owner rank and in
 * stream order within an owner (pos), and send[pos[i]] = ids[i]: a stable
 * counting sort, each block of particles counted and placed on its own. */
static int sort_by_owner(const ctx *c, const uint64_t *ids, uint64_t n, uint64_t *pos, uint64_t *send,
                         uint64_t *count)
{
    const int R = c->R, nb = omp_get_max_threads();
    uint64_t *at = calloc((size_t)nb * (size_t)R, sizeof *at); /* block b's count, then next place, for rank q */
    if (!at) return FK_ENOMEM;
#pragma omp parallel for schedule(static, 1)
    for (int b = 0; b < nb; b++) {
        uint64_t *mine = at + (size_t)b * (size_t)R;
        for (uint64_t i = n * (uint64_t)b / (uint64_t)nb; i < n * (uint64_t)(b + 1) / (uint64_t)nb; i++)
            mine[owner(c, ids[i])]++;
    }
    places_by_rank(at, nb, R, count);
#pragma omp parallel for schedule(static, 1)
    for (int b = 0; b < nb; b++) {
        uint64_t *mine = at + (size_t)b * (size_t)R;
        for (uint64_t i = n * (uint64_t)b / (uint64_t)nb; i < n * (uint64_t)(b + 1) / (uint64_t)nb; i++) {
            uint64_t p = mine[owner(c, ids[i])]++;
            pos[i] = p;
            send[p] = ids[i];
        }
    }
    free(at);
    return FK_OK;
}

/* Sends every ID to its owner, which checks that none repeats. */
static int route_ids(ctx *c, const input *d, route *rt, fk_error *err)
{
    uint64_t n = d->snap.n, len = c->hi - c->lo, away = 0;
    int st = FK_OK;
    rt->count = calloc((size_t)c->R, sizeof *rt->count);
    if (!rt->count) st = fk_fail(err, FK_ENOMEM, "out of memory routing %" PRIu64 " IDs", n);
#pragma omp parallel for schedule(static) reduction(+ : away)
    for (uint64_t i = 0; i < n; i++) away += d->ids[i] - c->lo >= len;
    fk_dist_max(&away, 1);
    if ((st = fk_dist_agree(st, err, NULL))) return st;
    if (!away) {
        rt->count[c->rank] = n;
        rt->nrecv = n;
        rt->rid = d->ids;
    } else {
        rt->pos = malloc(n ? n * sizeof *rt->pos : 1);
        uint64_t *send = malloc(n ? n * sizeof *send : 1);
        if (!rt->pos || !send || sort_by_owner(c, d->ids, n, rt->pos, send, rt->count))
            st = fk_fail(err, FK_ENOMEM, "out of memory routing %" PRIu64 " IDs", n);
        if ((st = fk_dist_agree(st, err, NULL))) {
            free(send);
            return st;
        }
        void *recv;
        st = exchange(c, send, rt->count, sizeof *send, &recv, &rt->nrecv, err);
        free(send);
        if (st) return st;
        rt->rid = recv;
    }
    /* A repeated ID: the lowest one repeated on this rank is named. Each
     * ID's bit is set atomically (two threads may hold the same one): of
     * the copies of an ID exactly one finds its bit set already. */
    uint64_t dup = UINT64_MAX, words = len / 64 + 1;
    uint64_t *seen = fk_big_alloc(words * sizeof *seen);
    if (!seen) {
        st = fk_fail(err, FK_ENOMEM, "out of memory checking %" PRIu64 " IDs", rt->nrecv);
    } else {
        const uint64_t *rid = rt->rid;
#pragma omp parallel
        {
#pragma omp for schedule(static)
            for (uint64_t w = 0; w < words; w++) seen[w] = 0;
#pragma omp for schedule(static) reduction(min : dup)
            for (uint64_t m = 0; m < rt->nrecv; m++) {
                uint64_t r = rid[m] - c->lo, bit = UINT64_C(1) << (r % 64);
                if ((__atomic_fetch_or(&seen[r / 64], bit, __ATOMIC_RELAXED) & bit) && rid[m] < dup) dup = rid[m];
            }
        }
        free(seen);
        if (dup != UINT64_MAX)
            st = fk_fail(err, FK_EFORMAT,
                         "original index %" PRIu64 " is held twice (by two ranks' streams or twice by one: IDs must "
                         "be distinct)",
                         dup);
    }
    return fk_dist_agree(st, err, NULL);
}

/* Sends one uint32_t a particle along the route; *out gets nrecv of them,
 * in the order of rt->rid: v itself when nothing moves (the caller frees
 * *out only when it is not v). */
static int route_u32(ctx *c, const route *rt, const uint32_t *v, uint64_t n, uint32_t **out, fk_error *err)
{
    if (!rt->pos) {
        *out = (uint32_t *)v;
        return FK_OK;
    }
    uint32_t *send = malloc(n ? n * sizeof *send : 1);
    int st = send ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory routing %" PRIu64 " group numbers", n);
    if ((st = fk_dist_agree(st, err, NULL))) return st;
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) send[rt->pos[i]] = v[i];
    void *recv;
    uint64_t nrecv;
    st = exchange(c, send, rt->count, sizeof *send, &recv, &nrecv, err);
    free(send);
    *out = recv;
    return st;
}

/* ---- one level ---------------------------------------------------------- */

/* Sizes below this are counted in an array indexed by size; the few groups
 * as large or larger are sorted. */
#define SMALL (1u << 16)

typedef struct sizecount {
    uint64_t size, count;
} sizecount;

typedef struct ranked {
    uint64_t size, count;
    int rank;
} ranked;

static int by_size_then_rank(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static int by_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* 3. Numbers the groups this rank owns (gsize: their global sizes, by
 * lowest ID, over the owned range) into gidr, as one process would number
 * them; info gets the global counts (n: this rank's particles, summed).
 * Collective. */
static int number_owned(ctx *c, const uint64_t *gsize, uint64_t minsize, uint64_t n, uint32_t *gidr,
                        fk_groups *info, fk_error *err)
{
    const uint64_t len = c->hi - c->lo;
    const int R = c->R;
    /* The owned range in nb blocks taken on all cores: bh[b][s] counts
     * block b's kept groups of size s < SMALL (then holds its first number
     * of that size); nbigb[b] its larger ones, whose rows go to bl. */
    const int nb = omp_get_max_threads();
    int st = FK_OK;
    uint64_t *hist = calloc(SMALL, sizeof *hist), *big = NULL, *first = NULL;
    uint64_t *bh = calloc((size_t)nb * SMALL, sizeof *bh), *nbigb = calloc((size_t)nb + 1, sizeof *nbigb);
    uint64_t *bl = NULL; /* the large kept groups' rows, in increasing order */
    sizecount *mine = NULL, *all = NULL;
    int *cnt = NULL, *dis = NULL;
    if (!hist || !bh || !nbigb) st = fk_fail(err, FK_ENOMEM, "out of memory for the group sizes of %" PRIu64 " IDs", len);
    uint64_t nfound = 0, ngroups = 0, ngrouped = 0, largest = 0, nbig = 0, nmine = 0;
#define BLOCK_LO(b) (len * (uint64_t)(b) / (uint64_t)nb)
    if (!st) {
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : nfound, ngroups, ngrouped) reduction(max : largest)
        for (int b = 0; b < nb; b++) {
            uint64_t *h = bh + (size_t)b * SMALL, nbg = 0;
            for (uint64_t r = BLOCK_LO(b); r < BLOCK_LO(b + 1); r++) {
                uint64_t s = gsize[r];
                if (!s) continue;
                nfound++;
                if (s < minsize) continue;
                ngroups++;
                ngrouped += s;
                if (s > largest) largest = s;
                if (s < SMALL)
                    h[s]++;
                else
                    nbg++;
            }
            nbigb[b + 1] = nbg;
        }
        for (int b = 0; b < nb; b++) nbigb[b + 1] += nbigb[b];
        nbig = nbigb[nb];
        big = malloc((nbig ? nbig : 1) * sizeof *big);
        bl = malloc((nbig ? nbig : 1) * sizeof *bl);
        if (!big || !bl) st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " large groups", nbig);
    }
    if (!st) {
#pragma omp parallel for schedule(dynamic, 1)
        for (int b = 0; b < nb; b++) {
            uint64_t k = nbigb[b];
            for (uint64_t r = BLOCK_LO(b); r < BLOCK_LO(b + 1); r++)
                if (gsize[r] >= SMALL && gsize[r] >= minsize) bl[k++] = r;
        }
#pragma omp parallel for schedule(static)
        for (uint64_t s = 1; s < SMALL; s++)
            for (int b = 0; b < nb; b++) hist[s] += bh[(size_t)b * SMALL + s];
        for (uint64_t b = 0; b < nbig; b++) big[b] = gsize[bl[b]];
        qsort(big, nbig, sizeof *big, by_u64);
        /* This rank's (size, count) list, by decreasing size. */
        uint64_t nd = 0;
        for (uint64_t b2 = 0; b2 < nbig; b2++) nd += !b2 || big[b2] != big[b2 - 1];
        for (uint64_t s = 1; s < SMALL; s++) nd += hist[s] != 0;
        mine = malloc((nd ? nd : 1) * sizeof *mine);
        if (!mine) {
            st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " group sizes", nd);
        } else {
            for (uint64_t b2 = nbig; b2-- > 0;)
                if (b2 == nbig - 1 || big[b2] != big[b2 + 1])
                    mine[nmine++] = (sizecount){big[b2], 1};
                else
                    mine[nmine - 1].count++;
            for (uint64_t s = SMALL; s-- > 1;)
                if (hist[s]) mine[nmine++] = (sizecount){s, hist[s]};
        }
    }
    if ((st = fk_dist_agree(st, err, NULL))) goto out;
    /* Every rank's list, then each of this rank's sizes gets its first
     * number: 1 + the kept groups larger (all ranks) + those of the same
     * size on lower ranks (whose lowest IDs are all smaller). */
    cnt = malloc((size_t)R * sizeof *cnt);
    dis = malloc((size_t)R * sizeof *dis);
    int mycnt = (int)(nmine * 2);
    MPI_Allgather(&mycnt, 1, MPI_INT, cnt, 1, MPI_INT, COMM);
    uint64_t tot = 0;
    for (int q = 0; q < R; q++) {
        dis[q] = (int)tot;
        tot += (uint64_t)cnt[q];
    }
    all = malloc((tot ? tot : 1) * sizeof *all / 2 + sizeof *all);
    st = all && cnt && dis ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory for the group sizes of every rank");
    /* the same total on every rank: displacements are MPI ints */
    if (!st && tot > INT_MAX)
        st = fk_fail(err, FK_EUNSUP, "%" PRIu64 " distinct group sizes over the ranks: more than MPI's int counts hold",
                     tot / 2);
    if ((st = fk_dist_agree(st, err, NULL))) goto out;
    MPI_Allgatherv(mine, mycnt, MPI_UINT64_T, all, cnt, dis, MPI_UINT64_T, COMM);
    /* Sorted by decreasing size, then rank, the entries before this rank's
     * entry of size s are exactly the groups numbered before its own of size
     * s; its entries come in the order of mine. */
    first = calloc(nmine ? nmine : 1, sizeof *first); /* first number of mine[j]'s size */
    ranked *rk = malloc((tot / 2 + 1) * sizeof *rk);
    if (first && rk) {
        uint64_t t = 0, f = 1, j = 0;
        for (int q = 0; q < R; q++)
            for (uint64_t e = (uint64_t)dis[q] / 2; e < (uint64_t)(dis[q] + cnt[q]) / 2; e++)
                rk[t++] = (ranked){all[e].size, all[e].count, q};
        qsort(rk, t, sizeof *rk, by_size_then_rank);
        for (uint64_t e = 0; e < t; e++) {
            if (rk[e].rank == c->rank) first[j++] = f;
            f += rk[e].count;
        }
    }
    if (!rk) {
        free(first);
        first = NULL;
    }
    free(rk);
    uint64_t g[4] = {nfound, ngroups, ngrouped, n}, big1 = largest;
    fk_dist_sum(g, 4);
    fk_dist_max(&big1, 1);
    st = first ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory numbering %" PRIu64 " sizes", nmine);
    if (!st && g[1] > UINT32_MAX)
        st = fk_fail(err, FK_EUNSUP, "%" PRIu64 " groups do not fit 32-bit group numbers", g[1]);
    if ((st = fk_dist_agree(st, err, NULL))) goto out;
    /* Number the owned groups in increasing lowest ID: within one size on
     * this rank that is their order. hist[s] and big's counters become the
     * next number of each size. */
    for (uint64_t j = 0; j < nmine; j++)
        if (mine[j].size < SMALL) hist[mine[j].size] = first[j];
    /* each block's first number of each size: the size's first number and
     * the earlier blocks' groups of that size */
#pragma omp parallel for schedule(static)
    for (uint64_t s = 1; s < SMALL; s++) {
        uint64_t v = hist[s];
        for (int b = 0; b < nb; b++) {
            uint64_t k = bh[(size_t)b * SMALL + s];
            bh[(size_t)b * SMALL + s] = v;
            v += k;
        }
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (int b = 0; b < nb; b++) {
        uint64_t *h = bh + (size_t)b * SMALL;
        for (uint64_t r = BLOCK_LO(b); r < BLOCK_LO(b + 1); r++) {
            uint64_t s = gsize[r];
            gidr[r] = s >= minsize && s && s < SMALL ? (uint32_t)h[s]++ : 0;
        }
    }
#undef BLOCK_LO
    /* the large ones in increasing order, each the next number of its size:
     * mine[0..nbd) in decreasing size, their next numbers in first */
    uint64_t nbd = 0;
    while (nbd < nmine && mine[nbd].size >= SMALL) nbd++;
    for (uint64_t k = 0; k < nbig; k++) {
        uint64_t s = gsize[bl[k]], a = 0, b = nbd; /* mine is decreasing: find s */
        while (b - a > 1) {
            uint64_t mid = (a + b) / 2;
            if (mine[mid].size >= s) a = mid; else b = mid;
        }
        gidr[bl[k]] = (uint32_t)first[a]++;
    }
    memset(info, 0, sizeof *info);
    info->n = g[3];
    info->nsource = c->nsource;
    info->minsize = minsize;
    info->nfound = g[0];
    info->ngroups = g[1];
    info->ngrouped = g[2];
    info->largest = big1;
out:
    free(hist);
    free(bh);
    free(nbigb);
    free(bl);
    free(big);
    free(first);
    free(mine);
    free(all);
    free(cnt);
    free(dis);
    return st;
}

/* ---- one level: the particles counted and numbered ---------------------- */

/* Block b of nb of n things: [BLOCK(n, b, nb), BLOCK(n, b + 1, nb)). */
#define BLOCK(n, b, nb) ((n) * (uint64_t)(b) / (uint64_t)(nb))

/* A block's GMIN values owned by other ranks, in open addressing grown at
 * half full: val the block's particles of each value, then (once the pairs
 * are laid out) the place of the value's pair in the send order. */
typedef struct awaytab {
    uint64_t *key, *val; /* cap entries, key AWAY_EMPTY where none */
    uint64_t cap, used;
    int shift; /* 64 - log2(cap): the hash's top bits index the table */
} awaytab;

#define AWAY_EMPTY UINT64_MAX /* never an index: they are below nsource */

/* The slot of k in t: its own, or the empty one where it goes. */
static inline uint64_t away_find(const awaytab *t, uint64_t k)
{
    uint64_t h = (k * UINT64_C(0x9E3779B97F4A7C15)) >> t->shift;
    while (t->key[h] != k && t->key[h] != AWAY_EMPTY) h = (h + 1) & (t->cap - 1);
    return h;
}

static int away_grow(awaytab *t)
{
    awaytab g = {NULL, NULL, t->cap ? 2 * t->cap : 256, t->used, t->cap ? t->shift - 1 : 56};
    g.key = malloc(g.cap * sizeof *g.key);
    g.val = malloc(g.cap * sizeof *g.val);
    if (!g.key || !g.val) {
        free(g.key);
        free(g.val);
        return FK_ENOMEM;
    }
    memset(g.key, 0xff, g.cap * sizeof *g.key);
    for (uint64_t h = 0; h < t->cap; h++)
        if (t->key[h] != AWAY_EMPTY) {
            uint64_t s = away_find(&g, t->key[h]);
            g.key[s] = t->key[h];
            g.val[s] = t->val[h];
        }
    free(t->key);
    free(t->val);
    *t = g;
    return FK_OK;
}

static int away_add(awaytab *t, uint64_t k, uint64_t count)
{
    if (2 * (t->used + 1) > t->cap && away_grow(t)) return FK_ENOMEM;
    uint64_t h = away_find(t, k);
    if (t->key[h] == AWAY_EMPTY) {
        t->key[h] = k;
        t->val[h] = 0;
        t->used++;
    }
    t->val[h] += count;
    return FK_OK;
}

/* Counts particles a..b-1 a run of one GMIN value at a time (a group's
 * members mostly come together): a value owned here into gsize, atomically
 * (other blocks may hold the same group), the others into t. */
static int count_block(const ctx *c, const uint64_t *gmin, uint64_t a, uint64_t b, uint64_t *gsize, awaytab *t)
{
    const uint64_t lo = c->lo, len = c->hi - c->lo;
    for (uint64_t i = a; i < b;) {
        uint64_t k = gmin[i], j = i + 1;
        while (j < b && gmin[j] == k) j++;
        if (k - lo < len)
            __atomic_fetch_add(&gsize[k - lo], j - i, __ATOMIC_RELAXED);
        else if (away_add(t, k, j - i))
            return FK_ENOMEM;
        i = j;
    }
    return FK_OK;
}

/* Runs a block's first pass keeps for later: a 16th of its particles, and
 * at most LATER_MAX (row, particles), 16 bytes each. */
#define LATER_MAX (UINT64_C(1) << 16)

typedef struct firstpass {
    uint64_t stop;        /* the first particle the pass left */
    uint64_t (*later)[2]; /* (row, particles) of runs outside the block's window */
    uint64_t nlater;
    int failed;
} firstpass;

/* Block b's first pass, particles a..end-1 a run at a time: a row of the
 * block's own window wa..wb-1 of the owned range is added plainly (no other
 * block writes there in this pass), another row waits in f->later (the
 * pass stops when it is full), a value owned elsewhere goes to t. */
static int count_window(const ctx *c, const uint64_t *gmin, uint64_t a, uint64_t end, uint64_t wa, uint64_t wb,
                        uint64_t *gsize, awaytab *t, firstpass *f)
{
    const uint64_t lo = c->lo, len = c->hi - c->lo, part = (end - a) / 16 + 1;
    const uint64_t room = !f->later ? 0 : part < LATER_MAX ? part : LATER_MAX;
    uint64_t i = a;
    while (i < end && f->nlater < room) {
        uint64_t k = gmin[i], j = i + 1, r = k - lo;
        while (j < end && gmin[j] == k) j++;
        if (r - wa < wb - wa) {
            gsize[r] += j - i;
        } else if (r < len) {
            f->later[f->nlater][0] = r;
            f->later[f->nlater++][1] = j - i;
        } else if (away_add(t, k, j - i)) {
            return FK_ENOMEM;
        }
        i = j;
    }
    f->stop = i;
    return FK_OK;
}

/* Counts every block's particles: the values owned here into gsize (zero),
 * the others into tab[b]. Block b's particles mostly hold rows of window b
 * of the owned range (in a stream in ID order, a particle's group is its
 * own or one begun just before), so a first pass adds those plainly and
 * keeps the rest for later, up to LATER_MAX runs; after every block's, the
 * runs kept and the particles left are added atomically. */
static int count_sizes(const ctx *c, const uint64_t *gmin, uint64_t n, uint64_t *gsize, awaytab *tab, int nb)
{
    const uint64_t len = c->hi - c->lo;
    firstpass *f = calloc((size_t)nb, sizeof *f);
    if (!f) return FK_ENOMEM;
    int nomem = 0;
#pragma omp parallel reduction(| : nomem)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int b = t; b < nb; b += nt) {
            f[b].later = malloc(LATER_MAX * sizeof *f[b].later);
            f[b].failed = count_window(c, gmin, BLOCK(n, b, nb), BLOCK(n, b + 1, nb), BLOCK(len, b, nb),
                                       BLOCK(len, b + 1, nb), gsize, &tab[b], &f[b]) != FK_OK;
        }
#pragma omp barrier
        for (int b = t; b < nb; b += nt) {
            for (uint64_t e = 0; e < f[b].nlater; e++)
                __atomic_fetch_add(&gsize[f[b].later[e][0]], f[b].later[e][1], __ATOMIC_RELAXED);
            if (f[b].failed || count_block(c, gmin, f[b].stop, BLOCK(n, b + 1, nb), gsize, &tab[b])) nomem = 1;
            free(f[b].later);
        }
    }
    free(f);
    return nomem ? FK_ENOMEM : FK_OK;
}

/* Every block's (value, count) pairs, grouped by owner rank (count[q] of
 * them for rank q; a value held by two blocks is sent twice, its owner
 * adds both), into *pairs; each table entry's val becomes its pair's
 * place. */
static int lay_out_pairs(const ctx *c, awaytab *tab, int nb, uint64_t *count, uint64_t **pairs)
{
    const int R = c->R;
    uint64_t *at = calloc((size_t)nb * (size_t)R, sizeof *at); /* block b's pairs, then next place, for rank q */
    if (!at) return FK_ENOMEM;
#pragma omp parallel for schedule(dynamic, 1)
    for (int b = 0; b < nb; b++)
        for (uint64_t h = 0; h < tab[b].cap; h++)
            if (tab[b].key[h] != AWAY_EMPTY) at[(size_t)b * (size_t)R + (size_t)owner(c, tab[b].key[h])]++;
    uint64_t next = places_by_rank(at, nb, R, count);
    uint64_t *p = *pairs = malloc((next ? next : 1) * 2 * sizeof *p);
    if (p) {
#pragma omp parallel for schedule(dynamic, 1)
        for (int b = 0; b < nb; b++)
            for (uint64_t h = 0; h < tab[b].cap; h++)
                if (tab[b].key[h] != AWAY_EMPTY) {
                    uint64_t e = at[(size_t)b * (size_t)R + (size_t)owner(c, tab[b].key[h])]++;
                    p[2 * e] = tab[b].key[h];
                    p[2 * e + 1] = tab[b].val[h];
                    tab[b].val[h] = e;
                }
    }
    free(at);
    return p ? FK_OK : FK_ENOMEM;
}

/* pgid of particles a..b-1, a run at a time: the number of its group,
 * gidr's for a value owned here, else the owner's answer to its pair. */
static void number_block(const ctx *c, const uint64_t *gmin, uint64_t a, uint64_t b, const uint32_t *gidr,
                         const awaytab *t, const uint32_t *ans, uint32_t *pgid)
{
    const uint64_t lo = c->lo, len = c->hi - c->lo;
    for (uint64_t i = a; i < b;) {
        uint64_t k = gmin[i];
        uint32_t g = k - lo < len ? gidr[k - lo] : ans[t->val[away_find(t, k)]];
        pgid[i++] = g;
        while (i < b && gmin[i] == k) pgid[i++] = g;
    }
}

/* Numbers the groups of one level: pgid[i] gets particle i's group number
 * (0: none), info the global counts; gidr (the owned range) the number of
 * each group by its lowest ID. */
static int number_level(ctx *c, const input *d, const uint64_t *gmin, uint64_t minsize, uint32_t *pgid,
                        uint32_t *gidr, fk_groups *info, fk_error *err)
{
    const uint64_t n = d->snap.n, len = c->hi - c->lo;
    const int nb = omp_get_max_threads();
    uint64_t *gsize = fk_big_zalloc((len ? len : 1) * sizeof *gsize), *count = calloc((size_t)c->R, sizeof *count);
    uint64_t *pairs = NULL, nrecv = 0, nans = 0;
    awaytab *tab = calloc((size_t)nb, sizeof *tab);
    uint32_t *reply = NULL, *ans = NULL;
    void *recv = NULL;
    /* 1. sizes: a value owned here counted into gsize, the others by block */
    int nomem = !gsize || !count || !tab || count_sizes(c, gmin, n, gsize, tab, nb);
    /* 2. (value, count) pairs to the values' owners, which add them up */
    if (!nomem) nomem = lay_out_pairs(c, tab, nb, count, &pairs) != FK_OK;
    int st = nomem ? fk_fail(err, FK_ENOMEM, "out of memory counting the groups of %" PRIu64 " particles", n) : FK_OK;
    if (!(st = fk_dist_agree(st, err, NULL))) st = exchange(c, pairs, count, 2 * sizeof *pairs, &recv, &nrecv, err);
    if (st) goto out;
    const uint64_t *rp = recv;
#pragma omp parallel for schedule(static)
    for (uint64_t e = 0; e < nrecv; e++) __atomic_fetch_add(&gsize[rp[2 * e] - c->lo], rp[2 * e + 1], __ATOMIC_RELAXED);
    /* 3. the groups owned here numbered */
    st = number_owned(c, gsize, minsize, n, gidr, info, err);
    free(gsize);
    gsize = NULL;
    if (st) goto out;
    /* 4. each pair answered with its number */
    uint64_t *back = calloc((size_t)c->R, sizeof *back);
    reply = malloc((nrecv ? nrecv : 1) * sizeof *reply);
    st = back && reply ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory answering %" PRIu64 " groups", nrecv);
    if (!(st = fk_dist_agree(st, err, NULL))) {
#pragma omp parallel for schedule(static)
        for (uint64_t e = 0; e < nrecv; e++) reply[e] = gidr[rp[2 * e] - c->lo];
        for (int q = 0; q < c->R; q++) back[q] = c->rc[q];
        void *got = NULL;
        st = exchange(c, reply, back, sizeof *reply, &got, &nans, err);
        ans = got;
    }
    free(back);
    if (st) goto out;
    /* 5. every particle numbered, the answers found by the blocks' tables */
#pragma omp parallel for schedule(static, 1)
    for (int b = 0; b < nb; b++) number_block(c, gmin, BLOCK(n, b, nb), BLOCK(n, b + 1, nb), gidr, &tab[b], ans, pgid);
out:
    for (int b = 0; tab && b < nb; b++) {
        free(tab[b].key);
        free(tab[b].val);
    }
    free(tab);
    free(gsize);
    free(count);
    free(pairs);
    free(recv);
    free(reply);
    free(ans);
    return st;
}

/* check_level's failure, the lowest failing row named (the rows, and
 * which particles are there, built again). */
static int check_exact(const ctx *c, const route *rt, const uint32_t *pr, const uint32_t *gidr, int k,
                       fk_error *err)
{
    const uint64_t len = c->hi - c->lo, words = len / 64 + 1, *rid = rt->rid;
    uint32_t *row = fk_big_alloc((len ? len : 1) * sizeof *row);
    uint64_t *here = fk_big_alloc(words * sizeof *here), bad = len;
    int st = row && here ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " group ids", len);
    if (!st) {
        /* the IDs are distinct (route_ids): each row written once; the bits
         * of one word may come from two threads */
#pragma omp parallel
        {
#pragma omp for schedule(static) nowait
            for (uint64_t r = 0; r < len; r++) row[r] = 0;
#pragma omp for schedule(static)
            for (uint64_t w = 0; w < words; w++) here[w] = 0;
#pragma omp for schedule(static)
            for (uint64_t m = 0; m < rt->nrecv; m++) {
                uint64_t r = rid[m] - c->lo;
                row[r] = pr[m];
                __atomic_fetch_or(&here[r / 64], UINT64_C(1) << (r % 64), __ATOMIC_RELAXED);
            }
#pragma omp for schedule(static) reduction(min : bad)
            for (uint64_t r = 0; r < len; r++)
                if (gidr[r] && (!(here[r / 64] >> (r % 64) & 1) || row[r] != gidr[r]) && r < bad) bad = r;
        }
        if (bad < len && !(here[bad / 64] >> (bad % 64) & 1))
            st = fk_fail(err, FK_EFORMAT,
                         "GMIN level %d: the group of lowest original index %" PRIu64
                         " has no particle %" PRIu64 " in any rank's stream (a rank's stream missing?)",
                         k, c->lo + bad, c->lo + bad);
        else if (bad < len)
            st = fk_fail(err, FK_EFORMAT,
                         "GMIN level %d: particle %" PRIu64 " is not in the group it is the lowest index of", k,
                         c->lo + bad);
    }
    free(here);
    free(row);
    return st;
}

/* The owner's check of one level: each kept group's lowest ID is a particle
 * in that group (pr: the routed numbers of the owned particles, gidr the
 * groups by lowest ID). The IDs being distinct, that holds when as many
 * owned particles are some kept group's lowest ID as there are kept groups,
 * and each of them is in its group: two passes, no scratch. On success
 * *rows (when asked) gets the .grp rows of the owned range. */
static int check_level(const ctx *c, const route *rt, const uint32_t *pr, const uint32_t *gidr, int k,
                       uint32_t **rows, fk_error *err)
{
    const uint64_t len = c->hi - c->lo, *rid = rt->rid;
    uint32_t *row = rows ? fk_big_alloc((len ? len : 1) * sizeof *row) : NULL;
    if (rows && !row) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " group ids", len);
    uint64_t kept = 0, hit = 0;
    int wrong = 0;
#pragma omp parallel
    {
        if (row) {
#pragma omp for schedule(static)
            for (uint64_t r = 0; r < len; r++) row[r] = 0;
        }
#pragma omp for schedule(static) reduction(+ : hit) reduction(| : wrong) nowait
        for (uint64_t m = 0; m < rt->nrecv; m++) {
            uint64_t r = rid[m] - c->lo;
            uint32_t g = gidr[r];
            if (row) row[r] = pr[m];
            if (g) {
                hit++;
                wrong |= pr[m] != g;
            }
        }
#pragma omp for schedule(static) reduction(+ : kept)
        for (uint64_t r = 0; r < len; r++) kept += gidr[r] != 0;
    }
    int st = wrong || hit != kept ? check_exact(c, rt, pr, gidr, k, err) : FK_OK;
    if (st || !rows)
        free(row);
    else
        *rows = row;
    return st;
}

/* ---- outputs ------------------------------------------------------------- */

/* Rows a thread formats at a time: 1 << 17 rows is at most 1.4 MB of text. */
#define PIECE_ROWS (UINT64_C(1) << 17)

/* A rank's .grp rows as text in pieces of PIECE_ROWS rows: at[p] the
 * offset of piece p's text from the first's, at[npieces] the whole text's
 * bytes. */
typedef struct grptext {
    const uint32_t *rows;
    uint64_t len, npieces, *at;
} grptext;

static uint64_t piece_end(const grptext *g, uint64_t p)
{
    return (p + 1) * PIECE_ROWS < g->len ? (p + 1) * PIECE_ROWS : g->len;
}

/* Every piece's bytes counted on all cores. */
static int grp_measure(grptext *g, const uint32_t *rows, uint64_t len)
{
    g->rows = rows;
    g->len = len;
    g->npieces = (len + PIECE_ROWS - 1) / PIECE_ROWS;
    g->at = malloc((g->npieces + 1) * sizeof *g->at);
    if (!g->at) return FK_ENOMEM;
    g->at[0] = 0;
#pragma omp parallel for schedule(dynamic, 1)
    for (uint64_t p = 0; p < g->npieces; p++) g->at[p + 1] = fk_grp_bytes(rows, p * PIECE_ROWS, piece_end(g, p));
    for (uint64_t p = 0; p < g->npieces; p++) g->at[p + 1] += g->at[p];
    return FK_OK;
}

/* Writes n bytes at off: whether all of them went (Open MPI's MPI-IO may say
 * MPI_SUCCESS for a write that failed: the count tells). */
static int write_all_at(MPI_File fh, uint64_t off, const char *buf, size_t n)
{
    MPI_Status s;
    int got = 0;
    return MPI_File_write_at(fh, (MPI_Offset)off, buf, (int)n, MPI_CHAR, &s) == MPI_SUCCESS &&
           MPI_Get_count(&s, MPI_CHAR, &got) == MPI_SUCCESS && (size_t)got == n;
}

/* Writes g's text at off in batches of a piece a thread: while the main
 * thread writes one batch (MPI is called from it alone; a batch is below
 * MPI's int count), the others format the next, and it joins them when
 * done. FK_ENOMEM, FK_EIO when a write came short. */
static int grp_write_text(MPI_File fh, uint64_t off, const grptext *g)
{
    uint64_t per = (uint64_t)omp_get_max_threads();
    if (per > 1024) per = 1024;
    uint64_t nbatch = (g->npieces + per - 1) / per;
    char *buf[2] = {malloc(per * PIECE_ROWS * FK_GRP_ROW_MAX), malloc(per * PIECE_ROWS * FK_GRP_ROW_MAX)};
    int st = buf[0] && buf[1] ? FK_OK : FK_ENOMEM;
    if (st) nbatch = 0;
    /* every thread takes every step (a barrier each): a failed write only
     * stops the writing */
#pragma omp parallel
    for (uint64_t k = 0; k <= nbatch; k++) {
#pragma omp master
        if (k > 0 && !st) {
            uint64_t a = (k - 1) * per, b = k * per < g->npieces ? k * per : g->npieces;
            if (!write_all_at(fh, off + g->at[a], buf[(k - 1) % 2], g->at[b] - g->at[a])) st = FK_EIO;
        }
        if (k < nbatch) {
            uint64_t a = k * per, b = (k + 1) * per < g->npieces ? (k + 1) * per : g->npieces;
#pragma omp for schedule(dynamic, 1) nowait
            for (uint64_t p = a; p < b; p++)
                fk_grp_format(g->rows, p * PIECE_ROWS, piece_end(g, p), buf[k % 2] + (g->at[p] - g->at[a]));
        }
#pragma omp barrier
    }
    free(buf[0]);
    free(buf[1]);
    return st;
}

/* Collective: writes the .grp text of every rank's owned rows into one
 * file, atomically (a temporary renamed by rank 0 after all succeeded). */
static int write_grp(const ctx *c, const uint32_t *rows, const char *path, fk_error *err)
{
    grptext g;
    int st = grp_measure(&g, rows, c->hi - c->lo) ? fk_fail(err, FK_ENOMEM, "out of memory formatting the .grp text")
                                                  : FK_OK;
    if ((st = fk_dist_agree(st, err, NULL))) return st;
    char head[32] = "";
    if (c->rank == 0) snprintf(head, sizeof head, "%" PRIu64 "\n", c->nsource);
    uint64_t hl = strlen(head), bytes = hl + g.at[g.npieces], off = 0;
    MPI_Exscan(&bytes, &off, 1, MPI_UINT64_T, MPI_SUM, COMM);
    if (c->rank == 0) off = 0;
    /* rank 0 opens the output (a temporary beside the final name, removed on
     * a signal too), every rank writes its file */
    fk_output *out = NULL;
    char target[4200] = "";
    if (c->rank == 0 && !(st = fk_output_open(&out, path, 0, 1, err))) {
        const char *t = fk_output_target(out);
        if (!t || strlen(t) >= sizeof target)
            st = fk_fail(err, FK_EINVAL, "under mpirun, --format=grp needs -o FILE (the ranks write one file)");
        else
            snprintf(target, sizeof target, "%s", t);
    }
    if ((st = fk_dist_agree(st, err, NULL))) {
        fk_output_abort(out);
        free(g.at);
        return st;
    }
    MPI_Bcast(target, (int)sizeof target, MPI_CHAR, 0, COMM);
    MPI_File fh;
    int rc = MPI_File_open(COMM, target, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        st = fk_fail(err, FK_EIO, "%s: cannot write: MPI-IO cannot open it", path);
    } else {
        st = hl && !write_all_at(fh, off, head, hl) ? FK_EIO : grp_write_text(fh, off + hl, &g);
        if (st == FK_ENOMEM)
            fk_fail(err, st, "out of memory formatting the .grp text");
        else if (st)
            fk_fail(err, st, "%s: cannot write: MPI-IO wrote less than asked (a full disk?)", path);
        /* Not an error: a device written in place (/dev/null) cannot sync;
         * rank 0's commit fsyncs the file, as every output is. */
        MPI_File_sync(fh);
        if (MPI_File_close(&fh) != MPI_SUCCESS && !st)
            st = fk_fail(err, FK_EIO, "%s: cannot write: MPI-IO failed to close it", path);
    }
    free(g.at);
    st = fk_dist_agree(st, err, NULL);
    if (c->rank == 0) {
        if (st)
            fk_output_abort(out);
        else
            st = fk_output_commit(out, err);
    }
    return fk_dist_agree(st, err, NULL);
}

/* *p = max(*p, v), *p = min(*p, v), by any thread: a compare-and-swap only
 * where v would change *p (nested levels: once a group). */
static inline void atomic_max_u32(uint32_t *p, uint32_t v)
{
    uint32_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static inline void atomic_min_u32(uint32_t *p, uint32_t v)
{
    uint32_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* GPAR of level k >= 1: row g the level k-1 group holding group g, from
 * every rank's particles (the whole table on every rank). */
static int parents(const ctx *c, const uint32_t *up, const uint32_t *gid, uint64_t n, uint64_t ngroups, int k,
                   uint32_t **par, fk_error *err)
{
    (void)c;
    if (ngroups + 1 > INT_MAX) /* the same on every rank */
        return fk_fail(err, FK_EUNSUP, "GPAR of %" PRIu64 " groups: more than MPI's %d elements", ngroups, INT_MAX);
    uint32_t *hi = calloc(ngroups + 1, sizeof *hi), *lo = malloc((ngroups + 1) * sizeof *lo);
    int st = hi && lo ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory for the parents of %" PRIu64 " groups", ngroups);
    if (!st) {
        memset(lo, 0xff, (ngroups + 1) * sizeof *lo);
        /* on all cores, a run of one (group, parent) once; the first
         * particle in no kept group of level k - 1 named */
        uint64_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad)
        for (uint64_t i = 0; i < n; i++) {
            uint32_t g = gid[i], p = up[i];
            if (!g || (i && gid[i - 1] == g && up[i - 1] == p)) continue;
            if (!p) {
                if (i < bad) bad = i;
                continue;
            }
            atomic_max_u32(&hi[g], p);
            atomic_min_u32(&lo[g], p);
        }
        if (bad < n)
            st = fk_fail(err, FK_EFORMAT, "group %" PRIu32 " of level %d has a particle in no kept group of level %d"
                         " (the levels do not nest)", gid[bad], k, k - 1);
    }
    if ((st = fk_dist_agree(st, err, NULL))) {
        free(hi);
        free(lo);
        return st;
    }
    MPI_Allreduce(MPI_IN_PLACE, hi, (int)(ngroups + 1), MPI_UINT32_T, MPI_MAX, COMM);
    MPI_Allreduce(MPI_IN_PLACE, lo, (int)(ngroups + 1), MPI_UINT32_T, MPI_MIN, COMM);
    hi[0] = 0;
    for (uint64_t g = 1; g <= ngroups && !st; g++) {
        if (!hi[g])
            st = fk_fail(err, FK_EFORMAT, "group %" PRIu64 " of level %d has no member", g, k);
        else if (lo[g] != hi[g])
            st = fk_fail(err, FK_EFORMAT,
                         "group %" PRIu64 " of level %d has particles in groups %" PRIu32 " and %" PRIu32
                         " of level %d (the levels do not nest)",
                         g, k, lo[g], hi[g], k - 1);
    }
    free(lo);
    if (st) {
        free(hi);
        return st;
    }
    *par = hi;
    return FK_OK;
}

static int write_level(const ctx *c, input *d, int k, const fk_groups *info, const uint32_t *gid,
                       const uint32_t *par, fk_error *err)
{
    char *text, *full;
    int st = fk_groups_format(info, &text, err);
    if (st) return st;
    size_t tl = strlen(text);
    full = malloc(tl + 96);
    if (!full) {
        free(text);
        return fk_fail(err, FK_ENOMEM, "out of memory");
    }
    snprintf(full, tl + 96, "%sranks %d\nrank %d\nnlocal %" PRIu64 "\n", text, c->R, c->rank, d->snap.n);
    free(text);
    fk_chunk g;
    fk_chunk_init(&g, "GIDL", "<u4", FK_CF_PARTICLE, d->snap.n, 1);
    g.level = (uint32_t)k;
    st = fk_writer_text(d->w, "GRPS", (uint32_t)k, full, err);
    free(full);
    if (!st) st = fk_writer_put(d->w, &g, gid, err);
    if (!st && par) {
        fk_chunk_init(&g, "GPAR", "<u4", 0, info->ngroups + 1, 1);
        g.level = (uint32_t)k;
        st = fk_writer_put(d->w, &g, par, err);
    }
    return st;
}

/* ---- the run ------------------------------------------------------------- */

int fk_dgroups_run(const fk_dgroups_opts *o, fk_dgroups_info *info, fk_error *err)
{
    double t0 = fk_now();
    memset(info, 0, sizeof *info);
    ctx c = {0};
    MPI_Comm_rank(COMM, &c.rank);
    MPI_Comm_size(COMM, &c.R);
    info->rank = c.rank;
    info->ranks = c.R;
    input d = {0};
    route rt = {0};
    uint32_t *pgid[FK_LEVELS_MAX] = {0}, *rows = NULL, *gidr = NULL, *pr = NULL, *par = NULL;
    int st = FK_OK;
    c.rc = malloc((size_t)c.R * sizeof *c.rc);
    if (!c.rc) st = fk_fail(err, FK_ENOMEM, "out of memory");
    /* Names: the same check on every rank, so every rank fails alike. */
    if (!st && c.R > 1 && !fk_dist_has_pattern(o->input))
        st = fk_fail(err, FK_EINVAL, "input '%s': with %d ranks the name needs %%r (each rank reads its own stream)",
                     o->input, c.R);
    if (!st && o->format == FK_DGROUPS_GRP && (!o->output || !strcmp(o->output, "-")))
        st = fk_fail(err, FK_EINVAL, "under mpirun, --format=grp needs -o FILE (the ranks write one file)");
    if (!st && o->format == FK_DGROUPS_GRP && fk_dist_has_pattern(o->output))
        st = fk_fail(err, FK_EINVAL, "output '%s': --format=grp writes one file, its name takes no %%r", o->output);
    if (!st && o->format == FK_DGROUPS_STREAM && c.R > 1 && (!o->output || !fk_dist_has_pattern(o->output)))
        st = fk_fail(err, FK_EINVAL, "with %d ranks, --format=stream needs -o NAME with %%r (a stream per rank)", c.R);
    /* The .grp (made by rank 0 at the end) is tried before the input is read: a name that
     * cannot be made fails at once. A device or FIFO is not opened twice. */
    struct stat ps;
    if (!st && o->format == FK_DGROUPS_GRP && c.rank == 0 && (stat(o->output, &ps) != 0 || S_ISREG(ps.st_mode))) {
        fk_output *probe = NULL;
        if (!(st = fk_output_open(&probe, o->output, 0, 1, err))) fk_output_abort(probe);
    }
    if ((st = fk_dist_agree(st, err, NULL))) goto done;
    if (!st) st = read_input(&c, o, &d, err);
    if ((st = fk_dist_agree(st, err, NULL))) goto done;
    double t = fk_now();
    info->t_read = t - t0;
    /* What the ranks must agree on. */
    uint64_t mn[2] = {d.snap.nsource, (uint64_t)d.nlev}, mx[2] = {d.snap.nsource, (uint64_t)d.nlev};
    fk_dist_min(mn, 2);
    fk_dist_max(mx, 2);
    if (mn[0] != mx[0])
        st = fk_fail(err, FK_EFORMAT, "the ranks' streams disagree on nsource (%" PRIu64 " and %" PRIu64
                     "): not slices of one snapshot", mn[0], mx[0]);
    else if (mn[1] != mx[1])
        st = fk_fail(err, FK_EFORMAT, "the ranks' streams disagree on the number of GMIN levels (%" PRIu64
                     " and %" PRIu64 ")", mn[1], mx[1]);
    else if (o->format == FK_DGROUPS_GRP && o->level >= (uint32_t)d.nlev)
        st = fk_fail(err, FK_EFORMAT, "--level=%" PRIu32 ": the streams have GMIN levels 0 to %d", o->level,
                     d.nlev - 1);
    if ((st = fk_dist_agree(st, err, NULL))) goto done;
    c.nsource = d.snap.nsource;
    c.start = malloc(((size_t)c.R + 1) * sizeof *c.start);
    st = c.start ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory");
    if ((st = fk_dist_agree(st, err, NULL))) goto done;
    for (int q = 0; q <= c.R; q++) c.start[q] = range_lo(c.nsource, c.R, q);
    c.lo = c.start[c.rank];
    c.hi = c.start[c.rank + 1];
    info->nlev = d.nlev;
    if ((st = route_ids(&c, &d, &rt, err))) goto done;
    info->t_route = fk_now() - t;
    gidr = fk_big_alloc((c.hi - c.lo ? c.hi - c.lo : 1) * sizeof *gidr);
    st = gidr ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory");
    for (int k = 0; k < d.nlev && !st; k++) {
        if (o->format == FK_DGROUPS_GRP && k != (int)o->level) continue;
        pgid[k] = fk_big_alloc((d.snap.n ? d.snap.n : 1) * sizeof *pgid[k]);
        if (!pgid[k]) st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " group ids", d.snap.n);
    }
    if ((st = fk_dist_agree(st, err, NULL))) goto done;
    info->t_number = fk_now() - t - info->t_route; /* the numbers' arrays, faulted in */
    for (int k = 0; k < d.nlev; k++) {
        if (!pgid[k]) continue;
        t = fk_now();
        if ((st = number_level(&c, &d, d.gmin[k], o->minsize, pgid[k], gidr, &info->lev[k], err))) goto done;
        info->lev[k].level = (uint32_t)k;
        info->t_number += fk_now() - t;
        t = fk_now();
        if ((st = route_u32(&c, &rt, pgid[k], d.snap.n, &pr, err))) goto done;
        st = check_level(&c, &rt, pr, gidr, k, o->format == FK_DGROUPS_GRP ? &rows : NULL, err);
        if (pr != pgid[k]) free(pr);
        pr = NULL;
        if ((st = fk_dist_agree(st, err, NULL))) goto done;
        info->t_check += fk_now() - t;
        t = fk_now();
        if (o->format == FK_DGROUPS_GRP) {
            if ((st = write_grp(&c, rows, o->output, err))) goto done;
            info->t_write += fk_now() - t;
            continue;
        }
        if (k > 0 && (st = parents(&c, pgid[k - 1], pgid[k], d.snap.n, info->lev[k].ngroups, k, &par, err)))
            goto done;
        st = write_level(&c, &d, k, &info->lev[k], pgid[k], par, err);
        free(par);
        par = NULL;
        if ((st = fk_dist_agree(st, err, NULL))) goto done;
        info->t_write += fk_now() - t;
    }
    if (d.w) {
        /* every rank's stream complete before any is renamed into place */
        st = fk_dist_agree(fk_writer_finish(d.w, err), err, NULL);
        if (!st) {
            /* a rename that fails on one rank undoes those that succeeded */
            int mine = fk_output_commit(d.out, err);
            d.out = NULL;
            if ((st = fk_dist_agree(mine, err, NULL)) != FK_OK && mine == FK_OK && strcmp(d.oname, "-")) unlink(d.oname);
        }
    }
done:
    if (d.w) fk_writer_free(d.w); /* its thread done before the file is closed */
    if (d.out) fk_output_abort(d.out);
    if (d.r) fk_reader_close(d.r);
    if (d.in) fk_input_close(d.in);
    free(d.name);
    free(d.oname);
    free(d.ids);
    for (int k = 0; k < FK_LEVELS_MAX; k++) {
        free(d.gmin[k]);
        free(pgid[k]);
    }
    route_free(&rt);
    free(rows);
    free(gidr);
    free(c.rc);
    free(c.start);
    uint64_t sent[2] = {c.sent, c.sent};
    fk_dist_max(&sent[0], 1);
    fk_dist_sum(&sent[1], 1);
    info->sent_max = sent[0];
    info->sent_sum = sent[1];
    info->seconds = fk_now() - t0;
    return st;
}

#else /* a build without MPI */

int fk_dgroups_run(const fk_dgroups_opts *o, fk_dgroups_info *info, fk_error *err)
{
    (void)o;
    (void)info;
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
}

#endif
