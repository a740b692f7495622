/* error.h - the library's one error convention: status codes plus a message. */
#ifndef FK_ERROR_H
#define FK_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every fallible library function returns an int status: FK_OK (0) on
 * success, or one of the negative codes below, and, when given a non-NULL
 * fk_error, fills it with a one-line message that names the problem (never
 * the program: programs prefix their own name). The library never prints
 * and never exits. */
enum {
    FK_OK = 0,
    FK_EIO = -1,      /* reading or writing failed (system error)          */
    FK_EFORMAT = -2,  /* input is not what it claims: bad magic, size, CRC */
    FK_EINVAL = -3,   /* a parameter is out of range                       */
    FK_ENOMEM = -4,   /* an allocation failed                              */
    FK_EMISSING = -5, /* a required stream chunk is absent                 */
    FK_EDEVICE = -6,  /* GPU absent, failed, or lacks memory               */
    FK_EUNSUP = -7,   /* valid input this build cannot handle              */
    FK_ECUT = -8      /* a pipe ends before its stream does: its writer
                         stopped (and, if it was a fofkit program, said why) */
};

typedef struct fk_error {
    int code;
    char msg[512];
} fk_error;

/* Records code and a printf-style message in err (if non-NULL) and returns
 * code, so that callers can write `return fk_fail(err, FK_EINVAL, ...)`.
 * An error already recorded is kept: the first (deepest) cause wins. */
int fk_fail(fk_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clears err (code FK_OK, empty message). */
void fk_error_clear(fk_error *err);

/* A short name for a status code ("I/O error", ...); never NULL. */
const char *fk_strstatus(int code);

#ifdef __cplusplus
}
#endif

#endif
