/* testrand.h - a C test's random numbers: xorshift64 from the file's own seed, uniform doubles, isotropic directions. */
#ifndef TESTRAND_H
#define TESTRAND_H

#include <math.h>
#include <stdint.h>

/* Each test file defines TESTRAND_SEED (a nonzero 64-bit constant) before
 * including this header, so that it draws its own fixed sequence. */
static uint64_t rng = TESTRAND_SEED;

/* Uniform in [0, 1), 53 bits. */
static inline double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* A unit vector, uniform on the sphere. */
static inline void direction(double d[3])
{
    double z = 2 * urand() - 1, t = 2 * M_PI * urand(), s = sqrt(1 - z * z);
    d[0] = s * cos(t), d[1] = s * sin(t), d[2] = z;
}

#endif
