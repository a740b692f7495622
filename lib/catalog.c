/* catalog.c - a halostats catalogue read back (text, CSV or HCOL/HALO stream chunks): any column of any level, and the halos pictures draw. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog.h"
#include "kv.h"
#include "sniff.h"
#include "snap.h"
#include "stream.h"

static void tab_init(fk_cattab *t)
{
    memset(t, 0, sizeof *t);
    t->level = -1;
    t->length = 1;
}

int fk_cattab_find(const fk_cattab *t, const char *col)
{
    for (int k = 0; k < t->ncols; k++)
        if (!strcmp(t->names[k], col)) return k;
    return -1;
}

static int add_name(fk_cattab *t, const char *s, const char *name, fk_error *err)
{
    if (t->ncols == FK_CAT_MAXCOLS) return fk_fail(err, FK_EFORMAT, "%s: more than %d columns", name, FK_CAT_MAXCOLS);
    /* a CSV header's "name[unit]": the unit apart */
    size_t len = strlen(s);
    const char *open = strchr(s, '[');
    if (open && open > s && len > 0 && s[len - 1] == ']') {
        snprintf(t->units[t->ncols], FK_CAT_NAME, "%.*s", (int)(len - 2 - (size_t)(open - s)), open + 1);
        len = (size_t)(open - s);
    }
    snprintf(t->names[t->ncols], FK_CAT_NAME, "%.*s", (int)(len < FK_CAT_NAME ? len : FK_CAT_NAME - 1), s);
    s = t->names[t->ncols];
    if (!strcmp(s, "level") && t->level < 0) t->level = t->ncols;
    t->ncols++;
    return FK_OK;
}

/* Room for one more row; returns it. */
static double *add_row(fk_cattab *t, size_t *cap, const char *name, fk_error *err)
{
    if (t->nrows == *cap) {
        size_t nc = *cap ? 2 * *cap : 256;
        double *v = realloc(t->v, nc * (size_t)t->ncols * sizeof *v);
        if (!v) {
            fk_fail(err, FK_ENOMEM, "%s: no memory for %zu rows", name, nc);
            return NULL;
        }
        t->v = v;
        *cap = nc;
    }
    return t->v + t->nrows++ * (size_t)t->ncols;
}

/* Splits s (modified) into fields: runs of blanks in text, commas (blanks
 * around them trimmed) in CSV. Returns the count, at most max + 1. */
static int split(char *s, int csv, char **f, int max)
{
    int n = 0;
    char *p = s;
    while (*p && n <= max) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p && !csv) break;
        f[n++] = p;
        if (csv) {
            char *c = strchr(p, ',');
            char *e = c ? c : p + strlen(p);
            char *q = e;
            while (q > p && isspace((unsigned char)q[-1])) q--;
            *q = 0;
            if (!c) break;
            p = c + 1;
        } else {
            while (*p && !isspace((unsigned char)*p)) p++;
            if (*p) *p++ = 0;
        }
    }
    return n;
}

/* The '#' lines of a text catalogue: the box, the length unit and the units of the columns. */
static void header_line(fk_cattab *t, const char *s, char (*units)[FK_CAT_NAME])
{
    double box, origin, l, m, v;
    int periodic;
    unsigned k;
    char ln[FK_CAT_NAME], mn[FK_CAT_NAME], vn[FK_CAT_NAME], col[FK_CAT_NAME], unit[FK_CAT_NAME];
    if (sscanf(s, "# box %lf origin %lf periodic %d", &box, &origin, &periodic) == 3 && box > 0) {
        t->has_box = 1;
        t->box = box;
        t->origin = origin;
        t->periodic = periodic != 0;
    }
    if (sscanf(s, "# units: length %63[^,], mass %63[^,], velocity %63[^;]; one stream unit is %lf, %lf, %lf", ln, mn,
               vn, &l, &m, &v) == 6) {
        t->length = l;
        snprintf(t->length_name, sizeof t->length_name, "%s", ln);
    }
    if (sscanf(s, "# %u %63s %63s", &k, col, unit) == 3 && k >= 1 && k <= FK_CAT_MAXCOLS && !units[k - 1][0])
        snprintf(units[k - 1], FK_CAT_NAME, "%s", unit);
}

static int read_text(FILE *f, const char *name, fk_cattab *t, fk_error *err)
{
    char *line = NULL, *names = NULL, *fields[FK_CAT_MAXCOLS + 1];
    char(*units)[FK_CAT_NAME] = calloc(FK_CAT_MAXCOLS, FK_CAT_NAME);
    size_t lcap = 0, cap = 0;
    int st = units ? FK_OK : fk_fail(err, FK_ENOMEM, "%s: no memory", name), csv = -1;
    long lineno = 0;
    ssize_t len;
    unsigned char head[FK_SNIFF_BYTES]; /* the first line's first bytes: a snapshot is named */
    size_t nhead = 0;
    while (st == FK_OK && (len = getline(&line, &lcap, f)) != -1) {
        lineno++;
        if (lineno == 1) memcpy(head, line, nhead = (size_t)len < sizeof head ? (size_t)len : sizeof head);
        if (len && line[len - 1] == '\n') line[--len] = 0;
        char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (*s == '#') {
            if (csv < 0) {
                header_line(t, s, units);
                free(names);
                if (!(names = strdup(s + 1))) st = fk_fail(err, FK_ENOMEM, "%s: no memory", name);
            }
            continue;
        }
        if (!*s) continue;
        if (csv < 0) {
            /* The first row: CSV names, or the first data row under the text header's names. */
            csv = strchr(s, ',') != NULL && !names;
            char *hdr = csv ? s : names;
            const int kind = fk_sniff(head, nhead);
            if (!hdr && kind != FK_FILE_UNKNOWN) {
                st = fk_fail(err, FK_EFORMAT, "%s: not a catalogue but %s (%s)", name, fk_sniff_what(kind),
                             fk_sniff_advice(kind));
                break;
            }
            if (!hdr) {
                st = fk_fail(err, FK_EFORMAT, "%s: line %ld: no header naming the columns", name, lineno);
                break;
            }
            int n = split(hdr, csv, fields, FK_CAT_MAXCOLS);
            for (int k = 0; k < n && st == FK_OK; k++) st = add_name(t, fields[k], name, err);
            for (int k = 0; k < t->ncols && !csv; k++) memcpy(t->units[k], units[k], FK_CAT_NAME);
            if (st != FK_OK || csv) continue;
        }
        int n = split(s, csv, fields, t->ncols);
        if (n != t->ncols) {
            st = fk_fail(err, FK_EFORMAT, "%s: line %ld: %d columns, the header names %d", name, lineno, n, t->ncols);
            break;
        }
        double *row = add_row(t, &cap, name, err);
        if (!row) {
            st = FK_ENOMEM;
            break;
        }
        for (int k = 0; k < n; k++) {
            char *end;
            row[k] = strtod(fields[k], &end);
            if (end == fields[k] || *end) {
                st = fk_fail(err, FK_EFORMAT, "%s: line %ld: %s '%s' is not a number", name, lineno, t->names[k],
                             fields[k]);
                break;
            }
        }
    }
    if (st == FK_OK && ferror(f)) st = fk_fail(err, FK_EIO, "%s: read error", name);
    if (st == FK_OK && csv < 0) {
        /* No row: a catalogue of no halos is valid when its header names the columns. */
        const int kind = fk_sniff(head, nhead);
        if (!names && kind != FK_FILE_UNKNOWN) {
            st = fk_fail(err, FK_EFORMAT, "%s: not a catalogue but %s (%s)", name, fk_sniff_what(kind),
                         fk_sniff_advice(kind));
        } else if (!names) {
            st = fk_fail(err, FK_EFORMAT, "%s: no header naming the columns (not a catalogue?)", name);
        } else {
            int n = split(names, 0, fields, FK_CAT_MAXCOLS);
            for (int k = 0; k < n && st == FK_OK; k++) st = add_name(t, fields[k], name, err);
            for (int k = 0; k < t->ncols; k++) memcpy(t->units[k], units[k], FK_CAT_NAME);
            if (st == FK_OK && !t->ncols) /* a bare '#' line names nothing */
                st = fk_fail(err, FK_EFORMAT, "%s: no header naming the columns (not a catalogue?)", name);
        }
    }
    free(line);
    free(names);
    free(units);
    return st;
}

/* The columns, units and length unit of an HCOL text. */
static int hcol_columns(fk_cattab *t, const char *hcol, uint32_t cols, const char *name, fk_error *err)
{
    uint32_t found = 0;
    t->ncols = (int)cols;
    if (cols > FK_CAT_MAXCOLS) return fk_fail(err, FK_EFORMAT, "%s: more than %d columns", name, FK_CAT_MAXCOLS);
    for (const char *p = hcol; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        int k, len = 0;
        char col[FK_CAT_NAME], unit[FK_CAT_NAME] = "";
        if (sscanf(p, "column_%d %63s%n", &k, col, &len) == 2 && len > 0 && k >= 1 && (uint32_t)k <= cols) {
            if (!t->names[k - 1][0]) found++;
            snprintf(t->names[k - 1], FK_CAT_NAME, "%s", col);
            if (sscanf(p + len, "%63s", unit) == 1) snprintf(t->units[k - 1], FK_CAT_NAME, "%s", unit);
            if (!strcmp(col, "level")) t->level = k - 1;
        }
    }
    if (found != cols || !cols)
        return fk_fail(err, FK_EFORMAT, "%s: HCOL names %u of the %u columns of HALO", name, found, cols);
    double l;
    char ln[FK_CAT_NAME];
    fk_error ignore = {0};
    if (fk_kv_has(hcol, "length_unit") && fk_kv_get_dbl(hcol, "length_unit", &l, name, &ignore) == FK_OK && l > 0)
        t->length = l;
    if (fk_kv_has(hcol, "length_name") && fk_kv_get_str(hcol, "length_name", ln, sizeof ln, name, &ignore) == FK_OK)
        snprintf(t->length_name, sizeof t->length_name, "%s", ln);
    return FK_OK;
}

int fk_cattab_from_chunks(const char *hcol, const double *halo, uint64_t rows, uint32_t cols, const char *name,
                          fk_cattab *t, fk_error *err)
{
    tab_init(t);
    int st = hcol_columns(t, hcol, cols, name, err);
    if (st == FK_OK && rows) {
        if (!(t->v = malloc(rows * cols * sizeof *t->v))) {
            st = fk_fail(err, FK_ENOMEM, "%s: no memory for %llu rows", name, (unsigned long long)rows);
        } else {
            memcpy(t->v, halo, rows * cols * sizeof *t->v);
            t->nrows = rows;
        }
    }
    if (st) fk_cattab_free(t);
    return st;
}

static int read_stream(FILE *f, const char *name, fk_cattab *t, fk_error *err)
{
    fk_reader *r;
    int st = fk_reader_open(&r, f, name, err);
    if (st) return st;
    fk_chunk c;
    char *hcol = NULL;
    double *halo = NULL;
    size_t cap = 0;
    int halos = 0;
    while ((st = fk_reader_next(r, &c, err)) == 1) {
        if (!strcmp(c.tag, "SNAP")) {
            char *text;
            fk_snap s;
            if ((st = fk_reader_load_text(r, &text, err))) break;
            st = fk_snap_parse(text, &s, name, err);
            free(text);
            if (st) break;
            t->has_box = 1;
            t->box = s.box;
            t->origin = s.origin;
            t->periodic = s.periodic;
        } else if (!strcmp(c.tag, "HCOL") && !hcol) {
            if ((st = fk_reader_load_text(r, &hcol, err))) break;
        } else if (!strcmp(c.tag, "HALO")) {
            /* HALO follows HCOL; every level's rows, in the order of the levels. */
            if (!hcol) {
                st = fk_fail(err, FK_EFORMAT, "%s: a HALO chunk before HCOL", name);
                break;
            }
            if (strcmp(c.dtype, "<f8") != 0) {
                st = fk_fail(err, FK_EFORMAT, "%s: HALO holds %s, not <f8", name, c.dtype);
                break;
            }
            if (!halos++ && (st = hcol_columns(t, hcol, c.ncols, name, err))) break;
            if (c.ncols != (uint32_t)t->ncols) {
                st = fk_fail(err, FK_EFORMAT, "%s: HALO of level %u has %u columns, not %d", name, c.level, c.ncols,
                             t->ncols);
                break;
            }
            if (t->level < 0 && c.level != 0) continue; /* without a level column only level 0 can be told */
            if ((st = fk_reader_load(r, (void **)&halo, err))) break;
            for (uint64_t i = 0; i < c.nrows; i++) {
                double *row = add_row(t, &cap, name, err);
                if (!row) {
                    st = FK_ENOMEM;
                    break;
                }
                memcpy(row, halo + i * c.ncols, c.ncols * sizeof *row);
            }
            free(halo);
            halo = NULL;
            if (st) break;
        }
    }
    if (st == 0 && (!hcol || !halos))
        st = fk_fail(err, FK_EMISSING, "%s: no %s chunk (write it with halostats --format=stream)", name,
                     hcol ? "HALO" : "HCOL");
    free(hcol);
    fk_reader_close(r);
    return st < 0 ? st : FK_OK;
}

int fk_cattab_read(FILE *f, const char *name, fk_cattab *t, fk_error *err)
{
    tab_init(t);
    int c = getc(f);
    struct stat sb;
    if (c == EOF && fstat(fileno(f), &sb) == 0 && S_ISFIFO(sb.st_mode))
        return fk_fail(err, FK_ECUT, "%s: no input (the program writing the pipe stopped before writing anything)",
                       name);
    if (c == EOF) return fk_fail(err, FK_EFORMAT, "%s: empty input", name);
    ungetc(c, f);
    int st = c == 0x89 ? read_stream(f, name, t, err) : read_text(f, name, t, err);
    if (st) fk_cattab_free(t);
    return st;
}

int fk_cattab_column(const fk_cattab *t, const char *col, long level, const char *name, double **out, size_t *n,
                     fk_error *err)
{
    *out = NULL;
    *n = 0;
    int k = fk_cattab_find(t, col);
    if (k < 0) return fk_fail(err, FK_EMISSING, "%s: no column '%s' in the catalogue", name, col);
    if (t->level < 0 && level != 0)
        return fk_fail(err, FK_EMISSING, "%s: no level column, so no level %ld", name, level);
    if (!(*out = malloc((t->nrows ? t->nrows : 1) * sizeof **out)))
        return fk_fail(err, FK_ENOMEM, "%s: no memory for %zu values", name, t->nrows);
    for (size_t i = 0; i < t->nrows; i++) {
        const double *row = t->v + i * (size_t)t->ncols;
        if (t->level < 0 || row[t->level] == (double)level) (*out)[(*n)++] = row[k];
    }
    return FK_OK;
}

void fk_cattab_free(fk_cattab *t)
{
    free(t->v);
    tab_init(t);
}

/* The level-0 halos of a table. */
static int halos_of(const fk_cattab *t, const char *name, fk_catalog *cat, fk_error *err)
{
    static const char *const xs[3] = {"x", "y", "z"}, *const xcs[3] = {"xc", "yc", "zc"};
    int id = fk_cattab_find(t, "id"), n = fk_cattab_find(t, "n"), mass = fk_cattab_find(t, "mass"), x[3];
    int r = fk_cattab_find(t, "rc_max");
    if (r < 0) r = fk_cattab_find(t, "rmax");
    const int mc = fk_cattab_find(t, "m_contam"), nc = fk_cattab_find(t, "n_contam");
    if (id < 0) return fk_fail(err, FK_EMISSING, "%s: no column 'id' (not a halostats catalogue?)", name);
    if (mass < 0 && n < 0) return fk_fail(err, FK_EMISSING, "%s: no column 'mass' or 'n'", name);
    for (int k = 0; k < 3; k++) {
        x[k] = fk_cattab_find(t, xcs[k]);
        if (x[k] < 0) x[k] = fk_cattab_find(t, xs[k]);
        if (x[k] < 0) return fk_fail(err, FK_EMISSING, "%s: no columns x y z", name);
    }
    cat->has_box = t->has_box;
    cat->box = t->box;
    cat->origin = t->origin;
    cat->periodic = t->periodic;
    cat->has_contam = mc >= 0;
    cat->length = t->length_name[0] ? t->length : 0;
    snprintf(cat->length_name, sizeof cat->length_name, "%s", t->length_name[0] ? t->length_name : t->units[x[0]]);
    if (t->nrows && !(cat->h = malloc(t->nrows * sizeof *cat->h)))
        return fk_fail(err, FK_ENOMEM, "%s: no memory for %zu halos", name, t->nrows);
    for (size_t i = 0; i < t->nrows; i++) {
        const double *v = t->v + i * (size_t)t->ncols;
        if (t->level >= 0 && v[t->level] != 0) continue;
        const int used[] = {id, n, mass, x[0], x[1], x[2], r};
        for (size_t u = 0; u < sizeof used / sizeof *used; u++)
            if (used[u] >= 0 && !isfinite(v[used[u]]))
                return fk_fail(err, FK_EFORMAT, "%s: row %zu: %s is not a finite number", name, i + 1,
                               t->names[used[u]]);
        fk_cat_halo *h = &cat->h[cat->n++];
        h->id = (uint64_t)v[id];
        h->n = n >= 0 ? (uint64_t)v[n] : 0;
        h->mass = mass >= 0 ? v[mass] : (double)h->n;
        for (int k = 0; k < 3; k++) h->x[k] = v[x[k]];
        h->r = r >= 0 ? v[r] : 0;
        h->contam = mc >= 0 ? fk_cat_contam(v[mc], mass >= 0 ? v[mass] : NAN, nc >= 0 ? v[nc] : NAN, h->n) : NAN;
    }
    return FK_OK;
}

double fk_cat_contam(double m_contam, double mass, double n_contam, double n)
{
    if (mass > 0) return m_contam / mass;
    if (n > 0 && n_contam >= 0) return n_contam / n;
    return 0;
}

int fk_cattab_contam(const fk_cattab *t, long level, const char *name, double **out, size_t *n, fk_error *err)
{
    double *mc = NULL, *m = NULL, *nc = NULL, *np = NULL;
    size_t k;
    *out = NULL, *n = 0;
    if (fk_cattab_find(t, "m_contam") < 0)
        return fk_fail(err, FK_EMISSING, "%s: no column 'm_contam' (a catalogue of an older halostats: run halostats "
                       "again)", name);
    int st = fk_cattab_column(t, "m_contam", level, name, &mc, n, err);
    if (!st && fk_cattab_find(t, "mass") >= 0) st = fk_cattab_column(t, "mass", level, name, &m, &k, err);
    if (!st && fk_cattab_find(t, "n_contam") >= 0) st = fk_cattab_column(t, "n_contam", level, name, &nc, &k, err);
    if (!st && fk_cattab_find(t, "n") >= 0) st = fk_cattab_column(t, "n", level, name, &np, &k, err);
    if (!st) {
        for (size_t i = 0; i < *n; i++)
            mc[i] = fk_cat_contam(mc[i], m ? m[i] : NAN, nc ? nc[i] : NAN, np ? np[i] : NAN);
        *out = mc, mc = NULL;
    } else {
        *n = 0;
    }
    free(mc), free(m), free(nc), free(np);
    return st;
}

int fk_catalog_clean(fk_catalog *cat, double fmax, const char *name, size_t *dropped, fk_error *err)
{
    *dropped = 0;
    if (!cat->has_contam)
        return fk_fail(err, FK_EMISSING, "%s: no column 'm_contam' (a catalogue of an older halostats: run halostats "
                       "again)", name);
    size_t k = 0;
    for (size_t i = 0; i < cat->n; i++)
        if (!(cat->h[i].contam > fmax)) cat->h[k++] = cat->h[i];
    *dropped = cat->n - k;
    cat->n = k;
    return FK_OK;
}

int fk_catalog_read(FILE *f, const char *name, fk_catalog *cat, fk_error *err)
{
    memset(cat, 0, sizeof *cat);
    fk_cattab *t = malloc(sizeof *t);
    if (!t) return fk_fail(err, FK_ENOMEM, "%s: no memory", name);
    int st = fk_cattab_read(f, name, t, err);
    if (st == FK_OK) st = halos_of(t, name, cat, err);
    if (st) fk_catalog_free(cat);
    fk_cattab_free(t);
    free(t);
    return st;
}

int fk_catalog_from_chunks(const char *hcol, const double *halo, uint64_t rows, uint32_t cols, const char *name,
                           fk_catalog *cat, fk_error *err)
{
    memset(cat, 0, sizeof *cat);
    fk_cattab *t = malloc(sizeof *t);
    if (!t) return fk_fail(err, FK_ENOMEM, "%s: no memory", name);
    int st = fk_cattab_from_chunks(hcol, halo, rows, cols, name, t, err);
    if (st == FK_OK) st = halos_of(t, name, cat, err);
    if (st) fk_catalog_free(cat);
    fk_cattab_free(t);
    free(t);
    return st;
}

static int by_mass(const void *a, const void *b)
{
    const fk_cat_halo *x = a, *y = b;
    if (x->mass != y->mass) return x->mass > y->mass ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

void fk_catalog_sort_mass(fk_catalog *cat)
{
    if (cat->n) qsort(cat->h, cat->n, sizeof *cat->h, by_mass);
}

const fk_cat_halo *fk_catalog_find(const fk_catalog *cat, uint64_t id)
{
    for (size_t i = 0; i < cat->n; i++)
        if (cat->h[i].id == id) return &cat->h[i];
    return NULL;
}

void fk_catalog_free(fk_catalog *cat)
{
    free(cat->h);
    memset(cat, 0, sizeof *cat);
}
