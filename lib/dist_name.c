/* dist_name.c - whether a run is distributed, and the rank pattern "%r" of file names (no MPI needed). */
#include "dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fk_dist_has_pattern(const char *name)
{
    for (const char *p = name; p && *p; p++) {
        if (*p != '%') continue;
        if (p[1] == 'r') return 1;
        if (p[1] == '%') p++;
    }
    return 0;
}

int fk_dist_wanted(const char *const *names, int nnames)
{
    /* more than one process (a single one under mpirun runs as without it) */
    const char *e = getenv("OMPI_COMM_WORLD_SIZE");
    if (!e) e = getenv("PMI_SIZE");
    if (e && atol(e) > 1) return 1;
    for (int i = 0; i < nnames; i++)
        if (fk_dist_has_pattern(names[i])) return 1;
    return 0;
}

int fk_dist_expand(const char *name, int rank, char **out, fk_error *err)
{
    char num[16];
    int nl = snprintf(num, sizeof num, "%d", rank);
    size_t len = 0;
    for (const char *p = name; *p; p++) {
        if (*p != '%') {
            len++;
            continue;
        }
        if (p[1] == 'r')
            len += (size_t)nl;
        else if (p[1] == '%')
            len++;
        else
            return fk_fail(err, FK_EINVAL, "%s: '%%' must be followed by r (the rank) or %% (a percent sign)", name);
        p++;
    }
    char *s = malloc(len + 1), *q = s;
    if (!s) return fk_fail(err, FK_ENOMEM, "out of memory for a file name");
    for (const char *p = name; *p; p++) {
        if (*p != '%') {
            *q++ = *p;
            continue;
        }
        p++;
        if (*p == 'r') {
            memcpy(q, num, (size_t)nl);
            q += nl;
        } else {
            *q++ = '%';
        }
    }
    *q = 0;
    *out = s;
    return FK_OK;
}

int fk_dist_env_rank(void)
{
    const char *e = getenv("OMPI_COMM_WORLD_RANK");
    if (!e) e = getenv("PMIX_RANK");
    return e ? atoi(e) : 0;
}
