/* bigmem.c - large arrays allocated ready to fill: huge pages where the kernel gives them, faulted in on every core. */
#define _GNU_SOURCE
#include "bigmem.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define BIG ((size_t)4 << 20)

/* Advises p's whole mapping for huge pages (p from malloc or calloc, n its
 * size): glibc serves an array this large from a mapping of its own, which
 * realloc moves with mremap(2), unless the advice split the mapping in
 * parts: then it copies, on one core (5 s for the 6.4 GB of a rank's
 * positions at 537M particles). So the advice covers the whole mapping, to
 * the end of what malloc_usable_size says is there. */
static void advise(void *p, size_t n)
{
    const long ps = sysconf(_SC_PAGESIZE);
    const uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096;
#ifdef __GLIBC__
    const size_t have = malloc_usable_size(p);
    (void)n;
#else
    const size_t have = n;
#endif
    uintptr_t a = (uintptr_t)p & ~(page - 1), b = ((uintptr_t)p + have + page - 1) & ~(page - 1);
    (void)madvise((void *)a, b - a, MADV_HUGEPAGE); /* a hint: refused or ignored, the pages are small */
}

static void fault_in(void *p, size_t n)
{
    volatile char *b = p;
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i += 4096) b[i] = 0;
}

void *fk_big_reserve(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p && n >= BIG) advise(p, n);
    return p;
}

void *fk_big_alloc(size_t n)
{
    void *p = fk_big_reserve(n);
    if (p && n >= BIG) fault_in(p, n);
    return p;
}

void *fk_big_zalloc(size_t n)
{
    /* calloc maps a large array fresh (zero already) and writes nothing */
    void *p = calloc(n ? n : 1, 1);
    if (p && n >= BIG) {
        advise(p, n);
        fault_in(p, n);
    }
    return p;
}
