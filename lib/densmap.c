/* densmap.c - projected density maps: particles deposited on a pixel grid, drawn in log scale with halos circled. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "densmap.h"

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

void fk_densmap_render(const double *grid, int size, const unsigned char (*cmap)[3], double range_dex, fk_image *im)
{
    size_t np = (size_t)size * (size_t)size;
    double top = 0;
    for (size_t i = 0; i < np; i++)
        if (grid[i] > top) top = grid[i];
    double hi = top > 0 ? log10(top) : 0, lo = hi - range_dex;
    for (size_t i = 0; i < np; i++) {
        double t = grid[i] > 0 ? (log10(grid[i]) - lo) / (hi - lo) : 0;
        fk_colormap_rgb(cmap, t, im->rgb + 3 * i);
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

int fk_densmap_circle(fk_image *im, const fk_view *v, const fk_catalog *cat, size_t count, int label, int *unlabelled)
{
    static const unsigned char ring[3] = {255, 255, 255}, shade[3] = {0, 0, 0};
    int drawn = 0, nplaced = 0, skipped = 0;
    fk_label_box *placed = label ? malloc((count < cat->n ? count : cat->n) * sizeof *placed + 1) : NULL;
    for (size_t i = 0; i < cat->n && (size_t)drawn < count; i++) {
        const fk_cat_halo *h = &cat->h[i];
        double x, y;
        if (!fk_view_project(v, h->x, &x, &y)) continue;
        double r = h->r * v->size / v->width;
        if (r < 4) r = 4;
        if (x + r < 0 || y + r < 0 || x - r > im->w || y - r > im->h) continue;
        /* A dark halo under a white ring keeps it visible over bright and dark pixels alike. */
        fk_image_ring(im, x, y, r, 3.0, shade);
        fk_image_ring(im, x, y, r, 1.5, ring);
        drawn++;
        if (!label) continue;
        char s[32];
        snprintf(s, sizeof s, "%llu", (unsigned long long)h->id);
        fk_label_box b;
        /* the 5x7 font at scale 2, and a pixel of shade */
        if (placed && fk_densmap_label_place(im->w, im->h, x, y, r, fk_text_width(s, 2) + 1, 2 * 7 + 1, placed, nplaced,
                                             &b)) {
            placed[nplaced++] = b;
            fk_image_text(im, b.x + 1, b.y + 1, s, 2, 0, shade);
            fk_image_text(im, b.x, b.y, s, 2, 0, ring);
        } else {
            skipped++;
        }
    }
    free(placed);
    if (unlabelled) *unlabelled = skipped;
    return drawn;
}

/* The largest of 1, 2, 5 times a power of ten not above x. */
static double round_down(double x)
{
    double p = pow(10, floor(log10(x))), m = x / p;
    return (m >= 5 ? 5 : m >= 2 ? 2 : 1) * p;
}

void fk_densmap_annotate(fk_image *im, const fk_view *v, const char *caption, const char *unit)
{
    static const unsigned char white[3] = {255, 255, 255}, black[3] = {0, 0, 0};
    int scale = im->w >= 600 ? 2 : 1;
    double len = round_down(v->width / 5);
    double px = len * v->size / v->width;
    int x0 = 16 * scale, y0 = im->h - 16 * scale;
    fk_image_line(im, x0 + 1, y0 + 1, x0 + px + 1, y0 + 1, 2.0 * scale, black);
    fk_image_line(im, x0, y0, x0 + px, y0, 2.0 * scale, white);
    char s[128];
    snprintf(s, sizeof s, "%g%s%s", len, unit && *unit ? " " : "", unit ? unit : "");
    int ty = y0 - (12 * scale);
    fk_image_text(im, x0 + 1, ty + 1, s, scale, 0, black);
    fk_image_text(im, x0, ty, s, scale, 0, white);
    if (caption && *caption) {
        fk_image_text(im, 10 * scale + 1, 10 * scale + 1, caption, scale, 0, black);
        fk_image_text(im, 10 * scale, 10 * scale, caption, scale, 0, white);
    }
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
