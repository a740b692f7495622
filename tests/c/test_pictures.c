/* test_pictures.c - tests of what pictures show: mass function bins, reference curves, catalogue reading and units, map deposits, rings, scale bars, the slab in words. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "check.h"
#include "colormap.h"
#include "densmap.h"
#include "massfunc_plot.h"
#include "snapunits.h"

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

    /* lengths: a text header's factor, a CSV's columns' unit (no factor) */
    CHECK(read_cat("# units: length kpc, mass Msun, velocity km/s; one stream unit is 1000, 1e10, 1 of them\n"
                   "# id n x y z\n1 2 3 4 5\n", &cat, &err) == FK_OK);
    CHECK(cat.length == 1000 && !strcmp(cat.length_name, "kpc"));
    fk_catalog_free(&cat);
    CHECK(read_cat("id,n,x[Mpc/h],y[Mpc/h],z[Mpc/h]\n1,2,3,4,5\n", &cat, &err) == FK_OK);
    CHECK(cat.length == 0 && !strcmp(cat.length_name, "Mpc/h"));
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
    fk_error_clear(&err);
    CHECK(read_cat("#", &cat, &err) == FK_EFORMAT); /* a '#' that names no column (found by fuzz_catalog) */
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
    unsigned char rgb[3 * 1600];
    fk_densmap_render(g, 40, cm, 3, rgb);
    CHECK(!memcmp(rgb + 3 * (20 * 40 + 20), cm[255], 3));
    CHECK(!memcmp(rgb, cm[0], 3));
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

static int read_curve(const char *text, fk_mf_curve *c, fk_error *err)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    int st = fk_mf_curve_read(f, "ref", c, err);
    fclose(f);
    return st;
}

/* Reference curves: two columns, comments skipped, masses increasing; each bad line named. */
static void test_curve(void)
{
    fk_mf_curve c;
    fk_error err = {0};
    CHECK(read_curve("# colossus\n1e10 0.5 extra\n\n2e10\t0.25\n4e10 0\n", &c, &err) == FK_OK);
    CHECK(c.n == 3 && c.m[1] == 2e10 && c.dn[1] == 0.25 && c.dn[2] == 0);
    fk_mf_curve_free(&c);
    CHECK(c.n == 0 && c.m == NULL);
    CHECK(read_curve("1e10 0.5\n1e10 0.4\n", &c, &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "ref: line 2: mass 1e+10 after 1e+10 (masses must increase)"), "%s", err.msg);
    fk_error_clear(&err);
    CHECK(read_curve("1e10 0.5\n2e10 x\n", &c, &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "ref: line 2: not two numbers (mass, dn/dlog10 M)"), "%s", err.msg);
    fk_error_clear(&err);
    CHECK(read_curve("1e10 0.5\n-2e10 1\n", &c, &err) == FK_EFORMAT);
    fk_error_clear(&err);
    CHECK(read_curve("1e10 0.5\n", &c, &err) == FK_EFORMAT);
    CHECK_MSG(strstr(err.msg, "1 points: a reference curve needs two or more") != NULL, "%s", err.msg);
    fk_error_clear(&err);
    CHECK(read_curve("1e10 nan\n2e10 1\n", &c, &err) == FK_EFORMAT);
}

/* The rings of the halos in the slab, the unit, scale bar and slab of a picture, a catalogue's lengths in the stream's unit. */
static void test_map_words(void)
{
    fk_view v = {.axis = 2, .centre = {0, 0, 0.25}, .width = 1, .depth = 0.1, .size = 100, .box = 1, .periodic = 1};
    fk_cat_halo h[3] = {{.id = 7, .x = {0.1, 0.2, 0.26}, .r = 0.1},
                        {.id = 8, .x = {0, 0, -0.25}, .r = 0.1},
                        {.id = 9, .x = {-0.4, 0, 0.24}, .r = 0.001}};
    fk_catalog cat = {.n = 3, .h = h};
    fk_map_ring ring[3];
    /* 8 lies outside the slab; 9's ring at least 4 pixels */
    CHECK(fk_densmap_rings(&v, &cat, 3, 4, ring) == 2);
    CHECK(ring[0].id == 7 && fabs(ring[0].x - 60) < 1e-9 && fabs(ring[0].y - 30) < 1e-9 && fabs(ring[0].r - 10) < 1e-9);
    CHECK(ring[1].id == 9 && ring[1].r == 4);
    CHECK(fk_densmap_rings(&v, &cat, 1, 4, ring) == 1);

    /* units: none, kpc/h, Mpc/h for a wide field, a tipsy unit of 1e5 kpc, a name given */
    fk_snap s = {.box = 1};
    fk_map_unit u;
    char buf[160];
    fk_densmap_unit(&s, 1, NULL, &u);
    CHECK(u.factor == 1 && !u.name[0]);
    CHECK(fk_densmap_bar(&v, &u) == 0.2);
    CHECK_MSG(!strcmp(fk_densmap_slab_text(&v, &u, buf, sizeof buf), "slab at z = 0.25, 0.1 thick (box side 1)"), "%s",
              buf);
    s.have_units = 1, s.units_per_h = 1, s.unit_length_cm = FK_KPC_CM;
    fk_densmap_unit(&s, 1000, NULL, &u);
    CHECK(u.factor == 1 && !strcmp(u.name, "kpc/h"));
    fk_densmap_unit(&s, 25000, NULL, &u);
    CHECK(fabs(u.factor - 1e-3) < 1e-15 && !strcmp(u.name, "Mpc/h"));
    v.width = 25000, v.depth = 2500, v.centre[2] = 12500, v.box = 50000;
    CHECK(fabs(fk_densmap_bar(&v, &u) - 5) < 1e-12); /* 25 Mpc/h wide: a bar of 5 */
    CHECK_MSG(!strcmp(fk_densmap_slab_text(&v, &u, buf, sizeof buf), "slab at z = 12.5 Mpc/h, 2.5 Mpc/h thick"), "%s",
              buf);
    v.depth = 50000;
    CHECK_MSG(!strcmp(fk_densmap_slab_text(&v, &u, buf, sizeof buf),
                      "slab at z = 12.5 Mpc/h, 50 Mpc/h thick (the whole box)"), "%s", buf);
    v.centre[2] = 9999999.5, v.depth = 12345.6; /* 4 digits, an exponent only from a million */
    CHECK_MSG(!strcmp(fk_densmap_slab_text(&v, &u, buf, sizeof buf), "slab at z = 10000 Mpc/h, 12.35 Mpc/h thick"), "%s",
              buf);
    s.units_per_h = 0, s.unit_length_cm = 1e5 * FK_KPC_CM;
    fk_densmap_unit(&s, 1, NULL, &u);
    CHECK(fabs(u.factor - 100) < 1e-9 && !strcmp(u.name, "Mpc"));
    fk_densmap_unit(&s, 1, "parsec", &u);
    CHECK(u.factor == 1 && !strcmp(u.name, "parsec"));

    /* a catalogue's kpc into the stream's unit of 1e5 kpc: by its factor, by its columns' unit (CSV) */
    fk_error err = {0};
    h[0].x[0] = 50000, h[0].r = 1000;
    cat.length = 1e5;
    CHECK(fk_densmap_cat_units(&cat, &s, "c", &err) == FK_OK);
    CHECK(fabs(h[0].x[0] - 0.5) < 1e-12 && fabs(h[0].r - 0.01) < 1e-12 && cat.length == 1);
    h[0].x[0] = 50;
    cat.length = 0;
    snprintf(cat.length_name, sizeof cat.length_name, "Mpc");
    CHECK(fk_densmap_cat_units(&cat, &s, "c", &err) == FK_OK);
    CHECK(fabs(h[0].x[0] - 0.5) < 1e-12);
    cat.length = 0;
    snprintf(cat.length_name, sizeof cat.length_name, "kpc/h"); /* per h against a stream that is not */
    CHECK(fk_densmap_cat_units(&cat, &s, "c", &err) == FK_EINVAL);
    CHECK_MSG(strstr(err.msg, "c: lengths in kpc/h") == err.msg, "%s", err.msg);
    cat.length = 0;
    snprintf(cat.length_name, sizeof cat.length_name, "length");
    CHECK(fk_densmap_cat_units(&cat, &s, "c", &err) == FK_OK && fabs(h[0].x[0] - 0.5) < 1e-12);
}

int main(void)
{
    test_massfunc();
    test_catalog();
    test_densmap();
    test_labels();
    test_curve();
    test_map_words();
    CHECK_DONE();
}
