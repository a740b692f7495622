/* catalog.h - a halo catalogue read back for pictures: halostats' text, CSV or HCOL/HALO stream chunks. */
#ifndef FK_CATALOG_H
#define FK_CATALOG_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"

/* One halo of level 0 (the longest linking length), in the catalogue's units. */
typedef struct fk_cat_halo {
    uint64_t id, n;
    double mass;
    double x[3]; /* the centre: xc yc zc when present, else the centre of mass x y z */
    double r;    /* its radius: rc_max when present, else rmax, else 0 */
} fk_cat_halo;

typedef struct fk_catalog {
    size_t n;
    fk_cat_halo *h;
    int has_box;  /* box, origin and periodic were in the catalogue (text header, HCOL's SNAP) */
    double box, origin;
    int periodic;
} fk_catalog;

/* Reads a catalogue from f (name is used in messages): halostats' text
 * (column names on the last '#' line before the rows), its CSV (a header row
 * of names) or its stream (--format=stream: the HCOL and level-0 HALO
 * chunks), told apart by the first bytes. Columns needed: id, mass or n,
 * and x y z; others are ignored. Only level 0 is kept. FK_EFORMAT names the
 * line and what is wrong; FK_EMISSING a column that is not there. */
int fk_catalog_read(FILE *f, const char *name, fk_catalog *cat, fk_error *err);

/* The catalogue of an HCOL text and a level-0 HALO array of rows x cols
 * doubles, as found in a stream. */
int fk_catalog_from_chunks(const char *hcol, const double *halo, uint64_t rows, uint32_t cols, const char *name,
                           fk_catalog *cat, fk_error *err);

/* Sorts the halos by mass, largest first (ties: lower id first). Can't fail. */
void fk_catalog_sort_mass(fk_catalog *cat);

/* The halo with that id, or NULL. */
const fk_cat_halo *fk_catalog_find(const fk_catalog *cat, uint64_t id);

void fk_catalog_free(fk_catalog *cat);

#endif
