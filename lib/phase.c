/* phase.c - 6D phase-space linking support: velocity checks and the velocity scale of a relative psi. */
#include "phase.h"

#include <inttypes.h>
#include <math.h>

int fk_phase_check(const float *vel, uint64_t n, const char *name, fk_error *err)
{
    for (uint64_t i = 0; i < n; i++)
        if (!isfinite(vel[3 * i]) || !isfinite(vel[3 * i + 1]) || !isfinite(vel[3 * i + 2]))
            return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has a non-finite velocity (%g %g %g)", name, i,
                           vel[3 * i], vel[3 * i + 1], vel[3 * i + 2]);
    return FK_OK;
}

double fk_phase_vscale(const float *vel, uint64_t n)
{
    if (n == 0) return 0;
    double m[3] = {0, 0, 0};
    for (uint64_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) m[k] += vel[3 * i + k];
    for (int k = 0; k < 3; k++) m[k] /= (double)n;
    double s = 0;
    for (uint64_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double d = vel[3 * i + k] - m[k];
            s += d * d;
        }
    return sqrt(s / (double)n);
}
