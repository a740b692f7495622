/* grpfile.c - the tipsy .grp text of a group-id array, formatted on all cores and written in order. */
#include "grpfile.h"
#include "fileio.h"

#include <errno.h>
#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Rows a thread formats at a time: 1 << 18 rows is at most 2.9 MB of text,
 * large enough that one fwrite a thread costs little, small enough to stay
 * in cache. */
#define ROWS_PER_THREAD (1u << 18)
#define MAX_ROW 11 /* "4294967295\n" */

/* Hand-formatted: for millions of lines printf's parsing costs more than
 * the rest of groups. Returns the bytes written to out. */
static size_t format_rows(const uint32_t *gid, uint64_t lo, uint64_t hi, char *out)
{
    size_t len = 0;
    for (uint64_t r = lo; r < hi; r++) {
        char tmp[MAX_ROW];
        int k = 0;
        uint32_t v = gid[r];
        do {
            tmp[k++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        while (k) out[len++] = tmp[--k];
        out[len++] = '\n';
    }
    return len;
}

int fk_grp_write(FILE *f, const uint32_t *gid, uint64_t nsource, const char *name, fk_error *err)
{
    if (fprintf(f, "%" PRIu64 "\n", nsource) < 0)
        return fk_write_failed(err, name, f, errno);
    int nt = omp_get_max_threads();
    char *buf = malloc((size_t)nt * ROWS_PER_THREAD * MAX_ROW);
    size_t *len = calloc((size_t)nt, sizeof *len);
    if (!buf || !len) {
        free(buf);
        free(len);
        return fk_fail(err, FK_ENOMEM, "%s: out of memory formatting the .grp text", name);
    }
    int st = FK_OK;
    uint64_t block = (uint64_t)nt * ROWS_PER_THREAD;
    for (uint64_t lo = 0; lo < nsource && st == FK_OK; lo += block) {
        uint64_t hi = nsource - lo < block ? nsource : lo + block;
        int used = (int)((hi - lo + ROWS_PER_THREAD - 1) / ROWS_PER_THREAD);
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int t = 0; t < used; t++) {
            uint64_t a = lo + (uint64_t)t * ROWS_PER_THREAD, b = a + ROWS_PER_THREAD < hi ? a + ROWS_PER_THREAD : hi;
            len[t] = format_rows(gid, a, b, buf + (size_t)t * ROWS_PER_THREAD * MAX_ROW);
        }
        for (int t = 0; t < used && st == FK_OK; t++)
            if (fwrite(buf + (size_t)t * ROWS_PER_THREAD * MAX_ROW, 1, len[t], f) != len[t])
                st = fk_write_failed(err, name, f, errno);
    }
    free(buf);
    free(len);
    return st;
}

size_t fk_grp_format(const uint32_t *gid, uint64_t lo, uint64_t hi, char *out)
{
    return format_rows(gid, lo, hi, out);
}
