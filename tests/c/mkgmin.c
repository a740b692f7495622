/* mkgmin.c - test helper: splits a linked single-process stream into per-rank streams with GMIN chunks, as foflink under mpirun leaves them. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "levels.h"
#include "prog.h"
#include "snap.h"
#include "stream.h"

/*
 * Usage: mkgmin [OPTION]... R STREAM PATTERN
 * Reads STREAM (groups' input: ID and SINK levels, from foflink in one
 * process) and writes R streams, PATTERN with %r the rank: rank r gets the
 * contiguous slice [r n / R, (r+1) n / R) of the particles, every particle
 * chunk sliced, SNAP's counts the slice's, LINK with `ranks R` and `rank r`
 * added, TREE and TBOX (whole-stream trees) left out, and SINK level k
 * replaced by GMIN level k: <u8, the lowest ID among the members of the
 * particle's group. Options:
 *   --by-id            slice in increasing ID (each rank an ID range, as
 *                      tipsy2bin slices give) instead of stream order
 *   --short-gmin=Q     rank Q's GMIN chunks lack their last row (bad input)
 *   --nsource=Q        rank Q's SNAP says one more source particle (bad input)
 */

typedef struct stored {
    fk_chunk c;
    void *data;
} stored;

static const uint64_t *sort_ids;

/* PATTERN with "%r" replaced by q. */
static void expand(const char *pattern, int q, char *out, size_t size)
{
    size_t k = 0;
    for (const char *p = pattern; *p && k + 12 < size; p++) {
        if (p[0] == '%' && p[1] == 'r') {
            k += (size_t)snprintf(out + k, size - k, "%d", q);
            p++;
        } else {
            out[k++] = *p;
        }
    }
    out[k] = '\0';
}

static int by_id(const void *pa, const void *pb)
{
    uint64_t a = sort_ids[*(const uint64_t *)pa], b = sort_ids[*(const uint64_t *)pb];
    return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
    prog_init("mkgmin");
    int by_ids = 0;
    long short_q = -1, nsource_q = -1;
    for (; argc > 1 && !strncmp(argv[1], "--", 2); argc--, argv++) {
        if (!strcmp(argv[1], "--by-id"))
            by_ids = 1;
        else if (!strncmp(argv[1], "--short-gmin=", 13))
            short_q = (long)prog_parse_int("--short-gmin", argv[1] + 13, 0, 1 << 20);
        else if (!strncmp(argv[1], "--nsource=", 10))
            nsource_q = (long)prog_parse_int("--nsource", argv[1] + 10, 0, 1 << 20);
        else
            prog_usage("unknown option '%s'", argv[1]);
    }
    if (argc != 4) prog_usage("usage: mkgmin [--by-id] [--short-gmin=Q] [--nsource=Q] R STREAM PATTERN");
    int R = (int)prog_parse_int("R", argv[1], 1, 1 << 16);
    fk_error err = {0};
    FILE *in = prog_open_input(argv[2], 1, 1);
    fk_reader *r;
    fk_chunk c;
    fk_snap snap;
    char *snaptext;
    if (fk_reader_open(&r, in, argv[2], &err) || fk_snap_read(r, &c, &snap, &snaptext, argv[2], &err))
        prog_fail(&err);
    free(snaptext);
    stored *ch = NULL;
    int nch = 0, st;
    uint64_t *ids = NULL;
    uint32_t *sinks[FK_LEVELS_MAX] = {0};
    while ((st = fk_reader_next(r, &c, &err)) == 1) {
        if (!strcmp(c.tag, "TREE") || !strcmp(c.tag, "TBOX")) continue;
        ch = realloc(ch, (size_t)(nch + 1) * sizeof *ch);
        if (!ch) prog_die(EXIT_RESOURCE, "out of memory");
        ch[nch].c = c;
        if ((c.flags & FK_CF_TEXT ? fk_reader_load_text(r, (char **)&ch[nch].data, &err)
                                  : fk_reader_load(r, &ch[nch].data, &err)))
            prog_fail(&err);
        if (!strcmp(c.tag, "ID")) {
            if (fk_snap_check_chunk(&snap, &c, NULL, 1, argv[2], &err)) prog_fail(&err);
            ids = malloc(snap.n * sizeof *ids + 1);
            for (uint64_t i = 0; i < snap.n; i++)
                ids[i] = c.dtype[2] == '8' ? ((uint64_t *)ch[nch].data)[i] : ((uint32_t *)ch[nch].data)[i];
        }
        if (!strcmp(c.tag, "SINK") && c.level < FK_LEVELS_MAX) sinks[c.level] = ch[nch].data;
        nch++;
    }
    if (st < 0) prog_fail(&err);
    if (!ids || !sinks[0]) prog_die(EXIT_DATA, "%s: needs ID and SINK chunks", argv[2]);
    uint64_t n = snap.n;
    /* GMIN of every level: the lowest ID of each root's group */
    uint64_t *gmin[FK_LEVELS_MAX] = {0}, *low = malloc(n * sizeof *low + 1);
    for (int k = 0; k < FK_LEVELS_MAX && sinks[k]; k++) {
        uint32_t *root = malloc(n * sizeof *root + 1);
        memcpy(root, sinks[k], n * sizeof *root);
        if (fk_groups_resolve(root, n, argv[2], &err)) prog_fail(&err);
        for (uint64_t i = 0; i < n; i++) low[i] = UINT64_MAX;
        for (uint64_t i = 0; i < n; i++)
            if (ids[i] < low[root[i]]) low[root[i]] = ids[i];
        gmin[k] = malloc(n * sizeof *gmin[k] + 1);
        for (uint64_t i = 0; i < n; i++) gmin[k][i] = low[root[i]];
        free(root);
    }
    /* the order particles are sliced in */
    uint64_t *perm = malloc(n * sizeof *perm + 1);
    for (uint64_t i = 0; i < n; i++) perm[i] = i;
    if (by_ids) {
        sort_ids = ids;
        qsort(perm, n, sizeof *perm, by_id);
    }
    const uint8_t *type = NULL;
    for (int j = 0; j < nch; j++)
        if (!strcmp(ch[j].c.tag, "TYPE")) type = ch[j].data;
    for (int q = 0; q < R; q++) {
        uint64_t a = n * (uint64_t)q / (uint64_t)R, b = n * (uint64_t)(q + 1) / (uint64_t)R, m = b - a;
        char name[4096];
        expand(argv[3], q, name, sizeof name);
        prog_std std = {.output = name, .force = 1};
        fk_output *out = prog_open_output(&std, 1);
        fk_writer *w;
        fk_snap s = snap;
        s.n = m;
        if (type) {
            s.ntype[0] = s.ntype[1] = s.ntype[2] = 0;
            for (uint64_t i = a; i < b; i++) s.ntype[type[perm[i]]]++;
        } else {
            s.ntype[0] = s.ntype[2] = 0;
            s.ntype[1] = m;
        }
        if (q == nsource_q) {
            s.nsource++;
            s.nsource_type[1]++;
        }
        char *text;
        if (fk_snap_format(&s, &text, &err) || fk_writer_open(&w, fk_output_file(out), 0, &err) ||
            fk_writer_text(w, "SNAP", 0, text, &err))
            prog_fail(&err);
        free(text);
        for (int j = 0; j < nch; j++) {
            fk_chunk d = ch[j].c;
            if (!strcmp(d.tag, "SINK")) {
                uint64_t rows = m - (q == short_q && m);
                uint64_t *g = malloc(rows * sizeof *g + 1);
                for (uint64_t i = 0; i < rows; i++) g[i] = gmin[d.level][perm[a + i]];
                fk_chunk_init(&d, "GMIN", "<u8", FK_CF_PARTICLE, rows, 1);
                d.level = ch[j].c.level;
                if (fk_writer_put(w, &d, g, &err)) prog_fail(&err);
                free(g);
            } else if (!strcmp(d.tag, "LINK")) {
                const char *t = ch[j].data;
                size_t len = strlen(t);
                char *lt = malloc(len + 64);
                snprintf(lt, len + 64, "%sranks %d\nrank %d\n", t, R, q);
                if (fk_writer_text(w, "LINK", d.level, lt, &err)) prog_fail(&err);
                free(lt);
            } else if (d.flags & FK_CF_PARTICLE) {
                size_t row = fk_dtype_size(d.dtype) * d.ncols;
                char *buf = malloc(m * row + 1);
                for (uint64_t i = 0; i < m; i++) memcpy(buf + i * row, (char *)ch[j].data + perm[a + i] * row, row);
                fk_chunk_init(&d, ch[j].c.tag, ch[j].c.dtype, FK_CF_PARTICLE, m, ch[j].c.ncols);
                d.level = ch[j].c.level;
                if (fk_writer_put(w, &d, buf, &err)) prog_fail(&err);
                free(buf);
            } else {
                fk_chunk_init(&d, ch[j].c.tag, ch[j].c.dtype, ch[j].c.flags & ~FK_CF_ZLIB, ch[j].c.nrows,
                              ch[j].c.ncols);
                d.level = ch[j].c.level;
                if (fk_writer_put(w, &d, ch[j].data, &err)) prog_fail(&err);
            }
        }
        if (fk_writer_finish(w, &err)) prog_fail(&err);
        fk_writer_free(w);
        prog_commit(out);
    }
    return EXIT_OK;
}
