/* clock.h - seconds on a monotonic clock, for the timings the library reports. */
#ifndef FK_CLOCK_H
#define FK_CLOCK_H

#include <time.h>

static inline double fk_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
