/* fileio.c - inputs, and outputs written atomically (an unnamed or temporary file, named at the end). */
#define _GNU_SOURCE
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define IOBUF (1u << 20)
#define MAX_PENDING 8

struct fk_output {
    FILE *f;
    int is_stdout;
    char *path; /* final path */
    char *tmp;  /* temporary path ("PATH.tmp.XXXXXX"; a template while anon) */
    int anon;   /* an unnamed file (O_TMPFILE) beside path, given tmp's name only at commit: a
                   process killed while writing (SIGKILL, no handler runs) leaves nothing behind */
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
    int fd = -1;
#ifdef O_TMPFILE
    {
        /* an unnamed file in path's directory (not every file system has them, and naming one
         * needs /proc: else a named one) */
        const char *slash = strrchr(path, '/');
        char *dir = slash ? strndup(path, (size_t)(slash - path + 1)) : strdup(".");
        if (dir && access("/proc/self/fd", X_OK) == 0) fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        free(dir);
        o->anon = fd >= 0;
    }
#endif
    if (fd < 0) fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        fk_output_abort(o);
        /* the temporary file is written beside path: what fails is creating path's */
        const char *slash = strrchr(path, '/');
        if (e == ENOENT && slash) {
            /* ENOENT: no such directory, or one that makes no new files (/proc, /sys) */
            struct stat ds;
            char *dir = strndup(path, (size_t)(slash - path + 1));
            int there = dir && stat(dir, &ds) == 0, isdir = there && S_ISDIR(ds.st_mode);
            free(dir);
            if (isdir)
                return fk_fail(err, FK_EIO, "%s: cannot create: directory %.*s takes no new files", path,
                               (int)(slash - path ? slash - path : 1), path);
            return fk_fail(err, FK_EIO, "%s: cannot create: no directory %.*s", path, (int)(slash - path), path);
        }
        return fk_fail(err, FK_EIO, "%s: cannot create: %s", path, strerror(e));
    }
    if (!o->anon && o->slot >= 0 && n + 16 <= sizeof pending_name[0]) {
        memcpy(pending_name[o->slot], o->tmp, n + 16);
        pending_used[o->slot] = 1;
    }
    /* mkstemp creates 0600; give the file the permissions a plain creat() would (O_TMPFILE
     * took 0666 and the umask already). */
    if (!o->anon) {
        mode_t um = umask(0);
        umask(um);
        fchmod(fd, 0666 & ~um);
    }
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

int fk_output_atomic(const fk_output *o)
{
    return !o->is_stdout && !o->in_place;
}

/* Gives the unnamed file of o its temporary name (tmp: the template filled
 * in), registered for removal by fk_output_cleanup_all. 0, or -1 (errno). */
static int name_it(fk_output *o)
{
    if (!o->anon) return 0;
    if (fflush(o->f) != 0) return -1;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(o->f));
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static unsigned long long seq;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long x = (unsigned long long)ts.tv_nsec ^ (unsigned long long)getpid() << 32;
    x ^= ++seq * 0x9E3779B97F4A7C15ull;
    char *end = o->tmp + strlen(o->tmp) - 6;
    for (int tries = 0; tries < 100; tries++) {
        for (int i = 0; i < 6; i++, x = x * 6364136223846793005ull + 1442695040888963407ull)
            end[i] = abc[(x >> 33) % 62];
        if (linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) == 0) {
            size_t n = strlen(o->tmp) + 1;
            if (o->slot >= 0 && n <= sizeof pending_name[0]) {
                memcpy(pending_name[o->slot], o->tmp, n);
                pending_used[o->slot] = 1;
            }
            o->anon = 0;
            return 0;
        }
        if (errno != EEXIST) return -1;
    }
    return -1;
}

const char *fk_output_target(fk_output *o)
{
    if (o->is_stdout) return NULL;
    if (o->in_place) return o->path;
    return name_it(o) == 0 ? o->tmp : NULL;
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
    /* the unnamed file gets a name only now, complete, for the rename */
    if (st == FK_OK && name_it(o) != 0)
        st = fk_fail(err, FK_EIO, "%s: cannot put the finished output in place (link): %s", o->path, strerror(errno));
    if (fclose(o->f) != 0 && st == FK_OK) st = fk_write_failed(err, o->path, NULL, errno);
    o->f = NULL;
    if (st == FK_OK && rename(o->tmp, o->path) != 0)
        st = fk_fail(err, FK_EIO, "%s: cannot put the finished output in place (rename): %s", o->path, strerror(errno));
    if (st != FK_OK && !o->anon) unlink(o->tmp);
    release(o);
    return st;
}

void fk_output_abort(fk_output *o)
{
    if (!o) return;
    if (!o->is_stdout) {
        if (o->f) fclose(o->f);
        if (o->tmp && !o->in_place && !o->anon) unlink(o->tmp);
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
