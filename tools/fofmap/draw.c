/* draw.c - fofmap's picture: the density map, halos ringed and labelled, the scale bar and the title, drawn with cairo. */
#include "draw.h"

#include <math.h>
#include <stdlib.h>

#ifdef FK_HAVE_CAIRO


/* The current path stroked white, over a black stroke of width outer: a line seen on any density. */
static void haloed_stroke(cairo_t *cr, double outer, double inner)
{
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, outer);
    cairo_stroke_preserve(cr);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_set_line_width(cr, inner);
    cairo_stroke(cr);
}
/* The map as a cairo image (RGB24: one 32-bit word a pixel, 0x00RRGGBB), painted at 1:1. */
static void paint_map(cairo_t *cr, const map_picture *m)
{
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, m->size, m->size);
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
        cairo_set_source_surface(cr, img, 0, 0); /* puts the error on cr, for pic_finish */
        cairo_surface_destroy(img);
        return;
    }
    cairo_surface_flush(img);
    unsigned char *data = cairo_image_surface_get_data(img);
    const int stride = cairo_image_surface_get_stride(img);
    for (int y = 0; y < m->size; y++) {
        uint32_t *row = (uint32_t *)(data + (size_t)y * (size_t)stride);
        const unsigned char *c = m->rgb + 3 * (size_t)y * (size_t)m->size;
        for (int x = 0; x < m->size; x++, c += 3) row[x] = (uint32_t)c[0] << 16 | (uint32_t)c[1] << 8 | c[2];
    }
    cairo_surface_mark_dirty(img);
    cairo_set_source_surface(cr, img, 0, 0);
    /* pixels stay pixels when a viewer enlarges the SVG or PDF */
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr);
    cairo_surface_destroy(img);
}

/* The mean brightness (0 to 765) of the map under a box, clipped to the picture. */
static double under(const map_picture *m, const fk_label_box *b)
{
    double sum = 0;
    long n = 0;
    for (int y = b->y > 0 ? b->y : 0; y < b->y + b->h && y < m->size; y++)
        for (int x = b->x > 0 ? b->x : 0; x < b->x + b->w && x < m->size; x++) {
            const unsigned char *c = m->rgb + 3 * ((size_t)y * (size_t)m->size + (size_t)x);
            sum += c[0] + c[1] + c[2];
            n++;
        }
    return n ? sum / (double)n : 0;
}

/* A w x h box in corner c (0 upper left, 1 upper right, 2 lower left, 3 lower right), margin from the edges. */
static fk_label_box corner(int size, int c, double margin, double w, double h)
{
    double x = c & 1 ? size - margin - w : margin, y = c & 2 ? size - margin - h : margin;
    return (fk_label_box){(int)floor(x), (int)floor(y), (int)ceil(w), (int)ceil(h)};
}

/* Of the corners in order (not taken), the one whose box covers the darkest part of the map: the
 * title and the scale bar keep off the halos. */
static int darkest(const map_picture *m, const int order[4], const fk_label_box *taken, double margin, double w,
                   double h)
{
    int best = -1;
    double least = INFINITY;
    for (int i = 0; i < 4; i++) {
        fk_label_box b = corner(m->size, order[i], margin, w, h);
        if (taken && b.x < taken->x + taken->w && taken->x < b.x + b.w && b.y < taken->y + taken->h &&
            taken->y < b.y + b.h)
            continue;
        double d = under(m, &b);
        if (d < least - 1e-9) least = d, best = order[i];
    }
    return best >= 0 ? best : order[0];
}

void map_draw(pic *p, const map_picture *m, int *unlabelled)
{
    cairo_t *cr = pic_cairo(p);
    const double k = fmax(1, m->size / 800.0); /* lines thicken on pictures above 800 pixels */
    const int text = m->size >= 160;
    pic_style st = {.size = fmin(fmax(m->size / 50.0, 9), 40), .rgb = {1, 1, 1}, .outline_rgb = {0, 0, 0}};
    st.outline = st.size / 8;
    paint_map(cr, m);

    for (size_t i = 0; i < m->nrings; i++) {
        const fk_map_ring *r = &m->rings[i];
        cairo_new_sub_path(cr);
        cairo_arc(cr, r->x, r->y, r->r, 0, 2 * M_PI);
        haloed_stroke(cr, 3.0 * k, 1.5 * k);
    }

    /* The title and the scale bar, each in the darkest corner it may take; no label covers them. */
    const double margin = text ? 0.6 * st.size : 8, pad = text ? st.size / 3 : 0;
    const double cap = text ? pic_cap_height(p, &st) : 0;
    const int has_title = text && (m->title[0] || m->title[1]);
    /* the title in a smaller font where it would be wider than the picture */
    pic_style ts = st;
    double tw = 0;
    for (int l = 0; l < 2 && has_title; l++)
        if (m->title[l]) tw = fmax(tw, pic_text_width(p, m->title[l], &st));
    if (has_title && tw > m->size - 2 * margin - 2 * pad) {
        ts.size = fmax(6, st.size * (m->size - 2 * margin - 2 * pad) / tw);
        ts.outline = ts.size / 8;
        tw *= ts.size / st.size;
    }
    const double tcap = has_title ? pic_cap_height(p, &ts) : 0, tline = 1.3 * ts.size;
    const double th = tcap + (m->title[0] && m->title[1] ? tline : 0) + 0.3 * ts.size; /* a descender's room */
    static const int title_order[4] = {0, 1, 2, 3}, bar_order[4] = {2, 3, 0, 1};
    fk_label_box keep[2];
    int nkeep = 0;
    if (has_title)
        keep[nkeep++] = corner(m->size, darkest(m, title_order, NULL, margin, tw + 2 * pad, th + 2 * pad), margin,
                               tw + 2 * pad, th + 2 * pad);
    const double bw = fmax(m->bar_px, text ? pic_text_width(p, m->bar_text, &st) : 0) + 2 * pad;
    const double gap = text ? 0.45 * st.size : 0, bh = cap + gap + 5 * k + 2 * pad;
    const int bc = text ? darkest(m, bar_order, has_title ? &keep[0] : NULL, margin, bw, bh) : 2;
    keep[nkeep++] = corner(m->size, bc, margin, bw, bh);
    const fk_label_box tb = keep[0], bb = keep[nkeep - 1];

    int skipped = 0;
    if (m->labels && text) {
        fk_label_box *placed = malloc((m->nrings + 2) * sizeof *placed);
        int nplaced = 0;
        for (int j = 0; placed && j < nkeep; j++) placed[nplaced++] = keep[j];
        for (size_t i = 0; i < m->nrings; i++) {
            const fk_map_ring *r = &m->rings[i];
            char s[32];
            snprintf(s, sizeof s, "%llu", (unsigned long long)r->id);
            /* the box of the label with its outline */
            int w = (int)ceil(pic_text_width(p, s, &st) + 2 * st.outline), h = (int)ceil(cap + 2 * st.outline);
            fk_label_box b;
            if (placed && fk_densmap_label_place(m->size, m->size, r->x, r->y, r->r, w, h, placed, nplaced, &b)) {
                placed[nplaced++] = b;
                pic_text(p, b.x + st.outline, b.y + st.outline + cap, s, &st);
            } else {
                skipped++;
            }
        }
        free(placed);
    } else if (m->labels) {
        skipped = (int)m->nrings;
    }
    if (unlabelled) *unlabelled = skipped;

    /* the scale bar: a white bar over a dark one, its length above it */
    const double x0 = bb.x + pad, y0 = bb.y + bb.h - pad - 2.5 * k;
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
    cairo_move_to(cr, x0, y0);
    cairo_line_to(cr, x0 + m->bar_px, y0);
    haloed_stroke(cr, 5.0 * k, 3.0 * k);
    if (!text) return;
    pic_text(p, x0, bb.y + pad + cap, m->bar_text, &st);
    if (!has_title) return;
    /* the title over a darkened band, legible over bright pixels too */
    cairo_rectangle(cr, tb.x, tb.y, tb.w, tb.h);
    cairo_set_source_rgba(cr, 0, 0, 0, 0.45);
    cairo_fill(cr);
    for (int l = 0, at = 0; l < 2; l++)
        if (m->title[l]) pic_text(p, tb.x + pad, tb.y + pad + tcap + tline * at++, m->title[l], &ts);
}

#else

void map_draw(pic *p, const map_picture *m, int *unlabelled)
{
    (void)p, (void)m;
    if (unlabelled) *unlabelled = 0;
}

#endif
