/* benchclock.h - what the benchmark programs measure beside wall time: the process's CPU time and the machine's load. */
#ifndef FK_BENCHCLOCK_H
#define FK_BENCHCLOCK_H

#include <stdio.h>
#include <time.h>

/* The process's CPU time, every thread's: steadier than wall time on a loaded machine. */
static inline double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The 1-minute load average, or -1. */
static inline double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

#endif
