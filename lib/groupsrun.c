/* groupsrun.c - one groups run: a linked stream's IDs and SINK levels read (the rest passed on), every level resolved, numbered and written. */
#include "groupsrun.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "clock.h"
#include "grpfile.h"
#include "kv.h"

void fk_groups_in_free(fk_groups_in *in)
{
    free(in->ids);
    for (int k = 0; k < FK_LEVELS_MAX; k++) free(in->sinks[k]);
    memset(in, 0, sizeof *in);
}

/* The levels a LINK chunk names (its "levels" key), or 0 when it names none
 * that groups can take. */
static int link_levels(const char *text)
{
    uint64_t k;
    fk_error e = {0};
    if (!fk_kv_has(text, "levels") || fk_kv_get_u64(text, "levels", &k, "LINK", &e)) return 0;
    return k >= 1 && k <= FK_LEVELS_MAX ? (int)k : 0;
}

/* A SINK level beyond those the LINK chunk names. */
static int beyond_link(const char *name, int level, int link_levels, fk_error *err)
{
    return fk_fail(err, FK_EFORMAT, "%s: SINK level %d found, but the LINK chunk names %d level%s", name, level,
                   link_levels, link_levels == 1 ? "" : "s");
}

/* Whether ID and every SINK level the LINK named have come. */
static int all_in(const fk_groups_in *in)
{
    if (!in->ids || in->link_levels == 0) return 0;
    for (int k = 0; k < in->link_levels; k++)
        if (!in->sinks[k]) return 0;
    return 1;
}

/* The loop of fk_groups_read: ID and SINK kept, the rest passed on or
 * dropped; with until, it stops once all_in (in->more = 1). */
static int read_chunks(fk_reader *r, fk_writer *w, const fk_snap *snap, const char *name, fk_groups_in *in,
                       int until, fk_error *err)
{
    fk_chunk c;
    int st;
    in->more = 0;
    while ((st = fk_reader_next(r, &c, err)) == 1) {
        int is_id = strcmp(c.tag, "ID") == 0, is_sink = strcmp(c.tag, "SINK") == 0;
        if (is_sink && in->link_levels && c.level >= (uint32_t)in->link_levels)
            return beyond_link(name, (int)c.level, in->link_levels, err);
        if (is_sink && c.level >= FK_LEVELS_MAX)
            return fk_fail(err, FK_EFORMAT, "%s: SINK level %" PRIu32 " found: at most %d levels (0 to %d) are resolved",
                           name, c.level, FK_LEVELS_MAX, FK_LEVELS_MAX - 1);
        if (is_sink && in->sinks[c.level] && c.level > 0)
            return fk_fail(err, FK_EFORMAT, "%s: stream has two SINK chunks of level %" PRIu32, name, c.level);
        if ((is_id && in->ids) || (is_sink && in->sinks[c.level]))
            return fk_fail(err, FK_EFORMAT, "%s: stream has two %s chunks", name, c.tag);
        if (is_id || is_sink) {
            void *raw;
            if ((st = fk_snap_check_chunk(snap, &c, is_id ? NULL : "<u4", 1, name, err)) ||
                (st = fk_reader_load(r, &raw, err)))
                return st;
            if (w && (st = fk_writer_put_read(w, &c, raw, err))) {
                free(raw);
                return st;
            }
            if (is_id) {
                if ((st = fk_snap_widen_ids(raw, &c, &in->ids, err))) return st;
            } else {
                in->sinks[c.level] = raw;
                if ((int)c.level >= in->nlevels) in->nlevels = (int)c.level + 1;
            }
            if (until && all_in(in)) {
                in->more = 1;
                return FK_OK;
            }
        } else if (strcmp(c.tag, "LINK") == 0 && c.level == 0 && !in->link_seen && (c.flags & FK_CF_TEXT)) {
            /* read for the number of levels, so that the work can start as
             * soon as they have come; passed on as read */
            char *text;
            if ((st = fk_reader_load_text(r, &text, err))) return st;
            in->link_seen = 1;
            in->link_levels = link_levels(text);
            if (in->link_levels && in->nlevels > in->link_levels)
                st = beyond_link(name, in->nlevels - 1, in->link_levels, err);
            if (st || !w) {
                free(text);
                if (st) return st;
            } else if ((st = fk_writer_give_read(w, &c, text, err))) {
                return st;
            }
            if (until && all_in(in)) {
                in->more = 1;
                return FK_OK;
            }
        } else if (strcmp(c.tag, "GID") == 0 || strcmp(c.tag, "GRPS") == 0 || strcmp(c.tag, "GPAR") == 0) {
            in->replaced = 1;
        } else if (w && (st = fk_writer_copy(w, r, &c, err))) {
            return st;
        }
    }
    return st < 0 ? st : FK_OK;
}

/* The checks of what was read, once all of it is in. */
static int check_in(const fk_snap *snap, const char *name, fk_groups_in *in, fk_error *err)
{
    int st = FK_OK;
    if (in->nlevels == 0) st = fk_fail(err, FK_EMISSING, "stream has no SINK chunk (run foflink first)");
    for (int k = 0; !st && k < in->nlevels; k++)
        if (!in->sinks[k])
            st = fk_fail(err, FK_EFORMAT, "%s: stream has SINK level %d but no SINK level %d (the levels run 0, 1, 2, ...)",
                         name, in->nlevels - 1, k);
    if (!st && !in->ids) st = fk_fail(err, FK_EMISSING, "stream has no ID chunk (run tipsy2bin first)");
    if (!st) st = fk_groups_check_ids(in->ids, snap->n, snap->nsource, name, err);
    return st;
}

/* fk_groups_read and _until: what was read, checked; nothing held on failure. */
static int read_in(fk_reader *r, fk_writer *w, const fk_snap *snap, const char *name, fk_groups_in *in, int until,
                   fk_error *err)
{
    memset(in, 0, sizeof *in);
    int st = read_chunks(r, w, snap, name, in, until, err);
    if (!st) st = check_in(snap, name, in, err);
    if (st) fk_groups_in_free(in);
    return st;
}

int fk_groups_read(fk_reader *r, fk_writer *w, const fk_snap *snap, const char *name, fk_groups_in *in,
                   fk_error *err)
{
    return read_in(r, w, snap, name, in, 0, err);
}

int fk_groups_read_until(fk_reader *r, fk_writer *w, const fk_snap *snap, const char *name, fk_groups_in *in,
                         fk_error *err)
{
    return read_in(r, w, snap, name, in, 1, err);
}

int fk_groups_read_rest(fk_reader *r, fk_writer *w, const fk_snap *snap, const char *name, fk_groups_in *in,
                        fk_error *err)
{
    return in->more ? read_chunks(r, w, snap, name, in, 0, err) : FK_OK;
}

int fk_groups_write_levels(fk_writer *w, fk_groups_in *in, const fk_snap *snap, uint64_t minsize, const char *name,
                           fk_groups *info, fk_error *err)
{
    const uint64_t ns = snap->nsource;
    uint32_t *gid = fk_big_alloc(ns ? ns * sizeof *gid : 1),
             *up = in->nlevels > 1 ? fk_big_alloc(ns ? ns * sizeof *up : 1) : NULL;
    int st = FK_OK;
    if (!gid || (in->nlevels > 1 && !up))
        st = fk_fail(err, FK_ENOMEM, "out of memory for the group ids of %" PRIu64 " particles", ns);
    for (int k = 0; !st && k < in->nlevels; k++) {
        if ((st = fk_groups_resolve(in->sinks[k], snap->n, name, err)) ||
            (st = fk_groups_number(in->sinks[k], in->ids, snap->n, ns, minsize, gid, &info[k], err)))
            break;
        info[k].level = (uint32_t)k;
        char *text;
        fk_chunk g;
        fk_chunk_init(&g, "GID", "<u4", 0, ns, 1);
        g.level = (uint32_t)k;
        if ((st = fk_groups_format(&info[k], &text, err))) break;
        st = fk_writer_text(w, "GRPS", (uint32_t)k, text, err);
        free(text);
        if (!st) st = fk_writer_put(w, &g, gid, err);
        if (!st && k > 0) {
            /* A kept group's parent has at least as many members, so it is
             * kept: fk_groups_parents fails on a 0 (or on levels that do not
             * nest), which a stream from foflink never gives. */
            uint32_t *par = malloc((info[k].ngroups + 1) * sizeof *par);
            if (!par) {
                st = fk_fail(err, FK_ENOMEM, "out of memory for the parents of %" PRIu64 " groups", info[k].ngroups);
                break;
            }
            fk_chunk_init(&g, "GPAR", "<u4", 0, info[k].ngroups + 1, 1);
            g.level = (uint32_t)k;
            st = fk_groups_parents(up, gid, ns, info[k].ngroups, par, (uint32_t)k, name, err);
            if (!st) st = fk_writer_put(w, &g, par, err);
            free(par);
        }
        if (up) {
            uint32_t *t = up;
            up = gid;
            gid = t;
        }
    }
    free(gid);
    free(up);
    return st;
}

int fk_groups_grp_ids(fk_groups_in *in, const fk_snap *snap, int k, uint64_t minsize, const char *name, uint32_t **gid,
                      fk_groups *info, fk_error *err)
{
    *gid = NULL;
    if (k >= in->nlevels) {
        if (in->nlevels == 1)
            return fk_fail(err, FK_EINVAL, "%s: --level=%d: the stream has SINK level 0 only", name, k);
        return fk_fail(err, FK_EINVAL, "%s: --level=%d: the stream has SINK levels 0 to %d", name, k, in->nlevels - 1);
    }
    const uint64_t ns = snap->nsource;
    uint32_t *g = fk_big_alloc(ns ? ns * sizeof *g : 1);
    if (!g) return fk_fail(err, FK_ENOMEM, "out of memory for the group ids of %" PRIu64 " particles", ns);
    int st = fk_groups_resolve(in->sinks[k], snap->n, name, err);
    if (!st) st = fk_groups_number(in->sinks[k], in->ids, snap->n, ns, minsize, g, info, err);
    if (!st) info->level = (uint32_t)k;
    if (st)
        free(g);
    else
        *gid = g;
    return st;
}

/* The reading half of fk_groups_grp_write, on a thread of its own. */
typedef struct rest_job {
    fk_reader *r;
    const fk_snap *snap;
    const char *name;
    fk_groups_in *in;
    int st, stop; /* stop: set on failure, for the writing half to stop at */
    fk_error err;
    double secs;
} rest_job;

static void *read_rest(void *arg)
{
    rest_job *j = arg;
    double t = fk_now();
    j->st = fk_groups_read_rest(j->r, NULL, j->snap, j->name, j->in, &j->err);
    if (j->st) __atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED);
    j->secs = fk_now() - t;
    return NULL;
}

int fk_groups_grp_write(fk_reader *r, const fk_snap *snap, const char *name, fk_groups_in *in, FILE *f,
                        const uint32_t *gid, const char *oname, fk_groups_grp_times *times, fk_error *err)
{
    rest_job j = {.r = r, .snap = snap, .name = name, .in = in};
    pthread_t th;
    const double w0 = fk_reader_waited(r);
    int started = in->more && pthread_create(&th, NULL, read_rest, &j) == 0;
    if (in->more && !started) read_rest(&j); /* no thread to be had: one after the other, as before */
    double t = fk_now();
    fk_error werr = {0};
    /* a failed read has already stopped it when there was no thread */
    int wst = j.st ? FK_ECUT : fk_grp_write_stop(f, gid, snap->nsource, oname, &j.stop, &werr);
    const double wsecs = fk_now() - t;
    if (started) pthread_join(th, NULL);
    if (times) {
        times->rest = j.secs;
        times->rest_waited = fk_reader_waited(r) - w0;
        times->grp = wsecs;
    }
    /* the input's failure first: the .grp of a stream that fails is never
     * wanted, and its writing may have been stopped by it */
    if (j.st) {
        *err = j.err;
        return j.st;
    }
    if (wst) *err = werr;
    return wst;
}
