/* coreutils.c - hands "groups USER" and a bare "groups" (unless a stream file is on stdin) to coreutils' groups(1), which shares the stage's name. */
#include "coreutils.h"

#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prog.h"

/* Whether stdin is a regular file whose next bytes are a fofkit stream's
 * magic (lib/stream.h), read with pread: nothing is consumed, nothing waits.
 * A pipe is never peeked: a pipe that is still empty may stay so (ssh's
 * stdin, a cron job's), and a pipe cannot be un-read. */
static int stream_file_on_stdin(void)
{
    static const unsigned char magic[8] = {0x89, 'F', 'O', 'F', '\r', '\n', 0x1a, '\n'};
    struct stat st;
    if (fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    off_t at = lseek(STDIN_FILENO, 0, SEEK_CUR);
    unsigned char head[sizeof magic];
    return at >= 0 && pread(STDIN_FILENO, head, sizeof head, at) == (ssize_t)sizeof head &&
           memcmp(head, magic, sizeof magic) == 0;
}

/* Whether the call is coreutils' kind: no option, and either no operand
 * while stdin is anything but a file holding a fofkit stream (a terminal,
 * /dev/null, a pipe, nothing), or only users' names that name no file. */
static int coreutils_call(int argc, char **argv)
{
    const char *base = strrchr(argv[0], '/');
    if (strcmp(base ? base + 1 : argv[0], "groups") != 0) return 0;
    if (argc == 1) return !stream_file_on_stdin();
    for (int k = 1; k < argc; k++) {
        struct stat st;
        if (argv[k][0] == '-' || stat(argv[k], &st) == 0 || !getpwnam(argv[k])) return 0;
    }
    return 1;
}

/* The fofkit groups programs a handoff has passed through, as " dev:ino"
 * words: one that finds another fofkit groups before coreutils' on the PATH
 * (an installed copy and a build's) skips every one seen, so no two hand
 * the call back and forth. */
#define SEEN "FOFKIT_GROUPS_SEEN"

static int seen(const struct stat *st)
{
    char word[64];
    const char *list = getenv(SEEN);
    snprintf(word, sizeof word, " %llu:%llu ", (unsigned long long)st->st_dev, (unsigned long long)st->st_ino);
    if (!list) return 0;
    char padded[4096];
    snprintf(padded, sizeof padded, "%s ", list);
    return strstr(padded, word) != NULL;
}

/* An executable "groups" in dir that is not one of fofkit's seen, into path. */
static int other_groups(const char *dir, size_t len, char *path, size_t size)
{
    struct stat st;
    if (snprintf(path, size, "%.*s/groups", (int)len, len ? dir : ".") >= (int)size) return 0;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, X_OK) != 0) return 0;
    return !seen(&st);
}

void groups_coreutils_handoff(int argc, char **argv)
{
    if (!coreutils_call(argc, argv)) return;
    struct stat self;
    if (stat("/proc/self/exe", &self) != 0) return; /* no way to tell itself from coreutils' */
    char list[4096];
    const char *old = getenv(SEEN);
    if (snprintf(list, sizeof list, "%s %llu:%llu", old ? old : "", (unsigned long long)self.st_dev,
                 (unsigned long long)self.st_ino) >= (int)sizeof list || setenv(SEEN, list, 1) != 0)
        return;
    char path[PATH_MAX];
    const char *p = getenv("PATH");
    while (p && *p) {
        size_t len = strcspn(p, ":");
        if (other_groups(p, len, path, sizeof path)) execv(path, argv);
        p += len + (p[len] == ':');
    }
    static const char *usual[] = {"/usr/bin", "/bin"};
    for (size_t k = 0; k < sizeof usual / sizeof *usual; k++)
        if (other_groups(usual[k], strlen(usual[k]), path, sizeof path)) execv(path, argv);
    /* none (or it failed to start): this is fofkit's stage, which says what is wrong with the operands */
}
