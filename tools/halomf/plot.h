/* plot.h - halomf's picture: mass functions on log axes, several catalogues or levels with a legend, a reference curve, drawn with cairo. */
#ifndef HALOMF_PLOT_H
#define HALOMF_PLOT_H

#include "error.h"
#include "massfunc_plot.h"
#include "picture.h"

/* One mass function: its bins (fk_massfunc_points) and its legend's label. */
typedef struct mf_series {
    const fk_mf_bin *bins;
    int nbins;
    const char *label;
} mf_series;

/* What the plot shows: the series, a reference curve (NULL: none) and its
 * label, the axes' labels and the title. */
typedef struct mf_plot {
    const mf_series *series;
    int nseries;
    const fk_mf_curve *ref;
    const char *ref_label;
    const char *xlabel, *ylabel, *title;
    int w, h;
} mf_plot;

/* Plots m into p (white ground): each series' points with Poisson error
 * bars, its own colour and marker (bins of zero count left out); the
 * reference as a black line (a density of 0: a gap); decade ticks labelled
 * 10ⁿ; the axes' labels and the title; a legend (with more than one series
 * or a reference) in the corner where it covers the fewest points. The
 * ranges: every series' points and errors (at least a decade each way), the
 * reference within them and at most a decade beyond. FK_EINVAL when no bin
 * of any series has a count, or the picture is under 200 x 150. */
int mf_plot_draw(pic *p, const mf_plot *m, fk_error *err);

#endif
