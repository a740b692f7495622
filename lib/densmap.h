/* densmap.h - projected density maps: particles deposited on a pixel grid, coloured in log scale; where halos, labels, the scale bar go; the slab said in words. */
#ifndef FK_DENSMAP_H
#define FK_DENSMAP_H

#include <stdint.h>

#include "catalog.h"
#include "error.h"
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

/* Colours grid into rgb (size x size pixels of 3 bytes, rows top first) in
 * log10 of its values: the largest value is the top of the colormap,
 * range_dex decades below it the bottom (empty pixels too). Can't fail. */
void fk_densmap_render(const double *grid, int size, const unsigned char (*cmap)[3], double range_dex,
                       unsigned char *rgb);

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

/* A ring to draw: a halo's centre and radius in pixels, and its id. */
typedef struct fk_map_ring {
    double x, y, r;
    uint64_t id;
} fk_map_ring;

/* The rings of the first count halos of cat (as ordered there) whose centres
 * lie in the slab and whose rings reach into the picture, each at its radius
 * and at least min_r pixels, into ring (room for count). Returns how many. Can't fail. */
size_t fk_densmap_rings(const fk_view *v, const fk_catalog *cat, size_t count, double min_r, fk_map_ring *ring);

/* The length unit a picture speaks in: stream lengths times factor are
 * lengths in the unit named name ("" when the stream has no units). With
 * given (--length-name): factor 1 and that name. With the stream's units:
 * kpc, or Mpc for a field of 5 Mpc or more, each "/h" when the units are per
 * h (tipsy2bin --kpc-unit, a Gadget snapshot's kpc/h). Can't fail. */
typedef struct fk_map_unit {
    double factor;
    char name[40];
} fk_map_unit;
void fk_densmap_unit(const fk_snap *s, double width, const char *given, fk_map_unit *u);

/* The scale bar: the largest of 1, 2 or 5 times a power of ten in the unit
 * not above a fifth of the field; its length in that unit. Can't fail. */
double fk_densmap_bar(const fk_view *v, const fk_map_unit *u);

/* The slab in words into buf: "slab at z = 12.5 Mpc/h, 2.5 Mpc/h thick" (its
 * centre along the line of sight and its thickness), "(the whole box)" added
 * when it is; without units "slab at z = 0, 0.2 thick (box side 1)". Returns
 * buf. Can't fail. */
const char *fk_densmap_slab_text(const fk_view *v, const fk_map_unit *u, char *buf, size_t size);

/* Converts the halos' centres and radii of cat into the stream's length unit
 * (fofmap draws them over its particles): by the catalogue's own factor
 * (a text catalogue's "one stream unit is" line, HCOL's length_unit), else
 * by its columns' unit (a CSV's "x[kpc]": kpc, Mpc, each maybe per h,
 * against the stream's units; "length" or none: the stream's). FK_EINVAL
 * names a unit that cannot be converted (name: the catalogue in messages). */
int fk_densmap_cat_units(fk_catalog *cat, const fk_snap *s, const char *name, fk_error *err);

#endif
