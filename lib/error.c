/* error.c - recording library errors as status codes plus one-line messages. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int fk_fail(fk_error *err, int code, const char *fmt, ...)
{
    if (err && err->code == FK_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void fk_error_clear(fk_error *err)
{
    if (err) {
        err->code = FK_OK;
        err->msg[0] = '\0';
    }
}

const char *fk_strstatus(int code)
{
    switch (code) {
    case FK_OK: return "success";
    case FK_EIO: return "I/O error";
    case FK_EFORMAT: return "malformed input";
    case FK_EINVAL: return "invalid argument";
    case FK_ENOMEM: return "out of memory";
    case FK_EMISSING: return "missing chunk";
    case FK_EDEVICE: return "device error";
    case FK_EUNSUP: return "unsupported";
    case FK_ECUT: return "input stops early";
    }
    return "unknown error";
}
