/* image.h - an RGB raster for pictures: pixels, lines, rings, rectangles and bitmap text. */
#ifndef FK_IMAGE_H
#define FK_IMAGE_H

#include "error.h"

/* 8-bit RGB, rows top first, pixel (x, y) at rgb[3 * (y * w + x)]. Pixel
 * centres are at integer + 0.5 in the drawing coordinates below. Every
 * drawing call clips to the raster and cannot fail. */
typedef struct fk_image {
    int w, h;
    unsigned char *rgb;
} fk_image;

#define FK_IMAGE_MAX 16384 /* largest side accepted */

/* A w x h raster (1..FK_IMAGE_MAX each) filled with bg. FK_EINVAL, FK_ENOMEM. */
int fk_image_new(fk_image *im, int w, int h, const unsigned char bg[3], fk_error *err);

void fk_image_free(fk_image *im);

/* Pixel (x, y) mixed with c: a = 1 replaces it, a = 0 leaves it. */
void fk_image_blend(fk_image *im, int x, int y, const unsigned char c[3], double a);

/* A filled rectangle of pixels [x0, x1) x [y0, y1). */
void fk_image_fill(fk_image *im, int x0, int y0, int x1, int y1, const unsigned char c[3]);

/* A straight line of the given width, antialiased. */
void fk_image_line(fk_image *im, double x0, double y0, double x1, double y1, double width,
                   const unsigned char c[3]);

/* A ring of radius r about (cx, cy) and the given line width, antialiased. */
void fk_image_ring(fk_image *im, double cx, double cy, double r, double width, const unsigned char c[3]);

/* A filled disc, antialiased. */
void fk_image_disc(fk_image *im, double cx, double cy, double r, const unsigned char c[3]);

/* Text in the 5x7 font, each font pixel drawn as scale x scale pixels, its
 * top-left corner at (x, y); up != 0 turns it a quarter turn anticlockwise
 * (reading upwards, for a y-axis label; (x, y) is then its bottom-left
 * corner). Returns the advance in pixels along the text. */
int fk_image_text(fk_image *im, int x, int y, const char *s, int scale, int up, const unsigned char c[3]);

/* The advance in pixels of s at that scale: (FK_FONT_W + 1) * scale per character. */
int fk_text_width(const char *s, int scale);

#endif
