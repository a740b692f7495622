/* subhalos.c - each bound group's main subhalo and the bound parts of its level 1 groups (satellites), disjoint, host by host. */
#include "subhalos.h"

#include <inttypes.h>
#include <stdlib.h>

int fk_subhalos_bound(const fk_subhalo_in *in, uint32_t *gsub, fk_halo **rows, uint64_t *nrows, fk_error *err)
{
    *rows = NULL;
    *nrows = 0;
    const uint64_t ng0 = in->ng0, ng1 = in->gid1 ? in->ng1 : 0;
    uint64_t *central = malloc((ng0 ? ng0 : 1) * sizeof *central); /* level 1 id of each host's central group, 0 none */
    uint64_t *nmain = calloc(ng0 ? ng0 : 1, sizeof *nmain), *nsat = calloc(ng1 ? ng1 : 1, sizeof *nsat);
    uint64_t *row0 = malloc((ng0 ? ng0 : 1) * sizeof *row0), *row1 = malloc((ng1 ? ng1 : 1) * sizeof *row1);
    fk_halo *r = NULL;
    int st = FK_OK;
    if (!central || !nmain || !nsat || !row0 || !row1) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the subhalos of %" PRIu64 " groups", ng0 + ng1);
        goto done;
    }
    for (uint64_t g = 0; g < ng0; g++) {
        central[g] = 0;
        if (in->gid1 && in->mbp && in->h0[g].mbp_id < in->nsource) central[g] = in->gid1[in->h0[g].mbp_id];
    }
    for (uint64_t s = ng1; s >= 1 && !in->mbp; s--) { /* the lowest id: the largest */
        uint64_t h = in->h1[s - 1].host;
        if (h >= 1 && h <= ng0) central[h - 1] = s;
    }
    /* the members of each subhalo */
    for (uint64_t p = 0; p < in->nsource; p++) {
        uint32_t b0 = in->bgid0[p], g1 = in->gid1 ? in->gid1[p] : 0, b1 = in->bgid1 ? in->bgid1[p] : 0;
        if ((b0 && (b0 > ng0 || b0 != in->gid0[p])) || (b1 && (b1 > ng1 || b1 != g1))) {
            st = fk_fail(err, FK_EFORMAT, "subhalos: particle %" PRIu64 " is bound to a group it is not in", p);
            goto done;
        }
        gsub[p] = 0;
        if (b1 && in->h1[b1 - 1].host <= ng0 && in->h1[b1 - 1].host >= 1 &&
            central[in->h1[b1 - 1].host - 1] != b1)
            nsat[b1 - 1]++;
        else if (b0)
            nmain[b0 - 1]++;
    }
    /* rows host by host: main, then satellites by id */
    uint64_t *first = calloc(ng0 + 1, sizeof *first); /* satellites' count per host, then their start */
    if (!first) {
        st = fk_fail(err, FK_ENOMEM, "out of memory for the subhalos of %" PRIu64 " groups", ng0 + ng1);
        goto done;
    }
    for (uint64_t s = 0; s < ng1; s++)
        if (nsat[s]) first[in->h1[s].host - 1]++;
    uint64_t n = 0;
    for (uint64_t g = 0; g < ng0; g++) {
        uint64_t k = first[g];
        row0[g] = nmain[g] ? n++ : UINT64_MAX;
        first[g] = n;
        n += k;
    }
    if (n > UINT32_MAX) {
        free(first);
        st = fk_fail(err, FK_EINVAL, "%" PRIu64 " subhalos do not fit 32-bit numbers", n);
        goto done;
    }
    r = calloc(n ? n : 1, sizeof *r);
    if (!r) {
        free(first);
        st = fk_fail(err, FK_ENOMEM, "out of memory for %" PRIu64 " subhalos", n);
        goto done;
    }
    for (uint64_t g = 0; g < ng0; g++)
        if (nmain[g]) r[row0[g]] = (fk_halo){.level = 0, .id = g + 1, .host = g + 1, .n = nmain[g]};
    for (uint64_t s = 0; s < ng1; s++) {
        row1[s] = UINT64_MAX;
        if (!nsat[s]) continue;
        uint64_t h = in->h1[s].host;
        row1[s] = first[h - 1]++;
        r[row1[s]] = (fk_halo){.level = 1, .id = s + 1, .host = h, .n = nsat[s]};
    }
    free(first);
    for (uint64_t p = 0; p < in->nsource; p++) {
        uint32_t b0 = in->bgid0[p], b1 = in->bgid1 ? in->bgid1[p] : 0;
        if (b1 && row1[b1 - 1] != UINT64_MAX)
            gsub[p] = (uint32_t)(row1[b1 - 1] + 1);
        else if (b0)
            gsub[p] = (uint32_t)(row0[b0 - 1] + 1);
    }
    *rows = r;
    *nrows = n;
done:
    free(central), free(nmain), free(nsat), free(row0), free(row1);
    return st;
}
