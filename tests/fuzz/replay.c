/* replay.c - a plain main() for the fuzz harnesses: runs each input file (or every file of each directory) once. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* `make test` replays the committed corpus and the past crash inputs of a
 * harness through this driver, built with the ordinary compiler (no clang or
 * libFuzzer needed): an input that makes the harness abort or crash fails
 * the test. Usage: fuzz_NAME FILE|DIR... ; prints how many inputs ran. */

static long replayed;

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: %s: cannot read\n", path);
        free(buf);
        return 1;
    }
    /* A copy of exactly len bytes, so that a read past the input is caught
     * by a sanitizer as it would be under libFuzzer. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) abort();
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    replayed++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_path(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (!S_ISDIR(sb.st_mode)) return replay_file(path);
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap && !(names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names))) abort();
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len))) abort();
        snprintf(names[n++], len, "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, by_name); /* the same order on every machine */
    int st = 0;
    for (size_t i = 0; i < n; i++) {
        st |= replay_file(names[i]);
        free(names[i]);
    }
    free(names);
    return st;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    int st = 0;
    for (int i = 1; i < argc; i++) st |= replay_path(argv[i]);
    printf("%ld inputs replayed\n", replayed);
    return st;
}
