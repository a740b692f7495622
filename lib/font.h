/* font.h - a 5x7 bitmap font of printable ASCII for axis labels and captions. */
#ifndef FK_FONT_INCLUDED
#define FK_FONT_INCLUDED

#define FK_FONT_W 5 /* glyph width in pixels; characters advance by FK_FONT_W + 1 */
#define FK_FONT_H 7

/* The 7 rows of character ch, top first, bit 4 the leftmost pixel; '?' for a
 * character the font lacks. Never NULL. */
const unsigned char *fk_font_glyph(int ch);

#endif
