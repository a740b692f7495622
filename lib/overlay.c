/* overlay.c - overlays: the BASE record written, and the base it names found, opened and checked. */
#define _GNU_SOURCE
#include "overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv.h"

#define NAME_MAX_LEN 4096

static int is_dash(const char *p)
{
    return p == NULL || strcmp(p, "-") == 0;
}

/* The directory part of path, malloc'd: "." when it has none. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* input's name relative to the directory out_dir: both directories made
 * canonical (realpath), their common leading components dropped, a "../"
 * for each of out_dir's left; an absolute input stays as it is. */
static int relative_name(const char *input, const char *out_dir, char **name, fk_error *err)
{
    *name = NULL;
    if (input[0] == '/') {
        if (!(*name = strdup(input))) return fk_fail(err, FK_ENOMEM, "out of memory");
        return FK_OK;
    }
    const char *slash = strrchr(input, '/'), *file = slash ? slash + 1 : input;
    char *idir = dir_of(input), *ri = NULL, *ro = NULL;
    int st = idir ? FK_OK : fk_fail(err, FK_ENOMEM, "out of memory");
    if (!st && !(ri = realpath(idir, NULL)))
        st = fk_fail(err, FK_EIO, "%s: cannot find its directory: %s", input, strerror(errno));
    if (!st && !(ro = realpath(out_dir, NULL)))
        st = fk_fail(err, FK_EIO, "%s: cannot find the directory: %s", out_dir, strerror(errno));
    if (!st) {
        /* with a final '/' each, so that a common prefix ends at one */
        size_t la = strlen(ri), lb = strlen(ro);
        char *a = malloc(la + 2), *b = malloc(lb + 2);
        if (!a || !b) {
            st = fk_fail(err, FK_ENOMEM, "out of memory");
        } else {
            snprintf(a, la + 2, "%s%s", ri, la && ri[la - 1] == '/' ? "" : "/");
            snprintf(b, lb + 2, "%s%s", ro, lb && ro[lb - 1] == '/' ? "" : "/");
            size_t p = 0;
            for (size_t k = 0; a[k] && a[k] == b[k]; k++)
                if (a[k] == '/') p = k + 1;
            size_t ups = 0;
            for (const char *q = b + p; *q; q++) ups += *q == '/';
            size_t len = 3 * ups + strlen(a + p) + strlen(file) + 1;
            char *out = malloc(len);
            if (!out) {
                st = fk_fail(err, FK_ENOMEM, "out of memory");
            } else {
                out[0] = '\0';
                for (size_t u = 0; u < ups; u++) strcat(out, "../");
                strcat(out, a + p);
                strcat(out, file);
                *name = out;
            }
        }
        free(a);
        free(b);
    }
    free(idir);
    free(ri);
    free(ro);
    return st;
}

int fk_overlay_record(const char *input, const char *output, const char *program, char **text, fk_error *err)
{
    *text = NULL;
    if (is_dash(input))
        return fk_fail(err, FK_EINVAL, "an overlay needs its input in a file, which it names as its base, not stdin");
    int fd = open(input, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fk_fail(err, FK_EIO, "%s: cannot open: %s", input, strerror(errno));
    uint64_t bytes = 0;
    uint32_t crc = 0;
    int st = fk_stream_identity(fd, input, &bytes, &crc, err);
    close(fd);
    char *odir = is_dash(output) ? strdup(".") : dir_of(output), *name = NULL;
    if (!st && !odir) st = fk_fail(err, FK_ENOMEM, "out of memory");
    if (!st) st = relative_name(input, odir, &name, err);
    free(odir);
    if (!st && strlen(name) >= NAME_MAX_LEN)
        st = fk_fail(err, FK_EINVAL, "%s: the name is too long for an overlay's BASE", input);
    if (!st && strchr(name, '\n'))
        st = fk_fail(err, FK_EINVAL, "%s: a name with a newline cannot be an overlay's base", input);
    if (!st) {
        fk_kvbuf b;
        fk_kv_init(&b);
        fk_kv_str(&b, "base", name);
        fk_kv_u64(&b, "bytes", bytes);
        fk_kv_u64(&b, "headers_crc", crc);
        fk_kv_str(&b, "program", program ? program : "fofkit");
        st = fk_kv_finish(&b, text, err);
    }
    free(name);
    return st;
}

int fk_overlay_start(fk_writer **w, FILE *out, const char *input, const char *output, const char *program,
                     int zlevel, fk_error *err)
{
    *w = NULL;
    char *text = NULL;
    int st = fk_overlay_record(input, output, program, &text, err);
    if (!st) st = fk_writer_open(w, out, zlevel, err);
    if (!st) st = fk_writer_text(*w, "BASE", 0, text, err);
    free(text);
    if (st && *w) {
        fk_writer_free(*w);
        *w = NULL;
    }
    return st;
}

int fk_overlay_open_base(const char *text, const char *overlay_path, const char *overlay_name, FILE **f, char **path,
                         fk_error *err)
{
    *f = NULL;
    *path = NULL;
    char what[300], base[NAME_MAX_LEN], program[64] = "the program that wrote it";
    uint64_t bytes, crc;
    snprintf(what, sizeof what, "%s: BASE chunk", overlay_name);
    if (fk_kv_get_str(text, "base", base, sizeof base, what, err) ||
        fk_kv_get_u64(text, "bytes", &bytes, what, err) || fk_kv_get_u64(text, "headers_crc", &crc, what, err))
        return err->code;
    if (!base[0]) return fk_fail(err, FK_EFORMAT, "%s: its base has an empty name", what);
    fk_error ignored = {0}; /* without a program key (or a long one), the message says it in words */
    if (fk_kv_has(text, "program") && fk_kv_get_str(text, "program", program, sizeof program, what, &ignored))
        snprintf(program, sizeof program, "the program that wrote it");
    /* a relative name is the overlay's directory's */
    char *dir = base[0] == '/' || !overlay_path ? NULL : dir_of(overlay_path);
    size_t len = strlen(base) + (dir ? strlen(dir) + 2 : 1);
    char *p = malloc(len);
    if (!p) {
        free(dir);
        return fk_fail(err, FK_ENOMEM, "out of memory");
    }
    if (dir && strcmp(dir, ".") != 0)
        snprintf(p, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", base);
    else
        snprintf(p, len, "%s", base);
    free(dir);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int st = fk_fail(err, FK_EIO, "%s: its base %s: cannot open: %s", overlay_name, p, strerror(errno));
        free(p);
        return st;
    }
    uint64_t have = 0;
    uint32_t hcrc = 0;
    int st = fk_stream_identity(fd, p, &have, &hcrc, err);
    if (st) { /* "BASE: why" as "OVERLAY: its base BASE: why" */
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        fk_error_clear(err);
        fk_fail(err, st, "%s: its base %s", overlay_name, msg);
    } else if (have != bytes || hcrc != crc) {
        st = fk_fail(err, FK_EFORMAT,
                     "%s: its base %s is not the stream it was written on (%" PRIu64
                     " bytes, headers' CRC-32 %08" PRIx32 "; written on %" PRIu64 " bytes, %08" PRIx64 "): run %s again",
                     overlay_name, p, have, hcrc, bytes, crc, program);
    } else if (!(*f = fdopen(fd, "rb"))) {
        st = fk_fail(err, FK_ENOMEM, "out of memory");
    }
    if (st) {
        close(fd);
        free(p);
        return st;
    }
    *path = p;
    return FK_OK;
}
