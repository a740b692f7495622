/* needgpu.h - the start of a GPU test: skip without a GPU, unless FOFKIT_REQUIRE_GPU=1 makes that a failure. */
#ifndef FK_NEEDGPU_H
#define FK_NEEDGPU_H

#include <stdio.h>
#include <stdlib.h>

#include "gpu.h"

/* Returns 1 when a GPU is there to test (and prints which), or 0 with the
 * exit status for main in *status: 0 (skipped) or 1 (a GPU was required). */
static inline int need_gpu(const char *test, int *status)
{
    fk_gpuinfo gi;
    fk_error err = {0};
    if (fk_gpu_probe(&gi, &err) == FK_OK && gi.present) {
        printf("%s: on %s\n", test, gi.name);
        return 1;
    }
    const char *req = getenv("FOFKIT_REQUIRE_GPU");
    if (req && *req == '1') {
        fprintf(stderr, "%s: FOFKIT_REQUIRE_GPU=1 but %s\n", test, gi.reason);
        *status = 1;
    } else {
        printf("%s: skipped: %s\n", test, gi.reason);
        *status = 0;
    }
    return 0;
}

#endif
