/* fileio.c - opening inputs and writing outputs atomically (temporary file + rename). */
#define _POSIX_C_SOURCE 200809L
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IOBUF (1u << 20)
#define MAX_PENDING 8

struct fk_output {
    FILE *f;
    int is_stdout;
    char *path; /* final path */
    char *tmp;  /* temporary path */
    int slot;
    int in_place; /* not a regular file: written directly, never renamed */
};

/* Temporary names still on disk, for fk_output_cleanup_all. Set and cleared
 * with signals in mind: a slot is published only once its name is complete. */
static char pending_name[MAX_PENDING][4096];
static volatile sig_atomic_t pending_used[MAX_PENDING];

/* The outputs open, for fk_output_name_of. */
static fk_output *open_outputs[MAX_PENDING * 2];

static void remember(fk_output *o, int on)
{
    for (size_t i = 0; i < sizeof open_outputs / sizeof *open_outputs; i++)
        if (on ? !open_outputs[i] : open_outputs[i] == o) {
            open_outputs[i] = on ? o : NULL;
            return;
        }
}

const char *fk_output_name_of(const FILE *f)
{
    if (f == stdout) return "stdout";
    for (size_t i = 0; i < sizeof open_outputs / sizeof *open_outputs; i++)
        if (open_outputs[i] && open_outputs[i]->f == f) return fk_output_name(open_outputs[i]);
    return NULL;
}

int fk_write_failed(fk_error *err, const char *name, const FILE *f, int errnum)
{
    if (!name) name = fk_output_name_of(f);
    return fk_fail(err, FK_EIO, "%s: cannot write: %s", name ? name : "the output",
                   errnum ? strerror(errnum) : "an I/O error");
}

static int is_dash(const char *p)
{
    return p == NULL || strcmp(p, "-") == 0;
}

/* 1 if path names a terminal. */
static int isatty_path(const char *path)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return 0;
    int t = isatty(fd);
    close(fd);
    return t;
}

int fk_input_open(FILE **out, const char *path, int binary, int force, fk_error *err)
{
    *out = NULL;
    FILE *f;
    if (is_dash(path)) {
        if (binary && !force && isatty(STDIN_FILENO))
            return fk_fail(err, FK_EINVAL,
                           "stdin: refusing to read binary data from a terminal (give a file, or pipe one in)");
        f = stdin;
    } else {
        f = fopen(path, "rb");
        if (!f) return fk_fail(err, FK_EIO, "%s: cannot open: %s", path, strerror(errno));
        struct stat sb;
        if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
            fclose(f);
            return fk_fail(err, FK_EIO, "%s: cannot open: it is a directory (give a file)", path);
        }
    }
    setvbuf(f, NULL, _IOFBF, IOBUF);
    *out = f;
    return FK_OK;
}

void fk_input_close(FILE *f)
{
    if (f && f != stdin) fclose(f);
}

int fk_output_open(fk_output **out, const char *path, int binary, int force, fk_error *err)
{
    *out = NULL;
    fk_output *o = calloc(1, sizeof *o);
    if (!o) return fk_fail(err, FK_ENOMEM, "%s: out of memory", is_dash(path) ? "stdout" : path);
    o->slot = -1;
    if (is_dash(path)) {
        if (binary && !force && isatty(STDOUT_FILENO)) {
            free(o);
            return fk_fail(err, FK_EINVAL,
                           "stdout: refusing to write binary data to a terminal (use -o FILE or redirect)");
        }
        o->is_stdout = 1;
        o->f = stdout;
        setvbuf(stdout, NULL, _IOFBF, IOBUF);
        remember(o, 1);
        *out = o;
        return FK_OK;
    }
    /* An existing output that is not a regular file (/dev/null, a FIFO, a
     * terminal) is written in place: renaming a temporary over it would
     * replace the device itself. */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        if (S_ISDIR(sb.st_mode)) {
            free(o);
            return fk_fail(err, FK_EIO, "%s: cannot create: it is a directory (give a file name)", path);
        }
        if (binary && !force && S_ISCHR(sb.st_mode) && isatty_path(path)) {
            free(o);
            return fk_fail(err, FK_EINVAL, "%s: refusing to write binary data to a terminal (use -o FILE or redirect)",
                           path);
        }
        o->path = strdup(path);
        o->f = o->path ? fopen(path, "wb") : NULL;
        if (!o->f) {
            int e = errno;
            fk_output_abort(o);
            return fk_fail(err, FK_EIO, "%s: cannot create: %s", path, strerror(e));
        }
        o->in_place = 1;
        setvbuf(o->f, NULL, _IOFBF, IOBUF);
        remember(o, 1);
        *out = o;
        return FK_OK;
    }
    size_t n = strlen(path);
    o->path = strdup(path);
    o->tmp = malloc(n + 16);
    if (!o->path || !o->tmp) {
        fk_output_abort(o);
        return fk_fail(err, FK_ENOMEM, "%s: out of memory", path);
    }
    snprintf(o->tmp, n + 16, "%s.tmp.XXXXXX", path);
    for (int i = 0; i < MAX_PENDING; i++)
        if (!pending_used[i]) {
            o->slot = i;
            break;
        }
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        fk_output_abort(o);
        /* the temporary file is written beside path: what fails is creating path's */
        const char *slash = strrchr(path, '/');
        if (e == ENOENT && slash)
            return fk_fail(err, FK_EIO, "%s: cannot create: no directory %.*s", path, (int)(slash - path), path);
        return fk_fail(err, FK_EIO, "%s: cannot create: %s", path, strerror(e));
    }
    if (o->slot >= 0 && n + 16 <= sizeof pending_name[0]) {
        memcpy(pending_name[o->slot], o->tmp, n + 16);
        pending_used[o->slot] = 1;
    }
    /* mkstemp creates 0600; give the file the permissions a plain creat() would. */
    mode_t um = umask(0);
    umask(um);
    fchmod(fd, 0666 & ~um);
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        close(fd);
        fk_output_abort(o);
        return fk_fail(err, FK_EIO, "%s: cannot create: %s", path, strerror(errno));
    }
    setvbuf(o->f, NULL, _IOFBF, IOBUF);
    remember(o, 1);
    *out = o;
    return FK_OK;
}

FILE *fk_output_file(fk_output *o)
{
    return o->f;
}

const char *fk_output_name(const fk_output *o)
{
    return o->is_stdout ? "stdout" : o->path;
}

const char *fk_output_target(const fk_output *o)
{
    return o->is_stdout ? NULL : o->in_place ? o->path : o->tmp;
}

static void release(fk_output *o)
{
    remember(o, 0);
    if (o->slot >= 0) pending_used[o->slot] = 0;
    free(o->path);
    free(o->tmp);
    free(o);
}

int fk_output_commit(fk_output *o, fk_error *err)
{
    int st = FK_OK;
    if (o->is_stdout) {
        if (fflush(stdout) != 0 || ferror(stdout)) st = fk_write_failed(err, "stdout", NULL, errno);
        release(o);
        return st;
    }
    if (o->in_place) {
        if (fflush(o->f) != 0 || ferror(o->f)) st = fk_write_failed(err, o->path, NULL, errno);
        if (fclose(o->f) != 0 && st == FK_OK) st = fk_write_failed(err, o->path, NULL, errno);
        o->f = NULL;
        release(o);
        return st;
    }
    if (fflush(o->f) != 0 || ferror(o->f))
        st = fk_write_failed(err, o->path, NULL, errno);
    else if (fsync(fileno(o->f)) != 0 && errno != EINVAL && errno != EROFS)
        st = fk_write_failed(err, o->path, NULL, errno);
    if (fclose(o->f) != 0 && st == FK_OK) st = fk_write_failed(err, o->path, NULL, errno);
    o->f = NULL;
    if (st == FK_OK && rename(o->tmp, o->path) != 0)
        st = fk_fail(err, FK_EIO, "%s: cannot put the finished output in place (rename): %s", o->path, strerror(errno));
    if (st != FK_OK) unlink(o->tmp);
    release(o);
    return st;
}

void fk_output_abort(fk_output *o)
{
    if (!o) return;
    if (!o->is_stdout) {
        if (o->f) fclose(o->f);
        if (o->tmp && !o->in_place) unlink(o->tmp);
    } else {
        fflush(stdout);
    }
    release(o);
}

void fk_output_cleanup_all(void)
{
    for (int i = 0; i < MAX_PENDING; i++)
        if (pending_used[i]) unlink(pending_name[i]);
}
