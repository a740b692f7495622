/* addchunk.c - test helper: passes a fofkit stream through, dropping chunks by tag (and level), appending chunks given as text. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"
#include "stream.h"

/*
 * Usage: addchunk [--drop=TAG[@K]]... [--last=TAG[@K]]... [-o FILE] STREAM [SPEC]...
 * Copies STREAM ("-": stdin) chunk by chunk, leaving out the chunks named
 * by --drop (every level, or level K) and holding back those named by
 * --last, written after all the others in their order (a stream in another
 * chunk order: foflink's LINK and SINK after the particles, as an older
 * foflink wrote them), then appends one chunk per SPEC:
 *   TAG[@K]:u4:V V ...       <u4, one column, a row per value (flags 0)
 *   TAG[@K]:f8:V V ...       <f8, the same
 *   TAG[@K]:text:LINE;LINE   a text chunk, lines separated by ';'
 * K is the chunk's level (default 0). Values are not checked beyond being
 * numbers: the point is to build the streams of hierarchical groups (GID,
 * GRPS and GPAR of levels 1, 2, ...) before groups writes them, and bad
 * ones too.
 */

static void help(void)
{
    printf("Usage: addchunk [OPTION]... STREAM [SPEC]...\n"
           "Copies the fofkit stream STREAM ('-' for stdin), then appends a chunk per SPEC:\n"
           "  TAG[@K]:u4:V V ...   TAG[@K]:f8:V V ...   TAG[@K]:text:LINE;LINE...\n"
           "\n"
           "      --drop=TAG[@K]   leave out the chunks TAG (of level K only, with @K); repeatable\n"
           "      --last=TAG[@K]   write the chunks TAG (of level K only) after all the others; repeatable\n"
           "  -o FILE, -f, -z[N], -v, -h, -V   as in every fofkit program\n");
}

typedef struct named {
    char tag[FK_TAG_MAX + 1];
    long level; /* -1: any */
} named;
static named drops[16], lasts[16];
static int ndrops, nlasts;

/* The chunks held back by --last, in their order. */
static struct {
    fk_chunk c;
    void *data;
} held[64];
static int nheld;

/* Splits "TAG[@K]" at s (up to end) into tag and level (-1 when absent). */
static void tag_level(const char *s, size_t len, char *tag, long *level, const char *what)
{
    const char *at = memchr(s, '@', len);
    size_t tl = at ? (size_t)(at - s) : len;
    if (tl == 0 || tl > FK_TAG_MAX) prog_usage("%s: bad tag in '%s'", what, s);
    memcpy(tag, s, tl);
    tag[tl] = '\0';
    *level = -1;
    if (at) {
        char buf[32];
        size_t kl = len - tl - 1;
        if (kl == 0 || kl >= sizeof buf) prog_usage("%s: bad level in '%s'", what, s);
        memcpy(buf, at + 1, kl);
        buf[kl] = '\0';
        *level = (long)prog_parse_int(what, buf, 0, UINT32_MAX);
    }
}

static int named_in(const named *list, int n, const fk_chunk *c)
{
    for (int i = 0; i < n; i++)
        if (strcmp(list[i].tag, c->tag) == 0 && (list[i].level < 0 || list[i].level == (long)c->level)) return 1;
    return 0;
}

static int dropped(const fk_chunk *c)
{
    return named_in(drops, ndrops, c);
}

/* Appends the chunk of one SPEC. */
static void append(fk_writer *w, const char *spec)
{
    fk_error err = {0};
    const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) prog_usage("chunk '%s' needs TAG[@K]:TYPE:VALUES", spec);
    char tag[FK_TAG_MAX + 1];
    long level;
    tag_level(spec, (size_t)(c1 - spec), tag, &level, "chunk");
    const char *type = c1 + 1, *vals = c2 + 1;
    size_t tlen = (size_t)(c2 - type);
    if (tlen == 4 && strncmp(type, "text", 4) == 0) {
        char *text = malloc(strlen(vals) + 2);
        if (!text) prog_die(EXIT_RESOURCE, "out of memory");
        size_t k = 0;
        for (const char *p = vals; *p; p++) text[k++] = *p == ';' ? '\n' : *p;
        if (k && text[k - 1] != '\n') text[k++] = '\n';
        text[k] = '\0';
        if (fk_writer_text(w, tag, level < 0 ? 0 : (uint32_t)level, text, &err)) prog_fail(&err);
        free(text);
        return;
    }
    int f8 = tlen == 2 && strncmp(type, "f8", 2) == 0;
    if (!f8 && !(tlen == 2 && strncmp(type, "u4", 2) == 0)) prog_usage("chunk '%s': type must be u4, f8 or text", spec);
    size_t n = 0, cap = 64;
    char *buf = malloc(cap * 8);
    if (!buf) prog_die(EXIT_RESOURCE, "out of memory");
    const char *p = vals;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno == ERANGE) prog_usage("chunk '%s': '%s' is not a number", spec, p);
        if (n == cap) {
            cap *= 2;
            if (!(buf = realloc(buf, cap * 8))) prog_die(EXIT_RESOURCE, "out of memory");
        }
        if (f8) {
            memcpy(buf + 8 * n, &v, 8);
        } else {
            if (v < 0 || v > UINT32_MAX || v != (double)(uint32_t)v) prog_usage("chunk '%s': %g is not a u4", spec, v);
            uint32_t u = (uint32_t)v;
            memcpy(buf + 4 * n, &u, 4);
        }
        n++;
        p = end;
    }
    fk_chunk c;
    fk_chunk_init(&c, tag, f8 ? "<f8" : "<u4", 0, n, 1);
    c.level = level < 0 ? 0 : (uint32_t)level;
    if (fk_writer_put(w, &c, buf, &err)) prog_fail(&err);
    free(buf);
}

int main(int argc, char **argv)
{
    prog_init("addchunk");
    prog_std std = {0};
    static const struct option longopts[] = {PROG_STD_LONG, {"drop", required_argument, 0, 'D'},
                                             {"last", required_argument, 0, 'L'}, {0, 0, 0, 0}};
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":" PROG_STD_SHORT, longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, &std, help, argv)) continue;
        if (opt == 'D') {
            if (ndrops == 16) prog_usage("--drop: at most 16");
            tag_level(optarg, strlen(optarg), drops[ndrops].tag, &drops[ndrops].level, "--drop");
            ndrops++;
        } else if (opt == 'L') {
            if (nlasts == 16) prog_usage("--last: at most 16");
            tag_level(optarg, strlen(optarg), lasts[nlasts].tag, &lasts[nlasts].level, "--last");
            nlasts++;
        }
    }
    if (optind >= argc) prog_usage("a stream is needed ('-' for stdin)");
    const char *path = argv[optind];
    fk_error err = {0};
    FILE *in = prog_open_input(path, 1, std.force);
    fk_reader *r;
    fk_writer *w;
    fk_chunk c;
    if (fk_reader_open(&r, in, path, &err)) prog_fail(&err);
    fk_output *out = prog_open_output(&std, 1);
    if (fk_writer_open(&w, fk_output_file(out), std.zlevel, &err)) prog_fail(&err);
    int st;
    while ((st = fk_reader_next(r, &c, &err)) == 1) {
        if (dropped(&c)) continue;
        if (named_in(lasts, nlasts, &c)) {
            if (nheld == 64) prog_die(EXIT_DATA, "--last: at most 64 chunks are held back");
            held[nheld].c = c;
            if (fk_reader_load(r, &held[nheld].data, &err)) prog_fail(&err);
            nheld++;
        } else if (fk_writer_copy(w, r, &c, &err)) {
            prog_fail(&err);
        }
    }
    if (st < 0) prog_fail(&err);
    for (int k = 0; k < nheld; k++)
        if (fk_writer_put_read(w, &held[k].c, held[k].data, &err)) prog_fail(&err);
    for (int k = optind + 1; k < argc; k++) append(w, argv[k]);
    if (fk_writer_finish(w, &err)) prog_fail(&err);
    fk_writer_free(w);
    for (int k = 0; k < nheld; k++) free(held[k].data);
    fk_reader_close(r);
    fk_input_close(in);
    prog_commit(out);
    return EXIT_OK;
}
