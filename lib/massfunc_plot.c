/* massfunc_plot.c - the picture of a mass function dn/dlog10 M: its points with Poisson errors, the log-log plot. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "massfunc_plot.h"

#include "halostats.h"

int fk_massfunc_points(const fk_massfunc *mf, double volume, fk_mf_bin *bins, fk_error *err)
{
    if (!(volume > 0) || !isfinite(volume)) return fk_fail(err, FK_EINVAL, "mass function: volume %g", volume);
    for (size_t k = 0; k < mf->nbins; k++) {
        double d = volume * mf->dlog;
        bins[k].lo = mf->log_lo + (double)k * mf->dlog;
        bins[k].hi = bins[k].lo + mf->dlog;
        bins[k].count = (size_t)mf->count[k];
        bins[k].dn = (double)mf->count[k] / d;
        bins[k].err = sqrt((double)mf->count[k]) / d;
    }
    return FK_OK;
}

static const unsigned char black[3] = {0, 0, 0}, grey[3] = {200, 200, 200}, point[3] = {31, 119, 180};

/* "10" with the exponent k raised and smaller, its left end at x, top at y. Returns its width. */
static int power_label(fk_image *im, int x, int y, int k, int scale, int draw)
{
    char e[16];
    snprintf(e, sizeof e, "%d", k);
    int small = scale > 1 ? scale - 1 : 1;
    int w = fk_text_width("10", scale) + fk_text_width(e, small);
    if (draw) {
        fk_image_text(im, x, y, "10", scale, 0, black);
        fk_image_text(im, x + fk_text_width("10", scale), y - 3 * small, e, small, 0, black);
    }
    return w;
}

int fk_massfunc_plot(const fk_mf_bin *bins, int nbins, const char *mass_unit, const char *length_unit,
                     const char *title, fk_image *im, fk_error *err)
{
    if (im->w < 200 || im->h < 150) return fk_fail(err, FK_EINVAL, "a plot needs at least 200 x 150 pixels");
    double ylo = INFINITY, yhi = -INFINITY, xlo = bins[0].lo, xhi = bins[nbins - 1].hi;
    for (int k = 0; k < nbins; k++) {
        if (!bins[k].count) continue;
        double lowest = bins[k].dn - bins[k].err > 0 ? bins[k].dn - bins[k].err : bins[k].dn / 2;
        ylo = fmin(ylo, log10(lowest));
        yhi = fmax(yhi, log10(bins[k].dn + bins[k].err));
    }
    if (!(ylo <= yhi)) return fk_fail(err, FK_EINVAL, "mass function: no bin holds a halo");
    ylo = floor(ylo);
    yhi = ceil(yhi);
    if (ylo == yhi) yhi = ylo + 1;
    if (xhi - xlo < 1) { /* at least one decade across */
        double mid = (xlo + xhi) / 2;
        xlo = mid - 0.5;
        xhi = mid + 0.5;
    }
    int scale = im->w >= 600 ? 2 : 1;
    int ch = 7 * scale, cw = 6 * scale;
    /* The frame: room on the left for tick labels and the y label, below for the x label. */
    int left = 3 * ch + 6 * cw, right = im->w - 3 * cw, top = 3 * ch, bottom = im->h - 4 * ch;
    double sx = (right - left) / (xhi - xlo), sy = (bottom - top) / (yhi - ylo);
#define PX(l) (left + ((l) - xlo) * sx)
#define PY(l) (bottom - ((l) - ylo) * sy)
    for (int k = (int)ceil(xlo); k <= (int)floor(xhi); k++) {
        fk_image_line(im, PX(k), top, PX(k), bottom, 1, grey);
        int w = power_label(im, 0, 0, k, scale, 0);
        power_label(im, (int)PX(k) - w / 2, bottom + ch, k, scale, 1);
    }
    for (int k = (int)ylo; k <= (int)yhi; k++) {
        fk_image_line(im, left, PY(k), right, PY(k), 1, grey);
        int w = power_label(im, 0, 0, k, scale, 0);
        power_label(im, left - w - cw, (int)PY(k) - ch / 2, k, scale, 1);
    }
    /* Minor ticks at 2..9 times each power of ten. */
    for (int k = (int)floor(xlo); k <= (int)ceil(xhi); k++)
        for (int m = 2; m < 10; m++) {
            double l = k + log10(m);
            if (l > xlo && l < xhi) fk_image_line(im, PX(l), bottom, PX(l), bottom - 2 * scale, 1, black);
        }
    for (int k = (int)floor(ylo); k <= (int)ceil(yhi); k++)
        for (int m = 2; m < 10; m++) {
            double l = k + log10(m);
            if (l > ylo && l < yhi) fk_image_line(im, left, PY(l), left + 2 * scale, PY(l), 1, black);
        }
    fk_image_line(im, left, top, right, top, scale, black);
    fk_image_line(im, left, bottom, right, bottom, scale, black);
    fk_image_line(im, left, top, left, bottom, scale, black);
    fk_image_line(im, right, top, right, bottom, scale, black);
    for (int k = 0; k < nbins; k++) {
        if (!bins[k].count) continue;
        double x = PX((bins[k].lo + bins[k].hi) / 2), y = PY(log10(bins[k].dn));
        double elo = bins[k].dn - bins[k].err, y0 = elo > 0 ? PY(log10(elo)) : bottom;
        double y1 = PY(log10(bins[k].dn + bins[k].err));
        fk_image_line(im, x, y0, x, y1, scale, point);
        fk_image_line(im, x - 3 * scale, y0, x + 3 * scale, y0, scale, point);
        fk_image_line(im, x - 3 * scale, y1, x + 3 * scale, y1, scale, point);
        fk_image_disc(im, x, y, 3.5 * scale, point);
    }
#undef PX
#undef PY
    char label[160];
    snprintf(label, sizeof label, "M [%s]", mass_unit);
    fk_image_text(im, (left + right - fk_text_width(label, scale)) / 2, im->h - 3 * ch / 2, label, scale, 0, black);
    char per_volume[96];
    snprintf(label, sizeof label, "dn/dlog10 M [%s]", fk_unit_power(length_unit, -3, per_volume, sizeof per_volume));
    fk_image_text(im, ch / 2, (top + bottom + fk_text_width(label, scale)) / 2, label, scale, 1, black);
    if (title && *title) fk_image_text(im, (left + right - fk_text_width(title, scale)) / 2, ch, title, scale, 0, black);
    return FK_OK;
}
