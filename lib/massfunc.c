/* massfunc.c - counts of a catalogue column in logarithmic bins, for mass functions. */
#include "massfunc.h"

#include <math.h>
#include <stdlib.h>

#define MASSFN_MAX_BINS 1000000

size_t fk_massfunc_range(const double *m, size_t n, double *lo, double *hi)
{
    size_t k = 0;
    *lo = INFINITY, *hi = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(m[i]) && m[i] > 0) {
            k++;
            if (m[i] < *lo) *lo = m[i];
            if (m[i] > *hi) *hi = m[i];
        }
    if (!k) *lo = *hi = NAN;
    return k;
}

int fk_massfunc_count(const double *m, size_t n, double lo, double hi, double per_dex, fk_massfunc *mf, fk_error *err)
{
    *mf = (fk_massfunc){0};
    if (!(lo > 0) || !isfinite(lo) || !(hi > 0) || !isfinite(hi))
        return fk_fail(err, FK_EINVAL, "the range must be positive and finite, not %g to %g", lo, hi);
    if (hi < lo) return fk_fail(err, FK_EINVAL, "the range %g to %g is empty", lo, hi);
    if (!(per_dex > 0) || !isfinite(per_dex)) return fk_fail(err, FK_EINVAL, "bins per dex must be positive");
    double span = (log10(hi) - log10(lo)) * per_dex;
    if (span > MASSFN_MAX_BINS) return fk_fail(err, FK_EINVAL, "%.3g bins are too many", span);
    size_t nb = (size_t)ceil(span);
    if (nb < 1) nb = 1;
    mf->nbins = nb;
    mf->log_lo = log10(lo);
    mf->dlog = 1 / per_dex;
    if (!(mf->count = calloc(nb, sizeof *mf->count))) return fk_fail(err, FK_ENOMEM, "out of memory for %zu bins", nb);
    double top = mf->log_lo + (double)nb * mf->dlog;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(m[i]) || !(m[i] > 0)) {
            mf->skipped++;
            continue;
        }
        double l = log10(m[i]);
        if (m[i] < lo) {
            mf->below++;
        } else if (l > top && m[i] > hi) {
            mf->above++;
        } else {
            double b = floor((l - mf->log_lo) / mf->dlog);
            size_t k = b < 0 ? 0 : b >= (double)nb ? nb - 1 : (size_t)b;
            mf->count[k]++;
        }
    }
    return FK_OK;
}

void fk_massfunc_free(fk_massfunc *mf)
{
    free(mf->count);
    mf->count = NULL;
}
