/* attachref.c - the tests' brute-force reference of foflink's attaching rule: every secondary against every primary, no tree. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Usage: attachref PRIM.f32 KEYS.u64 SEC.f32 BOX PERIODIC L > NEAR.txt
 *   PRIM.f32  the primaries' positions, raw little-endian binary32, n x 3
 *   KEYS.u64  their tie keys (IDs), raw uint64, n
 *   SEC.f32   the secondaries' positions, m x 3
 *   BOX, PERIODIC  the period and 0 or 1; L the linking length
 * Prints one line per secondary: the index of its nearest primary (least
 * binary32 r2 = (dx*dx + dy*dy) + dz*dz, each axis wrapped to the minimum
 * image as foflink(1) says; ties to the least key) when r2 < R*R, R = 6.4 L
 * in binary32, else -1; then its r2. Written apart from the library, from
 * foflink(1)'s words, so that it checks them.
 */

static void *slurp(const char *path, size_t *bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(n ? (size_t)n : 1);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: cannot read\n", path);
        exit(1);
    }
    fclose(f);
    *bytes = (size_t)n;
    return p;
}

static float wrap(float d, int periodic, float L, float h)
{
    if (periodic) {
        if (d > h)
            d = d - L;
        else if (d < -h)
            d = d + L;
    }
    return d;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: attachref PRIM.f32 KEYS.u64 SEC.f32 BOX PERIODIC L\n");
        return 2;
    }
    size_t bp, bk, bs;
    const float *p = slurp(argv[1], &bp), *s = slurp(argv[3], &bs);
    const uint64_t *key = slurp(argv[2], &bk);
    const size_t n = bp / 12, m = bs / 12;
    if (bk != 8 * n) {
        fprintf(stderr, "attachref: %zu keys for %zu primaries\n", bk / 8, n);
        free((void *)p), free((void *)key), free((void *)s);
        return 1;
    }
    const float L = (float)strtod(argv[4], NULL), h = L / 2;
    const int periodic = atoi(argv[5]);
    const float R = (float)(6.4 * strtod(argv[6], NULL)), R2 = R * R;
    long *best = malloc((m ? m : 1) * sizeof *best);
    float *br = malloc((m ? m : 1) * sizeof *br);
    if (!best || !br) {
        fprintf(stderr, "attachref: out of memory\n");
        return 1;
    }
    #pragma omp parallel for schedule(dynamic, 64)
    for (size_t q = 0; q < m; q++) {
        long b = -1;
        float b2 = R2;
        for (size_t j = 0; j < n; j++) {
            float dx = wrap(p[3 * j] - s[3 * q], periodic, L, h);
            float dy = wrap(p[3 * j + 1] - s[3 * q + 1], periodic, L, h);
            float dz = wrap(p[3 * j + 2] - s[3 * q + 2], periodic, L, h);
            float r2 = (dx * dx + dy * dy) + dz * dz;
            if (r2 < b2 || (b >= 0 && r2 == b2 && key[j] < key[b])) b = (long)j, b2 = r2;
        }
        best[q] = b, br[q] = b2;
    }
    for (size_t q = 0; q < m; q++) printf("%ld %.9g\n", best[q], (double)br[q]);
    free(best), free(br), free((void *)p), free((void *)key), free((void *)s);
    return 0;
}
