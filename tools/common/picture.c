/* picture.c - pictures drawn with cairo: PNG, SVG or PDF (by the output's name or --format), text in a real font, written to an output. */
#include "picture.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fileio.h"
#include "prog.h"

static const char *const names[] = {"png", "svg", "pdf"};

const char *pic_format_name(int format)
{
    return format >= 0 && format < 3 ? names[format] : "?";
}

int pic_binary(int format)
{
    return format != PIC_SVG;
}

static int format_named(const char *s)
{
    for (int k = 0; k < 3; k++)
        if (!strcasecmp(s, names[k])) return k;
    return -1;
}

int pic_format_choose(const char *format, const char *output)
{
    int given = -1, by_name = -1;
    if (format && (given = format_named(format)) < 0)
        prog_usage("option --format needs %s, not '%s'", PIC_FORMATS, format);
    const char *base = output ? strrchr(output, '/') : NULL;
    base = base ? base + 1 : output;
    const char *dot = base && strcmp(output, "-") ? strrchr(base, '.') : NULL;
    if (dot && dot != base) {
        by_name = format_named(dot + 1);
        /* a name that says another picture format is a mistake to point out, not a PNG to write under it */
        static const char *const others[] = {"jpg", "jpeg", "gif", "tif", "tiff", "eps", "ps", "webp", "bmp"};
        for (size_t k = 0; by_name < 0 && given < 0 && k < sizeof others / sizeof *others; k++)
            if (!strcasecmp(dot + 1, others[k]))
                prog_usage("%s: fofkit draws %s pictures, not %s: name it .png, .svg or .pdf", output, PIC_FORMATS,
                           dot + 1);
    }
    if (given >= 0 && by_name >= 0 && given != by_name)
        prog_usage("option --format=%s, but the output %s is named for %s", names[given], output, names[by_name]);
    return given >= 0 ? given : by_name >= 0 ? by_name : PIC_PNG;
}

const char *pic_superscripts(const char *s, char *buf, size_t size)
{
    static const char *const digit[10] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    size_t o = 0;
    int power = 0; /* inside "^-12": after the '^', while a sign (first) or digits follow */
    buf[0] = 0;
    for (const char *p = s; *p; p++) {
        char one[2] = {*p, 0};
        const char *put = one;
        if (*p == '^' && (p[1] == '-' || (p[1] >= '0' && p[1] <= '9'))) {
            power = 1;
            continue;
        }
        if (power && *p == '-' && p[-1] == '^')
            put = "⁻";
        else if (power && *p >= '0' && *p <= '9')
            put = digit[*p - '0'];
        else
            power = 0;
        size_t n = strlen(put);
        if (o + n + 1 > size) break;
        memcpy(buf + o, put, n + 1);
        o += n;
    }
    return buf;
}

#ifdef FK_HAVE_CAIRO
#include <cairo-pdf.h>
#include <cairo-svg.h>
#ifdef FK_HAVE_FONTCONFIG
#include <fontconfig/fontconfig.h>
#endif

int pic_available(void)
{
    return 1;
}

void pic_require(const char *more)
{
    (void)more;
}

/* Where cairo's bytes go: the file (PNG, PDF), or a buffer that pic_finish
 * writes with the SVG's text put in (SVG); the errno of a failed write. */
typedef struct sink {
    FILE *f;
    char *buf;
    size_t len, cap;
    int errnum;
} sink;

/* One SVG text element, kept until the picture is written. */
typedef struct svg_text {
    double x, y;
    char *s;
    pic_style st;
} svg_text;

struct pic {
    int format, w, h;
    const char *name;
    cairo_surface_t *surface;
    cairo_t *cr;
    sink out;
    svg_text *texts;
    size_t ntexts, captexts;
    char *title;
    int nomem; /* a text could not be kept */
};

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int n)
{
    sink *k = closure;
    if (fwrite(data, 1, n, k->f) != n) {
        k->errnum = errno ? errno : EIO;
        return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
}

static cairo_status_t to_buffer(void *closure, const unsigned char *data, unsigned int n)
{
    sink *k = closure;
    if (k->len + n > k->cap) {
        size_t cap = k->cap ? k->cap : 1 << 16;
        while (cap < k->len + n) cap *= 2;
        char *b = realloc(k->buf, cap);
        if (!b) return CAIRO_STATUS_NO_MEMORY;
        k->buf = b, k->cap = cap;
    }
    memcpy(k->buf + k->len, data, n);
    k->len += n;
    return CAIRO_STATUS_SUCCESS;
}

int pic_open(pic **pp, int format, int w, int h, const char *title, FILE *f, const char *name, fk_error *err)
{
    *pp = NULL;
    pic *p = calloc(1, sizeof *p);
    if (!p) return fk_fail(err, FK_ENOMEM, "%s: no memory for the picture", name);
    p->format = format, p->w = w, p->h = h, p->name = name, p->out.f = f;
    if (title && !(p->title = strdup(title))) {
        free(p);
        return fk_fail(err, FK_ENOMEM, "%s: no memory for the picture", name);
    }
    if (format == PIC_SVG) {
        p->surface = cairo_svg_surface_create_for_stream(to_buffer, &p->out, w, h);
    } else if (format == PIC_PDF) {
        p->surface = cairo_pdf_surface_create_for_stream(to_file, &p->out, w, h);
        if (cairo_surface_status(p->surface) == CAIRO_STATUS_SUCCESS) {
            cairo_pdf_surface_set_metadata(p->surface, CAIRO_PDF_METADATA_CREATOR, "fofkit");
            if (title) cairo_pdf_surface_set_metadata(p->surface, CAIRO_PDF_METADATA_TITLE, title);
        }
    } else {
        /* RGB, no alpha: a PNG of 8-bit RGB, as a picture of a white or black ground needs */
        p->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    }
    cairo_status_t s = cairo_surface_status(p->surface);
    if (s == CAIRO_STATUS_SUCCESS) {
        p->cr = cairo_create(p->surface);
        s = cairo_status(p->cr);
    }
    if (s != CAIRO_STATUS_SUCCESS) {
        pic_free(p);
        return fk_fail(err, s == CAIRO_STATUS_NO_MEMORY ? FK_ENOMEM : FK_EINVAL, "%s: a %dx%d %s picture: %s", name, w,
                       h, names[format], cairo_status_to_string(s));
    }
    *pp = p;
    return FK_OK;
}

cairo_t *pic_cairo(pic *p)
{
    return p->cr;
}

static void set_font(pic *p, const pic_style *st)
{
    cairo_select_font_face(p->cr, PIC_FONT, CAIRO_FONT_SLANT_NORMAL,
                           st->bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(p->cr, st->size);
}

double pic_text_width(pic *p, const char *s, const pic_style *st)
{
    cairo_text_extents_t e;
    cairo_save(p->cr);
    set_font(p, st);
    cairo_text_extents(p->cr, s, &e);
    cairo_restore(p->cr);
    return e.x_advance;
}

double pic_cap_height(pic *p, const pic_style *st)
{
    cairo_text_extents_t e;
    cairo_save(p->cr);
    set_font(p, st);
    cairo_text_extents(p->cr, "H", &e);
    cairo_restore(p->cr);
    return -e.y_bearing;
}

void pic_text(pic *p, double x, double y, const char *s, const pic_style *st)
{
    if (!*s) return;
    if (p->format == PIC_SVG) {
        if (p->ntexts == p->captexts) {
            size_t cap = p->captexts ? 2 * p->captexts : 64;
            svg_text *t = realloc(p->texts, cap * sizeof *t);
            if (!t) {
                p->nomem = 1;
                return;
            }
            p->texts = t, p->captexts = cap;
        }
        svg_text *t = &p->texts[p->ntexts];
        if (!(t->s = strdup(s))) {
            p->nomem = 1;
            return;
        }
        t->x = x, t->y = y, t->st = *st;
        p->ntexts++;
        return;
    }
    cairo_t *cr = p->cr;
    cairo_save(cr);
    set_font(p, st);
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_translate(cr, x, y);
    if (st->up) cairo_rotate(cr, -M_PI / 2);
    double dx = st->align == PIC_CENTRE ? -e.x_advance / 2 : st->align == PIC_RIGHT ? -e.x_advance : 0;
    cairo_move_to(cr, dx, 0);
    if (st->outline > 0) {
        /* the outline under the glyphs: stroked, then the glyphs filled over it */
        cairo_text_path(cr, s);
        cairo_set_source_rgb(cr, st->outline_rgb[0], st->outline_rgb[1], st->outline_rgb[2]);
        cairo_set_line_width(cr, 2 * st->outline);
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
        cairo_stroke(cr);
        cairo_move_to(cr, dx, 0);
    }
    cairo_set_source_rgb(cr, st->rgb[0], st->rgb[1], st->rgb[2]);
    cairo_show_text(cr, s);
    cairo_restore(cr);
}

/* s with XML's special characters escaped, to f. */
static void xml_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: putc(*s, f);
        }
    }
}

static void svg_colour(FILE *f, const char *attr, const double rgb[3])
{
    int c[3];
    for (int k = 0; k < 3; k++) c[k] = rgb[k] <= 0 ? 0 : rgb[k] >= 1 ? 255 : (int)(rgb[k] * 255 + 0.5);
    fprintf(f, " %s=\"#%02x%02x%02x\"", attr, c[0], c[1], c[2]);
}

/* The SVG cairo wrote, its title after the opening <svg> tag and its text before the closing one. */
static void svg_write(pic *p)
{
    FILE *f = p->out.f;
    const char *b = p->out.buf, *end = b + p->out.len;
    const char *open = p->out.len ? strstr(b, "<svg") : NULL, *close = NULL;
    const char *after = open ? strchr(open, '>') : NULL;
    for (const char *q = b; q && (q = strstr(q, "</svg>")) != NULL; q++) close = q;
    if (!after || !close) { /* not the SVG cairo writes: as it is */
        fwrite(b, 1, p->out.len, f);
        return;
    }
    after++;
    fwrite(b, 1, (size_t)(after - b), f);
    if (p->title) {
        fputs("\n<title>", f);
        xml_escaped(f, p->title);
        fputs("</title>", f);
    }
    fwrite(after, 1, (size_t)(close - after), f);
    fprintf(f, "<g font-family=\"%s, sans-serif\">\n", PIC_FONT);
    for (size_t i = 0; i < p->ntexts; i++) {
        const svg_text *t = &p->texts[i];
        const pic_style *st = &t->st;
        static const char *const anchor[] = {"start", "middle", "end"};
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.2f\"", t->x, t->y, st->size);
        if (st->align != PIC_LEFT) fprintf(f, " text-anchor=\"%s\"", anchor[st->align]);
        if (st->bold) fputs(" font-weight=\"bold\"", f);
        if (st->up) fprintf(f, " transform=\"rotate(-90 %.2f %.2f)\"", t->x, t->y);
        svg_colour(f, "fill", st->rgb);
        if (st->outline > 0) {
            svg_colour(f, "stroke", st->outline_rgb);
            fprintf(f, " stroke-width=\"%.2f\" stroke-linejoin=\"round\" paint-order=\"stroke\"", 2 * st->outline);
        }
        fputs(">", f);
        xml_escaped(f, t->s);
        fputs("</text>\n", f);
    }
    fputs("</g>\n", f);
    fwrite(close, 1, (size_t)(end - close), f);
}

int pic_finish(pic *p, fk_error *err)
{
    const char *name = p->name;
    cairo_status_t s = cairo_status(p->cr);
    if (s == CAIRO_STATUS_SUCCESS && p->nomem) s = CAIRO_STATUS_NO_MEMORY;
    if (s == CAIRO_STATUS_SUCCESS && p->format == PIC_PNG)
        s = cairo_surface_write_to_png_stream(p->surface, to_file, &p->out);
    cairo_destroy(p->cr);
    p->cr = NULL;
    cairo_surface_finish(p->surface);
    if (s == CAIRO_STATUS_SUCCESS) s = cairo_surface_status(p->surface);
    if (s == CAIRO_STATUS_SUCCESS && p->format == PIC_SVG) svg_write(p);
    int errnum = p->out.errnum;
    FILE *f = p->out.f;
    pic_free(p);
    if (errnum) return fk_write_failed(err, name, f, errnum);
    if (s == CAIRO_STATUS_NO_MEMORY) return fk_fail(err, FK_ENOMEM, "%s: no memory to draw the picture", name);
    if (s != CAIRO_STATUS_SUCCESS) return fk_fail(err, FK_EIO, "%s: cairo cannot draw the picture: %s", name,
                                                  cairo_status_to_string(s));
    if (fflush(f) || ferror(f)) return fk_write_failed(err, name, f, errno);
    return FK_OK;
}

void pic_free(pic *p)
{
    if (!p) return;
    if (p->cr) cairo_destroy(p->cr);
    if (p->surface) cairo_surface_destroy(p->surface);
    for (size_t i = 0; i < p->ntexts; i++) free(p->texts[i].s);
    free(p->texts);
    free(p->out.buf);
    free(p->title);
    free(p);
    /* A program draws one picture: cairo's font caches and fontconfig's configuration are let go with
     * it (in that order, as cairo's own tests do), so that a leak checker sees no memory left at exit. */
    cairo_debug_reset_static_data();
#ifdef FK_HAVE_FONTCONFIG
    FcFini();
#endif
}

#else /* no cairo: every picture refused */

#define NO_CAIRO "this build draws no pictures (cairo was not found: install libcairo2-dev, then make config)"

int pic_available(void)
{
    return 0;
}

void pic_require(const char *more)
{
    prog_die(EXIT_DATA, "%s%s", NO_CAIRO, more ? more : "");
}

int pic_open(pic **p, int format, int w, int h, const char *title, FILE *f, const char *name, fk_error *err)
{
    (void)format, (void)w, (void)h, (void)title, (void)f;
    *p = NULL;
    return fk_fail(err, FK_EUNSUP, "%s: %s", name, NO_CAIRO);
}

void pic_text(pic *p, double x, double y, const char *s, const pic_style *st)
{
    (void)p, (void)x, (void)y, (void)s, (void)st;
}

double pic_text_width(pic *p, const char *s, const pic_style *st)
{
    (void)p, (void)s, (void)st;
    return 0;
}

double pic_cap_height(pic *p, const pic_style *st)
{
    (void)p, (void)st;
    return 0;
}

int pic_finish(pic *p, fk_error *err)
{
    (void)p;
    return fk_fail(err, FK_EUNSUP, "%s", NO_CAIRO);
}

void pic_free(pic *p)
{
    (void)p;
}

#endif
