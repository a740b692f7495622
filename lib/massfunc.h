/* massfunc.h - the halo mass function dn/dlog10 M of a catalogue: binning, Poisson errors, a log-log plot. */
#ifndef FK_MASSFUNC_H
#define FK_MASSFUNC_H

#include <stddef.h>

#include "error.h"
#include "image.h"

/* One bin [lo, hi) of log10 M (the last bin holds hi too). */
typedef struct fk_mf_bin {
    double lo, hi;
    size_t count;
    double dn;  /* count / (volume * (hi - lo)): dn/dlog10 M        */
    double err; /* sqrt(count) / (volume * (hi - lo)): Poisson error */
} fk_mf_bin;

/* Bins n masses into nbins equal bins of log10 M over [lo, hi) and divides
 * by volume. Masses outside, and masses <= 0, are not counted. FK_EINVAL
 * for nbins < 1, lo >= hi or volume <= 0. */
int fk_massfunc_bin(const double *mass, size_t n, double volume, double lo, double hi, int nbins, fk_mf_bin *bins,
                    fk_error *err);

/* A range of bins of width dex covering the masses (> 0): *lo and *hi are
 * multiples of dex. Returns the number of bins, or FK_EINVAL when no mass
 * is positive or dex <= 0. */
int fk_massfunc_range(const double *mass, size_t n, double dex, double *lo, double *hi, fk_error *err);

/* Plots the bins with counts on log axes into im (white background): points
 * with Poisson error bars, decade ticks labelled 10^k, the axes named with
 * mass_unit and length_unit, and title above. Bins of zero count are left
 * out. FK_EINVAL when im is too small (under 200 x 150) or no bin has a count. */
int fk_massfunc_plot(const fk_mf_bin *bins, int nbins, const char *mass_unit, const char *length_unit,
                     const char *title, fk_image *im, fk_error *err);

#endif
