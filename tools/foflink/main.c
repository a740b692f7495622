/* foflink - links the particles of a tree-ordered stream into friends-of-friends groups and appends the SINK array. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "kdtree.h"
#include "kv.h"
#include "link.h"
#include "prog.h"
#include "snap.h"
#include "stream.h"

static void help(void)
{
    printf("Usage: foflink [OPTION]... [FILE]\n"
           "Link the particles of a tree-ordered fofkit stream (FILE or stdin; run kdbuild\n"
           "first) into friends-of-friends groups and append the sink array.\n"
           "\n"
           "  -b, --b=B              linking length as B times the mean interparticle\n"
           "                         spacing box/n^(1/3) (default 0.2)\n"
           "  -l, --link-length=L    absolute linking length (instead of -b)\n"
           "      --no-periodic      isolated boundaries even if the stream's box is periodic\n"
           "      --method=M         tree (default) or brute (all pairs, O(n^2): small inputs)\n"
           "      --device=D         auto (default: the GPU if there is one), cpu or gpu\n"
           "  -j, --threads=N        CPU threads (default: all)\n"
           "  -o, --output=FILE      write to FILE (default stdout)\n"
           "  -z, --compress[=N]     zlib-compress every chunk (level N, default 6)\n"
           "  -f, --force            read or write binary data on a terminal\n"
           "  -v, --verbose          progress and timings on stderr\n"
           "  -h, --help             this help\n"
           "  -V, --version          version\n"
           "\n"
           "Two particles are friends when their binary32 minimum-image separation squared,\n"
           "(dx*dx + dy*dy) + dz*dz, is strictly below l*l: see foflink(1) for the exact rule.\n"
           "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 3 out of memory.\n");
}

int main(int argc, char **argv)
{
    prog_init("foflink");
    prog_std std = {0};
    double b = 0.2, l = 0;
    int have_l = 0, have_b = 0, no_periodic = 0, brute = 0, devchoice = device_default();
    long long threads = 0;
    enum { OPT_NOPER = 256, OPT_METHOD, OPT_DEVICE };
    static const struct option longopts[] = {PROG_STD_LONG,
                                             {"b", required_argument, 0, 'b'},
                                             {"link-length", required_argument, 0, 'l'},
                                             {"no-periodic", no_argument, 0, OPT_NOPER},
                                             {"method", required_argument, 0, OPT_METHOD},
                                             {"threads", required_argument, 0, 'j'},
                                             {"device", required_argument, 0, OPT_DEVICE},
                                             {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":" PROG_STD_SHORT "b:l:j:", longopts, NULL)) != -1) {
        if (prog_std_option(c, optarg, &std, help, argv)) continue;
        switch (c) {
        case 'b':
            b = prog_parse_double("-b", optarg, -HUGE_VAL, HUGE_VAL);
            if (!(b > 0)) prog_usage("option -b: the linking length must be positive, not %s", optarg);
            have_b = 1;
            break;
        case 'l':
            l = prog_parse_double("-l", optarg, -HUGE_VAL, HUGE_VAL);
            if (!(l > 0)) prog_usage("option -l: the linking length must be positive, not %s", optarg);
            have_l = 1;
            break;
        case OPT_NOPER: no_periodic = 1; break;
        case OPT_METHOD:
            if (!strcmp(optarg, "tree"))
                brute = 0;
            else if (!strcmp(optarg, "brute"))
                brute = 1;
            else
                prog_usage("option --method takes tree or brute, not '%s'", optarg);
            break;
        case 'j': threads = prog_parse_int("--threads", optarg, 1, 4096); break;
        case OPT_DEVICE: devchoice = device_parse(optarg); break;
        }
    }
    if (have_l && have_b) prog_usage("options -l and -b are exclusive");
    const char *in = prog_one_input(argc, argv, optind);
    const char *name = strcmp(in, "-") ? in : "stdin";

    fk_error err = {0};
    FILE *fin = prog_open_input(in, 1, std.force);
    fk_output *out = prog_open_output(&std, 1);
    fk_reader *r;
    fk_writer *w;
    if (fk_reader_open(&r, fin, name, &err) || fk_writer_open(&w, fk_output_file(out), std.zlevel, &err))
        prog_fail(&err);

    fk_chunk ch;
    fk_snap snap;
    char *snaptext;
    if (fk_snap_read(r, &ch, &snap, &snaptext, name, &err) || fk_writer_put(w, &ch, snaptext, &err)) prog_fail(&err);
    free(snaptext);

    float *pos = NULL;
    fk_tree tree;
    memset(&tree, 0, sizeof tree);
    int have_tree = 0, st;
    while ((st = fk_reader_next(r, &ch, &err)) == 1) {
        if (!strcmp(ch.tag, "SINK") || !strcmp(ch.tag, "LINK"))
            prog_die(EXIT_DATA, "%s: stream is linked already (it has a %s chunk)", name, ch.tag);
        if (!strcmp(ch.tag, "POS")) {
            if (pos) prog_die(EXIT_DATA, "%s: stream has two POS chunks", name);
            if (fk_snap_check_chunk(&snap, &ch, "<f4", 3, name, &err) || fk_reader_load(r, (void **)&pos, &err) ||
                fk_writer_put(w, &ch, pos, &err))
                prog_fail(&err);
        } else if (!strcmp(ch.tag, "TREE")) {
            char *text;
            if (have_tree) prog_die(EXIT_DATA, "%s: stream has two TREE chunks", name);
            if (fk_reader_load_text(r, &text, &err) || fk_tree_parse(text, &tree, name, &err) ||
                fk_writer_put(w, &ch, text, &err))
                prog_fail(&err);
            free(text);
            have_tree = 1;
        } else if (!strcmp(ch.tag, "TBOX")) {
            if (!have_tree || tree.box) prog_die(EXIT_DATA, "%s: TBOX chunk without a TREE chunk before it", name);
            if (strcmp(ch.dtype, "<f4") || ch.ncols != 6 || ch.nrows != tree.nnodes)
                prog_die(EXIT_DATA, "%s: TBOX chunk does not hold %" PRIu64 " boxes of 6 <f4", name, tree.nnodes);
            if (fk_reader_load(r, (void **)&tree.box, &err) || fk_writer_put(w, &ch, tree.box, &err))
                prog_fail(&err);
        } else if (fk_writer_copy(w, r, &ch, &err)) {
            prog_fail(&err);
        }
    }
    if (st < 0) prog_fail(&err);
    if (!pos) prog_die(EXIT_DATA, "%s: stream has no POS chunk", name);
    if (!have_tree) prog_die(EXIT_DATA, "%s: stream has no kd-tree (run kdbuild first)", name);
    if (!tree.box) prog_die(EXIT_DATA, "%s: stream has a TREE chunk but no TBOX chunk", name);
    if (tree.n != snap.n)
        prog_die(EXIT_DATA, "%s: the tree holds %" PRIu64 " particles, the stream %" PRIu64, name, tree.n, snap.n);
    if (fk_snap_check_positions(&snap, pos, name, &err) || fk_tree_check(&tree, pos, name, &err)) prog_fail(&err);

    fk_linkopts o = {0};
    o.periodic = snap.periodic && !no_periodic;
    o.box = snap.box;
    o.l = have_l ? l : b * snap.box / cbrt((double)(snap.n ? snap.n : 1));
    o.nthreads = (int)threads;
    if (fk_link_check(&o, &err)) prog_die(EXIT_USAGE, "%s", err.msg);
    prog_info("linking %" PRIu64 " particles with l = %.9g (%s box %g)", snap.n, o.l,
              o.periodic ? "periodic" : "isolated", snap.box);

    fk_gpuinfo gi;
    int dev = device_resolve(devchoice, &gi);
    if (dev == DEV_GPU && !brute && tree.leafsize > 32) {
        if (devchoice == DEV_GPU)
            prog_die(EXIT_DATA, "%s: the GPU linker needs leaves of at most 32 particles, this tree has %u "
                     "(rebuild it with kdbuild -s 32 or less)", name, tree.leafsize);
        prog_info("device: CPU after all (the tree's leaves hold up to %u particles, the GPU linker takes 32)",
                  tree.leafsize);
        dev = DEV_CPU;
    }

    uint32_t *sink = malloc(snap.n ? snap.n * sizeof *sink : 1);
    if (!sink) prog_die(EXIT_RESOURCE, "out of memory for the sink array of %" PRIu64 " particles", snap.n);
    fk_linkstats ls;
    fk_gputimes gt;
    double t0 = prog_now();
    if (dev == DEV_GPU) {
        prog_info("GPU memory needed: %.3f GiB",
                  (double)(brute ? snap.n * 16 : fk_gpu_link_bytes(snap.n, tree.nnodes, 0)) / (1 << 30));
        st = brute ? fk_gpu_link_brute(snap.n, pos, NULL, &o, sink, &ls, &gt, &err)
                   : fk_gpu_link(&tree, pos, NULL, &o, sink, &ls, &gt, &err);
    } else {
        st = brute ? fk_link_brute_cpu(snap.n, pos, NULL, &o, sink, &ls, &err)
                   : fk_link_cpu(&tree, pos, NULL, &o, sink, &ls, &err);
    }
    if (st) prog_fail(&err);
    double dt = prog_now() - t0;
    if (dev == DEV_GPU)
        prog_info("GPU times: upload %.4f s, link %.4f s (%.3g particles/s; cliques %.4f, count %.4f, "
                  "pairs %.4f, flatten %.4f; %" PRIu64 " leaf pairs), download %.4f s",
                  gt.upload, gt.link, snap.n / (gt.link + 1e-12), gt.link_phase[0], gt.link_phase[1],
                  gt.link_phase[2], gt.link_phase[3], gt.leaf_pairs, gt.download);
    prog_info("linked on the %s (%s) in %.3f s (%.3g particles/s): %" PRIu64 " groups, %" PRIu64
              " pair tests, %" PRIu64 " box tests",
              dev == DEV_GPU ? "GPU" : "CPU", brute ? "brute" : "tree", dt, snap.n / (dt + 1e-12), ls.groups,
              ls.pair_tests, ls.node_tests);

    fk_kvbuf kv;
    fk_kv_init(&kv);
    fk_kv_dbl(&kv, "l", (double)(float)o.l);
    if (!have_l) fk_kv_dbl(&kv, "b", b);
    fk_kv_dbl(&kv, "psi", 0);
    fk_kv_u64(&kv, "periodic", (uint64_t)o.periodic);
    fk_kv_dbl(&kv, "box", o.box);
    fk_kv_str(&kv, "method", brute ? "brute" : "tree");
    fk_kv_str(&kv, "device", dev == DEV_GPU ? "gpu" : "cpu");
    fk_kv_u64(&kv, "levels", 1);
    fk_kv_u64(&kv, "groups", ls.groups);
    char *linktext;
    if (fk_kv_finish(&kv, &linktext, &err) || fk_writer_text(w, "LINK", 0, linktext, &err)) prog_fail(&err);
    free(linktext);
    fk_chunk_init(&ch, "SINK", "<u4", FK_CF_PARTICLE, snap.n, 1);
    if (fk_writer_put(w, &ch, sink, &err) || fk_writer_finish(w, &err)) prog_fail(&err);
    prog_commit(out);
    fk_writer_free(w);
    fk_reader_close(r);
    fk_input_close(fin);
    fk_tree_free(&tree);
    free(pos);
    free(sink);
    return EXIT_OK;
}
