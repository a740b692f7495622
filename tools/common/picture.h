/* picture.h - pictures drawn with cairo: PNG, SVG or PDF (by the output's name or --format), text in a real font, written to an output. */
#ifndef FK_PICTURE_H
#define FK_PICTURE_H

#include <stdio.h>

#include "error.h"

#ifdef FK_HAVE_CAIRO
#include <cairo.h>
#endif

/* The formats, and their names as --format and a file's extension give them. */
enum { PIC_PNG, PIC_SVG, PIC_PDF };
#define PIC_FORMATS "png, svg or pdf"

/* The font of every text (DejaVu Sans; a viewer without it takes its sans-serif). */
#define PIC_FONT "DejaVu Sans"

/* 1 when this build draws pictures (cairo was found), else 0. */
int pic_available(void);

/* Exits (status 1, one line) when this build has no cairo: "this build draws no pictures (...)",
 * then more (when not NULL: "; without --plot ..."). */
void pic_require(const char *more);

/* The format of a picture: --format's name (NULL when not given), else the
 * extension of output (.png, .svg, .pdf, any case; NULL or "-": stdout),
 * else PNG. A usage error (exit 2) for a --format not known, an extension
 * of another picture format without --format (map.jpg), or a --format that
 * the extension contradicts (--format=svg -o map.png). */
int pic_format_choose(const char *format, const char *output);

/* The format's name ("png", "svg", "pdf"). */
const char *pic_format_name(int format);

/* 1 for a binary format (PNG, PDF: refused on a terminal unless -f), 0 for SVG (text). */
int pic_binary(int format);

typedef struct pic pic;

/* Text alignment about its anchor point. */
enum { PIC_LEFT, PIC_CENTRE, PIC_RIGHT };

/* A text's look: size (the font's em, in the picture's units), alignment,
 * a quarter turn anticlockwise (up: reading upwards), bold, its colour, and
 * an outline of another colour about each glyph (outline 0: none), which
 * keeps light text legible over any background. */
typedef struct pic_style {
    double size;
    int align, up, bold;
    double rgb[3];
    double outline; /* the outline's width, in the picture's units */
    double outline_rgb[3];
} pic_style;

/* A new picture of w x h to be written to f (name in messages): pixels for
 * PNG, points (1/72 inch) for SVG and PDF; title is the SVG's <title> and the
 * PDF's Title (may be NULL). FK_EINVAL for a size cairo refuses, FK_ENOMEM,
 * FK_EUNSUP without cairo. */
int pic_open(pic **p, int format, int w, int h, const char *title, FILE *f, const char *name, fk_error *err);

#ifdef FK_HAVE_CAIRO
/* The cairo context to draw with (0, 0 the top left corner, y down). */
cairo_t *pic_cairo(pic *p);
#endif

/* Text s (UTF-8) in PIC_FONT, its baseline's anchor at (x, y). Drawn as glyphs
 * in PNG, as text with its font embedded in PDF, and as an SVG <text> element
 * in SVG (text that can be searched, selected and edited), drawn above
 * everything else. Can't fail (a failure shows in pic_finish). */
void pic_text(pic *p, double x, double y, const char *s, const pic_style *st);

/* The advance of s along its baseline at that style, and the height above the
 * baseline of the font's capitals (for placing text). Can't fail. */
double pic_text_width(pic *p, const char *s, const pic_style *st);
double pic_cap_height(pic *p, const pic_style *st);

/* Writes the picture to its file: the PNG encoded, the SVG with its text, the
 * PDF finished; every write checked ("NAME: cannot write: REASON", FK_EIO;
 * a drawing error of cairo, FK_EIO naming it). Frees p, also on failure. */
int pic_finish(pic *p, fk_error *err);

/* Frees a picture not finished (after another failure). */
void pic_free(pic *p);

/* "^N" powers in a unit's name (fk_unit_power: "(Mpc/h)^-3") as superscripts
 * ("(Mpc/h)⁻³") into buf. Returns buf. Can't fail. */
const char *pic_superscripts(const char *s, char *buf, size_t size);

#endif
