/* fuzz_gadget.c - fuzz harness: the Gadget-2 reader (formats 1 and 2, both byte orders, snapshots in several files, pipes). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio_ext.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "gadget.h"
#include "gsnapcheck.h"

/*
 * The input is a snapshot: one file, or up to FILES files separated by SEP
 * (the seeds of tests/fuzz/seeds split real ones so). They are written into
 * a private folder as gadget2bin would find them: one file as "one", several
 * as "snap.0", "snap.1", ... (read as "snap.0"). Each is read with
 * gadget2bin's defaults, then, when that fails for want of a box, with a box;
 * a snapshot that reads is read again in slices of 2 and 3 and with some of
 * its types, which must give the same particles, and, in one file, through a
 * pipe (no size, no seeks: the arrays grow as particles arrive), which must
 * give the same arrays. Every error must be one line naming a file; none may
 * be out of memory, since a file's size bounds what its header may claim.
 */

#define FILES 4
static const char SEP[8] = {'@', '@', 'F', 'I', 'L', 'E', '@', '@'};

static char dir[64];

typedef struct input {
    char path[96]; /* what gadget2bin is given */
    int nfiles;
    const uint8_t *part[FILES];
    size_t size[FILES];
} input;

/* Removes the files of the previous input. */
static void clear_files(void)
{
    char name[128];
    for (int k = 0; k < FILES; k++) {
        snprintf(name, sizeof name, "%s/snap.%d", dir, k);
        unlink(name);
    }
    snprintf(name, sizeof name, "%s/one", dir);
    unlink(name);
}

/* At exit: the folder and what is left in it. */
static void remove_dir(void)
{
    clear_files();
    rmdir(dir);
}

/* Writes the parts of the input into dir, removing those of the previous input. */
static void put_files(input *in)
{
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/fuzz_gadget.XXXXXX", tmp && strlen(tmp) < 32 ? tmp : "/tmp");
        if (!mkdtemp(dir)) abort();
        atexit(remove_dir);
    }
    char name[128];
    clear_files();
    for (int k = 0; k < in->nfiles; k++) {
        if (in->nfiles == 1)
            snprintf(name, sizeof name, "%s/one", dir);
        else
            snprintf(name, sizeof name, "%s/snap.%d", dir, k);
        int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || (in->size[k] && write(fd, in->part[k], in->size[k]) != (ssize_t)in->size[k]) || close(fd)) abort();
    }
    snprintf(in->path, sizeof in->path, in->nfiles == 1 ? "%s/one" : "%s/snap.0", dir);
}

static void split(const uint8_t *data, size_t size, input *in)
{
    in->nfiles = 0;
    size_t start = 0;
    for (size_t i = 0; i + sizeof SEP <= size && in->nfiles < FILES - 1; i++)
        if (!memcmp(data + i, SEP, sizeof SEP)) {
            in->part[in->nfiles] = data + start, in->size[in->nfiles++] = i - start;
            start = i + sizeof SEP;
            i = start - 1;
        }
    in->part[in->nfiles] = data + start, in->size[in->nfiles++] = size - start;
}

/* A failed read: one line, naming one of the files, and never out of memory. */
static void check_error(int st, const fk_error *err)
{
    FUZZ_ASSERT_ERR(st, *err);
    FUZZ_ASSERT(st == FK_EFORMAT || st == FK_EIO || st == FK_EINVAL);
    FUZZ_ASSERT(!strncmp(err->msg, dir, strlen(dir)) || !strncmp(err->msg, "stdin: ", 7));
}

static int read_files(void *ctx, const fk_gsnap_opts *o, fk_gsnap *s, fk_error *err)
{
    const input *in = ctx;
    int st = fk_gadget_read(in->path, o, s, NULL, err);
    if (st) check_error(st, err);
    return st;
}

/* Reads the single file of in through a pipe (as "-"): the same arrays as w. */
static void check_pipe(const input *in, const fk_gsnap_opts *o, const fk_gsnap *w)
{
    int p[2];
    if (in->size[0] > (1u << 20) || pipe(p)) return;
    if (fcntl(p[1], F_SETPIPE_SZ, (int)(in->size[0] < 65536 ? 65536 : in->size[0])) < (int)in->size[0] ||
        (in->size[0] && write(p[1], in->part[0], in->size[0]) != (ssize_t)in->size[0])) {
        close(p[0]), close(p[1]);
        return;
    }
    close(p[1]);
    int saved = dup(0);
    if (saved < 0 || dup2(p[0], 0) < 0) abort();
    close(p[0]);
    __fpurge(stdin);
    clearerr(stdin);
    fk_gsnap s;
    fk_error err = {0};
    int st = fk_gadget_read("-", o, &s, NULL, &err);
    if (st) fprintf(stderr, "through a pipe: %s\n", err.msg);
    FUZZ_ASSERT(st == FK_OK);
    gsnap_check(&s, o);
    FUZZ_ASSERT(s.n == w->n && s.cap == s.n);
    for (uint64_t i = 0; i < s.n; i++) FUZZ_ASSERT(gsnap_same(&s, i, w, i));
    fk_gsnap_free(&s);
    __fpurge(stdin);
    clearerr(stdin);
    if (dup2(saved, 0) < 0) abort();
    close(saved);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in;
    split(data, size, &in);
    put_files(&in);
    fk_gsnap_opts o;
    fk_gsnap_opts_default(&o);
    fk_gsnap w;
    fk_error err = {0};
    int st = read_files(&in, &o, &w, &err);
    if (st == FK_EINVAL && strstr(err.msg, "no box size")) {
        /* initial conditions often have none: the box given, positions wrapped into it */
        fk_gsnap_free(&w);
        o.box = 50000, o.origin = -1000;
        fk_error_clear(&err);
        st = read_files(&in, &o, &w, &err);
    }
    if (st == FK_OK) {
        gsnap_check(&w, &o);
        gsnap_check_parts(read_files, &in, &w, &o, 2, 3);
        if (in.nfiles == 1) check_pipe(&in, &o, &w);
    }
    fk_gsnap_free(&w);
    return 0;
}
