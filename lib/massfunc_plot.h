/* massfunc_plot.h - what a mass function's picture shows: its points dn/dlog10 M with Poisson errors, a reference curve read from a file. */
#ifndef FK_MASSFUNC_PLOT_H
#define FK_MASSFUNC_PLOT_H

#include <stddef.h>

#include "error.h"
#include <stdio.h>

#include "massfunc.h"

/* One bin [lo, hi) of log10 M (the last bin holds hi too). */
typedef struct fk_mf_bin {
    double lo, hi;
    size_t count;
    double dn;  /* count / (volume * (hi - lo)): dn/dlog10 M        */
    double err; /* sqrt(count) / (volume * (hi - lo)): Poisson error */
} fk_mf_bin;

/* The points of a mass function counted by fk_massfunc_count (massfunc.h) in a
 * volume: bins[k] for k < mf->nbins (the caller's array), log10 edges,
 * count, dn = count / (volume dlog10) and err = sqrt(count) / (volume
 * dlog10), the Poisson error. FK_EINVAL when volume is not positive. */
int fk_massfunc_points(const fk_massfunc *mf, double volume, fk_mf_bin *bins, fk_error *err);

/* A reference curve: n points (mass, dn/dlog10 M), masses increasing. */
typedef struct fk_mf_curve {
    size_t n;
    double *m, *dn;
} fk_mf_curve;

/* Reads a reference curve from f (name in messages): two columns of numbers
 * a line, mass and dn/dlog10 M (more columns are ignored), '#' lines and
 * blank lines skipped, at least two points, masses positive and increasing,
 * densities finite and not negative (a 0 is drawn as a gap). FK_EFORMAT
 * names the line; FK_ENOMEM. On failure c is empty. */
int fk_mf_curve_read(FILE *f, const char *name, fk_mf_curve *c, fk_error *err);

void fk_mf_curve_free(fk_mf_curve *c);

#endif
