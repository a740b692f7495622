/* main.c - halomf: the mass function of one column of a halostats catalogue (text or CSV), as a table ready to plot. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "massfn.h"
#include "prog.h"
#include "version.h"

#define MAX_COLS 256

static void help(void)
{
    printf("Usage: halomf [OPTION]... [CATALOGUE]\n"
           "The mass function of one column of a halostats catalogue (text, or CSV): counts in bins of\n"
           "equal width in log10, the number density per dex and the cumulative number density, one\n"
           "line a bin, '#' header lines first. Reads CATALOGUE, or stdin.\n"
           "\n"
           "  -c, --column=NAME     the column (default mass; m200c, m200m, mvir, mass_bound, ...)\n"
           "      --level=K         the rows of level K (default 0)\n"
           "      --bins-per-dex=N  bins per factor 10 (default 5)\n"
           "      --min=M           the lowest bin edge (default: the least positive value)\n"
           "      --max=M           the bins reach M (default: the largest value)\n"
           "      --volume=V        the volume, in the catalogue's length unit cubed (default: the box\n"
           "                        of a text catalogue's header; a CSV catalogue needs it)\n"
           "  -o, --output=FILE     write FILE (atomically) instead of stdout\n"
           "  -h, --help            show this help and exit\n"
           "  -V, --version         show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 out of memory.\n"
           "Example: halostats --so --omega-m=0.3 snap.grps | halomf -c m200c\n");
}

/* What halomf reads of a catalogue. */
typedef struct catalogue {
    const char *name;
    char *names[MAX_COLS]; /* column names             */
    char *units[MAX_COLS]; /* their units, when known  */
    int ncols, csv;
    double box, length; /* box side (stream units) and the length factor; box 0: unknown */
    char length_name[64];
    double *values; /* the chosen column of the chosen level */
    size_t n, cap, rows;
} catalogue;

static char *dup(const char *s)
{
    char *d = strdup(s);
    if (!d) prog_die(EXIT_RESOURCE, "out of memory");
    return d;
}

/* Splits line (modified) at sep (a blank: runs of white space) into at most MAX_COLS fields. */
static int split(char *line, char sep, char **f)
{
    int n = 0;
    char *p = line;
    while (*p && n < MAX_COLS) {
        if (sep == ' ') {
            while (*p == ' ' || *p == '\t') p++;
            if (!*p) break;
        }
        f[n++] = p;
        while (*p && (sep == ' ' ? *p != ' ' && *p != '\t' : *p != sep)) p++;
        if (*p) *p++ = '\0';
    }
    return n;
}

/* Reads the header line of a text catalogue for the box, the units and the column units. */
static void header_line(catalogue *c, const char *line)
{
    double b, l, m, v;
    char ln[64], mn[64], vn[64], name[64], unit[64];
    unsigned k;
    if (sscanf(line, "# box %lf origin", &b) == 1) c->box = b;
    if (sscanf(line, "# units: length %63[^,], mass %63[^,], velocity %63[^;]; one stream unit is %lf, %lf, %lf", ln,
               mn, vn, &l, &m, &v) == 6) {
        c->length = l;
        snprintf(c->length_name, sizeof c->length_name, "%s", ln);
    }
    if (sscanf(line, "# %u %63s %63s", &k, name, unit) == 3 && k >= 1 && k <= MAX_COLS && !c->units[k - 1])
        c->units[k - 1] = dup(unit);
}

static void read_catalogue(FILE *f, catalogue *c, const char *column, long level)
{
    char *line = NULL, *fields[MAX_COLS], *last_hash = NULL;
    size_t size = 0;
    ssize_t len;
    int col = -1, lcol = -1, started = 0;
    uint64_t lineno = 0;
    c->length = 1;
    snprintf(c->length_name, sizeof c->length_name, "length");
    while ((len = getline(&line, &size, f)) != -1) {
        lineno++;
        if (len && line[len - 1] == '\n') line[--len] = '\0';
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        if (!started) {
            if (line[0] == '#') {
                header_line(c, line);
                free(last_hash);
                last_hash = dup(line + 1);
                continue;
            }
            if (len == 0) continue;
            /* the column names: the last '#' line of a text catalogue, the first line of a CSV one */
            char *names = last_hash;
            c->csv = !last_hash;
            if (c->csv) names = dup(line);
            c->ncols = split(names, c->csv ? ',' : ' ', fields);
            for (int k = 0; k < c->ncols; k++) {
                c->names[k] = dup(fields[k]);
                if (strcmp(fields[k], column) == 0) col = k;
                if (strcmp(fields[k], "level") == 0) lcol = k;
            }
            if (c->csv) free(names);
            if (col < 0) prog_die(EXIT_DATA, "%s: no column '%s' in the catalogue", c->name, column);
            if (lcol < 0 && level != 0)
                prog_die(EXIT_DATA, "%s: no level column, so no level %ld", c->name, level);
            started = 1;
            if (c->csv) continue;
        }
        if (line[0] == '#' || len == 0) continue;
        int n = split(line, c->csv ? ',' : ' ', fields);
        if (n != c->ncols)
            prog_die(EXIT_DATA, "%s: line %" PRIu64 " has %d fields, the header %d", c->name, lineno, n, c->ncols);
        char *end;
        if (lcol >= 0) {
            long lv = strtol(fields[lcol], &end, 10);
            if (*end || end == fields[lcol]) prog_die(EXIT_DATA, "%s: line %" PRIu64 ": level '%s' is not a number", c->name, lineno, fields[lcol]);
            if (lv != level) continue;
        }
        double v = strtod(fields[col], &end);
        if (*end || end == fields[col])
            prog_die(EXIT_DATA, "%s: line %" PRIu64 ": %s '%s' is not a number", c->name, lineno, column, fields[col]);
        if (c->n == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 1024;
            double *p = realloc(c->values, c->cap * sizeof *p);
            if (!p) prog_die(EXIT_RESOURCE, "out of memory for %zu rows", c->cap);
            c->values = p;
        }
        c->values[c->n++] = v;
    }
    if (ferror(f)) prog_die(EXIT_DATA, "%s: read error", c->name);
    if (!started) prog_die(EXIT_DATA, "%s: no catalogue (no column names)", c->name);
    free(line);
    free(last_hash);
}

int main(int argc, char **argv)
{
    prog_init("halomf");
    prog_std std = {0};
    const char *column = "mass";
    long level = 0;
    double per_dex = 5, lo = 0, hi = 0, volume = 0;
    enum { O_LEVEL = 256, O_BINS, O_MIN, O_MAX, O_VOL };
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"column", required_argument, 0, 'c'},
                                             {"level", required_argument, 0, O_LEVEL},
                                             {"bins-per-dex", required_argument, 0, O_BINS},
                                             {"min", required_argument, 0, O_MIN},
                                             {"max", required_argument, 0, O_MAX},
                                             {"volume", required_argument, 0, O_VOL},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":c:" PROG_STD_SHORT, longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, &std, help, argv)) continue;
        switch (opt) {
        case 'c':
            if (!optarg[0]) prog_usage("option --column needs a name");
            column = optarg;
            break;
        case O_LEVEL: level = (long)prog_parse_int("--level", optarg, 0, 1000000); break;
        case O_BINS: per_dex = prog_parse_double("--bins-per-dex", optarg, 0.01, 1000); break;
        case O_MIN: lo = prog_parse_double("--min", optarg, DBL_MIN, DBL_MAX); break;
        case O_MAX: hi = prog_parse_double("--max", optarg, DBL_MIN, DBL_MAX); break;
        case O_VOL: volume = prog_parse_double("--volume", optarg, DBL_MIN, DBL_MAX); break;
        }
    }
    if (std.zlevel) prog_usage("option -z does not apply: halomf writes text");
    if (lo > 0 && hi > 0 && hi < lo) prog_usage("option --max (%g) is below --min (%g)", hi, lo);
    const char *path = prog_one_input(argc, argv, optind);
    catalogue c = {.name = strcmp(path, "-") == 0 ? "stdin" : path};
    FILE *f = prog_open_input(path, 0, std.force);
    read_catalogue(f, &c, column, level);
    fk_input_close(f);

    const char *vol_from = "given";
    if (!(volume > 0)) {
        if (!(c.box > 0))
            prog_die(EXIT_DATA, "%s: the catalogue gives no box (CSV has no header): give --volume", c.name);
        volume = pow(c.box * c.length, 3);
        vol_from = "the box of the header";
    }
    double vlo, vhi;
    size_t usable = fk_massfn_range(c.values, c.n, &vlo, &vhi);
    if (!(lo > 0)) lo = vlo;
    if (!(hi > 0)) hi = vhi;
    if (!usable && (!(lo > 0) || !(hi > 0)))
        prog_die(EXIT_DATA, "%s: no positive finite %s at level %ld: give --min and --max", c.name, column, level);
    if (hi < lo) prog_die(EXIT_USAGE, "the range %g to %g is empty", lo, hi);
    fk_massfn mf;
    fk_error err = {0};
    if (fk_massfn_count(c.values, c.n, lo, hi, per_dex, &mf, &err)) prog_fail(&err);

    fk_output *out = prog_open_output(&std, 0);
    FILE *o = fk_output_file(out);
    int k = 0;
    while (k < c.ncols && strcmp(c.names[k], column) != 0) k++;
    const char *unit = c.units[k] ? c.units[k] : "unknown";
    fprintf(o, "# halomf (fofkit %s): the mass function of column %s (unit %s) of %s, level %ld\n", FK_VERSION, column,
            unit, c.name, level);
    fprintf(o, "# %" PRIu64 " of %zu rows in the bins; %" PRIu64 " below, %" PRIu64 " above; %" PRIu64
               " skipped (nan or not positive)\n",
            (uint64_t)(c.n - mf.below - mf.above - mf.skipped), c.n, mf.below, mf.above, mf.skipped);
    fprintf(o, "# volume %.10g %s^3 (%s); %g bins per dex from %.10g\n", volume, c.length_name, vol_from, per_dex, lo);
    fprintf(o, "# n: rows in [lo, hi); dn_dlog10m = n / (volume dlog10); n_ge: rows >= lo per volume (above the\n"
               "# range included)\n");
    fprintf(o, "# log10_lo log10_hi m_mid n dn_dlog10m n_ge\n");
    uint64_t cum = mf.above;
    for (size_t b = 0; b < mf.nbins; b++) cum += mf.count[b];
    for (size_t b = 0; b < mf.nbins; b++) {
        double l0 = mf.log_lo + (double)b * mf.dlog, l1 = l0 + mf.dlog;
        fprintf(o, "%.6f %.6f %.6g %" PRIu64 " %.6g %.6g\n", l0, l1, pow(10, l0 + mf.dlog / 2), mf.count[b],
                (double)mf.count[b] / (volume * mf.dlog), (double)cum / volume);
        cum -= mf.count[b];
    }
    prog_commit(out);
    fk_massfn_free(&mf);
    for (int j = 0; j < MAX_COLS; j++) free(c.names[j]), free(c.units[j]);
    free(c.values);
    return EXIT_OK;
}
