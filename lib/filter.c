/* filter.c - a stage of the pipeline as the stream sees it: the chunks it reads, loaded and checked; the rest passed on unread. */
#include "filter.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* fk_filter_start, following an overlay's base when follow is set. */
static int start(fk_filter *f, FILE *in, const char *name, int follow, const char *path, FILE *out, int zlevel,
                 fk_error *err)
{
    memset(f, 0, sizeof *f);
    f->name = name;
    fk_chunk c;
    char *text = NULL;
    int st = fk_reader_open(&f->r, in, name, err);
    if (!st && follow) st = fk_reader_follow(f->r, path, err);
    if (!st && out) st = fk_writer_open(&f->w, out, zlevel, err);
    if (!st) st = fk_snap_read(f->r, &c, &f->snap, &text, name, err);
    if (!st && f->w) st = fk_writer_put_read(f->w, &c, text, err);
    free(text);
    return st;
}

int fk_filter_start(fk_filter *f, FILE *in, const char *name, FILE *out, int zlevel, fk_error *err)
{
    return start(f, in, name, 0, NULL, out, zlevel, err);
}

int fk_filter_start_follow(fk_filter *f, FILE *in, const char *name, const char *path, FILE *out, int zlevel,
                           fk_error *err)
{
    return start(f, in, name, 1, path, out, zlevel, err);
}

void fk_filter_later(fk_filter *f)
{
    if (f->w) fk_writer_later(f->w, f->r);
}

static fk_want *find(fk_want *want, int nwant, const char *tag)
{
    for (int i = 0; i < nwant; i++)
        if (strcmp(want[i].tag, tag) == 0) return &want[i];
    return NULL;
}

/* Checks a wanted chunk's shape before its payload is read. */
static int check_shape(const fk_filter *f, const fk_want *x, const fk_chunk *c, fk_error *err)
{
    if (x->flags & FK_W_PARTICLE)
        return fk_snap_check_chunk(&f->snap, c, x->flags & FK_W_ID ? NULL : x->dtype, x->ncols ? x->ncols : c->ncols,
                                   f->name, err);
    if (x->flags & FK_W_TEXT) {
        if (!(c->flags & FK_CF_TEXT))
            return fk_fail(err, FK_EFORMAT, "%s: chunk %s is not text", f->name, c->tag);
        return FK_OK;
    }
    if ((x->dtype && strcmp(c->dtype, x->dtype) != 0) || (x->ncols && c->ncols != x->ncols))
        return fk_fail(err, FK_EFORMAT, "%s: chunk %s holds %s x %" PRIu32 ", expected %s x %" PRIu32, f->name, c->tag,
                       c->dtype, c->ncols, x->dtype ? x->dtype : c->dtype, x->ncols ? x->ncols : c->ncols);
    return FK_OK;
}

/* Loads one wanted chunk (level k) and writes it on when asked. */
static int take(fk_filter *f, fk_want *x, const fk_chunk *c, uint32_t k, uint64_t seq, fk_error *err)
{
    if (x->data[k]) {
        if (k == 0) return fk_fail(err, FK_EFORMAT, "%s: stream has two %s chunks", f->name, c->tag);
        return fk_fail(err, FK_EFORMAT, "%s: stream has two %s chunks of level %" PRIu32, f->name, c->tag, k);
    }
    int st = check_shape(f, x, c, err);
    if (st) return st;
    if (x->flags & FK_W_TEXT)
        st = fk_reader_load_text(f->r, (char **)&x->data[k], err);
    else
        st = fk_reader_load(f->r, &x->data[k], err);
    if (st) return st;
    x->chunk[k] = *c;
    x->seq[k] = seq;
    if ((int)k >= x->nlevels) x->nlevels = (int)k + 1;
    if ((x->flags & FK_W_PASS) && f->w) return fk_writer_put_read(f->w, c, x->data[k], err);
    return FK_OK;
}

/* Whether every chunk want names has come (level 0; a want of levels never
 * knows it has all of them). */
static int all_came(const fk_want *want, int nwant)
{
    for (int i = 0; i < nwant; i++) {
        const fk_want *x = &want[i];
        if (!x->tag[0] || (x->flags & (FK_W_REFUSE | FK_W_DROP))) continue;
        if ((x->flags & FK_W_LEVELS) || x->nlevels == 0) return 0;
    }
    return 1;
}

/* The loop of fk_filter_read and fk_filter_read_until (*more not NULL). */
static int read_chunks(fk_filter *f, fk_want *want, int nwant, int *more, fk_error *err)
{
    fk_chunk c;
    int st;
    if (more) *more = 0;
    while ((st = fk_reader_next(f->r, &c, err)) == 1) {
        f->seq++;
        fk_want *x = find(want, nwant, c.tag);
        if (x) x->found++;
        if (x && (x->flags & FK_W_REFUSE))
            return fk_fail(err, FK_EFORMAT, "%s: stream %s (it has a %s chunk)", f->name, x->hint ? x->hint : "has",
                           c.tag);
        if (x && (x->flags & FK_W_DROP)) continue;
        if (x && (x->flags & FK_W_LEVELS) && c.level >= FK_WANT_LEVELS)
            return fk_fail(err, FK_EFORMAT, "%s: chunk %s has level %" PRIu32 ": at most %d levels (0 to %d) are read",
                           f->name, c.tag, c.level, FK_WANT_LEVELS, FK_WANT_LEVELS - 1);
        if (x && (c.level == 0 || (x->flags & FK_W_LEVELS))) {
            if ((st = take(f, x, &c, c.level, f->seq, err))) return st;
            if (more && all_came(want, nwant)) {
                *more = 1;
                return FK_OK;
            }
        } else if (f->w && (st = fk_writer_copy(f->w, f->r, &c, err))) {
            return st;
        }
    }
    if (st < 0) return st;
    for (int i = 0; i < nwant; i++) {
        const fk_want *x = &want[i];
        if ((x->flags & FK_W_REQUIRED) && x->nlevels == 0) {
            if (x->hint) return fk_fail(err, FK_EMISSING, "%s: stream has no %s chunk (%s)", f->name, x->tag, x->hint);
            return fk_fail(err, FK_EMISSING, "%s: stream has no %s chunk", f->name, x->tag);
        }
    }
    return FK_OK;
}

int fk_filter_read(fk_filter *f, fk_want *want, int nwant, fk_error *err)
{
    return read_chunks(f, want, nwant, NULL, err);
}

int fk_filter_read_until(fk_filter *f, fk_want *want, int nwant, int *more, fk_error *err)
{
    return read_chunks(f, want, nwant, more, err);
}

int fk_filter_finish(fk_filter *f, fk_error *err)
{
    return f->w ? fk_writer_finish(f->w, err) : FK_OK;
}

void fk_filter_free(fk_filter *f)
{
    fk_writer_free(f->w);
    fk_reader_close(f->r);
    f->w = NULL;
    f->r = NULL;
}

void fk_want_free(fk_want *want, int nwant)
{
    for (int i = 0; i < nwant; i++)
        for (int k = 0; k < FK_WANT_LEVELS; k++) {
            free(want[i].data[k]);
            want[i].data[k] = NULL;
        }
}
