/* massfunc_plot.c - what a mass function's picture shows: its points dn/dlog10 M with Poisson errors, a reference curve read from a file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "massfunc_plot.h"


int fk_massfunc_points(const fk_massfunc *mf, double volume, fk_mf_bin *bins, fk_error *err)
{
    if (!(volume > 0) || !isfinite(volume)) return fk_fail(err, FK_EINVAL, "mass function: volume %g", volume);
    for (size_t k = 0; k < mf->nbins; k++) {
        double d = volume * mf->dlog;
        bins[k].lo = mf->log_lo + (double)k * mf->dlog;
        bins[k].hi = bins[k].lo + mf->dlog;
        bins[k].count = (size_t)mf->count[k];
        bins[k].dn = (double)mf->count[k] / d;
        bins[k].err = sqrt((double)mf->count[k]) / d;
    }
    return FK_OK;
}

int fk_mf_curve_read(FILE *f, const char *name, fk_mf_curve *c, fk_error *err)
{
    char line[4096];
    size_t cap = 0, lineno = 0;
    int st = FK_OK;
    memset(c, 0, sizeof *c);
    while (st == FK_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line + strspn(line, " \t\r\n");
        if (!*p || *p == '#') continue;
        if (!strchr(line, '\n') && !feof(f)) {
            st = fk_fail(err, FK_EFORMAT, "%s: line %zu: longer than %zu characters", name, lineno, sizeof line - 2);
            break;
        }
        char *end;
        double m = strtod(p, &end);
        if (end == p || !strchr(" \t", *end)) {
            st = fk_fail(err, FK_EFORMAT, "%s: line %zu: not two numbers (mass, dn/dlog10 M)", name, lineno);
            break;
        }
        p = end;
        double dn = strtod(p, &end);
        if (end == p || !strchr(" \t\r\n", *end)) {
            st = fk_fail(err, FK_EFORMAT, "%s: line %zu: not two numbers (mass, dn/dlog10 M)", name, lineno);
            break;
        }
        if (!(m > 0) || !isfinite(m) || !(dn >= 0) || !isfinite(dn)) {
            st = fk_fail(err, FK_EFORMAT, "%s: line %zu: mass %g, dn/dlog10 M %g (a positive mass and a density of "
                         "0 or more)", name, lineno, m, dn);
            break;
        }
        if (c->n && !(m > c->m[c->n - 1])) {
            st = fk_fail(err, FK_EFORMAT, "%s: line %zu: mass %g after %g (masses must increase)", name, lineno, m,
                         c->m[c->n - 1]);
            break;
        }
        if (c->n == cap) {
            cap = cap ? 2 * cap : 256;
            double *a = realloc(c->m, cap * sizeof *a), *b = a ? realloc(c->dn, cap * sizeof *b) : NULL;
            if (a) c->m = a;
            if (b) c->dn = b;
            if (!a || !b) {
                st = fk_fail(err, FK_ENOMEM, "%s: no memory for %zu points", name, cap);
                break;
            }
        }
        c->m[c->n] = m;
        c->dn[c->n++] = dn;
    }
    if (st == FK_OK && ferror(f)) st = fk_fail(err, FK_EIO, "%s: cannot read", name);
    if (st == FK_OK && c->n < 2)
        st = fk_fail(err, FK_EFORMAT, "%s: %zu points: a reference curve needs two or more lines of mass and "
                     "dn/dlog10 M", name, c->n);
    if (st) fk_mf_curve_free(c);
    return st;
}

void fk_mf_curve_free(fk_mf_curve *c)
{
    free(c->m);
    free(c->dn);
    memset(c, 0, sizeof *c);
}
