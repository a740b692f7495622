/* bigmem.c - large arrays allocated ready to fill: huge pages where the kernel gives them, faulted in on every core. */
#define _GNU_SOURCE
#include "bigmem.h"

#include <stdlib.h>
#include <sys/mman.h>

#define BIG ((size_t)4 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

void *fk_big_reserve(size_t n)
{
    if (n < BIG) return malloc(n ? n : 1);
    void *p;
    if (posix_memalign(&p, HUGE_PAGE, n) != 0) return NULL;
    (void)madvise(p, n, MADV_HUGEPAGE); /* a hint: refused or ignored, the pages are small */
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
