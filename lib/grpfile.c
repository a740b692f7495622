/* grpfile.c - the tipsy .grp text of a group-id array, formatted on all cores and written in order beside the formatting. */
#include "grpfile.h"
#include "fileio.h"

#include <errno.h>
#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Rows a thread formats at a time: 1 << 18 rows is at most 2.9 MB of text,
 * large enough that one fwrite a piece costs little, small enough to stay
 * in cache. */
#define ROWS_PER_THREAD (1u << 18)
#define MAX_ROW 11 /* "4294967295\n" */

/* Hand-formatted: for millions of lines printf's parsing costs more than
 * the rest of groups. Most rows are one digit (0, or the largest groups'
 * numbers): those take no division. Returns the bytes written to out. */
static size_t format_rows(const uint32_t *gid, uint64_t lo, uint64_t hi, char *out)
{
    size_t len = 0;
    for (uint64_t r = lo; r < hi; r++) {
        uint32_t v = gid[r];
        if (v < 10) {
            out[len] = (char)('0' + v);
            out[len + 1] = '\n';
            len += 2;
            continue;
        }
        char tmp[MAX_ROW];
        int k = 0;
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
    return fk_grp_write_stop(f, gid, nsource, name, NULL, err);
}

int fk_grp_write_stop(FILE *f, const uint32_t *gid, uint64_t nsource, const char *name, const int *stop,
                      fk_error *err)
{
    if (fprintf(f, "%" PRIu64 "\n", nsource) < 0)
        return fk_write_failed(err, name, f, errno);
    /* Pieces of rows taken by the threads as they come free, each written
     * in turn as soon as it and those before it are formatted: the writing
     * goes on beside the formatting of the next pieces. */
    const uint64_t pieces = (nsource + ROWS_PER_THREAD - 1) / ROWS_PER_THREAD;
    int nomem = 0, failed = 0, stopped = 0, e = 0;
#pragma omp parallel
    {
        char *buf = malloc((size_t)ROWS_PER_THREAD * MAX_ROW);
        if (!buf) __atomic_store_n(&nomem, 1, __ATOMIC_RELAXED);
#pragma omp for ordered schedule(dynamic, 1)
        for (uint64_t j = 0; j < pieces; j++) {
            uint64_t a = j * ROWS_PER_THREAD, b = a + ROWS_PER_THREAD < nsource ? a + ROWS_PER_THREAD : nsource;
            if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED)) __atomic_store_n(&stopped, 1, __ATOMIC_RELAXED);
            const int go =
                buf && !__atomic_load_n(&failed, __ATOMIC_RELAXED) && !__atomic_load_n(&stopped, __ATOMIC_RELAXED);
            size_t len = go ? format_rows(gid, a, b, buf) : 0;
#pragma omp ordered
            if (buf && !failed && !__atomic_load_n(&stopped, __ATOMIC_RELAXED) && fwrite(buf, 1, len, f) != len) {
                e = errno;
                __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
            }
        }
        free(buf);
    }
    if (nomem) return fk_fail(err, FK_ENOMEM, "%s: out of memory formatting the .grp text", name);
    if (failed) return fk_write_failed(err, name, f, e);
    if (stopped) return FK_ECUT; /* the caller's own error says why */
    return FK_OK;
}

size_t fk_grp_format(const uint32_t *gid, uint64_t lo, uint64_t hi, char *out)
{
    return format_rows(gid, lo, hi, out);
}

uint64_t fk_grp_bytes(const uint32_t *gid, uint64_t lo, uint64_t hi)
{
    uint64_t bytes = 2 * (hi - lo);
    for (uint64_t r = lo; r < hi; r++)
        for (uint32_t v = gid[r]; v >= 10; v /= 10) bytes++;
    return bytes;
}
