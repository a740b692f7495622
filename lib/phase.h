/* phase.h - 6D phase-space linking support: the velocity checks and the velocity scale of a relative psi. */
#ifndef FK_PHASE_H
#define FK_PHASE_H

#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks that every velocity (vel, n x 3) is finite; FK_EFORMAT naming the
 * first bad particle by stream index otherwise. name is used in messages. */
int fk_phase_check(const float *vel, uint64_t n, const char *name, fk_error *err);

/*
 * The velocity scale of a relative psi (foflink --psi-rel=F: psi = F * scale):
 * the 3D rms velocity of the particles about their mean,
 *     sigma = sqrt( (1/n) sum_i |v_i - m|^2 ),   m = (1/n) sum_i v_i,
 * in binary64, summed serially in stream order (two passes: the mean, then
 * the deviations), so it is the same for every thread count. It does not
 * depend on the order of the particles beyond that rounding. 0 when n is 0.
 * vel must be finite (fk_phase_check). Never fails.
 */
double fk_phase_vscale(const float *vel, uint64_t n);

#ifdef __cplusplus
}
#endif

#endif
