/* densmap.c - projected density maps: particles deposited on a pixel grid, coloured in log scale; where halos, labels, the scale bar go; the slab said in words. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "densmap.h"
#include "snapunits.h"

void fk_view_axes(int axis, int *u, int *v)
{
    *u = axis == 0 ? 1 : 0;
    *v = axis == 2 ? 1 : 2;
}

/* d wrapped to its nearest image in a periodic box. */
static double wrap(const fk_view *v, double d)
{
    if (v->periodic) d -= v->box * floor(d / v->box + 0.5);
    return d;
}

int fk_view_project(const fk_view *v, const double p[3], double *px, double *py)
{
    int a, b;
    fk_view_axes(v->axis, &a, &b);
    double s = v->size / v->width;
    *px = (wrap(v, p[a] - v->centre[a]) + v->width / 2) * s;
    *py = (v->width / 2 - wrap(v, p[b] - v->centre[b])) * s;
    return v->depth >= v->box || fabs(wrap(v, p[v->axis] - v->centre[v->axis])) <= v->depth / 2;
}

int fk_densmap_deposit(const fk_view *v, const float *pos, const float *mass, uint64_t n, double *grid,
                       fk_error *err)
{
    if (v->axis < 0 || v->axis > 2 || !(v->width > 0) || !(v->depth > 0) || v->size < 1 || !(v->box > 0))
        return fk_fail(err, FK_EINVAL, "bad view: axis %d, width %g, depth %g, size %d", v->axis, v->width,
                       v->depth, v->size);
    const int size = v->size;
    /* A field that is the whole periodic box wraps: what leaves one edge enters at the other. */
    const int whole = v->periodic && fabs(v->width - v->box) <= 1e-9 * v->box;
    memset(grid, 0, (size_t)size * (size_t)size * sizeof *grid);
    for (uint64_t i = 0; i < n; i++) {
        double p[3] = {pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]}, x, y;
        if (!fk_view_project(v, p, &x, &y)) continue;
        /* Cloud in cell: the particle is a pixel-sized square shared among the four pixels it overlaps. */
        x -= 0.5;
        y -= 0.5;
        double fx = floor(x), fy = floor(y), m = mass ? mass[i] : 1.0;
        int i0 = (int)fx, j0 = (int)fy;
        if (i0 < -1 || j0 < -1 || i0 >= size || j0 >= size) continue;
        double wx[2] = {1 - (x - fx), x - fx}, wy[2] = {1 - (y - fy), y - fy};
        for (int dj = 0; dj < 2; dj++)
            for (int di = 0; di < 2; di++) {
                int ii = i0 + di, jj = j0 + dj;
                if (whole) {
                    ii = (ii + size) % size;
                    jj = (jj + size) % size;
                } else if (ii < 0 || jj < 0 || ii >= size || jj >= size) {
                    continue;
                }
                grid[(size_t)jj * (size_t)size + (size_t)ii] += m * wx[di] * wy[dj];
            }
    }
    return FK_OK;
}

int fk_densmap_smooth(double *grid, int size, double sigma, fk_error *err)
{
    if (!(sigma > 0)) return FK_OK;
    int r = (int)ceil(3 * sigma);
    double *k = malloc((size_t)(2 * r + 1) * sizeof *k), *row = malloc((size_t)size * sizeof *row);
    if (!k || !row) {
        free(k);
        free(row);
        return fk_fail(err, FK_ENOMEM, "no memory to smooth the map");
    }
    for (int i = -r; i <= r; i++) k[i + r] = exp(-0.5 * i * i / (sigma * sigma));
    /* Separable: rows, then columns; near an edge the kernel is renormalised over the pixels inside. */
    for (int pass = 0; pass < 2; pass++)
        for (int line = 0; line < size; line++) {
            size_t step = pass ? (size_t)size : 1, base = pass ? (size_t)line : (size_t)line * (size_t)size;
            for (int i = 0; i < size; i++) {
                double s = 0, w = 0;
                for (int j = i - r; j <= i + r; j++) {
                    if (j < 0 || j >= size) continue;
                    s += k[j - i + r] * grid[base + (size_t)j * step];
                    w += k[j - i + r];
                }
                row[i] = s / w;
            }
            for (int i = 0; i < size; i++) grid[base + (size_t)i * step] = row[i];
        }
    free(k);
    free(row);
    return FK_OK;
}

void fk_densmap_render(const double *grid, int size, const unsigned char (*cmap)[3], double range_dex,
                       unsigned char *rgb)
{
    size_t np = (size_t)size * (size_t)size;
    double top = 0;
    for (size_t i = 0; i < np; i++)
        if (grid[i] > top) top = grid[i];
    double hi = top > 0 ? log10(top) : 0, lo = hi - range_dex;
    for (size_t i = 0; i < np; i++) {
        double t = grid[i] > 0 ? (log10(grid[i]) - lo) / (hi - lo) : 0;
        fk_colormap_rgb(cmap, t, rgb + 3 * i);
    }
}

static int overlaps(const fk_label_box *a, const fk_label_box *b)
{
    /* a pixel of room between labels */
    return a->x <= b->x + b->w && b->x <= a->x + a->w && a->y <= b->y + b->h && b->y <= a->y + a->h;
}

int fk_densmap_label_place(int W, int H, double cx, double cy, double r, int w, int h, const fk_label_box *placed,
                           int n, fk_label_box *box)
{
    const double d = 0.7071 * r;
    const double at[4][2] = {{cx + d + 2, cy - d - h}, {cx - d - 2 - w, cy - d - h}, {cx + d + 2, cy + d + 2},
                             {cx - d - 2 - w, cy + d + 2}};
    for (int k = 0; k < 4; k++) {
        /* a huge ring's places, far outside, are clamped before they become ints */
        double ax = fmin(fmax(at[k][0], -1e6), 1e6), ay = fmin(fmax(at[k][1], -1e6), 1e6);
        fk_label_box b = {(int)floor(ax), (int)floor(ay), w, h};
        /* inside the picture, a pixel from its edges where it fits */
        if (b.x + w > W - 1) b.x = W - 1 - w;
        if (b.y + h > H - 1) b.y = H - 1 - h;
        if (b.x < 1) b.x = 1;
        if (b.y < 1) b.y = 1;
        int free = 1;
        for (int j = 0; j < n && free; j++) free = !overlaps(&b, &placed[j]);
        if (free) {
            *box = b;
            return 1;
        }
    }
    return 0;
}

size_t fk_densmap_rings(const fk_view *v, const fk_catalog *cat, size_t count, double min_r, fk_map_ring *ring)
{
    size_t n = 0;
    for (size_t i = 0; i < cat->n && n < count; i++) {
        const fk_cat_halo *h = &cat->h[i];
        double x, y;
        if (!fk_view_project(v, h->x, &x, &y)) continue;
        double r = fmax(h->r * v->size / v->width, min_r);
        if (x + r < 0 || y + r < 0 || x - r > v->size || y - r > v->size) continue;
        ring[n++] = (fk_map_ring){x, y, r, h->id};
    }
    return n;
}

void fk_densmap_unit(const fk_snap *s, double width, const char *given, fk_map_unit *u)
{
    u->factor = 1;
    u->name[0] = 0;
    if (given) {
        snprintf(u->name, sizeof u->name, "%s", given);
        return;
    }
    if (!s->have_units) return;
    const double kpc = s->unit_length_cm / FK_KPC_CM;
    const int mpc = width * kpc >= 5000; /* a scale bar of 1 Mpc or more */
    u->factor = mpc ? kpc / 1000 : kpc;
    snprintf(u->name, sizeof u->name, "%s%s", mpc ? "Mpc" : "kpc", s->units_per_h ? "/h" : "");
}

/* The largest of 1, 2, 5 times a power of ten not above x. */
static double round_down(double x)
{
    double p = pow(10, floor(log10(x))), m = x / p;
    if (m >= 9.999999) return 10 * p; /* 10 / 5 = 1.9999999... by rounding: 2, not 1 */
    return (m >= 4.999999 ? 5 : m >= 1.999999 ? 2 : 1) * p;
}

double fk_densmap_bar(const fk_view *v, const fk_map_unit *u)
{
    return round_down(v->width * u->factor / 5);
}

/* x to 4 significant digits, without an exponent below a million ("10000", not "1e+04"). */
static double four_digits(double x)
{
    char s[32];
    snprintf(s, sizeof s, "%.4g", x);
    return strtod(s, NULL) + 0.0; /* + 0.0: no "-0" */
}

const char *fk_densmap_slab_text(const fk_view *v, const fk_map_unit *u, char *buf, size_t size)
{
    const int whole = v->depth >= v->box;
    const double at = four_digits(v->centre[v->axis] * u->factor);
    const double thick = four_digits((whole ? v->box : v->depth) * u->factor);
    const char c = "xyz"[v->axis];
    if (u->name[0])
        snprintf(buf, size, "slab at %c = %.7g %s, %.7g %s thick%s", c, at, u->name, thick, u->name,
                 whole ? " (the whole box)" : "");
    else
        snprintf(buf, size, "slab at %c = %.7g, %.7g thick (%sbox side %g)", c, at, thick, whole ? "the whole box; " : "",
                 v->box);
    return buf;
}

/* A length unit's name in kpc: kpc, Mpc, each maybe "/h" (*per_h set); 0 when not one of them. */
static double kpc_of(const char *name, int *per_h)
{
    size_t n = strlen(name);
    *per_h = n > 2 && !strcmp(name + n - 2, "/h");
    if (*per_h) n -= 2;
    if (n == 3 && !strncmp(name, "kpc", 3)) return 1;
    if (n == 3 && !strncmp(name, "Mpc", 3)) return 1000;
    return 0;
}

int fk_densmap_cat_units(fk_catalog *cat, const fk_snap *s, const char *name, fk_error *err)
{
    double per = cat->length; /* the catalogue's length units in one stream unit */
    if (!(per > 0)) {
        const char *ln = cat->length_name;
        int per_h;
        double kpc = kpc_of(ln, &per_h);
        if (!*ln || !strcmp(ln, "length"))
            per = 1;
        else if (kpc > 0 && s->have_units && per_h == s->units_per_h)
            per = s->unit_length_cm / FK_KPC_CM / kpc;
        else
            return fk_fail(err, FK_EINVAL, "%s: lengths in %s, which %s: give the text catalogue (its header says "
                           "the factor)", name, ln, s->have_units ? "the stream's units do not convert to" :
                           "a stream without units cannot take");
    }
    if (per == 1) return FK_OK;
    for (size_t i = 0; i < cat->n; i++) {
        for (int k = 0; k < 3; k++) cat->h[i].x[k] /= per;
        cat->h[i].r /= per;
    }
    cat->length = 1;
    return FK_OK;
}

int fk_densmap_frame(fk_view *v, const fk_snap *snap, const fk_catalog *cat, long long zoom, const double *centre,
                     double width, double depth, char *caption, size_t cap, fk_error *err)
{
    v->box = snap->box;
    v->periodic = snap->periodic;
    for (int k = 0; k < 3; k++) v->centre[k] = snap->origin + snap->box / 2;
    snprintf(caption, cap, "%" PRIu64 " particles, seen along %c", snap->n, "xyz"[v->axis]);
    if (zoom > 0) {
        if (!cat->n)
            return fk_fail(err, FK_EMISSING, "--halo needs a catalogue: --halos=FILE or halostats --format=stream");
        const fk_cat_halo *h = fk_catalog_find(cat, (uint64_t)zoom);
        if (!h) return fk_fail(err, FK_EMISSING, "no halo %lld at level 0 of the catalogue (it has %zu)", zoom, cat->n);
        memcpy(v->centre, h->x, sizeof v->centre);
        if (!width) width = h->r > 0 ? 6 * h->r : snap->box / 10;
        if (!depth) depth = width;
        snprintf(caption, cap, "halo %lld: %" PRIu64 " particles, seen along %c", zoom, h->n, "xyz"[v->axis]);
    }
    if (centre) memcpy(v->centre, centre, sizeof v->centre);
    v->width = width ? width : snap->box;
    v->depth = depth ? depth : snap->box;
    if (!snap->periodic && v->width > snap->box) v->width = snap->box;
    if (snap->periodic && v->width > snap->box)
        return fk_fail(err, FK_EINVAL, "--width %g is wider than the periodic box (%g)", v->width, snap->box);
    return FK_OK;
}
