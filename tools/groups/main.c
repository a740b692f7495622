/* main.c - groups: resolves foflink's sink array into groups numbered by size (GID, GRPS chunks, or a tipsy .grp file). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "coreutils.h"
#include "dist.h"
#include "distrun.h"
#include "groups.h"
#include "groupsrun.h"
#include "grpfile.h"
#include "levels.h"
#include "prog.h"
#include "rankquiet.h"
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
           "With -o FILE the .grp is written while the rest of the input (VEL, END) is still read,\n"
           "and FILE renamed into place only once all of it has been read and checked.\n"
           "A hierarchical linking (foflink -b B0,B1,...) has a SINK chunk per level: each level k\n"
           "gets its own GRPS and GID, and from level 1 on a GPAR chunk: row g is the group of\n"
           "level k-1 that holds group g of level k. The same minimum size applies to every level.\n"
           "Under mpirun -n R (or with %%r in STREAM) rank r reads STREAM with %%r replaced by r, its\n"
           "GMIN chunks from foflink under mpirun, and the ranks number the groups as one process\n"
           "would: --format=grp -o FILE writes one .grp, --format=stream -o NAME%%r a stream per rank\n"
           "with GIDL chunks (see fofgroups(1)).\n"
           "Also installed as fofgroups. Run as groups with only users' names, or with nothing at all\n"
           "(unless stdin is a file holding a stream), it runs coreutils' groups instead, which shares\n"
           "its name: in a pipeline give an option (groups -m 20) or call it fofgroups.\n"
           "\n"
           "  -m, --min-size=N      keep groups of at least N members (default %d)\n"
           "      --format=FORMAT   'stream' (default) or 'grp': first line the number of particles\n"
           "                        in the source, then one group id a line in its original order\n"
           "      --level=K         with --format=grp, the groups of level K (default 0)\n"
           "      --overlay         under mpirun, --format=stream: write only GRPS, GIDL and GPAR,\n"
           "                        after a BASE chunk naming the input, not its chunks again\n"
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

int main(int argc, char **argv)
{
    groups_coreutils_handoff(argc, argv); /* "groups USER": coreutils' */
    const char *base = strrchr(argv[0], '/');
    prog_init(strcmp(base ? base + 1 : argv[0], "fofgroups") ? "groups" : "fofgroups"); /* its messages say how it ran */
    prog_std std = {0};
    uint64_t minsize = DEFAULT_MINSIZE;
    int grp = 0, have_level = 0, overlay = 0;
    uint32_t level = 0;
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"min-size", required_argument, 0, 'm'},
                                             {"format", required_argument, 0, 'F'},
                                             {"level", required_argument, 0, 'L'},
                                             {"overlay", no_argument, 0, 'O'},
                                             {0, 0, 0, 0}};
    opterr = 0;
    prog_rank_quiet(1);
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
        } else if (opt == 'O') {
            overlay = 1;
        } else if (opt == 'L') {
            level = (uint32_t)prog_parse_int("--level", optarg, 0, FK_LEVELS_MAX - 1);
            have_level = 1;
        }
    }
    if (grp && std.zlevel) prog_usage("option -z applies to --format=stream only");
    if (have_level && !grp) prog_usage("option --level applies to --format=grp only");
    if (overlay && grp) prog_usage("option --overlay applies to --format=stream only");
    const char *path = prog_one_input(argc, argv, optind);
    prog_rank_quiet(0);
    if (fk_dist_wanted((const char *const[]){path, std.output}, 2))
        return groups_dist(path, &std, grp, level, minsize, overlay);
    if (overlay) prog_usage("option --overlay is for distributed runs (under mpirun, or %%r in a name)");
    const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
    double t0 = prog_now();

    fk_error err = {0};
    fk_output *out = prog_open_output(&std, !grp); /* one that cannot be made fails before the input is read */
    FILE *in = prog_open_input(path, 1, std.force);
    fk_reader *r;
    if (fk_reader_open(&r, in, name, &err)) prog_fail(&err);
    fk_reader_set_progress(r, prog_progress_reader, r);
    fk_chunk c;
    fk_snap snap;
    char *snaptext;
    if (fk_snap_read(r, &c, &snap, &snaptext, name, &err)) prog_fail(&err);

    fk_writer *w = NULL;
    if (!grp) {
        if (fk_writer_open(&w, fk_output_file(out), std.zlevel, &err) ||
            fk_writer_text(w, "SNAP", c.level, snaptext, &err))
            prog_fail(&err);
    }
    free(snaptext);

    /* Everything passes through but the GID, GRPS and GPAR this run
     * replaces; each level resolved, numbered and written (with
     * --format=grp only the level asked for) as soon as the IDs and the
     * levels the LINK names have come, while the rest still comes; the
     * .grp text once the whole input has been read. */
    fk_groups_in gin;
    if (fk_groups_read_until(r, w, &snap, name, &gin, &err)) prog_fail(&err);
    const int nlev = gin.nlevels;
    fk_groups info[FK_LEVELS_MAX];
    uint32_t *gid = NULL;
    if (grp) {
        if (fk_groups_grp_ids(&gin, &snap, (int)level, minsize, name, &gid, &info[level], &err)) prog_fail(&err);
    } else if (fk_groups_write_levels(w, &gin, &snap, minsize, name, info, &err)) {
        prog_fail(&err);
    }
    /* A .grp into a temporary file (-o FILE: committed below, once the whole
     * input has been read and checked, removed on failure) is written while
     * the rest of the input still comes; to stdout, or to a FIFO written in
     * place, only after it, so that a failed run writes nothing there. */
    const char *oname = std.output && strcmp(std.output, "-") ? std.output : "stdout";
    const int beside = grp && fk_output_atomic(out);
    fk_groups_grp_times gt = {0};
    if (beside) {
        if (fk_groups_grp_write(r, &snap, name, &gin, fk_output_file(out), gid, oname, &gt, &err)) prog_fail(&err);
    } else if (fk_groups_read_rest(r, w, &snap, name, &gin, &err)) {
        prog_fail(&err);
    }
    const double waited = fk_reader_waited(r); /* -v: the wait for the stage before is not the work */
    fk_reader_close(r);
    fk_input_close(in);
    if (grp && !beside && fk_grp_write(fk_output_file(out), gid, snap.nsource, oname, &err)) prog_fail(&err);
    free(gid);
    if (w) {
        if (fk_writer_finish(w, &err)) prog_fail(&err);
        fk_writer_free(w);
    }
    prog_commit(out);
    const char *repl = gin.replaced ? ", the input's GID and GRPS replaced" : "";
    for (int k = 0; k < nlev; k++) {
        if (grp && k != (int)level) continue;
        char lev[32] = "";
        if (nlev > 1) snprintf(lev, sizeof lev, "level %d: ", k);
        char end[256] = ""; /* the last line ends with the replacement note and the time */
        char wait[48] = "", beside_t[96] = "";
        if (waited > 0) snprintf(wait, sizeof wait, "; waited %.2f s for the input", waited);
        if (beside) /* after the IDs: the rest read (waiting for it) beside the .grp's writing */
            snprintf(beside_t, sizeof beside_t,
                     "; the .grp written in %.2f s beside the rest read in %.2f s (waited %.2f s)", gt.grp, gt.rest,
                     gt.rest_waited);
        if (grp || k == nlev - 1)
            snprintf(end, sizeof end, "%s (%.2f s%s%s)", repl, prog_now() - t0 - waited, wait, beside_t);
        prog_info("%s%" PRIu64 " groups found, %" PRIu64 " kept (at least %" PRIu64 " members), largest %" PRIu64
                  ", %.1f%% of %" PRIu64 " particles grouped%s",
                  lev, info[k].nfound, info[k].ngroups, info[k].minsize, info[k].largest,
                  snap.n ? 100.0 * (double)info[k].ngrouped / (double)snap.n : 0.0, snap.n, end);
    }
    fk_groups_in_free(&gin);
    return EXIT_OK;
}
