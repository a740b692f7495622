/* image.c - an RGB raster for pictures: pixels, lines, rings, rectangles and bitmap text. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "font.h"
#include "image.h"

int fk_image_new(fk_image *im, int w, int h, const unsigned char bg[3], fk_error *err)
{
    im->w = im->h = 0;
    im->rgb = NULL;
    if (w < 1 || h < 1 || w > FK_IMAGE_MAX || h > FK_IMAGE_MAX)
        return fk_fail(err, FK_EINVAL, "image size %dx%d outside 1..%d", w, h, FK_IMAGE_MAX);
    im->rgb = malloc((size_t)w * (size_t)h * 3);
    if (!im->rgb) return fk_fail(err, FK_ENOMEM, "no memory for a %dx%d image", w, h);
    im->w = w;
    im->h = h;
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++) memcpy(im->rgb + 3 * i, bg, 3);
    return FK_OK;
}

void fk_image_free(fk_image *im)
{
    free(im->rgb);
    im->rgb = NULL;
    im->w = im->h = 0;
}

void fk_image_blend(fk_image *im, int x, int y, const unsigned char c[3], double a)
{
    if (x < 0 || y < 0 || x >= im->w || y >= im->h || !(a > 0)) return;
    if (a > 1) a = 1;
    unsigned char *p = im->rgb + 3 * ((size_t)y * (size_t)im->w + (size_t)x);
    for (int k = 0; k < 3; k++) p[k] = (unsigned char)lround(p[k] + a * (c[k] - p[k]));
}

void fk_image_fill(fk_image *im, int x0, int y0, int x1, int y1, const unsigned char c[3])
{
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > im->w) x1 = im->w;
    if (y1 > im->h) y1 = im->h;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) memcpy(im->rgb + 3 * ((size_t)y * (size_t)im->w + (size_t)x), c, 3);
}

/* Coverage of a pixel whose centre lies at signed distance d from an edge
 * (negative inside): a one-pixel linear ramp, the usual cheap antialiasing. */
static double cover(double d)
{
    return d <= -0.5 ? 1 : d >= 0.5 ? 0 : 0.5 - d;
}

void fk_image_line(fk_image *im, double x0, double y0, double x1, double y1, double width,
                   const unsigned char c[3])
{
    double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy, hw = width / 2;
    int xa = (int)floor(fmin(x0, x1) - hw - 1), xb = (int)ceil(fmax(x0, x1) + hw + 1);
    int ya = (int)floor(fmin(y0, y1) - hw - 1), yb = (int)ceil(fmax(y0, y1) + hw + 1);
    if (xa < 0) xa = 0;
    if (ya < 0) ya = 0;
    if (xb > im->w) xb = im->w;
    if (yb > im->h) yb = im->h;
    for (int y = ya; y < yb; y++)
        for (int x = xa; x < xb; x++) {
            double px = x + 0.5 - x0, py = y + 0.5 - y0;
            double t = len2 > 0 ? (px * dx + py * dy) / len2 : 0;
            t = t < 0 ? 0 : t > 1 ? 1 : t;
            double ex = px - t * dx, ey = py - t * dy;
            fk_image_blend(im, x, y, c, cover(sqrt(ex * ex + ey * ey) - hw));
        }
}

void fk_image_ring(fk_image *im, double cx, double cy, double r, double width, const unsigned char c[3])
{
    double hw = width / 2, out = r + hw + 1;
    int xa = (int)floor(cx - out), xb = (int)ceil(cx + out), ya = (int)floor(cy - out), yb = (int)ceil(cy + out);
    if (xa < 0) xa = 0;
    if (ya < 0) ya = 0;
    if (xb > im->w) xb = im->w;
    if (yb > im->h) yb = im->h;
    for (int y = ya; y < yb; y++)
        for (int x = xa; x < xb; x++) {
            double d = hypot(x + 0.5 - cx, y + 0.5 - cy);
            fk_image_blend(im, x, y, c, cover(fabs(d - r) - hw));
        }
}

void fk_image_disc(fk_image *im, double cx, double cy, double r, const unsigned char c[3])
{
    int xa = (int)floor(cx - r - 1), xb = (int)ceil(cx + r + 1), ya = (int)floor(cy - r - 1), yb = (int)ceil(cy + r + 1);
    if (xa < 0) xa = 0;
    if (ya < 0) ya = 0;
    if (xb > im->w) xb = im->w;
    if (yb > im->h) yb = im->h;
    for (int y = ya; y < yb; y++)
        for (int x = xa; x < xb; x++) fk_image_blend(im, x, y, c, cover(hypot(x + 0.5 - cx, y + 0.5 - cy) - r));
}

int fk_text_width(const char *s, int scale)
{
    return (int)strlen(s) * (FK_FONT_W + 1) * scale;
}

int fk_image_text(fk_image *im, int x, int y, const char *s, int scale, int up, const unsigned char c[3])
{
    int adv = 0;
    for (; *s; s++, adv += (FK_FONT_W + 1) * scale) {
        const unsigned char *g = fk_font_glyph((unsigned char)*s);
        for (int row = 0; row < FK_FONT_H; row++)
            for (int col = 0; col < FK_FONT_W; col++) {
                if (!(g[row] >> (FK_FONT_W - 1 - col) & 1)) continue;
                for (int i = 0; i < scale; i++)
                    for (int j = 0; j < scale; j++) {
                        int u = adv + col * scale + j, v = row * scale + i; /* along and down the text */
                        if (up)
                            fk_image_blend(im, x + v, y - 1 - u, c, 1);
                        else
                            fk_image_blend(im, x + u, y + v, c, 1);
                    }
            }
    }
    return adv;
}
