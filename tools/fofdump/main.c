/* fofdump - shows what a fofkit stream holds: its chunks, or one chunk's rows as text. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"
#include "stream.h"

static void help(void)
{
    printf("Usage: fofdump [OPTION]... [FILE]\n"
           "List the chunks of a fofkit stream (FILE or stdin), or print one chunk's\n"
           "contents as text. Every header is checked; a payload is checked (CRC, padding,\n"
           "zlib data) when it is printed, and every payload with --check.\n"
           "\n"
           "  -c, --chunk=TAG     print chunk TAG: text chunks as they are, arrays one row\n"
           "                      a line (columns separated by spaces)\n"
           "  -l, --level=K       with -c, the chunk of that level (default 0)\n"
           "  -C, --check         verify every chunk's payload too (the whole stream)\n"
           "  -o, --output=FILE   write to FILE (default stdout)\n"
           "  -f, --force         read binary data from a terminal\n"
           "  -h, --help          this help\n"
           "  -V, --version       version\n"
           "\n"
           "Exit status: 0 success, 1 bad input, missing chunk or I/O error, 2 usage error.\n"
           "See fofdump(1) and fofstream(5).\n");
}

static void print_rows(FILE *f, const fk_chunk *c, const void *data)
{
    const size_t es = fk_dtype_size(c->dtype);
    const unsigned char *p = data;
    for (uint64_t r = 0; r < c->nrows; r++) {
        for (uint32_t k = 0; k < c->ncols; k++, p += es) {
            if (k) fputc(' ', f);
            if (!strcmp(c->dtype, "<f4")) {
                float v;
                memcpy(&v, p, 4);
                fprintf(f, "%.9g", v);
            } else if (!strcmp(c->dtype, "<f8")) {
                double v;
                memcpy(&v, p, 8);
                fprintf(f, "%.17g", v);
            } else if (!strcmp(c->dtype, "<u4")) {
                uint32_t v;
                memcpy(&v, p, 4);
                fprintf(f, "%" PRIu32, v);
            } else if (!strcmp(c->dtype, "<u8")) {
                uint64_t v;
                memcpy(&v, p, 8);
                fprintf(f, "%" PRIu64, v);
            } else if (!strcmp(c->dtype, "<i4")) {
                int32_t v;
                memcpy(&v, p, 4);
                fprintf(f, "%" PRId32, v);
            } else if (!strcmp(c->dtype, "<i8")) {
                int64_t v;
                memcpy(&v, p, 8);
                fprintf(f, "%" PRId64, v);
            } else {
                fprintf(f, "%u", *p);
            }
        }
        fputc('\n', f);
    }
}

int main(int argc, char **argv)
{
    prog_init("fofdump");
    prog_std std = {0};
    const char *want = NULL;
    long long level = 0;
    int check = 0;
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"check", no_argument, 0, 'C'},
                                             {"chunk", required_argument, 0, 'c'},
                                             {"level", required_argument, 0, 'l'},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT "Cc:l:", longopts, NULL)) != -1) {
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        if (c == 'c') want = optarg;
        if (c == 'C') check = 1;
        if (c == 'l') level = prog_parse_int("--level", optarg, 0, UINT32_MAX);
    }
    const char *in = prog_one_input(argc, argv, optind);
    const char *name = strcmp(in, "-") ? in : "stdin";
    fk_error err = {0};
    FILE *fin = prog_open_input(in, 1, std.force);
    fk_output *out = prog_open_output(&std, 0);
    FILE *f = fk_output_file(out);
    fk_reader *r;
    if (fk_reader_open(&r, fin, name, &err)) prog_fail(&err);
    fk_chunk ch;
    int st, found = 0;
    if (!want) fprintf(f, "%-8s %-5s %5s %12s %6s %14s %s\n", "tag", "type", "level", "rows", "cols", "stored", "flags");
    uint64_t nchunks = 0;
    while ((st = fk_reader_next(r, &ch, &err)) == 1) {
        nchunks++;
        if (!want) {
            fprintf(f, "%-8s %-5s %5u %12" PRIu64 " %6u %14" PRIu64 " %s%s%s\n", ch.tag, ch.dtype, ch.level, ch.nrows,
                    ch.ncols, ch.stored, ch.flags & FK_CF_PARTICLE ? "particle " : "",
                    ch.flags & FK_CF_TEXT ? "text " : "", ch.flags & FK_CF_ZLIB ? "zlib" : "");
            if (check && fk_reader_verify(r, &err)) prog_fail(&err);
            continue;
        }
        if (found || strcmp(ch.tag, want) != 0 || ch.level != (uint32_t)level) {
            if (check && fk_reader_verify(r, &err)) prog_fail(&err);
            continue;
        }
        void *data;
        if (fk_reader_load(r, &data, &err)) prog_fail(&err);
        if (ch.flags & FK_CF_TEXT)
            fwrite(data, 1, (size_t)ch.nrows, f);
        else
            print_rows(f, &ch, data);
        free(data);
        found = 1;
    }
    if (st < 0) prog_fail(&err);
    if (want && !found) prog_die(EXIT_DATA, "%s: no chunk %s at level %lld", name, want, level);
    prog_commit(out);
    if (check)
        prog_info("%s: %" PRIu64 " chunks and %" PRIu64 " bytes, every header and payload checked", name, nchunks,
                  fk_reader_offset(r));
    fk_reader_close(r);
    fk_input_close(fin);
    return EXIT_OK;
}
