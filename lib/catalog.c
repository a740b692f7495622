/* catalog.c - a halo catalogue read back for pictures: halostats' text, CSV or HCOL/HALO stream chunks. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "snap.h"
#include "stream.h"

#define MAXCOLS 256

/* Where the wanted columns are among a catalogue's names (-1: absent). */
typedef struct colmap {
    int level, id, n, mass, x[3], xc[3], rmax, rc_max;
} colmap;

static void colmap_init(colmap *m)
{
    m->level = m->id = m->n = m->mass = m->rmax = m->rc_max = -1;
    for (int k = 0; k < 3; k++) m->x[k] = m->xc[k] = -1;
}

static void colmap_name(colmap *m, const char *s, int i)
{
    static const char *const xs[3] = {"x", "y", "z"}, *const xcs[3] = {"xc", "yc", "zc"};
    if (!strcmp(s, "level")) m->level = i;
    if (!strcmp(s, "id")) m->id = i;
    if (!strcmp(s, "n")) m->n = i;
    if (!strcmp(s, "mass")) m->mass = i;
    if (!strcmp(s, "rmax")) m->rmax = i;
    if (!strcmp(s, "rc_max")) m->rc_max = i;
    for (int k = 0; k < 3; k++) {
        if (!strcmp(s, xs[k])) m->x[k] = i;
        if (!strcmp(s, xcs[k])) m->xc[k] = i;
    }
}

static int colmap_check(const colmap *m, const char *name, fk_error *err)
{
    if (m->id < 0) return fk_fail(err, FK_EMISSING, "%s: no column 'id' (not a halostats catalogue?)", name);
    if (m->mass < 0 && m->n < 0) return fk_fail(err, FK_EMISSING, "%s: no column 'mass' or 'n'", name);
    for (int k = 0; k < 3; k++)
        if (m->x[k] < 0 && m->xc[k] < 0) return fk_fail(err, FK_EMISSING, "%s: no columns x y z", name);
    return FK_OK;
}

/* Appends the halo of one row v (ncols values) unless it is of a level > 0. */
static int add_row(fk_catalog *cat, size_t *cap, const colmap *m, const double *v, fk_error *err)
{
    if (m->level >= 0 && v[m->level] != 0) return FK_OK;
    if (cat->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 256;
        fk_cat_halo *h = realloc(cat->h, nc * sizeof *h);
        if (!h) return fk_fail(err, FK_ENOMEM, "no memory for %zu halos", nc);
        cat->h = h;
        *cap = nc;
    }
    fk_cat_halo *h = &cat->h[cat->n++];
    h->id = (uint64_t)v[m->id];
    h->n = m->n >= 0 ? (uint64_t)v[m->n] : 0;
    h->mass = m->mass >= 0 ? v[m->mass] : (double)h->n;
    for (int k = 0; k < 3; k++) h->x[k] = m->xc[k] >= 0 ? v[m->xc[k]] : v[m->x[k]];
    h->r = m->rc_max >= 0 ? v[m->rc_max] : m->rmax >= 0 ? v[m->rmax] : 0;
    return FK_OK;
}

/* Reads one line of any length into *buf; 0 at the end of the input. */
static int get_line(FILE *f, char **buf, size_t *cap, int *eof)
{
    ssize_t len = getline(buf, cap, f);
    if (len < 0) {
        *eof = 1;
        return 0;
    }
    if (len && (*buf)[len - 1] == '\n') (*buf)[--len] = 0;
    return 1;
}

static int read_text(FILE *f, const char *name, fk_catalog *cat, fk_error *err)
{
    char *line = NULL, *names = NULL;
    size_t lcap = 0, cap = 0;
    int eof = 0, st = FK_OK, csv = -1, ncols = 0;
    long lineno = 0;
    colmap m;
    colmap_init(&m);
    double v[MAXCOLS];
    while (st == FK_OK && get_line(f, &line, &lcap, &eof)) {
        lineno++;
        char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (*s == '#') {
            /* "# box 1 origin -0.5 periodic 1": the box of a periodic catalogue. */
            double box, origin;
            int periodic;
            if (sscanf(s, "# box %lf origin %lf periodic %d", &box, &origin, &periodic) == 3 && box > 0) {
                cat->has_box = 1;
                cat->box = box;
                cat->origin = origin;
                cat->periodic = periodic != 0;
            }
            free(names);
            names = strdup(s + 1);
            if (!names) st = fk_fail(err, FK_ENOMEM, "no memory");
            continue;
        }
        if (!*s) continue;
        if (csv < 0) {
            /* The first row: CSV names, or the first data row under the text header's names. */
            csv = strchr(s, ',') != NULL && !names;
            char *hdr = csv ? s : names;
            if (!hdr) {
                st = fk_fail(err, FK_EFORMAT, "%s: line %ld: no header naming the columns", name, lineno);
                break;
            }
            char *save = NULL;
            for (char *t = strtok_r(hdr, csv ? ", \t" : " \t", &save); t; t = strtok_r(NULL, csv ? ", \t" : " \t", &save)) {
                if (ncols == MAXCOLS) {
                    st = fk_fail(err, FK_EFORMAT, "%s: more than %d columns", name, MAXCOLS);
                    break;
                }
                colmap_name(&m, t, ncols++);
            }
            if (st == FK_OK) st = colmap_check(&m, name, err);
            if (st != FK_OK || csv) continue;
        }
        int k = 0;
        char *p = s;
        while (*p && k <= ncols) {
            char *end;
            errno = 0;
            double x = strtod(p, &end);
            if (end == p || !(isspace((unsigned char)*end) || *end == ',' || !*end) || !isfinite(x)) {
                st = fk_fail(err, FK_EFORMAT, "%s: line %ld: column %d is not a finite number", name, lineno, k + 1);
                break;
            }
            if (k < ncols) v[k] = x;
            k++;
            p = end;
            while (isspace((unsigned char)*p) || *p == ',') p++;
        }
        if (st == FK_OK && k != ncols)
            st = fk_fail(err, FK_EFORMAT, "%s: line %ld: %d columns, the header names %d", name, lineno, k, ncols);
        if (st == FK_OK) st = add_row(cat, &cap, &m, v, err);
    }
    if (st == FK_OK && ferror(f)) st = fk_fail(err, FK_EIO, "%s: read error", name);
    if (st == FK_OK && csv < 0) {
        /* No row: a catalogue of no halos is valid when its header names the columns. */
        if (!names) {
            st = fk_fail(err, FK_EFORMAT, "%s: no header naming the columns (not a catalogue?)", name);
        } else {
            char *save = NULL;
            for (char *t = strtok_r(names, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) colmap_name(&m, t, ncols++);
            st = colmap_check(&m, name, err);
        }
    }
    free(line);
    free(names);
    return st;
}

int fk_catalog_from_chunks(const char *hcol, const double *halo, uint64_t rows, uint32_t cols, const char *name,
                           fk_catalog *cat, fk_error *err)
{
    colmap m;
    colmap_init(&m);
    /* HCOL lines "column_K name unit definition", K from 1. */
    for (const char *p = hcol; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        int k, len = 0;
        char col[64];
        if (sscanf(p, "column_%d %63s%n", &k, col, &len) == 2 && len > 0 && k >= 1 && (uint32_t)k <= cols)
            colmap_name(&m, col, k - 1);
    }
    int st = colmap_check(&m, name, err);
    size_t cap = 0;
    for (uint64_t i = 0; st == FK_OK && i < rows; i++) st = add_row(cat, &cap, &m, halo + i * cols, err);
    return st;
}

static int read_stream(FILE *f, const char *name, fk_catalog *cat, fk_error *err)
{
    fk_reader *r;
    int st = fk_reader_open(&r, f, name, err);
    if (st) return st;
    fk_chunk c;
    char *hcol = NULL;
    double *halo = NULL;
    uint64_t rows = 0;
    uint32_t cols = 0;
    while ((st = fk_reader_next(r, &c, err)) == 1) {
        if (!strcmp(c.tag, "SNAP")) {
            char *text;
            fk_snap s;
            if ((st = fk_reader_load_text(r, &text, err))) break;
            st = fk_snap_parse(text, &s, name, err);
            free(text);
            if (st) break;
            cat->has_box = 1;
            cat->box = s.box;
            cat->origin = s.origin;
            cat->periodic = s.periodic;
        } else if (!strcmp(c.tag, "HCOL") && !hcol) {
            if ((st = fk_reader_load_text(r, &hcol, err))) break;
        } else if (!strcmp(c.tag, "HALO") && c.level == 0 && !halo) {
            if (strcmp(c.dtype, "<f8") != 0) {
                st = fk_fail(err, FK_EFORMAT, "%s: HALO holds %s, not <f8", name, c.dtype);
                break;
            }
            if ((st = fk_reader_load(r, (void **)&halo, err))) break;
            rows = c.nrows;
            cols = c.ncols;
        }
    }
    if (st == 0) {
        if (!hcol || !halo)
            st = fk_fail(err, FK_EMISSING, "%s: no %s chunk (write it with halostats --format=stream)", name,
                         hcol ? "HALO" : "HCOL");
        else
            st = fk_catalog_from_chunks(hcol, halo, rows, cols, name, cat, err);
    }
    free(hcol);
    free(halo);
    fk_reader_close(r);
    return st < 0 ? st : FK_OK;
}

int fk_catalog_read(FILE *f, const char *name, fk_catalog *cat, fk_error *err)
{
    memset(cat, 0, sizeof *cat);
    int c = getc(f);
    if (c == EOF) return fk_fail(err, FK_EFORMAT, "%s: empty input", name);
    ungetc(c, f);
    int st = c == 0x89 ? read_stream(f, name, cat, err) : read_text(f, name, cat, err);
    if (st) fk_catalog_free(cat);
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
