/* main.c - halomf: the mass function of one column of one level of a halostats catalogue, as a table ready to plot or a PNG picture. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "halostats.h"
#include "image.h"
#include "massfunc.h"
#include "massfunc_plot.h"
#include "pngwrite.h"
#include "prog.h"
#include "version.h"

static void help(void)
{
    printf("Usage: halomf [OPTION]... [CATALOGUE]\n"
           "The mass function of one column of a halostats catalogue (text, CSV or stream): counts in\n"
           "bins of equal width in log10, the number density per dex and the cumulative number density,\n"
           "one line a bin, '#' header lines first; or, with --plot, dn/dlog10 M with Poisson error\n"
           "bars on log axes as a PNG picture. Reads CATALOGUE, or stdin.\n"
           "\n"
           "  -c, --column=NAME     the column (default mass; m200c, m200m, mvir, mass_bound, ...)\n"
           "      --level=K         the rows of level K (default 0)\n"
           "      --bins-per-dex=N  bins per factor 10 (default 5)\n"
           "      --min=M           the lowest bin edge (default: the least positive value)\n"
           "      --max=M           the bins reach M (default: the largest value)\n"
           "  -m, --min-n=N         count only halos of at least N particles (column n; default 0: all)\n"
           "      --clean[=F]       leave out the contaminated halos of a zoom-in run: those whose\n"
           "                        contaminating mass fraction m_contam / mass is above F (default 0:\n"
           "                        any low-resolution member; halostats(1), CONTAMINATION)\n"
           "      --volume=V        the volume, in the catalogue's length unit cubed (default: the box\n"
           "                        of a text catalogue's header or of a stream; a CSV catalogue needs it)\n"
           "  -p, --plot            draw the PNG picture instead of the table\n"
           "  -s, --size=WxH        picture size in pixels (default 800x600; at least 200x150)\n"
           "      --mass-unit=NAME  the mass unit on the picture's axis (default: the column's unit)\n"
           "      --length-unit=NAME  the length unit of the volume (default: the catalogue's)\n"
           "  -o, --output=FILE     write FILE (atomically) instead of stdout\n"
           "  -f, --force           write the PNG to a terminal\n"
           "  -v, --verbose         what was counted, on stderr\n"
           "  -h, --help            show this help and exit\n"
           "  -V, --version         show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 bad input, no PNG support or I/O error, 2 usage error, 3 out of memory.\n"
           "Example: halostats --so --omega-m=0.3 snap.grps | halomf -c m200c\n");
}

/* Keeps the values of rows of at least min_n particles (min_n 0: all) and,
 * with clean, a contaminating mass fraction of at most fmax; returns how
 * many are left, the rows left out as contaminated in *dirty. */
static size_t keep_rows(const fk_cattab *t, const char *name, long level, long long min_n, int clean, double fmax,
                        double *v, size_t n, size_t *dirty)
{
    double *np = NULL, *fr = NULL;
    size_t nn, k = 0;
    fk_error err = {0};
    if (min_n > 0 && fk_cattab_column(t, "n", level, name, &np, &nn, &err)) prog_fail(&err);
    if (clean && fk_cattab_contam(t, level, name, &fr, &nn, &err)) prog_fail(&err);
    *dirty = 0;
    for (size_t i = 0; i < n; i++) {
        if (np && !(np[i] >= (double)min_n)) continue;
        if (fr && fr[i] > fmax) {
            ++*dirty;
            continue;
        }
        v[k++] = v[i];
    }
    free(np), free(fr);
    return k;
}

static void write_table(FILE *o, const fk_massfunc *mf, const char *column, const char *unit, const char *name,
                        long level, size_t n, double volume, const char *length_name, const char *vol_from,
                        double per_dex, double lo, const char *note)
{
    fprintf(o, "# halomf (fofkit %s): the mass function of column %s (unit %s) of %s, level %ld\n", FK_VERSION, column,
            unit, name, level);
    fprintf(o, "# %" PRIu64 " of %zu rows in the bins; %" PRIu64 " below, %" PRIu64 " above; %" PRIu64
               " skipped (nan or not positive)\n",
            (uint64_t)(n - mf->below - mf->above - mf->skipped), n, mf->below, mf->above, mf->skipped);
    char cube[96];
    fprintf(o, "# volume %.10g %s (%s); %g bins per dex from %.10g\n", volume,
            fk_unit_power(length_name, 3, cube, sizeof cube), vol_from, per_dex, lo);
    if (note) fprintf(o, "# %s\n", note);
    fprintf(o, "# n: rows in [lo, hi); dn_dlog10m = n / (volume dlog10); n_ge: rows >= lo per volume (above the\n"
               "# range included)\n");
    fprintf(o, "# log10_lo log10_hi m_mid n dn_dlog10m n_ge\n");
    uint64_t cum = mf->above;
    for (size_t b = 0; b < mf->nbins; b++) cum += mf->count[b];
    for (size_t b = 0; b < mf->nbins; b++) {
        double l0 = mf->log_lo + (double)b * mf->dlog, l1 = l0 + mf->dlog;
        fprintf(o, "%.6f %.6f %.6g %" PRIu64 " %.6g %.6g\n", l0, l1, pow(10, l0 + mf->dlog / 2), mf->count[b],
                (double)mf->count[b] / (volume * mf->dlog), (double)cum / volume);
        cum -= mf->count[b];
    }
}

int main(int argc, char **argv)
{
    prog_init("halomf");
    prog_std std = {0};
    const char *column = "mass", *mass_unit = NULL, *length_unit = NULL;
    long level = 0;
    long long min_n = 0;
    double per_dex = 5, lo = 0, hi = 0, volume = 0, fmax = 0;
    int plot = 0, w = 800, h = 600, clean = 0;
    enum { O_LEVEL = 256, O_BINS, O_MIN, O_MAX, O_VOL, O_MASS_UNIT, O_LENGTH_UNIT, O_CLEAN };
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"column", required_argument, 0, 'c'},
                                             {"level", required_argument, 0, O_LEVEL},
                                             {"bins-per-dex", required_argument, 0, O_BINS},
                                             {"min", required_argument, 0, O_MIN},
                                             {"max", required_argument, 0, O_MAX},
                                             {"min-n", required_argument, 0, 'm'},
                                             {"clean", optional_argument, 0, O_CLEAN},
                                             {"volume", required_argument, 0, O_VOL},
                                             {"plot", no_argument, 0, 'p'},
                                             {"size", required_argument, 0, 's'},
                                             {"mass-unit", required_argument, 0, O_MASS_UNIT},
                                             {"length-unit", required_argument, 0, O_LENGTH_UNIT},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":c:m:ps:" PROG_STD_SHORT, longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, &std, help, argv)) continue;
        switch (opt) {
        case 'c':
            if (!optarg[0]) prog_usage("option --column needs a name");
            column = optarg;
            break;
        case O_LEVEL: level = (long)prog_parse_int("--level", optarg, 0, 1000000); break;
        case O_BINS: per_dex = prog_parse_double("--bins-per-dex", optarg, 0.01, 1000); break;
        case O_MIN: lo = prog_parse_positive("--min", optarg, DBL_MAX); break;
        case O_MAX: hi = prog_parse_positive("--max", optarg, DBL_MAX); break;
        case 'm': min_n = prog_parse_int("--min-n", optarg, 0, INT64_MAX); break;
        case O_CLEAN:
            clean = 1;
            if (optarg) fmax = prog_parse_double("--clean", optarg, 0, 1);
            break;
        case O_VOL: volume = prog_parse_positive("--volume", optarg, DBL_MAX); break;
        case 'p': plot = 1; break;
        case 's': {
            char *x = strchr(optarg, 'x');
            if (!x) prog_usage("option --size needs WxH, not '%s'", optarg);
            *x = 0;
            w = (int)prog_parse_int("--size", optarg, 200, FK_IMAGE_MAX);
            h = (int)prog_parse_int("--size", x + 1, 150, FK_IMAGE_MAX);
            break;
        }
        case O_MASS_UNIT: mass_unit = optarg; break;
        case O_LENGTH_UNIT: length_unit = optarg; break;
        }
    }
    if (std.zlevel) prog_usage("option -z does not apply: halomf writes text or PNG");
    if (lo > 0 && hi > 0 && hi < lo) prog_usage("option --max (%g) is below --min (%g)", hi, lo);
    const char *path = prog_one_input(argc, argv, optind);
    if (plot && !fk_png_available())
        prog_die(EXIT_DATA, "this build has no PNG support (libpng was not found: install libpng-dev, then make "
                            "config); without --plot halomf prints the bins");
    const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
    fk_error err = {0};
    fk_cattab *t = malloc(sizeof *t);
    if (!t) prog_die(EXIT_RESOURCE, "out of memory");
    fk_output *out = prog_open_output(&std, plot); /* one that cannot be made fails before the input is read */
    FILE *f = prog_open_input(path, 0, 1);
    if (fk_cattab_read(f, name, t, &err)) prog_fail(&err);
    fk_input_close(f);
    double *v;
    size_t n;
    if (fk_cattab_column(t, column, level, name, &v, &n, &err)) prog_fail(&err);
    const size_t nall = n;
    size_t dirty = 0;
    if (min_n > 0 || clean) n = keep_rows(t, name, level, min_n, clean, fmax, v, n, &dirty);
    if (clean)
        prog_info("--clean=%g: %zu of %zu halos left out, their contaminating mass fraction above %g", fmax, dirty,
                  nall, fmax);

    const char *vol_from = "given";
    if (!(volume > 0)) {
        if (!t->has_box) prog_die(EXIT_DATA, "%s: the catalogue gives no box: give --volume", name);
        volume = pow(t->box * t->length, 3);
        vol_from = "the box of the header";
    }
    if (!length_unit) length_unit = t->length_name[0] ? t->length_name : "length";
    int k = fk_cattab_find(t, column);
    const char *unit = t->units[k][0] ? t->units[k] : "unknown";
    if (!mass_unit) mass_unit = t->units[k][0] ? t->units[k] : column;
    if (!n && !(lo > 0 && hi > 0))
        prog_die(EXIT_DATA, "%s: no halos to count%s", name, min_n ? " (none of --min-n particles or more)" : "");
    double vlo, vhi;
    size_t usable = fk_massfunc_range(v, n, &vlo, &vhi);
    if (!(lo > 0)) lo = vlo;
    if (!(hi > 0)) hi = vhi;
    if (!usable && (!(lo > 0) || !(hi > 0)))
        prog_die(EXIT_DATA, "%s: no positive finite %s at level %ld: give --min and --max", name, column, level);
    if (hi < lo) prog_die(EXIT_USAGE, "the range %g to %g is empty", lo, hi);
    fk_massfunc mf;
    if (fk_massfunc_count(v, n, lo, hi, per_dex, &mf, &err)) prog_fail(&err);
    char cube[96];
    prog_info("%zu rows of level %ld in %zu bins of %g dex from %g, volume %g %s", n, level, mf.nbins, mf.dlog, lo,
              volume, fk_unit_power(length_unit, 3, cube, sizeof cube));

    FILE *o = fk_output_file(out);
    if (!plot) {
        char note[160];
        snprintf(note, sizeof note, "--clean=%g: %zu halos left out, their contaminating mass fraction m_contam / "
                 "mass above %g", fmax, dirty, fmax);
        write_table(o, &mf, column, unit, name, level, n, volume, length_unit, vol_from, per_dex, lo,
                    clean ? note : NULL);
    } else {
        static const unsigned char white[3] = {255, 255, 255};
        fk_mf_bin *bins = malloc(mf.nbins * sizeof *bins);
        if (!bins) prog_die(EXIT_RESOURCE, "out of memory for %zu bins", mf.nbins);
        fk_image im;
        char title[160];
        uint64_t counted = 0;
        for (size_t b = 0; b < mf.nbins; b++) counted += mf.count[b];
        if (!strcmp(column, "mass"))
            snprintf(title, sizeof title, "Halo mass function: %" PRIu64 " halos", counted);
        else
            snprintf(title, sizeof title, "Mass function of %s: %" PRIu64 " halos", column, counted);
        if (fk_massfunc_points(&mf, volume, bins, &err) || fk_image_new(&im, w, h, white, &err) ||
            fk_massfunc_plot(bins, (int)mf.nbins, mass_unit, length_unit, title, &im, &err) ||
            fk_png_write(o, &im, fk_output_name(out), &err))
            prog_fail(&err);
        fk_image_free(&im);
        free(bins);
    }
    prog_commit(out);
    fk_massfunc_free(&mf);
    free(v);
    fk_cattab_free(t);
    free(t);
    return EXIT_OK;
}
