/* test_bigmem.c - large arrays: writable, grown by realloc with their content, zeroed when asked, and (on Linux) advised as one mapping, which realloc can move instead of copying. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "check.h"

/* Whether [p, p + n) lies within one mapping of /proc/self/maps: -1 when it
 * cannot be read. */
static int one_mapping(const void *p, size_t n)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    const uintptr_t a = (uintptr_t)p, b = a + n;
    unsigned long lo, hi;
    char line[512];
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= a && a < hi) {
            found = b <= hi;
            break;
        }
    fclose(f);
    return found;
}

int main(void)
{
    const size_t n = (size_t)96 << 20; /* past glibc's largest mmap threshold (32 MiB) */
    unsigned char *p = fk_big_alloc(n);
    CHECK(p != NULL);
    if (!p) CHECK_DONE();
    for (size_t i = 0; i < n; i += 4096) p[i] = (unsigned char)(i >> 12);
    p[n - 1] = 7;
    /* The huge-page advice did not cut the array's mapping in parts: glibc's
     * header of 16 bytes before the array is in the array's mapping (an
     * array aligned to 2 MiB and advised alone had the header in another,
     * and realloc copied it). */
    int one = one_mapping(p - 16, n + 16);
#ifdef __GLIBC__
    if (one >= 0) CHECK_MSG(one == 1, "the array of %zu bytes and its header span several mappings", n);
#endif

    unsigned char *q = realloc(p, n + n / 3);
    CHECK(q != NULL);
    if (q) {
        int same = q[n - 1] == 7;
        for (size_t i = 0; i < n; i += 4096) same &= q[i] == (unsigned char)(i >> 12);
        CHECK(same);
        free(q);
    }

    /* the reserved kind, and the small ones: plain arrays all the same */
    unsigned char *r = fk_big_reserve(n);
    CHECK(r != NULL);
    if (r) {
        memset(r, 1, n);
#ifdef __GLIBC__
        if ((one = one_mapping(r - 16, n + 16)) >= 0) CHECK(one == 1);
#endif
        free(r);
    }
    unsigned char *s = fk_big_alloc(100);
    CHECK(s != NULL);
    if (s) memset(s, 2, 100);
    free(s);

    /* zeroed ones, large and small, where freed arrays were written */
    const size_t zn[2] = {n, 100};
    for (int k = 0; k < 2; k++) {
        unsigned char *dirty = malloc(zn[k]);
        if (dirty) memset(dirty, 3, zn[k]);
        free(dirty);
        unsigned char *z = fk_big_zalloc(zn[k]);
        CHECK(z != NULL);
        if (!z) continue;
        size_t nonzero = 0;
        for (size_t i = 0; i < zn[k]; i++) nonzero += z[i] != 0;
        CHECK_MSG(nonzero == 0, "%zu of %zu bytes of fk_big_zalloc are not zero", nonzero, zn[k]);
        free(z);
    }
    CHECK_DONE();
}
