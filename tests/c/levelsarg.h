/* levelsarg.h - test helpers' -b/-l operand: one number, or a comma-separated list of up to FOFKIT_LEVELS_MAX (the levels). */
#ifndef FK_LEVELSARG_H
#define FK_LEVELSARG_H

#include <stdlib.h>

#include "fofkit.h"

/* The numbers of s into v; returns how many. */
static inline int levels_arg(const char *s, double *v)
{
    int n = 0;
    char *end;
    while (n < FOFKIT_LEVELS_MAX) {
        v[n++] = strtod(s, &end);
        if (*end != ',') break;
        s = end + 1;
    }
    return n;
}

#endif
