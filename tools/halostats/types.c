/* types.c - halostats: each particle's type, from the TYPE chunk (checked) or from its original index. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hs.h"

int hs_types(const fk_snap *s, uint64_t n, const uint64_t *ids, const uint8_t *chunk, uint8_t **type, const char *name,
             fk_error *err)
{
    uint8_t *t = malloc(n ? n : 1);
    *type = NULL;
    if (!t) return fk_fail(err, FK_ENOMEM, "out of memory for the types of %" PRIu64 " particles", n);
    if (chunk) {
        uint64_t bad = n; /* the first particle of no type, found on every core */
#pragma omp parallel for schedule(static) reduction(min : bad)
        for (uint64_t i = 0; i < n; i++)
            if (chunk[i] > FK_STAR && i < bad) bad = i;
        if (bad < n) {
            free(t);
            return fk_fail(err, FK_EFORMAT, "%s: particle %" PRIu64 " has TYPE %u (0 gas, 1 dark or 2 star)", name, bad,
                           (unsigned)chunk[bad]);
        }
        if (n) memcpy(t, chunk, n);
    } else {
        /* SNAP's counts by type as the source's ranges of original indices; counts that do not add up to
         * nsource say nothing: every particle dark */
        const uint64_t *c = s->nsource_type;
        const int known = c[FK_GAS] + c[FK_DARK] + c[FK_STAR] == s->nsource;
        const uint64_t gas = known ? c[FK_GAS] : 0, dark = known ? gas + c[FK_DARK] : UINT64_MAX;
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < n; i++) t[i] = ids[i] < gas ? FK_GAS : ids[i] < dark ? FK_DARK : FK_STAR;
    }
    *type = t;
    return FK_OK;
}
