/* fuzz_catalog.c - fuzz harness: halostats catalogues read back (text, CSV, stream) for halomf and fofmap, and halomf's reference curves. */
#include <math.h>

#include "catalog.h"
#include "fuzz.h"
#include "massfunc_plot.h"

/* The input is read as a catalogue table (fk_cattab_read: halomf), as the
 * halos fofmap draws (fk_catalog_read) and as a reference curve
 * (fk_mf_curve_read). A table that reads must hold what its columns say; a
 * catalogue, finite centres and radii; a curve, two or more points, masses
 * positive and increasing, densities finite and not negative. Every failure
 * is one line. */

static void table(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_memfile(data, size);
    if (!f) return;
    fk_cattab *t = malloc(sizeof *t);
    if (!t) abort();
    fk_error err = {0};
    int st = fk_cattab_read(f, "fuzz", t, &err);
    fclose(f);
    FUZZ_ASSERT_ERR(st, err);
    if (st == FK_OK) {
        FUZZ_ASSERT(t->ncols > 0 && t->ncols <= FK_CAT_MAXCOLS && (t->nrows == 0 || t->v));
        FUZZ_ASSERT(t->level < t->ncols && t->length > 0);
        double *v;
        size_t n;
        fk_error e = {0};
        st = fk_cattab_column(t, t->names[0], 0, "fuzz", &v, &n, &e);
        FUZZ_ASSERT_ERR(st, e);
        if (st == FK_OK) {
            FUZZ_ASSERT(n <= t->nrows);
            free(v);
        }
        fk_cattab_free(t);
    }
    free(t);
}

static void halos(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_memfile(data, size);
    if (!f) return;
    fk_catalog cat = {0};
    fk_error err = {0};
    int st = fk_catalog_read(f, "fuzz", &cat, &err);
    fclose(f);
    FUZZ_ASSERT_ERR(st, err);
    if (st) return;
    for (size_t i = 0; i < cat.n; i++)
        FUZZ_ASSERT(isfinite(cat.h[i].x[0]) && isfinite(cat.h[i].x[1]) && isfinite(cat.h[i].x[2]) &&
                    isfinite(cat.h[i].r));
    FUZZ_ASSERT(cat.length >= 0 && strlen(cat.length_name) < sizeof cat.length_name);
    fk_catalog_sort_mass(&cat);
    for (size_t i = 1; i < cat.n; i++) FUZZ_ASSERT(!(cat.h[i].mass > cat.h[i - 1].mass));
    fk_catalog_free(&cat);
}

static void curve(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_memfile(data, size);
    if (!f) return;
    fk_mf_curve c;
    fk_error err = {0};
    int st = fk_mf_curve_read(f, "fuzz", &c, &err);
    fclose(f);
    FUZZ_ASSERT_ERR(st, err);
    if (st) {
        FUZZ_ASSERT(c.n == 0 && !c.m && !c.dn);
        return;
    }
    FUZZ_ASSERT(c.n >= 2);
    for (size_t i = 0; i < c.n; i++) {
        FUZZ_ASSERT(c.m[i] > 0 && isfinite(c.m[i]) && c.dn[i] >= 0 && isfinite(c.dn[i]));
        if (i) FUZZ_ASSERT(c.m[i] > c.m[i - 1]);
    }
    fk_mf_curve_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    table(data, size);
    halos(data, size);
    curve(data, size);
    return 0;
}
