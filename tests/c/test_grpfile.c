/* test_grpfile.c - the .grp rows: fk_grp_format writes printf's "%u\n" for every number of digits, fk_grp_bytes counts what it writes, fk_grp_write_stop stops. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "grpfile.h"
#define TESTRAND_SEED UINT64_C(0x67727066696c6520)
#include "testrand.h"

int main(void)
{
    /* each power of ten, either side of it, the ends; then random numbers of every size */
    enum { N = 4096 };
    uint32_t gid[N];
    size_t n = 0;
    gid[n++] = 0;
    gid[n++] = UINT32_MAX;
    gid[n++] = UINT32_MAX - 1;
    for (uint64_t p = 1; p <= UINT32_MAX; p *= 10) {
        gid[n++] = (uint32_t)p;
        gid[n++] = (uint32_t)(p - 1);
        if (p + 1 <= UINT32_MAX) gid[n++] = (uint32_t)(p + 1);
    }
    while (n < N) { /* a number of d bits, d from 1 to 32 */
        int d = 1 + (int)(urand() * 32);
        gid[n++] = (uint32_t)(urand() * 4294967296.0) >> (32 - d);
    }
    char *got = malloc(N * FK_GRP_ROW_MAX), *want = malloc(N * FK_GRP_ROW_MAX + 1);
    CHECK(got && want);
    if (!got || !want) CHECK_DONE();
    size_t wl = 0;
    for (size_t i = 0; i < N; i++) wl += (size_t)sprintf(want + wl, "%" PRIu32 "\n", gid[i]);
    size_t gl = fk_grp_format(gid, 0, N, got);
    CHECK_MSG(gl == wl && memcmp(got, want, wl) == 0, "fk_grp_format wrote %zu bytes, printf %zu", gl, wl);
    CHECK(fk_grp_bytes(gid, 0, N) == wl);
    /* a range inside: its own rows only */
    size_t sub = fk_grp_format(gid, 5, 17, got), sl = 0;
    for (size_t i = 5; i < 17; i++) sl += (size_t)sprintf(want + sl, "%" PRIu32 "\n", gid[i]);
    CHECK(sub == sl && memcmp(got, want, sl) == 0);
    CHECK(fk_grp_bytes(gid, 5, 17) == sl);
    CHECK(fk_grp_bytes(gid, 7, 7) == 0);
    /* fk_grp_write_stop: every row while stop is clear; stopped, FK_ECUT and no row */
    wl = 0;
    for (size_t i = 0; i < N; i++) wl += (size_t)sprintf(want + wl, "%" PRIu32 "\n", gid[i]);
    int stop = 0;
    fk_error err = {0};
    char *mem = NULL;
    size_t ml = 0;
    FILE *f = open_memstream(&mem, &ml);
    CHECK(f && fk_grp_write_stop(f, gid, N, "m", &stop, &err) == FK_OK && fflush(f) == 0);
    int head = sprintf(got, "%d\n", N);
    CHECK(ml == (size_t)head + wl && memcmp(mem, got, (size_t)head) == 0 && memcmp(mem + head, want, wl) == 0);
    if (f) fclose(f);
    free(mem);
    mem = NULL;
    f = open_memstream(&mem, &ml);
    stop = 1;
    CHECK(f && fk_grp_write_stop(f, gid, N, "m", &stop, &err) == FK_ECUT && fflush(f) == 0 && ml == (size_t)head);
    if (f) fclose(f);
    free(mem);
    free(got);
    free(want);
    CHECK_DONE();
}
