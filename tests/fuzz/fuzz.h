/* fuzz.h - what the fuzz harnesses share: the entry point, input as a FILE, assertions on results and errors. */
#ifndef FK_FUZZ_H
#define FK_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* The libFuzzer entry point each harness defines: it must return 0 and may
 * abort (FUZZ_ASSERT) when the code under test breaks a promise. The same
 * function is called by libFuzzer (`make fuzz`) and by replay.c (`make
 * test`). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: fuzz assertion failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

/* A failed library call must leave a one-line message naming the problem. */
#define FUZZ_ASSERT_ERR(st, err)                                                           \
    do {                                                                                   \
        if ((st) < 0 && ((err).msg[0] == '\0' || strchr((err).msg, '\n'))) {              \
            fprintf(stderr, "%s:%d: fuzz assertion failed: a one-line message for status %d: \"%s\"\n", \
                    __FILE__, __LINE__, (int)(st), (err).msg);                             \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

/* The input as a read-only stdio stream (no file descriptor); NULL only if
 * the C library refuses. */
static inline FILE *fuzz_memfile(const uint8_t *data, size_t size)
{
    static char empty[1];
    return size ? fmemopen((void *)data, size, "rb") : fmemopen(empty, 0, "rb");
}

/* A NUL-terminated copy of the input (caller frees), for text parsers. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t) abort();
    memcpy(t, data, size);
    t[size] = '\0';
    return t;
}

#endif
