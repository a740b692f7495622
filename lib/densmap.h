/* densmap.h - projected density maps: particles deposited on a pixel grid, drawn in log scale with halos circled. */
#ifndef FK_DENSMAP_H
#define FK_DENSMAP_H

#include <stdint.h>

#include "catalog.h"
#include "error.h"
#include "image.h"
#include "snap.h"

/* What is seen: a square field of side width about centre, across the two
 * axes other than axis (the line of sight), through a slab of thickness
 * depth along it (the whole box when depth >= box). Rows go down the second
 * in-plane axis from its high end, columns along the first: line of sight
 * x shows (y, z), y shows (x, z), z shows (x, y). In a periodic box every
 * position is taken at its nearest image to the centre. */
typedef struct fk_view {
    int axis;
    double centre[3];
    double width, depth;
    int size; /* pixels per side */
    double box;
    int periodic;
} fk_view;

/* Frames v (its axis and size already set) on snap: centred on the box, or
 * on halo zoom (> 0) of cat (then a width of 6 of its radii, or a tenth of
 * the box, and a slab as deep as wide), or on centre (non-NULL); width and
 * depth as given where not 0, else the box's. caption (cap bytes) says
 * what is seen. FK_EMISSING when zoom names no halo of cat, FK_EINVAL for a
 * field wider than a periodic box. */
int fk_densmap_frame(fk_view *v, const fk_snap *snap, const fk_catalog *cat, long long zoom, const double *centre,
                     double width, double depth, char *caption, size_t cap, fk_error *err);

/* The in-plane axes of line of sight axis: u across, v up. Can't fail. */
void fk_view_axes(int axis, int *u, int *v);

/* Pixel coordinates (x right, y down, pixel centres at integer + 0.5) of
 * the point p; returns 1 when p lies in the slab, 0 when it does not. */
int fk_view_project(const fk_view *v, const double p[3], double *px, double *py);

/* Deposits n particles (pos: x y z each, mass: NULL for unit masses) with
 * cloud-in-cell weights onto grid (size * size doubles, zeroed here): the
 * mass per pixel. A field of the whole periodic box wraps around its edges.
 * FK_EINVAL for a bad view. */
int fk_densmap_deposit(const fk_view *v, const float *pos, const float *mass, uint64_t n, double *grid,
                       fk_error *err);

/* Smooths grid in place with a Gaussian of sigma pixels (0: not at all). FK_ENOMEM. */
int fk_densmap_smooth(double *grid, int size, double sigma, fk_error *err);

/* Colours grid into im (size x size) in log10 of its values: the largest
 * value is the top of the colormap, range_dex decades below it the bottom
 * (empty pixels too). Can't fail. */
void fk_densmap_render(const double *grid, int size, const unsigned char (*cmap)[3], double range_dex, fk_image *im);

/* A label's box: left, top, width, height in pixels. */
typedef struct fk_label_box {
    int x, y, w, h;
} fk_label_box;

/* Where a w x h label of a ring of radius r about (cx, cy) goes in an
 * image of W x H pixels: beside the ring at its upper right, else upper
 * left, lower right, lower left, each moved inside the image when it would
 * cross an edge, the first that overlaps none of the n boxes placed (nor
 * comes within a pixel of one). Returns 1 and sets *box, or 0 when every
 * place overlaps one. Can't fail. */
int fk_densmap_label_place(int W, int H, double cx, double cy, double r, int w, int h, const fk_label_box *placed,
                           int n, fk_label_box *box);

/* Rings the first count halos of cat (as ordered there) whose centres lie in
 * the slab, each at its radius (at least 4 pixels), labelled with its id when
 * label is set (fk_densmap_label_place: inside the picture, never over
 * another label; *unlabelled, when not NULL, counts the rings left without
 * one for want of room). Returns the number drawn. Can't fail. */
int fk_densmap_circle(fk_image *im, const fk_view *v, const fk_catalog *cat, size_t count, int label, int *unlabelled);

/* Draws a scale bar in the lower left corner (a round length near a fifth of
 * the field, labelled with unit, the length unit's name) and the caption
 * text in the upper left. Can't fail. */
void fk_densmap_annotate(fk_image *im, const fk_view *v, const char *caption, const char *unit);

#endif
