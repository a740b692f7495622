/* test_pictures.c - tests of the picture library: mass function bins, catalogue reading, map deposits, drawing, PNG. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "check.h"
#include "colormap.h"
#include "densmap.h"
#include "font.h"
#include "image.h"
#include "massfunc_plot.h"
#include "pngwrite.h"

#ifdef FK_HAVE_PNG
#include <png.h>
#endif

static void test_massfunc(void)
{
    /* 10^-3.9 .. counted by fk_massfunc_count in bins of 0.5 dex over [-4, -2): 3 in the first, 0, 2, 1 in the
     * last; the points divide by the volume. */
    double m[] = {pow(10, -3.9), pow(10, -3.6), pow(10, -3.51), pow(10, -2.9), pow(10, -2.6), pow(10, -2.2),
                  0, -1, pow(10, -1.5), pow(10, -4.5)};
    fk_mf_bin b[4];
    fk_massfunc mf;
    fk_error err = {0};
    CHECK(fk_massfunc_count(m, 10, 1e-4, 1e-2, 2, &mf, &err) == FK_OK && mf.nbins == 4);
    CHECK(fk_massfunc_points(&mf, 8.0, b, &err) == FK_OK);
    CHECK(b[0].count == 3 && b[1].count == 0 && b[2].count == 2 && b[3].count == 1);
    CHECK(fabs(b[0].lo + 4) < 1e-12 && fabs(b[3].hi + 2) < 1e-12);
    /* dn/dlog10 M = count / (V dlog M), error sqrt(count) / (V dlog M) */
    CHECK(fabs(b[0].dn - 3 / (8.0 * 0.5)) < 1e-12);
    CHECK(fabs(b[0].err - sqrt(3.0) / (8.0 * 0.5)) < 1e-12);
    CHECK(fabs(b[2].err - sqrt(2.0) / (8.0 * 0.5)) < 1e-12);
    CHECK(b[1].dn == 0 && b[1].err == 0);
    CHECK(fk_massfunc_points(&mf, 0, b, &err) == FK_EINVAL);
    fk_massfunc_free(&mf);
    /* A mass on an edge goes to the bin above it; one at the top edge to the last bin. */
    double e[] = {pow(10, -3.0), 1e-2};
    CHECK(fk_massfunc_count(e, 2, 1e-4, 1e-2, 2, &mf, &err) == FK_OK && mf.nbins == 4);
    CHECK(fk_massfunc_points(&mf, 1, b, &err) == FK_OK);
    CHECK(b[2].count == 1 && b[3].count == 1 && b[1].count == 0);
    fk_massfunc_free(&mf);
}

static int read_cat(const char *text, fk_catalog *cat, fk_error *err)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    int st = fk_catalog_read(f, "cat", cat, err);
    fclose(f);
    return st;
}

static void test_catalog(void)
{
    fk_catalog cat;
    fk_error err = {0};
    const char *text = "# halostats\n# box 2 origin -1 periodic 1\n# level host id n mass x y z rmax xc yc zc rc_max\n"
                       "0 0 1 100 1.5 0.1 0.2 0.3 0.4 0.11 0.21 0.31 0.41\n"
                       "0 0 2 300 4.5 -0.1 -0.2 -0.3 0.5 -0.11 -0.21 -0.31 0.51\n"
                       "1 1 1 50 0.7 0 0 0 0.1 0 0 0 0.1\n";
    CHECK(read_cat(text, &cat, &err) == FK_OK);
    CHECK(cat.n == 2 && cat.has_box && cat.box == 2 && cat.origin == -1 && cat.periodic == 1);
    CHECK(cat.h[0].id == 1 && cat.h[0].n == 100 && cat.h[0].mass == 1.5);
    /* the centre and radius prefer xc yc zc and rc_max */
    CHECK(cat.h[0].x[0] == 0.11 && cat.h[0].x[2] == 0.31 && cat.h[0].r == 0.41);
    fk_catalog_sort_mass(&cat);
    CHECK(cat.h[0].id == 2 && cat.h[1].id == 1);
    CHECK(fk_catalog_find(&cat, 1) == &cat.h[1] && fk_catalog_find(&cat, 3) == NULL);
    fk_catalog_free(&cat);

    /* CSV; no mass column: n stands for it; no rc_max: rmax */
    CHECK(read_cat("id,n,x,y,z,rmax\n7,40,1,2,3,0.5\n", &cat, &err) == FK_OK);
    CHECK(cat.n == 1 && !cat.has_box && cat.h[0].id == 7 && cat.h[0].mass == 40 && cat.h[0].x[1] == 2 &&
          cat.h[0].r == 0.5);
    fk_catalog_free(&cat);

    fk_error_clear(&err);
    CHECK(read_cat("# id n x y z\n1 2 3 4\n", &cat, &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "cat: line 2: 4 columns, the header names 5"), "%s", err.msg);
    fk_error_clear(&err);
    CHECK(read_cat("# id n x y z\n1 2 3 4 x5\n", &cat, &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "cat: line 2: z 'x5' is not a number"), "%s", err.msg);
    /* nan is a number (halostats writes it for radii never reached), but not where a halo is drawn */
    fk_error_clear(&err);
    CHECK(read_cat("# id n x y z\n1 2 3 4 nan\n", &cat, &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "cat: row 1: z is not a finite number"), "%s", err.msg);
    fk_error_clear(&err);
    CHECK(read_cat("# id x y z\n1 2 3 4\n", &cat, &err) == FK_EMISSING);
    fk_error_clear(&err);
    CHECK(read_cat("", &cat, &err) == FK_EFORMAT);
    /* a header and no rows: a catalogue of no halos; a bare comment is not a catalogue */
    CHECK(read_cat("# box 1 origin 0 periodic 1\n# id n mass x y z\n", &cat, &err) == FK_OK);
    CHECK(cat.n == 0 && cat.has_box);
    fk_catalog_free(&cat);
    fk_error_clear(&err);
    CHECK(read_cat("# hello\n", &cat, &err) == FK_EMISSING);
    fk_error_clear(&err);
    CHECK(read_cat("\n\n", &cat, &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "cat: no header naming the columns (not a catalogue?)"), "%s", err.msg);

    /* the stream's HCOL and HALO */
    const char *hcol = "columns 6\ncolumn_1 level 1 l\ncolumn_2 id 1 i\ncolumn_3 mass mass m\n"
                       "column_4 x length x\ncolumn_5 y length y\ncolumn_6 z length z\n";
    double rows[] = {0, 1, 2.5, 0.1, 0.2, 0.3, 0, 2, 1.5, 0.4, 0.5, 0.6};
    fk_error_clear(&err);
    memset(&cat, 0, sizeof cat);
    CHECK(fk_catalog_from_chunks(hcol, rows, 2, 6, "s", &cat, &err) == FK_OK);
    CHECK(cat.n == 2 && cat.h[1].id == 2 && cat.h[1].mass == 1.5 && cat.h[1].x[2] == 0.6 && cat.h[1].r == 0);
    fk_catalog_free(&cat);
}

static void test_densmap(void)
{
    fk_error err = {0};
    fk_view v = {.axis = 2, .centre = {0, 0, 0}, .width = 1, .depth = 1, .size = 10, .box = 1, .periodic = 1};
    /* Three particles at pixel centres: (x, y) = (-0.45, 0.45) is pixel (0, 0) (top left); the
     * third sits on the right edge and, the whole box being shown, wraps half into column 0. */
    float pos[] = {-0.45f, 0.45f, 0.0f, 0.05f, -0.05f, 0.3f, 0.5f - 1e-7f, 0.05f, 0.0f};
    float mass[] = {2, 3, 4};
    double grid[100];
    CHECK(fk_densmap_deposit(&v, pos, mass, 3, grid, &err) == FK_OK);
    double sum = 0;
    for (int i = 0; i < 100; i++) sum += grid[i];
    CHECK(fabs(sum - 9) < 1e-9);          /* the whole periodic box keeps all the mass */
    CHECK(fabs(grid[0] - 2) < 1e-6);        /* row 0, column 0 */
    CHECK(fabs(grid[5 * 10 + 5] - 3) < 1e-6); /* (0.05, -0.05): column 5, row 5 */
    CHECK(fabs(grid[4 * 10 + 9] + grid[4 * 10 + 0] - 4) < 1e-6 && grid[4 * 10 + 0] > 1.9);
    /* A slab of thickness 0.2 about z = 0 leaves out the particle at z = 0.3. */
    v.depth = 0.2;
    CHECK(fk_densmap_deposit(&v, pos, mass, 3, grid, &err) == FK_OK);
    CHECK(grid[5 * 10 + 5] == 0 && fabs(grid[0] - 2) < 1e-6);
    /* A zoom does not wrap: half the edge particle falls outside. */
    v.depth = 1;
    v.width = 0.5;
    v.centre[0] = 0.25;
    CHECK(fk_densmap_deposit(&v, pos, mass, 3, grid, &err) == FK_OK);
    sum = 0;
    for (int i = 0; i < 100; i++) sum += grid[i];
    CHECK(fabs(sum - 3 - 2) < 1e-5); /* the one at x = 0.05 whole, the edge one half */
    /* projection: periodic nearest image */
    double px, py, p[3] = {-0.45, 0, 0};
    v.width = 1;
    v.centre[0] = 0.45;
    CHECK(fk_view_project(&v, p, &px, &py) == 1);
    CHECK(fabs(px - 6) < 1e-9 && fabs(py - 5) < 1e-9); /* -0.45 is 0.1 right of 0.45 */
    v.axis = 0;
    int a, b;
    fk_view_axes(0, &a, &b);
    CHECK(a == 1 && b == 2);
    fk_view_axes(1, &a, &b);
    CHECK(a == 0 && b == 2);
    v.width = 0;
    CHECK(fk_densmap_deposit(&v, pos, mass, 3, grid, &err) == FK_EINVAL);

    /* smoothing keeps the mass of a point more than the kernel's reach (3 sigma) from the edges */
    double g[1600] = {0};
    g[20 * 40 + 20] = 5;
    CHECK(fk_densmap_smooth(g, 40, 1.5, &err) == FK_OK);
    sum = 0;
    for (int i = 0; i < 1600; i++) sum += g[i];
    CHECK(fabs(sum - 5) < 1e-12 && g[20 * 40 + 20] < 5 && g[20 * 40 + 21] > 0);

    /* rendering: the densest pixel at the top of the map, empty ones at the bottom */
    const unsigned char(*cm)[3] = fk_colormap("magma");
    CHECK(cm != NULL && fk_colormap("jet") == NULL);
    fk_image im;
    static const unsigned char black[3] = {0, 0, 0};
    CHECK(fk_image_new(&im, 40, 40, black, &err) == FK_OK);
    fk_densmap_render(g, 40, cm, 3, &im);
    CHECK(!memcmp(im.rgb + 3 * (20 * 40 + 20), cm[255], 3));
    fk_densmap_render(g, 40, cm, 3, &im);
    CHECK(!memcmp(im.rgb, cm[0], 3));
    fk_image_free(&im);
}

/* Labels: beside their rings, inside the picture at its edges, never over one another. */
static void test_labels(void)
{
    fk_label_box placed[4], b;
    /* in the open: the upper right of the ring */
    CHECK(fk_densmap_label_place(200, 200, 100, 100, 10, 20, 15, placed, 0, &b) == 1);
    CHECK(b.x == 109 && b.y == 77 && b.w == 20 && b.h == 15);
    placed[0] = b;
    /* the same place taken: the upper left instead */
    CHECK(fk_densmap_label_place(200, 200, 100, 100, 10, 20, 15, placed, 1, &b) == 1);
    CHECK(b.x + b.w < 100 && b.y == 77);
    placed[1] = b;
    /* a halo at the right edge and at the top: moved inside, not dropped */
    CHECK(fk_densmap_label_place(200, 200, 199, 2, 10, 20, 15, placed, 0, &b) == 1);
    CHECK(b.x >= 1 && b.x + b.w <= 199 && b.y >= 1 && b.y + b.h <= 199);
    /* a halo at the bottom left corner */
    CHECK(fk_densmap_label_place(200, 200, 0, 199, 10, 20, 15, placed, 0, &b) == 1);
    CHECK(b.x >= 1 && b.y + b.h <= 199);
    /* a second ring next to the first: its label clears both placed ones */
    CHECK(fk_densmap_label_place(200, 200, 104, 100, 10, 20, 15, placed, 2, &b) == 1);
    for (int j = 0; j < 2; j++)
        CHECK(b.x > placed[j].x + placed[j].w || placed[j].x > b.x + b.w || b.y > placed[j].y + placed[j].h ||
              placed[j].y > b.y + b.h);
    /* no room at all: no label */
    placed[2] = (fk_label_box){0, 0, 200, 200};
    CHECK(fk_densmap_label_place(200, 200, 50, 50, 10, 20, 15, placed, 3, &b) == 0);
}

static void test_drawing(void)
{
    fk_error err = {0};
    static const unsigned char black[3] = {0, 0, 0}, white[3] = {255, 255, 255};
    fk_image im;
    CHECK(fk_image_new(&im, 0, 5, black, &err) == FK_EINVAL);
    CHECK(fk_image_new(&im, 40, 40, black, &err) == FK_OK);
    fk_image_ring(&im, 20, 20, 10, 2, white);
    CHECK(im.rgb[3 * (20 * 40 + 30)] >= 250); /* on the ring at (30, 20), 0.51 from its middle line */
    CHECK(im.rgb[3 * (20 * 40 + 20)] == 0);   /* not at its centre */
    /* text: '1' has its stem in the middle column; every printable character has a glyph */
    CHECK(fk_text_width("10", 2) == 24);
    fk_image_fill(&im, 0, 0, 40, 40, black);
    CHECK(fk_image_text(&im, 0, 0, "1", 1, 0, white) == 6);
    CHECK(im.rgb[3 * (3 * 40 + 2)] == 255 && im.rgb[3 * (3 * 40 + 0)] == 0);
    for (int ch = 33; ch < 127; ch++) {
        const unsigned char *g = fk_font_glyph(ch);
        int on = 0;
        for (int r = 0; r < FK_FONT_H; r++) on |= g[r];
        CHECK_MSG(on, "no glyph for '%c'", ch);
    }
    /* drawing off the raster is clipped, not a crash */
    fk_image_line(&im, -100, -100, 1000, 1000, 3, white);
    fk_image_text(&im, 35, 35, "clipped", 3, 1, white);
    CHECK(im.rgb[3 * (39 * 40 + 39)] == 255);

    /* a mass function plot: blue points on white */
    fk_mf_bin b[2] = {{-3, -2, 4, 4, 2}, {-2, -1, 1, 1, 1}};
    fk_image_free(&im);
    CHECK(fk_image_new(&im, 300, 200, white, &err) == FK_OK);
    CHECK(fk_massfunc_plot(b, 2, "mass", "length", "t", &im, &err) == FK_OK);
    int blue = 0;
    for (int i = 0; i < 300 * 200; i++) blue += im.rgb[3 * i + 2] > 150 && im.rgb[3 * i] < 80;
    CHECK(blue > 50);
    fk_mf_bin empty[1] = {{-3, -2, 0, 0, 0}};
    CHECK(fk_massfunc_plot(empty, 1, "m", "l", "", &im, &err) == FK_EINVAL);

#ifdef FK_HAVE_PNG
    /* PNG round trip through libpng's reader */
    CHECK(fk_png_available());
    FILE *f = tmpfile();
    CHECK(fk_png_write(f, &im, "tmp", &err) == FK_OK);
    rewind(f);
    png_image r;
    memset(&r, 0, sizeof r);
    r.version = PNG_IMAGE_VERSION;
    CHECK(png_image_begin_read_from_stdio(&r, f));
    CHECK(r.width == 300 && r.height == 200);
    r.format = PNG_FORMAT_RGB;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(r));
    CHECK(px && png_image_finish_read(&r, NULL, px, 0, NULL));
    CHECK(px && !memcmp(px, im.rgb, 300 * 200 * 3));
    free(px);
    fclose(f);
#else
    CHECK(!fk_png_available());
    CHECK(fk_png_write(stdout, &im, "tmp", &err) == FK_EUNSUP);
#endif
    fk_image_free(&im);
}

int main(void)
{
    test_massfunc();
    test_catalog();
    test_densmap();
    test_labels();
    test_drawing();
    CHECK_DONE();
}
