/* main.c - halomf: the mass functions of one column of halostats catalogues, as tables ready to plot or one picture (PNG, SVG, PDF) of them all. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog.h"
#include "halostats.h"
#include "massfunc.h"
#include "massfunc_plot.h"
#include "picture.h"
#include "plot.h"
#include "prog.h"
#include "version.h"

static void help(void)
{
    printf("Usage: halomf [OPTION]... [CATALOGUE]...\n"
           "The mass function of one column of halostats catalogues (text, CSV or stream): counts in\n"
           "bins of equal width in log10, the number density per dex and the cumulative number density,\n"
           "one line a bin, '#' header lines first (a table a catalogue and level, two blank lines\n"
           "between them); or, with --plot, dn/dlog10 M with Poisson error bars on log axes as a PNG,\n"
           "SVG or PDF picture: every catalogue and level on one plot, with a legend and a reference\n"
           "curve. Reads each CATALOGUE, or stdin.\n"
           "\n"
           "  -c, --column=NAME     the column (default mass; m200c, m200m, mvir, mass_bound, ...)\n"
           "      --level=K[,K]...  the rows of level K, each level a mass function (default 0)\n"
           "      --bins-per-dex=N  bins per factor 10 (default 5)\n"
           "      --min=M           the lowest bin edge (default: the least positive value)\n"
           "      --max=M           the bins reach M (default: the largest value)\n"
           "  -m, --min-n=N         count only halos of at least N particles (column n; default 0: all)\n"
           "      --clean[=F]       leave out the contaminated halos of a zoom-in run: those whose\n"
           "                        contaminating mass fraction m_contam / mass is above F (default 0:\n"
           "                        any low-resolution member; halostats(1), CONTAMINATION)\n"
           "      --volume=V        the volume, in the catalogue's length unit cubed (default: the box\n"
           "                        of a text catalogue's header or of a stream; a CSV catalogue needs it)\n"
           "  -p, --plot            draw the picture instead of the table (implied by --format and by\n"
           "                        an output named .png, .svg or .pdf)\n"
           "      --format=FMT      png, svg or pdf (default: the output's extension, else png)\n"
           "  -s, --size=WxH        picture size in pixels (SVG, PDF: points; default 800x600; at least\n"
           "                        200x150)\n"
           "      --label=TEXT      the legend's name of the next catalogue (one --label a catalogue;\n"
           "                        default its file name; \", level K\" added with several levels)\n"
           "      --reference=FILE  draw a reference curve: lines of mass and dn/dlog10 M in the plot's\n"
           "                        units ('#' lines skipped), e.g. a theory mass function\n"
           "      --reference-label=TEXT  its name in the legend (default the file's name)\n"
           "      --mass-unit=NAME  the mass unit on the picture's axis (default: the column's unit)\n"
           "      --length-unit=NAME  the length unit of the volume (default: the catalogue's; the\n"
           "                        picture gives densities per Mpc^3 of a catalogue in kpc)\n"
           "  -o, --output=FILE     write FILE (atomically) instead of stdout\n"
           "  -f, --force           write a PNG or PDF to a terminal\n"
           "  -v, --verbose         what was counted, on stderr\n"
           "  -h, --help            show this help and exit\n"
           "  -V, --version         show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 bad input, no cairo in this build (--plot) or I/O error, 2 usage\n"
           "error, 3 out of memory.\n"
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

/* One mass function: a level of a catalogue, its values and what its table and picture say. */
typedef struct series {
    int cat;      /* which catalogue */
    long level;
    double *v;    /* the column's values left after --min-n and --clean */
    size_t n, nall, dirty;
    fk_massfunc mf;
    char label[200];
} series;

/* A catalogue read, its volume and units. */
typedef struct catin {
    const char *path, *name, *label;
    fk_cattab t;
    double volume;
    const char *vol_from, *length_unit, *unit;
} catin;

/* 1 when the output is named for a picture (.png, .svg, .pdf). */
static int picture_named(const char *out)
{
    const char *dot = out ? strrchr(out, '.') : NULL;
    return dot && (!strcasecmp(dot, ".png") || !strcasecmp(dot, ".svg") || !strcasecmp(dot, ".pdf"));
}

/* The density unit of a picture: per Mpc^3 for a catalogue whose lengths are kpc (per h or not), so that the
 * axis reads as mass functions are published; otherwise the catalogue's own. Returns the factor on dn. */
static double plot_length(const char *length_unit, int given, char *name, size_t size)
{
    if (!given && (!strcmp(length_unit, "kpc") || !strcmp(length_unit, "kpc/h"))) {
        snprintf(name, size, "Mpc%s", length_unit + 3);
        return 1e9;
    }
    snprintf(name, size, "%s", length_unit);
    return 1;
}

int main(int argc, char **argv)
{
    prog_init("halomf");
    prog_std std = {0};
    const char *column = "mass", *mass_unit = NULL, *length_unit = NULL, *format_name = NULL;
    const char *ref_path = NULL, *ref_label = NULL;
    long levels[64] = {0};
    int nlevels = 1;
    long long min_n = 0;
    double per_dex = 5, lo = 0, hi = 0, volume = 0, fmax = 0;
    int plot = 0, w = 800, h = 600, clean = 0, nlabels = 0;
    const char **labels = calloc((size_t)argc + 1, sizeof *labels);
    if (!labels) prog_die(EXIT_RESOURCE, "out of memory");
    enum { O_LEVEL = 256, O_BINS, O_MIN, O_MAX, O_VOL, O_MASS_UNIT, O_LENGTH_UNIT, O_CLEAN, O_FORMAT, O_LABEL, O_REF,
           O_REF_LABEL };
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
                                             {"format", required_argument, 0, O_FORMAT},
                                             {"size", required_argument, 0, 's'},
                                             {"label", required_argument, 0, O_LABEL},
                                             {"reference", required_argument, 0, O_REF},
                                             {"reference-label", required_argument, 0, O_REF_LABEL},
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
        case O_LEVEL: {
            nlevels = 0;
            for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
                if (nlevels == 64) prog_usage("option --level: at most 64 levels");
                levels[nlevels++] = (long)prog_parse_int("--level", tok, 0, 1000000);
            }
            if (!nlevels) prog_usage("option --level needs a level K or a list K,K...");
            break;
        }
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
        case O_FORMAT: format_name = optarg; break;
        case 's': {
            char *x = strchr(optarg, 'x');
            if (!x) prog_usage("option --size needs WxH, not '%s'", optarg);
            *x = 0;
            w = (int)prog_parse_int("--size", optarg, 200, 16384);
            h = (int)prog_parse_int("--size", x + 1, 150, 16384);
            break;
        }
        case O_LABEL:
            if (!optarg[0] || strlen(optarg) > 120) prog_usage("option --label needs a name of 1 to 120 characters");
            labels[nlabels++] = optarg;
            break;
        case O_REF: ref_path = optarg; break;
        case O_REF_LABEL:
            if (!optarg[0] || strlen(optarg) > 120)
                prog_usage("option --reference-label needs a name of 1 to 120 characters");
            ref_label = optarg;
            break;
        case O_MASS_UNIT: mass_unit = optarg; break;
        case O_LENGTH_UNIT: length_unit = optarg; break;
        }
    }
    if (std.zlevel) prog_usage("option -z does not apply: halomf writes text or pictures");
    if (lo > 0 && hi > 0 && hi < lo) prog_usage("option --max (%g) is below --min (%g)", hi, lo);
    /* the catalogues: the operands, or stdin */
    const int ncat = optind < argc ? argc - optind : 1;
    char *const *paths = optind < argc ? argv + optind : (char *const[]){"-"};
    for (int i = 0, stdin_seen = 0; i < ncat; i++)
        if (!strcmp(paths[i], "-") && stdin_seen++) prog_usage("stdin can be read once: give '-' once");
    if (nlabels && nlabels != ncat)
        prog_usage("%d --label for %d catalogue%s: give one a catalogue, or none", nlabels, ncat, ncat > 1 ? "s" : "");
    if (format_name || picture_named(std.output)) plot = 1;
    const int format = plot ? pic_format_choose(format_name, std.output) : PIC_PNG;
    if (!plot && ref_path) prog_usage("option --reference draws on the picture: give --plot too");
    if (ref_path && !strcmp(ref_path, "-") && ncat == 1 && !strcmp(paths[0], "-"))
        prog_usage("the catalogue and --reference cannot both be stdin");
    if (plot) pic_require("; without --plot halomf prints the bins");
    fk_error err = {0};
    /* one that cannot be made fails before the input is read; a PNG or PDF is not for a terminal */
    fk_output *out = prog_open_output(&std, plot && pic_binary(format));

    fk_mf_curve ref = {0};
    if (ref_path) {
        FILE *rf = prog_open_input(ref_path, 0, 1);
        if (fk_mf_curve_read(rf, strcmp(ref_path, "-") ? ref_path : "stdin", &ref, &err)) prog_fail(&err);
        fk_input_close(rf);
    }

    catin *cats = calloc((size_t)ncat, sizeof *cats);
    series *se = calloc((size_t)ncat * (size_t)nlevels, sizeof *se);
    if (!cats || !se) prog_die(EXIT_RESOURCE, "out of memory");
    int ns = 0;
    double ulo = INFINITY, uhi = -INFINITY;
    for (int i = 0; i < ncat; i++) {
        catin *c = &cats[i];
        c->path = paths[i];
        c->name = strcmp(c->path, "-") ? c->path : "stdin";
        prog_input(c->path);
        FILE *f = prog_open_input(c->path, 0, 1);
        if (fk_cattab_read(f, c->name, &c->t, &err)) prog_fail(&err);
        fk_input_close(f);
        const fk_cattab *t = &c->t;
        int k = fk_cattab_find(t, column);
        if (k < 0) prog_die(EXIT_DATA, "%s: no column '%s' in the catalogue", c->name, column);
        c->unit = t->units[k][0] ? t->units[k] : "unknown";
        c->length_unit = length_unit ? length_unit : t->length_name[0] ? t->length_name : "length";
        if (plot && i > 0 && strcmp(c->unit, cats[0].unit))
            prog_die(EXIT_DATA, "%s: %s is in %s, but %s's in %s: one plot takes one mass unit", c->name, column,
                     c->unit, cats[0].name, cats[0].unit);
        const char *base = strrchr(c->name, '/');
        c->label = nlabels ? labels[i] : base ? base + 1 : c->name;
        for (int l = 0; l < nlevels; l++) {
            series *s = &se[ns++];
            s->cat = i;
            s->level = levels[l];
            if (fk_cattab_column(t, column, s->level, c->name, &s->v, &s->n, &err)) prog_fail(&err);
            s->nall = s->n;
            if (min_n > 0 || clean) s->n = keep_rows(t, c->name, s->level, min_n, clean, fmax, s->v, s->n, &s->dirty);
            if (clean)
                prog_info("%s, level %ld: --clean=%g: %zu of %zu halos left out, their contaminating mass fraction "
                          "above %g", c->name, s->level, fmax, s->dirty, s->nall, fmax);
            if (!s->n && !(lo > 0 && hi > 0))
                prog_die(EXIT_DATA, "%s: no halos to count%s", c->name, min_n ? " (none of --min-n particles or more)" : "");
            double vlo, vhi;
            if (fk_massfunc_range(s->v, s->n, &vlo, &vhi)) {
                ulo = vlo < ulo ? vlo : ulo;
                uhi = vhi > uhi ? vhi : uhi;
            } else if (!(lo > 0) || !(hi > 0)) {
                prog_die(EXIT_DATA, "%s: no positive finite %s at level %ld: give --min and --max", c->name, column,
                         s->level);
            }
            if (nlevels > 1)
                snprintf(s->label, sizeof s->label, "%s, level %ld", c->label, s->level);
            else
                snprintf(s->label, sizeof s->label, "%s", c->label);
        }
        /* after the rows: a catalogue without the columns asked is told so first */
        c->volume = volume;
        c->vol_from = "given";
        if (!(c->volume > 0)) {
            if (!t->has_box) prog_die(EXIT_DATA, "%s: the catalogue gives no box: give --volume", c->name);
            c->volume = pow(t->box * t->length, 3);
            c->vol_from = "the box of the header";
        }
    }
    /* one set of bins for every mass function, so that they compare bin by bin */
    if (!(lo > 0)) lo = ulo;
    if (!(hi > 0)) hi = uhi;
    if (hi < lo) prog_die(EXIT_USAGE, "the range %g to %g is empty", lo, hi);
    char cube[96];
    for (int i = 0; i < ns; i++) {
        series *s = &se[i];
        const catin *c = &cats[s->cat];
        prog_input(c->path);
        if (fk_massfunc_count(s->v, s->n, lo, hi, per_dex, &s->mf, &err)) prog_fail(&err);
        prog_info("%s: %zu rows of level %ld in %zu bins of %g dex from %g, volume %g %s", c->name, s->n, s->level,
                  s->mf.nbins, s->mf.dlog, lo, c->volume, fk_unit_power(c->length_unit, 3, cube, sizeof cube));
    }
    prog_input(paths[0]);

    FILE *o = fk_output_file(out);
    if (!plot) {
        for (int i = 0; i < ns; i++) {
            const series *s = &se[i];
            const catin *c = &cats[s->cat];
            char note[160];
            snprintf(note, sizeof note, "--clean=%g: %zu halos left out, their contaminating mass fraction m_contam / "
                     "mass above %g", fmax, s->dirty, fmax);
            if (i) fputs("\n\n", o); /* gnuplot's index: two blank lines between data sets */
            write_table(o, &s->mf, column, c->unit, c->name, s->level, s->n, c->volume, c->length_unit, c->vol_from,
                        per_dex, lo, clean ? note : NULL);
        }
    } else {
        fk_mf_bin *bins = malloc((size_t)ns * se[0].mf.nbins * sizeof *bins);
        mf_series *ps = malloc((size_t)ns * sizeof *ps);
        if (!bins || !ps) prog_die(EXIT_RESOURCE, "out of memory for %zu bins", se[0].mf.nbins);
        char plen[FK_CAT_NAME + 8] = "";
        uint64_t counted = 0;
        for (int i = 0; i < ns; i++) {
            const series *s = &se[i];
            const catin *c = &cats[s->cat];
            fk_mf_bin *b = bins + (size_t)i * s->mf.nbins;
            char name[FK_CAT_NAME + 8];
            const double factor = plot_length(c->length_unit, length_unit != NULL, name, sizeof name);
            if (i && strcmp(name, plen))
                prog_die(EXIT_DATA, "%s: its lengths are %s, but %s's %s: one plot takes one length unit", c->name,
                         name, cats[se[0].cat].name, plen);
            snprintf(plen, sizeof plen, "%s", name);
            if (fk_massfunc_points(&s->mf, c->volume, b, &err)) prog_fail(&err);
            for (size_t k = 0; k < s->mf.nbins; k++) {
                b[k].dn *= factor;
                b[k].err *= factor;
                counted += b[k].count;
            }
            ps[i] = (mf_series){b, (int)s->mf.nbins, s->label};
        }
        const char *munit = mass_unit ? mass_unit : strcmp(cats[0].unit, "unknown") ? cats[0].unit : column;
        char title[160], xlabel[200], ylabel[200], per_volume[96], sup[120];
        if (!strcmp(column, "mass"))
            snprintf(title, sizeof title, ns == 1 ? "Halo mass function: %" PRIu64 " halos" : "Halo mass function",
                     counted);
        else
            snprintf(title, sizeof title, ns == 1 ? "Mass function of %s: %" PRIu64 " halos" : "Mass function of %s",
                     column, counted);
        snprintf(xlabel, sizeof xlabel, "%s [%s]", strcmp(column, "mass") ? column : "M", munit);
        pic_superscripts(fk_unit_power(plen, -3, per_volume, sizeof per_volume), sup, sizeof sup);
        snprintf(ylabel, sizeof ylabel, "dn/dlog10 %s [%s]", strcmp(column, "mass") ? column : "M", sup);
        const char *rbase = ref_path ? strrchr(ref_path, '/') : NULL;
        mf_plot m = {.series = ps,
                     .nseries = ns,
                     .ref = ref_path ? &ref : NULL,
                     .ref_label = ref_label ? ref_label : rbase ? rbase + 1 : ref_path,
                     .xlabel = xlabel,
                     .ylabel = ylabel,
                     .title = title,
                     .w = w,
                     .h = h};
        pic *p;
        if (pic_open(&p, format, w, h, title, o, fk_output_name(out), &err)) prog_fail(&err);
        if (mf_plot_draw(p, &m, &err)) {
            pic_free(p);
            prog_fail(&err);
        }
        if (pic_finish(p, &err)) prog_fail(&err);
        free(ps);
        free(bins);
    }
    prog_commit(out);
    for (int i = 0; i < ns; i++) {
        fk_massfunc_free(&se[i].mf);
        free(se[i].v);
    }
    for (int i = 0; i < ncat; i++) fk_cattab_free(&cats[i].t);
    free(se);
    free(cats);
    free(labels);
    fk_mf_curve_free(&ref);
    return EXIT_OK;
}
