/* sliceopt.c - the --slice=K/R option of the snapshot converters: slice K (from 0) of R. */
#include "sliceopt.h"

#include <string.h>

#include "prog.h"

void prog_parse_slice(const char *arg, uint32_t *k, uint32_t *r)
{
    const char *slash = strchr(arg, '/');
    char kbuf[32];
    if (!slash || (size_t)(slash - arg) >= sizeof kbuf || slash == arg)
        prog_usage("option --slice needs K/R (slice K of R, counted from 0), not '%s'", arg);
    memcpy(kbuf, arg, (size_t)(slash - arg));
    kbuf[slash - arg] = '\0';
    *r = (uint32_t)prog_parse_int("--slice", slash + 1, 1, UINT32_MAX);
    *k = (uint32_t)prog_parse_int("--slice", kbuf, 0, UINT32_MAX);
    if (*k >= *r) prog_usage("option --slice: K must be below R in K/R, not '%s'", arg);
}
