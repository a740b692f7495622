/* fofmf - draws the halo mass function dn/dlog10 M of a halostats catalogue as a PNG, or prints its bins. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "image.h"
#include "massfunc.h"
#include "pngwrite.h"
#include "prog.h"

static void help(void)
{
    printf("Usage: fofmf [OPTION]... [CATALOGUE] -o FILE.png\n"
           "Draw the halo mass function dn/dlog10 M, with Poisson error bars on log axes, of the\n"
           "level-0 halos of a halostats catalogue (CATALOGUE or stdin: text, CSV or stream) as a\n"
           "PNG picture, or print its bins with --table.\n"
           "\n"
           "  -b, --box=L           side of the (cubic) volume the halos were found in (default the\n"
           "                        catalogue's box)\n"
           "  -d, --dex=W           bin width in log10 M (default 0.2)\n"
           "  -m, --min-n=N         count only halos of at least N particles (default 0: all)\n"
           "  -s, --size=WxH        picture size in pixels (default 800x600; at least 200x150)\n"
           "      --mass-unit=NAME  the mass unit on the axis (default 'mass': the stream's)\n"
           "      --length-unit=NAME  the length unit in dn/dlog10 M's (default 'length')\n"
           "  -t, --table           print the bins as text instead: log10 M low and high edges,\n"
           "                        count, dn/dlog10 M and its Poisson error\n"
           "  -o, --output=FILE     write to FILE (default stdout)\n"
           "  -f, --force           write the PNG to a terminal\n"
           "  -v, --verbose         what was drawn, on stderr\n"
           "  -h, --help            this help\n"
           "  -V, --version         version\n"
           "\n"
           "Exit status: 0 success, 1 bad input, no PNG support or I/O error, 2 usage error,\n"
           "3 out of memory.\n"
           "See fofmf(1), fofmap(1) and halostats(1).\n");
}

int main(int argc, char **argv)
{
    prog_init("fofmf");
    prog_std std = {0};
    double box = 0, dex = 0.2;
    long long min_n = 0;
    int w = 800, h = 600, table = 0;
    const char *mass_unit = "mass", *length_unit = "length";
    enum { OPT_MASS_UNIT = 256, OPT_LENGTH_UNIT };
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"box", required_argument, 0, 'b'},
                                             {"dex", required_argument, 0, 'd'},
                                             {"min-n", required_argument, 0, 'm'},
                                             {"size", required_argument, 0, 's'},
                                             {"table", no_argument, 0, 't'},
                                             {"mass-unit", required_argument, 0, OPT_MASS_UNIT},
                                             {"length-unit", required_argument, 0, OPT_LENGTH_UNIT},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT "b:d:m:s:t", longopts, NULL)) != -1) {
        if (c == 'z') prog_usage("fofmf writes PNG or text: no -z");
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        switch (c) {
        case 'b': box = prog_parse_double("--box", optarg, 1e-30, 1e30); break;
        case 'd': dex = prog_parse_double("--dex", optarg, 0.01, 10); break;
        case 'm': min_n = prog_parse_int("--min-n", optarg, 0, INT64_MAX); break;
        case 's': {
            char *x = strchr(optarg, 'x');
            if (!x) prog_usage("option --size needs WxH, not '%s'", optarg);
            *x = 0;
            w = (int)prog_parse_int("--size", optarg, 200, FK_IMAGE_MAX);
            h = (int)prog_parse_int("--size", x + 1, 150, FK_IMAGE_MAX);
            break;
        }
        case 't': table = 1; break;
        case OPT_MASS_UNIT: mass_unit = optarg; break;
        case OPT_LENGTH_UNIT: length_unit = optarg; break;
        }
    }
    const char *in = prog_one_input(argc, argv, optind);
    if (!table && !fk_png_available())
        prog_die(EXIT_DATA, "this build has no PNG support (libpng was not found: install libpng-dev, then make "
                            "config); --table prints the bins");
    const char *name = strcmp(in, "-") ? in : "stdin";
    fk_error err = {0};
    fk_catalog cat;
    FILE *fin = prog_open_input(in, 0, 1);
    if (fk_catalog_read(fin, name, &cat, &err)) prog_fail(&err);
    fk_input_close(fin);
    if (!box) {
        if (!cat.has_box) prog_die(EXIT_DATA, "%s: the catalogue does not say its box: give --box", name);
        box = cat.box;
    }
    double *mass = malloc((cat.n ? cat.n : 1) * sizeof *mass);
    if (!mass) prog_die(EXIT_RESOURCE, "no memory for %zu masses", cat.n);
    size_t n = 0;
    for (size_t i = 0; i < cat.n; i++)
        if (cat.h[i].n >= (uint64_t)min_n) mass[n++] = cat.h[i].mass;
    if (!n) prog_die(EXIT_DATA, "%s: no halos to count%s", name, min_n ? " (none of --min-n particles or more)" : "");
    double lo, hi;
    int nbins = fk_massfunc_range(mass, n, dex, &lo, &hi, &err);
    if (nbins < 0) prog_die(EXIT_DATA, "%s: %s", name, err.msg);
    fk_mf_bin *bins = malloc((size_t)nbins * sizeof *bins);
    if (!bins) prog_die(EXIT_RESOURCE, "no memory for %d bins", nbins);
    if (fk_massfunc_bin(mass, n, box * box * box, lo, hi, nbins, bins, &err)) prog_fail(&err);
    prog_info("%zu halos in %d bins of %g dex from 10^%g to 10^%g, volume %g^3", n, nbins, dex, lo, hi, box);

    fk_output *out = prog_open_output(&std, !table);
    FILE *f = fk_output_file(out);
    if (table) {
        fprintf(f, "# halo mass function of %s: %zu halos, volume %.9g^3 %s^3\n", name, n, box, length_unit);
        fprintf(f, "# log10M_lo log10M_hi count dn_dlog10M err\n");
        for (int k = 0; k < nbins; k++)
            fprintf(f, "%.6f %.6f %zu %.9g %.9g\n", bins[k].lo, bins[k].hi, bins[k].count, bins[k].dn, bins[k].err);
    } else {
        static const unsigned char white[3] = {255, 255, 255};
        fk_image im;
        char title[128];
        snprintf(title, sizeof title, "Halo mass function: %zu halos", n);
        if (fk_image_new(&im, w, h, white, &err) ||
            fk_massfunc_plot(bins, nbins, mass_unit, length_unit, title, &im, &err) ||
            fk_png_write(f, &im, fk_output_name(out), &err))
            prog_fail(&err);
        fk_image_free(&im);
    }
    prog_commit(out);
    free(bins);
    free(mass);
    fk_catalog_free(&cat);
    return EXIT_OK;
}
