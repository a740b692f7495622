/* gsnap_write.c - a Gadget-family snapshot read into arrays (gsnap.h) written as a stream: SNAP POS VEL MASS TYPE ID PID. */
#include "gsnap_write.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"
#include "stream.h"

static int put(fk_writer *w, const char *tag, const char *dtype, uint64_t n, uint32_t ncols, const void *data,
               fk_error *err)
{
    fk_chunk c;
    fk_chunk_init(&c, tag, dtype, FK_CF_PARTICLE, n, ncols);
    return fk_writer_put(w, &c, data, err);
}

int fk_gsnap_write(const fk_gsnap *s, const char *source, FILE *f, int zlevel, fk_error *err)
{
    fk_snap snap;
    fk_gsnap_to_snap(s, source, &snap);
    const char *idt = fk_id_dtype(snap.nsource);
    const void *ids = s->id;
    uint32_t *narrow = NULL;
    if (!strcmp(idt, "<u4")) {
        narrow = malloc(s->n ? s->n * sizeof *narrow : 1);
        if (!narrow) return fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " particle IDs", s->n);
        for (uint64_t i = 0; i < s->n; i++) narrow[i] = (uint32_t)s->id[i];
        ids = narrow;
    }
    char *text = NULL;
    fk_writer *w = NULL;
    int st = fk_snap_format(&snap, &text, err);
    if (!st && !(st = fk_writer_open(&w, f, zlevel, err)) && !(st = fk_writer_text(w, "SNAP", 0, text, err)) &&
        !(st = put(w, "POS", "<f4", s->n, 3, s->pos, err)) && !(st = put(w, "MASS", "<f4", s->n, 1, s->mass, err)) &&
        !(st = put(w, "TYPE", "|u1", s->n, 1, s->type, err)) && !(st = put(w, "ID", idt, s->n, 1, ids, err)) &&
        !(st = put(w, "VEL", "<f4", s->n, 3, s->vel, err)) && !(st = put(w, "PID", "<u8", s->n, 1, s->pid, err)))
        st = fk_writer_finish(w, err);
    fk_writer_free(w);
    free(text);
    free(narrow);
    return st;
}
