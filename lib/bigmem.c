/* bigmem.c - large arrays allocated ready to fill: huge pages where the kernel gives them, faulted in on every core. */
#define _GNU_SOURCE
#include "bigmem.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define BIG ((size_t)4 << 20)

void *fk_big_reserve(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p || n < BIG) return p;
    /* glibc serves an array this large from a mapping of its own, which
     * realloc moves with mremap(2), unless the advice split the mapping in
     * parts: then it copies, on one core (5 s for the 6.4 GB of a rank's
     * positions at 537M particles). So the advice covers the whole mapping,
     * to the end of what malloc_usable_size says is there. */
    const long ps = sysconf(_SC_PAGESIZE);
    const uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096;
#ifdef __GLIBC__
    const size_t have = malloc_usable_size(p);
#else
    const size_t have = n;
#endif
    uintptr_t a = (uintptr_t)p & ~(page - 1), b = ((uintptr_t)p + have + page - 1) & ~(page - 1);
    (void)madvise((void *)a, b - a, MADV_HUGEPAGE); /* a hint: refused or ignored, the pages are small */
    return p;
}

void *fk_big_alloc(size_t n)
{
    void *p = fk_big_reserve(n);
    if (!p || n < BIG) return p;
    volatile char *b = p;
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i += 4096) b[i] = 0;
    return p;
}
