/* bigmem.h - large arrays allocated ready to fill: huge pages where the kernel gives them, faulted in on every core. */
#ifndef FK_BIGMEM_H
#define FK_BIGMEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A fresh array's pages are mapped on first touch, one fault per 4 KiB page,
 * each zeroing its page: reading 550 MB from the page cache into a fresh
 * malloc'd buffer took 0.48 to 0.84 s on a 2-core machine, almost all of it
 * faults inside read(2), on one core. Advised for huge pages
 * (madvise(MADV_HUGEPAGE): transparent huge pages, where enabled as
 * "madvise" or "always") and touched first by every core, the same read
 * took 0.13 s, faults included. The arrays stay malloc's own, so that
 * realloc grows them without a copy.
 */

/* n bytes (at least 1), like malloc, released with free(). Arrays of at
 * least 4 MiB are advised for huge pages (their whole 2 MiB pages) and faulted in by
 * every core (their content is then zero, but callers must not rely on
 * that: smaller ones are plain malloc). NULL when out of memory. Only for
 * sizes that are real: a size read from input that may lie (a damaged or
 * hostile stream) takes fk_big_reserve, or the faults would claim memory
 * for data that never comes. */
void *fk_big_alloc(size_t n);

/* As fk_big_alloc, its content zero (calloc's: a fresh mapping is not
 * written again). */
void *fk_big_zalloc(size_t n);

/* As fk_big_alloc, without faulting anything in: pages are mapped as they
 * are filled (huge ones where the kernel gives them). */
void *fk_big_reserve(size_t n);

#ifdef __cplusplus
}
#endif

#endif
