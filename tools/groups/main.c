/* main.c - groups: resolves foflink's sink array into groups numbered by size (GID, GRPS chunks, or a tipsy .grp file). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "prog.h"
#include "snap.h"
#include "stream.h"

#define DEFAULT_MINSIZE 8

static void help(void)
{
    printf("Usage: groups [OPTION]... [STREAM]\n"
           "Resolves the SINK chunk of a fofkit stream (from foflink) into friends-of-friends groups,\n"
           "drops groups of fewer than N members and numbers the rest 1, 2, ... by decreasing size\n"
           "(ties: lowest original index first); 0 means no group. Writes the stream on with a GRPS\n"
           "chunk and a GID chunk (one group id per particle of the source snapshot, in its original\n"
           "order), or with --format=grp the classic tipsy .grp text file. Reads STREAM, or stdin.\n"
           "\n"
           "  -m, --min-size=N      keep groups of at least N members (default %d)\n"
           "      --format=FORMAT   'stream' (default) or 'grp': first line the number of particles\n"
           "                        in the source, then one group id a line in its original order\n"
           "  -o, --output=FILE     write FILE (atomically) instead of stdout\n"
           "  -f, --force           read or write binary data on a terminal\n"
           "  -z, --compress[=N]    zlib-compress every chunk written (level N, default 6)\n"
           "  -v, --verbose         one summary line on stderr\n"
           "  -h, --help            show this help and exit\n"
           "  -V, --version         show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 out of memory.\n"
           "Example: tipsy2bin snap.std | kdbuild | foflink -b 0.2 | groups -m 20 | halostats\n",
           DEFAULT_MINSIZE);
}

/* Widens an ID payload (<u4 or <u8, already CRC-checked) into a new array. */
static uint64_t *widen_ids(const void *raw, const fk_chunk *c)
{
    uint64_t *ids = malloc(c->nrows ? c->nrows * sizeof *ids : 1);
    if (!ids) prog_die(EXIT_RESOURCE, "out of memory for %" PRIu64 " particle IDs", c->nrows);
    if (strcmp(c->dtype, "<u8") == 0)
        memcpy(ids, raw, c->nrows * sizeof *ids);
    else
        for (uint64_t i = 0; i < c->nrows; i++) ids[i] = ((const uint32_t *)raw)[i];
    return ids;
}

/* Writes the .grp text: nsource, then one id a line. Hand-formatted: for
 * millions of lines printf's parsing costs more than the rest of groups. */
static void write_grp(FILE *f, const uint32_t *gid, uint64_t nsource)
{
    char buf[1 << 16];
    size_t len = (size_t)snprintf(buf, sizeof buf, "%" PRIu64 "\n", nsource);
    for (uint64_t r = 0; r < nsource; r++) {
        char tmp[12];
        int k = 0;
        uint32_t v = gid[r];
        do {
            tmp[k++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        if (len + 12 > sizeof buf) {
            fwrite(buf, 1, len, f);
            len = 0;
        }
        while (k) buf[len++] = tmp[--k];
        buf[len++] = '\n';
    }
    fwrite(buf, 1, len, f);
}

int main(int argc, char **argv)
{
    prog_init("groups");
    prog_std std = {0};
    uint64_t minsize = DEFAULT_MINSIZE;
    int grp = 0;
    static const struct option longopts[] = {
        PROG_STD_LONG, {"min-size", required_argument, 0, 'm'}, {"format", required_argument, 0, 'F'}, {0, 0, 0, 0}};
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":" PROG_STD_SHORT "m:", longopts, NULL)) != -1) {
        if (prog_std_option(opt, optarg, &std, help, argv)) continue;
        if (opt == 'm') {
            minsize = (uint64_t)prog_parse_int("-m", optarg, 1, UINT32_MAX);
        } else if (opt == 'F') {
            if (strcmp(optarg, "stream") == 0)
                grp = 0;
            else if (strcmp(optarg, "grp") == 0)
                grp = 1;
            else
                prog_usage("option --format needs 'stream' or 'grp', not '%s'", optarg);
        }
    }
    if (grp && std.zlevel) prog_usage("option -z applies to --format=stream only");
    const char *path = prog_one_input(argc, argv, optind);
    const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
    double t0 = prog_now();

    fk_error err = {0};
    FILE *in = prog_open_input(path, 1, std.force);
    fk_reader *r;
    if (fk_reader_open(&r, in, name, &err)) prog_fail(&err);
    fk_chunk c;
    fk_snap snap;
    char *snaptext;
    if (fk_snap_read(r, &c, &snap, &snaptext, name, &err)) prog_fail(&err);

    fk_output *out = prog_open_output(&std, !grp);
    fk_writer *w = NULL;
    if (!grp) {
        if (fk_writer_open(&w, fk_output_file(out), std.zlevel, &err) ||
            fk_writer_text(w, "SNAP", c.level, snaptext, &err))
            prog_fail(&err);
    }
    free(snaptext);

    /* Pass everything through except the GID and GRPS this run replaces;
     * keep ID and SINK, which may come in either order. */
    uint64_t *ids = NULL;
    uint32_t *sink = NULL;
    int st, replaced = 0;
    while ((st = fk_reader_next(r, &c, &err)) == 1) {
        int is_id = strcmp(c.tag, "ID") == 0, is_sink = strcmp(c.tag, "SINK") == 0;
        if (is_sink && c.level != 0)
            prog_die(EXIT_DATA, "%s: SINK level %" PRIu32 " found: this groups resolves level 0 only", name, c.level);
        if ((is_id && ids) || (is_sink && sink)) prog_die(EXIT_DATA, "%s: stream has two %s chunks", name, c.tag);
        if (is_id || is_sink) {
            void *raw;
            if (fk_snap_check_chunk(&snap, &c, is_id ? NULL : "<u4", 1, name, &err) || fk_reader_load(r, &raw, &err) ||
                (w && fk_writer_put(w, &c, raw, &err)))
                prog_fail(&err);
            if (is_id) {
                ids = widen_ids(raw, &c);
                free(raw);
            } else {
                sink = raw;
            }
        } else if ((strcmp(c.tag, "GID") == 0 || strcmp(c.tag, "GRPS") == 0) && c.level == 0) {
            replaced = 1;
        } else if (w && fk_writer_copy(w, r, &c, &err)) {
            prog_fail(&err);
        }
    }
    if (st < 0) prog_fail(&err);
    fk_reader_close(r);
    fk_input_close(in);
    if (!sink) prog_die(EXIT_DATA, "stream has no SINK chunk (run foflink first)");
    if (!ids) prog_die(EXIT_DATA, "stream has no ID chunk (run tipsy2bin first)");

    fk_groups info;
    uint32_t *gid = malloc(snap.nsource ? snap.nsource * sizeof *gid : 1);
    if (!gid) prog_die(EXIT_RESOURCE, "out of memory for the group ids of %" PRIu64 " particles", snap.nsource);
    if (fk_groups_check_ids(ids, snap.n, snap.nsource, name, &err) || fk_groups_resolve(sink, snap.n, name, &err) ||
        fk_groups_number(sink, ids, snap.n, snap.nsource, minsize, gid, &info, &err))
        prog_fail(&err);
    free(sink);
    free(ids);

    if (grp) {
        write_grp(fk_output_file(out), gid, snap.nsource);
    } else {
        char *text;
        fk_chunk g;
        fk_chunk_init(&g, "GID", "<u4", 0, snap.nsource, 1);
        if (fk_groups_format(&info, &text, &err) || fk_writer_text(w, "GRPS", 0, text, &err) ||
            fk_writer_put(w, &g, gid, &err) || fk_writer_finish(w, &err))
            prog_fail(&err);
        free(text);
        fk_writer_free(w);
    }
    prog_commit(out);
    free(gid);
    prog_info("%" PRIu64 " groups found, %" PRIu64 " kept (at least %" PRIu64 " members), largest %" PRIu64
              ", %.1f%% of %" PRIu64 " particles grouped%s (%.2f s)",
              info.nfound, info.ngroups, info.minsize, info.largest,
              snap.n ? 100.0 * (double)info.ngrouped / (double)snap.n : 0.0, snap.n,
              replaced ? ", the input's GID and GRPS replaced" : "", prog_now() - t0);
    return EXIT_OK;
}
