/* catalog.h - a halostats catalogue read back (text, CSV or HCOL/HALO stream chunks): any column of any level, and the halos pictures draw. */
#ifndef FK_CATALOG_H
#define FK_CATALOG_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"

#define FK_CAT_MAXCOLS 256
#define FK_CAT_NAME 64

/* A catalogue as a table: every row of every level, every column. */
typedef struct fk_cattab {
    int ncols;
    char names[FK_CAT_MAXCOLS][FK_CAT_NAME];
    char units[FK_CAT_MAXCOLS][FK_CAT_NAME]; /* "" where the catalogue does not say */
    size_t nrows;
    double *v;                          /* nrows x ncols, row by row */
    int level;                          /* the column 'level', -1 when absent */
    int has_box;                        /* box, origin and periodic were in the catalogue (text header, SNAP) */
    double box, origin;                 /* in the stream's length unit */
    int periodic;
    double length;                      /* output length units in one stream unit (1 unless the catalogue says) */
    char length_name[FK_CAT_NAME];      /* "" unless the catalogue says */
} fk_cattab;

/* Reads a catalogue from f (name is used in messages): halostats' text
 * (column names on the last '#' line before the rows; box, units and column
 * units from the other '#' lines), its CSV (a first row of names with
 * commas) or its stream (--format=stream: HCOL, the HALO chunks of every
 * level, the SNAP for the box), told apart by the first bytes. Every field
 * must be a number as strtod reads it (nan included: halostats writes nan
 * for a radius never reached). FK_EFORMAT names the line and the problem
 * (an empty input, no header, a row of the wrong length, a field that is not
 * a number); FK_EMISSING a missing chunk; FK_ENOMEM. On failure *t is empty. */
int fk_cattab_read(FILE *f, const char *name, fk_cattab *t, fk_error *err);

/* The table of an HCOL text ("column_K name unit definition" lines, and
 * length_unit, length_name) and HALO rows of cols doubles (level as its
 * column says). FK_EFORMAT when HCOL names no column or not cols of them. */
int fk_cattab_from_chunks(const char *hcol, const double *halo, uint64_t rows, uint32_t cols, const char *name,
                          fk_cattab *t, fk_error *err);

/* The index of column col, or -1. Can't fail. */
int fk_cattab_find(const fk_cattab *t, const char *col);

/* The values of column col in the rows of level (all rows when the
 * catalogue has no level column and level is 0), in catalogue order:
 * *out (malloc'd, the caller frees; at least one element) and *n.
 * FK_EMISSING "no column 'col' in the catalogue" or "no level column, so no
 * level K"; FK_ENOMEM. */
int fk_cattab_column(const fk_cattab *t, const char *col, long level, const char *name, double **out, size_t *n,
                     fk_error *err);

void fk_cattab_free(fk_cattab *t);

/* The contaminating mass fraction of a halo (halostats' m_contam, n_contam:
 * its dark members heavier than the stream's least dark mass): m_contam /
 * mass; with mass 0 (or no column mass) n_contam / n; 0 when nothing is
 * contaminated. */
double fk_cat_contam(double m_contam, double mass, double n_contam, double n);

/* The contaminating mass fraction (fk_cat_contam) of every row of level,
 * in catalogue order as fk_cattab_column gives that level's rows: *out
 * (malloc'd) and *n. FK_EMISSING when the catalogue has no column
 * m_contam (one halostats wrote before the contamination columns:
 * "run halostats again"); FK_ENOMEM. */
int fk_cattab_contam(const fk_cattab *t, long level, const char *name, double **out, size_t *n, fk_error *err);

/* One halo of level 0 (the longest linking length), in the catalogue's units. */
typedef struct fk_cat_halo {
    uint64_t id, n;
    double mass;
    double x[3]; /* the centre: xc yc zc when present, else the centre of mass x y z */
    double r;    /* its radius: rc_max when present, else rmax, else 0 (x, r: the catalogue's length unit) */
    double contam; /* the contaminating mass fraction (fk_cat_contam); NaN without m_contam */
} fk_cat_halo;

typedef struct fk_catalog {
    size_t n;
    fk_cat_halo *h;
    int has_box; /* box, origin and periodic were in the catalogue (text header, HCOL's SNAP) */
    double box, origin;
    int periodic;
    int has_contam; /* the catalogue has the column m_contam (halostats' zoom-in contamination) */
    double length;  /* its length units in one stream unit (the text header's or HCOL's); 0 when it does
                       not say (a CSV's: then length_name, its x column's unit, tells) */
    char length_name[FK_CAT_NAME];
} fk_catalog;

/* The level-0 halos of a catalogue read by fk_cattab_read. Columns needed:
 * id, mass or n, and x y z (or xc yc zc); their values must be finite.
 * FK_EMISSING names a column that is not there, FK_EFORMAT a row whose value
 * is not finite. */
int fk_catalog_read(FILE *f, const char *name, fk_catalog *cat, fk_error *err);

/* The catalogue of an HCOL text and a level-0 HALO array of rows x cols
 * doubles, as found in a stream. */
int fk_catalog_from_chunks(const char *hcol, const double *halo, uint64_t rows, uint32_t cols, const char *name,
                           fk_catalog *cat, fk_error *err);

/* Leaves out the halos whose contaminating mass fraction is above fmax
 * (halostats' m_contam / mass; fmax 0: every halo with a contaminant);
 * returns how many were left out. FK_EMISSING when the catalogue has no
 * m_contam column (has_contam 0). */
int fk_catalog_clean(fk_catalog *cat, double fmax, const char *name, size_t *dropped, fk_error *err);

/* Sorts the halos by mass, largest first (ties: lower id first). Can't fail. */
void fk_catalog_sort_mass(fk_catalog *cat);

/* The halo with that id, or NULL. */
const fk_cat_halo *fk_catalog_find(const fk_catalog *cat, uint64_t id);

void fk_catalog_free(fk_catalog *cat);

#endif
