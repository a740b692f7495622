/* fofmap - draws a projected density map of a stream as a PNG, SVG or PDF picture, the largest halos of a catalogue circled. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "colormap.h"
#include "densmap.h"
#include "draw.h"
#include "filter.h"
#include "picture.h"
#include "prog.h"
#include "snapunits.h"

static void help(void)
{
    printf("Usage: fofmap [OPTION]... [STREAM] -o FILE.png|.svg|.pdf\n"
           "Draw the projected mass density of a fofkit stream (STREAM or stdin) in log scale as a\n"
           "PNG, SVG or PDF picture, and circle the largest halos of a halostats catalogue: the\n"
           "stream's own (halostats --format=stream) or one given with --halos. The title says\n"
           "the slab: its centre along the line of sight and its thickness.\n"
           "\n"
           "  -a, --axis=AXIS       line of sight: x, y or z (default z: the picture shows x, y)\n"
           "  -s, --size=PX         picture side in pixels (SVG, PDF: points), 16 to 16384 (default 800)\n"
           "  -c, --centre=X,Y,Z    centre of the field (default the box's centre)\n"
           "  -w, --width=W         side of the field (default the box; with --halo, 6 radii)\n"
           "  -d, --slab=D          thickness of the slab along the line of sight, centred on the\n"
           "                        field (default the whole box; with --halo, the width)\n"
           "  -H, --halo=ID         zoom on halo ID (level 0) of the catalogue: the field centred on it\n"
           "      --halos=FILE      the catalogue: halostats text, CSV or stream\n"
           "  -n, --circle=N        circle the N most massive halos in the slab (default 10, 0: none)\n"
           "      --clean[=F]       circle no contaminated halo of a zoom-in run: none whose\n"
           "                        contaminating mass fraction m_contam / mass is above F (default 0:\n"
           "                        any low-resolution member; halostats(1), CONTAMINATION)\n"
           "  -l, --labels          write each circled halo's id beside it (inside the picture, never\n"
           "                        over another label: a ring without room for its label has none)\n"
           "      --length-name=S   the unit of the scale bar and the title, the stream's length unit\n"
           "                        named S (default: kpc or Mpc from the stream's units, per h for a\n"
           "                        Gadget snapshot; without units, the bar says the box side)\n"
           "      --cmap=NAME       magma (default) or viridis\n"
           "      --range=DEX       decades of density shown below the densest pixel (default 4)\n"
           "      --smooth=PX       Gaussian smoothing of the map, sigma in pixels (default 1, 0: none)\n"
           "      --format=FMT      png, svg or pdf (default: the output's extension, else png)\n"
           "  -o, --output=FILE     write the picture to FILE (default stdout)\n"
           "  -f, --force           read or write binary data on a terminal\n"
           "  -v, --verbose         what was drawn, on stderr\n"
           "  -h, --help            this help\n"
           "  -V, --version         version\n"
           "\n"
           "Exit status: 0 success, 1 bad input, missing chunk, no cairo in this build or I/O error,\n"
           "2 usage error, 3 out of memory.\n"
           "See fofmap(1), halomf(1) and halostats(1).\n");
}

static int parse_axis(const char *arg)
{
    if (!strcmp(arg, "x")) return 0;
    if (!strcmp(arg, "y")) return 1;
    if (!strcmp(arg, "z")) return 2;
    prog_usage("option --axis needs x, y or z, not '%s'", arg);
}

int main(int argc, char **argv)
{
    prog_init("fofmap");
    prog_std std = {0};
    fk_view view = {.axis = 2, .size = 800};
    double centre[3], width = 0, depth = 0, range = 4, smooth = 1, fmax = 0;
    int have_centre = 0, labels = 0, clean = 0;
    long long circle = 10, zoom = -1;
    const char *halos_path = NULL, *cmap_name = "magma";
    const char *length_name = NULL, *format_name = NULL;
    enum { OPT_HALOS = 256, OPT_CMAP, OPT_RANGE, OPT_SMOOTH, OPT_LNAME, OPT_CLEAN, OPT_FORMAT };
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"axis", required_argument, 0, 'a'},
                                             {"size", required_argument, 0, 's'},
                                             {"centre", required_argument, 0, 'c'},
                                             {"center", required_argument, 0, 'c'},
                                             {"width", required_argument, 0, 'w'},
                                             {"slab", required_argument, 0, 'd'},
                                             {"halo", required_argument, 0, 'H'},
                                             {"halos", required_argument, 0, OPT_HALOS},
                                             {"circle", required_argument, 0, 'n'},
                                             {"clean", optional_argument, 0, OPT_CLEAN},
                                             {"labels", no_argument, 0, 'l'},
                                             {"cmap", required_argument, 0, OPT_CMAP},
                                             {"range", required_argument, 0, OPT_RANGE},
                                             {"smooth", required_argument, 0, OPT_SMOOTH},
                                             {"length-name", required_argument, 0, OPT_LNAME},
                                             {"format", required_argument, 0, OPT_FORMAT},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT "a:s:c:w:d:H:n:l", longopts, NULL)) != -1) {
        if (c == 'z') prog_usage("fofmap writes pictures (PNG and PDF are compressed already): no -z");
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        switch (c) {
        case 'a': view.axis = parse_axis(optarg); break;
        case 's': view.size = (int)prog_parse_int("--size", optarg, 16, 16384); break;
        case 'c':
            if (prog_parse_list("--centre", optarg, centre, 3, -1e30, 1e30) != 3)
                prog_usage("option --centre needs three numbers X,Y,Z");
            have_centre = 1;
            break;
        case 'w': width = prog_parse_positive("--width", optarg, 1e30); break;
        case 'd': depth = prog_parse_positive("--slab", optarg, 1e30); break;
        case 'H': zoom = prog_parse_int("--halo", optarg, 1, INT64_MAX); break;
        case OPT_HALOS: halos_path = optarg; break;
        case 'n': circle = prog_parse_int("--circle", optarg, 0, 1000000); break;
        case 'l': labels = 1; break;
        case OPT_CLEAN:
            clean = 1;
            if (optarg) fmax = prog_parse_double("--clean", optarg, 0, 1);
            break;
        case OPT_CMAP: cmap_name = optarg; break;
        case OPT_RANGE: range = prog_parse_double("--range", optarg, 0.1, 30); break;
        case OPT_SMOOTH: smooth = prog_parse_double("--smooth", optarg, 0, 100); break;
        case OPT_LNAME:
            if (!*optarg || strlen(optarg) > 32) prog_usage("option --length-name needs a name of 1 to 32 characters");
            length_name = optarg;
            break;
        case OPT_FORMAT: format_name = optarg; break;
        }
    }
    const unsigned char(*cmap)[3] = fk_colormap(cmap_name);
    if (!cmap) prog_usage("option --cmap needs magma or viridis, not '%s'", cmap_name);
    const char *in = prog_one_input(argc, argv, optind);
    if (halos_path && !strcmp(halos_path, "-") && !strcmp(in, "-"))
        prog_usage("the stream and --halos cannot both be stdin");
    const int format = pic_format_choose(format_name, std.output);
    pic_require(NULL);
    const char *name = strcmp(in, "-") ? in : "stdin";
    fk_error err = {0};

    /* one that cannot be made fails before the input is read; PNG and PDF are not for a terminal */
    fk_output *out = prog_open_output(&std, pic_binary(format));
    fk_catalog cat = {0};
    if (halos_path) {
        FILE *hf = prog_open_input(halos_path, 0, 1);
        if (fk_catalog_read(hf, strcmp(halos_path, "-") ? halos_path : "stdin", &cat, &err)) prog_fail(&err);
        fk_input_close(hf);
    }

    /* The particles, and the catalogue a halostats stream carries (unless --halos gave one). */
    FILE *fin = prog_open_input(in, 1, std.force);
    fk_filter f;
    enum { W_POS, W_MASS, W_HCOL, W_HALO, NW };
    fk_want want[NW] = {
        [W_POS] = {"POS", FK_W_PARTICLE | FK_W_REQUIRED, "<f4", 3, "not a particle stream?"},
        [W_MASS] = {"MASS", FK_W_PARTICLE, "<f4", 1},
        [W_HCOL] = {"HCOL", FK_W_TEXT},
        [W_HALO] = {"HALO", 0, "<f8", 0},
    };
    if (fk_filter_start(&f, fin, name, NULL, 0, &err) || fk_filter_read(&f, want, halos_path ? W_HCOL : NW, &err))
        prog_fail(&err);
    const fk_snap snap = f.snap;
    const float *pos = want[W_POS].data[0], *mass = want[W_MASS].data[0];
    if (fk_snap_check_positions(&snap, pos, name, &err)) prog_fail(&err);
    const fk_chunk *hc = &want[W_HALO].chunk[0];
    if (want[W_HCOL].data[0] && want[W_HALO].data[0] &&
        fk_catalog_from_chunks(want[W_HCOL].data[0], want[W_HALO].data[0], hc->nrows, hc->ncols, name, &cat, &err))
        prog_fail(&err);
    fk_catalog_sort_mass(&cat);
    /* the catalogue's centres and radii in the stream's length unit (halostats writes kpc, Mpc...) */
    if (halos_path) prog_input(halos_path); /* a halo that is not there: --halos names the file that lacks it */
    if (fk_densmap_cat_units(&cat, &snap, halos_path ? halos_path : name, &err)) prog_fail(&err);

    char caption[160];
    int st = fk_densmap_frame(&view, &snap, &cat, zoom, have_centre ? centre : NULL, width, depth, caption,
                              sizeof caption, &err);
    if (st == FK_EINVAL) prog_usage("%s", err.msg);
    if (st) prog_fail(&err);
    if (clean) { /* after the frame: --halo may still zoom on a contaminated halo */
        size_t dropped;
        if (!want[W_HCOL].data[0] && !halos_path)
            prog_die(EXIT_DATA, "%s: --clean: the stream has no catalogue (run halostats --format=stream, or give "
                     "--halos)", name);
        if (fk_catalog_clean(&cat, fmax, halos_path ? halos_path : name, &dropped, &err)) prog_fail(&err);
        prog_info("--clean=%g: %zu halos left out, their contaminating mass fraction above %g", fmax, dropped, fmax);
    }

    double *grid = malloc((size_t)view.size * (size_t)view.size * sizeof *grid);
    unsigned char *rgb = malloc(3 * (size_t)view.size * (size_t)view.size);
    fk_map_ring *rings = malloc(((size_t)circle + 1) * sizeof *rings);
    if (!grid || !rgb || !rings) prog_die(EXIT_RESOURCE, "no memory for a %dx%d map", view.size, view.size);
    if (fk_densmap_deposit(&view, pos, mass, snap.n, grid, &err) || fk_densmap_smooth(grid, view.size, smooth, &err))
        prog_fail(&err);
    fk_densmap_render(grid, view.size, cmap, range, rgb);

    /* the unit of the scale bar and the title: as given, kpc or Mpc from the stream's units, or none */
    fk_map_unit unit;
    fk_densmap_unit(&snap, view.width, length_name, &unit);
    const double bar = fk_densmap_bar(&view, &unit);
    char bar_text[96], slab[160], title[330];
    if (unit.name[0])
        snprintf(bar_text, sizeof bar_text, "%g %s", bar, unit.name);
    else
        snprintf(bar_text, sizeof bar_text, "%g (box side %g)", bar, snap.box);
    fk_densmap_slab_text(&view, &unit, slab, sizeof slab);
    snprintf(title, sizeof title, "%s; %s", caption, slab);
    map_picture m = {.size = view.size,
                     .rgb = rgb,
                     .rings = rings,
                     .nrings = fk_densmap_rings(&view, &cat, (size_t)circle, 4, rings),
                     .labels = labels,
                     .title = {caption, slab},
                     .bar_px = bar / unit.factor * view.size / view.width,
                     .bar_text = bar_text};
    pic *p;
    int unlabelled = 0;
    if (pic_open(&p, format, view.size, view.size, title, fk_output_file(out), fk_output_name(out), &err))
        prog_fail(&err);
    map_draw(p, &m, &unlabelled);
    prog_info("%dx%d %s map of %" PRIu64 " particles along %c, field %g wide; %s; %zu halos circled of %zu",
              view.size, view.size, pic_format_name(format), snap.n, "xyz"[view.axis], view.width, slab, m.nrings,
              cat.n);
    if (labels && unlabelled) prog_info("%d circled halos without a label: no room beside them", unlabelled);
    if (pic_finish(p, &err)) prog_fail(&err);
    prog_commit(out);
    free(rings);
    free(rgb);
    free(grid);
    fk_want_free(want, NW);
    fk_catalog_free(&cat);
    fk_filter_free(&f);
    fk_input_close(fin);
    return EXIT_OK;
}
