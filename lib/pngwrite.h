/* pngwrite.h - writes an fk_image as an 8-bit RGB PNG through libpng (when the build has it). */
#ifndef FK_PNGWRITE_H
#define FK_PNGWRITE_H

#include <stdio.h>

#include "error.h"
#include "image.h"

/* 1 when this build can write PNG (libpng was found), else 0. */
int fk_png_available(void);

/* Writes im to f (not closed; name is used in messages). FK_EIO when
 * writing fails, FK_EUNSUP in a build without libpng. */
int fk_png_write(FILE *f, const fk_image *im, const char *name, fk_error *err);

#endif
