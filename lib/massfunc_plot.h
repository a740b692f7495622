/* massfunc_plot.h - the picture of a mass function dn/dlog10 M: its points with Poisson errors, the log-log plot. */
#ifndef FK_MASSFUNC_PLOT_H
#define FK_MASSFUNC_PLOT_H

#include <stddef.h>

#include "error.h"
#include "image.h"
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

/* Plots the bins with counts on log axes into im (white background): points
 * with Poisson error bars, decade ticks labelled 10^k, the axes named with
 * mass_unit and length_unit, and title above. Bins of zero count are left
 * out. FK_EINVAL when im is too small (under 200 x 150) or no bin has a count. */
int fk_massfunc_plot(const fk_mf_bin *bins, int nbins, const char *mass_unit, const char *length_unit,
                     const char *title, fk_image *im, fk_error *err);

#endif
