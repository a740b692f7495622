/* plot.c - halomf's picture: mass functions on log axes, several catalogues or levels with a legend, a reference curve, drawn with cairo. */
#include "plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The plot's ranges in log10: every series' points and error bars, the reference within a decade of them. */
static int ranges(const mf_plot *m, double *xlo, double *xhi, double *ylo, double *yhi)
{
    *xlo = INFINITY, *xhi = -INFINITY, *ylo = INFINITY, *yhi = -INFINITY;
    for (int s = 0; s < m->nseries; s++) {
        const mf_series *se = &m->series[s];
        for (int k = 0; k < se->nbins; k++) {
            const fk_mf_bin *b = &se->bins[k];
            *xlo = fmin(*xlo, b->lo);
            *xhi = fmax(*xhi, b->hi);
            if (!b->count) continue;
            double lowest = b->dn - b->err > 0 ? b->dn - b->err : b->dn / 2;
            *ylo = fmin(*ylo, log10(lowest));
            *yhi = fmax(*yhi, log10(b->dn + b->err));
        }
    }
    if (!(*ylo <= *yhi)) return 0;
    if (*xhi - *xlo < 1) { /* at least one decade across */
        double mid = (*xlo + *xhi) / 2;
        *xlo = mid - 0.5, *xhi = mid + 0.5;
    }
    const double y0 = *ylo, y1 = *yhi;
    for (size_t i = 0; m->ref && i < m->ref->n; i++) {
        double lx = log10(m->ref->m[i]), ly = m->ref->dn[i] > 0 ? log10(m->ref->dn[i]) : NAN;
        if (lx < *xlo || lx > *xhi || !isfinite(ly)) continue;
        *ylo = fmin(*ylo, fmax(ly, y0 - 1));
        *yhi = fmax(*yhi, fmin(ly, y1 + 1));
    }
    *ylo = floor(*ylo);
    *yhi = ceil(*yhi);
    if (*ylo == *yhi) *yhi = *ylo + 1;
    return 1;
}

#ifdef FK_HAVE_CAIRO

/* matplotlib's tab10 colours (Tableau 10), one a series; markers cycle apart from them. */
static const double colours[10][3] = {
    {0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173}, {0.839, 0.153, 0.157},
    {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294}, {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498},
    {0.737, 0.741, 0.133}, {0.090, 0.745, 0.812}};

/* Marker k (circle, square, triangle, diamond) of radius r about (x, y), filled. */
static void marker(cairo_t *cr, int k, double x, double y, double r)
{
    switch (k % 4) {
    case 0: cairo_new_sub_path(cr), cairo_arc(cr, x, y, r, 0, 2 * M_PI); break;
    case 1: cairo_rectangle(cr, x - 0.85 * r, y - 0.85 * r, 1.7 * r, 1.7 * r); break;
    case 2:
        cairo_move_to(cr, x, y - 1.2 * r);
        cairo_line_to(cr, x + 1.05 * r, y + 0.65 * r);
        cairo_line_to(cr, x - 1.05 * r, y + 0.65 * r);
        cairo_close_path(cr);
        break;
    default:
        cairo_move_to(cr, x, y - 1.2 * r);
        cairo_line_to(cr, x + 1.2 * r, y);
        cairo_line_to(cr, x, y + 1.2 * r);
        cairo_line_to(cr, x - 1.2 * r, y);
        cairo_close_path(cr);
    }
    cairo_fill(cr);
}

/* "10ⁿ" for decade n. */
static const char *decade(int n, char *buf, size_t size)
{
    char s[32];
    snprintf(s, sizeof s, "10^%d", n);
    return pic_superscripts(s, buf, size);
}

/* Points the legend should not cover, in pixels. */
typedef struct spots {
    double (*xy)[2];
    size_t n, cap;
} spots;

static void spot(spots *s, double x, double y)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        double(*a)[2] = realloc(s->xy, cap * sizeof *a);
        if (!a) return; /* fewer spots: a legend placed on less knowledge */
        s->xy = a, s->cap = cap;
    }
    s->xy[s->n][0] = x, s->xy[s->n][1] = y;
    s->n++;
}

int mf_plot_draw(pic *p, const mf_plot *m, fk_error *err)
{
    if (m->w < 200 || m->h < 150) return fk_fail(err, FK_EINVAL, "a plot needs at least 200 x 150 pixels");
    double xlo, xhi, ylo, yhi;
    if (!ranges(m, &xlo, &xhi, &ylo, &yhi)) return fk_fail(err, FK_EINVAL, "mass function: no bin holds a halo");
    cairo_t *cr = pic_cairo(p);
    const double fs = fmin(fmax(fmin(m->w, m->h) / 40.0, 8), 40), k = fs / 15;
    const pic_style text = {.size = fs, .rgb = {0, 0, 0}};
    pic_style tick = text, centred = text, up = text, title = text;
    tick.size = 0.9 * fs;
    centred.align = PIC_CENTRE;
    up.align = PIC_CENTRE, up.up = 1;
    title.align = PIC_CENTRE, title.size = 1.1 * fs;
    char buf[64];
    /* the frame: room on the left for the tick labels and the y label, below for the x label, above for the title */
    const double ywide = fmax(pic_text_width(p, decade((int)ylo, buf, sizeof buf), &tick),
                              pic_text_width(p, decade((int)yhi, buf, sizeof buf), &tick));
    const double left = 1.6 * fs + ywide + 0.8 * fs, right = m->w - 1.2 * fs, top = 2.8 * fs,
                 bottom = m->h - 3.4 * fs;
    const double sx = (right - left) / (xhi - xlo), sy = (bottom - top) / (yhi - ylo);
#define PX(l) (left + ((l) - xlo) * sx)
#define PY(l) (bottom - ((l) - ylo) * sy)
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);

    /* decades: grid lines, ticks and labels, every step-th labelled where they would crowd */
    const int xstep = (int)ceil((xhi - xlo) * 4.5 * fs / (right - left)), ystep = (int)ceil((yhi - ylo) * 2.2 * fs / (bottom - top));
    cairo_set_line_width(cr, 1 * k);
    cairo_set_source_rgb(cr, 0.86, 0.86, 0.86);
    for (int d = (int)ceil(xlo); d <= (int)floor(xhi); d++) {
        cairo_move_to(cr, PX(d), top);
        cairo_line_to(cr, PX(d), bottom);
    }
    for (int d = (int)ylo; d <= (int)yhi; d++) {
        cairo_move_to(cr, left, PY(d));
        cairo_line_to(cr, right, PY(d));
    }
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    const double cap = pic_cap_height(p, &tick);
    for (int d = (int)ceil(xlo); d <= (int)floor(xhi); d++) {
        cairo_move_to(cr, PX(d), bottom);
        cairo_line_to(cr, PX(d), bottom - 0.5 * fs);
        if (((d % xstep) + xstep) % xstep == 0) {
            tick.align = PIC_CENTRE;
            pic_text(p, PX(d), bottom + 0.6 * fs + cap, decade(d, buf, sizeof buf), &tick);
        }
    }
    for (int d = (int)ylo; d <= (int)yhi; d++) {
        cairo_move_to(cr, left, PY(d));
        cairo_line_to(cr, left + 0.5 * fs, PY(d));
        if (((d % ystep) + ystep) % ystep == 0) {
            tick.align = PIC_RIGHT;
            pic_text(p, left - 0.4 * fs, PY(d) + cap / 2, decade(d, buf, sizeof buf), &tick);
        }
    }
    /* minor ticks at 2..9 times each decade, where decades are wide enough to hold them */
    for (int axis = 0; axis < 2; axis++) {
        const double lo = axis ? ylo : xlo, hi = axis ? yhi : xhi, per = axis ? sy : sx;
        if (per < 2.5 * fs) continue;
        for (int d = (int)floor(lo); d <= (int)ceil(hi); d++)
            for (int j = 2; j < 10; j++) {
                double l = d + log10(j);
                if (!(l > lo && l < hi)) continue;
                if (axis) {
                    cairo_move_to(cr, left, PY(l));
                    cairo_line_to(cr, left + 0.25 * fs, PY(l));
                } else {
                    cairo_move_to(cr, PX(l), bottom);
                    cairo_line_to(cr, PX(l), bottom - 0.25 * fs);
                }
            }
    }
    cairo_stroke(cr);
    cairo_set_line_width(cr, 1.2 * k);
    cairo_rectangle(cr, left, top, right - left, bottom - top);
    cairo_stroke(cr);

    /* the data, clipped to the frame */
    spots sp = {0};
    cairo_save(cr);
    cairo_rectangle(cr, left, top, right - left, bottom - top);
    cairo_clip(cr);
    if (m->ref) {
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_set_line_width(cr, 1.5 * k);
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
        int on = 0;
        for (size_t i = 0; i < m->ref->n; i++) {
            if (!(m->ref->dn[i] > 0)) { /* a gap */
                on = 0;
                continue;
            }
            double x = PX(log10(m->ref->m[i])), y = PY(log10(m->ref->dn[i]));
            if (on)
                cairo_line_to(cr, x, y);
            else
                cairo_move_to(cr, x, y);
            on = 1;
            if (x >= left && x <= right && y >= top && y <= bottom) spot(&sp, x, y);
        }
        /* a spot every few pixels along the curve, so that the legend keeps off it too */
        for (size_t i = 1; i < m->ref->n; i++) {
            if (!(m->ref->dn[i] > 0) || !(m->ref->dn[i - 1] > 0)) continue;
            double x0 = PX(log10(m->ref->m[i - 1])), y0 = PY(log10(m->ref->dn[i - 1]));
            double x1 = PX(log10(m->ref->m[i])), y1 = PY(log10(m->ref->dn[i]));
            int steps = (int)fmin(hypot(x1 - x0, y1 - y0) / (0.5 * fs), 1000);
            for (int j = 1; j < steps; j++) {
                double x = x0 + (x1 - x0) * j / steps, y = y0 + (y1 - y0) * j / steps;
                if (x >= left && x <= right && y >= top && y <= bottom) spot(&sp, x, y);
            }
        }
        cairo_stroke(cr);
    }
    const double r = 0.33 * fs;
    /* series side by side within their bins (at most a third of a bin), so that equal points stay apart */
    double bin_px = INFINITY;
    for (int s = 0; s < m->nseries; s++)
        if (m->series[s].nbins) bin_px = fmin(bin_px, (m->series[s].bins[0].hi - m->series[s].bins[0].lo) * sx);
    const double dodge = m->nseries > 1 ? fmin(2.2 * r, bin_px / 3 / (m->nseries - 1)) : 0;
    for (int s = 0; s < m->nseries; s++) {
        const mf_series *se = &m->series[s];
        const double *c = colours[s % 10], shift = (s - (m->nseries - 1) / 2.0) * dodge;
        cairo_set_source_rgb(cr, c[0], c[1], c[2]);
        cairo_set_line_width(cr, 1.3 * k);
        for (int b = 0; b < se->nbins; b++) {
            const fk_mf_bin *bin = &se->bins[b];
            if (!bin->count) continue;
            double x = PX((bin->lo + bin->hi) / 2) + shift, y = PY(log10(bin->dn));
            double elo = bin->dn - bin->err, y0 = elo > 0 ? PY(log10(elo)) : bottom + 1;
            double y1 = PY(log10(bin->dn + bin->err));
            cairo_move_to(cr, x, y0);
            cairo_line_to(cr, x, y1);
            cairo_move_to(cr, x - r, y0);
            cairo_line_to(cr, x + r, y0);
            cairo_move_to(cr, x - r, y1);
            cairo_line_to(cr, x + r, y1);
            cairo_stroke(cr);
            marker(cr, s, x, y, r);
            spot(&sp, x, y), spot(&sp, x, y0), spot(&sp, x, y1), spot(&sp, x, (y + y0) / 2), spot(&sp, x, (y + y1) / 2);
        }
    }
    cairo_restore(cr);
#undef PX
#undef PY

    /* the labels of the axes and the title */
    pic_text(p, (left + right) / 2, m->h - 0.9 * fs, m->xlabel, &centred);
    pic_text(p, 1.2 * fs, (top + bottom) / 2, m->ylabel, &up);
    if (m->title && *m->title) pic_text(p, (left + right) / 2, 1.8 * fs, m->title, &title);

    /* the legend: in the corner of the frame where it covers the fewest points */
    const int entries = m->nseries + (m->ref ? 1 : 0);
    if (entries > 1 || m->ref) {
        const pic_style lt = {.size = 0.9 * fs, .rgb = {0, 0, 0}};
        const double row = 1.35 * lt.size, pad = 0.5 * fs, sample = 1.6 * fs, lcap = pic_cap_height(p, &lt);
        double tw = 0;
        for (int s = 0; s < m->nseries; s++) tw = fmax(tw, pic_text_width(p, m->series[s].label, &lt));
        if (m->ref) tw = fmax(tw, pic_text_width(p, m->ref_label, &lt));
        const double bw = 2 * pad + sample + 0.5 * fs + tw, bh = 2 * pad + entries * row - (row - lcap) + 0.2 * fs;
        const double gap = 0.6 * fs;
        const double at[4][2] = {{right - gap - bw, top + gap}, {left + gap, bottom - gap - bh},
                                 {left + gap, top + gap}, {right - gap - bw, bottom - gap - bh}};
        int best = 0;
        size_t fewest = (size_t)-1;
        for (int c = 0; c < 4; c++) {
            size_t n = 0;
            for (size_t i = 0; i < sp.n; i++)
                n += sp.xy[i][0] >= at[c][0] - r && sp.xy[i][0] <= at[c][0] + bw + r && sp.xy[i][1] >= at[c][1] - r &&
                     sp.xy[i][1] <= at[c][1] + bh + r;
            if (n < fewest) fewest = n, best = c;
        }
        const double bx = at[best][0], by = at[best][1];
        cairo_rectangle(cr, bx, by, bw, bh);
        cairo_set_source_rgba(cr, 1, 1, 1, 0.9);
        cairo_fill_preserve(cr);
        cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
        cairo_set_line_width(cr, 1 * k);
        cairo_stroke(cr);
        for (int e = 0; e < entries; e++) {
            const double base = by + pad + lcap + e * row, mid = base - lcap / 2, sx0 = bx + pad;
            if (e < m->nseries) {
                const double *c = colours[e % 10];
                cairo_set_source_rgb(cr, c[0], c[1], c[2]);
                marker(cr, e, sx0 + sample / 2, mid, r);
                pic_text(p, sx0 + sample + 0.5 * fs, base, m->series[e].label, &lt);
            } else {
                cairo_set_source_rgb(cr, 0, 0, 0);
                cairo_set_line_width(cr, 1.5 * k);
                cairo_move_to(cr, sx0, mid);
                cairo_line_to(cr, sx0 + sample, mid);
                cairo_stroke(cr);
                pic_text(p, sx0 + sample + 0.5 * fs, base, m->ref_label, &lt);
            }
        }
    }
    free(sp.xy);
    return FK_OK;
}

#else

int mf_plot_draw(pic *p, const mf_plot *m, fk_error *err)
{
    (void)p;
    double xlo, xhi, ylo, yhi;
    if (!ranges(m, &xlo, &xhi, &ylo, &yhi)) return fk_fail(err, FK_EINVAL, "mass function: no bin holds a halo");
    return fk_fail(err, FK_EUNSUP, "this build draws no pictures (cairo was not found)");
}

#endif
