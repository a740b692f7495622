/* treeorder.c - a stream put into tree order: the tree built over its positions, every per-particle chunk permuted, the rest passed on. */
#include "treeorder.h"
#include "clock.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"

/* A per-particle chunk that arrived before POS, held until the order is known. */
typedef struct held {
    fk_chunk c;
    void *data;
} held;

/* out[i] = in[perm[i]], rows of rowsize bytes; NULL when out of memory. */
static void *permute(const void *in, const uint32_t *perm, uint64_t n, size_t rowsize)
{
    uint64_t bytes = n * rowsize;
    char *out = fk_big_alloc(bytes);
    if (!out) return NULL;
    const char *src = in;
    /* The row sizes of the chunks tipsy2bin writes (TYPE, MASS and ID, ID
     * of 8, POS and VEL) copy as constants: a memcpy of a size unknown at
     * compile time is a call per row, several times slower for 4 bytes. */
#define PERMUTE_ROWS(SIZE)                                                                                    \
    _Pragma("omp parallel for schedule(static)") for (uint64_t i = 0; i < n; i++)                             \
        memcpy(out + i * (SIZE), src + (uint64_t)perm[i] * (SIZE), (SIZE))
    switch (rowsize) {
    case 1: PERMUTE_ROWS(1); break;
    case 4: PERMUTE_ROWS(4); break;
    case 8: PERMUTE_ROWS(8); break;
    case 12: PERMUTE_ROWS(12); break;
    default: PERMUTE_ROWS(rowsize); break;
    }
#undef PERMUTE_ROWS
    return out;
}

/* Chunk c (payload data, which the caller keeps) permuted and handed to w,
 * written by the writer's thread while the next chunk is read. */
static int put_permuted(fk_writer *w, const fk_chunk *c, const void *data, const uint32_t *perm, double *secs,
                        fk_error *err)
{
    size_t rowsize = c->ncols * fk_dtype_size(c->dtype);
    double t0 = fk_now();
    void *out = permute(data, perm, c->nrows, rowsize);
    *secs += fk_now() - t0;
    if (!out) return fk_fail(err, FK_ENOMEM, "out of memory reordering chunk %s", c->tag);
    return fk_writer_give(w, c, out, err);
}

/* The loop of fk_treeorder; hold and *nheld are the caller's to free. */
static int order(fk_reader *r, fk_writer *w, const fk_snap *snap, const char *name, fk_treeorder_build_fn build,
                 void *ctx, fk_tree *t, uint32_t **perm, held **hold, int *nheld, double *secs, fk_error *err)
{
    fk_chunk ch;
    int st;
    while ((st = fk_reader_next(r, &ch, err)) == 1) {
        if (!strcmp(ch.tag, "TREE") || !strcmp(ch.tag, "SINK"))
            return fk_fail(err, FK_EFORMAT, "%s: stream already has a %s chunk (it is in tree order already)", name,
                           ch.tag);
        if (!(ch.flags & FK_CF_PARTICLE)) {
            if ((st = fk_writer_copy(w, r, &ch, err))) return st;
            continue;
        }
        if (ch.nrows != snap->n)
            return fk_fail(err, FK_EFORMAT, "%s: chunk %s has %" PRIu64 " rows for %" PRIu64 " particles", name, ch.tag,
                           ch.nrows, snap->n);
        /* room for the chunk and its permuted copy among those waiting */
        if (*perm && (st = fk_writer_reserve(w, 2 * fk_chunk_rawsize(&ch), err))) return st;
        void *data;
        if ((st = fk_reader_load(r, &data, err))) return st;
        if (!strcmp(ch.tag, "POS")) {
            if (*perm) st = fk_fail(err, FK_EFORMAT, "%s: stream has two POS chunks", name);
            if (!st) st = fk_snap_check_chunk(snap, &ch, "<f4", 3, name, err);
            if (!st) st = fk_snap_check_positions(snap, data, name, err);
            if (!st) st = build(ctx, data, snap->n, t, perm, err);
            if (st) {
                free(data);
                return st;
            }
            /* The chunks given wait to be written while the next ones are
             * read and permuted, as long as they and the one in hand (its
             * input and its permuted copy) fit in the memory that POS being
             * written beside a chunk of POS's size took when one chunk
             * waited at a time: a slow reader after this stage holds up the
             * stage before less, in no more memory. */
            fk_writer_room(w, 3 * fk_chunk_rawsize(&ch) + t->nnodes * 6 * sizeof(float));
            if ((st = fk_writer_give(w, &ch, data, err)) || (st = fk_tree_give(w, t, err))) return st;
            for (int i = 0; i < *nheld && !st; i++) {
                st = put_permuted(w, &(*hold)[i].c, (*hold)[i].data, *perm, secs, err);
                free((*hold)[i].data);
                (*hold)[i].data = NULL;
            }
            if (st) return st;
            *nheld = 0;
        } else if (*perm) {
            st = put_permuted(w, &ch, data, *perm, secs, err);
            free(data);
            if (st) return st;
        } else {
            held *h = realloc(*hold, (*nheld + 1) * sizeof **hold);
            if (!h) {
                free(data);
                return fk_fail(err, FK_ENOMEM, "out of memory");
            }
            *hold = h;
            h[*nheld].c = ch;
            h[(*nheld)++].data = data;
        }
    }
    if (st < 0) return st;
    if (!*perm) return fk_fail(err, FK_EFORMAT, "%s: stream has no POS chunk", name);
    return FK_OK;
}

int fk_treeorder(fk_reader *r, fk_writer *w, const fk_snap *snap, const char *name, fk_treeorder_build_fn build,
                 void *ctx, double *reorder_s, fk_error *err)
{
    fk_tree tree, *t = &tree;
    memset(t, 0, sizeof *t);
    held *hold = NULL;
    int nheld = 0;
    uint32_t *perm = NULL;
    double secs = 0;
    int st = order(r, w, snap, name, build, ctx, t, &perm, &hold, &nheld, &secs, err);
    for (int i = 0; i < nheld; i++) free(hold[i].data);
    free(hold);
    free(perm);
    fk_tree_free(t);
    if (reorder_s) *reorder_s = secs;
    return st;
}
