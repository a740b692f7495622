/* dist_halos.c - halostats under mpirun: members to their group's owner rank, rows computed there, gathered on rank 0 (see dist_halos.h). */
#include "dist_halos.h"
#include "clock.h"

#ifdef FK_HAVE_MPI

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bigmem.h"
#include "dist.h"
#include "dist_alltoall.h"

#define COMM fk_dist_comm() /* this thread's communicator (dist.h) */

/* The owner's members of one level, structure of arrays. */
typedef struct owned {
    uint64_t n;
    float *pos, *vel, *mass;
    uint64_t *ids;
    uint32_t *grp;
    uint8_t *type; /* snap.h's types */
} owned;

static void owned_free(owned *w)
{
    free(w->pos), free(w->vel), free(w->mass), free(w->ids), free(w->grp), free(w->type);
    memset(w, 0, sizeof *w);
}

/* Who computes which group of a level: the same on every rank. */
typedef struct plan {
    uint64_t ng;
    uint32_t *owner;  /* ng: the group's rank                           */
    uint32_t *local;  /* ng: its index among that rank's groups, 0..    */
    uint64_t *ngl;    /* R: groups of each rank                          */
    uint64_t *load;   /* R: members of each rank                         */
} plan;

static void plan_free(plan *p)
{
    free(p->owner), free(p->local), free(p->ngl), free(p->load);
    memset(p, 0, sizeof *p);
}

/* A binary heap of the ranks by (load, rank): the least loaded on top;
 * at[d] is rank d's place in it. */
static int lighter(const plan *p, uint32_t a, uint32_t b)
{
    return p->load[a] < p->load[b] || (p->load[a] == p->load[b] && a < b);
}

/* Rank heap[i]'s load grew: moved down to its place. */
static void sift_down(const plan *p, uint32_t *heap, uint32_t *at, int R, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < R && lighter(p, heap[l], heap[m])) m = l;
        if (r < R && lighter(p, heap[r], heap[m])) m = r;
        if (m == i) return;
        uint32_t t = heap[i];
        heap[i] = heap[m], heap[m] = t;
        at[heap[i]] = (uint32_t)i, at[heap[m]] = (uint32_t)m;
        i = m;
    }
}

#define HOME_BITS 16 /* ranks whose home can be named: the rank in the low bits of the count's word */

/* The members of every group summed over the ranks (an allreduce of 8 ng
 * bytes), and which rank holds most of each (its "home": an allreduce of
 * the largest (count, rank) word, 8 ng bytes more). Then the groups are
 * dealt largest first: each to its home, whose members then stay where they
 * are, unless that would take the home beyond the mean load by more than
 * 1/64 (then to the rank with the fewest members so far; ties: the lower
 * rank): members balanced and as few moved as that allows, the same plan on
 * every rank. Every group must have a member on some rank. Collective; the
 * outcome is the same on every rank. */
static int make_plan(const fk_dhalos_in *in, int k, int rank, int R, plan *p, uint64_t *sent, fk_error *err)
{
    const uint64_t ng = in->ngroups[k];
    memset(p, 0, sizeof *p);
    p->ng = ng;
    uint64_t *size = calloc(ng ? ng : 1, sizeof *size), *home = malloc((ng ? ng : 1) * sizeof *home);
    uint32_t *heap = malloc((size_t)R * sizeof *heap), *at = malloc((size_t)R * sizeof *at);
    p->owner = malloc((ng ? ng : 1) * sizeof *p->owner);
    p->local = malloc((ng ? ng : 1) * sizeof *p->local);
    p->ngl = calloc((size_t)R, sizeof *p->ngl);
    p->load = calloc((size_t)R, sizeof *p->load);
    int st = !size || !home || !heap || !at || !p->owner || !p->local || !p->ngl || !p->load
                 ? fk_fail(err, FK_ENOMEM, "rank %d: out of memory for the %" PRIu64 " groups of level %d", rank, ng, k)
                 : FK_OK;
    st = fk_dist_agree(st, err, NULL);
    if (!st) {
        const uint32_t *gid = in->gid[k];
        /* members of one group mostly come in runs: one atomic add a run */
        #pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < in->n; i++) {
            if (!gid[i] || (i > 0 && gid[i - 1] == gid[i] && i % 65536 != 0)) continue;
            uint64_t e = i + 1;
            while (e < in->n && gid[e] == gid[i] && e % 65536 != 0) e++;
            #pragma omp atomic
            size[gid[i] - 1] += e - i;
        }
        const int named = R > 1 && R <= (1 << HOME_BITS);
        if (named) {
            /* (this rank's count, then the lower rank first) in one word: its maximum names the home */
            #pragma omp parallel for schedule(static)
            for (uint64_t g = 0; g < ng; g++)
                home[g] = size[g] << HOME_BITS | (uint64_t)((1 << HOME_BITS) - 1 - rank);
        }
        for (uint64_t a = 0; a < ng; a += INT_MAX / 2) {
            int c = (int)(ng - a < INT_MAX / 2 ? ng - a : INT_MAX / 2);
            MPI_Allreduce(MPI_IN_PLACE, size + a, c, MPI_UINT64_T, MPI_SUM, COMM);
            if (named) MPI_Allreduce(MPI_IN_PLACE, home + a, c, MPI_UINT64_T, MPI_MAX, COMM);
        }
        if (R > 1) *sent += ng * sizeof *size * (named ? 2 : 1);
        uint64_t total = 0;
        for (uint64_t g = 0; g < ng; g++) total += size[g];
        const uint64_t mean = (total + (uint64_t)R - 1) / (uint64_t)R, cap = mean + mean / 64;
        for (int d = 0; d < R; d++) heap[d] = at[d] = (uint32_t)d; /* all loads 0: ordered already */
        for (uint64_t g = 0; g < ng && !st; g++) {
            if (size[g] == 0) {
                st = fk_fail(err, FK_EFORMAT, "group %" PRIu64 " of level %d has no member on any rank (a rank's "
                             "stream missing from the run?)", g + 1, k);
                break;
            }
            uint32_t d = heap[0];
            if (named) {
                uint32_t h = (uint32_t)((1 << HOME_BITS) - 1 - (int)(home[g] & ((1u << HOME_BITS) - 1)));
                if (p->load[h] + size[g] <= cap) d = h;
            }
            p->owner[g] = d;
            p->local[g] = (uint32_t)p->ngl[d]++;
            p->load[d] += size[g];
            sift_down(p, heap, at, R, (int)at[d]);
        }
    }
    free(size), free(home), free(heap), free(at);
    if (st) plan_free(p);
    return st;
}

/* The same value on every rank, or an error naming what differs. */
static int same_u64(uint64_t v, const char *what, fk_error *err)
{
    uint64_t lo = v, hi = v;
    fk_dist_min(&lo, 1);
    fk_dist_max(&hi, 1);
    if (lo != hi)
        return fk_fail(err, FK_EFORMAT, "the ranks' streams disagree on %s (%" PRIu64 " to %" PRIu64
                       "): they are not parts of one grouped snapshot", what, lo, hi);
    return FK_OK;
}

static int same_dbl(double v, const char *what, fk_error *err)
{
    double lo, hi;
    fk_dist_range(v, &lo, &hi, err);
    if (!(lo == hi))
        return fk_fail(err, FK_EFORMAT, "the ranks' streams disagree on %s (%.10g to %.10g): they are not parts of one "
                       "grouped snapshot", what, lo, hi);
    return FK_OK;
}

/* Checks that the ranks agree on what every one of them must share. */
static int check_shared(const fk_dhalos_in *in, fk_error *err)
{
    int st = same_u64((uint64_t)in->nlevels, "the number of levels (GIDL chunks)", err);
    for (int k = 0; k < in->nlevels && !st; k++) {
        char what[64];
        snprintf(what, sizeof what, "the groups of level %d (GRPS)", k);
        st = same_u64(in->ngroups[k], what, err);
    }
    if (!st) st = same_u64((uint64_t)in->periodic, "the periodicity", err);
    if (!st) st = same_dbl(in->box, "the box", err);
    if (!st) st = same_dbl(in->origin, "the origin", err);
    return st;
}

/* Every group number of this rank within the level's groups, and what
 * fk_halostats_compute checks of a member, checked here where the particle
 * can be named by its index in this rank's stream (the owner's index would
 * mean nothing to the user). */
static int check_level(const fk_dhalos_in *in, int k, fk_error *err)
{
    const uint32_t *gid = in->gid[k];
    uint64_t first = in->n; /* the first particle that fails, found on every core */
    #pragma omp parallel for schedule(static) reduction(min : first)
    for (uint64_t i = 0; i < in->n; i++) {
        if (gid[i] == 0 || i >= first) continue;
        int bad = gid[i] > in->ngroups[k] || !(in->mass[i] >= 0) || !isfinite(in->mass[i]);
        for (int e = 0; e < 6; e++) bad |= !isfinite(e < 3 ? in->pos[3 * i + e] : in->vel[3 * i + e - 3]);
        if (bad) first = i;
    }
    if (first < in->n) { /* the message for that one */
        const uint64_t i = first;
        if (gid[i] > in->ngroups[k])
            return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " is in group %" PRIu32 " of level %d, beyond its %"
                           PRIu64 " groups (GRPS)", in->name, i, gid[i], k, in->ngroups[k]);
        float m = in->mass[i];
        if (!(m >= 0) || !isfinite(m))
            return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has mass %g (masses must be finite and >= 0)",
                           in->name, i, m);
        for (int e = 0; e < 6; e++)
            if (!isfinite(e < 3 ? in->pos[3 * i + e] : in->vel[3 * i + e - 3]))
                return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has a non-finite %s", in->name, i,
                               e < 3 ? "position" : "velocity");
    }
    return FK_OK;
}

/* The parts of a member that travel, each as an array of its own. */
enum { M_POS, M_VEL, M_MASS, M_ID, M_GRP, M_TYPE, M_PARTS };
static const size_t part_size[M_PARTS] = {12, 12, 4, 8, 4, 1};

/* Part f of every grouped particle of level k: of those whose group this
 * rank owns straight into dst (the owner's array of that part) at their
 * place (the gap after the lower ranks' members, this rank's in its stream
 * order), of the others into sb, grouped by destination. Each of T threads
 * places its share of the particles, in order, from its first slots in at
 * (T x R), counting in cur (as many: at is left as it is for the next
 * part). */
static void pack(const fk_dhalos_in *in, int k, const plan *p, int rank, int R, int T, const uint64_t *at,
                 uint64_t *cur, uint64_t below, int f, unsigned char *sb, void *dst)
{
    const uint32_t *gid = in->gid[k];
    const size_t size = part_size[f];
    memcpy(cur, at, (size_t)T * (size_t)R * sizeof *cur);
    #pragma omp parallel num_threads(T)
    {
        const int t = omp_get_thread_num();
        const uint64_t a = in->n * (uint64_t)t / (uint64_t)T, b = in->n * (uint64_t)(t + 1) / (uint64_t)T;
        uint64_t *my = cur + (size_t)t * (size_t)R, mine = below + my[rank];
        for (uint64_t i = a; i < b; i++) {
            if (!gid[i]) continue;
            const uint32_t q = gid[i] - 1, d = p->owner[q];
            unsigned char *to = d == (uint32_t)rank ? (unsigned char *)dst + size * mine++ : sb + size * my[d]++;
            if (f == M_POS) {
                memcpy(to, in->pos + 3 * i, 12);
            } else if (f == M_VEL) {
                memcpy(to, in->vel + 3 * i, 12);
            } else if (f == M_MASS) {
                memcpy(to, in->mass + i, 4);
            } else if (f == M_ID) {
                memcpy(to, in->ids + i, 8);
            } else if (f == M_TYPE) {
                *to = in->type ? in->type[i] : 1; /* 1: snap.h's FK_DARK */
            } else {
                const uint32_t g = p->local[q] + 1;
                memcpy(to, &g, 4);
            }
        }
    }
}

/* Sends every grouped particle of level k to its group's owner; the owner's
 * come in w, by source rank, each rank's in its stream order. Each part
 * (positions, velocities, masses, IDs, group numbers, types) travels as an array
 * of its own, straight into w's array (fk_dist_alltoall_at: no received
 * copy of every member to unpack), through one send buffer of the largest
 * part packed again for each. Those whose group this rank owns go straight
 * from the input into w, not through the send buffer (at 2 ranks of a file
 * in halo order, most of a rank's members). Every pass on every core: each
 * thread counts, then places, its share of the particles, in order.
 * Collective; failures agreed on. */
static int route(const fk_dhalos_in *in, int k, const plan *p, int rank, int R, owned *w, uint64_t *sent,
                 fk_error *err)
{
    const uint32_t *gid = in->gid[k];
    const int T = omp_get_max_threads();
    uint64_t *cnt = calloc((size_t)R, sizeof *cnt), *rcnt = calloc((size_t)R, sizeof *rcnt);
    uint64_t *roff = calloc((size_t)R, sizeof *roff);
    uint64_t *at = calloc((size_t)R * (size_t)T, sizeof *at); /* each thread's first slot in each rank's part */
    uint64_t *cur = calloc((size_t)R * (size_t)T, sizeof *cur);
    unsigned char *sb = NULL;
    uint64_t ns = 0, nr = 0, own = 0, below = 0; /* to other ranks; received; this rank's own; from lower ranks */
    int st = FK_OK;
    memset(w, 0, sizeof *w);
    if (!cnt || !rcnt || !roff || !at || !cur) st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory", rank);
    if (!st) {
        #pragma omp parallel num_threads(T)
        {
            const int t = omp_get_thread_num();
            const uint64_t a = in->n * (uint64_t)t / (uint64_t)T, b = in->n * (uint64_t)(t + 1) / (uint64_t)T;
            uint64_t *my = at + (size_t)t * (size_t)R;
            for (uint64_t i = a; i < b; i++)
                if (gid[i]) my[p->owner[gid[i] - 1]]++;
        }
        /* thread t's first slot for rank d, threads in order within a rank;
         * this rank's own members numbered apart, from 0 (own of them) */
        for (int d = 0; d < R; d++)
            for (int t = 0; t < T; t++) {
                uint64_t c = at[(size_t)t * (size_t)R + d];
                at[(size_t)t * (size_t)R + d] = d == rank ? own : ns;
                *(d == rank ? &own : &ns) += c;
                cnt[d] += c;
            }
        cnt[rank] = 0;
    }
    if (!(st = fk_dist_agree(st, err, NULL))) st = fk_dist_counts(cnt, rcnt, err);
    if (!st) {
        /* the sources in rank order, this rank's own in the gap after the lower ones */
        for (int d = 0; d < R; d++) {
            roff[d] = nr + (d > rank ? own : 0);
            nr += rcnt[d];
            if (d < rank) below += rcnt[d];
        }
        const uint64_t m = nr + own ? nr + own : 1;
        if (!(w->pos = fk_big_alloc(m * 3 * sizeof(float))) || !(w->vel = fk_big_alloc(m * 3 * sizeof(float))) ||
            !(w->mass = fk_big_alloc(m * sizeof(float))) || !(w->ids = fk_big_alloc(m * sizeof *w->ids)) ||
            !(w->grp = fk_big_alloc(m * sizeof *w->grp)) || !(w->type = fk_big_alloc(m)))
            st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " members received", rank, nr);
        else if (!(sb = fk_big_alloc((ns ? ns : 1) * 12)))
            st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " members to send", rank, ns);
    }
    st = fk_dist_agree(st, err, NULL);
    void *const dst[M_PARTS] = {w->pos, w->vel, w->mass, w->ids, w->grp, w->type};
    for (int f = 0; !st && f < M_PARTS; f++) {
        pack(in, k, p, rank, R, T, at, cur, below, f, sb, dst[f]);
        st = fk_dist_alltoall_at(sb, cnt, part_size[f], dst[f], rcnt, roff, err); /* failures agreed inside */
    }
    if (!st) {
        for (int f = 0; f < M_PARTS; f++) *sent += ns * part_size[f];
        w->n = nr + own;
    }
    if (st) owned_free(w);
    free(cnt), free(rcnt), free(roff), free(at), free(cur), free(sb);
    return st;
}

/* The rows of this rank's groups of level k, from their members, each
 * group's put in ID order as one process puts them (halomembers.h): every
 * sum then runs in the single process's order, whatever the split into
 * ranks and the order the members came in. */
static int compute(const fk_dhalos_in *in, const fk_dhalos_opts *o, const plan *p, const owned *w, int rank,
                   double m_hires, fk_halo *h, fk_dhalos_info *info, fk_error *err)
{
    const uint64_t ngl = p->ngl[rank];
    fk_halo_input hin = {w->n,         w->pos,    w->vel,    w->mass,      w->ids,    w->grp,
                         in->periodic, in->box,   in->origin, in->comoving, in->vscale, in->hflow,
                         w->type,      m_hires};
    double *phi = NULL;
    unsigned char *bound = NULL;
    int st = FK_OK;
    if (o->unbind && o->centre == FK_CENTRE_MBP && !(phi = malloc((w->n ? w->n : 1) * sizeof *phi)))
        st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for the potentials of %" PRIu64 " members", rank, w->n);
    if (!st && o->unbind && !(bound = malloc(w->n ? w->n : 1)))
        st = fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " members", rank, w->n);
    fk_halo_order members = {0}; /* gathered once for both calls */
    fk_halo_timing tm = {0};
    double t0 = fk_now(), t1 = t0, t2 = t0;
    if (!st) st = fk_halo_order_build(w->n, w->grp, w->ids, ngl, &members, err);
    t1 = fk_now();
    if (!st) st = fk_halostats_compute_members(&hin, &members, h, in->name, err);
    t2 = fk_now();
    if (!st) st = fk_halostats_centres_members(&hin, &members, o->centre, &o->pot, o->minima, h, &tm, phi, err);
    fk_halo_order_free(&members);
    const double t3 = fk_now();
    if (!st && o->unbind) st = fk_unbind_halos_phi(&hin, ngl, h, &o->up, phi, bound, err);
    info->t_order += t1 - t0, info->t_props += t2 - t1, info->t_unbind += fk_now() - t3;
    info->t_centre_gather += tm.gather, info->t_potential += tm.potential, info->t_profile += tm.profile;
    for (uint64_t g = 0; g < p->ng && !st; g++) /* the rank's groups, in ascending number */
        if (p->owner[g] == (uint32_t)rank) h[p->local[g]].id = g + 1;
    free(phi), free(bound);
    return st;
}

/* Rank 0 gathers the ngl rows of every rank into group order. Collective;
 * failures agreed on. */
static int gather(const fk_halo *h, const plan *p, int rank, int R, fk_halo **out, uint64_t *sent, fk_error *err)
{
    const uint64_t ngl = p->ngl[rank], ng = p->ng;
    int *rc = NULL, *rd = NULL;
    fk_halo *all = NULL;
    int st = FK_OK;
    *out = NULL;
    if (ngl > INT_MAX) st = fk_fail(err, FK_EUNSUP, "rank %d: %" PRIu64 " groups to gather: at most %d", rank, ngl, INT_MAX);
    if (!st && rank == 0 &&
        (!(rc = calloc((size_t)R, sizeof *rc)) || !(rd = calloc((size_t)R, sizeof *rd)) ||
         !(all = malloc((ng ? ng : 1) * sizeof *all)) || !(*out = malloc((ng ? ng : 1) * sizeof **out))))
        st = fk_fail(err, FK_ENOMEM, "out of memory for the rows of %" PRIu64 " groups", ng);
    st = fk_dist_agree(st, err, NULL);
    if (!st) {
        MPI_Datatype t;
        MPI_Type_contiguous((int)sizeof(fk_halo), MPI_BYTE, &t);
        MPI_Type_commit(&t);
        if (rank == 0)
            for (int d = 0, o = 0; d < R; d++) rc[d] = (int)p->ngl[d], rd[d] = o, o += rc[d];
        MPI_Gatherv(h, (int)ngl, t, all, rc, rd, t, 0, COMM);
        MPI_Type_free(&t);
        if (rank) *sent += ngl * sizeof(fk_halo);
        if (rank == 0)
            for (uint64_t g = 0; g < ng; g++) (*out)[g] = all[(uint64_t)rd[p->owner[g]] + p->local[g]];
    } else if (rank == 0) {
        free(*out);
        *out = NULL;
    }
    free(rc), free(rd), free(all);
    return st;
}

int fk_dhalos_run(const fk_dhalos_in *in, const fk_dhalos_opts *o, fk_halo **rows, fk_dhalos_info *info, fk_error *err)
{
    int rank, R;
    MPI_Comm_rank(COMM, &rank);
    MPI_Comm_size(COMM, &R);
    memset(info, 0, sizeof *info);
    info->rank = rank, info->ranks = R;
    for (int k = 0; k < FK_LEVELS_MAX; k++) rows[k] = NULL;
    int st = in->nlevels < 1 || in->nlevels > FK_LEVELS_MAX
                 ? fk_fail(err, FK_EINVAL, "%s: %d levels: 1 to %d are read", in->name, in->nlevels, FK_LEVELS_MAX)
                 : FK_OK;
    st = fk_dist_agree(st, err, NULL);
    if (!st) st = check_shared(in, err); /* the same outcome on every rank */
    for (int k = 0; k < in->nlevels && !st; k++) st = check_level(in, k, err);
    st = fk_dist_agree(st, err, NULL);
    uint64_t sent = 0, members = 0;
    double t_compute = 0;
    /* the high-resolution mass: the least dark mass over every rank's particles, as one process's */
    double m_hires = fk_halo_hires_mass(in->n, in->mass, in->type);
    if (!st) MPI_Allreduce(MPI_IN_PLACE, &m_hires, 1, MPI_DOUBLE, MPI_MIN, COMM);
    for (int k = 0; k < in->nlevels && !st; k++) {
        double t0 = fk_now();
        owned w;
        plan p;
        st = make_plan(in, k, rank, R, &p, &sent, err);
        if (st) break;
        st = route(in, k, &p, rank, R, &w, &sent, err);
        if (st) {
            plan_free(&p);
            break;
        }
        double t1 = fk_now();
        uint64_t ngl = p.ngl[rank];
        fk_halo *h = malloc((ngl ? ngl : 1) * sizeof *h);
        st = h ? compute(in, o, &p, &w, rank, m_hires, h, info, err)
               : fk_fail(err, FK_ENOMEM, "rank %d: out of memory for %" PRIu64 " groups", rank, ngl);
        members += w.n;
        for (uint64_t j = 0; j < ngl && !st; j++) {
            info->candidates[k] += h[j].candidates;
            info->ntree[k] += h[j].method == FK_POT_BY_TREE;
        }
        owned_free(&w);
        double t2 = fk_now();
        t_compute += t2 - t1;
        st = fk_dist_agree(st, err, NULL);
        if (!st) st = gather(h, &p, rank, R, &rows[k], &sent, err);
        free(h);
        plan_free(&p);
        info->t_route += t1 - t0;
        info->t_compute += t2 - t1;
        info->t_gather += fk_now() - t2;
    }
    if (st) {
        for (int k = 0; k < FK_LEVELS_MAX; k++) free(rows[k]), rows[k] = NULL;
        return st;
    }
    fk_dist_sum(info->candidates, in->nlevels);
    fk_dist_sum(info->ntree, in->nlevels);
    uint64_t v[3] = {sent, members, UINT64_MAX - members};
    info->sent_sum = sent;
    fk_dist_sum(&info->sent_sum, 1);
    fk_dist_max(v, 3);
    info->sent_max = v[0], info->members_max = v[1], info->members_min = UINT64_MAX - v[2];
    MPI_Allreduce(&t_compute, &info->t_compute_max, 1, MPI_DOUBLE, MPI_MAX, COMM);
    return FK_OK;
}

#else /* a build without MPI */

int fk_dhalos_run(const fk_dhalos_in *in, const fk_dhalos_opts *o, fk_halo **rows, fk_dhalos_info *info, fk_error *err)
{
    (void)in, (void)o, (void)info;
    for (int k = 0; k < FK_LEVELS_MAX; k++) rows[k] = NULL;
    return fk_fail(err, FK_EUNSUP, "this build of fofkit has no MPI (build it with libopenmpi-dev installed)");
}

#endif
