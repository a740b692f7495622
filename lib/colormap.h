/* colormap.h - perceptual colormaps for pictures: a name to a 256-entry RGB table. */
#ifndef FK_COLORMAP_H
#define FK_COLORMAP_H

/* The table named ("viridis" or "magma"), or NULL for an unknown name. */
const unsigned char (*fk_colormap(const char *name))[3];

/* The colour of t in [0, 1] (clamped; NaN gives the low end) from map. Cannot fail. */
void fk_colormap_rgb(const unsigned char (*map)[3], double t, unsigned char rgb[3]);

#endif
