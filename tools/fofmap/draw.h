/* draw.h - fofmap's picture: the density map, halos ringed and labelled, the scale bar and the title, drawn with cairo. */
#ifndef FOFMAP_DRAW_H
#define FOFMAP_DRAW_H

#include <stddef.h>

#include "densmap.h"
#include "picture.h"

/* What the picture shows. */
typedef struct map_picture {
    int size;                 /* pixels (PNG) or points (SVG, PDF) a side */
    const unsigned char *rgb; /* the coloured map: size x size RGB, rows top first (fk_densmap_render) */
    const fk_map_ring *rings; /* the halos to ring (fk_densmap_rings), nrings of them */
    size_t nrings;
    int labels;               /* write each ring's id beside it */
    const char *title[2];     /* two lines in the upper left corner (NULL: none) */
    double bar_px;            /* the scale bar's length in pixels, and its label */
    const char *bar_text;
} map_picture;

/* Draws m into p: the map, the rings (a white line over a dark one, visible
 * over bright and dark pixels alike), the labels beside them (never over one
 * another: *unlabelled counts the rings left without one), the scale bar in
 * the lower left corner and the title in the upper left, text in white
 * outlined in black. A picture under 160 pixels a side has no text. Can't
 * fail (a failure shows in pic_finish). */
void map_draw(pic *p, const map_picture *m, int *unlabelled);

#endif
