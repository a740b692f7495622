/* check.h - a minimal assertion harness for the library's C tests. */
#ifndef FK_CHECK_H
#define FK_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        check_count++;                                                                   \
        if (!(cond)) {                                                                   \
            check_failures++;                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                                \
    } while (0)

#define CHECK_MSG(cond, ...)                                                             \
    do {                                                                                 \
        check_count++;                                                                   \
        if (!(cond)) {                                                                   \
            check_failures++;                                                            \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

/* Ends a test program: a summary line, exit status 1 on any failure. */
#define CHECK_DONE()                                                                     \
    do {                                                                                 \
        printf("%s: %d checks, %d failed\n", __FILE__, check_count, check_failures);     \
        return check_failures ? 1 : 0;                                                   \
    } while (0)

#endif
