/* test_massfunc.c - mass-function bins: counts by hand, edges, skipped and out-of-range values, bad ranges. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "massfunc.h"

int main(void)
{
    fk_error err = {0};
    const double m[] = {1, 2, 5, 10, 99.9, 100, NAN, -1, 0, 1000, INFINITY, 0.5};
    const size_t n = sizeof m / sizeof m[0];
    double lo, hi;
    CHECK(fk_massfunc_range(m, n, &lo, &hi) == 8 && lo == 0.5 && hi == 1000);
    fk_massfunc mf;
    /* one bin per dex from 1 to 100: [1, 10) and [10, 100], the top edge in the last bin */
    CHECK(fk_massfunc_count(m, n, 1, 100, 1, &mf, &err) == FK_OK);
    CHECK(mf.nbins == 2 && mf.count[0] == 3 && mf.count[1] == 3);
    CHECK(mf.below == 1 && mf.above == 1 && mf.skipped == 4);
    CHECK(mf.log_lo == 0 && mf.dlog == 1);
    fk_massfunc_free(&mf);
    /* two per dex: edges 1, 3.16, 10, 31.6, 100 */
    CHECK(fk_massfunc_count(m, n, 1, 100, 2, &mf, &err) == FK_OK);
    CHECK(mf.nbins == 4 && mf.count[0] == 2 && mf.count[1] == 1 && mf.count[2] == 1 && mf.count[3] == 2);
    fk_massfunc_free(&mf);
    /* a range that is not a whole number of bins: the last bin reaches past hi and counts what is there */
    CHECK(fk_massfunc_count(m, n, 1, 50, 1, &mf, &err) == FK_OK);
    CHECK(mf.nbins == 2 && mf.count[1] == 3 && mf.above == 1);
    fk_massfunc_free(&mf);
    /* one value: one bin */
    double one = 7;
    CHECK(fk_massfunc_count(&one, 1, 7, 7, 5, &mf, &err) == FK_OK && mf.nbins == 1 && mf.count[0] == 1);
    fk_massfunc_free(&mf);
    CHECK(fk_massfunc_range(m + 6, 3, &lo, &hi) == 0 && isnan(lo) && isnan(hi));
    CHECK(fk_massfunc_count(m, n, 0, 100, 1, &mf, &err) == FK_EINVAL && strstr(err.msg, "positive and finite"));
    err = (fk_error){0};
    CHECK(fk_massfunc_count(m, n, 10, 1, 1, &mf, &err) == FK_EINVAL && strstr(err.msg, "empty"));
    err = (fk_error){0};
    CHECK(fk_massfunc_count(m, n, 1, 10, 0, &mf, &err) == FK_EINVAL);
    err = (fk_error){0};
    CHECK(fk_massfunc_count(m, n, 1e-300, 1e300, 1e4, &mf, &err) == FK_EINVAL && strstr(err.msg, "too many"));
    CHECK_DONE();
}
