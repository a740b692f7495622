/* splitstream.c - test helper: splits a fofkit stream into R streams of contiguous particle slices, the input of a distributed run. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "prog.h"
#include "snap.h"
#include "stream.h"

/*
 * Usage: splitstream [--weights=W0,W1,...] R STREAM OUT
 * Writes R streams, OUT with "%r" replaced by 0 .. R-1: stream r holds the
 * particles [r n / R, (r+1) n / R) of STREAM, every per-particle chunk
 * sliced so, its SNAP's counts those of the slice (types counted from TYPE
 * when there is one, else from the stream's gas, dark, star order), every
 * other chunk copied whole except TREE and TBOX (they describe the whole).
 * --weights gives the slices' shares instead (0 makes an empty stream).
 */

typedef struct item {
    fk_chunk c;
    void *data;
} item;

static void help(void)
{
    printf("Usage: splitstream [--weights=W,...] R STREAM OUT\n"
           "Splits the fofkit stream STREAM ('-': stdin) into R streams of contiguous particle slices,\n"
           "named OUT with %%r replaced by 0 .. R-1.\n");
}

int main(int argc, char **argv)
{
    prog_init("splitstream");
    prog_std std = {0};
    double w[64];
    int nw = 0;
    static const struct option longopts[] = {PROG_STD_LONG, {"weights", required_argument, 0, 'w'}, {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT "w:", longopts, NULL)) != -1) {
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        if (c == 'w') nw = prog_parse_list("--weights", optarg, w, 64, 0, 1e9);
    }
    if (argc - optind != 3) prog_usage("give R, STREAM and OUT");
    int R = (int)prog_parse_int("R", argv[optind], 1, 64);
    if (nw && nw != R) prog_usage("--weights gives %d shares for %d streams", nw, R);
    if (!fk_dist_has_pattern(argv[optind + 2])) prog_usage("OUT needs %%r");
    fk_error err = {0};
    FILE *in = prog_open_input(argv[optind + 1], 1, std.force);
    fk_reader *r;
    fk_chunk sc;
    fk_snap snap;
    char *stext;
    if (fk_reader_open(&r, in, argv[optind + 1], &err) ||
        fk_snap_read(r, &sc, &snap, &stext, argv[optind + 1], &err))
        prog_fail(&err);
    item *items = NULL;
    int nitems = 0, st;
    const uint8_t *type = NULL;
    fk_chunk ch;
    while ((st = fk_reader_next(r, &ch, &err)) == 1) {
        if (!strcmp(ch.tag, "TREE") || !strcmp(ch.tag, "TBOX")) continue;
        items = realloc(items, (size_t)(nitems + 1) * sizeof *items);
        if (!items) prog_die(EXIT_RESOURCE, "out of memory");
        items[nitems].c = ch;
        if (fk_reader_load(r, &items[nitems].data, &err)) prog_fail(&err);
        if (!strcmp(ch.tag, "TYPE") && ch.level == 0) type = items[nitems].data;
        nitems++;
    }
    if (st < 0) prog_fail(&err);
    double wsum = 0;
    for (int k = 0; k < nw; k++) wsum += w[k];
    uint64_t a = 0;
    for (int k = 0; k < R; k++) {
        uint64_t b = (uint64_t)((long double)snap.n * (k + 1) / R);
        if (nw) {
            double cum = 0;
            for (int j = 0; j <= k; j++) cum += w[j];
            b = wsum > 0 ? (uint64_t)((long double)snap.n * cum / wsum) : 0;
        }
        if (k == R - 1) b = snap.n;
        fk_snap s = snap;
        s.n = b - a;
        for (int t = 0; t < 3; t++) s.ntype[t] = 0;
        for (uint64_t i = a; i < b; i++) {
            int t;
            if (type)
                t = type[i];
            else
                t = i < snap.ntype[0] ? 0 : i < snap.ntype[0] + snap.ntype[1] ? 1 : 2;
            s.ntype[t < 3 ? t : 2]++;
        }
        char *name, *text;
        if (fk_dist_expand(argv[optind + 2], k, &name, &err)) prog_fail(&err);
        prog_std o = std;
        o.output = name;
        fk_output *out = prog_open_output(&o, 1);
        fk_writer *wr;
        if (fk_writer_open(&wr, fk_output_file(out), std.zlevel, &err) || fk_snap_format(&s, &text, &err) ||
            fk_writer_text(wr, "SNAP", 0, text, &err))
            prog_fail(&err);
        for (int j = 0; j < nitems; j++) {
            const fk_chunk *x = &items[j].c;
            fk_chunk y;
            const unsigned char *p = items[j].data;
            uint32_t flags = x->flags & (FK_CF_PARTICLE | FK_CF_TEXT);
            if (x->flags & FK_CF_PARTICLE) {
                size_t row = fk_dtype_size(x->dtype) * x->ncols;
                fk_chunk_init(&y, x->tag, x->dtype, flags, b - a, x->ncols);
                p += row * a;
            } else {
                fk_chunk_init(&y, x->tag, x->dtype, flags, x->nrows, x->ncols);
            }
            y.level = x->level;
            if (fk_writer_put(wr, &y, p, &err)) prog_fail(&err);
        }
        if (fk_writer_finish(wr, &err)) prog_fail(&err);
        fk_writer_free(wr);
        prog_commit(out);
        free(text);
        free(name);
        a = b;
    }
    for (int j = 0; j < nitems; j++) free(items[j].data);
    free(items);
    free(stext);
    fk_reader_close(r);
    fk_input_close(in);
    return EXIT_OK;
}
