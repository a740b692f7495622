/* massfunc.h - the mass function of a catalogue column: counts in logarithmic bins. */
#ifndef FK_MASSFUNC_H
#define FK_MASSFUNC_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Bins of equal width in log10 m: bin k holds lo 10^(k / per_dex) <= m <
 * lo 10^((k + 1) / per_dex), k = 0 .. nbins - 1, nbins = the least count
 * reaching hi (at least 1); a value equal to the top edge falls in the
 * last bin. Values that are not finite or not positive are skipped;
 * values outside [lo, top edge] are counted below or above.
 */
typedef struct fk_massfunc {
    size_t nbins;
    double log_lo, dlog;  /* log10 of the lowest edge, the bin width in dex */
    uint64_t *count;      /* nbins counts (caller frees with fk_massfunc_free) */
    uint64_t below, above, skipped;
} fk_massfunc;

/* The range of the usable values of m[0..n): *lo and *hi, the least and
 * largest finite positive; returns how many there are. Can't fail. */
size_t fk_massfunc_range(const double *m, size_t n, double *lo, double *hi);

/* Counts m[0..n) into mf. FK_EINVAL (lo or hi not finite and positive, hi
 * < lo, per_dex not positive, more than 10^6 bins), FK_ENOMEM. */
int fk_massfunc_count(const double *m, size_t n, double lo, double hi, double per_dex, fk_massfunc *mf, fk_error *err);

void fk_massfunc_free(fk_massfunc *mf);

#ifdef __cplusplus
}
#endif

#endif
