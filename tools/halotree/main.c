/* main.c - halotree: merger trees of a series of halostats HDF5 catalogues, linked by their members' particle IDs, as Consistent-Trees ASCII. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "dist.h"
#include "dist_tree.h"
#include "prog.h"
#include "rankquiet.h"
#include "tree_build.h"
#include "tree_cat.h"
#include "tree_ctrees.h"
#include "tree_match.h"
#include "tree_rank.h"
#include "version.h"

static void help(void)
{
    printf("Usage: halotree [OPTION]... EARLIER LATER...\n"
           "Merger trees of a series of halo catalogues in time order, earliest first (halostats\n"
           "--format=hdf5 files, or Gadget-4's fof_subhalo_tab): the halos of each snapshot linked to\n"
           "those of the next by their members' particle IDs. A halo's descendant is the halo of the\n"
           "next snapshot with the highest score, the sum over the shared members of 1/rank (SubLink);\n"
           "its main progenitor the progenitor with the most massive history. Writes the trees as\n"
           "Consistent-Trees ASCII (ytree, SAGE), or with --links every progenitor link.\n"
           "\n"
           "      --subhalos        link the subhalos (bound parts) instead of the FoF groups\n"
           "      --skip=N          a halo with no descendant in the next snapshot is looked for in the\n"
           "                        N after it (default 1, as SubLink; 0: never)\n"
           "      --weight=W        each shared member counts 1/rank, rank its place in the earlier\n"
           "                        halo's list of members ('rank'), or 1 ('count'); default 'auto':\n"
           "                        rank for catalogues whose members come most bound first (SUBFIND's;\n"
           "                        halostats' with IDs/MemberOrder binding_energy or radius) and with\n"
           "                        --positions, else count (members by snapshot index)\n"
           "      --positions=PATTERN  rank each halo's members by distance from its centre (nearest:\n"
           "                        rank 1), with the positions of each catalogue's HDF5 snapshot,\n"
           "                        PATTERN with %%n its number as in the catalogue's name\n"
           "                        (snapshot_%%n.hdf5); then 'auto' weighs by rank\n"
           "      --locations       with -o FILE, also locations.dat and forests.list beside it (the\n"
           "                        index files by which SAGE reads Consistent-Trees)\n"
           "      --links           write every pair of halos that share members (counts, scores,\n"
           "                        descendant and main progenitor flags) instead of the trees\n"
           "      --device=D        match on auto (default: the GPU if there is one), cpu or gpu; the\n"
           "                        same links on each (default $FOFKIT_DEVICE, else auto)\n"
           "  -o, --output=FILE     write FILE (atomically) instead of stdout (name it tree_*.dat for ytree)\n"
           "  -v, --verbose         what was linked, and timings, on stderr\n"
           "  -h, --help            show this help and exit\n"
           "  -V, --version         show the version and exit\n"
           "\n"
           "Under mpirun each rank reads a share of each catalogue's members and the links are made\n"
           "across the ranks (the same as in one process); rank 0 writes the output.\n"
           "\n"
           "Snapshot numbers are the last number in each file's name (else their places, from 0); a\n"
           "number left out between two files is an error.\n"
           "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 out of memory.\n"
           "Example: halotree cat_000.hdf5 cat_001.hdf5 cat_002.hdf5 -o tree_0_0_0.dat\n");
}

enum { OPT_SUBHALOS = 256, OPT_SKIP, OPT_WEIGHT, OPT_LINKS, OPT_POSITIONS, OPT_LOCATIONS, OPT_DEVICE };

/* The last run of digits in the base name of path before its extension
 * (cat_012.hdf5: 12; fof_subhalo_tab_012.0.hdf5, file 0 of several: 12), or
 * -1; the digits as written into digits (cap bytes: "012"), "" when none. */
static long name_number(const char *path, char *digits, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.'), *end = dot && dot > base ? dot : base + strlen(base);
    /* a file of several, NAME_012.0.hdf5: the number before the file's */
    const char *prev = end;
    while (prev > base && isdigit((unsigned char)prev[-1])) prev--;
    if (prev < end && prev - 1 > base && prev[-1] == '.' && isdigit((unsigned char)prev[-2])) end = prev - 1;
    long v = -1;
    digits[0] = 0;
    for (const char *p = base; p < end;) {
        if (isdigit((unsigned char)*p)) {
            char *stop;
            v = strtol(p, &stop, 10);
            snprintf(digits, cap, "%.*s", (int)(stop - p), p);
            p = stop;
        } else {
            p++;
        }
    }
    return v;
}

/* PATTERN with every "%n" replaced by digits (and "%%" by "%"), malloc'd. */
static char *expand(const char *pattern, const char *digits)
{
    size_t n = strlen(pattern), d = strlen(digits), k = 0;
    char *out = malloc(n * (d + 1) + 1);
    if (!out) prog_die(EXIT_RESOURCE, "out of memory");
    for (const char *p = pattern; *p; p++) {
        if (p[0] == '%' && p[1] == 'n') {
            memcpy(out + k, digits, d), k += d, p++;
        } else if (p[0] == '%' && p[1] == '%') {
            out[k++] = '%', p++;
        } else {
            out[k++] = *p;
        }
    }
    out[k] = 0;
    return out;
}

/* The members in the halos of c (subhalos hold only a part of IDs/ID). */
static uint64_t members(const fk_treecat *c)
{
    uint64_t m = 0;
    for (uint64_t h = 0; h < c->nhalo; h++) m += c->len[h];
    return m;
}

/* Under mpirun (rank and size of the run), else 0 and 1. */
static int dist, rank, size = 1;

static void end_mpi(void)
{
    fk_dist_finalize();
}

/* A failure: in one process the library's message; under mpirun agreed on
 * by every rank first, said by the lowest failing rank (the others keep
 * quiet), every rank exiting with its status once all are told. */
static void fail_status(int st, fk_error *err)
{
    if (!dist) {
        if (st) prog_fail(err);
        return;
    }
    int who;
    if (!fk_dist_agree(st, err, &who)) return;
    if (rank == who) {
        prog_rank_quiet(0);
        fprintf(stderr, "%s: %s\n", prog_name, err->msg[0] ? err->msg : fk_strstatus(err->code));
        fflush(stderr);
    }
    fk_output_cleanup_all();
    fk_dist_all(1);
    exit(err->code == FK_EINVAL ? EXIT_USAGE : err->code == FK_ENOMEM || err->code == FK_EDEVICE ? EXIT_RESOURCE : EXIT_DATA);
}

/* locations.dat and forests.list beside the trees' file treefile (already
 * committed), each written atomically. */
static void write_locations(const fk_mtree *t, const char *treefile, const int64_t *offsets)
{
    const char *slash = strrchr(treefile, '/');
    const int dir = slash ? (int)(slash - treefile + 1) : 0;
    char loc_name[4096], forests_name[4096];
    if (snprintf(loc_name, sizeof loc_name, "%.*slocations.dat", dir, treefile) >= (int)sizeof loc_name ||
        snprintf(forests_name, sizeof forests_name, "%.*sforests.list", dir, treefile) >= (int)sizeof forests_name)
        prog_die(EXIT_DATA, "%s: the name is too long", treefile);
    fk_error err = {0};
    fk_output *loc = NULL, *forests = NULL;
    if (fk_output_open(&loc, loc_name, 0, 1, &err) || fk_output_open(&forests, forests_name, 0, 1, &err)) prog_fail(&err);
    if (fk_mtree_write_locations(t, fk_output_file(loc), fk_output_file(forests), treefile + dir, offsets, &err) ||
        fk_output_commit(loc, &err) || fk_output_commit(forests, &err))
        prog_fail(&err);
}

int main(int argc, char **argv)
{
    prog_init("halotree");
    /* under mpirun the ranks above 0 keep quiet: every rank reads the same command line and headers */
    if ((dist = fk_dist_wanted(NULL, 0))) prog_rank_quiet(1);
    prog_std std = {0};
    int kind = FK_TREE_GROUPS, links = 0, weight = -1, locations = 0, devchoice = device_default();
    const char *positions = NULL;
    long long skip = 1;
    static const struct option longopts[] = {{"help", no_argument, 0, 'h'},
                                             {"output", required_argument, 0, 'o'},
                                             {"verbose", no_argument, 0, 'v'},
                                             {"version", no_argument, 0, 'V'},
                                             {"subhalos", no_argument, 0, OPT_SUBHALOS},
                                             {"skip", required_argument, 0, OPT_SKIP},
                                             {"weight", required_argument, 0, OPT_WEIGHT},
                                             {"links", no_argument, 0, OPT_LINKS},
                                             {"positions", required_argument, 0, OPT_POSITIONS},
                                             {"locations", no_argument, 0, OPT_LOCATIONS},
                                             {"device", required_argument, 0, OPT_DEVICE},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:vV", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_SUBHALOS: kind = FK_TREE_SUBHALOS; break;
        case OPT_SKIP: skip = prog_parse_int("--skip", optarg, 0, 1000); break;
        case OPT_LINKS: links = 1; break;
        case OPT_LOCATIONS: locations = 1; break;
        case OPT_DEVICE: devchoice = device_parse(optarg); break;
        case OPT_POSITIONS:
            if (!strstr(optarg, "%n")) prog_usage("--positions=%s: the pattern needs %%n, the snapshot's number", optarg);
            positions = optarg;
            break;
        case OPT_WEIGHT:
            if (!strcmp(optarg, "rank"))
                weight = FK_TREE_WEIGHT_RANK;
            else if (!strcmp(optarg, "count"))
                weight = FK_TREE_WEIGHT_COUNT;
            else if (!strcmp(optarg, "auto"))
                weight = -1;
            else
                prog_usage("--weight=%s: 'rank', 'count' or 'auto'", optarg);
            break;
        default: prog_std_option(c, optarg, &std, help, argv);
        }
    }
    const int n = argc - optind;
    if (n < 2) prog_usage("two catalogues or more are needed, earliest first");
    if (locations && (links || !std.output || !strcmp(std.output, "-")))
        prog_usage("--locations: the index files go beside the trees' file: give -o FILE, without --links");
    char **names = argv + optind;
    fk_error err = {0};
    if (!fk_treecat_available()) {
        prog_input(names[0]);
        prog_die(EXIT_DATA, "this build has no HDF5 to read catalogues with (install libhdf5-dev, then make config and "
                 "rebuild)");
    }

    /* snapshot numbers: from the names when every one has a number */
    int *num = malloc((size_t)n * sizeof *num);
    char(*digits)[32] = malloc((size_t)n * sizeof *digits);
    if (!num || !digits) prog_die(EXIT_RESOURCE, "out of memory");
    int named = 1;
    for (int s = 0; s < n; s++)
        if ((num[s] = (int)name_number(names[s], digits[s], sizeof digits[s])) < 0) named = 0;
    if (positions && !named) {
        for (int s = 0; s < n; s++)
            if (!digits[s][0]) prog_usage("--positions: %s has no snapshot number in its name for %%n", names[s]);
    }
    for (int s = 0; s < n; s++) {
        if (!named) {
            num[s] = s;
            continue;
        }
        if (s > 0 && num[s] <= num[s - 1])
            prog_die(EXIT_DATA, "%s: snapshot %d after snapshot %d of %s (give the catalogues in time order, "
                     "earliest first)", names[s], num[s], num[s - 1], names[s - 1]);
        if (s > 0 && num[s] > num[s - 1] + 1)
            prog_die(EXIT_DATA, "%s: snapshot %d is missing between %s and %s (every snapshot's catalogue is needed; "
                     "--skip links halos across gaps in a catalogue)", names[s], num[s - 1] + 1, names[s - 1], names[s]);
    }

    if (dist) {
        if (fk_dist_init(&rank, &size, &err)) prog_fail(&err); /* no MPI in this build: said once */
        atexit(end_mpi);
        if (rank) prog_verbose = 0; /* rank 0 reports for all */
        prog_info("%d ranks: each reads a share of every catalogue's members; the links made across them", size);
    }
    /* the output first (rank 0's): a name that cannot be created fails before any work */
    fk_output *out = NULL;
    fail_status(rank == 0 ? fk_output_open(&out, std.output, 0, std.force, &err) : FK_OK, &err);
    double t0 = prog_now(), tread = 0, tmatch = 0;
    fk_mtree t;
    fail_status(fk_mtree_init(&t, n, &err), &err);
    fk_gpuinfo gi;
    t.gpu = device_resolve(devchoice, &gi) == DEV_GPU;
    if (dist) t.match = fk_dist_mtree_match; /* on every rank's CPU */
    for (int s = 0; s < n; s++) {
        fk_treecat cat;
        prog_input(names[s]);
        double r0 = prog_now();
        /* under mpirun a share of the members a rank; with --positions each halo's whole list is ranked first */
        int st = dist && !positions ? fk_treecat_read_part(&cat, names[s], kind, rank, size, &err)
                                    : fk_treecat_read(&cat, names[s], kind, &err);
        tread += prog_now() - r0;
        fail_status(st, &err);
        if (positions) {
            char *snap = expand(positions, digits[s]);
            double k0 = prog_now();
            if ((st = fk_treecat_rank_distance(&cat, names[s], snap, &err))) prog_input(snap);
            fail_status(st, &err);
            prog_info("%s: members ranked by distance from their centres with the positions of %s (%.3f s)", names[s],
                      snap, prog_now() - k0);
            free(snap);
            if (dist) fk_treecat_keep_part(&cat, rank, size);
        }
        /* auto: decided by the first catalogue with halos (the links before it have no members) */
        if (weight < 0 && cat.nhalo > 0)
            weight = cat.subfind || cat.ranked || cat.ordered ? FK_TREE_WEIGHT_RANK : FK_TREE_WEIGHT_COUNT;
        const uint64_t nh = cat.nhalo, nids = members(&cat);
        st = fk_mtree_add(&t, s, num[s], &cat, names[s], s ? names[s - 1] : "", &err);
        fk_treecat_free(&cat);
        fail_status(st, &err);
        prog_info("%s: snapshot %d, a = %g, %" PRIu64 " %s, %" PRIu64 " members", names[s], num[s], t.cat[s].time, nh,
                  kind == FK_TREE_SUBHALOS ? "subhalos" : "groups", nids);
        /* link the snapshots before it that may still have halos to link here */
        for (int g = 1; g <= skip + 1 && s - g >= 0; g++) {
            uint64_t shared;
            double m0 = prog_now();
            fail_status(fk_mtree_link(&t, s - g, g, weight < 0 ? FK_TREE_WEIGHT_COUNT : weight, names[s - g], names[s],
                                      &shared, &err),
                        &err);
            tmatch += prog_now() - m0;
            const fk_treecat *a = &t.cat[s - g], *b = &t.cat[s];
            if (g == 1 && shared == 0 && members(a) > 0 && members(b) > 0) {
                prog_input(names[s]);
                prog_die(EXIT_DATA, "%s: shares no particle IDs with %s (a catalogue of another run?)", names[s],
                         names[s - 1]);
            }
            prog_info("linked %s to %s: %" PRIu64 " shared members", names[s - g], names[s], shared);
        }
        if (s - skip - 1 >= 0) fk_mtree_drop_ids(&t, s - (int)skip - 1);
    }
    /* the trees and their output: rank 0's (every rank holds the same links) */
    int64_t *offsets = NULL;
    int st = FK_OK;
    if (rank == 0) {
        st = fk_mtree_finish(&t, &err);
        char gen[64];
        snprintf(gen, sizeof gen, "halotree (fofkit %s)", FK_VERSION);
        if (!st && locations && !(offsets = malloc((t.ntrees + 1) * sizeof *offsets)))
            st = fk_fail(&err, FK_ENOMEM, "out of memory");
        if (!st)
            st = links ? fk_mtree_write_links(&t, fk_output_file(out), gen, &err)
                       : fk_mtree_write_ctrees(&t, fk_output_file(out), gen,
                                               kind == FK_TREE_SUBHALOS ? "subhalos" : "FoF groups", offsets, &err);
        if (!st) st = fk_output_commit(out, &err);
    }
    fail_status(st, &err);
    if (rank == 0 && locations) write_locations(&t, std.output, offsets);
    free(offsets);
    prog_info("%d snapshots, %" PRIu64 " halos, %" PRIu64 " trees; weight %s; read %.3f s, matched %.3f s, total %.3f s",
              n, t.base[n], t.ntrees, weight == FK_TREE_WEIGHT_RANK ? "1/rank" : "count", tread, tmatch,
              prog_now() - t0);
    fk_mtree_free(&t);
    free(num), free(digits);
    return EXIT_OK;
}
