/* catalog_write.h - halostats' catalogue written: the text header and rows, CSV, and the stream's HCOL record and HALO chunks (catalog.h reads them back). */
#ifndef FK_CATALOG_WRITE_H
#define FK_CATALOG_WRITE_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "halostats.h"
#include "halostats_input.h"
#include "kv.h"
#include "potential.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a catalogue says of its run, beside its rows. */
typedef struct fk_catw {
    const fk_halo_units *units;  /* the output units                                        */
    unsigned flags;              /* the optional columns shown: FK_HCOL_SO, FK_HCOL_UNBIND  */
    fk_centre centre;
    const fk_pot_params *pot;    /* the potentials' (stream units; eps comoving)            */
    int gpu;                     /* the potentials on the GPU                               */
    double G_out;                /* G in the output units                                   */
    int have_G;                  /* 1 given, 2 from the stream's units, 0 1 in the stream's */
    int no_G;                    /* no units and no G: phi_mbp, vmax and lambda nan         */
    int have_eps, eps_capped;    /* the softening given; capped by --softening-max-phys     */
    int comoving;                /* a comoving stream at a, its Hubble flow hflow           */
    double a, hflow;
    /* the '#' lines and HCOL keys of --so and --unbind, or NULL */
    void (*masses_header)(FILE *f, const void *ctx);
    void (*masses_kv)(fk_kvbuf *kv, const void *ctx);
    const void *masses_ctx;
} fk_catw;

/* Whether column c is written: every column but those of --so and --unbind
 * when not asked for (the mbp columns stay with --centre=com, -1 and nan,
 * so that a column's number does not depend on the centre). Can't fail. */
int fk_catw_shown(const fk_catw *w, const fk_halo_column *c);

/* "comoving: " for a length column of a comoving stream, "physical: " for
 * another column with a unit, "" for a pure number: the word that opens
 * its definition in the text header. Can't fail. */
const char *fk_catw_frame_word(const fk_catw *w, const fk_halo_column *c);

/* The text catalogue's '#' header of the input in (ng[k] the groups of
 * each of its levels), its rows of one level (sep ' '), or CSV's (sep ',');
 * fk_catw_csv_header the CSV's row of column names. The rows are formatted
 * on every core, a block at a time, and written in order. A failed write is
 * f's error (ferror), for its closing to report. */
void fk_catw_header(FILE *f, const fk_catw *w, const fk_hsin *in, const uint64_t *ng);
void fk_catw_csv_header(FILE *f, const fk_catw *w);
void fk_catw_rows(FILE *f, const fk_catw *w, const fk_halo *h, uint64_t ng, char sep);

/* --format=stream: the HCOL record (the columns of the HALO chunks, their
 * units and definitions, the run's parameters; nlevels levels) and the HALO
 * chunk of level k (<f8, a row per group, a column per column shown) on
 * out. The writer's failures; FK_ENOMEM. */
int fk_catw_hcol(fk_writer *out, const fk_catw *w, int nlevels, fk_error *err);
int fk_catw_halo(fk_writer *out, const fk_catw *w, int k, const fk_halo *h, uint64_t ng, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
