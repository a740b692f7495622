/* halostats_input.c - halostats' input: the grouped stream (or with -m foflink's) read on a feed and checked, its levels numbered, each level's groups and hosts; -m's work before the input ends. */
#include "halostats_input.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "groupsrun.h"
#include "kv.h"
#include "levels.h"
#include "streamfeed.h"

static int check_level(const fk_hsin *in, const fk_chunk *c, fk_error *err)
{
    if (c->level >= FK_HSIN_MAX_LEVELS)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s has level %" PRIu32 ": at most %d levels (0 to %d) are read",
                       in->name, c->tag, c->level, FK_HSIN_MAX_LEVELS, FK_HSIN_MAX_LEVELS - 1);
    return FK_OK;
}

/* Loads a chunk of <u4 x 1 into *dest (refusing a second one of its level)
 * after checking its rows (0: any). */
static int load_u32(fk_reader *r, const fk_hsin *in, const fk_chunk *c, uint64_t rows, uint32_t **dest, void **raw,
                    fk_error *err)
{
    if (*dest)
        return fk_fail(err, FK_EFORMAT, "%s: stream has two %s chunks of level %" PRIu32, in->name, c->tag, c->level);
    if (strcmp(c->dtype, "<u4") != 0 || c->ncols != 1)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s holds %s x %" PRIu32 ", expected <u4 x 1", in->name, c->tag,
                       c->dtype, c->ncols);
    if (rows && c->nrows != rows)
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s has %" PRIu64 " rows for the %" PRIu64 " particles of the source",
                       in->name, c->tag, c->nrows, rows);
    int st = fk_reader_load(r, raw, err);
    if (!st) *dest = *raw;
    return st;
}

int fk_hsin_parse_link(fk_hsin *in, const char *text, const char *name, fk_error *err)
{
    char what[300], key[32];
    snprintf(what, sizeof what, "%s: LINK chunk", name);
    for (int k = 0; k < FK_HSIN_MAX_LEVELS; k++) {
        fk_hsin_level *L = &in->lv[k];
        const char *names[3] = {"l", "b", "psi"};
        double *vals[3] = {&L->l, &L->b, &L->psi};
        int *have[3] = {&L->have_l, &L->have_b, NULL};
        for (int q = 0; q < 3; q++) {
            if (k == 0)
                snprintf(key, sizeof key, "%s", names[q]);
            else
                snprintf(key, sizeof key, "%s_%d", names[q], k);
            if (!fk_kv_has(text, key)) continue;
            if (fk_kv_get_dbl(text, key, vals[q], what, err)) return err->code;
            if (have[q]) *have[q] = 1;
        }
    }
    uint64_t periodic = 1;
    if (fk_kv_has(text, "periodic") && fk_kv_get_u64(text, "periodic", &periodic, what, err)) return err->code;
    in->link_isolated = periodic == 0;
    in->have_link = 1;
    return FK_OK;
}

/* The input as the feed reads it (streamfeed.h): what halostats keeps, and
 * with -m what the work before its end needs. */
typedef struct reading {
    fk_hsin *in;
    fk_writer *w;     /* --format=stream: every chunk but HALO and HCOL written on */
    uint64_t minsize; /* -m */
    int link_levels;  /* -m: the levels LINK names (its levels key; 0: none) */
    fk_hsin seen;     /* -m: the input as it was when the early work could start */
    int seen_levels;  /* and link_levels then */
} reading;

/* One chunk of the input (the feed's take): checked, loaded or passed on. */
static int take_chunk(void *ctx, fk_reader *r, const fk_chunk *cp, fk_error *err)
{
    reading *rd = ctx;
    fk_hsin *in = rd->in;
    fk_writer *w = rd->w;
    const uint64_t minsize = rd->minsize;
    fk_chunk c = *cp;
    void *raw = NULL;
    int is = 1; /* a chunk halostats reads */
    int st = FK_OK;
    if (strcmp(c.tag, "POS") == 0 || strcmp(c.tag, "VEL") == 0 || strcmp(c.tag, "MASS") == 0) {
        float **dest = c.tag[0] == 'P' ? &in->pos : c.tag[0] == 'V' ? &in->vel : &in->mass;
        if (*dest) return fk_fail(err, FK_EFORMAT, "%s: stream has two %s chunks", in->name, c.tag);
        if ((st = fk_snap_check_chunk(&in->snap, &c, "<f4", c.tag[0] == 'M' ? 1 : 3, in->name, err)) ||
            (st = fk_reader_load(r, &raw, err)))
            return st;
        *dest = raw;
    } else if (strcmp(c.tag, "ID") == 0) {
        if (in->ids) return fk_fail(err, FK_EFORMAT, "%s: stream has two ID chunks", in->name);
        if ((st = fk_snap_check_chunk(&in->snap, &c, NULL, 1, in->name, err)) || (st = fk_reader_load(r, &raw, err)))
            return st;
    } else if (strcmp(c.tag, "PID") == 0) {
        if (in->pids) return fk_fail(err, FK_EFORMAT, "%s: stream has two PID chunks", in->name);
        if ((st = fk_snap_check_chunk(&in->snap, &c, "<u8", 1, in->name, err)) || (st = fk_reader_load(r, &raw, err)))
            return st;
        in->pids = raw;
    } else if (strcmp(c.tag, "TYPE") == 0) {
        if (in->type) return fk_fail(err, FK_EFORMAT, "%s: stream has two TYPE chunks", in->name);
        if ((st = fk_snap_check_chunk(&in->snap, &c, "|u1", 1, in->name, err)) || (st = fk_reader_load(r, &raw, err)))
            return st;
        in->type = raw;
    } else if (minsize && strcmp(c.tag, "SINK") == 0) {
        if ((st = check_level(in, &c, err)) || (st = load_u32(r, in, &c, in->snap.n, &in->sinks[c.level], &raw, err)))
            return st;
        if ((int)c.level >= in->nsinks) in->nsinks = (int)c.level + 1;
    } else if (minsize && (strcmp(c.tag, "GID") == 0 || strcmp(c.tag, "GRPS") == 0 || strcmp(c.tag, "GPAR") == 0)) {
        return fk_fail(err, FK_EFORMAT,
                       "%s: the stream has groups already (a %s chunk): -m takes foflink's stream; drop -m", in->name,
                       c.tag);
    } else if (strcmp(c.tag, "GID") == 0 || strcmp(c.tag, "GPAR") == 0) {
        if ((st = check_level(in, &c, err))) return st;
        fk_hsin_level *L = &in->lv[c.level];
        if (c.tag[1] == 'I') {
            st = load_u32(r, in, &c, in->snap.nsource, &L->gid, &raw, err);
        } else {
            if (c.level == 0)
                return fk_fail(err, FK_EFORMAT, "%s: chunk GPAR has level 0 (parents start at level 1)", in->name);
            st = load_u32(r, in, &c, 0, &L->gpar, &raw, err);
            L->ngpar = c.nrows;
        }
        if (st) return st;
        if ((int)c.level >= in->nlevels) in->nlevels = (int)c.level + 1;
    } else if ((strcmp(c.tag, "GRPS") == 0 || (strcmp(c.tag, "LINK") == 0 && c.level == 0))) {
        if ((st = check_level(in, &c, err)) || (st = fk_reader_load(r, &raw, err))) return st;
        uint64_t size = fk_chunk_rawsize(&c);
        char *text = malloc(size + 1);
        if (!text) {
            free(raw);
            return fk_fail(err, FK_ENOMEM, "out of memory for chunk %s", c.tag);
        }
        memcpy(text, raw, size);
        text[size] = '\0';
        if (c.tag[0] == 'G') {
            fk_hsin_level *L = &in->lv[c.level];
            if (L->have_grps)
                st = fk_fail(err, FK_EFORMAT, "%s: stream has two GRPS chunks of level %" PRIu32, in->name, c.level);
            else
                st = fk_groups_parse(text, &L->grps, in->name, err);
            L->have_grps = 1;
            if ((int)c.level >= in->nlevels) in->nlevels = (int)c.level + 1;
        } else {
            st = fk_hsin_parse_link(in, text, in->name, err);
            /* the levels whose SINK chunks the early work waits for, as groups reads them */
            uint64_t k;
            fk_error e = {0};
            rd->link_levels = fk_kv_has(text, "levels") && !fk_kv_get_u64(text, "levels", &k, "LINK", &e) && k >= 1 &&
                                      k <= FK_LEVELS_MAX ? (int)k : 0;
        }
        free(text);
        if (st) {
            free(raw);
            return st;
        }
    } else if (strcmp(c.tag, "HALO") == 0 || strcmp(c.tag, "HCOL") == 0 || strcmp(c.tag, "MORDER") == 0 ||
               strcmp(c.tag, "MRANK") == 0) {
        in->replaced = 1;
        return FK_OK;
    } else {
        is = 0;
    }
    if (w && (st = is ? fk_writer_put_read(w, &c, raw, err) : fk_writer_copy(w, r, &c, err))) return st;
    /* kept: POS VEL MASS PID GID GPAR, and ID widened on every core; the rest was copied or parsed */
    if (strcmp(c.tag, "ID") == 0 && (st = fk_snap_widen_ids(raw, &c, &in->ids, err))) return st;
    if (strcmp(c.tag, "GRPS") == 0 || strcmp(c.tag, "LINK") == 0) free(raw);
    return FK_OK;
}

/* -m (the feed's ready, on its thread): whether the IDs, every SINK level
 * LINK names, the positions and the masses have come; then the input as it
 * is is copied, for the early work. */
static int early_ready(void *ctx)
{
    reading *rd = ctx;
    const fk_hsin *in = rd->in;
    if (!in->ids || !in->pos || !in->mass || rd->link_levels == 0) return 0;
    for (int k = 0; k < rd->link_levels; k++)
        if (!in->sinks[k]) return 0;
    rd->seen = *in;
    rd->seen_levels = rd->link_levels;
    return 1;
}

/* Whether the input has ended (the early minima's stop). */
static int input_ended(void *feed)
{
    return fk_feed_done(feed);
}

/* -m, once the IDs, the SINK levels, the positions and the masses have
 * come and while the rest is read: the groups numbered (a failure is
 * reported once the input has been read, as before), each level's members
 * gathered and, for potential centres, their minima found batch after
 * batch until the input has ended (the rest then beside the profiles, as
 * before; level 0 only when --unbind keeps the potentials of one level at a
 * time), with the G, softening and box that the program's setup will give
 * (made here on copies). */
static void early_work(const reading *rd, fk_feed *feed, fk_hsin_setup setup, void *setup_ctx, fk_hsin_early *ea,
                       double t0)
{
    fk_hsin s = rd->seen;
    ea->t_ready = fk_now() - t0;
    ea->ran = 1;
    ea->levels = rd->seen_levels;
    ea->ids = s.ids, ea->pos = s.pos, ea->mass = s.mass;
    ea->st = fk_halo_early_groups(&ea->e, &s.snap, s.ids, s.sinks, ea->levels, rd->minsize, s.name, &ea->err);
    if (ea->st) return;
    fk_hsin_how how;
    memset(&how, 0, sizeof how);
    setup(setup_ctx, &s, &how);
    ea->pot = how.pot, ea->periodic = s.snap.periodic, ea->box = s.snap.box, ea->origin = s.snap.origin;
    const int mbp = how.mbp;
    const uint64_t n = s.snap.n;
    fk_halo_input hin = {.n = n, .pos = s.pos, .mass = s.mass, .ids = s.ids, .periodic = s.snap.periodic,
                         .box = s.snap.box, .origin = s.snap.origin};
    /* a device's minima go on to the last batch on a thread of their own (the finder) while
     * the rest is read and measured; the CPU's stop when the input has ended */
    const fk_pot_minima_fn minima = how.minima;
    int gathered = 0, pots = 0;
    for (int k = 0; k < ea->levels; k++) {
        double *phi = k == 0 ? how.phi : NULL;
        const int pot_k = mbp && (k == 0 || !how.phi);
        fk_error err = {0};
        if (fk_halo_early_level_work(&ea->e, k, &hin, pot_k && !minima ? &how.pot : NULL, NULL, input_ended, feed, phi,
                                     &err))
            break; /* the rest gathered after the input, as before */
        gathered = k + 1;
        if (pot_k && pots == k) pots = k + 1;
    }
    fk_error err = {0};
    if (minima && pots)
        ea->finder = fk_halo_early_finder_start(&ea->e, pots < gathered ? pots : gathered, &hin, &how.pot, minima,
                                                how.phi, &err) == FK_OK;
    ea->t_done = fk_now() - t0;
}

int fk_hsin_read(fk_hsin *in, FILE *f, fk_writer *w, uint64_t minsize, fk_hsin_setup setup, void *setup_ctx,
                 fk_hsin_early *ea, double t0, void (*progress)(void *ctx, uint64_t offset), fk_error *err)
{
    fk_reader *r;
    fk_chunk c;
    char *snaptext;
    if (fk_reader_open(&r, f, in->name, err)) return err->code;
    if (fk_snap_read(r, &c, &in->snap, &snaptext, in->name, err) ||
        (w && fk_writer_text(w, "SNAP", c.level, snaptext, err))) {
        fk_reader_close(r);
        return err->code;
    }
    if (progress) fk_reader_set_progress(r, progress, r);
    in->snaptext = snaptext;
    static reading rd; /* large (a copy of the input): not on the stack */
    rd = (reading){.in = in, .w = w, .minsize = minsize};
    fk_feed *feed;
    if (fk_feed_start(&feed, r, take_chunk, minsize ? early_ready : NULL, &rd, err)) {
        fk_reader_close(r);
        return err->code;
    }
    if (minsize && fk_feed_wait(feed)) early_work(&rd, feed, setup, setup_ctx, ea, t0);
    double ended;
    int st = fk_feed_join(feed, &ended, err);
    ea->t_end = ended - t0;
    in->waited = fk_reader_waited(r);
    fk_reader_close(r);
    return st;
}

int fk_hsin_check(const fk_hsin *in, uint64_t minsize, fk_error *err)
{
    if (minsize) {
        if (in->nsinks == 0)
            return fk_fail(err, FK_EFORMAT, "%s: stream has no SINK chunk (halostats -m takes foflink's stream)",
                           in->name);
        for (int k = 1; k < in->nsinks; k++)
            if (!in->sinks[k])
                return fk_fail(err, FK_EFORMAT, "%s: stream has no SINK chunk of level %d (but one of level %d)",
                               in->name, k, in->nsinks - 1);
    } else if (in->nlevels == 0 || !in->lv[0].gid) {
        return fk_fail(err, FK_EFORMAT,
                       "stream has no GID chunk (run groups first, or halostats -m N on foflink's stream)");
    }
    for (int k = 1; k < in->nlevels; k++)
        if (!in->lv[k].gid)
            return fk_fail(err, FK_EFORMAT, "stream has no GID chunk of level %d (but one of level %d)", k,
                           in->nlevels - 1);
    static const char *tags[] = {"POS", "VEL", "MASS", "ID"};
    const void *have[] = {in->pos, in->vel, in->mass, in->ids};
    for (int k = 0; k < 4; k++)
        if (!have[k]) return fk_fail(err, FK_EFORMAT, "stream has no %s chunk (run tipsy2bin first)", tags[k]);
    return FK_OK;
}

int fk_hsin_early_holds(const fk_hsin_early *ea, const fk_hsin *in)
{
    return ea->ran && !ea->st && ea->levels == in->nsinks && ea->ids == in->ids;
}

int fk_hsin_early_minima_hold(const fk_hsin_early *ea, const fk_hsin *in, uint64_t minsize, int mbp,
                              const fk_pot_params *pot)
{
    const fk_pot_params *p = &ea->pot;
    return minsize && mbp && fk_hsin_early_holds(ea, in) && ea->pos == in->pos && ea->mass == in->mass &&
           p->G == pot->G && p->eps == pot->eps && p->theta == pot->theta && p->nexact == pot->nexact &&
           p->tol == pot->tol && p->ncand == pot->ncand && ea->periodic == in->snap.periodic &&
           ea->box == in->snap.box && ea->origin == in->snap.origin;
}

/* -m: groups' work on foflink's stream, in process: every SINK level
 * resolved and numbered (groups of at least minsize members) into the GID
 * GRPS and GPAR that groups -m minsize would have written, so that the
 * particles are not written and read once more between the two; the early
 * work's, when it numbered them all. */
static int resolve_levels(fk_hsin *in, uint64_t minsize, fk_hsin_early *ea, fk_error *err)
{
    if (fk_hsin_early_holds(ea, in)) {
        for (int k = 0; k < in->nsinks; k++) {
            fk_hsin_level *L = &in->lv[k];
            fk_halo_early_level *E = &ea->e.lv[k];
            L->gid = E->gid, L->grps = E->grps, L->have_grps = 1;
            L->gpar = E->gpar, L->ngpar = k ? E->grps.ngroups + 1 : 0;
            E->gid = E->gpar = NULL;
            free(in->sinks[k]);
            in->sinks[k] = NULL;
        }
        in->nlevels = in->nsinks;
        return FK_OK;
    }
    fk_halo_early_free(&ea->e); /* its sinks resolved in place: resolved again, unchanged */
    fk_groups_in gin = {.ids = in->ids, .nlevels = in->nsinks};
    for (int k = 0; k < in->nsinks; k++) gin.sinks[k] = in->sinks[k];
    for (int k = 0; k < in->nsinks; k++) {
        fk_hsin_level *L = &in->lv[k];
        if (fk_groups_grp_ids(&gin, &in->snap, k, minsize, in->name, &L->gid, &L->grps, err)) return err->code;
        L->have_grps = 1;
        free(in->sinks[k]);
        in->sinks[k] = gin.sinks[k] = NULL;
        if (k == 0) continue;
        L->ngpar = L->grps.ngroups + 1;
        if (!(L->gpar = malloc(L->ngpar * sizeof *L->gpar)))
            return fk_fail(err, FK_ENOMEM, "out of memory for the parents of %" PRIu64 " groups", L->grps.ngroups);
        if (fk_groups_parents(in->lv[k - 1].gid, L->gid, in->snap.nsource, L->grps.ngroups, L->gpar, (uint32_t)k,
                              in->name, err))
            return err->code;
    }
    in->nlevels = in->nsinks;
    return FK_OK;
}

int fk_hsin_groups(fk_hsin *in, uint64_t minsize, fk_hsin_early *ea, fk_error *err)
{
    if (ea->ran && ea->st && ea->ids == in->ids) { /* the IDs' checks or a level's numbering */
        *err = ea->err;
        return ea->st;
    }
    if (!fk_hsin_early_holds(ea, in) && fk_groups_check_ids(in->ids, in->snap.n, in->snap.nsource, in->name, err))
        return err->code;
    return minsize ? resolve_levels(in, minsize, ea, err) : FK_OK;
}

uint64_t fk_hsin_level_groups(const fk_hsin *in, const fk_hsin_level *L, uint32_t *grp)
{
    uint64_t top = 0;
#pragma omp parallel for schedule(static) reduction(max : top)
    for (uint64_t i = 0; i < in->snap.n; i++) {
        grp[i] = L->gid[in->ids[i]];
        if (grp[i] > top) top = grp[i];
    }
    return L->have_grps ? L->grps.ngroups : top;
}

int fk_hsin_set_hosts(const fk_hsin *in, int k, fk_halo *h, uint64_t ng, uint64_t ng_up, fk_error *err)
{
    const fk_hsin_level *L = &in->lv[k];
    if (L->gpar && L->ngpar != ng + 1)
        return fk_fail(err, FK_EFORMAT, "%s: chunk GPAR of level %d has %" PRIu64 " rows for %" PRIu64
                       " groups (expected %" PRIu64 ")", in->name, k, L->ngpar, ng, ng + 1);
    for (uint64_t g = 0; g < ng; g++) {
        h[g].level = (uint64_t)k;
        if (k == 0) continue;
        h[g].host = L->gpar ? L->gpar[g + 1] : in->lv[k - 1].gid[h[g].minid];
        if (h[g].host > ng_up)
            return fk_fail(err, FK_EFORMAT, "%s: chunk GPAR of level %d gives group %" PRIu64 " the host %" PRIu64
                           ", beyond the %" PRIu64 " groups of level %d", in->name, k, g + 1, h[g].host, ng_up, k - 1);
    }
    return FK_OK;
}
